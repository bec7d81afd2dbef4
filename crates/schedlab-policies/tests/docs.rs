//! Tidy check: the switch × era table of `docs/policies/switches.md` is the one the era
//! and switch tables generate.

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
