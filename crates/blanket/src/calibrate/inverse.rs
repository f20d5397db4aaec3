//! Inverse queries: the largest local eps0 for a target, the predicted error at n, and the
//! smallest n reaching a target error, each on the protocol's normalized scale.

use super::{calibrate, Calibratable, CalibrationError, Target};
use crate::accounting::{AccountingError, LocalRandomizer, ShuffleAccountant};
use crate::params::{DomainSize, NumUsers};

/// Inverse query "what eps0 may each user use?": the largest local eps0 (relative resolution
/// 1e-9, lower end, so certified) of k-RR over `k` values (or a generic eps0-LDP randomizer
/// when `k` is `None`) for which `accountant` certifies (eps, delta) with n users.
pub fn max_eps0(
    k: Option<DomainSize>,
    target: &Target,
    accountant: &dyn ShuffleAccountant,
) -> Result<f64, AccountingError> {
    let ok = |eps0: f64| {
        let r = match k {
            Some(k) => LocalRandomizer::krr(k, eps0),
            None => LocalRandomizer::Generic { eps0 },
        };
        accountant
            .epsilon(&r, target.n, target.delta)
            .is_ok_and(|e| e <= target.eps.get())
    };
    let mut lo = 0.0f64;
    let mut hi = 1.0f64;
    while ok(hi) {
        lo = hi;
        hi *= 2.0;
        if hi > 64.0 {
            return Ok(lo);
        }
    }
    if lo == 0.0 {
        // the largest certified eps0 is below 1: find a positive lower end
        let mut x = 0.5;
        while x > 1e-12 && !ok(x) {
            x *= 0.5;
        }
        if x <= 1e-12 {
            return Err(AccountingError::NotApplicable {
                method: accountant.method(),
                reason: "no eps0 >= 1e-12 meets the target".into(),
            });
        }
        lo = x;
        hi = 2.0 * x;
    }
    while hi - lo > 1e-9 * lo {
        let mid = 0.5 * (lo + hi);
        if ok(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// Inverse query "what error will I get?": the predicted error of the calibrated protocol
/// at the target's n, on the normalized scale ([`Calibratable::normalized_mse`]: frequencies,
/// mean, or mean vector). The full calibration (with the error on the protocol's own scale
/// too) is [`calibrate`].
pub fn error_at_n<P: Calibratable>(
    protocol: &P,
    target: &Target,
    accountant: &dyn ShuffleAccountant,
) -> Result<f64, CalibrationError> {
    calibrate(protocol, target, accountant).map(|c| c.normalized_mse)
}

/// Inverse query "how many users do I need?": the smallest n (doubling, then bisection) for
/// which the calibrated protocol's normalized predicted error
/// ([`Calibratable::normalized_mse`], the same scale [`error_at_n`] answers on) is at most
/// `max_error`.
pub fn n_for_error<P: Calibratable>(
    protocol: &P,
    target: &Target,
    accountant: &dyn ShuffleAccountant,
    max_error: f64,
) -> Option<u64> {
    let good = |n: u64| -> bool {
        let Ok(nu) = NumUsers::new(n) else {
            return false;
        };
        let t = Target { n: nu, ..*target };
        calibrate(protocol, &t, accountant).is_ok_and(|c| c.normalized_mse <= max_error)
    };
    let mut hi = 2u64;
    while !good(hi) {
        if hi >= NumUsers::MAX {
            return None;
        }
        hi = (hi * 2).min(NumUsers::MAX);
    }
    let mut lo = hi / 2;
    if lo < 2 {
        return Some(hi);
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if good(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

#[cfg(test)]
mod inverse_tests {
    use super::*;
    use crate::accounting::{Best, BlanketTheorem31, Method};
    use crate::calibrate::*;
    use crate::protocol::histogram::HistogramShape;

    fn target(eps: f64, delta: f64, n: u64) -> Target {
        Target {
            eps: Epsilon::new(eps).unwrap(),
            delta: Delta::new(delta).unwrap(),
            n: NumUsers::new(n).unwrap(),
        }
    }

    #[test]
    fn best_beats_the_paper_and_names_its_method() {
        let shape = HistogramShape {
            m: DomainSize::new(20).unwrap(),
        };
        let t = target(1.0, 1e-6, 20_000);
        let rows = compare(&shape, &t, &[Method::BlanketClosed, Method::Best]);
        let paper = rows[0].calibration.as_ref().unwrap();
        let best = rows[1].calibration.as_ref().unwrap();
        assert!(best.gamma.get() < paper.gamma.get());
        assert!(best.predicted_mse < paper.predicted_mse);
        assert!(best.guarantee.epsilon <= 1.0, "{best:?}");
        assert_ne!(best.guarantee.method, Method::Best);
    }

    #[test]
    fn inverse_queries() {
        let t = target(0.5, 1e-6, 50_000);
        let k = DomainSize::new(10).unwrap();
        let e0 = max_eps0(Some(k), &t, &Best::default()).unwrap();
        let eps = Best::default()
            .epsilon(&LocalRandomizer::krr(k, e0), t.n, t.delta)
            .unwrap();
        assert!(eps <= 0.5 && e0 > 1.0, "{e0} {eps}");
        let shape = HistogramShape { m: k };
        let err = error_at_n(&shape, &t, &BlanketTheorem31).unwrap();
        assert!(err > 0.0);
        // frequency MSE mse / n^2 <= 1e-7
        let n = n_for_error(&shape, &t, &BlanketTheorem31, 1e-7).unwrap();
        let at = error_at_n(&shape, &target(0.5, 1e-6, n), &BlanketTheorem31).unwrap();
        assert!(at <= 1e-7);
        let before = error_at_n(&shape, &target(0.5, 1e-6, n - 1), &BlanketTheorem31).unwrap();
        assert!(before > 1e-7);
    }
}

/// Every inverse query checked against the core simulation at the n it returns: the observed
/// normalized MSE (fixed seeds, data attaining the protocol's worst case, so the predicted
/// worst-case error is what the data sees) must be within a stated statistical tolerance of
/// the target. `n_for_error` returns the smallest n whose predicted error is at most the
/// target, so the prediction at n is the target to within (n - 1)/n.
#[cfg(test)]
mod inverse_vs_simulation {
    use super::*;
    use crate::accounting::Best;
    use crate::calibrate::*;
    use crate::params::UnitValue;
    use crate::protocol::histogram::HistogramShape;
    use crate::protocol::scalar_sum::{ScalarSum, ScalarSumShape};
    use crate::protocol::vector_sum::{UnitVectors, VectorSum, VectorSumShape};
    use crate::protocol::{DomainConvention, Histogram};
    use crate::simulate::run_single_message;

    fn target(eps: f64, delta: f64) -> Target {
        Target {
            eps: Epsilon::new(eps).unwrap(),
            delta: Delta::new(delta).unwrap(),
            n: NumUsers::new(2).unwrap(),
        }
    }

    /// Asserts observed / target within `tol` (and prints the numbers).
    fn check(name: &str, n: u64, observed: f64, target_mse: f64, tol: f64) {
        let ratio = observed / target_mse;
        eprintln!(
            "{name}: n = {n}, observed {observed:.4e}, target {target_mse:.4e}, ratio {ratio:.4}"
        );
        assert!(
            (ratio - 1.0).abs() < tol,
            "{name}: n = {n}: observed {observed} vs target {target_mse}"
        );
    }

    #[test]
    fn histogram_users_query_matches_simulation() {
        // m = 10; the predicted frequency MSE is exact for any data. 400 repetitions of the
        // mean over 10 categories of squared (roughly normal) errors: relative sd about
        // sqrt(2 / (10 * 400)) = 2.2%; tolerance 11% (5 sd).
        let m = DomainSize::new(10).unwrap();
        let shape = HistogramShape { m };
        let t = target(1.0, 1e-6);
        let goal = 1e-5;
        let n = n_for_error(&shape, &t, &Best::default(), goal).unwrap();
        let at = Target {
            n: NumUsers::new(n).unwrap(),
            ..t
        };
        let (h, cal) = Histogram::calibrate(m, &at, &Best::default()).unwrap();
        assert!(cal.normalized_mse <= goal);
        assert_eq!(
            error_at_n(&shape, &at, &Best::default()).unwrap(),
            cal.normalized_mse
        );
        let data: Vec<u32> = (0..n as u32).map(|i| i % 10).collect();
        let truth: Vec<f64> = (0..10u32)
            .map(|y| data.iter().filter(|&&x| x == y).count() as f64 / n as f64)
            .collect();
        let reps = 400;
        let mut mse = 0.0;
        for r in 0..reps {
            let st = run_single_message(
                n as usize,
                11,
                r,
                false,
                |i, rng| h.randomize_simulated(data[i], rng).unwrap(),
                || h.aggregator(),
            )
            .unwrap();
            let f = h.estimate(&st).unwrap().frequencies();
            mse += f
                .iter()
                .zip(&truth)
                .map(|(a, b)| (a - b).powi(2))
                .sum::<f64>()
                / 10.0;
        }
        check("histogram", n, mse / f64::from(reps), goal, 0.11);
    }

    #[test]
    fn scalar_sum_users_query_matches_simulation() {
        // Every user holds the value where the message variance is largest (the predicted
        // error is that worst case). 2000 repetitions of one squared normal error: relative
        // sd sqrt(2 / 2000) = 3.2%; tolerance 16% (5 sd).
        let shape = ScalarSumShape {
            k: None,
            convention: DomainConvention::TrueDomain,
        };
        let t = target(1.0, 1e-6);
        let goal = 1e-5;
        let n = n_for_error(&shape, &t, &Best::default(), goal).unwrap();
        let at = Target {
            n: NumUsers::new(n).unwrap(),
            ..t
        };
        let (p, cal) = ScalarSum::calibrate(shape, &at, &Best::default()).unwrap();
        assert!(cal.normalized_mse <= goal);
        let k = p.k().get();
        let g = p.randomizer().gamma().get();
        // The argmax of the message variance (as in ScalarSum::worst_message_variance).
        let worst = (0..k)
            .map(|j| {
                let c = f64::from(j) / f64::from(k) - 0.5;
                let f = ((1.0 + 2.0 * g * c * f64::from(k)) / (2.0 * (1.0 - g))).clamp(0.0, 1.0);
                (f64::from(j) + f) / f64::from(k)
            })
            .max_by(|a, b| p.message_variance(*a).total_cmp(&p.message_variance(*b)))
            .unwrap();
        let x = UnitValue::new(worst).unwrap();
        let reps = 2000;
        let mut mse = 0.0;
        for r in 0..reps {
            let st = run_single_message(
                n as usize,
                12,
                r,
                false,
                |_, rng| p.randomize_value_simulated(x, rng),
                || p.aggregator(),
            )
            .unwrap();
            mse += (p.estimate(&st).unwrap().mean - worst).powi(2);
        }
        check("scalar-sum", n, mse / f64::from(reps), goal, 0.16);
    }

    #[test]
    fn vector_sum_users_query_matches_simulation() {
        // d = 8; every coordinate holds 0 for half the users and 1 for the other half
        // (population variance 1/4, the worst case of the sampling term, which dominates).
        // 400 repetitions of a sum of 8 squared errors: relative sd about
        // sqrt(2 / (8 * 400)) = 2.5%; tolerance 15% (5 sd, plus the gap between this data's
        // exact error and the worst case, printed, and E[1/n_j] ~ 1/E[n_j]).
        for tt in [1u64, 2] {
            let shape = VectorSumShape::new(8, tt, None, DomainConvention::TrueDomain).unwrap();
            let t = target(1.0, 1e-6);
            let goal = 0.01;
            let n = n_for_error(&shape, &t, &Best::default(), goal).unwrap();
            let at = Target {
                n: NumUsers::new(n).unwrap(),
                ..t
            };
            let (p, cal) = VectorSum::calibrate(
                8,
                Some(tt),
                None,
                DomainConvention::TrueDomain,
                &at,
                &Best::default(),
            )
            .unwrap();
            assert!(cal.predicted_mse <= goal);
            let rows: Vec<Vec<f64>> = (0..n as usize)
                .map(|i| (0..8).map(|j| ((i + j) % 2) as f64).collect())
                .collect();
            let data = UnitVectors::new(8, rows).unwrap();
            let exact = p.exact_mean_mse(&data);
            eprintln!(
                "vector-sum t = {tt}: exact for this data {exact:.4e}, worst case {:.4e}",
                cal.predicted_mse
            );
            let truth = data.mean();
            let reps = 400;
            let mut mse = 0.0;
            for r in 0..reps {
                let st = p.simulate(&data, 13, r, false).unwrap();
                let e = p.estimate(&st).unwrap();
                mse += e
                    .mean
                    .iter()
                    .zip(&truth)
                    .map(|(a, b)| (a - b).powi(2))
                    .sum::<f64>();
            }
            check(
                &format!("vector-sum t = {tt}"),
                n,
                mse / f64::from(reps),
                goal,
                0.15,
            );
        }
    }
}
