//! `blanket audit`: run a protocol many times on a worst-case pair of neighbouring datasets
//! and print the empirical lower bound on epsilon (Clopper-Pearson, `blanket::audit`) beside
//! the certified upper bound. A lower bound above the certified one would reveal a bug.

use super::common::progress;
use crate::exit::mark_uncertified;
use crate::output::{echo, print_json, up};
use crate::usage_bail;
use anyhow::Result;
use blanket::accounting::{Best, LocalRandomizer, ShuffleAccountant};
use blanket::audit::audit;
use blanket::params::{Delta, DomainSize, Gamma, NumUsers, Precision, UnitValue};
use blanket::protocol::ScalarSum;
use blanket::randomizer::Grr;
use blanket::rng::simulation_rng;
use blanket::rng::SimulationRng;
use clap::{Args, Subcommand};
use serde::Serialize;

/// The protocols that can be audited.
#[derive(Subcommand)]
pub enum AuditCommand {
    /// The histogram protocol (shuffled k-ary randomized response over --domain values). The
    /// n - 1 other users all hold the last value; the audited user holds 0 (dataset D0) or
    /// 1 (D1); the statistic is the count of 0s minus the count of 1s.
    Histogram(AuditArgs),
    /// The scalar-sum protocol (randomized rounding to --k levels, then randomized response
    /// over the k + 1 levels). The audited user holds 0 (D0) or 1 (D1), which round to the
    /// levels 0 and k; the n - 1 others hold 1/k (level 1); the statistic is the count of
    /// level-0 messages minus the count of level-k messages.
    ScalarSum(AuditSumArgs),
}

/// Arguments of `audit scalar-sum`.
#[derive(Args)]
pub struct AuditSumArgs {
    /// Precision k, 2 or more (messages take k + 1 values).
    #[arg(long, default_value_t = 2, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub k: u64,
    #[command(flatten)]
    pub common: AuditCommon,
}

/// Arguments of `audit histogram`.
#[derive(Args)]
pub struct AuditArgs {
    /// Number of values of the randomized response, 3 or more (two for the neighbours, one
    /// for the others).
    #[arg(long, default_value_t = 3, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub domain: u64,
    #[command(flatten)]
    pub common: AuditCommon,
}

/// Options of every audit.
#[derive(Args)]
pub struct AuditCommon {
    /// Number of users, 2 to 64 (the audit is meaningful, and fast, at small n).
    #[arg(long, default_value_t = 8, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub n: u64,
    /// Local privacy eps0 of each user's randomized response, in (0, 100].
    #[arg(long, default_value_t = 2.0, allow_hyphen_values = true)]
    pub eps0: f64,
    /// Delta of both bounds, in (0, 1).
    #[arg(long, default_value_t = 1e-3, allow_hyphen_values = true)]
    pub delta: f64,
    /// Runs of the protocol per dataset, 100 to 100000.
    #[arg(long, default_value_t = 20_000, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub trials: u64,
    /// Confidence 1 - alpha of the lower bound; alpha in (0, 1).
    #[arg(long, default_value_t = 0.05, allow_hyphen_values = true)]
    pub alpha: f64,
    /// Seed of the runs (reproducible).
    #[arg(long, default_value_t = 1, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub seed: u64,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct AuditOut {
    protocol: &'static str,
    n: u64,
    /// Values of the randomized response (histogram: --domain; scalar sum: k + 1).
    domain: u32,
    /// Precision (scalar sum).
    #[serde(skip_serializing_if = "Option::is_none")]
    k: Option<u64>,
    eps0: f64,
    gamma: f64,
    delta: f64,
    trials: u64,
    alpha: f64,
    seed: u64,
    /// Lower bound on epsilon, valid with confidence 1 - alpha.
    empirical_epsilon_lower: f64,
    /// The threshold of the event that gave it.
    threshold: i64,
    /// The certified upper bound (null if no method certifies one).
    certified_epsilon: Option<f64>,
    certified_by: Option<String>,
    /// The lower bound does not exceed the certified bound.
    consistent: bool,
}

/// Runs `blanket audit`.
pub fn run(c: &AuditCommand) -> Result<()> {
    match c {
        AuditCommand::Histogram(a) => {
            if a.domain < 3 {
                usage_bail!("--domain must be at least 3 for an audit, got {}", a.domain);
            }
            let m = DomainSize::new(a.domain)?;
            let grr = grr(m, &a.common)?;
            let others = m.get() - 1;
            audit_grr(
                "histogram",
                None,
                &grr,
                &a.common,
                |d1, rng| grr.randomize_simulated(u32::from(d1), rng),
                |rng| grr.randomize_simulated(others, rng),
                (0, 1),
                format!("the audited user holds 0 or 1, the others hold {others}"),
            )
        }
        AuditCommand::ScalarSum(a) => {
            if a.k < 2 {
                usage_bail!("--k must be at least 2 for an audit, got {}", a.k);
            }
            let k = Precision::new(a.k)?;
            let grr = grr(k.levels(), &a.common)?;
            let p = ScalarSum::new(k, grr.gamma());
            let (zero, one, others) = (
                UnitValue::new(0.0)?,
                UnitValue::new(1.0)?,
                UnitValue::new(1.0 / a.k as f64)?,
            );
            audit_grr(
                "scalar-sum",
                Some(a.k),
                &grr,
                &a.common,
                |d1, rng| Ok::<u32, std::convert::Infallible>(p.randomize_value_simulated(if d1 { one } else { zero }, rng)),
                |rng| Ok::<u32, std::convert::Infallible>(p.randomize_value_simulated(others, rng)),
                (0, k.get()),
                format!(
                    "the audited user holds 0 or 1 (levels 0 and {}), the others hold 1/k (level 1)",
                    a.k
                ),
            )
        }
    }
}

/// The GRR of k-ary randomized response at `--eps0` over `m` values, after the checks
/// common to every audit.
fn grr(m: DomainSize, a: &AuditCommon) -> Result<Grr> {
    if !(2..=64).contains(&a.n) {
        usage_bail!(
            "--n must be an integer from 2 to 64 for an audit, got {}",
            a.n
        );
    }
    super::account::check_eps0(a.eps0)?;
    if !(100..=100_000).contains(&a.trials) {
        usage_bail!(
            "--trials must be an integer from 100 to 100000, got {}",
            a.trials
        );
    }
    if !(a.alpha > 0.0 && a.alpha < 1.0) {
        usage_bail!("--alpha must be in (0, 1), got {}", a.alpha);
    }
    Delta::new(a.delta)?;
    let LocalRandomizer::Grr { gamma, .. } = LocalRandomizer::krr(m, a.eps0) else {
        anyhow::bail!("k-ary randomized response is a GRR");
    };
    Ok(Grr::new(m, Gamma::new(gamma)?))
}

/// Audits a protocol whose messages are those of `grr`: `audited(d1, rng)` is the audited
/// user's message under D0 (`false`) or D1, `other(rng)` another user's; the statistic is
/// the count of `levels.0` minus the count of `levels.1`.
#[allow(clippy::too_many_arguments)]
fn audit_grr<E: std::fmt::Display>(
    protocol: &'static str,
    k: Option<u64>,
    grr: &Grr,
    a: &AuditCommon,
    mut audited: impl FnMut(bool, &mut SimulationRng) -> Result<u32, E>,
    mut other: impl FnMut(&mut SimulationRng) -> Result<u32, E>,
    levels: (u32, u32),
    neighbours: String,
) -> Result<()> {
    let n = NumUsers::new(a.n)?;
    let delta = Delta::new(a.delta)?;
    let m = grr.m();
    let gamma = grr.gamma().get();
    let r = LocalRandomizer::Grr { m: m.get(), gamma };
    let certified = Best::default().guarantee(&r, n, delta).ok();
    let mut rng = simulation_rng(a.seed);
    let pb = progress(2 * a.trials, "audit", a.json);
    let mut failure = None;
    let res = audit(a.trials, a.delta, a.alpha, |d1| {
        pb.inc(1);
        let mut c = 0i64;
        let mut count = |v: Result<u32, E>| match v {
            Ok(x) if x == levels.0 => c += 1,
            Ok(x) if x == levels.1 => c -= 1,
            Ok(_) => {}
            Err(e) => failure = Some(e.to_string()),
        };
        count(audited(d1, &mut rng));
        for _ in 1..a.n {
            count(other(&mut rng));
        }
        c
    });
    pb.finish_and_clear();
    if let Some(e) = failure {
        anyhow::bail!("randomizing failed: {e}");
    }
    let certified_epsilon = certified.map(|g| g.epsilon);
    let out = AuditOut {
        protocol,
        n: a.n,
        domain: m.get(),
        k,
        eps0: a.eps0,
        gamma,
        delta: a.delta,
        trials: a.trials,
        alpha: a.alpha,
        seed: a.seed,
        empirical_epsilon_lower: res.eps_lower,
        threshold: res.threshold,
        certified_epsilon,
        certified_by: certified.map(|g| g.method.name().to_string()),
        consistent: certified_epsilon.is_none_or(|e| res.eps_lower <= e),
    };
    if certified_epsilon.is_none() {
        mark_uncertified();
    }
    if a.json {
        return print_json(&out);
    }
    crate::println_wrapped!(
        "audit of the {protocol} protocol: n = {}, randomized response over {m} values at eps0 = {} (gamma = {}), delta = {}",
        a.n,
        echo(a.eps0),
        up(gamma),
        echo(a.delta)
    );
    crate::println_wrapped!(
        "worst-case neighbours: {neighbours}; {} runs each (seed {})",
        a.trials,
        a.seed
    );
    // The empirical bound is a lower bound: rounded down.
    crate::println_wrapped!(
        "empirical lower bound: eps >= {} (confidence {}, Clopper-Pearson with Bonferroni over events)",
        crate::output::down(res.eps_lower),
        echo(1.0 - a.alpha)
    );
    match (out.certified_epsilon, &out.certified_by) {
        (Some(e), Some(m)) => crate::println_wrapped!(
            "certified upper bound: eps <= {} (by {m}){}",
            up(e),
            if out.consistent {
                ""
            } else {
                " -- THE LOWER BOUND EXCEEDS IT: please report this"
            }
        ),
        _ => crate::println_wrapped!("certified upper bound: NOT CERTIFIED (no method applies)"),
    }
    Ok(())
}
