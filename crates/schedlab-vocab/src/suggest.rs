//! The nearest valid name to a mistyped one, and the ` (did you mean 'x'?)` hint that every
//! "unknown name" error of the workspace carries, so that a typo gets the same help whether
//! it names a policy, a switch, a topology preset, a workload, a parameter or a host
//! benchmark.
//!
//! Similarity is Jaro-Winkler over the lower-cased strings (`strsim`), which rewards a shared
//! start, the usual shape of a typo in a long name (`westmere-2s` for `westmere-2s20c`,
//! `hackbnech` for `hackbench`). One candidate being a prefix of the other, when the shorter
//! has at least [`PREFIX_MIN`] characters, counts as [`PREFIX_SCORE`]: a truncated name
//! (`kunpeng920`, `netperf`) is almost certainly meant.

/// The least similarity (0 to 1) at which a candidate is offered. Real typos score 0.85 and
/// more (`hackbnch` 0.98, `grups` 0.96, `pipx` 0.88); just below lie names that share only
/// a part, which are different things (`pgbench` and `schbench` 0.78, `LAST_BUDDY` and
/// `NEXT_BUDDY` 0.80-), and a wrong hint is worse than none.
pub const THRESHOLD: f64 = 0.8;

/// The similarity given to a candidate that starts with the given name or that the given name
/// starts with: above [`THRESHOLD`], so a truncated or extended name is always offered its
/// completion.
pub const PREFIX_SCORE: f64 = 0.9;

/// The length, in characters, the shorter of the two must have for a prefix to count: one or
/// two characters are the start of too many names to mean one.
pub const PREFIX_MIN: usize = 3;

/// How similar `given` is to `candidate`, 0 (nothing alike) to 1 (equal ignoring case).
pub fn similarity(given: &str, candidate: &str) -> f64 {
    let g = given.to_lowercase();
    let c = candidate.to_lowercase();
    let score = strsim::jaro_winkler(&g, &c);
    let shorter = g.chars().count().min(c.chars().count());
    if shorter >= PREFIX_MIN && (c.starts_with(&g) || g.starts_with(&c)) {
        score.max(PREFIX_SCORE)
    } else {
        score
    }
}

/// The candidate most similar to `given`, when it is at least [`THRESHOLD`] similar; on a tie
/// the earlier candidate, so the hint follows the order the caller lists names in.
pub fn closest<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut best: Option<(f64, &str)> = None;
    for c in candidates {
        let score = similarity(given, c);
        if best.is_none_or(|(b, _)| score > b) {
            best = Some((score, c));
        }
    }
    best.filter(|(s, _)| *s >= THRESHOLD)
        .map(|(_, c)| c.to_string())
}

/// ` (did you mean 'NAME'?)` for a suggestion, nothing without one: the suffix an error
/// message puts right after the name it could not find.
pub fn did_you_mean(suggestion: Option<&str>) -> String {
    did_you_mean_noting(suggestion, None)
}

/// Like [`did_you_mean`], with a note about the suggestion inside the parentheses:
/// ` (did you mean 'NAME', NOTE?)`, e.g. where the suggested name is valid.
pub fn did_you_mean_noting(suggestion: Option<&str>, note: Option<&str>) -> String {
    match (suggestion, note) {
        (Some(name), Some(note)) => format!(" (did you mean '{name}', {note}?)"),
        (Some(name), None) => format!(" (did you mean '{name}'?)"),
        (None, _) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORKLOADS: [&str; 6] = [
        "hackbench",
        "pipe",
        "tbench",
        "schbench",
        "netperf-rr",
        "aim7",
    ];

    #[test]
    fn typos_find_the_name() {
        assert_eq!(
            closest("hackbnech", WORKLOADS).as_deref(),
            Some("hackbench")
        );
        assert_eq!(closest("hackbnch", WORKLOADS).as_deref(), Some("hackbench"));
        assert_eq!(closest("tbnech", WORKLOADS).as_deref(), Some("tbench"));
        assert_eq!(closest("pipee", WORKLOADS).as_deref(), Some("pipe"));
    }

    #[test]
    fn case_is_ignored_and_the_candidate_keeps_its_spelling() {
        assert_eq!(
            closest("HACKBENCH", WORKLOADS).as_deref(),
            Some("hackbench")
        );
        let switches = ["WAKEUP_BUDDY", "WAKEUP_PREEMPTION", "NEXT_BUDDY"];
        assert_eq!(
            closest("wakeup_budy", switches).as_deref(),
            Some("WAKEUP_BUDDY")
        );
    }

    #[test]
    fn a_prefix_of_three_or_more_characters_is_offered_its_completion() {
        assert_eq!(closest("netperf", WORKLOADS).as_deref(), Some("netperf-rr"));
        assert_eq!(closest("pipe-x", WORKLOADS).as_deref(), Some("pipe"));
        assert_eq!(
            similarity("net", "netperf-rr"),
            PREFIX_SCORE.max(similarity("net", "netperf-rr"))
        );
        assert!(similarity("net", "netperf-rr") >= PREFIX_SCORE);
        // Two characters are too short to stand for one name.
        assert!(similarity("ne", "netperf-rr") < PREFIX_SCORE);
    }

    #[test]
    fn nonsense_gets_no_hint() {
        assert_eq!(closest("zzzzzz", WORKLOADS), None);
        assert_eq!(closest("qqqqqqqq", ["westmere-2s20c", "zen3-2s64c"]), None);
        assert_eq!(closest("anything", []), None);
    }

    #[test]
    fn ties_go_to_the_earlier_candidate() {
        assert_eq!(closest("ab", ["ab", "AB"]).as_deref(), Some("ab"));
        assert_eq!(closest("ab", ["AB", "ab"]).as_deref(), Some("AB"));
    }

    #[test]
    fn names_that_share_only_a_part_get_no_hint() {
        assert!(similarity("pgbench", "schbench") < THRESHOLD);
        assert_eq!(closest("pgbench", ["schbench"]), None);
        assert_eq!(closest("LAST_BUDDY", ["NEXT_BUDDY"]), None);
        assert!(similarity("pipx", "pipe") >= THRESHOLD);
        assert_eq!(closest("pipx", ["pipe"]).as_deref(), Some("pipe"));
    }

    #[test]
    fn the_suffix_reads_as_one_sentence() {
        assert_eq!(
            did_you_mean(Some("hackbench")),
            " (did you mean 'hackbench'?)"
        );
        assert_eq!(did_you_mean(None), "");
        assert_eq!(
            did_you_mean_noting(Some("SIS_PROP"), Some("which exists only in linux-4.9")),
            " (did you mean 'SIS_PROP', which exists only in linux-4.9?)"
        );
        assert_eq!(did_you_mean_noting(None, Some("ignored")), "");
    }
}
