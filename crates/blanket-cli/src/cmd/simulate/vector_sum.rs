//! `blanket simulate vector-sum`: the vector data sources and the simulation of the
//! vector-sum protocol (Cheu, Joseph, Mao, Peng 2022; `docs/vector-sum.md`).

use super::{repetitions, FirstRepetition, RunArgs, SimulationReport, PARALLEL_REPETITION_SIZE};
use crate::cmd::calibrate::CalibrationReport;
use crate::cmd::common::{mean_ci, progress};
use crate::data::{self, Provenance};
use crate::output::table;
use anyhow::{Context, Result};
use blanket::protocol::tensor::{self, Tensor};
use blanket::protocol::vector_sum::{check_dimension, paper_mse_bound};
use blanket::protocol::{UnitVectors, VectorSum};
use blanket::simulate::Resample;
use blanket_data::ecg_beats::{self, BEAT_LEN};
use std::path::Path;
use std::time::Instant;

/// Vectors in [0, 1]^d for n users from `source` (`ecg-beats`, `ecg-windows` or a CSV path),
/// resized to n (the first n, or draws with replacement seeded by `seed` when n exceeds the
/// distinct vectors; the provenance says which), materialized (n rows in memory).
pub fn vector_data(
    source: &str,
    d: u64,
    n: Option<usize>,
    seed: u64,
    header: data::Header,
) -> Result<(UnitVectors, Provenance)> {
    let (rows, pick, prov) = vector_rows(source, d, n, seed, header)?;
    let flat: Vec<f64> = (0..pick.users())
        .flat_map(|i| rows.row(pick.row(i)).iter().map(|x| x.get()))
        .collect();
    Ok((UnitVectors::from_flat(d, &flat)?, prov))
}

/// Tensors of `shape` for n users: the distinct rows of [`vector_rows`] with d = the product
/// of the axes, each read as a row-major tensor and flattened back by the core
/// (`tensor::flatten`), and which row each user holds.
pub fn tensor_rows(
    source: &str,
    shape: &[usize],
    n: Option<usize>,
    seed: u64,
    header: data::Header,
) -> Result<(UnitVectors, Resample, Provenance)> {
    let d = tensor::numel(shape)? as u64;
    let (rows, pick, mut prov) = vector_rows(source, d, n, seed, header)?;
    let tensors = rows
        .rows()
        .map(|r| Tensor::new(shape.to_vec(), r.iter().map(|x| x.get()).collect()))
        .collect::<Result<Vec<_>, _>>()?;
    let (_, vectors) = tensor::flatten(&tensors)?;
    prov.source = format!(
        "{}, each read as a {} tensor",
        prov.source,
        show_shape(shape)
    );
    Ok((vectors, pick, prov))
}

/// The axes of a matrix or tensor, from `--shape`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorShape(pub Vec<usize>);

/// Parses a shape such as `10x10` or `3x4x5`.
pub(super) fn parse_shape(s: &str) -> Result<TensorShape, String> {
    let axes = s
        .split(['x', 'X', '*', ','])
        .map(crate::numeric::parse_usize)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("a shape is axes joined by x, e.g. 10x10 or 3x4x5: {e}"))?;
    tensor::numel(&axes).map_err(|e| format!("{e}"))?;
    Ok(TensorShape(axes))
}

/// A shape as `10x10`.
fn show_shape(shape: &[usize]) -> String {
    shape
        .iter()
        .map(|a| a.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

/// [`vector_data`] without materializing n vectors: the distinct rows and which row each user
/// holds (memory independent of n).
pub fn vector_rows(
    source: &str,
    d: u64,
    n: Option<usize>,
    seed: u64,
    header: data::Header,
) -> Result<(UnitVectors, Resample, Provenance)> {
    let dd = check_dimension(d)? as usize;
    let (rows, name) = match source {
        "ecg-beats" => {
            if dd > BEAT_LEN {
                anyhow::bail!(
                    "d must be at most {BEAT_LEN} with --data ecg-beats (a heartbeat has {BEAT_LEN} samples), got {dd}"
                );
            }
            let rows: Vec<Vec<f64>> = ecg_beats::beats()
                .into_iter()
                .map(|b| b[..dd].to_vec())
                .collect();
            (
                rows,
                format!("embedded ECG heartbeats (MIT-BIH 208 at 125 Hz, Kachuee et al. 2018 segmentation), first {dd} samples of each beat"),
            )
        }
        "ecg-windows" => (
            ecg_beats::sliding_windows(dd),
            format!("embedded ECG, every {dd}-sample window of the 125 Hz signal min-max normalized per 10 s"),
        ),
        path => {
            let p = Path::new(path.strip_prefix("csv:").unwrap_or(path));
            let rows = blanket_data::table::read_unit_vectors_with(data::open(p)?, Some(dd), header)
                .with_context(|| format!("in data file {}", p.display()))?;
            (rows, p.display().to_string())
        }
    };
    if rows.is_empty() {
        anyhow::bail!("the data source {source} has no vectors of dimension {dd}");
    }
    let n = n.unwrap_or(rows.len());
    let (users, prov) = data::resize(rows, n, seed, name);
    Ok((UnitVectors::new(d, users.rows)?, users.pick, prov))
}

/// Simulates the vector-sum protocol; the error is the squared error of the mean vector
/// summed over coordinates, on the [0, 1] scale.
pub fn simulate_vector_sum(
    p: &VectorSum,
    vectors: &UnitVectors,
    pick: &Resample,
    shape: Option<&[usize]>,
    calibration: CalibrationReport,
    data: Provenance,
    run: &RunArgs,
) -> Result<(SimulationReport, String)> {
    blanket::simulate::check_run(pick.users(), p.t(), !run.no_shuffle)?;
    let counts = data::multiplicities(pick, vectors.len());
    let n = pick.users();
    // The true mean vector: the rows weighted by how many users hold them.
    let mut truth = vec![0.0; p.d() as usize];
    for (r, &c) in vectors.rows().zip(&counts) {
        for (t, x) in truth.iter_mut().zip(r) {
            *t += c as f64 * x.get();
        }
    }
    truth.iter_mut().for_each(|t| *t /= n.max(1) as f64);
    let start = Instant::now();
    let pb = progress(u64::from(run.reps), "vector sum", run.json);
    let state_size = u64::from(p.d()) * 3; // counts and 128-bit sums per coordinate
    let size = state_size.max(if run.no_shuffle {
        0
    } else {
        n * u64::from(p.t())
    });
    // Batched: the same law of the state as n per-client calls (users holding the same row
    // are exchangeable; docs/performance.md), from the row multiplicities. Repetitions small
    // whose messages and states fit in PARALLEL_REPETITION_SIZE all together run in one call,
    // their streams interleaved so each data row is fetched once for all of them; larger ones
    // as the other protocols' (same states either way).
    let states = if size.saturating_mul(u64::from(run.reps)) <= PARALLEL_REPETITION_SIZE {
        p.simulate_batched_repetitions(vectors, &counts, run.seed, 0..run.reps, !run.no_shuffle)?
    } else {
        repetitions(run.reps, size, |rep| {
            Ok(p.simulate_batched(vectors, &counts, run.seed, rep, !run.no_shuffle)?)
        })?
    };
    let per_rep = states
        .iter()
        .zip(0u32..)
        .map(|(state, rep)| {
            let est = p.estimate(state)?;
            let tensor = match (shape, rep) {
                (Some(s), 0) => Some(p.estimate_tensor(state, s)?),
                _ => None,
            };
            let sq = est
                .mean
                .iter()
                .zip(&truth)
                .map(|(a, b)| (a - b).powi(2))
                .sum::<f64>();
            pb.inc(1);
            Ok((sq, (rep == 0).then_some(est), tensor))
        })
        .collect::<Result<Vec<_>>>()?;
    pb.finish_and_clear();
    let mut sq = Vec::new();
    let mut first = None;
    let mut first_tensor = None;
    for (e, est, tensor) in per_rep {
        sq.push(e);
        first = first.or(est);
        first_tensor = first_tensor.or(tensor);
    }
    let seconds = start.elapsed().as_secs_f64();
    let (mse, ci) = mean_ci(&sq);
    let predicted = p.exact_mean_mse_weighted(vectors, &counts);
    let (eps, delta) = (calibration.eps, calibration.delta);
    let detail = first.as_ref().map(|e| {
        let show = truth.len().min(8);
        let rows: Vec<Vec<String>> = (0..show)
            .map(|j| {
                vec![
                    j.to_string(),
                    format!("{:.4}", truth[j]),
                    format!("{:.4}", e.mean[j]),
                    format!("{:+.4}", e.mean[j] - truth[j]),
                    e.reports[j].to_string(),
                ]
            })
            .collect();
        format!(
            "First repetition (first {show} of {} coordinates; {} unreported)\n{}",
            truth.len(),
            e.unreported.len(),
            table(
                &["coordinate", "true mean", "estimate", "error", "reports"],
                &rows
            )
        )
    });
    let report = SimulationReport {
        protocol: "vector-sum",
        n,
        gamma: p.gamma().get(),
        reps: run.reps,
        seed: run.seed,
        mse,
        mse_ci95: ci,
        predicted_mse: predicted,
        worst_case_mse: p.worst_case_mean_mse(n),
        mse_meaning: "squared error of the estimated mean vector summed over the d coordinates, on the [0, 1] scale (the authors' code works on [-1, 1]: multiply by 4)",
        mse_ratio: mse / predicted,
        seconds,
        shuffled: !run.no_shuffle,
        data,
        calibration,
        first_repetition: FirstRepetition::Value(serde_json::json!({
            "true_mean": truth,
            "estimated_mean": first.as_ref().map(|e| &e.mean),
            "reports": first.as_ref().map(|e| &e.reports),
            "unreported": first.as_ref().map(|e| &e.unreported),
            "estimated_mean_tensor": first_tensor.as_ref().map(|e| &e.mean),
        })),
        d: Some(p.d()),
        t: Some(p.t()),
        shape: shape.map(<[usize]>::to_vec),
        paper_bound_mse: (eps < 6.0).then(|| paper_mse_bound(n, p.d(), p.t(), eps, delta, p.gamma().get())),
    };
    Ok((report, detail.unwrap_or_default()))
}
