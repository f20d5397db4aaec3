//! Helpers shared by the end-to-end tests of the `blanket` binary.
#![allow(dead_code)] // each test crate uses a subset

use std::path::PathBuf;
use std::process::{Command, Output};

/// The words of a command line (split at white space): `words("account shuffle --n 1e4")`.
pub fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// The number at `key` of a JSON object (panics naming the key if it is not a number).
pub fn num(v: &serde_json::Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

/// Runs the binary with `args`.
pub fn blanket(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_blanket"))
        .args(args)
        .output()
        .expect("the blanket binary runs")
}

/// Runs a command that must succeed and print one JSON object.
pub fn json(args: &[&str]) -> serde_json::Value {
    let out = blanket(args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON on stdout")
}

/// Runs a command that must fail cleanly: non-zero exit, no panic, stderr containing `needle`.
pub fn fails_with(args: &[&str], needle: &str) {
    let out = blanket(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} should fail");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(
        err.contains(needle),
        "{args:?}: expected {needle:?} in {err}"
    );
}

/// A fresh temporary directory for this test process and `name`.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("blanket-cli-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A file `name` with `contents` in a fresh temporary directory.
pub fn temp_file(name: &str, contents: &str) -> PathBuf {
    let path = temp_dir(&format!("file-{name}")).join(name);
    std::fs::write(&path, contents).expect("write temp file");
    path
}

/// Runs a command that must exit with `code` and print one JSON object.
pub fn json_code(code: i32, args: &[&str]) -> serde_json::Value {
    let out = blanket(args);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON on stdout")
}

/// Runs a command and returns its exit code, stdout and stderr.
pub fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = blanket(args);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs a command that must fail with exit code `code`, no panic, and `needle` in stderr.
pub fn fails_code(code: i32, args: &[&str], needle: &str) {
    let (c, _, err) = run(args);
    assert_eq!(c, Some(code), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(
        err.contains(needle),
        "{args:?}: expected {needle:?} in {err}"
    );
}

/// A relay (`blanket serve --role relay`) as a child process on 127.0.0.1; killed
/// (SIGKILL) and reaped when dropped.
pub struct Relay(pub std::process::Child);

impl Drop for Relay {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The admin token of the relays [`relay`] starts (task create needs it).
pub const RELAY_ADMIN: &str = "cli-test-relay-admin";

/// A file in `dir` holding [`RELAY_ADMIN`], for `client run --admin-token-file`.
pub fn relay_admin_file(dir: &std::path::Path) -> String {
    let p = dir.join("relay-admin-token");
    std::fs::write(&p, RELAY_ADMIN).expect("write the admin token file");
    p.display().to_string()
}

/// Starts a relay on `db` (a sqlx URL) listening on 127.0.0.1:`port`; waits (at most 120 s)
/// until it prints its address.
pub fn relay(db: &str, port: u16) -> Relay {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_blanket"))
        .args(["serve", "--role", "relay", "--db", db, "--listen"])
        .env("BLANKET_ADMIN_TOKEN", RELAY_ADMIN)
        .arg(format!("127.0.0.1:{port}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("blanket serve starts");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let relay = Relay(child);
    let line = rx
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("the relay prints its address");
    assert!(line.starts_with("listening on "), "{line:?}");
    relay
}

/// The peer token of the `blanket serve` children the tests start.
pub const TOKEN: &str = "cli-test-peer-token";

/// A `blanket serve` child, killed when dropped.
pub struct Server {
    pub child: std::process::Child,
    pub url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `blanket serve ARGS` (the peer token in the environment) and waits for the line
/// naming its address.
pub fn serve(args: &[&str]) -> Server {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_blanket"))
        .arg("serve")
        .args(args)
        .env("BLANKET_PEER_TOKEN", TOKEN)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("blanket serve starts");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the server prints its address");
    let url = line
        .strip_prefix("listening on ")
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    Server { child, url }
}

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Spawns the binary with `args` (stdout and stderr captured).
pub fn spawn(args: &[&str]) -> std::process::Child {
    use std::process::Stdio;
    Command::new(env!("CARGO_BIN_EXE_blanket"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the blanket binary runs")
}

/// Waits for `child` at most `secs` seconds; kills it (SIGKILL) and fails the test when it
/// runs longer.
pub fn wait_bounded(child: std::process::Child, secs: u64, what: &str) -> Output {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(secs)) {
        Ok(out) => out.expect("wait for the child"),
        Err(_) => {
            // The child is ours (spawned above) and still running: end it by its id.
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            panic!("{what} did not finish within {secs} s");
        }
    }
}

/// Runs the binary with `args`, at most `secs` seconds; it must succeed and print one JSON
/// object.
pub fn json_bounded(args: &[&str], secs: u64) -> serde_json::Value {
    let out = wait_bounded(spawn(args), secs, &format!("{args:?}"));
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON on stdout")
}

/// A fresh database on the PostgreSQL test cluster (`BLANKET_TEST_PG_URL`, set by
/// scripts/test.d/setup-postgres.sh), or `None` with a loud message when it is not set.
pub fn pg_database(label: &str) -> Option<String> {
    use sqlx::Connection;
    let base = match std::env::var("BLANKET_TEST_PG_URL") {
        Ok(u) if !u.is_empty() => u,
        _ => {
            eprintln!(
                "\n!!! SKIPPED ({label}): the PostgreSQL part needs BLANKET_TEST_PG_URL \
                 (scripts/test sources scripts/test.d/setup-postgres.sh, which sets it) !!!\n"
            );
            return None;
        }
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut b = [0u8; 8];
    blanket::rng::RngCore::fill_bytes(&mut blanket::rng::SecureRng::from_os().unwrap(), &mut b);
    let name = format!(
        "blanket_{label}_{}",
        b.iter().map(|x| format!("{x:02x}")).collect::<String>()
    );
    rt.block_on(async {
        let mut c = sqlx::PgConnection::connect(&base).await.unwrap();
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut c)
            .await
            .unwrap();
    });
    let (prefix, _) = base.rsplit_once('/').unwrap();
    Some(format!("{prefix}/{name}"))
}
