//! End-to-end checks of the `blanket` binary: JSON contracts and clear errors on bad input.

mod common;
use common::*;

#[test]
fn calibrate_json_keys() {
    let h = json(&[
        "calibrate",
        "histogram",
        "--n",
        "1e6",
        "--eps",
        "0.5",
        "--delta",
        "1e-6",
        "--domain",
        "10",
        "--accountant",
        "paper",
        "--json",
    ]);
    assert_eq!(h["method"], "blanket-closed");
    for key in ["gamma", "eps0", "predicted_mse", "method"] {
        assert!(h.get(key).is_some(), "missing {key}: {h}");
    }
    // Theorem 3.1 by hand: 14 * 10 * ln(2e6) / ((1e6 - 1) * 0.25).
    let g = h["gamma"].as_f64().unwrap();
    let hand = 560.0 * (2e6f64).ln() / 999_999.0;
    assert!(g >= hand && (g - hand) / hand < 1e-12, "{g} vs {hand}");
    let eps0 = h["eps0"].as_f64().unwrap();
    assert!((eps0 - (1.0 + 10.0 * (1.0 - g) / g).ln()).abs() < 1e-12);
    // The default (best certified) accountant needs no more blanket than the closed form.
    let best = json(&[
        "calibrate",
        "histogram",
        "--n",
        "1e6",
        "--eps",
        "0.5",
        "--delta",
        "1e-6",
        "--domain",
        "10",
        "--json",
    ]);
    assert!(best["gamma"].as_f64().unwrap() <= g);
    // ... and says what the paper's closed form would have required.
    assert_eq!(best["paper"]["method"], "blanket-closed");
    assert_eq!(best["paper"]["gamma"].as_f64().unwrap(), g);
    assert!(
        best["paper"]["predicted_mse"].as_f64().unwrap() >= best["predicted_mse"].as_f64().unwrap()
    );
    assert!(best["certified_epsilon"].as_f64().unwrap() <= 0.5);

    let s = json(&[
        "calibrate",
        "scalar-sum",
        "--n",
        "1e6",
        "--eps",
        "1",
        "--delta",
        "1e-8",
        "--json",
    ]);
    for key in ["gamma", "eps0", "k", "predicted_mse", "method"] {
        assert!(s.get(key).is_some(), "missing {key}: {s}");
    }
    assert_eq!(s["message_values"], s["k"].as_u64().unwrap() + 1);

    // not certified: exit code 3
    let p = json_code(
        3,
        &[
            "calibrate",
            "scalar-sum",
            "--n",
            "50000",
            "--eps",
            "0.95",
            "--delta",
            "0.5",
            "--k",
            "3",
            "--paper-domain",
            "--json",
        ],
    );
    assert_eq!(p["accounted_domain"], 3);
    assert_eq!(p["message_values"], 4);
    assert!(p["notes"].to_string().contains("NOT certified"));
}

#[test]
fn simulate_json_keys_and_agreement() {
    let v = json(&[
        "simulate",
        "scalar-sum",
        "--n",
        "20000",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--reps",
        "40",
        "--seed",
        "3",
        "--json",
    ]);
    for key in ["gamma", "mse", "predicted_mse", "seconds"] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    // 40 repetitions: the MSE ratio has sd about sqrt(2/40) = 0.22; accept 0.4..1.8.
    let r = v["mse_ratio"].as_f64().unwrap();
    assert!((0.4..1.8).contains(&r), "ratio {r}");

    let data = temp_file("cats.csv", "category\n0\n1\n2\n3\n1\n1\n");
    let h = json(&[
        "simulate",
        "histogram",
        "--eps",
        "1",
        "--delta",
        "0.1",
        "--domain",
        "4",
        "--n",
        "3000",
        "--data",
        data.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(h["n"], 3000);
    assert!(h["data"]["selection"]
        .as_str()
        .unwrap()
        .contains("with replacement"));
}

#[test]
fn bad_parameters_are_named() {
    for (line, needle) in [
        (
            "calibrate histogram --n 1e6 --domain 10 --eps 0 --delta 1e-6",
            "eps must be a finite number > 0",
        ),
        (
            "calibrate histogram --n 1e6 --domain 10 --eps -1 --delta 1e-6",
            "eps must be a finite number > 0",
        ),
        (
            "calibrate histogram --n 1e6 --domain 10 --eps NaN --delta 1e-6",
            "eps must be a finite number > 0",
        ),
        (
            "calibrate histogram --n 1e6 --domain 10 --eps 1 --delta 0",
            "delta must be in the open interval (0, 1)",
        ),
        (
            "calibrate histogram --n 1e6 --domain 10 --eps 1 --delta 1.5",
            "delta must be in the open interval (0, 1)",
        ),
        (
            "calibrate histogram --n 1 --domain 10 --eps 1 --delta 1e-6",
            "n must be an integer from 2",
        ),
        (
            "calibrate histogram --n 1e6 --domain 1 --eps 1 --delta 1e-6",
            "domain must be an integer from 2",
        ),
        (
            "calibrate scalar-sum --n 1e6 --k 0 --eps 1 --delta 1e-6",
            "k must be an integer from 1",
        ),
    ] {
        fails_with(&words(line), needle);
    }
    // gamma >= 1: the error names the smallest n that works (Theorem 3.1 by hand:
    // n - 1 > 14 * 10 * ln(2e6) / 0.25 = 8124.85).
    fails_with(
        &[
            "calibrate",
            "histogram",
            "--n",
            "1000",
            "--domain",
            "10",
            "--eps",
            "0.5",
            "--delta",
            "1e-6",
            "--accountant",
            "paper",
        ],
        "the smallest n that works at this eps and delta is 8126",
    );
    // The tight accountant always finds a gamma < 1 (at worst the local guarantee eps0 <= eps),
    // so with few users it falls back to nearly local noise, and says which bound certified it.
    let few = json(&[
        "calibrate",
        "histogram",
        "--n",
        "20",
        "--domain",
        "10",
        "--eps",
        "0.5",
        "--delta",
        "1e-6",
        "--json",
    ]);
    assert!(few["certified_epsilon"].as_f64().unwrap() <= 0.5);
    assert!(few["gamma"].as_f64().unwrap() < 1.0);
}

#[test]
fn bad_data_rows_are_named() {
    let nan = temp_file("nan.csv", "x\n0.5\nNaN\n");
    let out = temp_file("out.csv", "0.5\n1.2\n");
    let cat = temp_file("cat.csv", "0\n7\n");
    let nowhere = std::path::PathBuf::from("/nonexistent.csv");
    for (command, file, needle) in [
        ("simulate scalar-sum --eps 1 --delta 0.1", &nan, "line 3"),
        (
            "simulate scalar-sum --eps 1 --delta 0.1",
            &out,
            "value must be a number in [0, 1], got 1.2",
        ),
        (
            "simulate histogram --eps 1 --delta 0.1 --domain 4",
            &cat,
            "category must be an integer from 0 to 3, got 7",
        ),
        (
            "simulate scalar-sum --eps 1 --delta 0.1",
            &nowhere,
            "cannot open data file /nonexistent.csv",
        ),
    ] {
        let mut args = words(command);
        args.extend(["--data", file.to_str().unwrap()]);
        fails_with(&args, needle);
    }
}

#[test]
fn demo_runs_small() {
    let d = json(&["demo", "--n", "20000", "--reps", "3", "--json"]);
    assert!(d["histogram"]["mse"].as_f64().is_some());
    assert!(
        d["scalar_sum"]["calibration"]["certified_epsilon"]
            .as_f64()
            .unwrap()
            <= 1.0
    );
}

/// Item 8 of issue 8: the demo uses a public range, states the draw, and prints the
/// guarantee of its two releases together.
#[test]
fn demo_public_range_and_composed_guarantee() {
    let (code, out, err) = run(&["demo", "--n", "120000", "--reps", "1"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("-4 to 4 mV"), "{out}");
    assert!(
        out.contains("120000 users drawn with replacement") && out.contains("108000 readings"),
        "{out}"
    );
    assert!(
        out.contains("together they are (2, 2e-8) by basic composition"),
        "{out}"
    );
    let v = json(&["demo", "--n", "120000", "--reps", "1", "--json"]);
    assert_eq!(v["range_mv"][0], -4.0, "{v}");
    assert_eq!(v["composition"]["basic_epsilon"], 2.0, "{v}");
    // the first bin starts at the public bound, not at the data's minimum
    assert!(out.contains("-4.00 .. -3.50"), "{out}");
}

/// Item 17 of issue 8: one vocabulary, checked choices, number notations, one JSON object,
/// completions and a man page.
#[test]
fn one_vocabulary_across_subcommands() {
    // --domain is the k-RR domain in `account` (the old --k still works, hidden)
    let a = json(&[
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
        "--domain",
        "10",
        "--json",
    ]);
    let b = json(&[
        "account",
        "shuffle",
        "--eps0",
        "1",
        "--n",
        "1_0000",
        "--delta",
        "1e-6",
        "--randomizer",
        "krr",
        "--k",
        "1e1",
        "--json",
    ]);
    assert_eq!(a["epsilon"], b["epsilon"]);
    // --rounds (old --count) in compose; integer notations
    let c = json(&[
        "account", "compose", "--eps", "0.1", "--delta", "1e-6", "--rounds", "1e2", "--method",
        "basic", "--json",
    ]);
    assert_eq!(c["count"], 100);
    // checked choice list for --method
    let (code, _, err) = run(&[
        "account", "shuffle", "--eps0", "1", "--n", "1e4", "--delta", "1e-6", "--method", "nope",
    ]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("possible values") && err.contains("fmt21-numerical"),
        "{err}"
    );
    // account curve --json prints one object
    let dir = temp_dir("curve-json");
    let v = json(&[
        "account",
        "curve",
        "--eps0",
        "1",
        "--n",
        "1000",
        "--domain",
        "4",
        "--points",
        "2",
        "--out",
        dir.to_str().unwrap(),
        "--json",
    ]);
    assert!(v.is_object() && v["points"].is_array(), "{v}");
    // completions and man page
    let (code, out, _) = run(&["completions", "bash"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("blanket"), "{out}");
    let (code, out, _) = run(&["man"]);
    assert_eq!(code, Some(0));
    assert!(out.contains(".TH blanket"), "{out}");
}

/// Item 20 of issue 8: `blanket audit` prints an empirical lower bound beside the certified
/// upper bound; bounded trials, seeded, JSON.
#[test]
fn audit_lower_bound_below_certified() {
    let args = [
        "audit",
        "histogram",
        "--n",
        "8",
        "--domain",
        "3",
        "--eps0",
        "2",
        "--trials",
        "1000",
        "--seed",
        "3",
        "--json",
    ];
    let v = json(&args);
    let lower = v["empirical_epsilon_lower"].as_f64().unwrap();
    let upper = v["certified_epsilon"].as_f64().unwrap();
    assert!(lower > 0.0 && lower <= upper, "{v}");
    assert_eq!(v["consistent"], true);
    assert_eq!(json(&args), v, "seeded runs repeat");
    let v = json(&[
        "audit",
        "scalar-sum",
        "--k",
        "2",
        "--eps0",
        "3",
        "--trials",
        "1000",
        "--json",
    ]);
    let lower = v["empirical_epsilon_lower"].as_f64().unwrap();
    assert!(
        lower > 0.0 && lower <= v["certified_epsilon"].as_f64().unwrap(),
        "{v}"
    );
    assert_eq!(v["domain"], 3);
    let (code, _, err) = run(&["audit", "histogram", "--trials", "1e7"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--trials must be"), "{err}");
}

/// Issue 8 item 12: a large domain costs O(m) with a small constant: the human table shows at
/// most 64 categories (it used to build a row per category: 8 GB at m = 2^22).
#[test]
fn simulate_histogram_large_domain_shows_a_bounded_table() {
    let out = blanket(&[
        "simulate",
        "histogram",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--domain",
        "1048576",
        "--n",
        "2000",
        "--reps",
        "1",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("first 64 of 1048576 categories"), "{text}");
    assert!(text.lines().count() < 200, "{} lines", text.lines().count());
    // The JSON keeps every category (a contract), streamed.
    let v = json(&[
        "simulate",
        "histogram",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--domain",
        "65536",
        "--n",
        "2000",
        "--reps",
        "1",
        "--json",
    ]);
    assert_eq!(
        v["first_repetition"]["true_counts"]
            .as_array()
            .unwrap()
            .len(),
        65536
    );
    assert_eq!(
        v["first_repetition"]["estimated_counts"]
            .as_array()
            .unwrap()
            .len(),
        65536
    );
}

/// Issue 8 item 11: n up to 2^48 is accepted by the flags, but a run that cannot be done says
/// which limit and why instead of aborting on an allocation.
#[test]
fn simulate_huge_n_is_a_clear_error_not_an_abort() {
    let base = [
        "simulate",
        "histogram",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--domain",
        "4",
        "--reps",
        "1",
    ];
    let mut a = base.to_vec();
    a.extend(["--n", "1e12", "--no-shuffle"]);
    fails_with(&a, "above the simulation limit of 34359738368 (2^35");
    let mut b = base.to_vec();
    b.extend(["--n", "1e9"]);
    fails_with(&b, "--no-shuffle");
}
