//! Theorem 3.1 of Balle, Bell, Gascon, Nissim, "The Privacy Blanket of the Shuffle Model"
//! (CRYPTO 2019): for eps <= 1 and delta in (0, 1], the shuffled R^PH_{gamma,m} is
//! (eps, delta)-DP if
//!
//!   gamma >= max( 14 m log(2/delta) / ((n-1) eps^2),  27 m / ((n-1) eps) ).
//!
//! Solved for eps (with m / gamma = e^eps0 + m - 1):
//!   eps = max( sqrt(14 m log(2/delta) / ((n-1) gamma)),  27 m / ((n-1) gamma) ),
//! valid only if the result is <= 1. The theorem only holds for GRR, so a generic
//! randomizer is rejected. A target eps > 1 is met by certifying eps = 1 (a stronger
//! statement), since the theorem says nothing beyond 1.

use super::{round_up, AccountingError, LocalRandomizer, Method, ShuffleAccountant};
use crate::params::{Delta, DomainSize, Epsilon, NumUsers};

/// The privacy-blanket closed form (Theorem 3.1).
#[derive(Debug, Clone, Copy, Default)]
pub struct BlanketTheorem31;

impl BlanketTheorem31 {
    /// gamma required by Theorem 3.1 for (eps, delta), n users, m values, rounded up.
    /// Uses min(eps, 1) since the theorem assumes eps <= 1.
    pub fn gamma(m: DomainSize, n: NumUsers, eps: Epsilon, delta: Delta) -> f64 {
        let e = eps.get().min(1.0);
        let m = f64::from(m.get());
        let n1 = (n.get() - 1) as f64;
        let a = 14.0 * m * (2.0 / delta.get()).ln() / (n1 * e * e);
        let b = 27.0 * m / (n1 * e);
        // ~6 rounded operations, each within half an ulp: 8 ulps is a safe margin.
        round_up(a.max(b), 8)
    }
}

impl ShuffleAccountant for BlanketTheorem31 {
    fn method(&self) -> Method {
        Method::BlanketClosed
    }

    fn epsilon(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
        delta: Delta,
    ) -> Result<f64, AccountingError> {
        let (m, gamma) = match *randomizer {
            LocalRandomizer::Grr { m, gamma } => (f64::from(m), gamma),
            LocalRandomizer::Generic { .. } => {
                return Err(AccountingError::NotApplicable {
                    method: Method::BlanketClosed,
                    reason: "Theorem 3.1 holds only for generalized randomized response, not for a generic eps0-LDP randomizer".into(),
                })
            }
        };
        if !(gamma > 0.0 && gamma <= 1.0) {
            return Err(AccountingError::NotApplicable {
                method: Method::BlanketClosed,
                reason: format!("gamma must be in (0, 1], got {gamma}"),
            });
        }
        let n1 = (n.get() - 1) as f64;
        let a = (14.0 * m * (2.0 / delta.get()).ln() / (n1 * gamma)).sqrt();
        let b = 27.0 * m / (n1 * gamma);
        let eps = round_up(a.max(b), 8);
        if eps > 1.0 {
            return Err(AccountingError::NotApplicable {
                method: Method::BlanketClosed,
                reason: format!(
                    "the theorem needs eps <= 1, but these parameters give eps = {eps:.6}"
                ),
            });
        }
        Ok(eps)
    }

    fn min_gamma(
        &self,
        m: DomainSize,
        n: NumUsers,
        eps: Epsilon,
        delta: Delta,
    ) -> Result<f64, AccountingError> {
        let unreachable = || AccountingError::unreachable(Method::BlanketClosed, m, n, eps, delta);
        let target = eps.get().min(1.0);
        let mut gamma = Self::gamma(m, n, eps, delta);
        // Both directions are rounded outward, so at the boundary the forward map can land a
        // few ulps above the target: raise gamma until the forward map certifies it.
        for _ in 0..64 {
            if gamma >= 1.0 {
                return Err(unreachable());
            }
            let grr = LocalRandomizer::Grr { m: m.get(), gamma };
            if self.epsilon(&grr, n, delta).is_ok_and(|e| e <= target) {
                return Ok(gamma);
            }
            gamma = round_up(gamma, 4);
        }
        Err(unreachable())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(m: u64, n: u64, eps: f64, delta: f64) -> (DomainSize, NumUsers, Epsilon, Delta) {
        (
            DomainSize::new(m).unwrap(),
            NumUsers::new(n).unwrap(),
            Epsilon::new(eps).unwrap(),
            Delta::new(delta).unwrap(),
        )
    }

    #[test]
    fn gamma_by_hand() {
        // m = 10, n = 1e6 + 1, eps = 0.5, delta = 1e-6:
        // 14 * 10 * ln(2e6) / (1e6 * 0.25) = 560 * 14.508657738524219 / 1e6 = 0.008124848333573563
        // 27 * 10 / (1e6 * 0.5) = 0.00054: the log branch wins.
        let (m, n, e, d) = p(10, 1_000_001, 0.5, 1e-6);
        let g = BlanketTheorem31::gamma(m, n, e, d);
        let hand = 560.0 * 14.508657738524219 / 1e6;
        assert!(g >= hand && (g - hand) / hand < 1e-14, "{g} vs {hand}");

        // m = 4 (k = 3 with the safe k + 1 domain), n = 50000, eps = 0.95, delta = 0.5:
        // log branch 14*4*ln 4 / (49999*0.9025) = 77.632484... / 45124.0975 = 0.0017204...
        // linear branch 27*4 / (49999*0.95) = 108 / 47499.05 = 0.0022737...: it wins.
        let (m, n, e, d) = p(4, 50_000, 0.95, 0.5);
        let g = BlanketTheorem31::gamma(m, n, e, d);
        let hand = 108.0 / (49_999.0 * 0.95);
        assert!(g >= hand && (g - hand) / hand < 1e-14);

        // eps > 1 is calibrated at eps = 1.
        let (m, n, e, d) = p(2, 10_001, 3.0, 1e-5);
        let g = BlanketTheorem31::gamma(m, n, e, d);
        let hand = (28.0 * (2e5f64).ln() / 1e4).max(54.0 / 1e4);
        assert!(g >= hand && (g - hand) / hand < 1e-14);
    }

    #[test]
    fn epsilon_inverts_gamma() {
        let (m, n, e, d) = p(10, 1_000_001, 0.5, 1e-6);
        let acct = BlanketTheorem31;
        let g = acct.min_gamma(m, n, e, d).unwrap();
        let eps = acct
            .epsilon(&LocalRandomizer::Grr { m: 10, gamma: g }, n, d)
            .unwrap();
        assert!(eps <= 0.5 + 1e-12 && eps > 0.5 - 1e-9, "{eps}");
    }

    #[test]
    fn unreachable_and_not_applicable() {
        let (m, n, e, d) = p(100, 100, 0.1, 1e-6);
        assert!(matches!(
            BlanketTheorem31.min_gamma(m, n, e, d),
            Err(AccountingError::Unreachable { .. })
        ));
        let r = BlanketTheorem31.epsilon(&LocalRandomizer::Generic { eps0: 1.0 }, n, d);
        assert!(matches!(r, Err(AccountingError::NotApplicable { .. })));
        let r = BlanketTheorem31.epsilon(&LocalRandomizer::Grr { m: 100, gamma: 0.5 }, n, d);
        assert!(matches!(r, Err(AccountingError::NotApplicable { .. })));
    }

    #[test]
    fn default_bisection_agrees_with_closed_form() {
        struct ViaBisection;
        impl ShuffleAccountant for ViaBisection {
            fn method(&self) -> Method {
                Method::BlanketClosed
            }
            fn epsilon(
                &self,
                r: &LocalRandomizer,
                n: NumUsers,
                d: Delta,
            ) -> Result<f64, AccountingError> {
                BlanketTheorem31.epsilon(r, n, d)
            }
        }
        let (m, n, e, d) = p(10, 1_000_001, 0.5, 1e-6);
        let exact = BlanketTheorem31.min_gamma(m, n, e, d).unwrap();
        let bis = ViaBisection.min_gamma(m, n, e, d).unwrap();
        assert!(
            bis >= exact * (1.0 - 1e-12) && (bis - exact) / exact < 2e-9,
            "{bis} {exact}"
        );
    }
}
