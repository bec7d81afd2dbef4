//! Hand-built machine states and one-call decisions, shared by decisions.rs (the table of
//! rows and its snapshot) and decision_details.rs (records and hints that need more).

use super::fake::FakeMachine;
use schedlab_engine::policy::{Affine, Hints, Step, WakeFlags, wake_flags};
use schedlab_engine::task::TaskId;
use schedlab_engine::{PlacementRecord, WakeCtx};
use schedlab_policies::{LinuxPolicy, settings};
use schedlab_topo::{CpuId, Topology, regular};

pub const W: TaskId = TaskId::new(0); // the waker task
pub const P: TaskId = TaskId::new(1); // the wakee
pub const NOW: u64 = 10_000_000_000;
pub const TTWU: WakeFlags = wake_flags::TTWU;
pub const SYNC: WakeFlags = wake_flags::SYNC.union(wake_flags::TTWU);

pub fn smt8() -> Topology {
    // 4 cores x 2 threads, one LLC; siblings i and i+4.
    regular("smt8", "test", 1, 1, 4, 2, true).unwrap()
}
pub fn flat(n: usize) -> Topology {
    regular("flat", "test", 1, 1, n, 1, false).unwrap()
}
pub fn c2q() -> Topology {
    // core2quad: LLCs {0,1} and {2,3}.
    regular("c2q", "test", 1, 2, 2, 1, false).unwrap()
}
pub fn two_nodes(cores: usize) -> Topology {
    regular("2n", "test", 2, 1, cores, 1, false).unwrap()
}
pub fn one_node_two_llcs() -> Topology {
    regular("1n2l", "test", 1, 2, 4, 1, false).unwrap()
}
pub fn two_nodes_smt() -> Topology {
    // cores 0..3, core c = {c, c+4}; node 0 = {0,1,4,5}, node 1 = {2,3,6,7}.
    regular("2n-smt", "test", 2, 1, 2, 2, true).unwrap()
}
pub fn kunpeng() -> Topology {
    schedlab_topo::preset("kunpeng920-2n").unwrap()
}

pub fn wake(this: usize, prev: usize, flags: WakeFlags) -> WakeCtx {
    WakeCtx {
        now: NOW,
        wakee: P,
        waker: Some(W),
        waker_cpu: CpuId::new(this),
        prev_cpu: CpuId::new(prev),
        flags,
    }
}
/// A timer/IRQ wakeup handled on `cpu`.
pub fn irq(cpu: usize, prev: usize) -> WakeCtx {
    WakeCtx {
        now: NOW,
        wakee: P,
        waker: None,
        waker_cpu: CpuId::new(cpu),
        prev_cpu: CpuId::new(prev),
        flags: TTWU,
    }
}

pub type Setup = Box<dyn Fn(&mut FakeMachine, &mut Hints)>;

pub fn busy(cpus: &'static [usize], nr: u32) -> Setup {
    Box::new(move |m, _| {
        m.busy(cpus.iter().copied().map(CpuId::new), nr);
    })
}

pub fn and(a: Setup, b: Setup) -> Setup {
    Box::new(move |m, h| {
        a(m, h);
        b(m, h);
    })
}

pub fn flips(waker: u32, wakee: u32) -> Setup {
    Box::new(move |_, h| {
        h.task[W].wakee_flips = waker;
        h.task[W].wakee_flip_decay_ts = NOW;
        h.task[W].last_wakee = Some(P);
        h.task[P].wakee_flips = wakee;
        h.task[P].wakee_flip_decay_ts = NOW;
    })
}

pub fn f(g: impl Fn(&mut FakeMachine, &mut Hints) + 'static) -> Setup {
    Box::new(g)
}

/// Builds the state, runs the variant's decision, returns (cpu, record, hints, machine);
/// the tables name CPUs by number, so the CPU comes back as one.
pub fn run(
    variant: &str,
    topo: Topology,
    setup: &Setup,
    ctx: WakeCtx,
) -> (usize, PlacementRecord, Hints, FakeMachine) {
    let s = settings(variant).unwrap_or_else(|e| panic!("{variant}: {e}"));
    let mut m = FakeMachine::new(topo, s.config.domain_era, 2);
    let mut h = m.hints();
    setup(&mut m, &mut h);
    let mut pol = LinuxPolicy::new(s, variant);
    let mut rec = PlacementRecord::default();
    let cpu = pol.select(&ctx, &m, &mut h, &mut rec);
    (cpu.index(), rec, h, m)
}

/// The one helper every table row goes through.
pub fn check(
    variant: &str,
    topo: Topology,
    setup: &Setup,
    ctx: WakeCtx,
    cpu: usize,
    step: Step,
) -> (PlacementRecord, Hints) {
    let (got, rec, h, _) = run(variant, topo, setup, ctx);
    assert_eq!(
        (got, rec.step),
        (cpu, step),
        "{variant}: got cpu {got}, record: {rec}"
    );
    (rec, h)
}
