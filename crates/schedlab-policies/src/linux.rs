//! [`LinuxPolicy`]: `select_task_rq` of every modelled era (linux-wakeup.md §3), dispatching
//! to the era's wake_affine (§4), wake_wide (§5) and select_idle_sibling (§6), with the
//! debated variants of §15 where the [`Settings`] enable them.
//!
//! | era            | flow                                                                      |
//! |----------------|---------------------------------------------------------------------------|
//! | 2.5.59         | sync wakeup → waker's CPU, else prev; fork → parent's CPU (§10.0)         |
//! | 2.6.30         | CFS-1: wake_affine on the lowest common domain, passive balance, wake_idle |
//! | 2.6.32-2.6.33  | CFS-2: SIS inside the domain walk; wake_affine unless an idle sibling won  |
//! | 2.6.35-4.2     | CFS-3: wake_affine picks waker vs prev, then SIS around the choice        |
//! | 4.6            | CFS-4: symmetric wake_wide gates want_affine                              |
//! | 4.9-6.12       | CFS-5: as CFS-4, with `select_idle_sibling(p, prev, target)`              |
//!
//! Forks and execs take the slow path from the highest domain with the matching balance flag.

use crate::affine::{half_imb, wake_affine_v1, wake_affine_v2, wake_affine_v4, wake_affine_v5};
use crate::era::{Era, Flow};
use crate::machine::Machine;
use crate::scan::Scan;
use crate::sis::{sis_buddy, sis_v2, sis_v3, sis_v5, sis_v6, wake_idle};
use crate::slow::{sd_flag, slow_path};
use crate::switches::Settings;
use crate::wakee::{
    buddies, note_wide, record_streak, record_wakee, wake_wide_v1, wake_wide_v1_mirror,
    wake_wide_v2,
};
use schedlab_engine::policy::{Affine, Hints, Step};
use schedlab_engine::{PlacementPolicy, PlacementRecord, SchedView, WakeCtx};
use schedlab_topo::domains::flags;
use schedlab_topo::{CpuId, SchedDomain};

/// The placement policy of one kernel era with its switches.
#[derive(Clone, Debug)]
pub struct LinuxPolicy {
    settings: Settings,
    name: String,
}

impl LinuxPolicy {
    /// A policy from resolved settings (see [`crate::build`]); `name` is the canonical
    /// variant string.
    pub fn new(settings: Settings, name: impl Into<String>) -> Self {
        LinuxPolicy {
            settings,
            name: name.into(),
        }
    }

    /// The settings in force.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// `select_task_rq` on any [`Machine`] (the engine's view, or a hand-built state in tests).
    pub fn select<M: Machine>(
        &mut self,
        ctx: &WakeCtx,
        m: &M,
        hints: &mut Hints,
        rec: &mut PlacementRecord,
    ) -> CpuId {
        let s = &self.settings;
        let mut sc = Scan {
            m,
            this: ctx.waker_cpu,
            p: ctx.wakee,
            rec,
        };
        match s.era.def().flow {
            Flow::O1 => select_o1(&mut sc, ctx),
            Flow::Cfs1 => flow_v1(&mut sc, s, ctx),
            Flow::Cfs2 => flow_v2(&mut sc, s, ctx),
            Flow::Cfs3 => flow_v3(&mut sc, s, ctx, hints),
            Flow::Cfs5 => flow_v45(&mut sc, s, ctx, hints),
        }
    }
}

impl PlacementPolicy for LinuxPolicy {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn select_task_rq(
        &mut self,
        ctx: &WakeCtx,
        view: &SchedView<'_>,
        hints: &mut Hints,
        rec: &mut PlacementRecord,
    ) -> CpuId {
        self.select(ctx, view, hints, rec)
    }
}

fn finish<M: Machine>(sc: &mut Scan<'_, M>, (cpu, step): (CpuId, Step)) -> CpuId {
    sc.rec.step = step;
    cpu
}

/// Highest domain of `cpu` with `flag` (2.6.x-4.2 walk: every level).
fn highest_with(chain: &[SchedDomain], flag: u32) -> Option<usize> {
    chain.iter().rposition(|d| d.has(flag))
}

/// Fork/exec placement of the CFS eras: the slow path from the highest flagged domain.
fn fork_exec<M: Machine>(sc: &mut Scan<'_, M>, era: Era, ctx: &WakeCtx, contiguous: bool) -> CpuId {
    let this = ctx.waker_cpu;
    let flag = sd_flag(ctx);
    let chain = sc.m.domains().of(this);
    let sd = if contiguous {
        chain
            .iter()
            .take_while(|d| d.has(flag) && d.has(flags::LOAD_BALANCE))
            .count()
            .checked_sub(1)
    } else {
        highest_with(chain, flag)
    };
    sc.rec.target = Some(this);
    match sd {
        Some(i) => {
            let c = slow_path(sc, era, this, i, ctx.prev_cpu, flag);
            finish(sc, (c, Step::SlowPath))
        }
        None => finish(sc, (this, Step::Target)),
    }
}

// ------------------------------------------------------------------------------------------
// 2.5.59
// ------------------------------------------------------------------------------------------

fn select_o1<M: Machine>(sc: &mut Scan<'_, M>, ctx: &WakeCtx) -> CpuId {
    let (this, prev) = (ctx.waker_cpu, ctx.prev_cpu);
    sc.rec.step = Step::O1Rule;
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
        sc.rec.target = Some(prev);
        return prev;
    }
    if ctx.sync() && prev != this && sc.allowed(this) {
        sc.rec.affine = Affine::PulledSync;
        sc.rec.target = Some(this);
        return this;
    }
    sc.rec.target = Some(prev);
    prev
}

// ------------------------------------------------------------------------------------------
// CFS-1: 2.6.30
// ------------------------------------------------------------------------------------------

fn flow_v1<M: Machine>(sc: &mut Scan<'_, M>, s: &Settings, ctx: &WakeCtx) -> CpuId {
    if !ctx.is_ttwu() {
        return fork_exec(sc, s.era, ctx, false);
    }
    let (this, prev) = (ctx.waker_cpu, ctx.prev_cpu);
    let idle_step = |sc: &mut Scan<'_, M>, c: CpuId| -> CpuId {
        sc.rec.target = Some(c);
        let r = if s.select_idle_sibling {
            wake_idle(sc, c)
        } else {
            (c, Step::Target)
        };
        finish(sc, r)
    };
    if prev == this {
        return idle_step(sc, prev);
    }
    let m = sc.m;
    let this_sd = m.domains().lowest_spanning(this, prev);
    let Some(sd) = this_sd.filter(|_| sc.allowed(this) && s.wake_affine) else {
        sc.rec.affine = if s.wake_affine {
            Affine::NoDomain
        } else {
            Affine::Declined
        };
        return idle_step(sc, prev);
    };
    if wake_affine_v1(s, ctx, m, sd, sc.rec) {
        sc.rec.target = Some(this);
        return finish(sc, (this, Step::Target));
    }
    // Passive balancing: pull when the waker's CPU is below prev by half the imbalance
    // (SD_WAKE_BALANCE assumed on every non-NUMA level [M]).
    if !sd.has(flags::NUMA) && s.affine_wakeups {
        let imb = half_imb(sd);
        let (load, this_load) = (m.cpu_load(prev) as i64, m.cpu_load(this) as i64);
        if imb * this_load <= 100 * load {
            sc.rec.affine = Affine::PulledWeight;
            sc.rec.affine_loads = Some((imb * this_load, 100 * load));
            sc.rec.target = Some(this);
            return finish(sc, (this, Step::Target));
        }
    }
    idle_step(sc, prev)
}

// ------------------------------------------------------------------------------------------
// CFS-2: 2.6.32 - 2.6.33
// ------------------------------------------------------------------------------------------

/// 2.6.32's SIS enabler: `SD_PREFER_SIBLING`, set at the package (CPU) level — modelled as
/// the lowest non-SMT, non-NUMA level covering this CPU's package [M].
fn package_level<M: Machine>(m: &M, sd: &SchedDomain, cpu: CpuId) -> bool {
    let topo = m.topo();
    !sd.has(flags::NUMA)
        && !sd.has(flags::SHARE_CPUCAPACITY)
        && topo.packages()[topo.cpu(cpu).package].is_subset(&sd.span)
}

fn flow_v2<M: Machine>(sc: &mut Scan<'_, M>, s: &Settings, ctx: &WakeCtx) -> CpuId {
    if !ctx.is_ttwu() {
        return fork_exec(sc, s.era, ctx, false);
    }
    let m = sc.m;
    let (this, prev) = (ctx.waker_cpu, ctx.prev_cpu);
    let mut want_affine =
        sc.allowed(this) && s.wake_affine && (s.era > Era::V2_6_32 || s.affine_wakeups);
    let ramp = s.ramp && m.nr_running(this) == 1;
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
            let enabled = if s.ramp {
                ramp && tmp.has(flags::SHARE_LLC)
            } else if s.era == Era::V2_6_32 {
                package_level(m, tmp, this)
            } else {
                tmp.has(flags::SHARE_LLC)
            };
            if enabled && s.select_idle_sibling {
                let (t, st) = sis_v2(sc, tmp, target, prev);
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
    sc.rec.target = Some(cpu);
    if let Some(ai) = affine_sd {
        let step = found.unwrap_or(Step::Target);
        if ramp && found.is_some() {
            sc.rec.affine = Affine::PulledSibling;
            return finish(sc, (cpu, step));
        }
        if cpu == prev {
            sc.rec.affine = if found.is_some() {
                Affine::KeptIdle
            } else {
                Affine::NotAsked
            };
            return finish(sc, (cpu, step));
        }
        let load_cpu = if s.affine_target { cpu } else { this };
        if wake_affine_v2(s, ctx, m, &chain[ai], load_cpu, true, sc.rec) {
            return finish(sc, (cpu, step));
        }
    } else {
        sc.rec.affine = if !asked {
            Affine::Declined
        } else {
            Affine::NoDomain
        };
    }
    sc.rec.target = Some(prev);
    if let Some(wi) = wake_sd {
        let c = slow_path(sc, s.era, this, wi, prev, flags::BALANCE_WAKE);
        return finish(sc, (c, Step::SlowPath));
    }
    finish(sc, (prev, Step::Target))
}

// ------------------------------------------------------------------------------------------
// CFS-3: 2.6.35 - 4.2
// ------------------------------------------------------------------------------------------

fn sis_for<M: Machine>(
    sc: &mut Scan<'_, M>,
    s: &Settings,
    hints: &mut Hints,
    prev: CpuId,
    target: CpuId,
) -> (CpuId, Step) {
    sc.rec.target = Some(target);
    if !s.select_idle_sibling {
        return (target, Step::Target);
    }
    match s.era {
        Era::V2_6_35 => sis_v3(sc, prev, target),
        Era::V3_6 => sis_buddy(sc, prev, target),
        e if e <= Era::V4_14 => sis_v5(sc, s, hints, prev, target),
        _ => sis_v6(sc, s, hints, prev, target),
    }
}

/// The span searched beyond the LLC by WAKE_WIDE_IDLE / PREFER_IDLE_CPU: the highest
/// domain with BALANCE_WAKE; without one (the default), the span Facebook enabled it on —
/// the highest BALANCE_FORK domain (PREFER_IDLE_CPU) or prev's node (WAKE_WIDE_IDLE).
fn wake_balance_domain<M: Machine>(m: &M, cpu: CpuId) -> Option<usize> {
    highest_with(m.domains().of(cpu), flags::BALANCE_WAKE)
}

fn flow_v3<M: Machine>(
    sc: &mut Scan<'_, M>,
    s: &Settings,
    ctx: &WakeCtx,
    hints: &mut Hints,
) -> CpuId {
    if !ctx.is_ttwu() {
        return fork_exec(sc, s.era, ctx, false);
    }
    let m = sc.m;
    let (this, prev) = (ctx.waker_cpu, ctx.prev_cpu);
    if s.era >= Era::V3_12 {
        record_wakee(s.era, ctx, m, hints);
    } else if s.wakeup_buddy {
        record_streak(ctx, hints);
    }
    let want_affine = s.wake_affine && sc.allowed(this);
    let chain = m.domains().of(this);
    let affine_sd = if want_affine {
        chain
            .iter()
            .find(|d| d.has(flags::WAKE_AFFINE) && d.span.contains(prev))
    } else {
        None
    };
    let wide_idle = s.era == Era::V4_2 && (s.wake_wide_idle || s.wake_wide_idle_both);
    let mut wide = false;
    let mut target = prev;
    let mut pulled = false;
    match affine_sd {
        None => {
            sc.rec.affine = if want_affine {
                Affine::NoDomain
            } else {
                Affine::Declined
            }
        }
        Some(_) if this == prev => sc.rec.affine = Affine::NotAsked,
        Some(sd) => {
            if s.era >= Era::V3_12 && s.wake_wide {
                wide = wake_wide_v1(ctx, m, hints)
                    || (s.wake_wide_idle_both && wake_wide_v1_mirror(ctx, m, hints));
                note_wide(sc.rec, wide);
            }
            if wide {
                sc.rec.affine = Affine::WakeWide;
            } else if s.wakeup_buddy && !buddies(ctx, hints, s.wakeup_buddy_ref) {
                sc.rec.affine = Affine::Declined;
            } else {
                pulled = if s.era >= Era::V4_2 {
                    wake_affine_v4(ctx, m, sd, sc.rec)
                } else {
                    wake_affine_v2(s, ctx, m, sd, this, false, sc.rec)
                };
                if pulled {
                    target = this;
                    if s.wakeup_buddy {
                        sc.rec.affine = Affine::PulledBuddy;
                    }
                }
            }
        }
    }
    let (cpu, step) = sis_for(sc, s, hints, prev, target);
    if wide_idle && wide && !m.idle(cpu) {
        // WAKE_WIDE_IDLE: before stacking, any idle CPU of the wide span, from prev.
        let span = match wake_balance_domain(m, prev) {
            Some(i) => m.domains().of(prev)[i].span.clone(),
            None => m.topo().node_span(prev).clone(),
        };
        for c in span.iter_wrap(prev) {
            if sc.allowed(c) && sc.idle(c) {
                return finish(sc, (c, Step::WideIdle));
            }
        }
    }
    if s.era == Era::V4_2 && s.prefer_idle_cpu && !pulled && !m.idle(cpu) {
        // PREFER_IDLE_CPU: continue into find_idlest_group/cpu over the wake-balance span.
        let (idx, flag) = match wake_balance_domain(m, this) {
            Some(i) => (Some(i), flags::BALANCE_WAKE),
            None => (
                highest_with(chain, flags::BALANCE_FORK),
                flags::BALANCE_FORK,
            ),
        };
        if let Some(i) = idx {
            let c = slow_path(sc, s.era, this, i, prev, flag);
            return finish(sc, (c, Step::SlowPath));
        }
    }
    finish(sc, (cpu, step))
}

// ------------------------------------------------------------------------------------------
// CFS-4 / CFS-5 / EEVDF: 4.6 - 6.12
// ------------------------------------------------------------------------------------------

fn flow_v45<M: Machine>(
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
        let wide = s.wake_wide && note_wide(sc.rec, wake_wide_v2(ctx, m, hints));
        want_affine = !wide && sc.allowed(this) && s.wake_affine;
        if wide {
            sc.rec.affine = Affine::WakeWide;
        } else if !want_affine {
            sc.rec.affine = Affine::Declined;
        }
    }
    let chain = m.domains().of(this);
    let mut affine_sd = None;
    let mut sd = None;
    for (idx, tmp) in chain.iter().enumerate() {
        if s.era <= Era::V4_14 && !tmp.has(flags::LOAD_BALANCE) {
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
            new = if s.era >= Era::V4_14 {
                wake_affine_v5(s, sc, ctx, asd)
            } else if wake_affine_v4(ctx, m, asd, sc.rec) {
                this
            } else {
                prev
            };
        } else {
            sc.rec.affine = Affine::NotAsked;
        }
    } else if want_affine {
        sc.rec.affine = Affine::NoDomain;
    }
    if let Some(i) = sd {
        sc.rec.target = Some(this);
        let c = slow_path(sc, s.era, this, i, prev, flag);
        return finish(sc, (c, Step::SlowPath));
    }
    if !ttwu {
        sc.rec.target = Some(new);
        return finish(sc, (new, Step::Target));
    }
    let found = sis_for(sc, s, hints, prev, new);
    // 4.16 - ~5.15: the waker remembers its CPU for its own next wakeup.
    if want_affine
        && s.era == Era::V5_13
        && let Some(w) = ctx.waker
    {
        hints.task[w].recent_used_cpu = Some(this);
    }
    finish(sc, found)
}
