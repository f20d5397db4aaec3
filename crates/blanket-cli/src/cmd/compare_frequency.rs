//! `compare frequency`: DPCS, DPDS, DPDG, TSS, TSS', blanket's shuffle-model histogram
//! (calibrated by the generic calibrator) and local GRR at equal (eps, delta) on the same items:
//! predicted and observed variance, trust, per-user and server cost (spec `06-frequency.md`,
//! "What blanket builds"; `docs/frequency.md`). `--plot` draws the DPDS/DPDG crossover.

use super::frequency::{
    beta_for, build_tss, load_items, rate_for, run_protocol, sampling_for, uncertified_reason,
    violations, FreqParams, FreqProtocol, SimMode, DATA_DEPENDENT, VARIANCE_MEANING,
};
use crate::accountant::{resolve, AccountantChoice};
use crate::data::Provenance;
use crate::output::{echo, num, print_json, table, up};
use crate::usage_bail;
use anyhow::Result;
use blanket::calibrate::Target;
use blanket::params::{Delta, DomainSize, Epsilon, Gamma, NumUsers};
use blanket::protocol::frequency::{
    self as freq, dpdg, ConditionPolicy, Dpcs, Dpdg, DpdsMode, Violation,
};
use blanket::protocol::Histogram;
use blanket::randomizer::grr::{gamma_for_local_epsilon, local_epsilon};
use blanket::rng::simulation_stream;
use blanket::simulate::run_single_message;
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;

/// Arguments of `compare frequency`.
#[derive(Args, Debug)]
pub struct CompareFrequencyArgs {
    /// Number of users.
    #[arg(long, value_parser = crate::numeric::parse_users, allow_hyphen_values = true)]
    pub n: f64,
    /// Which bound certifies the shuffle-model histogram.
    #[arg(long, value_enum, default_value_t)]
    pub accountant: AccountantChoice,
    /// Also write a PNG of the variance against n (10^2 to 10^6, log axes) for DPDS and DPDG
    /// at this (eps, delta), predicted lines and simulated points, with the crossover
    /// n = 4 (e^eps - 1) ln(1.25/delta) / eps^2 marked (needs eps < 1; takes a few minutes).
    #[arg(long)]
    pub plot: Option<PathBuf>,
    #[command(flatten)]
    pub params: FreqParams,
}

/// One design of `compare frequency` (JSON keys are a contract).
#[derive(Serialize)]
pub struct Row {
    /// Protocol name.
    pub name: &'static str,
    /// Mean over items of the predicted Var[psi_hat_j] for this data (null: not available).
    pub predicted_variance: Option<f64>,
    /// Mean over repetitions and items of (psi_hat_j - psi_j)^2.
    pub observed_variance: Option<f64>,
    /// The trust the design assumes.
    pub trust: &'static str,
    /// Mean field elements (or item indices) each user sends, every role it plays.
    pub user_elements_sent: Option<f64>,
    /// Random samples, additions and multiplications of the server(s).
    pub server_operations: Option<u64>,
    /// The kind of guarantee and its (eps, delta).
    pub guarantee: String,
    /// `data-dependent` (holds only for datasets meeting the beta n holders condition; NOT
    /// worst-case DP), `worst-case` (central DP), or `local` (LDP).
    pub guarantee_kind: &'static str,
    /// Whether the row's guarantee is certified for what its recipients see; null for a row
    /// with no values. False: released with violations, or TSS/TSS' with --chi-gamma
    /// (server S2's view of the helper counts is not covered); the command exits with 3.
    pub certified: Option<bool>,
    /// Parameters, or why the row is empty.
    pub note: String,
}

/// What `compare frequency` prints.
#[derive(Serialize)]
pub struct CompareFrequency {
    /// Users.
    pub n: u64,
    /// Items N.
    pub items: u64,
    /// Target epsilon.
    pub eps: f64,
    /// Target delta.
    pub delta: f64,
    /// Repetitions.
    pub reps: u32,
    /// Seed.
    pub seed: u64,
    /// Where the items came from.
    pub data: Provenance,
    /// The data-dependent guarantee, stated.
    pub data_dependent_note: &'static str,
    /// beta of the data condition used by DPCS/DPDS/TSS (null when delta is out of reach).
    pub beta: Option<f64>,
    /// Items below beta n holders (non-empty only with --allow-violations).
    pub violations: Vec<Violation>,
    /// What the variances measure.
    pub variance_meaning: &'static str,
    /// The seed's DPDS/DPDG crossover 4 (e^eps - 1) ln(1.25/delta) / eps^2.
    pub dpds_dpdg_crossover_n: f64,
    /// The smallest n at which the implemented formulas give DPDG the smaller variance (eps < 1).
    pub dpds_dpdg_crossover_first_n: Option<u64>,
    /// One row per design.
    pub protocols: Vec<Row>,
    /// Simulated points of the plot (with --plot).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plot_points: Option<Vec<PlotPoint>>,
}

fn empty(name: &'static str, trust: &'static str, guarantee: &str, note: String) -> Row {
    Row {
        name,
        predicted_variance: None,
        observed_variance: None,
        trust,
        user_elements_sent: None,
        server_operations: None,
        guarantee: guarantee.to_string(),
        guarantee_kind: kind_of(name),
        certified: None,
        note,
    }
}

/// The `guarantee_kind` of a row.
fn kind_of(name: &str) -> &'static str {
    match name {
        "dpdg" | "shuffle-histogram" => "worst-case",
        "local-grr" => "local",
        _ => "data-dependent",
    }
}

/// Most discrete Gaussian draws (n N reps) `compare frequency` simulates for DPDG.
const DPDG_MAX_DRAWS: f64 = 1e8;

const SHUFFLE_TRUST: &str =
    "a uniform shuffler hides which user sent each message; analyzer untrusted";
const LOCAL_TRUST: &str = "none: each report is eps-LDP on its own (local model)";

/// Runs `compare frequency`.
pub fn compare(a: &CompareFrequencyArgs) -> Result<()> {
    let p = &a.params;
    let n = NumUsers::from_f64(a.n)?.get();
    let target = Target {
        eps: Epsilon::new(p.eps)?,
        delta: Delta::new(p.delta)?,
        n: NumUsers::new(n)?,
    };
    if a.plot.is_some() && p.eps >= 1.0 {
        usage_bail!("--plot needs eps < 1 (DPDG's classical Gaussian mechanism)");
    }
    if let Some(path) = &a.plot {
        super::common::plot_file("--plot", path)?;
    }
    if let Some(phi) = p.phi {
        if phi == 0 || phi >= n {
            return Err(blanket::params::ParamError::OutOfRange {
                field: "phi",
                allowed: "an integer in 1..n-1 (fewer colluding users than users)",
                value: phi.to_string(),
            }
            .into());
        }
    }
    // Measured at n = 4e5 (100 items): about 800 bytes per user over all the protocols'
    // simulations, checked before any allocation (n = 1e12 asked for terabytes).
    crate::memory::check(
        "--items",
        p.items,
        64.0,
        64.0 * 1024.0 * 1024.0,
        "about 64 bytes per item",
    )?;
    crate::memory::check(
        "--n",
        n,
        1024.0,
        64.0 * p.items as f64 + 64.0 * 1024.0 * 1024.0,
        "about 1 KiB per user and 64 bytes per item",
    )?;
    let (data, prov) = load_items(p, Some(n as usize))?;
    let items = u32::try_from(p.items).unwrap_or(u32::MAX);
    let pb = super::common::spinner("comparing", p.json);
    let rate = rate_for(p.eps)?;
    let reachable = p.beta.is_some() || beta_for(rate, p.delta, n) < 1.0;
    let mut rows = Vec::new();
    let mut beta = None;
    let mut viol = Vec::new();
    let dd = |r: &freq::FrequencyReport| {
        format!(
            "data-dependent (NOT worst-case DP): eps = {}, delta = {} if every item has >= beta n holders",
            up(r.epsilon),
            up(r.delta)
        )
    };
    let sampling_protocols = [
        FreqProtocol::Dpcs,
        FreqProtocol::Dpds,
        FreqProtocol::Dpdg,
        FreqProtocol::Tss,
        FreqProtocol::TssPrime,
    ];
    for proto in sampling_protocols {
        let trust = match proto {
            FreqProtocol::Dpcs => freq::dpcs::TRUST,
            FreqProtocol::Dpds => freq::dpds::TRUST,
            FreqProtocol::Dpdg => dpdg::TRUST,
            FreqProtocol::Tss => freq::tss::TRUST_TSS,
            FreqProtocol::TssPrime => freq::tss::TRUST_TSS_PRIME,
        };
        if proto == FreqProtocol::Dpdg && p.eps >= 1.0 {
            rows.push(empty(
                "dpdg",
                trust,
                "worst-case (eps, delta)-DP",
                "not available: the classical Gaussian mechanism behind sigma_G needs eps < 1"
                    .into(),
            ));
            continue;
        }
        if proto != FreqProtocol::Dpdg && !reachable {
            rows.push(empty(
                proto.name(),
                trust,
                "data-dependent (NOT worst-case DP)",
                format!(
                    "not available: the derived delta exp(-p (1-p)^2 beta n / 3) reaches {} only with beta = {} >= 1 at this n",
                    echo(p.delta),
                    up(beta_for(rate, p.delta, n))
                ),
            ));
            continue;
        }
        let draws = n as f64 * p.items as f64 * f64::from(p.reps);
        if proto == FreqProtocol::Dpdg && draws > DPDG_MAX_DRAWS {
            let k = u32::try_from(p.frac_bits).unwrap_or(u32::MAX);
            let g = Dpdg::new(n, items, p.eps, p.delta, k).map_err(super::frequency::freq_err)?;
            let c = g.closed_form_costs();
            let mut row = empty(
                "dpdg",
                trust,
                "worst-case (eps, delta)-DP",
                format!(
                    "predicted only: simulating n N reps = {} exact discrete Gaussians exceeds {DPDG_MAX_DRAWS:e} (use simulate frequency --protocol dpdg to run it); costs by the closed form",
                    num(draws)
                ),
            );
            row.predicted_variance = Some(g.predicted_variance());
            row.user_elements_sent = Some(c.per_user.elements_sent as f64);
            row.server_operations =
                Some(c.server.random_samples + c.server.additions + c.server.multiplications);
            rows.push(row);
            continue;
        }
        let mut pp = p.clone();
        if proto == FreqProtocol::TssPrime && pp.phi.is_none() {
            pp.phi = Some(10.min(n - 1));
        }
        let run = run_protocol(proto, &pp, &data, SimMode::Fast)?;
        let note = match proto {
            FreqProtocol::Dpcs | FreqProtocol::Dpds => {
                let s = sampling_for(rate, p, n)?;
                beta = Some(s.beta());
                viol = violations(&run.report);
                format!("p = 1 - e^-eps = {}, beta = {}", num(s.p()), up(s.beta()))
            }
            FreqProtocol::Dpdg => format!(
                "k = {} fractional bits, exact discrete Gaussian per user (corrected variance), q = {}",
                p.frac_bits,
                run.report.modulus.unwrap_or(0)
            ),
            _ => {
                let t = build_tss(&pp, n, proto == FreqProtocol::TssPrime)?;
                format!(
                    "alpha = {}, p_chi = {}, p = {}, p p_chi = {}{}",
                    num(t.alpha()),
                    num(t.p_chi()),
                    num(t.effective_sampling().p() / t.p_chi()),
                    num(t.effective_sampling().p()),
                    t.phi().map_or(String::new(), |f| format!(", phi = {f}"))
                )
            }
        };
        let guarantee = if proto == FreqProtocol::Dpdg {
            format!(
                "worst-case (eps, delta)-DP: eps = {}, delta = {} (Gaussian mechanism, cited)",
                echo(p.eps),
                echo(p.delta)
            )
        } else {
            dd(&run.report)
        };
        let guarantee = if run.report.certified {
            guarantee
        } else {
            format!(
                "NOT CERTIFIED ({}): {guarantee}",
                uncertified_reason(&run.report)
            )
        };
        rows.push(Row {
            name: proto.name(),
            predicted_variance: Some(run.predicted_variance),
            observed_variance: Some(run.observed_variance),
            trust,
            user_elements_sent: Some(run.user_elements_sent),
            server_operations: Some(run.server_operations),
            guarantee,
            guarantee_kind: kind_of(proto.name()),
            certified: Some(run.report.certified),
            note,
        });
    }

    // The shuffle-model histogram (blanket's GRR with blanket gamma, calibrated).
    let m = DomainSize::new(p.items)?;
    let truth = freq::holders(&data, items).map_err(super::frequency::freq_err)?;
    let nf = n as f64;
    match Histogram::calibrate(m, &target, resolve(a.accountant).as_ref()) {
        Ok((h, cal)) => {
            let (pred, obs) = histogram_variance(&h, &data, &truth, p.reps, p.seed)?;
            rows.push(Row {
                name: "shuffle-histogram",
                predicted_variance: Some(pred / (nf * nf)),
                observed_variance: Some(obs / (nf * nf)),
                trust: SHUFFLE_TRUST,
                user_elements_sent: Some(1.0),
                server_operations: Some(n + p.items),
                guarantee: format!(
                    "worst-case (eps, delta)-DP by shuffling, certified by {} (gamma = {})",
                    cal.guarantee.method,
                    up(cal.gamma.get())
                ),
                guarantee_kind: "worst-case",
                certified: Some(true),
                note: "one GRR message per user; the analyzer adds n counts and debiases N of them (n + N operations)".into(),
            });
        }
        Err(e) => rows.push(empty(
            "shuffle-histogram",
            SHUFFLE_TRUST,
            "worst-case (eps, delta)-DP by shuffling",
            format!("not available: {e}"),
        )),
    }

    // Local GRR: gamma with local epsilon at most eps.
    let g = (gamma_for_local_epsilon(m, p.eps) * (1.0 + 1e-12)).min(1.0);
    let gamma = Gamma::new(g)?;
    let eps0 = local_epsilon(m, gamma);
    let local = Histogram::new(m, gamma);
    let (pred, obs) = histogram_variance(&local, &data, &truth, p.reps, p.seed ^ 0x10ca1)?;
    rows.push(Row {
        name: "local-grr",
        predicted_variance: Some(pred / (nf * nf)),
        observed_variance: Some(obs / (nf * nf)),
        trust: LOCAL_TRUST,
        user_elements_sent: Some(1.0),
        server_operations: Some(n + p.items),
        guarantee: format!("pure eps0-LDP, eps0 = {} (so (eps, 0)-DP)", up(eps0)),
        guarantee_kind: "local",
        certified: Some(true),
        note: "generalized randomized response (Kairouz et al. 2016; Wang et al. 2017) without a shuffler".into(),
    });
    let plot_points = match &a.plot {
        Some(path) => Some(plot_crossover(path, p.eps, p.delta, p.seed)?),
        None => None,
    };
    pb.finish_and_clear();
    let report = CompareFrequency {
        n,
        items: p.items,
        eps: p.eps,
        delta: p.delta,
        reps: p.reps,
        seed: p.seed,
        data: prov,
        data_dependent_note: DATA_DEPENDENT,
        beta,
        violations: viol,
        variance_meaning: VARIANCE_MEANING,
        dpds_dpdg_crossover_n: dpdg::crossover_users(p.eps, p.delta),
        dpds_dpdg_crossover_first_n: if p.eps < 1.0 {
            Some(crossover_from_formulas(p.eps, p.delta)?)
        } else {
            None
        },
        protocols: rows,
        plot_points,
    };
    let uncertified: Vec<&str> = report
        .protocols
        .iter()
        .filter(|r| r.certified == Some(false))
        .map(|r| r.name)
        .collect();
    if !uncertified.is_empty() {
        crate::exit::mark_uncertified();
    }
    if p.json {
        return print_json(&report);
    }
    let opt = |x: Option<f64>| x.map_or("-".to_string(), num);
    let body: Vec<Vec<String>> = report
        .protocols
        .iter()
        .map(|r| {
            vec![
                r.name.to_string(),
                opt(r.predicted_variance),
                opt(r.observed_variance),
                opt(r.user_elements_sent),
                r.server_operations.map_or("-".into(), |v| v.to_string()),
            ]
        })
        .collect();
    crate::println_wrapped!(
        "Frequencies of N = {} items at n = {n}, eps = {}, delta = {} ({} repetitions, seed {})",
        p.items,
        echo(p.eps),
        echo(p.delta),
        p.reps,
        p.seed
    );
    crate::println_wrapped!("Data: {} ({})", report.data.source, report.data.selection);
    crate::println_wrapped!(
        "{}",
        table(
            &[
                "protocol",
                "predicted var",
                "observed var",
                "elements sent/user",
                "server ops"
            ],
            &body
        )
    );
    for r in &report.protocols {
        crate::println_wrapped!(
            "{}: {}. Trust: {}. {}",
            r.name,
            r.guarantee,
            r.trust,
            r.note
        );
    }
    if !report.violations.is_empty() {
        crate::println_wrapped!(
            "VIOLATION: {} items have fewer than beta n holders; DPCS/DPDS/TSS give NO guarantee to their holders (released because of --allow-violations): {}",
            report.violations.len(),
            report
                .violations
                .iter()
                .take(20)
                .map(|v| format!("item {} ({} holders)", v.item, v.holders))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    crate::println_wrapped!("{DATA_DEPENDENT}");
    if !uncertified.is_empty() {
        crate::println_wrapped!(
            "NOT CERTIFIED: the guarantee of {} is not certified (see its row); exit code 3",
            uncertified.join(", ")
        );
    }
    crate::println_wrapped!(
        "DPDS/DPDG crossover (seed): DPDG has the smaller worst-case variance for n > {}{}",
        num(report.dpds_dpdg_crossover_n),
        report
            .dpds_dpdg_crossover_first_n
            .map_or(String::new(), |f| format!(
                " (implemented formulas: from n = {f})"
            ))
    );
    if let Some(points) = &report.plot_points {
        let rows: Vec<Vec<String>> = points
            .iter()
            .map(|q| {
                vec![
                    q.protocol.to_string(),
                    q.n.to_string(),
                    q.reps.to_string(),
                    num(q.predicted_variance),
                    num(q.observed_variance),
                    format!("{:.3}", q.observed_variance / q.predicted_variance),
                ]
            })
            .collect();
        crate::println_wrapped!(
            "Plot points (one item held by all n users: the worst case psi = 1)\n{}",
            table(
                &["protocol", "n", "reps", "predicted", "observed", "ratio"],
                &rows
            )
        );
    }
    crate::println_wrapped!("Variance: {}", report.variance_meaning);
    Ok(())
}

/// (predicted, observed) mean per-category count variance of a GRR histogram on `data`.
fn histogram_variance(
    h: &Histogram,
    data: &[u32],
    truth: &[u64],
    reps: u32,
    seed: u64,
) -> Result<(f64, f64)> {
    let mut sq = 0.0;
    for rep in 0..reps {
        let state = run_single_message(
            data.len(),
            seed,
            rep,
            false,
            // Every item was checked against N when the data were loaded.
            |i, rng| h.randomize_simulated(data[i], rng).unwrap_or(0),
            || h.aggregator(),
        )?;
        let est = h.estimate(&state)?;
        sq += est
            .counts
            .iter()
            .zip(truth)
            .map(|(e, &t)| (e - t as f64).powi(2))
            .sum::<f64>()
            / truth.len() as f64;
    }
    Ok((h.predicted_mse(truth), sq / f64::from(reps)))
}

/// One simulated point of the crossover plot.
#[derive(Serialize, Clone)]
pub struct PlotPoint {
    /// `dpds` or `dpdg`.
    pub protocol: &'static str,
    /// Users.
    pub n: u64,
    /// Repetitions.
    pub reps: u32,
    /// Predicted Var[psi_hat] (DPDS: 1/(n (e^eps - 1)), the worst case psi = 1; DPDG: V_G).
    pub predicted_variance: f64,
    /// Sample variance of psi_hat over the repetitions.
    pub observed_variance: f64,
}

/// Users of the plot's sweep.
const PLOT_USERS: [u64; 9] = [
    100, 300, 1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000,
];

/// Predicted worst-case variance of DPDS (from the implemented report) and DPDG at n users.
pub fn predicted_pair(n: u64, eps: f64, delta: f64) -> Result<(f64, f64)> {
    let s = freq::Sampling::from_epsilon(eps, 0.5).map_err(super::frequency::freq_err)?;
    let dpds = Dpcs::new(1, s, ConditionPolicy::Refuse)
        .map_err(super::frequency::freq_err)?
        .simulate(&vec![0; n as usize], &mut simulation_stream(0, 0))
        .map_err(super::frequency::freq_err)?
        .report
        .predicted_variance_worst;
    let dpdg = Dpdg::new(n, 1, eps, delta, 0)
        .map_err(super::frequency::freq_err)?
        .predicted_variance();
    Ok((dpds, dpdg))
}

/// The smallest n at which the implemented DPDG variance is below the implemented DPDS worst
/// case (bisection; the two curves cross once: 1/n against 1/n^2).
pub fn crossover_from_formulas(eps: f64, delta: f64) -> Result<u64> {
    let (mut lo, mut hi) = (1u64, 2u64);
    while {
        let (s, g) = predicted_pair(hi, eps, delta)?;
        g >= s
    } {
        lo = hi;
        hi *= 2;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        let (s, g) = predicted_pair(mid, eps, delta)?;
        if g < s {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}

fn sample_variance(xs: &[f64]) -> f64 {
    let r = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / r;
    xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (r - 1.0)
}

/// Simulates DPDS and DPDG (fast modes, one item held by all n users) at each n of the sweep
/// and draws predicted lines, simulated points and the crossover.
fn plot_crossover(
    path: &std::path::Path,
    eps: f64,
    delta: f64,
    seed: u64,
) -> Result<Vec<PlotPoint>> {
    use crate::plot::register_plot_font;
    use anyhow::anyhow;
    use plotters::prelude::*;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        super::common::writable_dir(dir)?;
    }
    let fe = super::frequency::freq_err;
    let mut points = Vec::new();
    for &n in &PLOT_USERS {
        let data = vec![0u32; n as usize];
        let (pred_s, pred_g) = predicted_pair(n, eps, delta)?;
        let s = freq::Sampling::from_epsilon(eps, 0.5).map_err(fe)?;
        let dpds = freq::Dpds::new(n, 1, s, 1 << 32, ConditionPolicy::Refuse).map_err(fe)?;
        let reps = 400u32;
        let xs = (0..reps)
            .map(|r| {
                dpds.simulate(&data, DpdsMode::Fast, seed.wrapping_add(u64::from(r)))
                    .map(|o| o.output.estimate[0])
                    .map_err(fe)
            })
            .collect::<Result<Vec<_>>>()?;
        points.push(PlotPoint {
            protocol: "dpds",
            n,
            reps,
            predicted_variance: pred_s,
            observed_variance: sample_variance(&xs),
        });
        let g = Dpdg::new(n, 1, eps, delta, 8).map_err(fe)?;
        let reps = (100_000_000 / n).clamp(100, 400) as u32;
        let xs = (0..reps)
            .map(|r| {
                g.simulate(&data, DpdsMode::Fast, seed.wrapping_add(u64::from(r)))
                    .map(|o| o.output.estimate[0])
                    .map_err(fe)
            })
            .collect::<Result<Vec<_>>>()?;
        points.push(PlotPoint {
            protocol: "dpdg",
            n,
            reps,
            predicted_variance: pred_g,
            observed_variance: sample_variance(&xs),
        });
    }
    let cross = dpdg::crossover_users(eps, delta);
    let ys = points
        .iter()
        .flat_map(|q| [q.predicted_variance, q.observed_variance]);
    let (y0, y1) = ys.fold((f64::INFINITY, 0f64), |(a, b), y| (a.min(y), b.max(y)));
    let (x0, x1) = (70.0, 1.5e6);
    let (y0, y1) = (y0 / 2.0, y1 * 4.0);
    let text = register_plot_font();
    let err = |e: &dyn std::fmt::Display| anyhow!("drawing {}: {e}", path.display());
    let root = BitMapBackend::new(path, (900, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let caption = format!(
        "Frequency variance at eps = {}, delta = {}: DPDS vs DPDG",
        echo(eps),
        echo(delta)
    );
    let mut chart = crate::plot::log_log_chart(
        &root,
        text,
        (&caption, 20),
        (x0, x1),
        (y0, y1),
        ("users n", "Var of the estimated frequency"),
    )
    .map_err(|e| err(&e))?;
    let colours = [RGBColor(31, 119, 180), RGBColor(214, 39, 40)];
    for (name, colour) in ["dpds", "dpdg"].into_iter().zip(colours) {
        let line: Vec<(f64, f64)> = points
            .iter()
            .filter(|q| q.protocol == name)
            .map(|q| (q.n as f64, q.predicted_variance))
            .collect();
        let style = colour.stroke_width(2);
        let drawn = chart
            .draw_series(LineSeries::new(line, style))
            .map_err(|e| err(&e))?;
        if text {
            drawn
                .label(format!("{name} predicted (line), simulated (dots)"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        }
        chart
            .draw_series(
                points
                    .iter()
                    .filter(|q| q.protocol == name)
                    .map(|q| Circle::new((q.n as f64, q.observed_variance), 4, colour.filled())),
            )
            .map_err(|e| err(&e))?;
    }
    let cstyle = BLACK.stroke_width(1);
    let drawn = chart
        .draw_series(LineSeries::new(vec![(cross, y0), (cross, y1)], cstyle))
        .map_err(|e| err(&e))?;
    if text {
        drawn
            .label(format!(
                "crossover 4 (e^eps-1) ln(1.25/delta)/eps^2 = {}",
                num(cross)
            ))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], cstyle));
        crate::plot::draw_legend(&mut chart, SeriesLabelPosition::UpperRight)
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The crossover of the implemented variance formulas (DPDS worst case from the report,
    /// DPDG's V_G) is the seed's 4 (e^eps - 1) ln(1.25/delta) / eps^2, to the next integer.
    #[test]
    fn crossover_of_implemented_formulas_matches_closed_form() {
        for (eps, delta) in [(0.5, 1e-6), (0.9, 1e-10), (0.1, 1e-5), (0.3, 1e-8)] {
            let closed = dpdg::crossover_users(eps, delta);
            let found = crossover_from_formulas(eps, delta).unwrap();
            assert_eq!(
                found,
                closed.floor() as u64 + 1,
                "eps {eps} delta {delta}: {closed}"
            );
        }
    }
}
