//! Predicted error of the vector-sum protocol: exact for given data, and worst case.

use super::*;
use crate::params::{Gamma, Precision};

/// Exact variance of y / k for one message of a coordinate holding s (spec 01/02, derived):
/// with f = frac(k s),
/// (1 - gamma) f (1 - f) / k^2 + gamma (k + 2) / (12 k) + gamma (1 - gamma) (s - 1/2)^2.
pub fn message_variance(s: f64, k: Precision, gamma: Gamma) -> f64 {
    let kf = f64::from(k.get());
    let g = gamma.get();
    let sk = s * kf;
    let f = sk - sk.floor();
    (1.0 - g) * f * (1.0 - f) / (kf * kf)
        + g * (kf + 2.0) / (12.0 * kf)
        + g * (1.0 - g) * (s - 0.5).powi(2)
}

/// The largest [`message_variance`] over s in [0, 1], exactly (per rounding cell the variance
/// is a concave quadratic in the fractional part; see `ScalarSum::worst_message_variance`).
pub fn worst_message_variance(k: Precision, gamma: Gamma) -> f64 {
    crate::protocol::ScalarSum::new(k, gamma).worst_message_variance()
}

impl VectorSum {
    fn reports_per_coordinate(&self, n: u64) -> f64 {
        n as f64 * f64::from(self.t) / f64::from(self.d)
    }

    /// Exact predicted error of the mean estimate for this data (spec 02, derived), summed
    /// over coordinates: with c = n t / d expected reports per coordinate,
    /// sum_j [ mean_i Var_ij / ((1 - gamma)^2 c) + (1 - c/n) S_j^2 / c ],
    /// where Var_ij is [`message_variance`] of x_i[j] and S_j^2 the population variance of
    /// coordinate j (the second term is the sampling error of reporting t of d coordinates).
    /// It uses E[n_j] = c in place of E[1/n_j] (relative error about d/(n t)).
    pub fn exact_mean_mse(&self, data: &UnitVectors) -> f64 {
        self.exact_mean_mse_of(data, |_| 1)
    }

    /// [`VectorSum::exact_mean_mse`] for users given as distinct `rows` and how many users
    /// hold each (`counts[r]` users hold row r; n = the sum of the counts), e.g. rows
    /// resampled with [`crate::simulate::Resample`]: the same formula, with every user-level
    /// sum (message variances, mean, population variance S_j^2) taken with these weights.
    /// Rows beyond `counts` have weight 0.
    pub fn exact_mean_mse_weighted(&self, rows: &UnitVectors, counts: &[u64]) -> f64 {
        self.exact_mean_mse_of(rows, |r| counts.get(r).copied().unwrap_or(0))
    }

    fn exact_mean_mse_of(&self, rows: &UnitVectors, weight: impl Fn(usize) -> u64) -> f64 {
        let d = self.d as usize;
        let g = self.grr.gamma();
        let (mut var, mut mean) = (vec![0.0; d], vec![0.0; d]);
        let mut n = 0u64;
        for (i, r) in rows.rows().enumerate() {
            let w = weight(i);
            n += w;
            let wf = w as f64;
            for ((a, m), x) in var.iter_mut().zip(mean.iter_mut()).zip(r) {
                *a += wf * message_variance(x.get(), self.k, g);
                *m += wf * x.get();
            }
        }
        let nf = n.max(1) as f64;
        mean.iter_mut().for_each(|m| *m /= nf);
        let mut s2 = vec![0.0; d];
        for (i, r) in rows.rows().enumerate() {
            let wf = weight(i) as f64;
            for ((s, x), m) in s2.iter_mut().zip(r).zip(&mean) {
                *s += wf * (x.get() - m).powi(2);
            }
        }
        let c = self.reports_per_coordinate(n);
        let one_g = (1.0 - g.get()).powi(2);
        var.iter()
            .zip(&s2)
            .map(|(v, s)| v / n as f64 / (one_g * c) + (1.0 - c / n as f64) * (s / nf) / c)
            .sum()
    }

    /// Worst case over data of n users of the predicted mean-vector error: every term of
    /// [`VectorSum::exact_mean_mse`] at its maximum (message variance at its worst value,
    /// S_j^2 = 1/4).
    pub fn worst_case_mean_mse(&self, n: u64) -> f64 {
        let c = self.reports_per_coordinate(n);
        let g = self.grr.gamma();
        let v = worst_message_variance(self.k, g);
        f64::from(self.d) * (v / ((1.0 - g.get()).powi(2) * c) + (1.0 - c / n as f64) / (4.0 * c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weighted_prediction_equals_the_materialized_one() {
        let rows = [
            vec![0.1, 0.9, 0.5],
            vec![1.0, 0.0, 0.25],
            vec![0.3, 0.3, 0.3],
        ];
        let counts = [3u64, 1, 2];
        let distinct = UnitVectors::new(3, rows.iter()).unwrap();
        let all: Vec<&Vec<f64>> = rows
            .iter()
            .zip(counts)
            .flat_map(|(r, c)| std::iter::repeat_n(r, c as usize))
            .collect();
        let full = UnitVectors::new(3, all).unwrap();
        let p = VectorSum::new(3, 2, Precision::new(3).unwrap(), Gamma::new(0.2).unwrap()).unwrap();
        let a = p.exact_mean_mse(&full);
        let b = p.exact_mean_mse_weighted(&distinct, &counts);
        assert!((a - b).abs() <= 1e-12 * a, "{a} vs {b}");
    }
}
