//! Matrices and higher-order tensors (Scott et al. 2021, Section 6: the vector protocol
//! extends to any shape): a tensor of shape (s_1, ..., s_r) is flattened row-major into a
//! vector of d = s_1 * ... * s_r coordinates, the vector-sum protocol runs unchanged, and the
//! estimates are reshaped back.

use super::vector_sum::{UnitVectors, VectorSum, VectorSumError};
use crate::analyzer::{AggregateError, CoordinateMessage, CoordinateSums};
use serde::Serialize;
use thiserror::Error;

/// A dense row-major tensor of f64 (any number of axes, each of length >= 1).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tensor {
    shape: Vec<usize>,
    data: Vec<f64>,
}

/// A tensor with the wrong shape or values.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum TensorError {
    /// The shape is empty, has a zero axis, or overflows.
    #[error("shape {shape:?} is not allowed: every axis must have length >= 1 and the product must fit the protocol's dimension limit")]
    BadShape {
        /// The rejected shape.
        shape: Vec<usize>,
    },
    /// The data length does not match the shape.
    #[error("shape {shape:?} holds {expected} values, got {found}")]
    LengthMismatch {
        /// The shape.
        shape: Vec<usize>,
        /// Product of the shape.
        expected: usize,
        /// Values given.
        found: usize,
    },
    /// Tensor `index` has a different shape than the first one.
    #[error("tensor {index} has shape {found:?}, expected {expected:?} like the first one")]
    ShapeMismatch {
        /// 0-based index of the tensor.
        index: usize,
        /// The first tensor's shape.
        expected: Vec<usize>,
        /// This tensor's shape.
        found: Vec<usize>,
    },
    /// The flattened values are not valid vector input (the row is the tensor index, the
    /// coordinate the row-major flat index).
    #[error(transparent)]
    Vector(#[from] VectorSumError),
    /// The analyzer state does not fit.
    #[error(transparent)]
    Aggregate(#[from] AggregateError),
}

impl Tensor {
    /// A tensor of `shape` holding `data` in row-major order.
    pub fn new(shape: Vec<usize>, data: Vec<f64>) -> Result<Self, TensorError> {
        let expected = numel(&shape)?;
        if data.len() != expected {
            return Err(TensorError::LengthMismatch {
                shape,
                expected,
                found: data.len(),
            });
        }
        Ok(Self { shape, data })
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The values, row-major.
    pub fn data(&self) -> &[f64] {
        &self.data
    }

    /// The value at a multi-index (`None` if out of bounds or of the wrong rank).
    pub fn get(&self, index: &[usize]) -> Option<f64> {
        if index.len() != self.shape.len() {
            return None;
        }
        let mut flat = 0usize;
        for (&i, &s) in index.iter().zip(&self.shape) {
            if i >= s {
                return None;
            }
            flat = flat * s + i;
        }
        self.data.get(flat).copied()
    }
}

/// Number of elements of a shape (every axis >= 1, product within the dimension limit).
pub fn numel(shape: &[usize]) -> Result<usize, TensorError> {
    let bad = || TensorError::BadShape {
        shape: shape.to_vec(),
    };
    if shape.is_empty() || shape.contains(&0) {
        return Err(bad());
    }
    let n = shape
        .iter()
        .try_fold(1usize, |a, &s| a.checked_mul(s))
        .ok_or_else(bad)?;
    if n > super::vector_sum::MAX_DIMENSION as usize {
        return Err(bad());
    }
    Ok(n)
}

/// Flattens tensors of one shape into validated vectors (values in [0, 1]).
pub fn flatten(tensors: &[Tensor]) -> Result<(Vec<usize>, UnitVectors), TensorError> {
    let shape = match tensors.first() {
        Some(t) => t.shape.clone(),
        None => {
            return Err(TensorError::BadShape { shape: vec![] });
        }
    };
    if let Some((index, t)) = tensors.iter().enumerate().find(|(_, t)| t.shape != shape) {
        return Err(TensorError::ShapeMismatch {
            index,
            expected: shape,
            found: t.shape.clone(),
        });
    }
    let d = numel(&shape)?;
    let vectors = UnitVectors::new(d as u64, tensors.iter().map(|t| &t.data))?;
    Ok((shape, vectors))
}

/// The estimates, in the tensors' shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TensorEstimate {
    /// Estimated mean tensor (0.5 where a coordinate got no report, see `unreported`).
    pub mean: Tensor,
    /// Estimated sum tensor.
    pub sum: Tensor,
    /// Row-major flat indices that got no report.
    pub unreported: Vec<u32>,
}

impl VectorSum {
    /// Client side for a tensor whose number of elements is d: validates it and returns its t
    /// messages (coordinates are row-major flat indices).
    pub fn randomize_tensor(
        &self,
        x: &Tensor,
        rng: &mut crate::rng::SecureRng,
    ) -> Result<Vec<CoordinateMessage>, TensorError> {
        Ok(self.randomize(&x.data, rng)?)
    }

    /// The debiased estimates reshaped to `shape` (whose product must be d).
    pub fn estimate_tensor(
        &self,
        state: &CoordinateSums,
        shape: &[usize],
    ) -> Result<TensorEstimate, TensorError> {
        let n = numel(shape)?;
        if n != self.d() as usize {
            return Err(TensorError::LengthMismatch {
                shape: shape.to_vec(),
                expected: n,
                found: self.d() as usize,
            });
        }
        let e = self.estimate(state)?;
        Ok(TensorEstimate {
            mean: Tensor::new(shape.to_vec(), e.mean)?,
            sum: Tensor::new(shape.to_vec(), e.sum)?,
            unreported: e.unreported,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{Gamma, Precision};

    fn cube(i: usize) -> Tensor {
        // 3 x 2 x 4 tensor with values depending on the position and the user.
        let data = (0..24)
            .map(|f| ((f * 7 + i * 13) % 29) as f64 / 28.0)
            .collect();
        Tensor::new(vec![3, 2, 4], data).unwrap()
    }

    #[test]
    fn three_dimensional_tensor_round_trips_unbiased() {
        let tensors: Vec<Tensor> = (0..3000).map(cube).collect();
        let (shape, vectors) = flatten(&tensors).unwrap();
        assert_eq!(shape, vec![3, 2, 4]);
        assert_eq!(vectors.dimension(), 24);
        let p =
            VectorSum::new(24, 2, Precision::new(4).unwrap(), Gamma::new(0.2).unwrap()).unwrap();
        let truth = vectors.mean();
        let pred = p.exact_mean_mse(&vectors);
        // Average the mean estimate over 200 fixed-seed repetitions: each coordinate's
        // average must be within 4.5 standard errors of the truth (per-coordinate sd from the
        // exact prediction divided evenly is a rough guide; use the empirical sd instead).
        let reps = 200;
        let mut acc = [0.0f64; 24];
        let mut acc2 = [0.0f64; 24];
        for r in 0..reps {
            let st = p.simulate(&vectors, 77 + r, 0, false).unwrap();
            let est = p.estimate_tensor(&st, &shape).unwrap();
            assert_eq!(est.mean.shape(), &[3, 2, 4]);
            assert_eq!(est.sum.shape(), &[3, 2, 4]);
            for (f, v) in est.mean.data().iter().enumerate() {
                acc[f] += v;
                acc2[f] += v * v;
            }
        }
        let mut mse_of_avg = 0.0;
        for f in 0..24 {
            let m = acc[f] / reps as f64;
            let var = acc2[f] / reps as f64 - m * m;
            let se = (var / reps as f64).sqrt();
            assert!(
                (m - truth[f]).abs() < 4.5 * se,
                "coordinate {f}: {m} vs {}",
                truth[f]
            );
            mse_of_avg += var;
        }
        // The summed per-coordinate variance is the predicted MSE (within 15%).
        assert!(
            (mse_of_avg / pred - 1.0).abs() < 0.15,
            "{mse_of_avg} vs {pred}"
        );
        // Indexing follows row-major order.
        let t = cube(0);
        assert_eq!(t.get(&[1, 0, 2]), Some(t.data()[10]));
        assert_eq!(t.get(&[3, 0, 0]), None);
    }

    #[test]
    fn shapes_are_checked() {
        assert!(Tensor::new(vec![2, 0], vec![]).is_err());
        assert!(Tensor::new(vec![], vec![]).is_err());
        let e = Tensor::new(vec![2, 3], vec![0.5; 5]).unwrap_err();
        assert!(e.to_string().contains("holds 6 values, got 5"), "{e}");
        let a = Tensor::new(vec![2, 3], vec![0.5; 6]).unwrap();
        let b = Tensor::new(vec![3, 2], vec![0.5; 6]).unwrap();
        let e = flatten(&[a.clone(), b]).unwrap_err();
        assert!(e.to_string().contains("tensor 1 has shape [3, 2]"), "{e}");
        let bad = Tensor::new(vec![2, 3], vec![0.5, 0.5, 2.0, 0.5, 0.5, 0.5]).unwrap();
        let e = flatten(&[a.clone(), bad]).unwrap_err();
        assert!(e.to_string().contains("vector 1, coordinate 2"), "{e}");
        let p = VectorSum::new(6, 1, Precision::new(2).unwrap(), Gamma::new(0.3).unwrap()).unwrap();
        assert!(p.estimate_tensor(&p.aggregator(), &[4, 2]).is_err());
        let mut rng = crate::rng::SecureRng::from_os().unwrap();
        assert_eq!(p.randomize_tensor(&a, &mut rng).unwrap().len(), 1);
        assert!(numel(&[usize::MAX, 2]).is_err());
    }
}
