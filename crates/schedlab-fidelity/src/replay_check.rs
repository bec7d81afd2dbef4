//! `replay check` as a library: a workload derived from a real trace
//! (`schedlab_workloads::replay`) is replayed in simulation, and the two traces are compared by
//! the same analysis: the workload's span, its CPU time, the trace counters, and the CPU time
//! of its busiest tasks. The CLI derives, simulates ([`crate::host_check::sim_trace_on`]) and
//! prints; the comparison and its text are here.

use crate::host_check::{counter_rows, err_pct};
use schedlab_trace::Trace;
use schedlab_trace::analysis::{TraceCounters, counters};
use schedlab_workloads::replay::{self, DerivedTask};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Tasks listed by CPU time; the others are counted.
const BUSIEST: usize = 12;

/// The real trace against its replay.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayCheck {
    /// The whole workload: (row name, real, replayed); times in ms, counters as counted.
    pub table: Vec<(&'static str, f64, f64)>,
    /// The busiest tasks by real CPU time (at most twelve): (name, real ms, replayed ms).
    pub busiest: Vec<(String, f64, f64)>,
    /// How many tasks were left out of `busiest`.
    pub more: usize,
}

/// Compares the derived `tasks` in the `real` trace (restricted to them, or the whole trace)
/// with their replay in `sim`: a real task is found by pid, its replayed twin by name.
pub fn compare(tasks: &[DerivedTask], real: &Trace, sim: &Trace) -> ReplayCheck {
    let rc = counters(real);
    let sc = counters(sim);
    let real_cpu = replay::cpu_by_pid(real);
    let sim_cpu_pid = replay::cpu_by_pid(sim);
    let sim_cpu: BTreeMap<String, u64> = sim
        .threads
        .iter()
        .map(|t| {
            (
                t.comm.clone(),
                sim_cpu_pid.get(&t.pid).copied().unwrap_or(0),
            )
        })
        .collect();
    let real_total: u64 = tasks
        .iter()
        .map(|t| real_cpu.get(&t.pid).copied().unwrap_or(0))
        .sum();
    let sim_total: u64 = tasks
        .iter()
        .map(|t| sim_cpu.get(&t.name).copied().unwrap_or(0))
        .sum();
    // The workload's own span on both sides: first to last event of its tasks.
    let span_ms = |c: &TraceCounters| c.last_ts_ns.saturating_sub(c.first_ts_ns) as f64 / 1e6;
    let rows = counter_rows;
    let mut table = vec![
        ("total time [ms]", span_ms(&rc), span_ms(&sc)),
        (
            "CPU time, all tasks [ms]",
            real_total as f64 / 1e6,
            sim_total as f64 / 1e6,
        ),
    ];
    for ((name, r), (_, s)) in rows(&rc).into_iter().zip(rows(&sc)) {
        table.push((name, r, s));
    }
    let mut busiest: Vec<_> = tasks.iter().collect();
    busiest.sort_by_key(|t| std::cmp::Reverse(real_cpu.get(&t.pid).copied().unwrap_or(0)));
    let busiest = busiest
        .iter()
        .take(BUSIEST)
        .map(|t| {
            let r = real_cpu.get(&t.pid).copied().unwrap_or(0) as f64 / 1e6;
            let s = sim_cpu.get(&t.name).copied().unwrap_or(0) as f64 / 1e6;
            (t.name.clone(), r, s)
        })
        .collect();
    ReplayCheck {
        table,
        busiest,
        more: tasks.len().saturating_sub(BUSIEST),
    }
}

impl ReplayCheck {
    /// The two tables `replay check` prints after its header line.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "\n{:<28} {:>14} {:>14} {:>9}",
            "metric", "real", "replayed", "error"
        );
        for (name, r, s) in &self.table {
            let _ = writeln!(out, "{name:<28} {r:>14.2} {s:>14.2} {:>9}", err_pct(*r, *s));
        }
        let _ = writeln!(
            out,
            "\n{:<28} {:>14} {:>14} {:>9}",
            "CPU time per task [ms]", "real", "replayed", "error"
        );
        for (name, r, s) in &self.busiest {
            let _ = writeln!(out, "{name:<28} {r:>14.3} {s:>14.3} {:>9}", err_pct(*r, *s));
        }
        if self.more > 0 {
            let _ = writeln!(out, "({} more tasks)", self.more);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_give_each_row_its_error_and_count_the_tasks_left_out() {
        let check = ReplayCheck {
            table: vec![("total time [ms]", 10.0, 12.5), ("migrations", 0.0, 3.0)],
            busiest: vec![("sender-7".into(), 1.5, 1.2)],
            more: 2,
        };
        assert_eq!(
            check.render(),
            "\nmetric                                 real       replayed     error\n\
             total time [ms]                       10.00          12.50    +25.0%\n\
             migrations                             0.00           3.00         -\n\
             \n\
             CPU time per task [ms]                 real       replayed     error\n\
             sender-7                              1.500          1.200    -20.0%\n\
             (2 more tasks)\n"
        );
        let none_left = ReplayCheck { more: 0, ..check };
        assert!(!none_left.render().contains("more tasks"));
    }

    #[test]
    fn empty_traces_compare_as_zeros() {
        let task = DerivedTask {
            pid: 7,
            name: "sender-7".into(),
            cpu_ns: 0,
        };
        let c = compare(&[task], &Trace::default(), &Trace::default());
        assert_eq!(c.table.len(), 2 + 9);
        assert_eq!(c.table[0], ("total time [ms]", 0.0, 0.0));
        assert_eq!(c.table[1], ("CPU time, all tasks [ms]", 0.0, 0.0));
        assert_eq!(c.table[2], ("context switches", 0.0, 0.0));
        assert_eq!(c.busiest, vec![("sender-7".to_string(), 0.0, 0.0)]);
        assert_eq!(c.more, 0);
    }
}
