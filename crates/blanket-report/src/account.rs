//! `account shuffle` and `account compose`: the [`ShuffleReport`] of shuffled reports of a
//! local randomizer, the [`ComposeReport`] of a composition, and the pieces of the
//! composition both front ends share (the search for KOV's best per-round split of a curve).

use blanket::accounting::best::{MethodResult, CERTIFIED};
use blanket::accounting::composition::kov_epsilon;
use blanket::accounting::{Best, LocalRandomizer, Method, PrivacyCurve};
use blanket::display::up;
use blanket::params::{Delta, NumUsers};
use rayon::prelude::*;
use serde::Serialize;
use std::time::Instant;

/// Whether a method's bound is certified (proved and computed with safe rounding). The
/// variation-ratio bound is not: it is reported for comparison only and never labelled
/// certified.
pub fn is_certified(m: Method) -> bool {
    m == Method::Best || CERTIFIED.contains(&m)
}

/// What `account shuffle` prints (JSON keys are a contract).
#[derive(Serialize, Debug, Clone)]
pub struct ShuffleReport {
    /// The certified epsilon, or eps0 (no amplification claimed) when nothing certifies.
    pub epsilon: Option<f64>,
    /// The method asked for.
    pub method: String,
    /// The method that certified `epsilon`, if one did.
    pub certified_by: Option<String>,
    /// The method's conditions hold and its bound is certified.
    pub valid: bool,
    /// Whether `epsilon` is certified by an amplification bound.
    pub certified: bool,
    /// An uncertified method's own value (variation-ratio), for comparison only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uncertified_epsilon: Option<f64>,
    /// Why no amplification is claimed, if so.
    pub reason: Option<String>,
    /// Wall time of the whole evaluation.
    pub seconds: f64,
    /// Local privacy of the randomizer.
    pub eps0: f64,
    /// Users.
    pub n: u64,
    /// Target delta.
    pub delta: f64,
    /// The randomizer.
    pub randomizer: LocalRandomizer,
    /// Citation of the certifying (or asked) method.
    pub citation: String,
    /// With `best`: every method's answer.
    pub all: Option<Vec<MethodResult>>,
}

/// eps of `n` shuffled reports of the eps0-LDP randomizer `r` at `delta`, by `method` or,
/// with [`Method::Best`], the smallest certified bound (every method's answer in `all`).
/// `seconds` is the wall time of the whole call: for `best`, every method is evaluated once
/// (each also timed on its own in `all`) and the minimum is taken from those answers. When
/// nothing certifies, `epsilon` is eps0 (no amplification claimed) and `reason` says why.
pub fn shuffle(
    r: LocalRandomizer,
    eps0: f64,
    n: NumUsers,
    delta: Delta,
    method: Method,
) -> ShuffleReport {
    let t = Instant::now();
    let (res, all) = if method == Method::Best {
        let (all, res) = Best::default().evaluate_all_and_best(&r, n, delta);
        (res, Some(all))
    } else {
        (method.accountant().guarantee(&r, n, delta), None)
    };
    let seconds = t.elapsed().as_secs_f64();
    let base = ShuffleReport {
        // No amplification claimed: the local guarantee eps0 still holds.
        epsilon: Some(eps0),
        method: method.name().into(),
        certified_by: None,
        valid: false,
        certified: false,
        uncertified_epsilon: None,
        reason: None,
        seconds,
        eps0,
        n: n.get(),
        delta: delta.get(),
        randomizer: r,
        citation: method.citation().into(),
        all,
    };
    match res {
        Ok(g) if is_certified(g.method) => ShuffleReport {
            epsilon: Some(g.epsilon),
            certified_by: Some(g.method.name().into()),
            valid: true,
            certified: true,
            citation: g.method.citation().into(),
            ..base
        },
        Ok(g) => ShuffleReport {
            uncertified_epsilon: Some(g.epsilon),
            reason: Some(format!(
                "{} is not a certified bound: its value {} is for comparison only; reporting eps0 (no amplification claimed)",
                g.method,
                up(g.epsilon)
            )),
            ..base
        },
        Err(e) => ShuffleReport {
            reason: Some(format!("{e}; reporting eps0 (no amplification claimed)")),
            ..base
        },
    }
}

/// What `account compose` prints (JSON keys are a contract).
#[derive(Serialize, Debug, Clone)]
pub struct ComposeReport {
    /// Total epsilon.
    pub epsilon: f64,
    /// Total delta.
    pub delta: f64,
    /// Composition method (basic, drv, kov, pld).
    pub method: &'static str,
    /// Rounds k.
    pub count: u64,
    /// Pair mode: the per-round (eps, delta). Shuffled mode: the per-round (eps1, delta1)
    /// point of the curve that KOV used (the best split).
    pub component_eps: Option<f64>,
    /// See `component_eps`.
    pub component_delta: Option<f64>,
    /// The PLD's per-round grid step (null for the other methods).
    pub step: Option<f64>,
    /// Compute time in seconds.
    pub seconds: f64,
    /// Shuffled mode: local eps0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eps0: Option<f64>,
    /// Shuffled mode: users per round.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub n: Option<u64>,
    /// Shuffled mode: the randomizer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub randomizer: Option<LocalRandomizer>,
    /// Shuffled mode: the accountant whose curve was composed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accountant: Option<&'static str>,
    /// Shuffled mode: KOV of the best per-round split (null if no split gives one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kov_epsilon: Option<Option<f64>>,
}

/// A pair-mode composition's inputs and result: `count` rounds of an
/// (`component_eps`, `component_delta`)-DP mechanism composed by `method`.
#[derive(Debug, Clone, Copy)]
pub struct PairComposition {
    /// Total epsilon.
    pub epsilon: f64,
    /// Total delta.
    pub delta: f64,
    /// Composition method (basic, drv, kov, pld).
    pub method: &'static str,
    /// Rounds k.
    pub count: u64,
    /// Per-round eps.
    pub component_eps: f64,
    /// Per-round delta.
    pub component_delta: f64,
    /// PLD grid step (pld only).
    pub step: Option<f64>,
    /// Compute time in seconds.
    pub seconds: f64,
}

/// A shuffled-mode composition's inputs and result: `count` rounds of `randomizer` shuffled
/// among `n` users, its `accountant`'s whole curve composed by PLD.
#[derive(Debug, Clone, Copy)]
pub struct ShuffledComposition {
    /// Total epsilon of the PLD.
    pub epsilon: f64,
    /// Total delta.
    pub delta: f64,
    /// Rounds k.
    pub count: u64,
    /// (KOV eps, eps1, delta1) of the best per-round split, if any ([`best_kov_split`]).
    pub kov: Option<(f64, f64, f64)>,
    /// PLD grid step.
    pub step: f64,
    /// Compute time in seconds.
    pub seconds: f64,
    /// Local eps0.
    pub eps0: f64,
    /// Users per round.
    pub n: u64,
    /// The randomizer.
    pub randomizer: LocalRandomizer,
    /// The accountant whose curve was composed.
    pub accountant: Method,
}

impl From<PairComposition> for ComposeReport {
    fn from(c: PairComposition) -> Self {
        Self {
            epsilon: c.epsilon,
            delta: c.delta,
            method: c.method,
            count: c.count,
            component_eps: Some(c.component_eps),
            component_delta: Some(c.component_delta),
            step: c.step,
            seconds: c.seconds,
            eps0: None,
            n: None,
            randomizer: None,
            accountant: None,
            kov_epsilon: None,
        }
    }
}

impl From<ShuffledComposition> for ComposeReport {
    fn from(c: ShuffledComposition) -> Self {
        Self {
            epsilon: c.epsilon,
            delta: c.delta,
            method: "pld",
            count: c.count,
            component_eps: c.kov.map(|x| x.1),
            component_delta: c.kov.map(|x| x.2),
            step: Some(c.step),
            seconds: c.seconds,
            eps0: Some(c.eps0),
            n: Some(c.n),
            randomizer: Some(c.randomizer),
            accountant: Some(c.accountant.name()),
            kov_epsilon: Some(c.kov.map(|x| x.0)),
        }
    }
}

/// The most grid steps a shuffled curve is sampled at (one accountant query each).
pub const MAX_CURVE_STEPS: f64 = 10_000.0;

/// Fractions f of the total delta given to the k rounds' deltas (delta1 = f delta / k) in the
/// search for KOV's best per-round split of a curve.
pub const SPLIT_FRACTIONS: [f64; 14] = [
    1e-3, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99,
];

/// The part of a k-fold composition's delta due to the rounds' own deltas,
/// 1 - (1 - delta1)^k, rounded down (a lower estimate: only the claim "already exceeds" is
/// made from it).
pub fn own_delta(component_delta: f64, k: u64) -> f64 {
    -(k as f64 * (-component_delta).ln_1p()).exp_m1() * (1.0 - 1e-12)
}

/// KOV applied to the best per-round (eps1, delta1) point of a curve for k rounds at total
/// delta `total`: delta1 = f total / k over [`SPLIT_FRACTIONS`], eps1 = the curve's certified
/// eps at delta1. Returns (KOV eps, eps1, delta1) of the smallest, or `None` if no split
/// gives one. `tick` is called once per fraction tried.
pub fn best_kov_split<C>(
    curve: &C,
    k: u64,
    total: f64,
    tick: impl Fn() + Sync,
) -> Option<(f64, f64, f64)>
where
    C: PrivacyCurve + Sync,
{
    SPLIT_FRACTIONS
        .par_iter()
        .filter_map(|&f| {
            let d1 = f * total / k as f64;
            let e1 = curve.epsilon(d1);
            let res = (e1 > 0.0 && e1.is_finite() && d1 > 0.0)
                .then(|| kov_epsilon(e1, d1, k, total).ok())
                .flatten()
                .map(|e| (e, e1, d1));
            tick();
            res
        })
        .min_by(|x, y| x.0.total_cmp(&y.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pair mode's JSON: the shuffled-mode keys are absent, not null (a contract of
    /// `account compose --json` and Python's `compose().to_dict()`).
    #[test]
    fn pair_composition_json_has_no_shuffled_keys() {
        let r = ComposeReport::from(PairComposition {
            epsilon: 1.5,
            delta: 1e-6,
            method: "kov",
            count: 10,
            component_eps: 0.25,
            component_delta: 0.0,
            step: None,
            seconds: 0.5,
        });
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"epsilon":1.5,"delta":1e-6,"method":"kov","count":10,"component_eps":0.25,"component_delta":0.0,"step":null,"seconds":0.5}"#
        );
    }

    /// The shuffled mode's JSON: no KOV split gives null component and kov_epsilon values.
    #[test]
    fn shuffled_composition_without_a_kov_split_reports_nulls() {
        let r = ComposeReport::from(ShuffledComposition {
            epsilon: 2.0,
            delta: 1e-8,
            count: 100,
            kov: None,
            step: 0.125,
            seconds: 0.5,
            eps0: 1.0,
            n: 1000,
            randomizer: LocalRandomizer::Generic { eps0: 1.0 },
            accountant: Method::Fmt21Numerical,
        });
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["method"], "pld");
        assert_eq!(v["accountant"], Method::Fmt21Numerical.name());
        assert!(v["kov_epsilon"].is_null() && v["component_eps"].is_null());
        assert_eq!(v["step"], 0.125);
        assert_eq!(v["n"], 1000);
    }

    /// The rounds' own delta is rounded down (it only ever supports "already exceeds"): a
    /// relative 1e-12 below 1 - (1 - delta1)^k computed to a few ulps through ln_1p/exp_m1
    /// (and below the binomial value k delta1 - C(k, 2) delta1^2 + C(k, 3) delta1^3 where
    /// that series is exact to double precision).
    #[test]
    fn own_delta_is_below_the_exact_value() {
        for (cd, k) in [(1e-3f64, 10u64), (1e-9, 1000), (0.1, 3), (1e-12, 5)] {
            let accurate = -(k as f64 * (-cd).ln_1p()).exp_m1();
            let own = own_delta(cd, k);
            assert!(
                own <= accurate * (1.0 - 1e-13) && own >= accurate * (1.0 - 1e-11),
                "{cd} {k}: {own} vs {accurate}"
            );
        }
        let (cd, k) = (1e-9f64, 1000.0f64);
        let series =
            k * cd - k * (k - 1.0) / 2.0 * cd * cd + k * (k - 1.0) * (k - 2.0) / 6.0 * cd.powi(3);
        assert!(own_delta(1e-9, 1000) < series);
        assert_eq!(own_delta(0.0, 10), 0.0);
    }
}
