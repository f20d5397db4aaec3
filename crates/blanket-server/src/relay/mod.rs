//! The relay role (`blanket serve --role relay`): the sans-IO relay of the clients' verifiable
//! shuffle ([`blanket_protocol::Relay`]; spec `05-secure-shuffle.md`) driven over HTTP.
//!
//! - [`api`]: JSON bodies; [`auth`]: who is client i (registration proof of possession,
//!   signed posts, the post framing); [`routes`]: the HTTP surface; [`store`]: the tables;
//!   [`roles`]: the public seed (fixed when registration closes) and the roles it selects;
//!   [`client`]: the clients' side (one real client, or N simulated ones); `run`: one run's
//!   state ([`RunHandle`]); `ledger`: its release on the budget ledger ([`Ledger`]).
//! - State is event-sourced: the relay state machine is deterministic given its inputs
//!   (`start(now)`, `receive(from, bytes)`, `advance(now)`: it draws no randomness, its
//!   verifications are deterministic), so the database holds the task, the registered keys
//!   and the log of every input, appended in the transaction that acknowledges it; the
//!   outboxes are recomputed by replaying the log when the process starts
//!   ([`RelayService::open`]). A client request number is accepted once (in memory, and by a
//!   unique key of the log), so a replay is refused before and after a restart.
//! - One driver task per started run closes a round as soon as every party asked has
//!   answered, or at its deadline.

pub mod api;
pub mod auth;
pub mod client;
mod ledger;
pub mod release;
pub mod roles;
pub mod routes;
mod run;
pub mod store;

pub use ledger::Ledger;
pub use roles::{draw_seed_nonce, public_seed, SEED_NONCE_BYTES};
pub use run::RunHandle;

use crate::problem::Rejection;
use crate::store::Store;
use crate::wire::hex_encode;
use api::{TaskSpec, TaskStatus};
use blanket_crypto::PublicKey;
use blanket_protocol::{RelayError, RelayRefusal};
use ledger::{charge_of, ledger_of};
use run::RunState;
use std::collections::HashMap;
use std::sync::Arc;
use store::LogEntry;

/// Milliseconds since the Unix epoch (the relay's clock).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn api_out_of_range(field: &str, allowed: &str, value: impl ToString) -> Rejection {
    Rejection::OutOfRange {
        field: field.into(),
        allowed: allowed.into(),
        value: value.to_string(),
    }
}

/// The typed reason of a refused protocol message.
pub fn refusal_reason(r: &RelayRefusal) -> &'static str {
    match r {
        RelayRefusal::Malformed { .. } => "malformed-envelope",
        RelayRefusal::WrongRun { .. } => "wrong-run",
        RelayRefusal::SenderMismatch { .. } => "sender-mismatch",
        RelayRefusal::Misaddressed { .. } => "misaddressed",
        RelayRefusal::WrongRound { .. } => "wrong-round",
        RelayRefusal::NotExpected { .. } => "not-expected",
        RelayRefusal::Replay { .. } => "replay",
        RelayRefusal::Equivocation { .. } => "equivocation",
        RelayRefusal::WrongKind { .. } => "wrong-kind",
        RelayRefusal::Closed => "run-over",
    }
}

/// The relay role.
pub struct RelayService {
    store: Store,
    runs: std::sync::RwLock<HashMap<[u8; 16], Arc<RunHandle>>>,
    /// The operator's secret for `POST /relay/tasks` (a task spends a budget, and a
    /// continuation spends another task's: only the operator may create one).
    admin_token: String,
}

impl RelayService {
    /// Opens the relay over `store`: every stored run is rebuilt by replaying its log, and
    /// the runs still in progress are driven on. Creating a task needs `admin_token`.
    pub async fn open(store: Store, admin_token: String) -> Result<Arc<Self>, Rejection> {
        let svc = Arc::new(RelayService {
            store,
            runs: std::sync::RwLock::new(HashMap::new()),
            admin_token,
        });
        let mut stored = Vec::new();
        for t in svc.store.relay_tasks().await? {
            let mut spec: TaskSpec = serde_json::from_str(&t.spec)
                .map_err(|e| Rejection::Storage(format!("stored relay task spec: {e}")))?;
            // A spec stored before `key_committees` existed ran one key committee (creation
            // now always fills the field in).
            spec.key_committees.get_or_insert_with(|| "single".into());
            stored.push((t.task, spec));
        }
        let specs: HashMap<[u8; 16], TaskSpec> = stored.iter().cloned().collect();
        for (task, spec) in stored {
            let params = spec.params()?;
            let plan = spec.release_plan(&params)?;
            let ledger = ledger_of(task, &spec, |id| specs.get(id).cloned())?;
            let admission = match spec.admission()? {
                api::Admission::Open => None,
                api::Admission::Tokens => {
                    let hashes = svc.store.relay_admission(task).await?;
                    if hashes.len() != params.clients as usize {
                        return Err(Rejection::Storage(format!(
                            "relay task {}: {} enrollment token hashes for {} clients",
                            hex_encode(&task),
                            hashes.len(),
                            params.clients
                        )));
                    }
                    Some(hashes)
                }
            };
            let h = Arc::new(RunHandle::new(task, spec, params, plan, ledger, admission));
            {
                let mut st = h.state.lock().await;
                for (i, k) in svc.store.relay_clients(task).await? {
                    let key = PublicKey::from_bytes(&k)
                        .map_err(|e| Rejection::Storage(format!("stored client key: {e}")))?;
                    if let Some(slot) = st.keys.get_mut(i as usize) {
                        *slot = Some(key);
                        st.registered += 1;
                    }
                }
                let log = svc.store.relay_log(task).await?;
                let h2 = Arc::clone(&h);
                let st_owned = std::mem::replace(
                    &mut *st,
                    RunState {
                        keys: Vec::new(),
                        registered: 0,
                        relay: None,
                        outbox: Vec::new(),
                        last_seq: Vec::new(),
                        log_len: 0,
                        result: None,
                        broken: None,
                        driving: false,
                        settled: None,
                        seed: None,
                    },
                );
                // Replaying re-verifies every proof: CPU work, off the async threads.
                let replayed = tokio::task::spawn_blocking(move || {
                    let mut st = st_owned;
                    for e in log {
                        h2.replay(&mut st, e)?;
                    }
                    Ok::<_, Rejection>(st)
                })
                .await
                .map_err(|e| Rejection::Storage(format!("replay: {e}")))??;
                *st = replayed;
                // A run delivered before the restart: its settlement is read back, or, if
                // the process died between the last log write and the charge, made now
                // (once: the charge and the settlement commit together).
                svc.settle(&h, &mut st).await;
            }
            svc.runs
                .write()
                .map_err(|_| Rejection::Storage("lock poisoned".into()))?
                .insert(task, Arc::clone(&h));
            svc.maybe_start(&h).await?;
        }
        Ok(svc)
    }

    /// Refuses a request without the operator's admin token (401 `admin-token-missing` or
    /// `admin-token-wrong`).
    pub fn check_admin(&self, headers: &axum::http::HeaderMap) -> Result<(), Rejection> {
        crate::http::check_admin(headers, &self.admin_token)
    }

    /// The run, or `UnknownTask`.
    pub fn run(&self, task: &str) -> Result<Arc<RunHandle>, Rejection> {
        let id = crate::wire::hex_decode(task)
            .and_then(|b| <[u8; 16]>::try_from(b).ok())
            .ok_or_else(|| Rejection::UnknownTask(task.to_string()))?;
        self.runs
            .read()
            .map_err(|_| Rejection::Storage("lock poisoned".into()))?
            .get(&id)
            .cloned()
            .ok_or_else(|| Rejection::UnknownTask(task.to_string()))
    }

    /// Every run's status (the status page), by task id.
    pub async fn statuses(&self) -> Result<Vec<TaskStatus>, Rejection> {
        let runs: Vec<Arc<RunHandle>> = match self.runs.read() {
            Ok(r) => r.values().cloned().collect(),
            Err(_) => Vec::new(),
        };
        let mut out = Vec::with_capacity(runs.len());
        for r in runs {
            out.push(self.status_of(&r).await?);
        }
        out.sort_by(|a, b| a.task.cmp(&b.task));
        Ok(out)
    }

    /// Creates a run; with admission tokens (the default) also its credentials, one per
    /// client index (returned once: only their hashes are stored).
    pub async fn create(&self, spec: TaskSpec) -> Result<api::CreateResponse, Rejection> {
        let mut spec = spec;
        // Admission is on unless an open task is asked for explicitly.
        spec.admission
            .get_or_insert_with(|| api::Admission::Tokens.name().into());
        let params = spec.params()?;
        // Stored with the key committees chosen (the variant's default resolved), so that a
        // restart replays the same run.
        spec.key_committees = Some(blanket_protocol::KeyCommittees::of(&params).name().into());
        let plan = spec.release_plan(&params)?;
        spec.complete_budget()?;
        if let Some(c) = &spec.continues {
            // Stored as the task that holds the budget.
            let root = self.run(c).map_err(|_| {
                api_out_of_range(
                    "continues",
                    "the id of an existing relay task with a protocol",
                    c,
                )
            })?;
            if root.ledger.is_none() {
                return Err(api_out_of_range(
                    "continues",
                    "the id of a relay task with a protocol (one that has a budget)",
                    c,
                ));
            }
            spec.continues = root.ledger.map(|l| hex_encode(&l.task));
        }
        let task = match spec.sim_seed {
            Some(s) => blanket_protocol::driver::run_id_and_seed(s).0,
            None => {
                let mut t = [0u8; 16];
                let mut rng = blanket::rng::SecureRng::from_os()
                    .map_err(|e| Rejection::Storage(e.to_string()))?;
                blanket::rng::RngCore::fill_bytes(&mut rng, &mut t);
                t
            }
        };
        let ledger = ledger_of(task, &spec, |id| {
            self.runs
                .read()
                .ok()
                .and_then(|r| r.get(id).map(|h| h.spec.clone()))
        })?;
        if let (Some(l), Some(plan)) = (ledger, &plan) {
            // The first release must fit the total budget (else the task could never
            // release); a continuation's must fit what is left now (checked again, in the
            // charging transaction, when it releases).
            let (eps, delta) = charge_of(plan, &spec);
            let spent = if spec.continues.is_some() {
                self.store.ledger_spent(l.task).await?
            } else {
                Vec::new()
            };
            if let Err(e) =
                crate::release::charge_within(l.total_eps, l.total_delta, &spent, eps, delta)
            {
                return Err(if spec.continues.is_some() {
                    e
                } else {
                    api_out_of_range(
                        "budget_eps",
                        &format!("at least this task's one release, eps {eps}, delta {delta:e}"),
                        format!("{} (budget_delta {:e})", l.total_eps, l.total_delta),
                    )
                });
            }
        }
        // One enrollment token per index (OS CSPRNG); the relay keeps only their hashes.
        let mut credentials = Vec::new();
        let mut hashes = Vec::new();
        if spec.admission()? == api::Admission::Tokens {
            let mut rng = blanket::rng::SecureRng::from_os()
                .map_err(|e| Rejection::Storage(e.to_string()))?;
            for i in 0..params.clients {
                let mut token = [0u8; auth::TOKEN_BYTES];
                blanket::rng::RngCore::fill_bytes(&mut rng, &mut token);
                hashes.push(auth::token_hash(&task, i, &token));
                credentials.push(api::Credential {
                    task: hex_encode(&task),
                    index: i,
                    token: hex_encode(&token),
                });
            }
        }
        let json = serde_json::to_string(&spec).map_err(|e| Rejection::Storage(e.to_string()))?;
        self.store
            .put_relay_task(task, &json, crate::http::now_unix(), &hashes)
            .await?;
        let admission = (spec.admission()? == api::Admission::Tokens).then_some(hashes);
        let h = Arc::new(RunHandle::new(task, spec, params, plan, ledger, admission));
        self.runs
            .write()
            .map_err(|_| Rejection::Storage("lock poisoned".into()))?
            .insert(task, Arc::clone(&h));
        Ok(api::CreateResponse {
            status: self.status_of(&h).await?,
            credentials,
        })
    }

    /// A run's status with its budget (and its release settled, if it is due and was not,
    /// for instance after a storage error).
    pub async fn status_of(&self, h: &RunHandle) -> Result<TaskStatus, Rejection> {
        if h.ledger.is_some() {
            let mut st = h.state.lock().await;
            if st.settled.is_none() && st.finished() {
                self.settle(h, &mut st).await;
            }
        }
        let mut status = h.status().await;
        if let Some(l) = h.ledger {
            status.budget = Some(self.budget_json(l).await?);
        }
        Ok(status)
    }

    /// Registers a key; the run starts when the last key arrives.
    pub async fn register(
        self: &Arc<Self>,
        h: &Arc<RunHandle>,
        key: PublicKey,
        index: Option<u32>,
    ) -> Result<u32, Rejection> {
        let idx = {
            let mut st = h.state.lock().await;
            if st.relay.is_some() || st.registered >= h.params.clients {
                return Err(Rejection::TaskClosed(hex_encode(&h.task)));
            }
            let idx = match index {
                Some(i) if i >= h.params.clients => {
                    return Err(Rejection::OutOfRange {
                        field: "index".into(),
                        allowed: format!("0..{}", h.params.clients),
                        value: i.to_string(),
                    })
                }
                Some(i) => i,
                None => st.keys.iter().position(|k| k.is_none()).unwrap_or(0) as u32,
            };
            if st.keys[idx as usize].is_some() {
                return Err(Rejection::Duplicate("client index"));
            }
            if st.keys.iter().flatten().any(|k| *k == key) {
                return Err(Rejection::Duplicate("public key"));
            }
            self.store
                .put_relay_client(h.task, idx, &key.to_bytes())
                .await?;
            st.keys[idx as usize] = Some(key);
            st.registered += 1;
            idx
        };
        self.maybe_start(h).await?;
        Ok(idx)
    }

    /// Starts the run once every key is in (and drives a started, unfinished run).
    async fn maybe_start(self: &Arc<Self>, h: &Arc<RunHandle>) -> Result<(), Rejection> {
        let mut st = h.state.clone().lock_owned().await;
        if st.finished() || st.registered < h.params.clients {
            return Ok(());
        }
        if st.relay.is_none() {
            let now = now_ms();
            // The seed is fixed now, after registration closed, from a nonce no registrant
            // could know while choosing its key; logged with the start, so a restart replays
            // the same roles.
            let nonce = roles::draw_seed_nonce(&h.spec)?;
            let mut relay = h.make_relay(&mut st, nonce)?;
            let out = relay.start(now);
            if let Err(e) = self
                .store
                .append_relay_log(h.task, st.log_len, &[LogEntry::Start { at_ms: now, nonce }])
                .await
            {
                st.seed = None;
                return Err(e);
            }
            st.log_len += 1;
            st.relay = Some(relay);
            st.deliver(out);
            h.bump();
        }
        if st.driving {
            return Ok(());
        }
        st.driving = true;
        drop(st);
        let svc = Arc::clone(self);
        let h = Arc::clone(h);
        tokio::spawn(async move { svc.drive(h).await });
        Ok(())
    }

    /// Closes rounds until the run ends.
    async fn drive(self: Arc<Self>, h: Arc<RunHandle>) {
        loop {
            let (finished, ready, deadline) = {
                let st = h.state.lock().await;
                match (&st.relay, &st.broken) {
                    (Some(r), None) => (st.finished(), r.ready(), r.deadline()),
                    _ => return,
                }
            };
            if finished {
                return;
            }
            let now = now_ms();
            if ready || now >= deadline {
                if self.advance(&h, now).await.is_err() {
                    return;
                }
                continue;
            }
            let wait = std::time::Duration::from_millis(deadline - now);
            let _ = tokio::time::timeout(wait, h.inbound.notified()).await;
        }
    }

    async fn advance(&self, h: &Arc<RunHandle>, now: u64) -> Result<(), Rejection> {
        let st = h.state.clone().lock_owned().await;
        if st.finished() {
            return Ok(());
        }
        let (mut st, step) = tokio::task::spawn_blocking(move || {
            let mut st = st;
            let step = match st.relay.as_mut() {
                Some(r) => r.advance(now),
                None => Err(RelayError::Ended),
            };
            (st, step)
        })
        .await
        .map_err(|e| Rejection::Storage(format!("advance: {e}")))?;
        if matches!(step, Err(RelayError::NotYet { .. })) {
            return Ok(());
        }
        if let Err(e) = self
            .store
            .append_relay_log(h.task, st.log_len, &[LogEntry::Advance { at_ms: now }])
            .await
        {
            st.broken = Some(storage_broken(&e));
            h.bump();
            return Err(e);
        }
        st.log_len += 1;
        st.apply_step(step);
        if st.finished() {
            // Settled before the run is seen finished, so a delivered run's status shows
            // its release (or its refusal) at once.
            self.settle(h, &mut st).await;
        }
        drop(st);
        h.bump();
        Ok(())
    }

    /// Accepts client `client`'s signed post number `seq` with these envelopes; one result
    /// per envelope (accepted, or the relay's refusal).
    pub async fn receive(
        &self,
        h: &Arc<RunHandle>,
        client: u32,
        seq: u64,
        parts: Vec<Vec<u8>>,
    ) -> Result<Vec<Result<(), RelayRefusal>>, Rejection> {
        let st = h.state.clone().lock_owned().await;
        if let Some(b) = &st.broken {
            return Err(Rejection::Storage(b.clone()));
        }
        if st.relay.is_none() {
            return Err(Rejection::RelayRefused {
                reason: "not-started",
                detail: format!(
                    "the run has not started: {} of {} clients registered",
                    st.registered, h.params.clients
                ),
            });
        }
        if st.finished() {
            return Err(Rejection::RelayRefused {
                reason: "run-over",
                detail: "the run is over".into(),
            });
        }
        let last = st.last_seq[client as usize];
        if seq <= last {
            return Err(Rejection::RelayRefused {
                reason: "replay",
                detail: format!(
                    "request number {seq} of client {client} is not after its last accepted one, {last}"
                ),
            });
        }
        let big = parts.iter().map(Vec::len).sum::<usize>() > 64 * 1024;
        let run = move |mut st: tokio::sync::OwnedMutexGuard<RunState>, parts: Vec<Vec<u8>>| {
            let results: Vec<Result<(), RelayRefusal>> = match st.relay.as_mut() {
                Some(r) => parts.iter().map(|p| r.receive(client, p)).collect(),
                None => Vec::new(),
            };
            (st, parts, results)
        };
        let (mut st, parts, results) = if big {
            tokio::task::spawn_blocking(move || run(st, parts))
                .await
                .map_err(|e| Rejection::Storage(format!("receive: {e}")))?
        } else {
            run(st, parts)
        };
        let entries: Vec<LogEntry> = parts
            .into_iter()
            .enumerate()
            .map(|(k, body)| LogEntry::Receive {
                client,
                client_seq: seq,
                part: k as u32,
                body,
            })
            .collect();
        if let Err(e) = self
            .store
            .append_relay_log(h.task, st.log_len, &entries)
            .await
        {
            st.broken = Some(storage_broken(&e));
            return Err(e);
        }
        st.log_len += entries.len() as u64;
        st.last_seq[client as usize] = seq;
        drop(st);
        h.inbound.notify_one();
        Ok(results)
    }

    /// The registered key of client `client`.
    pub async fn key_of(&self, h: &RunHandle, client: u32) -> Result<PublicKey, Rejection> {
        let st = h.state.lock().await;
        st.keys
            .get(client as usize)
            .copied()
            .flatten()
            .ok_or_else(|| Rejection::OutOfRange {
                field: "client".into(),
                allowed: format!(
                    "a registered client index (0..{}, {} registered)",
                    h.params.clients, st.registered
                ),
                value: client.to_string(),
            })
    }

    /// Client `client`'s message number `after + 1`, waiting up to `wait` for it:
    /// `Ok(None)` if none came.
    pub async fn next_message(
        &self,
        h: &RunHandle,
        client: u32,
        after: u64,
        wait: std::time::Duration,
    ) -> Result<Option<Vec<u8>>, Rejection> {
        let mut rx = h.outbound.subscribe();
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            {
                let st = h.state.lock().await;
                if let Some(b) = &st.broken {
                    return Err(Rejection::Storage(b.clone()));
                }
                let Some(ob) = st.outbox.get(client as usize) else {
                    return Err(Rejection::OutOfRange {
                        field: "client".into(),
                        allowed: format!("0..{}", h.params.clients),
                        value: client.to_string(),
                    });
                };
                if let Some(m) = usize::try_from(after).ok().and_then(|a| ob.get(a)) {
                    return Ok(Some(m.clone()));
                }
                if st.finished() {
                    return Err(Rejection::RelayRefused {
                        reason: "run-over",
                        detail: format!(
                            "the run is over and holds no message after number {after} for client {client}"
                        ),
                    });
                }
            }
            match tokio::time::timeout_at(deadline, rx.changed()).await {
                Ok(Ok(())) => continue,
                _ => return Ok(None),
            }
        }
    }
}

/// What a run's status says when writing its event log failed: the cause (paths, SQL, driver
/// messages) goes to the server's log only, as for every `503 storage` answer.
fn storage_broken(e: &Rejection) -> String {
    eprintln!("blanket relay: the event log could not be written: {e}");
    "the relay's storage failed; the run stopped (the cause is in the server's log)".into()
}
