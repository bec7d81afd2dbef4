//! 2.5.59 (the O(1) scheduler with the first NUMA balancer, January 2003): no wake-time
//! search. `try_to_wake_up` pulls a sync wakeup to the waker's CPU and otherwise leaves the
//! task on prev; `wake_up_forked_process` keeps a child on the parent's CPU; `sched_exec`'s
//! `sched_best_cpu` moves an exec'ing task to the least loaded CPU of the least loaded node.

use crate::machine::Machine;
use crate::scan::Scan;
use schedlab_engine::WakeCtx;
use schedlab_engine::policy::{Affine, Step};
use schedlab_topo::CpuId;

/// 2.5.59's placement (`try_to_wake_up`, `wake_up_forked_process`, `sched_exec` with
/// `sched_best_cpu`), as released in January 2003 and kept by the `ingo*` balancer variants:
/// a sync wakeup onto another CPU pulls the task to the waker, forks stay on the parent's
/// CPU, an exec leaves a CPU running more than two tasks for the least loaded CPU of the least
/// loaded node. Nothing is reconstructed here (the balancer variants are, in the engine).
pub(crate) fn select_task_rq<M: Machine>(sc: &mut Scan<'_, M>, ctx: &WakeCtx) -> CpuId {
    let (this, prev) = (ctx.waker_cpu, ctx.prev_cpu);
    sc.step(Step::O1Rule);
    if ctx.is_exec() {
        // sched_best_cpu: stay when nearly alone, else the least loaded CPU of the least
        // loaded node.
        let m = sc.m;
        sc.count(prev);
        if m.nr_running(prev) <= 2 {
            return prev;
        }
        let topo = m.topo();
        let mut best_node = None;
        for (n, span) in topo.nodes().iter().enumerate() {
            let load: u64 = span
                .iter()
                .map(|c| {
                    sc.count(c);
                    m.nr_running(c) as u64
                })
                .sum();
            if best_node.is_none_or(|(_, l)| load < l) {
                best_node = Some((n, load));
            }
        }
        let Some((n, _)) = best_node else { return prev };
        return topo.nodes()[n]
            .iter()
            .min_by_key(|&c| (m.nr_running(c), c))
            .unwrap_or(prev);
    }
    if ctx.is_fork() {
        sc.target(prev);
        return prev;
    }
    if ctx.sync() && prev != this && sc.allowed(this) {
        sc.affine(Affine::PulledSync);
        sc.target(this);
        return this;
    }
    sc.target(prev);
    prev
}
