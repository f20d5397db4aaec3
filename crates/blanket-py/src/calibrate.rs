//! `blanket.calibrate`: gamma (and k, t) for a target, by the same core calibrators as
//! `blanket calibrate histogram|scalar-sum|vector-sum`, reported with the same JSON keys.

use crate::errors::{Error, Result};
use crate::json;
use blanket::accounting::{Best, BlanketTheorem31, ShuffleAccountant};
use blanket::calibrate::Target;
use blanket::params::{Delta, DomainSize, Epsilon, NumUsers, Precision};
use blanket_report::calibrate::{
    add_comparisons, histogram, scalar_sum, vector_sum, CalibrationReport,
};
use pyo3::prelude::*;

type Calibrator<'a> = dyn Fn(&dyn ShuffleAccountant) -> Result<CalibrationReport> + Sync + 'a;

/// The calibration under `accountant` ("best" or "paper"), plus the paper's closed form's
/// figures and, with `compare`, every certified method's.
fn run(accountant: &str, compare: bool, with: &Calibrator) -> Result<CalibrationReport> {
    let acct: Box<dyn ShuffleAccountant> = match accountant {
        "best" => Box::new(Best::default()),
        "paper" => Box::new(BlanketTheorem31),
        other => return Err(Error::param("accountant", "'best' or 'paper'", other)),
    };
    let mut report = with(acct.as_ref())?;
    add_comparisons(&mut report, compare, with, &Error::message);
    Ok(report)
}

fn target(n: f64, eps: f64, delta: f64) -> Result<Target> {
    Ok(Target {
        eps: Epsilon::new(eps)?,
        delta: Delta::new(delta)?,
        n: NumUsers::from_f64(n)?,
    })
}

/// Calibrates the histogram protocol; the report of `blanket calibrate histogram --json`
/// as a JSON string.
#[pyfunction]
#[pyo3(signature = (n, eps, delta, domain, accountant, compare))]
pub fn calibrate_histogram(
    py: Python<'_>,
    n: f64,
    eps: f64,
    delta: f64,
    domain: u64,
    accountant: &str,
    compare: bool,
) -> PyResult<String> {
    let target = target(n, eps, delta)?;
    let m = DomainSize::new(domain).map_err(Error::from)?;
    let with = |acct: &dyn ShuffleAccountant| Ok(histogram(m, &target, acct)?.1);
    let report = py.allow_threads(|| run(accountant, compare, &with))?;
    Ok(json(&report)?)
}

/// Calibrates the scalar-sum protocol; the report of `blanket calibrate scalar-sum --json`
/// as a JSON string.
#[pyfunction]
#[pyo3(signature = (n, eps, delta, k, paper_domain, accountant, compare))]
#[allow(clippy::too_many_arguments)]
pub fn calibrate_scalar_sum(
    py: Python<'_>,
    n: f64,
    eps: f64,
    delta: f64,
    k: Option<u64>,
    paper_domain: bool,
    accountant: &str,
    compare: bool,
) -> PyResult<String> {
    let target = target(n, eps, delta)?;
    let k = k.map(Precision::new).transpose().map_err(Error::from)?;
    let with = |acct: &dyn ShuffleAccountant| Ok(scalar_sum(k, paper_domain, &target, acct)?.1);
    let report = py.allow_threads(|| run(accountant, compare, &with))?;
    Ok(json(&report)?)
}

/// Calibrates the vector-sum protocol; the report of `blanket calibrate vector-sum --json`
/// as a JSON string.
#[pyfunction]
#[pyo3(signature = (n, d, eps, delta, k, t, paper_domain, accountant, compare))]
#[allow(clippy::too_many_arguments)]
pub fn calibrate_vector_sum(
    py: Python<'_>,
    n: f64,
    d: u64,
    eps: f64,
    delta: f64,
    k: Option<u64>,
    t: Option<u64>,
    paper_domain: bool,
    accountant: &str,
    compare: bool,
) -> PyResult<String> {
    let target = target(n, eps, delta)?;
    let k = k.map(Precision::new).transpose().map_err(Error::from)?;
    let with =
        |acct: &dyn ShuffleAccountant| Ok(vector_sum(d, t, k, paper_domain, &target, acct)?.1);
    let report = py.allow_threads(|| run(accountant, compare, &with))?;
    Ok(json(&report)?)
}
