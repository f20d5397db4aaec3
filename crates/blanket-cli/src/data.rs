//! Loading user data for simulations: a CSV file or the embedded ECG excerpt, resized to n
//! users (the first n rows, or draws with replacement when n exceeds the rows, computed on
//! demand so that memory does not grow with n), so that the ground truth is always exactly
//! the data the simulated users held.

use anyhow::{Context, Result};
use blanket::simulate::Resample;
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

/// n users over the distinct data rows, without materializing n values: user i holds
/// `rows[pick.row(i)]` (the first n rows, or draws with replacement when n exceeds the rows;
/// see [`Resample`]). Memory is that of the rows, whatever n.
#[derive(Debug, Clone)]
pub struct Users<T> {
    /// The distinct rows (truncated to n when n is smaller).
    pub rows: Vec<T>,
    /// Which row each user holds.
    pub pick: Resample,
}

impl<T: Sync> Users<T> {
    /// Number of users n.
    pub fn len(&self) -> usize {
        self.pick.users() as usize
    }

    /// The value user i holds (i < n).
    pub fn get(&self, i: usize) -> &T {
        &self.rows[self.pick.row(i as u64)]
    }

    /// How many users hold each row (exact integer counts: memory O(rows), parallel over
    /// users, the same for any number of threads).
    pub fn multiplicities(&self) -> Vec<u64> {
        multiplicities(&self.pick, self.rows.len())
    }
}

/// How many of the users of `pick` hold each of `rows` rows.
pub fn multiplicities(pick: &Resample, rows: usize) -> Vec<u64> {
    use rayon::prelude::*;
    if !pick.with_replacement() {
        let mut c = vec![0u64; rows];
        c.iter_mut()
            .take(pick.users() as usize)
            .for_each(|x| *x = 1);
        return c;
    }
    const BLOCK: u64 = 1 << 20;
    (0..pick.users().div_ceil(BLOCK))
        .into_par_iter()
        .fold(
            || vec![0u64; rows],
            |mut c, b| {
                for i in b * BLOCK..((b + 1) * BLOCK).min(pick.users()) {
                    c[pick.row(i)] += 1;
                }
                c
            },
        )
        .reduce_with(|mut a, b| {
            a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
            a
        })
        .unwrap_or_else(|| vec![0; rows])
}

/// Resizes `rows` to `n` users: the first n if there are enough, else n draws with
/// replacement (seeded by `seed`), computed on demand (no n-sized table).
pub fn resize<T>(rows: Vec<T>, n: usize, seed: u64, source: String) -> (Users<T>, Provenance) {
    let total = rows.len();
    let mut rows = rows;
    let selection = if n <= total {
        rows.truncate(n);
        if n == total {
            "all rows".to_string()
        } else {
            format!("the first {n} rows")
        }
    } else {
        format!("{n} draws with replacement (seed {seed}): n exceeds the {total} rows")
    };
    let pick = Resample::new(rows.len(), n as u64, seed);
    (
        Users { rows, pick },
        Provenance {
            source,
            rows: total,
            selection,
        },
    )
}

/// Opens a CSV file with a path in the error.
/// `--data` naming a CSV file, in the one syntax every subcommand takes: `PATH` or
/// `csv:PATH` (built-in data sets, where a subcommand has them, are named by a word:
/// `ecg-windows`, `ecg-beats`, `zipf`).
pub fn csv_file(s: &str) -> Result<std::path::PathBuf, String> {
    let path = s.strip_prefix("csv:").unwrap_or(s);
    if path.is_empty() {
        return Err(format!("must be a CSV file, PATH or csv:PATH, got {s:?}"));
    }
    Ok(path.into())
}

pub fn open(path: &Path) -> Result<std::fs::File> {
    std::fs::File::open(path).with_context(|| format!("cannot open data file {}", path.display()))
}

/// Values in [0, 1] for n users: from `file`, or the embedded ECG signal normalized to [0, 1].
pub fn unit_values(
    file: Option<&Path>,
    n: Option<usize>,
    seed: u64,
    header: Header,
) -> Result<(Users<f64>, Provenance)> {
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
) -> Result<(Users<u32>, Provenance)> {
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

#[cfg(test)]
mod data_flag_tests {
    #[test]
    fn data_takes_path_or_csv_prefix_everywhere() {
        assert_eq!(super::csv_file("a.csv"), Ok("a.csv".into()));
        assert_eq!(super::csv_file("csv:a.csv"), Ok("a.csv".into()));
        assert!(super::csv_file("csv:").is_err());
        assert!(super::csv_file("").is_err());
    }
}
