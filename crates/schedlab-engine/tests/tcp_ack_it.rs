//! TCP ACKs on loopback (issue 16, point 2; `sim/tcp_ack.rs`): a request-response pair
//! sends its ACKs on its replies after the first exchanges, a one-way stream of small
//! messages is acknowledged by the 40 ms delayed-ACK timer, large messages at once.

mod common;

use schedlab_engine::{
    ChannelKind, Counters, Dist, MachineProfile, Op, Simulation, TaskSpec, Workload,
};
use schedlab_topo::{CpuId, CpuSet, Topology};

fn two_cpus() -> Topology {
    schedlab_topo::regular("2x1", "test", 1, 1, 2, 1, false).unwrap()
}

fn pinned(mut t: TaskSpec, cpu: usize) -> TaskSpec {
    t.affinity = Some(CpuSet::from_cpus(2, [CpuId::new(cpu)]));
    t
}

fn send(ch: usize, bytes: u64) -> Op {
    Op::Send {
        ch,
        bytes: Dist::Const(bytes),
    }
}

fn run(w: Workload) -> (Simulation, Counters) {
    let sim = common::run_to_exit(two_cpus(), common::balancer(), w, false);
    let c = sim.counters().clone();
    (sim, c)
}

/// A client and a server over two TCP channels, `rounds` request-response exchanges.
fn request_response(rounds: u64) -> Workload {
    let mut w = Workload::new("rr");
    let req = w.channel(ChannelKind::tcp(), "req");
    let resp = w.channel(ChannelKind::tcp(), "resp");
    w.spawn(pinned(
        TaskSpec::new(
            "client",
            vec![
                Op::Loop(rounds),
                send(req, 100),
                Op::Recv { ch: resp },
                Op::EndLoop,
            ],
        ),
        0,
    ));
    w.spawn(pinned(
        TaskSpec::new(
            "server",
            vec![
                Op::Loop(rounds),
                Op::Recv { ch: req },
                Op::Compute(Dist::Const(5_000)),
                send(resp, 100),
                Op::EndLoop,
            ],
        ),
        1,
    ));
    w
}

/// `n` messages of `bytes`, one every `gap_ns`, from CPU 0 to a reader on CPU 1 that never
/// replies.
fn one_way(n: u64, bytes: u64, gap_ns: u64) -> Workload {
    let mut w = Workload::new("stream");
    let ch = w.channel(ChannelKind::tcp(), "data");
    w.spawn(pinned(
        TaskSpec::new(
            "writer",
            vec![
                Op::Loop(n),
                send(ch, bytes),
                Op::Sleep(Dist::Const(gap_ns)),
                Op::EndLoop,
            ],
        ),
        0,
    ));
    w.spawn(pinned(
        TaskSpec::new("reader", vec![Op::Loop(n), Op::Recv { ch }, Op::EndLoop]),
        1,
    ));
    w
}

#[test]
fn a_request_response_pair_sends_its_acks_on_its_replies() {
    let (_, c) = run(request_response(1000));
    // Only the first segment each way goes out before either side has replied.
    assert!(c.tcp_acks_now <= 2, "{}", c.to_text());
    assert_eq!(c.tcp_acks_delayed, 0, "{}", c.to_text());
    // Every other segment's ACK rides on the reply (the last request's on the last reply).
    assert!(c.tcp_acks_carried >= 1997, "{}", c.to_text());
}

#[test]
fn a_one_way_stream_is_acknowledged_by_the_delayed_ack_timer() {
    // 200 messages 10 ms apart: after 16 quick ACKs, one delayed ACK per 40 ms window.
    let (sim, c) = run(one_way(200, 100, 10_000_000));
    assert_eq!(c.tcp_acks_now, 16, "{}", c.to_text());
    assert_eq!(c.tcp_acks_carried, 0, "{}", c.to_text());
    let windows = (sim.now() - 16 * 10_000_000) / 40_000_000;
    assert!(
        c.tcp_acks_delayed >= windows - 1 && c.tcp_acks_delayed <= windows + 1,
        "{} delayed ACKs over {windows} windows\n{}",
        c.tcp_acks_delayed,
        c.to_text()
    );
}

#[test]
fn segments_larger_than_the_mss_are_acknowledged_at_once() {
    // 100 KB messages: more than one full-sized segment each.
    let (_, c) = run(one_way(50, 100_000, 1_000_000));
    assert_eq!(c.tcp_acks_now, 50, "{}", c.to_text());
    assert_eq!(c.tcp_acks_delayed, 0, "{}", c.to_text());
}

#[test]
fn an_ack_costs_its_softirq_work() {
    // The 16 quick ACKs each add one segment's receive work to the softirq time.
    let delivery = MachineProfile::default().transfer.tcp_delivery_ns;
    let (_, c) = run(one_way(16, 100, 1_000_000));
    assert_eq!(c.tcp_acks_now, 16);
    assert_eq!(
        c.softirq_ns,
        16 * delivery + 16 * delivery,
        "{}",
        c.to_text()
    );
}
