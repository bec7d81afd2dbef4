//! Each switch shows the behaviour it changes. Placement switches are exercised on
//! hand-built states in decisions.rs; here: the engine-level features and tunables land in
//! the kernel configuration the engine interprets, a few of them change a simulation in the
//! way they should, and a tidy check that every switch of every era is named by some test.

mod common;

use schedlab_engine::{Dist, Op, SchedConfig, TaskSpec, Workload};
use schedlab_policies::{Era, Provenance, build, settings, switches};
use schedlab_topo::CpuId;
use schedlab_topo::{CpuSet, regular};
use std::sync::Arc;

type Probe = fn(&SchedConfig) -> bool;

/// (variant, what must hold in its config, what holds in the preset's default config).
const ENGINE_FEATURES: &[(&str, Probe)] = &[
    ("linux-6.6,NO_WAKEUP_PREEMPTION", |c| {
        !c.features.wakeup_preemption
    }),
    ("linux-2.6.30,NO_WAKEUP_PREEMPTION", |c| {
        !c.features.wakeup_preemption
    }),
    ("linux-3.10,NEXT_BUDDY", |c| c.features.next_buddy),
    ("linux-6.12,NEXT_BUDDY", |c| c.features.next_buddy),
    ("linux-4.9,NO_LAST_BUDDY", |c| !c.features.last_buddy),
    ("linux-5.13,NO_CACHE_HOT_BUDDY", |c| {
        !c.features.cache_hot_buddy
    }),
    ("linux-2.6.32,NO_GENTLE_FAIR_SLEEPERS", |c| {
        !c.features.gentle_fair_sleepers
    }),
    ("linux-3.6,NO_START_DEBIT", |c| !c.features.start_debit),
    ("linux-6.0,NO_BASE_SLICE", |c| !c.features.base_slice),
    ("linux-6.6,NO_PLACE_LAG", |c| !c.features.place_lag),
    ("linux-6.6,NO_PLACE_DEADLINE_INITIAL", |c| {
        !c.features.place_deadline_initial
    }),
    ("linux-6.12,NO_RUN_TO_PARITY", |c| !c.features.run_to_parity),
    ("linux-6.12,NO_PREEMPT_SHORT", |c| !c.features.preempt_short),
    ("linux-6.12,NO_DELAY_DEQUEUE", |c| !c.features.delay_dequeue),
    ("linux-3.10,NO_TTWU_QUEUE", |c| !c.features.ttwu_queue),
    ("linux-6.6,sched_migration_cost_ns=250000", |c| {
        c.tunables.migration_cost_ns == 250_000
    }),
    ("linux-2.6.30,sched_latency_ns=10000000", |c| {
        c.tunables.latency_ns == 10_000_000
    }),
    ("linux-4.14,sched_min_granularity_ns=3000000", |c| {
        c.tunables.min_granularity_ns == 3_000_000
    }),
    ("linux-6.6,sched_base_slice_ns=3000000", |c| {
        c.tunables.min_granularity_ns == 3_000_000
    }),
    ("linux-3.10,sched_wakeup_granularity_ns=4000000", |c| {
        c.tunables.wakeup_granularity_ns == 4_000_000
    }),
    ("linux-4.6,sched_nr_migrate=8", |c| {
        c.tunables.nr_migrate == 8
    }),
    ("linux-6.0,sched_tunable_scaling=0", |c| {
        c.tunables.factor(64) == 1
    }),
    ("linux-6.6,hz=250", |c| c.tunables.tick_ns() == 4_000_000),
    ("linux-2.5.59,timeslice_ns=50000000", |c| {
        c.tunables.o1_timeslice_ns == 50_000_000
    }),
];

#[test]
fn engine_features_and_tunables_reach_the_config() {
    let t = regular("t", "test", 1, 1, 2, 1, false).unwrap();
    for (v, holds) in ENGINE_FEATURES {
        let b = build(v, &t, 1).unwrap_or_else(|e| panic!("{v}: {e}"));
        assert!(holds(&b.config), "{v}: not in the config");
        let base = build(v.split(',').next().unwrap_or(""), &t, 1).unwrap();
        assert!(
            !holds(&base.config),
            "{v}: already true by default, the test shows nothing"
        );
    }
}

#[test]
fn o1_tick_tunables_reach_the_balancer_settings() {
    let s = settings(
        "linux-2.5.59,idle_rebalance_tick=2,busy_rebalance_tick=100,node_balance_rate=5,busy_node_rebalance_tick=300,node_threshold=150,cache_decay_ticks=4,idle_node_rebalance_tick=7",
    )
    .unwrap();
    let o = s.o1;
    assert_eq!(
        (
            o.idle_rebalance_tick,
            o.busy_rebalance_tick,
            o.node_balance_rate,
            o.busy_node_rebalance_tick,
            o.node_threshold,
            o.cache_decay_ticks,
            o.idle_node_rebalance_tick
        ),
        (2, 100, 5, 300, 150, 4, 7)
    );
    let s = settings("linux-2.5.59,ingo,busy_node_rebalance_mult=3").unwrap();
    assert_eq!(s.o1.busy_node_rebalance_tick, 600);
}

/// Two CPU hogs pinned to CPUs 0 and 2 (different LLCs of a core2quad) and a ping-pong pair
/// pinned across them: every wakeup targets a busy CPU in the other LLC.
fn cross_llc_pairs() -> Workload {
    let mut w = Workload::new("cross");
    let a = w.channel(schedlab_engine::ChannelKind::pipe(), "a");
    let b = w.channel(schedlab_engine::ChannelKind::pipe(), "b");
    let pin = |mut t: TaskSpec, c: usize| {
        t.affinity = Some(CpuSet::from_cpus(4, [CpuId::new(c)]));
        t
    };
    w.spawn(pin(
        TaskSpec::new(
            "ping",
            vec![
                Op::Loop(200),
                Op::Send {
                    ch: a,
                    bytes: Dist::Const(8),
                },
                Op::Recv { ch: b },
                Op::EndLoop,
            ],
        ),
        0,
    ));
    w.spawn(pin(
        TaskSpec::new(
            "pong",
            vec![
                Op::Loop(200),
                Op::Recv { ch: a },
                Op::Send {
                    ch: b,
                    bytes: Dist::Const(8),
                },
                Op::EndLoop,
            ],
        ),
        2,
    ));
    for c in [0, 2] {
        w.spawn(pin(
            TaskSpec::new(
                format!("hog{c}"),
                vec![
                    Op::Loop(40),
                    Op::Compute(Dist::Const(1_000_000)),
                    Op::EndLoop,
                ],
            ),
            c,
        ));
    }
    w
}

#[test]
fn wakeup_preemption_and_ttwu_queue_change_a_run() {
    let topo = Arc::new(regular("c2q", "test", 1, 2, 2, 1, false).unwrap());
    let on = common::run("linux-3.10", &topo, cross_llc_pairs(), true, 1);
    let off = common::run(
        "linux-3.10,NO_WAKEUP_PREEMPTION",
        &topo,
        cross_llc_pairs(),
        true,
        1,
    );
    assert!(
        on.counters().preempt_wakeup > 0,
        "{}",
        on.counters().to_text()
    );
    assert_eq!(
        off.counters().preempt_wakeup,
        0,
        "{}",
        off.counters().to_text()
    );
    let q = common::run(
        "linux-3.10,NO_TTWU_QUEUE",
        &topo,
        cross_llc_pairs(),
        true,
        1,
    );
    assert!(
        on.counters().ipis > q.counters().ipis,
        "queued {} vs direct {}",
        on.counters().ipis,
        q.counters().ipis
    );
}

/// Every switch of every preset is named in some test's variant string.
#[test]
fn every_switch_is_exercised_by_a_test() {
    let sources = [
        include_str!("decisions.rs"),
        include_str!("decision_details.rs"),
        include_str!("variants.rs"),
        include_str!("o1_balancer.rs"),
        include_str!("switch_effects.rs"),
        include_str!("debated_patches.rs"),
    ]
    .concat();
    let mut missing = Vec::new();
    let mut names: Vec<(String, Provenance)> = Vec::new();
    for e in Era::ALL {
        for s in switches(e.name()).unwrap() {
            if !names.iter().any(|(n, _)| *n == s.name) {
                names.push((s.name.clone(), s.provenance));
            }
        }
    }
    for (n, prov) in &names {
        let found = if prov == &Provenance::Tunable {
            sources.contains(&format!(",{n}"))
        } else {
            sources.contains(&format!(",{n},"))
                || sources.contains(&format!(",{n}\""))
                || sources.contains(&format!(",NO_{n}"))
        };
        if !found {
            missing.push(n.clone());
        }
    }
    assert!(names.len() > 50, "{}", names.len());
    assert!(missing.is_empty(), "switches no test names: {missing:?}");
}

/// The engine keeps the bookkeeping of the 2019-2023 patches only under their switches:
/// SIS_CACHE's short sleeps and reservations, MIGRATION_RATELIMIT's migration times,
/// SIS_FILTER's idle cpumask (a busy CPU's tick clears its bit).
#[test]
fn debated_patch_bookkeeping_runs_only_under_its_switch() {
    use schedlab_engine::SimOptions;
    let topo = Arc::new(regular("c2q", "test", 1, 2, 2, 1, false).unwrap());
    let run = |variant: &str| {
        let mut sim = common::simulation(
            variant,
            &topo,
            common::hackbench(2, 4, 20),
            SimOptions::default(),
        );
        sim.run();
        sim
    };
    let plain = run("linux-6.6");
    let h = plain.hints();
    assert!(
        h.task
            .iter()
            .all(|t| t.sleep_avg == 0 && t.last_migration.is_none())
    );
    assert!(h.cpu.iter().all(|c| c.cache_hot_until == 0));
    let cache = run("linux-6.6,SIS_CACHE");
    assert!(cache.hints().task.iter().any(|t| t.sleep_avg > 0));
    assert!(cache.hints().cpu.iter().any(|c| c.cache_hot_until > 0));
    let damp = run("linux-6.6,MIGRATION_RATELIMIT");
    assert!(damp.hints().task.iter().any(|t| t.last_migration.is_some()));
    // One 8-CPU LLC, kept busy for some ticks: the scans of the filtered run skip CPUs
    // whose ticks cleared them. Every CPU ends idle, its bit set again.
    let topo = Arc::new(regular("flat8", "test", 1, 1, 8, 1, false).unwrap());
    let run = |variant: &str| {
        let mut sim = common::simulation(
            variant,
            &topo,
            common::hackbench(2, 8, 200),
            SimOptions::default(),
        );
        sim.run();
        sim
    };
    let full = run("linux-6.0");
    let filtered = run("linux-6.0,SIS_FILTER");
    assert_ne!(
        full.counters().cpus_examined,
        filtered.counters().cpus_examined,
        "the filter changes what the scans examine"
    );
    for (l, span) in topo.llcs().iter().enumerate() {
        assert_eq!(&filtered.hints().llc[l].idle_cpus, span);
    }
}
