//! The calibration as text: the machine profile file (every key of `schedlab.profile/1`,
//! measured ones with their median, runs and spread, the others at their defaults with the
//! reason) and the human-readable report.

use super::Calibration;
use super::host::absent_reason;
use schedlab_profile::{Governor, IdleState, MachineProfile};
use schedlab_topo::CpuId;
use schedlab_vocab::DistanceClass;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Measured floats are written to four decimals: more would be noise, not precision.
fn rounded(v: f64) -> f64 {
    (v * 1e4).round() / 1e4
}

/// How the value at profile key `id` is measured (see the module docs of `calibrate`).
pub(super) fn method(id: &str) -> &'static str {
    match id {
        "cpu.syscall_ns" => "a getppid loop",
        "cpu.ctx_switch_ns" => {
            "4 B pipe ping-pong, two threads pinned to one CPU: (round trip - 2 x write+read) / 2"
        }
        "cpu.ctx_switch_mm_ns" => {
            "4 B pipe ping-pong, two processes pinned to one CPU: (round trip - 2 x write+read) / 2"
        }
        "cpu.smt_speed" => "busy loop on an SMT pair, per-thread rate over the rate alone",
        "transfer.pipe_op_ns" | "transfer.unix_op_ns" => {
            "4 B write+read in one thread, minus 2 syscalls, halved"
        }
        "transfer.tcp_op_ns" => {
            "4 B loopback TCP write+read in one thread, minus 2 syscalls and the default delivery, halved"
        }
        "transfer.copy_ns_per_byte" => "64 KiB vs 4 B pipe ping-pong on one CPU, per byte each way",
        k if k.starts_with("transfer.") => {
            "64 KiB vs 4 B pipe ping-pong across a CPU pair of the class, per byte, minus copy_ns_per_byte"
        }
        k if k.starts_with("cache.refetch_") => {
            "256 KiB written on one CPU, read on a CPU of the class, minus the hot read, per line"
        }
        "wakeup.local_wake_ns" => {
            "FUTEX_WAKE time with a SCHED_IDLE wakee blocked on the waker's CPU (no preemption), minus syscall_ns"
        }
        "wakeup.remote_wake_ns" => {
            "FUTEX_WAKE time with the wakee blocked on an idle CPU, minus syscall_ns"
        }
        "wakeup.remote_busy_wake_ns" => {
            "FUTEX_WAKE time with a SCHED_IDLE wakee blocked on a busy CPU of the LLC (no IPI), \
             minus syscall_ns"
        }
        "wakeup.idle_states[0].exit_ns" => {
            "futex wake-up latency to a CPU idle 5 us (200 us when the idle ladder shows one \
             level), minus ipi_ns, remote_wake_ns and syscall_ns"
        }
        "wakeup.idle_states[0].target_residency_ns" => "the shortest idle of the ladder",
        "wakeup.idle_states[1].exit_ns" => {
            "futex wake-up latency to a CPU idle 2 ms (the ladder's longest idle), minus ipi_ns, \
             remote_wake_ns and syscall_ns"
        }
        "wakeup.idle_states[1].target_residency_ns" => {
            "the first idle of the ladder (5 us to 2 ms) whose wake-up latency is past the midpoint \
             of the shortest and the longest"
        }
        _ => "a microbenchmark",
    }
}

impl Calibration {
    fn class_present(&self, c: DistanceClass) -> bool {
        self.pairs.contains_key(&c)
    }

    /// Why a class-dependent key is not measured here.
    fn absent(&self, c: DistanceClass) -> String {
        if self.topology.cpus.len() < 2 {
            "not measurable here (one CPU available)".into()
        } else {
            format!("not measurable here ({})", absent_reason(c))
        }
    }

    /// Where a key's value comes from when it was not measured, by its path in the file.
    fn default_reason(&self, path: &str) -> String {
        use DistanceClass::*;
        let user = "not measurable from user space";
        let one_cpu = "not measurable here (one CPU available)";
        let deep = "not measurable here (deep idle states are not selected on demand)";
        let class_of = |k: &str| {
            DistanceClass::BETWEEN_CPUS.into_iter().find(|c| {
                k == format!("cache.refetch_{}_ns", c.key())
                    || k == format!("transfer.{}_ns_per_byte", c.key())
            })
        };
        if let Some(c) = class_of(path) {
            return self.absent(c);
        }
        match path {
            "cpu.smt_speed" => self.absent(Smt),
            "cpu.remote_memory_slowdown" if self.class_present(CrossNode) => {
                "not measured by this version".into()
            }
            "cpu.remote_memory_slowdown" => self.absent(CrossNode),
            "cache.line_bytes" => "sysfs has no coherency_line_size".into(),
            "transfer.tcp_delivery_ns" => "not separable from tcp_op_ns from user space \
                (tcp_op_ns takes the rest of a measured write+read)"
                .into(),
            "transfer.message_lines" => {
                "kernel metadata lines per message, not measurable from user space".into()
            }
            p if p.starts_with("contention.") => {
                "cache lines of a shared kernel object, not measurable from user space".into()
            }
            "wakeup.ipi_send_ns" => {
                "not separable from user space (`host calibrate` fits it on the \
                cross-CPU round trip when the idle exit alone cannot match it)"
                    .into()
            }
            "wakeup.ipi_ns" => {
                "not separable from the idle exit from user space (C1 exit_ns holds the rest)"
                    .into()
            }
            "wakeup.remote_wake_ns"
            | "wakeup.remote_busy_wake_ns"
            | "wakeup.idle_states[0].exit_ns" => one_cpu.into(),
            p if p.starts_with("wakeup.idle_states[0].") => user.into(),
            p if p.starts_with("wakeup.idle_states[") => deep.into(),
            "cpu.ctx_switch_ns" | "cpu.ctx_switch_mm_ns" | "cpu.syscall_ns" => user.into(),
            p if p.starts_with("transfer.") || p.starts_with("search.") => user.into(),
            "wakeup.ttwu_queue_delay_ns" | "wakeup.local_wake_ns" => user.into(),
            _ => "not measured by this version".into(),
        }
    }

    /// The profile this calibration measured: the schema's defaults with every measured key
    /// set, named `host`.
    pub fn profile(&self) -> MachineProfile {
        let mut p = MachineProfile {
            name: "host".into(),
            source: format!(
                "measured by `schedlab host calibrate` on {}, {}, kernel {}",
                self.date,
                self.cpu_model.replace('"', "'"),
                self.kernel
            ),
            ..MachineProfile::default()
        };
        if let Some(b) = self.topology.line_bytes {
            // A positive size from sysfs; a nonsensical one keeps the default.
            let _ = p.set_number("cache.line_bytes", b as f64);
        }
        for (id, m) in &self.measured {
            let path = if id == "cpu.smt_speed" {
                "cpu.smt_speed[1]"
            } else {
                id.as_str()
            };
            // Every id is a key of the schema (the tests check it); a value the schema
            // rejects (an SMT speed above 1 on a noisy machine) keeps the default.
            let _ = p.set_number(path, rounded(m.value));
        }
        p.wakeup.governor = self.governor.0;
        if !self.idle_ladder.is_empty() {
            // The host's idle states are the ones the ladder shows. A deeper one the
            // schema's defaults list (80 us exit from 600 us idle) was not measured, and a
            // ladder flat to 2 ms says the host has none there: kept, any idle of 600 us
            // would pay an exit the host never showed.
            let lats: Vec<f64> = self.idle_ladder.iter().map(|(_, m)| m.value).collect();
            let shown = super::idle_states_from_ladder(&lats, 0.0).len();
            p.wakeup.idle_states.truncate(shown.max(1));
        }
        if self.governor.0 == Governor::Haltpoll && !p.wakeup.idle_states[0].polling {
            // The haltpoll cpuidle driver's state 0: the poll loop before the halt.
            p.wakeup.idle_states.insert(0, IdleState::poll());
        }
        p
    }

    /// The note after a value line: the measurement's statistics, or why the default stands.
    fn note(
        &self,
        profile: &MachineProfile,
        fits: &BTreeMap<String, String>,
        path: &str,
    ) -> Option<String> {
        match path {
            "schema" | "name" | "source" => return None,
            p if p.ends_with(".name") => return None,
            "cache.line_bytes" if self.topology.line_bytes.is_some() => {
                return Some("measured: read from sysfs coherency_line_size".into());
            }
            "wakeup.governor" => {
                return Some(format!("measured: read from sysfs ({})", self.governor.1));
            }
            p if p.ends_with(".polling") => {
                return Some(
                    "measured: the haltpoll driver's poll loop, read from sysfs (cpuidle state 0)"
                        .into(),
                );
            }
            "transfer.same_cpu_ns_per_byte" => {
                return Some(
                    "measured: 0 by definition (the stacked cost is copy_ns_per_byte)".into(),
                );
            }
            _ => {}
        }
        let id = if path.starts_with("cpu.smt_speed") {
            "cpu.smt_speed"
        } else {
            path
        };
        match self.measured.get(id) {
            Some(m) => {
                let at = if id == "cpu.smt_speed" {
                    "cpu.smt_speed[1]"
                } else {
                    path
                };
                let written = profile.get_number(at).unwrap_or(rounded(m.value));
                Some(format!(
                    "measured: median {written} over {} runs, spread {:.1}%{} ({}){}",
                    m.runs,
                    m.spread * 100.0,
                    if m.stable { "" } else { " (not stable)" },
                    method(id),
                    fits.get(path).map_or(String::new(), |f| format!("; {f}"))
                ))
            }
            None if fits.contains_key(path) => Some(format!(
                "measured: not separable from user space; {}",
                fits[path]
            )),
            None => match self.rejected.get(id) {
                Some(m) => Some(format!(
                    "default: the measured value came out {:.1}, not positive (noise between \
                     the measurements it is derived from), so it is not written",
                    m.value
                )),
                None => Some(format!("default: {}", self.default_reason(path))),
            },
        }
    }

    /// The machine profile in the simulator's format, written through the schema's struct:
    /// every key, measured values with their median, runs and spread, the others at their
    /// defaults with the reason.
    pub fn to_profile_toml(&self) -> String {
        self.to_profile_toml_with(&self.profile(), &BTreeMap::new())
    }

    /// [`Calibration::to_profile_toml`] for `profile` (this calibration's, adjusted), with a
    /// note per adjusted key (`fits`, by path) after its measurement's statistics.
    pub fn to_profile_toml_with(
        &self,
        profile: &MachineProfile,
        fits: &BTreeMap<String, String>,
    ) -> String {
        let mut preamble = vec![format!(
            "CPUs {}; pairs measured: {}",
            list(&self.topology.cpus),
            if self.pairs.is_empty() {
                "none".to_string()
            } else {
                self.pairs
                    .iter()
                    .map(|(c, (a, b))| format!("{} {a}-{b}", c.key()))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        )];
        if let Some(why) = &self.topology.fallback {
            preamble.push(format!("topology: flat, sysfs unreadable ({why})"));
        }
        for (k, m) in &self.round_trips {
            preamble.push(format!(
                "pipe round trip (4 B), {k}: {:.0} ns (median over {} runs, spread {:.1}%)",
                m.value,
                m.runs,
                m.spread * 100.0
            ));
        }
        if let Some(w) = &self.idle_wakeup {
            preamble.push(format!(
                "wake-up latency to an idle CPU: {:.0} ns (median over {} runs, spread {:.1}%)",
                w.value,
                w.runs,
                w.spread * 100.0
            ));
        }
        profile.to_toml_annotated(&preamble, |path| self.note(profile, fits, path))
    }

    /// A human-readable table of every measurement with its spread.
    pub fn report(&self) -> String {
        let mut s = format!(
            "host: {}, kernel {}, CPUs {}\n",
            self.cpu_model,
            self.kernel,
            list(&self.topology.cpus)
        );
        let _ = writeln!(
            s,
            "{:<34} {:>12} {:>5} {:>8}  stable",
            "measurement", "median", "runs", "spread"
        );
        let rows = self
            .round_trips
            .iter()
            .map(|(k, m)| (format!("pipe round trip {k} (ns)"), m))
            .chain(
                self.idle_wakeup
                    .iter()
                    .map(|m| ("idle wake-up latency (ns)".to_string(), m)),
            )
            .chain(
                self.idle_ladder
                    .iter()
                    .map(|(us, m)| (format!("wake-up after {us} us idle (ns)"), m)),
            )
            .chain(self.measured.iter().map(|(k, m)| (k.clone(), m)))
            .chain(
                self.rejected
                    .iter()
                    .map(|(k, m)| (format!("{k} (rejected: not positive)"), m)),
            );
        for (k, m) in rows {
            let _ = writeln!(
                s,
                "{k:<34} {:>12.3} {:>5} {:>7.1}%  {}",
                m.value,
                m.runs,
                m.spread * 100.0,
                if m.stable { "yes" } else { "no" }
            );
        }
        s
    }
}

fn list(cpus: &[CpuId]) -> String {
    cpus.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::super::{HostCpus, Measurement};
    use super::*;
    use std::collections::BTreeMap;

    fn empty_calibration(cpus: Vec<usize>) -> Calibration {
        Calibration {
            cpu_model: "Test CPU \"X\"".into(),
            kernel: "6.1.0".into(),
            date: "2026-01-02".into(),
            topology: HostCpus::flat(cpus.into_iter().map(CpuId::new).collect(), "test".into()),
            pairs: BTreeMap::new(),
            measured: BTreeMap::new(),
            round_trips: BTreeMap::new(),
            idle_wakeup: None,
            idle_ladder: Vec::new(),
            rejected: BTreeMap::new(),
            governor: (Governor::Menu, "test".into()),
        }
    }

    #[test]
    fn default_profile_has_every_key_with_defaults() {
        let toml_text = empty_calibration(vec![0]).to_profile_toml();
        let v: toml::Value = toml::from_str(&toml_text).expect(&toml_text);
        assert_eq!(v["schema"].as_str(), Some("schedlab.profile/1"));
        assert_eq!(v["cpu"]["ctx_switch_ns"].as_integer(), Some(1200));
        assert_eq!(v["cpu"]["smt_speed"].as_array().map(|a| a.len()), Some(2));
        assert_eq!(v["cache"]["line_bytes"].as_integer(), Some(64));
        assert_eq!(v["transfer"]["llc_ns_per_byte"].as_float(), Some(0.08));
        let states = v["wakeup"]["idle_states"].as_array().unwrap();
        assert_eq!(states.len(), 2);
        assert_eq!(states[1]["exit_ns"].as_integer(), Some(80000));
        assert_eq!(v["search"]["lb_per_task_ns"].as_integer(), Some(100));
        assert!(toml_text.contains(
            "smt_speed = [1.0, 0.62]  # default: not measurable here (one CPU available)"
        ));
    }

    #[test]
    fn measured_values_replace_defaults_with_their_statistics() {
        let mut c = empty_calibration(vec![0, 1]);
        c.pairs
            .insert(DistanceClass::Llc, (CpuId::new(0), CpuId::new(1)));
        let m = |value| Measurement {
            value,
            runs: 7,
            spread: 0.031,
            stable: true,
        };
        c.measured.insert("cpu.ctx_switch_ns".into(), m(2345.6));
        c.measured
            .insert("transfer.llc_ns_per_byte".into(), m(0.123));
        let text = c.to_profile_toml();
        assert!(
            text.contains("ctx_switch_ns = 2346  # measured: median 2346 over 7 runs, spread 3.1% (4 B pipe ping-pong, two threads pinned to one CPU"),
            "{text}"
        );
        assert!(
            text.contains("llc_ns_per_byte = 0.123  # measured"),
            "{text}"
        );
        assert!(
            text.contains("smt_ns_per_byte = 0.02  # default: not measurable here (no SMT)"),
            "{text}"
        );
        assert!(
            text.contains(
                "refetch_cross_node_ns = 120.0  # default: not measurable here (one node)"
            )
        );
        let v: toml::Value = toml::from_str(&text).unwrap();
        assert_eq!(v["cpu"]["ctx_switch_ns"].as_integer(), Some(2346));
    }

    #[test]
    fn a_value_derived_as_zero_or_negative_is_never_written() {
        let mut c = empty_calibration(vec![0, 1]);
        c.rejected.insert(
            "cpu.ctx_switch_ns".into(),
            Measurement {
                value: -35.0,
                runs: 5,
                spread: 0.02,
                stable: true,
            },
        );
        let text = c.to_profile_toml();
        assert!(
            text.contains("ctx_switch_ns = 1200  # default: the measured value came out -35.0"),
            "{text}"
        );
        assert!(
            c.report()
                .contains("cpu.ctx_switch_ns (rejected: not positive)")
        );
    }

    #[test]
    fn the_governor_is_written_with_how_it_was_read() {
        let mut c = empty_calibration(vec![0, 1]);
        c.governor = (Governor::Elapsed, "cpuidle driver none".into());
        let text = c.to_profile_toml();
        assert!(
            text.contains(
                r#"governor = "elapsed"  # measured: read from sysfs (cpuidle driver none)"#
            ),
            "{text}"
        );
        let p = MachineProfile::from_toml(&text, "test").unwrap();
        assert_eq!(p.wakeup.governor, Governor::Elapsed);
        // haltpoll gets the driver's poll state in front of the measured ones.
        c.governor = (Governor::Haltpoll, "cpuidle driver haltpoll".into());
        let p = MachineProfile::from_toml(&c.to_profile_toml(), "test").unwrap();
        let names: Vec<_> = p
            .wakeup
            .idle_states
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(names, ["POLL", "C1", "C6"]);
        assert!(p.wakeup.idle_states[0].polling && !p.wakeup.idle_states[1].polling);
    }

    #[test]
    fn the_idle_states_are_the_ones_the_ladder_shows() {
        let m = |value| Measurement {
            value,
            runs: 5,
            spread: 0.02,
            stable: true,
        };
        let ladder = |lats: [f64; 9]| {
            super::super::IDLE_LADDER_US
                .iter()
                .zip(lats)
                .map(|(&us, l)| (us, m(l)))
                .collect::<Vec<_>>()
        };
        let states = |c: &Calibration| {
            let p = MachineProfile::from_toml(&c.to_profile_toml(), "test").unwrap();
            p.wakeup
                .idle_states
                .iter()
                .map(|s| (s.exit_ns, s.target_residency_ns))
                .collect::<Vec<_>>()
        };
        // Flat to 2 ms: one state, and the schema's default deep state (80 us from 600 us)
        // is gone, for every governor.
        let mut c = empty_calibration(vec![0, 1]);
        c.idle_ladder = ladder([12_000.0; 9]);
        c.measured
            .insert("wakeup.idle_states[0].exit_ns".into(), m(9_000.0));
        // (The residency not measured here keeps the schema default, 2 us.)
        assert_eq!(states(&c), [(9_000, 2_000)]);
        c.governor = (Governor::Haltpoll, "cpuidle driver haltpoll".into());
        assert_eq!(states(&c).len(), 2, "the poll state and the measured one");
        // A step: both measured states, no third.
        let mut c = empty_calibration(vec![0, 1]);
        c.idle_ladder = ladder([
            6_000.0, 6_000.0, 6_000.0, 6_000.0, 6_000.0, 6_000.0, 6_000.0, 40_000.0, 40_000.0,
        ]);
        for (k, v) in [
            ("wakeup.idle_states[0].exit_ns", 3_000.0),
            ("wakeup.idle_states[0].target_residency_ns", 5_000.0),
            ("wakeup.idle_states[1].exit_ns", 37_000.0),
            ("wakeup.idle_states[1].target_residency_ns", 1_000_000.0),
        ] {
            c.measured.insert(k.into(), m(v));
        }
        assert_eq!(states(&c), [(3_000, 5_000), (37_000, 1_000_000)]);
        // Without a ladder (one CPU), the defaults stand.
        assert_eq!(states(&empty_calibration(vec![0])).len(), 2);
    }
}
