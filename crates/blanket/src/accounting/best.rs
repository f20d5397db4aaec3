//! The best certified bound: runs every applicable method and takes the smallest valid
//! result, recording which method certified it. Each candidate is itself certified, so the
//! minimum is (spec 03, "Calibration").

use super::{AccountingError, Guarantee, LocalRandomizer, Method, ShuffleAccountant};
use crate::params::{Delta, DomainSize, Epsilon, NumUsers};
use serde::Serialize;

/// One method's answer.
#[derive(Debug, Clone, Serialize)]
pub struct MethodResult {
    /// The method.
    pub method: Method,
    /// Certified epsilon, or `None` when the method does not apply.
    pub epsilon: Option<f64>,
    /// Why it does not apply.
    pub reason: Option<String>,
    /// Compute time in seconds.
    pub seconds: f64,
}

/// The minimum over a set of methods.
#[derive(Debug, Clone)]
pub struct Best {
    methods: Vec<Method>,
}

/// The methods [`Best`] takes the minimum over by default. `variation-ratio` is left out: as
/// implemented (our reading of Wang et al.'s reduction for k-RR) it falls *below* the exact
/// brute-force curve for tiny n (n = 5, m = 3, gamma = 0.6, eps = 0.6: 0.0505 against the
/// true 0.0545), so it is not certified; it stays available by name for comparison.
pub const CERTIFIED: [Method; 6] = [
    Method::BlanketClosed,
    Method::ErlingssonClosed,
    Method::Fmt21Closed,
    Method::Fmt21Numerical,
    Method::ClonesKrr,
    Method::GrrExact,
];

impl Default for Best {
    fn default() -> Self {
        Self {
            methods: CERTIFIED.to_vec(),
        }
    }
}

impl Best {
    /// The minimum over these methods.
    pub fn of(methods: &[Method]) -> Self {
        Self {
            methods: methods.to_vec(),
        }
    }

    /// Every method's answer at (randomizer, n, delta), in order.
    pub fn evaluate_all(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
        delta: Delta,
    ) -> Vec<MethodResult> {
        self.methods
            .iter()
            .map(|&m| {
                let t = std::time::Instant::now();
                let r = m.accountant().epsilon(randomizer, n, delta);
                let seconds = t.elapsed().as_secs_f64();
                match r {
                    Ok(e) => MethodResult {
                        method: m,
                        epsilon: Some(e),
                        reason: None,
                        seconds,
                    },
                    Err(e) => MethodResult {
                        method: m,
                        epsilon: None,
                        reason: Some(e.to_string()),
                        seconds,
                    },
                }
            })
            .collect()
    }

    /// Every method's answer (as [`Best::evaluate_all`]) together with the minimum over them
    /// (as [`ShuffleAccountant::guarantee`]), each method evaluated once: what `account shuffle
    /// --method best` reports, so that its wall time covers the whole call.
    pub fn evaluate_all_and_best(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
        delta: Delta,
    ) -> (Vec<MethodResult>, Result<Guarantee, AccountingError>) {
        let mut all = Vec::with_capacity(self.methods.len());
        let mut best: Option<Guarantee> = None;
        let mut first_err = None;
        for &m in &self.methods {
            let t = std::time::Instant::now();
            let r = m.accountant().epsilon(randomizer, n, delta);
            let seconds = t.elapsed().as_secs_f64();
            all.push(match &r {
                Ok(e) => MethodResult {
                    method: m,
                    epsilon: Some(*e),
                    reason: None,
                    seconds,
                },
                Err(e) => MethodResult {
                    method: m,
                    epsilon: None,
                    reason: Some(e.to_string()),
                    seconds,
                },
            });
            Self::fold(&mut best, &mut first_err, m, r, delta);
        }
        let res = best.ok_or_else(|| first_err.unwrap_or_else(|| self.no_method()));
        (all, res)
    }

    /// Folds one method's answer into the running minimum (NaN ignored, first error kept).
    fn fold(
        best: &mut Option<Guarantee>,
        first_err: &mut Option<AccountingError>,
        m: Method,
        r: Result<f64, AccountingError>,
        delta: Delta,
    ) {
        match r {
            Ok(e) if !e.is_nan() => {
                if best.is_none_or(|b| e < b.epsilon) {
                    *best = Some(Guarantee {
                        epsilon: e,
                        delta: delta.get(),
                        method: m,
                    });
                }
            }
            Ok(_) => {}
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }

    fn no_method(&self) -> AccountingError {
        AccountingError::NotApplicable {
            method: Method::Best,
            reason: "no method applies to these parameters".into(),
        }
    }
}

impl ShuffleAccountant for Best {
    fn method(&self) -> Method {
        Method::Best
    }

    fn epsilon(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
        delta: Delta,
    ) -> Result<f64, AccountingError> {
        self.guarantee(randomizer, n, delta).map(|g| g.epsilon)
    }

    fn guarantee(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
        delta: Delta,
    ) -> Result<Guarantee, AccountingError> {
        let mut best: Option<Guarantee> = None;
        let mut first_err = None;
        for &m in &self.methods {
            let r = m.accountant().epsilon(randomizer, n, delta);
            Self::fold(&mut best, &mut first_err, m, r, delta);
        }
        best.ok_or_else(|| first_err.unwrap_or_else(|| self.no_method()))
    }

    fn delta(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
        eps: f64,
    ) -> Result<f64, AccountingError> {
        let mut best: Option<f64> = None;
        for &m in &self.methods {
            if let Ok(d) = m.accountant().delta(randomizer, n, eps) {
                best = Some(best.map_or(d, |b: f64| b.min(d)));
            }
        }
        best.ok_or_else(|| self.no_method())
    }

    fn certify_at(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
        eps: f64,
        delta: f64,
    ) -> Option<Method> {
        self.methods
            .iter()
            .find(|m| {
                m.accountant()
                    .certify_at(randomizer, n, eps, delta)
                    .is_some()
            })
            .copied()
    }

    fn min_gamma(
        &self,
        m: DomainSize,
        n: NumUsers,
        eps: Epsilon,
        delta: Delta,
    ) -> Result<f64, AccountingError> {
        self.min_gamma_with_method(m, n, eps, delta).map(|(g, _)| g)
    }
}

impl Best {
    /// The smallest certified gamma over the methods, and the method that certified it.
    pub fn min_gamma_with_method(
        &self,
        m: DomainSize,
        n: NumUsers,
        eps: Epsilon,
        delta: Delta,
    ) -> Result<(f64, Method), AccountingError> {
        let mut best: Option<(f64, Method)> = None;
        let mut first_err = None;
        for &meth in &self.methods {
            match meth.accountant().min_gamma(m, n, eps, delta) {
                Ok(g) => {
                    if best.is_none_or(|(b, _)| g < b) {
                        best = Some((g, meth));
                    }
                }
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        best.ok_or_else(|| {
            first_err
                .unwrap_or_else(|| AccountingError::unreachable(Method::Best, m, n, eps, delta))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_is_the_minimum_and_names_the_winner() {
        let n = NumUsers::new(20_000).unwrap();
        let d = Delta::new(1e-6).unwrap();
        let r = LocalRandomizer::krr(DomainSize::new(10).unwrap(), 2.0);
        let all = Best::default().evaluate_all(&r, n, d);
        let g = Best::default().guarantee(&r, n, d).unwrap();
        let min = all
            .iter()
            .filter_map(|x| x.epsilon)
            .fold(f64::INFINITY, f64::min);
        assert_eq!(g.epsilon, min);
        assert_eq!(g.method, Method::GrrExact);
        // Generic randomizer: only generic methods answer.
        let gen = LocalRandomizer::Generic { eps0: 2.0 };
        let all = Best::default().evaluate_all(&gen, n, d);
        for x in &all {
            let generic_ok = matches!(
                x.method,
                Method::Fmt21Closed | Method::Fmt21Numerical | Method::ErlingssonClosed
            );
            if !generic_ok {
                assert!(x.epsilon.is_none() && x.reason.is_some(), "{:?}", x);
            }
        }
        let g = Best::default().guarantee(&gen, n, d).unwrap();
        assert_eq!(g.method, Method::Fmt21Numerical);
    }

    #[test]
    fn evaluate_all_and_best_agrees_with_guarantee_and_evaluate_all() {
        // One pass gives the same per-method answers and the same minimum as the two separate
        // calls, errors included (the k-RR-only methods refuse a generic randomizer).
        let d = Delta::new(1e-6).unwrap();
        for (r, n) in [
            (
                LocalRandomizer::krr(DomainSize::new(10).unwrap(), 2.0),
                20_000,
            ),
            (LocalRandomizer::Generic { eps0: 2.0 }, 20_000),
            (LocalRandomizer::Generic { eps0: 50.0 }, 2),
        ] {
            let n = NumUsers::new(n).unwrap();
            let (all, res) = Best::default().evaluate_all_and_best(&r, n, d);
            let sep = Best::default().evaluate_all(&r, n, d);
            assert_eq!(all.len(), sep.len());
            for (a, b) in all.iter().zip(&sep) {
                assert_eq!(
                    (a.method, a.epsilon, &a.reason),
                    (b.method, b.epsilon, &b.reason)
                );
            }
            match (res, Best::default().guarantee(&r, n, d)) {
                (Ok(a), Ok(b)) => assert_eq!((a.epsilon, a.method), (b.epsilon, b.method)),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                (a, b) => panic!("{a:?} vs {b:?}"),
            }
        }
    }
}
