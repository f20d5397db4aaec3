//! Replicas over PostgreSQL: two shufflers and two analyzers on one database never put a
//! report in two batches, never deliver one batch twice, and never release one batch twice.
//! Needs BLANKET_TEST_PG_URL (scripts/test.d/setup-postgres.sh starts a cluster and sets it);
//! without it the test says so loudly and passes without running.

mod common;

use blanket::rng::SecureRng;
use blanket_server::{Role, Running, ServeConfig};
use common::loose;
use sqlx::Connection;
use std::time::{Duration, Instant};

const TOKEN: &str = "replica-token";
const ADMIN: &str = "replica-admin-token";

fn pg_url() -> Option<String> {
    match std::env::var("BLANKET_TEST_PG_URL") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            eprintln!(
                "\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\
                 !!! SKIPPED: the PostgreSQL replica test needs BLANKET_TEST_PG_URL           !!!\n\
                 !!! (scripts/test sources scripts/test.d/setup-postgres.sh, which sets it).  !!!\n\
                 !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
            );
            None
        }
    }
}

/// A fresh database on the test cluster; its URL.
async fn fresh_database(base: &str) -> String {
    let mut c = sqlx::PgConnection::connect(base).await.unwrap();
    let mut b = [0u8; 8];
    blanket::rng::RngCore::fill_bytes(&mut SecureRng::from_os().unwrap(), &mut b);
    let name = format!("blanket_test_{}", blanket_server::wire::hex_encode(&b));
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&mut c)
        .await
        .unwrap();
    let (prefix, _) = base.rsplit_once('/').unwrap();
    format!("{prefix}/{name}")
}

async fn start(role: Role, db: &str, peer: String, port: Option<u16>) -> Running {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port.unwrap_or(0)))
        .await
        .unwrap();
    blanket_server::start(
        ServeConfig {
            role,
            db: db.to_string(),
            peer_url: Some(peer),
            peer_token: Some(TOKEN.into()),
            admin_token: Some(ADMIN.into()),
            lease_seconds: None,
        },
        listener,
    )
    .await
    .unwrap()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_shufflers_and_two_analyzers_on_one_postgres() {
    let Some(base) = pg_url() else { return };
    let db = fresh_database(&base).await;
    let (pa1, pa2) = (free_port(), free_port());
    // Shuffler i forwards to analyzer i; both analyzers register tasks with shuffler 1.
    let s1 = start(Role::Shuffler, &db, format!("http://127.0.0.1:{pa1}"), None).await;
    let s2 = start(Role::Shuffler, &db, format!("http://127.0.0.1:{pa2}"), None).await;
    let a1 = start(Role::Analyzer, &db, s1.url.clone(), Some(pa1)).await;
    let a2 = start(Role::Analyzer, &db, s1.url.clone(), Some(pa2)).await;
    let http = reqwest::Client::new();

    let mut req = loose(3, 40);
    req.budget_eps = 80.0;
    req.budget_delta = 1e-2;
    let resp = http
        .post(format!("{}/tasks", a1.url))
        .bearer_auth(ADMIN)
        .json(&req)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    let params: blanket_server::task::ClientParams = resp.json().await.unwrap();
    let id = params.task_id.clone();
    let client = std::sync::Arc::new(blanket_server::client::TaskClient::new(params).unwrap());

    // 800 reports, half through each shuffler, 16 at a time.
    const N: u64 = 800;
    let mut rng = SecureRng::from_os().unwrap();
    let mut set = tokio::task::JoinSet::new();
    let sem = std::sync::Arc::new(tokio::sync::Semaphore::new(16));
    for i in 0..N {
        let r = client.report((i % 3) as f64, &mut rng).unwrap();
        let url = format!(
            "{}/tasks/{id}/reports",
            if i % 2 == 0 { &s1.url } else { &s2.url }
        );
        let (h, permit) = (http.clone(), sem.clone().acquire_owned().await.unwrap());
        set.spawn(async move {
            let s = h.post(url).body(r).send().await.unwrap().status();
            drop(permit);
            s
        });
    }
    while let Some(s) = set.join_next().await {
        assert_eq!(s.unwrap(), 201);
    }

    // Wait until everything forwardable is at the analyzers: aggregated + pending = N with
    // fewer than min_batch pending.
    let t0 = Instant::now();
    let status = loop {
        let st: serde_json::Value = http
            .get(format!("{}/tasks/{id}/status", a2.url))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let intake: serde_json::Value = http
            .get(format!("{}/tasks/{id}/intake", s2.url))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let (rep, pend) = (
            st["reports"].as_u64().unwrap(),
            intake["pending"].as_u64().unwrap(),
        );
        if rep + pend == N && pend < 40 {
            assert_eq!(intake["accepted"], N);
            break st;
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "{st} {intake}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(
        status["duplicates"], 0,
        "a report reached the analyzers twice"
    );
    assert_eq!(status["rejected"], 0);
    let dup_batches = a1.analyzer.as_ref().unwrap().duplicate_batches()
        + a2.analyzer.as_ref().unwrap().duplicate_batches();
    assert_eq!(dup_batches, 0, "a batch was delivered twice");

    // Both analyzers release at once: exactly one release takes the batches.
    let (r1, r2) = tokio::join!(
        http.post(format!("{}/tasks/{id}/release", a1.url))
            .bearer_auth(ADMIN)
            .send(),
        http.post(format!("{}/tasks/{id}/release", a2.url))
            .bearer_auth(ADMIN)
            .send(),
    );
    let codes = [r1.unwrap().status().as_u16(), r2.unwrap().status().as_u16()];
    assert!(codes.contains(&201) && codes.contains(&409), "{codes:?}");
    let list: Vec<serde_json::Value> = http
        .get(format!("{}/tasks/{id}/releases", a1.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["reports"], status["reports"]);
    for r in [s1, s2, a1, a2] {
        r.stop().await;
    }
}
