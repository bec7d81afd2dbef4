//! Tidy checks of the repository itself, run by `cargo test`: every path that the README, the
//! docs, ARCHITECTURE.md and the CLI's `--help` name exists; nothing refers to material outside
//! the repository; the declared `rust-version` is at least what the locked dependencies need.

use std::collections::{BTreeMap, BTreeSet};
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

// ---------------------------------------------------------------------------------------------
// The architecture's invariants, as ARCHITECTURE.md states them
// ---------------------------------------------------------------------------------------------

/// The "Crate dependencies" table of ARCHITECTURE.md: each crate and the workspace crates it
/// may depend on (`—` for none, `any` for the binary). The table is the statement; the test
/// holds the manifests to it, so the map cannot drift from the code.
fn documented_dependencies() -> Vec<(String, Option<BTreeSet<String>>)> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let start = text
        .find("### Crate dependencies")
        .expect("ARCHITECTURE.md has a '### Crate dependencies' section");
    let mut rows = Vec::new();
    for line in text[start..].lines().skip(1) {
        if line.starts_with("#") {
            break;
        }
        let cells: Vec<&str> = line
            .trim()
            .trim_matches('|')
            .split('|')
            .map(str::trim)
            .collect();
        if cells.len() != 2 || !cells[0].starts_with("`schedlab-") {
            continue;
        }
        let name = cells[0].trim_matches('`').to_string();
        let allowed = match cells[1] {
            "any" => None,
            "—" => Some(BTreeSet::new()),
            list => Some(
                list.split(',')
                    .map(|s| s.trim().trim_matches('`').to_string())
                    .collect(),
            ),
        };
        rows.push((name, allowed));
    }
    rows
}

/// Every crate's normal and build dependencies on workspace crates are the ones the table of
/// ARCHITECTURE.md allows, and every crate under `crates/` has a row. (Dev-dependencies are
/// free, except the host harness's: `schedlab-host/tests/deps.rs` checks those too.)
#[test]
fn crate_dependencies_are_the_documented_ones() {
    let documented = documented_dependencies();
    let m = metadata();
    let mut wrong = Vec::new();
    let mut seen = BTreeSet::new();
    for p in m["packages"].as_array().expect("packages") {
        let name = p["name"].as_str().unwrap_or("");
        let manifest = p["manifest_path"].as_str().unwrap_or("");
        if !manifest.contains("/crates/") || !name.starts_with("schedlab-") {
            continue;
        }
        seen.insert(name.to_string());
        let Some((_, allowed)) = documented.iter().find(|(n, _)| n == name) else {
            wrong.push(format!(
                "{name}: no row in ARCHITECTURE.md's crate dependencies"
            ));
            continue;
        };
        let deps: BTreeSet<String> = p["dependencies"]
            .as_array()
            .expect("dependencies")
            .iter()
            .filter(|d| d["kind"].is_null() || d["kind"] == "build")
            .filter_map(|d| d["name"].as_str())
            .filter(|d| d.starts_with("schedlab-"))
            .map(str::to_string)
            .collect();
        if let Some(allowed) = allowed {
            for d in deps.difference(allowed) {
                wrong.push(format!(
                    "{name} depends on {d}, which the table does not allow"
                ));
            }
            for d in allowed.difference(&deps) {
                wrong.push(format!(
                    "{name}: the table allows {d}, which it does not use"
                ));
            }
        }
    }
    for (n, _) in &documented {
        if !seen.contains(n) {
            wrong.push(format!("ARCHITECTURE.md names {n}, which is not a crate"));
        }
    }
    assert!(
        wrong.is_empty(),
        "crate dependencies:\n  {}",
        wrong.join("\n  ")
    );
}

/// Lines of the Rust sources below `dir` (comments and doc comments left out) that contain
/// one of `needles`, as `file:line: text`.
fn code_lines_with(dir: &Path, needles: &[&str]) -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir)
            .expect("readable source folder")
            .flatten()
        {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, &mut files);
    files.sort();
    let mut hits = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("UTF-8 source");
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            if let Some(nd) = needles.iter().find(|nd| code.contains(**nd)) {
                let rel = f.strip_prefix(root()).unwrap_or(&f).display().to_string();
                hits.push(format!("{rel}:{}: {nd}: {}", n + 1, code));
            }
        }
    }
    hits
}

/// What lets the outside world into a run: files, the environment, clocks, processes, the
/// network, the terminal.
const IMPURE: &[&str] = &[
    "std::fs",
    "fs::read",
    "File::open",
    "File::create",
    "std::env",
    "env::var",
    "std::time",
    "Instant::now",
    "SystemTime",
    "std::process",
    "std::net",
    "stdin()",
    "IsTerminal",
];

/// The engine, the policies and the topology-independent models of the simulator read no
/// file, clock, environment, process or terminal: a run is a pure function of its inputs and
/// seed (ARCHITECTURE.md, the engine's and the policies' invariants).
#[test]
fn the_simulator_core_reads_nothing_from_outside() {
    let mut hits = Vec::new();
    for c in [
        "schedlab-engine",
        "schedlab-policies",
        "schedlab-vocab",
        "schedlab-metrics",
    ] {
        hits.extend(code_lines_with(
            &root().join("crates").join(c).join("src"),
            IMPURE,
        ));
    }
    assert!(
        hits.is_empty(),
        "impure calls in the simulator core:\n  {}",
        hits.join("\n  ")
    );
}

/// Only the binary reads argv or the terminal (ARCHITECTURE.md, `crates/schedlab-cli`).
#[test]
fn only_the_binary_reads_argv_or_the_terminal() {
    let mut hits = Vec::new();
    for e in std::fs::read_dir(root().join("crates"))
        .expect("crates/")
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        if name == "schedlab-cli" {
            continue;
        }
        hits.extend(code_lines_with(
            &e.path().join("src"),
            &["env::args", "IsTerminal", "stdin()"],
        ));
    }
    assert!(
        hits.is_empty(),
        "argv or terminal outside the binary:\n  {}",
        hits.join("\n  ")
    );
}

/// Every file of the repository (not `target/`, not dot folders), as a path relative to the
/// root with `/` separators.
fn repository_files() -> Vec<String> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name == "target" {
                continue;
            }
            if p.is_dir() {
                walk(&p, root, out);
            } else if let Ok(rel) = p.strip_prefix(root) {
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let root = root();
    let mut out = Vec::new();
    walk(&root, &root, &mut out);
    out
}

/// Whether a crate-relative `name` is a file of the repository: relative to the markdown
/// file's own folder, or the tail of a repository path at a folder boundary, where a leading
/// crate shorthand (`engine/src/rng.rs`) stands for `schedlab-engine/`.
fn resolves(name: &str, md_dir: &Path, files: &[String]) -> bool {
    md_dir.join(name).exists()
        || files.iter().any(|f| {
            f == name
                || f.ends_with(&format!("/{name}"))
                || f.ends_with(&format!("/schedlab-{name}"))
        })
}

/// Source files named in `text` without their crate: tokens ending in `.rs`, and tokens with a
/// folder (`validate/pinned.rs`, `tests/deps.rs`) ending in another source or data extension.
/// Patterns (`*`, `{..}`, `<..>`) and absolute paths are skipped.
fn crate_relative_names(text: &str) -> BTreeSet<String> {
    let is_path = |c: char| c.is_alphanumeric() || "_-./".contains(c);
    let mut out = BTreeSet::new();
    let mut i = 0;
    let bytes: Vec<char> = text.chars().collect();
    while i < bytes.len() {
        if !is_path(bytes[i])
            || (i > 0 && (is_path(bytes[i - 1]) || "*{}<>".contains(bytes[i - 1])))
        {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < bytes.len() && is_path(bytes[j]) {
            j += 1;
        }
        let tok: String = bytes[i..j].iter().collect();
        let tok = tok.trim_end_matches(['.', ',', ':']).to_string();
        let follows_pattern = j < bytes.len() && "*{}<>".contains(bytes[j]);
        let source = tok.ends_with(".rs")
            || (tok.contains('/')
                && [".toml", ".md", ".sh", ".py"]
                    .iter()
                    .any(|e| tok.ends_with(e)));
        if source
            && !follows_pattern
            && !tok.starts_with('/')
            && !tok.starts_with("../")
            && !tok.contains("NAME")
            && !TOP.iter().any(|t| tok.starts_with(t))
        {
            out.insert(tok);
        }
        i = j;
    }
    out
}

/// Every source file ARCHITECTURE.md and the docs name by a crate-relative path exists in some
/// crate or folder (the repository-rooted ones are checked by `documented_paths_exist`), so a
/// renamed or removed file cannot stay in the map.
#[test]
fn crate_relative_paths_in_the_docs_exist() {
    let root = root();
    let files = repository_files();
    let mut missing = Vec::new();
    for file in markdown_files() {
        let rel = file
            .strip_prefix(&root)
            .unwrap_or(&file)
            .display()
            .to_string();
        let text = std::fs::read_to_string(&file).expect("markdown is UTF-8");
        let dir = file.parent().expect("file has a folder");
        for name in crate_relative_names(&text) {
            if !resolves(&name, dir, &files) {
                missing.push(format!("{rel}: {name}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "crate-relative source paths named in the docs that exist in no crate:\n  {}",
        missing.join("\n  ")
    );
}

#[test]
fn crate_relative_scanner_finds_sources_and_skips_patterns() {
    let found = crate_relative_names(
        "`sim/wakeup.rs` and fair.rs, `tests/deps.rs`; not crates/x/src/y.rs (rooted), \
         `{o1,cfs1..cfs5}.rs`, `models/*.rs`, /proc/x.rs, profile.toml, `a/b.toml`.",
    );
    let want: BTreeSet<String> = ["sim/wakeup.rs", "fair.rs", "tests/deps.rs", "a/b.toml"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(found, want);
    let files = repository_files();
    let docs = root().join("docs");
    assert!(resolves("sim/wakeup.rs", &docs, &files));
    assert!(resolves("engine/src/rng.rs", &docs, &files));
    assert!(resolves("policies/README.md", &docs, &files));
    assert!(!resolves("sim/no_such_file.rs", &docs, &files));
    assert!(!resolves("wakeup.rs/sim", &docs, &files));
}

/// The functions of rustfmt'ed Rust source, as (lines, name, 1-based line): a `fn` item runs
/// from its signature to the first `}` line indented as the item itself (the rule of
/// `scripts/fn-lengths.py`).
fn function_lengths(text: &str) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let body = line.trim_start();
        let indent = &line[..line.len() - body.len()];
        let sig = [
            "pub(crate) ",
            "pub(super) ",
            "pub ",
            "const ",
            "async ",
            "unsafe ",
        ]
        .iter()
        .fold(body, |s, p| s.strip_prefix(p).unwrap_or(s));
        let Some(rest) = sig.strip_prefix("fn ") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let Some(open) =
            (i..lines.len()).find(|&j| lines[j].contains('{') || lines[j].ends_with(';'))
        else {
            continue;
        };
        if !lines[open].contains('{') {
            continue; // a declaration without a body
        }
        let one_line = lines[open].matches('{').count() == lines[open].matches('}').count();
        let end = if one_line {
            Some(open)
        } else {
            (open + 1..lines.len()).find(|&k| {
                lines[k].starts_with(&format!("{indent}}}"))
                    && !lines[k].starts_with(&format!("{indent} "))
            })
        };
        if let Some(end) = end {
            out.push((end - i + 1, name, i + 1));
        }
    }
    out
}

/// No function of the engine is longer than 120 lines: the engine's operations are one method
/// each (ARCHITECTURE.md), so a reader can hold one in view.
#[test]
fn no_engine_function_is_longer_than_120_lines() {
    let root = root();
    let mut long = Vec::new();
    let mut files = Vec::new();
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).expect("readable").flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    walk(&root.join("crates/schedlab-engine/src"), &mut files);
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("UTF-8 source");
        for (n, name, line) in function_lengths(&text) {
            if n > 120 {
                let rel = f.strip_prefix(&root).unwrap_or(&f).display().to_string();
                long.push(format!("{rel}:{line}: {name} ({n} lines)"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "engine functions over 120 lines:\n  {}",
        long.join("\n  ")
    );
}

#[test]
fn function_lengths_follow_the_closing_brace() {
    let src = "fn a() {}\n\
               pub(crate) fn b(\n    x: u32,\n) -> u32 {\n    if x > 0 {\n        1\n    } else {\n        2\n    }\n}\n\
               trait T {\n    fn c(&self);\n    fn d(&self) {\n        let _ = 1;\n    }\n}\n";
    let got: Vec<(usize, String, usize)> = function_lengths(src);
    assert_eq!(
        got,
        vec![
            (1, "a".to_string(), 1),
            (9, "b".to_string(), 2),
            (3, "d".to_string(), 13),
        ]
    );
}

/// One use of another file: the file it names, and where and how (`line: path`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct FileEdge {
    to: String,
    at: String,
}

/// The module path of a source file below `src/`: `lib.rs`/`main.rs` are the crate root,
/// `a.rs` and `a/mod.rs` are module `a`, `a/b.rs` is `a::b`.
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs").to_string();
    if !(stem == "mod" || (parts.is_empty() && (stem == "lib" || stem == "main"))) {
        parts.push(stem);
    }
    parts
}

/// The paths a piece of Rust code names from `at`: each `crate::`, `super::`, `self::` path
/// and each path that starts with a name in `children`, with `{a, b::c}` groups expanded, as
/// segment lists (the leading keyword kept, a trailing `self` or `*` dropped).
fn paths_in(code: &str, children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let chars: Vec<char> = code.chars().collect();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts_path = ident(chars[i])
            && (i == 0 || !(ident(chars[i - 1]) || chars[i - 1] == '$' || chars[i - 1] == '.'))
            && !(i >= 2 && chars[i - 1] == ':' && chars[i - 2] == ':');
        if !starts_path {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len() && ident(chars[j]) {
            j += 1;
        }
        let word: String = chars[i..j].iter().collect();
        let followed = chars.get(j) == Some(&':') && chars.get(j + 1) == Some(&':');
        if followed
            && (["crate", "super", "self"].contains(&word.as_str()) || children.contains(&word))
        {
            let mut prefixes = Vec::new();
            let end = parse_path(&chars, i, Vec::new(), &mut prefixes);
            out.extend(prefixes);
            i = end.max(j);
        } else {
            i = j;
        }
    }
    out
}

/// Parses the path at `chars[i..]` after `prefix` (segments, `::`, `{` groups) into `out`;
/// returns where it ends.
fn parse_path(
    chars: &[char],
    mut i: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let skip_ws = |mut i: usize| {
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        i
    };
    loop {
        i = skip_ws(i);
        if chars.get(i) == Some(&'{') {
            i += 1;
            loop {
                i = skip_ws(i);
                match chars.get(i) {
                    None => return i,
                    Some('}') => return i + 1,
                    Some(',') => i += 1,
                    Some(_) => {
                        let before = i;
                        i = parse_path(chars, i, prefix.clone(), out);
                        if i == before {
                            i += 1;
                        }
                    }
                }
            }
        }
        let start = i;
        while i < chars.len() && (ident(chars[i]) || chars[i] == '*') {
            i += 1;
        }
        let seg: String = chars[start..i].iter().collect();
        if !(seg.is_empty() || seg == "*" || (seg == "self" && !prefix.is_empty())) {
            prefix.push(seg);
        }
        if chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':') {
            i += 2;
            continue;
        }
        if !prefix.is_empty() {
            out.push(prefix);
        }
        return i;
    }
}

/// The file-level import graph of the crate at `crate_dir`: for every `.rs` file below its
/// `src/` (relative path with `/`), the files it uses. See
/// [`no_import_cycle_between_the_files_of_a_crate`] for the rule.
fn import_graph(crate_dir: &Path) -> BTreeMap<String, BTreeSet<FileEdge>> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir)
            .expect("readable source folder")
            .flatten()
        {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let src = crate_dir.join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    files.sort();
    let rel = |p: &Path| {
        p.strip_prefix(&src)
            .unwrap_or(p)
            .to_string_lossy()
            .replace('\\', "/")
    };
    let modules: BTreeMap<Vec<String>, String> = files
        .iter()
        .map(|f| (module_of(f.strip_prefix(&src).unwrap_or(f)), rel(f)))
        .collect();
    let mut graph = BTreeMap::new();
    for f in &files {
        let me = rel(f);
        let file_module = module_of(f.strip_prefix(&src).unwrap_or(f));
        let children: BTreeSet<String> = modules
            .keys()
            .filter(|m| m.len() == file_module.len() + 1 && m.starts_with(&file_module))
            .map(|m| m[m.len() - 1].clone())
            .collect();
        let text = std::fs::read_to_string(f).expect("UTF-8 source");
        let lines: Vec<&str> = text.lines().collect();
        let mut edges = BTreeSet::new();
        // Inline modules (`mod tests {`), as (name, indentation of its closing brace).
        let mut inline: Vec<(String, String)> = Vec::new();
        for (n, line) in lines.iter().enumerate() {
            let code = line.trim_start();
            let indent = &line[..line.len() - code.len()];
            if inline
                .last()
                .is_some_and(|(_, ind)| *line == format!("{ind}}}"))
            {
                inline.pop();
                continue;
            }
            if code.starts_with("//") {
                continue;
            }
            let decl = code
                .strip_prefix("pub(crate) ")
                .or_else(|| code.strip_prefix("pub "))
                .unwrap_or(code);
            if let Some(name) = decl.strip_prefix("mod ").and_then(|r| r.strip_suffix(" {")) {
                inline.push((name.to_string(), indent.to_string()));
                continue;
            }
            let here: Vec<String> = file_module
                .iter()
                .cloned()
                .chain(inline.iter().map(|(m, _)| m.clone()))
                .collect();
            // Bare child names count only at the file's own level.
            let kids = if inline.is_empty() {
                children.clone()
            } else {
                BTreeSet::new()
            };
            for path in paths_in(code, &kids) {
                let mut abs = here.clone();
                let mut segs = path.iter().peekable();
                match segs.peek().map(|s| s.as_str()) {
                    Some("crate") => {
                        abs.clear();
                        segs.next();
                    }
                    Some("self") => {
                        segs.next();
                    }
                    Some("super") => {
                        while segs.peek().is_some_and(|s| *s == "super") {
                            abs.pop();
                            segs.next();
                        }
                    }
                    _ => {}
                }
                abs.extend(segs.cloned());
                let target = (0..=abs.len())
                    .rev()
                    .find_map(|k| modules.get(&abs[..k]))
                    .expect("the crate root is a file");
                if *target != me {
                    edges.insert(FileEdge {
                        to: target.clone(),
                        at: format!("{}: {}", n + 1, path.join("::")),
                    });
                }
            }
        }
        graph.insert(me, edges);
    }
    graph
}

/// The cycles of a file graph: for every set of files that reach each other, one cycle
/// through them, as `a.rs -> b.rs (line: path) -> ... -> a.rs` text.
fn import_cycles(graph: &BTreeMap<String, BTreeSet<FileEdge>>) -> Vec<String> {
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(f) = todo.pop() {
            for e in graph.get(&f).into_iter().flatten() {
                if seen.insert(e.to.clone()) {
                    todo.push(e.to.clone());
                }
            }
        }
        seen
    };
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for start in graph.keys() {
        if done.contains(start) || !reach(start).contains(start) {
            continue;
        }
        // The shortest way back to `start` (breadth first), with the edges taken.
        let mut prev: BTreeMap<String, (String, String)> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start.clone()]);
        'search: while let Some(f) = queue.pop_front() {
            for e in graph.get(&f).into_iter().flatten() {
                if !prev.contains_key(&e.to) {
                    prev.insert(e.to.clone(), (f.clone(), e.at.clone()));
                    if e.to == *start {
                        break 'search;
                    }
                    queue.push_back(e.to.clone());
                }
            }
        }
        let mut hops = Vec::new();
        let mut at = start.clone();
        loop {
            let (from, how) = prev[&at].clone();
            hops.push(format!("{at} ({from}:{how})"));
            done.insert(at.clone());
            at = from;
            if at == *start {
                break;
            }
        }
        hops.reverse();
        out.push(format!("{start} -> {}", hops.join(" -> ")));
        // Every file that reaches and is reached by `start` is in this cycle's set.
        let r = reach(start);
        for f in graph.keys() {
            if r.contains(f) && reach(f).contains(start) {
                done.insert(f.clone());
            }
        }
    }
    out
}

/// No import cycle between the files of the CLI, the experiment crate and the fidelity
/// library: each file can be read knowing only the files below it.
///
/// The rule ([`import_graph`]): the nodes are the `.rs` files below `src/`; `lib.rs` or
/// `main.rs` is the crate root, `a.rs` and `a/mod.rs` are module `a`, `a/b.rs` is `a::b`. A
/// file uses another when its code (comment lines left out) names a path that starts with
/// `crate::`, `super::`, `self::` or the name of one of its own child modules (`{..}` groups
/// expanded; `super` inside an inline `mod tests {` is the file itself), and that path's
/// longest module prefix that is a file is the other file. Declaring `mod child;` is no
/// use; `pub use child::Item` is. So a parent that re-exports its children is fine, while a
/// child that takes an item from its parent while the parent names the child is a cycle.
#[test]
fn no_import_cycle_between_the_files_of_a_crate() {
    let mut found = Vec::new();
    for c in [
        "schedlab-cli",
        "schedlab-experiment",
        "schedlab-fidelity",
        "schedlab-policies",
    ] {
        let graph = import_graph(&root().join("crates").join(c));
        assert!(graph.len() > 3, "{c}: no source files found");
        for cycle in import_cycles(&graph) {
            found.push(format!("{c}: {cycle}"));
        }
    }
    assert!(
        found.is_empty(),
        "import cycles between files (each hop: file (from-file:line: path named)):\n  {}",
        found.join("\n  ")
    );
}

/// The cycle finder itself: a child using its parent's item while the parent names the
/// child is a cycle; a re-exporting parent, a test module's `super::*` and a sibling used
/// through `super::sibling::` are not.
#[test]
fn the_import_cycle_finder_finds_a_hand_made_cycle() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let write = |rel: &str, text: &str| {
        let p = dir.path().join("src").join(rel);
        std::fs::create_dir_all(p.parent().expect("a folder")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    };
    write("lib.rs", "pub mod a;\npub mod b;\npub use a::A;\n");
    write(
        "a.rs",
        "mod inner;\npub use inner::Inner;\npub struct A;\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
    );
    write(
        "a/inner.rs",
        "use super::super::b::B;\npub struct Inner(B);\n",
    );
    write(
        "b.rs",
        "// crate::a::A in a comment is no use.\npub struct B;\n",
    );
    let graph = import_graph(dir.path());
    let uses = |f: &str| -> Vec<&str> { graph[f].iter().map(|e| e.to.as_str()).collect() };
    assert_eq!(uses("lib.rs"), ["a.rs"]);
    assert_eq!(uses("a.rs"), ["a/inner.rs"]);
    assert_eq!(uses("a/inner.rs"), ["b.rs"]);
    assert!(uses("b.rs").is_empty());
    assert!(
        import_cycles(&graph).is_empty(),
        "{:?}",
        import_cycles(&graph)
    );
    // b now takes `Inner` back through a grouped import: a.rs -> a/inner.rs -> b.rs -> a.rs.
    write("b.rs", "use crate::{a::{Inner, A}};\npub struct B;\n");
    let cycles = import_cycles(&import_graph(dir.path()));
    assert_eq!(
        cycles,
        [
            "a.rs -> a/inner.rs (a.rs:2: inner::Inner) -> b.rs (a/inner.rs:1: super::super::b::B) \
          -> a.rs (b.rs:1: crate::a::A)"
        ],
    );
}

/// The policies are laid out as fair.c: a file of `crates/schedlab-policies/src` named after a
/// kernel function holds every function named after it, whatever the era (`NAME` or
/// `NAME_<version>`, e.g. `select_idle_sibling_5_12`), and no other file defines one. The
/// kernel-function files are those whose stem names a function they define.
#[test]
fn every_policy_function_named_after_a_kernel_function_lives_in_its_file() {
    let src = root().join("crates/schedlab-policies/src");
    let fn_name = regex_lite_fn();
    let mut defs: Vec<(String, String)> = Vec::new(); // (file stem, fn name)
    for e in std::fs::read_dir(&src).expect("policies src").flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "rs") {
            continue;
        }
        let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&p).expect("read");
        for line in text.lines() {
            if let Some(name) = fn_name(line) {
                defs.push((stem.clone(), name));
            }
        }
    }
    // Strips an era suffix: `_4_9`, `_2_6_32`.
    let base = |name: &str| -> String {
        let parts: Vec<&str> = name.split('_').collect();
        let keep = parts
            .iter()
            .rposition(|p| !p.chars().all(|c| c.is_ascii_digit()))
            .map_or(0, |i| i + 1);
        parts[..keep].join("_")
    };
    let kernel_files: BTreeSet<String> = defs
        .iter()
        .filter(|(stem, name)| base(name) == *stem)
        .map(|(stem, _)| stem.clone())
        .collect();
    for f in [
        "select_task_rq",
        "select_task_rq_fair",
        "wake_affine",
        "wake_affine_idle",
        "wake_affine_weight",
        "wake_wide",
        "record_wakee",
        "select_idle_sibling",
        "select_idle_core",
        "select_idle_cpu",
        "select_idle_smt",
        "wake_idle",
        "find_idlest_cpu",
        "sched_best_cpu",
    ] {
        assert!(kernel_files.contains(f), "no {f}.rs defining {f}");
    }
    let misplaced: Vec<String> = defs
        .iter()
        .filter(|(stem, name)| kernel_files.contains(&base(name)) && base(name) != *stem)
        .map(|(stem, name)| format!("{name} in {stem}.rs"))
        .collect();
    assert!(
        misplaced.is_empty(),
        "kernel functions outside their file: {misplaced:?}"
    );
}

/// `fn NAME` (any visibility, generic or not) at the start of a line, or `None`: items,
/// not methods (a trait's `select_task_rq` implemented in an `impl` block is indented).
fn regex_lite_fn() -> impl Fn(&str) -> Option<String> {
    |line: &str| {
        let t = line;
        let t = t
            .strip_prefix("pub(crate) ")
            .or_else(|| t.strip_prefix("pub "))
            .unwrap_or(t);
        let rest = t.strip_prefix("fn ")?;
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        (!name.is_empty()).then_some(name)
    }
}

/// The checker above: a function named after a kernel file but defined elsewhere is caught,
/// era suffixes included.
#[test]
fn the_kernel_function_file_rule_strips_era_suffixes() {
    let f = regex_lite_fn();
    assert_eq!(
        f("pub(crate) fn select_idle_sibling_5_12<M: Machine>("),
        Some("select_idle_sibling_5_12".into())
    );
    assert_eq!(f("fn helper() {"), Some("helper".into()));
    assert_eq!(f("    fn select_task_rq(&mut self) {"), None);
    assert_eq!(f("let x = 1;"), None);
}
