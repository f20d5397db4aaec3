//! Variation-ratio amplification bound for k-ary randomized response, computed exactly.
//!
//! Wang, Peng, Li, Huang, et al., "Privacy Amplification via Shuffling: Unified, Simplified,
//! and Tightened" (VLDB 2024), Theorem 4.x (the numerical bound, their `amplificationUB`): a
//! randomizer with variation-ratio parameters (p, beta, q) has, with alpha = beta / (p - 1)
//! and r = alpha p / q, a shuffled view that is a post-processing of the pair over (t, u):
//!   C ~ Bin(n - 1, 2r) other users "clone" x0 or x1 (1/2 each); the target adds
//!   x0 w.p. p alpha, x1 w.p. alpha, nothing w.p. 1 - alpha - p alpha (swapped under Q);
//!   t is the total number of x0/x1 messages and u the number of x0 ones.
//! For k-RR, p = q = e^eps0 and beta = (e^eps0 - 1) / (e^eps0 + k - 1), so alpha = r =
//! 1 / (e^eps0 + k - 1): alpha is the probability of reporting a given other value, p alpha
//! of reporting the truth. Only k-RR is supported: for a generic eps0-LDP randomizer these
//! parameters would not hold, so the accountant refuses it.
//!
//! With b_t = Bin(t, 1/2), W_t = Pr[C = t] and x = t - u:
//!   P(t, u) - e^eps Q(t, u) = b_t(u) [ a_t u + c_t ],
//! linear in u, positive for x < tau_t, and the sum over x <= X of it equals
//!   b_t(X) [ (1 - e^eps)(W_{t-1} alpha (1 + p) + gamma' W_t) R_t(X)
//!            + W_{t-1} alpha (p - 1)(1 + e^eps)(t - X) / t ],
//! gamma' = 1 - alpha - p alpha, R the lower-tail Mills ratio (docs/accounting.md). The
//! coefficient of R is negative, so a lower bound on R gives an upper bound; W_{t-1} (positive
//! coefficient) is rounded up and W_t (negative coefficient) down. The mass of C outside the
//! window is added as delta (joint convexity of the hockey-stick divergence).

use super::binomial::{exp_up, Window};
use super::clones::{smallest_eps, sweep, FINAL_MARGIN, WINDOW_TAIL};
use super::{
    checked_eps0, krr_k, AccountingError, CurveAccountant, LocalRandomizer, Method, PrivacyCurve,
};
use crate::params::NumUsers;

/// The variation-ratio pair for k-RR over k values with local eps0 and n users.
#[derive(Debug, Clone)]
pub struct VariationRatioKrr {
    n: u64,
    eps0: f64,
    e0: f64,
    alpha: f64,
    window: Window,
}

impl VariationRatioKrr {
    /// k-RR with k values (k >= 2), local eps0, n users.
    pub fn new(n: u64, k: u32, eps0: f64) -> Self {
        let e0 = eps0.exp();
        let denom = e0 + f64::from(k) - 1.0;
        let alpha = 1.0 / denom;
        let p = 2.0 * alpha;
        let q = (eps0.exp_m1() + f64::from(k) - 2.0) / denom;
        Self {
            n,
            eps0,
            e0,
            alpha,
            window: Window::new(n.saturating_sub(1), p, q, WINDOW_TAIL),
        }
    }

    /// Upper bound on delta(eps).
    pub fn delta(&self, eps: f64) -> f64 {
        if !(eps < self.eps0) {
            return 0.0;
        }
        let eps = eps.max(0.0);
        let ee = eps.exp();
        let p = self.e0;
        let a = self.alpha;
        let g = (1.0 - a - p * a).max(0.0);
        let w = &self.window;
        let nn = self.n as f64;
        let em1 = eps.exp_m1();
        // tau_t = t - upsilon_t, upsilon_t = t (e^eps p - 1)/((p - 1)(1 + e^eps))
        //   + (e^eps - 1) gamma' (n - t) / ((1 - 2 alpha)(p - 1)(1 + e^eps)).
        let pm1 = self.eps0.exp_m1();
        let s1 = (ee * p - 1.0) / (pm1 * (1.0 + ee));
        let s2 = if g > 0.0 {
            em1 * g / ((1.0 - 2.0 * a) * pm1 * (1.0 + ee))
        } else {
            0.0
        };
        let hi = (w.hi + 1).min(self.n);
        let lo = w.lo.max(1);
        let total = sweep(
            lo,
            hi,
            |t| {
                let tf = t as f64;
                tf - tf * s1 - (nn - tf) * s2
            },
            |t, x, ln_b, r_lo| {
                let ln_w1 = w.ln_at(t - 1);
                if ln_w1 == f64::NEG_INFINITY {
                    return 0.0;
                }
                let ln_w0 = w.ln_at(t);
                let e1 = exp_up(ln_b + ln_w1);
                let e0 = if ln_w0 == f64::NEG_INFINITY {
                    0.0
                } else {
                    (ln_b + ln_w0).exp() * (1.0 - 1e-12)
                };
                let tf = t as f64;
                let v = -em1 * (e1 * a * (1.0 + p) + g * e0) * r_lo
                    + e1 * a * pm1 * (1.0 + ee) * (tf - x as f64) / tf;
                v.max(0.0)
            },
        );
        ((total * FINAL_MARGIN + w.below + w.above) * FINAL_MARGIN).min(1.0)
    }

    /// Smallest eps (1e-6 relative resolution, upper end) with delta(eps) <= delta.
    pub fn epsilon(&self, delta: f64) -> f64 {
        smallest_eps(|e| self.delta(e), 0.0, self.eps0, delta)
    }
}

/// The variation-ratio bound for k-RR computed exactly (`variation-ratio`); refuses generic
/// randomizers.
#[derive(Debug, Clone, Copy, Default)]
pub struct VariationRatio;

impl VariationRatio {
    fn pair(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
    ) -> Result<VariationRatioKrr, AccountingError> {
        let k = krr_k(Method::VariationRatio, randomizer)?;
        let eps0 = checked_eps0(Method::VariationRatio, randomizer)?;
        Ok(VariationRatioKrr::new(n.get(), k, eps0))
    }
}

impl CurveAccountant for VariationRatio {
    type Curve = VariationRatioKrr;

    fn curve_method(&self) -> Method {
        Method::VariationRatio
    }

    fn curve(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
    ) -> Result<VariationRatioKrr, AccountingError> {
        self.pair(randomizer, n)
    }
}

impl PrivacyCurve for VariationRatioKrr {
    fn epsilon(&self, delta: f64) -> f64 {
        VariationRatioKrr::epsilon(self, delta)
    }

    fn delta(&self, eps: f64) -> f64 {
        VariationRatioKrr::delta(self, eps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounting::binomial::ln_pmf;

    /// Direct sum over every (t, u) of max(0, P - e^eps Q).
    fn brute(n: u64, k: u32, eps0: f64, eps: f64) -> f64 {
        let p = eps0.exp();
        let a = 1.0 / (p + f64::from(k) - 1.0);
        let g = 1.0 - a - p * a;
        let w = |c: i64| {
            if c < 0 || c as u64 > n - 1 {
                0.0
            } else {
                ln_pmf(c as u64, n - 1, 2.0 * a, 1.0 - 2.0 * a).exp()
            }
        };
        let b = |t: i64, u: i64| {
            if t < 0 || u < 0 || u > t {
                0.0
            } else {
                ln_pmf(u as u64, t as u64, 0.5, 0.5).exp()
            }
        };
        let ee = eps.exp();
        let mut s = 0.0;
        for t in 0..=n as i64 {
            for u in 0..=t {
                let pp =
                    w(t - 1) * (p * a * b(t - 1, u - 1) + a * b(t - 1, u)) + g * w(t) * b(t, u);
                let qq =
                    w(t - 1) * (a * b(t - 1, u - 1) + p * a * b(t - 1, u)) + g * w(t) * b(t, u);
                s += (pp - ee * qq).max(0.0);
            }
        }
        s
    }

    #[test]
    fn matches_brute_force_from_above() {
        for &(n, k, eps0) in &[(200u64, 2u32, 1.0f64), (300, 10, 2.0), (150, 5, 0.5)] {
            let v = VariationRatioKrr::new(n, k, eps0);
            for &eps in &[0.05, 0.2, 0.5 * eps0] {
                let b = brute(n, k, eps0, eps);
                let d = v.delta(eps);
                assert!(d >= b * (1.0 - 1e-13), "{n} {k} {eps0} {eps}: {d} < {b}");
                assert!(
                    d <= b * (1.0 + 1e-7) + 1e-25,
                    "{n} {k} {eps0} {eps}: {d} vs {b}"
                );
            }
        }
    }

    #[test]
    fn tighter_than_stronger_clones_for_large_k() {
        let s = crate::accounting::clones::CloneReduction::stronger(1000, 1.0).epsilon(1e-6);
        let v = VariationRatioKrr::new(1000, 10, 1.0).epsilon(1e-6);
        let v2 = VariationRatioKrr::new(1000, 2, 1.0).epsilon(1e-6);
        assert!(v < s, "{v} {s}");
        // For k = 2 the pair is the stronger-clone pair.
        assert!((v2 / s - 1.0).abs() < 1e-5, "{v2} {s}");
    }
}
