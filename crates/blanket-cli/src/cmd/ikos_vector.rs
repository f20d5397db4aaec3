//! `calibrate ikos-histogram` and `calibrate ikos-vector`: d coordinate instances of the IKOS
//! DP sum (`blanket::protocol::ikos_vector`, `docs/multi-message.md`, "Vector sums and
//! histograms"). Like `calibrate ikos-sum` there is no gamma to search: the command prints
//! the protocol's own report. `simulate ikos-histogram` and `simulate ikos-vector` run the
//! protocol end to end (each coordinate's n m shares through their own uniform shuffle) and
//! compare the observed error with the prediction, like `simulate ikos-sum`.

use super::common::{mean_ci, progress};
use super::ikos::{
    certified_for, check_eps, element_bytes, IkosShuffler, PresentArgs, SigmaArgs, SimIkosRunArgs,
};
use crate::data::Provenance;
use crate::output::{echo, kv_table, num, print_json, up};
use crate::usage_bail;
use anyhow::Result;
use blanket::params::ParamError;
use blanket::protocol::ikos::MAX_USERS;
use blanket::protocol::ikos_vector::MAX_DIM;
use blanket::protocol::{
    IkosError, IkosSumError, IkosVector, IkosVectorError, IkosVectorReport, VectorInput,
};
use blanket::rng::simulation_stream;
use blanket::shuffle::{
    AlternatingShuffler, GridLayout, PublicPlacement, Shuffler, UniformShuffler,
};
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `calibrate ikos-histogram`.
#[derive(Args)]
pub struct CalibrateIkosHistogramArgs {
    /// Number of clients (2 to 10^12).
    #[arg(long, value_parser = crate::numeric::parse_users, allow_hyphen_values = true)]
    pub n: f64,
    /// Number of categories (2 to 2^20); each client holds one.
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub domain: u64,
    /// Target epsilon of the whole histogram (> 0, natural log).
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

/// Arguments of `calibrate ikos-vector`.
#[derive(Args)]
pub struct CalibrateIkosVectorArgs {
    /// Number of clients (2 to 10^12).
    #[arg(long, value_parser = crate::numeric::parse_users, allow_hyphen_values = true)]
    pub n: f64,
    /// Dimension d (1 to 2^20); each client holds a vector in [0, 1]^d.
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub d: u64,
    /// Target epsilon of the whole vector (> 0, natural log).
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

/// What both commands print (JSON keys are a contract).
#[derive(Serialize)]
pub struct IkosVectorCalibration {
    /// Protocol name: `ikos-histogram` or `ikos-vector`.
    pub protocol: &'static str,
    /// Clients n.
    pub n: u64,
    /// Dimension (categories for a histogram).
    pub d: usize,
    /// Target epsilon of the whole vector.
    pub eps: f64,
    /// Epsilon per coordinate for sensitivity p (eps/2 for a histogram, eps/d for a vector).
    pub eps_per_coordinate: f64,
    /// Security parameter of the whole view.
    pub sigma: u32,
    /// sigma + ceil(log2 d), each coordinate instance's.
    pub sigma_per_coordinate: u32,
    /// (1 + e^eps) d 2^-sigma_per_coordinate.
    pub delta: f64,
    /// The honest, present clients the guarantee covers: n' = n - floor(dropout n) -
    /// floor(malicious n) (as `protocol run`); n when every client is assumed present.
    pub honest_present_users: u64,
    /// Precision p (1 for a histogram).
    pub p: u32,
    /// Modulus q of every coordinate.
    pub q: u128,
    /// Shares per client and coordinate m.
    pub m: u32,
    /// Messages per client d m.
    pub messages_per_user: u64,
    /// Bytes per client (d m shares of ceil(log2 q / 8) bytes).
    pub bytes_per_user: u64,
    /// Predicted MSE of the estimated vector (sum over coordinates).
    pub predicted_mse: f64,
    /// What `predicted_mse` measures.
    pub predicted_mse_meaning: &'static str,
    /// What the guarantee assumes.
    pub assumes: &'static str,
}

impl IkosVectorCalibration {
    fn of(r: &IkosVectorReport) -> Self {
        let c = &r.coordinate;
        let histogram = r.input == VectorInput::Histogram;
        Self {
            protocol: if histogram {
                "ikos-histogram"
            } else {
                "ikos-vector"
            },
            n: c.users,
            d: r.dim,
            eps: r.epsilon,
            eps_per_coordinate: r.epsilon_per_coordinate,
            sigma: r.sigma,
            sigma_per_coordinate: r.sigma_per_coordinate,
            delta: r.delta,
            honest_present_users: c.honest,
            p: c.precision,
            q: c.modulus,
            m: c.shares,
            messages_per_user: r.messages_per_user,
            bytes_per_user: r.messages_per_user * element_bytes(c.modulus),
            predicted_mse: r.predicted_mse,
            predicted_mse_meaning: if histogram {
                "expected squared error of the estimated counts, summed over the d categories (discrete Laplace variance each; counts are exact)"
            } else {
                "upper bound on the expected squared error of the estimated coordinate sums, summed over the d coordinates, for any data (rounding <= n/4 plus the discrete Laplace variance, over p^2, per coordinate)"
            },
            assumes: if c.honest < c.users {
                "at least n' of the n clients are honest and present (their Polya noise alone is each coordinate's discrete Laplace; each coordinate's m is sigma-secure for their shares; absent and malicious clients are not protected); one uniform shuffle per coordinate; pure eps-DP of the noisy vector by basic composition over coordinates"
            } else if r.alternating {
                "all n clients honest and present; the alternating shuffler A^2_pi (all d m instances share one public placement pi, each with its own secret row and column permutations; m certified by m_required_alternating at sigma + ceil(log2 d)); pure eps-DP of the noisy vector by basic composition over coordinates"
            } else {
                "all n clients honest and present; one uniform shuffle per coordinate of that coordinate's n m shares; pure eps-DP of the noisy vector by basic composition over coordinates"
            },
        }
    }

    fn print(&self, json: bool) -> Result<()> {
        if json {
            return print_json(self);
        }
        let rows = vec![
            ("protocol", self.protocol.to_string()),
            ("n", self.n.to_string()),
            ("dimension d", self.d.to_string()),
            ("target eps", echo(self.eps)),
            ("eps per coordinate", echo(self.eps_per_coordinate)),
            ("precision p", self.p.to_string()),
            (
                "modulus q",
                format!("{} (2^{})", self.q, self.q.trailing_zeros()),
            ),
            ("shares per client and coordinate m", self.m.to_string()),
            (
                "messages per client d m",
                self.messages_per_user.to_string(),
            ),
            (
                "sigma (per coordinate)",
                format!("{} ({})", self.sigma, self.sigma_per_coordinate),
            ),
            (
                "certified for",
                certified_for(self.n, self.honest_present_users),
            ),
            (
                "certified (eps, delta)",
                format!("({}, {})", up(self.eps), up(self.delta)),
            ),
            ("predicted MSE (vector)", num(self.predicted_mse)),
            ("bytes per client", self.bytes_per_user.to_string()),
        ];
        crate::println_wrapped!("{}", kv_table("Calibration (IKOS vector)", &rows));
        crate::println_wrapped!("predicted MSE: {}", self.predicted_mse_meaning);
        crate::println_wrapped!("assumes: {}", self.assumes);
        Ok(())
    }
}

fn build(
    input: VectorInput,
    n: u64,
    d: u64,
    dim_flag: &str,
    eps: f64,
    sigma: u32,
    present: &PresentArgs,
) -> Result<IkosVector> {
    if !(2..=MAX_USERS).contains(&n) {
        usage_bail!("--n must be an integer from 2 to {MAX_USERS}, got {n}");
    }
    let honest = present.honest(n)?;
    let dim = usize::try_from(d).unwrap_or(usize::MAX);
    IkosVector::for_present(input, n, honest, dim, eps, sigma).map_err(|e| {
        if let IkosVectorError::Param(p @ ParamError::OutOfRange { field: "dim", .. }) = e {
            return super::common::flag_error(p, &[("dim", dim_flag)]);
        }
        let flag = match &e {
            IkosVectorError::Param(ParamError::OutOfRange { field: "dim", .. }) => {
                dim_flag.to_string()
            }
            IkosVectorError::Param(ParamError::OutOfRange { field: "sigma", .. })
            | IkosVectorError::Sum(IkosSumError::Ikos(IkosError::NoShareCount { .. })) => {
                "--sigma".into()
            }
            IkosVectorError::Sum(IkosSumError::VacuousDelta { .. }) => {
                format!("--sigma {sigma} with --eps {}", echo(eps))
            }
            IkosVectorError::EpsilonTooSmall { .. } => {
                format!("--eps {} with --n {n} {dim_flag} {d}", echo(eps))
            }
            _ => format!("--eps {}", echo(eps)),
        };
        anyhow::Error::new(crate::exit::Usage(format!("{flag}: {e}")))
    })
}

/// Runs `calibrate ikos-histogram`.
pub fn calibrate_histogram(a: &CalibrateIkosHistogramArgs) -> Result<()> {
    let eps = check_eps(a.eps)?;
    let sigma = a.sigma.sigma(eps)?;
    let v = build(
        VectorInput::Histogram,
        a.n as u64,
        a.domain,
        "--domain",
        eps,
        sigma,
        &a.present,
    )?;
    IkosVectorCalibration::of(&v.report()).print(a.json)
}

/// Runs `calibrate ikos-vector`.
pub fn calibrate_vector(a: &CalibrateIkosVectorArgs) -> Result<()> {
    let eps = check_eps(a.eps)?;
    let sigma = a.sigma.sigma(eps)?;
    let v = build(
        VectorInput::UnitBox,
        a.n as u64,
        a.d,
        "--d",
        eps,
        sigma,
        &a.present,
    )?;
    IkosVectorCalibration::of(&v.report()).print(a.json)
}

/// Arguments of `simulate ikos-histogram`.
#[derive(Args)]
pub struct SimIkosHistogramArgs {
    /// Number of clients, 2 to 10^12, with n d m shares at most 2^28 in memory (default: the
    /// number of data rows).
    #[arg(long, value_parser = crate::numeric::parse_users, allow_hyphen_values = true)]
    pub n: Option<f64>,
    /// Number of categories d (2 to 2^20); each client holds one.
    #[arg(long, default_value_t = 32, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub domain: u64,
    /// Target epsilon of the whole histogram (> 0, natural log).
    #[arg(long, allow_hyphen_values = true)]
    pub eps: f64,
    #[command(flatten)]
    pub sigma: SigmaArgs,
    /// A CSV file (PATH or csv:PATH) with one category in {0..d-1} per row (default: the embedded ECG signal,
    /// quantized into d bins).
    #[arg(long, value_parser = crate::data::csv_file)]
    pub data: Option<PathBuf>,
    #[command(flatten)]
    pub run: SimIkosRunArgs,
}

/// Arguments of `simulate ikos-vector`.
#[derive(Args)]
pub struct SimIkosVectorArgs {
    /// Number of clients, 2 to 10^12, with n d m shares at most 2^28 in memory (default: the
    /// number of data vectors).
    #[arg(long, value_parser = crate::numeric::parse_users, allow_hyphen_values = true)]
    pub n: Option<f64>,
    /// Dimension d (1 to 2^20); each client holds a vector in [0, 1]^d.
    #[arg(long, default_value_t = 100, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub d: u64,
    /// Target epsilon of the whole vector (> 0, natural log).
    #[arg(long, allow_hyphen_values = true)]
    pub eps: f64,
    #[command(flatten)]
    pub sigma: SigmaArgs,
    /// The vectors, as in `simulate vector-sum`: `ecg-beats`, `ecg-windows`, or a CSV file
    /// (PATH or csv:PATH) with one vector of d values in [0, 1] per row.
    #[arg(long, default_value = "ecg-windows")]
    pub data: String,
    #[command(flatten)]
    pub run: SimIkosRunArgs,
}

/// What `simulate ikos-histogram` and `simulate ikos-vector` print (JSON keys are a
/// contract).
#[derive(Serialize)]
pub struct IkosVectorSimulation {
    /// Protocol name: `ikos-histogram` or `ikos-vector`.
    pub protocol: &'static str,
    /// Clients.
    pub n: u64,
    /// Dimension (categories for a histogram).
    pub d: usize,
    /// Repetitions.
    pub reps: u32,
    /// Seed.
    pub seed: u64,
    /// Observed squared error of the estimated vector (summed over the d coordinates),
    /// averaged over repetitions.
    pub mse: f64,
    /// Half-width of the 95% confidence interval of `mse`.
    pub mse_ci95: f64,
    /// Predicted MSE for any data (histogram: exact; vector: upper bound, rounding <= 1/4
    /// per client and coordinate).
    pub predicted_mse: f64,
    /// Predicted MSE for this data (exact rounding variance sum_i f(1 - f) per coordinate,
    /// f the fractional part of p x; equal to `predicted_mse` for a histogram).
    pub predicted_mse_this_data: f64,
    /// `mse` over `predicted_mse_this_data`.
    pub mse_ratio: f64,
    /// What the errors measure.
    pub mse_meaning: &'static str,
    /// Wall-clock seconds (all repetitions).
    pub seconds: f64,
    /// Whether the shares were shuffled (always: one uniform shuffle per coordinate).
    pub shuffled: bool,
    /// The shuffler.
    pub shuffler: &'static str,
    /// Largest |estimate - truth| over the coordinates, first repetition.
    pub first_max_abs_error: f64,
    /// Where the data came from.
    pub data: Provenance,
    /// The parameters the simulation ran with.
    pub calibration: IkosVectorCalibration,
}

/// `--variant alternating`: the same protocol over A^2_pi (certified m per coordinate).
fn with_shuffler(v: IkosVector, run: &SimIkosRunArgs, n: u64) -> Result<IkosVector> {
    run.present
        .check_alternating(run.shuffler == IkosShuffler::Alternating)?;
    if run.shuffler != IkosShuffler::Alternating {
        return Ok(v);
    }
    v.over_alternating().map_err(|e| {
        anyhow::Error::new(crate::exit::Usage(format!(
            "--variant alternating with --n {n}: {e}"
        )))
    })
}

/// A simulation holds every client's d m shares in memory: n d m at most
/// [`blanket::simulate::MAX_SHUFFLED_MESSAGES`].
fn check_memory(n: u64, v: &IkosVector, dim_flag: &str) -> Result<()> {
    let limit = blanket::simulate::MAX_SHUFFLED_MESSAGES;
    let m = u64::from(v.coordinate().ikos().shares());
    let total = n.saturating_mul(v.dim() as u64).saturating_mul(m);
    if total > limit {
        usage_bail!(
            "--n {n} with {dim_flag} {}: the simulation would hold n d m = {total} shares (m = {m}) in memory, more than {limit}; lower --n or {dim_flag} (calibrate has no such limit)",
            v.dim()
        );
    }
    Ok(())
}

/// A bad value or row in a data file is a bad input (exit code 2, naming `--data`).
fn data_usage<T>(source: &str, r: Result<T>) -> Result<T> {
    use blanket_data::table::DataError;
    r.map_err(|e| {
        let bad = e.chain().any(|c| {
            matches!(
                c.downcast_ref::<DataError>(),
                Some(DataError::BadValue { .. } | DataError::WrongLength { .. })
            )
        });
        if bad {
            anyhow::Error::new(crate::exit::Usage(format!(
                "--data {source}: {}",
                crate::exit::render(&e)
            )))
        } else {
            e.context(format!("--data {source}"))
        }
    })
}

/// One repetition: client i randomizes with its own SimulationRng stream (seed, repetition,
/// client) through the public client API (`shares(i, rng)`: d groups of m shares); each
/// coordinate's n m shares go through their own uniform shuffle (or, over A^2_pi, its m
/// instances through the alternating shuffler, all d m instances sharing one public placement
/// drawn for the repetition) into their own analyzer state; returns the d estimates.
fn repetition<F>(v: &IkosVector, n: usize, seed: u64, rep: u32, shares: F) -> Result<Vec<f64>>
where
    F: Fn(usize, &mut blanket::rng::SimulationRng) -> Result<Vec<Vec<u64>>> + Sync,
{
    use blanket::analyzer::Aggregator;
    use rayon::prelude::*;
    let d = v.dim();
    let m = v.coordinate().ikos().shares() as usize;
    let mut all = vec![0u64; n * d * m];
    all.par_chunks_mut(d * m)
        .enumerate()
        .try_for_each(|(i, out)| -> Result<()> {
            let mut rng = simulation_stream(seed, (u64::from(rep) << 32) | i as u64);
            for (j, s) in shares(i, &mut rng)?.iter().enumerate() {
                out[j * m..(j + 1) * m].copy_from_slice(s);
            }
            Ok(())
        })?;
    let mut states = v.analyzers();
    if v.is_alternating() {
        // Placement stream: bit 20 set (coordinate streams below use j < 2^20).
        let stream = u64::MAX - ((u64::from(rep) << 21) | (1 << 20));
        let placement =
            PublicPlacement::sample(GridLayout::new(n), &mut simulation_stream(seed, stream));
        let shuffler = AlternatingShuffler::new(placement);
        for (j, state) in states.iter_mut().enumerate() {
            let mut instances: Vec<Vec<u64>> = (0..m)
                .map(|k| (0..n).map(|i| all[i * d * m + j * m + k]).collect())
                .collect();
            let stream = u64::MAX - ((u64::from(rep) << 21) | j as u64);
            shuffler.shuffle_instances(&mut instances, &mut simulation_stream(seed, stream))?;
            for instance in &instances {
                state.absorb_all(instance)?;
            }
        }
        return Ok(v.estimate(&states)?);
    }
    let mut instance = vec![0u64; n * m];
    for (j, state) in states.iter_mut().enumerate() {
        for (i, dst) in instance.chunks_mut(m).enumerate() {
            dst.copy_from_slice(&all[i * d * m + j * m..][..m]);
        }
        // Shuffle streams count down from u64::MAX (client streams count up from rep << 32).
        let stream = u64::MAX - ((u64::from(rep) << 21) | j as u64);
        UniformShuffler.shuffle(&mut instance, &mut simulation_stream(seed, stream));
        state.absorb_all(&instance)?;
    }
    Ok(v.estimate(&states)?)
}

/// Runs the repetitions and assembles the report.
#[allow(clippy::too_many_arguments)]
fn run_reps<F>(
    v: &IkosVector,
    n: u64,
    truth: &[f64],
    predicted_this_data: f64,
    prov: Provenance,
    run: &SimIkosRunArgs,
    mse_meaning: &'static str,
    shares: F,
) -> Result<IkosVectorSimulation>
where
    F: Fn(usize, &mut blanket::rng::SimulationRng) -> Result<Vec<Vec<u64>>> + Sync,
{
    let start = Instant::now();
    let pb = progress(u64::from(run.reps), "ikos vector", run.json);
    let mut sq = Vec::with_capacity(run.reps as usize);
    let mut first = None;
    for rep in 0..run.reps {
        let est = repetition(v, n as usize, run.seed, rep, &shares)?;
        let err: Vec<f64> = est.iter().zip(truth).map(|(e, t)| e - t).collect();
        sq.push(err.iter().map(|e| e * e).sum::<f64>());
        first.get_or_insert_with(|| err.iter().fold(0f64, |a, e| a.max(e.abs())));
        pb.inc(1);
    }
    pb.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    let (mse, ci) = mean_ci(&sq);
    let cal = IkosVectorCalibration::of(&v.report());
    Ok(IkosVectorSimulation {
        protocol: cal.protocol,
        n,
        d: v.dim(),
        reps: run.reps,
        seed: run.seed,
        mse,
        mse_ci95: ci,
        predicted_mse: cal.predicted_mse,
        predicted_mse_this_data: predicted_this_data,
        mse_ratio: mse / predicted_this_data,
        mse_meaning,
        seconds,
        shuffled: true,
        shuffler: if v.is_alternating() {
            "alternating"
        } else {
            "uniform"
        },
        first_max_abs_error: first.unwrap_or(f64::NAN),
        data: prov,
        calibration: cal,
    })
}

impl IkosVectorSimulation {
    fn print(&self, json: bool) -> Result<()> {
        if json {
            return print_json(self);
        }
        self.calibration.print(false)?;
        crate::println_wrapped!();
        let rows = vec![
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
            (
                "predicted MSE (this data)",
                num(self.predicted_mse_this_data),
            ),
            ("observed / predicted", format!("{:.3}", self.mse_ratio)),
            ("predicted MSE (any data)", num(self.predicted_mse)),
            (
                "max |error| (first repetition)",
                num(self.first_max_abs_error),
            ),
            (
                "shuffler",
                if self.shuffler == "alternating" {
                    "alternating A^2_pi (all d m instances sharing pi; m certified by m_required_alternating)".into()
                } else {
                    "uniform (one shuffle per coordinate of its n m shares)".into()
                },
            ),
            ("seconds", format!("{:.3}", self.seconds)),
        ];
        crate::println_wrapped!("{}", kv_table("Simulation", &rows));
        crate::println_wrapped!("MSE: {}", self.mse_meaning);
        Ok(())
    }
}

/// Runs `simulate ikos-histogram`.
pub fn simulate_histogram(a: &SimIkosHistogramArgs) -> Result<()> {
    let eps = check_eps(a.eps)?;
    let sigma = a.sigma.sigma(eps)?;
    let dim = u32::try_from(a.domain)
        .ok()
        .filter(|d| (2..=MAX_DIM as u32).contains(d));
    let Some(dim) = dim else {
        usage_bail!(
            "--domain must be an integer from 2 to {MAX_DIM}, got {}",
            a.domain
        );
    };
    let n_arg = a.n.map(|n| n as usize);
    let source = a
        .data
        .as_ref()
        .map_or_else(|| "(embedded)".to_string(), |p| p.display().to_string());
    let (users, prov) = data_usage(
        &source,
        crate::data::categories(
            a.data.as_deref(),
            dim,
            n_arg,
            a.run.seed,
            crate::data::Header::Auto,
        ),
    )?;
    let n = users.len() as u64;
    let v = build(
        VectorInput::Histogram,
        n,
        u64::from(dim),
        "--domain",
        eps,
        sigma,
        &a.run.present,
    )?;
    let v = with_shuffler(v, &a.run, n)?;
    check_memory(n, &v, "--domain")?;
    let mut truth = vec![0f64; dim as usize];
    for (&b, &c) in users.rows.iter().zip(&users.multiplicities()) {
        truth[b as usize] += c as f64;
    }
    let predicted = v.report().predicted_mse;
    let report = run_reps(
        &v,
        n,
        &truth,
        predicted,
        prov,
        &a.run,
        "squared error of the estimated counts, summed over the d categories (divide by n^2 for frequencies)",
        |i, rng| {
            let b = users.rows[users.pick.row(i as u64)] as usize;
            Ok(v.randomize_bucket_simulated(b, rng)?)
        },
    )?;
    report.print(a.run.json)
}

/// Runs `simulate ikos-vector`.
pub fn simulate_vector(a: &SimIkosVectorArgs) -> Result<()> {
    let eps = check_eps(a.eps)?;
    let sigma = a.sigma.sigma(eps)?;
    if !(1..=MAX_DIM as u64).contains(&a.d) {
        usage_bail!("--d must be an integer from 1 to {MAX_DIM}, got {}", a.d);
    }
    let n_arg = a.n.map(|n| n as usize);
    if let Some(n) = a.n {
        // Before the data and the calibration (seconds at n = 1e12): n d m >= n d shares.
        let limit = blanket::simulate::MAX_SHUFFLED_MESSAGES;
        if (n as u64).saturating_mul(a.d) > limit {
            usage_bail!("--n {n} with --d {}: the simulation holds all n d m shares (m >= 1) in memory, at most {limit}; lower --n or --d (calibrate has no such limit)", a.d);
        }
    }
    let (rows, pick, prov) = data_usage(
        &a.data,
        super::simulate::vector_rows(&a.data, a.d, n_arg, a.run.seed, crate::data::Header::Auto),
    )?;
    let n = pick.users();
    let v = build(
        VectorInput::UnitBox,
        n,
        a.d,
        "--d",
        eps,
        sigma,
        &a.run.present,
    )?;
    let v = with_shuffler(v, &a.run, n)?;
    check_memory(n, &v, "--d")?;
    let d = v.dim();
    let p = f64::from(v.coordinate().precision());
    let counts = crate::data::multiplicities(&pick, rows.len());
    let mut truth = vec![0f64; d];
    let mut rounding = 0f64;
    for (r, &c) in rows.rows().zip(&counts) {
        for (t, x) in truth.iter_mut().zip(r) {
            let x = x.get();
            let f = (p * x).fract();
            *t += c as f64 * x;
            rounding += c as f64 * f * (1.0 - f);
        }
    }
    let noise = d as f64 * v.report().coordinate.noise_variance;
    let predicted = (rounding + noise) / (p * p);
    let report = run_reps(
        &v,
        n,
        &truth,
        predicted,
        prov,
        &a.run,
        "squared error of the estimated coordinate sums, summed over the d coordinates (divide by n^2 for the mean vector)",
        |i, rng| {
            let x: Vec<f64> = rows.row(pick.row(i as u64)).iter().map(|x| x.get()).collect();
            Ok(v.randomize_vector_simulated(&x, rng)?)
        },
    )?;
    report.print(a.run.json)
}
