//! A joint clone reduction for the alternating shuffler A^2_pi (`alternating-clones`): user
//! i is hidden at the same time among the clones of its row (which column holds it is
//! unknown) and among the clones of the column it lands in. Derivation step by step in
//! `docs/alternating.md`; the shuffler is [`crate::shuffle::alternating`].
//!
//! **Statement.** Take the clone decomposition of Feldman, McMillan, Talwar (FOCS 2021,
//! Theorem 3.2: p = e^-eps0, any eps0-LDP randomizer; SODA 2023, Theorem 3.1: p =
//! 2 / (e^eps0 + 1), k-ary randomized response only), alpha = e^eps0 / (e^eps0 + 1),
//! beta = 2 alpha - 1 = tanh(eps0 / 2). For user i in a row of k users and h_o *other full*
//! rows, let T ~ Bin(h_o, p), B ~ Bin(T + 1, 1/2), U = 1 + beta (2 B / (T + 1) - 1), and X_s
//! the mean of s iid copies of U. Then for every eps >= 0
//!
//! delta(eps) <= E_s E[ ((1 + e^eps) X_s - 2 e^eps)_+ ],  s ~ 1 + Bin(k - 1, p),
//!
//! in both directions. Users of a full row have k = w and h_o = (full rows) - 1; users of a
//! ragged last row (r < w cells) have k = r and h_o = (full rows). The bound does not use
//! the public placement pi.
//!
//! **Computation** (all rounding toward a larger delta, see `docs/alternating.md`):
//! - with E = e^eps and kappa = 2E / (1 + E): (1 + E) X - 2E = (1 + E)(X - kappa), and
//!   (y)_+ <= e^(mu y - 1) / mu for mu > 0, so with mu = theta s (a Chernoff bound)
//!   E[(X_s - kappa)_+] <= exp(s phi(theta) - 1) / (theta s),
//!   phi(theta) = ln E e^(theta (U - kappa)) = theta (1 - kappa) + ln sum_T Pr[T] cosh(theta beta / (T + 1))^(T + 1)
//!   (the binomial moment generating function of B in closed form); any theta > 0 is valid;
//! - for small instances, exactly: the distribution of sum_j ceil(B_j L / (T_j + 1)) on the
//!   integer lattice 0..=s L (L = lcm(1..=T_max + 1), so the ceiling is exact, or a coarser
//!   L that rounds every U up, a valid upper bound), convolved s times;
//! - the minimum of the two per s, summed over s in a window of Bin(k - 1, p) whose outside
//!   mass (bounded rigorously by [`Window`]) counts as delta 1.

use super::binomial::{exp_up, ln_pmf_half, Window};
use super::clones::{smallest_eps, FINAL_MARGIN, WINDOW_TAIL};
use super::{
    checked_eps0, AccountingError, CurveAccountant, LocalRandomizer, Method, PrivacyCurve, MAX_EPS0,
};
use crate::params::NumUsers;

const U: f64 = f64::EPSILON;

/// Largest lattice resolution L of the exact evaluation.
const LATTICE_MAX_L: u64 = 5040;
/// Largest number of multiply-adds the accountant spends on the exact evaluation per delta
/// (beyond it only the Chernoff bound is computed).
pub(crate) const LATTICE_BUDGET: f64 = 4e6;
/// Geometric grid of tilts theta shared by every s (any theta gives a valid bound).
const THETA_GRID: usize = 64;

/// ln cosh(y) for y >= 0, to a few ulps relative (no cancellation near 0).
fn ln_cosh(y: f64) -> f64 {
    if y > 20.0 {
        y - core::f64::consts::LN_2 + (-2.0 * y).exp().ln_1p()
    } else {
        let s = (0.5 * y).sinh();
        (2.0 * s * s).ln_1p()
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// lcm(1..=k), or `None` above `cap`.
fn lcm_upto(k: u64, cap: u64) -> Option<u64> {
    let mut l = 1u64;
    for j in 2..=k {
        l = l / gcd(l, j) * j;
        if l > cap {
            return None;
        }
    }
    Some(l)
}

/// How the lattice evaluation rounds B / (T + 1) to the lattice: up (a certified upper bound
/// on the reduction's delta) or down (a lower bound on it, for measuring the gap only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rounding {
    Up,
    /// Only for measuring the Chernoff bound's gap (tests).
    #[cfg_attr(not(test), allow(dead_code))]
    Down,
}

/// The joint clone bound for one class of users: a row of `row` users and `h_other` other
/// full rows (see the module documentation).
#[derive(Debug, Clone)]
pub struct JointClones {
    row: u64,
    h_other: u64,
    eps0: f64,
    /// tanh(eps0 / 2) rounded up (a larger beta is a valid decomposition, docs).
    beta: f64,
    /// s - 1 ~ Bin(row - 1, p).
    s_win: Window,
    /// T ~ Bin(h_other, p).
    t_win: Window,
}

impl JointClones {
    /// The bound with FMT 2021's clone probability p = e^-eps0 (any eps0-LDP randomizer).
    pub fn fmt21(row: u64, h_other: u64, eps0: f64) -> Self {
        let p = (-eps0).exp();
        Self::with_clone_probability(row, h_other, eps0, p)
    }

    /// The bound with FMT 2023's stronger clones p = 2 / (e^eps0 + 1) (k-ary RR only).
    pub fn stronger(row: u64, h_other: u64, eps0: f64) -> Self {
        let p = 2.0 / (eps0.exp() + 1.0);
        Self::with_clone_probability(row, h_other, eps0, p)
    }

    /// The bound with clone probability p (rounded down by a few ulps: fewer clones is a
    /// valid decomposition whenever p is, docs). `row` >= 1.
    pub fn with_clone_probability(row: u64, h_other: u64, eps0: f64, p: f64) -> Self {
        let p = (p * (1.0 - 4.0 * U)).clamp(0.0, 1.0);
        let q = 1.0 - p;
        let beta = ((0.5 * eps0).tanh() * (1.0 + 4.0 * U)).min(1.0);
        Self {
            row: row.max(1),
            h_other,
            eps0,
            beta,
            s_win: Window::new(row.max(1) - 1, p, q, WINDOW_TAIL),
            t_win: Window::new(h_other, p, q, WINDOW_TAIL),
        }
    }

    /// (row users, other full rows).
    pub fn shape(&self) -> (u64, u64) {
        (self.row, self.h_other)
    }

    /// The local parameter eps0.
    pub fn eps0(&self) -> f64 {
        self.eps0
    }

    /// (E', kappa', ln(1 + E') rounded up) for the target eps: E' <= e^eps (the bound is
    /// non-increasing in E), kappa' <= 2 E' / (1 + E').
    fn eps_terms(eps: f64) -> (f64, f64, f64) {
        let e = eps.exp() * (1.0 - 4.0 * U);
        let kappa = (2.0 * e / (1.0 + e)) * (1.0 - 4.0 * U);
        let ln1pe = e.ln_1p() * (1.0 + 4.0 * U) + 4.0 * U;
        (e, kappa, ln1pe)
    }

    /// Upper bound on phi(theta) = ln E e^(theta (U - kappa)).
    fn phi_up(&self, theta: f64, kappa: f64) -> f64 {
        let tb = theta * self.beta * (1.0 + 4.0 * U);
        let w = &self.t_win;
        let mut a: Vec<f64> = Vec::with_capacity((w.hi - w.lo + 3) as usize);
        for t in w.lo..=w.hi {
            let k = (t + 1) as f64;
            let lc = k * ln_cosh(tb / k);
            let lp = w.ln_at(t);
            a.push(lp + lc + 1e-12 * (1.0 + lp.abs() + lc));
        }
        // Outside the window: k ln cosh(x / k) is non-increasing in k, so a count below the
        // window is at most the T = 0 term, one above it at most the T = hi + 1 term.
        if w.below > 0.0 {
            let lc = ln_cosh(tb);
            a.push(w.below.ln() + lc + 1e-12 * (1.0 + lc));
        }
        if w.above > 0.0 {
            let k = (w.hi + 2) as f64;
            let lc = k * ln_cosh(tb / k);
            a.push(w.above.ln() + lc + 1e-12 * (1.0 + lc));
        }
        let amax = a.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = a.iter().map(|&x| exp_up(x - amax)).sum();
        let ln_sigma = amax + (sum * (1.0 + 1e-12)).ln() + 1e-12 * (1.0 + amax.abs());
        let lin = theta * (1.0 - kappa);
        lin + ln_sigma + 1e-12 * (lin.abs() + ln_sigma.abs())
    }

    /// Upper bound on ln of the Chernoff bound for s columns at tilt theta, given phi(theta).
    fn ln_chernoff(s: u64, theta: f64, phi: f64, ln1pe: f64) -> f64 {
        let sf = s as f64;
        let core = sf * phi;
        let v = ln1pe - 1.0 - theta.ln() - sf.ln() + core;
        v + 1e-12 * (ln1pe + 1.0 + theta.ln().abs() + sf.ln() + core.abs())
    }

    /// The tilt minimising the Chernoff bound for s columns (golden section in ln theta; the
    /// exponent is convex in theta, hence unimodal in ln theta).
    fn best_theta(&self, s: u64, kappa: f64, ln1pe: f64) -> f64 {
        let f = |u: f64| {
            let th = u.exp();
            Self::ln_chernoff(s, th, self.phi_up(th, kappa), ln1pe)
        };
        let g = 0.5 * (5f64.sqrt() - 1.0);
        let (mut a, mut b) = (-16.0f64, 16.0f64);
        let mut c = b - g * (b - a);
        let mut d = a + g * (b - a);
        let (mut fc, mut fd) = (f(c), f(d));
        for _ in 0..48 {
            if fc <= fd {
                b = d;
                d = c;
                fd = fc;
                c = b - g * (b - a);
                fc = f(c);
            } else {
                a = c;
                c = d;
                fc = fd;
                d = a + g * (b - a);
                fd = f(d);
            }
        }
        (0.5 * (a + b)).exp()
    }

    /// Chernoff upper bounds on delta given s, for s = s_lo..=s_hi, at the target eps.
    fn chernoff_by_s(&self, kappa: f64, ln1pe: f64, s_lo: u64, s_hi: u64) -> Vec<f64> {
        // The optimal tilt decreases in s (docs): a shared geometric grid between the optima
        // at the window's ends, widened by 2 on each side, serves every s.
        let th_hi = self.best_theta(s_lo, kappa, ln1pe) * 2.0;
        let th_lo = self.best_theta(s_hi, kappa, ln1pe) / 2.0;
        let grid: Vec<(f64, f64)> = (0..THETA_GRID)
            .map(|j| {
                let th = th_lo * (th_hi / th_lo).powf(j as f64 / (THETA_GRID - 1) as f64);
                (th, self.phi_up(th, kappa))
            })
            .collect();
        (s_lo..=s_hi)
            .map(|s| {
                let best = grid
                    .iter()
                    .map(|&(th, phi)| Self::ln_chernoff(s, th, phi, ln1pe))
                    .fold(f64::INFINITY, f64::min);
                exp_up(best).min(1.0)
            })
            .collect()
    }

    /// The lattice resolution and the number of multiply-adds of the exact evaluation up to
    /// s_hi columns (L = lcm(1..=T_max + 1) if at most `max_l`, else `max_l`: U rounded).
    fn lattice_cost(&self, s_hi: u64, max_l: u64) -> (u64, f64) {
        let l = lcm_upto(self.t_win.hi + 1, max_l).unwrap_or(max_l);
        let support: u64 = (self.t_win.lo..=self.t_win.hi).map(|t| t + 2).sum();
        let support = support.min(l + 1) as f64;
        let sf = s_hi as f64;
        (l, 0.5 * sf * (sf + 1.0) * l as f64 * support)
    }

    /// The reduction's delta given s for s = s_lo..=s_hi, on the lattice of resolution l:
    /// [`Rounding::Up`] is a certified upper bound (every rounding outward), exact up to
    /// floating point when l is a multiple of every T + 1; [`Rounding::Down`] is a lower
    /// bound on the reduction (not on the shuffler), for measuring the gap only.
    pub(crate) fn lattice_by_s(
        &self,
        eps: f64,
        l: u64,
        rounding: Rounding,
        s_lo: u64,
        s_hi: u64,
    ) -> Vec<f64> {
        let up = rounding == Rounding::Up;
        let (e, kappa, _) = Self::eps_terms(eps);
        let scale = (1.0 + e) * (1.0 + 4.0 * U);
        // Distribution of one copy's lattice point ceil (or floor) of B l / (T + 1).
        let mut dens = vec![0.0f64; l as usize + 1];
        let w = &self.t_win;
        for t in w.lo..=w.hi {
            let lp = w.ln_at(t);
            for b in 0..=t + 1 {
                let num = b * l;
                let key = if up {
                    num.div_ceil(t + 1)
                } else {
                    num / (t + 1)
                };
                let lb = ln_pmf_half(b, t + 1);
                dens[key as usize] += if up {
                    exp_up(lp + lb + 1e-12 * (1.0 + lp.abs() + lb.abs()))
                } else {
                    (lp + lb - 1e-12 * (1.0 + lp.abs() + lb.abs())).exp() * (1.0 - 4.0 * U)
                };
            }
        }
        if up {
            // Counts outside the window: at the largest U (a valid upper bound).
            dens[l as usize] += w.below + w.above;
        }
        let support: Vec<(usize, f64)> = dens
            .iter()
            .enumerate()
            .filter(|&(_, &v)| v > 0.0)
            .map(|(k, &v)| (k, v))
            .collect();
        let mut dist = vec![1.0f64];
        let mut out = Vec::with_capacity((s_hi - s_lo + 1) as usize);
        for s in 1..=s_hi {
            let mut next = vec![0.0f64; dist.len() + l as usize];
            for (i, &pi) in dist.iter().enumerate() {
                if pi == 0.0 {
                    continue;
                }
                for &(k, pk) in &support {
                    next[i + k] += pi * pk;
                }
            }
            dist = next;
            if s < s_lo {
                continue;
            }
            // X - kappa = (1 - kappa) + beta (2 key / (s l) - 1).
            let denom = (s * l) as f64;
            let mut total = 0.0f64;
            for (key, &pk) in dist.iter().enumerate() {
                if pk == 0.0 {
                    continue;
                }
                let v = 2.0 * key as f64 / denom - 1.0;
                let y = (1.0 - kappa) + self.beta * v;
                let slack = 8.0 * U * (1.0 + (1.0 - kappa).abs() + self.beta);
                let y = if up { y + slack } else { y - slack };
                if y > 0.0 {
                    total += pk * y;
                }
            }
            // Relative error of the s-fold convolution of positive terms: <= (s |support| +
            // |dist|) ulps, far below the margin.
            let v = if up {
                (total * scale * (1.0 + 1e-10)).min(1.0)
            } else {
                total * (1.0 + e) * (1.0 - 1e-10)
            };
            out.push(v);
        }
        out
    }

    /// An upper bound on delta(eps) (see the module documentation).
    pub fn delta(&self, eps: f64) -> f64 {
        self.delta_with(eps, LATTICE_BUDGET)
    }

    /// [`JointClones::delta`] with the Chernoff bound alone (for measuring its gap).
    pub fn delta_chernoff(&self, eps: f64) -> f64 {
        self.delta_with(eps, 0.0)
    }

    /// The upper bound with the exact lattice evaluation used where its cost is at most
    /// `lattice_budget` multiply-adds.
    pub(crate) fn delta_with(&self, eps: f64, lattice_budget: f64) -> f64 {
        let by_s = match self.delta_by_s(eps, lattice_budget) {
            BySize::Zero => return 0.0,
            BySize::One => return 1.0,
            BySize::Values(v) => v,
        };
        let sw = &self.s_win;
        let total: f64 = by_s
            .iter()
            .enumerate()
            .map(|(j, &b)| b * exp_up(sw.ln_at(sw.lo + j as u64)))
            .sum();
        ((total * FINAL_MARGIN + sw.below + sw.above) * FINAL_MARGIN).min(1.0)
    }

    /// Certified upper bounds on delta(eps) *given s* (the number of columns of S, docs), for
    /// s = `s_window().lo + 1 ..= s_window().hi + 1`, in that order: per s the smaller of the
    /// Chernoff bound and, within `lattice_budget` multiply-adds, the lattice evaluation.
    pub(crate) fn delta_by_s(&self, eps: f64, lattice_budget: f64) -> BySize {
        if !(eps < self.eps0) {
            return BySize::Zero;
        }
        if !(self.eps0 <= MAX_EPS0) {
            return BySize::One;
        }
        let eps = eps.max(0.0);
        let (_, kappa, ln1pe) = Self::eps_terms(eps);
        let sw = &self.s_win;
        let (s_lo, s_hi) = (sw.lo + 1, sw.hi + 1);
        let mut by_s = self.chernoff_by_s(kappa, ln1pe, s_lo, s_hi);
        let (l, cost) = self.lattice_cost(s_hi, LATTICE_MAX_L);
        if cost <= lattice_budget {
            let exact = self.lattice_by_s(eps, l, Rounding::Up, s_lo, s_hi);
            for (b, x) in by_s.iter_mut().zip(exact) {
                *b = b.min(x);
            }
        }
        BySize::Values(by_s)
    }

    /// The window of s - 1 ~ Bin(row - 1, p) the bound sums over (outside mass rigorous).
    pub(crate) fn s_window(&self) -> &Window {
        &self.s_win
    }

    /// The smallest eps (to 1e-6 relative resolution, upper end) with delta(eps) <= delta.
    pub fn epsilon(&self, delta: f64) -> f64 {
        if !(self.eps0 <= MAX_EPS0) {
            return self.eps0;
        }
        smallest_eps(|e| self.delta(e), 0.0, self.eps0, delta)
    }
}

/// Per-s values of [`JointClones::delta_by_s`].
#[derive(Debug, Clone)]
pub(crate) enum BySize {
    /// eps >= eps0: delta is 0 for every s.
    Zero,
    /// eps0 beyond [`MAX_EPS0`]: no bound (delta 1).
    One,
    /// Upper bounds given s, over the s window.
    Values(Vec<f64>),
}

/// The classes of users of the A^2_pi layout for n users, as (row users, other full rows):
/// a full row (if any) gives (w, full rows - 1), a ragged last row of r < w cells gives
/// (r, full rows). Layout of [`crate::shuffle::alternating::GridLayout`].
pub fn joint_classes(n: u64) -> Vec<(u64, u64)> {
    if n == 0 {
        return vec![];
    }
    let mut w = n.isqrt();
    if w * w < n {
        w += 1;
    }
    let h = n.div_ceil(w);
    let r = n - (h - 1) * w;
    let full = if r == w { h } else { h - 1 };
    let mut out = vec![];
    if full >= 1 {
        out.push((w, full - 1));
    }
    if r < w {
        out.push((r, full));
    }
    out
}

/// The A^2_pi curve of the joint clone reduction: the largest over the user classes.
#[derive(Debug, Clone)]
pub struct AlternatingClonesCurve {
    classes: Vec<JointClones>,
    eps0: f64,
}

impl AlternatingClonesCurve {
    /// The per-class bounds.
    pub fn classes(&self) -> &[JointClones] {
        &self.classes
    }
}

impl PrivacyCurve for AlternatingClonesCurve {
    fn delta(&self, eps: f64) -> f64 {
        self.classes
            .iter()
            .map(|c| c.delta(eps))
            .fold(0.0, f64::max)
    }

    fn epsilon(&self, delta: f64) -> f64 {
        if !(self.eps0 <= MAX_EPS0) {
            return self.eps0;
        }
        smallest_eps(|e| PrivacyCurve::delta(self, e), 0.0, self.eps0, delta)
    }
}

/// The joint clone reduction for A^2_pi (`alternating-clones`) as an accountant: `n` is the
/// number of users of the *alternating* shuffler. GRR gets the stronger clones p =
/// 2 / (e^eps0 + 1) (as `clones-krr`: k-ary RR satisfies its condition with equality), a
/// generic eps0-LDP randomizer p = e^-eps0 (as `fmt21-numerical`). Since a uniform shuffle's
/// view (the union of the columns) is a post-processing of the A^2_pi view of the same
/// users, the bound also holds for a uniform shuffle of n, but it is not meant for one.
#[derive(Debug, Clone, Copy, Default)]
pub struct AlternatingClones;

impl AlternatingClones {
    /// The curve for the layout of n users.
    pub fn curve_for(
        &self,
        randomizer: &LocalRandomizer,
        n: u64,
    ) -> Result<AlternatingClonesCurve, AccountingError> {
        let eps0 = checked_eps0(Method::AlternatingClones, randomizer)?;
        let classes = joint_classes(n)
            .into_iter()
            .map(|(row, h_other)| Self::class_bound(randomizer, row, h_other))
            .collect::<Result<_, _>>()?;
        Ok(AlternatingClonesCurve { classes, eps0 })
    }

    /// The bound for one class (a row of `row` users, `h_other` other full rows).
    pub fn class_bound(
        randomizer: &LocalRandomizer,
        row: u64,
        h_other: u64,
    ) -> Result<JointClones, AccountingError> {
        let eps0 = checked_eps0(Method::AlternatingClones, randomizer)?;
        Ok(match randomizer {
            // For GRR the stronger clones dominate: the generic decomposition is the
            // stronger one with some clones turned into leftovers (revealed), docs.
            LocalRandomizer::Grr { .. } => JointClones::stronger(row, h_other, eps0),
            LocalRandomizer::Generic { .. } => JointClones::fmt21(row, h_other, eps0),
        })
    }
}

impl CurveAccountant for AlternatingClones {
    type Curve = AlternatingClonesCurve;

    fn curve_method(&self) -> Method {
        Method::AlternatingClones
    }

    fn curve(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
    ) -> Result<AlternatingClonesCurve, AccountingError> {
        self.curve_for(randomizer, n.get())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounting::binomial::ln_pmf;
    use crate::accounting::clones::CloneReduction;
    use crate::accounting::ShuffleAccountant;

    fn grr(m: u32, gamma: f64) -> LocalRandomizer {
        LocalRandomizer::Grr { m, gamma }
    }

    /// Direct evaluation of the FMT pair for n users (every clone count, every point).
    fn clone_pair_brute(n: u64, eps0: f64, p: f64, eps: f64) -> f64 {
        let cr = CloneReduction::with_clone_probability(n, eps0, p, 1.0 - p);
        let ee = eps.exp();
        (0..n)
            .map(|c| {
                ln_pmf(c, n - 1, p, 1.0 - p).exp() * cr.small_divergence(c, ee) / (1.0 + 1e-12)
            })
            .sum()
    }

    /// h_other = 0 (a single row): X_s is the FMT pair's likelihood ratio with s - 1 clones,
    /// so the bound is the FMT clone pair for `row` users (computed exactly here, L = 1).
    #[test]
    fn one_row_is_the_fmt_clone_pair() {
        for (row, eps0) in [(2u64, 1.0f64), (5, 0.7), (30, 2.0), (300, 3.0)] {
            for stronger in [false, true] {
                let (jc, p) = if stronger {
                    (
                        JointClones::stronger(row, 0, eps0),
                        2.0 / (eps0.exp() + 1.0),
                    )
                } else {
                    (JointClones::fmt21(row, 0, eps0), (-eps0).exp())
                };
                let cr = CloneReduction::with_clone_probability(row, eps0, p, 1.0 - p);
                for eps in [0.0, 0.05, 0.2, 0.5 * eps0] {
                    let b = clone_pair_brute(row, eps0, p, eps);
                    let d = jc.delta(eps);
                    let c = cr.delta(eps);
                    let ch = jc.delta_chernoff(eps);
                    assert!(d >= b, "{row} {eps0} {p} {eps}: {d} < {b}");
                    assert!(
                        d <= b * (1.0 + 1e-7) + 1e-25,
                        "{row} {eps0} {eps}: {d} vs {b}"
                    );
                    assert!((d - c).abs() <= 1e-6 * c + 1e-25, "{d} vs clones.rs {c}");
                    assert!(ch >= b, "Chernoff {ch} < {b}");
                }
            }
        }
    }

    /// A row of one user: s = 1, and the bound is the FMT pair of its column (h_other + 1
    /// users).
    #[test]
    fn one_user_row_is_the_column_clone_pair() {
        for h_other in [1u64, 4, 9] {
            for eps0 in [0.5f64, 2.0] {
                let p = 2.0 / (eps0.exp() + 1.0);
                let jc = JointClones::stronger(1, h_other, eps0);
                for eps in [0.0, 0.1, 0.4 * eps0] {
                    let b = clone_pair_brute(h_other + 1, eps0, p, eps);
                    let d = jc.delta(eps);
                    assert!(d >= b, "{h_other} {eps0} {eps}: {d} < {b}");
                    assert!(
                        d <= b * (1.0 + 1e-7) + 1e-25,
                        "{h_other} {eps0}: {d} vs {b}"
                    );
                    assert!(jc.delta_chernoff(eps) >= b);
                }
            }
        }
    }

    /// Values of E_s E[((1 + e^eps) X_s - 2 e^eps)_+] computed independently (exact
    /// enumeration of the sum of the s copies of U in Python, double precision) for GRR on
    /// the tiny layouts of the brute-force test: n = 9 (3 x 3), n = 4 (2 x 2), n = 6 (2 x 3).
    #[test]
    fn matches_independent_evaluation_on_tiny_layouts() {
        let cases = [
            (9u64, 2u32, 0.6, 0.6, 0.022_974_105_331_550_428),
            (9, 2, 0.3, 1.0, 0.209_466_553_879_069_98),
            (4, 2, 0.3, 0.6, 0.411_958_899_641_589_8),
            (6, 3, 0.6, 0.6, 0.107_514_238_728_058_8),
        ];
        for (n, m, gamma, eps, want) in cases {
            let c = AlternatingClones.curve_for(&grr(m, gamma), n).unwrap();
            let d = PrivacyCurve::delta(&c, eps);
            assert!(
                d >= want && d <= want * (1.0 + 1e-8),
                "n = {n}: {d} vs {want}"
            );
        }
    }

    /// The Chernoff bound is above the exact value of the reduction, the lattice rounded up
    /// is above it rounded down, and with L = lcm(1..=T_max + 1) the two agree.
    #[test]
    fn chernoff_and_lattice_bracket_the_exact_value() {
        for (row, h_other, eps0) in [(6u64, 5u64, 1.5f64), (10, 9, 2.5), (4, 11, 1.0)] {
            let jc = JointClones::stronger(row, h_other, eps0);
            let (s_lo, s_hi) = (jc.s_win.lo + 1, jc.s_win.hi + 1);
            let l = lcm_upto(jc.t_win.hi + 1, u64::MAX).unwrap();
            for eps in [0.1, 0.3, 0.6 * eps0] {
                let up = jc.lattice_by_s(eps, l, Rounding::Up, s_lo, s_hi);
                let dn = jc.lattice_by_s(eps, l, Rounding::Down, s_lo, s_hi);
                let coarse_up = jc.lattice_by_s(eps, 16, Rounding::Up, s_lo, s_hi);
                let coarse_dn = jc.lattice_by_s(eps, 16, Rounding::Down, s_lo, s_hi);
                let (_, kappa, ln1pe) = JointClones::eps_terms(eps);
                let ch = jc.chernoff_by_s(kappa, ln1pe, s_lo, s_hi);
                for j in 0..up.len() {
                    assert!(up[j] >= dn[j] && up[j] <= dn[j] * (1.0 + 1e-8) + 1e-300);
                    assert!(coarse_up[j] >= up[j] && coarse_dn[j] <= dn[j]);
                    assert!(
                        ch[j] >= up[j],
                        "s = {}: {} < {}",
                        s_lo + j as u64,
                        ch[j],
                        up[j]
                    );
                }
                let d = jc.delta(eps);
                let dc = jc.delta_chernoff(eps);
                assert!(dc >= d && d > 0.0, "{dc} {d}");
            }
        }
    }

    #[test]
    fn classes_match_the_layout() {
        use crate::shuffle::alternating::GridLayout;
        for n in 1..500usize {
            let l = GridLayout::new(n);
            let (w, h) = (l.width(), l.height());
            let full = (0..h).filter(|&r| l.row_len(r) == w).count() as u64;
            let mut want = vec![];
            if full > 0 {
                want.push((w as u64, full - 1));
            }
            let last = l.row_len(h - 1);
            if last < w {
                want.push((last as u64, full));
            }
            assert_eq!(joint_classes(n as u64), want, "n = {n}");
        }
    }

    /// Generic randomizers get p = e^-eps0, never a smaller bound than GRR's stronger
    /// clones at the same eps0; bad parameters are refused with a typed error.
    #[test]
    fn generic_is_looser_and_bad_input_is_refused() {
        let n = NumUsers::new(2500).unwrap();
        let g = grr(2, 0.2);
        let e0 = g.eps0();
        let generic = LocalRandomizer::Generic { eps0: e0 };
        for eps in [0.1, 0.5, 1.0] {
            let a = AlternatingClones.delta(&g, n, eps).unwrap();
            let b = AlternatingClones.delta(&generic, n, eps).unwrap();
            assert!(b >= a, "{eps}: {b} < {a}");
        }
        for bad in [
            grr(2, 0.0),
            grr(1, 0.5),
            LocalRandomizer::Generic { eps0: -1.0 },
        ] {
            assert!(matches!(
                AlternatingClones.delta(&bad, n, 0.5),
                Err(AccountingError::NotApplicable { .. })
            ));
        }
        assert!(AlternatingClones.delta(&g, n, -1.0).is_err());
    }

    /// The curve is non-increasing in eps and never NaN, and more users never hurt.
    #[test]
    fn monotone_and_never_nan() {
        let r = grr(2, 0.05);
        let c = AlternatingClones.curve_for(&r, 1_000_000).unwrap();
        let mut prev = f64::INFINITY;
        for i in 0..=30 {
            let d = PrivacyCurve::delta(&c, i as f64 * 0.1);
            assert!(!d.is_nan() && d <= prev * (1.0 + 1e-9), "{i}: {d} > {prev}");
            prev = d;
        }
        let e1 = AlternatingClones
            .curve_for(&r, 10_000)
            .unwrap()
            .epsilon(1e-8);
        let e2 = AlternatingClones
            .curve_for(&r, 1_000_000)
            .unwrap()
            .epsilon(1e-8);
        assert!(e2 < e1, "{e2} {e1}");
    }

    /// delta(eps) of the reduction on the lattice of resolution l, summed over the s window.
    fn lattice_total(jc: &JointClones, eps: f64, l: u64, rounding: Rounding) -> f64 {
        let sw = &jc.s_win;
        let by_s = jc.lattice_by_s(eps, l, rounding, sw.lo + 1, sw.hi + 1);
        let t: f64 = by_s
            .iter()
            .enumerate()
            .map(|(j, &b)| b * sw.ln_at(sw.lo + j as u64).exp())
            .sum();
        match rounding {
            Rounding::Up => t + sw.below + sw.above,
            Rounding::Down => t,
        }
    }

    /// How far the Chernoff bound is from the reduction's exact value (bracketed by the
    /// lattice rounded down and up) at n = 100..400, GRR over 2 values. Ignored (about a
    /// minute in the test profile); the table in `docs/alternating.md` comes from
    /// `cargo test -p blanket --lib alternating_clones::tests::chernoff_gap_table -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn chernoff_gap_table() {
        println!(
            "| n | class (row, h_o) | eps0 | eps | exact (lattice down .. up) | Chernoff | ratio |"
        );
        println!("|---|---|---|---|---|---|---|");
        for n in [100u64, 144, 256, 400] {
            for eps0 in [1.0f64, 2.0, 3.0] {
                let jc = JointClones::stronger(joint_classes(n)[0].0, joint_classes(n)[0].1, eps0);
                let l = lcm_upto(jc.t_win.hi + 1, 27_720).unwrap_or(27_720);
                for eps in [0.25, 0.5, 1.0] {
                    if eps >= eps0 {
                        continue;
                    }
                    let up = lattice_total(&jc, eps, l, Rounding::Up);
                    let dn = lattice_total(&jc, eps, l, Rounding::Down);
                    let ch = jc.delta_chernoff(eps);
                    println!(
                        "| {n} | {:?} | {eps0} | {eps} | {dn:.3e} .. {up:.3e} | {ch:.3e} | {:.2} |",
                        jc.shape(),
                        ch / up
                    );
                }
                // The eps direction at delta = 1e-6: Chernoff alone vs the lattice rounded up.
                let e_ch = smallest_eps(|e| jc.delta_chernoff(e), 0.0, eps0, 1e-6);
                let e_up =
                    smallest_eps(|e| lattice_total(&jc, e, l, Rounding::Up), 0.0, eps0, 1e-6);
                println!(
                    "|   eps(1e-6) | | {eps0} | | lattice up {e_up:.4} | {e_ch:.4} | {:.3} |",
                    e_ch / e_up
                );
            }
        }
    }
}
