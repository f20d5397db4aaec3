//! `blanket.calibrate`: gamma (and k, t) for a target, by the same core calibrators as
//! `blanket calibrate histogram|scalar-sum|vector-sum`, reported with the same JSON keys.

use crate::errors::{Error, Result};
use crate::json;
use blanket::accounting::best::CERTIFIED;
use blanket::accounting::{Best, BlanketTheorem31, Method, ShuffleAccountant};
use blanket::calibrate::Target;
use blanket::display::up;
use blanket::params::{Delta, DomainSize, Epsilon, NumUsers, Precision};
use blanket::protocol::vector_sum::{paper_gamma_raw, paper_mse_bound};
use blanket::protocol::{DomainConvention, Histogram, ScalarSum, ScalarSumShape, VectorSum};
use pyo3::prelude::*;
use serde::Serialize;

/// What `blanket calibrate ... --json` prints (the same keys, the same values).
#[derive(Serialize)]
pub struct CalibrationReport {
    protocol: &'static str,
    n: u64,
    eps: f64,
    delta: f64,
    gamma: f64,
    eps0: f64,
    eps0_user: f64,
    k: Option<u32>,
    message_values: u32,
    accounted_domain: u32,
    paper_domain: bool,
    predicted_mse: f64,
    predicted_mse_meaning: &'static str,
    paper_bound_mse: Option<f64>,
    method: String,
    citation: &'static str,
    certified_epsilon: Option<f64>,
    certified_delta: f64,
    notes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    d: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    t: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    paper_gamma: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    paper: Option<MethodFigures>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    alternatives: Vec<MethodFigures>,
}

/// One method's calibration of the same protocol and target.
#[derive(Serialize, Clone)]
pub struct MethodFigures {
    method: &'static str,
    gamma: Option<f64>,
    k: Option<u32>,
    t: Option<u32>,
    predicted_mse: Option<f64>,
    error: Option<String>,
    seconds: f64,
}

type Calibrator<'a> = dyn Fn(&dyn ShuffleAccountant) -> Result<CalibrationReport> + Sync + 'a;

impl MethodFigures {
    fn of(method: Method, calibrate_with: &Calibrator) -> Self {
        let start = std::time::Instant::now();
        let result = calibrate_with(method.accountant().as_ref());
        let seconds = start.elapsed().as_secs_f64();
        match result {
            Ok(r) => Self {
                method: method.name(),
                gamma: Some(r.gamma),
                k: r.k,
                t: r.t,
                predicted_mse: Some(r.predicted_mse),
                error: None,
                seconds,
            },
            Err(e) => Self {
                method: method.name(),
                gamma: None,
                k: None,
                t: None,
                predicted_mse: None,
                error: Some(e.message()),
                seconds,
            },
        }
    }
}

/// The calibration under `accountant` ("best" or "paper"), plus the paper's closed form's
/// figures and, with `compare`, every certified method's.
fn run(accountant: &str, compare: bool, with: &Calibrator) -> Result<CalibrationReport> {
    let acct: Box<dyn ShuffleAccountant> = match accountant {
        "best" => Box::new(Best::default()),
        "paper" => Box::new(BlanketTheorem31),
        other => return Err(Error::param("accountant", "'best' or 'paper'", other)),
    };
    let mut report = with(acct.as_ref())?;
    if report.method != Method::BlanketClosed.name() {
        report.paper = Some(MethodFigures::of(Method::BlanketClosed, with));
    }
    if compare {
        report.alternatives = CERTIFIED
            .iter()
            .map(|&m| MethodFigures::of(m, with))
            .collect();
    }
    Ok(report)
}

fn target(n: f64, eps: f64, delta: f64) -> Result<Target> {
    Ok(Target {
        eps: Epsilon::new(eps)?,
        delta: Delta::new(delta)?,
        n: NumUsers::from_f64(n)?,
    })
}

fn eps_note(target: &Target, method: Method) -> Vec<String> {
    if target.eps.get() > 1.0 && method == Method::BlanketClosed {
        vec![
            "Theorem 3.1 holds for eps <= 1: a target eps > 1 is certified at eps <= 1 (stronger)"
                .into(),
        ]
    } else {
        vec![]
    }
}

fn convention(paper_domain: bool) -> DomainConvention {
    if paper_domain {
        DomainConvention::Paper
    } else {
        DomainConvention::TrueDomain
    }
}

/// Calibrates the histogram protocol; the report of `blanket calibrate histogram --json`
/// as a JSON string.
#[pyfunction]
#[pyo3(signature = (n, eps, delta, domain, accountant, compare))]
pub fn calibrate_histogram(
    py: Python<'_>,
    n: f64,
    eps: f64,
    delta: f64,
    domain: u64,
    accountant: &str,
    compare: bool,
) -> PyResult<String> {
    let target = target(n, eps, delta)?;
    let m = DomainSize::new(domain).map_err(Error::from)?;
    let with = |acct: &dyn ShuffleAccountant| histogram(m, &target, acct);
    let report = py.allow_threads(|| run(accountant, compare, &with))?;
    Ok(json(&report)?)
}

fn histogram(
    m: DomainSize,
    target: &Target,
    acct: &dyn ShuffleAccountant,
) -> Result<CalibrationReport> {
    let (_, cal) = Histogram::calibrate(m, target, acct)?;
    Ok(CalibrationReport {
        protocol: "histogram",
        n: target.n.get(),
        eps: target.eps.get(),
        delta: target.delta.get(),
        gamma: cal.gamma.get(),
        eps0: cal.eps0,
        eps0_user: cal.eps0_user,
        k: None,
        message_values: m.get(),
        accounted_domain: m.get(),
        paper_domain: false,
        predicted_mse: cal.predicted_mse,
        predicted_mse_meaning: "mean over the m categories of the variance of the estimated count (exact for any data of n users)",
        paper_bound_mse: None,
        method: cal.guarantee.method.name().to_string(),
        citation: cal.guarantee.method.citation(),
        certified_epsilon: cal.certified.map(|g| g.epsilon),
        certified_delta: cal.guarantee.delta,
        notes: eps_note(target, cal.guarantee.method),
        d: None,
        t: None,
        paper_gamma: None,
        paper: None,
        alternatives: Vec::new(),
    })
}

/// Calibrates the scalar-sum protocol; the report of `blanket calibrate scalar-sum --json`
/// as a JSON string.
#[pyfunction]
#[pyo3(signature = (n, eps, delta, k, paper_domain, accountant, compare))]
#[allow(clippy::too_many_arguments)]
pub fn calibrate_scalar_sum(
    py: Python<'_>,
    n: f64,
    eps: f64,
    delta: f64,
    k: Option<u64>,
    paper_domain: bool,
    accountant: &str,
    compare: bool,
) -> PyResult<String> {
    let target = target(n, eps, delta)?;
    let k = k.map(Precision::new).transpose().map_err(Error::from)?;
    let with = |acct: &dyn ShuffleAccountant| scalar_sum(k, paper_domain, &target, acct);
    let report = py.allow_threads(|| run(accountant, compare, &with))?;
    Ok(json(&report)?)
}

fn scalar_sum(
    k: Option<Precision>,
    paper_domain: bool,
    target: &Target,
    acct: &dyn ShuffleAccountant,
) -> Result<CalibrationReport> {
    let shape = ScalarSumShape {
        k,
        convention: convention(paper_domain),
    };
    let (p, cal) = ScalarSum::calibrate(shape, target, acct)?;
    let k = p.k().get();
    let mut notes = eps_note(target, cal.guarantee.method);
    if paper_domain {
        notes.push(format!(
            "--paper-domain: gamma was calibrated for m = k = {k} values as in the paper, but the \
             messages take k + 1 = {} values; the target guarantee is NOT certified for them{}",
            k + 1,
            match cal.certified {
                Some(g) => format!(" (the certified epsilon is {})", up(g.epsilon)),
                None => " (the accountant certifies no epsilon for them)".to_string(),
            }
        ));
    }
    Ok(CalibrationReport {
        protocol: "scalar-sum",
        n: target.n.get(),
        eps: target.eps.get(),
        delta: target.delta.get(),
        gamma: cal.gamma.get(),
        eps0: cal.eps0,
        eps0_user: cal.eps0_user,
        k: Some(k),
        message_values: k + 1,
        accounted_domain: if paper_domain { k } else { k + 1 },
        paper_domain,
        predicted_mse: cal.predicted_mse,
        predicted_mse_meaning: "worst case over data of n users of the expected squared error of the estimated sum (exact)",
        paper_bound_mse: Some(p.paper_sum_mse_bound(
            target.n.get(),
            target.eps.get(),
            target.delta.get(),
        )),
        method: cal.guarantee.method.name().to_string(),
        citation: cal.guarantee.method.citation(),
        certified_epsilon: cal.certified.map(|g| g.epsilon),
        certified_delta: cal.guarantee.delta,
        notes,
        d: None,
        t: None,
        paper_gamma: None,
        paper: None,
        alternatives: Vec::new(),
    })
}

/// Calibrates the vector-sum protocol; the report of `blanket calibrate vector-sum --json`
/// as a JSON string.
#[pyfunction]
#[pyo3(signature = (n, d, eps, delta, k, t, paper_domain, accountant, compare))]
#[allow(clippy::too_many_arguments)]
pub fn calibrate_vector_sum(
    py: Python<'_>,
    n: f64,
    d: u64,
    eps: f64,
    delta: f64,
    k: Option<u64>,
    t: Option<u64>,
    paper_domain: bool,
    accountant: &str,
    compare: bool,
) -> PyResult<String> {
    let target = target(n, eps, delta)?;
    let k = k.map(Precision::new).transpose().map_err(Error::from)?;
    let with = |acct: &dyn ShuffleAccountant| vector_sum(d, t, k, paper_domain, &target, acct);
    let report = py.allow_threads(|| run(accountant, compare, &with))?;
    Ok(json(&report)?)
}

fn vector_sum(
    d: u64,
    t: Option<u64>,
    k: Option<Precision>,
    paper_domain: bool,
    target: &Target,
    acct: &dyn ShuffleAccountant,
) -> Result<CalibrationReport> {
    let (p, cal) = VectorSum::calibrate(d, t, k, convention(paper_domain), target, acct)?;
    let (kk, tt, dd) = (p.k().get(), p.t(), p.d());
    let (n, eps, delta) = (target.n.get(), target.eps.get(), target.delta.get());
    let mut notes = eps_note(target, cal.instance.guarantee.method);
    notes.push(if tt == 1 {
        format!(
            "t = 1: the protocol is certified as shuffled GRR over d * (k + 1) = {} (coordinate, value) pairs with n users (exact reduction, docs/vector-sum.md)",
            u64::from(dd) * (u64::from(kk) + 1)
        )
    } else {
        format!(
            "t = {tt}: certified per coordinate (GRR over k + 1 values, at least {} users per coordinate except with probability delta/4) and composed over the t coordinates (docs/vector-sum.md)",
            cal.requirement.n
        )
    });
    if paper_domain {
        notes.push(format!(
            "--paper-domain: gamma was calibrated for k = {kk} values per coordinate as in the paper, but the messages take k + 1 = {} values; the target guarantee is NOT certified for them{}",
            kk + 1,
            match cal.certified {
                Some(g) => format!(" (the certified epsilon is {})", up(g.epsilon)),
                None => " (the accountant certifies no epsilon for them)".to_string(),
            }
        ));
    }
    let levels = if paper_domain { kk } else { kk + 1 };
    Ok(CalibrationReport {
        protocol: "vector-sum",
        n,
        eps,
        delta,
        gamma: cal.gamma.get(),
        eps0: cal.eps0,
        eps0_user: cal.eps0_user,
        k: Some(kk),
        message_values: kk + 1,
        accounted_domain: cal.requirement.m.get(),
        paper_domain,
        predicted_mse: cal.predicted_mse,
        predicted_mse_meaning: "worst case over data of n users of the expected squared error of the estimated mean vector, summed over the d coordinates, on the [0, 1] scale",
        paper_bound_mse: (eps < 6.0).then(|| paper_mse_bound(n, dd, tt, eps, delta, cal.gamma.get())),
        method: cal.instance.guarantee.method.name().to_string(),
        citation: cal.instance.guarantee.method.citation(),
        certified_epsilon: cal.certified.map(|g| g.epsilon),
        certified_delta: delta,
        notes,
        d: Some(dd),
        t: Some(tt),
        paper_gamma: paper_gamma_raw(n, dd, levels, tt, eps, delta).ok(),
        paper: None,
        alternatives: Vec::new(),
    })
}
