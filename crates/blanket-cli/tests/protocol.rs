//! End-to-end tests of `blanket protocol run`: the JSON keys, delivery and
//! correctness with dropouts and cheaters at small n, the histogram estimate with its
//! certified guarantee, and bad input.

mod common;
use common::*;

#[test]
fn protocol_run_json_keys_and_outcome() {
    for variant in ["amortized", "alternating"] {
        let v = json(&[
            "protocol",
            "run",
            "--clients",
            "80",
            "--dropout",
            "0.05",
            "--malicious",
            "0.05",
            "--sigma",
            "8",
            "--eta",
            "4",
            "--variant",
            variant,
            "--json",
        ]);
        for key in [
            "delivered",
            "correct",
            "rounds",
            "bytes_worst_client",
            "proof_bytes_worst_client",
            "bytes_avg_client",
            "cheaters_detected",
            "seconds",
            "cpu_seconds_by_role",
            "blanket_users",
            "trust",
        ] {
            assert!(v.get(key).is_some(), "{key} missing in {v}");
        }
        assert_eq!(v["delivered"], true, "{v}");
        assert_eq!(v["correct"], true, "{v}");
        assert_eq!(v["variant"], variant);
        assert_eq!(v["blanket_users"], 72);
        assert_eq!(v["cheaters_missed"], 0);
        assert_eq!(v["honest_named"], 0);
        assert!(v["cpu_seconds_by_role"].get("shuffler").is_some());
        assert!(
            v["proof_bytes_worst_client"].as_u64().unwrap()
                <= v["bytes_worst_client"].as_u64().unwrap()
        );
    }
}

#[test]
fn protocol_run_histogram_ends_with_a_certified_guarantee() {
    let v = json(&[
        "protocol",
        "run",
        "--clients",
        "60",
        "--dropout",
        "0.05",
        "--malicious",
        "0.05",
        "--sigma",
        "8",
        "--eta",
        "4",
        "--protocol",
        "histogram",
        "--eps",
        "2",
        "--delta",
        "1e-4",
        "--domain",
        "4",
        "--json",
    ]);
    let h = &v["histogram"];
    assert!(h["certified_epsilon"].as_f64().unwrap() <= 2.0, "{h}");
    assert_eq!(h["estimate"].as_array().unwrap().len(), 4);
}

#[test]
fn protocol_run_bad_input_names_the_field() {
    fails_with(
        &["protocol", "run", "--clients", "50", "--dropout", "0.7"],
        "alpha",
    );
    fails_with(
        &[
            "protocol",
            "run",
            "--clients",
            "50",
            "--protocol",
            "histogram",
            "--eps",
            "1",
        ],
        "--delta",
    );
}

#[test]
fn protocol_run_proof_flag_selects_the_proof_of_shuffle() {
    let run = |proof: Option<&str>| {
        let mut args = vec![
            "protocol",
            "run",
            "--clients",
            "40",
            "--dropout",
            "0.05",
            "--malicious",
            "0.05",
            "--sigma",
            "8",
            "--eta",
            "4",
            "--json",
        ];
        if let Some(p) = proof {
            args.extend(["--proof", p]);
        }
        json(&args)
    };
    let default = run(None);
    let tw = run(Some("tw"));
    let bg = run(Some("bg"));
    assert_eq!(default["proof"], "tw");
    assert_eq!(tw["proof"], "tw");
    assert_eq!(bg["proof"], "bg");
    for v in [&tw, &bg] {
        assert_eq!(v["delivered"], true, "{v}");
        assert_eq!(v["correct"], true, "{v}");
        assert_eq!(v["honest_named"], 0);
    }
    // Same seed and parameters: only the proof bytes (and what depends on them) differ.
    assert_eq!(
        default["proof_bytes_worst_client"],
        tw["proof_bytes_worst_client"]
    );
    assert_ne!(
        tw["proof_bytes_worst_client"],
        bg["proof_bytes_worst_client"]
    );
    fails_with(
        &["protocol", "run", "--clients", "40", "--proof", "xx"],
        "allowed: tw, bg",
    );
}
