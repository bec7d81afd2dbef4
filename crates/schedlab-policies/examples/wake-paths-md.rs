//! Regenerates the wake-path table of `docs/wake-paths.md` from
//! `schedlab_policies::wake_paths::WAKE_PATHS`
//! (`cargo run -p schedlab-policies --example wake-paths-md`); `tests/docs.rs` fails while
//! the file is out of date.

use std::path::Path;

fn main() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/wake-paths.md");
    let text = std::fs::read_to_string(&path).expect("read docs/wake-paths.md");
    let new = schedlab_policies::wake_paths::update_wake_paths_markdown(&text)
        .expect("docs/wake-paths.md lost its BEGIN/END generated markers");
    std::fs::write(&path, new).expect("write docs/wake-paths.md");
    println!("updated {}", path.display());
}
