//! Latency histograms (wake-up latency, request latency) that can be merged exactly across
//! repetitions and across the shards of a distributed sweep.
//!
//! A [`LatencyHistogram`] is an HdrHistogram of nanoseconds from 1 ns to 60 s with three
//! significant digits: every recorded value is kept to within 0.1 % (one part in 1000 of its own
//! magnitude), in a fixed few-hundred-KiB table whatever the number of samples. Percentiles of
//! several runs are computed by merging their histograms, never by averaging their percentiles.
//!
//! ```text
//!   shard 1 ── record() ──► hist ── to_base64() ──► "HISTFAAAA..." ─┐
//!   shard 2 ── record() ──► hist ── to_base64() ──► "HISTFAAAA..." ─┼─ from_base64() + merge()
//!   shard N ── ...                                                  ─┘        = one exact histogram
//! ```
//!
//! The text form is HdrHistogram's standard V2 + deflate encoding in base64 (the same bytes the
//! Java/C/Go HdrHistogram libraries and `HistogramLogProcessor` read), and it is also what serde
//! writes for a histogram, so JSONL shard records carry it as a plain string.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use flate2::read::ZlibDecoder;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{
    DeserializeError, Deserializer, Serializer, V2DeflateSerializeError, V2DeflateSerializer,
};
use serde::{Deserialize, Serialize};
use std::io::Read;

/// Smallest distinguishable latency, in ns. Recording `0` is allowed and kept as `0`.
pub const LOWEST_NS: u64 = 1;
/// Largest trackable latency, in ns (60 s); larger values are clamped to it.
pub const HIGHEST_NS: u64 = 60_000_000_000;
/// Significant decimal digits kept for every value.
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// Why a serialized histogram could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HistError {
    /// The text is not base64.
    #[error(
        "latency histogram text ({len} chars, starting {start:?}) is not valid base64: {source}"
    )]
    Base64 {
        /// Length of the offending text.
        len: usize,
        /// Its first characters, to recognise it in a file.
        start: String,
        /// The decoder's complaint (it names the offset of the bad byte).
        #[source]
        source: base64::DecodeError,
    },
    /// The bytes are not an HdrHistogram V2 (optionally deflated) encoding.
    #[error(
        "latency histogram ({len} bytes after base64) is not an HdrHistogram V2 encoding: {source}"
    )]
    Decode {
        /// Number of decoded bytes.
        len: usize,
        /// The HdrHistogram decoder's complaint.
        #[source]
        source: DeserializeError,
    },
    /// The bytes are not a well-formed HdrHistogram V2 encoding.
    #[error("latency histogram ({len} bytes after base64) is malformed: {what}")]
    Malformed {
        /// Number of decoded bytes.
        len: usize,
        /// What is wrong with them.
        what: &'static str,
    },
    /// A valid encoding followed by extra bytes (e.g. two histograms concatenated).
    #[error("latency histogram encoding has {extra} unexpected trailing bytes (of {len})")]
    TrailingBytes {
        /// Bytes left after the histogram.
        extra: usize,
        /// Total decoded bytes.
        len: usize,
    },
    /// A valid histogram with other bounds or precision, which could not be merged exactly.
    #[error(
        "latency histogram has range {low}..={high} ns with {sigfig} significant digits; \
         schedlab uses {LOWEST_NS}..={HIGHEST_NS} ns with {SIGNIFICANT_DIGITS}"
    )]
    Config {
        /// Its lowest discernible value.
        low: u64,
        /// Its highest trackable value.
        high: u64,
        /// Its significant digits.
        sigfig: u32,
    },
    /// Encoding failed (only possible when a bucket count exceeds `i64::MAX`).
    #[error("cannot encode latency histogram with {count} samples: {source}")]
    Encode {
        /// Total samples in the histogram.
        count: u64,
        /// The encoder's complaint.
        #[source]
        source: V2DeflateSerializeError,
    },
}

/// A mergeable, serializable histogram of latencies in nanoseconds (1 ns .. 60 s, 3 significant
/// digits). Recording never fails: out-of-range values are clamped.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    inner: Histogram<u64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl PartialEq for LatencyHistogram {
    /// Same bucket counts (hence same percentiles, mean, min and max).
    fn eq(&self, other: &Self) -> bool {
        self.inner == other.inner
    }
}

impl LatencyHistogram {
    /// An empty histogram with schedlab's fixed bounds, so any two can be merged exactly.
    pub fn new() -> Self {
        let inner = Histogram::new_with_bounds(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
            .expect("constant histogram bounds are valid (covered by unit tests)");
        Self { inner }
    }

    /// Records one latency. Values above [`HIGHEST_NS`] are clamped to it; never panics.
    pub fn record(&mut self, ns: u64) {
        self.record_n(ns, 1);
    }

    /// Records `count` occurrences of a latency (clamped like [`record`](Self::record); counts
    /// saturate at `u64::MAX`).
    pub fn record_n(&mut self, ns: u64, count: u64) {
        if count > 0 {
            self.inner.saturating_record_n(ns.min(HIGHEST_NS), count);
        }
    }

    /// Number of recorded samples.
    pub fn count(&self) -> u64 {
        self.inner.len()
    }

    /// Whether nothing has been recorded.
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// Mean latency in ns (each sample counted at the midpoint of its bucket); `0.0` when empty.
    pub fn mean(&self) -> f64 {
        self.inner.mean()
    }

    /// Standard deviation in ns (population, like HdrHistogram); `0.0` when empty.
    pub fn stddev(&self) -> f64 {
        self.inner.stdev()
    }

    /// Smallest recorded latency (lowest value of its bucket); `0` when empty.
    pub fn min(&self) -> u64 {
        if self.is_empty() { 0 } else { self.inner.min() }
    }

    /// Largest recorded latency (highest value of its bucket, so up to 0.1 % above the value
    /// recorded); `0` when empty.
    pub fn max(&self) -> u64 {
        if self.is_empty() { 0 } else { self.inner.max() }
    }

    /// The latency at percentile `q` (`0..=100`, clamped; `NaN` counts as 0): the highest value
    /// of the bucket holding the `k`-th smallest sample, `k = ceil(q · count / 100)` (at least
    /// 1), i.e. at least `q` % of samples are at or below it. `percentile(0.0)` is the minimum;
    /// `0` when empty.
    ///
    /// `k` is computed as `q · count / 100` rather than through the quantile `q / 100` (as
    /// `Histogram::value_at_percentile` does), so that e.g. p99.9 of 1000 samples is the 999th
    /// sample and not, through `99.9 / 100 = 0.9990000000000001`, the 1000th.
    pub fn percentile(&self, q: f64) -> u64 {
        if self.is_empty() {
            return 0;
        }
        let q = if q.is_nan() { 0.0 } else { q.clamp(0.0, 100.0) };
        if q == 0.0 {
            return self.min();
        }
        let count = self.count();
        // Saturating float-to-int conversion; the result is in 1..=count.
        let k = ((q * count as f64 / 100.0).ceil() as u64).clamp(1, count);
        let mut seen = 0u64;
        for v in self.inner.iter_recorded() {
            seen = seen.saturating_add(v.count_at_value());
            if seen >= k {
                return self.inner.highest_equivalent(v.value_iterated_to());
            }
        }
        self.max()
    }

    /// Adds every sample of `other` to `self`, exactly as if they had been recorded here.
    pub fn merge(&mut self, other: &Self) {
        if self.inner.add(&other.inner).is_err() {
            // Unreachable while both have the fixed bounds that every constructor enforces;
            // fall back to re-recording (clamped) rather than losing samples or panicking.
            for v in other.inner.iter_recorded() {
                self.record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
    }

    /// Read-only access to the underlying HdrHistogram, for iteration and export.
    pub fn as_hdr(&self) -> &Histogram<u64> {
        &self.inner
    }

    /// The base64 text of the V2 + deflate encoding; fails only if a bucket count exceeds
    /// `i64::MAX`, which recording one sample at a time cannot reach.
    pub fn try_to_base64(&self) -> Result<String, HistError> {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&self.inner, &mut bytes)
            .map_err(|source| HistError::Encode {
                count: self.count(),
                source,
            })?;
        Ok(BASE64.encode(bytes))
    }

    /// The base64 text of the V2 + deflate encoding, for shard files and JSON.
    ///
    /// # Panics
    ///
    /// Only if a single bucket holds more than `i64::MAX` samples (see
    /// [`try_to_base64`](Self::try_to_base64) to handle that case).
    pub fn to_base64(&self) -> String {
        self.try_to_base64()
            .expect("bucket counts above i64::MAX cannot be produced by recording")
    }

    /// Parses the text written by [`to_base64`](Self::to_base64) (or any HdrHistogram V2 or V2 +
    /// deflate encoding with schedlab's bounds). Surrounding whitespace is ignored.
    ///
    /// The input is treated as untrusted: lengths and bounds in the headers are checked before
    /// anything is allocated from them, and inflation is capped, so a corrupt or hostile shard
    /// file yields an error rather than a huge allocation or a panic.
    pub fn from_base64(text: &str) -> Result<Self, HistError> {
        let text = text.trim();
        let bytes = BASE64.decode(text).map_err(|source| HistError::Base64 {
            len: text.len(),
            start: text.chars().take(16).collect(),
            source,
        })?;
        Self::from_v2_bytes(&bytes)
    }

    /// Parses a binary HdrHistogram V2 or V2 + deflate encoding; see
    /// [`from_base64`](Self::from_base64).
    pub fn from_v2_bytes(bytes: &[u8]) -> Result<Self, HistError> {
        let malformed = |what: &'static str| HistError::Malformed {
            len: bytes.len(),
            what,
        };
        let inflated;
        let v2: &[u8] = match be_u32(bytes, 0) {
            Some(V2_DEFLATE_COOKIE) => {
                let payload_len = be_u32(bytes, 4).ok_or(malformed("truncated header"))?;
                let payload = &bytes[8..];
                check_len(payload.len(), payload_len, bytes.len())?;
                let mut out = Vec::new();
                ZlibDecoder::new(payload)
                    .take(MAX_V2_BYTES + 1)
                    .read_to_end(&mut out)
                    .map_err(|_| malformed("corrupt deflate stream"))?;
                if out.len() as u64 > MAX_V2_BYTES {
                    return Err(malformed("inflates beyond any schedlab histogram"));
                }
                inflated = out;
                &inflated
            }
            Some(V2_COOKIE) => bytes,
            Some(_) => {
                return Err(malformed(
                    "unknown cookie (not an HdrHistogram V2 encoding)",
                ));
            }
            None => return Err(malformed("truncated header")),
        };
        // V2 header: cookie, payload length, normalizing offset, significant digits (u32 each),
        // lowest and highest value (u64 each), integer-to-double ratio (f64), then the payload.
        if be_u32(v2, 0) != Some(V2_COOKIE) || v2.len() < V2_HEADER_BYTES {
            return Err(malformed("truncated or mislabelled V2 header"));
        }
        let payload_len = be_u32(v2, 4).ok_or(malformed("truncated header"))?;
        check_len(v2.len() - V2_HEADER_BYTES, payload_len, v2.len())?;
        let sigfig = be_u32(v2, 12).ok_or(malformed("truncated header"))?;
        let low = be_u64(v2, 16).ok_or(malformed("truncated header"))?;
        let high = be_u64(v2, 24).ok_or(malformed("truncated header"))?;
        if low != LOWEST_NS || high != HIGHEST_NS || sigfig != u32::from(SIGNIFICANT_DIGITS) {
            return Err(HistError::Config { low, high, sigfig });
        }
        let mut cursor = v2;
        let inner: Histogram<u64> =
            Deserializer::new()
                .deserialize(&mut cursor)
                .map_err(|source| HistError::Decode {
                    len: bytes.len(),
                    source,
                })?;
        Ok(Self { inner })
    }
}

/// Cookie of an uncompressed V2 encoding with 64-bit counts, as written by every HdrHistogram
/// library.
const V2_COOKIE: u32 = 0x1c84_9313;
/// Cookie of a deflate-compressed V2 encoding.
const V2_DEFLATE_COOKIE: u32 = 0x1c84_9314;
/// Size of the uncompressed V2 header.
const V2_HEADER_BYTES: usize = 40;
/// Upper bound on a legitimate inflated encoding: about 28 000 buckets for 1 ns..60 s at 3
/// digits, at most 9 bytes each as varints, plus the header; 1 MiB leaves ample room.
const MAX_V2_BYTES: u64 = 1 << 20;

fn be_u32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 4)?;
    Some(u32::from_be_bytes(s.try_into().ok()?))
}

fn be_u64(b: &[u8], at: usize) -> Option<u64> {
    let s = b.get(at..at + 8)?;
    Some(u64::from_be_bytes(s.try_into().ok()?))
}

/// Checks that the bytes after a header are exactly the declared payload.
fn check_len(actual: usize, declared: u32, total: usize) -> Result<(), HistError> {
    match usize::try_from(declared) {
        Ok(d) if d == actual => Ok(()),
        Ok(d) if d < actual => Err(HistError::TrailingBytes {
            extra: actual - d,
            len: total,
        }),
        _ => Err(HistError::Malformed {
            len: total,
            what: "declared payload longer than the data",
        }),
    }
}

impl Serialize for LatencyHistogram {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let text = self.try_to_base64().map_err(serde::ser::Error::custom)?;
        serializer.serialize_str(&text)
    }
}

impl<'de> Deserialize<'de> for LatencyHistogram {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::from_base64(&text).map_err(serde::de::Error::custom)
    }
}
