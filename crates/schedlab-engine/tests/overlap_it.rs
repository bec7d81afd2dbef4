//! The two sides of a pair at once, and shared-object contention (issue 16, points 3-4).
//!
//! A waker's syscall exit and the entry of its next blocking call run after the wakeup,
//! while a remote wakee starts; a shared object's lines move to the CPU of each operation.

mod common;

use common::{exact, pingpong, run_on_core2quad as run};
use schedlab_engine::ChannelKind;

/// ns per round trip of the pipe pair on (`ca`, `cb`) with `syscall_ns`.
fn round_trip(syscall_ns: u64, ca: usize, cb: usize) -> f64 {
    let loops = 2000;
    let mut p = exact();
    p.cpu.syscall_ns = syscall_ns;
    let sim = run(p, pingpong(ChannelKind::pipe(), loops, ca, cb));
    sim.now() as f64 / loops as f64
}

#[test]
fn a_remote_wakee_starts_while_its_waker_finishes_the_syscall() {
    // Four syscalls per round trip. Stacked on one CPU they run one after the other; split
    // over two CPUs, each side's write exit and read entry run while the other side wakes,
    // so only two of the four lie on the round trip's path.
    let extra = 1000;
    let stacked = round_trip(150 + extra, 0, 0) - round_trip(150, 0, 0);
    let split = round_trip(150 + extra, 0, 2) - round_trip(150, 0, 2);
    let e = extra as f64;
    assert!(
        (stacked - 4.0 * e).abs() < 0.05 * 4.0 * e,
        "stacked +{stacked} ns"
    );
    assert!(
        (split - 2.0 * e).abs() < 0.05 * 2.0 * e,
        "split +{split} ns"
    );
}

#[test]
fn overlap_is_counted_from_the_ipi_to_the_wakers_sleep() {
    let loops = 500;
    let p = exact();
    let syscall = p.cpu.syscall_ns;
    let split = run(p.clone(), pingpong(ChannelKind::pipe(), loops, 0, 2));
    let c = split.counters();
    // Each remote wakeup: the write's exit half and the read's entry half (plus the
    // pipe's lines on the entry) before the waker sleeps.
    let per = c.overlap_ns as f64 / c.wakeups_remote as f64;
    assert!(c.wakeups_remote >= 2 * loops - 2, "{}", c.to_text());
    assert!(
        per >= syscall as f64 && per < syscall as f64 + 500.0,
        "{per} ns per wakeup\n{}",
        c.to_text()
    );
    assert!(c.to_text().contains("overlap "), "{}", c.to_text());
    let stacked = run(p, pingpong(ChannelKind::pipe(), loops, 0, 0));
    assert_eq!(stacked.counters().overlap_ns, 0);
}

/// Contention cost of the pair on (`ca`, `cb`) over `kind`, by class.
fn contention(kind: ChannelKind, ca: usize, cb: usize) -> [u64; 4] {
    run(exact(), pingpong(kind, 1000, ca, cb))
        .counters()
        .contention_ns
}

#[test]
fn shared_objects_cost_by_the_distance_their_lines_travel() {
    let p = exact();
    // One CPU: the lines never leave it.
    assert_eq!(contention(ChannelKind::pipe(), 1, 1), [0; 4]);
    // The same operations, the lines crossing to the other core of the LLC or to the
    // other LLC: the cost scales with the per-line refetch cost of the distance.
    let near = contention(ChannelKind::pipe(), 0, 1);
    let far = contention(ChannelKind::pipe(), 0, 2);
    assert!(near[0] > 0 && near[1..] == [0; 3], "{near:?}");
    let ratio = far[0] as f64 / near[0] as f64;
    let expect = p.cache.refetch_cross_llc_ns / p.cache.refetch_llc_ns;
    assert!(
        (ratio - expect).abs() < 0.01 * expect,
        "{ratio} vs {expect}"
    );
    // Per crossing operation, the pipe's lines: each of the 4 operations of a round trip
    // (and the empty check before a sleep) finds them on the other CPU.
    let per_op = near[0] as f64 / (4.0 * 1000.0);
    let line = p.contention.pipe_lines * p.cache.refetch_llc_ns;
    assert!(
        per_op >= 0.9 * line && per_op <= 2.0 * line,
        "{per_op} vs {line}"
    );
    // A socket counts as a socket, with its own line count.
    let sock = contention(ChannelKind::unix(), 0, 2);
    assert!(sock[0] == 0 && sock[1] > 0, "{sock:?}");
    let expect = p.contention.socket_lines / p.contention.pipe_lines;
    let got = sock[1] as f64 / far[0] as f64;
    assert!((got - expect).abs() < 0.05 * expect, "{got} vs {expect}");
}

#[test]
fn zero_lines_turn_contention_off() {
    let mut p = exact();
    p.contention.pipe_lines = 0.0;
    let sim = run(p, pingpong(ChannelKind::pipe(), 200, 0, 2));
    assert_eq!(sim.counters().contention_ns, [0; 4]);
}
