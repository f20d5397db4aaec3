//! Cost counters of TSS and TSS' (spec `06-frequency.md`, "TSS", "TSS'"; seed Table I was not
//! recovered, so the closed forms here are blanket's own count of Algorithm 3 as specified in
//! `docs/frequency.md`, "TSS costs").
//!
//! Exact closed forms given one run's transcript ([`TssTranscript`]: the report counts m_j,
//! the helper counts h_j = m_j (TSS) or max(m_j, phi + 1) (TSS'), the number K of shares a
//! reporter addresses to itself because S1 elected it as a helper of its own reported item, and
//! for adaptive chi the number I of users whose set was drawn "with their item"), and expected
//! per-user communication over the protocol's randomness (for the seed's saving of about
//! 1/(p_chi alpha) against DPDS).

use serde::Serialize;

use super::RoleCost;

/// What one run's costs depend on (besides n, N and alpha N).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TssTranscript {
    /// m_j: users whose set A_i contains item j (what S1 counts).
    pub reports: Vec<u64>,
    /// h_j: helpers elected for item j.
    pub helpers: Vec<u64>,
    /// K = sum_j |R_j cap H_j|: shares a reporter keeps because it is a helper of that item.
    pub kept: u64,
    /// Adaptive chi: users whose Bernoulli(p_chi) put their own item into A_i (0 for uniform).
    pub included: u64,
}

/// Costs of one TSS run, summed over each role's parties (every user is a reporter, and some
/// are also helpers; the two roles are counted apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct TssCosts {
    /// All n users in the reporter role (set to S1, announcement from S1, shares to helpers).
    pub users: RoleCost,
    /// All (item, helper) pairs in the helper role (receive shares, sum, send to S2).
    pub helpers: RoleCost,
    /// Server S1 (counts m_j, elects and announces helpers).
    pub s1: RoleCost,
    /// Server S2 (sums the helper reports, scales).
    pub s2: RoleCost,
}

impl TssCosts {
    /// Mean field elements (and item indices) sent per user, both roles: (users + helpers) / n.
    pub fn mean_user_elements_sent(&self, n: u64) -> f64 {
        (self.users.elements_sent + self.helpers.elements_sent) as f64 / n as f64
    }

    /// Mean operations (random samples + additions + multiplications) per user, both roles.
    pub fn mean_user_operations(&self, n: u64) -> f64 {
        let ops = |c: &RoleCost| c.random_samples + c.additions + c.multiplications;
        (ops(&self.users) + ops(&self.helpers)) as f64 / n as f64
    }
}

/// The exact costs of a run with this transcript (`docs/frequency.md`, "TSS costs"), for n
/// users, N items, sets of a = alpha N items; `adaptive` for the adaptive chi.
pub fn closed_form(n: u64, a: u64, adaptive: bool, t: &TssTranscript) -> TssCosts {
    let items = t.reports.len() as u64;
    let s_mh: u64 = t.reports.iter().zip(&t.helpers).map(|(m, h)| m * h).sum();
    let s_h: u64 = t.helpers.iter().sum();
    let s_m1h: u64 = t
        .reports
        .iter()
        .zip(&t.helpers)
        .map(|(m, h)| m * h.saturating_sub(1))
        .sum();
    let set_draws = if adaptive {
        n + n * a - t.included
    } else {
        n * a
    };
    let helper_adds: u64 = t
        .reports
        .iter()
        .zip(&t.helpers)
        .map(|(m, h)| h * m.saturating_sub(1))
        .sum();
    TssCosts {
        users: RoleCost {
            messages_sent: n + s_mh - t.kept,
            messages_received: n,
            elements_sent: n * a + s_mh - t.kept,
            elements_received: s_mh + s_h,
            elements_kept: t.kept,
            random_samples: n + set_draws + s_m1h,
            additions: s_m1h,
            multiplications: 0,
        },
        helpers: RoleCost {
            messages_sent: s_h,
            messages_received: s_mh - t.kept,
            elements_sent: s_h,
            elements_received: s_mh - t.kept,
            elements_kept: 0,
            random_samples: 0,
            additions: helper_adds,
            multiplications: 0,
        },
        s1: RoleCost {
            messages_sent: n,
            messages_received: n,
            elements_sent: s_mh + s_h,
            elements_received: n * a,
            elements_kept: 0,
            random_samples: s_h,
            additions: n * a,
            multiplications: 0,
        },
        s2: RoleCost {
            messages_sent: 0,
            messages_received: s_h,
            elements_sent: 0,
            elements_received: s_h,
            elements_kept: 0,
            random_samples: 0,
            additions: t.helpers.iter().map(|h| h.saturating_sub(1)).sum(),
            multiplications: items,
        },
    }
}

/// ln Pr[Bin(n, p) = k] for k = 0..=kmax (log space, no underflow of (1 - p)^n).
fn binomial_log_pmf(n: u64, p: f64, kmax: u64) -> Vec<f64> {
    let kmax = kmax.min(n);
    let (lp, lq) = (p.ln(), (-p).ln_1p());
    let mut out = Vec::with_capacity(kmax as usize + 1);
    let mut ln_c = 0.0;
    for k in 0..=kmax {
        if k > 0 {
            ln_c += ((n - k + 1) as f64).ln() - (k as f64).ln();
        }
        let term = |c: f64, x: f64| if c == 0.0 { 0.0 } else { c * x };
        out.push(ln_c + term(k as f64, lp) + term((n - k) as f64, lq));
    }
    out
}

/// Pr[m = k], k = 0..=kmax, for m = Bin(n1, p1) + Bin(n2, p2) (independent).
fn two_binomial_pmf(n1: u64, p1: f64, n2: u64, p2: f64, kmax: u64) -> Vec<f64> {
    let a: Vec<f64> = binomial_log_pmf(n1, p1, kmax)
        .into_iter()
        .map(f64::exp)
        .collect();
    let b: Vec<f64> = binomial_log_pmf(n2, p2, kmax)
        .into_iter()
        .map(f64::exp)
        .collect();
    (0..=kmax as usize)
        .map(|k| {
            (0..=k)
                .filter(|&l| l < a.len() && k - l < b.len())
                .map(|l| a[l] * b[k - l])
                .sum()
        })
        .collect()
}

/// Largest phi for which [`expected_user_elements_sent`] evaluates the exact sums (O(phi^2)).
pub const EXPECTATION_MAX_PHI: u64 = 2000;

/// E[elements sent per user] over the protocol's randomness, both roles:
/// a + (1 - 1/n) E[sum_j m_j h_j] / n + E[sum_j h_j] / n, because a reporter of j is one of
/// the h_j uniformly elected helpers with probability h_j / n (so E[K | m] = sum m_j h_j / n).
/// m_j is Bin(Pi_j, p_chi) + Bin(n - Pi_j, r) with r = (a - p_chi) / (N - 1) (r = p_chi = a/N
/// for uniform chi); E[m h] = E[m^2] + sum_(k <= phi) k (phi + 1 - k) Pr[m = k] and
/// E[h] = E[m] + sum_(k <= phi) (phi + 1 - k) Pr[m = k]. None when phi > [`EXPECTATION_MAX_PHI`].
pub fn expected_user_elements_sent(
    pi: &[u64],
    a: u64,
    p_chi: f64,
    phi: Option<u64>,
) -> Option<f64> {
    let n: u64 = pi.iter().sum();
    let items = pi.len() as u64;
    let r = if items > 1 {
        (a as f64 - p_chi) / (items - 1) as f64
    } else {
        0.0
    };
    if phi.is_some_and(|f| f > EXPECTATION_MAX_PHI) {
        return None;
    }
    let (mut s_mh, mut s_h) = (0.0, 0.0);
    for &holders in pi {
        let others = n - holders;
        let mean = holders as f64 * p_chi + others as f64 * r;
        let var = holders as f64 * p_chi * (1.0 - p_chi) + others as f64 * r * (1.0 - r);
        let mut e_mh = var + mean * mean;
        let mut e_h = mean;
        if let Some(phi) = phi {
            let pmf = two_binomial_pmf(holders, p_chi, others, r, phi);
            for (k, pk) in pmf.iter().enumerate() {
                let short = (phi + 1 - k as u64) as f64;
                e_mh += k as f64 * short * pk;
                e_h += short * pk;
            }
        }
        s_mh += e_mh;
        s_h += e_h;
    }
    let nf = n as f64;
    Some(a as f64 + (1.0 - 1.0 / nf) * s_mh / nf + s_h / nf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomial_pmf_sums_to_one_and_matches_small_cases() {
        let p: Vec<f64> = binomial_log_pmf(4, 0.25, 10)
            .into_iter()
            .map(f64::exp)
            .collect();
        let exact = [
            81.0 / 256.0,
            108.0 / 256.0,
            54.0 / 256.0,
            12.0 / 256.0,
            1.0 / 256.0,
        ];
        for (a, b) in p.iter().zip(exact) {
            assert!((a - b).abs() < 1e-14, "{a} vs {b}");
        }
        let conv = two_binomial_pmf(3, 0.5, 2, 0.5, 5);
        // Bin(5, 1/2).
        for (k, c) in conv.iter().enumerate() {
            let want = [1.0, 5.0, 10.0, 10.0, 5.0, 1.0][k] / 32.0;
            assert!((c - want).abs() < 1e-14);
        }
        // No underflow at n = 10^6.
        let big = binomial_log_pmf(1_000_000, 0.5, 3);
        assert!(big.iter().all(|x| x.is_finite()));
    }

    /// E[m^2] by enumeration for n = 2, N = 2, a = 1, uniform chi (p_chi = 1/2): m_j ~ Bin(2, 1/2).
    #[test]
    fn expected_elements_by_hand() {
        // E[m^2] = 1/2 + 1 = 1.5 per item, two items: E[S_mh] = 3; E[S_h] = 2 (sum m_j = n a).
        // a + (1 - 1/2) 3/2 + 2/2 = 1 + 0.75 + 1.
        let e = expected_user_elements_sent(&[1, 1], 1, 0.5, None).unwrap();
        assert!((e - 2.75).abs() < 1e-12, "{e}");
        // TSS' with phi = 2 (h = 3 always): E[S_mh] = 3 E[m] per item = 3, both: 6; S_h = 6.
        let e = expected_user_elements_sent(&[1, 1], 1, 0.5, Some(2)).unwrap();
        assert!(
            (e - (1.0 + 0.5 * 6.0 / 2.0 + 6.0 / 2.0)).abs() < 1e-12,
            "{e}"
        );
        assert!(
            expected_user_elements_sent(&[1, 1], 1, 0.5, Some(EXPECTATION_MAX_PHI + 1)).is_none()
        );
    }
}
