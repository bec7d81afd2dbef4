//! The text of `schedlab explain`: per sweep point the budgets side by side, then per
//! variant the sentence, the budget lines that moved and every counter that is not zero on
//! both sides, in the order of `diff.rs`.

use super::diff::fmt_count;
use super::{Explanation, PointExplanation, VariantExplanation};

/// The whole text.
pub fn text(e: &Explanation) -> String {
    let mut s = format!(
        "explain: {} on {}; headline {} ({} is better)\n",
        e.workload,
        e.topology,
        e.metric,
        if e.lower_is_better { "lower" } else { "higher" }
    );
    for p in &e.points {
        s.push('\n');
        if !p.label.is_empty() && p.label != "-" {
            s.push_str(&format!("=== {} ===\n", p.label));
        }
        budget_table(&mut s, p);
        for v in &p.versus {
            versus(&mut s, p, v);
        }
    }
    s
}

/// The budgets of a point, one column per variant.
fn budget_table(s: &mut String, p: &PointExplanation) {
    s.push_str("time budget, CPU-s (share of CPUs x elapsed):\n");
    s.push_str(&format!("  {:<42}", "line"));
    for (i, b) in p.budgets.iter().enumerate() {
        s.push_str(&format!(" {:>22}", column_name(i, &b.variant)));
    }
    s.push('\n');
    let Some(first) = p.budgets.first() else {
        return;
    };
    for (li, line) in first.lines.iter().enumerate() {
        if p.budgets
            .iter()
            .all(|b| b.lines.get(li).is_none_or(|l| l.cpu_s == 0.0))
        {
            continue;
        }
        s.push_str(&format!("  {:<42}", line.label));
        for b in &p.budgets {
            let v = b.cpu_s(&line.key);
            let share = v / b.total_cpu_s.max(f64::MIN_POSITIVE) * 100.0;
            s.push_str(&format!(" {:>13.4} {:>7.2}%", v, share));
        }
        s.push('\n');
    }
    let row = |s: &mut String, label: &str, f: &dyn Fn(&super::Budget) -> String| {
        s.push_str(&format!("  {label:<42}"));
        for b in &p.budgets {
            s.push_str(&format!(" {:>22}", f(b)));
        }
        s.push('\n');
    };
    row(s, "= CPUs x elapsed", &|b| format!("{:.4}", b.total_cpu_s));
    row(s, "budget closes to", &|b| {
        format!("{:.4} %", b.closure_error * 100.0)
    });
    row(s, "runnable-but-waiting, task-s (not summed)", &|b| {
        format!("{:.4}", b.run_delay_s)
    });
}

/// A column's heading: the variant, shortened to its tail when long.
fn column_name(i: usize, v: &str) -> String {
    let tag = if i == 0 { "base " } else { "" };
    let n = format!("{tag}{v}");
    if n.len() <= 22 {
        n
    } else {
        format!("…{}", &n[n.len() - 21..])
    }
}

/// One variant against the baseline.
fn versus(s: &mut String, p: &PointExplanation, v: &VariantExplanation) {
    let base = p.budgets.first().map_or("", |b| b.variant.as_str());
    s.push_str(&format!(
        "\n{} vs {}: {} (ratio {:.4})\n{}\n",
        v.variant, base, v.verdict, v.ratio, v.summary
    ));
    decisions(s, v);
    s.push_str("budget change, CPU-s (share of the change):\n");
    for c in v.classes.iter().filter(|c| c.delta_cpu_s != 0.0) {
        s.push_str(&format!(
            "  {:<42} {:>+13.4} {:>+8.1}%\n",
            c.label,
            c.delta_cpu_s,
            c.share * 100.0
        ));
    }
    s.push_str("counters, by the share of the budget change their line accounts for:\n");
    s.push_str(&format!(
        "  {:<26} {:<24} {:>14} {:>14} {:>12} {:>9} {:>8}\n",
        "counter", "line", "base", "variant", "delta", "rel", "share"
    ));
    for r in v
        .counters
        .iter()
        .filter(|r| r.base != 0.0 || r.value != 0.0)
    {
        let rel = if r.rel.is_finite() {
            format!("{:+.1}%", r.rel * 100.0)
        } else {
            "new".to_string()
        };
        s.push_str(&format!(
            "  {:<26} {:<24} {:>14.1} {:>14.1} {:>12} {:>9} {:>+7.1}%\n",
            r.name,
            super::budget::label_of(&r.class),
            r.base,
            r.value,
            format!(
                "{}{}",
                if r.delta < 0.0 { "-" } else { "+" },
                fmt_count(r.delta)
            ),
            rel,
            r.share * 100.0
        ));
    }
}

/// The wakeup-path decision counters and what each counts, in the order they are taken.
const DECISIONS: &[(&str, &str)] = &[
    ("wakeups_affine", "pulled to the waker's CPU (wake_affine)"),
    ("ttwu_move_affine", "affine moves (schedstat)"),
    ("wakeups_sync", "sync wakeups"),
    ("sis.searches", "idle searches"),
    ("sis.prev", "kept on the previous CPU"),
    ("sis.target", "kept on the target CPU"),
    ("sis.recent_used_cpu", "placed on the recently used CPU"),
    ("sis.idle_core", "placed on an idle core"),
    ("sis.idle_cpu", "placed on an idle CPU"),
    ("sis.idle_smt", "placed on an idle SMT sibling"),
    ("sis.failures", "searches that found no idle CPU"),
    ("sis.cpus_scanned", "CPUs scanned"),
    ("wakeups_local", "woken on the waker's CPU"),
    ("wakeups_remote", "woken on another CPU"),
    ("wakeups_to_idle", "woken onto an idle CPU"),
    ("migrations_wake", "moved by the wakeup"),
    ("ipis", "IPIs sent"),
    ("preempt_wakeup", "wakeup preemptions"),
];

/// The wakeup-path decisions that changed most: each counter per 100 wakeups on both sides
/// (so that a variant that simply ran more or fewer wakeups does not move them), largest
/// change first; which placements the variant took less, and where those wakees went.
fn decisions(s: &mut String, v: &VariantExplanation) {
    let find = |name: &str| v.counters.iter().find(|r| r.name == name);
    let Some(w) = find("wakeups").filter(|w| w.base > 0.0 && w.value > 0.0) else {
        return;
    };
    let mut rows: Vec<(&str, f64, f64, &str)> = DECISIONS
        .iter()
        .filter_map(|(name, what)| {
            let r = find(name)?;
            let (b, x) = (r.base / w.base * 100.0, r.value / w.value * 100.0);
            ((x - b).abs() >= 0.005).then_some((*name, b, x, *what))
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    rows.sort_by(|a, b| (b.2 - b.1).abs().total_cmp(&(a.2 - a.1).abs()));
    s.push_str("decisions changed (wakeup path, per 100 wakeups, largest change first):\n");
    for (name, b, x, what) in rows.iter().take(8) {
        s.push_str(&format!(
            "  {name:<20} {b:>9.2} -> {x:>9.2} {:>+9.2}  {what}\n",
            x - b
        ));
    }
}
