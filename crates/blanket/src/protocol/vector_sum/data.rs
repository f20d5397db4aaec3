//! The users' vectors in [0, 1]^d, validated once.

use super::*;
use crate::params::UnitValue;

/// n vectors in [0, 1]^d, validated once and stored row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitVectors {
    d: u32,
    values: Vec<UnitValue>,
}

impl UnitVectors {
    /// Validates the rows: each must have d coordinates in [0, 1] (NaN rejected); the error
    /// names the row and coordinate (0-based).
    pub fn new<I, V>(d: u64, rows: I) -> Result<Self, VectorSumError>
    where
        I: IntoIterator<Item = V>,
        V: AsRef<[f64]>,
    {
        let d = check_dimension(d)?;
        let mut values = Vec::new();
        for (row, v) in rows.into_iter().enumerate() {
            let v = v.as_ref();
            if v.len() != d as usize {
                return Err(VectorSumError::WrongLength {
                    row,
                    expected: d as usize,
                    found: v.len(),
                });
            }
            for (column, &x) in v.iter().enumerate() {
                values.push(UnitValue::new(x).map_err(|_| VectorSumError::BadValue {
                    row,
                    column,
                    value: x,
                })?);
            }
        }
        Ok(Self { d, values })
    }

    /// Validates a row-major flat buffer of n * d values.
    pub fn from_flat(d: u64, flat: &[f64]) -> Result<Self, VectorSumError> {
        let dd = check_dimension(d)? as usize;
        if !flat.len().is_multiple_of(dd) {
            return Err(VectorSumError::WrongLength {
                row: flat.len() / dd,
                expected: dd,
                found: flat.len() % dd,
            });
        }
        Self::new(d, flat.chunks(dd))
    }

    /// The dimension d.
    pub fn dimension(&self) -> u32 {
        self.d
    }

    /// Number of vectors n.
    pub fn len(&self) -> usize {
        self.values.len() / self.d as usize
    }

    /// Whether there are no vectors.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// All values, row-major (vector i is `values()[i d..(i + 1) d]`).
    #[inline]
    pub(crate) fn values(&self) -> &[UnitValue] {
        &self.values
    }

    /// Vector i.
    #[inline]
    pub fn row(&self, i: usize) -> &[UnitValue] {
        let d = self.d as usize;
        &self.values[i * d..(i + 1) * d]
    }

    /// Iterates over the vectors.
    pub fn rows(&self) -> impl Iterator<Item = &[UnitValue]> {
        self.values.chunks(self.d as usize)
    }

    /// The exact mean vector (the ground truth of the mean estimate).
    pub fn mean(&self) -> Vec<f64> {
        let mut acc = vec![0.0; self.d as usize];
        for r in self.rows() {
            for (a, x) in acc.iter_mut().zip(r) {
                *a += x.get();
            }
        }
        let n = self.len().max(1) as f64;
        acc.iter().map(|a| a / n).collect()
    }

    /// The exact sum vector.
    pub fn sum(&self) -> Vec<f64> {
        let n = self.len() as f64;
        self.mean().into_iter().map(|m| m * n).collect()
    }

    /// Population variance of each coordinate, S_j^2.
    pub fn variance(&self) -> Vec<f64> {
        let mean = self.mean();
        let mut acc = vec![0.0; self.d as usize];
        for r in self.rows() {
            for ((a, x), m) in acc.iter_mut().zip(r).zip(&mean) {
                *a += (x.get() - m).powi(2);
            }
        }
        let n = self.len().max(1) as f64;
        acc.iter().map(|a| a / n).collect()
    }
}
