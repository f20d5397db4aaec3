//! Protocols: (randomizer, analyzer, parameters, guarantee, predicted error), one module each.

pub mod frequency;
pub mod histogram;
pub mod ikos;
#[cfg(test)]
mod ikos_alternating;
pub mod ikos_alternating_bound;
pub mod ikos_bound;
pub mod ikos_sum;
pub mod ikos_vector;
mod ln_factorial;
pub mod scalar_sum;
pub mod tensor;
pub mod vector_sum;

pub use histogram::{Histogram, HistogramEstimate, HistogramShape};
pub use ikos::{m_required, Ikos, IkosError};
pub use ikos_alternating_bound::{
    alternating_distance_bound_log2, m_required_alternating, AlternatingBoundError,
};
pub use ikos_sum::{IkosSum, IkosSumError, IkosSumReport};
pub use ikos_vector::{IkosVector, IkosVectorError, IkosVectorReport, VectorInput};
pub use scalar_sum::{ScalarSum, ScalarSumEstimate, ScalarSumShape};
pub use tensor::{Tensor, TensorError};
pub use vector_sum::{
    UnitVectors, VectorCalibration, VectorCalibrationError, VectorSum, VectorSumError,
    VectorSumEstimate, VectorSumShape,
};

use serde::Serialize;

/// Which domain size the accountant is told for GRR over the k + 1 encoded levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DomainConvention {
    /// m = k + 1, the true number of message values: the safe choice, and blanket's default.
    #[default]
    TrueDomain,
    /// m = k, as the papers write it (Balle et al. 2019 Section 4; Scott et al. 2021).
    /// For reproduction only: the guarantee it suggests is not certified for the real
    /// k + 1 message values.
    Paper,
}
