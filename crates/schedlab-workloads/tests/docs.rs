//! `docs/workloads/` against the registry: every registered model has a row in the README's
//! table linking its page, and that page documents each of its parameters, so the docs
//! cannot fall behind a new model or parameter.

use schedlab_workloads::catalog;

fn doc(name: &str) -> String {
    let path = format!("{}/../../docs/workloads/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The page the README's table links for workload `name` (`| \`name\` |` or `| \`name:PATH\` |`).
fn page_of(readme: &str, name: &str) -> Option<String> {
    let row = readme.lines().find(|l| {
        l.starts_with(&format!("| `{name}` |")) || l.starts_with(&format!("| `{name}:PATH` |"))
    })?;
    let link = row.rsplit("](").next()?;
    Some(link.split(')').next()?.to_string())
}

#[test]
fn every_registered_model_is_in_the_readme_table_with_a_page() {
    let readme = doc("README.md");
    for w in catalog() {
        let page = page_of(&readme, w.name).unwrap_or_else(|| {
            panic!("docs/workloads/README.md has no table row for `{}`", w.name)
        });
        assert!(page.ends_with(".md"), "{}: link {page:?}", w.name);
        doc(&page);
    }
}

#[test]
fn every_parameter_is_documented_on_its_models_page() {
    let readme = doc("README.md");
    for w in catalog().iter().filter(|w| !w.takes_path()) {
        let page = page_of(&readme, w.name).expect("checked above");
        let text = doc(&page);
        for p in w.params {
            let row = format!("| {} |", p.name);
            let code = format!("`{}`", p.name);
            assert!(
                text.contains(&row) || text.contains(&code),
                "docs/workloads/{page} does not document {}'s parameter `{}`",
                w.name,
                p.name
            );
        }
    }
}
