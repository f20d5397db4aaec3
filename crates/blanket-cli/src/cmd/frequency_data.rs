//! Item streams for `simulate frequency` and `compare frequency`: a seeded Zipf law over the
//! N items or one column of a CSV file (`--data zipf|PATH|csv:PATH`, `--column`).

use crate::data::{self, Header, Provenance};
use anyhow::{Context, Result};
use blanket::rng::simulation_stream;
use rand_core::RngCore;
use std::path::Path;

/// Where the items come from.
#[derive(Debug, Clone, PartialEq)]
pub enum ItemSource {
    /// Zipf law: item k (0-based) with probability proportional to 1 / (k + 1)^s.
    Zipf,
    /// One column of a CSV file.
    Csv(std::path::PathBuf),
}

/// Parses `zipf`, or a CSV file as every `--data` takes it: `PATH` or `csv:PATH`.
pub fn parse_source(s: &str) -> Result<ItemSource, String> {
    if s == "zipf" {
        return Ok(ItemSource::Zipf);
    }
    crate::data::csv_file(s)
        .map(ItemSource::Csv)
        .map_err(|_| format!("must be zipf or a CSV file (PATH or csv:PATH), got {s:?}"))
}

/// n items from a Zipf(s) law over 0..N, seeded (stream `seed ^ 0x21bf`): inverse CDF by
/// binary search on a uniform double (data generation, not a privacy mechanism, so floating
/// point is fine here).
pub fn zipf(n: usize, items: u32, s: f64, seed: u64) -> (Vec<u32>, Provenance) {
    let mut cdf = Vec::with_capacity(items as usize);
    let mut acc = 0.0;
    for k in 0..items {
        acc += (f64::from(k) + 1.0).powf(-s);
        cdf.push(acc);
    }
    let total = acc;
    let mut rng = simulation_stream(seed ^ 0x21bf, 0);
    let data = (0..n)
        .map(|_| {
            let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * total;
            (cdf.partition_point(|&c| c <= u) as u32).min(items - 1)
        })
        .collect();
    let prov = Provenance {
        source: format!("Zipf law, s = {s}, over {items} items (item k with probability proportional to 1/(k+1)^s), seed {seed}"),
        rows: n,
        selection: format!("{n} independent draws"),
    };
    (data, prov)
}

/// The items of column `column` (a 0-based index or a header name) of a CSV file, each an
/// integer in 0..N, for n users (all rows by default; the first n, or n draws with
/// replacement seeded by `seed` when n exceeds the rows).
pub fn csv_column(
    path: &Path,
    column: &str,
    header: Header,
    items: u32,
    n: Option<usize>,
    seed: u64,
) -> Result<(Vec<u32>, Provenance)> {
    let file = data::open(path)?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(file);
    let mut records = reader.records().enumerate().peekable();
    let first = match records.peek() {
        Some((_, Ok(r))) => Some(r.clone()),
        Some((_, Err(e))) => anyhow::bail!("in data file {}: {e}", path.display()),
        None => None,
    };
    let Some(first) = first else {
        anyhow::bail!("data file {} is empty", path.display());
    };
    let by_index = column.parse::<usize>().ok();
    let has_header = match header {
        Header::Present => true,
        Header::Absent => false,
        Header::Auto => by_index.is_none() || first.iter().all(|f| f.parse::<f64>().is_err()),
    };
    let index = match by_index {
        Some(i) => i,
        None => {
            if !has_header {
                anyhow::bail!(
                    "--column {column:?}: a column name needs a header line, and {} has none (--no-header)",
                    path.display()
                );
            }
            first.iter().position(|f| f == column).with_context(|| {
                format!(
                    "--column {column:?}: no such column in the header of {} (columns: {})",
                    path.display(),
                    first.iter().collect::<Vec<_>>().join(", ")
                )
            })?
        }
    };
    if has_header {
        records.next();
    }
    let mut rows = Vec::new();
    for (line, rec) in records {
        let rec = rec.with_context(|| format!("in data file {}", path.display()))?;
        if rec.iter().all(str::is_empty) {
            continue;
        }
        let field = rec.get(index).with_context(|| {
            format!(
                "{} line {}: no column {index} (--column): the row has {} fields",
                path.display(),
                line + 1,
                rec.len()
            )
        })?;
        let item: u64 = field.parse().map_err(|_| {
            anyhow::anyhow!(
                "{} line {}: item must be an integer in 0..{items} (--domain {items}), got {field:?}",
                path.display(),
                line + 1
            )
        })?;
        if item >= u64::from(items) {
            anyhow::bail!(
                "{} line {}: item {item} is outside the item domain 0..{items} (--domain {items})",
                path.display(),
                line + 1
            );
        }
        rows.push(item as u32);
    }
    if rows.is_empty() {
        anyhow::bail!("data file {} has no data rows", path.display());
    }
    let n = n.unwrap_or(rows.len());
    let (users, mut prov) = data::resize(
        rows,
        n,
        seed,
        format!("{} (column {column})", path.display()),
    );
    prov.source = format!("{}, column {column}", path.display());
    Ok((
        (0..n as u64)
            .map(|i| users.rows[users.pick.row(i)])
            .collect(),
        prov,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_is_seeded_in_range_and_heavy_headed() {
        let (a, _) = zipf(20_000, 50, 1.1, 3);
        let (b, _) = zipf(20_000, 50, 1.1, 3);
        assert_eq!(a, b);
        assert!(a.iter().all(|&x| x < 50));
        let mut c = [0u64; 50];
        a.iter().for_each(|&x| c[x as usize] += 1);
        // P(0) / P(1) = 2^1.1 ~ 2.14.
        let r = c[0] as f64 / c[1] as f64;
        assert!((r - 2.0f64.powf(1.1)).abs() < 0.2, "{r}");
        assert!(c[0] > c[49] * 20);
    }

    #[test]
    fn source_parses() {
        assert_eq!(parse_source("zipf"), Ok(ItemSource::Zipf));
        assert_eq!(
            parse_source("csv:a.csv"),
            Ok(ItemSource::Csv("a.csv".into()))
        );
        assert!(parse_source("csv:").is_err());
        assert_eq!(parse_source("a.csv"), Ok(ItemSource::Csv("a.csv".into())));
        assert!(parse_source("").is_err());
    }
}
