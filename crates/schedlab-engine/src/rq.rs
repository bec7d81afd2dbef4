//! The runqueue data structure: what one CPU holds queued, in the orders the scheduler
//! reads it (the kernel's `struct cfs_rq` and its rbtree, laid out for the simulator).
//!
//! [`RunQueue`] keeps the queued tasks by pick key in an [`RqTree`], the same tasks in
//! `cfs_tasks` order for the balancer when the queue is long, the CFS buddies and EEVDF's
//! running sums. It only stores: what the keys mean and when they change is the fair
//! class's business ([`crate::fair`]).

use crate::state::Task;
use crate::task::TaskId;

/// Runqueue of one CPU (the tasks waiting; the running task is `Cpu::curr`).
///
/// Laid out by hand like `crate::state::Cpu`, which holds it: what every enqueue, dequeue
/// and pick reads fills the first cache line, the buddies and the recorded zero-lag point the
/// second, the balancer's order the third.
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct RunQueue {
    /// Queued tasks by key (vruntime, deadline or O(1) priority/sequence).
    pub tree: RqTree,
    /// EEVDF: Σ w·(v − min_vruntime) over queued tasks.
    pub avg_vruntime: i128,
    /// CFS: monotonic `min_vruntime`. EEVDF: the reference point the sums are taken from,
    /// moved to the zero-lag point only when vruntimes drift far from it (`fair::REBASE`): the
    /// average and eligibility are the same from any integer reference.
    pub min_vruntime: i64,
    /// EEVDF: Σ w over queued tasks.
    pub avg_load: i64,
    /// CFS next buddy.
    pub next: Option<TaskId>,
    /// CFS last buddy.
    pub last: Option<TaskId>,
    /// EEVDF: `(Σ w·(v − min_vruntime), Σ w)` with curr, as of the last `update_curr` that
    /// found something runnable: the zero-lag point a queue with nothing runnable reports
    /// (the kernel's stale `min_vruntime`), kept undivided so that `update_curr` does not
    /// divide.
    pub last_zero_lag: (i128, i64),
    /// The same tasks, least recently run first (`exec_start`, then id): the order in which
    /// the kernel's `detach_tasks` walks `cfs_tasks` from its tail, so a balance pass on a
    /// long queue reads its few candidates from the front instead of sorting the whole
    /// queue. Kept only while the queue is longer than `LRU_LONG` (until it falls below
    /// `LRU_SHORT`), and empty otherwise: a short queue is sorted when a balance pass asks
    /// ([`RunQueue::coldest`]), which costs less than keeping a second ordered set on every
    /// enqueue and dequeue. Not for longer queues: sorting reads every queued task's
    /// `exec_start`, a cache miss each with thousands of tasks (hackbench with 400 groups
    /// lost 2 % when queues of up to 64 were sorted).
    pub lru: RqTree,
    /// O(1): FIFO sequence.
    pub seq: u64,
}

impl RunQueue {
    /// Whether the `cfs_tasks` order is kept (a kept order never holds fewer than
    /// `LRU_SHORT` tasks, an unkept one is empty).
    pub fn lru_kept(&self) -> bool {
        !self.lru.is_empty()
    }

    /// The queued tasks least recently run first (`cfs_tasks` from its tail): from `lru`
    /// on a long queue, sorted here on a short one (at most `LRU_LONG` entries, on the
    /// stack). `tasks` gives each task's `exec_start`.
    pub fn coldest<'a>(&'a self, tasks: &[Task]) -> Coldest<'a> {
        if self.lru_kept() {
            return Coldest::Kept(self.lru.iter());
        }
        debug_assert!(self.tree.len() <= LRU_LONG, "long queue without its lru");
        let mut buf = [(0i64, TaskId::new(0)); LRU_LONG];
        let mut n = 0;
        for &(_, t) in self.tree.iter().take(LRU_LONG) {
            buf[n] = (tasks[t].exec_start as i64, t);
            n += 1;
        }
        buf[..n].sort_unstable();
        Coldest::Sorted(buf.into_iter().take(n))
    }
}

/// Iterator of [`RunQueue::coldest`].
pub enum Coldest<'a> {
    /// Over the kept order of a long queue.
    Kept(RqIter<'a>),
    /// Over a short queue sorted on demand.
    Sorted(std::iter::Take<std::array::IntoIter<(i64, TaskId), LRU_LONG>>),
}

impl Iterator for Coldest<'_> {
    type Item = TaskId;
    #[inline]
    fn next(&mut self) -> Option<TaskId> {
        match self {
            Coldest::Kept(i) => i.next().map(|&(_, t)| t),
            Coldest::Sorted(i) => i.next().map(|(_, t)| t),
        }
    }
}

/// The ordered set of queued `(key, task)` pairs: the kernel's rbtree.
///
/// Two representations: a sorted vector while short (the usual handful of queued tasks,
/// where a binary search and a small move beat tree nodes and allocate nothing), a B-tree
/// once long (a fork storm can queue thousands on one CPU, and every removal from a vector
/// that size moves the whole array). The switch has hysteresis so a queue hovering at the
/// threshold does not convert back and forth.
#[derive(Clone, Debug)]
pub struct RqTree {
    repr: Repr,
}

#[derive(Clone, Debug)]
enum Repr {
    Short(Vec<(i64, TaskId)>),
    Long(std::collections::BTreeSet<(i64, TaskId)>),
}

/// Entries above which a short queue becomes a B-tree.
const RQ_LONG: usize = 64;
/// Entries below which a long queue goes back to a vector.
const RQ_SHORT: usize = 16;
/// Queued tasks above which a runqueue keeps its `cfs_tasks` order.
pub(crate) const LRU_LONG: usize = 8;
/// Queued tasks below which it stops keeping it.
pub(crate) const LRU_SHORT: usize = 4;

impl Default for RqTree {
    fn default() -> Self {
        RqTree {
            repr: Repr::Short(Vec::new()),
        }
    }
}

/// Iterator over an [`RqTree`] in key order (either representation).
pub enum RqIter<'a> {
    /// Over the vector.
    Short(std::slice::Iter<'a, (i64, TaskId)>),
    /// Over the B-tree.
    Long(std::collections::btree_set::Iter<'a, (i64, TaskId)>),
}

impl<'a> Iterator for RqIter<'a> {
    type Item = &'a (i64, TaskId);
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            RqIter::Short(i) => i.next(),
            RqIter::Long(i) => i.next(),
        }
    }
}

impl DoubleEndedIterator for RqIter<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            RqIter::Short(i) => i.next_back(),
            RqIter::Long(i) => i.next_back(),
        }
    }
}

impl RqTree {
    /// Adds an entry; returns false if it was already present.
    pub fn insert(&mut self, e: (i64, TaskId)) -> bool {
        match &mut self.repr {
            Repr::Short(v) => match v.binary_search(&e) {
                Ok(_) => false,
                Err(i) => {
                    v.insert(i, e);
                    if v.len() > RQ_LONG {
                        self.repr = Repr::Long(std::mem::take(v).into_iter().collect());
                    }
                    true
                }
            },
            Repr::Long(b) => b.insert(e),
        }
    }

    /// Removes an entry; returns whether it was present.
    pub fn remove(&mut self, e: &(i64, TaskId)) -> bool {
        match &mut self.repr {
            Repr::Short(v) => match v.binary_search(e) {
                Ok(i) => {
                    v.remove(i);
                    true
                }
                Err(_) => false,
            },
            Repr::Long(b) => {
                let removed = b.remove(e);
                if b.len() < RQ_SHORT {
                    self.repr = Repr::Short(std::mem::take(b).into_iter().collect());
                }
                removed
            }
        }
    }

    /// The leftmost (smallest key) entry.
    #[inline]
    pub fn first(&self) -> Option<&(i64, TaskId)> {
        match &self.repr {
            Repr::Short(v) => v.first(),
            Repr::Long(b) => b.first(),
        }
    }

    /// Entries in key order.
    #[inline]
    pub fn iter(&self) -> RqIter<'_> {
        match &self.repr {
            Repr::Short(v) => RqIter::Short(v.iter()),
            Repr::Long(b) => RqIter::Long(b.iter()),
        }
    }

    /// Number of queued entries.
    #[inline]
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Short(v) => v.len(),
            Repr::Long(b) => b.len(),
        }
    }

    /// Whether nothing is queued.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::RqTree;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    proptest! {
        /// Across both representations and the switches between them, the runqueue behaves
        /// exactly like an ordered set.
        #[test]
        fn rq_tree_is_an_ordered_set(ops in prop::collection::vec((any::<bool>(), 0i64..120, 0usize..3), 1..600)) {
            let mut rq = RqTree::default();
            let mut set = BTreeSet::new();
            for (insert, key, t) in ops {
                let e = (key, crate::task::TaskId::new(t));
                if insert {
                    prop_assert_eq!(rq.insert(e), set.insert(e));
                } else {
                    prop_assert_eq!(rq.remove(&e), set.remove(&e));
                }
                prop_assert_eq!(rq.len(), set.len());
                prop_assert_eq!(rq.first(), set.first());
                prop_assert!(rq.iter().eq(set.iter()));
                prop_assert!(rq.iter().rev().eq(set.iter().rev()));
            }
            // Drain (the long form turns short again on the way down).
            let all: Vec<_> = set.iter().copied().collect();
            for e in all {
                prop_assert!(rq.remove(&e));
                set.remove(&e);
                prop_assert_eq!(rq.first(), set.first());
                prop_assert!(rq.iter().eq(set.iter()));
            }
            prop_assert!(rq.is_empty());
        }
    }
}
