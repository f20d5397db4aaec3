//! The relay's releases on the release ledger (docs/service.md, "Budget"; docs/protocol.md,
//! "Over the network"): a relay task with a protocol holds a privacy budget; each delivered
//! run's release is charged to it through the analyzer's ledger (`Store::charge_ledger`,
//! table `analyzer_releases`), another run of the collection (`continues`) is charged to the
//! same budget, a release past it is refused (`budget-exhausted`, the run's output kept and
//! its messages withheld), a restart replays the runs without charging twice, and bad budget
//! fields are refused at creation naming the field. Also: the served OpenAPI description
//! names every relay route.

mod common;

use blanket_protocol::driver::{SimConfig, ALL_BEHAVIOURS};
use blanket_server::relay::api::{Credential, TaskSpec, TaskStatus};
use blanket_server::relay::client::{self, ClientOptions, RelayClientError};
use blanket_server::relay::{release, routes};
use blanket_server::Running;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

fn temp_dir(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "blanket-relay-budget-{label}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn db_url(dir: &Path) -> String {
    format!("sqlite://{}", dir.join("relay.sqlite").display())
}

async fn relay(db: &str) -> Running {
    common::relay_on(db).await
}

fn opts() -> ClientOptions {
    common::relay_client_options()
}

fn histogram_spec(n: u32, seed: u64) -> TaskSpec {
    common::relay_histogram_spec(n, seed)
}

async fn status(base: &str, task: &str) -> TaskStatus {
    client::Connection::new(base, task, opts())
        .unwrap()
        .status()
        .await
        .unwrap()
}

/// Runs the simulated clients of `task` (created with `sim_seed` = `seed`) to the end.
async fn run(
    base: &str,
    task: &str,
    creds: &[Credential],
    spec: &TaskSpec,
    seed: u64,
) -> TaskStatus {
    let st = status(base, task).await;
    let rz = st.randomizer.clone().unwrap();
    let params = spec.params().unwrap();
    let inputs = release::simulated_inputs(&rz, spec.clients, seed).unwrap();
    let cfg = SimConfig::random(
        params,
        params.max_dropouts,
        params.max_malicious,
        &ALL_BEHAVIOURS,
        inputs,
        seed,
    );
    let r = client::simulate(
        base,
        task,
        creds,
        &cfg,
        opts(),
        Arc::new(AtomicUsize::new(0)),
    )
    .await
    .unwrap();
    assert!(r.status.delivered, "{:?}", r.status.error);
    r.status
}

/// `a` and `b` have the same JSON, numbers within 1e-12 relative (JSON float parsing is not
/// bit-exact).
fn same<T: serde::Serialize + std::fmt::Debug>(a: &T, b: &T) {
    fn walk(a: &serde_json::Value, b: &serde_json::Value) -> bool {
        use serde_json::Value as V;
        match (a, b) {
            (V::Number(x), V::Number(y)) => {
                let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
                (x - y).abs() <= 1e-12 * x.abs().max(1.0)
            }
            (V::Array(x), V::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(x, y)| walk(x, y))
            }
            (V::Object(x), V::Object(y)) => {
                x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| walk(v, w)))
            }
            _ => a == b,
        }
    }
    let (ja, jb) = (
        serde_json::to_value(a).unwrap(),
        serde_json::to_value(b).unwrap(),
    );
    assert!(walk(&ja, &jb), "{a:?}\n!=\n{b:?}");
}

async fn page(base: &str) -> String {
    reqwest::get(format!("{base}/"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// The ledger rows of the database (every task): (task id, epsilon, delta).
async fn ledger_rows(db: &str) -> Vec<(Vec<u8>, f64, f64)> {
    let pool = sqlx::SqlitePool::connect(db).await.unwrap();
    let rows: Vec<(Vec<u8>, f64, f64)> =
        sqlx::query_as("SELECT task_id, epsilon, delta FROM analyzer_releases ORDER BY release_id")
            .fetch_all(&pool)
            .await
            .unwrap();
    pool.close().await;
    rows
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn second_release_past_the_budget_is_refused_and_a_restart_charges_nothing_twice() {
    let dir = temp_dir("second");
    let db = db_url(&dir);
    let server = relay(&db).await;
    // Budget eps 3: one release (certified eps <= 2, calibrated close to it) fits, two do not.
    let spec_a = TaskSpec {
        budget_eps: Some(3.0),
        budget_delta: Some(1e-2),
        ..histogram_spec(30, 21)
    };
    let created_a = client::create(&server.url, &spec_a, Some(common::ADMIN))
        .await
        .unwrap();
    let a = created_a.status.task.clone();
    let st_a = status(&server.url, &a).await;
    assert_eq!(st_a.spec.budget_eps, Some(3.0));
    let b0 = st_a
        .budget
        .clone()
        .expect("a task with a protocol has a budget");
    assert_eq!((b0.task.as_str(), b0.releases), (a.as_str(), 0));
    assert_eq!((b0.spent_eps, b0.remaining_eps), (0.0, 3.0));
    // Another run of the same collection, charged to A's budget; created before A released
    // (when its release still fits).
    let spec_b = TaskSpec {
        continues: Some(a.clone()),
        ..histogram_spec(30, 22)
    };
    let created_b = client::create(&server.url, &spec_b, Some(common::ADMIN))
        .await
        .unwrap();
    let b = created_b.status.task.clone();
    let st_b = status(&server.url, &b).await;
    assert_eq!(st_b.spec.continues.as_deref(), Some(a.as_str()));
    assert_eq!(st_b.budget.as_ref().unwrap().task, a);
    assert_eq!(st_b.spec.budget_eps, None);

    // Run A: released and charged (certified eps, certified delta + 2^-sigma).
    let st_a = run(&server.url, &a, &created_a.credentials, &spec_a, 21).await;
    let rel_a = st_a.release.clone().expect("A's release is charged");
    assert!(st_a.release_refused.is_none());
    assert!(
        rel_a.certified_epsilon > 1.5 && rel_a.certified_epsilon <= 2.0,
        "{}",
        rel_a.certified_epsilon
    );
    let charged = rel_a
        .budget
        .expect("the release states the budget after it");
    assert_eq!(charged.spent_eps, rel_a.certified_epsilon);
    // (1e-15: JSON float parsing is not bit-exact.)
    let one = rel_a.certified_delta + rel_a.shuffle_failure;
    assert!(
        (charged.spent_delta - one).abs() <= 1e-15,
        "{}",
        charged.spent_delta
    );
    let ledger = st_a.budget.clone().unwrap();
    assert_eq!(ledger.releases, 1);
    assert_eq!(ledger.spent_eps, rel_a.certified_epsilon);
    assert!(ledger.remaining_eps <= 3.0 - rel_a.certified_epsilon);
    let out_a = st_a.output.clone().unwrap();
    assert!(!out_a.messages_withheld);
    assert_eq!(
        out_a.messages.len() as u64,
        rel_a.reports + rel_a.out_of_domain as u64
    );

    // A third run is refused at creation: its release no longer fits what is left.
    match client::create_task(
        &server.url,
        &TaskSpec {
            continues: Some(a.clone()),
            ..histogram_spec(30, 23)
        },
        Some(common::ADMIN),
    )
    .await
    {
        Err(RelayClientError::Refused(p)) => {
            assert_eq!((p.reason.as_str(), p.status), ("budget-exhausted", 409))
        }
        other => panic!("not refused: {other:?}"),
    }

    // Run B: delivered, its release refused with a typed reason; output kept, messages
    // withheld; nothing charged.
    let st_b = run(&server.url, &b, &created_b.credentials, &spec_b, 22).await;
    assert!(st_b.release.is_none());
    let refused = st_b
        .release_refused
        .clone()
        .expect("B's release is refused");
    assert_eq!(
        (refused.reason.as_str(), refused.status),
        ("budget-exhausted", 409)
    );
    assert_eq!(refused.problem_type, "urn:blanket:problem:budget-exhausted");
    let out_b = st_b.output.clone().unwrap();
    assert!(out_b.messages_withheld && out_b.messages.is_empty());
    assert!(!out_b.accepted_clients.is_empty());
    assert_eq!(st_b.budget.as_ref().unwrap().releases, 1);
    assert_eq!(ledger_rows(&db).await.len(), 1);

    // The status page: both runs, the budget spent and left, A's release with its chart,
    // B's refusal.
    let html = page(&server.url).await;
    assert!(html.contains(&a) && html.contains(&b));
    assert!(html.contains("eps spent / budget") && html.contains("eps left"));
    assert!(html.contains(&format!("id=\"refused-{b}\"")), "{html}");
    assert!(html.contains("Release refused (budget-exhausted)"));
    assert_eq!(html.matches("class=\"bar\"").count(), 4);
    server.stop().await;

    // Restart on the same database: the runs are replayed, nothing is charged twice, the
    // release and the refusal are the same.
    let server = relay(&db).await;
    let st_a2 = status(&server.url, &a).await;
    let st_b2 = status(&server.url, &b).await;
    same(&st_a2.release, &st_a.release);
    assert_eq!(st_a2.budget, st_a.budget);
    assert_eq!(st_b2.release_refused, st_b.release_refused);
    assert!(st_b2.release.is_none());
    assert_eq!(ledger_rows(&db).await.len(), 1);
    server.stop().await;

    // A process killed after the run's last log write and before the charge committed:
    // (simulated by removing A's settlement and ledger row): the restart charges A once.
    {
        let pool = sqlx::SqlitePool::connect(&db).await.unwrap();
        sqlx::query("DELETE FROM relay_releases WHERE release_id IS NOT NULL")
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query("DELETE FROM analyzer_releases")
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
    }
    for _ in 0..2 {
        let server = relay(&db).await;
        let st = status(&server.url, &a).await;
        let rel = st.release.expect("charged again after the lost charge");
        same(&rel.estimate, &rel_a.estimate);
        same(&rel.certified_epsilon, &rel_a.certified_epsilon);
        assert_eq!(st.budget.unwrap().releases, 1);
        let st_b = status(&server.url, &b).await;
        assert_eq!(st_b.release_refused, st_b2.release_refused);
        let rows = ledger_rows(&db).await;
        assert_eq!(rows.len(), 1, "{rows:?}");
        same(&rows[0].1, &rel_a.certified_epsilon);
        server.stop().await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_budget_fields_are_refused_naming_the_field() {
    let server = relay("sqlite::memory:").await;
    let base = histogram_spec(30, 31);
    let plain = client::create_task(&server.url, &TaskSpec::new(20), Some(common::ADMIN))
        .await
        .unwrap();
    let holder = client::create_task(&server.url, &base, Some(common::ADMIN))
        .await
        .unwrap();
    // The defaults: one release.
    let st = status(&server.url, &holder).await;
    assert_eq!(st.spec.budget_eps, Some(2.0));
    let d = st.spec.budget_delta.unwrap();
    assert!(d >= 1e-3 + 2f64.powi(-40) && d <= (1e-3 + 2f64.powi(-40)).next_up());
    let cases: Vec<(TaskSpec, u16, &str)> = vec![
        (
            TaskSpec {
                budget_eps: Some(1.5),
                ..base.clone()
            },
            422,
            "budget_eps",
        ),
        (
            TaskSpec {
                budget_eps: Some(-1.0),
                ..base.clone()
            },
            422,
            "budget_eps",
        ),
        (
            TaskSpec {
                budget_delta: Some(1e-3),
                ..base.clone()
            },
            422,
            "budget_delta",
        ),
        (
            TaskSpec {
                budget_delta: Some(1.0),
                ..base.clone()
            },
            422,
            "budget_delta",
        ),
        (
            TaskSpec {
                budget_eps: Some(3.0),
                ..TaskSpec::new(20)
            },
            422,
            "budget_eps",
        ),
        (
            TaskSpec {
                continues: Some(holder.clone()),
                ..TaskSpec::new(20)
            },
            422,
            "continues",
        ),
        (
            TaskSpec {
                continues: Some(holder.clone()),
                budget_eps: Some(4.0),
                ..histogram_spec(30, 32)
            },
            422,
            "budget_eps",
        ),
        (
            TaskSpec {
                continues: Some("00".repeat(16)),
                ..histogram_spec(30, 33)
            },
            422,
            "continues",
        ),
        (
            TaskSpec {
                continues: Some("not hex".into()),
                ..histogram_spec(30, 34)
            },
            422,
            "continues",
        ),
        (
            TaskSpec {
                continues: Some(plain.clone()),
                ..histogram_spec(30, 35)
            },
            422,
            "continues",
        ),
    ];
    for (spec, code, field) in cases {
        match client::create_task(&server.url, &spec, Some(common::ADMIN)).await {
            Err(RelayClientError::Refused(p)) => {
                assert_eq!(p.reason, "out-of-range", "{spec:?}: {}", p.detail);
                assert_eq!(p.status, code, "{spec:?}");
                assert!(p.detail.starts_with(field), "{spec:?}: {}", p.detail);
            }
            other => panic!("{spec:?} was not refused: {other:?}"),
        }
    }
    // Malformed JSON for a budget field: refused as malformed, naming it.
    let r = reqwest::Client::new()
        .post(format!("{}/relay/tasks", server.url))
        .bearer_auth(common::ADMIN)
        .header("content-type", "application/json")
        .body(r#"{"clients": 30, "protocol": "histogram", "domain": 4, "eps": 2, "delta": 0.001, "budget_eps": "lots"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let p: serde_json::Value = r.json().await.unwrap();
    assert_eq!(p["reason"], "malformed");
    assert!(p["detail"].as_str().unwrap().contains("budget_eps"), "{p}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_relay_route_is_served_and_described() {
    let server = relay("sqlite::memory:").await;
    let api: serde_json::Value = reqwest::get(format!("{}/openapi.json", server.url))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(api["openapi"].as_str().unwrap().starts_with("3."));
    let http = reqwest::Client::new();
    let task = "00".repeat(16);
    for (method, path) in routes::ROUTES {
        let op = &api["paths"][path][method];
        assert!(op.is_object(), "{method} {path} not described");
        // Every refusal the route can answer is an RFC 9457 problem.
        if let Some(responses) = op["responses"].as_object() {
            for (code, r) in responses {
                if code.starts_with('4') || code.starts_with('5') {
                    assert_eq!(
                        r["$ref"], "#/components/responses/Problem",
                        "{method} {path} {code}"
                    );
                }
            }
        }
        // Served by the relay role: the route exists (a refusal of its input, not a
        // not-found or method-not-allowed of the route).
        let url = format!(
            "{}{}",
            server.url,
            path.replace("{task}", &task).replace("{client}", "0")
        );
        let req = match method {
            "get" => http.get(&url),
            "post" => http.post(&url).body("{}"),
            m => panic!("method {m}"),
        };
        let resp = req.send().await.unwrap();
        let code = resp.status().as_u16();
        let body = resp.text().await.unwrap();
        assert!(
            !body.contains("\"reason\":\"not-found\"")
                && !body.contains("\"reason\":\"method-not-allowed\"")
                && code != 405,
            "{method} {path}: {code} {body}"
        );
    }
    // The relay's problem types are listed.
    let reasons = api["components"]["schemas"]["Problem"]["properties"]["reason"]["enum"]
        .as_array()
        .unwrap()
        .clone();
    for r in [
        "budget-exhausted",
        "bad-signature",
        "replay",
        "run-over",
        "not-started",
    ] {
        assert!(reasons.iter().any(|x| x == r), "{r} not listed");
    }
    server.stop().await;
}
