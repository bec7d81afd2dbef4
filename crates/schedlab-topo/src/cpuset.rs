//! A fixed-capacity CPU bitmask, the simulator's `cpumask`.
//!
//! Dense, allocation-free after construction, and iterated in CPU-id order, so every scan
//! over it is deterministic. `iter_wrap(start)` gives the kernel's ring order
//! (`for_each_cpu_wrap`), which matters because idle scans are first-fit.

use std::fmt;

/// Dense CPU index. The kernel's own CPU numbering is kept: CPU `i` here is CPU `i` there.
///
/// A newtype so a CPU cannot be passed where a task, node, LLC or count is meant; per-CPU
/// `Vec`s and slices are indexed by it directly (`rqs[cpu]`). It prints, and serializes, as
/// the bare number.
#[derive(
    Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
#[repr(transparent)]
pub struct CpuId(usize);

impl CpuId {
    /// CPU `i`.
    #[inline]
    pub const fn new(i: usize) -> Self {
        CpuId(i)
    }

    /// The CPU number, as an index into per-CPU tables.
    #[inline]
    pub const fn index(self) -> usize {
        self.0
    }

    /// The CPU numbered one above: where a ring scan that begins after `self` starts (the
    /// kernel's `for_each_cpu_wrap(cpu, mask, target + 1)`); [`CpuSet::iter_wrap`] wraps it.
    #[inline]
    pub const fn after(self) -> Self {
        CpuId(self.0 + 1)
    }

    /// CPUs `0..nr_cpus` in order: the loop over a machine's CPUs.
    #[inline]
    pub fn range(nr_cpus: usize) -> CpuRange {
        CpuRange(0..nr_cpus)
    }

    /// The CPUs `self..end` in order (`end` exclusive).
    #[inline]
    pub fn up_to(self, end: CpuId) -> CpuRange {
        CpuRange(self.0..end.0)
    }
}

/// The iterator of [`CpuId::range`]: a `Range<usize>` that yields [`CpuId`]s (double-ended,
/// exact size).
#[derive(Clone, Debug)]
pub struct CpuRange(std::ops::Range<usize>);

impl Iterator for CpuRange {
    type Item = CpuId;
    #[inline]
    fn next(&mut self) -> Option<CpuId> {
        self.0.next().map(CpuId)
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
    #[inline]
    fn nth(&mut self, n: usize) -> Option<CpuId> {
        self.0.nth(n).map(CpuId)
    }
}

impl DoubleEndedIterator for CpuRange {
    #[inline]
    fn next_back(&mut self) -> Option<CpuId> {
        self.0.next_back().map(CpuId)
    }
}

impl ExactSizeIterator for CpuRange {}
impl std::iter::FusedIterator for CpuRange {}

impl From<usize> for CpuId {
    #[inline]
    fn from(i: usize) -> Self {
        CpuId(i)
    }
}

impl From<CpuId> for usize {
    #[inline]
    fn from(c: CpuId) -> usize {
        c.0
    }
}

/// The bare number, as the `usize` alias printed (messages and `{:?}` output keep their text).
impl fmt::Debug for CpuId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for CpuId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl<T> std::ops::Index<CpuId> for [T] {
    type Output = T;
    #[inline]
    fn index(&self, c: CpuId) -> &T {
        &self[c.0]
    }
}

impl<T> std::ops::IndexMut<CpuId> for [T] {
    #[inline]
    fn index_mut(&mut self, c: CpuId) -> &mut T {
        &mut self[c.0]
    }
}

impl<T> std::ops::Index<CpuId> for Vec<T> {
    type Output = T;
    #[inline]
    fn index(&self, c: CpuId) -> &T {
        &self[c.0]
    }
}

impl<T> std::ops::IndexMut<CpuId> for Vec<T> {
    #[inline]
    fn index_mut(&mut self, c: CpuId) -> &mut T {
        &mut self[c.0]
    }
}

/// Words of the fixed-size mask: enough for [`crate::cpulist::MAX_CPUS`] CPUs. A fixed array
/// (not a `Vec`) makes sets free to create and clone on the wakeup path: no allocation.
const WORDS: usize = crate::cpulist::MAX_CPUS / 64;

/// A set of CPUs, stored as a bitmask of `nr_cpus` bits.
///
/// The length comes first (`repr(C)`): a membership test reads it and one word, which then
/// share a cache line for the first few hundred CPUs (each task holds one of these).
#[derive(Clone, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct CpuSet {
    nr_cpus: usize,
    words: [u64; WORDS],
}

impl Default for CpuSet {
    fn default() -> Self {
        CpuSet {
            words: [0; WORDS],
            nr_cpus: 0,
        }
    }
}

impl CpuSet {
    /// The empty set on a machine of `nr_cpus` CPUs.
    pub fn new(nr_cpus: usize) -> Self {
        assert!(
            nr_cpus <= WORDS * 64,
            "a {nr_cpus}-CPU set is beyond the supported maximum (callers validate machine size)"
        );
        CpuSet {
            words: [0; WORDS],
            nr_cpus,
        }
    }

    /// The words in use.
    #[inline]
    fn used(&self) -> &[u64] {
        &self.words[..self.nr_cpus.div_ceil(64)]
    }

    /// All CPUs `0..nr_cpus`.
    pub fn full(nr_cpus: usize) -> Self {
        Self::from_cpus(nr_cpus, CpuId::range(nr_cpus))
    }

    /// The set holding the given CPUs.
    pub fn from_cpus(nr_cpus: usize, cpus: impl IntoIterator<Item = CpuId>) -> Self {
        let mut s = Self::new(nr_cpus);
        for c in cpus {
            s.insert(c);
        }
        s
    }

    /// Capacity in CPUs (the machine size, not the number of members).
    pub fn nr_cpus(&self) -> usize {
        self.nr_cpus
    }

    /// Adds `cpu`. Panics if it is outside the machine (a bug, not an input error).
    #[inline]
    pub fn insert(&mut self, cpu: CpuId) {
        let cpu = cpu.0;
        assert!(
            cpu < self.nr_cpus,
            "cpu {cpu} outside a {}-cpu set",
            self.nr_cpus
        );
        self.words[cpu / 64] |= 1u64 << (cpu % 64);
    }

    /// Removes `cpu`.
    #[inline]
    pub fn remove(&mut self, cpu: CpuId) {
        let cpu = cpu.0;
        if cpu < self.nr_cpus {
            self.words[cpu / 64] &= !(1u64 << (cpu % 64));
        }
    }

    /// Whether `cpu` is a member.
    #[inline]
    pub fn contains(&self, cpu: CpuId) -> bool {
        let cpu = cpu.0;
        cpu < self.nr_cpus && self.words[cpu / 64] & (1u64 << (cpu % 64)) != 0
    }

    /// Number of members (`cpumask_weight`).
    pub fn count(&self) -> usize {
        self.used().iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set has no member.
    pub fn is_empty(&self) -> bool {
        self.used().iter().all(|&w| w == 0)
    }

    /// Lowest member.
    pub fn first(&self) -> Option<CpuId> {
        self.iter().next()
    }

    /// Members in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = CpuId> + '_ {
        self.used().iter().enumerate().flat_map(|(wi, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(CpuId(wi * 64 + b))
            })
        })
    }

    /// Members in ring order starting at `start` (inclusive) and wrapping, like the
    /// kernel's `for_each_cpu_wrap`.
    pub fn iter_wrap(&self, start: CpuId) -> WrapIter<'_> {
        let start = if self.nr_cpus == 0 {
            0
        } else {
            start.0 % self.nr_cpus
        };
        let words = self.used();
        let (wi, bit) = (start / 64, start % 64);
        let first = words.get(wi).map_or(0, |w| w & (!0u64 << bit));
        WrapIter {
            words,
            start,
            wi,
            cur: first,
            wrapped: false,
        }
    }

    /// Set intersection.
    pub fn and(&self, other: &CpuSet) -> CpuSet {
        let mut r = self.clone();
        r.and_assign(other);
        r
    }

    /// In-place intersection.
    pub fn and_assign(&mut self, other: &CpuSet) {
        for (a, b) in self.words[..WORDS.min(self.nr_cpus.div_ceil(64))]
            .iter_mut()
            .zip(other.used().iter())
        {
            *a &= *b;
        }
    }

    /// Set union.
    pub fn or(&self, other: &CpuSet) -> CpuSet {
        let mut r = self.clone();
        r.or_assign(other);
        r
    }

    /// In-place union.
    pub fn or_assign(&mut self, other: &CpuSet) {
        for (a, b) in self.words[..WORDS.min(self.nr_cpus.div_ceil(64))]
            .iter_mut()
            .zip(other.used().iter())
        {
            *a |= *b;
        }
    }

    /// In-place difference.
    pub fn andnot_assign(&mut self, other: &CpuSet) {
        for (a, b) in self.words[..WORDS.min(self.nr_cpus.div_ceil(64))]
            .iter_mut()
            .zip(other.used().iter())
        {
            *a &= !*b;
        }
    }

    /// Whether the two sets share a member.
    pub fn intersects(&self, other: &CpuSet) -> bool {
        self.words
            .iter()
            .zip(other.used().iter())
            .any(|(a, b)| a & b != 0)
    }

    /// Whether every member of `self` is in `other`.
    pub fn is_subset(&self, other: &CpuSet) -> bool {
        self.words
            .iter()
            .zip(other.used().iter())
            .all(|(a, b)| a & !b == 0)
    }

    /// The CPUs as plain indices, lowest first: what JSON output and assertions compare.
    pub fn indices(&self) -> Vec<usize> {
        self.iter().map(CpuId::index).collect()
    }

    /// The kernel's cpulist form, e.g. `0-9,20-29`.
    pub fn to_list_string(&self) -> String {
        let mut out = String::new();
        let mut it = self.iter().peekable();
        while let Some(lo) = it.next() {
            let mut hi = lo;
            while it.peek() == Some(&CpuId(hi.0 + 1)) {
                hi = it.next().unwrap_or(hi);
            }
            if !out.is_empty() {
                out.push(',');
            }
            if lo == hi {
                out.push_str(&lo.to_string());
            } else {
                out.push_str(&format!("{lo}-{hi}"));
            }
        }
        out
    }
}

/// Ring-order iterator of [`CpuSet::iter_wrap`]: from `start` up, then from 0 below it,
/// word by word without allocating.
pub struct WrapIter<'a> {
    words: &'a [u64],
    start: usize,
    wi: usize,
    cur: u64,
    wrapped: bool,
}

impl Iterator for WrapIter<'_> {
    type Item = CpuId;

    #[inline]
    fn next(&mut self) -> Option<CpuId> {
        loop {
            if self.cur != 0 {
                let b = self.cur.trailing_zeros() as usize;
                self.cur &= self.cur - 1;
                let c = self.wi * 64 + b;
                if self.wrapped && c >= self.start {
                    return None;
                }
                return Some(CpuId(c));
            }
            self.wi += 1;
            if self.wi >= self.words.len() {
                if self.wrapped {
                    return None;
                }
                self.wrapped = true;
                self.wi = 0;
            } else if self.wrapped && self.wi * 64 > self.start {
                return None;
            }
            self.cur = self.words[self.wi];
        }
    }
}

impl fmt::Debug for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{}}}", self.to_list_string())
    }
}

impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_list_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn wrap_order_matches_the_naive_definition(
            n in 1usize..300,
            bits in proptest::collection::vec(proptest::bool::ANY, 300),
            start in 0usize..600,
        ) {
            let s = CpuSet::from_cpus(n, CpuId::range(n).filter(|&c| bits[c.index()]));
            let st = CpuId::new(start % n);
            let naive: Vec<CpuId> = s.iter().filter(|&c| c >= st).chain(s.iter().filter(|&c| c < st)).collect();
            proptest::prop_assert_eq!(s.iter_wrap(CpuId::new(start)).collect::<Vec<_>>(), naive);
        }
    }

    fn cpus<const N: usize>(ids: [usize; N]) -> [CpuId; N] {
        ids.map(CpuId::new)
    }

    fn ids(it: impl Iterator<Item = CpuId>) -> Vec<usize> {
        it.map(CpuId::index).collect()
    }

    #[test]
    fn wrap_order_starts_at_target() {
        let s = CpuSet::from_cpus(8, cpus([1, 3, 5, 7]));
        assert_eq!(ids(s.iter_wrap(CpuId::new(4))), vec![5, 7, 1, 3]);
        assert_eq!(ids(s.iter_wrap(CpuId::new(0))), vec![1, 3, 5, 7]);
    }

    #[test]
    fn cpu_ids_print_and_serialize_as_the_bare_number() {
        let c = CpuId::new(17);
        assert_eq!(format!("{c} {c:?} {:?}", [c]), "17 17 [17]");
        assert_eq!(serde_json::to_string(&[c]).unwrap(), "[17]");
        assert_eq!(serde_json::from_str::<CpuId>("17").unwrap(), c);
        assert_eq!(ids(CpuId::range(3).rev()), vec![2, 1, 0]);
        assert_eq!(CpuId::range(3).len(), 3);
        assert_eq!(ids(CpuId::new(2).up_to(CpuId::new(4))), vec![2, 3]);
        let mut v: Vec<char> = "ab".chars().collect();
        v[CpuId::new(0)] = 'c';
        assert_eq!((v[CpuId::new(0)], v.as_slice()[CpuId::new(1)]), ('c', 'b'));
        assert_eq!(CpuId::new(4).after(), CpuId::new(5));
    }

    #[test]
    fn list_string_compresses_ranges() {
        let s = CpuSet::from_cpus(130, cpus([0, 1, 2, 3, 5, 64, 65, 129]));
        assert_eq!(s.to_list_string(), "0-3,5,64-65,129");
        assert_eq!(s.count(), 8);
    }
}
