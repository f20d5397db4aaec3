//! blanket's upper bound on the second moment B_n behind [`super::ikos::m_required`], for any
//! number of clients n (derivation: `docs/multi-message.md`, "Any n: the windowed recursion
//! and its extension"; this is blanket's own derivation, not a published theorem).
//!
//! The exact recursion (one uniform shuffle of all n m shares)
//!
//! B_1 = 0,  B_r = (q - 1) sum_{b=1}^{r-1} c(r, b) (1 + B_b),
//! c(r, b) = C(r-1, b) C(r, b) / C(r m, b m),
//!
//! costs O(n^2). Here it is bounded in O(min(n, K) W) with a window W:
//!
//! 1. *Windowed recursion* (r <= K + 1): the terms b <= W and b >= r - W are summed exactly;
//!    the middle terms use c(r, b) <= C(r, b)^-(m-2) <= C(r, W+1)^-(m-2) (from
//!    C(rm, bm) >= C(r, b)^m, Vandermonde) and 1 + B_b <= max_{b' < r} (1 + U_b'), so each
//!    computed U_r >= B_r.
//! 2. *Extension* (r > K + 1): for m >= 3, c(r, b) is non-increasing in r for fixed b, so is
//!    c(r, r - c) for fixed c, and so is r C(r, W+1)^-(m-2); hence every B_r with
//!    K < r <= n is at most G = (U_{K+1} + a) / (1 - a), with
//!    a = (q - 1) [sum_{c=1}^{W} c(K+1+c, K+1) + (K+W+2) C(K+W+2, W+1)^-(m-2)] < 1, and
//!    B_n is bounded by its exact small-b and near-n terms plus two crude middle terms.
//!
//! All logs are natural. ln k! is a summed table below 256 and Stirling's series (remainder
//! below 1/(1260 k^5)) above; every level adds a slack covering the floating-point error, so
//! every value returned is an upper bound on the exact one.

use super::ln_factorial::LnFactorial;

/// Window W: terms with b <= W or r - b <= W are summed exactly.
pub(crate) const WINDOW: usize = 64;

/// The windowed recursion runs at least to this many clients (or n) before the extension.
const MIN_DIRECT: usize = 2048;

/// ... and at most to this many; if the extension's contraction a < 1 fails there, the bound
/// gives no guarantee for this m.
const MAX_DIRECT: usize = 100_000;

/// Extension is used early once a <= this and U_{K+1} <= this (so that 1 + G ~ 1).
const EARLY_STOP: f64 = 1e-3;

/// Upper bound on the absolute error of one ln c(r, b) (nine ln k! with arguments <= top,
/// each within 8 ulps of |ln top!| plus the series remainder), with margin. A sum of terms
/// each within this of its exact log is within it too, so it is added once per sum.
fn term_slack(top: f64) -> f64 {
    let lf = top * (top.max(2.0)).ln() + 1.0;
    120.0 * f64::EPSILON * lf + 1e-12
}

/// Per-level slack for summing, exponentiating and taking logs.
const LEVEL_SLACK: f64 = 1e-9;

fn log_sum_exp(terms: &[f64]) -> f64 {
    let max = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if max.is_infinite() {
        return max;
    }
    let sum: f64 = terms
        .iter()
        .filter(|&&t| t - max > -700.0)
        .map(|&t| (t - max).exp())
        .sum();
    max + sum.ln()
}

/// ln(1 + e^x) without overflow.
fn ln_1p_exp(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

struct Ctx {
    m: f64,
    m_minus_2: f64,
    ln_q1: f64,
    lf: LnFactorial,
}

impl Ctx {
    /// ln c(r, b) = ln [C(r-1, b) C(r, b) / C(rm, bm)].
    fn ln_c(&self, r: f64, b: f64) -> f64 {
        self.lf.choose(r - 1.0, b) + self.lf.choose(r, b) - self.lf.choose(r * self.m, b * self.m)
    }

    /// ln [r C(r, W+1)^-(m-2)]: the crude bound on r middle terms.
    fn ln_middle(&self, count: f64, r: f64) -> f64 {
        count.ln() - self.m_minus_2 * self.lf.choose(r, (WINDOW + 1) as f64)
    }

    /// ln a(K) (module docs, step 2), rounded up; K >= W + 1.
    fn ln_contraction(&self, k: usize) -> f64 {
        let k1 = (k + 1) as f64;
        let top = (k + WINDOW + 2) as f64 * self.m;
        let mut terms = Vec::with_capacity(WINDOW + 1);
        for c in 1..=WINDOW {
            terms.push(self.ln_c(k1 + c as f64, k1));
        }
        let r0 = (k + WINDOW + 2) as f64;
        terms.push(self.ln_middle(r0, r0));
        self.ln_q1 + log_sum_exp(&terms) + term_slack(top) + LEVEL_SLACK
    }
}

/// ln of an upper bound on B_n for n clients, m shares, modulus q (q - 1 = e^`ln_q1`);
/// `-inf` when B_n = 0 (n = 1), `+inf` when no bound is available (m = 1 with
/// n > 2W + 1, or m <= 2, or no contraction, when the extension is needed).
pub(crate) fn ln_bound(n: u64, m: u32, ln_q1: f64) -> f64 {
    if n <= 1 {
        return f64::NEG_INFINITY;
    }
    let w = WINDOW;
    if m == 1 && n as usize > 2 * w + 1 {
        return f64::INFINITY;
    }
    let ctx = Ctx {
        m: f64::from(m),
        m_minus_2: f64::from(m) - 2.0,
        ln_q1,
        lf: LnFactorial::new(),
    };
    let direct_cap = n.min(MAX_DIRECT as u64) as usize;
    // ln(1 + U_r) and its running max over r' <= r.
    let mut l1u = vec![0.0f64; 2];
    let mut max_l1u = vec![0.0f64; 2];
    let mut ln_u = f64::NEG_INFINITY;
    let mut terms = Vec::with_capacity(2 * w + 1);
    let mut r = 2usize;
    let mut extend_from: Option<(usize, f64)> = None;
    while r <= direct_cap {
        let rf = r as f64;
        terms.clear();
        let low_end = w.min(r - 1);
        for (b, l) in l1u.iter().enumerate().take(low_end + 1).skip(1) {
            terms.push(ctx.ln_c(rf, b as f64) + l);
        }
        let high_start = (w + 1).max(r.saturating_sub(w));
        for (b, l) in l1u.iter().enumerate().take(r).skip(high_start) {
            terms.push(ctx.ln_c(rf, b as f64) + l);
        }
        if r > 2 * w + 1 {
            terms.push(ctx.ln_middle(rf, rf) + max_l1u[r - 1]);
        }
        let slack = term_slack(rf * ctx.m) + LEVEL_SLACK;
        ln_u = ctx.ln_q1 + log_sum_exp(&terms) + slack;
        let l = ln_1p_exp(ln_u);
        l1u.push(l);
        max_l1u.push(l.max(max_l1u[r - 1]));
        // r = K + 1: may the extension take over?
        let k = r - 1;
        if (n as usize) > r
            && m >= 3
            && k >= MIN_DIRECT.max(w + 1)
            && (n as usize) >= k + w + 2
            && ln_u <= EARLY_STOP.ln()
        {
            let ln_a = ctx.ln_contraction(k);
            if ln_a <= EARLY_STOP.ln() {
                extend_from = Some((k, ln_a));
                break;
            }
        }
        r += 1;
    }
    if r > direct_cap && direct_cap as u64 == n {
        return ln_u;
    }
    let (k, ln_a) = match extend_from {
        Some(found) => found,
        None => {
            // Reached MAX_DIRECT without an early stop: extend if a < 1 at all.
            let k = direct_cap - 1;
            if m < 3 || (n as usize) < k + w + 2 {
                return f64::INFINITY;
            }
            let ln_a = ctx.ln_contraction(k);
            if ln_a >= -1e-9 {
                return f64::INFINITY;
            }
            (k, ln_a)
        }
    };
    // G = (U_{K+1} + a) / (1 - a); ln(1 + G).
    let ln_u_k1 = ln_u;
    let a = ln_a.exp();
    let ln_g = log_sum_exp(&[ln_u_k1, ln_a]) - (-a).ln_1p() + LEVEL_SLACK;
    let l1g = ln_1p_exp(ln_g);
    // B_n: exact small-b terms, crude middle of the first K, near-n terms, crude middle tail.
    let nf = n as f64;
    terms.clear();
    for (b, l) in l1u.iter().enumerate().take(w + 1).skip(1) {
        terms.push(ctx.ln_c(nf, b as f64) + l);
    }
    terms.push(ctx.ln_middle(k as f64, nf) + max_l1u[k]);
    for c in 1..=w {
        // c(n, n - c) = C(n-1, c-1) C(n, c) / C(nm, cm)
        let cf = c as f64;
        let t = ctx.lf.choose(nf - 1.0, cf - 1.0) + ctx.lf.choose(nf, cf)
            - ctx.lf.choose(nf * ctx.m, cf * ctx.m);
        terms.push(t + l1g);
    }
    terms.push(ctx.ln_middle(nf, nf) + l1g);
    let slack = term_slack(nf * ctx.m) + LEVEL_SLACK;
    ctx.ln_q1 + log_sum_exp(&terms) + slack
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact O(n^2) recursion with a summed ln k! table (the bound before the window),
    /// as an oracle.
    fn exact_ln_bound(n: usize, m: usize, ln_q1: f64) -> f64 {
        let nm = n * m;
        let mut lf = vec![0.0f64];
        let mut acc = 0.0;
        for k in 1..=nm {
            acc += (k as f64).ln();
            lf.push(acc);
        }
        let mut l1b = vec![0.0f64; n + 1];
        let mut ln_b = f64::NEG_INFINITY;
        let mut terms = Vec::new();
        for r in 2..=n {
            terms.clear();
            for b in 1..r {
                let a = r - b;
                let t = (lf[r - 1] - lf[b] - lf[a - 1]) + (lf[r] - lf[a] - lf[b])
                    - (lf[r * m] - lf[a * m] - lf[b * m]);
                terms.push(t + l1b[b]);
            }
            ln_b = ln_q1 + log_sum_exp(&terms);
            l1b[r] = ln_1p_exp(ln_b);
        }
        ln_b
    }

    /// Windowed recursion (and extension) never below the exact recursion, and close to it.
    #[test]
    fn window_bounds_exact_recursion() {
        for (n, m, q) in [
            (50usize, 3u32, 2u128),
            (200, 4, 1 << 16),
            (300, 6, 1 << 32),
            (1000, 9, 1 << 32),
            (2500, 10, 1 << 32),
            (2600, 12, 1 << 64),
        ] {
            let ln_q1 = ((q - 1) as f64).ln();
            let exact = exact_ln_bound(n, m as usize, ln_q1);
            let got = ln_bound(n as u64, m, ln_q1);
            assert!(got >= exact, "n={n} m={m}: {got} < exact {exact}");
            assert!(
                got - exact < 1e-3 || exact > 700.0,
                "n={n} m={m}: {got} vs exact {exact}"
            );
        }
    }

    /// The extension (n > K + W + 1) against the exact recursion where the latter is cheap.
    #[test]
    fn extension_bounds_exact_recursion() {
        let ln_q1 = ((1u128 << 32) - 1) as f64;
        let ln_q1 = ln_q1.ln();
        let n = 6000;
        let exact = exact_ln_bound(n, 10, ln_q1);
        let got = ln_bound(n as u64, 10, ln_q1);
        assert!(got >= exact, "{got} < {exact}");
        // Within a factor 1.01 of the exact second moment (1 + G and the crude middles).
        assert!(got - exact < 0.01, "{got} vs {exact}");
    }
}
