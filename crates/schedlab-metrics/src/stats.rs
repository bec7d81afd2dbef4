//! Statistics used to compare scheduler variants: summaries, Student/Welch t-tests, confidence
//! intervals of means and of ratios of means, a seeded percentile bootstrap, percentiles and the
//! harmonic/geometric means that kernel benchmark tables use.
//!
//! `schedlab compare` runs every variant at every sweep point with common random numbers:
//! repetition *k* uses the same seed for every variant, so the samples of two variants are
//! *paired* and [`compare_samples`] with `paired = true` removes the shared seed-to-seed noise.
//! Unpaired data (e.g. real-host runs) uses Welch's test, which does not assume equal variances.
//!
//! ```text
//!   base:  x1 x2 ... xn ─┐ paired  → t-test on d_i = y_i − x_i, df = n − 1
//!   other: y1 y2 ... yn ─┘ unpaired → Welch t-test, Welch–Satterthwaite df
//!                          both     → ratio ȳ/x̄ with a Fieller interval from the same test
//! ```
//!
//! # Conventions
//!
//! * Undefined results are `NaN` (or `None` for the tests), never a panic. In particular a
//!   [`Summary`] of fewer than two values has `stddev` and `stderr` = `NaN`: a single sample says
//!   nothing about spread, and `NaN` cannot be mistaken for "no noise" (it also never satisfies a
//!   `<=` stopping rule such as `--until-ci`).
//! * Percentiles take `q` in `0..=100` (like numpy and like [`crate::hist::LatencyHistogram`]).
//! * Sums run left to right over the input order, so results depend only on the input values and
//!   their order. The bootstrap draws indices with integer arithmetic from a named generator
//!   (`Xoshiro256PlusPlus`, version pinned by `Cargo.lock`), so resamples are bit-identical on
//!   every machine. `+ − × ÷ sqrt` are exactly rounded by IEEE 754; the Student-t CDF/quantiles
//!   (statrs) and [`gmean`] use `ln`/`exp` from the platform's libm, which may differ in the last
//!   ulp between C libraries; this never shows in tables rounded to a few digits.

use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Descriptive statistics of one sample, as printed in comparison tables ("mean (stderr)").
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Arithmetic mean; `NaN` when `n == 0`.
    pub mean: f64,
    /// Sample standard deviation (divisor `n − 1`); `NaN` when `n < 2`.
    pub stddev: f64,
    /// Standard error of the mean, `stddev / sqrt(n)`; `NaN` when `n < 2`.
    pub stderr: f64,
    /// Smallest value; `NaN` when `n == 0` or any value is `NaN`.
    pub min: f64,
    /// Largest value; `NaN` when `n == 0` or any value is `NaN`.
    pub max: f64,
}

/// Summarizes a sample. Never panics; see [`Summary`] for the `n = 0` and `n = 1` cases.
/// Non-finite inputs propagate into the mean and spread.
pub fn summarize(xs: &[f64]) -> Summary {
    let n = xs.len();
    if n == 0 {
        return Summary {
            n,
            mean: f64::NAN,
            stddev: f64::NAN,
            stderr: f64::NAN,
            min: f64::NAN,
            max: f64::NAN,
        };
    }
    let mean = mean_of(xs);
    let (stddev, stderr) = if n < 2 {
        (f64::NAN, f64::NAN)
    } else {
        let sd = sample_var(xs, mean).sqrt();
        (sd, sd / (n as f64).sqrt())
    };
    let (min, max) = if xs.iter().any(|x| x.is_nan()) {
        (f64::NAN, f64::NAN)
    } else {
        xs.iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
                (lo.min(x), hi.max(x))
            })
    };
    Summary {
        n,
        mean,
        stddev,
        stderr,
        min,
        max,
    }
}

/// Result of a two-sided t-test.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TTest {
    /// t statistic of `mean(a) − mean(b)` (paired: mean of `a_i − b_i`); `±∞` when the
    /// variance is zero but the means differ.
    pub t: f64,
    /// Degrees of freedom (Welch–Satterthwaite for Welch; `n − 1` for paired). When both
    /// variances are zero, Welch reports the pooled `n_a + n_b − 2`.
    pub df: f64,
    /// Two-sided p-value, in `[0, 1]`.
    pub p_value: f64,
}

/// Welch's unequal-variance two-sample t-test of `mean(a) = mean(b)`, for unpaired data.
///
/// `None` when undefined: either sample has fewer than two values or a non-finite value, or both
/// samples have zero variance and equal means. Zero variance with different means gives
/// `t = ±∞`, `p_value = 0`.
pub fn welch_t_test(a: &[f64], b: &[f64]) -> Option<TTest> {
    let w = welch_parts(a, b)?;
    t_test_from(w.mean_a_minus_b, w.se2, w.df)
}

/// Paired t-test of `mean(a_i − b_i) = 0`, for samples taken with common random numbers
/// (pair *i* shares seed *i*), which cancels seed-to-seed noise that Welch would count.
///
/// `None` when undefined: lengths differ, fewer than two pairs, a non-finite value or
/// difference, or all differences equal to zero. Differences that are constant but non-zero give
/// `t = ±∞`, `p_value = 0`.
pub fn paired_t_test(a: &[f64], b: &[f64]) -> Option<TTest> {
    if a.len() != b.len() || a.len() < 2 {
        return None;
    }
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    if !all_finite(&d) {
        return None;
    }
    let n = d.len() as f64;
    let m = mean_of(&d);
    let se2 = sample_var(&d, m) / n;
    t_test_from(m, se2, n - 1.0)
}

/// Two-sided Student-t confidence interval `(low, high)` of the mean at level `confidence`
/// (e.g. 0.95). `(NaN, NaN)` when `n < 2`, a value is non-finite or `confidence` is not in
/// `(0, 1)`; `(mean, mean)` when the variance is zero.
pub fn mean_ci(xs: &[f64], confidence: f64) -> (f64, f64) {
    if xs.len() < 2 || !all_finite(xs) {
        return (f64::NAN, f64::NAN);
    }
    let s = summarize(xs);
    match t_quantile(confidence, (s.n - 1) as f64) {
        Some(q) => (s.mean - q * s.stderr, s.mean + q * s.stderr),
        None => (f64::NAN, f64::NAN),
    }
}

/// How one variant compares with the base variant: the ratio of means with its confidence
/// interval and the p-value of the matching t-test.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatioEstimate {
    /// `mean(other) / mean(base)`; `NaN` when either mean is not strictly positive or a
    /// sample is empty or non-finite.
    pub ratio: f64,
    /// Lower end of the confidence interval of the ratio; `−∞` when unbounded (the base mean is
    /// not distinguishable from zero), `NaN` when not computable (fewer than two samples).
    pub ci_low: f64,
    /// Upper end of the confidence interval of the ratio; `+∞` when unbounded, `NaN` when not
    /// computable.
    pub ci_high: f64,
    /// Two-sided p-value of "the means are equal" (paired t-test or Welch). `1` for identical
    /// constant samples, `NaN` when not computable.
    pub p_value: f64,
    /// `p_value < 1 − confidence`; always `false` when `ratio` or `p_value` is `NaN`.
    pub significant: bool,
}

impl RatioEstimate {
    /// All-`NaN`, not significant: the comparison is undefined.
    pub const UNDEFINED: RatioEstimate = RatioEstimate {
        ratio: f64::NAN,
        ci_low: f64::NAN,
        ci_high: f64::NAN,
        p_value: f64::NAN,
        significant: false,
    };

    /// Half-width of the confidence interval relative to the ratio, in percent: the largest of
    /// `ratio − ci_low` and `ci_high − ratio`, times `100 / ratio`. This is what `--until-ci P`
    /// compares with `P`; it is `∞` for an unbounded interval and `NaN` when undefined, and
    /// neither satisfies `<= P`, so a stopping loop keeps adding repetitions.
    pub fn ci_half_width_pct(&self) -> f64 {
        let w = (self.ratio - self.ci_low).max(self.ci_high - self.ratio);
        if self.ratio.is_nan() || self.ci_low.is_nan() || self.ci_high.is_nan() {
            return f64::NAN;
        }
        100.0 * w / self.ratio.abs()
    }
}

/// Compares `other` with `base`: ratio of means, its confidence interval and a significance
/// test at level `confidence` (e.g. 0.95).
///
/// * `paired = true` (common random numbers; `base[i]` and `other[i]` share a seed): paired
///   t-test on the differences, `df = n − 1`. Mismatched lengths give [`RatioEstimate::UNDEFINED`].
/// * `paired = false`: Welch's t-test.
///
/// The interval is **Fieller's**, built by inverting the same t-test that gives `p_value`: it
/// is the set of ρ for which `mean(other) − ρ·mean(base)` is not significantly different from
/// zero (using the paired covariance when paired). We prefer it to per-pair log ratios because it
/// estimates the same quantity as `ratio` (a ratio of means, not a geometric mean of ratios)
/// and allows individual zero values; and to the delta method because it is exact under
/// normality and, by construction, excludes 1 exactly when `significant` is true (up to
/// rounding), so the table's CI and its significance marker never disagree. When the base mean
/// is not significantly above zero the Fieller set is unbounded and we report `(−∞, +∞)`.
///
/// Zero or negative means make a ratio meaningless: the result is then
/// [`RatioEstimate::UNDEFINED`] (`NaN` ratio, `significant = false`). With fewer than two values
/// in a sample the ratio is reported but the interval and p-value are `NaN`. An invalid
/// `confidence` (outside `(0, 1)`) gives a `NaN` interval and `significant = false`.
pub fn compare_samples(
    base: &[f64],
    other: &[f64],
    paired: bool,
    confidence: f64,
) -> RatioEstimate {
    if base.is_empty() || other.is_empty() || !all_finite(base) || !all_finite(other) {
        return RatioEstimate::UNDEFINED;
    }
    if paired && base.len() != other.len() {
        return RatioEstimate::UNDEFINED;
    }
    let mx = mean_of(base);
    let my = mean_of(other);
    if !(mx > 0.0 && my > 0.0) {
        return RatioEstimate::UNDEFINED;
    }
    let ratio = my / mx;
    let not_computable = RatioEstimate {
        ratio,
        ..RatioEstimate::UNDEFINED
    };
    if base.len() < 2 || other.len() < 2 {
        return not_computable;
    }

    // Work in units of the base mean so that the Fieller quadratic is well scaled: the base
    // mean becomes 1 and the other mean becomes `ratio`. `vx`, `vy` are the squared standard
    // errors of the two means, `c` their covariance and `ve` the squared standard error of
    // `mean(other) − ratio·mean(base)`.
    let (test, identical, df, vx, vy, c, ve) = if paired {
        let n = base.len() as f64;
        let test = paired_t_test(other, base);
        let identical = base.iter().zip(other).all(|(x, y)| x == y);
        let k = 1.0 / ((n - 1.0) * n);
        let (mut sxx, mut syy, mut sxy, mut see) = (0.0, 0.0, 0.0, 0.0);
        for (x, y) in base.iter().zip(other) {
            let dx = (x - mx) / mx;
            let dy = (y - my) / mx;
            let e = dy - ratio * dx;
            sxx += dx * dx;
            syy += dy * dy;
            sxy += dx * dy;
            see += e * e;
        }
        (test, identical, n - 1.0, sxx * k, syy * k, sxy * k, see * k)
    } else {
        let Some(w) = welch_parts(base, other) else {
            return not_computable;
        };
        // The p-value is symmetric, so the orientation of the difference does not matter.
        let test = t_test_from(w.mean_a_minus_b, w.se2, w.df);
        let identical = w.se2 == 0.0 && w.mean_a_minus_b == 0.0;
        let s2 = mx * mx;
        let (vx, vy) = (w.va / s2, w.vb / s2);
        (test, identical, w.df, vx, vy, 0.0, vy + ratio * ratio * vx)
    };
    let p_value = match test {
        Some(t) => t.p_value,
        // Zero variance with equal means: no difference at all.
        None if identical => 1.0,
        // Differences overflowed to infinity: no test.
        None => f64::NAN,
    };
    let Some(q) = t_quantile(confidence, df) else {
        return RatioEstimate {
            ratio,
            p_value,
            ..RatioEstimate::UNDEFINED
        };
    };
    let (ci_low, ci_high) = fieller(ratio, vx, vy, c, ve, q);
    RatioEstimate {
        ratio,
        ci_low,
        ci_high,
        p_value,
        significant: p_value < 1.0 - confidence,
    }
}

/// Fieller's interval for ρ = ȳ/x̄ in units where x̄ = 1 and ȳ = `r`: the ρ with
/// `(r − ρ)² ≤ q²·(vy − 2ρc + ρ²vx)`. The discriminant is expanded analytically
/// (`q²·ve − q⁴·(vx·vy − c²)`) to avoid cancelling two large squares.
fn fieller(r: f64, vx: f64, vy: f64, c: f64, ve: f64, q: f64) -> (f64, f64) {
    let q2 = q * q;
    let a = 1.0 - q2 * vx;
    if a.is_nan() || a <= 0.0 {
        return (f64::NEG_INFINITY, f64::INFINITY);
    }
    let b = r - q2 * c;
    let disc = (q2 * ve - q2 * q2 * (vx * vy - c * c)).max(0.0);
    let s = disc.sqrt();
    ((b - s) / a, (b + s) / a)
}

/// Words for a comparison in a table: `"better"`, `"worse"` or `"no significant difference"`
/// (also for an undefined estimate). `better_higher` says whether a larger value is better
/// (throughput) or worse (time, latency).
pub fn verdict(est: &RatioEstimate, better_higher: bool) -> &'static str {
    if !est.significant || est.ratio.is_nan() || est.ratio == 1.0 {
        "no significant difference"
    } else if (est.ratio > 1.0) == better_higher {
        "better"
    } else {
        "worse"
    }
}

/// Percentile bootstrap confidence interval `(low, high)` of `stat` at level `confidence`, from
/// `resamples` resamples drawn with `Xoshiro256PlusPlus::seed_from_u64(seed)`. Used for
/// percentile metrics, whose sampling distribution has no closed form.
///
/// Deterministic: the same inputs and seed give bit-identical bounds on every machine (indices
/// are drawn with integer arithmetic). `stat` receives each resample in draw order (unsorted; use
/// [`percentile_of`] for percentiles). Resamples whose statistic is `NaN` are skipped.
/// `(NaN, NaN)` when `xs` is empty, `resamples == 0`, `confidence` is not in `(0, 1)` or every
/// statistic is `NaN`.
pub fn bootstrap_ci(
    xs: &[f64],
    stat: impl Fn(&[f64]) -> f64,
    resamples: usize,
    confidence: f64,
    seed: u64,
) -> (f64, f64) {
    let nan = (f64::NAN, f64::NAN);
    if xs.is_empty() || resamples == 0 || !valid_confidence(confidence) {
        return nan;
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let n = xs.len() as u64;
    let mut buf = vec![0.0; xs.len()];
    let mut stats = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        for slot in buf.iter_mut() {
            // `below(n) < n = xs.len()`, so the conversion back to usize is lossless.
            *slot = xs[below(&mut rng, n) as usize];
        }
        let s = stat(&buf);
        if !s.is_nan() {
            stats.push(s);
        }
    }
    if stats.is_empty() {
        return nan;
    }
    stats.sort_by(f64::total_cmp);
    let tail = 50.0 * (1.0 - confidence);
    (percentile(&stats, tail), percentile(&stats, 100.0 - tail))
}

/// Uniform integer in `0..n` (`n > 0`) by Lemire's multiply-and-reject method, spelled out here
/// rather than taken from `rand` so the stream of indices cannot change with a `rand` release.
fn below(rng: &mut Xoshiro256PlusPlus, n: u64) -> u64 {
    let threshold = n.wrapping_neg() % n;
    loop {
        let m = u128::from(rng.next_u64()) * u128::from(n);
        if (m as u64) >= threshold {
            return (m >> 64) as u64;
        }
    }
}

/// Percentile `q` (in `0..=100`, clamped) of an ascending `sorted` slice, interpolating linearly
/// between closest ranks (numpy's default "linear" method). `NaN` when empty or `q` is `NaN`.
/// An unsorted input gives a meaningless value but never panics.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() || q.is_nan() {
        return f64::NAN;
    }
    let last = sorted.len() - 1;
    let h = last as f64 * q.clamp(0.0, 100.0) / 100.0;
    // `h` is in `0..=last`, so the truncation is exact and in range.
    let lo = (h.floor() as usize).min(last);
    let frac = h - lo as f64;
    let a = sorted[lo];
    if frac == 0.0 || lo == last {
        return a;
    }
    let b = sorted[lo + 1];
    if a == b { a } else { a + frac * (b - a) }
}

/// [`percentile`] of an unsorted sample (sorts a copy with `f64::total_cmp`, so `NaN`s sort
/// last); convenient as a [`bootstrap_ci`] statistic.
pub fn percentile_of(xs: &[f64], q: f64) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    percentile(&v, q)
}

/// Arithmetic mean, left to right; `NaN` when empty. Exposed so callers average exactly like
/// [`summarize`] does.
pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() { f64::NAN } else { mean_of(xs) }
}

/// Harmonic mean, the right average of rates over equal amounts of work (mmtests reports it for
/// throughput). `NaN` when empty or any value is negative or `NaN`; `0` if any value is `0`.
pub fn hmean(xs: &[f64]) -> f64 {
    if xs.is_empty() || xs.iter().any(|&x| x.is_nan() || x < 0.0) {
        return f64::NAN;
    }
    let s: f64 = xs.iter().map(|&x| 1.0 / x).sum();
    xs.len() as f64 / s
}

/// Geometric mean, the right average of ratios. `NaN` when empty or any value is negative or
/// `NaN`; `0` if any value is `0`.
pub fn gmean(xs: &[f64]) -> f64 {
    if xs.is_empty() || xs.iter().any(|&x| x.is_nan() || x < 0.0) {
        return f64::NAN;
    }
    let s: f64 = xs.iter().map(|&x| x.ln()).sum();
    (s / xs.len() as f64).exp()
}

// ----- helpers -------------------------------------------------------------------------------

/// Mean of a non-empty slice, summed left to right.
fn mean_of(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample variance (divisor `n − 1`) around a precomputed mean; two-pass for accuracy.
fn sample_var(xs: &[f64], mean: f64) -> f64 {
    let ss: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
    ss / (xs.len() - 1) as f64
}

/// A confidence level strictly between 0 and 1 (rejects `NaN`).
fn valid_confidence(c: f64) -> bool {
    c > 0.0 && c < 1.0
}

/// Degrees of freedom that statrs accepts and that give finite quantiles (rejects `NaN`).
fn valid_df(df: f64) -> bool {
    df > 0.0 && df.is_finite()
}

fn all_finite(xs: &[f64]) -> bool {
    xs.iter().all(|x| x.is_finite())
}

/// Intermediate quantities of Welch's test, shared with [`compare_samples`].
struct WelchParts {
    /// `mean(a) − mean(b)`.
    mean_a_minus_b: f64,
    /// Squared standard errors of the two means.
    va: f64,
    vb: f64,
    /// `va + vb`.
    se2: f64,
    /// Welch–Satterthwaite degrees of freedom (pooled `na + nb − 2` when `se2 == 0`).
    df: f64,
}

fn welch_parts(a: &[f64], b: &[f64]) -> Option<WelchParts> {
    if a.len() < 2 || b.len() < 2 || !all_finite(a) || !all_finite(b) {
        return None;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (ma, mb) = (mean_of(a), mean_of(b));
    let va = sample_var(a, ma) / na;
    let vb = sample_var(b, mb) / nb;
    let se2 = va + vb;
    let df = if se2 > 0.0 {
        // Divide by se2 first so that tiny or huge variances neither underflow nor overflow.
        let (ra, rb) = (va / se2, vb / se2);
        1.0 / (ra * ra / (na - 1.0) + rb * rb / (nb - 1.0))
    } else {
        na + nb - 2.0
    };
    Some(WelchParts {
        mean_a_minus_b: ma - mb,
        va,
        vb,
        se2,
        df,
    })
}

/// t-test from a mean difference, its squared standard error and degrees of freedom.
fn t_test_from(diff: f64, se2: f64, df: f64) -> Option<TTest> {
    if !diff.is_finite() || !se2.is_finite() {
        return None;
    }
    if se2 == 0.0 {
        if diff == 0.0 {
            return None;
        }
        return Some(TTest {
            t: f64::INFINITY.copysign(diff),
            df,
            p_value: 0.0,
        });
    }
    let t = diff / se2.sqrt();
    Some(TTest {
        t,
        df,
        p_value: two_sided_p(t, df)?,
    })
}

/// Two-sided p-value of `t` under Student's t with `df` degrees of freedom. Uses the survival
/// function directly so that tiny p-values are not lost to `1 − cdf` cancellation.
fn two_sided_p(t: f64, df: f64) -> Option<f64> {
    if t.is_nan() || !valid_df(df) {
        return None;
    }
    if t.is_infinite() {
        return Some(0.0);
    }
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some((2.0 * dist.sf(t.abs())).clamp(0.0, 1.0))
}

/// Two-sided critical value `t_{(1+confidence)/2, df}`; `None` for an invalid level or df
/// (checked here because statrs asserts on out-of-range probabilities).
fn t_quantile(confidence: f64, df: f64) -> Option<f64> {
    if !valid_confidence(confidence) || !valid_df(df) {
        return None;
    }
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    let q = dist.inverse_cdf(0.5 + confidence / 2.0);
    q.is_finite().then_some(q)
}
