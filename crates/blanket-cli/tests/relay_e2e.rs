//! The relay end to end with the real binary on loopback (issue 13): a relay
//! (`blanket serve --role relay`, child process, SQLite file) and
//!
//! - real clients: N separate `blanket client run --relay URL --task ID --value V
//!   --credentials FILE` processes (admission tokens, the default), each with fresh keys and OS
//!   randomness, deliver a histogram whose release is consistent
//!   with their N values; bad `--value`s and flags are refused naming the flag, no panic;
//! - 200 simulated clients of the alternating variant with a histogram (`client run
//!   --simulate`, 5% dropping out, 5% malicious) release the same estimate with the same
//!   certified guarantee as `blanket protocol run` with the same seed (the in-memory driver).
//!
//! Every child process is bounded in time (killed and the test failed past its bound).

mod common;
use common::*;

use blanket_server::relay::api::TaskSpec;
use blanket_server::relay::client::{self, ClientOptions};
use std::collections::BTreeSet;
use std::time::Instant;

/// Real clients and their own processes: 12 is enough to have a key committee and a chain
/// of shufflers (no dropouts, no cheaters: alpha = gamma = 0).
const REAL_CLIENTS: u32 = 12;
const DOMAIN: u64 = 3;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn opts() -> ClientOptions {
    ClientOptions {
        poll_wait_ms: 5_000,
        request_timeout_ms: 30_000,
        ..ClientOptions::default()
    }
}

#[test]
fn real_client_processes_deliver_a_consistent_histogram() {
    let t_start = Instant::now();
    let dir = temp_dir("relay-real-clients");
    let db = format!("sqlite://{}", dir.join("relay.db").display());
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let _relay = relay(&db, port);
    let rt = rt();
    let spec = TaskSpec {
        alpha: 0.0,
        gamma: 0.0,
        round_timeout_ms: 120_000,
        protocol: Some("histogram".into()),
        domain: Some(DOMAIN),
        eps: Some(3.0),
        delta: Some(1e-3),
        ..TaskSpec::new(REAL_CLIENTS)
    };
    let created = rt
        .block_on(client::create(&url, &spec, Some(common::RELAY_ADMIN)))
        .unwrap();
    let task = created.status.task.clone();
    // Admission is on by default: one credential file per client (as an operator hands them
    // out).
    assert_eq!(created.credentials.len(), REAL_CLIENTS as usize);
    let cred_files: Vec<String> = created
        .credentials
        .iter()
        .map(|c| {
            let path = dir.join(format!("credential-{}.json", c.index));
            std::fs::write(&path, serde_json::to_string(c).unwrap()).unwrap();
            path.display().to_string()
        })
        .collect();
    let base = [
        "client",
        "run",
        "--relay",
        url.as_str(),
        "--task",
        task.as_str(),
    ];
    let with = |extra: &[&'static str]| -> Vec<&str> {
        base.iter().copied().chain(extra.iter().copied()).collect()
    };

    // Bad values and flags, before the real clients: refused naming the flag, no panic, and
    // nothing registered (the out-of-domain value is refused before registration).
    fails_with(
        &with(&["--value", "3"]),
        "--value 3 is not a category of the task's histogram (allowed: 0..=2)",
    );
    fails_with(
        &with(&["--value=-1"]),
        "invalid value '-1' for '--value <VALUE>'",
    );
    fails_with(&with(&["--value", "abc"]), "'--value <VALUE>'");
    fails_with(&with(&["--valeu", "1"]), "--valeu");
    fails_with(&with(&[]), "--value is required");
    let st = rt
        .block_on(async { client::Connection::new(&url, &task, opts())?.status().await })
        .unwrap();
    assert_eq!(st.registered, 0, "a refused client registered");

    // The real clients, concurrently, each its own process.
    let values: Vec<String> = (0..REAL_CLIENTS)
        .map(|i| (u64::from(i) % DOMAIN).to_string())
        .collect();
    let children: Vec<_> = values
        .iter()
        .zip(&cred_files)
        .map(|(v, cred)| {
            let mut args = base.to_vec();
            args.extend([
                "--value",
                v.as_str(),
                "--credentials",
                cred.as_str(),
                "--json",
            ]);
            spawn(&args)
        })
        .collect();
    let mut indices = BTreeSet::new();
    for (k, child) in children.into_iter().enumerate() {
        let out = wait_bounded(child, 300, &format!("real client {k}"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "client {k} failed: {err}");
        assert!(!err.contains("panicked"), "client {k}: {err}");
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
        assert_eq!(j["delivered"], true, "client {k}: {j}");
        assert_eq!(j["errors"], serde_json::json!([]), "client {k}: {j}");
        assert!(
            num(&j, "wire_bytes_sent") > num(&j, "bytes_sent"),
            "client {k}: {j}"
        );
        indices.insert(j["index"].as_u64().unwrap());
    }
    assert_eq!(
        indices,
        (0..u64::from(REAL_CLIENTS)).collect::<BTreeSet<_>>()
    );

    // The released histogram: N reports, all in the domain, estimates summing to N (the
    // GRR estimator is unbiased per count and its counts sum to the number of reports).
    let st = rt
        .block_on(async { client::Connection::new(&url, &task, opts())?.status().await })
        .unwrap();
    assert!(st.delivered, "{:?}", st.error);
    assert!(st.cheaters.is_empty() && st.silent.is_empty(), "{st:?}");
    let out = st.output.as_ref().unwrap();
    assert_eq!(out.messages.len(), REAL_CLIENTS as usize);
    assert!(
        out.messages.iter().all(|&m| m < DOMAIN),
        "{:?}",
        out.messages
    );
    assert_eq!(out.undecodable, 0);
    let rel = st.release.as_ref().expect("a delivered histogram releases");
    assert_eq!(rel.reports, u64::from(REAL_CLIENTS));
    assert_eq!(rel.out_of_domain, 0);
    assert_eq!(rel.population, u64::from(REAL_CLIENTS));
    assert_eq!(rel.estimate.len(), DOMAIN as usize);
    let total: f64 = rel.estimate.iter().sum();
    assert!(
        (total - f64::from(REAL_CLIENTS)).abs() < 1e-6,
        "{:?}",
        rel.estimate
    );
    assert!(rel.certified_epsilon > 0.0 && rel.certified_epsilon <= 3.0);
    assert!(rel.certified_delta <= 1e-3);
    // A thirteenth client is refused (registration closed), cleanly; one without a credential
    // is refused admission.
    let mut again = base.to_vec();
    again.extend(["--value", "1", "--credentials", cred_files[0].as_str()]);
    fails_with(&again, "task-closed");
    fails_with(&with(&["--value", "1"]), "admission-token-missing");
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "{REAL_CLIENTS} real client processes: {:.1} s wall",
        t_start.elapsed().as_secs_f64()
    );
}

/// `client run --simulate 200 --variant alternating --protocol histogram` over a relay and
/// `protocol run` in memory, same seed: the same rounds, cheaters and timed-out parties, and
/// the same released estimate with the same certified guarantee.
#[test]
fn alternating_histogram_over_the_relay_matches_protocol_run() {
    let t_start = Instant::now();
    let dir = temp_dir("relay-alt-histogram");
    let db = format!("sqlite://{}", dir.join("relay.db").display());
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let _relay = relay(&db, port);
    let token = relay_admin_file(&dir);
    // sigma 16: the alternating layout's union bound over 2 sqrt(n) lanes is infeasible at
    // n = 200 for sigma 40 (as in blanket-server/tests/relay.rs); eta 4: so that the
    // alternating variant's default, per-lane key committees, has a solution at n = 200.
    let shared = [
        "--dropout",
        "0.05",
        "--malicious",
        "0.05",
        "--sigma",
        "16",
        "--eta",
        "4",
        "--variant",
        "alternating",
        "--protocol",
        "histogram",
        "--domain",
        "4",
        "--eps",
        "2",
        "--delta",
        "1e-4",
        "--seed",
        "13",
        "--json",
    ];
    let mut mem_args = vec!["protocol", "run", "--clients", "200"];
    mem_args.extend(shared);
    let mem = json_bounded(&mem_args, 300);
    let mut net_args = vec![
        "client",
        "run",
        "--relay",
        url.as_str(),
        "--simulate",
        "200",
        // 10 s: with per-lane key committees some rounds carry more work per simulated
        // client (K DKGs, re-encryption), and under a loaded machine 5 s timed honest
        // clients out (a different silent set than in memory).
        "--round-timeout-ms",
        "10000",
        "--poll-wait-ms",
        "10000",
        "--admin-token-file",
        token.as_str(),
    ];
    net_args.extend(shared);
    let net = json_bounded(&net_args, 400);

    assert_eq!(mem["delivered"], true, "{mem}");
    assert_eq!(mem["correct"], true, "{mem}");
    assert_eq!(mem["key_committees"], "per-lane", "{mem}");
    assert_eq!(net["delivered"], true, "{net}");
    assert_eq!(net["client_failures"], 0, "{net}");
    assert_eq!(net["key_committees"], "per-lane", "{net}");
    assert_eq!(net["rounds"], mem["rounds"], "rounds");
    let named = |v: &serde_json::Value| -> Vec<u64> {
        let mut c: Vec<u64> = v
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|x| x.as_u64())
            .collect();
        c.sort_unstable();
        c
    };
    let mem_cheaters: Vec<u64> = {
        let mut c: Vec<u64> = mem["cheaters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["client"].as_u64().unwrap())
            .collect();
        c.sort_unstable();
        c
    };
    assert!(!mem_cheaters.is_empty(), "{mem}");
    assert_eq!(named(&net["cheaters_detected"]), mem_cheaters, "cheaters");
    assert_eq!(
        net["silent"].as_array().map(Vec::len),
        mem["silent"].as_u64().map(|s| s as usize),
        "silent parties"
    );
    let h = &mem["histogram"];
    let rel = &net["release"];
    assert_eq!(rel["protocol"], "histogram", "{net}");
    assert_eq!(rel["population"], mem["blanket_users"], "{net}");
    assert_eq!(rel["method"], h["method"], "{net}");
    // The guarantee is computed by the same code from the same parameters: equal exactly.
    assert_eq!(rel["certified_epsilon"], h["certified_epsilon"], "{net}");
    // The relay's release states the delta given a private shuffle (its ledger charges
    // 2^-sigma on top); protocol run prints the unconditional one beside it.
    assert_eq!(
        rel["certified_delta"], h["certified_delta_given_private_shuffle"],
        "{net}"
    );
    assert!(
        num(h, "certified_epsilon") <= 2.0
            && num(h, "certified_delta_given_private_shuffle") <= 1e-4
    );
    // The estimate: the same decrypted multiset, the same analyzer (1e-9: the JSON float
    // round trip).
    let (e_net, e_mem) = (
        rel["estimate"].as_array().unwrap(),
        h["estimate"].as_array().unwrap(),
    );
    assert_eq!(e_net.len(), 4);
    assert_eq!(e_net.len(), e_mem.len());
    for (a, b) in e_net.iter().zip(e_mem) {
        let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
        assert!(
            (a - b).abs() < 1e-9,
            "estimate {a} over the relay vs {b} in memory"
        );
    }
    eprintln!(
        "alternating histogram, n = 200: {} rounds, {:.1} s over the relay; {:.1} s wall in all",
        net["rounds"],
        num(&net, "seconds"),
        t_start.elapsed().as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
