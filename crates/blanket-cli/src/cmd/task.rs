//! `blanket task create|list|show|release`: manage the analyzer's tasks over its HTTP API.

use super::common::TargetArgs;
use super::serve::{client_admin_token, runtime};
use crate::output::{kv_table, num, print_json, table};
use anyhow::{bail, Result};
use blanket_server::analyzer::TaskView;
use blanket_server::client::{fetch_params, problem_of};
use blanket_server::release::Release;
use blanket_server::task::{ClientParams, Protocol, TaskRequest};
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

/// `blanket task ...`.
#[derive(Subcommand)]
pub enum TaskCommand {
    /// Create and calibrate a task at the analyzer; prints its URL and client parameters.
    Create(CreateArgs),
    /// List the analyzer's tasks with their counts and budget.
    List(ListArgs),
    /// Show a task's client parameters and status.
    Show(TaskUrlArgs),
    /// Release the estimate of every batch not yet released (refused past the budget).
    Release(ReleaseArgs),
}

/// The `--protocol` flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProtocolArg {
    /// Histogram over --domain categories.
    Histogram,
    /// Sum of reals in [0, 1].
    ScalarSum,
    /// Sum of vectors in [0, 1]^d (--d; --t and --k calibrated unless given); each user
    /// sends t reports.
    VectorSum,
    /// DP sum of reals in [0, 1] over split-and-mix (IKOS): each client sends m shares mod
    /// q; delta = (1 + e^eps) 2^-sigma.
    IkosSum,
}

/// Arguments of `blanket task create`.
#[derive(Args)]
pub struct CreateArgs {
    /// The analyzer's base URL.
    #[arg(long)]
    pub server: String,
    /// The protocol.
    #[arg(long, value_enum)]
    pub protocol: ProtocolArg,
    /// Number of categories m (histogram; 2 to 2^26).
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub domain: Option<u64>,
    /// Fixed precision k (scalar and vector sums; default: calibrated).
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub k: Option<u64>,
    /// Dimension d of the vectors (vector sum).
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub d: Option<u64>,
    /// Fixed number t of coordinates each user reports (vector sum; default: calibrated).
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub t: Option<u64>,
    /// Security parameter sigma of the split-and-mix layer, 1 to 512 (IKOS sum; default:
    /// the smallest with (1 + e^eps) 2^-sigma <= --delta).
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub sigma: Option<u64>,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Expected number of users per release (the predicted error is stated for it).
    #[arg(long, value_parser = crate::numeric::parse_users, allow_hyphen_values = true)]
    pub n: f64,
    /// Smallest batch the shuffler forwards, in users (the guarantee is certified for it;
    /// default n).
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub min_batch: Option<u64>,
    /// How long the task accepts reports: seconds, or with a unit (90s, 30m, 12h, 7d).
    #[arg(long, default_value = "1d")]
    pub deadline: String,
    /// Total epsilon over all releases (default: eps, one release).
    #[arg(long, allow_hyphen_values = true)]
    pub budget_eps: Option<f64>,
    /// Total delta over all releases (default: delta, one release).
    #[arg(long, allow_hyphen_values = true)]
    pub budget_delta: Option<f64>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// File holding the analyzer's admin token (default: BLANKET_ADMIN_TOKEN, else
    /// ./blanket-admin-token if it exists).
    #[arg(long, value_name = "PATH")]
    pub admin_token_file: Option<PathBuf>,
}

/// Arguments of `blanket task release`.
#[derive(Args)]
pub struct ReleaseArgs {
    #[command(flatten)]
    pub task: TaskUrlArgs,
    /// File holding the analyzer's admin token (default: BLANKET_ADMIN_TOKEN, else
    /// ./blanket-admin-token if it exists).
    #[arg(long, value_name = "PATH")]
    pub admin_token_file: Option<PathBuf>,
}

/// Arguments of `blanket task list`.
#[derive(Args)]
pub struct ListArgs {
    /// The analyzer's base URL.
    #[arg(long)]
    pub server: String,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Arguments naming one task by its URL.
#[derive(Args)]
pub struct TaskUrlArgs {
    /// The task URL (http://ANALYZER/tasks/ID), as `task create` prints it.
    #[arg(long)]
    pub task: String,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Seconds of a duration such as `90`, `90s`, `30m`, `12h`, `7d`.
pub fn parse_duration(s: &str) -> Result<u64> {
    let (digits, unit) = s
        .find(|c: char| !c.is_ascii_digit())
        .map_or((s, ""), |i| s.split_at(i));
    let mult = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => bail!("--deadline must be a duration such as 90s, 30m, 12h or 7d, got {s}"),
    };
    match digits.parse::<u64>().ok().and_then(|d| d.checked_mul(mult)) {
        Some(v) if v > 0 => Ok(v),
        _ => bail!("--deadline must be a positive duration such as 90s, 30m, 12h or 7d, got {s}"),
    }
}

/// The request `task create` sends.
pub fn request(a: &CreateArgs) -> Result<TaskRequest> {
    let unused = |given: bool, flag: &str| -> Result<()> {
        if given {
            bail!(
                "{flag} does not apply to --protocol {}",
                a.protocol
                    .to_possible_value()
                    .map_or_else(String::new, |v| v.get_name().to_string())
            );
        }
        Ok(())
    };
    unused(
        a.domain.is_some() && a.protocol != ProtocolArg::Histogram,
        "--domain",
    )?;
    unused(
        a.k.is_some() && matches!(a.protocol, ProtocolArg::Histogram | ProtocolArg::IkosSum),
        "--k",
    )?;
    unused(a.d.is_some() && a.protocol != ProtocolArg::VectorSum, "--d")?;
    unused(a.t.is_some() && a.protocol != ProtocolArg::VectorSum, "--t")?;
    unused(
        a.sigma.is_some() && a.protocol != ProtocolArg::IkosSum,
        "--sigma",
    )?;
    let protocol = match a.protocol {
        ProtocolArg::Histogram => match a.domain {
            Some(domain) => Protocol::Histogram { domain },
            None => bail!("--domain is required for --protocol histogram"),
        },
        ProtocolArg::ScalarSum => Protocol::ScalarSum { k: a.k },
        ProtocolArg::VectorSum => match a.d {
            Some(d) => Protocol::VectorSum { d, t: a.t, k: a.k },
            None => bail!("--d is required for --protocol vector-sum"),
        },
        ProtocolArg::IkosSum => Protocol::IkosSum {
            sigma: match a.sigma {
                Some(s) => Some(u32::try_from(s).map_err(|_| {
                    anyhow::anyhow!("--sigma must be an integer from 1 to 512, got {s}")
                })?),
                None => None,
            },
            calibrated: None,
        },
    };
    let n = blanket::params::NumUsers::from_f64(a.n)?.get();
    let now = blanket_server::http::now_unix();
    Ok(TaskRequest {
        protocol,
        eps: a.target.eps,
        delta: a.target.delta,
        expected_users: n,
        min_batch: a.min_batch.unwrap_or(n),
        deadline_unix: now.saturating_add(parse_duration(&a.deadline)?),
        budget_eps: a.budget_eps.unwrap_or(a.target.eps),
        budget_delta: a.budget_delta.unwrap_or(a.target.delta),
    })
}

/// Adds the admin token, if there is one, as `Authorization: Bearer`.
fn with_admin(r: reqwest::RequestBuilder, token: Option<&str>) -> reqwest::RequestBuilder {
    match token {
        Some(t) => r.bearer_auth(t),
        None => r,
    }
}

async fn post_task(server: &str, req: &TaskRequest, admin: Option<&str>) -> Result<ClientParams> {
    let http = reqwest::Client::new();
    let resp = with_admin(
        http.post(format!("{}/tasks", server.trim_end_matches('/'))),
        admin,
    )
    .json(req)
    .send()
    .await?;
    if !resp.status().is_success() {
        return Err(problem_of(resp).await.into());
    }
    Ok(resp.json().await?)
}

fn task_url(server: &str, id: &str) -> String {
    format!("{}/tasks/{id}", server.trim_end_matches('/'))
}

/// Runs `blanket task ...`.
pub fn run(c: &TaskCommand) -> Result<()> {
    let rt = runtime()?;
    match c {
        TaskCommand::Create(a) => {
            let req = request(a)?;
            let admin = client_admin_token(a.admin_token_file.as_deref())?;
            let params = rt.block_on(post_task(&a.server, &req, admin.as_deref()))?;
            let url = task_url(&a.server, &params.task_id);
            if a.json {
                return print_json(&serde_json::json!({ "task_url": url, "params": params }));
            }
            print_params(&url, &params)?;
            Ok(())
        }
        TaskCommand::List(a) => {
            let views: Vec<TaskView> = rt.block_on(async {
                let resp =
                    reqwest::get(format!("{}/tasks", a.server.trim_end_matches('/'))).await?;
                if !resp.status().is_success() {
                    return Err(anyhow::Error::from(problem_of(resp).await));
                }
                Ok(resp.json().await?)
            })?;
            if a.json {
                return print_json(&views);
            }
            let rows: Vec<Vec<String>> = views
                .iter()
                .map(|v| {
                    vec![
                        v.config.id.clone(),
                        v.config.request.protocol.name().to_string(),
                        v.reports.to_string(),
                        v.unreleased.to_string(),
                        v.releases.to_string(),
                        format!("{} / {}", num(v.budget.spent_eps), num(v.budget.total_eps)),
                    ]
                })
                .collect();
            crate::outln!(
                "{}",
                table(
                    &[
                        "task",
                        "protocol",
                        "reports",
                        "unreleased",
                        "releases",
                        "eps spent / budget"
                    ],
                    &rows
                )
            );
            Ok(())
        }
        TaskCommand::Show(a) => {
            let (params, view) = rt.block_on(async {
                let http = reqwest::Client::new();
                let params = fetch_params(&http, &a.task).await?;
                let resp = http.get(format!("{}/status", a.task)).send().await?;
                if !resp.status().is_success() {
                    return Err(anyhow::Error::from(problem_of(resp).await));
                }
                let view: TaskView = resp.json().await?;
                Ok((params, view))
            })?;
            if a.json {
                return print_json(&serde_json::json!({ "params": params, "status": view }));
            }
            print_params(&a.task, &params)?;
            crate::outln!(
                "{}",
                kv_table(
                    "Status",
                    &[
                        ("batches", view.batches.to_string()),
                        ("reports", view.reports.to_string()),
                        ("rejected", view.rejected.to_string()),
                        ("duplicates", view.duplicates.to_string()),
                        ("unreleased", view.unreleased.to_string()),
                        ("releases", view.releases.to_string()),
                        ("eps spent", num(view.budget.spent_eps)),
                        ("delta spent", num(view.budget.spent_delta)),
                    ]
                )
            );
            Ok(())
        }
        TaskCommand::Release(r) => {
            let admin = client_admin_token(r.admin_token_file.as_deref())?;
            let a = &r.task;
            let rel: Release = rt.block_on(async {
                let resp = with_admin(
                    reqwest::Client::new().post(format!("{}/release", a.task)),
                    admin.as_deref(),
                )
                .send()
                .await?;
                if !resp.status().is_success() {
                    return Err(anyhow::Error::from(problem_of(resp).await));
                }
                Ok(resp.json().await?)
            })?;
            if a.json {
                return print_json(&rel);
            }
            print_release(&rel)?;
            Ok(())
        }
    }
}

fn print_params(url: &str, p: &ClientParams) -> Result<()> {
    let c = &p.config;
    let mut rows = vec![
        ("task URL", url.to_string()),
        ("upload URL", p.upload_url.clone()),
        ("protocol", p.protocol.name().to_string()),
    ];
    match p.protocol {
        Protocol::Histogram { domain } => rows.push(("domain", domain.to_string())),
        Protocol::ScalarSum { k } => rows.push(("k", k.map_or("-".into(), |k| k.to_string()))),
        Protocol::VectorSum { d, t, k } => {
            let show = |v: Option<u64>| v.map_or("-".into(), |v| v.to_string());
            rows.push(("d", d.to_string()));
            rows.push(("t (reports per user)", show(t)));
            rows.push(("k", show(k)));
        }
        Protocol::IkosSum { sigma, calibrated } => {
            rows.push(("sigma", sigma.map_or("-".into(), |s| s.to_string())));
            if let Some(c) = calibrated {
                rows.push(("modulus q", format!("2^{}", c.modulus_bits)));
                rows.push(("shares per client m", c.shares.to_string()));
                rows.push(("precision p", c.precision.to_string()));
                rows.push(("noise for h clients", c.honest.to_string()));
            }
        }
    }
    rows.extend([
        ("gamma", num(p.gamma)),
        ("eps0 (local)", crate::output::up(c.eps0)),
        (
            "certified (per release)",
            format!(
                "eps = {}, delta = {} ({}) at min_batch = {}",
                crate::output::up(c.certified.epsilon),
                crate::output::up(c.certified.delta),
                c.certified.method,
                c.request.min_batch
            ),
        ),
        (
            "predicted MSE",
            format!(
                "{} at n = {}",
                num(c.predicted_mse),
                c.request.expected_users
            ),
        ),
        (
            "budget",
            format!(
                "eps = {}, delta = {}",
                num(c.request.budget_eps),
                num(c.request.budget_delta)
            ),
        ),
        ("deadline (unix)", p.deadline_unix.to_string()),
    ]);
    crate::outln!("{}", kv_table("Task", &rows));
    Ok(())
}

/// Prints a release as a table.
pub fn print_release(r: &Release) -> Result<()> {
    crate::outln!(
        "{}",
        kv_table(
            &format!("Release {} of task {}", r.release_id, r.task_id),
            &[
                ("reports", r.reports.to_string()),
                (
                    "batches",
                    format!("{} (smallest {})", r.batches, r.smallest_batch)
                ),
                (
                    "certified",
                    format!(
                        "eps = {}, delta = {} ({})",
                        crate::output::up(r.guarantee.epsilon),
                        crate::output::up(r.guarantee.delta),
                        r.guarantee.method
                    ),
                ),
                ("predicted RMSE", num(r.predicted_rmse)),
                (
                    "budget spent",
                    format!(
                        "eps {} of {}, delta {} of {}",
                        crate::output::up(r.budget.spent_eps),
                        num(r.budget.total_eps),
                        crate::output::up(r.budget.spent_delta),
                        num(r.budget.total_delta)
                    ),
                ),
                ("estimate", r.estimate.to_string()),
            ]
        )
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_duration;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90").unwrap(), 90);
        assert_eq!(parse_duration("30m").unwrap(), 1800);
        assert_eq!(parse_duration("7d").unwrap(), 604_800);
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("5w").is_err());
        assert!(parse_duration("").is_err());
    }
}
