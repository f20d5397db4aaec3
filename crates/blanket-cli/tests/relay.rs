//! The relay role as deployed (`blanket serve --role relay`, a child process with a SQLite
//! file): killed with SIGKILL at a step drawn from a fixed seed and restarted on the same
//! database and port, it resumes the run by replaying its log; the simulated clients retry
//! through the outage and the run ends with the same output as the in-memory run with the
//! same inputs (which an uninterrupted relay reproduces, `blanket-server/tests/relay.rs`).

mod common;
use common::*;

use blanket_protocol::driver::{self, SimConfig};
use blanket_server::relay::api::TaskSpec;
use blanket_server::relay::client::{self, ClientOptions};
use rand_core::{RngCore, SeedableRng};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[test]
fn relay_killed_at_a_random_step_resumes_with_the_same_output() {
    let dir = temp_dir("relay-kill");
    kill_and_resume(&format!("sqlite://{}", dir.join("relay.db").display()));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same over PostgreSQL (when `BLANKET_TEST_PG_URL` is set; skipped loudly otherwise).
#[test]
fn relay_on_postgres_killed_at_a_random_step_resumes_with_the_same_output() {
    if let Some(db) = pg_database("relaykill") {
        kill_and_resume(&db);
    }
}

fn kill_and_resume(db: &str) {
    const SEED: u64 = 41;
    let t_start = Instant::now();
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let spec = TaskSpec {
        alpha: 0.0,
        gamma: 0.0,
        round_timeout_ms: 60_000,
        sim_seed: Some(SEED),
        ..TaskSpec::new(20)
    };
    let params = spec.params().unwrap();
    let inputs = (0..20u64).map(|i| vec![i * 37 % 100]).collect();
    let cfg = SimConfig::random(params, 0, 0, &[], inputs, SEED);
    let mem = driver::run(&cfg, &mut |_| {}).unwrap();
    assert!(mem.delivered && mem.correct);
    // The kill point: a log length drawn from a fixed seed, before the run can end (a run of
    // 20 honest clients logs 1 start, 20 submissions, the DKG answers and ~6 round closes).
    let kill_at = 3 + rand_chacha::ChaCha20Rng::seed_from_u64(SEED).next_u64() % 20;

    let mut server = relay(db, port);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let opts = ClientOptions {
        poll_wait_ms: 5_000,
        request_timeout_ms: 30_000,
        retries: 60,
        retry_backoff_ms: 100,
    };
    let report = rt.block_on(async {
        let created = client::create(&url, &spec, Some(common::RELAY_ADMIN))
            .await
            .unwrap();
        let task = created.status.task.clone();
        let sim = {
            let (url, task, cfg) = (url.clone(), task.clone(), cfg.clone());
            let creds = created.credentials.clone();
            tokio::spawn(async move {
                client::simulate(
                    &url,
                    &task,
                    &creds,
                    &cfg,
                    opts,
                    Arc::new(AtomicUsize::new(0)),
                )
                .await
            })
        };
        let mut conn = client::Connection::new(&url, &task, opts).unwrap();
        let t0 = Instant::now();
        loop {
            let st = conn.status().await.unwrap();
            assert!(
                !st.finished,
                "the run ended before the kill point {kill_at}"
            );
            if st.log_entries >= kill_at {
                break;
            }
            assert!(t0.elapsed() < Duration::from_secs(120), "no progress");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        server.0.kill().unwrap(); // SIGKILL
        server.0.wait().unwrap();
        server = relay(db, port);
        let mut report = sim.await.unwrap().unwrap();
        // The raw messages of a run without a protocol: read with the admin token.
        report.status = conn.status_as_admin(common::RELAY_ADMIN).await.unwrap();
        report
    });
    drop(server);
    let st = &report.status;
    assert!(st.delivered, "{:?}", st.error);
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    let out = st.output.as_ref().unwrap();
    let mo = mem.output.as_ref().unwrap();
    // The same output as without the kill: same rounds, same accepted clients (each once),
    // same shufflers, and the same messages in the same shuffled order.
    assert_eq!(st.round, mem.rounds);
    assert_eq!(out.accepted_clients, mo.accepted_clients);
    let unique: std::collections::BTreeSet<u32> = out.accepted_clients.iter().copied().collect();
    assert_eq!(unique.len(), out.accepted_clients.len());
    assert_eq!(out.shufflers, mo.shufflers);
    assert_eq!(out.decryptors, mo.decryptors);
    assert_eq!(out.messages, mo.messages);
    assert!(st.cheaters.is_empty() && st.silent.is_empty(), "{st:?}");
    for c in &report.clients {
        let i = c.index as usize;
        assert_eq!(c.bytes_sent, mem.bytes_sent[i]);
        assert_eq!(c.bytes_received, mem.bytes_received[i]);
    }
    eprintln!(
        "killed at log entry {kill_at} of {}; {:.1} s wall",
        st.log_entries,
        t_start.elapsed().as_secs_f64()
    );
}

#[test]
fn client_run_refuses_bad_arguments_with_clear_errors() {
    fails_with(
        &["client", "run", "--relay", "http://127.0.0.1:9"],
        "--task is required",
    );
    fails_with(
        &[
            "client",
            "run",
            "--relay",
            "http://127.0.0.1:9",
            "--task",
            "zz",
            "--value",
            "1",
        ],
        "--task must be 32 hex digits",
    );
    fails_with(
        &[
            "client",
            "run",
            "--relay",
            "http://127.0.0.1:9",
            "--simulate",
            "10",
            "--request-timeout-ms",
            "100",
            "--poll-wait-ms",
            "200",
        ],
        "must exceed --poll-wait-ms",
    );
}

/// `blanket client run --simulate N --protocol histogram`: the created task is calibrated
/// for n' honest, present users, the clients randomize, and the relay's `release` carries
/// the estimate with its certified guarantee; a bad protocol spec is refused naming the field.
#[test]
fn client_simulation_with_a_histogram_releases_a_certified_estimate() {
    let dir = temp_dir("relay-release");
    let db = format!("sqlite://{}", dir.join("relay.db").display());
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let _relay = relay(&db, port);
    let token = relay_admin_file(&dir);
    // Creating a task needs the relay's admin token.
    fails_with(
        &[
            "client",
            "run",
            "--relay",
            &url,
            "--simulate",
            "12",
            "--seed",
            "3",
        ],
        "admin-token-missing",
    );
    let base = [
        "client",
        "run",
        "--relay",
        url.as_str(),
        "--simulate",
        "12",
        "--seed",
        "3",
        "--protocol",
        "histogram",
        "--domain",
        "3",
        "--eps",
        "3",
        "--delta",
        "1e-3",
        "--json",
        "--admin-token-file",
        token.as_str(),
    ];
    let j = json(&base);
    assert_eq!(j["delivered"], true, "{j}");
    let rel = &j["release"];
    assert_eq!(rel["population"], 12, "{j}");
    assert_eq!(rel["estimate"].as_array().map(Vec::len), Some(3), "{j}");
    assert!(num(rel, "certified_epsilon") <= 3.0, "{j}");
    assert!(num(rel, "certified_delta") <= 1e-3, "{j}");
    let mut bad: Vec<&str> = base.to_vec();
    bad[9] = "mean";
    fails_with(&bad, "protocol");
    let mut bad: Vec<&str> = base.to_vec();
    bad[11] = "1";
    fails_with(&bad, "domain");
    let _ = std::fs::remove_dir_all(&dir);
}
