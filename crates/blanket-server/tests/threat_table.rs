//! The threat model's table (issue 25) stands, identical, in docs/protocol.md, docs/crypto.md
//! and docs/service.md, and every test it names exists: a renamed or deleted attack test, or
//! one copy edited alone, fails here.

use std::path::{Path, PathBuf};

const HEADING: &str = "## Adversaries at a glance";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The section from its heading to the next `## ` heading.
fn section(page: &str) -> String {
    let text = std::fs::read_to_string(root().join("docs").join(page)).expect("docs page");
    let start = text
        .find(HEADING)
        .unwrap_or_else(|| panic!("docs/{page} has no section {HEADING:?}"));
    let rest = &text[start + HEADING.len()..];
    let end = rest.find("\n## ").unwrap_or(rest.len());
    rest[..end].trim().to_string()
}

fn rust_sources(dir: &Path, out: &mut String) {
    for e in std::fs::read_dir(dir).expect("read dir").flatten() {
        let p = e.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() && name != "target" && name != "fuzz" {
            rust_sources(&p, out);
        } else if name.ends_with(".rs") {
            out.push_str(&std::fs::read_to_string(&p).unwrap_or_default());
        }
    }
}

#[test]
fn the_threat_table_is_the_same_in_every_page_and_its_tests_exist() {
    let protocol = section("protocol.md");
    assert_eq!(protocol, section("crypto.md"), "docs/crypto.md differs");
    assert_eq!(protocol, section("service.md"), "docs/service.md differs");
    for row in [
        "semi-honest relay",
        "malicious registrant",
        "malicious relay",
        "network observer",
        "local user",
        "stranger on the network",
    ] {
        assert!(protocol.contains(&format!("| {row}")), "no row for {row}");
    }
    let mut code = String::new();
    rust_sources(&root().join("crates"), &mut code);
    let mut named = 0;
    for line in protocol.lines().filter(|l| l.starts_with("| ")) {
        let Some(tests) = line.trim_end_matches('|').rsplit('|').next() else {
            continue;
        };
        for name in tests.split('`').skip(1).step_by(2) {
            let is_fn = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            if is_fn && name.contains('_') {
                named += 1;
                assert!(
                    code.contains(&format!("fn {name}(")),
                    "the threat table names test {name}, which does not exist"
                );
            }
        }
    }
    assert!(named >= 20, "only {named} tests named");
}
