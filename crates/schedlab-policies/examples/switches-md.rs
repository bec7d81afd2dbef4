//! Regenerates the switch × era table of `docs/policies/switches.md` from the era and
//! switch tables (`cargo run -p schedlab-policies --example switches-md`); the test
//! `tests/docs.rs` fails while the file is out of date.

use std::path::Path;

fn main() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/policies/switches.md");
    let text = std::fs::read_to_string(&path).expect("read docs/policies/switches.md");
    let new = schedlab_policies::update_switches_markdown(&text)
        .expect("docs/policies/switches.md lost its BEGIN/END generated markers");
    std::fs::write(&path, new).expect("write docs/policies/switches.md");
    println!("updated {}", path.display());
}
