//! `account shuffle`: eps of n shuffled eps0-LDP reports, by one method or the best.

use super::{is_certified, randomizer, MethodChoice, RandomizerKind};
use crate::exit::mark_uncertified;
use crate::output::{echo, print_json, table, up};
use anyhow::Result;
use blanket::accounting::{Best, LocalRandomizer, Method};
use blanket::params::{Delta, NumUsers};
use clap::Args;
use serde::Serialize;
use std::time::Instant;

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
    /// Randomizer kind.
    #[arg(long, value_enum, default_value = "generic")]
    pub randomizer: RandomizerKind,
    /// Number of values K of k-RR (--randomizer krr; formerly --k).
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

#[derive(Serialize)]
struct ShuffleOut {
    /// The certified epsilon, or eps0 (no amplification claimed) when nothing certifies.
    epsilon: Option<f64>,
    method: String,
    certified_by: Option<String>,
    /// The method's conditions hold and its bound is certified.
    valid: bool,
    /// Whether `epsilon` is certified by an amplification bound.
    certified: bool,
    /// An uncertified method's own value (variation-ratio), for comparison only.
    #[serde(skip_serializing_if = "Option::is_none")]
    uncertified_epsilon: Option<f64>,
    reason: Option<String>,
    seconds: f64,
    eps0: f64,
    n: u64,
    delta: f64,
    randomizer: LocalRandomizer,
    citation: String,
    all: Option<Vec<blanket::accounting::best::MethodResult>>,
}

/// Runs `account shuffle`.
pub fn run(a: &ShuffleArgs) -> Result<()> {
    let n = NumUsers::from_f64(a.n)?;
    let delta = Delta::new(a.delta)?;
    let r = randomizer(a.randomizer, a.domain, a.eps0)?;
    crate::cmd::common::warn_delta(delta.get(), n.get());
    let method = a.method.method();
    // `seconds` is the wall time of the whole call: for `best`, every method is evaluated once
    // (each also timed on its own in `all`) and the minimum is taken from those answers.
    let t = Instant::now();
    let (res, all) = if method == Method::Best {
        let (all, res) = Best::default().evaluate_all_and_best(&r, n, delta);
        (res, Some(all))
    } else {
        (method.accountant().guarantee(&r, n, delta), None)
    };
    let seconds = t.elapsed().as_secs_f64();
    let base = ShuffleOut {
        // No amplification claimed: the local guarantee eps0 still holds.
        epsilon: Some(a.eps0),
        method: method.name().into(),
        certified_by: None,
        valid: false,
        certified: false,
        uncertified_epsilon: None,
        reason: None,
        seconds,
        eps0: a.eps0,
        n: n.get(),
        delta: delta.get(),
        randomizer: r,
        citation: method.citation().into(),
        all,
    };
    let out = match res {
        Ok(g) if is_certified(g.method) => ShuffleOut {
            epsilon: Some(g.epsilon),
            certified_by: Some(g.method.name().into()),
            valid: true,
            certified: true,
            citation: g.method.citation().into(),
            ..base
        },
        Ok(g) => ShuffleOut {
            uncertified_epsilon: Some(g.epsilon),
            reason: Some(format!(
                "{} is not a certified bound: its value {} is for comparison only; reporting eps0 (no amplification claimed)",
                g.method,
                up(g.epsilon)
            )),
            ..base
        },
        Err(e) => ShuffleOut {
            reason: Some(format!("{e}; reporting eps0 (no amplification claimed)")),
            ..base
        },
    };
    if !out.certified {
        mark_uncertified();
    }
    if a.json {
        return print_json(&out);
    }
    println!(
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
        println!(
            "{}",
            table(&["method", "epsilon", "valid", "seconds", "reason"], &rows)
        );
        if let Ok(e) = Method::VariationRatio.accountant().epsilon(&r, n, delta) {
            println!(
                "(variation-ratio, not certified, for comparison only: {})",
                up(e)
            );
        }
    }
    match (&out.certified_by, out.certified) {
        (Some(m), true) => println!(
            "eps = {} (certified by {m}; {:.3} s)",
            up(out.epsilon.unwrap_or(f64::NAN)),
            out.seconds
        ),
        _ => println!("NOT CERTIFIED: {}", out.reason.clone().unwrap_or_default()),
    }
    Ok(())
}
