//! Parsing the kernel's list notation (`0-3,8,10-11`) and whitespace-separated lists
//! (`0 1 2 3`, as `numactl --hardware` prints them).
//!
//! The notation names CPUs (sysfs `cpulist` files, `Cpus_allowed_list`, a task's `cpus`)
//! and other ids too (the node list of `numactl --hardware`'s `available:` line), so the
//! plain parsers ([`parse_id_list`], [`parse_id_words`]) return bare `usize` ids and the CPU
//! ones ([`parse_cpu_list`], [`parse_cpu_words`]) wrap them as [`CpuId`]s.
//!
//! Both forms are strict: an id named twice is an error rather than silently merged,
//! because an overlap in a machine description almost always means a typo.

use crate::cpuset::CpuId;

/// The largest machine schedlab accepts, in CPUs. Ids at or above it are rejected while
/// parsing, so that a typo (`4000000000`) becomes an error instead of a giant allocation.
/// Per-CPU domain groups grow as O(CPUs × LLC size), which is what bounds this.
pub const MAX_CPUS: usize = 1024;

/// Why a CPU list (or another id list) did not parse. The messages name CPUs; a file
/// parser reporting on a list of other ids words its error with that list's noun.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CpuListError {
    /// A token is not a number or a `lo-hi` range.
    #[error("expected a CPU number or range like 4-7, found '{0}'")]
    BadToken(String),
    /// A range runs backwards.
    #[error("range '{0}' runs backwards")]
    Backwards(String),
    /// A CPU id is too large.
    #[error("CPU {0} is beyond the supported maximum of {max} CPUs", max = MAX_CPUS)]
    TooLarge(usize),
    /// A CPU appears twice.
    #[error("CPU {0} is listed more than once")]
    Duplicate(usize),
}

impl CpuListError {
    /// Splits the error into "expected ..." and "found ..." phrases for a file error;
    /// `syntax` says what a well-formed list looks like in that file and `noun` what its
    /// ids are (`"CPU"`, `"node"`).
    pub(crate) fn expected_found(&self, syntax: &str, noun: &str) -> (String, String) {
        match self {
            CpuListError::BadToken(t) => (syntax.to_string(), format!("'{t}'")),
            CpuListError::Backwards(r) => (syntax.to_string(), format!("backwards range '{r}'")),
            CpuListError::TooLarge(v) => (
                format!("{noun} ids below {MAX_CPUS}"),
                format!("{noun} {v}"),
            ),
            CpuListError::Duplicate(c) => (
                format!("each {noun} listed once"),
                format!("{noun} {c} twice"),
            ),
        }
    }
}

fn parse_id(tok: &str, whole: &str) -> Result<usize, CpuListError> {
    let t = tok.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(CpuListError::BadToken(whole.to_string()));
    }
    let v: usize = t.parse().map_err(|_| CpuListError::TooLarge(usize::MAX))?;
    if v >= MAX_CPUS {
        return Err(CpuListError::TooLarge(v));
    }
    Ok(v)
}

fn push_unique(out: &mut Vec<usize>, seen: &mut [bool], id: usize) -> Result<(), CpuListError> {
    if seen[id] {
        return Err(CpuListError::Duplicate(id));
    }
    seen[id] = true;
    out.push(id);
    Ok(())
}

/// Parses the kernel's list form (`0-3,8,10-11`; an empty string is the empty list) of
/// ids that are not CPUs (nodes, ...). Returns the ids sorted ascending, each below
/// [`MAX_CPUS`].
pub fn parse_id_list(text: &str) -> Result<Vec<usize>, CpuListError> {
    let mut out = Vec::new();
    let mut seen = vec![false; MAX_CPUS];
    let text = text.trim();
    if text.is_empty() {
        return Ok(out);
    }
    for part in text.split(',') {
        let part = part.trim();
        if let Some((lo, hi)) = part.split_once('-') {
            let (lo, hi) = (parse_id(lo, part)?, parse_id(hi, part)?);
            if lo > hi {
                return Err(CpuListError::Backwards(part.to_string()));
            }
            for c in lo..=hi {
                push_unique(&mut out, &mut seen, c)?;
            }
        } else {
            push_unique(&mut out, &mut seen, parse_id(part, part)?)?;
        }
    }
    out.sort_unstable();
    Ok(out)
}

/// Parses a whitespace-separated list of ids (`0 1 2 20 21`). Returns them sorted
/// ascending, each below [`MAX_CPUS`].
pub fn parse_id_words(text: &str) -> Result<Vec<usize>, CpuListError> {
    let mut out = Vec::new();
    let mut seen = vec![false; MAX_CPUS];
    for w in text.split_whitespace() {
        push_unique(&mut out, &mut seen, parse_id(w, w)?)?;
    }
    out.sort_unstable();
    Ok(out)
}

/// Parses the kernel's cpulist form (`0-3,8,10-11`; an empty string is the empty list).
/// Returns the CPUs sorted ascending.
pub fn parse_cpu_list(text: &str) -> Result<Vec<CpuId>, CpuListError> {
    Ok(parse_id_list(text)?.into_iter().map(CpuId::from).collect())
}

/// Parses a whitespace-separated list of CPU numbers (`0 1 2 20 21`), as printed by
/// `numactl --hardware`. Returns the CPUs sorted ascending.
pub fn parse_cpu_words(text: &str) -> Result<Vec<CpuId>, CpuListError> {
    Ok(parse_id_words(text)?.into_iter().map(CpuId::from).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(cpus: Vec<CpuId>) -> Vec<usize> {
        cpus.into_iter().map(CpuId::index).collect()
    }

    #[test]
    fn ranges_and_singles() {
        assert_eq!(
            ids(parse_cpu_list("0-2,8,10-11\n").unwrap()),
            vec![0, 1, 2, 8, 10, 11]
        );
        assert_eq!(ids(parse_cpu_list("").unwrap()), Vec::<usize>::new());
        assert_eq!(ids(parse_cpu_list("5").unwrap()), vec![5]);
    }

    #[test]
    fn id_lists_parse_like_cpu_lists() {
        assert_eq!(parse_id_list("0-1,3").unwrap(), vec![0, 1, 3]);
        assert_eq!(parse_id_words("3 0").unwrap(), vec![0, 3]);
        assert_eq!(parse_id_list("1,1"), Err(CpuListError::Duplicate(1)));
    }

    #[test]
    fn words_are_sorted() {
        assert_eq!(
            ids(parse_cpu_words(" 20 0 1\t21 ").unwrap()),
            vec![0, 1, 20, 21]
        );
    }

    #[test]
    fn errors() {
        assert_eq!(parse_cpu_list("0-3,2"), Err(CpuListError::Duplicate(2)));
        assert_eq!(
            parse_cpu_list("3-1"),
            Err(CpuListError::Backwards("3-1".into()))
        );
        assert_eq!(
            parse_cpu_list("0,x"),
            Err(CpuListError::BadToken("x".into()))
        );
        assert_eq!(
            parse_cpu_list("0,,1"),
            Err(CpuListError::BadToken("".into()))
        );
        assert_eq!(parse_cpu_list("99999"), Err(CpuListError::TooLarge(99999)));
        assert!(matches!(
            parse_cpu_list("1-99999999999999999999999"),
            Err(CpuListError::TooLarge(_))
        ));
        assert_eq!(parse_cpu_words("1 2 1"), Err(CpuListError::Duplicate(1)));
        assert_eq!(
            parse_cpu_words("1 -2"),
            Err(CpuListError::BadToken("-2".into()))
        );
    }
}
