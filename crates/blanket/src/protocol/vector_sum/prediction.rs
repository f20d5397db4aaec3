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
        let n = data.len() as u64;
        let c = self.reports_per_coordinate(n);
        let g = self.grr.gamma();
        let mut var = vec![0.0; self.d as usize];
        for r in data.rows() {
            for (a, x) in var.iter_mut().zip(r) {
                *a += message_variance(x.get(), self.k, g);
            }
        }
        let s2 = data.variance();
        let one_g = (1.0 - g.get()).powi(2);
        var.iter()
            .zip(&s2)
            .map(|(v, s)| v / n as f64 / (one_g * c) + (1.0 - c / n as f64) * s / c)
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
