//! Decisions whose record or hints need more than a line of the decision table: the worked
//! examples of the wake_affine, wake_wide and SIS_UTIL arithmetic, scan budgets and costs,
//! hint bookkeeping by era, remote probes, and affinity in every era.

mod common;

use common::decide::*;
use schedlab_engine::policy::Step;
use schedlab_topo::CpuId;

// ------------------------------------------------------------------------------------------
// Rows whose record or hints need more than the table checks.
// ------------------------------------------------------------------------------------------

#[test]
fn worked_example_wake_affine_weight_numbers() {
    // worked example: (2048 + 600) * 100 = 264 800 vs (1024 - 600) * 108 = 45 792, both x capacity 1024.
    let setup = and(
        busy(&[0], 2),
        and(
            busy(&[2, 3], 1),
            f(|m, _| {
                m.load(CpuId::new(1), 1024);
                m.tasks[P].load = 600;
            }),
        ),
    );
    let (rec, _) = check(
        "linux-4.14",
        flat(4),
        &setup,
        wake(0, 1, TTWU),
        1,
        Step::TargetIdle,
    );
    assert_eq!(rec.affine_loads, Some((264_800 * 1024, 45_792 * 1024)));
    // sync, waker load 1024: (1024 - 1024 + 600) * 100 = 60 000 vs 45 792 + 1.
    let setup = and(
        busy(&[0, 2, 3], 1),
        f(|m, _| {
            m.load(CpuId::new(1), 1024);
            m.tasks[P].load = 600;
        }),
    );
    let (rec, _) = check(
        "linux-4.14,NO_WA_IDLE",
        flat(4),
        &setup,
        wake(0, 1, SYNC),
        1,
        Step::TargetIdle,
    );
    assert_eq!(rec.affine_loads, Some((60_000 * 1024, 45_792 * 1024 + 1)));
    // prev busy at 2624: (2624 - 600) * 108 + 1 = 218 593 (x 1024, the +1 after scaling).
    let setup = and(
        busy(&[0, 1, 2, 3], 1),
        f(|m, _| {
            m.load(CpuId::new(1), 2624);
            m.tasks[P].load = 600;
        }),
    );
    let (rec, _) = check(
        "linux-4.14,NO_WA_IDLE",
        flat(4),
        &setup,
        wake(0, 1, SYNC),
        0,
        Step::Fallback,
    );
    assert_eq!(rec.affine_loads, Some((60_000 * 1024, 218_592 * 1024 + 1)));
    assert!(rec.pulled());
}

#[test]
fn worked_example_wake_wide_verdicts() {
    let (rec, _) = check(
        "linux-6.6",
        flat(10),
        &and(busy(&[0, 5], 1), flips(150, 12)),
        wake(0, 5, TTWU),
        6,
        Step::IdleCpu,
    );
    assert_eq!(rec.wake_wide, Some(true));
    let (rec, _) = check(
        "linux-6.6",
        flat(10),
        &and(busy(&[0, 5], 1), flips(150, 9)),
        wake(0, 5, TTWU),
        6,
        Step::IdleCpu,
    );
    assert_eq!(rec.wake_wide, Some(false));
    // NO_WAKE_WIDE does not evaluate it at all.
    let (rec, _) = check(
        "linux-6.6,NO_WAKE_WIDE",
        flat(10),
        &and(busy(&[0, 5], 1), flips(150, 12)),
        wake(0, 5, TTWU),
        6,
        Step::IdleCpu,
    );
    assert_eq!(rec.wake_wide, None);
}

#[test]
fn worked_example_sis_util_budget_is_the_number_of_cpus_probed() {
    // worked example: 16-CPU LLC at 40 % util -> nr_idle_scan 12; at 80 % -> 2. Each probe costs one.
    for (budget, examined) in [(12u32, 12u32), (2, 2), (0, 0)] {
        let setup = and(
            busy(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15], 1),
            f(move |_, h| h.llc[0].nr_idle_scan = budget),
        );
        let (rec, _) = check("linux-6.0", flat(16), &setup, irq(0, 0), 0, Step::Fallback);
        assert_eq!(rec.examined, examined, "budget {budget}: {rec}");
    }
    // SIS_PROP with an empty wake_avg_idle: nr = 4 -> 3 probes.
    let setup = busy(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15], 1);
    let (rec, _) = check(
        "linux-6.6,NO_SIS_UTIL,SIS_PROP",
        flat(16),
        &setup,
        irq(0, 0),
        0,
        Step::Fallback,
    );
    assert_eq!(rec.examined, 3);
}

#[test]
fn sis_prop_budget_and_scan_cost() {
    let setup = and(
        busy(&[0, 1, 2, 3, 4, 5, 6], 1),
        f(|m, _| m.cpus[0].avg_idle = 0),
    );
    let (rec, h) = check("linux-4.14", flat(8), &setup, irq(0, 0), 0, Step::Fallback);
    assert_eq!(rec.examined, 2, "{rec}"); // CPUs 1, 2 (0 is the waker's own)
    assert_eq!(
        h.llc[0].avg_scan_cost, 0.0,
        "an exhausted budget does not update the cost"
    );
    let (rec, h) = check(
        "linux-4.14,NO_SIS_PROP",
        flat(8),
        &setup,
        irq(0, 0),
        7,
        Step::IdleCpu,
    );
    assert_eq!(rec.examined, 7);
    // 7 probes x 50 ns, folded in with weight 1/8.
    assert!((h.llc[0].avg_scan_cost - 350.0 / 8.0).abs() < 1e-9);
}

#[test]
fn idle_cpu_rfc_bit_is_bounded_by_avg_idle_against_scan_cost() {
    let v = "linux-4.6,NO_OLD_IDLE,IDLE_CPU";
    let (rec, h) = check(
        v,
        smt8(),
        &busy(&[0, 1, 2, 3], 1),
        irq(1, 1),
        4,
        Step::IdleCpu,
    );
    assert_eq!(rec.examined, 3); // 2, 3, 4
    assert!((h.llc[0].avg_scan_cost - 150.0 / 8.0).abs() < 1e-9);
    // avg_idle 1 ms / 512 = 1953 < 5000: the scan is skipped.
    let setup = and(
        busy(&[0, 1, 2, 3], 1),
        f(|_, h| h.llc[0].avg_scan_cost = 5000.0),
    );
    let (rec, _) = check(v, smt8(), &setup, irq(1, 1), 1, Step::Fallback);
    assert_eq!(rec.examined, 0);
}

#[test]
fn failed_idle_core_scan_clears_has_idle_cores() {
    // No fully idle core: the core scan fails (and clears the hint), IDLE_CPU then finds 4.
    let (_, h) = check(
        "linux-4.9",
        smt8(),
        &busy(&[0, 1, 2, 3], 1),
        irq(1, 1),
        4,
        Step::IdleCpu,
    );
    assert!(!h.llc[0].has_idle_cores);
    let (_, h) = check(
        "linux-5.13",
        smt8(),
        &busy(&[0, 1, 2, 3], 1),
        irq(1, 1),
        6,
        Step::IdleCpu,
    );
    assert!(!h.llc[0].has_idle_cores);
    let (_, h) = check(
        "linux-5.13",
        smt8(),
        &busy(&[1, 2], 1),
        irq(1, 1),
        3,
        Step::IdleCore,
    );
    assert!(
        h.llc[0].has_idle_cores,
        "a successful scan leaves the hint set"
    );
}

#[test]
fn recent_used_cpu_bookkeeping_by_era() {
    let setup = and(
        busy(&[0, 1, 2, 3, 4, 6, 7], 1),
        f(|_, h| h.task[P].recent_used_cpu = Some(CpuId::new(5))),
    );
    // 4.16-5.15: swapped with prev on success; the waker records its own CPU.
    let (_, h) = check(
        "linux-5.13",
        flat(8),
        &setup,
        wake(0, 3, TTWU),
        5,
        Step::Recent,
    );
    assert_eq!(h.task[P].recent_used_cpu, Some(CpuId::new(3)));
    assert_eq!(h.task[W].recent_used_cpu, Some(CpuId::new(0)));
    // 6.x: always replaced by prev; the waker side is gone.
    let (_, h) = check(
        "linux-6.0",
        flat(8),
        &setup,
        wake(0, 3, TTWU),
        5,
        Step::Recent,
    );
    assert_eq!(h.task[P].recent_used_cpu, Some(CpuId::new(3)));
    assert_eq!(h.task[W].recent_used_cpu, None);
}

#[test]
fn record_wakee_decay_by_era() {
    // flips 9 recorded 2 s ago: 3.12 wipes, 4.x halves, then one flip for a new wakee.
    let setup = f(|_, h| {
        h.task[W].wakee_flips = 9;
        h.task[W].wakee_flip_decay_ts = NOW - 2_000_000_000;
    });
    let (_, _, h, _) = run(
        "linux-3.12",
        two_nodes(4),
        &and(busy(&[0, 4], 1), setup),
        wake(0, 4, TTWU),
    );
    assert_eq!(h.task[W].wakee_flips, 1);
    assert_eq!(h.task[W].last_wakee, Some(P));
    let setup = f(|_, h| {
        h.task[W].wakee_flips = 9;
        h.task[W].wakee_flip_decay_ts = NOW - 2_000_000_000;
    });
    let (_, _, h, _) = run(
        "linux-4.9",
        two_nodes(4),
        &and(busy(&[0, 4], 1), setup),
        wake(0, 4, TTWU),
    );
    assert_eq!(h.task[W].wakee_flips, 4 + 1);
    // Same wakee again: no flip.
    let (_, _, h, _) = run("linux-4.9", two_nodes(4), &flips(7, 0), wake(0, 4, TTWU));
    assert_eq!(h.task[W].wakee_flips, 7);
}

#[test]
fn remote_probes_are_counted_apart() {
    let (rec, _) = check(
        "linux-6.6,SIS_NODE",
        one_node_two_llcs(),
        &busy(&[0, 1, 2, 3, 4, 5, 7], 1),
        irq(1, 1),
        6,
        Step::WideIdle,
    );
    assert_eq!(rec.examined_remote, 3, "{rec}"); // 4, 5, 6
    assert!(rec.examined >= 2, "{rec}"); // 2, 3 (and 0) in the local LLC
    let (rec, _) = check(
        "linux-6.6",
        one_node_two_llcs(),
        &busy(&[0, 1, 2, 3, 4, 5, 7], 1),
        irq(1, 1),
        1,
        Step::Fallback,
    );
    assert_eq!(rec.examined_remote, 0);
}

#[test]
fn no_select_idle_sibling_examines_nothing() {
    let (rec, _) = check(
        "linux-6.6,NO_SELECT_IDLE_SIBLING",
        flat(10),
        &busy(&[0, 5], 1),
        wake(0, 5, TTWU),
        5,
        Step::Target,
    );
    // Only wake_affine_idle's look at prev (5.x clause) is paid; no search.
    assert_eq!((rec.examined, rec.examined_remote), (1, 0));
    assert_eq!(rec.target, Some(CpuId::new(5)));
    let (rec, _) = check(
        "linux-4.14,NO_SELECT_IDLE_SIBLING",
        flat(10),
        &busy(&[0, 5], 1),
        wake(0, 5, TTWU),
        5,
        Step::Target,
    );
    assert_eq!((rec.examined, rec.examined_remote), (0, 0));
}

#[test]
fn record_renders_the_whole_decision() {
    let setup = and(
        busy(&[0], 2),
        and(
            busy(&[2, 3], 1),
            f(|m, _| {
                m.load(CpuId::new(1), 1024);
                m.tasks[P].load = 600;
            }),
        ),
    );
    let (rec, _) = check(
        "linux-4.14",
        flat(4),
        &setup,
        wake(0, 1, TTWU),
        1,
        Step::TargetIdle,
    );
    let s = rec.to_string();
    for part in [
        "affine=kept_weight",
        "wake_wide=false",
        "this_eff=",
        "prev_eff=",
        "target=1",
        "step=target_idle",
    ] {
        assert!(s.contains(part), "{s} lacks {part}");
    }
}

#[test]
fn affinity_is_respected_by_every_era() {
    // The wakee may only run on CPUs 3 and 7 (one core); the waker's CPU 0 is not allowed,
    // so no era may pull it there or scan past its mask.
    for e in schedlab_policies::Era::ALL {
        let v = e.name();
        let setup = f(|m, _| {
            m.tasks[P].allowed = schedlab_topo::CpuSet::from_cpus(8, [3, 7].map(CpuId::new))
        });
        let (got, rec, _, _) = run(v, smt8(), &and(busy(&[3], 1), setup), wake(0, 3, TTWU));
        assert!(got == 3 || got == 7, "{v}: {got} {rec}");
    }
}

#[test]
fn linux_2_6_30_wake_affine_reads_the_last_tick_load_biased_against_the_move() {
    // The waker's CPU runs one task now but ran three at the last tick; prev runs two.
    // 2.6.31's wake_idx 1 reads target_load(this) = max(3072, 1024): 100 * (3072 + 1024) =
    // 409 600 > 112 * 2048 = 229 376, so the wakee stays on prev (busy: kept).
    let setup = and(
        busy(&[0], 1),
        and(
            busy(&[1], 2),
            f(|m, _| {
                m.cpus[CpuId::new(0)].last_tick_load = Some(3072);
            }),
        ),
    );
    let (rec, _) = check(
        "linux-2.6.30",
        flat(4),
        &setup,
        wake(0, 1, TTWU),
        1,
        Step::Target,
    );
    assert_eq!(rec.affine_loads, Some((409_600, 229_376)));
    // From 2.6.32 wake_idx is 0: the current loads, 100 * (1024 + 1024) = 204 800 <=
    // 229 376, pull to the waker's CPU (2.6.32's walk then looks for an idle CPU near it).
    let (got, rec, _, _) = run("linux-2.6.32", flat(4), &setup, wake(0, 1, TTWU));
    assert_ne!(got, 1, "{rec}");
}
