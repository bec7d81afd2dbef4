//! The topology's JSON form: what `schedlab topo show --json` prints and what
//! [`Topology::from_json`] reads back.
//!
//! ```text
//! { "format": "schedlab-topology/1", "name", "source", "compact",
//!   "cpus", "threads_per_core", "cores", "clusters" (0 = none), "llcs", "packages", "nodes",
//!   "distances": [[10,20],[20,10]],
//!   "cpu": [ {"id","core","cluster"|null,"llc","node","package","capacity","siblings":[..]} ],
//!   "domains": ... (optional; written by the CLI, ignored when read) }
//! ```
//! The per-CPU list is the machine; the counts are derived and, when present on input,
//! must agree with it (so a hand-edited file cannot silently say two things).

use serde::{Deserialize, Serialize};

use crate::cpuset::CpuId;
use crate::domains::SchedDomains;
use crate::model::{CpuPlacement, DEFAULT_CAPACITY, Topology};
use crate::spec::TopoSpecError;

/// The format tag written into every topology JSON object.
pub const FORMAT: &str = "schedlab-topology/1";

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CpuJson {
    id: CpuId,
    core: usize,
    cluster: Option<usize>,
    llc: usize,
    node: usize,
    package: usize,
    #[serde(default = "default_capacity")]
    capacity: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    siblings: Option<Vec<CpuId>>,
}

fn default_capacity() -> u32 {
    DEFAULT_CAPACITY
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TopologyJson {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    format: Option<String>,
    #[serde(default)]
    name: String,
    #[serde(default)]
    source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    compact: Option<Option<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cpus: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    threads_per_core: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cores: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    clusters: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    llcs: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    packages: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    nodes: Option<usize>,
    distances: Vec<Vec<u32>>,
    cpu: Vec<CpuJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    era: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    domains: Option<serde_json::Value>,
}

impl Topology {
    /// The JSON object described in the module docs (without `domains`).
    pub fn to_json_value(&self) -> serde_json::Value {
        let has_clusters = self.has_clusters();
        let j = TopologyJson {
            format: Some(FORMAT.to_string()),
            name: self.name.clone(),
            source: self.source.clone(),
            compact: Some(self.compact_string()),
            cpus: Some(self.nr_cpus()),
            threads_per_core: Some(self.threads_per_core()),
            cores: Some(self.nr_cores()),
            clusters: Some(self.json_clusters()),
            llcs: Some(self.nr_llcs()),
            packages: Some(self.nr_packages()),
            nodes: Some(self.nr_nodes()),
            distances: self.distances().to_vec(),
            cpu: self
                .cpus()
                .iter()
                .map(|c| CpuJson {
                    id: c.id,
                    core: c.core,
                    cluster: has_clusters.then_some(c.cluster),
                    llc: c.llc,
                    node: c.node,
                    package: c.package,
                    capacity: c.capacity,
                    siblings: Some(self.smt_siblings(c.id).iter().collect()),
                })
                .collect(),
            era: None,
            domains: None,
        };
        serde_json::to_value(j).unwrap_or(serde_json::Value::Null)
    }

    /// The JSON form as pretty-printed text; [`Topology::from_json`] reads it back.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(&self.to_json_value()).unwrap_or_default()
    }

    /// The `clusters` count of the JSON form: 0 when the machine has no clusters.
    fn json_clusters(&self) -> usize {
        if self.has_clusters() {
            self.nr_clusters()
        } else {
            0
        }
    }

    /// Reads the JSON form (also the full `schedlab topo show --json` output).
    pub fn from_json(text: &str) -> Result<Topology, TopoSpecError> {
        Self::from_json_named(text, "<json>")
    }

    /// Like [`Topology::from_json`], naming `file` in errors.
    pub fn from_json_named(text: &str, file: &str) -> Result<Topology, TopoSpecError> {
        let j: TopologyJson = serde_json::from_str(text).map_err(|e| TopoSpecError::Json {
            file: file.to_string(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        let mismatch = |key: &str, stated: String, actual: String| TopoSpecError::Parse {
            file: file.to_string(),
            line: find_line(text, key),
            expected: format!("\"{key}\" to agree with the cpu list ({actual})"),
            found: stated,
        };
        if let Some(f) = j.format.as_ref().filter(|f| *f != FORMAT) {
            return Err(mismatch("format", format!("'{f}'"), format!("'{FORMAT}'")));
        }
        // The matrix is indexed by node id: a CPU on a node it has no row for is a mistake,
        // not a node to renumber.
        if let Some(c) = j.cpu.iter().find(|c| c.node >= j.distances.len()) {
            return Err(TopoSpecError::Parse {
                file: file.to_string(),
                line: find_line(text, "distances"),
                expected: format!(
                    "a distance matrix row for node {} (CPU {}'s node; the matrix's {} rows are nodes 0 to {}, in order)",
                    c.node,
                    c.id,
                    j.distances.len(),
                    j.distances.len().saturating_sub(1)
                ),
                found: format!("{} rows", j.distances.len()),
            });
        }
        let placements = j
            .cpu
            .iter()
            .map(|c| CpuPlacement {
                cpu: c.id,
                core: c.core,
                cluster: c.cluster,
                llc: c.llc,
                package: c.package,
                node: c.node,
                capacity: c.capacity,
            })
            .collect();
        let t = Topology::from_cpus(j.name, j.source, placements, j.distances)
            .map_err(|e| TopoSpecError::invalid(file, e))?;
        let checks = [
            ("cpus", j.cpus, t.nr_cpus()),
            ("threads_per_core", j.threads_per_core, t.threads_per_core()),
            ("cores", j.cores, t.nr_cores()),
            ("clusters", j.clusters, t.json_clusters()),
            ("llcs", j.llcs, t.nr_llcs()),
            ("packages", j.packages, t.nr_packages()),
            ("nodes", j.nodes, t.nr_nodes()),
        ];
        for (key, stated, actual) in checks {
            if let Some(s) = stated.filter(|s| *s != actual) {
                return Err(mismatch(key, s.to_string(), actual.to_string()));
            }
        }
        for c in &j.cpu {
            if let Some(s) = &c.siblings {
                let actual: Vec<CpuId> = t.smt_siblings(c.id).iter().collect();
                if *s != actual {
                    return Err(mismatch(
                        "siblings",
                        format!("{s:?} for CPU {}", c.id),
                        format!("{actual:?}"),
                    ));
                }
            }
        }
        Ok(t)
    }
}

/// 1-based line of the first occurrence of `"key"`, for error messages.
fn find_line(text: &str, key: &str) -> usize {
    let needle = format!("\"{key}\"");
    text.lines()
        .position(|l| l.contains(&needle))
        .map_or(1, |i| i + 1)
}

impl SchedDomains {
    /// Per CPU, the domain chain lowest first: level name, span, groups, flag names and
    /// the numeric parameters.
    pub fn to_json_value(&self) -> serde_json::Value {
        let list = |s: &crate::CpuSet| serde_json::Value::from(s.indices());
        let cpus: Vec<serde_json::Value> = CpuId::range(self.nr_cpus())
            .map(|cpu| {
                let chain: Vec<serde_json::Value> = self
                    .of(cpu)
                    .iter()
                    .map(|d| {
                        serde_json::json!({
                            "level": d.level.name(),
                            "index": d.index,
                            "span": list(&d.span),
                            "span_weight": d.span_weight,
                            "groups": d.groups.iter().map(list).collect::<Vec<_>>(),
                            "flags": d.flags.names().collect::<Vec<_>>(),
                            "imbalance_pct": d.imbalance_pct,
                            "busy_factor": d.busy_factor,
                            "min_interval_ms": d.min_interval_ms,
                            "max_interval_ms": d.max_interval_ms,
                            "cache_nice_tries": d.cache_nice_tries,
                            "numa_distance": d.numa_distance,
                        })
                    })
                    .collect();
                serde_json::json!({ "cpu": cpu, "chain": chain })
            })
            .collect();
        serde_json::Value::from(cpus)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_keys() {
        let t = crate::presets::preset("kunpeng920-2n").unwrap();
        let v = t.to_json_value();
        assert_eq!(v["cpus"], 48);
        assert_eq!(v["clusters"], 12);
        assert_eq!(v["cpu"][5]["cluster"], 1);
        assert_eq!(v["cpu"][5]["siblings"], serde_json::json!([5]));
        assert_eq!(v["distances"], serde_json::json!([[10, 12], [12, 10]]));
        let back = Topology::from_json(&t.to_json()).unwrap();
        assert!(back.same_layout(&t));
        assert_eq!(back.name, "kunpeng920-2n");

        let t = crate::presets::preset("westmere-2s20c").unwrap();
        let v = t.to_json_value();
        assert_eq!(v["compact"], "2n2l10c2t");
        assert_eq!(v["cpu"][3]["cluster"], serde_json::Value::Null);
        assert_eq!(v["cpu"][23]["siblings"], serde_json::json!([3, 23]));
    }

    /// A machine that cannot be is refused, not renumbered or run at full speed (issue 49).
    #[test]
    fn impossible_machines_are_refused() {
        let cpu = |id: usize, core: usize, node: usize, capacity: u32| {
            serde_json::json!({"id": id, "core": core, "cluster": null, "llc": 0,
                "node": node, "package": 0, "capacity": capacity})
        };
        let doc = |cpus: Vec<serde_json::Value>, d: serde_json::Value| {
            serde_json::json!({"distances": d, "cpu": cpus}).to_string()
        };
        let err = |text: String| Topology::from_json(&text).unwrap_err().to_string();
        // Node 3 in a one-node matrix: not node 0.
        let e = err(doc(
            vec![cpu(0, 0, 3, 1024), cpu(1, 1, 3, 1024)],
            serde_json::json!([[10]]),
        ));
        assert!(e.contains("row for node 3"), "{e}");
        // SMT siblings on two nodes (one LLC over both).
        let e = err(doc(
            vec![cpu(0, 0, 0, 1024), cpu(1, 0, 1, 1024)],
            serde_json::json!([[10, 20], [20, 10]]),
        ));
        assert!(e.contains("spans more than one NUMA node"), "{e}");
        // Capacity 0.
        let e = err(doc(
            vec![cpu(0, 0, 0, 0), cpu(1, 1, 0, 1024)],
            serde_json::json!([[10]]),
        ));
        assert!(e.contains("CPU 0 has capacity 0"), "{e}");
        assert!(
            Topology::from_json(&doc(
                vec![cpu(0, 0, 0, 512), cpu(1, 1, 0, 1024)],
                serde_json::json!([[10]])
            ))
            .is_ok()
        );
    }

    #[test]
    fn bad_json_is_located() {
        let e = Topology::from_json_named("{\n \"cpu\": [\n", "x.json")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("x.json:3:"), "{e}");
        let t = crate::presets::preset("desktop-4c8t").unwrap();
        let text = t.to_json().replace("\"cores\": 4", "\"cores\": 5");
        let e = Topology::from_json_named(&text, "y.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("y.json:"), "{e}");
        assert!(
            e.contains("expected \"cores\" to agree with the cpu list (4), found 5"),
            "{e}"
        );
        let text = t.to_json().replace("\"capacity\"", "\"capacty\"");
        let e = Topology::from_json_named(&text, "z.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `capacty`"), "{e}");
        let text = t
            .to_json()
            .replace("[\n    [\n      10\n    ]\n  ]", "[[10, 20]]");
        let e = Topology::from_json_named(&text, "w.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("w.json: bad node distance matrix"), "{e}");
    }
}
