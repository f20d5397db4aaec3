//! `blanket.calibrate.ikos_sum`: the multi-message (IKOS split-and-mix) DP sum's parameters,
//! as `blanket calibrate ikos-sum --json` reports them (docs/multi-message.md). No gamma: eps
//! fixes the noise, sigma fixes delta = (1 + e^eps) 2^-sigma.

use crate::errors::{Error, Result};
use crate::json;
use blanket::display::echo;
use blanket::params::NumUsers;
use blanket::protocol::ikos::{MAX_SIGMA, MAX_USERS};
use blanket::protocol::{IkosError, IkosSum, IkosSumError};
use blanket_report::ikos::{default_sigma, smallest_sigma, IkosCalibration};
use pyo3::prelude::*;

/// The smallest sigma with (1 + e^eps) 2^-sigma <= delta (docs/multi-message.md: the
/// split-and-mix statistical distance 2^-sigma, times 1 + e^eps for the DP conversion).
fn sigma_for_delta(eps: f64, delta: f64) -> Result<u32> {
    if !(delta > 0.0 && delta < 1.0) {
        return Err(Error::param("delta", "a number in (0, 1)", echo(delta)));
    }
    smallest_sigma(eps, delta).ok_or_else(|| {
        Error::param(
            "delta",
            format!(
                "at least (1 + e^eps) 2^-{MAX_SIGMA} (no sigma up to {MAX_SIGMA} reaches less)"
            ),
            echo(delta),
        )
    })
}

/// Calibrates the IKOS sum; the report of `blanket calibrate ikos-sum --json` as JSON text.
#[pyfunction]
#[pyo3(signature = (n, eps, sigma, delta))]
pub fn calibrate_ikos_sum(
    py: Python<'_>,
    n: f64,
    eps: f64,
    sigma: Option<u64>,
    delta: Option<f64>,
) -> PyResult<String> {
    if !(eps.is_finite() && eps > 0.0) {
        return Err(Error::param("eps", "a finite number > 0", echo(eps)).into());
    }
    let sigma = match (sigma, delta) {
        (Some(s), None) if (1..=u64::from(MAX_SIGMA)).contains(&s) => s as u32,
        (Some(s), None) => {
            return Err(
                Error::param("sigma", format!("an integer from 1 to {MAX_SIGMA}"), s).into(),
            )
        }
        (Some(s), Some(_)) => {
            return Err(
                Error::param("sigma", "None when delta is given (delta fixes sigma)", s).into(),
            )
        }
        (None, Some(d)) => sigma_for_delta(eps, d)?,
        (None, None) => default_sigma(eps).map_err(|e| {
            Error::param(
                "eps",
                "small enough that some sigma up to 512 gives delta <= 1e-6 (the default target; or pass delta)",
                format!("{} ({e})", echo(eps)),
            )
        })?,
    };
    let users = NumUsers::from_f64(n).map_err(Error::from)?.get();
    if users > MAX_USERS {
        return Err(Error::param(
            "n",
            format!("an integer from 2 to {MAX_USERS} for the IKOS sum (m_required is evaluated up to n = {MAX_USERS})"),
            users,
        )
        .into());
    }
    let p = py
        .allow_threads(|| IkosSum::new(users, eps, sigma))
        .map_err(|e| match e {
            IkosSumError::Ikos(IkosError::NoShareCount { .. }) => Error::param(
                "sigma",
                "low enough that a share count exists (lower sigma or raise delta)",
                format!("{sigma} ({e})"),
            ),
            IkosSumError::Param(p) => p.into(),
            e @ IkosSumError::VacuousDelta { .. } => Error::param(
                "sigma",
                "large enough that delta = (1 + e^eps) 2^-sigma < 1",
                format!("{sigma} ({e})"),
            ),
            e => Error::param(
                "eps",
                "a value the IKOS sum supports",
                format!("{} ({e})", echo(eps)),
            ),
        })?;
    Ok(json(&IkosCalibration::of(&p.report()))?)
}
