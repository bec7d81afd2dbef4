//! The numbers the fidelity checks are judged by: median and spread of repeated runs, the
//! rule that says when repeating may stop, relative error and the distance of a simulation
//! from the host. Pure functions, shared by the suite, its report and the calibration tests.
//!
//! Stability rule ([`Repeats::stable`]): a benchmark runs at least `min` times; after each run
//! the median of all runs so far is taken, and it stops once the last three medians lie within
//! `tol` of each other (max - min ≤ tol × the newest median), or after `max` runs (then the
//! row is marked `unstable`). The spread printed is (max - min) / median of all runs.

use anyhow::Result;

/// The repetition rule (see the module docs): a benchmark runs until the medians of its runs
/// so far settle.
#[derive(Clone, Copy, Debug)]
pub struct Repeats {
    /// Fewest runs.
    pub min: usize,
    /// Most runs.
    pub max: usize,
    /// Agreement of the last three running medians.
    pub tol: f64,
}

impl Repeats {
    /// Whether `values` (in run order) meet the rule: at least `min` runs and the last three
    /// running medians within `tol` of each other.
    pub fn stable(&self, values: &[f64]) -> bool {
        if values.len() < self.min.max(3) {
            return false;
        }
        let meds: Vec<f64> = (values.len() - 2..=values.len())
            .map(|n| median(&values[..n]))
            .collect();
        let (lo, hi) = meds
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &m| {
                (l.min(m), h.max(m))
            });
        let last = meds[2];
        last > 0.0 && (hi - lo) <= self.tol * last
    }

    /// Runs `f` until [`Repeats::stable`] or `max` runs; returns the values and whether they
    /// became stable.
    pub fn run(&self, f: impl FnMut(usize) -> Result<f64>) -> Result<(Vec<f64>, bool)> {
        self.run_from(Vec::new(), f)
    }

    /// [`Repeats::run`] with `done` the values of runs already made (the suite's rounds): they
    /// count as the first runs, and `f` is called with the index of each further one.
    pub fn run_from(
        &self,
        mut done: Vec<f64>,
        mut f: impl FnMut(usize) -> Result<f64>,
    ) -> Result<(Vec<f64>, bool)> {
        loop {
            if self.stable(&done) {
                return Ok((done, true));
            }
            if done.len() >= self.max {
                return Ok((done, false));
            }
            done.push(f(done.len())?);
        }
    }
}

/// Median of `v` (0 for none).
pub fn median(v: &[f64]) -> f64 {
    let mut w = v.to_vec();
    w.sort_by(|a, b| a.total_cmp(b));
    match w.len() {
        0 => 0.0,
        n if n % 2 == 1 => w[n / 2],
        n => (w[n / 2 - 1] + w[n / 2]) / 2.0,
    }
}

/// (max - min) / median.
pub fn spread(v: &[f64]) -> f64 {
    let m = median(v);
    let (lo, hi) = v
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
    if m > 0.0 { (hi - lo) / m } else { 0.0 }
}

/// Relative error of `sim` against `real`.
pub fn rel_err(real: f64, sim: f64) -> f64 {
    if real.abs() < 1e-12 {
        f64::NAN
    } else {
        (sim - real) / real
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stability_needs_three_agreeing_running_medians() {
        let r = Repeats {
            min: 3,
            max: 9,
            tol: 0.03,
        };
        assert!(!r.stable(&[10.0, 10.0]));
        assert!(r.stable(&[10.0, 10.1, 10.0]));
        // Running medians 10, 15, 10: no agreement yet.
        assert!(!r.stable(&[10.0, 20.0, 10.0]));
        // One outlier among many barely moves the median.
        assert!(r.stable(&[10.0, 10.2, 10.1, 30.0, 10.0]));
        let mut n = 0;
        let (v, ok) = r
            .run(|_| {
                n += 1;
                Ok(if n % 2 == 0 { 1.0 } else { 3.0 })
            })
            .unwrap();
        assert!(!ok, "alternating values never settle");
        assert_eq!(v.len(), 9);
    }

    #[test]
    fn stability_compares_the_median_range_with_the_tolerance_of_the_newest() {
        let r = Repeats {
            min: 3,
            max: 9,
            tol: 0.05,
        };
        // Running medians 10, 10.4, 10: range 0.4 <= 0.05 x 10.
        assert!(r.stable(&[10.0, 10.8, 10.0]));
        // Running medians 10, 10.6, 10: range 0.6 > 0.5.
        assert!(!r.stable(&[10.0, 11.2, 10.0]));
        // All zero: a zero median is never stable (nothing to scale the tolerance by).
        assert!(!r.stable(&[0.0, 0.0, 0.0]));
        // `min` above three holds identical runs back.
        let five = Repeats { min: 5, ..r };
        assert!(!five.stable(&[7.0; 4]));
        assert!(five.stable(&[7.0; 5]));
    }

    #[test]
    fn repeating_stops_at_the_first_stable_run_and_passes_errors_on() {
        let r = Repeats {
            min: 3,
            max: 9,
            tol: 0.03,
        };
        let (v, ok) = r.run(|_| Ok(5.0)).unwrap();
        assert_eq!((v, ok), (vec![5.0, 5.0, 5.0], true));
        let mut calls = Vec::new();
        let e = r
            .run(|i| {
                calls.push(i);
                if i == 1 {
                    anyhow::bail!("run {i} failed")
                }
                Ok(1.0)
            })
            .unwrap_err();
        assert_eq!(e.to_string(), "run 1 failed");
        assert_eq!(calls, vec![0, 1]);
    }

    #[test]
    fn runs_already_made_count_as_the_first_runs() {
        let r = Repeats {
            min: 2,
            max: 3,
            tol: 0.05,
        };
        // Two rounds: one more run makes the rule's three, and it stops there either way.
        let mut calls = Vec::new();
        let (v, ok) = r
            .run_from(vec![10.0, 10.1], |i| {
                calls.push(i);
                Ok(10.0)
            })
            .unwrap();
        assert_eq!((v, ok, calls), (vec![10.0, 10.1, 10.0], true, vec![2]));
        let (v, ok) = r.run_from(vec![1.0, 3.0], |_| Ok(1.0)).unwrap();
        assert_eq!((v, ok), (vec![1.0, 3.0, 1.0], false));
        // Already stable, or already at `max`: no run.
        let (v, ok) = r.run_from(vec![5.0; 3], |_| unreachable!()).unwrap();
        assert_eq!((v.len(), ok), (3, true));
        let (v, ok) = r
            .run_from(vec![1.0, 3.0, 1.0, 3.0], |_| unreachable!())
            .unwrap();
        assert_eq!((v.len(), ok), (4, false));
    }

    #[test]
    fn median_and_spread() {
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        // (12 - 9) / 10.
        assert!((spread(&[9.0, 10.0, 12.0]) - 0.3).abs() < 1e-12);
        assert_eq!(spread(&[]), 0.0);
        assert_eq!(spread(&[0.0, 0.0]), 0.0);
    }

    #[test]
    fn relative_error_and_distance() {
        assert_eq!(rel_err(2.0, 3.0), 0.5);
        assert_eq!(rel_err(4.0, 3.0), -0.25);
        assert!(rel_err(0.0, 1.0).is_nan());
        // Twice too slow and twice too fast weigh the same: ln 2 each.
        let d = distance(&[(1.0, 2.0), (2.0, 1.0)]);
        assert!((d - std::f64::consts::LN_2).abs() < 1e-12, "{d}");
        // Pairs with a non-positive side are skipped: only (1, e) counts, |ln e| = 1.
        let d = distance(&[(1.0, std::f64::consts::E), (0.0, 5.0), (-1.0, 2.0)]);
        assert!((d - 1.0).abs() < 1e-12, "{d}");
        assert!(distance(&[]).is_nan());
        assert!(distance(&[(0.0, 1.0)]).is_nan());
    }
}
