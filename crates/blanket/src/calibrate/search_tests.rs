//! Tests of the generic search against brute force.
use super::*;
use crate::accounting::{BlanketTheorem31, GrrExact};
use crate::params::Precision;
use crate::protocol::scalar_sum::ScalarSumShape;
use crate::protocol::vector_sum::{VectorSum, VectorSumShape, T_PATIENCE};
use crate::protocol::DomainConvention;

fn target(eps: f64, delta: f64, n: u64) -> Target {
    Target {
        eps: Epsilon::new(eps).unwrap(),
        delta: Delta::new(delta).unwrap(),
        n: NumUsers::new(n).unwrap(),
    }
}

/// Every choice evaluated: the first one with the least predicted error.
fn brute_force<P: Calibratable>(
    p: &P,
    t: &Target,
    acct: &dyn ShuffleAccountant,
) -> Option<(P::Choice, f64)> {
    let mut best: Option<(P::Choice, f64)> = None;
    for c in p.choices(t) {
        let Ok(r) = p.requirement(c, t) else { continue };
        let Ok(g) = acct.min_gamma(r.m, r.n, r.eps, r.delta) else {
            continue;
        };
        let mse = p.predicted_mse(c, Gamma::new(g).unwrap(), t.n);
        if best.is_none_or(|b| mse < b.1) {
            best = Some((c, mse));
        }
    }
    best
}

fn scalar(convention: DomainConvention) -> ScalarSumShape {
    ScalarSumShape {
        k: None,
        convention,
    }
}

fn assert_matches_brute_force<P: Calibratable>(p: &P, t: &Target, acct: &dyn ShuffleAccountant)
where
    P::Choice: PartialEq,
{
    let (choice, mse) = brute_force(p, t, acct).unwrap();
    let cal = calibrate(p, t, acct).unwrap();
    assert!(
        p.choices(t).len() > LINEAR_SCAN_MAX,
        "the search is exercised"
    );
    assert_eq!(cal.choice, choice, "{t:?}");
    assert_eq!(cal.predicted_mse, mse, "{t:?}");
}

#[test]
fn search_matches_brute_force_closed_form() {
    for convention in [DomainConvention::TrueDomain, DomainConvention::Paper] {
        for n in [2_000, 30_000, 1_000_000, 50_000_000, 3_000_000_000] {
            for eps in [0.1, 0.5, 1.0, 3.0] {
                for delta in [1e-4, 1e-8, 1e-12] {
                    let t = target(eps, delta, n);
                    let p = scalar(convention);
                    if brute_force(&p, &t, &BlanketTheorem31).is_none() {
                        assert!(calibrate(&p, &t, &BlanketTheorem31).is_err());
                        continue;
                    }
                    assert_matches_brute_force(&p, &t, &BlanketTheorem31);
                }
            }
        }
    }
}

#[test]
fn search_matches_brute_force_grr_exact() {
    let p = scalar(DomainConvention::TrueDomain);
    assert_matches_brute_force(&p, &target(1.0, 1e-6, 20_000), &GrrExact);
    let vs = VectorSumShape {
        d: 10,
        t: 3,
        k: None,
        convention: DomainConvention::TrueDomain,
    };
    assert_matches_brute_force(&vs, &target(0.8, 1e-6, 100_000), &GrrExact);
}

#[test]
fn hinted_search_finds_the_same_optimum() {
    let p = scalar(DomainConvention::TrueDomain);
    let t = target(1.0, 1e-8, 1_000_000);
    let (cal, idx) = calibrate_near(&p, &t, &BlanketTheorem31, None, 2, true).unwrap();
    let len = p.choices(&t).len();
    for hint in [0, 1, idx / 2, idx, idx + 1, 2 * idx, len - 1, len + 5] {
        let (c, i) = calibrate_near(&p, &t, &BlanketTheorem31, Some(hint), 1, true).unwrap();
        assert_eq!((c, i), (cal, idx), "hint {hint}");
    }
}

#[test]
fn infeasible_targets_keep_their_error() {
    let p = scalar(DomainConvention::TrueDomain);
    let t = target(0.1, 1e-12, 50);
    match calibrate(&p, &t, &BlanketTheorem31) {
        Err(CalibrationError::Infeasible { min_n: Some(n), .. }) => {
            assert!(calibrate(&p, &target(0.1, 1e-12, n), &BlanketTheorem31).is_ok());
            assert!(calibrate(&p, &target(0.1, 1e-12, n - 1), &BlanketTheorem31).is_err());
        }
        other => panic!("{other:?}"),
    }
}

/// The t scan the vector-sum calibration performs, with every k evaluated for each t.
fn vector_brute_force(d: u32, t: &Target, acct: &dyn ShuffleAccountant) -> (u32, Precision) {
    let mut ts: Vec<u32> = (1..=d.min(8)).collect();
    let mut c = 8u32;
    while c < d {
        c = (c + c.div_ceil(4)).min(d);
        ts.push(c);
    }
    let mut best: Option<(u32, Precision, f64)> = None;
    let mut worse = 0;
    for tt in ts {
        let shape = VectorSumShape {
            d,
            t: tt,
            k: None,
            convention: DomainConvention::TrueDomain,
        };
        let Some((k, mse)) = brute_force(&shape, t, acct) else {
            if best.is_some() {
                break;
            }
            continue;
        };
        if best.is_some_and(|b| b.2 <= mse) {
            worse += 1;
            if worse >= T_PATIENCE {
                break;
            }
        } else {
            best = Some((tt, k, mse));
            worse = 0;
        }
    }
    let b = best.unwrap();
    (b.0, b.1)
}

#[test]
fn vector_sum_t_scan_matches_brute_force() {
    for (n, d, eps, delta) in [
        (1_000_000, 100, 0.95, 1e-6),
        (50_000, 100, 0.95, 0.5),
        (200_000, 30, 0.5, 1e-8),
        (10_000_000, 1000, 2.0, 1e-9),
    ] {
        let t = target(eps, delta, n);
        let (p, cal) = VectorSum::calibrate(
            u64::from(d),
            None,
            None,
            DomainConvention::TrueDomain,
            &t,
            &BlanketTheorem31,
        )
        .unwrap();
        assert_eq!((p.t(), p.k()), vector_brute_force(d, &t, &BlanketTheorem31));
        assert_eq!((cal.t, cal.k), (p.t(), p.k()));
    }
}

#[test]
fn results_do_not_depend_on_the_number_of_threads() {
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let p = scalar(DomainConvention::TrueDomain);
    let t = target(1.0, 1e-6, 50_000);
    let serial = one.install(|| calibrate(&p, &t, &GrrExact)).unwrap();
    assert_eq!(serial, calibrate(&p, &t, &GrrExact).unwrap());
    let vt = target(0.95, 1e-6, 100_000);
    let run = || {
        VectorSum::calibrate(
            20,
            None,
            None,
            DomainConvention::TrueDomain,
            &vt,
            &crate::accounting::Best::default(),
        )
        .unwrap()
    };
    let serial = one.install(run);
    assert_eq!(serial, run());
}
