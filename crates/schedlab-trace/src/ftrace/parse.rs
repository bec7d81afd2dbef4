//! The parser of ftrace-style text: tracefs `trace`/`trace_pipe`, `trace-cmd report` and
//! `perf script` renderings of the sched events (see the parent module for what is accepted).

use super::lex::*;
use super::*;

/// What the parser did with each line, so callers can tell "no events" from
/// "wrong events enabled".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParseStats {
    /// Lines that became [`TraceEvent`]s.
    pub event_lines: u64,
    /// Event lines of events we do not model, by event name.
    pub skipped_events: BTreeMap<String, u64>,
    /// Blank lines, `#` comments and headers, and other non-event lines.
    pub other_lines: u64,
    /// Events the kernel reported dropping (`CPU:N [LOST M EVENTS]` markers, summed).
    pub lost_events: u64,
    /// How many such markers there were.
    pub lost_markers: u64,
    /// `##### CPU N buffer started ####` lines: a per-CPU buffer that wrapped, so that
    /// CPU's events begin later than the others'.
    pub buffer_started: u64,
    /// The last line was cut off (no line end) and did not parse: a truncated file.
    pub truncated_last_line: bool,
}

impl ParseStats {
    /// Total event lines skipped because their event is not modelled.
    pub fn skipped_event_lines(&self) -> u64 {
        self.skipped_events.values().sum()
    }
}

/// Parses ftrace-style text (see the module docs for accepted formats) into a
/// [`Trace`], keeping file order (call [`Trace::sort`] if the source may be
/// unsorted).
pub fn parse_ftrace_text(text: &str) -> Result<Trace, TraceError> {
    parse_ftrace_text_with_stats(text).map(|(t, _)| t)
}

/// [`parse_ftrace_text`] that also reports skipped lines.
pub fn parse_ftrace_text_with_stats(text: &str) -> Result<(Trace, ParseStats), TraceError> {
    let mut p = Parser::default();
    let mut events = Vec::new();
    for (idx, raw) in text.lines().enumerate() {
        if let Some(ev) = p.line(idx + 1, raw)? {
            events.push(ev);
        }
    }
    let (threads, header_cpus, stats) = p.finish();
    let mut trace = Trace {
        nr_cpus: 0,
        threads,
        events,
    };
    trace.nr_cpus = header_cpus.unwrap_or(0).max(trace.effective_nr_cpus());
    Ok((trace, stats))
}

/// What a streaming parse learned besides the events.
#[derive(Debug, Clone, Default)]
pub struct StreamSummary {
    /// Thread names and groups, as [`Trace::threads`].
    pub threads: Vec<ThreadInfo>,
    /// The CPU count a header declared (`#P:`, `cpus=`), if any.
    pub header_cpus: Option<u32>,
    /// What was done with each line.
    pub stats: ParseStats,
}

/// Parses ftrace-style text from a reader one line at a time, handing each event to
/// `on_event` in file order and keeping none: memory stays bounded by the thread table,
/// however long the trace. A last line without its newline (a truncated file) is left out and
/// counted in [`ParseStats::truncated_last_line`] instead of failing the parse: cut inside a
/// number it may still parse, as a wrong value. A line longer than [`MAX_LINE_BYTES`] or an
/// input past [`MAX_INPUT_BYTES`] is an error: no trace has such lines, and a device such as
/// `/dev/zero` would otherwise be read until memory runs out.
pub fn parse_ftrace_reader(
    reader: impl std::io::BufRead,
    on_event: impl FnMut(TraceEvent),
) -> Result<StreamSummary, TraceError> {
    parse_bounded(reader, on_event, MAX_LINE_BYTES, MAX_INPUT_BYTES)
}

/// [`parse_ftrace_reader`] with its bounds as arguments (the tests use small ones).
fn parse_bounded(
    mut reader: impl std::io::BufRead,
    mut on_event: impl FnMut(TraceEvent),
    max_line: usize,
    max_input: u64,
) -> Result<StreamSummary, TraceError> {
    let mut p = Parser::default();
    let mut buf = Vec::new();
    let mut lineno = 0;
    let mut total = 0u64;
    use std::io::{BufRead as _, Read as _};
    let bounded = |line: usize, expected: String, buf: &[u8]| TraceError::Parse {
        line,
        event: "text".into(),
        expected,
        found: String::from_utf8_lossy(&buf[..buf.len().min(24)])
            .escape_debug()
            .to_string()
            + "…",
    };
    loop {
        buf.clear();
        let n = (&mut reader)
            .take(max_line as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|source| TraceError::Io {
                path: "<input>".into(),
                source,
            })?;
        if n == 0 {
            break;
        }
        lineno += 1;
        total += n as u64;
        let complete = buf.last() == Some(&b'\n');
        if !complete && n > max_line {
            let want = format!(
                "a line of at most {} KiB (is this a text trace?)",
                max_line >> 10
            );
            return Err(bounded(lineno, want, &buf));
        }
        if total > max_input {
            let size = if max_input >= 1 << 30 {
                format!("{} GiB", max_input >> 30)
            } else {
                format!("{} MiB", max_input >> 20)
            };
            let want =
                format!("at most {size} of text (split the trace, or capture a shorter run)");
            return Err(bounded(lineno, want, &buf));
        }
        let text = String::from_utf8_lossy(&buf);
        let line = text.trim_end_matches(['\n', '\r']);
        if !complete {
            if !line.trim().is_empty() {
                p.stats.truncated_last_line = true;
            }
            break;
        }
        match p.line(lineno, line) {
            Ok(Some(ev)) => on_event(ev),
            Ok(None) => {}
            Err(e) => return Err(e),
        }
    }
    let (threads, header_cpus, stats) = p.finish();
    Ok(StreamSummary {
        threads,
        header_cpus,
        stats,
    })
}

/// The longest line [`parse_ftrace_reader`] reads (a real one is a few hundred bytes).
pub const MAX_LINE_BYTES: usize = 64 << 10;
/// The most text [`parse_ftrace_reader`] reads (a minute of a busy 64-CPU machine is a few
/// GiB).
pub const MAX_INPUT_BYTES: u64 = 64 << 30;

/// Event names whose lines must parse (others are skipped).
const OUR_EVENTS: [&str; 7] = [
    "sched_switch",
    "sched_waking",
    "sched_wakeup",
    "sched_wakeup_new",
    "sched_migrate_task",
    "sched_process_fork",
    "sched_process_exit",
];

#[derive(Default)]
struct Parser {
    table: ThreadTable,
    stats: ParseStats,
    header_cpus: Option<u32>,
    /// Task-column comms, used only for pids never named in an event payload
    /// (the column shows the name at print time, which may be newer).
    column_comms: BTreeMap<u32, String>,
}

impl Parser {
    fn finish(mut self) -> (Vec<ThreadInfo>, Option<u32>, ParseStats) {
        for (pid, comm) in &self.column_comms {
            self.table.saw_comm_if_unknown(*pid, comm);
        }
        (self.table.finish(), self.header_cpus, self.stats)
    }

    fn line(&mut self, lineno: usize, raw: &str) -> Result<Option<TraceEvent>, TraceError> {
        let line = raw.trim_end();
        let trimmed = line.trim_start();
        if trimmed.is_empty() {
            self.stats.other_lines += 1;
            return Ok(None);
        }
        if trimmed.starts_with('#') {
            self.stats.other_lines += 1;
            if trimmed.contains(" buffer started ") {
                self.stats.buffer_started += 1;
            }
            return self.comment(lineno, trimmed).map(|()| None);
        }
        if let Some(n) = lost_marker(trimmed) {
            self.stats.other_lines += 1;
            self.stats.lost_markers += 1;
            self.stats.lost_events += n;
            return Ok(None);
        }
        if let Some(n) = trimmed.strip_prefix("cpus=") {
            // trace-cmd report header.
            self.stats.other_lines += 1;
            if let Ok(n) = n.trim().parse::<u32>() {
                self.header_cpus = Some(n);
            }
            return Ok(None);
        }
        let Some(pre) = parse_prefix(line) else {
            if let Some(ev) = OUR_EVENTS.iter().find(|e| line.contains(&format!("{e}:"))) {
                return Err(TraceError::Parse {
                    line: lineno,
                    event: (*ev).to_string(),
                    expected: "an event line `COMM-PID [CPU] [FLAGS] SECS.FRAC: EVENT: FIELDS` (tracefs, trace-cmd) \
                               or `COMM TID [CPU] SECS.FRAC: sched:EVENT: FIELDS` (perf script)"
                        .to_string(),
                    found: excerpt(line),
                });
            }
            self.stats.other_lines += 1;
            return Ok(None);
        };
        if pre.pid != 0 {
            if !pre.comm.is_empty()
                && pre.comm != UNKNOWN_COMM
                && self.column_comms.get(&pre.pid).map(String::as_str) != Some(pre.comm)
            {
                // Only on a change: a long trace names the same task on most lines.
                self.column_comms.insert(pre.pid, pre.comm.to_string());
            }
            if let Some(tgid) = pre.tgid {
                self.table.saw_tgid(pre.pid, tgid);
            }
        }
        let ev = match pre.event {
            "sched_switch" => Some(self.switch(lineno, &pre)?),
            "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => {
                Some(self.wakeup(lineno, &pre)?)
            }
            "sched_migrate_task" => Some(self.migrate(lineno, &pre)?),
            "sched_process_fork" => Some(self.fork(lineno, &pre)?),
            "sched_process_exit" => Some(self.exit(lineno, &pre)?),
            "tracing_mark_write" | "print" if pre.payload.starts_with(PLACEMENT_MARK) => {
                Some(self.placement(lineno, &pre)?)
            }
            _ => None,
        };
        match &ev {
            Some(_) => self.stats.event_lines += 1,
            None => {
                *self
                    .stats
                    .skipped_events
                    .entry(pre.event.to_string())
                    .or_insert(0) += 1
            }
        }
        Ok(ev)
    }

    fn comment(&mut self, lineno: usize, line: &str) -> Result<(), TraceError> {
        if let Some(rest) = line.strip_prefix(THREAD_LINE) {
            let f = Fields::new(
                lineno,
                "schedlab-thread header",
                rest.trim_start(),
                Some("comm"),
            );
            let pid = f.num("pid")?;
            let tgid = f.num("tgid")?;
            let comm = f.get("comm")?.to_string();
            self.table.add_explicit(ThreadInfo { pid, tgid, comm });
        } else if let Some(pos) = line.find("#P:") {
            let digits: String = line[pos + 3..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if let Ok(n) = digits.parse() {
                self.header_cpus = Some(n);
            }
        }
        Ok(())
    }

    fn switch(&mut self, lineno: usize, pre: &Prefix<'_>) -> Result<TraceEvent, TraceError> {
        let err = |expected: &str| TraceError::Parse {
            line: lineno,
            event: "sched_switch".to_string(),
            expected: expected.to_string(),
            found: excerpt(pre.payload),
        };
        let (left, right) = pre
            .payload
            .split_once(" ==> ")
            .ok_or_else(|| err("`PREV ==> NEXT`"))?;
        if pre.payload.contains("prev_pid=") {
            let l = Fields::new(lineno, "sched_switch", left, None);
            let r = Fields::new(lineno, "sched_switch", right, None);
            let prev_pid = l.num("prev_pid")?;
            let next_pid = r.num("next_pid")?;
            let state = l.get("prev_state")?;
            let prev_state = PrevState::parse(state).ok_or_else(|| TraceError::Parse {
                line: lineno,
                event: "sched_switch".to_string(),
                expected: "a task state like R, R+, S, D, I, X for `prev_state`".to_string(),
                found: excerpt(state),
            })?;
            self.table.saw_comm(prev_pid, l.get("prev_comm")?);
            self.table.saw_comm(next_pid, r.get("next_comm")?);
            Ok(TraceEvent::Switch {
                ts_ns: pre.ts_ns,
                cpu: pre.cpu,
                prev_pid,
                prev_prio: l.num("prev_prio")?,
                prev_state,
                next_pid,
                next_prio: r.num("next_prio")?,
            })
        } else {
            // trace-cmd / perf plugin rendering: `comm:pid [prio] STATE ==> comm:pid [prio]`.
            let (pc, prev_pid, prev_prio, state) = compact_task(left).ok_or_else(|| {
                err("`prev_comm=.. prev_pid=..` or `COMM:PID [PRIO] STATE ==> ...`")
            })?;
            let (nc, next_pid, next_prio, _) =
                compact_task(right).ok_or_else(|| err("`... ==> COMM:PID [PRIO]` after `==>`"))?;
            let prev_state = PrevState::parse(state)
                .ok_or_else(|| err("a task state like R, S, D after `[PRIO]`"))?;
            self.table.saw_comm(prev_pid, pc);
            self.table.saw_comm(next_pid, nc);
            Ok(TraceEvent::Switch {
                ts_ns: pre.ts_ns,
                cpu: pre.cpu,
                prev_pid,
                prev_prio,
                prev_state,
                next_pid,
                next_prio,
            })
        }
    }

    fn wakeup(&mut self, lineno: usize, pre: &Prefix<'_>) -> Result<TraceEvent, TraceError> {
        let (pid, prio, target_cpu) =
            if pre.payload.starts_with("comm=") || pre.payload.contains(" pid=") {
                let f = Fields::new(lineno, pre.event, pre.payload, None);
                let pid = f.num("pid")?;
                self.table.saw_comm(pid, f.get("comm")?);
                (pid, f.num("prio")?, f.num("target_cpu")?)
            } else {
                // trace-cmd: `comm:pid [prio] CPU:003` (optionally `success=1` before CPU).
                let err = || TraceError::Parse {
                    line: lineno,
                    event: pre.event.to_string(),
                    expected: "`comm=.. pid=.. prio=.. target_cpu=..` or `COMM:PID [PRIO] CPU:NNN`"
                        .to_string(),
                    found: excerpt(pre.payload),
                };
                let (comm, pid, prio, rest) = compact_task(pre.payload).ok_or_else(err)?;
                let cpu = rest
                    .split_whitespace()
                    .find_map(|t| t.strip_prefix("CPU:"))
                    .and_then(|c| c.parse().ok())
                    .ok_or_else(err)?;
                self.table.saw_comm(pid, comm);
                (pid, prio, cpu)
            };
        let (ts_ns, cpu) = (pre.ts_ns, pre.cpu);
        Ok(match pre.event {
            "sched_waking" => TraceEvent::Waking {
                ts_ns,
                cpu,
                pid,
                prio,
                target_cpu,
            },
            "sched_wakeup" => TraceEvent::Wakeup {
                ts_ns,
                cpu,
                pid,
                prio,
                target_cpu,
            },
            _ => TraceEvent::WakeupNew {
                ts_ns,
                cpu,
                pid,
                prio,
                target_cpu,
            },
        })
    }

    fn migrate(&mut self, lineno: usize, pre: &Prefix<'_>) -> Result<TraceEvent, TraceError> {
        let f = Fields::new(lineno, pre.event, pre.payload, None);
        let pid = f.num("pid")?;
        self.table.saw_comm(pid, f.get("comm")?);
        Ok(TraceEvent::MigrateTask {
            ts_ns: pre.ts_ns,
            cpu: pre.cpu,
            pid,
            prio: f.num("prio")?,
            orig_cpu: f.num("orig_cpu")?,
            dest_cpu: f.num("dest_cpu")?,
        })
    }

    fn fork(&mut self, lineno: usize, pre: &Prefix<'_>) -> Result<TraceEvent, TraceError> {
        let f = Fields::new(lineno, pre.event, pre.payload, None);
        let parent_pid = f.num("pid")?;
        let child_pid = f.num("child_pid")?;
        self.table.saw_comm(parent_pid, f.get("comm")?);
        self.table.saw_comm(child_pid, f.get("child_comm")?);
        Ok(TraceEvent::ProcessFork {
            ts_ns: pre.ts_ns,
            cpu: pre.cpu,
            parent_pid,
            child_pid,
        })
    }

    fn exit(&mut self, lineno: usize, pre: &Prefix<'_>) -> Result<TraceEvent, TraceError> {
        let f = Fields::new(lineno, pre.event, pre.payload, None);
        let pid = f.num("pid")?;
        self.table.saw_comm(pid, f.get("comm")?);
        Ok(TraceEvent::ProcessExit {
            ts_ns: pre.ts_ns,
            cpu: pre.cpu,
            pid,
        })
    }

    fn placement(&mut self, lineno: usize, pre: &Prefix<'_>) -> Result<TraceEvent, TraceError> {
        let body = pre.payload[PLACEMENT_MARK.len()..].trim_start();
        let f = Fields::new(lineno, PLACEMENT_MARK, body, Some("path"));
        Ok(TraceEvent::Placement {
            ts_ns: pre.ts_ns,
            cpu: pre.cpu,
            waker_pid: f.num("waker")?,
            wakee_pid: f.num("wakee")?,
            prev_cpu: f.num("prev_cpu")?,
            target_cpu: f.num("target_cpu")?,
            path: f.get("path")?.to_string(),
            examined: f.num("examined")?,
        })
    }
}

#[cfg(test)]
mod stream_tests {
    use super::*;

    const TEXT: &str = "# tracer: nop\n\
#P:2\n\
          <idle>-0       [000] d..2.   100.000001: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=5 next_prio=120\n\
CPU:1 [LOST 17 EVENTS]\n\
##### CPU 1 buffer started ####\n\
               a-5       [000] d..2.   100.000101: sched_switch: prev_comm=a prev_pid=5 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n";

    #[test]
    fn the_reader_gives_the_same_events_as_the_text_parser_and_counts_losses() {
        let whole = parse_ftrace_text(TEXT).unwrap();
        let mut got = Vec::new();
        let s = parse_ftrace_reader(TEXT.as_bytes(), |e| got.push(e)).unwrap();
        assert_eq!(got, whole.events);
        assert_eq!(s.header_cpus, Some(2));
        assert_eq!(s.stats.lost_events, 17);
        assert_eq!(s.stats.lost_markers, 1);
        assert_eq!(s.stats.buffer_started, 1);
        assert!(!s.stats.truncated_last_line);
    }

    #[test]
    fn a_cut_off_last_line_is_counted_not_an_error() {
        let cut = &TEXT[..TEXT.len() - 40];
        let mut n = 0;
        let s = parse_ftrace_reader(cut.as_bytes(), |_| n += 1).unwrap();
        assert_eq!(n, 1);
        assert!(s.stats.truncated_last_line);
        // A bad line in the middle is still an error.
        let bad = format!("{}x [000] 1.0: sched_switch: garbage\n{TEXT}", "");
        assert!(parse_ftrace_reader(bad.as_bytes(), |_| {}).is_err());
        // Cut where the rest still parses (`next_prio=12` of 120): left out all the same.
        let cut = &TEXT[..TEXT.len() - 2];
        let mut got = Vec::new();
        let s = parse_ftrace_reader(cut.as_bytes(), |e| got.push(e)).unwrap();
        assert_eq!(got.len(), 1);
        assert!(s.stats.truncated_last_line);
    }

    #[test]
    fn lines_and_inputs_past_the_bounds_are_errors() {
        use std::io::Read;
        // A device without newlines (`/dev/zero`): stops at the line bound.
        let zeros = std::io::BufReader::new(std::io::repeat(0).take(1 << 20));
        let e = parse_bounded(zeros, |_| {}, 4096, u64::MAX).unwrap_err();
        assert!(
            e.to_string()
                .contains("line 1: text: expected a line of at most 4 KiB"),
            "{e}"
        );
        // Endless short lines: stops at the input bound.
        let blank = std::io::BufReader::new(std::io::repeat(b'\n').take(4 << 20));
        let e = parse_bounded(blank, |_| {}, 4096, 1 << 20).unwrap_err();
        assert!(e.to_string().contains("at most 1 MiB of text"), "{e}");
        // The real bounds let a real trace through.
        assert!(parse_ftrace_reader(TEXT.as_bytes(), |_| {}).is_ok());
    }
}
