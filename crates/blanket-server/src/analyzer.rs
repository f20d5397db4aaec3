//! The analyzer role: creates and calibrates tasks (and holds their HPKE private keys),
//! accepts batches from its shuffler only (peer token), opens and aggregates them, and
//! releases estimates with their certified guarantee within each task's privacy budget.
//! Creating a task and releasing change state and need the operator's admin token
//! (`Authorization: Bearer`, [`http::check_admin`]); reading is open.

use crate::aggregate::{absorb_batch, open_all};
use crate::crypto::{KeyPair, SUITE};
use crate::http::{self, BATCH_BODY_LIMIT, JSON_BODY_LIMIT};
use crate::problem::Rejection;
use crate::release::{charge, composed, compute, Budget, Release};
use crate::store::{Store, TaskCounts};
use crate::task::{calibrate_task, ClientParams, TaskConfig, TaskRequest};
use crate::wire::{hex_encode, Batch, TaskId, WIRE_VERSION};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use axum::{Json, Router};
use blanket::rng::{RngCore, SecureRng};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

/// The analyzer's shared state.
pub struct Analyzer {
    store: Store,
    peer_token: String,
    admin_token: String,
    shuffler_url: String,
    http: reqwest::Client,
    /// Both roles in one process (`--role all`): shown on the status page.
    pub all_in_one: bool,
    duplicate_batches: std::sync::atomic::AtomicU64,
}

/// A task as listed: its calibration, counts and budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskView {
    /// The calibrated task.
    pub config: TaskConfig,
    /// Batches received.
    pub batches: u64,
    /// Reports aggregated.
    pub reports: u64,
    /// Reports that did not open or were out of range.
    pub rejected: u64,
    /// Reports seen twice.
    pub duplicates: u64,
    /// Reports aggregated but not released yet.
    pub unreleased: u64,
    /// Releases so far.
    pub releases: u64,
    /// Budget spent and total.
    pub budget: Budget,
}

fn secure_rng() -> Result<SecureRng, Rejection> {
    SecureRng::from_os().map_err(|e| Rejection::Storage(e.to_string()))
}

fn parse_id(id: &str) -> Result<TaskId, Rejection> {
    TaskId::parse(id).ok_or_else(|| Rejection::UnknownTask(id.to_string()))
}

fn config_of(json: &str) -> Result<TaskConfig, Rejection> {
    serde_json::from_str(json).map_err(|e| Rejection::Storage(format!("stored task: {e}")))
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, Rejection> + Send + 'static,
) -> Result<T, Rejection> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Rejection::Storage(format!("worker failed: {e}")))?
}

impl Analyzer {
    /// The analyzer over `store`, registering tasks with the shuffler at `shuffler_url`;
    /// task creation and release need `admin_token` (`Authorization: Bearer`).
    pub fn new(
        store: Store,
        shuffler_url: String,
        peer_token: String,
        admin_token: String,
        all_in_one: bool,
    ) -> Result<Arc<Self>, Rejection> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .map_err(|e| Rejection::PeerUnavailable(e.to_string()))?;
        Ok(Arc::new(Self {
            store,
            peer_token,
            admin_token,
            shuffler_url: shuffler_url.trim_end_matches('/').to_string(),
            http,
            all_in_one,
            duplicate_batches: std::sync::atomic::AtomicU64::new(0),
        }))
    }

    /// The analyzer's routes.
    pub fn router(self: &Arc<Self>) -> Router {
        Router::new()
            .route(
                "/tasks",
                post(create)
                    .get(list)
                    .layer(DefaultBodyLimit::max(JSON_BODY_LIMIT)),
            )
            .route("/", get(crate::status_page::page))
            .route("/openapi.json", get(openapi))
            .route("/tasks/{id}", get(show))
            .route("/tasks/{id}/status", get(status))
            .route(
                "/tasks/{id}/release",
                post(release).layer(DefaultBodyLimit::max(JSON_BODY_LIMIT)),
            )
            .route("/tasks/{id}/releases", get(releases))
            .route("/internal/batches", post(batch))
            .with_state(Arc::clone(self))
    }

    /// Validates, calibrates, stores and registers a task; its client parameters.
    pub async fn create_task(&self, request: TaskRequest) -> Result<ClientParams, Rejection> {
        let mut rng = secure_rng()?;
        let mut id = [0u8; 16];
        rng.fill_bytes(&mut id);
        let id = TaskId(id);
        let keys = KeyPair::generate(&mut rng);
        let config = blocking(move || calibrate_task(id, request)).await?;
        let json = serde_json::to_string(&config).map_err(|e| Rejection::Storage(e.to_string()))?;
        self.store
            .insert_analyzer_task(id, &json, &keys.secret_bytes(), http::now_unix())
            .await?;
        let reg = crate::shuffler::ShufflerTask {
            min_batch: config.min_batch_reports(),
            deadline_unix: config.request.deadline_unix,
            reports_per_upload: config.request.protocol.messages_per_user(),
        };
        let sent = self
            .http
            .put(format!("{}/internal/tasks/{}", self.shuffler_url, id.hex()))
            .bearer_auth(&self.peer_token)
            .json(&reg)
            .send()
            .await;
        let ok = matches!(&sent, Ok(r) if r.status().is_success());
        if !ok {
            self.store.delete_analyzer_task(id).await?;
            let why = match sent {
                Ok(r) => format!("the shuffler answered {}", r.status()),
                Err(e) => e.to_string(),
            };
            return Err(Rejection::PeerUnavailable(format!(
                "could not register the task with the shuffler at {}: {why}",
                self.shuffler_url
            )));
        }
        Ok(self.params(&config, &keys))
    }

    fn params(&self, config: &TaskConfig, keys: &KeyPair) -> ClientParams {
        ClientParams {
            task_id: config.id.clone(),
            protocol: config.request.protocol,
            gamma: config.gamma,
            wire_version: WIRE_VERSION,
            upload_url: format!("{}/tasks/{}/reports", self.shuffler_url, config.id),
            hpke_suite: SUITE
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            hpke_public_key: hex_encode(&keys.public_bytes()),
            deadline_unix: config.request.deadline_unix,
            config: config.clone(),
        }
    }

    async fn task(&self, id: TaskId) -> Result<(TaskConfig, KeyPair), Rejection> {
        let (json, secret) = self
            .store
            .analyzer_task(id)
            .await?
            .ok_or_else(|| Rejection::UnknownTask(id.hex()))?;
        let keys = KeyPair::from_secret(&secret)
            .map_err(|e| Rejection::Storage(format!("stored key: {e}")))?;
        Ok((config_of(&json)?, keys))
    }

    /// A task's client parameters.
    pub async fn client_params(&self, id: TaskId) -> Result<ClientParams, Rejection> {
        let (config, keys) = self.task(id).await?;
        Ok(self.params(&config, &keys))
    }

    /// A task's counts and budget.
    pub async fn view(&self, config: TaskConfig) -> Result<TaskView, Rejection> {
        let id = parse_id(&config.id)?;
        let TaskCounts {
            batches,
            reports,
            rejected,
            duplicates,
            unreleased,
        } = self.store.task_counts(id).await?;
        let rel = self.store.releases(id).await?;
        let spent: Vec<(f64, f64)> = rel.iter().map(|r| (r.epsilon, r.delta)).collect();
        let (spent_eps, spent_delta) = composed(&spent);
        let budget = Budget {
            spent_eps,
            spent_delta,
            total_eps: config.request.budget_eps,
            total_delta: config.request.budget_delta,
        };
        Ok(TaskView {
            config,
            batches,
            reports,
            rejected,
            duplicates,
            unreleased,
            releases: rel.len() as u64,
            budget,
        })
    }

    /// Every task's view.
    pub async fn views(&self) -> Result<Vec<TaskView>, Rejection> {
        let mut out = Vec::new();
        for json in self.store.analyzer_tasks().await? {
            out.push(self.view(config_of(&json)?).await?);
        }
        Ok(out)
    }

    /// A task's releases, oldest first.
    pub async fn release_list(&self, id: TaskId) -> Result<Vec<Release>, Rejection> {
        self.task(id).await?;
        self.store
            .releases(id)
            .await?
            .iter()
            .map(|r| {
                serde_json::from_str(&r.body)
                    .map_err(|e| Rejection::Storage(format!("stored release: {e}")))
            })
            .collect()
    }

    /// Releases every unreleased batch of the task, if the budget allows.
    pub async fn release(&self, id: TaskId) -> Result<Release, Rejection> {
        let (config, _) = self.task(id).await?;
        let batches = self.store.unreleased_batches(id).await?;
        let ids: Vec<Vec<u8>> = batches.iter().map(|b| b.batch_id.clone()).collect();
        let cfg = config.clone();
        let rel = blocking(move || compute(&cfg, &batches)).await?;
        let (eps, delta) = (rel.guarantee.epsilon, rel.guarantee.delta);
        let mut done = None;
        self.store
            .record_release(
                id,
                &ids,
                rel.reports,
                eps,
                delta,
                http::now_unix(),
                |spent, rid| {
                    let mut r = rel.clone();
                    r.release_id = rid;
                    r.budget = charge(&config, spent, eps, delta)?;
                    let body =
                        serde_json::to_string(&r).map_err(|e| Rejection::Storage(e.to_string()))?;
                    done = Some(r);
                    Ok(body)
                },
            )
            .await?;
        done.ok_or_else(|| Rejection::Storage("release not recorded".into()))
    }

    /// Opens, deduplicates and aggregates one batch from the shuffler.
    pub async fn accept_batch(&self, body: &[u8]) -> Result<(u64, u64, u64), Rejection> {
        let batch = Batch::decode(body)?;
        let (config, keys) = self.task(batch.task).await?;
        let task = batch.task;
        let (messages, sealed) = blocking(move || {
            let m = open_all(&keys, &task, &batch.sealed);
            Ok((m, batch.sealed))
        })
        .await?;
        // Deduplicated on what authenticated only: the encapsulated keys of the reports that
        // opened (under their report ids). A forged report carrying a victim's encapsulated
        // key with a garbage ciphertext does not open, claims nothing, and is `rejected`.
        let encs: Vec<[u8; 32]> = sealed
            .iter()
            .zip(&messages)
            .filter(|(_, m)| m.is_some())
            .map(|((_, s), _)| s.enc)
            .collect();
        let stored = self
            .store
            .store_batch(task, &batch.id, &encs, |fresh_opened| {
                let mut it = fresh_opened.iter();
                let fresh: Vec<bool> = messages
                    .iter()
                    .map(|m| m.is_none() || it.next().copied().unwrap_or(false))
                    .collect();
                let o = absorb_batch(&config, &messages, &fresh)?;
                Ok((
                    o.state.reports(),
                    o.rejected,
                    o.duplicates,
                    o.state.to_json(),
                ))
            })
            .await;
        if matches!(stored, Err(Rejection::Duplicate(_))) {
            self.duplicate_batches
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        stored
    }

    /// Batches this process refused because their id was already stored (a batch delivered
    /// twice: zero unless a delivery's answer was lost).
    pub fn duplicate_batches(&self) -> u64 {
        self.duplicate_batches
            .load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// The checked-in OpenAPI description of both roles' routes.
pub const OPENAPI: &str = include_str!("../openapi.json");

/// `GET /openapi.json` (the analyzer's and the relay's).
pub async fn openapi() -> ([(axum::http::HeaderName, &'static str); 1], &'static str) {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        OPENAPI,
    )
}

async fn create(
    State(a): State<Arc<Analyzer>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<ClientParams>), Rejection> {
    http::check_admin(&headers, &a.admin_token)?;
    let body = http::body(body, JSON_BODY_LIMIT)?;
    let request: TaskRequest = http::json("task request", &body)?;
    Ok((StatusCode::CREATED, Json(a.create_task(request).await?)))
}

async fn list(State(a): State<Arc<Analyzer>>) -> Result<Json<Vec<TaskView>>, Rejection> {
    Ok(Json(a.views().await?))
}

async fn show(
    State(a): State<Arc<Analyzer>>,
    Path(id): Path<String>,
) -> Result<Json<ClientParams>, Rejection> {
    Ok(Json(a.client_params(parse_id(&id)?).await?))
}

async fn status(
    State(a): State<Arc<Analyzer>>,
    Path(id): Path<String>,
) -> Result<Json<TaskView>, Rejection> {
    let (config, _) = a.task(parse_id(&id)?).await?;
    Ok(Json(a.view(config).await?))
}

async fn release(
    State(a): State<Arc<Analyzer>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<(StatusCode, Json<Release>), Rejection> {
    http::check_admin(&headers, &a.admin_token)?;
    Ok((StatusCode::CREATED, Json(a.release(parse_id(&id)?).await?)))
}

async fn releases(
    State(a): State<Arc<Analyzer>>,
    Path(id): Path<String>,
) -> Result<Json<Vec<Release>>, Rejection> {
    Ok(Json(a.release_list(parse_id(&id)?).await?))
}

/// The peer token is checked before a byte of the body is read; the body is then bounded by
/// [`BATCH_BODY_LIMIT`] and reserved in the server's body budget.
async fn batch(
    State(a): State<Arc<Analyzer>>,
    headers: HeaderMap,
    budget: Option<axum::Extension<http::BodyBudget>>,
    body: axum::body::Body,
) -> Result<(StatusCode, Json<serde_json::Value>), Rejection> {
    http::check_peer(&headers, &a.peer_token)?;
    let (body, _permit) = http::read_body(
        &headers,
        body,
        BATCH_BODY_LIMIT,
        budget.as_ref().map(|b| &b.0),
    )
    .await?;
    let (reports, rejected, duplicates) = a.accept_batch(&body).await?;
    Ok((
        StatusCode::CREATED,
        Json(serde_json::json!({
            "reports": reports, "rejected": rejected, "duplicates": duplicates
        })),
    ))
}
