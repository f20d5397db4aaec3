//! Loaders for user data: one record per row of a CSV file. Every rejected row is reported
//! with its 1-based line number in the file, the column and the reason.

use std::io::Read;
use thiserror::Error;

/// A data file that cannot be used.
#[derive(Debug, Error)]
pub enum DataError {
    /// The file could not be read or is not CSV.
    #[error("cannot read the data: {0}")]
    Read(#[from] csv::Error),
    /// A row holds a value that is not allowed.
    #[error("line {line}, column {column}: {reason}")]
    BadValue {
        /// 1-based line number in the file.
        line: u64,
        /// 1-based column.
        column: usize,
        /// What is wrong, with the allowed range.
        reason: String,
    },
    /// A row has the wrong number of fields.
    #[error("line {line}: expected {expected} values, found {found}")]
    WrongLength {
        /// 1-based line number in the file.
        line: u64,
        /// Fields expected.
        expected: usize,
        /// Fields found.
        found: usize,
    },
    /// The file has no data rows.
    #[error("the data has no rows")]
    Empty,
}

/// Whether the first row of a file is a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Header {
    /// A first row is a header only if none of its fields looks like a number (starts with
    /// a digit, a sign or a point): `value` is a header, `0.5x` is an error, not a header.
    #[default]
    Auto,
    /// The first row is a header and is skipped.
    Present,
    /// There is no header: the first row is data.
    Absent,
}

/// Whether a field starts like a number (optional sign, then a digit or a point).
fn looks_numeric(field: &str) -> bool {
    let f = field.trim_start_matches(['+', '-']);
    f.starts_with(|c: char| c.is_ascii_digit() || c == '.')
}

/// Reads rows of numbers. A first row none of whose fields looks like a number is taken as
/// a header; lines starting with `#` are comments. Each row must have `width` fields if
/// given, else as many as the first data row.
pub fn read_rows<R: Read>(reader: R, width: Option<usize>) -> Result<Vec<Vec<f64>>, DataError> {
    Ok(read_numbered(reader, width, Header::Auto)?
        .into_iter()
        .map(|(_, r)| r)
        .collect())
}

/// Like [`read_rows`], with each row's 1-based line number in the file.
fn read_numbered<R: Read>(
    reader: R,
    width: Option<usize>,
    header: Header,
) -> Result<Vec<(u64, Vec<f64>)>, DataError> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .comment(Some(b'#'))
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(reader);
    let mut rows = Vec::new();
    let mut expected = width;
    for (idx, rec) in rdr.records().enumerate() {
        let rec = rec?;
        let line = rec.position().map_or(idx as u64 + 1, |p| p.line());
        if idx == 0 && header == Header::Present {
            continue;
        }
        let parsed: Result<Vec<f64>, usize> = rec
            .iter()
            .enumerate()
            .map(|(c, f)| f.parse::<f64>().map_err(|_| c))
            .collect();
        let values = match parsed {
            Ok(v) => v,
            Err(_) if idx == 0 && header == Header::Auto && !rec.iter().any(looks_numeric) => {
                continue; // header
            }
            Err(c) => {
                let hint = if idx == 0 && header == Header::Auto {
                    " (if the first line is a header, say so with --header)"
                } else {
                    ""
                };
                return Err(DataError::BadValue {
                    line,
                    column: c + 1,
                    reason: format!("{:?} is not a number{hint}", rec.get(c).unwrap_or("")),
                });
            }
        };
        let want = *expected.get_or_insert(values.len());
        if values.len() != want {
            return Err(DataError::WrongLength {
                line,
                expected: want,
                found: values.len(),
            });
        }
        if let Some(c) = values.iter().position(|v| v.is_nan()) {
            return Err(DataError::BadValue {
                line,
                column: c + 1,
                reason: "NaN is not a value".into(),
            });
        }
        rows.push((line, values));
    }
    if rows.is_empty() {
        return Err(DataError::Empty);
    }
    Ok(rows)
}

/// Reads one value in [0, 1] per row.
pub fn read_unit_values<R: Read>(reader: R) -> Result<Vec<f64>, DataError> {
    read_unit_values_with(reader, Header::Auto)
}

/// [`read_unit_values`] with an explicit header rule.
pub fn read_unit_values_with<R: Read>(reader: R, header: Header) -> Result<Vec<f64>, DataError> {
    let rows = read_numbered(reader, Some(1), header)?;
    rows.into_iter()
        .map(|(line, r)| check_unit(r[0], line, 1).map(|()| r[0]))
        .collect()
}

/// Reads one vector in [0, 1]^d per row (d = `width`, or the first row's length).
pub fn read_unit_vectors<R: Read>(
    reader: R,
    width: Option<usize>,
) -> Result<Vec<Vec<f64>>, DataError> {
    read_unit_vectors_with(reader, width, Header::Auto)
}

/// [`read_unit_vectors`] with an explicit header rule.
pub fn read_unit_vectors_with<R: Read>(
    reader: R,
    width: Option<usize>,
    header: Header,
) -> Result<Vec<Vec<f64>>, DataError> {
    let rows = read_numbered(reader, width, header)?;
    for (line, r) in &rows {
        for (c, &v) in r.iter().enumerate() {
            check_unit(v, *line, c + 1)?;
        }
    }
    Ok(rows.into_iter().map(|(_, r)| r).collect())
}

/// Reads one category in {0, ..., m - 1} per row.
pub fn read_categories<R: Read>(reader: R, m: u32) -> Result<Vec<u32>, DataError> {
    read_categories_with(reader, m, Header::Auto)
}

/// [`read_categories`] with an explicit header rule.
pub fn read_categories_with<R: Read>(
    reader: R,
    m: u32,
    header: Header,
) -> Result<Vec<u32>, DataError> {
    let rows = read_numbered(reader, Some(1), header)?;
    rows.into_iter()
        .map(|(line, r)| {
            let v = r[0];
            if v.fract() == 0.0 && v >= 0.0 && v < f64::from(m) {
                Ok(v as u32)
            } else {
                Err(DataError::BadValue {
                    line,
                    column: 1,
                    reason: format!("category must be an integer from 0 to {}, got {v}", m - 1),
                })
            }
        })
        .collect()
}

fn check_unit(v: f64, line: u64, column: usize) -> Result<(), DataError> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(DataError::BadValue {
            line,
            column,
            reason: format!("value must be a number in [0, 1], got {v}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_comments_and_values() {
        let v = read_unit_values("# c\nx\n0.5\n1\n0\n".as_bytes()).unwrap();
        assert_eq!(v, vec![0.5, 1.0, 0.0]);
        let c = read_categories("3\n0\n".as_bytes(), 4).unwrap();
        assert_eq!(c, vec![3, 0]);
    }

    #[test]
    fn a_number_like_first_line_is_not_a_header() {
        let e = read_unit_values("0.5x\n0.3\n".as_bytes()).unwrap_err();
        assert!(e.to_string().contains("line 1, column 1"), "{e}");
        assert!(e.to_string().contains("--header"), "{e}");
        let v = read_unit_values_with("0.5x\n0.3\n".as_bytes(), Header::Present).unwrap();
        assert_eq!(v, vec![0.3]);
        let v = read_unit_values_with("0.2\n0.3\n".as_bytes(), Header::Present).unwrap();
        assert_eq!(v, vec![0.3]);
        assert!(read_unit_values_with("value\n0.3\n".as_bytes(), Header::Absent).is_err());
    }

    #[test]
    fn rejects_bad_rows_with_their_number() {
        let e = read_unit_values("x\n0.5\n1.5\n".as_bytes()).unwrap_err();
        assert!(
            e.to_string()
                .contains("value must be a number in [0, 1], got 1.5"),
            "{e}"
        );
        assert!(e.to_string().starts_with("line 3, column 1"), "{e}");
        let e = read_unit_values("0.5\nNaN\n".as_bytes()).unwrap_err();
        assert!(e.to_string().contains("NaN"), "{e}");
        let e = read_unit_vectors("0.5,0.1\n0.2\n".as_bytes(), None).unwrap_err();
        assert!(
            e.to_string().contains("line 2: expected 2 values, found 1"),
            "{e}"
        );
        let e = read_categories("1\n4\n".as_bytes(), 4).unwrap_err();
        assert!(e.to_string().contains("from 0 to 3, got 4"), "{e}");
        let e = read_unit_values("0.5\nabc\n".as_bytes()).unwrap_err();
        assert!(e.to_string().contains("line 2, column 1"), "{e}");
        assert!(matches!(
            read_unit_values("".as_bytes()),
            Err(DataError::Empty)
        ));
    }
}
