//! rt-app JSON import (`-w rtapp:PATH`): the rt-app grammar (scheduler-tools/rt-app,
//! `doc/tutorial.txt`) mapped onto the engine's primitives.
//!
//! | rt-app event | engine |
//! |---|---|
//! | `run`, `runtime` (µs) | `Compute` (work at full speed; `runtime` is wall-clock in rt-app) |
//! | `sleep` (µs) | `Sleep` |
//! | `timer {ref, period}` | `Timer` (period from the task's start; shared `ref`s are per task) |
//! | `mem` (bytes) | `Compute` of a 10 GB/s memset |
//! | `lock` / `unlock` (mutex) | sleeping mutex |
//! | `wait {ref, mutex}` | unlock mutex, futex wait on `ref`, lock mutex |
//! | `signal` / `broad` | futex wake one / all on `ref` (a wake with no waiter stays posted) |
//! | `barrier` | a barrier whose parties are the instances of the tasks naming it |
//! | `suspend` / `resume NAME` | futex wait on the task's own word / wake NAME's |
//! | `yield` | `Yield` |
//! | `fork NAME` | `Fork` of task NAME's template |
//!
//! Task properties: `instance`, `loop` (-1 = forever), `delay` (µs), `cpus`, `phases`
//! (with per-phase `loop`), `priority` under SCHED_OTHER (nice), `membind_nodes`
//! (`nodes_membind`) as the home node. Anything else (iorun, memrun, sync, sem_*,
//! real-time or deadline policies, per-phase affinity, uclamp, taskgroups) is refused with
//! an error naming each use. `//` and `/* */` comments are stripped before parsing. A key
//! given twice in one object keeps its last value (in the first one's place), as rt-app does.

use crate::bounds::{MAX_BYTES, MAX_TIME_NS};
use crate::catalog::{WorkloadInfo, param};
use crate::error::WorkloadError;
use crate::ir::{Doc, IrOp, IrTask, Name};
use crate::models::Built;
use crate::spec::Args;
use schedlab_engine::Dist;
use schedlab_engine::task::WAKE_ALL;
use schedlab_topo::Topology;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// The events this importer maps, for messages.
pub const SUPPORTED_EVENTS: &str = "run, runtime, sleep, timer, mem, lock, unlock, wait, signal, broad, barrier, suspend, resume, yield, fork";

/// Event names in matching order (rt-app keys may carry a suffix: `run0`, `sleep1`).
const EVENTS: &[&str] = &[
    "runtime", "run", "sleep", "timer", "memrun", "mem", "iorun", "unlock", "lock", "wait",
    "signal", "broad", "barrier", "suspend", "resume", "yield", "fork", "sync", "sem_post",
    "sem_wait",
];
const UNSUPPORTED: &[&str] = &["memrun", "iorun", "sync", "sem_post", "sem_wait"];

/// A JSON value that keeps the order of object members (rt-app events run in file order).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum JValue {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<JValue>),
    Obj(Vec<(String, JValue)>),
}

impl<'de> Deserialize<'de> for JValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = JValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> Result<JValue, E> {
                Ok(JValue::Null)
            }
            fn visit_bool<E>(self, b: bool) -> Result<JValue, E> {
                Ok(JValue::Bool(b))
            }
            fn visit_i64<E>(self, v: i64) -> Result<JValue, E> {
                Ok(JValue::Num(v as f64))
            }
            fn visit_u64<E>(self, v: u64) -> Result<JValue, E> {
                Ok(JValue::Num(v as f64))
            }
            fn visit_f64<E>(self, v: f64) -> Result<JValue, E> {
                Ok(JValue::Num(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<JValue, E> {
                Ok(JValue::Str(v.to_string()))
            }
            fn visit_string<E>(self, v: String) -> Result<JValue, E> {
                Ok(JValue::Str(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<JValue, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = a.next_element()? {
                    v.push(x);
                }
                Ok(JValue::Arr(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<JValue, A::Error> {
                let mut v: Vec<(String, JValue)> = Vec::new();
                while let Some((k, x)) = a.next_entry::<String, JValue>()? {
                    // A key given twice keeps its last value at its first place, as rt-app's
                    // json-c does (`json_object_object_add` replaces an existing key's value).
                    match v.iter_mut().find(|(k0, _)| *k0 == k) {
                        Some(slot) => slot.1 = x,
                        None => v.push((k, x)),
                    }
                }
                Ok(JValue::Obj(v))
            }
        }
        d.deserialize_any(V)
    }
}

impl JValue {
    fn kind(&self) -> &'static str {
        match self {
            JValue::Null => "null",
            JValue::Bool(_) => "a boolean",
            JValue::Num(_) => "a number",
            JValue::Str(_) => "a string",
            JValue::Arr(_) => "an array",
            JValue::Obj(_) => "an object",
        }
    }
    fn get(&self, key: &str) -> Option<&JValue> {
        match self {
            JValue::Obj(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// Removes `//` and `/* */` comments outside strings, keeping newlines (so that the JSON
/// parser's line numbers still match the file).
pub(crate) fn strip_comments(s: &str) -> String {
    let b: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let (mut i, mut in_str) = (0, false);
    while i < b.len() {
        let c = b[i];
        if in_str {
            out.push(c);
            if c == '\\' && i + 1 < b.len() {
                out.push(b[i + 1]);
                i += 2;
                continue;
            }
            if c == '"' {
                in_str = false;
            }
            i += 1;
        } else if c == '"' {
            in_str = true;
            out.push(c);
            i += 1;
        } else if c == '/' && b.get(i + 1) == Some(&'/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && b.get(i + 1) == Some(&'*') {
            i += 2;
            while i < b.len() && !(b[i] == '*' && b.get(i + 1) == Some(&'/')) {
                if b[i] == '\n' {
                    out.push('\n');
                }
                i += 1;
            }
            i += 2;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Reads an rt-app JSON file.
/// The catalog entry of `rtapp`: its parameters (names as the real tool calls them),
/// defaults, help and builder.
pub(crate) const INFO: WorkloadInfo = WorkloadInfo {
    name: "rtapp",
    mirrors: "rt-app JSON workload (scheduler-tools/rt-app)",
    follows: "rt-app's JSON grammar (scheduler-tools/rt-app)",
    reconstructed: "nothing: events map onto the engine's primitives, unsupported ones are refused",
    about: "An rt-app JSON file whose events map onto the engine's primitives: `-w rtapp:PATH`.",
    params: &[param("path", "", "path", "the rt-app JSON file")],
    build: build_spec,
};

/// Builds `rtapp:PATH` through [`build`] (the path is the one parameter).
fn build_spec(a: &mut Args, topo: &Topology) -> Result<Built, WorkloadError> {
    // `text` reads `auto` as "not given"; a path is never derived, so keep it verbatim.
    let path = a.text("path").unwrap_or_else(|| "auto".into());
    a.resolve("path", &path);
    build(&path, topo)
}

pub(crate) fn build(path: &str, topo: &Topology) -> Result<Built, WorkloadError> {
    let text = std::fs::read(path)
        .and_then(schedlab_vocab::text::decode_io)
        .map_err(|e| WorkloadError::File {
            path: path.into(),
            msg: format!("cannot read: {e}"),
        })?;
    let doc = parse(&text, path)?;
    crate::ir::lower(&doc, topo)
}

struct Ctx<'a> {
    path: &'a str,
    unsupported_events: Vec<String>,
    unsupported_props: Vec<String>,
}

impl Ctx<'_> {
    fn err(&self, msg: impl Into<String>) -> WorkloadError {
        WorkloadError::File {
            path: self.path.into(),
            msg: msg.into(),
        }
    }
    /// Microseconds as ns, at most [`MAX_TIME_NS`] (one hour).
    fn us(&self, v: &JValue, what: &str) -> Result<u64, WorkloadError> {
        match v {
            JValue::Num(x) if *x > (MAX_TIME_NS / 1000) as f64 => Err(self.err(format!(
                "{what}: {x} us is longer than the 1 h a workload may name"
            ))),
            JValue::Num(x) if *x >= 0.0 && x.is_finite() => Ok((x * 1000.0).round() as u64),
            _ => Err(self.err(format!(
                "{what}: expected a non-negative number of microseconds, found {}",
                v.kind()
            ))),
        }
    }
    fn string<'v>(&self, v: &'v JValue, what: &str) -> Result<&'v str, WorkloadError> {
        match v {
            JValue::Str(s) => Ok(s),
            _ => Err(self.err(format!("{what}: expected a string, found {}", v.kind()))),
        }
    }
    fn int(&self, v: &JValue, what: &str) -> Result<i64, WorkloadError> {
        match v {
            JValue::Num(x) if x.fract() == 0.0 => Ok(*x as i64),
            _ => Err(self.err(format!(
                "{what}: expected a whole number, found {}",
                v.kind()
            ))),
        }
    }
}

/// Parses rt-app JSON text into the common workload form (`path` is for messages).
pub(crate) fn parse(text: &str, path: &str) -> Result<Doc, WorkloadError> {
    let clean = strip_comments(text);
    let root: JValue = serde_json::from_str(&clean).map_err(|e| WorkloadError::File {
        path: path.into(),
        msg: format!("invalid JSON: {e}"),
    })?;
    let mut cx = Ctx {
        path,
        unsupported_events: Vec::new(),
        unsupported_props: Vec::new(),
    };
    let JValue::Obj(top) = &root else {
        return Err(cx.err(format!(
            "the top level must be an object with \"tasks\", found {}",
            root.kind()
        )));
    };
    let mut doc = Doc {
        name: std::path::Path::new(path)
            .file_stem()
            .map_or("rt-app".into(), |s| s.to_string_lossy().into_owned()),
        source: path.to_string(),
        ..Default::default()
    };
    for (k, v) in top {
        match k.as_str() {
            "tasks" | "resources" => {}
            "global" => global(&mut cx, v, &mut doc)?,
            other => cx.unsupported_props.push(format!("top-level \"{other}\"")),
        }
    }
    let Some(JValue::Obj(tasks)) = root.get("tasks") else {
        return Err(cx.err("no \"tasks\" object"));
    };
    if tasks.is_empty() {
        return Err(cx.err("\"tasks\" is empty"));
    }
    let mut barriers: Vec<String> = Vec::new();
    for (name, t) in tasks {
        let task = task(&mut cx, name, t, &mut barriers)?;
        doc.tasks.push(task);
    }
    if !cx.unsupported_events.is_empty() {
        return Err(WorkloadError::RtAppUnsupported {
            path: path.into(),
            what: "events".into(),
            items: cx.unsupported_events,
            supported: SUPPORTED_EVENTS.into(),
        });
    }
    if !cx.unsupported_props.is_empty() {
        return Err(WorkloadError::RtAppUnsupported {
            path: path.into(),
            what: "properties".into(),
            items: cx.unsupported_props,
            supported: SUPPORTED_EVENTS.into(),
        });
    }
    // Forked tasks are templates: rt-app creates them only on `fork`.
    let forked: Vec<String> = doc.tasks.iter().flat_map(|t| forks(&t.program)).collect();
    for t in &mut doc.tasks {
        if forked.contains(&t.name) {
            t.start = false;
        }
    }
    for b in barriers {
        doc.barriers.push((b, None, None));
    }
    // rt-app waits for every thread, so one forever task keeps the run going after the
    // finite ones are done (the real tool runs until it is killed).
    let forever: Vec<&str> = doc
        .tasks
        .iter()
        .filter(|t| loops_forever(&t.program))
        .map(|t| t.name.as_str())
        .collect();
    if doc.duration_ns.is_none() && !forever.is_empty() {
        return Err(cx.err(format!(
            "task {} loops forever (\"loop\": -1, the default) and global \"duration\" is -1 \
             or absent: the run would never end; give each task a \"loop\" count or set a duration",
            forever.join(", ")
        )));
    }
    Ok(doc)
}

/// Whether a loop of `ops` repeats forever.
fn loops_forever(ops: &[IrOp]) -> bool {
    ops.iter().any(|op| match op {
        IrOp::Loop(n, body) => *n == u64::MAX || (*n > 0 && loops_forever(body)),
        _ => false,
    })
}

fn forks(ops: &[IrOp]) -> Vec<String> {
    let mut v = Vec::new();
    for op in ops {
        match op {
            IrOp::Fork(n) => v.push(n.text.clone()),
            IrOp::Loop(_, body) => v.extend(forks(body)),
            _ => {}
        }
    }
    v
}

fn global(cx: &mut Ctx<'_>, g: &JValue, doc: &mut Doc) -> Result<(), WorkloadError> {
    let JValue::Obj(m) = g else {
        return Err(cx.err(format!("\"global\" must be an object, found {}", g.kind())));
    };
    for (k, v) in m {
        match k.as_str() {
            "duration" => {
                let d = cx.int(v, "global.duration")?;
                if d > (MAX_TIME_NS / 1_000_000_000) as i64 {
                    return Err(cx.err(format!(
                        "global.duration {d} s is longer than the {} s a run may last",
                        MAX_TIME_NS / 1_000_000_000
                    )));
                }
                if d > 0 {
                    doc.duration_ns = Some(d as u64 * 1_000_000_000);
                }
            }
            "default_policy" => {
                let p = cx.string(v, "global.default_policy")?;
                if p != "SCHED_OTHER" {
                    cx.unsupported_props.push(format!(
                        "global.default_policy {p} (only SCHED_OTHER is simulated)"
                    ));
                }
            }
            // Host-side settings with no meaning in a simulation.
            "calibration" | "pi_enabled" | "lock_pages" | "logdir" | "log_basename"
            | "log_size" | "ftrace" | "gnuplot" | "io_device" | "mem_buffer_size"
            | "cumulative_slack" => {}
            other => cx.unsupported_props.push(format!("global.{other}")),
        }
    }
    Ok(())
}

fn task(
    cx: &mut Ctx<'_>,
    name: &str,
    t: &JValue,
    barriers: &mut Vec<String>,
) -> Result<IrTask, WorkloadError> {
    let JValue::Obj(m) = t else {
        return Err(cx.err(format!(
            "task \"{name}\" must be an object, found {}",
            t.kind()
        )));
    };
    let mut task = IrTask {
        name: name.to_string(),
        at: None,
        count: 1,
        start: true,
        nice: 0,
        cpus: None,
        mm: None,
        ws_bytes: None,
        mem_intensity: 0.0,
        node: None,
        slice_ns: None,
        program: Vec::new(),
    };
    let mut repeat = -1i64;
    let mut delay = 0u64;
    let mut policy = "SCHED_OTHER".to_string();
    let mut priority: Option<i64> = None;
    let mut inline_events = Vec::new();
    let mut phases = Vec::new();
    for (k, v) in m {
        match k.as_str() {
            "instance" => {
                let n = cx.int(v, &format!("{name}.instance"))?;
                task.count = n.max(0) as u64;
            }
            "loop" => repeat = cx.int(v, &format!("{name}.loop"))?,
            "delay" => delay = cx.us(v, &format!("{name}.delay"))?,
            "cpus" => task.cpus = Some(cpu_list(cx, v, &format!("{name}.cpus"))?),
            "policy" => policy = cx.string(v, &format!("{name}.policy"))?.to_string(),
            "priority" => priority = Some(cx.int(v, &format!("{name}.priority"))?),
            "membind_nodes" | "nodes_membind" => {
                let JValue::Arr(a) = v else {
                    return Err(cx.err(format!("{name}.{k}: expected an array of node numbers")));
                };
                let first = a
                    .first()
                    .map(|x| cx.int(x, &format!("{name}.{k}")))
                    .transpose()?;
                task.node = first.map(|n| n.max(0) as usize);
                task.mem_intensity = 0.5;
            }
            "phases" => {
                let JValue::Obj(ph) = v else {
                    return Err(cx.err(format!("{name}.phases must be an object")));
                };
                for (pname, p) in ph {
                    phases.push(phase(cx, name, pname, p, barriers)?);
                }
            }
            _ => {
                if let Some(op) = event(cx, name, k, v, barriers)? {
                    inline_events.push(op);
                } else if !is_event(k) {
                    cx.unsupported_props.push(format!("{name}.{k}"));
                }
            }
        }
    }
    match policy.as_str() {
        "SCHED_OTHER" => {
            let nice = priority.unwrap_or(0);
            if !(-20..=19).contains(&nice) {
                return Err(cx.err(format!(
                    "{name}.priority {nice}: SCHED_OTHER priorities are nice values -20..=19"
                )));
            }
            task.nice = nice as i32;
        }
        other => cx.unsupported_props.push(format!(
            "{name}.policy {other} (only SCHED_OTHER is simulated)"
        )),
    }
    if !phases.is_empty() && !inline_events.is_empty() {
        return Err(cx.err(format!(
            "task \"{name}\" has both \"phases\" and events outside them"
        )));
    }
    let body = if phases.is_empty() {
        inline_events
    } else {
        phases
    };
    if body.is_empty() && cx.unsupported_events.is_empty() {
        return Err(cx.err(format!("task \"{name}\" has no events")));
    }
    let count = if repeat < 0 { u64::MAX } else { repeat as u64 };
    let mut program = vec![IrOp::Loop(count, body)];
    if delay > 0 {
        program.insert(0, IrOp::Sleep(Dist::Const(delay)));
    }
    task.program = program;
    Ok(task)
}

fn phase(
    cx: &mut Ctx<'_>,
    task: &str,
    pname: &str,
    p: &JValue,
    barriers: &mut Vec<String>,
) -> Result<IrOp, WorkloadError> {
    let JValue::Obj(m) = p else {
        return Err(cx.err(format!("{task}.phases.{pname} must be an object")));
    };
    let mut n = 1u64;
    let mut ops = Vec::new();
    for (k, v) in m {
        if k == "loop" {
            let l = cx.int(v, &format!("{task}.phases.{pname}.loop"))?;
            n = if l < 0 { u64::MAX } else { l as u64 };
        } else if let Some(op) = event(cx, task, k, v, barriers)? {
            ops.push(op);
        } else if !is_event(k) {
            cx.unsupported_props
                .push(format!("{task}.phases.{pname}.{k}"));
        }
    }
    Ok(IrOp::Loop(n, ops))
}

fn is_event(key: &str) -> bool {
    EVENTS.iter().any(|e| key.starts_with(e))
}

fn cpu_list(cx: &Ctx<'_>, v: &JValue, what: &str) -> Result<String, WorkloadError> {
    let JValue::Arr(a) = v else {
        return Err(cx.err(format!("{what}: expected an array of CPU numbers")));
    };
    let mut parts = Vec::new();
    for x in a {
        let c = cx.int(x, what)?;
        if c < 0 {
            return Err(cx.err(format!("{what}: negative CPU {c}")));
        }
        parts.push(c.to_string());
    }
    Ok(parts.join(","))
}

/// Maps one event; `Ok(None)` for keys that are not events (or unsupported ones, recorded).
fn event(
    cx: &mut Ctx<'_>,
    task: &str,
    key: &str,
    v: &JValue,
    barriers: &mut Vec<String>,
) -> Result<Option<IrOp>, WorkloadError> {
    let Some(ev) = EVENTS.iter().find(|e| key.starts_with(**e)) else {
        return Ok(None);
    };
    if UNSUPPORTED.contains(ev) {
        cx.unsupported_events
            .push(format!("\"{key}\" in task {task}"));
        return Ok(None);
    }
    let what = format!("{task}.{key}");
    let name = |s: &str| Name::new(s, None);
    let op = match *ev {
        "run" | "runtime" => IrOp::Compute(Dist::Const(cx.us(v, &what)?)),
        "sleep" => IrOp::Sleep(Dist::Const(cx.us(v, &what)?)),
        "mem" => {
            let bytes = match v {
                JValue::Num(x) if *x > MAX_BYTES as f64 => {
                    return Err(cx.err(format!("{what}: more than 1 TiB")));
                }
                JValue::Num(x) if *x >= 0.0 => *x,
                _ => return Err(cx.err(format!("{what}: expected a number of bytes"))),
            };
            IrOp::Compute(Dist::Const((bytes * 0.1).round() as u64))
        }
        "timer" => {
            let p = v
                .get("period")
                .ok_or_else(|| cx.err(format!("{what}: a timer needs \"period\"")))?;
            let ns = cx.us(p, &format!("{what}.period"))?;
            if ns == 0 {
                return Err(cx.err(format!("{what}: period must be positive")));
            }
            IrOp::Timer(ns)
        }
        "lock" => IrOp::Lock {
            m: name(cx.string(v, &what)?),
            per_cpu: false,
            spin: 0,
        },
        "unlock" => IrOp::Unlock {
            m: name(cx.string(v, &what)?),
            per_cpu: false,
        },
        "wait" => {
            let r = v
                .get("ref")
                .ok_or_else(|| cx.err(format!("{what}: wait needs \"ref\"")))?;
            let r = cx.string(r, &format!("{what}.ref"))?;
            let mut ops = Vec::new();
            let mutex = v
                .get("mutex")
                .map(|m| cx.string(m, &format!("{what}.mutex")))
                .transpose()?;
            if let Some(m) = mutex {
                ops.push(IrOp::Unlock {
                    m: name(m),
                    per_cpu: false,
                });
            }
            ops.push(IrOp::FutexWait(name(&format!("cond:{r}"))));
            if let Some(m) = mutex {
                ops.push(IrOp::Lock {
                    m: name(m),
                    per_cpu: false,
                    spin: 0,
                });
            }
            IrOp::Loop(1, ops)
        }
        "signal" => IrOp::FutexWake(name(&format!("cond:{}", cx.string(v, &what)?)), 1),
        "broad" => IrOp::FutexWake(name(&format!("cond:{}", cx.string(v, &what)?)), WAKE_ALL),
        "barrier" => {
            let b = cx.string(v, &what)?.to_string();
            if !barriers.contains(&b) {
                barriers.push(b.clone());
            }
            IrOp::Barrier(name(&b))
        }
        "suspend" => {
            let s = match v {
                JValue::Str(s) if !s.is_empty() => s.as_str(),
                _ => task,
            };
            IrOp::FutexWait(name(&format!("suspend:{s}")))
        }
        "resume" => IrOp::FutexWake(name(&format!("suspend:{}", cx.string(v, &what)?)), 1),
        "yield" => IrOp::Yield,
        "fork" => IrOp::Fork(name(cx.string(v, &what)?)),
        _ => return Ok(None),
    };
    Ok(Some(op))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_are_stripped_outside_strings() {
        let s = "{ // c1\n \"a\": \"x // not a comment\", /* block\n */ \"b\": 1 }";
        let out = strip_comments(s);
        assert_eq!(out, "{ \n \"a\": \"x // not a comment\", \n \"b\": 1 }");
        let v: JValue = serde_json::from_str(&out).unwrap();
        assert_eq!(v.get("b"), Some(&JValue::Num(1.0)));
    }

    #[test]
    fn object_order_is_kept() {
        let v: JValue = serde_json::from_str(r#"{"sleep": 1, "run": 2, "a": 3}"#).unwrap();
        let JValue::Obj(m) = v else { panic!() };
        let keys: Vec<_> = m.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["sleep", "run", "a"]);
    }
}
