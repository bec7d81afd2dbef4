//! `replay`: workloads derived from synthetic traces whose answer is known by construction
//! (a ping-pong, a fork, a timer sleeper, lost events), then instantiated and run.

mod common;

use common::*;
use schedlab_engine::EndReason;
use schedlab_workloads::replay::{Background, DeriveOptions, Model, derive_reader};
use schedlab_workloads::{instantiate, parse_spec};

/// Builds tracefs `trace` text.
#[derive(Default)]
struct T {
    s: String,
}

impl T {
    fn line(&mut self, comm: &str, pid: u32, cpu: u32, ns: u64, body: &str) {
        self.s.push_str(&format!(
            "{comm:>16}-{pid:<7} [{cpu:03}] d..2. {}.{:06}: {body}\n",
            ns / 1_000_000_000,
            (ns / 1000) % 1_000_000
        ));
    }
    /// (comm, pid) are the tasks; 0 is idle.
    fn switch(&mut self, cpu: u32, ns: u64, prev: (&str, u32), state: &str, next: (&str, u32)) {
        self.line(
            prev.0,
            prev.1,
            cpu,
            ns,
            &format!(
                "sched_switch: prev_comm={} prev_pid={} prev_prio=120 prev_state={state} ==> next_comm={} next_pid={} next_prio=120",
                prev.0, prev.1, next.0, next.1
            ),
        );
    }
    fn waking(&mut self, cpu: u32, ns: u64, by: (&str, u32), wakee: (&str, u32), target: u32) {
        self.line(
            by.0,
            by.1,
            cpu,
            ns,
            &format!(
                "sched_waking: comm={} pid={} prio=120 target_cpu={target:03}",
                wakee.0, wakee.1
            ),
        );
    }
}

const IDLE0: (&str, u32) = ("swapper/0", 0);
const IDLE1: (&str, u32) = ("swapper/1", 0);
const A: (&str, u32) = ("ping", 100);
const B: (&str, u32) = ("pong", 101);

/// `rounds` round trips: A on CPU 0 runs 10 us, wakes B, sleeps 1 us later; B on CPU 1
/// runs 20 us, wakes A, sleeps.
fn ping_pong(rounds: u64) -> String {
    ping_pong_traced(rounds, false)
}

/// [`ping_pong`]; with `missing_switch_ins` as a 6.18 KVM guest traced it: the idle CPU 1
/// is woken by an IPI (`sched_wakeup` from the idle task, target CPU 1) and runs B with no
/// `sched_switch` idle ==> B; B's wakeup of A and its switch out are there.
fn ping_pong_traced(rounds: u64, missing_switch_ins: bool) -> String {
    let mut t = T::default();
    t.s.push_str("# tracer: nop\n#P:2\n");
    let mut now = 1_000_000_000;
    t.switch(0, now, IDLE0, "R", A);
    if missing_switch_ins {
        // CPU 1 is seen going idle first (a CPU never seen could be running anything).
        t.switch(1, now, ("other", 200), "S", IDLE1);
    }
    for _ in 0..rounds {
        now += 10_000;
        t.waking(0, now, A, B, 1);
        now += 1_000;
        t.switch(0, now, A, "S", IDLE0);
        now += 2_000;
        if missing_switch_ins {
            t.line(
                IDLE1.0,
                IDLE1.1,
                1,
                now,
                "sched_wakeup: comm=pong pid=101 prio=120 target_cpu=001",
            );
        } else {
            t.switch(1, now, IDLE1, "R", B);
        }
        now += 20_000;
        t.waking(1, now, B, A, 0);
        now += 1_000;
        t.switch(1, now, B, "S", IDLE1);
        now += 2_000;
        t.switch(0, now, IDLE0, "R", A);
    }
    now += 5_000;
    t.switch(0, now, A, "S", IDLE0);
    t.s
}

fn opts(model: Model) -> DeriveOptions {
    DeriveOptions {
        model,
        only: vec![],
        background: Background::Keep,
        name: "test".into(),
        source: "a test".into(),
        op_cost_ns: 0,
        wake_cost_ns: (0, 0),
        switch_cost_ns: 0,
        handoffs: true,
    }
}

fn run_toml(toml: &str) -> (schedlab_engine::Simulation, EndReason) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("w.toml");
    std::fs::write(&p, toml).unwrap();
    let topo = quad();
    let inst = instantiate(
        &parse_spec(&format!("file:{}", p.display())).unwrap(),
        &topo,
    )
    .unwrap_or_else(|e| panic!("{e}\n{toml}"));
    run_instance(&inst, &topo, 1)
}

#[test]
fn a_ping_pong_becomes_two_tasks_on_two_channels_in_one_loop() {
    let d = derive_reader(ping_pong(50).as_bytes(), &opts(Model::Empirical)).unwrap();
    assert_eq!(d.edges, 2);
    assert_eq!(d.edge_wakeups, 100);
    assert_eq!(d.tasks.len(), 2);
    let t = &d.toml;
    assert!(t.contains("name = \"100>101\""), "{t}");
    assert!(t.contains("name = \"101>100\""), "{t}");
    // Every wakeup was followed by the waker sleeping 1 us later: all sync-like.
    assert!(t.contains("50 wakeups, 50 sync-like"), "{t}");
    // A: 10 us, send, 1 us, recv, ... B: recv, 20 us, send, 1 us.
    assert!(t.contains("{ op = \"compute\", time = \"20us\" }"), "{t}");
    assert!(t.contains("{ op = \"compute\", time = \"1us\" }"), "{t}");
    assert!(t.contains("op = \"loop\", count = 50"), "{t}");
    // CPU time: A 11 us per round + 5 us at the end; B 21 us per round.
    let cpu: Vec<u64> = d.tasks.iter().map(|t| t.cpu_ns).collect();
    assert_eq!(cpu, vec![50 * 11_000 + 5_000, 50 * 21_000]);
    assert_eq!(d.warnings.lines(), Vec::<String>::new());
    let (sim, end) = run_toml(t);
    assert!(matches!(end, EndReason::AllExited), "{end:?}");
    let c = sim.counters();
    // 100 wakeups (plus none): each send found its receiver asleep or its message waiting.
    assert!(c.wakeups >= 90 && c.wakeups <= 100, "{}", c.wakeups);
}

#[test]
fn the_fitted_model_writes_distributions_and_still_runs() {
    let mut text = ping_pong(20);
    // Vary A's bursts so a distribution is needed.
    text = text.replace("1.000010:", "1.000013:");
    let d = derive_reader(text.as_bytes(), &opts(Model::Fitted)).unwrap();
    let (_, end) = run_toml(&d.toml);
    assert!(matches!(end, EndReason::AllExited), "{end:?}\n{}", d.toml);
}

#[test]
fn a_wakeup_from_idle_is_a_timed_sleep_and_forks_are_forks() {
    let mut t = T::default();
    t.s.push_str("#P:2\n");
    t.switch(0, 1_000_000_000, IDLE0, "R", A);
    t.line(
        "ping",
        100,
        0,
        1_000_010_000,
        "sched_process_fork: comm=ping pid=100 child_comm=ping child_pid=102",
    );
    t.switch(0, 1_000_020_000, A, "S", IDLE0);
    // The timer (idle on CPU 0) wakes A after 500 us.
    t.waking(0, 1_000_520_000, IDLE0, A, 0);
    t.switch(0, 1_000_521_000, IDLE0, "R", A);
    t.switch(1, 1_000_530_000, IDLE1, "R", ("ping", 102));
    t.switch(1, 1_000_560_000, ("ping", 102), "X", IDLE1);
    t.switch(0, 1_000_600_000, A, "S", IDLE0);
    let d = derive_reader(t.s.as_bytes(), &opts(Model::Empirical)).unwrap();
    let toml = &d.toml;
    assert!(
        toml.contains("{ op = \"fork\", task = \"ping-102\" }"),
        "{toml}"
    );
    assert!(
        toml.contains("start = false  # forked by ping-100"),
        "{toml}"
    );
    assert!(
        toml.contains("{ op = \"sleep\", time = \"500us\" }"),
        "{toml}"
    );
    assert_eq!(d.warnings.irq_wakeups, 1);
    let (sim, end) = run_toml(toml);
    assert!(matches!(end, EndReason::AllExited), "{end:?}");
    // The engine counts every task it creates: the started one and its fork.
    assert_eq!(sim.counters().forks, 2);
}

#[test]
fn lost_events_and_late_threads_are_counted_and_still_give_a_runnable_workload() {
    let mut text = ping_pong(10);
    // Drop B's second switch-in (as a lost event would) and say so like tracefs does: its
    // switch out then contradicts CPU 1 being idle.
    let victim = text
        .lines()
        .filter(|l| l.contains("next_comm=pong"))
        .nth(1)
        .unwrap()
        .to_string();
    text = text.replacen(&format!("{victim}\n"), "CPU:1 [LOST 3 EVENTS]\n", 1);
    // A thread that shows up late.
    text.push_str(&format!(
        "{:>16}-{:<7} [001] d..2. 1.900000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=late next_pid=300 next_prio=130\n",
        "<idle>", 0
    ));
    text.push_str(&format!(
        "{:>16}-{:<7} [001] d..2. 1.900100: sched_switch: prev_comm=late prev_pid=300 prev_prio=130 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120\n",
        "late", 300
    ));
    let d = derive_reader(text.as_bytes(), &opts(Model::Empirical)).unwrap();
    let w = &d.warnings;
    assert_eq!(w.lost_events, 3);
    assert!(w.inconsistent_switches >= 1, "{w:?}");
    assert_eq!(w.appeared_mid_trace, 1);
    let lines = w.lines().join("\n");
    assert!(lines.contains("3 events lost"), "{lines}");
    assert!(d.toml.contains("# warning: 3 events lost"), "{}", d.toml);
    // Priority 130: nice 10.
    assert!(d.toml.contains("nice = 10"), "{}", d.toml);
    let (_, end) = run_toml(&d.toml);
    assert!(matches!(end, EndReason::AllExited), "{end:?}");
}

#[test]
fn only_keeps_the_named_threads_and_turns_other_wakers_into_sleeps() {
    let mut o = opts(Model::Empirical);
    o.only = vec!["pong".into()];
    o.background = Background::Drop;
    let d = derive_reader(ping_pong(5).as_bytes(), &o).unwrap();
    assert_eq!(d.tasks.len(), 1);
    assert!(!d.toml.contains("[[channel]]"), "{}", d.toml);
    assert!(d.toml.contains("op = \"sleep\""), "{}", d.toml);
    o.only = vec!["nobody".into()];
    let e = derive_reader(ping_pong(5).as_bytes(), &o)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--only nobody") && e.contains("pong (101)"),
        "{e}"
    );
    o.only = vec!["101".into()];
    o.background = Background::Fold;
    let d = derive_reader(ping_pong(5).as_bytes(), &o).unwrap();
    assert!(d.toml.contains("name = \"background-cpu0\""), "{}", d.toml);
    let (_, end) = run_toml(&d.toml);
    assert!(matches!(end, EndReason::AllExited), "{end:?}");
}

#[test]
fn a_truncated_trace_derives_up_to_the_cut() {
    let text = ping_pong(10);
    let cut = &text[..text.len() - 30];
    let d = derive_reader(cut.as_bytes(), &opts(Model::Empirical)).unwrap();
    assert!(d.warnings.truncated);
    let (_, end) = run_toml(&d.toml);
    assert!(matches!(end, EndReason::AllExited), "{end:?}");
}

#[test]
fn an_empty_trace_is_an_error() {
    let e = derive_reader("# tracer: nop\n".as_bytes(), &opts(Model::Empirical)).unwrap_err();
    assert!(e.to_string().contains("no sched_switch"), "{e}");
}

#[test]
fn a_switch_in_missing_after_a_wakeup_onto_an_idle_cpu_is_implied() {
    let d = derive_reader(
        ping_pong_traced(50, true).as_bytes(),
        &opts(Model::Empirical),
    )
    .unwrap();
    // The same two edges as the complete trace: B's wakeups are B's, not interrupts.
    assert_eq!(d.edges, 2);
    assert_eq!(d.edge_wakeups, 100);
    assert!(d.toml.contains("50 wakeups, 50 sync-like"), "{}", d.toml);
    assert_eq!(d.warnings.implied_switches, 50);
    assert_eq!(d.warnings.irq_wakeups, 0);
    assert_eq!(d.warnings.inconsistent_switches, 0);
    // B runs from its wakeup to its switch out: 21 us per round, as in the full trace.
    let cpu: Vec<u64> = d.tasks.iter().map(|t| t.cpu_ns).collect();
    assert_eq!(cpu, vec![50 * 11_000 + 5_000, 50 * 21_000]);
    // The real side of `replay check` counts it the same way.
    let trace = schedlab_trace::parse_ftrace_text(&ping_pong_traced(50, true)).unwrap();
    let by_pid = schedlab_workloads::replay::cpu_by_pid(&trace);
    assert_eq!(by_pid.get(&101), Some(&(50 * 21_000)));
}

#[test]
fn auto_op_cost_takes_the_wakeup_and_switch_work_off_the_bursts_around_them() {
    let mut o = opts(Model::Empirical);
    // Local 100 ns, remote 400 ns; 250 ns per switch into a woken task.
    o.wake_cost_ns = (100, 400);
    o.switch_cost_ns = 250;
    let d = derive_reader(ping_pong_traced(50, true).as_bytes(), &o).unwrap();
    let t = &d.toml;
    // A's 1 us after waking B (traced onto CPU 1: remote) loses 400 ns; B's 1 us after
    // waking A (no sched_wakeup: taken as local) loses 100 ns.
    assert!(
        t.contains("{ op = \"compute\", time = \"0.600us\" }"),
        "{t}"
    );
    assert!(
        t.contains("{ op = \"compute\", time = \"0.900us\" }"),
        "{t}"
    );
    // What each runs after it is woken loses the switch: A 10 us (but its first burst,
    // which follows no wakeup), B 20 us.
    assert!(
        t.contains("values = [\"9.750us\", \"10us\"], weights = [49, 1]"),
        "{t}"
    );
    assert!(
        t.contains("{ op = \"compute\", time = \"19.750us\" }"),
        "{t}"
    );
}
