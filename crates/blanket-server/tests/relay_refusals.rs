//! The relay refuses what a client must not send with a typed RFC 9457 reason, never a 5xx:
//! messages for another round, another task (run), another client id, replays (of a request
//! number and of a message), bad signatures, broken framing, undecodable envelopes, posts
//! before the run started, registrations after it closed.

use blanket_protocol::driver::{self, SimClient, SimConfig};
use blanket_protocol::Envelope;
use blanket_server::relay::api::{RegisterRequest, TaskSpec};
use blanket_server::relay::auth::{self, SEQ_HEADER, SIGNATURE_HEADER};
use blanket_server::wire::hex_encode;
use blanket_server::{Problem, Role, ServeConfig};
use rand_chacha03::ChaCha20Rng;
use rand_core06::SeedableRng;

const SEED: u64 = 21;
/// The relay's admin token in this test.
const ADMIN: &str = "relay-refusals-admin";
const N: u32 = 10;

struct Api {
    http: reqwest::Client,
    base: String,
    rng: ChaCha20Rng,
}

impl Api {
    async fn expect_problem(r: reqwest::Response, status: u16, reason: &str) {
        assert_eq!(r.status().as_u16(), status, "status for {reason}");
        let ct = r.headers()["content-type"].to_str().unwrap().to_string();
        assert_eq!(ct, "application/problem+json");
        let p: Problem = r.json().await.unwrap();
        assert_eq!(p.reason, reason, "{}", p.detail);
        assert_eq!(p.status, status);
    }

    async fn post(
        &mut self,
        task: &str,
        path_client: &str,
        seq: u64,
        body: Vec<u8>,
        signer: &SimClient,
        signed_client: u32,
    ) -> reqwest::Response {
        let t: [u8; 16] = blanket_server::wire::hex_decode(task)
            .unwrap()
            .try_into()
            .unwrap();
        let sig = auth::sign_post(&t, signed_client, seq, &body, signer.keys(), &mut self.rng);
        self.http
            .post(format!(
                "{}/relay/tasks/{task}/clients/{path_client}/messages",
                self.base
            ))
            .header(SEQ_HEADER, seq.to_string())
            .header(SIGNATURE_HEADER, hex_encode(&sig.to_bytes()))
            .body(body)
            .send()
            .await
            .unwrap()
    }

    async fn register(
        &mut self,
        task: &str,
        c: &SimClient,
        index: Option<u32>,
    ) -> reqwest::Response {
        let t: [u8; 16] = blanket_server::wire::hex_decode(task)
            .unwrap()
            .try_into()
            .unwrap();
        let proof = auth::register_proof(&t, index, None, c.keys(), &mut self.rng);
        self.http
            .post(format!("{}/relay/tasks/{task}/clients", self.base))
            .json(&RegisterRequest {
                public_key: hex_encode(&c.keys().public.to_bytes()),
                proof: hex_encode(&proof.to_bytes()),
                index,
                token: None,
            })
            .send()
            .await
            .unwrap()
    }
}

fn rewrap(bytes: &[u8], f: impl FnOnce(&mut Envelope)) -> Vec<u8> {
    let mut e = Envelope::from_bytes(bytes).unwrap();
    f(&mut e);
    e.to_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_posts_are_refused_with_typed_reasons() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = blanket_server::start(
        ServeConfig {
            role: Role::Relay,
            db: "sqlite::memory:".into(),
            peer_url: None,
            peer_token: None,
            admin_token: Some(ADMIN.into()),
            lease_seconds: None,
        },
        listener,
    )
    .await
    .unwrap();
    let mut api = Api {
        http: reqwest::Client::new(),
        base: server.url.clone(),
        rng: ChaCha20Rng::seed_from_u64(7),
    };
    // An open task: admission is tested in relay_admission.rs.
    let spec = TaskSpec {
        alpha: 0.0,
        gamma: 0.0,
        sim_seed: Some(SEED),
        admission: Some("open".into()),
        ..TaskSpec::new(N)
    };
    let params = spec.params().unwrap();
    let cfg = SimConfig::random(params, 0, 0, &[], vec![vec![1]; N as usize], SEED);
    let mut clients = SimClient::all(&cfg).unwrap();

    // Task creation needs the operator's admin token (a task spends a budget; a
    // continuation spends another task's): none, or a wrong one, is a 401 and creates
    // nothing.
    let r = api
        .http
        .post(format!("{}/relay/tasks", api.base))
        .json(&spec)
        .send()
        .await
        .unwrap();
    Api::expect_problem(r, 401, "admin-token-missing").await;
    let r = api
        .http
        .post(format!("{}/relay/tasks", api.base))
        .bearer_auth("not-the-token")
        .json(&spec)
        .send()
        .await
        .unwrap();
    Api::expect_problem(r, 401, "admin-token-wrong").await;
    match blanket_server::relay::client::create_task(&api.base, &spec, None).await {
        Err(blanket_server::relay::client::RelayClientError::Refused(p)) => {
            assert_eq!(p.reason, "admin-token-missing", "{p:?}")
        }
        other => panic!("{other:?}"),
    }
    assert!(server
        .relay
        .as_ref()
        .unwrap()
        .statuses()
        .await
        .unwrap()
        .is_empty());

    // Task creation out of range, unknown task.
    let r = api
        .http
        .post(format!("{}/relay/tasks", api.base))
        .bearer_auth(ADMIN)
        .json(&TaskSpec {
            variant: "diagonal".into(),
            ..TaskSpec::new(N)
        })
        .send()
        .await
        .unwrap();
    Api::expect_problem(r, 422, "out-of-range").await;
    let r = api
        .http
        .get(format!("{}/relay/tasks/{}", api.base, "00".repeat(16)))
        .send()
        .await
        .unwrap();
    Api::expect_problem(r, 404, "unknown-task").await;
    let task = blanket_server::relay::client::create_task(&api.base, &spec, Some(ADMIN))
        .await
        .unwrap();

    // Registration: a proof of possession for another key; a key twice.
    let t: [u8; 16] = blanket_server::wire::hex_decode(&task)
        .unwrap()
        .try_into()
        .unwrap();
    let wrong = auth::register_proof(&t, Some(0), None, clients[1].keys(), &mut api.rng);
    let r = api
        .http
        .post(format!("{}/relay/tasks/{task}/clients", api.base))
        .json(&RegisterRequest {
            public_key: hex_encode(&clients[0].keys().public.to_bytes()),
            proof: hex_encode(&wrong.to_bytes()),
            index: Some(0),
            token: None,
        })
        .send()
        .await
        .unwrap();
    Api::expect_problem(r, 401, "bad-signature").await;
    assert_eq!(
        api.register(&task, &clients[0], Some(0))
            .await
            .status()
            .as_u16(),
        201
    );
    Api::expect_problem(
        api.register(&task, &clients[0], Some(1)).await,
        409,
        "duplicate",
    )
    .await;
    Api::expect_problem(
        api.register(&task, &clients[1], Some(N)).await,
        422,
        "out-of-range",
    )
    .await;
    // A post before the run started; a post for an unregistered index.
    let early = auth::frame(&[vec![0u8; 8]]);
    Api::expect_problem(
        api.post(&task, "0", 1, early.clone(), &clients[0], 0).await,
        409,
        "not-started",
    )
    .await;
    Api::expect_problem(
        api.post(&task, "1", 1, early, &clients[1], 1).await,
        422,
        "out-of-range",
    )
    .await;
    // A registered client declaring a body over its run's bound (4 MiB + 2 KiB per message):
    // 413 from the headers, before a byte of the body is sent (issue 25, item 5).
    {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let limit = blanket_server::relay::routes::message_limit(N, 1);
        let t: [u8; 16] = blanket_server::wire::hex_decode(&task)
            .unwrap()
            .try_into()
            .unwrap();
        let sig = auth::sign_post(&t, 0, 1, b"", clients[0].keys(), &mut api.rng);
        let mut s = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        let head = format!(
            "POST /relay/tasks/{task}/clients/0/messages HTTP/1.1\r\nhost: x\r\n\
             {SEQ_HEADER}: 1\r\n{SIGNATURE_HEADER}: {}\r\ncontent-length: {}\r\n\r\n",
            hex_encode(&sig.to_bytes()),
            limit + 1
        );
        s.write_all(head.as_bytes()).await.unwrap();
        let mut answer = vec![0u8; 1024];
        let n = tokio::time::timeout(std::time::Duration::from_secs(10), s.read(&mut answer))
            .await
            .unwrap()
            .unwrap();
        let answer = String::from_utf8_lossy(&answer[..n]);
        assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
        assert!(answer.contains("too-large"), "{answer}");
    }
    for i in 1..N {
        assert_eq!(
            api.register(&task, &clients[i as usize], Some(i))
                .await
                .status()
                .as_u16(),
            201
        );
    }
    let extra = SimClient::all(&SimConfig::random(
        params,
        0,
        0,
        &[],
        vec![vec![1]; N as usize],
        SEED + 1,
    ))
    .unwrap();
    Api::expect_problem(
        api.register(&task, &extra[0], None).await,
        410,
        "task-closed",
    )
    .await;

    // The first committee member's DKG request, and its honest answer.
    let roles = driver::roles_for(&params, SEED);
    let c = roles.committee[0];
    let other = (0..N).find(|i| !roles.committee.contains(i)).unwrap();
    let r = api
        .http
        .get(format!(
            "{}/relay/tasks/{task}/clients/{c}/inbox?after=0&wait_ms=5000",
            api.base
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(r.headers()[SEQ_HEADER].to_str().unwrap(), "1");
    let request = r.bytes().await.unwrap().to_vec();
    let reply = clients[c as usize].act(&request).replies.pop().unwrap();
    let cs = c.to_string();
    let me = &clients[c as usize];

    // Another client's id: signed by `other` for index c, or by c's key for index `other`.
    let body = auth::frame(std::slice::from_ref(&reply));
    let impostor = &clients[other as usize];
    Api::expect_problem(
        api.post(&task, &cs, 1, body.clone(), impostor, c).await,
        401,
        "bad-signature",
    )
    .await;
    Api::expect_problem(
        api.post(&task, &other.to_string(), 1, body.clone(), me, c)
            .await,
        401,
        "bad-signature",
    )
    .await;
    // Broken framing; an envelope that does not decode (from a client not asked: not named).
    Api::expect_problem(
        api.post(&task, &cs, 1, body[..body.len() - 1].to_vec(), me, c)
            .await,
        400,
        "malformed",
    )
    .await;
    let garbage = auth::frame(&[vec![0xff; 40]]);
    Api::expect_problem(
        api.post(&task, &other.to_string(), 1, garbage, impostor, other)
            .await,
        400,
        "malformed-envelope",
    )
    .await;
    // Another task (run), another round, another sender, another recipient.
    let b = auth::frame(&[rewrap(&reply, |e| e.run[0] ^= 1)]);
    Api::expect_problem(api.post(&task, &cs, 2, b, me, c).await, 409, "wrong-run").await;
    let b = auth::frame(&[rewrap(&reply, |e| e.round += 1)]);
    Api::expect_problem(api.post(&task, &cs, 3, b, me, c).await, 409, "wrong-round").await;
    let b = auth::frame(&[rewrap(&reply, |e| e.sender = other)]);
    Api::expect_problem(
        api.post(&task, &cs, 4, b, me, c).await,
        409,
        "sender-mismatch",
    )
    .await;
    let b = auth::frame(&[rewrap(&reply, |e| e.recipient = other)]);
    Api::expect_problem(api.post(&task, &cs, 5, b, me, c).await, 409, "misaddressed").await;
    // A message from a client not asked in this round.
    let b = auth::frame(&[rewrap(&reply, |e| e.sender = other)]);
    Api::expect_problem(
        api.post(&task, &other.to_string(), 2, b, impostor, other)
            .await,
        409,
        "not-expected",
    )
    .await;
    // The honest answer is accepted; its request number again is a replay; the same message
    // under a new request number is a replay of the message.
    // (Both in one post: the round may close as soon as this member answered.)
    let twice = auth::frame(&[reply.clone(), reply.clone()]);
    let r = api.post(&task, &cs, 6, twice.clone(), me, c).await;
    assert_eq!(r.status().as_u16(), 200);
    let pr: blanket_server::relay::api::PostResponse = r.json().await.unwrap();
    assert_eq!(pr.results, ["accepted", "replay"]);
    Api::expect_problem(api.post(&task, &cs, 6, twice, me, c).await, 409, "replay").await;
    Api::expect_problem(
        api.post(&task, &cs, 5, body.clone(), me, c).await,
        409,
        "replay",
    )
    .await;
    // Missing headers, a bad index in the path, a long poll out of range.
    let r = api
        .http
        .post(format!(
            "{}/relay/tasks/{task}/clients/{c}/messages",
            api.base
        ))
        .body(vec![1u8])
        .send()
        .await
        .unwrap();
    Api::expect_problem(r, 400, "malformed").await;
    let r = api
        .http
        .get(format!("{}/relay/tasks/{task}/clients/abc/inbox", api.base))
        .send()
        .await
        .unwrap();
    Api::expect_problem(r, 422, "out-of-range").await;
    let r = api
        .http
        .get(format!(
            "{}/relay/tasks/{task}/clients/{c}/inbox?wait_ms=999999999",
            api.base
        ))
        .send()
        .await
        .unwrap();
    Api::expect_problem(r, 422, "out-of-range").await;
    // Nothing was logged twice and the relay still answers.
    let st: serde_json::Value = api
        .http
        .get(format!("{}/relay/tasks/{task}", api.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(st["cheaters"].as_array().unwrap().is_empty(), "{st}");
    assert_eq!(st["error"], serde_json::Value::Null, "{st}");
    // The run is on the relay's status page.
    let page = api.http.get(format!("{}/", api.base)).send().await.unwrap();
    assert_eq!(page.status().as_u16(), 200);
    assert!(page.text().await.unwrap().contains(&task));
    server.stop().await;
}
