//! The engine's determinism guard: insta snapshots of the event-stream hash, the headline
//! result and the full counters of every `schedlab bench` scenario and of compare runs across
//! the modelled eras and presets.
//!
//! These pin behaviour. A refactor must leave every snapshot byte-identical; a behavioural
//! change (a new mechanism) changes them on purpose, and the reviewer reads the diff of the
//! counters to see what moved. Update with `cargo insta review` (or `INSTA_UPDATE=always`).

use schedlab_engine::{MachineProfile, SimOptions, Simulation};
use schedlab_experiment::plan::{Experiment, Plan, RunKey};
use schedlab_experiment::runner::{Machine, run_one};
use std::sync::Arc;

/// One compare run, as `schedlab run -t TOPO -w WORKLOAD -v VARIANT` with seed 1.
fn compare_run(topology: &str, workload: &str, variant: &str) -> String {
    let plan = Plan::new(Experiment {
        topology: topology.into(),
        smt: None,
        llc_per_node: None,
        profile: None,
        workload: workload.into(),
        variants: vec![variant.into()],
        sweep: vec![],
        reps: 1,
        seed: 1,
        until_ci: None,
        max_reps: 1,
    });
    let machine = Machine::load(&plan).expect("preset loads");
    let key = RunKey {
        index: 0,
        point: 0,
        variant: 0,
        rep: 0,
    };
    let run = run_one(&plan, &machine, key, false).expect("run completes");
    let r = &run.record.result;
    let headline = r
        .headline()
        .map(|m| format!("{} = {} {}", m.name, m.value, m.unit))
        .unwrap_or_else(|| "(none)".into());
    format!(
        "topology {topology}\nworkload {}\nvariant {}\nseed {}\nevent hash {:016x}\nheadline {headline}\n{}",
        run.record.workload, run.record.variant, run.record.seed, run.event_hash, run.counters_text
    )
}

/// The compare runs: every era family, several presets and workloads, and switches that
/// take a different path through the placement code.
const RUNS: &[(&str, &str, &str, &str)] = &[
    (
        "o1_core2quad_hackbench",
        "core2quad",
        "hackbench:groups=2,loops=20",
        "linux-2.5.59",
    ),
    (
        "o1_tx7_numa_test",
        "tx7-4n2c",
        "numa-test:tasks=8,work=20ms",
        "linux-2.5.59",
    ),
    (
        "cfs2_core2quad_sysbench",
        "core2quad",
        "sysbench:threads=4,duration=50ms",
        "linux-2.6.33",
    ),
    (
        "cfs2_core2quad_sysbench_affine_target",
        "core2quad",
        "sysbench:threads=4,duration=50ms",
        "linux-2.6.33,AFFINE_TARGET",
    ),
    (
        "cfs3_westmere_tbench",
        "westmere-2s20c",
        "tbench:clients=20,duration=30ms",
        "linux-3.10",
    ),
    (
        "cfs3_westmere_hackbench_buddy",
        "westmere-2s20c",
        "hackbench:groups=4,loops=10",
        "linux-3.10,WAKEUP_BUDDY",
    ),
    (
        "cfs4_xeon_tbench",
        "xeon-2s12c",
        "tbench:clients=24,duration=30ms",
        "linux-4.6",
    ),
    (
        "cfs5_xeon_hackbench_threads",
        "xeon-2s12c",
        "hackbench:groups=3,loops=10,mode=thread,ipc=pipe",
        "linux-4.9",
    ),
    (
        "cfs5_1n1l24c1t_pgbench",
        "1n1l24c1t",
        "pgbench:clients=48,jobs=4,duration=30ms",
        "linux-5.13",
    ),
    (
        "cfs5_desktop_schbench_no_wake_wide",
        "desktop-4c8t",
        "schbench:version=v1,runtime=50ms",
        "linux-5.13,NO_WAKE_WIDE",
    ),
    (
        "eevdf_desktop_tbench",
        "desktop-4c8t",
        "tbench:clients=8,duration=30ms",
        "linux-6.6",
    ),
    (
        "eevdf_desktop_tbench_no_wake_affine",
        "desktop-4c8t",
        "tbench:clients=8,duration=30ms",
        "linux-6.6,NO_WAKE_AFFINE",
    ),
    (
        "eevdf_zen3_netperf",
        "zen3-2s64c",
        "netperf-rr:pairs=32,duration=20ms",
        "linux-6.6",
    ),
    (
        "eevdf612_spr_kernbench",
        "spr-2s56c",
        "kernbench:files=100,jobs=auto,scale=0.01,link=20ms",
        "linux-6.12",
    ),
    (
        "eevdf612_kunpeng_pipe",
        "kunpeng920-2n",
        "pipe:pairs=4,loops=2000",
        "linux-6.12",
    ),
    (
        "eevdf612_westmere4s_aim7",
        "westmere-4s40c",
        "aim7-compute:tasks=40,jobs=2",
        "linux-6.12",
    ),
];

#[test]
fn compare_runs_are_pinned() {
    for (name, topo, workload, variant) in RUNS {
        insta::assert_snapshot!(*name, compare_run(topo, workload, variant));
    }
}

/// Every `schedlab bench` scenario, run as `schedlab bench` runs it (linux-6.6, the default
/// profile, seed 1).
#[test]
fn bench_scenarios_are_pinned() {
    for s in schedlab_engine::bench::scenarios() {
        let built = schedlab_policies::build("linux-6.6", &s.topo, 1).expect("policy builds");
        let mut sim = Simulation::new(
            Arc::new(s.topo.clone()),
            MachineProfile::default(),
            built.config,
            built.policy,
            built.balancer,
            s.workload.clone(),
            SimOptions {
                seed: 1,
                ..Default::default()
            },
        )
        .expect("scenario builds");
        let end = sim.run();
        let text = format!(
            "scenario {}\nend {end:?}\nevent hash {:016x}\n{}",
            s.name,
            sim.event_hash(),
            sim.counters().to_text()
        );
        insta::assert_snapshot!(format!("bench_{}", s.name), text);
    }
}
