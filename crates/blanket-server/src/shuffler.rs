//! The shuffler role: accepts reports, stores them durably, forgets everything that could
//! identify a sender, and forwards each batch to the analyzer in a uniformly random order.
//!
//! Intake. A handler decodes and checks the report (version, lengths, task, deadline), then
//! hands it to the single writer task, which gathers whatever reports are waiting into one
//! transaction (group commit) and answers each handler only after the commit. A replayed
//! report id is refused by the primary key of `shuffler_seen` inside that transaction.
//! A bulk upload (`POST /tasks/{id}/reports/bulk`, up to [`BULK_MAX`] reports) goes whole
//! into one group and is answered with each report's outcome once committed.
//!
//! What is kept. Only (task, report id) for replay protection, and the sealed message until
//! it is delivered. No address, header, time or per-report order leaves the handler; the
//! storage order is destroyed by the shuffle before delivery and deleted after it.
//!
//! Forwarding. Every tick, a task whose pending reports reach `min_batch` gets a batch cut
//! (all its pending reports, at most [`MAX_BATCH_REPORTS`], whole uploads only: every upload
//! is numbered, and a task with several reports per user takes only uploads of whole users,
//! so a user's messages never fall in two batches); each undelivered batch is
//! permuted by [`UniformShuffler`] with a fresh [`SecureRng`] and posted to the analyzer with
//! the peer token, until the analyzer has it (it accepts each batch id once, so a retry after
//! a lost answer is harmless). Reports short of `min_batch` at the deadline are never
//! forwarded.

use crate::http::{self, REPORT_BODY_LIMIT};
use crate::problem::Rejection;
use crate::store::{Incoming, Store};
use crate::wire::{Batch, Report, ReportId, Sealed, TaskId, MAX_BATCH_REPORTS, REPORT_LEN};
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

/// Most reports in one group commit (a bulk upload larger than what remains of a group
/// still goes whole into one).
const GROUP_MAX: usize = 4096;
/// Most reports in one bulk upload (`POST /tasks/{id}/reports/bulk`).
pub const BULK_MAX: usize = 1000;
/// Largest body of a bulk upload.
const BULK_BODY_LIMIT: usize = BULK_MAX * REPORT_LEN;
/// How often the forwarder looks for full batches.
const TICK: Duration = Duration::from_millis(100);
/// How long a replica holds a batch it is delivering before another may take it over, by
/// default (`blanket serve --lease-seconds`).
pub const LEASE_SECONDS: u64 = 60;

/// A task as the shuffler knows it (`PUT /internal/tasks/{id}` from the analyzer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShufflerTask {
    /// Smallest batch to forward.
    pub min_batch: u64,
    /// Unix time after which reports are refused.
    pub deadline_unix: u64,
    /// Reports per user (t of a vector sum, m of an IKOS sum, else 1): an upload must hold a
    /// positive multiple of it (a user's messages come whole, in one upload). 1 when absent.
    #[serde(default = "one")]
    pub reports_per_upload: u64,
}

fn one() -> u64 {
    1
}

/// Reports handed to the writer by one request, and where to answer once they are committed
/// (`true`: stored; `false`: its report id was already accepted).
struct Job {
    reports: Vec<(TaskId, ReportId, Sealed)>,
    answer: oneshot::Sender<Result<Vec<bool>, Rejection>>,
}

/// What a bulk upload did with each of its reports, in request order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BulkOutcome {
    /// Reports stored (committed before this answer).
    pub accepted: u64,
    /// Reports whose id was already accepted (earlier, or earlier in the same upload).
    pub duplicates: u64,
    /// `"accepted"` or `"duplicate"`, one per report, in request order.
    pub results: Vec<String>,
}

/// The shuffler's shared state.
pub struct Shuffler {
    store: Store,
    tasks: RwLock<HashMap<TaskId, ShufflerTask>>,
    intake: mpsc::Sender<Job>,
    peer_token: String,
    analyzer_url: String,
    http: reqwest::Client,
    wake: Notify,
    lease_seconds: u64,
}

impl Shuffler {
    /// Loads the tasks and starts the writer and the forwarder; a batch this replica leases
    /// for delivery is its own for `lease_seconds` (then another replica may take it over).
    pub async fn start(
        store: Store,
        analyzer_url: String,
        peer_token: String,
        lease_seconds: u64,
    ) -> Result<Arc<Self>, Rejection> {
        let tasks = store.shuffler_tasks().await?.into_iter().collect();
        let (tx, rx) = mpsc::channel(GROUP_MAX);
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
            lease_seconds: lease_seconds.max(1),
        });
        tokio::spawn(writer(s.store.clone(), rx, first_upload()?));
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
            .route(
                "/tasks/{id}/reports/bulk",
                post(upload_bulk).layer(DefaultBodyLimit::max(BULK_BODY_LIMIT)),
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
        let Some(t) = self.store.shuffler_task(*id).await? else {
            return Ok(None);
        };
        if let Ok(mut m) = self.tasks.write() {
            m.insert(*id, t);
        }
        Ok(Some(t))
    }

    /// Checks and stores one report; `Ok` only once it is committed.
    pub async fn accept(&self, url_task: &str, body: &[u8]) -> Result<(), Rejection> {
        let report = Report::decode(body)?;
        let fresh = self.store_reports(url_task, vec![report]).await?;
        if fresh.first() == Some(&true) {
            Ok(())
        } else {
            Err(Rejection::Duplicate("report"))
        }
    }

    /// Checks and stores the reports of a bulk upload (`k` reports of [`REPORT_LEN`] bytes
    /// each, 1 <= k <= [`BULK_MAX`]), all in one group commit; answers once they are
    /// committed. Any framing error refuses the whole upload (nothing is stored).
    pub async fn accept_bulk(&self, url_task: &str, body: &[u8]) -> Result<BulkOutcome, Rejection> {
        if body.is_empty()
            || !body.len().is_multiple_of(REPORT_LEN)
            || body.len() > BULK_MAX * REPORT_LEN
        {
            return Err(Rejection::WrongLength {
                field: "bulk body (a multiple of the report length, at most 1000 reports)",
                expected: (body.len() / REPORT_LEN).clamp(1, BULK_MAX) * REPORT_LEN,
                got: body.len(),
            });
        }
        let reports = body
            .chunks_exact(REPORT_LEN)
            .map(Report::decode)
            .collect::<Result<Vec<_>, _>>()?;
        let fresh = self.store_reports(url_task, reports).await?;
        let accepted = fresh.iter().filter(|f| **f).count() as u64;
        Ok(BulkOutcome {
            accepted,
            duplicates: fresh.len() as u64 - accepted,
            results: fresh
                .iter()
                .map(|f| if *f { "accepted" } else { "duplicate" }.to_string())
                .collect(),
        })
    }

    /// Checks the reports' task and deadline and hands them to the writer: for each, whether
    /// it was stored (`false`: a duplicate), once the group holding them committed.
    async fn store_reports(
        &self,
        url_task: &str,
        reports: Vec<Report>,
    ) -> Result<Vec<bool>, Rejection> {
        let url_id =
            TaskId::parse(url_task).ok_or_else(|| Rejection::UnknownTask(url_task.to_string()))?;
        if let Some(r) = reports.iter().find(|r| r.task != url_id) {
            return Err(Rejection::WrongTask {
                report: r.task.hex(),
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
        let k = task.reports_per_upload.max(1);
        if !(reports.len() as u64).is_multiple_of(k) {
            return Err(Rejection::OutOfRange {
                field: "reports in one upload".into(),
                allowed: format!(
                    "a multiple of {k}, this task's reports per user (send each user's {k} \
                     reports together, in one bulk upload)"
                ),
                value: reports.len().to_string(),
            });
        }
        let (tx, rx) = oneshot::channel();
        let job = Job {
            reports: reports
                .into_iter()
                .map(|r| (r.task, r.id, r.sealed))
                .collect(),
            answer: tx,
        };
        self.intake
            .send(job)
            .await
            .map_err(|_| Rejection::Storage("the writer stopped".into()))?;
        let fresh = rx
            .await
            .map_err(|_| Rejection::Storage("the writer stopped".into()))??;
        if fresh.contains(&true) {
            self.wake.notify_one();
        }
        Ok(fresh)
    }

    /// Registers a task (idempotent).
    pub async fn register(&self, id: TaskId, task: ShufflerTask) -> Result<(), Rejection> {
        self.store.put_shuffler_task(id, task).await?;
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
            .lease_batch(http::now_unix(), self.lease_seconds)
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

/// The group-commit writer: waits for a request, takes every request already waiting (up
/// to [`GROUP_MAX`] reports), stores them all in one transaction, and answers each request
/// only after the commit (or with the error, nothing of the group stored).
/// The first upload number of this process: random (OS CSPRNG) in [1, 2^62), so that
/// replicas on one database rarely share numbers. Sharing one would only make two uploads
/// one unit of a batch cut (never split one); rows stored before uploads were numbered have
/// negative numbers.
fn first_upload() -> Result<i64, Rejection> {
    let mut rng = secure_rng()?;
    Ok((rng.next_u64() >> 2).max(1) as i64)
}

async fn writer(store: Store, mut rx: mpsc::Receiver<Job>, mut next_upload: i64) {
    let mut jobs: Vec<Job> = Vec::new();
    let mut rows: Vec<Incoming> = Vec::with_capacity(GROUP_MAX);
    while let Some(first) = rx.recv().await {
        jobs.push(first);
        let mut n = jobs[0].reports.len();
        while n < GROUP_MAX {
            match rx.try_recv() {
                Ok(job) => {
                    n += job.reports.len();
                    jobs.push(job);
                }
                Err(_) => break,
            }
        }
        rows.clear();
        for j in &jobs {
            // One job is one upload (one request): its reports share a number.
            let upload = next_upload;
            next_upload = if next_upload >= (1 << 62) {
                1
            } else {
                next_upload + 1
            };
            rows.extend(j.reports.iter().map(|(task, id, sealed)| Incoming {
                task: *task,
                id: *id,
                sealed: sealed.clone(),
                upload,
            }));
        }
        let result = store.commit_reports(&rows).await;
        let mut at = 0;
        for job in jobs.drain(..) {
            let k = job.reports.len();
            let r = match &result {
                Ok(fresh) => Ok(fresh[at..at + k].to_vec()),
                Err(e) => Err(e.clone()),
            };
            at += k;
            let _ = job.answer.send(r);
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

async fn upload_bulk(
    State(s): State<Arc<Shuffler>>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<BulkOutcome>, Rejection> {
    let body = http::body(body, BULK_BODY_LIMIT)?;
    Ok(Json(s.accept_bulk(&id, &body).await?))
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
