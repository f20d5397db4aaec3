//! `blanket man`: the manual pages (roff), one per command and subcommand, each ending with
//! the exit codes as a list (not as text that `man` would refill into one paragraph).

use anyhow::{Context, Result};
use std::path::Path;

/// The EXIT STATUS section (roff): one tagged paragraph per code.
fn exit_status() -> String {
    let mut s = String::from(".SH \"EXIT STATUS\"\n");
    for (code, meaning) in crate::exit::CODES {
        s.push_str(&format!(".TP\n\\fB{code}\\fR\n{}\n", roff_escape(meaning)));
    }
    s
}

/// Escapes text for a roff body line: backslashes, and a leading `.` or `'` (which would
/// start a request).
fn roff_escape(text: &str) -> String {
    let t = text.replace('\\', "\\e").replace('-', "\\-");
    if t.starts_with('.') || t.starts_with('\'') {
        format!("\\&{t}")
    } else {
        t
    }
}

/// Every page: (file name such as `blanket-calibrate-histogram.1`, roff text), the
/// top-level page first; the pages listed in each page's SUBCOMMANDS section are all here.
pub fn pages(cmd: clap::Command) -> Result<Vec<(String, Vec<u8>)>> {
    fn walk(cmd: &clap::Command, out: &mut Vec<(String, Vec<u8>)>) -> Result<()> {
        // The exit codes are rendered as a list below, not as the after-help text.
        let man = clap_mangen::Man::new(cmd.clone().after_help(None::<&str>));
        let mut page = Vec::new();
        man.render(&mut page)?;
        page.extend_from_slice(exit_status().as_bytes());
        out.push((man.get_filename(), page));
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(sub, out)?;
        }
        Ok(())
    }
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, &mut out)?;
    Ok(out)
}

/// Writes every page into `dir` (created if missing); returns the file names.
pub fn write_all(cmd: clap::Command, dir: &Path) -> Result<Vec<String>> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the output directory {}", dir.display()))?;
    let pages = pages(cmd)?;
    for (name, page) in &pages {
        let path = dir.join(name);
        std::fs::write(&path, page).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(pages.into_iter().map(|(name, _)| name).collect())
}
