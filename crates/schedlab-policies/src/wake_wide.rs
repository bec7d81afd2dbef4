//! `wake_wide` of every era that has it, oldest first, from the flip counts
//! [`crate::record_wakee`] keeps:
//!
//! * 3.12-4.2 (Michael Wang, 62470419e993, inside `wake_affine`): wide when the wakee flips
//!   more than the LLC size and the waker flips more than LLC-size times the wakee (the
//!   waker is the "many" side): `wake_wide_3_12`; its mirror for WAKE_WIDE_IDLE_BOTH
//!   (2015, a reconstruction): `wake_wide_mirror`.
//! * 4.3 on (Mike Galbraith's "beef up", 63b0e9edceec, gating want_affine): symmetric; wide
//!   when the smaller flip count reaches the LLC size and the larger is at least LLC-size
//!   times the smaller: `wake_wide_4_3`.

use crate::machine::Machine;
use schedlab_engine::WakeCtx;
use schedlab_engine::policy::Hints;

/// 3.12-4.2 `wake_wide`: the waker is the busier flipper by a factor of the LLC size.
pub(crate) fn wake_wide_3_12<M: Machine>(ctx: &WakeCtx, m: &M, hints: &Hints) -> bool {
    let factor = m.topo().llc_size(ctx.waker_cpu) as u64;
    let (w, p) = flips(ctx, hints);
    p > factor && w > factor * p
}

/// The mirror of [`wake_wide_3_12`]: the wakee is the busier flipper (the other direction
/// of a 1:N relation, for WAKE_WIDE_IDLE_BOTH).
pub(crate) fn wake_wide_mirror<M: Machine>(ctx: &WakeCtx, m: &M, hints: &Hints) -> bool {
    let factor = m.topo().llc_size(ctx.waker_cpu) as u64;
    let (w, p) = flips(ctx, hints);
    w > factor && p > factor * w
}

/// 4.3+ `wake_wide` (Galbraith's "beef up"): symmetric in waker and wakee.
pub(crate) fn wake_wide_4_3<M: Machine>(ctx: &WakeCtx, m: &M, hints: &Hints) -> bool {
    let factor = m.topo().llc_size(ctx.waker_cpu) as u64;
    let (w, p) = flips(ctx, hints);
    let (master, slave) = if w >= p { (w, p) } else { (p, w) };
    !(slave < factor || master < slave * factor)
}

/// The `wakee_flips` of waker and wakee (0 for a wakeup without a waker task).
fn flips(ctx: &WakeCtx, hints: &Hints) -> (u64, u64) {
    let waker = ctx.waker.map_or(0, |w| hints.task[w].wakee_flips as u64);
    (waker, hints.task[ctx.wakee].wakee_flips as u64)
}
