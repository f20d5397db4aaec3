//! `blanket bench serve`: the service's intake and latency on loopback, durable on SQLite
//! (WAL, synchronous = FULL, group commit). Keys `intake.reports_per_second` and
//! `end_to_end.latency_seconds` are a contract; `intake.cpu_seconds`,
//! `intake.reports_per_cpu_second`, `intake.client_cpu_seconds` / `intake.server_cpu_seconds`
//! (the load generator's thread and the rest), `intake_bulk.*` (the bulk endpoint) and
//! `load_average_1m` say what the wall-clock rate cost and under which load it was measured.

use crate::cmd::service_demo::LocalService;
use crate::output::{num, print_json};
use anyhow::{bail, Context, Result};
use blanket::rng::SecureRng;
use blanket_server::client::TaskClient;
use blanket_server::task::{Protocol, TaskRequest};
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Reports per measurement.
pub const REPORTS: usize = 40_000;
/// Uploads in flight: one per HTTP/1.1 keep-alive connection, each sending its next report
/// once the previous one is acknowledged. More than one group commit's worth, so that the
/// server keeps receiving while a group is being committed (with 128, every upload in
/// flight waited in the same group and the cores idled during each commit).
pub const CONCURRENCY: usize = 512;
/// Reports per request in the bulk measurement.
pub const BULK: usize = 100;
/// Bulk requests in flight.
pub const BULK_CONCURRENCY: usize = 8;

/// Intake figures.
#[derive(Serialize, Debug, Clone)]
pub struct Intake {
    /// Reports acknowledged per second (each acknowledged only after its commit).
    pub reports_per_second: f64,
    /// Reports uploaded.
    pub reports: u64,
    /// Uploads in flight.
    pub concurrency: usize,
    /// Seconds from the first upload to the last acknowledgement.
    pub seconds: f64,
    /// CPU seconds (user + system) the whole process (client and server) spent meanwhile.
    pub cpu_seconds: f64,
    /// Reports per CPU second (client and server together): the intake's cost, less
    /// sensitive to other jobs on the machine than the wall-clock rate.
    pub reports_per_cpu_second: f64,
    /// CPU seconds of the load generator's thread (Linux; `null` elsewhere).
    pub client_cpu_seconds: Option<f64>,
    /// `cpu_seconds` less the load generator's: the server's share (Linux; `null`
    /// elsewhere).
    pub server_cpu_seconds: Option<f64>,
}

/// Bulk intake figures (`POST /tasks/{id}/reports/bulk`).
#[derive(Serialize, Debug, Clone)]
pub struct BulkIntake {
    /// Reports acknowledged per second (each acknowledged only after its commit).
    pub reports_per_second: f64,
    /// Reports uploaded.
    pub reports: u64,
    /// Reports per request.
    pub reports_per_request: usize,
    /// Requests in flight.
    pub concurrency: usize,
    /// Seconds from the first upload to the last acknowledgement.
    pub seconds: f64,
    /// CPU seconds (user + system) of the process meanwhile.
    pub cpu_seconds: f64,
}

/// End-to-end figures.
#[derive(Serialize, Debug, Clone)]
pub struct EndToEnd {
    /// Seconds from the last report's acknowledgement to the released estimate (batch cut,
    /// shuffle, forward, decrypt, aggregate, certify, release).
    pub latency_seconds: f64,
    /// Reports in the batch.
    pub batch: u64,
}

/// The benchmark's JSON.
#[derive(Serialize, Debug, Clone)]
pub struct ServeBench {
    /// Shuffler intake, one report per request (the figure the target is about).
    pub intake: Intake,
    /// Shuffler intake through the bulk endpoint (clients that batch).
    pub intake_bulk: BulkIntake,
    /// The machine's 1-minute load average when the run ended (Linux; `null` elsewhere).
    pub load_average_1m: Option<f64>,
    /// Last report to released estimate.
    pub end_to_end: EndToEnd,
    /// What is measured.
    pub measures: &'static str,
}

/// Runs `blanket bench serve`.
pub fn run(json: bool) -> Result<()> {
    let rt = crate::cmd::serve::runtime()?;
    let b = rt.block_on(async {
        let svc = LocalService::start("bench").await?;
        let out = measure(&svc).await;
        svc.stop().await;
        let mut out = out?;
        let bulk_svc = LocalService::start("bench-bulk").await?;
        let bulk = measure_bulk(&bulk_svc).await;
        bulk_svc.stop().await;
        out.intake_bulk = bulk?;
        out.load_average_1m = load_average();
        anyhow::Ok(out)
    })?;
    if json {
        return print_json(&b);
    }
    crate::outln!(
        "intake: {} reports/s ({} reports, {} in flight, {:.2} s, {:.2} CPU s: {} reports per \
         CPU s); last report to release: {} s",
        num(b.intake.reports_per_second),
        b.intake.reports,
        b.intake.concurrency,
        b.intake.seconds,
        b.intake.cpu_seconds,
        num(b.intake.reports_per_cpu_second),
        num(b.end_to_end.latency_seconds)
    );
    crate::outln!(
        "bulk intake: {} reports/s ({} reports, {} per request, {} requests in flight, {:.2} s)",
        num(b.intake_bulk.reports_per_second),
        b.intake_bulk.reports,
        b.intake_bulk.reports_per_request,
        b.intake_bulk.concurrency,
        b.intake_bulk.seconds,
    );
    if let (Some(c), Some(s)) = (b.intake.client_cpu_seconds, b.intake.server_cpu_seconds) {
        let us = |x: f64| x / b.intake.reports as f64 * 1e6;
        crate::outln!(
            "intake CPU per report: {:.1} us server, {:.1} us load generator",
            us(s),
            us(c)
        );
    }
    if let Some(l) = b.load_average_1m {
        crate::outln!("load average (1 min): {l:.2}");
    }
    Ok(())
}

/// A task forwarding batches of `min_batch`, and `n` reports for it, randomized and sealed
/// (not timed).
async fn task_and_reports(
    svc: &LocalService,
    n: usize,
    min_batch: usize,
) -> Result<(Arc<TaskClient>, Vec<Vec<u8>>)> {
    let req = TaskRequest {
        protocol: Protocol::Histogram { domain: 16 },
        eps: 1.0,
        delta: 1e-8,
        expected_users: n as u64,
        min_batch: min_batch as u64,
        deadline_unix: blanket_server::http::now_unix() + 3600,
        budget_eps: 1.0,
        budget_delta: 1e-8,
    };
    let client = svc.create(&req).await?;
    let mut rng = SecureRng::from_os()?;
    let reports: Vec<Vec<u8>> = (0..n)
        .map(|i| client.report((i % 16) as f64, &mut rng))
        .collect::<Result<_, _>>()?;
    Ok((client, reports))
}

/// CPU seconds (user + system) of this process so far, from `getrusage` (Unix; 0 elsewhere).
fn cpu_seconds() -> f64 {
    #[cfg(unix)]
    {
        rusage_seconds(libc::RUSAGE_SELF).unwrap_or(0.0)
    }
    #[cfg(not(unix))]
    {
        0.0
    }
}

/// CPU seconds (user + system) of the calling thread so far (Linux `RUSAGE_THREAD`; `None`
/// elsewhere).
fn thread_cpu_seconds() -> Option<f64> {
    #[cfg(target_os = "linux")]
    {
        rusage_seconds(libc::RUSAGE_THREAD)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// User + system seconds from `getrusage(who)`.
#[cfg(unix)]
fn rusage_seconds(who: libc::c_int) -> Option<f64> {
    // SAFETY: getrusage only writes the struct it is given, which is zero-initialized plain
    // data owned by this frame; `who` is RUSAGE_SELF or RUSAGE_THREAD, both valid.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::getrusage(who, &mut u) } != 0 {
        return None;
    }
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
    Some(t(u.ru_utime) + t(u.ru_stime))
}

/// The 1-minute load average (`/proc/loadavg`), if the system has one.
fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Uploads every report through `connections` HTTP/1.1 keep-alive connections to `url`
/// (`http://HOST:PORT/PATH`), one report per request, each connection sending its next
/// report when the previous one was answered: `connections` uploads in flight. Every upload
/// must be answered 201 (stored); returns how many were.
///
/// The load generator is deliberately lean (hyper's connection API, no pool, no URL parsing
/// per request) so that the figure measures the server; the server is the unchanged
/// `blanket serve` stack.
async fn upload_all(url: &str, reports: Vec<Vec<u8>>, connections: usize) -> Result<u64> {
    let uri: hyper::Uri = url.parse().context("upload URL")?;
    let authority = uri
        .authority()
        .context("upload URL without a host")?
        .clone();
    let addr = authority.as_str().to_string();
    let connections = connections.clamp(1, reports.len().max(1));
    let mut shares: Vec<Vec<Vec<u8>>> = (0..connections).map(|_| Vec::new()).collect();
    for (i, r) in reports.into_iter().enumerate() {
        shares[i % connections].push(r);
    }
    let mut set = tokio::task::JoinSet::new();
    for share in shares {
        let (uri, addr, host) = (uri.clone(), addr.clone(), authority.clone());
        set.spawn(async move {
            let stream = tokio::net::TcpStream::connect(&addr)
                .await
                .with_context(|| format!("cannot connect to {addr}"))?;
            stream.set_nodelay(true)?;
            let (mut send, conn) =
                hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
            let driver = tokio::spawn(conn);
            let mut stored = 0u64;
            for r in share {
                send.ready().await?;
                let req = hyper::Request::post(uri.clone())
                    .header(hyper::header::HOST, host.as_str())
                    .header(hyper::header::CONTENT_TYPE, "application/octet-stream")
                    .body(http_body_util::Full::new(hyper::body::Bytes::from(r)))?;
                let resp = send.send_request(req).await?;
                let status = resp.status();
                let body = http_body_util::BodyExt::collect(resp.into_body())
                    .await?
                    .to_bytes();
                if status != hyper::StatusCode::CREATED {
                    bail!(
                        "upload answered {status}: {}",
                        String::from_utf8_lossy(&body)
                    );
                }
                stored += 1;
            }
            drop(send);
            let _ = driver.await;
            anyhow::Ok(stored)
        });
    }
    let mut stored = 0u64;
    while let Some(r) = set.join_next().await {
        stored += r??;
    }
    Ok(stored)
}

async fn measure(svc: &LocalService) -> Result<ServeBench> {
    let (client, reports) = task_and_reports(svc, REPORTS, REPORTS).await?;
    let id = client.params().task_id.clone();
    let connections = CONCURRENCY;
    let url = client.params().upload_url.clone();
    let (t0, c0) = (Instant::now(), cpu_seconds());
    // The load generator runs on a thread of its own (a single-threaded runtime), so that
    // its CPU time can be told apart from the server's (RUSAGE_THREAD).
    let (accepted, client_cpu) = tokio::task::spawn_blocking(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the load generator's runtime")?;
        let c0 = thread_cpu_seconds();
        let stored = rt.block_on(upload_all(&url, reports, connections))?;
        let cpu = thread_cpu_seconds().zip(c0).map(|(c1, c0)| c1 - c0);
        anyhow::Ok((stored, cpu))
    })
    .await??;
    let intake_s = t0.elapsed().as_secs_f64();
    let intake_cpu = cpu_seconds() - c0;
    let t1 = Instant::now();
    let view = svc
        .wait_for(&id, REPORTS as u64, Duration::from_secs(300))
        .await?;
    let rel = svc.release(&id).await?;
    let latency = t1.elapsed().as_secs_f64();
    if accepted != REPORTS as u64 || view.reports != REPORTS as u64 || rel.reports != REPORTS as u64
    {
        bail!(
            "lost reports: {accepted} acknowledged, {} aggregated, {} released",
            view.reports,
            rel.reports
        );
    }
    Ok(ServeBench {
        intake: Intake {
            reports_per_second: REPORTS as f64 / intake_s,
            reports: REPORTS as u64,
            concurrency: connections,
            seconds: intake_s,
            cpu_seconds: intake_cpu,
            reports_per_cpu_second: REPORTS as f64 / intake_cpu,
            client_cpu_seconds: client_cpu,
            server_cpu_seconds: client_cpu.map(|c| intake_cpu - c),
        },
        intake_bulk: BulkIntake {
            reports_per_second: 0.0,
            reports: 0,
            reports_per_request: BULK,
            concurrency: BULK_CONCURRENCY,
            seconds: 0.0,
            cpu_seconds: 0.0,
        },
        load_average_1m: None,
        end_to_end: EndToEnd {
            latency_seconds: latency,
            batch: rel.reports,
        },
        measures: "one in-process service (--role all) on loopback over a fresh SQLite file \
                   (WAL, synchronous FULL, group commit); reports randomized and sealed before \
                   timing; intake = reports / seconds from the first upload to the last \
                   acknowledgement, one report per request (POST /tasks/{id}/reports), 512 \
                   HTTP/1.1 keep-alive connections with one upload in flight each, opened \
                   inside the timed window; the load generator (hyper's connection API) runs \
                   in the same process on a thread of its own: cpu_seconds is client + \
                   server, client_cpu_seconds that thread's; end to end = \
                   last acknowledgement to the released estimate; intake_bulk = the same \
                   number of reports on a fresh service through the bulk endpoint (100 reports \
                   per request, 8 requests in flight), each acknowledged after its commit",
    })
}

async fn measure_bulk(svc: &LocalService) -> Result<BulkIntake> {
    // One report short of a batch: nothing is forwarded, only the intake is measured.
    let (client, reports) = task_and_reports(svc, REPORTS, REPORTS + 1).await?;
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(BULK_CONCURRENCY)
        .build()?;
    let sem = Arc::new(tokio::sync::Semaphore::new(BULK_CONCURRENCY));
    let mut set = tokio::task::JoinSet::new();
    let (t0, c0) = (Instant::now(), cpu_seconds());
    for chunk in reports.chunks(BULK) {
        let permit = sem.clone().acquire_owned().await?;
        let (c, h, chunk) = (client.clone(), http.clone(), chunk.to_vec());
        set.spawn(async move {
            let out = c.upload_bulk(&h, &chunk).await;
            drop(permit);
            out
        });
    }
    let mut accepted = 0u64;
    while let Some(r) = set.join_next().await {
        accepted += r??.accepted;
    }
    let seconds = t0.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - c0;
    if accepted != REPORTS as u64 {
        bail!("bulk intake: {accepted} of {REPORTS} reports acknowledged as stored");
    }
    Ok(BulkIntake {
        reports_per_second: REPORTS as f64 / seconds,
        reports: REPORTS as u64,
        reports_per_request: BULK,
        concurrency: BULK_CONCURRENCY,
        seconds,
        cpu_seconds: cpu,
    })
}
