//! Tests of the bad-cell bound: never below the exact A^2_pi divergence enumerated on tiny
//! grids with the bad cells' messages fixed (known to the adversary), every placement of
//! the bad cells and of the target, every dataset and every cell count of the scenario.

use super::*;
use crate::accounting::{Best, ShuffleAccountant};
use crate::params::Delta;
use crate::shuffle::alternating::GridLayout;
use std::collections::HashMap;

/// GRR(m, gamma) output probabilities for input x.
fn grr_probs(m: usize, gamma: f64, x: usize) -> Vec<f64> {
    (0..m)
        .map(|y| gamma / m as f64 + if y == x { 1.0 - gamma } else { 0.0 })
        .collect()
}

/// Distribution of the count vector (one base-`base` digit per value) of independent
/// reports with the given output distributions.
fn column_dist(dists: &[&Vec<f64>], m: usize, base: u64) -> Vec<(u64, f64)> {
    let pow: Vec<u64> = (0..m).map(|v| base.pow(v as u32)).collect();
    let mut dist: HashMap<u64, f64> = HashMap::from([(0, 1.0)]);
    for p in dists {
        let mut next = HashMap::new();
        for (&code, &q) in &dist {
            for (y, &py) in p.iter().enumerate() {
                if py > 0.0 {
                    *next.entry(code + pow[y]).or_insert(0.0) += q * py;
                }
            }
        }
        dist = next;
    }
    dist.into_iter().collect()
}

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

/// The exact law of the analyzer's view (the tuple of column multisets) when the report of
/// row-major cell j has law `cells[j]` (a point mass for a bad cell), averaged over every
/// row permutation. pi = identity loses nothing: every placement of bad cells and target is
/// enumerated.
fn exact_view(layout: GridLayout, cells: &[Vec<f64>], m: usize) -> HashMap<u64, f64> {
    let (h, w) = (layout.height(), layout.width());
    let base = h as u64 + 1;
    let col_radix = base.pow(m as u32);
    let row_perms: Vec<Vec<Vec<usize>>> = (0..h).map(|r| permutations(layout.row_len(r))).collect();
    let total: usize = row_perms.iter().map(Vec::len).product();
    let weight = 1.0 / total as f64;
    let mut view: HashMap<u64, f64> = HashMap::new();
    let mut idx = vec![0usize; h];
    for _ in 0..total {
        let mut cols: Vec<Vec<&Vec<f64>>> = vec![Vec::new(); w];
        for r in 0..h {
            for (k, &dest) in row_perms[r][idx[r]].iter().enumerate() {
                cols[dest].push(&cells[r * w + k]);
            }
        }
        let mut joint: Vec<(u64, f64)> = vec![(0, weight)];
        let mut scale = 1u64;
        for members in &cols {
            let d = column_dist(members, m, base);
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

/// All subsets of `items` of size k.
fn subsets(items: &[usize], k: usize) -> Vec<Vec<usize>> {
    if k == 0 {
        return vec![vec![]];
    }
    if items.len() < k {
        return vec![];
    }
    let mut out = subsets(&items[1..], k - 1);
    for s in &mut out {
        s.insert(0, items[0]);
    }
    out.extend(subsets(&items[1..], k));
    out
}

/// The exact worst case over the scenario: every cell count N, every number b <=
/// min(bad_max, N - honest_min) of bad cells, every placement of them, every message they
/// send (fixed, known), every target cell class (a full row: cell 0; the ragged row: the
/// last cell), every dataset of the other honest users; both directions.
fn worst_exact(sc: BadCells, m: usize, gamma: f64, epss: &[f64]) -> Vec<f64> {
    let mut worst = vec![0.0f64; epss.len()];
    for n in sc.honest_min()..=sc.cells_max() {
        let n = n as usize;
        let layout = GridLayout::new(n);
        let mut targets = vec![];
        if (0..layout.height()).any(|r| layout.row_len(r) == layout.width()) {
            targets.push(0);
        }
        if layout.row_len(layout.height() - 1) < layout.width() {
            targets.push(n - 1);
        }
        let b_max = (sc.bad_max() as usize).min(n - sc.honest_min() as usize);
        for &i in &targets {
            let others: Vec<usize> = (0..n).filter(|&j| j != i).collect();
            for b in 0..=b_max {
                for bad in subsets(&others, b) {
                    let honest: Vec<usize> = others
                        .iter()
                        .copied()
                        .filter(|j| !bad.contains(j))
                        .collect();
                    for bad_code in 0..(m as u64).pow(b as u32) {
                        for code in 0..(m as u64).pow(honest.len() as u32) {
                            let mut cells = vec![vec![]; n];
                            let mut c = bad_code;
                            for &j in &bad {
                                let y = (c % m as u64) as usize;
                                c /= m as u64;
                                cells[j] = (0..m).map(|v| if v == y { 1.0 } else { 0.0 }).collect();
                            }
                            let mut c = code;
                            for &j in &honest {
                                cells[j] = grr_probs(m, gamma, (c % m as u64) as usize);
                                c /= m as u64;
                            }
                            cells[i] = grr_probs(m, gamma, 0);
                            let p = exact_view(layout, &cells, m);
                            cells[i] = grr_probs(m, gamma, 1);
                            let q = exact_view(layout, &cells, m);
                            for (k, &eps) in epss.iter().enumerate() {
                                worst[k] =
                                    worst[k].max(hockey(&p, &q, eps)).max(hockey(&q, &p, eps));
                            }
                        }
                    }
                }
            }
        }
    }
    worst
}

/// Written first: the certified bound with bad cells is never below the exact divergence
/// on tiny grids (square, rectangular, ragged; one and two bad cells; a range of cell
/// counts standing for dropouts).
#[test]
fn never_below_brute_force_with_bad_cells() {
    let epss = [0.0, 0.1, 0.3, 0.6, 1.0];
    // (honest_min, cells_max, bad_max)
    let cases = [
        (3u64, 4u64, 1u64),
        (4, 5, 1),
        (5, 6, 1),
        (4, 6, 2),
        (8, 9, 1),
        (4, 6, 1),
    ];
    for (hm, cm, bm) in cases {
        let sc = BadCells::new(hm, cm, bm).unwrap();
        let acct = AlternatingBadCells::new(sc, Best::default());
        for gamma in [0.3, 0.6, 0.9] {
            let r = LocalRandomizer::Grr { m: 2, gamma };
            // The raw bound (`curve` refuses grids without blanket; the bound is checked
            // there too).
            let curve = acct.curve_for(&r).unwrap();
            // The epsilon direction too: at the certified eps for each delta the exact
            // curve is within delta (enumerated in the same pass).
            let deltas = [1e-2, 0.1];
            let cert: Vec<f64> = deltas.iter().map(|&d| curve.epsilon(d)).collect();
            let all: Vec<f64> = epss.iter().chain(&cert).copied().collect();
            let exact = worst_exact(sc, 2, gamma, &all);
            for (k, &delta) in deltas.iter().enumerate() {
                let ex = exact[epss.len() + k];
                assert!(
                    ex <= delta + 1e-12,
                    "({hm}, {cm}, {bm}) gamma {gamma}: {ex} > {delta}"
                );
            }
            for (k, &eps) in epss.iter().enumerate() {
                let bound = curve.delta(eps);
                println!(
                    "honest >= {hm}, cells <= {cm}, bad <= {bm}, gamma {gamma}, eps {eps}: exact {:.6} bound {:.6}",
                    exact[k], bound
                );
                assert!(
                    bound >= exact[k] - 1e-12,
                    "({hm}, {cm}, {bm}) gamma {gamma} eps {eps}: bound {bound} < exact {}",
                    exact[k]
                );
            }
        }
    }
}

/// Without bad cells or dropouts the bound is never above the joint clone bound of
/// `alternating_clones` (the same reduction; the running minimum over s only tightens it).
#[test]
fn no_bad_cells_is_at_most_the_joint_bound() {
    for n in [4u64, 9, 30, 100, 1000] {
        let acct = AlternatingBadCells::new(BadCells::new(n, n, 0).unwrap(), Best::default());
        for gamma in [0.2, 0.5] {
            let r = LocalRandomizer::Grr { m: 4, gamma };
            let nn = NumUsers::new(n).unwrap();
            for eps in [0.1, 0.5, 1.0] {
                let ours = acct.delta(&r, nn, eps).unwrap();
                let joint = AlternatingClones.delta(&r, nn, eps).unwrap();
                assert!(
                    ours <= joint * (1.0 + 1e-9),
                    "n {n} gamma {gamma} eps {eps}: {ours} > {joint}"
                );
            }
        }
    }
}

/// More bad cells never give a smaller certified delta (the worst case grows), and the
/// accountant refuses an n other than the honest users of its grid.
#[test]
fn more_bad_cells_cost_more_and_n_is_checked() {
    let r = LocalRandomizer::Grr { m: 2, gamma: 0.3 };
    let mut prev = 0.0;
    for bad in [0u64, 10, 50, 100, 300, 600] {
        let sc = BadCells::new(2000 - bad, 2000, bad).unwrap();
        let acct = AlternatingBadCells::new(sc, Best::default());
        let d = acct
            .delta(&r, NumUsers::new(2000 - bad).unwrap(), 1.0)
            .unwrap();
        assert!(d >= prev, "bad {bad}: {d} < {prev}");
        prev = d;
    }
    let acct = AlternatingBadCells::new(BadCells::new(90, 100, 5).unwrap(), Best::default());
    assert!(acct.delta(&r, NumUsers::new(100).unwrap(), 1.0).is_err());
    assert!(BadCells::new(1, 10, 0).is_err());
    assert!(BadCells::new(11, 10, 0).is_err());
}

/// A grid where the bad cells can leave the target alone in its row and column is refused
/// (no blanket), with the reason.
#[test]
fn no_blanket_is_refused() {
    let r = LocalRandomizer::Grr { m: 2, gamma: 0.5 };
    // 4 to 12 cells, up to 8 bad: a 3 x 3 grid (N = 9, b = 5) can fill the target's row
    // and, on average, its column.
    let acct = AlternatingBadCells::new(BadCells::new(4, 12, 8).unwrap(), Best::default());
    let err = acct
        .delta(&r, NumUsers::new(4).unwrap(), 0.5)
        .unwrap_err()
        .to_string();
    assert!(err.contains("no blanket"), "{err}");
    // One bad cell in a 3 x 3 grid leaves a blanket.
    let acct = AlternatingBadCells::new(BadCells::new(8, 9, 1).unwrap(), Best::default());
    assert!(acct.delta(&r, NumUsers::new(8).unwrap(), 0.5).is_ok());
}

#[test]
fn worst_classes_of_the_paper_example() {
    // n = 10,000, 500 dropouts, 500 malicious: the grid holds 9,000 to 10,000 cells.
    let sc = BadCells::for_protocol(10_000, 500, 500).unwrap();
    let (classes, mu) = sc.worst_classes();
    // 500 bad cells can fill a target's row: only its column hides it (s = 1).
    assert!(classes.iter().all(|c| c.row_good == 1));
    // Full rows: N = 9,000 to 10,000 gives w = 95..100; the fewest other full rows.
    assert_eq!(classes[0].h_other, 93);
    // b / w is largest at N = 9,500 (b = 500, w = 98).
    assert!((mu - 500.0 / 98.0).abs() < 1e-9 * mu, "{mu}");
}

#[test]
fn poisson_tail_is_a_bound() {
    // Against the exact Poisson(mu) tail (the Chernoff bound dominates it).
    for mu in [0.5f64, 2.0, 5.26] {
        for m in 0u64..40 {
            let mut tail = 0.0;
            let mut term = (-mu).exp();
            for k in 0..200u64 {
                if k >= m {
                    tail += term;
                }
                term *= mu / (k + 1) as f64;
            }
            assert!(poisson_tail(mu, m) >= tail * (1.0 - 1e-12), "mu {mu} m {m}");
        }
    }
    assert_eq!(poisson_tail(0.0, 1), 0.0);
    assert_eq!(poisson_tail(3.0, 3), 1.0);
}

/// The noise-cost table of `docs/protocol.md`: the histogram calibrated at (eps, delta) for
/// the honest, present users of a protocol run with n = 10,000 clients, 500 dropouts and
/// 500 malicious: the amortized shuffler (a uniform shuffle of n' = 9,000, `Best`) against
/// the alternating one with bad cells. Ignored (about a minute); run with `cargo test -p
/// blanket --lib alternating_bad::tests::protocol_noise_cost_table -- --ignored --nocapture`.
#[test]
#[ignore]
fn protocol_noise_cost_table() {
    use crate::calibrate::{calibrate, Target};
    use crate::params::{DomainSize, Epsilon};
    use crate::protocol::histogram::HistogramShape;
    let sc = BadCells::for_protocol(10_000, 500, 500).unwrap();
    let alt = AlternatingBadCells::new(sc, Best::default());
    println!("| m | eps | delta | gamma amortized | eps0 | MSE amortized | gamma alternating | eps0 | MSE alternating | MSE ratio | bound | time |");
    for m in [2u64, 32] {
        for (eps, delta) in [(1.0, 1e-6), (1.0, 1e-8)] {
            let t = Target {
                eps: Epsilon::new(eps).unwrap(),
                delta: Delta::new(delta).unwrap(),
                n: NumUsers::new(sc.honest_min()).unwrap(),
            };
            let shape = HistogramShape {
                m: DomainSize::new(m).unwrap(),
            };
            let u = calibrate(&shape, &t, &Best::default()).unwrap();
            let clock = std::time::Instant::now();
            let a = calibrate(&shape, &t, &alt).unwrap();
            let secs = clock.elapsed().as_secs_f64();
            let r = LocalRandomizer::Grr {
                m: m as u32,
                gamma: a.gamma.get(),
            };
            let (_, bound) = alt.curve_for(&r).unwrap().delta_with_bound(eps);
            println!(
                "| {m} | {eps} | {delta:e} | {:.4e} | {:.3} | {:.4e} | {:.4e} | {:.3} | {:.4e} | {:.2} | {} | {secs:.1} s |",
                u.gamma.get(),
                u.eps0,
                u.predicted_mse,
                a.gamma.get(),
                a.eps0,
                a.predicted_mse,
                a.predicted_mse / u.predicted_mse,
                bound.name()
            );
        }
    }
}
