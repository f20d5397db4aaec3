//! `account compose`: total eps of k-fold composition at a total delta.

use crate::output::{echo, print_json, up};
use crate::usage_bail;
use anyhow::{bail, Result};
use blanket::accounting::composition::{basic, drv, kov_epsilon, Pld};
use blanket::params::Delta;
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::time::Instant;

/// Composition methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ComposeMethod {
    /// Basic composition: (k eps, k delta).
    Basic,
    /// Advanced composition (Dwork, Rothblum, Vadhan).
    Drv,
    /// Optimal homogeneous composition (Kairouz, Oh, Viswanath), exact.
    Kov,
    /// Privacy-loss distribution of randomized response composed by FFT (pure components).
    Pld,
}

/// Arguments of `account compose`.
#[derive(Args)]
pub struct ComposeArgs {
    /// Per-round eps.
    #[arg(long, allow_hyphen_values = true)]
    pub eps: f64,
    /// Total delta the composed guarantee is stated at.
    #[arg(long, allow_hyphen_values = true)]
    pub delta: f64,
    /// Number of rounds k (formerly --count).
    #[arg(long = "rounds", alias = "count", value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub count: u64,
    /// Per-round delta of the components (default 0: pure components).
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    pub component_delta: f64,
    /// Method.
    #[arg(long, value_enum, default_value = "kov")]
    pub method: ComposeMethod,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct ComposeOut {
    epsilon: f64,
    delta: f64,
    method: &'static str,
    count: u64,
    component_eps: f64,
    component_delta: f64,
    seconds: f64,
}

/// Runs `account compose`.
pub fn run(a: &ComposeArgs) -> Result<()> {
    if !(a.eps.is_finite() && a.eps > 0.0) {
        usage_bail!("--eps must be a finite number > 0, got {}", a.eps);
    }
    let total = Delta::new(a.delta)?.get();
    if a.count == 0 {
        usage_bail!("--rounds must be >= 1, got 0");
    }
    if !(0.0..1.0).contains(&a.component_delta) {
        usage_bail!(
            "--component-delta must be in [0, 1), got {}",
            a.component_delta
        );
    }
    let t = Instant::now();
    let k = a.count;
    let cd = a.component_delta;
    let (eps, name) = match a.method {
        ComposeMethod::Basic => {
            let (e, d) = basic(a.eps, cd, k);
            if d > total {
                bail!(
                    "basic composition gives delta = {} > --delta {}: raise --delta or lower --component-delta",
                    up(d),
                    echo(total)
                );
            }
            (e, "basic")
        }
        ComposeMethod::Drv => {
            let dp = total - k as f64 * cd;
            if dp.is_nan() || dp <= 0.0 {
                usage_bail!(
                    "--rounds times --component-delta already reaches --delta {}: nothing is left for drv",
                    echo(total)
                );
            }
            (drv(a.eps, cd, k, dp)?.0, "drv")
        }
        ComposeMethod::Kov => (kov_epsilon(a.eps, cd, k, total)?, "kov"),
        ComposeMethod::Pld => {
            if cd > 0.0 {
                usage_bail!("--method pld composes pure components only (component delta 0)");
            }
            let h = (a.eps / 200.0).max(1e-5);
            let pld = Pld::pure(a.eps, h).compose(k)?;
            (pld.epsilon(total), "pld")
        }
    };
    let out = ComposeOut {
        epsilon: eps,
        delta: total,
        method: name,
        count: k,
        component_eps: a.eps,
        component_delta: cd,
        seconds: t.elapsed().as_secs_f64(),
    };
    if a.json {
        return print_json(&out);
    }
    println!(
        "{k} rounds of ({}, {})-DP, {name}: ({}, {})-DP",
        echo(a.eps),
        echo(cd),
        up(eps),
        echo(total)
    );
    Ok(())
}
