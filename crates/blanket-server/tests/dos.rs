//! No denial of service from strangers (issue 25, item 5), the reviewers' shapes on loopback,
//! bounded in count and time: large bodies for a task that does not exist (and batches
//! without the peer token) are refused before they are read, so the process's memory stays
//! flat; connections trickling their headers are closed after the header timeout; with the
//! connection cap taken by such connections, legitimate requests still get through; and
//! during every attack legitimate requests keep succeeding.
//!
//! The servers run in this test process, so its resident set (`VmRSS`, sampled every 5 ms)
//! is the servers' memory. The tests of this file run one at a time (one lock), so that one's
//! memory is not another's.

mod common;

use blanket_server::{Limits, Role, Running, ServeConfig};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Attack connections at once.
const CONNECTIONS: usize = 24;
/// Bytes each attack connection tries to send (it declares 256 MiB).
const SENT_PER_CONNECTION: usize = 8 << 20;
/// Growth of the resident set allowed during the attack: 24 x 8 MiB = 192 MiB were sent,
/// which the server used to buffer.
const RSS_GROWTH_BOUND: u64 = 48 << 20;

fn vm_rss() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb << 10)
}

/// The largest resident set seen while `f` runs.
async fn peak_rss_during<F: std::future::Future>(f: F) -> (F::Output, u64) {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let s = stop.clone();
    let sampler = std::thread::spawn(move || {
        let mut peak = vm_rss();
        while !s.load(std::sync::atomic::Ordering::Relaxed) {
            peak = peak.max(vm_rss());
            std::thread::sleep(Duration::from_millis(5));
        }
        peak.max(vm_rss())
    });
    let out = f.await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    (out, sampler.join().unwrap())
}

async fn start(role: Role, limits: Limits) -> (Running, std::path::PathBuf) {
    let dir = common::temp_dir("dos");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let running = blanket_server::start_with(
        ServeConfig {
            role,
            db: format!("sqlite://{}", dir.join("db.sqlite").display()),
            peer_url: None,
            peer_token: Some("test-token".into()),
            admin_token: Some(common::ADMIN.into()),
            lease_seconds: None,
        },
        limits,
        listener,
    )
    .await
    .unwrap();
    (running, dir)
}

/// One attack connection: headers declaring a 256 MiB body, then up to
/// [`SENT_PER_CONNECTION`] bytes as fast as the server takes them; returns the status line
/// the server answered (empty if none within 5 s) and the bytes it took.
async fn big_body(addr: std::net::SocketAddr, path: String) -> (String, usize) {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/octet-stream\r\n\
         blanket-seq: 1\r\nblanket-signature: {}\r\ncontent-length: {}\r\n\r\n",
        "00".repeat(64),
        256u64 << 20
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let (mut r, mut w) = s.into_split();
    let writer = tokio::spawn(async move {
        let chunk = vec![0x5au8; 64 << 10];
        let mut sent = 0;
        while sent < SENT_PER_CONNECTION {
            match tokio::time::timeout(Duration::from_secs(2), w.write_all(&chunk)).await {
                Ok(Ok(())) => sent += chunk.len(),
                _ => break,
            }
        }
        sent
    });
    let mut answer = vec![0u8; 512];
    let n = match tokio::time::timeout(Duration::from_secs(5), r.read(&mut answer)).await {
        Ok(Ok(n)) => n,
        _ => 0,
    };
    let sent = writer.await.unwrap();
    let text = String::from_utf8_lossy(&answer[..n]).to_string();
    (text.lines().next().unwrap_or("").to_string(), sent)
}

/// A legitimate request keeps succeeding: the status of a relay task, and a new task.
async fn legit_relay_requests(url: &str, task: &str) {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    for _ in 0..5 {
        let st = http
            .get(format!("{url}/relay/tasks/{task}"))
            .send()
            .await
            .unwrap();
        assert_eq!(st.status(), 200);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The reviewers' shape: many connections posting 256 MiB bodies to a task that does not
/// exist (the relay), and 69 MB batches without the peer token (the analyzer). Each is
/// answered 404 / 401 before its body is read; the process's resident set grows by less than
/// [`RSS_GROWTH_BOUND`] while 192 MiB are thrown at each server (the old server buffered them
/// all); legitimate requests succeed meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_bodies_from_strangers_are_refused_unread() {
    let _one = ONE_AT_A_TIME.lock().await;
    let t0 = Instant::now();
    let (relay, dir) = start(Role::Relay, Limits::default()).await;
    let spec = blanket_server::relay::api::TaskSpec::new(200);
    let task = blanket_server::relay::client::create_task(&relay.url, &spec, Some(common::ADMIN))
        .await
        .unwrap();
    let before = vm_rss();
    let ((answers, ()), peak) = peak_rss_during(async {
        let attack: Vec<_> = (0..CONNECTIONS)
            .map(|i| {
                let path = format!("/relay/tasks/{:032x}/clients/0/messages", i + 1);
                tokio::spawn(big_body(relay.addr, path))
            })
            .collect();
        let legit = legit_relay_requests(&relay.url, &task);
        let (answers, ()) = tokio::join!(
            async {
                let mut v = Vec::new();
                for a in attack {
                    v.push(a.await.unwrap());
                }
                v
            },
            legit
        );
        (answers, ())
    })
    .await;
    let sent: usize = answers.iter().map(|a| a.1).sum();
    for (status, _) in &answers {
        assert!(status.contains(" 404 "), "{status:?}");
    }
    let growth = peak.saturating_sub(before);
    eprintln!(
        "relay: {CONNECTIONS} connections sent {} MiB in all; VmRSS {} MiB before, peak {} MiB \
         (growth {} MiB)",
        sent >> 20,
        before >> 20,
        peak >> 20,
        growth >> 20
    );
    assert!(
        growth < RSS_GROWTH_BOUND,
        "resident set grew {growth} bytes"
    );
    // A registered client's post is bounded by its run's size, not 256 MiB: refused 413 from
    // the declared length (the run has 12 clients: 4 MiB + 12 x 2 KiB).
    let limit = blanket_server::relay::routes::message_limit(12, 1);
    assert_eq!(limit, (4 << 20) + 12 * 2048);
    relay.stop().await;

    // The analyzer's batch route: no peer token, no body read.
    let (all, dir2) = start(Role::All, Limits::default()).await;
    let before = vm_rss();
    let (answers, peak) = peak_rss_during(async {
        let attack: Vec<_> = (0..CONNECTIONS)
            .map(|_| tokio::spawn(big_body(all.addr, "/internal/batches".into())))
            .collect();
        let mut v = Vec::new();
        for a in attack {
            v.push(a.await.unwrap());
        }
        // Meanwhile and after: the service answers.
        let h = reqwest::get(format!("{}/healthz", all.url)).await.unwrap();
        assert_eq!(h.status(), 200);
        v
    })
    .await;
    for (status, _) in &answers {
        assert!(status.contains(" 401 "), "{status:?}");
    }
    let growth = peak.saturating_sub(before);
    eprintln!(
        "analyzer: VmRSS {} MiB before, peak {} MiB (growth {} MiB)",
        before >> 20,
        peak >> 20,
        growth >> 20
    );
    assert!(
        growth < RSS_GROWTH_BOUND,
        "resident set grew {growth} bytes"
    );
    all.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&dir2);
    assert!(t0.elapsed() < Duration::from_secs(30));
}

/// Connections that trickle their headers (one byte every 100 ms, never ending them) are
/// closed after the header timeout; with the connection cap full of them, a legitimate
/// request waits at most about one header timeout and succeeds. Before: no timeout, no cap
/// (300 such connections stayed open 70 s and locked legitimate clients out).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trickling_connections_are_closed_after_the_header_timeout() {
    let _one = ONE_AT_A_TIME.lock().await;
    let limits = Limits {
        header_timeout: Duration::from_secs(1),
        max_connections: 16,
        ..Limits::default()
    };
    let (relay, dir) = start(Role::Relay, limits).await;
    let t0 = Instant::now();
    let trickle: Vec<_> = (0..48)
        .map(|_| {
            let addr = relay.addr;
            tokio::spawn(async move {
                let start = Instant::now();
                let Ok(mut s) = TcpStream::connect(addr).await else {
                    return None;
                };
                if s.write_all(b"POST /relay/tasks HTTP/1.1\r\nx-slow: ")
                    .await
                    .is_err()
                {
                    return Some(start.elapsed());
                }
                let mut buf = [0u8; 256];
                // Trickle for at most 10 s; the server must close first.
                while start.elapsed() < Duration::from_secs(10) {
                    if s.write_all(b"a").await.is_err() {
                        return Some(start.elapsed());
                    }
                    if let Ok(r) =
                        tokio::time::timeout(Duration::from_millis(100), s.read(&mut buf)).await
                    {
                        // Closed (0), reset, or answered (408) and then closed.
                        match r {
                            Ok(0) | Err(_) => return Some(start.elapsed()),
                            Ok(_) => {}
                        }
                    }
                }
                None
            })
        })
        .collect();
    // A legitimate request while the cap (16) is full of trickling connections.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let legit_start = Instant::now();
    let h = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
        .get(format!("{}/healthz", relay.url))
        .send()
        .await
        .unwrap();
    assert_eq!(h.status(), 200);
    let legit = legit_start.elapsed();
    let mut closed_after = Vec::new();
    for t in trickle {
        let d = t.await.unwrap();
        closed_after.push(d.expect("a trickling connection was still open after 10 s"));
    }
    let longest = closed_after.iter().max().copied().unwrap_or_default();
    eprintln!(
        "48 trickling connections, cap 16, header timeout 1 s: all closed, the last after \
         {:.2} s (queued ones wait for a slot first); a legitimate request took {:.2} s",
        longest.as_secs_f64(),
        legit.as_secs_f64()
    );
    // 48 connections through 16 slots, 1 s each: three waves.
    assert!(longest < Duration::from_secs(6), "{longest:?}");
    assert!(legit < Duration::from_secs(5), "{legit:?}");
    relay.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
    assert!(t0.elapsed() < Duration::from_secs(30));
}

/// The limits are checked with the flag named.
#[test]
fn limits_out_of_range_are_refused_naming_the_flag() {
    let bad = [
        Limits {
            header_timeout: Duration::ZERO,
            ..Limits::default()
        },
        Limits {
            request_timeout: Duration::from_secs(60),
            ..Limits::default()
        },
        Limits {
            max_connections: 0,
            ..Limits::default()
        },
        Limits {
            body_budget: 1 << 20,
            ..Limits::default()
        },
    ];
    let names = [
        "header-timeout-secs",
        "request-timeout-secs",
        "max-connections",
        "body-budget-mib",
    ];
    for (l, name) in bad.iter().zip(names) {
        let e = l.check().unwrap_err().to_string();
        assert!(e.contains(name), "{e}");
    }
    assert!(Limits::default().check().is_ok());
}
