//! The multi-message (IKOS split-and-mix) DP sum on the command line: `calibrate ikos-sum`,
//! `simulate ikos-sum` and `compare sum`.
//!
//! The IKOS sum has no blanket probability gamma: its noise (Polya shares of a discrete
//! Laplace) is fixed by eps and n, and its security parameter sigma fixes delta =
//! (1 + e^eps) 2^-sigma. So the generic calibrator (a search over gamma certified by a
//! shuffle accountant) does not apply; `calibrate ikos-sum` prints the protocol's own report
//! (`docs/multi-message.md`, "Command line").

use super::common::{mean_ci, progress};
use crate::data::{self, Provenance, Users};
use crate::output::{echo, kv_table, num, print_json, up};
use crate::usage_bail;
use anyhow::{Context, Result};
use blanket::params::{Delta, UnitValue};
use blanket::protocol::ikos::{MAX_SIGMA, MAX_USERS};
use blanket::protocol::{IkosSum, IkosSumError};
use blanket::rng::simulation_stream;
use blanket::shuffle::{
    AlternatingShuffler, GridLayout, PublicPlacement, Shuffler, UniformShuffler,
};
use blanket_report::ikos::smallest_sigma;
use blanket_report::ikos::{default_sigma, DEFAULT_DELTA};
pub use blanket_report::ikos::{element_bytes, IkosCalibration};
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

/// The security parameter: `--sigma S`, or `--delta D` (the smallest sigma with
/// (1 + e^eps) 2^-sigma <= D), or neither (default target delta 1e-6).
#[derive(Args, Debug, Clone)]
pub struct SigmaArgs {
    /// Security parameter sigma of the split-and-mix layer, 1 to 512; delta = (1 + e^eps)
    /// 2^-sigma is an output, refused if not below 1. Default (neither --sigma nor --delta):
    /// the larger of 40 and the smallest sigma with delta <= 1e-6 (sigma grows with eps).
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true, conflicts_with = "delta")]
    pub sigma: Option<u64>,
    /// Target delta in (0, 1): picks the smallest sigma with (1 + e^eps) 2^-sigma <= delta.
    #[arg(long, allow_hyphen_values = true)]
    pub delta: Option<f64>,
}

impl SigmaArgs {
    /// sigma for epsilon `eps` (already validated).
    pub fn sigma(&self, eps: f64) -> Result<u32> {
        match (self.sigma, self.delta) {
            (Some(s), _) => {
                if !(1..=u64::from(MAX_SIGMA)).contains(&s) {
                    usage_bail!("--sigma must be an integer from 1 to {MAX_SIGMA}, got {s}");
                }
                Ok(s as u32)
            }
            (None, Some(d)) => sigma_for_delta(eps, d),
            (None, None) => default_sigma(eps).map_err(|e| {
                anyhow::Error::new(crate::exit::Usage(format!(
                    "--eps {} (no --sigma or --delta: default target delta {DEFAULT_DELTA:e}): {e}",
                    echo(eps)
                )))
            }),
        }
    }
}

/// The smallest sigma in 1..=512 with (1 + e^eps) 2^-sigma <= delta.
pub fn sigma_for_delta(eps: f64, delta: f64) -> Result<u32> {
    if Delta::new(delta).is_err() {
        usage_bail!("--delta must be a number in (0, 1), got {}", echo(delta));
    }
    match smallest_sigma(eps, delta) {
        Some(s) => Ok(s),
        None => {
            let needed = blanket::protocol::ikos_sum::sigma_needed(eps, delta);
            usage_bail!(
                "--delta {} with --eps {}: (1 + e^eps) 2^-sigma <= delta needs sigma >= {}, above the largest sigma supported ({MAX_SIGMA}); raise --delta or lower --eps",
                echo(delta),
                echo(eps),
                if needed == u64::MAX { "2^64".to_string() } else { needed.to_string() }
            )
        }
    }
}

/// The population the IKOS guarantee covers: `--dropout` and `--malicious` as in
/// `protocol run` (docs/protocol.md, "What the guarantee covers").
#[derive(Args, Debug, Clone, Default)]
pub struct PresentArgs {
    /// Dropout fraction in [0, 0.5), as in `protocol run`: at most floor(dropout n) honest
    /// clients are absent. The guarantee covers the n' = n - floor(dropout n) -
    /// floor(malicious n) honest, present clients (noise and share count sized for them).
    #[arg(long, default_value_t = 0.0, value_parser = crate::numeric::parse_f64, allow_hyphen_values = true)]
    pub dropout: f64,
    /// Malicious fraction in [0, 0.5), as in `protocol run`: at most floor(malicious n)
    /// clients collude with the analyzer (their noise and shares are known to it).
    #[arg(long, default_value_t = 0.0, value_parser = crate::numeric::parse_f64, allow_hyphen_values = true)]
    pub malicious: f64,
}

impl PresentArgs {
    /// n' = n - floor(dropout n) - floor(malicious n), the rule of `protocol run`
    /// (`blanket_protocol::release::blanket_users`); at least 2.
    pub fn honest(&self, n: u64) -> Result<u64> {
        for (flag, v) in [("--dropout", self.dropout), ("--malicious", self.malicious)] {
            if !(0.0..0.5).contains(&v) {
                usage_bail!("{flag} must be a fraction in [0, 0.5), got {}", echo(v));
            }
        }
        let d = (self.dropout * n as f64).floor() as u64;
        let g = (self.malicious * n as f64).floor() as u64;
        let h = n.saturating_sub(d).saturating_sub(g);
        if h < 2 {
            usage_bail!(
                "--n {n} with --dropout {} and --malicious {}: n' = n - floor(dropout n) - floor(malicious n) = {h} honest, present clients; at least 2 are needed",
                echo(self.dropout),
                echo(self.malicious)
            );
        }
        Ok(h)
    }

    /// Whether every client is assumed honest and present (both fractions 0).
    pub fn all_present(&self) -> bool {
        self.dropout == 0.0 && self.malicious == 0.0
    }

    /// `--shuffler alternating` is certified for all n clients present only.
    pub fn check_alternating(&self, alternating: bool) -> Result<()> {
        if alternating && !self.all_present() {
            usage_bail!("--shuffler alternating with --dropout or --malicious is refused: the alternating share count (m_required_alternating) is not analysed for absent or malicious cells; use --shuffler uniform");
        }
        Ok(())
    }
}

/// Validates `--eps` (finite, > 0).
pub(super) fn check_eps(eps: f64) -> Result<f64> {
    if !(eps.is_finite() && eps > 0.0) {
        usage_bail!("--eps must be a finite number > 0, got {}", echo(eps));
    }
    Ok(eps)
}

/// Builds the protocol for `honest` (n', from [`PresentArgs::honest`]) honest, present
/// clients among n, naming the flag of a rejected parameter (exit code 2).
pub fn build(n: u64, eps: f64, sigma: u32, honest: u64) -> Result<IkosSum> {
    if !(2..=MAX_USERS).contains(&n) {
        usage_bail!("--n must be an integer from 2 to {MAX_USERS} for the IKOS sum, got {n}");
    }
    let p = IkosSum::with_options(n, check_eps(eps)?, sigma, honest.min(n), None).and_then(|p| {
        if honest < n {
            p.for_honest_present()
        } else {
            Ok(p)
        }
    });
    p.map_err(|e| match e {
        e @ IkosSumError::VacuousDelta { .. } => anyhow::Error::new(crate::exit::Usage(format!(
            "--sigma {sigma} with --eps {}: {e}",
            echo(eps)
        ))),
        IkosSumError::Ikos(blanket::protocol::IkosError::NoShareCount { .. }) => {
            anyhow::Error::new(crate::exit::Usage(format!(
                "--sigma {sigma}: {e} (lower --sigma or raise --delta)"
            )))
        }
        e @ IkosSumError::EpsilonTooSmall { .. } => anyhow::Error::new(crate::exit::Usage(
            format!("--eps {} with --n {n}: {e}", echo(eps)),
        )),
        e => anyhow::Error::new(crate::exit::Usage(format!("--eps {}: {e}", echo(eps)))),
    })
}

/// The "certified for" row: every client, or the n' honest, present ones.
pub(super) fn certified_for(n: u64, honest: u64) -> String {
    if honest >= n {
        format!("all n = {n} clients (assumed honest and present)")
    } else {
        format!(
            "the n' = {honest} honest, present clients (n - floor(dropout n) - floor(malicious n))"
        )
    }
}

/// How the CLI shows an [`IkosCalibration`].
trait ShowIkos {
    fn rows(&self) -> Vec<(&'static str, String)>;
    fn print(&self, json: bool) -> Result<()>;
}

impl ShowIkos for IkosCalibration {
    fn rows(&self) -> Vec<(&'static str, String)> {
        vec![
            ("protocol", self.protocol.to_string()),
            ("n", self.n.to_string()),
            ("target eps", echo(self.eps)),
            ("precision p", self.p.to_string()),
            (
                "modulus q",
                format!("{} (2^{})", self.q, self.q.trailing_zeros()),
            ),
            ("shares per client m", self.m.to_string()),
            ("alpha (exact, A / 2^40)", format!("{}", self.alpha)),
            ("sigma", self.sigma.to_string()),
            ("noise bound T", self.noise_bound.to_string()),
            ("realized eps", up(self.eps_realized)),
            ("delta = (1 + e^eps) 2^-sigma", up(self.delta)),
            (
                "certified for",
                certified_for(self.n, self.honest_present_users),
            ),
            (
                "certified (eps, delta)",
                format!("({}, {})", up(self.eps), up(self.delta)),
            ),
            ("predicted MSE (sum)", num(self.predicted_mse)),
            ("bytes per client", self.bytes_per_user.to_string()),
        ]
    }

    fn print(&self, json: bool) -> Result<()> {
        if json {
            return print_json(self);
        }
        crate::println_wrapped!("{}", kv_table("Calibration (IKOS sum)", &self.rows()));
        crate::println_wrapped!("predicted MSE: {}", self.predicted_mse_meaning);
        crate::println_wrapped!("assumes: {}", self.assumes);
        crate::println_wrapped!("note: {}", self.calibration);
        Ok(())
    }
}

/// Arguments of `calibrate ikos-sum`.
#[derive(Args)]
pub struct CalibrateIkosArgs {
    /// Number of clients (2 to 10^12).
    #[arg(long, value_parser = crate::numeric::parse_users, allow_hyphen_values = true)]
    pub n: f64,
    /// Target epsilon (> 0, natural log).
    #[arg(long, allow_hyphen_values = true)]
    pub eps: f64,
    #[command(flatten)]
    pub sigma: SigmaArgs,
    #[command(flatten)]
    pub present: PresentArgs,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs `calibrate ikos-sum`.
pub fn calibrate(a: &CalibrateIkosArgs) -> Result<()> {
    let eps = check_eps(a.eps)?;
    let sigma = a.sigma.sigma(eps)?;
    let n = a.n as u64;
    let honest = a.present.honest(n)?;
    let pb = super::common::spinner("computing m_required", a.json);
    let p = build(n, eps, sigma, honest)?;
    pb.finish_and_clear();
    IkosCalibration::of(&p.report()).print(a.json)
}

/// The shuffler of `simulate ikos-sum`.
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IkosShuffler {
    /// One uniform shuffle of all n m shares.
    #[default]
    Uniform,
    /// The alternating shuffler A^2_pi: m instances (d m for a histogram or vector) sharing a
    /// public placement pi, share count from `m_required_alternating` (any n, a ragged last
    /// row included).
    Alternating,
}

/// Arguments of `simulate ikos-sum`.
#[derive(Args)]
pub struct SimIkosArgs {
    /// Number of clients, 2 to 10^12, with n m shares at most 2^28 in memory (default: the
    /// number of data rows).
    #[arg(long, value_parser = crate::numeric::parse_users, allow_hyphen_values = true)]
    pub n: Option<f64>,
    /// Target epsilon (> 0, natural log).
    #[arg(long, allow_hyphen_values = true)]
    pub eps: f64,
    #[command(flatten)]
    pub sigma: SigmaArgs,
    /// A CSV file (PATH or csv:PATH) with one value in [0, 1] per row (default: the embedded ECG signal,
    /// normalized to [0, 1]).
    #[arg(long, value_parser = crate::data::csv_file)]
    pub data: Option<PathBuf>,
    #[command(flatten)]
    pub run: SimIkosRunArgs,
}

/// Options of every IKOS simulation (`simulate ikos-sum|ikos-histogram|ikos-vector`).
#[derive(Args)]
pub struct SimIkosRunArgs {
    /// The shuffle: `uniform` (one shuffle of all n m shares) or `alternating` (A^2_pi, m
    /// instances sharing pi; certified share count for any n), as `protocol run --variant`
    /// (formerly --shuffler).
    #[arg(long = "variant", alias = "shuffler", value_enum, default_value_t)]
    pub shuffler: IkosShuffler,
    /// Repetitions of the whole protocol on the same data.
    #[arg(long, default_value_t = 10, value_parser = crate::numeric::parse_reps, allow_hyphen_values = true)]
    pub reps: u32,
    /// Seed of the simulation (reproducible; real clients never use a seed).
    #[arg(long, default_value_t = 1, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub seed: u64,
    #[command(flatten)]
    pub present: PresentArgs,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// What `simulate ikos-sum` prints (JSON keys are a contract).
#[derive(Serialize)]
pub struct IkosSimulation {
    /// Protocol name.
    pub protocol: &'static str,
    /// Clients.
    pub n: u64,
    /// Repetitions.
    pub reps: u32,
    /// Seed.
    pub seed: u64,
    /// Observed mean squared error of the estimated sum, averaged over repetitions.
    pub mse: f64,
    /// Half-width of the 95% confidence interval of `mse`.
    pub mse_ci95: f64,
    /// Predicted MSE (upper bound: rounding variance <= 1/4 per client).
    pub predicted_mse: f64,
    /// Observed over predicted.
    pub mse_ratio: f64,
    /// Wall-clock seconds (all repetitions).
    pub seconds: f64,
    /// Whether the shares were shuffled (always).
    pub shuffled: bool,
    /// The shuffler.
    pub shuffler: &'static str,
    /// True sum of the data.
    pub true_sum: f64,
    /// Estimated sum of the first repetition.
    pub first_estimate: f64,
    /// Where the data came from.
    pub data: Provenance,
    /// The parameters the simulation ran with.
    pub calibration: IkosCalibration,
}

/// Loads values in [0, 1] for `simulate ikos-sum` / `compare sum`, naming `--data` on errors.
pub(super) fn unit_data(
    file: Option<&std::path::Path>,
    n: Option<usize>,
    seed: u64,
) -> Result<(Users<f64>, Provenance)> {
    let r = data::unit_values(file, n, seed, data::Header::Auto);
    match (file, r) {
        // A value outside [0, 1] (or not a number) is a bad input: exit code 2.
        (Some(f), Err(e))
            if e.chain().any(|c| {
                matches!(
                    c.downcast_ref::<blanket_data::table::DataError>(),
                    Some(blanket_data::table::DataError::BadValue { .. })
                )
            }) =>
        {
            Err(anyhow::Error::new(crate::exit::Usage(format!(
                "--data {}: {}",
                f.display(),
                crate::exit::render(&e)
            ))))
        }
        (Some(f), r) => r.with_context(|| format!("--data {}", f.display())),
        (None, r) => r,
    }
}

/// One repetition of the IKOS sum end to end: each client randomizes with its own
/// SimulationRng stream (seed, repetition, client), all n m shares are permuted by one
/// uniform shuffle (or, if `p.is_alternating()`, instance j = every client's j-th share goes
/// through the alternating shuffler, all instances sharing one public placement drawn for
/// the repetition), the analyzer adds them mod q; returns the estimate.
pub fn ikos_repetition(
    p: &IkosSum,
    values: &[UnitValue],
    users: &Users<f64>,
    seed: u64,
    rep: u32,
) -> Result<f64> {
    use blanket::analyzer::Aggregator;
    use rayon::prelude::*;
    let n = users.len();
    let m = p.ikos().shares() as usize;
    let mut all = vec![0u64; n * m];
    all.par_chunks_mut(m)
        .enumerate()
        .try_for_each(|(i, out)| -> Result<()> {
            let mut rng = simulation_stream(seed, (u64::from(rep) << 32) | i as u64);
            let shares = p.randomize_simulated(values[users.pick.row(i as u64)].get(), &mut rng)?;
            out.copy_from_slice(&shares);
            Ok(())
        })?;
    let mut rng = simulation_stream(seed, u64::MAX - u64::from(rep));
    let mut state = p.analyzer();
    if p.is_alternating() {
        let layout = GridLayout::new(n);
        let shuffler = AlternatingShuffler::new(PublicPlacement::sample(layout, &mut rng));
        let mut instances: Vec<Vec<u64>> = (0..m)
            .map(|j| all.iter().skip(j).step_by(m).copied().collect())
            .collect();
        shuffler.shuffle_instances(&mut instances, &mut rng)?;
        for instance in &instances {
            state.absorb_all(instance)?;
        }
    } else {
        UniformShuffler.shuffle(&mut all, &mut rng);
        state.absorb_all(&all)?;
    }
    Ok(p.estimate(&state)?)
}

/// A simulation holds all n m shares in memory: at most
/// [`blanket::simulate::MAX_SHUFFLED_MESSAGES`] of them.
pub(super) fn check_simulated_shares(n: u64, m: u32) -> Result<()> {
    let limit = blanket::simulate::MAX_SHUFFLED_MESSAGES;
    if n.saturating_mul(u64::from(m)) > limit {
        usage_bail!(
            "--n {n}: the simulation would hold n m = {} shares (m = {m}) in memory, more than {limit}; lower --n (calibrate ikos-sum has no such limit)",
            n.saturating_mul(u64::from(m))
        );
    }
    Ok(())
}

/// Validated values and the true sum.
pub(super) fn prepared(users: &Users<f64>) -> Result<(Vec<UnitValue>, f64)> {
    let values = users
        .rows
        .iter()
        .map(|&x| UnitValue::new(x))
        .collect::<Result<Vec<_>, _>>()
        .context("--data")?;
    let counts = users.multiplicities();
    let truth = users
        .rows
        .iter()
        .zip(&counts)
        .map(|(&x, &c)| c as f64 * x)
        .sum();
    Ok((values, truth))
}

/// Runs `simulate ikos-sum`.
pub fn simulate(a: &SimIkosArgs) -> Result<()> {
    let eps = check_eps(a.eps)?;
    let sigma = a.sigma.sigma(eps)?;
    let n_arg = a.n.map(|n| n as usize);
    if let Some(n) = a.n {
        // Before the calibration (seconds at n = 1e12) and before the data is resized to n
        // (O(n) work): the n m >= n shares fit in memory.
        let limit = blanket::simulate::MAX_SHUFFLED_MESSAGES;
        if n as u64 > limit {
            usage_bail!("--n {n}: the simulation holds all n m shares (m >= 1 per client) in memory, at most {limit}; lower --n (calibrate ikos-sum has no such limit)");
        }
        let p = build(n as u64, eps, sigma, a.run.present.honest(n as u64)?)?;
        check_simulated_shares(n as u64, p.ikos().shares())?;
    }
    let (users, prov) = unit_data(a.data.as_deref(), n_arg, a.run.seed)?;
    let n = users.len() as u64;
    if a.n.is_none() && !(2..=MAX_USERS).contains(&n) {
        usage_bail!(
            "the data ({}) has {n} rows; the IKOS sum takes 2 to {MAX_USERS} clients: pass --n N",
            prov.source
        );
    }
    let honest = a.run.present.honest(n)?;
    a.run
        .present
        .check_alternating(a.run.shuffler == IkosShuffler::Alternating)?;
    let mut p = build(n, eps, sigma, honest)?;
    if a.run.shuffler == IkosShuffler::Alternating {
        p = p.over_alternating().map_err(|e| {
            anyhow::Error::new(crate::exit::Usage(format!(
                "--variant alternating with --n {n}: {e}"
            )))
        })?;
    }
    check_simulated_shares(n, p.ikos().shares())?;
    let (values, truth) = prepared(&users)?;
    let start = Instant::now();
    let pb = progress(u64::from(a.run.reps), "ikos sum", a.run.json);
    let mut sq = Vec::with_capacity(a.run.reps as usize);
    let mut first = None;
    for rep in 0..a.run.reps {
        let est = ikos_repetition(&p, &values, &users, a.run.seed, rep)?;
        sq.push((est - truth).powi(2));
        first.get_or_insert(est);
        pb.inc(1);
    }
    pb.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    let (mse, ci) = mean_ci(&sq);
    let cal = IkosCalibration::of(&p.report());
    let report = IkosSimulation {
        protocol: "ikos-sum",
        n,
        reps: a.run.reps,
        seed: a.run.seed,
        mse,
        mse_ci95: ci,
        predicted_mse: cal.predicted_mse,
        mse_ratio: mse / cal.predicted_mse,
        seconds,
        shuffled: true,
        shuffler: if p.is_alternating() {
            "alternating"
        } else {
            "uniform"
        },
        true_sum: truth,
        first_estimate: first.unwrap_or(f64::NAN),
        data: prov,
        calibration: cal,
    };
    if a.run.json {
        return print_json(&report);
    }
    report.calibration.print(false)?;
    crate::println_wrapped!();
    let rows = vec![
        (
            "data",
            format!("{} ({})", report.data.source, report.data.selection),
        ),
        (
            "repetitions",
            format!("{} (seed {})", report.reps, report.seed),
        ),
        ("true sum", format!("{truth:.3}")),
        (
            "estimated sum (first repetition)",
            format!("{:.3}", report.first_estimate),
        ),
        (
            "observed MSE",
            if ci.is_finite() {
                format!("{} ± {}", num(mse), num(ci))
            } else {
                format!("{} (one repetition: no confidence interval)", num(mse))
            },
        ),
        ("predicted MSE (upper bound)", num(report.predicted_mse)),
        ("observed / predicted", format!("{:.3}", report.mse_ratio)),
        (
            "shuffler",
            if p.is_alternating() {
                "alternating A^2_pi (m instances sharing pi; m certified by m_required_alternating)"
                    .into()
            } else {
                "uniform (one shuffle of all n m shares)".into()
            },
        ),
        ("seconds", format!("{seconds:.3}")),
    ];
    crate::println_wrapped!("{}", kv_table("Simulation", &rows));
    crate::println_wrapped!(
        "MSE: squared error of the estimated sum of the n values (divide by n^2 for the mean)"
    );
    Ok(())
}
