//! `blanket bench accounting`: compute time of each numerical amplification bound at
//! n = 1e6 and 1e8, delta = 1e-6, eps0 in {0.5, 1, 2, 4, 8} (release build recommended);
//! the k-RR bounds with k = 10. Then PLD composition (`composition`): an (eps, 0) pair
//! (eps 0.1, 1e5 rounds, delta 1e-10) and the clones-krr curve of shuffled k-RR (n = 1e6,
//! eps0 = 1, 1e5 rounds, delta 1e-8), each beside KOV.

use crate::output::{print_json, table, up};
use anyhow::Result;
use blanket::accounting::clones::CloneReduction;
use blanket::accounting::composition::{kov_epsilon, Pld};
use blanket::accounting::grr_exact::GrrPair;
use blanket::accounting::variation_ratio::VariationRatioKrr;
use serde::Serialize;
use std::time::Instant;

#[derive(Serialize)]
struct Row {
    method: &'static str,
    n: u64,
    eps0: f64,
    epsilon: f64,
    /// Whether `epsilon` is a certified bound (variation-ratio is not).
    certified: bool,
    seconds: f64,
}

/// One PLD composition timed, beside KOV.
#[derive(Serialize)]
struct ComposeRow {
    /// "pld pair" (an (eps, 0) pair) or "pld clones-krr" (a shuffled k-RR curve).
    method: &'static str,
    rounds: u64,
    delta: f64,
    /// The pair's per-round eps (pair rows).
    component_eps: Option<f64>,
    /// Shuffled rows: users and local eps0 of k-RR (the clones-krr curve does not depend on
    /// the domain size).
    n: Option<u64>,
    eps0: Option<f64>,
    /// PLD's certified total eps.
    epsilon: f64,
    /// KOV of the pair, or of the best per-round (eps1, delta1) split of the curve.
    kov_epsilon: Option<f64>,
    certified: bool,
    /// Time of the PLD (building it, composing, reading eps).
    seconds: f64,
    kov_seconds: f64,
}

/// The one JSON object `bench accounting --json` prints.
#[derive(Serialize)]
struct Report {
    delta: f64,
    k: u32,
    rows: Vec<Row>,
    /// PLD composition rows (their own delta each).
    composition: Vec<ComposeRow>,
}

/// The PLD rows.
fn composition_rows() -> Result<Vec<ComposeRow>> {
    let mut out = Vec::new();
    let (eps, rounds, delta) = (0.1, 100_000u64, 1e-10);
    let t = Instant::now();
    let e = Pld::from_epsilon_delta(eps, 0.0, None)?
        .compose(rounds)?
        .epsilon(delta);
    let seconds = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let kov = kov_epsilon(eps, 0.0, rounds, delta).ok();
    out.push(ComposeRow {
        method: "pld pair",
        rounds,
        delta,
        component_eps: Some(eps),
        n: None,
        eps0: None,
        epsilon: e,
        kov_epsilon: kov,
        certified: true,
        seconds,
        kov_seconds: t.elapsed().as_secs_f64(),
    });
    let (n, eps0, rounds, delta) = (1_000_000u64, 1.0, 100_000u64, 1e-8);
    let t = Instant::now();
    let e = Pld::stronger_clones(n, eps0, None)?
        .compose(rounds)?
        .epsilon(delta);
    let seconds = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let kov = crate::cmd::account::best_kov_split(
        &CloneReduction::stronger(n, eps0),
        rounds,
        delta,
        || {},
    )
    .map(|x| x.0);
    out.push(ComposeRow {
        method: "pld clones-krr",
        rounds,
        delta,
        component_eps: None,
        n: Some(n),
        eps0: Some(eps0),
        epsilon: e,
        kov_epsilon: kov,
        certified: true,
        seconds,
        kov_seconds: t.elapsed().as_secs_f64(),
    });
    Ok(out)
}

/// Runs the accounting benchmark.
pub fn run(json: bool) -> Result<()> {
    let mut rows = Vec::new();
    let k = 10u32;
    let pb = crate::cmd::common::progress(11, "bench accounting", json);
    for &n in &[1_000_000u64, 100_000_000] {
        for &eps0 in &[0.5, 1.0, 2.0, 4.0, 8.0] {
            pb.inc(1);
            let t = Instant::now();
            let e = CloneReduction::fmt21(n, eps0).epsilon(1e-6);
            rows.push(Row {
                method: "fmt21-numerical",
                n,
                eps0,
                epsilon: e,
                certified: true,
                seconds: t.elapsed().as_secs_f64(),
            });
            let t = Instant::now();
            let e = CloneReduction::stronger(n, eps0).epsilon(1e-6);
            rows.push(Row {
                method: "clones-krr",
                n,
                eps0,
                epsilon: e,
                certified: true,
                seconds: t.elapsed().as_secs_f64(),
            });
            let t = Instant::now();
            let e = VariationRatioKrr::new(n, k, eps0).epsilon(1e-6);
            rows.push(Row {
                method: "variation-ratio (k=10)",
                n,
                eps0,
                epsilon: e,
                certified: false,
                seconds: t.elapsed().as_secs_f64(),
            });
            // k-RR over k = 10 values as GRR: gamma = k / (e^eps0 + k - 1).
            let gamma = f64::from(k) / (eps0.exp() + f64::from(k) - 1.0);
            let t = Instant::now();
            let e = GrrPair::new(n, k, gamma).epsilon(1e-6);
            rows.push(Row {
                method: "grr-exact (k=10)",
                n,
                eps0,
                epsilon: e,
                certified: true,
                seconds: t.elapsed().as_secs_f64(),
            });
        }
    }
    pb.inc(1);
    let composition = composition_rows()?;
    pb.finish_and_clear();
    if json {
        return print_json(&Report {
            delta: 1e-6,
            k,
            rows,
            composition,
        });
    }
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                if r.certified {
                    r.method.to_string()
                } else {
                    format!("{} NOT certified", r.method)
                },
                format!("{:e}", r.n as f64),
                r.eps0.to_string(),
                up(r.epsilon),
                format!("{:.4}", r.seconds),
            ]
        })
        .collect();
    crate::outln!(
        "{}",
        table(
            &["method", "n", "eps0", "epsilon (delta=1e-6)", "seconds"],
            &body
        )
    );
    let body: Vec<Vec<String>> = composition
        .iter()
        .map(|r| {
            vec![
                r.method.to_string(),
                match (r.component_eps, r.n, r.eps0) {
                    (Some(e), ..) => format!("({e}, 0)-DP pair"),
                    (None, Some(n), Some(e0)) => format!("k-RR, eps0 {e0}, n {:e}", n as f64),
                    _ => String::new(),
                },
                format!("{:e}", r.rounds as f64),
                format!("{:e}", r.delta),
                up(r.epsilon),
                r.kov_epsilon.map_or("-".into(), up),
                format!("{:.4}", r.seconds),
            ]
        })
        .collect();
    crate::outln!(
        "{}",
        table(
            &[
                "composition",
                "per round",
                "rounds",
                "delta",
                "epsilon",
                "kov epsilon",
                "seconds (pld)"
            ],
            &body
        )
    );
    Ok(())
}
