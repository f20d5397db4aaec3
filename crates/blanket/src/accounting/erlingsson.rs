//! Closed form of Erlingsson, Feldman, Mironov, Raghunathan, Talwar, Thakurta,
//! "Amplification by Shuffling: From Local to Central Differential Privacy via Anonymity"
//! (SODA 2019), Theorem 7.1 as summarized in spec 03: for eps0 <= 1/2, n >= 1000 and
//! delta <= 0.01, the shuffled eps0-LDP randomizer is (eps, delta)-DP with
//!
//!   eps = 12 eps0 sqrt(log(1/delta) / n).
//!
//! Outside these conditions the accountant returns `NotApplicable` naming the condition.

use super::{checked_eps0, round_up, AccountingError, LocalRandomizer, Method, ShuffleAccountant};
use crate::params::{Delta, NumUsers};

/// The Erlingsson et al. 2019 closed form.
#[derive(Debug, Clone, Copy, Default)]
pub struct ErlingssonClosed;

impl ErlingssonClosed {
    /// eps for (eps0, n, delta), or which validity condition failed.
    pub fn eps(eps0: f64, n: u64, delta: f64) -> Result<f64, String> {
        if !(eps0 <= 0.5) {
            return Err(format!("Erlingsson et al. need eps0 <= 1/2, got {eps0}"));
        }
        if n < 1000 {
            return Err(format!("Erlingsson et al. need n >= 1000, got {n}"));
        }
        if !(delta <= 0.01) {
            return Err(format!("Erlingsson et al. need delta <= 0.01, got {delta}"));
        }
        Ok(round_up(
            12.0 * eps0 * ((1.0 / delta).ln() / n as f64).sqrt(),
            8,
        ))
    }
}

impl ShuffleAccountant for ErlingssonClosed {
    fn method(&self) -> Method {
        Method::ErlingssonClosed
    }

    fn epsilon(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
        delta: Delta,
    ) -> Result<f64, AccountingError> {
        let eps0 = checked_eps0(self.method(), randomizer)?;
        Self::eps(eps0, n.get(), delta.get()).map_err(|reason| AccountingError::NotApplicable {
            method: self.method(),
            reason,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand_and_conditions() {
        // 12 * 0.5 * sqrt(ln(1e6) / 1e6) = 6 * sqrt(13.815510557964274e-6) = 0.0223014...
        let hand = 6.0 * (13.815_510_557_964_274e-6f64).sqrt();
        let e = ErlingssonClosed::eps(0.5, 1_000_000, 1e-6).unwrap();
        assert!(e >= hand && (e - hand) / hand < 1e-9);
        assert!(ErlingssonClosed::eps(0.6, 1_000_000, 1e-6).is_err());
        assert!(ErlingssonClosed::eps(0.5, 999, 1e-6).is_err());
        assert!(ErlingssonClosed::eps(0.5, 1_000_000, 0.02).is_err());
    }
}
