//! Small workloads built with the engine API, shared by the simulation tests.

#![allow(dead_code, unused_imports)]

pub mod decide;
pub mod fake;

use schedlab_engine::{
    ChannelKind, Dist, EndReason, MachineProfile, Op, SimOptions, Simulation, TaskSpec, Workload,
};
use schedlab_policies::build;
use schedlab_topo::Topology;
use std::sync::Arc;

/// hackbench-like: a main task forks `groups` groups of `n` senders and `n` receivers; each
/// sender writes `loops` 100-byte messages to every receiver of its group, then all exit.
pub fn hackbench(groups: usize, n: usize, loops: u64) -> Workload {
    let mut w = Workload::new("hackbench-mini");
    let mut specs = Vec::new();
    for g in 0..groups {
        // One-page pipes so that senders block and wake each other (4 KiB = 40 messages).
        let small = ChannelKind::Pipe {
            pages: 1,
            page_bytes: 4096,
        };
        let chans: Vec<usize> = (0..n)
            .map(|r| w.channel(small, format!("g{g}-r{r}")))
            .collect();
        for s in 0..n {
            let mut prog = vec![Op::Loop(loops)];
            for &ch in &chans {
                prog.push(Op::Send {
                    ch,
                    bytes: Dist::Const(100),
                });
            }
            prog.push(Op::EndLoop);
            specs.push(w.spec(TaskSpec::new(format!("snd{g}.{s}"), prog)));
        }
        for (r, &ch) in chans.iter().enumerate() {
            let prog = vec![
                Op::Loop(loops * n as u64),
                Op::Recv { ch },
                Op::Compute(Dist::Const(2_000)),
                Op::EndLoop,
            ];
            specs.push(w.spec(TaskSpec::new(format!("rcv{g}.{r}"), prog)));
        }
    }
    let mut main: Vec<Op> = specs.iter().map(|&s| Op::Fork(s)).collect();
    main.push(Op::WaitChildren);
    w.spawn(TaskSpec::new("hackbench", main));
    w
}

/// A pipe ping-pong pair plus a periodic timer task (timer wakeups, no waker).
pub fn pingpong_and_timer(loops: u64) -> Workload {
    let mut w = Workload::new("pingpong-mini");
    let a = w.channel(ChannelKind::pipe(), "a");
    let b = w.channel(ChannelKind::pipe(), "b");
    w.spawn(TaskSpec::new(
        "ping",
        vec![
            Op::Loop(loops),
            Op::Send {
                ch: a,
                bytes: Dist::Const(8),
            },
            Op::Recv { ch: b },
            Op::EndLoop,
        ],
    ));
    w.spawn(TaskSpec::new(
        "pong",
        vec![
            Op::Loop(loops),
            Op::Recv { ch: a },
            Op::Compute(Dist::Const(5_000)),
            Op::Send {
                ch: b,
                bytes: Dist::Const(8),
            },
            Op::EndLoop,
        ],
    ));
    w.spawn(TaskSpec::new(
        "tick",
        vec![
            Op::Loop(20),
            Op::Sleep(Dist::Const(300_000)),
            Op::Compute(Dist::Const(50_000)),
            Op::EndLoop,
        ],
    ));
    w
}

/// A simulation of `workload` under `variant` on `topo`, the policy seeded like the run
/// (`opts.seed`); panics with the variant name if it cannot be built.
pub fn simulation(
    variant: &str,
    topo: &Arc<Topology>,
    workload: Workload,
    opts: SimOptions,
) -> Simulation {
    let b = build(variant, topo, opts.seed).unwrap_or_else(|e| panic!("{variant}: {e}"));
    Simulation::new(
        topo.clone(),
        MachineProfile::default(),
        b.config,
        b.policy,
        b.balancer,
        workload,
        opts,
    )
    .unwrap_or_else(|e| panic!("{variant}: {e}"))
}

/// Runs `workload` under `variant` on `topo`; panics with the variant name if it does not
/// complete.
pub fn run(
    variant: &str,
    topo: &Arc<Topology>,
    workload: Workload,
    check: bool,
    seed: u64,
) -> Simulation {
    let opts = SimOptions {
        seed,
        check_invariants: check,
        max_events: Some(5_000_000),
        ..Default::default()
    };
    let mut sim = simulation(variant, topo, workload, opts);
    let end = sim.run();
    assert_eq!(
        end,
        EndReason::AllExited,
        "{variant} on {}: {end:?}",
        topo.name
    );
    sim
}
