//! `blanket bench accounting`: compute time of each numerical amplification bound at
//! n = 1e6 and 1e8, delta = 1e-6, eps0 in {0.5, 1, 2, 4, 8} (release build recommended);
//! the k-RR bounds with k = 10.

use crate::output::{print_json, table, up};
use anyhow::Result;
use blanket::accounting::clones::CloneReduction;
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

/// The one JSON object `bench accounting --json` prints.
#[derive(Serialize)]
struct Report {
    delta: f64,
    k: u32,
    rows: Vec<Row>,
}

/// Runs the accounting benchmark.
pub fn run(json: bool) -> Result<()> {
    let mut rows = Vec::new();
    let k = 10u32;
    let pb = crate::cmd::common::progress(10, "bench accounting", json);
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
    pb.finish_and_clear();
    if json {
        return print_json(&Report {
            delta: 1e-6,
            k,
            rows,
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
    println!(
        "{}",
        table(
            &["method", "n", "eps0", "epsilon (delta=1e-6)", "seconds"],
            &body
        )
    );
    Ok(())
}
