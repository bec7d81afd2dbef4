//! Workload specs `NAME[:key=value,...]` and their typed parameters.
//!
//! The syntax, names, keys and defaults are the simulator's; this module only reads them (it
//! shares no code with the simulator). Each workload reads its keys through [`Params`], which
//! records the value actually used (default or given) for the result, and [`Params::finish`]
//! rejects keys no workload read, suggesting the closest known one.
//!
//! The grammar, durations (a unit suffix is required) and sizes are read by
//! `schedlab_vocab`, the same code the simulator's workloads use; counts may be `auto` where
//! the simulator allows it. Retired names (`tbench-loadfile`, `pgbench-postgres`, ...) are
//! refused with `schedlab_vocab::retired`'s words, as the simulator refuses them. Keys that only tune the simulator's cost model
//! (`client_work`, `query_work`, ...) are accepted and recorded as ignored, so one spec serves
//! both.

use crate::error::HostError;
use schedlab_vocab::retired::retired;
use schedlab_vocab::spec::{parse_params, split_spec};
use schedlab_vocab::suggest::closest;
use schedlab_vocab::units;
use std::collections::BTreeMap;
use std::time::Duration;

/// The workloads the host can run.
pub const WORKLOADS: &[&str] = &["hackbench", "pipe", "tbench", "schbench", "pgbench"];

/// Workloads the simulator has but the host does not run.
pub const SIMULATED_ONLY: &[&str] = &[
    "netperf-rr",
    "sysbench",
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
        let bad = |reason: String| HostError::BadSpec {
            spec: spec.to_string(),
            reason,
        };
        let (name, rest) = split_spec(spec).map_err(|e| bad(e.to_string()))?;
        if let Some(r) = retired(name) {
            return Err(bad(r.message()));
        }
        if SIMULATED_ONLY.contains(&name) {
            return Err(bad(format!(
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
        let params = match rest {
            None => Vec::new(),
            Some(rest) => parse_params(name, rest).map_err(|e| bad(e.to_string()))?,
        };
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

    /// A size in bytes (`100`, `64K`) in `min..=max`, read as the simulator reads it.
    pub(crate) fn bytes(
        &mut self,
        key: &'static str,
        default: u64,
        min: u64,
        max: u64,
    ) -> Result<u64, HostError> {
        let v = match self.raw(key) {
            None => default,
            Some(s) => {
                let range = format!("a size in {min}..={max} bytes (e.g. 100, 4K)");
                let v = units::parse_size(&s)
                    .map_err(|e| self.bad(key, &s, &format!("{range}: {e}")))?;
                if v < min || v > max {
                    return Err(self.bad(key, &s, &range));
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
                let d = units::parse_duration(&s)
                    .map(Duration::from_nanos)
                    .map_err(|e| self.bad(key, &s, &format!("a duration ({e})")))?;
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

/// The shortest exact spelling of `d` with a unit suffix (`300ms`), as specs read it back.
pub(crate) fn format_duration(d: Duration) -> String {
    units::format_duration(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
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
        let e = WorkloadSpec::parse("sysbench:threads=2").unwrap_err();
        assert!(
            e.to_string().contains("`sysbench` is simulated only"),
            "{e}"
        );
    }

    #[test]
    fn retired_names_are_refused_with_the_simulators_words() {
        let e = WorkloadSpec::parse("tbench-loadfile:clients=2").unwrap_err();
        assert!(
            e.to_string()
                .contains("workload 'tbench-loadfile' was retired: use 'tbench'"),
            "{e}"
        );
        let e = WorkloadSpec::parse("pgbench-postgres").unwrap_err();
        assert!(e.to_string().contains("use 'pgbench'"), "{e}");
    }

    #[test]
    fn rejects_bad_specs_with_suggestions() {
        let e = WorkloadSpec::parse("hackbnch:groups=1").unwrap_err();
        assert!(e.to_string().contains("did you mean 'hackbench'"), "{e}");
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
            "hackbench: unknown parameter 'grups' (did you mean 'groups'?); known: groups, loops"
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
        assert_eq!(format_duration(Duration::from_millis(300)), "300ms");
        assert_eq!(format_duration(Duration::from_secs(5)), "5s");
        assert_eq!(format_duration(Duration::from_micros(30_000)), "30ms");
        assert_eq!(format_duration(Duration::from_nanos(1_500)), "1500ns");
        let spec = WorkloadSpec::parse("tbench:duration=2,b=1.5s").unwrap();
        let mut p = Params::new(&spec);
        let e = p
            .duration("duration", Duration::ZERO, Duration::ZERO, Duration::MAX)
            .unwrap_err();
        assert!(e.to_string().contains("no unit"), "{e}");
        let d = p.duration("b", Duration::ZERO, Duration::ZERO, Duration::MAX);
        assert_eq!(d.unwrap(), Duration::from_millis(1500));
    }
}
