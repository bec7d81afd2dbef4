//! TCP acknowledgements on loopback: immediate, delayed, and carried on the reply.
//!
//! The receive side of a loopback TCP segment runs in the NET_RX softirq of the sending CPU
//! (`sim/softirq.rs`). After it queues the data and wakes the reader, `tcp_rcv_established()`
//! decides the ACK (`__tcp_ack_snd_check()`, tcp_input.c, the same rule from 2.6 to 6.x):
//!
//! - **now**, when the socket is in quickack mode (`icsk_ack.quick` left and not in pingpong
//!   mode: the first segments of a connection, up to `TCP_MAX_QUICKACKS` = 16), or when more
//!   than one full-sized segment is unacknowledged. The ACK is transmitted from the softirq
//!   into the loopback device and received in the same `net_rx_action()` loop on the same
//!   CPU (`tcp_ack()` on the sender's socket): one more segment's receive work there;
//! - **later** otherwise (`tcp_send_delayed_ack()`): a timer at `ato`, at least
//!   `TCP_DELACK_MIN` = 40 ms, armed on that CPU. When the receiver sends data before it fires,
//!   the data carries the ACK and the timer is cancelled (`tcp_event_ack_sent()`); a reply
//!   within `ato` of the last receive also puts the socket in pingpong (interactive) mode
//!   (`tcp_event_data_sent()`), which ends quickack: a request-response pair then sends no
//!   ACK of its own. When the timer fires, the ACK's work interrupts whatever that CPU runs
//!   (`tcp_delack_timer()`), and the socket leaves pingpong mode.
//!
//! Reconstructed \[M\]: the ACK of a segment costs one `transfer.tcp_delivery_ns` (the
//! receive path of one segment); a reply is the receiving task's next TCP send on any
//! channel (exact for one connection per task, as in tbench and netperf); `ato` stays at its
//! 40 ms minimum; the loopback MSS is taken as 65,483 bytes (MTU 65,536); 5.x's pingpong
//! threshold of three replies (4a41f453bedf, reverted in 6.x) is not modelled.
//!
//! State: reads and writes `net` (ACK state) and `stats` (counters); reads `core` and
//! `objects` (a channel's kind); pushes events.

use super::Simulation;
use super::queue::Event;
use crate::ipc::ChannelKind;
use crate::task::TaskId;
use crate::time::Time;
use schedlab_topo::CpuId;

/// `TCP_MAX_QUICKACKS`.
pub(crate) const MAX_QUICKACKS: u8 = 16;
/// `TCP_DELACK_MIN` (HZ/25), ns.
pub(crate) const DELACK_MIN_NS: Time = 40_000_000;
/// MSS of the loopback device (MTU 65,536 minus the IP and TCP headers with timestamps).
pub(crate) const LOOPBACK_MSS: u64 = 65_483;

/// ACK state of one TCP channel's receiving socket.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AckState {
    quick: u8,
    pingpong: bool,
    unacked_bytes: u64,
    last_rcv: Time,
    /// A delayed ACK armed on this CPU, with the generation of its timer event.
    pending: Option<CpuId>,
    gen_n: u32,
}

impl Default for AckState {
    fn default() -> Self {
        AckState {
            quick: MAX_QUICKACKS,
            pingpong: false,
            unacked_bytes: 0,
            last_rcv: 0,
            pending: None,
            gen_n: 0,
        }
    }
}

impl Simulation {
    fn ack_state(&mut self, ch: usize) -> &mut AckState {
        if self.net.tcp_ack.len() <= ch {
            self.net.tcp_ack.resize(ch + 1, AckState::default());
        }
        &mut self.net.tcp_ack[ch]
    }

    /// A segment of `bytes` on TCP channel `ch` was received in softirq on `cpu`: decide its
    /// ACK. Returns the work of an ACK sent now (to add to the softirq's time), else 0.
    pub(super) fn tcp_segment_received(&mut self, ch: usize, cpu: CpuId, bytes: u64) -> u64 {
        if !matches!(self.objects.channels[ch].kind, ChannelKind::Tcp { .. }) {
            return 0;
        }
        let now = self.core.now;
        let cost = self.core.profile.transfer.tcp_delivery_ns;
        let a = self.ack_state(ch);
        a.unacked_bytes += bytes.max(1);
        a.last_rcv = now;
        let quick = a.quick > 0 && !a.pingpong;
        if quick || a.unacked_bytes > LOOPBACK_MSS {
            if quick {
                a.quick -= 1;
            }
            a.unacked_bytes = 0;
            a.pending = None;
            self.stats.counters.tcp_acks_now += 1;
            self.stats.counters.softirq_ns += cost;
            return cost;
        }
        if a.pending.is_none() {
            a.pending = Some(cpu);
            a.gen_n = a.gen_n.wrapping_add(1);
            let g_n = a.gen_n;
            self.events.push(
                now + DELACK_MIN_NS,
                Event::DelayedAck { ch: ch as u32, g_n },
            );
        }
        0
    }

    /// Task `t` sends on a TCP channel: the data carries the ACK its last TCP receive owes,
    /// and a reply within `ato` of that receive makes the socket interactive.
    pub(super) fn tcp_reply_sent(&mut self, t: TaskId) {
        let Some(ch) = self.core.tasks[t].tcp_in else {
            return;
        };
        let now = self.core.now;
        let a = self.ack_state(ch as usize);
        if now.saturating_sub(a.last_rcv) < DELACK_MIN_NS {
            a.pingpong = true;
        }
        if a.pending.take().is_some() {
            a.unacked_bytes = 0;
            self.stats.counters.tcp_acks_carried += 1;
        }
    }

    /// `tcp_delack_timer()`: the delayed ACK of channel `ch` is due.
    pub(super) fn tcp_delack_timer(&mut self, ch: usize, g_n: u32) {
        let a = self.ack_state(ch);
        if a.gen_n != g_n {
            return;
        }
        let Some(cpu) = a.pending.take() else { return };
        a.unacked_bytes = 0;
        a.pingpong = false;
        let cost = self.core.profile.transfer.tcp_delivery_ns;
        self.stats.counters.tcp_acks_delayed += 1;
        self.stats.counters.softirq_ns += cost;
        // The timer interrupt's softirq runs on top of whatever the CPU runs: the running
        // task's segment ends that much later. An idle CPU wakes for it and idles again.
        if self.core.cpus[cpu].curr.is_some() && self.run.executing != Some(cpu) {
            self.settle(cpu);
            let t = self.core.cpus[cpu].curr.unwrap_or_default();
            self.core.tasks[t].seg_left += cost as f64 * self.core.cpus[cpu].speed;
            self.start_segment(cpu);
        }
    }
}
