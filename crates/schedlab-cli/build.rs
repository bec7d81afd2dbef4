//! Records the commit the binary is built from (`schedlab --version`, the validation record):
//! `git describe`-like `SHORTHASH[-dirty]`, or `unknown` outside a git checkout.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).map_or_else(
        || "unknown".to_string(),
        |h| {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            if dirty { format!("{h}-dirty") } else { h }
        },
    );
    println!("cargo:rustc-env=SCHEDLAB_COMMIT={commit}");
    // Rebuild when HEAD moves (a commit or a checkout) — not on every file change.
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={dir}/{r}");
        }
    }
}
