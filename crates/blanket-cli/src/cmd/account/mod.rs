//! `blanket account`: certified amplification bounds, composition, privacy curves, and the
//! inverse queries (eps0 allowed, users needed, error expected), one module per concept.

mod compose;
mod curve;
mod inverse;
mod shuffle;

use crate::usage_bail;
use anyhow::Result;
use blanket::accounting::{LocalRandomizer, Method};
use blanket::params::DomainSize;
use clap::{Subcommand, ValueEnum};

pub(crate) use blanket_report::account::best_kov_split;
pub use blanket_report::account::is_certified;
pub use compose::ComposeArgs;
pub use curve::CurveArgs;
pub use inverse::{Eps0Args, ErrorArgs, UsersArgs};
pub use shuffle::ShuffleArgs;

/// The `account` subcommands.
#[derive(Subcommand)]
pub enum AccountCommand {
    /// eps of n shuffled eps0-LDP reports at a delta, by one method or the best.
    Shuffle(ShuffleArgs),
    /// Total eps of k-fold composition at a total delta.
    Compose(ComposeArgs),
    /// The (eps, delta) curve of a shuffled randomizer per method, as CSV and a PNG plot.
    Curve(CurveArgs),
    /// The largest local eps0 each user may use for a target (eps, delta) with n users.
    Eps0(Eps0Args),
    /// The number of users needed for a target error at (eps, delta).
    Users(UsersArgs),
    /// The error a calibrated protocol is predicted to have at n users and (eps, delta).
    Error(ErrorArgs),
}

/// The randomizer kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RandomizerKind {
    /// Any eps0-LDP randomizer: only generic bounds apply.
    Generic,
    /// k-ary randomized response over --domain values.
    Krr,
}

impl RandomizerKind {
    /// The one default of every `account` subcommand: k-RR when `--domain` is given, a generic
    /// eps0-LDP randomizer otherwise.
    pub fn or_default(kind: Option<Self>, domain: Option<u64>) -> Self {
        kind.unwrap_or(if domain.is_some() {
            RandomizerKind::Krr
        } else {
            RandomizerKind::Generic
        })
    }
}

/// The largest local eps0 the CLI accepts: beyond it a randomizer is essentially
/// deterministic (k-RR's blanket probability is below 1e-43) and the accountants' f64
/// arithmetic has nothing left to certify.
pub const EPS0_MAX: f64 = 100.0;

/// Checks a local eps0 given on the command line.
pub fn check_eps0(eps0: f64) -> Result<()> {
    if !(eps0.is_finite() && eps0 > 0.0 && eps0 <= EPS0_MAX) {
        usage_bail!(
            "--eps0 must be a number in (0, {EPS0_MAX}], got {}",
            crate::output::echo(eps0)
        );
    }
    Ok(())
}

/// The randomizer of `--randomizer`, `--domain` and `--eps0`.
pub(crate) fn randomizer(
    kind: RandomizerKind,
    domain: Option<u64>,
    eps0: f64,
) -> Result<LocalRandomizer> {
    check_eps0(eps0)?;
    Ok(match kind {
        RandomizerKind::Generic => {
            if domain.is_some() {
                usage_bail!("--domain applies to --randomizer krr only (a generic randomizer has no domain)");
            }
            LocalRandomizer::Generic { eps0 }
        }
        RandomizerKind::Krr => {
            let Some(k) = domain else {
                usage_bail!("--randomizer krr needs --domain K (number of values, >= 2)");
            };
            LocalRandomizer::krr(DomainSize::new(k)?, eps0)
        }
    })
}

/// The `--method` choices of `account shuffle` and `account eps0` (the names of
/// [`Method`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MethodChoice {
    /// The smallest certified bound among the applicable methods.
    Best,
    /// Balle et al. 2019, Theorem 3.1 (k-RR only; certified).
    BlanketClosed,
    /// Erlingsson et al. 2019 closed form (certified).
    ErlingssonClosed,
    /// Feldman, McMillan, Talwar 2021 closed form (certified).
    #[value(name = "fmt21-closed")]
    Fmt21Closed,
    /// Feldman, McMillan, Talwar 2021 clone reduction, computed exactly (certified).
    #[value(name = "fmt21-numerical")]
    Fmt21Numerical,
    /// Feldman, McMillan, Talwar 2023 stronger clones (k-RR only; certified).
    ClonesKrr,
    /// Wang et al. 2024 variation-ratio bound (k-RR only): NOT certified, comparison only.
    VariationRatio,
    /// Exact blanket divergence of shuffled k-RR (k-RR only; certified).
    GrrExact,
}

impl MethodChoice {
    /// The core's method.
    pub fn method(self) -> Method {
        match self {
            MethodChoice::Best => Method::Best,
            MethodChoice::BlanketClosed => Method::BlanketClosed,
            MethodChoice::ErlingssonClosed => Method::ErlingssonClosed,
            MethodChoice::Fmt21Closed => Method::Fmt21Closed,
            MethodChoice::Fmt21Numerical => Method::Fmt21Numerical,
            MethodChoice::ClonesKrr => Method::ClonesKrr,
            MethodChoice::VariationRatio => Method::VariationRatio,
            MethodChoice::GrrExact => Method::GrrExact,
        }
    }
}

/// Runs an `account` subcommand.
pub fn run(c: &AccountCommand) -> Result<()> {
    match c {
        AccountCommand::Shuffle(a) => shuffle::run(a),
        AccountCommand::Compose(a) => compose::run(a),
        AccountCommand::Curve(a) => curve::run(a),
        AccountCommand::Eps0(a) => inverse::run_eps0(a),
        AccountCommand::Users(a) => inverse::run_users(a),
        AccountCommand::Error(a) => inverse::run_error(a),
    }
}
