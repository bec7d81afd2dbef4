//! The fair scheduling class: one runqueue per CPU, with the pick and preemption rules of
//! the selected era (kernel/sched/fair.c: `place_entity()`, `pick_next_entity()`,
//! `check_preempt_wakeup()` — `check_preempt_wakeup_fair()` from 6.7 — and `entity_tick()`).
//!
//! * CFS (2.6.23–6.5): a tree keyed by vruntime; sleeper credit on wakeup (GENTLE_FAIR_SLEEPERS),
//!   START_DEBIT for new tasks, wakeup preemption by wakeup granularity, next/last buddies,
//!   tick preemption by slice.
//! * EEVDF (6.6+): a tree keyed by virtual deadline; lag-preserving placement (PLACE_LAG),
//!   eligibility against the weighted average vruntime, RUN_TO_PARITY, PREEMPT_SHORT and
//!   DELAY_DEQUEUE.
//! * O(1) approximation (2.5.59): priority order with a sleep bonus, round robin within a
//!   priority, timeslices; non-sync wakees preempt a lower-priority task, sync ones never.
//!   This is a reconstruction of the behaviour that matters for placement, not the O(1)
//!   scheduler's arrays.
//!
//! The tree stores `(key, task)`; per-task values live in `crate::state::Task`.
//!
//! State: reads and writes only `core` (runqueues, tasks and CPUs).

use crate::config::ClassKind;
use crate::rq::{LRU_LONG, LRU_SHORT, RqTree};
use crate::sim::Simulation;
use crate::state::TaskState;
use crate::task::TaskId;
use crate::time::Time;
use schedlab_topo::CpuId;

/// NICE_0_LOAD.
pub const NICE_0_LOAD: u64 = 1024;

/// How far (virtual ns) curr's vruntime may drift from an EEVDF queue's reference point
/// before the sums are rebased (2^32: about 4 s at nice 0).
const REBASE: u64 = 1 << 32;

/// `⌊sum / load⌋` for `load > 0`, in 64 bits when both fit (128-bit division is slow).
#[inline]
fn floor_div(sum: i128, load: i128) -> i64 {
    match (i64::try_from(sum), i64::try_from(load)) {
        (Ok(a), Ok(b)) => a.div_euclid(b),
        _ => sum.div_euclid(load) as i64,
    }
}

/// `delta · NICE_0_LOAD / weight`.
///
/// Runs several times per wakeup: nice-0 tasks and any delta below 2^54 ns (208 days)
/// avoid the 128-bit division, with the same result.
#[inline]
pub fn calc_delta_fair(delta: u64, weight: u64) -> i64 {
    if weight == NICE_0_LOAD {
        return delta as i64;
    }
    if delta < 1 << 54 {
        return ((delta << 10) / weight.max(1)) as i64;
    }
    ((delta as u128 * NICE_0_LOAD as u128) / weight.max(1) as u128) as i64
}

impl Simulation {
    fn key_of(&self, t: TaskId) -> i64 {
        let task = &self.core.tasks[t];
        match self.core.cfg.class {
            ClassKind::Cfs => task.vruntime,
            ClassKind::Eevdf => task.deadline,
            ClassKind::O1 => ((task.o1_prio as i64) << 40) | (task.o1_seq as i64 & ((1 << 40) - 1)),
        }
    }

    /// A queued task's place in `cfs_tasks` order. Derived like [`Self::key_of`]: a queued
    /// task's `exec_start` does not change until it is dequeued to run (checked by the
    /// invariants).
    fn lru_key_of(&self, t: TaskId) -> (i64, TaskId) {
        (self.core.tasks[t].exec_start as i64, t)
    }

    pub(crate) fn latency_ns(&self) -> u64 {
        self.core.cfg.tunables.latency_ns * self.core.factor
    }
    pub(crate) fn min_gran_ns(&self) -> u64 {
        self.core.cfg.tunables.min_granularity_ns * self.core.factor
    }
    pub(crate) fn wakeup_gran_ns(&self) -> u64 {
        self.core.cfg.tunables.wakeup_granularity_ns * self.core.factor
    }

    /// Inserts a runnable task into `cpu`'s tree (it must not be curr).
    pub(crate) fn rq_insert(&mut self, cpu: CpuId, t: TaskId) {
        if self.core.cfg.class == ClassKind::O1 {
            self.core.cpus[cpu].rq.seq += 1;
            self.core.tasks[t].o1_seq = self.core.cpus[cpu].rq.seq;
            // O(1) timeslice expiry (`scheduler_tick`): the task is requeued behind its
            // priority level with a new timeslice and priority. Without the refill a
            // CPU-bound task kept 0 left, was preempted at every tick, and every queued
            // task looked cache-hot to the O(1) balancer.
            let base = self.core.cfg.tunables.o1_timeslice_ns;
            let task = &mut self.core.tasks[t];
            if task.o1_timeslice_left == 0 {
                task.o1_timeslice_left = o1_timeslice(base, task.nice);
                task.o1_prio = o1_effective_prio(task.nice, task.o1_sleep_avg);
            }
        }
        let key = self.key_of(t);
        let (v, w) = (
            self.core.tasks[t].vruntime,
            self.core.tasks[t].weight as i64,
        );
        let lru_key = self.lru_key_of(t);
        let rq = &mut self.core.cpus[cpu].rq;
        rq.tree.insert((key, t));
        if rq.lru_kept() {
            rq.lru.insert(lru_key);
        } else if rq.tree.len() > LRU_LONG {
            // The queue just became long: its order is kept from here on (same keys as
            // `lru_key_of`, read through the disjoint `tasks` borrow).
            let tasks = &self.core.tasks;
            for &(_, q) in rq.tree.iter() {
                rq.lru.insert((tasks[q].exec_start as i64, q));
            }
        }
        if self.core.cfg.class == ClassKind::Eevdf {
            rq.avg_vruntime += (v - rq.min_vruntime) as i128 * w as i128;
            rq.avg_load += w;
        }
    }

    /// Removes a queued task from `cpu`'s tree.
    pub(crate) fn rq_remove(&mut self, cpu: CpuId, t: TaskId) {
        let key = self.key_of(t);
        let (v, w) = (
            self.core.tasks[t].vruntime,
            self.core.tasks[t].weight as i64,
        );
        let lru_key = self.lru_key_of(t);
        let rq = &mut self.core.cpus[cpu].rq;
        let removed = rq.tree.remove(&(key, t));
        debug_assert!(removed, "task {t} not in rq of cpu {cpu}");
        if rq.lru_kept() {
            let removed = rq.lru.remove(&lru_key);
            debug_assert!(removed, "task {t} not in the lru of cpu {cpu}");
            if rq.tree.len() < LRU_SHORT {
                rq.lru = RqTree::default();
            }
        }
        if self.core.cfg.class == ClassKind::Eevdf {
            rq.avg_vruntime -= (v - rq.min_vruntime) as i128 * w as i128;
            rq.avg_load -= w;
        }
        if rq.next == Some(t) {
            rq.next = None;
        }
        if rq.last == Some(t) {
            rq.last = None;
        }
    }

    fn curr_runnable(&self, cpu: CpuId) -> Option<TaskId> {
        self.core.cpus[cpu]
            .curr
            .filter(|&c| matches!(self.core.tasks[c].state, TaskState::Running(_)))
    }

    /// Charges the running task for the time since `exec_start` (`update_curr`).
    pub(crate) fn update_curr(&mut self, cpu: CpuId) {
        let now = self.core.now;
        let base_slice = self.min_gran_ns();
        let Some(c) = self.core.cpus[cpu].curr else {
            return;
        };
        let task = &mut self.core.tasks[c];
        let delta = now.saturating_sub(task.exec_start);
        task.exec_start = now;
        if delta == 0 {
            return;
        }
        task.sum_exec += delta;
        task.ran_since_wake += delta;
        let dv = calc_delta_fair(delta, task.weight);
        match self.core.cfg.class {
            ClassKind::Cfs => {
                task.vruntime += dv;
                self.update_min_vruntime(cpu);
            }
            ClassKind::Eevdf => {
                task.vruntime += dv;
                if task.vruntime >= task.deadline {
                    task.slice = task.custom_slice.unwrap_or(base_slice);
                    task.deadline = task.vruntime + calc_delta_fair(task.slice, task.weight);
                    task.protect_until_deadline = None;
                    if self.core.cpus[cpu].nr_running > 1 {
                        self.core.cpus[cpu].need_resched = true;
                    }
                }
                let curr_v = task.vruntime;
                self.note_zero_lag(cpu, curr_v);
            }
            ClassKind::O1 => {
                task.o1_timeslice_left = task.o1_timeslice_left.saturating_sub(delta);
                task.o1_sleep_avg = (task.o1_sleep_avg - delta as f64 / 1e9).max(0.0);
            }
        }
    }

    fn update_min_vruntime(&mut self, cpu: CpuId) {
        let curr = self.curr_runnable(cpu).map(|c| self.core.tasks[c].vruntime);
        let rq = &mut self.core.cpus[cpu].rq;
        let left = rq.tree.first().map(|&(k, _)| k);
        let cand = match (curr, left) {
            (Some(c), Some(l)) => c.min(l),
            (Some(c), None) => c,
            (None, Some(l)) => l,
            (None, None) => return,
        };
        rq.min_vruntime = rq.min_vruntime.max(cand);
    }

    /// EEVDF, after curr's vruntime advanced to `curr_v`: records the zero-lag point's sums
    /// (for when nothing is runnable), and moves the reference point to the zero-lag point
    /// once curr has drifted [`REBASE`] from it, which keeps the sums within 64 bits (the fast
    /// division).
    fn note_zero_lag(&mut self, cpu: CpuId, curr_v: i64) {
        let (sum, load) = self.eligibility_sums(cpu);
        if load == 0 {
            return;
        }
        let rq = &mut self.core.cpus[cpu].rq;
        rq.last_zero_lag = (sum, load as i64);
        if (curr_v - rq.min_vruntime).unsigned_abs() > REBASE {
            // The zero-lag point relative to the reference: the reference moves onto it.
            let delta = floor_div(sum, load);
            rq.avg_vruntime -= rq.avg_load as i128 * delta as i128;
            rq.last_zero_lag.0 -= load * delta as i128;
            rq.min_vruntime += delta;
            // The recorded point is now the reference itself: rebasing moved no point.
            debug_assert_eq!(
                floor_div(rq.last_zero_lag.0, load),
                0,
                "rebase moved the point"
            );
        }
    }

    /// EEVDF `avg_vruntime()`: the zero-lag point, curr included while runnable.
    pub(crate) fn avg_vruntime(&self, cpu: CpuId) -> i64 {
        let rq = &self.core.cpus[cpu].rq;
        let (sum, load) = self.eligibility_sums(cpu);
        if load == 0 {
            // Nothing runnable: the point as of the last update with something runnable.
            let (sum, load) = rq.last_zero_lag;
            if load == 0 {
                return rq.min_vruntime;
            }
            return rq.min_vruntime + floor_div(sum, load as i128);
        }
        rq.min_vruntime + floor_div(sum, load)
    }

    /// EEVDF `(Σ w·(v − v0), Σ w)` over the queued tasks and a runnable curr: what
    /// eligibility compares against. Computed once per pick, not once per candidate.
    fn eligibility_sums(&self, cpu: CpuId) -> (i128, i128) {
        let rq = &self.core.cpus[cpu].rq;
        let (mut sum, mut load) = (rq.avg_vruntime, rq.avg_load as i128);
        if let Some(c) = self.curr_runnable(cpu) {
            let ct = &self.core.tasks[c];
            sum += (ct.vruntime - rq.min_vruntime) as i128 * ct.weight as i128;
            load += ct.weight as i128;
        }
        (sum, load)
    }

    /// `vruntime(t) ≤ avg_vruntime` without the division (the kernel's `vruntime_eligible`).
    #[inline]
    fn eligible_given(&self, cpu: CpuId, (sum, load): (i128, i128), t: TaskId) -> bool {
        sum >= (self.core.tasks[t].vruntime - self.core.cpus[cpu].rq.min_vruntime) as i128 * load
    }

    fn eligible(&self, cpu: CpuId, t: TaskId) -> bool {
        self.eligible_given(cpu, self.eligibility_sums(cpu), t)
    }

    /// CFS `sched_slice()` for `t` on `cpu` (wall time).
    pub(crate) fn sched_slice(&self, cpu: CpuId, t: TaskId) -> u64 {
        let c = &self.core.cpus[cpu];
        let on_rq = matches!(self.core.tasks[t].state, TaskState::Queued(x) | TaskState::Running(x) if x == cpu);
        let nr = c.nr_running as u64 + u64::from(!on_rq);
        let nr_latency = (self.latency_ns() / self.min_gran_ns().max(1)).max(1);
        let period = if nr <= nr_latency {
            self.latency_ns()
        } else {
            nr * self.min_gran_ns()
        };
        let w = self.core.tasks[t].weight;
        let total = c.runnable_weight + if on_rq { 0 } else { w };
        let mut s = (period as u128 * w as u128 / total.max(1) as u128) as u64;
        if self.core.cfg.features.base_slice {
            s = s.max(self.min_gran_ns());
        }
        s
    }

    /// Sets vruntime/deadline of a task about to be enqueued on `cpu` (`place_entity`).
    pub(crate) fn place_entity(&mut self, cpu: CpuId, t: TaskId, initial: bool) {
        match self.core.cfg.class {
            ClassKind::Cfs => {
                let mut v = self.core.cpus[cpu].rq.min_vruntime;
                if initial && self.core.cfg.features.start_debit {
                    v += calc_delta_fair(self.sched_slice(cpu, t), self.core.tasks[t].weight);
                }
                if !initial {
                    let mut thresh = self.latency_ns() as i64;
                    if self.core.cfg.features.gentle_fair_sleepers {
                        thresh /= 2;
                    }
                    v -= thresh;
                }
                let task = &mut self.core.tasks[t];
                task.vruntime = if initial {
                    v.max(task.vruntime)
                } else {
                    task.vruntime.max(v)
                };
            }
            ClassKind::Eevdf => {
                let slice = self.core.tasks[t]
                    .custom_slice
                    .unwrap_or(self.min_gran_ns());
                let w = self.core.tasks[t].weight;
                let mut vslice = calc_delta_fair(slice, w);
                let vavg = self.avg_vruntime(cpu);
                let mut lag = 0i64;
                let nr_others = self.core.cpus[cpu].rq.tree.len()
                    + usize::from(self.curr_runnable(cpu).is_some());
                if self.core.cfg.features.place_lag && nr_others > 0 {
                    let rq = &self.core.cpus[cpu].rq;
                    let mut load = rq.avg_load;
                    if let Some(c) = self.curr_runnable(cpu) {
                        load += self.core.tasks[c].weight as i64;
                    }
                    if load > 0 {
                        let (vlag, scaled) = (self.core.tasks[t].vlag, load + w as i64);
                        // 64-bit when the product fits (always, short of extreme lags);
                        // both divisions truncate toward zero.
                        lag = match vlag.checked_mul(scaled) {
                            Some(p) => p / load,
                            None => (vlag as i128 * scaled as i128 / load as i128) as i64,
                        };
                    }
                }
                if initial && self.core.cfg.features.place_deadline_initial {
                    vslice /= 2;
                }
                let task = &mut self.core.tasks[t];
                task.slice = slice;
                task.vruntime = vavg - lag;
                task.deadline = task.vruntime + vslice;
            }
            ClassKind::O1 => {
                let task = &mut self.core.tasks[t];
                task.o1_prio = o1_effective_prio(task.nice, task.o1_sleep_avg);
                if task.o1_timeslice_left == 0 {
                    task.o1_timeslice_left =
                        o1_timeslice(self.core.cfg.tunables.o1_timeslice_ns, task.nice);
                }
            }
        }
    }

    /// EEVDF: records lag when a task leaves the runqueue by sleeping.
    pub(crate) fn save_lag(&mut self, cpu: CpuId, t: TaskId) {
        if self.core.cfg.class != ClassKind::Eevdf {
            return;
        }
        let v = self.avg_vruntime(cpu);
        let tick = self.core.cfg.tunables.tick_ns();
        let max_slice = if self.core.cfg.features.lag_clamp_max_slice {
            Some(self.cfs_rq_max_slice(cpu))
        } else {
            None
        };
        let task = &mut self.core.tasks[t];
        let limit = calc_delta_fair(lag_clamp_span(task.slice, max_slice, tick), task.weight);
        task.vlag = (v - task.vruntime).clamp(-limit, limit);
    }

    /// `cfs_rq_max_slice()`: the longest slice among the queued tasks and a runnable curr.
    fn cfs_rq_max_slice(&self, cpu: CpuId) -> u64 {
        let rq = &self.core.cpus[cpu].rq;
        let queued = rq.tree.iter().map(|&(_, t)| self.core.tasks[t].slice).max();
        let curr = self.curr_runnable(cpu).map(|c| self.core.tasks[c].slice);
        queued.max(curr).unwrap_or(0)
    }

    /// Whether a task that is blocking on `cpu` should stay queued as "delayed" (6.12+).
    pub(crate) fn should_delay_dequeue(&self, cpu: CpuId, t: TaskId) -> bool {
        self.core.cfg.class == ClassKind::Eevdf
            && self.core.cfg.features.delay_dequeue
            && !self.eligible(cpu, t)
            && self.core.cpus[cpu].nr_running > 1
    }

    /// Picks the next task to run on `cpu` among curr (if still runnable) and the queued
    /// ones, without changing anything.
    pub(crate) fn pick_next(&self, cpu: CpuId) -> Option<TaskId> {
        self.pick_next_with(cpu, true)
    }

    /// [`Self::pick_next`]; under EEVDF `protect: false` ignores curr's RUN_TO_PARITY
    /// protection (`__pick_eevdf(cfs_rq, protect)`, the PREEMPT_SHORT test).
    pub(crate) fn pick_next_with(&self, cpu: CpuId, protect: bool) -> Option<TaskId> {
        let curr = self.curr_runnable(cpu);
        let rq = &self.core.cpus[cpu].rq;
        match self.core.cfg.class {
            ClassKind::O1 => {
                let first = rq.tree.first().map(|&(_, t)| t);
                match (curr, first) {
                    (Some(c), Some(f)) => {
                        let (ct, ft) = (&self.core.tasks[c], &self.core.tasks[f]);
                        if ct.o1_timeslice_left > 0 && ct.o1_prio <= ft.o1_prio {
                            Some(c)
                        } else {
                            Some(f)
                        }
                    }
                    (c, f) => c.or(f),
                }
            }
            ClassKind::Cfs => {
                let mut left = rq.tree.first().map(|&(_, t)| t);
                if let Some(c) = curr
                    && left
                        .is_none_or(|l| self.core.tasks[c].vruntime < self.core.tasks[l].vruntime)
                {
                    left = Some(c);
                }
                let left = left?;
                for b in [rq.next, rq.last].into_iter().flatten() {
                    let queued_or_curr = Some(b) == curr
                        || matches!(self.core.tasks[b].state, TaskState::Queued(x) if x == cpu);
                    if queued_or_curr && self.wakeup_preempt_entity(b, left) < 1 {
                        return Some(b);
                    }
                }
                Some(left)
            }
            ClassKind::Eevdf => {
                if let Some(c) = curr {
                    let ct = &self.core.tasks[c];
                    if rq.tree.is_empty() {
                        return Some(c);
                    }
                    if protect
                        && self.core.cfg.features.run_to_parity
                        && ct.protect_until_deadline == Some(ct.deadline)
                        && self.eligible(cpu, c)
                    {
                        return Some(c);
                    }
                }
                let sums = self.eligibility_sums(cpu);
                let mut best: Option<TaskId> = None;
                for &(_, t) in rq.tree.iter() {
                    if self.eligible_given(cpu, sums, t) {
                        best = Some(t);
                        break;
                    }
                }
                if let Some(c) = curr
                    && self.eligible_given(cpu, sums, c)
                    && best
                        .is_none_or(|b| self.core.tasks[c].deadline <= self.core.tasks[b].deadline)
                {
                    best = Some(c);
                }
                best.or_else(|| rq.tree.first().map(|&(_, t)| t)).or(curr)
            }
        }
    }

    /// CFS `wakeup_preempt_entity(curr, se)`: 1 if `se` should preempt `curr`.
    pub(crate) fn wakeup_preempt_entity(&self, curr: TaskId, se: TaskId) -> i32 {
        let vdiff = self.core.tasks[curr].vruntime - self.core.tasks[se].vruntime;
        if vdiff <= 0 {
            return -1;
        }
        let gran = calc_delta_fair(self.wakeup_gran_ns(), self.core.tasks[se].weight);
        i32::from(vdiff > gran)
    }

    /// Whether waking `p` onto `cpu` (whose curr is running) preempts curr.
    pub(crate) fn check_preempt_wakeup(
        &mut self,
        cpu: CpuId,
        p: TaskId,
        sync: bool,
        fork: bool,
    ) -> bool {
        let Some(curr) = self.curr_runnable(cpu) else {
            return false;
        };
        if curr == p
            || !self.core.cfg.features.wakeup_preemption && self.core.cfg.class != ClassKind::O1
        {
            return false;
        }
        // A reschedule already pending (2.6.29+ `check_preempt_wakeup()`'s
        // `test_tsk_need_resched(curr)` exit; `resched_task()` of a flagged task is a no-op in
        // the O(1) scheduler): nothing more to decide. The CFS next buddy is set before it.
        let pending = self.core.cpus[cpu].need_resched;
        match self.core.cfg.class {
            ClassKind::O1 => {
                !pending && !sync && self.core.tasks[p].o1_prio < self.core.tasks[curr].o1_prio
            }
            ClassKind::Cfs => {
                self.update_curr(cpu);
                let nr_latency = (self.latency_ns() / self.min_gran_ns().max(1)).max(1);
                let scale = self.core.cpus[cpu].nr_running as u64 >= nr_latency;
                let mut marked = false;
                if self.core.cfg.features.next_buddy && scale && !fork {
                    self.core.cpus[cpu].rq.next = Some(p);
                    marked = true;
                }
                if pending {
                    return false;
                }
                if self.wakeup_preempt_entity(curr, p) == 1 {
                    if !marked {
                        self.core.cpus[cpu].rq.next = Some(p);
                    }
                    if self.core.cfg.features.last_buddy && scale {
                        self.core.cpus[cpu].rq.last = Some(curr);
                    }
                    return true;
                }
                false
            }
            ClassKind::Eevdf => {
                if pending {
                    return false;
                }
                self.update_curr(cpu);
                // PREEMPT_SHORT: a wakee with a shorter slice is tested without the waker's
                // protection (6.17+ whenever it is shorter; 6.12-6.16 only when it is
                // eligible and due first, or the waker is not eligible).
                let mut protect = true;
                if self.core.cfg.features.preempt_short {
                    let (ps, cs) = (self.core.tasks[p].slice, self.core.tasks[curr].slice);
                    if ps < cs
                        && (self.core.cfg.features.preempt_short_unprotected
                            || self.eligible(cpu, p)
                                && (self.core.tasks[p].deadline < self.core.tasks[curr].deadline
                                    || !self.eligible(cpu, curr)))
                    {
                        protect = false;
                    }
                }
                loop {
                    let pick = self.pick_next_with(cpu, protect);
                    // 7.1 / 6.18.33+ (ac8e69e69363): a delayed entity met by the pick is
                    // dequeued for good, and the pick is made again.
                    if let Some(d) = pick
                        && d != p
                        && self.core.cfg.features.wakeup_pick_dequeues_delayed
                        && self.core.tasks[d].delayed
                    {
                        self.finish_delayed_dequeue(cpu, d);
                        continue;
                    }
                    return pick == Some(p);
                }
            }
        }
    }

    /// Tick-time preemption check of the running task.
    pub(crate) fn check_preempt_tick(&mut self, cpu: CpuId) -> bool {
        let Some(curr) = self.curr_runnable(cpu) else {
            return false;
        };
        self.update_curr(cpu);
        if self.core.cpus[cpu].nr_running <= 1 {
            return false;
        }
        match self.core.cfg.class {
            ClassKind::O1 => {
                if self.core.tasks[curr].o1_timeslice_left == 0 {
                    return true;
                }
                self.pick_next(cpu) != Some(curr)
            }
            ClassKind::Cfs => {
                let ideal = self.sched_slice(cpu, curr);
                let t = &self.core.tasks[curr];
                let ran = t.sum_exec - t.prev_sum_exec;
                if ran > ideal {
                    let rq = &mut self.core.cpus[cpu].rq;
                    if rq.next == Some(curr) {
                        rq.next = None;
                    }
                    if rq.last == Some(curr) {
                        rq.last = None;
                    }
                    return true;
                }
                if ran < self.min_gran_ns() {
                    return false;
                }
                let Some(&(first_v, _)) = self.core.cpus[cpu].rq.tree.first() else {
                    return false;
                };
                let d = t.vruntime - first_v;
                d > ideal as i64
            }
            ClassKind::Eevdf => {
                self.core.cpus[cpu].need_resched || self.pick_next(cpu) != Some(curr)
            }
        }
    }

    /// Bookkeeping when `t` becomes curr.
    pub(crate) fn set_next_entity(&mut self, t: TaskId, now: Time) {
        let task = &mut self.core.tasks[t];
        task.exec_start = now;
        task.prev_sum_exec = task.sum_exec;
        task.protect_until_deadline = Some(task.deadline);
    }
}

/// The wall time a task's lag is clamped to (`update_entity_lag()`): twice its slice or a
/// tick, whichever is longer (6.6-6.18.0); from 7.0 (6e3c0a4e1ad1 "Fix lag clamp", also in
/// 6.18.y) the longest slice queued (`max_slice`, the task's own included) plus a tick.
fn lag_clamp_span(slice: u64, max_slice: Option<u64>, tick: u64) -> u64 {
    match max_slice {
        Some(m) => m.max(slice) + tick,
        None => (2 * slice).max(tick),
    }
}

/// O(1) `effective_prio`: the static priority minus a sleep bonus of up to ±5 levels.
fn o1_effective_prio(nice: i32, sleep_avg: f64) -> i32 {
    let bonus = ((sleep_avg * 10.0).round() as i32 - 5).clamp(-5, 5);
    120 + nice - bonus
}

/// O(1) timeslice for a nice level (linear in static priority, 100 ms at nice 0).
pub fn o1_timeslice(base_ns: u64, nice: i32) -> u64 {
    // 2.5-era task_timeslice: MIN + (MAX - MIN) * (MAX_PRIO - 1 - static_prio) / (MAX_USER_PRIO - 1),
    // with MIN = base/10 and MAX = 2*base: nice 0 gives ~base. Reconstruction [M].
    let min = base_ns / 10;
    let max = 2 * base_ns;
    let static_prio = 120 + nice.clamp(-20, 19);
    min + (max - min) * (139 - static_prio) as u64 / 39
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    /// The lag clamp of 6.6-6.18.0 against 7.0's: a 0.1 ms task beside a 6 ms one at HZ 1000
    /// keeps at most 1 ms of lag before the fix and 7 ms after; alone, 7.0's is its slice
    /// plus the tick.
    #[test]
    fn the_lag_clamp_is_the_longest_slice_plus_a_tick_from_7_0() {
        let (ms, us) = (1_000_000, 1_000);
        assert_eq!(super::lag_clamp_span(100 * us, None, ms), ms);
        assert_eq!(super::lag_clamp_span(100 * us, Some(6 * ms), ms), 7 * ms);
        assert_eq!(super::lag_clamp_span(3 * ms, None, ms), 6 * ms);
        assert_eq!(super::lag_clamp_span(3 * ms, Some(0), ms), 4 * ms);
    }

    proptest! {
        /// The fast paths of `calc_delta_fair` give the 128-bit result everywhere, including
        /// at the 2^54 boundary and for weights of 0 and NICE_0_LOAD.
        #[test]
        fn calc_delta_fair_matches_wide_arithmetic(
            delta in prop_oneof![any::<u64>(), (1u64 << 54) - 4..(1u64 << 54) + 4, 0u64..1 << 40],
            weight in prop_oneof![Just(0u64), Just(super::NICE_0_LOAD), 1u64..100_000, any::<u64>()],
        ) {
            let wide = ((delta as u128 * super::NICE_0_LOAD as u128) / weight.max(1) as u128) as i64;
            prop_assert_eq!(super::calc_delta_fair(delta, weight), wide);
        }
    }
}
