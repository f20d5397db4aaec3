//! `blanket experiment vector-sum`: the Section 5 sweeps of Scott, Cormode, Maple (2021)
//! reproduced on the embedded ECG, one parameter at a time around the paper's defaults
//! (d = 100, k = 3, t = 1, n = 50000, eps = 0.95, delta = 0.5, 10 repetitions). Writes a CSV
//! and a PNG per sweep and a markdown summary of the paper's claims.

use super::common::progress;
use super::simulate::vector_data;
use crate::output::{num, print_json};
use anyhow::{Context, Result};
use blanket::accounting::BlanketTheorem31;
use blanket::params::{Delta, NumUsers, Precision};
use blanket::protocol::vector_sum::{paper_gamma, paper_mse_bound};
use blanket::protocol::{UnitVectors, VectorSum};
use clap::{Args, Subcommand, ValueEnum};
use plotters::prelude::*;
use serde::Serialize;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The experiments.
#[derive(Subcommand)]
pub enum ExperimentCommand {
    /// Vector summation (Scott et al. 2021, Section 5): sweep one parameter around the
    /// paper's defaults and compare the observed error with the exact prediction and the
    /// paper's bound.
    VectorSum(ExpVectorSumArgs),
}

/// Which parameter a sweep varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Sweep {
    /// Coordinates per user t = 1..10.
    T,
    /// Precision k = 1..10.
    K,
    /// Dimension d = 60, 70, ..., 150.
    D,
    /// eps = 0.5, 0.55, ..., 0.95 and 1.0, 1.5, ..., 5.5.
    Eps,
    /// Users n = 10000 .. 70000 (really n vectors each time).
    N,
    /// All five sweeps.
    All,
}

impl Sweep {
    fn name(self) -> &'static str {
        match self {
            Sweep::T => "t",
            Sweep::K => "k",
            Sweep::D => "d",
            Sweep::Eps => "eps",
            Sweep::N => "n",
            Sweep::All => "all",
        }
    }

    /// The paper's values (the authors' code), or a subset for `--quick`.
    fn values(self, quick: bool) -> Vec<f64> {
        let full: Vec<f64> = match self {
            Sweep::T | Sweep::K => (1..=10).map(f64::from).collect(),
            Sweep::D => (6..=15).map(|i| f64::from(i) * 10.0).collect(),
            Sweep::Eps => (0..10)
                .map(|i| 0.5 + 0.05 * f64::from(i))
                .chain((0..10).map(|i| 1.0 + 0.5 * f64::from(i)))
                .collect(),
            Sweep::N => [
                10_000.0, 11_000.0, 14_000.0, 17_000.0, 20_000.0, 30_000.0, 40_000.0, 50_000.0,
                60_000.0, 70_000.0,
            ]
            .to_vec(),
            Sweep::All => vec![],
        };
        if !quick {
            return full;
        }
        match self {
            Sweep::T | Sweep::K => vec![1.0, 3.0, 5.0],
            Sweep::D => vec![60.0, 100.0, 150.0],
            Sweep::Eps => vec![0.5, 0.95, 1.0, 3.0],
            Sweep::N => vec![20_000.0, 50_000.0, 70_000.0],
            Sweep::All => vec![],
        }
    }

    /// Whether the paper plots this sweep on log axes.
    fn log_x(self) -> bool {
        matches!(self, Sweep::D | Sweep::Eps | Sweep::N)
    }
}

/// Arguments of `experiment vector-sum`.
#[derive(Args)]
pub struct ExpVectorSumArgs {
    /// The parameter to sweep (or `all`).
    #[arg(long, value_enum)]
    pub sweep: Sweep,
    /// Output directory for the CSV, PNG and markdown files (created if missing).
    #[arg(long, default_value = "experiment-out")]
    pub out: PathBuf,
    /// Reduced size for CI: three or four sweep values and at most 2 repetitions.
    #[arg(long)]
    pub quick: bool,
    /// Repetitions per point.
    #[arg(long, default_value_t = 10, value_parser = crate::numeric::parse_reps, allow_hyphen_values = true)]
    pub reps: u32,
    /// Seed (reproducible).
    #[arg(long, default_value_t = 1, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub seed: u64,
    /// Use blanket's safe domain size k + 1 in the paper's gamma formula instead of the
    /// paper's k (points where gamma >= 1 are then skipped and marked).
    #[arg(long)]
    pub safe_domain: bool,
    /// The vectors: `ecg-windows` (default), `ecg-beats`, or a CSV file (see `simulate
    /// vector-sum --help`).
    #[arg(long, default_value = "ecg-windows")]
    pub data: String,
    /// Print the rows as JSON on stdout as well.
    #[arg(long)]
    pub json: bool,
}

/// The paper's defaults (the authors' code).
#[derive(Debug, Clone, Copy, Serialize)]
struct Point {
    t: u32,
    k: u32,
    d: u32,
    n: u64,
    eps: f64,
    delta: f64,
}

const DEFAULTS: Point = Point {
    t: 1,
    k: 3,
    d: 100,
    n: 50_000,
    eps: 0.95,
    delta: 0.5,
};

/// One point of a sweep.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    sweep: &'static str,
    x: f64,
    t: u32,
    k: u32,
    d: u32,
    n: u64,
    eps: f64,
    delta: f64,
    gamma: f64,
    /// Epsilon blanket certifies for these parameters (Theorem 3.1 through the reductions of
    /// docs/vector-sum.md), NaN if none.
    certified_eps: f64,
    mse_mean: f64,
    mse_sd: f64,
    mse_min: f64,
    mse_max: f64,
    predicted_mse: f64,
    paper_bound: f64,
    reps: u32,
    seconds: f64,
    note: String,
}

impl Point {
    fn with(self, sweep: Sweep, x: f64) -> Self {
        let mut p = self;
        match sweep {
            Sweep::T => p.t = x as u32,
            Sweep::K => p.k = x as u32,
            Sweep::D => p.d = x as u32,
            Sweep::Eps => p.eps = x,
            Sweep::N => p.n = x as u64,
            Sweep::All => {}
        }
        p
    }
}

type DataCache = HashMap<(u32, u64), (UnitVectors, String)>;

fn run_point(
    sweep: Sweep,
    x: f64,
    a: &ExpVectorSumArgs,
    reps: u32,
    cache: &mut DataCache,
    pb: &indicatif::ProgressBar,
) -> Result<Row> {
    let p = DEFAULTS.with(sweep, x);
    let (vectors, _) = match cache.entry((p.d, p.n)) {
        std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::hash_map::Entry::Vacant(e) => {
            let (v, prov) = vector_data(
                &a.data,
                u64::from(p.d),
                Some(p.n as usize),
                a.seed,
                crate::data::Header::Auto,
            )?;
            e.insert((v, format!("{} ({})", prov.source, prov.selection)))
        }
    };
    let vectors = &*vectors;
    let levels = if a.safe_domain { p.k + 1 } else { p.k };
    let mut row = Row {
        sweep: sweep.name(),
        x,
        t: p.t,
        k: p.k,
        d: p.d,
        n: p.n,
        eps: p.eps,
        delta: p.delta,
        gamma: f64::NAN,
        certified_eps: f64::NAN,
        mse_mean: f64::NAN,
        mse_sd: f64::NAN,
        mse_min: f64::NAN,
        mse_max: f64::NAN,
        predicted_mse: f64::NAN,
        paper_bound: f64::NAN,
        reps,
        seconds: 0.0,
        note: String::new(),
    };
    let gamma = match paper_gamma(p.n, p.d, levels, p.t, p.eps, p.delta) {
        Ok(g) => g,
        Err(e) => {
            row.note = e.to_string();
            pb.inc(u64::from(reps));
            return Ok(row);
        }
    };
    let proto = VectorSum::new(
        u64::from(p.d),
        u64::from(p.t),
        Precision::new(u64::from(p.k))?,
        gamma,
    )?;
    row.gamma = gamma.get();
    match proto.certify(NumUsers::new(p.n)?, Delta::new(p.delta)?, &BlanketTheorem31) {
        Some(g) => row.certified_eps = g.epsilon,
        // certified_eps stays NaN: say why in the row itself.
        None => {
            row.note = "certified_eps is NaN: blanket certifies no eps for this gamma (Theorem 3.1 through the reductions of docs/vector-sum.md does not apply)".to_string()
        }
    }
    let truth = vectors.mean();
    // One user per vector; the batched simulation has the per-client law (docs/performance.md).
    let users = vec![1u64; vectors.len()];
    let start = Instant::now();
    let mut errs = Vec::with_capacity(reps as usize);
    for rep in 0..reps {
        let state = proto.simulate_batched(vectors, &users, a.seed, rep, true)?;
        let est = proto.estimate(&state)?;
        errs.push(
            est.mean
                .iter()
                .zip(&truth)
                .map(|(e, t)| (e - t).powi(2))
                .sum::<f64>(),
        );
        pb.inc(1);
    }
    row.seconds = start.elapsed().as_secs_f64();
    let m = errs.iter().sum::<f64>() / errs.len().max(1) as f64;
    row.mse_mean = m;
    row.mse_sd =
        (errs.iter().map(|e| (e - m).powi(2)).sum::<f64>() / (errs.len().max(2) - 1) as f64).sqrt();
    row.mse_min = errs.iter().copied().fold(f64::INFINITY, f64::min);
    row.mse_max = errs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    row.predicted_mse = proto.exact_mean_mse(vectors);
    row.paper_bound = paper_mse_bound(p.n, p.d, p.t, p.eps, p.delta, gamma.get());
    Ok(row)
}

/// Runs `blanket experiment`.
pub fn run(cmd: &ExperimentCommand) -> Result<()> {
    match cmd {
        ExperimentCommand::VectorSum(a) => vector_sum(a),
    }
}

fn vector_sum(a: &ExpVectorSumArgs) -> Result<()> {
    super::common::writable_dir(&a.out)?;
    let sweeps: Vec<Sweep> = match a.sweep {
        Sweep::All => vec![Sweep::T, Sweep::K, Sweep::D, Sweep::Eps, Sweep::N],
        s => vec![s],
    };
    let reps = if a.quick { a.reps.min(2) } else { a.reps };
    let total: u64 = sweeps
        .iter()
        .map(|s| s.values(a.quick).len() as u64 * u64::from(reps))
        .sum();
    let pb = progress(total, "vector-sum experiment", a.json);
    let font = crate::plot::register_plot_font();
    let start = Instant::now();
    let mut cache = DataCache::new();
    let mut all_rows = Vec::new();
    for &sweep in &sweeps {
        pb.set_message(format!("vector-sum sweep {}", sweep.name()));
        let mut rows = Vec::new();
        for x in sweep.values(a.quick) {
            rows.push(run_point(sweep, x, a, reps, &mut cache, &pb)?);
        }
        let stem = a.out.join(format!("vector-sum-{}", sweep.name()));
        write_csv(&stem.with_extension("csv"), &rows)?;
        plot(&stem.with_extension("png"), sweep, &rows, font)?;
        let data_desc = match cache.get(&(DEFAULTS.d, DEFAULTS.n)) {
            Some((_, d)) => format!("at the defaults, {d}"),
            None => String::new(),
        } + match sweep {
            Sweep::D => "; for each d, the d-sample windows (or the first d samples of each beat)",
            Sweep::N => "; for each n, exactly n vectors (the first n, or draws with replacement when n exceeds the distinct vectors)",
            _ => "",
        };
        let md = claims(sweep, &rows, a, reps, &data_desc);
        std::fs::write(stem.with_extension("md"), md)
            .with_context(|| format!("cannot write {}", stem.display()))?;
        all_rows.extend(rows);
    }
    pb.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    write_summary(&a.out, seconds)?;
    if a.json {
        return print_json(&serde_json::json!({ "seconds": seconds, "rows": all_rows }));
    }
    crate::outln!(
        "vector-sum experiment: {} sweep(s), {} points, {} repetitions each, {:.2} s; results in {}",
        sweeps.len(),
        all_rows.len(),
        reps,
        seconds,
        a.out.display()
    );
    if !font {
        crate::outln!(
            "note: no TrueType font found (set BLANKET_FONT to a .ttf file): plots have no text"
        );
    }
    crate::outln!("see {}", a.out.join("summary.md").display());
    Ok(())
}

fn write_csv(path: &Path, rows: &[Row]) -> Result<()> {
    let mut w =
        csv::Writer::from_path(path).with_context(|| format!("cannot write {}", path.display()))?;
    for r in rows {
        w.serialize(r)?;
    }
    w.flush()?;
    Ok(())
}

/// Least-squares slope of log(y) on log(x) over the rows with finite positive values.
fn log_slope(points: &[(f64, f64)]) -> Option<f64> {
    let pts: Vec<(f64, f64)> = points
        .iter()
        .filter(|(x, y)| *x > 0.0 && *y > 0.0 && y.is_finite())
        .map(|(x, y)| (x.ln(), y.ln()))
        .collect();
    if pts.len() < 2 {
        return None;
    }
    let n = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

fn argmin(rows: &[Row], f: impl Fn(&Row) -> f64) -> Option<&Row> {
    rows.iter()
        .filter(|r| f(r).is_finite())
        .min_by(|a, b| f(a).total_cmp(&f(b)))
}

/// Tolerance on a fitted exponent for "consistent with the paper's exponent".
const EXPONENT_TOLERANCE: f64 = 0.4;

fn slope_verdict(name: &str, claimed: f64, rows: &[Row]) -> String {
    let obs = log_slope(&rows.iter().map(|r| (r.x, r.mse_mean)).collect::<Vec<_>>());
    let pred = log_slope(
        &rows
            .iter()
            .map(|r| (r.x, r.predicted_mse))
            .collect::<Vec<_>>(),
    );
    match obs {
        Some(s) => format!(
            "- {name}: fitted exponent of the observed error **{s:.2}** (exact prediction {}), paper's {claimed:.2}: {} (tolerance {EXPONENT_TOLERANCE})\n",
            pred.map_or("n/a".into(), |p| format!("{p:.2}")),
            if (s - claimed).abs() <= EXPONENT_TOLERANCE {
                "**holds**"
            } else {
                "**does not hold**"
            }
        ),
        None => format!("- {name}: not enough points with a guarantee to fit an exponent\n"),
    }
}

fn claims(sweep: Sweep, rows: &[Row], a: &ExpVectorSumArgs, reps: u32, data: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## Sweep over {}\n", sweep.name());
    let _ = writeln!(
        s,
        "Defaults d = 100, k = 3, t = 1, n = 50000, eps = 0.95, delta = 0.5; {reps} repetitions per point (seed {}){}. Data: {data}. gamma from the paper's Theorem 4.1 / Section 4.5 with m = {} per coordinate{}.\n",
        a.seed,
        if a.quick { ", **quick mode**" } else { "" },
        if a.safe_domain { "k + 1 (blanket's safe domain)" } else { "k (the paper's convention)" },
        if a.safe_domain { "" } else { ": for reproduction only; the `certified_eps` column says what blanket certifies for these gammas" },
    );
    let skipped: Vec<String> = rows
        .iter()
        .filter(|r| !r.gamma.is_finite())
        .map(|r| format!("{} = {}", sweep.name(), r.x))
        .collect();
    if !skipped.is_empty() {
        let _ = writeln!(s, "Skipped (gamma >= 1): {}.\n", skipped.join(", "));
    }
    let uncertified = rows
        .iter()
        .filter(|r| r.gamma.is_finite() && r.certified_eps.is_nan())
        .count();
    if uncertified > 0 {
        let _ = writeln!(
            s,
            "{uncertified} point(s) have `certified_eps` = NaN in the CSV: blanket certifies no epsilon for the paper's gamma there (the conditions of Theorem 3.1 through the reductions of docs/vector-sum.md fail, for instance eps > 1 or too few users per coordinate); the `note` column gives the reason. Their errors are measured all the same.\n"
        );
    }
    if sweep == Sweep::Eps {
        let _ = writeln!(
            s,
            "The jump at eps = 1 (dashed line in the plot) is the paper's: its gamma formula changes regime there (Theorem 4.1 for eps < 1, Section 4.5 for 1 <= eps < 6), so the curves are drawn per regime.\n"
        );
    }
    match sweep {
        Sweep::T => {
            if let Some(b) = argmin(rows, |r| r.mse_mean) {
                let _ = writeln!(
                    s,
                    "- error lowest at t = 1: observed minimum at t = {} (error {}): {}",
                    b.t,
                    num(b.mse_mean),
                    if b.t == 1 {
                        "**holds**"
                    } else {
                        "**does not hold**"
                    }
                );
            }
            if let Some(b) = argmin(rows, |r| r.predicted_mse) {
                let _ = writeln!(s, "- exact prediction minimum at t = {}", b.t);
            }
        }
        Sweep::K => {
            if let Some(b) = argmin(rows, |r| r.mse_mean) {
                let _ = writeln!(
                    s,
                    "- best k near 3: observed minimum at k = {} (error {}): {}",
                    b.k,
                    num(b.mse_mean),
                    if b.k.abs_diff(3) <= 1 {
                        "**holds**"
                    } else {
                        "**does not hold**"
                    }
                );
            }
            if let Some(b) = argmin(rows, |r| r.predicted_mse) {
                let _ = writeln!(s, "- exact prediction minimum at k = {}", b.k);
            }
        }
        Sweep::D => s.push_str(&slope_verdict("d^(8/3)", 8.0 / 3.0, rows)),
        Sweep::Eps => {
            let lo: Vec<Row> = rows.iter().filter(|r| r.eps < 1.0).cloned().collect();
            let hi: Vec<Row> = rows.iter().filter(|r| r.eps >= 1.0).cloned().collect();
            s.push_str(&slope_verdict("eps^(-4/3), eps < 1", -4.0 / 3.0, &lo));
            s.push_str(&slope_verdict("eps^(-4/3), 1 <= eps < 6", -4.0 / 3.0, &hi));
        }
        Sweep::N => {
            let obs = log_slope(&rows.iter().map(|r| (r.x, r.mse_mean)).collect::<Vec<_>>());
            let pred = log_slope(
                &rows
                    .iter()
                    .map(|r| (r.x, r.predicted_mse))
                    .collect::<Vec<_>>(),
            );
            if let Some(o) = obs {
                let _ = writeln!(
                    s,
                    "- error falls as n grows: fitted exponent **{o:.2}** (exact prediction {}; the paper fits -7/6 = -1.17 with n fixed at 70000 in its code, theory -5/3 = -1.67): {}",
                    pred.map_or("n/a".into(), |p| format!("{p:.2}")),
                    if o < 0.0 { "**holds** (falls)" } else { "**does not hold**" }
                );
                let _ = writeln!(
                    s,
                    "- n^(-7/6): {}; n^(-5/3): {} (tolerance {EXPONENT_TOLERANCE})",
                    if (o + 7.0 / 6.0).abs() <= EXPONENT_TOLERANCE {
                        "consistent"
                    } else {
                        "not consistent"
                    },
                    if (o + 5.0 / 3.0).abs() <= EXPONENT_TOLERANCE {
                        "consistent"
                    } else {
                        "not consistent"
                    },
                );
            }
        }
        Sweep::All => {}
    }
    if let Some(r) = rows.iter().find(|r| {
        r.t == DEFAULTS.t
            && r.k == DEFAULTS.k
            && r.d == DEFAULTS.d
            && r.n == DEFAULTS.n
            && (r.eps - DEFAULTS.eps).abs() < 1e-12
    }) {
        let _ = writeln!(
            s,
            "- total error at the defaults below 0.3: observed {} ± {} (sd), on the [0, 1] scale ({} on the authors' [-1, 1] scale): {}",
            num(r.mse_mean),
            num(r.mse_sd),
            num(4.0 * r.mse_mean),
            if r.mse_mean < 0.3 { "**holds**" } else { "**does not hold**" }
        );
    }
    let ratio: Vec<f64> = rows
        .iter()
        .filter(|r| r.predicted_mse.is_finite() && r.predicted_mse > 0.0)
        .map(|r| r.mse_mean / r.predicted_mse)
        .collect();
    if !ratio.is_empty() {
        let lo = ratio.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ratio.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let _ = writeln!(
            s,
            "- observed / exact prediction: from {lo:.2} to {hi:.2} over the sweep"
        );
    }
    let below: usize = rows
        .iter()
        .filter(|r| r.paper_bound.is_finite() && r.mse_mean > r.paper_bound)
        .count();
    let _ = writeln!(
        s,
        "- the paper's bound is below the observed error at {below} of {} points (it is asymptotic, with the constants of the proof, and normalizes by (d/t)^2)\n",
        rows.iter().filter(|r| r.paper_bound.is_finite()).count()
    );
    let _ = writeln!(
        s,
        "![sweep over {}](vector-sum-{}.png)\n",
        sweep.name(),
        sweep.name()
    );
    s
}

fn write_summary(out: &Path, seconds: f64) -> Result<()> {
    let mut s = String::from(
        "# Vector summation (Scott, Cormode, Maple 2021): Section 5 reproduced\n\n\
         The error is the squared error of the estimated mean vector summed over the d \
         coordinates, on the [0, 1] scale (the authors' code works on [-1, 1], which multiplies \
         it by 4). Observed: mean over repetitions (error bars: one standard deviation). \
         Exact prediction: spec 02's data-dependent formula. Paper's bound: Theorem 4.6 \
         (t >= 2) or Section 4.5 (t = 1, with the precedence slip of the authors' code \
         corrected).\n\n",
    );
    for sweep in [Sweep::T, Sweep::K, Sweep::D, Sweep::Eps, Sweep::N] {
        let p = out.join(format!("vector-sum-{}.md", sweep.name()));
        if let Ok(part) = std::fs::read_to_string(&p) {
            s.push_str(&part);
        }
    }
    let _ = writeln!(s, "Last run took {seconds:.2} s.");
    let path = out.join("summary.md");
    std::fs::write(&path, s).with_context(|| format!("cannot write {}", path.display()))
}

fn axis_label(sweep: Sweep) -> &'static str {
    match sweep {
        Sweep::T => "t (coordinates per user)",
        Sweep::K => "k (rounding levels)",
        Sweep::D => "d (dimension)",
        Sweep::Eps => "epsilon",
        Sweep::N => "n (users)",
        Sweep::All => "",
    }
}

/// Draws observed error (mean and +-1 sd), the exact prediction and the paper's bound.
fn plot(path: &Path, sweep: Sweep, rows: &[Row], font: bool) -> Result<()> {
    let ok: Vec<&Row> = rows.iter().filter(|r| r.mse_mean.is_finite()).collect();
    let root = BitMapBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err)?;
    if ok.is_empty() {
        root.present().map_err(plot_err)?;
        return Ok(());
    }
    let xs: Vec<f64> = ok.iter().map(|r| r.x).collect();
    let (xmin, xmax) = (
        xs.iter().copied().fold(f64::INFINITY, f64::min),
        xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    let ys: Vec<f64> = ok
        .iter()
        .flat_map(|r| {
            [
                (r.mse_mean - r.mse_sd).max(r.mse_min),
                r.mse_mean + r.mse_sd,
                r.predicted_mse,
                r.paper_bound,
            ]
        })
        .filter(|y| y.is_finite() && *y > 0.0)
        .collect();
    // From a labelled decade below the lowest point when the axis spans decades.
    let ymin = crate::plot::log_floor(
        ys.iter().copied().fold(f64::INFINITY, f64::min),
        ys.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    // The top 30% of the plot stays empty for the legend, so the legend covers no data.
    let ymax = crate::plot::log_headroom(
        ymin,
        ys.iter().copied().fold(f64::NEG_INFINITY, f64::max) * 1.2,
        0.3,
    );
    let yticks = crate::plot::log_ticks(ymin, ymax);
    // The eps sweep crosses the paper's two regimes (eps < 1 and 1 <= eps < 6), whose gamma
    // formulas differ: draw the lines per regime.
    let segments: Vec<Vec<&Row>> = if sweep == Sweep::Eps {
        vec![
            ok.iter().copied().filter(|r| r.eps < 1.0).collect(),
            ok.iter().copied().filter(|r| r.eps >= 1.0).collect(),
        ]
    } else {
        vec![ok.clone()]
    };
    let title = format!(
        "Vector sum: error vs {} (d = {}, k = {}, t = {}, n = {}, eps = {}, delta = {} unless varied)",
        sweep.name(),
        DEFAULTS.d,
        DEFAULTS.k,
        DEFAULTS.t,
        DEFAULTS.n,
        DEFAULTS.eps,
        DEFAULTS.delta
    );
    let mut builder = ChartBuilder::on(&root);
    builder
        .margin(15)
        .x_label_area_size(if font { 45 } else { 10 })
        .y_label_area_size(if font { 75 } else { 10 });
    if font {
        builder.caption(&title, ("sans-serif", 16));
    }
    macro_rules! draw {
        ($xr:expr) => {{
            let mut chart = builder
                .build_cartesian_2d(
                    $xr,
                    (ymin..ymax).log_scale().with_key_points(yticks.clone()),
                )
                .map_err(plot_err)?;
            let mut mesh = chart.configure_mesh();
            if font {
                mesh.x_desc(axis_label(sweep))
                    .y_desc("squared error of the mean vector")
                    .y_label_formatter(&|v| crate::plot::tick_label(*v))
                    .x_label_formatter(&|v| crate::plot::tick_label(*v))
                    .bold_line_style(BLACK.mix(0.15))
                    .light_line_style(BLACK.mix(0.0))
                    .label_style(("sans-serif", 14));
            } else {
                mesh.x_labels(0).y_labels(0);
            }
            mesh.draw().map_err(plot_err)?;
            let green = RGBColor(0, 130, 60);
            let obs = chart
                .draw_series(ok.iter().map(|r| {
                    let lo = (r.mse_mean - r.mse_sd).max(r.mse_min).max(ymin);
                    ErrorBar::new_vertical(
                        r.x,
                        lo,
                        r.mse_mean,
                        r.mse_mean + r.mse_sd,
                        green.filled(),
                        8,
                    )
                }))
                .map_err(plot_err)?;
            if font {
                obs.label("observed (mean ± 1 sd)")
                    .legend(move |(x, y)| Circle::new((x + 10, y), 4, green.filled()));
            }
            chart
                .draw_series(
                    ok.iter()
                        .map(|r| Circle::new((r.x, r.mse_mean), 4, green.filled())),
                )
                .map_err(plot_err)?;
            let red = RGBColor(200, 30, 30);
            for (i, seg) in segments.iter().enumerate() {
                let pred = chart
                    .draw_series(LineSeries::new(
                        seg.iter()
                            .filter(|r| r.predicted_mse > 0.0)
                            .map(|r| (r.x, r.predicted_mse)),
                        BLUE.stroke_width(2),
                    ))
                    .map_err(plot_err)?;
                if font && i == 0 {
                    pred.label("exact prediction").legend(|(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(2))
                    });
                }
                let bound = chart
                    .draw_series(DashedLineSeries::new(
                        seg.iter()
                            .filter(|r| r.paper_bound > 0.0 && r.paper_bound.is_finite())
                            .map(|r| (r.x, r.paper_bound)),
                        6,
                        4,
                        red.stroke_width(2),
                    ))
                    .map_err(plot_err)?;
                if font && i == 0 {
                    bound.label("paper's bound").legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], red.stroke_width(2))
                    });
                }
            }
            if sweep == Sweep::Eps {
                // The jump at eps = 1: the paper's gamma formula changes regime there
                // (Theorem 4.1 for eps < 1, Section 4.5 for 1 <= eps < 6).
                let grey = BLACK.mix(0.45);
                chart
                    .draw_series(DashedLineSeries::new(
                        [(1.0, ymin), (1.0, ymax)],
                        4,
                        4,
                        grey.stroke_width(1),
                    ))
                    .map_err(plot_err)?;
                if font {
                    chart
                        .draw_series([Text::new(
                            "eps = 1: the paper's gamma formula changes regime",
                            (1.03, ymin * 1.15),
                            ("sans-serif", 13).into_font().color(&grey),
                        )])
                        .map_err(plot_err)?;
                }
            }
            if font {
                crate::plot::draw_legend(&mut chart, SeriesLabelPosition::UpperRight)
                    .map_err(plot_err)?;
            }
        }};
    }
    if sweep.log_x() {
        let (x0, x1) = (xmin / 1.08, xmax * 1.08);
        draw!((x0..x1)
            .log_scale()
            .with_key_points(crate::plot::log_ticks(x0, x1)));
    } else {
        draw!(xmin - 0.5..xmax + 0.5);
    }
    root.present().map_err(plot_err)?;
    Ok(())
}

fn plot_err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow::anyhow!("cannot draw the plot: {e:?}")
}
