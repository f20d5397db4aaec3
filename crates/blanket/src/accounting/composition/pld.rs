//! Privacy-loss distribution (PLD) of a shuffled randomizer, composed over many rounds by FFT
//! (Koskela, Jalko, Honkela, "Computing Tight Differential Privacy Guarantees Using FFT",
//! AISTATS 2020; Koskela, Heikkila, Honkela for shuffling).
//!
//! The shuffled randomizer is dominated (for every eps at once: it is one post-processing) by
//! the clone pair (P, Q) of Feldman, McMillan, Talwar ([`crate::accounting::clones`]), with
//! clone probability e^-eps0 (generic) or 2/(e^eps0 + 1) (k-RR). Its loss
//! L(c, x) = ln(P_c(x) / Q_c(x)) = ln((e0 (c - x + 1) + x) / ((c - x + 1) + e0 x)) lies in
//! [-eps0, eps0]. For the k-fold product pair, delta(eps) = E_{P^k}[(1 - e^(eps - sum L_i))_+],
//! which only grows when each L_i is rounded *up*, so the discretization puts each atom's
//! P-mass at ceil(L / h) h ("pessimistic" rounding), and the mass outside the (c, x) windows
//! (bounded from above) at the largest loss eps0. The pair is symmetric (x -> c + 1 - x swaps
//! P and Q), so one direction suffices.
//!
//! The k-fold convolution is one FFT, a pointwise k-th power and one inverse FFT. Its
//! floating error is bounded by 8 k (log2 N + 1) u sqrt(sum_i w_i^2) (N the FFT size, u the
//! unit roundoff, w_i in [0, 1] the weights of delta(eps)), which is added to delta.

use super::CompositionError;
use crate::accounting::binomial::{ln_pmf, ln_pmf_half, Window};
use crate::accounting::clones::smallest_eps;

/// A discretized privacy-loss distribution: mass[i] is P-mass at loss (offset + i) h.
#[derive(Debug, Clone)]
pub struct Pld {
    /// Grid step of the loss.
    pub h: f64,
    /// Index of mass[0] on the grid.
    pub offset: i64,
    /// P-mass per grid point (pessimistically rounded).
    pub mass: Vec<f64>,
    /// Upper bound on the floating error of `mass` in the sense of the module docs, as
    /// a coefficient of sqrt(sum w_i^2).
    pub fft_error: f64,
}

impl Pld {
    /// PLD of the clone pair with n users, local eps0, clone probability p (q = 1 - p), on a
    /// grid of step h.
    pub fn clone_pair(n: u64, eps0: f64, p: f64, q: f64, h: f64) -> Result<Self, CompositionError> {
        if !(h > 0.0 && h.is_finite() && eps0 > 0.0 && eps0 < 50.0) || n < 2 {
            return Err(CompositionError::Invalid(format!(
                "PLD needs h > 0, 0 < eps0 < 50, n >= 2 (got h = {h}, eps0 = {eps0}, n = {n})"
            )));
        }
        let top = (eps0 / h).ceil() as i64;
        let len = (2 * top + 1) as usize;
        if len > 1 << 24 {
            return Err(CompositionError::Invalid(format!(
                "grid too fine: {len} points (h = {h}); use a larger step"
            )));
        }
        let mut mass = vec![0.0f64; len];
        let e0 = eps0.exp();
        let alpha = e0 / (e0 + 1.0);
        let w = Window::new(n - 1, p, q, 1e-30);
        let mut outside = w.below + w.above;
        for c in w.lo..=w.hi {
            let wc = w.ln_at(c).exp() * (1.0 + 1e-12);
            if wc == 0.0 {
                continue;
            }
            // x window of Bin(c, 1/2) + Bern: x in [xlo, xhi] with the rest bounded.
            let xw = Window::new(c, 0.5, 0.5, 1e-30);
            outside += wc * (xw.below + xw.above) * 2.0;
            let cf = c as f64;
            let b = |x: i64| -> f64 {
                if x < 0 || x as u64 > c {
                    0.0
                } else {
                    ln_pmf_half(x as u64, c).exp()
                }
            };
            for x in xw.lo as i64..=(xw.hi as i64 + 1) {
                let pm = alpha * b(x) + (1.0 - alpha) * b(x - 1);
                if pm == 0.0 {
                    continue;
                }
                let xf = x as f64;
                let loss = ((e0 * (cf - xf + 1.0) + xf) / ((cf - xf + 1.0) + e0 * xf)).ln();
                // ceil with a margin against rounding of `loss` itself
                let idx = ((loss + 1e-12) / h).ceil() as i64;
                let idx = idx.clamp(-top, top);
                mass[(idx + top) as usize] += wc * pm * (1.0 + 1e-12);
            }
        }
        mass[len - 1] += outside;
        Ok(Self {
            h,
            offset: -top,
            mass,
            fft_error: 0.0,
        })
    }

    /// The FMT21 clone pair (any eps0-LDP randomizer).
    pub fn fmt21(n: u64, eps0: f64, h: f64) -> Result<Self, CompositionError> {
        Self::clone_pair(n, eps0, (-eps0).exp(), -(-eps0).exp_m1(), h)
    }

    /// The stronger-clone pair (k-RR only).
    pub fn stronger_clones(n: u64, eps0: f64, h: f64) -> Result<Self, CompositionError> {
        let e0 = eps0.exp();
        Self::clone_pair(n, eps0, 2.0 / (e0 + 1.0), eps0.exp_m1() / (e0 + 1.0), h)
    }

    /// A pure (eps, 0)-DP mechanism's worst pair: randomized response.
    pub fn pure(eps: f64, h: f64) -> Self {
        let top = (eps / h).ceil() as i64;
        let mut mass = vec![0.0; (2 * top + 1) as usize];
        let p = eps.exp() / (1.0 + eps.exp());
        mass[(2 * top) as usize] = p;
        // loss -eps rounded up
        let lo = (-eps / h).ceil() as i64;
        mass[(lo + top) as usize] += 1.0 - p;
        Self {
            h,
            offset: -top,
            mass,
            fft_error: 0.0,
        }
    }

    /// The k-fold self-composition.
    pub fn compose(&self, k: u64) -> Result<Self, CompositionError> {
        if k == 0 {
            return Err(CompositionError::Invalid("count must be >= 1".into()));
        }
        let out_len = (self.mass.len() - 1) as u64 * k + 1;
        if out_len > 1 << 26 {
            return Err(CompositionError::Invalid(format!(
                "{out_len} grid points after composition: use a coarser step"
            )));
        }
        let nfft = (out_len as usize).next_power_of_two();
        let mut re = vec![0.0; nfft];
        let mut im = vec![0.0; nfft];
        re[..self.mass.len()].copy_from_slice(&self.mass);
        fft(&mut re, &mut im, false);
        for i in 0..nfft {
            let (r, t) = pow_complex(re[i], im[i], k);
            re[i] = r;
            im[i] = t;
        }
        fft(&mut re, &mut im, true);
        let mass: Vec<f64> = re[..out_len as usize].iter().map(|v| v.max(0.0)).collect();
        let log2n = (nfft as f64).log2();
        let total: f64 = self.mass.iter().sum::<f64>().max(1.0);
        let err = 8.0 * k as f64 * (log2n + 1.0) * f64::EPSILON * total.powf(k as f64);
        Ok(Self {
            h: self.h,
            offset: self.offset * k as i64,
            mass,
            fft_error: self.fft_error + err,
        })
    }

    /// Upper bound on delta(eps) = sum_i mass_i (1 - e^(eps - l_i))_+ plus the FFT error.
    pub fn delta(&self, eps: f64) -> f64 {
        let mut s = 0.0;
        let mut w2 = 0.0;
        for (i, &m) in self.mass.iter().enumerate() {
            let l = (self.offset + i as i64) as f64 * self.h;
            if l > eps {
                let w = -(eps - l).exp_m1();
                s += m * w;
                w2 += w * w;
            }
        }
        (s * (1.0 + 1e-9) + self.fft_error * w2.sqrt()).min(1.0)
    }

    /// Smallest eps (1e-6 relative, upper end) with delta(eps) <= delta.
    pub fn epsilon(&self, delta: f64) -> f64 {
        let top = (self.offset + self.mass.len() as i64) as f64 * self.h;
        smallest_eps(|e| self.delta(e), 0.0, top.max(0.0), delta)
    }
}

fn pow_complex(re: f64, im: f64, k: u64) -> (f64, f64) {
    let r = (re * re + im * im).sqrt();
    if r == 0.0 {
        return (0.0, 0.0);
    }
    let th = im.atan2(re);
    let rk = r.powf(k as f64);
    let a = th * k as f64;
    (rk * a.cos(), rk * a.sin())
}

/// In-place iterative radix-2 FFT (inverse scaled by 1/N).
fn fft(re: &mut [f64], im: &mut [f64], inverse: bool) {
    let n = re.len();
    let mut j = 0usize;
    for i in 1..n {
        let mut bit = n >> 1;
        while j & bit != 0 {
            j ^= bit;
            bit >>= 1;
        }
        j |= bit;
        if i < j {
            re.swap(i, j);
            im.swap(i, j);
        }
    }
    let mut len = 2;
    while len <= n {
        let ang = 2.0 * core::f64::consts::PI / len as f64 * if inverse { 1.0 } else { -1.0 };
        let half = len / 2;
        for start in (0..n).step_by(len) {
            for k in 0..half {
                let (s, c) = (ang * k as f64).sin_cos();
                let (ur, ui) = (re[start + k], im[start + k]);
                let (vr0, vi0) = (re[start + k + half], im[start + k + half]);
                let vr = vr0 * c - vi0 * s;
                let vi = vr0 * s + vi0 * c;
                re[start + k] = ur + vr;
                im[start + k] = ui + vi;
                re[start + k + half] = ur - vr;
                im[start + k + half] = ui - vi;
            }
        }
        len <<= 1;
    }
    if inverse {
        let inv = 1.0 / n as f64;
        for v in re.iter_mut().chain(im.iter_mut()) {
            *v *= inv;
        }
    }
}

/// ln of a Bin(n, p) pmf, re-exported for callers building their own PLDs.
pub fn ln_binomial(x: u64, n: u64, p: f64) -> f64 {
    ln_pmf(x, n, p, 1.0 - p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounting::clones::CloneReduction;
    use crate::accounting::composition::kov_epsilon;

    #[test]
    fn single_round_is_above_the_exact_curve() {
        let pld = Pld::fmt21(10_000, 2.0, 1e-3).unwrap();
        let cr = CloneReduction::fmt21(10_000, 2.0);
        for &e in &[0.01, 0.05, 0.1, 0.2] {
            let a = pld.delta(e);
            let b = cr.delta(e);
            assert!(a >= b * (1.0 - 1e-9), "{e}: {a} {b}");
            assert!(a <= b * 1.5 + 1e-12, "{e}: {a} {b}");
        }
    }

    #[test]
    fn composing_pure_rr_matches_kov() {
        // k-fold RR is the worst case of k-fold (eps, 0)-DP: PLD composition ~ KOV exact.
        let pld = Pld::pure(0.1, 1e-4).compose(100).unwrap();
        let e = pld.epsilon(1e-6);
        let kov = kov_epsilon(0.1, 0.0, 100, 1e-6).unwrap();
        assert!(e >= kov - 1e-6 && e < kov + 0.01, "{e} {kov}");
    }

    #[test]
    fn composition_is_monotone() {
        let pld = Pld::fmt21(10_000, 2.0, 2e-3).unwrap();
        let e1 = pld.epsilon(1e-6);
        let e10 = pld.compose(10).unwrap().epsilon(1e-6);
        let e30 = pld.compose(30).unwrap().epsilon(1e-6);
        assert!(e1 < e10 && e10 < e30, "{e1} {e10} {e30}");
        // far below basic composition
        assert!(e30 < 30.0 * e1);
    }
}
