//! `account compose`: total eps of k-fold composition at a total delta.
//!
//! Two modes:
//! - *pair* (`--eps E [--component-delta D1]`): k rounds of an (E, D1)-DP mechanism, by
//!   basic, DRV, KOV (exact) or PLD composition;
//! - *shuffled* (`--eps0 E0 --n N [--randomizer ...] [--method ACCOUNTANT]`): k rounds of a
//!   shuffled eps0-LDP randomizer, composing its whole certified privacy curve by PLD
//!   (connect-the-dots), printed beside KOV applied to the best per-round (eps1, delta1)
//!   point of the same curve.

use super::{randomizer, RandomizerKind};
use crate::output::{down, echo, print_json, up};
use crate::usage_bail;
use anyhow::{bail, Context, Result};
use blanket::accounting::composition::{basic, drv, kov_epsilon, Pld};
use blanket::accounting::{
    CurveAccountant, Fmt21Numerical, GrrExact, LocalRandomizer, Method, PrivacyCurve,
    StrongerClones,
};
use blanket::params::{Delta, NumUsers};
use blanket_report::account::{
    best_kov_split, own_delta, ComposeReport, PairComposition, ShuffledComposition,
    MAX_CURVE_STEPS, SPLIT_FRACTIONS,
};
use clap::{ArgGroup, Args, ValueEnum};
use std::time::Instant;

/// Composition methods (pair mode), or the accountant whose curve is composed (shuffled
/// mode): one `--method` flag, as in `account shuffle`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ComposeMethod {
    /// Basic composition: (k eps, k delta).
    Basic,
    /// Advanced composition (Dwork, Rothblum, Vadhan).
    Drv,
    /// Optimal homogeneous composition (Kairouz, Oh, Viswanath), exact.
    Kov,
    /// Privacy-loss distribution composition (certified; reproduces KOV for a pair, and
    /// composes a shuffled randomizer's whole curve with --eps0).
    Pld,
    /// --eps0: PLD of the Feldman, McMillan, Talwar 2021 clone curve (certified).
    #[value(name = "fmt21-numerical")]
    Fmt21Numerical,
    /// --eps0: PLD of the stronger-clones curve (k-RR only; certified).
    ClonesKrr,
    /// --eps0: PLD of the exact blanket divergence curve of shuffled k-RR (certified; slower).
    GrrExact,
    /// --eps0: variation-ratio is NOT certified and is refused.
    VariationRatio,
}

impl ComposeMethod {
    fn name(self) -> &'static str {
        match self {
            ComposeMethod::Basic => "basic",
            ComposeMethod::Drv => "drv",
            ComposeMethod::Kov => "kov",
            ComposeMethod::Pld => "pld",
            ComposeMethod::Fmt21Numerical => "fmt21-numerical",
            ComposeMethod::ClonesKrr => "clones-krr",
            ComposeMethod::GrrExact => "grr-exact",
            ComposeMethod::VariationRatio => "variation-ratio",
        }
    }

    /// The curve accountant this names (shuffled mode), if it names one.
    fn curve(self) -> Option<CurveChoice> {
        match self {
            ComposeMethod::Fmt21Numerical => Some(CurveChoice::Fmt21Numerical),
            ComposeMethod::ClonesKrr => Some(CurveChoice::ClonesKrr),
            ComposeMethod::GrrExact => Some(CurveChoice::GrrExact),
            ComposeMethod::VariationRatio => Some(CurveChoice::VariationRatio),
            _ => None,
        }
    }
}

/// The curve accountants of the shuffled mode (the deprecated `--accountant`; now `--method`):
/// the numerical accountants whose answer is a whole privacy curve (the `--method` names of
/// `account shuffle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CurveChoice {
    /// Feldman, McMillan, Talwar 2021 clone reduction, computed exactly (certified).
    #[value(name = "fmt21-numerical")]
    Fmt21Numerical,
    /// Feldman, McMillan, Talwar 2023 stronger clones (k-RR only; certified).
    ClonesKrr,
    /// Exact blanket divergence of shuffled k-RR (k-RR only; certified; slower).
    GrrExact,
    /// Wang et al. 2024 variation-ratio bound: NOT certified, refused here.
    VariationRatio,
}

/// Arguments of `account compose`.
#[derive(Args)]
#[command(group(ArgGroup::new("mode").required(true).args(["eps", "eps0"])))]
pub struct ComposeArgs {
    /// Per-round eps of an (eps, component-delta)-DP mechanism (pair mode; excludes --eps0).
    #[arg(long, allow_hyphen_values = true)]
    pub eps: Option<f64>,
    /// Local privacy eps0 in (0, 100] of a randomizer shuffled among --n users each round
    /// (shuffled mode: its whole certified curve is composed by PLD; excludes --eps).
    #[arg(long, allow_hyphen_values = true)]
    pub eps0: Option<f64>,
    /// Number of users shuffled each round (shuffled mode, e.g. 1e6).
    #[arg(long, value_parser = crate::numeric::parse_users, allow_hyphen_values = true, conflicts_with = "eps")]
    pub n: Option<f64>,
    /// Randomizer kind (shuffled mode; default: krr when --domain is given, generic otherwise).
    #[arg(long, value_enum, conflicts_with = "eps")]
    pub randomizer: Option<RandomizerKind>,
    /// Number of values K of k-RR (shuffled mode, --randomizer krr; formerly --k, deprecated).
    #[arg(long, alias = "k", value_parser = crate::numeric::parse_u64, allow_hyphen_values = true, conflicts_with = "eps")]
    pub domain: Option<u64>,
    /// Deprecated (a warning on stderr): `--method` names the curve's accountant.
    #[arg(long, value_enum, conflicts_with = "eps", hide = true)]
    pub accountant: Option<CurveChoice>,
    /// Total delta the composed guarantee is stated at.
    #[arg(long, allow_hyphen_values = true)]
    pub delta: f64,
    /// Number of rounds k (formerly --count).
    #[arg(long = "rounds", alias = "count", value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub count: u64,
    /// Per-round delta of the components (pair mode; default 0: pure components).
    #[arg(long, allow_hyphen_values = true, conflicts_with = "eps0")]
    pub component_delta: Option<f64>,
    /// Pair mode: basic, drv, kov (default) or pld. Shuffled mode (--eps0): the certified
    /// accountant whose whole curve is composed by PLD, fmt21-numerical, clones-krr or
    /// grr-exact (default clones-krr for k-RR, fmt21-numerical for a generic randomizer;
    /// formerly --accountant); variation-ratio is refused.
    #[arg(long, value_enum)]
    pub method: Option<ComposeMethod>,
    /// PLD grid step of the loss (--method pld and shuffled mode). Pair mode: adjusted to
    /// eps/N (N = round(eps/step)) so the grid divides eps; default eps, exact for a pair.
    /// Shuffled mode: default 1/400 of the curve's eps at delta 1e-30. The grid is coarsened
    /// automatically as the composition widens.
    #[arg(long, allow_hyphen_values = true)]
    pub step: Option<f64>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Runs `account compose`.
pub fn run(a: &ComposeArgs) -> Result<()> {
    let total = Delta::new(a.delta)?.get();
    if a.count == 0 {
        usage_bail!("--rounds must be >= 1, got 0");
    }
    if let Some(step) = a.step {
        if !(step.is_finite() && step > 0.0) {
            usage_bail!("--step must be a finite number > 0, got {step}");
        }
    }
    match (a.eps, a.eps0) {
        (Some(eps), None) => run_pair(a, eps, total),
        (None, Some(eps0)) => run_shuffled(a, eps0, total),
        // clap's group makes them exclusive and one of them required.
        _ => usage_bail!("give exactly one of --eps (an (eps, delta) pair per round) and --eps0 (a shuffled randomizer)"),
    }
}

/// The runtime error when the composed PLD's mass at +infinity alone exceeds the total
/// delta: `own` is the part due to the rounds' own deltas (1 - (1 - delta1)^k, rounded down),
/// `inf_mass` the PLD's whole mass at +infinity (that plus what the PLD moved there: tails
/// below 1e-30 truncated upward, a curve's values above its top grid point).
fn no_eps(own: f64, inf_mass: f64, total: f64, why: &str, hint: &str) -> anyhow::Error {
    if own >= total {
        anyhow::anyhow!(
            "no eps reaches this delta: the rounds' own deltas already exceed it (1 - (1 - delta1)^rounds = {} >= --delta {})",
            down(own),
            echo(total)
        )
    } else {
        anyhow::anyhow!(
            "no eps reaches this delta with pld: the PLD's mass at +infinity ({why}, plus tails below 1e-30 moved there to stay certified) is {} >= --delta {}; ask a larger --delta{hint}",
            up(inf_mass),
            echo(total)
        )
    }
}

fn run_pair(a: &ComposeArgs, eps: f64, total: f64) -> Result<()> {
    if !(eps.is_finite() && eps > 0.0) {
        usage_bail!("--eps must be a finite number > 0, got {eps}");
    }
    let cd = a.component_delta.unwrap_or(0.0);
    if !(0.0..1.0).contains(&cd) {
        usage_bail!("--component-delta must be in [0, 1), got {cd}");
    }
    let method = a.method.unwrap_or(ComposeMethod::Kov);
    let curve_method = || {
        anyhow::Error::new(crate::exit::Usage(format!(
            "--method {} names the accountant of a shuffled randomizer's curve (with --eps0 and --n); with --eps use basic, drv, kov or pld",
            method.name()
        )))
    };
    if method.curve().is_some() {
        return Err(curve_method());
    }
    if a.step.is_some() && method != ComposeMethod::Pld {
        usage_bail!(
            "--step applies to --method pld only (got --method {})",
            method.name()
        );
    }
    if let Some(step) = a.step {
        if step > eps || (eps / step).round() > 1e6 {
            usage_bail!(
                "--step must be in (0, --eps {}] with --eps / --step <= 1e6, got {}",
                echo(eps),
                echo(step)
            );
        }
    }
    let t = Instant::now();
    let k = a.count;
    let mut step = None;
    let e = match method {
        ComposeMethod::Basic => {
            let (e, d) = basic(eps, cd, k);
            if d > total {
                bail!(
                    "basic composition gives delta = {} > --delta {}: raise --delta or lower --component-delta",
                    up(d),
                    echo(total)
                );
            }
            e
        }
        ComposeMethod::Drv => {
            let dp = total - k as f64 * cd;
            if dp.is_nan() || dp <= 0.0 {
                usage_bail!(
                    "--rounds times --component-delta already reaches --delta {}: nothing is left for drv",
                    echo(total)
                );
            }
            drv(eps, cd, k, dp)?.0
        }
        ComposeMethod::Kov => kov_epsilon(eps, cd, k, total)?,
        ComposeMethod::Fmt21Numerical
        | ComposeMethod::ClonesKrr
        | ComposeMethod::GrrExact
        | ComposeMethod::VariationRatio => return Err(curve_method()),
        ComposeMethod::Pld => {
            let pb = crate::cmd::common::spinner("compose (pld)", a.json);
            let one = Pld::from_epsilon_delta(eps, cd, a.step)
                .context("cannot build the PLD of one round")?;
            step = Some(one.h);
            let pld = one
                .compose(k)
                .with_context(|| format!("cannot compose {k} rounds"))?;
            pb.finish_and_clear();
            let e = pld.epsilon(total);
            if e == f64::INFINITY {
                return Err(no_eps(
                    own_delta(cd, k),
                    pld.inf_mass,
                    total,
                    "the rounds' own deltas",
                    " or use --method kov",
                ));
            }
            e
        }
    };
    let out = ComposeReport::from(PairComposition {
        epsilon: e,
        delta: total,
        method: method.name(),
        count: k,
        component_eps: eps,
        component_delta: cd,
        step,
        seconds: t.elapsed().as_secs_f64(),
    });
    if a.json {
        return print_json(&out);
    }
    crate::println_wrapped!(
        "{k} rounds of ({}, {})-DP, {}: ({}, {})-DP",
        echo(eps),
        echo(cd),
        method.name(),
        up(e),
        echo(total)
    );
    Ok(())
}

/// What the shuffled mode computes for one accountant.
struct Shuffled {
    pld_eps: f64,
    step: f64,
    pld_inf_mass: f64,
    /// (KOV eps, eps1, delta1) of the best split, if any split gives one.
    kov: Option<(f64, f64, f64)>,
    pld_seconds: f64,
}

fn run_shuffled(a: &ComposeArgs, eps0: f64, total: f64) -> Result<()> {
    let asked = match (a.method, a.accountant) {
        (None | Some(ComposeMethod::Pld), acc) => acc,
        (Some(m), None) if m.curve().is_some() => m.curve(),
        (Some(m), Some(_)) if m.curve().is_some() => usage_bail!(
            "--method {} and the deprecated --accountant both name the curve's accountant: give --method only",
            m.name()
        ),
        (Some(m), _) => usage_bail!(
            "--eps0 composes a shuffled randomizer's curve by pld only: drop --method {} (or name the curve's accountant: fmt21-numerical, clones-krr, grr-exact) or use --eps",
            m.name()
        ),
    };
    let kind = RandomizerKind::or_default(a.randomizer, a.domain);
    let r = randomizer(kind, a.domain, eps0)?;
    let Some(n_users) = a.n else {
        usage_bail!("--eps0 needs --n N (number of users shuffled each round)");
    };
    let n = NumUsers::from_f64(n_users)?;
    let choice = asked.unwrap_or(match kind {
        RandomizerKind::Generic => CurveChoice::Fmt21Numerical,
        RandomizerKind::Krr => CurveChoice::ClonesKrr,
    });
    let method = match choice {
        CurveChoice::VariationRatio => usage_bail!(
            "--method variation-ratio is not certified: the PLD composes certified curves only; use fmt21-numerical, clones-krr or grr-exact"
        ),
        CurveChoice::Fmt21Numerical => Method::Fmt21Numerical,
        CurveChoice::ClonesKrr => Method::ClonesKrr,
        CurveChoice::GrrExact => Method::GrrExact,
    };
    if kind == RandomizerKind::Generic && method != Method::Fmt21Numerical {
        usage_bail!(
            "--method {method} holds only for k-ary randomized response: use --randomizer krr --domain K, or --method fmt21-numerical"
        );
    }
    crate::cmd::common::warn_delta(total, n.get());
    let t = Instant::now();
    let res = match method {
        Method::Fmt21Numerical => shuffled(&Fmt21Numerical, a, &r, n, total),
        Method::ClonesKrr => shuffled(&StrongerClones, a, &r, n, total),
        _ => shuffled(&GrrExact, a, &r, n, total),
    }?;
    let seconds = t.elapsed().as_secs_f64();
    if res.pld_eps == f64::INFINITY {
        // A shuffled round has no delta of its own beyond its curve.
        return Err(no_eps(
            0.0,
            res.pld_inf_mass,
            total,
            "each round's curve beyond its eps at delta 1e-30",
            "",
        ));
    }
    let k = a.count;
    let out = ComposeReport::from(ShuffledComposition {
        epsilon: res.pld_eps,
        delta: total,
        count: k,
        kov: res.kov,
        step: res.step,
        seconds,
        eps0,
        n: n.get(),
        randomizer: r,
        accountant: method,
    });
    if a.json {
        return print_json(&out);
    }
    crate::println_wrapped!(
        "{k} rounds of {} with eps0 = {}, shuffled among n = {n} users ({} curve), delta = {}:",
        match r {
            LocalRandomizer::Generic { .. } => "a generic eps0-LDP randomizer".to_string(),
            LocalRandomizer::Grr { m, .. } => format!("{m}-ary randomized response"),
        },
        echo(eps0),
        method.name(),
        echo(total)
    );
    crate::println_wrapped!(
        "  pld, whole curve composed:     eps = {} ({:.3} s, grid step {})",
        up(res.pld_eps),
        res.pld_seconds,
        up(res.step)
    );
    match res.kov {
        Some((kov, e1, d1)) => crate::println_wrapped!(
            "  kov, best per-round (eps1, delta1) = ({}, {}): eps = {}",
            up(e1),
            up(d1),
            up(kov)
        ),
        None => crate::println_wrapped!("  kov: no per-round split of the curve gives a guarantee"),
    }
    Ok(())
}

/// The PLD of the accountant's curve composed over the rounds, and KOV of the best
/// per-round split of the same curve.
fn shuffled<A>(
    acct: &A,
    a: &ComposeArgs,
    r: &LocalRandomizer,
    n: NumUsers,
    total: f64,
) -> Result<Shuffled>
where
    A: CurveAccountant,
    A::Curve: Sync,
{
    let k = a.count;
    let name = acct.curve_method().name();
    let curve = acct
        .curve(r, n)
        .with_context(|| format!("--method {name} gives no curve here"))?;
    if let Some(step) = a.step {
        let top = curve.epsilon(1e-30).max(1e-12);
        if top / step > MAX_CURVE_STEPS {
            usage_bail!(
                "--step must be >= {} here: the curve spans [0, {}] (its eps at delta 1e-30) and is sampled at most {MAX_CURVE_STEPS} times, got {}",
                up(top / MAX_CURVE_STEPS),
                up(top),
                echo(step)
            );
        }
    }
    let t = Instant::now();
    let pb = crate::cmd::common::spinner(&format!("compose: pld of the {name} curve"), a.json);
    let one = Pld::shuffled(acct, r, n, a.step)
        .with_context(|| format!("cannot build the PLD of the {name} curve"))?;
    let step = one.h;
    let pld = one
        .compose(k)
        .with_context(|| format!("cannot compose {k} rounds"))?;
    let pld_eps = pld.epsilon(total);
    pb.finish_and_clear();
    let pld_seconds = t.elapsed().as_secs_f64();
    let pb = crate::cmd::common::progress(
        SPLIT_FRACTIONS.len() as u64,
        "compose: kov of the best per-round split",
        a.json,
    );
    let kov = best_kov_split(&curve, k, total, || pb.inc(1));
    pb.finish_and_clear();
    Ok(Shuffled {
        pld_eps,
        step,
        pld_inf_mass: pld.inf_mass,
        kov,
        pld_seconds,
    })
}
