//! The clone reduction computed exactly: the engine behind `fmt21-numerical` and
//! `clones-krr`.
//!
//! Feldman, McMillan, Talwar, "Hiding Among the Clones: A Simple and Nearly Optimal Analysis
//! of Privacy Amplification by Shuffling" (FOCS 2021), Theorem 3.2: for any eps0-LDP
//! randomizer, the shuffled output on neighbouring datasets is a post-processing of the pair
//! (P, Q) over (c, x), with C ~ Bin(n - 1, p) clones and, given C = c,
//!   P_c = Bin(c, 1/2) + Bern(1 - alpha),  Q_c = Bin(c, 1/2) + Bern(alpha),
//! alpha = e^eps0 / (e^eps0 + 1), p = e^-eps0. "Stronger clones" (Feldman, McMillan, Talwar,
//! "Stronger Privacy Amplification by Shuffling for Renyi and Approximate Differential
//! Privacy", SODA 2023, Theorem 3.1 with its erratum) is the same pair with
//! p = 2 / (e^eps0 + 1), valid for randomizers with R(x) >= (R(x0) + R(x1)) / (e^eps0 + 1)
//! pointwise, which k-ary randomized response satisfies (with equality).
//!
//! delta(eps) = sum_c Pr[C = c] D_{e^eps}(P_c || Q_c).
//!
//! How it is computed (docs/accounting.md derives each step):
//! - P_c(x) / Q_c(x) decreases in x, so D_c = sum over x < tau_c = (c + 1) r of
//!   P_c(x) - e^eps Q_c(x), with r = (e^eps0 - e^eps) / (e^eps0 - e^eps + e^(eps+eps0) - 1).
//!   In terms of the lower-tail Mills ratio R = F(x) / b(x) of Bin(c, 1/2):
//!   D_c(x) = b(x) [ (1 - e^eps) R + (e^(eps+eps0) - 1) / (e^eps0 + 1) ].
//!   Since the coefficient of R is negative, the lower end of the bracket on R gives an upper
//!   bound; the maximum over the three candidates x = ceil(tau) - 2 ..= ceil(tau) covers a
//!   threshold misplaced by rounding (any set gives a lower bound, the right one the value).
//! - c runs over a window of Bin(n - 1, p) with mass outside it bounded geometrically: the
//!   lower tail counts as delta 1, the upper tail as D_{c_hi} (D_c is non-increasing in c:
//!   one more clone is post-processing).
//! - R is carried from c to c - 1 along the threshold by contracting recurrences, bracketed
//!   and rounded outward ([`MillsRatio`]); the pmfs are Loader's (relative error ~1e-13).
//!   The total is multiplied by (1 + 1e-9) to cover those rounding errors.
//! - epsilon(delta) bisects on [0, eps0] (delta(eps0) = 0) to 1e-6 relative resolution and
//!   returns the upper end, at which delta was certified.

use super::binomial::{exp_up, ln_pmf_half, MillsRatio, Window};
use super::{
    checked_eps0, krr_k, AccountingError, CurveAccountant, LocalRandomizer, Method, PrivacyCurve,
    MAX_EPS0,
};
use crate::params::NumUsers;

/// Mass left outside the clone-count window on each side (bounded rigorously and added).
pub(crate) const WINDOW_TAIL: f64 = 1e-30;
/// Final relative safety factor for floating-point error (see module docs).
pub(crate) const FINAL_MARGIN: f64 = 1.0 + 1e-9;

/// The clone pair for n users and local eps0, with clone probability p.
#[derive(Debug, Clone)]
pub struct CloneReduction {
    eps0: f64,
    e0: f64,
    window: Window,
}

impl CloneReduction {
    /// FMT 2021: p = e^-eps0 (any eps0-LDP randomizer).
    pub fn fmt21(n: u64, eps0: f64) -> Self {
        let p = (-eps0).exp();
        let q = -(-eps0).exp_m1();
        Self::with_clone_probability(n, eps0, p, q)
    }

    /// FMT 2023 stronger clones: p = 2 / (e^eps0 + 1) (k-ary randomized response only).
    pub fn stronger(n: u64, eps0: f64) -> Self {
        let e0 = eps0.exp();
        let p = 2.0 / (e0 + 1.0);
        let q = eps0.exp_m1() / (e0 + 1.0);
        Self::with_clone_probability(n, eps0, p, q)
    }

    /// A clone pair with C ~ Bin(n - 1, p), q = 1 - p.
    pub fn with_clone_probability(n: u64, eps0: f64, p: f64, q: f64) -> Self {
        Self {
            eps0,
            e0: eps0.exp(),
            window: Window::new(n.saturating_sub(1), p, q, WINDOW_TAIL),
        }
    }

    /// The local parameter eps0.
    pub fn eps0(&self) -> f64 {
        self.eps0
    }

    /// An upper bound on delta(eps) of the pair (hence of the shuffled randomizer).
    pub fn delta(&self, eps: f64) -> f64 {
        if !(eps < self.eps0) {
            return 0.0;
        }
        if !(self.eps0 <= MAX_EPS0) {
            return 1.0; // e^(eps + eps0) could overflow: see `MAX_EPS0`
        }
        let eps = eps.max(0.0);
        let ee = eps.exp();
        let e0 = self.e0;
        let coef_r = -eps.exp_m1(); // 1 - e^eps <= 0
        let konst = (ee * e0 - 1.0) / (e0 + 1.0);
        let num = e0 - ee;
        let r = num / (num + (ee * e0 - 1.0));
        let w = &self.window;
        let total = sweep(
            w.lo,
            w.hi,
            |c| (c as f64 + 1.0) * r,
            |c, _x, ln_b, r_lo| {
                // The two terms are ~e^eps each and cancel to O(1) for large eps (at eps ~ 40
                // their rounding alone exceeds the result): their rounding (a few ulps of
                // each, from konst, coef_r and the product) is added as an absolute bound.
                let (a, b) = (coef_r * r_lo, konst);
                let f = a + b + 16.0 * f64::EPSILON * (a.abs() + b.abs());
                if f > 0.0 {
                    (f * exp_up(ln_b)).min(1.0) * exp_up(w.ln_at(c))
                } else {
                    0.0
                }
            },
        );
        ((total * FINAL_MARGIN + w.below + w.above) * FINAL_MARGIN).min(1.0)
    }

    /// D_{e^eps}(P_c || Q_c) by summing max(0, P(x) - e^eps Q(x)) over x = 0..=c+1.
    pub fn small_divergence(&self, c: u64, ee: f64) -> f64 {
        let a = self.e0 / (self.e0 + 1.0);
        let b = 1.0 / (self.e0 + 1.0);
        let bin = |x: i64| -> f64 {
            if x < 0 || x as u64 > c {
                0.0
            } else {
                ln_pmf_half(x as u64, c).exp()
            }
        };
        let mut s = 0.0;
        for x in 0..=(c as i64 + 1) {
            let p = a * bin(x) + b * bin(x - 1);
            let q = b * bin(x) + a * bin(x - 1);
            let d = p - ee * q;
            if d > 0.0 {
                s += d;
            }
        }
        (s * (1.0 + 1e-12) + 1e-300).min(1.0)
    }

    /// The smallest eps (to 1e-6 relative resolution, upper end) with delta(eps) <= delta.
    pub fn epsilon(&self, delta: f64) -> f64 {
        if !(self.eps0 <= MAX_EPS0) {
            return self.eps0; // no amplification claimed
        }
        smallest_eps(|e| self.delta(e), 0.0, self.eps0, delta)
    }
}

/// Sums, for c = hi down to lo, an upper bound on a per-count term that is a lower-tail sum
/// of Bin(c, 1/2) up to the threshold x < tau(c): `term(c, x, ln b_c(x), R_lo(c, x))` must
/// return an upper bound on the term for the tail up to x, given a lower bound on the Mills
/// ratio (every accountant here has a negative coefficient on R). The maximum over the
/// candidates x = ceil(tau) - 2 ..= ceil(tau) is taken, which covers a threshold misplaced by
/// one through rounding. The Mills ratio is carried along c by [`MillsRatio::move_to`].
pub(crate) fn sweep(
    lo: u64,
    hi: u64,
    tau: impl Fn(u64) -> f64,
    term: impl Fn(u64, u64, f64, f64) -> f64,
) -> f64 {
    let mut total = 0.0f64;
    let mut mills: Option<MillsRatio> = None;
    let mut c = hi;
    loop {
        let t = tau(c);
        if t > 0.0 {
            let x = ((t.ceil() - 1.0).max(0.0) as u64).min(c);
            let m = match mills.as_mut() {
                Some(m) if m.c >= c => {
                    m.move_to(c, x);
                    *m
                }
                _ => {
                    let m = MillsRatio::direct(c, x);
                    mills = Some(m);
                    m
                }
            };
            let ln_b = ln_pmf_half(x, c);
            let cf = c as f64;
            let xf = x as f64;
            let mut best = term(c, x, ln_b, m.lo);
            if x < c {
                let mut up = m;
                up.inc_x();
                let ln_up = ln_b + ((cf - xf) / (xf + 1.0)).ln() + 4.0 * f64::EPSILON;
                best = best.max(term(c, x + 1, ln_up, up.lo));
            }
            if x >= 1 {
                let mut dn = m;
                dn.dec_x();
                let ln_dn = ln_b + (xf / (cf - xf + 1.0)).ln() + 4.0 * f64::EPSILON;
                best = best.max(term(c, x - 1, ln_dn, dn.lo));
            }
            total += best;
        }
        if c <= lo {
            break;
        }
        c -= 1;
    }
    total
}

/// Bisection for the smallest eps in [lo, hi] with `delta_at(eps) <= target`, assuming
/// `delta_at` is non-increasing and `delta_at(hi) <= target`. Stops at 1e-6 relative
/// resolution (or 1e-12 absolute) and returns the upper end, where the condition was
/// checked (or `hi` itself).
pub fn smallest_eps(delta_at: impl Fn(f64) -> f64, lo: f64, hi: f64, target: f64) -> f64 {
    let mut lo = lo;
    let mut hi = hi;
    if delta_at(lo) <= target {
        return lo;
    }
    // Bisection in the geometric mean once both ends are positive: the answer is often
    // orders of magnitude below eps0.
    while hi - lo > 1e-6 * hi && hi > 1e-12 {
        let mid = if lo > 0.0 && hi / lo > 4.0 {
            lo.sqrt() * hi.sqrt()
        } else if lo == 0.0 && hi > 1e-3 {
            hi / 8.0
        } else {
            0.5 * (lo + hi)
        };
        if delta_at(mid) <= target {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// FMT 2021 clone reduction computed exactly (`fmt21-numerical`): any eps0-LDP randomizer.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fmt21Numerical;

impl Fmt21Numerical {
    fn pair(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
    ) -> Result<CloneReduction, AccountingError> {
        let eps0 = checked_eps0(Method::Fmt21Numerical, randomizer)?;
        Ok(CloneReduction::fmt21(n.get(), eps0))
    }
}

impl CurveAccountant for Fmt21Numerical {
    type Curve = CloneReduction;

    fn curve_method(&self) -> Method {
        Method::Fmt21Numerical
    }

    fn curve(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
    ) -> Result<CloneReduction, AccountingError> {
        self.pair(randomizer, n)
    }
}

/// FMT 2023 stronger clones computed exactly (`clones-krr`): k-ary randomized response only;
/// a generic randomizer is refused (the decomposition it needs does not hold in general).
#[derive(Debug, Clone, Copy, Default)]
pub struct StrongerClones;

impl StrongerClones {
    fn pair(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
    ) -> Result<CloneReduction, AccountingError> {
        krr_k(Method::ClonesKrr, randomizer)?;
        let eps0 = checked_eps0(Method::ClonesKrr, randomizer)?;
        Ok(CloneReduction::stronger(n.get(), eps0))
    }
}

impl CurveAccountant for StrongerClones {
    type Curve = CloneReduction;

    fn curve_method(&self) -> Method {
        Method::ClonesKrr
    }

    fn curve(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
    ) -> Result<CloneReduction, AccountingError> {
        self.pair(randomizer, n)
    }
}

impl PrivacyCurve for CloneReduction {
    fn epsilon(&self, delta: f64) -> f64 {
        CloneReduction::epsilon(self, delta)
    }

    fn delta(&self, eps: f64) -> f64 {
        CloneReduction::delta(self, eps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounting::binomial::ln_pmf;

    /// Direct evaluation of the whole sum (every c, every x), for small n.
    fn brute(n: u64, eps0: f64, p: f64, eps: f64) -> f64 {
        let cr = CloneReduction::with_clone_probability(n, eps0, p, 1.0 - p);
        let ee = eps.exp();
        (0..n)
            .map(|c| {
                ln_pmf(c, n - 1, p, 1.0 - p).exp() * cr.small_divergence(c, ee) / (1.0 + 1e-12)
            })
            .sum()
    }

    #[test]
    fn matches_brute_force_and_is_above_it() {
        for &(n, eps0) in &[(300u64, 1.0f64), (700, 0.5), (900, 3.0), (400, 6.0)] {
            for &p in &[(-eps0).exp(), 2.0 / (eps0.exp() + 1.0)] {
                let cr = CloneReduction::with_clone_probability(n, eps0, p, 1.0 - p);
                for &eps in &[0.01, 0.1, 0.3, 0.7 * eps0] {
                    let b = brute(n, eps0, p, eps);
                    let d = cr.delta(eps);
                    assert!(d >= b, "n={n} eps0={eps0} p={p} eps={eps}: {d} < {b}");
                    assert!(
                        d <= b * (1.0 + 1e-7) + 1e-25,
                        "n={n} eps0={eps0} eps={eps}: {d} vs {b}"
                    );
                }
            }
        }
    }

    #[test]
    fn public_check_value_fmt21() {
        // FMT21 README: n = 1e5, eps0 = 4, delta = 1e-6: numerical eps in [0.16754, 0.17279].
        let e = CloneReduction::fmt21(100_000, 4.0).epsilon(1e-6);
        assert!((0.16754..=0.17279).contains(&e), "{e}");
    }

    #[test]
    fn monotone_and_never_nan() {
        let a = CloneReduction::fmt21(10_000, 2.0);
        let mut prev = f64::INFINITY;
        for i in 0..=40 {
            let d = a.delta(i as f64 * 0.05);
            assert!(!d.is_nan() && d <= prev, "{i} {d} {prev}");
            prev = d;
        }
        let e1 = CloneReduction::fmt21(10_000, 2.0).epsilon(1e-6);
        let e2 = CloneReduction::fmt21(20_000, 2.0).epsilon(1e-6);
        let e3 = CloneReduction::fmt21(10_000, 3.0).epsilon(1e-6);
        assert!(e2 < e1 && e1 < e3, "{e1} {e2} {e3}");
        let s = CloneReduction::stronger(10_000, 2.0).epsilon(1e-6);
        assert!(s < e1);
    }
}
