//! The suite's dynamics table: what follows each wakeup, real against simulated, counter by
//! counter. Both sides are read by the same code (`schedlab_trace::dynamics`) on the same
//! tasks: those whose name appears in both traces (the benchmark's workers; the simulated
//! main task, the real harness process and kernel threads have no twin and are left out).
//!
//! A cell is *within* when the simulated value is within [`DYNAMICS_TOL`] of the median of the
//! real runs; when the real runs themselves spread by more than that (max - min over the
//! median), it is within when the simulated value lies inside the real runs' range. A cell
//! with no value on a side (no messages known, no samples) is not counted. Each cell also has
//! the noise-aware verdict of [`super::noise`]: the captured runs' range widened by
//! [`DYNAMICS_TOL`].

use super::noise::yes_no;
use super::rows::Row;
use crate::stats::{median, rel_err};
use schedlab_trace::Trace;
use schedlab_trace::dynamics::Dynamics;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// Relative error a dynamics counter may have and still count as "within".
pub const DYNAMICS_TOL: f64 = 0.25;

/// The task names of `t` other than the idle task and kernel threads of a simulated machine
/// (`ksoftirqd/N`).
pub fn comms(t: &Trace) -> BTreeSet<String> {
    t.threads
        .iter()
        .filter(|th| th.pid != 0 && !th.comm.starts_with("ksoftirqd/"))
        .map(|th| th.comm.clone())
        .collect()
}

/// The messages a benchmark spec passes and the task names that read and write them:
/// hackbench's every sender writes `loops` messages to each of its group's `fds` receivers; a
/// pipe ping-pong's two `sched-pipe` tasks write `loops` each. `None` for the others.
pub fn messages(spec: &str) -> Option<(u64, &'static str, &'static str)> {
    let (name, rest) = schedlab_vocab::spec::split_spec(spec).ok()?;
    let params = schedlab_vocab::spec::parse_params(name, rest.unwrap_or("")).ok()?;
    let get = |k: &str, default: u64| {
        params
            .iter()
            .find(|(p, _)| p == k)
            .map_or(Some(default), |(_, v)| v.parse().ok())
    };
    match name {
        "hackbench" => {
            let (g, l, f) = (get("groups", 10)?, get("loops", 100)?, get("fds", 20)?);
            Some((g * f * f * l, "receiver", "sender"))
        }
        "pipe" => Some((2 * get("loops", 1_000_000)?, "sched-pipe", "sched-pipe")),
        _ => None,
    }
}

/// The counters of the table, in order: name, unit, and the value from one run's dynamics
/// (`msgs` the benchmark's messages, reader and writer).
type Counter = (
    &'static str,
    &'static str,
    fn(&Dynamics, Option<(u64, &str, &str)>) -> f64,
);

fn us(v: Option<u64>) -> f64 {
    v.map_or(f64::NAN, |x| x as f64 / 1e3)
}

fn per(num: u64, den: u64) -> f64 {
    if den == 0 {
        f64::NAN
    } else {
        num as f64 / den as f64
    }
}

const COUNTERS: &[Counter] = &[
    ("voluntary switches", "", |d, _| d.voluntary_switches as f64),
    ("involuntary switches", "", |d, _| {
        d.involuntary_switches as f64
    }),
    ("wakeups", "", |d, _| d.wakeups as f64),
    ("wakeup preemptions", "", |d, _| d.wakeup_preemptions as f64),
    ("messages read per reader wakeup", "", |d, m| {
        m.map_or(f64::NAN, |(n, r, _)| per(n, d.role(r).wakeups))
    }),
    ("messages written per writer slice", "", |d, m| {
        m.map_or(f64::NAN, |(n, _, w)| per(n, d.role(w).slices))
    }),
    ("run length p50", "µs", |d, _| {
        us(d.run_length_percentile(50.0))
    }),
    ("run length p90", "µs", |d, _| {
        us(d.run_length_percentile(90.0))
    }),
    ("wakeup latency p50", "µs", |d, _| {
        us(d.wakeup_latency_percentile(50.0))
    }),
    ("wakeup latency p99", "µs", |d, _| {
        us(d.wakeup_latency_percentile(99.0))
    }),
    ("migrations", "", |d, _| d.migrations as f64),
    ("local wakeups", "%", |d, _| {
        100.0 * per(d.wakeups_local, d.wakeups_local + d.wakeups_remote)
    }),
    ("idle", "% CPU", |d, _| {
        d.idle_share().map_or(f64::NAN, |s| 100.0 * s)
    }),
    ("idle beside a waiting task", "% CPU", |d, _| {
        d.idle_beside_waiting_share()
            .map_or(f64::NAN, |s| 100.0 * s)
    }),
];

/// One cell: the real runs' values, the simulated value, and whether it counts as within
/// (`None`: not counted).
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// Counter name (with its unit).
    pub counter: String,
    /// The real runs' values (finite ones).
    pub real: Vec<f64>,
    /// The simulated value.
    pub sim: f64,
    /// Within the tolerance (see the module docs); `None` when a side has no value.
    pub within: Option<bool>,
    /// Inside the real range widened by the tolerance ([`super::noise::matched`]).
    pub matched: Option<bool>,
}

/// The rule of the module docs.
pub fn within(real: &[f64], sim: f64) -> Option<bool> {
    if real.is_empty() || !sim.is_finite() {
        return None;
    }
    let med = median(real);
    let (lo, hi) = real
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
            (l.min(v), h.max(v))
        });
    if med == 0.0 {
        return Some(sim == 0.0 || (lo..=hi).contains(&sim));
    }
    if (hi - lo) / med.abs() > DYNAMICS_TOL && (lo..=hi).contains(&sim) {
        return Some(true);
    }
    Some(((sim - med) / med).abs() <= DYNAMICS_TOL)
}

/// The cells of one benchmark row (empty when a side has no dynamics).
pub fn cells(r: &Row) -> Vec<Cell> {
    let Some(sim) = r.sim.dynamics.first() else {
        return Vec::new();
    };
    if r.real.dynamics.is_empty() {
        return Vec::new();
    }
    let msgs = messages(&r.bench.spec);
    COUNTERS
        .iter()
        .map(|(name, unit, f)| {
            let real: Vec<f64> = r
                .real
                .dynamics
                .iter()
                .map(|d| f(d, msgs))
                .filter(|v| v.is_finite())
                .collect();
            let sim = f(sim, msgs);
            Cell {
                counter: if unit.is_empty() {
                    (*name).to_string()
                } else {
                    format!("{name} ({unit})")
                },
                within: within(&real, sim),
                matched: super::noise::matched(&real, sim, DYNAMICS_TOL),
                real,
                sim,
            }
        })
        .collect()
}

/// The summary line: `host dynamics: N of M counters within 25 % (noise-aware: K of M)`, the
/// strict count first as it always was.
pub fn summary_line(rows: &[Row]) -> String {
    let all: Vec<Cell> = rows.iter().flat_map(cells).collect();
    let m = all.iter().filter(|c| c.within.is_some()).count();
    let n = all.iter().filter(|c| c.within == Some(true)).count();
    let k = all.iter().filter(|c| c.matched == Some(true)).count();
    let m_k = all.iter().filter(|c| c.matched.is_some()).count();
    format!(
        "host dynamics: {n} of {m} counters within {:.0} % (noise-aware: {k} of {m_k})",
        DYNAMICS_TOL * 100.0
    )
}

fn num(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// The table (Markdown) and the summary line.
pub fn render(rows: &[Row]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\nDynamics (real runs' median and range / simulated; per run, from traces, the tasks both sides name alike):\n\n| benchmark | counter | real | real range | simulated | error | within | noise-aware |\n|---|---|---:|---:|---:|---:|---|---|"
    );
    for r in rows {
        for c in cells(r) {
            let med = if c.real.is_empty() {
                f64::NAN
            } else {
                median(&c.real)
            };
            let range = if c.real.len() > 1 {
                let lo = c.real.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = c.real.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                format!("{}..{}", num(lo), num(hi))
            } else {
                "-".into()
            };
            let err = rel_err(med, c.sim);
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                r.bench.id,
                c.counter,
                num(med),
                range,
                num(c.sim),
                if err.is_finite() {
                    format!("{:+.0} %", err * 100.0)
                } else {
                    "-".into()
                },
                yes_no(c.within),
                yes_no(c.matched)
            );
        }
    }
    let _ = writeln!(s, "\n{}", summary_line(rows));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_follow_the_benchmark_programs() {
        assert_eq!(
            messages("hackbench:groups=2,loops=100,ipc=pipe"),
            Some((2 * 20 * 20 * 100, "receiver", "sender"))
        );
        assert_eq!(
            messages("hackbench:groups=1,loops=10,fds=4"),
            Some((160, "receiver", "sender"))
        );
        assert_eq!(
            messages("pipe:loops=5000,cpu_a=0,cpu_b=0"),
            Some((10_000, "sched-pipe", "sched-pipe"))
        );
        assert_eq!(messages("tbench:clients=1"), None);
    }

    #[test]
    fn within_uses_the_range_only_when_the_real_runs_spread() {
        // Tight real runs: the tolerance decides.
        assert_eq!(within(&[100.0, 101.0, 99.0], 124.0), Some(true));
        assert_eq!(within(&[100.0, 101.0, 99.0], 126.0), Some(false));
        // Real runs spread 60 %: inside their range counts, outside the tolerance does not.
        assert_eq!(within(&[70.0, 100.0, 130.0], 128.0), Some(true));
        assert_eq!(within(&[70.0, 100.0, 130.0], 135.0), Some(false));
        assert_eq!(within(&[70.0, 100.0, 130.0], 72.0), Some(true));
        // Zero real: only zero (or inside the range) is within.
        assert_eq!(within(&[0.0], 0.0), Some(true));
        assert_eq!(within(&[0.0], 3.0), Some(false));
        // No value on a side: not counted.
        assert_eq!(within(&[], 1.0), None);
        assert_eq!(within(&[1.0], f64::NAN), None);
    }

    fn dyn_with(voluntary: u64, receiver_wakeups: u64) -> Dynamics {
        let mut d = Dynamics {
            voluntary_switches: voluntary,
            ..Default::default()
        };
        d.roles.insert(
            "receiver".into(),
            schedlab_trace::dynamics::RoleCounts {
                tasks: 20,
                wakeups: receiver_wakeups,
                slices: receiver_wakeups,
            },
        );
        d
    }

    #[test]
    fn cells_read_every_real_run_and_the_summary_counts_only_valued_cells() {
        let side = |d: Vec<Dynamics>| crate::host_suite::rows::Side {
            values: vec![1.0],
            stable: true,
            dynamics: d,
        };
        let row = Row {
            bench: crate::host_suite::rows::Bench {
                id: "hb".into(),
                spec: "hackbench:groups=1,loops=10,fds=2".into(),
                metric: "time_s",
            },
            real: side(vec![dyn_with(100, 20), dyn_with(110, 40)]),
            sim: side(vec![dyn_with(130, 10)]),
        };
        let c = cells(&row);
        let vol = c
            .iter()
            .find(|c| c.counter == "voluntary switches")
            .unwrap();
        assert_eq!(vol.real, vec![100.0, 110.0]);
        // median 105, +23.8 %: within.
        assert_eq!(vol.within, Some(true));
        // 40 messages: 2 and 1 per receiver wakeup real (spread 67 %), 4 simulated: outside.
        let per = c
            .iter()
            .find(|c| c.counter == "messages read per reader wakeup")
            .unwrap();
        assert_eq!((per.real.clone(), per.sim), (vec![2.0, 1.0], 4.0));
        assert_eq!(per.within, Some(false));
        // Latencies have no samples on either side: not counted.
        let lat = c
            .iter()
            .find(|c| c.counter == "wakeup latency p50 (µs)")
            .unwrap();
        assert_eq!(lat.within, None);
        let line = summary_line(std::slice::from_ref(&row));
        let counted = c.iter().filter(|c| c.within.is_some()).count();
        let yes = c.iter().filter(|c| c.within == Some(true)).count();
        let matched = c.iter().filter(|c| c.matched == Some(true)).count();
        assert_eq!(
            line,
            format!(
                "host dynamics: {yes} of {counted} counters within 25 % (noise-aware: {matched} of {counted})"
            )
        );
        // Real 2 and 1 messages per wakeup widened by 25 %: 0.75..2.5; simulated 4 is not in.
        assert_eq!(per.matched, Some(false));
        // Voluntary switches 100..110 widened: 75..137.5 holds 130.
        assert_eq!(vol.matched, Some(true));
        assert!(matched >= yes);
        assert!(counted < c.len() && yes >= 1);
        // No real dynamics (not captured): no cells at all.
        let bare = Row {
            real: side(Vec::new()),
            ..row.clone()
        };
        assert!(cells(&bare).is_empty());
    }
}
