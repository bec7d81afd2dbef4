//! `lscpu -p` and `lscpu -e` output → [`Topology`].
//!
//! ```text
//! # CPU,Core,Socket,Node,,L1d,L1i,L2,L3        (lscpu -p: comment header, CSV rows)
//! 0,0,0,0,,0,0,0,0
//!
//! CPU NODE SOCKET CORE L1d:L1i:L2:L3 ONLINE    (lscpu -e: table with a header row)
//!   0    0      0    0 0:0:0:0          yes
//! ```
//! Columns are found by name (case-insensitive), so `lscpu -p=cpu,core,socket,node,cluster`
//! works too. The LLC is the last data or unified cache column (L3, else L2...); without
//! cache columns the socket is the LLC. Without a node column (or with empty nodes, as on
//! machines without NUMA) all CPUs are on node 0. lscpu shows no distances: nodes are
//! 10 local / 20 remote. Offline CPUs (`ONLINE` = `no`) are skipped; since schedlab keeps
//! the kernel's CPU numbering, an offline CPU in the middle is then reported as a gap.
//! Ids of cores, clusters and caches are taken per socket, so both globally and
//! per-socket numbered output work.

use std::collections::BTreeMap;

use crate::cpuset::CpuId;
use crate::model::{CpuPlacement, DEFAULT_CAPACITY, Topology};
use crate::spec::{TopoSpecError, clip};

/// Column positions found in a header.
#[derive(Default, Debug)]
struct Columns {
    cpu: Option<usize>,
    core: Option<usize>,
    socket: Option<usize>,
    node: Option<usize>,
    cluster: Option<usize>,
    online: Option<usize>,
    /// (column, position within a `:`-joined cache field or 0) of the LLC.
    llc: Option<(usize, usize)>,
}

/// Cache name → (level, is instruction cache).
fn cache_level(name: &str) -> Option<(u32, bool)> {
    let n = name.to_ascii_lowercase();
    let rest = n.strip_prefix('l')?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let level = digits.parse().ok()?;
    let suffix = &rest[digits.len()..];
    match suffix {
        "" | "d" => Some((level, false)),
        "i" => Some((level, true)),
        _ => None,
    }
}

fn columns(names: &[&str]) -> Columns {
    let mut c = Columns::default();
    let mut best_level = 0;
    for (i, name) in names.iter().enumerate() {
        match name.trim().to_ascii_lowercase().as_str() {
            "cpu" => c.cpu = Some(i),
            "core" => c.core = Some(i),
            "socket" => c.socket = Some(i),
            "node" => c.node = Some(i),
            "cluster" => c.cluster = Some(i),
            "online" => c.online = Some(i),
            other => {
                for (k, part) in other.split(':').enumerate() {
                    if let Some((level, false)) = cache_level(part)
                        && level >= best_level
                    {
                        best_level = level;
                        c.llc = Some((i, k));
                    }
                }
            }
        }
    }
    c
}

struct Row<'a> {
    line: usize,
    fields: Vec<&'a str>,
}

fn build(
    rows: Vec<Row<'_>>,
    cols: &Columns,
    file: &str,
    name: &str,
    kind: &str,
) -> Result<Topology, TopoSpecError> {
    let (Some(cpu_col), Some(core_col)) = (cols.cpu, cols.core) else {
        return Err(TopoSpecError::parse(
            file,
            rows.first().map_or(1, |r| r.line),
            format!("{kind} output with CPU and Core columns"),
            "a header without them",
        ));
    };
    let num = |row: &Row<'_>, col: usize, what: &str| -> Result<Option<usize>, TopoSpecError> {
        let raw = row.fields[col].trim();
        if raw.is_empty() || raw == "-" {
            return Ok(None);
        }
        let raw = if col == cols.llc.map_or(usize::MAX, |l| l.0) {
            match raw.split(':').nth(cols.llc.map_or(0, |l| l.1)) {
                Some(v) => v,
                None => {
                    return Err(TopoSpecError::parse(
                        file,
                        row.line,
                        format!("a {what} id"),
                        format!("'{raw}'"),
                    ));
                }
            }
        } else {
            raw
        };
        if raw.is_empty() || raw == "-" {
            return Ok(None);
        }
        raw.parse::<usize>().map(Some).map_err(|_| {
            TopoSpecError::parse(
                file,
                row.line,
                format!("a {what} id (a number)"),
                format!("'{raw}'"),
            )
        })
    };
    let mut placements = Vec::new();
    let mut seen: BTreeMap<usize, usize> = BTreeMap::new();
    let mut any_node = false;
    let mut any_cluster = false;
    for row in &rows {
        // lscpu -e prints yes/no, lscpu -p Y/N; anything else is not an online state.
        if let Some(c) = cols.online {
            let v = row.fields[c].trim();
            match v.to_ascii_lowercase().as_str() {
                "yes" | "y" => {}
                "no" | "n" => continue,
                _ => {
                    return Err(TopoSpecError::parse(
                        file,
                        row.line,
                        "an ONLINE value yes or no (Y or N with -p)",
                        format!("'{}'", clip(v)),
                    ));
                }
            }
        }
        let required = |v: Option<usize>, what: &str| {
            v.ok_or_else(|| {
                TopoSpecError::parse(file, row.line, format!("a {what} id"), "an empty field")
            })
        };
        let cpu = required(num(row, cpu_col, "CPU")?, "CPU")?;
        if cpu >= crate::cpulist::MAX_CPUS {
            return Err(TopoSpecError::parse(
                file,
                row.line,
                format!("CPU ids below {}", crate::cpulist::MAX_CPUS),
                format!("CPU {cpu}"),
            ));
        }
        if let Some(prev) = seen.insert(cpu, row.line) {
            return Err(TopoSpecError::parse(
                file,
                row.line,
                "each CPU listed once",
                format!("CPU {cpu} again (first on line {prev})"),
            ));
        }
        let socket = match cols.socket {
            Some(c) => required(num(row, c, "socket")?, "socket")?,
            None => 0,
        };
        let core = required(num(row, core_col, "core")?, "core")?;
        let node = match cols.node {
            Some(c) => num(row, c, "node")?,
            None => None,
        };
        any_node |= node.is_some();
        let cluster = match cols.cluster {
            Some(c) => num(row, c, "cluster")?,
            None => None,
        };
        any_cluster |= cluster.is_some();
        let llc = match cols.llc {
            Some((c, _)) => num(row, c, "cache")?,
            None => None,
        };
        // Raw ids made unique per socket: lscpu numbers some columns per socket.
        let key = |v: usize| socket.saturating_mul(1 << 20).saturating_add(v);
        placements.push((
            row.line,
            node,
            CpuPlacement {
                cpu: CpuId::new(cpu),
                core: key(core),
                cluster: cluster.map(key),
                llc: llc.map_or(key(1 << 19), key),
                package: socket,
                node: 0,
                capacity: DEFAULT_CAPACITY,
            },
        ));
    }
    if placements.is_empty() {
        return Err(TopoSpecError::parse(
            file,
            rows.last().map_or(1, |r| r.line + 1),
            "at least one online CPU row",
            "none",
        ));
    }
    let mut out = Vec::with_capacity(placements.len());
    for (line, node, mut p) in placements {
        if any_node {
            p.node = node.ok_or_else(|| {
                TopoSpecError::parse(
                    file,
                    line,
                    "a node id (other CPUs have one)",
                    "an empty field",
                )
            })?;
        }
        if any_cluster && p.cluster.is_none() {
            return Err(TopoSpecError::parse(
                file,
                line,
                "a cluster id (other CPUs have one)",
                "an empty field",
            ));
        }
        out.push(p);
    }
    let mut node_ids: Vec<usize> = out.iter().map(|p| p.node).collect();
    node_ids.sort_unstable();
    node_ids.dedup();
    let n = node_ids.len();
    let dist = (0..n)
        .map(|i| (0..n).map(|j| if i == j { 10 } else { 20 }).collect())
        .collect();
    let source = format!("{kind} output in {file} (distances assumed 10/20)");
    let t = Topology::from_cpus(name, source, out, dist)
        .map_err(|e| TopoSpecError::invalid(file, e))?;
    Ok(crate::sysfs::drop_degenerate_clusters(t))
}

/// Parses `lscpu -p` output (comment lines, the last of which names the columns).
pub fn parse_lscpu_p(text: &str, file: &str, name: &str) -> Result<Topology, TopoSpecError> {
    let mut header: Option<Vec<&str>> = None;
    let mut rows = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let l = l.trim();
        if l.is_empty() {
            continue;
        }
        if let Some(c) = l.strip_prefix('#') {
            if c.contains(',') && c.to_ascii_lowercase().contains("cpu") {
                // A header after data rows means two outputs were concatenated; the rows
                // already read follow the first header's columns, so refuse rather than
                // reading them with the second's.
                if !rows.is_empty() {
                    return Err(TopoSpecError::parse(
                        file,
                        i + 1,
                        "one lscpu -p output (a second '# CPU,...' header follows data rows; \
                         were two outputs concatenated?)",
                        format!("'{}'", clip(l)),
                    ));
                }
                header = Some(c.split(',').collect());
            }
            continue;
        }
        let Some(h) = &header else {
            return Err(TopoSpecError::parse(
                file,
                i + 1,
                "the '# CPU,Core,Socket,Node,,L1d,L1i,L2,L3' header before the data (lscpu -p)",
                format!("'{}'", clip(l)),
            ));
        };
        let fields: Vec<&str> = l.split(',').collect();
        if fields.len() != h.len() {
            return Err(TopoSpecError::parse(
                file,
                i + 1,
                format!("{} comma-separated fields as in the header", h.len()),
                format!("{} in '{}'", fields.len(), clip(l)),
            ));
        }
        rows.push(Row {
            line: i + 1,
            fields,
        });
    }
    let Some(h) = header else {
        return Err(TopoSpecError::parse(
            file,
            text.lines().count() + 1,
            "a '# CPU,Core,...' header (lscpu -p)",
            "end of file",
        ));
    };
    let cols = columns(&h);
    build(rows, &cols, file, name, "lscpu -p")
}

/// Parses `lscpu -e` output (a header row, then whitespace-separated rows).
pub fn parse_lscpu_e(text: &str, file: &str, name: &str) -> Result<Topology, TopoSpecError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((_, head)) = lines.next() else {
        return Err(TopoSpecError::parse(
            file,
            1,
            "a 'CPU NODE SOCKET CORE ...' header (lscpu -e)",
            "end of file",
        ));
    };
    let names: Vec<&str> = head.split_whitespace().collect();
    let cols = columns(&names);
    let mut rows = Vec::new();
    for (i, l) in lines {
        let fields: Vec<&str> = l.split_whitespace().collect();
        // Offline CPUs may print fewer fields (`-` placeholders are kept by lscpu, but
        // be lenient): only the CPU and ONLINE columns are then read.
        let offline = fields.iter().any(|f| f.eq_ignore_ascii_case("no"));
        if fields.len() != names.len() && !offline {
            return Err(TopoSpecError::parse(
                file,
                i + 1,
                format!("{} columns as in the header", names.len()),
                format!("{} in '{}'", fields.len(), clip(l)),
            ));
        }
        if offline {
            continue;
        }
        rows.push(Row {
            line: i + 1,
            fields,
        });
    }
    build(rows, &cols, file, name, "lscpu -e")
}

#[cfg(test)]
mod tests {
    use super::*;

    const VM_P: &str = "# The following is the parsable format, which can be fed to other
# programs. Each different item in every column has an unique ID
# starting usually from zero.
# CPU,Core,Socket,Node,,L1d,L1i,L2,L3
0,0,0,0,,0,0,0,0
1,1,0,0,,1,1,1,0
";
    const VM_E: &str = "CPU NODE SOCKET CORE L1d:L1i:L2:L3 ONLINE
  0    0      0    0 0:0:0:0          yes
  1    0      0    1 1:1:1:0          yes
";

    #[test]
    fn vm_two_cpus() {
        for t in [
            parse_lscpu_p(VM_P, "p", "p").unwrap(),
            parse_lscpu_e(VM_E, "e", "e").unwrap(),
        ] {
            assert_eq!(t.nr_cpus(), 2);
            assert_eq!(t.nr_cores(), 2);
            assert_eq!(t.nr_llcs(), 1);
            assert_eq!(t.nr_nodes(), 1);
            assert_eq!(t.nr_packages(), 1);
            assert!(!t.has_clusters());
        }
    }

    #[test]
    fn two_socket_smt_per_socket_ids() {
        // Core and L3 ids restart per socket: the parser must still keep them apart.
        let text = "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3
0,0,0,0,,0,0,0,0
1,1,0,0,,1,1,1,0
2,0,1,1,,0,0,0,0
3,1,1,1,,1,1,1,0
4,0,0,0,,0,0,0,0
5,1,0,0,,1,1,1,0
6,0,1,1,,0,0,0,0
7,1,1,1,,1,1,1,0
";
        let t = parse_lscpu_p(text, "f", "f").unwrap();
        assert_eq!(t.nr_cores(), 4);
        assert_eq!(t.nr_llcs(), 2);
        assert_eq!(t.nr_nodes(), 2);
        assert_eq!(t.smt_siblings(CpuId::new(2)).indices(), vec![2, 6]);
        assert_eq!(t.llc_span(CpuId::new(1)).to_list_string(), "0-1,4-5");
        assert_eq!(t.distances(), &[vec![10, 20], vec![20, 10]]);
    }

    #[test]
    fn empty_node_means_one_node_and_clusters_column() {
        let text = "# CPU,Core,Cluster,Socket,Node,,L1d,L1i,L2
0,0,0,0,,,0,0,0
1,1,0,0,,,1,1,0
2,2,1,0,,,2,2,0
3,3,1,0,,,3,3,0
";
        let t = parse_lscpu_p(text, "f", "f").unwrap();
        assert_eq!(t.nr_nodes(), 1);
        assert!(t.has_clusters());
        assert_eq!(t.nr_clusters(), 2);
        assert_eq!(t.nr_llcs(), 1);
        assert_eq!(t.cluster_span(CpuId::new(3)).to_list_string(), "2-3");
    }

    #[test]
    fn lscpu_e_offline_and_bad_rows() {
        let text = "CPU NODE SOCKET CORE L1d:L1i:L2:L3 ONLINE MAXMHZ
  0    0      0    0 0:0:0:0          yes 3000.0
  1    0      0    1 1:1:1:0          yes 3000.0
  2    -      -    - -                no  -
";
        let t = parse_lscpu_e(text, "f", "f").unwrap();
        assert_eq!(t.nr_cpus(), 2);
        let e = parse_lscpu_e("CPU NODE SOCKET CORE\n0 0 0\n", "g.txt", "g")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("g.txt:2: expected 4 columns as in the header, found 3"),
            "{e}"
        );
        let e = parse_lscpu_e("CPU NODE SOCKET CORE\n0 0 0 x\n", "g.txt", "g")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("g.txt:2: expected a core id (a number), found 'x'"),
            "{e}"
        );
    }

    #[test]
    fn online_is_yes_or_no_and_nothing_else() {
        // A typo must not pass for a CPU state: "maybe" used to count as online.
        let text = "CPU NODE SOCKET CORE ONLINE\n0 0 0 0 yes\n1 0 0 1 maybe\n";
        let e = parse_lscpu_e(text, "e.txt", "e").unwrap_err().to_string();
        assert!(
            e.starts_with("e.txt:3: expected an ONLINE value yes or no") && e.contains("'maybe'"),
            "{e}"
        );
        // lscpu -p prints Y/N.
        let p = "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3,Online\n0,0,0,0,,0,0,0,0,Y\n1,1,0,0,,1,1,1,0,N\n";
        assert_eq!(parse_lscpu_p(p, "p", "p").unwrap().nr_cpus(), 1);
        let p = "# CPU,Core,Socket,Node,Online\n0,0,0,0,Y\n1,1,0,0,1\n";
        let e = parse_lscpu_p(p, "p.txt", "p").unwrap_err().to_string();
        assert!(e.starts_with("p.txt:3: expected an ONLINE value"), "{e}");
    }

    #[test]
    fn lscpu_p_errors() {
        let e = parse_lscpu_p("0,0,0,0\n", "h", "h")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("h:1: expected the '# CPU,Core,Socket"), "{e}");
        let e = parse_lscpu_p("# CPU,Core,Socket,Node\n0,0,0,0\n0,1,0,0\n", "h", "h")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "h:3: expected each CPU listed once, found CPU 0 again (first on line 2)"
            ),
            "{e}"
        );
        let e = parse_lscpu_p("# CPU,Core,Socket,Node\n0,0,0,0\n2,1,0,0\n", "h", "h")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("h: CPU ids must be 0..2 without gaps; CPU 1 is missing"),
            "{e}"
        );
        let e = parse_lscpu_p("# CPU,Core,Socket,Node\n0,0,0,0\n1,1,0\n", "h", "h")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("h:3: expected 4 comma-separated fields"),
            "{e}"
        );
        // Two outputs concatenated (different layouts): an error naming the second header,
        // not an index out of bounds.
        let e = parse_lscpu_p(
            "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n0,0,0,0,,0,0,0,0\n# CPU,Core\n1,1\n",
            "h",
            "h",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("h:3: expected one lscpu -p output"), "{e}");
        let e = parse_lscpu_p("# CPU,Socket,Node\n0,0,0\n", "h", "h")
            .unwrap_err()
            .to_string();
        assert!(e.contains("with CPU and Core columns"), "{e}");
        let e = parse_lscpu_p("# CPU,Core,Socket,Node\n0,0,0,0\n1,1,0,\n", "h", "h")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("h:3: expected a node id (other CPUs have one)"),
            "{e}"
        );
    }
}
