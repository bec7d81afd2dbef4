//! The suite's text: the headline and effect tables, the dynamics table (`dynamics.rs`) (Markdown, readable in a
//! terminal too), the distance line and the summary line.

use super::rows::{EFFECT_TOL, Effect, HEADLINE_TOL, Row, Side};
use crate::stats::{distance, rel_err, spread};
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host_suite::rows::Bench;

    fn side(values: &[f64], stable: bool) -> Side {
        Side {
            values: values.to_vec(),
            stable,
            dynamics: Vec::new(),
        }
    }

    fn row(id: &str, real: Side, sim: Side) -> Row {
        Row {
            bench: Bench {
                id: id.into(),
                spec: String::new(),
                metric: "time_s",
            },
            real,
            sim,
        }
    }

    fn effect(name: &str, num: &str, den: &str) -> Effect {
        Effect {
            name: name.into(),
            num: num.into(),
            den: den.into(),
        }
    }

    #[test]
    fn summary_counts_headlines_and_effects_against_their_tolerances() {
        // a: +10 % (within), b: +30 % (not); ratio b/a real 2.0, sim 2.36 (+18 %, not).
        let rows = vec![
            row("a", side(&[1.0], true), side(&[1.1], true)),
            row("b", side(&[2.0], true), side(&[2.6], true)),
        ];
        let eff = vec![effect("b / a", "b", "a")];
        assert_eq!(summary_counts(&rows, &eff), (1, 2, 0, 1));
        assert_eq!(
            summary_line(&rows, &eff),
            "host fidelity: 1 of 2 headlines within 15 %, 0 of 1 effects within 10 %"
        );
    }

    #[test]
    fn an_effect_whose_benchmark_did_not_run_is_left_out() {
        let rows = vec![
            row("a", side(&[1.0], true), side(&[2.0], true)),
            row("b", side(&[3.0], true), side(&[8.0], true)),
        ];
        let eff = vec![effect("b / a", "b", "a"), effect("c / a", "c", "a")];
        assert_eq!(effect_ratios(&rows, &eff), vec![("b / a", 3.0, 4.0)]);
        // b / a: real 3, simulated 4: +33 %, outside; a and b themselves +100 %, +167 %.
        assert_eq!(summary_counts(&rows, &eff), (0, 2, 0, 1));
    }

    #[test]
    fn numbers_keep_their_significant_digits() {
        assert_eq!(fmt_num(f64::NAN), "-");
        assert_eq!(fmt_num(150.4), "150");
        assert_eq!(fmt_num(-2.345), "-2.35");
        assert_eq!(fmt_num(0.5), "0.5000");
        assert_eq!(fmt_err(0.123), "+12.3 %");
        assert_eq!(fmt_err(-0.05), "-5.0 %");
        assert_eq!(fmt_err(f64::INFINITY), "-");
    }

    #[test]
    fn the_untraced_report_is_the_two_tables_and_the_summary() {
        let rows = vec![
            row("a", side(&[1.0], true), side(&[1.1], true)),
            // Median 2.0, spread (2.2 - 1.8) / 2.0 = 20 %; the simulated side never settled.
            row("b", side(&[2.0, 2.2, 1.8], true), side(&[2.6], false)),
        ];
        let eff = vec![effect("b / a", "b", "a")];
        assert_eq!(
            render(&rows, &eff, false),
            "| benchmark | metric | real | ± | runs | simulated | runs | error |\n\
             |---|---|---:|---:|---:|---:|---:|---:|\n\
             | a | time_s | 1.00 | 0.0 % | 1 | 1.10 | 1 | +10.0 % |\n\
             | b | time_s | 2.00 | 20.0 % | 3 | 2.60 | 1 unstable | +30.0 % |\n\
             \n\
             | effect | real | simulated | error |\n\
             |---|---:|---:|---:|\n\
             | b / a | 2.000 | 2.364 | +18.2 % |\n\
             \n\
             No counters: the real runs were not captured (capturing needs root and tracefs, \
             and is off with --no-capture); headlines and effects only.\n\
             \n\
             distance from the host: mean |ln(simulated / real)| = 0.179 over 2 headlines\n\
             host fidelity: 1 of 2 headlines within 15 %, 0 of 1 effects within 10 %\n"
        );
    }
}
