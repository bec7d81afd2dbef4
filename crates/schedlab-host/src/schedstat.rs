//! The kernel's `/proc/schedstat` around a host run: read it before and after, and write
//! the difference in the same format (the version and cpumask fields kept, every count the
//! after value less the before value), so the schedstat readers that read the simulator's
//! `run --schedstat` read the real machine's too. Needs a kernel with `CONFIG_SCHEDSTATS`
//! (and, for the counts that are not always kept, `kernel.sched_schedstats=1`).

use crate::HostError;
use std::path::Path;

/// Where the kernel publishes the counters.
pub const PROC_SCHEDSTAT: &str = "/proc/schedstat";

/// The text of `path`, or `None` when it does not exist (a kernel without
/// `CONFIG_SCHEDSTATS`).
pub fn read_schedstat(path: &Path) -> Result<Option<String>, HostError> {
    match std::fs::read_to_string(path) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(HostError::io(format!("reading {}", path.display()), e)),
    }
}

/// `after - before`, line by line: `version` must match; `timestamp` becomes the jiffies
/// between them; on `cpuN` lines every field is a count, on `domainN` lines all but the
/// cpumask. CPUs that came or went between the reads are refused.
pub fn schedstat_delta(before: &str, after: &str) -> Result<String, HostError> {
    let bad = |why: String| HostError::Schedstat(format!("/proc/schedstat delta: {why}"));
    let (b, a): (Vec<&str>, Vec<&str>) = (before.lines().collect(), after.lines().collect());
    if b.len() != a.len() {
        return Err(bad(format!(
            "{} lines before the run, {} after (a CPU came or went)",
            b.len(),
            a.len()
        )));
    }
    let mut out = String::new();
    for (n, (lb, la)) in b.iter().zip(&a).enumerate() {
        let (fb, fa): (Vec<&str>, Vec<&str>) = (
            lb.split_whitespace().collect(),
            la.split_whitespace().collect(),
        );
        if fb.first() != fa.first() || fb.len() != fa.len() {
            return Err(bad(format!(
                "line {} differs in shape: '{lb}' then '{la}'",
                n + 1
            )));
        }
        let Some(tag) = fa.first() else {
            out.push('\n');
            continue;
        };
        let keep = match *tag {
            "version" => {
                if fb != fa {
                    return Err(bad(format!("version changed: '{lb}' then '{la}'")));
                }
                fa.len()
            }
            t if t.starts_with("domain") => 2,
            _ => 1,
        };
        let mut line: Vec<String> = fa[..keep.min(fa.len())]
            .iter()
            .map(|s| s.to_string())
            .collect();
        for (x, y) in fb.iter().zip(&fa).skip(keep) {
            let (x, y) = (x.parse::<u64>(), y.parse::<u64>());
            match (x, y) {
                (Ok(x), Ok(y)) => line.push(y.saturating_sub(x).to_string()),
                _ => return Err(bad(format!("line {}: a field is not a count", n + 1))),
            }
        }
        out.push_str(&line.join(" "));
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delta_subtracts_counts_and_keeps_the_version_and_masks() {
        let before = "version 15\ntimestamp 100\ncpu0 1 0 10 5 7 3 1000 200 9\ndomain0 3 1 2 3\n";
        let after = "version 15\ntimestamp 150\ncpu0 2 0 30 6 17 4 5000 700 19\ndomain0 3 4 2 9\n";
        let d = schedstat_delta(before, after).unwrap();
        assert_eq!(
            d,
            "version 15\ntimestamp 50\ncpu0 1 0 20 1 10 1 4000 500 10\ndomain0 3 3 0 6\n"
        );
    }

    #[test]
    fn a_changed_machine_is_refused() {
        let e = schedstat_delta("version 15\ncpu0 1\n", "version 15\ncpu0 1\ncpu1 1\n");
        assert!(e.unwrap_err().to_string().contains("a CPU came or went"));
        assert!(
            read_schedstat(Path::new("/nonexistent/schedstat"))
                .unwrap()
                .is_none()
        );
    }
}
