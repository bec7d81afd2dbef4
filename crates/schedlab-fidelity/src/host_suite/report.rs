//! The suite's text: the headline and effect tables, the dynamics table (`dynamics.rs`) (Markdown, readable in a
//! terminal too), the rows whose real runs spread wider than their tolerance, the distance line
//! and the summary line. Each table shows the real range next to the median and the
//! noise-aware verdict of [`super::noise`].

use super::dynamics;
use super::noise::{
    Counts, Summary, Tally, effect_real_values, matched, noisy_rows, range_text, yes_no,
};
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

/// The strict summary counts: (headlines within, headlines, effects within, effects).
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

/// The strict and noise-aware counts of a finished suite ([`super::noise`]).
pub fn summary(rows: &[Row], effects: &[Effect]) -> Summary {
    let (k_h, n_h, k_e, n_e) = summary_counts(rows, effects);
    let cells: Vec<dynamics::Cell> = rows.iter().flat_map(dynamics::cells).collect();
    let strict = Counts {
        headlines: Tally {
            within: k_h,
            of: n_h,
        },
        effects: Tally {
            within: k_e,
            of: n_e,
        },
        counters: Tally::of(cells.iter().map(|c| c.within)),
    };
    let headlines = rows
        .iter()
        .map(|r| matched(&r.real.values, r.sim.median(), HEADLINE_TOL).or(Some(false)));
    let effect_verdicts = effects.iter().filter_map(|e| {
        let real = effect_real_values(rows, e)?;
        let sim = effect_ratios(rows, std::slice::from_ref(e)).first()?.2;
        Some(matched(&real, sim, EFFECT_TOL).or(Some(false)))
    });
    let noise_aware = Counts {
        headlines: Tally::of(headlines),
        effects: Tally::of(effect_verdicts),
        counters: Tally::of(cells.iter().map(|c| c.matched)),
    };
    Summary {
        strict,
        noise_aware,
    }
}

/// The summary line, exactly as documented: the strict counts in their long-standing form,
/// then, in parentheses, the noise-aware ones (a reader of the old line still finds it as a
/// prefix).
pub fn summary_line(rows: &[Row], effects: &[Effect]) -> String {
    let (k_h, n_h, k_e, n_e) = summary_counts(rows, effects);
    let na = summary(rows, effects).noise_aware;
    format!(
        "host fidelity: {k_h} of {n_h} headlines within {:.0} %, {k_e} of {n_e} effects within {:.0} % \
         (noise-aware: {} of {} headlines, {} of {} effects)",
        HEADLINE_TOL * 100.0,
        EFFECT_TOL * 100.0,
        na.headlines.within,
        na.headlines.of,
        na.effects.within,
        na.effects.of
    )
}

/// The suite's tables (Markdown, readable in a terminal too) and its summary line.
pub fn render(rows: &[Row], effects: &[Effect], traced: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| benchmark | metric | real | real range | ± | runs | simulated | runs | error | noise-aware |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---|"
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
            "| {} | {} | {} | {} | {:.1} % | {} | {} | {} | {} | {} |",
            r.bench.id,
            r.bench.metric,
            fmt_num(r.real.median()),
            range_text(&r.real.values),
            spread(&r.real.values) * 100.0,
            mark(&r.real),
            fmt_num(r.sim.median()),
            mark(&r.sim),
            fmt_err(rel_err(r.real.median(), r.sim.median())),
            yes_no(matched(&r.real.values, r.sim.median(), HEADLINE_TOL))
        );
    }
    let _ = writeln!(
        s,
        "\n| effect | real | real range | simulated | error | noise-aware |\n|---|---:|---:|---:|---:|---|"
    );
    for e in effects {
        let (Some(values), Some(&(name, real, sim))) = (
            effect_real_values(rows, e),
            effect_ratios(rows, std::slice::from_ref(e)).first(),
        ) else {
            continue;
        };
        let _ = writeln!(
            s,
            "| {name} | {real:.3} | {} | {sim:.3} | {} | {} |",
            range_text(&values),
            fmt_err(rel_err(real, sim)),
            yes_no(matched(&values, sim, EFFECT_TOL))
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
    let _ = write!(s, "\n{}", noisy_rows(rows, effects));
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
            "host fidelity: 1 of 2 headlines within 15 %, 0 of 1 effects within 10 % \
             (noise-aware: 1 of 2 headlines, 0 of 1 effects)"
        );
    }

    #[test]
    fn the_summary_line_gives_the_noise_aware_counts_after_the_strict_ones() {
        // a: real 0.95..1.05, sim 1.1: both. b: real 0.084..0.158 (median 0.12), sim 0.17:
        // +41.7 %, a strict miss, inside 0.0714..0.1817. b / a: medians 0.12, sim 0.1545
        // (+28.8 %), inside the run-by-run ratios 0.0884..0.158 widened to 0.0796..0.1738.
        let rows = vec![
            row("a", side(&[0.95, 1.0, 1.05], true), side(&[1.1], true)),
            row("b", side(&[0.084, 0.158, 0.12], true), side(&[0.17], true)),
        ];
        let eff = vec![effect("b / a", "b", "a")];
        assert_eq!(
            summary_line(&rows, &eff),
            "host fidelity: 1 of 2 headlines within 15 %, 0 of 1 effects within 10 % \
             (noise-aware: 2 of 2 headlines, 1 of 1 effects)"
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
            "| benchmark | metric | real | real range | ± | runs | simulated | runs | error | noise-aware |\n\
             |---|---|---:|---:|---:|---:|---:|---:|---:|---|\n\
             | a | time_s | 1.00 | 1.00..1.00 | 0.0 % | 1 | 1.10 | 1 | +10.0 % | yes |\n\
             | b | time_s | 2.00 | 1.80..2.20 | 20.0 % | 3 | 2.60 | 1 unstable | +30.0 % | no |\n\
             \n\
             | effect | real | real range | simulated | error | noise-aware |\n\
             |---|---:|---:|---:|---:|---|\n\
             | b / a | 2.000 | 2.00..2.00 | 2.364 | +18.2 % | no |\n\
             \n\
             No counters: the real runs were not captured (capturing needs root and tracefs, \
             and is off with --no-capture); headlines and effects only.\n\
             \n\
             real range wider than the tolerance on 1 (their strict verdict says nothing; \
             the noise-aware one is the range widened by the tolerance):\n\
             - headline b: real 1.80..2.20 (20.0 % > 15 %)\n\
             \n\
             distance from the host: mean |ln(simulated / real)| = 0.179 over 2 headlines\n\
             host fidelity: 1 of 2 headlines within 15 %, 0 of 1 effects within 10 % \
             (noise-aware: 1 of 2 headlines, 0 of 1 effects)\n"
        );
    }

    #[test]
    fn the_summary_counts_both_verdicts() {
        let (rows, effects) = crate::host_suite::noise::tests::example();
        let s = summary(&rows, &effects);
        let t = |within, of| Tally { within, of };
        assert_eq!(
            s,
            Summary {
                strict: Counts {
                    headlines: t(1, 2),
                    effects: t(0, 1),
                    counters: t(0, 0),
                },
                noise_aware: Counts {
                    headlines: t(2, 2),
                    effects: t(1, 1),
                    counters: t(0, 0),
                },
            }
        );
        // A simulated value far outside: neither.
        let row = crate::host_suite::noise::tests::row;
        let far = vec![
            row("a", &[0.95, 1.0, 1.05], 1.1),
            row("b", &[0.084, 0.158, 0.12], 0.5),
        ];
        let s = summary(&far, &effects);
        assert_eq!(
            (s.strict.headlines, s.noise_aware.headlines),
            (t(1, 2), t(1, 2))
        );
        assert_eq!(
            (s.strict.effects, s.noise_aware.effects),
            (t(0, 1), t(0, 1))
        );
    }
}
