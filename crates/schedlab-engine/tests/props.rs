//! Property tests: over random small machines, kernels and workloads, every invariant holds
//! after every event, the run terminates (or reports a deadlock), and a seed replays exactly.

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use schedlab_engine::policy::{Hints, PlacementRecord, Step};
use schedlab_engine::rng::SimRng;
use schedlab_engine::task::{LockRef, WAKE_ALL};
use schedlab_engine::{
    CfsBalancer, ChannelKind, ClassKind, Dist, EndReason, MachineProfile, Op, PlacementPolicy,
    SchedConfig, SchedView, SimOptions, Simulation, TaskSpec, WakeCtx, Workload,
};
use schedlab_topo::CpuId;
use std::sync::Arc;

/// Places on a random allowed CPU (exercises migrations everywhere).
struct RandomCpu(SimRng);
impl PlacementPolicy for RandomCpu {
    fn name(&self) -> String {
        "random".into()
    }
    fn select_task_rq(
        &mut self,
        ctx: &WakeCtx,
        v: &SchedView<'_>,
        _: &mut Hints,
        rec: &mut PlacementRecord,
    ) -> CpuId {
        rec.step = Step::Reference;
        rec.examined = 1;
        let allowed: Vec<CpuId> = v.allowed(ctx.wakee).iter().collect();
        allowed[self.0.next_u64() as usize % allowed.len()]
    }
}

#[derive(Debug, Clone)]
struct Case {
    nodes: usize,
    llcs: usize,
    cores: usize,
    threads: usize,
    class: u8,
    delay_dequeue: bool,
    pending_visible: bool,
    tasks: Vec<Vec<u8>>,
    pin: Vec<Option<usize>>,
    seed: u64,
}

fn case() -> impl Strategy<Value = Case> {
    (
        1usize..=2,
        1usize..=2,
        1usize..=3,
        1usize..=2,
        0u8..3,
        any::<bool>(),
        any::<bool>(),
        1usize..=4,
        any::<u64>(),
    )
        .prop_flat_map(
            |(nodes, llcs, cores, threads, class, dd, pv, ntasks, seed)| {
                let ncpu = nodes * llcs * cores * threads;
                (
                    Just((nodes, llcs, cores, threads, class, dd, pv, seed)),
                    prop::collection::vec(prop::collection::vec(0u8..8, 1..6), ntasks),
                    prop::collection::vec(prop::option::weighted(0.3, 0..ncpu), ntasks),
                )
            },
        )
        .prop_map(
            |(
                (nodes, llcs, cores, threads, class, delay_dequeue, pending_visible, seed),
                tasks,
                pin,
            )| Case {
                nodes,
                llcs,
                cores,
                threads,
                class,
                delay_dequeue,
                pending_visible,
                tasks,
                pin,
                seed,
            },
        )
}

fn build(c: &Case) -> (Arc<schedlab_topo::Topology>, Workload, SchedConfig) {
    let topo = Arc::new(
        schedlab_topo::regular("p", "prop", c.nodes, c.llcs, c.cores, c.threads, true).unwrap(),
    );
    let n = topo.nr_cpus();
    let mut w = Workload::new("prop");
    w.duration_ns = Some(20_000_000);
    let m = w.mutexes(1);
    let spare = w.futex();
    let h = w.hist("h");
    let g = w.global_slot();
    let child = w.spec(TaskSpec::new(
        "child",
        vec![Op::Exec, Op::Compute(Dist::Exp { mean: 20_000 })],
    ));
    // Tasks come in pairs that share one op list with mirrored roles, so every blocking op has
    // a matching partner and runs do not all end in deadlock.
    for (pair, ops) in c.tasks.iter().enumerate() {
        let kind = [ChannelKind::pipe(), ChannelKind::unix(), ChannelKind::tcp()][pair % 3];
        let ab = w.channel(kind, format!("ab{pair}"));
        let ba = w.channel(kind, format!("ba{pair}"));
        let fa = w.futex();
        let fb = w.futex();
        for side in 0..2 {
            let mut prog = vec![Op::Loop(30)];
            for &o in ops {
                match o % 8 {
                    0 => prog.push(Op::Compute(Dist::Exp { mean: 30_000 })),
                    1 => prog.push(Op::Sleep(Dist::Uniform {
                        lo: 1_000,
                        hi: 200_000,
                    })),
                    2 => prog.push(Op::Yield),
                    3 => prog.push(Op::Fork(child)),
                    4 => {
                        prog.push(Op::Lock {
                            lock: LockRef::Fixed(m),
                            spin_ns: 5_000,
                        });
                        prog.push(Op::Compute(Dist::Const(2_000)));
                        prog.push(Op::Unlock(LockRef::Fixed(m)));
                    }
                    5 => prog.push(Op::FutexWake {
                        f: spare,
                        n: WAKE_ALL,
                    }),
                    6 => {
                        let bytes = Dist::Uniform { lo: 1, hi: 3000 };
                        if side == 0 {
                            prog.push(Op::Send { ch: ab, bytes });
                            prog.push(Op::Recv { ch: ba });
                        } else {
                            prog.push(Op::Recv { ch: ab });
                            prog.push(Op::Send { ch: ba, bytes });
                        }
                    }
                    _ => {
                        if side == 0 {
                            prog.push(Op::FutexWake { f: fa, n: 1 });
                            prog.push(Op::FutexWait(fb));
                        } else {
                            prog.push(Op::FutexWait(fa));
                            prog.push(Op::FutexWake { f: fb, n: 1 });
                        }
                    }
                }
            }
            prog.push(Op::Stamp(g));
            prog.push(Op::RecordSince { hist: h, slot: g });
            prog.push(Op::EndLoop);
            prog.push(Op::WaitChildren);
            let i = pair * 2 + side;
            let mut spec = TaskSpec::new(format!("t{i}"), prog);
            spec.nice = (i as i32 % 5) - 2;
            if side == 1 {
                spec.mm = Some(pair as u32);
            }
            if let Some(cpu) = c.pin[pair] {
                spec.affinity = Some(schedlab_topo::CpuSet::from_cpus(n, [cpu].map(CpuId::new)));
            }
            w.spawn(spec);
        }
    }
    let mut cfg = SchedConfig {
        class: [ClassKind::Cfs, ClassKind::Eevdf, ClassKind::O1][c.class as usize],
        ..SchedConfig::default()
    };
    cfg.features.delay_dequeue = c.delay_dequeue;
    cfg.features.ttwu_pending_visible = c.pending_visible;
    (topo, w, cfg)
}

fn run(c: &Case, check: bool) -> (EndReason, u64, u64) {
    let (topo, w, cfg) = build(c);
    let bal = CfsBalancer::new(cfg.tunables.migration_cost_ns, cfg.tunables.tick_ns());
    let mut sim = Simulation::new(
        topo,
        MachineProfile::default(),
        cfg,
        Box::new(RandomCpu(SimRng::seed_from_u64(c.seed))),
        Box::new(bal),
        w,
        SimOptions {
            seed: c.seed,
            check_invariants: check,
            max_events: Some(300_000),
            ..Default::default()
        },
    )
    .unwrap();
    let end = sim.run();
    let counters = sim.counters();
    assert_eq!(counters.cpu_time_ns(), counters.elapsed_ns * sim_cpus(&sim));
    (end, sim.event_hash(), counters.events)
}

fn sim_cpus(sim: &Simulation) -> u64 {
    sim.counters().busy_ns.len() as u64
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, .. ProptestConfig::default() })]

    #[test]
    fn invariants_hold_and_runs_replay(c in case()) {
        let (end, hash, events) = run(&c, true);
        prop_assert!(events > 0);
        if std::env::var("PROPS_VERBOSE").is_ok() { eprintln!("end={end:?} events={events}"); }
        prop_assert!(!matches!(end, EndReason::EventLimit), "runaway: {events} events");
        prop_assert!(!matches!(end, EndReason::Deadlock(_)), "paired workloads cannot deadlock: {end:?}");
        let (end2, hash2, _) = run(&c, false);
        prop_assert_eq!(end, end2);
        prop_assert_eq!(hash, hash2);
    }
}
