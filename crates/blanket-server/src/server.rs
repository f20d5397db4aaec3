//! Starting a role: the database, the routes, the listener.

use crate::analyzer::Analyzer;
use crate::http;
use crate::problem::Rejection;
use crate::shuffler::Shuffler;
use crate::store::Store;
use crate::wire::hex_encode;
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

/// Starts the role on `listener`.
pub async fn start(config: ServeConfig, listener: TcpListener) -> Result<Running, Rejection> {
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
        let mut running = serve(app, listener, addr, url, None, None, Some(relay));
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
    let mut running = serve(app, listener, addr, url, shuffler, analyzer, None);
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

fn serve(
    app: Router,
    listener: TcpListener,
    addr: SocketAddr,
    url: String,
    shuffler: Option<std::sync::Arc<Shuffler>>,
    analyzer: Option<std::sync::Arc<Analyzer>>,
    relay: Option<std::sync::Arc<crate::relay::RelayService>>,
) -> Running {
    let app = app
        .fallback(http::not_found)
        .method_not_allowed_fallback(http::method_not_allowed);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await
    });
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
