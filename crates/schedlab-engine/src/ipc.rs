//! Shared objects tasks block on: channels (pipe, AF_UNIX stream and datagram sockets, TCP
//! and UDP loopback),
//! futex words, mutexes, barriers and wait lists, with the kernel's wake rules (which
//! primitives wake with WF_SYNC, channel capacities, when a writer blocks).
//!
//! Only state and wake *rules* live here; the simulator core performs the wakeups so that
//! every wakeup goes through the one placement path.

use crate::task::TaskId;
use schedlab_topo::CpuId;
use std::collections::VecDeque;

/// Channel semantics.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ChannelKind {
    /// A pipe: `pages` buffers of `page_bytes`; small writes merge into the last page.
    /// The reader is woken on the empty→non-empty transition (5.5+ rule), one writer when
    /// a buffer is freed while writers wait.
    Pipe {
        /// Buffers (PIPE_DEF_BUFFERS = 16).
        pages: u32,
        /// Buffer size (4096).
        page_bytes: u64,
    },
    /// AF_UNIX stream: messages charge `bytes + overhead` (skb truesize) to a `sndbuf`
    /// budget; every send wakes the reader; blocked writers all wake once in-flight is at
    /// most a quarter of the budget.
    Unix {
        /// Budget (net.core.wmem_default = 212992).
        sndbuf: u64,
        /// Per-message truesize overhead (~700 B).
        overhead: u64,
    },
    /// TCP over loopback: like unix, but delivery (softirq) runs on the sender's CPU and
    /// costs it the profile's `transfer.tcp_delivery_ns`.
    Tcp {
        /// Budget.
        sndbuf: u64,
        /// Per-message overhead.
        overhead: u64,
    },
    /// AF_UNIX datagram (`unix_dgram_sendmsg()`): a sender blocks while the receiver's
    /// queue holds more than `qlen` datagrams (`unix_recvq_full()`,
    /// `net.unix.max_dgram_qlen` = 10); each receive wakes one blocked sender
    /// (`peer_wait`).
    UnixDgram {
        /// Queue length limit.
        qlen: u32,
    },
    /// UDP over loopback: delivery in softirq on the sender's CPU like TCP; the sender never
    /// blocks (`loopback_xmit()` orphans the skb) and, as an RR workload never fills the
    /// receive buffer, drops are not modelled.
    Udp,
}

impl ChannelKind {
    /// A default pipe (16 × 4 KiB).
    pub fn pipe() -> Self {
        ChannelKind::Pipe {
            pages: 16,
            page_bytes: 4096,
        }
    }
    /// A default unix stream socket.
    pub fn unix() -> Self {
        ChannelKind::Unix {
            sndbuf: 212_992,
            overhead: 700,
        }
    }
    /// A default loopback TCP connection (autotuned buffers: generous).
    pub fn tcp() -> Self {
        ChannelKind::Tcp {
            sndbuf: 4 * 1024 * 1024,
            overhead: 700,
        }
    }
    /// A default AF_UNIX datagram socket.
    pub fn unix_dgram() -> Self {
        ChannelKind::UnixDgram { qlen: 10 }
    }
    /// Whether a send is delivered by the loopback device's NET_RX softirq.
    pub fn is_loopback(self) -> bool {
        matches!(self, ChannelKind::Tcp { .. } | ChannelKind::Udp)
    }
}

/// One message in flight.
#[derive(Clone, Copy, Debug)]
pub struct Msg {
    /// Payload bytes.
    pub bytes: u64,
    /// CPU that wrote it (decides the reader's transfer cost). A `u32` keeps a message at
    /// 16 bytes: hackbench with 400 groups holds millions of them in socket buffers.
    pub cpu: u32,
    /// Pipe: buffers freed when this message is consumed.
    closes: u32,
}

/// Runtime state of a channel.
#[derive(Clone, Debug)]
pub struct Channel {
    /// Semantics.
    pub kind: ChannelKind,
    /// Messages in order.
    pub queue: VecDeque<Msg>,
    /// Readers blocked on empty.
    pub readers: VecDeque<TaskId>,
    /// Writers blocked on full.
    pub writers: VecDeque<TaskId>,
    /// Bytes (unix/tcp: truesize) in flight.
    pub used: u64,
    /// Pipe: buffers in use and fill of the last one.
    pages_used: u32,
    last_fill: u64,
    /// Messages delivered in total.
    pub delivered: u64,
    /// CPU of the last operation on the channel: where its lines are (contention).
    pub last_cpu: Option<u32>,
    /// Messages at the tail still waiting in a CPU's softirq backlog for `ksoftirqd`: the
    /// reader cannot see them (nor, TCP being in order, anything after them) yet.
    pub hidden: u32,
}

/// What a send did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendOutcome {
    /// Queued; wake this many readers (0 or 1).
    Sent {
        /// Whether a blocked reader must be woken.
        wake_reader: bool,
    },
    /// No room: the writer must block.
    Full,
}

/// What a receive did.
#[derive(Clone, Copy, Debug)]
pub enum RecvOutcome {
    /// Got a message; `wake_writers` blocked writers should be woken (`usize::MAX` = all).
    Got {
        /// The message.
        msg: Msg,
        /// How many writers to wake.
        wake_writers: usize,
    },
    /// Nothing there: the reader must block.
    Empty,
}

impl Channel {
    /// A channel with nothing in it.
    pub fn new(kind: ChannelKind) -> Self {
        Channel {
            kind,
            queue: VecDeque::new(),
            readers: VecDeque::new(),
            writers: VecDeque::new(),
            used: 0,
            pages_used: 0,
            last_fill: 0,
            delivered: 0,
            last_cpu: None,
            hidden: 0,
        }
    }

    /// Tries to queue a message of `bytes` written on `cpu`. Messages are atomic: a
    /// message larger than the whole channel is accepted only into an empty channel.
    pub fn try_send(&mut self, bytes: u64, cpu: CpuId) -> SendOutcome {
        let was_empty = self.queue.is_empty();
        match self.kind {
            ChannelKind::Pipe { pages, page_bytes } => {
                let merge = self.pages_used > 0 && self.last_fill + bytes <= page_bytes;
                let new_pages = if merge {
                    0
                } else {
                    bytes.div_ceil(page_bytes).max(1) as u32
                };
                if !merge && self.pages_used + new_pages > pages && !was_empty {
                    return SendOutcome::Full;
                }
                let mut closes = 0;
                if merge {
                    self.last_fill += bytes;
                } else {
                    // The previous partial page is now closed: freed with its last message.
                    if let Some(prev) = self.queue.back_mut()
                        && self.pages_used > 0
                    {
                        prev.closes += 1;
                    }
                    self.pages_used += new_pages;
                    closes = new_pages - 1;
                    self.last_fill = bytes - (new_pages as u64 - 1) * page_bytes;
                }
                self.queue.push_back(Msg {
                    bytes,
                    cpu: cpu.index() as u32,
                    closes,
                });
                SendOutcome::Sent {
                    wake_reader: was_empty,
                }
            }
            ChannelKind::Unix { sndbuf, overhead }
            | ChannelKind::Tcp {
                sndbuf, overhead, ..
            } => {
                let truesize = bytes + overhead;
                if self.used + truesize > sndbuf && !was_empty {
                    return SendOutcome::Full;
                }
                self.used += truesize;
                self.queue.push_back(Msg {
                    bytes,
                    cpu: cpu.index() as u32,
                    closes: 0,
                });
                SendOutcome::Sent { wake_reader: true }
            }
            ChannelKind::UnixDgram { qlen } => {
                if self.queue.len() > qlen as usize {
                    return SendOutcome::Full;
                }
                self.push(bytes, cpu);
                SendOutcome::Sent { wake_reader: true }
            }
            ChannelKind::Udp => {
                self.push(bytes, cpu);
                SendOutcome::Sent { wake_reader: true }
            }
        }
    }

    fn push(&mut self, bytes: u64, cpu: CpuId) {
        self.queue.push_back(Msg {
            bytes,
            cpu: cpu.index() as u32,
            closes: 0,
        });
    }

    /// Takes the next message.
    pub fn try_recv(&mut self) -> RecvOutcome {
        if self.queue.len() <= self.hidden as usize {
            return RecvOutcome::Empty;
        }
        let Some(msg) = self.queue.pop_front() else {
            return RecvOutcome::Empty;
        };
        self.delivered += 1;
        let wake_writers = match self.kind {
            ChannelKind::Pipe { .. } => {
                let before = self.pages_used;
                if self.queue.is_empty() {
                    self.pages_used = 0;
                    self.last_fill = 0;
                } else {
                    self.pages_used -= msg.closes.min(self.pages_used);
                }
                usize::from(self.pages_used < before)
            }
            ChannelKind::Unix { sndbuf, overhead }
            | ChannelKind::Tcp {
                sndbuf, overhead, ..
            } => {
                self.used -= (msg.bytes + overhead).min(self.used);
                if self.used * 4 <= sndbuf {
                    usize::MAX
                } else {
                    0
                }
            }
            // unix_dgram_recvmsg(): one exclusive waiter of peer_wait.
            ChannelKind::UnixDgram { .. } => 1,
            ChannelKind::Udp => 0,
        };
        RecvOutcome::Got { msg, wake_writers }
    }
}

/// A futex word with FIFO waiters: a wake with no waiter leaves the word posted, so the
/// next wait returns at once (the "set word, then FUTEX_WAKE" protocol).
#[derive(Clone, Debug, Default)]
pub struct Futex {
    /// Word posted since the last wait.
    pub posted: bool,
    /// Sleepers in arrival order.
    pub waiters: VecDeque<TaskId>,
    /// CPU of the last wait or wake: where the bucket and word lines are (contention).
    pub last_cpu: Option<u32>,
}

/// A sleeping mutex with an owner.
#[derive(Clone, Debug, Default)]
pub struct Mutex {
    /// Holder.
    pub owner: Option<TaskId>,
    /// Sleepers in arrival order.
    pub waiters: VecDeque<TaskId>,
    /// CPU of the last acquire or release: where the lock word is (contention).
    pub last_cpu: Option<u32>,
}

/// A start gate.
#[derive(Clone, Debug, Default)]
pub struct Barrier {
    /// Parties needed.
    pub parties: u32,
    /// Tasks waiting.
    pub waiting: Vec<TaskId>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unix_datagram_sender_blocks_above_the_queue_limit_and_a_read_frees_one() {
        let mut c = Channel::new(ChannelKind::unix_dgram());
        let mut n = 0;
        while let SendOutcome::Sent { wake_reader } = c.try_send(100, CpuId::new(0)) {
            assert!(wake_reader);
            n += 1;
        }
        // unix_recvq_full() is `len > max_dgram_qlen`: eleven fit.
        assert_eq!(n, 11);
        let RecvOutcome::Got { wake_writers, .. } = c.try_recv() else {
            panic!()
        };
        assert_eq!(wake_writers, 1);
        assert!(matches!(
            c.try_send(100, CpuId::new(0)),
            SendOutcome::Sent { .. }
        ));
    }

    #[test]
    fn a_udp_sender_never_blocks() {
        let mut c = Channel::new(ChannelKind::Udp);
        for _ in 0..10_000 {
            assert!(matches!(
                c.try_send(1000, CpuId::new(0)),
                SendOutcome::Sent { .. }
            ));
        }
    }

    #[test]
    fn a_message_in_a_buffer_takes_16_bytes() {
        // Socket buffers of big hackbench runs hold millions of messages.
        assert_eq!(std::mem::size_of::<Msg>(), 16);
    }

    #[test]
    fn pipe_holds_640_hundred_byte_messages() {
        let mut c = Channel::new(ChannelKind::pipe());
        let mut n = 0;
        while let SendOutcome::Sent { .. } = c.try_send(100, CpuId::new(0)) {
            n += 1;
            assert!(n < 10_000);
        }
        assert_eq!(n, 640);
        // Reading one message does not free a page; reading 40 does.
        let RecvOutcome::Got { wake_writers, .. } = c.try_recv() else {
            panic!()
        };
        assert_eq!(wake_writers, 0);
        assert_eq!(c.try_send(100, CpuId::new(0)), SendOutcome::Full);
        let mut freed = 0;
        for _ in 0..39 {
            if let RecvOutcome::Got { wake_writers, .. } = c.try_recv() {
                freed += wake_writers;
            }
        }
        assert_eq!(freed, 1);
        assert!(matches!(
            c.try_send(100, CpuId::new(0)),
            SendOutcome::Sent { wake_reader: false }
        ));
    }

    #[test]
    fn pipe_wakes_reader_only_when_empty() {
        let mut c = Channel::new(ChannelKind::pipe());
        assert_eq!(
            c.try_send(4, CpuId::new(0)),
            SendOutcome::Sent { wake_reader: true }
        );
        assert_eq!(
            c.try_send(4, CpuId::new(0)),
            SendOutcome::Sent { wake_reader: false }
        );
    }

    #[test]
    fn unix_socket_holds_about_250_messages_and_wakes_writers_at_a_quarter() {
        let mut c = Channel::new(ChannelKind::unix());
        let mut n = 0;
        while let SendOutcome::Sent { wake_reader } = c.try_send(100, CpuId::new(0)) {
            assert!(wake_reader);
            n += 1;
        }
        assert!((230..=280).contains(&n), "{n}");
        let mut first_wake = None;
        for i in 0..n {
            if let RecvOutcome::Got { wake_writers, .. } = c.try_recv()
                && wake_writers > 0
                && first_wake.is_none()
            {
                first_wake = Some(i + 1);
            }
        }
        let fw = first_wake.unwrap();
        assert!(fw * 4 >= n * 3 - 4, "writers woke after {fw} of {n} reads");
    }
}
