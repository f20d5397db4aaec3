//! Bad input gets the right 4xx with a typed reason in an RFC 9457 body, never a 5xx.

mod common;

use blanket::rng::SecureRng;
use blanket_server::wire::{Report, REPORT_LEN};
use common::{loose, Service};

async fn expect(resp: reqwest::Response, status: u16, reason: &str) -> serde_json::Value {
    assert_eq!(resp.status().as_u16(), status);
    let ct = resp
        .headers()
        .get("content-type")
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert_eq!(ct, "application/problem+json");
    let p: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(p["reason"], reason, "{p}");
    assert_eq!(p["status"], status);
    assert_eq!(p["type"], format!("urn:blanket:problem:{reason}"));
    p
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_reports_and_requests() {
    let svc = Service::start("bad").await;
    let client = svc.create(loose(3, 1000)).await;
    let id = client.params().task_id.clone();
    let up = svc.url(&format!("/tasks/{id}/reports"));
    let http = reqwest::Client::new();
    let mut rng = SecureRng::from_os().unwrap();
    let good = client.report(1.0, &mut rng).unwrap();
    let post = |url: String, body: Vec<u8>| {
        let h = http.clone();
        async move { h.post(url).body(body).send().await.unwrap() }
    };

    // Malformed framing.
    expect(post(up.clone(), vec![]).await, 400, "wrong-length").await;
    expect(
        post(up.clone(), good[..40].to_vec()).await,
        400,
        "wrong-length",
    )
    .await;
    let mut long = good.clone();
    long.push(0);
    expect(post(up.clone(), long).await, 400, "wrong-length").await;
    let mut v9 = good.clone();
    v9[0] = 9;
    expect(post(up.clone(), v9).await, 400, "unsupported-version").await;
    let mut ctlen = good.clone();
    ctlen[66] = 200;
    let p = expect(post(up.clone(), ctlen).await, 400, "wrong-length").await;
    assert!(p["detail"].as_str().unwrap().contains("ciphertext"));
    // Oversized body: refused by the limit, not read.
    expect(
        post(up.clone(), vec![1u8; 64 * 1024]).await,
        413,
        "too-large",
    )
    .await;
    // Unknown task, and a report for another task than its URL.
    let other = "00".repeat(16);
    let mut for_other = Report::decode(&good).unwrap();
    for_other.task = blanket_server::wire::TaskId([0; 16]);
    expect(
        post(
            svc.url(&format!("/tasks/{other}/reports")),
            for_other.encode(),
        )
        .await,
        404,
        "unknown-task",
    )
    .await;
    expect(
        post(up.clone(), for_other.encode()).await,
        400,
        "wrong-task",
    )
    .await;
    expect(
        post(svc.url("/tasks/not-hex/reports"), good.clone()).await,
        404,
        "unknown-task",
    )
    .await;
    // The good report still goes through after all that.
    assert_eq!(post(up.clone(), good.clone()).await.status(), 201);
    assert_eq!(good.len(), REPORT_LEN);

    // Task requests: malformed JSON, unknown field, out of range (field named), infeasible.
    let tasks = svc.url("/tasks");
    let send_json = |body: String| {
        let h = http.clone();
        let url = tasks.clone();
        async move {
            h.post(url)
                .bearer_auth(common::ADMIN)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .unwrap()
        }
    };
    expect(send_json("{".into()).await, 400, "malformed").await;
    let mut req = serde_json::to_value(loose(3, 10)).unwrap();
    req["surprise"] = 1.into();
    expect(send_json(req.to_string()).await, 400, "malformed").await;
    let mut req = serde_json::to_value(loose(3, 10)).unwrap();
    req["eps"] = (-1.0).into();
    let p = expect(send_json(req.to_string()).await, 422, "out-of-range").await;
    assert!(p["detail"].as_str().unwrap().starts_with("eps must be"));
    let mut req = serde_json::to_value(loose(3, 10)).unwrap();
    req["protocol"]["domain"] = 1.into();
    let p = expect(send_json(req.to_string()).await, 422, "out-of-range").await;
    assert!(p["detail"].as_str().unwrap().starts_with("domain must be"));
    let mut req = serde_json::to_value(loose(3, 10)).unwrap();
    req["eps"] = 1e-9.into();
    req["delta"] = 1e-300.into();
    req["min_batch"] = 2.into();
    req["protocol"]["domain"] = (1u64 << 26).into();
    expect(send_json(req.to_string()).await, 422, "infeasible").await;
    expect(send_json("x".repeat(100 * 1024)).await, 413, "too-large").await;

    // Peer-only endpoints refuse without the token; unknown routes and methods are problems.
    expect(
        post(svc.url("/internal/batches"), vec![1, 2, 3]).await,
        401,
        "unauthorized",
    )
    .await;
    let resp = http
        .put(svc.url(&format!("/internal/tasks/{id}")))
        .bearer_auth("wrong")
        .body("{}")
        .send()
        .await
        .unwrap();
    expect(resp, 401, "unauthorized").await;
    let resp = http.get(svc.url("/nowhere")).send().await.unwrap();
    expect(resp, 404, "not-found").await;
    let resp = http.delete(svc.url("/tasks")).send().await.unwrap();
    expect(resp, 405, "method-not-allowed").await;
    let resp = http
        .get(svc.url(&format!("/tasks/{other}")))
        .send()
        .await
        .unwrap();
    expect(resp, 404, "unknown-task").await;
    svc.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closed_task_refuses_reports() {
    let svc = Service::start("closed").await;
    let mut req = loose(3, 10);
    req.deadline_unix = blanket_server::http::now_unix() - 1;
    let client = svc.create(req).await;
    let mut rng = SecureRng::from_os().unwrap();
    let r = client.report(0.0, &mut rng).unwrap();
    match client.upload(&reqwest::Client::new(), r).await {
        Err(blanket_server::client::ClientError::Rejected(p)) => {
            assert_eq!((p.reason.as_str(), p.status), ("task-closed", 410))
        }
        other => panic!("{other:?}"),
    }
    // Out of the protocol's range: refused on the client, naming the field.
    for bad in [3.0, -1.0, 0.5, f64::NAN] {
        let e = client.report(bad, &mut rng).unwrap_err();
        assert!(e.to_string().starts_with("value must be"), "{e}");
    }
    svc.stop().await;
}

/// Task creation and release need the admin token: without one, 401 `admin-token-missing`;
/// with another token (the peer token included), 401 `admin-token-wrong`; nothing changes.
/// Reports and reads stay open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_routes_need_the_admin_token() {
    let svc = Service::start("admin").await;
    let http = reqwest::Client::new();
    let req = loose(3, 10);
    let tasks = svc.url("/tasks");
    for (token, reason) in [
        (None, "admin-token-missing"),
        (Some("wrong"), "admin-token-wrong"),
        (Some("test-token"), "admin-token-wrong"), // the peer token is not the admin token
        (Some(""), "admin-token-missing"),         // `Bearer` with nothing after it
    ] {
        let mut r = http.post(&tasks).json(&req);
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        let resp = r.send().await.unwrap();
        let www = resp.headers().get("www-authenticate").cloned();
        let p = expect(resp, 401, reason).await;
        assert!(p["detail"].as_str().unwrap().contains("admin token"), "{p}");
        assert_eq!(www.unwrap(), "Bearer realm=\"blanket-admin\"");
    }
    let listed: Vec<serde_json::Value> =
        http.get(&tasks).send().await.unwrap().json().await.unwrap();
    assert!(
        listed.is_empty(),
        "a refused create stored a task: {listed:?}"
    );

    // With the token: created; reports go in without any token.
    let client = svc.create(loose(3, 10)).await;
    let id = client.params().task_id.clone();
    let mut rng = SecureRng::from_os().unwrap();
    let up = svc.url(&format!("/tasks/{id}/reports"));
    for i in 0..10 {
        let r = client.report((i % 3) as f64, &mut rng).unwrap();
        assert_eq!(http.post(&up).body(r).send().await.unwrap().status(), 201);
    }
    svc.wait_status(&id, |v| v["reports"] == 10).await;
    let rel = svc.url(&format!("/tasks/{id}/release"));
    let resp = http.post(&rel).send().await.unwrap();
    expect(resp, 401, "admin-token-missing").await;
    let resp = http
        .post(&rel)
        .bearer_auth("test-admin-tokeX")
        .send()
        .await
        .unwrap();
    expect(resp, 401, "admin-token-wrong").await;
    // An unknown task is not revealed to an unauthenticated caller.
    let resp = http
        .post(svc.url("/tasks/00000000000000000000000000000000/release"))
        .send()
        .await
        .unwrap();
    expect(resp, 401, "admin-token-missing").await;
    let st: serde_json::Value = http
        .get(svc.url(&format!("/tasks/{id}/status")))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(st["releases"], 0, "a refused release was recorded: {st}");
    let resp = http
        .post(&rel)
        .bearer_auth(common::ADMIN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    svc.stop().await;
}
