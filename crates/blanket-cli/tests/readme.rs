//! The examples of README.md and of the docs pages are tests: every ```console block with a
//! `$ blanket ...` line is run by trycmd and its output (stdout and stderr together) must
//! match the block, exit code included (`? 3` under the command line when it is not 0).
//!
//! Timings and other fields that change from run to run are elided with trycmd's wildcards
//! in the markdown itself: `[..]` inside a line matches any text, a line `...` any lines.
//! Seeded simulations are deterministic (the same output on every machine and thread count),
//! so their numbers are written out in full.
//!
//! When an output changes on purpose, regenerate the blocks from real runs with
//!
//!     TRYCMD=overwrite cargo test -p blanket-cli --test readme
//!
//! which rewrites the expected output in README.md and docs/*.md in place. It keeps the
//! wildcards only where it can: check the diff, put `[..]` back on the timings it wrote out
//! (`account shuffle`/`compose` seconds, `simulate vector-sum`'s `seconds` row) and restore a
//! line it dropped just before a `...` line (a table's bottom border).
//! To run one file only: `cargo test -p blanket-cli --test readme -- readme_examples
//! trycmd=README` (a substring of the path).
//!
//! A block that is too slow to run here stays in the markdown as ```text (not run), and
//! says so in the surrounding prose.

use std::path::Path;
use std::time::Duration;

#[test]
fn readme_examples() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace root");
    let cases = trycmd::TestCases::new();
    cases
        .register_bin("blanket", Path::new(env!("CARGO_BIN_EXE_blanket")))
        // No progress bars (they are drawn on a terminal only, but be explicit), no colour.
        .env("NO_COLOR", "1")
        .timeout(Duration::from_secs(120))
        .case(root.join("README.md"));
    for page in DOCS_WITH_EXAMPLES {
        cases.case(root.join("docs").join(page));
    }
}

/// The docs pages whose ```console blocks are run (every other block of theirs is ```text).
const DOCS_WITH_EXAMPLES: &[&str] = &["frequency.md", "vector-sum.md"];
