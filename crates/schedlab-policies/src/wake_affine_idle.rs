//! `wake_affine_idle` (WA_IDLE; d153b153446f, 4.14 on): the idle-state half of
//! [`crate::wake_affine`]'s 4.14 split, with its later clauses (5.10's idle prev, 6.12's
//! runnable count).

use crate::debated;
use crate::machine::Machine;
use crate::rules;
use crate::scan::Scan;
use crate::settings::Settings;
use crate::switches::sw;
use schedlab_engine::WakeCtx;
use schedlab_engine::policy::Affine;
use schedlab_topo::CpuId;

/// An idle waker CPU sharing prev's LLC answers (prev if it is idle too), a sync wakeup onto
/// a CPU running only the waker pulls; from 5.10 an idle prev answers (d8fcb81f1acf;
/// NO_WA_IDLE_PREV drops it); 6.16 counts runnable tasks in the sync test (delayed ones
/// left out, aa3ee4f0b754; NO_SYNC_NR_RUNNABLE counts them as 6.12-6.15 did).
/// WAKEUP_BIAS_PREV_IDLE counts an almost idle prev as idle.
pub(crate) fn wake_affine_idle<M: Machine>(
    s: &Settings,
    sc: &mut Scan<'_, M>,
    ctx: &WakeCtx,
) -> Option<CpuId> {
    let era = s.era;
    let (this, prev) = (ctx.waker_cpu, ctx.prev_cpu);
    let m = sc.m;
    if m.idle(this) && m.topo().cpus_share_cache(this, prev) {
        let prev_idle = sc.idle(prev) || debated::almost_idle(s, sc, prev);
        return Some(if prev_idle { prev } else { this });
    }
    // From 6.16 a delayed-dequeue task does not keep the waker's CPU busy.
    let nr = if s.on(sw!("SYNC_NR_RUNNABLE")) {
        m.nr_runnable(this)
    } else {
        m.nr_running(this)
    };
    if ctx.sync() && nr == 1 {
        sc.affine(Affine::PulledSync);
        return Some(this);
    }
    if era.has(rules::AFFINE_IDLE_PREV)
        && s.on(sw!("WA_IDLE_PREV"))
        && (sc.idle(prev) || debated::almost_idle(s, sc, prev))
    {
        return Some(prev);
    }
    None
}
