//! The comparison table, JSON verdicts and CSV on hand-made reports whose numbers can be
//! checked by eye: a time metric (lower is better) where one variant is 10 % faster and one
//! is twice as slow, and a one-repetition report.

use schedlab_experiment::report::{
    CompareReport, Direction, MetricInfo, PointStats, VariantStats, verdict_for,
};
use schedlab_metrics::Better;
use schedlab_metrics::stats::{compare_samples, summarize};
use std::collections::BTreeMap;

fn variant(name: &str, samples: &[f64], base: &[f64], better: Better, first: bool) -> VariantStats {
    let s = summarize(samples);
    let est = compare_samples(base, samples, true, 0.95);
    let (ratio, lo, hi, p, sig) = if first {
        (1.0, 1.0, 1.0, 1.0, false)
    } else {
        (
            est.ratio,
            est.ci_low,
            est.ci_high,
            est.p_value,
            est.significant,
        )
    };
    VariantStats {
        variant: name.into(),
        samples: samples.to_vec(),
        mean: s.mean,
        stderr: if s.stderr.is_finite() { s.stderr } else { 0.0 },
        ratio,
        ci_low: lo,
        ci_high: hi,
        p_value: p,
        significant: sig,
        counters: BTreeMap::new(),
        verdict: (!first).then(|| verdict_for(ratio, lo, hi, sig, better, samples.len())),
    }
}

fn report(points: &[(&str, [&[f64]; 3])], better: Better) -> CompareReport {
    let names = ["linux-6.6", "linux-6.6,NO_WAKE_AFFINE", "linux-4.9"];
    CompareReport {
        schema: "schedlab.compare/1".into(),
        topology: "desktop-4c8t".into(),
        workload: "hackbench:groups=4,loops=100".into(),
        metric: MetricInfo {
            name: "time_s".into(),
            unit: "s".into(),
            better,
        },
        seed: Some(1),
        profile: None,
        points: points
            .iter()
            .map(|(g, s)| PointStats {
                params: [("groups".to_string(), g.to_string())]
                    .into_iter()
                    .collect(),
                variants: (0..3)
                    .map(|i| variant(names[i], s[i], s[0], better, i == 0))
                    .collect(),
            })
            .collect(),
        min_effect: None,
    }
}

fn three_variants() -> CompareReport {
    report(
        &[
            (
                "1",
                [
                    &[1.00, 1.02, 0.98],
                    &[0.90, 0.92, 0.88],
                    &[2.00, 2.05, 1.95],
                ],
            ),
            (
                "2",
                [
                    &[2.00, 2.10, 1.90],
                    &[2.01, 2.08, 1.92],
                    &[4.10, 4.00, 4.20],
                ],
            ),
        ],
        Better::Lower,
    )
}

#[test]
fn a_faster_time_is_a_positive_gain_and_a_doubling_reads_as_a_factor() {
    let r = three_variants();
    let p = &r.points[0];
    let v = p.variants[1].verdict.as_ref().unwrap();
    assert_eq!(v.direction, Direction::Better);
    assert!((v.gain_pct - 10.0).abs() < 1e-9, "{}", v.gain_pct);
    assert_eq!(v.text, "better 10.0 %");
    let w = p.variants[2].verdict.as_ref().unwrap();
    assert_eq!(w.direction, Direction::Worse);
    assert_eq!(w.text, "worse 2.00x");
    let same = r.points[1].variants[1].verdict.as_ref().unwrap();
    assert_eq!(same.direction, Direction::Same);
    let t = r.to_table();
    // The baseline is 1.00 s, the faster variant 0.90 s: +10 %, significant.
    assert!(t.contains("1.0000 (   0.00%)"), "{t}");
    assert!(t.contains("0.9000 *  10.00%*"), "{t}");
    assert!(t.contains("2.0000 *-100.00%*"), "{t}");
    assert!(t.lines().all(|l| l.chars().count() <= 100), "{t}");
    insta::assert_snapshot!("three_variants", t);
}

#[test]
fn one_repetition_says_there_is_no_interval() {
    let r = report(&[("1", [&[1.0], &[0.9], &[2.0]])], Better::Lower);
    let t = r.to_table();
    assert!(!t.contains("NaN"), "{t}");
    assert!(t.contains("n=1: no interval"), "{t}");
    assert!(!t.contains("no significant difference"), "{t}");
    assert!(!t.contains("Stddev  "), "{t}");
    assert_eq!(
        r.points[0].variants[1].verdict.as_ref().unwrap().direction,
        Direction::NoInterval
    );
    insta::assert_snapshot!("one_repetition", t);
}

#[test]
fn json_and_csv_carry_the_verdict_and_old_json_still_reads() {
    let r = three_variants();
    let j: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(j["schema"], "schedlab.compare/1");
    assert_eq!(
        j["points"][0]["variants"][1]["verdict"]["direction"],
        "better"
    );
    assert_eq!(
        j["points"][0]["variants"][2]["verdict"]["text"],
        "worse 2.00x"
    );
    let csv = r.to_csv();
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with("direction,gain_pct,verdict")
    );
    assert!(csv.contains("better 10.0 %"), "{csv}");
    // A report written before verdicts, seed and profile existed still parses, and its
    // verdicts are derived from its numbers.
    let mut old = j.clone();
    for p in old["points"].as_array_mut().unwrap() {
        for v in p["variants"].as_array_mut().unwrap() {
            v.as_object_mut().unwrap().remove("verdict");
        }
    }
    old.as_object_mut().unwrap().remove("seed");
    let back: CompareReport = serde_json::from_value(old).unwrap();
    assert_eq!(
        back.to_table().replace(", seed 1", ""),
        r.to_table().replace(", seed 1", "")
    );
}

/// A baseline whose samples are all equal has no spread: a gain over it is n/a, not a
/// 15-digit percentage from the rounding in its sum (issue 49); a value of 1e308 prints in
/// scientific form, not as 309 digits.
#[test]
fn zero_spread_gains_are_na_and_huge_values_are_short() {
    let base = [0.1 + 0.2, 0.3, 0.1 + 0.2];
    let r = report(
        &[("1", [&base, &[0.31, 0.33, 0.29], &[1e308, 1e308, 1e308]])],
        Better::Lower,
    );
    let t = r.to_table();
    let stddev = t.lines().find(|l| l.starts_with("Stddev")).unwrap();
    assert!(stddev.contains("n/a"), "{t}");
    assert!(
        !t.contains("e13%") && !t.lines().any(|l| l.len() > 200),
        "{t}"
    );
    assert!(t.contains("1.0000e308"), "{t}");
}
