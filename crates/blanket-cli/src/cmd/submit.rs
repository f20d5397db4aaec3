//! `blanket submit`: randomize locally with the OS-seeded generator, seal to the analyzer,
//! upload to the shuffler; one value, or one simulated user per row of a CSV file. A user of
//! a multi-message task (vector sum: t reports, IKOS sum: m shares) sends each message as its
//! own report, all of one user in one bulk upload.

use super::serve::runtime;
use crate::output::print_json;
use anyhow::{bail, Context, Result};
use blanket::rng::SecureRng;
use blanket_server::client::{fetch_params, ClientError, TaskClient};
use blanket_server::task::Protocol;
use clap::Args;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Arguments of `blanket submit`.
#[derive(Args)]
pub struct SubmitArgs {
    /// The task URL (http://ANALYZER/tasks/ID).
    #[arg(long)]
    pub task: String,
    /// The value: a category 0..domain-1 (histogram), a real in [0, 1] (scalar and IKOS
    /// sums), or d comma-separated reals in [0, 1] (vector sum, e.g. 0.1,0.5,1).
    #[arg(
        long,
        allow_hyphen_values = true,
        conflicts_with = "from_csv",
        required_unless_present = "from_csv"
    )]
    pub value: Option<String>,
    /// One simulated user per row of this CSV file (one column; d columns for a vector sum;
    /// a header row is skipped).
    #[arg(long)]
    pub from_csv: Option<std::path::PathBuf>,
    /// Reports in flight at once (with --from-csv).
    #[arg(long, default_value_t = 32, value_parser = crate::numeric::parse_usize)]
    pub concurrency: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// What a submission did.
#[derive(Debug, Default, serde::Serialize)]
pub struct SubmitSummary {
    /// Reports the shuffler acknowledged (durably stored).
    pub accepted: u64,
    /// Reports the shuffler already had (replays; stored once).
    #[serde(skip_serializing_if = "is_zero")]
    pub duplicates: u64,
    /// Reports refused, by typed reason.
    pub refused: BTreeMap<String, u64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Submits `values`, each as one user's report, with at most `concurrency` in flight.
pub async fn submit_all(
    client: Arc<TaskClient>,
    values: Vec<f64>,
    concurrency: usize,
) -> Result<SubmitSummary> {
    if client.messages_per_user() > 1 {
        let rows = values.into_iter().map(|v| vec![v]).collect();
        return submit_users(client, rows, concurrency).await;
    }
    let http = reqwest::Client::new();
    let mut rng = SecureRng::from_os()?;
    // Randomize and seal first (CPU), then upload with bounded concurrency.
    let mut reports = Vec::with_capacity(values.len());
    for v in values {
        reports.push(client.report(v, &mut rng)?);
    }
    let sem = Arc::new(tokio::sync::Semaphore::new(concurrency.max(1)));
    let mut set = tokio::task::JoinSet::new();
    for r in reports {
        let permit = sem.clone().acquire_owned().await?;
        let (c, h) = (client.clone(), http.clone());
        set.spawn(async move {
            let out = c.upload(&h, r).await;
            drop(permit);
            out
        });
    }
    let mut s = SubmitSummary::default();
    while let Some(r) = set.join_next().await {
        match r? {
            Ok(()) => s.accepted += 1,
            Err(ClientError::Rejected(p)) => *s.refused.entry(p.reason).or_default() += 1,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(s)
}

/// Submits one user per row (each row: the user's value, d coordinates for a vector sum),
/// each user's reports in one bulk upload, at most `concurrency` users in flight.
pub async fn submit_users(
    client: Arc<TaskClient>,
    rows: Vec<Vec<f64>>,
    concurrency: usize,
) -> Result<SubmitSummary> {
    let http = reqwest::Client::new();
    let mut rng = SecureRng::from_os()?;
    let mut users = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        users.push(
            client
                .reports(r, &mut rng)
                .with_context(|| format!("user {} (row {})", i, i + 1))?,
        );
    }
    let sem = Arc::new(tokio::sync::Semaphore::new(concurrency.max(1)));
    let mut set = tokio::task::JoinSet::new();
    for r in users {
        let permit = sem.clone().acquire_owned().await?;
        let (c, h) = (client.clone(), http.clone());
        set.spawn(async move {
            let n = r.len() as u64;
            let out = c.upload_user(&h, r).await;
            drop(permit);
            (n, out)
        });
    }
    let mut s = SubmitSummary::default();
    while let Some(r) = set.join_next().await {
        match r? {
            (_, Ok(o)) => {
                s.accepted += o.accepted;
                s.duplicates += o.duplicates;
            }
            (n, Err(ClientError::Rejected(p))) => *s.refused.entry(p.reason).or_default() += n,
            (_, Err(e)) => return Err(e.into()),
        }
    }
    Ok(s)
}

/// `--value`: one number, or comma-separated numbers (a vector).
pub fn parse_value(v: &str) -> Result<Vec<f64>> {
    v.split(',')
        .map(|x| {
            x.trim().parse::<f64>().map_err(|_| {
                anyhow::anyhow!(
                    "--value must be a number or comma-separated numbers (e.g. 0.1,0.5,1), got {v:?}"
                )
            })
        })
        .collect()
}

/// Runs `blanket submit`.
pub fn run(a: &SubmitArgs) -> Result<()> {
    let summary = runtime()?.block_on(async {
        let params = fetch_params(&reqwest::Client::new(), &a.task).await?;
        let width = match params.protocol {
            Protocol::VectorSum { d, .. } => usize::try_from(d)?,
            _ => 1,
        };
        let client = Arc::new(TaskClient::new(params)?);
        let rows: Vec<Vec<f64>> = match (&a.from_csv, &a.value) {
            (Some(path), _) => {
                let f = std::fs::File::open(path)
                    .with_context(|| format!("cannot open {}", path.display()))?;
                blanket_data::table::read_rows(f, Some(width)).with_context(|| {
                    format!(
                        "--from-csv {} (this task takes {width} column{} per row)",
                        path.display(),
                        if width == 1 { "" } else { "s" }
                    )
                })?
            }
            (None, Some(v)) => vec![parse_value(v)?],
            (None, None) => bail!("give --value or --from-csv"),
        };
        if let [row] = &rows[..] {
            // One user: a refusal is an error (exit code non-zero), with its typed reason.
            let reports = client
                .reports(row, &mut SecureRng::from_os()?)
                .context("--value")?;
            let o = client.upload_user(&reqwest::Client::new(), reports).await?;
            return Ok(SubmitSummary {
                accepted: o.accepted,
                duplicates: o.duplicates,
                ..Default::default()
            });
        }
        if width == 1 && client.messages_per_user() == 1 {
            let values = rows.into_iter().map(|r| r[0]).collect();
            return submit_all(client, values, a.concurrency).await;
        }
        submit_users(client, rows, a.concurrency).await
    })?;
    if a.json {
        return print_json(&summary);
    }
    crate::outln!(
        "accepted (durably stored by the shuffler): {}",
        summary.accepted
    );
    if summary.duplicates > 0 {
        crate::outln!(
            "duplicates (already stored, counted once): {}",
            summary.duplicates
        );
    }
    for (reason, n) in &summary.refused {
        crate::outln!("refused ({reason}): {n}");
    }
    Ok(())
}
