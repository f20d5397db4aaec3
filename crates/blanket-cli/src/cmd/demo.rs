//! `blanket demo`: the main job on embedded defaults. One million simulated users hold
//! readings of a real ECG signal; they release a histogram of the readings and their mean
//! through the shuffle model, and the demo shows what the analyzer learns against the truth.

use super::calibrate;
use super::simulate::{simulate_histogram, simulate_scalar_sum, RunArgs, SimulationReport};
use crate::accountant::{resolve, AccountantChoice};
use crate::data::resize;
use crate::output::{echo, kv_table, num, print_json, table, up};
use anyhow::Result;
use blanket::calibrate::Target;
use blanket::params::{Delta, DomainSize, Epsilon, NumUsers};
use clap::Args;
use serde::Serialize;

/// Arguments of `blanket demo`.
#[derive(Args)]
pub struct DemoArgs {
    /// Number of simulated users.
    #[arg(long, default_value_t = 1e6, value_parser = crate::numeric::parse_users, allow_hyphen_values = true)]
    pub n: f64,
    /// Target epsilon.
    #[arg(long, default_value_t = 1.0, allow_hyphen_values = true)]
    pub eps: f64,
    /// Target delta.
    #[arg(long, default_value_t = 1e-8, allow_hyphen_values = true)]
    pub delta: f64,
    /// Histogram bins (categories) over the public range -4 to +4 mV (formerly --bins).
    #[arg(long = "domain", alias = "bins", default_value_t = 16, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub bins: u64,
    /// Repetitions (to compare observed with predicted error).
    #[arg(long, default_value_t = 20, value_parser = crate::numeric::parse_reps, allow_hyphen_values = true)]
    pub reps: u32,
    /// Simulation seed.
    #[arg(long, default_value_t = 2019, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub seed: u64,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Run the service flow instead: both roles on loopback, a histogram task, one sealed
    /// report per simulated user (--n, at most 20000), a release compared with the truth.
    #[arg(long)]
    pub service: bool,
}

/// The public range of the readings, in mV, fixed before looking at the data (the ECG's
/// amplitudes lie well inside it; readings outside are clipped to it). Bins and the [0, 1]
/// scaling of the sum come from this range, never from the data's own minimum and maximum,
/// which would be a data-dependent choice outside the privacy analysis.
pub const RANGE_MV: (f64, f64) = (-4.0, 4.0);

#[derive(Serialize)]
struct DemoReport {
    histogram: SimulationReport,
    scalar_sum: SimulationReport,
    /// The public range of the readings in mV (bins and scaling; values clipped to it).
    range_mv: (f64, f64),
    /// The guarantee of the two releases together (they are computed on the same users).
    composition: Composition,
}

/// The guarantee of both releases on the same users.
#[derive(Serialize)]
struct Composition {
    /// Basic composition: the sum of the two certified epsilons, at the sum of the deltas.
    basic_epsilon: Option<f64>,
    basic_delta: f64,
    /// Optimal homogeneous composition (Kairouz, Oh, Viswanath) of two components at the
    /// larger certified epsilon, at the total delta `kov_delta`.
    kov_epsilon: Option<f64>,
    kov_delta: f64,
}

fn compose(e_h: Option<f64>, e_s: Option<f64>, delta: f64) -> Composition {
    let both = e_h.zip(e_s);
    let kov_delta = 3.0 * delta;
    Composition {
        basic_epsilon: both.map(|(a, b)| a + b),
        basic_delta: 2.0 * delta,
        kov_epsilon: both.and_then(|(a, b)| {
            blanket::accounting::composition::kov_epsilon(a.max(b), delta, 2, kov_delta).ok()
        }),
        kov_delta,
    }
}

/// Runs the demo.
pub fn run(a: &DemoArgs) -> Result<()> {
    if a.service {
        return super::service_demo::run(a);
    }
    let n = NumUsers::from_f64(a.n)?;
    // Before any O(n) work: --n above the simulation limit is refused at once.
    blanket::simulate::check_run(n.get(), 1, false)?;
    let target = Target {
        eps: Epsilon::new(a.eps)?,
        delta: Delta::new(a.delta)?,
        n,
    };
    super::common::warn_delta(target.delta.get(), n.get());
    let m = DomainSize::new(a.bins)?;
    let run = RunArgs {
        reps: a.reps,
        seed: a.seed,
        // The in-memory ideal shuffler holds every message; above its limit the demo skips
        // it (the analyzer is order-free: the estimates are bit-identical; `shuffled` says so).
        no_shuffle: n.get() > blanket::simulate::MAX_SHUFFLED_MESSAGES,
        json: a.json,
        header: false,
        no_header: false,
    };
    let mv = blanket_data::ecg::signal_mv();
    let (lo, hi) = RANGE_MV;
    let unit: Vec<f64> = mv
        .iter()
        .map(|&x| ((x - lo) / (hi - lo)).clamp(0.0, 1.0))
        .collect();
    let bins = m.get();
    let categories: Vec<u32> = unit
        .iter()
        .map(|&u| ((u * f64::from(bins)) as u32).min(bins - 1))
        .collect();
    let source = format!(
        "embedded ECG: MIT-BIH record 208, lead MLII, {} readings, clipped to the public range {lo} to {hi} mV",
        mv.len()
    );
    let (cats, prov_h) = resize(categories, n.get() as usize, a.seed, source.clone());
    let (vals, prov_s) = resize(unit, n.get() as usize, a.seed, source);
    let (h, cal_h) = calibrate::histogram(m, &target, resolve(AccountantChoice::Best).as_ref())?;
    let (hist, _) = simulate_histogram(&h, &cats, cal_h, prov_h, &run)?;
    let (p, cal_s) = calibrate::scalar_sum(
        None,
        false,
        &target,
        resolve(AccountantChoice::Best).as_ref(),
    )?;
    let (sum, _) = simulate_scalar_sum(&p, &vals, cal_s, prov_s, &run)?;

    let composition = compose(
        hist.calibration.certified_epsilon,
        sum.calibration.certified_epsilon,
        a.delta,
    );
    if a.json {
        return print_json(&DemoReport {
            histogram: hist,
            scalar_sum: sum,
            range_mv: RANGE_MV,
            composition,
        });
    }

    let drawn = if n.get() as usize > mv.len() {
        format!(
            "{n} users drawn with replacement (seed {}) from the {} readings",
            a.seed,
            mv.len()
        )
    } else {
        format!("{n} users, the first {n} of the {} readings", mv.len())
    };
    crate::println_wrapped!(
        "blanket demo: {drawn} of an ECG (MIT-BIH record 208),\n\
         one reading per user, clipped to the public range {lo} to {hi} mV (fixed in advance,\n\
         not taken from the data). Each user randomizes locally (privacy-blanket GRR, a ChaCha12\n\
         CSPRNG), an ideal shuffler permutes the reports, and the analyzer sees only the\n\
         anonymous multiset. Target per release: (eps, delta) = ({}, {}); {} repetitions, seed {}.\n",
        echo(a.eps),
        echo(a.delta),
        run.reps,
        a.seed
    );
    if run.no_shuffle {
        crate::println_wrapped!(
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
    crate::println_wrapped!("Histogram of readings ({} bins), one run:", m);
    crate::println_wrapped!(
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
    crate::println_wrapped!(
        "\nMean reading, one run: true {:.5} mV, estimated {:.5} mV (error {:+.5} mV)\n",
        to_mv(truth_mean),
        to_mv(est_mean),
        (est_mean - truth_mean) * (hi - lo)
    );

    let c = |r: &SimulationReport| {
        r.calibration
            .certified_epsilon
            .map_or("NOT CERTIFIED".to_string(), |e| {
                format!("({}, {})", up(e), up(r.calibration.certified_delta))
            })
    };
    let rows = vec![
        vec![
            "histogram".to_string(),
            c(&hist),
            hist.calibration.method.clone(),
            up(hist.gamma),
            up(hist.calibration.eps0),
            "-".to_string(),
            num(hist.predicted_mse.sqrt()),
            num(hist.mse.sqrt()),
        ],
        vec![
            "scalar sum".to_string(),
            c(&sum),
            sum.calibration.method.clone(),
            up(sum.gamma),
            up(sum.calibration.eps0),
            sum.calibration.k.map_or("-".into(), |k| k.to_string()),
            num(sum.predicted_mse.sqrt()),
            num(sum.mse.sqrt()),
        ],
    ];
    crate::println_wrapped!(
        "{}",
        table(
            &[
                "protocol",
                "certified (eps, delta)",
                "method",
                "gamma",
                "eps0 (LDP)",
                "k",
                "predicted RMSE",
                "observed RMSE",
            ],
            &rows
        )
    );
    let together = match composition.basic_epsilon {
        Some(e) => {
            let mut t = format!(
                "({}, {}) by basic composition",
                up(e),
                up(composition.basic_delta)
            );
            if let Some(k) = composition.kov_epsilon.filter(|&k| k < 0.999 * e) {
                t.push_str(&format!(
                    "; ({}, {}) by optimal composition (Kairouz, Oh, Viswanath)",
                    up(k),
                    up(composition.kov_delta)
                ));
            }
            t
        }
        None => "NOT CERTIFIED (a release is not certified)".to_string(),
    };
    crate::println_wrapped!(
        "Both releases are computed on the same users: together they are {together}.\n\
         Each row above is the guarantee of that release alone."
    );
    crate::println_wrapped!(
        "RMSE: histogram, of a count (averaged over bins); scalar sum, of the sum of the n values\n\
         in [0, 1] units. Observed over {} repetitions; predicted from the exact variance.",
        run.reps
    );
    crate::println_wrapped!(
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
