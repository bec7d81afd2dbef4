//! Checks of the command line that need more than clap: contradictions (a switch on and off,
//! two balancer variants, a sweep key given twice), output paths that cannot be written
//! (found before the work, not after it), a workload file that is really rt-app JSON, and the
//! bounds of count-like options and of a plan's size.

use anyhow::{Result, bail};
use std::path::Path;

/// Writes `text` to `path`: a file whole (a temporary file renamed over it, so a reader never
/// sees half a file and an interrupted write leaves the old one; a symlink's target, the link
/// kept); a character device or FIFO (`/dev/null`, `/dev/stdout`) written through, never
/// replaced. See `schedlab_experiment::outpath`.
pub fn write_atomic(path: &Path, text: &str, flag: &str) -> Result<()> {
    schedlab_experiment::outpath::write(path, text.as_bytes())
        .map_err(|e| anyhow::anyhow!("{flag} {}: cannot write: {e}", path.display()))
}

/// Fails, naming the flag and the path, when `path` cannot be written: its folder is missing,
/// it is a folder, a block device or a socket, or opening it for writing is refused. An
/// existing file is left as it is; a file created by the check is removed again. A character
/// device or FIFO is not opened here (opening a FIFO waits for its reader).
pub fn writable(path: &Path, flag: &str) -> Result<()> {
    use schedlab_experiment::outpath::{Sink, sink};
    let path = match sink(path) {
        Ok(Sink::File(p)) => p,
        Ok(Sink::Through { .. }) => return Ok(()),
        Err(e) => bail!("{flag} {}: cannot write: {e}", path.display()),
    };
    let path = path.as_path();
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        bail!(
            "{flag} {}: cannot write: the folder {} does not exist",
            path.display(),
            dir.display()
        );
    }
    let existed = path.exists();
    match std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
    {
        Ok(_) => {
            if !existed {
                let _ = std::fs::remove_file(path);
            }
            Ok(())
        }
        Err(e) => bail!("{flag} {}: cannot write: {e}", path.display()),
    }
}

/// `--out`'s results file: appended run by run and read back by `--resume` and `merge`, so a
/// regular file (or a symlink to one); a device or FIFO is refused before the work.
pub fn results_file(path: &Path, flag: &str) -> Result<()> {
    schedlab_experiment::outpath::results_file(path, flag).map_err(anyhow::Error::msg)?;
    writable(path, flag)
}

/// Refuses two outputs on one file (`--plot a.svg --report a.svg`, `--out a.jsonl --report
/// a.jsonl`, a symlink and its target): the second would overwrite the first after all the
/// work. Paths are compared resolved; a character device (`/dev/null`) may take several.
pub fn distinct_outputs(outputs: &[(&str, &Path)]) -> Result<()> {
    let ids: Vec<Option<std::path::PathBuf>> = outputs
        .iter()
        .map(|(_, p)| schedlab_experiment::outpath::identity(p))
        .collect();
    for (i, id) in ids.iter().enumerate() {
        let Some(id) = id else { continue };
        if let Some(j) = ids[..i].iter().position(|o| o.as_ref() == Some(id)) {
            let ((f1, p1), (f2, p2)) = (outputs[j], outputs[i]);
            bail!(
                "{f1} {} and {f2} {} name the same file: one would overwrite the other; give each its own file",
                p1.display(),
                p2.display()
            );
        }
    }
    Ok(())
}

/// The preemption models: one group, of which a variant names at most one.
const PREEMPT_MODELS: [&str; 4] = [
    "PREEMPT_NONE",
    "PREEMPT_VOLUNTARY",
    "PREEMPT_FULL",
    "PREEMPT_LAZY",
];

/// What one switch of a variant sets: a feature on or off, a tunable's value, the 2.5.59
/// balancer variant (`orig`, `ingo`, `ingofix`, `ingoB0`: they replace each other) or the
/// preemption model (`PREEMPT_NONE` .. `PREEMPT_LAZY`: likewise).
fn switch_key(sw: &str) -> (String, String) {
    if let Some((k, v)) = sw.split_once('=') {
        return (format!("{}=", k.to_ascii_lowercase()), v.to_string());
    }
    if schedlab_policies::is_balancer_variant(sw) {
        return ("balancer variant".into(), sw.to_string());
    }
    let upper = sw.to_ascii_uppercase();
    if PREEMPT_MODELS.contains(&upper.as_str()) {
        return ("preemption model".into(), upper);
    }
    match upper.strip_prefix("NO_") {
        Some(name) => (name.to_string(), "off".into()),
        None => (upper, "on".into()),
    }
}

/// Refuses a variant that says two contradicting things: `WAKE_AFFINE,NO_WAKE_AFFINE`, a
/// tunable with two values, or two balancer variants (`ingo,ingofix`). Syntax errors are left
/// to the policy crate, which explains them.
pub fn variant(v: &str) -> Result<()> {
    let Ok(parsed) = schedlab_policies::parse_variant(v) else {
        return Ok(());
    };
    let mut seen: Vec<(String, String, String)> = Vec::new();
    for sw in &parsed.switches {
        let (key, state) = switch_key(sw);
        if let Some((_, first, first_sw)) = seen.iter().find(|(k, _, _)| *k == key)
            && *first != state
        {
            if key == "balancer variant" || key == "preemption model" {
                bail!(
                    "variant '{v}': '{first_sw}' and '{sw}' are two {key}s of {}; they replace each other, give one",
                    parsed.policy
                );
            }
            bail!("variant '{v}': '{first_sw}' and '{sw}' contradict each other; give one");
        }
        seen.push((key, state, sw.clone()));
    }
    Ok(())
}

/// Refuses a sweep key given twice: a point has one value per key, so two `--sweep clients=..`
/// cannot form a product; all values go into one axis.
pub fn sweep_keys(sweep: &[(String, Vec<String>)]) -> Result<()> {
    for (i, (k, _)) in sweep.iter().enumerate() {
        if let Some((_, later)) = sweep[i + 1..].iter().find(|(k2, _)| k2 == k) {
            let all: Vec<String> = sweep[i].1.iter().chain(later).cloned().collect();
            bail!(
                "--sweep {k} is given twice (the Cartesian product is over different keys); give all its values at once: --sweep {k}={}",
                all.join(",")
            );
        }
    }
    Ok(())
}

/// Refuses a sweep key the workload spec sets too (`-w tbench:clients=4 --sweep
/// clients=1,2`): each point would replace the spec's value, so the one given in `-w` would be
/// dropped without a word.
pub fn sweep_vs_spec(workload: &str, sweep: &[(String, Vec<String>)]) -> Result<()> {
    let Ok((name, Some(rest))) = schedlab_vocab::split_spec(workload) else {
        return Ok(());
    };
    let Ok(params) = schedlab_vocab::parse_params(name, rest) else {
        return Ok(());
    };
    for (k, v) in &params {
        if let Some((key, values)) = sweep.iter().find(|(s, _)| s.eq_ignore_ascii_case(k)) {
            bail!(
                "--sweep {key}={} and -w {workload} both set '{k}': every point would replace the workload's {k}={v}; give it in one place (drop {k}={v} from -w, or sweep another key)",
                values.join(",")
            );
        }
    }
    Ok(())
}

/// `file:PATH` holding JSON is an rt-app description, which `rtapp:PATH` reads; say so instead
/// of a TOML parse error. A TOML file may begin with `[` too (`[[task]]`): only text that
/// parses as JSON (or a `{`, which TOML never begins with) is taken for JSON.
pub fn workload_file(spec: &str) -> Result<()> {
    let Some(path) = spec.strip_prefix("file:") else {
        return Ok(());
    };
    let looks_json = |t: &str| {
        let t = schedlab_vocab::text::strip_bom(t).trim_start();
        t.starts_with('{')
            || (t.starts_with('[') && serde_json::from_str::<serde_json::Value>(t).is_ok())
    };
    let is_json =
        path.ends_with(".json") || std::fs::read_to_string(path).is_ok_and(|t| looks_json(&t));
    if is_json {
        bail!(
            "-w {spec}: {path} looks like JSON; workload files (file:) are TOML. An rt-app JSON description is read with -w rtapp:{path}"
        );
    }
    Ok(())
}

/// Most repetitions per (point, variant) and most sweep points: the experiment's own bounds
/// (`Experiment::validate` holds them for files and run-file headers too).
pub use schedlab_experiment::plan::{MAX_POINTS, MAX_REPS};
/// Most runs of one plan (points × variants × repetitions).
pub const MAX_RUNS: usize = 1_000_000;

/// Bounds of `--reps` and `--max-reps`.
pub fn reps(flag: &str, n: usize) -> Result<()> {
    if n > MAX_REPS {
        bail!(
            "{flag} {n}: at most {MAX_REPS} (with common random numbers, a few dozen repetitions already resolve a 0.1 % difference; --until-ci adds them as needed)"
        );
    }
    Ok(())
}

/// clap's parser for a count or a seed. A negative number is taken as the option's value
/// (`allow_negative_numbers`) and refused here, saying what the option takes, instead of
/// clap's tip to write `-- -3`, which is not what the user meant.
pub fn whole<T: std::str::FromStr>(s: &str) -> Result<T, String> {
    if s.trim_start().starts_with('-') {
        return Err("a whole number of 0 or more, not a negative one".into());
    }
    s.trim()
        .parse()
        .map_err(|_| "expected a whole number, e.g. 5".to_string())
}

/// clap's parser for a time limit (`--timeout`): a duration past zero, a bare number taken as
/// seconds. Kept as text; the command parses it again with the same parser.
pub fn timeout(s: &str) -> Result<String, String> {
    if s.trim_start().starts_with('-') {
        return Err("a time limit such as 30s, not a negative one".into());
    }
    match schedlab_vocab::parse_duration_or_bare(s, "s") {
        Ok(0) => Err("a time limit past zero, e.g. 30s (0 would end the run at once)".into()),
        Ok(_) => Ok(s.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// clap's parser for `--op-cost`: refuses a negative duration (which clap would otherwise
/// take for a flag); the rest is parsed where it is used, with the same message as before.
pub fn op_cost(s: &str) -> Result<String, String> {
    if s.trim_start().starts_with('-') {
        return Err("`auto` or a duration of 0 or more, e.g. 2us; not a negative one".into());
    }
    Ok(s.to_string())
}

/// Refuses a sweep value given twice in one axis: each point would run twice under the same
/// seeds, doubling the work for identical results.
pub fn sweep_values(sweep: &[(String, Vec<String>)]) -> Result<()> {
    for (k, values) in sweep {
        for (i, v) in values.iter().enumerate() {
            if values[..i].contains(v) {
                bail!(
                    "--sweep {k}: the value {v} is given twice (each point runs once; the same value again gives the same runs)"
                );
            }
        }
    }
    Ok(())
}

/// Refuses a variant given twice (by its canonical name: `linux-6.6,no_sis_util` and
/// `linux-6.6,NO_SIS_UTIL` are one): compared with itself it only doubles the work.
pub fn distinct_variants(variants: &[String]) -> Result<()> {
    let canon = |v: &str| {
        schedlab_policies::parse_variant(v).map_or_else(
            |_| v.to_string(),
            |p| {
                let mut sw: Vec<String> =
                    p.switches.iter().map(|s| s.to_ascii_uppercase()).collect();
                sw.sort();
                sw.dedup();
                format!("{},{}", p.policy, sw.join(","))
            },
        )
    };
    for (i, v) in variants.iter().enumerate() {
        if let Some(first) = variants[..i].iter().find(|w| canon(w) == canon(v)) {
            let also = if first == v {
                String::new()
            } else {
                format!(" (also as '{first}')")
            };
            bail!(
                "variant '{v}' is given twice{also}: a variant compared with itself shows no difference; give each once"
            );
        }
    }
    Ok(())
}

/// Refuses, before any run, a plan past the bounds: too many points, or (without `--force`)
/// more runs than memory holds or than finish in an hour by a one-run estimate. The Python
/// package compiles this file in, so both refuse with the same words.
pub fn check_plan(
    plan: &schedlab_experiment::plan::Plan,
    jobs: usize,
    force: bool,
    reruns: usize,
) -> Result<()> {
    let points = plan.points.len();
    if points > MAX_POINTS {
        bail!("the sweep has {points} points: at most {MAX_POINTS}; sweep fewer values");
    }
    let e = &plan.experiment;
    let reps = if e.until_ci.is_some() {
        e.max_reps.max(e.reps)
    } else {
        e.reps
    };
    let runs = points * e.variants.len() * reps * reruns;
    // A finished run is kept in memory as a record of a few KiB until the report is built.
    let mib = runs * RECORD_BYTES / (1 << 20);
    if runs > MAX_RUNS && !force {
        bail!(
            "the plan has {runs} runs ({points} points × {} variants × {reps} repetitions), about {mib} MiB of results in memory: more than {MAX_RUNS} runs needs --force",
            e.variants.len()
        );
    }
    if runs >= PILOT_FROM && !force {
        let machine = schedlab_experiment::runner::Machine::load(plan)?;
        let t0 = std::time::Instant::now();
        schedlab_experiment::runner::run_one(plan, &machine, plan.keys(0..1)[0], false)?;
        let one = t0.elapsed().as_secs_f64();
        let threads = if jobs == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            jobs
        };
        let est = one * runs as f64 / threads as f64;
        if est > MAX_EST_S {
            bail!(
                "the plan has {runs} runs; its first run took {one:.2} s, so about {:.1} h on {threads} threads: more than an hour needs --force (or use --shard to split it)",
                est / 3600.0
            );
        }
    }
    Ok(())
}

/// Bytes one run's record takes in memory (its JSON line is 1-2 KiB; the parsed form more).
const RECORD_BYTES: usize = 4096;
/// Plans of this many runs or more are timed by one pilot run before they start (it adds at
/// most 1 % to their time; fewer runs of a slow workload could still take hours unchecked).
const PILOT_FROM: usize = 100;
/// The longest estimate that starts without `--force`.
const MAX_EST_S: f64 = 3600.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contradicting_switches_are_found() {
        assert!(variant("linux-6.6,WAKE_AFFINE,NO_WAKE_AFFINE").is_err());
        assert!(variant("linux-6.6,no_wake_affine,WAKE_AFFINE").is_err());
        assert!(variant("linux-2.5.59,ingo,ingofix").is_err());
        assert!(variant("linux-6.6,hz=100,hz=250").is_err());
        assert!(variant("linux-6.6,NO_SIS_UTIL,SIS_PROP").is_ok());
        assert!(variant("linux-2.5.59,ingoB0,hz=100").is_ok());
        assert!(variant("linux-6.6,WAKE_AFFINE,WAKE_AFFINE").is_ok());
        let e = variant("linux-6.6,PREEMPT_NONE,PREEMPT_FULL").unwrap_err();
        assert!(e.to_string().contains("two preemption models"), "{e}");
        assert!(variant("linux-6.6,preempt_full,PREEMPT_SHORT").is_ok());
        assert!(variant("linux-6.6,PREEMPT_FULL,PREEMPT_FULL").is_ok());
    }

    #[test]
    fn a_sweep_key_the_spec_sets_is_refused() {
        let s = |k: &str, v: &[&str]| (k.to_string(), v.iter().map(|x| x.to_string()).collect());
        let err = sweep_vs_spec("tbench:clients=4", &[s("clients", &["1", "2"])])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("clients=4") && err.contains("--sweep clients=1,2"),
            "{err}"
        );
        assert!(sweep_vs_spec("tbench:duration=1s", &[s("clients", &["1"])]).is_ok());
        assert!(sweep_vs_spec("file:x.toml", &[s("clients", &["1"])]).is_ok());
        assert!(sweep_vs_spec("tbench", &[s("clients", &["1"])]).is_ok());
    }

    #[test]
    fn a_repeated_sweep_key_names_the_merged_axis() {
        let s = |k: &str, v: &[&str]| (k.to_string(), v.iter().map(|x| x.to_string()).collect());
        let err = sweep_keys(&[s("clients", &["1"]), s("x", &["a"]), s("clients", &["2"])])
            .unwrap_err()
            .to_string();
        assert!(err.contains("--sweep clients=1,2"), "{err}");
        assert!(sweep_keys(&[s("clients", &["1", "2"]), s("groups", &["1"])]).is_ok());
    }
}
