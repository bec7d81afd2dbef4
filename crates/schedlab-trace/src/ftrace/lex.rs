//! Lexing one line of ftrace-style text: the common prefix (task, CPU, timestamp, event),
//! the `key=value` payload fields, and the compact `comm:pid` renderings of trace-cmd.
//! The parser (`parse.rs`) decides what an event means; this file only splits text.

use super::*;

/// The common part of an event line.
pub(super) struct Prefix<'a> {
    pub(super) comm: &'a str,
    pub(super) pid: u32,
    pub(super) tgid: Option<u32>,
    pub(super) cpu: u32,
    pub(super) ts_ns: u64,
    pub(super) event: &'a str,
    pub(super) payload: &'a str,
}

/// `key=value` fields of an event payload. A key starts a whitespace-separated
/// token and looks like `[a-z_][a-z0-9_]*=`; a value runs to the next key, so
/// values may contain spaces (`comm=lto cgu.03 pid=...`). With `rest_key`, that
/// key's value runs to the end of the text (free-text fields like `path`).
pub(super) struct Fields<'a> {
    pub(super) lineno: usize,
    pub(super) event: &'a str,
    pub(super) text: &'a str,
    pub(super) kv: Vec<(&'a str, &'a str)>,
}

impl<'a> Fields<'a> {
    pub(super) fn new(
        lineno: usize,
        event: &'a str,
        text: &'a str,
        rest_key: Option<&str>,
    ) -> Fields<'a> {
        let b = text.as_bytes();
        // (key start, value start, key)
        let mut keys: Vec<(usize, usize, &'a str)> = Vec::new();
        let mut i = 0;
        while i < b.len() {
            let at_token_start = i == 0 || matches!(b[i - 1], b' ' | b'\t');
            if let Some(eq) = key_end(b, i).filter(|_| at_token_start) {
                let key = &text[i..eq];
                keys.push((i, eq + 1, key));
                if Some(key) == rest_key {
                    break;
                }
                i = eq + 1;
                continue;
            }
            i += 1;
        }
        let mut kv = Vec::with_capacity(keys.len());
        for (k, &(_, vstart, key)) in keys.iter().enumerate() {
            let end = match keys.get(k + 1) {
                Some(&(next, _, _)) => {
                    let mut e = next;
                    // Drop the one separator before the next key.
                    if e > vstart && matches!(b[e - 1], b' ' | b'\t') {
                        e -= 1;
                    }
                    e
                }
                None => text.len(),
            };
            let end = end.max(vstart);
            kv.push((key, text[vstart..end].trim_end()));
        }
        Fields {
            lineno,
            event,
            text,
            kv,
        }
    }

    pub(super) fn get(&self, key: &str) -> Result<&'a str, TraceError> {
        self.kv
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| *v)
            .ok_or_else(|| TraceError::Parse {
                line: self.lineno,
                event: self.event.to_string(),
                expected: format!("field `{key}=`"),
                found: excerpt(self.text),
            })
    }

    pub(super) fn num<T: std::str::FromStr>(&self, key: &str) -> Result<T, TraceError> {
        let v = self.get(key)?;
        v.trim().parse::<T>().map_err(|_| TraceError::Parse {
            line: self.lineno,
            event: self.event.to_string(),
            expected: format!("an integer for `{key}`"),
            found: excerpt(v),
        })
    }
}

/// The count of a `CPU:N [LOST M EVENTS]` marker (tracefs `trace`, trace-cmd), if `line`
/// is one.
pub(super) fn lost_marker(line: &str) -> Option<u64> {
    let rest = line.strip_prefix("CPU:")?;
    let at = rest.find("[LOST ")?;
    let n = rest[at + 6..].split_whitespace().next()?;
    n.parse().ok()
}

/// If a key (`[a-z_][a-z0-9_]*`) followed by `=` starts at `i`, the index of the `=`.
pub(super) fn key_end(b: &[u8], i: usize) -> Option<usize> {
    let first = *b.get(i)?;
    if !(first.is_ascii_lowercase() || first == b'_') {
        return None;
    }
    let mut j = i + 1;
    while j < b.len() && (b[j].is_ascii_lowercase() || b[j].is_ascii_digit() || b[j] == b'_') {
        j += 1;
    }
    (j < b.len() && b[j] == b'=').then_some(j)
}

/// Parses trace-cmd's compact task rendering `COMM:PID [PRIO] REST`, returning
/// the comm, pid, prio and the trimmed rest (the state, `CPU:NNN`, ...).
pub(super) fn compact_task(s: &str) -> Option<(&str, u32, i32, &str)> {
    let s = s.trim();
    let open = s.rfind(" [")?;
    let close = open + s[open..].find(']')?;
    let prio = s[open + 2..close].trim().parse().ok()?;
    let (comm, pid) = s[..open].trim_end().rsplit_once(':')?;
    let pid = pid.parse().ok()?;
    Some((comm.trim_start(), pid, prio, s[close + 1..].trim()))
}

/// Finds the `[CPU]` column and parses the line around it. Several `[` may
/// occur (a comm may contain one); the first that is followed by a valid
/// timestamp and event name wins.
pub(super) fn parse_prefix(line: &str) -> Option<Prefix<'_>> {
    let b = line.as_bytes();
    let mut search = 0;
    while let Some(off) = line[search..].find('[') {
        let open = search + off;
        search = open + 1;
        if open == 0 || !matches!(b[open - 1], b' ' | b'\t') {
            continue;
        }
        let Some(close_off) = line[open + 1..].find(']') else {
            break;
        };
        let close = open + 1 + close_off;
        let inside = &line[open + 1..close];
        if inside.is_empty() || !inside.bytes().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let Some((ts_ns, event, payload)) = parse_after_cpu(&line[close + 1..]) else {
            continue;
        };
        let Some((comm, pid, tgid)) = parse_task(&line[..open]) else {
            continue;
        };
        let Ok(cpu) = inside.parse() else { continue };
        return Some(Prefix {
            comm,
            pid,
            tgid,
            cpu,
            ts_ns,
            event,
            payload,
        });
    }
    None
}

/// First whitespace-separated token and the text after it.
pub(super) fn token(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    match s.find([' ', '\t']) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    }
}

/// After `[CPU]`: an optional flags column (`d..2.`), `SECS.FRAC:`, then the
/// event name (`sched_switch:` or perf's `sched:sched_switch:`) and payload.
pub(super) fn parse_after_cpu(rest: &str) -> Option<(u64, &str, &str)> {
    let (tok, mut after) = token(rest);
    let ts = match parse_ts(tok) {
        Some(ts) => ts,
        None => {
            let (tok2, after2) = token(after);
            after = after2;
            parse_ts(tok2)?
        }
    };
    // perf script may print extra columns before the event; allow a couple.
    for _ in 0..3 {
        let (tok, rest2) = token(after);
        if tok.is_empty() {
            return None;
        }
        if let Some(name) = tok.strip_suffix(':') {
            let name = name.rsplit(':').next().unwrap_or(name);
            if name.is_empty() {
                return None;
            }
            return Some((ts, name, rest2.trim_start()));
        }
        after = rest2;
    }
    None
}

/// `SECS.FRAC:` (1 to 9 fraction digits) to nanoseconds.
pub(super) fn parse_ts(tok: &str) -> Option<u64> {
    let t = tok.strip_suffix(':')?;
    let (secs, frac) = t.split_once('.')?;
    if secs.is_empty()
        || frac.is_empty()
        || frac.len() > 9
        || !secs.bytes().all(|c| c.is_ascii_digit())
        || !frac.bytes().all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let secs: u64 = secs.parse().ok()?;
    let frac_ns: u64 = frac.parse::<u64>().ok()? * 10u64.pow(9 - frac.len() as u32);
    secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

/// The task column before `[CPU]`: tracefs `COMM-PID` (optionally followed by
/// a `(TGID)` column) or perf's `COMM TID` / `COMM PID/TID`.
pub(super) fn parse_task(left: &str) -> Option<(&str, u32, Option<u32>)> {
    let mut left = left.trim();
    let mut tgid = None;
    if let Some(open) = left.rfind('(').filter(|_| left.ends_with(')')) {
        let inner = left[open + 1..left.len() - 1].trim();
        if !inner.is_empty() && inner.bytes().all(|c| c.is_ascii_digit()) {
            tgid = inner.parse().ok();
            left = left[..open].trim_end();
        } else if !inner.is_empty() && inner.bytes().all(|c| c == b'-') {
            left = left[..open].trim_end();
        }
    }
    if let Some((before, last)) = left.rsplit_once([' ', '\t']) {
        let comm = before.trim();
        if !comm.is_empty() {
            let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
            if all_digits(last) {
                return Some((comm, last.parse().ok()?, tgid));
            }
            if let Some((p, t)) = last
                .split_once('/')
                .filter(|(p, t)| all_digits(p) && all_digits(t))
            {
                return Some((comm, t.parse().ok()?, p.parse().ok()));
            }
        }
    }
    let (comm, pid) = left.rsplit_once('-')?;
    if pid.is_empty() || !pid.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    Some((comm.trim_start(), pid.parse().ok()?, tgid))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_allow_spaces_in_values_and_rest_key() {
        let f = Fields::new(
            1,
            "x",
            "comm=lto cgu.03 pid=9685 prio=120 target_cpu=001",
            None,
        );
        assert_eq!(f.get("comm").unwrap(), "lto cgu.03");
        assert_eq!(f.num::<u32>("pid").unwrap(), 9685);
        assert_eq!(f.num::<u32>("target_cpu").unwrap(), 1);
        let f = Fields::new(1, "x", "waker=1 path=a:b c=d e", Some("path"));
        assert_eq!(f.get("path").unwrap(), "a:b c=d e");
        let f = Fields::new(1, "x", "waker=1 path=", Some("path"));
        assert_eq!(f.get("path").unwrap(), "");
        let err = Fields::new(7, "sched_waking", "comm=a pid=x", None)
            .num::<u32>("pid")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 7: sched_waking: expected an integer for `pid`, found `x`"
        );
    }

    #[test]
    fn task_column_variants() {
        assert_eq!(
            parse_task("           bash-9711    "),
            Some(("bash", 9711, None))
        );
        assert_eq!(
            parse_task("      lto cgu.03-9685    "),
            Some(("lto cgu.03", 9685, None))
        );
        assert_eq!(
            parse_task(" memfd:sealed-91-5268    (   5268)"),
            Some(("memfd:sealed-91", 5268, Some(5268)))
        );
        assert_eq!(
            parse_task("  kworker/u4:1-events-77 (-------)"),
            Some(("kworker/u4:1-events", 77, None))
        );
        assert_eq!(
            parse_task("      lto cgu.00  9907"),
            Some(("lto cgu.00", 9907, None))
        );
        assert_eq!(
            parse_task("            perf  9905/9906 "),
            Some(("perf", 9906, Some(9905)))
        );
        assert_eq!(parse_task("          <idle>-0"), Some(("<idle>", 0, None)));
        assert_eq!(parse_task("no pid here"), None);
    }

    #[test]
    fn timestamps() {
        assert_eq!(parse_ts("602.899705:"), Some(602_899_705_000));
        assert_eq!(parse_ts("611.608906334:"), Some(611_608_906_334));
        assert_eq!(parse_ts("1.5:"), Some(1_500_000_000));
        assert_eq!(parse_ts("1.5"), None);
        assert_eq!(parse_ts("1.0123456789:"), None);
        assert_eq!(parse_ts("a.5:"), None);
    }

    #[test]
    fn compact_rendering() {
        assert_eq!(
            compact_task("sleep:1234 [120] S"),
            Some(("sleep", 1234, 120, "S"))
        );
        assert_eq!(
            compact_task("kworker/u4:1:77 [120] CPU:002"),
            Some(("kworker/u4:1", 77, 120, "CPU:002"))
        );
        assert_eq!(compact_task("nothing"), None);
    }
}
