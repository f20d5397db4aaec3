//! `blanket submit`: randomize locally with the OS-seeded generator, seal to the analyzer,
//! upload to the shuffler; one value, or one simulated user per row of a CSV file.

use super::serve::runtime;
use crate::output::print_json;
use anyhow::{bail, Context, Result};
use blanket::rng::SecureRng;
use blanket_server::client::{fetch_params, ClientError, TaskClient};
use clap::Args;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Arguments of `blanket submit`.
#[derive(Args)]
pub struct SubmitArgs {
    /// The task URL (http://ANALYZER/tasks/ID).
    #[arg(long)]
    pub task: String,
    /// The value: a category 0..domain-1 (histogram) or a real in [0, 1] (scalar sum).
    #[arg(
        long,
        allow_hyphen_values = true,
        conflicts_with = "from_csv",
        required_unless_present = "from_csv"
    )]
    pub value: Option<f64>,
    /// One simulated user per row of this CSV file (first column; a header row is skipped).
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
    /// Reports refused, by typed reason.
    pub refused: BTreeMap<String, u64>,
}

/// Submits `values`, each as one user's report, with at most `concurrency` in flight.
pub async fn submit_all(
    client: Arc<TaskClient>,
    values: Vec<f64>,
    concurrency: usize,
) -> Result<SubmitSummary> {
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

/// Runs `blanket submit`.
pub fn run(a: &SubmitArgs) -> Result<()> {
    let values = match (&a.from_csv, a.value) {
        (Some(path), _) => {
            let f = std::fs::File::open(path)
                .with_context(|| format!("cannot open {}", path.display()))?;
            let rows = blanket_data::table::read_rows(f, Some(1))
                .with_context(|| format!("--from-csv {}", path.display()))?;
            rows.into_iter().map(|r| r[0]).collect()
        }
        (None, Some(v)) => vec![v],
        (None, None) => bail!("give --value or --from-csv"),
    };
    let summary = runtime()?.block_on(async {
        let params = fetch_params(&reqwest::Client::new(), &a.task).await?;
        let client = Arc::new(TaskClient::new(params)?);
        if values.len() == 1 {
            // One value: a refusal is an error (exit code non-zero), with its typed reason.
            client
                .upload(
                    &reqwest::Client::new(),
                    client.report(values[0], &mut SecureRng::from_os()?)?,
                )
                .await?;
            return Ok(SubmitSummary {
                accepted: 1,
                ..Default::default()
            });
        }
        submit_all(client, values, a.concurrency).await
    })?;
    if a.json {
        return print_json(&summary);
    }
    println!(
        "accepted (durably stored by the shuffler): {}",
        summary.accepted
    );
    for (reason, n) in &summary.refused {
        println!("refused ({reason}): {n}");
    }
    Ok(())
}
