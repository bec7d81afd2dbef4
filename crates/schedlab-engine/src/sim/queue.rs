//! The event queue: every pending event of a run in one total order.
//!
//! Events are ordered by `(time, seq)`, packed into one `u128` key: equal times run in the
//! order they were scheduled, which makes a run a pure function of its inputs and seed. Two
//! stores share the one sequence counter, so their keys interleave in that order:
//!
//! * a 4-ary heap with a one-entry cache in front holding an event earlier than everything in
//!   the heap (a CPU scheduling its own next event then costs no heap operation);
//! * one segment-completion slot per CPU under a winner tree ([`SegTimers`]): "the running
//!   segment ends" is the most frequent event, and a CPU has at most one live, so it never
//!   enters the heap.
//!
//! Stale entries are not removed: a tick, an idle exit or a timer carries the generation of
//! its owner when it was armed (`tick_gen`, `exit_gen`, `timer_gen`) and the handler drops it
//! when the owner has moved on. A CPU's segment slot may hold an earlier, superseded key;
//! it fires as a no-op and re-arms itself with the live one (`Cpu::seg_key`).
//!
//! State: Owns the event queue; reads and writes nothing else.

use crate::seg_timers::{self, SegTimers};
use crate::time::Time;
use dary_heap::QuaternaryHeap as BinaryHeap;
use schedlab_topo::CpuId;
use std::cmp::Ordering;

/// What happens at an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Event {
    /// The running segment of `cpu` completes (from the CPU's timer slot, not the heap).
    SegDone { cpu: u32 },
    /// Scheduler tick of `cpu`.
    Tick { cpu: u32, g_n: u32 },
    /// A wakeup in flight reaches its CPU; `flags` are [`WakeFlags`](crate::policy::WakeFlags)
    /// bits, stored raw like the other fields.
    Arrive { task: u32, cpu: u32, flags: u32 },
    /// `cpu` has left its idle state.
    CpuReady { cpu: u32, g_n: u32 },
    /// A sleep/timer of `task` expires.
    Timer { task: u32, g_n: u32 },
    /// The delayed-ACK timer of TCP channel `ch` (`sim/tcp_ack.rs`).
    DelayedAck { ch: u32, g_n: u32 },
    /// The run's time is up.
    Stop,
}

impl Event {
    /// The event's identity folded into the event-stream hash.
    pub(super) fn tag(&self) -> u64 {
        match *self {
            Event::SegDone { cpu, .. } => 1 << 40 | cpu as u64,
            Event::Tick { cpu, .. } => 2 << 40 | cpu as u64,
            Event::Arrive { task, cpu, .. } => 3 << 40 | (task as u64) << 16 | cpu as u64,
            Event::CpuReady { cpu, .. } => 4 << 40 | cpu as u64,
            Event::Timer { task, .. } => 5 << 40 | task as u64,
            Event::Stop => 6 << 40,
            Event::DelayedAck { ch, .. } => 7 << 40 | ch as u64,
        }
    }
}

/// The total order of events: time, then the sequence number of scheduling.
#[inline]
fn event_key(time: Time, seq: u64) -> u128 {
    ((time as u128) << 64) | seq as u128
}

/// A queued event. `key` packs `(time, seq)` into one integer so the heap compares once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Entry {
    key: u128,
    pub(super) ev: Event,
}

impl Entry {
    fn new(time: Time, seq: u64, ev: Event) -> Self {
        Entry {
            key: event_key(time, seq),
            ev,
        }
    }
    /// When the event happens.
    pub(super) fn time(&self) -> Time {
        (self.key >> 64) as Time
    }
}

impl Ord for Entry {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        // The heap is a max-heap: reverse so the earliest (time, seq) pops first.
        other.key.cmp(&self.key)
    }
}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// All pending events of a run: the heap side and the per-CPU segment slots, one order.
pub(super) struct EventQueue {
    heap: BinaryHeap<Entry>,
    /// An event earlier than every event in `heap` (see [`EventQueue::push`]).
    next_cache: Option<Entry>,
    /// The segment-completion event of every CPU, outside the heap.
    seg_timers: SegTimers,
    /// The CPU whose segment-completion event is being handled; its slot still holds the
    /// fired key until the handler arms the next segment or the run loop re-arms it.
    fired_seg: Option<CpuId>,
    /// The sequence counter shared by both stores.
    seq: u64,
    /// Largest number of pending heap-side events seen.
    max_len: usize,
}

impl EventQueue {
    /// An empty queue for a machine of `nr_cpus` CPUs.
    pub(super) fn new(nr_cpus: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            next_cache: None,
            seg_timers: SegTimers::new(nr_cpus),
            fired_seg: None,
            seq: 0,
            max_len: 0,
        }
    }

    /// Schedules an event. The cache in front of the heap holds an event earlier than
    /// everything in the heap: the common case of a CPU scheduling its own next event then
    /// costs no heap operation. The order is exactly the heap's `(time, seq)` order.
    pub(super) fn push(&mut self, time: Time, ev: Event) {
        self.seq += 1;
        let e = Entry::new(time, self.seq, ev);
        match self.next_cache {
            // `Entry`'s Ord is reversed for the max-heap: `a > b` means a comes first.
            Some(c) if e > c => {
                self.heap.push(c);
                self.next_cache = Some(e);
            }
            Some(_) => self.heap.push(e),
            None => {
                if self.heap.peek().is_none_or(|h| e > *h) {
                    self.next_cache = Some(e);
                } else {
                    self.heap.push(e);
                }
            }
        }
        self.max_len = self
            .max_len
            .max(self.heap.len() + usize::from(self.next_cache.is_some()));
    }

    /// Takes the earliest event: from the heap side, or a CPU's segment-completion slot.
    pub(super) fn pop(&mut self) -> Option<Entry> {
        let (cpu, key) = self.seg_timers.earliest();
        if key != seg_timers::IDLE {
            let heap_first = match &self.next_cache {
                Some(c) => Some(c.key),
                None => self.heap.peek().map(|e| e.key),
            };
            if heap_first.is_none_or(|h| key < h) {
                let cpu = cpu as u32;
                return Some(Entry {
                    key,
                    ev: Event::SegDone { cpu },
                });
            }
        }
        self.next_cache.take().or_else(|| self.heap.pop())
    }

    /// A fresh key at `due` for a segment end, next in the sequence.
    pub(super) fn seg_key_at(&mut self, due: Time) -> u128 {
        self.seq += 1;
        event_key(due, self.seq)
    }

    /// Arms `cpu`'s segment-completion event at `due` and returns its key, which the caller
    /// records as the CPU's live key (`Cpu::seg_key`); the old one is superseded.
    pub(super) fn arm_seg_done(&mut self, cpu: CpuId, due: Time) -> u128 {
        let key = self.seg_key_at(due);
        if self.fired_seg == Some(cpu) {
            self.fired_seg = None;
            self.seg_timers.rearm_winner(key);
        } else if key < self.seg_timers.key(cpu.index()) {
            self.seg_timers.lower(cpu.index(), key);
        }
        // Otherwise the slot holds an earlier, superseded key: it fires as a no-op and
        // re-arms itself with this one.
        key
    }

    /// The key in `cpu`'s segment slot (it may be earlier than the live one).
    pub(super) fn seg_slot(&self, cpu: CpuId) -> u128 {
        self.seg_timers.key(cpu.index())
    }

    /// Replaces the key of the slot that just fired (the earliest) with `key`.
    pub(super) fn rearm_fired(&mut self, key: u128) {
        self.seg_timers.rearm_winner(key);
    }

    /// `cpu`'s segment end is being handled: its slot holds the fired key until the next
    /// [`EventQueue::arm_seg_done`] of that CPU or [`EventQueue::take_fired`].
    pub(super) fn set_fired(&mut self, cpu: CpuId) {
        self.fired_seg = Some(cpu);
    }

    /// The CPU whose fired slot no handler re-armed, if any.
    pub(super) fn take_fired(&mut self) -> Option<CpuId> {
        self.fired_seg.take()
    }

    /// Largest number of pending heap-side events seen (a speed diagnostic).
    pub(super) fn max_len(&self) -> usize {
        self.max_len
    }
}
