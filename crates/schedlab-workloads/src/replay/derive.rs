//! The pass over a trace's events: one state machine per traced thread that cuts its CPU
//! time into run bursts at each point where it wakes someone or blocks, and resolves each
//! block by the wakeup that ended it (who was running on the waking CPU).
//!
//! The events are taken one at a time in file order and none is kept, so memory grows with
//! the threads and the ops derived, not with the trace.
//!
//! Hand-offs: a write to a reader that is awake (runnable, not sleeping) wakes no one, so it
//! leaves no event. On one CPU a pipe ping-pong then shows one wakeup per round trip: W wakes
//! B, B preempts W at once (`sched_switch` W `R` ==> B), B blocks and gives the CPU straight
//! back to W (B `S` ==> W). That pair of switches is recorded as a hand-off B → W: B sends
//! before it blocks, W receives where it resumes. `emit` keeps a hand-off only on an edge B → W
//! that also carries traced wakeups (W is seen waiting for B at other times), so one-way
//! streams (hackbench's senders, preempted by the receivers they wake) stay one-way.
//!
//! Implied switches: a task woken onto an idle CPU runs there next (the wakeup sets
//! `need_resched` on the idle task, which schedules at once). Some traces lack that
//! `sched_switch` (idle ==> task): on a 2-vCPU KVM guest running 6.18, 4,960 of the 4,999
//! switch-ins of one side of a pipe pair were missing with no event reported lost, though
//! the task then woke its partner and switched out there. Without the switch the pass
//! would take the task's wakeups for interrupts. When a CPU the pass holds idle emits a
//! `sched_waking` or switches out a task it was told of by a wakeup, the pass switches that
//! task in at the wakeup's time first (counted in [`Warnings::implied_switches`]).

use super::{Edge, RawOp, Warnings};
use schedlab_trace::{PrevState, TraceEvent};
use std::collections::BTreeMap;

/// What the pass knows of one traced thread.
#[derive(Debug, Default)]
pub(crate) struct Thread {
    /// Kernel priority last seen (120 = nice 0).
    pub prio: Option<i32>,
    /// The ops so far, in the thread's own order.
    pub ops: Vec<RawOp>,
    /// CPU time since the last op boundary, not counting the segment now running.
    acc_ns: u64,
    /// (CPU, since) while it runs.
    running: Option<(u32, u64)>,
    /// Blocked since this time, with the index of its placeholder op.
    blocked: Option<(u64, usize)>,
    /// When the thread was first seen.
    pub first_ts: u64,
    /// Forked by this thread during the trace.
    pub parent: Option<u32>,
    /// It exited (`prev_state=X` or `sched_process_exit`).
    pub exited: bool,
    /// Total CPU time.
    pub cpu_ns: u64,
    /// Switches into it.
    pub runs: u64,
    /// CPU time and runs per CPU: (cpu, ns, runs).
    pub per_cpu: Vec<(u32, u64, u64)>,
}

impl Thread {
    fn new(ts: u64) -> Thread {
        Thread {
            first_ts: ts,
            ..Thread::default()
        }
    }

    fn account(&mut self, cpu: u32, d: u64) {
        self.acc_ns += d;
        self.cpu_ns += d;
        match self.per_cpu.iter_mut().find(|e| e.0 == cpu) {
            Some(e) => e.1 += d,
            None => self.per_cpu.push((cpu, d, 0)),
        }
    }

    /// Ends the current burst at `now`: the time run so far becomes a compute op.
    fn cut(&mut self, now: u64) {
        if let Some((cpu, since)) = self.running {
            self.account(cpu, now.saturating_sub(since));
            self.running = Some((cpu, now));
        }
        if self.acc_ns > 0 {
            self.ops.push(RawOp::Compute(self.acc_ns));
            self.acc_ns = 0;
        }
    }

    fn stop_running(&mut self, now: u64) {
        if let Some((cpu, since)) = self.running.take() {
            self.account(cpu, now.saturating_sub(since));
        }
    }
}

/// The pass's state.
#[derive(Debug, Default)]
pub(crate) struct Pass {
    pub threads: BTreeMap<u32, Thread>,
    /// Task running on each CPU (0 = idle), as far as the switches told.
    cpu_cur: Vec<Option<u32>>,
    /// One entry per causal edge (waker, wakee), in order of first use.
    pub edges: Vec<Edge>,
    edge_index: BTreeMap<(u32, u32), usize>,
    /// For each waker, the edge of its last wakeup not yet followed by a block or another
    /// wakeup, with the waker's CPU time then (for the sync inference).
    last_wake: BTreeMap<u32, (usize, u64)>,
    /// Per CPU: the last wakeup issued there, (waker, wakee), until the next switch.
    just_woke: Vec<Option<(u32, u32)>>,
    /// Per CPU: (waker, wakee) after the wakee preempted its waker there, until the next
    /// switch on that CPU.
    preempted_by_wakee: Vec<Option<(u32, u32)>>,
    /// Per wakee: its waker's last send op (waker, op index, waker's CPU) until the
    /// `sched_wakeup` tells where the wakee went.
    pending_send: BTreeMap<u32, (u32, usize, u32)>,
    /// Per CPU held idle: the task last woken onto it and when, until the next switch there
    /// (see the module doc: implied switches).
    woken_onto_idle: Vec<Option<(u32, u64)>>,
    /// Hand-offs inferred.
    pub handoffs: u64,
    pub first_ts: Option<u64>,
    pub last_ts: u64,
    pub warn: Warnings,
    /// CPUs mentioned.
    pub max_cpu: Option<u32>,
    /// `sched_switch` events seen: a trace of wakeups alone has no bursts or blocks to
    /// derive, and would become a workload of sleeps.
    pub switches: u64,
    /// The event before, to drop an exact repeat of it (a line doubled by a bad copy).
    prev: Option<TraceEvent>,
}

/// A waker that blocks within this much of its own CPU time after a wakeup, before waking
/// anyone else, made a sync-like wakeup (the `WF_SYNC` promise: "I am about to sleep").
pub const SYNC_WINDOW_NS: u64 = 20_000;

impl Pass {
    fn thread(&mut self, pid: u32, ts: u64) -> &mut Thread {
        self.threads.entry(pid).or_insert_with(|| Thread::new(ts))
    }

    fn cpu_slot(&mut self, cpu: u32) -> &mut Option<u32> {
        let i = cpu as usize;
        if self.cpu_cur.len() <= i {
            self.cpu_cur.resize(i + 1, None);
            self.just_woke.resize(i + 1, None);
            self.preempted_by_wakee.resize(i + 1, None);
            self.woken_onto_idle.resize(i + 1, None);
        }
        self.max_cpu = Some(self.max_cpu.map_or(cpu, |m| m.max(cpu)));
        &mut self.cpu_cur[i]
    }

    fn edge(&mut self, waker: u32, wakee: u32) -> usize {
        if let Some(&i) = self.edge_index.get(&(waker, wakee)) {
            return i;
        }
        let i = self.edges.len();
        self.edges.push(Edge {
            waker,
            wakee,
            wakes: 0,
            sync_like: 0,
            handoffs: 0,
        });
        self.edge_index.insert((waker, wakee), i);
        i
    }

    /// The waker's last wakeup is followed by `blocked` (true) or by something else: decide
    /// whether it was sync-like.
    fn settle_sync(&mut self, pid: u32, blocked: bool) {
        if let Some((e, at)) = self.last_wake.remove(&pid) {
            let now = self.threads.get(&pid).map_or(0, |t| t.cpu_ns);
            if blocked && now.saturating_sub(at) <= SYNC_WINDOW_NS {
                self.edges[e].sync_like += 1;
            }
        }
    }

    /// Feeds one event (in time order).
    pub fn event(&mut self, ev: &TraceEvent) {
        // The kernel never writes one event twice (same time, CPU and fields): a repeat is
        // a doubled line, and read twice it would contradict itself.
        if self.prev.as_ref() == Some(ev) {
            self.warn.duplicates += 1;
            return;
        }
        self.prev = Some(ev.clone());
        let ts = ev.ts_ns();
        if self.first_ts.is_none() {
            self.first_ts = Some(ts);
        }
        if ts < self.last_ts {
            self.warn.out_of_order += 1;
        }
        self.last_ts = self.last_ts.max(ts);
        match *ev {
            TraceEvent::Switch {
                cpu,
                prev_pid,
                prev_prio,
                prev_state,
                next_pid,
                next_prio,
                ..
            } => {
                self.switches += 1;
                if prev_pid != 0 && *self.cpu_slot(cpu) == Some(0) {
                    self.implied_switch_in(cpu, Some(prev_pid));
                }
                let cur = *self.cpu_slot(cpu);
                let ci = cpu as usize;
                self.woken_onto_idle[ci] = None;
                let woke = self.just_woke[ci].take();
                let preempted = self.preempted_by_wakee[ci].take();
                // The wakee preempts its waker at once: remember the pair.
                if let Some((w, b)) = woke
                    && w == prev_pid
                    && b == next_pid
                    && prev_state == PrevState::Runnable
                {
                    self.preempted_by_wakee[ci] = Some((w, b));
                }
                // ... and blocks, giving the CPU straight back to the waker: a hand-off.
                let handoff = preempted.filter(|&(w, b)| {
                    b == prev_pid
                        && w == next_pid
                        && matches!(prev_state, PrevState::Sleeping | PrevState::Uninterruptible)
                });
                if cur.is_some_and(|c| c != prev_pid) {
                    // A switch out of a task we did not see switched in here: events lost.
                    self.warn.inconsistent_switches += 1;
                    if let Some(c) = cur.filter(|&c| c != 0)
                        && let Some(t) = self.threads.get_mut(&c)
                        && t.running.is_some_and(|(rc, _)| rc == cpu)
                    {
                        t.stop_running(ts);
                    }
                }
                let handoff_edge = handoff.map(|(w, b)| {
                    self.handoffs += 1;
                    let e = self.edge(b, w);
                    self.edges[e].handoffs += 1;
                    e
                });
                if prev_pid != 0 {
                    let first = self.first_ts.unwrap_or(ts);
                    let t = self.thread(prev_pid, ts);
                    t.prio = Some(prev_prio);
                    if t.running.is_none() && cur.is_none() {
                        // Running since before the trace began (its first switch here).
                        t.running = Some((cpu, first));
                        t.first_ts = first;
                    }
                    match prev_state {
                        PrevState::Sleeping | PrevState::Uninterruptible => {
                            t.cut(ts);
                            t.running = None;
                            if let Some(e) = handoff_edge {
                                t.ops.push(RawOp::HandoffSend(e));
                            }
                            if t.blocked.is_none() {
                                t.ops.push(RawOp::Wait);
                                t.blocked = Some((ts, t.ops.len() - 1));
                            }
                            self.settle_sync(prev_pid, true);
                        }
                        PrevState::Runnable => t.stop_running(ts),
                        PrevState::Dead => {
                            t.cut(ts);
                            t.running = None;
                            t.exited = true;
                        }
                    }
                }
                if next_pid != 0 {
                    self.switch_in(cpu, next_pid, Some(next_prio), ts, handoff_edge);
                }
                *self.cpu_slot(cpu) = Some(next_pid);
            }
            TraceEvent::Waking { cpu, pid, .. } => {
                if *self.cpu_slot(cpu) == Some(0) {
                    self.implied_switch_in(cpu, None);
                }
                self.waking(ts, cpu, pid)
            }
            TraceEvent::Wakeup {
                pid, target_cpu, ..
            }
            | TraceEvent::WakeupNew {
                pid, target_cpu, ..
            } => {
                if let Some((w, idx, wcpu)) = self.pending_send.remove(&pid)
                    && wcpu != target_cpu
                    && let Some(RawOp::Send(e, _)) =
                        self.threads.get(&w).and_then(|t| t.ops.get(idx)).copied()
                {
                    self.threads.get_mut(&w).unwrap().ops[idx] = RawOp::Send(e, true);
                }
                if pid != 0 && *self.cpu_slot(target_cpu) == Some(0) {
                    self.woken_onto_idle[target_cpu as usize] = Some((pid, ts));
                }
                if let TraceEvent::Wakeup { cpu, .. } | TraceEvent::WakeupNew { cpu, .. } = *ev {
                    self.cpu_slot(cpu);
                }
            }
            TraceEvent::ProcessFork {
                parent_pid,
                child_pid,
                ..
            } => {
                let p = self.thread(parent_pid, ts);
                p.cut(ts);
                p.ops.push(RawOp::Fork(child_pid));
                self.settle_sync(parent_pid, false);
                match self.threads.entry(child_pid) {
                    std::collections::btree_map::Entry::Occupied(_) => {
                        self.warn.inconsistent_switches += 1;
                    }
                    std::collections::btree_map::Entry::Vacant(v) => {
                        let mut c = Thread::new(ts);
                        c.parent = Some(parent_pid);
                        v.insert(c);
                    }
                }
            }
            TraceEvent::ProcessExit { pid, .. } => {
                if let Some(t) = self.threads.get_mut(&pid) {
                    t.exited = true;
                }
            }
            TraceEvent::MigrateTask { cpu, .. } | TraceEvent::Placement { cpu, .. } => {
                self.cpu_slot(cpu);
            }
        }
    }

    /// `next_pid` starts running on `cpu` at `ts` (a traced or an implied switch).
    fn switch_in(
        &mut self,
        cpu: u32,
        next_pid: u32,
        next_prio: Option<i32>,
        ts: u64,
        handoff_edge: Option<usize>,
    ) {
        let t = self.thread(next_pid, ts);
        if next_prio.is_some() {
            t.prio = next_prio;
        }
        let mut lost = false;
        if let Some((since, idx)) = t.blocked.take() {
            // Runs again without a wakeup: the sched_waking was lost. What woke
            // it is unknown; it slept this long.
            t.ops[idx] = RawOp::Sleep(ts.saturating_sub(since));
            lost = true;
        }
        if let Some((c, since)) = t.running {
            // Seen running elsewhere without a switch out: events lost.
            lost |= c != cpu;
            t.account(c, ts.saturating_sub(since));
        }
        if let Some(e) = handoff_edge {
            t.cut(ts);
            t.ops.push(RawOp::HandoffRecv(e));
        }
        t.running = Some((cpu, ts));
        t.runs += 1;
        match t.per_cpu.iter_mut().find(|e| e.0 == cpu) {
            Some(e) => e.2 += 1,
            None => t.per_cpu.push((cpu, 0, 1)),
        }
        if lost {
            self.warn.inconsistent_switches += 1;
        }
        *self.cpu_slot(cpu) = Some(next_pid);
    }

    /// A CPU held idle shows a task running: the task last woken onto it (if it is `pid`,
    /// when given) switched in at its wakeup without a traced `sched_switch`.
    fn implied_switch_in(&mut self, cpu: u32, pid: Option<u32>) {
        let ci = cpu as usize;
        let Some((p, at)) = self.woken_onto_idle[ci] else {
            return;
        };
        if pid.is_some_and(|q| q != p) {
            return;
        }
        self.woken_onto_idle[ci] = None;
        self.just_woke[ci] = None;
        self.preempted_by_wakee[ci] = None;
        self.warn.implied_switches += 1;
        self.switch_in(cpu, p, None, at, None);
    }

    fn waking(&mut self, ts: u64, cpu: u32, wakee: u32) {
        let waker = *self.cpu_slot(cpu);
        self.just_woke[cpu as usize] = waker.filter(|&w| w != 0).map(|w| (w, wakee));
        if wakee == 0 || waker == Some(wakee) {
            // Woken on its own CPU while it is current: an interrupt, no causal edge.
            return;
        }
        let blocked = {
            let t = self.thread(wakee, ts);
            t.blocked.take()
        };
        let first = self.first_ts.unwrap_or(ts);
        let is_new = self.threads[&wakee].ops.is_empty()
            && self.threads[&wakee].running.is_none()
            && blocked.is_none()
            && self.threads[&wakee].parent.is_none();
        let from_task = waker.filter(|&w| w != 0);
        match (from_task, blocked) {
            (Some(w), Some((since, idx))) => {
                let e = self.edge(w, wakee);
                self.threads.get_mut(&wakee).unwrap().ops[idx] =
                    RawOp::Recv(e, ts.saturating_sub(since));
                self.send(w, e, ts, cpu, wakee);
            }
            (None, Some((since, idx))) => {
                self.threads.get_mut(&wakee).unwrap().ops[idx] =
                    RawOp::Sleep(ts.saturating_sub(since));
                self.warn.irq_wakeups += 1;
            }
            (Some(w), None) => {
                let e = self.edge(w, wakee);
                let t = self.threads.get_mut(&wakee).unwrap();
                if is_new {
                    // Asleep since before the trace began.
                    t.first_ts = first;
                    t.ops.push(RawOp::Recv(e, ts.saturating_sub(first)));
                } else {
                    // Woken before it got to sleep: the message is there when it asks.
                    t.cut(ts);
                    t.ops.push(RawOp::Recv(e, 0));
                }
                self.send(w, e, ts, cpu, wakee);
            }
            (None, None) => {
                if is_new {
                    let t = self.threads.get_mut(&wakee).unwrap();
                    t.first_ts = first;
                    t.ops.push(RawOp::Sleep(ts.saturating_sub(first)));
                }
                self.warn.irq_wakeups += 1;
            }
        }
    }

    fn send(&mut self, waker: u32, e: usize, ts: u64, cpu: u32, wakee: u32) {
        self.settle_sync(waker, false);
        self.edges[e].wakes += 1;
        let w = self.thread(waker, ts);
        w.cut(ts);
        w.ops.push(RawOp::Send(e, false));
        let idx = w.ops.len() - 1;
        let at = w.cpu_ns;
        self.pending_send.insert(wakee, (waker, idx, cpu));
        self.last_wake.insert(waker, (e, at));
    }

    /// Closes every thread at the end of the trace.
    pub fn finish(&mut self) {
        let end = self.last_ts;
        for t in self.threads.values_mut() {
            t.cut(end);
            t.running = None;
            if let Some((_, idx)) = t.blocked.take() {
                // Asleep at the end: nothing in the trace wakes it.
                t.ops.remove(idx);
            }
        }
        let first = self.first_ts.unwrap_or(0);
        self.warn.appeared_mid_trace = self
            .threads
            .values()
            .filter(|t| t.parent.is_none() && t.first_ts > first)
            .count() as u64;
    }
}
