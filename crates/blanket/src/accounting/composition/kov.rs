//! Optimal composition of k homogeneous (eps, delta)-DP mechanisms (Kairouz, Oh, Viswanath,
//! "The Composition Theorem for Differential Privacy", ICML 2015, Theorem 3.3), exact: for a
//! target eps_g,
//!   delta_bar(eps_g) = E_{L ~ Bin(k, 1/(1 + e^eps))} [ (1 - e^(eps_g - (k - 2L) eps))_+ ],
//! and the composition is (eps_g, 1 - (1 - delta)^k (1 - delta_bar(eps_g)))-DP.

use super::CompositionError;
use crate::accounting::binomial::{exp_up, ln_pmf, tail_bounds, window_range};
use crate::accounting::clones::smallest_eps;

/// Mass of Bin(k, 1/(1 + e^eps)) left outside the summation window on each side (bounded
/// rigorously and added with weight 1).
const KOV_TAIL: f64 = 1e-60;

/// delta_bar(eps_g) for k-fold (eps, 0) composition, an upper bound (terms rounded up). The
/// sum runs over a window of L around its mean (O(sqrt k) terms, so k = 1e9 is fine); the
/// mass below the window counts with weight 1 and the mass above it with weight 1 if the
/// window stops before the loss drops below eps_g.
pub fn kov_delta(eps: f64, k: u64, eps_g: f64) -> f64 {
    // p = Pr[one round's loss is -eps] = 1/(1 + e^eps), q = 1 - p, both without overflow.
    let p = 1.0 / (1.0 + eps.exp());
    let q = 1.0 / (1.0 + (-eps).exp());
    let kf = k as f64;
    let (lo, hi) = window_range(k, p, q, KOV_TAIL);
    let (below, above) = tail_bounds(k, p, q, lo, hi);
    let mut s = 0.0;
    let mut stopped = false;
    for l in lo..=hi {
        let loss = (kf - 2.0 * l as f64) * eps;
        if loss <= eps_g {
            stopped = true;
            break;
        }
        let f = -(eps_g - loss).exp_m1();
        s += exp_up(ln_pmf(l, k, p, q)) * f;
    }
    if !stopped && hi < k && (kf - 2.0 * (hi + 1) as f64) * eps > eps_g {
        s += above;
    }
    ((s + below) * (1.0 + 1e-12)).min(1.0)
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
    let budget = delta_bar_budget(delta, k, delta_total);
    if !(budget > 0.0) {
        return Err(CompositionError::Invalid(format!(
            "the components' delta already exceeds the total: 1 - (1 - {delta})^{k} >= {delta_total}"
        )));
    }
    let hi = k as f64 * eps;
    Ok(smallest_eps_fine(|g| kov_delta(eps, k, g), hi, budget))
}

/// The largest delta_bar with 1 - (1 - delta)^k (1 - delta_bar) <= delta_total, rounded
/// down: delta_bar = 1 - (1 - delta_total) / (1 - delta)^k = -expm1(x) with
/// x = ln1p(-delta_total) - k ln1p(-delta) (KOV Theorem 3.3 solved for delta_bar). Written
/// with ln1p/expm1 because the direct form cancels: at delta = 0 it is 1 - (1 - delta_total),
/// which loses log2(1/delta_total) bits (3.7e-5 relative at delta_total = 3e-12).
/// Error: ln1p and the product carry <= 2 ulps each, the subtraction 1 ulp, so
/// |x - x_true| <= 4 u (|a| + |b|) (a, b the two terms, u the unit roundoff); x is raised by
/// that (a larger x is a smaller budget) and expm1's 1-ulp error is covered by (1 - 4u).
pub(crate) fn delta_bar_budget(delta: f64, k: u64, delta_total: f64) -> f64 {
    let u = f64::EPSILON;
    let a = (-delta_total).ln_1p();
    let b = k as f64 * (-delta).ln_1p();
    let x = a - b;
    let x_up = x + 4.0 * u * (a.abs() + b.abs());
    -x_up.exp_m1() * (1.0 - 4.0 * u)
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

    /// Issue 8, item 5: the exact KOV epsilon at a total delta, from 60-digit arithmetic
    /// (mpmath, `mp.dps = 60`): eps_g = the least g with
    ///   1 - (1 - d)^k (1 - sum_{l: (k - 2l) eps > g} C(k, l) q^l p^(k - l) (1 - e^(g - (k - 2l) eps)))
    ///   <= delta_total,  q = 1/(1 + e^eps), p = 1 - q,
    /// by 200 bisection steps on [0, k eps], with eps, d, delta_total the exact binary values
    /// of the f64 literals below. blanket's answer must be at or above it (certified) and
    /// within its 1e-9 resolution plus the 1e-12 rounding margin of delta_bar.
    #[test]
    fn against_high_precision_values() {
        let cases: [(f64, f64, u64, f64, f64); 6] = [
            (0.1, 0.0, 100, 3e-12, 6.755_821_098_407_637_185_5),
            (0.1, 0.0, 100, 1e-6, 4.774_567_588_107_986_447_5),
            (0.05, 0.0, 1000, 1e-6, 8.283_573_346_016_258_219_3),
            (0.1, 1e-13, 100, 3e-11, 6.515_978_493_146_090_846_3),
            (0.5, 1e-15, 200, 1e-9, 62.858_684_857_732_288_756),
            (1.0, 0.0, 10, 1e-5, 9.999_770_634_534_941_679_1),
        ];
        for (eps, d, k, total, exact) in cases {
            let e = kov_epsilon(eps, d, k, total).unwrap();
            assert!(
                e >= exact && e <= exact * (1.0 + 3e-9),
                "eps = {eps}, d = {d}, k = {k}, total = {total}: {e} vs exact {exact}"
            );
        }
    }

    #[test]
    fn budget_has_no_cancellation() {
        // delta = 0: the budget is delta_total itself, rounded down by a few ulps only.
        let b = delta_bar_budget(0.0, 100, 3e-12);
        assert!((3e-12 * (1.0 - 1e-14)..=3e-12).contains(&b), "{b}");
        // 1 - (1 - 3e-11)/(1 - 1e-13)^100 with the literals' binary values, 60 digits (mpmath):
        let exact = 2.000_000_000_024_949_949_676e-11;
        let b = delta_bar_budget(1e-13, 100, 3e-11);
        assert!((exact * (1.0 - 1e-14)..=exact).contains(&b), "{b}");
    }
}
