//! Closed form of Feldman, McMillan, Talwar, "Hiding Among the Clones: A Simple and Nearly
//! Optimal Analysis of Privacy Amplification by Shuffling" (FOCS 2021), Theorem 3.1, as
//! stated in the paper: for any eps0-LDP randomizer, n users and delta in (0, 1), if
//! eps0 <= log(n / (16 log(2/delta))), the shuffled output is (eps, delta)-DP with
//!
//!   eps = log(1 + (e^eps0 - 1)/(e^eps0 + 1) (8 sqrt(e^eps0 log(4/delta)) / sqrt(n)
//!                                             + 8 e^eps0 / n)).
//!
//! Outside the validity range no amplification is claimed: the accountant returns
//! `NotApplicable` with the condition, and the CLI reports eps0. (The authors' code uses a
//! slightly larger expression and the stricter condition with log(4/delta); this is the
//! paper's form, named so.) Applies to generic eps0-LDP randomizers and to GRR.

use super::{checked_eps0, round_up, AccountingError, LocalRandomizer, Method, ShuffleAccountant};
use crate::params::{Delta, NumUsers};

/// The FMT21 paper closed form.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fmt21Closed;

impl Fmt21Closed {
    /// eps for (eps0, n, delta), or why the theorem does not apply.
    pub fn eps(eps0: f64, n: u64, delta: f64) -> Result<f64, String> {
        let nf = n as f64;
        let limit = (nf / (16.0 * (2.0 / delta).ln())).ln();
        if !(eps0 <= limit) {
            return Err(format!(
                "FMT21 needs eps0 <= log(n / (16 log(2/delta))) = {limit:.6}, but eps0 = {eps0}"
            ));
        }
        let e0 = eps0.exp();
        let a = 8.0 * (e0 * (4.0 / delta).ln()).sqrt() / nf.sqrt() + 8.0 * e0 / nf;
        let x = eps0.exp_m1() / (e0 + 1.0) * a;
        // ~12 rounded operations: 16 ulps is a safe margin.
        Ok(round_up(x.ln_1p(), 16))
    }
}

impl ShuffleAccountant for Fmt21Closed {
    fn method(&self) -> Method {
        Method::Fmt21Closed
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
    fn by_hand() {
        // n = 1e5, eps0 = 4, delta = 1e-6 (condition: 4 <= log(1e5 / (16 ln 2e6)) = 6.07).
        let e0 = 4f64.exp();
        let hand = (1.0
            + (e0 - 1.0) / (e0 + 1.0)
                * (8.0 * (e0 * (4e6f64).ln()).sqrt() / 1e5f64.sqrt() + 8.0 * e0 / 1e5))
            .ln();
        let e = Fmt21Closed::eps(4.0, 100_000, 1e-6).unwrap();
        assert!(e >= hand && (e - hand) / hand < 1e-9, "{e} {hand}");
        assert!((e - 0.534_68).abs() < 1e-4, "{e}");
        // Invalid range: eps0 = 7 > 6.07.
        let err = Fmt21Closed::eps(7.0, 100_000, 1e-6).unwrap_err();
        assert!(err.contains("eps0 <= log"), "{err}");
        let r = Fmt21Closed.epsilon(
            &LocalRandomizer::Generic { eps0: 7.0 },
            NumUsers::new(100_000).unwrap(),
            Delta::new(1e-6).unwrap(),
        );
        assert!(matches!(r, Err(AccountingError::NotApplicable { .. })));
    }
}
