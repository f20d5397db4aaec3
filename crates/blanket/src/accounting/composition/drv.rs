//! Advanced composition (Dwork, Rothblum, Vadhan, FOCS 2010; Dwork-Roth Theorem 3.20): the
//! k-fold adaptive composition of (eps, delta)-DP mechanisms is (eps', k delta + delta')-DP
//! for any delta' > 0, with eps' = sqrt(2 k log(1/delta')) eps + k eps (e^eps - 1).

use super::CompositionError;
use crate::accounting::round_up;

/// (eps', k delta + delta'), rounded up.
pub fn drv(eps: f64, delta: f64, k: u64, delta_prime: f64) -> Result<(f64, f64), CompositionError> {
    if !(delta_prime > 0.0 && delta_prime < 1.0) {
        return Err(CompositionError::Invalid(format!(
            "advanced composition needs delta' in (0, 1), got {delta_prime}"
        )));
    }
    let kf = k as f64;
    let e = (2.0 * kf * (1.0 / delta_prime).ln()).sqrt() * eps + kf * eps * eps.exp_m1();
    Ok((round_up(e, 8), round_up(kf * delta + delta_prime, 2)))
}

#[cfg(test)]
mod tests {
    #[test]
    fn check_values() {
        // spec 03: eps = 0.1, k = 100, delta' = 1e-6: 6.30823; eps = 0.05, k = 1000: 10.8748.
        let (e, d) = super::drv(0.1, 0.0, 100, 1e-6).unwrap();
        assert!((e - 6.30823).abs() < 1e-5 && d >= 1e-6, "{e}");
        let (e, _) = super::drv(0.05, 0.0, 1000, 1e-6).unwrap();
        assert!((e - 10.8748).abs() < 1e-4, "{e}");
        assert!(super::drv(0.1, 0.0, 10, 0.0).is_err());
    }
}
