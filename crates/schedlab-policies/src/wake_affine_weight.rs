//! `wake_affine_weight` (WA_WEIGHT, WA_BIAS; f2cdd9cc6c97, 4.14 on): the load half of
//! [`crate::wake_affine`]'s 4.14 split.

use crate::load::half_imb;
use crate::machine::Machine;
use crate::scan::Scan;
use crate::settings::Settings;
use crate::switches::sw;
use schedlab_engine::WakeCtx;
use schedlab_engine::policy::Affine;
use schedlab_topo::SchedDomain;

/// The waker CPU's load plus the wakee, against prev's load minus it, capacity-scaled, prev
/// biased by half the imbalance_pct (WA_BIAS); a sync waker heavier than its CPU's load pulls.
pub(crate) fn wake_affine_weight<M: Machine>(
    s: &Settings,
    sc: &mut Scan<'_, M>,
    ctx: &WakeCtx,
    sd: &SchedDomain,
) -> bool {
    let (this, prev, p) = (ctx.waker_cpu, ctx.prev_cpu, ctx.wakee);
    let m = sc.m;
    let mut this_eff = m.cpu_load(this) as i64;
    let sync = ctx.sync();
    if let (true, Some(w)) = (sync, ctx.waker) {
        let cur = m.task_load(w) as i64;
        if cur > this_eff {
            sc.affine(Affine::PulledSync);
            return true;
        }
        this_eff -= cur;
    }
    let tl = m.task_load(p) as i64;
    this_eff += tl;
    if s.on(sw!("WA_BIAS")) {
        this_eff *= 100;
    }
    this_eff *= m.capacity(prev) as i64;
    let mut prev_eff = m.cpu_load(prev) as i64 - tl;
    if s.on(sw!("WA_BIAS")) {
        prev_eff *= half_imb(sd);
    }
    prev_eff *= m.capacity(this) as i64;
    if sync {
        prev_eff += 1;
    }
    sc.loads(this_eff, prev_eff);
    sc.decide(this_eff < prev_eff, Affine::PulledWeight)
}
