//! The op interpreter: runs a task's program (`Op`s) until it needs CPU time, blocks, yields,
//! exits or migrates at exec, and turns the outcome into a segment, a block or a switch.

use super::Simulation;
use super::contention::Object;
use super::cost::Distance;
use super::queue::Event;
use crate::dist::Dist;
use crate::ipc::{ChannelKind, RecvOutcome, SendOutcome};
use crate::policy::wake_flags;
use crate::state::{TaskState, WaitOn};
use crate::task::{LockRef, Op, Slot, TaskId, WAKE_ALL};
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

impl Simulation {
    pub(super) fn continue_task(&mut self, cpu: CpuId) {
        let Some(t) = self.cpus[cpu].curr else { return };
        self.executing = Some(cpu);
        let outcome = self.step_task(t, cpu);
        self.executing = None;
        match outcome {
            StepOutcome::Run => {
                if self.cpus[cpu].need_resched {
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
                self.tasks[t].state = TaskState::Waking(target);
                self.schedule(cpu, Some(PrevState::Runnable));
                // The exec replaced the image: no old working set to refetch on `target`.
                self.tasks[t].last_ran_cpu = None;
                self.migrate_task(t, target, false);
                self.cpus[target].pending += 1;
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
        self.nr_active -= 1;
        if w == WaitOn::Timer {
            self.nr_timers += 1;
        }
        // 2.6.2x avg_overlap: EWMA (1/8) of run time since the task last woke someone.
        {
            let task = &mut self.tasks[t];
            let ov = task.ran_since_wake;
            task.avg_overlap =
                (task.avg_overlap as i64 + (ov as i64 - task.avg_overlap as i64) / 8) as u64;
        }
        if self.should_delay_dequeue(cpu, t) {
            self.tasks[t].state = TaskState::Sleeping(w);
            self.tasks[t].delayed = true;
            self.cpus[cpu].nr_delayed += 1;
            self.rq_insert(cpu, t);
            return;
        }
        self.save_lag(cpu, t);
        self.leave_runnable(cpu, t);
        self.tasks[t].state = TaskState::Sleeping(w);
    }

    pub(super) fn resolve_lock(&self, lock: LockRef, cpu: CpuId) -> usize {
        match lock {
            LockRef::Fixed(m) => m,
            LockRef::PerCpu(base) => base + cpu.index(),
        }
    }

    /// Executes ops of the running task `t` until it needs CPU time, blocks or exits.
    pub(super) fn step_task(&mut self, t: TaskId, cpu: CpuId) -> StepOutcome {
        // SAFETY: the program is an `Arc<[Op]>` held by the task for its whole life and never
        // replaced; the slice's heap allocation does not move when `self.tasks` grows, so the
        // pointer stays valid while ops run (avoids an atomic refcount per step).
        let prog: &[Op] = unsafe { &*std::sync::Arc::as_ptr(&self.tasks[t].program) };
        if self.is_kthread(t) {
            return self.step_ksoftirqd(t, cpu);
        }
        let syscall = self.profile.cpu.syscall_ns as f64;
        // A syscall's entry and exit paths, taken as halves of `cpu.syscall_ns`
        // (reconstructed [M]): a send's exit runs after its wakeup, a blocking call's entry
        // before it sleeps.
        let entry = syscall / 2.0;
        let exit = syscall - entry;
        loop {
            if self.cpus[cpu].need_resched {
                return StepOutcome::Preempt;
            }
            let pc = self.tasks[t].pc;
            let Some(op) = prog.get(pc) else {
                return StepOutcome::Exit;
            };
            self.op_extra_cost = 0.0;
            let mut cost = 0.0;
            let mut user = 0.0;
            match op {
                Op::Compute(d) => {
                    let mut work = self.sample(d) as f64;
                    let task = &self.tasks[t];
                    if task.mem_intensity > 0.0
                        && let Some(home) = task.home_node
                    {
                        let dist = self.topo.node_distance(home, self.topo.cpu(cpu).node) as f64;
                        let steps = (dist / 10.0 - 1.0).max(0.0);
                        work *= 1.0
                            + self.profile.cpu.remote_memory_slowdown * task.mem_intensity * steps;
                    }
                    self.tasks[t].pc += 1;
                    // User/system split: compute ops are user time.
                    user = work;
                    cost += work;
                }
                Op::Send { ch, bytes } => {
                    let n = self.sample(bytes);
                    let kind = self.channels[*ch].kind;
                    let tcp = matches!(kind, ChannelKind::Tcp { .. });
                    let sent = self.channels[*ch].try_send(n, cpu, self.now);
                    if tcp && matches!(sent, SendOutcome::Sent { .. }) {
                        // The data carries the ACK this task's last receive owes.
                        self.tcp_reply_sent(t);
                    }
                    match sent {
                        SendOutcome::Sent { .. }
                            if kind.is_loopback() && self.softirq_deferred(cpu) =>
                        {
                            // 4.10-6.4: this CPU's ksoftirqd is runnable, so the NET_RX
                            // softirq the transmit raised waits for it: the send returns
                            // without the receive processing, and the reader cannot see
                            // the message until ksoftirqd delivers it (`sim/softirq.rs`).
                            self.tasks[t].pc += 1;
                            self.op_extra_cost += syscall
                                + self.channel_op_ns(*ch, false)
                                + n as f64 * self.profile.transfer.copy_ns_per_byte
                                + self.touch(Object::Channel(*ch), cpu);
                            self.channels[*ch].hidden += 1;
                            self.softirq.backlog[cpu].push(*ch as u32);
                            self.counters.softirq_deferred += 1;
                            self.enter_next_wait(t, prog, entry);
                        }
                        SendOutcome::Sent { wake_reader } => {
                            self.tasks[t].pc += 1;
                            // Pre-wake work goes into op_extra_cost so a remote wakee's
                            // arrival is delayed by it (the IPI leaves at the end of it):
                            // the syscall entry, the copy, the object's lines and the
                            // kernel work up to the wakeup (for loopback, the softirq
                            // receive path that issues it).
                            self.op_extra_cost += entry
                                + self.channel_op_ns(*ch, true)
                                + n as f64 * self.profile.transfer.copy_ns_per_byte
                                + self.touch(Object::Channel(*ch), cpu);
                            if kind.is_loopback() {
                                self.counters.softirq_ns += self.profile.transfer.tcp_delivery_ns;
                            }
                            if wake_reader && let Some(r) = self.channels[*ch].readers.pop_front() {
                                let rule = self.cfg.wake.reader(kind);
                                self.wake_by_rule(r, t, cpu, rule);
                            }
                            if tcp {
                                // After the wakeup the receive softirq decides the ACK.
                                self.op_extra_cost += self.tcp_segment_received(*ch, cpu, n) as f64;
                            }
                            if kind.is_loopback() {
                                // The softirq ran over the end of the pre-wake work.
                                let end = self.now
                                    + crate::time::round_u64(
                                        self.tasks[t].seg_left + self.op_extra_cost,
                                    );
                                let d = self.profile.transfer.tcp_delivery_ns;
                                self.softirq_exit(t, cpu, end.saturating_sub(d), end);
                            }
                            // The syscall exit runs after the wakeup (pipe_write(),
                            // unix_stream_sendmsg() and tcp_sendmsg() wake the reader
                            // before they return): a remote wakee starts meanwhile.
                            self.op_extra_cost += exit;
                            self.enter_next_wait(t, prog, entry);
                        }
                        SendOutcome::Full => {
                            self.channels[*ch].writers.push_back(t);
                            return StepOutcome::Block(WaitOn::ChannelWrite(*ch));
                        }
                    }
                }
                Op::Recv { ch } => match self.channels[*ch].try_recv() {
                    RecvOutcome::Got { msg, wake_writers } => {
                        self.tasks[t].pc += 1;
                        self.tasks[t].last_recv_bytes = msg.bytes;
                        // The object's lines (again, after a sleep: the writer moved them).
                        let lines = self.touch(Object::Channel(*ch), cpu);
                        let tr = &self.profile.transfer;
                        let d = Distance::of(&self.topo, CpuId::new(msg.cpu as usize), cpu);
                        let meta = self.refetch_per_line(d) * tr.message_lines;
                        let extra = self.transfer_per_byte(d) * msg.bytes as f64 + meta;
                        self.counters.transfer_cost_ns += extra as u64;
                        // A receive that slept paid its entry before.
                        let paid = std::mem::take(&mut self.tasks[t].syscall_entered);
                        let enter = if paid { 0.0 } else { entry };
                        if matches!(self.channels[*ch].kind, ChannelKind::Tcp { .. }) {
                            self.tasks[t].tcp_in = Some(*ch as u32);
                        }
                        self.op_extra_cost += enter
                            + lines
                            + exit
                            + msg.bytes as f64 * tr.copy_ns_per_byte
                            + extra
                            + self.channel_op_ns(*ch, false);
                        let n = wake_writers.min(self.channels[*ch].writers.len());
                        let rule = self.cfg.wake.writer(self.channels[*ch].kind);
                        for _ in 0..n {
                            if let Some(w) = self.channels[*ch].writers.pop_front() {
                                self.wake_by_rule(w, t, cpu, rule);
                            }
                        }
                    }
                    RecvOutcome::Empty if !self.tasks[t].syscall_entered => {
                        // The syscall entry and the check under the object's lock run
                        // before the reader sleeps (pipe_read(), unix_stream_read_generic(),
                        // tcp_recvmsg() → sk_wait_data()); the check is made again after.
                        cost += self.enter_wait(t, Object::Channel(*ch), cpu, entry);
                    }
                    RecvOutcome::Empty => {
                        self.channels[*ch].readers.push_back(t);
                        return StepOutcome::Block(WaitOn::ChannelRead(*ch));
                    }
                },
                Op::FutexWait(f) => {
                    if std::mem::take(&mut self.token[t])
                        || std::mem::take(&mut self.futexes[*f].posted)
                    {
                        self.tasks[t].pc += 1;
                        cost += if std::mem::take(&mut self.tasks[t].syscall_entered) {
                            exit
                        } else {
                            syscall + self.touch(Object::Futex(*f), cpu)
                        };
                    } else if !self.tasks[t].syscall_entered {
                        // futex_wait(): the entry, the bucket lock and the word check run
                        // before the sleep; the word is checked again after them.
                        cost += self.enter_wait(t, Object::Futex(*f), cpu, entry);
                    } else {
                        self.futexes[*f].waiters.push_back(t);
                        return StepOutcome::Block(WaitOn::Futex(*f));
                    }
                }
                Op::FutexWake { f, n } => {
                    self.tasks[t].pc += 1;
                    // The exit of the FUTEX_WAKE syscall runs after the wakeups.
                    self.op_extra_cost += entry + self.touch(Object::Futex(*f), cpu);
                    if self.futexes[*f].waiters.is_empty() {
                        self.futexes[*f].posted = true;
                    }
                    let mut left = *n;
                    while left > 0 {
                        let Some(w) = self.futexes[*f].waiters.pop_front() else {
                            break;
                        };
                        self.token[w] = true;
                        self.try_to_wake_up(w, Some(t), cpu, wake_flags::TTWU);
                        if left != WAKE_ALL {
                            left -= 1;
                        }
                    }
                    self.op_extra_cost += exit;
                    self.enter_next_wait(t, prog, entry);
                }
                Op::ListAdd(l) => {
                    self.tasks[t].pc += 1;
                    self.lists[*l].push(t);
                }
                Op::WakeList(l) => {
                    self.tasks[t].pc += 1;
                    let list = std::mem::take(&mut self.lists[*l]);
                    for &w in &list {
                        self.op_extra_cost += syscall;
                        if self.tasks[w].state == TaskState::Sleeping(WaitOn::SelfEvent) {
                            self.token[w] = true;
                            self.try_to_wake_up(w, Some(t), cpu, wake_flags::TTWU);
                        } else {
                            self.tasks[w].self_posted = true;
                        }
                    }
                    let mut list = list;
                    list.clear();
                    if self.lists[*l].is_empty() {
                        self.lists[*l] = list;
                    }
                }
                Op::WaitSelf => {
                    if std::mem::take(&mut self.token[t])
                        || std::mem::take(&mut self.tasks[t].self_posted)
                    {
                        self.tasks[t].pc += 1;
                        cost += syscall;
                    } else {
                        return StepOutcome::Block(WaitOn::SelfEvent);
                    }
                }
                Op::Sleep(d) => {
                    if std::mem::take(&mut self.token[t]) {
                        self.tasks[t].pc += 1;
                    } else {
                        let dur = self.sample(d);
                        self.arm_timer(t, self.now.saturating_add(dur));
                        return StepOutcome::Block(WaitOn::Timer);
                    }
                }
                Op::Timer { period_ns } => {
                    if std::mem::take(&mut self.token[t]) {
                        self.tasks[t].pc += 1;
                    } else {
                        let p = (*period_ns).max(1);
                        let start = self.tasks[t].started_at;
                        let k = (self.now - start) / p + 1;
                        self.arm_timer(t, start + k * p);
                        return StepOutcome::Block(WaitOn::Timer);
                    }
                }
                Op::Lock { lock, spin_ns } => {
                    let m = self.resolve_lock(*lock, cpu);
                    if m >= self.mutexes.len() {
                        // PerCpu locks beyond the declared range: treat as uncontended.
                        self.tasks[t].pc += 1;
                        continue;
                    }
                    let owner = self.mutexes[m].owner;
                    if owner.is_none() || owner == Some(t) {
                        self.mutexes[m].owner = Some(t);
                        self.token[t] = false;
                        self.tasks[t].pc += 1;
                        self.tasks[t].spin_left = 0;
                        cost += self.touch(Object::Mutex(m), cpu);
                    } else {
                        let o = owner.unwrap_or(t);
                        let pure_spin = *spin_ns == u64::MAX;
                        if self.tasks[t].spin_left == 0 {
                            self.tasks[t].spin_left = (*spin_ns).max(1);
                        }
                        let owner_running = matches!(self.tasks[o].state, TaskState::Running(_));
                        if pure_spin || (owner_running && self.tasks[t].spin_left > 1) {
                            let q = 500u64.min(self.tasks[t].spin_left);
                            if !pure_spin {
                                self.tasks[t].spin_left -= q.min(self.tasks[t].spin_left - 1);
                            }
                            cost += q as f64;
                        } else {
                            self.tasks[t].spin_left = 0;
                            self.mutexes[m].waiters.push_back(t);
                            return StepOutcome::Block(WaitOn::Mutex(m));
                        }
                    }
                }
                Op::Unlock(lock) => {
                    let m = self.resolve_lock(*lock, cpu);
                    self.tasks[t].pc += 1;
                    if m < self.mutexes.len() {
                        // The owner may have migrated since locking a per-CPU lock: find it.
                        let m = if self.mutexes[m].owner == Some(t) {
                            m
                        } else {
                            self.mutexes
                                .iter()
                                .position(|x| x.owner == Some(t))
                                .unwrap_or(m)
                        };
                        if self.mutexes[m].owner == Some(t) {
                            self.mutexes[m].owner = None;
                            self.op_extra_cost += self.touch(Object::Mutex(m), cpu);
                            if let Some(w) = self.mutexes[m].waiters.pop_front() {
                                self.mutexes[m].owner = Some(w);
                                self.token[w] = true;
                                // The FUTEX_WAKE that hands the lock over: its exit runs
                                // after the wakeup.
                                self.op_extra_cost += entry;
                                self.try_to_wake_up(w, Some(t), cpu, wake_flags::TTWU);
                                self.op_extra_cost += exit;
                            }
                        }
                    }
                }
                Op::Fork(spec) => {
                    self.tasks[t].pc += 1;
                    cost += self.profile.cpu.fork_ns as f64;
                    self.create_task(*spec, Some(t), cpu);
                }
                Op::WaitChildren => {
                    if self.tasks[t].live_children == 0 {
                        self.token[t] = false;
                        self.tasks[t].pc += 1;
                        cost += syscall;
                    } else {
                        self.tasks[t].waiting_children = true;
                        return StepOutcome::Block(WaitOn::Children);
                    }
                }
                Op::Barrier(b) => {
                    if std::mem::take(&mut self.token[t]) {
                        self.tasks[t].pc += 1;
                    } else {
                        self.barriers[*b].waiting.push(t);
                        if self.barriers[*b].waiting.len() as u32 >= self.barriers[*b].parties {
                            let waiting = std::mem::take(&mut self.barriers[*b].waiting);
                            self.tasks[t].pc += 1;
                            self.op_extra_cost += syscall;
                            for &w in waiting.iter().filter(|&&w| w != t) {
                                self.token[w] = true;
                                self.try_to_wake_up(w, Some(t), cpu, wake_flags::TTWU);
                            }
                        } else {
                            return StepOutcome::Block(WaitOn::Barrier(*b));
                        }
                    }
                }
                Op::Yield => {
                    self.tasks[t].pc += 1;
                    return StepOutcome::Yield;
                }
                Op::Exec => {
                    self.tasks[t].pc += 1;
                    // The exec work runs on whichever CPU the task ends up on.
                    self.tasks[t].seg_left += self.profile.cpu.exec_ns as f64;
                    let target = self.select_cpu(t, Some(t), cpu, wake_flags::EXEC);
                    // First touch after exec: the new image's memory is allocated where the
                    // task runs after the exec (here, or on `target` at its next switch-in).
                    if self.workload.specs[self.tasks[t].spec].home_node.is_none() {
                        self.tasks[t].home_node = (target == cpu).then(|| self.topo.cpu(cpu).node);
                    }
                    if target != cpu {
                        return StepOutcome::Migrate(target);
                    }
                }
                Op::Loop(n) => {
                    if *n == 0 {
                        self.tasks[t].pc = matching_end(prog, pc) + 1;
                    } else {
                        self.tasks[t].loops.push(pc + 1, *n);
                        self.tasks[t].pc += 1;
                    }
                }
                Op::EndLoop => {
                    let task = &mut self.tasks[t];
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
                Op::Stamp(slot) => {
                    self.tasks[t].pc += 1;
                    match slot {
                        Slot::Task(i) => self.tasks[t].slots[*i as usize % 8] = self.now,
                        Slot::Global(g) => self.global_slots[*g] = self.now,
                    }
                }
                Op::RecordSince { hist, slot } => {
                    self.tasks[t].pc += 1;
                    let start = match slot {
                        Slot::Task(i) => self.tasks[t].slots[*i as usize % 8],
                        Slot::Global(g) => self.global_slots[*g],
                    };
                    let _ = self.hists[*hist].record(self.now.saturating_sub(start).max(1));
                }
                Op::Count { counter, amount } => {
                    self.tasks[t].pc += 1;
                    let a = self.sample(amount) as f64;
                    self.user_counters[*counter] += a;
                }
                Op::CountLastRecv(counter) => {
                    self.tasks[t].pc += 1;
                    self.user_counters[*counter] += self.tasks[t].last_recv_bytes as f64;
                }
                Op::Exit => return StepOutcome::Exit,
                Op::RwLock { .. } | Op::RwUnlock(_) => {
                    if let Some(out) = self.step_sync(t, cpu, op, &mut cost) {
                        return out;
                    }
                }
            }
            cost += self.op_extra_cost;
            self.op_extra_cost = 0.0;
            if cost > 0.0 {
                let j = self.profile.cpu.jitter;
                if j > 0.0 {
                    let f = 1.0 + j * (2.0 * crate::rng::unit_f64(&mut self.noise) - 1.0);
                    cost *= f;
                    user *= f;
                }
                self.tasks[t].user_ns += user;
                self.tasks[t].seg_left += cost;
                return StepOutcome::Run;
            }
        }
    }

    /// Wakes `p` on behalf of the running task `t` as the object's [`WakeRule`] says: with
    /// or without `WF_SYNC`, from the task itself or from the NET_RX softirq that the
    /// loopback transmit runs on `t`'s CPU (`current` is still `t` there, which is what
    /// `wake_affine()`, `wake_wide()` and the buddies see).
    pub(super) fn wake_by_rule(&mut self, p: TaskId, t: TaskId, cpu: CpuId, rule: WakeRule) {
        let flags = if rule.sync {
            wake_flags::TTWU | wake_flags::SYNC
        } else {
            wake_flags::TTWU
        };
        let softirq = rule.context == WakeContext::Softirq;
        self.in_softirq = softirq;
        self.try_to_wake_up(p, Some(t), cpu, flags);
        self.in_softirq = false;
    }

    /// When `t`'s next op is a receive or a futex wait, its syscall entry runs in the same
    /// segment as this op's exit (nothing happens between them), so it is charged now and
    /// the wait finds it paid: one segment instead of two, the same times.
    fn enter_next_wait(&mut self, t: TaskId, prog: &[Op], entry: f64) {
        let task = &self.tasks[t];
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
        let cpu = self.tasks[t].cpu;
        self.op_extra_cost += self.enter_wait(t, obj, cpu, entry);
    }

    /// The entry of `t`'s blocking call on `obj` from `cpu`: marks it paid and returns its
    /// cost (the syscall's entry half and the object's lines, taken under its lock).
    fn enter_wait(&mut self, t: TaskId, obj: Object, cpu: CpuId, entry: f64) -> f64 {
        self.tasks[t].syscall_entered = true;
        entry + self.touch(obj, cpu)
    }

    pub(super) fn sample(&mut self, d: &Dist) -> u64 {
        d.sample(&mut self.rng)
    }

    pub(super) fn arm_timer(&mut self, t: TaskId, at: Time) {
        self.tasks[t].timer_gen = self.tasks[t].timer_gen.wrapping_add(1);
        let g_n = self.tasks[t].timer_gen;
        // The hrtimer goes on the CPU the task sleeps on (its `hrtimer_cpu_base`), where the
        // cpuidle governor sees it as the next timer.
        let cpu = self.tasks[t].cpu;
        // Drop the stale entries on top first: a CPU that never idles never reads its heap.
        self.next_timer_ns(cpu);
        self.cpu_timers[cpu.index()].push(std::cmp::Reverse((at, t.index() as u32, g_n)));
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
        let heap = &mut self.cpu_timers[cpu.index()];
        while let Some(&std::cmp::Reverse((at, task, g_n))) = heap.peek() {
            let t = &self.tasks[TaskId::new(task as usize)];
            if at >= self.now && t.timer_gen == g_n && t.state == TaskState::Sleeping(WaitOn::Timer)
            {
                return Some(at - self.now);
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
