//! The README's and the docs' examples against the binary, so that they cannot drift: the
//! sample table is what the README's main job prints (results are deterministic), every
//! documented `schedlab` command names a subcommand and flags that exist, the quick ones
//! (listings and `show`s) run, and `docs/replay.md`'s `replay check` table is what
//! `replay check` prints on the committed fixtures.
//!
//! Kept quick: the main job is the one simulation here (a few seconds in the test profile);
//! the replay rows take six replays of short traces.

mod common;

use common::{root, schedlab_at_root, success};

use std::collections::BTreeMap;

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The fenced blocks of `lang` in a markdown text, each as its lines.
fn blocks<'a>(text: &'a str, lang: &str) -> Vec<Vec<&'a str>> {
    let mut out = Vec::new();
    // Inside a block: whether it is one of `lang`, and its lines.
    let mut cur: Option<(bool, Vec<&str>)> = None;
    for l in text.lines() {
        let fence = l.trim_start().strip_prefix("```");
        match (&mut cur, fence) {
            (Some((keep, b)), Some(_)) => {
                if *keep {
                    out.push(std::mem::take(b));
                }
                cur = None;
            }
            (Some((_, b)), None) => b.push(l),
            (None, Some(tag)) => cur = Some((tag.trim() == lang, Vec::new())),
            (None, None) => {}
        }
    }
    out
}

/// The `schedlab ...` commands of the `sh` blocks, continuation lines joined and trailing
/// comments cut, as argument lists (without `schedlab`).
fn documented_commands(text: &str) -> Vec<Vec<String>> {
    let mut cmds = Vec::new();
    for b in blocks(text, "sh") {
        let mut joined: Vec<String> = Vec::new();
        let mut pending = String::new();
        for l in b {
            let l = match l.find(" #") {
                Some(i) => &l[..i],
                None => l,
            };
            let l = l.trim();
            if let Some(head) = l.strip_suffix('\\') {
                pending.push_str(head);
                pending.push(' ');
                continue;
            }
            pending.push_str(l);
            joined.push(std::mem::take(&mut pending));
        }
        for line in joined {
            // `cmd && schedlab ...`, `... | schedlab ...`: the schedlab part.
            for part in line.split("&&").flat_map(|p| p.split('|')) {
                let words: Vec<String> = part.split_whitespace().map(String::from).collect();
                if words.first().is_some_and(|w| w == "schedlab") && words.len() > 1 {
                    cmds.push(words[1..].to_vec());
                }
            }
        }
    }
    cmds
}

/// The subcommand path of an argument list: `topo show`, `host capture`, `compare`.
fn subcommand(args: &[String]) -> Vec<String> {
    let nested = ["topo", "profile", "host", "replay"];
    let n = if nested.contains(&args[0].as_str()) && args.len() > 1 {
        2
    } else {
        1
    };
    args[..n].to_vec()
}

fn help(path: &[String], cache: &mut BTreeMap<Vec<String>, String>) -> String {
    cache
        .entry(path.to_vec())
        .or_insert_with(|| {
            let out = schedlab_at_root()
                .args(path)
                .arg("--help")
                .output()
                .unwrap();
            success(&out, format_args!("`schedlab {} --help`", path.join(" ")))
        })
        .clone()
}

fn doc_files() -> Vec<String> {
    let mut files = vec!["README.md".to_string(), "ARCHITECTURE.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

#[test]
fn readme_sample_output_is_what_the_main_job_prints() {
    let readme = read("README.md");
    // The block after the main job's command.
    let at = readme
        .find("It prints a table")
        .expect("the README introduces its sample output");
    let sample = blocks(&readme[at..], "text")
        .into_iter()
        .next()
        .expect("a text block after it");
    let out = schedlab_at_root().arg("compare").output().unwrap();
    success(&out, "schedlab");
    let printed = String::from_utf8_lossy(&out.stdout).into_owned();
    // Every sample line is a printed line, in order; `...` stands for lines left out.
    let mut lines = printed.lines();
    for want in sample.iter().filter(|l| l.trim() != "...") {
        assert!(
            lines.any(|got| got == *want),
            "README line not printed (in this order) by `schedlab compare`:\n{want}\n\nprinted:\n{printed}"
        );
    }
}

#[test]
fn documented_commands_name_existing_subcommands_and_flags() {
    let mut cache = BTreeMap::new();
    let mut checked = 0;
    for file in doc_files() {
        for args in documented_commands(&read(&file)) {
            let path = subcommand(&args);
            let text = help(&path, &mut cache);
            for a in &args[path.len()..] {
                if a == "--" {
                    break; // the traced command's own arguments follow
                }
                let Some(flag) = a.strip_prefix("--") else {
                    continue;
                };
                let flag = flag.split('=').next().unwrap_or(flag);
                assert!(
                    text.contains(&format!("--{flag}")),
                    "{file}: `schedlab {}`: `schedlab {}` has no --{flag}",
                    args.join(" "),
                    path.join(" ")
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 40, "only {checked} documented commands found");
}

#[test]
fn documented_listings_and_shows_run() {
    // Commands that only read built-in data: each documented one must succeed as written.
    let quick = |a: &[String]| match a[0].as_str() {
        "policies" | "workloads" => true,
        "topo" | "profile" => {
            a.get(1).is_some_and(|s| s == "list" || s == "show")
                && a.iter().skip(2).all(|w| !w.contains('.') && w != "host")
        }
        _ => false,
    };
    let mut ran = 0;
    for file in doc_files() {
        for args in documented_commands(&read(&file))
            .into_iter()
            .filter(|a| quick(a))
        {
            let out = schedlab_at_root().args(&args).output().unwrap();
            success(&out, format_args!("{file}: `schedlab {}`", args.join(" ")));
            ran += 1;
        }
    }
    assert!(ran >= 5, "only {ran} listing commands found");
}

/// The metric cells of `replay check`'s table, in the columns of docs/replay.md: total time,
/// CPU time, switches, wakeups, local wakeups, migrations, p50, p99; each (real, error).
fn check_cells(fixture: &str, pid: &str, background: &str) -> Vec<(String, String)> {
    let trace = format!("crates/schedlab-cli/tests/fixtures/replay/{fixture}.txt.gz");
    let out = schedlab_at_root()
        .args([
            "replay",
            "check",
            &trace,
            "-t",
            "1n1l2c1t",
            "-v",
            "linux-6.12",
        ])
        .args(["--only", pid, "--background", background])
        .output()
        .unwrap();
    success(&out, "schedlab");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let rows = [
        ("total time [ms]", " ms"),
        ("CPU time, all tasks [ms]", " ms"),
        ("context switches", ""),
        ("wakeups", ""),
        ("  local (same CPU)", ""),
        ("migrations", ""),
        ("wakeup latency p50 [us]", " µs"),
        ("wakeup latency p99 [us]", " µs"),
    ];
    rows.iter()
        .map(|(name, unit)| {
            let line = text
                .lines()
                .find(|l| l.starts_with(name) && l[name.len()..].starts_with(' '))
                .unwrap_or_else(|| panic!("no `{name}` row:\n{text}"));
            let w: Vec<&str> = line[name.len()..].split_whitespace().collect();
            let real: f64 = w[0].parse().unwrap();
            let real = if unit == &" ms" {
                format!("{real:.1} ms")
            } else {
                format!("{real:.0}{unit}")
            };
            (real, w[2].replace('%', " %"))
        })
        .collect()
}

#[test]
fn replay_check_rows_are_what_docs_replay_md_says() {
    let doc = read("docs/replay.md");
    let at = doc
        .find("## `replay check`")
        .expect("docs/replay.md has its replay check section");
    let rows: Vec<Vec<String>> = doc[at..]
        .lines()
        .skip_while(|l| !l.starts_with("| trace | `--background`"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), 6, "{rows:?}");
    let fixtures = [
        ("pipe", "22007"),
        ("hackbench", "22118"),
        ("tbench", "22203"),
    ];
    for (i, row) in rows.iter().enumerate() {
        let (fixture, pid) = fixtures[i / 2];
        let bg = &row[1];
        let cells = check_cells(fixture, pid, bg.trim_matches('`'));
        for (c, (real, err)) in cells.iter().enumerate() {
            // `drop` rows give the real value and the error; `fold` rows the error only.
            let want = if bg == "drop" {
                format!("{real}, {err}")
            } else {
                err.clone()
            };
            assert_eq!(
                row[2 + c],
                want,
                "docs/replay.md, {fixture} / {bg}, column {}",
                c + 1
            );
        }
    }
}
