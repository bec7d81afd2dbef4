//! `schedlab replay`: derive workloads from the real traces in `tests/fixtures/replay/`,
//! run a derived file through `compare` on a bigger machine (the what-if), and check a
//! replay against its trace.

mod common;

use common::{schedlab, success, tempdir};

use std::path::PathBuf;

fn fixture(name: &str) -> String {
    let p: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "tests",
        "fixtures",
        "replay",
        name,
    ]
    .iter()
    .collect();
    p.to_string_lossy().into_owned()
}

fn derive(trace: &str, only: &str, out: &std::path::Path) -> String {
    let o = schedlab()
        .args(["replay", "derive", &fixture(trace), "--only", only, "-o"])
        .arg(out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    success(&o, "schedlab");
    stderr
}

#[test]
fn a_derived_hackbench_runs_under_two_policies_on_a_bigger_machine() {
    let dir = tempdir();
    let wl = dir.path().join("hackbench.toml");
    let note = derive("hackbench.txt.gz", "22118", &wl);
    // 2 groups x (20 senders + 20 receivers) + the parent.
    assert!(note.contains("81 tasks"), "{note}");
    let toml = std::fs::read_to_string(&wl).unwrap();
    assert_eq!(toml.matches("[[task]]").count(), 81, "{toml}");
    assert_eq!(toml.matches("{ op = \"fork\"").count(), 80);
    let o = schedlab()
        .args([
            "compare",
            "-w",
            &format!("file:{}", wl.display()),
            "-t",
            "xeon-2s12c",
            "-v",
            "linux-6.6",
            "-v",
            "linux-6.6,NO_WAKE_AFFINE",
            "--reps",
            "2",
            "-j",
            "1",
        ])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    success(&o, "schedlab");
    assert!(out.contains("NO_WAKE_AFFINE"), "{out}");
    assert!(out.contains("elapsed_s"), "{out}");
}

#[test]
fn each_fixture_derives_and_a_pipe_replay_checks_against_its_trace() {
    let dir = tempdir();
    for (trace, only) in [("pipe.txt.gz", "22007"), ("tbench.txt.gz", "22203")] {
        let wl = dir.path().join("w.toml");
        derive(trace, only, &wl);
        let toml = std::fs::read_to_string(&wl).unwrap();
        assert!(toml.contains("kind = \"pipe\""), "{toml}");
    }
    let o = schedlab()
        .args([
            "replay",
            "check",
            &fixture("pipe.txt.gz"),
            "--only",
            "22007",
            "--background",
            "fold",
            "-t",
            "1n1l2c1t",
            "-v",
            "linux-6.6",
        ])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    success(&o, "schedlab");
    for row in [
        "total time [ms]",
        "CPU time, all tasks [ms]",
        "wakeups",
        "  local (same CPU)",
        "migrations",
        "wakeup latency p99 [us]",
        "sched-pipe-22007",
        "sched-pipe-22008",
    ] {
        assert!(out.contains(row), "no '{row}' in\n{out}");
    }
    // The real side's wakeups are the trace's own: 5610 sched_waking of the two processes.
    let wakeups = out.lines().find(|l| l.starts_with("wakeups ")).unwrap();
    assert!(wakeups.contains("5610.00"), "{wakeups}");
}

#[test]
fn perf_script_of_perf_sched_record_derives_too() {
    let dir = tempdir();
    let wl = dir.path().join("w.toml");
    let note = derive("perf-pipe.txt.gz", "sched-pipe", &wl);
    // perf bench sched pipe: the two processes, one wakeup per message.
    assert!(note.contains("2 tasks"), "{note}");
    let toml = std::fs::read_to_string(&wl).unwrap();
    assert!(toml.contains("{ op = \"recv\"") && toml.contains("{ op = \"send\""));
}

#[test]
fn bad_input_is_refused_with_a_reason() {
    let dir = tempdir();
    let o = schedlab()
        .args([
            "replay",
            "derive",
            &fixture("pipe.txt.gz"),
            "--only",
            "nobody",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("--only nobody") && e.contains("busiest"), "{e}");
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "# tracer: nop\n").unwrap();
    let o = schedlab()
        .args(["replay", "derive"])
        .arg(&empty)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no sched_switch"));
    let o = schedlab()
        .args([
            "replay",
            "derive",
            &fixture("pipe.txt.gz"),
            "--op-cost",
            "5",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--op-cost 5"));
}

/// The quiet-machine pipe capture (see the fixtures' README) lacks most switch-ins of the
/// pair's second process; the derive implies them, so both directions carry the wakeups
/// and the replay splits the pair as the real kernel did.
#[test]
fn a_pipe_pair_traced_without_its_switch_ins_derives_both_directions() {
    let dir = tempdir();
    let wl = dir.path().join("w.toml");
    let stderr = derive("pipe-quiet.txt.gz", "567", &wl);
    assert!(
        stderr.contains("switches into a task woken onto an idle CPU are missing"),
        "{stderr}"
    );
    let toml = std::fs::read_to_string(&wl).unwrap();
    let wakes = |edge: &str| -> u64 {
        let l = toml
            .lines()
            .find(|l| l.starts_with(&format!("# sched-pipe-{edge}")))
            .unwrap_or_else(|| panic!("no edge {edge} in\n{toml}"));
        l.split(": ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    // 419 and 417 wakeups each way; without the implied switches nearly all of 568's
    // wakeups of 567 were taken for interrupts (timed sleeps).
    assert!(wakes("568 wakes") >= 400, "{toml}");
    assert!(wakes("567 wakes") >= 400, "{toml}");
    let o = schedlab()
        .args([
            "replay",
            "check",
            &fixture("pipe-quiet.txt.gz"),
            "--only",
            "567",
            "--background",
            "drop",
            "-t",
            "1n1l2c1t",
            "-v",
            "linux-6.12",
        ])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    success(&o, "schedlab");
    // Split like the real run: almost no wakeup is local.
    let local = out
        .lines()
        .find(|l| l.starts_with("  local (same CPU)"))
        .unwrap();
    let replayed: f64 = local.split_whitespace().nth(4).unwrap().parse().unwrap();
    assert!(replayed < 50.0, "{local}");
}

/// The derived file without the lines that name its source, and without `drop`.
fn body(toml: &str, drop: &str) -> String {
    toml.lines()
        .filter(|l| {
            !l.starts_with("# Derived by")
                && !l.starts_with("name = \"perf-pipe")
                && !l.starts_with("description = ")
                && !l.contains(drop)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_compact_sched_perfetto_trace_derives_the_same_workload_as_its_text() {
    // perf-pipe.pftrace is perf-pipe.txt.gz in `traced`'s compact sched encoding (see the
    // fixtures' README): the same events, the prev task of each switch left implicit.
    let dir = tempdir();
    let (pf, txt) = (dir.path().join("pf.toml"), dir.path().join("txt.toml"));
    let note = derive("perf-pipe.pftrace", "sched-pipe", &pf);
    derive("perf-pipe.txt.gz", "sched-pipe", &txt);
    assert!(
        note.contains("2 tasks") && note.contains("from 1034 events"),
        "{note}"
    );
    // The one thing the encoding loses: what ran before each CPU's first switch.
    assert!(
        note.contains("warning: 2 CPUs begin with a compact sched_switch"),
        "{note}"
    );
    let (pf, txt) = (
        std::fs::read_to_string(&pf).unwrap(),
        std::fs::read_to_string(&txt).unwrap(),
    );
    assert!(pf.contains("[[task]]\nname = \"sched-pipe-30775\""), "{pf}");
    assert!(pf.contains("[[task]]\nname = \"sched-pipe-30777\""), "{pf}");
    assert_eq!(
        body(&pf, "CPUs begin with a compact sched_switch"),
        body(&txt, "CPUs begin with a compact sched_switch")
    );
}

#[test]
fn perfetto_lost_events_and_a_cut_off_file_are_warned_about_as_for_text() {
    let dir = tempdir();
    let fixture = std::fs::read(fixture("perf-pipe.pftrace")).unwrap();
    // An end-of-trace FtraceStats packet after the fixture's own: CPU 0 overran by 7.
    // Trace.packet { ftrace_stats (34) { phase END (2), cpu_stats { cpu 0, overrun 7 } } }
    let stats = [
        0x0a, 0x0b, 0x92, 0x02, 0x08, 0x08, 0x02, 0x12, 0x04, 0x08, 0x00, 0x18, 0x07,
    ];
    let lost = dir.path().join("lost.pftrace");
    std::fs::write(&lost, [fixture.as_slice(), &stats].concat()).unwrap();
    let cut = dir.path().join("cut.pftrace");
    std::fs::write(&cut, &fixture[..fixture.len() / 2]).unwrap();
    for (path, warning) in [
        (&lost, "warning: 7 events lost (buffer overruns)"),
        (&cut, "warning: the trace ends in a cut-off line or packet"),
    ] {
        let o = schedlab()
            .args(["replay", "derive"])
            .arg(path)
            .args(["--only", "sched-pipe", "-o"])
            .arg(dir.path().join("w.toml"))
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        success(&o, "replay derive");
        assert!(e.contains(warning), "{e}");
    }
}

/// The pipe fixture's text with its event lines changed by `f` (the header kept).
fn damaged_pipe(f: impl Fn(Vec<String>) -> Vec<String>) -> String {
    use std::io::Read;
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(fixture("pipe.txt.gz")).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let (head, events): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| l.starts_with('#'));
    let events = f(events.into_iter().map(String::from).collect());
    let mut out: Vec<String> = head.into_iter().map(String::from).collect();
    out.extend(events);
    out.join("\n") + "\n"
}

fn derive_text(dir: &std::path::Path, name: &str, text: &str) -> std::process::Output {
    let trace = dir.join(name);
    std::fs::write(&trace, text).unwrap();
    schedlab()
        .args(["replay", "derive"])
        .arg(&trace)
        .args(["--only", "22007"])
        .output()
        .unwrap()
}

/// What can be mended is (doubled lines read once, shuffled lines sorted: the same file as
/// from the trace itself); what cannot (every pid rewritten to one) is refused before
/// anything is written (issue 49).
#[test]
fn damaged_traces_are_mended_or_refused() {
    let dir = tempdir();
    let clean = derive_text(dir.path(), "t.txt", &damaged_pipe(|e| e));
    let clean = success(&clean, "clean");
    let doubled = derive_text(
        dir.path(),
        "t.txt",
        &damaged_pipe(|e| e.into_iter().flat_map(|l| [l.clone(), l]).collect()),
    );
    let err = String::from_utf8_lossy(&doubled.stderr).into_owned();
    assert!(err.contains("repeat the one before them exactly"), "{err}");
    let body = |t: &str| {
        t.lines()
            .filter(|l| !l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(body(&success(&doubled, "doubled")), body(&clean));
    // Reversed blocks of 7 lines: out of order everywhere, sortable.
    let shuffled = derive_text(
        dir.path(),
        "t.txt",
        &damaged_pipe(|e| e.chunks(7).flat_map(|c| c.iter().rev().cloned()).collect()),
    );
    let err = String::from_utf8_lossy(&shuffled.stderr).into_owned();
    assert!(err.contains("sorted by timestamp"), "{err}");
    success(&shuffled, "shuffled");
    // Every pid the same: no task can be told from another.
    let same = damaged_pipe(|e| {
        e.into_iter()
            .map(|l| {
                l.split(' ')
                    .map(|w| match w.split_once("pid=") {
                        Some((k, _)) => format!("{k}pid=22007"),
                        None => w.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    });
    let out_file = dir.path().join("same.toml");
    let trace = dir.path().join("same.txt");
    std::fs::write(&trace, same).unwrap();
    let out = schedlab()
        .args(["replay", "derive"])
        .arg(&trace)
        .args(["--only", "22007", "-o"])
        .arg(&out_file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot run, so it is not written"), "{err}");
    assert!(!out_file.exists());
}
