//! `wake_idle` of 2.6.23-2.6.31 (CFS-1's idle search, replaced by 2.6.32's
//! `select_idle_sibling`, a1f84a3ab8e0).

use crate::machine::Machine;
use crate::scan::Scan;
use schedlab_engine::policy::Step;
use schedlab_topo::CpuId;
use schedlab_topo::domains::flags;

/// 2.6.30 `wake_idle`: a busy target (more than one task) is kept; otherwise an idle SMT
/// sibling is preferred (`SD_WAKE_IDLE` was set on the SMT level only).
pub(crate) fn wake_idle<M: Machine>(sc: &mut Scan<'_, M>, cpu: CpuId) -> (CpuId, Step) {
    if sc.idle(cpu) {
        return (cpu, Step::TargetIdle);
    }
    if sc.m.nr_running(cpu) > 1 {
        return (cpu, Step::Target);
    }
    let m = sc.m;
    for sd in m.domains().of(cpu) {
        if !sd.has(flags::SHARE_CPUCAPACITY) {
            break;
        }
        for i in sd.span.iter() {
            if i != cpu && sc.allowed(i) && sc.idle(i) {
                return (i, Step::IdleSmt);
            }
        }
    }
    (cpu, Step::Fallback)
}
