//! The suite's text: the headline and effect tables, the dynamics table (`dynamics.rs`) (Markdown, readable in a
//! terminal too), the distance line and the summary line.

use super::{EFFECT_TOL, Effect, HEADLINE_TOL, Row, Side, rel_err, spread};
use std::fmt::Write as _;

fn fmt_err(e: f64) -> String {
    if e.is_finite() {
        format!("{:+.1} %", e * 100.0)
    } else {
        "-".into()
    }
}

fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}

/// The summary counts: (headlines within, headlines, effects within, effects).
pub fn summary_counts(rows: &[Row], effects: &[Effect]) -> (usize, usize, usize, usize) {
    let within = |e: f64, tol| e.is_finite() && e.abs() <= tol;
    let n_h = rows.len();
    let k_h = rows
        .iter()
        .filter(|r| within(rel_err(r.real.median(), r.sim.median()), HEADLINE_TOL))
        .count();
    let ratios = effect_ratios(rows, effects);
    let n_e = ratios.len();
    let k_e = ratios
        .iter()
        .filter(|(_, real, sim)| within(rel_err(*real, *sim), EFFECT_TOL))
        .count();
    (k_h, n_h, k_e, n_e)
}

/// Each effect whose two benchmarks ran: (name, real ratio, simulated ratio).
pub fn effect_ratios<'a>(rows: &[Row], effects: &'a [Effect]) -> Vec<(&'a str, f64, f64)> {
    let find = |id: &str| rows.iter().find(|r| r.bench.id == id);
    effects
        .iter()
        .filter_map(|e| {
            let (n, d) = (find(&e.num)?, find(&e.den)?);
            Some((
                e.name.as_str(),
                n.real.median() / d.real.median(),
                n.sim.median() / d.sim.median(),
            ))
        })
        .collect()
}

/// How far a simulation is from the host over a set of (real, simulated) headlines: the mean
/// of |ln(simulated / real)|, so that twice too slow and twice too fast weigh the same and a
/// large benchmark does not outweigh a small one. Pairs with a non-positive side are skipped.
pub fn distance(pairs: &[(f64, f64)]) -> f64 {
    let logs: Vec<f64> = pairs
        .iter()
        .filter(|(r, s)| *r > 0.0 && *s > 0.0)
        .map(|(r, s)| (s / r).ln().abs())
        .collect();
    if logs.is_empty() {
        f64::NAN
    } else {
        logs.iter().sum::<f64>() / logs.len() as f64
    }
}

/// The summary line, exactly as documented.
pub fn summary_line(rows: &[Row], effects: &[Effect]) -> String {
    let (k_h, n_h, k_e, n_e) = summary_counts(rows, effects);
    format!(
        "host fidelity: {k_h} of {n_h} headlines within {:.0} %, {k_e} of {n_e} effects within {:.0} %",
        HEADLINE_TOL * 100.0,
        EFFECT_TOL * 100.0
    )
}

/// The suite's tables (Markdown, readable in a terminal too) and its summary line.
pub fn render(rows: &[Row], effects: &[Effect], traced: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| benchmark | metric | real | ± | runs | simulated | runs | error |\n|---|---|---:|---:|---:|---:|---:|---:|"
    );
    for r in rows {
        let mark = |side: &Side| {
            format!(
                "{}{}",
                side.values.len(),
                if side.stable { "" } else { " unstable" }
            )
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.1} % | {} | {} | {} | {} |",
            r.bench.id,
            r.bench.metric,
            fmt_num(r.real.median()),
            spread(&r.real.values) * 100.0,
            mark(&r.real),
            fmt_num(r.sim.median()),
            mark(&r.sim),
            fmt_err(rel_err(r.real.median(), r.sim.median()))
        );
    }
    let _ = writeln!(
        s,
        "\n| effect | real | simulated | error |\n|---|---:|---:|---:|"
    );
    for (name, real, sim) in effect_ratios(rows, effects) {
        let _ = writeln!(
            s,
            "| {name} | {real:.3} | {sim:.3} | {} |",
            fmt_err(rel_err(real, sim))
        );
    }
    if traced {
        s.push_str(&super::dynamics::render(rows));
    } else {
        let _ = writeln!(
            s,
            "\nNo counters: the real runs were not captured (capturing needs root and tracefs, and is off with --no-capture); headlines and effects only."
        );
    }
    let pairs: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| (r.real.median(), r.sim.median()))
        .collect();
    let _ = writeln!(
        s,
        "\ndistance from the host: mean |ln(simulated / real)| = {:.3} over {} headlines",
        distance(&pairs),
        pairs.len()
    );
    let _ = writeln!(s, "{}", summary_line(rows, effects));
    s
}
