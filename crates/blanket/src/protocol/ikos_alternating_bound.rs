//! Certified share count for split-and-mix (IKOS) over the alternating shuffler A^2_pi, for
//! every layout of `GridLayout` (rectangular n = h w, and ragged: a short last row).
//!
//! blanket's own bound (derivation and proofs: `docs/multi-message.md`, section "IKOS over
//! the alternating shuffler A^2_pi: a certified bound"). For any two inputs with equal sums
//! mod q, TV(view(x), view(x')) <= sqrt(E), where
//!
//! E = sum_{s=1}^{s_max} C(n, s) V(s) / Delta(s)^(m-1),
//!
//! * s_max = n - ceil(n/q) (s counts the cells outside a most frequent value);
//! * V(s) = J(s) 2^(s-1) s! exp(min(F1, F2)) bounds the sum, over the labellings of s cells
//!   by the other q - 1 values with every value used at most n - s times, of
//!   prod_z a_z!^(m-1); J(s) is the number of possible value counts j, F1 and F2 the larger
//!   endpoint values of j ln(q - 1) + (m - 2) ln(s - j + 1)! and of
//!   j ln(q - 1) + (m - 2)(s - j) ln(A!)/(A - 1), A = n - s (Lemma D);
//! * Delta(s) = max(L_w(s) L_h(s), n^s e^(-s - s^2/n)), L_k(s) = (k!)^floor(s/k) (k)_(s mod k),
//!   a lower bound on the denominators of the diagonal bound (Lemmas C and E). For a ragged
//!   layout (F full rows of w, a last row of r < w cells) Delta(s) is replaced by
//!   Delta_F(min(s, F w)) e^(P(min(s, r))), Delta_F the same for the F x w grid of the full
//!   rows and P(k) = sum_{i<k} min(0, ln((r - i)(F + 1)/(w F))) (Lemma F of the docs).
//!
//! s <= [`DIRECT`] are summed one by one; above, blocks [a, b] of width at most a/[`BLOCK`]
//! are bounded by the block's largest factors (every factor is monotone in s, see the docs),
//! so the cost is O(DIRECT + BLOCK ln n) per m; a block whose bound is within 30 nats of the
//! target (or of the s = 1 term) is halved until it is not, or is a single term, so the
//! blocks' slack no longer decides m. Every log is rounded up by a slack that dominates its
//! floating-point error.

use super::ln_factorial::LnFactorial;
use crate::field::Modulus;
use crate::protocol::ikos::{IkosError, MAX_SHARES, MAX_SIGMA, MAX_USERS};
use crate::shuffle::GridLayout;
use thiserror::Error;

/// Terms s <= DIRECT are evaluated one by one.
pub const DIRECT: u64 = 10_000;

/// Above [`DIRECT`], blocks [a, b] have b - a <= a / BLOCK.
pub const BLOCK: u64 = 1024;

/// Why no share count over A^2_pi can be given.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AlternatingBoundError {
    /// A parameter rejected by the uniform-shuffle checks (n, m, sigma ranges).
    #[error(transparent)]
    Ikos(#[from] IkosError),
}

/// A log value and the sum of the magnitudes that went into it (for the slack).
#[derive(Clone, Copy)]
struct Val {
    v: f64,
    mag: f64,
}

impl Val {
    fn new(v: f64) -> Self {
        Self { v, mag: v.abs() }
    }
    fn add(self, o: Val) -> Val {
        Val {
            v: self.v + o.v,
            mag: self.mag + o.mag,
        }
    }
    fn sub(self, o: Val) -> Val {
        Val {
            v: self.v - o.v,
            mag: self.mag + o.mag,
        }
    }
    fn scale(self, k: f64) -> Val {
        Val {
            v: self.v * k,
            mag: self.mag * k.abs(),
        }
    }
    fn max(self, o: Val) -> Val {
        Val {
            v: self.v.max(o.v),
            mag: self.mag.max(o.mag),
        }
    }
    fn min(self, o: Val) -> Val {
        Val {
            v: self.v.min(o.v),
            mag: self.mag.max(o.mag),
        }
    }
    /// The value rounded up past every floating-point error of its inputs.
    fn up(self) -> f64 {
        self.v + 64.0 * f64::EPSILON * self.mag + 1e-12
    }
    /// The value rounded down.
    fn down(self) -> f64 {
        self.v - 64.0 * f64::EPSILON * self.mag - 1e-12
    }
}

struct Grid {
    /// All n cells (counting: C(n, s), s_max, A = n - s).
    n: f64,
    /// The full rows: an h x w grid of n0 = h w cells (h = F, the full rows, when ragged).
    n0: f64,
    h: f64,
    w: f64,
    /// The ragged last row, if any.
    ragged: Option<Ragged>,
    m: f64,
    ln_q1: f64,
    q1: f64,
    lf: LnFactorial,
}

/// The short last row of a ragged layout (r cells, 1 <= r < w) under F full rows.
struct Ragged {
    r: f64,
    /// i0 = max(0, r - u), u = floor((w F - 1) / (F + 1)): the first i with
    /// (r - i)(F + 1) < w F (the terms of P below i0 are not negative).
    i0: f64,
    /// ln(F + 1) - ln(w F) (negative).
    ln_ratio: Val,
}

impl Grid {
    fn lf(&self, k: f64) -> Val {
        Val::new(self.lf.below(k))
    }

    /// ln L_k(s) = floor(s/k) ln k! + ln (k)_(s mod k) (k = row length or column height).
    fn ln_l(&self, k: f64, s: f64) -> Val {
        let full = (s / k).floor();
        let rem = s - full * k;
        self.lf(k).scale(full).add(self.lf(k)).sub(self.lf(k - rem))
    }

    /// ln Delta(s) of the full-row grid (h x w, n0 cells), rounded down (it is subtracted).
    fn ln_delta_full(&self, s: f64) -> f64 {
        let a = self.ln_l(self.w, s).add(self.ln_l(self.h, s));
        let b = Val::new(s * self.n0.ln())
            .sub(Val::new(s))
            .sub(Val::new(s * s / self.n0));
        a.down().max(b.down())
    }

    /// P(k) = sum_{i < k} min(0, ln((r - i)(F + 1)) - ln(w F)) for the ragged row (k <= r),
    /// rounded down: ln (r - i0)! - ln (r - k)! + (k - i0)(ln(F + 1) - ln(w F)) for k > i0.
    /// Rounding: `LnFactorial::below` omits Stirling's remainder (a lower value of ln k!, short by
    /// less than 1/(1260 k^5) < 1e-15 for k >= 256), right for the + ln (r - i0)! and short
    /// for the - ln (r - k)!; `down()`'s 1e-12 covers that and the float error.
    fn ln_penalty(&self, g: &Ragged, k: f64) -> f64 {
        if k <= g.i0 {
            return 0.0;
        }
        let v = self
            .lf(g.r - g.i0)
            .sub(self.lf(g.r - k))
            .add(g.ln_ratio.scale(k - g.i0));
        v.down().min(0.0)
    }

    /// A lower bound on ln prod_r (w_r)_{s_r} prod_c (h_c)_{t_c} over the labellings with s
    /// cells not labelled z0 whose block is [s, b] (b >= s), rounded down: ln Delta(s) for a
    /// rectangular grid (Lemma D), and ln Delta_F(min(s, n0)) + P(min(b, r)) for a ragged one
    /// (the ragged-row reduction of `docs/multi-message.md`; P is non-increasing).
    fn ln_delta(&self, s: f64, b: f64) -> f64 {
        match &self.ragged {
            None => self.ln_delta_full(s),
            Some(g) => {
                let full = self.ln_delta_full(s.min(self.n0));
                let pen = self.ln_penalty(g, b.min(g.r));
                Val::new(full).add(Val::new(pen)).down()
            }
        }
    }

    /// ln C(n, c) with c the point of [a, b] nearest n/2 (the largest value on the block).
    fn ln_choose_max(&self, a: f64, b: f64) -> Val {
        let half = (self.n / 2.0).floor();
        let c = if b <= half {
            b
        } else if a >= half {
            a
        } else {
            half
        };
        self.lf(self.n).sub(self.lf(c)).sub(self.lf(self.n - c))
    }

    /// ceil(s / (n - s)), at least 1: the fewest values that can share s cells when none
    /// is used more than n - s times.
    fn j_min(&self, s: f64) -> f64 {
        (s / (self.n - s)).ceil().max(1.0)
    }

    /// ln of the block bound: (b - a + 1) max_{s in [a,b]} C(n,s) V(s) / Delta(a)^(m-1).
    /// None when no labelling has s in [a, b] (more values needed than q - 1).
    fn ln_block(&self, a: f64, b: f64) -> Option<f64> {
        let ja = self.j_min(a);
        let jb = b.min(self.q1);
        if ja > jb {
            return None;
        }
        let m2 = self.m - 2.0;
        // lambda_A = ln A! / (A - 1) (the chord bound, Lemma D) is increasing in A and the
        // largest admissible part is A(s) = n - s <= n - a, so lambda_{n-a} serves the block.
        let big_a = self.n - a;
        let lambda = if big_a >= 2.0 {
            self.lf(big_a).scale(1.0 / (big_a - 1.0))
        } else {
            Val::new(0.0)
        };
        let f1 = |j: f64| Val::new(j * self.ln_q1).add(self.lf(b - j + 1.0).scale(m2));
        let f2 = |j: f64| Val::new(j * self.ln_q1).add(lambda.scale(m2 * (b - j)));
        let f1max = f1(ja).max(f1(jb));
        let f2max = f2(ja).max(f2(jb));
        let count_j = jb - ja + 1.0;
        let ln_v = Val::new(count_j.ln())
            .add(Val::new((b - 1.0) * core::f64::consts::LN_2))
            .add(self.lf(b))
            .add(f1max.min(f2max));
        let width = Val::new((b - a + 1.0).ln());
        let up = width.add(self.ln_choose_max(a, b)).add(ln_v).up();
        // ln_delta is already rounded down; round the combination up once more.
        let total = Val::new(up).sub(Val::new(self.ln_delta(a, b)).scale(self.m - 1.0));
        Some(total.up())
    }
}

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
    // Terms dropped below e^-700 of the largest (at most 2^40 of them) and the summation
    // error are covered by the 1e-9.
    max + sum.ln() + 1e-9
}

/// ln of the certified upper bound E on E[q^(C-1)] - 1 for an h x w grid, m shares and
/// modulus q (given as ln(q - 1) and q - 1). -inf when no labelling is non-constant.
#[cfg(test)]
pub(crate) fn ln_excess_bound(h: u64, w: u64, m: u32, q1: f64, ln_q1: f64) -> f64 {
    ln_excess_bound_layout(w, h * w, m, q1, ln_q1)
}

/// The same for the `GridLayout` rule with w columns and n cells (row-major, the last row
/// holding r = n - (ceil(n/w) - 1) w cells in columns 0..r): rectangular when r = w,
/// ragged otherwise (then bounded through the full rows, `docs/multi-message.md`).
pub(crate) fn ln_excess_bound_layout(w: u64, n: u64, m: u32, q1: f64, ln_q1: f64) -> f64 {
    ln_excess_bound_target(w, n, m, q1, ln_q1, None)
}

/// [`ln_excess_bound_layout`] refined against a target: blocks are refined down to
/// `target - 30` nats, and the sum may stop early (returning a value above the target) once
/// one term exceeds it.
fn ln_excess_bound_target(
    w: u64,
    n: u64,
    m: u32,
    q1: f64,
    ln_q1: f64,
    stop_above: Option<f64>,
) -> f64 {
    let h = n.div_ceil(w);
    let r = n - (h - 1) * w;
    let (full_rows, ragged) = if r == w {
        (h, None)
    } else {
        // u = floor((w F - 1)/(F + 1)), F = h - 1 >= 1: (r - i)(F + 1) < w F iff r - i <= u.
        let f = h - 1;
        let u = (w * f - 1) / (f + 1);
        let ln_ratio = Val::new(((f + 1) as f64).ln()).sub(Val::new(((w * f) as f64).ln()));
        (
            f,
            Some(Ragged {
                r: r as f64,
                i0: r.saturating_sub(u) as f64,
                ln_ratio,
            }),
        )
    };
    let grid = Grid {
        n: n as f64,
        n0: (full_rows * w) as f64,
        h: full_rows as f64,
        w: w as f64,
        ragged,
        m: f64::from(m),
        ln_q1,
        q1,
        lf: LnFactorial::new(),
    };
    // s_max = n - ceil(n / q), q = q1 + 1.
    let s_max = n.saturating_sub((n as f64 / (q1 + 1.0)).ceil() as u64);
    let floor = match stop_above {
        Some(target) => target - REFINE_MARGIN,
        // No target: the s = 1 term (a lower bound on the sum) sets the scale.
        None => grid.ln_block(1.0, 1.0).unwrap_or(f64::NEG_INFINITY) - REFINE_MARGIN,
    };
    ln_excess_sum(&grid, s_max, DIRECT, floor, stop_above)
}

/// Blocks whose bound exceeds the floor are halved until their bound is below it (or they
/// are single terms), within this many extra block evaluations per call.
const REFINE_BUDGET: u64 = 1 << 21;

/// The floor sits this many nats below the target (or the s = 1 term): every block left
/// unrefined contributes at most e^-30 of it (about 1e-13; at most ~10^5 blocks).
const REFINE_MARGIN: f64 = 30.0;

/// ln of the certified sum over s = 1..=s_max: terms s <= `direct` one by one, then blocks
/// [a, b] with b - a <= a / [`BLOCK`]; a block whose bound exceeds `floor` is split in halves
/// (each half bounded the same way, so every accepted piece is still an upper bound on its
/// terms) until it is a single term, below the floor, or the refinement budget is spent. The
/// coarse blocks lose (b - a) times the slopes of the factors that the block bound takes at
/// opposite ends (about ln n + (m - 1) ln n per term near s = n/2), which decided the
/// A^2_pi share count at large n before the refinement; the refined sum loses at most the
/// unrefined blocks below the floor. With `stop_above`, the sum stops as soon as one single
/// term exceeds it (the bound then exceeds the target whatever the rest) and returns a value
/// above it.
fn ln_excess_sum(grid: &Grid, s_max: u64, direct: u64, floor: f64, stop_above: Option<f64>) -> f64 {
    let mut terms = Vec::new();
    let mut budget = REFINE_BUDGET;
    let mut s = 1u64;
    let mut stack: Vec<(u64, u64)> = Vec::new();
    while s <= s_max {
        let b = if s <= direct {
            s
        } else {
            (s + (s / BLOCK).max(1)).min(s_max)
        };
        stack.push((s, b));
        while let Some((lo, hi)) = stack.pop() {
            let Some(t) = grid.ln_block(lo as f64, hi as f64) else {
                continue;
            };
            if lo == hi || t <= floor || budget == 0 {
                terms.push(t);
                if lo == hi && stop_above.is_some_and(|x| t > x) {
                    return log_sum_exp(&terms);
                }
                continue;
            }
            budget -= 1;
            let mid = lo + (hi - lo) / 2;
            // Lower half first (popped first): terms in increasing s.
            stack.push((mid + 1, hi));
            stack.push((lo, mid));
        }
        s = b + 1;
    }
    log_sum_exp(&terms)
}

/// The number of columns of `GridLayout::new(n)`, after the range check on n.
fn layout_width(n: u64) -> Result<u64, AlternatingBoundError> {
    if !(1..=MAX_USERS).contains(&n) {
        return Err(IkosError::UsersOutOfRange { n, max: MAX_USERS }.into());
    }
    Ok(GridLayout::new(n as usize).width() as u64)
}

fn q_parts(q: Modulus) -> (f64, f64) {
    let q1 = (q.q() - 1) as f64;
    (q1, q1.ln())
}

/// log2 of blanket's certified upper bound on the total variation distance between the
/// analyzer's views of any two inputs with equal sums mod q, for IKOS with m shares over the
/// alternating shuffler A^2_pi (m instances sharing pi, layout `GridLayout::new(n)`,
/// rectangular or ragged): min(0, log2 sqrt(E)). Derivation: `docs/multi-message.md`.
pub fn alternating_distance_bound_log2(
    n: u64,
    m: u32,
    q: Modulus,
) -> Result<f64, AlternatingBoundError> {
    let w = layout_width(n)?;
    if !(2..=MAX_SHARES).contains(&m) {
        return Err(IkosError::SharesOutOfRange {
            m,
            min: 2,
            max: MAX_SHARES,
        }
        .into());
    }
    let (q1, ln_q1) = q_parts(q);
    let ln_e = ln_excess_bound_layout(w, n, m, q1, ln_q1);
    Ok((0.5 * ln_e / core::f64::consts::LN_2).min(0.0))
}

/// The smallest share count m for which blanket's certified bound makes IKOS over the
/// alternating shuffler A^2_pi sigma-secure (sqrt(E) <= 2^-sigma), for the layout
/// `GridLayout::new(n)` (any n; a ragged last row of r cells costs shares when r is small,
/// see the docs). Usually larger than [`crate::protocol::m_required`] for a uniform shuffle (the
/// bound is loose for level sets of about n/2 cells; see the docs). The sum is refined down
/// to 30 nats below the target ([`ln_excess_sum`]), so the count is the bound's, not the
/// summation's (12 at n = 10^6, q = 2^32, sigma = 40, where coarse blocks gave 13). n = 1
/// returns 2, the protocol's minimum.
pub fn m_required_alternating(
    n: u64,
    q: Modulus,
    sigma: u32,
) -> Result<u32, AlternatingBoundError> {
    let w = layout_width(n)?;
    if !(1..=MAX_SIGMA).contains(&sigma) {
        return Err(IkosError::SigmaOutOfRange {
            sigma,
            max: MAX_SIGMA,
        }
        .into());
    }
    if n == 1 {
        return Ok(2);
    }
    let (q1, ln_q1) = q_parts(q);
    let target = -2.0 * f64::from(sigma) * core::f64::consts::LN_2;
    for m in 2..=MAX_SHARES {
        if ln_excess_bound_target(w, n, m, q1, ln_q1, Some(target)) <= target {
            return Ok(m);
        }
    }
    Err(IkosError::NoShareCount {
        n,
        q: q.q(),
        sigma,
        max: MAX_SHARES,
    }
    .into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(bits: u32) -> Modulus {
        Modulus::power_of_two(bits).unwrap()
    }

    #[test]
    fn anchor_and_table_values() {
        // n = 10^4 = 100 x 100, q = 2^32, sigma = 40 (the seed's anchor; 10 for a uniform
        // shuffle of all shares).
        let m = m_required_alternating(10_000, q(32), 40).unwrap();
        assert_eq!(m, 12);
        let at = alternating_distance_bound_log2(10_000, m, q(32)).unwrap();
        let below = alternating_distance_bound_log2(10_000, m - 1, q(32)).unwrap();
        assert!(at <= -40.0 && below > -40.0, "{at} {below}");
        // The s = 1 term (q - 1) n^(2-m) dominates there: log2 sqrt = (32 - 10 log2 1e4)/2.
        let lead = (32.0 - 10.0 * (1e4f64).log2()) / 2.0;
        assert!(at >= lead - 1e-6 && at <= lead + 0.1, "{at} vs {lead}");
    }

    #[test]
    fn monotone_in_sigma_and_q_and_at_least_uniform() {
        for n in [100u64, 10_000, 1_000_000] {
            let mut prev = 0;
            for sigma in [20u32, 40, 60, 80] {
                let a = m_required_alternating(n, q(32), sigma).unwrap();
                let b = m_required_alternating(n, q(64), sigma).unwrap();
                assert!(a >= prev && b >= a, "n={n} sigma={sigma}: {prev} {a} {b}");
                // Never fewer shares than the uniform-shuffle bound asks for.
                assert!(a >= crate::protocol::m_required(n, q(32), sigma).unwrap());
                prev = a;
            }
        }
    }

    #[test]
    fn out_of_range_are_typed_errors() {
        assert!(matches!(
            m_required_alternating(0, q(32), 40),
            Err(AlternatingBoundError::Ikos(
                IkosError::UsersOutOfRange { .. }
            ))
        ));
        assert!(matches!(
            m_required_alternating(100, q(32), 0),
            Err(AlternatingBoundError::Ikos(
                IkosError::SigmaOutOfRange { .. }
            ))
        ));
        assert!(matches!(
            alternating_distance_bound_log2(100, 1, q(32)),
            Err(AlternatingBoundError::Ikos(
                IkosError::SharesOutOfRange { .. }
            ))
        ));
        // 12 = 3 x 4 is rectangular.
        assert!(m_required_alternating(12, q(8), 10).is_ok());
    }

    /// Ragged layouts get a certified m: never fewer shares than the uniform shuffle, and
    /// never fewer than the rectangular full-row grid alone would need for its s = 1 term
    /// when the short row is tiny (its cells are hidden among only r (F + 1) positions).
    #[test]
    fn ragged_layouts_are_certified_and_pay_for_a_short_row() {
        for n in [1_000u64, 10_001, 10_099, 100_000, 1_000_001, 10_000_000] {
            let l = GridLayout::new(n as usize);
            let (h, w) = (l.height() as u64, l.width() as u64);
            assert_ne!(h * w, n, "n = {n} should be ragged");
            for (bits, sigma) in [(32u32, 40u32), (64, 80)] {
                let m = m_required_alternating(n, q(bits), sigma).unwrap();
                let d = alternating_distance_bound_log2(n, m, q(bits)).unwrap();
                let below = alternating_distance_bound_log2(n, m - 1, q(bits)).unwrap();
                assert!(
                    d <= -f64::from(sigma) && below > -f64::from(sigma),
                    "n={n}: {d} {below}"
                );
                assert!(m >= crate::protocol::m_required(n, q(bits), sigma).unwrap());
                // A short-row cell has Pr[Q(i) = i] = 1/(r h) (h = F + 1), not 1/n: the
                // bound keeps its s = 1 term, at least r (q - 1) (r h)^-(m - 1).
                let r = n - (h - 1) * w;
                let lead = (f64::from(bits) + (r as f64).log2()
                    - f64::from(m - 1) * ((r * h) as f64).log2())
                    / 2.0;
                assert!(
                    d >= lead - 1e-6,
                    "n={n}: {d} below the short-row term {lead}"
                );
            }
        }
        // A one-cell short row: n = 100 * 101 + 1 gives w = h = 101, r = 1.
        let n = 100 * 101 + 1;
        let l = GridLayout::new(n as usize);
        assert_eq!((l.height(), l.width()), (101, 101));
        let m_ragged = m_required_alternating(n, q(32), 40).unwrap();
        let m_square = m_required_alternating(100 * 100, q(32), 40).unwrap();
        eprintln!("n = {n}: m = {m_ragged}; 100 x 100: m = {m_square}");
        assert!(m_ragged > m_square, "{m_ragged} vs {m_square}");
    }

    /// Table of `docs/multi-message.md` (A^2_pi column). Run with --ignored --nocapture.
    #[test]
    #[ignore]
    fn m_required_alternating_table() {
        for n in [
            100u64,
            1_000,
            10_000,
            100_000,
            1_000_000,
            10_000_000,
            100_000_000,
        ] {
            for (bits, sigma) in [(32, 40), (32, 80), (64, 40), (64, 80)] {
                let m = m_required_alternating(n, q(bits), sigma).unwrap();
                let d = alternating_distance_bound_log2(n, m, q(bits)).unwrap();
                eprintln!("n={n} q=2^{bits} sigma={sigma}: m={m} ({d:.1})");
            }
        }
    }

    fn grid(w: u64, n: u64, m: u32, bits: u32) -> (Grid, u64) {
        let q1 = ((1u128 << bits) - 1) as f64;
        let h = n.div_ceil(w);
        assert_eq!(h * w, n, "rectangular grids only here");
        let g = Grid {
            n: n as f64,
            n0: n as f64,
            h: h as f64,
            w: w as f64,
            ragged: None,
            m: f64::from(m),
            ln_q1: q1.ln(),
            q1,
            lf: LnFactorial::new(),
        };
        let s_max = n.saturating_sub((n as f64 / (q1 + 1.0)).ceil() as u64);
        (g, s_max)
    }

    /// The summation against the bound summed over every term (each s on its own, the sum
    /// taken in log space; the reference), at sizes where that is cheap: with blocks from
    /// s = 40 on, the refined sum is never below the reference (a certified upper bound) and
    /// within 1e-6 nats of it, while the coarse blocks alone (no refinement) lose more than
    /// a factor e^100 (issue 26: the coarse blocks, not the bound, cost a share at n >= 10^6).
    #[test]
    fn refined_blocks_stay_above_the_termwise_sum_and_lose_little() {
        let mut coarse_lost = 0.0f64;
        for (w, n) in [(32u64, 1024u64), (64, 4096), (100, 10_000)] {
            for m in [6u32, 9, 12] {
                let (g, s_max) = grid(w, n, m, 16);
                let exact = ln_excess_sum(&g, s_max, s_max, f64::INFINITY, None);
                let lead = g.ln_block(1.0, 1.0).unwrap();
                let refined = ln_excess_sum(&g, s_max, 40, lead - REFINE_MARGIN, None);
                let coarse = ln_excess_sum(&g, s_max, 40, f64::INFINITY, None);
                assert!(refined >= exact, "n={n} m={m}: {refined} < {exact}");
                assert!(refined - exact < 1e-6, "n={n} m={m}: {refined} vs {exact}");
                assert!(coarse >= exact);
                coarse_lost = coarse_lost.max(coarse - exact);
            }
        }
        assert!(coarse_lost > 100.0, "{coarse_lost}");
    }

    /// The reviewers' count: summed over every term (here: refined down to 30 nats below the
    /// target), the bound certifies m = 12 at n = 10^6 (1000 x 1000), q = 2^32, sigma = 40,
    /// where the coarse blocks gave 13.
    #[test]
    fn million_clients_over_alternating_need_twelve_shares() {
        let m = m_required_alternating(1_000_000, q(32), 40).unwrap();
        assert_eq!(m, 12);
        assert!(alternating_distance_bound_log2(1_000_000, 12, q(32)).unwrap() <= -40.0);
        assert!(alternating_distance_bound_log2(1_000_000, 11, q(32)).unwrap() > -40.0);
    }
}
