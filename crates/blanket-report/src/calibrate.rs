//! `calibrate histogram|scalar-sum|vector-sum`: the [`CalibrationReport`] of a calibration
//! (gamma, and k and t, for a target (eps, delta) and n) under one accountant, with the
//! paper's closed form's and, on request, every certified method's figures beside it.

use blanket::accounting::best::CERTIFIED;
use blanket::accounting::{Method, ShuffleAccountant};
use blanket::calibrate::{CalibrationError, Target};
use blanket::display::up;
use blanket::params::{DomainSize, Precision};
use blanket::protocol::vector_sum::{paper_gamma_raw, paper_mse_bound, VectorCalibrationError};
use blanket::protocol::{DomainConvention, Histogram, ScalarSum, ScalarSumShape, VectorSum};
use serde::Serialize;

/// What `calibrate` prints (JSON keys are a contract).
#[derive(Serialize, Debug, Clone)]
pub struct CalibrationReport {
    /// Protocol name.
    pub protocol: &'static str,
    /// Users.
    pub n: u64,
    /// Target epsilon.
    pub eps: f64,
    /// Target delta.
    pub delta: f64,
    /// Blanket probability.
    pub gamma: f64,
    /// Local privacy of one message of the randomizer users run.
    pub eps0: f64,
    /// Local privacy of everything one user sends (t messages for vector sum): the user-level
    /// local DP guarantee.
    pub eps0_user: f64,
    /// Precision (scalar sum).
    pub k: Option<u32>,
    /// Message values of the randomizer users run.
    pub message_values: u32,
    /// Domain size the accountant was told.
    pub accounted_domain: u32,
    /// Whether the paper's m = k convention was used.
    pub paper_domain: bool,
    /// Predicted worst-case mean squared error.
    pub predicted_mse: f64,
    /// What `predicted_mse` measures.
    pub predicted_mse_meaning: &'static str,
    /// The paper's bound on the same quantity, where there is one.
    pub paper_bound_mse: Option<f64>,
    /// The method that certified the guarantee.
    pub method: String,
    /// Citation of the method.
    pub citation: &'static str,
    /// Certified epsilon of the randomizer users really run (null if not certifiable).
    pub certified_epsilon: Option<f64>,
    /// Delta at which `certified_epsilon` holds.
    pub certified_delta: f64,
    /// Notes for the reader (safety caveats).
    pub notes: Vec<String>,
    /// Dimension (vector sum).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub d: Option<u32>,
    /// Coordinates reported per user (vector sum).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t: Option<u32>,
    /// The gamma of the paper's closed form at the same parameters (vector sum: Theorem 4.1
    /// and Section 4.5 of Scott et al. 2021), for comparison; not what certifies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paper_gamma: Option<f64>,
    /// The same calibration under the paper's closed form (Balle et al. 2019, Theorem 3.1):
    /// what the paper would have required. Absent when that is the method used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paper: Option<MethodFigures>,
    /// With `--compare`: the calibration under every certified method.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<MethodFigures>,
}

/// One method's calibration of the same protocol and target, for comparison.
#[derive(Serialize, Debug, Clone)]
pub struct MethodFigures {
    /// The method.
    pub method: &'static str,
    /// Its smallest certified gamma (null if it certifies none).
    pub gamma: Option<f64>,
    /// The precision it leads to.
    pub k: Option<u32>,
    /// The coordinates per user it leads to (vector sum).
    pub t: Option<u32>,
    /// The predicted error at its parameters.
    pub predicted_mse: Option<f64>,
    /// Why it certifies nothing, if so.
    pub error: Option<String>,
    /// Compute time in seconds.
    pub seconds: f64,
}

/// A calibration of one protocol and target under a given accountant, failing with the
/// caller's error type `E`.
pub type Calibrator<'a, E> = dyn Fn(&dyn ShuffleAccountant) -> Result<CalibrationReport, E> + 'a;

impl MethodFigures {
    /// Calibrates with `method` through `calibrate_with`; a failure is recorded as
    /// `describe(error)`.
    pub fn of<E>(
        method: Method,
        calibrate_with: &Calibrator<'_, E>,
        describe: &dyn Fn(&E) -> String,
    ) -> Self {
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
                error: Some(describe(&e)),
                seconds,
            },
        }
    }
}

/// Adds the paper's closed-form figures (unless it is the method used) and, with `all`, every
/// certified method's, to `report`; a method's failure is recorded as `describe(error)`.
pub fn add_comparisons<E>(
    report: &mut CalibrationReport,
    all: bool,
    calibrate_with: &Calibrator<'_, E>,
    describe: &dyn Fn(&E) -> String,
) {
    if report.method != Method::BlanketClosed.name() {
        report.paper = Some(MethodFigures::of(
            Method::BlanketClosed,
            calibrate_with,
            describe,
        ));
    }
    if all {
        report.alternatives = CERTIFIED
            .iter()
            .map(|&m| MethodFigures::of(m, calibrate_with, describe))
            .collect();
    }
}

impl CalibrationReport {
    /// Whether the target guarantee is certified for the randomizer users run.
    pub fn certified(&self) -> bool {
        self.certified_epsilon.is_some_and(|e| e <= self.eps)
    }
}

/// The domain convention of `--paper-domain` (`paper_domain=` in Python).
pub fn convention(paper_domain: bool) -> DomainConvention {
    if paper_domain {
        DomainConvention::Paper
    } else {
        DomainConvention::TrueDomain
    }
}

/// The note that Theorem 3.1 of Balle et al. 2019 certifies a target eps > 1 at eps <= 1.
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

/// The `--paper-domain` note: the guarantee is not certified for the k + 1 values messages
/// take (`what` says what gamma was calibrated for).
fn paper_domain_note(
    what: &str,
    k: u32,
    certified: Option<blanket::accounting::Guarantee>,
) -> String {
    format!(
        "--paper-domain: gamma was calibrated for {what} as in the paper, but the messages take k + 1 = {} values; the target guarantee is NOT certified for them{}",
        k + 1,
        match certified {
            Some(g) => format!(" (the certified epsilon is {})", up(g.epsilon)),
            None => " (the accountant certifies no epsilon for them)".to_string(),
        }
    )
}

/// Calibrates the histogram protocol over `m` categories.
pub fn histogram(
    m: DomainSize,
    target: &Target,
    acct: &dyn ShuffleAccountant,
) -> Result<(Histogram, CalibrationReport), CalibrationError> {
    let (h, cal) = Histogram::calibrate(m, target, acct)?;
    let report = CalibrationReport {
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
    };
    Ok((h, report))
}

/// Calibrates the scalar-sum protocol (k minimizing the predicted error unless fixed).
pub fn scalar_sum(
    k: Option<Precision>,
    paper_domain: bool,
    target: &Target,
    acct: &dyn ShuffleAccountant,
) -> Result<(ScalarSum, CalibrationReport), CalibrationError> {
    let shape = ScalarSumShape {
        k,
        convention: convention(paper_domain),
    };
    let (p, cal) = ScalarSum::calibrate(shape, target, acct)?;
    let k = p.k().get();
    let mut notes = eps_note(target, cal.guarantee.method);
    if paper_domain {
        notes.push(paper_domain_note(
            &format!("m = k = {k} values"),
            k,
            cal.certified,
        ));
    }
    let report = CalibrationReport {
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
    };
    Ok((p, report))
}

/// Calibrates the vector-sum protocol over `d` coordinates (k and t minimizing the predicted
/// error unless fixed).
pub fn vector_sum(
    d: u64,
    t: Option<u64>,
    k: Option<Precision>,
    paper_domain: bool,
    target: &Target,
    acct: &dyn ShuffleAccountant,
) -> Result<(VectorSum, CalibrationReport), VectorCalibrationError> {
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
        notes.push(paper_domain_note(
            &format!("k = {kk} values per coordinate"),
            kk,
            cal.certified,
        ));
    }
    let levels = if paper_domain { kk } else { kk + 1 };
    let report = CalibrationReport {
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
        paper_bound_mse: (eps < 6.0)
            .then(|| paper_mse_bound(n, dd, tt, eps, delta, cal.gamma.get())),
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
    };
    Ok((p, report))
}
