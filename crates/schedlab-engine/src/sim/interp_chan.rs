//! The interpreter arms of the channel ops ([`Op::Send`], [`Op::Recv`]): pipes, UNIX and
//! loopback TCP sockets, with their syscall halves, copies, object lines and wakeups.
//!
//! State: reads and writes `core` (tasks), `objects` (channels), `net` (the softirq backlog)
//! and `stats` (counters); reads the rest of `core`. Wakeups go through
//! [`Simulation::wake_by_rule`], which charges them to the op's [`OpCost`].
//!
//! [`Op::Send`]: crate::task::Op::Send
//! [`Op::Recv`]: crate::task::Op::Recv

use super::Simulation;
use super::contention::Object;
use super::cost::Distance;
use super::interp::{OpCost, StepOutcome, Syscall};
use crate::dist::Dist;
use crate::ipc::{ChannelKind, RecvOutcome, SendOutcome};
use crate::state::WaitOn;
use crate::task::{Op, TaskId};
use schedlab_topo::CpuId;

impl Simulation {
    /// A channel op's kernel work for task `t` on `cpu`: `channel_op_ns`, slowed by the
    /// remote-memory factor of a task with memory intensity away from its home node. The
    /// kernel work of a socket or pipe call touches the task's kernel stack and
    /// `task_struct`, which `dup_task_struct()` allocates on the forking CPU's node, and
    /// objects its creator allocated (`sk_alloc()`, `alloc_pipe_info()`: the creating
    /// CPU's node). A workload gives its tasks a memory intensity only where it says so
    /// (hackbench's `mem_intensity`, 0 by default).
    fn kernel_op_ns(&self, t: TaskId, cpu: CpuId, ch: usize, send: bool) -> f64 {
        let ns = self.channel_op_ns(ch, send);
        match self.remote_memory_factor(t, cpu) {
            Some(f) => ns * f,
            None => ns,
        }
    }

    /// A send on channel `ch`: the message is queued (or the writer sleeps on a full
    /// channel), the reader is woken, and for loopback the receive softirq runs here.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn step_send(
        &mut self,
        t: TaskId,
        cpu: CpuId,
        prog: &[Op],
        ch: usize,
        bytes: &Dist,
        sys: Syscall,
        c: &mut OpCost,
    ) -> Option<StepOutcome> {
        let n = self.sample(bytes);
        let kind = self.objects.channels[ch].kind;
        let tcp = matches!(kind, ChannelKind::Tcp { .. });
        let sent = self.objects.channels[ch].try_send(n, cpu);
        if tcp && matches!(sent, SendOutcome::Sent { .. }) {
            // The data carries the ACK this task's last receive owes.
            self.tcp_reply_sent(t);
        }
        match sent {
            SendOutcome::Sent { .. } if kind.is_loopback() && self.softirq_deferred(cpu) => {
                // 4.10-6.4: this CPU's ksoftirqd is runnable, so the NET_RX softirq the
                // transmit raised waits for it: the send returns without the receive
                // processing, and the reader cannot see the message until ksoftirqd
                // delivers it (`sim/softirq.rs`).
                self.core.tasks[t].pc += 1;
                c.extra += sys.full
                    + self.kernel_op_ns(t, cpu, ch, false)
                    + n as f64 * self.core.profile.transfer.copy_ns_per_byte
                    + self.touch(Object::Channel(ch), cpu);
                self.objects.channels[ch].hidden += 1;
                self.net.softirq.backlog[cpu].push(ch as u32);
                self.stats.counters.softirq_deferred += 1;
                self.enter_next_wait(t, prog, sys.entry, c);
            }
            SendOutcome::Sent { wake_reader } => {
                self.core.tasks[t].pc += 1;
                // Pre-wake work goes into the op's `extra` so a remote wakee's arrival is
                // delayed by it (the IPI leaves at the end of it): the syscall entry, the
                // copy, the object's lines and the kernel work up to the wakeup (for
                // loopback, the softirq receive path that issues it).
                c.extra += sys.entry
                    + self.kernel_op_ns(t, cpu, ch, true)
                    + n as f64 * self.core.profile.transfer.copy_ns_per_byte
                    + self.touch(Object::Channel(ch), cpu);
                if kind.is_loopback() {
                    self.stats.counters.softirq_ns += self.core.profile.transfer.tcp_delivery_ns;
                }
                if wake_reader && let Some(r) = self.objects.channels[ch].readers.pop_front() {
                    let rule = self.core.cfg.wake.reader(kind);
                    self.wake_by_rule(r, t, cpu, rule, &mut c.extra);
                }
                if tcp {
                    // After the wakeup the receive softirq decides the ACK.
                    c.extra += self.tcp_segment_received(ch, cpu, n) as f64;
                }
                if kind.is_loopback() {
                    // The softirq ran over the end of the pre-wake work.
                    let end = self.core.now
                        + crate::time::round_u64(self.core.tasks[t].seg_left + c.extra);
                    let d = self.core.profile.transfer.tcp_delivery_ns;
                    self.softirq_exit(t, cpu, end.saturating_sub(d), end, &mut c.extra);
                }
                // The syscall exit runs after the wakeup (pipe_write(),
                // unix_stream_sendmsg() and tcp_sendmsg() wake the reader before they
                // return): a remote wakee starts meanwhile.
                c.extra += sys.exit;
                self.enter_next_wait(t, prog, sys.entry, c);
            }
            SendOutcome::Full => {
                self.objects.channels[ch].writers.push_back(t);
                return Some(StepOutcome::Block(WaitOn::ChannelWrite(ch)));
            }
        }
        None
    }

    /// A receive on channel `ch`: takes a message (paying for its transfer from the
    /// writer's CPU) and wakes blocked writers, or pays the entry and then sleeps.
    pub(super) fn step_recv(
        &mut self,
        t: TaskId,
        cpu: CpuId,
        ch: usize,
        sys: Syscall,
        c: &mut OpCost,
    ) -> Option<StepOutcome> {
        match self.objects.channels[ch].try_recv() {
            RecvOutcome::Got { msg, wake_writers } => {
                self.core.tasks[t].pc += 1;
                self.core.tasks[t].last_recv_bytes = msg.bytes;
                // The object's lines (again, after a sleep: the writer moved them).
                let lines = self.touch(Object::Channel(ch), cpu);
                let tr = &self.core.profile.transfer;
                let d = Distance::of(&self.core.topo, CpuId::new(msg.cpu as usize), cpu);
                let meta = self.refetch_per_line(d) * tr.message_lines;
                let extra = self.transfer_per_byte(d) * msg.bytes as f64 + meta;
                self.stats.counters.transfer_cost_ns += extra as u64;
                // A receive that slept paid its entry before.
                let paid = std::mem::take(&mut self.core.tasks[t].syscall_entered);
                let enter = if paid { 0.0 } else { sys.entry };
                if matches!(self.objects.channels[ch].kind, ChannelKind::Tcp { .. }) {
                    self.core.tasks[t].tcp_in = Some(ch as u32);
                }
                c.extra += enter
                    + lines
                    + sys.exit
                    + msg.bytes as f64 * tr.copy_ns_per_byte
                    + extra
                    + self.kernel_op_ns(t, cpu, ch, false);
                let n = wake_writers.min(self.objects.channels[ch].writers.len());
                let rule = self.core.cfg.wake.writer(self.objects.channels[ch].kind);
                for _ in 0..n {
                    if let Some(w) = self.objects.channels[ch].writers.pop_front() {
                        self.wake_by_rule(w, t, cpu, rule, &mut c.extra);
                    }
                }
                None
            }
            RecvOutcome::Empty if !self.core.tasks[t].syscall_entered => {
                // The syscall entry and the check under the object's lock run before the
                // reader sleeps (pipe_read(), unix_stream_read_generic(), tcp_recvmsg() →
                // sk_wait_data()); the check is made again after.
                c.cost += self.enter_wait(t, Object::Channel(ch), cpu, sys.entry);
                None
            }
            RecvOutcome::Empty => {
                self.objects.channels[ch].readers.push_back(t);
                Some(StepOutcome::Block(WaitOn::ChannelRead(ch)))
            }
        }
    }
}
