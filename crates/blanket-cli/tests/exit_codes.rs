//! Issue 26 item 2: the exit-code contract, both ways, over every subcommand
//! (`crates/blanket-cli/src/exit.rs`): 0 success with every printed guarantee certified,
//! 1 runtime error, 2 usage error, 3 a result printed that is NOT certified. One table:
//! each row is a command line and the code it must exit with; a failure lists every row
//! that disagrees.

mod common;

use common::{blanket, temp_file, words};

const OK: i32 = 0;
const RUNTIME: i32 = 1;
const USAGE: i32 = 2;
const NOT_CERTIFIED: i32 = 3;

/// (command line, expected exit code). Every case is fast (well under a second or two).
const CASES: &[(&str, i32)] = &[
    // --- success: every printed guarantee certified
    ("calibrate histogram --n 1e4 --eps 1 --delta 1e-6 --domain 10", OK),
    ("calibrate scalar-sum --n 1e4 --eps 1 --delta 1e-6", OK),
    ("calibrate vector-sum --n 1e5 --d 10 --t 1 --eps 1 --delta 1e-6", OK),
    ("calibrate ikos-sum --n 1e4 --eps 1", OK),
    ("calibrate ikos-sum --n 1e6 --eps 30", OK),
    ("calibrate ikos-sum --n 1e4 --eps 1 --dropout 0.05 --malicious 0.05", OK),
    ("calibrate ikos-histogram --n 1e4 --domain 10 --eps 1", OK),
    ("calibrate ikos-vector --n 1e4 --d 3 --eps 1", OK),
    ("simulate histogram --n 1000 --eps 1 --delta 1e-6 --domain 4 --reps 2", OK),
    ("simulate scalar-sum --n 1000 --eps 1 --delta 1e-6 --reps 2", OK),
    ("simulate vector-sum --n 2000 --d 4 --eps 1 --delta 1e-3 --reps 2", OK),
    ("simulate ikos-sum --n 200 --eps 1 --reps 2", OK),
    ("simulate ikos-histogram --n 200 --domain 4 --eps 1 --reps 2", OK),
    ("simulate ikos-vector --n 200 --d 2 --eps 1 --reps 2", OK),
    ("simulate frequency --protocol dpcs --n 20000 --items 5 --eps 1 --delta 1e-3 --reps 1", OK),
    ("simulate frequency --protocol dpdg --n 2000 --items 5 --eps 0.5 --delta 1e-3 --reps 1", OK),
    ("simulate frequency --protocol tss --n 20000 --items 5 --eps 1 --delta 1e-3 --reps 1", OK),
    ("compare sum --n 500 --eps 1 --delta 1e-6 --reps 1", OK),
    ("account shuffle --eps0 1 --n 1e4 --delta 1e-6", OK),
    ("account compose --eps 0.1 --delta 1e-6 --rounds 10 --method kov", OK),
    ("account eps0 --n 1e4 --eps 1 --delta 1e-6", OK),
    ("account users --protocol histogram --domain 10 --eps 1 --delta 1e-6 --target-mse 0.001", OK),
    ("account error --protocol histogram --domain 10 --n 1e4 --eps 1 --delta 1e-6", OK),
    ("audit histogram --n 8 --domain 3 --eps0 2 --trials 200", OK),
    ("protocol run --clients 20 --seed 1", OK),
    ("completions bash", OK),
    ("man", OK),
    // --- not certified: a result printed, exit 3
    ("account shuffle --eps0 1 --n 3 --delta 0.01 --randomizer krr --domain 3 --method variation-ratio", NOT_CERTIFIED),
    ("account eps0 --n 1e4 --eps 1 --delta 1e-6 --randomizer krr --domain 3 --method variation-ratio --json", NOT_CERTIFIED),
    ("calibrate scalar-sum --n 1e4 --eps 1 --delta 1e-6 --paper-domain", NOT_CERTIFIED),
    ("simulate frequency --protocol tss --n 20000 --items 5 --eps 1 --delta 1e-3 --reps 1 --chi-gamma 3", NOT_CERTIFIED),
    ("simulate frequency --protocol tss-prime --n 20000 --items 5 --eps 1 --delta 1e-3 --reps 1 --chi-gamma 3 --phi 2 --json", NOT_CERTIFIED),
    ("simulate frequency --protocol dpcs --n 2000 --items 50 --eps 1 --delta 1e-3 --reps 1 --allow-violations", NOT_CERTIFIED),
    ("compare frequency --n 20000 --items 5 --eps 1 --delta 1e-3 --reps 1 --chi-gamma 3", NOT_CERTIFIED),
    ("compare frequency --n 2000 --items 50 --eps 1 --delta 1e-3 --reps 1 --allow-violations --json", NOT_CERTIFIED),
    // --- usage errors: exit 2 (the list, and one per subcommand)
    ("calibrate vector-sum --n 1e5 --d 0 --eps 1 --delta 1e-6", USAGE),
    ("calibrate vector-sum --n 1e5 --d 10 --t 200 --eps 1 --delta 1e-6", USAGE),
    ("calibrate vector-sum --n 1e5 --d 1e9 --eps 1 --delta 1e-6", USAGE),
    ("account error --protocol vector-sum --n 1e4 --eps 1 --delta 1e-6 --t 1", USAGE),
    ("protocol run --clients 20 --dropout 0.5", USAGE),
    ("protocol run --clients 20 --dropout NaN", USAGE),
    ("protocol run --clients 20 --dropout 1e300", USAGE),
    ("protocol run --clients 20 --malicious 0.5", USAGE),
    ("protocol run --clients 20 --messages 0", USAGE),
    ("protocol run --clients 20 --sigma 0", USAGE),
    ("protocol run --clients 20 --sigma 1000", USAGE),
    ("protocol run --clients 20 --protocol ikos-sum --eps 30 --sigma 20", USAGE),
    ("simulate frequency --protocol dpds --mode literal --n 100000 --items 2 --eps 1 --delta 1e-3 --reps 1", USAGE),
    ("calibrate ikos-sum --n 1e6 --eps 30 --sigma 40", USAGE),
    ("calibrate ikos-sum --n 1e6 --eps 800", USAGE),
    ("calibrate ikos-sum --n 1e4 --eps 1 --dropout 0.5", USAGE),
    ("calibrate ikos-histogram --n 1e4 --domain 10 --eps 50 --sigma 40", USAGE),
    ("calibrate ikos-vector --n 1e4 --d 3 --eps 1e4", USAGE),
    ("simulate ikos-sum --n 200 --eps 30 --sigma 40", USAGE),
    ("simulate ikos-sum --n 200 --eps 1 --dropout 0.1 --shuffler alternating", USAGE),
    ("compare sum --n 500 --eps 1 --delta 1e-6 --malicious 0.7", USAGE),
    ("calibrate histogram --n 1e4 --eps 1 --delta 2 --domain 10", USAGE),
    ("simulate histogram --n 1000 --eps -1 --delta 1e-6 --domain 4", USAGE),
    ("compare frequency --n 2000 --items 5 --eps 0 --delta 1e-3", USAGE),
    ("account shuffle --eps0 1 --n 1e4", USAGE),
    ("account compose --eps 0.1 --delta 1e-6 --rounds 0 --method kov", USAGE),
    ("account curve --eps0 1 --n 1e4 --nonsense", USAGE),
    ("account users --protocol histogram --eps 1 --delta 1e-6 --target-mse 0.001", USAGE),
    ("audit histogram --n 8 --domain 1 --eps0 2 --trials 200", USAGE),
    ("demo --nonsense", USAGE),
    ("bench --nonsense", USAGE),
    ("experiment vector-sum --sweep nonsense", USAGE),
    ("task list", USAGE),
    ("submit --nonsense", USAGE),
    ("client --nonsense", USAGE),
    ("serve --nonsense", USAGE),
    ("completions nonsense", USAGE),
    ("nonsense", USAGE),
    // --- runtime errors: exit 1
    ("simulate histogram --eps 1 --delta 1e-6 --domain 4 --data /nonexistent/blanket.csv", RUNTIME),
    ("simulate ikos-sum --eps 1 --data /nonexistent/blanket.csv", RUNTIME),
    ("task list --server http://127.0.0.1:1", RUNTIME),
];

#[test]
fn every_subcommand_keeps_the_exit_code_contract() {
    let mut wrong = Vec::new();
    for &(line, want) in CASES {
        let out = blanket(&words(line));
        let got = out.status.code().unwrap_or(-1);
        let err = String::from_utf8_lossy(&out.stderr);
        if got != want || err.contains("panicked") {
            wrong.push(format!(
                "{line}: exit {got}, want {want}: {}",
                err.lines().last().unwrap_or("")
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A CSV value outside [0, 1] is a bad input (2); a missing file a runtime error (1).
#[test]
fn bad_data_value_is_usage_missing_file_is_runtime() {
    let f = temp_file("values.csv", "0.5\n1.5\n");
    let path = f.to_str().expect("utf-8 path");
    let out = blanket(&["simulate", "ikos-sum", "--eps", "1", "--data", path]);
    assert_eq!(out.status.code(), Some(USAGE));
}

/// Every numeric value under a key containing "delta", anywhere in a JSON value.
fn deltas(v: &serde_json::Value, key: &str, out: &mut Vec<(String, f64)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                deltas(x, k, out);
            }
        }
        serde_json::Value::Array(a) => {
            for x in a {
                deltas(x, key, out);
            }
        }
        serde_json::Value::Number(n) if key.contains("delta") => {
            out.push((key.to_string(), n.as_f64().unwrap_or(f64::NAN)));
        }
        _ => {}
    }
}

/// Issue 26 item 1, the sweep: eps log-spaced over 1e-3..1e4 through every command that
/// prints (eps, delta). Each exits 0 with every delta in its JSON finite and below 1, or
/// refuses (2) or says NOT certified (3); never a certified delta >= 1 (the IKOS sum printed
/// (30, 9.72) and (800, inf) with exit 0).
#[test]
fn eps_sweep_prints_no_certified_delta_of_one_or_more() {
    let commands = [
        "calibrate histogram --n 1e4 --delta 1e-6 --domain 10",
        "calibrate scalar-sum --n 1e4 --delta 1e-6",
        "calibrate vector-sum --n 1e5 --d 4 --t 1 --delta 1e-6",
        "calibrate ikos-sum --n 1e4",
        "calibrate ikos-histogram --n 1e4 --domain 8",
        "calibrate ikos-vector --n 1e4 --d 3",
        "simulate ikos-sum --n 100 --reps 1",
        "account users --protocol histogram --domain 10 --delta 1e-6 --target-mse 0.001",
        "account error --protocol histogram --domain 10 --n 1e4 --delta 1e-6",
        "account eps0 --n 1e4 --delta 1e-6",
        "simulate frequency --protocol dpcs --n 20000 --items 5 --delta 1e-3 --reps 1",
        "simulate frequency --protocol tss --n 20000 --items 5 --delta 1e-3 --reps 1",
        "compare sum --n 300 --delta 1e-6 --reps 1",
    ];
    let mut wrong = Vec::new();
    for eps in ["1e-3", "0.1", "10", "1e3", "1e4"] {
        for c in commands {
            // compare sum (local randomized response) and account users search slowly at
            // tiny eps; not the point here.
            if (c.starts_with("compare sum") || c.starts_with("account users")) && eps == "1e-3" {
                continue;
            }
            let mut args = words(c);
            args.extend(["--eps", eps, "--json"]);
            let out = blanket(&args);
            let code = out.status.code();
            match code {
                Some(0) => {
                    let v: serde_json::Value = match serde_json::from_slice(&out.stdout) {
                        Ok(v) => v,
                        Err(e) => {
                            wrong.push(format!("{c} --eps {eps}: {e}"));
                            continue;
                        }
                    };
                    let mut d = Vec::new();
                    deltas(&v, "", &mut d);
                    for (k, x) in d {
                        if !(x.is_finite() && x < 1.0) {
                            wrong.push(format!("{c} --eps {eps}: {k} = {x} with exit 0"));
                        }
                    }
                }
                Some(2) | Some(3) => {}
                other => wrong.push(format!(
                    "{c} --eps {eps}: exit {other:?}: {}",
                    String::from_utf8_lossy(&out.stderr)
                )),
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
