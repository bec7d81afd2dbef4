//! Decision tests of the wake-placement patches debated from 2019 to 2023 (WA_IDLE_PREV,
//! SIS_IDLE_CANDIDATE, RECENT_USED_CPU, SIS_ROTATE, SIS_CORE, IDLE_CPUMASK, SIS_FILTER,
//! SIS_CACHE, MIGRATION_RATELIMIT, WAKEUP_BIAS_PREV_IDLE): each one builds a hand-made
//! state where the patch's mechanism decides, and checks that the switch's variant and the
//! era without it choose different CPUs (so the test fails if the mechanism is missing),
//! plus the era gating of each switch. The machines: `flat(n)` one LLC of n CPUs, `smt8`
//! four 2-thread cores (siblings i and i+4), `c2q` two LLCs {0,1} {2,3}.

mod common;

use common::decide::*;
use common::fake::FakeMachine;
use schedlab_engine::policy::{Hints, Step};
use schedlab_engine::{PlacementRecord, WakeCtx};
use schedlab_policies::{LinuxPolicy, settings};
use schedlab_topo::{CpuId, CpuSet, Topology};

/// (cpu, step) of `variant` on `setup`, and of the same state without the switch.
fn pair(
    with: &str,
    without: &str,
    topo: fn() -> Topology,
    setup: Setup,
    ctx: WakeCtx,
) -> ((usize, Step), (usize, Step)) {
    let (a, ra, _, _) = run(with, topo(), &setup, ctx);
    let (b, rb, _, _) = run(without, topo(), &setup, ctx);
    ((a, ra.step), (b, rb.step))
}

/// A mask of the 8-CPU test machines.
fn cpus(list: &[usize]) -> CpuSet {
    let mut s = CpuSet::new(8);
    for &c in list {
        s.insert(CpuId::new(c));
    }
    s
}

#[test]
fn wa_idle_prev_keeps_an_idle_prev_that_looks_loaded() {
    // d8fcb81f1acf's case: prev (CPU 2, the other LLC) is idle but carries blocked load,
    // so wake_affine_weight alone pulls the wakee to the waker's LLC.
    let setup = and(busy(&[0], 1), f(|m, _| m.cpus[2].load = 4096));
    let (with, without) = pair(
        "linux-5.13",
        "linux-5.13,NO_WA_IDLE_PREV",
        c2q,
        setup,
        wake(0, 2, TTWU),
    );
    assert_eq!(with, (2, Step::TargetIdle), "the clause returns prev");
    assert_eq!(without, (1, Step::IdleCpu), "weight pulls, SIS finds CPU 1");
    // The clause is absent before 5.10, so the switch is not offered there.
    assert!(settings("linux-4.14,NO_WA_IDLE_PREV").is_err());
    assert!(settings("linux-6.12,NO_WA_IDLE_PREV").is_ok());
}

#[test]
fn sis_idle_candidate_returns_an_idle_thread_after_a_failed_core_pass() {
    // has_idle_cores is set but every core has one busy thread: the idle-core pass fails.
    let (with, without) = pair(
        "linux-5.13",
        "linux-5.13,NO_SIS_IDLE_CANDIDATE",
        smt8,
        busy(&[0, 1, 2, 3], 1),
        irq(0, 0),
    );
    assert_eq!(
        with,
        (5, Step::IdleCpu),
        "core {{1,5}}: thread 5 remembered"
    );
    assert_eq!(without, (0, Step::Fallback));
    assert!(settings("linux-4.14,NO_SIS_IDLE_CANDIDATE").is_err());
}

#[test]
fn no_recent_used_cpu_skips_the_remembered_cpu() {
    let setup = and(
        busy(&[0, 1, 2, 4, 5, 7], 1),
        f(|_, h| h.task[P].recent_used_cpu = Some(CpuId::new(6))),
    );
    let (with, without) = pair(
        "linux-6.6",
        "linux-6.6,NO_RECENT_USED_CPU",
        || flat(8),
        setup,
        irq(1, 1),
    );
    assert_eq!(with, (6, Step::Recent));
    assert_eq!(without, (3, Step::IdleCpu), "the scan from 2 finds 3 first");
    assert!(settings("linux-4.14,NO_RECENT_USED_CPU").is_err());
}

/// Runs `variant` `n` times on the same state, carrying the hints from one decision to the
/// next; returns each (cpu, step).
fn repeated(
    variant: &str,
    m: &FakeMachine,
    h: &mut Hints,
    ctx: WakeCtx,
    n: usize,
) -> Vec<(usize, Step)> {
    let mut pol = LinuxPolicy::new(settings(variant).unwrap(), variant);
    (0..n)
        .map(|_| {
            let mut rec = PlacementRecord::default();
            let c = pol.select(&ctx, m, h, &mut rec);
            (c.index(), rec.step)
        })
        .collect()
}

#[test]
fn sis_rotate_bounds_the_scan_and_resumes_where_it_stopped() {
    // 16 CPUs without SMT: floor 2, limit 4. Only CPU 10 is idle.
    let s = settings("linux-4.14").unwrap();
    let mut m = FakeMachine::new(flat(16), s.config.domain_era, 2);
    let busy: Vec<CpuId> = (0..16).filter(|&c| c != 10).map(CpuId::new).collect();
    m.busy(busy, 1);
    let mut h = m.hints();
    // SIS_PROP alone (avg_idle 1 ms, no scan cost yet) scans far enough to find it.
    assert_eq!(
        repeated("linux-4.14", &m, &mut h, irq(0, 0), 1),
        [(10, Step::IdleCpu)]
    );
    let mut h = m.hints();
    let got = repeated("linux-4.14,SIS_ROTATE", &m, &mut h, irq(0, 0), 4);
    // 0-3, 3-6, 6-9 exhaust the budget of 4; the fourth scan starts at 9 and finds 10.
    assert_eq!(
        got,
        [
            (0, Step::Fallback),
            (0, Step::Fallback),
            (0, Step::Fallback),
            (10, Step::IdleCpu)
        ]
    );
    assert_eq!(h.cpu[0].sis_next_cpu, Some(CpuId::new(10)));
    assert!(settings("linux-5.13,SIS_ROTATE").is_err());
}

#[test]
fn no_sis_core_skips_the_idle_core_search() {
    // Core {0,4} is fully idle; from target 1 the idle-CPU scan meets idle thread 2 first.
    let (with, without) = pair(
        "linux-4.14",
        "linux-4.14,NO_SIS_CORE",
        smt8,
        busy(&[1, 6, 7], 1),
        irq(1, 1),
    );
    assert_eq!(with, (4, Step::IdleCore));
    assert_eq!(without, (2, Step::IdleCpu));
    assert!(settings("linux-6.6,NO_SIS_CORE").is_err());
}

#[test]
fn idle_cpumask_lets_a_short_budget_reach_an_idle_cpu() {
    // 5.13 SIS_PROP with no predicted idle time: a budget of 4 (three CPUs examined). Only
    // CPU 6 is idle; the busy CPUs were cleared from the mask by their ticks.
    let setup = and(
        busy(&[0, 1, 2, 3, 4, 5, 7], 1),
        f(|_, h| {
            h.cpu[0].wake_avg_idle = 0;
            h.llc[0].idle_cpus = cpus(&[6]);
        }),
    );
    let (a, ra, _, _) = run("linux-5.13,IDLE_CPUMASK", flat(8), &setup, irq(0, 0));
    let (b, rb, _, _) = run("linux-5.13", flat(8), &setup, irq(0, 0));
    assert_eq!((a, ra.step), (6, Step::IdleCpu));
    assert_eq!((b, rb.step), (0, Step::Fallback));
    assert!(ra.examined < rb.examined, "{ra} vs {rb}");
    assert!(settings("linux-6.6,IDLE_CPUMASK").is_err());
}

#[test]
fn sis_filter_walks_the_unoccupied_mask_under_sis_util() {
    // 6.0 SIS_UTIL with nr_idle_scan 2: two CPUs examined. A stale bit (CPU 2, busy since
    // its last tick) costs one probe; CPU 5 is found next.
    let setup = and(
        busy(&[0, 1, 2, 3, 4, 6, 7], 1),
        f(|_, h| {
            h.llc[0].nr_idle_scan = 2;
            h.llc[0].idle_cpus = cpus(&[2, 5]);
        }),
    );
    let (with, without) = pair(
        "linux-6.0,SIS_FILTER",
        "linux-6.0",
        || flat(8),
        setup,
        irq(0, 0),
    );
    assert_eq!(with, (5, Step::IdleCpu));
    assert_eq!(without, (0, Step::Fallback));
    assert!(settings("linux-5.13,SIS_FILTER").is_err());
    // The engine keeps the mask only when a filter asks for it.
    assert!(
        settings("linux-6.0,SIS_FILTER")
            .unwrap()
            .config
            .features
            .idle_cpumask
    );
    assert!(!settings("linux-6.0").unwrap().config.features.idle_cpumask);
}

#[test]
fn sis_cache_passes_over_a_reserved_cpu() {
    let reserve = |c: usize| f(move |_, h| h.cpu[c].cache_hot_until = NOW + 100_000);
    let (with, without) = pair(
        "linux-6.6,SIS_CACHE",
        "linux-6.6",
        || flat(8),
        and(busy(&[0, 1, 2, 4, 6, 7], 1), reserve(3)),
        irq(1, 1),
    );
    assert_eq!(with, (5, Step::IdleCpu), "3 is reserved: 5");
    assert_eq!(without, (3, Step::IdleCpu));
    // Nothing else idle: the first reserved CPU.
    let (only, _, _, _) = run(
        "linux-6.6,SIS_CACHE",
        flat(8),
        &and(busy(&[0, 1, 2, 4, 5, 6, 7], 1), reserve(3)),
        irq(1, 1),
    );
    assert_eq!(only, 3);
    // A reservation that has run out does not count.
    let (late, _, _, _) = run(
        "linux-6.6,SIS_CACHE",
        flat(8),
        &and(
            busy(&[0, 1, 2, 4, 6, 7], 1),
            f(|_, h| h.cpu[3].cache_hot_until = NOW),
        ),
        irq(1, 1),
    );
    assert_eq!(late, 3);
    assert!(settings("linux-6.0,SIS_CACHE").is_err());
    assert!(
        settings("linux-6.6,SIS_CACHE")
            .unwrap()
            .config
            .features
            .track_short_sleep
    );
}

#[test]
fn migration_ratelimit_keeps_a_recent_migrant_on_prev() {
    let migrated = |ago: u64| {
        f(move |m, h| {
            m.busy([CpuId::new(0), CpuId::new(2)], 1);
            h.task[P].last_migration = Some(NOW - ago);
        })
    };
    // A sync wakeup onto a waker running alone pulls to CPU 0 ... unless P moved 1 ms ago.
    let (with, without) = pair(
        "linux-6.6,MIGRATION_RATELIMIT",
        "linux-6.6",
        || flat(4),
        migrated(1_000_000),
        wake(0, 2, SYNC),
    );
    assert_eq!(with, (2, Step::Target));
    assert_eq!(
        without,
        (1, Step::IdleCpu),
        "pulled to 0's LLC, SIS finds 1"
    );
    // 3 ms ago: outside the 2 ms window; a 5 ms window covers it again.
    let (free, _, _, _) = run(
        "linux-6.6,MIGRATION_RATELIMIT",
        flat(4),
        &migrated(3_000_000),
        wake(0, 2, SYNC),
    );
    assert_eq!(free, 1);
    let (held, _, _, _) = run(
        "linux-6.6,MIGRATION_RATELIMIT,migration_ratelimit_ns=5000000",
        flat(4),
        &migrated(3_000_000),
        wake(0, 2, SYNC),
    );
    assert_eq!(held, 2);
    assert!(
        settings("linux-6.6,MIGRATION_RATELIMIT")
            .unwrap()
            .config
            .features
            .track_migrations
    );
}

#[test]
fn wakeup_bias_prev_idle_counts_an_almost_idle_prev() {
    // prev 2 runs a light task: its load without the wakee (load 1024) is 20.
    let light = || {
        and(
            busy(&[0], 1),
            f(|m, _| {
                m.cpus[2].nr_running = 1;
                m.cpus[2].load = 1024 + 20;
            }),
        )
    };
    let (with, without) = pair(
        "linux-6.6,WAKEUP_BIAS_PREV_IDLE",
        "linux-6.6",
        || flat(4),
        light(),
        wake(0, 2, SYNC),
    );
    assert_eq!(with, (2, Step::PrevIdle));
    assert_eq!(without, (1, Step::IdleCpu));
    // Above the threshold prev is busy again.
    let (busy_prev, _, _, _) = run(
        "linux-6.6,WAKEUP_BIAS_PREV_IDLE,prev_idle_load=10",
        flat(4),
        &light(),
        wake(0, 2, SYNC),
    );
    assert_eq!(busy_prev, 1);
}
