//! The time budget of a variant: where the machine's CPU time (CPUs × elapsed) went, from
//! task work through each kernel cost class to the kinds of idle, with the runnable-but-
//! waiting time of tasks beside it (task time, not CPU time, so outside the sum).
//!
//! Task work is what the busy time holds beyond the classes (the tasks' own work and their
//! syscalls); idle with nothing runnable is what the idle time holds beyond its exits and
//! the time a task waited elsewhere. The engine's idle-while-waiting time also counts part
//! of the exits (a CPU leaving idle for the task queued on it), so that line may hold up to
//! the exit time twice over; it is capped to what the idle time leaves beside the exits. Both are remainders, so the budget's check is that the
//! measured parts fit: neither remainder may be negative, and the lines must add up to CPUs
//! × elapsed as the per-CPU busy and idle clocks measured it.

use super::mean::Mean;
use serde::{Deserialize, Serialize};

/// The kernel cost classes of the busy time: key and label.
pub const CLASSES: [(&str, &str); 11] = [
    ("ctx_switch", "context switch"),
    ("wake_local", "local wakeup"),
    ("wake_remote", "remote wakeup"),
    ("ipi", "IPI send"),
    ("refetch", "refetch after migration"),
    ("transfer", "message transfer"),
    ("contention", "contention"),
    ("search", "idle search"),
    ("balance", "balancing"),
    ("softirq", "softirq"),
    ("smt", "SMT sharing (busy sibling)"),
];

/// One line of a budget.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BudgetLine {
    /// `task`, a class key, `idle_exit.STATE`, `idle_waiting` or `idle_empty`.
    pub key: String,
    /// What it is, in words.
    pub label: String,
    /// CPU-seconds (mean over repetitions).
    pub cpu_s: f64,
    /// Fraction of CPUs × elapsed.
    pub share: f64,
}

/// A variant's budget.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// Canonical variant name.
    pub variant: String,
    /// CPUs × elapsed, CPU-seconds.
    pub total_cpu_s: f64,
    /// The lines, in order; they add up to `total_cpu_s`.
    pub lines: Vec<BudgetLine>,
    /// Runnable-but-waiting time of tasks, task-seconds (not part of the sum).
    pub run_delay_s: f64,
    /// `|sum of lines - total| / total`.
    pub closure_error: f64,
}

impl Budget {
    /// The line `key`'s CPU-seconds (0 when absent).
    pub fn cpu_s(&self, key: &str) -> f64 {
        self.lines
            .iter()
            .find(|l| l.key == key)
            .map_or(0.0, |l| l.cpu_s)
    }
}

/// The budget of `variant` from its mean counters.
pub fn budget(variant: &str, m: &Mean) -> Budget {
    let total = m.get("nr_cpus") * m.get("elapsed_ns") / 1e9;
    let busy = m.get("busy_ns") / 1e9;
    let idle = m.get("idle_ns") / 1e9;
    let mut lines = Vec::new();
    let mut classes = 0.0;
    let mut class_lines = Vec::new();
    for (k, label) in CLASSES {
        let v = m.get(&format!("cost.{k}")) / 1e9;
        classes += v;
        class_lines.push((k.to_string(), label.to_string(), v));
    }
    lines.push(("task".to_string(), "task work".to_string(), busy - classes));
    lines.extend(class_lines);
    let mut exits = 0.0;
    for (k, v) in m.with_prefix("idle_exit.") {
        exits += v / 1e9;
        lines.push((
            format!("idle_exit.{k}"),
            format!("idle exit from {k}"),
            v / 1e9,
        ));
    }
    // The engine's idle-while-waiting time counts a CPU leaving idle for a task queued on
    // it, so it overlaps the exits: what does not fit beside them is that overlap.
    let waiting = (m.get("idle_while_waiting_ns") / 1e9).min((idle - exits).max(0.0));
    lines.push((
        "idle_waiting".into(),
        "idle while a task waited on another CPU".into(),
        waiting,
    ));
    lines.push((
        "idle_empty".into(),
        "idle with nothing runnable".into(),
        idle - exits - waiting,
    ));
    let sum: f64 = lines.iter().map(|l| l.2).sum();
    Budget {
        variant: variant.to_string(),
        total_cpu_s: total,
        lines: lines
            .into_iter()
            .map(|(key, label, cpu_s)| BudgetLine {
                key,
                label,
                cpu_s,
                share: cpu_s / total.max(f64::MIN_POSITIVE),
            })
            .collect(),
        run_delay_s: m.get("run_delay_ns") / 1e9,
        closure_error: (sum - total).abs() / total.max(f64::MIN_POSITIVE),
    }
}

/// The label of a budget line key (`task`, a class, an idle kind).
pub fn label_of(key: &str) -> String {
    if let Some((_, l)) = CLASSES.iter().find(|(k, _)| *k == key) {
        return l.to_string();
    }
    match key {
        "task" => "task work".into(),
        "idle_exit" => "idle exit".into(),
        "idle_waiting" => "idle while a task waited".into(),
        "idle_empty" => "idle with nothing runnable".into(),
        "run_delay" => "runnable-but-waiting".into(),
        k => match k.strip_prefix("idle_exit.") {
            Some(s) => format!("idle exit from {s}"),
            None => k.to_string(),
        },
    }
}
