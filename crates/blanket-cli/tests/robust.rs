//! Robustness of the `blanket` binary (issue 26, items 4 to 8, 11): no panic on a failed
//! write, negative numbers reach the range checks, no abort or runaway on accepted values,
//! validation before side effects, one man page per subcommand.

mod common;
use common::*;

use std::process::{Command, Stdio};

/// Runs `args` with stdout on /dev/full (every write fails with ENOSPC).
fn run_into_full_disk(args: &[&str]) -> (Option<i32>, String) {
    let full = std::fs::File::options()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let out = Command::new(env!("CARGO_BIN_EXE_blanket"))
        .args(args)
        .stdout(Stdio::from(full))
        .stderr(Stdio::piped())
        .output()
        .expect("runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_full_stdout_is_exit_1_with_a_message_not_a_panic() {
    let dir = temp_dir("full-stdout");
    let exp = dir.join("exp");
    let cases: Vec<Vec<&str>> = vec![
        words("calibrate histogram --n 1e4 --domain 8 --eps 1 --delta 1e-6"),
        words("account shuffle --eps0 1 --n 1000 --delta 1e-6"),
        words("demo --n 2000 --reps 1"),
        words("protocol run --clients 4"),
        words("audit histogram --n 8 --domain 3 --eps0 2 --trials 200 --seed 3"),
        vec![
            "experiment",
            "vector-sum",
            "--sweep",
            "t",
            "--quick",
            "--out",
            exp.to_str().expect("utf-8"),
        ],
        words("completions bash"),
        words("man"),
        words("--help"),
        words("calibrate histogram --n 1e4 --domain 8 --eps 1 --delta 1e-6 --json"),
    ];
    for args in &cases {
        let (code, err) = run_into_full_disk(args);
        assert_eq!(code, Some(1), "{args:?}: {err}");
        assert!(
            err.contains("writing to stdout failed") && err.contains("No space left"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A reader that has gone (`blanket ... | head -0`): the process ends quietly by SIGPIPE, as
/// `cat` does (status 141 in a shell), never exit code 0 and never a panic.
#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_by_sigpipe_not_exit_0() {
    use std::os::unix::process::ExitStatusExt;
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_blanket"))
        .args(words("account shuffle --eps0 1 --n 1000 --delta 1e-6"))
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.signal(), Some(13), "{:?}: {err}", out.status);
    assert!(!err.contains("panicked"), "{err}");
}

/// Issue 26, item 8: `protocol run --clients -1` said "unexpected argument '-1' found" and
/// `--dropout -0.1` "unexpected argument '-0' found": the range checks answer instead.
#[test]
fn negative_numbers_reach_the_range_checks() {
    for (args, flag) in [
        ("protocol run --clients -1", "--clients"),
        ("protocol run --clients 10 --sigma -3", "--sigma"),
        ("bench --n -5", "--n"),
        (
            "simulate histogram --n -1e3 --domain 4 --eps 1 --delta 1e-6",
            "--n",
        ),
    ] {
        let (code, _, err) = run(&words(args));
        assert_eq!(code, Some(2), "{args}: {err}");
        assert!(!err.contains("unexpected argument"), "{args}: {err}");
        assert!(err.contains(flag), "{args}: {err}");
    }
    // Its exit code and wording are item 2's and 9's (the range check of the parameters).
    let (code, _, err) = run(&words("protocol run --clients 10 --dropout -0.1"));
    assert!(
        !err.contains("unexpected argument") && code != Some(101),
        "{err}"
    );
    assert!(err.contains("-0.1"), "{err}");
}

/// Runs `args` in `dir` and returns (exit code, stderr, seconds).
fn run_in(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, String, f64) {
    let t = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_blanket"))
        .args(args)
        .current_dir(dir)
        .env_remove("BLANKET_ADMIN_TOKEN")
        .env_remove("BLANKET_PEER_TOKEN")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        t.elapsed().as_secs_f64(),
    )
}

/// Issue 26, item 4: `compare frequency --n 1e12` tried to allocate 4 TB and `protocol run
/// --clients 1e9` 24 GB (SIGABRT). The memory is checked first: exit 2 at once, naming the
/// largest value that fits.
#[test]
fn values_that_do_not_fit_in_memory_are_refused_not_aborted() {
    let dir = temp_dir("memory");
    for (args, flag) in [
        ("protocol run --clients 1e9", "--clients"),
        (
            "compare frequency --n 1e12 --items 100 --eps 1 --delta 1e-6",
            "--n",
        ),
        (
            "protocol run --clients 10 --protocol histogram --eps 1 --delta 1e-6 --domain 4e9",
            "--domain",
        ),
        (
            "compare frequency --n 1e4 --items 4e9 --eps 1 --delta 1e-6",
            "--items",
        ),
        (
            "simulate frequency --protocol dpcs --n 1e12 --items 100 --eps 1 --delta 1e-6",
            "--n",
        ),
        (
            "simulate frequency --protocol tss --n 1e4 --items 4e9 --eps 1 --delta 1e-6",
            "--items",
        ),
    ] {
        let (code, err, secs) = run_in(&dir, &words(args));
        assert_eq!(code, Some(2), "{args}: {err}");
        assert!(
            err.contains(&format!("the largest {flag} that fits is about")),
            "{args}: {err}"
        );
        assert!(secs < 10.0, "{args}: {secs} s");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 26, item 7: `serve` wrote ./blanket-admin-token or created the database before
/// failing on a bad flag; `compare sum --plot DIR` failed after the simulation with a Debug
/// dump; `simulate ikos-sum --n 1e12` and `demo --n 1e12` refused after seconds of work.
/// Everything is validated first (exit 2, nothing written).
#[test]
fn bad_flags_are_refused_before_any_side_effect_or_work() {
    let dir = temp_dir("validate-first");
    let png_dir = dir.join("plots");
    std::fs::create_dir_all(&png_dir).expect("dir");
    let png_dir = png_dir.to_str().expect("utf-8").to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            words("serve --role analyzer --peer-token t --listen 127.0.0.1:0"),
            "--shuffler",
        ),
        (
            words("serve --role shuffler --peer-token t --listen 127.0.0.1:0"),
            "--analyzer",
        ),
        (words("serve --role all --listen garbage"), "--listen"),
        (words("serve --role relay --listen nowhere"), "--listen"),
        (
            words("serve --role all --listen 127.0.0.1:0 --db garbage://x"),
            "--db",
        ),
        (
            vec![
                "compare", "sum", "--n", "1e4", "--eps", "1", "--delta", "1e-8", "--plot", &png_dir,
            ],
            "--plot",
        ),
        (
            words("compare sum --n 1e4 --eps 1 --delta 1e-8 --plot out.jpg"),
            "--plot",
        ),
        (
            words("compare frequency --n 1e4 --items 10 --eps 0.5 --delta 1e-6 --plot out.svg"),
            "--plot",
        ),
        (words("simulate ikos-sum --n 1e12 --eps 1"), "--n"),
        (words("simulate ikos-vector --n 1e12 --eps 1 --d 2"), "--n"),
        (words("demo --n 1e12"), "2^35"),
        (
            words("simulate histogram --n 1e12 --domain 4 --eps 1 --delta 1e-6"),
            "2^35",
        ),
    ];
    for (args, needle) in &cases {
        let (code, err, secs) = run_in(&dir, args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(
            !err.contains("panicked") && !err.contains("Error("),
            "{args:?}: {err}"
        );
        assert!(secs < 5.0, "{args:?}: {secs} s");
    }
    // An admin token file that cannot be created: refused before the database is created.
    let (code, err, _) = run_in(
        &dir,
        &words("serve --role all --listen 127.0.0.1:0 --admin-token-file no-such-dir/token"),
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("no-such-dir/token"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name())
        .filter(|f| f != "plots")
        .collect();
    assert!(
        left.is_empty(),
        "files written by refused commands: {left:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 26, item 5: `compare sum` simulated every user (n = 1e7: 238 s, 2.3 GB; 1e12 ran
/// on) and `bench --n 1e12` ran silently past a minute: both refuse at once, naming the cap;
/// above 2^20 users compare sum gives the predicted MSE only and says why.
#[test]
fn runaway_sizes_are_capped() {
    for (args, cap) in [
        (
            "compare sum --n 1e12 --eps 1 --delta 1e-13",
            "34359738368 (2^35)",
        ),
        ("bench --n 1e12", "100000000 (1e8)"),
    ] {
        let t = std::time::Instant::now();
        let (code, _, err) = run(&words(args));
        assert_eq!(code, Some(2), "{args}: {err}");
        assert!(err.contains(cap), "{args}: {err}");
        assert!(t.elapsed().as_secs_f64() < 5.0, "{args}");
    }
    let t = std::time::Instant::now();
    let v = json(&words("compare sum --n 4e6 --eps 1 --delta 1e-8 --json"));
    assert!(t.elapsed().as_secs_f64() < 30.0, "{v}");
    let why = v["not_observed"].as_str().expect("not_observed");
    assert!(why.contains("1048576 (2^20)"), "{why}");
    for row in v["protocols"].as_array().expect("rows") {
        assert!(row["observed_mse"].is_null(), "{row}");
        assert!(row["predicted_mse"].is_number(), "{row}");
    }
}

/// Issue 26, item 12: `protocol run --help` said the alternating variant certifies the
/// histogram only (vector-sum with t = 1 runs and is certified) and `compare sum --help`
/// left out the ikos-sum-alternating row.
#[test]
fn help_texts_name_what_the_commands_do() {
    let (code, out, _) = run(&words("protocol run --help"));
    assert_eq!(code, Some(0));
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("alternating variant: histogram, and vector-sum with --t 1"),
        "{flat}"
    );
    let (code, out, _) = run(&words("compare --help"));
    assert_eq!(code, Some(0));
    assert!(out.contains("ikos-sum-alternating"), "{out}");
    let (code, out, _) = run(&words("compare sum --help"));
    assert_eq!(code, Some(0));
    assert!(out.contains("ikos-sum-alternating"), "{out}");
}

/// Issue 26, item 11: `blanket man` listed 16 subcommand pages that did not exist and
/// refilled the exit-code table into one paragraph. `man --out DIR` writes every page that
/// any page lists, and each page lists the exit codes one per tagged paragraph.
#[test]
fn man_writes_every_page_it_lists() {
    let dir = temp_dir("man");
    let (code, out, err) = run(&["man", "--out", dir.to_str().expect("utf-8")]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("man pages into"), "{out}");
    let pages: Vec<String> = std::fs::read_dir(&dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    for page in [
        "blanket.1",
        "blanket-calibrate.1",
        "blanket-calibrate-histogram.1",
        "blanket-protocol-run.1",
        "blanket-man.1",
    ] {
        assert!(pages.iter().any(|p| p == page), "{page} missing: {pages:?}");
    }
    let mut listed = 0;
    for page in &pages {
        let text = std::fs::read_to_string(dir.join(page)).expect("read page");
        for line in text.lines() {
            let name = line.replace("\\-", "-");
            if let Some(stem) = name
                .strip_suffix("(1)")
                .filter(|s| s.starts_with("blanket-"))
            {
                listed += 1;
                assert!(
                    pages.iter().any(|p| *p == format!("{stem}.1")),
                    "{page} lists {stem}(1), not written: {pages:?}"
                );
            }
        }
        let exit = &text[text
            .find(".SH \"EXIT STATUS\"")
            .expect("EXIT STATUS section")..];
        for code in ["0", "1", "2", "3"] {
            assert!(
                exit.contains(&format!(".TP\n\\fB{code}\\fR\n")),
                "{page}: {exit}"
            );
        }
    }
    assert!(
        listed >= pages.len() - 1,
        "{listed} listed, {} pages",
        pages.len()
    );
    let (code, top, _) = run(&["man"]);
    assert_eq!(code, Some(0));
    assert_eq!(
        top,
        std::fs::read_to_string(dir.join("blanket.1")).expect("blanket.1")
    );
    let _ = std::fs::remove_dir_all(&dir);
}
