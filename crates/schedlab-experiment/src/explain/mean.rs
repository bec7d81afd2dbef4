//! The mean of a (point, variant)'s counters over its repetitions, the one number per counter
//! every part of the explanation reads (its own file so that those parts need not name the
//! explanation itself).

use super::counters::ExplainCounters;
use std::collections::BTreeMap;

/// Mean counters of one (point, variant) over its repetitions, flattened by name
/// (`busy_ns`, `cost.refetch`, `idle_exit.C1`, `count.ttwu_count`, ...).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mean(BTreeMap<String, f64>);

impl Mean {
    /// The mean of the runs' counters.
    pub fn of(runs: &[&ExplainCounters]) -> Mean {
        let mut m: BTreeMap<String, f64> = BTreeMap::new();
        let n = runs.len().max(1) as f64;
        for r in runs {
            let mut add = |k: String, v: u64| *m.entry(k).or_default() += v as f64 / n;
            add("nr_cpus".into(), r.nr_cpus);
            add("elapsed_ns".into(), r.elapsed_ns);
            add("busy_ns".into(), r.busy_ns);
            add("idle_ns".into(), r.idle_ns);
            add("idle_while_waiting_ns".into(), r.idle_while_waiting_ns);
            add("run_delay_ns".into(), r.run_delay_ns);
            for (k, v) in &r.costs {
                add(format!("cost.{k}"), *v);
            }
            for (k, v) in &r.idle_exit {
                add(format!("idle_exit.{k}"), *v);
            }
            for (k, v) in &r.counts {
                add(format!("count.{k}"), *v);
            }
        }
        Mean(m)
    }

    /// The value of `key` (0 when absent).
    pub fn get(&self, key: &str) -> f64 {
        self.0.get(key).copied().unwrap_or(0.0)
    }

    /// The entries under `prefix`, the prefix removed.
    pub fn with_prefix<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a str, f64)> {
        self.0
            .iter()
            .filter_map(move |(k, v)| k.strip_prefix(prefix).map(|s| (s, *v)))
    }
}
