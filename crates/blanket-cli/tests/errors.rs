//! End-to-end tests of error handling and exit codes (0 certified, 1 runtime error, 2 usage
//! error, 3 printed but not certified), broken pipes, data files, and the values printed at
//! the edges of their ranges.

mod common;
use common::*;

use std::io::Read;
use std::process::{Command, Stdio};

#[test]
fn piping_into_a_closed_reader_exits_quietly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_blanket"))
        .args([
            "account", "shuffle", "--eps0", "1", "--n", "1000", "--delta", "1e-6",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    // Close the reading end at once, like `| head -0`.
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err)
        .expect("read stderr");
    let status = child.wait().expect("waits");
    assert_ne!(status.code(), Some(101), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!err.contains("Broken pipe"), "{err}");
}

#[test]
fn exit_codes_usage_runtime_uncertified() {
    // usage: a flag out of range (2), also from clap (2)
    fails_code(
        2,
        &[
            "account", "shuffle", "--eps0", "1", "--n", "1", "--delta", "1e-6",
        ],
        "n must be",
    );
    fails_code(2, &["account", "shuffle", "--nope"], "--nope");
    // negative numbers reach the range check instead of a parse error
    fails_code(
        2,
        &[
            "account", "compose", "--eps", "-1", "--delta", "1e-6", "--rounds", "3",
        ],
        "--eps must be",
    );
    fails_code(
        2,
        &[
            "calibrate",
            "histogram",
            "--n",
            "1e4",
            "--eps",
            "1",
            "--delta",
            "1e-6",
            "--domain",
            "-3",
        ],
        "non-negative integer",
    );
    // runtime: a missing data file (1), OS message once
    let (code, _, err) = run(&[
        "simulate",
        "scalar-sum",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--data",
        "/nonexistent/x.csv",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(err.matches("os error").count(), 1, "{err}");
    // a directory as data: the OS message is not doubled
    let dir = temp_dir("dir-as-data");
    let (code, _, err) = run(&[
        "simulate",
        "vector-sum",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--d",
        "3",
        "--data",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(err.matches("os error").count(), 1, "{err}");
    // uncertified (3): the paper's domain convention
    let (code, out, _) = run(&[
        "calibrate",
        "scalar-sum",
        "--n",
        "1e4",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--paper-domain",
    ]);
    assert_eq!(code, Some(3), "{out}");
    // --help documents the exit codes
    let (_, out, _) = run(&["--help"]);
    assert!(
        out.contains("Exit codes") && out.contains("3  a result was printed"),
        "{out}"
    );
}

#[test]
fn errors_use_user_spellings_and_blame_the_right_thing() {
    let users = words(
        "account users --protocol scalar-sum --domain 3 --eps 1 --delta 1e-6 --target-mse 0.1",
    );
    fails_code(2, &users, "--protocol scalar-sum");
    let (_, _, err) = run(&users);
    assert!(!err.contains("ScalarSum"), "{err}");
    // a CSV with one row does not blame --n
    let one = temp_file("one.csv", "0.5\n");
    let (code, _, err) = run(&[
        "simulate",
        "scalar-sum",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--data",
        one.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("1 row") && !err.contains("n must be"), "{err}");
    // --out is checked before the computation
    let (code, _, err) = run(&[
        "account",
        "curve",
        "--eps0",
        "1",
        "--n",
        "100",
        "--domain",
        "3",
        "--out",
        "/dev/null/x",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("/dev/null/x"), "{err}");
}

#[test]
fn a_number_like_first_line_is_an_error_not_a_header() {
    /// `simulate scalar-sum` at (1, 1e-6) on `file`, then `tail`.
    fn on<'a>(file: &'a std::path::Path, tail: &'a str) -> Vec<&'a str> {
        let mut args = words("simulate scalar-sum --eps 1 --delta 1e-6 --data");
        args.push(file.to_str().unwrap());
        args.extend(words(tail));
        args
    }
    let f = temp_file("hx.csv", "0.5x\n0.3\n0.4\n");
    fails_code(1, &on(&f, ""), "line 1, column 1");
    let v = json(&on(&f, "--header --reps 1 --json"));
    assert_eq!(v["n"], 2, "{v}");
    // --no-header: a word on the first line is an error
    let w = temp_file("word.csv", "value\n0.3\n0.4\n");
    fails_code(1, &on(&w, "--no-header"), "line 1");
}

#[test]
fn edge_values_print_cleanly() {
    // --reps 0 is refused, --reps 1 has no "± NaN"
    fails_code(
        2,
        &[
            "simulate",
            "scalar-sum",
            "--n",
            "100",
            "--eps",
            "1",
            "--delta",
            "1e-6",
            "--reps",
            "0",
        ],
        "--reps",
    );
    fails_code(2, &["demo", "--n", "100", "--reps", "0"], "--reps");
    let (code, out, err) = run(&[
        "simulate",
        "scalar-sum",
        "--n",
        "100",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--reps",
        "1",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!out.contains("NaN"), "{out}");
    // 1e-300 is not printed as 300 digits
    let (_, out, _) = run(&[
        "account", "shuffle", "--eps0", "1", "--n", "1000", "--delta", "1e-300",
    ]);
    assert!(
        out.contains("1e-300") && !out.contains("0.0000000000"),
        "{out}"
    );
    let (code, _, err) = run(&[
        "account", "shuffle", "--eps0", "1", "--n", "1e-300", "--delta", "1e-6",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("got 1e-300") && !err.contains("0.00000000"),
        "{err}"
    );
    // delta >= 1/n warns
    let (_, _, err) = run(&[
        "account", "shuffle", "--eps0", "1", "--n", "100", "--delta", "0.1",
    ]);
    assert!(err.contains("warning: delta"), "{err}");
    // nothing certifiable: no empty plot, non-zero exit
    let dir = temp_dir("nothing-certified");
    let (code, _, err) = run(&[
        "account",
        "curve",
        "--eps0",
        "1e-12",
        "--n",
        "2",
        "--randomizer",
        "generic",
        "--points",
        "2",
        "--delta-min",
        "1e-12",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("no certified method"), "{err}");
    assert!(!dir.join("curve.png").exists());
    // the paper's formula with no gamma < 1 says so
    let (_, out, _) = run(&[
        "calibrate",
        "vector-sum",
        "--n",
        "1e4",
        "--d",
        "10",
        "--eps",
        "1",
        "--delta",
        "1e-6",
    ]);
    assert!(out.contains("no gamma < 1"), "{out}");
}

#[test]
fn printed_privacy_numbers_are_rounded_to_the_safe_side() {
    // A setting (account eps0's largest eps0) is rounded down; a guarantee (gamma, eps, and
    // the local-DP eps0 users get at a calibrated gamma) up: compare the table with the JSON.
    let args = [
        "account", "eps0", "--n", "1e4", "--eps", "1", "--delta", "1e-6",
    ];
    let v = json(&[&args[..], &["--json"]].concat());
    let (_, out, _) = run(&args);
    let eps0 = v["eps0"].as_f64().unwrap();
    let shown: f64 = out
        .split("largest eps0 per user (a setting, rounded down): ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .expect("eps0 printed");
    assert!(shown <= eps0, "{shown} > {eps0}: {out}");
    let histogram = "calibrate histogram --n 1e4 --eps 1 --delta 1e-6 --domain 10";
    let cal = json(&words(&format!("{histogram} --json")));
    let (_, out, _) = run(&words(histogram));
    let row = |name: &str| -> f64 {
        out.lines()
            .find(|l| l.contains(name))
            .and_then(|l| l.split_whitespace().rev().nth(1))
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{name} in {out}"))
    };
    assert!(row("│ gamma") >= cal["gamma"].as_f64().unwrap(), "{out}");
    assert!(
        row("eps0 (local DP guarantee)") >= cal["eps0"].as_f64().unwrap(),
        "{out}"
    );
}

/// Item 18: progress goes to stderr only on a terminal; `--quiet` is accepted everywhere.
#[test]
fn no_progress_output_off_a_terminal_and_quiet_flag() {
    let dir = temp_dir("quiet-curve");
    let (code, _, err) = run(&[
        "--quiet",
        "account",
        "curve",
        "--eps0",
        "1",
        "--n",
        "1000",
        "--domain",
        "4",
        "--points",
        "3",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.is_empty(), "{err}");
    let (code, _, err) = run(&[
        "calibrate",
        "histogram",
        "--n",
        "1e4",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--domain",
        "8",
        "-q",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.is_empty(), "{err}");
}
