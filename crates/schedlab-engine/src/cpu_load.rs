//! `rq->cpu_load[]`: the per-CPU load averages of the 2.6.x-4.x load balancer, and the
//! per-domain indices that choose which one a balancing pass reads.
//!
//! Until 5.0 each runqueue kept `CPU_LOAD_IDX_MAX` = 5 loads, refreshed every tick
//! (`update_cpu_load()`, from 3.x `__update_cpu_load()` in kernel/sched/proc.c or fair.c):
//! `cpu_load[0]` is the current load and `cpu_load[i]` moves `1/2^i` of the way towards it,
//! rounding up when the load grows. A balancing pass reads `cpu_load[idx - 1]` through
//! `source_load()` (the smaller of it and the current load: a source looks no busier than it
//! is now) and `target_load()` (the larger: a destination looks no idler), where `idx` is the
//! domain's `busy_idx`, `idle_idx` or `newidle_idx` by the pass's idle type
//! (`get_sd_load_idx()`), and index 0 reads the current load. With `LB_BIAS` (on until 4.19)
//! this makes the balancer slow to react: a burst on a remote node must last some ticks
//! before a busy CPU pulls it. 5.0 replaced `source_load()`/`target_load()` by the current
//! load (commit 1c1b8a7b03ef) and removed the array; the eras from 5.13 use [`LoadIdx::None`].
//!
//! Reconstructed \[M\]: a CPU that stopped ticking while idle is read as if its missed ticks
//! had each decayed the averages with load 0 (what `decay_load_missed()`, 3.0 on, applies
//! when the CPU or the nohz balancer next updates it; 2.6.3x left the values stale until the
//! CPU ticked again).

use crate::time::Time;
use schedlab_topo::SchedDomain;
use schedlab_topo::domains::flags;

/// Number of averages (`CPU_LOAD_IDX_MAX`).
pub const CPU_LOAD_IDX_MAX: usize = 5;

/// Which load-index table an era's domains carry (the `SD_*_INIT` initialisers of
/// include/linux/topology.h and arch/x86/include/asm/topology.h; from 3.x
/// `sd_init()`/`sd_numa_init()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadIdx {
    /// 5.0 on: no `cpu_load[]`; every pass reads the current load.
    None,
    /// 2.6.2x-2.6.31 (x86-64): MC busy 2; package busy 2, idle 1, newidle 2; node busy 3,
    /// idle 2, newidle 2; `wake_idx` 1 above SMT.
    V2_6_31,
    /// 2.6.32-4.18 (x86-64; "sched: Tweak wake_idx" and the newidle/forkexec tweaks of
    /// 2.6.32 set the wake, fork and newidle indices to 0): MC busy 2; package busy 2, idle 1;
    /// NUMA busy 3, idle 2. Same values in 3.10 (`SD_MC_INIT`, `SD_CPU_INIT`,
    /// `sd_numa_init()`) and 4.14 (`sd_init()`).
    V2_6_32,
}

/// The balancing pass's idle type, for [`LoadIdx::index`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassKind {
    /// `CPU_NOT_IDLE`: `busy_idx`.
    Busy,
    /// `CPU_IDLE`: `idle_idx`.
    Idle,
    /// `CPU_NEWLY_IDLE`: `newidle_idx`.
    NewlyIdle,
}

impl LoadIdx {
    /// `sd->wake_idx`, the index `wake_affine()` and passive balancing read at `sd`: 1 above
    /// the SMT level in 2.6.2x-2.6.31, 0 from 2.6.32 ("sched: Tweak wake_idx").
    pub fn wake_index(self, sd: &SchedDomain) -> usize {
        if self == LoadIdx::V2_6_31 && !sd.has(flags::SHARE_CPUCAPACITY) {
            1
        } else {
            0
        }
    }

    /// The load index a pass of `kind` reads at domain `sd` (0: the current load).
    pub fn index(self, sd: &SchedDomain, kind: PassKind) -> usize {
        if self == LoadIdx::None || sd.has(flags::SHARE_CPUCAPACITY) {
            return 0;
        }
        // (busy, idle, newidle) per level.
        let (busy, idle, newidle) = if sd.has(flags::SHARE_LLC) {
            (2, 0, 0)
        } else if sd.has(flags::NUMA) {
            match self {
                LoadIdx::V2_6_31 => (3, 2, 2),
                _ => (3, 2, 0),
            }
        } else {
            match self {
                LoadIdx::V2_6_31 => (2, 1, 2),
                _ => (2, 1, 0),
            }
        };
        match kind {
            PassKind::Busy => busy,
            PassKind::Idle => idle,
            PassKind::NewlyIdle => newidle,
        }
    }
}

/// One CPU's `cpu_load[]` and when it was last refreshed.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuLoad {
    load: [u64; CPU_LOAD_IDX_MAX],
    /// Tick number (time / tick length) of the last refresh.
    last_tick: u64,
}

impl CpuLoad {
    /// One refresh with the current load `this_load` (`__update_cpu_load()` with one pending
    /// update), after `missed` ticks without one that each count as load 0.
    pub fn update(&mut self, this_load: u64, now: Time, tick_ns: u64) {
        let tick = now / tick_ns.max(1);
        let missed = tick.saturating_sub(self.last_tick).saturating_sub(1);
        self.decay_missed(missed);
        self.load[0] = this_load;
        for i in 1..CPU_LOAD_IDX_MAX {
            self.load[i] = Self::step(self.load[i], this_load, i);
        }
        self.last_tick = tick;
    }

    /// `cpu_load[idx]` as the kernel would read it at `now`: refreshed while the CPU
    /// ticks; if it has been idle and tickless since (`idle`), decayed for the ticks missed.
    pub fn read(&self, idx: usize, now: Time, tick_ns: u64, idle: bool) -> u64 {
        let mut c = *self;
        if idle {
            let tick = now / tick_ns.max(1);
            c.decay_missed(tick.saturating_sub(self.last_tick));
        }
        c.load[idx.min(CPU_LOAD_IDX_MAX - 1)]
    }

    fn step(old: u64, new: u64, i: usize) -> u64 {
        let scale = 1u64 << i;
        // Rounding up when the load grows lets the average reach it.
        let new = if new > old { new + scale - 1 } else { new };
        (old.saturating_mul(scale - 1).saturating_add(new)) >> i
    }

    /// `n` updates with load 0: the kernel's `decay_load_missed()` (which reads the same
    /// factors from a table and gives 0 after 8, 32, 64 and 128 missed ticks for indices
    /// 1-4).
    fn decay_missed(&mut self, n: u64) {
        if n == 0 {
            return;
        }
        self.load[0] = 0;
        const ZERO_AFTER: [u64; CPU_LOAD_IDX_MAX] = [0, 8, 32, 64, 128];
        for (i, load) in self.load.iter_mut().enumerate().skip(1) {
            if n >= ZERO_AFTER[i] {
                *load = 0;
                continue;
            }
            for _ in 0..n {
                *load = Self::step(*load, 0, i);
                if *load == 0 {
                    break;
                }
            }
        }
    }
}

/// `source_load(cpu, idx)` with `LB_BIAS`: at most the current load.
pub fn source_load(avg: u64, current: u64) -> u64 {
    avg.min(current)
}

/// `target_load(cpu, idx)` with `LB_BIAS`: at least the current load.
pub fn target_load(avg: u64, current: u64) -> u64 {
    avg.max(current)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: u64 = 1_000_000;

    #[test]
    fn averages_move_towards_the_load_by_their_fraction() {
        let mut c = CpuLoad::default();
        c.update(1024, TICK, TICK);
        // cpu_load[1] = (0 + 1024 + 1) / 2, [2] = (0 + 1024 + 3) / 4, ...
        assert_eq!(c.read(0, TICK, TICK, false), 1024);
        assert_eq!(c.read(1, TICK, TICK, false), 512);
        assert_eq!(c.read(2, TICK, TICK, false), 256);
        assert_eq!(c.read(4, TICK, TICK, false), 64);
        for t in 2..200 {
            c.update(1024, t * TICK, TICK);
        }
        // The round-up lets every average reach a steady load.
        for i in 0..CPU_LOAD_IDX_MAX {
            assert_eq!(c.read(i, 199 * TICK, TICK, false), 1024, "cpu_load[{i}]");
        }
    }

    #[test]
    fn idle_ticks_decay_the_averages() {
        let mut c = CpuLoad::default();
        for t in 1..200 {
            c.update(2048, t * TICK, TICK);
        }
        // Two ticks idle: [1] halves twice, [2] keeps (3/4)^2.
        let now = 201 * TICK;
        assert_eq!(c.read(0, now, TICK, true), 0);
        assert_eq!(c.read(1, now, TICK, true), 512);
        assert_eq!(c.read(2, now, TICK, true), 1152);
        // A busy CPU's value is the last refresh's.
        assert_eq!(c.read(2, now, TICK, false), 2048);
        // Past the kernel's zero points, nothing is left.
        assert_eq!(c.read(1, now + 8 * TICK, TICK, true), 0);
        assert_eq!(c.read(4, now + 200 * TICK, TICK, true), 0);
        // A tick after an idle stretch decays the three missed ticks first: four halvings.
        c.update(0, 203 * TICK, TICK);
        assert_eq!(c.read(1, 203 * TICK, TICK, false), 128);
    }

    #[test]
    fn bias_makes_sources_no_busier_and_targets_no_idler() {
        assert_eq!(source_load(300, 1024), 300);
        assert_eq!(source_load(2048, 1024), 1024);
        assert_eq!(target_load(300, 1024), 1024);
        assert_eq!(target_load(2048, 1024), 2048);
    }
}
