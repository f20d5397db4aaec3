//! Tasks: what an operator asks for (protocol, target, users, batch size, deadline, budget),
//! its calibration by the core's calibrator, and the client parameters published at the task
//! URL.
//!
//! The guarantee is calibrated at n = `min_batch`: every forwarded batch holds at least that
//! many reports, each user is in one batch, and amplification by shuffling only grows with n,
//! so each user's guarantee is at least the target (the release re-certifies at the real batch
//! sizes anyway, [`crate::release`]). The predicted error is stated at `expected_users`.

use crate::multi::{self, IkosParams};
use crate::problem::Rejection;
use crate::wire::{TaskId, MAX_BATCH_REPORTS};
use blanket::accounting::{Best, Guarantee, ShuffleAccountant};
use blanket::calibrate::{calibrate, Calibratable, CalibrationError, Target};
use blanket::params::{Delta, DomainSize, Epsilon, Gamma, NumUsers, Precision};
use blanket::protocol::{DomainConvention, HistogramShape, ScalarSumShape};
use serde::{Deserialize, Serialize};

/// The protocol a task runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Protocol {
    /// Histogram over `domain` categories (values 0..domain).
    Histogram {
        /// Number of categories m.
        domain: u64,
    },
    /// Sum of reals in [0, 1]; `k` fixed or chosen by the calibrator.
    ScalarSum {
        /// Precision k (number of levels minus one); `None` in a request: calibrated.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        k: Option<u64>,
    },
    /// Sum of vectors in [0, 1]^d: each user sends t messages (coordinate, level); t and k
    /// fixed or chosen by the calibrator ([`crate::multi`]).
    VectorSum {
        /// Dimension d.
        d: u64,
        /// Coordinates (messages) per user; `None` in a request: calibrated.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        t: Option<u64>,
        /// Precision k; `None` in a request: calibrated.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        k: Option<u64>,
    },
    /// DP sum of reals in [0, 1] over split-and-mix: each client sends m shares mod q
    /// ([`crate::multi`]).
    IkosSum {
        /// Security parameter sigma; `None` in a request: the smallest with
        /// (1 + e^eps) 2^-sigma <= delta.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sigma: Option<u32>,
        /// q, m, p and h, chosen by the server (absent in a request).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        calibrated: Option<IkosParams>,
    },
}

impl Protocol {
    /// The protocol's name in the API and the CLI.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Histogram { .. } => "histogram",
            Self::ScalarSum { .. } => "scalar-sum",
            Self::VectorSum { .. } => "vector-sum",
            Self::IkosSum { .. } => "ikos-sum",
        }
    }

    /// Reports each user sends: 1, t (vector sum) or m (IKOS sum; 1 before calibration).
    pub fn messages_per_user(&self) -> u64 {
        match self {
            Self::VectorSum { t: Some(t), .. } => *t,
            Self::IkosSum {
                calibrated: Some(c),
                ..
            } => u64::from(c.shares),
            _ => 1,
        }
    }
}

/// A task creation request (`POST /tasks`, `blanket task create`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskRequest {
    /// The protocol.
    pub protocol: Protocol,
    /// Target epsilon of one release.
    pub eps: f64,
    /// Target delta of one release.
    pub delta: f64,
    /// Expected number of users per release (the predicted error is stated for it).
    pub expected_users: u64,
    /// Smallest batch the shuffler forwards, in users (the guarantee is certified for it; the
    /// shuffler counts reports: `min_batch` times the messages per user).
    pub min_batch: u64,
    /// Unix time (seconds) after which the shuffler refuses reports.
    pub deadline_unix: u64,
    /// Total epsilon over all releases (basic composition).
    pub budget_eps: f64,
    /// Total delta over all releases (basic composition).
    pub budget_delta: f64,
}

/// A guarantee as stored and published: certified, rounded to the safe side by the accountant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Certified {
    /// Certified epsilon.
    pub epsilon: f64,
    /// Delta at which it is certified.
    pub delta: f64,
    /// The bound that certified it.
    pub method: String,
}

impl From<Guarantee> for Certified {
    fn from(g: Guarantee) -> Self {
        Self {
            epsilon: g.epsilon,
            delta: g.delta,
            method: g.method.name().to_string(),
        }
    }
}

/// A calibrated task: the request plus the parameters the calibrator chose.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskConfig {
    /// The task id.
    pub id: String,
    /// The request, with `protocol` completed (k filled in for a scalar sum).
    pub request: TaskRequest,
    /// Blanket probability gamma (certified); 0 for the IKOS sum (no blanket).
    pub gamma: f64,
    /// Local eps0 of one report (one message); 0 for the IKOS sum, whose single share is
    /// uniform on Z_q (a client's m shares together reveal its noisy value).
    pub eps0: f64,
    /// The guarantee certified for one batch of `min_batch` reports.
    pub certified: Certified,
    /// Predicted worst-case MSE at `expected_users`, on the protocol's own scale (a count for
    /// the histogram, the sum for the scalar and IKOS sums, the mean vector summed over
    /// coordinates for the vector sum).
    pub predicted_mse: f64,
}

impl TaskConfig {
    /// The smallest batch in reports, as the shuffler is told.
    pub fn min_batch_reports(&self) -> u64 {
        self.request
            .min_batch
            .saturating_mul(self.request.protocol.messages_per_user())
    }
}

/// What a client needs, published at `GET /tasks/{id}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientParams {
    /// The task id (32 hex digits).
    pub task_id: String,
    /// The protocol with all its parameters.
    pub protocol: Protocol,
    /// Blanket probability gamma.
    pub gamma: f64,
    /// The wire version to use.
    pub wire_version: u8,
    /// Where reports go (the shuffler).
    pub upload_url: String,
    /// The HPKE suite.
    pub hpke_suite: std::collections::BTreeMap<String, String>,
    /// The analyzer's public key for this task (hex).
    pub hpke_public_key: String,
    /// Deadline (unix seconds).
    pub deadline_unix: u64,
    /// The calibration, for the record.
    pub config: TaskConfig,
}

fn out_of_range(field: &str, allowed: &str, value: impl ToString) -> Rejection {
    Rejection::OutOfRange {
        field: field.to_string(),
        allowed: allowed.to_string(),
        value: value.to_string(),
    }
}

/// The GRR instance and n the accountant sees for a batch of `n` reports.
pub fn accounted(config: &TaskConfig, n: u64) -> Result<Guarantee, Rejection> {
    let r = &config.request;
    let target = Target {
        eps: Epsilon::new(r.eps)?,
        delta: Delta::new(r.delta)?,
        n: NumUsers::new(n)?,
    };
    let gamma = Gamma::new(config.gamma)?;
    let (randomizer, users) = match r.protocol {
        Protocol::Histogram { domain } => HistogramShape {
            m: DomainSize::new(domain)?,
        }
        .instance((), gamma, &target),
        Protocol::ScalarSum { k } => {
            let k = Precision::new(k.unwrap_or(0))?;
            scalar_shape().instance(k, gamma, &target)
        }
        Protocol::VectorSum { .. } | Protocol::IkosSum { .. } => {
            return Err(Rejection::Infeasible(
                "multi-message protocols are certified by certify_batch".into(),
            ))
        }
    };
    let accountant = Best::default();
    let g = accountant
        .guarantee(&randomizer, users, target.delta)
        .map_err(|e| Rejection::Infeasible(e.to_string()))?;
    // The epsilon bisection's upper end can exceed the calibrated target by its resolution;
    // where the accountant certifies the target exactly, state the target (as the
    // calibrator does, `ShuffleAccountant::certify_at`).
    if g.epsilon > target.eps.get() {
        if let Some(method) =
            accountant.certify_at(&randomizer, users, target.eps.get(), target.delta.get())
        {
            return Ok(Guarantee {
                epsilon: target.eps.get(),
                delta: target.delta.get(),
                method,
            });
        }
    }
    Ok(g)
}

/// The guarantee of one batch of `reports` reports (`reports / messages_per_user` users),
/// certified by the core's accountant (histogram, scalar and vector sums) or the IKOS bound.
pub fn certify_batch(config: &TaskConfig, reports: u64) -> Result<Certified, Rejection> {
    let users = reports / config.request.protocol.messages_per_user();
    match config.request.protocol {
        Protocol::Histogram { .. } | Protocol::ScalarSum { .. } => {
            accounted(config, reports).map(Certified::from)
        }
        Protocol::VectorSum { d, t, k } => {
            let p = multi::vector_protocol(d, t, k, config.gamma)?;
            multi::certify_vector(config, &p, users)
        }
        Protocol::IkosSum { sigma, calibrated } => {
            let (sigma, c) = ikos_parts(sigma, calibrated)?;
            let p = multi::ikos_protocol(config.request.eps, sigma, &c)?;
            multi::certify_ikos(config, &p, sigma, users)
        }
    }
}

/// sigma and the parameters of a calibrated IKOS task.
pub fn ikos_parts(
    sigma: Option<u32>,
    calibrated: Option<IkosParams>,
) -> Result<(u32, IkosParams), Rejection> {
    match (sigma, calibrated) {
        (Some(s), Some(c)) => Ok((s, c)),
        _ => Err(Rejection::OutOfRange {
            field: "calibrated".into(),
            allowed: "set by the server (sigma, q, m, p)".into(),
            value: "missing".into(),
        }),
    }
}

fn scalar_shape() -> ScalarSumShape {
    ScalarSumShape {
        k: None,
        convention: DomainConvention::TrueDomain,
    }
}

fn calibration_error(e: CalibrationError) -> Rejection {
    match e {
        CalibrationError::Param(p) => p.into(),
        other => Rejection::Infeasible(other.to_string()),
    }
}

/// Validates a request and calibrates it (CPU-bound: call from a blocking thread).
pub fn calibrate_task(id: TaskId, request: TaskRequest) -> Result<TaskConfig, Rejection> {
    let eps = Epsilon::new(request.eps)?;
    let delta = Delta::new(request.delta)?;
    let min = NumUsers::new(request.min_batch).map_err(|_| {
        out_of_range(
            "min_batch",
            &format!("an integer from 2 to {MAX_BATCH_REPORTS}"),
            request.min_batch,
        )
    })?;
    if request.min_batch > MAX_BATCH_REPORTS as u64 {
        return Err(out_of_range(
            "min_batch",
            &format!("an integer from 2 to {MAX_BATCH_REPORTS}"),
            request.min_batch,
        ));
    }
    let expected = NumUsers::new(request.expected_users).map_err(|_| {
        out_of_range(
            "expected_users",
            "an integer from 2 to 2^48",
            request.expected_users,
        )
    })?;
    if !(request.budget_eps.is_finite() && request.budget_eps >= request.eps) {
        return Err(out_of_range(
            "budget_eps",
            &format!("at least eps = {} (one release)", request.eps),
            request.budget_eps,
        ));
    }
    if !(request.budget_delta >= request.delta && request.budget_delta < 1.0) {
        return Err(out_of_range(
            "budget_delta",
            &format!("in [delta = {}, 1)", request.delta),
            request.budget_delta,
        ));
    }
    let target = Target { eps, delta, n: min };
    let accountant = Best::default();
    let mut request = request;
    let (gamma, eps0, guarantee, mse) = match request.protocol {
        Protocol::Histogram { domain } => {
            let shape = HistogramShape {
                m: DomainSize::new(domain)?,
            };
            let cal = calibrate(&shape, &target, &accountant).map_err(calibration_error)?;
            let mse = shape.predicted_mse((), cal.gamma, expected);
            (cal.gamma, cal.eps0, cal.certified, mse)
        }
        Protocol::ScalarSum { k } => {
            let mut shape = scalar_shape();
            shape.k = k.map(Precision::new).transpose()?;
            let cal = calibrate(&shape, &target, &accountant).map_err(calibration_error)?;
            request.protocol = Protocol::ScalarSum {
                k: Some(u64::from(cal.choice.get())),
            };
            let mse = shape.predicted_mse(cal.choice, cal.gamma, expected);
            (cal.gamma, cal.eps0, cal.certified, mse)
        }
        Protocol::VectorSum { d, t, k } => {
            let c = multi::calibrate_vector(d, t, k, &target, expected)?;
            return Ok(multi_config(id, request, c));
        }
        Protocol::IkosSum { sigma, calibrated } => {
            let c = multi::calibrate_ikos(&request, sigma, calibrated)?;
            return Ok(multi_config(id, request, c));
        }
    };
    let certified = guarantee.ok_or_else(|| {
        Rejection::Infeasible("the accountant cannot certify the randomizer users run".into())
    })?;
    Ok(TaskConfig {
        id: id.hex(),
        request,
        gamma: gamma.get(),
        eps0,
        certified: certified.into(),
        predicted_mse: mse,
    })
}

fn multi_config(id: TaskId, mut request: TaskRequest, c: multi::Calibrated) -> TaskConfig {
    request.protocol = c.protocol;
    TaskConfig {
        id: id.hex(),
        request,
        gamma: c.gamma,
        eps0: c.eps0,
        certified: c.certified,
        predicted_mse: c.predicted_mse,
    }
}

/// Predicted worst-case MSE of a release of `n` reports (`n / messages_per_user` users).
pub fn predicted_mse(config: &TaskConfig, n: u64) -> Result<f64, Rejection> {
    let users = (n / config.request.protocol.messages_per_user()).max(2);
    Ok(match config.request.protocol {
        Protocol::Histogram { domain } => HistogramShape {
            m: DomainSize::new(domain)?,
        }
        .predicted_mse((), Gamma::new(config.gamma)?, NumUsers::new(n)?),
        Protocol::ScalarSum { k } => scalar_shape().predicted_mse(
            Precision::new(k.unwrap_or(0))?,
            Gamma::new(config.gamma)?,
            NumUsers::new(n)?,
        ),
        Protocol::VectorSum { d, t, k } => {
            multi::vector_protocol(d, t, k, config.gamma)?.worst_case_mean_mse(users)
        }
        Protocol::IkosSum { sigma, calibrated } => {
            let (sigma, c) = ikos_parts(sigma, calibrated)?;
            let p = multi::ikos_protocol(config.request.eps, sigma, &c)?;
            multi::ikos_mse(&p, users)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn request() -> TaskRequest {
        TaskRequest {
            protocol: Protocol::Histogram { domain: 4 },
            eps: 1.0,
            delta: 1e-6,
            expected_users: 10_000,
            min_batch: 1000,
            deadline_unix: u64::MAX / 2,
            budget_eps: 3.0,
            budget_delta: 3e-6,
        }
    }

    #[test]
    fn calibrates_and_certifies_at_min_batch() {
        let c = calibrate_task(TaskId([1; 16]), request()).unwrap();
        assert!(c.certified.epsilon <= 1.0 && c.certified.delta <= 1e-6);
        assert!(c.gamma > 0.0 && c.gamma < 1.0);
        // Re-certification at the same n gives the calibrated guarantee; a bigger batch is
        // no worse.
        let at_min = accounted(&c, 1000).unwrap();
        assert!(at_min.epsilon <= 1.0);
        assert!(accounted(&c, 5000).unwrap().epsilon <= at_min.epsilon);
    }

    #[test]
    fn scalar_sum_fills_in_k() {
        let mut r = request();
        r.protocol = Protocol::ScalarSum { k: None };
        let c = calibrate_task(TaskId([1; 16]), r).unwrap();
        assert!(matches!(c.request.protocol, Protocol::ScalarSum { k: Some(k) } if k >= 1));
    }

    #[test]
    fn bad_requests_name_the_field() {
        let field = |r: TaskRequest| match calibrate_task(TaskId([1; 16]), r) {
            Err(Rejection::OutOfRange { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        let mut r = request();
        r.eps = -1.0;
        assert_eq!(field(r), "eps");
        let mut r = request();
        r.min_batch = 1;
        assert_eq!(field(r), "min_batch");
        let mut r = request();
        r.budget_eps = 0.5;
        assert_eq!(field(r), "budget_eps");
        let mut r = request();
        r.protocol = Protocol::Histogram { domain: 1 };
        assert_eq!(field(r), "domain");
        let mut r = request();
        (r.min_batch, r.eps, r.delta, r.budget_eps, r.budget_delta) = (2, 1e-9, 1e-300, 1.0, 1e-6);
        r.protocol = Protocol::Histogram { domain: 1 << 26 };
        assert!(matches!(
            calibrate_task(TaskId([1; 16]), r),
            Err(Rejection::Infeasible(_))
        ));
    }
}
