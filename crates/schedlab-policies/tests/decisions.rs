//! Data-driven decision tests: every era's select_task_rq on small hand-built machine states
//! ([`FakeMachine`]), checking the chosen CPU, the step that found it and the affine verdict.
//! Each expectation was derived by hand from linux-wakeup.md's pseudo-code; the comment on a
//! case gives the deciding numbers. Includes the worked examples of §12.4.

use schedlab_engine::policy::{Affine, Hints, Step, wake_flags};
use schedlab_engine::{PlacementRecord, WakeCtx};
use schedlab_policies::machine::FakeMachine;
use schedlab_policies::{LinuxPolicy, settings};
use schedlab_topo::{Topology, regular};

const W: usize = 0; // the waker task
const P: usize = 1; // the wakee
const NOW: u64 = 10_000_000_000;
const TTWU: u32 = wake_flags::TTWU;
const SYNC: u32 = wake_flags::SYNC | wake_flags::TTWU;

fn smt8() -> Topology {
    // 4 cores x 2 threads, one LLC; siblings i and i+4.
    regular("smt8", "test", 1, 1, 4, 2, true).unwrap()
}
fn flat(n: usize) -> Topology {
    regular("flat", "test", 1, 1, n, 1, false).unwrap()
}
fn c2q() -> Topology {
    // core2quad: LLCs {0,1} and {2,3}.
    regular("c2q", "test", 1, 2, 2, 1, false).unwrap()
}
fn two_nodes(cores: usize) -> Topology {
    regular("2n", "test", 2, 1, cores, 1, false).unwrap()
}
fn one_node_two_llcs() -> Topology {
    regular("1n2l", "test", 1, 2, 4, 1, false).unwrap()
}
fn two_nodes_smt() -> Topology {
    // cores 0..3, core c = {c, c+4}; node 0 = {0,1,4,5}, node 1 = {2,3,6,7}.
    regular("2n-smt", "test", 2, 1, 2, 2, true).unwrap()
}
fn kunpeng() -> Topology {
    schedlab_topo::preset("kunpeng920-2n").unwrap()
}

fn wake(this: usize, prev: usize, flags: u32) -> WakeCtx {
    WakeCtx {
        now: NOW,
        wakee: P,
        waker: Some(W),
        waker_cpu: this,
        prev_cpu: prev,
        flags,
    }
}
/// A timer/IRQ wakeup handled on `cpu`.
fn irq(cpu: usize, prev: usize) -> WakeCtx {
    WakeCtx {
        now: NOW,
        wakee: P,
        waker: None,
        waker_cpu: cpu,
        prev_cpu: prev,
        flags: TTWU,
    }
}

type Setup = Box<dyn Fn(&mut FakeMachine, &mut Hints)>;

struct Case {
    name: &'static str,
    variant: &'static str,
    topo: fn() -> Topology,
    setup: Setup,
    ctx: WakeCtx,
    cpu: usize,
    step: Step,
    affine: Option<Affine>,
}

fn busy(cpus: &'static [usize], nr: u32) -> Setup {
    Box::new(move |m, _| {
        m.busy(cpus.iter().copied(), nr);
    })
}

fn and(a: Setup, b: Setup) -> Setup {
    Box::new(move |m, h| {
        a(m, h);
        b(m, h);
    })
}

fn flips(waker: u32, wakee: u32) -> Setup {
    Box::new(move |_, h| {
        h.task[W].wakee_flips = waker;
        h.task[W].wakee_flip_decay_ts = NOW;
        h.task[W].last_wakee = Some(P);
        h.task[P].wakee_flips = wakee;
        h.task[P].wakee_flip_decay_ts = NOW;
    })
}

fn f(g: impl Fn(&mut FakeMachine, &mut Hints) + 'static) -> Setup {
    Box::new(g)
}

/// Builds the state, runs the variant's decision, returns (cpu, record, hints, machine).
fn run(
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
    (cpu, rec, h, m)
}

/// The one helper every table row goes through.
fn check(
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

fn cases() -> Vec<Case> {
    vec![
        // ---------------- 2.5.59 (§10.0) ----------------
        Case {
            name: "o1 sync pulls to the waker",
            variant: "linux-2.5.59",
            topo: || two_nodes(2),
            setup: busy(&[0, 2], 1),
            ctx: wake(0, 2, SYNC),
            cpu: 0,
            step: Step::O1Rule,
            affine: Some(Affine::PulledSync),
        },
        Case {
            name: "o1 plain wakeup stays on prev",
            variant: "linux-2.5.59",
            topo: || two_nodes(2),
            setup: busy(&[0, 2], 1),
            ctx: wake(0, 2, TTWU),
            cpu: 2,
            step: Step::O1Rule,
            affine: Some(Affine::NotAsked),
        },
        Case {
            name: "o1 fork stays on the parent's cpu",
            variant: "linux-2.5.59,ingoB0",
            topo: || two_nodes(2),
            setup: busy(&[1], 3),
            ctx: wake(1, 1, wake_flags::FORK),
            cpu: 1,
            step: Step::O1Rule,
            affine: None,
        },
        // exec: prev runs 3 (>2); node loads 4 vs 2 -> node 1, its least loaded CPU 3.
        Case {
            name: "o1 exec balances to the least loaded node",
            variant: "linux-2.5.59",
            topo: || two_nodes(2),
            setup: and(and(busy(&[0], 3), busy(&[1], 1)), busy(&[2], 2)),
            ctx: wake(0, 0, wake_flags::EXEC),
            cpu: 3,
            step: Step::O1Rule,
            affine: None,
        },
        // ---------------- 2.6.30 (§3.1, §4.1) ----------------
        // PKG imb 112: sync tl = 0 -> 100*1024 <= 112*1024.
        Case {
            name: "2.6.30 sync wake_affine pulls",
            variant: "linux-2.6.30",
            topo: c2q,
            setup: busy(&[0, 2], 1),
            ctx: wake(0, 2, SYNC),
            cpu: 0,
            step: Step::Target,
            affine: Some(Affine::PulledSync),
        },
        // avg_overlap 1 ms > 0.5 ms drops sync: 204800 > 114688, per-task clause fails, no passive.
        Case {
            name: "2.6.30 long overlap drops sync",
            variant: "linux-2.6.30",
            topo: c2q,
            setup: and(
                busy(&[0, 2], 1),
                f(|m, _| m.tasks[W].avg_overlap = 1_000_000),
            ),
            ctx: wake(0, 2, SYNC),
            cpu: 2,
            step: Step::Fallback,
            affine: Some(Affine::KeptWeight),
        },
        // heavy wakee (weight 9548) fails wake_affine; passive 112*1024 <= 100*1536 pulls.
        Case {
            name: "2.6.30 passive balancing",
            variant: "linux-2.6.30",
            topo: c2q,
            setup: and(
                busy(&[0, 2], 1),
                f(|m, _| {
                    m.tasks[P].weight = 9548;
                    m.load(2, 1536);
                }),
            ),
            ctx: wake(0, 2, TTWU),
            cpu: 0,
            step: Step::Target,
            affine: Some(Affine::PulledWeight),
        },
        Case {
            name: "2.6.30 wake_idle takes an idle SMT sibling",
            variant: "linux-2.6.30",
            topo: smt8,
            setup: busy(&[1], 1),
            ctx: irq(1, 1),
            cpu: 5,
            step: Step::IdleSmt,
            affine: None,
        },
        Case {
            name: "2.6.30 NO_SELECT_IDLE_SIBLING",
            variant: "linux-2.6.30,NO_SELECT_IDLE_SIBLING",
            topo: smt8,
            setup: busy(&[1], 1),
            ctx: irq(1, 1),
            cpu: 1,
            step: Step::Target,
            affine: None,
        },
        // ---------------- 2.6.32 / 2.6.33 (§3.2, §4.2, §6.1) ----------------
        Case {
            name: "2.6.32 idle prev beats the waker",
            variant: "linux-2.6.32",
            topo: c2q,
            setup: busy(&[0, 1, 3], 1),
            ctx: wake(0, 2, TTWU),
            cpu: 2,
            step: Step::PrevIdle,
            affine: Some(Affine::KeptIdle),
        },
        // package-wide scan finds 1; wake_affine on the waker's load (1024) fails.
        Case {
            name: "2.6.32 idle sibling found, wake_affine fails",
            variant: "linux-2.6.32",
            topo: c2q,
            setup: busy(&[0, 2, 3], 1),
            ctx: wake(0, 2, TTWU),
            cpu: 2,
            step: Step::Target,
            affine: Some(Affine::KeptWeight),
        },
        Case {
            name: "2.6.32 AFFINE_TARGET weighs the idle target",
            variant: "linux-2.6.32,AFFINE_TARGET",
            topo: c2q,
            setup: busy(&[0, 2, 3], 1),
            ctx: wake(0, 2, TTWU),
            cpu: 1,
            step: Step::IdleCpu,
            affine: Some(Affine::PulledWeight),
        },
        Case {
            name: "2.6.32 sync pull",
            variant: "linux-2.6.32",
            topo: c2q,
            setup: busy(&[0, 1, 2, 3], 1),
            ctx: wake(0, 2, SYNC),
            cpu: 0,
            step: Step::Target,
            affine: Some(Affine::PulledSync),
        },
        Case {
            name: "2.6.32 NO_AFFINE_WAKEUPS",
            variant: "linux-2.6.32,NO_AFFINE_WAKEUPS",
            topo: c2q,
            setup: busy(&[0, 1, 2, 3], 1),
            ctx: wake(0, 2, SYNC),
            cpu: 2,
            step: Step::Target,
            affine: Some(Affine::Declined),
        },
        Case {
            name: "2.6.33 LLC scan finds 1, wake_affine fails",
            variant: "linux-2.6.33",
            topo: c2q,
            setup: busy(&[0, 2, 3], 1),
            ctx: wake(0, 2, TTWU),
            cpu: 2,
            step: Step::Target,
            affine: Some(Affine::KeptWeight),
        },
        Case {
            name: "2.6.33 RAMP: waker alone, idle sibling is affine at once",
            variant: "linux-2.6.33,RAMP",
            topo: c2q,
            setup: busy(&[0, 2, 3], 1),
            ctx: wake(0, 2, TTWU),
            cpu: 1,
            step: Step::IdleCpu,
            affine: Some(Affine::PulledSibling),
        },
        Case {
            name: "2.6.33 RAMP: busy waker CPU, no search",
            variant: "linux-2.6.33,RAMP",
            topo: c2q,
            setup: and(busy(&[2, 3], 1), busy(&[0], 2)),
            ctx: wake(0, 2, TTWU),
            cpu: 2,
            step: Step::Target,
            affine: Some(Affine::KeptWeight),
        },
        Case {
            name: "2.6.33 SYNC_LESS drops sync on long overlap",
            variant: "linux-2.6.33",
            topo: c2q,
            setup: and(
                busy(&[0, 1, 2, 3], 1),
                f(|m, _| m.tasks[W].avg_overlap = 1_000_000),
            ),
            ctx: wake(0, 2, SYNC),
            cpu: 2,
            step: Step::Target,
            affine: Some(Affine::KeptWeight),
        },
        Case {
            name: "2.6.33 NO_SYNC_LESS keeps sync",
            variant: "linux-2.6.33,NO_SYNC_LESS",
            topo: c2q,
            setup: and(
                busy(&[0, 1, 2, 3], 1),
                f(|m, _| m.tasks[W].avg_overlap = 1_000_000),
            ),
            ctx: wake(0, 2, SYNC),
            cpu: 0,
            step: Step::Target,
            affine: Some(Affine::PulledSync),
        },
        Case {
            name: "2.6.33 plain wakeup not pulled",
            variant: "linux-2.6.33",
            topo: c2q,
            setup: busy(&[0, 1, 2, 3], 1),
            ctx: wake(0, 2, TTWU),
            cpu: 2,
            step: Step::Target,
            affine: Some(Affine::KeptWeight),
        },
        Case {
            name: "2.6.33 SYNC_MORE makes short-overlap wakeups sync",
            variant: "linux-2.6.33,SYNC_MORE",
            topo: c2q,
            setup: busy(&[0, 1, 2, 3], 1),
            ctx: wake(0, 2, TTWU),
            cpu: 0,
            step: Step::Target,
            affine: Some(Affine::PulledSync),
        },
        // ---------------- 2.6.35 (§6.2) ----------------
        // wake_affine keeps prev 5 (3072 vs 1024); SMT {1,5} busy, then MC's first idle CPU 3.
        Case {
            name: "2.6.35 first idle CPU of the LLC around prev",
            variant: "linux-2.6.35",
            topo: smt8,
            setup: and(busy(&[1, 2, 4, 5, 6, 7], 1), busy(&[0], 2)),
            ctx: wake(0, 5, TTWU),
            cpu: 3,
            step: Step::IdleCpu,
            affine: Some(Affine::KeptWeight),
        },
        // ---------------- 3.6 idle_buddy (§6.4) ----------------
        Case {
            name: "3.6 MC buddy of 1 is 0",
            variant: "linux-3.6",
            topo: smt8,
            setup: busy(&[1, 5], 1),
            ctx: irq(1, 1),
            cpu: 0,
            step: Step::IdleBuddy,
            affine: Some(Affine::NotAsked),
        },
        Case {
            name: "3.6 SMT buddy of 1 is 5",
            variant: "linux-3.6",
            topo: smt8,
            setup: busy(&[0, 1], 1),
            ctx: irq(1, 1),
            cpu: 5,
            step: Step::IdleBuddy,
            affine: Some(Affine::NotAsked),
        },
        Case {
            name: "3.6 buddies busy: idle CPUs 2,3,4,6,7 are missed",
            variant: "linux-3.6",
            topo: smt8,
            setup: busy(&[0, 1, 5], 1),
            ctx: irq(1, 1),
            cpu: 1,
            step: Step::Fallback,
            affine: Some(Affine::NotAsked),
        },
        // ---------------- 3.10 group scan (§6.5) ----------------
        Case {
            name: "3.10 fully idle core",
            variant: "linux-3.10",
            topo: smt8,
            setup: busy(&[0, 1], 1),
            ctx: irq(1, 1),
            cpu: 2,
            step: Step::IdleGroup,
            affine: Some(Affine::NotAsked),
        },
        Case {
            name: "3.10 idle sibling thread at the SMT level",
            variant: "linux-3.10",
            topo: smt8,
            setup: busy(&[0, 1, 2, 3], 1),
            ctx: irq(1, 1),
            cpu: 5,
            step: Step::IdleGroup,
            affine: Some(Affine::NotAsked),
        },
        Case {
            name: "3.10 only half-idle cores: stays",
            variant: "linux-3.10",
            topo: smt8,
            setup: busy(&[0, 1, 2, 3, 5], 1),
            ctx: irq(1, 1),
            cpu: 1,
            step: Step::Fallback,
            affine: Some(Affine::NotAsked),
        },
        // NUMA-level affine domain (imb 112), sync tl = 0 -> pulled; LLC of 0 busy.
        Case {
            name: "3.10 sync pull across nodes",
            variant: "linux-3.10",
            topo: || two_nodes(4),
            setup: busy(&[0, 1, 2, 3, 4, 5, 6, 7], 1),
            ctx: wake(0, 4, SYNC),
            cpu: 0,
            step: Step::Fallback,
            affine: Some(Affine::PulledSync),
        },
        Case {
            name: "3.10 WAKEUP_BUDDY without history: not pulled",
            variant: "linux-3.10,WAKEUP_BUDDY",
            topo: || two_nodes(4),
            setup: busy(&[0, 1, 2, 3, 4, 5, 6, 7], 1),
            ctx: wake(0, 4, SYNC),
            cpu: 4,
            step: Step::Fallback,
            affine: Some(Affine::Declined),
        },
        Case {
            name: "3.10 WAKEUP_BUDDY between buddies: pulled",
            variant: "linux-3.10,WAKEUP_BUDDY",
            topo: || two_nodes(4),
            setup: and(
                busy(&[0, 1, 2, 3, 4, 5, 6, 7], 1),
                f(|_, h| {
                    h.task[W].last_wakee = Some(P);
                    h.task[W].wakee_streak = 4;
                    h.task[P].last_wakee = Some(W);
                    h.task[P].wakee_streak = 4;
                }),
            ),
            ctx: wake(0, 4, SYNC),
            cpu: 0,
            step: Step::Fallback,
            affine: Some(Affine::PulledBuddy),
        },
        Case {
            name: "3.10 wakeup_buddy_ref=8: streak 4 is not enough",
            variant: "linux-3.10,WAKEUP_BUDDY,wakeup_buddy_ref=8",
            topo: || two_nodes(4),
            setup: and(
                busy(&[0, 1, 2, 3, 4, 5, 6, 7], 1),
                f(|_, h| {
                    h.task[W].last_wakee = Some(P);
                    h.task[W].wakee_streak = 4;
                    h.task[P].last_wakee = Some(W);
                    h.task[P].wakee_streak = 4;
                }),
            ),
            ctx: wake(0, 4, SYNC),
            cpu: 4,
            step: Step::Fallback,
            affine: Some(Affine::Declined),
        },
        // ---------------- 3.12 wake_wide v1 inside wake_affine (§5.1) ----------------
        // LLC 4: wakee 5 > 4 and waker 50 > 20 -> wide.
        Case {
            name: "3.12 wake_wide: 1:N waker is not pulled",
            variant: "linux-3.12",
            topo: || two_nodes(4),
            setup: and(busy(&[0, 1, 2, 3, 4, 5, 6, 7], 1), flips(50, 5)),
            ctx: wake(0, 4, SYNC),
            cpu: 4,
            step: Step::Fallback,
            affine: Some(Affine::WakeWide),
        },
        Case {
            name: "3.12 NO_WAKE_WIDE pulls",
            variant: "linux-3.12,NO_WAKE_WIDE",
            topo: || two_nodes(4),
            setup: and(busy(&[0, 1, 2, 3, 4, 5, 6, 7], 1), flips(50, 5)),
            ctx: wake(0, 4, SYNC),
            cpu: 0,
            step: Step::Fallback,
            affine: Some(Affine::PulledSync),
        },
        // ---------------- 4.2 variants (§15.4) ----------------
        Case {
            name: "4.2 non-affine, LLC busy: stays",
            variant: "linux-4.2",
            topo: || two_nodes(4),
            setup: and(busy(&[1, 2, 3, 4, 5, 7], 1), busy(&[0], 3)),
            ctx: wake(0, 1, TTWU),
            cpu: 1,
            step: Step::Fallback,
            affine: Some(Affine::KeptWeight),
        },
        // slow path over the NUMA span: node 1 avg 768 vs local 1536 -> node 1, idle CPU 6.
        Case {
            name: "4.2 PREFER_IDLE_CPU reaches the idle CPU of the other node",
            variant: "linux-4.2,PREFER_IDLE_CPU",
            topo: || two_nodes(4),
            setup: and(busy(&[1, 2, 3, 4, 5, 7], 1), busy(&[0], 3)),
            ctx: wake(0, 1, TTWU),
            cpu: 6,
            step: Step::SlowPath,
            affine: Some(Affine::KeptWeight),
        },
        Case {
            name: "4.2 wide wakeup, LLC busy: stacks on prev",
            variant: "linux-4.2",
            topo: one_node_two_llcs,
            setup: and(busy(&[0, 1, 2, 3, 4, 5, 7], 1), flips(50, 5)),
            ctx: wake(0, 1, TTWU),
            cpu: 1,
            step: Step::Fallback,
            affine: Some(Affine::WakeWide),
        },
        Case {
            name: "4.2 WAKE_WIDE_IDLE finds the idle CPU of the node",
            variant: "linux-4.2,WAKE_WIDE_IDLE",
            topo: one_node_two_llcs,
            setup: and(busy(&[0, 1, 2, 3, 4, 5, 7], 1), flips(50, 5)),
            ctx: wake(0, 1, TTWU),
            cpu: 6,
            step: Step::WideIdle,
            affine: Some(Affine::WakeWide),
        },
        // reverse direction: the wakee is the many side.
        Case {
            name: "4.2 WAKE_WIDE_IDLE: other direction is not wide",
            variant: "linux-4.2,WAKE_WIDE_IDLE",
            topo: one_node_two_llcs,
            setup: and(busy(&[0, 1, 2, 3, 4, 5, 7], 1), flips(5, 50)),
            ctx: wake(0, 1, TTWU),
            cpu: 1,
            step: Step::Fallback,
            affine: Some(Affine::KeptWeight),
        },
        Case {
            name: "4.2 WAKE_WIDE_IDLE_BOTH: both directions",
            variant: "linux-4.2,WAKE_WIDE_IDLE_BOTH",
            topo: one_node_two_llcs,
            setup: and(busy(&[0, 1, 2, 3, 4, 5, 7], 1), flips(5, 50)),
            ctx: wake(0, 1, TTWU),
            cpu: 6,
            step: Step::WideIdle,
            affine: Some(Affine::WakeWide),
        },
        // ---------------- 4.6 RFC bits (§15.5, R2) ----------------
        Case {
            name: "4.6 OLD (default): idle sibling group",
            variant: "linux-4.6",
            topo: smt8,
            setup: busy(&[0, 1, 2, 3], 1),
            ctx: irq(1, 1),
            cpu: 5,
            step: Step::IdleGroup,
            affine: Some(Affine::NotAsked),
        },
        Case {
            name: "4.6 NEW: no idle core, IDLE_CPU scan from 1 finds 4",
            variant: "linux-4.6,NO_OLD_IDLE,NO_ORDER_IDLE,IDLE_CORE,IDLE_CPU,IDLE_SMT",
            topo: smt8,
            setup: busy(&[0, 1, 2, 3], 1),
            ctx: irq(1, 1),
            cpu: 4,
            step: Step::IdleCpu,
            affine: Some(Affine::NotAsked),
        },
        Case {
            name: "4.6 NEW: idle core",
            variant: "linux-4.6,NO_OLD_IDLE,NO_ORDER_IDLE,IDLE_CORE,IDLE_CPU,IDLE_SMT",
            topo: smt8,
            setup: busy(&[1, 3], 1),
            ctx: irq(1, 1),
            cpu: 2,
            step: Step::IdleCore,
            affine: Some(Affine::NotAsked),
        },
        Case {
            name: "4.6 all five off: no search",
            variant: "linux-4.6,NO_OLD_IDLE,NO_ORDER_IDLE",
            topo: smt8,
            setup: busy(&[0, 1, 2, 3], 1),
            ctx: irq(1, 1),
            cpu: 1,
            step: Step::Fallback,
            affine: Some(Affine::NotAsked),
        },
        Case {
            name: "4.6 ORDER_IDLE: ring order from the target's group",
            variant: "linux-4.6",
            topo: smt8,
            setup: busy(&[1, 3], 1),
            ctx: irq(1, 1),
            cpu: 2,
            step: Step::IdleGroup,
            affine: Some(Affine::NotAsked),
        },
        Case {
            name: "4.6 NO_ORDER_IDLE: from the domain's first group",
            variant: "linux-4.6,NO_ORDER_IDLE",
            topo: smt8,
            setup: busy(&[1, 3], 1),
            ctx: irq(1, 1),
            cpu: 0,
            step: Step::IdleGroup,
            affine: Some(Affine::NotAsked),
        },
        Case {
            name: "4.6 IDLE_SMT alone",
            variant: "linux-4.6,NO_OLD_IDLE,IDLE_SMT",
            topo: smt8,
            setup: busy(&[0, 1, 2, 3], 1),
            ctx: irq(1, 1),
            cpu: 5,
            step: Step::IdleSmt,
            affine: Some(Affine::NotAsked),
        },
        Case {
            name: "4.6 IDLE_CORE alone finds nothing on half-busy cores",
            variant: "linux-4.6,NO_OLD_IDLE,IDLE_CORE",
            topo: smt8,
            setup: busy(&[0, 1, 2, 3], 1),
            ctx: irq(1, 1),
            cpu: 1,
            step: Step::Fallback,
            affine: Some(Affine::NotAsked),
        },
        // ---------------- 4.9 (§6.6) ----------------
        Case {
            name: "4.9 idle core from the target",
            variant: "linux-4.9",
            topo: smt8,
            setup: busy(&[1, 3], 1),
            ctx: irq(1, 1),
            cpu: 2,
            step: Step::IdleCore,
            affine: Some(Affine::NotAsked),
        },
        Case {
            name: "4.9 OLD_IDLE first",
            variant: "linux-4.9,OLD_IDLE,ORDER_IDLE",
            topo: smt8,
            setup: busy(&[0, 1, 2, 3], 1),
            ctx: irq(1, 1),
            cpu: 5,
            step: Step::IdleGroup,
            affine: Some(Affine::NotAsked),
        },
        // ---------------- 4.14 WA_* (§4.5, §12.4) ----------------
        // this_eff = 2648*100*1024 > prev_eff = 424*108*1024: prev kept, prev idle.
        Case {
            name: "4.14 §12.4 wake_affine_weight: prev kept",
            variant: "linux-4.14",
            topo: || flat(4),
            setup: and(
                busy(&[0], 2),
                and(
                    busy(&[2, 3], 1),
                    f(|m, _| {
                        m.load(1, 1024);
                        m.tasks[P].load = 600;
                    }),
                ),
            ),
            ctx: wake(0, 1, TTWU),
            cpu: 1,
            step: Step::TargetIdle,
            affine: Some(Affine::KeptWeight),
        },
        Case {
            name: "4.14 §12.4 sync, prev idle: still prev",
            variant: "linux-4.14,NO_WA_IDLE",
            topo: || flat(4),
            setup: and(
                busy(&[0, 2, 3], 1),
                f(|m, _| {
                    m.load(1, 1024);
                    m.tasks[P].load = 600;
                }),
            ),
            ctx: wake(0, 1, SYNC),
            cpu: 1,
            step: Step::TargetIdle,
            affine: Some(Affine::KeptWeight),
        },
        Case {
            name: "4.14 §12.4 sync, prev busy 2624: pulled",
            variant: "linux-4.14,NO_WA_IDLE",
            topo: || flat(4),
            setup: and(
                busy(&[0, 1, 2, 3], 1),
                f(|m, _| {
                    m.load(1, 2624);
                    m.tasks[P].load = 600;
                }),
            ),
            ctx: wake(0, 1, SYNC),
            cpu: 0,
            step: Step::Fallback,
            affine: Some(Affine::PulledWeight),
        },
        Case {
            name: "4.14 WA_IDLE: idle waker CPU in prev's LLC",
            variant: "linux-4.14",
            topo: || flat(4),
            setup: busy(&[1, 2, 3], 1),
            ctx: irq(0, 1),
            cpu: 0,
            step: Step::TargetIdle,
            affine: Some(Affine::PulledIdle),
        },
        Case {
            name: "4.14 NO_WA_IDLE: weight keeps prev, scan finds 0",
            variant: "linux-4.14,NO_WA_IDLE",
            topo: || flat(4),
            setup: busy(&[1, 2, 3], 1),
            ctx: irq(0, 1),
            cpu: 0,
            step: Step::IdleCpu,
            affine: Some(Affine::KeptWeight),
        },
        // raw 1040 vs 1000: pulled only with the 108/100 bias.
        Case {
            name: "4.14 WA_BIAS pulls a slightly busier waker CPU",
            variant: "linux-4.14",
            topo: || flat(4),
            setup: and(
                busy(&[0, 1, 2, 3], 1),
                f(|m, _| {
                    m.load(0, 940);
                    m.load(1, 1100);
                    m.tasks[P].load = 100;
                }),
            ),
            ctx: wake(0, 1, TTWU),
            cpu: 0,
            step: Step::Fallback,
            affine: Some(Affine::PulledWeight),
        },
        Case {
            name: "4.14 NO_WA_BIAS keeps prev",
            variant: "linux-4.14,NO_WA_BIAS",
            topo: || flat(4),
            setup: and(
                busy(&[0, 1, 2, 3], 1),
                f(|m, _| {
                    m.load(0, 940);
                    m.load(1, 1100);
                    m.tasks[P].load = 100;
                }),
            ),
            ctx: wake(0, 1, TTWU),
            cpu: 1,
            step: Step::Fallback,
            affine: Some(Affine::KeptWeight),
        },
        Case {
            name: "4.14 NO_WA_WEIGHT: undecided means prev",
            variant: "linux-4.14,NO_WA_WEIGHT",
            topo: || flat(4),
            setup: and(
                busy(&[0, 1, 2, 3], 1),
                f(|m, _| {
                    m.load(0, 940);
                    m.load(1, 1100);
                    m.tasks[P].load = 100;
                }),
            ),
            ctx: wake(0, 1, TTWU),
            cpu: 1,
            step: Step::Fallback,
            affine: Some(Affine::Declined),
        },
        // avg_idle 0 -> SIS_PROP nr 4 -> 3 CPUs probed (0 is the waker's), 7 never reached.
        Case {
            name: "4.14 SIS_PROP budget",
            variant: "linux-4.14",
            topo: || flat(8),
            setup: and(
                busy(&[0, 1, 2, 3, 4, 5, 6], 1),
                f(|m, _| m.cpus[0].avg_idle = 0),
            ),
            ctx: irq(0, 0),
            cpu: 0,
            step: Step::Fallback,
            affine: Some(Affine::NotAsked),
        },
        Case {
            name: "4.14 NO_SIS_PROP scans the LLC",
            variant: "linux-4.14,NO_SIS_PROP",
            topo: || flat(8),
            setup: and(
                busy(&[0, 1, 2, 3, 4, 5, 6], 1),
                f(|m, _| m.cpus[0].avg_idle = 0),
            ),
            ctx: irq(0, 0),
            cpu: 7,
            step: Step::IdleCpu,
            affine: Some(Affine::NotAsked),
        },
        Case {
            name: "4.14 SIS_AVG_CPU skips the scan",
            variant: "linux-4.14,SIS_AVG_CPU,NO_SIS_PROP",
            topo: || flat(8),
            setup: and(
                busy(&[0, 1, 2, 3, 4, 5, 6], 1),
                f(|m, _| m.cpus[0].avg_idle = 0),
            ),
            ctx: irq(0, 0),
            cpu: 0,
            step: Step::Fallback,
            affine: Some(Affine::NotAsked),
        },
        // ---------------- 5.13 (§6.8) ----------------
        Case {
            name: "5.13 recent_used_cpu",
            variant: "linux-5.13",
            topo: || flat(8),
            setup: and(
                busy(&[0, 1, 2, 3, 4, 6, 7], 1),
                f(|_, h| h.task[P].recent_used_cpu = Some(5)),
            ),
            ctx: wake(0, 3, TTWU),
            cpu: 5,
            step: Step::Recent,
            affine: Some(Affine::KeptWeight),
        },
        Case {
            name: "5.13 idle SMT sibling of prev when no idle core",
            variant: "linux-5.13",
            topo: smt8,
            setup: and(
                busy(&[0, 1, 2, 3], 1),
                f(|_, h| h.llc[0].has_idle_cores = false),
            ),
            ctx: irq(1, 1),
            cpu: 5,
            step: Step::IdleSmt,
            affine: Some(Affine::NotAsked),
        },
        Case {
            name: "5.13 idle core pass from target+1",
            variant: "linux-5.13",
            topo: smt8,
            setup: busy(&[1, 2], 1),
            ctx: irq(1, 1),
            cpu: 3,
            step: Step::IdleCore,
            affine: Some(Affine::NotAsked),
        },
        Case {
            name: "5.13 idle core pass falls back to the first idle thread",
            variant: "linux-5.13",
            topo: smt8,
            setup: busy(&[0, 1, 2, 3], 1),
            ctx: irq(1, 1),
            cpu: 6,
            step: Step::IdleCpu,
            affine: Some(Affine::NotAsked),
        },
        // ---------------- 6.0 SIS_UTIL (§6.9, §12.4) ----------------
        Case {
            name: "6.0 SIS_UTIL budget 12 reaches CPU 12",
            variant: "linux-6.0",
            topo: || flat(16),
            setup: and(
                busy(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15], 1),
                f(|_, h| h.llc[0].nr_idle_scan = 12),
            ),
            ctx: irq(0, 0),
            cpu: 12,
            step: Step::IdleCpu,
            affine: Some(Affine::NotAsked),
        },
        Case {
            name: "6.0 SIS_UTIL budget 12 stops before CPU 13",
            variant: "linux-6.0",
            topo: || flat(16),
            setup: and(
                busy(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15], 1),
                f(|_, h| h.llc[0].nr_idle_scan = 12),
            ),
            ctx: irq(0, 0),
            cpu: 0,
            step: Step::Fallback,
            affine: Some(Affine::NotAsked),
        },
        Case {
            name: "6.0 NO_SIS_UTIL scans on",
            variant: "linux-6.0,NO_SIS_UTIL",
            topo: || flat(16),
            setup: and(
                busy(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15], 1),
                f(|_, h| h.llc[0].nr_idle_scan = 12),
            ),
            ctx: irq(0, 0),
            cpu: 13,
            step: Step::IdleCpu,
            affine: Some(Affine::NotAsked),
        },
        // ---------------- 6.6 ----------------
        Case {
            name: "6.6 NO_SIS_UTIL,SIS_PROP: nr 4 from an empty wake_avg_idle",
            variant: "linux-6.6,NO_SIS_UTIL,SIS_PROP",
            topo: || flat(16),
            setup: busy(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15], 1),
            ctx: irq(0, 0),
            cpu: 0,
            step: Step::Fallback,
            affine: Some(Affine::NotAsked),
        },
        // §12.4: LLC 10, flips 150/12 -> wide; scan from prev+1 finds 6.
        Case {
            name: "6.6 §12.4 wake_wide 150/12 is wide",
            variant: "linux-6.6",
            topo: || flat(10),
            setup: and(busy(&[0, 5], 1), flips(150, 12)),
            ctx: wake(0, 5, TTWU),
            cpu: 6,
            step: Step::IdleCpu,
            affine: Some(Affine::WakeWide),
        },
        Case {
            name: "6.6 §12.4 wake_wide 150/9 is not",
            variant: "linux-6.6",
            topo: || flat(10),
            setup: and(busy(&[0, 5], 1), flips(150, 9)),
            ctx: wake(0, 5, TTWU),
            cpu: 6,
            step: Step::IdleCpu,
            affine: Some(Affine::KeptWeight),
        },
        Case {
            name: "6.6 NO_WAKE_WIDE",
            variant: "linux-6.6,NO_WAKE_WIDE",
            topo: || flat(10),
            setup: and(busy(&[0, 5], 1), flips(150, 12)),
            ctx: wake(0, 5, TTWU),
            cpu: 6,
            step: Step::IdleCpu,
            affine: Some(Affine::KeptWeight),
        },
        Case {
            name: "6.6 sync pull to a waker running alone",
            variant: "linux-6.6",
            topo: || flat(10),
            setup: busy(&[0, 5], 1),
            ctx: wake(0, 5, SYNC),
            cpu: 1,
            step: Step::IdleCpu,
            affine: Some(Affine::PulledSync),
        },
        Case {
            name: "6.6 NO_WAKE_AFFINE",
            variant: "linux-6.6,NO_WAKE_AFFINE",
            topo: || flat(10),
            setup: busy(&[0, 5], 1),
            ctx: wake(0, 5, SYNC),
            cpu: 6,
            step: Step::IdleCpu,
            affine: Some(Affine::Declined),
        },
        Case {
            name: "6.6 NO_SELECT_IDLE_SIBLING",
            variant: "linux-6.6,NO_SELECT_IDLE_SIBLING",
            topo: || flat(10),
            setup: busy(&[0, 5], 1),
            ctx: wake(0, 5, TTWU),
            cpu: 5,
            step: Step::Target,
            affine: Some(Affine::KeptWeight),
        },
        Case {
            name: "6.6 SIS_NODE off: stays in the busy LLC",
            variant: "linux-6.6",
            topo: one_node_two_llcs,
            setup: busy(&[0, 1, 2, 3, 4, 5, 7], 1),
            ctx: irq(1, 1),
            cpu: 1,
            step: Step::Fallback,
            affine: Some(Affine::NotAsked),
        },
        Case {
            name: "6.6 SIS_NODE scans the node's other LLC",
            variant: "linux-6.6,SIS_NODE",
            topo: one_node_two_llcs,
            setup: busy(&[0, 1, 2, 3, 4, 5, 7], 1),
            ctx: irq(1, 1),
            cpu: 6,
            step: Step::WideIdle,
            affine: Some(Affine::NotAsked),
        },
        Case {
            name: "6.6 idle prev in another cluster is taken at once",
            variant: "linux-6.6",
            topo: kunpeng,
            setup: busy(&[0, 1, 3], 1),
            ctx: wake(0, 8, SYNC),
            cpu: 8,
            step: Step::PrevIdle,
            affine: Some(Affine::PulledSync),
        },
        Case {
            name: "6.6 fork: slow path to the idle node",
            variant: "linux-6.6",
            topo: two_nodes_smt,
            setup: busy(&[0, 1, 4, 5], 1),
            ctx: wake(0, 0, wake_flags::FORK),
            cpu: 2,
            step: Step::SlowPath,
            affine: None,
        },
        // load-based slow path keeps descending on equal loads (0 < 0 is false).
        Case {
            name: "3.10 fork: load-based slow path",
            variant: "linux-3.10",
            topo: two_nodes_smt,
            setup: busy(&[0, 1, 4, 5], 1),
            ctx: wake(0, 0, wake_flags::FORK),
            cpu: 7,
            step: Step::SlowPath,
            affine: None,
        },
        // ---------------- 6.12 ----------------
        Case {
            name: "6.12 cluster first: prev outside target's cluster is a fallback",
            variant: "linux-6.12",
            topo: kunpeng,
            setup: busy(&[0, 1, 3], 1),
            ctx: wake(0, 8, SYNC),
            cpu: 2,
            step: Step::IdleCpu,
            affine: Some(Affine::PulledSync),
        },
        Case {
            name: "6.12 sync test ignores delayed tasks",
            variant: "linux-6.12",
            topo: || flat(4),
            setup: and(
                and(busy(&[0], 2), busy(&[1, 2, 3], 1)),
                f(|m, _| m.cpus[0].delayed = 1),
            ),
            ctx: wake(0, 1, SYNC),
            cpu: 0,
            step: Step::Fallback,
            affine: Some(Affine::PulledSync),
        },
        Case {
            name: "6.6 sync test counts delayed tasks",
            variant: "linux-6.6",
            topo: || flat(4),
            setup: and(
                and(busy(&[0], 2), busy(&[1, 2, 3], 1)),
                f(|m, _| m.cpus[0].delayed = 1),
            ),
            ctx: wake(0, 1, SYNC),
            cpu: 1,
            step: Step::Fallback,
            affine: Some(Affine::KeptWeight),
        },
    ]
}

#[test]
fn decision_table() {
    let mut failures = Vec::new();
    let cases = cases();
    for c in &cases {
        let (got, rec, _, _) = run(c.variant, (c.topo)(), &c.setup, c.ctx);
        let ok = got == c.cpu && rec.step == c.step && c.affine.is_none_or(|a| a == rec.affine);
        if !ok {
            failures.push(format!(
                "{} [{}]: expected cpu {} step {:?} affine {:?}, got cpu {} record: {}",
                c.name, c.variant, c.cpu, c.step, c.affine, got, rec
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    assert!(cases.len() >= 70);
}

// ------------------------------------------------------------------------------------------
// Rows whose record or hints need more than the table checks.
// ------------------------------------------------------------------------------------------

#[test]
fn worked_example_wake_affine_weight_numbers() {
    // §12.4: (2048 + 600) * 100 = 264 800 vs (1024 - 600) * 108 = 45 792, both x capacity 1024.
    let setup = and(
        busy(&[0], 2),
        and(
            busy(&[2, 3], 1),
            f(|m, _| {
                m.load(1, 1024);
                m.tasks[P].load = 600;
            }),
        ),
    );
    let (rec, _) = check(
        "linux-4.14",
        flat(4),
        &setup,
        wake(0, 1, TTWU),
        1,
        Step::TargetIdle,
    );
    assert_eq!(rec.affine_loads, Some((264_800 * 1024, 45_792 * 1024)));
    // sync, waker load 1024: (1024 - 1024 + 600) * 100 = 60 000 vs 45 792 + 1.
    let setup = and(
        busy(&[0, 2, 3], 1),
        f(|m, _| {
            m.load(1, 1024);
            m.tasks[P].load = 600;
        }),
    );
    let (rec, _) = check(
        "linux-4.14,NO_WA_IDLE",
        flat(4),
        &setup,
        wake(0, 1, SYNC),
        1,
        Step::TargetIdle,
    );
    assert_eq!(rec.affine_loads, Some((60_000 * 1024, 45_792 * 1024 + 1)));
    // prev busy at 2624: (2624 - 600) * 108 + 1 = 218 593 (x 1024, the +1 after scaling).
    let setup = and(
        busy(&[0, 1, 2, 3], 1),
        f(|m, _| {
            m.load(1, 2624);
            m.tasks[P].load = 600;
        }),
    );
    let (rec, _) = check(
        "linux-4.14,NO_WA_IDLE",
        flat(4),
        &setup,
        wake(0, 1, SYNC),
        0,
        Step::Fallback,
    );
    assert_eq!(rec.affine_loads, Some((60_000 * 1024, 218_592 * 1024 + 1)));
    assert!(rec.pulled());
}

#[test]
fn worked_example_wake_wide_verdicts() {
    let (rec, _) = check(
        "linux-6.6",
        flat(10),
        &and(busy(&[0, 5], 1), flips(150, 12)),
        wake(0, 5, TTWU),
        6,
        Step::IdleCpu,
    );
    assert_eq!(rec.wake_wide, Some(true));
    let (rec, _) = check(
        "linux-6.6",
        flat(10),
        &and(busy(&[0, 5], 1), flips(150, 9)),
        wake(0, 5, TTWU),
        6,
        Step::IdleCpu,
    );
    assert_eq!(rec.wake_wide, Some(false));
    // NO_WAKE_WIDE does not evaluate it at all.
    let (rec, _) = check(
        "linux-6.6,NO_WAKE_WIDE",
        flat(10),
        &and(busy(&[0, 5], 1), flips(150, 12)),
        wake(0, 5, TTWU),
        6,
        Step::IdleCpu,
    );
    assert_eq!(rec.wake_wide, None);
}

#[test]
fn worked_example_sis_util_budget_is_the_number_of_cpus_probed() {
    // §12.4: 16-CPU LLC at 40 % util -> nr_idle_scan 12; at 80 % -> 2. Each probe costs one.
    for (budget, examined) in [(12u32, 12u32), (2, 2), (0, 0)] {
        let setup = and(
            busy(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15], 1),
            f(move |_, h| h.llc[0].nr_idle_scan = budget),
        );
        let (rec, _) = check("linux-6.0", flat(16), &setup, irq(0, 0), 0, Step::Fallback);
        assert_eq!(rec.examined, examined, "budget {budget}: {rec}");
    }
    // SIS_PROP with an empty wake_avg_idle: nr = 4 -> 3 probes.
    let setup = busy(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15], 1);
    let (rec, _) = check(
        "linux-6.6,NO_SIS_UTIL,SIS_PROP",
        flat(16),
        &setup,
        irq(0, 0),
        0,
        Step::Fallback,
    );
    assert_eq!(rec.examined, 3);
}

#[test]
fn sis_prop_budget_and_scan_cost() {
    let setup = and(
        busy(&[0, 1, 2, 3, 4, 5, 6], 1),
        f(|m, _| m.cpus[0].avg_idle = 0),
    );
    let (rec, h) = check("linux-4.14", flat(8), &setup, irq(0, 0), 0, Step::Fallback);
    assert_eq!(rec.examined, 2, "{rec}"); // CPUs 1, 2 (0 is the waker's own)
    assert_eq!(
        h.llc[0].avg_scan_cost, 0.0,
        "an exhausted budget does not update the cost"
    );
    let (rec, h) = check(
        "linux-4.14,NO_SIS_PROP",
        flat(8),
        &setup,
        irq(0, 0),
        7,
        Step::IdleCpu,
    );
    assert_eq!(rec.examined, 7);
    // 7 probes x 50 ns, folded in with weight 1/8.
    assert!((h.llc[0].avg_scan_cost - 350.0 / 8.0).abs() < 1e-9);
}

#[test]
fn idle_cpu_rfc_bit_is_bounded_by_avg_idle_against_scan_cost() {
    let v = "linux-4.6,NO_OLD_IDLE,IDLE_CPU";
    let (rec, h) = check(
        v,
        smt8(),
        &busy(&[0, 1, 2, 3], 1),
        irq(1, 1),
        4,
        Step::IdleCpu,
    );
    assert_eq!(rec.examined, 3); // 2, 3, 4
    assert!((h.llc[0].avg_scan_cost - 150.0 / 8.0).abs() < 1e-9);
    // avg_idle 1 ms / 512 = 1953 < 5000: the scan is skipped.
    let setup = and(
        busy(&[0, 1, 2, 3], 1),
        f(|_, h| h.llc[0].avg_scan_cost = 5000.0),
    );
    let (rec, _) = check(v, smt8(), &setup, irq(1, 1), 1, Step::Fallback);
    assert_eq!(rec.examined, 0);
}

#[test]
fn failed_idle_core_scan_clears_has_idle_cores() {
    // No fully idle core: the core scan fails (and clears the hint), IDLE_CPU then finds 4.
    let (_, h) = check(
        "linux-4.9",
        smt8(),
        &busy(&[0, 1, 2, 3], 1),
        irq(1, 1),
        4,
        Step::IdleCpu,
    );
    assert!(!h.llc[0].has_idle_cores);
    let (_, h) = check(
        "linux-5.13",
        smt8(),
        &busy(&[0, 1, 2, 3], 1),
        irq(1, 1),
        6,
        Step::IdleCpu,
    );
    assert!(!h.llc[0].has_idle_cores);
    let (_, h) = check(
        "linux-5.13",
        smt8(),
        &busy(&[1, 2], 1),
        irq(1, 1),
        3,
        Step::IdleCore,
    );
    assert!(
        h.llc[0].has_idle_cores,
        "a successful scan leaves the hint set"
    );
}

#[test]
fn recent_used_cpu_bookkeeping_by_era() {
    let setup = and(
        busy(&[0, 1, 2, 3, 4, 6, 7], 1),
        f(|_, h| h.task[P].recent_used_cpu = Some(5)),
    );
    // 4.16-5.15: swapped with prev on success; the waker records its own CPU.
    let (_, h) = check(
        "linux-5.13",
        flat(8),
        &setup,
        wake(0, 3, TTWU),
        5,
        Step::Recent,
    );
    assert_eq!(h.task[P].recent_used_cpu, Some(3));
    assert_eq!(h.task[W].recent_used_cpu, Some(0));
    // 6.x: always replaced by prev; the waker side is gone.
    let (_, h) = check(
        "linux-6.0",
        flat(8),
        &setup,
        wake(0, 3, TTWU),
        5,
        Step::Recent,
    );
    assert_eq!(h.task[P].recent_used_cpu, Some(3));
    assert_eq!(h.task[W].recent_used_cpu, None);
}

#[test]
fn record_wakee_decay_by_era() {
    // flips 9 recorded 2 s ago: 3.12 wipes, 4.x halves, then one flip for a new wakee.
    let setup = f(|_, h| {
        h.task[W].wakee_flips = 9;
        h.task[W].wakee_flip_decay_ts = NOW - 2_000_000_000;
    });
    let (_, _, h, _) = run(
        "linux-3.12",
        two_nodes(4),
        &and(busy(&[0, 4], 1), setup),
        wake(0, 4, TTWU),
    );
    assert_eq!(h.task[W].wakee_flips, 1);
    assert_eq!(h.task[W].last_wakee, Some(P));
    let setup = f(|_, h| {
        h.task[W].wakee_flips = 9;
        h.task[W].wakee_flip_decay_ts = NOW - 2_000_000_000;
    });
    let (_, _, h, _) = run(
        "linux-4.9",
        two_nodes(4),
        &and(busy(&[0, 4], 1), setup),
        wake(0, 4, TTWU),
    );
    assert_eq!(h.task[W].wakee_flips, 4 + 1);
    // Same wakee again: no flip.
    let (_, _, h, _) = run("linux-4.9", two_nodes(4), &flips(7, 0), wake(0, 4, TTWU));
    assert_eq!(h.task[W].wakee_flips, 7);
}

#[test]
fn remote_probes_are_counted_apart() {
    let (rec, _) = check(
        "linux-6.6,SIS_NODE",
        one_node_two_llcs(),
        &busy(&[0, 1, 2, 3, 4, 5, 7], 1),
        irq(1, 1),
        6,
        Step::WideIdle,
    );
    assert_eq!(rec.examined_remote, 3, "{rec}"); // 4, 5, 6
    assert!(rec.examined >= 2, "{rec}"); // 2, 3 (and 0) in the local LLC
    let (rec, _) = check(
        "linux-6.6",
        one_node_two_llcs(),
        &busy(&[0, 1, 2, 3, 4, 5, 7], 1),
        irq(1, 1),
        1,
        Step::Fallback,
    );
    assert_eq!(rec.examined_remote, 0);
}

#[test]
fn no_select_idle_sibling_examines_nothing() {
    let (rec, _) = check(
        "linux-6.6,NO_SELECT_IDLE_SIBLING",
        flat(10),
        &busy(&[0, 5], 1),
        wake(0, 5, TTWU),
        5,
        Step::Target,
    );
    // Only wake_affine_idle's look at prev (5.x clause) is paid; no search.
    assert_eq!((rec.examined, rec.examined_remote), (1, 0));
    assert_eq!(rec.target, Some(5));
    let (rec, _) = check(
        "linux-4.14,NO_SELECT_IDLE_SIBLING",
        flat(10),
        &busy(&[0, 5], 1),
        wake(0, 5, TTWU),
        5,
        Step::Target,
    );
    assert_eq!((rec.examined, rec.examined_remote), (0, 0));
}

#[test]
fn record_renders_the_whole_decision() {
    let setup = and(
        busy(&[0], 2),
        and(
            busy(&[2, 3], 1),
            f(|m, _| {
                m.load(1, 1024);
                m.tasks[P].load = 600;
            }),
        ),
    );
    let (rec, _) = check(
        "linux-4.14",
        flat(4),
        &setup,
        wake(0, 1, TTWU),
        1,
        Step::TargetIdle,
    );
    let s = rec.to_string();
    for part in [
        "affine=kept_weight",
        "wake_wide=false",
        "this_eff=",
        "prev_eff=",
        "target=1",
        "step=target_idle",
    ] {
        assert!(s.contains(part), "{s} lacks {part}");
    }
}

#[test]
fn affinity_is_respected_by_every_era() {
    // The wakee may only run on CPUs 3 and 7 (one core); the waker's CPU 0 is not allowed,
    // so no era may pull it there or scan past its mask.
    for e in schedlab_policies::Era::ALL {
        let v = e.name();
        let setup = f(|m, _| m.tasks[P].allowed = schedlab_topo::CpuSet::from_cpus(8, [3, 7]));
        let (got, rec, _, _) = run(v, smt8(), &and(busy(&[3], 1), setup), wake(0, 3, TTWU));
        assert!(got == 3 || got == 7, "{v}: {got} {rec}");
    }
}
