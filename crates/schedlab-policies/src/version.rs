//! Kernel versions, the unit every era rule is written in. A rule says which kernel release
//! introduced (or removed) a mechanism — `era.since(v(5, 13))`, `era.before(v26(33))` — and
//! not which modelled era has it, so a preset added between two existing ones gets what its
//! own kernel had instead of silently inheriting a neighbour's behaviour.

use std::fmt;

/// A kernel release, `major.minor.patch` (`patch` is the third number of the 2.x series,
/// 2.6.32; 0 from 3.0 on). Ordered by release.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KernelVersion {
    /// 2, 3, 4, 5, 6.
    pub major: u8,
    /// 6 in 2.6.32, 13 in 5.13.
    pub minor: u8,
    /// 32 in 2.6.32; from 3.0 on 0, or a stable release's number (33 in 6.18.33).
    pub patch: u8,
}

impl KernelVersion {
    /// `major.minor.patch`.
    pub const fn new(major: u8, minor: u8, patch: u8) -> KernelVersion {
        KernelVersion {
            major,
            minor,
            patch,
        }
    }

    /// The release after this one: the next 2.x.y patch level in the 2.x series, the next
    /// minor from 3.0 on (for a stable release, the next mainline one).
    pub const fn next(self) -> KernelVersion {
        if self.major == 2 {
            KernelVersion::new(2, self.minor, self.patch + 1)
        } else {
            KernelVersion::new(self.major, self.minor + 1, 0)
        }
    }
}

impl fmt::Display for KernelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.major == 2 || self.patch > 0 {
            write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
        } else {
            write!(f, "{}.{}", self.major, self.minor)
        }
    }
}

/// Release `major.minor` (3.0 on), e.g. `v(5, 13)`.
pub const fn v(major: u8, minor: u8) -> KernelVersion {
    KernelVersion::new(major, minor, 0)
}

/// Stable release `major.minor.patch` (3.0 on), e.g. `stable(6, 18, 33)`: after
/// `v(major, minor)`, before the next mainline release. Only where a stable series took
/// backports that change what is modelled.
pub const fn stable(major: u8, minor: u8, patch: u8) -> KernelVersion {
    KernelVersion::new(major, minor, patch)
}

/// Release 2.6.`patch`, e.g. `v26(32)`.
pub const fn v26(patch: u8) -> KernelVersion {
    KernelVersion::new(2, 6, patch)
}

/// Release 2.5.`patch` (the development series of the O(1) NUMA balancer).
pub const fn v25(patch: u8) -> KernelVersion {
    KernelVersion::new(2, 5, patch)
}

/// The releases from `since` up to, not including, `before` (`None`: every later one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Versions {
    /// The first release with it.
    pub since: KernelVersion,
    /// The first release without it again; `None`: still there.
    pub before: Option<KernelVersion>,
}

impl Versions {
    /// Whether `k` lies in the range.
    pub fn contains(self, k: KernelVersion) -> bool {
        self.since <= k && self.before.is_none_or(|b| k < b)
    }
}

/// From `k` on (open-ended: later presets inherit it).
pub const fn since(k: KernelVersion) -> Versions {
    Versions {
        since: k,
        before: None,
    }
}

/// From `a` until, not including, `b` (removed in `b`, or debated against `a`..`b`).
pub const fn span(a: KernelVersion, b: KernelVersion) -> Versions {
    Versions {
        since: a,
        before: Some(b),
    }
}

/// Every release before `k` (a mechanism `k` removed).
pub const fn until(k: KernelVersion) -> Versions {
    span(KernelVersion::new(0, 0, 0), k)
}

/// In release `k` only.
pub const fn only(k: KernelVersion) -> Versions {
    span(k, k.next())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_order_by_release() {
        assert!(v26(35) < v(3, 0));
        assert!(v26(9) < v26(10));
        assert!(v(4, 14) < v(5, 0) && v(5, 13) < v(5, 16));
        assert!(v25(59) < v26(0));
        assert_eq!(v26(32).next(), v26(33));
        assert_eq!(v(4, 2).next(), v(4, 3));
        assert_eq!(format!("{} {}", v26(32), v(6, 12)), "2.6.32 6.12");
    }

    #[test]
    fn ranges_are_half_open() {
        let r = span(v(4, 13), v(6, 7));
        assert!(!r.contains(v(4, 12)) && r.contains(v(4, 13)) && r.contains(v(6, 6)));
        assert!(!r.contains(v(6, 7)));
        assert!(since(v(6, 0)).contains(v(9, 0)));
        assert!(only(v(4, 2)).contains(v(4, 2)) && !only(v(4, 2)).contains(v(4, 3)));
    }
}
