//! `blanket serve`: run the shuffler, the analyzer, or both (a demo) over HTTP.

use crate::usage_bail;
use anyhow::{bail, Context, Result};
use blanket_server::{Role, ServeConfig, ALL_IN_ONE_WARNING};
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};

/// The `--role` flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RoleArg {
    /// Accepts reports and forwards shuffled batches to the analyzer.
    Shuffler,
    /// Calibrates tasks, holds their keys, aggregates batches, releases estimates.
    Analyzer,
    /// Both in one process: a demo only (the trust separation is lost).
    All,
    /// The relay of the clients' verifiable shuffle (no trusted shuffler; clients with
    /// `blanket client run`).
    Relay,
}

impl From<RoleArg> for Role {
    fn from(r: RoleArg) -> Self {
        match r {
            RoleArg::Shuffler => Role::Shuffler,
            RoleArg::Analyzer => Role::Analyzer,
            RoleArg::All => Role::All,
            RoleArg::Relay => Role::Relay,
        }
    }
}

/// Arguments of `blanket serve`.
#[derive(Args)]
pub struct ServeArgs {
    /// Which role this process plays.
    #[arg(long, value_enum)]
    pub role: RoleArg,
    /// Database URL (SQLite, created if missing), e.g. sqlite://shuffler.db.
    #[arg(long, default_value = "sqlite://blanket.db")]
    pub db: String,
    /// Address to listen on (e.g. 127.0.0.1:8080; port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// The analyzer's base URL (role shuffler).
    #[arg(long)]
    pub analyzer: Option<String>,
    /// The shuffler's base URL, as clients reach it (role analyzer).
    #[arg(long)]
    pub shuffler: Option<String>,
    /// The secret the two roles share (better given in the environment).
    #[arg(long, env = "BLANKET_PEER_TOKEN", hide_env_values = true)]
    pub peer_token: Option<String>,
    /// File holding the admin token that task create and release need (roles analyzer and
    /// all; role relay: its task create); created with a fresh random token (mode 0600) if
    /// it does not exist. Without
    /// this flag: the environment variable BLANKET_ADMIN_TOKEN, else the file
    /// ./blanket-admin-token (created if missing).
    #[arg(long, value_name = "PATH")]
    pub admin_token_file: Option<PathBuf>,
    /// Seconds a shuffler replica holds a batch it delivers before another replica sharing
    /// the database may take it over (1 to 86400).
    #[arg(long, default_value_t = blanket_server::shuffler::LEASE_SECONDS,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub lease_seconds: u64,
    /// Seconds a connection has to send a request's headers before it is closed (1 to
    /// 3600; a stranger trickling headers holds a connection no longer).
    #[arg(long, default_value_t = blanket_server::http::DEFAULT_HEADER_TIMEOUT_SECS,
          value_parser = clap::value_parser!(u64).range(1..=3_600))]
    pub header_timeout_secs: u64,
    /// Seconds a request has from its headers to its answer, body included (121 to 86400:
    /// above the relay's longest long poll, 120 s); 408 `request-timeout` after it.
    #[arg(long, default_value_t = blanket_server::http::DEFAULT_REQUEST_TIMEOUT_SECS,
          value_parser = clap::value_parser!(u64).range(121..=86_400))]
    pub request_timeout_secs: u64,
    /// Connections served at once (1 to 1048576); more wait in the listen backlog. Keep it
    /// below the process's descriptor limit (`ulimit -n`) minus the database's.
    #[arg(long, default_value_t = blanket_server::http::DEFAULT_MAX_CONNECTIONS as u64,
          value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub max_connections: u64,
    /// MiB of request bodies held at once over all requests (70 to 1048576: at least one
    /// largest batch); a request finding no room within 5 s gets 503 `overloaded`.
    #[arg(long, default_value_t = blanket_server::http::DEFAULT_BODY_BUDGET_MIB as u64,
          value_parser = clap::value_parser!(u64).range(70..=1_048_576))]
    pub body_budget_mib: u64,
}

impl ServeArgs {
    /// The connection and body limits of the flags.
    pub fn limits(&self) -> blanket_server::Limits {
        use std::time::Duration;
        blanket_server::Limits {
            header_timeout: Duration::from_secs(self.header_timeout_secs),
            request_timeout: Duration::from_secs(self.request_timeout_secs),
            max_connections: self.max_connections as usize,
            body_budget: (self.body_budget_mib as usize) << 20,
        }
    }
}

/// The environment variable holding the admin token (the token itself, not a path).
pub const ADMIN_TOKEN_ENV: &str = "BLANKET_ADMIN_TOKEN";
/// The admin token file used when neither `--admin-token-file` nor BLANKET_ADMIN_TOKEN is
/// given.
pub const DEFAULT_ADMIN_TOKEN_FILE: &str = "blanket-admin-token";

/// Reads an admin token file (surrounding white space ignored; empty is an error).
fn read_token_file(path: &Path) -> Result<String> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the admin token file {}", path.display()))?;
    let token = text.trim();
    if token.is_empty() {
        bail!("the admin token file {} is empty", path.display());
    }
    Ok(token.to_string())
}

/// Creates `path` holding `token`, readable by its owner only.
fn create_token_file(path: &Path, token: &str) -> Result<()> {
    use std::io::Write;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts
        .open(path)
        .with_context(|| format!("cannot create the admin token file {}", path.display()))?;
    writeln!(f, "{token}")
        .with_context(|| format!("cannot write the admin token file {}", path.display()))?;
    Ok(())
}

/// The admin token for a client command (`task create|release`): `--admin-token-file`, else
/// BLANKET_ADMIN_TOKEN, else ./blanket-admin-token if it exists, else none (the server will
/// refuse with 401 `admin-token-missing`).
pub fn client_admin_token(file: Option<&Path>) -> Result<Option<String>> {
    if let Some(f) = file {
        return read_token_file(f).map(Some);
    }
    if let Some(t) = std::env::var(ADMIN_TOKEN_ENV)
        .ok()
        .filter(|t| !t.is_empty())
    {
        return Ok(Some(t));
    }
    let default = Path::new(DEFAULT_ADMIN_TOKEN_FILE);
    if default.exists() {
        return read_token_file(default).map(Some);
    }
    Ok(None)
}

/// The admin token `blanket serve` uses (roles analyzer, all and relay).
struct AdminToken {
    token: String,
    /// Where it is, for the log line (never the token itself).
    source: String,
    /// The file to create holding the fresh token, once the server has started (so a
    /// failed start leaves no file behind).
    create: Option<PathBuf>,
}

/// The admin token `blanket serve` uses and where it is: `--admin-token-file` (created if
/// missing), else BLANKET_ADMIN_TOKEN, else ./blanket-admin-token (created if missing).
fn server_admin_token(file: Option<&Path>) -> Result<AdminToken> {
    let from_file = |p: &Path| -> Result<AdminToken> {
        if p.exists() {
            Ok(AdminToken {
                token: read_token_file(p)?,
                source: format!("read from {}", p.display()),
                create: None,
            })
        } else {
            // Created after the start; its directory is checked now, before the database.
            let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
            if dir.is_some_and(|d| !d.is_dir()) {
                bail!(
                    "cannot create the admin token file {}: its directory does not exist",
                    p.display()
                );
            }
            Ok(AdminToken {
                token: blanket_server::server::fresh_token()?,
                source: format!("generated into {} (mode 0600)", p.display()),
                create: Some(p.to_path_buf()),
            })
        }
    };
    if let Some(f) = file {
        return from_file(f);
    }
    if let Some(t) = std::env::var(ADMIN_TOKEN_ENV)
        .ok()
        .filter(|t| !t.is_empty())
    {
        return Ok(AdminToken {
            token: t,
            source: format!("from the environment ({ADMIN_TOKEN_ENV})"),
            create: None,
        });
    }
    from_file(Path::new(DEFAULT_ADMIN_TOKEN_FILE))
}

/// Checks the flags before anything is written (token file, database) or bound: the
/// peer flags each role needs, the database URL's scheme and the form of `--listen`
/// (usage errors, exit code 2).
fn validate(a: &ServeArgs, role: Role) -> Result<()> {
    let missing = |flag: &str, what: &str| -> Result<()> {
        usage_bail!("--role {} needs {flag} ({what})", role.name())
    };
    let given = |v: &Option<String>| v.as_deref().is_some_and(|s| !s.is_empty());
    match role {
        Role::Shuffler if !given(&a.analyzer) => {
            missing("--analyzer URL", "the analyzer's base URL")?
        }
        Role::Analyzer if !given(&a.shuffler) => missing(
            "--shuffler URL",
            "the shuffler's base URL, as clients reach it",
        )?,
        Role::Shuffler | Role::Analyzer if !given(&a.peer_token) => missing(
            "--peer-token (or BLANKET_PEER_TOKEN)",
            "the secret the shuffler and the analyzer share",
        )?,
        _ => {}
    }
    let db = a.db.as_str();
    if !(db.starts_with("sqlite:")
        || db.starts_with("postgres://")
        || db.starts_with("postgresql://"))
    {
        usage_bail!("--db must be a sqlite: URL (sqlite://PATH) or a postgres:// URL, got {db}");
    }
    let listen_ok = a.listen.parse::<std::net::SocketAddr>().is_ok()
        || a.listen
            .rsplit_once(':')
            .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
    if !listen_ok {
        usage_bail!(
            "--listen must be HOST:PORT (e.g. 127.0.0.1:8080; port 0 picks a free port), got {}",
            a.listen
        );
    }
    Ok(())
}

/// Builds the runtime the service commands run on.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Runs `blanket serve` until the process is stopped.
pub fn run(a: &ServeArgs) -> Result<()> {
    let role: Role = a.role.into();
    validate(a, role)?;
    let peer_url = match role {
        Role::Shuffler => a.analyzer.clone(),
        Role::Analyzer => a.shuffler.clone(),
        Role::All | Role::Relay => None,
    };
    if role == Role::All {
        eprintln!("{}", "!".repeat(78));
        eprintln!("{ALL_IN_ONE_WARNING}");
        eprintln!("{}", "!".repeat(78));
    }
    let admin = match role {
        Role::Analyzer | Role::All | Role::Relay => {
            Some(server_admin_token(a.admin_token_file.as_deref())?)
        }
        Role::Shuffler => None,
    };
    let config = ServeConfig {
        role,
        db: a.db.clone(),
        peer_url,
        peer_token: a.peer_token.clone(),
        admin_token: admin.as_ref().map(|t| t.token.clone()),
        lease_seconds: Some(a.lease_seconds),
    };
    runtime()?.block_on(async {
        let listener = tokio::net::TcpListener::bind(&a.listen)
            .await
            .with_context(|| format!("cannot listen on {}", a.listen))?;
        let running = blanket_server::start_with(config, a.limits(), listener).await?;
        if let Some(t) = &admin {
            if let Some(path) = &t.create {
                create_token_file(path, &t.token)?;
            }
            // Where the token is, never the token itself.
            let (what, how) = if role == Role::Relay {
                (
                    "relay task create",
                    "`blanket client run --simulate N` without --task reads it",
                )
            } else {
                (
                    "task create and release",
                    "`blanket task create|release` read it",
                )
            };
            eprintln!(
                "admin token ({what}): {}; {how} with --admin-token-file PATH or {ADMIN_TOKEN_ENV}",
                t.source
            );
        }
        // One line on stdout, for scripts and tests that start the server on port 0.
        crate::outln!("listening on {} as {}", running.url, role.name());
        running.wait().await.context("server stopped")?;
        Ok(())
    })
}
