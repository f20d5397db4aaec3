//! `blanket serve`: run the shuffler, the analyzer, or both (a demo) over HTTP.

use anyhow::{Context, Result};
use blanket_server::{Role, ServeConfig, ALL_IN_ONE_WARNING};
use clap::{Args, ValueEnum};

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
    let config = ServeConfig {
        role,
        db: a.db.clone(),
        peer_url,
        peer_token: a.peer_token.clone(),
    };
    runtime()?.block_on(async {
        let listener = tokio::net::TcpListener::bind(&a.listen)
            .await
            .with_context(|| format!("cannot listen on {}", a.listen))?;
        let running = blanket_server::start(config, listener).await?;
        // One line on stdout, for scripts and tests that start the server on port 0.
        println!("listening on {} as {}", running.url, role.name());
        running.wait().await.context("server stopped")?;
        Ok(())
    })
}
