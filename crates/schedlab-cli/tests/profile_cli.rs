//! CLI tests of `schedlab profile` and of partial profile files laid over the preset's.

mod common;

use common::{schedlab, tempdir};

use predicates::prelude::*;

#[test]
fn profile_show_prints_a_complete_annotated_profile() {
    schedlab()
        .args(["profile", "show", "westmere-2s20c"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "ctx_switch_ns = 1200  # ns; profiles/westmere-2s20c.toml",
        ))
        .stdout(predicate::str::contains("[[wakeup.idle_states]]"));
    schedlab()
        .args(["profile", "show", "no-such"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no profile or topology preset named 'no-such'",
        ));
    schedlab()
        .args(["profile", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("westmere-2s20c"));
}

#[test]
fn a_partial_profile_changes_only_what_it_sets() {
    let dir = tempdir();
    let run = |profile: Option<&std::path::Path>| {
        let mut c = schedlab();
        c.args([
            "run",
            "-t",
            "westmere-2s20c",
            "-w",
            "pipe:loops=300",
            "--json",
        ]);
        if let Some(p) = profile {
            c.arg("--profile").arg(p);
        }
        let out = String::from_utf8(c.assert().success().get_output().stdout.clone()).unwrap();
        // The experiment id hashes the profile path; the results and counters must agree.
        out.lines()
            .filter(|l| !l.contains("\"experiment\""))
            .collect::<Vec<_>>()
            .join("\n")
    };
    // The preset's own numbers, written as a one-key file: the same run as no file at all
    // (before, the missing keys silently became the generic defaults).
    let same = dir.path().join("same.toml");
    std::fs::write(&same, "[cpu]\nctx_switch_ns = 1200\n").unwrap();
    assert_eq!(run(None), run(Some(&same)));
    let slower = dir.path().join("slower.toml");
    std::fs::write(&slower, "[cpu]\nctx_switch_ns = 50000\n").unwrap();
    assert_ne!(run(None), run(Some(&slower)));
}
