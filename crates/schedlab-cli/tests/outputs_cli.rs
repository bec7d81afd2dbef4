//! Output paths that are not plain files (issue 49): a character device, a FIFO or a symlink
//! given as an output is written through or followed, never replaced by a regular file; a
//! results file (`--out`) must be a regular file; two outputs on one file, and a `--trace`
//! name of no known format, are refused before the work. And one SIGTERM or SIGINT stops a
//! long run at once, with 143 or 130, leaving an `--out` file of whole runs.

mod common;

use common::{Guard, bin, schedlab, tempdir};
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const QUICK: &str = "pipe:loops=50";

fn refused(args: &[&str], needle: &str) {
    let out = schedlab().args(args).assert().code(2).get_output().clone();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(err.contains(needle), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
}

/// A character device like /dev/null (1, 3) in `dir`; `None` where mknod is not allowed.
fn null_device(dir: &Path) -> Option<std::path::PathBuf> {
    let p = dir.join("null");
    let ok = Command::new("mknod")
        .arg(&p)
        .args(["c", "1", "3"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: mknod is not allowed here");
        return None;
    }
    Some(p)
}

fn is_char_device(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_char_device())
}

#[test]
fn a_character_device_is_written_through_and_never_replaced() {
    let dir = tempdir();
    let Some(dev) = null_device(dir.path()) else {
        return;
    };
    let d = dev.display().to_string();
    schedlab()
        .args(["run", "-w", QUICK, "--schedstat", &d])
        .assert()
        .success();
    assert!(is_char_device(&dev), "--schedstat replaced the device");
    schedlab()
        .args(["compare", "-w", QUICK, "--reps", "1", "--plot"])
        .arg(dir.path().join("dev.svg"))
        .args(["--report", &d])
        .assert()
        .success();
    assert!(is_char_device(&dev), "--report replaced the device");
    // A results file is read back: a device cannot be one. Refused, and left as it is.
    refused(
        &["compare", "-w", QUICK, "--out", &d],
        "must be a regular file",
    );
    assert!(is_char_device(&dev));
    // /dev/full: the write fails, and says so.
    schedlab()
        .args(["run", "-w", QUICK, "--schedstat", "/dev/full"])
        .assert()
        .code(2);
    assert!(is_char_device(Path::new("/dev/full")));
}

#[test]
fn a_fifo_is_written_through() {
    let dir = tempdir();
    let fifo = dir.path().join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let reader = {
        let f = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(f).unwrap())
    };
    schedlab()
        .args(["run", "-w", QUICK, "--schedstat"])
        .arg(&fifo)
        .timeout(Duration::from_secs(120))
        .assert()
        .success();
    let text = reader.join().unwrap();
    assert!(text.contains("version 15"), "{text}");
    let m = std::fs::symlink_metadata(&fifo).unwrap();
    assert!(m.file_type().is_fifo(), "the FIFO was replaced");
    refused(
        &["compare", "-w", QUICK, "--out", &fifo.display().to_string()],
        "it is a FIFO",
    );
}

#[test]
fn a_symlink_is_followed_and_kept() {
    let dir = tempdir();
    let target = dir.path().join("target.txt");
    std::fs::write(&target, "old").unwrap();
    let link = dir.path().join("link.txt");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    schedlab()
        .args(["run", "-w", QUICK, "--schedstat"])
        .arg(&link)
        .assert()
        .success();
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(&target)
            .unwrap()
            .contains("version 15")
    );
    // --out through a symlink: the target gets the runs, and --resume rewrites the target.
    let runs = dir.path().join("runs.jsonl");
    let out_link = dir.path().join("out.jsonl");
    std::os::unix::fs::symlink("runs.jsonl", &out_link).unwrap();
    for extra in [&[][..], &["--resume"][..]] {
        schedlab()
            .args(["compare", "-w", QUICK, "--reps", "1", "--out"])
            .arg(&out_link)
            .args(extra)
            .assert()
            .success();
        assert!(
            std::fs::symlink_metadata(&out_link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(
            std::fs::read_to_string(&runs)
                .unwrap()
                .contains("schedlab.plan/1")
        );
    }
}

#[test]
fn two_outputs_on_one_file_are_refused_before_the_work() {
    let dir = tempdir();
    let p = |f: &str| dir.path().join(f).display().to_string();
    // A plan of hours: refused at once, so the check comes before any run.
    let long = "tbench:duration=1000s";
    refused(
        &[
            "compare",
            "-w",
            long,
            "--plot",
            &p("a.svg"),
            "--report",
            &p("a.svg"),
        ],
        "name the same file",
    );
    refused(
        &[
            "compare",
            "-w",
            long,
            "--out",
            &p("a.jsonl"),
            "--report",
            &p("a.jsonl"),
        ],
        "name the same file",
    );
    refused(
        &[
            "run",
            "-w",
            long,
            "--schedstat",
            &p("a.txt"),
            "--trace",
            &p("a.txt"),
        ],
        "name the same file",
    );
    // A symlink and its target are one file.
    std::fs::write(p("t.html"), "").unwrap();
    std::os::unix::fs::symlink(p("t.html"), p("l.html")).unwrap();
    refused(
        &[
            "compare",
            "-w",
            long,
            "--plot",
            &p("x.svg"),
            "--report",
            &p("t.html"),
            "--out",
            &p("l.html"),
        ],
        "name the same file",
    );
    // /dev/null takes any number of outputs.
    schedlab()
        .args([
            "compare",
            "-w",
            QUICK,
            "--reps",
            "1",
            "--plot",
            "/dev/null",
            "--report",
            "/dev/null",
        ])
        .assert()
        .success();
}

#[test]
fn a_trace_name_of_no_known_format_is_refused_before_the_work() {
    let dir = tempdir();
    let bad = dir.path().join("x.json").display().to_string();
    refused(
        &["run", "-w", "tbench:duration=1000s", "--trace", &bad],
        "use a .pftrace (Perfetto) or .txt",
    );
    // The extension's case does not matter.
    let upper = dir.path().join("x.TXT");
    schedlab()
        .args(["run", "-w", QUICK, "--trace"])
        .arg(&upper)
        .assert()
        .success();
    assert!(std::fs::metadata(&upper).unwrap().len() > 0);
}

/// Starts `args`, sends `sig` after a second, and returns its exit code and how long it took
/// to end after the signal.
fn stopped_by(args: &[&str], sig: libc::c_int) -> (Option<i32>, Duration) {
    let child = Command::new(bin())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut g = Guard::new(child);
    std::thread::sleep(Duration::from_secs(1));
    // SAFETY: signalling the child this test started.
    unsafe { libc::kill(g.id() as libc::pid_t, sig) };
    let t = Instant::now();
    loop {
        if let Some(s) = g.child.try_wait().unwrap() {
            return (s.code(), t.elapsed());
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "{args:?} did not stop"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn one_signal_stops_a_long_run_at_once() {
    let (code, took) = stopped_by(&["run", "-w", "tbench:duration=3000s"], libc::SIGTERM);
    assert_eq!(code, Some(143));
    assert!(took < Duration::from_secs(3), "took {took:?}");
    let (code, took) = stopped_by(&["run", "-w", "tbench:duration=3000s"], libc::SIGINT);
    assert_eq!(code, Some(130));
    assert!(took < Duration::from_secs(3), "took {took:?}");
}

#[test]
fn a_stopped_compare_leaves_whole_runs_to_resume() {
    let dir = tempdir();
    let out = dir.path().join("runs.jsonl").display().to_string();
    // Short runs finish and are appended while the long one is running.
    let (code, took) = stopped_by(
        &[
            "compare",
            "-w",
            "pipe:loops=20000",
            "--reps",
            "400",
            "-j",
            "2",
            "--force",
            "--out",
            &out,
        ],
        libc::SIGTERM,
    );
    assert_eq!(code, Some(143));
    assert!(took < Duration::from_secs(3), "took {took:?}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.ends_with('\n'), "a torn last line");
    for line in text.lines() {
        serde_json::from_str::<serde_json::Value>(line).unwrap();
    }
}
