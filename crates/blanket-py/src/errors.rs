//! Rust errors as Python exceptions. Every exception is a `ValueError` subclass defined in
//! `blanket.errors` (so it carries a docstring and typed attributes); nothing panics across
//! the boundary.

use blanket::analyzer::AggregateError;
use blanket::calibrate::CalibrationError;
use blanket::params::ParamError;
use blanket::protocol::vector_sum::{VectorCalibrationError, VectorSumError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// An error of the bindings, built without the GIL (inside `allow_threads`) and turned into
/// the right `blanket.errors` exception when it crosses into Python.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// A parameter outside its range: `ParameterError(field, allowed, value)`.
    Param {
        /// The parameter's Python name.
        field: String,
        /// The allowed range, in words.
        allowed: String,
        /// The rejected value, printed.
        value: String,
    },
    /// No parameter choice certifies the target: `InfeasibleError`, with the smallest n
    /// that would work if there is one.
    Infeasible {
        /// The calibrator's explanation.
        message: String,
        /// Smallest number of users that works at this (eps, delta).
        min_n: Option<u64>,
    },
    /// A message outside the protocol's message domain: `MessageError`.
    Message(String),
    /// A computation that has no answer for valid inputs (e.g. no eps reaches a delta):
    /// `NoGuaranteeError`.
    NoGuarantee(String),
}

/// The bindings' result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A parameter error for `field`, which must be `allowed`, given `value`.
    pub fn param(field: &str, allowed: impl Into<String>, value: impl ToString) -> Self {
        Error::Param {
            field: field.to_string(),
            allowed: allowed.into(),
            value: value.to_string(),
        }
    }
}

impl From<ParamError> for Error {
    fn from(e: ParamError) -> Self {
        match e {
            ParamError::OutOfRange {
                field,
                allowed,
                value,
            } => Error::param(field, allowed, value),
        }
    }
}

impl From<CalibrationError> for Error {
    fn from(e: CalibrationError) -> Self {
        match e {
            CalibrationError::Param(p) => p.into(),
            CalibrationError::Infeasible { min_n, .. } => Error::Infeasible {
                message: e.to_string(),
                min_n,
            },
        }
    }
}

impl From<VectorCalibrationError> for Error {
    fn from(e: VectorCalibrationError) -> Self {
        match e {
            VectorCalibrationError::Param(p) => p.into(),
            VectorCalibrationError::Infeasible { min_n, .. } => Error::Infeasible {
                message: e.to_string(),
                min_n,
            },
        }
    }
}

impl From<VectorSumError> for Error {
    fn from(e: VectorSumError) -> Self {
        match e {
            VectorSumError::Param(p) => p.into(),
            other => Error::param("values", "rows of d numbers in [0, 1]", other),
        }
    }
}

impl From<AggregateError> for Error {
    fn from(e: AggregateError) -> Self {
        Error::Message(e.to_string())
    }
}

impl Error {
    /// The error's text, as the CLI prints it.
    pub fn message(&self) -> String {
        match self {
            Error::Param {
                field,
                allowed,
                value,
            } => format!("{field} must be {allowed}, got {value}"),
            Error::Infeasible { message, .. }
            | Error::Message(message)
            | Error::NoGuarantee(message) => message.clone(),
        }
    }

    /// The `blanket.errors` exception for this error.
    pub fn into_pyerr(self, py: Python<'_>) -> PyErr {
        let build = || -> PyResult<PyErr> {
            let module = py.import("blanket.errors")?;
            let kwargs = PyDict::new(py);
            let class = match &self {
                Error::Param {
                    field,
                    allowed,
                    value,
                } => {
                    kwargs.set_item("field", field)?;
                    kwargs.set_item("allowed", allowed)?;
                    kwargs.set_item("value", value)?;
                    "ParameterError"
                }
                Error::Infeasible { min_n, .. } => {
                    kwargs.set_item("min_n", *min_n)?;
                    "InfeasibleError"
                }
                Error::Message(_) => "MessageError",
                Error::NoGuarantee(_) => "NoGuaranteeError",
            };
            let instance = module
                .getattr(class)?
                .call((self.message(),), Some(&kwargs))?;
            Ok(PyErr::from_value(instance))
        };
        // If blanket.errors cannot be imported (a broken install), still raise a ValueError.
        build().unwrap_or_else(|_| pyo3::exceptions::PyValueError::new_err(self.message()))
    }
}

impl From<Error> for PyErr {
    fn from(e: Error) -> Self {
        Python::with_gil(|py| e.into_pyerr(py))
    }
}
