//! The difference between two variants: how each budget line moved, every counter side by
//! side, and the sentence. A counter is ranked by the budget line it drives (`class_of`:
//! wakeup preemptions drive context-switch time, wakeup migrations the refetch after
//! them), so the list starts with what accounts for most of the change in CPU time.

use super::budget::{Budget, label_of};
use super::mean::Mean;
use crate::report::{Direction, Verdict};
use serde::{Deserialize, Serialize};

/// How one budget line changed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassDelta {
    /// The line's key.
    pub key: String,
    /// Its label.
    pub label: String,
    /// Baseline CPU-seconds.
    pub base_cpu_s: f64,
    /// This variant's CPU-seconds.
    pub cpu_s: f64,
    /// `cpu_s - base_cpu_s`.
    pub delta_cpu_s: f64,
    /// Its share of the budget's change: `delta / sum of |delta|` over the lines.
    pub share: f64,
}

/// One counter side by side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CounterRow {
    /// The counter's name (the kernel's where it has one).
    pub name: String,
    /// The budget line it drives.
    pub class: String,
    /// Baseline mean.
    pub base: f64,
    /// This variant's mean.
    pub value: f64,
    /// `value - base`.
    pub delta: f64,
    /// `delta / base` (infinite from 0).
    pub rel: f64,
    /// The share of its class in the budget's change.
    pub share: f64,
}

/// The budget line a counter drives, and the words for it in the sentence.
fn class_of(name: &str) -> (&'static str, &'static str) {
    let n = name.split('.').next().unwrap_or(name);
    match n {
        "preempt_wakeup" => ("ctx_switch", "wakeup preemptions"),
        "preempt_tick" => ("ctx_switch", "tick preemptions"),
        "ctx_switches" => ("ctx_switch", "context switches"),
        "ctx_voluntary" => ("ctx_switch", "voluntary switches"),
        "ctx_involuntary" => ("ctx_switch", "involuntary switches"),
        "sched_count" => ("ctx_switch", "schedule() calls"),
        "timeslices" => ("ctx_switch", "timeslices"),
        "yld_count" => ("ctx_switch", "yields"),
        "wakeups_local" | "ttwu_local" => ("wake_local", "local wakeups"),
        "wakeups_affine" | "ttwu_move_affine" => ("wake_local", "affine wakeups"),
        "wakeups_sync" => ("wake_local", "sync wakeups"),
        "wakeups" | "ttwu_count" => ("wake_remote", "wakeups"),
        "wakeups_remote" | "ttwu_wake_remote" => ("wake_remote", "remote wakeups"),
        "ipis" => ("ipi", "wakeup IPIs"),
        "wakeups_polling" => ("ipi", "wakeups of a polling CPU"),
        "migrations_wake" => ("refetch", "wakeup migrations"),
        "migrations_balance" | "lb_gained" | "lb_hot_gained" => ("refetch", "balance migrations"),
        "migrations_active" | "alb_count" | "alb_pushed" | "alb_failed" => {
            ("refetch", "active balances")
        }
        "forks" => ("task", "forks"),
        "idle_exits" => ("idle_exit", "idle exits"),
        "wakeups_to_idle" => ("idle_exit", "wakeups onto an idle CPU"),
        "sched_goidle" => ("idle_empty", "switches to idle"),
        "sis" => ("search", "idle searches"),
        _ if n.starts_with("lb_") => ("balance", "balance passes"),
        "balance_passes" | "newidle_passes" => ("balance", "balance passes"),
        _ => ("task", "events"),
    }
}

/// The budget line of a counter, with idle exits by state matched to their own line.
fn line_of(name: &str) -> String {
    match name.strip_prefix("idle_exits.") {
        Some(state) => format!("idle_exit.{state}"),
        None => class_of(name).0.to_string(),
    }
}

/// How each line of `b` differs from the baseline's `a`, largest change first.
pub fn class_deltas(a: &Budget, b: &Budget) -> Vec<ClassDelta> {
    let mut keys: Vec<String> = a.lines.iter().map(|l| l.key.clone()).collect();
    for l in &b.lines {
        if !keys.contains(&l.key) {
            keys.push(l.key.clone());
        }
    }
    let total: f64 = keys
        .iter()
        .map(|k| (b.cpu_s(k) - a.cpu_s(k)).abs())
        .sum::<f64>()
        .max(f64::MIN_POSITIVE);
    let mut v: Vec<ClassDelta> = keys
        .iter()
        .map(|k| {
            let d = b.cpu_s(k) - a.cpu_s(k);
            ClassDelta {
                key: k.clone(),
                label: label_of(k),
                base_cpu_s: a.cpu_s(k),
                cpu_s: b.cpu_s(k),
                delta_cpu_s: d,
                share: d / total,
            }
        })
        .collect();
    v.sort_by(|x, y| y.delta_cpu_s.abs().total_cmp(&x.delta_cpu_s.abs()));
    v
}

/// Every counter of either side, ordered by the share of the budget line it drives, then by
/// its own relative change.
pub fn counter_rows(a: &Mean, b: &Mean, classes: &[ClassDelta]) -> Vec<CounterRow> {
    let mut names: Vec<&str> = a.with_prefix("count.").map(|(k, _)| k).collect();
    for (k, _) in b.with_prefix("count.") {
        if !names.contains(&k) {
            names.push(k);
        }
    }
    let share = |line: &str| {
        classes
            .iter()
            .find(|c| c.key == line || (line == "idle_exit" && c.key.starts_with("idle_exit.")))
            .map_or(0.0, |c| c.share)
    };
    let mut rows: Vec<CounterRow> = names
        .iter()
        .map(|n| {
            let key = format!("count.{n}");
            let (base, value) = (a.get(&key), b.get(&key));
            let delta = value - base;
            let line = line_of(n);
            CounterRow {
                name: n.to_string(),
                share: share(&line),
                class: line,
                base,
                value,
                delta,
                rel: if base == 0.0 {
                    if delta == 0.0 { 0.0 } else { f64::INFINITY }
                } else {
                    delta / base
                },
            }
        })
        .collect();
    rows.sort_by(|x, y| {
        y.share
            .abs()
            .total_cmp(&x.share.abs())
            .then(rel_key(y).total_cmp(&rel_key(x)))
            .then(x.name.cmp(&y.name))
    });
    rows
}

/// How far a counter moved, for ranking within its class: its change weighted by how much
/// of it changed (a counter from 0 counts as a 100 % change), so neither a tiny count that
/// doubled nor a huge one that barely moved leads.
fn rel_key(r: &CounterRow) -> f64 {
    if r.delta == 0.0 {
        0.0
    } else {
        r.delta.abs() * (r.delta.abs() / r.base.max(r.value)).min(1.0)
    }
}

/// Totals that move because their parts do: named in the sentence only when no part of
/// their line moved (`ctx_switches` is the sum of the switches whose causes lead).
fn is_aggregate(name: &str) -> bool {
    matches!(
        name,
        "ctx_switches"
            | "ctx_voluntary"
            | "ctx_involuntary"
            | "sched_count"
            | "timeslices"
            | "wakeups"
            | "ttwu_count"
            | "wakeups_sync"
            | "idle_exits"
            | "balance_passes"
            | "sis.searches"
            | "sis.cpus_scanned"
            | "sis.failures"
    ) || name.starts_with("lb_count.")
}

/// A count in the field's shorthand: `1,160,000` as `1.16 M`, `12,400` as `12.4 K`.
pub fn fmt_count(x: f64) -> String {
    let a = x.abs();
    if a >= 1e6 {
        format!("{:.2} M", a / 1e6)
    } else if a >= 1e4 {
        format!("{:.1} K", a / 1e3)
    } else {
        format!("{a:.0}")
    }
}

/// The sentence: `X is 30 % faster than B: 1.16 M fewer wakeup preemptions (context
/// switch -2.2 CPU-s), ...`, naming the three budget lines that moved most and, for each,
/// the counter of that line that moved most.
pub fn summary(
    variant: &str,
    base: &str,
    verdict: &Verdict,
    is_time: bool,
    classes: &[ClassDelta],
    rows: &[CounterRow],
) -> String {
    let head = match verdict.direction {
        Direction::Better | Direction::Worse => {
            let word = match (verdict.direction == Direction::Better, is_time) {
                (true, true) => "faster",
                (false, true) => "slower",
                (true, false) => "better",
                (false, false) => "worse",
            };
            format!(
                "{variant} is {:.1} % {word} than {base}",
                verdict.gain_pct.abs()
            )
        }
        _ => format!("{variant} against {base}: {}", verdict.text),
    };
    let parts: Vec<String> = classes
        .iter()
        .filter(|c| c.delta_cpu_s != 0.0)
        .take(3)
        .map(|c| {
            let cls = format!("{} {:+.3} CPU-s", c.label, c.delta_cpu_s);
            let best = |agg: bool| {
                rows.iter()
                    .filter(|r| r.class == c.key && r.delta != 0.0 && is_aggregate(&r.name) == agg)
                    .max_by(|x, y| rel_key(x).total_cmp(&rel_key(y)))
            };
            let lead = best(false).or_else(|| best(true));
            match lead {
                Some(r) => format!(
                    "{} {} {} ({cls})",
                    fmt_count(r.delta),
                    if r.delta < 0.0 { "fewer" } else { "more" },
                    class_of(&r.name).1
                ),
                None => cls,
            }
        })
        .collect();
    if parts.is_empty() {
        format!("{head}; no budget line moved")
    } else {
        format!("{head}: {}", parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_written_in_the_fields_shorthand() {
        assert_eq!(fmt_count(-1_160_000.0), "1.16 M");
        assert_eq!(fmt_count(-967_626.0), "967.6 K");
        assert_eq!(fmt_count(12_400.0), "12.4 K");
        assert_eq!(fmt_count(12.0), "12");
    }

    #[test]
    fn preemptions_drive_the_switch_line_and_migrations_the_refetch() {
        assert_eq!(class_of("preempt_wakeup").0, "ctx_switch");
        assert_eq!(class_of("migrations_wake").0, "refetch");
        assert_eq!(class_of("lb_balanced.idle").0, "balance");
        assert_eq!(line_of("idle_exits.C1"), "idle_exit.C1");
    }
}
