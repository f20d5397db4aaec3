//! `blanket account`: certified amplification bounds, composition, privacy curves.

use crate::output::{num, print_json, table};
use anyhow::{bail, Context, Result};
use blanket::accounting::composition::{basic, drv, kov_epsilon, Pld};
use blanket::accounting::{Best, LocalRandomizer, Method};
use blanket::params::{Delta, DomainSize, NumUsers};
use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;
use std::time::Instant;

/// The `account` subcommands.
#[derive(Subcommand)]
pub enum AccountCommand {
    /// eps of n shuffled eps0-LDP reports at a delta, by one method or the best.
    Shuffle(ShuffleArgs),
    /// Total eps of k-fold composition at a total delta.
    Compose(ComposeArgs),
    /// The (eps, delta) curve of a shuffled randomizer per method, as CSV (and a table).
    Curve(CurveArgs),
}

/// The randomizer kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RandomizerKind {
    /// Any eps0-LDP randomizer: only generic bounds apply.
    Generic,
    /// k-ary randomized response (needs --k).
    Krr,
}

/// Arguments of `account shuffle`.
#[derive(Args)]
pub struct ShuffleArgs {
    /// Local privacy eps0.
    #[arg(long)]
    pub eps0: f64,
    /// Number of users (e.g. 1e6).
    #[arg(long)]
    pub n: f64,
    /// Target delta.
    #[arg(long)]
    pub delta: f64,
    /// Randomizer kind.
    #[arg(long, value_enum, default_value = "generic")]
    pub randomizer: RandomizerKind,
    /// k of k-RR.
    #[arg(long)]
    pub k: Option<u64>,
    /// Method: fmt21-closed, fmt21-numerical, clones-krr, variation-ratio, blanket-closed,
    /// grr-exact, erlingsson-closed, or best.
    #[arg(long, default_value = "best")]
    pub method: String,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct ShuffleOut {
    epsilon: Option<f64>,
    method: String,
    certified_by: Option<String>,
    valid: bool,
    reason: Option<String>,
    seconds: f64,
    eps0: f64,
    n: u64,
    delta: f64,
    randomizer: LocalRandomizer,
    citation: String,
    all: Option<Vec<blanket::accounting::best::MethodResult>>,
}

fn randomizer(kind: RandomizerKind, k: Option<u64>, eps0: f64) -> Result<LocalRandomizer> {
    if !(eps0.is_finite() && eps0 > 0.0) {
        bail!("--eps0 must be a finite number > 0, got {eps0}");
    }
    Ok(match kind {
        RandomizerKind::Generic => LocalRandomizer::Generic { eps0 },
        RandomizerKind::Krr => {
            let k = k.context("--randomizer krr needs --k K (number of values, >= 2)")?;
            LocalRandomizer::krr(DomainSize::new(k)?, eps0)
        }
    })
}

fn run_shuffle(a: &ShuffleArgs) -> Result<()> {
    let n = NumUsers::from_f64(a.n)?;
    let delta = Delta::new(a.delta)?;
    let r = randomizer(a.randomizer, a.k, a.eps0)?;
    let method = Method::from_name(&a.method).with_context(|| {
        format!(
            "unknown --method {}: use fmt21-closed, fmt21-numerical, clones-krr, variation-ratio, blanket-closed, grr-exact, erlingsson-closed or best",
            a.method
        )
    })?;
    let t = Instant::now();
    let acct = method.accountant();
    let res = acct.guarantee(&r, n, delta);
    let seconds = t.elapsed().as_secs_f64();
    let all = (method == Method::Best).then(|| Best::default().evaluate_all(&r, n, delta));
    let out = match res {
        Ok(g) => ShuffleOut {
            epsilon: Some(g.epsilon),
            method: method.name().into(),
            certified_by: Some(g.method.name().into()),
            valid: true,
            reason: None,
            seconds,
            eps0: a.eps0,
            n: n.get(),
            delta: delta.get(),
            randomizer: r,
            citation: g.method.citation().into(),
            all,
        },
        Err(e) => ShuffleOut {
            // No amplification claimed: the local guarantee eps0 still holds.
            epsilon: Some(a.eps0),
            method: method.name().into(),
            certified_by: None,
            valid: false,
            reason: Some(format!("{e}; reporting eps0 (no amplification claimed)")),
            seconds,
            eps0: a.eps0,
            n: n.get(),
            delta: delta.get(),
            randomizer: r,
            citation: method.citation().into(),
            all,
        },
    };
    if a.json {
        return print_json(&out);
    }
    println!(
        "shuffled {} with eps0 = {}, n = {}, delta = {}",
        match r {
            LocalRandomizer::Generic { .. } => "generic eps0-LDP randomizer".to_string(),
            LocalRandomizer::Grr { m, .. } => format!("{m}-ary randomized response"),
        },
        a.eps0,
        n,
        delta
    );
    if let Some(all) = &out.all {
        let rows: Vec<Vec<String>> = all
            .iter()
            .map(|x| {
                vec![
                    x.method.name().to_string(),
                    x.epsilon.map_or("-".into(), num),
                    if x.epsilon.is_some() {
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
        if let Some(m) = Method::from_name("variation-ratio") {
            if let Ok(e) = m.accountant().epsilon(&r, n, delta) {
                println!(
                    "(variation-ratio, not certified, for comparison only: {})",
                    num(e)
                );
            }
        }
    }
    match (&out.certified_by, out.valid) {
        (Some(m), true) => println!(
            "eps = {} (certified by {m}; {:.3} s)",
            num(out.epsilon.unwrap_or(f64::NAN)),
            out.seconds
        ),
        _ => println!("not valid: {}", out.reason.clone().unwrap_or_default()),
    }
    Ok(())
}

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
    #[arg(long)]
    pub eps: f64,
    /// Total delta the composed guarantee is stated at.
    #[arg(long)]
    pub delta: f64,
    /// Number of rounds k.
    #[arg(long)]
    pub count: u64,
    /// Per-round delta of the components (default 0: pure components).
    #[arg(long, default_value_t = 0.0)]
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

fn run_compose(a: &ComposeArgs) -> Result<()> {
    if !(a.eps.is_finite() && a.eps > 0.0) {
        bail!("--eps must be a finite number > 0, got {}", a.eps);
    }
    let total = Delta::new(a.delta)?.get();
    if a.count == 0 {
        bail!("--count must be >= 1");
    }
    if !(0.0..1.0).contains(&a.component_delta) {
        bail!(
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
                bail!("basic composition gives delta = {d} > {total}");
            }
            (e, "basic")
        }
        ComposeMethod::Drv => {
            let dp = total - k as f64 * cd;
            if !(dp > 0.0) {
                bail!("k * component delta already exceeds the total delta");
            }
            (drv(a.eps, cd, k, dp)?.0, "drv")
        }
        ComposeMethod::Kov => (kov_epsilon(a.eps, cd, k, total)?, "kov"),
        ComposeMethod::Pld => {
            if cd > 0.0 {
                bail!("--method pld composes pure components only (component delta 0)");
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
        a.eps,
        cd,
        num(eps),
        total
    );
    Ok(())
}

/// Arguments of `account curve`.
#[derive(Args)]
pub struct CurveArgs {
    /// Local privacy eps0.
    #[arg(long)]
    pub eps0: f64,
    /// Number of users.
    #[arg(long)]
    pub n: f64,
    /// Randomizer kind.
    #[arg(long, value_enum, default_value = "krr")]
    pub randomizer: RandomizerKind,
    /// k of k-RR.
    #[arg(long)]
    pub k: Option<u64>,
    /// Smallest delta of the curve (the curve spans [delta-min, 0.1] on a log grid).
    #[arg(long, default_value_t = 1e-12)]
    pub delta_min: f64,
    /// Points on the curve.
    #[arg(long, default_value_t = 23)]
    pub points: usize,
    /// Output directory for curve.csv.
    #[arg(long, default_value = "out")]
    pub out: std::path::PathBuf,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct CurvePoint {
    delta: f64,
    method: &'static str,
    epsilon: Option<f64>,
}

fn run_curve(a: &CurveArgs) -> Result<()> {
    let n = NumUsers::from_f64(a.n)?;
    let r = randomizer(a.randomizer, a.k, a.eps0)?;
    let dmin = Delta::new(a.delta_min)?.get();
    if a.points < 2 || a.points > 1000 {
        bail!("--points must be in 2..=1000");
    }
    let mut pts = Vec::new();
    let (l0, l1) = (dmin.log10(), -1.0f64);
    for i in 0..a.points {
        let d = 10f64.powf(l0 + (l1 - l0) * i as f64 / (a.points - 1) as f64);
        let delta = Delta::new(d)?;
        for m in Method::ALL {
            let e = m.accountant().epsilon(&r, n, delta).ok();
            pts.push(CurvePoint {
                delta: d,
                method: m.name(),
                epsilon: e,
            });
        }
    }
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let path = a.out.join("curve.csv");
    let mut w =
        csv::Writer::from_path(&path).with_context(|| format!("writing {}", path.display()))?;
    w.write_record(["delta", "method", "epsilon", "valid"])?;
    for p in &pts {
        w.write_record([
            format!("{:e}", p.delta),
            p.method.to_string(),
            p.epsilon.map_or(String::new(), |e| format!("{e}")),
            p.epsilon.is_some().to_string(),
        ])?;
    }
    w.flush()?;
    if a.json {
        return print_json(&pts);
    }
    let mut rows = Vec::new();
    for chunk in pts.chunks(Method::ALL.len()) {
        let mut row = vec![format!("{:.1e}", chunk[0].delta)];
        row.extend(chunk.iter().map(|p| p.epsilon.map_or("-".into(), num)));
        rows.push(row);
    }
    let mut header = vec!["delta"];
    header.extend(Method::ALL.iter().map(|m| m.name()));
    println!("{}", table(&header, &rows));
    println!(
        "wrote {} (variation-ratio is not certified: see docs/accounting.md)",
        path.display()
    );
    Ok(())
}

/// Runs an `account` subcommand.
pub fn run(c: &AccountCommand) -> Result<()> {
    match c {
        AccountCommand::Shuffle(a) => run_shuffle(a),
        AccountCommand::Compose(a) => run_compose(a),
        AccountCommand::Curve(a) => run_curve(a),
    }
}
