//! Replicas as separate OS processes: two `blanket serve --role shuffler` and two
//! `blanket serve --role analyzer` processes on ONE PostgreSQL database, reports streamed to
//! both shufflers at once, one shuffler killed with SIGKILL while it holds the lease of a
//! batch it is delivering. Every acknowledged report is stored; every batch reaches the
//! analyzers once (the other shuffler takes the dead one's batch over when its lease
//! expires) and is released once.
//!
//! Needs BLANKET_TEST_PG_URL (scripts/test.d/setup-postgres.sh starts a cluster and sets it);
//! without it the test says so loudly and passes without running.

mod common;
use common::*;

use blanket::rng::SecureRng;
use blanket_server::client::TaskClient;
use blanket_server::task::ClientParams;
use sqlx::{Connection, Row};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Seconds a shuffler holds a batch it delivers (`--lease-seconds`).
const LEASE: u64 = 3;
const MIN_BATCH: u64 = 40;
/// Reports the writers send in all.
const SEND: usize = 1600;

fn pg_url() -> Option<String> {
    match std::env::var("BLANKET_TEST_PG_URL") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            eprintln!(
                "\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\
                 !!! SKIPPED: the multi-process PostgreSQL replica test needs               !!!\n\
                 !!! BLANKET_TEST_PG_URL (scripts/test sources                               !!!\n\
                 !!! scripts/test.d/setup-postgres.sh, which sets it).                       !!!\n\
                 !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
            );
            None
        }
    }
}

/// A fresh database on the test cluster; its URL.
async fn fresh_database(base: &str) -> String {
    let mut c = sqlx::PgConnection::connect(base).await.unwrap();
    let name = format!(
        "blanket_cli_test_{}_{}",
        std::process::id(),
        blanket_server::http::now_unix()
    );
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&mut c)
        .await
        .unwrap();
    let (prefix, _) = base.rsplit_once('/').unwrap();
    format!("{prefix}/{name}")
}

/// A TCP proxy from a loopback port to `upstream` that can be stalled: once stalled, every
/// byte a client sends is held (never forwarded, never answered), so a shuffler posting a
/// batch through it keeps its lease and waits. `held` counts the requests held.
struct Proxy {
    url: String,
    stalled: Arc<AtomicBool>,
    held: Arc<AtomicU64>,
}

async fn proxy(upstream: String) -> Proxy {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let stalled = Arc::new(AtomicBool::new(false));
    let held = Arc::new(AtomicU64::new(0));
    let (st, hd) = (stalled.clone(), held.clone());
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let Ok(server) = tokio::net::TcpStream::connect(&upstream).await else {
                continue;
            };
            let (mut cr, mut cw) = client.into_split();
            let (mut sr, mut sw) = server.into_split();
            let (st, hd) = (st.clone(), hd.clone());
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    let n = match cr.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    if st.load(Ordering::SeqCst) {
                        hd.fetch_add(1, Ordering::SeqCst);
                        // Hold the connection open without an answer (until the test ends).
                        let _keep = (cr, sw);
                        std::future::pending::<()>().await;
                        return;
                    }
                    if sw.write_all(&buf[..n]).await.is_err() {
                        return;
                    }
                }
            });
            tokio::spawn(async move {
                let _ = tokio::io::copy(&mut sr, &mut cw).await;
            });
        }
    });
    Proxy { url, stalled, held }
}

/// (reports aggregated, reports the analyzers saw twice, batches) over all batches.
async fn analyzer_totals(pool: &sqlx::PgPool) -> (i64, i64, i64) {
    let r = sqlx::query(
        "SELECT CAST(COALESCE(SUM(reports), 0) AS BIGINT),
                CAST(COALESCE(SUM(duplicates), 0) AS BIGINT), COUNT(*) FROM analyzer_batches",
    )
    .fetch_one(pool)
    .await
    .unwrap();
    (r.get(0), r.get(1), r.get(2))
}

async fn scalar(pool: &sqlx::PgPool, q: &str) -> i64 {
    sqlx::query_scalar::<_, i64>(q)
        .fetch_one(pool)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shuffler_and_analyzer_processes_on_one_postgres_with_a_sigkill() {
    let Some(base) = pg_url() else { return };
    let t_start = Instant::now();
    let db = fresh_database(&base).await;
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .connect(&db)
        .await
        .unwrap();
    let dir = temp_dir("replicas");
    let admin_file = dir.join("admin-token");
    std::fs::write(&admin_file, "replica-admin-token\n").unwrap();
    let admin = admin_file.to_str().unwrap();
    let lease = LEASE.to_string();

    // Analyzer 1 is reached by shuffler 1 through a proxy the test can stall.
    let (pa1, pa2) = (free_port(), free_port());
    let px = proxy(format!("127.0.0.1:{pa1}")).await;
    let shuffler = |analyzer: &str| {
        serve(&[
            "--role",
            "shuffler",
            "--db",
            &db,
            "--listen",
            "127.0.0.1:0",
            "--analyzer",
            analyzer,
            "--lease-seconds",
            &lease,
        ])
    };
    let mut s1 = shuffler(&px.url);
    let s2 = shuffler(&format!("http://127.0.0.1:{pa2}"));
    let analyzer = |port: u16| {
        let listen = format!("127.0.0.1:{port}");
        serve(&[
            "--role",
            "analyzer",
            "--db",
            &db,
            "--listen",
            &listen,
            "--shuffler",
            &s2.url,
            "--admin-token-file",
            admin,
        ])
    };
    let a1 = analyzer(pa1);
    let a2 = analyzer(pa2);

    // The task, through the CLI at analyzer 1 (the admin token from the shared file).
    let created = json(&[
        "task",
        "create",
        "--server",
        &a1.url,
        "--admin-token-file",
        admin,
        "--protocol",
        "histogram",
        "--domain",
        "3",
        "--eps",
        "8",
        "--delta",
        "1e-3",
        "--n",
        &MIN_BATCH.to_string(),
        "--budget-eps",
        "80",
        "--budget-delta",
        "1e-2",
        "--json",
    ]);
    let params: ClientParams = serde_json::from_value(created["params"].clone()).unwrap();
    let id = params.task_id.clone();
    let client = Arc::new(TaskClient::new(params).unwrap());

    // Four writers stream reports to both shufflers (alternating); a report is acknowledged
    // on 201. Once shuffler 1 is gone, its writers send to shuffler 2.
    let http = reqwest::Client::new();
    let acked = Arc::new(Mutex::new(Vec::<Vec<u8>>::new()));
    let sent = Arc::new(AtomicUsize::new(0));
    let s1_dead = Arc::new(AtomicBool::new(false));
    let ups = [
        format!("{}/tasks/{id}/reports", s1.url),
        format!("{}/tasks/{id}/reports", s2.url),
    ];
    let mut writers = Vec::new();
    for w in 0..4 {
        let (acked, sent, dead, http, client, ups) = (
            acked.clone(),
            sent.clone(),
            s1_dead.clone(),
            http.clone(),
            client.clone(),
            ups.clone(),
        );
        writers.push(tokio::spawn(async move {
            let mut rng = SecureRng::from_os().unwrap();
            for i in 0..SEND / 4 {
                let r = client.report((i % 3) as f64, &mut rng).unwrap();
                let to = if (w + i) % 2 == 0 && !dead.load(Ordering::SeqCst) {
                    0
                } else {
                    1
                };
                sent.fetch_add(1, Ordering::SeqCst);
                match http.post(&ups[to]).body(r.clone()).send().await {
                    Ok(resp) if resp.status() == 201 => acked.lock().unwrap().push(r),
                    Ok(resp) => panic!("unexpected {} from shuffler {}", resp.status(), to + 1),
                    Err(e) => assert_eq!(to, 0, "shuffler 2 failed: {e}"), // shuffler 1 killed
                }
                // A steady stream rather than a burst, so batches are cut all along.
                tokio::time::sleep(Duration::from_millis(3)).await;
            }
        }));
    }

    // Phase 1: both shufflers forward (through analyzers 1 and 2).
    let t0 = Instant::now();
    while acked.lock().unwrap().len() < 400 {
        assert!(t0.elapsed() < Duration::from_secs(60), "intake too slow");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Phase 2: stall analyzer 1's link; wait until shuffler 1 holds a lease it cannot finish.
    px.stalled.store(true, Ordering::SeqCst);
    let t0 = Instant::now();
    while px.held.load(Ordering::SeqCst) == 0 {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "shuffler 1 never leased a batch after the stall"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let now = blanket_server::http::now_unix() as i64;
    let leased: Vec<Vec<u8>> =
        sqlx::query_scalar("SELECT batch_id FROM shuffler_batches WHERE leased_until > $1")
            .bind(now)
            .fetch_all(&pool)
            .await
            .unwrap();
    assert!(!leased.is_empty(), "no batch under lease while one is held");
    // SIGKILL shuffler 1, mid-stream, with the lease held.
    let sent_before_kill = sent.load(Ordering::SeqCst);
    s1.child.kill().unwrap();
    s1.child.wait().unwrap();
    s1_dead.store(true, Ordering::SeqCst);
    let killed_at = Instant::now();
    for w in writers {
        w.await.unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    let sent = sent.load(Ordering::SeqCst);

    // Shuffler 2 takes the leased batches over once their lease expires, and delivers
    // everything due: aggregated + still pending = accepted, fewer than min_batch pending,
    // no batch left.
    let accepted = loop {
        let accepted = scalar(&pool, "SELECT COUNT(*) FROM shuffler_seen").await;
        let pending = scalar(
            &pool,
            "SELECT COUNT(*) FROM shuffler_pending WHERE batch_id IS NULL",
        )
        .await;
        let batches = scalar(&pool, "SELECT COUNT(*) FROM shuffler_batches").await;
        let (aggregated, _, _) = analyzer_totals(&pool).await;
        if batches == 0 && aggregated + pending == accepted && pending < MIN_BATCH as i64 {
            break accepted;
        }
        assert!(
            killed_at.elapsed() < Duration::from_secs(LEASE + 60),
            "not delivered: accepted {accepted}, aggregated {aggregated}, pending {pending}, \
             batches {batches}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    for b in &leased {
        let n: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM analyzer_batches WHERE batch_id = $1")
                .bind(b)
                .fetch_one(&pool)
                .await
                .unwrap();
        assert_eq!(
            n, 1,
            "the batch leased by the killed shuffler was not taken over"
        );
    }
    // Nothing lost: every acknowledged report is stored (a resubmission is a duplicate);
    // reports in flight at the kill may be stored unacknowledged, never more than were sent.
    assert!(
        acked.len() as i64 <= accepted && accepted as usize <= sent,
        "{} acked, {accepted} accepted, {sent} sent",
        acked.len()
    );
    assert!(
        sent_before_kill < SEND,
        "the kill was not mid-stream ({sent_before_kill} of {SEND} sent before it)"
    );
    for r in &acked {
        let resp = http.post(&ups[1]).body(r.clone()).send().await.unwrap();
        assert_eq!(resp.status(), 409, "an acknowledged report is missing");
    }
    // Nothing counted twice: no report opened twice, no batch delivered twice.
    let (aggregated, duplicates, batches) = analyzer_totals(&pool).await;
    assert_eq!(duplicates, 0, "a report reached the analyzers twice");
    assert_eq!(
        scalar(&pool, "SELECT COUNT(*) FROM analyzer_seen").await,
        aggregated,
        "reports opened != reports aggregated"
    );
    for a in [&a1, &a2] {
        let h: serde_json::Value = http
            .get(format!("{}/healthz", a.url))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(
            h["duplicate_batches"], 0,
            "a batch was delivered twice: {h}"
        );
    }
    assert!(batches >= 2, "{batches} batches");

    // Both analyzers release at once, twice: each batch lands in exactly one release.
    let release = |url: String| {
        let h = http.clone();
        async move {
            h.post(url)
                .bearer_auth("replica-admin-token")
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    for round in 0..2 {
        let (c1, c2) = tokio::join!(
            release(format!("{}/tasks/{id}/release", a1.url)),
            release(format!("{}/tasks/{id}/release", a2.url)),
        );
        let mut codes = [c1, c2];
        codes.sort_unstable();
        if round == 0 {
            assert_eq!(codes, [201, 409], "round {round}");
        } else {
            assert_eq!(codes, [409, 409], "round {round}: nothing left to release");
        }
    }
    let releases = scalar(&pool, "SELECT COUNT(*) FROM analyzer_releases").await;
    assert_eq!(releases, 1);
    let released = scalar(
        &pool,
        "SELECT CAST(COALESCE(SUM(reports), 0) AS BIGINT) FROM analyzer_releases",
    )
    .await;
    assert_eq!(released, aggregated, "released != aggregated");
    let unreleased = scalar(
        &pool,
        "SELECT COUNT(*) FROM analyzer_batches WHERE release_id IS NULL AND reports > 0",
    )
    .await;
    assert_eq!(unreleased, 0);
    eprintln!(
        "replicas: {sent} sent, {} acked, {accepted} stored, {aggregated} aggregated in \
         {batches} batches, {} leased batch(es) taken over, {:.1} s",
        acked.len(),
        leased.len(),
        t_start.elapsed().as_secs_f64()
    );
    drop((a1, a2, s2, s1));
    pool.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}
