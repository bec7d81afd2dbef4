//! `schedlab validate` as a user meets it: a case of one's own is a file, the exit status says
//! whether every check passed (1 when one failed, 0 with --no-fail, 2 on bad input), the last
//! line is a summary a script can read, and the record is spliced into a markdown file.

mod common;

use common::{schedlab, tempdir};

use predicates::prelude::*;

/// A small case: a pipe pair on the desktop preset, linux-6.6 against itself (no difference,
/// so the `same` check passes) and a check that demands a difference (so it fails).
const CASE: &str = r#"
name = "LAB1"
description = "our lab: a pipe pair under linux-6.6, twice"
source = "a table of our own"

[[run]]
id = "pipe"
topology = "desktop-4c8t"
workload = "pipe:loops=300"
variants = ["linux-6.6", "linux-6.6"]
reps = 2
sweep = { pairs = [1, 2] }
[run.quick]
reps = 2
sweep = { pairs = [1] }

[[check]]
run = "pipe"
name = "one pair: no difference"
kind = "ratio"
variant = 1
rule = "same"
point = { pairs = 1 }
published = 1.0

[[check]]
run = "pipe"
name = "two pairs: a difference that cannot be there"
kind = "ratio"
variant = 1
rule = "above"
point = { pairs = 2 }
"#;

fn case_file(dir: &tempfile::TempDir, text: &str) -> String {
    let p = dir.path().join("lab1.toml");
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn a_case_file_runs_and_a_failing_check_fails_the_command() {
    let dir = tempdir();
    let f = case_file(&dir, CASE);
    let out = schedlab().args(["validate", &f]).assert().code(1);
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        stdout.contains("[PASS] one pair: no difference"),
        "{stdout}"
    );
    assert!(stdout.contains("[FAIL] two pairs"), "{stdout}");
    assert_eq!(
        stdout.lines().last().unwrap(),
        "validate: 1 of 2 checks pass (cases: LAB1 1/2)"
    );
    // Off a terminal, one line per finished case on stderr.
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("validate: case LAB1 done in"), "{stderr}");
}

#[test]
fn no_fail_reports_without_failing_and_quick_says_what_it_reduced() {
    let dir = tempdir();
    let f = case_file(&dir, CASE);
    schedlab()
        .args(["validate", &f, "--quick", "--no-fail"])
        .assert()
        .success()
        // The quick form has no pairs=2 point, so only the first check is evaluated.
        .stdout(predicate::str::contains(
            "reduced: pipe: sweep pairs=[1] instead of pairs=[1, 2]",
        ))
        .stdout(predicate::str::ends_with(
            "validate: 1 of 1 checks pass (cases: LAB1 1/1)\n",
        ));
}

#[test]
fn json_carries_the_summary() {
    let dir = tempdir();
    let f = case_file(&dir, CASE);
    let out = schedlab()
        .args(["validate", &f, "--json", "--no-fail"])
        .assert()
        .success();
    let j: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(j["cases"][0]["name"], "LAB1");
    assert_eq!(j["cases"][0]["checks"].as_array().unwrap().len(), 2);
    assert_eq!(
        j["summary"],
        "validate: 1 of 2 checks pass (cases: LAB1 1/2)"
    );
}

#[test]
fn the_record_is_spliced_between_the_markers() {
    let dir = tempdir();
    let f = case_file(&dir, CASE);
    let doc = dir.path().join("record.md");
    let begin = "<!-- BEGIN schedlab validate --markdown: generated, do not edit -->";
    let end = "<!-- END schedlab validate --markdown -->";
    std::fs::write(
        &doc,
        format!("# Ours\n\nkept\n\n{begin}\nold\n{end}\n\ntail kept\n"),
    )
    .unwrap();
    schedlab()
        .args(["validate", &f, "--no-fail", "--markdown"])
        .arg(&doc)
        .assert()
        .success();
    let text = std::fs::read_to_string(&doc).unwrap();
    assert!(text.starts_with("# Ours\n\nkept\n\n"), "{text}");
    assert!(text.ends_with("\n\ntail kept\n"), "{text}");
    assert!(!text.contains("\nold\n"), "{text}");
    assert!(
        text.contains("| one pair: no difference | PASS | 1.000 |"),
        "{text}"
    );
    assert!(
        text.contains("| two pairs: a difference that cannot be there | **FAIL** |"),
        "{text}"
    );
    assert!(text.contains("at revision `"), "{text}");
}

#[test]
fn bad_case_files_are_clear_errors_before_any_run() {
    let dir = tempdir();
    for (text, needle) in [
        (
            CASE.replace(
                "run = \"pipe\"\nname = \"one",
                "run = \"pipes\"\nname = \"one",
            ),
            "reads run 'pipes'",
        ),
        (
            CASE.replace("kind = \"ratio\"", "kind = \"ratios\""),
            "unknown variant `ratios`",
        ),
        (
            CASE.replace(
                "variant = 1\nrule = \"same\"",
                "variant = 5\nrule = \"same\"",
            ),
            "names a variant past",
        ),
        (CASE.replace("rule = \"same\"\n", ""), "needs a rule"),
    ] {
        let f = case_file(&dir, &text);
        schedlab()
            .args(["validate", &f])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(needle));
    }
    // A missing markdown file is refused before the work starts.
    let f = case_file(&dir, CASE);
    schedlab()
        .args(["validate", &f, "--markdown", "/nonexistent/v.md"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read /nonexistent/v.md"));
}
