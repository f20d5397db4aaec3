//! `blanket bench serve`: the service's intake and latency on loopback, durable on SQLite
//! (WAL, synchronous = FULL, group commit). Keys `intake.reports_per_second` and
//! `end_to_end.latency_seconds` are a contract.

use crate::cmd::service_demo::LocalService;
use crate::output::{num, print_json};
use anyhow::{bail, Result};
use blanket::rng::SecureRng;
use blanket_server::task::{Protocol, TaskRequest};
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Reports per measurement.
pub const REPORTS: usize = 40_000;
/// Uploads in flight.
pub const CONCURRENCY: usize = 128;

/// Intake figures.
#[derive(Serialize, Debug, Clone)]
pub struct Intake {
    /// Reports acknowledged per second (each acknowledged only after its commit).
    pub reports_per_second: f64,
    /// Reports uploaded.
    pub reports: u64,
    /// Uploads in flight.
    pub concurrency: usize,
    /// Seconds from the first upload to the last acknowledgement.
    pub seconds: f64,
}

/// End-to-end figures.
#[derive(Serialize, Debug, Clone)]
pub struct EndToEnd {
    /// Seconds from the last report's acknowledgement to the released estimate (batch cut,
    /// shuffle, forward, decrypt, aggregate, certify, release).
    pub latency_seconds: f64,
    /// Reports in the batch.
    pub batch: u64,
}

/// The benchmark's JSON.
#[derive(Serialize, Debug, Clone)]
pub struct ServeBench {
    /// Shuffler intake.
    pub intake: Intake,
    /// Last report to released estimate.
    pub end_to_end: EndToEnd,
    /// What is measured.
    pub measures: &'static str,
}

/// Runs `blanket bench serve`.
pub fn run(json: bool) -> Result<()> {
    let rt = crate::cmd::serve::runtime()?;
    let b = rt.block_on(async {
        let svc = LocalService::start("bench").await?;
        let out = measure(&svc).await;
        svc.stop().await;
        out
    })?;
    if json {
        return print_json(&b);
    }
    println!(
        "intake: {} reports/s ({} reports, {} in flight, {:.2} s); last report to release: {} s",
        num(b.intake.reports_per_second),
        b.intake.reports,
        b.intake.concurrency,
        b.intake.seconds,
        num(b.end_to_end.latency_seconds)
    );
    Ok(())
}

async fn measure(svc: &LocalService) -> Result<ServeBench> {
    let req = TaskRequest {
        protocol: Protocol::Histogram { domain: 16 },
        eps: 1.0,
        delta: 1e-8,
        expected_users: REPORTS as u64,
        min_batch: REPORTS as u64,
        deadline_unix: blanket_server::http::now_unix() + 3600,
        budget_eps: 1.0,
        budget_delta: 1e-8,
    };
    let client = svc.create(&req).await?;
    let id = client.params().task_id.clone();
    let mut rng = SecureRng::from_os()?;
    let reports: Vec<Vec<u8>> = (0..REPORTS)
        .map(|i| client.report((i % 16) as f64, &mut rng))
        .collect::<Result<_, _>>()?;
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(CONCURRENCY)
        .build()?;
    let sem = Arc::new(tokio::sync::Semaphore::new(CONCURRENCY));
    let mut set = tokio::task::JoinSet::new();
    let t0 = Instant::now();
    for r in reports {
        let permit = sem.clone().acquire_owned().await?;
        let (c, h) = (client.clone(), http.clone());
        set.spawn(async move {
            let out = c.upload(&h, r).await;
            drop(permit);
            out
        });
    }
    let mut accepted = 0u64;
    while let Some(r) = set.join_next().await {
        r??;
        accepted += 1;
    }
    let intake_s = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let view = svc
        .wait_for(&id, REPORTS as u64, Duration::from_secs(300))
        .await?;
    let rel = svc.release(&id).await?;
    let latency = t1.elapsed().as_secs_f64();
    if accepted != REPORTS as u64 || view.reports != REPORTS as u64 || rel.reports != REPORTS as u64
    {
        bail!(
            "lost reports: {accepted} acknowledged, {} aggregated, {} released",
            view.reports,
            rel.reports
        );
    }
    Ok(ServeBench {
        intake: Intake {
            reports_per_second: REPORTS as f64 / intake_s,
            reports: REPORTS as u64,
            concurrency: CONCURRENCY,
            seconds: intake_s,
        },
        end_to_end: EndToEnd {
            latency_seconds: latency,
            batch: rel.reports,
        },
        measures: "one in-process service (--role all) on loopback over a fresh SQLite file \
                   (WAL, synchronous FULL, group commit); reports randomized and sealed before \
                   timing; intake = reports / seconds from the first upload to the last \
                   acknowledgement (HTTP/1.1 keep-alive, 128 uploads in flight); end to end = \
                   last acknowledgement to the released estimate",
    })
}
