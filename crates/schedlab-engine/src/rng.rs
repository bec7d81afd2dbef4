//! Seeded randomness: one named stream per purpose and run, derived from the run seed.
//!
//! Streams are derived with SplitMix64 over `(run seed, stream id)`, so adding a new consumer
//! of randomness never perturbs the numbers another stream sees, and results do not depend
//! on thread count or machine. Transcendental functions come from the pure-Rust `libm` so
//! that sampled values are bit-identical on every platform.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The generator used everywhere in the simulator (named, never `StdRng`).
pub type SimRng = Xoshiro256PlusPlus;

/// SplitMix64 finaliser: a good 64-bit mixer for deriving seeds.
pub fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Derives a child seed from a parent seed and a label (e.g. repetition index).
pub fn derive_seed(parent: u64, label: u64) -> u64 {
    splitmix64(splitmix64(parent) ^ splitmix64(label.wrapping_add(0x5EED)))
}

/// Purposes that own a random stream within one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum Stream {
    /// Durations of compute bursts, sleeps and message sizes in workloads.
    Workload = 1,
    /// Randomness a placement policy uses (e.g. the `random` policy).
    Policy = 2,
    /// Jitter in the machine (timer slack, tie breaks).
    Machine = 3,
}

/// A generator for `stream` within a run seeded with `seed`.
pub fn stream(seed: u64, which: Stream) -> SimRng {
    SimRng::seed_from_u64(derive_seed(seed, which as u64))
}

/// A uniform float in [0, 1) with 53 bits of randomness.
pub fn unit_f64(rng: &mut SimRng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_and_repeat() {
        let mut a = stream(42, Stream::Workload);
        let mut b = stream(42, Stream::Policy);
        let mut a2 = stream(42, Stream::Workload);
        let x = a.next_u64();
        assert_ne!(x, b.next_u64());
        assert_eq!(x, a2.next_u64());
    }
}
