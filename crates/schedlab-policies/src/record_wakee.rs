//! `record_wakee` (3.12 on, 62470419e993): per waker, how often it switches to a different
//! wakee (`wakee_flips`), decayed once a second (wiped in 3.12-3.15, halved from ~3.16),
//! which [`crate::wake_wide`] reads; plus the WAKEUP_BUDDY relation (Michael Wang, 2013,
//! against 3.9/3.10; a reconstruction): the consecutive-wakeup streak and the buddy test.

use crate::era::Era;
use crate::machine::Machine;
use crate::rules;
use schedlab_engine::WakeCtx;
use schedlab_engine::policy::Hints;

const NSEC_PER_SEC: u64 = 1_000_000_000;

/// `record_wakee` on the waker, plus the consecutive-wakeup streak (kept for WAKEUP_BUDDY).
pub(crate) fn record_wakee<M: Machine>(era: Era, ctx: &WakeCtx, m: &M, hints: &mut Hints) {
    let Some(w) = ctx.waker else { return };
    let now = m.now();
    let h = &mut hints.task[w];
    if now > h.wakee_flip_decay_ts.saturating_add(NSEC_PER_SEC) {
        if !era.has(rules::WAKEE_FLIPS_HALVED) {
            h.wakee_flips = 0;
        } else {
            h.wakee_flips >>= 1;
        }
        h.wakee_flip_decay_ts = now;
    }
    if h.last_wakee != Some(ctx.wakee) {
        h.wakee_flips += 1;
    }
    record_streak(ctx, hints);
}

/// Consecutive wakeups of the same wakee (`wakee_streak`); also sets `last_wakee`.
pub(crate) fn record_streak(ctx: &WakeCtx, hints: &mut Hints) {
    let Some(w) = ctx.waker else { return };
    let h = &mut hints.task[w];
    if h.last_wakee == Some(ctx.wakee) {
        h.wakee_streak = h.wakee_streak.saturating_add(1);
    } else {
        h.wakee_streak = 1;
        h.last_wakee = Some(ctx.wakee);
    }
}

/// WAKEUP_BUDDY: waker and wakee are each other's last wakee, each woke the other at least
/// `reference` times in a row.
pub(crate) fn buddies(ctx: &WakeCtx, hints: &Hints, reference: u64) -> bool {
    let Some(w) = ctx.waker else { return false };
    let (hw, hp) = (&hints.task[w], &hints.task[ctx.wakee]);
    hw.last_wakee == Some(ctx.wakee)
        && hp.last_wakee == Some(w)
        && u64::from(hw.wakee_streak) >= reference
        && u64::from(hp.wakee_streak) >= reference
}
