//! How each shared object issues its wakeups in the simulated kernel: whether the wakeup
//! carries `WF_SYNC`, and from which context it is issued (the waking task itself, or the
//! NET_RX softirq that the loopback transmit path runs on the sender's CPU).
//!
//! The engine only interprets these rules; which kernel did what is era knowledge and lives
//! in the policies crate (`schedlab_policies::wake_paths`, one table that also generates
//! `docs/wake-paths.md`). Rules that never changed across the modelled eras (futex, mutex
//! and barrier wakeups are plain `wake_up_q()`/`wake_up_process()` wakeups, no `WF_SYNC`)
//! are fixed in the interpreter and listed in that table too.

use crate::ipc::ChannelKind;

/// The context a wakeup is issued from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeContext {
    /// The waking task's own syscall (`current` is the waker, on its CPU).
    Task,
    /// The NET_RX softirq run at the end of the loopback transmit (`local_bh_enable()` in
    /// `__dev_queue_xmit()`): `current` is still the interrupted sender and the CPU is the
    /// sender's, but the receive processing and the wakeup are softirq work.
    Softirq,
}

/// How one kind of wakeup is issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WakeRule {
    /// The wakeup carries `WF_SYNC` (`wake_up_interruptible_sync*()`).
    pub sync: bool,
    /// Where it runs.
    pub context: WakeContext,
}

impl WakeRule {
    const fn task(sync: bool) -> WakeRule {
        WakeRule {
            sync,
            context: WakeContext::Task,
        }
    }
    const fn softirq(sync: bool) -> WakeRule {
        WakeRule {
            sync,
            context: WakeContext::Softirq,
        }
    }
}

/// What `__do_softirq()` does with softirqs still pending when its loop ends, and whether
/// a runnable `ksoftirqd` takes new ones (`sim/softirq.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SoftirqThread {
    /// Restart and run them inline (up to `MAX_SOFTIRQ_RESTART` times): before 3.9.
    Inline,
    /// Wake `ksoftirqd` when `need_resched()` is set (c10d73671ad3, 3.9 on; again from 6.5).
    OnResched,
    /// As `OnResched`, and while `ksoftirqd` is runnable every new softirq waits for it
    /// (`ksoftirqd_running()`, 4cd13c21b207, 4.10-6.4).
    HandOver,
}

/// The era-dependent wake rules of the channels and of `exit()` → `wait()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WakeRules {
    /// `pipe_write()` waking the reader.
    pub pipe_reader: WakeRule,
    /// `pipe_read()` waking a writer after freeing a buffer.
    pub pipe_writer: WakeRule,
    /// AF_UNIX stream/datagram send waking the reader (`sk_data_ready` = `sock_def_readable`).
    pub unix_reader: WakeRule,
    /// AF_UNIX receive waking blocked writers (`unix_write_space()`; datagram `peer_wait`).
    pub unix_writer: WakeRule,
    /// TCP/UDP loopback: the receive path's `sock_def_readable`, in NET_RX softirq.
    pub inet_reader: WakeRule,
    /// TCP: the ACK processing's `sk_stream_write_space()` waking a writer blocked on
    /// `sk_sndbuf`, in the softirq of the ACK's transmit (the reader's CPU).
    pub tcp_writer: WakeRule,
    /// `do_notify_parent()` → `__wake_up_parent()` waking a parent in `wait4()`.
    pub exit_parent: WakeRule,
    /// When softirq work goes to the CPU's `ksoftirqd`.
    pub ksoftirqd: SoftirqThread,
}

impl Default for WakeRules {
    /// The wakeup rules of every CFS-era kernel (2.6.30 on), with the softirq exit of 3.9
    /// on and after 6.5.
    fn default() -> Self {
        WakeRules {
            pipe_reader: WakeRule::task(true),
            pipe_writer: WakeRule::task(true),
            unix_reader: WakeRule::task(true),
            unix_writer: WakeRule::task(true),
            inet_reader: WakeRule::softirq(true),
            tcp_writer: WakeRule::softirq(false),
            exit_parent: WakeRule::task(true),
            ksoftirqd: SoftirqThread::OnResched,
        }
    }
}

impl WakeRules {
    /// The rule for waking a channel's reader after a send.
    pub fn reader(&self, kind: ChannelKind) -> WakeRule {
        match kind {
            ChannelKind::Pipe { .. } => self.pipe_reader,
            ChannelKind::Unix { .. } | ChannelKind::UnixDgram { .. } => self.unix_reader,
            ChannelKind::Tcp { .. } | ChannelKind::Udp => self.inet_reader,
        }
    }

    /// The rule for waking a channel's blocked writers after a receive.
    pub fn writer(&self, kind: ChannelKind) -> WakeRule {
        match kind {
            ChannelKind::Pipe { .. } => self.pipe_writer,
            ChannelKind::Unix { .. } | ChannelKind::UnixDgram { .. } => self.unix_writer,
            // A UDP sender never blocks here (loopback_xmit orphans the skb at once).
            ChannelKind::Tcp { .. } | ChannelKind::Udp => self.tcp_writer,
        }
    }

    /// The same rules with the sockets' wakeups plain (`wake_up_interruptible()`, no
    /// `WF_SYNC`), as `sock_def_readable()` and `unix_write_space()` issued them before the
    /// 2.6.2x series made them `_sync`.
    pub fn with_plain_socket_wakeups(mut self) -> Self {
        self.unix_reader.sync = false;
        self.unix_writer.sync = false;
        self.inet_reader.sync = false;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_readers_are_woken_from_softirq_and_local_sockets_from_the_task() {
        let r = WakeRules::default();
        assert_eq!(r.reader(ChannelKind::tcp()).context, WakeContext::Softirq);
        assert_eq!(r.reader(ChannelKind::Udp).context, WakeContext::Softirq);
        assert_eq!(r.reader(ChannelKind::unix()).context, WakeContext::Task);
        assert_eq!(r.reader(ChannelKind::pipe()).context, WakeContext::Task);
        let old = r.with_plain_socket_wakeups();
        assert!(!old.reader(ChannelKind::unix()).sync);
        assert!(!old.reader(ChannelKind::tcp()).sync);
        assert!(
            old.reader(ChannelKind::pipe()).sync,
            "pipes were sync before sockets"
        );
    }
}
