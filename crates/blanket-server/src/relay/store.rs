//! The relay's tables (`migrations/*/0002_relay.sql`): tasks, registered keys, and the log of
//! every input the sans-IO relay consumed. The relay is rebuilt by replaying the log
//! ([`super::RelayService::open`]); an input is acknowledged only after the transaction holding
//! its log rows committed.

use crate::problem::Rejection;
use crate::store::{begin, on_pool, sql, Backend, Store};
use sqlx::Row;

/// One logged input of the relay state machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogEntry {
    /// `Relay::start(at_ms)`, with the nonce of the public seed the relay drew when
    /// registration closed (in the row's body: 32 bytes, or empty for a simulation and for a
    /// run logged before the nonce existed; [`super::public_seed`]).
    Start {
        /// The time passed.
        at_ms: u64,
        /// The seed's nonce.
        nonce: Option<[u8; 32]>,
    },
    /// `Relay::receive(client, body)`: part `part` of the client's signed request `client_seq`.
    Receive {
        /// The authenticated sender.
        client: u32,
        /// The request number the client signed.
        client_seq: u64,
        /// The envelope's position in the request.
        part: u32,
        /// The envelope bytes.
        body: Vec<u8>,
    },
    /// `Relay::advance(at_ms)`.
    Advance {
        /// The time passed.
        at_ms: u64,
    },
}

fn i64_of(x: u64) -> i64 {
    x.min(i64::MAX as u64) as i64
}

impl LogEntry {
    /// The row's columns; `seq` is the log position (a start or advance row takes client -1
    /// and its own position as `client_seq`, so the uniqueness key binds receive rows only).
    fn columns(&self, seq: i64) -> (i64, i64, i64, i64, i64, &[u8]) {
        match self {
            LogEntry::Start { at_ms, nonce } => (
                0,
                -1,
                seq,
                0,
                i64_of(*at_ms),
                nonce.as_ref().map_or(&[][..], |n| &n[..]),
            ),
            LogEntry::Receive {
                client,
                client_seq,
                part,
                body,
            } => (
                1,
                i64::from(*client),
                i64_of(*client_seq),
                i64::from(*part),
                0,
                body,
            ),
            LogEntry::Advance { at_ms } => (2, -1, seq, 0, i64_of(*at_ms), &[]),
        }
    }

    fn from_row(
        kind: i64,
        client: i64,
        client_seq: i64,
        part: i64,
        at: i64,
        body: Vec<u8>,
    ) -> Result<Self, Rejection> {
        let bad = || Rejection::Storage(format!("relay log row of unknown kind {kind}"));
        let u = |x: i64| u64::try_from(x).map_err(|_| bad());
        Ok(match kind {
            0 => LogEntry::Start {
                at_ms: u(at)?,
                nonce: match body.len() {
                    0 => None,
                    _ => Some(body.try_into().map_err(|_| {
                        Rejection::Storage("relay log start row: nonce of the wrong length".into())
                    })?),
                },
            },
            1 => LogEntry::Receive {
                client: u32::try_from(client).map_err(|_| bad())?,
                client_seq: u(client_seq)?,
                part: u32::try_from(part).map_err(|_| bad())?,
                body,
            },
            2 => LogEntry::Advance { at_ms: u(at)? },
            _ => return Err(bad()),
        })
    }
}

/// A stored relay task.
#[derive(Debug, Clone)]
pub struct StoredTask {
    /// The task (run) id.
    pub task: [u8; 16],
    /// Its specification (JSON, [`super::api::TaskSpec`]).
    pub spec: String,
}

impl Store {
    /// Stores a new relay task with the hashes of its enrollment tokens (`admission[i]` for
    /// index i; empty for an open task), in one transaction; `Duplicate` if the id exists.
    pub async fn put_relay_task(
        &self,
        task: [u8; 16],
        spec: &str,
        now: u64,
        admission: &[[u8; 32]],
    ) -> Result<(), Rejection> {
        on_pool!(self, p, pg => {
            let mut tx = p.begin_with(begin(pg)).await?;
            let n = sqlx::query(&sql(pg,
                "INSERT INTO relay_tasks (task_id, spec, created_unix) VALUES ($1, $2, $3)
                 ON CONFLICT (task_id) DO NOTHING"))
            .bind(&task[..])
            .bind(spec)
            .bind(i64_of(now))
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if n == 0 {
                return Err(Rejection::Duplicate("task id"));
            }
            for (i, h) in admission.iter().enumerate() {
                sqlx::query(&sql(pg,
                    "INSERT INTO relay_admission (task_id, idx, token_hash) VALUES ($1, $2, $3)"))
                .bind(&task[..])
                .bind(i as i64)
                .bind(&h[..])
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await?;
        });
        Ok(())
    }

    /// The `(index, bytes)` rows of `query` (one `$1` parameter: the task id), in its order:
    /// the shape of the per-index tables (`relay_clients`, `relay_admission`).
    async fn indexed_blobs(
        &self,
        query: &str,
        task: [u8; 16],
    ) -> Result<Vec<(i64, Vec<u8>)>, Rejection> {
        Ok(on_pool!(self, p, pg => {
            sqlx::query(&sql(pg, query))
                .bind(&task[..])
                .fetch_all(p)
                .await?
                .into_iter()
                .map(|r| (r.get::<i64, _>(0), r.get::<Vec<u8>, _>(1)))
                .collect()
        }))
    }

    /// The hashes of a task's enrollment tokens, by index (empty for an open task).
    pub async fn relay_admission(&self, task: [u8; 16]) -> Result<Vec<[u8; 32]>, Rejection> {
        let rows = self
            .indexed_blobs(
                "SELECT idx, token_hash FROM relay_admission WHERE task_id = $1 ORDER BY idx",
                task,
            )
            .await?;
        rows.into_iter()
            .enumerate()
            .map(|(k, (i, h))| {
                if i != k as i64 {
                    return Err(Rejection::Storage(
                        "relay admission rows out of order".into(),
                    ));
                }
                h.try_into()
                    .map_err(|_| Rejection::Storage("stored token hash of the wrong length".into()))
            })
            .collect()
    }

    /// Every relay task.
    pub async fn relay_tasks(&self) -> Result<Vec<StoredTask>, Rejection> {
        let rows: Vec<(Vec<u8>, String)> = on_pool!(self, p, pg => {
            sqlx::query(&sql(pg, "SELECT task_id, spec FROM relay_tasks ORDER BY created_unix"))
                .fetch_all(p)
                .await?
                .into_iter()
                .map(|r| (r.get::<Vec<u8>, _>(0), r.get::<String, _>(1)))
                .collect()
        });
        rows.into_iter()
            .map(|(t, spec)| {
                let task = t.try_into().map_err(|_| {
                    Rejection::Storage("stored relay task id of the wrong length".into())
                })?;
                Ok(StoredTask { task, spec })
            })
            .collect()
    }

    /// Registers `key` as client `idx`: `Duplicate` if the index or the key is taken.
    pub async fn put_relay_client(
        &self,
        task: [u8; 16],
        idx: u32,
        key: &[u8; 32],
    ) -> Result<(), Rejection> {
        let r = on_pool!(self, p, pg => {
            sqlx::query(&sql(pg,
                "INSERT INTO relay_clients (task_id, idx, public_key) VALUES ($1, $2, $3)"))
            .bind(&task[..])
            .bind(i64::from(idx))
            .bind(&key[..])
            .execute(p)
            .await
            .map(|_| ())
        });
        match r {
            Ok(_) => Ok(()),
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                Err(Rejection::Duplicate("client index or public key"))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The registered keys of a task, by index.
    pub async fn relay_clients(&self, task: [u8; 16]) -> Result<Vec<(u32, Vec<u8>)>, Rejection> {
        let rows = self
            .indexed_blobs(
                "SELECT idx, public_key FROM relay_clients WHERE task_id = $1 ORDER BY idx",
                task,
            )
            .await?;
        rows.into_iter()
            .map(|(i, k)| {
                u32::try_from(i)
                    .map(|i| (i, k))
                    .map_err(|_| Rejection::Storage("stored client index out of range".into()))
            })
            .collect()
    }

    /// Appends `entries` to the task's log from position `next` on, in one transaction
    /// (the caller acknowledges only after this returned). A receive whose
    /// `(client, client_seq, part)` is already logged is a `Duplicate`: nothing is written.
    pub async fn append_relay_log(
        &self,
        task: [u8; 16],
        next: u64,
        entries: &[LogEntry],
    ) -> Result<(), Rejection> {
        on_pool!(self, p, pg => {
            let mut tx = p.begin_with(begin(pg)).await?;
            for (k, e) in entries.iter().enumerate() {
                let (kind, client, cseq, part, at, body) = e.columns(i64_of(next + k as u64));
                let r = sqlx::query(&sql(pg,
                    "INSERT INTO relay_log (task_id, seq, kind, client, client_seq, part, at_ms, body)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"))
                .bind(&task[..])
                .bind(i64_of(next + k as u64))
                .bind(kind)
                .bind(client)
                .bind(cseq)
                .bind(part)
                .bind(at)
                .bind(body)
                .execute(&mut *tx)
                .await;
                match r {
                    Ok(_) => {}
                    Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                        return Err(Rejection::Duplicate("relay log entry"));
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            tx.commit().await?;
        });
        Ok(())
    }

    /// The task's log, in order.
    pub async fn relay_log(&self, task: [u8; 16]) -> Result<Vec<LogEntry>, Rejection> {
        type Raw = (i64, i64, i64, i64, i64, Vec<u8>);
        let rows: Vec<Raw> = on_pool!(self, p, pg => {
            sqlx::query(&sql(pg,
                "SELECT kind, client, client_seq, part, at_ms, body FROM relay_log
                 WHERE task_id = $1 ORDER BY seq"))
                .bind(&task[..])
                .fetch_all(p)
                .await?
                .into_iter()
                .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5)))
                .collect()
        });
        rows.into_iter()
            .map(|(k, c, s, part, at, b)| LogEntry::from_row(k, c, s, part, at, b))
            .collect()
    }
}

/// How a relay run's release was settled on the ledger (`relay_releases`).
#[derive(Debug, Clone, PartialEq)]
pub enum Settlement {
    /// Charged: the release's body as recorded on the ledger (JSON, [`super::api::ReleaseJson`]).
    Released(String),
    /// Refused: the refusal (JSON, [`crate::Problem`]).
    Refused(String),
}

impl Store {
    /// How run `run`'s release was settled, if it was.
    pub async fn relay_settlement(&self, run: [u8; 16]) -> Result<Option<Settlement>, Rejection> {
        let row: Option<(Option<String>, Option<String>)> = on_pool!(self, p, pg => {
            sqlx::query(&sql(pg,
                "SELECT r.refusal, l.body FROM relay_releases r
                 LEFT JOIN analyzer_releases l ON l.release_id = r.release_id
                 WHERE r.run_id = $1"))
                .bind(&run[..])
                .fetch_optional(p)
                .await?
                .map(|r| (r.get::<Option<String>, _>(0), r.get::<Option<String>, _>(1)))
        });
        match row {
            None => Ok(None),
            Some((_, Some(body))) => Ok(Some(Settlement::Released(body))),
            Some((Some(refusal), None)) => Ok(Some(Settlement::Refused(refusal))),
            Some((None, None)) => Err(Rejection::Storage(
                "relay release settled without a ledger row or a refusal".into(),
            )),
        }
    }

    /// Records that run `run`'s release was refused (`refusal`: the problem, JSON); nothing if
    /// the run was already settled.
    pub async fn refuse_relay_release(
        &self,
        run: [u8; 16],
        ledger: [u8; 16],
        refusal: &str,
    ) -> Result<(), Rejection> {
        on_pool!(self, p, pg => {
            sqlx::query(&sql(pg,
                "INSERT INTO relay_releases (run_id, ledger_task, release_id, refusal)
                 VALUES ($1, $2, NULL, $3) ON CONFLICT (run_id) DO NOTHING"))
                .bind(&run[..])
                .bind(&ledger[..])
                .bind(refusal)
                .execute(p)
                .await?;
        });
        Ok(())
    }

    /// The guarantees spent on task `ledger`'s ledger, oldest first (analyzer and relay
    /// releases alike).
    pub async fn ledger_spent(&self, ledger: [u8; 16]) -> Result<Vec<(f64, f64)>, Rejection> {
        let id = crate::wire::TaskId(ledger);
        Ok(self
            .releases(id)
            .await?
            .iter()
            .map(|r| (r.epsilon, r.delta))
            .collect())
    }
}
