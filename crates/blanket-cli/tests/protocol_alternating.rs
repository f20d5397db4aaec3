//! End-to-end tests of `blanket protocol run --variant alternating --protocol histogram`:
//! the run ends with the estimate and a guarantee certified for the honest, present users
//! with the malicious cells placed at worst (`docs/alternating.md`, "Bad cells"), the
//! estimate's error matches its prediction on a fixed seed, and what is not certified is
//! refused with its reason.

mod common;
use common::*;

fn run(variant: &str, seed: &str) -> serde_json::Value {
    run_with(variant, seed, &[])
}

fn run_with(variant: &str, seed: &str, extra: &[&str]) -> serde_json::Value {
    let mut a = vec![
        "protocol",
        "run",
        "--clients",
        "150",
        "--dropout",
        "0.05",
        "--malicious",
        "0.05",
        "--sigma",
        "12",
        "--eta",
        "4",
        "--variant",
        variant,
        "--protocol",
        "histogram",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--domain",
        "8",
        "--seed",
        seed,
        "--json",
    ];
    a.extend_from_slice(extra);
    json(&a)
}

/// The default of the alternating variant: per-lane key committees, the cells of absent
/// clients filled with public dummies, counted as bad cells (up to D + M = 14 of the 150).
#[test]
fn alternating_histogram_ends_with_a_certified_guarantee() {
    let v = run("alternating", "3");
    assert_eq!(v["delivered"], true, "{v}");
    assert_eq!(v["correct"], true, "{v}");
    assert_eq!(v["variant"], "alternating");
    assert_eq!(v["key_committees"], "per-lane", "{v}");
    assert!(v.get("key_committees_note").is_none(), "{v}");
    assert!(v["lane_keys"]["dummies"].as_u64().unwrap() >= 1, "{v}");
    // n' = 150 - 7 - 7 honest, present users.
    assert_eq!(v["blanket_users"], 136);
    let trust = v["trust"].as_str().unwrap();
    assert!(trust.contains("placed anywhere"), "{trust}");
    let h = &v["histogram"];
    assert!(h["certified_epsilon"].as_f64().unwrap() <= 1.0, "{h}");
    assert!(
        h["certified_delta_given_private_shuffle"].as_f64().unwrap() <= 1e-6,
        "{h}"
    );
    assert!(
        h["method"]
            .as_str()
            .unwrap()
            .starts_with("alternating-bad-cells"),
        "{h}"
    );
    let alt = &h["alternating"];
    assert_eq!(alt["honest_cells_min"], 136, "{alt}");
    assert_eq!(alt["cells_max"], 150, "{alt}");
    assert_eq!(alt["bad_cells_max"], 14, "{alt}");
    assert_eq!(h["estimate"].as_array().unwrap().len(), 8);
    let honest: u64 = h["truth_honest"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .sum();
    assert_eq!(honest, v["honest_present_clients"].as_u64().unwrap(), "{v}");
    assert!(honest >= 136, "{v}");
    assert!(
        v["malicious_accepted_clients"].as_u64().unwrap() <= 7,
        "{v}"
    );
}

/// `--key-committees single`: one key committee decrypts all N ciphertexts; the grid holds
/// the accepted messages only (136 to 150 cells), at most M = 7 of them bad.
#[test]
fn alternating_histogram_with_one_key_committee() {
    let v = run_with("alternating", "3", &["--key-committees", "single"]);
    assert_eq!(v["delivered"], true, "{v}");
    assert_eq!(v["correct"], true, "{v}");
    assert_eq!(v["key_committees"], "single", "{v}");
    assert!(v.get("lane_keys").is_none(), "{v}");
    let h = &v["histogram"];
    assert!(h["certified_epsilon"].as_f64().unwrap() <= 1.0, "{h}");
    assert!(
        h["certified_delta_given_private_shuffle"].as_f64().unwrap() <= 1e-6,
        "{h}"
    );
    let alt = &h["alternating"];
    assert_eq!(alt["honest_cells_min"], 136, "{alt}");
    assert_eq!(alt["cells_max"], 150, "{alt}");
    assert_eq!(alt["bad_cells_max"], 7, "{alt}");
    // The worst client is a key holder (it handles every ciphertext); the honest worst
    // client is reported beside it, never above it.
    let worst = v["bytes_worst_client"].as_u64().unwrap();
    let honest = v["bytes_worst_honest_client"].as_u64().unwrap();
    assert!(honest > 0 && honest <= worst, "{v}");
}

/// On fixed seeds the per-category RMSE against the accepted clients' counts matches the
/// calibrator's prediction (made for n' users; the count variance grows with the N accepted
/// reports, so the prediction is scaled by sqrt(N / n')): for 8 categories the squared
/// ratio is close to a chi-square with 8 degrees of freedom over 8, within [0.27, 2.5] with
/// probability 0.999, so the ratio must lie in [0.5, 1.6].
#[test]
fn alternating_histogram_error_matches_its_prediction() {
    for seed in ["3", "4"] {
        let v = run("alternating", seed);
        let h = &v["histogram"];
        let scale =
            (v["accepted_clients"].as_f64().unwrap() / v["blanket_users"].as_f64().unwrap()).sqrt();
        let ratio = h["rmse"].as_f64().unwrap() / (h["predicted_rmse"].as_f64().unwrap() * scale);
        assert!(
            (0.5..=1.6).contains(&ratio),
            "seed {seed}: ratio {ratio} in {h}"
        );
    }
}

/// The worst placement costs noise: at equal (eps, delta) the alternating variant needs a
/// larger blanket probability than the amortized one (a uniform shuffle of n').
#[test]
fn alternating_costs_more_noise_than_amortized() {
    let alt = run("alternating", "3");
    let amo = run("amortized", "3");
    let g_alt = alt["histogram"]["gamma"].as_f64().unwrap();
    let g_amo = amo["histogram"]["gamma"].as_f64().unwrap();
    assert!(g_alt > g_amo, "alternating {g_alt}, amortized {g_amo}");
    assert!(amo["histogram"].get("alternating").is_none());
}

#[test]
fn alternating_refuses_what_it_cannot_certify() {
    let base = [
        "protocol",
        "run",
        "--clients",
        "60",
        "--variant",
        "alternating",
        "--eps",
        "1",
    ];
    let with = |extra: &[&'static str]| {
        let mut a: Vec<&str> = base.to_vec();
        a.extend_from_slice(extra);
        a
    };
    fails_with(
        &with(&["--protocol", "ikos-sum"]),
        "ikos-sum with --variant alternating is refused: the relay's alternating variant is not wired",
    );
    fails_with(
        &with(&["--protocol", "vector-sum", "--delta", "1e-4", "--t", "2"]),
        "vector-sum --t 2 with --variant alternating is refused",
    );
}

/// Vector sum with t = 1 is one GRR report over the d (k + 1) pairs per client, so the
/// bad-cell bound certifies it too; its mean-vector squared error is within 12 times its
/// exact prediction (the amortized test's tolerance: one draw of a sum of d squared
/// errors, each a scaled chi-square with one degree of freedom).
#[test]
fn alternating_vector_sum_t1_is_certified() {
    let v = json(&[
        "protocol",
        "run",
        "--clients",
        "150",
        "--dropout",
        "0.05",
        "--malicious",
        "0.05",
        "--sigma",
        "12",
        "--eta",
        "4",
        "--variant",
        "alternating",
        "--protocol",
        "vector-sum",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--d",
        "3",
        "--t",
        "1",
        "--seed",
        "3",
        "--json",
    ]);
    assert_eq!(v["delivered"], true, "{v}");
    assert_eq!(v["correct"], true, "{v}");
    let s = &v["vector_sum"];
    assert_eq!(s["users"], 136, "{s}");
    assert!(s["certified_epsilon"].as_f64().unwrap() <= 1.0, "{s}");
    assert!(
        s["certified_delta_given_private_shuffle"].as_f64().unwrap() <= 1e-6,
        "{s}"
    );
    assert!(
        s["method"]
            .as_str()
            .unwrap()
            .starts_with("alternating-bad-cells"),
        "{s}"
    );
    // Per-lane key committees (the default): dummies are bad cells, D + M = 14.
    assert_eq!(s["alternating"]["bad_cells_max"], 14, "{s}");
    assert!(
        s["mse_mean"].as_f64().unwrap() <= 12.0 * s["predicted_mse_mean"].as_f64().unwrap(),
        "{s}"
    );
}

#[test]
fn lane_keys_run_delivers_with_a_guarantee_counting_dummies() {
    let v = json(&[
        "protocol",
        "run",
        "--clients",
        "150",
        "--dropout",
        "0.05",
        "--malicious",
        "0.05",
        "--sigma",
        "12",
        "--eta",
        "4",
        "--variant",
        "alternating",
        "--lane-keys",
        "--protocol",
        "histogram",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--domain",
        "8",
        "--seed",
        "3",
        "--json",
    ]);
    assert_eq!(v["delivered"], true, "{v}");
    assert_eq!(v["correct"], true, "{v}");
    assert_eq!(v["blanket_users"], 136);
    assert_eq!(v["key_committees"], "per-lane", "{v}");
    let lk = &v["lane_keys"];
    assert!(lk["row_committees"].as_u64().unwrap() >= 1, "{lk}");
    // Honest figures beside the figures over all members: never above them.
    for (all, honest) in [
        ("row_member_bytes_worst", "row_member_bytes_worst_honest"),
        (
            "column_member_bytes_worst",
            "column_member_bytes_worst_honest",
        ),
    ] {
        assert!(lk[honest].as_u64().unwrap() > 0, "{lk}");
        assert!(
            lk[honest].as_u64().unwrap() <= lk[all].as_u64().unwrap(),
            "{lk}"
        );
    }
    let fate = v["worst_honest_client_fate"].as_str().unwrap();
    assert!(fate.starts_with("honest"), "{fate}");
    for r in v["roles"].as_array().unwrap() {
        assert!(
            r["bytes_worst_honest"].as_u64() <= r["bytes_worst"].as_u64(),
            "{r}"
        );
        assert!(r["honest_parties"].as_u64() <= r["parties"].as_u64(), "{r}");
    }
    assert!(lk["dummies"].as_u64().unwrap() >= 1, "{lk}");
    let trust = v["trust"].as_str().unwrap();
    assert!(trust.contains("dummies"), "{trust}");
    let h = &v["histogram"];
    assert!(h["certified_epsilon"].as_f64().unwrap() <= 1.0, "{h}");
    assert!(
        h["certified_delta_given_private_shuffle"].as_f64().unwrap() <= 1e-6,
        "{h}"
    );
    // Dummies are bad cells: up to D + M = 14 of them.
    assert_eq!(h["alternating"]["bad_cells_max"], 14, "{h}");
}

#[test]
fn per_lane_key_committees_need_the_alternating_variant() {
    fails_with(
        &[
            "protocol",
            "run",
            "--clients",
            "150",
            "--lane-keys",
            "--sigma",
            "12",
        ],
        "--lane-keys (= --key-committees per-lane) needs --variant alternating",
    );
    fails_with(
        &[
            "protocol",
            "run",
            "--clients",
            "150",
            "--key-committees",
            "per-lane",
            "--sigma",
            "12",
        ],
        "--key-committees per-lane needs --variant alternating: the amortized variant has one list and one key committee (allowed --key-committees with --variant amortized: single",
    );
    fails_with(
        &[
            "protocol",
            "run",
            "--clients",
            "150",
            "--variant",
            "alternating",
            "--key-committees",
            "both",
        ],
        "invalid value 'both' for '--key-committees",
    );
}

/// Where the lane rule has no solution, an explicit `--key-committees per-lane` is refused
/// naming the flag, and the default falls back to one committee and says so.
#[test]
fn per_lane_key_committees_infeasible() {
    let base = [
        "protocol",
        "run",
        "--clients",
        "30",
        "--dropout",
        "0.05",
        "--malicious",
        "0.05",
        "--variant",
        "alternating",
    ];
    let mut explicit = base.to_vec();
    explicit.extend_from_slice(&["--key-committees", "per-lane"]);
    fails_with(
        &explicit,
        "--key-committees per-lane (allowed: per-lane or single)",
    );
    let mut default = base.to_vec();
    default.push("--json");
    let v = json(&default);
    assert_eq!(v["delivered"], true, "{v}");
    assert_eq!(v["key_committees"], "single", "{v}");
    let note = v["key_committees_note"].as_str().unwrap();
    assert!(note.contains("no solution"), "{note}");
    assert!(v.get("lane_keys").is_none(), "{v}");
}

/// Conflicting or out-of-range flags of `protocol run` are usage errors: exit code 2 (the
/// exit-code table of `blanket --help`), the message naming the flag.
#[test]
fn conflicting_protocol_run_flags_exit_with_code_2() {
    for (args, needle) in [
        (
            &[
                "protocol",
                "run",
                "--clients",
                "150",
                "--key-committees",
                "per-lane",
            ][..],
            "--key-committees per-lane needs --variant alternating",
        ),
        (
            &["protocol", "run", "--clients", "2"][..],
            "--clients = 2 is out of range",
        ),
        (
            &[
                "protocol",
                "run",
                "--clients",
                "60",
                "--variant",
                "alternating",
                "--protocol",
                "ikos-sum",
                "--eps",
                "1",
            ][..],
            "ikos-sum with --variant alternating is refused",
        ),
        (
            &[
                "protocol",
                "run",
                "--clients",
                "30",
                "--dropout",
                "0.05",
                "--malicious",
                "0.05",
                "--variant",
                "alternating",
                "--key-committees",
                "per-lane",
            ][..],
            "--key-committees per-lane (allowed: per-lane or single)",
        ),
    ] {
        let out = blanket(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
