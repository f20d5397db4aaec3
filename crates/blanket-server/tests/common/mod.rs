//! Shared helpers: an in-process service (both roles) on loopback over a temporary SQLite file.

#![allow(dead_code)]

use blanket_server::client::TaskClient;
use blanket_server::task::{Protocol, TaskRequest};
use blanket_server::wire::TaskId;
use blanket_server::{Role, Running, ServeConfig};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The admin token of the test services (task create and release).
pub const ADMIN: &str = "test-admin-token";

pub struct Service {
    pub running: Running,
    pub dir: std::path::PathBuf,
}

static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

pub fn temp_dir(label: &str) -> std::path::PathBuf {
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "blanket-server-test-{label}-{}-{n}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

impl Service {
    pub async fn start(label: &str) -> Self {
        let dir = temp_dir(label);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let running = blanket_server::start(
            ServeConfig {
                role: Role::All,
                db: format!("sqlite://{}", dir.join("db.sqlite").display()),
                peer_url: None,
                peer_token: Some("test-token".into()),
                admin_token: Some(ADMIN.into()),
                lease_seconds: None,
            },
            listener,
        )
        .await
        .unwrap();
        Self { running, dir }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.running.url)
    }

    pub async fn create(&self, req: TaskRequest) -> Arc<TaskClient> {
        let resp = reqwest::Client::new()
            .post(self.url("/tasks"))
            .bearer_auth(ADMIN)
            .json(&req)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 201, "{}", resp.text().await.unwrap());
        Arc::new(TaskClient::new(resp.json().await.unwrap()).unwrap())
    }

    /// Polls the task status until `f` holds (at most 30 s).
    pub async fn wait_status(
        &self,
        id: &str,
        f: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        let t0 = Instant::now();
        loop {
            let v: serde_json::Value = reqwest::get(self.url(&format!("/tasks/{id}/status")))
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            if f(&v) {
                return v;
            }
            assert!(t0.elapsed() < Duration::from_secs(30), "timed out: {v}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub async fn stop(self) {
        self.running.stop().await;
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn histogram(domain: u64, min_batch: u64) -> TaskRequest {
    TaskRequest {
        protocol: Protocol::Histogram { domain },
        eps: 1.0,
        delta: 1e-6,
        expected_users: min_batch,
        min_batch,
        deadline_unix: blanket_server::http::now_unix() + 3600,
        budget_eps: 1.0,
        budget_delta: 1e-6,
    }
}

pub fn id_of(c: &TaskClient) -> TaskId {
    TaskId::parse(&c.params().task_id).unwrap()
}

/// A task small batches can certify: eps 8, delta 1e-3 (for tests of mechanics, not utility).
pub fn loose(domain: u64, min_batch: u64) -> TaskRequest {
    TaskRequest {
        eps: 8.0,
        delta: 1e-3,
        budget_eps: 8.0,
        budget_delta: 1e-3,
        ..histogram(domain, min_batch)
    }
}

/// A fresh database on the PostgreSQL test cluster (`BLANKET_TEST_PG_URL`, set by
/// scripts/test.d/setup-postgres.sh), or `None` with a loud message when it is not set.
pub async fn pg_database(label: &str) -> Option<String> {
    use sqlx::Connection;
    let base = match std::env::var("BLANKET_TEST_PG_URL") {
        Ok(u) if !u.is_empty() => u,
        _ => {
            eprintln!(
                "\n!!! SKIPPED ({label}): the PostgreSQL part needs BLANKET_TEST_PG_URL \
                 (scripts/test sources scripts/test.d/setup-postgres.sh, which sets it) !!!\n"
            );
            return None;
        }
    };
    let mut c = sqlx::PgConnection::connect(&base).await.unwrap();
    let mut b = [0u8; 8];
    blanket::rng::RngCore::fill_bytes(&mut blanket::rng::SecureRng::from_os().unwrap(), &mut b);
    let name = format!("blanket_{label}_{}", blanket_server::wire::hex_encode(&b));
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&mut c)
        .await
        .unwrap();
    let (prefix, _) = base.rsplit_once('/').unwrap();
    Some(format!("{prefix}/{name}"))
}

/// A relay role (`blanket serve --role relay`) in this process on 127.0.0.1, over `db`.
pub async fn relay_on(db: &str) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    blanket_server::start(
        ServeConfig {
            role: Role::Relay,
            db: db.into(),
            peer_url: None,
            peer_token: None,
            admin_token: Some(ADMIN.into()),
            lease_seconds: None,
        },
        listener,
    )
    .await
    .unwrap()
}

/// Relay client options for the release tests: long polls, generous request timeouts.
pub fn relay_client_options() -> blanket_server::relay::client::ClientOptions {
    blanket_server::relay::client::ClientOptions {
        poll_wait_ms: 10_000,
        request_timeout_ms: 120_000,
        ..Default::default()
    }
}

/// A relay histogram task of `n` simulated clients (5% dropouts, 5% malicious; domain 4,
/// eps 2, delta 1e-3) with the simulation seed `seed`.
pub fn relay_histogram_spec(n: u32, seed: u64) -> blanket_server::relay::api::TaskSpec {
    blanket_server::relay::api::TaskSpec {
        alpha: 0.05,
        gamma: 0.05,
        round_timeout_ms: 30_000,
        sim_seed: Some(seed),
        protocol: Some("histogram".into()),
        domain: Some(4),
        eps: Some(2.0),
        delta: Some(1e-3),
        ..blanket_server::relay::api::TaskSpec::new(n)
    }
}
