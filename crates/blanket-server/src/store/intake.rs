//! The shuffler's durable intake: one transaction per group of reports (group commit), with
//! multi-row statements.
//!
//! A group of `g` reports costs about `2 g / CHUNK` statements instead of `2 g`: the report ids
//! go in with multi-row `INSERT ... ON CONFLICT DO NOTHING RETURNING`, whose returned rows are
//! exactly the (task, report id) pairs this statement inserted, so the primary key of
//! `shuffler_seen` alone decides which report is new, also between copies inside one group
//! (the second copy conflicts with the first one's row, inserted by the same transaction).
//! The sealed reports of the new ids then go in with multi-row `INSERT`s.
//!
//! Fast path. A group is first written with `ON CONFLICT DO NOTHING` alone and the rows each
//! statement inserted are counted: when every row went in, the primary key accepted every
//! report and none is a replay. Only a group with a conflict (a replay, or two copies of one
//! report) is rolled back and written again with `RETURNING`, which names the new rows. The
//! primary key decides in both cases; the count only spares the common group the returned
//! rows (one message each from SQLite's worker thread).
//!
//! Statement shapes. Chunks have a power-of-two size (at most [`CHUNK`]): a group is cut into
//! full chunks and the binary digits of the remainder, so at most `log2(CHUNK) + 1` distinct
//! statements per table exist and all stay in the connection's prepared-statement cache.
//!
//! Lock order. The group is sorted by (task, report id) before it is written, so two replicas
//! writing overlapping groups to one PostgreSQL database take the unique-index locks in the
//! same order and cannot deadlock.

use super::{begin, Backend, Store};
use crate::problem::Rejection;
use crate::wire::{ReportId, Sealed, TaskId, ID_LEN};
use sqlx::Row;
use std::collections::HashSet;

/// Most rows in one statement (a power of two). 512 rows bind at most 2,048 parameters,
/// far below SQLite's 32,766 and PostgreSQL's 65,535.
pub(super) const CHUNK: usize = 512;

/// Splits `n` into power-of-two chunk lengths: full [`CHUNK`]s, then the binary digits of the
/// remainder, largest first.
pub(super) fn chunk_lengths(n: usize) -> Vec<usize> {
    let mut out = vec![CHUNK; n / CHUNK];
    let rest = n % CHUNK;
    let mut bit = CHUNK;
    while bit > 0 {
        bit /= 2;
        if rest & bit != 0 {
            out.push(bit);
        }
    }
    out
}

/// `INSERT INTO table (cols) VALUES (..), (..) suffix` for `rows` rows, with the backend's
/// parameters: numbered `$N` on PostgreSQL, anonymous `?` (numbered in order) on SQLite.
///
/// SQLite's parameters are left unnumbered because sqlx asks SQLite for the name of every
/// parameter it binds, and for numbered ones that lookup scans the statement's list of
/// names: quadratic in the parameters of a statement (a 512-row chunk binds up to 2,048), where
/// anonymous ones cost nothing.
pub(super) fn multi_insert(pg: bool, head: &str, cols: usize, rows: usize, suffix: &str) -> String {
    let mut q = String::with_capacity(head.len() + suffix.len() + rows * cols * 7);
    q.push_str(head);
    q.push_str(" VALUES ");
    for r in 0..rows {
        if r > 0 {
            q.push(',');
        }
        q.push('(');
        for c in 0..cols {
            if c > 0 {
                q.push(',');
            }
            if pg {
                q.push('$');
                q.push_str(&(r * cols + c + 1).to_string());
            } else {
                q.push('?');
            }
        }
        q.push(')');
    }
    q.push_str(suffix);
    q
}

const SEEN_HEAD: &str = "INSERT INTO shuffler_seen (task_id, report_id)";
const SEEN_TAIL: &str = " ON CONFLICT DO NOTHING RETURNING task_id, report_id";
const SEEN_IGNORE: &str = " ON CONFLICT DO NOTHING";
const PENDING_HEAD: &str = "INSERT INTO shuffler_pending (task_id, report_id, enc, ct, upload)";

type Key = ([u8; ID_LEN], ReportId);

/// A report handed to [`Store::commit_reports`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incoming {
    /// Its task.
    pub task: TaskId,
    /// Its report id (replay protection).
    pub id: ReportId,
    /// The sealed message.
    pub sealed: Sealed,
    /// The upload (HTTP request) it came in: a batch cut takes whole uploads
    /// ([`Store::cut_batch`]). The shuffler's own number, never the client's.
    pub upload: i64,
}

fn key_of(row_task: &[u8], row_id: &[u8]) -> Result<Key, Rejection> {
    let bad = || Rejection::Storage("stored id of the wrong length".into());
    Ok((
        row_task.try_into().map_err(|_| bad())?,
        row_id.try_into().map_err(|_| bad())?,
    ))
}

impl Store {
    /// Stores a group of reports in one transaction: `true` for each one stored, `false` for
    /// each whose (task, report id) was already there (the primary key decides, also between
    /// two copies in one group: the first in the group is stored). Returns only after the
    /// commit; on any error nothing of the group is stored.
    pub async fn commit_reports(&self, reports: &[Incoming]) -> Result<Vec<bool>, Rejection> {
        // Sorted by key (stable: copies keep their arrival order), for a fixed lock order.
        let mut order: Vec<usize> = (0..reports.len()).collect();
        order.sort_by_key(|&i| (reports[i].task.0, reports[i].id));
        let mut fresh = vec![false; reports.len()];
        // First try: plain `ON CONFLICT DO NOTHING` inserts, counting the rows inserted. If
        // every row of the group went in, every report is new (the primary key accepted
        // each); otherwise the transaction is rolled back and the group written again with
        // `RETURNING`, which names the rows inserted. Replays are rare, so the common group
        // pays neither the returned rows nor their matching.
        macro_rules! write_group {
            ($p:expr, $pg:expr) => {{
                let pg = $pg;
                for returning in [false, true] {
                    let mut tx = $p.begin_with(begin(pg)).await?;
                    let mut conflict = false;
                    let mut start = 0;
                    for len in chunk_lengths(order.len()) {
                        let chunk = &order[start..start + len];
                        start += len;
                        let tail = if returning { SEEN_TAIL } else { SEEN_IGNORE };
                        let q = multi_insert(pg, SEEN_HEAD, 2, len, tail);
                        let mut query = sqlx::query(&q);
                        for &i in chunk {
                            query = query.bind(&reports[i].task.0[..]).bind(&reports[i].id[..]);
                        }
                        let new: Vec<usize> = if returning {
                            let mut inserted: HashSet<Key> = HashSet::with_capacity(len);
                            for row in query.fetch_all(&mut *tx).await? {
                                inserted.insert(key_of(
                                    row.get::<&[u8], _>(0),
                                    row.get::<&[u8], _>(1),
                                )?);
                            }
                            // Each inserted key is claimed by the first report of the chunk
                            // carrying it; a later copy finds it claimed (its own insert did
                            // nothing).
                            chunk
                                .iter()
                                .copied()
                                .filter(|&i| inserted.remove(&(reports[i].task.0, reports[i].id)))
                                .collect()
                        } else if query.execute(&mut *tx).await?.rows_affected() == len as u64 {
                            chunk.to_vec()
                        } else {
                            conflict = true;
                            break;
                        };
                        let mut at = 0;
                        for plen in chunk_lengths(new.len()) {
                            let q = multi_insert(pg, PENDING_HEAD, 5, plen, "");
                            let mut query = sqlx::query(&q);
                            for &i in &new[at..at + plen] {
                                let r = &reports[i];
                                query = query
                                    .bind(&r.task.0[..])
                                    .bind(&r.id[..])
                                    .bind(&r.sealed.enc[..])
                                    .bind(&r.sealed.ct[..])
                                    .bind(r.upload);
                            }
                            at += plen;
                            query.execute(&mut *tx).await?;
                        }
                        for i in new {
                            fresh[i] = true;
                        }
                    }
                    if conflict {
                        tx.rollback().await?;
                        fresh.iter_mut().for_each(|f| *f = false);
                        continue;
                    }
                    tx.commit().await?;
                    break;
                }
            }};
        }
        match (&self.backend, &self.intake) {
            (Backend::Sqlite(_), Some(p)) => write_group!(p, false),
            (Backend::Sqlite(p), None) => write_group!(p, false),
            (Backend::Postgres(p), _) => write_group!(p, true),
        }
        Ok(fresh)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_every_length_with_power_of_two_pieces() {
        for n in 0..3 * CHUNK + 7 {
            let c = chunk_lengths(n);
            assert_eq!(c.iter().sum::<usize>(), n, "n = {n}");
            assert!(c.iter().all(|&l| l.is_power_of_two() && l <= CHUNK));
            assert!(c.windows(2).all(|w| w[0] >= w[1]));
        }
    }

    #[test]
    fn multi_insert_numbers_every_parameter() {
        assert_eq!(
            multi_insert(true, "INSERT INTO t (a, b)", 2, 2, " RETURNING a"),
            "INSERT INTO t (a, b) VALUES ($1,$2),($3,$4) RETURNING a"
        );
        assert_eq!(
            multi_insert(false, "INSERT INTO t (a)", 1, 3, ""),
            "INSERT INTO t (a) VALUES (?),(?),(?)"
        );
    }
}
