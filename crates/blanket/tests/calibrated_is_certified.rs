//! A calibrated gamma is certified at exactly the target: the calibrator's smallest gamma
//! (`min_gamma`) and the check it states its guarantee with (`certify_at`) use the same
//! criterion, so the reported guarantee is never above the target eps (it used to be, by up
//! to 1e-4 relative: grr-exact's gamma search accepted with its own block bound, which the
//! certifying check then did not reproduce).

use blanket::accounting::{Best, LocalRandomizer, ShuffleAccountant};
use blanket::calibrate::{calibrate, Calibratable, Calibration, CalibrationError, Target};
use blanket::params::{Delta, DomainSize, Epsilon, NumUsers};
use blanket::protocol::histogram::HistogramShape;
use blanket::protocol::scalar_sum::ScalarSumShape;
use blanket::protocol::vector_sum::{VectorCalibrationError, VectorSum};
use blanket::protocol::DomainConvention;

const NS: [u64; 3] = [2000, 100_000, 1_000_000];
const EPSS: [f64; 3] = [0.5, 1.0, 3.0];
const DELTAS: [f64; 2] = [1e-6, 1e-8];

fn targets() -> Vec<Target> {
    let mut v = Vec::new();
    for n in NS {
        for eps in EPSS {
            for delta in DELTAS {
                v.push(Target {
                    eps: Epsilon::new(eps).unwrap(),
                    delta: Delta::new(delta).unwrap(),
                    n: NumUsers::new(n).unwrap(),
                });
            }
        }
    }
    v
}

/// The generic calibration's guarantee is at most the requirement's eps, at its delta, and
/// `certify_at` at the requirement holds for the requirement instance and for the randomizer
/// users really run. Returns whether the target was feasible.
fn check<P: Calibratable>(protocol: &P, target: &Target, what: &str) -> bool {
    let acct = Best::default();
    let cal: Calibration<P::Choice> = match calibrate(protocol, target, &acct) {
        Ok(c) => c,
        Err(CalibrationError::Infeasible { .. }) => return false,
        Err(e) => panic!("{what} {target:?}: {e}"),
    };
    let req = protocol.requirement(cal.choice, target).unwrap();
    let g = cal.guarantee;
    assert!(
        g.epsilon <= req.eps.get() && g.delta <= req.delta.get(),
        "{what} {target:?}: guarantee {g:?} above the requirement {req:?}"
    );
    let req_grr = LocalRandomizer::Grr {
        m: req.m.get(),
        gamma: cal.gamma.get(),
    };
    assert!(
        acct.certify_at(&req_grr, req.n, req.eps.get(), req.delta.get())
            .is_some(),
        "{what} {target:?}: gamma {:?} not certified at the requirement {req:?}",
        cal.gamma
    );
    let (run, run_n) = protocol.instance(cal.choice, cal.gamma, target);
    assert!(
        acct.certify_at(&run, run_n, req.eps.get(), req.delta.get())
            .is_some(),
        "{what} {target:?}: the randomizer users run ({run:?}, n = {run_n:?}) is not certified at {req:?}"
    );
    let c = cal
        .certified
        .unwrap_or_else(|| panic!("{what} {target:?}: no guarantee for the real randomizer"));
    assert!(
        c.epsilon <= req.eps.get() && c.delta <= req.delta.get(),
        "{what} {target:?}: {c:?}"
    );
    true
}

#[test]
fn calibrated_histogram_is_certified_at_the_target() {
    for m in [2u64, 16, 1_000_000] {
        let shape = HistogramShape {
            m: DomainSize::new(m).unwrap(),
        };
        let feasible = targets()
            .iter()
            .filter(|t| check(&shape, t, &format!("histogram m = {m}")))
            .count();
        assert!(feasible >= 12, "m = {m}: only {feasible} feasible targets");
    }
}

#[test]
fn calibrated_scalar_sum_is_certified_at_the_target() {
    let shape = ScalarSumShape {
        k: None,
        convention: DomainConvention::TrueDomain,
    };
    let feasible = targets()
        .iter()
        .filter(|t| check(&shape, t, "scalar sum"))
        .count();
    assert!(feasible >= 12, "only {feasible} feasible targets");
}

/// Vector sum, t = 1 (d = 100: one GRR instance over the d (k + 1) pairs) and t = 2 (d = 10:
/// per coordinate, composed): the instance is certified at its requirement, the GRR over the
/// pairs (t = 1) at exactly the target, and the whole protocol's guarantee is at most the
/// target.
#[test]
fn calibrated_vector_sum_is_certified_at_the_target() {
    let acct = Best::default();
    for (d, t) in [(100u64, 1u64), (10, 2)] {
        let mut feasible = 0;
        for target in targets() {
            let (vs, vc) = match VectorSum::calibrate(
                d,
                Some(t),
                None,
                DomainConvention::TrueDomain,
                &target,
                &acct,
            ) {
                Ok(x) => x,
                Err(VectorCalibrationError::Infeasible { .. }) => continue,
                Err(e) => panic!("d = {d}, t = {t}, {target:?}: {e}"),
            };
            feasible += 1;
            let req = vc.requirement;
            let g = vc.instance.guarantee;
            assert!(
                g.epsilon <= req.eps.get() && g.delta <= req.delta.get(),
                "d = {d}, t = {t}, {target:?}: {g:?} above {req:?}"
            );
            let one = LocalRandomizer::Grr {
                m: req.m.get(),
                gamma: vc.gamma.get(),
            };
            assert!(
                acct.certify_at(&one, req.n, req.eps.get(), req.delta.get())
                    .is_some(),
                "d = {d}, t = {t}, {target:?}: instance not certified at {req:?}"
            );
            if t == 1 {
                let pairs = LocalRandomizer::Grr {
                    m: (d * (u64::from(vc.k.get()) + 1)) as u32,
                    gamma: vc.gamma.get(),
                };
                assert_eq!(pairs, one);
                assert!(acct
                    .certify_at(&pairs, target.n, target.eps.get(), target.delta.get())
                    .is_some());
            }
            let whole = vc
                .certified
                .unwrap_or_else(|| panic!("d = {d}, t = {t}, {target:?}: not certified"));
            assert!(
                whole.epsilon <= target.eps.get() && whole.delta <= target.delta.get(),
                "d = {d}, t = {t}, {target:?}: {whole:?}"
            );
            let again = vs
                .certify_target(target.n, target.delta, Some(target.eps), &acct)
                .unwrap();
            assert!(again.epsilon <= target.eps.get(), "{again:?}");
        }
        assert!(feasible >= 12, "d = {d}, t = {t}: only {feasible} feasible");
    }
}
