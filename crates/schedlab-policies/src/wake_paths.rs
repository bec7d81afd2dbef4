//! Who wakes whom, per primitive and era: the one table of how each kernel issues the
//! wakeups of the objects the engine models — whether the wakeup carries `WF_SYNC`, whether
//! it wakes one waiter or all, which task is `current` and on which CPU — with the kernel
//! function and the version range of each row. The era's engine [`WakeRules`] are read
//! from it ([`Era::wake_rules`]), and `docs/wake-paths.md` is generated from it
//! (`cargo run -p schedlab-policies --example wake-paths-md`, checked by a test).

use crate::era::Era;
use crate::version::{KernelVersion, v, v26};
use schedlab_engine::WakeRules;
use schedlab_engine::wake_rules::SoftirqThread;

/// When a row's wakeup carries `WF_SYNC`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncFrom {
    /// In every modelled era.
    Always,
    /// Never.
    Never,
    /// From this kernel release on (plain before).
    Since(KernelVersion),
}

impl SyncFrom {
    /// Whether the wakeup is sync in `era`.
    pub fn at(self, era: Era) -> bool {
        match self {
            SyncFrom::Always => true,
            SyncFrom::Never => false,
            SyncFrom::Since(k) => era.since(k),
        }
    }

    /// The first modelled era where the wakeup is sync (`None`: in none).
    pub fn first_era(self) -> Option<Era> {
        Era::ALL.iter().copied().find(|&e| self.at(e))
    }
}

/// The engine rule a row sets (rows without one are fixed in the interpreter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleKey {
    /// [`WakeRules::pipe_reader`].
    PipeReader,
    /// [`WakeRules::pipe_writer`].
    PipeWriter,
    /// [`WakeRules::unix_reader`].
    UnixReader,
    /// [`WakeRules::unix_writer`].
    UnixWriter,
    /// [`WakeRules::inet_reader`].
    InetReader,
    /// [`WakeRules::tcp_writer`].
    TcpWriter,
    /// [`WakeRules::exit_parent`].
    ExitParent,
}

/// One row of the table.
#[derive(Clone, Copy, Debug)]
pub struct WakePath {
    /// The primitive and direction, e.g. `pipe write → reader`.
    pub primitive: &'static str,
    /// Whom it wakes: one waiter, all, or a condition.
    pub wakes: &'static str,
    /// `WF_SYNC` by era.
    pub sync: SyncFrom,
    /// Which task is `current` and on which CPU the wakeup is issued.
    pub context: &'static str,
    /// The kernel function(s) and the version range of each form.
    pub kernel: &'static str,
    /// What is reconstructed rather than read in that version's source (`""` if nothing).
    pub reconstructed: &'static str,
    /// The engine rule it sets.
    pub key: Option<RuleKey>,
}

const TASK: &str = "the waker, on the waker's CPU";
/// The socket wakeups became sync in some 2.6.2x release (not pinned; plain in 2.5 and early
/// 2.6); 2.6.30 is the first release known to have it.
const SYNC_FROM_2_6_2X: SyncFrom = SyncFrom::Since(v26(30));
const SOFTIRQ: &str = "NET_RX softirq at the end of the send (`local_bh_enable()` in \
                       `__dev_queue_xmit()`): `current` is the sender, on the sender's CPU";

/// Every wakeup the engine issues, as the kernel of each era issues it.
pub const WAKE_PATHS: &[WakePath] = &[
    WakePath {
        primitive: "pipe write → reader",
        wakes: "the reader, when the write makes the pipe non-empty",
        sync: SyncFrom::Always,
        context: TASK,
        kernel: "`pipe_write()`: `wake_up_interruptible_sync()` (2.4–2.6.29), \
                 `wake_up_interruptible_sync_poll()` (2.6.30+); only on the empty → non-empty \
                 transition (`was_empty`) since the 5.5 pipe rework, before on every write \
                 (the same for a reader that sleeps only on an empty pipe)",
        reconstructed: "the 2.5.59 form is taken to be the 2.4/2.6.0 one",
        key: Some(RuleKey::PipeReader),
    },
    WakePath {
        primitive: "pipe read → writer",
        wakes: "one writer, when the read freed a buffer",
        sync: SyncFrom::Always,
        context: TASK,
        kernel: "`pipe_read()`: `wake_up_interruptible_sync()`, `_sync_poll()` on `wr_wait` \
                 (5.5+; `pipe->wait` before)",
        reconstructed: "sync in 2.5.59 is assumed from the 2.6.x form",
        key: Some(RuleKey::PipeWriter),
    },
    WakePath {
        primitive: "AF_UNIX stream send → reader",
        wakes: "the reader, on every send that queues an skb",
        sync: SYNC_FROM_2_6_2X,
        context: TASK,
        kernel: "`unix_stream_sendmsg()` → `sk_data_ready` = `sock_def_readable()`: \
                 `wake_up_interruptible()` (2.5, early 2.6), `wake_up_interruptible_sync()` \
                 (2.6.2x), `wake_up_interruptible_sync_poll()` (2.6.30+, keyed wakeups)",
        reconstructed: "the release that made it sync (2.6.2x) is not pinned; no modelled era \
                        lies between 2.5.59 and 2.6.30",
        key: Some(RuleKey::UnixReader),
    },
    WakePath {
        primitive: "AF_UNIX receive → blocked senders",
        wakes: "all blocked senders (they wait non-exclusively in `sock_alloc_send_pskb()`), \
                once at most a quarter of `sk_sndbuf` is in flight (`unix_writable()`)",
        sync: SYNC_FROM_2_6_2X,
        context: "the reader (the skb destructor runs in its `recvmsg()`), on its CPU",
        kernel: "`unix_write_space()`: plain in 2.5/early 2.6, `wake_up_interruptible_sync()` \
                 (2.6.2x), `_sync_poll()` (2.6.30+)",
        reconstructed: "the 2.5.59 form (plain) is assumed to follow `sock_def_readable()`",
        key: Some(RuleKey::UnixWriter),
    },
    WakePath {
        primitive: "AF_UNIX datagram send → reader",
        wakes: "the reader, on every datagram",
        sync: SYNC_FROM_2_6_2X,
        context: TASK,
        kernel: "`unix_dgram_sendmsg()` → `sock_def_readable()` (as the stream row)",
        reconstructed: "as the stream row",
        key: Some(RuleKey::UnixReader),
    },
    WakePath {
        primitive: "AF_UNIX datagram receive → blocked sender",
        wakes: "one sender blocked on the full receive queue (more than \
                `net.unix.max_dgram_qlen` = 10 queued)",
        sync: SYNC_FROM_2_6_2X,
        context: "the reader, on its CPU",
        kernel: "`unix_dgram_recvmsg()` → `wake_up_interruptible_sync_poll(&u->peer_wait)` \
                 (exclusive waiters of `unix_wait_for_peer()`)",
        reconstructed: "shares the AF_UNIX writer rule; plain before 2.6.30 assumed",
        key: Some(RuleKey::UnixWriter),
    },
    WakePath {
        primitive: "TCP loopback send → reader",
        wakes: "the reader, per segment delivered",
        sync: SYNC_FROM_2_6_2X,
        context: SOFTIRQ,
        kernel: "`tcp_sendmsg()` → `__dev_queue_xmit()` → `loopback_xmit()` → `netif_rx()` \
                 raises NET_RX on the sending CPU; `net_rx_action()` → `tcp_v4_rcv()` → \
                 `tcp_data_queue()` → `sock_def_readable()` (all eras; sync as the AF_UNIX \
                 reader row). The receive processing is charged to the sender's CPU \
                 (`transfer.tcp_delivery_ns`) and counted as softirq time",
        reconstructed: "deferral to ksoftirqd is not modelled (see below); the 2.6.x–4.13 \
                        prequeue (`tcp_prequeue()`) is folded into the same wakeup",
        key: Some(RuleKey::InetReader),
    },
    WakePath {
        primitive: "TCP ACK → blocked sender",
        wakes: "the sender blocked on `sk_sndbuf`, when the ACK frees enough",
        sync: SyncFrom::Never,
        context: "NET_RX softirq of the ACK's transmit: `current` is the reader that sent \
                  the ACK, on its CPU",
        kernel: "`tcp_ack()` → `tcp_new_space()` → `sk_stream_write_space()`: \
                 `wake_up_interruptible()` / `wake_up_interruptible_poll()` (no sync)",
        reconstructed: "the ACK is taken as sent by the read that freed the space",
        key: Some(RuleKey::TcpWriter),
    },
    WakePath {
        primitive: "UDP loopback send → reader",
        wakes: "the reader, per datagram (the sender never blocks: `loopback_xmit()` \
                orphans the skb)",
        sync: SYNC_FROM_2_6_2X,
        context: SOFTIRQ,
        kernel: "`udp_sendmsg()` → `loopback_xmit()`; NET_RX → `udp_queue_rcv_skb()` → \
                 `sock_def_readable()`",
        reconstructed: "receive-buffer drops are not modelled",
        key: Some(RuleKey::InetReader),
    },
    WakePath {
        primitive: "futex wake (FUTEX_WAKE n)",
        wakes: "up to n waiters in FIFO order",
        sync: SyncFrom::Never,
        context: TASK,
        kernel: "`futex_wake()` → `wake_futex()` → `wake_up_state()` (2.6), `wake_up_q()` \
                 (4.x+): a plain `try_to_wake_up()`",
        reconstructed: "",
        key: None,
    },
    WakePath {
        primitive: "mutex unlock (pthread mutex, InnoDB/LWLock-style semaphores)",
        wakes: "the first sleeper (handed the lock)",
        sync: SyncFrom::Never,
        context: TASK,
        kernel: "user-space unlock → `FUTEX_WAKE 1` (as the futex row)",
        reconstructed: "the hand-off to the first sleeper is a simplification of glibc's \
                        unlock-then-wake",
        key: None,
    },
    WakePath {
        primitive: "barrier / wait list (pthread_barrier, schbench's xlist)",
        wakes: "every waiter, one wake each",
        sync: SyncFrom::Never,
        context: "the last arrival (or the list owner), on its CPU",
        kernel: "`FUTEX_WAKE INT_MAX` / one `FUTEX_WAKE 1` per waiter (as the futex row)",
        reconstructed: "",
        key: None,
    },
    WakePath {
        primitive: "child exit → parent in wait4()",
        wakes: "the parent, when its last child exits",
        sync: SyncFrom::Always,
        context: "the exiting child, on its CPU",
        kernel: "`do_notify_parent()` → `__wake_up_parent()` → `__wake_up_sync_key()` (2.6.3x+; \
                 `wake_up_interruptible_sync()` of `wait_chldexit` before)",
        reconstructed: "the wakeup is modelled only for the last child (the waiter's \
                        condition), not for each exit",
        key: Some(RuleKey::ExitParent),
    },
    WakePath {
        primitive: "timer expiry (nanosleep, rt-app periods, schbench sleeps)",
        wakes: "the sleeper",
        sync: SyncFrom::Never,
        context: "hrtimer interrupt on the CPU the timer was armed on (the sleeper's last \
                  CPU); no waker task",
        kernel: "`hrtimer_wakeup()` → `wake_up_process()` (2.6.16+; timer-list \
                 `process_timeout()` before)",
        reconstructed: "timer migration to a busy CPU (`get_nohz_timer_target()`) is not \
                        modelled",
        key: None,
    },
    WakePath {
        primitive: "fork → child",
        wakes: "the new task (`WF_FORK`, the slow path)",
        sync: SyncFrom::Never,
        context: "the parent, on its CPU",
        kernel: "`wake_up_new_task()` → `select_task_rq(SD_BALANCE_FORK)` (2.6.23+; \
                 `wake_up_forked_process()` in the O(1) era)",
        reconstructed: "",
        key: None,
    },
    WakePath {
        primitive: "softirq exit → ksoftirqd",
        wakes: "the CPU's `ksoftirqd/N` (pinned, nice 0)",
        sync: SyncFrom::Never,
        context: "the interrupted task, in softirq, on its CPU",
        kernel: "`__do_softirq()` → `wakeup_softirqd()` when softirqs are still pending after \
                 the loop and `need_resched()` is set (c10d73671ad3, linux-3.10 on; before, \
                 it restarts up to `MAX_SOFTIRQ_RESTART` times and runs them inline). From \
                 4.10 to 6.4 `do_softirq()` leaves every new softirq to a runnable ksoftirqd \
                 (`ksoftirqd_running()`, 4cd13c21b207; reverted in 6.5 by d15121be7485): \
                 loopback receive processing and the reader's wakeup then run in ksoftirqd \
                 (linux-4.14, linux-5.13, linux-6.0)",
        reconstructed: "what leaves a softirq pending is a scheduler tick during the \
                        loopback softirq (every tick raises one) with the reader's wakeup \
                        preempting the sender; ksoftirqd's own cost is its deliveries",
        key: None,
    },
];

impl Era {
    /// The engine's wake rules of this era, read from [`WAKE_PATHS`].
    pub fn wake_rules(self) -> WakeRules {
        let mut r = WakeRules::default();
        for row in WAKE_PATHS {
            let Some(key) = row.key else { continue };
            let sync = row.sync.at(self);
            let rule = match key {
                RuleKey::PipeReader => &mut r.pipe_reader,
                RuleKey::PipeWriter => &mut r.pipe_writer,
                RuleKey::UnixReader => &mut r.unix_reader,
                RuleKey::UnixWriter => &mut r.unix_writer,
                RuleKey::InetReader => &mut r.inet_reader,
                RuleKey::TcpWriter => &mut r.tcp_writer,
                RuleKey::ExitParent => &mut r.exit_parent,
            };
            rule.sync = sync;
        }
        // c10d73671ad3 (3.10) defers to ksoftirqd on need_resched; 4cd13c21b207 (4.10) hands
        // every later softirq to a runnable ksoftirqd until d15121be7485 reverted it in 6.5.
        r.ksoftirqd = if self.before(v(3, 10)) {
            SoftirqThread::Inline
        } else if self.within(v(4, 10), v(6, 5)) {
            SoftirqThread::HandOver
        } else {
            SoftirqThread::OnResched
        };
        r
    }
}

/// Markers around the generated table in `docs/wake-paths.md`.
pub const WAKE_PATHS_MD_BEGIN: &str = "<!-- BEGIN generated by wake_paths.rs -->";
/// See [`WAKE_PATHS_MD_BEGIN`].
pub const WAKE_PATHS_MD_END: &str = "<!-- END generated by wake_paths.rs -->";

/// The table as Markdown.
pub fn wake_paths_markdown_table() -> String {
    let first_cfs = Era::V2_6_30.name();
    let mut s = String::from(
        "| primitive | wakes | WF_SYNC | issued by / on | kernel | reconstructed |\n\
         |---|---|---|---|---|---|\n",
    );
    for row in WAKE_PATHS {
        let sync = match row.sync {
            SyncFrom::Always => "yes, every era".to_string(),
            SyncFrom::Never => "no".to_string(),
            SyncFrom::Since(_) => match row.sync.first_era() {
                Some(e) if e.name() == first_cfs => {
                    format!("from {} (plain in linux-2.5.59)", e.name())
                }
                Some(e) => format!("from {}", e.name()),
                None => "no modelled era".to_string(),
            },
        };
        let rec = if row.reconstructed.is_empty() {
            "—"
        } else {
            row.reconstructed
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            row.primitive, row.wakes, sync, row.context, row.kernel, rec
        ));
    }
    s
}

/// `text` (the whole of `docs/wake-paths.md`) with the generated table replaced by the
/// current one; `None` when the markers are missing.
pub fn update_wake_paths_markdown(text: &str) -> Option<String> {
    let b = text.find(WAKE_PATHS_MD_BEGIN)? + WAKE_PATHS_MD_BEGIN.len();
    let e = text[b..].find(WAKE_PATHS_MD_END)? + b;
    Some(format!(
        "{}\n{}{}",
        &text[..b],
        wake_paths_markdown_table(),
        &text[e..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_engine::{ChannelKind, WakeContext};

    #[test]
    fn the_o1_era_wakes_socket_readers_without_sync_and_pipes_with_it() {
        let old = Era::V2_5_59.wake_rules();
        assert!(!old.reader(ChannelKind::unix()).sync);
        assert!(!old.writer(ChannelKind::unix()).sync);
        assert!(!old.reader(ChannelKind::tcp()).sync);
        assert!(old.reader(ChannelKind::pipe()).sync);
        assert!(old.exit_parent.sync);
        for era in Era::ALL.iter().copied().filter(|&e| e >= Era::V2_6_30) {
            let r = era.wake_rules();
            assert!(r.reader(ChannelKind::unix()).sync, "{era:?}");
            assert!(r.reader(ChannelKind::tcp()).sync, "{era:?}");
            assert!(!r.writer(ChannelKind::tcp()).sync, "{era:?}");
            assert_eq!(r.reader(ChannelKind::tcp()).context, WakeContext::Softirq);
        }
    }

    #[test]
    fn every_engine_rule_is_set_by_some_row() {
        use RuleKey::*;
        for key in [
            PipeReader, PipeWriter, UnixReader, UnixWriter, InetReader, TcpWriter, ExitParent,
        ] {
            assert!(
                WAKE_PATHS.iter().any(|r| r.key == Some(key)),
                "{key:?} has no row"
            );
        }
        // Rows sharing a rule agree on it.
        for a in WAKE_PATHS {
            for b in WAKE_PATHS {
                if a.key.is_some() && a.key == b.key {
                    assert_eq!(a.sync, b.sync, "{} vs {}", a.primitive, b.primitive);
                }
            }
        }
    }
}
