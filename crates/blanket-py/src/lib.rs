//! `blanket._blanket`: the native half of the `blanket` Python package (the Python half,
//! with the documented API, lives in `python/blanket`). Every number comes from the core
//! crate's functions, the ones the `blanket` CLI calls; reports are the CLI's `--json`
//! objects, handed to Python as JSON text so the keys and the floats are the same.

mod account;
mod calibrate;
mod errors;
mod ikos;
mod protocol;

use pyo3::prelude::*;

/// `value` as JSON text (what the CLI prints with `--json`).
fn json<T: serde::Serialize>(value: &T) -> Result<String, errors::Error> {
    serde_json::to_string(value).map_err(|e| errors::Error::NoGuarantee(e.to_string()))
}

/// The native module.
#[pymodule]
fn _blanket(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(account::account_shuffle, m)?)?;
    m.add_function(wrap_pyfunction!(account::account_curve, m)?)?;
    m.add_function(wrap_pyfunction!(account::account_compose, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate::calibrate_histogram, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate::calibrate_scalar_sum, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate::calibrate_vector_sum, m)?)?;
    m.add_function(wrap_pyfunction!(ikos::calibrate_ikos_sum, m)?)?;
    m.add_class::<protocol::PyHistogram>()?;
    m.add_class::<protocol::PyScalarSum>()?;
    m.add_class::<protocol::PyVectorSum>()?;
    m.add("CHUNK", protocol::CHUNK)?;
    m.add("EPS0_MAX", account::EPS0_MAX)?;
    Ok(())
}
