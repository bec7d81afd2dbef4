//! The workload spec syntax `NAME[:key=value,...]` used by `-w/--workload` everywhere, and
//! the typed reading of parameter values.
//!
//! ```text
//!   "tbench:clients=32,duration=2s" ──parse_spec──▶ WorkloadSpec { name, params }
//!        (name and keys checked against the catalog; values checked by unit)
//!   "file:workloads/pingpong.toml"  ──parse_spec──▶ WorkloadSpec { "file", [("path", ..)] }
//! ```
//!
//! The canonical text form ([`WorkloadSpec`]'s `Display`) lists parameters in catalog order,
//! so two spellings of one spec print the same.

use crate::catalog::{ParamInfo, ValueKind, WorkloadInfo, catalog, info};
use crate::error::WorkloadError;
use schedlab_vocab::retired::retired;
use schedlab_vocab::spec::{SpecError, parse_params, split_spec};
use schedlab_vocab::suggest::{closest, did_you_mean};
use schedlab_vocab::units::{parse_duration, parse_kib};
use std::collections::BTreeMap;
use std::fmt;

/// A parsed `NAME[:key=value,...]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadSpec {
    /// Workload name (a catalog name).
    pub name: String,
    /// Parameters given explicitly, in catalog order (defaults are not filled in).
    pub params: Vec<(String, String)>,
}

/// Parses and validates a workload spec: the name must be a catalog workload, keys its
/// parameters, values of the right kind (ranges that depend on the machine are checked by
/// [`crate::instantiate`]).
pub fn parse_spec(s: &str) -> Result<WorkloadSpec, WorkloadError> {
    let syntax = |e: SpecError| WorkloadError::Syntax {
        spec: s.to_string(),
        msg: e.to_string(),
    };
    let (name, rest) = split_spec(s).map_err(syntax)?;
    let w = lookup(name)?;
    if w.takes_path() {
        let path = rest.map(str::trim).unwrap_or("");
        if path.is_empty() {
            return Err(WorkloadError::Syntax {
                spec: s.to_string(),
                msg: format!("'{name}' needs a path: {name}:PATH"),
            });
        }
        return Ok(WorkloadSpec {
            name: name.to_string(),
            params: vec![("path".into(), path.to_string())],
        });
    }
    let mut spec = WorkloadSpec {
        name: name.to_string(),
        params: Vec::new(),
    };
    let Some(rest) = rest else { return Ok(spec) };
    for (k, v) in parse_params(name, rest).map_err(syntax)? {
        spec = spec.with_param(&k, &v)?;
    }
    Ok(spec)
}

fn lookup(name: &str) -> Result<&'static WorkloadInfo, WorkloadError> {
    if let Some(r) = retired(name) {
        return Err(WorkloadError::Retired {
            name: name.to_string(),
            now: r.now.to_string(),
            message: r.message(),
        });
    }
    info(name).ok_or_else(|| WorkloadError::UnknownWorkload {
        name: name.to_string(),
        suggestion: closest(name, catalog().iter().map(|w| w.name)),
        known: catalog()
            .iter()
            .map(|w| w.name)
            .collect::<Vec<_>>()
            .join(", "),
    })
}

fn param_of(w: &'static WorkloadInfo, key: &str) -> Result<&'static ParamInfo, WorkloadError> {
    w.param(key).ok_or_else(|| WorkloadError::UnknownParam {
        workload: w.name.to_string(),
        key: key.to_string(),
        suggestion: closest(key, w.params.iter().map(|p| p.name)),
        known: w
            .params
            .iter()
            .map(|p| p.name)
            .collect::<Vec<_>>()
            .join(", "),
    })
}

impl WorkloadSpec {
    /// The spec with `key` set to `value` (replacing an earlier value), checked like
    /// [`parse_spec`] checks it.
    pub fn with_param(&self, key: &str, value: &str) -> Result<WorkloadSpec, WorkloadError> {
        let w = lookup(&self.name)?;
        let p = param_of(w, key)?;
        let value = value.trim();
        if value.contains(',') && !w.takes_path() {
            return Err(bad(w, p, value, "a value cannot contain ','"));
        }
        if value != "auto" || p.default != "auto" {
            check_value(w, p, value)?;
        }
        let mut params: Vec<(String, String)> = self
            .params
            .iter()
            .filter(|(k, _)| k != key)
            .cloned()
            .collect();
        params.push((key.to_string(), value.to_string()));
        let order = |k: &str| {
            w.params
                .iter()
                .position(|p| p.name == k)
                .unwrap_or(usize::MAX)
        };
        params.sort_by_key(|(k, _)| order(k));
        Ok(WorkloadSpec {
            name: self.name.clone(),
            params,
        })
    }

    /// The explicitly given value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

impl fmt::Display for WorkloadSpec {
    /// The canonical form: `NAME`, `NAME:k=v,...` in catalog order, or `file:PATH`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if info(&self.name).is_some_and(|w| w.takes_path())
            && let Some(p) = self.get("path")
        {
            return write!(f, ":{p}");
        }
        for (i, (k, v)) in self.params.iter().enumerate() {
            write!(f, "{}{k}={v}", if i == 0 { ':' } else { ',' })?;
        }
        Ok(())
    }
}

fn bad(w: &WorkloadInfo, p: &ParamInfo, value: &str, msg: impl Into<String>) -> WorkloadError {
    WorkloadError::BadValue {
        workload: w.name.to_string(),
        key: p.name.to_string(),
        value: value.to_string(),
        msg: msg.into(),
    }
}

/// A parsed value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Int(u64),
    Float(f64),
    Bool(bool),
    Text(String),
}

/// Sizes are read by the workspace's one parser (`schedlab_vocab::units::parse_size`).
pub(crate) use schedlab_vocab::units::parse_size as parse_bytes;

/// Parses `on/off`, `true/false`, `yes/no`, `1/0`.
pub(crate) fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Some(true),
        "off" | "false" | "no" | "0" => Some(false),
        _ => None,
    }
}

/// Checks that `value` is of `p`'s kind and returns it parsed.
pub(crate) fn check_value(
    w: &WorkloadInfo,
    p: &ParamInfo,
    value: &str,
) -> Result<Value, WorkloadError> {
    let v = value.trim();
    match p.kind() {
        ValueKind::Count => {
            if v.parse::<f64>().is_ok() && v.parse::<u64>().is_err() {
                return Err(bad(w, p, v, "expected a whole non-negative number"));
            }
            v.parse::<u64>().map(Value::Int).map_err(|_| {
                let hint = if parse_duration(v).is_ok() {
                    " (it looks like a duration; this is a count)"
                } else {
                    ""
                };
                bad(w, p, v, format!("expected a whole number{hint}"))
            })
        }
        ValueKind::Bytes => parse_bytes(v)
            .map(Value::Int)
            .map_err(|m| bad(w, p, v, m.to_string())),
        ValueKind::KiB => parse_kib(v)
            .map(Value::Int)
            .map_err(|m| bad(w, p, v, m.to_string())),
        ValueKind::Duration => parse_duration(v).map(Value::Int).map_err(|m| {
            let m = if v.parse::<f64>().is_ok() {
                format!("'{v}' has no unit: durations need one, e.g. 2s, 100ms, 100us, 500ns")
            } else {
                m.to_string()
            };
            bad(w, p, v, m)
        }),
        ValueKind::Bool => parse_bool(v)
            .map(Value::Bool)
            .ok_or_else(|| bad(w, p, v, "expected on/off (or true/false, yes/no, 1/0)")),
        ValueKind::Fraction => match v.parse::<f64>() {
            Ok(x) if (0.0..=1.0).contains(&x) => Ok(Value::Float(x)),
            Ok(_) => Err(bad(w, p, v, "must be between 0 and 1")),
            Err(_) => Err(bad(w, p, v, "expected a number between 0 and 1")),
        },
        ValueKind::Factor => match v.parse::<f64>() {
            Ok(x) if x > 0.0 && x.is_finite() => Ok(Value::Float(x)),
            Ok(_) => Err(bad(w, p, v, "must be a positive number")),
            Err(_) => Err(bad(w, p, v, "expected a positive number, e.g. 0.01")),
        },
        ValueKind::Choice(list) => {
            let choices: Vec<&str> = list.split('|').collect();
            if choices.contains(&v) {
                Ok(Value::Text(v.to_string()))
            } else {
                let hint = did_you_mean(closest(v, choices.iter().copied()).as_deref());
                Err(bad(
                    w,
                    p,
                    v,
                    format!("expected one of {}{hint}", choices.join(", ")),
                ))
            }
        }
        ValueKind::Path => Ok(Value::Text(v.to_string())),
    }
}

/// Typed access to a spec's parameters with defaults filled in, as the models read them.
pub(crate) struct Args {
    pub(crate) info: &'static WorkloadInfo,
    given: Vec<(String, String)>,
    /// The values actually used, for the result's `params`.
    pub(crate) used: BTreeMap<String, String>,
}

impl Args {
    pub(crate) fn new(spec: &WorkloadSpec) -> Result<Args, WorkloadError> {
        let info = lookup(&spec.name)?;
        for (k, v) in &spec.params {
            let p = param_of(info, k)?;
            if !(v == "auto" && p.default == "auto") {
                check_value(info, p, v)?;
            }
        }
        Ok(Args {
            info,
            given: spec.params.clone(),
            used: BTreeMap::new(),
        })
    }

    fn param(&self, key: &str) -> &'static ParamInfo {
        // Keys come from this crate's models; a missing one is a bug caught by every test.
        self.info
            .param(key)
            .unwrap_or_else(|| panic!("model reads undeclared parameter {}.{key}", self.info.name))
    }

    /// The text of `key` (given or default); `None` when it is `auto`.
    pub(crate) fn text(&mut self, key: &str) -> Option<String> {
        let p = self.param(key);
        let v = self
            .given
            .iter()
            .find(|(k, _)| k == key)
            .map_or(p.default, |(_, v)| v.as_str())
            .to_string();
        if v == "auto" {
            return None;
        }
        self.used.insert(key.to_string(), v.clone());
        Some(v)
    }

    /// Records the value an `auto` parameter resolved to.
    pub(crate) fn resolve(&mut self, key: &str, v: impl fmt::Display) {
        self.used.insert(key.to_string(), v.to_string());
    }

    fn value(&mut self, key: &str) -> Result<Option<(String, Value)>, WorkloadError> {
        let p = self.param(key);
        match self.text(key) {
            None => Ok(None),
            Some(t) => Ok(Some((t.clone(), check_value(self.info, p, &t)?))),
        }
    }

    pub(crate) fn err(
        &self,
        key: &str,
        value: impl fmt::Display,
        msg: impl Into<String>,
    ) -> WorkloadError {
        bad(self.info, self.param(key), &value.to_string(), msg)
    }

    /// An integer parameter (count, bytes, KB, duration in ns) within `lo..=hi`.
    pub(crate) fn int_in(
        &mut self,
        key: &str,
        lo: u64,
        hi: u64,
    ) -> Result<Option<u64>, WorkloadError> {
        match self.value(key)? {
            None => Ok(None),
            Some((t, Value::Int(v))) => {
                if v < lo || v > hi {
                    let p = self.param(key);
                    let show = |x: u64| match p.kind() {
                        ValueKind::Duration => schedlab_engine::time::fmt_ns(x).replace(' ', ""),
                        _ => x.to_string(),
                    };
                    return Err(self.err(
                        key,
                        t,
                        format!("must be between {} and {}", show(lo), show(hi)),
                    ));
                }
                Ok(Some(v))
            }
            Some((t, _)) => Err(self.err(key, t, "not an integer parameter")),
        }
    }

    /// Like [`Args::int_in`] for parameters without an `auto` default.
    pub(crate) fn int(&mut self, key: &str, lo: u64, hi: u64) -> Result<u64, WorkloadError> {
        let v = self.int_in(key, lo, hi)?;
        Ok(v.unwrap_or(lo))
    }

    pub(crate) fn float(&mut self, key: &str) -> Result<f64, WorkloadError> {
        match self.value(key)? {
            Some((_, Value::Float(x))) => Ok(x),
            Some((t, _)) => Err(self.err(key, t, "not a number")),
            None => Ok(0.0),
        }
    }

    pub(crate) fn flag(&mut self, key: &str) -> Result<bool, WorkloadError> {
        match self.value(key)? {
            Some((_, Value::Bool(b))) => Ok(b),
            Some((t, _)) => Err(self.err(key, t, "not on/off")),
            None => Ok(false),
        }
    }

    pub(crate) fn choice(&mut self, key: &str) -> Result<String, WorkloadError> {
        match self.value(key)? {
            Some((_, Value::Text(s))) => Ok(s),
            Some((t, _)) => Err(self.err(key, t, "not a choice")),
            None => Ok(String::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_canonically() {
        let s = parse_spec(" hackbench:loops=400, groups=400 ").unwrap();
        assert_eq!(s.name, "hackbench");
        assert_eq!(
            s.params,
            vec![
                ("groups".into(), "400".into()),
                ("loops".into(), "400".into())
            ]
        );
        assert_eq!(s.to_string(), "hackbench:groups=400,loops=400");
        assert_eq!(parse_spec(&s.to_string()).unwrap(), s);
        assert_eq!(parse_spec("tbench").unwrap().to_string(), "tbench");
        let f = parse_spec("file:work/a,b=c.toml").unwrap();
        assert_eq!(f.get("path"), Some("work/a,b=c.toml"));
        assert_eq!(f.to_string(), "file:work/a,b=c.toml");
    }

    #[test]
    fn with_param_replaces_and_keeps_order() {
        let s = parse_spec("tbench:duration=2s").unwrap();
        let s2 = s
            .with_param("clients", "32")
            .unwrap()
            .with_param("duration", "3s")
            .unwrap();
        assert_eq!(s2.to_string(), "tbench:clients=32,duration=3s");
        assert!(s.with_param("client", "3").is_err());
        assert!(s.with_param("clients", "x").is_err());
    }

    #[test]
    fn errors_name_the_problem() {
        let e = parse_spec("hackbnech:groups=4").unwrap_err().to_string();
        assert!(
            e.contains("unknown workload 'hackbnech'") && e.contains("did you mean 'hackbench'"),
            "{e}"
        );
        let e = parse_spec("hackbench:group=4").unwrap_err().to_string();
        assert!(
            e.contains("unknown parameter 'group'") && e.contains("did you mean 'groups'"),
            "{e}"
        );
        let e = parse_spec("tbench:duration=2").unwrap_err().to_string();
        assert!(e.contains("duration=2") && e.contains("no unit"), "{e}");
        let e = parse_spec("tbench:clients=2.5").unwrap_err().to_string();
        assert!(e.contains("clients=2.5") && e.contains("whole"), "{e}");
        let e = parse_spec("hackbench:ipc=pipes").unwrap_err().to_string();
        assert!(e.contains("did you mean 'pipe'"), "{e}");
        let e = parse_spec("hackbench:groups=4,groups=5")
            .unwrap_err()
            .to_string();
        assert!(e.contains("given twice"), "{e}");
        for bad in [
            "",
            ":x=1",
            "hackbench:",
            "hackbench:groups",
            "hackbench:groups=",
            "hackbench:groups=1,",
            "file:",
        ] {
            assert!(parse_spec(bad).is_err(), "{bad:?} should fail");
        }
    }

    #[test]
    fn a_retired_name_is_refused_naming_the_benchmarks_model() {
        for (old, now) in [
            ("sysbench-oltp", "sysbench"),
            ("sysbench-mysql", "sysbench"),
            ("pgbench-postgres", "pgbench"),
            ("tbench-loadfile", "tbench"),
        ] {
            let e = parse_spec(&format!("{old}:duration=20ms")).unwrap_err();
            assert!(
                matches!(&e, WorkloadError::Retired { now: n, .. } if n == now),
                "{old}: {e:?}"
            );
            let text = e.to_string();
            assert!(
                text.starts_with(&format!("workload '{old}' was retired: use '{now}'")),
                "{text}"
            );
            // The replacement is a registered model that takes the same spec.
            parse_spec(&format!("{now}:duration=20ms")).unwrap();
        }
        let e = parse_spec("sysbench-oltp:pool=2").unwrap_err().to_string();
        assert!(e.contains("thread_handling=pool"), "{e}");
    }

    #[test]
    fn sizes_and_bools() {
        assert_eq!(parse_bytes("64K"), Ok(65536));
        assert_eq!(parse_bytes("10M"), Ok(10 << 20));
        assert_eq!(parse_bytes("100"), Ok(100));
        assert_eq!(parse_bytes("4kb"), Ok(4096));
        assert!(parse_bytes("lots").is_err());
        assert_eq!(parse_bool("on"), Some(true));
        assert_eq!(parse_bool("No"), Some(false));
        assert_eq!(parse_bool("maybe"), None);
    }
}
