//! Integration tests of the engine: fixed placements of a pipe ping-pong pair, determinism,
//! invariants, deadlock reports.

use schedlab_engine::policy::{FixedPlacement, PrevCpu};
use schedlab_engine::task::{Slot, WAKE_ALL};
use schedlab_engine::{
    Balancer, CfsBalancer, ChannelKind, Dist, EndReason, MachineProfile, NoBalance, Op,
    SchedConfig, SimOptions, Simulation, TaskSpec, Workload,
};
use schedlab_topo::CpuId;
use schedlab_topo::{CpuSet, Topology};
use std::sync::Arc;

fn core2quad() -> Arc<Topology> {
    // 4 CPUs, 2 LLCs of 2 cores (no SMT).
    Arc::new(schedlab_topo::regular("core2quad", "test", 1, 2, 2, 1, false).unwrap())
}

/// perf-bench-pipe-like pair: A writes then reads, B reads then writes, `loops` round trips.
fn pingpong(loops: u64, pin: Option<(usize, usize)>, n: usize) -> Workload {
    let mut w = Workload::new("pipe");
    let p1 = w.channel(ChannelKind::pipe(), "p1");
    let p2 = w.channel(ChannelKind::pipe(), "p2");
    let mut a = TaskSpec::new(
        "pipe-a",
        vec![
            Op::Loop(loops),
            Op::Send {
                ch: p1,
                bytes: Dist::Const(4),
            },
            Op::Recv { ch: p2 },
            Op::EndLoop,
        ],
    );
    let mut b = TaskSpec::new(
        "pipe-b",
        vec![
            Op::Loop(loops),
            Op::Recv { ch: p1 },
            Op::Send {
                ch: p2,
                bytes: Dist::Const(4),
            },
            Op::EndLoop,
        ],
    );
    if let Some((ca, cb)) = pin {
        a.affinity = Some(CpuSet::from_cpus(n, [ca].map(CpuId::new)));
        b.affinity = Some(CpuSet::from_cpus(n, [cb].map(CpuId::new)));
    }
    w.spawn(a);
    w.spawn(b);
    w
}

/// A simulation of `w` under `cfg` with the prev-CPU placement, not yet run.
fn simulation(
    topo: Arc<Topology>,
    cfg: SchedConfig,
    balancer: Box<dyn Balancer>,
    w: Workload,
    seed: u64,
    check: bool,
) -> Simulation {
    Simulation::new(
        topo,
        MachineProfile::default(),
        cfg,
        Box::new(PrevCpu),
        balancer,
        w,
        SimOptions {
            seed,
            check_invariants: check,
            ..Default::default()
        },
    )
    .unwrap()
}

/// Runs `w` to completion under the default (CFS) configuration and balancer.
fn run(topo: Arc<Topology>, w: Workload, seed: u64, check: bool) -> Simulation {
    let cfg = SchedConfig::default();
    let bal = CfsBalancer::new(cfg.tunables.migration_cost_ns, cfg.tunables.tick_ns());
    let mut sim = simulation(topo, cfg, Box::new(bal), w, seed, check);
    let end = sim.run();
    assert_eq!(end, EndReason::AllExited, "run ended with {end:?}");
    sim
}

#[test]
fn stacked_pair_beats_split_pair_by_the_profile_factor() {
    let topo = core2quad();
    let loops = 2000;
    let stacked = run(topo.clone(), pingpong(loops, Some((0, 0)), 4), 1, true);
    let split = run(topo.clone(), pingpong(loops, Some((0, 2)), 4), 1, true);
    let t_stacked = stacked.now() as f64 / loops as f64;
    let t_split = split.now() as f64 / loops as f64;
    let p = MachineProfile::default();
    // What the profile implies per round trip:
    //  stacked: the wakee preempts the waker, so one wakeup and two switches per round trip
    //           (the other side finds its data already there), plus 4 pipe ops;
    //  split:   2 × (remote wake + IPI + C1 exit + switch from idle) + 4 pipe ops + transfer.
    let ops =
        4.0 * (p.cpu.syscall_ns + p.transfer.pipe_op_ns) as f64 + 8.0 * p.transfer.copy_ns_per_byte;
    let expect_stacked = 2.0 * p.cpu.ctx_switch_mm_ns as f64 + ops + p.wakeup.local_wake_ns as f64;
    let c1 = p.wakeup.idle_states[0].exit_ns as f64;
    let expect_split = 2.0
        * (p.wakeup.remote_wake_ns as f64
            + p.wakeup.ipi_ns as f64
            + c1
            + p.cpu.ctx_switch_ns as f64)
        + ops
        + 8.0 * p.transfer.cross_llc_ns_per_byte
        + 2.0 * p.transfer.message_lines * p.cache.refetch_cross_llc_ns;
    let ratio = t_split / t_stacked;
    let expect_ratio = expect_split / expect_stacked;
    assert!(
        (t_stacked - expect_stacked).abs() / expect_stacked < 0.10,
        "stacked {t_stacked} ns/op, profile implies {expect_stacked}"
    );
    assert!(
        (t_split - expect_split).abs() / expect_split < 0.15,
        "split {t_split} ns/op, profile implies {expect_split}"
    );
    assert!(
        (ratio - expect_ratio).abs() / expect_ratio < 0.2,
        "ratio {ratio} vs {expect_ratio}"
    );
    // The counters show why.
    let cs = split.counters();
    let cst = stacked.counters();
    assert!(
        cs.wakeups_to_idle as f64 > 0.95 * cs.wakeups as f64,
        "{}",
        cs.to_text()
    );
    assert_eq!(cst.wakeups_to_idle, 0, "{}", cst.to_text());
    assert!(cs.idle_exits >= 2 * loops - 2);
    assert_eq!(cst.idle_exits, 1);
    assert!(cs.transfer_cost_ns > 0 && cst.transfer_cost_ns == 0);
    assert!(cs.wakeups_remote as f64 > 0.95 * cs.wakeups as f64);
}

#[test]
fn same_seed_same_event_stream() {
    let topo = core2quad();
    let mk = || {
        let mut w = Workload::new("rand");
        let ch = w.channel(ChannelKind::unix(), "c");
        for i in 0..6 {
            let prog = if i % 2 == 0 {
                vec![
                    Op::Loop(300),
                    Op::Compute(Dist::Exp { mean: 5_000 }),
                    Op::Send {
                        ch,
                        bytes: Dist::Uniform { lo: 10, hi: 2000 },
                    },
                    Op::EndLoop,
                ]
            } else {
                vec![
                    Op::Loop(300),
                    Op::Recv { ch },
                    Op::Compute(Dist::Exp { mean: 3_000 }),
                    Op::EndLoop,
                ]
            };
            w.spawn(TaskSpec::new(format!("t{i}"), prog));
        }
        w
    };
    let a = run(topo.clone(), mk(), 42, false);
    let b = run(topo.clone(), mk(), 42, false);
    let c = run(topo, mk(), 43, false);
    assert_eq!(a.event_hash(), b.event_hash());
    assert_eq!(a.now(), b.now());
    assert_ne!(a.event_hash(), c.event_hash());
}

#[test]
fn deadlock_is_reported_not_hung() {
    let mut w = Workload::new("dead");
    let ch = w.channel(ChannelKind::pipe(), "never-written");
    w.spawn(TaskSpec::new("reader", vec![Op::Recv { ch }]));
    let mut sim = simulation(
        core2quad(),
        SchedConfig::default(),
        Box::new(NoBalance),
        w,
        1,
        false,
    );
    match sim.run() {
        EndReason::Deadlock(v) => {
            assert_eq!(v.len(), 1);
            assert!(
                v[0].contains("reader") && v[0].contains("never-written"),
                "{v:?}"
            );
        }
        other => panic!("expected a deadlock, got {other:?}"),
    }
}

#[test]
fn futex_fanout_and_barrier_and_fork_complete() {
    let mut w = Workload::new("misc");
    let f = w.futex();
    let b = w.barrier(3);
    let h = w.hist("lat");
    let g = w.global_slot();
    let child = w.spec(TaskSpec::new(
        "child",
        vec![Op::Compute(Dist::Const(100_000))],
    ));
    w.spawn(TaskSpec::new(
        "waker",
        vec![
            Op::Barrier(b),
            Op::Sleep(Dist::Const(50_000)),
            Op::Stamp(g),
            Op::FutexWake { f, n: WAKE_ALL },
            Op::Fork(child),
            Op::Fork(child),
            Op::WaitChildren,
        ],
    ));
    for i in 0..2 {
        w.spawn(TaskSpec::new(
            format!("waiter{i}"),
            vec![
                Op::Barrier(b),
                Op::FutexWait(f),
                Op::RecordSince { hist: h, slot: g },
            ],
        ));
    }
    let _ = Slot::Task(0);
    let sim = run(core2quad(), w, 3, true);
    assert_eq!(sim.nr_tasks(), 5);
    assert!(!sim.user_hist(h).is_empty());
    assert!(sim.task_stats().iter().all(|t| t.exited));
}

#[test]
fn cpu_time_is_conserved() {
    let topo = core2quad();
    let mut w = Workload::new("burn");
    for i in 0..7 {
        w.spawn(TaskSpec::new(
            format!("b{i}"),
            vec![Op::Compute(Dist::Const(3_000_000 + i * 100_000))],
        ));
    }
    let sim = run(topo, w, 1, true);
    let c = sim.counters();
    assert_eq!(c.cpu_time_ns(), c.elapsed_ns * 4);
    // 7 tasks × ~3.3 ms on 4 CPUs must take at least 7*3.3/4 ms.
    assert!(c.elapsed_ns >= 5_600_000, "{}", c.to_text());
    let _ = FixedPlacement::default();
}

#[test]
fn preempted_work_is_not_lost() {
    // Two 30 ms CPU-bound tasks sharing one CPU must take 60 ms, whatever preemptions happen.
    // See: policies helper report (work was dropped when a preempted task's next op was Exit).
    let topo = Arc::new(schedlab_topo::regular("one", "test", 1, 1, 1, 1, false).unwrap());
    let mut w = Workload::new("burn2");
    for i in 0..2 {
        w.spawn(TaskSpec::new(
            format!("b{i}"),
            vec![Op::Compute(Dist::Const(30_000_000))],
        ));
    }
    let mut profile = MachineProfile::default();
    profile.cpu.jitter = 0.0;
    let cfg = SchedConfig::default();
    let mut sim = Simulation::new(
        topo,
        profile,
        cfg,
        Box::new(PrevCpu),
        Box::new(NoBalance),
        w,
        SimOptions::default(),
    )
    .unwrap();
    assert_eq!(sim.run(), EndReason::AllExited);
    assert!(sim.now() >= 60_000_000, "finished at {} ns", sim.now());
    assert!(sim.now() < 61_000_000, "finished at {} ns", sim.now());
    assert!(
        sim.counters().ctx_involuntary > 2,
        "{}",
        sim.counters().to_text()
    );
}

/// Places exec'ing tasks round-robin over the CPUs; everything else stays on prev.
struct ExecSpread(usize);
impl schedlab_engine::PlacementPolicy for ExecSpread {
    fn name(&self) -> String {
        "exec-spread".into()
    }
    fn select_task_rq(
        &mut self,
        ctx: &schedlab_engine::WakeCtx,
        v: &schedlab_engine::SchedView<'_>,
        _: &mut schedlab_engine::policy::Hints,
        _: &mut schedlab_engine::PlacementRecord,
    ) -> CpuId {
        if ctx.is_exec() {
            self.0 += 1;
            CpuId::new(self.0 % v.nr_cpus())
        } else {
            ctx.prev_cpu
        }
    }
}

#[test]
fn exec_moves_a_running_task_to_the_placed_cpu() {
    // Four children forked onto the parent's CPU exec and compute 10 ms each; exec placement
    // spreads them, so they finish in about 10 ms (plus the exec cost), not 40 ms.
    let topo = core2quad();
    let mut w = Workload::new("exec");
    let child = w.spec(TaskSpec::new(
        "child",
        vec![Op::Exec, Op::Compute(Dist::Const(10_000_000))],
    ));
    w.spawn(TaskSpec::new(
        "make",
        vec![
            Op::Fork(child),
            Op::Fork(child),
            Op::Fork(child),
            Op::Fork(child),
            Op::WaitChildren,
        ],
    ));
    let mut profile = MachineProfile::default();
    profile.cpu.jitter = 0.0;
    let mut sim = Simulation::new(
        topo,
        profile,
        SchedConfig::default(),
        Box::new(ExecSpread(0)),
        Box::new(NoBalance),
        w,
        SimOptions {
            check_invariants: true,
            trace: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(sim.run(), EndReason::AllExited);
    assert!(
        sim.now() < 12_000_000,
        "finished at {} ns: exec did not spread the children",
        sim.now()
    );
    let c = sim.counters();
    assert!(c.migrations_wake >= 3, "{}", c.to_text());
    let trace = sim.take_trace().unwrap();
    let moved = trace
        .events
        .iter()
        .filter(|e| matches!(e, schedlab_trace::TraceEvent::MigrateTask { .. }))
        .count();
    assert!(moved >= 3);
}

/// 160 tasks started on one CPU of two: the queue grows long (the balancer's
/// least-recently-run order is then kept beside it, and the tree changes form), the balancer
/// pulls from it, and as the tasks finish it shrinks back (the order is sorted on demand
/// again). The invariants, which compare that order with the queue after every event, hold
/// throughout.
#[test]
fn a_long_queue_keeps_its_balance_order_and_drops_it_when_short() {
    let topo = Arc::new(schedlab_topo::regular("2cpu", "test", 1, 1, 2, 1, false).unwrap());
    let mut w = Workload::new("storm");
    for i in 0..160 {
        w.spawn(TaskSpec::new(
            format!("t{i}"),
            vec![
                Op::Loop(3),
                Op::Compute(Dist::Const(200_000 + 1_000 * i)),
                Op::Sleep(Dist::Const(50_000)),
                Op::EndLoop,
            ],
        ));
    }
    let sim = run(topo, w, 7, true);
    let c = sim.counters();
    assert!(c.migrations_balance > 0, "{c:?}");
    assert!(
        c.busy_ns.iter().all(|&b| b > 0),
        "both CPUs ran: {:?}",
        c.busy_ns
    );
}

/// EEVDF over a long run with weights from nice -5 to 19 on one CPU: a nice-19 task alone
/// moves the zero-lag point ~68 virtual ns per ns, so the queue's reference point is moved
/// many times; the invariants check after every event that the running sums match the queue
/// and that the zero-lag point is the weighted average of the absolute vruntimes.
#[test]
fn eevdf_zero_lag_point_stays_exact_across_rebases() {
    let topo = Arc::new(schedlab_topo::regular("1cpu", "test", 1, 1, 1, 1, false).unwrap());
    let mut w = Workload::new("eevdf-long");
    w.duration_ns = Some(3_000_000_000);
    for (i, nice) in [19, 0, -5].into_iter().enumerate() {
        let mut spec = TaskSpec::new(
            format!("n{nice}"),
            vec![
                Op::Loop(u64::MAX),
                Op::Compute(Dist::Const(700_000 * (i as u64 + 1))),
                Op::Sleep(Dist::Const(if nice == 19 { 100_000 } else { 9_000_000 })),
                Op::EndLoop,
            ],
        );
        spec.nice = nice;
        w.spawn(spec);
    }
    let cfg = SchedConfig {
        class: schedlab_engine::ClassKind::Eevdf,
        ..Default::default()
    };
    let mut sim = simulation(topo, cfg, Box::new(NoBalance), w, 3, true);
    assert_eq!(sim.run(), EndReason::TimeUp);
    assert!(sim.counters().ctx_switches > 1000, "{:?}", sim.counters());
}

/// Issue 22, defect 6: a sleep of u64::MAX ns overflowed `now + duration` (a panic in
/// debug builds; in release the timer wrapped into the past and the sleep was skipped).
/// The wake-up time saturates: the sleeper never wakes before the run's end.
#[test]
fn a_sleep_of_u64_max_never_wakes_before_the_end() {
    let mut w = Workload::new("long-sleep");
    w.spawn(TaskSpec::new(
        "sleeper",
        vec![
            Op::Compute(Dist::Const(1_000)),
            Op::Sleep(Dist::Const(u64::MAX)),
            Op::Compute(Dist::Const(1_000_000)),
        ],
    ));
    w.duration_ns = Some(10_000_000);
    let cfg = SchedConfig::default();
    let mut sim = simulation(core2quad(), cfg, Box::new(NoBalance), w, 1, true);
    assert_eq!(sim.run(), EndReason::TimeUp);
    assert_eq!(sim.now(), 10_000_000);
    let t = &sim.task_stats()[0];
    assert!(!t.exited);
    // Only the first compute ran (give or take the profile's jitter).
    assert!(t.sum_exec_ns < 10_000, "{}", t.sum_exec_ns);
}
