//! Binomial probabilities in log space, accurate to a few ulps in relative terms, and the
//! "Mills ratio" R = F(x) / b(x) of a lower tail, the building blocks of the numerical
//! accountants.
//!
//! The pmf uses Loader's saddle-point algorithm (C. Loader, "Fast and Accurate Computation of
//! Binomial Probabilities", 2000; the algorithm behind R's `dbinom`): Stirling-series errors
//! and the deviance `bd0` are computed without cancellation, so `ln b(x)` has a small
//! *absolute* error even for n = 1e8, where differences of `lgamma` values lose 6 digits.
//!
//! A [`Window`] holds the pmf of Bin(n, p) over an interval around the mean plus rigorous
//! upper bounds on the mass outside it (geometric bounds from the monotone pmf ratio).
//! [`MillsRatio`] brackets R(c, x) for Bin(c, 1/2) and moves it along c and x with
//! recurrences that are contracting in the direction used (c decreasing, x increasing);
//! both ends are rounded outward at every step.

/// Relative widening applied at each recurrence step: covers the <= 3 rounded operations of
/// one step (each within half an ulp) with a margin.
const STEP_WIDEN: f64 = 4.0 * f64::EPSILON;

/// stirlerr(n) = ln(n!) - ln(sqrt(2 pi n) (n/e)^n) for n = 0..=15 (computed to 20 digits
/// with 40-digit arithmetic).
const STIRLERR_SMALL: [f64; 16] = [
    0.0,
    0.081_061_466_795_327_258,
    0.041_340_695_955_409_294,
    0.027_677_925_684_998_339,
    0.020_790_672_103_765_093,
    0.016_644_691_189_821_192,
    0.013_876_128_823_070_748,
    0.011_896_709_945_891_770,
    0.010_411_265_261_972_096,
    0.009_255_462_182_712_733,
    0.008_330_563_433_362_871,
    0.007_573_675_487_951_841,
    0.006_942_840_107_209_530,
    0.006_408_994_188_004_207,
    0.005_951_370_112_758_848,
    0.005_554_733_551_962_801,
];

/// Stirling-series error stirlerr(n) = ln(n!) - (n + 1/2) ln n + n - ln(2 pi)/2, integer n.
pub fn stirlerr(n: u64) -> f64 {
    const S0: f64 = 1.0 / 12.0;
    const S1: f64 = 1.0 / 360.0;
    const S2: f64 = 1.0 / 1260.0;
    const S3: f64 = 1.0 / 1680.0;
    const S4: f64 = 1.0 / 1188.0;
    if n <= 15 {
        return STIRLERR_SMALL[n as usize];
    }
    let nf = n as f64;
    let nn = nf * nf;
    if n > 500 {
        (S0 - S1 / nn) / nf
    } else if n > 80 {
        (S0 - (S1 - S2 / nn) / nn) / nf
    } else if n > 35 {
        (S0 - (S1 - (S2 - S3 / nn) / nn) / nn) / nf
    } else {
        (S0 - (S1 - (S2 - (S3 - S4 / nn) / nn) / nn) / nn) / nf
    }
}

/// Deviance term bd0(x, np) = x ln(x / np) + np - x, without cancellation near x = np.
pub fn bd0(x: f64, np: f64) -> f64 {
    if (x - np).abs() < 0.1 * (x + np) {
        let mut v = (x - np) / (x + np);
        let mut s = (x - np) * v;
        let mut ej = 2.0 * x * v;
        v *= v;
        for j in 1..1000 {
            ej *= v;
            let s1 = s + ej / f64::from(2 * j + 1);
            if s1 == s {
                return s1;
            }
            s = s1;
        }
        s
    } else {
        x * (x / np).ln() + np - x
    }
}

/// ln Pr[Bin(n, p) = x], with q = 1 - p passed separately (so that q is exact when the caller
/// knows it better, e.g. q = -expm1(-eps0)). Returns -inf outside 0..=n or for impossible x.
pub fn ln_pmf(x: u64, n: u64, p: f64, q: f64) -> f64 {
    if x > n {
        return f64::NEG_INFINITY;
    }
    if p == 0.0 {
        return if x == 0 { 0.0 } else { f64::NEG_INFINITY };
    }
    if q == 0.0 {
        return if x == n { 0.0 } else { f64::NEG_INFINITY };
    }
    let nf = n as f64;
    if x == 0 {
        return nf * if p < 0.5 { (-p).ln_1p() } else { q.ln() };
    }
    if x == n {
        return nf * if q < 0.5 { (-q).ln_1p() } else { p.ln() };
    }
    let xf = x as f64;
    let lc = stirlerr(n) - stirlerr(x) - stirlerr(n - x) - bd0(xf, nf * p) - bd0(nf - xf, nf * q);
    let lf = (2.0 * core::f64::consts::PI).ln() + xf.ln() + (-xf / nf).ln_1p();
    lc - 0.5 * lf
}

/// ln Pr[Bin(c, 1/2) = x].
#[inline]
pub fn ln_pmf_half(x: u64, c: u64) -> f64 {
    ln_pmf(x, c, 0.5, 0.5)
}

/// Bin(n, p) over the window [lo, hi] around its mean, with rigorous bounds on the mass
/// outside it.
#[derive(Debug, Clone)]
pub struct Window {
    /// First count in the window.
    pub lo: u64,
    /// Last count in the window.
    pub hi: u64,
    /// ln Pr[X = lo + i].
    pub ln_pmf: Vec<f64>,
    /// Upper bound on Pr[X < lo].
    pub below: f64,
    /// Upper bound on Pr[X > hi].
    pub above: f64,
}

impl Window {
    /// The window of Bin(n, p) (q = 1 - p) whose outside mass is at most about `tail` on each
    /// side (the bounds actually reported are rigorous whatever `tail` is).
    pub fn new(n: u64, p: f64, q: f64, tail: f64) -> Self {
        let (lo, hi) = window_range(n, p, q, tail);
        let ln_pmf: Vec<f64> = (lo..=hi).map(|x| ln_pmf(x, n, p, q)).collect();
        let (below, above) = tail_bounds(n, p, q, lo, hi);
        Self {
            lo,
            hi,
            ln_pmf,
            below,
            above,
        }
    }

    /// ln Pr[X = x] for x inside the window, -inf outside.
    #[inline]
    pub fn ln_at(&self, x: u64) -> f64 {
        if x < self.lo || x > self.hi {
            f64::NEG_INFINITY
        } else {
            self.ln_pmf[(x - self.lo) as usize]
        }
    }
}

fn ln_pmf_at(n: u64, p: f64, q: f64, x: u64) -> f64 {
    ln_pmf(x, n, p, q)
}

/// The interval [lo, hi] of Bin(n, p) (q = 1 - p) around its mean whose outside mass is
/// at most about `tail` on each side: mean +- (sqrt(2 ln(1/tail)) + 2) sd, widened by 2, then
/// widened further while the rigorous bound of [`tail_bounds`] on a side exceeds `tail` (the
/// normal approximation is far too narrow for skewed, small-mean binomials: Bin(1e5, 2e-6)
/// has Pr[X > 7] ~ 6e-11, not 1e-16).
pub fn window_range(n: u64, p: f64, q: f64, tail: f64) -> (u64, u64) {
    let nf = n as f64;
    let mean = nf * p;
    let sd = (nf * p * q).sqrt();
    let k = (2.0 * (1.0 / tail).ln()).sqrt() + 2.0;
    let mut lo = (mean - k * sd - 2.0).floor().max(0.0) as u64;
    let mut hi = ((mean + k * sd + 2.0).ceil() as u64).min(n).max(lo);
    let mut step = 1 + (hi - lo) / 8;
    for _ in 0..64 {
        let (below, above) = tail_bounds(n, p, q, lo, hi);
        let mut widened = false;
        if above > tail && hi < n {
            hi = hi.saturating_add(step).min(n);
            widened = true;
        }
        if below > tail && lo > 0 {
            lo = lo.saturating_sub(step);
            widened = true;
        }
        if !widened {
            break;
        }
        step = step.saturating_mul(2);
    }
    (lo, hi)
}

/// Rigorous upper bounds (Pr[X < lo], Pr[X > hi]) for X ~ Bin(n, p), q = 1 - p: geometric
/// bounds from the monotone pmf ratio (1 where the ratio is not below 1, i.e. when the
/// interval does not contain the mode).
pub fn tail_bounds(n: u64, p: f64, q: f64, lo: u64, hi: u64) -> (f64, f64) {
    let nf = n as f64;
    let below = if lo == 0 {
        0.0
    } else {
        // Pr[X = x - 1] / Pr[X = x] = x q / ((n - x + 1) p) decreases as x decreases, so
        // Pr[X < lo] <= Pr[X = lo - 1] / (1 - rho) with rho the ratio at x = lo - 1.
        let x = lo - 1;
        let rho = (x as f64 * q) / ((nf - x as f64 + 1.0) * p);
        geometric_bound(ln_pmf_at(n, p, q, x), rho)
    };
    let above = if hi >= n {
        0.0
    } else {
        let x = hi + 1;
        let rho = ((nf - x as f64) * p) / ((x as f64 + 1.0) * q);
        geometric_bound(ln_pmf_at(n, p, q, x), rho)
    };
    (below, above)
}

/// Upper bound on sum_{j >= 0} e^{ln_first} rho^j (1 if rho >= 1), rounded up.
fn geometric_bound(ln_first: f64, rho: f64) -> f64 {
    if !(rho < 1.0) {
        return 1.0;
    }
    let v = ln_first.exp() / (1.0 - rho);
    (v * (1.0 + 1e-12)).min(1.0)
}

/// e^x rounded up, counting anything below e^-700 as 1e-300 (a true upper bound), so that
/// underflow never rounds a delta contribution down to zero.
#[inline]
pub fn exp_up(x: f64) -> f64 {
    if x < -700.0 {
        if x == f64::NEG_INFINITY {
            0.0
        } else {
            1e-300
        }
    } else {
        x.exp() * (1.0 + 4.0 * f64::EPSILON)
    }
}

/// Bracket [lo, hi] of the lower-tail Mills ratio R(c, x) = Pr[Bin(c,1/2) <= x] /
/// Pr[Bin(c,1/2) = x] at a point (c, x), 0 <= x <= c.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MillsRatio {
    /// Number of trials.
    pub c: u64,
    /// The point.
    pub x: u64,
    /// Lower bound on R.
    pub lo: f64,
    /// Upper bound on R.
    pub hi: f64,
}

impl MillsRatio {
    /// Direct computation: the lower tail summed downward (x < c/2, ratios < 1) or through
    /// the upper tail (x >= c/2), to full precision, with a geometric bound on what is left.
    pub fn direct(c: u64, x: u64) -> Self {
        debug_assert!(x <= c);
        if x == c {
            // F = 1; R = 1 / b = 2^c: infinite for our purposes beyond f64, so cap.
            return if c < 1000 {
                let r = 2f64.powi(c as i32);
                Self { c, x, lo: r, hi: r }
            } else {
                Self {
                    c,
                    x,
                    lo: f64::MAX,
                    hi: f64::INFINITY,
                }
            };
        }
        let cf = c as f64;
        if 2 * x < c {
            // R = sum_{j>=0} b(x-j)/b(x); term ratio (x-j)/(c-x+j+1) decreasing in j.
            let mut sum = 1.0f64;
            let mut term = 1.0f64;
            let mut j = x;
            let mut tail = 0.0;
            while j > 0 {
                let ratio = j as f64 / (cf - j as f64 + 1.0);
                term *= ratio;
                sum += term;
                j -= 1;
                if term < sum * 1e-18 {
                    // remaining terms <= term * ratio' / (1 - ratio') with ratio' <= ratio
                    let r2 = j as f64 / (cf - j as f64 + 1.0);
                    tail = if j == 0 { 0.0 } else { term * r2 / (1.0 - r2) };
                    break;
                }
            }
            let n_ops = (x - j + 1) as f64;
            let err = n_ops * 2.0 * f64::EPSILON;
            Self {
                c,
                x,
                lo: (sum * (1.0 - err)).max(1.0),
                hi: (sum + tail) * (1.0 + err),
            }
        } else {
            // F(x) = 1 - U where U = Pr[Bin > x] = b(x) * sum_{j>=1} b(x+j)/b(x).
            let mut sum = 0.0f64;
            let mut term = 1.0f64;
            let mut j = x;
            let mut tail = 0.0;
            while j < c {
                let ratio = (cf - j as f64) / (j as f64 + 1.0);
                term *= ratio;
                sum += term;
                j += 1;
                if term < sum * 1e-18 {
                    let r2 = (cf - j as f64) / (j as f64 + 1.0);
                    tail = if j >= c { 0.0 } else { term * r2 / (1.0 - r2) };
                    break;
                }
            }
            let err = (j - x + 1) as f64 * 2.0 * f64::EPSILON;
            let ln_b = ln_pmf_half(x, c);
            // R = (1 - b * U) / b = 1/b - U.
            let inv_b = (-ln_b).exp();
            let u_lo = sum * (1.0 - err);
            let u_hi = (sum + tail) * (1.0 + err);
            let lo =
                ((inv_b * (1.0 - 4.0 * f64::EPSILON) - u_hi) * (1.0 - 4.0 * f64::EPSILON)).max(1.0);
            let hi = (inv_b * (1.0 + 4.0 * f64::EPSILON) - u_lo) * (1.0 + 4.0 * f64::EPSILON);
            Self {
                c,
                x,
                lo,
                hi: hi.max(lo),
            }
        }
    }

    /// R(c - 1, x) from R(c, x): R' = 1/2 + R c / (2 (c - x)). Needs x < c.
    #[inline]
    pub fn dec_c(&mut self) {
        debug_assert!(self.x < self.c);
        let f = self.c as f64 / (2.0 * (self.c - self.x) as f64);
        self.lo = ((0.5 + self.lo * f) * (1.0 - STEP_WIDEN)).max(1.0);
        self.hi = (0.5 + self.hi * f) * (1.0 + STEP_WIDEN);
        self.c -= 1;
    }

    /// R(c, x - 1) from R(c, x): R' = (R - 1)(c - x + 1) / x. Needs x >= 1.
    #[inline]
    pub fn dec_x(&mut self) {
        debug_assert!(self.x >= 1);
        let f = (self.c - self.x + 1) as f64 / self.x as f64;
        self.lo = (((self.lo - 1.0) * f) * (1.0 - STEP_WIDEN)).max(1.0);
        self.hi = ((self.hi - 1.0) * f) * (1.0 + STEP_WIDEN);
        self.x -= 1;
        if self.hi < self.lo {
            self.hi = self.lo;
        }
    }

    /// R(c, x + 1) from R(c, x): R' = 1 + R (x + 1) / (c - x). Needs x < c.
    #[inline]
    pub fn inc_x(&mut self) {
        debug_assert!(self.x < self.c);
        let f = (self.x + 1) as f64 / (self.c - self.x) as f64;
        self.lo = ((1.0 + self.lo * f) * (1.0 - STEP_WIDEN)).max(1.0);
        self.hi = (1.0 + self.hi * f) * (1.0 + STEP_WIDEN);
        self.x += 1;
    }

    /// Moves to (c, x) with c <= self.c, using the recurrences when the move is short and
    /// the relative width stays small, a direct computation otherwise.
    pub fn move_to(&mut self, c: u64, x: u64) {
        let ok_recur = c <= self.c
            && self.c - c <= 4
            && x < c
            && x + 4 >= self.x
            && x <= self.x + 4
            && self.x < self.c;
        if ok_recur {
            while self.c > c {
                if self.x >= self.c - 1 {
                    *self = Self::direct(c, x);
                    return;
                }
                self.dec_c();
            }
            while self.x > x {
                self.dec_x();
            }
            while self.x < x {
                self.inc_x();
            }
            // A bracket that widened (unstable x-steps) is recomputed. The allowance is at
            // least twice the width a direct computation itself leaves (about 18 u sqrt(c):
            // ~4.6 sqrt(c) summed terms at 2 ulps each, on both ends), else at c ~ 1e12 every
            // step would recompute directly (4.6e6 terms each) and one delta would take
            // minutes. Any width is still a rigorous bracket; only the tightness changes.
            let allowance = 1e-9f64.max(40.0 * f64::EPSILON * (c as f64).sqrt());
            if self.hi > self.lo * (1.0 + allowance) {
                *self = Self::direct(c, x);
            }
        } else {
            *self = Self::direct(c, x);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ln_pmf_naive(x: u64, n: u64, p: f64) -> f64 {
        // sum of logs: exact enough for small n
        let mut l = 0.0;
        for i in 1..=n {
            l += (i as f64).ln();
        }
        for i in 1..=x {
            l -= (i as f64).ln();
        }
        for i in 1..=(n - x) {
            l -= (i as f64).ln();
        }
        l + x as f64 * p.ln() + (n - x) as f64 * (1.0 - p).ln()
    }

    #[test]
    fn pmf_matches_naive_and_sums_to_one() {
        for &(n, p) in &[(10u64, 0.5), (37, 0.3), (200, 0.01), (1000, 0.9)] {
            let mut total = 0.0;
            for x in 0..=n {
                let a = ln_pmf(x, n, p, 1.0 - p);
                let b = ln_pmf_naive(x, n, p);
                assert!(
                    (a - b).abs() < 1e-10 * (1.0 + b.abs()),
                    "{n} {p} {x}: {a} {b}"
                );
                total += a.exp();
            }
            assert!((total - 1.0).abs() < 1e-12, "{total}");
        }
        // Large n: the pmf at the mean of Bin(1e8, 1/2) is ~ sqrt(2 / (pi n)).
        let v = ln_pmf_half(50_000_000, 100_000_000).exp();
        let approx = (2.0 / (core::f64::consts::PI * 1e8)).sqrt();
        assert!((v / approx - 1.0).abs() < 1e-8);
    }

    #[test]
    fn window_tails_are_bounds() {
        let w = Window::new(1000, 0.3, 0.7, 1e-6);
        let mut below = 0.0;
        for x in 0..w.lo {
            below += ln_pmf(x, 1000, 0.3, 0.7).exp();
        }
        let mut above = 0.0;
        for x in w.hi + 1..=1000 {
            above += ln_pmf(x, 1000, 0.3, 0.7).exp();
        }
        assert!(w.below >= below && w.below < 1e-5, "{} {below}", w.below);
        assert!(w.above >= above && w.above < 1e-5, "{} {above}", w.above);
    }

    #[test]
    fn skewed_windows_are_widened_to_their_tail() {
        // Bin(1e5, 2e-6): the normal-approximation window would leave ~6e-11 above.
        let (lo, hi) = window_range(100_000, 2e-6, 1.0 - 2e-6, 1e-16);
        let (below, above) = tail_bounds(100_000, 2e-6, 1.0 - 2e-6, lo, hi);
        assert!(
            below <= 1e-16 && above <= 1e-16,
            "{lo} {hi} {below} {above}"
        );
        assert!(hi < 40, "{hi}");
    }

    #[test]
    fn mills_ratio_recurrences_bracket_the_truth() {
        let truth = |c: u64, x: u64| {
            let f: f64 = (0..=x).map(|j| ln_pmf_half(j, c).exp()).sum();
            f / ln_pmf_half(x, c).exp()
        };
        for &(c, x) in &[(10u64, 3u64), (200, 80), (200, 120), (1000, 470), (50, 0)] {
            let m = MillsRatio::direct(c, x);
            let t = truth(c, x);
            assert!(
                m.lo <= t * (1.0 + 1e-13) && m.hi >= t * (1.0 - 1e-13),
                "{c} {x}: {m:?} {t}"
            );
            assert!(m.hi / m.lo - 1.0 < 1e-12);
        }
        // Walk down a ray from c = 2000 to 1000 along x = 0.4 c.
        let mut m = MillsRatio::direct(2000, 799);
        for c in (1000..2000).rev() {
            let x = (0.4 * (c as f64 + 1.0)).ceil() as u64 - 1;
            m.move_to(c, x);
            if c % 97 == 0 {
                let t = truth(c, x);
                assert!(
                    m.lo <= t * (1.0 + 1e-12) && m.hi >= t * (1.0 - 1e-12),
                    "{c} {x}: {m:?} {t}"
                );
                assert!(m.hi / m.lo - 1.0 < 1e-10);
            }
        }
    }
}
