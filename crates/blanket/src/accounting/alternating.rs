//! Accounting for the 2-round alternating shuffler A^2_pi of Balle, Bell and Gascon,
//! "Amplification by Shuffling without Shuffling", ACM CCS 2023 (arXiv 2305.10867); the
//! shuffler is [`crate::shuffle::alternating`], the derivation `docs/multi-message.md`
//! ("Accounting for the alternating shuffler").
//!
//! **What is proved** (for any single-message protocol: each user sends one report
//! R(x_j), drawn independently): with the layout of [`crate::shuffle::alternating::GridLayout`]
//! (w = ceil(sqrt(n)) columns, h = ceil(n / w) rows, the last row holding r <= w cells in
//! columns 0..r), the privacy curve of the analyzer's view under A^2_pi, for a differing user
//! in a full row, is at most that of a *uniform* shuffle of R among w users and at most that
//! among h_min = floor(n / w) users (the smallest column height); for a differing user in a
//! ragged last row (r < w), among r users and among h users. So
//!
//! delta_{A^2_pi, n}(eps) <= max over the user classes of min over the class's two sizes k of
//! delta_{uniform, k}(eps) (and of the class's joint clone bound, below),
//!
//! and any certified uniform-shuffle accountant evaluated at those k certifies A^2_pi at n
//! ([`AlternatingAccountant::user_classes`]). For a perfect square n both sizes are sqrt(n).
//!
//! *Proof.* Fix pi (public, data-independent: the guarantee of (pi, view) is the average over
//! pi of the guarantee given pi); user i, the differing one, is in row r0.
//!
//! *Column bound.* Give the analyzer, in addition, every row permutation sigma
//! (data-independent; its real view is a post-processing of (sigma, view)). Given sigma it
//! knows which users share each column, and the column round turns each column into the
//! multiset of its users' reports. Reports are independent, so the columns are independent
//! given sigma and only the column c* holding user i depends on x_i: the hockey-stick
//! divergence of a product with identical other factors equals that of the differing factor,
//! a uniform shuffle of the |c*| users of that column (the others' inputs fixed, covered by
//! the worst case over datasets). The true curve of a uniform shuffle is non-increasing in
//! the number of users (one more user's independent report added to the multiset is
//! post-processing), so it is at most the curve at the smallest height of a column user i
//! can land in (h_min for a full row; h for the ragged row, which covers columns 0..r only).
//! Averaging over sigma, distributed alike under both neighbours, keeps the bound.
//!
//! *Row bound.* Give the analyzer, in addition, the row permutations of every row but r0 and
//! hence the reports B_c of the other rows' users in each column c; B is independent of row
//! r0's reports and of x_i. Column c's multiset is B_c plus the report of the row-r0 user that
//! sigma_r0 sends to c, so the view is a post-processing of (B, the row-r0 reports listed in
//! column order). That list is a uniformly random ordering of the reports of row r0's users,
//! i.e. a uniform shuffle of |row r0| users (w, or r for the ragged row). QED.
//!
//! **Joint clone reduction** (`alternating-clones`, [`super::alternating_clones`], proof in
//! `docs/alternating.md`): a third certified bound per class that hides user i at the same
//! time in its row (which column holds it is unknown) and in its column, built on the FMT
//! clone decomposition. Its effective number of clones is about p^2 n instead of p sqrt(n),
//! so for large n it is the binding one. The accountant takes, per class, the smallest of
//! the three certified bounds (row, column, joint) at each eps, the largest over the classes,
//! and reports the method that certified it ([`Method::AlternatingClones`] for the joint one).
//!
//! **What is still not used** (so not claimed): the paper's proof shape (per-column
//! amplification subsampled by the probability ~1/sqrt(n) of landing in a column, composed
//! over the columns) with its e^(5 eps0 / 2) dependence; see `docs/multi-message.md`.
//!
//! A size k = 1 (a row or column of one user) is the local randomizer itself: eps0-DP, and for
//! GRR the exact local curve.

use super::alternating_clones::{joint_classes, AlternatingClones};
use super::{
    raise_until_certified, round_up, AccountingError, Guarantee, LocalRandomizer, Method,
    ShuffleAccountant,
};
use crate::params::{Delta, DomainSize, Epsilon, NumUsers};

/// A certified accountant for single-message protocols over the alternating shuffler A^2_pi:
/// per user class the smallest of the wrapped uniform-shuffle accountant `A` at the user
/// counts of [`AlternatingAccountant::user_classes`] and the joint clone reduction
/// [`AlternatingClones`] (see the module documentation for the proofs).
///
/// It implements [`ShuffleAccountant`] with `n` meaning the number of users of the
/// *alternating* shuffler (the layout [`crate::shuffle::alternating::GridLayout::new`]`(n)`),
/// so it can be handed to [`crate::calibrate::calibrate`] as is. The [`Method`] it reports
/// is the one that certified the binding class's bound: an inner method, or
/// [`Method::AlternatingClones`].
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

    /// (w, h, r) of the layout for n >= 1 users: w = ceil(sqrt(n)) columns, h = ceil(n / w)
    /// rows, r = n - (h - 1) w cells in the last row (r = w: not ragged).
    fn layout(n: u64) -> (u64, u64, u64) {
        let mut w = n.isqrt();
        if w * w < n {
            w += 1;
        }
        let h = n.div_ceil(w);
        (w, h, n - (h - 1) * w)
    }

    /// The smallest column height of the layout for n users: floor(n / w) with
    /// w = ceil(sqrt(n)) (columns right of a ragged last row hold h - 1 users). At least 1
    /// for n >= 1.
    pub fn column_users(n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        n / Self::layout(n).0
    }

    /// The users' classes and, for each, the sizes k of the uniform shuffles whose curve
    /// bounds that user's (the minimum over them applies; the maximum over classes is the
    /// guarantee): `[row, column]` user counts. Full rows: [w, h_min]; the ragged last row
    /// (r < w cells, all landing in columns of height h): [r, h]. For n = 0, none.
    pub fn user_classes(n: u64) -> Vec<[u64; 2]> {
        if n == 0 {
            return vec![];
        }
        let (w, h, r) = Self::layout(n);
        let mut classes = vec![];
        if h > 1 || r == w {
            classes.push([w, n / w]);
        }
        if r < w {
            classes.push([r, h]);
        }
        classes
    }

    /// Each class's options, in the order of [`AlternatingAccountant::user_classes`]: the
    /// joint clone reduction (`alternating-clones`), then the uniform shuffles of the row and
    /// of the column.
    fn class_options(n: u64) -> Vec<[Bound; 3]> {
        Self::user_classes(n)
            .into_iter()
            .zip(joint_classes(n))
            .map(|([row, col], (jrow, h_other))| {
                [
                    Bound::Joint { row: jrow, h_other },
                    Bound::Uniform(row),
                    Bound::Uniform(col),
                ]
            })
            .collect()
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
                reason: "a shuffle of one user: a generic randomizer is only eps0-DP".into(),
            }),
        }
    }

    /// Certified delta(eps) of one option (uniform k = 1: the local curve).
    fn delta_k(&self, r: &LocalRandomizer, b: Bound, eps: f64) -> Result<f64, AccountingError> {
        match b {
            Bound::Joint { row, h_other } => {
                if !(eps >= 0.0) {
                    return Err(AccountingError::NotApplicable {
                        method: Method::AlternatingClones,
                        reason: format!("eps must be >= 0, got {eps}"),
                    });
                }
                Ok(AlternatingClones::class_bound(r, row, h_other)?.delta(eps))
            }
            Bound::Uniform(k) => match NumUsers::new(k) {
                Ok(kk) => self.inner.delta(r, kk, eps),
                Err(_) => Self::single_user_delta(r, eps),
            },
        }
    }

    /// Certified guarantee at delta of one option (uniform k = 1: eps0).
    fn guarantee_k(
        &self,
        r: &LocalRandomizer,
        b: Bound,
        delta: Delta,
    ) -> Result<Guarantee, AccountingError> {
        match b {
            Bound::Joint { row, h_other } => Ok(Guarantee {
                epsilon: AlternatingClones::class_bound(r, row, h_other)?.epsilon(delta.get()),
                delta: delta.get(),
                method: Method::AlternatingClones,
            }),
            Bound::Uniform(k) => match NumUsers::new(k) {
                Ok(kk) => self.inner.guarantee(r, kk, delta),
                Err(_) => Ok(Guarantee {
                    epsilon: r.eps0(),
                    delta: delta.get(),
                    method: self.inner.method(),
                }),
            },
        }
    }

    fn certify_k(&self, r: &LocalRandomizer, b: Bound, eps: f64, delta: f64) -> Option<Method> {
        match b {
            Bound::Joint { row, h_other } => {
                let jc = AlternatingClones::class_bound(r, row, h_other).ok()?;
                (eps >= 0.0 && jc.delta(eps) <= delta).then_some(Method::AlternatingClones)
            }
            Bound::Uniform(k) => match NumUsers::new(k) {
                Ok(kk) => self.inner.certify_at(r, kk, eps, delta),
                Err(_) => Self::single_user_delta(r, eps)
                    .is_ok_and(|d| d <= delta)
                    .then(|| self.inner.method()),
            },
        }
    }

    /// For each class the best option's result, then the worst class (by `worse`). A class
    /// none of whose options answers makes the whole an error.
    fn max_min<T: Copy>(
        n: NumUsers,
        f: impl Fn(Bound) -> Result<T, AccountingError>,
        better: impl Fn(&T, &T) -> bool,
    ) -> Result<T, AccountingError> {
        let mut worst: Option<T> = None;
        for class in Self::class_options(n.get()) {
            let mut best: Option<T> = None;
            let mut err = None;
            for b in class {
                match f(b) {
                    Ok(v) => {
                        if best.as_ref().is_none_or(|b| better(&v, b)) {
                            best = Some(v);
                        }
                    }
                    Err(e) => {
                        err.get_or_insert(e);
                    }
                }
            }
            let Some(b) = best else {
                return Err(err.expect("a class has options"));
            };
            if worst.as_ref().is_none_or(|w| better(w, &b)) {
                worst = Some(b);
            }
        }
        Ok(worst.expect("n >= 2 has a class"))
    }
}

/// One certified bound for a class of users (module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    /// The joint clone reduction of [`super::alternating_clones`] for a row of `row` users
    /// and `h_other` other full rows.
    Joint { row: u64, h_other: u64 },
    /// The uniform shuffle of k users (the row bound or the column bound).
    Uniform(u64),
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
        Self::max_min(
            n,
            |b| self.guarantee_k(randomizer, b, delta),
            |a, b| a.epsilon < b.epsilon,
        )
    }

    /// Certified when every class has an option that certifies (eps, delta); the method
    /// reported is the first class's certifying option (joint reduction first).
    fn certify_at(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
        eps: f64,
        delta: f64,
    ) -> Option<Method> {
        let mut method = None;
        for class in Self::class_options(n.get()) {
            let m = class
                .iter()
                .find_map(|&b| self.certify_k(randomizer, b, eps, delta))?;
            method.get_or_insert(m);
        }
        method
    }

    fn delta(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
        eps: f64,
    ) -> Result<f64, AccountingError> {
        Self::max_min(n, |b| self.delta_k(randomizer, b, eps), |a, b| a < b)
    }

    /// The largest over classes of the smallest over options of the option's smallest
    /// certified gamma (uniform sizes: the inner `min_gamma`; k = 1 and the joint
    /// reduction: bisection on their own check), raised until
    /// [`ShuffleAccountant::certify_at`] holds.
    fn min_gamma(
        &self,
        m: DomainSize,
        n: NumUsers,
        eps: Epsilon,
        delta: Delta,
    ) -> Result<f64, AccountingError> {
        let certified = super::certifies_grr_at(self, m, n, eps, delta);
        let own = |b: Bound| {
            super::smallest_certified_gamma(|gamma| {
                let r = LocalRandomizer::Grr { m: m.get(), gamma };
                self.certify_k(&r, b, eps.get(), delta.get()).is_some()
            })
            .ok_or_else(|| AccountingError::unreachable(self.inner.method(), m, n, eps, delta))
        };
        let gamma0 = Self::max_min(
            n,
            |b| match b {
                Bound::Uniform(k) => match NumUsers::new(k) {
                    Ok(kk) => self.inner.min_gamma(m, kk, eps, delta),
                    Err(_) => own(b),
                },
                Bound::Joint { .. } => own(b),
            },
            |a, b| a < b,
        )?;
        raise_until_certified(gamma0, certified)
            .ok_or_else(|| AccountingError::unreachable(self.inner.method(), m, n, eps, delta))
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
                    let joint = AlternatingClones.delta(&r, nn, eps).unwrap();
                    println!(
                        "n={n} m={m} gamma={gamma} eps={eps}: exact {:.6} bound {:.6} (joint {:.6})",
                        exact[k], bound, joint
                    );
                    assert!(
                        bound >= exact[k] - 1e-12 && joint >= exact[k] - 1e-12,
                        "n={n} m={m} gamma={gamma} eps={eps}: bound {bound} or joint {joint} < exact {}",
                        exact[k]
                    );
                    assert!(bound <= joint, "the accountant takes the min");
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
    fn user_classes_match_the_layout() {
        for n in 1..400usize {
            let l = GridLayout::new(n);
            let (w, h) = (l.width(), l.height());
            let r = l.row_len(h - 1);
            let mut want = vec![];
            if (0..h).any(|row| l.row_len(row) == w) {
                let min_col = (0..w).map(|c| l.column_height(c)).min().unwrap();
                want.push([w as u64, min_col as u64]);
            }
            if r < w {
                let max_col = (0..r).map(|c| l.column_height(c)).min().unwrap();
                want.push([r as u64, max_col as u64]);
            }
            assert_eq!(
                AlternatingAccountant::<Best>::user_classes(n as u64),
                want,
                "n = {n}"
            );
        }
    }

    #[test]
    fn min_gamma_is_certified_and_never_above_the_uniform_bounds() {
        let acct = AlternatingAccountant::new(Best::default());
        let m = DomainSize::new(2).unwrap();
        let eps = Epsilon::new(1.0).unwrap();
        let delta = Delta::new(1e-6).unwrap();
        for n in [2u64, 3, 5, 12, 99, 100, 10_000] {
            let nn = NumUsers::new(n).unwrap();
            let g = acct.min_gamma(m, nn, eps, delta).unwrap();
            let r = LocalRandomizer::Grr { m: 2, gamma: g };
            assert!(acct.certify_at(&r, nn, 1.0, 1e-6).is_some(), "n = {n}");
            assert!(
                acct.epsilon(&r, nn, delta).unwrap() <= 1.0 + 1e-6,
                "n = {n}"
            );
            if n.isqrt().pow(2) == n {
                // The uniform shuffle of sqrt(n) users is one of the options: never worse.
                let k = NumUsers::new(n.isqrt()).unwrap();
                let inner = Best::default().min_gamma(m, k, eps, delta).unwrap();
                assert!(g <= inner * (1.0 + 1e-8), "n = {n}: {g} > {inner}");
            }
        }
        // At n = 1e4 the joint clone reduction binds, and says so.
        let nn = NumUsers::new(10_000).unwrap();
        let g = acct.min_gamma(m, nn, eps, delta).unwrap();
        let r = LocalRandomizer::Grr { m: 2, gamma: g };
        assert_eq!(
            acct.certify_at(&r, nn, 1.0, 1e-6),
            Some(Method::AlternatingClones)
        );
    }

    /// The noise-cost table of `docs/alternating.md`: the histogram protocol calibrated to
    /// (eps, delta) = (1, 1e-8) under a uniform shuffle (`Best`) and under A^2_pi
    /// (`AlternatingAccountant<Best>`: the joint clone reduction and the row/column bounds),
    /// with the wall time of the A^2_pi calibration. Ignored (minutes); run with
    /// `cargo test -p blanket --lib alternating::tests::noise_cost_table -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn noise_cost_table() {
        use crate::calibrate::{calibrate, Target};
        use crate::protocol::histogram::HistogramShape;
        let uniform = Best::default();
        let alt = AlternatingAccountant::new(Best::default());
        println!("| m | n | h_min | gamma uniform | eps0 uniform | MSE uniform | gamma A2pi | eps0 A2pi | MSE A2pi | MSE ratio | method (A2pi) | A2pi calibration time |");
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
                let clock = std::time::Instant::now();
                let a = calibrate(&shape, &t, &alt).unwrap();
                let secs = clock.elapsed().as_secs_f64();
                println!(
                    "| {m} | {n} | {} | {:.4e} | {:.4} | {:.4e} | {:.4e} | {:.4} | {:.4e} | {:.2} | {} | {secs:.1} s |",
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
