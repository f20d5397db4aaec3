//! The relay's release on loopback: a task with a histogram protocol is calibrated at
//! creation for the honest, present users n' = n - floor(alpha n) - floor(gamma n), the
//! simulated clients randomize with the task's randomizer, and the status JSON's `release`
//! holds the estimate from the decrypted multiset with the certified guarantee; bad protocol
//! specs are refused with a typed problem naming the field.

mod common;

use blanket::analyzer::Aggregator;
use blanket_protocol::driver::{SimConfig, ALL_BEHAVIOURS};
use blanket_server::relay::api::TaskSpec;
use blanket_server::relay::client::{self, ClientOptions, RelayClientError};
use blanket_server::relay::release;
use blanket_server::Running;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

async fn relay() -> Running {
    common::relay_on("sqlite::memory:").await
}

fn opts() -> ClientOptions {
    common::relay_client_options()
}

fn histogram_spec(n: u32, seed: u64) -> TaskSpec {
    common::relay_histogram_spec(n, seed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_clients_amortized_release_a_certified_histogram() {
    let server = relay().await;
    let spec = histogram_spec(30, 5);
    let created = client::create(&server.url, &spec, Some(common::ADMIN))
        .await
        .unwrap();
    let task = created.status.task.clone();
    let st = client::Connection::new(&server.url, &task, opts())
        .unwrap()
        .status()
        .await
        .unwrap();
    let rz = st
        .randomizer
        .clone()
        .expect("the task publishes its randomizer");
    assert_eq!((rz.protocol.as_str(), rz.domain), ("histogram", 4));
    assert!(rz.gamma > 0.0 && rz.gamma <= 1.0, "{}", rz.gamma);
    assert!(st.release.is_none());
    let params = spec.params().unwrap();
    let inputs = release::simulated_inputs(&rz, 30, 5).unwrap();
    assert!(inputs.iter().all(|m| m.len() == 1 && m[0] < 4));
    let cfg = SimConfig::random(
        params,
        params.max_dropouts,
        params.max_malicious,
        &ALL_BEHAVIOURS,
        inputs,
        5,
    );
    let r = client::simulate(
        &server.url,
        &task,
        &created.credentials,
        &cfg,
        opts(),
        Arc::new(AtomicUsize::new(0)),
    )
    .await
    .unwrap();
    let st = r.status;
    assert!(st.delivered, "{:?}", st.error);
    let rel = st
        .release
        .expect("a delivered run with a protocol releases");
    // n' = 30 - floor(1.5) - floor(1.5) = 28.
    assert_eq!(rel.population, 28);
    assert_eq!(rel.estimate.len(), 4);
    assert!(rel.certified_epsilon <= 2.0 && rel.certified_epsilon > 0.0);
    assert!(rel.certified_delta <= 1e-3 && rel.certified_delta >= 0.0);
    assert!(rel.predicted_rmse.is_finite() && rel.predicted_rmse > 0.0);
    assert!(rel.trust.contains("semi-honest relay"));
    // The estimate is the core analyzer's on the decrypted multiset (in-domain messages).
    let out = st.output.unwrap();
    let h = release::histogram_of(&rz).unwrap();
    let mut state = h.aggregator();
    let mut outside = 0;
    for &m in &out.messages {
        if m < 4 {
            state.absorb(m as u32).unwrap();
        } else {
            outside += 1;
        }
    }
    let est = h.estimate(&state).unwrap();
    // (1e-9: the JSON float parse is not bit-exact.)
    assert_eq!(rel.estimate.len(), est.counts.len());
    for (a, b) in rel.estimate.iter().zip(&est.counts) {
        assert!((a - b).abs() < 1e-9, "{a} vs {b}");
    }
    assert_eq!(rel.out_of_domain, outside);
    assert_eq!(rel.reports, est.reports);
    // Debiased GRR counts sum to the number of reports (1e-9 float tolerance).
    let total: f64 = rel.estimate.iter().sum();
    assert!((total - rel.reports as f64).abs() < 1e-9, "{total}");
    // The status page shows the release.
    let page = reqwest::get(format!("{}/", server.url))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("certified <b>eps = "), "{page}");
    assert_eq!(page.matches("class=\"bar\"").count(), 4, "{page}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_protocol_specs_are_refused_naming_the_field() {
    let server = relay().await;
    let base = histogram_spec(30, 6);
    let cases: Vec<(TaskSpec, &str, &str)> = vec![
        (
            TaskSpec {
                protocol: Some("mean".into()),
                ..base.clone()
            },
            "out-of-range",
            "protocol",
        ),
        (
            TaskSpec {
                domain: Some(1),
                ..base.clone()
            },
            "out-of-range",
            "domain",
        ),
        (
            TaskSpec {
                domain: None,
                ..base.clone()
            },
            "out-of-range",
            "domain",
        ),
        (
            TaskSpec {
                eps: Some(-1.0),
                ..base.clone()
            },
            "out-of-range",
            "eps",
        ),
        (
            TaskSpec {
                eps: None,
                ..base.clone()
            },
            "out-of-range",
            "eps",
        ),
        (
            TaskSpec {
                delta: Some(1.5),
                ..base.clone()
            },
            "out-of-range",
            "delta",
        ),
        (
            TaskSpec {
                messages_per_client: 2,
                ..base.clone()
            },
            "out-of-range",
            "messages_per_client",
        ),
        (
            TaskSpec {
                protocol: None,
                ..base.clone()
            },
            "out-of-range",
            "domain",
        ),
    ];
    for (spec, reason, field) in cases {
        match client::create_task(&server.url, &spec, Some(common::ADMIN)).await {
            Err(RelayClientError::Refused(p)) => {
                assert_eq!(p.reason, reason, "{spec:?}: {}", p.detail);
                assert_eq!(p.status, 422, "{spec:?}");
                assert!(p.detail.contains(field), "{spec:?}: {}", p.detail);
            }
            other => panic!("{spec:?} was not refused: {other:?}"),
        }
    }
    // A real client's value outside the domain is refused before it is encrypted.
    let created = client::create(&server.url, &base, Some(common::ADMIN))
        .await
        .unwrap();
    let task = created.status.task.clone();
    let e = client::run_client(
        &server.url,
        &task,
        vec![4],
        Some(&created.credentials[0]),
        opts(),
    )
    .await
    .unwrap_err();
    assert!(e.to_string().contains("0..=3"), "{e}");
    server.stop().await;
}
