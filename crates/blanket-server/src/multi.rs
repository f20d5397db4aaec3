//! Tasks whose users send several messages: the vector sum (t coordinate messages per user;
//! Scott, Cormode, Maple, BICOD 2021; spec 02) and the DP real sum over split-and-mix (m
//! additive shares mod q per client; spec 04, [`blanket::protocol::ikos_sum`]).
//!
//! Each message is its own sealed report, so the shuffler mixes the messages of different
//! users (for split-and-mix that mixing is the whole privacy argument). A user's messages go
//! in one bulk upload (the shuffler refuses an upload that is not a multiple of the messages
//! per user), and a batch cut takes whole uploads only (up to [`MAX_BATCH_REPORTS`]), so a
//! user's messages land in one batch (`docs/service.md`, "Multi-message tasks").
//!
//! `min_batch` and `expected_users` count **users** for every protocol; the shuffler is told
//! `min_batch` times the messages per user ([`crate::task::TaskConfig::min_batch_reports`]).
//!
//! Messages on the wire are the u32 of the one report format ([`crate::wire`]):
//! * vector sum: `j (k + 1) + y` for coordinate j in 0..d and level y in 0..=k
//!   (d (k + 1) <= 2^32 is checked at task creation);
//! * IKOS sum: one share in 0..q, with q <= 2^32 checked at task creation.
//!
//! Guarantees.
//! * Vector sum: a batch of r reports holds r / t users; the core certifies them
//!   ([`VectorSum::certify_target`], the reductions of `blanket::protocol::vector_sum`).
//! * IKOS sum: the noise of any h = `min_batch` clients is the full discrete Laplace (the
//!   robust variant, r = 1/h), so a batch of at least h clients is eps-DP on its decoded sum;
//!   the shuffled shares of n_b clients are 2^-sigma close to a simulation from their sum mod q
//!   when blanket's bound ([`blanket::protocol::ikos::distance_bound_log2`]) at n_b is at most
//!   -sigma, re-checked at every batch size at release. Together (eps, (1 + e^eps) 2^-sigma)
//!   as the core computes it ([`blanket::protocol::IkosSumReport::delta`], rounded up one ulp
//!   here). q and p are sized for [`IKOS_MAX_BATCH_USERS`] clients, the most a batch can
//!   hold, so that every batch decodes; m is `m_required(h, q, sigma)`. Each batch is decoded
//!   on its own and the decoded sums add up.

use crate::problem::Rejection;
use crate::shuffler::BULK_MAX;
use crate::task::{Certified, Protocol, TaskConfig, TaskRequest};
use crate::wire::MAX_BATCH_REPORTS;
use blanket::accounting::Best;
use blanket::analyzer::{AggregateError, Aggregator, ModularSum};
use blanket::calibrate::Target;
use blanket::field::Modulus;
use blanket::params::{Delta, Epsilon, Gamma, NumUsers, ParamError, Precision};
use blanket::protocol::ikos::{distance_bound_log2, m_required, IkosError, MAX_SIGMA};
use blanket::protocol::{
    DomainConvention, IkosSum, IkosSumError, VectorCalibrationError, VectorSum,
};
use serde::{Deserialize, Serialize};

/// Most clients one batch of an IKOS task can hold: a batch carries at most
/// [`MAX_BATCH_REPORTS`] shares and every client sends at least 2.
pub const IKOS_MAX_BATCH_USERS: u64 = MAX_BATCH_REPORTS as u64 / 2;

/// Most messages one user sends (they go in one bulk upload of at most [`BULK_MAX`]).
pub const MAX_MESSAGES_PER_USER: u64 = BULK_MAX as u64;

/// The certified method named for an IKOS release.
pub const IKOS_METHOD: &str = "ikos-split-and-mix";

/// The split-and-mix parameters the server chose for an `ikos-sum` task (published; set by
/// the server, refused in a request).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IkosParams {
    /// Clients q and p are sized for (the largest batch, [`IKOS_MAX_BATCH_USERS`]).
    pub users: u64,
    /// h: clients whose noise alone is the full discrete Laplace (= `min_batch`).
    pub honest: u64,
    /// q = 2^modulus_bits (at most 32: a share is one u32 message).
    pub modulus_bits: u32,
    /// Shares per client m = m_required(h, q, sigma).
    pub shares: u32,
    /// Precision p = ceil(sqrt(users)).
    pub precision: u32,
}

fn out_of_range(field: &str, allowed: impl Into<String>, value: impl ToString) -> Rejection {
    Rejection::OutOfRange {
        field: field.to_string(),
        allowed: allowed.into(),
        value: value.to_string(),
    }
}

/// What a calibration gives the task: the completed protocol, gamma, eps0 of one report, the
/// certified guarantee at `min_batch` users, the predicted MSE at `expected_users`.
pub(crate) struct Calibrated {
    pub protocol: Protocol,
    pub gamma: f64,
    pub eps0: f64,
    pub certified: Certified,
    pub predicted_mse: f64,
}

fn check_messages(field: &str, per_user: u64, min_batch: u64) -> Result<(), Rejection> {
    if per_user > MAX_MESSAGES_PER_USER {
        return Err(out_of_range(
            field,
            format!(
                "at most {MAX_MESSAGES_PER_USER} messages per user (one bulk upload carries a user's messages)"
            ),
            per_user,
        ));
    }
    if min_batch.saturating_mul(per_user) > MAX_BATCH_REPORTS as u64 {
        return Err(out_of_range(
            "min_batch",
            format!(
                "at most {} users at {per_user} messages each (a batch holds at most {MAX_BATCH_REPORTS} reports)",
                MAX_BATCH_REPORTS as u64 / per_user
            ),
            min_batch,
        ));
    }
    Ok(())
}

// ----- vector sum -----

/// The vector-sum protocol of a calibrated task.
pub fn vector_protocol(
    d: u64,
    t: Option<u64>,
    k: Option<u64>,
    gamma: f64,
) -> Result<VectorSum, Rejection> {
    let t = t.ok_or_else(|| out_of_range("t", "set (calibrated by the server)", "none"))?;
    let k = k.ok_or_else(|| out_of_range("k", "set (calibrated by the server)", "none"))?;
    Ok(VectorSum::new(
        d,
        t,
        Precision::new(k)?,
        Gamma::new(gamma)?,
    )?)
}

/// Calibrates a vector-sum task with the core's calibrator (t and k chosen unless fixed).
pub(crate) fn calibrate_vector(
    d: u64,
    t: Option<u64>,
    k: Option<u64>,
    target: &Target,
    expected: NumUsers,
) -> Result<Calibrated, Rejection> {
    let k = k.map(Precision::new).transpose()?;
    let (p, cal) = VectorSum::calibrate(
        d,
        t,
        k,
        DomainConvention::TrueDomain,
        target,
        &Best::default(),
    )
    .map_err(|e| match e {
        VectorCalibrationError::Param(p) => p.into(),
        other => Rejection::Infeasible(other.to_string()),
    })?;
    let (t, k) = (u64::from(p.t()), u64::from(p.k().get()));
    if t > MAX_MESSAGES_PER_USER {
        return Err(out_of_range(
            "t",
            format!("at most {MAX_MESSAGES_PER_USER} (one bulk upload per user); fix t"),
            t,
        ));
    }
    check_messages("t", t, target.n.get())?;
    if u64::from(p.d()) * (k + 1) > 1 << 32 {
        return Err(out_of_range(
            "k",
            "such that d (k + 1) <= 2^32 (one u32 message carries the coordinate and the level)",
            k,
        ));
    }
    let certified = cal.certified.ok_or_else(|| {
        Rejection::Infeasible("the accountant cannot certify the randomizer users run".into())
    })?;
    Ok(Calibrated {
        protocol: Protocol::VectorSum {
            d,
            t: Some(t),
            k: Some(k),
        },
        gamma: p.gamma().get(),
        eps0: cal.eps0,
        certified: certified.into(),
        predicted_mse: p.worst_case_mean_mse(expected.get()),
    })
}

/// The guarantee of a batch of `users` users of a vector-sum task.
pub(crate) fn certify_vector(
    config: &TaskConfig,
    p: &VectorSum,
    users: u64,
) -> Result<Certified, Rejection> {
    let r = &config.request;
    p.certify_target(
        NumUsers::new(users)?,
        Delta::new(r.delta)?,
        Some(Epsilon::new(r.eps)?),
        &Best::default(),
    )
    .map(Certified::from)
    .ok_or_else(|| {
        Rejection::Infeasible(format!(
            "the accountant certifies no guarantee for a batch of {users} users"
        ))
    })
}

/// A vector-sum message: coordinate j and level y as `j (k + 1) + y`.
pub fn encode_coordinate(j: u32, y: u32, k: u32) -> u32 {
    j * (k + 1) + y
}

/// The (coordinate, level) of a vector-sum message; the analyzer's state rejects a coordinate
/// outside 0..d.
pub fn decode_coordinate(m: u32, k: u32) -> (u32, u32) {
    let levels = u64::from(k) + 1;
    (
        (u64::from(m) / levels) as u32,
        (u64::from(m) % levels) as u32,
    )
}

// ----- IKOS sum -----

/// delta = (1 + e^eps) 2^-sigma as the core computes it, rounded up one ulp.
pub fn ikos_delta(eps: f64, sigma: u32) -> f64 {
    ((1.0 + eps.exp()) * 2f64.powi(-(sigma as i32))).next_up()
}

fn ikos_error(e: IkosSumError, sigma: u32) -> Rejection {
    match e {
        IkosSumError::Param(p) => p.into(),
        IkosSumError::Ikos(e @ IkosError::NoShareCount { .. }) => out_of_range(
            "sigma",
            format!("small enough that some share count m <= 4096 reaches it ({e})"),
            sigma,
        ),
        e @ IkosSumError::EpsilonTooSmall { .. } => out_of_range("eps", e.to_string(), "too small"),
        other => Rejection::Infeasible(other.to_string()),
    }
}

/// The IKOS sum protocol of a calibrated task.
pub fn ikos_protocol(eps: f64, sigma: u32, c: &IkosParams) -> Result<IkosSum, Rejection> {
    let p = IkosSum::with_options(c.users, eps, sigma, c.honest, Some(c.modulus_bits))
        .and_then(|p| p.with_shares(c.shares))
        .map_err(|e| ikos_error(e, sigma))?;
    if p.precision() != c.precision {
        return Err(out_of_range(
            "precision",
            format!("ceil(sqrt(users)) = {}", p.precision()),
            c.precision,
        ));
    }
    Ok(p)
}

/// Calibrates an IKOS-sum task: sigma (the smallest reaching delta unless given), then q and
/// p for [`IKOS_MAX_BATCH_USERS`] clients with noise for h = `min_batch`, then
/// m = m_required(h, q, sigma).
pub(crate) fn calibrate_ikos(
    r: &TaskRequest,
    sigma: Option<u32>,
    calibrated: Option<IkosParams>,
) -> Result<Calibrated, Rejection> {
    if calibrated.is_some() {
        return Err(out_of_range(
            "calibrated",
            "absent in a request (the server chooses q, m and p)",
            "present",
        ));
    }
    let sigma = match sigma {
        Some(s) if !(1..=MAX_SIGMA).contains(&s) => {
            return Err(out_of_range(
                "sigma",
                format!("an integer from 1 to {MAX_SIGMA}"),
                s,
            ))
        }
        Some(s) if ikos_delta(r.eps, s) > r.delta => {
            return Err(out_of_range(
                "sigma",
                format!(
                    "large enough that (1 + e^eps) 2^-sigma <= delta = {}",
                    r.delta
                ),
                s,
            ))
        }
        Some(s) => s,
        None => (1..=MAX_SIGMA)
            .find(|&s| ikos_delta(r.eps, s) <= r.delta)
            .ok_or_else(|| {
                out_of_range(
                    "delta",
                    format!("at least (1 + e^eps) 2^-{MAX_SIGMA}"),
                    r.delta,
                )
            })?,
    };
    let h = r.min_batch;
    if h > IKOS_MAX_BATCH_USERS {
        return Err(out_of_range(
            "min_batch",
            format!("an integer from 2 to {IKOS_MAX_BATCH_USERS} for ikos-sum"),
            h,
        ));
    }
    let base = IkosSum::with_options(IKOS_MAX_BATCH_USERS, r.eps, sigma, h, None)
        .map_err(|e| ikos_error(e, sigma))?;
    let q = base.ikos().modulus();
    if q.q() > 1 << 32 {
        return Err(Rejection::Infeasible(format!(
            "the noisy sum needs a modulus q = {} above 2^32 (one u32 message per share); raise eps or min_batch",
            q.q()
        )));
    }
    let m = m_required(h, q, sigma)
        .map_err(|e| ikos_error(e.into(), sigma))?
        .max(base.ikos().shares());
    check_messages("shares", u64::from(m), h)?;
    let p = base.with_shares(m).map_err(|e| ikos_error(e, sigma))?;
    let params = IkosParams {
        users: IKOS_MAX_BATCH_USERS,
        honest: h,
        modulus_bits: q.q().trailing_zeros(),
        shares: m,
        precision: p.precision(),
    };
    let certified = certify_ikos_at(r.eps, sigma, &p, h)?;
    Ok(Calibrated {
        protocol: Protocol::IkosSum {
            sigma: Some(sigma),
            calibrated: Some(params),
        },
        gamma: 0.0,
        eps0: 0.0,
        certified,
        predicted_mse: ikos_mse(&p, r.expected_users),
    })
}

/// Predicted MSE of the estimated sum for `users` clients: (n/4 + noise variance) / p^2
/// ([`blanket::protocol::IkosSumReport::predicted_mse`] at n present clients).
pub(crate) fn ikos_mse(p: &IkosSum, users: u64) -> f64 {
    let pp = f64::from(p.precision());
    (users as f64 / 4.0 + p.noise_variance(users)) / (pp * pp)
}

fn certify_ikos_at(eps: f64, sigma: u32, p: &IkosSum, users: u64) -> Result<Certified, Rejection> {
    let h = p.report().honest;
    if users < h {
        return Err(Rejection::Infeasible(format!(
            "a batch of {users} clients holds less than the noise of h = {h} clients"
        )));
    }
    let log2 = distance_bound_log2(users, p.ikos().shares(), p.ikos().modulus())
        .map_err(|e| Rejection::Infeasible(e.to_string()))?;
    if log2 > -f64::from(sigma) {
        return Err(Rejection::Infeasible(format!(
            "m = {} shares do not make {users} clients {sigma}-secure (bound 2^{log2:.2})",
            p.ikos().shares()
        )));
    }
    Ok(Certified {
        epsilon: eps,
        delta: ikos_delta(eps, sigma),
        method: IKOS_METHOD.to_string(),
    })
}

/// The guarantee of a batch of `users` clients of an IKOS task.
pub(crate) fn certify_ikos(
    config: &TaskConfig,
    p: &IkosSum,
    sigma: u32,
    users: u64,
) -> Result<Certified, Rejection> {
    certify_ikos_at(config.request.eps, sigma, p, users)
}

/// The analyzer state of an IKOS task: the sum mod q of the batch being absorbed, and the
/// decoded sums of the batches closed so far (each batch decodes on its own: S = z if
/// z < 3q/4, else z - q, as [`IkosSum::decode`]).
#[derive(Debug, Clone, PartialEq)]
pub struct IkosState {
    open: ModularSum,
    decoded: i128,
    shares: u64,
}

impl IkosState {
    /// An empty state over Z_q.
    pub fn new(q: Modulus) -> Self {
        Self {
            open: ModularSum::new(q),
            decoded: 0,
            shares: 0,
        }
    }

    /// A stored state (closed).
    pub fn from_parts(q: u128, decoded: i128, shares: u64) -> Option<Self> {
        Some(Self {
            open: ModularSum::new(Modulus::new(q).ok()?),
            decoded,
            shares,
        })
    }

    /// The modulus.
    pub fn modulus(&self) -> Modulus {
        self.open.modulus()
    }

    /// Sum of the decoded batch sums (encoded units: divide by p).
    pub fn decoded(&self) -> i128 {
        self.decoded
    }

    /// Adds one share to the open batch.
    pub fn absorb(&mut self, share: u32) -> Result<(), AggregateError> {
        self.open.absorb(u64::from(share))
    }

    /// Decodes the open batch and adds it to the closed ones.
    pub fn close(&mut self) {
        let q = self.open.modulus().q();
        let z = self.open.sum();
        let s = if 4 * u128::from(z) >= 3 * q {
            i128::from(z) - q as i128
        } else {
            i128::from(z)
        };
        self.decoded += s;
        self.shares += self.open.reports();
        self.open = ModularSum::new(self.open.modulus());
    }

    /// Adds another (closed) state.
    pub fn merge(&mut self, mut other: Self) -> Result<(), AggregateError> {
        if other.modulus() != self.modulus() {
            return Err(AggregateError::ModulusMismatch {
                left: self.modulus().q(),
                right: other.modulus().q(),
            });
        }
        other.close();
        self.decoded += other.decoded;
        self.shares += other.shares;
        Ok(())
    }

    /// Shares absorbed (closed and open).
    pub fn reports(&self) -> u64 {
        self.shares + self.open.reports()
    }
}

/// Validates a user's vector value: d reals in [0, 1] (errors name `value`).
pub fn check_vector(x: &[f64], d: u32) -> Result<(), ParamError> {
    if x.len() != d as usize {
        return Err(ParamError::OutOfRange {
            field: "value",
            allowed: "a vector of exactly d comma-separated reals in [0, 1]",
            value: format!("{} coordinates (d = {d})", x.len()),
        });
    }
    match x.iter().position(|v| !(0.0..=1.0).contains(v)) {
        Some(j) => Err(ParamError::OutOfRange {
            field: "value",
            allowed: "a vector of reals in [0, 1] (every coordinate)",
            value: format!("coordinate {j} = {}", x[j]),
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinate_messages_round_trip() {
        for (j, y, k) in [(0, 0, 1), (5, 3, 3), (99, 7, 7)] {
            assert_eq!(decode_coordinate(encode_coordinate(j, y, k), k), (j, y));
        }
    }

    #[test]
    fn ikos_state_decodes_each_batch() {
        let q = Modulus::power_of_two(8).unwrap();
        let mut a = IkosState::new(q);
        // Batch 1: shares summing to 250 = -6 mod 256.
        for s in [200, 50] {
            a.absorb(s).unwrap();
        }
        a.close();
        assert_eq!(a.decoded(), -6);
        let mut b = IkosState::new(q);
        for s in [100, 30] {
            b.absorb(s).unwrap();
        }
        a.merge(b).unwrap();
        assert_eq!(a.decoded(), 124);
        assert_eq!(a.reports(), 4);
        assert!(a.absorb(256).is_err());
    }

    #[test]
    fn vector_values_are_checked() {
        assert!(check_vector(&[0.0, 1.0], 2).is_ok());
        let e = check_vector(&[0.5], 2).unwrap_err().to_string();
        assert!(e.contains("value") && e.contains("d = 2"), "{e}");
        let e = check_vector(&[0.5, 1.5], 2).unwrap_err().to_string();
        assert!(e.contains("coordinate 1"), "{e}");
        assert!(check_vector(&[f64::NAN, 0.0], 2).is_err());
    }
}
