//! `blanket demo --service`: the whole service flow on loopback with the embedded ECG data.
//! Both roles run in this process (`--role all`, so the trust separation is lost, as the demo
//! says), on a temporary SQLite database: create and calibrate a histogram task, submit one
//! randomized and sealed report per simulated user, wait for the shuffled batch to reach the
//! analyzer, release, and compare the release with the truth.

use super::demo::DemoArgs;
use super::submit::submit_all;
use crate::output::{kv_table, num, print_json, table};
use anyhow::{bail, Context, Result};
use blanket_server::analyzer::TaskView;
use blanket_server::client::TaskClient;
use blanket_server::release::Release;
use blanket_server::task::{Protocol, TaskRequest};
use blanket_server::{Role, Running, ServeConfig, ALL_IN_ONE_WARNING};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Most simulated users the service demo submits (each is one HTTP request).
pub const MAX_USERS: usize = 20_000;

/// An in-process service (both roles) on a temporary database, for the demo and the bench.
pub struct LocalService {
    /// The running server.
    pub running: Running,
    dir: std::path::PathBuf,
}

impl LocalService {
    /// Starts both roles on 127.0.0.1 (a free port) over a fresh SQLite file.
    pub async fn start(label: &str) -> Result<Self> {
        let dir = std::env::temp_dir().join(format!("blanket-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let db = format!("sqlite://{}", dir.join("service.db").display());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let running = blanket_server::start(
            ServeConfig {
                role: Role::All,
                db,
                peer_url: None,
                peer_token: None,
                admin_token: None,
                lease_seconds: None,
            },
            listener,
        )
        .await?;
        Ok(Self { running, dir })
    }

    /// Creates a task; its client.
    pub async fn create(&self, req: &TaskRequest) -> Result<Arc<TaskClient>> {
        let analyzer = self
            .running
            .analyzer
            .as_ref()
            .context("the analyzer is not running")?;
        let params = analyzer.create_task(req.clone()).await?;
        Ok(Arc::new(TaskClient::new(params)?))
    }

    /// Waits until the analyzer has aggregated `reports` reports of the task.
    pub async fn wait_for(&self, task_id: &str, reports: u64, limit: Duration) -> Result<TaskView> {
        let analyzer = self
            .running
            .analyzer
            .as_ref()
            .context("the analyzer is not running")?;
        let id = blanket_server::wire::TaskId::parse(task_id).context("task id")?;
        let t0 = Instant::now();
        loop {
            let params = analyzer.client_params(id).await?;
            let view = analyzer.view(params.config).await?;
            if view.reports + view.rejected + view.duplicates >= reports {
                return Ok(view);
            }
            if t0.elapsed() > limit {
                bail!(
                    "the analyzer holds {} of {reports} reports after {:?}",
                    view.reports,
                    limit
                );
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Releases the task.
    pub async fn release(&self, task_id: &str) -> Result<Release> {
        let analyzer = self
            .running
            .analyzer
            .as_ref()
            .context("the analyzer is not running")?;
        let id = blanket_server::wire::TaskId::parse(task_id).context("task id")?;
        Ok(analyzer.release(id).await?)
    }

    /// Stops the server and removes the database.
    pub async fn stop(self) {
        self.running.stop().await;
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs `blanket demo --service`.
pub fn run(a: &DemoArgs) -> Result<()> {
    let n = (a.n as usize).min(MAX_USERS);
    let bins = u32::try_from(a.bins).unwrap_or(u32::MAX);
    blanket::params::DomainSize::new(a.bins)?;
    let cats = blanket_data::ecg::signal_categories(bins);
    let (users, _) = crate::data::resize(
        cats,
        n,
        a.seed,
        "embedded ECG (MIT-BIH record 208)".to_string(),
    );
    let values: Vec<f64> = (0..users.len()).map(|i| f64::from(*users.get(i))).collect();
    let mut truth = vec![0u64; bins as usize];
    for &v in &values {
        truth[v as usize] += 1;
    }
    eprintln!("{ALL_IN_ONE_WARNING}");
    let rt = super::serve::runtime()?;
    let (release, url, seconds) = rt.block_on(async {
        let svc = LocalService::start("demo").await?;
        let out = async {
            let req = TaskRequest {
                protocol: Protocol::Histogram { domain: a.bins },
                eps: a.eps,
                delta: a.delta,
                expected_users: n as u64,
                min_batch: n as u64,
                deadline_unix: blanket_server::http::now_unix() + 3600,
                budget_eps: a.eps,
                budget_delta: a.delta,
            };
            let client = svc.create(&req).await?;
            let id = client.params().task_id.clone();
            let t0 = Instant::now();
            let sub = submit_all(client, values.clone(), 64).await?;
            if sub.accepted != n as u64 {
                bail!("the shuffler refused reports: {:?}", sub.refused);
            }
            svc.wait_for(&id, n as u64, Duration::from_secs(120))
                .await?;
            let rel = svc.release(&id).await?;
            Ok((
                rel,
                format!("{}/tasks/{id}", svc.running.url),
                t0.elapsed().as_secs_f64(),
            ))
        }
        .await;
        svc.stop().await;
        out
    })?;
    if a.json {
        return print_json(&serde_json::json!({
            "users": n,
            "task_url": url,
            "seconds": seconds,
            "truth": truth,
            "release": release,
            "trust_separated": false,
        }));
    }
    crate::outln!(
        "Service demo: {n} simulated users (embedded ECG, {bins} bins) submitted sealed reports \
         to the shuffler on loopback; one shuffled batch reached the analyzer; {:.2} s end to end.",
        seconds
    );
    let est: Vec<f64> = release.estimate["counts"]
        .as_array()
        .map(|v| v.iter().filter_map(|x| x.as_f64()).collect())
        .unwrap_or_default();
    let rows: Vec<Vec<String>> = truth
        .iter()
        .zip(&est)
        .enumerate()
        .map(|(i, (&t, &e))| vec![i.to_string(), t.to_string(), num(e)])
        .collect();
    crate::outln!(
        "{}",
        table(&["bin", "true count", "released estimate"], &rows)
    );
    let sq: f64 = truth
        .iter()
        .zip(&est)
        .map(|(&t, &e)| (e - t as f64).powi(2))
        .sum::<f64>()
        / truth.len().max(1) as f64;
    crate::outln!(
        "{}",
        kv_table(
            "Release",
            &[
                (
                    "certified",
                    format!(
                        "eps = {}, delta = {} ({})",
                        crate::output::up(release.guarantee.epsilon),
                        crate::output::up(release.guarantee.delta),
                        release.guarantee.method
                    ),
                ),
                ("predicted RMSE per count", num(release.predicted_rmse)),
                ("observed RMSE per count", num(sq.sqrt())),
                (
                    "trust separation",
                    "LOST (--role all, demo only)".to_string()
                ),
            ]
        )
    );
    Ok(())
}
