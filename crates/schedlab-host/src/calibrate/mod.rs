//! `schedlab host calibrate`: measures the machine's costs and writes them as a machine profile
//! (`schedlab.profile/1`, the simulator's format, written through `schedlab_profile`).
//!
//! What is measured, and how (all timestamps CLOCK_MONOTONIC):
//!
//! * `syscall_ns`: a raw `getppid` system call in a loop.
//! * `ctx_switch_ns` / `ctx_switch_mm_ns`: 4-byte pipe ping-pong with both sides pinned to one
//!   CPU (threads / processes); a round trip is two switches plus two pipe write+read pairs, so
//!   `(round trip - 2 × write+read) / 2`, the write+read pair measured without blocking.
//! * pipe round trips, stacked and across one CPU pair of each class present (SMT sibling,
//!   same LLC, other LLC, other node; classes from `schedlab_topo`'s reading of /sys): reported, and the base of:
//! * `copy_ns_per_byte`: 64 KiB vs 4 B ping-pong stacked, per byte moved each way;
//!   `<class>_ns_per_byte`: the same across a pair of that class, minus the stacked cost.
//! * `refetch_<class>_ns`: a 256 KiB buffer written on one CPU, then read on a CPU of that
//!   class, minus the same read once hot, per 64-byte line.
//! * `local_wake_ns` / `remote_wake_ns`: the waker's FUTEX_WAKE time with the wakee blocked on
//!   the waker's CPU (a `SCHED_IDLE` wakee, which does not preempt the waker on the way out)
//!   / on an idle CPU, minus `syscall_ns`.
//! * `remote_busy_wake_ns`: the same with a `SCHED_IDLE` wakee blocked on a CPU of the same
//!   LLC that runs a spinner: the remote runqueue lock and enqueue, without an IPI.
//! * wake-up latency to an idle CPU (futex wake to the wakee running there): the waker's
//!   syscall and `remote_wake_ns`, then the IPI, then the idle exit, as the simulator charges
//!   them; the IPI cannot be split from the exit from user space, so `ipi_ns` keeps its default
//!   and the C1 `exit_ns` gets the rest.
//! * `smt_speed[1]`: per-thread speed of a busy loop with its SMT sibling busy too.
//!
//! Each measurement runs in batches until the last 5 batch values lie within 5 % of their
//! median, or until its share of the time budget or a batch cap is used up; one that does not
//! settle is measured once more from scratch and then flagged `(not stable)`. The profile
//! records the median, the number of batches and the spread. A value derived by subtraction
//! that comes out zero or negative is rejected (the default stands, with the reason). Keys this machine cannot measure
//! keep the simulator's defaults, with a comment saying why.

//!
//! The rooms: `host` (which CPUs, how they are placed, what machine this is), `stats` (the
//! batch loop and its median), `probes` (the measuring loops on pinned threads), `calibrate`
//! below (which probe feeds which profile key), and `profile_text` (the profile file and the
//! report).

mod host;
mod probes;
mod profile_text;
mod stats;

pub use host::HostCpus;

use crate::control::Deadline;
use crate::error::HostError;
use crate::sys::{self, NEVER};
use probes::{futex_wakes, futex_wakes_busy, ping_pong, refetch_per_line, spin_rate, tcp_pair};
use schedlab_topo::CpuId;
use schedlab_vocab::DistanceClass;
use stats::{measure, median, ns_since};
use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

/// How long and how hard to measure.
#[derive(Clone, Debug)]
pub struct CalibrateOptions {
    /// Total time to spend, roughly.
    pub budget: Duration,
    /// Most batches per measurement.
    pub max_batches: usize,
    /// Batches whose values must agree for a measurement to count as stable.
    pub stable_batches: usize,
    /// Relative spread (max-min)/median under which those batches agree.
    pub tolerance: f64,
    /// The sysfs tree read for the CPUs, caches and the cpuidle driver (normally `/sys`;
    /// another root describes another machine's layout, e.g. a test's fixture of a guest).
    pub sysfs_root: std::path::PathBuf,
}

impl Default for CalibrateOptions {
    fn default() -> Self {
        CalibrateOptions {
            budget: Duration::from_secs(18),
            max_batches: 15,
            stable_batches: 5,
            tolerance: 0.05,
            sysfs_root: "/sys".into(),
        }
    }
}

impl CalibrateOptions {
    /// A short run (about 2 s) for tests and smoke checks: fewer, shorter batches.
    pub fn quick() -> Self {
        CalibrateOptions {
            budget: Duration::from_secs(2),
            max_batches: 6,
            stable_batches: 3,
            tolerance: 0.10,
            sysfs_root: "/sys".into(),
        }
    }
}

/// A repeated measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    /// Median of the final batches, in the key's unit.
    pub value: f64,
    /// Batches run.
    pub runs: usize,
    /// (max - min) / median of the final batches.
    pub spread: f64,
    /// Whether the final batches agreed within the tolerance.
    pub stable: bool,
}

impl Measurement {
    pub(crate) fn scaled(&self, value: f64) -> Measurement {
        Measurement {
            value,
            ..self.clone()
        }
    }
}

/// What `calibrate` measured.
#[derive(Clone, Debug)]
pub struct Calibration {
    /// CPU model name (/proc/cpuinfo).
    pub cpu_model: String,
    /// `uname -r`.
    pub kernel: String,
    /// Date of the measurement, `YYYY-MM-DD` (UTC).
    pub date: String,
    /// The topology the pairs were chosen from.
    pub topology: HostCpus,
    /// CPU pairs measured, per class.
    pub pairs: BTreeMap<DistanceClass, (CpuId, CpuId)>,
    /// Profile values measured, by `section.key` (e.g. `cpu.ctx_switch_ns`).
    pub measured: BTreeMap<String, Measurement>,
    /// Pipe round trip (4 B), ns: `stacked` and one entry per pair class measured.
    pub round_trips: BTreeMap<String, Measurement>,
    /// Wake-up latency to an idle CPU, ns, if a second CPU was available.
    pub idle_wakeup: Option<Measurement>,
    /// Wake-up latency to a CPU idle for each duration of `IDLE_LADDER_US` (µs), ns.
    pub idle_ladder: Vec<(u64, Measurement)>,
    /// Values whose derivation came out zero or negative (noise between the measurements
    /// subtracted): not written, the default stands.
    pub rejected: BTreeMap<String, Measurement>,
    /// The cpuidle governor to model, read from sysfs, and how it was read.
    pub governor: (schedlab_profile::Governor, String),
}

/// How long (µs) the wakee's CPU idles before the wake-ups of the idle-exit ladder. It runs
/// to 2 ms so that a flat ladder says the host has no deeper state within the idles a
/// benchmark's CPUs see between ticks (the schema's default deep state applies from 600 µs:
/// a ladder that stopped at 200 µs could not tell).
pub const IDLE_LADDER_US: [u64; 9] = [5, 10, 25, 50, 100, 200, 500, 1000, 2000];

/// The rung whose wake-ups give `wakeup.remote_wake_ns` and the idle wake-up latency (and
/// a flat ladder's one exit latency): long enough that the wakee's CPU is really idle, short
/// enough to repeat hundreds of times.
pub const WAKE_IDLE_US: u64 = 200;

/// The idle states the ladder shows, as `(exit latency, idle time from which it applies)`
/// pairs in ns (shallowest first), from wake-up latencies `lats` (ns) at [`IDLE_LADDER_US`]
/// minus `overhead` (the IPI, the waker's wake and syscall): what a cpuidle governor (or a
/// hypervisor's halt-polling) gives a CPU idle that long. One state when the latency does
/// not grow by a fifth from the shortest idle to the longest (its exit is the latency at
/// [`WAKE_IDLE_US`]); else a shallow state for short idles and a deep one from the first
/// idle whose latency is past the midpoint.
pub fn idle_states_from_ladder(lats: &[f64], overhead: f64) -> Vec<(f64, u64)> {
    let (Some(&short), Some(&long)) = (lats.first(), lats.last()) else {
        return Vec::new();
    };
    if long - short < 0.2 * long {
        let at = IDLE_LADDER_US
            .iter()
            .position(|&us| us == WAKE_IDLE_US)
            .and_then(|i| lats.get(i))
            .copied()
            .unwrap_or(long);
        return vec![(at - overhead, 0)];
    }
    let mid = (short + long) / 2.0;
    let from = IDLE_LADDER_US
        .iter()
        .zip(lats)
        .find(|&(_, &l)| l >= mid)
        .map_or(IDLE_LADDER_US[IDLE_LADDER_US.len() - 1], |(&us, _)| us);
    vec![(short - overhead, 0), (long - overhead, from * 1000)]
}

/// Measures the host (see the module docs). Takes about `opts.budget`.
pub fn calibrate(opts: &CalibrateOptions) -> Result<Calibration, HostError> {
    let deadline = Deadline::new(opts.budget * 3 + Duration::from_secs(30));
    let topology = HostCpus::read(&opts.sysfs_root, sys::allowed_cpus());
    let pairs = topology.representative_pairs();
    let a = topology.cpus.first().copied().unwrap_or(CpuId::new(0));
    // Measurements: syscall and pipe/unix/TCP write+read (half a share each), 2 stacked
    // ping-pongs, 64 KiB stacked, and per class a 4 B and a 64 KiB ping-pong; plus the short
    // fixed-size ones.
    let slots = 6 + 2 * pairs.len() as u32;
    let share = opts.budget / slots.max(1);
    let mut measured = BTreeMap::new();
    let mut round_trips = BTreeMap::new();

    let syscall = measure(share / 2, opts, &deadline, |n| {
        let t = Instant::now();
        for _ in 0..n {
            // SAFETY: getppid has no arguments or side effects.
            unsafe { libc::syscall(libc::SYS_getppid) };
        }
        Ok(ns_since(t, n))
    })?;
    measured.insert("cpu.syscall_ns".to_string(), syscall.clone());

    // 4 bytes written to `w` and read back from `r` by this thread, per round.
    let write_read = |w: RawFd, r: RawFd| {
        measure(share / 2, opts, &deadline, |n| {
            let mut b = [0u8; 4];
            let t = Instant::now();
            for _ in 0..n {
                let _ = sys::write_all(w, &b, &NEVER);
                let _ = sys::read_exact(r, &mut b, &NEVER);
            }
            Ok(ns_since(t, n))
        })
    };
    let (pr, pw) = sys::pipe().map_err(|e| HostError::io("calibrate: pipe", e))?;
    let rw = write_read(pw.as_raw_fd(), pr.as_raw_fd())?;
    drop((pr, pw));
    // One write plus one read in the same thread: two syscalls and the channel's own kernel
    // work twice (the 4-byte copy is negligible).
    let op = |m: &Measurement| m.scaled((m.value - 2.0 * syscall.value) / 2.0);
    measured.insert("transfer.pipe_op_ns".into(), op(&rw));
    let (ua, ub) = sys::socketpair().map_err(|e| HostError::io("calibrate: socketpair", e))?;
    let unix_rw = write_read(ua.as_raw_fd(), ub.as_raw_fd())?;
    drop((ua, ub));
    measured.insert("transfer.unix_op_ns".into(), op(&unix_rw));
    // Loopback TCP: the send delivers into the peer's socket in the sender's context, so one
    // write plus one read is two syscalls, two socket ops and one delivery. User space cannot
    // split the op from the delivery: the delivery keeps the profile's default and the op
    // takes the rest.
    let (ta, tb) = tcp_pair().map_err(|e| HostError::io("calibrate: loopback TCP", e))?;
    let tcp_rw = write_read(ta.as_raw_fd(), tb.as_raw_fd())?;
    drop((ta, tb));
    // The schema's default delivery, which the profile keeps (it cannot be measured).
    let delivery = schedlab_profile::TransferCosts::default().tcp_delivery_ns as f64;
    measured.insert(
        "transfer.tcp_op_ns".into(),
        tcp_rw.scaled((tcp_rw.value - 2.0 * syscall.value - delivery) / 2.0),
    );

    let stacked = ping_pong(a, a, 4, false, share, opts, &deadline)?;
    let stacked_mm = ping_pong(a, a, 4, true, share, opts, &deadline)?;
    let ctx = |m: &Measurement| m.scaled((m.value - 2.0 * rw.value) / 2.0);
    measured.insert("cpu.ctx_switch_ns".into(), ctx(&stacked));
    measured.insert("cpu.ctx_switch_mm_ns".into(), ctx(&stacked_mm));
    round_trips.insert("stacked".to_string(), stacked.clone());
    round_trips.insert("stacked_processes".to_string(), stacked_mm);

    let big = 64 << 10;
    let per_byte = |big_rt: &Measurement, small_rt: &Measurement| {
        big_rt.scaled((big_rt.value - small_rt.value) / (2.0 * big as f64))
    };
    let stacked_big = ping_pong(a, a, big, false, share, opts, &deadline)?;
    let copy = per_byte(&stacked_big, &stacked);
    measured.insert("transfer.copy_ns_per_byte".into(), copy.clone());

    let line = topology.line_bytes.unwrap_or(64) as usize;
    for (&class, &(x, y)) in &pairs {
        let small = ping_pong(x, y, 4, false, share, opts, &deadline)?;
        let large = ping_pong(x, y, big, false, share, opts, &deadline)?;
        let pb = per_byte(&large, &small);
        measured.insert(
            format!("transfer.{}_ns_per_byte", class.key()),
            pb.scaled(pb.value - copy.value),
        );
        round_trips.insert(class.key().to_string(), small);
        let refetch = measure(share / 4, opts, &deadline, |_| refetch_per_line(x, y, line))?;
        measured.insert(format!("cache.refetch_{}_ns", class.key()), refetch);
        if class == DistanceClass::Smt {
            let alone = spin_rate(&[x], Duration::from_millis(50))?;
            let both = measure(share / 4, opts, &deadline, |_| {
                Ok(spin_rate(&[x, y], Duration::from_millis(30))? / alone)
            })?;
            measured.insert("cpu.smt_speed".into(), both);
        }
    }

    // Wake-ups: local (wakee on the waker's CPU) and to an idle remote CPU.
    let local = measure(share / 4, opts, &deadline, |n| {
        Ok(futex_wakes(a, a, n.min(200), Duration::from_micros(200))?.1)
    })?;
    measured.insert(
        "wakeup.local_wake_ns".into(),
        local.scaled(local.value - syscall.value),
    );
    let mut idle_wakeup = None;
    let mut idle_ladder = Vec::new();
    if let Some(&b) = topology.cpus.iter().find(|&&c| c != a) {
        // Onto a busy CPU of the same LLC (the pairs' LLC partner where the machine has
        // one), which takes the remote runqueue lock and no IPI.
        let (bx, by) = pairs.get(&DistanceClass::Llc).copied().unwrap_or((a, b));
        let busy = measure(share / 4, opts, &deadline, |n| {
            futex_wakes_busy(bx, by, n.min(200))
        })?;
        measured.insert(
            "wakeup.remote_busy_wake_ns".into(),
            busy.scaled(busy.value - syscall.value),
        );
        let mut wakes = Vec::new();
        for &us in &IDLE_LADDER_US {
            let long = us == WAKE_IDLE_US;
            let budget = if long { share } else { share / 4 };
            let lat = measure(budget, opts, &deadline, |n| {
                let (lat, wake) = futex_wakes(a, b, n.min(500), Duration::from_micros(us))?;
                if long {
                    wakes.push(wake);
                }
                Ok(lat)
            })?;
            idle_ladder.push((us, lat));
        }
        let lat = idle_ladder
            .iter()
            .find(|(us, _)| *us == WAKE_IDLE_US)
            .map_or_else(
                || idle_ladder[idle_ladder.len() - 1].1.clone(),
                |(_, m)| m.clone(),
            );
        let deepest = idle_ladder[idle_ladder.len() - 1].1.clone();
        let wake_m = lat.scaled(median(&mut wakes) - syscall.value);
        // The simulator delays a remote wakee by the waker's work before the IPI (its syscall
        // and `remote_wake_ns`), then `ipi_ns`, then the idle exit: the exit is what remains
        // of the measured latency once those are taken out. The exit depends on how long the
        // CPU was idle (the governor's state, or in a guest the host's halt-polling): the
        // ladder gives one idle state per level it shows.
        let ipi = schedlab_profile::WakeupCosts::default().ipi_ns as f64;
        let overhead = ipi + wake_m.value + syscall.value;
        measured.insert("wakeup.remote_wake_ns".into(), wake_m);
        let lats: Vec<f64> = idle_ladder.iter().map(|(_, m)| m.value).collect();
        let states = idle_states_from_ladder(&lats, overhead);
        if let [(exit, _)] = states[..] {
            measured.insert("wakeup.idle_states[0].exit_ns".into(), lat.scaled(exit));
        } else if let [(short, _), (long, from)] = states[..] {
            let first = idle_ladder[0].1.clone();
            measured.insert("wakeup.idle_states[0].exit_ns".into(), first.scaled(short));
            measured.insert(
                "wakeup.idle_states[0].target_residency_ns".into(),
                first.scaled(IDLE_LADDER_US[0] as f64 * 1000.0),
            );
            measured.insert("wakeup.idle_states[1].exit_ns".into(), deepest.scaled(long));
            measured.insert(
                "wakeup.idle_states[1].target_residency_ns".into(),
                deepest.scaled(from as f64),
            );
        }
        idle_wakeup = Some(lat);
    }

    // A value derived by subtraction can come out zero or negative when the parts taken out
    // were measured under different load: it is not a measurement and is never written.
    let mut rejected = BTreeMap::new();
    measured.retain(|k: &String, m: &mut Measurement| {
        let ok = m.value.is_finite() && m.value > 0.0;
        if !ok {
            rejected.insert(k.clone(), m.clone());
        }
        ok
    });

    Ok(Calibration {
        cpu_model: host::cpu_model(),
        kernel: host::kernel_release(),
        date: host::today(),
        topology,
        pairs,
        measured,
        round_trips,
        idle_wakeup,
        idle_ladder,
        rejected,
        governor: host::cpuidle(&opts.sysfs_root),
    })
}

#[cfg(test)]
mod ladder_tests {
    use super::idle_states_from_ladder;

    #[test]
    fn a_flat_ladder_is_one_state_and_a_step_is_two() {
        // 16 us at every idle up to 2 ms: one state, the 200 us idle's exit.
        let flat = [
            16_000.0, 16_200.0, 15_900.0, 16_100.0, 16_000.0, 16_300.0, 16_400.0, 16_100.0,
            16_500.0,
        ];
        assert_eq!(idle_states_from_ladder(&flat, 3_000.0), vec![(13_300.0, 0)]);
        // Cheap after short idles, dear from 50 us (a governor's deeper state, or a
        // hypervisor that stops halt-polling): the deep state applies from there.
        let step = [
            6_000.0, 6_500.0, 7_000.0, 15_000.0, 16_000.0, 16_500.0, 16_500.0, 16_500.0, 16_500.0,
        ];
        assert_eq!(
            idle_states_from_ladder(&step, 3_000.0),
            vec![(3_000.0, 0), (13_500.0, 50_000)]
        );
        // Flat to 200 us and dear from 1 ms: only the longer rungs show the deep state.
        let late = [
            6_000.0, 6_100.0, 6_000.0, 6_200.0, 6_100.0, 6_000.0, 6_300.0, 40_000.0, 41_000.0,
        ];
        assert_eq!(
            idle_states_from_ladder(&late, 3_000.0),
            vec![(3_000.0, 0), (38_000.0, 1_000_000)]
        );
        assert!(idle_states_from_ladder(&[], 0.0).is_empty());
    }
}
