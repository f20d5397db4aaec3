//! Loading user data for simulations: a CSV file or the embedded ECG excerpt, resized to n
//! users (the first n rows, or draws with replacement when n exceeds the rows), so that the
//! ground truth is always exactly the data the simulated users held.

use anyhow::{Context, Result};
use blanket::rng::simulation_stream;
use blanket::sample::uniform_usize;
pub use blanket_data::table::Header;
use std::path::Path;

/// Where the users' values came from, for reports.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Provenance {
    /// The source (file path or embedded data set).
    pub source: String,
    /// Rows available in the source.
    pub rows: usize,
    /// How the n users were formed from the rows.
    pub selection: String,
}

/// Resizes `rows` to `n` users: the first n if there are enough, else n draws with
/// replacement (seeded by `seed`).
pub fn resize<T: Clone>(rows: Vec<T>, n: usize, seed: u64, source: String) -> (Vec<T>, Provenance) {
    let total = rows.len();
    if n <= total {
        let mut rows = rows;
        rows.truncate(n);
        let selection = if n == total {
            "all rows".to_string()
        } else {
            format!("the first {n} rows")
        };
        (
            rows,
            Provenance {
                source,
                rows: total,
                selection,
            },
        )
    } else {
        let mut rng = simulation_stream(seed, u64::MAX / 2);
        let out = (0..n)
            .map(|_| rows[uniform_usize(&mut rng, total)].clone())
            .collect();
        let selection =
            format!("{n} draws with replacement (seed {seed}): n exceeds the {total} rows");
        (
            out,
            Provenance {
                source,
                rows: total,
                selection,
            },
        )
    }
}

/// Opens a CSV file with a path in the error.
pub fn open(path: &Path) -> Result<std::fs::File> {
    std::fs::File::open(path).with_context(|| format!("cannot open data file {}", path.display()))
}

/// Values in [0, 1] for n users: from `file`, or the embedded ECG signal normalized to [0, 1].
pub fn unit_values(
    file: Option<&Path>,
    n: Option<usize>,
    seed: u64,
    header: Header,
) -> Result<(Vec<f64>, Provenance)> {
    let (rows, source) = match file {
        Some(p) => (
            blanket_data::table::read_unit_values_with(open(p)?, header)
                .with_context(|| format!("in data file {}", p.display()))?,
            p.display().to_string(),
        ),
        None => (
            blanket_data::ecg::signal_unit(),
            "embedded ECG (MIT-BIH record 208, min-max normalized to [0, 1])".to_string(),
        ),
    };
    let n = n.unwrap_or(rows.len());
    Ok(resize(rows, n, seed, source))
}

/// Categories in {0, ..., m-1} for n users: from `file`, or the embedded ECG signal
/// quantized into m equal-width bins of its range.
pub fn categories(
    file: Option<&Path>,
    m: u32,
    n: Option<usize>,
    seed: u64,
    header: Header,
) -> Result<(Vec<u32>, Provenance)> {
    let (rows, source) = match file {
        Some(p) => (
            blanket_data::table::read_categories_with(open(p)?, m, header)
                .with_context(|| format!("in data file {}", p.display()))?,
            p.display().to_string(),
        ),
        None => (
            blanket_data::ecg::signal_categories(m),
            format!("embedded ECG (MIT-BIH record 208) quantized into {m} equal-width bins"),
        ),
    };
    let n = n.unwrap_or(rows.len());
    Ok(resize(rows, n, seed, source))
}
