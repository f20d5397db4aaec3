//! `compare sum`: single-message, IKOS, central and local sums side by side at equal
//! (eps, delta), with predicted and observed error, messages and bytes per user, and the
//! trust each assumes.

use super::calibrate::{self as cal_cmd, CalibrationReport};
use super::common::mean_ci;
use super::ikos::*;
use super::simulate::{simulate_scalar_sum, RunArgs};
use crate::accountant::{resolve, AccountantChoice};
use crate::output::{echo, num, print_json, table, up};
use anyhow::Result;
use blanket::calibrate::Target;
use blanket::params::{Delta, Epsilon, NumUsers};
use blanket::rng::simulation_stream;
use blanket::sample::Polya;
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;

/// Arguments of `compare sum`.
#[derive(Args)]
pub struct CompareSumArgs {
    /// Number of users (2 to 2^35; the observed MSE is simulated up to 2^20 users, above
    /// it the rows give the predicted MSE only).
    #[arg(long, value_parser = crate::numeric::parse_users, allow_hyphen_values = true)]
    pub n: f64,
    /// Target epsilon (> 0, natural log).
    #[arg(long, allow_hyphen_values = true)]
    pub eps: f64,
    /// Target delta, in (0, 1).
    #[arg(long, allow_hyphen_values = true)]
    pub delta: f64,
    /// Repetitions for the observed errors (embedded ECG data resized to n).
    #[arg(long, default_value_t = 3, value_parser = crate::numeric::parse_reps, allow_hyphen_values = true)]
    pub reps: u32,
    /// Seed of the simulations.
    #[arg(long, default_value_t = 1, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub seed: u64,
    #[command(flatten)]
    pub present: PresentArgs,
    /// Which bound certifies the single-message scalar sum.
    #[arg(long, value_enum, default_value_t)]
    pub accountant: AccountantChoice,
    /// Also write a PNG of predicted MSE against n (10^2 to 10^6, log axes) at this
    /// (eps, delta) for the five protocols (e.g. docs/figures/compare_sum.png).
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// One protocol of `compare sum` (JSON keys are a contract).
#[derive(Serialize)]
pub struct ProtocolRow {
    /// Protocol name.
    pub name: &'static str,
    /// Predicted MSE of the estimated sum (worst case over data, or an upper bound); null when
    /// the protocol cannot run at these parameters.
    pub predicted_mse: Option<f64>,
    /// Observed MSE over the repetitions on the embedded ECG data.
    pub observed_mse: Option<f64>,
    /// Messages each user sends.
    pub messages_per_user: Option<u64>,
    /// Bytes each user sends.
    pub bytes_per_user: Option<u64>,
    /// The trust the protocol assumes.
    pub trust: &'static str,
    /// Parameters, guarantee, or why the row is empty.
    pub note: String,
    /// Why the row has no values (predicted, observed, messages and bytes all null), or null
    /// when it has them: e.g. no certified share count over A^2_pi at this n.
    pub reason: Option<String>,
}

/// What `compare sum` prints.
#[derive(Serialize)]
pub struct CompareSum {
    /// Users.
    pub n: u64,
    /// The honest, present users the scalar-sum and ikos-sum rows are certified for:
    /// n' = n - floor(dropout n) - floor(malicious n) (as `protocol run`; n by default).
    pub honest_present_users: u64,
    /// Target epsilon.
    pub eps: f64,
    /// Target delta.
    pub delta: f64,
    /// Repetitions of each observed error.
    pub reps: u32,
    /// Seed.
    pub seed: u64,
    /// What the errors measure.
    pub mse_meaning: &'static str,
    /// One row per protocol.
    pub protocols: Vec<ProtocolRow>,
    /// Why no row has an observed MSE (n above [`OBSERVED_MAX_USERS`]), or null.
    pub not_observed: Option<String>,
}

/// alpha = A / 2^40 >= e^(-eps/p) rounded up as in the core.
fn alpha_num(eps: f64, p: u64) -> u64 {
    ((-eps / p as f64).exp() * (1u64 << 40) as f64).floor() as u64 + 2
}

/// p = ceil(sqrt(n)), exactly.
fn precision(n: u64) -> u64 {
    let mut p = (n as f64).sqrt().ceil() as u64;
    while p * p < n {
        p += 1;
    }
    while p > 1 && (p - 1) * (p - 1) >= n {
        p -= 1;
    }
    p
}

/// The most users whose errors `compare sum` observes by simulation: 2^20 (about 1e6; at
/// n = 1e6 the five rows take seconds per repetition and about 300 MB; n = 1e7 took 238 s
/// and 2.3 GB). Above it the rows give the predicted MSE only (exact closed forms, any n up to
/// 2^48) and say so: the observed columns are empty and `reason` names this limit.
pub const OBSERVED_MAX_USERS: u64 = 1 << 20;

/// The most users `compare sum` takes: 2^35 (as `simulate`), where its calibrations take
/// seconds; at n = 1e12 they took about a minute.
pub const MAX_USERS: u64 = blanket::simulate::MAX_USERS;

/// The data the observed errors are simulated on: values, users, true sum.
struct Observed<'a> {
    values: &'a [blanket::params::UnitValue],
    users: &'a crate::data::Users<f64>,
    truth: f64,
}

/// Runs `compare sum`.
pub fn compare(a: &CompareSumArgs) -> Result<()> {
    if let Some(path) = &a.plot {
        super::common::plot_file("--plot", path)?;
    }
    let eps = check_eps(a.eps)?;
    let all = NumUsers::from_f64(a.n)?.get();
    let honest = a.present.honest(all)?;
    // Shuffle-model rows are certified for the n' honest, present users (as `protocol run`).
    let target = Target {
        eps: Epsilon::new(eps)?,
        delta: Delta::new(a.delta)?,
        n: NumUsers::new(honest)?,
    };
    super::common::warn_delta(a.delta, all);
    let n = all;
    if n > MAX_USERS {
        crate::usage_bail!(
            "--n must be at most {MAX_USERS} (2^35) for compare sum, got {n}: its five calibrations take about a minute at 1e12 (calibrate one protocol at any n up to 2^48)"
        );
    }
    let pb = super::common::spinner("comparing", a.json);
    // The observed errors are simulated up to OBSERVED_MAX_USERS users (no O(n) work above).
    let simulated = n <= OBSERVED_MAX_USERS;
    let data = if simulated {
        pb.set_message("compare sum: preparing the data");
        let (users, prov) = unit_data(None, Some(n as usize), a.seed)?;
        let (values, truth) = prepared(&users)?;
        Some((users, prov, values, truth))
    } else {
        None
    };
    let observed = data.as_ref().map(|(users, _, values, truth)| Observed {
        values,
        users,
        truth: *truth,
    });
    let not_observed = format!(
        "observed MSE not simulated: n = {n} is above {OBSERVED_MAX_USERS} (2^20) users, the limit of compare sum's simulations (predicted MSE: exact at any n; simulate scalar-sum or ikos-sum for one protocol at larger n)"
    );
    let mut rows = Vec::new();

    // Single-message scalar sum, calibrated by the core calibrator.
    pb.set_message("compare sum: calibrating scalar-sum");
    let (sp, scal): (_, CalibrationReport) =
        cal_cmd::scalar_sum(None, false, &target, resolve(a.accountant).as_ref())?;
    let run = RunArgs {
        reps: a.reps,
        seed: a.seed,
        no_shuffle: false,
        json: true,
        header: false,
        no_header: false,
    };
    let k = sp.k().get();
    let note = format!(
        "k = {k}, gamma = {}, certified by {}",
        up(scal.gamma),
        scal.method
    );
    let predicted = scal.predicted_mse;
    let observed_scalar = match &data {
        Some((users, prov, _, _)) => {
            pb.set_message("compare sum: simulating scalar-sum");
            Some(
                simulate_scalar_sum(&sp, users, scal, prov.clone(), &run)?
                    .0
                    .mse,
            )
        }
        None => None,
    };
    rows.push(ProtocolRow {
        name: "scalar-sum",
        predicted_mse: Some(predicted),
        observed_mse: observed_scalar,
        messages_per_user: Some(1),
        bytes_per_user: Some(element_bytes(u128::from(k) + 1)),
        trust: "a uniform shuffler hides which user sent each message; analyzer untrusted",
        note,
        reason: None,
    });

    // IKOS sum over one uniform shuffle, then over the alternating shuffler A^2_pi.
    let sigma = sigma_for_delta(eps, a.delta)?;
    let uniform = build(n, eps, sigma, honest)?;
    pb.set_message("compare sum: ikos-sum");
    rows.push(ikos_row(&uniform, sigma, n, observed.as_ref(), a)?);
    pb.set_message("compare sum: ikos-sum-alternating");
    let alternating = if a.present.all_present() {
        uniform.over_alternating().map_err(|e| e.to_string())
    } else {
        Err("not certified with --dropout or --malicious: the alternating share count (m_required_alternating) is not analysed for absent or malicious cells".to_string())
    };
    rows.push(match alternating {
        Ok(alt) => ikos_row(&alt, sigma, n, observed.as_ref(), a)?,
        Err(e) => ProtocolRow {
            name: IKOS_ALTERNATING,
            predicted_mse: None,
            observed_mse: None,
            messages_per_user: None,
            bytes_per_user: None,
            trust: ALTERNATING_TRUST,
            note: format!("not available at n = {n}: {e}"),
            reason: Some(e),
        },
    });

    // Central discrete Laplace at precision p: the curator rounds p * (exact sum) to the
    // nearest integer (sensitivity p) and adds DLap(alpha), alpha >= e^(-eps/p).
    let p = precision(n);
    let an = alpha_num(eps, p);
    let alpha = an as f64 / (1u64 << 40) as f64;
    let pf = p as f64;
    let dlap_var = 2.0 * alpha / ((1.0 - alpha) * (1.0 - alpha));
    let central_pred = (dlap_var + 0.25) / (pf * pf);
    let noise = Polya::new(1, an, 1 << 40)?;
    let central_observed = observed.as_ref().map(|o| {
        let truth = o.truth;
        let sq: Vec<f64> = (0..a.reps)
            .map(|rep| {
                let mut rng = simulation_stream(a.seed ^ 0xce47_ca1d, u64::from(rep));
                let s =
                    ((truth * pf).round() as i64 + noise.sample_difference(&mut rng)) as f64 / pf;
                (s - truth).powi(2)
            })
            .collect();
        mean_ci(&sq).0
    });
    rows.push(ProtocolRow {
        name: "central-discrete-laplace",
        predicted_mse: Some(central_pred),
        observed_mse: central_observed,
        messages_per_user: Some(1),
        bytes_per_user: Some(8),
        trust: "a trusted curator sees every raw value",
        reason: None,
        note: format!(
            "p = {p}, DLap(alpha = {alpha}) on round(p * sum): (eps, 0)-DP for sensitivity p; MSE <= (2 alpha/(1-alpha)^2 + 1/4)/p^2 (discrete Laplace variance, Canonne, Kamath, Steinke 2020)"
        ),
    });

    // Local randomized response: b ~ Bernoulli(x), report b with probability e^eps/(1+e^eps);
    // unbiased (y (e^eps + 1) - 1)/(e^eps - 1); per-user variance pi(1-pi)(e^eps+1)^2/(e^eps-1)^2
    // <= (e^eps+1)^2/(4 (e^eps-1)^2) (Warner 1965; Wang et al., USENIX Security 2017).
    let e = eps.exp();
    let keep = e / (1.0 + e);
    let scale = (e + 1.0) / (e - 1.0);
    let rr_pred = n as f64 * scale * scale / 4.0;
    pb.set_message("compare sum: local-randomized-response");
    let rr_observed = observed.as_ref().map(|o| {
        let (values, users, truth) = (o.values, o.users, o.truth);
        let sq = (0..a.reps)
            .map(|rep| {
                use rand_core::RngCore;
                use rayon::prelude::*;
                const CHUNK: u64 = 1 << 16;
                let est: f64 = (0..n.div_ceil(CHUNK))
                    .into_par_iter()
                    .map(|c| {
                        let mut rng =
                            simulation_stream(a.seed ^ 0x0ca1_0ca1, (u64::from(rep) << 32) | c);
                        let mut unit = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                        (c * CHUNK..((c + 1) * CHUNK).min(n))
                            .map(|i| {
                                let x = values[users.pick.row(i)].get();
                                let b = unit() < x;
                                let y = if unit() < keep { b } else { !b };
                                (f64::from(u8::from(y)) * (e + 1.0) - 1.0) / (e - 1.0)
                            })
                            .sum::<f64>()
                    })
                    .sum();
                (est - truth).powi(2)
            })
            .collect::<Vec<_>>();
        mean_ci(&sq).0
    });
    rows.push(ProtocolRow {
        name: "local-randomized-response",
        predicted_mse: Some(rr_pred),
        observed_mse: rr_observed,
        messages_per_user: Some(1),
        bytes_per_user: Some(1),
        trust: "none: each report is eps-DP on its own (local model)",
        reason: None,
        note: "randomized rounding to a bit, then binary randomized response; worst case n (e^eps+1)^2 / (4 (e^eps-1)^2) (Warner 1965; Wang et al., USENIX Security 2017); pure eps-LDP (the observed error uses a floating-point coin: a simulation, not a deployment)".into(),
    });
    if let Some(path) = &a.plot {
        pb.set_message("compare sum: plot");
        plot_against_n(path, eps, a.delta, a.accountant)?;
    }
    pb.finish_and_clear();
    let report = CompareSum {
        n,
        honest_present_users: honest,
        eps,
        delta: a.delta,
        reps: a.reps,
        seed: a.seed,
        mse_meaning: "squared error of the estimated sum of the n values; predicted = worst case over data (or an upper bound), observed = mean over repetitions on the embedded ECG data resized to n",
        protocols: rows,
        not_observed: (!simulated).then_some(not_observed),
    };
    if a.json {
        return print_json(&report);
    }
    let opt = |x: Option<f64>| x.map_or("-".to_string(), num);
    let opt_u = |x: Option<u64>| x.map_or("-".to_string(), |v| v.to_string());
    let body: Vec<Vec<String>> = report
        .protocols
        .iter()
        .map(|r| {
            vec![
                r.name.to_string(),
                opt(r.predicted_mse),
                opt(r.observed_mse),
                opt_u(r.messages_per_user),
                opt_u(r.bytes_per_user),
                r.trust.to_string(),
            ]
        })
        .collect();
    crate::println_wrapped!(
        "Sums at n = {n}, eps = {}, delta = {} ({} repetitions, seed {})",
        echo(eps),
        echo(a.delta),
        a.reps,
        a.seed
    );
    crate::println_wrapped!(
        "certified for: {} (scalar-sum and ikos-sum rows; --dropout/--malicious as in protocol run)",
        super::ikos::certified_for(n, honest)
    );
    crate::println_wrapped!(
        "{}",
        table(
            &[
                "protocol",
                "predicted MSE",
                "observed MSE",
                "messages/user",
                "bytes/user",
                "trust"
            ],
            &body
        )
    );
    for r in &report.protocols {
        crate::println_wrapped!("{}: {}", r.name, r.note);
    }
    crate::println_wrapped!("MSE: {}", report.mse_meaning);
    if let Some(why) = &report.not_observed {
        crate::println_wrapped!("note: {why}");
    }
    Ok(())
}

/// Name of the IKOS row over the alternating shuffler.
const IKOS_ALTERNATING: &str = "ikos-sum-alternating";

/// Trust of the IKOS row over one uniform shuffle.
const UNIFORM_TRUST: &str = "one uniform shuffle of all n m shares; the n' honest, present clients' noise sums to the discrete Laplace (n' = n unless --dropout/--malicious); analyzer untrusted";

/// Trust of the IKOS row over the alternating shuffler A^2_pi.
const ALTERNATING_TRUST: &str = "the alternating shuffler A^2_pi (public uniform placement pi in the h x w grid; a row round and a column round by parties that keep their permutations secret; m instances sharing pi; the analyzer sees which shares left each column); all n clients honest and present; analyzer untrusted";

/// The row of an IKOS sum (`p` over one uniform shuffle, or over A^2_pi if
/// `p.is_alternating()`), observed over the real shuffler while n m shares fit in memory.
fn ikos_row(
    p: &blanket::protocol::IkosSum,
    sigma: u32,
    n: u64,
    data: Option<&Observed>,
    a: &CompareSumArgs,
) -> Result<ProtocolRow> {
    let c = IkosCalibration::of(&p.report());
    let data = data
        .filter(|_| n.saturating_mul(u64::from(c.m)) <= blanket::simulate::MAX_SHUFFLED_MESSAGES);
    let simulated = data.is_some();
    let observed = match data {
        Some(o) => {
            let mut sq = Vec::new();
            for rep in 0..a.reps {
                let est = ikos_repetition(p, o.values, o.users, a.seed, rep)?;
                sq.push((est - o.truth).powi(2));
            }
            Some(mean_ci(&sq).0)
        }
        None => None,
    };
    let alternating = p.is_alternating();
    let same = if simulated {
        "; observed over the real AlternatingShuffler with the same client randomness as ikos-sum (the sum mod q is exact whatever the shuffle and m, so the estimates coincide)"
    } else {
        ""
    };
    let layout = if alternating {
        let l = blanket::shuffle::GridLayout::new(n as usize);
        let (h, w) = (l.height(), l.width());
        let r = n as usize - (h - 1) * w;
        if r == w {
            format!("; layout {h} x {w}, m certified by m_required_alternating{same}")
        } else {
            format!(
                "; layout {h} x {w} with a ragged last row of {r}, m certified by m_required_alternating (ragged bound){same}"
            )
        }
    } else {
        String::new()
    };
    Ok(ProtocolRow {
        name: if alternating {
            IKOS_ALTERNATING
        } else {
            "ikos-sum"
        },
        predicted_mse: Some(c.predicted_mse),
        observed_mse: observed,
        messages_per_user: Some(u64::from(c.m)),
        bytes_per_user: Some(c.bytes_per_user),
        trust: if alternating {
            ALTERNATING_TRUST
        } else {
            UNIFORM_TRUST
        },
        note: format!(
            "p = {}, q = 2^{}, m = {}, sigma = {sigma}, delta = {}{layout}{}",
            c.p,
            c.q.trailing_zeros(),
            c.m,
            up(c.delta),
            if simulated || n > OBSERVED_MAX_USERS {
                ""
            } else {
                "; not simulated (n m shares exceed the simulator's memory limit)"
            }
        ),
        reason: None,
    })
}

/// Users of the plot's sweep.
const PLOT_USERS: [u64; 9] = [
    100, 300, 1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000,
];

/// Predicted MSE of each protocol of `compare sum` at n users (None: not available).
fn predicted_at(
    n: u64,
    eps: f64,
    delta: f64,
    acct: AccountantChoice,
) -> Result<[(&'static str, Option<f64>); 5]> {
    let target = Target {
        eps: Epsilon::new(eps)?,
        delta: Delta::new(delta)?,
        n: NumUsers::new(n)?,
    };
    let scalar = cal_cmd::scalar_sum(None, false, &target, resolve(acct).as_ref())
        .map(|(_, c)| c.predicted_mse)
        .ok();
    let uniform = build(n, eps, sigma_for_delta(eps, delta)?, n)?;
    let ikos = Some(uniform.report().predicted_mse);
    // Same noise and precision over A^2_pi (only m differs), where m is certified.
    let ikos_alt = uniform
        .over_alternating()
        .ok()
        .map(|p| p.report().predicted_mse);
    let p = precision(n) as f64;
    let alpha = alpha_num(eps, p as u64) as f64 / (1u64 << 40) as f64;
    let central = (2.0 * alpha / ((1.0 - alpha) * (1.0 - alpha)) + 0.25) / (p * p);
    let e = eps.exp();
    let rr = n as f64 * ((e + 1.0) / (e - 1.0)).powi(2) / 4.0;
    Ok([
        ("scalar-sum", scalar),
        ("ikos-sum", ikos),
        (IKOS_ALTERNATING, ikos_alt),
        ("central-discrete-laplace", Some(central)),
        ("local-randomized-response", Some(rr)),
    ])
}

/// Writes the PNG of predicted MSE against n (log axes).
fn plot_against_n(
    path: &std::path::Path,
    eps: f64,
    delta: f64,
    acct: AccountantChoice,
) -> Result<()> {
    use crate::plot::register_plot_font;
    use anyhow::anyhow;
    use plotters::prelude::*;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        super::common::writable_dir(dir)?;
    }
    let mut series: Vec<(&'static str, Vec<(f64, f64)>)> = Vec::new();
    for &n in &PLOT_USERS {
        for (name, v) in predicted_at(n, eps, delta, acct)? {
            let i = match series.iter().position(|(s, _)| *s == name) {
                Some(i) => i,
                None => {
                    series.push((name, Vec::new()));
                    series.len() - 1
                }
            };
            if let Some(v) = v {
                series[i].1.push((n as f64, v));
            }
        }
    }
    let ys = series.iter().flat_map(|(_, v)| v.iter().map(|p| p.1));
    let (y0, y1) = ys.fold((f64::INFINITY, 0f64), |(a, b), y| (a.min(y), b.max(y)));
    let (x0, x1) = (70.0, 1.5e6);
    // From the decade below the lowest curve, so every curve lies above a labelled tick.
    let (y0, y1) = (crate::plot::log_floor(y0, y1), y1 * 4.0);
    let text = register_plot_font();
    let err = |e: &dyn std::fmt::Display| anyhow!("drawing {}: {e}", path.display());
    let root = BitMapBackend::new(path, (960, 640)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let caption = format!(
        "Sums of n values in [0, 1] at eps = {}, delta = {}: predicted MSE",
        echo(eps),
        echo(delta)
    );
    let mut chart = crate::plot::log_log_chart(
        &root,
        text,
        (&caption, 22),
        (x0, x1),
        (y0, y1),
        ("users n", "MSE of the estimated sum"),
    )
    .map_err(|e| err(&e))?;
    let colours = [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(44, 160, 44),
        RGBColor(255, 127, 14),
    ];
    // Curves that coincide (ikos-sum, its alternating variant, central) get distinct dash
    // patterns and markers, so a line under another stays visible.
    for (i, ((name, v), colour)) in series.iter().zip(colours).enumerate() {
        let (dash, marker) = crate::plot::series_style(i);
        let style = colour.stroke_width(2);
        crate::plot::draw_line(&mut chart, v, dash, style).map_err(|e| err(&e))?;
        crate::plot::draw_markers(&mut chart, v, marker, colour).map_err(|e| err(&e))?;
        if text {
            let label = if *name == IKOS_ALTERNATING {
                format!("{name} (same MSE as ikos-sum, more shares)")
            } else {
                name.to_string()
            };
            crate::plot::legend_entry(&mut chart, label, dash, marker, style)
                .map_err(|e| err(&e))?;
        }
    }
    if text {
        crate::plot::draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
