//! The alternating shuffler A^2_pi with **bad cells**: the grid of a protocol run holds the
//! accepted messages only, some of them sent by malicious clients (their messages known to,
//! or chosen by, the adversary), and how many cells there are depends on who dropped out.
//! Derivation: `docs/alternating.md`, "Bad cells: dropouts and malicious clients".
//!
//! **Scenario** ([`BadCells`]): the grid of [`crate::shuffle::alternating::GridLayout`]`(N)`
//! holds N cells, N anywhere in `[honest_min, cells_max]`; at least `honest_min` cells are
//! honest (so at most N - honest_min are bad) and at most `bad_max` are bad. The bad cells
//! may sit anywhere in the grid (the worst placement: the adversary may choose which cells
//! are bad after seeing the public placement pi, and which user is the target).
//!
//! **Statement.** For a cell count N, with b = min(bad_max, N - honest_min) and the layout's
//! w, full rows F, ragged row r: a user of a full row has g = max(1, w - b) good cells in its
//! row (itself included) and h_o = F - 1 other full rows; a user of a ragged row g =
//! max(1, r - b), h_o = F; the bad cells of the other full rows land in each column c
//! independently per row, beta_c bad cells in all with E beta_c <= mu = b / w. Then
//!
//! delta(eps) <= sum_s Pr[s] Phi~_s,  s - 1 ~ Bin(g* - 1, p),
//!
//! where, for the joint clone reduction's per-s value phi_s(h) (T ~ Bin(h, p), module
//! [`super::alternating_clones`]) and the tail bound Pr[max of s columns' beta >= m] <=
//! min(1, s e^-mu (e mu / m)^m) (m > mu), Psi_s bounds E phi_s(h* - M_s) through a
//! non-decreasing step majorant of phi_s(h* - m) on a grid of m, and Phi~_s = min over
//! s' <= s of Psi_s' (the true per-s value is non-increasing in s). g*, h* are the smallest
//! and mu* the largest over N and the class; the guarantee is the larger over the two
//! classes. Every step is monotone in the direction that makes the worst case the one
//! computed (convex order; docs).
//!
//! Per class the accountant also has the **column bound** (the uniform shuffle of the good
//! cells of the target's column, at least 1 + h* - beta of them, through the inner
//! uniform-shuffle accountant and the same tail with s = 1) and the **row bound** (the
//! uniform shuffle of the g* good cells of its row), and takes the smallest of the three.
//! A grid without blanket (g* = 1 and mu* >= h*: nothing beyond the local randomizer is
//! certified) is refused by [`CurveAccountant::curve`].

use super::alternating_clones::{AlternatingClones, BySize, JointClones, LATTICE_BUDGET};
use super::binomial::exp_up;
use super::clones::{smallest_eps, FINAL_MARGIN};
use super::{
    checked_eps0, round_up, AccountingError, CurveAccountant, LocalRandomizer, Method,
    PrivacyCurve, ShuffleAccountant, MAX_EPS0,
};
use crate::params::NumUsers;

/// Tail mass below which the grid of bad-cell counts m stops (the rest is charged in full).
const TAIL_STOP: f64 = 1e-40;

/// The bad-cell scenario of an alternating grid (module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadCells {
    honest_min: u64,
    cells_max: u64,
    bad_max: u64,
}

/// One class of target users, worst case over the scenario's cell counts: `row_good` good
/// cells in the target's row (itself included) and `h_other` other full rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadClass {
    /// Good cells of the target's row, target included (at least 1).
    pub row_good: u64,
    /// Other full rows (each puts one cell in every column).
    pub h_other: u64,
}

impl BadCells {
    /// A grid of N in `[honest_min, cells_max]` cells of which at least `honest_min` are
    /// honest and at most `bad_max` bad. Needs 2 <= honest_min <= cells_max.
    pub fn new(honest_min: u64, cells_max: u64, bad_max: u64) -> Result<Self, AccountingError> {
        if honest_min < 2 || honest_min > cells_max {
            return Err(AccountingError::NotApplicable {
                method: Method::AlternatingClones,
                reason: format!(
                    "the honest cells (honest_min = {honest_min}) must be at least 2 and at most the cells of the grid (cells_max = {cells_max})"
                ),
            });
        }
        Ok(Self {
            honest_min,
            cells_max,
            bad_max,
        })
    }

    /// The scenario of a protocol run over n clients with at most `max_dropouts` dropouts
    /// and `max_malicious` malicious clients: the grid holds the accepted messages, between
    /// n - D - G (every malicious client rejected, every dropout before encrypting) and n;
    /// at least n - D - G of them honest, at most G malicious.
    pub fn for_protocol(
        clients: u64,
        max_dropouts: u64,
        max_malicious: u64,
    ) -> Result<Self, AccountingError> {
        let honest = clients
            .saturating_sub(max_dropouts)
            .saturating_sub(max_malicious);
        Self::new(honest, clients, max_malicious)
    }

    /// The least number of honest cells (the users the guarantee is for).
    pub fn honest_min(&self) -> u64 {
        self.honest_min
    }

    /// Most cells of the grid.
    pub fn cells_max(&self) -> u64 {
        self.cells_max
    }

    /// Most bad cells.
    pub fn bad_max(&self) -> u64 {
        self.bad_max
    }

    /// The worst classes over the cell counts N (a full-row class and, if some N has a
    /// ragged row, a ragged-row class) and mu*, the largest b / w (rounded up).
    pub fn worst_classes(&self) -> (Vec<BadClass>, f64) {
        let mut full: Option<BadClass> = None;
        let mut ragged: Option<BadClass> = None;
        let mut mu = 0.0f64;
        let worse = |acc: &mut Option<BadClass>, c: BadClass| {
            *acc = Some(match *acc {
                None => c,
                Some(a) => BadClass {
                    row_good: a.row_good.min(c.row_good),
                    h_other: a.h_other.min(c.h_other),
                },
            });
        };
        for n in self.honest_min..=self.cells_max {
            let (w, h, r) = layout(n);
            let b = self.bad_max.min(n - self.honest_min);
            let full_rows = if r == w { h } else { h - 1 };
            if full_rows >= 1 {
                worse(
                    &mut full,
                    BadClass {
                        row_good: w.saturating_sub(b).max(1),
                        h_other: full_rows - 1,
                    },
                );
            }
            if r < w {
                worse(
                    &mut ragged,
                    BadClass {
                        row_good: r.saturating_sub(b).max(1),
                        h_other: full_rows,
                    },
                );
            }
            // b / w rounded up (one division: half an ulp).
            mu = mu.max(round_up(b as f64 / w as f64, 2));
        }
        (full.into_iter().chain(ragged).collect(), mu)
    }
}

/// (w, h, r) of `GridLayout::new(n)`, n >= 1.
fn layout(n: u64) -> (u64, u64, u64) {
    let mut w = n.isqrt();
    if w * w < n {
        w += 1;
    }
    let h = n.div_ceil(w);
    (w, h, n - (h - 1) * w)
}

/// An upper bound on Pr[beta >= m] for a sum beta of independent Bernoullis with mean at
/// most mu (Chernoff with the Poisson moment generating function: E e^(t beta) <=
/// e^(mu (e^t - 1)), t = ln(m / mu)): 1 for m <= mu, e^-mu (e mu / m)^m above.
fn poisson_tail(mu: f64, m: u64) -> f64 {
    let mf = m as f64;
    if !(mf > mu) {
        return 1.0;
    }
    if mu == 0.0 {
        return 0.0;
    }
    let l = (mu / mf).ln();
    let e = mf - mu + mf * l;
    exp_up(e + 1e-12 * (mf + mu + (mf * l).abs())).min(1.0)
}

/// The bound for one class: joint clone bounds at a grid of column clone counts.
#[derive(Debug, Clone)]
struct ClassBound {
    class: BadClass,
    mu: f64,
    /// (m, the joint clone bound for a row of `row_good` users and h_other - m other rows),
    /// m increasing from 0; the last m is h_other or has a negligible tail.
    grid: Vec<(u64, JointClones)>,
}

impl ClassBound {
    fn new(
        randomizer: &LocalRandomizer,
        class: BadClass,
        mu: f64,
    ) -> Result<Self, AccountingError> {
        let g = class.row_good;
        let h = class.h_other;
        // s <= g: the union bound over s columns never needs more than g.
        let mut grid = Vec::new();
        let mut m = 0u64;
        loop {
            grid.push((m, AlternatingClones::class_bound(randomizer, g, h - m)?));
            if m >= h || (g as f64) * poisson_tail(mu, m + 1) < TAIL_STOP {
                break;
            }
            // Unit steps near the mean, then about 10 % of m (a coarser step is still a
            // valid majorant, docs).
            let step = if (m as f64) < 2.0 * mu + 8.0 {
                1
            } else {
                (m / 10).max(1)
            };
            m = (m + step).min(h);
        }
        Ok(Self { class, mu, grid })
    }

    fn tau(&self, s: u64, m: u64) -> f64 {
        ((s as f64) * poisson_tail(self.mu, m) * (1.0 + 1e-12)).min(1.0)
    }

    fn delta(&self, eps: f64) -> f64 {
        let mut per_grid: Vec<Vec<f64>> = Vec::with_capacity(self.grid.len());
        for (_, jc) in &self.grid {
            match jc.delta_by_s(eps, LATTICE_BUDGET) {
                BySize::Zero => return 0.0,
                BySize::One => return 1.0,
                BySize::Values(v) => per_grid.push(v),
            }
        }
        let sw = self.grid[0].1.s_window();
        let s_lo = sw.lo + 1;
        let last_m = self.grid.last().map_or(0, |x| x.0);
        let mut running_min = 1.0f64;
        let mut total = 0.0f64;
        for i in 0..per_grid[0].len() {
            let s = s_lo + i as u64;
            // Non-decreasing step majorant over m and the expectation over M_s.
            let mut prev = 0.0f64;
            let mut psi = 0.0f64;
            for (j, vals) in per_grid.iter().enumerate() {
                let v = vals[i].max(prev).min(1.0);
                if j == 0 {
                    psi = v;
                } else {
                    psi += (v - prev) * self.tau(s, self.grid[j - 1].0 + 1);
                }
                prev = v;
            }
            if last_m < self.class.h_other {
                psi += (1.0 - prev) * self.tau(s, last_m + 1);
            }
            let psi = (psi * (1.0 + 1e-12)).min(1.0);
            running_min = running_min.min(psi);
            total += running_min * exp_up(sw.ln_at(sw.lo + i as u64));
        }
        ((total * FINAL_MARGIN + sw.below + sw.above) * FINAL_MARGIN).min(1.0)
    }
}

/// A uniform-shuffle bound of k users (k = 1: the local randomizer's own curve).
fn uniform_delta<A: ShuffleAccountant>(inner: &A, r: &LocalRandomizer, k: u64, eps: f64) -> f64 {
    if !(eps < r.eps0()) {
        return 0.0;
    }
    match NumUsers::new(k) {
        Ok(kk) if k >= 2 => inner.delta(r, kk, eps).unwrap_or(1.0).min(1.0),
        _ => match *r {
            // GRR(a) vs GRR(b): only the output a has likelihood ratio above e^eps.
            LocalRandomizer::Grr { m, gamma } => {
                let mf = f64::from(m);
                let d = (1.0 - gamma + gamma / mf) - eps.exp() * gamma / mf;
                round_up(d.max(0.0), 4).min(1.0)
            }
            LocalRandomizer::Generic { .. } => 1.0,
        },
    }
}

/// The curve of [`AlternatingBadCells`]: per class the smallest of the joint clone bound,
/// the column bound and the row bound (each with bad cells), the largest over the classes.
#[derive(Debug, Clone)]
pub struct BadCellsCurve<A> {
    classes: Vec<ClassBound>,
    eps0: f64,
    inner: A,
    randomizer: LocalRandomizer,
}

impl<A> BadCellsCurve<A> {
    /// The worst classes the curve bounds.
    pub fn classes(&self) -> Vec<BadClass> {
        self.classes.iter().map(|c| c.class).collect()
    }
}

impl<A: ShuffleAccountant> BadCellsCurve<A> {
    /// Column bound with bad cells: the target's column holds at least 1 + h_other - beta
    /// good cells (beta the bad cells the other full rows put there), a uniform shuffle of
    /// them; E over beta through the same step majorant as the joint bound (s = 1).
    fn column_delta(&self, c: &ClassBound, eps: f64) -> f64 {
        let h = c.class.h_other;
        let mut prev = 0.0f64;
        let mut psi = 0.0f64;
        for (j, &(m, _)) in c.grid.iter().enumerate() {
            let v = uniform_delta(&self.inner, &self.randomizer, 1 + h - m, eps)
                .max(prev)
                .min(1.0);
            if j == 0 {
                psi = v;
            } else {
                psi += (v - prev) * c.tau(1, c.grid[j - 1].0 + 1);
            }
            prev = v;
        }
        let last_m = c.grid.last().map_or(0, |x| x.0);
        if last_m < h {
            psi += (1.0 - prev) * c.tau(1, last_m + 1);
        }
        (psi * (1.0 + 1e-12)).min(1.0)
    }

    /// Certified delta(eps) of one class and the bound that gives it.
    fn class_delta(&self, c: &ClassBound, eps: f64) -> (f64, BadCellsBound) {
        let mut best = (c.delta(eps), BadCellsBound::Joint);
        if best.0 > 0.0 {
            let col = self.column_delta(c, eps);
            if col < best.0 {
                best = (col, BadCellsBound::Column);
            }
            let row = uniform_delta(&self.inner, &self.randomizer, c.class.row_good, eps);
            if row < best.0 {
                best = (row, BadCellsBound::Row);
            }
        }
        best
    }

    /// Certified delta(eps) and the bound of the binding class.
    pub fn delta_with_bound(&self, eps: f64) -> (f64, BadCellsBound) {
        self.classes.iter().map(|c| self.class_delta(c, eps)).fold(
            (0.0, BadCellsBound::Joint),
            |a, b| if b.0 > a.0 { b } else { a },
        )
    }
}

/// Which of the three bounds with bad cells certified a class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadCellsBound {
    /// The joint clone reduction with bad cells.
    Joint,
    /// The uniform shuffle of the target's column's good cells.
    Column,
    /// The uniform shuffle of the target's row's good cells.
    Row,
}

impl BadCellsBound {
    /// Name for reports.
    pub fn name(self) -> &'static str {
        match self {
            BadCellsBound::Joint => "alternating-clones with bad cells",
            BadCellsBound::Column => "uniform shuffle of the column's good cells",
            BadCellsBound::Row => "uniform shuffle of the row's good cells",
        }
    }
}

impl<A: ShuffleAccountant> PrivacyCurve for BadCellsCurve<A> {
    fn delta(&self, eps: f64) -> f64 {
        self.delta_with_bound(eps).0
    }

    fn epsilon(&self, delta: f64) -> f64 {
        if !(self.eps0 <= MAX_EPS0) {
            return self.eps0;
        }
        smallest_eps(|e| PrivacyCurve::delta(self, e), 0.0, self.eps0, delta)
    }
}

/// A^2_pi with bad cells as an accountant (method `alternating-clones`; per class the
/// smallest of the joint clone bound and the column and row bounds, the latter through the
/// uniform-shuffle accountant `inner`). `n` must be the scenario's `honest_min` (the users
/// the guarantee is stated for; the calibrator's error model uses it), anything else is
/// refused.
#[derive(Debug, Clone)]
pub struct AlternatingBadCells<A> {
    scenario: BadCells,
    inner: A,
}

impl<A: ShuffleAccountant + Clone> AlternatingBadCells<A> {
    /// The accountant for this scenario.
    pub fn new(scenario: BadCells, inner: A) -> Self {
        Self { scenario, inner }
    }

    /// The scenario.
    pub fn scenario(&self) -> BadCells {
        self.scenario
    }

    /// The curve for the scenario, whatever n (also where [`CurveAccountant::curve`]
    /// refuses a grid without blanket: the bound is then the local randomizer's curve).
    pub fn curve_for(
        &self,
        randomizer: &LocalRandomizer,
    ) -> Result<BadCellsCurve<A>, AccountingError> {
        let eps0 = checked_eps0(Method::AlternatingClones, randomizer)?;
        let (classes, mu) = self.scenario.worst_classes();
        let classes = classes
            .into_iter()
            .map(|c| ClassBound::new(randomizer, c, mu))
            .collect::<Result<_, _>>()?;
        Ok(BadCellsCurve {
            classes,
            eps0,
            inner: self.inner.clone(),
            randomizer: *randomizer,
        })
    }
}

impl<A: ShuffleAccountant + Clone> CurveAccountant for AlternatingBadCells<A> {
    type Curve = BadCellsCurve<A>;

    fn curve_method(&self) -> Method {
        Method::AlternatingClones
    }

    fn curve(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
    ) -> Result<BadCellsCurve<A>, AccountingError> {
        if n.get() != self.scenario.honest_min {
            return Err(AccountingError::NotApplicable {
                method: Method::AlternatingClones,
                reason: format!(
                    "this bad-cell accountant is for the {} honest users of its grid, not n = {}",
                    self.scenario.honest_min,
                    n.get()
                ),
            });
        }
        let (classes, mu) = self.scenario.worst_classes();
        if let Some(c) = classes
            .iter()
            .find(|c| c.row_good == 1 && !(mu < c.h_other as f64))
        {
            return Err(AccountingError::NotApplicable {
                method: Method::AlternatingClones,
                reason: format!(
                    "no blanket: with up to {} bad cells placed at worst among {} to {} cells, a target may have no honest user in its row and, on average, as many bad cells as other rows ({}) in its column (mean {mu:.3}), so no bound certifies more than the local randomizer's own guarantee",
                    self.scenario.bad_max, self.scenario.honest_min, self.scenario.cells_max, c.h_other
                ),
            });
        }
        self.curve_for(randomizer)
    }
}

#[cfg(test)]
mod tests;
