//! Optimal composition of k homogeneous (eps, delta)-DP mechanisms (Kairouz, Oh, Viswanath,
//! "The Composition Theorem for Differential Privacy", ICML 2015, Theorem 3.3), exact: for a
//! target eps_g,
//!   delta_bar(eps_g) = E_{L ~ Bin(k, 1/(1 + e^eps))} [ (1 - e^(eps_g - (k - 2L) eps))_+ ],
//! and the composition is (eps_g, 1 - (1 - delta)^k (1 - delta_bar(eps_g)))-DP.

use super::CompositionError;
use crate::accounting::binomial::{exp_up, ln_pmf};
use crate::accounting::clones::smallest_eps;

/// delta_bar(eps_g) for k-fold (eps, 0) composition, an upper bound (terms rounded up).
pub fn kov_delta(eps: f64, k: u64, eps_g: f64) -> f64 {
    let ee = eps.exp();
    let p = 1.0 / (1.0 + ee);
    let q = ee / (1.0 + ee);
    let kf = k as f64;
    let mut s = 0.0;
    for l in 0..=k {
        let loss = (kf - 2.0 * l as f64) * eps;
        if loss <= eps_g {
            break;
        }
        let f = -(eps_g - loss).exp_m1();
        s += exp_up(ln_pmf(l, k, p, q)) * f;
    }
    (s * (1.0 + 1e-12)).min(1.0)
}

/// Smallest eps_g (1e-9 relative resolution, upper end) such that the k-fold composition of
/// (eps, delta)-DP mechanisms is (eps_g, delta_total)-DP.
pub fn kov_epsilon(
    eps: f64,
    delta: f64,
    k: u64,
    delta_total: f64,
) -> Result<f64, CompositionError> {
    if !(eps > 0.0 && eps.is_finite() && (0.0..1.0).contains(&delta)) || k == 0 {
        return Err(CompositionError::Invalid(format!(
            "KOV composition needs eps > 0, delta in [0, 1), k >= 1 (got eps = {eps}, delta = {delta}, k = {k})"
        )));
    }
    // total delta = 1 - (1 - delta)^k (1 - delta_bar) <= delta_total
    let budget = 1.0 - (1.0 - delta_total) / (1.0 - delta).powf(k as f64);
    let budget = budget * (1.0 - 1e-12);
    if !(budget > 0.0) {
        return Err(CompositionError::Invalid(format!(
            "the components' delta already exceeds the total: 1 - (1 - {delta})^{k} >= {delta_total}"
        )));
    }
    let hi = k as f64 * eps;
    Ok(smallest_eps_fine(|g| kov_delta(eps, k, g), hi, budget))
}

fn smallest_eps_fine(f: impl Fn(f64) -> f64, hi: f64, target: f64) -> f64 {
    // coarse bisection, then refine to 1e-9 relative
    let mut h = smallest_eps(&f, 0.0, hi, target);
    let mut lo = h * (1.0 - 2e-6);
    while h - lo > 1e-9 * h {
        let mid = 0.5 * (lo + h);
        if f(mid) <= target {
            h = mid;
        } else {
            lo = mid;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_values() {
        // spec 03: eps = 0.1, k = 100, delta = 1e-6: 4.77457; eps = 0.05, k = 1000: 8.28357.
        let e = kov_epsilon(0.1, 0.0, 100, 1e-6).unwrap();
        assert!((e - 4.77457).abs() < 1e-5, "{e}");
        let e = kov_epsilon(0.05, 0.0, 1000, 1e-6).unwrap();
        assert!((e - 8.28357).abs() < 1e-5, "{e}");
        assert!(kov_epsilon(0.1, 0.5, 10, 1e-6).is_err());
    }
}
