//! The relay's HTTP surface (documented in `docs/protocol.md`, "Over the network"):
//!
//! - `POST /relay/tasks` ([`super::api::TaskSpec`]) → 201 [`super::api::TaskStatus`];
//! - `GET /relay/tasks/{task}` → [`super::api::TaskStatus`] (a run without a protocol: its
//!   decrypted messages only with the admin token, [`super::api::TaskStatus::withhold_raw_messages`]);
//! - `GET /relay/tasks/{task}/roles` → [`super::api::RolesJson`] once the run started (409
//!   `not-started` before);
//! - `POST /relay/tasks/{task}/clients` ([`super::api::RegisterRequest`]) → 201
//!   [`super::api::RegisterResponse`];
//! - `GET /relay/tasks/{task}/clients/{i}/inbox?after=SEQ&wait_ms=W` → 200 with the envelope
//!   of message `SEQ + 1` (header `blanket-seq`), 204 if none came within `W` ms, 410
//!   `run-over` once the run ended with nothing more for this client;
//! - `POST /relay/tasks/{task}/clients/{i}/messages` (headers `blanket-seq`,
//!   `blanket-signature`; body [`super::auth::frame`]d envelopes) → 200
//!   [`super::api::PostResponse`] if at least one envelope was accepted, else the first
//!   refusal as a problem.

use super::api::{PostResponse, RegisterRequest, RegisterResponse, TaskSpec};
use super::auth::{self, SEQ_HEADER, SIGNATURE_HEADER};
use super::{refusal_reason, RelayService};
use crate::http;
use crate::problem::Rejection;
use crate::wire::{hex_decode, hex_encode};
use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use blanket_crypto::schnorr::SchnorrProof;
use blanket_crypto::PublicKey;
use std::sync::Arc;
use std::time::Duration;

/// Every route the relay role answers (method, OpenAPI path), all described in the served
/// OpenAPI description (`/openapi.json`).
pub const ROUTES: [(&str, &str); 9] = [
    ("get", "/healthz"),
    ("get", "/"),
    ("get", "/openapi.json"),
    ("post", "/relay/tasks"),
    ("get", "/relay/tasks/{task}"),
    ("get", "/relay/tasks/{task}/roles"),
    ("post", "/relay/tasks/{task}/clients"),
    ("get", "/relay/tasks/{task}/clients/{client}/inbox"),
    ("post", "/relay/tasks/{task}/clients/{client}/messages"),
];

/// Largest message post of any run (a shuffle response of the largest runs, with its proof);
/// a run's own bound is [`message_limit`].
pub const MESSAGE_BODY_LIMIT: usize = 256 * 1024 * 1024;
/// [`message_limit`]: bytes every run may post at once, whatever its size.
pub const MESSAGE_BASE: u64 = 4 << 20;
/// [`message_limit`]: bytes per message of the run (clients x messages per client).
pub const MESSAGE_PER_CIPHERTEXT: u64 = 2048;

/// The largest body a client of a run with `clients` clients and `messages_per_client`
/// messages each may post: 4 MiB plus 2 KiB per message of the run, at most
/// [`MESSAGE_BODY_LIMIT`]. The largest legitimate post is a shuffler's answer (64-byte
/// ciphertexts of its lanes and the proof of shuffle) or a key holder's partial decryptions
/// (64 bytes per ciphertext), both linear in the run's messages at well under 2 KiB each
/// (docs/protocol.md: the worst client at n = 10,000 sends and receives 2.6 MB in all, this
/// bound is 24 MB there), so an honest client never meets it.
pub fn message_limit(clients: u32, messages_per_client: u32) -> usize {
    let messages = u64::from(clients) * u64::from(messages_per_client.max(1));
    (MESSAGE_BASE + MESSAGE_PER_CIPHERTEXT * messages).min(MESSAGE_BODY_LIMIT as u64) as usize
}
/// Most envelopes in one post.
pub const MAX_PARTS: usize = 8;
/// Default long-poll hold (ms).
pub const DEFAULT_WAIT_MS: u64 = 20_000;
/// Longest long-poll hold (ms).
pub const MAX_WAIT_MS: u64 = 120_000;

impl RelayService {
    /// The relay's routes.
    pub fn router(self: &Arc<Self>) -> Router {
        Router::new()
            .route("/", get(page))
            .route("/openapi.json", get(crate::analyzer::openapi))
            .route(
                "/relay/tasks",
                post(create).layer(DefaultBodyLimit::max(http::JSON_BODY_LIMIT)),
            )
            .route("/relay/tasks/{task}", get(status))
            .route("/relay/tasks/{task}/roles", get(roles))
            .route(
                "/relay/tasks/{task}/clients",
                post(register).layer(DefaultBodyLimit::max(http::JSON_BODY_LIMIT)),
            )
            .route("/relay/tasks/{task}/clients/{client}/inbox", get(inbox))
            .route(
                "/relay/tasks/{task}/clients/{client}/messages",
                post(messages),
            )
            .with_state(Arc::clone(self))
    }
}

/// The relay's status page (`GET /`): every run, its phase, round, registrations, cheaters
/// named and parties timed out; for the runs with a protocol, the budget (spent, remaining,
/// total, on the ledger of the task holding it) and the release with its certified guarantee
/// and a bar chart of the estimate, or why it was refused (generated HTML, no script, no
/// external resource; the analyzer's page's helpers, [`crate::status_page`]).
async fn page(
    State(s): State<Arc<RelayService>>,
) -> Result<axum::response::Html<String>, Rejection> {
    Ok(axum::response::Html(render_page(&s.statuses().await?)))
}

/// The relay's status page for these runs.
pub fn render_page(runs: &[super::api::TaskStatus]) -> String {
    use crate::status_page::{bar_chart, escape, n4};
    use std::fmt::Write as _;
    let mut h = String::from(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>blanket relay</title>\
         <style>body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse}\
         td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}th{background:#eee}\
         .refused{background:#fdd;border:2px solid #c00;padding:8px}</style></head><body>\
         <h1>blanket relay</h1><p>The clients' verifiable shuffle: this server only relays and verifies; \
         no party is trusted to shuffle.</p><table id=\"runs\"><tr><th>task</th>\
         <th>admission</th><th>variant</th><th>registered</th><th>phase</th><th>round</th><th>delivered</th>\
         <th>messages</th><th>cheaters named</th><th>silent</th><th>error</th>\
         <th>eps spent / budget</th><th>delta spent / budget</th><th>eps left</th><th>delta left</th></tr>",
    );
    for r in runs {
        let (eps_cell, delta_cell, eps_left, delta_left) = match &r.budget {
            Some(b) => (
                format!("{} / {}", n4(b.spent_eps), n4(b.total_eps)),
                format!("{} / {}", n4(b.spent_delta), n4(b.total_delta)),
                n4(b.remaining_eps),
                n4(b.remaining_delta),
            ),
            None => Default::default(),
        };
        // An open task's id is all a stranger needs to register: not listed while it
        // registers. A task with admission tokens needs a credential the page never shows.
        let open = r
            .spec
            .admission()
            .map_or(true, |a| a == super::api::Admission::Open);
        let id_cell = if open && r.phase == "registering" {
            "<i>open task, id not listed while registering</i>".to_string()
        } else {
            format!(
                "<a href=\"#t{id}\"><code>{id}</code></a>",
                id = escape(&r.task)
            )
        };
        let _ = write!(
            h,
            "<tr><td>{id_cell}</td><td>{}</td><td>{}</td><td>{} / {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            if open {
                "<b class=\"open\">OPEN: anyone may register</b>"
            } else {
                "tokens"
            },
            escape(&r.spec.variant),
            r.registered,
            r.spec.clients,
            escape(&r.phase),
            r.round,
            if r.delivered { "yes" } else { "no" },
            r.output.as_ref().map_or(0, |o| o.messages.len()),
            r.cheaters.len(),
            r.silent.len(),
            escape(r.error.as_deref().unwrap_or("")),
            eps_cell,
            delta_cell,
            eps_left,
            delta_left,
        );
    }
    h.push_str("</table>");
    // Per run with a protocol: its budget, and its release or why it was refused.
    for r in runs {
        let Some(b) = &r.budget else { continue };
        let open = r
            .spec
            .admission()
            .map_or(true, |a| a == super::api::Admission::Open);
        if open && r.phase == "registering" {
            continue;
        }
        let _ = write!(
            h,
            "<h2 id=\"t{id}\">Task <code>{id}</code></h2><p>{} &middot; target eps = {}, delta = {} \
             &middot; budget on the ledger of <code>{}</code>: {} release(s), eps {} of {} spent \
             ({} left), delta {} of {} spent ({} left)</p>",
            escape(r.spec.protocol.as_deref().unwrap_or("")),
            r.spec.eps.map_or(String::new(), n4),
            r.spec.delta.map_or(String::new(), n4),
            escape(&b.task),
            b.releases,
            n4(b.spent_eps),
            n4(b.total_eps),
            n4(b.remaining_eps),
            n4(b.spent_delta),
            n4(b.total_delta),
            n4(b.remaining_delta),
            id = escape(&r.task),
        );
        if let Some(p) = &r.release_refused {
            let _ = write!(
                h,
                "<p class=\"refused\" id=\"refused-{}\">Release refused ({}): {}</p>",
                escape(&r.task),
                escape(&p.reason),
                escape(&p.detail)
            );
        }
        let Some(rel) = &r.release else {
            if r.release_refused.is_none() {
                h.push_str("<p>No release yet.</p>");
            }
            continue;
        };
        let _ = write!(
            h,
            "<p>Release {} ({}) &middot; certified <b>eps = {}</b>, delta = {} for the n' = {} honest, \
             present users ({}) &middot; shuffle not private with probability {} &middot; charged \
             to the budget: eps spent {}, delta spent {} &middot; predicted RMSE per count {} \
             &middot; {} reports, {} out of the domain</p><p>trust: {}</p>",
            rel.release_id.map_or(String::new(), |i| i.to_string()),
            escape(&rel.protocol),
            n4(rel.certified_epsilon),
            n4(rel.certified_delta),
            rel.population,
            escape(&rel.method),
            n4(rel.shuffle_failure),
            rel.budget.map_or(String::new(), |b| n4(b.spent_eps)),
            rel.budget.map_or(String::new(), |b| n4(b.spent_delta)),
            n4(rel.predicted_rmse),
            rel.reports,
            rel.out_of_domain,
            escape(&rel.trust),
        );
        h.push_str(&bar_chart(
            &rel.estimate,
            &format!("estimated counts, task {}", r.task),
        ));
    }
    h.push_str("<p><a href=\"/openapi.json\">API description (OpenAPI)</a></p></body></html>");
    h
}

async fn create(
    State(s): State<Arc<RelayService>>,
    headers: axum::http::HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Rejection> {
    s.check_admin(&headers)?;
    let body = http::body(body, http::JSON_BODY_LIMIT)?;
    let spec: TaskSpec = http::json("task", &body)?;
    let st = s.create(spec).await?;
    Ok((StatusCode::CREATED, Json(st)).into_response())
}

async fn status(
    State(s): State<Arc<RelayService>>,
    Path(task): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Rejection> {
    let h = s.run(&task)?;
    let mut st = s.status_of(&h).await?;
    if s.check_admin(&headers).is_err() {
        st.withhold_raw_messages();
    }
    Ok(Json(st).into_response())
}

async fn roles(
    State(s): State<Arc<RelayService>>,
    Path(task): Path<String>,
) -> Result<Response, Rejection> {
    let h = s.run(&task)?;
    Ok(Json(h.roles().await?).into_response())
}

fn hex_field<const N: usize>(field: &'static str, s: &str) -> Result<[u8; N], Rejection> {
    let b = hex_decode(s).ok_or_else(|| Rejection::Malformed {
        what: field,
        detail: "not hex".into(),
    })?;
    let got = b.len();
    b.try_into().map_err(|_| Rejection::WrongLength {
        field,
        expected: N,
        got,
    })
}

async fn register(
    State(s): State<Arc<RelayService>>,
    Path(task): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Rejection> {
    let h = s.run(&task)?;
    let body = http::body(body, http::JSON_BODY_LIMIT)?;
    let req: RegisterRequest = http::json("registration", &body)?;
    let key_bytes: [u8; 32] = hex_field("public_key", &req.public_key)?;
    let key = PublicKey::from_bytes(&key_bytes).map_err(|e| Rejection::Malformed {
        what: "public_key",
        detail: e.to_string(),
    })?;
    let proof_bytes: [u8; 64] = hex_field("proof", &req.proof)?;
    let proof = SchnorrProof::from_bytes(&proof_bytes).map_err(|e| Rejection::Malformed {
        what: "proof",
        detail: e.to_string(),
    })?;
    // Admission first (a hash comparison), then the proof, which binds the task, the index
    // and the token.
    let token = h.admit(req.index, req.token.as_deref())?;
    if !auth::verify_register(&h.task, req.index, token.as_ref(), &key, &proof) {
        return Err(Rejection::BadSignature(
            "the proof of possession does not verify for this key, task, index and token".into(),
        ));
    }
    let index = s.register(&h, key, req.index).await?;
    Ok((
        StatusCode::CREATED,
        Json(RegisterResponse {
            task: hex_encode(&h.task),
            index,
            spec: h.spec.clone(),
        }),
    )
        .into_response())
}

fn client_index(s: &str) -> Result<u32, Rejection> {
    s.parse().map_err(|_| Rejection::OutOfRange {
        field: "client".into(),
        allowed: "a client index (decimal)".into(),
        value: s.to_string(),
    })
}

fn query_u64(q: &Option<String>, key: &str, default: u64) -> Result<u64, Rejection> {
    let Some(q) = q else { return Ok(default) };
    for pair in q.split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if k == key {
            return v.parse().map_err(|_| Rejection::OutOfRange {
                field: key.to_string(),
                allowed: "a non-negative integer".into(),
                value: v.to_string(),
            });
        }
    }
    Ok(default)
}

async fn inbox(
    State(s): State<Arc<RelayService>>,
    Path((task, client)): Path<(String, String)>,
    RawQuery(q): RawQuery,
) -> Result<Response, Rejection> {
    let h = s.run(&task)?;
    let client = client_index(&client)?;
    let after = query_u64(&q, "after", 0)?;
    let wait = query_u64(&q, "wait_ms", DEFAULT_WAIT_MS)?;
    if wait > MAX_WAIT_MS {
        return Err(Rejection::OutOfRange {
            field: "wait_ms".into(),
            allowed: format!("0..={MAX_WAIT_MS}"),
            value: wait.to_string(),
        });
    }
    match s
        .next_message(&h, client, after, Duration::from_millis(wait))
        .await?
    {
        Some(m) => Ok((
            StatusCode::OK,
            [
                (SEQ_HEADER, (after + 1).to_string()),
                ("content-type", "application/octet-stream".to_string()),
            ],
            m,
        )
            .into_response()),
        None => Ok(StatusCode::NO_CONTENT.into_response()),
    }
}

fn header<'a>(headers: &'a HeaderMap, name: &'static str) -> Result<&'a str, Rejection> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .ok_or(Rejection::Malformed {
            what: name,
            detail: "missing header".into(),
        })
}

/// A post is checked as far as it can be without its body (the task, the client index, its
/// registration, the headers) before a byte of the body is read; the body is then bounded by
/// the run's [`message_limit`] and reserved in the server's body budget.
async fn messages(
    State(s): State<Arc<RelayService>>,
    Path((task, client)): Path<(String, String)>,
    headers: HeaderMap,
    budget: Option<Extension<http::BodyBudget>>,
    body: Body,
) -> Result<Response, Rejection> {
    let h = s.run(&task)?;
    let client = client_index(&client)?;
    let seq: u64 = header(&headers, SEQ_HEADER)?
        .parse()
        .map_err(|_| Rejection::OutOfRange {
            field: SEQ_HEADER.into(),
            allowed: "a positive integer".into(),
            value: "not a number".into(),
        })?;
    let sig_bytes: [u8; 64] = hex_field(SIGNATURE_HEADER, header(&headers, SIGNATURE_HEADER)?)?;
    let sig = SchnorrProof::from_bytes(&sig_bytes).map_err(|e| Rejection::Malformed {
        what: SIGNATURE_HEADER,
        detail: e.to_string(),
    })?;
    let key = s.key_of(&h, client).await?;
    let limit = message_limit(h.params.clients, h.params.messages_per_client);
    let (body, _permit) =
        http::read_body(&headers, body, limit, budget.as_ref().map(|b| &b.0)).await?;
    if !auth::verify_post(&h.task, client, seq, &body, &key, &sig) {
        return Err(Rejection::BadSignature(format!(
            "the signature does not verify under client {client}'s registered key for this task, request number and body"
        )));
    }
    let parts: Vec<Vec<u8>> = auth::unframe(&body, MAX_PARTS)
        .ok_or(Rejection::Malformed {
            what: "message framing",
            detail: format!("expected u32 count (1..={MAX_PARTS}), then u32 length and bytes per envelope, nothing after"),
        })?
        .into_iter()
        .map(<[u8]>::to_vec)
        .collect();
    let results = s.receive(&h, client, seq, parts).await?;
    let accepted = results.iter().filter(|r| r.is_ok()).count() as u32;
    if accepted == 0 {
        if let Some(Err(first)) = results.first() {
            return Err(Rejection::RelayRefused {
                reason: refusal_reason(first),
                detail: first.to_string(),
            });
        }
    }
    let results = results
        .iter()
        .map(|r| match r {
            Ok(()) => "accepted".to_string(),
            Err(e) => refusal_reason(e).to_string(),
        })
        .collect();
    Ok(Json(PostResponse { accepted, results }).into_response())
}
