//! `select_idle_smt` of 4.9-5.11 (10e2f1acd010; 5.12's `select_idle_sibling` tries prev's
//! siblings itself).

use crate::machine::Machine;
use crate::scan::Scan;
use schedlab_topo::CpuId;

/// 4.9-5.11 `select_idle_smt`: an idle allowed SMT sibling of the target.
pub(crate) fn select_idle_smt<M: Machine>(sc: &mut Scan<'_, M>, target: CpuId) -> Option<CpuId> {
    let topo = sc.m.topo();
    if !topo.smt_present() {
        return None;
    }
    topo.smt_siblings(target)
        .iter()
        .find(|&c| c != target && sc.allowed(c) && sc.idle(c))
}
