//! The op interpreter: runs a task's program (`Op`s) until it needs CPU time, blocks, yields,
//! exits or migrates at exec, and turns the outcome into a segment, a block or a switch.
//! `step_task` dispatches each op to one method per family: compute, timers, process ops
//! (fork, exec, exit), loops and measurements here; channels in `interp_chan.rs`;
//! futexes, lists, locks, barriers and rwlocks in `interp_sync.rs`. An op's cost is an
//! [`OpCost`], charged once at the op's end.
//!
//! State: reads and writes `core` (tasks, CPUs), `objects` (lists, slots, counters,
//! histograms, wake tokens), `idle` (the sleep timers), `run` (the executing CPU, the
//! liveness counts, the random streams) and `net` (softirq context); pushes events.

use super::Simulation;
use super::contention::Object;
use super::queue::Event;
use crate::dist::Dist;
use crate::policy::{WakeFlags, wake_flags};
use crate::state::{TaskState, WaitOn};
use crate::task::{LockRef, Op, Slot, TaskId};
use crate::time::Time;
use crate::wake_rules::{WakeContext, WakeRule};
use schedlab_topo::CpuId;
use schedlab_trace::PrevState;

pub(super) enum StepOutcome {
    /// The task has work in `seg_left`.
    Run,
    /// The task blocked.
    Block(WaitOn),
    /// The task exited.
    Exit,
    /// The task yielded.
    Yield,
    /// A preemption is pending at an op boundary.
    Preempt,
    /// exec placement chose another CPU: the running task moves there.
    Migrate(CpuId),
}

/// What one op costs the task that runs it, built up while the op runs and charged at its
/// end (`step_task`): `cost + extra` becomes CPU time of the task's segment.
#[derive(Default)]
pub(super) struct OpCost {
    /// Work that does not precede a wakeup of the op (spins, blocking-call entries), ns.
    pub cost: f64,
    /// The user-mode part of the op's work (compute), ns.
    pub user: f64,
    /// Work ordered with the op's wakeups: what is in it when a wakeup is issued delays a
    /// remote wakee's arrival (the IPI leaves at its end); each wakeup adds its own cost.
    pub extra: f64,
}

/// A syscall's cost, `cpu.syscall_ns`, and its entry and exit paths, taken as halves of it
/// (reconstructed \[M\]): a send's exit runs after its wakeup, a blocking call's entry
/// before it sleeps.
#[derive(Clone, Copy)]
pub(super) struct Syscall {
    /// The whole syscall, ns.
    pub full: f64,
    /// Its entry path, ns.
    pub entry: f64,
    /// Its exit path, ns.
    pub exit: f64,
}

impl Syscall {
    /// Built once per run (`RunState::sys`): the profile does not change while it runs, and
    /// the `u64 → f64` conversion and halving cost ~20 instructions per step.
    pub(super) fn of(syscall_ns: u64) -> Syscall {
        let full = syscall_ns as f64;
        let entry = full / 2.0;
        Syscall {
            full,
            entry,
            exit: full - entry,
        }
    }
}

impl Simulation {
    pub(super) fn continue_task(&mut self, cpu: CpuId) {
        let Some(t) = self.core.cpus[cpu].curr else {
            return;
        };
        self.run.executing = Some(cpu);
        let outcome = self.step_task(t, cpu);
        self.run.executing = None;
        match outcome {
            StepOutcome::Run => {
                // A reschedule requested during the step (the task's own wakeup preempting
                // it) takes effect now only under full preemption or if the op is user
                // code; otherwise at the top of the next step, the op's return to user.
                if self.core.cpus[cpu].need_resched && self.resched_takes_effect(cpu) {
                    self.schedule(cpu, None);
                } else {
                    self.start_segment(cpu);
                }
            }
            StepOutcome::Preempt | StepOutcome::Yield => self.schedule(cpu, None),
            StepOutcome::Migrate(target) => {
                // sched_exec: the running task leaves this CPU (as if preempted) and is queued
                // on the chosen one, like a wakeup that needs no IPI delay.
                self.update_curr(cpu);
                self.settle(cpu);
                self.sync_task_pelt(t);
                self.sync_cpu_pelt(cpu);
                self.save_lag(cpu, t);
                self.leave_runnable(cpu, t);
                self.core.tasks[t].state = TaskState::Waking(target);
                self.schedule(cpu, Some(PrevState::Runnable));
                // The exec replaced the image: no old working set to refetch on `target`.
                self.core.tasks[t].last_ran_cpu = None;
                self.migrate_task(t, target, false);
                self.core.cpus[target].pending += 1;
                self.enqueue_arrival(t, target, wake_flags::EXEC, false);
            }
            StepOutcome::Block(w) => {
                self.block_current(cpu, t, w);
                self.schedule(cpu, Some(PrevState::Sleeping));
            }
            StepOutcome::Exit => {
                self.exit_current(cpu, t);
                self.schedule(cpu, Some(PrevState::Dead));
            }
        }
    }

    pub(super) fn block_current(&mut self, cpu: CpuId, t: TaskId, w: WaitOn) {
        self.update_curr(cpu);
        self.close_overlap(t);
        self.sync_task_pelt(t);
        self.sync_cpu_pelt(cpu);
        self.run.nr_active -= 1;
        if w == WaitOn::Timer {
            self.run.nr_timers += 1;
        }
        // 2.6.2x avg_overlap: EWMA (1/8) of run time since the task last woke someone.
        {
            let task = &mut self.core.tasks[t];
            let ov = task.ran_since_wake;
            task.avg_overlap =
                (task.avg_overlap as i64 + (ov as i64 - task.avg_overlap as i64) / 8) as u64;
        }
        if self.should_delay_dequeue(cpu, t) {
            self.core.tasks[t].state = TaskState::Sleeping(w);
            self.core.tasks[t].delayed = true;
            self.core.cpus[cpu].nr_delayed += 1;
            self.rq_insert(cpu, t);
            return;
        }
        self.save_lag(cpu, t);
        self.leave_runnable(cpu, t);
        self.core.tasks[t].state = TaskState::Sleeping(w);
        if self.core.cfg.features.track_short_sleep {
            self.note_short_sleeper_block(cpu, t);
        }
    }

    /// SIS_CACHE (Chen Yu, v1 Sep 2023): a short sleeper that leaves its CPU with nothing
    /// to run reserves it for its average short sleep (`rq->cache_hot_timeout`, only moved
    /// forward); the sleep's start is kept for the average at wakeup.
    fn note_short_sleeper_block(&mut self, cpu: CpuId, t: TaskId) {
        let now = self.core.now;
        let h = &mut self.hints.task[t];
        h.sleep_start = Some(now);
        let avg = h.sleep_avg;
        if avg > 0 && self.core.cpus[cpu].nr_running == 0 {
            let c = &mut self.hints.cpu[cpu];
            c.cache_hot_until = c.cache_hot_until.max(now + avg);
        }
    }

    pub(super) fn resolve_lock(&self, lock: LockRef, cpu: CpuId) -> usize {
        match lock {
            LockRef::Fixed(m) => m,
            LockRef::PerCpu(base) => base + cpu.index(),
        }
    }

    /// Executes ops of the running task `t` until it needs CPU time, blocks or exits. Each
    /// op family has its own method (`step_*`); each op's cost is built up in an [`OpCost`]
    /// and charged here, once, at the end of the op.
    pub(super) fn step_task(&mut self, t: TaskId, cpu: CpuId) -> StepOutcome {
        // SAFETY: the program is an `Arc<[Op]>` held by the task for its whole life and never
        // replaced; the slice's heap allocation does not move when `self.core.tasks` grows, so the
        // pointer stays valid while ops run (avoids an atomic refcount per step).
        let prog: &[Op] = unsafe { &*std::sync::Arc::as_ptr(&self.core.tasks[t].program) };
        if self.is_kthread(t) {
            return self.step_ksoftirqd(t, cpu);
        }
        let sys = self.run.sys;
        loop {
            if self.core.cpus[cpu].need_resched {
                return StepOutcome::Preempt;
            }
            let pc = self.core.tasks[t].pc;
            let Some(op) = prog.get(pc) else {
                return StepOutcome::Exit;
            };
            self.run.ops_started += 1;
            let mut c = OpCost::default();
            if let Some(out) = self.step_op(t, cpu, prog, op, sys, &mut c) {
                // An op that ends the step leaves its work so far unpaid (only a migrating
                // exec has any: its search).
                self.run.unpaid = c.extra;
                return out;
            }
            self.run.unpaid = 0.0;
            let mut cost = c.cost;
            let mut user = c.user;
            cost += c.extra;
            if cost > 0.0 {
                let j = self.core.profile.cpu.jitter;
                if j > 0.0 {
                    let f = 1.0 + j * (2.0 * crate::rng::unit_f64(&mut self.run.noise) - 1.0);
                    cost *= f;
                    user *= f;
                }
                let task = &mut self.core.tasks[t];
                task.user_ns += user;
                task.seg_left += cost;
                // Mostly kernel work: a syscall, whose return to user is the op's end.
                task.in_syscall = user * 2.0 < cost;
                return StepOutcome::Run;
            }
        }
    }

    /// Runs one op of `t` (its cost goes into `c`): `None` when the op is done (or spinning,
    /// or waiting for its entry to be paid), else the outcome that ends the step.
    #[inline]
    fn step_op(
        &mut self,
        t: TaskId,
        cpu: CpuId,
        prog: &[Op],
        op: &Op,
        sys: Syscall,
        c: &mut OpCost,
    ) -> Option<StepOutcome> {
        match op {
            Op::Compute(d) => self.step_compute(t, cpu, d, c),
            Op::Send { ch, bytes } => return self.step_send(t, cpu, prog, *ch, bytes, sys, c),
            Op::Recv { ch } => return self.step_recv(t, cpu, *ch, sys, c),
            Op::FutexWait(f) => return self.step_futex_wait(t, cpu, *f, sys, c),
            Op::FutexWake { f, n } => self.step_futex_wake(t, cpu, prog, *f, *n, sys, c),
            Op::ListAdd(l) => {
                self.core.tasks[t].pc += 1;
                self.objects.lists[*l].push(t);
            }
            Op::WakeList(l) => self.step_wake_list(t, cpu, *l, sys, c),
            Op::WaitSelf => return self.step_wait_self(t, sys, c),
            Op::Sleep(_) | Op::Timer { .. } => return self.step_timer(t, op),
            Op::Lock { lock, spin_ns } => return self.step_lock(t, cpu, *lock, *spin_ns, c),
            Op::Unlock(lock) => self.step_unlock(t, cpu, *lock, sys, c),
            Op::Fork(_) | Op::WaitChildren | Op::Exec | Op::Exit | Op::Yield => {
                return self.step_process(t, cpu, op, sys, c);
            }
            Op::Barrier(b) => return self.step_barrier(t, cpu, *b, sys, c),
            Op::Loop(_) | Op::EndLoop => self.step_loop(t, prog, op),
            Op::Stamp(_) | Op::RecordSince { .. } | Op::Count { .. } | Op::CountLastRecv(_) => {
                self.step_record(t, op);
            }
            Op::RwLock { .. } | Op::RwUnlock(_) => return self.step_sync(t, cpu, op, sys, c),
        }
        None
    }

    /// A compute op: user time, slowed by the distance to the task's home node in
    /// proportion to its memory intensity.
    fn step_compute(&mut self, t: TaskId, cpu: CpuId, d: &Dist, c: &mut OpCost) {
        let mut work = self.sample(d) as f64;
        if let Some(f) = self.remote_memory_factor(t, cpu) {
            work *= f;
        }
        self.core.tasks[t].pc += 1;
        // User/system split: compute ops are user time.
        c.user = work;
        c.cost += work;
    }

    /// How much slower `t`'s memory-bound work runs on `cpu` than on its home node:
    /// `1 + remote_memory_slowdown × mem_intensity × (SLIT distance / 10 - 1)`, or `None`
    /// for a task without memory intensity or home node (nothing to scale).
    ///
    /// The test for "nothing to scale" is inlined into every compute and channel op: while
    /// no task has memory intensity (most workloads), one flag answers it; the rest is out
    /// of line.
    #[inline]
    pub(super) fn remote_memory_factor(&self, t: TaskId, cpu: CpuId) -> Option<f64> {
        if !self.core.mem_bound {
            return None;
        }
        self.remote_memory_factor_of(t, cpu)
    }

    /// [`Simulation::remote_memory_factor`] once some task has memory intensity.
    #[inline(never)]
    fn remote_memory_factor_of(&self, t: TaskId, cpu: CpuId) -> Option<f64> {
        let task = &self.core.tasks[t];
        if task.mem_intensity <= 0.0 {
            return None;
        }
        let home = task.home_node?;
        let dist = self
            .core
            .topo
            .node_distance(home, self.core.topo.cpu(cpu).node) as f64;
        let steps = (dist / 10.0 - 1.0).max(0.0);
        Some(1.0 + self.core.profile.cpu.remote_memory_slowdown * task.mem_intensity * steps)
    }

    /// The timed sleeps: a relative `Sleep`, or the next period of a periodic `Timer`.
    fn step_timer(&mut self, t: TaskId, op: &Op) -> Option<StepOutcome> {
        if std::mem::take(&mut self.objects.token[t]) {
            self.core.tasks[t].pc += 1;
            return None;
        }
        let at = match op {
            Op::Sleep(d) => {
                let dur = self.sample(d);
                self.core.now.saturating_add(dur)
            }
            Op::Timer { period_ns } => {
                let p = (*period_ns).max(1);
                let start = self.core.tasks[t].started_at;
                let k = (self.core.now - start) / p + 1;
                start + k * p
            }
            _ => return None,
        };
        self.arm_timer(t, at);
        Some(StepOutcome::Block(WaitOn::Timer))
    }

    /// The process ops: fork, waiting for the children, exec (with its placement), exit
    /// and yield.
    fn step_process(
        &mut self,
        t: TaskId,
        cpu: CpuId,
        op: &Op,
        sys: Syscall,
        c: &mut OpCost,
    ) -> Option<StepOutcome> {
        match op {
            Op::Fork(spec) => {
                self.core.tasks[t].pc += 1;
                c.cost += self.core.profile.cpu.fork_ns as f64;
                let ops = self.run.ops_started;
                let (_, search) = self.create_task(*spec, Some(t), cpu);
                // As for a wakeup (`wake_from`): a child that preempted another CPU's task
                // at once ran that task's next op inside this one, and the search is dropped.
                if self.run.ops_started == ops {
                    c.extra += search;
                } else {
                    c.extra = self.run.unpaid;
                }
            }
            Op::WaitChildren => {
                if self.core.tasks[t].live_children > 0 {
                    self.core.tasks[t].waiting_children = true;
                    return Some(StepOutcome::Block(WaitOn::Children));
                }
                self.objects.token[t] = false;
                self.core.tasks[t].pc += 1;
                c.cost += sys.full;
            }
            Op::Exec => {
                self.core.tasks[t].pc += 1;
                // The exec work runs on whichever CPU the task ends up on.
                self.core.tasks[t].seg_left += self.core.profile.cpu.exec_ns as f64;
                let (target, search) = self.select_cpu(t, Some(t), cpu, wake_flags::EXEC);
                // First touch after exec: the new image's memory is allocated where the
                // task runs after the exec (here, or on `target` at its next switch-in).
                if self.workload.specs[self.core.tasks[t].spec]
                    .home_node
                    .is_none()
                {
                    self.core.tasks[t].home_node =
                        (target == cpu).then(|| self.core.topo.cpu(cpu).node);
                }
                c.extra += search;
                if target != cpu {
                    // The task leaves before its search is charged: it stays unpaid.
                    return Some(StepOutcome::Migrate(target));
                }
            }
            Op::Yield => {
                self.core.tasks[t].pc += 1;
                self.stats.sched[cpu].yld_count += 1;
                return Some(StepOutcome::Yield);
            }
            _ => return Some(StepOutcome::Exit),
        }
        None
    }

    /// Loop structure: `Loop(n)` opens a loop of `n` rounds (`u64::MAX`: forever), `EndLoop`
    /// closes the innermost one.
    fn step_loop(&mut self, t: TaskId, prog: &[Op], op: &Op) {
        let task = &mut self.core.tasks[t];
        let pc = task.pc;
        if let Op::Loop(n) = op {
            if *n == 0 {
                task.pc = matching_end(prog, pc) + 1;
            } else {
                task.loops.push(pc + 1, *n);
                task.pc += 1;
            }
            return;
        }
        match task.loops.last_mut() {
            Some((start, left)) => {
                if *left != u64::MAX {
                    *left -= 1;
                }
                if *left > 0 {
                    task.pc = *start;
                } else {
                    task.loops.pop();
                    task.pc += 1;
                }
            }
            None => task.pc += 1,
        }
    }

    /// The measurement ops: time stamps, latency histograms and workload counters.
    fn step_record(&mut self, t: TaskId, op: &Op) {
        self.core.tasks[t].pc += 1;
        match op {
            Op::Stamp(slot) => match slot {
                Slot::Task(i) => self.core.tasks[t].slots[*i as usize % 8] = self.core.now,
                Slot::Global(g) => self.objects.global_slots[*g] = self.core.now,
            },
            Op::RecordSince { hist, slot } => {
                let start = match slot {
                    Slot::Task(i) => self.core.tasks[t].slots[*i as usize % 8],
                    Slot::Global(g) => self.objects.global_slots[*g],
                };
                let _ =
                    self.objects.hists[*hist].record(self.core.now.saturating_sub(start).max(1));
            }
            Op::Count { counter, amount } => {
                let a = self.sample(amount) as f64;
                self.objects.user_counters[*counter] += a;
            }
            Op::CountLastRecv(counter) => {
                self.objects.user_counters[*counter] += self.core.tasks[t].last_recv_bytes as f64;
            }
            _ => {}
        }
    }

    /// Wakes `p` on behalf of the running task `t` as the object's [`WakeRule`] says: with
    /// or without `WF_SYNC`, from the task itself or from the NET_RX softirq that the
    /// loopback transmit runs on `t`'s CPU (`current` is still `t` there, which is what
    /// `wake_affine()`, `wake_wide()` and the buddies see). The wakeup is charged to `extra`.
    pub(super) fn wake_by_rule(
        &mut self,
        p: TaskId,
        t: TaskId,
        cpu: CpuId,
        rule: WakeRule,
        extra: &mut f64,
    ) {
        let flags = if rule.sync {
            wake_flags::TTWU | wake_flags::SYNC
        } else {
            wake_flags::TTWU
        };
        let softirq = rule.context == WakeContext::Softirq;
        self.net.in_softirq = softirq;
        self.wake_from(p, t, cpu, flags, extra);
        self.net.in_softirq = false;
    }

    /// Wakes `p` on behalf of the running task `t` from `cpu`, whose current op has done
    /// `extra` ns of work so far: the one place where a waker pays for a wakeup
    /// ([`super::wakeup::WakeCost::charge`]).
    #[inline]
    pub(super) fn wake_from(
        &mut self,
        p: TaskId,
        t: TaskId,
        cpu: CpuId,
        flags: WakeFlags,
        extra: &mut f64,
    ) {
        let ops = self.run.ops_started;
        let cost = self.try_to_wake_up(p, Some(t), cpu, flags, *extra);
        if self.run.ops_started == ops {
            cost.charge(extra);
        } else {
            // The wakee preempted another CPU's task at once, whose next op ran inside
            // this one (a nested step): the waker's work so far is what that step left
            // unpaid (the model has always dropped it there).
            *extra = self.run.unpaid;
        }
    }

    /// When `t`'s next op is a receive or a futex wait, its syscall entry runs in the same
    /// segment as this op's exit (nothing happens between them), so it is charged now and
    /// the wait finds it paid: one segment instead of two, the same times.
    pub(super) fn enter_next_wait(&mut self, t: TaskId, prog: &[Op], entry: f64, c: &mut OpCost) {
        let task = &self.core.tasks[t];
        let mut pc = task.pc;
        if matches!(prog.get(pc), Some(Op::EndLoop)) {
            match task.loops.last() {
                Some((start, left)) if left > 1 => pc = start,
                _ => return,
            }
        }
        let obj = match prog.get(pc) {
            Some(Op::Recv { ch }) => Object::Channel(*ch),
            Some(Op::FutexWait(f)) => Object::Futex(*f),
            _ => return,
        };
        let cpu = self.core.tasks[t].cpu;
        c.extra += self.enter_wait(t, obj, cpu, entry);
    }

    /// The entry of `t`'s blocking call on `obj` from `cpu`: marks it paid and returns its
    /// cost (the syscall's entry half and the object's lines, taken under its lock).
    pub(super) fn enter_wait(&mut self, t: TaskId, obj: Object, cpu: CpuId, entry: f64) -> f64 {
        self.core.tasks[t].syscall_entered = true;
        entry + self.touch(obj, cpu)
    }

    /// Draws one value of `d` from the run's stream.
    pub(super) fn sample(&mut self, d: &Dist) -> u64 {
        d.sample(&mut self.run.rng)
    }

    pub(super) fn arm_timer(&mut self, t: TaskId, at: Time) {
        self.core.tasks[t].timer_gen = self.core.tasks[t].timer_gen.wrapping_add(1);
        let g_n = self.core.tasks[t].timer_gen;
        // The hrtimer goes on the CPU the task sleeps on (its `hrtimer_cpu_base`), where the
        // cpuidle governor sees it as the next timer.
        let cpu = self.core.tasks[t].cpu;
        // Drop the stale entries on top first: a CPU that never idles never reads its heap.
        self.next_timer_ns(cpu);
        self.idle.cpu_timers[cpu.index()].push(std::cmp::Reverse((at, t.index() as u32, g_n)));
        self.events.push(
            at,
            Event::Timer {
                task: t.index() as u32,
                g_n,
            },
        );
    }

    /// Time until the earliest live sleep timer armed on `cpu` (`None` if none), dropping
    /// the fired and superseded ones on top of its heap.
    pub(super) fn next_timer_ns(&mut self, cpu: CpuId) -> Option<u64> {
        let heap = &mut self.idle.cpu_timers[cpu.index()];
        while let Some(&std::cmp::Reverse((at, task, g_n))) = heap.peek() {
            let t = &self.core.tasks[TaskId::new(task as usize)];
            if at >= self.core.now
                && t.timer_gen == g_n
                && t.state == TaskState::Sleeping(WaitOn::Timer)
            {
                return Some(at - self.core.now);
            }
            heap.pop();
        }
        None
    }
}

fn matching_end(prog: &[Op], loop_pc: usize) -> usize {
    let mut depth = 0;
    for (i, op) in prog.iter().enumerate().skip(loop_pc) {
        match op {
            Op::Loop(_) => depth += 1,
            Op::EndLoop => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    prog.len()
}
