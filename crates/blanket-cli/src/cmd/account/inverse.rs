//! The inverse queries: `account eps0` (largest local eps0), `account users` (users needed
//! for a target error) and `account error` (error expected at n users).

use super::{is_certified, MethodChoice, RandomizerKind};
use crate::accountant::{resolve, AccountantChoice};
use crate::exit::mark_uncertified;
use crate::output::{down, echo, num, print_json, up};
use crate::usage_bail;
use anyhow::{Context, Result};
use blanket::accounting::{LocalRandomizer, Method, ShuffleAccountant};
use blanket::calibrate::{calibrate, max_eps0, n_for_error, Calibratable, LocalPrivacy, Target};
use blanket::params::{Delta, DomainSize, Epsilon, NumUsers, Precision};
use blanket::protocol::{DomainConvention, HistogramShape, ScalarSumShape, VectorSumShape};
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::time::Instant;

/// Arguments of `account eps0`.
#[derive(Args)]
pub struct Eps0Args {
    /// Number of users.
    #[arg(long, value_parser = crate::numeric::parse_users, allow_hyphen_values = true)]
    pub n: f64,
    /// Target epsilon of the shuffled output.
    #[arg(long, allow_hyphen_values = true)]
    pub eps: f64,
    /// Target delta.
    #[arg(long, allow_hyphen_values = true)]
    pub delta: f64,
    /// Randomizer kind (default: krr when --domain is given, generic otherwise).
    #[arg(long, value_enum)]
    pub randomizer: Option<RandomizerKind>,
    /// Number of values K of k-RR (--randomizer krr; formerly --k, deprecated).
    #[arg(long, alias = "k", value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub domain: Option<u64>,
    /// Method (as for `account shuffle`). variation-ratio is NOT certified (exit code 3).
    #[arg(long, value_enum, default_value = "best")]
    pub method: MethodChoice,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Eps0Out {
    /// The largest eps0 (a setting) under a certified method; null when the method is not
    /// certified (then `uncertified_eps0` holds the method's own answer).
    eps0: Option<f64>,
    /// An uncertified method's largest eps0 (variation-ratio), for comparison only.
    #[serde(skip_serializing_if = "Option::is_none")]
    uncertified_eps0: Option<f64>,
    method: String,
    /// The certifying method; null when the method is not certified.
    certified_by: Option<String>,
    /// The certified shuffled epsilon at eps0; null when the method is not certified.
    certified_epsilon: Option<f64>,
    /// Whether the shuffled guarantee at eps0 is certified.
    certified: bool,
    /// An uncertified method's own epsilon at eps0 (variation-ratio), for comparison only.
    #[serde(skip_serializing_if = "Option::is_none")]
    uncertified_epsilon: Option<f64>,
    eps: f64,
    delta: f64,
    n: u64,
    randomizer: &'static str,
    k: Option<u64>,
    seconds: f64,
}

/// Runs `account eps0`.
pub fn run_eps0(a: &Eps0Args) -> Result<()> {
    let target = Target {
        eps: Epsilon::new(a.eps)?,
        delta: Delta::new(a.delta)?,
        n: NumUsers::from_f64(a.n)?,
    };
    crate::cmd::common::warn_delta(target.delta.get(), target.n.get());
    let method = a.method.method();
    let k = match RandomizerKind::or_default(a.randomizer, a.domain) {
        RandomizerKind::Generic => {
            if a.domain.is_some() {
                usage_bail!("--domain applies to --randomizer krr only (a generic randomizer has no domain)");
            }
            if matches!(
                method,
                Method::ClonesKrr
                    | Method::VariationRatio
                    | Method::GrrExact
                    | Method::BlanketClosed
            ) {
                usage_bail!(
                    "--method {method} holds only for k-ary randomized response: use --randomizer krr --domain K"
                );
            }
            None
        }
        RandomizerKind::Krr => {
            let Some(k) = a.domain else {
                usage_bail!("--randomizer krr needs --domain K (number of values, >= 2)");
            };
            Some(DomainSize::new(k)?)
        }
    };
    let t = Instant::now();
    let acct = method.accountant();
    let eps0 = max_eps0(k, &target, acct.as_ref())?;
    let r = match k {
        Some(k) => LocalRandomizer::krr(k, eps0),
        None => LocalRandomizer::Generic { eps0 },
    };
    let g = acct.guarantee(&r, target.n, target.delta)?;
    let certified = is_certified(g.method);
    let out = Eps0Out {
        eps0: certified.then_some(eps0),
        uncertified_eps0: (!certified).then_some(eps0),
        method: method.name().into(),
        certified_by: certified.then(|| g.method.name().into()),
        certified_epsilon: certified.then_some(g.epsilon),
        certified,
        uncertified_epsilon: (!certified).then_some(g.epsilon),
        eps: a.eps,
        delta: a.delta,
        n: target.n.get(),
        randomizer: if k.is_some() { "krr" } else { "generic" },
        k: k.map(|k| u64::from(k.get())),
        seconds: t.elapsed().as_secs_f64(),
    };
    if !certified {
        mark_uncertified();
    }
    if a.json {
        return print_json(&out);
    }
    if certified {
        crate::println_wrapped!(
            "largest eps0 per user (a setting, rounded down): {} (shuffled eps = {} at delta = {}, certified by {})",
            down(eps0),
            up(g.epsilon),
            echo(out.delta),
            g.method
        );
    } else {
        crate::println_wrapped!(
            "NOT CERTIFIED: {} is not a certified bound; under it eps0 = {} would give eps = {} at delta = {} (comparison only, no guarantee)",
            g.method,
            down(eps0),
            up(g.epsilon),
            echo(out.delta)
        );
    }
    Ok(())
}

/// Protocols the users / error queries know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProtocolKind {
    /// Histogram over --domain categories.
    Histogram,
    /// Sum of reals in [0, 1].
    ScalarSum,
    /// Sum of vectors in [0, 1]^d (needs --d and --t).
    VectorSum,
}

/// The protocol shape options shared by `account users` and `account error`.
#[derive(Args, Debug, Clone)]
pub struct ShapeArgs {
    /// Protocol.
    #[arg(long, value_enum)]
    pub protocol: ProtocolKind,
    /// Number of categories m (histogram).
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub domain: Option<u64>,
    /// Fixed precision k (scalar-sum, vector-sum; default: the best k).
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub k: Option<u64>,
    /// Dimension d (vector-sum).
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub d: Option<u64>,
    /// Coordinates each user reports (vector-sum).
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub t: Option<u64>,
    /// Which bound certifies the guarantee.
    #[arg(long, value_enum, default_value_t)]
    pub accountant: AccountantChoice,
}

/// Arguments of `account users`.
#[derive(Args)]
pub struct UsersArgs {
    #[command(flatten)]
    pub shape: ShapeArgs,
    /// Target epsilon.
    #[arg(long, allow_hyphen_values = true)]
    pub eps: f64,
    /// Target delta.
    #[arg(long, allow_hyphen_values = true)]
    pub delta: f64,
    /// Target MSE of the normalized estimate: the estimated frequencies (count / n) for a
    /// histogram (mean over categories), the estimated mean (sum / n) for scalar-sum, the
    /// estimated mean vector (squared error summed over the d coordinates) for vector-sum.
    #[arg(long, allow_hyphen_values = true)]
    pub target_mse: f64,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `account error`.
#[derive(Args)]
pub struct ErrorArgs {
    #[command(flatten)]
    pub shape: ShapeArgs,
    /// Number of users.
    #[arg(long, value_parser = crate::numeric::parse_users, allow_hyphen_values = true)]
    pub n: f64,
    /// Target epsilon.
    #[arg(long, allow_hyphen_values = true)]
    pub eps: f64,
    /// Target delta.
    #[arg(long, allow_hyphen_values = true)]
    pub delta: f64,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// A protocol's calibration, flattened for output.
#[derive(Serialize)]
struct ErrorOut {
    protocol: &'static str,
    n: u64,
    eps: f64,
    delta: f64,
    predicted_mse: f64,
    predicted_mse_meaning: &'static str,
    normalized_mse: f64,
    gamma: f64,
    eps0: f64,
    eps0_user: f64,
    k: Option<u64>,
    method: String,
    seconds: f64,
}

#[derive(Serialize)]
struct UsersOut {
    protocol: &'static str,
    n: u64,
    eps: f64,
    delta: f64,
    target_mse: f64,
    normalized_mse: f64,
    predicted_mse: f64,
    gamma: f64,
    k: Option<u64>,
    method: String,
    seconds: f64,
}

enum Shape {
    Histogram(HistogramShape),
    ScalarSum(ScalarSumShape),
    VectorSum(VectorSumShape),
}

impl ShapeArgs {
    fn shape(&self) -> Result<Shape> {
        let k = self.k.map(Precision::new).transpose()?;
        let unused = |flag: &str, v: Option<u64>| -> Result<()> {
            if v.is_some() {
                usage_bail!(
                    "--{flag} does not apply to --protocol {}",
                    self.protocol
                        .to_possible_value()
                        .map_or_else(String::new, |v| v.get_name().to_string())
                );
            }
            Ok(())
        };
        Ok(match self.protocol {
            ProtocolKind::Histogram => {
                unused("k", self.k)?;
                unused("d", self.d)?;
                unused("t", self.t)?;
                let Some(m) = self.domain else {
                    usage_bail!("--protocol histogram needs --domain M (number of categories)");
                };
                Shape::Histogram(HistogramShape {
                    m: DomainSize::new(m)?,
                })
            }
            ProtocolKind::ScalarSum => {
                unused("domain", self.domain)?;
                unused("d", self.d)?;
                unused("t", self.t)?;
                Shape::ScalarSum(ScalarSumShape {
                    k,
                    convention: DomainConvention::TrueDomain,
                })
            }
            ProtocolKind::VectorSum => {
                unused("domain", self.domain)?;
                let Some(d) = self.d else {
                    usage_bail!("--protocol vector-sum needs --d D (dimension, >= 1)");
                };
                let Some(t) = self.t else {
                    usage_bail!("--protocol vector-sum needs --t T (coordinates per user, 1..=d)");
                };
                Shape::VectorSum(VectorSumShape::new(d, t, k, DomainConvention::TrueDomain)?)
            }
        })
    }
}

impl Shape {
    fn name(&self) -> &'static str {
        match self {
            Shape::Histogram(_) => "histogram",
            Shape::ScalarSum(_) => "scalar-sum",
            Shape::VectorSum(_) => "vector-sum",
        }
    }

    fn meaning(&self) -> &'static str {
        match self {
            Shape::Histogram(_) => {
                "mean over the m categories of the variance of the estimated count (worst case over data)"
            }
            Shape::ScalarSum(_) => "worst case over data of the expected squared error of the estimated sum",
            Shape::VectorSum(_) => "worst case over data of n users of the expected squared error of the estimated mean vector, summed over the d coordinates (already normalized)",
        }
    }

    /// (predicted mse, normalized mse, gamma, local privacy, k, method) of the calibration at
    /// `target`.
    fn calibrate(
        &self,
        target: &Target,
        acct: &dyn ShuffleAccountant,
    ) -> Result<(f64, f64, f64, LocalPrivacy, Option<u64>, Method)> {
        fn go<P: Calibratable>(
            p: &P,
            t: &Target,
            acct: &dyn ShuffleAccountant,
            k: impl Fn(P::Choice) -> Option<u64>,
        ) -> Result<(f64, f64, f64, LocalPrivacy, Option<u64>, Method)> {
            let c = calibrate(p, t, acct)?;
            let local = LocalPrivacy {
                per_message: c.eps0,
                per_user: c.eps0_user,
            };
            Ok((
                c.predicted_mse,
                c.normalized_mse,
                c.gamma.get(),
                local,
                k(c.choice),
                c.guarantee.method,
            ))
        }
        match self {
            Shape::Histogram(p) => go(p, target, acct, |_| None),
            Shape::ScalarSum(p) => go(p, target, acct, |k| Some(u64::from(k.get()))),
            Shape::VectorSum(p) => go(p, target, acct, |k| Some(u64::from(k.get()))),
        }
    }

    fn n_for(&self, target: &Target, acct: &dyn ShuffleAccountant, x: f64) -> Option<u64> {
        match self {
            Shape::Histogram(p) => n_for_error(p, target, acct, x),
            Shape::ScalarSum(p) => n_for_error(p, target, acct, x),
            Shape::VectorSum(p) => n_for_error(p, target, acct, x),
        }
    }
}

/// Runs `account error`.
pub fn run_error(a: &ErrorArgs) -> Result<()> {
    let target = Target {
        eps: Epsilon::new(a.eps)?,
        delta: Delta::new(a.delta)?,
        n: NumUsers::from_f64(a.n)?,
    };
    let shape = a.shape.shape()?;
    let acct = resolve(a.shape.accountant);
    let t = Instant::now();
    let (mse, normalized_mse, gamma, local, k, method) = shape.calibrate(&target, acct.as_ref())?;
    let n = target.n.get();
    let out = ErrorOut {
        protocol: shape.name(),
        n,
        eps: a.eps,
        delta: a.delta,
        predicted_mse: mse,
        predicted_mse_meaning: shape.meaning(),
        normalized_mse,
        gamma,
        eps0: local.per_message,
        eps0_user: local.per_user,
        k,
        method: method.name().into(),
        seconds: t.elapsed().as_secs_f64(),
    };
    if a.json {
        return print_json(&out);
    }
    crate::println_wrapped!(
        "{} with n = {n} at (eps = {}, delta = {}): predicted MSE {} ({}); per-user normalized MSE {}; gamma = {}{}, eps0 per message (local DP) {}, eps0 per user (local DP guarantee) {}, certified by {}",
        out.protocol,
        echo(a.eps),
        echo(a.delta),
        num(mse),
        out.predicted_mse_meaning,
        num(out.normalized_mse),
        up(gamma),
        k.map_or(String::new(), |k| format!(", k = {k}")),
        up(out.eps0),
        up(out.eps0_user),
        out.method
    );
    Ok(())
}

/// Runs `account users`.
pub fn run_users(a: &UsersArgs) -> Result<()> {
    let eps = Epsilon::new(a.eps)?;
    let delta = Delta::new(a.delta)?;
    if !(a.target_mse.is_finite() && a.target_mse > 0.0) {
        usage_bail!(
            "--target-mse must be a finite number > 0, got {}",
            a.target_mse
        );
    }
    let shape = a.shape.shape()?;
    let acct = resolve(a.shape.accountant);
    let t = Instant::now();
    let target = Target {
        eps,
        delta,
        n: NumUsers::new(2)?,
    };
    let pb = crate::cmd::common::spinner("searching n", a.json);
    let n = shape
        .n_for(&target, acct.as_ref(), a.target_mse)
        .with_context(|| {
            format!(
                "no n up to 2^48 reaches target-mse {} at eps = {}, delta = {}",
                a.target_mse, a.eps, a.delta
            )
        })?;
    let at = Target {
        n: NumUsers::new(n)?,
        ..target
    };
    let (mse, normalized_mse, gamma, _, k, method) = shape.calibrate(&at, acct.as_ref())?;
    pb.finish_and_clear();
    let out = UsersOut {
        protocol: shape.name(),
        n,
        eps: a.eps,
        delta: a.delta,
        target_mse: a.target_mse,
        normalized_mse,
        predicted_mse: mse,
        gamma,
        k,
        method: method.name().into(),
        seconds: t.elapsed().as_secs_f64(),
    };
    if a.json {
        return print_json(&out);
    }
    crate::println_wrapped!(
        "{}: n = {n} users reach normalized MSE {} <= {} at (eps = {}, delta = {}) (gamma = {}{}, certified by {})",
        out.protocol,
        num(out.normalized_mse),
        echo(a.target_mse),
        echo(a.eps),
        echo(a.delta),
        up(gamma),
        k.map_or(String::new(), |k| format!(", k = {k}")),
        out.method
    );
    Ok(())
}
