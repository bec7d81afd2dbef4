//! The second half of `schedlab host calibrate` (the calibration fit): each calibrated value whose microbenchmark
//! the simulator can run is set so that the simulated microbenchmark reproduces the
//! measurement, and every such microbenchmark is re-simulated with the final profile and its
//! error printed.
//!
//! The host crate measures and derives a first value by subtraction (`calibrate/mod.rs`); that
//! value assumes the simulator charges the parts the way the derivation takes them out. Here
//! the simulator itself is the judge: the same ping-pong is simulated on the same CPUs (`-t
//! host`, the era closest to the running kernel) and the key is moved by a secant search until
//! the simulated round trip matches the measured one. Keys are fitted in order, each on the
//! microbenchmark it came from (averaged over a few seeds), so a later fit sees the earlier
//! ones:
//!
//! 1. `cpu.ctx_switch_ns` ← pipe ping-pong, two threads pinned to one CPU;
//! 2. `cpu.ctx_switch_mm_ns` ← the same with two processes;
//! 3. `wakeup.idle_states[0].exit_ns` ← pipe ping-pong, two threads on the nearest CPU pair
//!    (every wakeup there finds the other CPU idle for about half a round trip). If the
//!    exit would have to be 0 or less, it keeps its measured value and
//!    `wakeup.ipi_send_ns` (the part of the waker's remote wake work that sends the IPI and
//!    so overlaps its delivery; dear in a guest, where the send is a VM exit) is fitted on
//!    the same round trip, bounded by `remote_wake_ns`; at the bound the exit is fitted
//!    again on top of it.
//!
//! Round trips across farther pairs are re-simulated as checks only. A fit that would need a
//! value at or below zero keeps the closest positive value tried and says so: the simulated microbenchmark is
//! then dearer than the real one for another reason, which the printed error shows. Nothing
//! here reads the fidelity suite's results, and nothing is set per benchmark.

use crate::host_check::sim_side_on;
use anyhow::{Context, Result};
use schedlab_engine::MachineProfile;
use schedlab_topo::CpuId;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Round trips per simulated microbenchmark: enough that start-up is noise.
const LOOPS: u64 = 2_000;
/// A fit stops once the simulated value is within this of the measurement.
const FIT_TOL: f64 = 0.01;

/// One calibration microbenchmark the simulator can run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Target {
    /// What it is, e.g. `pipe round trip, threads, CPU 0-0`.
    pub what: String,
    /// The profile key fitted on it (`None`: re-simulated as a check only).
    pub key: Option<String>,
    /// The simulator's spec of the same microbenchmark.
    pub spec: String,
    /// The measured value, µs per round trip.
    pub measured_us: f64,
}

/// The microbenchmarks of a calibration that the simulator can run (see the module docs).
pub fn targets(c: &schedlab_host::Calibration) -> Vec<Target> {
    let a = c.topology.cpus.first().copied().unwrap_or(CpuId::new(0));
    let mut t = Vec::new();
    let pipe = |x: CpuId, y: CpuId, threads: bool| {
        format!(
            "pipe:loops={LOOPS},threads={},cpu_a={x},cpu_b={y}",
            if threads { "on" } else { "off" }
        )
    };
    if let Some(m) = c.round_trips.get("stacked") {
        t.push(Target {
            what: format!("pipe round trip, threads, CPU {a}-{a}"),
            key: Some("cpu.ctx_switch_ns".into()),
            spec: pipe(a, a, true),
            measured_us: m.value / 1e3,
        });
    }
    if let Some(m) = c.round_trips.get("stacked_processes") {
        t.push(Target {
            what: format!("pipe round trip, processes, CPU {a}-{a}"),
            key: Some("cpu.ctx_switch_mm_ns".into()),
            spec: pipe(a, a, false),
            measured_us: m.value / 1e3,
        });
    }
    // Pairs nearest first (the class order): the nearest fits the exit, the others check it.
    let mut first = true;
    for (class, &(x, y)) in &c.pairs {
        let Some(m) = c.round_trips.get(class.key()) else {
            continue;
        };
        t.push(Target {
            what: format!("pipe round trip, threads, CPU {x}-{y} ({})", class.key()),
            key: first.then(|| "wakeup.idle_states[0].exit_ns".to_string()),
            spec: pipe(x, y, true),
            measured_us: m.value / 1e3,
        });
        first = false;
    }
    t
}

/// One fitted or checked microbenchmark.
#[derive(Clone, Debug)]
pub struct FitRow {
    /// The target.
    pub target: Target,
    /// The key's value before and after the fit (`None` for a check).
    pub values: Option<(f64, f64)>,
    /// Simulated µs before the fit (with the derived value) and with the final profile.
    pub sim_before: f64,
    /// Simulated µs with the final profile.
    pub sim_after: f64,
    /// Why a fit kept the derived value, if it did.
    pub flag: Option<String>,
    /// When the exit could not match: the fitted `wakeup.ipi_send_ns`, and why that fit
    /// stopped short, if it did.
    pub overlap: Option<(f64, Option<String>)>,
}

/// Seeds each simulated microbenchmark is averaged over: a pinned ping-pong's wakeup
/// preemptions differ by seed, enough to mislead a secant step on one seed.
const SEEDS: u64 = 5;

fn sim_us(topo: &str, spec: &str, variant: &str, p: &MachineProfile) -> Result<f64> {
    let mut sum = 0.0;
    for seed in 1..=SEEDS {
        let (r, _) = sim_side_on(topo, spec, variant, p, seed)?;
        sum += r
            .metric("usecs_per_op")
            .map(|m| m.value)
            .context("the simulated pipe reported no usecs_per_op")?;
    }
    Ok(sum / SEEDS as f64)
}

/// The key fitted when the idle exit cannot match the cross-CPU round trip (see
/// [`fit`]), and its bound.
const OVERLAP_KEY: &str = "wakeup.ipi_send_ns";
const OVERLAP_BOUND: &str = "wakeup.remote_wake_ns";

/// A secant search of `key` on target `t` from the profile's value: the best value found,
/// its simulated µs, and why it stopped short, if it did. `max` bounds the value; `sign` is
/// the sign the slope must have (a larger exit makes the round trip longer, a larger
/// overlap shorter), anything else is noise.
#[allow(clippy::too_many_arguments)]
fn secant(
    topo: &str,
    variant: &str,
    p: &MachineProfile,
    key: &str,
    t: &Target,
    s0: f64,
    max: f64,
    sign: f64,
) -> Result<((f64, f64), Option<String>)> {
    let v0 = p
        .get_number(key)
        .with_context(|| format!("profile has no key {key}"))?;
    let (mut v, mut s) = (v0, s0);
    let mut prev = ((v0 * 1.25 + 100.0).min(max), f64::NAN);
    prev.1 = {
        let mut q = p.clone();
        q.set_number(key, prev.0)?;
        sim_us(topo, &t.spec, variant, &q)?
    };
    let err = |s: f64| ((s - t.measured_us) / t.measured_us).abs();
    let mut best = (v0, s0);
    let mut flag = None;
    // Enough steps to halve any value down to the floor (see below) and still converge.
    for _ in 0..16 {
        if err(s) <= FIT_TOL {
            break;
        }
        let slope = (prev.1 - s) / (prev.0 - v);
        let mut next = if slope.is_finite() && slope * sign > 0.0 {
            v + (t.measured_us - s) / slope
        } else {
            // Flat or noisy here (the seeds' preemptions differ): step toward the
            // measurement instead, halving or growing by half.
            if (s > t.measured_us) == (sign > 0.0) {
                v / 2.0
            } else {
                v * 1.5 + 100.0
            }
        };
        if next <= 1.0 && v > 2.0 {
            // A step past zero is as likely a slope misread from noisy seeds (a pinned
            // ping-pong's preemptions differ by seed) as a real floor: halve instead.
            next = v / 2.0;
        } else if next <= 1.0 {
            flag = Some(format!(
                "matching needs {key} <= 0 ({next:.0}): the simulated microbenchmark is \
                 dearer than the real one for another reason; the closest positive value stands"
            ));
            break;
        }
        let bounded = next > max;
        let next = next.min(max).round();
        let mut q = p.clone();
        q.set_number(key, next)?;
        let sn = sim_us(topo, &t.spec, variant, &q)?;
        prev = (v, s);
        (v, s) = (next, sn);
        if err(s) < err(best.1) {
            best = (v, s);
        }
        // At the bound and still on the same side of the measurement: it cannot be reached.
        if bounded && (s - t.measured_us).signum() == (prev.1 - t.measured_us).signum() {
            flag = Some(format!(
                "matching needs {key} above its bound {max:.0}; the bound stands"
            ));
            break;
        }
    }
    Ok((best, flag))
}

/// Sets each target's key by a secant search on the simulated microbenchmark on machine
/// `topo` (a `-t` spec: `host` live, the recorded compact form in tests), then re-simulates
/// every target with the final profile.
///
/// When the idle exit cannot bring the cross-CPU round trip down to the measured one (it
/// would have to be 0 or less), the exit keeps its measured value and the overlap of the
/// waker's IPI send with the delivery (`wakeup.ipi_send_ns`, a part of `remote_wake_ns`,
/// not separable from user space) is fitted on the same round trip instead.
pub fn fit(
    topo: &str,
    base: &MachineProfile,
    targets: &[Target],
    variant: &str,
) -> Result<(MachineProfile, Vec<FitRow>)> {
    let mut p = base.clone();
    let mut before = Vec::new();
    let mut outcome = Vec::new();
    for t in targets {
        let s0 = sim_us(topo, &t.spec, variant, &p)?;
        before.push(s0);
        let Some(key) = &t.key else {
            outcome.push((None, None, None));
            continue;
        };
        let v0 = p.get_number(key).unwrap_or_default();
        let ((v, _), flag) = secant(topo, variant, &p, key, t, s0, f64::INFINITY, 1.0)?;
        let mut overlap = None;
        if flag.is_some() && key == "wakeup.idle_states[0].exit_ns" {
            let max = p.get_number(OVERLAP_BOUND).unwrap_or_default();
            let ((o, _), oflag) = secant(topo, variant, &p, OVERLAP_KEY, t, s0, max, -1.0)?;
            p.set_number(OVERLAP_KEY, o)?;
            overlap = Some((p.get_number(OVERLAP_KEY).unwrap_or_default(), oflag.clone()));
            if oflag.is_none() {
                outcome.push((Some((v0, v0)), flag, overlap));
                continue;
            }
            // The whole remote wake overlapped is not enough: the exit is fitted again on
            // top of it.
            let s1 = sim_us(topo, &t.spec, variant, &p)?;
            let ((v1, _), flag1) = secant(topo, variant, &p, key, t, s1, f64::INFINITY, 1.0)?;
            p.set_number(key, v1)?;
            outcome.push((Some((v0, v1)), flag1, overlap));
            continue;
        }
        p.set_number(key, v)?;
        outcome.push((Some((v0, v)), flag, overlap));
    }
    let mut rows = Vec::new();
    for ((t, s0), (values, flag, overlap)) in targets.iter().zip(before).zip(outcome) {
        rows.push(FitRow {
            target: t.clone(),
            values,
            sim_before: s0,
            sim_after: sim_us(topo, &t.spec, variant, &p)?,
            flag,
            overlap,
        });
    }
    Ok((p, rows))
}

/// The notes `to_profile_toml_with` writes after each fitted key.
pub fn notes(rows: &[FitRow]) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for r in rows {
        let (Some(key), Some((v0, v))) = (&r.target.key, r.values) else {
            continue;
        };
        let err = (r.sim_after - r.target.measured_us) / r.target.measured_us * 100.0;
        let text = match &r.flag {
            Some(f) => format!("not fitted: {f}; simulated {:+.1}%", err),
            None => format!(
                "fitted by simulation from {v0:.0} to {v:.0} so that the simulated `{}` gives the measured {:.2} us ({:+.1}%)",
                r.target.spec, r.target.measured_us, err
            ),
        };
        m.insert(key.clone(), text);
        if let Some((o, oflag)) = &r.overlap {
            m.insert(
                OVERLAP_KEY.to_string(),
                match oflag {
                    Some(f) => format!("fitted to {o:.0}, stopped: {f}; simulated {err:+.1}%"),
                    None => format!(
                        "fitted by simulation from 0 to {o:.0} so that the simulated `{}` gives the measured {:.2} us ({err:+.1}%), the idle exit kept at its measured value",
                        r.target.spec, r.target.measured_us
                    ),
                },
            );
        }
    }
    m
}

/// The fit as a table: every re-simulated microbenchmark with its error.
pub fn render(rows: &[FitRow]) -> String {
    let mut s = format!(
        "\nre-simulated calibration microbenchmarks (us per round trip):\n{:<44} {:>9} {:>10} {:>9} {:>8}  key\n",
        "microbenchmark", "measured", "derived", "fitted", "error"
    );
    for r in rows {
        let err = (r.sim_after - r.target.measured_us) / r.target.measured_us * 100.0;
        let key = match (&r.target.key, r.values) {
            (Some(k), Some((v0, v))) => format!("{k} {v0:.0} -> {v:.0}"),
            _ => "check only".into(),
        };
        let _ = writeln!(
            s,
            "{:<44} {:>9.2} {:>10.2} {:>9.2} {:>+7.1}%  {key}{}",
            r.target.what,
            r.target.measured_us,
            r.sim_before,
            r.sim_after,
            err,
            r.flag
                .as_ref()
                .map_or(String::new(), |f| format!(" (not fitted: {f})"))
        );
        if let Some((o, oflag)) = &r.overlap {
            let _ = writeln!(
                s,
                "{:<44} {:>9} {:>10} {:>9} {:>8}  {OVERLAP_KEY} 0 -> {o:.0}{}",
                "  (same round trip, the IPI send overlapped)",
                "",
                "",
                "",
                "",
                oflag.as_ref().map_or(String::new(), |f| format!(" ({f})"))
            );
        }
    }
    s
}

/// A replayed fit's profile: the fitted profile with a note on each fitted key.
pub fn annotate(fitted: &MachineProfile, rows: &[FitRow], machine: &str) -> String {
    let notes = notes(rows);
    fitted.to_toml_annotated(
        &[format!(
            "fitted by `schedlab host calibrate --replay` from measurements on {machine}"
        )],
        |path| notes.get(path).cloned(),
    )
}

/// What `host calibrate --record` writes: what the fit starts from, so a test can redo it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Recorded {
    /// The CPU model and kernel it was measured on.
    pub machine: String,
    /// The era the fit simulated.
    pub variant: String,
    /// The machine as a `-t` spec (its compact form), so the fit can be redone elsewhere.
    pub topology: String,
    /// The derived profile (`Calibration::to_profile_toml`) before the fit.
    pub profile_toml: String,
    /// The microbenchmarks the fit uses.
    pub targets: Vec<Target>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host_suite::{RecordedSuite, value_of};
    use crate::stats::{distance, median};

    /// Measurements recorded on a 2-CPU AMD EPYC guest (kernel 6.18) by `schedlab host
    /// calibrate --record` and `schedlab host check --suite --quick --record`.
    const CALIBRATION: &str = include_str!("../tests/fixtures/host-epyc-2cpu/calibration.json");
    const SUITE: &str = include_str!("../tests/fixtures/host-epyc-2cpu/suite-quick.json");
    /// `calibrate --record` on the same guest, quiet (2026-12-01): its stacked round trips
    /// simulate differently by seed, and its cross-CPU round trip is out of the exit's reach.
    const QUIET: &str = include_str!("../tests/fixtures/host-epyc-2cpu/calibration-quiet.json");

    fn suite_distance(rec: &RecordedSuite, p: &MachineProfile) -> f64 {
        let pairs: Vec<(f64, f64)> = rec
            .rows
            .iter()
            .map(|row| {
                let (r, _) = sim_side_on(&rec.topology, &row.spec, &rec.variant, p, 1).unwrap();
                let sim = value_of(&r, &row.metric).unwrap();
                (median(&row.real), sim)
            })
            .collect();
        distance(&pairs)
    }

    #[test]
    fn the_fit_keeps_every_value_positive_and_reports_every_target() {
        let cal: Recorded = serde_json::from_str(CALIBRATION).unwrap();
        let base = MachineProfile::from_toml(&cal.profile_toml, "fixture").unwrap();
        let (fitted, rows) = fit(&cal.topology, &base, &cal.targets, &cal.variant).unwrap();
        assert_eq!(rows.len(), cal.targets.len());
        for r in &rows {
            if let Some(key) = &r.target.key {
                let v = fitted.get_number(key).unwrap();
                assert!(v > 0.0, "{key} = {v}");
                assert_eq!(r.values.map(|x| x.1), Some(v), "{key}");
            }
            assert!(r.sim_after > 0.0 && r.sim_after.is_finite(), "{r:?}");
        }
        // The cross-CPU round trip is what the idle exit is fitted on: it must land close.
        let cross = rows
            .iter()
            .find(|r| r.target.key.as_deref() == Some("wakeup.idle_states[0].exit_ns"))
            .expect("the fixture has a CPU pair");
        let err = (cross.sim_after - cross.target.measured_us) / cross.target.measured_us;
        assert!(err.abs() < 0.05, "{cross:?}");
    }

    #[test]
    fn calibrated_profile_is_no_further_from_the_host_than_the_generic_one() {
        let cal: Recorded = serde_json::from_str(CALIBRATION).unwrap();
        let rec: RecordedSuite = serde_json::from_str(SUITE).unwrap();
        let base = MachineProfile::from_toml(&cal.profile_toml, "fixture").unwrap();
        let (fitted, _) = fit(&cal.topology, &base, &cal.targets, &cal.variant).unwrap();
        let generic = suite_distance(&rec, &MachineProfile::default());
        let calibrated = suite_distance(&rec, &fitted);
        assert!(
            calibrated <= generic,
            "calibrated {calibrated:.3} is further from the recorded host than generic {generic:.3}"
        );
    }

    #[test]
    fn a_round_trip_the_exit_cannot_reach_fits_the_ipi_send_overlap() {
        // The fixture's machine with the generic profile and a guest's dear remote wake (the
        // IPI send is a VM exit), more of it than the idle exit.
        let cal: Recorded = serde_json::from_str(CALIBRATION).unwrap();
        let mut base = MachineProfile::default();
        base.wakeup.remote_wake_ns = 6000;
        // The cross-CPU round trip alone (the stacked ones would refit the switch costs).
        let mut targets: Vec<Target> = cal
            .targets
            .iter()
            .filter(|t| t.key.as_deref() == Some("wakeup.idle_states[0].exit_ns"))
            .cloned()
            .collect();
        let cross = targets.first_mut().expect("the fixture has a CPU pair");
        // A measured round trip 3 % below what the simulator gives with no exit at all, and
        // above what it gives with the exit and the whole remote wake overlapped.
        let sim = |p: &MachineProfile| sim_us(&cal.topology, &cross.spec, &cal.variant, p).unwrap();
        let mut no_exit = base.clone();
        no_exit.wakeup.idle_states[0].exit_ns = 1;
        let mut all_overlapped = base.clone();
        all_overlapped.wakeup.ipi_send_ns = base.wakeup.remote_wake_ns;
        let (high, low) = (sim(&no_exit), sim(&all_overlapped));
        cross.measured_us = 0.97 * high;
        assert!(
            low < 0.9 * cross.measured_us,
            "overlap reaches {low:.2}, target {:.2}",
            cross.measured_us
        );
        let (fitted, rows) = fit(&cal.topology, &base, &targets, &cal.variant).unwrap();
        let row = rows
            .iter()
            .find(|r| r.target.key.as_deref() == Some("wakeup.idle_states[0].exit_ns"))
            .unwrap();
        assert!(
            row.flag.as_deref().is_some_and(|f| f.contains("<= 0")),
            "{row:?}"
        );
        let (o, oflag) = row.overlap.clone().expect("the overlap was fitted");
        assert!(oflag.is_none(), "{oflag:?}");
        assert_eq!(fitted.wakeup.ipi_send_ns as f64, o);
        assert!(o > 0.0 && o <= fitted.wakeup.remote_wake_ns as f64, "{o}");
        // The exit keeps its measured value, and the round trip lands on the measurement.
        assert_eq!(
            fitted.wakeup.idle_states[0].exit_ns,
            base.wakeup.idle_states[0].exit_ns
        );
        let err = (row.sim_after - row.target.measured_us) / row.target.measured_us;
        assert!(err.abs() < 0.05, "{row:?}");
        assert!(notes(&rows)["wakeup.ipi_send_ns"].contains("fitted by simulation"));
    }

    #[test]
    fn a_quiet_calibration_fits_every_round_trip_despite_noisy_seeds() {
        let cal: Recorded = serde_json::from_str(QUIET).unwrap();
        let base = MachineProfile::from_toml(&cal.profile_toml, "fixture").unwrap();
        let (fitted, rows) = fit(&cal.topology, &base, &cal.targets, &cal.variant).unwrap();
        for r in &rows {
            let err = (r.sim_after - r.target.measured_us) / r.target.measured_us;
            // A first secant step misled by the seeds once left the stacked round trip
            // +36 % off; halving toward the measurement brings every one within 10 %.
            assert!(err.abs() < 0.10, "{r:?}");
        }
        // The derived switch costs hold the wake work the non-blocking write+read did not
        // see: the fit never raises them. (Before DELAY_ZERO was modelled the stacked pair
        // preempted on every wakeup and the fit had to lower them; now the pair's wakees
        // mostly do not preempt and the derived values already fit.)
        assert!(fitted.cpu.ctx_switch_ns <= base.cpu.ctx_switch_ns);
        assert!(fitted.cpu.ctx_switch_mm_ns <= base.cpu.ctx_switch_mm_ns);
        // The exit alone cannot reach the cross-CPU round trip; the IPI send overlap does.
        assert!(fitted.wakeup.ipi_send_ns > 0, "{rows:?}");
        assert!(fitted.wakeup.ipi_send_ns <= fitted.wakeup.remote_wake_ns);
    }

    /// A fitted switch cost, a check, and an idle exit that could not match and left the
    /// round trip to the IPI send overlap.
    fn three_rows() -> Vec<FitRow> {
        let target = |what: &str, key: Option<&str>, measured_us| Target {
            what: what.into(),
            key: key.map(str::to_string),
            spec: format!("pipe:{what}"),
            measured_us,
        };
        vec![
            FitRow {
                target: target("stacked", Some("cpu.ctx_switch_ns"), 4.0),
                values: Some((1000.0, 1500.0)),
                sim_before: 3.0,
                sim_after: 4.1,
                flag: None,
                overlap: None,
            },
            FitRow {
                target: target("far pair", None, 10.0),
                values: None,
                sim_before: 9.0,
                sim_after: 9.5,
                flag: None,
                overlap: None,
            },
            FitRow {
                target: target("near pair", Some("wakeup.idle_states[0].exit_ns"), 20.0),
                values: Some((500.0, 500.0)),
                sim_before: 25.0,
                sim_after: 20.2,
                flag: Some("too low".into()),
                overlap: Some((800.0, None)),
            },
        ]
    }

    #[test]
    fn notes_say_how_each_fitted_key_was_set() {
        let n = notes(&three_rows());
        assert_eq!(n.len(), 3, "{n:?}");
        assert_eq!(
            n["cpu.ctx_switch_ns"],
            "fitted by simulation from 1000 to 1500 so that the simulated `pipe:stacked` gives the measured 4.00 us (+2.5%)"
        );
        assert_eq!(
            n["wakeup.idle_states[0].exit_ns"],
            "not fitted: too low; simulated +1.0%"
        );
        assert_eq!(
            n["wakeup.ipi_send_ns"],
            "fitted by simulation from 0 to 800 so that the simulated `pipe:near pair` gives the measured 20.00 us (+1.0%), the idle exit kept at its measured value"
        );
    }

    #[test]
    fn the_fit_table_has_a_line_per_microbenchmark_and_one_per_overlap() {
        assert_eq!(
            render(&three_rows()),
            "\nre-simulated calibration microbenchmarks (us per round trip):\n\
             microbenchmark                                measured    derived    fitted    error  key\n\
             stacked                                           4.00       3.00      4.10    +2.5%  cpu.ctx_switch_ns 1000 -> 1500\n\
             far pair                                         10.00       9.00      9.50    -5.0%  check only\n\
             near pair                                        20.00      25.00     20.20    +1.0%  wakeup.idle_states[0].exit_ns 500 -> 500 (not fitted: too low)\n\
             \x20 (same round trip, the IPI send overlapped)                                          wakeup.ipi_send_ns 0 -> 800\n"
        );
    }
}
