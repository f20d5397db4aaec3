//! `blanket simulate`: run a protocol end to end on real or generated data, repeatedly, and
//! compare the observed error with the exact prediction.

use super::calibrate::{self, CalibrationReport, ShowCalibration};
use super::common::{mean_ci, progress, TargetArgs};
use crate::accountant::{resolve, AccountantChoice};
use crate::data::{self, Provenance, Users};
use crate::output::{kv_table, num, print_json, table};
use anyhow::Result;
use blanket::params::{DomainSize, NumUsers};
use blanket::protocol::tensor;
use blanket::protocol::{Histogram, ScalarSum};
use clap::{Args, Subcommand};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

mod vector_sum;
use vector_sum::parse_shape;
pub use vector_sum::{simulate_vector_sum, tensor_rows, vector_data, vector_rows, TensorShape};

/// The protocols that can be simulated.
#[derive(Subcommand)]
pub enum SimulateCommand {
    /// Histogram over m categories.
    Histogram(SimHistogramArgs),
    /// Sum of reals in [0, 1].
    ScalarSum(SimScalarSumArgs),
    /// Sum of vectors in [0, 1]^d.
    VectorSum(SimVectorSumArgs),
    /// DP sum of reals in [0, 1] over split-and-mix (IKOS): m shares per client, one uniform
    /// shuffle of all shares.
    IkosSum(super::ikos::SimIkosArgs),
    /// DP histogram over split-and-mix (IKOS): d coordinate instances, one uniform shuffle
    /// per coordinate.
    IkosHistogram(super::ikos_vector::SimIkosHistogramArgs),
    /// DP sum of vectors in [0, 1]^d over split-and-mix (IKOS): d coordinate instances, one
    /// uniform shuffle per coordinate.
    IkosVector(super::ikos_vector::SimIkosVectorArgs),
    /// Item frequencies by sampling and secret sharing (DPCS, DPDS, DPDG, TSS, TSS').
    Frequency(super::frequency::SimFrequencyArgs),
}

/// Options shared by every simulation.
#[derive(Args, Clone)]
pub struct RunArgs {
    /// Repetitions of the whole protocol on the same data.
    #[arg(long, default_value_t = 10, value_parser = crate::numeric::parse_reps, allow_hyphen_values = true)]
    pub reps: u32,
    /// Seed of the simulation (reproducible; real clients never use a seed).
    #[arg(long, default_value_t = 1, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub seed: u64,
    /// Skip the shuffler (the analyzers are order-free, so estimates are identical; faster).
    #[arg(long)]
    pub no_shuffle: bool,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
    /// The data file's first line is a header (skipped). Without --header or --no-header,
    /// a first line is a header only if none of its fields looks like a number.
    #[arg(long, conflicts_with = "no_header")]
    pub header: bool,
    /// The data file has no header: its first line is data.
    #[arg(long)]
    pub no_header: bool,
}

impl RunArgs {
    /// The header rule of the data file.
    pub fn header_rule(&self) -> data::Header {
        match (self.header, self.no_header) {
            (true, _) => data::Header::Present,
            (_, true) => data::Header::Absent,
            _ => data::Header::Auto,
        }
    }
}

/// Arguments of `simulate histogram`.
#[derive(Args)]
pub struct SimHistogramArgs {
    /// Number of users (default: the number of data rows).
    #[arg(long, value_parser = crate::numeric::parse_users, allow_hyphen_values = true)]
    pub n: Option<f64>,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Number of categories m.
    #[arg(long, default_value_t = 32, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub domain: u64,
    /// A CSV file (PATH or csv:PATH) with one category in {0..m-1} per row (default: the embedded ECG signal,
    /// quantized into m bins).
    #[arg(long, value_parser = crate::data::csv_file)]
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
    #[arg(long, value_parser = crate::numeric::parse_users, allow_hyphen_values = true)]
    pub n: Option<f64>,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Fixed precision k (default: calibrated).
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub k: Option<u64>,
    /// Calibrate with the paper's m = k convention (reproduction only; not certified).
    #[arg(long)]
    pub paper_domain: bool,
    /// A CSV file (PATH or csv:PATH) with one value in [0, 1] per row (default: the embedded ECG signal,
    /// normalized to [0, 1]).
    #[arg(long, value_parser = crate::data::csv_file)]
    pub data: Option<PathBuf>,
    /// Which bound certifies the guarantee.
    #[arg(long, value_enum, default_value_t)]
    pub accountant: AccountantChoice,
    #[command(flatten)]
    pub run: RunArgs,
}

/// Arguments of `simulate vector-sum`.
#[derive(Args)]
pub struct SimVectorSumArgs {
    /// Number of users (default: the number of data vectors).
    #[arg(long, value_parser = crate::numeric::parse_users, allow_hyphen_values = true)]
    pub n: Option<f64>,
    /// Shape of a matrix or tensor, e.g. 10x10 or 3x4x5: each user's vector of d = the
    /// product of the axes is read as a row-major tensor of this shape (Scott et al. 2021,
    /// Section 6), and the estimate is reported in that shape. Replaces --d.
    #[arg(long, value_parser = parse_shape, conflicts_with = "d")]
    pub shape: Option<TensorShape>,
    /// Dimension d (the first d values of each data row are used for the ECG sources).
    #[arg(long, default_value_t = 100, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub d: u64,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Fixed precision k (default: calibrated).
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub k: Option<u64>,
    /// Fixed number t of coordinates per user (default: calibrated).
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub t: Option<u64>,
    /// Calibrate with the paper's k values per coordinate (reproduction only; not certified).
    #[arg(long)]
    pub paper_domain: bool,
    /// The vectors: `ecg-beats` (heartbeats of the embedded ECG, about a hundred),
    /// `ecg-windows` (every d-sample window of the normalized ECG, about 37000), or a CSV file
    /// (PATH or csv:PATH) with one vector of d values in [0, 1] per row.
    #[arg(long, default_value = "ecg-windows")]
    pub data: String,
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
    pub first_repetition: FirstRepetition,
    /// Dimension (vector sum).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub d: Option<u32>,
    /// Coordinates reported per user (vector sum).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t: Option<u32>,
    /// Shape of the users' tensors (vector sum with --shape).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape: Option<Vec<usize>>,
    /// The paper's bound on the same error, where there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paper_bound_mse: Option<f64>,
}

impl SimulationReport {
    fn print(&self, json: bool, detail: Option<String>) -> Result<()> {
        if json {
            return print_json(self);
        }
        self.calibration.print(false)?;
        crate::println_wrapped!();
        if let Some(d) = detail {
            crate::println_wrapped!("{d}");
        }
        let mut rows = vec![
            (
                "data",
                format!("{} ({})", self.data.source, self.data.selection),
            ),
            ("repetitions", format!("{} (seed {})", self.reps, self.seed)),
            (
                "observed MSE",
                if self.mse_ci95.is_finite() {
                    format!("{} ± {}", num(self.mse), num(self.mse_ci95))
                } else {
                    format!("{} (one repetition: no confidence interval)", num(self.mse))
                },
            ),
            ("predicted MSE (exact, this data)", num(self.predicted_mse)),
            ("observed / predicted", format!("{:.3}", self.mse_ratio)),
            ("worst-case MSE (any data)", num(self.worst_case_mse)),
            ("seconds", format!("{:.3}", self.seconds)),
        ];
        if let Some(b) = self.paper_bound_mse {
            rows.insert(6, ("paper's bound (Thm 4.6 / Sec. 4.5)", num(b)));
        }
        crate::println_wrapped!("{}", kv_table("Simulation", &rows));
        crate::println_wrapped!("MSE: {}", self.mse_meaning);
        Ok(())
    }
}

/// Runs `blanket simulate`.
pub fn run(cmd: &SimulateCommand) -> Result<()> {
    match cmd {
        SimulateCommand::IkosSum(a) => super::ikos::simulate(a),
        SimulateCommand::IkosHistogram(a) => super::ikos_vector::simulate_histogram(a),
        SimulateCommand::IkosVector(a) => super::ikos_vector::simulate_vector(a),
        SimulateCommand::Frequency(a) => super::frequency::simulate(a),
        SimulateCommand::Histogram(a) => {
            let m = DomainSize::new(a.domain)?;
            let (users, prov) = data::categories(
                a.data.as_deref(),
                m.get(),
                users_arg(a.n)?,
                a.run.seed,
                a.run.header_rule(),
            )?;
            enough_rows(a.n, users.len(), &prov)?;
            let target = a.target.target(a.n.unwrap_or(users.len() as f64))?;
            let (h, cal) = calibrate::histogram(m, &target, resolve(a.accountant).as_ref())?;
            let (report, detail) = simulate_histogram(&h, &users, cal, prov, &a.run)?;
            report.print(a.run.json, Some(detail))
        }
        SimulateCommand::ScalarSum(a) => {
            let (users, prov) = data::unit_values(
                a.data.as_deref(),
                users_arg(a.n)?,
                a.run.seed,
                a.run.header_rule(),
            )?;
            enough_rows(a.n, users.len(), &prov)?;
            let target = a.target.target(a.n.unwrap_or(users.len() as f64))?;
            let (p, cal) = calibrate::scalar_sum(
                a.k,
                a.paper_domain,
                &target,
                resolve(a.accountant).as_ref(),
            )?;
            let (report, detail) = simulate_scalar_sum(&p, &users, cal, prov, &a.run)?;
            report.print(a.run.json, Some(detail))
        }
        SimulateCommand::VectorSum(a) => {
            let shape = a.shape.as_ref().map(|s| s.0.as_slice());
            let d = match shape {
                Some(shape) => tensor::numel(shape)? as u64,
                None => a.d,
            };
            let (vectors, pick, prov) = match shape {
                Some(shape) => tensor_rows(
                    &a.data,
                    shape,
                    users_arg(a.n)?,
                    a.run.seed,
                    a.run.header_rule(),
                )?,
                None => vector_rows(&a.data, d, users_arg(a.n)?, a.run.seed, a.run.header_rule())?,
            };
            enough_rows(a.n, pick.users() as usize, &prov)?;
            let target = a.target.target(pick.users() as f64)?;
            let (p, cal) = calibrate::vector_sum(
                d,
                a.t,
                a.k,
                a.paper_domain,
                &target,
                resolve(a.accountant).as_ref(),
            )?;
            let (report, detail) =
                simulate_vector_sum(&p, &vectors, &pick, shape, cal, prov, &a.run)?;
            report.print(a.run.json, Some(detail))
        }
    }
}

/// Repetitions running at once at most hold this many messages (the shuffler's buffer) or
/// analyzer cells each: 2^22, 16-64 MiB per running repetition.
const PARALLEL_REPETITION_SIZE: u64 = 1 << 22;

/// `f(rep)` for every repetition, in repetition order. Repetitions are independent (each its
/// own random streams), so they run in parallel (each itself parallel inside) when one
/// holds at most [`PARALLEL_REPETITION_SIZE`] messages or analyzer cells (`size`), and one
/// after another otherwise (memory stays a few repetitions' worth). The results are the
/// same either way.
fn repetitions<T: Send>(
    reps: u32,
    size: u64,
    f: impl Fn(u32) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    use rayon::prelude::*;
    if size <= PARALLEL_REPETITION_SIZE {
        (0..reps).into_par_iter().map(&f).collect()
    } else {
        (0..reps).map(f).collect()
    }
}

/// Refuses a data source with fewer than 2 rows when `--n` is not given (the number of
/// users is then the number of rows), naming the source rather than `--n`.
fn enough_rows(n: Option<f64>, rows: usize, prov: &Provenance) -> Result<()> {
    if n.is_none() && rows < 2 {
        anyhow::bail!(
            "the data ({}) has {rows} row(s); at least 2 users are needed: add rows, or pass --n N to draw N users from them with replacement",
            prov.source
        );
    }
    Ok(())
}

/// Validates `--n` before any data is resized to it.
fn users_arg(n: Option<f64>) -> Result<Option<usize>> {
    n.map(|n| {
        let n = NumUsers::from_f64(n)?.get();
        // Before any O(n) work: refused at once rather than after the data is resized.
        blanket::simulate::check_run(n, 1, false)?;
        Ok(n as usize)
    })
    .transpose()
}

/// Categories shown in the human table of the first repetition (all when m is at most this).
const SHOWN_CATEGORIES: usize = 64;

/// Protocol-specific estimates of the first repetition (same JSON keys as before).
#[derive(Serialize)]
#[serde(untagged)]
pub enum FirstRepetition {
    /// A JSON object (the sums).
    Value(serde_json::Value),
    /// The histogram's counts, serialized straight from the vectors (m can be 2^26: a JSON
    /// tree of them would take 32 bytes per number).
    Counts {
        /// True count of each category.
        true_counts: Vec<u64>,
        /// Estimated count of each category.
        estimated_counts: Vec<f64>,
    },
}

impl FirstRepetition {
    /// The histogram's (true, estimated) counts.
    pub fn counts(&self) -> Option<(&[u64], &[f64])> {
        match self {
            Self::Counts {
                true_counts,
                estimated_counts,
            } => Some((true_counts, estimated_counts)),
            Self::Value(_) => None,
        }
    }

    /// A number of the JSON object, by key.
    pub fn number(&self, key: &str) -> Option<f64> {
        match self {
            Self::Value(v) => v.get(key).and_then(serde_json::Value::as_f64),
            Self::Counts { .. } => None,
        }
    }
}

/// Simulates the histogram protocol; returns the report and a human table of categories.
/// Memory is O(m + rows): the users are never materialized, each worker keeps one count
/// vector, and the first repetition's counts are kept for the report.
pub fn simulate_histogram(
    h: &Histogram,
    users: &Users<u32>,
    calibration: CalibrationReport,
    data: Provenance,
    run: &RunArgs,
) -> Result<(SimulationReport, String)> {
    let m = h.randomizer().m().get() as usize;
    if let Some((r, &c)) = users
        .rows
        .iter()
        .enumerate()
        .find(|(_, &c)| c as usize >= m)
    {
        anyhow::bail!(
            "row {r}: category must be an integer from 0 to {}, got {c}",
            m - 1
        );
    }
    blanket::simulate::check_run(users.len() as u64, 1, !run.no_shuffle)?;
    let mut truth = vec![0u64; m];
    for (&c, k) in users.rows.iter().zip(users.multiplicities()) {
        truth[c as usize] += k;
    }
    let n = users.len();
    let start = Instant::now();
    let pb = progress(u64::from(run.reps), "histogram", run.json);
    let per_rep = repetitions(
        run.reps,
        (m as u64).max(if run.no_shuffle { 0 } else { n as u64 }),
        |rep| {
            // Batched: the same law of the counts as n per-client calls (users holding the
            // same category are exchangeable; docs/performance.md), from the true counts.
            let state = h.simulate_batched(&truth, run.seed, rep, !run.no_shuffle)?;
            let est = h.estimate(&state)?;
            let mse = est
                .counts
                .iter()
                .zip(&truth)
                .map(|(e, &t)| (e - t as f64).powi(2))
                .sum::<f64>()
                / m as f64;
            pb.inc(1);
            Ok((mse, (rep == 0).then_some(est)))
        },
    )?;
    pb.finish_and_clear();
    let mut mses = Vec::new();
    let mut first = None;
    for (mse, est) in per_rep {
        mses.push(mse);
        first = first.or(est);
    }
    let seconds = start.elapsed().as_secs_f64();
    let first = first.unwrap_or_else(|| blanket::protocol::HistogramEstimate {
        counts: vec![],
        reports: 0,
    });
    let (mse, ci) = mean_ci(&mses);
    let predicted = h.predicted_mse(&truth);
    let detail = if run.json {
        String::new()
    } else {
        let rows: Vec<Vec<String>> = truth
            .iter()
            .zip(&first.counts)
            .take(SHOWN_CATEGORIES)
            .enumerate()
            .map(|(y, (&t, &e))| {
                vec![
                    y.to_string(),
                    t.to_string(),
                    format!("{e:.1}"),
                    format!("{:+.1}", e - t as f64),
                    format!("{:.1}", h.count_variance(t, n as u64).sqrt()),
                ]
            })
            .collect();
        let title = if m > SHOWN_CATEGORIES {
            format!("First repetition (first {SHOWN_CATEGORIES} of {m} categories)")
        } else {
            "First repetition".to_string()
        };
        format!(
            "{title}\n{}",
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
        )
    };
    let first_repetition = FirstRepetition::Counts {
        true_counts: truth,
        estimated_counts: first.counts,
    };
    let report = SimulationReport {
        protocol: "histogram",
        n: n as u64,
        gamma: h.randomizer().gamma().get(),
        reps: run.reps,
        seed: run.seed,
        mse,
        mse_ci95: ci,
        predicted_mse: predicted,
        worst_case_mse: h.worst_count_variance(n as u64),
        mse_meaning: "squared error of the estimated counts, averaged over the m categories (worst case: the largest single-category variance)",
        mse_ratio: mse / predicted,
        seconds,
        shuffled: !run.no_shuffle,
        data,
        calibration,
        first_repetition,
        d: None,
        t: None,
        shape: None,
        paper_bound_mse: None,
    };
    Ok((report, detail))
}

/// Simulates the scalar-sum protocol.
pub fn simulate_scalar_sum(
    p: &ScalarSum,
    users: &Users<f64>,
    calibration: CalibrationReport,
    data: Provenance,
    run: &RunArgs,
) -> Result<(SimulationReport, String)> {
    blanket::simulate::check_run(users.len() as u64, 1, !run.no_shuffle)?;
    let counts = users.multiplicities();
    let truth: f64 = users
        .rows
        .iter()
        .zip(&counts)
        .map(|(&x, &c)| c as f64 * x)
        .sum();
    let n = users.len();
    // Validate once up front, so the hot loop needs no checks.
    let values = users
        .rows
        .iter()
        .map(|&x| blanket::params::UnitValue::new(x))
        .collect::<Result<Vec<_>, _>>()?;
    let start = Instant::now();
    let pb = progress(u64::from(run.reps), "scalar sum", run.json);
    let per_rep = repetitions(run.reps, if run.no_shuffle { 1 } else { n as u64 }, |rep| {
        // Batched: the same law of the state as n per-client calls (users holding the
        // same value are exchangeable; docs/performance.md), from the distinct values
        // and how many users hold each.
        let state = p.simulate_batched(&values, &counts, run.seed, rep, !run.no_shuffle)?;
        let est = p.estimate(&state)?;
        pb.inc(1);
        Ok(((est.sum - truth).powi(2), est))
    })?;
    pb.finish_and_clear();
    let sq: Vec<f64> = per_rep.iter().map(|r| r.0).collect();
    let first = per_rep.first().map(|r| r.1);
    let seconds = start.elapsed().as_secs_f64();
    let (mse, ci) = mean_ci(&sq);
    let predicted = p.exact_sum_mse_weighted(&users.rows, &counts);
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
        first_repetition: FirstRepetition::Value(serde_json::to_value(first)?),
        d: None,
        t: None,
        shape: None,
        paper_bound_mse: None,
    };
    Ok((report, detail.unwrap_or_default()))
}
