//! `simulate frequency`: the sampling-and-sharing frequency protocols of Tjuawinata et al.
//! (DPCS, DPDS, DPDG, TSS, TSS'; spec `06-frequency.md`, `docs/frequency.md`) at a target
//! (eps, delta), on Zipf or CSV items, with predicted and observed variance and per-role costs.

use super::frequency_data::{self, ItemSource};
use crate::data::{Header, Provenance};
use crate::output::{echo, kv_table, num, print_json, table, up};
use crate::usage_bail;
use anyhow::Result;
use blanket::protocol::frequency::{
    self as freq, Chi, ConditionPolicy, Dpcs, Dpdg, Dpds, DpdsMode, FrequencyError,
    FrequencyReport, GuaranteeKind, Sampling, Tss, TssMode, Violation,
};
use blanket::rng::simulation_stream;
use clap::{Args, ValueEnum};
use serde::Serialize;

/// The frequency protocols.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FreqProtocol {
    /// Central sampling by a trusted server (Algorithm 1).
    Dpcs,
    /// Decentralized sampling with n-party additive sharing (Algorithm 2).
    Dpds,
    /// Distributed discrete Gaussian baseline (worst-case DP, eps < 1).
    Dpdg,
    /// Two-stage sampling with two servers (Algorithm 3).
    Tss,
    /// TSS with a collusion threshold phi (needs --phi).
    TssPrime,
}

impl FreqProtocol {
    /// The name printed and used in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Self::Dpcs => "dpcs",
            Self::Dpds => "dpds",
            Self::Dpdg => "dpdg",
            Self::Tss => "tss",
            Self::TssPrime => "tss-prime",
        }
    }
}

/// How the sharing protocols are simulated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum SimMode {
    /// Same output as literal, shares not materialized (costs by exact closed form).
    #[default]
    Fast,
    /// Every share materialized (small n only).
    Literal,
}

/// Parameters shared by `simulate frequency` and `compare frequency`.
#[derive(Args, Clone, Debug)]
pub struct FreqParams {
    /// Number of items N: the domain 0..N-1 (formerly --items).
    #[arg(long = "domain", alias = "items", value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub items: u64,
    /// Target epsilon (> 0, natural log).
    #[arg(long, allow_hyphen_values = true)]
    pub eps: f64,
    /// Target delta, in (0, 1).
    #[arg(long, allow_hyphen_values = true)]
    pub delta: f64,
    /// Data condition of DPCS/DPDS/TSS: every item must have at least beta n holders, beta in
    /// (0, 1) (default: the smallest beta whose derived delta exp(-p (1-p)^2 beta n / 3) is at
    /// most --delta).
    #[arg(long, allow_hyphen_values = true)]
    pub beta: Option<f64>,
    /// TSS': collusion threshold phi, 1 <= phi < n (every item gets >= phi + 1 helpers).
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub phi: Option<u64>,
    /// TSS/TSS': fraction alpha of the items each user reports, in (0, 1] (default: the
    /// smallest with p_chi >= 1 - e^-eps, so that p = (1 - e^-eps) / p_chi <= 1).
    #[arg(long, allow_hyphen_values = true)]
    pub report_fraction: Option<f64>,
    /// TSS/TSS': adaptive chi with this integer gamma >= 1 (sets holding the user's item are
    /// gamma times likelier; ln(gamma)-LDP towards S1). Default: uniform chi.
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub chi_gamma: Option<u64>,
    /// Field modulus q of the sharing protocols (DPDS, TSS): an integer or 2^k, 2 <= q <= 2^64,
    /// q > n.
    #[arg(long, default_value = "2^32", value_parser = parse_modulus)]
    pub modulus: u128,
    /// DPDG: fixed-point fractional bits k, 0..=24.
    #[arg(long, default_value_t = 8, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub frac_bits: u64,
    /// The items: `zipf` (Zipf law over the N items, --zipf-s, seeded) or a CSV file, PATH or
    /// csv:PATH (one column of it, --column).
    #[arg(long, default_value = "zipf", value_parser = frequency_data::parse_source)]
    pub data: ItemSource,
    /// Exponent s of the Zipf law.
    #[arg(long, default_value_t = 1.1, allow_hyphen_values = true)]
    pub zipf_s: f64,
    /// CSV column holding the items: a 0-based index or a header name.
    #[arg(long, default_value = "0")]
    pub column: String,
    /// The CSV file's first line is a header (skipped).
    #[arg(long, conflicts_with = "no_header")]
    pub header: bool,
    /// The CSV file has no header: its first line is data.
    #[arg(long)]
    pub no_header: bool,
    /// Release even when items have fewer than beta n holders (no guarantee for their
    /// holders); every output then states the violation. Default: refuse such data.
    #[arg(long)]
    pub allow_violations: bool,
    /// Repetitions of the whole protocol on the same data.
    #[arg(long, default_value_t = 10, value_parser = crate::numeric::parse_reps, allow_hyphen_values = true)]
    pub reps: u32,
    /// Seed of the simulation and of the Zipf data (reproducible; real clients never use a seed).
    #[arg(long, default_value_t = 1, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub seed: u64,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `simulate frequency`.
#[derive(Args, Debug)]
pub struct SimFrequencyArgs {
    /// The protocol.
    #[arg(long, value_enum)]
    pub protocol: FreqProtocol,
    /// Number of users (default: the CSV rows; required with --data zipf).
    #[arg(long, value_parser = crate::numeric::parse_users, allow_hyphen_values = true)]
    pub n: Option<f64>,
    /// Literal (every share materialized, small n) or fast (same output, closed-form costs).
    #[arg(long, value_enum, default_value_t)]
    pub mode: SimMode,
    #[command(flatten)]
    pub params: FreqParams,
}

/// `2^k` or a decimal integer.
fn parse_modulus(s: &str) -> Result<u128, String> {
    let t = s.trim().replace('_', "");
    let v = match t.strip_prefix("2^") {
        Some(k) => {
            let k: u32 = k
                .parse()
                .map_err(|_| format!("must be an integer or 2^k, got {s}"))?;
            if k > 64 {
                return Err(format!("must be at most 2^64, got {s}"));
            }
            1u128 << k
        }
        None => t
            .parse::<u128>()
            .map_err(|_| format!("must be an integer or 2^k, got {s}"))?,
    };
    Ok(v)
}

/// The frequency protocols' parameter names and the flags that set them.
const FLAG_NAMES: &[(&str, &str)] = &[
    ("items", "--domain"),
    ("frac_bits", "--frac-bits"),
    ("alpha", "--report-fraction"),
    ("gamma", "--chi-gamma"),
    ("phi", "--phi"),
    ("beta", "--beta"),
    ("eps", "--eps"),
    ("epsilon", "--eps"),
    ("delta", "--delta"),
    ("n", "--n"),
];

/// The CLI's error for a core frequency error: parameter and field errors are usage errors
/// (exit 2), data errors (item outside the domain, violated condition) runtime errors (exit 1).
pub fn freq_err(e: FrequencyError) -> anyhow::Error {
    match e {
        FrequencyError::Param(p) => super::common::flag_error(p, FLAG_NAMES),
        e @ (FrequencyError::Field(_) | FrequencyError::FieldTooSmall { .. }) => {
            anyhow::Error::new(crate::exit::Usage(format!("field (--modulus): {e}")))
        }
        FrequencyError::ConditionViolated { .. } => anyhow::anyhow!(
            "{}; pass --allow-violations to release with the violation stated in every output",
            e.to_string().replace(
                "Refused; pass ConditionPolicy::ReleaseWithViolations to release with the violation stated",
                "Refused"
            )
        ),
        FrequencyError::LiteralTooLarge { shares, max } => {
            anyhow::Error::new(crate::exit::Usage(format!(
                "--mode literal would materialize {shares} shares, above its limit {max}; lower --n or --domain, or use --mode fast"
            )))
        }
        e => anyhow::Error::new(e),
    }
}

/// Loads the items for n users.
pub fn load_items(p: &FreqParams, n: Option<usize>) -> Result<(Vec<u32>, Provenance)> {
    let items = checked_items(p.items)?;
    match &p.data {
        ItemSource::Zipf => {
            let Some(n) = n else {
                usage_bail!("--n is required with --data zipf");
            };
            if !(p.zipf_s.is_finite() && p.zipf_s > 0.0) {
                usage_bail!("--zipf-s must be a finite number > 0, got {}", p.zipf_s);
            }
            Ok(frequency_data::zipf(n, items, p.zipf_s, p.seed))
        }
        ItemSource::Csv(path) => {
            let header = match (p.header, p.no_header) {
                (true, _) => Header::Present,
                (_, true) => Header::Absent,
                _ => Header::Auto,
            };
            frequency_data::csv_column(path, &p.column, header, items, n, p.seed)
        }
    }
}

fn checked_items(items: u64) -> Result<u32> {
    match u32::try_from(items) {
        Ok(v) if v >= 1 => Ok(v),
        _ => usage_bail!("--domain must be an integer from 1 to 4294967295, got {items}"),
    }
}

/// p = 1 - e^-eps, the sampling rate that gives eps = ln(1/(1 - p)).
pub fn rate_for(eps: f64) -> Result<f64> {
    if !(eps.is_finite() && eps > 0.0) {
        return Err(blanket::params::ParamError::OutOfRange {
            field: "eps",
            allowed: "a finite number > 0",
            value: eps.to_string(),
        }
        .into());
    }
    Ok(-(-eps).exp_m1())
}

/// The smallest beta with exp(-p (1-p)^2 beta n / 3) <= delta.
pub fn beta_for(p: f64, delta: f64, n: u64) -> f64 {
    3.0 * (1.0 / delta).ln() / (p * (1.0 - p).powi(2) * n as f64)
}

/// The sampling (rate `p_eff` seen by the output) meeting the target delta at n, with the
/// requested or the smallest sufficient beta.
pub fn sampling_for(p_eff: f64, p: &FreqParams, n: u64) -> Result<Sampling> {
    if !(p.delta > 0.0 && p.delta < 1.0) {
        return Err(blanket::params::ParamError::OutOfRange {
            field: "delta",
            allowed: "in the open interval (0, 1)",
            value: p.delta.to_string(),
        }
        .into());
    }
    let need = beta_for(p_eff, p.delta, n);
    let beta = match p.beta {
        Some(b) => b,
        None => {
            if need.is_nan() || need >= 1.0 {
                usage_bail!(
                    "--delta {} is out of reach of the data-dependent guarantee at n = {n}, eps = {}: \
                     exp(-p (1-p)^2 beta n / 3) <= delta needs beta >= {} (beta must be < 1); raise n or delta",
                    echo(p.delta),
                    echo(p.eps),
                    up(need)
                );
            }
            let mut b = need;
            let s = loop {
                let s = Sampling::new(p_eff, b).map_err(freq_err)?;
                if s.delta(n) <= p.delta {
                    break s;
                }
                b = b.next_up();
            };
            return Ok(s);
        }
    };
    let s = Sampling::new(p_eff, beta).map_err(freq_err)?;
    if s.delta(n) > p.delta {
        usage_bail!(
            "--beta {} gives the derived delta exp(-p (1-p)^2 beta n / 3) = {} > --delta {}; beta must be >= {}",
            echo(beta),
            up(s.delta(n)),
            echo(p.delta),
            up(need)
        );
    }
    Ok(s)
}

/// The TSS / TSS' instance for the target: p_chi from --report-fraction / --chi-gamma, then
/// p = (1 - e^-eps) / p_chi.
pub fn build_tss(p: &FreqParams, n: u64, prime: bool) -> Result<Tss> {
    let items = checked_items(p.items)?;
    let target = rate_for(p.eps)?;
    let chi = match p.chi_gamma {
        None => Chi::Uniform,
        Some(g) => match u32::try_from(g) {
            Ok(gamma) if gamma >= 1 => Chi::Adaptive { gamma },
            _ => usage_bail!("--chi-gamma must be an integer from 1 to 4294967295, got {g}"),
        },
    };
    let phi = if prime {
        match p.phi {
            Some(phi) => Some(phi),
            None => usage_bail!("tss-prime needs --phi (collusion threshold, 1 <= phi < n)"),
        }
    } else {
        None
    };
    if let Some(a) = p.report_fraction {
        if !(a > 0.0 && a <= 1.0) {
            usage_bail!("--report-fraction (alpha) must be in (0, 1], got {a}");
        }
    }
    let policy = policy(p);
    let probe = |alpha: f64| {
        Tss::new(
            n,
            items,
            Sampling::new(1.0, 0.5).map_err(freq_err)?,
            alpha,
            chi,
            phi,
            p.modulus,
            policy,
        )
        .map_err(freq_err)
    };
    let alpha = match p.report_fraction {
        Some(a) => a,
        None => {
            // The smallest a = alpha N with p_chi >= target.
            let mut a = 1u32;
            while a < items && probe(f64::from(a) / f64::from(items))?.p_chi() < target {
                a += 1;
            }
            f64::from(a) / f64::from(items)
        }
    };
    let p_chi = probe(alpha)?.p_chi();
    if p_chi < target {
        usage_bail!(
            "--report-fraction {}: p_chi = {} < 1 - e^-eps = {}, so the first-stage rate p = (1 - e^-eps)/p_chi would exceed 1; raise --report-fraction (or --chi-gamma)",
            echo(alpha),
            p_chi,
            target
        );
    }
    let rate = (target / p_chi).min(1.0);
    let s = sampling_for(rate * p_chi, p, n)?;
    Tss::new(
        n,
        items,
        Sampling::new(rate, s.beta()).map_err(freq_err)?,
        alpha,
        chi,
        phi,
        p.modulus,
        policy,
    )
    .map_err(freq_err)
}

fn policy(p: &FreqParams) -> ConditionPolicy {
    if p.allow_violations {
        ConditionPolicy::ReleaseWithViolations
    } else {
        ConditionPolicy::Refuse
    }
}

/// One protocol's run over the repetitions.
#[derive(Debug, Clone, Serialize)]
pub struct FreqRun {
    /// Protocol name.
    pub protocol: &'static str,
    /// Mean over items of the predicted Var[psi_hat_j] for this data.
    pub predicted_variance: f64,
    /// Mean over repetitions and items of (psi_hat_j - psi_j)^2 (the estimators are unbiased).
    pub observed_variance: f64,
    /// The report of the first repetition (guarantee, per-item prediction, notes).
    pub report: FrequencyReport,
    /// Mean field elements (or item indices) each user sends, every role it plays.
    pub user_elements_sent: f64,
    /// Random samples, additions and multiplications of the server(s), summed.
    pub server_operations: u64,
    /// Per-role counts of the first repetition.
    pub costs: serde_json::Value,
    /// Estimates of the first repetition.
    pub first_estimate: Vec<f64>,
}

/// Runs `proto` `reps` times on `data`.
pub fn run_protocol(
    proto: FreqProtocol,
    p: &FreqParams,
    data: &[u32],
    mode: SimMode,
) -> Result<FreqRun> {
    let n = data.len() as u64;
    let items = checked_items(p.items)?;
    let truth: Vec<f64> = freq::holders(data, items)
        .map_err(freq_err)?
        .iter()
        .map(|&h| h as f64 / n as f64)
        .collect();
    let ops = |c: &freq::RoleCost| c.random_samples + c.additions + c.multiplications;
    let dmode = match mode {
        SimMode::Fast => DpdsMode::Fast,
        SimMode::Literal => DpdsMode::Literal,
    };
    let mut sq = 0.0;
    let mut first: Option<(FrequencyReport, f64, u64, serde_json::Value, Vec<f64>)> = None;
    for rep in 0..p.reps {
        let seed = p.seed.wrapping_add(u64::from(rep) << 32);
        let (est, report, user, server, costs) = match proto {
            FreqProtocol::Dpcs => {
                let s = sampling_for(rate_for(p.eps)?, p, n)?;
                let out = Dpcs::new(items, s, policy(p))
                    .map_err(freq_err)?
                    .simulate(data, &mut simulation_stream(seed, 7))
                    .map_err(freq_err)?;
                let c = out.costs;
                (
                    out.estimate,
                    out.report,
                    c.per_user.elements_sent as f64,
                    ops(&c.server),
                    serde_json::to_value(c)?,
                )
            }
            FreqProtocol::Dpds => {
                let s = sampling_for(rate_for(p.eps)?, p, n)?;
                let out = Dpds::new(n, items, s, p.modulus, policy(p))
                    .map_err(freq_err)?
                    .simulate(data, dmode, seed)
                    .map_err(freq_err)?
                    .output;
                let c = out.costs;
                (
                    out.estimate,
                    out.report,
                    c.per_user.elements_sent as f64,
                    ops(&c.server),
                    serde_json::to_value(c)?,
                )
            }
            FreqProtocol::Dpdg => {
                let k = u32::try_from(p.frac_bits).unwrap_or(u32::MAX);
                let out = Dpdg::new(n, items, p.eps, p.delta, k)
                    .map_err(freq_err)?
                    .simulate(data, dmode, seed)
                    .map_err(freq_err)?
                    .output;
                let c = out.costs;
                (
                    out.estimate,
                    out.report,
                    c.per_user.elements_sent as f64,
                    ops(&c.server),
                    serde_json::to_value(c)?,
                )
            }
            FreqProtocol::Tss | FreqProtocol::TssPrime => {
                let t = build_tss(p, n, proto == FreqProtocol::TssPrime)?;
                let tmode = match mode {
                    SimMode::Fast => TssMode::Fast,
                    SimMode::Literal => TssMode::Literal,
                };
                let out = t.simulate(data, tmode, seed).map_err(freq_err)?;
                let c = out.costs;
                let value = serde_json::json!({
                    "roles": c,
                    "transcript": {
                        "kept": out.transcript.kept,
                        "included": out.transcript.included,
                        "max_reports": out.transcript.reports.iter().max(),
                        "max_helpers": out.transcript.helpers.iter().max(),
                    },
                    "expected_user_elements_sent": t.expected_user_elements_sent(&freq::holders(data, items).map_err(freq_err)?),
                    "p": t.effective_sampling().p() / t.p_chi(),
                    "p_chi": t.p_chi(),
                    "report_fraction": t.alpha(),
                });
                (
                    out.estimate,
                    out.report,
                    c.mean_user_elements_sent(n),
                    ops(&c.s1) + ops(&c.s2),
                    value,
                )
            }
        };
        sq += est
            .iter()
            .zip(&truth)
            .map(|(e, t)| (e - t).powi(2))
            .sum::<f64>()
            / f64::from(items);
        if first.is_none() {
            first = Some((report, user, server, costs, est));
        }
    }
    let Some((report, user, server, costs, first_estimate)) = first else {
        usage_bail!("--reps must be at least 1");
    };
    let predicted = report.predicted_variance.iter().sum::<f64>() / f64::from(items);
    Ok(FreqRun {
        protocol: proto.name(),
        predicted_variance: predicted,
        observed_variance: sq / f64::from(p.reps),
        report,
        user_elements_sent: user,
        server_operations: server,
        costs,
        first_estimate,
    })
}

/// The statement every frequency output carries.
pub const DATA_DEPENDENT: &str = "DPCS, DPDS, TSS and TSS' have a DATA-DEPENDENT guarantee, NOT worst-case DP: \
     (eps, delta) holds only for datasets in which every item has at least beta n holders. For an item with \
     0 vs 1 holders there is no protection: with 0 holders its count is always 0, with 1 holder it is 1 with \
     probability p (the sampling rate), so no delta below p holds for that pair. DPDG, the shuffle histogram \
     and local GRR are worst-case DP.";

/// Why a report is not certified (`report.certified` false).
pub fn uncertified_reason(r: &FrequencyReport) -> &'static str {
    if !violations(r).is_empty() {
        "the data violates the beta n holders condition: NO guarantee for the violating items' holders"
    } else if r.p >= 1.0 && !matches!(r.guarantee_kind, GuaranteeKind::WorstCase) {
        "p = 1: no privacy"
    } else if matches!(r.guarantee_kind, GuaranteeKind::WorstCase) {
        "noise off: not private"
    } else {
        "adaptive chi (--chi-gamma): server S2 also sees helper counts that depend on the data, which the (eps, delta) does not cover"
    }
}

/// The violations of a report (empty if none or worst-case).
pub fn violations(r: &FrequencyReport) -> Vec<Violation> {
    match &r.guarantee_kind {
        GuaranteeKind::DataDependent { violations, .. } => violations.clone(),
        GuaranteeKind::WorstCase => Vec::new(),
    }
}

/// What `simulate frequency` prints (JSON keys are a contract).
#[derive(Serialize)]
struct SimFrequencyOutput<'a> {
    protocol: &'static str,
    n: u64,
    items: u32,
    eps: f64,
    delta: f64,
    reps: u32,
    seed: u64,
    mode: &'static str,
    guarantee: String,
    /// Whether the (eps, delta) is certified for everything the recipients see (false: exit
    /// code 3, and `guarantee` says why).
    certified: bool,
    data_dependent_note: &'static str,
    violations: Vec<Violation>,
    predicted_variance: f64,
    observed_variance: f64,
    variance_ratio: f64,
    variance_meaning: &'static str,
    user_elements_sent: f64,
    server_operations: u64,
    trust: &'static str,
    data: Provenance,
    report: &'a FrequencyReport,
    costs: &'a serde_json::Value,
    true_frequencies: Vec<f64>,
    first_estimate: &'a [f64],
}

/// The meaning of the variance columns.
pub const VARIANCE_MEANING: &str = "variance of the estimated frequency psi_hat_j = (estimated count)/n, averaged over the N items; predicted = the formula for this data, observed = mean over repetitions and items of (psi_hat_j - psi_j)^2 (all estimators are unbiased)";

/// Runs `simulate frequency`.
pub fn simulate(a: &SimFrequencyArgs) -> Result<()> {
    let p = &a.params;
    let n = a.n.map(|n| n as usize);
    // Memory before any allocation (n = 1e12 asked for 4 TB and aborted): the items and the
    // per-item counts; TSS also holds its two-stage shares (about 200 bytes per user measured
    // at n = 1e6, counted as 1 KiB).
    crate::memory::check(
        "--items",
        p.items,
        64.0,
        64.0 * 1024.0 * 1024.0,
        "about 64 bytes per item",
    )?;
    if let Some(n) = n {
        let per_user = if a.protocol == FreqProtocol::Tss {
            1024.0
        } else {
            16.0
        };
        crate::memory::check(
            "--n",
            n as u64,
            per_user,
            64.0 * p.items as f64 + 64.0 * 1024.0 * 1024.0,
            &format!("about {per_user} bytes per user and 64 bytes per item"),
        )?;
    }
    let (data, prov) = load_items(p, n)?;
    let items = checked_items(p.items)?;
    let run = run_protocol(a.protocol, p, &data, a.mode)?;
    let viol = violations(&run.report);
    let truth: Vec<f64> = freq::holders(&data, items)
        .map_err(freq_err)?
        .iter()
        .map(|&h| h as f64 / data.len() as f64)
        .collect();
    let certified = run.report.certified;
    let kind = match &run.report.guarantee_kind {
        GuaranteeKind::DataDependent { .. } => "data-dependent (NOT worst-case DP)",
        GuaranteeKind::WorstCase => "worst-case (eps, delta)-DP",
    };
    let guarantee = if certified {
        kind.to_string()
    } else {
        format!(
            "NOT CERTIFIED ({kind}): {}",
            uncertified_reason(&run.report)
        )
    };
    if !certified {
        crate::exit::mark_uncertified();
    }
    let out = SimFrequencyOutput {
        protocol: run.protocol,
        n: data.len() as u64,
        items,
        eps: run.report.epsilon,
        delta: run.report.delta,
        reps: p.reps,
        seed: p.seed,
        mode: match a.mode {
            SimMode::Fast => "fast",
            SimMode::Literal => "literal",
        },
        guarantee,
        certified,
        data_dependent_note: DATA_DEPENDENT,
        violations: viol.clone(),
        predicted_variance: run.predicted_variance,
        observed_variance: run.observed_variance,
        variance_ratio: run.observed_variance / run.predicted_variance,
        variance_meaning: VARIANCE_MEANING,
        user_elements_sent: run.user_elements_sent,
        server_operations: run.server_operations,
        trust: run.report.trust,
        data: prov,
        report: &run.report,
        costs: &run.costs,
        true_frequencies: truth.clone(),
        first_estimate: &run.first_estimate,
    };
    if p.json {
        return print_json(&out);
    }
    crate::println_wrapped!(
        "{}",
        kv_table(
            &format!("simulate frequency: {}", out.protocol),
            &[
                ("users n", out.n.to_string()),
                ("domain N (items)", out.items.to_string()),
                (
                    "guarantee",
                    if certified {
                        out.guarantee.clone()
                    } else {
                        "NOT CERTIFIED (why: below)".to_string()
                    },
                ),
                (
                    if certified {
                        "eps (at most)"
                    } else {
                        "eps (NOT certified)"
                    },
                    up(out.eps),
                ),
                (
                    if certified {
                        "delta (at most)"
                    } else {
                        "delta (NOT certified)"
                    },
                    up(out.delta),
                ),
                ("predicted variance", num(out.predicted_variance)),
                ("observed variance", num(out.observed_variance)),
                ("observed / predicted", format!("{:.3}", out.variance_ratio)),
                ("elements sent per user", num(out.user_elements_sent)),
                ("server operations", out.server_operations.to_string()),
                ("repetitions, seed", format!("{}, {}", p.reps, p.seed)),
                ("mode", out.mode.to_string()),
            ]
        )
    );
    let rows: Vec<Vec<String>> = truth
        .iter()
        .zip(&run.first_estimate)
        .zip(&run.report.predicted_variance)
        .take(20)
        .enumerate()
        .map(|(j, ((t, e), v))| vec![j.to_string(), num(*t), num(*e), num(v.sqrt())])
        .collect();
    crate::println_wrapped!(
        "First repetition{}\n{}",
        if items > 20 { " (first 20 items)" } else { "" },
        table(&["item", "true psi", "estimate", "predicted sd"], &rows)
    );
    crate::println_wrapped!("Data: {} ({})", out.data.source, out.data.selection);
    crate::println_wrapped!("Trust: {}", out.trust);
    if !viol.is_empty() {
        crate::println_wrapped!(
            "VIOLATION: {} items have fewer than beta n holders; NO guarantee for their holders (released because of --allow-violations).",
            viol.len()
        );
    }
    crate::println_wrapped!("{DATA_DEPENDENT}");
    for note in &run.report.notes {
        crate::println_wrapped!("- {note}");
    }
    if !certified {
        crate::println_wrapped!(
            "NOT CERTIFIED: {}; exit code 3",
            uncertified_reason(&run.report)
        );
    }
    crate::println_wrapped!("Variance: {VARIANCE_MEANING}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modulus_parses() {
        assert_eq!(parse_modulus("2^32"), Ok(1 << 32));
        assert_eq!(parse_modulus("1_000_003"), Ok(1_000_003));
        assert_eq!(parse_modulus("2^64"), Ok(1 << 64));
        assert!(parse_modulus("2^65").is_err());
        assert!(parse_modulus("x").is_err());
    }

    #[test]
    fn beta_for_meets_delta_exactly() {
        let (p, delta, n) = (0.4, 1e-6, 100_000u64);
        let b = beta_for(p, delta, n);
        let d = (-p * (1.0 - p).powi(2) * b * n as f64 / 3.0).exp();
        assert!((d / delta - 1.0).abs() < 1e-9);
    }
}
