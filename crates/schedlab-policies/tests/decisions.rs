//! Data-driven decision tests: every era's select_task_rq on small hand-built machine states
//! ([`FakeMachine`]). The table's rows are one-line fixtures; what each decided (chosen CPU,
//! step, affine verdict, wake_wide, the wake_affine numbers, CPUs examined) is one line of an
//! insta snapshot, reviewed against a derivation by hand from the kernel logic of the era
//! (the comment on a row gives the deciding numbers). The tests after the table check
//! records and hints that need more than one line, with worked examples of the wake_affine,
//! wake_wide and SIS_UTIL arithmetic.

mod common;

use common::decide::*;
use schedlab_engine::WakeCtx;
use schedlab_engine::policy::wake_flags;
use schedlab_topo::CpuId;
use schedlab_topo::Topology;

struct Case {
    name: &'static str,
    variant: &'static str,
    topo: fn() -> Topology,
    setup: Setup,
    ctx: WakeCtx,
}

fn case(
    name: &'static str,
    variant: &'static str,
    topo: fn() -> Topology,
    setup: Setup,
    ctx: WakeCtx,
) -> Case {
    Case {
        name,
        variant,
        topo,
        setup,
        ctx,
    }
}

/// Every row: (name, variant, machine, state, wakeup). The expected CPU, step, affine
/// verdict and CPUs examined are in `snapshots/decisions__decision_table.snap`, one line per
/// row, reviewed against the hand derivations in the comments.
fn cases() -> Vec<Case> {
    vec![
        // ---------------- 2.5.59 (try_to_wake_up) ----------------
        case(
            "o1 sync pulls to the waker",
            "linux-2.5.59",
            || two_nodes(2),
            busy(&[0, 2], 1),
            wake(0, 2, SYNC),
        ),
        case(
            "o1 plain wakeup stays on prev",
            "linux-2.5.59",
            || two_nodes(2),
            busy(&[0, 2], 1),
            wake(0, 2, TTWU),
        ),
        case(
            "o1 fork stays on the parent's cpu",
            "linux-2.5.59,ingoB0",
            || two_nodes(2),
            busy(&[1], 3),
            wake(1, 1, wake_flags::FORK),
        ),
        // exec: prev runs 3 (>2); node loads 4 vs 2 -> node 1, its least loaded CPU 3.
        case(
            "o1 exec balances to the least loaded node",
            "linux-2.5.59",
            || two_nodes(2),
            and(and(busy(&[0], 3), busy(&[1], 1)), busy(&[2], 2)),
            wake(0, 0, wake_flags::EXEC),
        ),
        // ---------------- 2.6.30 (select_task_rq_fair 2.6.23-2.6.31, wake_affine 2.6.25-2.6.31) ----------------
        // PKG imb 112: sync tl = 0 -> 100*1024 <= 112*1024.
        case(
            "2.6.30 sync wake_affine pulls",
            "linux-2.6.30",
            c2q,
            busy(&[0, 2], 1),
            wake(0, 2, SYNC),
        ),
        // avg_overlap 1 ms > 0.5 ms drops sync: 204800 > 114688, per-task clause fails, no passive.
        case(
            "2.6.30 long overlap drops sync",
            "linux-2.6.30",
            c2q,
            and(
                busy(&[0, 2], 1),
                f(|m, _| m.tasks[W].avg_overlap = 1_000_000),
            ),
            wake(0, 2, SYNC),
        ),
        // heavy wakee (weight 9548) fails wake_affine; passive 112*1024 <= 100*1536 pulls.
        case(
            "2.6.30 passive balancing",
            "linux-2.6.30",
            c2q,
            and(
                busy(&[0, 2], 1),
                f(|m, _| {
                    m.tasks[P].weight = 9548;
                    m.load(CpuId::new(2), 1536);
                }),
            ),
            wake(0, 2, TTWU),
        ),
        case(
            "2.6.30 wake_idle takes an idle SMT sibling",
            "linux-2.6.30",
            smt8,
            busy(&[1], 1),
            irq(1, 1),
        ),
        case(
            "2.6.30 NO_SELECT_IDLE_SIBLING",
            "linux-2.6.30,NO_SELECT_IDLE_SIBLING",
            smt8,
            busy(&[1], 1),
            irq(1, 1),
        ),
        // ---------------- 2.6.32 / 2.6.33 (select_task_rq_fair 2.6.32-2.6.34, wake_affine 2.6.32-2.6.33, a1f84a3ab8e0) ----------------
        case(
            "2.6.32 idle prev beats the waker",
            "linux-2.6.32",
            c2q,
            busy(&[0, 1, 3], 1),
            wake(0, 2, TTWU),
        ),
        // package-wide scan finds 1; wake_affine on the waker's load (1024) fails.
        case(
            "2.6.32 idle sibling found, wake_affine fails",
            "linux-2.6.32",
            c2q,
            busy(&[0, 2, 3], 1),
            wake(0, 2, TTWU),
        ),
        case(
            "2.6.32 AFFINE_TARGET weighs the idle target",
            "linux-2.6.32,AFFINE_TARGET",
            c2q,
            busy(&[0, 2, 3], 1),
            wake(0, 2, TTWU),
        ),
        case(
            "2.6.32 sync pull",
            "linux-2.6.32",
            c2q,
            busy(&[0, 1, 2, 3], 1),
            wake(0, 2, SYNC),
        ),
        case(
            "2.6.32 NO_AFFINE_WAKEUPS",
            "linux-2.6.32,NO_AFFINE_WAKEUPS",
            c2q,
            busy(&[0, 1, 2, 3], 1),
            wake(0, 2, SYNC),
        ),
        case(
            "2.6.33 LLC scan finds 1, wake_affine fails",
            "linux-2.6.33",
            c2q,
            busy(&[0, 2, 3], 1),
            wake(0, 2, TTWU),
        ),
        case(
            "2.6.33 RAMP: waker alone, idle sibling is affine at once",
            "linux-2.6.33,RAMP",
            c2q,
            busy(&[0, 2, 3], 1),
            wake(0, 2, TTWU),
        ),
        case(
            "2.6.33 RAMP: busy waker CPU, no search",
            "linux-2.6.33,RAMP",
            c2q,
            and(busy(&[2, 3], 1), busy(&[0], 2)),
            wake(0, 2, TTWU),
        ),
        // The open reading of RAMP's gate: 2.6.34's "not an interrupt wakeup" searches here.
        case(
            "2.6.33 RAMP,RAMP_NOT_IDLE: busy waker CPU still searches",
            "linux-2.6.33,RAMP,RAMP_NOT_IDLE",
            c2q,
            and(busy(&[2, 3], 1), busy(&[0], 2)),
            wake(0, 2, TTWU),
        ),
        case(
            "2.6.33 SYNC_LESS drops sync on long overlap",
            "linux-2.6.33",
            c2q,
            and(
                busy(&[0, 1, 2, 3], 1),
                f(|m, _| m.tasks[W].avg_overlap = 1_000_000),
            ),
            wake(0, 2, SYNC),
        ),
        case(
            "2.6.33 NO_SYNC_LESS keeps sync",
            "linux-2.6.33,NO_SYNC_LESS",
            c2q,
            and(
                busy(&[0, 1, 2, 3], 1),
                f(|m, _| m.tasks[W].avg_overlap = 1_000_000),
            ),
            wake(0, 2, SYNC),
        ),
        case(
            "2.6.33 plain wakeup not pulled",
            "linux-2.6.33",
            c2q,
            busy(&[0, 1, 2, 3], 1),
            wake(0, 2, TTWU),
        ),
        case(
            "2.6.33 SYNC_MORE makes short-overlap wakeups sync",
            "linux-2.6.33,SYNC_MORE",
            c2q,
            busy(&[0, 1, 2, 3], 1),
            wake(0, 2, TTWU),
        ),
        // ---------------- 2.6.35 (99bd5e2f245d) ----------------
        // wake_affine keeps prev 5 (3072 vs 1024); SMT {1,5} busy, then MC's first idle CPU 3.
        case(
            "2.6.35 first idle CPU of the LLC around prev",
            "linux-2.6.35",
            smt8,
            and(busy(&[1, 2, 4, 5, 6, 7], 1), busy(&[0], 2)),
            wake(0, 5, TTWU),
        ),
        // ---------------- 3.6 idle_buddy (970e178985ca) ----------------
        case(
            "3.6 MC buddy of 1 is 0",
            "linux-3.6",
            smt8,
            busy(&[1, 5], 1),
            irq(1, 1),
        ),
        case(
            "3.6 SMT buddy of 1 is 5",
            "linux-3.6",
            smt8,
            busy(&[0, 1], 1),
            irq(1, 1),
        ),
        case(
            "3.6 buddies busy: idle CPUs 2,3,4,6,7 are missed",
            "linux-3.6",
            smt8,
            busy(&[0, 1, 5], 1),
            irq(1, 1),
        ),
        // ---------------- 3.10 group scan (~3.9-4.8) ----------------
        case(
            "3.10 fully idle core",
            "linux-3.10",
            smt8,
            busy(&[0, 1], 1),
            irq(1, 1),
        ),
        case(
            "3.10 idle sibling thread at the SMT level",
            "linux-3.10",
            smt8,
            busy(&[0, 1, 2, 3], 1),
            irq(1, 1),
        ),
        case(
            "3.10 only half-idle cores: stays",
            "linux-3.10",
            smt8,
            busy(&[0, 1, 2, 3, 5], 1),
            irq(1, 1),
        ),
        // NUMA-level affine domain (imb 112), sync tl = 0 -> pulled; LLC of 0 busy.
        case(
            "3.10 sync pull across nodes",
            "linux-3.10",
            || two_nodes(4),
            busy(&[0, 1, 2, 3, 4, 5, 6, 7], 1),
            wake(0, 4, SYNC),
        ),
        case(
            "3.10 WAKEUP_BUDDY without history: not pulled",
            "linux-3.10,WAKEUP_BUDDY",
            || two_nodes(4),
            busy(&[0, 1, 2, 3, 4, 5, 6, 7], 1),
            wake(0, 4, SYNC),
        ),
        // The open reading of the non-buddy action: SIS around prev (default) or prev alone.
        case(
            "3.10 WAKEUP_BUDDY non-buddy: SIS around prev finds its idle neighbour",
            "linux-3.10,WAKEUP_BUDDY",
            || two_nodes(4),
            busy(&[0, 1, 2, 3, 4, 6, 7], 1),
            wake(0, 4, SYNC),
        ),
        case(
            "3.10 WAKEUP_BUDDY,WAKEUP_BUDDY_PREV non-buddy: prev without a search",
            "linux-3.10,WAKEUP_BUDDY,WAKEUP_BUDDY_PREV",
            || two_nodes(4),
            busy(&[0, 1, 2, 3, 4, 6, 7], 1),
            wake(0, 4, SYNC),
        ),
        case(
            "3.10 WAKEUP_BUDDY between buddies: pulled",
            "linux-3.10,WAKEUP_BUDDY",
            || two_nodes(4),
            and(
                busy(&[0, 1, 2, 3, 4, 5, 6, 7], 1),
                f(|_, h| {
                    h.task[W].last_wakee = Some(P);
                    h.task[W].wakee_streak = 4;
                    h.task[P].last_wakee = Some(W);
                    h.task[P].wakee_streak = 4;
                }),
            ),
            wake(0, 4, SYNC),
        ),
        case(
            "3.10 wakeup_buddy_ref=8: streak 4 is not enough",
            "linux-3.10,WAKEUP_BUDDY,wakeup_buddy_ref=8",
            || two_nodes(4),
            and(
                busy(&[0, 1, 2, 3, 4, 5, 6, 7], 1),
                f(|_, h| {
                    h.task[W].last_wakee = Some(P);
                    h.task[W].wakee_streak = 4;
                    h.task[P].last_wakee = Some(W);
                    h.task[P].wakee_streak = 4;
                }),
            ),
            wake(0, 4, SYNC),
        ),
        // ---------------- 3.12 wake_wide v1 inside wake_affine (62470419e993) ----------------
        // LLC 4: wakee 5 > 4 and waker 50 > 20 -> wide.
        case(
            "3.12 wake_wide: 1:N waker is not pulled",
            "linux-3.12",
            || two_nodes(4),
            and(busy(&[0, 1, 2, 3, 4, 5, 6, 7], 1), flips(50, 5)),
            wake(0, 4, SYNC),
        ),
        case(
            "3.12 NO_WAKE_WIDE pulls",
            "linux-3.12,NO_WAKE_WIDE",
            || two_nodes(4),
            and(busy(&[0, 1, 2, 3, 4, 5, 6, 7], 1), flips(50, 5)),
            wake(0, 4, SYNC),
        ),
        // ---------------- 4.2 variants (2015 LKML variants) ----------------
        case(
            "4.2 non-affine, LLC busy: stays",
            "linux-4.2",
            || two_nodes(4),
            and(busy(&[1, 2, 3, 4, 5, 7], 1), busy(&[0], 3)),
            wake(0, 1, TTWU),
        ),
        // The fall-through reading (default): prev's LLC is the affine domain and no domain
        // below it has BALANCE_WAKE, so there is nothing to fall into.
        case(
            "4.2 PREFER_IDLE_CPU: no BALANCE_WAKE domain below the affine one, stays",
            "linux-4.2,PREFER_IDLE_CPU",
            || two_nodes(4),
            and(busy(&[1, 2, 3, 4, 5, 7], 1), busy(&[0], 3)),
            wake(0, 1, TTWU),
        ),
        // The wide reading: the slow path over the NUMA span (node 1 avg 768 vs local 1536
        // -> node 1, idle CPU 6); with SD_BALANCE_WAKE the fall-through searches the walk's
        // domain below the affine one (NUMA here: node 0, idle CPU 2).
        case(
            "4.2 PREFER_IDLE_CPU_WIDE reaches the idle CPU of the other node",
            "linux-4.2,PREFER_IDLE_CPU,PREFER_IDLE_CPU_WIDE",
            || two_nodes(4),
            and(busy(&[1, 2, 3, 4, 5, 7], 1), busy(&[0], 3)),
            wake(0, 1, TTWU),
        ),
        case(
            "4.2 PREFER_IDLE_CPU,SD_BALANCE_WAKE: the slow path below the affine domain",
            "linux-4.2,PREFER_IDLE_CPU,SD_BALANCE_WAKE",
            || two_nodes(4),
            and(busy(&[1, 3, 4, 5, 6, 7], 1), busy(&[0], 3)),
            wake(0, 5, TTWU),
        ),
        case(
            "4.2 PREFER_IDLE_CPU on default domains: the same wakeup stays",
            "linux-4.2,PREFER_IDLE_CPU",
            || two_nodes(4),
            and(busy(&[1, 3, 4, 5, 6, 7], 1), busy(&[0], 3)),
            wake(0, 5, TTWU),
        ),
        case(
            "4.2 wide wakeup, LLC busy: stacks on prev",
            "linux-4.2",
            one_node_two_llcs,
            and(busy(&[0, 1, 2, 3, 4, 5, 7], 1), flips(50, 5)),
            wake(0, 1, TTWU),
        ),
        case(
            "4.2 WAKE_WIDE_IDLE finds the idle CPU of the node",
            "linux-4.2,WAKE_WIDE_IDLE",
            one_node_two_llcs,
            and(busy(&[0, 1, 2, 3, 4, 5, 7], 1), flips(50, 5)),
            wake(0, 1, TTWU),
        ),
        // reverse direction: the wakee is the many side.
        case(
            "4.2 WAKE_WIDE_IDLE: other direction is not wide",
            "linux-4.2,WAKE_WIDE_IDLE",
            one_node_two_llcs,
            and(busy(&[0, 1, 2, 3, 4, 5, 7], 1), flips(5, 50)),
            wake(0, 1, TTWU),
        ),
        case(
            "4.2 WAKE_WIDE_IDLE_BOTH: both directions",
            "linux-4.2,WAKE_WIDE_IDLE_BOTH",
            one_node_two_llcs,
            and(busy(&[0, 1, 2, 3, 4, 5, 7], 1), flips(5, 50)),
            wake(0, 1, TTWU),
        ),
        // The readings of WAKE_WIDE_IDLE: its wake_wide and its search.
        case(
            "4.2 WAKE_WIDE_IDLE_SYM: the symmetric wake_wide is wide both ways",
            "linux-4.2,WAKE_WIDE_IDLE,WAKE_WIDE_IDLE_SYM",
            one_node_two_llcs,
            and(busy(&[0, 1, 2, 3, 4, 5, 7], 1), flips(5, 50)),
            wake(0, 1, TTWU),
        ),
        case(
            "4.2 WAKE_WIDE_IDLE_SLOW: the slow path from prev",
            "linux-4.2,WAKE_WIDE_IDLE,WAKE_WIDE_IDLE_SLOW",
            one_node_two_llcs,
            and(busy(&[0, 1, 2, 3, 4, 5, 7], 1), flips(50, 5)),
            wake(0, 1, TTWU),
        ),
        // ---------------- 4.6 RFC bits (2016 RFC, R2) ----------------
        case(
            "4.6 OLD (default): idle sibling group",
            "linux-4.6",
            smt8,
            busy(&[0, 1, 2, 3], 1),
            irq(1, 1),
        ),
        case(
            "4.6 NEW: no idle core, IDLE_CPU scan from 1 finds 4",
            "linux-4.6,NO_OLD_IDLE,NO_ORDER_IDLE,IDLE_CORE,IDLE_CPU,IDLE_SMT",
            smt8,
            busy(&[0, 1, 2, 3], 1),
            irq(1, 1),
        ),
        case(
            "4.6 NEW: idle core",
            "linux-4.6,NO_OLD_IDLE,NO_ORDER_IDLE,IDLE_CORE,IDLE_CPU,IDLE_SMT",
            smt8,
            busy(&[1, 3], 1),
            irq(1, 1),
        ),
        case(
            "4.6 all five off: no search",
            "linux-4.6,NO_OLD_IDLE,NO_ORDER_IDLE",
            smt8,
            busy(&[0, 1, 2, 3], 1),
            irq(1, 1),
        ),
        case(
            "4.6 ORDER_IDLE: ring order from the target's group",
            "linux-4.6",
            smt8,
            busy(&[1, 3], 1),
            irq(1, 1),
        ),
        case(
            "4.6 NO_ORDER_IDLE: from the domain's first group",
            "linux-4.6,NO_ORDER_IDLE",
            smt8,
            busy(&[1, 3], 1),
            irq(1, 1),
        ),
        case(
            "4.6 IDLE_SMT alone",
            "linux-4.6,NO_OLD_IDLE,IDLE_SMT",
            smt8,
            busy(&[0, 1, 2, 3], 1),
            irq(1, 1),
        ),
        case(
            "4.6 IDLE_CORE alone finds nothing on half-busy cores",
            "linux-4.6,NO_OLD_IDLE,IDLE_CORE",
            smt8,
            busy(&[0, 1, 2, 3], 1),
            irq(1, 1),
        ),
        // ---------------- 4.9 (10e2f1acd010) ----------------
        case(
            "4.9 idle core from the target",
            "linux-4.9",
            smt8,
            busy(&[1, 3], 1),
            irq(1, 1),
        ),
        // The open reading of the RFC's IDLE_CPU: gated by avg_idle (as merged) or not.
        case(
            "4.9 IDLE_CPU gated: a short avg_idle skips the scan",
            "linux-4.9",
            || flat(4),
            and(
                busy(&[0, 1, 2], 1),
                f(|m, h| {
                    m.cpus[0].avg_idle = 0;
                    h.llc[0].avg_scan_cost = 1000.0;
                }),
            ),
            wake(0, 1, TTWU),
        ),
        case(
            "4.9 NO_IDLE_CPU_GATE: the scan runs and finds CPU 3",
            "linux-4.9,NO_IDLE_CPU_GATE",
            || flat(4),
            and(
                busy(&[0, 1, 2], 1),
                f(|m, h| {
                    m.cpus[0].avg_idle = 0;
                    h.llc[0].avg_scan_cost = 1000.0;
                }),
            ),
            wake(0, 1, TTWU),
        ),
        case(
            "4.9 OLD_IDLE first",
            "linux-4.9,OLD_IDLE,ORDER_IDLE",
            smt8,
            busy(&[0, 1, 2, 3], 1),
            irq(1, 1),
        ),
        // ---------------- 4.14 WA_* (wake_affine_idle/weight, worked example) ----------------
        // this_eff = 2648*100*1024 > prev_eff = 424*108*1024: prev kept, prev idle.
        case(
            "4.14 worked example, wake_affine_weight: prev kept",
            "linux-4.14",
            || flat(4),
            and(
                busy(&[0], 2),
                and(
                    busy(&[2, 3], 1),
                    f(|m, _| {
                        m.load(CpuId::new(1), 1024);
                        m.tasks[P].load = 600;
                    }),
                ),
            ),
            wake(0, 1, TTWU),
        ),
        case(
            "4.14 worked example, sync, prev idle: still prev",
            "linux-4.14,NO_WA_IDLE",
            || flat(4),
            and(
                busy(&[0, 2, 3], 1),
                f(|m, _| {
                    m.load(CpuId::new(1), 1024);
                    m.tasks[P].load = 600;
                }),
            ),
            wake(0, 1, SYNC),
        ),
        case(
            "4.14 worked example, sync, prev busy 2624: pulled",
            "linux-4.14,NO_WA_IDLE",
            || flat(4),
            and(
                busy(&[0, 1, 2, 3], 1),
                f(|m, _| {
                    m.load(CpuId::new(1), 2624);
                    m.tasks[P].load = 600;
                }),
            ),
            wake(0, 1, SYNC),
        ),
        case(
            "4.14 WA_IDLE: idle waker CPU in prev's LLC",
            "linux-4.14",
            || flat(4),
            busy(&[1, 2, 3], 1),
            irq(0, 1),
        ),
        case(
            "4.14 NO_WA_IDLE: weight keeps prev, scan finds 0",
            "linux-4.14,NO_WA_IDLE",
            || flat(4),
            busy(&[1, 2, 3], 1),
            irq(0, 1),
        ),
        // raw 1040 vs 1000: pulled only with the 108/100 bias.
        case(
            "4.14 WA_BIAS pulls a slightly busier waker CPU",
            "linux-4.14",
            || flat(4),
            and(
                busy(&[0, 1, 2, 3], 1),
                f(|m, _| {
                    m.load(CpuId::new(0), 940);
                    m.load(CpuId::new(1), 1100);
                    m.tasks[P].load = 100;
                }),
            ),
            wake(0, 1, TTWU),
        ),
        case(
            "4.14 NO_WA_BIAS keeps prev",
            "linux-4.14,NO_WA_BIAS",
            || flat(4),
            and(
                busy(&[0, 1, 2, 3], 1),
                f(|m, _| {
                    m.load(CpuId::new(0), 940);
                    m.load(CpuId::new(1), 1100);
                    m.tasks[P].load = 100;
                }),
            ),
            wake(0, 1, TTWU),
        ),
        case(
            "4.14 NO_WA_WEIGHT: undecided means prev",
            "linux-4.14,NO_WA_WEIGHT",
            || flat(4),
            and(
                busy(&[0, 1, 2, 3], 1),
                f(|m, _| {
                    m.load(CpuId::new(0), 940);
                    m.load(CpuId::new(1), 1100);
                    m.tasks[P].load = 100;
                }),
            ),
            wake(0, 1, TTWU),
        ),
        // avg_idle 0 -> SIS_PROP nr 4 -> 3 CPUs probed (0 is the waker's), 7 never reached.
        case(
            "4.14 SIS_PROP budget",
            "linux-4.14",
            || flat(8),
            and(
                busy(&[0, 1, 2, 3, 4, 5, 6], 1),
                f(|m, _| m.cpus[0].avg_idle = 0),
            ),
            irq(0, 0),
        ),
        case(
            "4.14 NO_SIS_PROP scans the LLC",
            "linux-4.14,NO_SIS_PROP",
            || flat(8),
            and(
                busy(&[0, 1, 2, 3, 4, 5, 6], 1),
                f(|m, _| m.cpus[0].avg_idle = 0),
            ),
            irq(0, 0),
        ),
        case(
            "4.14 SIS_AVG_CPU skips the scan",
            "linux-4.14,SIS_AVG_CPU,NO_SIS_PROP",
            || flat(8),
            and(
                busy(&[0, 1, 2, 3, 4, 5, 6], 1),
                f(|m, _| m.cpus[0].avg_idle = 0),
            ),
            irq(0, 0),
        ),
        // ---------------- 5.13 (5.12 merged scan) ----------------
        case(
            "5.13 recent_used_cpu",
            "linux-5.13",
            || flat(8),
            and(
                busy(&[0, 1, 2, 3, 4, 6, 7], 1),
                f(|_, h| h.task[P].recent_used_cpu = Some(CpuId::new(5))),
            ),
            wake(0, 3, TTWU),
        ),
        case(
            "5.13 idle SMT sibling of prev when no idle core",
            "linux-5.13",
            smt8,
            and(
                busy(&[0, 1, 2, 3], 1),
                f(|_, h| h.llc[0].has_idle_cores = false),
            ),
            irq(1, 1),
        ),
        case(
            "5.13 idle core pass from target+1",
            "linux-5.13",
            smt8,
            busy(&[1, 2], 1),
            irq(1, 1),
        ),
        case(
            "5.13 idle core pass falls back to the first idle thread",
            "linux-5.13",
            smt8,
            busy(&[0, 1, 2, 3], 1),
            irq(1, 1),
        ),
        // ---------------- 6.0 SIS_UTIL (70fb5ccf2ebb, worked example) ----------------
        case(
            "6.0 SIS_UTIL budget 12 reaches CPU 12",
            "linux-6.0",
            || flat(16),
            and(
                busy(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15], 1),
                f(|_, h| h.llc[0].nr_idle_scan = 12),
            ),
            irq(0, 0),
        ),
        case(
            "6.0 SIS_UTIL budget 12 stops before CPU 13",
            "linux-6.0",
            || flat(16),
            and(
                busy(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15], 1),
                f(|_, h| h.llc[0].nr_idle_scan = 12),
            ),
            irq(0, 0),
        ),
        case(
            "6.0 NO_SIS_UTIL scans on",
            "linux-6.0,NO_SIS_UTIL",
            || flat(16),
            and(
                busy(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15], 1),
                f(|_, h| h.llc[0].nr_idle_scan = 12),
            ),
            irq(0, 0),
        ),
        // ---------------- 6.6 ----------------
        case(
            "6.6 NO_SIS_UTIL,SIS_PROP: nr 4 from an empty wake_avg_idle",
            "linux-6.6,NO_SIS_UTIL,SIS_PROP",
            || flat(16),
            busy(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15], 1),
            irq(0, 0),
        ),
        // worked example: LLC 10, flips 150/12 -> wide; scan from prev+1 finds 6.
        case(
            "6.6 worked example, wake_wide 150/12 is wide",
            "linux-6.6",
            || flat(10),
            and(busy(&[0, 5], 1), flips(150, 12)),
            wake(0, 5, TTWU),
        ),
        case(
            "6.6 worked example, wake_wide 150/9 is not",
            "linux-6.6",
            || flat(10),
            and(busy(&[0, 5], 1), flips(150, 9)),
            wake(0, 5, TTWU),
        ),
        case(
            "6.6 NO_WAKE_WIDE",
            "linux-6.6,NO_WAKE_WIDE",
            || flat(10),
            and(busy(&[0, 5], 1), flips(150, 12)),
            wake(0, 5, TTWU),
        ),
        case(
            "6.6 sync pull to a waker running alone",
            "linux-6.6",
            || flat(10),
            busy(&[0, 5], 1),
            wake(0, 5, SYNC),
        ),
        case(
            "6.6 NO_WAKE_AFFINE",
            "linux-6.6,NO_WAKE_AFFINE",
            || flat(10),
            busy(&[0, 5], 1),
            wake(0, 5, SYNC),
        ),
        case(
            "6.6 NO_SELECT_IDLE_SIBLING",
            "linux-6.6,NO_SELECT_IDLE_SIBLING",
            || flat(10),
            busy(&[0, 5], 1),
            wake(0, 5, TTWU),
        ),
        case(
            "6.6 SIS_NODE off: stays in the busy LLC",
            "linux-6.6",
            one_node_two_llcs,
            busy(&[0, 1, 2, 3, 4, 5, 7], 1),
            irq(1, 1),
        ),
        case(
            "6.6 SIS_NODE scans the node's other LLC",
            "linux-6.6,SIS_NODE",
            one_node_two_llcs,
            busy(&[0, 1, 2, 3, 4, 5, 7], 1),
            irq(1, 1),
        ),
        case(
            "6.6 idle prev in another cluster is taken at once",
            "linux-6.6",
            kunpeng,
            busy(&[0, 1, 3], 1),
            wake(0, 8, SYNC),
        ),
        case(
            "6.6 fork: slow path to the idle node",
            "linux-6.6",
            two_nodes_smt,
            busy(&[0, 1, 4, 5], 1),
            wake(0, 0, wake_flags::FORK),
        ),
        // load-based slow path keeps descending on equal loads (0 < 0 is false).
        case(
            "3.10 fork: load-based slow path",
            "linux-3.10",
            two_nodes_smt,
            busy(&[0, 1, 4, 5], 1),
            wake(0, 0, wake_flags::FORK),
        ),
        // ---------------- 6.12 ----------------
        case(
            "6.12 cluster first: prev outside target's cluster is a fallback",
            "linux-6.12",
            kunpeng,
            busy(&[0, 1, 3], 1),
            wake(0, 8, SYNC),
        ),
        // aa3ee4f0b754 (6.16): the sync test leaves delayed tasks out; 6.12 counted them.
        case(
            "6.12 sync test counts delayed tasks",
            "linux-6.12",
            || flat(4),
            and(
                and(busy(&[0], 2), busy(&[1, 2, 3], 1)),
                f(|m, _| m.cpus[0].delayed = 1),
            ),
            wake(0, 1, SYNC),
        ),
        case(
            "6.12.y with the 6.16 fix ignores delayed tasks",
            "linux-6.12,SYNC_NR_RUNNABLE",
            || flat(4),
            and(
                and(busy(&[0], 2), busy(&[1, 2, 3], 1)),
                f(|m, _| m.cpus[0].delayed = 1),
            ),
            wake(0, 1, SYNC),
        ),
        case(
            "6.18 sync test ignores delayed tasks",
            "linux-6.18",
            || flat(4),
            and(
                and(busy(&[0], 2), busy(&[1, 2, 3], 1)),
                f(|m, _| m.cpus[0].delayed = 1),
            ),
            wake(0, 1, SYNC),
        ),
        case(
            "7.1 NO_SYNC_NR_RUNNABLE counts delayed tasks again",
            "linux-7.1,NO_SYNC_NR_RUNNABLE",
            || flat(4),
            and(
                and(busy(&[0], 2), busy(&[1, 2, 3], 1)),
                f(|m, _| m.cpus[0].delayed = 1),
            ),
            wake(0, 1, SYNC),
        ),
        case(
            "6.6 sync test counts delayed tasks",
            "linux-6.6",
            || flat(4),
            and(
                and(busy(&[0], 2), busy(&[1, 2, 3], 1)),
                f(|m, _| m.cpus[0].delayed = 1),
            ),
            wake(0, 1, SYNC),
        ),
    ]
}

#[test]
fn decision_table() {
    let cases = cases();
    assert!(cases.len() >= 70);
    let mut out = String::new();
    for c in &cases {
        let (got, rec, _, _) = run(c.variant, (c.topo)(), &c.setup, c.ctx);
        out.push_str(&format!("{} [{}]: cpu {got} {rec}\n", c.name, c.variant));
    }
    insta::assert_snapshot!(out);
}
