//! Privacy-loss distributions (PLD), composed over many rounds with a certified bound.
//!
//! A PLD here is a nonnegative measure on losses l_i = (offset + i) h + `shift` (plus a mass
//! at +infinity), read through the hockey-stick functional
//!   delta(eps) = inf_mass + sum_i mass_i (1 - e^(eps - l_i))_+
//! (Sommer, Meiser, Mohammadi, "Privacy Loss Classes", PoPETs 2019; Koskela, Jalko, Honkela,
//! AISTATS 2020). For a pair (P, Q) and L = ln(P/Q) under P this is D_{e^eps}(P || Q).
//!
//! What keeps it certified (docs/accounting.md, "PLD", derives each step):
//! - *Dominating pairs compose* (Zhu, Dong, Wang, "Optimal Accounting of Differential Privacy
//!   via Characteristic Function", AISTATS 2022, Theorem 10): if (P', Q') dominates each
//!   round's pair, the k-fold product of (P', Q') dominates the composition.
//! - *An (eps, delta) guarantee* is dominated by the pair with P-mass delta at +infinity,
//!   (1 - delta) e^eps / (1 + e^eps) at loss eps and (1 - delta) / (1 + e^eps) at -eps
//!   (Kairouz, Oh, Viswanath, ICML 2015; Google dp_accounting `from_privacy_parameters`). Its
//!   k-fold composition is exactly KOV's Theorem 3.3. The grid step is made to divide eps, so
//!   this pair is represented exactly (up to the `shift` of a few ulps).
//! - *A privacy curve* delta(eps) of a symmetric pair (an upper bound from an accountant) is
//!   turned into a dominating pair by "connect the dots" (Doroshenko, Ghazi, Kamath, Kumar,
//!   Manurangsi, "Connect the Dots: Tighter Discrete Approximations of Privacy Loss
//!   Distributions", PoPETs 2022): atoms on the grid chosen top-down so that the PLD's curve
//!   passes through (or above) the given values at every grid point; between grid points the
//!   PLD's curve is linear in e^eps and the true one convex, so it stays above.
//! - *Operations that only raise delta* under any further convolution: moving mass to a
//!   larger loss (tail truncation: the lower tail onto the first kept point, the upper tail
//!   to +infinity), adding mass (every rounding of a mass is upward), and the connect-the-dots
//!   split of an atom between its two neighbouring coarse grid points (a mean-preserving spread
//!   of e^L under Q; the integrand q (e^l - e^(eps - L'))_+ is convex in e^l), used to coarsen
//!   the grid 2:1 when the support outgrows `max_len`.
//! - *Floating point*: convolutions are computed directly (sums of products of nonnegative
//!   numbers), so every computed mass is within a relative factor (1 + gamma_len) of the exact
//!   convolution of the computed inputs; the factors are carried in `rel_err` and applied when
//!   delta is evaluated. (An FFT would be faster per step, but its error is absolute, about
//!   u log N times the largest mass, which after k-fold composition is of the order of the
//!   deltas one asks about; capping the support at `max_len` keeps the direct O(len^2) cheap.)
//!
//! Self-composition is by repeated squaring (O(log k) convolutions), so k = 1e9 is as cheap
//! as k = 1e3; the grid step is chosen automatically (coarsened 2:1 whenever the support would
//! exceed `max_len` points), so no option is needed for a large k.

use super::CompositionError;
use crate::accounting::binomial::ln_pmf;
use crate::accounting::clones::{smallest_eps, CloneReduction};
use crate::accounting::{CurveAccountant, LocalRandomizer, Method, PrivacyCurve};
use crate::params::NumUsers;
use rayon::prelude::*;

const U: f64 = f64::EPSILON;

/// Default cap on the number of grid points of a composed PLD.
pub const DEFAULT_MAX_LEN: usize = 2048;
/// Mass below which a tail of a composed PLD is truncated (moved up: lower tail onto the
/// first kept point, upper tail to +infinity).
pub const TAIL_MASS: f64 = 1e-30;
/// Default number of grid steps over [0, top] when a PLD is built from a privacy curve.
pub const CURVE_STEPS: usize = 400;

/// A discretized privacy-loss distribution (see the module docs).
#[derive(Debug, Clone)]
pub struct Pld {
    /// Grid step of the loss.
    pub h: f64,
    /// Grid index of `mass[0]`.
    pub offset: i64,
    /// Computed P-mass per grid point; the dominating measure's masses are at most
    /// `mass[i] (1 + rel_err)`.
    pub mass: Vec<f64>,
    /// P-mass at +infinity (an upper bound).
    pub inf_mass: f64,
    /// Relative floating-point error bound of `mass`.
    pub rel_err: f64,
    /// The loss of atom i is at most (offset + i) h + shift (covers the rounding of the grid
    /// step; 0 up to a few ulps of eps when the grid divides eps).
    pub shift: f64,
    /// Cap on the number of grid points kept when composing.
    pub max_len: usize,
    /// Stated discretization error of the coarsenings: eps read from this PLD exceeds eps of
    /// the same composition without coarsening by at most this much. (A 2:1
    /// connect-the-dots split is dominated by rounding the atom up one fine step, which
    /// raises the loss by at most the fine step h; a composition adds its factors'
    /// excesses.) A loose, rigorous bound; the realized excess is far smaller (second order).
    pub excess: f64,
}

impl Pld {
    fn check_len(len: usize) -> Result<(), CompositionError> {
        if len > 1 << 22 {
            return Err(CompositionError::Invalid(format!(
                "{len} grid points: use a larger step"
            )));
        }
        Ok(())
    }

    /// The dominating pair of an (eps, delta)-DP mechanism (module docs). `step` is the
    /// requested grid step (default eps); it is adjusted to eps / N with N = round(eps / step)
    /// so that the grid divides eps and the pair is represented exactly.
    pub fn from_epsilon_delta(
        eps: f64,
        delta: f64,
        step: Option<f64>,
    ) -> Result<Self, CompositionError> {
        if !(eps > 0.0 && eps.is_finite() && (0.0..1.0).contains(&delta)) {
            return Err(CompositionError::Invalid(format!(
                "a PLD of (eps, delta) needs eps > 0 finite and delta in [0, 1), got ({eps}, {delta})"
            )));
        }
        let step = step.unwrap_or(eps);
        if !(step > 0.0 && step.is_finite()) {
            return Err(CompositionError::Invalid(format!(
                "the PLD step must be > 0, got {step}"
            )));
        }
        let n = (eps / step).round().max(1.0);
        Self::check_len(2 * n as usize + 1)?;
        let h = eps / n;
        let ni = n as i64;
        // |n h - eps| <= ~2 ulps of eps: covered by 4 u eps.
        let shift = (n * h - eps).abs() + 4.0 * U * eps;
        let mut mass = vec![0.0; 2 * ni as usize + 1];
        let keep = 1.0 - delta;
        // (1 - delta) / (1 + e^-eps) and (1 - delta) / (1 + e^eps), rounded up.
        mass[2 * ni as usize] = keep / (1.0 + (-eps).exp()) * (1.0 + 4.0 * U);
        mass[0] = keep / (1.0 + eps.exp()) * (1.0 + 4.0 * U);
        Ok(Self {
            h,
            offset: -ni,
            mass,
            inf_mass: delta,
            rel_err: 0.0,
            shift,
            max_len: DEFAULT_MAX_LEN,
            excess: 0.0,
        })
    }

    /// A pure (eps, 0)-DP mechanism's dominating pair (randomized response), grid step `h`
    /// adjusted to divide eps (see [`Pld::from_epsilon_delta`]); an invalid step falls back
    /// to eps.
    pub fn pure(eps: f64, h: f64) -> Self {
        let step = if h > 0.0 && h.is_finite() && eps / h <= 1e6 {
            Some(h)
        } else {
            None
        };
        Self::from_epsilon_delta(eps, 0.0, step)
            .or_else(|_| Self::from_epsilon_delta(eps.abs().max(1e-300), 0.0, None))
            .unwrap_or_else(|_| Self::from_epsilon_delta(1.0, 0.0, None).expect("valid"))
    }

    /// Connect-the-dots PLD of a *symmetric* pair (one whose two directions have the same
    /// curve, as every shuffled pair here) from an upper bound `curve(eps)` on its delta for
    /// eps >= 0, on the grid j h, |j| <= ceil(top / h); the mass above the grid is
    /// curve(J h) at +infinity. For eps < 0 the symmetric pair has
    /// delta(-eps) = 1 - e^-eps (1 - delta(eps)) (D_{e^-eps}(P||Q) = 1 - e^-eps +
    /// e^-eps D_{e^eps}(Q||P)).
    pub fn from_symmetric_curve(
        curve: impl Fn(f64) -> f64 + Sync,
        top: f64,
        h: f64,
    ) -> Result<Self, CompositionError> {
        if !(h > 0.0 && h.is_finite() && top > 0.0 && top.is_finite()) {
            return Err(CompositionError::Invalid(format!(
                "connect-the-dots needs a step > 0 and top > 0, got h = {h}, top = {top}"
            )));
        }
        let jmax = (top / h).ceil() as i64;
        Self::check_len(2 * jmax as usize + 1)?;
        // Upper bounds at j h, j = 0..=J (evaluated in parallel: one accountant query each),
        // made non-increasing (the true curve is; a running minimum of upper bounds of a
        // non-increasing function is one too).
        let mut d: Vec<f64> = (0..=jmax)
            .into_par_iter()
            .map(|j| {
                let v = curve(j as f64 * h);
                if v.is_nan() {
                    1.0
                } else {
                    v.clamp(0.0, 1.0)
                }
            })
            .collect();
        let mut prev = 1.0f64;
        for v in d.iter_mut() {
            prev = prev.min(*v);
            *v = prev;
        }
        // Values at all grid points -J..=J, rounded up.
        let at = |j: i64| -> f64 {
            if j >= 0 {
                d[j as usize]
            } else {
                let e = (j as f64 * h).exp(); // e^-eps, eps = |j| h
                ((1.0 - e * (1.0 - d[(-j) as usize])) * (1.0 + 4.0 * U) + 4.0 * U).min(1.0)
            }
        };
        let len = (2 * jmax + 1) as usize;
        let mut mass = vec![0.0f64; len];
        let inf_mass = d[jmax as usize];
        // Greedy from the top: at grid point i the PLD's delta is
        // inf + sum_{j > i} p_j (1 - e^((i - j) h)); if a (rounded-down) evaluation is below
        // the target, the deficit is added at atom i + 1 (weight 1 - e^-h there).
        let w1 = -(-h).exp_m1() * (1.0 - 4.0 * U);
        for i in (-jmax..jmax).rev() {
            let mut s = 0.0;
            for j in (i + 1)..=jmax {
                let p = mass[(j + jmax) as usize];
                if p > 0.0 {
                    s += p * -(((i - j) as f64) * h).exp_m1();
                }
            }
            let have = (inf_mass + s) * (1.0 - (len as f64 + 8.0) * U);
            let want = at(i);
            if have < want {
                mass[(i + 1 + jmax) as usize] += (want - have) / w1 * (1.0 + 4.0 * U);
            }
        }
        // delta at eps -> -infinity is the total mass: make it >= 1 (the true value is <= 1,
        // and the chord from (t = 0, 1) to the first grid point is above the convex curve).
        let total: f64 = mass.iter().sum::<f64>() + inf_mass;
        let total_lo = total * (1.0 - (len as f64 + 2.0) * U);
        if total_lo < 1.0 {
            mass[0] += (1.0 - total_lo) * (1.0 + 4.0 * U);
        }
        Ok(Self {
            h,
            offset: -jmax,
            mass,
            inf_mass,
            rel_err: 0.0,
            shift: 0.0,
            max_len: DEFAULT_MAX_LEN,
            excess: 0.0,
        })
    }

    /// Connect-the-dots PLD of a shuffled randomizer from its certified curve (any
    /// [`PrivacyCurve`] of a symmetric pair, e.g. the clone pairs or the exact GRR pair). The
    /// grid covers [0, eps(1e-30)] with `step` (default: that range / [`CURVE_STEPS`]).
    pub fn from_curve(
        curve: &(dyn PrivacyCurve + Sync),
        step: Option<f64>,
    ) -> Result<Self, CompositionError> {
        let top = curve.epsilon(1e-30).max(1e-12);
        let h = step.unwrap_or(top / CURVE_STEPS as f64);
        Self::from_symmetric_curve(|e| curve.delta(e), top, h)
    }

    /// The FMT21 clone pair of a generic eps0-LDP randomizer shuffled among n users.
    pub fn fmt21(n: u64, eps0: f64, step: Option<f64>) -> Result<Self, CompositionError> {
        Self::from_curve(&CloneReduction::fmt21(n, eps0), step)
    }

    /// The stronger-clone pair (k-ary randomized response only) shuffled among n users.
    pub fn stronger_clones(n: u64, eps0: f64, step: Option<f64>) -> Result<Self, CompositionError> {
        Self::from_curve(&CloneReduction::stronger(n, eps0), step)
    }

    /// Connect-the-dots PLD of `randomizer` shuffled among n users, from the certified curve
    /// of a numerical accountant (`fmt21-numerical`, `clones-krr` or `grr-exact`: their pairs
    /// are symmetric). `variation-ratio` is refused (not certified, see `Best`).
    pub fn shuffled<A>(
        accountant: &A,
        randomizer: &LocalRandomizer,
        n: NumUsers,
        step: Option<f64>,
    ) -> Result<Self, CompositionError>
    where
        A: CurveAccountant,
        A::Curve: Sync,
    {
        if accountant.curve_method() == Method::VariationRatio {
            return Err(CompositionError::Invalid(
                "variation-ratio is not certified; use fmt21-numerical, clones-krr or grr-exact"
                    .into(),
            ));
        }
        let curve = accountant
            .curve(randomizer, n)
            .map_err(|e| CompositionError::Invalid(e.to_string()))?;
        Self::from_curve(&curve, step)
    }

    /// With a different cap on the number of grid points kept when composing.
    pub fn with_max_len(mut self, max_len: usize) -> Self {
        self.max_len = max_len.max(16);
        self
    }

    /// The k-fold self-composition: repeated squaring, each convolution followed by tail
    /// truncation and, while the support exceeds `max_len`, a 2:1 connect-the-dots
    /// coarsening of the grid.
    pub fn compose(&self, k: u64) -> Result<Self, CompositionError> {
        if k == 0 {
            return Err(CompositionError::Invalid("count must be >= 1".into()));
        }
        let mut base = self.clone();
        base.normalize();
        let mut acc: Option<Pld> = None;
        let mut k = k;
        loop {
            if k & 1 == 1 {
                acc = Some(match acc {
                    None => base.clone(),
                    Some(a) => a.convolve(&base)?,
                });
            }
            k >>= 1;
            if k == 0 {
                break;
            }
            base = base.convolve(&base)?;
        }
        Ok(acc.expect("k >= 1"))
    }

    /// The composition of two PLDs (one round of each). Their grid steps must differ by a
    /// power of two (the finer one is coarsened); otherwise `Invalid`.
    pub fn convolve(&self, other: &Pld) -> Result<Pld, CompositionError> {
        let (mut a, mut b) = (self.clone(), other.clone());
        // Bring both to the coarser grid (steps are h0 2^j for a common h0).
        while a.h < b.h * (1.0 - 1e-9) {
            a.coarsen();
        }
        while b.h < a.h * (1.0 - 1e-9) {
            b.coarsen();
        }
        if a.h != b.h {
            return Err(CompositionError::Invalid(format!(
                "PLD grids do not match: steps {} and {} (they must differ by a power of two)",
                self.h, other.h
            )));
        }
        let (la, lb) = (a.mass.len(), b.mass.len());
        let mut out = vec![0.0f64; la + lb - 1];
        for (i, &x) in a.mass.iter().enumerate() {
            if x == 0.0 {
                continue;
            }
            for (o, &y) in out[i..i + lb].iter_mut().zip(&b.mass) {
                *o += x * y;
            }
        }
        // Each output is a sum of <= min(la, lb) products: relative error <= gamma_{min + 1}.
        let terms = la.min(lb) as f64 + 1.0;
        let gamma = terms * U / (1.0 - terms * U);
        let rel_err = (1.0 + a.rel_err) * (1.0 + b.rel_err) * (1.0 + gamma) * (1.0 + 2.0 * U) - 1.0;
        // inf = 1 - (1 - a)(1 - b) = a + b (1 - a), rounded up.
        let inf_mass = ((a.inf_mass + b.inf_mass * (1.0 - a.inf_mass)) * (1.0 + 4.0 * U)).min(1.0);
        let mut r = Pld {
            h: a.h,
            offset: a.offset + b.offset,
            mass: out,
            inf_mass,
            rel_err,
            shift: a.shift + b.shift,
            max_len: a.max_len.max(b.max_len),
            excess: a.excess + b.excess,
        };
        r.normalize();
        Ok(r)
    }

    /// Tail truncation (moves mass up only), then 2:1 coarsening while too long.
    fn normalize(&mut self) {
        self.truncate_tails();
        while self.mass.len() > self.max_len {
            self.coarsen();
            self.truncate_tails();
        }
    }

    /// Lower tail (mass <= TAIL_MASS) added onto the first kept point; upper tail
    /// (mass <= TAIL_MASS) to +infinity, with its error factor. Zeros at both ends dropped.
    fn truncate_tails(&mut self) {
        let n = self.mass.len();
        let mut lo = 0;
        let mut low_mass = 0.0;
        while lo + 1 < n && low_mass + self.mass[lo] <= TAIL_MASS {
            low_mass += self.mass[lo];
            lo += 1;
        }
        let mut hi = n - 1;
        let mut high_mass = 0.0;
        while hi > lo && high_mass + self.mass[hi] <= TAIL_MASS {
            high_mass += self.mass[hi];
            hi -= 1;
        }
        if lo == 0 && hi == n - 1 {
            return;
        }
        let mut kept = self.mass[lo..=hi].to_vec();
        kept[0] += low_mass * (1.0 + (n as f64 + 2.0) * U);
        if high_mass > 0.0 {
            let moved = high_mass * (1.0 + self.rel_err) * (1.0 + (n as f64 + 4.0) * U);
            self.inf_mass = ((self.inf_mass + moved) * (1.0 + 2.0 * U)).min(1.0);
        }
        self.offset += lo as i64;
        self.mass = kept;
    }

    /// Grid step doubled: an atom at an even index stays, one at an odd index is split
    /// between its neighbours by connect-the-dots (P-masses p / (1 + e^h) below and
    /// p / (1 + e^-h) above, both rounded up), which only raises delta (module docs).
    fn coarsen(&mut self) {
        if self.offset.rem_euclid(2) != 0 {
            self.mass.insert(0, 0.0);
            self.offset -= 1;
        }
        let lo_frac = 1.0 / (1.0 + self.h.exp()) * (1.0 + 4.0 * U);
        let hi_frac = 1.0 / (1.0 + (-self.h).exp()) * (1.0 + 4.0 * U);
        let n = self.mass.len();
        let mut out = vec![0.0f64; n / 2 + 2];
        for (i, &p) in self.mass.iter().enumerate() {
            if p == 0.0 {
                continue;
            }
            if i % 2 == 0 {
                out[i / 2] += p;
            } else {
                out[i / 2] += p * lo_frac;
                out[i / 2 + 1] += p * hi_frac;
            }
        }
        // Each output is a sum of at most 3 terms: relative error <= 4 u more, kept as an
        // upward rounding of the masses.
        for v in out.iter_mut() {
            *v *= 1.0 + 4.0 * U;
        }
        while out.len() > 1 && *out.last().expect("nonempty") == 0.0 {
            out.pop();
        }
        self.offset /= 2;
        self.excess += self.h;
        self.h *= 2.0;
        self.mass = out;
    }

    /// Upper bound on delta(eps) (module docs): losses rounded up, the sum rounded up by its
    /// length, the masses by `rel_err`.
    pub fn delta(&self, eps: f64) -> f64 {
        let mut s = 0.0;
        for (i, &m) in self.mass.iter().enumerate() {
            if m == 0.0 {
                continue;
            }
            let l0 = (self.offset + i as i64) as f64 * self.h;
            let l = l0 + self.shift + 4.0 * U * (l0.abs() + self.shift);
            if l > eps {
                s += m * -(eps - l).exp_m1();
            }
        }
        let n = self.mass.len() as f64;
        let s = s * (1.0 + self.rel_err) * (1.0 + (n + 8.0) * U);
        ((self.inf_mass + s) * (1.0 + 2.0 * U)).min(1.0)
    }

    /// The largest loss on the grid (delta is `inf_mass` at and above it).
    pub fn max_loss(&self) -> f64 {
        let l0 = (self.offset + self.mass.len() as i64 - 1) as f64 * self.h;
        l0 + self.shift + 4.0 * U * (l0.abs() + self.shift)
    }

    /// Smallest eps >= 0 (1e-6 relative resolution, upper end) with delta(eps) <= delta;
    /// +infinity if the mass at +infinity alone exceeds delta.
    pub fn epsilon(&self, delta: f64) -> f64 {
        if !(self.inf_mass * (1.0 + 4.0 * U) < delta) {
            return f64::INFINITY;
        }
        let hi = self.max_loss().max(0.0);
        smallest_eps(|e| self.delta(e), 0.0, hi, delta)
    }
}

/// ln of a Bin(n, p) pmf, re-exported for callers building their own PLDs.
pub fn ln_binomial(x: u64, n: u64, p: f64) -> f64 {
    ln_pmf(x, n, p, 1.0 - p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounting::composition::kov_epsilon;

    #[test]
    fn single_round_is_above_the_exact_curve() {
        let cr = CloneReduction::fmt21(10_000, 2.0);
        let pld = Pld::fmt21(10_000, 2.0, None).unwrap();
        for &e in &[0.0, 0.01, 0.05, 0.1, 0.2, 0.3] {
            let a = pld.delta(e);
            let b = cr.delta(e);
            assert!(a >= b, "{e}: {a} {b}");
            assert!(a <= b * 1.05 + 1e-30, "{e}: {a} {b}");
        }
    }

    #[test]
    fn pair_is_exact_and_composes_to_kov() {
        // One round: delta(eps') of the (eps, delta) pair = delta + (1 - delta) *
        // max(0, p - e^eps' (1 - p)) ... at eps' = 0: (1 - delta)(e^eps - 1)/(e^eps + 1).
        let (eps, d) = (0.5f64, 1e-7);
        let p = Pld::from_epsilon_delta(eps, d, None).unwrap();
        let exact = d + (1.0 - d) * eps.exp_m1() / (eps.exp() + 1.0);
        assert!(p.delta(0.0) >= exact && p.delta(0.0) <= exact * (1.0 + 1e-12));
        // k-fold: KOV exact (no coarsening needed at this size: only rounding apart).
        for &(eps, d, k, total) in &[
            (0.1, 0.0, 100u64, 1e-6),
            (0.05, 0.0, 1000, 1e-6),
            (0.1, 1e-9, 200, 1e-5),
            (0.01, 0.0, 5000, 1e-10),
        ] {
            let pld = Pld::from_epsilon_delta(eps, d, None)
                .unwrap()
                .compose(k)
                .unwrap();
            let e = pld.epsilon(total);
            let kov = kov_epsilon(eps, d, k, total).unwrap();
            assert!(
                e >= kov * (1.0 - 2e-6) && e <= kov * (1.0 + 1e-5),
                "eps = {eps}, k = {k}: pld {e}, kov {kov}"
            );
        }
    }

    #[test]
    fn many_rounds_stay_within_one_percent_of_kov() {
        // coarsened grids: within 1% of KOV, never below it.
        for &(eps, k, total) in &[(0.1, 100_000u64, 1e-10), (0.001, 1_000_000_000, 1e-10)] {
            let pld = Pld::from_epsilon_delta(eps, 0.0, None)
                .unwrap()
                .compose(k)
                .unwrap();
            let e = pld.epsilon(total);
            let kov = kov_epsilon(eps, 0.0, k, total).unwrap();
            assert!(
                e >= kov * (1.0 - 2e-6) && e <= kov * 1.01,
                "eps = {eps}, k = {k}: pld {e}, kov {kov}"
            );
            // the stated discretization error holds (1e-6: the bisections' resolution)
            assert!(
                e <= (kov + pld.shift + pld.excess) * (1.0 + 2e-6),
                "{e} {kov} {} {}",
                pld.shift,
                pld.excess
            );
        }
    }

    #[test]
    fn coarsening_and_convolution_only_raise_delta() {
        let p = Pld::stronger_clones(10_000, 1.0, None).unwrap();
        let mut c = p.clone();
        c.coarsen();
        let two = p.convolve(&p).unwrap();
        assert!(p.convolve(&Pld::pure(0.123, 0.01)).is_err());
        let mut two_c = two.clone();
        two_c.coarsen();
        // Equal in exact arithmetic where the curve is linear between coarse points; the
        // evaluation's own rounding allowance depends on the length, hence the 1e-12.
        for &e in &[0.0, 0.02, 0.05, 0.1] {
            assert!(c.delta(e) >= p.delta(e) * (1.0 - 1e-12), "{e}");
            assert!(two_c.delta(e) >= two.delta(e) * (1.0 - 1e-12), "{e}");
        }
    }

    /// Connect-the-dots from a curve, on a grid that does not divide eps: the curve of
    /// randomized response RR(eps), delta(e) = (e^eps - e^e) / (1 + e^eps) for e < eps, is
    /// the exact curve of the worst (eps, 0)-DP pair, so its composition must stay at or
    /// above KOV exact (soundness) and close to it (tightness of the dots).
    #[test]
    fn curve_of_randomized_response_composes_above_kov() {
        let eps = 0.1f64;
        let rr = |e: f64| {
            if e >= eps {
                0.0
            } else {
                (eps.exp() - e.exp()) / (1.0 + eps.exp())
            }
        };
        for &step in &[eps / 7.3, eps / 40.0, eps / 3.0] {
            let single = Pld::from_symmetric_curve(rr, eps, step).unwrap();
            for &e in &[0.0, 0.013, 0.05, 0.099] {
                assert!(single.delta(e) >= rr(e), "step {step}, eps {e}");
            }
            for &(k, total) in &[(100u64, 1e-6), (10_000, 1e-10)] {
                let got = single.compose(k).unwrap().epsilon(total);
                let kov = kov_epsilon(eps, 0.0, k, total).unwrap();
                assert!(
                    got >= kov * (1.0 - 2e-6) && got <= kov * 1.05,
                    "step {step}, k = {k}: {got} vs KOV {kov}"
                );
            }
        }
    }

    #[test]
    fn composed_shuffle_curve_beats_kov() {
        // k-RR (k = 2), eps0 = 1, n = 1e5, 1000 rounds, delta = 1e-8.
        let (n, eps0, k, delta) = (100_000u64, 1.0, 1000u64, 1e-8);
        let cr = CloneReduction::stronger(n, eps0);
        let r = LocalRandomizer::krr(crate::params::DomainSize::new(2).unwrap(), eps0);
        let nu = NumUsers::new(n).unwrap();
        let via_api = Pld::shuffled(&crate::accounting::StrongerClones, &r, nu, None).unwrap();
        assert!(Pld::shuffled(&crate::accounting::VariationRatio, &r, nu, None).is_err());
        let pld = via_api.compose(k).unwrap();
        let e_pld = pld.epsilon(delta);
        // KOV of the per-round (eps1, delta / (2k)) guarantee, best split would be lower
        // only marginally; PLD must beat it clearly.
        let d1 = delta / (2.0 * k as f64);
        let eps1 = cr.epsilon(d1);
        let kov = kov_epsilon(eps1, d1, k, delta).unwrap();
        assert!(e_pld < kov, "{e_pld} {kov}");
    }
}
