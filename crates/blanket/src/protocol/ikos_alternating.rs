//! Exact check, on tiny grids, of the second-moment reduction for IKOS over the alternating
//! shuffler A^2_pi (`docs/multi-message.md`, "What does hold: an exact second-moment
//! reduction for A^2_pi"). Test-only: exact enumeration on tiny grids, against which the
//! lemmas and the certified bound of `ikos_alternating_bound` are checked.
//!
//! The statement checked: for an h x w grid, m instances (one per share index) with
//! independent secret row and column permutations, and any x, x' with equal sums mod q,
//!
//! TV(view(x), view(x')) <= sqrt(E[q^C] / q - 1),  E[q^C] = sum_{f,g} Pr[g o Q = f]^m,
//!
//! Q = S2 T S1 (S1, S2 uniform inside every row, T uniform inside every column).

use std::collections::HashMap;

/// Every permutation of 0..k (images), in lexicographic order.
fn perms(k: usize) -> Vec<Vec<usize>> {
    if k == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for p in perms(k - 1) {
        for pos in 0..k {
            let mut v: Vec<usize> = p
                .iter()
                .map(|&x| if x >= pos { x + 1 } else { x })
                .collect();
            v.insert(0, pos);
            out.push(v);
        }
    }
    out
}

/// Every choice of one permutation per group of cells, as maps of the n cells (a cell of
/// group g at index k goes to the cell at index p_g(k) of the same group).
fn group_maps(n: usize, groups: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = vec![(0..n).collect()];
    for g in groups {
        let base = perms(g.len());
        out = out
            .into_iter()
            .flat_map(|acc| {
                base.iter().map(move |p| {
                    let mut a = acc.clone();
                    for (k, &cell) in g.iter().enumerate() {
                        a[cell] = g[p[k]];
                    }
                    a
                })
            })
            .collect();
    }
    out
}

/// The rows of the `GridLayout` rule with w columns and n cells (row-major; the last row
/// holds the remaining cells, in columns 0..r).
fn row_groups(w: usize, n: usize) -> Vec<Vec<usize>> {
    (0..n.div_ceil(w))
        .map(|r| (r * w..(r * w + w).min(n)).collect())
        .collect()
}

/// The columns of the same layout (column c holds cells c, c + w, .. below n).
fn col_groups(w: usize, n: usize) -> Vec<Vec<usize>> {
    (0..w).map(|c| (c..n).step_by(w).collect()).collect()
}

/// Row-wise permutations of the cells (cell r w + c -> r w + sigma_r(c)).
fn row_maps(h: usize, w: usize) -> Vec<Vec<usize>> {
    group_maps(h * w, &row_groups(w, h * w))
}

/// Column-wise permutations of the cells (cell r w + c -> tau_c(r) w + c).
fn col_maps(h: usize, w: usize) -> Vec<Vec<usize>> {
    group_maps(h * w, &col_groups(w, h * w))
}

/// The law of Q = S2 T S1 as a map permutation -> probability (h x w grid).
fn law_of_q(h: usize, w: usize) -> HashMap<Vec<usize>, f64> {
    law_of_q_layout(w, h * w)
}

/// The law of Q = S2 T S1 for the layout with w columns and n cells (ragged if w does not
/// divide n).
fn law_of_q_layout(w: usize, n: usize) -> HashMap<Vec<usize>, f64> {
    let rows = group_maps(n, &row_groups(w, n));
    let cols = group_maps(n, &col_groups(w, n));
    let total = (rows.len() * cols.len() * rows.len()) as f64;
    let mut law = HashMap::new();
    for s1 in &rows {
        for t in &cols {
            for s2 in &rows {
                let q: Vec<usize> = (0..n).map(|i| s2[t[s1[i]]]).collect();
                *law.entry(q).or_insert(0.0) += 1.0 / total;
            }
        }
    }
    law
}

/// The labelling of n cells with index `code` in base q.
fn labelling(mut code: usize, n: usize, q: usize) -> Vec<usize> {
    (0..n)
        .map(|_| {
            let d = code % q;
            code /= q;
            d
        })
        .collect()
}

/// sqrt(E[q^C] / q - 1), computed exactly from the law of Q.
fn second_moment_bound(h: usize, w: usize, m: u32, q: usize) -> f64 {
    second_moment_bound_layout(w, h * w, m, q)
}

/// The same for the layout with w columns and n cells.
fn second_moment_bound_layout(w: usize, n: usize, m: u32, q: usize) -> f64 {
    let law: Vec<(Vec<usize>, f64)> = law_of_q_layout(w, n).into_iter().collect();
    let labels: Vec<Vec<usize>> = (0..q.pow(n as u32)).map(|c| labelling(c, n, q)).collect();
    let mut sum = 0.0;
    for f in &labels {
        for g in &labels {
            let p: f64 = law
                .iter()
                .filter(|(perm, _)| (0..n).all(|i| g[perm[i]] == f[i]))
                .map(|(_, p)| p)
                .sum();
            sum += p.powi(m as i32);
        }
    }
    (sum / q as f64 - 1.0).max(0.0).sqrt()
}

/// The matrix M[f][g] = Pr[g o Q = f] over all labellings f, g of the n cells (index = base-q
/// code, see `labelling`), computed exactly from the law of Q.
fn transition_matrix(h: usize, w: usize, q: usize) -> Vec<Vec<f64>> {
    transition_matrix_layout(w, h * w, q)
}

/// The same for the layout with w columns and n cells (ragged if w does not divide n).
fn transition_matrix_layout(w: usize, n: usize, q: usize) -> Vec<Vec<f64>> {
    let law: Vec<(Vec<usize>, f64)> = law_of_q_layout(w, n).into_iter().collect();
    let count = q.pow(n as u32);
    let labels: Vec<Vec<usize>> = (0..count).map(|c| labelling(c, n, q)).collect();
    let code = |v: &[usize]| v.iter().rev().fold(0usize, |acc, &d| acc * q + d);
    let mut mat = vec![vec![0.0; count]; count];
    for (gi, g) in labels.iter().enumerate() {
        for (perm, p) in &law {
            // f = g o Q: f[i] = g[Q(i)].
            let f: Vec<usize> = (0..n).map(|i| g[perm[i]]).collect();
            mat[code(&f)][gi] += p;
        }
    }
    mat
}

/// k! as f64 (tiny k only).
fn fact(k: usize) -> f64 {
    (1..=k).map(|x| x as f64).product()
}

/// The falling factorial (a)_k = a (a - 1) .. (a - k + 1) as f64 (tiny arguments only).
fn falling(a: usize, k: usize) -> f64 {
    (0..k).map(|i| (a - i) as f64).product()
}

/// Lemma C of `docs/multi-message.md` ("The diagonal bound"): for every reference value z0,
/// Pr[f o Q = f] <= prod_{z != z0} a_z! / (prod_r (w)_{s_r} * L_h(s)), with a_z the number of
/// cells labelled z, s_r the cells of row r not labelled z0, s = sum s_r and
/// L_h(s) = (h!)^floor(s/h) (h)_(s mod h). Returns the minimum over z0 (and 1).
fn diagonal_bound(f: &[usize], h: usize, w: usize, q: usize) -> f64 {
    let mut best: f64 = 1.0;
    for z0 in 0..q {
        let num: f64 = (0..q)
            .filter(|&z| z != z0)
            .map(|z| fact(f.iter().filter(|&&v| v == z).count()))
            .product();
        let rows: f64 = (0..h)
            .map(|r| falling(w, (0..w).filter(|&c| f[r * w + c] != z0).count()))
            .product();
        let s = f.iter().filter(|&&v| v != z0).count();
        let cols = fact(h).powi((s / h) as i32) * falling(h, s % h);
        best = best.min(num / (rows * cols));
    }
    best
}

/// The exact law of the analyzer's view for input x (client i in cell i; pi is irrelevant,
/// see the module docs of the reduction). Per instance the view is, for every column, the
/// multiset of the shares that the row round sent there: the secret uniform column round
/// makes the order within a column uniform given that multiset, so the two views are at equal
/// distance for every pair of inputs. Keys: instance by instance, column by column, sorted.
fn view_law(x: &[usize], w: usize, m: usize, q: usize) -> HashMap<Vec<u8>, u64> {
    let n = x.len();
    let rows = group_maps(n, &row_groups(w, n));
    let free = (m - 1) * n; // the first m - 1 shares of every client are free
    let mut law = HashMap::new();
    let mut choice = vec![0usize; m];
    loop {
        for code in 0..q.pow(free as u32) {
            let y = labelling(code, free, q);
            let mut key = Vec::with_capacity(n * m);
            for (j, &c) in choice.iter().enumerate() {
                let sigma = &rows[c];
                for col in 0..w {
                    let mut column: Vec<u8> = (0..n)
                        .filter(|&i| sigma[i] % w == col)
                        .map(|i| {
                            let share = if j + 1 < m {
                                y[j * n + i]
                            } else {
                                let used: usize = (0..m - 1).map(|k| y[k * n + i]).sum();
                                (x[i] + q * m - used % q) % q
                            };
                            share as u8
                        })
                        .collect();
                    column.sort_unstable();
                    key.extend(column);
                }
            }
            *law.entry(key).or_insert(0) += 1;
        }
        // Next choice of row permutations (one per instance).
        let mut k = 0;
        while k < m {
            choice[k] += 1;
            if choice[k] < rows.len() {
                break;
            }
            choice[k] = 0;
            k += 1;
        }
        if k == m {
            return law;
        }
    }
}

/// The largest exact TV between the views of two inputs with equal sums mod q.
fn exact_max_tv(h: usize, w: usize, m: usize, q: usize) -> f64 {
    exact_max_tv_layout(w, h * w, m, q)
}

/// The same for the layout with w columns and n cells.
fn exact_max_tv_layout(w: usize, n: usize, m: usize, q: usize) -> f64 {
    let inputs: Vec<Vec<usize>> = (0..q.pow(n as u32)).map(|c| labelling(c, n, q)).collect();
    let laws: Vec<HashMap<Vec<u8>, u64>> = inputs.iter().map(|x| view_law(x, w, m, q)).collect();
    let total: u64 = laws[0].values().sum();
    let mut worst = 0u64;
    for a in 0..inputs.len() {
        for b in a + 1..inputs.len() {
            let sa: usize = inputs[a].iter().sum();
            let sb: usize = inputs[b].iter().sum();
            if sa % q != sb % q {
                continue;
            }
            let mut diff = 0u64;
            for (k, &ca) in &laws[a] {
                diff += ca.abs_diff(*laws[b].get(k).unwrap_or(&0));
            }
            for (k, &cb) in &laws[b] {
                if !laws[a].contains_key(k) {
                    diff += cb;
                }
            }
            worst = worst.max(diff);
        }
    }
    worst as f64 / 2.0 / total as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perms_and_maps_are_bijections() {
        assert_eq!(perms(3).len(), 6);
        for map in row_maps(2, 3).iter().chain(&col_maps(2, 3)) {
            let mut seen = map.clone();
            seen.sort_unstable();
            assert_eq!(seen, (0..6).collect::<Vec<_>>());
        }
        // A row map keeps rows, a column map keeps columns.
        assert!(row_maps(2, 3)
            .iter()
            .all(|s| (0..6).all(|i| s[i] / 3 == i / 3)));
        assert!(col_maps(2, 3)
            .iter()
            .all(|t| (0..6).all(|i| t[i] % 3 == i % 3)));
        let law = law_of_q(2, 2);
        assert!((law.values().sum::<f64>() - 1.0).abs() < 1e-12);
        // Pr[Q(i) = i'] = 1/n for every pair of cells (T picks the row, S2 the column).
        for i in 0..4 {
            for i2 in 0..4 {
                let p: f64 = law.iter().filter(|(q, _)| q[i] == i2).map(|(_, p)| p).sum();
                assert!((p - 0.25).abs() < 1e-12, "{i} -> {i2}: {p}");
            }
        }
    }

    /// The reduction holds on every tiny grid: the exact worst-case distance between the
    /// views of two inputs with equal sums is at most sqrt(E[q^C] / q - 1).
    #[test]
    fn exact_views_within_the_reduction() {
        let mut informative = 0;
        for (h, w, m, q) in [
            (2, 2, 2, 2),
            (2, 2, 3, 2),
            (2, 2, 4, 2),
            (2, 2, 2, 3),
            (2, 3, 2, 2),
            (3, 2, 2, 2),
        ] {
            let tv = exact_max_tv(h, w, m, q);
            let bound = second_moment_bound(h, w, m as u32, q);
            eprintln!("{h}x{w} m={m} q={q}: exact {tv:.6}, sqrt(E[q^C]/q - 1) = {bound:.6}");
            assert!(tv <= bound + 1e-12, "{h}x{w} m={m} q={q}: {tv} > {bound}");
            if bound < 1.0 && tv > 0.0 {
                informative += 1;
            }
        }
        assert!(informative >= 2, "only {informative} informative grids");
        // Ragged layouts (the reduction's statement covers them): n = 3 (rows of 2 and 1)
        // and n = 5 (rows of 3 and 2).
        for (w, n, m, q) in [(2, 3, 2, 2), (2, 3, 3, 2), (2, 3, 4, 2), (3, 5, 2, 2)] {
            let tv = exact_max_tv_layout(w, n, m, q);
            let bound = second_moment_bound_layout(w, n, m as u32, q);
            eprintln!("n={n} (w={w}) m={m} q={q}: exact {tv:.6}, sqrt(E[q^C]/q - 1) = {bound:.6}");
            assert!(tv <= bound + 1e-12, "n={n} m={m} q={q}: {tv} > {bound}");
        }
    }

    /// Lemma A (PSD reduction to the diagonal) and Lemma C (the diagonal bound) of
    /// `docs/multi-message.md`, checked exactly on tiny grids: M = (Pr[g o Q = f]) is
    /// symmetric, sum_{f,g} M_fg^m <= sum_f M_ff^(m-1), and M_ff <= the diagonal bound for
    /// every labelling f; single-outlier labellings have M_ff = 1/n exactly.
    #[test]
    fn diagonal_reduction_and_diagonal_bound() {
        for (h, w, q) in [(2, 2, 2), (2, 2, 3), (2, 3, 2), (3, 2, 2)] {
            let n = h * w;
            let mat = transition_matrix(h, w, q);
            let count = mat.len();
            for (f, row) in mat.iter().enumerate() {
                for (g, &p) in row.iter().enumerate() {
                    assert!((p - mat[g][f]).abs() < 1e-12, "not symmetric");
                }
                let lab = labelling(f, n, q);
                let bound = diagonal_bound(&lab, h, w, q);
                assert!(
                    mat[f][f] <= bound * (1.0 + 1e-9),
                    "{h}x{w} q={q} f={lab:?}: M_ff {} > {bound}",
                    mat[f][f]
                );
                // Single outlier: one cell differs from all others.
                let outliers = (0..q)
                    .filter(|&z| lab.iter().filter(|&&v| v == z).count() == 1)
                    .count();
                let majority = (0..q).any(|z| lab.iter().filter(|&&v| v == z).count() == n - 1);
                if n > 2 && outliers == 1 && majority {
                    assert!((mat[f][f] - 1.0 / n as f64).abs() < 1e-12, "{lab:?}");
                }
            }
            for m in [2, 3, 4, 6] {
                let full: f64 = mat.iter().flatten().map(|p| p.powi(m)).sum();
                let diag: f64 = (0..count).map(|f| mat[f][f].powi(m - 1)).sum();
                eprintln!(
                    "{h}x{w} q={q} m={m}: E[q^C]/q - 1 = {:.6}, diagonal {:.6}",
                    full / q as f64 - 1.0,
                    diag / q as f64 - 1.0
                );
                assert!(full <= diag * (1.0 + 1e-12), "{h}x{w} q={q} m={m}");
                // The reduction loses little at these sizes (at most 20% in E[q^C]/q - 1).
                assert!(diag / q as f64 - 1.0 <= 1.2 * (full / q as f64 - 1.0) + 1e-12);
            }
        }
    }

    /// The certified bound of `ikos_alternating_bound` is never below the exact
    /// E[q^C]/q - 1 (computed from the enumerated law of Q) on every tiny grid.
    #[test]
    fn certified_bound_never_below_exact() {
        for (h, w, q) in [(2, 2, 2), (2, 2, 3), (2, 3, 2), (3, 2, 2)] {
            let mat = transition_matrix(h, w, q);
            for m in 2..=8u32 {
                let full: f64 = mat.iter().flatten().map(|p| p.powi(m as i32)).sum();
                let exact = full / q as f64 - 1.0;
                let q1 = (q - 1) as f64;
                let bound = crate::protocol::ikos_alternating_bound::ln_excess_bound(
                    h as u64,
                    w as u64,
                    m,
                    q1,
                    q1.ln(),
                )
                .exp();
                eprintln!("{h}x{w} q={q} m={m}: exact {exact:.6}, certified {bound:.6}");
                assert!(exact <= bound, "{h}x{w} q={q} m={m}: {exact} > {bound}");
            }
        }
    }

    /// The ragged-layout bound (Lemma F of `docs/multi-message.md`) is never below the
    /// exact E[q^C]/q - 1 on every tiny ragged layout of the `GridLayout` rule (n = 3, 5, 7,
    /// 8: last rows of 1, 2, 1, 2 cells), and a short-row cell has Pr[Q(i) = i] = 1/(r h).
    #[test]
    fn ragged_certified_bound_never_below_exact() {
        use crate::shuffle::GridLayout;
        let mut informative = 0;
        for (n, q) in [(3usize, 2usize), (3, 3), (5, 2), (7, 2), (8, 2)] {
            let layout = GridLayout::new(n);
            let (h, w) = (layout.height(), layout.width());
            let r = n - (h - 1) * w;
            assert!(r < w, "n = {n} should be ragged");
            let law = law_of_q_layout(w, n);
            assert!((law.values().sum::<f64>() - 1.0).abs() < 1e-12);
            let last = n - 1;
            let fixed: f64 = law
                .iter()
                .filter(|(p, _)| p[last] == last)
                .map(|(_, p)| p)
                .sum();
            assert!(
                (fixed - 1.0 / (r * h) as f64).abs() < 1e-12,
                "n={n}: {fixed}"
            );
            let mat = transition_matrix_layout(w, n, q);
            for m in 2..=10u32 {
                let full: f64 = mat.iter().flatten().map(|p| p.powi(m as i32)).sum();
                let exact = full / q as f64 - 1.0;
                let q1 = (q - 1) as f64;
                let bound = crate::protocol::ikos_alternating_bound::ln_excess_bound_layout(
                    w as u64,
                    n as u64,
                    m,
                    q1,
                    q1.ln(),
                )
                .exp();
                eprintln!(
                    "n={n} ({h}x{w}, r={r}) q={q} m={m}: exact {exact:.6}, certified {bound:.6}"
                );
                assert!(exact <= bound, "n={n} q={q} m={m}: {exact} > {bound}");
                if bound < 1.0 {
                    informative += 1;
                }
            }
        }
        assert!(informative >= 3, "only {informative} informative cases");
    }
}
