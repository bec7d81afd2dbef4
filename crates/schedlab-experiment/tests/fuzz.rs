//! Fuzzing harnesses of the experiment crate's two readers (they take files from users and
//! from interrupted runs, so no input may panic or hang), runnable on the
//! stable toolchain with proptest:
//!
//! * experiment TOML: the committed experiments (`experiments/*.toml` and
//!   `experiments/validate/*.toml`, the seed corpus) edited byte by byte, read with
//!   [`Experiment::from_file`] and, when accepted, expanded and prepared as `compare` does;
//! * JSON-lines `--out` files, the `merge` and `--resume` reader: a finished file of a small
//!   experiment, edited as bytes (torn lines, garbage) and as JSON (a value of some line
//!   replaced by an extreme or odd one, a key removed). An edited plan header gets its
//!   fingerprint recomputed, else nearly every edit would stop at the fingerprint check and
//!   the code behind it would never run.
//!
//! The property: every input ends in `Ok` or an error, never a panic, a hang or an
//! allocation that takes the machine (a header asking for 10^15 repetitions must be refused,
//! not expanded). 64 cases each in the suite; a campaign:
//! `PROPTEST_CASES=1000000 cargo test --release -p schedlab-experiment --test fuzz`.

use proptest::prelude::*;
use schedlab_experiment::plan::{Experiment, Plan};
use schedlab_experiment::runner::ExecOptions;
use schedlab_experiment::{compare, merge, prepare};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(64),
        // Shrinking a failure of a file-writing harness takes long and adds little.
        max_shrink_iters: 64,
        ..ProptestConfig::default()
    }
}

fn toml_corpus() -> &'static [String] {
    static C: OnceLock<Vec<String>> = OnceLock::new();
    C.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
        let mut v = Vec::new();
        for d in [root.clone(), root.join("validate")] {
            for e in std::fs::read_dir(d).unwrap().flatten() {
                if e.path().extension().is_some_and(|x| x == "toml") {
                    v.push(std::fs::read_to_string(e.path()).unwrap());
                }
            }
        }
        v.sort();
        assert!(v.len() >= 10, "the experiments are the seed corpus");
        v
    })
}

/// Applies byte edits; positions wrap around the text's length.
fn edit_bytes(text: &str, edits: &[(usize, u8, u8)], alphabet: &[u8]) -> String {
    let mut b = text.as_bytes().to_vec();
    for &(pos, kind, byte) in edits {
        let at = if b.is_empty() { 0 } else { pos % (b.len() + 1) };
        let pick = alphabet[byte as usize % alphabet.len()];
        match kind % 5 {
            0 => b.insert(at, pick),
            1 if at < b.len() => b[at] = pick,
            2 if at < b.len() => {
                b.remove(at);
            }
            3 => b.insert(at, byte),
            _ if at < b.len() => {
                let e = (at + byte as usize % 40).min(b.len());
                b.drain(at..e);
            }
            _ => {}
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

/// A finished `--out` file (header and 8 runs) of a small experiment, made once.
fn finished_runs() -> &'static str {
    static F: OnceLock<String> = OnceLock::new();
    F.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("runs.jsonl");
        let e = Experiment {
            topology: "desktop-4c8t".into(),
            smt: None,
            llc_per_node: None,
            profile: None,
            workload: "pipe:loops=200".into(),
            variants: vec!["linux-6.6".into(), "waker".into()],
            sweep: vec![("pairs".into(), vec!["1".into(), "2".into()])],
            reps: 2,
            seed: 3,
            until_ci: None,
            max_reps: 30,
        };
        let opts = ExecOptions {
            jobs: 1,
            out: Some(f.clone()),
            ..Default::default()
        };
        compare(&Plan::new(e), &opts).unwrap();
        std::fs::read_to_string(&f).unwrap()
    })
}

/// Odd values to put in place of one in a run file.
fn odd_value(which: u8, n: u64) -> Value {
    match which % 12 {
        0 => Value::from(u64::MAX),
        1 => Value::from(i64::MIN),
        2 => Value::from(n),
        3 => Value::from(1e300),
        4 => Value::from(-0.0),
        5 => Value::String(String::new()),
        6 => Value::String("NaN".into()),
        7 => Value::Null,
        8 => Value::Array(vec![]),
        9 => Value::Object(Default::default()),
        10 => Value::from(1_000_000_000_000_000u64),
        _ => Value::Bool(true),
    }
}

/// Replaces (or removes) the `pick`-th value, in depth-first order, below `v`.
fn edit_json(v: &mut Value, pick: &mut usize, new: &Value, remove: bool) -> bool {
    match v {
        Value::Object(m) => {
            let keys: Vec<String> = m.keys().cloned().collect();
            for k in keys {
                if *pick == 0 {
                    if remove {
                        m.remove(&k);
                    } else {
                        m.insert(k, new.clone());
                    }
                    return true;
                }
                *pick -= 1;
                if edit_json(m.get_mut(&k).unwrap(), pick, new, remove) {
                    return true;
                }
            }
            false
        }
        Value::Array(a) => {
            for x in a.iter_mut() {
                if *pick == 0 {
                    *x = new.clone();
                    return true;
                }
                *pick -= 1;
                if edit_json(x, pick, new, remove) {
                    return true;
                }
            }
            false
        }
        _ => false,
    }
}

/// Gives an edited plan header the fingerprint of its (edited) experiment, where it still
/// reads as one.
fn fix_fingerprint(line: &mut Value) {
    if let Some(e) = line.get("experiment").cloned()
        && let Ok(e) = serde_json::from_value::<Experiment>(e)
        && let Some(obj) = line.as_object_mut()
    {
        obj.insert("fingerprint".into(), Value::String(e.fingerprint()));
    }
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn edited_experiment_files_never_panic(
        which in any::<usize>(),
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..10),
    ) {
        let c = toml_corpus();
        let text = edit_bytes(&c[which % c.len()], &edits, b"0123456789=[]\",.-_ \nabcxyz#'");
        let dir = tempfile::tempdir().unwrap();
        let f = write(dir.path(), "exp.toml", &text);
        if let Ok((e, _)) = Experiment::from_file(&f) {
            let plan = Plan::new(e);
            let _ = prepare(&plan);
        }
    }

    #[test]
    fn edited_run_files_never_panic(
        line in any::<usize>(),
        pick in any::<usize>(),
        which in any::<u8>(),
        n in any::<u64>(),
        remove in any::<bool>(),
        bytes in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..6),
        twice in any::<bool>(),
    ) {
        let text = finished_runs();
        let mut lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let i = line % lines.len();
        let mut p = pick % 400;
        edit_json(&mut lines[i], &mut p, &odd_value(which, n), remove);
        if i == 0 {
            fix_fingerprint(&mut lines[0]);
        }
        let json: String = lines.iter().map(|v| v.to_string() + "\n").collect();
        let edited = edit_bytes(&json, &bytes, b"{}[]\":,0123456789.e-\n ");
        let dir = tempfile::tempdir().unwrap();
        let a = write(dir.path(), "a.jsonl", &edited);
        let _ = merge(std::slice::from_ref(&a));
        if twice {
            let b = write(dir.path(), "b.jsonl", text);
            let _ = merge(&[a, b]);
        }
    }
}
