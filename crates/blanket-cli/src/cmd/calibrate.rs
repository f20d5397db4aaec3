//! `blanket calibrate`: parameters for a target (eps, delta) and n.

use super::common::TargetArgs;
use crate::accountant::{resolve, AccountantChoice};
use crate::output::{down, echo, kv_table, num, print_json, up};
use anyhow::Result;
use blanket::accounting::best::CERTIFIED;
use blanket::accounting::{Method, ShuffleAccountant};
use blanket::calibrate::Target;
use blanket::params::{DomainSize, Precision};
use blanket::protocol::vector_sum::{paper_gamma_raw, paper_mse_bound};
use blanket::protocol::{DomainConvention, Histogram, ScalarSum, ScalarSumShape, VectorSum};
use clap::{Args, Subcommand};
use serde::Serialize;

/// The protocols that can be calibrated.
#[derive(Subcommand)]
pub enum CalibrateCommand {
    /// Histogram over m categories (privacy-blanket GRR).
    Histogram(HistogramArgs),
    /// Sum of reals in [0, 1] (randomized rounding to k levels + GRR over k + 1 values).
    ScalarSum(ScalarSumArgs),
    /// Sum of vectors in [0, 1]^d (t sampled coordinates per user, each rounded to k levels
    /// and randomized by GRR over k + 1 values; Scott et al. 2021).
    VectorSum(VectorSumArgs),
    /// DP sum of reals in [0, 1] over split-and-mix (IKOS): m additive shares per client mod q,
    /// exact distributed discrete Laplace noise; no gamma (eps fixes the noise, sigma fixes
    /// delta = (1 + e^eps) 2^-sigma).
    IkosSum(super::ikos::CalibrateIkosArgs),
    /// Histogram over split-and-mix (IKOS): one DP sum instance per category, eps/2 each
    /// (a client changes two counts); d m shares per client.
    IkosHistogram(super::ikos_vector::CalibrateIkosHistogramArgs),
    /// Sum of vectors in [0, 1]^d over split-and-mix (IKOS): one DP sum instance per
    /// coordinate, eps/d each; d m shares per client.
    IkosVector(super::ikos_vector::CalibrateIkosVectorArgs),
}

/// Arguments of `calibrate histogram`.
#[derive(Args)]
pub struct HistogramArgs {
    /// Number of users (e.g. 1e6).
    #[arg(long, value_parser = crate::numeric::parse_users, allow_hyphen_values = true)]
    pub n: f64,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Number of categories m (2 to 2^26).
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub domain: u64,
    /// Which bound certifies the guarantee.
    #[arg(long, value_enum, default_value_t)]
    pub accountant: AccountantChoice,
    /// Also calibrate under every certified method and list gamma and predicted error of each.
    #[arg(long)]
    pub compare: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `calibrate scalar-sum`.
#[derive(Args)]
pub struct ScalarSumArgs {
    /// Number of users (e.g. 1e6).
    #[arg(long, value_parser = crate::numeric::parse_users, allow_hyphen_values = true)]
    pub n: f64,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Fixed precision k (default: the k minimizing the predicted worst-case MSE).
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub k: Option<u64>,
    /// Calibrate with the paper's domain size m = k instead of the true k + 1 message
    /// values. For reproducing the papers only: the guarantee is then not certified.
    #[arg(long)]
    pub paper_domain: bool,
    /// Which bound certifies the guarantee.
    #[arg(long, value_enum, default_value_t)]
    pub accountant: AccountantChoice,
    /// Also calibrate under every certified method and list gamma and predicted error of each.
    #[arg(long)]
    pub compare: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `calibrate vector-sum`.
#[derive(Args)]
pub struct VectorSumArgs {
    /// Number of users (e.g. 50000).
    #[arg(long, value_parser = crate::numeric::parse_users, allow_hyphen_values = true)]
    pub n: f64,
    /// Dimension d of the vectors.
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub d: u64,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Fixed precision k (default: the k minimizing the predicted error).
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub k: Option<u64>,
    /// Fixed number t of coordinates each user reports (default: the t minimizing the
    /// predicted error).
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub t: Option<u64>,
    /// Calibrate with the paper's domain size k per coordinate instead of the true k + 1
    /// values. For reproducing the paper only: the guarantee is then not certified.
    #[arg(long)]
    pub paper_domain: bool,
    /// Which bound certifies the guarantee.
    #[arg(long, value_enum, default_value_t)]
    pub accountant: AccountantChoice,
    /// Also calibrate under every certified method and list gamma and predicted error of each.
    #[arg(long)]
    pub compare: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// What `calibrate` prints (JSON keys are a contract).
#[derive(Serialize)]
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
#[derive(Serialize, Clone)]
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

impl MethodFigures {
    /// Calibrates with `method` through `calibrate_with`.
    pub fn of(
        method: Method,
        calibrate_with: &dyn Fn(&dyn ShuffleAccountant) -> Result<CalibrationReport>,
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
                error: Some(format!("{e:#}")),
                seconds,
            },
        }
    }

    fn row(&self) -> Vec<String> {
        let opt = |x: Option<f64>| x.map_or("-".to_string(), num);
        let int = |x: Option<u32>| x.map_or("-".to_string(), |v| v.to_string());
        vec![
            self.method.to_string(),
            self.gamma.map_or("-".to_string(), up),
            int(self.k),
            int(self.t),
            opt(self.predicted_mse),
            self.error.clone().unwrap_or_default(),
        ]
    }
}

/// Adds the paper's closed-form figures (unless it is the method used) and, with `all`, every
/// certified method's, to `report`.
fn add_comparisons(
    report: &mut CalibrationReport,
    all: bool,
    calibrate_with: &dyn Fn(&dyn ShuffleAccountant) -> Result<CalibrationReport>,
) {
    if report.method != Method::BlanketClosed.name() {
        report.paper = Some(MethodFigures::of(Method::BlanketClosed, calibrate_with));
    }
    if all {
        report.alternatives = CERTIFIED
            .iter()
            .map(|&m| MethodFigures::of(m, calibrate_with))
            .collect();
    }
}

impl CalibrationReport {
    /// Key/value rows for the human table.
    pub fn rows(&self) -> Vec<(&'static str, String)> {
        let mut rows = vec![
            ("protocol", self.protocol.to_string()),
            ("n", self.n.to_string()),
            (
                "target (eps, delta)",
                format!("({}, {})", echo(self.eps), echo(self.delta)),
            ),
            ("gamma", up(self.gamma)),
        ];
        if self.eps0_user == self.eps0 {
            rows.push(("eps0 (local)", down(self.eps0)));
        } else {
            rows.push(("eps0 per message", down(self.eps0)));
            rows.push(("eps0 per user (local DP)", down(self.eps0_user)));
        }
        if let Some(d) = self.d {
            rows.push(("d", d.to_string()));
        }
        if let Some(t) = self.t {
            rows.push(("t (coordinates per user)", t.to_string()));
        }
        if let Some(k) = self.k {
            rows.push(("k", k.to_string()));
        }
        if let Some(g) = self.paper_gamma {
            rows.push((
                "gamma of the paper's formula",
                if g < 1.0 {
                    up(g)
                } else {
                    format!(
                        "no gamma < 1 (the formula gives {}, not a probability)",
                        up(g)
                    )
                },
            ));
        }
        rows.push(("message values", self.message_values.to_string()));
        rows.push(("accounted domain m", self.accounted_domain.to_string()));
        rows.push(("predicted MSE", num(self.predicted_mse)));
        if let Some(b) = self.paper_bound_mse {
            rows.push(("paper bound on MSE", num(b)));
        }
        rows.push(("method", self.method.clone()));
        if let Some(p) = &self.paper {
            rows.push((
                "paper's closed form would need",
                match (p.gamma, p.predicted_mse) {
                    (Some(g), Some(e)) => format!("gamma {}, predicted MSE {}", up(g), num(e)),
                    _ => "no gamma < 1 (not feasible)".to_string(),
                },
            ));
        }
        rows.push((
            "certified (eps, delta)",
            match self.certified_epsilon {
                Some(e) => format!("({}, {})", up(e), up(self.certified_delta)),
                None => "NOT CERTIFIED".to_string(),
            },
        ));
        rows
    }

    /// Whether the target guarantee is certified for the randomizer users run.
    pub fn certified(&self) -> bool {
        self.certified_epsilon.is_some_and(|e| e <= self.eps)
    }

    /// Prints as JSON or as a table with notes; a guarantee that is not certified (the
    /// paper's domain convention) sets exit code 3.
    pub fn print(&self, json: bool) -> Result<()> {
        if !self.certified() {
            crate::exit::mark_uncertified();
        }
        if json {
            return print_json(self);
        }
        println!("{}", kv_table("Calibration", &self.rows()));
        println!("predicted MSE: {}", self.predicted_mse_meaning);
        if !self.alternatives.is_empty() {
            let rows: Vec<Vec<String>> = self.alternatives.iter().map(MethodFigures::row).collect();
            println!(
                "{}",
                crate::output::table(
                    &["method", "gamma", "k", "t", "predicted MSE", "error"],
                    &rows
                )
            );
        }
        for n in &self.notes {
            println!("note: {n}");
        }
        Ok(())
    }
}

/// Calibrates the histogram protocol.
pub fn histogram(
    m: DomainSize,
    target: &Target,
    acct: &dyn ShuffleAccountant,
) -> Result<(Histogram, CalibrationReport)> {
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

/// Calibrates the scalar-sum protocol.
pub fn scalar_sum(
    k: Option<u64>,
    paper_domain: bool,
    target: &Target,
    acct: &dyn ShuffleAccountant,
) -> Result<(ScalarSum, CalibrationReport)> {
    let shape = ScalarSumShape {
        k: k.map(Precision::new).transpose()?,
        convention: if paper_domain {
            DomainConvention::Paper
        } else {
            DomainConvention::TrueDomain
        },
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

/// Calibrates the vector-sum protocol (k and t minimizing the predicted error unless fixed).
pub fn vector_sum(
    d: u64,
    t: Option<u64>,
    k: Option<u64>,
    paper_domain: bool,
    target: &Target,
    acct: &dyn ShuffleAccountant,
) -> Result<(VectorSum, CalibrationReport)> {
    let convention = if paper_domain {
        DomainConvention::Paper
    } else {
        DomainConvention::TrueDomain
    };
    let k = k.map(Precision::new).transpose()?;
    let (p, cal) = VectorSum::calibrate(d, t, k, convention, target, acct)?;
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

/// Runs `blanket calibrate`.
pub fn run(cmd: &CalibrateCommand) -> Result<()> {
    match cmd {
        CalibrateCommand::IkosSum(a) => super::ikos::calibrate(a),
        CalibrateCommand::IkosHistogram(a) => super::ikos_vector::calibrate_histogram(a),
        CalibrateCommand::IkosVector(a) => super::ikos_vector::calibrate_vector(a),
        CalibrateCommand::Histogram(a) => {
            let target = a.target.target(a.n)?;
            let m = DomainSize::new(a.domain)?;
            let with = |acct: &dyn ShuffleAccountant| Ok(histogram(m, &target, acct)?.1);
            let pb = super::common::spinner("calibrating", a.json);
            let mut report = with(resolve(a.accountant).as_ref())?;
            add_comparisons(&mut report, a.compare, &with);
            pb.finish_and_clear();
            report.print(a.json)
        }
        CalibrateCommand::ScalarSum(a) => {
            let target = a.target.target(a.n)?;
            let with = |acct: &dyn ShuffleAccountant| {
                Ok(scalar_sum(a.k, a.paper_domain, &target, acct)?.1)
            };
            let pb = super::common::spinner("calibrating", a.json);
            let mut report = with(resolve(a.accountant).as_ref())?;
            add_comparisons(&mut report, a.compare, &with);
            pb.finish_and_clear();
            report.print(a.json)
        }
        CalibrateCommand::VectorSum(a) => {
            let target = a.target.target(a.n)?;
            let with = |acct: &dyn ShuffleAccountant| {
                Ok(vector_sum(a.d, a.t, a.k, a.paper_domain, &target, acct)?.1)
            };
            let pb = super::common::spinner("calibrating", a.json);
            let mut report = with(resolve(a.accountant).as_ref())?;
            add_comparisons(&mut report, a.compare, &with);
            pb.finish_and_clear();
            report.print(a.json)
        }
    }
}
