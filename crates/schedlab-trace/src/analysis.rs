//! schedstat-shaped counters computed from a [`Trace`], identical for simulated
//! and host traces so the two can be compared line by line.
//!
//! Definitions (chosen to match what `/proc/schedstat` and `/proc/PID/status`
//! count, as far as a trace can tell):
//!
//! * **context switches**: every `sched_switch`. Split by the task switched
//!   out: *voluntary* when it went to sleep (`S`, `D`), *involuntary* when it
//!   was still runnable (`R`, preempted), *exit* when it died, and *from idle*
//!   when the idle task (pid 0) was switched out (not a task switch at all).
//! * **wakeups**: `sched_waking` events; *local* when the target CPU is the
//!   waker's CPU, *remote* otherwise. `sched_wakeup` / `sched_wakeup_new` are
//!   counted separately.
//! * **migrations**: `sched_migrate_task` events. A migration of a task
//!   between its `sched_waking`/`sched_wakeup_new` and its next `sched_wakeup`
//!   or switch-in is a *wake migration* (the kernel emits it from the wakeup
//!   path); any other is a *balance migration* (load balancer, affinity
//!   change, NUMA). Emitters must therefore put a wake-time `MigrateTask`
//!   after the `Waking` and before the `Wakeup`.
//! * **busy / idle time** per CPU: between the trace's first and last
//!   timestamp, from switches; a CPU is busy while a task other than pid 0 runs
//!   on it. Before a CPU's first switch, its `prev_pid` tells what was
//!   running since the start. CPUs with no switch at all are *unobserved*
//!   (their time is unknown and reported as 0 busy, 0 idle).
//! * **wakeup latency**: nanoseconds from the first `sched_waking` /
//!   `sched_wakeup` / `sched_wakeup_new` of a task to its next switch-in. A wake
//!   of a task that is switched out before being switched in (it was woken
//!   while still running) is dropped.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::{PrevState, Trace, TraceEvent};

/// Busy and idle time of one CPU.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PerCpuTime {
    /// Nanoseconds a non-idle task ran.
    pub busy_ns: u64,
    /// Nanoseconds the idle task ran.
    pub idle_ns: u64,
    /// Context switches on this CPU.
    pub switches: u64,
    /// False when the CPU had no switch, so its busy/idle split is unknown.
    pub observed: bool,
}

/// Percentiles of the wakeup latencies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LatencySummary {
    /// Number of samples.
    pub count: usize,
    /// Median (nearest rank).
    pub p50_ns: u64,
    /// 90th percentile.
    pub p90_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// Largest sample.
    pub max_ns: u64,
}

/// Counters of one trace; see the module docs for exact definitions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceCounters {
    /// CPUs in the trace.
    pub nr_cpus: u32,
    /// Earliest event timestamp (0 for an empty trace).
    pub first_ts_ns: u64,
    /// Latest event timestamp.
    pub last_ts_ns: u64,
    /// All `sched_switch` events.
    pub context_switches: u64,
    /// Switches where the task went to sleep (S or D).
    pub voluntary_switches: u64,
    /// Switches where the task was preempted (R).
    pub involuntary_switches: u64,
    /// Switches where the task had exited (X).
    pub exit_switches: u64,
    /// Switches away from the idle task.
    pub switches_from_idle: u64,
    /// `sched_waking` events.
    pub wakeups: u64,
    /// Wakeups targeting the waker's own CPU.
    pub wakeups_local: u64,
    /// Wakeups targeting another CPU.
    pub wakeups_remote: u64,
    /// `sched_wakeup` events.
    pub wakeup_events: u64,
    /// `sched_wakeup_new` events.
    pub wakeup_new: u64,
    /// `sched_migrate_task` events.
    pub migrations: u64,
    /// Migrations done on the wakeup path.
    pub wake_migrations: u64,
    /// Migrations done otherwise (load balancing).
    pub balance_migrations: u64,
    /// schedlab placement annotations.
    pub placements: u64,
    /// Placements whose target differs from the wakee's previous CPU.
    pub placements_moved: u64,
    /// `sched_process_fork` events.
    pub forks: u64,
    /// `sched_process_exit` events.
    pub exits: u64,
    /// Busy/idle time by CPU id.
    pub per_cpu: Vec<PerCpuTime>,
    /// Wakeup-to-run latencies in nanoseconds, in the order the tasks ran.
    pub wakeup_latencies_ns: Vec<u64>,
}

/// Computes [`TraceCounters`] for `trace` (events are visited in stable
/// timestamp order; the trace need not be sorted).
pub fn counters(trace: &Trace) -> TraceCounters {
    let nr_cpus = trace.effective_nr_cpus();
    let order = trace.sorted_indices();
    let first = order.first().map_or(0, |&i| trace.events[i].ts_ns());
    let last = order.last().map_or(0, |&i| trace.events[i].ts_ns());
    let mut c = TraceCounters {
        nr_cpus,
        first_ts_ns: first,
        last_ts_ns: last,
        per_cpu: vec![PerCpuTime::default(); nr_cpus as usize],
        ..TraceCounters::default()
    };
    // Per CPU: time of the last switch and the task running since.
    let mut cpu_state: Vec<Option<(u64, u32)>> = vec![None; nr_cpus as usize];
    let mut wake_pending: BTreeSet<u32> = BTreeSet::new();
    let mut wake_ts: BTreeMap<u32, u64> = BTreeMap::new();

    for &i in &order {
        match &trace.events[i] {
            TraceEvent::Switch {
                ts_ns,
                cpu,
                prev_pid,
                prev_state,
                next_pid,
                ..
            } => {
                c.context_switches += 1;
                if *prev_pid == 0 {
                    c.switches_from_idle += 1;
                } else {
                    match prev_state {
                        PrevState::Sleeping | PrevState::Uninterruptible => {
                            c.voluntary_switches += 1
                        }
                        PrevState::Runnable => c.involuntary_switches += 1,
                        PrevState::Dead => c.exit_switches += 1,
                    }
                }
                let idx = *cpu as usize;
                let since = cpu_state[idx].map_or(first, |(t, _)| t);
                let span = ts_ns.saturating_sub(since);
                let pc = &mut c.per_cpu[idx];
                pc.observed = true;
                pc.switches += 1;
                if *prev_pid == 0 {
                    pc.idle_ns += span;
                } else {
                    pc.busy_ns += span;
                }
                cpu_state[idx] = Some((*ts_ns, *next_pid));
                if *prev_pid != 0 {
                    wake_ts.remove(prev_pid);
                }
                if *next_pid != 0 {
                    wake_pending.remove(next_pid);
                    if let Some(t0) = wake_ts.remove(next_pid) {
                        c.wakeup_latencies_ns.push(ts_ns.saturating_sub(t0));
                    }
                }
            }
            TraceEvent::Waking {
                ts_ns,
                cpu,
                pid,
                target_cpu,
                ..
            } => {
                c.wakeups += 1;
                if cpu == target_cpu {
                    c.wakeups_local += 1;
                } else {
                    c.wakeups_remote += 1;
                }
                wake_pending.insert(*pid);
                wake_ts.entry(*pid).or_insert(*ts_ns);
            }
            TraceEvent::Wakeup { ts_ns, pid, .. } => {
                c.wakeup_events += 1;
                wake_pending.remove(pid);
                wake_ts.entry(*pid).or_insert(*ts_ns);
            }
            TraceEvent::WakeupNew { ts_ns, pid, .. } => {
                c.wakeup_new += 1;
                wake_pending.insert(*pid);
                wake_ts.entry(*pid).or_insert(*ts_ns);
            }
            TraceEvent::MigrateTask { pid, .. } => {
                c.migrations += 1;
                if wake_pending.contains(pid) {
                    c.wake_migrations += 1;
                } else {
                    c.balance_migrations += 1;
                }
            }
            TraceEvent::ProcessFork { .. } => c.forks += 1,
            TraceEvent::ProcessExit { .. } => c.exits += 1,
            TraceEvent::Placement {
                prev_cpu,
                target_cpu,
                ..
            } => {
                c.placements += 1;
                if prev_cpu != target_cpu {
                    c.placements_moved += 1;
                }
            }
        }
    }
    for (idx, st) in cpu_state.iter().enumerate() {
        if let Some((t, running)) = st {
            let span = last.saturating_sub(*t);
            if *running == 0 {
                c.per_cpu[idx].idle_ns += span;
            } else {
                c.per_cpu[idx].busy_ns += span;
            }
        }
    }
    c
}

/// Nearest-rank percentile of `sorted` (ascending); `p` in percent, clamped
/// to 0..=100 (0 gives the minimum). `None` when empty.
pub fn percentile(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 100.0) };
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

impl TraceCounters {
    /// Time between the first and the last event.
    pub fn duration_ns(&self) -> u64 {
        self.last_ts_ns.saturating_sub(self.first_ts_ns)
    }

    fn sorted_latencies(&self) -> Vec<u64> {
        let mut v = self.wakeup_latencies_ns.clone();
        v.sort_unstable();
        v
    }

    /// Wakeup latency at percentile `p` (nearest rank), `None` without samples.
    pub fn latency_percentile(&self, p: f64) -> Option<u64> {
        percentile(&self.sorted_latencies(), p)
    }

    /// Median wakeup latency.
    pub fn latency_p50(&self) -> Option<u64> {
        self.latency_percentile(50.0)
    }

    /// 90th-percentile wakeup latency.
    pub fn latency_p90(&self) -> Option<u64> {
        self.latency_percentile(90.0)
    }

    /// 99th-percentile wakeup latency.
    pub fn latency_p99(&self) -> Option<u64> {
        self.latency_percentile(99.0)
    }

    /// Largest wakeup latency.
    pub fn latency_max(&self) -> Option<u64> {
        self.wakeup_latencies_ns.iter().copied().max()
    }

    /// All latency percentiles at once (one sort), `None` without samples.
    pub fn latency_summary(&self) -> Option<LatencySummary> {
        let v = self.sorted_latencies();
        Some(LatencySummary {
            count: v.len(),
            p50_ns: percentile(&v, 50.0)?,
            p90_ns: percentile(&v, 90.0)?,
            p99_ns: percentile(&v, 99.0)?,
            max_ns: *v.last()?,
        })
    }

    /// Busy time summed over observed CPUs.
    pub fn busy_ns_total(&self) -> u64 {
        self.per_cpu.iter().map(|c| c.busy_ns).sum()
    }

    /// A human-readable multi-line summary.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "trace: {} CPUs, {:.6} ms ({} .. {} ns)",
            self.nr_cpus,
            self.duration_ns() as f64 / 1e6,
            self.first_ts_ns,
            self.last_ts_ns
        );
        let _ = writeln!(
            s,
            "context switches: {} (voluntary {}, involuntary {}, exit {}, from idle {})",
            self.context_switches,
            self.voluntary_switches,
            self.involuntary_switches,
            self.exit_switches,
            self.switches_from_idle
        );
        let _ = writeln!(
            s,
            "wakeups: {} (local {}, remote {}); sched_wakeup {}, sched_wakeup_new {}",
            self.wakeups,
            self.wakeups_local,
            self.wakeups_remote,
            self.wakeup_events,
            self.wakeup_new
        );
        let _ = writeln!(
            s,
            "migrations: {} (at wakeup {}, by balancer {})",
            self.migrations, self.wake_migrations, self.balance_migrations
        );
        let _ = writeln!(
            s,
            "placements: {} (moved off prev_cpu {})",
            self.placements, self.placements_moved
        );
        let _ = writeln!(s, "forks: {}, exits: {}", self.forks, self.exits);
        let _ = writeln!(s, "cpu      busy_ns      idle_ns   util  switches");
        for (cpu, pc) in self.per_cpu.iter().enumerate() {
            if pc.observed {
                let total = pc.busy_ns + pc.idle_ns;
                let util = if total == 0 {
                    0.0
                } else {
                    100.0 * pc.busy_ns as f64 / total as f64
                };
                let _ = writeln!(
                    s,
                    "{cpu:>3} {:>12} {:>12} {:>5.1}% {:>9}",
                    pc.busy_ns, pc.idle_ns, util, pc.switches
                );
            } else {
                let _ = writeln!(s, "{cpu:>3} {:>12} {:>12} {:>6} {:>9}", "-", "-", "-", 0);
            }
        }
        match self.latency_summary() {
            Some(l) => {
                let _ = writeln!(
                    s,
                    "wakeup latency: n={} p50={} ns p90={} ns p99={} ns max={} ns",
                    l.count, l.p50_ns, l.p90_ns, l.p99_ns, l.max_ns
                );
            }
            None => s.push_str("wakeup latency: no samples\n"),
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=10).collect();
        assert_eq!(percentile(&v, 50.0), Some(5));
        assert_eq!(percentile(&v, 90.0), Some(9));
        assert_eq!(percentile(&v, 99.0), Some(10));
        assert_eq!(percentile(&v, 100.0), Some(10));
        assert_eq!(percentile(&v, 0.0), Some(1));
        assert_eq!(percentile(&v, f64::NAN), Some(1));
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(percentile(&[7], 99.0), Some(7));
    }

    #[test]
    fn empty_trace_is_all_zero() {
        let c = counters(&Trace::new(2));
        assert_eq!(c.context_switches, 0);
        assert_eq!(c.per_cpu.len(), 2);
        assert!(!c.per_cpu[0].observed);
        assert_eq!(c.latency_summary(), None);
        assert!(c.to_text().contains("no samples"));
    }
}
