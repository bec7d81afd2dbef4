//! The units and ranges of the tunable switches (`name=value`): each tunable row of
//! [`crate::switches`] carries one, parsing refuses a value outside it with an error that
//! names the tunable and its range, and docs/policies/switches.md lists them (generated).
//! Bounds come from the kernel's sysctl limits where it has them; elsewhere a stated bound
//! keeps the model's arithmetic sound (no overflow converting jiffies to nanoseconds, no
//! slice so long that a lag limit wraps).

/// The values a tunable accepts: its unit and bounds, from the kernel's sysctl limits where
/// it has them, else a stated bound that keeps the model's arithmetic sound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    /// The smallest value accepted.
    pub min: u64,
    /// The largest value accepted.
    pub max: u64,
    /// `ns`, `jiffies`, `percent`, ...
    pub unit: &'static str,
    /// Where the bounds come from.
    pub source: &'static str,
}

impl Range {
    /// `Ok` inside the range; outside, the reason naming it.
    pub(crate) fn check(&self, v: u64) -> Result<(), String> {
        if (self.min..=self.max).contains(&v) {
            Ok(())
        } else {
            Err(format!("out of range: must be {}", self.describe()))
        }
    }

    /// `100000 to 1000000000 ns`.
    pub fn describe(&self) -> String {
        format!("{} to {} {}", self.min, self.max, self.unit)
    }
}

/// Nanoseconds between 100 µs and 1 s: the kernel's sysctl limits on the CFS latency and
/// granularity tunables (`min_sched_granularity_ns`, `max_sched_granularity_ns`, until 5.12;
/// 5.13 moved them to debugfs without limits).
pub(crate) const GRANULARITY_NS: Range = Range {
    min: 100_000,
    max: 1_000_000_000,
    unit: "ns",
    source: "the kernel's sysctl limits (100 us to 1 s)",
};
/// A multiple of a balancer interval: at least 1; at most 10^4.
pub(crate) const MULT: Range = Range {
    min: 1,
    max: 10_000,
    unit: "x the tick",
    source: "stated bound: at least 1, at most 10^4",
};
/// Jiffies of the O(1) balancer's intervals: at least one tick; at most a million (100 s
/// even at the highest HZ accepted), so that converting to nanoseconds cannot overflow.
pub(crate) const TICKS: Range = Range {
    min: 1,
    max: 1_000_000,
    unit: "jiffies",
    source: "stated bound: at least one tick, at most 10^6",
};
/// A count that must be at least 1 and fit the kernel's `unsigned int`.
pub(crate) const fn count(unit: &'static str) -> Range {
    Range {
        min: 1,
        max: u32::MAX as u64,
        unit,
        source: "the kernel's unsigned int, at least 1",
    }
}

#[cfg(test)]
mod tests;
