//! Fixed scenarios for measuring the simulator's own speed (`schedlab bench`).
//!
//! Each scenario is a topology plus a workload built directly with the engine API, so the
//! figures measure the engine, not a workload model. The caller supplies the policy (the
//! CLI uses a current-era preset) and reads events/s, context switches/s and simulated
//! seconds per wall second from the run.

use crate::dist::Dist;
use crate::ipc::ChannelKind;
use crate::task::{Op, TaskSpec, Workload};
use crate::time::NSEC_PER_SEC;
use schedlab_topo::Topology;

/// A named benchmark scenario.
pub struct Scenario {
    /// Name printed in the table.
    pub name: &'static str,
    /// What it exercises.
    pub about: &'static str,
    /// The machine.
    pub topo: Topology,
    /// The workload.
    pub workload: Workload,
    /// The speed target of issue 3 this scenario is held to, if any.
    pub target: Option<Target>,
}

/// A speed target, measured on one core of the development machine (thread CPU time).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    /// At least this many events per CPU second (the small scenarios: 10 M).
    EventsPerSec(f64),
    /// The whole run in under this many CPU seconds (hackbench 400 x 400: 20 s).
    CpuSecondsBelow(f64),
}

/// Target of the small scenarios (issue 3: one pipe pair, 16/32/64 pairs on 16 CPUs).
const SMALL: Option<Target> = Some(Target::EventsPerSec(10e6));

/// `n` ping-pong pairs over pipes, each side computing `burst_ns` per message, running for
/// `duration_ns` (or `loops` round trips when `duration_ns` is None).
pub fn pingpong_pairs(n: usize, burst_ns: u64, loops: u64, duration_ns: Option<u64>) -> Workload {
    let mut w = Workload::new(format!("pingpong x{n}"));
    w.duration_ns = duration_ns;
    for i in 0..n {
        let a = w.channel(ChannelKind::pipe(), format!("p{i}a"));
        let b = w.channel(ChannelKind::pipe(), format!("p{i}b"));
        let burst = if burst_ns > 0 {
            vec![Op::Compute(Dist::Const(burst_ns))]
        } else {
            vec![]
        };
        let mut pa = vec![
            Op::Loop(loops),
            Op::Send {
                ch: a,
                bytes: Dist::Const(4),
            },
            Op::Recv { ch: b },
        ];
        pa.extend(burst.clone());
        pa.push(Op::EndLoop);
        let mut pb = vec![Op::Loop(loops), Op::Recv { ch: a }];
        pb.extend(burst);
        pb.push(Op::Send {
            ch: b,
            bytes: Dist::Const(4),
        });
        pb.push(Op::EndLoop);
        w.spawn(TaskSpec::new(format!("ping{i}"), pa));
        w.spawn(TaskSpec::new(format!("pong{i}"), pb));
    }
    w
}

/// hackbench-like all-to-all: `groups` × (20 senders → 20 receivers over unix sockets),
/// `loops` rounds of 100-byte messages.
pub fn hackbench_like(groups: usize, loops: u64) -> Workload {
    const F: usize = 20;
    let mut w = Workload::new(format!("hackbench-like g{groups} l{loops}"));
    let start = w.barrier((groups * 2 * F) as u32);
    for g in 0..groups {
        let chans: Vec<usize> = (0..F)
            .map(|j| w.channel(ChannelKind::unix(), format!("g{g}r{j}")))
            .collect();
        for (j, &ch) in chans.iter().enumerate() {
            w.spawn(TaskSpec::new(
                format!("hb-r{g}.{j}"),
                vec![
                    Op::Barrier(start),
                    Op::Loop(loops * F as u64),
                    Op::Recv { ch },
                    Op::EndLoop,
                ],
            ));
        }
        for s in 0..F {
            let mut prog = vec![Op::Barrier(start), Op::Loop(loops)];
            for &ch in &chans {
                prog.push(Op::Send {
                    ch,
                    bytes: Dist::Const(100),
                });
            }
            prog.push(Op::EndLoop);
            w.spawn(TaskSpec::new(format!("hb-s{g}.{s}"), prog));
        }
    }
    w
}

fn regular(nodes: usize, llcs: usize, cores: usize, threads: usize) -> Topology {
    schedlab_topo::regular("bench", "bench scenario", nodes, llcs, cores, threads, true)
        .expect("bench topologies are valid")
}

/// The scenarios of issue 3 item 9, in order.
pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "pipe-pair-2cpu",
            about: "one pipe ping-pong pair on 2 CPUs, 200k round trips",
            topo: regular(1, 1, 2, 1),
            workload: pingpong_pairs(1, 0, 200_000, None),
            target: SMALL,
        },
        Scenario {
            name: "pairs16-16cpu",
            about: "16 ping-pong pairs, 10 us bursts, 16 CPUs, 1 simulated s",
            topo: regular(1, 1, 8, 2),
            workload: pingpong_pairs(16, 10_000, u64::MAX, Some(NSEC_PER_SEC)),
            target: SMALL,
        },
        Scenario {
            name: "pairs32-16cpu",
            about: "32 ping-pong pairs, 10 us bursts, 16 CPUs, 1 simulated s",
            topo: regular(1, 1, 8, 2),
            workload: pingpong_pairs(32, 10_000, u64::MAX, Some(NSEC_PER_SEC)),
            target: SMALL,
        },
        Scenario {
            name: "pairs64-16cpu",
            about: "64 ping-pong pairs, 10 us bursts, 16 CPUs, 1 simulated s",
            topo: regular(1, 1, 8, 2),
            workload: pingpong_pairs(64, 10_000, u64::MAX, Some(NSEC_PER_SEC)),
            target: SMALL,
        },
        Scenario {
            name: "pairs100-48cpu",
            about: "100 ping-pong pairs, 10 us bursts, 2x12c SMT-2, 0.5 simulated s",
            topo: regular(2, 1, 12, 2),
            workload: pingpong_pairs(100, 10_000, u64::MAX, Some(NSEC_PER_SEC / 2)),
            target: None,
        },
        Scenario {
            name: "hackbench-80cpu",
            about: "hackbench-like all-to-all, 40 groups x 100 loops, 4x10c SMT-2",
            topo: regular(4, 1, 10, 2),
            workload: hackbench_like(40, 100),
            target: None,
        },
        Scenario {
            name: "pairs1000-256cpu",
            about: "1000 ping-pong pairs, 10 us bursts, 2x64c SMT-2 (LLC of 8 cores), 0.2 simulated s",
            topo: regular(2, 8, 8, 2),
            workload: pingpong_pairs(1000, 10_000, u64::MAX, Some(NSEC_PER_SEC / 5)),
            target: None,
        },
    ]
}

/// The large target of issue 3: hackbench 400 groups × 400 loops on 80 CPUs.
pub fn hackbench_400() -> Scenario {
    Scenario {
        name: "hackbench-400x400-80cpu",
        about: "hackbench-like 400 groups x 400 loops on 4x10c SMT-2 (64 M messages)",
        topo: regular(4, 1, 10, 2),
        workload: hackbench_like(400, 400),
        target: Some(Target::CpuSecondsBelow(20.0)),
    }
}
