//! Issue 25, item 2: admission control for relay tasks (`docs/service.md`, "Admission to relay
//! tasks"). A task has admission tokens unless an open one is asked for: a stranger without a
//! credential cannot register, a token is for one index and is single-use, the tokens appear
//! only in the creation answer (never in the status JSON or on the status page), a captured
//! registration replays at no other index, with no other token, for no other task, and an open
//! task is marked open while its id is kept off the status page during registration.

mod common;

use blanket_crypto::Keypair;
use blanket_server::relay::api::{Credential, RegisterRequest, TaskSpec};
use blanket_server::relay::auth;
use blanket_server::relay::client::{self, RelayClientError};
use blanket_server::wire::{hex_decode, hex_encode};
use blanket_server::Problem;
use rand_chacha03::ChaCha20Rng;
use rand_core06::SeedableRng;

fn spec(n: u32, admission: Option<&str>) -> TaskSpec {
    TaskSpec {
        alpha: 0.0,
        gamma: 0.0,
        admission: admission.map(Into::into),
        ..TaskSpec::new(n)
    }
}

/// A registration of `keys` for `task` at `index` with `token` (hex), its proof bound to them.
fn registration(
    task: &str,
    keys: &Keypair,
    index: Option<u32>,
    token: Option<&str>,
    rng: &mut ChaCha20Rng,
) -> RegisterRequest {
    let t: [u8; 16] = hex_decode(task).unwrap().try_into().unwrap();
    let tok: Option<[u8; 32]> = token.map(|k| hex_decode(k).unwrap().try_into().unwrap());
    let proof = auth::register_proof(&t, index, tok.as_ref(), keys, rng);
    RegisterRequest {
        public_key: hex_encode(&keys.public.to_bytes()),
        proof: hex_encode(&proof.to_bytes()),
        index,
        token: token.map(Into::into),
    }
}

async fn send(base: &str, task: &str, req: &RegisterRequest) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{base}/relay/tasks/{task}/clients"))
        .json(req)
        .send()
        .await
        .unwrap()
}

async fn expect(r: reqwest::Response, status: u16, reason: &str) {
    assert_eq!(r.status().as_u16(), status, "status for {reason}");
    let p: Problem = r.json().await.unwrap();
    assert_eq!(p.reason, reason, "{}", p.detail);
}

async fn page(base: &str) -> String {
    reqwest::get(format!("{base}/"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

async fn status_json(base: &str, task: &str) -> String {
    reqwest::get(format!("{base}/relay/tasks/{task}"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stranger_without_a_credential_cannot_register() {
    let server = common::relay_on("sqlite::memory:").await;
    let base = server.url.clone();
    let mut rng = ChaCha20Rng::seed_from_u64(25);
    let created = client::create(&base, &spec(4, None), Some(common::ADMIN))
        .await
        .unwrap();
    let task = created.status.task.clone();
    // Admission is on by default: one credential per index, returned once.
    assert_eq!(created.status.spec.admission.as_deref(), Some("tokens"));
    let creds: Vec<Credential> = created.credentials.clone();
    assert_eq!(
        creds.iter().map(|c| c.index).collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
    assert!(creds.iter().all(|c| c.task == task && c.token.len() == 64));
    // Nothing that lets a stranger register is shown: no token in the status or on the page.
    let (st, pg) = (status_json(&base, &task).await, page(&base).await);
    for c in &creds {
        assert!(!st.contains(&c.token) && !pg.contains(&c.token));
    }
    assert!(!st.contains("credentials"), "{st}");

    let stranger = Keypair::generate(&mut rng);
    // No token; another index's token; a made-up token; a token without its index.
    let r = registration(&task, &stranger, Some(0), None, &mut rng);
    expect(send(&base, &task, &r).await, 401, "admission-token-missing").await;
    let r = registration(&task, &stranger, Some(0), Some(&creds[1].token), &mut rng);
    expect(send(&base, &task, &r).await, 401, "admission-token-wrong").await;
    let r = registration(&task, &stranger, Some(0), Some(&"ab".repeat(32)), &mut rng);
    expect(send(&base, &task, &r).await, 401, "admission-token-wrong").await;
    let r = registration(&task, &stranger, None, Some(&creds[0].token), &mut rng);
    expect(send(&base, &task, &r).await, 422, "out-of-range").await;
    // The client library without a credential is refused the same way.
    let mut conn = client::Connection::new(&base, &task, common::relay_client_options()).unwrap();
    match conn.register(&stranger, None, None, &mut rng).await {
        Err(RelayClientError::Refused(p)) => assert_eq!(p.reason, "admission-token-missing"),
        other => panic!("{other:?}"),
    }
    assert_eq!(conn.status().await.unwrap().registered, 0);

    // The holder of credential 0 registers, once: the token is single-use.
    let holder = Keypair::generate(&mut rng);
    let reg = conn
        .register(&holder, None, Some(&creds[0]), &mut rng)
        .await
        .unwrap();
    assert_eq!(reg.index, 0);
    let again = Keypair::generate(&mut rng);
    match conn.register(&again, None, Some(&creds[0]), &mut rng).await {
        Err(RelayClientError::Refused(p)) => assert_eq!(p.reason, "duplicate"),
        other => panic!("{other:?}"),
    }
    assert_eq!(conn.status().await.unwrap().registered, 1);
    server.stop().await;
}

/// The proof of possession binds the task, the index and the token: a registration captured
/// on the way (or refused) cannot be replayed at another index, with another token (even a
/// valid one the attacker holds), or at another task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_captured_registration_does_not_replay_at_another_index() {
    let server = common::relay_on("sqlite::memory:").await;
    let base = server.url.clone();
    let mut rng = ChaCha20Rng::seed_from_u64(26);

    // With admission tokens: the attacker holds credential 1 and replays the victim's
    // registration (key and proof for index 0 with token 0) at index 1 with its own token.
    let created = client::create(&base, &spec(4, None), Some(common::ADMIN))
        .await
        .unwrap();
    let task = created.status.task.clone();
    let creds = created.credentials.clone();
    let victim = Keypair::generate(&mut rng);
    let captured = registration(&task, &victim, Some(0), Some(&creds[0].token), &mut rng);
    let replay = RegisterRequest {
        index: Some(1),
        token: Some(creds[1].token.clone()),
        ..captured.clone()
    };
    expect(send(&base, &task, &replay).await, 401, "bad-signature").await;
    // The captured registration itself is valid where it was meant to go.
    assert_eq!(send(&base, &task, &captured).await.status().as_u16(), 201);

    // On an open task (no token): a registration for index 2 replays neither at index 3 nor
    // at the relay's choice, nor at another open task.
    let open = client::create(&base, &spec(4, Some("open")), Some(common::ADMIN))
        .await
        .unwrap();
    assert!(open.credentials.is_empty());
    let open_task = open.status.task.clone();
    let other = client::create_task(&base, &spec(4, Some("open")), Some(common::ADMIN))
        .await
        .unwrap();
    let victim = Keypair::generate(&mut rng);
    let captured = registration(&open_task, &victim, Some(2), None, &mut rng);
    for index in [Some(3), None] {
        let replay = RegisterRequest {
            index,
            ..captured.clone()
        };
        expect(send(&base, &open_task, &replay).await, 401, "bad-signature").await;
    }
    expect(send(&base, &other, &captured).await, 401, "bad-signature").await;
    // A token on an open task is refused (there is nothing to check it against).
    let with_token = registration(
        &open_task,
        &victim,
        Some(2),
        Some(&"cd".repeat(32)),
        &mut rng,
    );
    expect(
        send(&base, &open_task, &with_token).await,
        422,
        "out-of-range",
    )
    .await;
    let r = send(&base, &open_task, &captured).await;
    assert_eq!(r.status().as_u16(), 201);
    server.stop().await;
}

/// An open task is asked for explicitly and marked open (spec, status page); its id, all a
/// stranger needs to register, is not on the status page while it registers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_task_is_marked_open_and_not_listed_while_registering() {
    let server = common::relay_on("sqlite::memory:").await;
    let base = server.url.clone();
    let open = client::create(&base, &spec(3, Some("open")), Some(common::ADMIN))
        .await
        .unwrap();
    let closed = client::create_task(&base, &spec(3, None), Some(common::ADMIN))
        .await
        .unwrap();
    assert_eq!(open.status.spec.admission.as_deref(), Some("open"));
    let pg = page(&base).await;
    assert!(!pg.contains(&open.status.task), "{pg}");
    assert!(pg.contains("OPEN: anyone may register"), "{pg}");
    assert!(pg.contains(&closed), "{pg}");
    // An unknown admission value is refused naming the field.
    let bad = TaskSpec {
        admission: Some("anyone".into()),
        ..spec(3, None)
    };
    match client::create_task(&base, &bad, Some(common::ADMIN)).await {
        Err(RelayClientError::Refused(p)) => {
            assert_eq!(p.reason, "out-of-range");
            assert!(p.detail.contains("admission"), "{}", p.detail);
        }
        other => panic!("{other:?}"),
    }
    server.stop().await;
}
