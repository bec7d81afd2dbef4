//! `select_task_rq_fair` of every CFS and EEVDF era, oldest first, as `git log -L` of fair.c
//! would show it. [`crate::ERAS`]' [`crate::Flow`] column picks the version:
//!
//! | function | kernels | shape |
//! |---|---|---|
//! | `select_task_rq_fair_2_6_23` | 2.6.23-2.6.31 | `wake_affine` on the lowest common domain, passive balance, `wake_idle` |
//! | `select_task_rq_fair_2_6_32` | 2.6.32-2.6.34 | merged walk, `select_idle_sibling(p, sd, target)` inside it, `wake_affine` |
//! | `select_task_rq_fair_2_6_35` | 2.6.35-4.2 | `wake_affine` picks waker vs prev, then `select_idle_sibling(p, target)`; `wake_wide` from 3.12 |
//! | `select_task_rq_fair_4_3` | 4.3 on | the symmetric `wake_wide` gates want_affine; the walk; `wake_affine`; `select_idle_sibling` |
//!
//! Forks and execs take the slow path ([`crate::find_idlest_cpu`]) from the highest domain
//! with the matching balance flag. Calls go down only: to `record_wakee`, `wake_wide`,
//! `wake_affine`, `select_idle_sibling`, `wake_idle` and `find_idlest_cpu`.

use crate::debated;
use crate::era::IdleSearch;
use crate::find_idlest_cpu::find_idlest_cpu;
use crate::load::half_imb;
use crate::machine::Machine;
use crate::record_wakee::{buddies, record_streak, record_wakee};
use crate::rules;
use crate::scan::Scan;
use crate::select_idle_sibling::{select_idle_sibling, select_idle_sibling_2_6_32};
use crate::settings::Settings;
use crate::switches::sw;
use crate::wake_affine::{
    wake_affine_2_6_25, wake_affine_2_6_32, wake_affine_3_16, wake_affine_4_14,
};
use crate::wake_idle::wake_idle;
use crate::wake_wide::{wake_wide_3_12, wake_wide_4_3, wake_wide_mirror};
use schedlab_engine::WakeCtx;
use schedlab_engine::policy::{Affine, Hints, Step};
use schedlab_topo::domains::flags;
use schedlab_topo::{CpuId, SchedDomain, SdFlags};

/// 2.6.23-2.6.31 (CFS-1, until the merged walk of 2.6.32): forks and execs take the slow
/// path; a wakeup asks `wake_affine` on the lowest domain spanning waker and prev, then
/// passive balancing, then `wake_idle` around the chosen CPU.
/// Reconstructed \[M\]: SD_WAKE_BALANCE (passive balancing) assumed on every non-NUMA level.
pub(crate) fn select_task_rq_fair_2_6_23<M: Machine>(
    sc: &mut Scan<'_, M>,
    s: &Settings,
    ctx: &WakeCtx,
) -> CpuId {
    if !ctx.is_ttwu() {
        return fork_exec(sc, s, ctx);
    }
    let (this, prev) = (ctx.waker_cpu, ctx.prev_cpu);
    let idle_step = |sc: &mut Scan<'_, M>, c: CpuId| -> CpuId {
        sc.target(c);
        let r = if s.on(sw!("SELECT_IDLE_SIBLING")) {
            wake_idle(sc, c)
        } else {
            (c, Step::Target)
        };
        sc.done(r)
    };
    if prev == this {
        return idle_step(sc, prev);
    }
    let m = sc.m;
    let this_sd = m.domains().lowest_spanning(this, prev);
    let Some(sd) = this_sd.filter(|_| sc.allowed(this) && s.on(sw!("WAKE_AFFINE"))) else {
        sc.affine(if s.on(sw!("WAKE_AFFINE")) {
            Affine::NoDomain
        } else {
            Affine::Declined
        });
        return idle_step(sc, prev);
    };
    if wake_affine_2_6_25(sc, s, ctx, sd) {
        sc.target(this);
        return sc.done((this, Step::Target));
    }
    // Passive balancing: pull when the waker's CPU is below prev by half the imbalance
    // (SD_WAKE_BALANCE assumed on every non-NUMA level [M]), on the same loads.
    if !sd.has(flags::NUMA) && s.on(sw!("AFFINE_WAKEUPS")) {
        let imb = half_imb(sd);
        let idx = s.era.load_idx().wake_index(sd);
        let (load, this_load) = (
            m.source_load(prev, idx) as i64,
            m.target_load(this, idx) as i64,
        );
        if imb * this_load <= 100 * load {
            sc.affine(Affine::PulledWeight);
            sc.loads(imb * this_load, 100 * load);
            sc.target(this);
            return sc.done((this, Step::Target));
        }
    }
    idle_step(sc, prev)
}

/// 2.6.32-2.6.34 (CFS-2: Peter Zijlstra's merged domain walk of 2.6.32, until CFS-3's
/// wake_affine-first order in 2.6.35): one walk up the domains finds the affine domain,
/// runs `select_idle_sibling` inside it (a1f84a3ab8e0) and remembers the highest
/// BALANCE_WAKE domain for the slow path. RAMP and AFFINE_TARGET (January 2010 proposals
/// against 2.6.33-rc) are reconstructions from their descriptions.
pub(crate) fn select_task_rq_fair_2_6_32<M: Machine>(
    sc: &mut Scan<'_, M>,
    s: &Settings,
    ctx: &WakeCtx,
) -> CpuId {
    if !ctx.is_ttwu() {
        return fork_exec(sc, s, ctx);
    }
    let m = sc.m;
    let (this, prev) = (ctx.waker_cpu, ctx.prev_cpu);
    let mut want_affine = sc.allowed(this)
        && s.on(sw!("WAKE_AFFINE"))
        && (!s.era.has(rules::AFFINE_WAKEUPS) || s.on(sw!("AFFINE_WAKEUPS")));
    let package = matches!(s.era.idle_search(), IdleSearch::InWalk { package: true });
    // RAMP's gate: the posted diff's "the waker runs alone", or 2.6.34's "not an interrupt
    // wakeup" (RAMP_NOT_IDLE).
    let ramp = s.on(sw!("RAMP"))
        && if s.on(sw!("RAMP_NOT_IDLE")) {
            ctx.waker.is_some()
        } else {
            m.nr_running(this) == 1
        };
    let chain = m.domains().of(this);
    let mut cpu = this;
    let mut affine_sd = None;
    let mut wake_sd = None;
    let mut found: Option<Step> = None;
    let asked = want_affine;
    for (idx, tmp) in chain.iter().enumerate() {
        if !tmp.has(flags::LOAD_BALANCE) {
            continue;
        }
        if want_affine {
            let mut target = tmp.span.contains(prev).then_some(this);
            let enabled = if s.on(sw!("RAMP")) {
                ramp && tmp.has(flags::SHARE_LLC)
            } else if package {
                package_level(m, tmp, this)
            } else {
                tmp.has(flags::SHARE_LLC)
            };
            if enabled && s.on(sw!("SELECT_IDLE_SIBLING")) {
                let (t, st) = select_idle_sibling_2_6_32(sc, tmp, target, prev);
                if st.is_some() {
                    found = st;
                }
                target = t;
            }
            if let Some(t) = target {
                if tmp.has(flags::WAKE_AFFINE) {
                    affine_sd = Some(idx);
                    want_affine = false;
                }
                cpu = t;
            }
        }
        if tmp.has(flags::BALANCE_WAKE) {
            wake_sd = Some(idx);
        }
    }
    sc.target(cpu);
    if let Some(ai) = affine_sd {
        let step = found.unwrap_or(Step::Target);
        if ramp && found.is_some() {
            sc.affine(Affine::PulledSibling);
            return sc.done((cpu, step));
        }
        if cpu == prev {
            sc.affine(if found.is_some() {
                Affine::KeptIdle
            } else {
                Affine::NotAsked
            });
            return sc.done((cpu, step));
        }
        let load_cpu = if s.on(sw!("AFFINE_TARGET")) {
            cpu
        } else {
            this
        };
        if wake_affine_2_6_32(sc, s, ctx, &chain[ai], load_cpu, true) {
            return sc.done((cpu, step));
        }
    } else {
        sc.affine(if !asked {
            Affine::Declined
        } else {
            Affine::NoDomain
        });
    }
    sc.target(prev);
    if let Some(wi) = wake_sd {
        let c = find_idlest_cpu(sc, s.era, this, wi, prev, flags::BALANCE_WAKE);
        return sc.done((c, Step::SlowPath));
    }
    sc.done((prev, Step::Target))
}

/// 2.6.35-4.2 (CFS-3: Suresh Siddha's 99bd5e2f245d of 2.6.35, until 4.3's beefed-up
/// `wake_wide`, 63b0e9edceec, moved the wide test out of `wake_affine`): `wake_affine`
/// picks waker or prev (from 3.12 after `record_wakee` and the first `wake_wide`,
/// 62470419e993), then `select_idle_sibling` searches around the choice. WAKEUP_BUDDY
/// (2013), WAKE_WIDE_IDLE and PREFER_IDLE_CPU (2015) are reconstructions.
pub(crate) fn select_task_rq_fair_2_6_35<M: Machine>(
    sc: &mut Scan<'_, M>,
    s: &Settings,
    ctx: &WakeCtx,
    hints: &mut Hints,
) -> CpuId {
    if !ctx.is_ttwu() {
        return fork_exec(sc, s, ctx);
    }
    let m = sc.m;
    let (this, prev) = (ctx.waker_cpu, ctx.prev_cpu);
    if s.era.has(rules::RECORD_WAKEE) {
        record_wakee(s.era, ctx, m, hints);
    } else if s.on(sw!("WAKEUP_BUDDY")) {
        record_streak(ctx, hints);
    }
    // WAKEUP_BUDDY read as clearing want_affine: no affine domain, so a non-buddy returns
    // prev without a search (3.10 with no BALANCE_WAKE domain), waker on prev or not.
    if s.on(sw!("WAKEUP_BUDDY"))
        && s.on(sw!("WAKEUP_BUDDY_PREV"))
        && !buddies(ctx, hints, s.value(sw!("wakeup_buddy_ref")))
    {
        sc.affine(Affine::Declined);
        sc.target(prev);
        return sc.done((prev, Step::Target));
    }
    let want_affine = s.on(sw!("WAKE_AFFINE")) && sc.allowed(this);
    let chain = m.domains().of(this);
    let affine_sd = if want_affine {
        chain
            .iter()
            .find(|d| d.has(flags::WAKE_AFFINE) && d.span.contains(prev))
    } else {
        None
    };
    let against_4_2 = s.era.has(rules::AGAINST_4_2);
    let wide_idle =
        against_4_2 && (s.on(sw!("WAKE_WIDE_IDLE")) || s.on(sw!("WAKE_WIDE_IDLE_BOTH")));
    let mut wide = false;
    let mut target = prev;
    let mut pulled = false;
    match affine_sd {
        None => sc.affine(if want_affine {
            Affine::NoDomain
        } else {
            Affine::Declined
        }),
        Some(_) if this == prev => sc.affine(Affine::NotAsked),
        Some(sd) => {
            if s.era.has(rules::RECORD_WAKEE) && s.on(sw!("WAKE_WIDE")) {
                wide = if wide_idle && s.on(sw!("WAKE_WIDE_IDLE_SYM")) {
                    wake_wide_4_3(ctx, m, hints)
                } else {
                    wake_wide_3_12(ctx, m, hints)
                        || (s.on(sw!("WAKE_WIDE_IDLE_BOTH")) && wake_wide_mirror(ctx, m, hints))
                };
                sc.wide(wide);
            }
            if wide {
                sc.affine(Affine::WakeWide);
            } else if s.on(sw!("WAKEUP_BUDDY"))
                && !buddies(ctx, hints, s.value(sw!("wakeup_buddy_ref")))
            {
                sc.affine(Affine::Declined);
            } else {
                pulled = if s.era.has(rules::CAPACITY_WAKE_AFFINE) {
                    wake_affine_3_16(sc, ctx, sd)
                } else {
                    wake_affine_2_6_32(sc, s, ctx, sd, this, false)
                };
                if pulled {
                    target = this;
                    if s.on(sw!("WAKEUP_BUDDY")) {
                        sc.affine(Affine::PulledBuddy);
                    }
                }
            }
        }
    }
    let (cpu, step) = select_idle_sibling(sc, s, hints, prev, target);
    if wide_idle && wide && !m.idle(cpu) {
        // WAKE_WIDE_IDLE: before stacking, an idle CPU of the wide span, from prev.
        let prev_chain = m.domains().of(prev);
        if s.on(sw!("WAKE_WIDE_IDLE_SLOW")) {
            let (idx, flag) = match wake_balance_domain(m, prev) {
                Some(i) => (Some(i), flags::BALANCE_WAKE),
                None => (
                    highest_with(prev_chain, flags::BALANCE_FORK),
                    flags::BALANCE_FORK,
                ),
            };
            if let Some(i) = idx {
                let c = find_idlest_cpu(sc, s.era, prev, i, prev, flag);
                return sc.done((c, Step::WideIdle));
            }
        } else {
            let span = match wake_balance_domain(m, prev) {
                Some(i) => prev_chain[i].span.clone(),
                None => m.topo().node_span(prev).clone(),
            };
            for c in span.iter_wrap(prev) {
                if sc.allowed(c) && sc.idle(c) {
                    return sc.done((c, Step::WideIdle));
                }
            }
        }
    }
    if against_4_2 && s.on(sw!("PREFER_IDLE_CPU")) && !m.idle(cpu) {
        if s.on(sw!("PREFER_IDLE_CPU_WIDE")) {
            // The wide reading: non-affine wakeups only, over the waker's highest
            // BALANCE_WAKE domain, else its highest BALANCE_FORK one.
            if !pulled {
                let (idx, flag) = match wake_balance_domain(m, this) {
                    Some(i) => (Some(i), flags::BALANCE_WAKE),
                    None => (
                        highest_with(chain, flags::BALANCE_FORK),
                        flags::BALANCE_FORK,
                    ),
                };
                if let Some(i) = idx {
                    let c = find_idlest_cpu(sc, s.era, this, i, prev, flag);
                    return sc.done((c, Step::SlowPath));
                }
            }
        } else {
            // The fall-through reading the 4.1 base allows: the slow path over the walk's
            // `sd`, the highest BALANCE_WAKE domain below the affine one, from the waker's CPU,
            // pulled or not; nothing where no domain has BALANCE_WAKE.
            let flag = if s.on(sw!("SD_BALANCE_WAKE")) {
                flags::LOAD_BALANCE
            } else {
                flags::BALANCE_WAKE
            };
            let mut sd = None;
            for (idx, tmp) in chain.iter().enumerate() {
                if !tmp.has(flags::LOAD_BALANCE) {
                    break;
                }
                if want_affine && tmp.has(flags::WAKE_AFFINE) && tmp.span.contains(prev) {
                    break;
                }
                if tmp.has(flag) {
                    sd = Some(idx);
                }
            }
            if let Some(i) = sd {
                let c = find_idlest_cpu(sc, s.era, this, i, prev, flag);
                return sc.done((c, Step::SlowPath));
            }
        }
    }
    sc.done((cpu, step))
}

/// 4.3 onwards (63b0e9edceec in 4.3; from 4.9 prev is passed to `select_idle_sibling`, and
/// EEVDF's 6.6-6.18 keep it): `record_wakee` and the symmetric `wake_wide` decide
/// want_affine; one walk finds the affine domain or the highest domain with the placement's
/// balance flag (the slow path); an affine wakeup asks `wake_affine` between waker and prev,
/// then `select_idle_sibling`. 5.13 keeps the 4.16-5.15 `recent_used_cpu` bookkeeping on the
/// waker's side \[M\].
pub(crate) fn select_task_rq_fair_4_3<M: Machine>(
    sc: &mut Scan<'_, M>,
    s: &Settings,
    ctx: &WakeCtx,
    hints: &mut Hints,
) -> CpuId {
    let m = sc.m;
    let (this, prev) = (ctx.waker_cpu, ctx.prev_cpu);
    let ttwu = ctx.is_ttwu();
    let flag = sd_flag(ctx);
    let mut want_affine = false;
    if ttwu {
        record_wakee(s.era, ctx, m, hints);
        let wide = s.on(sw!("WAKE_WIDE")) && sc.wide(wake_wide_4_3(ctx, m, hints));
        want_affine = !wide && sc.allowed(this) && s.on(sw!("WAKE_AFFINE"));
        if wide {
            sc.affine(Affine::WakeWide);
        } else if !want_affine {
            sc.affine(Affine::Declined);
        }
    }
    // Desnoyers 2023: a task that migrated within the period stays on prev.
    if ttwu && debated::ratelimited(s, sc, ctx, hints) {
        sc.target(prev);
        return sc.done((prev, Step::Target));
    }
    let chain = m.domains().of(this);
    let mut affine_sd = None;
    let mut sd = None;
    for (idx, tmp) in chain.iter().enumerate() {
        if s.era.has(rules::LOAD_BALANCE_FLAG) && !tmp.has(flags::LOAD_BALANCE) {
            break;
        }
        if want_affine && tmp.has(flags::WAKE_AFFINE) && tmp.span.contains(prev) {
            affine_sd = Some(tmp);
            break;
        }
        if tmp.has(flag) {
            sd = Some(idx);
        } else if !want_affine {
            break;
        }
    }
    let mut new = prev;
    if let Some(asd) = affine_sd {
        sd = None;
        if this != prev {
            new = if s.era.has(rules::WA_SPLIT) {
                wake_affine_4_14(s, sc, ctx, asd)
            } else if wake_affine_3_16(sc, ctx, asd) {
                this
            } else {
                prev
            };
        } else {
            sc.affine(Affine::NotAsked);
        }
    } else if want_affine {
        sc.affine(Affine::NoDomain);
    }
    if let Some(i) = sd {
        sc.target(this);
        let c = find_idlest_cpu(sc, s.era, this, i, prev, flag);
        return sc.done((c, Step::SlowPath));
    }
    if !ttwu {
        sc.target(new);
        return sc.done((new, Step::Target));
    }
    let found = select_idle_sibling(sc, s, hints, prev, new);
    // The waker remembers its CPU for its own next wakeup.
    if want_affine
        && s.on(sw!("RECENT_USED_CPU"))
        && s.era.has(rules::RECENT_USED_WAKER_SIDE)
        && let Some(w) = ctx.waker
    {
        hints.task[w].recent_used_cpu = Some(this);
    }
    sc.done(found)
}

/// The `SD_BALANCE_*` flag of a placement (`sd_flag` of the kernel's signature).
fn sd_flag(ctx: &WakeCtx) -> SdFlags {
    if ctx.is_fork() {
        flags::BALANCE_FORK
    } else if ctx.is_exec() {
        flags::BALANCE_EXEC
    } else {
        flags::BALANCE_WAKE
    }
}

/// Highest domain of `cpu` with `flag` (2.6.x-4.2 walk: every level).
fn highest_with(chain: &[SchedDomain], flag: SdFlags) -> Option<usize> {
    chain.iter().rposition(|d| d.has(flag))
}

/// Fork/exec placement of the 2.6.23-4.2 versions: the slow path from the highest flagged
/// domain (from 4.3 the walk of [`select_task_rq_fair_4_3`] does it for every placement).
fn fork_exec<M: Machine>(sc: &mut Scan<'_, M>, s: &Settings, ctx: &WakeCtx) -> CpuId {
    let this = ctx.waker_cpu;
    let flag = sd_flag(ctx);
    let sd = highest_with(sc.m.domains().of(this), flag);
    sc.target(this);
    match sd {
        Some(i) => {
            let c = find_idlest_cpu(sc, s.era, this, i, ctx.prev_cpu, flag);
            sc.done((c, Step::SlowPath))
        }
        None => sc.done((this, Step::Target)),
    }
}

/// 2.6.32's SIS enabler: `SD_PREFER_SIBLING`, set at the package (CPU) level — modelled as
/// the lowest non-SMT, non-NUMA level covering this CPU's package \[M\].
fn package_level<M: Machine>(m: &M, sd: &SchedDomain, cpu: CpuId) -> bool {
    let topo = m.topo();
    !sd.has(flags::NUMA)
        && !sd.has(flags::SHARE_CPUCAPACITY)
        && topo.packages()[topo.cpu(cpu).package].is_subset(&sd.span)
}

/// The span searched beyond the LLC by WAKE_WIDE_IDLE / PREFER_IDLE_CPU: the highest
/// domain with BALANCE_WAKE; without one (the default), the span Facebook enabled it on —
/// the highest BALANCE_FORK domain (PREFER_IDLE_CPU) or prev's node (WAKE_WIDE_IDLE).
fn wake_balance_domain<M: Machine>(m: &M, cpu: CpuId) -> Option<usize> {
    highest_with(m.domains().of(cpu), flags::BALANCE_WAKE)
}
