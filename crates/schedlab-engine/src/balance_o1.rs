//! The 2.5.59 NUMA balancer and its January-2003 variants: `load_balance()` and
//! `find_busiest_node()` of 2.5.59's kernel/sched.c, Ingo Molnar's A2 and B0 reworks and
//! Erich Focht's fixes to A2 (linux-kernel, January 2003; see docs/policies/o1-numa.md).
//!
//! The O(1) scheduler balanced runqueue *lengths*. 2.5.59 added node awareness: a CPU
//! balances within its own node, and every `NODE_BALANCE_RATE`-th balancing call it looks
//! for the busiest node (decayed `node_nr_running`, `NODE_THRESHOLD` = 125 %) and balances
//! with that node's CPUs instead. Ingo Molnar's A2 patch moved node balancing to its own
//! timer ticks; Erich Focht found two bugs in it; B0 added separate idle and busy node ticks.
//!
//! | variant   | intra-node balancing                          | cross-node balancing                      |
//! |-----------|-----------------------------------------------|-------------------------------------------|
//! | `orig`    | idle tick every 1 ms (idle=1), busy tick every 250 ms, and schedule() on an empty queue | every `NODE_BALANCE_RATE`-th of those calls (`nr_balanced`) |
//! | `ingo`    | idle tick: only with its own CPU (bug 1: a no-op); busy tick every 200 ms with idle=1 (bug 2) | every 400 ms (`NODE_REBALANCE_TICK`), idle or busy |
//! | `ingofix` | Erich's run: idle tick every 1 ms over the node (idle=1); busy tick every 200 ms still with idle=1 (bug 2 kept) | every 400 ms, idle or busy |
//! | `ingofixboth` | idle tick every 1 ms over the node (idle=1); busy tick every 200 ms (idle=0) | every 400 ms, idle or busy |
//! | `ingoB0`  | as posted: idle tick every 1 ms (idle arg 0) and busy tick every 200 ms over **all online CPUs** | idle CPUs every 2 ms, busy every 400 ms |
//! | `ingoB0fix` | B0 with a working `__cpu_to_node_mask`: the idle and busy ticks over the node | idle CPUs every 2 ms, busy every 400 ms |
//!
//! schedule() on an empty runqueue balances within the node (idle=1) in the A2 variants and
//! `ingoB0fix`, over all online CPUs in `ingoB0`. B0 as posted (Ingo Molnar, 17 Jan 2003)
//! passes `__cpu_to_node_mask(cpu)` to every intra-node pass, and its new
//! `linux/topology.h` defines that macro as `cpu_online_map` when the architecture does not
//! (Matt Dobson: "defined twice"; no architecture did): so the passes B0 calls intra-node
//! were machine-wide in the kernel Erich Focht measured. Erich's "ingofix" fixed bug 1 (his
//! idle path balances over `__node_to_cpu_mask(this_node)`); he had not applied bug 2's fix
//! ("I didn't see that"), so his busy CPUs still passed idle=1.
//! Every tick constant is a parameter ([`O1Params`]) so Erich Focht's follow-up tests (kernbench,
//! hackbench, numa_test on an 8-CPU, 4-node NEC TX7) can be replayed. The O(1) dynamic priority is not visible to the balancer here: candidates are
//! taken in the queue's pick order, the most recently queued first among tasks of equal nice
//! (the kernel's "from the tail of the highest-priority list"); there is no expired array.
//!
//! `ingo`/`ingofix` balance *across nodes less often from idle CPUs* (400 ms, A2's single
//! node tick) than `orig` (about every 10 ms) and `ingoB0` (2 ms).

use crate::balance::{BalanceOut, Balancer, Migration};
use crate::policy::{Hints, SchedView};
use crate::task::TaskId;
use schedlab_topo::{CpuId, CpuSet};

/// Which January-2003 balancer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum O1Variant {
    /// 2.5.59 as released: `nr_balanced` counts balancing calls; every
    /// `NODE_BALANCE_RATE`-th looks at the busiest node.
    Orig,
    /// Ingo's `sched-2.5.59-A2` with the two bugs Erich Focht reported.
    Ingo,
    /// A2 with Erich Focht's fix of bug 1 (the idle path balances over its node) and bug 2
    /// kept (the busy path passes idle=1): the "ingofix" he measured.
    IngoFix,
    /// A2 with both bugs fixed.
    IngoFixBoth,
    /// Ingo's `-B0` as posted: separate idle and busy node rebalance ticks, and its
    /// "intra-node" passes over all online CPUs (`__cpu_to_node_mask` = `cpu_online_map`).
    IngoB0,
    /// B0 with a working `__cpu_to_node_mask`: its intra-node passes over the node.
    IngoB0Fix,
}

impl O1Variant {
    /// The switch name (`orig`, `ingo`, `ingofix`, `ingoB0`).
    pub fn name(self) -> &'static str {
        match self {
            O1Variant::Orig => "orig",
            O1Variant::Ingo => "ingo",
            O1Variant::IngoFix => "ingofix",
            O1Variant::IngoFixBoth => "ingofixboth",
            O1Variant::IngoB0 => "ingoB0",
            O1Variant::IngoB0Fix => "ingoB0fix",
        }
    }
}

/// The balancer's constants, in jiffies unless stated (HZ = 1000 in this era).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct O1Params {
    /// Which variant's structure.
    pub variant: O1Variant,
    /// `IDLE_REBALANCE_TICK` (1).
    pub idle_rebalance_tick: u64,
    /// `BUSY_REBALANCE_TICK` (250 = HZ/4 in 2.5.59, 200 = HZ/5 from A2 on).
    pub busy_rebalance_tick: u64,
    /// `NODE_BALANCE_RATE` (10 on ia64; `orig` only).
    pub node_balance_rate: u32,
    /// `IDLE_NODE_REBALANCE_TICK` (A2: the single node tick, 400; B0: idle tick × 2 = 2).
    pub idle_node_rebalance_tick: u64,
    /// `BUSY_NODE_REBALANCE_TICK` (busy tick × 2 = 400).
    pub busy_node_rebalance_tick: u64,
    /// `NODE_THRESHOLD` in percent (125).
    pub node_threshold: u32,
    /// `cache_decay_ticks`: a task that ran this recently is cache hot and not moved
    /// (arch-defined; 10 here, a reconstruction \[M\]).
    pub cache_decay_ticks: u64,
}

impl O1Params {
    /// The defaults of a variant (the constants of 2.5.59's kernel/sched.c and of the A2/B0
    /// patches).
    pub fn for_variant(variant: O1Variant) -> Self {
        let busy = if variant == O1Variant::Orig { 250 } else { 200 };
        let idle_node = match variant {
            O1Variant::Orig | O1Variant::Ingo | O1Variant::IngoFix | O1Variant::IngoFixBoth => {
                2 * busy
            }
            O1Variant::IngoB0 | O1Variant::IngoB0Fix => 2,
        };
        O1Params {
            variant,
            idle_rebalance_tick: 1,
            busy_rebalance_tick: busy,
            node_balance_rate: 10,
            idle_node_rebalance_tick: idle_node,
            busy_node_rebalance_tick: 2 * busy,
            node_threshold: 125,
            cache_decay_ticks: 10,
        }
    }
}

impl Default for O1Params {
    fn default() -> Self {
        O1Params::for_variant(O1Variant::Orig)
    }
}

/// Per-runqueue state of the node balancer.
#[derive(Clone, Debug, Default)]
struct RqState {
    /// `prev_cpu_load[i]` (2.5.59: `prev_nr_running`), as seen by this runqueue.
    prev_cpu_load: Vec<u32>,
    /// `prev_node_load[n]`: decayed node loads as seen by this runqueue.
    prev_node_load: Vec<u64>,
    /// `nr_balanced` (2.5.59 only).
    nr_balanced: u32,
}

/// The 2.5.59 node balancer ([`O1Params`] selects the variant).
#[derive(Clone, Debug)]
pub struct O1NodeBalancer {
    /// Constants and variant.
    pub params: O1Params,
    /// Jiffy length, ns.
    pub tick_ns: u64,
    rqs: Vec<RqState>,
}

impl O1NodeBalancer {
    /// A balancer with the given constants.
    pub fn new(params: O1Params, tick_ns: u64) -> Self {
        O1NodeBalancer {
            params,
            tick_ns: tick_ns.max(1),
            rqs: Vec::new(),
        }
    }

    fn ensure(&mut self, view: &SchedView<'_>) {
        if self.rqs.is_empty() {
            let n = view.nr_cpus();
            let nodes = view.topo().nr_nodes();
            self.rqs = (0..n)
                .map(|_| RqState {
                    prev_cpu_load: vec![0; n],
                    prev_node_load: vec![0; nodes],
                    nr_balanced: 0,
                })
                .collect();
        }
    }

    fn node_mask(view: &SchedView<'_>, cpu: CpuId) -> CpuSet {
        view.topo().node_span(cpu).clone()
    }

    /// `find_busiest_node`: decayed loads, `NODE_THRESHOLD`.
    fn find_busiest_node(&mut self, cpu: CpuId, view: &SchedView<'_>) -> Option<usize> {
        let topo = view.topo();
        let this_node = topo.cpu(cpu).node;
        let node_nr = |n: usize| -> u64 {
            topo.nodes()[n]
                .iter()
                .map(|c| view.nr_running(c) as u64)
                .sum()
        };
        let st = &mut self.rqs[cpu];
        let this_load = st.prev_node_load[this_node] / 2 + node_nr(this_node);
        st.prev_node_load[this_node] = this_load;
        let mut best = None;
        let mut maxload = this_load;
        for n in 0..topo.nr_nodes() {
            if n == this_node {
                continue;
            }
            let load = st.prev_node_load[n] / 2 + node_nr(n);
            st.prev_node_load[n] = load;
            if load > maxload && 100 * load > self.params.node_threshold as u64 * this_load {
                best = Some(n);
                maxload = load;
            }
        }
        best
    }

    /// `find_busiest_queue` within `mask`: smoothed lengths, 25 % rule for busy callers.
    fn find_busiest_queue(
        &mut self,
        cpu: CpuId,
        idle: bool,
        mask: &CpuSet,
        view: &SchedView<'_>,
    ) -> Option<(CpuId, u32)> {
        let st = &mut self.rqs[cpu];
        let len = |c: CpuId| view.nr_running(c);
        let my_now = len(cpu);
        let my_len = if idle || my_now > st.prev_cpu_load[cpu] {
            my_now
        } else {
            st.prev_cpu_load[cpu]
        };
        let mut busiest = None;
        let mut max_load = 1u32;
        for i in mask.iter() {
            let now = len(i);
            let l = if idle || now < st.prev_cpu_load[i] {
                now
            } else {
                st.prev_cpu_load[i]
            };
            st.prev_cpu_load[i] = now;
            if l > max_load && i != cpu {
                busiest = Some(i);
                max_load = l;
            }
        }
        let b = busiest?;
        let imbalance = max_load.saturating_sub(my_len) / 2;
        if !idle && imbalance < max_load.div_ceil(4) {
            return None;
        }
        // Re-check "under the lock" with the current lengths.
        if len(b) <= my_len + 1 {
            return None;
        }
        Some((b, imbalance))
    }

    /// Models `load_balance(this_rq, idle, cpumask)` of 2.5.59's kernel/sched.c (and of the
    /// A2/B0 patches, which call it with other masks): `find_busiest_queue()` within
    /// `cpumask`, then pull cache-cold tasks (`CACHE_DECAY_TICKS`) up to the imbalance, one
    /// task when idle. Reconstructed \[M\]: no expired array; candidates in pick order.
    fn load_balance(
        &mut self,
        cpu: CpuId,
        idle: bool,
        mask: &CpuSet,
        view: &SchedView<'_>,
        out: &mut BalanceOut,
    ) {
        out.passes += 1;
        out.cost_ns += mask.count() as u64 * view.profile().search.lb_per_cpu_ns;
        let Some((busiest, mut imbalance)) = self.find_busiest_queue(cpu, idle, mask, view) else {
            return;
        };
        let now = view.now();
        let decay_ns = self.params.cache_decay_ticks * self.tick_ns;
        let cands = candidates(view, busiest);
        let mut examined = 0u64;
        for t in cands {
            examined += 1;
            if out.migrations.iter().any(|m| m.task == t) {
                continue;
            }
            let cold = now.saturating_sub(view.last_ran(t)) > decay_ns;
            if !cold || !view.allowed(t).contains(cpu) {
                continue;
            }
            out.migrations.push(Migration {
                task: t,
                from: busiest,
                to: cpu,
            });
            if idle {
                break;
            }
            imbalance = imbalance.saturating_sub(1);
            if imbalance == 0 {
                break;
            }
        }
        out.cost_ns += examined * view.profile().search.lb_per_task_ns;
    }

    /// 2.5.59's `load_balance` wrapper: node-local, or every `NODE_BALANCE_RATE`-th call
    /// with the busiest node.
    fn load_balance_2559(
        &mut self,
        cpu: CpuId,
        idle: bool,
        view: &SchedView<'_>,
        out: &mut BalanceOut,
    ) {
        let mut mask = Self::node_mask(view, cpu);
        let st = &mut self.rqs[cpu];
        st.nr_balanced += 1;
        if st.nr_balanced >= self.params.node_balance_rate.max(1) {
            st.nr_balanced = 0;
            if let Some(n) = self.find_busiest_node(cpu, view) {
                mask = view.topo().nodes()[n].clone();
                mask.insert(cpu);
            }
        }
        self.load_balance(cpu, idle, &mask, view, out);
    }

    /// The mask of an Ingo variant's "intra-node" pass (`__cpu_to_node_mask(cpu)`): the
    /// node, except in B0 as posted, whose fallback definition made it every online CPU.
    fn intra_node_mask(&self, view: &SchedView<'_>, cpu: CpuId) -> CpuSet {
        if self.params.variant == O1Variant::IngoB0 {
            CpuSet::full(view.nr_cpus())
        } else {
            Self::node_mask(view, cpu)
        }
    }

    /// `balance_node` of the Ingo variants.
    fn balance_node(&mut self, cpu: CpuId, idle: bool, view: &SchedView<'_>, out: &mut BalanceOut) {
        if let Some(n) = self.find_busiest_node(cpu, view) {
            let mut mask = view.topo().nodes()[n].clone();
            mask.insert(cpu);
            self.load_balance(cpu, idle, &mask, view, out);
        }
    }
}

/// Migration candidates on `cpu`: queued tasks in pick order, most recently queued first
/// among equal nice levels.
fn candidates(view: &SchedView<'_>, cpu: CpuId) -> Vec<TaskId> {
    let q: Vec<TaskId> = view.queued(cpu).collect();
    let mut out = Vec::with_capacity(q.len());
    let mut i = 0;
    while i < q.len() {
        let nice = view.nice(q[i]);
        let mut j = i;
        while j < q.len() && view.nice(q[j]) == nice {
            j += 1;
        }
        out.extend(q[i..j].iter().rev());
        i = j;
    }
    out
}

impl Balancer for O1NodeBalancer {
    fn name(&self) -> String {
        format!("o1-numa-{}", self.params.variant.name())
    }

    fn tick(&mut self, cpu: CpuId, view: &SchedView<'_>, _hints: &mut Hints, out: &mut BalanceOut) {
        self.ensure(view);
        let p = self.params;
        let j = view.jiffies();
        let idle = view.curr(cpu).is_none();
        let every = |n: u64| j.is_multiple_of(n.max(1));
        match p.variant {
            O1Variant::Orig => {
                if idle {
                    if every(p.idle_rebalance_tick) {
                        self.load_balance_2559(cpu, true, view, out);
                    }
                } else if every(p.busy_rebalance_tick) {
                    self.load_balance_2559(cpu, false, view, out);
                }
            }
            O1Variant::Ingo
            | O1Variant::IngoFix
            | O1Variant::IngoFixBoth
            | O1Variant::IngoB0
            | O1Variant::IngoB0Fix => {
                let node_tick = if idle {
                    p.idle_node_rebalance_tick
                } else {
                    p.busy_node_rebalance_tick
                };
                if view.topo().nr_nodes() > 1 && every(node_tick) {
                    self.balance_node(cpu, idle, view, out);
                }
                if idle {
                    if every(p.idle_rebalance_tick) {
                        match p.variant {
                            // Bug 1: the idle path balanced with its own CPU only.
                            O1Variant::Ingo => {
                                let own = CpuSet::from_cpus(view.nr_cpus(), [cpu]);
                                self.load_balance(cpu, true, &own, view, out);
                            }
                            O1Variant::IngoFix | O1Variant::IngoFixBoth => {
                                let m = Self::node_mask(view, cpu);
                                self.load_balance(cpu, true, &m, view, out);
                            }
                            _ => {
                                // B0 / 2.6.0: the idle intra-node pass uses idle = 0.
                                let m = self.intra_node_mask(view, cpu);
                                self.load_balance(cpu, false, &m, view, out);
                            }
                        }
                    }
                } else if every(p.busy_rebalance_tick) {
                    // Bug 2: A2's busy path passed idle = 1 (Erich's ingofix kept it).
                    let as_idle = matches!(p.variant, O1Variant::Ingo | O1Variant::IngoFix);
                    let m = self.intra_node_mask(view, cpu);
                    self.load_balance(cpu, as_idle, &m, view, out);
                }
            }
        }
    }

    fn newidle(
        &mut self,
        cpu: CpuId,
        view: &SchedView<'_>,
        _hints: &mut Hints,
        out: &mut BalanceOut,
    ) {
        self.ensure(view);
        match self.params.variant {
            O1Variant::Orig => self.load_balance_2559(cpu, true, view, out),
            _ => {
                let m = self.intra_node_mask(view, cpu);
                self.load_balance(cpu, true, &m, view, out);
            }
        }
    }

    fn wants_idle_ticks(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variant_defaults_follow_the_spec() {
        let o = O1Params::for_variant(O1Variant::Orig);
        assert_eq!(
            (
                o.idle_rebalance_tick,
                o.busy_rebalance_tick,
                o.node_balance_rate
            ),
            (1, 250, 10)
        );
        let a2 = O1Params::for_variant(O1Variant::Ingo);
        assert_eq!(
            (
                a2.busy_rebalance_tick,
                a2.idle_node_rebalance_tick,
                a2.busy_node_rebalance_tick
            ),
            (200, 400, 400)
        );
        let b0 = O1Params::for_variant(O1Variant::IngoB0);
        assert_eq!(
            (b0.idle_node_rebalance_tick, b0.busy_node_rebalance_tick),
            (2, 400)
        );
        assert_eq!(b0.node_threshold, 125);
    }
}
