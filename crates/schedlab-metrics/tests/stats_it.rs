//! Integration tests of `stats` and `hist`: published/scipy reference values, the paired-vs-
//! unpaired sensitivity that common random numbers buy, bootstrap determinism, exact histogram
//! merging and serialization, and edge cases that must never panic.
//!
//! Reference numbers marked "scipy 1.17.1" were computed once with `scipy.stats` (ttest_ind with
//! `equal_var=False`, ttest_rel, t.ppf, t.interval, numpy.percentile, hmean, gmean) and pasted
//! here. Fieller bounds were checked independently by root-finding (scipy.optimize.brentq) on the
//! p-value of the t-test of `other − ρ·base`, not by re-implementing the closed form.

use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer, V2Serializer};
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::{Rng, SeedableRng};
use schedlab_metrics::hist::{HIGHEST_NS, HistError, LatencyHistogram};
use schedlab_metrics::stats::{
    RatioEstimate, bootstrap_ci, compare_samples, gmean, hmean, mean, mean_ci, paired_t_test,
    percentile, percentile_of, summarize, verdict, welch_t_test,
};

/// Relative closeness, for comparisons with reference values printed to 17 digits.
fn close(actual: f64, expected: f64, rel: f64) -> bool {
    (actual - expected).abs() <= rel * expected.abs().max(1e-300)
}

macro_rules! assert_close {
    ($a:expr, $e:expr, $rel:expr) => {{
        let (a, e): (f64, f64) = ($a, $e);
        assert!(
            close(a, e, $rel),
            "{} = {a:e}, expected {e:e} (rel {})",
            stringify!($a),
            $rel
        );
    }};
}

// Wikipedia "Welch's t-test", example 1 (published there as t = −2.46, df = 25.0, p = 0.021).
const A1: [f64; 15] = [
    27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4,
];
const A2: [f64; 15] = [
    27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4,
];

// Ten seeds of a benchmark: the seed moves the result by ±25 %, the variant by about +2 %.
const BASE: [f64; 10] = [
    101.3, 87.2, 120.4, 95.8, 110.1, 78.9, 130.5, 99.0, 105.6, 92.3,
];
const OTHER: [f64; 10] = [
    103.9, 88.5, 122.8, 98.1, 111.9, 80.7, 133.6, 100.2, 108.3, 94.0,
];

#[test]
fn welch_matches_published_example() {
    let r = welch_t_test(&A1, &A2).unwrap();
    // scipy 1.17.1: t = -2.455356398286006, p = 0.021378001462866992, df = 24.988529290231416.
    assert_close!(r.t, -2.455356398286006, 1e-12);
    assert_close!(r.df, 24.988529290231416, 1e-12);
    assert_close!(r.p_value, 0.021378001462866992, 1e-8);
    // Swapping the samples flips t only.
    let s = welch_t_test(&A2, &A1).unwrap();
    assert_close!(s.t, 2.455356398286006, 1e-12);
    assert_eq!(s.p_value, r.p_value);
}

#[test]
fn paired_is_more_sensitive_than_welch_on_correlated_data() {
    // scipy 1.17.1 ttest_rel(OTHER, BASE): t = 10.554598363451454, p = 2.2792217418191144e-06.
    let p = paired_t_test(&OTHER, &BASE).unwrap();
    assert_close!(p.t, 10.554598363451454, 1e-10);
    assert_eq!(p.df, 9.0);
    assert_close!(p.p_value, 2.2792217418191144e-06, 1e-6);
    // scipy 1.17.1 ttest_ind(OTHER, BASE, equal_var=False): t = 0.30005739839674833,
    // p = 0.7675735595625216, df = 17.98673654911938.
    let w = welch_t_test(&OTHER, &BASE).unwrap();
    assert_close!(w.t, 0.30005739839674833, 1e-10);
    assert_close!(w.df, 17.98673654911938, 1e-10);
    assert_close!(w.p_value, 0.7675735595625216, 1e-9);

    let paired = compare_samples(&BASE, &OTHER, true, 0.95);
    let unpaired = compare_samples(&BASE, &OTHER, false, 0.95);
    assert!(paired.significant && !unpaired.significant);
    assert_eq!(paired.p_value, p.p_value);
    assert_eq!(unpaired.p_value, w.p_value);
    assert!(paired.ci_high - paired.ci_low < 0.1 * (unpaired.ci_high - unpaired.ci_low));
}

#[test]
fn compare_samples_ratio_and_fieller_intervals() {
    // numpy: mean(OTHER) / mean(BASE) = 1.0204681226128685.
    let paired = compare_samples(&BASE, &OTHER, true, 0.95);
    assert_close!(paired.ratio, 1.0204681226128685, 1e-14);
    // brentq on ttest_1samp(OTHER − ρ·BASE).pvalue = 0.05 (scipy 1.17.1).
    assert_close!(paired.ci_low, 1.0170150661141302, 1e-9);
    assert_close!(paired.ci_high, 1.0237661634511896, 1e-9);
    assert_eq!(verdict(&paired, true), "better");
    assert_eq!(verdict(&paired, false), "worse");
    // ±0.34 % of the ratio.
    let hw = paired.ci_half_width_pct();
    assert!(hw > 0.3 && hw < 0.35, "{hw}");

    // brentq on |ȳ − ρx̄| / sqrt(vy + ρ²vx) = t_{0.975, Welch df} (scipy 1.17.1).
    let unpaired = compare_samples(&BASE, &OTHER, false, 0.95);
    assert_eq!(unpaired.ratio, paired.ratio);
    assert_close!(unpaired.ci_low, 0.8849199854005317, 1e-9);
    assert_close!(unpaired.ci_high, 1.1766138870469791, 1e-9);
    assert_eq!(verdict(&unpaired, true), "no significant difference");
    assert_eq!(verdict(&unpaired, false), "no significant difference");

    // Reversing the roles inverts the ratio; Fieller intervals invert exactly too.
    let rev = compare_samples(&OTHER, &BASE, true, 0.95);
    assert_close!(rev.ratio, 1.0 / paired.ratio, 1e-14);
    assert_close!(rev.ci_low, 1.0 / paired.ci_high, 1e-9);
    assert_close!(rev.ci_high, 1.0 / paired.ci_low, 1e-9);
    assert_eq!(verdict(&rev, true), "worse");
}

#[test]
fn ratio_ci_excludes_one_exactly_when_significant() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let mut unif = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let mut checked = [0usize; 2];
    for case in 0..400 {
        let n = 3 + case % 8;
        let effect = 1.0 + 0.05 * (unif() - 0.5);
        let base: Vec<f64> = (0..n).map(|_| 100.0 + 40.0 * unif()).collect();
        let other: Vec<f64> = base
            .iter()
            .map(|b| b * effect + 3.0 * (unif() - 0.5))
            .collect();
        for paired in [true, false] {
            let e = compare_samples(&base, &other, paired, 0.9);
            assert!(e.ci_low <= e.ratio && e.ratio <= e.ci_high, "{e:?}");
            let excludes_one = e.ci_low > 1.0 || e.ci_high < 1.0;
            // Away from the boundary (rounding) the two must agree exactly.
            if (e.p_value - 0.1).abs() > 1e-9 {
                assert_eq!(
                    excludes_one, e.significant,
                    "case {case} paired {paired}: {e:?}"
                );
            }
            checked[usize::from(e.significant)] += 1;
        }
    }
    // Both outcomes were exercised.
    assert!(checked[0] > 50 && checked[1] > 50, "{checked:?}");
}

#[test]
fn mean_ci_and_summary_match_scipy() {
    // scipy 1.17.1: mean 102.11, std(ddof=1) 15.362034732128132, sem 4.8579019248139526,
    // t.interval(0.95, 9, loc, sem) = (91.12066236461092, 113.09933763538908).
    let s = summarize(&BASE);
    assert_eq!(s.n, 10);
    assert_close!(s.mean, 102.11, 1e-14);
    assert_close!(s.stddev, 15.362034732128132, 1e-13);
    assert_close!(s.stderr, 4.8579019248139526, 1e-13);
    assert_eq!((s.min, s.max), (78.9, 130.5));
    let (lo, hi) = mean_ci(&BASE, 0.95);
    assert_close!(lo, 91.12066236461092, 1e-10);
    assert_close!(hi, 113.09933763538908, 1e-10);
    // scipy: t.ppf(0.975, 10) = 2.228138851986274; check through an 11-point sample with
    // stderr = 1 (values −k..k scaled so that sd/sqrt(11) = 1).
    let raw: Vec<f64> = (-5..=5).map(f64::from).collect();
    let sd = summarize(&raw).stddev;
    let xs: Vec<f64> = raw.iter().map(|x| x * 11f64.sqrt() / sd).collect();
    let (lo, hi) = mean_ci(&xs, 0.95);
    assert_close!(hi, 2.228138851986274, 1e-9);
    assert_close!(lo, -2.228138851986274, 1e-9);
}

#[test]
fn summaries_of_tiny_samples_never_panic() {
    let e = summarize(&[]);
    assert_eq!(e.n, 0);
    assert!(e.mean.is_nan() && e.stddev.is_nan() && e.stderr.is_nan());
    assert!(e.min.is_nan() && e.max.is_nan());
    let one = summarize(&[4.5]);
    assert_eq!((one.n, one.mean, one.min, one.max), (1, 4.5, 4.5, 4.5));
    assert!(one.stddev.is_nan() && one.stderr.is_nan());
    let flat = summarize(&[2.0; 5]);
    assert_eq!((flat.mean, flat.stddev, flat.stderr), (2.0, 0.0, 0.0));
    let with_nan = summarize(&[1.0, f64::NAN, 3.0]);
    assert!(with_nan.mean.is_nan() && with_nan.min.is_nan() && with_nan.max.is_nan());
    assert!(mean(&[]).is_nan());
    assert_eq!(mean(&[1.0, 2.0]), 1.5);

    assert!(mean_ci(&[], 0.95).0.is_nan());
    assert!(mean_ci(&[1.0], 0.95).1.is_nan());
    assert_eq!(mean_ci(&[3.0, 3.0, 3.0], 0.95), (3.0, 3.0));
    for bad in [0.0, 1.0, -0.5, 1.5, f64::NAN] {
        let (lo, hi) = mean_ci(&BASE, bad);
        assert!(lo.is_nan() && hi.is_nan(), "confidence {bad}");
    }
    assert!(mean_ci(&[1.0, f64::INFINITY], 0.95).0.is_nan());
}

#[test]
fn t_tests_undefined_and_degenerate_cases() {
    assert!(welch_t_test(&[], &[]).is_none());
    assert!(welch_t_test(&[1.0], &[1.0, 2.0]).is_none());
    assert!(welch_t_test(&[1.0, 2.0], &[1.0, f64::NAN]).is_none());
    assert!(welch_t_test(&[5.0, 5.0], &[5.0, 5.0, 5.0]).is_none());
    let d = welch_t_test(&[5.0, 5.0], &[7.0, 7.0, 7.0]).unwrap();
    assert_eq!((d.t, d.p_value, d.df), (f64::NEG_INFINITY, 0.0, 3.0));
    // One sample constant: Welch df is n − 1 of the other.
    let one_flat = welch_t_test(&[5.0, 5.0, 5.0], &[1.0, 2.0, 3.0, 4.0]).unwrap();
    assert_close!(one_flat.df, 3.0, 1e-12);

    assert!(paired_t_test(&[], &[]).is_none());
    assert!(paired_t_test(&[1.0], &[2.0]).is_none());
    assert!(paired_t_test(&[1.0, 2.0], &[1.0, 2.0, 3.0]).is_none());
    assert!(paired_t_test(&[1.0, 2.0], &[1.0, 2.0]).is_none());
    assert!(paired_t_test(&[f64::MAX, 1.0], &[-f64::MAX, 1.0]).is_none());
    let c = paired_t_test(&[6.0, 7.0, 8.0], &[1.0, 2.0, 3.0]).unwrap();
    assert_eq!((c.t, c.p_value, c.df), (f64::INFINITY, 0.0, 2.0));
}

#[test]
fn compare_samples_edge_cases_never_panic() {
    let undefined = |e: &RatioEstimate| {
        e.ratio.is_nan() && e.ci_low.is_nan() && e.p_value.is_nan() && !e.significant
    };
    for paired in [true, false] {
        assert!(undefined(&compare_samples(&[], &[1.0], paired, 0.95)));
        assert!(undefined(&compare_samples(
            &[0.0, 0.0],
            &[1.0, 2.0],
            paired,
            0.95
        )));
        assert!(undefined(&compare_samples(
            &[-1.0, -2.0],
            &[1.0, 2.0],
            paired,
            0.95
        )));
        assert!(undefined(&compare_samples(
            &[1.0, 2.0],
            &[-1.0, -2.0],
            paired,
            0.95
        )));
        assert!(undefined(&compare_samples(
            &[1.0, f64::NAN],
            &[1.0, 2.0],
            paired,
            0.95
        )));
        let e = compare_samples(&[-1.0, -2.0], &[1.0, 2.0], paired, 0.95);
        assert_eq!(verdict(&e, true), "no significant difference");
        assert!(e.ci_half_width_pct().is_nan());

        // One repetition: a ratio, but nothing to say about noise.
        let one = compare_samples(&[2.0], &[3.0], paired, 0.95);
        assert_eq!(one.ratio, 1.5);
        assert!(one.ci_low.is_nan() && one.p_value.is_nan() && !one.significant);

        // Identical constant samples: no difference, a zero-width interval at 1.
        let same = compare_samples(&[4.0, 4.0, 4.0], &[4.0, 4.0, 4.0], paired, 0.95);
        assert_eq!((same.ratio, same.ci_low, same.ci_high), (1.0, 1.0, 1.0));
        assert_eq!(same.p_value, 1.0);
        assert!(!same.significant);
        assert_eq!(same.ci_half_width_pct(), 0.0);

        // Different constant samples: certainly different.
        let diff = compare_samples(&[4.0, 4.0, 4.0], &[5.0, 5.0, 5.0], paired, 0.95);
        assert_eq!((diff.ratio, diff.ci_low, diff.ci_high), (1.25, 1.25, 1.25));
        assert_eq!(diff.p_value, 0.0);
        assert!(diff.significant);
        assert_eq!(verdict(&diff, false), "worse");

        // Invalid confidence: the test still runs, but no interval and no verdict.
        for bad in [0.0, 1.0, 2.0, f64::NAN] {
            let e = compare_samples(&BASE, &OTHER, paired, bad);
            assert!(e.ci_low.is_nan() && e.ci_high.is_nan() && !e.significant);
            assert!(e.p_value > 0.0 && e.p_value < 1.0);
        }

        // A base mean indistinguishable from zero makes the interval unbounded.
        let wide = compare_samples(&[0.1, 20.0, 0.1], &[5.0, 6.0, 7.0], paired, 0.95);
        assert_eq!(
            (wide.ci_low, wide.ci_high),
            (f64::NEG_INFINITY, f64::INFINITY)
        );
        assert_eq!(wide.ci_half_width_pct(), f64::INFINITY);
    }
    // Paired samples must pair up.
    assert!(undefined(&compare_samples(
        &[1.0, 2.0],
        &[1.0, 2.0, 3.0],
        true,
        0.95
    )));
    assert!(
        !compare_samples(&[1.0, 2.0], &[1.0, 2.0, 3.0], false, 0.95)
            .ratio
            .is_nan()
    );
}

#[test]
fn verdict_words() {
    let est = |ratio, significant| RatioEstimate {
        ratio,
        ci_low: ratio,
        ci_high: ratio,
        p_value: if significant { 0.001 } else { 0.5 },
        significant,
    };
    assert_eq!(verdict(&est(1.2, true), true), "better");
    assert_eq!(verdict(&est(1.2, true), false), "worse");
    assert_eq!(verdict(&est(0.8, true), true), "worse");
    assert_eq!(verdict(&est(0.8, true), false), "better");
    assert_eq!(verdict(&est(1.2, false), true), "no significant difference");
    assert_eq!(
        verdict(&RatioEstimate::UNDEFINED, true),
        "no significant difference"
    );
}

fn sample_mean(s: &[f64]) -> f64 {
    s.iter().sum::<f64>() / s.len() as f64
}

#[test]
fn bootstrap_is_bit_identical_to_an_independent_implementation() {
    // An independent Python implementation (SplitMix64 seeding of Xoshiro256++, Lemire's
    // bounded integers, linear-interpolation percentiles; reproduced in `BOOTSTRAP_REFERENCE_PY`
    // below) gives these bounds for 1000 resamples of the mean at 90 %, seed 42:
    // 94.54899999999998 (0x1.7a322d0e56040p+6) and 110.625 (0x1.ba80000000000p+6).
    let (lo, hi) = bootstrap_ci(&BASE, sample_mean, 1000, 0.9, 42);
    assert_eq!(lo.to_bits(), 0x4057_a322_d0e5_6040);
    assert_eq!(hi.to_bits(), 0x405b_a800_0000_0000);
    assert_eq!(lo, 94.54899999999998);
    // The same first output of the generator as the Python reference (0xd0764d4f4476689f).
    assert_eq!(
        Xoshiro256PlusPlus::seed_from_u64(42).next_u64(),
        0xd076_4d4f_4476_689f
    );
}

#[test]
fn bootstrap_is_deterministic_and_sane() {
    let xs: Vec<f64> = (1..=200).map(|i| f64::from(i * i % 97)).collect();
    let p90 = |s: &[f64]| percentile_of(s, 90.0);
    let a = bootstrap_ci(&xs, p90, 500, 0.95, 1);
    let b = bootstrap_ci(&xs, p90, 500, 0.95, 1);
    assert_eq!(a.0.to_bits(), b.0.to_bits());
    assert_eq!(a.1.to_bits(), b.1.to_bits());
    let c = bootstrap_ci(&xs, sample_mean, 500, 0.95, 1);
    let d = bootstrap_ci(&xs, sample_mean, 500, 0.95, 2);
    assert_ne!(c, d, "different seeds must draw different resamples");
    // The point estimate lies inside, and the interval inside the data range.
    let point = percentile_of(&xs, 90.0);
    assert!(a.0 <= point && point <= a.1, "{a:?} vs {point}");
    assert!(a.0 >= 0.0 && a.1 <= 96.0);
    // For the mean it roughly agrees with the t-interval (within 30 % of its width).
    let (tl, th) = mean_ci(&xs, 0.95);
    let w = th - tl;
    assert!(
        (c.0 - tl).abs() < 0.3 * w && (c.1 - th).abs() < 0.3 * w,
        "{c:?} vs {tl} {th}"
    );
}

#[test]
fn bootstrap_edge_cases() {
    let nan = |(a, b): (f64, f64)| a.is_nan() && b.is_nan();
    assert!(nan(bootstrap_ci(&[], sample_mean, 100, 0.95, 0)));
    assert!(nan(bootstrap_ci(&BASE, sample_mean, 0, 0.95, 0)));
    assert!(nan(bootstrap_ci(&BASE, sample_mean, 100, 1.0, 0)));
    assert!(nan(bootstrap_ci(&BASE, sample_mean, 100, f64::NAN, 0)));
    assert!(nan(bootstrap_ci(&BASE, |_| f64::NAN, 100, 0.95, 0)));
    assert_eq!(bootstrap_ci(&[3.0], sample_mean, 50, 0.95, 9), (3.0, 3.0));
    assert_eq!(
        bootstrap_ci(&[2.0; 7], sample_mean, 50, 0.95, 9),
        (2.0, 2.0)
    );
}

#[test]
fn percentiles_and_means_match_numpy_and_scipy() {
    let d = [15.0, 20.0, 35.0, 40.0, 50.0];
    // numpy.percentile (linear): 0→15, 5→16, 30→23, 40→29, 50→35, 99→49.6, 100→50.
    for (q, want) in [
        (0.0, 15.0),
        (5.0, 16.0),
        (30.0, 23.0),
        (40.0, 29.0),
        (50.0, 35.0),
        (99.0, 49.6),
        (100.0, 50.0),
    ] {
        assert_close!(percentile(&d, q), want, 1e-14);
    }
    assert_eq!(percentile(&d, -5.0), 15.0);
    assert_eq!(percentile(&d, 250.0), 50.0);
    assert!(percentile(&d, f64::NAN).is_nan());
    assert!(percentile(&[], 50.0).is_nan());
    assert_eq!(percentile(&[7.0], 99.0), 7.0);
    assert_eq!(percentile_of(&[50.0, 15.0, 40.0, 20.0, 35.0], 30.0), 23.0);
    // Unsorted input to `percentile` is meaningless but must not panic.
    let _ = percentile(&[3.0, 1.0, 2.0], 50.0);

    // scipy 1.17.1: hmean = 26.2828535669587, gmean = 29.13693458576192.
    assert_close!(hmean(&d), 26.2828535669587, 1e-13);
    assert_close!(gmean(&d), 29.13693458576192, 1e-13);
    assert_eq!(hmean(&[1.0, 0.0]), 0.0);
    assert_eq!(gmean(&[1.0, 0.0]), 0.0);
    for bad in [&[][..], &[1.0, -1.0][..], &[1.0, f64::NAN][..]] {
        assert!(hmean(bad).is_nan() && gmean(bad).is_nan(), "{bad:?}");
    }
}

// ----- histograms -----------------------------------------------------------------------------

#[test]
fn empty_histogram() {
    let h = LatencyHistogram::new();
    assert_eq!(h, LatencyHistogram::default());
    assert!(h.is_empty());
    assert_eq!(
        (h.count(), h.min(), h.max(), h.percentile(99.0)),
        (0, 0, 0, 0)
    );
    assert_eq!(h.mean(), 0.0);
    let back = LatencyHistogram::from_base64(&h.to_base64()).unwrap();
    assert_eq!(back, h);
}

#[test]
fn histogram_percentiles_on_known_data() {
    // Below 2048 ns every value has its own bucket (3 significant digits), so 1..=1000 is exact.
    let mut h = LatencyHistogram::new();
    for v in 1..=1000 {
        h.record(v);
    }
    assert_eq!(h.count(), 1000);
    assert_eq!((h.min(), h.max()), (1, 1000));
    assert_eq!(h.percentile(0.0), 1);
    assert_eq!(h.percentile(50.0), 500);
    assert_eq!(h.percentile(99.0), 990);
    assert_eq!(h.percentile(99.9), 999);
    assert_eq!(h.percentile(100.0), 1000);
    assert_eq!(h.percentile(250.0), 1000);
    assert_eq!(h.percentile(f64::NAN), 1);
    assert_close!(h.mean(), 500.5, 1e-12);

    // Larger values keep three significant digits: within 0.1 %, never below the true value.
    let mut big = LatencyHistogram::new();
    big.record_n(1_234_567, 3);
    big.record(40_000_000_000);
    assert_eq!(big.count(), 4);
    let p50 = big.percentile(50.0);
    assert!((1_234_567..=1_235_802).contains(&p50), "{p50}");
    let max = big.max();
    assert!((40_000_000_000..=40_040_000_000).contains(&max), "{max}");
}

#[test]
fn histogram_clamps_instead_of_failing() {
    let mut h = LatencyHistogram::new();
    h.record(0);
    h.record(u64::MAX);
    h.record(HIGHEST_NS + 1);
    h.record_n(5, 0);
    assert_eq!(h.count(), 3);
    assert_eq!(h.min(), 0);
    let max = h.max();
    assert!(
        (HIGHEST_NS..=HIGHEST_NS + HIGHEST_NS / 1000).contains(&max),
        "{max}"
    );
    assert_eq!(h.percentile(100.0), max);
    // Clamped values survive a round trip (they are inside the encoded range).
    assert_eq!(LatencyHistogram::from_base64(&h.to_base64()).unwrap(), h);
}

fn random_latencies(seed: u64, n: usize) -> Vec<u64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    // Log-uniform over 100 ns .. ~100 ms, like wake-up latencies with a long tail.
    (0..n)
        .map(|_| {
            let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            (100.0 * 10f64.powf(6.0 * u)) as u64
        })
        .collect()
}

#[test]
fn merge_equals_recording_everything_into_one() {
    let values = random_latencies(3, 30_000);
    let mut all = LatencyHistogram::new();
    values.iter().for_each(|&v| all.record(v));
    let mut shards = [
        LatencyHistogram::new(),
        LatencyHistogram::new(),
        LatencyHistogram::new(),
    ];
    for (i, &v) in values.iter().enumerate() {
        shards[i % 3].record(v);
    }
    // Shards travel as text, as they would between machines.
    let texts: Vec<String> = shards.iter().map(LatencyHistogram::to_base64).collect();
    let mut merged = LatencyHistogram::new();
    for t in &texts {
        merged.merge(&LatencyHistogram::from_base64(t).unwrap());
    }
    assert_eq!(merged, all);
    assert_eq!(merged.count(), 30_000);
    for q in [0.0, 50.0, 90.0, 99.0, 99.9, 100.0] {
        assert_eq!(merged.percentile(q), all.percentile(q), "p{q}");
    }
    assert_eq!((merged.min(), merged.max()), (all.min(), all.max()));
    assert_eq!(merged.mean().to_bits(), all.mean().to_bits());
    // Merging an empty histogram changes nothing.
    merged.merge(&LatencyHistogram::new());
    assert_eq!(merged, all);
}

#[test]
fn base64_and_serde_round_trip() {
    let mut h = LatencyHistogram::new();
    random_latencies(11, 5000)
        .into_iter()
        .for_each(|v| h.record(v));
    let text = h.to_base64();
    // Cookie 0x1c849314 (V2 + deflate) is "HISTF" in base64, as in HdrHistogram's log files.
    assert!(text.starts_with("HISTF"), "{}", &text[..10]);
    let back = LatencyHistogram::from_base64(&format!("  {text}\n")).unwrap();
    assert_eq!(back, h);
    assert_eq!(back.percentile(99.0), h.percentile(99.0));

    let json = serde_json::to_string(&h).unwrap();
    assert_eq!(json, format!("\"{text}\""));
    let from_json: LatencyHistogram = serde_json::from_str(&json).unwrap();
    assert_eq!(from_json, h);
    let err = serde_json::from_str::<LatencyHistogram>("\"not a histogram!\"").unwrap_err();
    assert!(err.to_string().contains("not valid base64"), "{err}");
}

#[test]
fn plain_v2_encoding_from_other_tools_is_accepted() {
    let mut raw = Histogram::<u64>::new_with_bounds(1, HIGHEST_NS, 3).unwrap();
    raw.record(1500).unwrap();
    raw.record(2_000_000).unwrap();
    let mut bytes = Vec::new();
    V2Serializer::new().serialize(&raw, &mut bytes).unwrap();
    let h = LatencyHistogram::from_v2_bytes(&bytes).unwrap();
    assert_eq!(h.count(), 2);
    assert_eq!(h.min(), 1500);
}

fn deflated(h: &Histogram<u64>) -> Vec<u8> {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new().serialize(h, &mut bytes).unwrap();
    bytes
}

#[test]
fn bad_histogram_text_is_an_error_not_a_panic() {
    use base64::Engine;
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);

    let e = LatencyHistogram::from_base64("HIST*not base64").unwrap_err();
    assert!(matches!(e, HistError::Base64 { .. }), "{e}");
    assert!(e.to_string().contains("HIST*not base64"), "{e}");
    for junk in [&[][..], &[1, 2, 3][..], &[0x1c, 0x84, 0x93, 0x14, 0, 0][..]] {
        let e = LatencyHistogram::from_base64(&b64(junk)).unwrap_err();
        assert!(matches!(e, HistError::Malformed { .. }), "{e}");
    }

    // Another tool's bounds: refused by name, since merging would not be exact.
    let mut other = Histogram::<u64>::new_with_bounds(1, 1_000_000, 2).unwrap();
    other.record(10).unwrap();
    let e = LatencyHistogram::from_base64(&b64(&deflated(&other))).unwrap_err();
    assert!(
        matches!(
            e,
            HistError::Config {
                low: 1,
                high: 1_000_000,
                sigfig: 2
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("1..=1000000 ns with 2"), "{e}");

    // Two encodings glued together.
    let mut ours = Histogram::<u64>::new_with_bounds(1, HIGHEST_NS, 3).unwrap();
    ours.record(77).unwrap();
    let mut two = deflated(&ours);
    two.extend(deflated(&ours));
    let e = LatencyHistogram::from_v2_bytes(&two).unwrap_err();
    assert!(matches!(e, HistError::TrailingBytes { .. }), "{e}");

    // A header that claims a 4 GiB payload must not allocate it.
    let mut hostile = vec![0x1c, 0x84, 0x93, 0x13, 0xff, 0xff, 0xff, 0xff];
    hostile.extend([0u8; 32]);
    let e = LatencyHistogram::from_v2_bytes(&hostile).unwrap_err();
    assert!(matches!(e, HistError::Malformed { .. }), "{e}");

    // Random corruption of a valid encoding: errors or (rarely) a valid histogram, never a panic.
    let mut rich = LatencyHistogram::new();
    random_latencies(5, 2000)
        .into_iter()
        .for_each(|v| rich.record(v));
    let good = {
        let mut b = Vec::new();
        V2DeflateSerializer::new()
            .serialize(rich.as_hdr(), &mut b)
            .unwrap();
        b
    };
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(99);
    let mut errors = 0;
    for _ in 0..300 {
        let mut b = good.clone();
        for _ in 0..1 + rng.next_u64() % 4 {
            let i = (rng.next_u64() % b.len() as u64) as usize;
            b[i] ^= 1 << (rng.next_u64() % 8);
        }
        if rng.next_u64() % 4 == 0 {
            b.truncate((rng.next_u64() % b.len() as u64) as usize);
        }
        if LatencyHistogram::from_v2_bytes(&b).is_err() {
            errors += 1;
        }
    }
    assert!(errors > 200, "{errors}");
}

/// The Python script that produced the reference bounds of
/// `bootstrap_is_bit_identical_to_an_independent_implementation` (run with `python3 -c`), kept so
/// the numbers can be re-derived without trusting the code under test.
#[allow(dead_code)]
const BOOTSTRAP_REFERENCE_PY: &str = r#"
M=(1<<64)-1
def splitmix(seed):
    x=seed
    while True:
        x=(x+0x9e3779b97f4a7c15)&M
        z=x
        z=((z^(z>>30))*0xbf58476d1ce4e5b9)&M
        z=((z^(z>>27))*0x94d049bb133111eb)&M
        yield z^(z>>31)
def rotl(x,k): return ((x<<k)|(x>>(64-k)))&M
class X:
    def __init__(s,seed):
        g=splitmix(seed); s.s=[next(g) for _ in range(4)]
    def next(s):
        a=s.s
        r=(rotl((a[0]+a[3])&M,23)+a[0])&M
        t=(a[1]<<17)&M
        a[2]^=a[0]; a[3]^=a[1]; a[1]^=a[2]; a[0]^=a[3]; a[2]^=t; a[3]=rotl(a[3],45)
        return r
def below(rng,n):
    th=((-n)&M)%n
    while True:
        m=rng.next()*n
        if (m&M)>=th: return m>>64
def pct(s,q):
    last=len(s)-1; h=last*q/100.0; import math; lo=min(int(math.floor(h)),last); frac=h-lo
    a=s[lo]
    if frac==0.0 or lo==last: return a
    b=s[lo+1]
    return a if a==b else a+frac*(b-a)
xs=[101.3, 87.2, 120.4, 95.8, 110.1, 78.9, 130.5, 99.0, 105.6, 92.3]
rng=X(42)
print("first u64 seed 42:", [hex(X(42).next())])
st=[]
for _ in range(1000):
    buf=[xs[below(rng,len(xs))] for _ in xs]
    t=0.0
    for v in buf: t+=v
    st.append(t/len(buf))
st.sort()
tail=50.0*(1.0-0.9)
lo,hi=pct(st,tail),pct(st,100.0-tail)
print(repr(lo),repr(hi), lo.hex(), hi.hex())
"#;
