//! Accounting for the 2-round alternating shuffler A^2_pi of Balle, Bell and Gascon,
//! "Amplification by Shuffling without Shuffling", ACM CCS 2023 (arXiv 2305.10867); the
//! shuffler is [`crate::shuffle::alternating`], the derivation `docs/multi-message.md`
//! ("Accounting for the alternating shuffler").
//!
//! **What is proved** (for any single-message protocol: each user sends one report
//! R(x_j), drawn independently): with the layout of [`crate::shuffle::alternating::GridLayout`]
//! (w = ceil(sqrt(n)) columns, h = ceil(n / w) rows, ragged last row), the analyzer's view
//! under A^2_pi is at least as private as a *uniform* shuffle of R among
//! h_min = floor(n / w) users, the smallest column height:
//!
//! delta_{A^2_pi, n}(eps) <= delta_{uniform, h_min}(eps) for every eps >= 0,
//!
//! so any certified uniform-shuffle accountant evaluated at h_min certifies A^2_pi at n.
//!
//! *Proof.* Fix pi (public, data-independent: the guarantee of (pi, view) is the average over
//! pi of the guarantee given pi). Give the analyzer, in addition, every row permutation
//! sigma (data-independent; more information can only help it, and its real view is a
//! post-processing of (sigma, view)). Given sigma, the analyzer knows which users share each
//! column, and the column round turns each column into a uniformly ordered list, i.e. the
//! multiset of the reports of its users. Reports are independent, so the columns are
//! independent given sigma, and only the column c* holding the differing user i depends on
//! x_i: the hockey-stick divergence of a product with identical other factors equals that of
//! the differing factor. The c* factor is a uniform shuffle of the |c*| >= h_min users of
//! that column (the others' inputs fixed, covered by the worst case over datasets). The true
//! curve of a uniform shuffle is non-increasing in the number of users (adding one more user's
//! independent report to the multiset is post-processing), so it is at most the curve at
//! h_min, and a certified accountant bounds that. Averaging over (pi, sigma), which have the
//! same distribution under both neighbours, keeps the bound. QED.
//!
//! **What is not used** (so not claimed): the row round's hiding of *which* column holds
//! user i. The paper's proof shape (each column a shuffle of about sqrt(n) users, amplified
//! by the probability about 1/sqrt(n) that the differing user is in it, composed over the
//! columns) would give the better n^(-1/2) rate, but the columns are dependent (each row's
//! reports are split across columns by one permutation) and the differing user is in exactly
//! one column, so "subsampling" has no neutral branch identical under both neighbours; we did
//! not prove that step, and this accountant does not take it. The bound here decays with
//! h_min ~ sqrt(n) users, i.e. at the uniform shuffle's rate in sqrt(n) instead of n.
//!
//! With h_min = 1 (n in {2, 3, 5}) the column bound is the local randomizer itself: eps0-DP,
//! and for GRR the exact local curve.

use super::{
    grr_local_epsilon, round_up, smallest_certified_gamma, AccountingError, Guarantee,
    LocalRandomizer, Method, ShuffleAccountant,
};
use crate::params::{Delta, DomainSize, Epsilon, NumUsers};

/// A certified accountant for single-message protocols over the alternating shuffler A^2_pi:
/// the wrapped uniform-shuffle accountant `A`, evaluated at the smallest column height
/// h_min = floor(n / ceil(sqrt(n))) (see the module documentation for the proof).
///
/// It implements [`ShuffleAccountant`] with `n` meaning the number of users of the
/// *alternating* shuffler (the layout [`crate::shuffle::alternating::GridLayout::new`]`(n)`),
/// so it can be handed to [`crate::calibrate::calibrate`] as is. The [`Method`] it reports
/// is the inner method that certified the column bound.
#[derive(Debug, Clone, Default)]
pub struct AlternatingAccountant<A> {
    inner: A,
}

impl<A: ShuffleAccountant> AlternatingAccountant<A> {
    /// A^2_pi accounting through the uniform-shuffle accountant `inner`.
    pub fn new(inner: A) -> Self {
        Self { inner }
    }

    /// The wrapped uniform-shuffle accountant.
    pub fn inner(&self) -> &A {
        &self.inner
    }

    /// The smallest column height of the layout for n users: floor(n / w) with
    /// w = ceil(sqrt(n)) (columns right of a ragged last row hold h - 1 users). At least 1
    /// for n >= 1.
    pub fn column_users(n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        let mut w = n.isqrt();
        if w * w < n {
            w += 1;
        }
        n / w
    }

    /// The number of users of the uniform shuffle the bound reduces to, or `None` when the
    /// smallest column holds a single user (then only local privacy applies).
    fn column(n: NumUsers) -> Option<NumUsers> {
        NumUsers::new(Self::column_users(n.get())).ok()
    }

    fn single_user_delta(r: &LocalRandomizer, eps: f64) -> Result<f64, AccountingError> {
        if !(eps >= 0.0) {
            return Err(AccountingError::NotApplicable {
                method: Method::Best,
                reason: format!("eps must be >= 0, got {eps}"),
            });
        }
        if eps >= r.eps0() {
            return Ok(0.0);
        }
        match *r {
            // GRR(a) vs GRR(b): only the output a has likelihood ratio > e^eps, so
            // delta(eps) = (1 - gamma + gamma / m) - e^eps gamma / m.
            LocalRandomizer::Grr { m, gamma } => {
                let mf = f64::from(m);
                let d = (1.0 - gamma + gamma / mf) - eps.exp() * gamma / mf;
                Ok(round_up(d.max(0.0), 4).min(1.0))
            }
            LocalRandomizer::Generic { .. } => Err(AccountingError::NotApplicable {
                method: Method::Best,
                reason: "a column of one user: a generic randomizer is only eps0-DP".into(),
            }),
        }
    }
}

impl<A: ShuffleAccountant> ShuffleAccountant for AlternatingAccountant<A> {
    fn method(&self) -> Method {
        self.inner.method()
    }

    fn epsilon(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
        delta: Delta,
    ) -> Result<f64, AccountingError> {
        self.guarantee(randomizer, n, delta).map(|g| g.epsilon)
    }

    fn guarantee(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
        delta: Delta,
    ) -> Result<Guarantee, AccountingError> {
        match Self::column(n) {
            Some(col) => self.inner.guarantee(randomizer, col, delta),
            None => Ok(Guarantee {
                epsilon: randomizer.eps0(),
                delta: delta.get(),
                method: self.inner.method(),
            }),
        }
    }

    fn certify_at(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
        eps: f64,
        delta: f64,
    ) -> Option<Method> {
        match Self::column(n) {
            Some(col) => self.inner.certify_at(randomizer, col, eps, delta),
            None => Self::single_user_delta(randomizer, eps)
                .is_ok_and(|d| d <= delta)
                .then(|| self.inner.method()),
        }
    }

    fn delta(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
        eps: f64,
    ) -> Result<f64, AccountingError> {
        match Self::column(n) {
            Some(col) => self.inner.delta(randomizer, col, eps),
            None => Self::single_user_delta(randomizer, eps),
        }
    }

    fn min_gamma(
        &self,
        m: DomainSize,
        n: NumUsers,
        eps: Epsilon,
        delta: Delta,
    ) -> Result<f64, AccountingError> {
        match Self::column(n) {
            Some(col) => self.inner.min_gamma(m, col, eps, delta),
            None => smallest_certified_gamma(|gamma| {
                let r = LocalRandomizer::Grr { m: m.get(), gamma };
                grr_local_epsilon(m.get(), gamma).is_finite()
                    && self.certify_at(&r, n, eps.get(), delta.get()).is_some()
            })
            .ok_or_else(|| AccountingError::unreachable(self.inner.method(), m, n, eps, delta)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounting::Best;
    use crate::shuffle::alternating::GridLayout;
    use std::collections::HashMap;

    /// GRR(m, gamma) output probabilities for input x.
    fn grr_probs(m: usize, gamma: f64, x: usize) -> Vec<f64> {
        (0..m)
            .map(|y| gamma / m as f64 + if y == x { 1.0 - gamma } else { 0.0 })
            .collect()
    }

    /// Distribution of the count vector (encoded base `base`, one digit per value) of the
    /// reports of `members`.
    fn column_dist(
        members: &[usize],
        x: &[usize],
        m: usize,
        gamma: f64,
        base: u64,
    ) -> Vec<(u64, f64)> {
        let pow: Vec<u64> = (0..m).map(|v| base.pow(v as u32)).collect();
        let mut dist: HashMap<u64, f64> = HashMap::from([(0, 1.0)]);
        for &j in members {
            let p = grr_probs(m, gamma, x[j]);
            let mut next = HashMap::new();
            for (&code, &q) in &dist {
                for (y, &py) in p.iter().enumerate() {
                    *next.entry(code + pow[y]).or_insert(0.0) += q * py;
                }
            }
            dist = next;
        }
        dist.into_iter().collect()
    }

    /// All permutations of 0..k.
    fn permutations(k: usize) -> Vec<Vec<usize>> {
        if k == 0 {
            return vec![vec![]];
        }
        let mut out = Vec::new();
        for p in permutations(k - 1) {
            for pos in 0..k {
                let mut q = p.clone();
                q.insert(pos, k - 1);
                out.push(q);
            }
        }
        out
    }

    /// The exact distribution of the analyzer's view under A^2_pi with pi = identity (client
    /// j in row-major cell j; a fixed public pi loses no generality since every dataset is
    /// searched): the tuple of column multisets, averaged over all row permutations (the
    /// column round makes each column a multiset). Keys: per-column count codes, mixed radix.
    fn exact_view(layout: GridLayout, x: &[usize], m: usize, gamma: f64) -> HashMap<u64, f64> {
        let (h, w) = (layout.height(), layout.width());
        let base = h as u64 + 1;
        let col_radix = base.pow(m as u32);
        let row_perms: Vec<Vec<Vec<usize>>> =
            (0..h).map(|r| permutations(layout.row_len(r))).collect();
        let total: usize = row_perms.iter().map(Vec::len).product();
        let weight = 1.0 / total as f64;
        let mut view: HashMap<u64, f64> = HashMap::new();
        let mut idx = vec![0usize; h];
        for _ in 0..total {
            // Column members under this choice of row permutations.
            let mut cols: Vec<Vec<usize>> = vec![Vec::new(); w];
            for r in 0..h {
                let perm = &row_perms[r][idx[r]];
                for (k, &dest) in perm.iter().enumerate() {
                    cols[dest].push(r * w + k);
                }
            }
            let mut joint: Vec<(u64, f64)> = vec![(0, weight)];
            let mut scale = 1u64;
            for members in &cols {
                let d = column_dist(members, x, m, gamma, base);
                let mut next = Vec::with_capacity(joint.len() * d.len());
                for &(a, pa) in &joint {
                    for &(b, pb) in &d {
                        next.push((a + scale * b, pa * pb));
                    }
                }
                joint = next;
                scale *= col_radix;
            }
            for (k, p) in joint {
                *view.entry(k).or_insert(0.0) += p;
            }
            // Next combination (odometer).
            for r in 0..h {
                idx[r] += 1;
                if idx[r] < row_perms[r].len() {
                    break;
                }
                idx[r] = 0;
            }
        }
        view
    }

    fn hockey(p: &HashMap<u64, f64>, q: &HashMap<u64, f64>, eps: f64) -> f64 {
        let e = eps.exp();
        p.iter()
            .map(|(k, &pk)| (pk - e * q.get(k).copied().unwrap_or(0.0)).max(0.0))
            .sum()
    }

    /// Worst case over every dataset (values of the other users) and the differing user's
    /// cell class (a full row, and the ragged last row if any) of the exact A^2_pi
    /// hockey-stick divergence at each eps, both directions. GRR is symmetric under value
    /// relabelling, so the differing user holds 0 vs 1.
    fn worst_exact(n: usize, m: usize, gamma: f64, epss: &[f64]) -> Vec<f64> {
        let layout = GridLayout::new(n);
        let mut worst = vec![0.0f64; epss.len()];
        let mut cells = vec![0];
        if layout.row_len(layout.height() - 1) < layout.width() {
            cells.push(n - 1);
        }
        for &i in &cells {
            for code in 0..(m as u64).pow(n as u32 - 1) {
                let mut x = vec![0usize; n];
                let mut c = code;
                for (j, xj) in x.iter_mut().enumerate() {
                    if j != i {
                        *xj = (c % m as u64) as usize;
                        c /= m as u64;
                    }
                }
                let mut x1 = x.clone();
                x1[i] = 1;
                let p = exact_view(layout, &x, m, gamma);
                let q = exact_view(layout, &x1, m, gamma);
                for (k, &eps) in epss.iter().enumerate() {
                    worst[k] = worst[k].max(hockey(&p, &q, eps)).max(hockey(&q, &p, eps));
                }
            }
        }
        worst
    }

    #[test]
    fn column_users_is_the_smallest_column_height() {
        for n in 1..400usize {
            let l = GridLayout::new(n);
            let min = (0..l.width()).map(|c| l.column_height(c)).min().unwrap();
            let got = AlternatingAccountant::<Best>::column_users(n as u64);
            assert_eq!(got, min as u64, "n = {n}");
        }
    }

    /// The certified A^2_pi curve is never below the exact worst-case curve, found by
    /// enumerating every row permutation and every dataset at tiny n (square, rectangular
    /// and ragged layouts). Prints bound vs exact.
    #[test]
    fn never_below_brute_force_enumeration() {
        let acct = AlternatingAccountant::new(Best::default());
        let epss = [0.0, 0.1, 0.3, 0.6, 1.0];
        let cases: [(usize, usize); 8] = [
            (4, 2),
            (4, 3),
            (5, 2),
            (6, 2),
            (6, 3),
            (7, 2),
            (8, 2),
            (9, 2),
        ];
        for (n, m) in cases {
            for gamma in [0.3, 0.6, 0.9] {
                let exact = worst_exact(n, m, gamma, &epss);
                let r = LocalRandomizer::Grr { m: m as u32, gamma };
                let nn = NumUsers::new(n as u64).unwrap();
                for (k, &eps) in epss.iter().enumerate() {
                    let bound = acct.delta(&r, nn, eps).unwrap();
                    println!(
                        "n={n} m={m} gamma={gamma} eps={eps}: exact {:.6} bound {:.6}",
                        exact[k], bound
                    );
                    assert!(
                        bound >= exact[k] - 1e-12,
                        "n={n} m={m} gamma={gamma} eps={eps}: bound {bound} < exact {}",
                        exact[k]
                    );
                }
                // The epsilon direction too: at the certified eps for delta, the exact
                // curve is within delta.
                for delta in [1e-3, 1e-2, 0.1] {
                    let e = acct.epsilon(&r, nn, Delta::new(delta).unwrap()).unwrap();
                    let ex = worst_exact(n, m, gamma, &[e])[0];
                    assert!(
                        ex <= delta + 1e-12,
                        "n={n} m={m} gamma={gamma}: {ex} > {delta}"
                    );
                }
            }
        }
    }

    #[test]
    fn min_gamma_is_certified_and_delegates_to_the_column() {
        let acct = AlternatingAccountant::new(Best::default());
        let m = DomainSize::new(2).unwrap();
        let eps = Epsilon::new(1.0).unwrap();
        let delta = Delta::new(1e-6).unwrap();
        for n in [3u64, 5, 100, 10_000] {
            let nn = NumUsers::new(n).unwrap();
            let g = acct.min_gamma(m, nn, eps, delta).unwrap();
            let r = LocalRandomizer::Grr { m: 2, gamma: g };
            assert!(acct.certify_at(&r, nn, 1.0, 1e-6).is_some(), "n = {n}");
            let col = AlternatingAccountant::<Best>::column_users(n);
            if col >= 2 {
                let inner = Best::default()
                    .min_gamma(m, NumUsers::new(col).unwrap(), eps, delta)
                    .unwrap();
                assert_eq!(g, inner);
            } else {
                // One user per column: local privacy, eps0 <= 1 up to the delta slack.
                assert!(grr_local_epsilon(2, g) < 1.0 + 1e-3);
            }
        }
    }

    /// The noise-cost table of `docs/multi-message.md`: the histogram protocol calibrated to
    /// (eps, delta) = (1, 1e-8) under a uniform shuffle (`Best`) and under A^2_pi
    /// (`AlternatingAccountant<Best>`). Ignored (minutes); run with
    /// `cargo test -p blanket --lib alternating::tests::noise_cost_table -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn noise_cost_table() {
        use crate::calibrate::{calibrate, Target};
        use crate::protocol::histogram::HistogramShape;
        let uniform = Best::default();
        let alt = AlternatingAccountant::new(Best::default());
        println!("| m | n | h_min | gamma uniform | eps0 uniform | MSE uniform | gamma A2pi | eps0 A2pi | MSE A2pi | MSE ratio | method (A2pi) |");
        for m in [2u64, 100] {
            for n in [10_000u64, 1_000_000] {
                let t = Target {
                    eps: Epsilon::new(1.0).unwrap(),
                    delta: Delta::new(1e-8).unwrap(),
                    n: NumUsers::new(n).unwrap(),
                };
                let shape = HistogramShape {
                    m: DomainSize::new(m).unwrap(),
                };
                let u = calibrate(&shape, &t, &uniform).unwrap();
                let a = calibrate(&shape, &t, &alt).unwrap();
                println!(
                    "| {m} | {n} | {} | {:.4e} | {:.4} | {:.4e} | {:.4e} | {:.4} | {:.4e} | {:.2} | {} |",
                    AlternatingAccountant::<Best>::column_users(n),
                    u.gamma.get(),
                    u.eps0,
                    u.predicted_mse,
                    a.gamma.get(),
                    a.eps0,
                    a.predicted_mse,
                    a.predicted_mse / u.predicted_mse,
                    a.guarantee.method
                );
            }
        }
    }
}
