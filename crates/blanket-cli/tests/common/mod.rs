//! Helpers shared by the end-to-end tests of the `blanket` binary.
#![allow(dead_code)] // each test crate uses a subset

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// The peer token of the `blanket serve` children the tests start.
pub const TOKEN: &str = "cli-test-peer-token";

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

/// A `blanket serve` child, killed when dropped.
pub struct Server {
    pub child: Child,
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
        .recv_timeout(Duration::from_secs(60))
        .expect("the server prints its address");
    let url = line
        .strip_prefix("listening on ")
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    Server { child, url }
}

/// A port free at the time of the call (for the analyzer, whose URL the shuffler needs first).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
