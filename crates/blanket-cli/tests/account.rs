//! End-to-end tests of `blanket account`: JSON contracts, public check values, refusal of
//! bounds outside their conditions, files written by `curve`, the inverse queries, and bad
//! input (non-zero exit, a message naming the field, no panic).

mod common;
use common::*;

use std::process::Command;

#[test]
fn shuffle_json_keys_and_public_check_value() {
    let v = json(&[
        "account",
        "shuffle",
        "--eps0",
        "4",
        "--n",
        "1e5",
        "--delta",
        "1e-6",
        "--method",
        "fmt21-numerical",
        "--json",
    ]);
    for key in ["epsilon", "method", "valid", "seconds"] {
        assert!(v.get(key).is_some(), "{key} missing in {v}");
    }
    assert_eq!(v["method"], "fmt21-numerical");
    assert_eq!(v["valid"], true);
    let e = num(&v, "epsilon");
    assert!((0.16754..=0.17279).contains(&e), "{e}");
    assert!(num(&v, "seconds") >= 0.0);
}

#[test]
fn best_seconds_cover_every_method_evaluated() {
    // `seconds` is the wall time of the whole call: every method in `all` is evaluated inside
    // it, so it is at least the sum of their own times (structural, not a timing bound).
    let v = json(&[
        "account",
        "shuffle",
        "--eps0",
        "2",
        "--n",
        "1e4",
        "--delta",
        "1e-6",
        "--randomizer",
        "krr",
        "--domain",
        "10",
        "--json",
    ]);
    assert_eq!(v["method"], "best");
    let all = v["all"].as_array().expect("all");
    assert!(all.len() > 1);
    let sum: f64 = all.iter().map(|x| num(x, "seconds")).sum();
    assert!(num(&v, "seconds") >= sum, "{} < {sum}", num(&v, "seconds"));
}

#[test]
fn krr_only_methods_refuse_a_generic_randomizer() {
    for m in [
        "clones-krr",
        "grr-exact",
        "variation-ratio",
        "blanket-closed",
    ] {
        let v = json_code(
            3,
            &[
                "account",
                "shuffle",
                "--eps0",
                "1",
                "--n",
                "1e4",
                "--delta",
                "1e-6",
                "--randomizer",
                "generic",
                "--method",
                m,
                "--json",
            ],
        );
        assert_eq!(v["valid"], false, "{m}: {v}");
        assert!(v["reason"].as_str().is_some_and(|r| !r.is_empty()), "{v}");
        // no amplification claimed: epsilon is eps0 or null
        assert!(v["epsilon"].is_null() || num(&v, "epsilon") == 1.0, "{v}");
    }
    // the same methods answer for k-RR
    let v = json(&[
        "account",
        "shuffle",
        "--eps0",
        "1",
        "--n",
        "1e4",
        "--delta",
        "1e-6",
        "--randomizer",
        "krr",
        "--k",
        "10",
        "--method",
        "grr-exact",
        "--json",
    ]);
    assert_eq!(v["valid"], true, "{v}");
    assert!(num(&v, "epsilon") < 1.0);
}

#[test]
fn closed_forms_outside_their_conditions_are_invalid() {
    // FMT21 closed form needs eps0 <= log(n / (16 log(2/delta))): false for n = 1000, eps0 = 4.
    let v = json_code(
        3,
        &[
            "account",
            "shuffle",
            "--eps0",
            "4",
            "--n",
            "1000",
            "--delta",
            "1e-6",
            "--method",
            "fmt21-closed",
            "--json",
        ],
    );
    assert_eq!(v["valid"], false, "{v}");
    assert!(v["reason"].as_str().is_some_and(|r| !r.is_empty()));
    // Erlingsson et al. needs eps0 <= 1/2.
    let v = json_code(
        3,
        &[
            "account",
            "shuffle",
            "--eps0",
            "1",
            "--n",
            "1e5",
            "--delta",
            "1e-6",
            "--method",
            "erlingsson-closed",
            "--json",
        ],
    );
    assert_eq!(v["valid"], false, "{v}");
    // The blanket closed form is valid only if its eps <= 1.
    let v = json_code(
        3,
        &[
            "account",
            "shuffle",
            "--eps0",
            "3",
            "--n",
            "100",
            "--delta",
            "1e-6",
            "--randomizer",
            "krr",
            "--k",
            "50",
            "--method",
            "blanket-closed",
            "--json",
        ],
    );
    assert_eq!(v["valid"], false, "{v}");
}

#[test]
fn compose_check_values() {
    for (method, want) in [("basic", 10.0), ("drv", 6.30823), ("kov", 4.77457)] {
        let v = json(&[
            "account", "compose", "--eps", "0.1", "--delta", "1e-6", "--count", "100", "--method",
            method, "--json",
        ]);
        let e = num(&v, "epsilon");
        assert!((e - want).abs() <= 1e-5 * want, "{method}: {e} vs {want}");
    }
}

#[test]
fn curve_writes_csv_and_png() {
    let dir = std::env::temp_dir().join(format!("blanket-account-curve-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().expect("utf-8 temp dir");
    let out = blanket(&[
        "account", "curve", "--eps0", "2", "--n", "2000", "--k", "10", "--points", "4", "--out", d,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_to_string(dir.join("curve.csv")).expect("curve.csv");
    assert!(csv.starts_with("delta,method,epsilon,valid"), "{csv}");
    assert!(csv.contains("grr-exact") && csv.contains("fmt21-numerical"));
    let png = std::fs::read(dir.join("curve.png")).expect("curve.png");
    assert!(png.len() > 1000 && png.starts_with(b"\x89PNG\r\n\x1a\n"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn curve_plot_without_a_font_still_writes_the_png() {
    let dir = std::env::temp_dir().join(format!("blanket-account-nofont-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new(env!("CARGO_BIN_EXE_blanket"))
        .args([
            "account", "curve", "--eps0", "1", "--n", "1000", "--k", "4", "--points", "3", "--out",
        ])
        .arg(&dir)
        .env("BLANKET_FONT", "none")
        .output()
        .expect("run blanket");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = std::fs::read(dir.join("curve.png")).expect("curve.png");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn inverse_queries() {
    // eps0: the largest eps0, certified at the target.
    let v = json(&[
        "account",
        "eps0",
        "--n",
        "1e4",
        "--eps",
        "0.5",
        "--delta",
        "1e-6",
        "--method",
        "fmt21-numerical",
        "--json",
    ]);
    let e0 = num(&v, "eps0");
    assert_eq!(v["method"], "fmt21-numerical");
    assert!(e0 > 0.5 && num(&v, "certified_epsilon") <= 0.5, "{v}");
    let s = json(&[
        "account",
        "shuffle",
        "--eps0",
        &e0.to_string(),
        "--n",
        "1e4",
        "--delta",
        "1e-6",
        "--method",
        "fmt21-numerical",
        "--json",
    ]);
    assert!(num(&s, "epsilon") <= 0.5, "{s}");
    // error at n, then the users needed for that error: about n.
    let v = json(&[
        "account",
        "error",
        "--protocol",
        "histogram",
        "--n",
        "5000",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--domain",
        "10",
        "--json",
    ]);
    for key in ["predicted_mse", "gamma", "method"] {
        assert!(v.get(key).is_some(), "{key} missing in {v}");
    }
    let mse = num(&v, "predicted_mse");
    assert!(mse > 0.0 && num(&v, "gamma") > 0.0 && num(&v, "gamma") < 1.0);
    let target = mse / 5000f64.powi(2);
    let u = json(&[
        "account",
        "users",
        "--protocol",
        "histogram",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--domain",
        "10",
        "--target-mse",
        &target.to_string(),
        "--json",
    ]);
    let n = u["n"].as_u64().expect("n");
    assert!((4000..=5000).contains(&n), "{u}");
    // (serde_json's float parsing may be off by an ulp)
    assert!(num(&u, "normalized_mse") <= target * (1.0 + 1e-12), "{u}");
    // scalar sum
    let v = json(&[
        "account",
        "error",
        "--protocol",
        "scalar-sum",
        "--n",
        "5000",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--json",
    ]);
    assert!(
        num(&v, "predicted_mse") > 0.0 && v["k"].as_u64().is_some(),
        "{v}"
    );
}

#[test]
fn bad_input_names_the_field() {
    for (line, field) in [
        ("account shuffle --eps0 0 --n 1e4 --delta 1e-6", "eps0"),
        ("account shuffle --eps0 -1 --n 1e4 --delta 1e-6", "eps0"),
        ("account shuffle --eps0 1 --n 1e4 --delta 1.5", "delta"),
        ("account shuffle --eps0 1 --n 1e4 --delta 0", "delta"),
        ("account shuffle --eps0 1 --n 1 --delta 1e-6", "n"),
        (
            "account shuffle --eps0 1 --n 1e4 --delta 1e-6 --randomizer krr",
            "--domain",
        ),
        ("account compose --eps 0 --delta 1e-6 --count 10", "eps"),
        ("account compose --eps 0.1 --delta 2 --count 10", "delta"),
        ("account curve --eps0 -2 --n 1e3 --k 4 --out unused", "eps0"),
        ("account eps0 --n 1 --eps 1 --delta 1e-6", "n"),
        ("account eps0 --n 1e4 --eps -1 --delta 1e-6", "eps"),
        (
            "account error --protocol histogram --n 1e4 --eps 1 --delta 1e-6",
            "--domain",
        ),
        (
            "account users --protocol histogram --domain 10 --eps 1 --delta 1e-6 --target-mse 0",
            "target-mse",
        ),
        (
            "account error --protocol vector-sum --n 1e4 --eps 1 --delta 1e-6 --d 4",
            "--t",
        ),
    ] {
        fails_with(&words(line), field);
    }
}

/// Item 1 of issue 8: variation-ratio is not certified and must never be labelled so.
#[test]
fn variation_ratio_is_never_labelled_certified() {
    let args = [
        "account",
        "shuffle",
        "--eps0",
        "1",
        "--n",
        "3",
        "--delta",
        "0.01",
        "--randomizer",
        "krr",
        "--domain",
        "3",
        "--method",
        "variation-ratio",
    ];
    let (code, out, _) = run(&args);
    assert_eq!(code, Some(3), "{out}");
    assert!(out.contains("NOT CERTIFIED"), "{out}");
    assert!(!out.contains("certified by variation-ratio"), "{out}");
    let mut with_json = args.to_vec();
    with_json.push("--json");
    let v = json_code(3, &with_json);
    assert_eq!(v["valid"], false, "{v}");
    assert_eq!(v["certified"], false, "{v}");
    assert!(v["certified_by"].is_null(), "{v}");
    // no amplification claimed: epsilon is eps0; the uncertified value is apart
    assert_eq!(num(&v, "epsilon"), 1.0, "{v}");
    assert!(num(&v, "uncertified_epsilon") < 1.0, "{v}");

    // account eps0
    let eps0 = "account eps0 --n 1000 --eps 1 --delta 1e-6 --randomizer krr --domain 4 --method variation-ratio";
    let v = json_code(3, &words(&format!("{eps0} --json")));
    assert_eq!(v["certified"], false, "{v}");
    assert!(
        v["certified_by"].is_null() && v["certified_epsilon"].is_null(),
        "{v}"
    );
    let (code, out, _) = run(&words(eps0));
    assert_eq!(code, Some(3));
    assert!(
        out.contains("NOT CERTIFIED") && !out.contains("certified by"),
        "{out}"
    );

    // account curve: the CSV's valid column is false for variation-ratio
    let dir = temp_dir("vr-curve");
    let d = dir.to_str().unwrap();
    let (code, _, err) = run(&[
        "account", "curve", "--eps0", "2", "--n", "2000", "--domain", "10", "--points", "2",
        "--out", d,
    ]);
    assert_eq!(code, Some(0), "{err}");
    let csv = std::fs::read_to_string(dir.join("curve.csv")).unwrap();
    assert!(
        csv.starts_with("delta,method,epsilon,valid,certified"),
        "{csv}"
    );
    let vr: Vec<&str> = csv
        .lines()
        .filter(|l| l.contains("variation-ratio"))
        .collect();
    assert!(!vr.is_empty());
    for l in vr {
        assert!(l.ends_with(",false,false"), "{l}");
    }
}

/// Item 15: eps0 out of range is refused with exit code 2, naming the field and range.
#[test]
fn eps0_out_of_range_is_a_usage_error() {
    fails_code(
        2,
        &[
            "account",
            "shuffle",
            "--randomizer",
            "krr",
            "--domain",
            "3",
            "--eps0",
            "710",
            "--n",
            "1000",
            "--delta",
            "1e-6",
        ],
        "--eps0 must be a number in (0, 100]",
    );
    // --domain with an explicitly generic randomizer is not silently ignored
    fails_code(
        2,
        &[
            "account",
            "shuffle",
            "--eps0",
            "1",
            "--randomizer",
            "generic",
            "--domain",
            "3",
            "--n",
            "1000",
            "--delta",
            "1e-6",
        ],
        "--domain applies to --randomizer krr only",
    );
}

/// One `--randomizer` default in every `account` subcommand: k-RR with `--domain`, a generic
/// randomizer without (`account curve` used to default to krr, the others to generic).
#[test]
fn randomizer_default_is_the_same_in_shuffle_and_curve() {
    let dir = temp_dir("randomizer-default");
    let out = format!("--out {}", dir.display());
    for (line, want) in [
        (
            "account shuffle --eps0 1 --n 1e4 --delta 1e-6 --json",
            "generic",
        ),
        (
            "account shuffle --eps0 1 --n 1e4 --delta 1e-6 --domain 3 --json",
            "grr",
        ),
    ] {
        let v = json(&words(line));
        assert!(v["randomizer"].to_string().contains(want), "{line}: {v}");
    }
    for (extra, want) in [("", "generic"), (" --domain 3", "grr")] {
        let line = format!("account curve --eps0 1 --n 1e4 --points 3 {out} --json{extra}");
        let v = json(&words(&line));
        assert!(v["randomizer"].to_string().contains(want), "{line}: {v}");
    }
}

/// `account compose --method pld` of an (eps, delta) pair reproduces KOV: never below it
/// (both are certified upper bounds; KOV's bisection is 1e-9 relative) and within 1%.
#[test]
fn compose_pld_pair_matches_kov() {
    for (eps, rounds, delta, component_delta, kov_check) in [
        ("0.01", "5000", "1e-10", "0", Some(4.489184)),
        ("0.1", "1e5", "1e-10", "0", Some(699.51)),
        ("0.1", "200", "1e-5", "1e-9", None),
    ] {
        let run = |method: &str| {
            json(&[
                "account",
                "compose",
                "--eps",
                eps,
                "--rounds",
                rounds,
                "--delta",
                delta,
                "--component-delta",
                component_delta,
                "--method",
                method,
                "--json",
            ])
        };
        let (pld, kov) = (run("pld"), run("kov"));
        for key in [
            "epsilon",
            "delta",
            "method",
            "count",
            "component_eps",
            "component_delta",
            "seconds",
            "step",
        ] {
            assert!(pld.get(key).is_some(), "{key} missing in {pld}");
        }
        assert_eq!(pld["method"], "pld");
        assert!(kov["step"].is_null(), "{kov}");
        let (p, k) = (num(&pld, "epsilon"), num(&kov, "epsilon"));
        if let Some(want) = kov_check {
            assert!((k - want).abs() <= 1e-4 * want, "kov {k} vs {want}");
        }
        assert!(
            p >= k * (1.0 - 1e-9),
            "{eps} x {rounds}: pld {p} below kov {k}"
        );
        assert!(p <= k * 1.01, "{eps} x {rounds}: pld {p} vs kov {k}");
        // the default step is eps: the pair is on the grid exactly
        assert!((num(&pld, "step") - num(&pld, "component_eps")).abs() <= 1e-15);
    }
}

#[test]
fn compose_pld_step_is_checked_and_adjusted() {
    let v = json(&[
        "account", "compose", "--eps", "0.1", "--rounds", "100", "--delta", "1e-6", "--method",
        "pld", "--step", "0.03", "--json",
    ]);
    // adjusted to eps / round(eps / step) = 0.1 / 3
    assert!((num(&v, "step") - 0.1 / 3.0).abs() <= 1e-15, "{v}");
    assert!((num(&v, "epsilon") - 4.77457).abs() <= 1e-3, "{v}");
    fails_code(
        2,
        &[
            "account", "compose", "--eps", "0.1", "--rounds", "100", "--delta", "1e-6", "--step",
            "0.01",
        ],
        "--step",
    );
    for bad in ["0", "-1", "0.2"] {
        fails_code(
            2,
            &[
                "account", "compose", "--eps", "0.1", "--rounds", "100", "--delta", "1e-6",
                "--method", "pld", "--step", bad,
            ],
            "--step",
        );
    }
}

/// When the rounds' own deltas exceed the total, no eps exists: a clear runtime error.
#[test]
fn compose_pld_with_component_deltas_over_the_total_fails_clearly() {
    let (code, out, err) = run(&[
        "account",
        "compose",
        "--eps",
        "0.1",
        "--rounds",
        "1000",
        "--delta",
        "1e-6",
        "--component-delta",
        "1e-8",
        "--method",
        "pld",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("no eps reaches this delta"), "{err}");
    assert!(!out.contains("inf"), "{out}");
    // a pure pair at a delta below the PLD's truncated tails: the same clear refusal
    fails_code(
        1,
        &[
            "account", "compose", "--eps", "0.1", "--rounds", "1e5", "--delta", "1e-40",
            "--method", "pld",
        ],
        "no eps reaches this delta",
    );
}

/// The shuffled mode composes the whole certified curve and beats KOV of the best
/// per-round split of the same curve.
#[test]
fn compose_shuffled_curve_beats_kov() {
    let v = json(&[
        "account",
        "compose",
        "--eps0",
        "1",
        "--n",
        "1e5",
        "--randomizer",
        "krr",
        "--domain",
        "2",
        "--rounds",
        "1000",
        "--delta",
        "1e-8",
        "--json",
    ]);
    for key in [
        "epsilon",
        "delta",
        "method",
        "count",
        "component_eps",
        "component_delta",
        "seconds",
        "step",
        "eps0",
        "n",
        "randomizer",
        "accountant",
        "kov_epsilon",
    ] {
        assert!(v.get(key).is_some(), "{key} missing in {v}");
    }
    assert_eq!(v["method"], "pld");
    assert_eq!(v["accountant"], "clones-krr");
    assert_eq!(v["count"], 1000);
    assert_eq!(v["n"], 100_000);
    let (pld, kov) = (num(&v, "epsilon"), num(&v, "kov_epsilon"));
    // measured: 0.6283 against 4.058
    assert!(pld > 0.0 && pld < 0.5 * kov, "pld {pld} vs kov {kov}");
    // KOV's per-round point is on the curve: (eps1, delta1) with delta1 < delta / rounds
    assert!(num(&v, "component_delta") < 1e-8 / 1000.0, "{v}");
    // the text output names both
    let (code, out, err) = run(&[
        "account",
        "compose",
        "--eps0",
        "1",
        "--n",
        "1e5",
        "--randomizer",
        "krr",
        "--k",
        "2",
        "--rounds",
        "1000",
        "--delta",
        "1e-8",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("pld") && out.contains("kov"), "{out}");
}

#[test]
fn compose_eps_and_eps0_are_mutually_exclusive() {
    for (line, needle) in [
        (
            "account compose --eps 0.1 --eps0 1 --n 1e5 --rounds 10 --delta 1e-6",
            "cannot be used with",
        ),
        // one of them is required
        ("account compose --rounds 10 --delta 1e-6", "--eps"),
        // shuffled-mode flags conflict with --eps; --eps0 needs --n; pair-mode flags conflict
        // with --eps0
        (
            "account compose --eps 0.1 --n 1e5 --rounds 10 --delta 1e-6",
            "cannot be used with",
        ),
        ("account compose --eps0 1 --rounds 10 --delta 1e-6", "--n"),
        (
            "account compose --eps0 1 --n 1e5 --rounds 10 --delta 1e-6 --component-delta 1e-9",
            "--component-delta",
        ),
        (
            "account compose --eps0 1 --n 1e5 --rounds 10 --delta 1e-6 --method kov",
            "--method",
        ),
    ] {
        fails_code(2, &words(line), needle);
    }
}

#[test]
fn compose_shuffled_refuses_uncertified_and_inapplicable_accountants() {
    for (line, needle) in [
        (
            "account compose --eps0 1 --n 1e5 --randomizer krr --domain 2 \
             --method variation-ratio --rounds 10 --delta 1e-6",
            "variation-ratio is not certified",
        ),
        (
            "account compose --eps0 1 --n 1e5 --method clones-krr --rounds 10 --delta 1e-6",
            "--randomizer krr",
        ),
        (
            "account compose --eps0 0 --n 1e5 --rounds 10 --delta 1e-6",
            "--eps0",
        ),
    ] {
        fails_code(2, &words(line), needle);
    }
}
