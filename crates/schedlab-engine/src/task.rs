//! Tasks as small programs of operations, and the [`Workload`] that
//! declares them together with the channels, futexes, locks and barriers they use.
//!
//! A task runs its program on whatever CPU the scheduler gives it. Each operation either
//! needs CPU time (compute, the cost of a syscall) or changes shared state and may block or
//! wake other tasks. Loops make long runs cheap to describe.

use crate::dist::Dist;
use crate::ipc::ChannelKind;
use schedlab_topo::CpuSet;
use std::sync::Arc;

/// Dense task index: the position of a task in the simulation's task table (its pid is
/// `index + 1`). A newtype so a task cannot be passed where a CPU, channel or count is meant;
/// per-task `Vec`s and slices are indexed by it directly (`tasks[p]`).
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct TaskId(usize);

impl TaskId {
    /// The task at position `i` of the task table.
    #[inline]
    pub const fn new(i: usize) -> Self {
        TaskId(i)
    }

    /// The position in the task table.
    #[inline]
    pub const fn index(self) -> usize {
        self.0
    }

    /// The pid traces show for the task (`index + 1`; pid 0 is the idle task).
    #[inline]
    pub const fn pid(self) -> u32 {
        self.0 as u32 + 1
    }
}

impl From<usize> for TaskId {
    #[inline]
    fn from(i: usize) -> Self {
        TaskId(i)
    }
}

impl From<TaskId> for usize {
    #[inline]
    fn from(t: TaskId) -> usize {
        t.0
    }
}

/// The bare index, as the `usize` alias printed (messages and `{:?}` output keep their text).
impl std::fmt::Debug for TaskId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.0, f)
    }
}

impl std::fmt::Display for TaskId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

impl<T> std::ops::Index<TaskId> for [T] {
    type Output = T;
    #[inline]
    fn index(&self, t: TaskId) -> &T {
        &self[t.0]
    }
}

impl<T> std::ops::IndexMut<TaskId> for [T] {
    #[inline]
    fn index_mut(&mut self, t: TaskId) -> &mut T {
        &mut self[t.0]
    }
}

impl<T> std::ops::Index<TaskId> for Vec<T> {
    type Output = T;
    #[inline]
    fn index(&self, t: TaskId) -> &T {
        &self[t.0]
    }
}

impl<T> std::ops::IndexMut<TaskId> for Vec<T> {
    #[inline]
    fn index_mut(&mut self, t: TaskId) -> &mut T {
        &mut self[t.0]
    }
}
/// Index of a declared channel.
pub type ChanId = usize;
/// Index of a declared futex word.
pub type FutexId = usize;
/// Index of a declared mutex.
pub type MutexId = usize;
/// Index of a declared reader-writer lock.
pub type RwLockId = usize;
/// Index of a declared barrier.
pub type BarrierId = usize;
/// Index of a declared wait list.
pub type ListId = usize;
/// Index of a declared task template (for fork).
pub type SpecId = usize;
/// Index of a declared counter.
pub type CounterId = usize;
/// Index of a declared latency histogram.
pub type HistId = usize;

/// Where a timestamp is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// A slot private to the task (0..8).
    Task(u8),
    /// A global slot shared by all tasks.
    Global(usize),
}

/// Which lock an operation names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockRef {
    /// A declared mutex.
    Fixed(MutexId),
    /// The mutex `base + current CPU` (schbench v1's per-CPU lock); declare one per CPU.
    PerCpu(MutexId),
}

/// How many waiters a futex wake releases.
pub const WAKE_ALL: u32 = u32::MAX;

/// One operation of a task program.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// Run for this much work (ns at full speed on the home node).
    Compute(Dist),
    /// Write a message of this many bytes; blocks while the channel is full.
    Send {
        /// Channel.
        ch: ChanId,
        /// Message size.
        bytes: Dist,
    },
    /// Read the next whole message; blocks while the channel is empty.
    Recv {
        /// Channel.
        ch: ChanId,
    },
    /// Wait on a futex word (returns at once if it was posted).
    FutexWait(FutexId),
    /// Wake up to `n` waiters (no WF_SYNC); with no waiter the word stays posted.
    FutexWake {
        /// Futex.
        f: FutexId,
        /// How many ([`WAKE_ALL`] for all).
        n: u32,
    },
    /// Put the running task on a wait list (schbench's xlist).
    ListAdd(ListId),
    /// Post the personal futex of every task on the list, in order, and clear it.
    WakeList(ListId),
    /// Wait on the task's personal futex (posted by [`Op::WakeList`]).
    WaitSelf,
    /// Sleep for a duration (timer wakeup, no waker task).
    Sleep(Dist),
    /// Sleep until the next multiple of `period_ns` since the task started (rt-app timer).
    Timer {
        /// Period.
        period_ns: u64,
    },
    /// Take a mutex: spin up to `spin_ns` while the owner runs, then sleep.
    Lock {
        /// Lock.
        lock: LockRef,
        /// Spin budget (`u64::MAX` = pure spinlock).
        spin_ns: u64,
    },
    /// Release a mutex (hands it to the first sleeper, waking it).
    Unlock(LockRef),
    /// Create a child task from a template (WF_FORK placement).
    Fork(SpecId),
    /// Wait until every child has exited (woken with WF_SYNC by the last exit).
    WaitChildren,
    /// Wait at a barrier; the last arrival wakes the others.
    Barrier(BarrierId),
    /// Give up the CPU.
    Yield,
    /// Repeat the ops up to the matching [`Op::EndLoop`] `count` times (`u64::MAX` = forever).
    Loop(u64),
    /// End of a loop body.
    EndLoop,
    /// Remember the current time in a slot.
    Stamp(Slot),
    /// Record `now - slot` into a latency histogram.
    RecordSince {
        /// Histogram.
        hist: HistId,
        /// Slot with the start time.
        slot: Slot,
    },
    /// Add a sampled amount to a counter.
    Count {
        /// Counter.
        counter: CounterId,
        /// Amount.
        amount: Dist,
    },
    /// Add the size of the last received message to a counter.
    CountLastRecv(CounterId),
    /// `execve`: pay the exec cost and let the policy re-place the task (WF_EXEC,
    /// `sched_exec` / `sched_balance_exec`); the task moves if it picks another CPU.
    Exec,
    /// End the task.
    Exit,
    /// Take a reader-writer lock shared or exclusive: spin up to `spin_ns` while it is
    /// taken, then sleep on it; a woken waiter retries (the wake rule is the lock's
    /// [`crate::rwlock::RwWake`]: InnoDB's rw-locks and event mutexes, PostgreSQL's LWLocks).
    RwLock {
        /// Lock.
        lock: RwLockId,
        /// Exclusive (X) rather than shared (S).
        exclusive: bool,
        /// Spin budget before sleeping (0 = sleep at once, like an LWLock).
        spin_ns: u64,
    },
    /// Release a reader-writer lock taken by [`Op::RwLock`], waking waiters by its rule.
    RwUnlock(RwLockId),
}

/// A task template.
#[derive(Clone, Debug)]
pub struct TaskSpec {
    /// Command name, shown in traces.
    pub comm: String,
    /// The program (shared between tasks built from one template).
    pub program: Arc<[Op]>,
    /// Nice level, -20..=19.
    pub nice: i32,
    /// Allowed CPUs (`None` = all).
    pub affinity: Option<CpuSet>,
    /// Address space; `None` gives the task its own (a process), a shared value makes threads.
    pub mm: Option<u32>,
    /// Working-set size in bytes (cache affinity model).
    pub ws_bytes: u64,
    /// Memory intensity in [0, 1] (remote-node slowdown).
    pub mem_intensity: f64,
    /// Home NUMA node of its memory (`None` = first touch: the node it first runs on).
    pub home_node: Option<usize>,
    /// EEVDF custom slice (`None` = base slice).
    pub slice_ns: Option<u64>,
}

impl TaskSpec {
    /// A template with defaults: nice 0, all CPUs, own address space, 32 KiB working set.
    pub fn new(comm: impl Into<String>, program: Vec<Op>) -> Self {
        TaskSpec {
            comm: comm.into(),
            program: program.into(),
            nice: 0,
            affinity: None,
            mm: None,
            ws_bytes: 32 * 1024,
            mem_intensity: 0.0,
            home_node: None,
            slice_ns: None,
        }
    }
}

/// A channel declaration.
#[derive(Clone, Debug)]
pub struct ChannelSpec {
    /// Semantics.
    pub kind: ChannelKind,
    /// Name for deadlock reports.
    pub name: String,
}

/// A complete workload: templates, the tasks that exist at time 0, and shared objects.
#[derive(Clone, Debug, Default)]
pub struct Workload {
    /// Name (e.g. `hackbench`).
    pub name: String,
    /// Task templates.
    pub specs: Vec<TaskSpec>,
    /// Templates of the tasks that exist when the run starts.
    pub initial: Vec<SpecId>,
    /// Channels.
    pub channels: Vec<ChannelSpec>,
    /// Number of futex words.
    pub futexes: usize,
    /// Number of mutexes.
    pub mutexes: usize,
    /// Reader-writer locks: the wake rule of each.
    pub rwlocks: Vec<crate::rwlock::RwWake>,
    /// Barriers: the number of parties of each.
    pub barriers: Vec<u32>,
    /// Number of wait lists.
    pub lists: usize,
    /// Counter names.
    pub counters: Vec<String>,
    /// Histogram names.
    pub hists: Vec<String>,
    /// Number of global slots.
    pub global_slots: usize,
    /// Stop the run at this time even if tasks remain (`None` = when all tasks exit).
    pub duration_ns: Option<u64>,
}

impl Workload {
    /// An empty workload.
    pub fn new(name: impl Into<String>) -> Self {
        Workload {
            name: name.into(),
            ..Default::default()
        }
    }
    /// Declares a template.
    pub fn spec(&mut self, s: TaskSpec) -> SpecId {
        self.specs.push(s);
        self.specs.len() - 1
    }
    /// Declares a template and starts one task from it at time 0.
    pub fn spawn(&mut self, s: TaskSpec) -> SpecId {
        let id = self.spec(s);
        self.initial.push(id);
        id
    }
    /// Declares a channel.
    pub fn channel(&mut self, kind: ChannelKind, name: impl Into<String>) -> ChanId {
        self.channels.push(ChannelSpec {
            kind,
            name: name.into(),
        });
        self.channels.len() - 1
    }
    /// Declares a futex word.
    pub fn futex(&mut self) -> FutexId {
        self.futexes += 1;
        self.futexes - 1
    }
    /// Declares `n` consecutive mutexes, returning the first.
    pub fn mutexes(&mut self, n: usize) -> MutexId {
        self.mutexes += n;
        self.mutexes - n
    }
    /// Declares a reader-writer lock with a wake rule.
    pub fn rwlock(&mut self, wake: crate::rwlock::RwWake) -> RwLockId {
        self.rwlocks.push(wake);
        self.rwlocks.len() - 1
    }
    /// Declares a barrier of `parties`.
    pub fn barrier(&mut self, parties: u32) -> BarrierId {
        self.barriers.push(parties);
        self.barriers.len() - 1
    }
    /// Declares a wait list.
    pub fn list(&mut self) -> ListId {
        self.lists += 1;
        self.lists - 1
    }
    /// Declares a counter.
    pub fn counter(&mut self, name: impl Into<String>) -> CounterId {
        self.counters.push(name.into());
        self.counters.len() - 1
    }
    /// Declares a latency histogram.
    pub fn hist(&mut self, name: impl Into<String>) -> HistId {
        self.hists.push(name.into());
        self.hists.len() - 1
    }
    /// Declares a global timestamp slot.
    pub fn global_slot(&mut self) -> Slot {
        self.global_slots += 1;
        Slot::Global(self.global_slots - 1)
    }

    /// Checks that every id an op names was declared and loops are balanced.
    pub fn validate(&self) -> Result<(), String> {
        for (si, s) in self.specs.iter().enumerate() {
            if !(-20..=19).contains(&s.nice) {
                return Err(format!(
                    "task '{}': nice {} outside -20..=19",
                    s.comm, s.nice
                ));
            }
            if !(0.0..=1.0).contains(&s.mem_intensity) {
                return Err(format!(
                    "task '{}': mem_intensity must be in [0, 1]",
                    s.comm
                ));
            }
            let mut depth = 0i32;
            for op in s.program.iter() {
                let bad = |what: &str, id: usize| {
                    Err(format!(
                        "task '{}' (template {si}): {what} {id} was not declared",
                        s.comm
                    ))
                };
                match op {
                    Op::Send { ch, .. } | Op::Recv { ch } if *ch >= self.channels.len() => {
                        return bad("channel", *ch);
                    }
                    Op::FutexWait(f) | Op::FutexWake { f, .. } if *f >= self.futexes => {
                        return bad("futex", *f);
                    }
                    Op::ListAdd(l) | Op::WakeList(l) if *l >= self.lists => return bad("list", *l),
                    Op::Lock {
                        lock: LockRef::Fixed(m),
                        ..
                    }
                    | Op::Unlock(LockRef::Fixed(m))
                        if *m >= self.mutexes =>
                    {
                        return bad("mutex", *m);
                    }
                    Op::RwLock { lock, .. } | Op::RwUnlock(lock) if *lock >= self.rwlocks.len() => {
                        return bad("reader-writer lock", *lock);
                    }
                    Op::Fork(sp) if *sp >= self.specs.len() => return bad("template", *sp),
                    Op::Barrier(b) if *b >= self.barriers.len() => return bad("barrier", *b),
                    Op::RecordSince { hist, .. } if *hist >= self.hists.len() => {
                        return bad("histogram", *hist);
                    }
                    Op::Count { counter, .. } | Op::CountLastRecv(counter)
                        if *counter >= self.counters.len() =>
                    {
                        return bad("counter", *counter);
                    }
                    Op::Loop(_) => depth += 1,
                    Op::EndLoop => {
                        depth -= 1;
                        if depth < 0 {
                            return Err(format!("task '{}': EndLoop without Loop", s.comm));
                        }
                    }
                    _ => {}
                }
                if let Op::Stamp(Slot::Global(g))
                | Op::RecordSince {
                    slot: Slot::Global(g),
                    ..
                } = op
                    && *g >= self.global_slots
                {
                    return bad("global slot", *g);
                }
            }
            if depth != 0 {
                return Err(format!(
                    "task '{}': {depth} Loop(s) without EndLoop",
                    s.comm
                ));
            }
        }
        for &i in &self.initial {
            if i >= self.specs.len() {
                return Err(format!("initial task template {i} was not declared"));
            }
        }
        Ok(())
    }
}

/// CFS weight of a nice level (`sched_prio_to_weight`).
pub fn nice_to_weight(nice: i32) -> u64 {
    const W: [u64; 40] = [
        88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100,
        4904, 3906, 3121, 2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172,
        137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
    ];
    W[(nice.clamp(-20, 19) + 20) as usize]
}
