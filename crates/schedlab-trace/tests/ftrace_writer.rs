//! The ftrace text writer on a tiny trace, against output written by hand
//! from the tracefs column layout, and the parser reading it back.

mod common;

use schedlab_trace::{parse_ftrace_text_with_stats, write_ftrace_text};

#[test]
fn tiny_trace_text_matches_hand_written_golden() {
    let mut out = Vec::new();
    write_ftrace_text(&common::tiny_trace(), &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    // The snapshot was written by hand from the tracefs column layout, then checked.
    insta::assert_snapshot!("tiny_ftrace", text);
}

#[test]
fn tiny_trace_text_parses_back_identically() {
    let trace = common::tiny_trace();
    let mut out = Vec::new();
    write_ftrace_text(&trace, &mut out).unwrap();
    let (back, stats) = parse_ftrace_text_with_stats(std::str::from_utf8(&out).unwrap()).unwrap();
    assert_eq!(back, trace);
    assert_eq!(stats.event_lines, 10);
    assert_eq!(stats.skipped_event_lines(), 0);
    // 16 header/comment lines, nothing else.
    assert_eq!(stats.other_lines, 16);
}

#[test]
fn writer_emits_in_time_order_even_if_trace_is_not_sorted() {
    let mut trace = common::tiny_trace();
    trace.events.reverse();
    let mut out = Vec::new();
    write_ftrace_text(&trace, &mut out).unwrap();
    let back = schedlab_trace::parse_ftrace_text(std::str::from_utf8(&out).unwrap()).unwrap();
    assert!(back.is_sorted());
    assert_eq!(back.events.len(), 10);
}

#[test]
fn newline_in_a_name_cannot_break_the_line_format() {
    let mut trace = common::tiny_trace();
    trace.threads[0].comm = "evil\nname".into();
    let mut out = Vec::new();
    write_ftrace_text(&trace, &mut out).unwrap();
    let back = schedlab_trace::parse_ftrace_text(std::str::from_utf8(&out).unwrap()).unwrap();
    assert_eq!(back.comm(100), "evil name");
    assert_eq!(back.events.len(), 10);
}
