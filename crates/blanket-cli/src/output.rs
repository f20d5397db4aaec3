//! Output helpers: human tables and JSON.

use comfy_table::{presets::UTF8_BORDERS_ONLY, Cell, CellAlignment, Table};
use serde::Serialize;
use std::io::Write;

/// Writing to stdout failed (full disk, I/O error): a runtime error (exit code 1)
/// with the OS's reason, never a panic.
#[derive(Debug)]
pub struct OutputError(pub std::io::Error);

impl std::fmt::Display for OutputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "writing to stdout failed: {}", self.0)
    }
}

impl std::error::Error for OutputError {}

/// The one writer of the CLI's stdout: writes `bytes` and flushes, turning any I/O error
/// into an [`OutputError`] (exit code 1 with a message). A reader that closed the pipe
/// (`blanket ... | head`) ends the process through SIGPIPE instead (see
/// [`crate::exit::quiet_broken_pipe`]).
pub fn out(bytes: &[u8]) -> Result<(), OutputError> {
    let mut o = std::io::stdout().lock();
    o.write_all(bytes)
        .and_then(|()| o.flush())
        .map_err(OutputError)
}

/// [`out`] of formatted text (what [`crate::outln!`] expands to).
pub fn out_fmt(args: std::fmt::Arguments<'_>) -> Result<(), OutputError> {
    match args.as_str() {
        Some(s) => out(s.as_bytes()),
        None => out(args.to_string().as_bytes()),
    }
}

/// `println!` through [`out`]: returns early with an [`OutputError`] (exit code 1) when stdout
/// cannot be written, instead of panicking.
#[macro_export]
macro_rules! outln {
    () => {
        $crate::output::out(b"\n")?
    };
    ($($t:tt)*) => {
        $crate::output::out_fmt(format_args!("{}\n", format_args!($($t)*)))?
    };
}

/// Prints a value as pretty JSON on stdout, streamed (no copy of the whole text in memory:
/// a histogram over 2^26 categories is a large document), through [`out`].
pub fn print_json<T: Serialize>(value: &T) -> anyhow::Result<()> {
    struct Out;
    impl Write for Out {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            out(buf).map_err(|e| e.0)?;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut w = std::io::BufWriter::with_capacity(1 << 16, Out);
    let r = serde_json::to_writer_pretty(&mut w, value)
        .map_err(std::io::Error::from)
        .and_then(|()| w.write_all(b"\n"))
        .and_then(|()| w.flush());
    r.map_err(|e| OutputError(e).into())
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
