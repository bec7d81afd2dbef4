//! What follows a wakeup, read from a trace: switches by kind, the wakeups and the
//! preemptions they cause, how long tasks run and wakees wait, and how long CPUs stay idle
//! while a task waits on another CPU. The same code reads a simulated trace and a captured
//! one, on the tasks a filter keeps (by task name), so that the two can be held to each other
//! counter by counter (`schedlab host check --suite`).
//!
//! Definitions (a trace of the `sched` events only; "kept" = a task the filter keeps):
//!
//! * **voluntary / involuntary switch**: a kept task switched out asleep (`S`, `D`) / still
//!   runnable (`R`, preempted).
//! * **wakeup**: a `sched_waking` of a kept task. *Local* when the CPU it is then enqueued on
//!   (its `sched_wakeup`) is the waker's CPU, *remote* otherwise (the kernel's
//!   `sched_waking` names the task's old CPU, so the `sched_wakeup` decides).
//! * **wakeup preemption**: an involuntary switch of a kept task on CPU *c* whose next task is a
//!   kept task woken onto *c* since *c*'s previous switch: the wakee took the CPU from the task
//!   it was woken beside (`check_preempt_wakeup` → `resched_curr`, acted on at the next
//!   preemption point). A tick preemption that picks a fresh wakee counts too: a trace cannot
//!   tell the two apart, on either side.
//! * **slice**: a kept task's stretch on a CPU, switch-in to switch-out; its length is a *run
//!   length*. A slice cut by the trace's end is not counted.
//! * **wakeup latency**: from a kept task's first `sched_waking` / `sched_wakeup` to its next
//!   switch-in.
//! * **waiting**: a kept task waits on CPU *c* from its `sched_wakeup(_new)` onto *c*, or from
//!   being switched out runnable on *c*, until it is switched in; a migration moves the wait.
//! * **idle beside waiting**: CPU time of idle CPUs (running pid 0) while at least one kept
//!   task waits on another CPU. A CPU counts from its first switch (before it, what it ran is
//!   unknown), and only if a kept task ran on it at some point: a CPU the benchmark never
//!   used (its affinity excludes it, or only other processes ran there) says nothing about
//!   the scheduler's choices, and a simulated trace, whose unused CPUs never switch, would
//!   not count it either. `observed_cpu_ns` is the CPU time so counted, the denominator of
//!   its share.
//! * **idle**: CPU time of the counted CPUs running pid 0.
//! * **per role** (task name): tasks seen, wakeups, slices.

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::percentile;
use crate::{PrevState, Trace, TraceEvent};

/// Counts of one task name (a role of the benchmark: `sender`, `receiver`, ...).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RoleCounts {
    /// Tasks of this name that had at least one event.
    pub tasks: u64,
    /// Their wakeups (`sched_waking`).
    pub wakeups: u64,
    /// Their slices (switch-ins).
    pub slices: u64,
}

/// The dynamics of the kept tasks of one trace; see the module docs for the definitions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dynamics {
    /// Switches where a kept task went to sleep.
    pub voluntary_switches: u64,
    /// Switches where a kept task was preempted.
    pub involuntary_switches: u64,
    /// Wakeups of kept tasks.
    pub wakeups: u64,
    /// Wakeups enqueued on the waker's CPU.
    pub wakeups_local: u64,
    /// Wakeups enqueued on another CPU.
    pub wakeups_remote: u64,
    /// Involuntary switches to a task just woken onto that CPU.
    pub wakeup_preemptions: u64,
    /// `sched_migrate_task` events of kept tasks.
    pub migrations: u64,
    /// Lengths of the finished slices, ascending.
    pub run_lengths_ns: Vec<u64>,
    /// Wakeup-to-run latencies, ascending.
    pub wakeup_latencies_ns: Vec<u64>,
    /// Idle CPU time while a kept task waited on another CPU.
    pub idle_beside_waiting_ns: u64,
    /// Idle CPU time of the counted CPUs.
    pub idle_ns: u64,
    /// CPU time of the CPUs counted (each from its first switch to the trace's end).
    pub observed_cpu_ns: u64,
    /// Counts by task name.
    pub roles: BTreeMap<String, RoleCounts>,
}

impl Dynamics {
    /// Nearest-rank percentile of the run lengths (ns).
    pub fn run_length_percentile(&self, p: f64) -> Option<u64> {
        percentile(&self.run_lengths_ns, p)
    }
    /// Nearest-rank percentile of the wakeup latencies (ns).
    pub fn wakeup_latency_percentile(&self, p: f64) -> Option<u64> {
        percentile(&self.wakeup_latencies_ns, p)
    }
    /// The share of the counted CPU time that was idle, in [0, 1].
    pub fn idle_share(&self) -> Option<f64> {
        (self.observed_cpu_ns > 0).then(|| self.idle_ns as f64 / self.observed_cpu_ns as f64)
    }
    /// The share of the counted CPU time that was idle beside a waiting task, in [0, 1].
    pub fn idle_beside_waiting_share(&self) -> Option<f64> {
        (self.observed_cpu_ns > 0)
            .then(|| self.idle_beside_waiting_ns as f64 / self.observed_cpu_ns as f64)
    }
    /// The counts of the role `comm` (zero when no task had that name).
    pub fn role(&self, comm: &str) -> RoleCounts {
        self.roles.get(comm).cloned().unwrap_or_default()
    }
}

/// Per-CPU state while walking the events.
#[derive(Clone, Default)]
struct CpuWalk {
    /// Seen switching at least once.
    observed: bool,
    /// The task running since the last switch (0 = idle) and since when.
    running: (u32, u64),
    /// Kept tasks woken onto this CPU since its last switch.
    woken: Vec<u32>,
    /// Kept tasks waiting on this CPU.
    waiting: u32,
    /// A kept task ran here at least once (only such CPUs are counted at the end).
    used: bool,
    /// Idle time beside a waiting task, idle time and time observed, ns.
    beside_ns: u64,
    idle_ns: u64,
    observed_ns: u64,
}

/// The walk's state: CPUs, waits and the first wake time of each task.
struct Walk {
    cpus: Vec<CpuWalk>,
    /// Where each waiting kept task waits.
    waits_on: BTreeMap<u32, u32>,
    total_waiting: u32,
    wake_ts: BTreeMap<u32, u64>,
    /// The waker's CPU of each task between its `sched_waking` and its `sched_wakeup`.
    waker_cpu: BTreeMap<u32, u32>,
}

impl Walk {
    fn cpu(&mut self, cpu: u32) -> &mut CpuWalk {
        let i = cpu as usize;
        if i >= self.cpus.len() {
            self.cpus.resize(i + 1, CpuWalk::default());
        }
        &mut self.cpus[i]
    }

    fn start_wait(&mut self, pid: u32, cpu: u32) {
        self.stop_wait(pid);
        self.waits_on.insert(pid, cpu);
        self.cpu(cpu).waiting += 1;
        self.total_waiting += 1;
    }

    fn stop_wait(&mut self, pid: u32) {
        if let Some(c) = self.waits_on.remove(&pid) {
            self.cpu(c).waiting -= 1;
            self.total_waiting -= 1;
        }
    }

    /// Accrues the `dt` before the next event to each observed CPU: idle beside a waiting
    /// task, idle, observed.
    fn idle_beside(&mut self, dt: u64) {
        let total_waiting = self.total_waiting;
        for c in self.cpus.iter_mut().filter(|c| c.observed) {
            c.observed_ns += dt;
            if c.running.0 == 0 {
                c.idle_ns += dt;
                if total_waiting > c.waiting {
                    c.beside_ns += dt;
                }
            }
        }
    }
}

/// Computes the [`Dynamics`] of the tasks of `trace` whose name `keep` accepts (events are
/// visited in stable timestamp order).
pub fn dynamics(trace: &Trace, keep: impl Fn(&str) -> bool) -> Dynamics {
    let kept: BTreeMap<u32, &str> = trace
        .threads
        .iter()
        .filter(|t| t.pid != 0 && keep(&t.comm))
        .map(|t| (t.pid, t.comm.as_str()))
        .collect();
    let mut d = Dynamics::default();
    let mut seen: BTreeSet<u32> = BTreeSet::new();
    let mut w = Walk {
        cpus: vec![CpuWalk::default(); trace.effective_nr_cpus() as usize],
        waits_on: BTreeMap::new(),
        total_waiting: 0,
        wake_ts: BTreeMap::new(),
        waker_cpu: BTreeMap::new(),
    };
    let mut role = |d: &mut Dynamics, pid: u32| -> Option<String> {
        let comm = kept.get(&pid)?;
        let r = d.roles.entry((*comm).to_string()).or_default();
        if seen.insert(pid) {
            r.tasks += 1;
        }
        Some((*comm).to_string())
    };
    let mut last_ts = None;
    for i in trace.sorted_indices() {
        let ev = &trace.events[i];
        let ts = ev.ts_ns();
        if let Some(t0) = last_ts {
            w.idle_beside(ts.saturating_sub(t0));
        }
        last_ts = Some(ts);
        match ev {
            TraceEvent::Switch {
                cpu,
                prev_pid,
                prev_state,
                next_pid,
                ..
            } => {
                let prev_kept = role(&mut d, *prev_pid).is_some();
                let next_role = role(&mut d, *next_pid);
                let c = w.cpu(*cpu);
                let was_observed = std::mem::replace(&mut c.observed, true);
                c.used |= next_role.is_some();
                let preempted_by_wakee = *prev_state == PrevState::Runnable
                    && prev_kept
                    && next_role.is_some()
                    && c.woken.contains(next_pid);
                let (ran, since) = c.running;
                c.running = (*next_pid, ts);
                c.woken.clear();
                if prev_kept {
                    if was_observed && ran == *prev_pid {
                        d.run_lengths_ns.push(ts.saturating_sub(since));
                    }
                    match prev_state {
                        PrevState::Sleeping | PrevState::Uninterruptible => {
                            d.voluntary_switches += 1
                        }
                        PrevState::Runnable => {
                            d.involuntary_switches += 1;
                            w.start_wait(*prev_pid, *cpu);
                        }
                        PrevState::Dead => {}
                    }
                    w.wake_ts.remove(prev_pid);
                }
                if preempted_by_wakee {
                    d.wakeup_preemptions += 1;
                }
                if let Some(r) = next_role {
                    if let Some(rc) = d.roles.get_mut(&r) {
                        rc.slices += 1;
                    }
                    w.stop_wait(*next_pid);
                    if let Some(t0) = w.wake_ts.remove(next_pid) {
                        d.wakeup_latencies_ns.push(ts.saturating_sub(t0));
                    }
                }
            }
            TraceEvent::Waking { cpu, pid, .. } => {
                if let Some(r) = role(&mut d, *pid) {
                    d.wakeups += 1;
                    if let Some(rc) = d.roles.get_mut(&r) {
                        rc.wakeups += 1;
                    }
                    w.wake_ts.entry(*pid).or_insert(ts);
                    w.waker_cpu.insert(*pid, *cpu);
                }
            }
            TraceEvent::Wakeup {
                pid, target_cpu, ..
            }
            | TraceEvent::WakeupNew {
                pid, target_cpu, ..
            } => {
                if role(&mut d, *pid).is_some() {
                    if let Some(from) = w.waker_cpu.remove(pid) {
                        if from == *target_cpu {
                            d.wakeups_local += 1;
                        } else {
                            d.wakeups_remote += 1;
                        }
                    }
                    w.wake_ts.entry(*pid).or_insert(ts);
                    if w.cpu(*target_cpu).running.0 != *pid {
                        w.start_wait(*pid, *target_cpu);
                        w.cpu(*target_cpu).woken.push(*pid);
                    }
                }
            }
            TraceEvent::MigrateTask { pid, dest_cpu, .. } => {
                if role(&mut d, *pid).is_some() {
                    d.migrations += 1;
                    if w.waits_on.contains_key(pid) {
                        w.start_wait(*pid, *dest_cpu);
                    }
                }
            }
            TraceEvent::ProcessExit { pid, .. } => w.stop_wait(*pid),
            TraceEvent::ProcessFork { .. } | TraceEvent::Placement { .. } => {}
        }
    }
    for c in w.cpus.iter().filter(|c| c.used) {
        d.idle_beside_waiting_ns += c.beside_ns;
        d.idle_ns += c.idle_ns;
        d.observed_cpu_ns += c.observed_ns;
    }
    d.run_lengths_ns.sort_unstable();
    d.wakeup_latencies_ns.sort_unstable();
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ThreadInfo;

    fn sw(ts: u64, cpu: u32, prev: u32, st: PrevState, next: u32) -> TraceEvent {
        TraceEvent::Switch {
            ts_ns: ts,
            cpu,
            prev_pid: prev,
            prev_prio: 120,
            prev_state: st,
            next_pid: next,
            next_prio: 120,
        }
    }
    fn waking(ts: u64, cpu: u32, pid: u32, target: u32) -> TraceEvent {
        TraceEvent::Waking {
            ts_ns: ts,
            cpu,
            pid,
            prio: 120,
            target_cpu: target,
        }
    }
    fn wakeup(ts: u64, cpu: u32, pid: u32, target: u32) -> TraceEvent {
        TraceEvent::Wakeup {
            ts_ns: ts,
            cpu,
            pid,
            prio: 120,
            target_cpu: target,
        }
    }
    fn thread(pid: u32, comm: &str) -> ThreadInfo {
        ThreadInfo {
            pid,
            tgid: pid,
            comm: comm.into(),
        }
    }

    /// Two CPUs. A sender (1) on CPU 0 wakes a receiver (2) onto CPU 0 at 100, which preempts
    /// it at 110; the sender waits on CPU 0 while CPU 1 idles, until the receiver sleeps at
    /// 150. A second receiver (3) is woken remotely onto CPU 1 at 200 and runs at 230. An
    /// unrelated task (9, not kept) preempts the sender on CPU 0 at 300 after a wakeup.
    fn sample() -> Trace {
        use PrevState::*;
        Trace {
            nr_cpus: 2,
            threads: vec![
                thread(1, "sender"),
                thread(2, "receiver"),
                thread(3, "receiver"),
                thread(9, "rustc"),
            ],
            events: vec![
                sw(0, 0, 0, Runnable, 1),
                sw(10, 1, 0, Runnable, 0),
                waking(100, 0, 2, 1),
                wakeup(101, 0, 2, 0),
                sw(110, 0, 1, Runnable, 2),
                sw(150, 0, 2, Sleeping, 1),
                waking(200, 0, 3, 0),
                wakeup(205, 1, 3, 1),
                sw(230, 1, 0, Runnable, 3),
                waking(290, 0, 9, 0),
                wakeup(291, 0, 9, 0),
                sw(300, 0, 1, Runnable, 9),
                sw(400, 1, 3, Sleeping, 0),
            ],
        }
    }

    #[test]
    fn counts_follow_the_definitions() {
        let d = dynamics(&sample(), |c| c == "sender" || c == "receiver");
        assert_eq!(d.wakeups, 2, "the rustc wakeup is not kept");
        assert_eq!((d.wakeups_local, d.wakeups_remote), (1, 1));
        assert_eq!(d.involuntary_switches, 2, "at 110 and at 300");
        assert_eq!(d.voluntary_switches, 2, "receivers at 150 and 400");
        assert_eq!(
            d.wakeup_preemptions, 1,
            "only the receiver's at 110: the rustc that took CPU 0 at 300 is not kept"
        );
        // Slices: sender 0..110, receiver 110..150, sender 150..300, receiver 230..400.
        assert_eq!(d.run_lengths_ns, vec![40, 110, 150, 170]);
        // Latencies: receiver 2 from 100 to 110, receiver 3 from 200 to 230.
        assert_eq!(d.wakeup_latencies_ns, vec![10, 30]);
        assert_eq!(d.role("receiver").tasks, 2);
        assert_eq!(d.role("receiver").wakeups, 2);
        assert_eq!(d.role("receiver").slices, 2);
        assert_eq!(d.role("sender").slices, 2);
        assert_eq!(d.role("rustc"), RoleCounts::default());
    }

    #[test]
    fn idle_beside_waiting_is_idle_time_while_a_task_waits_elsewhere() {
        let d = dynamics(&sample(), |c| c == "sender" || c == "receiver");
        // CPU 1 idles from 10 to 230. Waiting on CPU 0: receiver 2 from 101 to 110, sender 1
        // from 110 to 150 (preempted), sender again from 300 (preempted by rustc) to the end.
        // Receiver 3 waits on CPU 1 itself (205-230), which does not count for CPU 1.
        // So CPU 1 is idle beside a wait over 101..150 = 49 ns; at 300 CPU 1 is busy until 400,
        // when it idles beside the waiting sender: 400..400 = 0.
        assert_eq!(d.idle_beside_waiting_ns, 49);
        // CPU 0 counted from 0, CPU 1 from 10, to 400.
        assert_eq!(d.observed_cpu_ns, 400 + 390);
        // Idle: CPU 1 from 10 to 230; CPU 0 never.
        assert_eq!(d.idle_ns, 220);
        let share = d.idle_beside_waiting_share().unwrap();
        assert!((share - 49.0 / 790.0).abs() < 1e-12);
    }

    /// A CPU that only other processes ran on is not counted: a pinned pair on CPU 0 with
    /// a shell on CPU 1 has CPU 0's idle only.
    #[test]
    fn a_cpu_no_kept_task_ran_on_is_not_counted() {
        use PrevState::*;
        let t = Trace {
            nr_cpus: 2,
            threads: vec![thread(1, "a"), thread(2, "b"), thread(9, "bash")],
            events: vec![
                sw(0, 0, 0, Runnable, 1),
                sw(0, 1, 0, Runnable, 9),
                sw(5, 1, 9, Sleeping, 0),
                waking(10, 0, 2, 0),
                wakeup(11, 0, 2, 0),
                sw(20, 0, 1, Sleeping, 2),
                sw(30, 0, 2, Sleeping, 0),
                sw(40, 0, 0, Runnable, 1),
            ],
        };
        let d = dynamics(&t, |c| c == "a" || c == "b");
        // CPU 0 only, 0..40: idle 30..40; CPU 1's idle from 5 is not counted.
        assert_eq!((d.observed_cpu_ns, d.idle_ns), (40, 10));
        assert_eq!(d.idle_beside_waiting_ns, 0);
    }

    #[test]
    fn a_migration_moves_the_wait_and_is_counted() {
        use PrevState::*;
        let t = Trace {
            nr_cpus: 2,
            threads: vec![thread(1, "a"), thread(2, "b")],
            events: vec![
                sw(0, 0, 0, Runnable, 1),
                sw(0, 1, 0, Runnable, 0),
                waking(10, 0, 2, 0),
                wakeup(11, 0, 2, 0),
                // Balanced to the idle CPU 1 before it ran: from then no wait beside idle.
                TraceEvent::MigrateTask {
                    ts_ns: 20,
                    cpu: 1,
                    pid: 2,
                    prio: 120,
                    orig_cpu: 0,
                    dest_cpu: 1,
                },
                sw(25, 1, 0, Runnable, 2),
            ],
        };
        let d = dynamics(&t, |_| true);
        assert_eq!(d.migrations, 1);
        assert_eq!(d.idle_beside_waiting_ns, 9, "11..20 only");
        assert_eq!(d.wakeup_latencies_ns, vec![15]);
        assert_eq!(d.wakeup_preemptions, 0, "CPU 1 was idle: no preemption");
    }
}
