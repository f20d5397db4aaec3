//! The multi-message task types through the command line: `blanket serve --role all` on
//! loopback, `blanket task create --protocol vector-sum|ikos-sum`, `blanket submit` with a
//! vector `--value` and a multi-column `--from-csv`, `blanket task release`.

mod common;
use common::*;

use std::time::{Duration, Instant};

/// A `blanket serve --role all` child, killed when dropped.
fn serve_all(db: &str, admin_token_file: &str) -> Server {
    serve(&[
        "--role",
        "all",
        "--db",
        db,
        "--listen",
        "127.0.0.1:0",
        "--admin-token-file",
        admin_token_file,
    ])
}

fn wait_reports(task_url: &str, reports: u64) {
    let t0 = Instant::now();
    loop {
        let shown = json(&["task", "show", "--task", task_url, "--json"]);
        if shown["status"]["reports"] == reports {
            return;
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "{shown}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn vector_and_ikos_tasks_through_the_cli() {
    let dir = temp_dir("service-tasks");
    let db = format!("sqlite://{}", dir.join("db.sqlite").display());
    let tok = dir.join("admin-token").display().to_string();
    let server = serve_all(&db, &tok);

    // Vector sum, d = 3, t = 1, k = 1: 100 users in a batch.
    let created = json(&[
        "task",
        "create",
        "--server",
        &server.url,
        "--admin-token-file",
        &tok,
        "--protocol",
        "vector-sum",
        "--d",
        "3",
        "--t",
        "1",
        "--k",
        "1",
        "--eps",
        "8",
        "--delta",
        "1e-3",
        "--n",
        "100",
        "--json",
    ]);
    let task_url = created["task_url"].as_str().unwrap().to_string();
    assert_eq!(created["params"]["protocol"]["kind"], "vector-sum");
    assert_eq!(created["params"]["protocol"]["t"], 1);
    // A flag of another protocol is refused.
    fails_with(
        &[
            "task",
            "create",
            "--server",
            &server.url,
            "--admin-token-file",
            &tok,
            "--protocol",
            "vector-sum",
            "--d",
            "3",
            "--sigma",
            "40",
            "--eps",
            "8",
            "--delta",
            "1e-3",
            "--n",
            "100",
        ],
        "--sigma does not apply",
    );
    // Values: wrong dimension, out of range, not a number: refused naming the field.
    fails_with(
        &["submit", "--task", &task_url, "--value", "0.1,0.2"],
        "value must be a vector of exactly d",
    );
    fails_with(
        &["submit", "--task", &task_url, "--value", "0.1,0.2,1.5"],
        "coordinate 2 = 1.5",
    );
    fails_with(
        &["submit", "--task", &task_url, "--value", "0.1,x,0.2"],
        "--value must be a number or comma-separated numbers",
    );
    let one = json(&["submit", "--task", &task_url, "--value", "1,0,1", "--json"]);
    assert_eq!(one["accepted"], 1);
    let rows: String = (0..99).map(|i| format!("1,0,{}\n", i % 2)).collect();
    let csv = temp_file("service-vectors.csv", &format!("a,b,c\n{rows}"));
    let sub = json(&[
        "submit",
        "--task",
        &task_url,
        "--from-csv",
        csv.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(sub["accepted"], 99);
    wait_reports(&task_url, 100);
    let rel = json(&[
        "task",
        "release",
        "--task",
        &task_url,
        "--admin-token-file",
        &tok,
        "--json",
    ]);
    assert_eq!(rel["estimate"]["users"], 100);
    assert_eq!(rel["estimate"]["mean"].as_array().unwrap().len(), 3);
    assert!(rel["guarantee"]["epsilon"].as_f64().unwrap() <= 8.0);

    // IKOS sum: 60 clients, each sending m shares.
    let created = json(&[
        "task",
        "create",
        "--server",
        &server.url,
        "--admin-token-file",
        &tok,
        "--protocol",
        "ikos-sum",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--n",
        "60",
        "--json",
    ]);
    let task_url = created["task_url"].as_str().unwrap().to_string();
    let m = created["params"]["protocol"]["calibrated"]["shares"]
        .as_u64()
        .unwrap();
    fails_with(
        &["submit", "--task", &task_url, "--value", "0.5,0.5"],
        "value must be one number",
    );
    let csv = temp_file("service-ikos.csv", &"0.5\n".repeat(60));
    let sub = json(&[
        "submit",
        "--task",
        &task_url,
        "--from-csv",
        csv.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(sub["accepted"], 60 * m);
    wait_reports(&task_url, 60 * m);
    let rel = json(&[
        "task",
        "release",
        "--task",
        &task_url,
        "--admin-token-file",
        &tok,
        "--json",
    ]);
    assert_eq!(rel["estimate"]["users"], 60);
    let sum = rel["estimate"]["sum"].as_f64().unwrap();
    let rmse = rel["predicted_rmse"].as_f64().unwrap();
    assert!((sum - 30.0).abs() < 6.0 * rmse, "sum {sum}, rmse {rmse}");
    assert_eq!(rel["guarantee"]["method"], "ikos-split-and-mix");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
