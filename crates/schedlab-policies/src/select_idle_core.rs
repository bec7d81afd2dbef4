//! `select_idle_core` of 4.9-5.11 (10e2f1acd010; from 5.12 the idle-core pass is part of the
//! merged scan in [`crate::select_idle_cpu`]).

use crate::machine::Machine;
use crate::scan::Scan;
use schedlab_engine::policy::Hints;
use schedlab_topo::{CpuId, CpuSet};

/// 4.9 `select_idle_core`: a core of the LLC whose threads are all idle, scanning from the
/// target; only while `has_idle_cores`, which a failed scan clears.
pub(crate) fn select_idle_core<M: Machine>(
    sc: &mut Scan<'_, M>,
    hints: &mut Hints,
    span: &CpuSet,
    target: CpuId,
) -> Option<CpuId> {
    let topo = sc.m.topo();
    let llc = topo.cpu(target).llc;
    if !topo.smt_present() || !hints.llc[llc].has_idle_cores {
        return None;
    }
    let mut cand = span.and(sc.m.allowed(sc.p));
    for core in span.iter_wrap(target) {
        if !cand.contains(core) {
            continue;
        }
        let sibs = topo.smt_siblings(core);
        let mut all = true;
        for c in sibs.iter() {
            all &= sc.idle(c);
        }
        if all {
            return Some(core);
        }
        cand.andnot_assign(sibs);
    }
    hints.llc[llc].has_idle_cores = false;
    None
}
