//! Durable storage over sqlx (SQLite, embedded: nothing to install). Every query is a
//! runtime-checked `sqlx::query`; the schema is `migrations/sqlite`, applied at start.
//!
//! Durability: WAL journal with `synchronous = FULL`, so a committed transaction survives a
//! process kill and a power loss; the shuffler acknowledges a report only after the
//! transaction holding it committed ([`Store::commit_reports`], one transaction per group).
//! Uniqueness (report ids, batch ids, encapsulated keys) is decided by primary keys inside the
//! writing transaction, never by a read before a write.

use crate::problem::Rejection;
use crate::shuffler::ShufflerTask;
use crate::wire::{ReportId, Sealed, TaskId, CIPHERTEXT_LEN, ENC_LEN, ID_LEN};
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Row, SqlitePool};
use std::str::FromStr;
use std::time::Duration;

mod intake;
pub use intake::Incoming;

static SQLITE: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

/// The database of one role (or of both, with `--role all`): SQLite (one process) or
/// PostgreSQL (replicas of a role sharing it).
#[derive(Clone, Debug)]
pub struct Store {
    pub(crate) backend: Backend,
    /// SQLite file only: one connection of its own for the shuffler's group commits
    /// ([`Store::commit_reports`]). A pooled connection goes to whichever caller asks next,
    /// and a SQLite connection drops its page cache whenever another connection wrote, so
    /// the intake would read its index pages back from the file at almost every group.
    pub(crate) intake: Option<SqlitePool>,
}

#[derive(Clone, Debug)]
pub(crate) enum Backend {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// A batch the analyzer holds and has not released.
#[derive(Debug, Clone)]
pub struct StoredBatch {
    /// The batch id.
    pub batch_id: Vec<u8>,
    /// Reports aggregated.
    pub reports: u64,
    /// The aggregated state (JSON, [`crate::aggregate::State`]).
    pub state: String,
}

/// One release as stored.
#[derive(Debug, Clone)]
pub struct StoredRelease {
    /// Release number (increasing).
    pub release_id: i64,
    /// Certified epsilon it spent.
    pub epsilon: f64,
    /// Delta it spent.
    pub delta: f64,
    /// The published release (JSON).
    pub body: String,
}

/// What a release on the ledger consumes ([`Store::charge_ledger`]).
#[derive(Debug, Clone, Copy)]
pub enum Spender<'a> {
    /// The analyzer's batches (all still unreleased), marked with the release id.
    Batches(&'a [Vec<u8>]),
    /// A relay run (its id), settled once.
    RelayRun([u8; ID_LEN]),
}

/// Counts the analyzer shows for a task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskCounts {
    /// Batches received.
    pub batches: u64,
    /// Reports aggregated.
    pub reports: u64,
    /// Reports that did not open or were out of the message domain.
    pub rejected: u64,
    /// Reports already seen in an earlier batch.
    pub duplicates: u64,
    /// Reports aggregated but not yet released.
    pub unreleased: u64,
}

fn id16(v: &[u8]) -> Result<[u8; ID_LEN], Rejection> {
    v.try_into()
        .map_err(|_| Rejection::Storage("stored id of the wrong length".into()))
}

/// Runs `$body` with `$p` bound to the pool of either backend (the same code, typed for each
/// database), and `$pg` telling which.
macro_rules! on_pool {
    ($self:ident, $p:ident, $pg:ident => $body:expr) => {
        match &$self.backend {
            Backend::Sqlite($p) => {
                #[allow(unused_variables)]
                let $pg = false;
                $body
            }
            Backend::Postgres($p) => {
                #[allow(unused_variables)]
                let $pg = true;
                $body
            }
        }
    };
}
pub(crate) use on_pool;

/// The SQL for the backend: queries are written with PostgreSQL's `$N` parameters, which
/// SQLite spells `?N`.
pub(crate) fn sql(pg: bool, q: &str) -> String {
    if pg {
        q.to_string()
    } else {
        q.replace('$', "?")
    }
}

/// The statement opening a write transaction: SQLite takes its write lock at once
/// (`BEGIN IMMEDIATE`), so a transaction that reads first never fails to upgrade.
pub(crate) fn begin(pg: bool) -> &'static str {
    if pg {
        "BEGIN"
    } else {
        "BEGIN IMMEDIATE"
    }
}

/// Row locking for work leased by one replica; SQLite has one writer and needs none.
fn skip_locked(pg: bool) -> &'static str {
    if pg {
        " FOR UPDATE SKIP LOCKED"
    } else {
        ""
    }
}

/// A `shuffler_tasks` row's (min_batch, deadline_unix, reports_per_upload) from column `at`.
fn shuffler_task_of<R: Row>(r: &R, at: usize) -> ShufflerTask
where
    usize: sqlx::ColumnIndex<R>,
    i64: for<'a> sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
{
    ShufflerTask {
        min_batch: r.get::<i64, _>(at) as u64,
        deadline_unix: r.get::<i64, _>(at + 1) as u64,
        reports_per_upload: (r.get::<i64, _>(at + 2) as u64).max(1),
    }
}

/// Mode of the database files: the analyzer's holds every task's HPKE private key, the
/// relay's its event log (as the admin token file, readable by the owner only).
pub const DB_FILE_MODE: u32 = 0o600;

/// Makes the SQLite database `path` and its `-wal` and `-shm` files private to the owner
/// ([`DB_FILE_MODE`]): creates the database file with that mode if it does not exist (before
/// SQLite creates it with the umask's mode; SQLite then creates `-wal` and `-shm` with the
/// database file's mode), and takes the group and other bits off an existing file (a database
/// created by an older version). With `companions`, the same for `-wal` and `-shm` when
/// they exist.
fn private_files(path: &std::path::Path, companions: bool) -> Result<(), Rejection> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let io = |what: &std::path::Path, e: std::io::Error| {
            Rejection::Storage(format!("database file {}: {e}", what.display()))
        };
        let mut paths = vec![path.to_path_buf()];
        if companions {
            for suffix in ["-wal", "-shm"] {
                let mut p = path.as_os_str().to_owned();
                p.push(suffix);
                paths.push(p.into());
            }
        } else {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(DB_FILE_MODE)
                .open(path)
            {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io(path, e)),
            }
        }
        for p in paths {
            let meta = match std::fs::metadata(&p) {
                Ok(m) => m,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io(&p, e)),
            };
            if meta.permissions().mode() & 0o077 != 0 {
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(DB_FILE_MODE))
                    .map_err(|e| io(&p, e))?;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = (path, companions);
    Ok(())
}

impl Store {
    /// Opens the database at `url` and applies the migrations: `sqlite://PATH` (created if
    /// missing) or `sqlite::memory:`, or `postgres://...`.
    pub async fn open(url: &str) -> Result<Self, Rejection> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let pool = PgPoolOptions::new()
                .max_connections(8)
                .acquire_timeout(Duration::from_secs(30))
                .connect(url)
                .await?;
            POSTGRES
                .run(&pool)
                .await
                .map_err(|e| Rejection::Storage(format!("migrations: {e}")))?;
            return Ok(Self {
                backend: Backend::Postgres(pool),
                intake: None,
            });
        }
        if !url.starts_with("sqlite:") {
            return Err(Rejection::OutOfRange {
                field: "db".into(),
                allowed: "a sqlite: URL (sqlite://PATH) or a postgres:// URL".into(),
                value: url.to_string(),
            });
        }
        let memory = url.contains(":memory:");
        let parsed = SqliteConnectOptions::from_str(url)?;
        if !memory {
            private_files(parsed.get_filename(), false)?;
        }
        let opts = parsed
            .create_if_missing(true)
            .journal_mode(if memory {
                SqliteJournalMode::Memory
            } else {
                SqliteJournalMode::Wal
            })
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(Duration::from_secs(30))
            // Statement journals (kept by a multi-row INSERT while it runs) in memory rather
            // than in temporary files; the rollback of a failed statement is unchanged and
            // commits are as durable as before (WAL, synchronous FULL).
            .pragma("temp_store", "memory");
        let pool = SqlitePoolOptions::new()
            // One connection for an in-memory database: each connection would see its own.
            .max_connections(if memory { 1 } else { 4 })
            .connect_with(opts.clone())
            .await?;
        SQLITE
            .run(&pool)
            .await
            .map_err(|e| Rejection::Storage(format!("migrations: {e}")))?;
        let intake = if memory {
            None
        } else {
            let path = opts.get_filename().to_path_buf();
            let intake = SqlitePoolOptions::new()
                .max_connections(1)
                // 32 MiB of page cache (negative: KiB) for the replay index it writes.
                .connect_with(opts.pragma("cache_size", "-32768"))
                .await?;
            // SQLite gives the -wal and -shm files the database file's mode; checked anyway.
            private_files(&path, true)?;
            Some(intake)
        };
        Ok(Self {
            backend: Backend::Sqlite(pool),
            intake,
        })
    }

    /// Whether this is PostgreSQL.
    pub fn is_postgres(&self) -> bool {
        matches!(self.backend, Backend::Postgres(_))
    }

    // ----- shuffler -----

    /// Registers a task with the shuffler (idempotent: the first registration stays).
    pub async fn put_shuffler_task(&self, id: TaskId, task: ShufflerTask) -> Result<(), Rejection> {
        on_pool!(self, p, pg => {
            sqlx::query(&sql(pg,
                "INSERT INTO shuffler_tasks (task_id, min_batch, deadline_unix, reports_per_upload)
                 VALUES ($1, $2, $3, $4) ON CONFLICT (task_id) DO NOTHING"))
            .bind(&id.0[..])
            .bind(task.min_batch.min(i64::MAX as u64) as i64)
            .bind(task.deadline_unix.min(i64::MAX as u64) as i64)
            .bind(task.reports_per_upload.min(i64::MAX as u64) as i64)
            .execute(p)
            .await?;
        });
        Ok(())
    }

    /// Every task the shuffler knows.
    pub async fn shuffler_tasks(&self) -> Result<Vec<(TaskId, ShufflerTask)>, Rejection> {
        let q = "SELECT task_id, min_batch, deadline_unix, reports_per_upload FROM shuffler_tasks";
        on_pool!(self, p, pg => {
            let rows = sqlx::query(q).fetch_all(p).await?;
            rows.iter()
                .map(|r| Ok((TaskId(id16(r.get::<&[u8], _>(0))?), shuffler_task_of(r, 1))))
                .collect()
        })
    }

    /// Reports of the task waiting for a batch.
    pub async fn pending_count(&self, task: TaskId) -> Result<u64, Rejection> {
        on_pool!(self, p, pg => {
            let n: i64 = sqlx::query_scalar(&sql(pg,
                "SELECT COUNT(*) FROM shuffler_pending WHERE task_id = $1 AND batch_id IS NULL"))
            .bind(&task.0[..])
            .fetch_one(p)
            .await?;
            Ok(n as u64)
        })
    }

    /// Cuts a batch of whole uploads, the oldest first, as many as fit in `max` reports, if
    /// that makes at least `min`: its size, or `None` (nothing changed). A user's messages
    /// come in one upload ([`crate::shuffler`]), so they never fall in two batches. One write
    /// transaction; on PostgreSQL the task's row is locked first (`FOR UPDATE`), so cuts of
    /// one task are serial across replicas and each sees the previous one's result: no report
    /// goes in two batches, no upload is split.
    pub async fn cut_batch(
        &self,
        task: TaskId,
        batch_id: [u8; ID_LEN],
        min: u64,
        max: u64,
    ) -> Result<Option<u64>, Rejection> {
        on_pool!(self, p, pg => {
            let mut tx = p.begin_with(begin(pg)).await?;
            if pg {
                sqlx::query("SELECT 1 FROM shuffler_tasks WHERE task_id = $1 FOR UPDATE")
                    .bind(&task.0[..])
                    .execute(&mut *tx)
                    .await?;
            }
            // Uploads in order of their first report; `upto` is the running total of reports.
            let n = sqlx::query(&sql(pg,
                "UPDATE shuffler_pending SET batch_id = $1
                 WHERE task_id = $2 AND batch_id IS NULL AND upload IN (
                     SELECT upload FROM (
                         SELECT upload, SUM(COUNT(*)) OVER (ORDER BY MIN(seq)) AS upto
                         FROM shuffler_pending WHERE task_id = $2 AND batch_id IS NULL
                         GROUP BY upload) AS u
                     WHERE upto <= $3)"))
            .bind(&batch_id[..])
            .bind(&task.0[..])
            .bind(max.min(i64::MAX as u64) as i64)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if n < min || n == 0 {
                tx.rollback().await?;
                return Ok(None);
            }
            sqlx::query(&sql(pg,
                "INSERT INTO shuffler_batches (batch_id, task_id, reports) VALUES ($1, $2, $3)"))
            .bind(&batch_id[..])
            .bind(&task.0[..])
            .bind(n as i64)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            Ok(Some(n))
        })
    }

    /// Leases one undelivered batch whose lease expired (or that never had one) until
    /// `now + lease` seconds: (batch id, task), or `None`. On PostgreSQL the row is taken
    /// `FOR UPDATE SKIP LOCKED`, so two replicas never send one batch at the same time.
    pub async fn lease_batch(
        &self,
        now: u64,
        lease: u64,
    ) -> Result<Option<([u8; ID_LEN], TaskId)>, Rejection> {
        on_pool!(self, p, pg => {
            let mut tx = p.begin_with(begin(pg)).await?;
            let row = sqlx::query(&sql(pg, &format!(
                "SELECT batch_id, task_id FROM shuffler_batches WHERE leased_until < $1
                 ORDER BY batch_id LIMIT 1{}", skip_locked(pg))))
            .bind(now as i64)
            .fetch_optional(&mut *tx)
            .await?;
            let Some(row) = row else {
                tx.rollback().await?;
                return Ok(None);
            };
            let batch = id16(row.get::<&[u8], _>(0))?;
            let task = TaskId(id16(row.get::<&[u8], _>(1))?);
            sqlx::query(&sql(pg, "UPDATE shuffler_batches SET leased_until = $1 WHERE batch_id = $2"))
                .bind(now.saturating_add(lease) as i64)
                .bind(&batch[..])
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(Some((batch, task)))
        })
    }

    /// Gives a lease back (delivery failed; any replica may retry at once).
    pub async fn unlease(&self, batch_id: &[u8; ID_LEN]) -> Result<(), Rejection> {
        on_pool!(self, p, pg => {
            sqlx::query(&sql(pg, "UPDATE shuffler_batches SET leased_until = 0 WHERE batch_id = $1"))
                .bind(&batch_id[..])
                .execute(p)
                .await?;
        });
        Ok(())
    }

    /// A task the shuffler knows (registered through any replica).
    pub async fn shuffler_task(&self, task: TaskId) -> Result<Option<ShufflerTask>, Rejection> {
        on_pool!(self, p, pg => {
            let row = sqlx::query(&sql(pg,
                "SELECT min_batch, deadline_unix, reports_per_upload FROM shuffler_tasks
                 WHERE task_id = $1"))
                .bind(&task.0[..])
                .fetch_optional(p)
                .await?;
            Ok(row.as_ref().map(|r| shuffler_task_of(r, 0)))
        })
    }

    /// The report ids and sealed reports of a batch (in storage order: the caller shuffles
    /// them). A row stored before migration 0006 has no report id: a zero id (its version 1
    /// seal does not open under version 2 anyway).
    pub async fn batch_reports(
        &self,
        batch_id: &[u8; ID_LEN],
    ) -> Result<Vec<(ReportId, Sealed)>, Rejection> {
        on_pool!(self, p, pg => {
            let rows = sqlx::query(&sql(pg,
                "SELECT enc, ct, report_id FROM shuffler_pending WHERE batch_id = $1"))
                .bind(&batch_id[..])
                .fetch_all(p)
                .await?;
            rows.iter()
                .map(|r| {
                    let enc: [u8; ENC_LEN] = r
                        .get::<&[u8], _>(0)
                        .try_into()
                        .map_err(|_| Rejection::Storage("stored enc of the wrong length".into()))?;
                    let ct: [u8; CIPHERTEXT_LEN] = r.get::<&[u8], _>(1).try_into().map_err(|_| {
                        Rejection::Storage("stored ciphertext of the wrong length".into())
                    })?;
                    let id: ReportId = match r.get::<Option<&[u8]>, _>(2) {
                        None => [0; ID_LEN],
                        Some(b) => b.try_into().map_err(|_| {
                            Rejection::Storage("stored report id of the wrong length".into())
                        })?,
                    };
                    Ok((id, Sealed { enc, ct }))
                })
                .collect()
        })
    }

    /// The analyzer has the batch: its reports are deleted.
    pub async fn delivered(&self, batch_id: &[u8; ID_LEN]) -> Result<(), Rejection> {
        on_pool!(self, p, pg => {
            let mut tx = p.begin_with(begin(pg)).await?;
            sqlx::query(&sql(pg, "DELETE FROM shuffler_pending WHERE batch_id = $1"))
                .bind(&batch_id[..])
                .execute(&mut *tx)
                .await?;
            sqlx::query(&sql(pg, "DELETE FROM shuffler_batches WHERE batch_id = $1"))
                .bind(&batch_id[..])
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
        });
        Ok(())
    }

    /// Report ids accepted for a task (replay table size).
    pub async fn accepted_count(&self, task: TaskId) -> Result<u64, Rejection> {
        on_pool!(self, p, pg => {
            let n: i64 = sqlx::query_scalar(&sql(pg, "SELECT COUNT(*) FROM shuffler_seen WHERE task_id = $1"))
                .bind(&task.0[..])
                .fetch_one(p)
                .await?;
            Ok(n as u64)
        })
    }

    // ----- analyzer -----

    /// Stores a new task with its private key.
    pub async fn insert_analyzer_task(
        &self,
        task: TaskId,
        config: &str,
        secret: &[u8],
        created_unix: u64,
    ) -> Result<(), Rejection> {
        on_pool!(self, p, pg => {
            sqlx::query(&sql(pg,
                "INSERT INTO analyzer_tasks (task_id, config, hpke_secret, created_unix)
                 VALUES ($1, $2, $3, $4)"))
            .bind(&task.0[..])
            .bind(config)
            .bind(secret)
            .bind(created_unix as i64)
            .execute(p)
            .await?;
        });
        Ok(())
    }

    /// Removes a task that could not be registered with the shuffler.
    pub async fn delete_analyzer_task(&self, task: TaskId) -> Result<(), Rejection> {
        on_pool!(self, p, pg => {
            sqlx::query(&sql(pg, "DELETE FROM analyzer_tasks WHERE task_id = $1"))
                .bind(&task.0[..])
                .execute(p)
                .await?;
        });
        Ok(())
    }

    /// A task's config (JSON) and private key.
    pub async fn analyzer_task(
        &self,
        task: TaskId,
    ) -> Result<Option<(String, Vec<u8>)>, Rejection> {
        on_pool!(self, p, pg => {
            let row = sqlx::query(&sql(pg,
                "SELECT config, hpke_secret FROM analyzer_tasks WHERE task_id = $1"))
                .bind(&task.0[..])
                .fetch_optional(p)
                .await?;
            Ok(row.map(|r| (r.get(0), r.get(1))))
        })
    }

    /// Every task's config (JSON), oldest first.
    pub async fn analyzer_tasks(&self) -> Result<Vec<String>, Rejection> {
        let q = "SELECT config FROM analyzer_tasks ORDER BY created_unix, task_id";
        on_pool!(self, p, pg => Ok(sqlx::query_scalar(q).fetch_all(p).await?))
    }

    /// Stores a batch once: `Duplicate` if its id is known. `fresh[i]` tells `finish` whether
    /// encapsulated key `encs[i]` is new for the task (a report forwarded twice counts once);
    /// `finish` returns (reports, rejected, duplicates, state) to store. One transaction.
    pub async fn store_batch<F>(
        &self,
        task: TaskId,
        batch_id: &[u8; ID_LEN],
        encs: &[[u8; ENC_LEN]],
        finish: F,
    ) -> Result<(u64, u64, u64), Rejection>
    where
        F: FnOnce(&[bool]) -> Result<(u64, u64, u64, String), Rejection>,
    {
        on_pool!(self, p, pg => {
            let mut tx = p.begin_with(begin(pg)).await?;
            let inserted = sqlx::query(&sql(pg,
                "INSERT INTO analyzer_batches (task_id, batch_id, reports, rejected, duplicates, state)
                 VALUES ($1, $2, 0, 0, 0, '') ON CONFLICT DO NOTHING"))
            .bind(&task.0[..])
            .bind(&batch_id[..])
            .execute(&mut *tx)
            .await?;
            if inserted.rows_affected() == 0 {
                return Err(Rejection::Duplicate("batch"));
            }
            // Multi-row inserts (see `intake`): the returned keys are the ones this batch
            // inserted; each is claimed by its first report in the batch. Sorted by key for a
            // fixed lock order between replicas.
            let mut order: Vec<usize> = (0..encs.len()).collect();
            order.sort_by_key(|&i| encs[i]);
            let mut fresh = vec![false; encs.len()];
            let mut start = 0;
            for len in intake::chunk_lengths(order.len()) {
                let chunk = &order[start..start + len];
                start += len;
                let q = intake::multi_insert(pg, "INSERT INTO analyzer_seen (task_id, enc)", 2, len,
                    " ON CONFLICT DO NOTHING RETURNING enc");
                let mut query = sqlx::query(&q);
                for &i in chunk {
                    query = query.bind(&task.0[..]).bind(&encs[i][..]);
                }
                let mut inserted = std::collections::HashSet::with_capacity(len);
                for row in query.fetch_all(&mut *tx).await? {
                    inserted.insert(row.get::<Vec<u8>, _>(0));
                }
                for &i in chunk {
                    if inserted.remove(&encs[i][..]) {
                        fresh[i] = true;
                    }
                }
            }
            let (reports, rejected, duplicates, state) = finish(&fresh)?;
            sqlx::query(&sql(pg,
                "UPDATE analyzer_batches SET reports = $1, rejected = $2, duplicates = $3, state = $4
                 WHERE task_id = $5 AND batch_id = $6"))
            .bind(reports as i64)
            .bind(rejected as i64)
            .bind(duplicates as i64)
            .bind(state)
            .bind(&task.0[..])
            .bind(&batch_id[..])
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            Ok((reports, rejected, duplicates))
        })
    }

    /// Batches of the task not yet released.
    pub async fn unreleased_batches(&self, task: TaskId) -> Result<Vec<StoredBatch>, Rejection> {
        on_pool!(self, p, pg => {
            let rows = sqlx::query(&sql(pg,
                "SELECT batch_id, reports, state FROM analyzer_batches
                 WHERE task_id = $1 AND release_id IS NULL AND reports > 0"))
            .bind(&task.0[..])
            .fetch_all(p)
            .await?;
            Ok(rows
                .iter()
                .map(|r| StoredBatch {
                    batch_id: r.get(0),
                    reports: r.get::<i64, _>(1) as u64,
                    state: r.get(2),
                })
                .collect())
        })
    }

    /// Counts for the status page and the task view.
    pub async fn task_counts(&self, task: TaskId) -> Result<TaskCounts, Rejection> {
        on_pool!(self, p, pg => {
            let r = sqlx::query(&sql(pg,
                "SELECT COUNT(*), CAST(COALESCE(SUM(reports), 0) AS BIGINT),
                        CAST(COALESCE(SUM(rejected), 0) AS BIGINT),
                        CAST(COALESCE(SUM(duplicates), 0) AS BIGINT),
                        CAST(COALESCE(SUM(CASE WHEN release_id IS NULL THEN reports ELSE 0 END), 0) AS BIGINT)
                 FROM analyzer_batches WHERE task_id = $1"))
            .bind(&task.0[..])
            .fetch_one(p)
            .await?;
            Ok(TaskCounts {
                batches: r.get::<i64, _>(0) as u64,
                reports: r.get::<i64, _>(1) as u64,
                rejected: r.get::<i64, _>(2) as u64,
                duplicates: r.get::<i64, _>(3) as u64,
                unreleased: r.get::<i64, _>(4) as u64,
            })
        })
    }

    /// The task's releases, oldest first.
    pub async fn releases(&self, task: TaskId) -> Result<Vec<StoredRelease>, Rejection> {
        on_pool!(self, p, pg => {
            let rows = sqlx::query(&sql(pg,
                "SELECT release_id, epsilon, delta, body FROM analyzer_releases
                 WHERE task_id = $1 ORDER BY release_id"))
            .bind(&task.0[..])
            .fetch_all(p)
            .await?;
            Ok(rows
                .iter()
                .map(|r| StoredRelease {
                    release_id: r.get(0),
                    epsilon: r.get(1),
                    delta: r.get(2),
                    body: r.get(3),
                })
                .collect())
        })
    }

    /// Records a release of exactly `batches` (all still unreleased), if the budget allows:
    /// the analyzer's use of [`Store::charge_ledger`].
    #[allow(clippy::too_many_arguments)]
    pub async fn record_release<F>(
        &self,
        task: TaskId,
        batches: &[Vec<u8>],
        reports: u64,
        epsilon: f64,
        delta: f64,
        created_unix: u64,
        make: F,
    ) -> Result<i64, Rejection>
    where
        F: FnOnce(&[(f64, f64)], i64) -> Result<String, Rejection>,
    {
        self.charge_ledger(
            task.0,
            Spender::Batches(batches),
            reports,
            epsilon,
            delta,
            created_unix,
            make,
        )
        .await
    }

    /// The release ledger (table `analyzer_releases`, one ledger per task id), shared by the
    /// analyzer's releases and the relay's: records a release of (`epsilon`, `delta`) on
    /// task `ledger`'s ledger, if the budget allows. `make(spent, release_id)` gets the
    /// guarantees already spent and the new release's id, and refuses (nothing is written)
    /// or returns the release's body. `spender` is what the release consumes, marked in the
    /// same transaction: the analyzer's batches (each released once), or a relay run
    /// (settled once, `relay_releases`; `Duplicate` if it already was). One write
    /// transaction that first locks the ledger's task row (PostgreSQL; SQLite's write lock
    /// is global), so releases of one ledger are serialized.
    #[allow(clippy::too_many_arguments)]
    pub async fn charge_ledger<F>(
        &self,
        ledger: [u8; ID_LEN],
        spender: Spender<'_>,
        reports: u64,
        epsilon: f64,
        delta: f64,
        created_unix: u64,
        make: F,
    ) -> Result<i64, Rejection>
    where
        F: FnOnce(&[(f64, f64)], i64) -> Result<String, Rejection>,
    {
        on_pool!(self, p, pg => {
            let mut tx = p.begin_with(begin(pg)).await?;
            if pg {
                let lock = match spender {
                    Spender::Batches(_) => "SELECT task_id FROM analyzer_tasks WHERE task_id = $1 FOR UPDATE",
                    Spender::RelayRun(_) => "SELECT task_id FROM relay_tasks WHERE task_id = $1 FOR UPDATE",
                };
                sqlx::query(lock)
                    .bind(&ledger[..])
                    .fetch_optional(&mut *tx)
                    .await?;
            }
            let spent: Vec<(f64, f64)> = sqlx::query(&sql(pg,
                "SELECT epsilon, delta FROM analyzer_releases WHERE task_id = $1 ORDER BY release_id"))
            .bind(&ledger[..])
            .fetch_all(&mut *tx)
            .await?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
            let id: i64 = sqlx::query_scalar(&sql(pg,
                "INSERT INTO analyzer_releases (task_id, created_unix, reports, epsilon, delta, body)
                 VALUES ($1, $2, $3, $4, $5, '') RETURNING release_id"))
            .bind(&ledger[..])
            .bind(created_unix as i64)
            .bind(reports as i64)
            .bind(epsilon)
            .bind(delta)
            .fetch_one(&mut *tx)
            .await?;
            // On refusal the transaction is dropped, which rolls it back.
            let body = make(&spent, id)?;
            sqlx::query(&sql(pg, "UPDATE analyzer_releases SET body = $1 WHERE release_id = $2"))
                .bind(body)
                .bind(id)
                .execute(&mut *tx)
                .await?;
            match spender {
                Spender::Batches(batches) => {
                    let mark = sql(pg,
                        "UPDATE analyzer_batches SET release_id = $1
                         WHERE task_id = $2 AND batch_id = $3 AND release_id IS NULL");
                    for b in batches {
                        let n = sqlx::query(&mark)
                            .bind(id)
                            .bind(&ledger[..])
                            .bind(b)
                            .execute(&mut *tx)
                            .await?
                            .rows_affected();
                        if n != 1 {
                            return Err(Rejection::NothingToRelease(
                                "a concurrent release took these batches; try again".into(),
                            ));
                        }
                    }
                }
                Spender::RelayRun(run) => {
                    let r = sqlx::query(&sql(pg,
                        "INSERT INTO relay_releases (run_id, ledger_task, release_id, refusal)
                         VALUES ($1, $2, $3, NULL)"))
                    .bind(&run[..])
                    .bind(&ledger[..])
                    .bind(id)
                    .execute(&mut *tx)
                    .await;
                    match r {
                        Ok(_) => {}
                        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                            return Err(Rejection::Duplicate("relay release"));
                        }
                        Err(e) => return Err(e.into()),
                    }
                }
            }
            tx.commit().await?;
            Ok(id)
        })
    }
}
