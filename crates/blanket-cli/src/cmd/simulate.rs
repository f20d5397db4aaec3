//! `blanket simulate`: run a protocol end to end on real or generated data, repeatedly, and
//! compare the observed error with the exact prediction.

use super::calibrate::{self, CalibrationReport};
use super::common::{mean_ci, progress, TargetArgs};
use crate::accountant::AccountantChoice;
use crate::data::{self, Provenance};
use crate::output::{kv_table, num, print_json, table};
use anyhow::Result;
use blanket::params::{DomainSize, NumUsers};
use blanket::protocol::{Histogram, ScalarSum};
use blanket::simulate::run_single_message;
use clap::{Args, Subcommand};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

/// The protocols that can be simulated.
#[derive(Subcommand)]
pub enum SimulateCommand {
    /// Histogram over m categories.
    Histogram(SimHistogramArgs),
    /// Sum of reals in [0, 1].
    ScalarSum(SimScalarSumArgs),
}

/// Options shared by every simulation.
#[derive(Args, Clone)]
pub struct RunArgs {
    /// Repetitions of the whole protocol on the same data.
    #[arg(long, default_value_t = 10)]
    pub reps: u32,
    /// Seed of the simulation (reproducible; real clients never use a seed).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Skip the shuffler (the analyzers are order-free, so estimates are identical; faster).
    #[arg(long)]
    pub no_shuffle: bool,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `simulate histogram`.
#[derive(Args)]
pub struct SimHistogramArgs {
    /// Number of users (default: the number of data rows).
    #[arg(long, allow_hyphen_values = true)]
    pub n: Option<f64>,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Number of categories m.
    #[arg(long, default_value_t = 32)]
    pub domain: u64,
    /// CSV file with one category in {0..m-1} per row (default: the embedded ECG signal,
    /// quantized into m bins).
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Which bound certifies the guarantee.
    #[arg(long, value_enum, default_value_t)]
    pub accountant: AccountantChoice,
    #[command(flatten)]
    pub run: RunArgs,
}

/// Arguments of `simulate scalar-sum`.
#[derive(Args)]
pub struct SimScalarSumArgs {
    /// Number of users (default: the number of data rows).
    #[arg(long, allow_hyphen_values = true)]
    pub n: Option<f64>,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Fixed precision k (default: calibrated).
    #[arg(long)]
    pub k: Option<u64>,
    /// Calibrate with the paper's m = k convention (reproduction only; not certified).
    #[arg(long)]
    pub paper_domain: bool,
    /// CSV file with one value in [0, 1] per row (default: the embedded ECG signal,
    /// normalized to [0, 1]).
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Which bound certifies the guarantee.
    #[arg(long, value_enum, default_value_t)]
    pub accountant: AccountantChoice,
    #[command(flatten)]
    pub run: RunArgs,
}

/// What `simulate` prints (JSON keys are a contract).
#[derive(Serialize)]
pub struct SimulationReport {
    /// Protocol name.
    pub protocol: &'static str,
    /// Users.
    pub n: u64,
    /// Blanket probability.
    pub gamma: f64,
    /// Repetitions.
    pub reps: u32,
    /// Seed.
    pub seed: u64,
    /// Observed mean squared error, averaged over repetitions.
    pub mse: f64,
    /// Half-width of the 95% confidence interval of `mse` over repetitions.
    pub mse_ci95: f64,
    /// Exact expected squared error for this data.
    pub predicted_mse: f64,
    /// Worst-case expected squared error over all data of n users.
    pub worst_case_mse: f64,
    /// What the errors measure.
    pub mse_meaning: &'static str,
    /// Observed over predicted.
    pub mse_ratio: f64,
    /// Wall-clock seconds of the simulation (all repetitions).
    pub seconds: f64,
    /// Whether the uniform shuffler ran.
    pub shuffled: bool,
    /// Where the data came from.
    pub data: Provenance,
    /// The calibration the simulation ran with.
    pub calibration: CalibrationReport,
    /// Protocol-specific estimates of the first repetition.
    pub first_repetition: serde_json::Value,
}

impl SimulationReport {
    fn print(&self, json: bool, detail: Option<String>) -> Result<()> {
        if json {
            return print_json(self);
        }
        self.calibration.print(false)?;
        println!();
        if let Some(d) = detail {
            println!("{d}");
        }
        let rows = vec![
            (
                "data",
                format!("{} ({})", self.data.source, self.data.selection),
            ),
            ("repetitions", format!("{} (seed {})", self.reps, self.seed)),
            (
                "observed MSE",
                format!("{} ± {}", num(self.mse), num(self.mse_ci95)),
            ),
            ("predicted MSE (exact, this data)", num(self.predicted_mse)),
            ("observed / predicted", format!("{:.3}", self.mse_ratio)),
            ("worst-case MSE (any data)", num(self.worst_case_mse)),
            ("seconds", format!("{:.3}", self.seconds)),
        ];
        println!("{}", kv_table("Simulation", &rows));
        println!("MSE: {}", self.mse_meaning);
        Ok(())
    }
}

/// Runs `blanket simulate`.
pub fn run(cmd: &SimulateCommand) -> Result<()> {
    match cmd {
        SimulateCommand::Histogram(a) => {
            let m = DomainSize::new(a.domain)?;
            let (users, prov) =
                data::categories(a.data.as_deref(), m.get(), users_arg(a.n)?, a.run.seed)?;
            let target = a.target.target(a.n.unwrap_or(users.len() as f64))?;
            let (h, cal) = calibrate::histogram(m, &target, a.accountant)?;
            let (report, detail) = simulate_histogram(&h, &users, cal, prov, &a.run)?;
            report.print(a.run.json, Some(detail))
        }
        SimulateCommand::ScalarSum(a) => {
            let (users, prov) = data::unit_values(a.data.as_deref(), users_arg(a.n)?, a.run.seed)?;
            let target = a.target.target(a.n.unwrap_or(users.len() as f64))?;
            let (p, cal) = calibrate::scalar_sum(a.k, a.paper_domain, &target, a.accountant)?;
            let (report, detail) = simulate_scalar_sum(&p, &users, cal, prov, &a.run)?;
            report.print(a.run.json, Some(detail))
        }
    }
}

/// Validates `--n` before any data is resized to it.
fn users_arg(n: Option<f64>) -> Result<Option<usize>> {
    n.map(|n| Ok(NumUsers::from_f64(n)?.get() as usize))
        .transpose()
}

/// Simulates the histogram protocol; returns the report and a human table of categories.
pub fn simulate_histogram(
    h: &Histogram,
    users: &[u32],
    calibration: CalibrationReport,
    data: Provenance,
    run: &RunArgs,
) -> Result<(SimulationReport, String)> {
    let m = h.randomizer().m().get() as usize;
    let mut truth = vec![0u64; m];
    for (i, &c) in users.iter().enumerate() {
        match truth.get_mut(c as usize) {
            Some(t) => *t += 1,
            None => anyhow::bail!(
                "user {i}: category must be an integer from 0 to {}, got {c}",
                m - 1
            ),
        }
    }
    let start = Instant::now();
    let pb = progress(u64::from(run.reps), "histogram", run.json);
    let mut mses = Vec::new();
    let mut first = None;
    for rep in 0..run.reps {
        let state = run_single_message(
            users.len(),
            run.seed,
            rep,
            !run.no_shuffle,
            // Every category was checked against m above, so the fallback never fires.
            |i, rng| h.randomize(users[i], rng).unwrap_or(0),
            || h.aggregator(),
        )?;
        let est = h.estimate(&state)?;
        let mse = est
            .counts
            .iter()
            .zip(&truth)
            .map(|(e, &t)| (e - t as f64).powi(2))
            .sum::<f64>()
            / m as f64;
        mses.push(mse);
        first.get_or_insert(est);
        pb.inc(1);
    }
    pb.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    let first = first.unwrap_or_else(|| blanket::protocol::HistogramEstimate {
        counts: vec![],
        reports: 0,
    });
    let (mse, ci) = mean_ci(&mses);
    let predicted = h.predicted_mse(&truth);
    let rows: Vec<Vec<String>> = truth
        .iter()
        .zip(&first.counts)
        .enumerate()
        .map(|(y, (&t, &e))| {
            vec![
                y.to_string(),
                t.to_string(),
                format!("{e:.1}"),
                format!("{:+.1}", e - t as f64),
                format!("{:.1}", h.count_variance(t, users.len() as u64).sqrt()),
            ]
        })
        .collect();
    let detail = format!(
        "First repetition\n{}",
        table(
            &[
                "category",
                "true count",
                "estimate",
                "error",
                "predicted sd"
            ],
            &rows
        )
    );
    let report = SimulationReport {
        protocol: "histogram",
        n: users.len() as u64,
        gamma: h.randomizer().gamma().get(),
        reps: run.reps,
        seed: run.seed,
        mse,
        mse_ci95: ci,
        predicted_mse: predicted,
        worst_case_mse: h.worst_count_variance(users.len() as u64),
        mse_meaning: "squared error of the estimated counts, averaged over the m categories (worst case: the largest single-category variance)",
        mse_ratio: mse / predicted,
        seconds,
        shuffled: !run.no_shuffle,
        data,
        calibration,
        first_repetition: serde_json::json!({
            "true_counts": truth,
            "estimated_counts": first.counts,
        }),
    };
    Ok((report, detail))
}

/// Simulates the scalar-sum protocol.
pub fn simulate_scalar_sum(
    p: &ScalarSum,
    users: &[f64],
    calibration: CalibrationReport,
    data: Provenance,
    run: &RunArgs,
) -> Result<(SimulationReport, String)> {
    let truth: f64 = users.iter().sum();
    let n = users.len();
    // Validate once up front, so the hot loop needs no checks.
    let values = users
        .iter()
        .map(|&x| blanket::params::UnitValue::new(x))
        .collect::<Result<Vec<_>, _>>()?;
    let start = Instant::now();
    let pb = progress(u64::from(run.reps), "scalar sum", run.json);
    let mut sq = Vec::new();
    let mut first = None;
    for rep in 0..run.reps {
        let state = run_single_message(
            n,
            run.seed,
            rep,
            !run.no_shuffle,
            |i, rng| p.randomize_value(values[i], rng),
            || p.aggregator(),
        )?;
        let est = p.estimate(&state)?;
        sq.push((est.sum - truth).powi(2));
        first.get_or_insert(est);
        pb.inc(1);
    }
    pb.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    let (mse, ci) = mean_ci(&sq);
    let predicted = p.exact_sum_mse(users);
    let detail = first.map(|e| {
        kv_table(
            "First repetition",
            &[
                ("true sum", format!("{truth:.3}")),
                ("estimated sum", format!("{:.3}", e.sum)),
                ("true mean", format!("{:.6}", truth / n as f64)),
                ("estimated mean", format!("{:.6}", e.mean)),
                (
                    "predicted sd of the sum",
                    format!("{:.3}", predicted.sqrt()),
                ),
            ],
        )
    });
    let report = SimulationReport {
        protocol: "scalar-sum",
        n: n as u64,
        gamma: p.randomizer().gamma().get(),
        reps: run.reps,
        seed: run.seed,
        mse,
        mse_ci95: ci,
        predicted_mse: predicted,
        worst_case_mse: p.worst_case_sum_mse(n as u64),
        mse_meaning:
            "squared error of the estimated sum of the n values (divide by n^2 for the mean)",
        mse_ratio: mse / predicted,
        seconds,
        shuffled: !run.no_shuffle,
        data,
        calibration,
        first_repetition: serde_json::to_value(first)?,
    };
    Ok((report, detail.unwrap_or_default()))
}
