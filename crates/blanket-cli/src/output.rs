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

/// The widest line a table (or a note under it) prints by default; `--json` keeps every
/// text whole.
pub const MAX_WIDTH: usize = 120;

/// Cells at most this long stay in the table even when it is too wide.
const SHORT_CELL: usize = 12;

/// A two-column key/value table, at most [`MAX_WIDTH`] columns wide (long values become
/// numbered notes under it).
pub fn kv_table(title: &str, rows: &[(&str, String)]) -> String {
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|(k, v)| vec![k.to_string(), v.clone()])
        .collect();
    let align = |col: usize, _: &str| col == 1;
    format!("{}\n{}", wrap(title, MAX_WIDTH), fit(None, &body, align))
}

/// A table with a header row; numeric-looking cells right-aligned. At most [`MAX_WIDTH`]
/// columns wide: the longest texts become numbered notes under the table.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let align = |_: usize, c: &str| {
        c.trim_start_matches(['-', '+'])
            .starts_with(|ch: char| ch.is_ascii_digit())
    };
    fit(Some(header), rows, align)
}

/// Renders rows with `right(column, text)` choosing right alignment.
fn render(
    header: Option<&[&str]>,
    rows: &[Vec<String>],
    right: impl Fn(usize, &str) -> bool,
) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY);
    if let Some(h) = header {
        t.set_header(h.iter().map(Cell::new).collect::<Vec<_>>());
    }
    for r in rows {
        t.add_row(
            r.iter()
                .enumerate()
                .map(|(i, c)| {
                    let cell = Cell::new(c);
                    if right(i, c) {
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

/// The widest line of `s`, in characters.
pub fn width(s: &str) -> usize {
    s.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// Renders the table; while it is wider than [`MAX_WIDTH`], the longest remaining text of a
/// cell or a header (every cell holding it) moves to a numbered note (`[1]`, numbered in
/// reading order, header first) printed under the table, wrapped to [`MAX_WIDTH`].
fn fit(
    header: Option<&[&str]>,
    rows: &[Vec<String>],
    right: impl Fn(usize, &str) -> bool + Copy,
) -> String {
    // The common case, without copies: the table fits as it is.
    let text = render(header, rows, right);
    if width(&text) <= MAX_WIDTH {
        return text;
    }
    let head: Option<Vec<String>> = header.map(|h| h.iter().map(|c| c.to_string()).collect());
    let all: Vec<Vec<String>> = head.iter().cloned().chain(rows.iter().cloned()).collect();
    let mut moved: Vec<&str> = Vec::new();
    loop {
        let (mut marked, notes) = mark(&all, &moved);
        let body = if head.is_some() {
            marked.split_off(1)
        } else {
            marked.clone()
        };
        let h: Option<Vec<&str>> = head
            .as_ref()
            .map(|_| marked[0].iter().map(String::as_str).collect());
        let text = render(h.as_deref(), &body, right);
        if width(&text) <= MAX_WIDTH {
            return with_notes(text, &notes);
        }
        let longest = all
            .iter()
            .flatten()
            .map(String::as_str)
            .filter(|c| c.chars().count() > SHORT_CELL && !moved.contains(c))
            .max_by_key(|c| c.chars().count());
        match longest {
            Some(c) => moved.push(c),
            None => return with_notes(text, &notes),
        }
    }
}

/// The rows with every cell in `moved` replaced by its note mark, and the notes in order.
fn mark(rows: &[Vec<String>], moved: &[&str]) -> (Vec<Vec<String>>, Vec<String>) {
    let mut notes: Vec<String> = Vec::new();
    let body = rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|c| {
                    if !moved.contains(&c.as_str()) {
                        return c.clone();
                    }
                    let i = match notes.iter().position(|n| n == c) {
                        Some(i) => i,
                        None => {
                            notes.push(c.clone());
                            notes.len() - 1
                        }
                    };
                    format!("[{}]", i + 1)
                })
                .collect()
        })
        .collect();
    (body, notes)
}

fn with_notes(mut table: String, notes: &[String]) -> String {
    for (i, n) in notes.iter().enumerate() {
        table.push('\n');
        table.push_str(&wrap(&format!("[{}] {n}", i + 1), MAX_WIDTH));
    }
    table
}

/// `text` wrapped at word boundaries to lines of at most `width` characters, continuation
/// lines indented by four spaces (a single word longer than a line stays whole). Existing
/// line breaks are kept.
pub fn wrap(text: &str, width: usize) -> String {
    const INDENT: &str = "    ";
    let mut out = String::with_capacity(text.len() + 16);
    for (n, line) in text.split('\n').enumerate() {
        if n > 0 {
            out.push('\n');
        }
        if line.chars().count() <= width {
            out.push_str(line);
            continue;
        }
        let lead: String = line.chars().take_while(|c| *c == ' ').collect();
        let mut len = 0;
        for (i, word) in line.split_whitespace().enumerate() {
            let w = word.chars().count();
            if i == 0 {
                out.push_str(&lead);
                out.push_str(word);
                len = lead.len() + w;
            } else if len + 1 + w <= width {
                out.push(' ');
                out.push_str(word);
                len += 1 + w;
            } else {
                out.push('\n');
                out.push_str(INDENT);
                out.push_str(word);
                len = INDENT.len() + w;
            }
        }
    }
    out
}

/// Prints `text` on stdout wrapped to [`MAX_WIDTH`] (a note or footer line under a table).
#[macro_export]
macro_rules! println_wrapped {
    () => {
        $crate::outln!()
    };
    ($($t:tt)*) => {
        $crate::outln!("{}", $crate::output::wrap(&format!($($t)*), $crate::output::MAX_WIDTH))
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wide_table_moves_its_longest_texts_to_numbered_notes() {
        let long = "a sentence of trust that is far too long for one column of a table, ".repeat(3);
        let rows = vec![
            vec!["first".to_string(), "1.5".to_string(), long.clone()],
            vec!["second".to_string(), "2".to_string(), "short".to_string()],
            vec!["third".to_string(), "3".to_string(), long.clone()],
        ];
        let t = table(&["name", "value", "trust"], &rows);
        assert!(width(&t) <= MAX_WIDTH, "{t}");
        // one note for both cells holding the same text, wrapped under the table
        assert_eq!(t.matches("[1]").count(), 3, "{t}");
        assert!(!t.contains("[2]"), "{t}");
        assert!(t.contains("short"), "{t}");
        // a narrow table is unchanged
        let narrow = table(&["a"], &[vec!["b".to_string()]]);
        assert!(!narrow.contains('['));
    }

    #[test]
    fn wrap_keeps_short_lines_and_breaks_long_ones_at_words() {
        assert_eq!(wrap("short", 10), "short");
        assert_eq!(wrap("aaa bbb ccc", 7), "aaa bbb\n    ccc");
        let w = wrap(&"word ".repeat(60), MAX_WIDTH);
        assert!(w.lines().all(|l| l.chars().count() <= MAX_WIDTH), "{w}");
    }
}
