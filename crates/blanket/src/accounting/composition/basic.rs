//! Basic composition (Dwork, Roth, "The Algorithmic Foundations of Differential Privacy",
//! Theorem 3.16): k mechanisms, each (eps, delta)-DP, compose to (k eps, k delta).

use crate::accounting::round_up;

/// (k eps, k delta), rounded up.
pub fn basic(eps: f64, delta: f64, k: u64) -> (f64, f64) {
    let kf = k as f64;
    (round_up(kf * eps, 1), round_up(kf * delta, 1).min(1.0))
}

#[cfg(test)]
mod tests {
    #[test]
    fn check_values() {
        assert!((super::basic(0.1, 0.0, 100).0 - 10.0).abs() < 1e-12);
        assert!((super::basic(0.05, 0.0, 1000).0 - 50.0).abs() < 1e-12);
    }
}
