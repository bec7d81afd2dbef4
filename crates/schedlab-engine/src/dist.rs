//! Distributions of durations and sizes used by workload programs.
//!
//! Sampling uses only `libm` and integer arithmetic, so a seed gives the same values on every
//! platform.

use crate::rng::{SimRng, unit_f64};
use rand::Rng;

/// A distribution of non-negative integers (nanoseconds or bytes).
#[derive(Clone, Debug, PartialEq)]
pub enum Dist {
    /// Always this value.
    Const(u64),
    /// Uniform on `[lo, hi]`.
    Uniform {
        /// Lower bound (inclusive).
        lo: u64,
        /// Upper bound (inclusive).
        hi: u64,
    },
    /// Exponential with this mean.
    Exp {
        /// Mean.
        mean: u64,
    },
    /// Log-normal with this median and shape (sigma of the underlying normal).
    LogNormal {
        /// Median.
        median: u64,
        /// Shape.
        sigma: f64,
    },
    /// Normal, truncated at zero.
    Normal {
        /// Mean.
        mean: u64,
        /// Standard deviation.
        stddev: u64,
    },
    /// A discrete mix: `(weight, value)` pairs.
    Choice(Vec<(u32, u64)>),
}

impl Dist {
    /// Draws one value. A constant (most op sizes and bursts, on the interpreter's hot path)
    /// is answered inline, drawing nothing; the other kinds are out of line.
    #[inline]
    pub fn sample(&self, rng: &mut SimRng) -> u64 {
        match self {
            Dist::Const(v) => *v,
            _ => self.sample_random(rng),
        }
    }

    /// [`Dist::sample`] of the kinds that draw from `rng`.
    #[inline(never)]
    fn sample_random(&self, rng: &mut SimRng) -> u64 {
        match self {
            Dist::Const(v) => *v,
            Dist::Uniform { lo, hi } => {
                if hi <= lo {
                    *lo
                } else {
                    lo + rng.next_u64() % (hi - lo + 1)
                }
            }
            Dist::Exp { mean } => {
                let u = 1.0 - unit_f64(rng);
                (-(*mean as f64) * libm::log(u)).round() as u64
            }
            Dist::LogNormal { median, sigma } => {
                let z = std_normal(rng);
                (*median as f64 * libm::exp(sigma * z)).round() as u64
            }
            Dist::Normal { mean, stddev } => {
                let z = std_normal(rng);
                (*mean as f64 + *stddev as f64 * z).max(0.0).round() as u64
            }
            Dist::Choice(items) => {
                let total: u64 = items.iter().map(|(w, _)| *w as u64).sum();
                if total == 0 {
                    return 0;
                }
                let mut pick = rng.next_u64() % total;
                for (w, v) in items {
                    if pick < *w as u64 {
                        return *v;
                    }
                    pick -= *w as u64;
                }
                items.last().map_or(0, |x| x.1)
            }
        }
    }

    /// The mean (exact for all kinds but LogNormal, where it is `median·e^(σ²/2)`).
    pub fn mean(&self) -> f64 {
        match self {
            Dist::Const(v) => *v as f64,
            Dist::Uniform { lo, hi } => (*lo as f64 + *hi as f64) / 2.0,
            Dist::Exp { mean } => *mean as f64,
            Dist::LogNormal { median, sigma } => *median as f64 * libm::exp(sigma * sigma / 2.0),
            Dist::Normal { mean, .. } => *mean as f64,
            Dist::Choice(items) => {
                let total: f64 = items.iter().map(|(w, _)| *w as f64).sum();
                if total == 0.0 {
                    0.0
                } else {
                    items
                        .iter()
                        .map(|(w, v)| *w as f64 * *v as f64)
                        .sum::<f64>()
                        / total
                }
            }
        }
    }

    /// Whether sampling consumes randomness (constant distributions do not, which keeps
    /// deterministic workloads independent of the stream).
    pub fn is_random(&self) -> bool {
        !matches!(self, Dist::Const(_))
    }
}

fn std_normal(rng: &mut SimRng) -> f64 {
    // Box–Muller with libm: platform independent.
    let u1 = 1.0 - unit_f64(rng);
    let u2 = unit_f64(rng);
    libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(std::f64::consts::TAU * u2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Stream, stream};

    #[test]
    fn sample_means_are_close() {
        let mut r = stream(7, Stream::Workload);
        for d in [
            Dist::Exp { mean: 1000 },
            Dist::Uniform { lo: 0, hi: 2000 },
            Dist::Normal {
                mean: 1000,
                stddev: 100,
            },
            Dist::Choice(vec![(1, 0), (1, 2000)]),
        ] {
            let n = 20000;
            let m: f64 = (0..n).map(|_| d.sample(&mut r) as f64).sum::<f64>() / n as f64;
            assert!((m - 1000.0).abs() < 40.0, "{d:?} mean {m}");
        }
    }
}
