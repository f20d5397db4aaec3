//! `blanket.account`: certified amplification bounds, privacy curves and composition, computed
//! by the same core functions as `blanket account shuffle|curve|compose` and reported with the
//! same JSON keys (`--json`).

use crate::errors::{Error, Result};
use crate::json;
use blanket::accounting::composition::{basic, drv, kov_epsilon, Pld};
use blanket::accounting::{
    CurveAccountant, Fmt21Numerical, GrrExact, LocalRandomizer, Method, PrivacyCurve,
    StrongerClones,
};
use blanket::display::{down, echo, up};
use blanket::params::{Delta, DomainSize, Gamma, NumUsers};
use blanket_report::account::{
    best_kov_split, is_certified, own_delta, shuffle, ComposeReport, PairComposition,
    ShuffledComposition, MAX_CURVE_STEPS,
};
use numpy::{PyArray1, PyArray2};
use pyo3::prelude::*;
use rayon::prelude::*;
use std::time::Instant;

/// The largest local eps0 accepted for a generic or k-RR randomizer, as on the command line
/// (`blanket account`, EPS0_MAX): beyond it a randomizer is essentially deterministic.
pub const EPS0_MAX: f64 = 100.0;

/// The local randomizer of `randomizer="generic" | ("krr", k) | ("grr", m, gamma)`, given as
/// its kind (`"generic"`, `"krr"`, `"grr"`), `domain` (k or m) and `gamma`, with `eps0`.
/// For GRR, eps0 follows from (m, gamma) and must not be given.
pub fn randomizer(
    kind: &str,
    domain: Option<u64>,
    gamma: Option<f64>,
    eps0: Option<f64>,
) -> Result<(LocalRandomizer, f64)> {
    let check_eps0 = || -> Result<f64> {
        match eps0 {
            Some(e) if e.is_finite() && e > 0.0 && e <= EPS0_MAX => Ok(e),
            Some(e) => Err(Error::param(
                "eps0",
                format!("a number in (0, {EPS0_MAX}]"),
                e,
            )),
            None => Err(Error::param(
                "eps0",
                format!(
                    "a number in (0, {EPS0_MAX}] (required unless randomizer is ('grr', m, gamma))"
                ),
                "None",
            )),
        }
    };
    match kind {
        "generic" => {
            if let Some(k) = domain {
                return Err(Error::param(
                    "randomizer",
                    "'generic' without a domain (a generic randomizer has none)",
                    k,
                ));
            }
            let eps0 = check_eps0()?;
            Ok((LocalRandomizer::Generic { eps0 }, eps0))
        }
        "krr" => {
            let eps0 = check_eps0()?;
            let k = domain.ok_or_else(|| {
                Error::param(
                    "randomizer",
                    "('krr', k) with k >= 2 values",
                    "('krr', None)",
                )
            })?;
            Ok((LocalRandomizer::krr(DomainSize::new(k)?, eps0), eps0))
        }
        "grr" => {
            if let Some(e) = eps0 {
                return Err(Error::param(
                    "eps0",
                    "omitted with randomizer ('grr', m, gamma) (eps0 = log(1 + m (1 - gamma) / gamma) follows from them)",
                    e,
                ));
            }
            let m = DomainSize::new(domain.unwrap_or(0))?;
            let g = Gamma::new(gamma.unwrap_or(f64::NAN))?;
            let r = LocalRandomizer::Grr {
                m: m.get(),
                gamma: g.get(),
            };
            Ok((r, r.eps0()))
        }
        other => Err(Error::param(
            "randomizer",
            "'generic', ('krr', k) or ('grr', m, gamma)",
            other,
        )),
    }
}

/// The method named `name` (`"best"` or one of [`Method::ALL`]).
pub fn method(name: &str) -> Result<Method> {
    if name == Method::Best.name() {
        return Ok(Method::Best);
    }
    Method::ALL
        .into_iter()
        .find(|m| m.name() == name)
        .ok_or_else(|| {
            let all: Vec<&str> = std::iter::once("best")
                .chain(Method::ALL.iter().map(|m| m.name()))
                .collect();
            Error::param("method", format!("one of {}", all.join(", ")), name)
        })
}

/// eps of n shuffled reports of a local randomizer at delta, by one method or the best; the
/// report of `blanket account shuffle --json`, as a JSON string.
#[pyfunction]
#[pyo3(signature = (eps0, n, delta, kind, domain, gamma, method_name))]
#[allow(clippy::too_many_arguments)]
pub fn account_shuffle(
    py: Python<'_>,
    eps0: Option<f64>,
    n: f64,
    delta: f64,
    kind: &str,
    domain: Option<u64>,
    gamma: Option<f64>,
    method_name: &str,
) -> PyResult<String> {
    let n = NumUsers::from_f64(n).map_err(Error::from)?;
    let delta = Delta::new(delta).map_err(Error::from)?;
    let (r, eps0) = randomizer(kind, domain, gamma, eps0)?;
    let method = method(method_name)?;
    let out = py.allow_threads(|| shuffle(r, eps0, n, delta, method));
    Ok(json(&out)?)
}

/// The (eps, delta) curve of a shuffled randomizer per method on `points` deltas log-spaced
/// over [delta_min, 0.1] (the grid of `blanket account curve`). Returns (deltas, method
/// names, eps per method and delta with NaN where the method does not apply, whether each
/// method is certified, the randomizer as JSON text).
#[pyfunction]
#[pyo3(signature = (eps0, n, kind, domain, gamma, delta_min, points))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub fn account_curve<'py>(
    py: Python<'py>,
    eps0: Option<f64>,
    n: f64,
    kind: &str,
    domain: Option<u64>,
    gamma: Option<f64>,
    delta_min: f64,
    points: usize,
) -> PyResult<(
    Bound<'py, PyArray1<f64>>,
    Vec<&'static str>,
    Bound<'py, PyArray2<f64>>,
    Vec<bool>,
    String,
)> {
    let n = NumUsers::from_f64(n).map_err(Error::from)?;
    let (r, _) = randomizer(kind, domain, gamma, eps0)?;
    let dmin = Delta::new(delta_min)
        .map_err(|_| Error::param("delta_min", "in (0, 0.1)", delta_min))?
        .get();
    if !(2..=1000).contains(&points) {
        return Err(Error::param("points", "an integer from 2 to 1000", points).into());
    }
    if dmin >= 0.1 {
        return Err(Error::param(
            "delta_min",
            "below 0.1 (the curve spans [delta_min, 0.1])",
            dmin,
        )
        .into());
    }
    let (l0, l1) = (dmin.log10(), -1.0f64);
    let deltas: Vec<f64> = (0..points)
        .map(|i| 10f64.powf(l0 + (l1 - l0) * i as f64 / (points - 1) as f64))
        .collect();
    let eps: Vec<Vec<f64>> = py.allow_threads(|| {
        Method::ALL
            .par_iter()
            .map(|m| {
                let acct = m.accountant();
                deltas
                    .par_iter()
                    .map(|&d| {
                        Delta::new(d)
                            .ok()
                            .and_then(|d| acct.epsilon(&r, n, d).ok())
                            .unwrap_or(f64::NAN)
                    })
                    .collect()
            })
            .collect()
    });
    let names = Method::ALL.iter().map(|m| m.name()).collect();
    let certified = Method::ALL.iter().map(|&m| is_certified(m)).collect();
    let eps = PyArray2::from_vec2(py, &eps)?;
    Ok((
        PyArray1::from_vec(py, deltas),
        names,
        eps,
        certified,
        json(&r)?,
    ))
}

/// The arguments of [`account_compose`], validated by mode.
pub struct ComposeArgs<'a> {
    /// Rounds k.
    pub rounds: u64,
    /// Total delta.
    pub delta: f64,
    /// Pair mode: per-round eps.
    pub eps: Option<f64>,
    /// Pair mode: per-round delta.
    pub component_delta: Option<f64>,
    /// basic, drv, kov or pld.
    pub method: Option<&'a str>,
    /// PLD grid step.
    pub step: Option<f64>,
    /// Shuffled mode: local eps0.
    pub eps0: Option<f64>,
    /// Shuffled mode: users per round.
    pub n: Option<f64>,
    /// Shuffled mode: randomizer kind, domain, gamma.
    pub randomizer: (&'a str, Option<u64>, Option<f64>),
    /// Shuffled mode: curve accountant.
    pub accountant: Option<&'a str>,
}

/// Total eps of `rounds`-fold composition at a total delta; the report of
/// `blanket account compose --json`, as a JSON string. Pair mode (`eps`): rounds of an
/// (eps, component_delta)-DP mechanism by basic, drv, kov (default) or pld. Shuffled mode
/// (`eps0`, `n`): rounds of a shuffled randomizer, its whole certified curve composed by PLD,
/// beside KOV of the best per-round split.
#[pyfunction]
#[pyo3(signature = (rounds, delta, eps, component_delta, method, step, eps0, n, kind, domain, gamma, accountant))]
#[allow(clippy::too_many_arguments)]
pub fn account_compose(
    py: Python<'_>,
    rounds: u64,
    delta: f64,
    eps: Option<f64>,
    component_delta: Option<f64>,
    method: Option<&str>,
    step: Option<f64>,
    eps0: Option<f64>,
    n: Option<f64>,
    kind: Option<&str>,
    domain: Option<u64>,
    gamma: Option<f64>,
    accountant: Option<&str>,
) -> PyResult<String> {
    let explicit_randomizer = kind.is_some();
    let a = ComposeArgs {
        rounds,
        delta,
        eps,
        component_delta,
        method,
        step,
        eps0,
        n,
        randomizer: (kind.unwrap_or("generic"), domain, gamma),
        accountant,
    };
    let total = Delta::new(a.delta).map_err(Error::from)?.get();
    if a.rounds == 0 {
        return Err(Error::param("rounds", "an integer >= 1", 0).into());
    }
    if let Some(step) = a.step {
        if !(step.is_finite() && step > 0.0) {
            return Err(Error::param("step", "a finite number > 0", step).into());
        }
    }
    let shuffled_mode = a.eps0.is_some() || a.randomizer.0 == "grr" && explicit_randomizer;
    let out = match (a.eps, shuffled_mode) {
        (Some(e), false) => {
            if a.n.is_some() || explicit_randomizer || a.accountant.is_some() {
                return Err(Error::param(
                    "eps",
                    "given alone (pair mode) or replaced by eps0, n, randomizer, accountant (shuffled mode), not both",
                    e,
                )
                .into());
            }
            py.allow_threads(|| pair(&a, e, total))?
        }
        (None, true) => {
            if a.component_delta.is_some() {
                return Err(Error::param(
                    "component_delta",
                    "None in shuffled mode (eps0): a shuffled round's delta is its curve's",
                    a.component_delta.unwrap_or_default(),
                )
                .into());
            }
            py.allow_threads(|| shuffled(&a, total))?
        }
        _ => return Err(Error::param(
            "eps",
            "exactly one of eps (an (eps, delta) pair per round) and eps0 (a shuffled randomizer)",
            {
                // Python's spelling of the two optional arguments (not Rust's `Some(..)`).
                let show = |x: Option<f64>| x.map_or("None".to_string(), |v| v.to_string());
                format!("eps = {}, eps0 = {}", show(a.eps), show(a.eps0))
            },
        )
        .into()),
    };
    Ok(json(&out)?)
}

fn composition_error(e: impl std::fmt::Display) -> Error {
    Error::NoGuarantee(e.to_string())
}

fn pair(a: &ComposeArgs, eps: f64, total: f64) -> Result<ComposeReport> {
    if !(eps.is_finite() && eps > 0.0) {
        return Err(Error::param("eps", "a finite number > 0", eps));
    }
    let cd = a.component_delta.unwrap_or(0.0);
    if !(0.0..1.0).contains(&cd) {
        return Err(Error::param("component_delta", "in [0, 1)", cd));
    }
    let method = a.method.unwrap_or("kov");
    if !["basic", "drv", "kov", "pld"].contains(&method) {
        return Err(Error::param(
            "method",
            "one of basic, drv, kov, pld",
            method,
        ));
    }
    if a.step.is_some() && method != "pld" {
        return Err(Error::param(
            "step",
            "None unless method is 'pld'",
            a.step.unwrap_or_default(),
        ));
    }
    if let Some(step) = a.step {
        if step > eps || (eps / step).round() > 1e6 {
            return Err(Error::param(
                "step",
                format!("in (0, eps = {}] with eps / step <= 1e6", echo(eps)),
                echo(step),
            ));
        }
    }
    let t = Instant::now();
    let k = a.rounds;
    let mut step = None;
    let (e, name) = match method {
        "basic" => {
            let (e, d) = basic(eps, cd, k);
            if d > total {
                return Err(Error::NoGuarantee(format!(
                    "basic composition gives delta = {} > delta {}: raise delta or lower component_delta",
                    up(d),
                    echo(total)
                )));
            }
            (e, "basic")
        }
        "drv" => {
            let dp = total - k as f64 * cd;
            if dp.is_nan() || dp <= 0.0 {
                return Err(Error::param(
                    "component_delta",
                    format!("below delta / rounds (rounds times component_delta already reaches delta {}: nothing is left for drv)", echo(total)),
                    cd,
                ));
            }
            (drv(eps, cd, k, dp).map_err(composition_error)?.0, "drv")
        }
        "kov" => (
            kov_epsilon(eps, cd, k, total).map_err(composition_error)?,
            "kov",
        ),
        _ => {
            let one = Pld::from_epsilon_delta(eps, cd, a.step).map_err(composition_error)?;
            step = Some(one.h);
            let pld = one.compose(k).map_err(composition_error)?;
            let e = pld.epsilon(total);
            if e == f64::INFINITY {
                return Err(no_eps(
                    own_delta(cd, k),
                    pld.inf_mass,
                    total,
                    "the rounds' own deltas",
                    " or use method='kov'",
                ));
            }
            (e, "pld")
        }
    };
    Ok(ComposeReport::from(PairComposition {
        epsilon: e,
        delta: total,
        method: name,
        count: k,
        component_eps: eps,
        component_delta: cd,
        step,
        seconds: t.elapsed().as_secs_f64(),
    }))
}

/// As `blanket account compose`: the error when the PLD's mass at +infinity exceeds delta.
fn no_eps(own: f64, inf_mass: f64, total: f64, why: &str, hint: &str) -> Error {
    Error::NoGuarantee(if own >= total {
        format!(
            "no eps reaches this delta: the rounds' own deltas already exceed it (1 - (1 - delta1)^rounds = {} >= delta {})",
            down(own),
            echo(total)
        )
    } else {
        format!(
            "no eps reaches this delta with pld: the PLD's mass at +infinity ({why}, plus tails below 1e-30 moved there to stay certified) is {} >= delta {}; ask a larger delta{hint}",
            up(inf_mass),
            echo(total)
        )
    })
}

fn shuffled(a: &ComposeArgs, total: f64) -> Result<ComposeReport> {
    if let Some(m) = a.method {
        if m != "pld" {
            return Err(Error::param(
                "method",
                "'pld' or None in shuffled mode (eps0): a shuffled randomizer's curve is composed by pld only",
                m,
            ));
        }
    }
    let (kind, domain, gamma) = a.randomizer;
    let (r, eps0) = randomizer(kind, domain, gamma, a.eps0)?;
    let n = NumUsers::from_f64(a.n.ok_or_else(|| {
        Error::param(
            "n",
            "an integer from 2 to 2^48 in shuffled mode (eps0)",
            "None",
        )
    })?)?;
    let generic = matches!(r, LocalRandomizer::Generic { .. }) && kind == "generic";
    let choice = a.accountant.unwrap_or(if generic {
        "fmt21-numerical"
    } else {
        "clones-krr"
    });
    let method = match choice {
        "fmt21-numerical" => Method::Fmt21Numerical,
        "clones-krr" => Method::ClonesKrr,
        "grr-exact" => Method::GrrExact,
        other => {
            return Err(Error::param(
                "accountant",
                "one of fmt21-numerical, clones-krr, grr-exact (certified curves only)",
                other,
            ))
        }
    };
    if generic && method != Method::Fmt21Numerical {
        return Err(Error::param(
            "accountant",
            "'fmt21-numerical' for a generic randomizer (the others hold only for k-ary randomized response)",
            choice,
        ));
    }
    let t = Instant::now();
    let res = match method {
        Method::Fmt21Numerical => shuffled_with(&Fmt21Numerical, a, &r, n, total),
        Method::ClonesKrr => shuffled_with(&StrongerClones, a, &r, n, total),
        _ => shuffled_with(&GrrExact, a, &r, n, total),
    }?;
    let seconds = t.elapsed().as_secs_f64();
    if res.0 == f64::INFINITY {
        return Err(no_eps(
            0.0,
            res.2,
            total,
            "each round's curve beyond its eps at delta 1e-30",
            "",
        ));
    }
    Ok(ComposeReport::from(ShuffledComposition {
        epsilon: res.0,
        delta: total,
        count: a.rounds,
        kov: res.3,
        step: res.1,
        seconds,
        eps0,
        n: n.get(),
        randomizer: r,
        accountant: method,
    }))
}

/// (PLD eps, step, PLD mass at infinity, KOV of the best split (eps, eps1, delta1)).
type CurveComposition = (f64, f64, f64, Option<(f64, f64, f64)>);

fn shuffled_with<A>(
    acct: &A,
    a: &ComposeArgs,
    r: &LocalRandomizer,
    n: NumUsers,
    total: f64,
) -> Result<CurveComposition>
where
    A: CurveAccountant,
    A::Curve: Sync,
{
    let k = a.rounds;
    let name = acct.curve_method().name();
    let curve = acct
        .curve(r, n)
        .map_err(|e| Error::NoGuarantee(format!("accountant {name} gives no curve here: {e}")))?;
    if let Some(step) = a.step {
        let top = curve.epsilon(1e-30).max(1e-12);
        if top / step > MAX_CURVE_STEPS {
            return Err(Error::param(
                "step",
                format!(
                    ">= {} here (the curve spans [0, {}], its eps at delta 1e-30, and is sampled at most {MAX_CURVE_STEPS} times)",
                    up(top / MAX_CURVE_STEPS),
                    up(top)
                ),
                echo(step),
            ));
        }
    }
    let one = Pld::shuffled(acct, r, n, a.step).map_err(composition_error)?;
    let step = one.h;
    let pld = one.compose(k).map_err(composition_error)?;
    let kov = best_kov_split(&curve, k, total, || {});
    Ok((pld.epsilon(total), step, pld.inf_mass, kov))
}
