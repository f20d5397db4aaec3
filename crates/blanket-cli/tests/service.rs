//! The service as deployed: `blanket serve` processes on loopback (a shuffler and an analyzer
//! apart, sharing a peer token), driven by `blanket task` and `blanket submit`; and the
//! shuffler's durability under SIGKILL.

mod common;
use common::*;

use blanket::rng::{RngCore, SecureRng};
use blanket_server::wire::{Report, Sealed, TaskId, CIPHERTEXT_LEN};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn run_ok(args: &[&str]) -> serde_json::Value {
    json(args)
}

#[test]
fn shuffler_and_analyzer_apart_end_to_end() {
    let dir = temp_dir("service-apart");
    let port = free_port();
    let analyzer_url = format!("http://127.0.0.1:{port}");
    let sdb = format!("sqlite://{}", dir.join("shuffler.db").display());
    let adb = format!("sqlite://{}", dir.join("analyzer.db").display());
    let shuffler = serve(&[
        "--role",
        "shuffler",
        "--db",
        &sdb,
        "--listen",
        "127.0.0.1:0",
        "--analyzer",
        &analyzer_url,
    ]);
    let listen = format!("127.0.0.1:{port}");
    // The analyzer creates its admin token file (it does not exist yet).
    let admin_file = dir.join("admin-token");
    let admin = admin_file.to_str().unwrap();
    let analyzer = serve(&[
        "--role",
        "analyzer",
        "--db",
        &adb,
        "--listen",
        &listen,
        "--shuffler",
        &shuffler.url,
        "--admin-token-file",
        admin,
    ]);
    let token = std::fs::read_to_string(&admin_file).unwrap();
    assert_eq!(token.trim().len(), 64, "a 32-byte hex token");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&admin_file).unwrap().permissions().mode();
        assert_eq!(
            mode & 0o077,
            0,
            "the token file is readable by others: {mode:o}"
        );
    }
    let create = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = [
            "task",
            "create",
            "--server",
            &analyzer.url,
            "--protocol",
            "histogram",
            "--domain",
            "4",
            "--eps",
            "8",
            "--delta",
            "1e-3",
            "--n",
            "60",
            "--budget-eps",
            "8",
            "--json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    // Without the token, or with another one: refused (401, typed reason), nothing created.
    let no_token = create(&[]);
    fails_with(
        &no_token.iter().map(String::as_str).collect::<Vec<_>>(),
        "admin-token-missing",
    );
    let wrong_file = dir.join("wrong-token");
    std::fs::write(&wrong_file, "not-the-token\n").unwrap();
    let wrong = create(&["--admin-token-file", wrong_file.to_str().unwrap()]);
    fails_with(
        &wrong.iter().map(String::as_str).collect::<Vec<_>>(),
        "admin-token-wrong",
    );
    let missing = create(&["--admin-token-file", "/nonexistent/blanket-admin-token"]);
    fails_with(
        &missing.iter().map(String::as_str).collect::<Vec<_>>(),
        "cannot read the admin token file",
    );
    let list = run_ok(&["task", "list", "--server", &analyzer.url, "--json"]);
    assert_eq!(list.as_array().unwrap().len(), 0);
    let created = run_ok(&[
        "task",
        "create",
        "--admin-token-file",
        admin,
        "--server",
        &analyzer.url,
        "--protocol",
        "histogram",
        "--domain",
        "4",
        "--eps",
        "8",
        "--delta",
        "1e-3",
        "--n",
        "60",
        "--budget-eps",
        "8",
        "--json",
    ]);
    let task_url = created["task_url"].as_str().unwrap().to_string();
    assert!(created["params"]["upload_url"]
        .as_str()
        .unwrap()
        .starts_with(&shuffler.url));
    let rows: String = (0..60).map(|i| format!("{}\n", i % 4)).collect();
    let csv = temp_file("service-values.csv", &format!("value\n{rows}"));
    let sub = run_ok(&[
        "submit",
        "--task",
        &task_url,
        "--from-csv",
        csv.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(sub["accepted"], 60);
    // Out of range on the client: refused before anything is sent, naming the field.
    fails_with(
        &["submit", "--task", &task_url, "--value", "7"],
        "value must be",
    );
    let t0 = Instant::now();
    loop {
        let shown = run_ok(&["task", "show", "--task", &task_url, "--json"]);
        if shown["status"]["reports"] == 60 {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "{shown}");
        std::thread::sleep(Duration::from_millis(100));
    }
    fails_with(
        &["task", "release", "--task", &task_url],
        "admin-token-missing",
    );
    let wrong = wrong_file.to_str().unwrap();
    fails_with(
        &[
            "task",
            "release",
            "--task",
            &task_url,
            "--admin-token-file",
            wrong,
        ],
        "admin-token-wrong",
    );
    // The token from the environment works as well as the file.
    let out = Command::new(env!("CARGO_BIN_EXE_blanket"))
        .args(["task", "release", "--task", &task_url, "--json"])
        .env("BLANKET_ADMIN_TOKEN", token.trim())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rel: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rel["reports"], 60);
    assert!(rel["guarantee"]["epsilon"].as_f64().unwrap() <= 8.0);
    fails_with(
        &[
            "task",
            "release",
            "--task",
            &task_url,
            "--admin-token-file",
            admin,
        ],
        "nothing-to-release",
    );
    let list = run_ok(&["task", "list", "--server", &analyzer.url, "--json"]);
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["releases"], 1);
    drop(analyzer);
    drop(shuffler);
    let _ = std::fs::remove_dir_all(&dir);
}

fn sealed_report(task: TaskId, rng: &mut SecureRng) -> Vec<u8> {
    let mut id = [0u8; 16];
    let mut enc = [0u8; 32];
    let mut ct = [0u8; CIPHERTEXT_LEN];
    rng.fill_bytes(&mut id);
    rng.fill_bytes(&mut enc);
    rng.fill_bytes(&mut ct);
    Report {
        task,
        id,
        sealed: Sealed { enc, ct },
    }
    .encode()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shuffler_sigkill_keeps_every_acknowledged_report_once() {
    let dir = temp_dir("service-kill");
    let db = format!("sqlite://{}", dir.join("shuffler.db").display());
    // No analyzer: batches are never due (min_batch is large), reports stay pending.
    let nowhere = format!("http://127.0.0.1:{}", free_port());
    let args = [
        "--role",
        "shuffler",
        "--db",
        &db,
        "--listen",
        "127.0.0.1:0",
        "--analyzer",
        &nowhere,
    ];
    let mut shuffler = serve(&args);
    let task = TaskId([0x5a; 16]);
    let http = reqwest::Client::new();
    let reg = http
        .put(format!("{}/internal/tasks/{}", shuffler.url, task.hex()))
        .bearer_auth(TOKEN)
        .json(&serde_json::json!({
            "min_batch": 1_000_000u64,
            "deadline_unix": blanket_server::http::now_unix() + 3600
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(reg.status(), 204);

    // Four writers stream fresh reports; the shuffler is killed once 300 are acknowledged.
    let acked = Arc::new(Mutex::new(Vec::<Vec<u8>>::new()));
    let sent = Arc::new(AtomicUsize::new(0));
    let upload = format!("{}/tasks/{}/reports", shuffler.url, task.hex());
    let mut workers = Vec::new();
    for _ in 0..4 {
        let (acked, sent, http, upload) =
            (acked.clone(), sent.clone(), http.clone(), upload.clone());
        workers.push(tokio::spawn(async move {
            let mut rng = SecureRng::from_os().unwrap();
            for _ in 0..2000 {
                let r = sealed_report(task, &mut rng);
                sent.fetch_add(1, Ordering::Relaxed);
                match http.post(&upload).body(r.clone()).send().await {
                    Ok(resp) if resp.status() == 201 => acked.lock().unwrap().push(r),
                    Ok(resp) => panic!("unexpected {}", resp.status()),
                    Err(_) => break, // the server is gone
                }
            }
        }));
    }
    let t0 = Instant::now();
    while acked.lock().unwrap().len() < 300 {
        assert!(t0.elapsed() < Duration::from_secs(60), "too slow");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    shuffler.child.kill().unwrap(); // SIGKILL, mid-stream
    shuffler.child.wait().unwrap();
    for w in workers {
        w.await.unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    let sent = sent.load(Ordering::Relaxed);
    assert!(
        acked.len() >= 300 && acked.len() < sent,
        "{} acked of {sent}",
        acked.len()
    );

    // Restart on the same database.
    shuffler = serve(&args);
    let intake = |url: String| {
        let h = http.clone();
        async move {
            let v: serde_json::Value = h.get(url).send().await.unwrap().json().await.unwrap();
            (
                v["accepted"].as_u64().unwrap(),
                v["pending"].as_u64().unwrap(),
            )
        }
    };
    let status_url = format!("{}/tasks/{}/intake", shuffler.url, task.hex());
    let (accepted, pending) = intake(status_url.clone()).await;
    // Every acknowledged report survived; each stored once (ids and sealed reports agree);
    // reports in flight at the kill may or may not be there, never more than were sent.
    assert!(
        accepted as usize >= acked.len(),
        "{accepted} < {}",
        acked.len()
    );
    assert!(accepted as usize <= sent);
    assert_eq!(accepted, pending);
    // Each acknowledged report is there: submitting it again is refused as a duplicate.
    let upload = format!("{}/tasks/{}/reports", shuffler.url, task.hex());
    for r in &acked {
        let resp = http.post(&upload).body(r.clone()).send().await.unwrap();
        assert_eq!(resp.status(), 409);
    }
    assert_eq!(intake(status_url).await, (accepted, pending));
    drop(shuffler);
    let _ = std::fs::remove_dir_all(&dir);
}
