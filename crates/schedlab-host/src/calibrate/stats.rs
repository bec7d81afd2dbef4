//! The batch loop every measurement runs in, and its statistics (median and spread of the
//! final batches).

use super::{CalibrateOptions, Measurement};
use crate::control::Deadline;
use crate::error::HostError;
use std::time::{Duration, Instant};

/// Measures with `f(n)` returning one batch's value for `n` units, as described in the module
/// docs; an unstable result is measured once more before it is returned flagged.
pub(super) fn measure(
    budget: Duration,
    opts: &CalibrateOptions,
    deadline: &Deadline,
    mut f: impl FnMut(u64) -> Result<f64, HostError>,
) -> Result<Measurement, HostError> {
    let probe = 16;
    let t = Instant::now();
    f(probe)?;
    let per_unit = (t.elapsed().as_secs_f64() / probe as f64).max(1e-8);
    let batch_target = budget.as_secs_f64() / opts.max_batches as f64;
    let n = ((batch_target / per_unit) as u64).clamp(16, 20_000_000);
    // A measurement that does not settle is measured once more from scratch (a burst of
    // other load often passes); if it still does not settle it is returned flagged.
    let mut runs = 0;
    let mut last = Measurement {
        value: 0.0,
        runs: 0,
        spread: 0.0,
        stable: false,
    };
    for _attempt in 0..2 {
        let start = Instant::now();
        let mut values: Vec<f64> = Vec::new();
        let mut stable = false;
        loop {
            deadline.check("calibrate")?;
            values.push(f(n)?);
            if values.len() >= opts.stable_batches {
                let (med, spread) = med_spread(&values[values.len() - opts.stable_batches..]);
                if med > 0.0 && spread <= opts.tolerance {
                    stable = true;
                    break;
                }
            }
            if values.len() >= opts.max_batches || start.elapsed() >= budget {
                break;
            }
        }
        runs += values.len();
        let window = &values[values.len().saturating_sub(opts.stable_batches)..];
        let (value, spread) = med_spread(window);
        let m = Measurement {
            value,
            runs,
            spread,
            stable,
        };
        if stable {
            return Ok(m);
        }
        last = m;
    }
    Ok(last)
}

pub(super) fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

fn med_spread(v: &[f64]) -> (f64, f64) {
    let mut w = v.to_vec();
    let med = median(&mut w);
    let (lo, hi) = (
        w.first().copied().unwrap_or(0.0),
        w.last().copied().unwrap_or(0.0),
    );
    (med, if med > 0.0 { (hi - lo) / med } else { 0.0 })
}

pub(super) fn ns_since(t: Instant, n: u64) -> f64 {
    t.elapsed().as_nanos() as f64 / n as f64
}
