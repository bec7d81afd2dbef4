//! The Kubernetes Indexed Job contract (long sweeps are split into pods that must merge into
//! the straight run's result), checked without a cluster: runs
//! `scripts/k8s-indexed-check.sh` against this build of schedlab. The script writes the
//! manifest of `scripts/k8s-indexed-job.sh`, reads it back, runs the pods' command once per
//! `JOB_COMPLETION_INDEX` with the manifest's `SCHEDLAB_SHARD_COUNT`, checks that a pod
//! without the count fails naming it, and that the merged shards equal the straight run.

mod common;

use common::{bin, root, success};
use std::process::Command;

#[test]
fn indexed_job_pods_merge_to_the_straight_run() {
    let out = Command::new("bash")
        .arg(root().join("scripts/k8s-indexed-check.sh"))
        .arg(bin())
        .output()
        .unwrap();
    let so = success(&out, "scripts/k8s-indexed-check.sh");
    assert!(
        so.contains("k8s-indexed-check: 3 indexed pods merged equal the straight run"),
        "{so}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
