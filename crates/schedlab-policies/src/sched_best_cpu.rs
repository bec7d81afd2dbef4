//! `sched_best_cpu` of 2.5.59 (`sched_exec`'s choice in the O(1) scheduler with the first
//! NUMA balancer, January 2003; gone when 2.6.7's sched domains took over exec balancing).

use crate::machine::Machine;
use crate::scan::Scan;
use schedlab_topo::CpuId;

/// 2.5.59 `sched_best_cpu`: an exec'ing task stays when its CPU runs at most two tasks,
/// else moves to the least loaded CPU of the least loaded node (ties to the lowest CPU).
pub(crate) fn sched_best_cpu<M: Machine>(sc: &mut Scan<'_, M>, prev: CpuId) -> CpuId {
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
    topo.nodes()[n]
        .iter()
        .min_by_key(|&c| (m.nr_running(c), c))
        .unwrap_or(prev)
}
