//! The relay role (`blanket serve --role relay`): the sans-IO relay of the clients' verifiable
//! shuffle ([`blanket_protocol::Relay`]; spec `05-secure-shuffle.md`) driven over HTTP.
//!
//! - [`api`]: JSON bodies; [`auth`]: who is client i (registration proof of possession,
//!   signed posts, the post framing); [`routes`]: the HTTP surface; [`store`]: the tables;
//!   [`client`]: the clients' side (one real client, or N simulated ones).
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
pub mod release;
pub mod routes;
pub mod store;

use crate::problem::Rejection;
use crate::store::Store;
use crate::wire::hex_encode;
use api::{
    CheaterJson, Derived, LedgerJson, OutputJson, ReleaseJson, SilentJson, TaskSpec, TaskStatus,
};
use blanket_crypto::PublicKey;
use blanket_protocol::relay::{Outgoing, RunOutput, Step};
use blanket_protocol::{ProtocolParams, Relay, RelayError, RelayRefusal};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Arc;
use store::LogEntry;
use tokio::sync::{watch, Mutex, Notify};

/// Milliseconds since the Unix epoch (the relay's clock).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The public seed of a run: the in-memory driver's for a simulation seed, else the SHA-256
/// of the task id and every registered key in index order (fixed once registration closed,
/// so every client can recompute it and the roles it selects).
pub fn public_seed(spec: &TaskSpec, task: &[u8; 16], keys: &[PublicKey]) -> [u8; 32] {
    if let Some(s) = spec.sim_seed {
        return blanket_protocol::driver::run_id_and_seed(s).1;
    }
    let mut h = Sha256::new();
    h.update(b"blanket/relay/v1/seed");
    h.update(task);
    for k in keys {
        h.update(k.to_bytes());
    }
    h.finalize().into()
}

/// The budget a task's releases are charged to: its own (with a protocol), or the one of
/// the task it continues (looked up by `spec_of`).
fn ledger_of(
    task: [u8; 16],
    spec: &TaskSpec,
    spec_of: impl Fn(&[u8; 16]) -> Option<TaskSpec>,
) -> Result<Option<Ledger>, Rejection> {
    if spec.protocol.is_none() {
        return Ok(None);
    }
    let (holder, holder_spec) = match &spec.continues {
        None => (task, spec.clone()),
        Some(c) => {
            let id = crate::wire::hex_decode(c)
                .and_then(|b| <[u8; 16]>::try_from(b).ok())
                .ok_or_else(|| {
                    api_out_of_range("continues", "a relay task id (32 hex digits)", c)
                })?;
            let s = spec_of(&id).ok_or_else(|| {
                api_out_of_range("continues", "the id of an existing relay task", c)
            })?;
            (id, s)
        }
    };
    match (holder_spec.budget_eps, holder_spec.budget_delta) {
        (Some(total_eps), Some(total_delta)) => Ok(Some(Ledger {
            task: holder,
            total_eps,
            total_delta,
        })),
        _ => Err(api_out_of_range(
            "continues",
            "the id of a relay task holding a budget",
            hex_encode(&holder),
        )),
    }
}

/// What one release of `plan` is charged: its certified epsilon, and its certified delta
/// plus the probability 2^-sigma that the shuffle is not private (rounded up). Without a
/// certified guarantee, more than any budget.
fn charge_of(plan: &blanket_protocol::release::HistogramRelease, spec: &TaskSpec) -> (f64, f64) {
    match &plan.cal.certified {
        Some(g) => (g.epsilon, api::one_release_delta(g.delta, spec.sigma)),
        None => (f64::INFINITY, 1.0),
    }
}

fn settled_of(s: store::Settlement) -> Option<Settled> {
    match s {
        store::Settlement::Released(b) => serde_json::from_str(&b).ok().map(Settled::Released),
        store::Settlement::Refused(p) => serde_json::from_str(&p).ok().map(Settled::Refused),
    }
}

/// a - b rounded down (never below 0): the budget left is never overstated.
fn sub_down(a: f64, b: f64) -> f64 {
    let nb = -b;
    let s = a + nb;
    let bb = s - a;
    let err = (a - (s - bb)) + (nb - bb);
    let s = if err < 0.0 { s.next_down() } else { s };
    s.max(0.0)
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

struct RunState {
    keys: Vec<Option<PublicKey>>,
    registered: u32,
    relay: Option<Relay>,
    /// Per client, the relay's messages to it in order (message k is `outbox[i][k-1]`).
    outbox: Vec<Vec<Vec<u8>>>,
    /// Per client, the last request number accepted.
    last_seq: Vec<u64>,
    log_len: u64,
    result: Option<Result<RunOutput, String>>,
    /// A log write failed after the state changed in memory: the in-memory state is ahead
    /// of the database, so this run answers 503 until the process restarts (and replays).
    broken: Option<String>,
    /// A driver task runs this run.
    driving: bool,
    /// How the release was settled on the ledger (with a protocol, once delivered).
    settled: Option<Settled>,
}

/// A run's release as settled on the ledger.
#[derive(Debug, Clone)]
enum Settled {
    Released(ReleaseJson),
    Refused(crate::Problem),
}

/// The budget a run's release is charged to: the ledger of task `task` (the run itself, or
/// the task it continues), with its totals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ledger {
    /// The task holding the budget.
    pub task: [u8; 16],
    /// Total epsilon.
    pub total_eps: f64,
    /// Total delta.
    pub total_delta: f64,
}

impl RunState {
    fn finished(&self) -> bool {
        self.result.is_some()
    }

    fn deliver(&mut self, out: Vec<Outgoing>) {
        for o in out {
            if let Some(b) = self.outbox.get_mut(o.to as usize) {
                b.push(o.bytes);
            }
        }
    }

    fn apply_step(&mut self, step: Result<Step, RelayError>) {
        match step {
            Ok(Step::Send(out)) => self.deliver(out),
            Ok(Step::Done(o)) => self.result = Some(Ok(o)),
            Err(e) => self.result = Some(Err(e.to_string())),
        }
    }
}

/// One run.
pub struct RunHandle {
    task: [u8; 16],
    spec: TaskSpec,
    params: ProtocolParams,
    /// The task's DP protocol, calibrated at creation (its randomizer and its release).
    plan: Option<blanket_protocol::release::HistogramRelease>,
    /// The budget its release is charged to (with a protocol).
    ledger: Option<Ledger>,
    state: Arc<Mutex<RunState>>,
    inbound: Notify,
    outbound: watch::Sender<u64>,
}

impl RunHandle {
    fn new(
        task: [u8; 16],
        spec: TaskSpec,
        params: ProtocolParams,
        plan: Option<blanket_protocol::release::HistogramRelease>,
        ledger: Option<Ledger>,
    ) -> Self {
        let n = params.clients as usize;
        RunHandle {
            task,
            spec,
            params,
            plan,
            ledger,
            state: Arc::new(Mutex::new(RunState {
                keys: vec![None; n],
                registered: 0,
                relay: None,
                outbox: vec![Vec::new(); n],
                last_seq: vec![0; n],
                log_len: 0,
                result: None,
                broken: None,
                driving: false,
                settled: None,
            })),
            inbound: Notify::new(),
            outbound: watch::channel(0).0,
        }
    }

    fn bump(&self) {
        self.outbound.send_modify(|v| *v += 1);
    }

    /// Builds the relay from the registered keys (registration complete).
    fn make_relay(&self, st: &RunState) -> Result<Relay, Rejection> {
        let keys: Vec<PublicKey> = st.keys.iter().flatten().copied().collect();
        let seed = public_seed(&self.spec, &self.task, &keys);
        Relay::new(
            self.params,
            self.task,
            seed,
            keys,
            self.spec.round_timeout_ms,
        )
        .map_err(|e| Rejection::Infeasible(e.to_string()))
    }

    /// Applies one logged input (replay).
    fn replay(&self, st: &mut RunState, e: LogEntry) -> Result<(), Rejection> {
        match e {
            LogEntry::Start { at_ms } => {
                let mut relay = self.make_relay(st)?;
                let out = relay.start(at_ms);
                st.relay = Some(relay);
                st.deliver(out);
            }
            LogEntry::Receive {
                client,
                client_seq,
                body,
                ..
            } => {
                let relay = st
                    .relay
                    .as_mut()
                    .ok_or_else(|| Rejection::Storage("relay log: receive before start".into()))?;
                let _ = relay.receive(client, &body);
                if let Some(s) = st.last_seq.get_mut(client as usize) {
                    *s = (*s).max(client_seq);
                }
            }
            LogEntry::Advance { at_ms } => {
                let relay = st
                    .relay
                    .as_mut()
                    .ok_or_else(|| Rejection::Storage("relay log: advance before start".into()))?;
                let step = relay.advance(at_ms);
                st.apply_step(step);
            }
        }
        st.log_len += 1;
        Ok(())
    }

    /// The status JSON.
    pub async fn status(&self) -> TaskStatus {
        let st = self.state.lock().await;
        let p = &self.params;
        let derived = Derived {
            committee: p.committee,
            threshold: p.threshold,
            chain: p.chain,
            backups: p.backups,
            lanes: p.lanes,
        };
        let (phase, round, deadline_ms, cheaters, silent) = match &st.relay {
            None => ("registering".to_string(), 0, 0, Vec::new(), Vec::new()),
            Some(r) => (
                format!("{:?}", r.phase()),
                r.round(),
                r.deadline(),
                r.cheaters().iter().map(CheaterJson::from).collect(),
                r.silent()
                    .iter()
                    .map(|(c, ph)| SilentJson {
                        client: *c,
                        phase: format!("{ph:?}"),
                    })
                    .collect(),
            ),
        };
        let released = matches!(st.settled, Some(Settled::Released(_)));
        let withheld = self.plan.is_some() && !released;
        let (delivered, error, output) = match &st.result {
            Some(Ok(o)) => (
                true,
                None,
                Some(OutputJson {
                    messages: if withheld {
                        Vec::new()
                    } else {
                        o.messages.clone()
                    },
                    messages_withheld: withheld,
                    undecodable: o.undecodable,
                    accepted_clients: o.accepted_clients.clone(),
                    shufflers: o.shufflers.clone(),
                    decryptors: o.decryptors.clone(),
                }),
            ),
            Some(Err(e)) => (false, Some(e.clone()), None),
            None => (false, st.broken.clone(), None),
        };
        TaskStatus {
            task: hex_encode(&self.task),
            spec: self.spec.clone(),
            derived,
            registered: st.registered,
            phase,
            round,
            deadline_ms,
            finished: st.finished(),
            delivered,
            error,
            cheaters,
            silent,
            output,
            log_entries: st.log_len,
            randomizer: self.plan.as_ref().map(release::randomizer_json),
            release: match &st.settled {
                Some(Settled::Released(r)) => Some(r.clone()),
                _ => None,
            },
            budget: None,
            release_refused: match &st.settled {
                Some(Settled::Refused(p)) => Some(p.clone()),
                _ => None,
            },
        }
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
            let spec: TaskSpec = serde_json::from_str(&t.spec)
                .map_err(|e| Rejection::Storage(format!("stored relay task spec: {e}")))?;
            stored.push((t.task, spec));
        }
        let specs: HashMap<[u8; 16], TaskSpec> = stored.iter().cloned().collect();
        for (task, spec) in stored {
            let params = spec.params()?;
            let plan = spec.release_plan(&params)?;
            let ledger = ledger_of(task, &spec, |id| specs.get(id).cloned())?;
            let h = Arc::new(RunHandle::new(task, spec, params, plan, ledger));
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

    /// Creates a run.
    pub async fn create(&self, spec: TaskSpec) -> Result<TaskStatus, Rejection> {
        let mut spec = spec;
        let params = spec.params()?;
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
        let json = serde_json::to_string(&spec).map_err(|e| Rejection::Storage(e.to_string()))?;
        self.store
            .put_relay_task(task, &json, crate::http::now_unix())
            .await?;
        let h = Arc::new(RunHandle::new(task, spec, params, plan, ledger));
        self.runs
            .write()
            .map_err(|_| Rejection::Storage("lock poisoned".into()))?
            .insert(task, Arc::clone(&h));
        self.status_of(&h).await
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
            let spent = self.store.ledger_spent(l.task).await?;
            let (spent_eps, spent_delta) = crate::release::composed(&spent);
            status.budget = Some(LedgerJson {
                task: hex_encode(&l.task),
                releases: spent.len() as u64,
                spent_eps,
                spent_delta,
                total_eps: l.total_eps,
                total_delta: l.total_delta,
                remaining_eps: sub_down(l.total_eps, spent_eps),
                remaining_delta: sub_down(l.total_delta, spent_delta),
            });
        }
        Ok(status)
    }

    /// Settles a delivered run's release on its ledger, once: read back if it was settled
    /// (before a restart), else charged (`Store::charge_ledger`, the analyzer's path) or
    /// refused (`budget-exhausted`, recorded). A storage error leaves it unsettled, retried
    /// by the next status request.
    async fn settle(&self, h: &RunHandle, st: &mut RunState) {
        if st.settled.is_some() {
            return;
        }
        let (Some(plan), Some(ledger), Some(Ok(out))) = (&h.plan, h.ledger, &st.result) else {
            return;
        };
        match self.store.relay_settlement(h.task).await {
            Ok(Some(s)) => {
                st.settled = settled_of(s);
                return;
            }
            Ok(None) => {}
            Err(_) => return,
        }
        let rel = release::release_json(plan, &h.spec, &h.params, out);
        let (eps, delta) = charge_of(plan, &h.spec);
        let mut done = None;
        let r = self
            .store
            .charge_ledger(
                ledger.task,
                crate::store::Spender::RelayRun(h.task),
                rel.reports,
                eps,
                delta,
                crate::http::now_unix(),
                |spent, rid| {
                    let mut r = rel.clone();
                    r.release_id = Some(rid);
                    r.budget = Some(crate::release::charge_within(
                        ledger.total_eps,
                        ledger.total_delta,
                        spent,
                        eps,
                        delta,
                    )?);
                    let body =
                        serde_json::to_string(&r).map_err(|e| Rejection::Storage(e.to_string()))?;
                    done = Some(r);
                    Ok(body)
                },
            )
            .await;
        match r {
            Ok(_) => st.settled = done.map(Settled::Released),
            Err(e @ Rejection::BudgetExhausted(_)) => {
                let p = e.problem();
                let Ok(json) = serde_json::to_string(&p) else {
                    return;
                };
                if self
                    .store
                    .refuse_relay_release(h.task, ledger.task, &json)
                    .await
                    .is_ok()
                {
                    // Another settlement may have won the race: read back what is stored.
                    if let Ok(Some(s)) = self.store.relay_settlement(h.task).await {
                        st.settled = settled_of(s);
                    }
                }
            }
            Err(Rejection::Duplicate(_)) => {
                if let Ok(Some(s)) = self.store.relay_settlement(h.task).await {
                    st.settled = settled_of(s);
                }
            }
            Err(_) => {}
        }
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
            let mut relay = h.make_relay(&st)?;
            let out = relay.start(now);
            self.store
                .append_relay_log(h.task, st.log_len, &[LogEntry::Start { at_ms: now }])
                .await?;
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
            st.broken = Some(e.to_string());
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
            st.broken = Some(e.to_string());
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

#[cfg(test)]
mod tests {
    use super::sub_down;

    #[test]
    fn budget_left_rounds_down() {
        assert_eq!(sub_down(3.0, 1.0), 2.0);
        assert_eq!(sub_down(1.0, 2.0), 0.0);
        // 1 - 2^-60 rounds to 1 in f64: moved down.
        assert_eq!(sub_down(1.0, 2f64.powi(-60)), 1.0f64.next_down());
        // 0.3 - 0.1 = 0.19999999999999998 (below the exact 0.2 of these doubles? kept only if
        // not above the exact difference).
        let r = sub_down(0.3, 0.1);
        assert!(r <= 0.3 - 0.1 && r >= (0.3f64 - 0.1).next_down());
    }
}
