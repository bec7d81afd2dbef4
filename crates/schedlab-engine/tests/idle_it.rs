//! The cpuidle governor in the engine: what a wakeup of an idle CPU pays depends on the state
//! the governor chose when the CPU went idle (`idle.rs`), and a polling CPU needs no IPI.

mod common;

use common::{exact, pingpong, run_on_core2quad as run};
use schedlab_engine::profile::{Governor, IdleState};
use schedlab_engine::{ChannelKind, Dist, MachineProfile, Op, Simulation, TaskSpec, Workload};
use schedlab_topo::{CpuId, CpuSet};

fn profile(governor: Governor, poll: bool) -> MachineProfile {
    let mut p = exact();
    p.wakeup.governor = governor;
    if poll {
        p.wakeup.idle_states.insert(0, IdleState::poll());
    }
    p
}

/// A pipe ping-pong pinned to CPUs 0 and 2 (two LLCs): every wakeup goes to an idle CPU.
fn split_pingpong(loops: u64) -> Workload {
    pingpong(ChannelKind::pipe(), loops, 0, 2)
}

#[test]
fn a_polling_cpu_is_woken_without_an_ipi_or_an_exit() {
    let loops = 2000;
    let halt = run(profile(Governor::Elapsed, false), split_pingpong(loops));
    let poll = run(profile(Governor::Haltpoll, true), split_pingpong(loops));
    let (h, p) = (halt.counters(), poll.counters());
    assert!(
        h.ipis >= 2 * loops - 2 && h.wakeups_polling == 0,
        "{}",
        h.to_text()
    );
    // haltpoll halts the first idle of each CPU (its window starts at 0), then polls.
    assert!(p.wakeups_polling >= 2 * loops - 4, "{}", p.to_text());
    assert!(p.ipis <= 4, "{}", p.to_text());
    assert_eq!(p.idle_states[0].0, "POLL", "{}", p.to_text());
    // Each round trip saves two IPIs and two C1 exits.
    let d = MachineProfile::default();
    let saved = 2.0 * (d.wakeup.ipi_ns + d.wakeup.idle_states[0].exit_ns) as f64;
    let per_op = |s: &Simulation| s.now() as f64 / loops as f64;
    let got = per_op(&halt) - per_op(&poll);
    assert!(
        (got - saved).abs() < 0.1 * saved,
        "saved {got:.0} ns per round trip, expected {saved:.0}"
    );
}

/// Task `a` on CPU 0 sends to `b` on CPU 2 after sleeps of about 2 ms, three times, then
/// once more 300 µs later: `b`'s CPU, which has no timer of its own, idles three times for
/// about 2 ms and once for about 200 µs (300 µs less C6's exit) per round.
fn irregular_messages(rounds: u64) -> Workload {
    let mut w = Workload::new("irregular");
    let ch = w.channel(ChannelKind::pipe(), "p");
    let send = Op::Send {
        ch,
        bytes: Dist::Const(4),
    };
    let mut ops = vec![Op::Loop(rounds)];
    for d in [1_950_000, 2_050_000, 2_000_000] {
        ops.push(Op::Sleep(Dist::Const(d)));
        ops.push(send.clone());
    }
    ops.extend([Op::Compute(Dist::Const(300_000)), send, Op::EndLoop]);
    let mut a = TaskSpec::new("a", ops);
    let mut b = TaskSpec::new(
        "b",
        vec![Op::Loop(4 * rounds), Op::Recv { ch }, Op::EndLoop],
    );
    a.affinity = Some(CpuSet::from_cpus(4, [CpuId::new(0)]));
    b.affinity = Some(CpuSet::from_cpus(4, [CpuId::new(2)]));
    w.spawn(a);
    w.spawn(b);
    w
}

fn exits(s: &Simulation, name: &str) -> u64 {
    s.counters()
        .idle_states
        .iter()
        .find(|(n, _)| n == name)
        .map_or(0, |&(_, k)| k)
}

#[test]
fn menu_pays_a_deep_exit_for_a_short_idle_it_did_not_expect() {
    let rounds = 100;
    let menu = run(profile(Governor::Menu, false), irregular_messages(rounds));
    let ideal = run(
        profile(Governor::Elapsed, false),
        irregular_messages(rounds),
    );
    let text = |s: &Simulation| s.counters().to_text();
    // Elapsed: `b`'s 2 ms idles and `a`'s sleeps exit C6, `b`'s short idles C1.
    assert!(exits(&ideal, "C1") >= rounds - 1, "{}", text(&ideal));
    // menu: `b`'s CPU sees no typical interval and no timer, and predicts from the
    // corrected next event: once it has learnt, the short idles are entered in C6 too.
    assert!(exits(&menu, "C1") <= rounds / 5, "{}", text(&menu));
    let extra = menu.counters().idle_exit_ns as f64 - ideal.counters().idle_exit_ns as f64;
    let d = MachineProfile::default();
    let per_short = (d.wakeup.idle_states[1].exit_ns - d.wakeup.idle_states[0].exit_ns) as f64;
    assert!(
        extra >= 0.8 * rounds as f64 * per_short,
        "menu exits cost {extra:.0} ns more than the elapsed choice"
    );
}

#[test]
fn menu_knows_a_sleep_timer_armed_on_the_cpu() {
    // The same pattern from a task's own sleeps: the next timer is the sleep's, so menu
    // predicts each idle and enters C1 for the 5 µs sleeps and C6 for the 2 ms ones.
    let mut w = Workload::new("sleeper");
    let mut ops = vec![Op::Loop(100), Op::Sleep(Dist::Const(5_000))];
    for d in [1_950_000, 2_050_000, 2_000_000] {
        ops.push(Op::Compute(Dist::Const(1_000)));
        ops.push(Op::Sleep(Dist::Const(d)));
    }
    ops.push(Op::EndLoop);
    w.spawn(TaskSpec::new("sleeper", ops));
    let menu = run(profile(Governor::Menu, false), w);
    assert!(exits(&menu, "C1") >= 99, "{}", menu.counters().to_text());
    assert!(exits(&menu, "C6") >= 299, "{}", menu.counters().to_text());
}

#[test]
fn the_ipi_send_overlaps_its_delivery_and_a_polling_cpu_needs_none() {
    let loops = 2000;
    let with_send = |governor, poll, send| {
        let mut p = profile(governor, poll);
        p.wakeup.ipi_send_ns = send;
        run(p, split_pingpong(loops))
    };
    let per_op = |s: &Simulation| s.now() as f64 / loops as f64;
    let busy = |s: &Simulation| s.counters().busy_ns.iter().sum::<u64>() as f64 / loops as f64;
    let send = 800.0;
    let serial = with_send(Governor::Elapsed, false, 0);
    let overlapped = with_send(Governor::Elapsed, false, send as u64);
    // Two wakeups per round trip, each wakee arriving `send` earlier ...
    let earlier = per_op(&serial) - per_op(&overlapped);
    assert!(
        (earlier - 2.0 * send).abs() < 0.1 * 2.0 * send,
        "round trip {earlier:.0} ns shorter, expected {:.0}",
        2.0 * send
    );
    // ... while the wakers still do the same work.
    let (b0, b1) = (busy(&serial), busy(&overlapped));
    assert!(
        (b0 - b1).abs() < 0.02 * b0,
        "busy {b0:.0} vs {b1:.0} ns per round trip"
    );
    // A polling CPU needs no IPI, so its wakers do not send one.
    let polled0 = with_send(Governor::Haltpoll, true, 0);
    let polled = with_send(Governor::Haltpoll, true, send as u64);
    let less = busy(&polled0) - busy(&polled);
    assert!(
        (less - 2.0 * send).abs() < 0.1 * 2.0 * send,
        "polling: wakers {less:.0} ns per round trip cheaper, expected {:.0}",
        2.0 * send
    );
}
