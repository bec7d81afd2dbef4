//! Simulated time: one notion, `u64` nanoseconds since the start of the run.

/// A point in simulated time, in nanoseconds since the run started.
pub type Time = u64;

/// Nanoseconds per microsecond.
pub const NSEC_PER_USEC: u64 = 1_000;
/// Nanoseconds per millisecond.
pub const NSEC_PER_MSEC: u64 = 1_000_000;
/// Nanoseconds per second.
pub const NSEC_PER_SEC: u64 = 1_000_000_000;
/// "No such time": a point that is never reached.
pub const NEVER: Time = u64::MAX;

/// 2^63 as an `f64` (exact): below it a value converts through `i64`, which baseline x86-64
/// does in one instruction; Rust's saturating `f64 as u64` is a longer sequence, and these
/// conversions run several times per simulated event.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// `ceil(max(x, 0))` as a `u64` (whole nanoseconds). Plain casts instead of `f64::ceil`, which on
/// baseline x86-64 (no SSE4.1) is a libm call, and this runs once per simulated event.
#[inline]
pub fn ceil_u64(x: f64) -> u64 {
    // NaN fails both comparisons.
    if x > 0.0 && x < TWO_POW_63 {
        let i = x as i64;
        return (if (i as f64) < x { i + 1 } else { i }) as u64;
    }
    if x.is_nan() || x <= 0.0 {
        return 0;
    }
    let i = x as u64;
    if (i as f64) < x {
        i.saturating_add(1)
    } else {
        i
    }
}

/// `round(max(x, 0))` (halves away from zero) as a `u64` (nanoseconds, PELT loads), without
/// a libm call.
#[inline]
pub fn round_u64(x: f64) -> u64 {
    if x > 0.0 && x < TWO_POW_63 {
        let i = x as i64;
        return (if x - i as f64 >= 0.5 { i + 1 } else { i }) as u64;
    }
    if x.is_nan() || x <= 0.0 {
        return 0;
    }
    let i = x as u64;
    if x - i as f64 >= 0.5 {
        i.saturating_add(1)
    } else {
        i
    }
}

/// Durations are read by the workspace's one parser (`schedlab_vocab::units`); re-exported
/// here for the engine's callers.
pub use schedlab_vocab::parse_duration;

/// Formats nanoseconds for humans (`1.234 ms`).
pub fn fmt_ns(ns: u64) -> String {
    if ns >= NSEC_PER_SEC {
        format!("{:.3} s", ns as f64 / 1e9)
    } else if ns >= NSEC_PER_MSEC {
        format!("{:.3} ms", ns as f64 / 1e6)
    } else if ns >= NSEC_PER_USEC {
        format!("{:.3} us", ns as f64 / 1e3)
    } else {
        format!("{ns} ns")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ceil_and_round_match_the_float_functions() {
        for &x in &[
            0.0,
            0.2,
            0.5,
            0.7,
            1.0,
            1.5,
            2.4999,
            2.5,
            1e6 + 0.25,
            123456789.99,
            -3.0,
            // Around the i64 fast path's edge (2^63) and beyond it.
            9.223372036854774e18,
            super::TWO_POW_63,
            1.8e19,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let want_ceil = f64::ceil(f64::max(x, 0.0)) as u64;
            let want_round = f64::round(f64::max(x, 0.0)) as u64;
            assert_eq!(super::ceil_u64(x), want_ceil, "ceil {x}");
            assert_eq!(super::round_u64(x), want_round, "round {x}");
        }
        assert_eq!(super::ceil_u64(f64::NAN), 0);
        assert_eq!(super::round_u64(f64::NAN), 0);
    }

    proptest::proptest! {
        /// The fast paths agree with the plain casts and float functions everywhere.
        #[test]
        fn fast_conversions_equal_the_plain_ones(bits in proptest::prelude::any::<u64>()) {
            let f = f64::from_bits(bits);
            let want_ceil = if f.is_nan() { 0 } else { f64::ceil(f64::max(f, 0.0)) as u64 };
            let want_round = if f.is_nan() { 0 } else { f64::round(f64::max(f, 0.0)) as u64 };
            proptest::prop_assert_eq!(super::ceil_u64(f), want_ceil);
            proptest::prop_assert_eq!(super::round_u64(f), want_round);
        }
    }

    use super::*;

    #[test]
    fn durations_need_units() {
        assert_eq!(parse_duration("100us"), Ok(100_000));
        assert_eq!(parse_duration("2.5ms"), Ok(2_500_000));
        assert_eq!(parse_duration("2s"), Ok(2_000_000_000));
        assert!(parse_duration("100").is_err());
        assert!(parse_duration("-1ms").is_err());
        assert!(parse_duration("fast").is_err());
    }
}
