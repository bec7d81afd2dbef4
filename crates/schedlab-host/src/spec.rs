//! Workload specs `NAME[:key=value,...]` and their typed parameters.
//!
//! The syntax, names, keys and defaults are the simulator's; this module only reads them (it
//! shares no code with the simulator). Each workload reads its keys through [`Params`], which
//! records the value actually used (default or given) for the result, and [`Params::finish`]
//! rejects keys no workload read, suggesting the closest known one.
//!
//! Durations need an `ns`, `us`, `ms` or `s` suffix, as in the simulator; counts may be
//! `auto` where the simulator allows it. Keys that only tune the simulator's cost model
//! (`client_work`, `query_work`, ...) are accepted and recorded as ignored, so one spec serves
//! both.

use crate::error::{HostError, closest};
use std::collections::BTreeMap;
use std::time::Duration;

/// The workloads the host can run.
pub const WORKLOADS: &[&str] = &["hackbench", "pipe", "tbench", "schbench", "pgbench"];

/// Workloads the simulator has but the host does not run.
pub const SIMULATED_ONLY: &[&str] = &[
    "netperf-rr",
    "sysbench-oltp",
    "aim7-compute",
    "kernbench",
    "numa-test",
    "lmbench-bw",
    "lat-ctx",
    "file",
    "rtapp",
];

/// A parsed spec: the workload name and the raw `key=value` pairs.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadSpec {
    /// Workload name, one of [`WORKLOADS`].
    pub name: String,
    /// Raw parameters in the order given.
    pub params: Vec<(String, String)>,
}

impl WorkloadSpec {
    /// Parses `NAME[:key=value,...]`, checking the name but not the keys.
    pub fn parse(spec: &str) -> Result<Self, HostError> {
        let bad = |reason: &str| HostError::BadSpec {
            spec: spec.to_string(),
            reason: reason.to_string(),
        };
        let (name, rest) = match spec.split_once(':') {
            Some((n, r)) => (n.trim(), Some(r)),
            None => (spec.trim(), None),
        };
        if name.is_empty() {
            return Err(bad("missing workload name"));
        }
        if SIMULATED_ONLY.contains(&name) {
            return Err(bad(&format!(
                "`{name}` is simulated only; the host runs {} (pgbench with --external)",
                WORKLOADS.join(", ")
            )));
        }
        if !WORKLOADS.contains(&name) {
            return Err(HostError::UnknownWorkload {
                name: name.to_string(),
                suggestion: closest(name, WORKLOADS.iter().copied()),
                known: WORKLOADS.join(", "),
            });
        }
        let mut params: Vec<(String, String)> = Vec::new();
        for item in rest.unwrap_or("").split(',') {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let Some((k, v)) = item.split_once('=') else {
                return Err(bad(&format!("`{item}` is not key=value")));
            };
            let (k, v) = (k.trim(), v.trim());
            if k.is_empty() {
                return Err(bad(&format!("`{item}` has an empty key")));
            }
            if params.iter().any(|(pk, _)| pk == k) {
                return Err(bad(&format!("`{k}` given twice")));
            }
            params.push((k.to_string(), v.to_string()));
        }
        Ok(WorkloadSpec {
            name: name.to_string(),
            params,
        })
    }
}

/// Typed access to a spec's parameters, with defaults.
pub(crate) struct Params {
    workload: String,
    given: Vec<(String, String)>,
    known: Vec<&'static str>,
    used: BTreeMap<String, String>,
}

impl Params {
    pub(crate) fn new(spec: &WorkloadSpec) -> Self {
        Params {
            workload: spec.name.clone(),
            given: spec.params.clone(),
            known: Vec::new(),
            used: BTreeMap::new(),
        }
    }

    fn raw(&mut self, key: &'static str) -> Option<String> {
        self.known.push(key);
        self.given
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }

    fn bad(&self, key: &str, value: &str, expected: &str) -> HostError {
        HostError::BadValue {
            workload: self.workload.clone(),
            key: key.to_string(),
            value: value.to_string(),
            expected: expected.to_string(),
        }
    }

    /// An integer in `min..=max`.
    pub(crate) fn u64(
        &mut self,
        key: &'static str,
        default: u64,
        min: u64,
        max: u64,
    ) -> Result<u64, HostError> {
        let v = match self.raw(key) {
            None => default,
            Some(s) => {
                let v: u64 = s
                    .replace('_', "")
                    .parse()
                    .map_err(|_| self.bad(key, &s, &format!("an integer in {min}..={max}")))?;
                if v < min || v > max {
                    return Err(self.bad(key, &s, &format!("an integer in {min}..={max}")));
                }
                v
            }
        };
        self.used.insert(key.to_string(), v.to_string());
        Ok(v)
    }

    /// One of `choices` (the first is not implied; `default` is).
    pub(crate) fn choice(
        &mut self,
        key: &'static str,
        default: &'static str,
        choices: &[&'static str],
    ) -> Result<&'static str, HostError> {
        let v = match self.raw(key) {
            None => default,
            Some(s) => *choices
                .iter()
                .find(|c| **c == s)
                .ok_or_else(|| self.bad(key, &s, &format!("one of {}", choices.join("|"))))?,
        };
        self.used.insert(key.to_string(), v.to_string());
        Ok(v)
    }

    /// `true|false|1|0|yes|no`.
    pub(crate) fn bool(&mut self, key: &'static str, default: bool) -> Result<bool, HostError> {
        let v = match self.raw(key) {
            None => default,
            Some(s) => match s.as_str() {
                "true" | "1" | "yes" | "on" => true,
                "false" | "0" | "no" | "off" => false,
                _ => return Err(self.bad(key, &s, "true or false")),
            },
        };
        self.used.insert(key.to_string(), v.to_string());
        Ok(v)
    }

    /// A duration in `min..=max`, with a unit suffix.
    pub(crate) fn duration(
        &mut self,
        key: &'static str,
        default: Duration,
        min: Duration,
        max: Duration,
    ) -> Result<Duration, HostError> {
        let v = match self.raw(key) {
            None => default,
            Some(s) => {
                let range = format!("a duration in {min:?}..={max:?} (suffix ns, us, ms or s)");
                let d = parse_duration(&s, None).map_err(|e| self.bad(key, &s, &e))?;
                if d < min || d > max {
                    return Err(self.bad(key, &s, &range));
                }
                d
            }
        };
        self.used.insert(key.to_string(), format_duration(v));
        Ok(v)
    }

    /// `auto` (returned as `None`) or an integer in `min..=max`.
    pub(crate) fn auto_u64(
        &mut self,
        key: &'static str,
        min: u64,
        max: u64,
    ) -> Result<Option<u64>, HostError> {
        match self.given.iter().find(|(k, _)| k == key) {
            Some((_, v)) if v != "auto" => self.u64(key, 0, min, max).map(Some),
            _ => {
                self.known.push(key);
                Ok(None)
            }
        }
    }

    /// `auto` (as `None`) or a duration in `min..=max`.
    pub(crate) fn auto_duration(
        &mut self,
        key: &'static str,
        min: Duration,
        max: Duration,
    ) -> Result<Option<Duration>, HostError> {
        match self.given.iter().find(|(k, _)| k == key) {
            Some((_, v)) if v != "auto" => self.duration(key, Duration::ZERO, min, max).map(Some),
            _ => {
                self.known.push(key);
                Ok(None)
            }
        }
    }

    /// Records the value used for a key whose default was resolved later (`auto`).
    pub(crate) fn set_used(&mut self, key: &str, value: String) {
        self.used.insert(key.to_string(), value);
    }

    /// Accepts keys that only tune the simulator's cost model; given ones are recorded as
    /// ignored.
    pub(crate) fn model_only(&mut self, keys: &[&'static str]) {
        for &k in keys {
            if let Some(v) = self.raw(k) {
                self.used
                    .insert(k.to_string(), format!("{v} (model only; ignored on host)"));
            }
        }
    }

    /// Rejects keys nobody read and returns the parameters used.
    pub(crate) fn finish(self) -> Result<BTreeMap<String, String>, HostError> {
        for (k, _) in &self.given {
            if !self.known.contains(&k.as_str()) {
                return Err(HostError::UnknownKey {
                    workload: self.workload.clone(),
                    key: k.clone(),
                    suggestion: closest(k, self.known.iter().copied()),
                    known: self.known.join(", "),
                });
            }
        }
        Ok(self.used)
    }
}

/// Parses `10ns`, `250us`, `300ms`, `2s`, `1.5s`; a bare number is `bare_unit`s if given,
/// else an error (workload specs require a unit, as in the simulator).
pub fn parse_duration(s: &str, bare_unit: Option<Duration>) -> Result<Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("a number with suffix ns, us, ms or s, not {s:?}"))?;
    let scale = match unit {
        "" => match bare_unit {
            Some(u) => u.as_secs_f64(),
            None => {
                return Err(format!(
                    "a duration with a unit (no unit in {s:?}): e.g. 2s, 100ms, 100us, 500ns"
                ));
            }
        },
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        other => {
            return Err(format!(
                "a duration with suffix ns, us, ms or s (unknown unit `{other}`)"
            ));
        }
    };
    let secs = n * scale;
    if !secs.is_finite() || secs > 1e9 {
        return Err("a finite duration".to_string());
    }
    Ok(Duration::from_secs_f64(secs))
}

/// The shortest exact spelling of `d` with a unit suffix, as [`parse_duration`] reads it.
pub fn format_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    // The largest unit that divides the value exactly (no `is_multiple_of`: MSRV 1.85).
    for (div, unit) in [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")] {
        if ns > 0 && (ns / div) * div == ns {
            return format!("{}{unit}", ns / div);
        }
    }
    format!("{ns}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_pairs() {
        let s = WorkloadSpec::parse("hackbench:groups=1, loops=10").unwrap();
        assert_eq!(s.name, "hackbench");
        assert_eq!(
            s.params,
            vec![("groups".into(), "1".into()), ("loops".into(), "10".into())]
        );
        assert!(WorkloadSpec::parse("pipe").unwrap().params.is_empty());
        let e = WorkloadSpec::parse("kernbench").unwrap_err();
        assert!(
            e.to_string().contains("`kernbench` is simulated only"),
            "{e}"
        );
    }

    #[test]
    fn rejects_bad_specs_with_suggestions() {
        let e = WorkloadSpec::parse("hackbnch:groups=1").unwrap_err();
        assert!(e.to_string().contains("did you mean `hackbench`"), "{e}");
        let e = WorkloadSpec::parse("pipe:loops").unwrap_err();
        assert!(e.to_string().contains("`loops` is not key=value"), "{e}");
        let e = WorkloadSpec::parse("pipe:loops=1,loops=2").unwrap_err();
        assert!(e.to_string().contains("given twice"), "{e}");
        let spec = WorkloadSpec::parse("hackbench:grups=2").unwrap();
        let mut p = Params::new(&spec);
        p.u64("groups", 10, 1, 100).unwrap();
        p.u64("loops", 100, 1, 100).unwrap();
        let e = p.finish().unwrap_err();
        assert_eq!(
            e.to_string(),
            "hackbench: unknown parameter `grups` (did you mean `groups`?); known: groups, loops"
        );
    }

    #[test]
    fn typed_values() {
        let spec = WorkloadSpec::parse("pipe:a=0,b=maybe,c=5h").unwrap();
        let mut p = Params::new(&spec);
        let e = p.u64("a", 1, 1, 10).unwrap_err();
        assert!(e.to_string().contains("bad value \"0\" for `a`"), "{e}");
        let e = p.bool("b", false).unwrap_err();
        assert!(e.to_string().contains("true or false"), "{e}");
        let e = p
            .duration("c", Duration::ZERO, Duration::ZERO, Duration::MAX)
            .unwrap_err();
        assert!(e.to_string().contains("unknown unit `h`"), "{e}");
    }

    #[test]
    fn durations() {
        let s = Some(Duration::from_secs(1));
        assert_eq!(parse_duration("300ms", s), Ok(Duration::from_millis(300)));
        assert_eq!(parse_duration("2s", s), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("100us", s), Ok(Duration::from_micros(100)));
        assert_eq!(parse_duration("7ns", s), Ok(Duration::from_nanos(7)));
        assert_eq!(parse_duration("1.5s", s), Ok(Duration::from_millis(1500)));
        assert_eq!(
            parse_duration("30000", Some(Duration::from_micros(1))),
            Ok(Duration::from_millis(30))
        );
        let e = parse_duration("2", None).unwrap_err();
        assert!(e.contains("no unit"), "{e}");
        assert!(parse_duration("ms", s).is_err());
        assert!(parse_duration("3min", s).is_err());
        assert_eq!(format_duration(Duration::from_millis(300)), "300ms");
        assert_eq!(format_duration(Duration::from_secs(5)), "5s");
        assert_eq!(format_duration(Duration::from_micros(30_000)), "30ms");
        assert_eq!(format_duration(Duration::from_nanos(1_500)), "1500ns");
    }
}
