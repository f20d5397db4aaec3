//! Output helpers: human tables and JSON.

use comfy_table::{presets::UTF8_BORDERS_ONLY, Cell, CellAlignment, Table};
use serde::Serialize;

/// Prints a value as pretty JSON on stdout, streamed (no copy of the whole text in memory:
/// a histogram over 2^26 categories is a large document).
pub fn print_json<T: Serialize>(value: &T) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    out.flush()?;
    Ok(())
}

/// A two-column key/value table.
pub fn kv_table(title: &str, rows: &[(&str, String)]) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY);
    for (k, v) in rows {
        t.add_row(vec![
            Cell::new(k),
            Cell::new(v).set_alignment(CellAlignment::Right),
        ]);
    }
    format!("{title}\n{t}")
}

/// A table with a header row; numeric-looking cells right-aligned.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY);
    t.set_header(header.iter().map(Cell::new).collect::<Vec<_>>());
    for r in rows {
        t.add_row(
            r.iter()
                .map(|c| {
                    let numeric = c
                        .trim_start_matches(['-', '+'])
                        .starts_with(|ch: char| ch.is_ascii_digit());
                    let cell = Cell::new(c);
                    if numeric {
                        cell.set_alignment(CellAlignment::Right)
                    } else {
                        cell
                    }
                })
                .collect::<Vec<_>>(),
        );
    }
    t.to_string()
}

/// A float in compact scientific or fixed notation, 4 significant digits.
pub fn num(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let a = x.abs();
    if (1e-3..1e6).contains(&a) {
        let digits = (3 - a.log10().floor() as i32).max(0) as usize;
        format!("{x:.digits$}")
    } else {
        format!("{x:.3e}")
    }
}

pub use blanket::display::{down, echo, up};
