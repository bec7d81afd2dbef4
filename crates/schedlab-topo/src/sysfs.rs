//! The running machine (or a captured copy of its sysfs) → [`Topology`].
//!
//! ```text
//! ROOT/devices/system/cpu/online                         which CPUs to read (else cpuN dirs)
//! ROOT/devices/system/cpu/cpuN/topology/core_cpus_list   SMT siblings (or thread_siblings_list;
//!                                                        core_id + physical_package_id if neither)
//! ROOT/devices/system/cpu/cpuN/topology/physical_package_id
//! ROOT/devices/system/cpu/cpuN/topology/cluster_cpus_list (or cluster_id), optional
//! ROOT/devices/system/cpu/cpuN/cache/indexK/{level,type,shared_cpu_list}
//!                                                        LLC = highest-level Data/Unified cache
//! ROOT/devices/system/cpu/cpuN/cpu_capacity              optional, default 1024
//! ROOT/devices/system/node/nodeM/{cpulist,distance}      no node dirs → one node, distance 10
//! ```
//! `ROOT` is `/sys` for the host, or a captured tree (`--sysfs-root`). Sibling, cluster
//! and cache lists must agree between the CPUs they name; every CPU must be on exactly
//! one node. Clusters that coincide everywhere with cores or with LLCs (x86 reports one
//! per L2, which usually is the core) are dropped, as the kernel drops the degenerate
//! CLS level. Nodes without CPUs are dropped with their distances.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::cpulist::{MAX_CPUS, parse_cpu_list};
use crate::cpuset::CpuId;
use crate::model::{CpuPlacement, DEFAULT_CAPACITY, Topology};
use crate::spec::{TopoSpecError, clip};

/// The most a sysfs attribute is read: real ones are a page at most.
const MAX_ATTR_BYTES: u64 = 64 * 1024;

/// Reads a sysfs attribute: regular files only (a FIFO would block forever, a link to
/// `/dev/zero` would be read until memory runs out), at most [`MAX_ATTR_BYTES`].
fn read(path: &Path) -> Result<String, TopoSpecError> {
    use std::io::Read;
    let io = |error: std::io::Error| TopoSpecError::Io {
        path: path.display().to_string(),
        error,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a sysfs attribute is one)",
        )));
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(MAX_ATTR_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(io)?;
    if text.len() as u64 > MAX_ATTR_BYTES {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {MAX_ATTR_BYTES} bytes (a sysfs attribute is a page at most)"),
        )));
    }
    Ok(text)
}

fn read_opt(path: &Path) -> Result<Option<String>, TopoSpecError> {
    if path.exists() {
        read(path).map(Some)
    } else {
        Ok(None)
    }
}

fn parse_num<T: std::str::FromStr>(
    path: &Path,
    text: &str,
    what: &str,
) -> Result<T, TopoSpecError> {
    let t = text.trim();
    t.parse::<T>().map_err(|_| {
        TopoSpecError::parse(
            &path.display().to_string(),
            1,
            what,
            format!("'{}'", clip(t)),
        )
    })
}

/// A cpulist restricted to the CPUs being read: offline CPUs may linger in captured
/// sibling and cache lists, and are not part of the machine.
fn read_online_list(path: &Path, online: &[CpuId]) -> Result<Vec<CpuId>, TopoSpecError> {
    Ok(read_list(path)?
        .into_iter()
        .filter(|c| online.binary_search(c).is_ok())
        .collect())
}

fn read_list(path: &Path) -> Result<Vec<CpuId>, TopoSpecError> {
    let text = read(path)?;
    parse_cpu_list(&text).map_err(|e| {
        let (expected, found) = e.expected_found("a cpulist like 0-3,8", "CPU");
        TopoSpecError::parse(&path.display().to_string(), 1, expected, found)
    })
}

/// Numeric suffixes of `prefixN` entries in `dir`, sorted.
fn numbered_entries(dir: &Path, prefix: &str) -> Result<Vec<usize>, TopoSpecError> {
    let rd = std::fs::read_dir(dir).map_err(|error| TopoSpecError::Io {
        path: dir.display().to_string(),
        error,
    })?;
    let mut out = Vec::new();
    for e in rd {
        let e = e.map_err(|error| TopoSpecError::Io {
            path: dir.display().to_string(),
            error,
        })?;
        let name = e.file_name();
        let name = name.to_string_lossy();
        if let Some(n) = name.strip_prefix(prefix)
            && !n.is_empty()
            && n.bytes().all(|b| b.is_ascii_digit())
            && let Ok(v) = n.parse()
        {
            out.push(v);
        }
    }
    out.sort_unstable();
    Ok(out)
}

/// A per-CPU list that must agree among its members (siblings, cluster, cache), already
/// restricted to the CPUs being read.
struct SharedList {
    cpus: Vec<CpuId>,
    path: PathBuf,
}

fn check_shared(lists: &BTreeMap<CpuId, SharedList>, what: &str) -> Result<(), TopoSpecError> {
    for (&cpu, l) in lists {
        let file = l.path.display().to_string();
        if !l.cpus.contains(&cpu) {
            return Err(TopoSpecError::parse(
                &file,
                1,
                format!("a {what} list that contains CPU {cpu} itself"),
                format!(
                    "'{}'",
                    crate::cpuset::CpuSet::from_cpus(MAX_CPUS, l.cpus.iter().copied())
                ),
            ));
        }
        for &m in &l.cpus {
            match lists.get(&m) {
                Some(other) if other.cpus != l.cpus => {
                    return Err(TopoSpecError::parse(
                        &file,
                        1,
                        format!("the same {what} list as CPU {m} ({})", other.path.display()),
                        "a different one",
                    ));
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// Reads a sysfs tree rooted at `root` (the directory holding `devices/system/cpu`).
pub fn from_sysfs(root: &Path) -> Result<Topology, TopoSpecError> {
    let cpu_dir = root.join("devices/system/cpu");
    if !cpu_dir.is_dir() {
        return Err(TopoSpecError::Io {
            path: cpu_dir.display().to_string(),
            error: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "not a directory (--sysfs-root must be the directory that contains devices/system/cpu)",
            ),
        });
    }
    let online_path = cpu_dir.join("online");
    let cpus: Vec<CpuId> = if online_path.exists() {
        read_list(&online_path)?
    } else {
        numbered_entries(&cpu_dir, "cpu")?
            .into_iter()
            .map(CpuId::new)
            .collect()
    };
    if cpus.is_empty() {
        return Err(TopoSpecError::parse(
            &cpu_dir.display().to_string(),
            1,
            "at least one CPU",
            "none",
        ));
    }
    if let Some(&c) = cpus.iter().find(|&&c| c.index() >= MAX_CPUS) {
        return Err(TopoSpecError::parse(
            &cpu_dir.display().to_string(),
            1,
            format!("CPU ids below {MAX_CPUS}"),
            format!("cpu{c}"),
        ));
    }

    let mut cores: BTreeMap<CpuId, SharedList> = BTreeMap::new();
    let mut clusters: BTreeMap<CpuId, SharedList> = BTreeMap::new();
    let mut llcs: BTreeMap<CpuId, SharedList> = BTreeMap::new();
    struct Raw {
        package: usize,
        core_key: Option<(usize, usize)>,
        cluster_id: Option<(usize, usize)>,
        capacity: u32,
    }
    let mut raw: BTreeMap<CpuId, Raw> = BTreeMap::new();
    for &cpu in &cpus {
        let dir = cpu_dir.join(format!("cpu{cpu}"));
        let topo = dir.join("topology");
        let pkg_path = topo.join("physical_package_id");
        let pkg: i64 = parse_num(&pkg_path, &read(&pkg_path)?, "a package id (an integer)")?;
        let package = usize::try_from(pkg).unwrap_or(usize::MAX);
        let core_list = ["core_cpus_list", "thread_siblings_list"]
            .iter()
            .map(|f| topo.join(f))
            .find(|p| p.exists());
        let core_key = match core_list {
            Some(p) => {
                cores.insert(
                    cpu,
                    SharedList {
                        cpus: read_online_list(&p, &cpus)?,
                        path: p,
                    },
                );
                None
            }
            None => {
                let p = topo.join("core_id");
                Some((
                    package,
                    parse_num::<usize>(&p, &read(&p)?, "a core id (an integer)")?,
                ))
            }
        };
        let cl_list = topo.join("cluster_cpus_list");
        let cluster_id = if cl_list.exists() {
            clusters.insert(
                cpu,
                SharedList {
                    cpus: read_online_list(&cl_list, &cpus)?,
                    path: cl_list,
                },
            );
            None
        } else {
            let p = topo.join("cluster_id");
            match read_opt(&p)? {
                Some(t) => {
                    let v: i64 = parse_num(&p, &t, "a cluster id (an integer)")?;
                    Some((package, usize::try_from(v).unwrap_or(usize::MAX)))
                }
                None => None,
            }
        };
        // LLC: the highest-level data or unified cache.
        let cache_dir = dir.join("cache");
        if cache_dir.is_dir() {
            let mut best: Option<(u32, PathBuf)> = None;
            for k in numbered_entries(&cache_dir, "index")? {
                let idx = cache_dir.join(format!("index{k}"));
                let ty_path = idx.join("type");
                let ty = read(&ty_path)?;
                let ty = ty.trim();
                if !matches!(ty, "Data" | "Unified" | "Instruction") {
                    return Err(TopoSpecError::parse(
                        &ty_path.display().to_string(),
                        1,
                        "Data, Instruction or Unified",
                        format!("'{}'", clip(ty)),
                    ));
                }
                if ty == "Instruction" {
                    continue;
                }
                let lv_path = idx.join("level");
                let level: u32 =
                    parse_num(&lv_path, &read(&lv_path)?, "a cache level (an integer)")?;
                if best.as_ref().is_none_or(|(l, _)| level > *l) {
                    best = Some((level, idx.join("shared_cpu_list")));
                }
            }
            if let Some((_, p)) = best {
                llcs.insert(
                    cpu,
                    SharedList {
                        cpus: read_online_list(&p, &cpus)?,
                        path: p,
                    },
                );
            }
        }
        let cap_path = dir.join("cpu_capacity");
        let capacity = match read_opt(&cap_path)? {
            Some(t) => {
                let c: u32 = parse_num(&cap_path, &t, "a capacity (an integer)")?;
                // The kernel scales capacities so that the biggest CPU is
                // SCHED_CAPACITY_SCALE (1024, topology_normalize_cpu_scale()); 0 would
                // divide every utilisation by zero.
                if !(1..=DEFAULT_CAPACITY).contains(&c) {
                    return Err(TopoSpecError::parse(
                        &cap_path.display().to_string(),
                        1,
                        format!("a capacity in 1..={DEFAULT_CAPACITY} (SCHED_CAPACITY_SCALE)"),
                        format!("'{}'", t.trim()),
                    ));
                }
                c
            }
            None => DEFAULT_CAPACITY,
        };
        raw.insert(
            cpu,
            Raw {
                package,
                core_key,
                cluster_id,
                capacity,
            },
        );
    }
    if !llcs.is_empty() && llcs.len() != cpus.len() {
        let missing = cpus
            .iter()
            .find(|c| !llcs.contains_key(c))
            .copied()
            .unwrap_or_default();
        return Err(TopoSpecError::parse(
            &cpu_dir
                .join(format!("cpu{missing}/cache"))
                .display()
                .to_string(),
            1,
            "cache information for every CPU (others have it)",
            "no data or unified cache",
        ));
    }
    check_shared(&cores, "SMT sibling")?;
    check_shared(&clusters, "cluster")?;
    check_shared(&llcs, "LLC")?;

    // Nodes.
    let node_dir = root.join("devices/system/node");
    let node_ids = if node_dir.is_dir() {
        numbered_entries(&node_dir, "node")?
    } else {
        Vec::new()
    };
    let mut node_of: BTreeMap<CpuId, (usize, PathBuf)> = BTreeMap::new();
    let mut dist_full: Vec<Vec<u32>> = Vec::new();
    let mut with_cpus: Vec<usize> = Vec::new();
    for (k, &id) in node_ids.iter().enumerate() {
        let nd = node_dir.join(format!("node{id}"));
        let lp = nd.join("cpulist");
        let list = read_list(&lp)?;
        for &c in &list {
            if !raw.contains_key(&c) {
                // Offline CPUs stay in no node we build; that is fine.
                continue;
            }
            if let Some((other, op)) = node_of.insert(c, (id, lp.clone())) {
                return Err(TopoSpecError::parse(
                    &lp.display().to_string(),
                    1,
                    "each CPU on exactly one node",
                    format!("CPU {c} also on node {other} ({})", op.display()),
                ));
            }
        }
        if list.iter().any(|c| raw.contains_key(c)) {
            with_cpus.push(k);
        }
        let dp = nd.join("distance");
        let text = read(&dp)?;
        let row: Vec<u32> = text
            .split_whitespace()
            .map(|v| parse_num(&dp, v, "distances (positive integers)"))
            .collect::<Result<_, _>>()?;
        if row.len() != node_ids.len() {
            return Err(TopoSpecError::parse(
                &dp.display().to_string(),
                1,
                format!(
                    "{} distances, one per node (the matrix must be square)",
                    node_ids.len()
                ),
                format!("{}", row.len()),
            ));
        }
        dist_full.push(row);
    }
    let distances: Vec<Vec<u32>> = if node_ids.is_empty() {
        vec![vec![10]]
    } else {
        with_cpus
            .iter()
            .map(|&i| with_cpus.iter().map(|&j| dist_full[i][j]).collect())
            .collect()
    };

    let mut placements = Vec::with_capacity(cpus.len());
    for (&cpu, r) in &raw {
        let node = if node_ids.is_empty() {
            0
        } else {
            match node_of.get(&cpu) {
                Some((id, _)) => *id,
                None => {
                    return Err(TopoSpecError::parse(
                        &node_dir.display().to_string(),
                        1,
                        format!("CPU {cpu} in some node*/cpulist"),
                        "it in none",
                    ));
                }
            }
        };
        // Raw ids: first CPU of the shared list, or a key that cannot collide with one.
        let first = |m: &BTreeMap<CpuId, SharedList>| {
            m.get(&cpu).and_then(|l| l.cpus.first().map(|c| c.index()))
        };
        let high = |(p, v): (usize, usize)| MAX_CPUS + p.wrapping_mul(1 << 20).wrapping_add(v);
        let core = first(&cores)
            .or(r.core_key.map(high))
            .unwrap_or(cpu.index());
        let cluster = first(&clusters).or(r.cluster_id.map(high));
        let llc = first(&llcs).unwrap_or_else(|| high((r.package, 1 << 19)));
        placements.push(CpuPlacement {
            cpu,
            core,
            cluster,
            llc,
            package: r.package,
            node,
            capacity: r.capacity,
        });
    }
    let name = if root == Path::new("/sys") {
        "host".to_string()
    } else {
        root.file_name()
            .map_or_else(|| "host".to_string(), |n| n.to_string_lossy().into_owned())
    };
    let source = format!("sysfs tree {}", root.display());
    let file = if node_ids.is_empty() {
        cpu_dir
    } else {
        node_dir
    };
    let t = Topology::from_cpus(name, source, placements, distances)
        .map_err(|e| TopoSpecError::invalid(&file.display().to_string(), e))?;
    Ok(drop_degenerate_clusters(t))
}

/// Removes clusters that add nothing: when every cluster equals its core, or every
/// cluster equals its LLC. The kernel would drop such a CLS level as degenerate.
pub(crate) fn drop_degenerate_clusters(t: Topology) -> Topology {
    if !t.has_clusters() {
        return t;
    }
    let n = t.nr_cpus();
    let same_as_core = CpuId::range(n).all(|c| t.cluster_span(c) == t.smt_siblings(c));
    let same_as_llc = CpuId::range(n).all(|c| t.cluster_span(c) == t.llc_span(c));
    if !(same_as_core || same_as_llc) {
        return t;
    }
    let placements = t
        .cpus()
        .iter()
        .map(|c| CpuPlacement {
            cpu: c.id,
            core: c.core,
            cluster: None,
            llc: c.llc,
            package: c.package,
            node: c.node,
            capacity: c.capacity,
        })
        .collect();
    let nodes = t.distances().to_vec();
    match Topology::from_cpus(t.name.clone(), t.source.clone(), placements, nodes) {
        Ok(r) => r,
        Err(_) => t,
    }
}

/// The cache line size of the machine at `root` (the `coherency_line_size` of the first
/// CPU's first data or unified cache), if sysfs gives it. Not part of [`Topology`]: only
/// the host calibration needs it.
pub fn cache_line_bytes(root: &Path) -> Option<u64> {
    let cpu_dir = root.join("devices/system/cpu");
    let first = numbered_entries(&cpu_dir, "cpu").ok()?.into_iter().next()?;
    let cache = cpu_dir.join(format!("cpu{first}/cache"));
    numbered_entries(&cache, "index")
        .ok()?
        .into_iter()
        .map(|k| cache.join(format!("index{k}")))
        .filter(|idx| read(&idx.join("type")).is_ok_and(|t| t.trim() != "Instruction"))
        .find_map(|idx| {
            read(&idx.join("coherency_line_size"))
                .ok()
                .and_then(|s| s.trim().parse().ok())
        })
}
