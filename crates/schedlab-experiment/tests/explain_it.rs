//! `explain`'s time budget and the `/proc/schedstat` counters on real runs: the budget adds
//! up to CPUs x elapsed on several workloads and eras with neither remainder negative, the
//! task work of a fixed-work benchmark does not move between policies (so the kernel cost
//! classes hold everything the policies change), and the schedstat counts agree with the
//! engine's own tallies the way the kernel's do.

use schedlab_experiment::explain::{ExplainCounters, Mean, budget::budget, explain};
use schedlab_experiment::plan::{Experiment, Plan, RunKey};
use schedlab_experiment::runner::{ExecOptions, Machine, run_one};

fn plan(topology: &str, workload: &str, variants: &[&str], reps: usize) -> Plan {
    Plan::new(Experiment {
        topology: topology.into(),
        smt: None,
        llc_per_node: None,
        profile: None,
        workload: workload.into(),
        variants: variants.iter().map(|v| v.to_string()).collect(),
        sweep: vec![],
        reps,
        seed: 1,
        until_ci: None,
        max_reps: reps,
    })
}

/// One run's explain counters.
fn one(topology: &str, workload: &str, variant: &str) -> ExplainCounters {
    let p = plan(topology, workload, &[variant], 1);
    let machine = Machine::load(&p).expect("preset loads");
    let key = RunKey {
        index: 0,
        point: 0,
        variant: 0,
        rep: 0,
    };
    run_one(&p, &machine, key, false)
        .expect("run completes")
        .record
        .counters
        .explain
}

const CASES: &[(&str, &str, &str)] = &[
    (
        "westmere-4s40c",
        "hackbench:groups=4,loops=20",
        "linux-3.10",
    ),
    (
        "westmere-2s20c",
        "tbench:clients=8,duration=20ms",
        "linux-2.6.32",
    ),
    ("xeon-2s12c", "pipe:pairs=4,loops=2000", "linux-4.14"),
    (
        "spr-2s56c",
        "schbench:version=v1,threads=8,runtime=20ms",
        "linux-6.6",
    ),
    ("core2quad", "hackbench:groups=2,loops=20", "linux-2.5.59"),
    ("kunpeng920-2n", "pipe:pairs=4,loops=2000", "linux-6.12"),
];

#[test]
fn the_budget_closes_on_several_workloads_and_eras() {
    for (topo, workload, variant) in CASES {
        let c = one(topo, workload, variant);
        let b = budget(variant, &Mean::of(&[&c]));
        let what = format!("{workload} on {topo} under {variant}");
        assert!(b.total_cpu_s > 0.0, "{what}: no time");
        assert!(
            b.closure_error < 1e-3,
            "{what}: the budget closes only to {:.4} %",
            b.closure_error * 100.0
        );
        // The measured classes fit inside the busy and idle time they are carved from.
        for l in &b.lines {
            assert!(
                l.cpu_s >= -1e-9 * b.total_cpu_s,
                "{what}: line '{}' is negative: {} CPU-s",
                l.label,
                l.cpu_s
            );
        }
        assert!(b.cpu_s("task") > 0.0, "{what}: no task work");
        assert!(b.run_delay_s >= 0.0);
    }
}

#[test]
fn fixed_work_keeps_its_task_work_across_policies() {
    // hackbench does the same messages whatever the placement: what a policy changes must
    // land in the kernel classes, idle and the SMT line, not in the task work.
    let w = "hackbench:groups=8,loops=20";
    let a = one("westmere-4s40c", w, "linux-3.10");
    let b = one("westmere-4s40c", w, "linux-3.10,WAKEUP_BUDDY");
    let ta = budget("a", &Mean::of(&[&a])).cpu_s("task");
    let tb = budget("b", &Mean::of(&[&b])).cpu_s("task");
    assert!(
        (ta - tb).abs() < 0.01 * ta,
        "task work moved from {ta} to {tb} CPU-s"
    );
    let ra = budget("a", &Mean::of(&[&a])).cpu_s("refetch");
    let rb = budget("b", &Mean::of(&[&b])).cpu_s("refetch");
    assert_ne!(ra, rb, "the policies differ, so their refetch does");
}

#[test]
fn schedstat_counts_agree_with_the_engines_tallies() {
    for (topo, workload, variant) in CASES {
        let c = one(topo, workload, variant);
        let n = |k: &str| c.counts.get(k).copied().unwrap_or(0);
        let what = format!("{workload} on {topo} under {variant}");
        // ttwu_stat(): every placed wakeup counts once on the waker's CPU, as local or as
        // remote at the lowest domain spanning both CPUs.
        assert_eq!(n("ttwu_count"), n("wakeups"), "{what}");
        assert_eq!(n("ttwu_local"), n("wakeups_local"), "{what}");
        assert_eq!(
            n("ttwu_local") + n("ttwu_wake_remote"),
            n("ttwu_count"),
            "{what}"
        );
        assert_eq!(n("ttwu_move_affine"), n("wakeups_affine"), "{what}");
        // A switch to another task is one timeslice; schedule() runs at least that often.
        assert!(n("sched_count") >= n("timeslices"), "{what}");
        for t in ["idle", "busy", "newidle"] {
            let k = |f: &str| n(&format!("{f}.{t}"));
            assert!(
                k("lb_count") >= k("lb_balanced") + k("lb_failed"),
                "{what}: {t}: a pass is balanced, failed or moved something"
            );
            assert!(
                k("lb_balanced") >= k("lb_nobusyg") + k("lb_nobusyq"),
                "{what}"
            );
            assert!(k("lb_gained") >= k("lb_hot_gained"), "{what}");
        }
        let gained: u64 = ["idle", "busy", "newidle"]
            .iter()
            .map(|t| n(&format!("lb_gained.{t}")))
            .sum();
        // The 2.5.59 balancer keeps no schedstat; the others' pulls are the balance migrations
        // less the active ones.
        if *variant != "linux-2.5.59" {
            assert_eq!(
                gained,
                n("migrations_balance") - n("migrations_active"),
                "{what}"
            );
        }
        // Every placed wakeup and fork searched (exec placements too).
        assert!(n("sis.searches") >= n("ttwu_count") + n("forks"), "{what}");
    }
}

#[test]
fn explain_orders_the_counters_by_the_budget_line_they_drive() {
    let p = plan(
        "westmere-4s40c",
        "hackbench:groups=8,loops=20",
        &["linux-3.10", "linux-3.10,NO_WAKEUP_PREEMPTION"],
        2,
    );
    let out = schedlab_experiment::compare(&p, &ExecOptions::default()).expect("compare runs");
    let e = explain(&out.report, &out.records);
    let v = &e.points[0].versus[0];
    // Without wakeup preemption there are none, and the sentence says so first among the
    // context-switch line's counters.
    let row = v
        .counters
        .iter()
        .find(|r| r.name == "preempt_wakeup")
        .expect("the counter is listed");
    assert!(row.base > 0.0 && row.value == 0.0, "{row:?}");
    assert!(v.summary.contains("linux-3.10,NO_WAKEUP_PREEMPTION"));
    // Rows are in order of the share of their line.
    for w in v.counters.windows(2) {
        assert!(w[0].share.abs() >= w[1].share.abs(), "{w:?}");
    }
    // The budget lines' changes add up to the change of CPUs x elapsed.
    let total: f64 = v.classes.iter().map(|c| c.delta_cpu_s).sum();
    let b = &e.points[0].budgets;
    let d = b[1].total_cpu_s - b[0].total_cpu_s;
    assert!(
        (total - d).abs() < 1e-6 * b[0].total_cpu_s,
        "{total} vs {d}"
    );
}

#[test]
fn the_traces_counter_tracks_end_at_the_schedstat_counts() {
    let p = plan(
        "westmere-2s20c",
        "hackbench:groups=2,loops=20",
        &["linux-3.10"],
        1,
    );
    let machine = Machine::load(&p).expect("preset loads");
    let key = RunKey {
        index: 0,
        point: 0,
        variant: 0,
        rep: 0,
    };
    let run = run_one(&p, &machine, key, true).expect("run completes");
    let trace = run.trace.expect("a trace was asked for");
    let tracks = schedlab_trace::perfetto::counters::schedstat_tracks(&trace, 1_000_000);
    let counts = &run.record.counters.explain.counts;
    for k in ["ttwu_count", "ttwu_local", "timeslices"] {
        let total: i64 = tracks
            .iter()
            .filter(|t| t.name.ends_with(&format!(" {k}")))
            .filter_map(|t| t.points.last().map(|p| p.1))
            .sum();
        assert_eq!(total as u64, counts[k], "{k}");
    }
}
