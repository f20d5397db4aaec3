//! The clients' side of the relay: one real client (`blanket client run --relay URL --task ID
//! --value V`, OS randomness) or N simulated ones (`--simulate N`: the in-memory driver's
//! clients, [`blanket_protocol::driver::SimClient`], each a tokio task with its own keys and
//! its own HTTP connection). Both drive a sans-IO client: fetch the next request by long-poll,
//! hand it to the state machine (including its turns as key-committee member and shuffler),
//! post the reply signed with the registered key ([`super::auth`]).
//!
//! Timeouts and retries are explicit ([`ClientOptions`], defaults documented there and in
//! `docs/protocol.md`).

use super::api::{
    CreateResponse, Credential, RegisterRequest, RegisterResponse, TaskSpec, TaskStatus,
};
use super::auth::{self, SEQ_HEADER, SIGNATURE_HEADER};
use crate::problem::Problem;
use crate::wire::{hex_decode, hex_encode};
use blanket_crypto::Keypair;
use blanket_protocol::driver::{SimClient, SimConfig};
use blanket_protocol::Client;
use rand_core06::{CryptoRng, RngCore};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Default long-poll hold asked of the relay (ms).
pub const DEFAULT_POLL_WAIT_MS: u64 = 20_000;
/// Default timeout of one HTTP request (ms); must exceed the long-poll hold.
pub const DEFAULT_REQUEST_TIMEOUT_MS: u64 = 60_000;
/// Default retries of a request that failed on the network or with a 5xx.
pub const DEFAULT_RETRIES: u32 = 5;
/// Default first pause before a retry (ms; doubles each retry).
pub const DEFAULT_RETRY_BACKOFF_MS: u64 = 250;

/// Longest pause between two retries (ms).
pub const MAX_RETRY_PAUSE_MS: u64 = 5_000;

/// Timeouts and retries of a client.
#[derive(Debug, Clone, Copy)]
pub struct ClientOptions {
    /// Long-poll hold asked of the relay (`wait_ms`), ms.
    pub poll_wait_ms: u64,
    /// Timeout of one HTTP request, ms.
    pub request_timeout_ms: u64,
    /// Retries of a request that failed on the network or with a 5xx (a 4xx is final).
    pub retries: u32,
    /// First pause before a retry, ms (doubles each retry, at most [`MAX_RETRY_PAUSE_MS`]).
    pub retry_backoff_ms: u64,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            poll_wait_ms: DEFAULT_POLL_WAIT_MS,
            request_timeout_ms: DEFAULT_REQUEST_TIMEOUT_MS,
            retries: DEFAULT_RETRIES,
            retry_backoff_ms: DEFAULT_RETRY_BACKOFF_MS,
        }
    }
}

/// Why a client could not go on.
#[derive(Debug, thiserror::Error)]
pub enum RelayClientError {
    /// The relay could not be reached (after the retries).
    #[error("relay unreachable: {0}")]
    Http(String),
    /// The relay refused a request.
    #[error("relay refused ({}): {}", .0.reason, .0.detail)]
    Refused(Problem),
    /// The relay answered something this client does not understand.
    #[error("unexpected answer from the relay: {0}")]
    Unexpected(String),
    /// A bad argument.
    #[error("{0}")]
    Setup(String),
}

/// What a client's state machine did with one request.
#[derive(Debug, Clone, Default)]
pub struct Action {
    /// Envelopes to post (together, in one signed request).
    pub replies: Vec<Vec<u8>>,
    /// The state machine refused the request.
    pub error: Option<String>,
    /// The client leaves the run (a simulated dropout).
    pub stop: bool,
}

/// A sans-IO client behind the transport.
pub trait Actor: Send {
    /// The long-term keys (registration and request signatures).
    fn keys(&self) -> &Keypair;
    /// Handles one request of the relay.
    fn act(&mut self, request: &[u8]) -> Action;
}

impl<R: RngCore + CryptoRng + Send> Actor for Client<R> {
    fn keys(&self) -> &Keypair {
        Client::keys(self)
    }
    fn act(&mut self, request: &[u8]) -> Action {
        match self.handle(request) {
            Ok(r) => Action {
                replies: r.into_iter().collect(),
                ..Action::default()
            },
            Err(e) => Action {
                error: Some(e.to_string()),
                ..Action::default()
            },
        }
    }
}

impl Actor for SimClient {
    fn keys(&self) -> &Keypair {
        SimClient::keys(self)
    }
    fn act(&mut self, request: &[u8]) -> Action {
        let a = SimClient::act(self, request);
        Action {
            replies: a.replies,
            error: a.error,
            stop: a.dropped,
        }
    }
}

/// What one client sent and received.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientReport {
    /// The client's index.
    pub index: u32,
    /// Envelope bytes posted (as the in-memory driver counts them).
    pub bytes_sent: u64,
    /// Envelope bytes received.
    pub bytes_received: u64,
    /// Bytes on the wire, HTTP/1.1 request lines, headers and bodies included (registration,
    /// polls, posts; counted from the headers as sent and received, TCP/IP not included).
    pub wire_sent: u64,
    /// Bytes on the wire received, status lines, headers and bodies included.
    pub wire_received: u64,
    /// Requests of the relay handled.
    pub requests: u32,
    /// Errors of the state machine and refusals of the relay, in order.
    pub errors: Vec<String>,
    /// The client left the run (a simulated dropout).
    pub dropped: bool,
}

fn header_bytes(h: &reqwest::header::HeaderMap) -> u64 {
    h.iter()
        .map(|(k, v)| k.as_str().len() + v.as_bytes().len() + 4)
        .sum::<usize>() as u64
}

/// An HTTP connection to the relay of one task, counting its bytes.
pub struct Connection {
    http: reqwest::Client,
    base: String,
    host: String,
    task: [u8; 16],
    opts: ClientOptions,
    wire_sent: u64,
    wire_received: u64,
}

struct Answer {
    status: u16,
    headers: reqwest::header::HeaderMap,
    body: Vec<u8>,
}

impl Connection {
    /// A connection (its own connection pool) to the relay at `base` for task `task` (hex).
    pub fn new(base: &str, task: &str, opts: ClientOptions) -> Result<Self, RelayClientError> {
        let task: [u8; 16] = hex_decode(task)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| {
                RelayClientError::Setup(format!("--task must be 32 hex digits, got {task:?}"))
            })?;
        let http = reqwest::Client::builder()
            .timeout(Duration::from_millis(opts.request_timeout_ms))
            .pool_max_idle_per_host(1)
            .build()
            .map_err(|e| RelayClientError::Http(e.to_string()))?;
        let base = base.trim_end_matches('/').to_string();
        let host = base
            .split("://")
            .nth(1)
            .unwrap_or(&base)
            .split('/')
            .next()
            .unwrap_or("")
            .to_string();
        Ok(Connection {
            http,
            base,
            host,
            task,
            opts,
            wire_sent: 0,
            wire_received: 0,
        })
    }

    /// The task id.
    pub fn task(&self) -> [u8; 16] {
        self.task
    }

    fn url(&self, rest: &str) -> String {
        format!(
            "{}/relay/tasks/{}{}",
            self.base,
            hex_encode(&self.task),
            rest
        )
    }

    /// One request with retries on network errors and 5xx.
    async fn send(
        &mut self,
        method: reqwest::Method,
        url: String,
        headers: Vec<(&'static str, String)>,
        body: Option<Vec<u8>>,
        content_type: &'static str,
    ) -> Result<Answer, RelayClientError> {
        let mut pause = self.opts.retry_backoff_ms;
        let mut attempt = 0;
        loop {
            let mut rb = self.http.request(method.clone(), &url);
            // Request line, Host, Accept and our headers (HTTP/1.1).
            let path_len = url.len() - self.base.len();
            let mut sent = (method.as_str().len() + 1 + path_len + 11) as u64
                + (6 + self.host.len() + 2) as u64
                + 13
                + 2;
            for (k, v) in &headers {
                rb = rb.header(*k, v);
                sent += (k.len() + v.len() + 4) as u64;
            }
            if let Some(b) = &body {
                rb = rb.header("content-type", content_type).body(b.clone());
                sent += (14 + content_type.len() + 4) as u64;
                sent += (16 + b.len().to_string().len() + 4) as u64 + b.len() as u64;
            }
            self.wire_sent += sent;
            let r = rb.send().await;
            let failure = match r {
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    let headers = resp.headers().clone();
                    match resp.bytes().await {
                        Ok(b) => {
                            self.wire_received += 17 + header_bytes(&headers) + 2 + b.len() as u64;
                            if status < 500 {
                                return Ok(Answer {
                                    status,
                                    headers,
                                    body: b.to_vec(),
                                });
                            }
                            format!("HTTP {status}: {}", String::from_utf8_lossy(&b))
                        }
                        Err(e) => e.to_string(),
                    }
                }
                Err(e) => e.to_string(),
            };
            if attempt >= self.opts.retries {
                return Err(RelayClientError::Http(format!(
                    "{url}: {failure} (after {} retries)",
                    self.opts.retries
                )));
            }
            attempt += 1;
            tokio::time::sleep(Duration::from_millis(pause)).await;
            pause = pause.saturating_mul(2).min(MAX_RETRY_PAUSE_MS);
        }
    }

    fn problem(a: &Answer) -> RelayClientError {
        match serde_json::from_slice::<Problem>(&a.body) {
            Ok(p) => RelayClientError::Refused(p),
            Err(_) => RelayClientError::Unexpected(format!(
                "HTTP {}: {}",
                a.status,
                String::from_utf8_lossy(&a.body)
            )),
        }
    }

    /// The task's status (as anyone reads it: a run without a protocol withholds its
    /// decrypted messages; [`Connection::status_as_admin`] shows them).
    pub async fn status(&mut self) -> Result<TaskStatus, RelayClientError> {
        let a = self
            .send(reqwest::Method::GET, self.url(""), Vec::new(), None, "")
            .await?;
        if a.status != 200 {
            return Err(Self::problem(&a));
        }
        serde_json::from_slice(&a.body).map_err(|e| RelayClientError::Unexpected(e.to_string()))
    }

    /// The task's status as the operator reads it (`Authorization: Bearer ADMIN_TOKEN`):
    /// with the decrypted messages of a run without a protocol.
    pub async fn status_as_admin(
        &mut self,
        admin_token: &str,
    ) -> Result<TaskStatus, RelayClientError> {
        let auth = vec![("authorization", format!("Bearer {admin_token}"))];
        let a = self
            .send(reqwest::Method::GET, self.url(""), auth, None, "")
            .await?;
        if a.status != 200 {
            return Err(Self::problem(&a));
        }
        serde_json::from_slice(&a.body).map_err(|e| RelayClientError::Unexpected(e.to_string()))
    }

    /// The started run's public seed and roles (`GET /relay/tasks/{task}/roles`).
    pub async fn roles(&mut self) -> Result<super::api::RolesJson, RelayClientError> {
        let a = self
            .send(
                reqwest::Method::GET,
                self.url("/roles"),
                Vec::new(),
                None,
                "",
            )
            .await?;
        if a.status != 200 {
            return Err(Self::problem(&a));
        }
        serde_json::from_slice(&a.body).map_err(|e| RelayClientError::Unexpected(e.to_string()))
    }

    /// Registers `keys`: with `credential` as its index with its token (a task with admission
    /// tokens), else as index `index` if given (an open task).
    pub async fn register<R: RngCore + CryptoRng>(
        &mut self,
        keys: &Keypair,
        index: Option<u32>,
        credential: Option<&Credential>,
        rng: &mut R,
    ) -> Result<RegisterResponse, RelayClientError> {
        let (index, token) = match credential {
            None => (index, None),
            Some(c) => {
                if hex_decode(&c.task).as_deref() != Some(&self.task[..]) {
                    return Err(RelayClientError::Setup(format!(
                        "the credential is for task {}, not {}",
                        c.task,
                        hex_encode(&self.task)
                    )));
                }
                let token: [u8; auth::TOKEN_BYTES] = hex_decode(&c.token)
                    .and_then(|b| b.try_into().ok())
                    .ok_or_else(|| {
                        RelayClientError::Setup(
                            "the credential's token is not 64 hex digits".into(),
                        )
                    })?;
                (Some(c.index), Some(token))
            }
        };
        let proof = auth::register_proof(&self.task, index, token.as_ref(), keys, rng);
        let req = RegisterRequest {
            public_key: hex_encode(&keys.public.to_bytes()),
            proof: hex_encode(&proof.to_bytes()),
            index,
            token: token.map(|t| hex_encode(&t)),
        };
        let body = serde_json::to_vec(&req).map_err(|e| RelayClientError::Setup(e.to_string()))?;
        let a = self
            .send(
                reqwest::Method::POST,
                self.url("/clients"),
                Vec::new(),
                Some(body),
                "application/json",
            )
            .await?;
        if a.status != 201 {
            return Err(Self::problem(&a));
        }
        serde_json::from_slice(&a.body).map_err(|e| RelayClientError::Unexpected(e.to_string()))
    }

    /// Message number `after + 1` for `client`, waiting up to the poll hold: `Ok(None)` if
    /// none came, `Err(Refused(run-over))` once the run ended.
    pub async fn next(
        &mut self,
        client: u32,
        after: u64,
    ) -> Result<Option<Vec<u8>>, RelayClientError> {
        let url = self.url(&format!(
            "/clients/{client}/inbox?after={after}&wait_ms={}",
            self.opts.poll_wait_ms
        ));
        let a = self
            .send(reqwest::Method::GET, url, Vec::new(), None, "")
            .await?;
        match a.status {
            200 => {
                let seq = a
                    .headers
                    .get(SEQ_HEADER)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.parse::<u64>().ok());
                if seq != Some(after + 1) {
                    return Err(RelayClientError::Unexpected(format!(
                        "asked for message {}, got {seq:?}",
                        after + 1
                    )));
                }
                Ok(Some(a.body))
            }
            204 => Ok(None),
            _ => Err(Self::problem(&a)),
        }
    }

    /// Posts `envelopes` as client `client`'s request number `seq`, signed with `keys`; the
    /// per-envelope results. A retried request whose first attempt was accepted is answered
    /// `replay`: treated as accepted.
    pub async fn post<R: RngCore + CryptoRng>(
        &mut self,
        client: u32,
        seq: u64,
        envelopes: &[Vec<u8>],
        keys: &Keypair,
        rng: &mut R,
    ) -> Result<Vec<String>, RelayClientError> {
        let body = auth::frame(envelopes);
        let sig = auth::sign_post(&self.task, client, seq, &body, keys, rng);
        let headers = vec![
            (SEQ_HEADER, seq.to_string()),
            (SIGNATURE_HEADER, hex_encode(&sig.to_bytes())),
        ];
        let a = self
            .send(
                reqwest::Method::POST,
                self.url(&format!("/clients/{client}/messages")),
                headers,
                Some(body),
                "application/octet-stream",
            )
            .await?;
        if a.status == 200 {
            let r: super::api::PostResponse = serde_json::from_slice(&a.body)
                .map_err(|e| RelayClientError::Unexpected(e.to_string()))?;
            return Ok(r.results);
        }
        Err(Self::problem(&a))
    }
}

/// Drives `actor`, registered as `index`, until the run is over (or it leaves).
pub async fn drive<A: Actor, R: RngCore + CryptoRng>(
    conn: &mut Connection,
    index: u32,
    actor: &mut A,
    rng: &mut R,
) -> Result<ClientReport, RelayClientError> {
    let mut rep = ClientReport {
        index,
        ..ClientReport::default()
    };
    let mut after = 0u64;
    let mut seq = 0u64;
    loop {
        let msg = match conn.next(index, after).await {
            Ok(Some(m)) => m,
            Ok(None) => continue,
            Err(RelayClientError::Refused(p)) if p.reason == "run-over" => break,
            Err(e) => return Err(e),
        };
        after += 1;
        rep.requests += 1;
        rep.bytes_received += msg.len() as u64;
        let action = actor.act(&msg);
        if let Some(e) = action.error {
            rep.errors.push(e);
        }
        if !action.replies.is_empty() {
            seq += 1;
            rep.bytes_sent += action.replies.iter().map(|r| r.len() as u64).sum::<u64>();
            match conn
                .post(index, seq, &action.replies, actor.keys(), rng)
                .await
            {
                Ok(results) => rep.errors.extend(
                    results
                        .into_iter()
                        .filter(|r| r != "accepted")
                        .map(|r| format!("refused: {r}")),
                ),
                Err(RelayClientError::Refused(p)) if p.reason == "run-over" => break,
                Err(RelayClientError::Refused(p)) => {
                    rep.errors.push(format!("refused: {}", p.reason))
                }
                Err(e) => return Err(e),
            }
        }
        if action.stop {
            rep.dropped = true;
            break;
        }
    }
    rep.wire_sent = conn.wire_sent;
    rep.wire_received = conn.wire_received;
    Ok(rep)
}

/// One real client: registers a fresh key pair (OS randomness) for task `task` (with its
/// `credential` if the task has admission tokens) with messages `values`, drives the protocol
/// to its end, and returns its report and the final status.
pub async fn run_client(
    base: &str,
    task: &str,
    values: Vec<u64>,
    credential: Option<&Credential>,
    opts: ClientOptions,
) -> Result<(ClientReport, TaskStatus), RelayClientError> {
    let mut conn = Connection::new(base, task, opts)?;
    let st = conn.status().await?;
    if values.len() != st.spec.messages_per_client as usize {
        return Err(RelayClientError::Setup(format!(
            "task {task} takes {} value(s) per client (--value repeated), got {}",
            st.spec.messages_per_client,
            values.len()
        )));
    }
    // A task with a protocol: the value is a category, randomized before it is encrypted.
    let values = match &st.randomizer {
        None => values,
        Some(rz) => values
            .iter()
            .map(|&v| super::release::randomize_value(rz, v))
            .collect::<Result<_, _>>()
            .map_err(RelayClientError::Setup)?,
    };
    // The run's parameters: the proof system, and the threshold and chain
    // length the client checks the relay's requests against.
    let params = st
        .spec
        .params()
        .map_err(|e| RelayClientError::Unexpected(e.to_string()))?;
    let mut rng = rand_core06::OsRng;
    let keys = Keypair::generate(&mut rng);
    let reg = conn.register(&keys, None, credential, &mut rng).await?;
    // Once the run started (its first request is here), the public seed is fixed: recompute
    // it from the registered keys and the relay's nonce, and the roles from it, before acting.
    // The checked document's keys become the client's directory: every key the relay later
    // names (committee members, attesting dealers, shufflers) must be the registered one
    // (`docs/protocol.md`, "What a malicious relay can and cannot do").
    let mut directory = None;
    loop {
        match conn.next(reg.index, 0).await {
            Ok(Some(_)) => {
                let doc = conn.roles().await?;
                super::roles::check_roles(&st.spec, &doc, Some((reg.index, &keys.public)))
                    .map_err(|e| RelayClientError::Unexpected(e.to_string()))?;
                directory =
                    Some(super::roles::directory(&doc).map_err(|e| {
                        RelayClientError::Unexpected(format!("roles document: {e}"))
                    })?);
                break;
            }
            Ok(None) => continue,
            Err(RelayClientError::Refused(p)) if p.reason == "run-over" => break,
            Err(e) => return Err(e),
        }
    }
    let client_rng = rand_core06::OsRng;
    let mut client =
        Client::new(reg.index, conn.task(), keys, values, client_rng).with_params(&params);
    if let Some(d) = directory {
        client.set_directory(d);
    }
    let rep = drive(&mut conn, reg.index, &mut client, &mut rng).await?;
    let st = conn.status().await?;
    Ok((rep, st))
}

/// The result of a simulation over the network.
#[derive(Debug, Clone)]
pub struct SimulationReport {
    /// The relay's final status.
    pub status: TaskStatus,
    /// One report per client, by index.
    pub clients: Vec<ClientReport>,
    /// Clients that failed to finish (transport errors), with the error.
    pub failures: Vec<(u32, String)>,
    /// Wall seconds from the first registration to the last client's end.
    pub seconds: f64,
}

/// Creates a task (for a simulation, `sim_seed` = the simulation's seed) and returns its id
/// (the credentials of a task with admission tokens are dropped: see [`create`]); the relay
/// needs the operator's `admin_token` (else 401 `admin-token-missing`).
pub async fn create_task(
    base: &str,
    spec: &TaskSpec,
    admin_token: Option<&str>,
) -> Result<String, RelayClientError> {
    Ok(create(base, spec, admin_token).await?.status.task)
}

/// Creates a task and returns its status and, with admission tokens (the default), one
/// credential per client index (shown once: hand each to one participant).
pub async fn create(
    base: &str,
    spec: &TaskSpec,
    admin_token: Option<&str>,
) -> Result<CreateResponse, RelayClientError> {
    let http = reqwest::Client::new();
    let mut req = http
        .post(format!("{}/relay/tasks", base.trim_end_matches('/')))
        .json(spec);
    if let Some(t) = admin_token {
        req = req.bearer_auth(t);
    }
    let r = req
        .send()
        .await
        .map_err(|e| RelayClientError::Http(e.to_string()))?;
    let status = r.status().as_u16();
    let body = r
        .bytes()
        .await
        .map_err(|e| RelayClientError::Http(e.to_string()))?;
    if status != 201 {
        return Err(match serde_json::from_slice::<Problem>(&body) {
            Ok(p) => RelayClientError::Refused(p),
            Err(_) => RelayClientError::Unexpected(String::from_utf8_lossy(&body).into()),
        });
    }
    serde_json::from_slice(&body).map_err(|e| RelayClientError::Unexpected(e.to_string()))
}

/// Runs the simulated clients of `cfg` against task `task` (created with `sim_seed` =
/// `cfg.seed`): each a tokio task with its own keys and connection, registered at its own
/// index with that index's credential (`credentials`, as [`create`] returned them; empty for
/// an open task). `finished` counts the clients that ended (for a progress bar).
pub async fn simulate(
    base: &str,
    task: &str,
    credentials: &[Credential],
    cfg: &SimConfig,
    opts: ClientOptions,
    finished: Arc<AtomicUsize>,
) -> Result<SimulationReport, RelayClientError> {
    let n = cfg.params.clients;
    let mut by_index: Vec<Option<Credential>> = vec![None; n as usize];
    for c in credentials {
        if let Some(slot) = by_index.get_mut(c.index as usize) {
            *slot = Some(c.clone());
        }
    }
    if !credentials.is_empty() && by_index.iter().any(Option::is_none) {
        return Err(RelayClientError::Setup(format!(
            "{} credentials do not cover the {n} client indices",
            credentials.len()
        )));
    }
    let t0 = Instant::now();
    let mut handles = Vec::with_capacity(n as usize);
    // Registration a few at a time (each is a database write), then the protocol.
    let gate = Arc::new(tokio::sync::Semaphore::new(32));
    let sims = SimClient::all(cfg).map_err(|e| RelayClientError::Setup(e.to_string()))?;
    for ((i, sim), cred) in (0..n).zip(sims).zip(by_index) {
        let mut conn = Connection::new(base, task, opts)?;
        let gate = Arc::clone(&gate);
        let finished = Arc::clone(&finished);
        handles.push(tokio::spawn(async move {
            let mut sim = sim;
            let mut rng = rand_core06::OsRng;
            let permit = gate.acquire_owned().await;
            let reg = conn
                .register(sim.keys(), Some(i), cred.as_ref(), &mut rng)
                .await;
            drop(permit);
            let reg = reg?;
            let r = drive(&mut conn, reg.index, &mut sim, &mut rng).await;
            finished.fetch_add(1, Ordering::Relaxed);
            r
        }));
    }
    let mut clients = Vec::with_capacity(n as usize);
    let mut failures = Vec::new();
    for (i, h) in handles.into_iter().enumerate() {
        match h.await {
            Ok(Ok(r)) => clients.push(r),
            Ok(Err(e)) => {
                failures.push((i as u32, e.to_string()));
                clients.push(ClientReport {
                    index: i as u32,
                    ..ClientReport::default()
                });
            }
            Err(e) => {
                failures.push((i as u32, e.to_string()));
                clients.push(ClientReport {
                    index: i as u32,
                    ..ClientReport::default()
                });
            }
        }
    }
    let seconds = t0.elapsed().as_secs_f64();
    let status = Connection::new(base, task, opts)?.status().await?;
    Ok(SimulationReport {
        status,
        clients,
        failures,
        seconds,
    })
}
