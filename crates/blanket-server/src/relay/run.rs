//! One run of the relay: its in-memory state (registered keys, the sans-IO relay, the
//! clients' outboxes, the result and its settlement), rebuilt by replaying the run's log, and
//! its status JSON.

use super::api::{CheaterJson, Derived, OutputJson, SilentJson, TaskSpec, TaskStatus};
use super::ledger::{Ledger, Settled};
use super::release;
use super::roles::{public_seed, SEED_NONCE_BYTES};
use super::store::LogEntry;
use crate::problem::Rejection;
use crate::wire::hex_encode;
use blanket_crypto::PublicKey;
use blanket_protocol::relay::{Outgoing, RunOutput, Step};
use blanket_protocol::{ProtocolParams, Relay, RelayError};
use std::sync::Arc;
use tokio::sync::{watch, Mutex, Notify};

/// A run's in-memory state (rebuilt from the log at start).
pub(super) struct RunState {
    pub(super) keys: Vec<Option<PublicKey>>,
    pub(super) registered: u32,
    pub(super) relay: Option<Relay>,
    /// Per client, the relay's messages to it in order (message k is `outbox[i][k-1]`).
    pub(super) outbox: Vec<Vec<Vec<u8>>>,
    /// Per client, the last request number accepted.
    pub(super) last_seq: Vec<u64>,
    pub(super) log_len: u64,
    pub(super) result: Option<Result<RunOutput, String>>,
    /// A log write failed after the state changed in memory: the in-memory state is ahead
    /// of the database, so this run answers 503 until the process restarts (and replays).
    pub(super) broken: Option<String>,
    /// A driver task runs this run.
    pub(super) driving: bool,
    /// The relay's nonce of the public seed (drawn when registration closed; `None` for a
    /// simulation or a run logged before the nonce existed) and the seed, once started.
    pub(super) seed: Option<(Option<[u8; SEED_NONCE_BYTES]>, [u8; 32])>,
    /// How the release was settled on the ledger (with a protocol, once delivered).
    pub(super) settled: Option<Settled>,
}

impl RunState {
    pub(super) fn finished(&self) -> bool {
        self.result.is_some()
    }

    pub(super) fn deliver(&mut self, out: Vec<Outgoing>) {
        for o in out {
            if let Some(b) = self.outbox.get_mut(o.to as usize) {
                b.push(o.bytes);
            }
        }
    }

    pub(super) fn apply_step(&mut self, step: Result<Step, RelayError>) {
        match step {
            Ok(Step::Send(out)) => self.deliver(out),
            Ok(Step::Done(o)) => self.result = Some(Ok(o)),
            Err(e) => self.result = Some(Err(e.to_string())),
        }
    }
}

/// One run.
pub struct RunHandle {
    pub(super) task: [u8; 16],
    pub(super) spec: TaskSpec,
    pub(super) params: ProtocolParams,
    /// The task's DP protocol, calibrated at creation (its randomizer and its release).
    pub(super) plan: Option<blanket_protocol::release::HistogramRelease>,
    /// The budget its release is charged to (with a protocol).
    pub(super) ledger: Option<Ledger>,
    /// With admission tokens, the hash of each index's enrollment token
    /// ([`super::auth::token_hash`]); `None` for an open task.
    pub(super) admission: Option<Vec<[u8; 32]>>,
    pub(super) state: Arc<Mutex<RunState>>,
    /// Woken when an input arrives (the driver closes a round early).
    pub(super) inbound: Notify,
    /// Bumped when a message is queued for a client (long polls wake up).
    pub(super) outbound: watch::Sender<u64>,
}

impl RunHandle {
    pub(super) fn new(
        task: [u8; 16],
        spec: TaskSpec,
        params: ProtocolParams,
        plan: Option<blanket_protocol::release::HistogramRelease>,
        ledger: Option<Ledger>,
        admission: Option<Vec<[u8; 32]>>,
    ) -> Self {
        let n = params.clients as usize;
        RunHandle {
            task,
            spec,
            params,
            plan,
            ledger,
            admission,
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
                seed: None,
            })),
            inbound: Notify::new(),
            outbound: watch::channel(0).0,
        }
    }

    pub(super) fn bump(&self) {
        self.outbound.send_modify(|v| *v += 1);
    }

    /// Builds the relay from the registered keys (registration complete) and the seed's
    /// nonce, and records the seed in the state.
    pub(super) fn make_relay(
        &self,
        st: &mut RunState,
        nonce: Option<[u8; SEED_NONCE_BYTES]>,
    ) -> Result<Relay, Rejection> {
        let keys: Vec<PublicKey> = st.keys.iter().flatten().copied().collect();
        let seed = public_seed(&self.spec, &self.task, &keys, nonce.as_ref());
        let relay = Relay::new(
            self.params,
            self.task,
            seed,
            keys,
            self.spec.round_timeout_ms,
        )
        .map_err(|e| Rejection::Infeasible(e.to_string()))?;
        st.seed = Some((nonce, seed));
        Ok(relay)
    }

    /// Applies one logged input (replay).
    pub(super) fn replay(&self, st: &mut RunState, e: LogEntry) -> Result<(), Rejection> {
        match e {
            LogEntry::Start { at_ms, nonce } => {
                let mut relay = self.make_relay(st, nonce)?;
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

    /// The roles document (`GET /relay/tasks/{task}/roles`); 409 `not-started` before the
    /// run started.
    pub async fn roles(&self) -> Result<super::api::RolesJson, Rejection> {
        let st = self.state.lock().await;
        let Some((nonce, seed)) = st.seed else {
            return Err(Rejection::RelayRefused {
                reason: "not-started",
                detail: format!(
                    "the run has not started: {} of {} clients registered (the public seed is \
                     drawn when registration closes)",
                    st.registered, self.params.clients
                ),
            });
        };
        let keys: Vec<PublicKey> = st.keys.iter().flatten().copied().collect();
        Ok(super::roles::roles_json(
            &self.task,
            &self.params,
            &keys,
            nonce.as_ref(),
            &seed,
        ))
    }

    /// Who may register.
    pub fn admission(&self) -> super::api::Admission {
        match self.admission {
            Some(_) => super::api::Admission::Tokens,
            None => super::api::Admission::Open,
        }
    }

    /// Checks a registration's enrollment token (`token`, hex) for `index` against the task's
    /// admission: `Ok(Some(token))` with admission tokens, `Ok(None)` on an open task (where a
    /// token is refused: there is none to check).
    pub fn admit(
        &self,
        index: Option<u32>,
        token: Option<&str>,
    ) -> Result<Option<[u8; super::auth::TOKEN_BYTES]>, Rejection> {
        let Some(hashes) = &self.admission else {
            if token.is_some() {
                return Err(Rejection::OutOfRange {
                    field: "token".into(),
                    allowed: "absent (this task's admission is open)".into(),
                    value: "a token".into(),
                });
            }
            return Ok(None);
        };
        let Some(token) = token else {
            return Err(Rejection::AdmissionRefused {
                reason: "admission-token-missing",
                detail: "this task admits only the holders of the enrollment tokens its \
                         operator issued: send the credential's index and token"
                    .into(),
            });
        };
        let wrong = || Rejection::AdmissionRefused {
            reason: "admission-token-wrong",
            detail: "the token is not the enrollment token of this index of this task".into(),
        };
        let Some(index) = index else {
            return Err(Rejection::OutOfRange {
                field: "index".into(),
                allowed: format!(
                    "the credential's index, 0..{} (required with admission tokens)",
                    self.params.clients
                ),
                value: "absent".into(),
            });
        };
        let token: [u8; super::auth::TOKEN_BYTES] = crate::wire::hex_decode(token)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(wrong)?;
        let expected = hashes.get(index as usize).ok_or_else(wrong)?;
        if !super::auth::hashes_equal(
            &super::auth::token_hash(&self.task, index, &token),
            expected,
        ) {
            return Err(wrong());
        }
        Ok(Some(token))
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
            key_committees: blanket_protocol::KeyCommittees::of(p).name().into(),
            lane_committees: p.lane_committees.map(|(r, c)| [r, c]),
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
