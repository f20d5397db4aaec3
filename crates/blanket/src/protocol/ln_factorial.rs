//! ln k! for the share-count bounds (`ikos_bound.rs`, `ikos_alternating_bound.rs`): a summed
//! table below 256, Stirling's series above, with the direction of the truncation named at
//! each call site.
//!
//! Stirling: ln k! = k ln k - k + ln(2 pi k)/2 + 1/(12k) - 1/(360k^3) + R with
//! 0 < R < 1/(1260k^5) (Robbins 1955 for the first terms; the alternating series' remainder
//! has the sign and is below the size of the first omitted term, Whittaker and Watson 12.33).

/// ln(2 pi) / 2.
const HALF_LN_TAU: f64 = 0.918_938_533_204_672_8;

/// Below this, ln k! is summed exactly (up to float rounding).
const TABLE: usize = 256;

/// ln k! for non-negative integers k below 2^53.
pub(crate) struct LnFactorial {
    small: Vec<f64>,
}

impl LnFactorial {
    pub(crate) fn new() -> Self {
        let mut small = Vec::with_capacity(TABLE);
        let mut acc = 0.0f64;
        small.push(0.0);
        for k in 1..TABLE {
            acc += (k as f64).ln();
            small.push(acc);
        }
        Self { small }
    }

    /// The series without R (k >= 256): below ln k! by less than 1/(1260 k^5) < 1e-15.
    fn series(k: f64) -> f64 {
        let k3 = k * k * k;
        (k + 0.5) * k.ln() - k + HALF_LN_TAU + 1.0 / (12.0 * k) - 1.0 / (360.0 * k3)
    }

    /// ln k!, Stirling's series taken with its remainder bound (k >= 256): not below ln k!
    /// but for float rounding (within 1e-13 + 8 ulps).
    pub(crate) fn above(&self, k: f64) -> f64 {
        if k < TABLE as f64 {
            return self.small[k as usize];
        }
        let k5 = k * k * k * k * k;
        Self::series(k) + 1.0 / (1260.0 * k5)
    }

    /// ln k!, Stirling's series without the remainder (k >= 256): not above ln k! but for
    /// float rounding (within 1e-13 + 8 ulps).
    pub(crate) fn below(&self, k: f64) -> f64 {
        if k < TABLE as f64 {
            return self.small[k as usize];
        }
        Self::series(k)
    }

    /// ln C(n, k) from [`Self::above`] for every factorial (the windowed recursion's terms;
    /// its slack terms cover the rounding, `ikos_bound.rs`).
    pub(crate) fn choose(&self, n: f64, k: f64) -> f64 {
        self.above(n) - self.above(k) - self.above(n - k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both series against a summed table to 5,000, and `below <= above` with the gap below
    /// 1e-15 (the remainder bound).
    #[test]
    fn series_match_the_summed_table_and_bracket_it() {
        let lf = LnFactorial::new();
        let mut acc = lf.small[TABLE - 1];
        for k in TABLE as u32..5000 {
            acc += f64::from(k).ln();
            let (lo, hi) = (lf.below(f64::from(k)), lf.above(f64::from(k)));
            assert!((hi - acc).abs() <= 1e-9 * acc, "k={k}: {hi} vs {acc}");
            assert!(lo <= hi && hi - lo < 1e-15 * acc.max(1.0), "k={k}");
        }
        for k in 0..TABLE {
            assert_eq!(lf.below(k as f64), lf.above(k as f64));
        }
    }
}
