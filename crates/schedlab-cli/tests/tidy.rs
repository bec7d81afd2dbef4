//! Tidy checks of the repository itself, run by `cargo test`: every path that the README, the
//! docs, ARCHITECTURE.md and the CLI's `--help` name exists; nothing refers to material outside
//! the repository; the declared `rust-version` is at least what the locked dependencies need.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// Top-level folders whose paths the docs name; a token starting with one of them is a path.
const TOP: &[&str] = &[
    "crates/",
    "docs/",
    "examples/",
    "experiments/",
    "profiles/",
    "scripts/",
    "workloads/",
];

/// Every markdown file the repository ships (README, ARCHITECTURE, docs/**, crate READMEs).
fn markdown_files() -> Vec<PathBuf> {
    files_with(&["md"])
}

/// Every file below the root with one of these extensions (not `target/`, not dot folders).
fn files_with(exts: &[&str]) -> Vec<PathBuf> {
    fn walk(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with('.') || name == "target" {
                continue;
            }
            if p.is_dir() {
                walk(&p, exts, out);
            } else if p
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| exts.contains(&e))
            {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root(), exts, &mut out);
    out
}

/// Repository paths named in `text`: tokens that start with a top-level folder, cut at the first
/// character that cannot be part of a path, with trailing punctuation dropped. Tokens with
/// wildcards or placeholders (`*`, `<`, `{`, `NAME`) are patterns, not paths, and are skipped.
fn named_paths(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.char_indices() {
        let rest = &text[i..];
        let Some(top) = TOP.iter().find(|t| rest.starts_with(**t)) else {
            continue;
        };
        // A path starts the token: not preceded by a path character (so `src/docs/` is no hit).
        if let Some(prev) = text[..i].chars().next_back()
            && (prev.is_alphanumeric() || "_-./".contains(prev))
        {
            continue;
        }
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || "_-./*<>{}".contains(c)))
            .unwrap_or(rest.len());
        let tok = rest[..end].trim_end_matches(['.', ',', ':']);
        if tok.len() <= top.len()
            || tok.contains(['*', '<', '>', '{', '}'])
            || tok.contains("NAME")
            || tok.contains("...")
        {
            continue;
        }
        out.insert(tok.to_string());
    }
    out
}

/// Relative markdown link targets `](path)` of a file, resolved against its folder.
fn link_targets(file: &Path, text: &str) -> Vec<PathBuf> {
    let dir = file.parent().expect("file has a folder");
    text.match_indices("](")
        .filter_map(|(i, _)| {
            let rest = &text[i + 2..];
            let end = rest.find(')')?;
            let target = rest[..end].split('#').next().unwrap_or("");
            (!target.is_empty() && !target.contains("://") && !target.starts_with("mailto:"))
                .then(|| dir.join(target))
        })
        .collect()
}

#[test]
fn documented_paths_exist() {
    let root = root();
    let mut missing = Vec::new();
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).expect("markdown is UTF-8");
        let rel = file
            .strip_prefix(&root)
            .unwrap_or(&file)
            .display()
            .to_string();
        for p in named_paths(&text) {
            if !root.join(&p).exists() {
                missing.push(format!("{rel}: {p}"));
            }
        }
        for t in link_targets(&file, &text) {
            if !t.exists() {
                missing.push(format!("{rel}: link {}", t.display()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "paths named in the docs that do not exist:\n  {}",
        missing.join("\n  ")
    );
}

/// The help of every subcommand (and of the host subcommands) names only existing paths.
#[test]
fn help_names_existing_paths() {
    let bin = env!("CARGO_BIN_EXE_schedlab");
    let root = root();
    let mut texts = Vec::new();
    for cmd in [
        &[][..],
        &["run"],
        &["compare"],
        &["merge"],
        &["validate"],
        &["policies"],
        &["workloads"],
        &["topo"],
        &["bench"],
        &["host"],
        &["host", "run"],
        &["host", "capture"],
        &["host", "calibrate"],
        &["host", "check"],
        &["replay"],
        &["replay", "derive"],
        &["replay", "check"],
    ] {
        let out = Command::new(bin)
            .args(cmd)
            .arg("--help")
            .output()
            .expect("schedlab runs");
        assert!(out.status.success(), "schedlab {cmd:?} --help failed");
        texts.push((
            cmd.join(" "),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        ));
    }
    let mut missing = Vec::new();
    for (cmd, text) in &texts {
        for p in named_paths(text) {
            if !root.join(&p).exists() {
                missing.push(format!("schedlab {cmd} --help: {p}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "help names missing paths:\n  {}",
        missing.join("\n  ")
    );
}

#[test]
fn path_scanner_finds_paths_and_skips_patterns() {
    let found = named_paths(
        "see docs/validation.md, `experiments/r2-sis-rewrite.toml` and crates/x/src/docs/y; \
         not experiments/*.toml nor profiles/NAME.toml",
    );
    let want: BTreeSet<String> = ["docs/validation.md", "experiments/r2-sis-rewrite.toml"]
        .into_iter()
        .map(String::from)
        .chain(std::iter::once("crates/x/src/docs/y".to_string()))
        .collect();
    assert_eq!(found, want);
}

/// Parses `1.89` / `1.89.0` into comparable numbers.
fn version(v: &str) -> (u64, u64, u64) {
    let mut it = v.split('.').map(|x| x.parse::<u64>().unwrap_or(0));
    (
        it.next().unwrap_or(0),
        it.next().unwrap_or(0),
        it.next().unwrap_or(0),
    )
}

/// `cargo metadata` of the locked workspace, for this platform (offline first: a test run has
/// every package it builds already; online as a fallback).
fn metadata() -> serde_json::Value {
    let cargo = option_env!("CARGO").unwrap_or("cargo");
    let host = std::env::var("TARGET").unwrap_or_else(|_| {
        let out = Command::new("rustc")
            .arg("-vV")
            .output()
            .expect("rustc runs");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
            .expect("rustc -vV names the host")
    });
    for offline in [true, false] {
        let mut cmd = Command::new(cargo);
        cmd.current_dir(root()).args([
            "metadata",
            "--format-version",
            "1",
            "--locked",
            "--filter-platform",
            &host,
        ]);
        if offline {
            cmd.arg("--offline");
        }
        let out = cmd.output().expect("cargo runs");
        if out.status.success() {
            return serde_json::from_slice(&out.stdout).expect("cargo metadata is JSON");
        }
    }
    panic!("cargo metadata failed both offline and online");
}

#[test]
fn rust_version_covers_the_locked_dependencies() {
    let m = metadata();
    let members: BTreeSet<&str> = m["workspace_members"]
        .as_array()
        .expect("members")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    let mut declared = None;
    let mut needed = ((0, 0, 0), String::new());
    for p in m["packages"].as_array().expect("packages") {
        let id = p["id"].as_str().unwrap_or("");
        let Some(rv) = p["rust_version"].as_str() else {
            continue;
        };
        if members.contains(id) {
            declared = Some(version(rv));
        } else if version(rv) > needed.0 {
            needed = (version(rv), format!("{} {}", p["name"], p["version"]));
        }
    }
    let declared = declared.expect("the workspace declares rust-version");
    assert!(
        declared >= needed.0,
        "rust-version {declared:?} is older than {:?}, which {} declares",
        needed.0,
        needed.1
    );
}

/// The repository stands on its own: no comment, doc, output text or data file cites material
/// a user of the repository does not have (the development reference notes beside the
/// checkout, or numbered sections of them). Cite the kernel function and version instead, and put
/// what a reader needs into `docs/`.
#[test]
fn nothing_cites_material_outside_the_repository() {
    let root = root();
    // Built from pieces so that this file does not match itself.
    let banned = [
        "\u{a7}".to_string(),
        format!("../{}", "shared"),
        format!("{}/spec", "shared"),
        format!("{}-wakeup.md", "linux"),
        format!("{}-model.md", "cost"),
        format!("{}marks.md", "bench"),
    ];
    let mut hits = Vec::new();
    for f in files_with(&["rs", "md", "toml", "sh", "json", "txt", "py"]) {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            for b in &banned {
                if line.contains(b.as_str()) {
                    let rel = f.strip_prefix(&root).unwrap_or(&f).display().to_string();
                    hits.push(format!("{rel}:{}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        hits.is_empty(),
        "references to material outside the repository:\n  {}",
        hits.join("\n  ")
    );
}
