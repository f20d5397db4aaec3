//! The shuffler role: accepts reports, stores them durably, forgets everything that could
//! identify a sender, and forwards each batch to the analyzer in a uniformly random order.
//!
//! Intake. A handler decodes and checks the report (version, lengths, task, deadline), then
//! hands it to the single writer task, which gathers whatever reports are waiting into one
//! transaction (group commit) and answers each handler only after the commit. A replayed
//! report id is refused by the primary key of `shuffler_seen` inside that transaction.
//!
//! What is kept. Only (task, report id) for replay protection, and the sealed message until
//! it is delivered. No address, header, time or per-report order leaves the handler; the
//! storage order is destroyed by the shuffle before delivery and deleted after it.
//!
//! Forwarding. Every tick, a task whose pending reports reach `min_batch` gets a batch cut
//! (all its pending reports, at most [`MAX_BATCH_REPORTS`]); each undelivered batch is
//! permuted by [`UniformShuffler`] with a fresh [`SecureRng`] and posted to the analyzer with
//! the peer token, until the analyzer has it (it accepts each batch id once, so a retry after
//! a lost answer is harmless). Reports short of `min_batch` at the deadline are never
//! forwarded.

use crate::http::{self, REPORT_BODY_LIMIT};
use crate::problem::Rejection;
use crate::store::Store;
use crate::wire::{Batch, Report, ReportId, Sealed, TaskId, MAX_BATCH_REPORTS};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use blanket::rng::{RngCore, SecureRng};
use blanket::shuffle::{Shuffler as _, UniformShuffler};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, Notify};

/// Most reports in one group commit.
const GROUP_MAX: usize = 4096;
/// How often the forwarder looks for full batches.
const TICK: Duration = Duration::from_millis(100);
/// How long a replica holds a batch it is delivering before another may take it over.
const LEASE_SECONDS: u64 = 60;

/// A task as the shuffler knows it (`PUT /internal/tasks/{id}` from the analyzer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShufflerTask {
    /// Smallest batch to forward.
    pub min_batch: u64,
    /// Unix time after which reports are refused.
    pub deadline_unix: u64,
}

type Job = (
    TaskId,
    ReportId,
    Sealed,
    oneshot::Sender<Result<bool, Rejection>>,
);

/// The shuffler's shared state.
pub struct Shuffler {
    store: Store,
    tasks: RwLock<HashMap<TaskId, ShufflerTask>>,
    intake: mpsc::Sender<Job>,
    peer_token: String,
    analyzer_url: String,
    http: reqwest::Client,
    wake: Notify,
}

impl Shuffler {
    /// Loads the tasks and starts the writer and the forwarder.
    pub async fn start(
        store: Store,
        analyzer_url: String,
        peer_token: String,
    ) -> Result<Arc<Self>, Rejection> {
        let tasks = store
            .shuffler_tasks()
            .await?
            .into_iter()
            .map(|(id, min_batch, deadline_unix)| {
                (
                    id,
                    ShufflerTask {
                        min_batch,
                        deadline_unix,
                    },
                )
            })
            .collect();
        let (tx, rx) = mpsc::channel(GROUP_MAX * 4);
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(120))
            .build()
            .map_err(|e| Rejection::PeerUnavailable(e.to_string()))?;
        let s = Arc::new(Self {
            store,
            tasks: RwLock::new(tasks),
            intake: tx,
            peer_token,
            analyzer_url: analyzer_url.trim_end_matches('/').to_string(),
            http,
            wake: Notify::new(),
        });
        tokio::spawn(writer(s.store.clone(), rx));
        tokio::spawn(forwarder(Arc::clone(&s)));
        Ok(s)
    }

    /// The shuffler's routes.
    pub fn router(self: &Arc<Self>) -> Router {
        Router::new()
            .route(
                "/tasks/{id}/reports",
                post(upload).layer(DefaultBodyLimit::max(REPORT_BODY_LIMIT)),
            )
            .route("/tasks/{id}/intake", get(intake))
            .route(
                "/internal/tasks/{id}",
                put(register).layer(DefaultBodyLimit::max(http::JSON_BODY_LIMIT)),
            )
            .with_state(Arc::clone(self))
    }

    /// The task, from memory or else from the database (another replica may have registered
    /// it).
    async fn task(&self, id: &TaskId) -> Result<Option<ShufflerTask>, Rejection> {
        if let Some(t) = self.tasks.read().ok().and_then(|t| t.get(id).copied()) {
            return Ok(Some(t));
        }
        let Some((min_batch, deadline_unix)) = self.store.shuffler_task(*id).await? else {
            return Ok(None);
        };
        let t = ShufflerTask {
            min_batch,
            deadline_unix,
        };
        if let Ok(mut m) = self.tasks.write() {
            m.insert(*id, t);
        }
        Ok(Some(t))
    }

    /// Checks and stores one report; `Ok` only once it is committed.
    pub async fn accept(&self, url_task: &str, body: &[u8]) -> Result<(), Rejection> {
        let url_id =
            TaskId::parse(url_task).ok_or_else(|| Rejection::UnknownTask(url_task.to_string()))?;
        let report = Report::decode(body)?;
        if report.task != url_id {
            return Err(Rejection::WrongTask {
                report: report.task.hex(),
                url: url_id.hex(),
            });
        }
        let task = self
            .task(&url_id)
            .await?
            .ok_or_else(|| Rejection::UnknownTask(url_id.hex()))?;
        if http::now_unix() > task.deadline_unix {
            return Err(Rejection::TaskClosed(url_id.hex()));
        }
        let (tx, rx) = oneshot::channel();
        self.intake
            .send((report.task, report.id, report.sealed, tx))
            .await
            .map_err(|_| Rejection::Storage("the writer stopped".into()))?;
        match rx.await {
            Ok(Ok(true)) => {
                self.wake.notify_one();
                Ok(())
            }
            Ok(Ok(false)) => Err(Rejection::Duplicate("report")),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(Rejection::Storage("the writer stopped".into())),
        }
    }

    /// Registers a task (idempotent).
    pub async fn register(&self, id: TaskId, task: ShufflerTask) -> Result<(), Rejection> {
        self.store
            .put_shuffler_task(id, task.min_batch, task.deadline_unix)
            .await?;
        if let Ok(mut t) = self.tasks.write() {
            t.entry(id).or_insert(task);
        }
        Ok(())
    }

    /// Cuts the batches that are due and delivers every undelivered one (each leased by
    /// this replica while it is sent); returns how many were delivered.
    pub async fn forward_once(&self) -> Result<usize, Rejection> {
        let tasks: Vec<(TaskId, ShufflerTask)> = match self.tasks.read() {
            Ok(t) => t.iter().map(|(k, v)| (*k, *v)).collect(),
            Err(_) => return Err(Rejection::Storage("task table lock poisoned".into())),
        };
        for (id, task) in tasks {
            if self.store.pending_count(id).await? >= task.min_batch {
                let mut batch_id = [0u8; 16];
                secure_rng()?.fill_bytes(&mut batch_id);
                self.store
                    .cut_batch(id, batch_id, task.min_batch, MAX_BATCH_REPORTS as u64)
                    .await?;
            }
        }
        let mut delivered = 0;
        while let Some((batch_id, task)) = self
            .store
            .lease_batch(http::now_unix(), LEASE_SECONDS)
            .await?
        {
            match self.deliver(batch_id, task).await {
                Ok(()) => delivered += 1,
                Err(e) => {
                    self.store.unlease(&batch_id).await?;
                    return Err(e);
                }
            }
        }
        Ok(delivered)
    }

    /// Shuffles a leased batch and posts it to the analyzer; deletes it once the analyzer has
    /// it (201, or 409 when an earlier attempt whose answer was lost got through).
    async fn deliver(&self, batch_id: [u8; 16], task: TaskId) -> Result<(), Rejection> {
        let mut sealed = self.store.batch_reports(&batch_id).await?;
        UniformShuffler.shuffle(&mut sealed, &mut secure_rng()?);
        let body = Batch {
            task,
            id: batch_id,
            sealed,
        }
        .encode();
        let resp = self
            .http
            .post(format!("{}/internal/batches", self.analyzer_url))
            .bearer_auth(&self.peer_token)
            .header("content-type", "application/octet-stream")
            .body(body)
            .send()
            .await
            .map_err(|e| Rejection::PeerUnavailable(e.to_string()))?;
        let status = resp.status();
        if status.is_success() || status == StatusCode::CONFLICT {
            self.store.delivered(&batch_id).await
        } else {
            let text = resp.text().await.unwrap_or_default();
            Err(Rejection::PeerUnavailable(format!(
                "analyzer answered {status}: {text}"
            )))
        }
    }
}

fn secure_rng() -> Result<SecureRng, Rejection> {
    SecureRng::from_os().map_err(|e| Rejection::Storage(e.to_string()))
}

/// The group-commit writer: one transaction for every report waiting, answers after commit.
async fn writer(store: Store, mut rx: mpsc::Receiver<Job>) {
    let mut jobs: Vec<Job> = Vec::with_capacity(GROUP_MAX);
    while rx.recv_many(&mut jobs, GROUP_MAX).await > 0 {
        let rows: Vec<(TaskId, ReportId, Sealed)> = jobs
            .iter()
            .map(|(t, id, s, _)| (*t, *id, s.clone()))
            .collect();
        let result = store.commit_reports(&rows).await;
        for (i, (_, _, _, answer)) in jobs.drain(..).enumerate() {
            let r = match &result {
                Ok(fresh) => Ok(fresh[i]),
                Err(e) => Err(e.clone()),
            };
            let _ = answer.send(r);
        }
    }
}

async fn forwarder(s: Arc<Shuffler>) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(TICK) => {}
            _ = s.wake.notified() => tokio::time::sleep(TICK).await,
        }
        if let Err(e) = s.forward_once().await {
            eprintln!("shuffler: forwarding will be retried: {e}");
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
}

async fn upload(
    State(s): State<Arc<Shuffler>>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<StatusCode, Rejection> {
    let body = http::body(body, REPORT_BODY_LIMIT)?;
    s.accept(&id, &body).await?;
    Ok(StatusCode::CREATED)
}

async fn register(
    State(s): State<Arc<Shuffler>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<StatusCode, Rejection> {
    http::check_peer(&headers, &s.peer_token)?;
    let id = TaskId::parse(&id).ok_or_else(|| Rejection::UnknownTask(id.clone()))?;
    let body = http::body(body, http::JSON_BODY_LIMIT)?;
    let task: ShufflerTask = http::json("task", &body)?;
    s.register(id, task).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Shuffler-side counts of a task (`GET /tasks/{id}/intake`): report ids accepted and
/// reports waiting for a batch.
async fn intake(
    State(s): State<Arc<Shuffler>>,
    Path(id): Path<String>,
) -> Result<Json<serde_json::Value>, Rejection> {
    let id = TaskId::parse(&id).ok_or_else(|| Rejection::UnknownTask(id.clone()))?;
    if s.task(&id).await?.is_none() {
        return Err(Rejection::UnknownTask(id.hex()));
    }
    Ok(Json(serde_json::json!({
        "accepted": s.store.accepted_count(id).await?,
        "pending": s.store.pending_count(id).await?,
    })))
}
