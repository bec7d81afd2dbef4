//! Bad input a new user gives: each case exits 2 with one clear line that names the option or
//! the file, without a panic, before any work is done; and the documented behaviour where the
//! input is odd but usable (a trace cut mid-line warns, a tiny significant difference is
//! below the minimum effect).

mod common;

use common::{schedlab, success, tempdir};

use std::io::Write;

/// Runs `args`, expects exit 2 and `needle` in stderr, no panic and nothing on stdout;
/// returns stderr.
fn refused(args: &[&str], needle: &str) -> String {
    let out = schedlab().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
    err
}

const QUICK: &str = "pipe:loops=50";

#[test]
fn a_tunable_out_of_its_range_is_refused_without_a_panic() {
    let err = refused(
        &[
            "run",
            "-w",
            "pipe:loops=100",
            "-v",
            "linux-6.6,sched_base_slice_ns=18446744073709551615",
        ],
        "sched_base_slice_ns",
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn negative_numbers_say_what_the_option_takes() {
    for (args, flag) in [
        (vec!["run", "-w", QUICK, "--reps", "-3"], "--reps"),
        (vec!["run", "-w", QUICK, "--seed", "-1"], "--seed"),
        (vec!["compare", "-w", QUICK, "--reps", "-3"], "--reps"),
        (vec!["host", "run", "--timeout", "-1", "pipe"], "--timeout"),
        (
            vec!["replay", "derive", "t.txt", "--op-cost", "-5us"],
            "--op-cost",
        ),
        (vec!["topo", "show", "1n1l2c1t", "--smt", "-2"], "--smt"),
    ] {
        let err = refused(&args, flag);
        assert!(err.contains("negative"), "{args:?}: {err}");
        // Not clap's tip to pass the number after `--`: that is not what was meant.
        assert!(!err.contains("-- -"), "{args:?}: {err}");
    }
}

#[test]
fn a_zero_timeout_is_refused() {
    let err = refused(&["host", "run", "--timeout", "0", "pipe"], "--timeout");
    assert!(err.contains("past zero"), "{err}");
    refused(
        &[
            "host",
            "capture",
            "--timeout",
            "0s",
            "-o",
            "/tmp/x",
            "--",
            "true",
        ],
        "past zero",
    );
}

#[test]
fn capture_buffer_sizes_out_of_range_name_the_option_once() {
    for kb in ["0", "99999999999"] {
        let err = refused(
            &[
                "host",
                "capture",
                "--buffer-kb",
                kb,
                "-o",
                "/tmp/x",
                "--",
                "true",
            ],
            "--buffer-kb",
        );
        assert_eq!(err.matches("--buffer-kb").count(), 1, "{err}");
        assert!(!err.contains("os error"), "{err}");
    }
}

#[test]
fn capture_refuses_an_unwritable_output_before_running_the_command() {
    let dir = tempdir();
    let marker = dir.path().join("ran");
    let err = refused(
        &[
            "host",
            "capture",
            "-o",
            "/proc/x",
            "--",
            "touch",
            marker.to_str().unwrap(),
        ],
        "/proc/x",
    );
    assert!(err.contains("-o"), "{err}");
    assert!(
        !marker.exists(),
        "the command ran before the output was refused"
    );
}

#[test]
fn a_plot_is_an_svg_file() {
    let dir = tempdir();
    let png = dir.path().join("out.png");
    let err = refused(
        &["compare", "-w", QUICK, "--plot", png.to_str().unwrap()],
        "--plot",
    );
    assert!(err.contains("SVG"), "{err}");
    assert!(!png.exists());
}

#[test]
fn merge_of_a_missing_file_says_it_is_missing() {
    let err = refused(&["merge", "/missing.jsonl"], "/missing.jsonl: cannot open");
    assert!(!err.contains("header"), "{err}");
}

#[test]
fn the_same_variant_twice_is_refused() {
    refused(
        &["compare", "-w", QUICK, "-v", "linux-6.6", "-v", "linux-6.6"],
        "variant 'linux-6.6' is given twice",
    );
    // The same switches in another case and order are the same variant.
    refused(
        &[
            "compare",
            "-w",
            QUICK,
            "-v",
            "linux-6.6,NO_SIS_UTIL,SIS_PROP",
            "-v",
            "linux-6.6,sis_prop,no_sis_util",
        ],
        "also as 'linux-6.6,NO_SIS_UTIL,SIS_PROP'",
    );
}

#[test]
fn a_repeated_sweep_value_is_refused() {
    refused(
        &["compare", "-w", QUICK, "--sweep", "loops=50,60,50"],
        "--sweep loops: the value 50 is given twice",
    );
}

#[test]
fn until_ci_is_checked_against_the_hour_like_any_plan() {
    // 40 points x 2 variants x up to 10000 repetitions of the default tbench, one at a time:
    // days, though the first round is only 240 runs.
    let clients: Vec<String> = (1..=40).map(|c| c.to_string()).collect();
    let sweep = format!("clients={}", clients.join(","));
    let err = refused(
        &[
            "compare",
            "--sweep",
            &sweep,
            "--until-ci",
            "0.001",
            "--max-reps",
            "10000",
            "--jobs",
            "1",
        ],
        "more than an hour needs --force",
    );
    assert!(err.contains("800000 runs"), "{err}");
}

#[test]
fn until_ci_progress_counts_against_the_cap() {
    // Off a terminal the ticker prints `N of M runs ... done` every few seconds: M is the
    // most --until-ci may run, so N never passes it.
    let out = schedlab()
        .args([
            "compare",
            "-w",
            "tbench:clients=4,duration=300ms",
            "--reps",
            "2",
        ])
        .args(["--until-ci", "0.0001", "--max-reps", "12", "--jobs", "1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    success(&out, "schedlab");
    for l in err.lines().filter(|l| l.starts_with("compare: ")) {
        let w: Vec<&str> = l.split_whitespace().collect();
        let (n, m): (u64, u64) = (w[1].parse().unwrap(), w[3].parse().unwrap());
        assert_eq!(m, 24, "{l}");
        assert!(n <= m, "{l}");
        assert!(l.contains("(the --max-reps cap)"), "{l}");
    }
}

#[test]
fn min_effect_decides_what_a_verdict_calls_a_difference() {
    let cmp = |extra: &[&str]| {
        let out = schedlab()
            .args(["compare", "-w", "tbench:clients=8,duration=200ms"])
            .args(extra)
            .output()
            .unwrap();
        success(&out, "schedlab");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // NO_WAKE_AFFINE costs about 37 % here (the README's table): past the default 2 %...
    assert!(cmp(&[]).contains("  worse 3"), "{}", cmp(&[]));
    // ... and below a minimum effect of 50 %, though just as significant.
    let t = cmp(&["--min-effect", "50"]);
    assert!(t.contains("below the minimum effect (3"), "{t}");
    assert!(t.contains("< 50 %)"), "{t}");
    refused(&["compare", "--min-effect", "-1"], "--min-effect");
    refused(&["compare", "--min-effect", "150"], "--min-effect");
}

#[test]
fn replay_derive_of_a_device_stops_at_the_line_bound() {
    let err = refused(&["replay", "derive", "/dev/zero"], "/dev/zero");
    assert!(err.contains("64 KiB"), "{err}");
}

/// The first `lines` lines of a committed capture.
fn fixture_text(lines: usize) -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/replay/pipe.txt.gz"
    );
    let mut text = String::new();
    let gz = flate2::read::MultiGzDecoder::new(std::fs::File::open(path).unwrap());
    std::io::Read::read_to_string(&mut std::io::BufReader::new(gz), &mut text).unwrap();
    text.lines().take(lines).map(|l| format!("{l}\n")).collect()
}

#[test]
fn a_trace_without_sched_switch_is_refused() {
    let dir = tempdir();
    let p = dir.path().join("wakeups.txt");
    let text: String = fixture_text(400)
        .lines()
        .filter(|l| !l.contains("sched_switch:"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(text.contains("sched_waking:"));
    std::fs::write(&p, text).unwrap();
    let out = dir.path().join("w.toml");
    refused(
        &[
            "replay",
            "derive",
            p.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        "no sched_switch events",
    );
    assert!(!out.exists(), "a workload was written");
}

#[test]
fn a_text_trace_cut_mid_line_warns() {
    let dir = tempdir();
    let p = dir.path().join("cut.txt");
    let text = fixture_text(400);
    // Cut inside the last switch's `next_prio=120`: what is left still parses, as prio 12.
    let last = text.rfind("next_prio=120\n").expect("a switch line");
    let mut f = std::fs::File::create(&p).unwrap();
    f.write_all(&text.as_bytes()[..last + "next_prio=12".len()])
        .unwrap();
    drop(f);
    let out = schedlab()
        .args(["replay", "derive", p.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    success(&out, "schedlab");
    assert!(err.contains("cut-off line"), "{err}");
}

/// Two preemption models in one variant contradict each other, as SIS_PROP,NO_SIS_PROP do.
#[test]
fn two_preemption_models_are_refused() {
    refused(
        &[
            "run",
            "-w",
            QUICK,
            "-v",
            "linux-6.6,PREEMPT_NONE,PREEMPT_FULL",
        ],
        "'PREEMPT_NONE' and 'PREEMPT_FULL' are two preemption models",
    );
}

/// A key both in the workload spec and the sweep: the spec's value would be dropped.
#[test]
fn a_swept_key_the_spec_sets_is_refused() {
    refused(
        &[
            "compare",
            "-w",
            "tbench:clients=4",
            "--sweep",
            "clients=1,2",
        ],
        "both set 'clients'",
    );
}

/// A comparison of one variant says it has no baseline; the table still prints.
#[test]
fn one_variant_gets_a_hint() {
    let out = schedlab()
        .args(["compare", "-w", QUICK, "-v", "linux-6.6", "--reps", "2"])
        .output()
        .unwrap();
    success(&out, "compare with one variant");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("note: one variant (linux-6.6)"), "{err}");
}

/// A TOML workload file may begin with `[` (`[[task]]`); only real JSON is sent to rtapp:.
#[test]
fn a_toml_file_beginning_with_a_bracket_is_toml() {
    let dir = tempdir();
    let toml = dir.path().join("w.toml");
    std::fs::write(
        &toml,
        "[[task]]\nname = \"a\"\nprogram = [ { op = \"compute\", time = \"1ms\" } ]\n",
    )
    .unwrap();
    let spec = format!("file:{}", toml.display());
    let out = schedlab().args(["run", "-w", &spec]).output().unwrap();
    success(&out, "a [[task]] file");
    let json = dir.path().join("j.toml");
    std::fs::write(&json, "[ {\"tasks\": 1} ]").unwrap();
    refused(
        &["run", "-w", &format!("file:{}", json.display())],
        "looks like JSON",
    );
}

/// Output paths are checked before the work: the suite's --record in a missing folder fails
/// at once (before any real run).
#[test]
fn host_suite_record_is_checked_before_the_suite() {
    let t0 = std::time::Instant::now();
    refused(
        &[
            "host",
            "check",
            "--suite",
            "--record",
            "/nonexistent/x.json",
        ],
        "--record /nonexistent/x.json",
    );
    assert!(t0.elapsed().as_secs() < 10, "{:?}", t0.elapsed());
}

/// gzip data is read as gzip whatever the file is called: a compressed trace named `.txt`.
#[test]
fn a_gzipped_trace_under_any_name_is_read() {
    let fixture = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/replay/pipe.txt.gz");
    let dir = tempdir();
    let renamed = dir.path().join("pipe.txt");
    std::fs::copy(&fixture, &renamed).unwrap();
    let out = schedlab()
        .args(["replay", "derive"])
        .arg(&renamed)
        .args(["--only", "22007"])
        .output()
        .unwrap();
    let toml = success(&out, "replay derive of a renamed .gz");
    assert!(toml.contains("[[task]]"), "{toml}");
}

/// A sweep builds only its first and last point before the runs: a bad point between them
/// stops the sweep at its first run, naming the point, exit 2 (issue 49's quadratic start).
#[test]
fn a_bad_middle_point_is_named_when_its_run_starts() {
    let out = schedlab()
        .args([
            "compare",
            "-w",
            "tbench:duration=1ms",
            "--sweep",
            "clients=1,2,0,4",
        ])
        .args(["-v", "linux-6.6", "--reps", "1", "-j", "1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("sweep point clients=0:"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// A workload file without a duration whose op times add up to days stops at the bound of
/// simulated time, naming it (issue 49: 17 simulated days took 122 s).
#[test]
fn simulated_time_without_a_duration_is_bounded() {
    let dir = tempdir();
    let f = dir.path().join("long.toml");
    std::fs::write(
        &f,
        "[[task]]\nname = \"a\"\nprogram = [ { op = \"loop\", count = 1000, body = [ { op = \"compute\", dist = \"normal\", mean = \"1us\", stddev = \"59m\" } ] } ]\n",
    )
    .unwrap();
    let t0 = std::time::Instant::now();
    let err = refused(
        &["run", "-w", &format!("file:{}", f.display())],
        "3600 s of simulated time",
    );
    assert!(err.contains("give it a duration"), "{err}");
    assert!(t0.elapsed().as_secs() < 30, "{:?}", t0.elapsed());
}
