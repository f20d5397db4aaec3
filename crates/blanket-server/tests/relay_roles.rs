//! Issue 25, item 1: no registrant can steer role selection. The public seed is fixed when
//! registration closes from a nonce the relay draws then (`docs/protocol.md`, "The public
//! seed"): a registrant grinding its key does no better than chance at seating its clients in
//! the key committee, while the same grinding against the old seed (task id and keys only)
//! seats most of the committee. The nonce is logged with the start: a restarted relay replays
//! the same roles, and clients recompute them.

mod common;

use blanket_crypto::{Keypair, PublicKey};
use blanket_protocol::select;
use blanket_server::relay::api::TaskSpec;
use blanket_server::relay::client;
use blanket_server::relay::roles::{check_roles, RolesMismatch};
use blanket_server::relay::{draw_seed_nonce, public_seed};
use rand_chacha03::ChaCha20Rng;
use rand_core06::{RngCore, SeedableRng};

/// The setting: n = 200, sigma = 12, alpha = gamma = 0.05 (committee 10, threshold
/// 5; 10 malicious clients, all the attacker's; the last to register grinds its key).
fn grind_spec() -> TaskSpec {
    TaskSpec {
        sigma: 12,
        alpha: 0.05,
        gamma: 0.05,
        ..TaskSpec::new(200)
    }
}

/// Runs, candidate keys per run (the attacker's grinding budget), runs also ground against
/// the old seed (the control: the attack the nonce stops).
const RUNS: usize = 100;
const TRIES: usize = 2_000;
const CONTROL_RUNS: usize = 20;

#[test]
fn grinding_keys_does_not_seat_more_clients() {
    let spec = grind_spec();
    let params = spec.params().unwrap();
    let n = params.clients;
    let m = params.max_malicious;
    let c = params.committee;
    assert!(m >= 1 && c >= 2, "{params:?}");
    let attacker = |i: u32| i >= n - m;
    let seats = |roles: &select::Roles| roles.committee.iter().filter(|&&i| attacker(i)).count();
    let mut rng = ChaCha20Rng::seed_from_u64(25);
    let honest: Vec<PublicKey> = (0..n - 1)
        .map(|_| Keypair::generate(&mut rng).public)
        .collect();
    // The attacker's candidates for the last key (it knows every secret key).
    let candidates: Vec<PublicKey> = (0..TRIES)
        .map(|_| Keypair::generate(&mut rng).public)
        .collect();
    let guess = [0u8; 32];
    let mut with_nonce = Vec::with_capacity(RUNS);
    let mut without_nonce = Vec::with_capacity(CONTROL_RUNS);
    for run in 0..RUNS {
        let mut task = [0u8; 16];
        rng.fill_bytes(&mut task);
        let mut keys = honest.clone();
        keys.push(candidates[0]);
        // Grinding: the candidate seating the most attacker clients under the seed the
        // attacker can compute while registering (with the nonce, a guess of it: it is drawn
        // only after the last registration).
        let mut best = (0usize, 0usize);
        let mut best_old = (0usize, 0usize);
        for (j, cand) in candidates.iter().enumerate() {
            keys[n as usize - 1] = *cand;
            let s = public_seed(&spec, &task, &keys, Some(&guess));
            let got = seats(&select::roles(&params, &task, &s));
            if got > best.0 {
                best = (got, j);
            }
            if run < CONTROL_RUNS {
                let s = public_seed(&spec, &task, &keys, None);
                let got = seats(&select::roles(&params, &task, &s));
                if got > best_old.0 {
                    best_old = (got, j);
                }
            }
        }
        // The relay draws the nonce when registration closes.
        keys[n as usize - 1] = candidates[best.1];
        let nonce = draw_seed_nonce(&spec)
            .unwrap()
            .expect("a deployment draws a nonce");
        let s = public_seed(&spec, &task, &keys, Some(&nonce));
        with_nonce.push(seats(&select::roles(&params, &task, &s)) as f64);
        if run < CONTROL_RUNS {
            without_nonce.push(best_old.0 as f64);
        }
    }
    // Chance: the committee is c positions of a uniform permutation, so the attacker's seats
    // are hypergeometric, mean c m / n, variance c (m/n)(1 - m/n)(n - c)/(n - 1). The mean of
    // RUNS runs must stay within 4.5 standard errors above it (a false alarm with
    // probability about 3e-6 by the normal approximation).
    let (nf, mf, cf) = (f64::from(n), f64::from(m), f64::from(c));
    let mean = cf * mf / nf;
    let var = cf * (mf / nf) * (1.0 - mf / nf) * (nf - cf) / (nf - 1.0);
    let bound = mean + 4.5 * (var / RUNS as f64).sqrt();
    let got = with_nonce.iter().sum::<f64>() / RUNS as f64;
    assert!(
        got <= bound,
        "grinding seated {got} attacker clients per committee on average with the nonce; chance {mean}, tolerance {bound}"
    );
    // Control: the same grinding against the old seed (task and keys only) seats far more
    // than chance (the attack this closes), so the statistic above can fail.
    let old = without_nonce.iter().sum::<f64>() / CONTROL_RUNS as f64;
    assert!(
        old >= 2.5,
        "grinding the old seed seated only {old} on average (chance {mean})"
    );
    eprintln!(
        "committee {c}, threshold {}: attacker seats per run, chance {mean:.3}; ground with \
         the nonce {got:.3} (tolerance {bound:.3}); ground against the old seed {old:.2}",
        params.threshold
    );
}

/// The roles document of a started run checks (seed from the keys and the nonce, roles from
/// the seed); a changed nonce, key or role does not; a restarted relay replays the same seed
/// and roles from its log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_relay_replays_the_same_roles() {
    let dir = common::temp_dir("relay-roles");
    let db = format!("sqlite://{}", dir.join("relay.db").display());
    let server = common::relay_on(&db).await;
    let spec = TaskSpec {
        alpha: 0.0,
        gamma: 0.0,
        round_timeout_ms: 60_000,
        ..TaskSpec::new(6)
    };
    let created = client::create(&server.url, &spec, Some(common::ADMIN))
        .await
        .unwrap();
    let task = created.status.task.clone();
    let opts = common::relay_client_options();
    let mut conn = client::Connection::new(&server.url, &task, opts).unwrap();
    // Before registration closed there is no seed.
    match conn.roles().await {
        Err(client::RelayClientError::Refused(p)) => assert_eq!(p.reason, "not-started"),
        other => panic!("{other:?}"),
    }
    let handles: Vec<_> = (0..6u64)
        .zip(created.credentials.clone())
        .map(|(v, cred)| {
            let (url, task) = (server.url.clone(), task.clone());
            tokio::spawn(async move {
                client::run_client(&url, &task, vec![v], Some(&cred), opts).await
            })
        })
        .collect();
    for h in handles {
        let (rep, st) = h.await.unwrap().unwrap();
        assert!(rep.errors.is_empty(), "{:?}", rep.errors);
        assert!(st.delivered, "{:?}", st.error);
    }
    let st = conn.status().await.unwrap();
    let doc = conn.roles().await.unwrap();
    assert!(doc.nonce.is_some(), "a deployment's seed has a nonce");
    let roles = check_roles(&st.spec, &doc, None).unwrap();
    assert_eq!(roles.committees, doc.committees);
    // Tampered documents are caught.
    let mut bad = doc.clone();
    bad.nonce = Some("00".repeat(32));
    assert_eq!(check_roles(&st.spec, &bad, None), Err(RolesMismatch::Seed));
    let mut bad = doc.clone();
    bad.keys.swap(0, 1);
    assert_eq!(check_roles(&st.spec, &bad, None), Err(RolesMismatch::Seed));
    let mut bad = doc.clone();
    bad.shufflers[0] = (bad.shufflers[0] + 1) % 6;
    assert_eq!(check_roles(&st.spec, &bad, None), Err(RolesMismatch::Roles));
    let stranger = Keypair::generate(&mut ChaCha20Rng::seed_from_u64(3)).public;
    assert_eq!(
        check_roles(&st.spec, &doc, Some((2, &stranger))),
        Err(RolesMismatch::OwnKey(2))
    );
    server.stop().await;
    // The restarted relay replays the log: the same seed, the same roles.
    let server = common::relay_on(&db).await;
    let mut conn = client::Connection::new(&server.url, &task, opts).unwrap();
    assert_eq!(conn.roles().await.unwrap(), doc);
    server.stop().await;
    let _ = std::fs::remove_dir_all(dir);
}
