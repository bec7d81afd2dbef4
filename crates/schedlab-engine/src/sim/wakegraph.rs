//! The wake graph of a run: who wakes whom, how often a wakee's waker is not its usual
//! partner, the `wakee_flips` counts the wake_wide heuristics read, wakeups that come several
//! to one operation, and sleeps on locks.
//!
//! These counters describe the workload, not the placement: they are kept by the engine with
//! one fixed rule for every era (so a 2.6.33 run and a 6.6 run of one workload report the same
//! kind of numbers), and reading them never changes a decision. They are observed at the top
//! of `try_to_wake_up`, for every wakeup that has a waker task (timer and interrupt wakeups
//! have none and are only counted as such).
//!
//! Definitions:
//! * **usual partner** of a task: the Boyer–Moore majority candidate over the wakers of its
//!   past wakeups (a waker equal to the candidate raises its count, another lowers it and
//!   replaces the candidate at zero). When one waker woke the task more than half of the
//!   time, that waker is the candidate; a 1:1 pair's partner is the other side. A wakeup is
//!   **off-partner** when its waker is not the wakee's candidate before this wakeup; a task's
//!   first woken-by-a-task wakeup has no candidate and is counted as `first`.
//! * **wakee_flips**: the kernel's `record_wakee()` (kernel/sched/fair.c, 3.12 on, with the
//!   halving decay of ~3.16 on): the waker's count goes up by one when it wakes a different
//!   task than the one it woke last, and is halved once a second has passed since the last
//!   decay. The engine keeps its own copy with this one rule (the policies keep the era's
//!   own in `Hints`); the distribution is the wakee's count and the waker's count at each
//!   wakeup, after the waker's update (what `wake_wide()` reads).
//! * **wide**: the wakeups for which 4.3's `wake_wide()` (factor = the waker CPU's LLC size)
//!   would answer true from those counts.
//! * **multi-wake operation**: one operation of one task (same task, same time, same
//!   program counter) that woke two or more tasks: a futex wake of all, a wait-list post, a
//!   barrier's last arrival, a lock release that wakes every waiter.
//! * **lock wait**: a wakeup ending a sleep on a mutex or a reader-writer lock; its time is
//!   from the wakee's last run end (when it blocked) to the wakeup.
//!
//! State: reads `core` (tasks, topology); writes `stats` (the wake-graph counters).

use super::Simulation;
use crate::state::{TaskState, WaitOn};
use crate::task::TaskId;
use crate::time::Time;
use schedlab_topo::CpuId;
use serde::Serialize;

const NSEC_PER_SEC: u64 = 1_000_000_000;
/// Flip counts at or above this are kept in the last slot of the distributions.
const FLIPS_CAP: usize = 1024;

/// Why a woken task had been sleeping (the wait objects of `WaitOn`).
pub const WAIT_KINDS: [&str; 7] = [
    "channel",
    "futex",
    "wait_list",
    "lock",
    "barrier",
    "children",
    "timer",
];

/// Per-task state of the wake graph (not reported).
#[derive(Clone, Copy, Debug, Default)]
struct TaskGraph {
    partner: Option<TaskId>,
    votes: u32,
    flips: u32,
    last_wakee: Option<TaskId>,
    decay_ts: Time,
}

/// The wake-graph counters of one run (see the module doc for the definitions).
#[derive(Clone, Debug, Default, Serialize)]
pub struct WakeGraph {
    /// Wakeups whose waker is a task.
    pub task_wakeups: u64,
    /// ... whose wakee had no usual partner yet.
    pub first: u64,
    /// ... whose waker was not the wakee's usual partner.
    pub off_partner: u64,
    /// `wakee_flips` of the wakee at each wakeup: `[count at flips = 0, 1, 2, ...]` (the
    /// last slot holds everything at or above 1024).
    pub wakee_flips: Vec<u64>,
    /// `wakee_flips` of the waker at each wakeup, after its update.
    pub waker_flips: Vec<u64>,
    /// Wakeups 4.3's `wake_wide()` would call wide.
    pub wide: u64,
    /// Operations that woke two or more tasks.
    pub multi_ops: u64,
    /// Wakeups made by those operations.
    pub multi_wakeups: u64,
    /// Most tasks one operation woke.
    pub max_fanout: u64,
    /// Wakeups by what the wakee slept on: channel, futex, wait list, lock, barrier,
    /// children, timer (the order of `WAIT_KINDS`).
    pub woken_from: [u64; 7],
    /// Wakeups ending a sleep on a lock (mutex or reader-writer lock).
    pub lock_waits: u64,
    /// Their total sleep time, ns.
    pub lock_wait_ns: u64,
    #[serde(skip)]
    tasks: Vec<TaskGraph>,
    /// The operation being counted: (waker, time, program counter) and its wakeups so far.
    #[serde(skip)]
    op: Option<(TaskId, Time, usize)>,
    #[serde(skip)]
    op_wakes: u64,
}

impl WakeGraph {
    fn task(&mut self, t: TaskId) -> &mut TaskGraph {
        if self.tasks.len() <= t.index() {
            self.tasks.resize(t.index() + 1, TaskGraph::default());
        }
        &mut self.tasks[t.index()]
    }

    fn bump(v: &mut Vec<u64>, flips: u32) {
        let i = (flips as usize).min(FLIPS_CAP);
        if v.len() <= i {
            v.resize(i + 1, 0);
        }
        v[i] += 1;
    }

    /// Records one wakeup of `p` by `waker` (running `pc`) on a CPU whose LLC has `llc`
    /// CPUs, at `now`; `slept` is what `p` slept on and `blocked_at` when it blocked.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn record(
        &mut self,
        p: TaskId,
        waker: TaskId,
        pc: usize,
        now: Time,
        llc: usize,
        slept: WaitOn,
        blocked_at: Time,
    ) {
        self.task_wakeups += 1;
        // The wakee's usual partner, before this wakeup.
        let g = self.task(p);
        let (first, off) = match g.partner {
            None => {
                g.partner = Some(waker);
                g.votes = 1;
                (1, 0)
            }
            Some(c) if c == waker => {
                g.votes = g.votes.saturating_add(1);
                (0, 0)
            }
            Some(_) => {
                g.votes -= 1;
                if g.votes == 0 {
                    g.partner = Some(waker);
                    g.votes = 1;
                }
                (0, 1)
            }
        };
        self.first += first;
        self.off_partner += off;
        // record_wakee() on the waker (3.16+ halving decay).
        let w = self.task(waker);
        if now > w.decay_ts.saturating_add(NSEC_PER_SEC) {
            w.flips >>= 1;
            w.decay_ts = now;
        }
        if w.last_wakee != Some(p) {
            w.last_wakee = Some(p);
            w.flips += 1;
        }
        let wf = w.flips;
        let pf = self.task(p).flips;
        Self::bump(&mut self.waker_flips, wf);
        Self::bump(&mut self.wakee_flips, pf);
        // 4.3+ wake_wide(): wide when the smaller count reaches the LLC size and the larger
        // is at least LLC-size times the smaller.
        let factor = llc as u64;
        let (master, slave) = (u64::from(wf.max(pf)), u64::from(wf.min(pf)));
        if !(slave < factor || master < slave * factor) {
            self.wide += 1;
        }
        // Several wakeups of one operation.
        let key = (waker, now, pc);
        if self.op == Some(key) {
            self.op_wakes += 1;
            if self.op_wakes == 2 {
                self.multi_ops += 1;
                self.multi_wakeups += 2;
            } else {
                self.multi_wakeups += 1;
            }
            self.max_fanout = self.max_fanout.max(self.op_wakes);
        } else {
            self.op = Some(key);
            self.op_wakes = 1;
            self.max_fanout = self.max_fanout.max(1);
        }
        let kind = wait_kind(slept);
        self.woken_from[kind] += 1;
        if kind == 3 {
            self.lock_waits += 1;
            self.lock_wait_ns += now.saturating_sub(blocked_at);
        }
    }

    /// Share of task wakeups whose waker was not the wakee's usual partner.
    pub fn off_partner_share(&self) -> f64 {
        self.off_partner as f64 / self.task_wakeups.max(1) as f64
    }

    /// Share of task wakeups made by operations that woke two or more tasks.
    pub fn multi_share(&self) -> f64 {
        self.multi_wakeups as f64 / self.task_wakeups.max(1) as f64
    }

    /// Share of task wakeups 4.3's `wake_wide()` would call wide.
    pub fn wide_share(&self) -> f64 {
        self.wide as f64 / self.task_wakeups.max(1) as f64
    }

    /// The `q`-quantile (0..=1) of a flips distribution (0 when empty).
    pub fn flips_quantile(dist: &[u64], q: f64) -> u64 {
        let total: u64 = dist.iter().sum();
        if total == 0 {
            return 0;
        }
        let want = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        for (i, &n) in dist.iter().enumerate() {
            seen += n;
            if seen >= want {
                return i as u64;
            }
        }
        (dist.len() - 1) as u64
    }

    /// The flips distribution in powers of two: `0 a, 1 b, 2-3 c, 4-7 d, ...`.
    pub fn flips_buckets(dist: &[u64]) -> String {
        let mut out = Vec::new();
        let mut lo = 0usize;
        while lo < dist.len() {
            let hi = if lo == 0 {
                0
            } else {
                (lo * 2 - 1).min(FLIPS_CAP)
            };
            let n: u64 = dist[lo..=hi.min(dist.len() - 1)].iter().sum();
            let label = match (lo, hi) {
                (a, b) if a == b => format!("{a}"),
                (a, b) if b == FLIPS_CAP => format!("{a}+"),
                (a, b) => format!("{a}-{b}"),
            };
            if n > 0 {
                out.push(format!("{label}: {n}"));
            }
            lo = if lo == 0 { 1 } else { lo * 2 };
        }
        if out.is_empty() {
            "none".into()
        } else {
            out.join(", ")
        }
    }

    /// A few lines for `schedlab run`'s text output.
    pub fn to_text(&self) -> String {
        let pct = |x: f64| 100.0 * x;
        let mut s = format!(
            "wake graph: {} task wakeups, off-partner {} ({:.1}%), first {}; multi-wake ops {} \
             waking {} ({:.1}%), max fan-out {}\n",
            self.task_wakeups,
            self.off_partner,
            pct(self.off_partner_share()),
            self.first,
            self.multi_ops,
            self.multi_wakeups,
            pct(self.multi_share()),
            self.max_fanout
        );
        s.push_str(&format!(
            "wakee_flips at wakeup: wakee p50 {} p90 {} p99 {} [{}]; waker p50 {} p90 {} p99 {} \
             [{}]; wake_wide (4.3 rule) {} ({:.1}%)\n",
            Self::flips_quantile(&self.wakee_flips, 0.5),
            Self::flips_quantile(&self.wakee_flips, 0.9),
            Self::flips_quantile(&self.wakee_flips, 0.99),
            Self::flips_buckets(&self.wakee_flips),
            Self::flips_quantile(&self.waker_flips, 0.5),
            Self::flips_quantile(&self.waker_flips, 0.9),
            Self::flips_quantile(&self.waker_flips, 0.99),
            Self::flips_buckets(&self.waker_flips),
            self.wide,
            pct(self.wide_share())
        ));
        let from: Vec<String> = WAIT_KINDS
            .iter()
            .zip(self.woken_from)
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        s.push_str(&format!(
            "woken from: [{}]; lock waits {} ({:.3} ms asleep)\n",
            from.join(", "),
            self.lock_waits,
            self.lock_wait_ns as f64 / 1e6
        ));
        s
    }
}

/// The index in [`WAIT_KINDS`] of a wait object.
fn wait_kind(w: WaitOn) -> usize {
    match w {
        WaitOn::ChannelRead(_) | WaitOn::ChannelWrite(_) => 0,
        WaitOn::Futex(_) => 1,
        WaitOn::SelfEvent => 2,
        WaitOn::Mutex(_) | WaitOn::RwLock(_) => 3,
        WaitOn::Barrier(_) => 4,
        WaitOn::Children => 5,
        WaitOn::Timer => 6,
    }
}

impl Simulation {
    /// Feeds one wakeup of `p` to the wake-graph counters (called at the top of
    /// `try_to_wake_up`; reads only, decides nothing).
    pub(super) fn note_wake_graph(&mut self, p: TaskId, waker: Option<TaskId>, waker_cpu: CpuId) {
        let (Some(w), TaskState::Sleeping(slept)) = (waker, self.core.tasks[p].state) else {
            return;
        };
        let (pc, now, llc) = (
            self.core.tasks[w].pc,
            self.core.now,
            self.core.topo.llc_size(waker_cpu),
        );
        let blocked_at = self.core.tasks[p].last_ran_end;
        self.stats
            .counters
            .wake_graph
            .record(p, w, pc, now, llc, slept, blocked_at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(i: usize) -> TaskId {
        TaskId::new(i)
    }

    #[test]
    fn a_pair_has_no_off_partner_wakeups_and_one_flip() {
        let mut g = WakeGraph::default();
        for k in 0..10u64 {
            let (p, w) = if k % 2 == 0 {
                (t(0), t(1))
            } else {
                (t(1), t(0))
            };
            g.record(p, w, 3, k * 1000, 4, WaitOn::ChannelRead(0), 0);
        }
        assert_eq!(g.task_wakeups, 10);
        assert_eq!(g.first, 2);
        assert_eq!(g.off_partner, 0);
        assert_eq!(g.multi_ops, 0);
        // Each side always wakes the same task: its flips stay at 1.
        assert_eq!(g.waker_flips, vec![0, 10]);
        assert_eq!(g.wide, 0);
    }

    #[test]
    fn a_hub_flips_and_its_wakees_keep_their_partner() {
        // Task 0 wakes tasks 1..=8 in turn; each wakes 0 back.
        let mut g = WakeGraph::default();
        let mut now = 0;
        for _ in 0..20 {
            for c in 1..=8 {
                now += 10;
                g.record(t(c), t(0), 5, now, 4, WaitOn::ChannelRead(0), 0);
                now += 10;
                g.record(t(0), t(c), 5, now, 4, WaitOn::ChannelRead(1), 0);
            }
        }
        // The hub's wakers rotate: every wakeup of the hub after its first is off-partner
        // (each new waker replaces the candidate); the clients are always woken by the hub.
        assert_eq!(g.off_partner, 20 * 8 - 1);
        assert_eq!(g.first, 9);
        // The hub switches wakee every time: 160 flips by its last wakeup.
        assert_eq!(g.waker_flips.len() - 1, 160);
        // The clients' own flips stay 1 and the hub's grow: 4.3's rule needs the smaller
        // count to reach the LLC size (4), so it never calls this wide.
        assert_eq!(g.wide, 0);
    }

    #[test]
    fn one_operation_waking_three_counts_once() {
        let mut g = WakeGraph::default();
        for c in 1..=3 {
            g.record(t(c), t(0), 9, 100, 4, WaitOn::Mutex(0), 40);
        }
        g.record(t(4), t(0), 10, 100, 4, WaitOn::Futex(0), 0);
        assert_eq!(g.multi_ops, 1);
        assert_eq!(g.multi_wakeups, 3);
        assert_eq!(g.max_fanout, 3);
        assert_eq!(g.lock_waits, 3);
        assert_eq!(g.lock_wait_ns, 180);
        assert_eq!(g.woken_from[1], 1);
    }

    #[test]
    fn flips_halve_after_a_second() {
        let mut g = WakeGraph::default();
        for c in 1..=8 {
            g.record(t(c), t(0), 0, 10 * c as u64, 4, WaitOn::Futex(0), 0);
        }
        assert_eq!(g.tasks[0].flips, 8);
        g.record(t(1), t(0), 0, 2 * NSEC_PER_SEC, 4, WaitOn::Futex(0), 0);
        assert_eq!(g.tasks[0].flips, 5);
    }

    #[test]
    fn quantiles_and_buckets_read_the_distribution() {
        let d = vec![5, 3, 1, 1, 0, 0, 0, 0, 2];
        // 12 samples: the 5th is the last at 0, the 6th the first at 1.
        assert_eq!(WakeGraph::flips_quantile(&d, 5.0 / 12.0), 0);
        assert_eq!(WakeGraph::flips_quantile(&d, 0.5), 1);
        assert_eq!(WakeGraph::flips_quantile(&d, 1.0), 8);
        assert_eq!(
            WakeGraph::flips_buckets(&d),
            "0: 5, 1: 3, 2-3: 2, 8-15: 2".to_string()
        );
    }
}
