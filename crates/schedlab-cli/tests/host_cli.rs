//! `schedlab host ...` end to end: real runs print the tools' native formats, bad specs fail
//! with exit 2 and a clear message, Ctrl-C and timeouts stop a run, capture writes both trace
//! files and restores tracefs, calibrate writes a complete profile, and `--external` runs the
//! real tools (installing their Debian packages, or skipping with a message).
//!
//! Assertions are on structure, counts and loose bounds, never on timings (the test machine is
//! a noisy 2-vCPU VM).

mod common;

use common::{schedlab_host_env, success, tempdir, tracefs_state};
use std::time::{Duration, Instant};

/// Runs `schedlab host ARGS`, expecting success; returns stdout.
fn host_ok(args: &[&str]) -> String {
    let out = schedlab_host_env().arg("host").args(args).output().unwrap();
    success(&out, format_args!("host {args:?}"))
}

/// Runs `schedlab host ARGS`, expecting exit 2; returns stderr.
fn host_err(args: &[&str]) -> String {
    let out = schedlab_host_env().arg("host").args(args).output().unwrap();
    let se = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "host {args:?}: {se}");
    se
}

/// The number after `prefix` on the first line starting with it (after trimming).
fn number_after(text: &str, prefix: &str) -> f64 {
    let line = text
        .lines()
        .map(str::trim_start)
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` line in:\n{text}"));
    line[prefix.len()..]
        .split_whitespace()
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no number in {line:?}"))
}

#[test]
fn run_hackbench_prints_rt_tests_format() {
    let out = host_ok(&["run", "hackbench:groups=1,loops=10"]);
    assert!(
        out.starts_with(
            "Running in process mode with 1 groups using 40 file descriptors each (== 40 tasks)\n\
             Each sender will pass 10 messages of 100 bytes\n"
        ),
        "{out}"
    );
    let t = number_after(&out, "Time:");
    assert!(t > 0.0 && t < 30.0, "{t}");
    // Thread mode over pipes uses the same format.
    let out = host_ok(&["run", "hackbench:groups=1,loops=10,ipc=pipe,mode=thread"]);
    assert!(
        out.starts_with("Running in threaded mode with 1 groups"),
        "{out}"
    );
    assert!(number_after(&out, "Time:") > 0.0);
}

#[test]
fn run_pipe_prints_perf_format() {
    for (spec, kind) in [
        ("pipe:loops=2000", "processes"),
        ("pipe:loops=2000,threads=true", "threads"),
        ("pipe:loops=2000,threads=on,pairs=3", "threads"),
    ] {
        let out = host_ok(&["run", spec]);
        assert!(
            out.contains(&format!(
                "# Executed 2000 pipe operations between two {kind}\n"
            )),
            "{out}"
        );
        let total = number_after(&out, "Total time:");
        let us = out
            .lines()
            .find(|l| l.ends_with(" usecs/op"))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|w| w.parse::<f64>().ok())
            .unwrap_or_else(|| panic!("{out}"));
        // usecs/op is total time over loops (total printed truncated to ms).
        assert!(us > 0.0);
        assert!((us * 2000.0 / 1e6 - total).abs() < 0.0011, "{us} {total}");
    }
}

#[test]
fn run_tbench_prints_throughput_line() {
    let out = host_ok(&["run", "tbench:clients=1,duration=300ms"]);
    let line = out
        .lines()
        .find(|l| l.starts_with("Throughput "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains(" MB/sec  1 clients  1 procs  max_latency="),
        "{line}"
    );
    assert!(number_after(&out, "Throughput") > 0.0);
    // The per-operation table lists the mix's operations with counts.
    assert!(
        out.contains(" Operation      Count    AvgLat    MaxLat\n"),
        "{out}"
    );
    for op in ["ReadX", "WriteX", "NTCreateX"] {
        assert!(
            out.lines().any(|l| l.starts_with(&format!(" {op} "))),
            "{op}: {out}"
        );
    }
}

#[test]
fn run_schbench_prints_latency_block() {
    let out = host_ok(&["run", "schbench:message_threads=1,threads=2,runtime=300ms"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "Latency percentiles (usec)", "{out}");
    assert_eq!(lines.len(), 9, "{out}");
    assert!(lines[5].starts_with("\t*99.0th: "), "{out}");
    let p50 = number_after(&out, "50.0th:");
    let p99 = number_after(&out, "*99.0th:");
    assert!(p50 <= p99, "{out}");
    assert!(lines[8].starts_with("\tmin="), "{out}");
}

#[test]
fn run_schbench_v1_prints_three_blocks() {
    let out = host_ok(&[
        "run",
        "schbench:version=v1,message_threads=1,threads=2,runtime=300ms",
    ]);
    assert!(
        out.starts_with("Wakeup Latencies percentiles (usec) runtime 0 (s) ("),
        "{out}"
    );
    assert!(
        out.contains("\nRequest Latencies percentiles (usec)"),
        "{out}"
    );
    assert!(out.contains("\nRPS percentiles (requests)"), "{out}");
    assert!(number_after(&out, "average rps:") > 0.0, "{out}");
}

#[test]
fn run_json_has_result_fields() {
    let out = host_ok(&["run", "--json", "pipe:loops=500"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["workload"], "pipe");
    assert_eq!(v["params"]["loops"], "500");
    assert_eq!(v["params"]["threads"], "false");
    assert_eq!(v["metrics"][0]["name"], "usecs_per_op");
    assert_eq!(v["metrics"][0]["better"], "lower");
    assert!(v["metrics"][0]["value"].as_f64().unwrap() > 0.0);
    assert!(v["native"].as_str().unwrap().contains("usecs/op"));
}

#[test]
fn bad_specs_exit_2_with_clear_messages() {
    let e = host_err(&["run", "hackbnch:groups=1"]);
    assert!(
        e.contains("unknown workload 'hackbnch' (did you mean 'hackbench'?)"),
        "{e}"
    );
    let e = host_err(&["run", "hackbench:grups=1"]);
    assert!(
        e.contains("hackbench: unknown parameter 'grups' (did you mean 'groups'?)"),
        "{e}"
    );
    let e = host_err(&["run", "pipe:loops=abc"]);
    assert!(e.contains("pipe: bad value \"abc\" for `loops`"), "{e}");
    let e = host_err(&["run", "hackbench:ipc=tcp"]);
    assert!(e.contains("expected one of socket|pipe"), "{e}");
    let e = host_err(&["run", "tbench:duration=5min"]);
    assert!(e.contains("unknown unit `min`"), "{e}");
    let e = host_err(&["run", "pipe:loops"]);
    assert!(e.contains("`loops` is not key=value"), "{e}");
    let e = host_err(&["run", "--timeout", "5parsecs", "pipe"]);
    assert!(e.contains("--timeout"), "{e}");
    let e = host_err(&["run", "pgbench:clients=2"]);
    assert!(e.contains("--external"), "{e}");
    // Durations need a unit, as in the simulator.
    let e = host_err(&["run", "tbench:duration=2"]);
    assert!(e.contains("no unit"), "{e}");
    // Workloads the simulator has but the host does not run are named as such.
    let e = host_err(&["run", "kernbench"]);
    assert!(e.contains("`kernbench` is simulated only"), "{e}");
}

#[test]
fn timeout_stops_the_run() {
    let t = Instant::now();
    let e = host_err(&["run", "--timeout", "300ms", "pipe:loops=100000000"]);
    assert!(e.contains("pipe timed out after 300ms"), "{e}");
    let e = host_err(&[
        "run",
        "--timeout",
        "300ms",
        "hackbench:groups=1,loops=100000000,mode=thread,ipc=pipe",
    ]);
    assert!(e.contains("hackbench timed out"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(20));
}

#[test]
fn ctrl_c_cancels_and_cleans_up() {
    let child = std::process::Command::new(common::bin())
        .args(["host", "run", "--timeout", "60s", "pipe:loops=100000000"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Ends the run if an assertion below fails.
    let mut child = common::Guard::new(child);
    std::thread::sleep(Duration::from_millis(500));
    let st = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let t = Instant::now();
    let (status, se) = loop {
        if let Some(st) = child.child.try_wait().unwrap() {
            let mut se = String::new();
            use std::io::Read;
            let _ = child.child.stderr.take().unwrap().read_to_string(&mut se);
            break (st, se);
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "not stopped by SIGINT"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    // Like every command a signal stops, it exits 128 + the signal (130 for SIGINT).
    assert_eq!(status.code(), Some(130), "{se}");
    assert!(se.contains("pipe cancelled"), "{se}");
}

#[test]
fn calibrate_quick_writes_every_profile_key() {
    let dir = tempdir();
    let path = dir.path().join("profile.toml");
    let out = host_ok(&["calibrate", "--quick", "-o", path.to_str().unwrap()]);
    assert!(out.contains("pipe round trip stacked"), "{out}");
    let text = std::fs::read_to_string(&path).unwrap();
    // The simulator reads it (unknown or mistyped keys are errors there).
    let profile = schedlab_engine::MachineProfile::from_toml(&text, "profile.toml").unwrap();
    // Every key of the schema outside the idle states, once: the key list comes from the
    // schema's own rendering, not from a copy of it.
    let schema = schedlab_engine::MachineProfile::default().to_toml();
    let (want, schema_states) = split_idle_states(&schema);
    let (got, states) = split_idle_states(&text);
    assert_eq!(got, want, "in\n{text}");
    // The idle states: as many as this machine's cpuidle driver gives (none, haltpoll's
    // POLL and halt, acpi_idle's or intel_idle's C-states), each with the keys of one state.
    let one_state = &schema_states[0];
    assert!(one_state.iter().any(|k| k == "exit_ns"), "{one_state:?}");
    assert_eq!(states.len(), profile.wakeup.idle_states.len(), "{text}");
    for (i, st) in states.iter().enumerate() {
        let extra: Vec<_> = st.iter().filter(|k| !one_state.contains(k)).collect();
        let missing: Vec<_> = one_state.iter().filter(|k| !st.contains(k)).collect();
        assert!(missing.is_empty(), "state {i} lacks {missing:?}:\n{text}");
        // Only cpuidle's POLL state, the first, has a key more.
        assert!(
            extra.is_empty() || (i == 0 && extra == ["polling"]),
            "state {i} has {extra:?}:\n{text}"
        );
    }
    // The governor is the one the sysfs tree the product reads names.
    let root = std::env::var_os("SCHEDLAB_SYSFS_ROOT")
        .filter(|v| !v.is_empty())
        .map_or_else(|| std::path::PathBuf::from("/sys"), Into::into);
    let driver = std::fs::read_to_string(root.join("devices/system/cpu/cpuidle/current_driver"))
        .map(|d| d.trim().to_string())
        .unwrap_or_else(|_| "absent".into());
    let governor = text
        .lines()
        .find(|l| l.starts_with("governor = "))
        .unwrap_or_else(|| panic!("no governor line:\n{text}"));
    assert!(
        governor.contains(&format!("cpuidle driver {driver}")),
        "{governor} (driver {driver} in {})",
        root.display()
    );
    match driver.as_str() {
        // haltpoll's window can never open when guest_halt_poll_ns is 0: every idle halts.
        "haltpoll"
            if std::fs::read_to_string(
                root.join("module/haltpoll/parameters/guest_halt_poll_ns"),
            )
            .is_ok_and(|v| v.trim() == "0") =>
        {
            assert!(governor.starts_with("governor = \"elapsed\""), "{governor}");
            assert!(!profile.wakeup.idle_states[0].polling, "{text}");
        }
        "haltpoll" => {
            assert!(
                governor.starts_with("governor = \"haltpoll\""),
                "{governor}"
            );
            assert!(profile.wakeup.idle_states[0].polling, "{text}");
        }
        "none" | "absent" => {
            assert!(governor.starts_with("governor = \"elapsed\""), "{governor}")
        }
        _ => {}
    }
    assert!(text.contains("schema = \"schedlab.profile/1\""));
    // Measured keys carry their statistics; context switches are always measurable.
    let ctx = text
        .lines()
        .find(|l| l.starts_with("ctx_switch_ns = "))
        .unwrap();
    assert!(ctx.contains("# measured: median "), "{ctx}");
    // Every value line says where its value came from.
    for l in text.lines().filter(|l| {
        l.contains(" = ")
            && !l.starts_with("schema")
            && !l.starts_with("name")
            && !l.starts_with("source")
    }) {
        assert!(l.contains("# measured") || l.contains("# default"), "{l}");
    }
}

/// The `section.key` of every value line of a profile file outside the idle states, sorted;
/// and the keys of each `[[wakeup.idle_states]]` block, sorted, in file order.
fn split_idle_states(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut section = String::new();
    let mut keys: Vec<String> = Vec::new();
    let mut states: Vec<Vec<String>> = Vec::new();
    for l in text.lines() {
        let l = l.trim();
        if l.starts_with('[') {
            section = l.trim_matches(|c| c == '[' || c == ']').to_string();
            if section == "wakeup.idle_states" {
                states.push(Vec::new());
            }
        } else if let Some((k, _)) = l.split_once(" = ")
            && !l.starts_with('#')
        {
            if section == "wakeup.idle_states" {
                states.last_mut().unwrap().push(k.to_string());
            } else {
                keys.push(format!("{section}.{k}").trim_start_matches('.').to_string());
            }
        }
    }
    keys.sort();
    for s in &mut states {
        s.sort();
    }
    (keys, states)
}

/// Whether tracefs capture can run here; prints why not.
fn tracefs_usable(stderr: &str) -> bool {
    if stderr.contains("tracefs unavailable") {
        println!("skipped: {}", stderr.trim());
        return false;
    }
    true
}

#[test]
fn capture_writes_both_files_and_restores_tracefs() {
    let dir = tempdir();
    let base = dir.path().join("sleep");
    let before = tracefs_state();
    let out = schedlab_host_env()
        .args([
            "host",
            "capture",
            "-o",
            base.to_str().unwrap(),
            "--",
            "sleep",
            "0.05",
        ])
        .output()
        .unwrap();
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    if !out.status.success() && !tracefs_usable(&se) {
        return;
    }
    success(&out, "host capture");
    assert!(so.contains("captured `sleep 0.05`: exit 0"), "{so}");
    let txt = std::fs::read_to_string(dir.path().join("sleep.txt")).unwrap();
    assert!(txt.lines().any(|l| l.contains(" sched_switch: ")), "{txt}");
    // The sleep itself blocked and was woken: its comm appears in switch events.
    assert!(txt.contains("sleep"), "no `sleep` task in the trace");
    let pf = std::fs::metadata(dir.path().join("sleep.pftrace")).unwrap();
    assert!(pf.len() > 100, "{}", pf.len());
    assert!(so.contains("sched_switch"), "{so}");
    // Tracing state is as it was (or tracefs is unmounted again if it was not mounted).
    assert_eq!(tracefs_state(), before);
}

#[test]
fn capture_without_command_is_a_usage_error() {
    let out = schedlab_host_env()
        .args(["host", "capture", "-o", "/tmp/x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

// ---- --external: the real tools ----------------------------------------------------------------

/// Makes `bin` available, installing Debian `package` if possible; false (with a printed
/// reason) when it cannot.
fn ensure_tool(bin: &str, package: &str) -> bool {
    let have = || {
        std::process::Command::new("sh")
            .args([
                "-c",
                &format!("command -v {bin} || ls /usr/lib/postgresql/*/bin/{bin}"),
            ])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    if have() {
        return true;
    }
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    if !root {
        println!("skipped: `{bin}` not installed and not root to install `{package}`");
        return false;
    }
    let install = || {
        std::process::Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends", package])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    if !install() {
        let _ = std::process::Command::new("apt-get").arg("update").output();
        install();
    }
    if have() {
        return true;
    }
    println!("skipped: could not install the Debian package `{package}` for `{bin}`");
    false
}

#[test]
fn external_hackbench_and_pipe() {
    if ensure_tool("hackbench", "rt-tests") {
        let out = host_ok(&["run", "--external", "hackbench:groups=1,loops=10,ipc=pipe"]);
        assert!(
            out.contains("Running in process mode with 1 groups"),
            "{out}"
        );
        assert!(number_after(&out, "Time:") > 0.0);
    }
    if ensure_tool("perf", "linux-perf") {
        let out = host_ok(&["run", "--external", "--json", "pipe:loops=2000"]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["metrics"][0]["name"], "usecs_per_op");
        assert!(v["metrics"][0]["value"].as_f64().unwrap() > 0.0);
        assert!(
            v["native"]
                .as_str()
                .unwrap()
                .contains("# Executed 2000 pipe operations")
        );
    }
}

#[test]
fn external_tbench() {
    if !ensure_tool("tbench", "dbench") {
        return;
    }
    let out = host_ok(&[
        "run",
        "--external",
        "--json",
        "tbench:clients=1,duration=2s",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["metrics"][0]["name"], "throughput_mb_s");
    assert!(v["metrics"][0]["value"].as_f64().unwrap() > 0.0, "{out}");
    assert!(v["native"].as_str().unwrap().contains("1 clients  1 procs"));
}

#[test]
fn external_pgbench_on_a_throwaway_server() {
    if !ensure_tool("pgbench", "postgresql") || !ensure_tool("initdb", "postgresql") {
        return;
    }
    let before: Vec<_> = leftover_pg_dirs();
    let out = host_ok(&[
        "run",
        "--external",
        "--json",
        "pgbench:clients=2,duration=1s",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["metrics"][0]["name"], "tps");
    assert!(v["metrics"][0]["value"].as_f64().unwrap() > 0.0, "{out}");
    assert!(
        v["native"]
            .as_str()
            .unwrap()
            .contains("number of clients: 2")
    );
    // The server's directory is gone again (and nothing new is left; a run also removes
    // the directories that killed runs left, so some of `before` may be gone too).
    let after = leftover_pg_dirs();
    assert!(
        after.iter().all(|d| before.contains(d)),
        "{after:?} vs {before:?}"
    );
}

fn leftover_pg_dirs() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(std::env::temp_dir())
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.starts_with("schedlab-pg-"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn external_schbench_is_explained() {
    let e = host_err(&["run", "--external", "schbench"]);
    assert!(e.contains("not packaged for Debian"), "{e}");
}

#[test]
fn pipe_sides_can_be_pinned_and_a_cpu_outside_the_affinity_is_refused() {
    let out = host_ok(&["run", "pipe:loops=200,cpu_a=0,cpu_b=0"]);
    assert!(out.contains("usecs/op"), "{out}");
    let err = host_err(&["run", "pipe:loops=200,cpu_a=4095"]);
    assert!(err.contains("cpu_a") && err.contains("may run on"), "{err}");
}

#[test]
fn check_needs_a_workload_or_the_suite_and_quick_needs_the_suite() {
    let err = host_err(&["check"]);
    assert!(err.contains("--suite") || err.contains("WORKLOAD"), "{err}");
    let err = host_err(&["check", "pipe:loops=10", "--quick"]);
    assert!(err.contains("--suite"), "{err}");
    let err = host_err(&["check", "pipe:loops=10", "--rounds", "3"]);
    assert!(err.contains("--rounds") && err.contains("--suite"), "{err}");
}

#[test]
fn the_suite_refuses_fewer_than_two_rounds_before_running_anything() {
    for n in ["1", "0"] {
        let err = host_err(&["check", "--suite", "--quick", "--rounds", n]);
        assert!(
            err.contains(&format!("--rounds {n}")) && err.contains("at least 2 rounds"),
            "{err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
    let err = host_err(&["check", "--suite", "--rounds", "-2"]);
    assert!(err.contains("negative"), "{err}");
}

#[test]
fn calibrate_replay_refits_recorded_measurements_without_measuring() {
    let dir = tempdir();
    let out_path = dir.path().join("p.toml");
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../schedlab-fidelity/tests/fixtures/host-epyc-2cpu/calibration.json"
    );
    let out = host_ok(&[
        "calibrate",
        "--replay",
        fixture,
        "-o",
        out_path.to_str().unwrap(),
    ]);
    assert!(
        out.contains("re-simulated calibration microbenchmarks"),
        "{out}"
    );
    for what in ["threads, CPU 0-0", "processes, CPU 0-0", "CPU 0-1 (llc)"] {
        assert!(out.contains(what), "{what} missing:\n{out}");
    }
    let text = std::fs::read_to_string(&out_path).unwrap();
    assert!(
        text.contains("exit_ns = ") && text.contains("fitted by simulation"),
        "{text}"
    );
    // The file is a valid profile the simulator reads.
    let run = schedlab_host_env()
        .args(["run", "-t", "1n1l2c1t", "-w", "pipe:loops=100", "--profile"])
        .arg(&out_path)
        .output()
        .unwrap();
    success(&run, "schedlab");
}

#[test]
fn the_quick_suite_exits_zero_on_misses_and_prints_and_records_both_counts() {
    let dir = tempdir();
    let rec = dir.path().join("suite.json");
    let out = host_ok(&[
        "check",
        "--suite",
        "--quick",
        "--no-capture",
        "--rounds",
        "2",
        "--record",
        rec.to_str().unwrap(),
    ]);
    assert!(out.contains("2 rounds of real runs"), "{out}");
    assert!(out.contains("| real range |"), "{out}");
    let last = out.lines().last().unwrap();
    assert!(
        last.starts_with("host fidelity: ")
            && last.contains("headlines within 15 %")
            && last.contains(" (noise-aware: "),
        "{out}"
    );
    assert!(
        out.contains("real range wider than the tolerance on ")
            || out.contains("real range within the tolerance on every"),
        "{out}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rec).unwrap()).unwrap();
    assert_eq!(json["rounds"], 2);
    let rows = json["rows"].as_array().unwrap();
    for row in rows {
        assert!(row["real"].as_array().unwrap().len() >= 2, "{row}");
    }
    let counts = &json["counts"];
    assert_eq!(counts["strict"]["headlines"]["of"], rows.len());
    assert_eq!(counts["noise_aware"]["headlines"]["of"], rows.len());
    assert!(
        counts["noise_aware"]["headlines"]["within"].as_u64()
            >= counts["strict"]["headlines"]["within"].as_u64(),
        "{counts}"
    );
}
