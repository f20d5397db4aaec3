//! `blanket.calibrate.ikos_sum`: the multi-message (IKOS split-and-mix) DP sum's parameters,
//! as `blanket calibrate ikos-sum --json` reports them (docs/multi-message.md). No gamma: eps
//! fixes the noise, sigma fixes delta = (1 + e^eps) 2^-sigma.

use crate::errors::{Error, Result};
use crate::json;
use blanket::display::echo;
use blanket::params::NumUsers;
use blanket::protocol::ikos::{MAX_SIGMA, MAX_USERS};
use blanket::protocol::{IkosError, IkosSum, IkosSumError, IkosSumReport};
use pyo3::prelude::*;
use serde::Serialize;

/// sigma when neither sigma nor delta is given (as `blanket calibrate ikos-sum`).
const DEFAULT_SIGMA: u32 = 40;

/// What `blanket calibrate ikos-sum --json` prints.
#[derive(Serialize)]
struct IkosCalibration {
    protocol: &'static str,
    n: u64,
    eps: f64,
    p: u32,
    q: u128,
    m: u32,
    alpha: f64,
    sigma: u32,
    eps_realized: f64,
    delta: f64,
    noise_bound: u64,
    predicted_mse: f64,
    predicted_mse_meaning: &'static str,
    bytes_per_user: u64,
    assumes: &'static str,
    calibration: &'static str,
}

/// Bytes of one element of Z_q on the wire.
fn element_bytes(q: u128) -> u64 {
    let bits = 128 - (q - 1).leading_zeros();
    u64::from(bits.div_ceil(8).max(1))
}

impl IkosCalibration {
    fn of(r: &IkosSumReport) -> Self {
        Self {
            protocol: "ikos-sum",
            n: r.users,
            eps: r.epsilon,
            p: r.precision,
            q: r.modulus,
            m: r.shares,
            alpha: r.alpha,
            sigma: r.sigma,
            eps_realized: r.epsilon_realized,
            delta: r.delta,
            noise_bound: r.noise_bound,
            predicted_mse: r.predicted_mse,
            predicted_mse_meaning: "upper bound on the expected squared error of the estimated sum for any data of n users (rounding <= n/4 plus the discrete Laplace variance, over p^2)",
            bytes_per_user: u64::from(r.shares) * element_bytes(r.modulus),
            assumes: r.assumes,
            calibration: "no gamma to calibrate: the noise is fixed by eps (alpha = e^(-eps/p) rounded up), m by sigma (m_required), delta = (1 + e^eps) 2^-sigma",
        }
    }
}

/// The smallest sigma with (1 + e^eps) 2^-sigma <= delta (docs/multi-message.md: the
/// split-and-mix statistical distance 2^-sigma, times 1 + e^eps for the DP conversion).
fn sigma_for_delta(eps: f64, delta: f64) -> Result<u32> {
    if !(delta > 0.0 && delta < 1.0) {
        return Err(Error::param("delta", "a number in (0, 1)", echo(delta)));
    }
    (1..=MAX_SIGMA)
        .find(|&s| (1.0 + eps.exp()) * 2f64.powi(-(s as i32)) <= delta)
        .ok_or_else(|| {
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
        (None, None) => DEFAULT_SIGMA,
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
            e => Error::param(
                "eps",
                "a value the IKOS sum supports",
                format!("{} ({e})", echo(eps)),
            ),
        })?;
    Ok(json(&IkosCalibration::of(&p.report()))?)
}
