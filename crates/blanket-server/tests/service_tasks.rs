//! End-to-end tests of the multi-message task types on loopback: the vector sum (t reports
//! per user) and the IKOS sum (m shares per client, each its own report). Real servers (both
//! roles in one process), real HTTP, SQLite always; PostgreSQL too when BLANKET_TEST_PG_URL is
//! set (skipped with a loud message otherwise).

mod common;

use blanket::rng::SecureRng;
use blanket_server::client::{ClientError, TaskClient};
use blanket_server::crypto;
use blanket_server::multi::IkosParams;
use blanket_server::task::{Protocol, TaskRequest};
use blanket_server::wire::{hex_decode, Report, Sealed, TaskId, CIPHERTEXT_LEN};
use blanket_server::{Role, Running, ServeConfig};
use common::temp_dir;
use sqlx::Connection;
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Svc {
    running: Running,
    dir: std::path::PathBuf,
}

impl Svc {
    async fn start(label: &str, pg: Option<&str>) -> Self {
        let dir = temp_dir(label);
        let db = match pg {
            Some(base) => fresh_database(base).await,
            None => format!("sqlite://{}", dir.join("db.sqlite").display()),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let running = blanket_server::start(
            ServeConfig {
                role: Role::All,
                db,
                peer_url: None,
                peer_token: Some("test-token".into()),
                admin_token: Some(common::ADMIN.into()),
                lease_seconds: None,
            },
            listener,
        )
        .await
        .unwrap();
        Self { running, dir }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.running.url)
    }

    async fn post_task(&self, req: &TaskRequest) -> reqwest::Response {
        reqwest::Client::new()
            .post(self.url("/tasks"))
            .bearer_auth(common::ADMIN)
            .json(req)
            .send()
            .await
            .unwrap()
    }

    async fn create(&self, req: TaskRequest) -> Arc<TaskClient> {
        let resp = self.post_task(&req).await;
        assert_eq!(resp.status(), 201, "{}", resp.text().await.unwrap());
        Arc::new(TaskClient::new(resp.json().await.unwrap()).unwrap())
    }

    async fn status(&self, id: &str, f: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
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
            assert!(t0.elapsed() < Duration::from_secs(60), "timed out: {v}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn release(&self, id: &str) -> serde_json::Value {
        let resp = reqwest::Client::new()
            .post(self.url(&format!("/tasks/{id}/release")))
            .bearer_auth(common::ADMIN)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 201, "{}", resp.text().await.unwrap());
        resp.json().await.unwrap()
    }

    async fn stop(self) {
        self.running.stop().await;
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn pg_url() -> Option<String> {
    match std::env::var("BLANKET_TEST_PG_URL") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            eprintln!(
                "!!! service_tasks: BLANKET_TEST_PG_URL not set, PostgreSQL part SKIPPED !!!"
            );
            None
        }
    }
}

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

fn request(protocol: Protocol, users: u64) -> TaskRequest {
    TaskRequest {
        protocol,
        eps: 1.0,
        delta: 1e-6,
        expected_users: users,
        min_batch: users,
        deadline_unix: blanket_server::http::now_unix() + 3600,
        budget_eps: 1.0,
        budget_delta: 1e-6,
    }
}

/// Uploads every user's reports (each user in one bulk upload), 16 users in flight.
async fn upload_users(client: &Arc<TaskClient>, users: Vec<Vec<Vec<u8>>>) {
    let http = reqwest::Client::new();
    let mut set = tokio::task::JoinSet::new();
    for chunk in users.chunks(users.len().div_ceil(16)) {
        let (c, h, chunk) = (client.clone(), http.clone(), chunk.to_vec());
        set.spawn(async move {
            for r in chunk {
                let n = r.len() as u64;
                let o = c.upload_user(&h, r).await.unwrap();
                assert_eq!(o.accepted, n);
            }
        });
    }
    while let Some(r) = set.join_next().await {
        r.unwrap();
    }
}

/// A report carrying an arbitrary message (what a faulty or malicious client could send).
fn forged(client: &TaskClient, message: u32) -> Vec<u8> {
    let p = client.params();
    let task = TaskId::parse(&p.task_id).unwrap();
    let pk = hex_decode(&p.hpke_public_key).unwrap();
    let mut rng = SecureRng::from_os().unwrap();
    let mut id = [0u8; 16];
    blanket::rng::RngCore::fill_bytes(&mut rng, &mut id);
    let (enc, ct) = crypto::seal(&pk, &task, &id, message, &mut rng).unwrap();
    let ct: [u8; CIPHERTEXT_LEN] = ct.try_into().unwrap();
    Report {
        task,
        id,
        sealed: Sealed { enc, ct },
    }
    .encode()
}

async fn vector_sum_flow(pg: Option<&str>) {
    let svc = Svc::start("vector", pg).await;
    let n = 1500u64;
    let client = svc
        .create(request(
            Protocol::VectorSum {
                d: 3,
                t: Some(2),
                k: None,
            },
            n,
        ))
        .await;
    let id = client.params().task_id.clone();
    assert_eq!(client.messages_per_user(), 2);
    let mut rng = SecureRng::from_os().unwrap();
    // User i holds (0.2, 0.8, i mod 2): the mean vector is (0.2, 0.8, 0.5).
    let rows: Vec<[f64; 3]> = (0..n).map(|i| [0.2, 0.8, (i % 2) as f64]).collect();
    let users: Vec<Vec<Vec<u8>>> = rows
        .iter()
        .map(|x| client.reports(x, &mut rng).unwrap())
        .collect();
    assert!(users.iter().all(|u| u.len() == 2));
    // A replay of user 0's upload (same report ids), held back until after the batch.
    let replay = users[0].clone();
    upload_users(&client, users).await;
    let st = svc.status(&id, |v| v["reports"] == 2 * n).await;
    assert_eq!(st["rejected"], 0);
    let o = client
        .upload_user(&reqwest::Client::new(), replay)
        .await
        .unwrap();
    assert_eq!((o.accepted, o.duplicates), (0, 2), "replay counted once");

    let rel = svc.release(&id).await;
    assert_eq!(rel["reports"], 2 * n);
    assert_eq!(rel["estimate"]["users"], n);
    let mean: Vec<f64> = rel["estimate"]["mean"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    // predicted_mse bounds the mean vector's MSE summed over coordinates, so its root bounds
    // each coordinate's RMSE; 6 of it fails with probability < 1e-8 per coordinate.
    let rmse = rel["predicted_rmse"].as_f64().unwrap();
    for (j, want) in [0.2, 0.8, 0.5].iter().enumerate() {
        assert!(
            (mean[j] - want).abs() < 6.0 * rmse,
            "coordinate {j}: {mean:?}, rmse {rmse}"
        );
    }
    assert!(rmse < 0.1, "rmse {rmse}");
    let g = &rel["guarantee"];
    assert!(g["epsilon"].as_f64().unwrap() <= 1.0 && g["delta"].as_f64().unwrap() <= 1e-6);
    assert!(rel["budget"]["spent_eps"].as_f64().unwrap() >= g["epsilon"].as_f64().unwrap());

    // The status page shows the task and its mean-vector chart.
    let page = reqwest::get(svc.url("/"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("vector-sum") && page.contains("estimated mean vector"));
    svc.stop().await;
}

async fn ikos_sum_flow(pg: Option<&str>) {
    let svc = Svc::start("ikos", pg).await;
    let n = 400u64;
    let client = svc
        .create(request(
            Protocol::IkosSum {
                sigma: None,
                calibrated: None,
            },
            n,
        ))
        .await;
    let id = client.params().task_id.clone();
    let (sigma, c) = match client.params().protocol {
        Protocol::IkosSum {
            sigma: Some(s),
            calibrated: Some(c),
        } => (s, c),
        p => panic!("{p:?}"),
    };
    let m = u64::from(c.shares);
    assert!(m >= 2 && c.modulus_bits <= 32 && c.honest == n);
    let delta = (1.0 + 1f64.exp()) * 2f64.powi(-(sigma as i32));
    assert!(
        delta <= 1e-6 && 2.0 * delta > 1e-6,
        "smallest sigma: {sigma}"
    );
    let mut rng = SecureRng::from_os().unwrap();
    // Client i holds i / (n - 1): the sum is n / 2.
    let users: Vec<Vec<Vec<u8>>> = (0..n)
        .map(|i| {
            client
                .reports(&[i as f64 / (n - 1) as f64], &mut rng)
                .unwrap()
        })
        .collect();
    assert!(users.iter().all(|u| u.len() as u64 == m));
    let replay = users[7].clone();
    upload_users(&client, users).await;
    let st = svc.status(&id, |v| v["reports"] == n * m).await;
    assert_eq!(st["rejected"], 0);
    assert_eq!(st["batches"], 1);
    // The same client's shares again: all duplicates, counted once.
    let o = client
        .upload_user(&reqwest::Client::new(), replay)
        .await
        .unwrap();
    assert_eq!((o.accepted, o.duplicates), (0, m));

    let rel = svc.release(&id).await;
    assert_eq!(rel["estimate"]["users"], n);
    let sum = rel["estimate"]["sum"].as_f64().unwrap();
    let rmse = rel["predicted_rmse"].as_f64().unwrap();
    // predicted MSE = (n/4 + 2 alpha / (1 - alpha)^2) / p^2, about 2 / eps^2 = 2 here.
    assert!(rmse > 1.0 && rmse < 2.0, "rmse {rmse}");
    assert!(
        (sum - n as f64 / 2.0).abs() < 6.0 * rmse,
        "sum {sum}, rmse {rmse}"
    );
    let g = &rel["guarantee"];
    assert_eq!(g["epsilon"].as_f64().unwrap(), 1.0);
    assert!(g["delta"].as_f64().unwrap() >= delta && g["delta"].as_f64().unwrap() <= 1e-6);
    assert_eq!(g["method"], "ikos-split-and-mix");
    assert_eq!(rel["budget"]["spent_delta"], g["delta"]);
    let page = reqwest::get(svc.url("/"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("ikos-sum") && page.contains("estimated sum"));
    svc.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vector_sum_end_to_end() {
    vector_sum_flow(None).await;
    if let Some(pg) = pg_url() {
        vector_sum_flow(Some(&pg)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ikos_sum_end_to_end() {
    ikos_sum_flow(None).await;
    if let Some(pg) = pg_url() {
        ikos_sum_flow(Some(&pg)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_parameters_and_values_are_refused_by_field() {
    let svc = Svc::start("multi-bad", None).await;
    let refused = |field: &'static str, req: TaskRequest| {
        let svc = &svc;
        async move {
            let resp = svc.post_task(&req).await;
            assert_eq!(resp.status(), 422, "{field}");
            let p: serde_json::Value = resp.json().await.unwrap();
            assert_eq!(p["reason"], "out-of-range", "{p}");
            assert!(
                p["detail"].as_str().unwrap().starts_with(field),
                "{field}: {p}"
            );
        }
    };
    let vector = |d, t, k| Protocol::VectorSum { d, t, k };
    refused("d", request(vector(0, None, None), 1000)).await;
    refused("t", request(vector(3, Some(4), None), 1000)).await;
    refused("k", request(vector(3, Some(1), Some(0)), 1000)).await;
    let ikos = |sigma| Protocol::IkosSum {
        sigma,
        calibrated: None,
    };
    refused("sigma", request(ikos(Some(600)), 1000)).await;
    refused("sigma", request(ikos(Some(10)), 1000)).await; // delta above the target
    refused("min_batch", request(ikos(None), 600_000)).await;
    let preset = Protocol::IkosSum {
        sigma: None,
        calibrated: Some(IkosParams {
            users: 10,
            honest: 10,
            modulus_bits: 8,
            shares: 2,
            precision: 4,
        }),
    };
    refused("calibrated", request(preset, 1000)).await;
    // A vector-sum protocol object without d is malformed JSON for the API (typed 4xx).
    let resp = reqwest::Client::new()
        .post(svc.url("/tasks"))
        .bearer_auth(common::ADMIN)
        .header("content-type", "application/json")
        .body(r#"{"protocol":{"kind":"vector-sum"},"eps":1,"delta":1e-6,"expected_users":100,"min_batch":100,"deadline_unix":99999999999,"budget_eps":1,"budget_delta":1e-6}"#)
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_client_error(), "{}", resp.status());

    // Values: the client refuses a wrong dimension or a coordinate outside [0, 1] with an
    // error naming `value`, before anything is sent.
    let client = svc
        .create(TaskRequest {
            eps: 8.0,
            delta: 1e-3,
            budget_eps: 8.0,
            budget_delta: 1e-3,
            ..request(vector(3, Some(1), Some(1)), 100)
        })
        .await;
    let mut rng = SecureRng::from_os().unwrap();
    for bad in [&[0.1, 0.2][..], &[0.1, 0.2, 1.5], &[0.1, f64::NAN, 0.2]] {
        match client.reports(bad, &mut rng) {
            Err(ClientError::Value(e)) => assert!(e.to_string().starts_with("value"), "{e}"),
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    let ik = svc
        .create(TaskRequest {
            eps: 8.0,
            delta: 1e-3,
            budget_eps: 8.0,
            budget_delta: 1e-3,
            ..request(ikos(None), 100)
        })
        .await;
    for bad in [&[1.5][..], &[-0.1], &[0.1, 0.2]] {
        match ik.reports(bad, &mut rng) {
            Err(ClientError::Value(e)) => assert!(e.to_string().starts_with("value"), "{e}"),
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    // A malformed bulk body (not a multiple of the report length) is a typed 4xx.
    let http = reqwest::Client::new();
    let mut body = ik.reports(&[0.5], &mut rng).unwrap().concat();
    body.pop();
    let resp = http
        .post(format!("{}/bulk", ik.params().upload_url))
        .header("content-type", "application/octet-stream")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    let p: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(p["reason"], "wrong-length", "{p}");
    // An upload must hold whole users (a multiple of m shares): one share alone, or a user's
    // shares with one more, is refused naming the field; two whole users are accepted.
    let user = ik.reports(&[0.5], &mut rng).unwrap();
    let m = user.len();
    assert!(m >= 2);
    let mut extra = user.clone();
    extra.push(ik.reports(&[0.5], &mut rng).unwrap()[0].clone());
    for (what, resp) in [
        ("one share", ik.upload(&http, user[0].clone()).await),
        (
            "m + 1 shares",
            ik.upload_bulk(&http, &extra).await.map(|_| ()),
        ),
    ] {
        match resp {
            Err(ClientError::Rejected(p)) => {
                assert_eq!(p.status, 422, "{what}: {p:?}");
                assert_eq!(p.reason, "out-of-range", "{what}: {p:?}");
                assert!(
                    p.detail.contains("reports in one upload")
                        && p.detail.contains(&format!("multiple of {m}")),
                    "{what}: {}",
                    p.detail
                );
            }
            other => panic!("{what}: {other:?}"),
        }
    }
    let mut two = user;
    two.extend(ik.reports(&[0.25], &mut rng).unwrap());
    let o = ik.upload_bulk(&http, &two).await.unwrap();
    assert_eq!(o.accepted, 2 * m as u64);

    // Messages the shuffler cannot read but the analyzer refuses: 99 honest users and one
    // forged message outside the domain (coordinate 3 of d = 3; k = 1, two levels) fill the
    // batch of 100; the forged one is counted as rejected, never absorbed.
    let mut users: Vec<Vec<Vec<u8>>> = (0..99)
        .map(|_| client.reports(&[0.5, 0.5, 0.5], &mut rng).unwrap())
        .collect();
    users.push(vec![forged(&client, 3 * 2)]);
    upload_users(&client, users).await;
    let id = client.params().task_id.clone();
    let st = svc.status(&id, |v| v["batches"] == 1).await;
    assert_eq!(st["rejected"], 1, "{st}");
    assert_eq!(st["reports"], 99, "{st}");
    // An IKOS share outside Z_q is rejected the same way (100 clients fill the batch, with
    // the two whole users uploaded above).
    let Protocol::IkosSum {
        calibrated: Some(c),
        ..
    } = ik.params().protocol
    else {
        panic!("{:?}", ik.params().protocol)
    };
    assert!(c.modulus_bits < 32);
    let mut users: Vec<Vec<Vec<u8>>> = (0..100)
        .map(|_| ik.reports(&[0.5], &mut rng).unwrap())
        .collect();
    // The forged share travels as one of a whole user's m shares (the shuffler takes
    // uploads of whole users only).
    let mut bad_user = ik.reports(&[0.5], &mut rng).unwrap();
    bad_user[0] = forged(&ik, 1 << c.modulus_bits);
    users.push(bad_user);
    upload_users(&ik, users).await;
    let id = ik.params().task_id.clone();
    let st = svc.status(&id, |v| v["batches"] == 1).await;
    assert_eq!(st["rejected"], 1, "{st}");
    svc.stop().await;
}
