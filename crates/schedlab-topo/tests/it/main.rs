//! Integration tests of schedlab-topo: sysfs fixture trees, input files, the domain tree
//! against the kernel's `build_sched_domains()`, and property tests of round trips and consistency.

mod check;
mod domains;
mod files;
mod fuzz;
mod props;
mod sysfs;

/// Directory holding the committed fixtures.
pub fn fixtures() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}
