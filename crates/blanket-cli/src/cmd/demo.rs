//! `blanket demo`: the main job on embedded defaults. One million simulated users hold
//! readings of a real ECG signal; they release a histogram of the readings and their mean
//! through the shuffle model, and the demo shows what the analyzer learns against the truth.

use super::calibrate;
use super::simulate::{simulate_histogram, simulate_scalar_sum, RunArgs, SimulationReport};
use crate::accountant::{resolve, AccountantChoice};
use crate::data::resize;
use crate::output::{kv_table, num, print_json, table};
use anyhow::Result;
use blanket::calibrate::Target;
use blanket::params::{Delta, DomainSize, Epsilon, NumUsers};
use clap::Args;
use serde::Serialize;

/// Arguments of `blanket demo`.
#[derive(Args)]
pub struct DemoArgs {
    /// Number of simulated users.
    #[arg(long, default_value_t = 1e6)]
    pub n: f64,
    /// Target epsilon.
    #[arg(long, default_value_t = 1.0)]
    pub eps: f64,
    /// Target delta.
    #[arg(long, default_value_t = 1e-8)]
    pub delta: f64,
    /// Histogram bins over the ECG range.
    #[arg(long, default_value_t = 16)]
    pub bins: u64,
    /// Repetitions (to compare observed with predicted error).
    #[arg(long, default_value_t = 20)]
    pub reps: u32,
    /// Simulation seed.
    #[arg(long, default_value_t = 2019)]
    pub seed: u64,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct DemoReport {
    histogram: SimulationReport,
    scalar_sum: SimulationReport,
}

/// Runs the demo.
pub fn run(a: &DemoArgs) -> Result<()> {
    let n = NumUsers::from_f64(a.n)?;
    let target = Target {
        eps: Epsilon::new(a.eps)?,
        delta: Delta::new(a.delta)?,
        n,
    };
    let m = DomainSize::new(a.bins)?;
    let run = RunArgs {
        reps: a.reps.max(2),
        seed: a.seed,
        // The in-memory ideal shuffler holds every message; above its limit the demo skips
        // it (the analyzer is order-free: the estimates are bit-identical; `shuffled` says so).
        no_shuffle: n.get() > blanket::simulate::MAX_SHUFFLED_MESSAGES,
        json: a.json,
    };
    let mv = blanket_data::ecg::signal_mv();
    let (lo, hi) = mv
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
    let source = "embedded ECG: MIT-BIH record 208, lead MLII, 108000 readings".to_string();
    let (cats, prov_h) = resize(
        blanket_data::ecg::signal_categories(m.get()),
        n.get() as usize,
        a.seed,
        source.clone(),
    );
    let (vals, prov_s) = resize(
        blanket_data::ecg::signal_unit(),
        n.get() as usize,
        a.seed,
        source,
    );

    let (h, cal_h) = calibrate::histogram(m, &target, resolve(AccountantChoice::Best).as_ref())?;
    let (hist, _) = simulate_histogram(&h, &cats, cal_h, prov_h, &run)?;
    let (p, cal_s) = calibrate::scalar_sum(
        None,
        false,
        &target,
        resolve(AccountantChoice::Best).as_ref(),
    )?;
    let (sum, _) = simulate_scalar_sum(&p, &vals, cal_s, prov_s, &run)?;

    if a.json {
        return print_json(&DemoReport {
            histogram: hist,
            scalar_sum: sum,
        });
    }

    println!(
        "blanket demo: {} users each hold one ECG reading (MIT-BIH record 208, {} to {} mV).\n\
         Each user randomizes locally (privacy-blanket GRR, a ChaCha20 CSPRNG), an ideal\n\
         shuffler permutes the reports, and the analyzer sees only the anonymous multiset.\n\
         Target: (eps, delta) = ({}, {}); {} repetitions, seed {}.\n",
        n, lo, hi, a.eps, a.delta, run.reps, a.seed
    );
    if run.no_shuffle {
        println!(
            "(n is above the in-memory shuffler's {} messages: the permutation was skipped; the analyzer is order-free, so the estimates are identical)\n",
            blanket::simulate::MAX_SHUFFLED_MESSAGES
        );
    }

    // Histogram, first repetition.
    let width = (hi - lo) / m.get() as f64;
    let (truth, est) = hist.first_repetition.counts().unwrap_or_default();
    let rows: Vec<Vec<String>> = truth
        .iter()
        .zip(est)
        .enumerate()
        .map(|(y, (&t, &e))| {
            let t = t as f64;
            vec![
                format!(
                    "{:+.2} .. {:+.2}",
                    lo + y as f64 * width,
                    lo + (y + 1) as f64 * width
                ),
                format!("{t:.0}"),
                format!("{e:.0}"),
                {
                    let d = (e - t).round();
                    if d == 0.0 {
                        "0".to_string()
                    } else {
                        format!("{d:+.0}")
                    }
                },
            ]
        })
        .collect();
    println!("Histogram of readings ({} bins), one run:", m);
    println!(
        "{}",
        table(&["mV", "true count", "estimate", "error"], &rows)
    );

    let truth_mean = vals
        .rows
        .iter()
        .zip(vals.multiplicities())
        .map(|(&x, c)| c as f64 * x)
        .sum::<f64>()
        / vals.len() as f64;
    let est_mean = sum.first_repetition.number("mean").unwrap_or(f64::NAN);
    let to_mv = |u: f64| lo + u * (hi - lo);
    println!(
        "\nMean reading, one run: true {:.5} mV, estimated {:.5} mV (error {:+.5} mV)\n",
        to_mv(truth_mean),
        to_mv(est_mean),
        (est_mean - truth_mean) * (hi - lo)
    );

    let c = |r: &SimulationReport| {
        r.calibration
            .certified_epsilon
            .map_or("NOT CERTIFIED".to_string(), |e| {
                format!("({}, {})", num(e), r.calibration.certified_delta)
            })
    };
    let rows = vec![
        vec![
            "histogram".to_string(),
            c(&hist),
            hist.calibration.method.clone(),
            num(hist.gamma),
            num(hist.calibration.eps0),
            "-".to_string(),
            num(hist.predicted_mse.sqrt()),
            num(hist.mse.sqrt()),
        ],
        vec![
            "scalar sum".to_string(),
            c(&sum),
            sum.calibration.method.clone(),
            num(sum.gamma),
            num(sum.calibration.eps0),
            sum.calibration.k.map_or("-".into(), |k| k.to_string()),
            num(sum.predicted_mse.sqrt()),
            num(sum.mse.sqrt()),
        ],
    ];
    println!(
        "{}",
        table(
            &[
                "protocol",
                "certified (eps, delta)",
                "method",
                "gamma",
                "eps0",
                "k",
                "predicted RMSE",
                "observed RMSE",
            ],
            &rows
        )
    );
    println!(
        "RMSE: histogram, of a count (averaged over bins); scalar sum, of the sum of the n values\n\
         in [0, 1] units. Observed over {} repetitions; predicted from the exact variance.",
        run.reps
    );
    println!(
        "{}",
        kv_table(
            "Time",
            &[
                (
                    "histogram, all repetitions (s)",
                    format!("{:.2}", hist.seconds)
                ),
                (
                    "scalar sum, all repetitions (s)",
                    format!("{:.2}", sum.seconds)
                ),
            ]
        )
    );
    Ok(())
}
