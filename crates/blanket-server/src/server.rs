//! Starting a role: the database, the routes, the listener.

use crate::analyzer::Analyzer;
use crate::http;
use crate::http::Limits;
use crate::problem::Rejection;
use crate::shuffler::Shuffler;
use crate::store::Store;
use crate::wire::hex_encode;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use blanket::rng::{RngCore, SecureRng};
use std::net::SocketAddr;
use tokio::net::TcpListener;

/// Which role a process plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Accepts reports, forwards shuffled batches.
    Shuffler,
    /// Holds the keys, aggregates, releases.
    Analyzer,
    /// Both in one process: a demo; the trust separation is lost.
    All,
    /// The relay of the clients' verifiable shuffle ([`crate::relay`]): no trusted shuffler.
    Relay,
}

impl Role {
    /// The role's name (`--role`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Shuffler => "shuffler",
            Self::Analyzer => "analyzer",
            Self::All => "all",
            Self::Relay => "relay",
        }
    }
}

/// Printed (and shown on the status page) when both roles run in one process.
pub const ALL_IN_ONE_WARNING: &str =
    "WARNING: --role all runs the shuffler and the analyzer in ONE process: the operator of this \
process sees both the connections and the decrypted messages, so the trust separation of the \
shuffle model is LOST. Use it for a demo only; deploy the roles as separate processes run by \
separate parties.";

/// A role's configuration.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// The role.
    pub role: Role,
    /// Database URL (`sqlite://PATH`).
    pub db: String,
    /// The other role's base URL (the analyzer's for a shuffler, the shuffler's for an
    /// analyzer); ignored with `--role all`.
    pub peer_url: Option<String>,
    /// The secret shared by the two roles; with `--role all`, generated if absent.
    pub peer_token: Option<String>,
    /// The operator's secret for the state-changing admin routes (task create and release;
    /// the relay's task create): required with `--role analyzer` and `--role relay`; with
    /// `--role all`, generated if absent (read it from [`Running::admin_token`]). Ignored by
    /// the shuffler.
    pub admin_token: Option<String>,
    /// How long a shuffler replica holds a batch it delivers before another replica may
    /// take it over (default [`crate::shuffler::LEASE_SECONDS`]).
    pub lease_seconds: Option<u64>,
}

/// A running server.
pub struct Running {
    /// Where it listens.
    pub addr: SocketAddr,
    /// `http://ADDR`.
    pub url: String,
    /// The shuffler, if this process runs it.
    pub shuffler: Option<std::sync::Arc<Shuffler>>,
    /// The analyzer, if this process runs it.
    pub analyzer: Option<std::sync::Arc<Analyzer>>,
    /// The relay, if this process runs it.
    pub relay: Option<std::sync::Arc<crate::relay::RelayService>>,
    /// The admin token, if this process runs the analyzer or the relay (generated with
    /// `--role all` when none was given).
    pub admin_token: Option<String>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Running {
    /// Stops accepting connections and waits for the server to end.
    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        let _ = (&mut self.task).await;
    }

    /// Waits until the server ends (it ends on an I/O error only).
    pub async fn wait(self) -> std::io::Result<()> {
        self.task
            .await
            .map_err(|e| std::io::Error::other(e.to_string()))?
    }
}

fn need(v: Option<String>, field: &str, allowed: &str) -> Result<String, Rejection> {
    v.filter(|s| !s.is_empty())
        .ok_or_else(|| Rejection::OutOfRange {
            field: field.to_string(),
            allowed: allowed.to_string(),
            value: "none".into(),
        })
}

/// Starts the role on `listener` with the default [`Limits`].
pub async fn start(config: ServeConfig, listener: TcpListener) -> Result<Running, Rejection> {
    start_with(config, Limits::default(), listener).await
}

/// Starts the role on `listener` with these connection and body limits.
pub async fn start_with(
    config: ServeConfig,
    limits: Limits,
    listener: TcpListener,
) -> Result<Running, Rejection> {
    limits.check()?;
    let addr = listener
        .local_addr()
        .map_err(|e| Rejection::Storage(e.to_string()))?;
    let url = format!("http://{addr}");
    let store = Store::open(&config.db).await?;
    if config.role == Role::Relay {
        let admin_token = need(
            config.admin_token,
            "admin-token",
            "the operator's admin token (relay task create)",
        )?;
        let relay = crate::relay::RelayService::open(store, admin_token.clone()).await?;
        let app = Router::new()
            .route(
                "/healthz",
                get(|| async { Json(serde_json::json!({"role": "relay"})) }),
            )
            .merge(relay.router());
        let mut running = serve(app, listener, limits, addr, url, None, None, Some(relay));
        running.admin_token = Some(admin_token);
        return Ok(running);
    }
    let (peer_url, token) = match config.role {
        Role::All => {
            let token = match config.peer_token.filter(|t| !t.is_empty()) {
                Some(t) => t,
                None => fresh_token()?,
            };
            (url.clone(), token)
        }
        Role::Shuffler => (
            need(config.peer_url, "analyzer", "the analyzer's base URL")?,
            need(
                config.peer_token,
                "peer-token",
                "the secret shared with the analyzer",
            )?,
        ),
        Role::Relay => unreachable_relay()?,
        Role::Analyzer => (
            need(config.peer_url, "shuffler", "the shuffler's base URL")?,
            need(
                config.peer_token,
                "peer-token",
                "the secret shared with the shuffler",
            )?,
        ),
    };
    let admin_token = match (config.role, config.admin_token.filter(|t| !t.is_empty())) {
        (_, Some(t)) => Some(t),
        (Role::All, None) => Some(fresh_token()?),
        (Role::Analyzer, None) => Some(need(
            None,
            "admin-token",
            "the operator's admin token (task create and release)",
        )?),
        _ => None,
    };
    let lease = config
        .lease_seconds
        .unwrap_or(crate::shuffler::LEASE_SECONDS);
    let role = config.role;
    let mut app = Router::new();
    let mut shuffler = None;
    let mut analyzer = None;
    if matches!(role, Role::Shuffler | Role::All) {
        let s = Shuffler::start(store.clone(), peer_url.clone(), token.clone(), lease).await?;
        app = app.merge(s.router());
        shuffler = Some(s);
    }
    if matches!(role, Role::Analyzer | Role::All) {
        let a = Analyzer::new(
            store,
            peer_url,
            token,
            admin_token.clone().unwrap_or_default(),
            role == Role::All,
        )?;
        app = app.merge(a.router());
        analyzer = Some(a);
    }
    // Liveness, and for the analyzer the batches it refused as already stored (a batch
    // delivered twice: zero unless a delivery's answer was lost or a lease expired while
    // its holder was still delivering).
    let dup = analyzer.clone();
    app = app.route(
        "/healthz",
        get(move || async move {
            let mut v = serde_json::json!({
                "role": role.name(),
                "trust_separated": role != Role::All,
            });
            if let Some(a) = &dup {
                v["duplicate_batches"] = a.duplicate_batches().into();
            }
            Json(v)
        }),
    );
    let mut running = serve(app, listener, limits, addr, url, shuffler, analyzer, None);
    running.admin_token = admin_token;
    Ok(running)
}

/// A fresh random secret (32 bytes from the OS CSPRNG, hex).
pub fn fresh_token() -> Result<String, Rejection> {
    let mut b = [0u8; 32];
    SecureRng::from_os()
        .map_err(|e| Rejection::Storage(e.to_string()))?
        .fill_bytes(&mut b);
    Ok(hex_encode(&b))
}

/// The relay role returns before the peer configuration (it has no peer).
fn unreachable_relay() -> Result<(String, String), Rejection> {
    Err(Rejection::Storage("the relay role has no peer".into()))
}

#[allow(clippy::too_many_arguments)]
fn serve(
    app: Router,
    listener: TcpListener,
    limits: Limits,
    addr: SocketAddr,
    url: String,
    shuffler: Option<std::sync::Arc<Shuffler>>,
    analyzer: Option<std::sync::Arc<Analyzer>>,
    relay: Option<std::sync::Arc<crate::relay::RelayService>>,
) -> Running {
    let timeout = limits.request_timeout;
    let app = app
        .fallback(http::not_found)
        .method_not_allowed_fallback(http::method_not_allowed)
        .layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| async move {
                match tokio::time::timeout(timeout, next.run(req)).await {
                    Ok(r) => r,
                    Err(_) => Rejection::RequestTimeout {
                        seconds: timeout.as_secs(),
                    }
                    .into_response(),
                }
            },
        ))
        .layer(axum::Extension(http::BodyBudget::new(limits.body_budget)));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(accept_loop(listener, app, limits, stopped));
    Running {
        addr,
        url,
        shuffler,
        analyzer,
        relay,
        admin_token: None,
        stop: Some(stop),
        task,
    }
}

/// Serves connections until `stopped`: at most `limits.max_connections` at once (the loop
/// accepts no more until one ends; the rest wait in the kernel's listen backlog), each closed
/// if it does not send a request's headers within `limits.header_timeout` (hyper's header
/// read timeout, with tokio's timer). On stop: no new connection, idle ones closed, requests
/// in flight answered, then it returns.
async fn accept_loop(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    stopped: tokio::sync::oneshot::Receiver<()>,
) -> std::io::Result<()> {
    use std::sync::Arc;
    let cap = limits.max_connections;
    let slots = Arc::new(tokio::sync::Semaphore::new(cap));
    let (shut, _) = tokio::sync::watch::channel(false);
    tokio::pin!(stopped);
    loop {
        let slot = tokio::select! {
            s = Arc::clone(&slots).acquire_owned() => s.map_err(std::io::Error::other)?,
            _ = &mut stopped => break,
        };
        let stream = tokio::select! {
            a = listener.accept() => match a {
                Ok((s, _)) => s,
                Err(e) => {
                    // Out of descriptors or a connection reset before accept: wait, go on.
                    eprintln!("blanket: accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut stopped => break,
        };
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let mut shut_rx = shut.subscribe();
        let header_timeout = limits.header_timeout;
        tokio::spawn(async move {
            let _slot = slot;
            let mut b = hyper::server::conn::http1::Builder::new();
            b.timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(header_timeout);
            let conn = b.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = shut_rx.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
        });
    }
    let _ = shut.send(true);
    // Every connection gave its slot back: all ended.
    let _ = slots.acquire_many(cap as u32).await;
    Ok(())
}
