//! `blanket calibrate`: parameters for a target (eps, delta) and n.

use super::common::TargetArgs;
use crate::accountant::{resolve, AccountantChoice};
use crate::output::{echo, kv_table, num, print_json, up};
use anyhow::Result;
use blanket::accounting::ShuffleAccountant;
use blanket::calibrate::Target;
use blanket::params::{DomainSize, Precision};
use blanket::protocol::{Histogram, ScalarSum, VectorSum};
use blanket_report::calibrate as shared;
pub use blanket_report::calibrate::{CalibrationReport, MethodFigures};
use clap::{Args, Subcommand};

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

/// How the CLI shows a [`CalibrationReport`]: a key/value table, the comparison table and
/// notes, or JSON.
pub trait ShowCalibration {
    /// Key/value rows for the human table.
    fn rows(&self) -> Vec<(&'static str, String)>;
    /// Prints as JSON or as a table with notes; a guarantee that is not certified (the
    /// paper's domain convention) sets exit code 3.
    fn print(&self, json: bool) -> Result<()>;
}

/// One row of the `--compare` table.
fn figures_row(f: &MethodFigures) -> Vec<String> {
    let opt = |x: Option<f64>| x.map_or("-".to_string(), num);
    let int = |x: Option<u32>| x.map_or("-".to_string(), |v| v.to_string());
    vec![
        f.method.to_string(),
        f.gamma.map_or("-".to_string(), up),
        int(f.k),
        int(f.t),
        opt(f.predicted_mse),
        f.error.clone().unwrap_or_default(),
    ]
}

impl ShowCalibration for CalibrationReport {
    fn rows(&self) -> Vec<(&'static str, String)> {
        let mut rows = vec![
            ("protocol", self.protocol.to_string()),
            ("n", self.n.to_string()),
            (
                "target (eps, delta)",
                format!("({}, {})", echo(self.eps), echo(self.delta)),
            ),
            ("gamma", up(self.gamma)),
        ];
        // eps0 here is the local-DP guarantee each user gets at the calibrated gamma: a
        // guarantee, rounded up (a setting, such as `account eps0`'s largest eps0, rounds down).
        if self.eps0_user == self.eps0 {
            rows.push(("eps0 (local DP guarantee)", up(self.eps0)));
        } else {
            rows.push(("eps0 per message (local DP)", up(self.eps0)));
            rows.push(("eps0 per user (local DP guarantee)", up(self.eps0_user)));
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

    fn print(&self, json: bool) -> Result<()> {
        if !self.certified() {
            crate::exit::mark_uncertified();
        }
        if json {
            return print_json(self);
        }
        crate::println_wrapped!("{}", kv_table("Calibration", &self.rows()));
        crate::println_wrapped!("predicted MSE: {}", self.predicted_mse_meaning);
        if !self.alternatives.is_empty() {
            let rows: Vec<Vec<String>> = self.alternatives.iter().map(figures_row).collect();
            crate::println_wrapped!(
                "{}",
                crate::output::table(
                    &["method", "gamma", "k", "t", "predicted MSE", "error"],
                    &rows
                )
            );
        }
        for n in &self.notes {
            crate::println_wrapped!("note: {n}");
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
    Ok(shared::histogram(m, target, acct)?)
}

/// Calibrates the scalar-sum protocol (`k`: `--k`, checked here).
pub fn scalar_sum(
    k: Option<u64>,
    paper_domain: bool,
    target: &Target,
    acct: &dyn ShuffleAccountant,
) -> Result<(ScalarSum, CalibrationReport)> {
    let k = k.map(Precision::new).transpose()?;
    Ok(shared::scalar_sum(k, paper_domain, target, acct)?)
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
    let k = k.map(Precision::new).transpose()?;
    Ok(shared::vector_sum(d, t, k, paper_domain, target, acct)?)
}

/// Adds the paper's closed-form figures and, with `all`, every certified method's (a
/// method's failure shown as its error chain).
fn add_comparisons(
    report: &mut CalibrationReport,
    all: bool,
    calibrate_with: &dyn Fn(&dyn ShuffleAccountant) -> Result<CalibrationReport>,
) {
    shared::add_comparisons(report, all, calibrate_with, &|e| format!("{e:#}"));
}

/// Calibrates under `accountant` through `with`, adds the comparisons and prints.
fn calibrate_and_print(
    accountant: AccountantChoice,
    compare: bool,
    json: bool,
    with: &dyn Fn(&dyn ShuffleAccountant) -> Result<CalibrationReport>,
) -> Result<()> {
    let pb = super::common::spinner("calibrating", json);
    let mut report = with(resolve(accountant).as_ref())?;
    add_comparisons(&mut report, compare, with);
    pb.finish_and_clear();
    report.print(json)
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
            calibrate_and_print(a.accountant, a.compare, a.json, &|acct| {
                Ok(histogram(m, &target, acct)?.1)
            })
        }
        CalibrateCommand::ScalarSum(a) => {
            let target = a.target.target(a.n)?;
            calibrate_and_print(a.accountant, a.compare, a.json, &|acct| {
                Ok(scalar_sum(a.k, a.paper_domain, &target, acct)?.1)
            })
        }
        CalibrateCommand::VectorSum(a) => {
            let target = a.target.target(a.n)?;
            calibrate_and_print(a.accountant, a.compare, a.json, &|acct| {
                Ok(vector_sum(a.d, a.t, a.k, a.paper_domain, &target, acct)?.1)
            })
        }
    }
}
