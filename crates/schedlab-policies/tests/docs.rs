//! Tidy checks: the switch × era table of `docs/policies/switches.md` is the one the era
//! and switch tables generate, and `docs/wake-paths.md` is the one `WAKE_PATHS` generates.

use std::path::Path;

#[test]
fn switches_md_matches_the_tables() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/policies/switches.md");
    let text = std::fs::read_to_string(&path).expect("read docs/policies/switches.md");
    let want = schedlab_policies::update_switches_markdown(&text)
        .expect("docs/policies/switches.md lost its BEGIN/END generated markers");
    assert!(
        text == want,
        "docs/policies/switches.md is out of date with the era/switch tables; regenerate it \
         with `cargo run -p schedlab-policies --example switches-md`"
    );
}

#[test]
fn wake_paths_md_matches_the_table() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/wake-paths.md");
    let text = std::fs::read_to_string(&path).expect("read docs/wake-paths.md");
    let want = schedlab_policies::wake_paths::update_wake_paths_markdown(&text)
        .expect("docs/wake-paths.md lost its BEGIN/END generated markers");
    assert!(
        text == want,
        "docs/wake-paths.md is out of date with wake_paths::WAKE_PATHS; regenerate it with \
         `cargo run -p schedlab-policies --example wake-paths-md`"
    );
}
