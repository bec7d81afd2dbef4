//! Integration tests of per-task accounting that benchmarks report: the user/system split of
//! CPU time, the first-touch home node of a task that execs, and O(1) timeslice expiry.

use schedlab_engine::policy::PrevCpu;
use schedlab_engine::{
    ClassKind, Dist, EndReason, MachineProfile, NoBalance, Op, SchedConfig, SimOptions, Simulation,
    TaskSpec, Workload,
};
use schedlab_topo::CpuId;
use schedlab_topo::{CpuSet, Topology};
use std::sync::Arc;

/// Two nodes of two CPUs (distance 10/20).
fn two_nodes() -> Arc<Topology> {
    Arc::new(schedlab_topo::regular("2n2c", "test", 2, 1, 2, 1, false).unwrap())
}

/// Sends every exec to CPU `to`; everything else stays on prev.
struct ExecTo(CpuId);
impl schedlab_engine::PlacementPolicy for ExecTo {
    fn name(&self) -> String {
        "exec-to".into()
    }
    fn select_task_rq(
        &mut self,
        ctx: &schedlab_engine::WakeCtx,
        _: &schedlab_engine::SchedView<'_>,
        _: &mut schedlab_engine::policy::Hints,
        _: &mut schedlab_engine::PlacementRecord,
    ) -> CpuId {
        if ctx.is_exec() { self.0 } else { ctx.prev_cpu }
    }
}

fn sim(
    w: Workload,
    cfg: SchedConfig,
    policy: Box<dyn schedlab_engine::PlacementPolicy>,
) -> Simulation {
    let mut profile = MachineProfile::default();
    profile.cpu.jitter = 0.0;
    profile.cpu.remote_memory_slowdown = 0.5;
    Simulation::new(
        two_nodes(),
        profile,
        cfg,
        policy,
        Box::new(NoBalance),
        w,
        SimOptions {
            check_invariants: true,
            ..Default::default()
        },
    )
    .unwrap()
}

/// A parent on CPU 0 forks one memory-bound child that execs and computes 10 ms.
fn exec_child(mem_intensity: f64) -> Workload {
    let mut w = Workload::new("exec");
    let mut child = TaskSpec::new(
        "child",
        vec![Op::Exec, Op::Compute(Dist::Const(10_000_000))],
    );
    child.mem_intensity = mem_intensity;
    let child = w.spec(child);
    let mut parent = TaskSpec::new("parent", vec![Op::Fork(child), Op::WaitChildren]);
    parent.affinity = Some(CpuSet::from_cpus(4, [0].map(CpuId::new)));
    w.spawn(parent);
    w
}

fn stat(sim: &Simulation, comm: &str) -> schedlab_engine::sim::TaskStat {
    sim.task_stats()
        .into_iter()
        .find(|t| t.comm == comm)
        .unwrap()
}

#[test]
fn user_time_is_the_compute_work_and_exec_is_system_time() {
    let mut s = sim(exec_child(0.0), SchedConfig::default(), Box::new(PrevCpu));
    assert_eq!(s.run(), EndReason::AllExited);
    let c = stat(&s, "child");
    assert_eq!(c.user_ns, 10_000_000);
    // The rest of the child's CPU time is the exec (100 µs by default) and switch costs.
    let sys = c.sum_exec_ns - c.user_ns;
    assert!((100_000..200_000).contains(&sys), "system {sys} ns");
    // The parent only forks and waits: its user time is the refetch of its 32 KiB working
    // set when it wakes (at most 512 lines at the LLC cost).
    let p = stat(&s, "parent").user_ns;
    assert!(p > 0 && p <= 512 * 15, "parent user {p} ns");
}

#[test]
fn exec_rehomes_a_first_touch_task_where_it_runs_after_the_exec() {
    // Forked on CPU 0 (node 0), the exec moves the child to CPU 2 (node 1). Its new image's
    // memory is first touched there, so its compute runs at home speed.
    let mut s = sim(
        exec_child(1.0),
        SchedConfig::default(),
        Box::new(ExecTo(CpuId::new(2))),
    );
    assert_eq!(s.run(), EndReason::AllExited);
    let c = stat(&s, "child");
    assert_eq!(c.nr_migrations, 1);
    assert_eq!(c.user_ns, 10_000_000);
    // A home node fixed on node 0 (not first touch) pays the remote slowdown on node 1.
    let mut w = exec_child(1.0);
    w.specs[0].home_node = Some(0);
    let mut s = sim(w, SchedConfig::default(), Box::new(ExecTo(CpuId::new(2))));
    assert_eq!(s.run(), EndReason::AllExited);
    assert_eq!(stat(&s, "child").user_ns, 15_000_000);
}

#[test]
fn o1_cpu_bound_tasks_rotate_once_per_timeslice_not_every_tick() {
    // Two CPU-bound tasks share CPU 0 for 1 s each under the O(1) class: ~100 ms timeslices
    // give about 20 switches; a slice that is never refilled switches at every 1 ms tick.
    let mut w = Workload::new("o1");
    for name in ["a", "b"] {
        let mut t = TaskSpec::new(
            name,
            vec![
                Op::Loop(1000),
                Op::Compute(Dist::Const(1_000_000)),
                Op::EndLoop,
            ],
        );
        t.affinity = Some(CpuSet::from_cpus(4, [0].map(CpuId::new)));
        w.spawn(t);
    }
    let cfg = SchedConfig {
        class: ClassKind::O1,
        ..SchedConfig::default()
    };
    let mut s = sim(w, cfg, Box::new(PrevCpu));
    assert_eq!(s.run(), EndReason::AllExited);
    let inv: u64 = s.task_stats().iter().map(|t| t.nr_involuntary).sum();
    assert!((10..=40).contains(&inv), "{inv} involuntary switches");
}

/// A sender pinned to CPU 2 (node 1) writes 1,000 messages over a UNIX socket to a reader
/// pinned to CPU 3 (node 1); the sender's home node is `home`.
fn remote_sender(mem_intensity: f64, home: usize) -> Workload {
    let mut w = Workload::new("remote-sender");
    let ch = w.channel(schedlab_engine::ChannelKind::unix(), "s");
    let mut snd = TaskSpec::new(
        "sender",
        vec![
            Op::Loop(1000),
            Op::Send {
                ch,
                bytes: Dist::Const(100),
            },
            Op::EndLoop,
        ],
    );
    snd.mem_intensity = mem_intensity;
    snd.home_node = Some(home);
    snd.affinity = Some(CpuSet::from_cpus(4, [2].map(CpuId::new)));
    let mut rcv = TaskSpec::new(
        "receiver",
        vec![Op::Loop(1000), Op::Recv { ch }, Op::EndLoop],
    );
    rcv.affinity = Some(CpuSet::from_cpus(4, [3].map(CpuId::new)));
    w.spawn(snd);
    w.spawn(rcv);
    w
}

#[test]
fn socket_kernel_work_pays_the_remote_memory_factor_off_the_home_node() {
    let sender_cpu = |mi: f64, home: usize| {
        let mut s = sim(
            remote_sender(mi, home),
            SchedConfig::default(),
            Box::new(PrevCpu),
        );
        assert_eq!(s.run(), EndReason::AllExited);
        stat(&s, "sender").sum_exec_ns
    };
    // Memory-bound, away from home (node 0, one distance step): each send's kernel work
    // (`unix_op_ns`, 1.2 µs by default) runs 1 + 0.5 × 1 × 1 = 1.5x slower: 1,000 × 0.6 µs
    // more CPU than at home, and a little more for the wakeups the slower pace changes
    // (the reader finds the socket empty more often).
    let (away, at_home, plain) = (sender_cpu(1.0, 0), sender_cpu(1.0, 1), sender_cpu(0.0, 0));
    let scaled = 1000.0 * 0.5 * MachineProfile::default().transfer.unix_op_ns as f64;
    let extra = away as f64 - at_home as f64;
    assert!(
        (scaled..1.25 * scaled).contains(&extra),
        "away {away} ns, at home {at_home} ns, scaled kernel work {scaled} ns"
    );
    // No memory intensity: where the home is does not matter.
    assert_eq!(
        plain, at_home,
        "intensity 0 {plain} ns, at home {at_home} ns"
    );
}
