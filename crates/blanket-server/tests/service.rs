//! End-to-end tests of the service on loopback: real servers (both roles in one process),
//! real HTTP, a real SQLite file.

mod common;

use blanket::rng::SecureRng;
use blanket_server::task::Protocol;
use blanket_server::wire::{Report, REPORT_LEN};
use common::{histogram, loose, Service};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn end_to_end_release_and_budget() {
    let svc = Service::start("e2e").await;
    let mut req = histogram(4, 300);
    req.budget_eps = 1.5; // one release fits, a second does not
    req.budget_delta = 2e-6;
    let client = svc.create(req).await;
    let id = client.params().task_id.clone();
    let http = reqwest::Client::new();
    let mut rng = SecureRng::from_os().unwrap();
    // 300 users, all holding category 2.
    for _ in 0..300 {
        let r = client.report(2.0, &mut rng).unwrap();
        client.upload(&http, r).await.unwrap();
    }
    let st = svc.wait_status(&id, |v| v["reports"] == 300).await;
    assert_eq!(st["batches"], 1);
    assert_eq!(st["rejected"], 0);
    let resp = http
        .post(svc.url(&format!("/tasks/{id}/release")))
        .bearer_auth(common::ADMIN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    let rel: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(rel["reports"], 300);
    let counts: Vec<f64> = rel["estimate"]["counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    // Unbiased; the predicted RMSE per count bounds the error (6 sigma: fails with
    // probability < 1e-8 per count).
    let rmse = rel["predicted_rmse"].as_f64().unwrap();
    assert!(
        (counts[2] - 300.0).abs() < 6.0 * rmse,
        "{counts:?} rmse {rmse}"
    );
    assert!(rel["guarantee"]["epsilon"].as_f64().unwrap() <= 1.0);
    assert!(
        rel["budget"]["spent_eps"].as_f64().unwrap()
            >= rel["guarantee"]["epsilon"].as_f64().unwrap()
    );

    // Nothing new: a second release is refused with a typed reason.
    let resp = http
        .post(svc.url(&format!("/tasks/{id}/release")))
        .bearer_auth(common::ADMIN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 409);
    let p: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(p["reason"], "nothing-to-release");

    // A second round of 300: the release would exceed the budget and is refused; nothing is
    // released and the batch stays unreleased.
    for _ in 0..300 {
        let r = client.report(1.0, &mut rng).unwrap();
        client.upload(&http, r).await.unwrap();
    }
    svc.wait_status(&id, |v| v["reports"] == 600).await;
    let resp = http
        .post(svc.url(&format!("/tasks/{id}/release")))
        .bearer_auth(common::ADMIN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 409);
    let p: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(p["reason"], "budget-exhausted");
    let st = svc.wait_status(&id, |_| true).await;
    assert_eq!(st["releases"], 1);
    assert_eq!(st["unreleased"], 300);
    let list: Vec<serde_json::Value> = http
        .get(svc.url(&format!("/tasks/{id}/releases")))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["release_id"], rel["release_id"]);
    svc.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scalar_sum_end_to_end() {
    let svc = Service::start("sum").await;
    let mut req = histogram(2, 400);
    req.protocol = Protocol::ScalarSum { k: None };
    let client = svc.create(req).await;
    let id = client.params().task_id.clone();
    let http = reqwest::Client::new();
    let mut rng = SecureRng::from_os().unwrap();
    for i in 0..400 {
        let r = client
            .report(if i % 2 == 0 { 0.25 } else { 0.75 }, &mut rng)
            .unwrap();
        client.upload(&http, r).await.unwrap();
    }
    svc.wait_status(&id, |v| v["reports"] == 400).await;
    let rel: serde_json::Value = http
        .post(svc.url(&format!("/tasks/{id}/release")))
        .bearer_auth(common::ADMIN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let sum = rel["estimate"]["sum"]
        .as_f64()
        .unwrap_or_else(|| panic!("{rel}"));
    let rmse = rel["predicted_rmse"].as_f64().unwrap();
    assert!((sum - 200.0).abs() < 6.0 * rmse, "sum {sum} rmse {rmse}");
    svc.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_counts_once() {
    let svc = Service::start("replay").await;
    let client = svc.create(loose(3, 3)).await;
    let id = client.params().task_id.clone();
    let http = reqwest::Client::new();
    let mut rng = SecureRng::from_os().unwrap();
    let report = client.report(1.0, &mut rng).unwrap();
    // Eight copies at once: exactly one is accepted.
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let (c, h, r) = (client.clone(), http.clone(), report.clone());
        set.spawn(async move { c.upload(&h, r).await });
    }
    let (mut ok, mut dup) = (0, 0);
    while let Some(r) = set.join_next().await {
        match r.unwrap() {
            Ok(()) => ok += 1,
            Err(blanket_server::client::ClientError::Rejected(p)) => {
                assert_eq!((p.reason.as_str(), p.status), ("duplicate", 409));
                dup += 1;
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!((ok, dup), (1, 7));
    // Later: still refused.
    let later = client.upload(&http, report.clone()).await;
    assert!(
        matches!(later, Err(blanket_server::client::ClientError::Rejected(ref p)) if p.reason == "duplicate")
    );
    // The same sealed message under a fresh report id passes the shuffler but does not open
    // at the analyzer (the seal binds the report id): rejected, never counted twice.
    let mut same = Report::decode(&report).unwrap();
    same.id = [0xee; 16];
    client.upload(&http, same.encode()).await.unwrap();
    let other = client.report(0.0, &mut rng).unwrap();
    client.upload(&http, other).await.unwrap();
    let st = svc
        .wait_status(&id, |v| {
            v["reports"].as_u64().unwrap() + v["rejected"].as_u64().unwrap() >= 3
        })
        .await;
    assert_eq!(st["reports"], 2);
    assert_eq!(st["rejected"], 1);
    assert_eq!(st["duplicates"], 0);
    assert_eq!(REPORT_LEN, report.len());
    svc.stop().await;
}
