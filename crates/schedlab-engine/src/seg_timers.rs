//! The per-CPU segment-completion timers, kept beside the event heap.
//!
//! Every busy CPU always has exactly one "the running segment ends" event pending, and it is
//! the event the simulation handles most (several per context switch). In the heap each one
//! cost a push and a sift-down pop; here each CPU has one slot under a winner tree, so handling
//! a segment end and arming the next one is a single pass up one root path, with no stale
//! copies left behind.
//!
//! The slots obey the rules the heap version followed, so the simulation is unchanged:
//! a slot is only ever moved *earlier* ([`SegTimers::lower`]); a segment re-timed later leaves
//! the earlier key in place, which fires early and is re-armed by its handler
//! ([`SegTimers::rearm_winner`]), exactly as the stale heap entry did. Keys are the event
//! queue's `(time, seq)` keys, drawn from the same sequence counter, so all events keep one
//! total order.

/// A slot with nothing armed: later than any real key.
pub const IDLE: u128 = u128::MAX;

/// Winner tree over one slot per CPU.
///
/// `win[width + cpu] == cpu` for the leaves; `win[i]` for `1 ≤ i < width` is the slot with the
/// smallest key under node `i`, so `win[1]` is the earliest.
#[derive(Clone, Debug)]
pub struct SegTimers {
    width: usize,
    keys: Vec<u128>,
    win: Vec<u32>,
}

impl SegTimers {
    /// One idle slot per CPU.
    pub fn new(nr_cpus: usize) -> Self {
        let width = nr_cpus.next_power_of_two().max(2);
        let mut win = vec![0u32; 2 * width];
        for leaf in 0..width {
            win[width + leaf] = leaf as u32;
        }
        for i in (1..width).rev() {
            win[i] = win[2 * i];
        }
        SegTimers {
            width,
            keys: vec![IDLE; width],
            win,
        }
    }

    /// The earliest slot and its key (`IDLE` when none is armed).
    #[inline]
    pub fn earliest(&self) -> (usize, u128) {
        let leaf = self.win[1] as usize;
        (leaf, self.keys[leaf])
    }

    /// The key in `cpu`'s slot.
    #[inline]
    pub fn key(&self, cpu: usize) -> u128 {
        self.keys[cpu]
    }

    /// Moves `cpu`'s slot to an earlier `key` (or arms an idle one).
    #[inline]
    pub fn lower(&mut self, cpu: usize, key: u128) {
        debug_assert!(key < self.keys[cpu], "a slot only moves earlier");
        self.keys[cpu] = key;
        let leaf = cpu as u32;
        let mut i = (self.width + cpu) / 2;
        while i >= 1 {
            let w = self.win[i];
            // Already the winner here (and so its subtree's minimum got smaller), or now
            // beating the winner: it wins this node; otherwise nothing above changes.
            if w != leaf && self.keys[w as usize] <= key {
                break;
            }
            self.win[i] = leaf;
            i /= 2;
        }
    }

    /// Gives the earliest slot a new key (any value, `IDLE` to disarm) and replays its path.
    #[inline]
    pub fn rearm_winner(&mut self, key: u128) {
        let leaf = self.win[1] as usize;
        self.keys[leaf] = key;
        debug_assert!(self.win.len() == 2 * self.width && self.keys.len() == self.width);
        let (keys, win) = (self.keys.as_ptr(), self.win.as_mut_ptr());
        let mut i = (self.width + leaf) / 2;
        while i >= 1 {
            // SAFETY: `1 <= i < width`, so `2i + 1 < 2 * width == win.len()`; every entry of
            // `win` is a leaf index `< width == keys.len()` (set in `new`, and only ever
            // copied from other entries). Checked indexing here doubled the cost of the
            // simulator's most frequent operation.
            unsafe {
                let (a, b) = (*win.add(2 * i), *win.add(2 * i + 1));
                *win.add(i) = if *keys.add(b as usize) < *keys.add(a as usize) {
                    b
                } else {
                    a
                };
            }
            i /= 2;
        }
    }

    /// Number of armed slots (a diagnostic; O(CPUs)).
    #[cfg(test)]
    pub fn armed(&self) -> usize {
        self.keys.iter().filter(|&&k| k != IDLE).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lowering_a_loser_below_the_winner_takes_the_root() {
        let mut t = SegTimers::new(5);
        t.lower(3, 100);
        t.lower(1, 50);
        assert_eq!(t.earliest(), (1, 50));
        t.lower(3, 20);
        assert_eq!(t.earliest(), (3, 20));
        t.rearm_winner(IDLE);
        assert_eq!(t.earliest(), (1, 50));
        t.rearm_winner(IDLE);
        assert_eq!(t.earliest().1, IDLE);
        assert_eq!(t.armed(), 0);
    }

    proptest! {
        /// Under the allowed operations (lower any slot, re-key the earliest), the root is
        /// always the minimum over a plain array of the slots.
        #[test]
        fn earliest_is_the_minimum(
            nr_cpus in 1usize..70,
            ops in prop::collection::vec((any::<bool>(), 0usize..70, 0u128..100_000), 1..300),
        ) {
            let mut t = SegTimers::new(nr_cpus);
            let mut plain = vec![IDLE; nr_cpus];
            let mut seq = 0u128;
            for (rearm, cpu, key) in ops {
                seq += 1;
                // Unique keys, as the simulator's sequence numbers make them.
                let key = key * 1000 + seq;
                if rearm {
                    let (leaf, _) = t.earliest();
                    let k = if key.is_multiple_of(3) { IDLE } else { key };
                    if leaf < nr_cpus {
                        plain[leaf] = k;
                    }
                    t.rearm_winner(k);
                } else {
                    let cpu = cpu % nr_cpus;
                    if key < plain[cpu] {
                        t.lower(cpu, key);
                        plain[cpu] = key;
                    }
                }
                let want = plain.iter().copied().min().unwrap_or(IDLE);
                prop_assert_eq!(t.earliest().1, want);
                if want != IDLE {
                    prop_assert_eq!(plain[t.earliest().0], want);
                }
            }
        }
    }
}
