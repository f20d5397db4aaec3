//! `account shuffle`: eps of n shuffled eps0-LDP reports, by one method or the best.

use super::{is_certified, randomizer, MethodChoice, RandomizerKind};
use crate::exit::mark_uncertified;
use crate::output::{echo, print_json, table, up};
use anyhow::Result;
use blanket::accounting::{LocalRandomizer, Method};
use blanket::params::{Delta, NumUsers};
use clap::Args;

/// Arguments of `account shuffle`.
#[derive(Args)]
pub struct ShuffleArgs {
    /// Local privacy eps0, in (0, 100].
    #[arg(long, allow_hyphen_values = true)]
    pub eps0: f64,
    /// Number of users (e.g. 1e6).
    #[arg(long, value_parser = crate::numeric::parse_users, allow_hyphen_values = true)]
    pub n: f64,
    /// Target delta, in (0, 1).
    #[arg(long, allow_hyphen_values = true)]
    pub delta: f64,
    /// Randomizer kind (default: krr when --domain is given, generic otherwise).
    #[arg(long, value_enum)]
    pub randomizer: Option<RandomizerKind>,
    /// Number of values K of k-RR (--randomizer krr; formerly --k, deprecated).
    #[arg(long, alias = "k", value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub domain: Option<u64>,
    /// Method. variation-ratio is NOT certified: its value is reported for comparison only
    /// (exit code 3).
    #[arg(long, value_enum, default_value = "best")]
    pub method: MethodChoice,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Runs `account shuffle`.
pub fn run(a: &ShuffleArgs) -> Result<()> {
    let n = NumUsers::from_f64(a.n)?;
    let delta = Delta::new(a.delta)?;
    let r = randomizer(
        RandomizerKind::or_default(a.randomizer, a.domain),
        a.domain,
        a.eps0,
    )?;
    crate::cmd::common::warn_delta(delta.get(), n.get());
    let method = a.method.method();
    let out = blanket_report::account::shuffle(r, a.eps0, n, delta, method);
    if !out.certified {
        mark_uncertified();
    }
    if a.json {
        return print_json(&out);
    }
    crate::println_wrapped!(
        "shuffled {} with eps0 = {}, n = {}, delta = {}",
        match r {
            LocalRandomizer::Generic { .. } => "generic eps0-LDP randomizer".to_string(),
            LocalRandomizer::Grr { m, .. } => format!("{m}-ary randomized response"),
        },
        echo(a.eps0),
        n,
        echo(delta.get())
    );
    if let Some(all) = &out.all {
        let rows: Vec<Vec<String>> = all
            .iter()
            .map(|x| {
                vec![
                    x.method.name().to_string(),
                    x.epsilon.map_or("-".into(), up),
                    if x.epsilon.is_some() && is_certified(x.method) {
                        "yes".into()
                    } else {
                        "no".into()
                    },
                    format!("{:.4}", x.seconds),
                    x.reason.clone().unwrap_or_default(),
                ]
            })
            .collect();
        crate::println_wrapped!(
            "{}",
            table(&["method", "epsilon", "valid", "seconds", "reason"], &rows)
        );
        if let Ok(e) = Method::VariationRatio.accountant().epsilon(&r, n, delta) {
            crate::println_wrapped!(
                "(variation-ratio, not certified, for comparison only: {})",
                up(e)
            );
        }
    }
    match (&out.certified_by, out.certified) {
        (Some(m), true) => crate::println_wrapped!(
            "eps = {} (certified by {m}; {:.3} s)",
            up(out.epsilon.unwrap_or(f64::NAN)),
            out.seconds
        ),
        _ => crate::println_wrapped!("NOT CERTIFIED: {}", out.reason.clone().unwrap_or_default()),
    }
    Ok(())
}
