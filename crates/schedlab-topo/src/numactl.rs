//! `numactl --hardware` output → [`Topology`].
//!
//! ```text
//! available: 2 nodes (0-1)
//! node 0 cpus: 0 1 2 3 4 5 6 7 8 9 20 21 ...
//! node 0 size: 15890 MB
//! node 0 free: 2651 MB
//! ...
//! node distances:
//! node 0 1
//! 0: 10 20
//! 1: 20 10
//! ```
//! numactl shows nodes, their CPUs and the distance table, but no cores or caches, so
//! those come from [`TopologyOptions`]: `smt` threads per core (default 1) and
//! `llc_per_node` LLCs per node (default 1). A node's sorted CPU list is split into `smt`
//! equal consecutive chunks and core `j` is `(chunk0[j], chunk1[j], ...)`: with `--smt 2`
//! the example pairs CPUs (0,20), (1,21)... as the kernel enumerates them on Intel
//! machines. The cores of a node, in that order, are split into `llc_per_node` equal
//! consecutive LLCs. Each node is one package. Nodes without CPUs (memory-only) are
//! dropped with their distance row and column. `No distance information available.`
//! gives distances 10 local / 20 remote.

use std::path::Path;

use crate::cpulist::{CpuListError, parse_cpu_words, parse_id_list};
use crate::cpuset::CpuId;
use crate::model::{CpuPlacement, DEFAULT_CAPACITY, Topology};
use crate::spec::{TopoSpecError, TopologyOptions, clip};

struct NodeCpus {
    id: usize,
    cpus: Vec<CpuId>,
    line: usize,
}

fn list_err(file: &str, line: usize, e: CpuListError, what: &str, noun: &str) -> TopoSpecError {
    let (expected, found) = e.expected_found(what, noun);
    TopoSpecError::parse(file, line, expected, found)
}

fn parse_node_id(file: &str, line: usize, tok: &str, text: &str) -> Result<usize, TopoSpecError> {
    tok.parse::<usize>()
        .map_err(|_| TopoSpecError::parse(file, line, "a node number", format!("'{}'", clip(text))))
}

/// Parses `numactl --hardware` output. `file` names the input in errors and becomes the
/// machine's name (its file stem) and source.
pub fn parse_numactl(
    text: &str,
    file: &str,
    opts: &TopologyOptions,
) -> Result<Topology, TopoSpecError> {
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty())
        .collect();
    let eof_line = text.lines().count() + 1;
    let mut it = lines.iter().copied().peekable();

    // available: N nodes (ids)
    let Some((line, first)) = it.next() else {
        return Err(TopoSpecError::parse(
            file,
            1,
            "'available: N nodes (...)'",
            "end of file",
        ));
    };
    let avail_expected = "'available: N nodes (LIST)'";
    let rest = first.strip_prefix("available:").ok_or_else(|| {
        TopoSpecError::parse(file, line, avail_expected, format!("'{}'", clip(first)))
    })?;
    let mut words = rest.split_whitespace();
    let count: usize = words.next().and_then(|w| w.parse().ok()).ok_or_else(|| {
        TopoSpecError::parse(file, line, avail_expected, format!("'{}'", clip(first)))
    })?;
    let ids_text = rest
        .split_once('(')
        .and_then(|(_, r)| r.split_once(')'))
        .map(|(ids, _)| ids)
        .ok_or_else(|| {
            TopoSpecError::parse(file, line, avail_expected, format!("'{}'", clip(first)))
        })?;
    let node_ids = parse_id_list(ids_text)
        .map_err(|e| list_err(file, line, e, "a node list like (0-1)", "node"))?;
    if node_ids.len() != count {
        return Err(TopoSpecError::parse(
            file,
            line,
            format!("{count} node ids in the list"),
            format!("{} in ({ids_text})", node_ids.len()),
        ));
    }

    // node N cpus/size/free lines, then the distance table.
    let mut nodes: Vec<NodeCpus> = Vec::new();
    let mut owner: Vec<Option<(usize, usize)>> = Vec::new(); // cpu -> (node, line)
    let mut distances: Option<Vec<(usize, Vec<u32>, usize)>> = None;
    let mut header: Vec<usize> = Vec::new();
    let mut header_line = 0;
    while let Some((line, l)) = it.next() {
        if l == "node distances:" {
            let Some((hl, h)) = it.next() else {
                return Err(TopoSpecError::parse(
                    file,
                    eof_line,
                    "the 'node 0 1 ...' header of the distance table",
                    "end of file",
                ));
            };
            let mut hw = h.split_whitespace();
            if hw.next() != Some("node") {
                return Err(TopoSpecError::parse(
                    file,
                    hl,
                    "the 'node 0 1 ...' header of the distance table",
                    format!("'{}'", clip(h)),
                ));
            }
            header = hw
                .map(|w| parse_node_id(file, hl, w, h))
                .collect::<Result<_, _>>()?;
            header_line = hl;
            let mut rows = Vec::new();
            while let Some(&(rl, r)) = it.peek() {
                let Some((id, vals)) = r.split_once(':') else {
                    break;
                };
                it.next();
                let id = parse_node_id(file, rl, id.trim(), r)?;
                let vals: Vec<u32> = vals
                    .split_whitespace()
                    .map(|v| {
                        v.parse::<u32>().map_err(|_| {
                            TopoSpecError::parse(
                                file,
                                rl,
                                "a distance (a positive integer)",
                                format!("'{v}'"),
                            )
                        })
                    })
                    .collect::<Result<_, _>>()?;
                rows.push((id, vals, rl));
            }
            distances = Some(rows);
            continue;
        }
        if l.starts_with("No distance information") {
            distances = Some(Vec::new());
            continue;
        }
        let bad = || {
            TopoSpecError::parse(
                file,
                line,
                "'node N cpus: ...', 'node N size/free: ...' or 'node distances:'",
                format!("'{}'", clip(l)),
            )
        };
        let rest = l.strip_prefix("node ").ok_or_else(bad)?;
        let (id, rest) = rest.split_once(' ').ok_or_else(bad)?;
        let id = parse_node_id(file, line, id, l)?;
        if !node_ids.contains(&id) {
            return Err(TopoSpecError::parse(
                file,
                line,
                format!("a node listed in 'available:' ({ids_text})"),
                format!("node {id}"),
            ));
        }
        if let Some(cpus) = rest.strip_prefix("cpus:") {
            if nodes.iter().any(|n| n.id == id) {
                return Err(TopoSpecError::parse(
                    file,
                    line,
                    format!("one 'node {id} cpus:' line"),
                    "a second one",
                ));
            }
            let cpus =
                parse_cpu_words(cpus).map_err(|e| list_err(file, line, e, "CPU numbers", "CPU"))?;
            for &c in &cpus {
                if owner.len() <= c.index() {
                    owner.resize(c.index() + 1, None);
                }
                if let Some((other, ol)) = owner[c] {
                    return Err(TopoSpecError::parse(
                        file,
                        line,
                        "each CPU on exactly one node",
                        format!("CPU {c} on node {id} and on node {other} (line {ol})"),
                    ));
                }
                owner[c] = Some((id, line));
            }
            nodes.push(NodeCpus { id, cpus, line });
        } else if !(rest.starts_with("size:") || rest.starts_with("free:")) {
            return Err(bad());
        }
    }
    for &id in &node_ids {
        if !nodes.iter().any(|n| n.id == id) {
            return Err(TopoSpecError::parse(
                file,
                eof_line,
                format!("a 'node {id} cpus:' line"),
                "end of file (truncated output?)",
            ));
        }
    }
    let Some(rows) = distances else {
        return Err(TopoSpecError::parse(
            file,
            eof_line,
            "the 'node distances:' table",
            "end of file (truncated output?)",
        ));
    };
    if !owner.iter().any(Option::is_some) {
        return Err(TopoSpecError::parse(
            file,
            eof_line,
            "at least one node with CPUs",
            "no CPUs at all",
        ));
    }

    // Distance matrix over all listed nodes, then restricted to the nodes with CPUs.
    let full: Vec<Vec<u32>> = if rows.is_empty() {
        node_ids
            .iter()
            .map(|i| {
                node_ids
                    .iter()
                    .map(|j| if i == j { 10 } else { 20 })
                    .collect()
            })
            .collect()
    } else {
        if header != node_ids {
            return Err(TopoSpecError::parse(
                file,
                header_line,
                format!("distance table columns for nodes {node_ids:?}"),
                format!("columns {header:?}"),
            ));
        }
        let mut m = Vec::with_capacity(node_ids.len());
        for (k, &id) in node_ids.iter().enumerate() {
            let Some((rid, vals, rl)) = rows.get(k) else {
                return Err(TopoSpecError::parse(
                    file,
                    eof_line,
                    format!("the distance row '{id}: ...'"),
                    "end of file (truncated output?)",
                ));
            };
            if *rid != id {
                return Err(TopoSpecError::parse(
                    file,
                    *rl,
                    format!("the distance row for node {id}"),
                    format!("a row for node {rid}"),
                ));
            }
            if vals.len() != node_ids.len() {
                return Err(TopoSpecError::parse(
                    file,
                    *rl,
                    format!("{} distances (the matrix must be square)", node_ids.len()),
                    format!("{}", vals.len()),
                ));
            }
            m.push(vals.clone());
        }
        if let Some((rid, _, rl)) = rows.get(node_ids.len()) {
            return Err(TopoSpecError::parse(
                file,
                *rl,
                format!("{} distance rows", node_ids.len()),
                format!("an extra row for node {rid}"),
            ));
        }
        // Check values with the row's line number in hand.
        for (i, (_, _, rl)) in rows.iter().enumerate() {
            for j in 0..m.len() {
                let v = m[i][j];
                if v == 0 {
                    return Err(TopoSpecError::parse(
                        file,
                        *rl,
                        "non-zero distances",
                        format!("distance {}->{} is 0", node_ids[i], node_ids[j]),
                    ));
                }
                if m[j][i] != v {
                    return Err(TopoSpecError::parse(
                        file,
                        *rl,
                        "a symmetric distance matrix",
                        format!(
                            "{}->{} is {v} but {}->{} is {}",
                            node_ids[i], node_ids[j], node_ids[j], node_ids[i], m[j][i]
                        ),
                    ));
                }
                if i != j && v <= m[i][i] {
                    return Err(TopoSpecError::parse(
                        file,
                        *rl,
                        "the local distance to be the smallest in its row",
                        format!(
                            "{}->{} is {v}, local is {}",
                            node_ids[i], node_ids[j], m[i][i]
                        ),
                    ));
                }
            }
        }
        m
    };
    let keep: Vec<usize> = node_ids
        .iter()
        .enumerate()
        .filter(|(_, id)| nodes.iter().any(|n| n.id == **id && !n.cpus.is_empty()))
        .map(|(k, _)| k)
        .collect();
    let dist: Vec<Vec<u32>> = keep
        .iter()
        .map(|&i| keep.iter().map(|&j| full[i][j]).collect())
        .collect();

    // Cores and LLCs from the options.
    let smt = opts.smt.unwrap_or(1);
    let llc_per_node = opts.llc_per_node.unwrap_or(1);
    nodes.sort_by_key(|n| n.id);
    let mut placements = Vec::new();
    let (mut next_core, mut next_llc) = (0, 0);
    for n in nodes.iter().filter(|n| !n.cpus.is_empty()) {
        if smt == 0 || !n.cpus.len().is_multiple_of(smt) {
            return Err(TopoSpecError::parse(
                file,
                n.line,
                format!("a CPU count divisible by --smt {smt}"),
                format!("{} CPUs on node {}", n.cpus.len(), n.id),
            ));
        }
        let cores = n.cpus.len() / smt;
        if llc_per_node == 0 || !cores.is_multiple_of(llc_per_node) {
            return Err(TopoSpecError::parse(
                file,
                n.line,
                format!("a core count divisible by --llc-per-node {llc_per_node}"),
                format!("{cores} cores on node {} (--smt {smt})", n.id),
            ));
        }
        let cores_per_llc = cores / llc_per_node;
        for j in 0..cores {
            for k in 0..smt {
                placements.push(CpuPlacement {
                    cpu: n.cpus[k * cores + j],
                    core: next_core + j,
                    cluster: None,
                    llc: next_llc + j / cores_per_llc,
                    package: n.id,
                    node: n.id,
                    capacity: DEFAULT_CAPACITY,
                });
            }
        }
        next_core += cores;
        next_llc += llc_per_node;
    }
    let name = Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.to_string());
    let source =
        format!("numactl --hardware output in {file} (--smt {smt}, --llc-per-node {llc_per_node})");
    Topology::from_cpus(name, source, placements, dist).map_err(|e| TopoSpecError::invalid(file, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    const WESTMERE: &str = "available: 2 nodes (0-1)
node 0 cpus: 0 1 2 3 4 5 6 7 8 9 20 21 22 23 24 25 26 27 28 29
node 0 size: 15890 MB
node 0 free: 2651 MB
node 1 cpus: 10 11 12 13 14 15 16 17 18 19 30 31 32 33 34 35 36 37 38 39
node 1 size: 16125 MB
node 1 free: 2063 MB
node distances:
node 0 1
0: 10 20
1: 20 10
";

    fn smt(n: usize) -> TopologyOptions {
        TopologyOptions {
            smt: Some(n),
            ..Default::default()
        }
    }

    fn err(text: &str, o: &TopologyOptions) -> String {
        parse_numactl(text, "f.txt", o).unwrap_err().to_string()
    }

    #[test]
    fn westmere_pairs_far_siblings() {
        let t = parse_numactl(WESTMERE, "dir/westmere.txt", &smt(2)).unwrap();
        assert_eq!(t.name, "westmere");
        assert_eq!(t.nr_cpus(), 40);
        assert_eq!(t.nr_cores(), 20);
        assert_eq!(t.nr_nodes(), 2);
        assert_eq!(t.nr_llcs(), 2);
        assert_eq!(t.nr_packages(), 2);
        assert_eq!(t.smt_siblings(CpuId::new(0)).indices(), vec![0, 20]);
        assert_eq!(t.smt_siblings(CpuId::new(31)).indices(), vec![11, 31]);
        assert_eq!(t.node_span(CpuId::new(12)).to_list_string(), "10-19,30-39");
        assert_eq!(t.distances(), &[vec![10, 20], vec![20, 10]]);
    }

    #[test]
    fn default_options_one_thread_one_llc() {
        let t = parse_numactl(WESTMERE, "w", &TopologyOptions::default()).unwrap();
        assert_eq!(t.nr_cores(), 40);
        assert_eq!(t.threads_per_core(), 1);
        assert_eq!(t.nr_llcs(), 2);
        let o = TopologyOptions {
            smt: Some(2),
            llc_per_node: Some(2),
            ..Default::default()
        };
        let t = parse_numactl(WESTMERE, "w", &o).unwrap();
        assert_eq!(t.nr_llcs(), 4);
        // Node 0's cores 0-4 form LLC 0: CPUs 0-4 and 20-24.
        assert_eq!(t.llc_span(CpuId::new(0)).to_list_string(), "0-4,20-24");
    }

    #[test]
    fn cpuless_nodes_dropped_and_no_distance_info() {
        let text = "available: 3 nodes (0-2)
node 0 cpus: 0 1
node 0 size: 1 MB
node 1 cpus:
node 1 size: 1 MB
node 2 cpus: 2 3
node distances:
node 0 1 2
0: 10 20 30
1: 20 10 20
2: 30 20 10
";
        let t = parse_numactl(text, "f", &TopologyOptions::default()).unwrap();
        assert_eq!(t.nr_nodes(), 2);
        assert_eq!(t.distances(), &[vec![10, 30], vec![30, 10]]);
        let text = "available: 2 nodes (0-1)\nnode 0 cpus: 0\nnode 1 cpus: 1\nNo distance information available.\n";
        let t = parse_numactl(text, "f", &TopologyOptions::default()).unwrap();
        assert_eq!(t.distances(), &[vec![10, 20], vec![20, 10]]);
    }

    #[test]
    fn bad_inputs_name_file_and_line() {
        let o = TopologyOptions::default();
        let e = err("", &o);
        assert!(
            e.starts_with("f.txt:1: expected 'available: N nodes (...)', found end of file"),
            "{e}"
        );
        let e = err("nodes: 2\n", &o);
        assert!(
            e.starts_with("f.txt:1: expected 'available: N nodes (LIST)'"),
            "{e}"
        );
        // Truncated after the CPU lines.
        let cut: String = WESTMERE.lines().take(6).map(|l| format!("{l}\n")).collect();
        let e = err(&cut, &o);
        assert!(
            e.starts_with("f.txt:7: expected the 'node distances:' table, found end of file"),
            "{e}"
        );
        // Truncated before node 1.
        let cut: String = WESTMERE.lines().take(3).map(|l| format!("{l}\n")).collect();
        let e = err(&cut, &o);
        assert!(e.contains("expected a 'node 1 cpus:' line"), "{e}");
        // Truncated inside the table.
        let cut: String = WESTMERE
            .lines()
            .take(10)
            .map(|l| format!("{l}\n"))
            .collect();
        let e = err(&cut, &o);
        assert!(
            e.starts_with("f.txt:11: expected the distance row '1: ...'"),
            "{e}"
        );
        let e = err(&WESTMERE.replace("1: 20 10", "1: 21 10"), &o);
        assert!(
            e.starts_with("f.txt:10: expected a symmetric distance matrix"),
            "{e}"
        );
        let e = err(&WESTMERE.replace("1: 20 10", "1: 20 0"), &o);
        assert!(
            e.starts_with("f.txt:11: expected non-zero distances, found distance 1->1 is 0"),
            "{e}"
        );
        let e = err(&WESTMERE.replace("1: 20 10", "1: 20"), &o);
        assert!(
            e.starts_with("f.txt:11: expected 2 distances (the matrix must be square), found 1"),
            "{e}"
        );
        let e = err(
            &WESTMERE.replace("0: 10 20\n1: 20 10", "0: 10 20\n1: 20 10\n2: 1 1"),
            &o,
        );
        assert!(e.starts_with("f.txt:12: expected 2 distance rows"), "{e}");
        let e = err(
            &WESTMERE.replace("0: 10 20\n1: 20 10", "0: 30 20\n1: 20 30"),
            &o,
        );
        assert!(e.contains("local distance to be the smallest"), "{e}");
        let e = err(&WESTMERE.replace("0: 10 20", "0: 10 x"), &o);
        assert!(
            e.starts_with("f.txt:10: expected a distance (a positive integer), found 'x'"),
            "{e}"
        );
        // Overlap: CPU 9 on both nodes.
        let e = err(
            &WESTMERE.replace("node 1 cpus: 10", "node 1 cpus: 9 10"),
            &o,
        );
        assert!(e.starts_with("f.txt:5: expected each CPU on exactly one node, found CPU 9 on node 1 and on node 0 (line 2)"), "{e}");
        // Gap: CPU 39 missing → 38 CPUs, 39 is not present but 0..38 are fine; drop CPU 5.
        let e = err(&WESTMERE.replace(" 5 6", " 6"), &o);
        assert!(
            e.contains("f.txt: CPU ids must be 0..39 without gaps; CPU 5 is missing"),
            "{e}"
        );
        let e = err(
            &WESTMERE.replace("node 0 cpus: 0 1", "node 0 cpus: 0 x"),
            &o,
        );
        assert!(
            e.starts_with("f.txt:2: expected CPU numbers, found 'x'"),
            "{e}"
        );
        let e = err(&WESTMERE.replace("node 0 free", "node 0 flee"), &o);
        assert!(e.starts_with("f.txt:4: expected 'node N cpus: ...'"), "{e}");
        let e = err(&WESTMERE.replace("node 1 size", "node 7 size"), &o);
        assert!(
            e.starts_with("f.txt:6: expected a node listed in 'available:' (0-1), found node 7"),
            "{e}"
        );
        let e = err(&WESTMERE.replace("available: 2", "available: 3"), &o);
        assert!(
            e.starts_with("f.txt:1: expected 3 node ids in the list, found 2 in (0-1)"),
            "{e}"
        );
        // The node list is a list of node ids: its errors name nodes, not CPUs.
        let e = err(&WESTMERE.replace("(0-1)", "(0-1,1)"), &o);
        assert!(
            e.starts_with("f.txt:1: expected each node listed once, found node 1 twice"),
            "{e}"
        );
        let e = err(&WESTMERE.replace("cpus: 0 1 2", "cpus: 0 0 2"), &o);
        assert!(
            e.contains("expected each CPU listed once, found CPU 0 twice"),
            "{e}"
        );
    }

    #[test]
    fn smt_must_divide() {
        let e = err(WESTMERE, &smt(3));
        assert!(
            e.starts_with(
                "f.txt:2: expected a CPU count divisible by --smt 3, found 20 CPUs on node 0"
            ),
            "{e}"
        );
        let e = err(WESTMERE, &smt(0));
        assert!(e.contains("divisible by --smt 0"), "{e}");
        let o = TopologyOptions {
            smt: Some(2),
            llc_per_node: Some(3),
            ..Default::default()
        };
        let e = err(WESTMERE, &o);
        assert!(e.starts_with("f.txt:2: expected a core count divisible by --llc-per-node 3, found 10 cores on node 0"), "{e}");
    }
}
