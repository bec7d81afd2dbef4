//! Each switch shows the behaviour it changes. Placement switches are exercised on
//! hand-built states in decisions.rs; here: the engine-level features and tunables land in
//! the kernel configuration the engine interprets, a few of them change a simulation in the
//! way they should, and a tidy check that every switch of every era is named by some test.

mod common;

use schedlab_engine::{
    Dist, EndReason, MachineProfile, Op, PreemptModel, SchedConfig, SimOptions, Simulation,
    TaskSpec, Workload,
};
use schedlab_policies::{Era, Provenance, build, settings, switches};
use schedlab_topo::CpuId;
use schedlab_topo::{CpuSet, regular};
use schedlab_trace::{PrevState, TraceEvent};
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
    ("linux-6.18,NO_DELAY_ZERO", |c| !c.features.delay_zero),
    ("linux-6.18,PREEMPT_NONE", |c| {
        c.preempt == PreemptModel::None
    }),
    ("linux-2.5.59,PREEMPT_FULL", |c| {
        c.preempt == PreemptModel::Full
    }),
    ("linux-6.18,PREEMPT_LAZY", |c| {
        c.preempt == PreemptModel::Lazy
    }),
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

/// A ping-pong pair pinned to one CPU: every wakeup lands on the waker's CPU.
fn one_cpu_pair(loops: u64) -> Workload {
    let mut w = Workload::new("pair");
    let a = w.channel(schedlab_engine::ChannelKind::pipe(), "a");
    let b = w.channel(schedlab_engine::ChannelKind::pipe(), "b");
    let one = || Some(CpuSet::from_cpus(2, [CpuId::new(0)]));
    let side = |name: &str, first: Op, second: Op| {
        let mut t = TaskSpec::new(name, vec![Op::Loop(loops), first, second, Op::EndLoop]);
        t.affinity = one();
        t
    };
    let send = |ch| Op::Send {
        ch,
        bytes: Dist::Const(100),
    };
    w.spawn(side("ping", send(a), Op::Recv { ch: b }));
    w.spawn(side("pong", Op::Recv { ch: a }, send(b)));
    w
}

/// Runs `w` under variant `v` with the trace on and returns the trace.
fn traced(v: &str, topo: &Arc<schedlab_topo::Topology>, w: Workload) -> schedlab_trace::Trace {
    let opts = schedlab_engine::SimOptions {
        trace: true,
        ..Default::default()
    };
    let mut sim = common::simulation(v, topo, w, opts);
    sim.run();
    sim.take_trace().expect("traced")
}

/// From a trace: for each wakeup that preempted its waker (the waker switched out runnable
/// for the wakee), the time from the wakeup to the switch, ns.
fn preempting_wakeup_delays(events: &[TraceEvent]) -> Vec<u64> {
    let mut woken: Option<(u32, u64)> = None;
    let mut delays = Vec::new();
    for e in events {
        match *e {
            TraceEvent::Wakeup { ts_ns, pid, .. } => woken = Some((pid, ts_ns)),
            TraceEvent::Switch {
                ts_ns,
                prev_state,
                next_pid,
                ..
            } => {
                if let Some((pid, at)) = woken.take()
                    && pid == next_pid
                    && prev_state == PrevState::Runnable
                {
                    delays.push(ts_ns - at);
                }
            }
            _ => {}
        }
    }
    delays
}

/// PREEMPT_NONE/VOLUNTARY (the presets' model): a wakee that preempts its waker runs only
/// when the waker's syscall returns to user (the rest of its send); under PREEMPT_FULL at
/// the wakeup. On CFS 3.10 every pipe wakeup of the pair preempts (the sleeper credit).
#[test]
fn a_wakeup_preemption_waits_for_the_wakers_return_to_user() {
    let topo = Arc::new(regular("1x2", "test", 1, 1, 2, 1, false).unwrap());
    let delays = |v: &str| preempting_wakeup_delays(&traced(v, &topo, one_cpu_pair(200)).events);
    let full = delays("linux-3.10,PREEMPT_FULL");
    let voluntary = delays("linux-3.10,PREEMPT_FULL,PREEMPT_VOLUNTARY");
    assert!(
        full.len() > 100 && voluntary.len() > 100,
        "{} {}",
        full.len(),
        voluntary.len()
    );
    assert!(full.iter().all(|&d| d == 0), "full: {:?}", &full[..10]);
    // The rest of the send: at least its syscall exit path.
    let exit = schedlab_engine::MachineProfile::default().cpu.syscall_ns / 2;
    assert!(
        voluntary.iter().all(|&d| d >= exit),
        "voluntary: {:?}",
        &voluntary[..10]
    );
}

/// 6.12-7.1 `ttwu_runnable()` requeues a delayed wakee in place without charging the
/// running waker first (`requeue_delayed_entity()` calls no `update_curr()`): its lag is
/// measured against the waker's vruntime as of its pick, and the preemption check then
/// brings the waker up to date. A wakee blocked while ahead of its partner, whose partner
/// has run past that lead since its pick, preempts: on the pinned pipe pair most wakeups do
/// (the host's 6.18.44 set need_resched on 57-72 % of them). The engine's old order (the
/// waker charged before the lag) re-placed every overtaken wakee level with the waker and
/// preempted on almost none; DELAY_ZERO itself barely changes the kernel's rate.
#[test]
fn a_delayed_wakee_is_requeued_against_the_wakers_stale_vruntime() {
    let topo = Arc::new(regular("1x2", "test", 1, 1, 2, 1, false).unwrap());
    let run = |v: &str, engine_order: bool| {
        let opts = SimOptions {
            seed: 1,
            max_events: Some(5_000_000),
            ..Default::default()
        };
        let b = build(v, &topo, 1).unwrap();
        let mut config = b.config;
        config.features.requeue_update_curr = engine_order;
        let mut sim = Simulation::new(
            topo.clone(),
            MachineProfile::default(),
            config,
            b.policy,
            b.balancer,
            one_cpu_pair(500),
            opts,
        )
        .unwrap();
        assert_eq!(sim.run(), EndReason::AllExited);
        let c = sim.counters();
        (c.preempt_wakeup as f64 / c.wakeups as f64, c.wakeups)
    };
    let (kernel, n) = run("linux-6.18", false);
    let (engine, _) = run("linux-6.18", true);
    let (no_zero, _) = run("linux-6.18,NO_DELAY_ZERO", false);
    assert!(n >= 400, "{n} wakeups");
    assert!(kernel > 0.5, "kernel order: {kernel:.3} of wakeups preempt");
    assert!(engine < 0.1, "old engine order: {engine:.3}");
    assert!(
        (kernel - no_zero).abs() < 0.1,
        "DELAY_ZERO barely matters: {kernel:.3} vs {no_zero:.3}"
    );
}

/// A reschedule already pending makes the preemption check return at once
/// (`check_preempt_wakeup()`'s need_resched exit): while the waker finishes its syscall,
/// further wakeups onto its CPU do not count a second preemption. Every counted wakeup
/// preemption then ends in one involuntary switch.
#[test]
fn a_pending_reschedule_is_not_counted_twice() {
    let topo = Arc::new(regular("1x2", "test", 1, 1, 2, 1, false).unwrap());
    // One waker wakes four futex waiters on its own CPU per op: the first wakeup asks for
    // the reschedule, the other three find it pending.
    let mut w = Workload::new("fanout");
    let f = w.futex();
    let on0 = || Some(CpuSet::from_cpus(2, [CpuId::new(0)]));
    for i in 0..4 {
        let mut t = TaskSpec::new(
            format!("waiter{i}"),
            vec![Op::Loop(50), Op::FutexWait(f), Op::EndLoop],
        );
        t.affinity = on0();
        w.spawn(t);
    }
    let mut t = TaskSpec::new(
        "waker",
        vec![
            // More rounds than the waiters wait: none is left waiting.
            Op::Loop(200),
            Op::Compute(Dist::Const(200_000)),
            Op::FutexWake { f, n: 4 },
            Op::EndLoop,
        ],
    );
    t.affinity = on0();
    w.spawn(t);
    let sim = common::run("linux-3.10,PREEMPT_NONE", &topo, w, false, 1);
    let c = sim.counters();
    assert!(c.preempt_wakeup > 50, "{}", c.to_text());
    assert!(
        c.preempt_wakeup <= c.ctx_involuntary,
        "{} wakeup preemptions, {} involuntary switches",
        c.preempt_wakeup,
        c.ctx_involuntary
    );
}

/// PREEMPT_LAZY (6.13+): a fair wakeup preemption of a task computing in user mode sends
/// no IPI; it waits for the next tick (which upgrades the lazy request), while under
/// PREEMPT_VOLUNTARY the wakeup's IPI returns to user and preempts at once.
#[test]
fn a_lazy_wakeup_preemption_waits_for_the_tick() {
    let topo = Arc::new(regular("1x2", "test", 1, 1, 2, 1, false).unwrap());
    let mut w = Workload::new("hog-and-sleeper");
    let on0 = || Some(CpuSet::from_cpus(2, [CpuId::new(0)]));
    let mut hog = TaskSpec::new(
        "hog",
        vec![
            Op::Loop(20),
            Op::Compute(Dist::Const(10_000_000)),
            Op::EndLoop,
        ],
    );
    hog.affinity = on0();
    w.spawn(hog);
    let mut sleeper = TaskSpec::new(
        "sleeper",
        vec![
            Op::Loop(40),
            Op::Sleep(Dist::Const(3_000_000)),
            Op::Compute(Dist::Const(20_000)),
            Op::EndLoop,
        ],
    );
    sleeper.affinity = on0();
    w.spawn(sleeper);
    let mean_latency = |v: &str| {
        let tr = traced(v, &topo, w.clone());
        let (mut woken, mut sum, mut n) = (None, 0u64, 0u64);
        for e in &tr.events {
            match *e {
                TraceEvent::Wakeup { ts_ns, pid, .. } => woken = Some((pid, ts_ns)),
                TraceEvent::Switch {
                    ts_ns, next_pid, ..
                } => {
                    if let Some((pid, at)) = woken
                        && pid == next_pid
                    {
                        sum += ts_ns - at;
                        n += 1;
                        woken = None;
                    }
                }
                _ => {}
            }
        }
        assert!(n > 20, "{v}: {n} wakeups ran");
        sum / n
    };
    let lazy = mean_latency("linux-6.18,hz=250,PREEMPT_LAZY");
    let voluntary = mean_latency("linux-6.18,hz=250,PREEMPT_VOLUNTARY");
    assert!(voluntary < 50_000, "voluntary: {voluntary} ns");
    assert!(lazy > 500_000, "lazy: {lazy} ns (voluntary {voluntary} ns)");
}

/// linux-6.18's own facts: the 0.70 ms base slice of 6.15 (6.12: 0.75 ms), and lazy
/// preemption selectable from 6.13 only.
#[test]
fn the_618_era_has_the_shorter_slice_and_lazy_preemption() {
    let slice = |v: &str| settings(v).unwrap().config.tunables.min_granularity_ns;
    assert_eq!(slice("linux-6.18"), 700_000);
    assert_eq!(slice("linux-6.12"), 750_000);
    assert!(settings("linux-6.12,PREEMPT_LAZY").is_err());
    assert_eq!(
        settings("linux-6.18").unwrap().config.preempt,
        PreemptModel::Voluntary
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

/// Runs `w` on `topo` under `v` with one engine feature forced, returning the counters' wakeup
/// preemptions, wakeups and the event hash.
fn run_with(
    v: &str,
    topo: &Arc<schedlab_topo::Topology>,
    w: Workload,
    set: impl Fn(&mut schedlab_engine::Features),
) -> (u64, u64, u64) {
    let b = build(v, topo, 1).unwrap();
    let mut config = b.config;
    set(&mut config.features);
    let opts = SimOptions {
        seed: 1,
        max_events: Some(5_000_000),
        ..Default::default()
    };
    let mut sim = Simulation::new(
        topo.clone(),
        MachineProfile::default(),
        config,
        b.policy,
        b.balancer,
        w,
        opts,
    )
    .unwrap();
    assert_eq!(sim.run(), EndReason::AllExited);
    let c = sim.counters();
    (c.preempt_wakeup, c.wakeups, sim.event_hash())
}

/// Three tasks pinned to one CPU, each computing (`work` ns, twice and three times that for
/// the second and third) and then waking the next through a pipe ring: tasks block while
/// ineligible (delayed) and wake each other with a third one queued.
fn one_cpu_ring(loops: u64, work: u64) -> Workload {
    let mut w = Workload::new("ring");
    let chans: Vec<usize> = (0..3)
        .map(|i| w.channel(schedlab_engine::ChannelKind::pipe(), format!("c{i}")))
        .collect();
    for i in 0..3 {
        let mut prog = vec![Op::Loop(loops)];
        if i > 0 {
            prog.push(Op::Recv { ch: chans[i] });
        }
        prog.push(Op::Compute(Dist::Const(work * (i as u64 + 1))));
        prog.push(Op::Send {
            ch: chans[(i + 1) % 3],
            bytes: Dist::Const(100),
        });
        if i == 0 {
            prog.push(Op::Recv { ch: chans[0] });
        }
        prog.push(Op::EndLoop);
        let mut t = TaskSpec::new(format!("t{i}"), prog);
        t.affinity = Some(CpuSet::from_cpus(2, [CpuId::new(0)]));
        w.spawn(t);
    }
    w
}

/// 7.1 and 6.18.33+ (ac8e69e69363): the wakeup-preemption pick finishes the delayed dequeue
/// of a delayed entity it meets and picks again, so a wakee behind a delayed task is no
/// longer kept from preempting by it: more wakeups preempt than with 6.18.0's pick.
#[test]
fn the_wakeup_pick_dequeues_the_delayed_entities_it_meets() {
    let topo = Arc::new(regular("1x2", "test", 1, 1, 2, 1, false).unwrap());
    let run = |on: bool| {
        run_with("linux-7.1", &topo, one_cpu_ring(400, 30_000), |f| {
            f.wakeup_pick_dequeues_delayed = on
        })
    };
    let (with, n, _) = run(true);
    let (without, _, _) = run(false);
    assert!(n > 500, "{n} wakeups");
    assert!(
        with > without,
        "preemptions: {with} with, {without} without"
    );
    assert!(
        settings("linux-7.1")
            .unwrap()
            .config
            .features
            .wakeup_pick_dequeues_delayed
    );
    assert!(
        !settings("linux-6.18")
            .unwrap()
            .config
            .features
            .wakeup_pick_dequeues_delayed
    );
}

/// 7.0 and 6.18.y (6e3c0a4e1ad1) clamp lags to the longest queued slice plus a tick (the
/// clamp itself is tested in the engine's `fair.rs`); the eras that have it.
#[test]
fn the_lag_clamp_follows_the_era() {
    for (v, on) in [
        ("linux-6.18", false),
        ("linux-6.18.33", true),
        ("linux-6.19", false),
        ("linux-7.0", true),
        ("linux-7.1", true),
    ] {
        assert_eq!(
            settings(v).unwrap().config.features.lag_clamp_max_slice,
            on,
            "{v}"
        );
    }
}
