//! The suite as data: its benchmarks and effects (the same list on every run of a machine),
//! the value each compares, and the shape of a result row. Below the runner, the report and
//! the dynamics table, which all read these types.
//!
//! The suite ([`suite`]): pipe ping-pong unpinned, both sides on one CPU and on the two
//! farthest CPUs; hackbench 1/2/4 groups × pipe/socket × process/thread; tbench at 1, CPUs/2
//! and CPUs clients; schbench at two loads. `--quick` keeps one of each kind, short.

use crate::stats::median;
use schedlab_metrics::BenchResult;
use schedlab_topo::CpuId;
use schedlab_trace::dynamics::Dynamics;

/// Headline error a benchmark may have and still count as "within".
pub const HEADLINE_TOL: f64 = 0.15;
/// Effect-ratio error an effect may have and still count as "within".
pub const EFFECT_TOL: f64 = 0.10;

/// One benchmark of the suite: a short id, the spec run on both sides, the metric compared.
#[derive(Clone, Debug, PartialEq)]
pub struct Bench {
    /// Row label, e.g. `hackbench g2 pipe thread`.
    pub id: String,
    /// The workload spec, the same text for the host and the simulator.
    pub spec: String,
    /// The metric compared (lower is better for every metric the suite uses).
    pub metric: &'static str,
}

/// An effect: the ratio of two benchmarks' headlines, real against simulated.
#[derive(Clone, Debug, PartialEq)]
pub struct Effect {
    /// E.g. `pinned one CPU / unpinned`.
    pub name: String,
    /// Numerator benchmark id.
    pub num: String,
    /// Denominator benchmark id.
    pub den: String,
}

/// The suite for a machine whose allowed CPUs are `cpus`, with `far` the CPU farthest from
/// `cpus[0]` (another node or LLC where there is one). The same list on every run of a
/// machine: nothing here depends on a measurement.
pub fn suite(cpus: &[CpuId], far: CpuId, quick: bool) -> (Vec<Bench>, Vec<Effect>) {
    let a = cpus.first().copied().unwrap_or_default();
    let n = cpus.len().max(1);
    let mut b = Vec::new();
    let mut e = Vec::new();
    let bench = |id: &str, spec: String, metric| Bench {
        id: id.into(),
        spec,
        metric,
    };
    let effect = |name: &str, num: &str, den: &str| Effect {
        name: name.into(),
        num: num.into(),
        den: den.into(),
    };
    let loops = if quick { 5_000 } else { 20_000 };
    b.push(bench(
        "pipe unpinned",
        format!("pipe:loops={loops}"),
        "usecs_per_op",
    ));
    b.push(bench(
        "pipe one CPU",
        format!("pipe:loops={loops},cpu_a={a},cpu_b={a}"),
        "usecs_per_op",
    ));
    e.push(effect(
        "pipe: one CPU / unpinned",
        "pipe one CPU",
        "pipe unpinned",
    ));
    if far != a {
        b.push(bench(
            "pipe two CPUs",
            format!("pipe:loops={loops},cpu_a={a},cpu_b={far}"),
            "usecs_per_op",
        ));
        e.push(effect(
            "pipe: two CPUs / unpinned",
            "pipe two CPUs",
            "pipe unpinned",
        ));
    }
    let groups: &[u64] = if quick { &[1, 2] } else { &[1, 2, 4] };
    let ipcs: &[&str] = if quick {
        &["pipe"]
    } else {
        &["pipe", "socket"]
    };
    let hb_loops = if quick { 100 } else { 200 };
    for &ipc in ipcs {
        for mode in ["process", "thread"] {
            for &g in groups {
                b.push(bench(
                    &format!("hackbench g{g} {ipc} {mode}"),
                    format!("hackbench:groups={g},loops={hb_loops},ipc={ipc},mode={mode}"),
                    "time_s",
                ));
            }
            for w in groups.windows(2) {
                e.push(effect(
                    &format!("hackbench {ipc} {mode}: g{} / g{}", w[1], w[0]),
                    &format!("hackbench g{} {ipc} {mode}", w[1]),
                    &format!("hackbench g{} {ipc} {mode}", w[0]),
                ));
            }
        }
        for &g in groups {
            e.push(effect(
                &format!("hackbench g{g} {ipc}: thread / process"),
                &format!("hackbench g{g} {ipc} thread"),
                &format!("hackbench g{g} {ipc} process"),
            ));
        }
    }
    let mut clients = vec![1, n / 2, n];
    clients.retain(|&c| c >= 1);
    clients.dedup();
    if quick {
        clients.truncate(1);
    }
    let dur = if quick { "300ms" } else { "1s" };
    for &c in &clients {
        // tbench's headline is a throughput; the suite compares its inverse (µs per MB) so that
        // every compared metric is lower-better and ratios read the same way.
        b.push(bench(
            &format!("tbench {c} clients"),
            format!("tbench:clients={c},duration={dur}"),
            "us_per_mb",
        ));
    }
    if let (Some(&lo), Some(&hi)) = (clients.first(), clients.last())
        && hi != lo
    {
        e.push(effect(
            &format!("tbench: {hi} / {lo} clients (time per MB)"),
            &format!("tbench {hi} clients"),
            &format!("tbench {lo} clients"),
        ));
    }
    let loads: Vec<usize> = if quick {
        vec![n]
    } else {
        vec![(n / 2).max(1), 2 * n]
    };
    let rt = if quick { "300ms" } else { "1s" };
    for &t in &loads {
        b.push(bench(
            &format!("schbench {t} workers"),
            format!(
                "schbench:message_threads=1,threads={t},sleeptime=1ms,cputime=500us,runtime={rt}"
            ),
            "wakeup_lat_p50_us",
        ));
    }
    if loads.len() == 2 {
        e.push(effect(
            &format!("schbench: {} / {} workers", loads[1], loads[0]),
            &format!("schbench {} workers", loads[1]),
            &format!("schbench {} workers", loads[0]),
        ));
    }
    (b, e)
}

/// The value the suite compares for `metric` in a result.
pub fn value_of(r: &BenchResult, metric: &str) -> Option<f64> {
    if metric == "us_per_mb" {
        return r
            .metric("throughput_mb_s")
            .filter(|m| m.value > 0.0)
            .map(|m| 1e6 / m.value);
    }
    r.metric(metric).map(|m| m.value)
}

/// One benchmark's outcome on one side.
#[derive(Clone, Debug)]
pub struct Side {
    /// The values of each run.
    pub values: Vec<f64>,
    /// Whether the stability rule was met.
    pub stable: bool,
    /// The dynamics of each traced run ([`super::dynamics`]): one per captured real run, the first
    /// seed's on the simulated side.
    pub dynamics: Vec<Dynamics>,
}

impl Side {
    /// The median of the runs.
    pub fn median(&self) -> f64 {
        median(&self.values)
    }
}

/// One row of the result: a benchmark, both sides.
#[derive(Clone, Debug)]
pub struct Row {
    /// The benchmark.
    pub bench: Bench,
    /// Real.
    pub real: Side,
    /// Simulated.
    pub sim: Side,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suite_covers_the_listed_benchmarks_and_effects_name_real_rows() {
        let (b, e) = suite(&[CpuId::new(0), CpuId::new(1)], CpuId::new(1), false);
        let ids: Vec<&str> = b.iter().map(|x| x.id.as_str()).collect();
        for want in [
            "pipe unpinned",
            "pipe one CPU",
            "pipe two CPUs",
            "hackbench g4 socket thread",
            "hackbench g1 pipe process",
            "tbench 1 clients",
            "tbench 2 clients",
            "schbench 1 workers",
            "schbench 4 workers",
        ] {
            assert!(ids.contains(&want), "{want} missing from {ids:?}");
        }
        assert_eq!(
            b.iter().filter(|x| x.id.starts_with("hackbench")).count(),
            12
        );
        for x in &e {
            assert!(
                ids.contains(&x.num.as_str()) && ids.contains(&x.den.as_str()),
                "{x:?}"
            );
        }
        assert!(b[1].spec.contains("cpu_a=0,cpu_b=0") && b[2].spec.contains("cpu_a=0,cpu_b=1"));
        // One CPU: no two-CPU pin, and the quick form is a strict subset of kinds.
        let (b1, _) = suite(&[CpuId::new(0)], CpuId::new(0), true);
        assert!(!b1.iter().any(|x| x.id == "pipe two CPUs"));
    }

    #[test]
    fn the_quick_suite_on_two_cpus_is_exactly_nine_benchmarks_and_six_effects() {
        let (b, e) = suite(&[CpuId::new(0), CpuId::new(1)], CpuId::new(1), true);
        let ids: Vec<&str> = b.iter().map(|x| x.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "pipe unpinned",
                "pipe one CPU",
                "pipe two CPUs",
                "hackbench g1 pipe process",
                "hackbench g2 pipe process",
                "hackbench g1 pipe thread",
                "hackbench g2 pipe thread",
                "tbench 1 clients",
                "schbench 2 workers",
            ]
        );
        assert_eq!(b[0].spec, "pipe:loops=5000");
        assert_eq!(
            b[3].spec,
            "hackbench:groups=1,loops=100,ipc=pipe,mode=process"
        );
        assert_eq!(b[7].spec, "tbench:clients=1,duration=300ms");
        assert_eq!(b[7].metric, "us_per_mb");
        let names: Vec<&str> = e.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "pipe: one CPU / unpinned",
                "pipe: two CPUs / unpinned",
                "hackbench pipe process: g2 / g1",
                "hackbench pipe thread: g2 / g1",
                "hackbench g1 pipe: thread / process",
                "hackbench g2 pipe: thread / process",
            ]
        );
    }

    #[test]
    fn throughput_is_compared_as_time_per_megabyte() {
        let result = |name: &str, value: f64| BenchResult {
            workload: "tbench".into(),
            params: Default::default(),
            metrics: vec![schedlab_metrics::Metric {
                name: name.into(),
                value,
                unit: String::new(),
                better: schedlab_metrics::Better::Higher,
            }],
            native: String::new(),
        };
        // 2 MB/s is 500 000 µs per MB.
        assert_eq!(
            value_of(&result("throughput_mb_s", 2.0), "us_per_mb"),
            Some(500_000.0)
        );
        // No throughput at all has no time per MB.
        assert_eq!(value_of(&result("throughput_mb_s", 0.0), "us_per_mb"), None);
        assert_eq!(value_of(&result("time_s", 1.5), "time_s"), Some(1.5));
        assert_eq!(value_of(&result("time_s", 1.5), "usecs_per_op"), None);
    }
}
