//! Per-entity load tracking (PELT, kernel 3.8+: `___update_load_sum()` and
//! `___update_load_avg()`), kept deterministic.
//!
//! Sums accumulate `active × time` in 1024 µs periods and decay by `y` per period with
//! `y^32 = 1/2`, like the kernel. Unlike the kernel, every signal is anchored to the same
//! absolute period grid, so a CPU's sum is exactly the sum of its tasks' sums and a task's
//! contribution can be moved between CPUs by subtraction. Powers of `y` come from repeated
//! squaring of a square-root-derived constant: no libm, identical on every machine.

use crate::time::Time;

/// One PELT period: 1024 × 1024 ns.
pub const PERIOD_NS: u64 = 1 << 20;

/// `y = 2^(-1/32)` as the bits of `sqrt` applied five times to 0.5 (sqrt is correctly rounded
/// on every IEEE platform; a test checks the constant against that computation).
const Y_BITS: u64 = 0x3fef_5076_5b6e_4540;

#[inline]
fn y() -> f64 {
    f64::from_bits(Y_BITS)
}

/// Periods after which a sum has decayed to nothing (`y^2048 = 2^-64`).
const DECAY_HORIZON: u64 = 64 * 32;

/// `y^n` by repeated squaring: the definition the tables below are filled from.
fn decay_by_squaring(n: u64) -> f64 {
    if n == 1 {
        return y();
    }
    let mut result = 1.0;
    let mut base = y();
    let mut e = n;
    while e > 0 {
        if e & 1 == 1 {
            result *= base;
        }
        base *= base;
        e >>= 1;
    }
    result
}

/// `y^n` and `Σ_{k=1..n} y^k` for `n < DECAY_HORIZON`, computed once. A signal that slept
/// across many periods (the common case with thousands of mostly-blocked tasks) then costs a
/// table lookup instead of two exponentiations, with bit-identical values.
static TABLES: std::sync::LazyLock<(Vec<f64>, Vec<f64>)> = std::sync::LazyLock::new(|| {
    let y = y();
    let decay: Vec<f64> = (0..DECAY_HORIZON).map(decay_by_squaring).collect();
    let series = decay.iter().map(|d| y * (1.0 - d) / (1.0 - y)).collect();
    (decay, series)
});

/// `y^n`.
pub fn decay(n: u64) -> f64 {
    if n >= DECAY_HORIZON {
        return 0.0;
    }
    TABLES.0[n as usize]
}

/// `Σ_{k=1..m} y^k = y (1 − y^m) / (1 − y)`.
fn series(m: u64) -> f64 {
    if m >= DECAY_HORIZON {
        let y = y();
        return y / (1.0 - y);
    }
    TABLES.1[m as usize]
}

/// The divider that turns a sum into an average at time `now` (a fully active signal
/// averages to 1).
pub fn divider(now: Time) -> f64 {
    let y = y();
    PERIOD_NS as f64 * y / (1.0 - y) + (now % PERIOD_NS) as f64
}

/// One decaying sum.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Signal {
    /// Decayed sum of `active × ns`.
    pub sum: f64,
    /// Last update time.
    pub last: Time,
}

impl Signal {
    /// Accrues `active` from `last` to `now`, decaying across period boundaries.
    ///
    /// Inlined: it runs several times per wakeup and almost always stays within one 1 ms
    /// period, where it is one multiply-add; the period-crossing decay is out of line.
    #[inline]
    pub fn advance(&mut self, now: Time, active: f64) {
        if now <= self.last {
            return;
        }
        if self.last / PERIOD_NS == now / PERIOD_NS {
            self.sum += active * (now - self.last) as f64;
            if self.sum < 0.0 {
                self.sum = 0.0;
            }
            self.last = now;
        } else {
            self.advance_across_periods(now, active);
        }
    }

    #[cold]
    #[inline(never)]
    fn advance_across_periods(&mut self, now: Time, active: f64) {
        let p_last = self.last / PERIOD_NS;
        let p_now = now / PERIOD_NS;
        let d1 = (p_last + 1) * PERIOD_NS - self.last;
        let periods = p_now - p_last;
        let d3 = now - p_now * PERIOD_NS;
        self.sum = (self.sum + active * d1 as f64) * decay(periods);
        if periods > 1 {
            self.sum += active * PERIOD_NS as f64 * series(periods - 1);
        }
        self.sum += active * d3 as f64;
        if self.sum < 0.0 {
            self.sum = 0.0;
        }
        self.last = now;
    }

    /// Accrues `N` signals that share their last update (a task's load and utilisation, a
    /// CPU's load, utilisation and runnable load: they are always advanced together), each
    /// at its own activity: the same arithmetic per signal as [`Signal::advance`], so the
    /// sums are bit-identical, with the period test and, across periods, the decay lookup
    /// made once for all of them (the kernel's `___update_load_sum()` likewise computes the
    /// periods once and applies them to `load_sum`, `runnable_sum` and `util_sum`).
    #[inline]
    pub fn advance_all<const N: usize>(signals: [&mut Signal; N], now: Time, active: [f64; N]) {
        let last = signals[0].last;
        debug_assert!(
            signals.iter().all(|s| s.last == last),
            "signals out of step"
        );
        if now <= last {
            return;
        }
        if last / PERIOD_NS == now / PERIOD_NS {
            let d = (now - last) as f64;
            for (s, a) in signals.into_iter().zip(active) {
                s.sum += a * d;
                if s.sum < 0.0 {
                    s.sum = 0.0;
                }
                s.last = now;
            }
        } else {
            for (s, a) in signals.into_iter().zip(active) {
                s.advance_across_periods(now, a);
            }
        }
    }

    /// The average after an `advance(now, ..)`.
    #[cfg(test)]
    pub fn avg(&self) -> f64 {
        self.sum / divider(self.last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn y_is_the_sqrt_chain() {
        assert_eq!(y(), 0.5f64.sqrt().sqrt().sqrt().sqrt().sqrt());
    }

    #[test]
    fn half_life_is_32_periods() {
        assert!((decay(32) - 0.5).abs() < 1e-12);
        assert!((decay(64) - 0.25).abs() < 1e-12);
    }

    #[test]
    fn always_active_converges_to_one() {
        let mut s = Signal::default();
        let mut t = 0;
        for _ in 0..2000 {
            t += 777_777;
            s.advance(t, 1.0);
        }
        assert!((s.avg() - 1.0).abs() < 1e-6, "{}", s.avg());
    }

    #[test]
    fn sums_are_linear_across_entities() {
        let mut a = Signal::default();
        let mut b = Signal::default();
        let mut both = Signal::default();
        let mut t = 0;
        for i in 0..500u64 {
            t += 123_457 + i * 1000;
            let (x, y) = ((i % 3) as f64, (i % 2) as f64);
            a.advance(t, x);
            b.advance(t, y);
            both.advance(t, x + y);
        }
        assert!((a.sum + b.sum - both.sum).abs() / both.sum < 1e-9);
    }

    #[test]
    fn advancing_together_is_advancing_each() {
        let (mut a, mut b, mut c) = (Signal::default(), Signal::default(), Signal::default());
        let (mut x, mut y, mut z) = (a, b, c);
        let mut t = 0;
        for i in 0..3000u64 {
            t += [1, 777, 123_457, 2_000_000, 40_000_000][(i % 5) as usize] + i;
            let act = [(i % 3) as f64 * 1024.0, (i % 2) as f64, -((i % 7) as f64)];
            a.advance(t, act[0]);
            b.advance(t, act[1]);
            c.advance(t, act[2]);
            Signal::advance_all([&mut x, &mut y, &mut z], t, act);
            assert_eq!((a, b, c), (x, y, z));
        }
    }

    #[test]
    fn half_active_is_about_half() {
        let mut s = Signal::default();
        let mut t = 0;
        for i in 0..4000 {
            t += 500_000;
            s.advance(t, if i % 2 == 0 { 1.0 } else { 0.0 });
        }
        assert!((s.avg() - 0.5).abs() < 0.02, "{}", s.avg());
    }
}
