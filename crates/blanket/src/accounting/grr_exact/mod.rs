//! Exact blanket divergence of the shuffled privacy-blanket randomizer GRR(m, gamma)
//! (derived in spec 03 and docs/accounting.md; the blanket decomposition is Balle, Bell,
//! Gascon, Nissim, CRYPTO 2019, Section 3).
//!
//! Neighbours differ in the target's input (a vs b). Revealing to the analyzer which of the
//! other n - 1 users sent a blanket message is a post-processing in reverse (more
//! information), so the result is an upper bound. With B ~ Bin(n - 1, gamma) blanket users and
//! N = B + 1, the view reduces to the counts (h_a, h_b) among the N blanket-or-target
//! messages, with base = the (a, b) marginal of Multinomial(N, uniform on m):
//!   P_a(h) = base(h) (m/N) ((1 - gamma) h_a + gamma N / m),
//!   delta(eps) = E_B[ D(B) ],  D(B) = (m/N) E_base[ max(0, (1 - gamma)(h_a - e^eps h_b) - K) ],
//!   K = (e^eps - 1) gamma N / m.
//! With s = h_a + h_b ~ Bin(N, 2/m) and x = h_b ~ Bin(s, 1/2) given s, the inner term is a
//! lower-tail sum over x < tau_s = (s - K/(1 - gamma))/(1 + e^eps) (a binomial tail and a
//! partial mean) and equals
//!   b_s(X) [ R ((1 - gamma) s (1 - e^eps)/2 - K) + (1 - gamma)(1 + e^eps)(s - X)/2 ]
//! (R the lower-tail Mills ratio; negative coefficient, so R's lower bound is used).
//!
//! How it is computed (fast and still an upper bound):
//! - D(B) for one B: one sweep over the s-window of Bin(N, 2/m), s decreasing. The sum
//!   ln Pr[S = s] + ln b_s(X_s) is carried by the pmf ratio recurrences (one `ln` per s, re-anchored with
//!   Loader's pmf every [`ANCHOR`] steps, its accumulated rounding covered by adding
//!   [`LN_SLACK`] before exponentiating), R by the contracting Mills-ratio recurrences
//!   ([`MillsRatio`]), and each s costs O(1). The mass of s outside the window counts m times
//!   its probability (P_a <= m base).
//! - Over B: D(B) is non-increasing in B (one more blanket user adds an independent uniform
//!   message: post-processing), so for B-points b_0 = lo < b_1 < ... < b_J = hi,
//!   sum_b Pr[B = b] D(b) <= sum_i D(b_i) Pr[b_i <= B < b_{i+1}] + D(hi) Pr[B = hi]. The points
//!   are chosen adaptively (split the block with the largest gap D(b_i) - D(b_{i+1}) times its
//!   mass) until the gap is at most [`PLAN_GAP`] of the total; the mass of B outside the
//!   window counts as delta 1.
//! - Windows: both tail masses are targeted at about 1e-4 of the target delta (per side;
//!   bounded rigorously whatever they turn out to be).
//! - epsilon(delta): a coarse root with a fixed small set of B-points (a certified bound in
//!   itself), then the points refined there and a bracketing secant (Illinois) search with
//!   the refined points fixed, so the function searched is smooth; the accepted (upper) end
//!   is returned. min_gamma bisects gamma on delta(target eps) the same way; its answer
//!   (accepted with B-points carried over from a nearby gamma, a valid bound but not the one
//!   [`GrrPair::certifies`] computes) is then raised until `certifies` accepts it (see the
//!   `CurveAccountant` impl of `ShuffleAccountant::min_gamma`), so the calibrator's check at
//!   the target accepts the gamma it was given.

use super::binomial::{exp_up, ln_pmf, ln_pmf_half, tail_bounds, window_range, MillsRatio, Window};
use super::clones::FINAL_MARGIN;
use super::{
    checked_eps0, grr_params, round_up, AccountingError, CurveAccountant, LocalRandomizer, Method,
    PrivacyCurve, MAX_EPS0,
};
use crate::params::{Delta, DomainSize, Epsilon, NumUsers};

/// Pmf recurrences are re-anchored with Loader's pmf every this many steps.
const ANCHOR: u32 = 256;
/// Added to a recurrence-carried log-probability before exponentiating: covers the rounding
/// of up to [`ANCHOR`] recurrence steps (each well below 1e-13 in absolute log terms).
const LN_SLACK: f64 = 1e-10;
/// Relative gap (upper block bound minus lower block bound, over upper) at which the B-points
/// stop being refined: the block bound exceeds the full B-sum by at most about this fraction.
pub const PLAN_GAP: f64 = 2e-3;
/// [`PLAN_GAP`] for m = 2, where one D(B) costs O(1) (s = N: no s-window), so the points can
/// be refined 20 times further at no real cost; the result then matches the stronger-clone
/// engine (the same pair summed over every B) to 1e-4 relative in eps.
pub const PLAN_GAP_M2: f64 = 1e-4;
/// At most this many B-points.
const MAX_POINTS: usize = 400;
/// [`MAX_POINTS`] for m = 2.
const MAX_POINTS_M2: usize = 4000;
/// Standardized positions (in standard deviations of B) of the initial B-points, besides the
/// ends of the window.
const STD_Z: [f64; 6] = [-3.0, -1.5, -0.5, 0.5, 1.5, 3.0];
/// At most this many rounds of (coarse root, refine the B-points there) in epsilon(delta).
const COARSE_ROUNDS: usize = 6;
/// Relative resolution of epsilon(delta).
const EPS_RESOLUTION: f64 = 1e-6;
/// Relative resolution of min_gamma.
const GAMMA_RESOLUTION: f64 = 1e-8;
/// One ulp-scale relative rounding allowance for a few operations.
const U4: f64 = 4.0 * f64::EPSILON;

/// The B-distribution over its window: pmf values (rounded up) and the outside mass.
#[derive(Debug, Clone)]
struct BGrid {
    lo: u64,
    hi: u64,
    mean: f64,
    sd: f64,
    pmf: Vec<f64>,
    tails: f64,
}

impl BGrid {
    fn new(n1: u64, gamma: f64, tail: f64) -> Self {
        let w = Window::new(n1, gamma, 1.0 - gamma, tail);
        let nf = n1 as f64;
        Self {
            lo: w.lo,
            hi: w.hi,
            mean: nf * gamma,
            sd: (nf * gamma * (1.0 - gamma)).sqrt(),
            pmf: w.ln_pmf.iter().map(|&l| exp_up(l)).collect(),
            tails: w.below + w.above,
        }
    }

    /// Pr[a <= B < b] (a < b inside the window), rounded up.
    fn mass(&self, a: u64, b: u64) -> f64 {
        let s: f64 = self.pmf[(a - self.lo) as usize..(b - self.lo) as usize]
            .iter()
            .sum();
        s * (1.0 + (b - a) as f64 * 2.0 * f64::EPSILON)
    }

    /// The B-points at standardized positions `zs`, plus the window's ends, sorted, distinct.
    fn points(&self, zs: &[f64]) -> Vec<u64> {
        let mut v = vec![self.lo, self.hi];
        for &z in zs {
            let b = (self.mean + z * self.sd).round();
            if b.is_finite() {
                v.push((b.max(0.0) as u64).clamp(self.lo, self.hi));
            }
        }
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Standardized positions of interior points (for reuse at a nearby gamma).
    fn to_z(&self, pts: &[u64]) -> Vec<f64> {
        let sd = self.sd.max(1e-300);
        pts.iter()
            .filter(|&&b| b != self.lo && b != self.hi)
            .map(|&b| (b as f64 - self.mean) / sd)
            .collect()
    }

    /// Block masses for the points: [p_i, p_{i+1}) and the last point alone.
    fn masses(&self, pts: &[u64]) -> Vec<f64> {
        let mut w: Vec<f64> = pts.windows(2).map(|p| self.mass(p[0], p[1])).collect();
        w.push(self.pmf[(self.hi - self.lo) as usize]);
        w
    }
}

/// Upper bound from block values: ((sum d_i w_i) margin + tails) margin, capped at 1.
fn block_upper(ds: &[f64], ws: &[f64], tails: f64) -> f64 {
    let s: f64 = ds.iter().zip(ws).map(|(d, w)| d * w).sum();
    ((s * FINAL_MARGIN + tails) * FINAL_MARGIN).min(1.0)
}

/// The gaps (d_i - d_{i+1}) w_i of the blocks (the last block has none).
fn block_gaps(ds: &[f64], ws: &[f64]) -> Vec<f64> {
    let mut g: Vec<f64> = ds
        .windows(2)
        .zip(ws)
        .map(|(d, w)| (d[0] - d[1]).max(0.0) * w)
        .collect();
    g.push(0.0);
    g
}

/// Tail targets (B window, s window) for a target delta.
fn tails_for(delta: f64, m: u32) -> (f64, f64) {
    let t = (1e-4 * delta).clamp(1e-280, 1e-8);
    (t, (t / f64::from(m)).max(1e-280))
}

/// Certified bracketing secant search (Illinois): `f(lo) > 0` (rejected) and `f(hi) <= 0`
/// (accepted) on entry; returns an accepted point within `rel` (relative) of a rejected one,
/// or the best accepted point after `max_iter` evaluations. Only points where `f <= 0` was
/// evaluated are ever returned.
fn illinois(
    mut f: impl FnMut(f64) -> f64,
    mut lo: f64,
    mut flo: f64,
    mut hi: f64,
    mut fhi: f64,
    rel: f64,
    max_iter: usize,
) -> (f64, f64) {
    let mut side = 0i8;
    let mut width_before = hi - lo;
    for it in 0..max_iter {
        let w = hi - lo;
        if !(w > rel * hi) {
            break;
        }
        let tol = 0.45 * rel * hi;
        let mut x = if flo.is_finite() && fhi.is_finite() && flo > fhi {
            (lo * fhi - hi * flo) / (fhi - flo)
        } else {
            0.5 * (lo + hi)
        };
        // Every fourth step must have halved the bracket, else bisect.
        if it % 4 == 3 {
            if w > 0.5 * width_before {
                x = 0.5 * (lo + hi);
            }
            width_before = w;
        }
        x = x.clamp(lo + tol.min(0.5 * w), hi - tol.min(0.5 * w));
        if !(x > lo && x < hi) {
            break;
        }
        let fx = f(x);
        if fx <= 0.0 {
            hi = x;
            fhi = fx;
            if side == -1 {
                flo *= 0.5;
            }
            side = -1;
        } else {
            lo = x;
            flo = fx;
            if side == 1 {
                fhi *= 0.5;
            }
            side = 1;
        }
    }
    (lo, hi)
}

/// ln of an upper bound, as the search function's value (0 maps to a very negative number).
fn ln_or_floor(u: f64) -> f64 {
    u.max(1e-320).ln()
}

/// The exact GRR pair for n users, m values, blanket probability gamma.
#[derive(Debug, Clone)]
pub struct GrrPair {
    n: u64,
    m: u32,
    gamma: f64,
    eps0: f64,
}

impl GrrPair {
    /// GRR(m, gamma) with n users (n >= 2, m >= 2, 0 < gamma < 1).
    pub fn new(n: u64, m: u32, gamma: f64) -> Self {
        let eps0 = super::grr_local_epsilon(m, gamma);
        Self {
            n: n.max(2),
            m,
            gamma,
            eps0,
        }
    }

    /// The local eps0 of the randomizer.
    pub fn eps0(&self) -> f64 {
        self.eps0
    }

    /// Upper bound on the conditional divergence D given N = nn blanket-or-target messages,
    /// at eps < eps0, with the s-window's outside mass targeted at `s_tail` per side.
    pub fn conditional(&self, nn: u64, eps: f64, s_tail: f64) -> f64 {
        let nf = nn as f64;
        let mf = f64::from(self.m);
        let g = self.gamma;
        let ee = eps.exp();
        let em1 = eps.exp_m1();
        let k = em1 * g * nf / mf;
        let kp = k / (1.0 - g);
        let h = (1.0 - g) * (1.0 + ee) / 2.0;
        let (p, q) = (2.0 / mf, (mf - 2.0) / mf);
        let (lo, hi, outside) = if self.m == 2 {
            (nn, nn, 0.0)
        } else {
            let (lo, hi) = window_range(nn, p, q, s_tail);
            let (b, a) = tail_bounds(nn, p, q, lo, hi);
            (lo, hi, b + a)
        };
        let ln_pi = |s: u64| {
            if self.m == 2 {
                0.0
            } else {
                ln_pmf(s, nn, p, q)
            }
        };
        let mut total = 0.0f64;
        let mut mills: Option<MillsRatio> = None;
        // Carried state: ln Pr[S = s] + ln b_s(cx) at (s, cx).
        let mut lsum = 0.0f64;
        let mut cx = 0u64;
        let mut since = ANCHOR;
        let mut s = hi;
        while s >= lo.max(1) {
            let sf = s as f64;
            let tau = (sf - kp) / (1.0 + ee);
            if !(tau > 0.0) {
                break; // tau decreases with s: no positive term below
            }
            let x = ((tau.ceil() - 1.0).max(0.0) as u64).min(s - 1);
            // Move the carried log-probability to (s, x).
            let moved = since < ANCHOR && cx <= s && cx.abs_diff(x) <= 4 && x < s;
            if moved {
                // From (s + 1, cx): Pr[S = s] / Pr[S = s + 1] = (s + 1) q / ((N - s) p);
                // b_s(cx) / b_{s+1}(cx) = 2 (s + 1 - cx) / (s + 1).
                let s1 = (s + 1) as f64;
                let mut r = if self.m == 2 {
                    1.0
                } else {
                    s1 * q / ((nf - sf) * p)
                };
                r *= 2.0 * (s1 - cx as f64) / s1;
                while cx > x {
                    r *= cx as f64 / ((s - cx + 1) as f64);
                    cx -= 1;
                }
                while cx < x {
                    r *= ((s - cx) as f64) / ((cx + 1) as f64);
                    cx += 1;
                }
                lsum += r.ln();
                since += 1;
            } else {
                lsum = ln_pi(s) + ln_pmf_half(x, s);
                cx = x;
                since = 0;
            }
            let m = match mills.as_mut() {
                Some(mr) if mr.c >= s => {
                    mr.move_to(s, x);
                    *mr
                }
                _ => {
                    let mr = MillsRatio::direct(s, x);
                    mills = Some(mr);
                    mr
                }
            };
            let coef_r = -(1.0 - g) * sf * em1 / 2.0 - k; // < 0
            let xf = x as f64;
            // a + b with a = R coef_r < 0 and b > 0 cancel for large eps (both ~e^eps): their
            // rounding (a few ulps of each: coef_r, h and the products) is added.
            let sum_up = |a: f64, b: f64| a + b + 16.0 * f64::EPSILON * (a.abs() + b.abs());
            let mut best = sum_up(m.lo * coef_r, h * (sf - xf));
            if x + 1 < s {
                let r_up = ((1.0 + m.lo * (xf + 1.0) / (sf - xf)) * (1.0 - U4)).max(1.0);
                let ratio = (sf - xf) / (xf + 1.0) * (1.0 + U4);
                let v = sum_up(r_up * coef_r, h * (sf - xf - 1.0));
                if v > 0.0 {
                    best = best.max(ratio * v);
                }
            }
            if x >= 1 {
                let r_dn = ((m.lo - 1.0) * (sf - xf + 1.0) / xf * (1.0 - U4)).max(1.0);
                let ratio = xf / (sf - xf + 1.0) * (1.0 + U4);
                let v = sum_up(r_dn * coef_r, h * (sf - xf + 1.0));
                if v > 0.0 {
                    best = best.max(ratio * v);
                }
            }
            if best > 0.0 {
                total += best * exp_up(lsum + LN_SLACK);
            }
            if s == 0 {
                break;
            }
            s -= 1;
        }
        ((mf / nf) * total * FINAL_MARGIN + mf * outside).min(1.0)
    }

    /// D at each B-point.
    fn ds(&self, pts: &[u64], eps: f64, s_tail: f64) -> Vec<f64> {
        pts.iter()
            .map(|&b| self.conditional(b + 1, eps, s_tail))
            .collect()
    }

    /// Upper bound on delta(eps) with the given B-points.
    fn upper_at(&self, grid: &BGrid, pts: &[u64], ws: &[f64], eps: f64, s_tail: f64) -> f64 {
        if !(eps < self.eps0) {
            return 0.0;
        }
        block_upper(&self.ds(pts, eps.max(0.0), s_tail), ws, grid.tails)
    }

    /// Refines the B-points at eps until the block gap is at most [`PLAN_GAP`] of the total;
    /// returns the points, their block masses and the upper bound there.
    fn refine(
        &self,
        grid: &BGrid,
        mut pts: Vec<u64>,
        eps: f64,
        s_tail: f64,
    ) -> (Vec<u64>, Vec<f64>, f64) {
        let eps = eps.max(0.0);
        let mut ds = self.ds(&pts, eps, s_tail);
        let mut ws = grid.masses(&pts);
        loop {
            let up = block_upper(&ds, &ws, grid.tails);
            let gaps = block_gaps(&ds, &ws);
            let total_gap: f64 = gaps.iter().sum();
            let raw: f64 = ds.iter().zip(&ws).map(|(d, w)| d * w).sum();
            let (gap, max_points) = if self.m == 2 {
                (PLAN_GAP_M2, MAX_POINTS_M2)
            } else {
                (PLAN_GAP, MAX_POINTS)
            };
            if !(total_gap > gap * raw) || pts.len() >= max_points {
                return (pts, ws, up);
            }
            let pick = (0..pts.len() - 1)
                .filter(|&i| pts[i + 1] - pts[i] >= 2)
                .max_by(|&i, &j| gaps[i].total_cmp(&gaps[j]));
            let Some(i) = pick else {
                return (pts, ws, up);
            };
            let mid = pts[i] + (pts[i + 1] - pts[i]) / 2;
            let d = self.conditional(mid + 1, eps, s_tail);
            let (wl, wr) = (grid.mass(pts[i], mid), grid.mass(mid, pts[i + 1]));
            pts.insert(i + 1, mid);
            ds.insert(i + 1, d);
            ws[i] = wl;
            ws.insert(i + 1, wr);
        }
    }

    /// Upper bound on delta(eps) of the shuffled GRR (B-points refined at eps; the windows'
    /// tails are tightened until they are negligible against the result).
    pub fn delta(&self, eps: f64) -> f64 {
        if !(eps < self.eps0) {
            return 0.0;
        }
        if !(self.eps0 <= MAX_EPS0) {
            return 1.0;
        }
        let mut target = 1e-8;
        let mut up = 1.0;
        for _ in 0..4 {
            let (bt, st) = tails_for(target, self.m);
            let grid = BGrid::new(self.n - 1, self.gamma, bt);
            let pts = grid.points(&STD_Z);
            up = self.refine(&grid, pts, eps, st).2;
            if up >= 1e-2 * target || target <= 1e-270 {
                break;
            }
            target = up.max(1e-300);
        }
        up
    }

    /// Smallest eps (1e-6 relative resolution, upper end) with delta(eps) <= delta.
    pub fn epsilon(&self, delta: f64) -> f64 {
        if !(delta < 1.0) {
            return 0.0;
        }
        if !(self.eps0 <= MAX_EPS0) {
            // e^eps would overflow inside the search: no amplification claimed (eps0 holds).
            return round_up(self.eps0, 2);
        }
        let (bt, st) = tails_for(delta, self.m);
        let grid = BGrid::new(self.n - 1, self.gamma, bt);
        let ln_t = delta.ln();
        // Coarse: a root with fixed points (a certified bound in itself), then the points
        // refined at its rejected end; if the root sat at the top of its bracket and that end
        // is now accepted, the root is searched again below it (at most COARSE_ROUNDS times). One round is not enough where the standard
        // points are coarse: at small delta the block bound of the low-B blocks (where D(B)
        // is large) dominates every eps below eps0, and the first root saturates near eps0
        // (eps0 = 4, n = 1000, m = 2, delta = 1e-8 gave 3.99997 instead of 2.84971).
        let mut pts0 = grid.points(&STD_Z);
        let mut top = self.eps0;
        let mut ftop = f64::NEG_INFINITY;
        let (mut clo, mut chi) = (0.0, self.eps0);
        for round in 0..COARSE_ROUNDS {
            let ws0 = grid.masses(&pts0);
            let f0 = |e: f64| ln_or_floor(self.upper_at(&grid, &pts0, &ws0, e, st)) - ln_t;
            let fz = f0(0.0);
            if fz <= 0.0 {
                return 0.0;
            }
            let (mut lo, mut flo) = (0.0f64, fz);
            let (mut hi, mut fhi) = (top, ftop);
            while lo == 0.0 || hi / lo > 2.0 {
                if hi < 1e-12 {
                    return hi;
                }
                let mid = if lo == 0.0 {
                    hi / 8.0
                } else {
                    lo.sqrt() * hi.sqrt()
                };
                let fm = f0(mid);
                if fm <= 0.0 {
                    (hi, fhi) = (mid, fm);
                } else {
                    (lo, flo) = (mid, fm);
                }
            }
            (clo, chi) = illinois(f0, lo, flo, hi, fhi, 1e-3, 40);
            // Refine at the rejected end: at the accepted end the bound may be 0 (chi = eps0),
            // which would refine nothing.
            let (refined, _, _) = self.refine(&grid, pts0.clone(), clo, st);
            let moved = refined.len() > pts0.len();
            pts0 = refined;
            // Only a root stuck at the top of its bracket (the coarse points rejected every
            // eps below it) is searched again; a root that moves a little with the refined
            // points is left to the fine stage's downward expansion (cheaper).
            let saturated = chi >= top * (1.0 - 2e-3);
            if !saturated || !moved || round + 1 == COARSE_ROUNDS {
                break;
            }
            // With the refined points, is the rejected end now accepted? Then the root moved
            // below the bracket: search again below it. Otherwise the bracket stands (the
            // accepted end stays accepted: splitting a block only lowers the bound).
            let ws0 = grid.masses(&pts0);
            let fclo = ln_or_floor(self.upper_at(&grid, &pts0, &ws0, clo, st)) - ln_t;
            if fclo > 0.0 {
                break;
            }
            (top, ftop) = (clo, fclo);
            chi = clo;
        }
        // Fine: points refined near the coarse answer, then kept fixed.
        let (pts, ws, _) = self.refine(&grid, pts0, clo, st);
        let up = self.upper_at(&grid, &pts, &ws, chi, st);
        let f = |e: f64| ln_or_floor(self.upper_at(&grid, &pts, &ws, e, st)) - ln_t;
        let fhi = ln_or_floor(up) - ln_t;
        if fhi > 0.0 {
            return chi; // certified by the coarse points
        }
        let (mut lo, mut flo) = (clo, f(clo));
        let mut hi = chi;
        let mut fhi = fhi;
        let mut step = (chi - clo).max(1e-3 * chi);
        while flo <= 0.0 {
            (hi, fhi) = (lo, flo);
            if lo <= 0.0 {
                return 0.0;
            }
            step *= 2.0;
            lo = (lo - step).max(0.0);
            flo = f(lo);
        }
        illinois(f, lo, flo, hi, fhi, EPS_RESOLUTION, 60).1
    }

    /// Whether delta(eps) <= delta is certified (B-points refined at eps).
    pub fn certifies(&self, eps: f64, delta: f64) -> bool {
        if !(eps < self.eps0) {
            return true;
        }
        if !(self.eps0 <= MAX_EPS0) {
            return false;
        }
        let (bt, st) = tails_for(delta, self.m);
        let grid = BGrid::new(self.n - 1, self.gamma, bt);
        let pts = grid.points(&STD_Z);
        self.refine(&grid, pts, eps, st).2 <= delta
    }
}

/// Smallest gamma of GRR(m, gamma) whose shuffled delta at `eps` is certified <= `delta`:
/// a coarse bisection with the standard B-points, then a bracketing secant search with the
/// points refined at the coarse answer (in standardized positions). Returns the accepted
/// (upper) end, or `None` if even gamma = 1 - ulp fails. The answer is certified by its own
/// B-points; [`GrrPair::certifies`] (fresh points refined at it) may reject it by up to about
/// [`PLAN_GAP`] in delta, so `GrrExact::min_gamma` raises it until `certifies` holds.
pub fn min_gamma_exact(n: u64, m: u32, eps: f64, delta: f64) -> Option<f64> {
    let (bt, st) = tails_for(delta, m);
    let ln_t = delta.ln();
    let eval = |g: f64, zs: &[f64], refine: bool| -> f64 {
        let pair = GrrPair::new(n, m, g);
        if !(eps < pair.eps0) {
            return f64::NEG_INFINITY;
        }
        if !(pair.eps0 <= MAX_EPS0) {
            return f64::INFINITY; // not certified (e^eps0 overflows); see `MAX_EPS0`
        }
        let grid = BGrid::new(pair.n - 1, g, bt);
        let pts = grid.points(zs);
        let up = if refine {
            pair.refine(&grid, pts, eps, st).2
        } else {
            let ws = grid.masses(&pts);
            pair.upper_at(&grid, &pts, &ws, eps, st)
        };
        ln_or_floor(up) - ln_t
    };
    let mut hi = 1.0f64.next_down();
    if eval(hi, &STD_Z, true) > 0.0 {
        return None;
    }
    let mut lo = 0.0f64;
    // Coarse: bisection (geometric while the bracket spans orders of magnitude).
    while lo == 0.0 || hi / lo > 1.0 + 1e-3 {
        if hi < 1e-300 {
            return Some(hi);
        }
        let mid = if lo > 0.0 && hi / lo > 4.0 {
            lo.sqrt() * hi.sqrt()
        } else if lo == 0.0 {
            hi / 16.0
        } else {
            0.5 * (lo + hi)
        };
        let fm = eval(mid, &STD_Z, false);
        if fm <= 0.0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    // Fine: points refined at the coarse answer, reused (standardized) nearby.
    let zs = {
        let pair = GrrPair::new(n, m, hi);
        let grid = BGrid::new(pair.n - 1, hi, bt);
        let pts = grid.points(&STD_Z);
        let (pts, _, _) = pair.refine(&grid, pts, eps, st);
        grid.to_z(&pts)
    };
    let f = |g: f64| eval(g, &zs, false);
    let fh = f(hi);
    if fh > 0.0 {
        return Some(hi); // certified by the standard points
    }
    let mut fhi = fh;
    let mut flo2 = f(lo);
    let mut step = hi - lo;
    while flo2 <= 0.0 {
        (hi, fhi) = (lo, flo2);
        step *= 2.0;
        lo = (lo - step).max(0.0);
        if lo <= 0.0 {
            return Some(hi);
        }
        flo2 = f(lo);
    }
    Some(illinois(f, lo, flo2, hi, fhi, GAMMA_RESOLUTION, 60).1)
}

/// The exact GRR accountant (`grr-exact`): GRR only.
#[derive(Debug, Clone, Copy, Default)]
pub struct GrrExact;

impl GrrExact {
    fn pair(&self, r: &LocalRandomizer, n: NumUsers) -> Result<GrrPair, AccountingError> {
        let (m, gamma) = grr_params(Method::GrrExact, r)?;
        checked_eps0(Method::GrrExact, r)?;
        Ok(GrrPair::new(n.get(), m, gamma))
    }
}

impl CurveAccountant for GrrExact {
    type Curve = GrrPair;

    fn curve_method(&self) -> Method {
        Method::GrrExact
    }

    fn curve(&self, randomizer: &LocalRandomizer, n: NumUsers) -> Result<GrrPair, AccountingError> {
        self.pair(randomizer, n)
    }

    fn fast_min_gamma(
        &self,
        m: DomainSize,
        n: NumUsers,
        eps: Epsilon,
        delta: Delta,
    ) -> Option<Result<f64, AccountingError>> {
        Some(
            min_gamma_exact(n.get(), m.get(), eps.get(), delta.get()).ok_or(
                AccountingError::unreachable(Method::GrrExact, m, n, eps, delta),
            ),
        )
    }
}

impl PrivacyCurve for GrrPair {
    fn epsilon(&self, delta: f64) -> f64 {
        GrrPair::epsilon(self, delta)
    }

    fn delta(&self, eps: f64) -> f64 {
        GrrPair::delta(self, eps)
    }

    fn certifies(&self, eps: f64, delta: f64) -> bool {
        GrrPair::certifies(self, eps, delta)
    }
}

#[cfg(test)]
pub(crate) mod tests;
