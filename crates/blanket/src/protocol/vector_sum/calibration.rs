//! Calibration of the vector-sum protocol: k for a fixed t through the generic calibrator,
//! and the search over t.

use super::*;
use crate::accounting::{AccountingError, Guarantee, LocalRandomizer, ShuffleAccountant};
use crate::calibrate::{
    calibrate_near, Calibratable, Calibration, CalibrationError, LocalPrivacy, Requirement, Target,
    VERIFY_RADIUS,
};
use crate::params::{Delta, DomainSize, Epsilon, Gamma, NumUsers, ParamError, Precision};
use crate::protocol::DomainConvention;
use crate::randomizer::Grr;
use rayon::prelude::*;
use serde::Serialize;
use thiserror::Error;

/// The vector-sum protocol's shape for calibration at a fixed t.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VectorSumShape {
    /// Dimension d.
    pub d: u32,
    /// Coordinates each user reports, 1 <= t <= d.
    pub t: u32,
    /// A fixed precision k, or `None` to choose k minimizing the predicted error.
    pub k: Option<Precision>,
    /// Which domain size the accountant is told.
    pub convention: DomainConvention,
}

impl VectorSumShape {
    /// Validates d and t.
    pub fn new(
        d: u64,
        t: u64,
        k: Option<Precision>,
        convention: DomainConvention,
    ) -> Result<Self, ParamError> {
        let d = check_dimension(d)?;
        let t = check_coordinates(t, d)?;
        Ok(Self {
            d,
            t,
            k,
            convention,
        })
    }

    /// Message values per coordinate the accountant is told (k + 1, or k for the paper).
    fn levels(&self, k: Precision) -> Result<u64, ParamError> {
        match self.convention {
            DomainConvention::TrueDomain => Ok(u64::from(k.get()) + 1),
            DomainConvention::Paper if k.get() >= 2 || self.t == 1 => Ok(u64::from(k.get())),
            DomainConvention::Paper => Err(ParamError::OutOfRange {
                field: "k",
                allowed: "at least 2 with the paper's m = k convention (m = 1 is no domain)",
                value: k.get().to_string(),
            }),
        }
    }

    fn pairs(&self, levels: u64) -> Result<DomainSize, ParamError> {
        DomainSize::new(u64::from(self.d) * levels).map_err(|_| ParamError::OutOfRange {
            field: "d",
            allowed: "such that d * (k + 1) message pairs stay within 2^26 (lower d or k)",
            value: self.d.to_string(),
        })
    }
}

impl Calibratable for VectorSumShape {
    type Choice = Precision;

    fn choices(&self, target: &Target) -> Vec<Precision> {
        if let Some(k) = self.k {
            return vec![k];
        }
        // Section 4.5's asymptotic optimum k* = (n eps^2 / (28 d log(2/delta)))^(1/3) (t = 1,
        // eps < 1); scan from the smallest k to well past it, the calibrator stops early.
        let e = target.eps.get().min(1.0);
        let k_star = (target.n.get() as f64 * f64::from(self.t) * e * e
            / (28.0 * f64::from(self.d) * (2.0 / target.delta.get()).ln()))
        .cbrt();
        let k_max = (4.0 * k_star + 64.0).min(f64::from(DomainSize::MAX - 2)) as u64;
        let first = match self.convention {
            DomainConvention::Paper if self.t >= 2 => 2,
            _ => 1,
        };
        (first..=k_max)
            .filter_map(|k| Precision::new(k).ok())
            .collect()
    }

    fn requirement(&self, k: Precision, target: &Target) -> Result<Requirement, ParamError> {
        let levels = self.levels(k)?;
        if self.t == 1 {
            return Ok(Requirement {
                m: self.pairs(levels)?,
                n: target.n,
                eps: target.eps,
                delta: target.delta,
            });
        }
        let (d1, dh, tail) = delta_split(target.delta.get(), self.t);
        let n1 = coordinate_users_lower_bound(target.n, self.d, self.t, tail).ok_or(
            ParamError::OutOfRange {
                field: "n",
                allowed: "large enough that each coordinate is reported by at least 2 users with probability 1 - delta/4 (raise n or lower d, or use t = 1)",
                value: target.n.get().to_string(),
            },
        )?;
        Ok(Requirement {
            m: DomainSize::new(levels)?,
            n: n1,
            // A relative margin of 2e-6 so that an accountant reporting epsilon to 1e-6
            // relative resolution (upper end) still composes to at most the target.
            eps: Epsilon::new(per_message_epsilon(target.eps.get(), self.t, dh) * (1.0 - 2e-6))?,
            delta: Delta::new(d1)?,
        })
    }

    fn instance(&self, k: Precision, gamma: Gamma, target: &Target) -> (LocalRandomizer, NumUsers) {
        if self.t == 1 {
            let m = u64::from(self.d) * (u64::from(k.get()) + 1);
            return (
                LocalRandomizer::Grr {
                    m: m.min(u64::from(u32::MAX)) as u32,
                    gamma: gamma.get(),
                },
                target.n,
            );
        }
        let (_, _, tail) = delta_split(target.delta.get(), self.t);
        let n1 = coordinate_users_lower_bound(target.n, self.d, self.t, tail).unwrap_or(target.n);
        (
            LocalRandomizer::Grr {
                m: k.levels().get(),
                gamma: gamma.get(),
            },
            n1,
        )
    }

    fn predicted_mse(&self, k: Precision, gamma: Gamma, n: NumUsers) -> f64 {
        VectorSum {
            d: self.d,
            t: self.t,
            k,
            grr: Grr::new(k.levels(), gamma),
        }
        .worst_case_mean_mse(n.get())
    }

    /// The predicted error is already that of the estimated mean vector (summed over the d
    /// coordinates, [`VectorSum::worst_case_mean_mse`]): it is returned as it is.
    fn normalized_mse(&self, predicted_mse: f64, _n: NumUsers) -> f64 {
        predicted_mse
    }

    /// Each of a user's t messages is GRR over the k + 1 levels of one coordinate (the
    /// coordinate is chosen independently of the data, so it adds nothing); see
    /// [`VectorSum::local_privacy`].
    fn local_privacy(&self, k: Precision, gamma: Gamma) -> LocalPrivacy {
        VectorSum {
            d: self.d,
            t: self.t,
            k,
            grr: Grr::new(k.levels(), gamma),
        }
        .local_privacy()
    }
}

/// How many consecutive worse t end the search over t.
pub const T_PATIENCE: usize = 3;

/// How many t candidates are calibrated at once (in parallel); fixed, so that the result does
/// not depend on the number of threads.
const T_CHUNK: usize = 2;

/// Candidate t for calibration: 1 to 8, then steps of about 25% up to d (the predicted error
/// changes slowly in t, and each t is a full calibration over k).
fn t_candidates(d: u32) -> Vec<u32> {
    let mut ts: Vec<u32> = (1..=d.min(8)).collect();
    let mut t = 8u32;
    while t < d {
        t = (t + t.div_ceil(4)).min(d);
        ts.push(t);
    }
    ts
}

/// How a calibrated vector-sum protocol was certified.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct VectorCalibration {
    /// Coordinates per user.
    pub t: u32,
    /// Precision.
    pub k: Precision,
    /// Blanket probability (rounded up).
    pub gamma: Gamma,
    /// The requirement on one shuffled GRR instance that was calibrated.
    pub requirement: Requirement,
    /// The generic calibration of that instance.
    pub instance: Calibration<Precision>,
    /// The guarantee of the whole protocol users really run (after composition for t >= 2),
    /// `None` if the accountant certifies none (e.g. the paper's m = k convention).
    pub certified: Option<Guarantee>,
    /// Local privacy eps0 of one message (GRR over the k + 1 levels of one coordinate).
    pub eps0: f64,
    /// Local privacy of everything one user sends (its t messages: t * eps0): the user-level
    /// local DP guarantee.
    pub eps0_user: f64,
    /// Predicted worst-case MSE of the mean vector (summed over coordinates).
    pub predicted_mse: f64,
}

/// Calibration of the vector-sum protocol failed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum VectorCalibrationError {
    /// A parameter is out of range.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// No t and k reach the target.
    #[error("{}", infeasible_message(.reason, *.min_n, *.max_d, *.d))]
    Infeasible {
        /// The calibrator's reason (for t = 1, or the fixed t).
        reason: CalibrationError,
        /// Smallest n that would work at this d, eps, delta.
        min_n: Option<u64>,
        /// Largest d that would work at this n, eps, delta.
        max_d: Option<u32>,
        /// The dimension asked for.
        d: u32,
    },
}

fn infeasible_message(
    reason: &CalibrationError,
    min_n: Option<u64>,
    max_d: Option<u32>,
    d: u32,
) -> String {
    let reason = match reason {
        CalibrationError::Infeasible { reason, .. } => reason.to_string(),
        other => other.to_string(),
    };
    let mut s =
        format!("no blanket probability gamma < 1 certifies the target for d = {d} ({reason})");
    match min_n {
        Some(n) => s.push_str(&format!("; the smallest n that works is {n}")),
        None => s.push_str("; no n up to 2^48 works"),
    }
    match max_d {
        Some(m) => s.push_str(&format!(", or keep n and lower d to at most {m}")),
        None => s.push_str(", and no d >= 1 works at this n"),
    }
    s
}

impl VectorSum {
    /// Calibrates gamma (and k, and t, unless fixed) for the target with a certified
    /// guarantee, minimizing the predicted worst-case error: for each t (1 to 8, then steps of
    /// about 25% up to d, stopping at the first infeasible t or after [`T_PATIENCE`] worse
    /// ones) the generic calibrator picks k and gamma.
    pub fn calibrate(
        d: u64,
        t: Option<u64>,
        k: Option<Precision>,
        convention: DomainConvention,
        target: &Target,
        accountant: &dyn ShuffleAccountant,
    ) -> Result<(Self, VectorCalibration), VectorCalibrationError> {
        let d = check_dimension(d)?;
        let ts: Vec<u32> = match t {
            Some(t) => vec![check_coordinates(t, d)?],
            None => t_candidates(d),
        };
        // The t are calibrated in chunks of `T_CHUNK` in parallel (one at a time until one is
        // feasible), and the results taken in order with the stopping rule above (a chunk may
        // compute a t past the stop, which is discarded, so the result does not depend on the
        // number of threads). Each t's
        // search over k starts at the optimum of the previous chunk's last feasible t (it
        // moves little with t) and verifies one k either side; the winning t is then searched
        // again with the full verification radius (which can only improve it) and alone
        // certified with `certify_target`. The smallest feasible n is computed only for the
        // error that may be reported.
        let mut best: Option<(u32, (Calibration<Precision>, usize))> = None;
        let mut first_err = None;
        let mut worse = 0;
        let mut hint = None;
        let mut next = 0;
        'chunks: while next < ts.len() {
            // one t at a time until a feasible t gives the others a starting point
            let size = if hint.is_some() { T_CHUNK } else { 1 };
            let chunk = &ts[next..(next + size).min(ts.len())];
            next += chunk.len();
            let want_min_n = best.is_none() && first_err.is_none();
            let results: Vec<_> = chunk
                .par_iter()
                .enumerate()
                .map(|(j, &t)| {
                    let shape = VectorSumShape {
                        d,
                        t,
                        k,
                        convention,
                    };
                    calibrate_near(&shape, target, accountant, hint, 1, want_min_n && j == 0)
                })
                .collect();
            for (&t, result) in chunk.iter().zip(results) {
                let cal = match result {
                    Ok((c, idx)) => {
                        hint = Some(idx);
                        (c, idx)
                    }
                    Err(e) => {
                        if best.is_some() {
                            break 'chunks;
                        }
                        first_err.get_or_insert(e);
                        continue;
                    }
                };
                match &best {
                    Some((_, (b, _))) if b.predicted_mse <= cal.0.predicted_mse => {
                        worse += 1;
                        if worse >= T_PATIENCE {
                            break 'chunks;
                        }
                    }
                    _ => {
                        best = Some((t, cal));
                        worse = 0;
                    }
                }
            }
        }
        if let Some((t, (cal, idx))) = best {
            let shape = VectorSumShape {
                d,
                t,
                k,
                convention,
            };
            let cal =
                match calibrate_near(&shape, target, accountant, Some(idx), VERIFY_RADIUS, false) {
                    Ok((c, _)) if c.predicted_mse < cal.predicted_mse => c,
                    _ => cal,
                };
            let requirement = shape.requirement(cal.choice, target)?;
            let p = Self {
                d,
                t,
                k: cal.choice,
                grr: Grr::new(cal.choice.levels(), cal.gamma),
            };
            let vc = VectorCalibration {
                t,
                k: cal.choice,
                gamma: cal.gamma,
                requirement,
                instance: cal,
                certified: p.certify_target(target.n, target.delta, Some(target.eps), accountant),
                eps0: cal.eps0,
                eps0_user: cal.eps0_user,
                predicted_mse: cal.predicted_mse,
            };
            return Ok((p, vc));
        }
        let reason = first_err.unwrap_or(CalibrationError::Infeasible {
            reason: AccountingError::NotApplicable {
                method: accountant.method(),
                reason: "no t was offered".into(),
            },
            min_n: None,
        });
        let t1 = ts.first().copied().unwrap_or(1);
        let feasible = |dd: u32, n: NumUsers| {
            let shape = VectorSumShape {
                d: dd,
                t: t1.min(dd),
                k,
                convention,
            };
            calibrate_near(&shape, &Target { n, ..*target }, accountant, None, 1, false).is_ok()
        };
        let min_n = match &reason {
            CalibrationError::Infeasible { min_n, .. } => *min_n,
            _ => None,
        };
        // Largest d: feasibility is monotone (smaller d, fewer pairs or more users per
        // coordinate); bisection over [1, d).
        let max_d = if feasible(1, target.n) {
            let (mut lo, mut hi) = (1u32, d);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if feasible(mid, target.n) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            Some(lo)
        } else {
            None
        };
        Err(VectorCalibrationError::Infeasible {
            reason,
            min_n,
            max_d,
            d,
        })
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::accounting::BlanketTheorem31;

    fn target(n: u64, eps: f64, delta: f64) -> Target {
        Target {
            eps: Epsilon::new(eps).unwrap(),
            delta: Delta::new(delta).unwrap(),
            n: NumUsers::new(n).unwrap(),
        }
    }

    #[test]
    fn generic_calibration_reproduces_theorem_41_for_t1() {
        // With the paper's m = k convention and Theorem 3.1, the t = 1 requirement
        // {m: d k, n} gives exactly the paper's gamma (0.1705297 at the defaults).
        let tg = target(50_000, 0.95, 0.5);
        let k3 = Some(Precision::new(3).unwrap());
        let (_, paper) = VectorSum::calibrate(
            100,
            Some(1),
            k3,
            DomainConvention::Paper,
            &tg,
            &BlanketTheorem31,
        )
        .unwrap();
        let closed = paper_gamma_raw(50_000, 100, 3, 1, 0.95, 0.5).unwrap();
        assert!(
            (paper.gamma.get() - closed).abs() / closed < 1e-13,
            "{} vs {closed}",
            paper.gamma
        );
        assert_eq!(paper.requirement.m.get(), 300);
        // The paper's gamma does not certify the real 4 values per coordinate.
        assert!(paper.certified.is_none_or(|g| g.epsilon > 0.95));
        // The safe default: m = d (k + 1) = 400, gamma 4/3 larger, certified at <= 0.95.
        let (p, safe) = VectorSum::calibrate(
            100,
            Some(1),
            k3,
            DomainConvention::TrueDomain,
            &tg,
            &BlanketTheorem31,
        )
        .unwrap();
        assert_eq!(safe.requirement.m.get(), 400);
        assert!((safe.gamma.get() / paper.gamma.get() - 4.0 / 3.0).abs() < 1e-12);
        let cert = safe.certified.unwrap();
        assert!(
            cert.epsilon <= 0.95 && cert.epsilon > 0.95 - 1e-9,
            "{cert:?}"
        );
        assert_eq!(p.gamma(), safe.gamma);
    }

    #[test]
    fn t2_requirement_by_hand() {
        // n = 1e6 + 1, d = 10, t = 2, eps = 0.5, delta = 1e-6, k = 3:
        // per-instance delta = 1e-6 / 8, Chernoff tail 1e-6/8: mu = 1e6 * 2 / 10 = 2e5,
        // others >= floor(2e5 - sqrt(4e5 * ln(8e6))) = floor(2e5 - 2521.50...) = 197478.
        let tg = target(1_000_001, 0.5, 1e-6);
        let shape = VectorSumShape::new(10, 2, None, DomainConvention::TrueDomain).unwrap();
        let req = shape.requirement(Precision::new(3).unwrap(), &tg).unwrap();
        let hand_others = (2e5 - (4e5 * (8e6f64).ln()).sqrt()).floor() as u64;
        assert_eq!(hand_others, 197_478);
        assert_eq!(req.n.get(), hand_others + 1);
        assert_eq!(req.m.get(), 4);
        assert!((req.delta.get() - 1.25e-7).abs() < 1e-20);
        // eps': basic composition 0.25; advanced with delta_hat = 5e-7:
        // sqrt(4 ln 2e6) eps1 + 2 eps1 (e^eps1 - 1) = 0.5 -> eps1 ~ 0.0649 < 0.25: basic wins.
        assert!(
            (req.eps.get() - 0.25 * (1.0 - 2e-6)).abs() < 1e-12,
            "{}",
            req.eps
        );
        assert!(compose_epsilon(req.eps.get(), 2, 5e-7) <= 0.5);
        // Theorem 3.1 gamma for that instance, by hand:
        // max(14*4*ln(1.6e7)/(197478*0.0625), 27*4/(197478*0.25)) = 0.07526376 (n - 1 = 197478)
        let g = BlanketTheorem31::gamma(req.m, req.n, req.eps, req.delta);
        let hand = 56.0 * (1.6e7f64).ln() / (197_478.0 * 0.0625);
        assert!((hand - 0.075_263_76).abs() < 1e-7);
        let hand = hand / (1.0 - 2e-6f64).powi(2); // the 2e-6 safety margin on eps'
        assert!(g >= hand && (g - hand) / hand < 1e-13, "{g} vs {hand}");
        assert_eq!(
            t_candidates(30),
            (1..=8).chain([10, 13, 17, 22, 28, 30]).collect::<Vec<_>>()
        );
        // For large t advanced composition takes over.
        let e1 = per_message_epsilon(1.0, 100, 1e-6);
        let adv = (200.0 * (1e6f64).ln()).sqrt() * e1 + 100.0 * e1 * e1.exp_m1();
        assert!(e1 > 0.01 && (adv - 1.0).abs() < 1e-9, "{e1} {adv}");
    }

    #[test]
    fn calibrated_t2_is_certified_by_composition() {
        let tg = target(1_000_001, 0.5, 1e-6);
        let (p, cal) = VectorSum::calibrate(
            10,
            Some(2),
            None,
            DomainConvention::TrueDomain,
            &tg,
            &BlanketTheorem31,
        )
        .unwrap();
        assert_eq!(p.t(), 2);
        let cert = cal.certified.unwrap();
        assert!(cert.epsilon <= 0.5 && cert.delta == 1e-6, "{cert:?}");
    }

    #[test]
    fn calibration_picks_t1_and_small_k_at_the_paper_defaults() {
        let tg = target(50_000, 0.95, 0.5);
        let (p, cal) = VectorSum::calibrate(
            100,
            None,
            None,
            DomainConvention::TrueDomain,
            &tg,
            &BlanketTheorem31,
        )
        .unwrap();
        assert_eq!(p.t(), 1);
        assert!((1..=4).contains(&p.k().get()), "k = {}", p.k());
        // Brute force over k with the same accountant at t = 1.
        for k in 1..40u64 {
            let shape = VectorSumShape::new(100, 1, None, DomainConvention::TrueDomain).unwrap();
            let k = Precision::new(k).unwrap();
            let req = shape.requirement(k, &tg).unwrap();
            if let Ok(g) = BlanketTheorem31.min_gamma(req.m, req.n, req.eps, req.delta) {
                let mse = shape.predicted_mse(k, Gamma::new(g).unwrap(), tg.n);
                assert!(mse >= cal.predicted_mse * (1.0 - 1e-12), "k = {k}");
            }
        }
    }

    #[test]
    fn infeasible_calibration_names_n_and_d() {
        let tg = target(2000, 0.5, 1e-6);
        let e = VectorSum::calibrate(
            100,
            None,
            None,
            DomainConvention::TrueDomain,
            &tg,
            &BlanketTheorem31,
        )
        .unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("smallest n that works is"), "{msg}");
        match e {
            VectorCalibrationError::Infeasible { min_n, max_d, .. } => {
                let n = min_n.unwrap();
                assert!(VectorSum::calibrate(
                    100,
                    Some(1),
                    None,
                    DomainConvention::TrueDomain,
                    &target(n, 0.5, 1e-6),
                    &BlanketTheorem31
                )
                .is_ok());
                if let Some(d) = max_d {
                    assert!(VectorSum::calibrate(
                        u64::from(d),
                        Some(1),
                        None,
                        DomainConvention::TrueDomain,
                        &tg,
                        &BlanketTheorem31
                    )
                    .is_ok());
                }
            }
            other => panic!("{other}"),
        }
    }

    #[test]
    fn local_privacy_per_message_and_per_user() {
        // The generic calibration of a fixed-t shape (what `account error` runs) and the
        // vector-sum calibration (what `calibrate` runs) report the same eps0: one message
        // is GRR over the k + 1 levels, not over the d (k + 1) pairs of the t = 1 reduction.
        let tg = target(1_000_000, 1.0, 1e-6);
        for tt in [1u64, 3] {
            let (p, vc) = VectorSum::calibrate(
                100,
                Some(tt),
                None,
                DomainConvention::TrueDomain,
                &tg,
                &BlanketTheorem31,
            )
            .unwrap();
            let shape =
                VectorSumShape::new(100, tt, Some(p.k()), DomainConvention::TrueDomain).unwrap();
            let generic = crate::calibrate::calibrate(&shape, &tg, &BlanketTheorem31).unwrap();
            let per_message = crate::randomizer::grr::local_epsilon(p.k().levels(), p.gamma());
            assert_eq!(vc.eps0, per_message);
            assert_eq!(generic.eps0, per_message, "t = {tt}");
            assert_eq!(generic.eps0_user, vc.eps0_user);
            // Per user: t messages; inputs 0^d and 1^d attain it (every message is level 0
            // resp. k before GRR): the likelihood ratio of t messages at level 0 is
            // ((1 - g + g/(k+1)) / (g/(k+1)))^t.
            let g = p.gamma().get();
            let b = g / f64::from(p.k().levels().get());
            let attained = f64::from(p.t()) * ((1.0 - g + b) / b).ln();
            assert!(vc.eps0_user >= attained, "t = {tt}");
            assert!(vc.eps0_user <= attained * (1.0 + 1e-12), "t = {tt}");
            assert_eq!(p.local_privacy().per_user, vc.eps0_user);
            if tt == 1 {
                assert_eq!(vc.eps0_user, vc.eps0);
            } else {
                assert!(vc.eps0_user > 2.9 * vc.eps0);
            }
        }
    }
}
