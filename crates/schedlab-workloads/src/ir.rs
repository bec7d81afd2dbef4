//! The common form of user-written workloads (TOML files and rt-app imports) and its
//! lowering onto the engine: names are resolved to ids, `{i}` is substituted per instance,
//! and every reference is checked, with the file location in the error where known.
//!
//! ```text
//!   TOML ──file.rs──┐
//!                    ├──▶ Doc { channels, barriers, tasks { program: [IrOp] } } ──lower──▶ Workload
//!   rt-app ─rtapp.rs┘                                                               + GenericReport
//! ```
//!
//! Naming rules: channels and barriers are declared; futexes, mutexes, lists, counters,
//! histograms and global timestamp slots come into existence when first named. In any name
//! `{i}` is the task instance (0..count), `{i+1}` / `{i-1}` the next / previous one modulo
//! the count (rings), `{n}` the count.

use crate::bounds::{MAX_CHANNELS, MAX_TASKS};
use crate::error::WorkloadError;
use crate::instance::{Report, metric, pct_us};
use crate::models::Built;
use schedlab_engine::task::{LockRef, Op, Slot, SpecId};
use schedlab_engine::{ChannelKind, Dist, Simulation, TaskSpec, Workload};
use schedlab_metrics::{Better, Metric};
use schedlab_topo::{CpuSet, Topology};
use schedlab_vocab::suggest::{closest, did_you_mean};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

/// A name as written, with where it was written (`line 3, column 9`) when the format knows.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Name {
    pub text: String,
    pub at: Option<String>,
}

impl Name {
    pub(crate) fn new(text: impl Into<String>, at: Option<String>) -> Self {
        Name {
            text: text.into(),
            at,
        }
    }
}

/// An operation with names instead of ids.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum IrOp {
    Compute(Dist),
    Send { ch: Name, bytes: Dist },
    Recv(Name),
    FutexWait(Name),
    FutexWake(Name, u32),
    ListAdd(Name),
    WakeList(Name),
    WaitSelf,
    Sleep(Dist),
    Timer(u64),
    Lock { m: Name, per_cpu: bool, spin: u64 },
    Unlock { m: Name, per_cpu: bool },
    Fork(Name),
    WaitChildren,
    Barrier(Name),
    Yield,
    Loop(u64, Vec<IrOp>),
    Stamp(Name),
    Record { hist: Name, since: Name },
    Count { counter: Name, amount: Dist },
    CountRecv(Name),
    Exit,
}

/// A declared task group.
#[derive(Clone, Debug)]
pub(crate) struct IrTask {
    pub name: String,
    pub at: Option<String>,
    pub count: u64,
    /// Started at t=0 (false: only a template for `fork`).
    pub start: bool,
    pub nice: i32,
    /// CPU list text (after `{i}` substitution, a cpulist like `0-3,8`).
    pub cpus: Option<String>,
    pub mm: Option<String>,
    pub ws_bytes: Option<u64>,
    pub mem_intensity: f64,
    pub node: Option<usize>,
    pub slice_ns: Option<u64>,
    pub program: Vec<IrOp>,
}

/// A whole user-written workload.
#[derive(Clone, Debug, Default)]
pub(crate) struct Doc {
    pub name: String,
    pub source: String,
    pub duration_ns: Option<u64>,
    pub headline: Option<String>,
    /// (name with `{i}` allowed, kind, count, where).
    pub channels: Vec<(String, ChannelKind, u64, Option<String>)>,
    /// (name, parties (None = count the users), where).
    pub barriers: Vec<(String, Option<u32>, Option<String>)>,
    pub tasks: Vec<IrTask>,
}

fn subst(text: &str, i: u64, n: u64) -> String {
    if !text.contains('{') {
        return text.to_string();
    }
    let n1 = n.max(1);
    text.replace("{i+1}", &((i + 1) % n1).to_string())
        .replace("{i-1}", &((i + n1 - 1) % n1).to_string())
        .replace("{i}", &i.to_string())
        .replace("{n}", &n.to_string())
}

fn uses_index(ops: &[IrOp]) -> bool {
    let has = |n: &Name| n.text.contains('{');
    ops.iter().any(|op| match op {
        IrOp::Send { ch: n, .. }
        | IrOp::Recv(n)
        | IrOp::FutexWait(n)
        | IrOp::FutexWake(n, _)
        | IrOp::ListAdd(n)
        | IrOp::WakeList(n)
        | IrOp::Lock { m: n, .. }
        | IrOp::Unlock { m: n, .. }
        | IrOp::Fork(n)
        | IrOp::Barrier(n)
        | IrOp::Stamp(n)
        | IrOp::Count { counter: n, .. }
        | IrOp::CountRecv(n) => has(n),
        IrOp::Record { hist, since } => has(hist) || has(since),
        IrOp::Loop(_, body) => uses_index(body),
        _ => false,
    })
}

fn visit<'a>(ops: &'a [IrOp], f: &mut impl FnMut(&'a IrOp)) {
    for op in ops {
        f(op);
        if let IrOp::Loop(_, body) = op {
            visit(body, f);
        }
    }
}

/// Refuses what can only be a mistake, seen without running: a `record` since a slot no op
/// ever stamps (it would measure from t = 0), and an `unlock` of a mutex no op ever locks
/// (a no-op at run time, as unlocking a mutex the task does not hold is). A task slot
/// (`0`..`6`) must be stamped by the same task; a global slot by any. Names with `{i}` are
/// left to the run (their instances differ).
fn check_pairs(doc: &Doc) -> Result<(), (Option<String>, String)> {
    let mut global_stamps = Vec::new();
    let mut locks = Vec::new();
    for t in &doc.tasks {
        visit(&t.program, &mut |op| match op {
            IrOp::Stamp(n) => global_stamps.push(n.text.as_str()),
            IrOp::Lock { m, per_cpu, .. } => locks.push((m.text.as_str(), *per_cpu)),
            _ => {}
        });
    }
    for t in &doc.tasks {
        let mut own = Vec::new();
        visit(&t.program, &mut |op| {
            if let IrOp::Stamp(n) = op {
                own.push(n.text.as_str());
            }
        });
        let mut bad = None;
        visit(&t.program, &mut |op| {
            if bad.is_some() {
                return;
            }
            match op {
                IrOp::Record { since, .. } if !since.text.contains('{') => {
                    let task_slot = since.text.parse::<u8>().is_ok();
                    let stamped = if task_slot { &own } else { &global_stamps };
                    if !stamped.contains(&since.text.as_str()) {
                        let (slot, by) = if task_slot {
                            (since.text.clone(), "no op of this task")
                        } else {
                            (format!("\"{}\"", since.text), "no op")
                        };
                        bad = Some((
                            since.at.clone(),
                            format!(
                                "task '{}': record since slot {slot}, which {by} stamps (it would measure from t = 0); add {{ op = \"stamp\", slot = {slot} }} where the interval starts",
                                t.name
                            ),
                        ));
                    }
                }
                IrOp::Unlock { m, per_cpu }
                    if !m.text.contains('{') && !locks.contains(&(m.text.as_str(), *per_cpu)) =>
                {
                    bad = Some((
                        m.at.clone(),
                        format!(
                            "task '{}': unlock of mutex '{}', which no op locks{} (unlocking a mutex nobody holds does nothing)",
                            t.name,
                            m.text,
                            if *per_cpu { " per CPU" } else { "" }
                        ),
                    ));
                }
                _ => {}
            }
        });
        if let Some(b) = bad {
            return Err(b);
        }
    }
    Ok(())
}

struct Names {
    by_name: BTreeMap<String, usize>,
}

impl Names {
    fn new() -> Self {
        Names {
            by_name: BTreeMap::new(),
        }
    }
    fn get_or(&mut self, name: &str, make: impl FnOnce() -> usize) -> usize {
        if let Some(&v) = self.by_name.get(name) {
            return v;
        }
        let v = make();
        self.by_name.insert(name.to_string(), v);
        v
    }
}

struct Lower<'d> {
    doc: &'d Doc,
    w: Workload,
    nr_cpus: usize,
    channels: BTreeMap<String, usize>,
    barriers: BTreeMap<String, usize>,
    futexes: Names,
    mutexes: Names,
    percpu: Names,
    lists: Names,
    counters: Names,
    hists: Names,
    slots: Names,
    /// Per task group: one spec per instance (all equal when the program has no `{i}`).
    specs: Vec<Vec<SpecId>>,
}

impl Lower<'_> {
    fn err(&self, at: &Option<String>, msg: impl Into<String>) -> WorkloadError {
        let msg = msg.into();
        WorkloadError::File {
            path: self.doc.source.clone(),
            msg: match at {
                Some(a) => format!("{a}: {msg}"),
                None => msg,
            },
        }
    }

    fn slot(&mut self, n: &Name, text: &str) -> Result<Slot, WorkloadError> {
        if let Ok(k) = text.parse::<u8>() {
            if k >= 7 {
                return Err(self.err(
                    &n.at,
                    format!("task timestamp slot {k} out of range (0..=6)"),
                ));
            }
            return Ok(Slot::Task(k));
        }
        let w = &mut self.w;
        let id = self.slots.get_or(text, || {
            w.global_slots += 1;
            w.global_slots - 1
        });
        Ok(Slot::Global(id))
    }

    fn ops(
        &mut self,
        task: usize,
        inst: u64,
        ops: &[IrOp],
        out: &mut Vec<Op>,
    ) -> Result<(), WorkloadError> {
        let count = self.doc.tasks[task].count;
        let s = |n: &Name| subst(&n.text, inst, count);
        for op in ops {
            let o = match op {
                IrOp::Compute(d) => Op::Compute(d.clone()),
                IrOp::Send { ch, bytes } => Op::Send {
                    ch: self.channel(ch, &s(ch))?,
                    bytes: bytes.clone(),
                },
                IrOp::Recv(ch) => Op::Recv {
                    ch: self.channel(ch, &s(ch))?,
                },
                IrOp::FutexWait(f) => Op::FutexWait(self.futex(&s(f))),
                IrOp::FutexWake(f, n) => Op::FutexWake {
                    f: self.futex(&s(f)),
                    n: *n,
                },
                IrOp::ListAdd(l) => Op::ListAdd(self.list(&s(l))),
                IrOp::WakeList(l) => Op::WakeList(self.list(&s(l))),
                IrOp::WaitSelf => Op::WaitSelf,
                IrOp::Sleep(d) => Op::Sleep(d.clone()),
                IrOp::Timer(p) => Op::Timer { period_ns: *p },
                IrOp::Lock { m, per_cpu, spin } => Op::Lock {
                    lock: self.mutex(m, &s(m), *per_cpu)?,
                    spin_ns: *spin,
                },
                IrOp::Unlock { m, per_cpu } => Op::Unlock(self.mutex(m, &s(m), *per_cpu)?),
                IrOp::Fork(t) => Op::Fork(self.fork_target(t, &s(t), inst)?),
                IrOp::WaitChildren => Op::WaitChildren,
                IrOp::Barrier(b) => {
                    let name = s(b);
                    let id = *self.barriers.get(&name).ok_or_else(|| {
                        let known: Vec<_> = self.barriers.keys().cloned().collect();
                        self.err(
                            &b.at,
                            format!(
                                "unknown barrier '{name}' (declared: {})",
                                list_or_none(&known)
                            ),
                        )
                    })?;
                    Op::Barrier(id)
                }
                IrOp::Yield => Op::Yield,
                IrOp::Loop(n, body) => {
                    out.push(Op::Loop(*n));
                    self.ops(task, inst, body, out)?;
                    Op::EndLoop
                }
                IrOp::Stamp(slot) => Op::Stamp(self.slot(slot, &s(slot))?),
                IrOp::Record { hist, since } => {
                    let name = s(hist);
                    let w = &mut self.w;
                    let h = self.hists.get_or(&name, || w.hist(name.clone()));
                    Op::RecordSince {
                        hist: h,
                        slot: self.slot(since, &s(since))?,
                    }
                }
                IrOp::Count { counter, amount } => {
                    let name = s(counter);
                    let w = &mut self.w;
                    Op::Count {
                        counter: self.counters.get_or(&name, || w.counter(name.clone())),
                        amount: amount.clone(),
                    }
                }
                IrOp::CountRecv(counter) => {
                    let name = s(counter);
                    let w = &mut self.w;
                    Op::CountLastRecv(self.counters.get_or(&name, || w.counter(name.clone())))
                }
                IrOp::Exit => Op::Exit,
            };
            out.push(o);
        }
        Ok(())
    }

    fn channel(&self, n: &Name, name: &str) -> Result<usize, WorkloadError> {
        self.channels.get(name).copied().ok_or_else(|| {
            let known: Vec<_> = self.channels.keys().cloned().collect();
            let hint = did_you_mean(closest(name, known.iter().map(String::as_str)).as_deref());
            let known = if known.len() > 12 {
                format!("{} channels", known.len())
            } else {
                list_or_none(&known)
            };
            self.err(
                &n.at,
                format!("unknown channel '{name}'{hint}; declared: {known}"),
            )
        })
    }

    fn futex(&mut self, name: &str) -> usize {
        let w = &mut self.w;
        self.futexes.get_or(name, || w.futex())
    }

    fn list(&mut self, name: &str) -> usize {
        let w = &mut self.w;
        self.lists.get_or(name, || w.list())
    }

    fn mutex(&mut self, n: &Name, name: &str, per_cpu: bool) -> Result<LockRef, WorkloadError> {
        let (mine, other) = if per_cpu {
            (&self.percpu, &self.mutexes)
        } else {
            (&self.mutexes, &self.percpu)
        };
        if other.by_name.contains_key(name) && !mine.by_name.contains_key(name) {
            return Err(self.err(
                &n.at,
                format!("mutex '{name}' is used both per-CPU and as a single mutex"),
            ));
        }
        let w = &mut self.w;
        if per_cpu {
            let cpus = self.nr_cpus;
            Ok(LockRef::PerCpu(
                self.percpu.get_or(name, || w.mutexes(cpus)),
            ))
        } else {
            Ok(LockRef::Fixed(self.mutexes.get_or(name, || w.mutexes(1))))
        }
    }

    fn fork_target(&self, n: &Name, name: &str, inst: u64) -> Result<SpecId, WorkloadError> {
        let Some(k) = self.doc.tasks.iter().position(|t| t.name == name) else {
            let known: Vec<_> = self.doc.tasks.iter().map(|t| t.name.clone()).collect();
            return Err(self.err(
                &n.at,
                format!(
                    "fork of unknown task '{name}' (tasks: {})",
                    list_or_none(&known)
                ),
            ));
        };
        let specs = &self.specs[k];
        if specs.iter().all(|&s| s == specs[0]) {
            return Ok(specs[0]);
        }
        specs.get(inst as usize).copied().ok_or_else(|| {
            self.err(&n.at, format!("instance {inst} forks '{name}', whose program uses {{i}} but has only {} instances", specs.len()))
        })
    }
}

fn list_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// Lowers a document onto the engine for `topo`.
pub(crate) fn lower(doc: &Doc, topo: &Topology) -> Result<Built, WorkloadError> {
    let mut l = Lower {
        doc,
        w: Workload::new(doc.name.clone()),
        nr_cpus: topo.nr_cpus(),
        channels: BTreeMap::new(),
        barriers: BTreeMap::new(),
        futexes: Names::new(),
        mutexes: Names::new(),
        percpu: Names::new(),
        lists: Names::new(),
        counters: Names::new(),
        hists: Names::new(),
        slots: Names::new(),
        specs: Vec::new(),
    };
    let total = doc
        .tasks
        .iter()
        .fold(0u64, |a, t| a.saturating_add(t.count));
    if total > MAX_TASKS {
        return Err(l.err(
            &None,
            format!("{total} task instances is more than the {MAX_TASKS} allowed"),
        ));
    }
    if doc.tasks.iter().all(|t| !t.start || t.count == 0) {
        return Err(l.err(
            &None,
            "no task is started (every task has count = 0 or start = false)",
        ));
    }
    check_pairs(doc).map_err(|(at, msg)| l.err(&at, msg))?;
    let channels = doc.channels.iter().fold(0u64, |a, c| a.saturating_add(c.2));
    if channels > MAX_CHANNELS {
        let at = doc
            .channels
            .iter()
            .max_by_key(|c| c.2)
            .and_then(|c| c.3.clone());
        return Err(l.err(
            &at,
            format!("{channels} channels is more than the {MAX_CHANNELS} allowed"),
        ));
    }
    for (name, kind, count, at) in &doc.channels {
        if count > &1 && !name.contains("{i}") {
            return Err(l.err(
                at,
                format!("channel '{name}' has count = {count} but no {{i}} in its name"),
            ));
        }
        for i in 0..*count {
            let n = subst(name, i, *count);
            if l.channels.contains_key(&n) {
                return Err(l.err(at, format!("channel '{n}' declared twice")));
            }
            let id = l.w.channel(*kind, n.clone());
            l.channels.insert(n, id);
        }
    }
    // Barrier parties: given, or the instances of the started tasks that use it.
    for (name, parties, at) in &doc.barriers {
        let parties = match parties {
            Some(p) => *p,
            None => {
                let mut n = 0u64;
                for t in &doc.tasks {
                    let mut used = false;
                    visit(&t.program, &mut |op| {
                        used |= matches!(op, IrOp::Barrier(b) if b.text == *name)
                    });
                    if used && !t.start {
                        return Err(l.err(at, format!("barrier '{name}' is used by forked task '{}': give it explicit parties", t.name)));
                    }
                    if used {
                        n += t.count;
                    }
                }
                if n == 0 {
                    return Err(l.err(at, format!("barrier '{name}' is never used")));
                }
                n as u32
            }
        };
        if parties == 0 {
            return Err(l.err(at, format!("barrier '{name}' needs at least one party")));
        }
        if l.barriers.contains_key(name) {
            return Err(l.err(at, format!("barrier '{name}' declared twice")));
        }
        let id = l.w.barrier(parties);
        l.barriers.insert(name.clone(), id);
    }
    // Reserve every template's id first, so that a fork may name any task.
    let per_instance: Vec<bool> = doc
        .tasks
        .iter()
        .map(|t| uses_index(&t.program) || t.cpus.as_deref().is_some_and(|c| c.contains('{')))
        .collect();
    for (t, &pi) in doc.tasks.iter().zip(&per_instance) {
        let n = if pi { t.count.max(1) } else { 1 };
        let ids = (0..n)
            .map(|_| l.w.spec(TaskSpec::new(t.name.clone(), Vec::new())))
            .collect();
        l.specs.push(ids);
    }
    let mut mm_keys: BTreeMap<String, u32> = BTreeMap::new();
    for (k, t) in doc.tasks.iter().enumerate() {
        if !(-20..=19).contains(&t.nice) {
            return Err(l.err(
                &t.at,
                format!("task '{}': nice {} outside -20..=19", t.name, t.nice),
            ));
        }
        if !(0.0..=1.0).contains(&t.mem_intensity) {
            return Err(l.err(
                &t.at,
                format!(
                    "task '{}': mem_intensity {} outside 0..=1",
                    t.name, t.mem_intensity
                ),
            ));
        }
        if let Some(node) = t.node
            && node >= topo.nr_nodes()
        {
            return Err(l.err(
                &t.at,
                format!(
                    "task '{}': node {node} does not exist ({} nodes)",
                    t.name,
                    topo.nr_nodes()
                ),
            ));
        }
        let ids = l.specs[k].clone();
        for (i, &id) in ids.iter().enumerate() {
            let i = i as u64;
            let mut prog = Vec::new();
            l.ops(k, i, &t.program, &mut prog)?;
            let mut spec = TaskSpec::new(t.name.clone(), prog);
            spec.nice = t.nice;
            if let Some(c) = &t.cpus {
                let text = subst(c, i, t.count);
                let cpus = schedlab_topo::cpulist::parse_cpu_list(&text)
                    .map_err(|e| l.err(&t.at, format!("task '{}': cpus '{text}': {e}", t.name)))?;
                if let Some(bad) = cpus.iter().find(|&&c| c.index() >= l.nr_cpus) {
                    return Err(l.err(
                        &t.at,
                        format!(
                            "task '{}': CPU {bad} does not exist on this {}-CPU machine",
                            t.name, l.nr_cpus
                        ),
                    ));
                }
                if cpus.is_empty() {
                    return Err(l.err(&t.at, format!("task '{}': empty cpus list", t.name)));
                }
                spec.affinity = Some(CpuSet::from_cpus(l.nr_cpus, cpus));
            }
            if let Some(mm) = &t.mm {
                let next = mm_keys.len() as u32;
                spec.mm = Some(*mm_keys.entry(subst(mm, i, t.count)).or_insert(next));
            }
            if let Some(ws) = t.ws_bytes {
                spec.ws_bytes = ws;
            }
            spec.mem_intensity = t.mem_intensity;
            spec.home_node = t.node;
            spec.slice_ns = t.slice_ns;
            l.w.specs[id] = spec;
        }
        if t.start {
            for i in 0..t.count {
                let id = ids[if per_instance[k] { i as usize } else { 0 }];
                l.w.initial.push(id);
            }
        }
    }
    l.w.duration_ns = doc.duration_ns;
    let counters: Vec<(String, usize)> = l
        .counters
        .by_name
        .iter()
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    let hists: Vec<(String, usize)> = l
        .hists
        .by_name
        .iter()
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    let report = GenericReport {
        name: doc.name.clone(),
        source: doc.source.clone(),
        duration_based: doc.duration_ns.is_some(),
        counters,
        hists,
        headline: None,
    };
    let names = report.metric_names();
    let headline = match &doc.headline {
        Some(h) => {
            let Some(m) = names.iter().find(|(n, _)| n == h) else {
                let known: Vec<String> = names.iter().map(|(n, _)| n.clone()).collect();
                return Err(l.err(
                    &None,
                    format!(
                        "headline '{h}' is not a metric of this workload (metrics: {})",
                        known.join(", ")
                    ),
                ));
            };
            Some(m.clone())
        }
        None => None,
    };
    Ok((l.w, Arc::new(GenericReport { headline, ..report })))
}

/// The result of a user-written workload: elapsed time, each counter (total and rate) and
/// each histogram (count, mean and percentiles in µs). There is no real tool's format to
/// follow, so the native text is schedlab's own summary.
struct GenericReport {
    name: String,
    source: String,
    duration_based: bool,
    counters: Vec<(String, usize)>,
    hists: Vec<(String, usize)>,
    headline: Option<(String, Better)>,
}

impl GenericReport {
    /// Every metric name with its direction, headline default first.
    fn metric_names(&self) -> Vec<(String, Better)> {
        let mut v = Vec::new();
        for (c, _) in &self.counters {
            v.push((format!("{c}_per_s"), Better::Higher));
            v.push((c.clone(), Better::Higher));
        }
        v.push(("elapsed_s".into(), Better::Lower));
        for (h, _) in &self.hists {
            for s in ["p50_us", "p90_us", "p99_us", "mean_us", "max_us"] {
                v.push((format!("{h}_{s}"), Better::Lower));
            }
        }
        v
    }
}

impl Report for GenericReport {
    fn headline(&self) -> (String, Better) {
        self.headline
            .clone()
            .unwrap_or_else(|| self.metric_names().swap_remove(0))
    }
    fn duration_based(&self) -> bool {
        self.duration_based
    }
    fn extract(&self, sim: &Simulation) -> Result<(String, Vec<Metric>), WorkloadError> {
        let t = sim.now() as f64 / 1e9;
        let mut native = format!(
            "schedlab workload '{}' ({})\nelapsed: {t:.6} s\n",
            self.name, self.source
        );
        let mut m = Vec::new();
        for (c, id) in &self.counters {
            let v = sim.user_counter(*id);
            let rate = if t > 0.0 { v / t } else { 0.0 };
            let _ = writeln!(native, "counter {c}: {v} ({rate:.2}/s)");
            m.push(metric(&format!("{c}_per_s"), rate, "1/s", Better::Higher));
            m.push(metric(c, v, "", Better::Higher));
        }
        m.push(metric("elapsed_s", t, "s", Better::Lower));
        for (name, id) in &self.hists {
            let h = sim.user_hist(*id);
            let (p50, p90, p99) = (pct_us(h, 50.0), pct_us(h, 90.0), pct_us(h, 99.0));
            let mean = if h.is_empty() { 0.0 } else { h.mean() / 1e3 };
            let max = crate::instance::min_max_us(h).1;
            let _ = writeln!(
                native,
                "histogram {name}: n={} mean={mean:.1}us p50={p50}us p90={p90}us p99={p99}us max={max}us",
                h.len()
            );
            for (s, v) in [
                ("p50_us", p50 as f64),
                ("p90_us", p90 as f64),
                ("p99_us", p99 as f64),
                ("mean_us", mean),
                ("max_us", max as f64),
            ] {
                m.push(metric(&format!("{name}_{s}"), v, "us", Better::Lower));
            }
        }
        let (h, _) = self.headline();
        if let Some(pos) = m.iter().position(|x| x.name == h) {
            let x = m.remove(pos);
            m.insert(0, x);
        }
        Ok((native, m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_substitution_wraps() {
        assert_eq!(subst("c{i}", 2, 4), "c2");
        assert_eq!(subst("c{i+1}", 3, 4), "c0");
        assert_eq!(subst("c{i-1}", 0, 4), "c3");
        assert_eq!(subst("of{n}", 0, 4), "of4");
        assert_eq!(subst("plain", 1, 4), "plain");
    }
}
