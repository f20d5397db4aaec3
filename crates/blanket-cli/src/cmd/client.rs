//! `blanket client run`: clients of the relay (`blanket serve --role relay`) for the clients'
//! verifiable shuffle: one real client (`--task ID --value V`), or `--simulate N` clients as
//! tasks of this process, each with its own keys and HTTP connection.

use crate::cmd::common::spinner;
use crate::cmd::serve::{client_admin_token, runtime};
use anyhow::{bail, Context, Result};
use blanket_protocol::driver::{SimConfig, ALL_BEHAVIOURS};
use blanket_server::relay::api::{Credential, TaskSpec};
use blanket_server::relay::client::{self, ClientOptions, SimulationReport};
use clap::{Args, Subcommand};
use rand_core::{RngCore, SeedableRng};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// `blanket client ...`.
#[derive(Subcommand)]
pub enum ClientCommand {
    /// Take part in a run of the clients' verifiable shuffle through a relay.
    Run(ClientRunArgs),
}

/// Arguments of `blanket client run`.
#[derive(Args)]
pub struct ClientRunArgs {
    /// The relay's base URL (e.g. http://127.0.0.1:8080).
    #[arg(long)]
    pub relay: String,
    /// The task (run) id, 32 hex digits. With --simulate and without --task, a task is
    /// created with the parameters below.
    #[arg(long)]
    pub task: Option<String>,
    /// This client's message (repeat for a task with several messages per client).
    #[arg(long)]
    pub value: Vec<u64>,
    /// Run N simulated clients in this process (the in-memory driver's clients, seeded by
    /// --seed, with --dropout and --malicious fractions), each with its own connection.
    #[arg(long)]
    pub simulate: Option<u32>,
    /// Simulation seed (keys, inputs, fates, and the run id and public seed of the task).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Simulated dropout fraction (also the task's bound alpha when --simulate creates it).
    #[arg(long, default_value_t = 0.0, value_parser = crate::numeric::parse_f64)]
    pub dropout: f64,
    /// Simulated malicious fraction (also the task's bound gamma when --simulate creates it).
    #[arg(long, default_value_t = 0.0, value_parser = crate::numeric::parse_f64)]
    pub malicious: f64,
    /// Shuffle layout of a created task.
    #[arg(long, default_value = "amortized")]
    pub variant: String,
    /// Statistical security of a created task.
    #[arg(long, default_value_t = 40)]
    pub sigma: u32,
    /// Output delivery of a created task fails with probability at most 2^-eta.
    #[arg(long, default_value_t = 10)]
    pub eta: u32,
    /// Proof of shuffle of a created task: tw or bg.
    #[arg(long, default_value = "tw")]
    pub proof: String,
    /// Key committees of a created task: per-lane (alternating only; its default when the
    /// lane rule has a solution) or single (as `blanket protocol run --key-committees`).
    #[arg(long, value_parser = ["per-lane", "single"])]
    pub key_committees: Option<String>,
    /// Round timeout of a created task, milliseconds.
    #[arg(long, default_value_t = blanket_server::relay::api::DEFAULT_ROUND_TIMEOUT_MS)]
    pub round_timeout_ms: u64,
    /// Long-poll hold asked of the relay per request, milliseconds.
    #[arg(long, default_value_t = client::DEFAULT_POLL_WAIT_MS)]
    pub poll_wait_ms: u64,
    /// Timeout of one HTTP request, milliseconds (must exceed --poll-wait-ms).
    #[arg(long, default_value_t = client::DEFAULT_REQUEST_TIMEOUT_MS)]
    pub request_timeout_ms: u64,
    /// Retries of a request that failed on the network or with a 5xx (a 4xx is final).
    #[arg(long, default_value_t = client::DEFAULT_RETRIES)]
    pub retries: u32,
    /// First pause before a retry, milliseconds (doubles each retry).
    #[arg(long, default_value_t = client::DEFAULT_RETRY_BACKOFF_MS)]
    pub retry_backoff_ms: u64,
    /// DP protocol of a created task (`histogram`): clients randomize their category with
    /// the task's randomizer before encrypting, and the relay releases the estimate with its
    /// certified guarantee (status key `release`).
    #[arg(long)]
    pub protocol: Option<String>,
    /// Number of categories m of a created task's --protocol histogram.
    #[arg(long, requires = "protocol", value_parser = crate::numeric::parse_u64)]
    pub domain: Option<u64>,
    /// Target epsilon of a created task's --protocol (> 0, natural log).
    #[arg(long, requires = "protocol", value_parser = crate::numeric::parse_f64)]
    pub eps: Option<f64>,
    /// Target delta of a created task's --protocol, in (0, 1).
    #[arg(long, requires = "protocol", value_parser = crate::numeric::parse_f64)]
    pub delta: Option<f64>,
    /// File holding the relay's admin token, needed to create a task (without --task)
    /// (default: BLANKET_ADMIN_TOKEN, else ./blanket-admin-token if it exists).
    #[arg(long, value_name = "PATH")]
    pub admin_token_file: Option<PathBuf>,
    /// Credentials of a task with admission tokens (the default; `docs/service.md`,
    /// "Admission to relay tasks"): a JSON file holding this client's credential
    /// `{"task", "index", "token"}` as the operator got it at task creation (its task is the
    /// default of --task). With --simulate and --task: a file with every index's credential
    /// (an array, or the creation answer). Not needed for an open task, nor with --simulate
    /// without --task (the created task's credentials are used).
    #[arg(long, value_name = "FILE")]
    pub credentials: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// The credentials in `path`: one object `{"task", "index", "token"}`, an array of them, or a
/// task creation answer (its `credentials`).
fn read_credentials(path: &std::path::Path) -> Result<Vec<Credential>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--credentials {}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("--credentials {}: not JSON", path.display()))?;
    let parsed = if v.is_array() {
        serde_json::from_value(v)
    } else if let Some(c) = v.get("credentials") {
        serde_json::from_value(c.clone())
    } else {
        serde_json::from_value(v).map(|c| vec![c])
    };
    let creds: Vec<Credential> = parsed.map_err(|e| {
        anyhow::Error::new(crate::exit::Usage(format!(
            "--credentials {}: expected {{\"task\", \"index\", \"token\"}}, an array of them or a task creation answer: {e}",
            path.display()
        )))
    })?;
    Ok(creds)
}

/// Runs `blanket client ...`.
pub fn run(c: &ClientCommand) -> Result<()> {
    match c {
        ClientCommand::Run(a) => run_client(a),
    }
}

fn options(a: &ClientRunArgs) -> Result<ClientOptions> {
    if a.request_timeout_ms <= a.poll_wait_ms {
        bail!(
            "--request-timeout-ms ({}) must exceed --poll-wait-ms ({})",
            a.request_timeout_ms,
            a.poll_wait_ms
        );
    }
    if a.poll_wait_ms > blanket_server::relay::routes::MAX_WAIT_MS {
        bail!(
            "--poll-wait-ms must be at most {}",
            blanket_server::relay::routes::MAX_WAIT_MS
        );
    }
    Ok(ClientOptions {
        poll_wait_ms: a.poll_wait_ms,
        request_timeout_ms: a.request_timeout_ms,
        retries: a.retries,
        retry_backoff_ms: a.retry_backoff_ms,
    })
}

/// The spec `--simulate` creates.
pub fn simulation_spec(a: &ClientRunArgs, n: u32) -> TaskSpec {
    TaskSpec {
        clients: n,
        variant: a.variant.clone(),
        sigma: a.sigma,
        eta: a.eta,
        alpha: a.dropout,
        gamma: a.malicious,
        proof: a.proof.clone(),
        key_committees: a.key_committees.clone(),
        round_timeout_ms: a.round_timeout_ms,
        sim_seed: Some(a.seed),
        protocol: a.protocol.clone(),
        domain: a.domain,
        eps: a.eps,
        delta: a.delta,
        ..TaskSpec::new(n)
    }
}

/// The simulation of `spec` with seed `seed`: inputs as `blanket protocol run` draws them
/// without `--protocol`, `max_dropouts` dropouts and `max_malicious` malicious clients.
pub fn simulation_config(spec: &TaskSpec, seed: u64) -> Result<SimConfig> {
    let params = spec.params().map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let m = params.messages_per_client;
    let inputs = (0..params.clients)
        .map(|_| (0..m).map(|_| rng.next_u64() >> 32).collect())
        .collect();
    Ok(SimConfig::random(
        params,
        params.max_dropouts,
        params.max_malicious,
        &ALL_BEHAVIOURS,
        inputs,
        seed,
    ))
}

fn run_client(a: &ClientRunArgs) -> Result<()> {
    let opts = options(a)?;
    let rt = runtime()?;
    match a.simulate {
        None => {
            let creds = match &a.credentials {
                Some(p) => read_credentials(p)?,
                None => Vec::new(),
            };
            if creds.len() > 1 {
                crate::usage_bail!(
                    "--credentials: one client takes one credential, the file holds {}",
                    creds.len()
                );
            }
            let cred = creds.first();
            let task = match (&a.task, cred) {
                (Some(t), Some(c)) if !t.eq_ignore_ascii_case(&c.task) => {
                    crate::usage_bail!("--task {t} and the credential's task {} differ", c.task)
                }
                (Some(t), _) => t.clone(),
                (None, Some(c)) => c.task.clone(),
                (None, None) => {
                    bail!("--task is required (or --credentials FILE, or --simulate N)")
                }
            };
            let task = &task;
            if a.value.is_empty() {
                bail!(
                    "--value is required (repeat it for a task with several messages per client)"
                );
            }
            let pb = spinner("client", a.json);
            pb.set_message("registered; waiting for the relay's requests");
            let (rep, st) = rt
                .block_on(client::run_client(
                    &a.relay,
                    task,
                    a.value.clone(),
                    cred,
                    opts,
                ))
                .context("client run")?;
            pb.finish_and_clear();
            if a.json {
                crate::outln!(
                    "{}",
                    serde_json::json!({
                        "index": rep.index,
                        "requests": rep.requests,
                        "bytes_sent": rep.bytes_sent,
                        "bytes_received": rep.bytes_received,
                        "wire_bytes_sent": rep.wire_sent,
                        "wire_bytes_received": rep.wire_received,
                        "errors": rep.errors,
                        "delivered": st.delivered,
                        "round": st.round,
                        "error": st.error,
                        "release": st.release,
                    })
                );
            } else {
                crate::outln!(
                    "client {} of task {}: {} requests handled, {} B sent, {} B received ({} B / {} B on the wire)",
                    rep.index, st.task, rep.requests, rep.bytes_sent, rep.bytes_received, rep.wire_sent, rep.wire_received
                );
                crate::outln!(
                    "run: {} after {} rounds{}",
                    if st.delivered {
                        "delivered"
                    } else {
                        "not delivered"
                    },
                    st.round,
                    st.error.map(|e| format!(": {e}")).unwrap_or_default()
                );
            }
            Ok(())
        }
        Some(n) => {
            let (spec, task, creds) = match &a.task {
                Some(t) => {
                    let st = rt
                        .block_on(async {
                            client::Connection::new(&a.relay, t, opts)?.status().await
                        })
                        .context("task status")?;
                    if st.spec.clients != n || st.spec.sim_seed != Some(a.seed) {
                        bail!(
                            "task {t} has {} clients and simulation seed {}; --simulate {n} --seed {} needs a task created with both (leave --task out to create one)",
                            st.spec.clients,
                            st.spec.sim_seed.map_or("none".to_string(), |s| s.to_string()),
                            a.seed
                        );
                    }
                    let creds = match &a.credentials {
                        Some(p) => read_credentials(p)?,
                        None => Vec::new(),
                    };
                    (st.spec, t.clone(), creds)
                }
                None => {
                    let spec = simulation_spec(a, n);
                    spec.params().map_err(|e| anyhow::anyhow!("{e}"))?;
                    let admin = client_admin_token(a.admin_token_file.as_deref())?;
                    let created = rt
                        .block_on(client::create(&a.relay, &spec, admin.as_deref()))
                        .context("creating the task")?;
                    (spec, created.status.task, created.credentials)
                }
            };
            let mut cfg = simulation_config(&spec, a.seed)?;
            // A task with a protocol: the simulated clients' messages are seeded categories
            // randomized with the task's randomizer.
            let st = rt
                .block_on(async {
                    client::Connection::new(&a.relay, &task, opts)?
                        .status()
                        .await
                })
                .context("task status")?;
            if let Some(rz) = &st.randomizer {
                cfg.inputs = blanket_server::relay::release::simulated_inputs(
                    rz,
                    cfg.params.clients,
                    a.seed,
                )
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            }
            let report = simulate(&rt, &a.relay, &task, &creds, &cfg, opts, a.json)?;
            print_simulation(&report, a.json)?;
            Ok(())
        }
    }
}

/// Runs the simulation with a progress bar (clients finished, relay round and phase).
pub fn simulate(
    rt: &tokio::runtime::Runtime,
    relay: &str,
    task: &str,
    credentials: &[Credential],
    cfg: &SimConfig,
    opts: ClientOptions,
    json: bool,
) -> Result<SimulationReport> {
    let n = cfg.params.clients;
    let finished = Arc::new(AtomicUsize::new(0));
    let pb = spinner("relay run", json);
    let report = rt.block_on(async {
        let sim = client::simulate(relay, task, credentials, cfg, opts, Arc::clone(&finished));
        tokio::pin!(sim);
        let mut conn = client::Connection::new(relay, task, opts)?;
        loop {
            tokio::select! {
                r = &mut sim => break r,
                _ = tokio::time::sleep(std::time::Duration::from_millis(500)) => {
                    if let Ok(st) = conn.status().await {
                        pb.set_message(format!(
                            "{} of {n} registered, round {}, {}, {} clients done",
                            st.registered, st.round, st.phase, finished.load(Ordering::Relaxed)
                        ));
                    }
                }
            }
        }
    });
    pb.finish_and_clear();
    report.context("simulated clients")
}

fn print_simulation(r: &SimulationReport, json: bool) -> Result<()> {
    let st = &r.status;
    let sent: u64 = r.clients.iter().map(|c| c.bytes_sent).sum();
    let recv: u64 = r.clients.iter().map(|c| c.bytes_received).sum();
    let wire: u64 = r
        .clients
        .iter()
        .map(|c| c.wire_sent + c.wire_received)
        .sum();
    let worst = r
        .clients
        .iter()
        .map(|c| c.bytes_sent + c.bytes_received)
        .max()
        .unwrap_or(0);
    let wire_worst = r
        .clients
        .iter()
        .map(|c| c.wire_sent + c.wire_received)
        .max()
        .unwrap_or(0);
    let n = r.clients.len().max(1) as f64;
    if json {
        crate::outln!(
            "{}",
            serde_json::json!({
                "task": st.task,
                "delivered": st.delivered,
                "error": st.error,
                "rounds": st.round,
                "key_committees": st.derived.key_committees,
                "cheaters_detected": st.cheaters.iter().map(|c| c.client).collect::<Vec<_>>(),
                "silent": st.silent.iter().map(|c| c.client).collect::<Vec<_>>(),
                "bytes_worst_client": worst,
                "bytes_avg_client": (sent + recv) as f64 / n,
                "wire_bytes_worst_client": wire_worst,
                "wire_bytes_avg_client": wire as f64 / n,
                "client_failures": r.failures.len(),
                "seconds": r.seconds,
                "release": st.release,
            })
        );
    } else {
        crate::outln!(
            "task {}: {} after {} rounds in {:.1} s{}",
            st.task,
            if st.delivered {
                "delivered"
            } else {
                "NOT delivered"
            },
            st.round,
            r.seconds,
            st.error
                .as_ref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        );
        crate::outln!(
            "cheaters named: {}; silent: {}; client transport failures: {}",
            st.cheaters.len(),
            st.silent.len(),
            r.failures.len()
        );
        crate::outln!(
            "bytes per client (envelopes): worst {worst}, average {:.0}; on the wire incl. HTTP: worst {wire_worst}, average {:.0}",
            (sent + recv) as f64 / n,
            wire as f64 / n
        );
        if let Some(rel) = &st.release {
            crate::outln!(
                "release ({}): certified (eps {}, delta {:e}) for the n' = {} honest, present users (target {}, {:e}; {}); predicted RMSE per count {:.2}",
                rel.protocol,
                rel.certified_epsilon,
                rel.certified_delta,
                rel.population,
                rel.target_epsilon,
                rel.target_delta,
                rel.method,
                rel.predicted_rmse
            );
            crate::outln!("estimate: {:?}", rel.estimate);
        }
    }
    Ok(())
}
