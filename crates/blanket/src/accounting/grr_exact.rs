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
//!   delta(eps) = E_B[ (m/N) E_base[ max(0, (1 - gamma)(h_a - e^eps h_b) - K) ] ],
//!   K = (e^eps - 1) gamma N / m.
//! With s = h_a + h_b ~ Bin(N, 2/m) and x = h_b ~ Bin(s, 1/2) given s, the inner term is a
//! lower-tail sum over x < tau_s = s - (e^eps s + K/(1 - gamma))/(1 + e^eps) and equals
//!   b_s(X) [ R ((1 - gamma) s (1 - e^eps)/2 - K) + (1 - gamma)(1 + e^eps)(s - X)/2 ]
//! (R the lower-tail Mills ratio; negative coefficient, so R's lower bound is used).
//!
//! Sums: the s-window of each N carries its outside mass times m (P_a <= m base), the
//! B-window its outside mass as delta 1. The conditional divergence D(B) is non-increasing
//! in B (one more blanket user adds an independent uniform message: post-processing), so when
//! the B-window has more than [`EXACT_B`] values it is cut into blocks, each bounded by D at
//! its first B times the block's mass: still an upper bound, looser by the variation of D
//! within a block (reported in docs/accounting.md).

use super::binomial::{exp_up, Window};
use super::clones::{smallest_eps, sweep, FINAL_MARGIN, WINDOW_TAIL};
use super::{
    checked_eps0, krr_k, min_gamma_by_delta, AccountingError, LocalRandomizer, Method,
    ShuffleAccountant,
};
use crate::params::{Delta, DomainSize, Epsilon, NumUsers};

/// Up to this many values of B every one is summed; beyond, monotone blocks.
pub const EXACT_B: u64 = 256;
/// Number of blocks when the B-window is larger than [`EXACT_B`].
const BLOCKS: u64 = 64;

/// The exact GRR pair for n users, m values, blanket probability gamma.
#[derive(Debug, Clone)]
pub struct GrrPair {
    m: u32,
    gamma: f64,
    eps0: f64,
    window: Window,
}

impl GrrPair {
    /// GRR(m, gamma) with n users (m >= 2, 0 < gamma < 1).
    pub fn new(n: u64, m: u32, gamma: f64) -> Self {
        let eps0 = (f64::from(m) * (1.0 - gamma) / gamma).ln_1p();
        Self {
            m,
            gamma,
            eps0,
            window: Window::new(n.saturating_sub(1), gamma, 1.0 - gamma, WINDOW_TAIL),
        }
    }

    /// Conditional divergence given B = b blanket users among the others (upper bound).
    pub fn conditional(&self, b: u64, eps: f64) -> f64 {
        let nn = b + 1;
        let nf = nn as f64;
        let mf = f64::from(self.m);
        let g = self.gamma;
        let ee = eps.exp();
        let em1 = eps.exp_m1();
        let k = em1 * g * nf / mf;
        let ps = 2.0 / mf;
        let qs = 1.0 - ps;
        let sw = Window::new(nn, ps, qs, WINDOW_TAIL);
        let kk = k / (1.0 - g);
        let inner = sweep(
            sw.lo,
            sw.hi,
            |s| {
                let sf = s as f64;
                sf - (ee * sf + kk) / (1.0 + ee)
            },
            |s, x, ln_b, r_lo| {
                let sf = s as f64;
                let v = r_lo * ((1.0 - g) * sf * (-em1) / 2.0 - k)
                    + (1.0 - g) * (1.0 + ee) * (sf - x as f64) / 2.0;
                if v > 0.0 {
                    v * exp_up(ln_b + sw.ln_at(s))
                } else {
                    0.0
                }
            },
        );
        ((mf / nf) * inner * FINAL_MARGIN + mf * (sw.below + sw.above)).min(1.0)
    }

    /// Upper bound on delta(eps) of the shuffled GRR.
    pub fn delta(&self, eps: f64) -> f64 {
        self.delta_with(eps, EXACT_B, BLOCKS)
    }

    /// delta(eps) summing every B when the window has at most `exact_b` values, else
    /// `blocks` monotone blocks.
    pub fn delta_with(&self, eps: f64, exact_b: u64, blocks: u64) -> f64 {
        if !(eps < self.eps0) {
            return 0.0;
        }
        let eps = eps.max(0.0);
        let w = &self.window;
        let len = w.hi - w.lo + 1;
        let mut total = 0.0;
        if len <= exact_b {
            for b in w.lo..=w.hi {
                let lw = w.ln_at(b);
                if lw < -745.0 {
                    total += 1e-300;
                    continue;
                }
                total += self.conditional(b, eps) * exp_up(lw);
            }
        } else {
            let step = len.div_ceil(blocks);
            let mut b = w.lo;
            while b <= w.hi {
                let end = (b + step - 1).min(w.hi);
                let mass: f64 = (b..=end).map(|j| exp_up(w.ln_at(j))).sum();
                if mass > 0.0 {
                    total += self.conditional(b, eps) * mass;
                }
                b = end + 1;
            }
        }
        ((total * FINAL_MARGIN + w.below + w.above) * FINAL_MARGIN).min(1.0)
    }

    /// Smallest eps (1e-6 relative resolution, upper end) with delta(eps) <= delta.
    pub fn epsilon(&self, delta: f64) -> f64 {
        smallest_eps(|e| self.delta(e), 0.0, self.eps0, delta)
    }

    /// [`Self::epsilon`] with the B-sum settings of [`Self::delta_with`].
    pub fn epsilon_with(&self, delta: f64, exact_b: u64, blocks: u64) -> f64 {
        smallest_eps(
            |e| self.delta_with(e, exact_b, blocks),
            0.0,
            self.eps0,
            delta,
        )
    }
}

/// The exact GRR accountant (`grr-exact`): GRR only.
#[derive(Debug, Clone, Copy, Default)]
pub struct GrrExact;

impl GrrExact {
    fn pair(&self, r: &LocalRandomizer, n: NumUsers) -> Result<GrrPair, AccountingError> {
        let m = krr_k(self.method(), r)?;
        checked_eps0(self.method(), r)?;
        let gamma = match *r {
            LocalRandomizer::Grr { gamma, .. } => gamma,
            LocalRandomizer::Generic { .. } => unreachable!("refused by krr_k"),
        };
        Ok(GrrPair::new(n.get(), m, gamma))
    }
}

impl ShuffleAccountant for GrrExact {
    fn method(&self) -> Method {
        Method::GrrExact
    }

    fn epsilon(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
        delta: Delta,
    ) -> Result<f64, AccountingError> {
        Ok(self.pair(randomizer, n)?.epsilon(delta.get()))
    }

    fn delta(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
        eps: f64,
    ) -> Result<f64, AccountingError> {
        if !(eps >= 0.0) {
            return Err(AccountingError::NotApplicable {
                method: self.method(),
                reason: format!("eps must be >= 0, got {eps}"),
            });
        }
        Ok(self.pair(randomizer, n)?.delta(eps))
    }

    fn min_gamma(
        &self,
        m: DomainSize,
        n: NumUsers,
        eps: Epsilon,
        delta: Delta,
    ) -> Result<f64, AccountingError> {
        min_gamma_by_delta(self, m, n, eps, delta)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::accounting::clones::CloneReduction;
    use crate::accounting::variation_ratio::VariationRatioKrr;
    use std::collections::HashMap;

    /// The exact distribution of the analyzer's histogram for GRR(m, gamma) when the users
    /// hold `inputs`.
    fn histogram_dist(inputs: &[u32], m: u32, gamma: f64) -> HashMap<Vec<u32>, f64> {
        let mut dist: HashMap<Vec<u32>, f64> = HashMap::new();
        dist.insert(vec![0; m as usize], 1.0);
        for &x in inputs {
            let mut next = HashMap::new();
            for (h, p) in &dist {
                for y in 0..m {
                    let py = gamma / f64::from(m) + if y == x { 1.0 - gamma } else { 0.0 };
                    let mut h2 = h.clone();
                    h2[y as usize] += 1;
                    *next.entry(h2).or_insert(0.0) += p * py;
                }
            }
            dist = next;
        }
        dist
    }

    /// max over datasets of the others and both directions of the true delta(eps).
    pub(crate) fn brute_force_delta(n: usize, m: u32, gamma: f64, eps: f64) -> f64 {
        let ee = eps.exp();
        let mut worst = 0.0f64;
        let others = n - 1;
        let total = (m as usize).pow(others as u32);
        for code in 0..total {
            let mut c = code;
            let mut data: Vec<u32> = (0..others)
                .map(|_| {
                    let v = (c % m as usize) as u32;
                    c /= m as usize;
                    v
                })
                .collect();
            data.push(0);
            let p = histogram_dist(&data, m, gamma);
            *data.last_mut().unwrap() = 1;
            let q = histogram_dist(&data, m, gamma);
            let mut d1 = 0.0;
            let mut d2 = 0.0;
            for (h, pv) in &p {
                let qv = q.get(h).copied().unwrap_or(0.0);
                d1 += (pv - ee * qv).max(0.0);
                d2 += (qv - ee * pv).max(0.0);
            }
            worst = worst.max(d1).max(d2);
        }
        worst
    }

    #[test]
    fn every_bound_is_above_brute_force_on_tiny_n() {
        for &(n, m, gamma) in &[
            (4usize, 2u32, 0.5f64),
            (5, 3, 0.6),
            (6, 2, 0.3),
            (5, 3, 0.9),
        ] {
            let pair = GrrPair::new(n as u64, m, gamma);
            let eps0 = pair.eps0;
            for &eps in &[0.0, 0.1, 0.3, 0.6, 1.0] {
                if eps >= eps0 {
                    continue;
                }
                let truth = brute_force_delta(n, m, gamma, eps);
                let g = pair.delta(eps);
                assert!(
                    g >= truth,
                    "grr-exact n={n} m={m} gamma={gamma} eps={eps}: {g} < {truth}"
                );
                let s = CloneReduction::stronger(n as u64, eps0).delta(eps);
                let f = CloneReduction::fmt21(n as u64, eps0).delta(eps);
                assert!(
                    s >= truth && f >= truth,
                    "n={n} m={m} gamma={gamma} eps={eps}: {s} {f} {truth}"
                );
            }
        }
    }

    #[test]
    #[ignore]
    fn block_probe() {
        for &(n, m) in &[(100_000u64, 10u32), (1_000_000, 10), (1_000_000, 100)] {
            let gamma = f64::from(m) / (2f64.exp() + f64::from(m) - 1.0);
            let p = GrrPair::new(n, m, gamma);
            let e = p.epsilon(1e-6);
            for &(eb, bl) in &[(1u64 << 40, 0u64), (0, 1024), (0, 256), (0, 64)] {
                let t = std::time::Instant::now();
                let d = p.delta_with(e, eb, bl.max(1));
                eprintln!(
                    "n={n} m={m} eps={e:.6} exact_b={eb} blocks={bl}: delta={d:.6e} in {:.3}s",
                    t.elapsed().as_secs_f64()
                );
            }
        }
    }

    /// The variation-ratio pair as we implement it is NOT above the truth here: this is why
    /// it is excluded from [`crate::accounting::Best`]. Kept as a regression marker.
    #[test]
    fn variation_ratio_falls_below_truth_on_tiny_n() {
        let (n, m, gamma, eps) = (5usize, 3u32, 0.6f64, 0.6f64);
        let eps0 = GrrPair::new(n as u64, m, gamma).eps0;
        let truth = brute_force_delta(n, m, gamma, eps);
        let v = VariationRatioKrr::new(n as u64, m, eps0).delta(eps);
        assert!(v < truth, "{v} {truth}");
    }

    #[test]
    fn m2_equals_stronger_clones_and_large_m_is_tighter() {
        // spec: for m = 2, equal to the stronger-clone value to 4 digits, eps0 = 1.
        for &n in &[1000u64, 10_000] {
            let gamma = 2.0 / (1f64.exp() + 1.0);
            let g = GrrPair::new(n, 2, gamma).epsilon_with(1e-6, 4096, 1);
            let s = CloneReduction::stronger(n, 1.0).epsilon(1e-6);
            assert!((g / s - 1.0).abs() < 1e-4, "n={n}: {g} {s}");
        }
        // eps0 = 1, n = 1000, m = 10: about 0.080 (stronger clones about 0.149).
        let gamma = 10.0 / (1f64.exp() + 9.0);
        let g = GrrPair::new(1000, 10, gamma).epsilon_with(1e-6, 4096, 1);
        let s = CloneReduction::stronger(1000, 1.0).epsilon(1e-6);
        assert!((g - 0.080).abs() < 0.002, "{g}");
        assert!((s - 0.149).abs() < 0.002, "{s}");
    }
}
