//! End-to-end tests of the IKOS (split-and-mix) sum commands: `calibrate ikos-sum`,
//! `simulate ikos-sum`, `compare sum`.

mod common;

use common::{fails_code, json, temp_file};

#[test]
fn calibrate_ikos_sum_json_keys_and_delta() {
    let v = json(&[
        "calibrate",
        "ikos-sum",
        "--n",
        "100",
        "--eps",
        "1",
        "--sigma",
        "30",
        "--json",
    ]);
    for key in [
        "p",
        "q",
        "m",
        "alpha",
        "sigma",
        "eps_realized",
        "delta",
        "predicted_mse",
        "bytes_per_user",
        "assumes",
    ] {
        assert!(v.get(key).is_some(), "missing {key} in {v}");
    }
    assert_eq!(v["p"], 10);
    assert_eq!(v["sigma"], 30);
    let delta = v["delta"].as_f64().unwrap();
    let want = (1.0 + 1f64.exp()) * 2f64.powi(-30);
    assert!((delta - want).abs() <= 1e-12 * want, "{delta} vs {want}");
    assert!(v["eps_realized"].as_f64().unwrap() <= 1.0);
    // --delta D picks the smallest sigma with (1 + e^eps) 2^-sigma <= D.
    let v = json(&[
        "calibrate",
        "ikos-sum",
        "--n",
        "100",
        "--eps",
        "1",
        "--delta",
        "1e-8",
        "--json",
    ]);
    let sigma = v["sigma"].as_i64().unwrap() as i32;
    let d = |s: i32| (1.0 + 1f64.exp()) * 2f64.powi(-s);
    assert!(d(sigma) <= 1e-8 && d(sigma - 1) > 1e-8, "sigma {sigma}");
    assert!(v["delta"].as_f64().unwrap() <= 1e-8);
}

/// Observed MSE over 400 repetitions at n = 400 against the predicted upper bound
/// (rounding <= 1/4 per client, so the bound is nearly tight on the ECG data). The sample
/// mean of 400 squared errors of a near-Laplace error has relative sd about
/// sqrt(5/400) ~ 0.11; we accept 0.6 <= ratio <= 1.25 (more than 2 sd on each side).
#[test]
fn simulate_ikos_sum_matches_prediction() {
    let v = json(&[
        "simulate", "ikos-sum", "--n", "400", "--eps", "1", "--sigma", "30", "--reps", "400",
        "--seed", "7", "--json",
    ]);
    for key in [
        "mse",
        "predicted_mse",
        "seconds",
        "shuffled",
        "n",
        "reps",
        "seed",
    ] {
        assert!(v.get(key).is_some(), "missing {key} in {v}");
    }
    assert_eq!(v["n"], 400);
    assert_eq!(v["reps"], 400);
    assert_eq!(v["shuffled"], true);
    let ratio = v["mse"].as_f64().unwrap() / v["predicted_mse"].as_f64().unwrap();
    assert!(
        (0.6..=1.25).contains(&ratio),
        "observed / predicted = {ratio}"
    );
}

#[test]
fn simulate_ikos_sum_reads_csv() {
    let f = temp_file("ikos.csv", "0\n0.25\n0.5\n1\n0.75\n");
    let v = json(&[
        "simulate",
        "ikos-sum",
        "--eps",
        "2",
        "--sigma",
        "20",
        "--reps",
        "3",
        "--data",
        f.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(v["n"], 5);
    assert!((v["true_sum"].as_f64().unwrap() - 2.5).abs() < 1e-12);
}

#[test]
fn ikos_bad_input_exits_2_naming_the_flag() {
    let base = ["simulate", "ikos-sum", "--reps", "1"];
    let with = |extra: &[&str]| -> Vec<String> {
        base.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    let check = |extra: &[&str], needle: &str| {
        let args = with(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        fails_code(2, &args, needle);
    };
    check(&["--n", "1", "--eps", "1"], "--n");
    check(&["--n", "2e12", "--eps", "1"], "--n");
    // Too many shares to hold in memory for a simulation (calibration has no such limit).
    check(&["--n", "1e9", "--eps", "1"], "--n");
    check(&["--n", "100", "--eps", "0"], "--eps");
    check(&["--n", "100", "--eps", "-1"], "--eps");
    check(&["--n", "100", "--eps", "1", "--sigma", "0"], "--sigma");
    check(&["--n", "100", "--eps", "1", "--sigma", "513"], "--sigma");
    check(&["--n", "100", "--eps", "1", "--delta", "0"], "--delta");
    check(
        &["--n", "100", "--eps", "1", "--delta", "1e-300"],
        "--delta",
    );
    let f = temp_file("ikos-bad.csv", "0.5\n1.2\n");
    check(&["--eps", "1", "--data", f.to_str().unwrap()], "--data");
    fails_code(
        2,
        &[
            "calibrate",
            "ikos-sum",
            "--n",
            "100",
            "--eps",
            "1",
            "--sigma",
            "600",
        ],
        "--sigma",
    );
    fails_code(
        2,
        &["calibrate", "ikos-sum", "--n", "1", "--eps", "1"],
        "--n",
    );
}

/// The share count is certified for any n up to 10^12 (no O(n^2) limit any more): at
/// n = 10^8 the calibration answers with a smaller m than at n = 10^4.
#[test]
fn calibrate_ikos_sum_at_large_n() {
    let at = |n: &str| {
        json(&[
            "calibrate",
            "ikos-sum",
            "--n",
            n,
            "--eps",
            "1",
            "--sigma",
            "40",
            "--json",
        ])
    };
    let small = at("1e4");
    let large = at("1e8");
    assert_eq!(large["n"], 100_000_000);
    assert_eq!(large["p"], 10_000);
    let (ms, ml) = (small["m"].as_u64().unwrap(), large["m"].as_u64().unwrap());
    assert!(ml >= 3 && ml < ms, "m at 1e8 = {ml}, at 1e4 = {ms}");
    let v = json(&[
        "simulate", "ikos-sum", "--n", "1e5", "--eps", "1", "--sigma", "40", "--reps", "1",
        "--json",
    ]);
    assert_eq!(v["n"], 100_000);
}

/// `simulate ikos-sum --variant alternating` runs over A^2_pi with the certified share count
/// (n = 400 = 20 x 20): the sum is exact whatever the shuffle, so the error matches the same
/// prediction as under a uniform shuffle (200 repetitions: relative sd about 0.16, accepted
/// 0.5..=1.4); m is at least the uniform count; a ragged n runs with the ragged bound.
#[test]
fn alternating_shuffler_runs_with_certified_share_count() {
    let base = [
        "simulate", "ikos-sum", "--n", "400", "--eps", "1", "--sigma", "30", "--reps", "200",
        "--seed", "7", "--json",
    ];
    let uniform = json(&base);
    let mut alt_args = base.to_vec();
    alt_args.extend_from_slice(&["--variant", "alternating"]);
    let alt = json(&alt_args);
    assert_eq!(alt["shuffler"], "alternating");
    assert_eq!(uniform["shuffler"], "uniform");
    let (m_alt, m_uni) = (
        alt["calibration"]["m"].as_u64().unwrap(),
        uniform["calibration"]["m"].as_u64().unwrap(),
    );
    assert!(m_alt >= m_uni, "{m_alt} < {m_uni}");
    assert!(alt["calibration"]["assumes"]
        .as_str()
        .unwrap()
        .contains("A^2_pi"));
    let ratio = alt["mse"].as_f64().unwrap() / alt["predicted_mse"].as_f64().unwrap();
    assert!(
        (0.5..=1.4).contains(&ratio),
        "observed / predicted = {ratio}"
    );
    // A ragged n (1000: 32 x 32 with a last row of 8) runs too, with the ragged bound's m.
    let ragged = json(&[
        "simulate",
        "ikos-sum",
        "--n",
        "1000",
        "--eps",
        "1",
        "--sigma",
        "30",
        "--reps",
        "2",
        "--variant",
        "alternating",
        "--json",
    ]);
    assert_eq!(ragged["shuffler"], "alternating");
    assert!(ragged["calibration"]["assumes"]
        .as_str()
        .unwrap()
        .contains("ragged"));
    let m_ragged = ragged["calibration"]["m"].as_u64().unwrap();
    assert!(m_ragged >= m_alt, "{m_ragged} < {m_alt}");
}

#[test]
fn compare_sum_json_keys() {
    let v = json(&[
        "compare", "sum", "--n", "400", "--eps", "1", "--delta", "1e-6", "--reps", "2", "--json",
    ]);
    let rows = v["protocols"].as_array().expect("protocols array");
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "scalar-sum",
            "ikos-sum",
            "ikos-sum-alternating",
            "central-discrete-laplace",
            "local-randomized-response"
        ]
    );
    for r in rows {
        for key in [
            "name",
            "predicted_mse",
            "observed_mse",
            "messages_per_user",
            "bytes_per_user",
            "trust",
            "reason",
        ] {
            assert!(r.get(key).is_some(), "missing {key} in {r}");
        }
        assert!(r["predicted_mse"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["reason"].is_null(), "{r}");
    }
    // IKOS is within a constant of the central model; local RR is far worse.
    let mse = |i: usize| rows[i]["predicted_mse"].as_f64().unwrap();
    assert!(mse(1) < 3.0 * mse(3));
    assert!(mse(4) > 10.0 * mse(1));
    assert!(rows[1]["messages_per_user"].as_u64().unwrap() >= 2);
    // n = 400 = 20 x 20: the A^2_pi row has the same noise (same predicted MSE), its own
    // certified m (never fewer shares than the uniform shuffle), its own trust, and an
    // observed error from the real alternating shuffler.
    let (uni, alt) = (&rows[1], &rows[2]);
    assert_eq!(alt["predicted_mse"], uni["predicted_mse"]);
    let m_alt = alt["messages_per_user"].as_u64().unwrap();
    assert!(m_alt >= uni["messages_per_user"].as_u64().unwrap(), "{alt}");
    assert!(alt["trust"].as_str().unwrap().contains("A^2_pi"), "{alt}");
    assert_ne!(alt["trust"], uni["trust"]);
    assert!(alt["observed_mse"].as_f64().unwrap() >= 0.0, "{alt}");
    assert!(alt["note"].as_str().unwrap().contains("20 x 20"), "{alt}");
    // The same m as `simulate ikos-sum --variant alternating` at these parameters.
    let sim = json(&[
        "simulate",
        "ikos-sum",
        "--n",
        "400",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--reps",
        "1",
        "--variant",
        "alternating",
        "--json",
    ]);
    assert_eq!(sim["calibration"]["m"].as_u64(), Some(m_alt));
}

#[test]
fn compare_sum_bad_input_and_plot() {
    fails_code(
        2,
        &[
            "compare", "sum", "--n", "100", "--eps", "0", "--delta", "1e-6",
        ],
        "--eps",
    );
    fails_code(
        2,
        &[
            "compare", "sum", "--n", "1", "--eps", "1", "--delta", "1e-6",
        ],
        "--n",
    );
    let png = common::temp_dir("compare-plot").join("compare_sum.png");
    let v = json(&[
        "compare",
        "sum",
        "--n",
        "200",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--reps",
        "1",
        "--plot",
        png.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(v["n"], 200);
    // n = 200 is ragged (15 x 15, last row of 4): the A^2_pi row has a certified m (ragged
    // bound) and says so.
    let alt = &v["protocols"][2];
    assert_eq!(alt["name"], "ikos-sum-alternating");
    assert!(alt["messages_per_user"].as_u64().unwrap() >= 2, "{alt}");
    assert!(alt["reason"].is_null(), "{alt}");
    assert!(
        alt["note"].as_str().unwrap().contains("ragged last row of"),
        "{alt}"
    );
    let bytes = std::fs::read(&png).expect("plot written");
    assert!(bytes.starts_with(b"\x89PNG"), "not a PNG");
}

#[test]
fn calibrate_ikos_histogram_and_vector() {
    let v = json(&[
        "calibrate",
        "ikos-histogram",
        "--n",
        "1e4",
        "--domain",
        "10",
        "--eps",
        "1",
        "--sigma",
        "40",
        "--json",
    ]);
    for key in [
        "d",
        "eps_per_coordinate",
        "sigma_per_coordinate",
        "delta",
        "p",
        "q",
        "m",
        "messages_per_user",
        "bytes_per_user",
        "predicted_mse",
    ] {
        assert!(v.get(key).is_some(), "missing {key} in {v}");
    }
    assert_eq!(v["protocol"], "ikos-histogram");
    assert_eq!(v["p"], 1);
    assert_eq!(v["sigma_per_coordinate"], 44);
    assert_eq!(
        v["messages_per_user"].as_u64().unwrap(),
        10 * v["m"].as_u64().unwrap()
    );
    // 10 discrete Laplace variances at alpha = e^(-1/2) (rounded up by < 2^-39).
    let a = (-0.5f64).exp();
    let want = 10.0 * 2.0 * a / ((1.0 - a) * (1.0 - a));
    let got = v["predicted_mse"].as_f64().unwrap();
    assert!((got - want).abs() < 1e-6 * want, "{got} vs {want}");
    assert!(v["delta"].as_f64().unwrap() <= (1.0 + 1f64.exp()) * 2f64.powi(-40));
    let v = json(&[
        "calibrate",
        "ikos-vector",
        "--n",
        "1e4",
        "--d",
        "3",
        "--eps",
        "3",
        "--json",
    ]);
    assert_eq!(v["protocol"], "ikos-vector");
    assert_eq!(v["p"], 100);
    assert!((v["eps_per_coordinate"].as_f64().unwrap() - 1.0).abs() < 1e-15);
    fails_code(
        2,
        &[
            "calibrate",
            "ikos-histogram",
            "--n",
            "100",
            "--domain",
            "1",
            "--eps",
            "1",
        ],
        "--domain",
    );
    fails_code(
        2,
        &[
            "calibrate",
            "ikos-vector",
            "--n",
            "100",
            "--d",
            "0",
            "--eps",
            "1",
        ],
        "--d",
    );
    fails_code(
        2,
        &[
            "calibrate",
            "ikos-vector",
            "--n",
            "100",
            "--d",
            "2",
            "--eps",
            "0",
        ],
        "--eps",
    );
}

/// The histogram run of `simulate_ikos_histogram_matches_prediction` (also over A^2_pi).
const HIST_RUN: [&str; 15] = [
    "simulate",
    "ikos-histogram",
    "--n",
    "500",
    "--domain",
    "4",
    "--eps",
    "1",
    "--sigma",
    "20",
    "--reps",
    "300",
    "--seed",
    "11",
    "--json",
];

/// The data of the vector run: two coordinates with f = 0.25 at p = 15, one with f = 0.
const VECTOR_CSV: &str = "0.55,0.2,0.55\n0.55,0.2,0.55\n";

/// The vector run of `simulate_ikos_vector_matches_prediction` on the CSV at `path`.
fn vector_run(path: &str) -> Vec<&str> {
    vec![
        "simulate",
        "ikos-vector",
        "--n",
        "200",
        "--d",
        "3",
        "--eps",
        "3",
        "--sigma",
        "20",
        "--data",
        path,
        "--reps",
        "300",
        "--seed",
        "5",
        "--json",
    ]
}

/// `simulate ikos-histogram`: d coordinate instances, one uniform shuffle each. The counts
/// are exact, so the predicted MSE (d discrete Laplace variances) is the exact expected
/// squared error. One repetition's squared error is a sum of d = 4 squared near-Laplace
/// errors (relative sd about sqrt(5/4) ~ 1.1), so the mean of 300 has relative sd about
/// 0.065; we accept 0.75 <= ratio <= 1.25 (almost 4 sd).
#[test]
fn simulate_ikos_histogram_matches_prediction() {
    let v = json(&HIST_RUN);
    for key in [
        "mse",
        "mse_ci95",
        "predicted_mse",
        "predicted_mse_this_data",
        "mse_ratio",
        "seconds",
        "shuffled",
        "shuffler",
        "n",
        "d",
        "reps",
        "seed",
        "calibration",
    ] {
        assert!(v.get(key).is_some(), "missing {key} in {v}");
    }
    assert_eq!(v["protocol"], "ikos-histogram");
    assert_eq!(v["n"], 500);
    assert_eq!(v["d"], 4);
    assert_eq!(v["shuffler"], "uniform");
    assert_eq!(v["calibration"]["sigma_per_coordinate"], 22);
    // 4 discrete Laplace variances at alpha = e^(-1/2) (rounded up by < 2^-39).
    let a = (-0.5f64).exp();
    let want = 4.0 * 2.0 * a / ((1.0 - a) * (1.0 - a));
    let pred = v["predicted_mse"].as_f64().unwrap();
    assert!((pred - want).abs() < 1e-6 * want, "{pred} vs {want}");
    let ratio = v["mse_ratio"].as_f64().unwrap();
    assert!(
        (0.75..=1.25).contains(&ratio),
        "observed / predicted = {ratio}"
    );
}

/// `simulate ikos-vector` on a CSV of vectors, resized to n = 200 with replacement:
/// p = 15, and every coordinate is 0.55 or 0.2, so p x = 8.25 or 3 and the exact rounding
/// variance for this data is known. Tolerance as above (relative sd about 0.075 for 300
/// repetitions of a sum of d = 3 squared errors).
#[test]
fn simulate_ikos_vector_matches_prediction() {
    let f = temp_file("ikos-vectors.csv", VECTOR_CSV);
    let v = json(&vector_run(f.to_str().unwrap()));
    assert_eq!(v["protocol"], "ikos-vector");
    assert_eq!(v["n"], 200);
    assert_eq!(v["d"], 3);
    assert_eq!(v["calibration"]["p"], 15);
    // Two coordinates with f = 0.25 (variance 3/16 per client), one with f = 0 (none).
    let a = v["calibration"]["predicted_mse"].as_f64().unwrap();
    let noise = a * 225.0 - 3.0 * 200.0 / 4.0; // d noise variances, encoded units
    let want = (2.0 * 200.0 * 3.0 / 16.0 + noise) / 225.0;
    let got = v["predicted_mse_this_data"].as_f64().unwrap();
    assert!((got - want).abs() < 1e-9 * want, "{got} vs {want}");
    assert!(got < v["predicted_mse"].as_f64().unwrap());
    let ratio = v["mse_ratio"].as_f64().unwrap();
    assert!(
        (0.7..=1.3).contains(&ratio),
        "observed / predicted = {ratio}"
    );
}

#[test]
fn simulate_ikos_vector_and_histogram_bad_input() {
    let h = |extra: &[&str], needle: &str| {
        let mut args = vec!["simulate", "ikos-histogram", "--reps", "1"];
        args.extend_from_slice(extra);
        fails_code(2, &args, needle);
    };
    h(&["--n", "100", "--domain", "1", "--eps", "1"], "--domain");
    h(
        &["--n", "100", "--domain", "2000000", "--eps", "1"],
        "--domain",
    );
    h(&["--n", "1", "--domain", "4", "--eps", "1"], "--n");
    h(&["--n", "100", "--domain", "4", "--eps", "0"], "--eps");
    h(
        &["--n", "100", "--domain", "4", "--eps", "1", "--sigma", "0"],
        "--sigma",
    );
    h(
        &["--n", "100", "--domain", "4", "--eps", "1", "--delta", "2"],
        "--delta",
    );
    // n d m shares beyond what a simulation holds in memory.
    h(&["--n", "2e6", "--domain", "200", "--eps", "1"], "--n");
    let bad = temp_file("ikos-bad-cat.csv", "0\n1\n7\n");
    h(
        &[
            "--domain",
            "4",
            "--eps",
            "1",
            "--data",
            bad.to_str().unwrap(),
        ],
        "--data",
    );
    let v = |extra: &[&str], needle: &str| {
        let mut args = vec!["simulate", "ikos-vector", "--reps", "1"];
        args.extend_from_slice(extra);
        fails_code(2, &args, needle);
    };
    v(&["--n", "100", "--d", "0", "--eps", "1"], "--d");
    v(&["--n", "100", "--d", "2000000", "--eps", "1"], "--d");
    v(&["--n", "100", "--d", "2", "--eps", "-1"], "--eps");
    v(&["--n", "1e7", "--d", "100", "--eps", "1"], "--n");
    let bad = temp_file("ikos-bad-vec.csv", "0.5,0.5\n0.5,1.5\n");
    v(
        &["--d", "2", "--eps", "1", "--data", bad.to_str().unwrap()],
        "--data",
    );
    let short = temp_file("ikos-short-vec.csv", "0.5,0.5\n0.5\n");
    v(
        &["--d", "2", "--eps", "1", "--data", short.to_str().unwrap()],
        "--data",
    );
}

/// Regression: `calibrate ikos-histogram --n 1e8 --domain 100 --eps 1` failed with the Polya
/// sampler's internal message (n (2^40 - A) >= 2^64); large n is now sampled exactly by
/// thinning. An epsilon too small for the 40-bit alpha (eps / (d p) < 2^-39 (1 + 2^-10)) is refused up
/// front, naming --eps, --n and the dimension flag and printing the smallest epsilon accepted.
#[test]
fn large_n_calibrations_and_tiny_epsilon() {
    let v = json(&[
        "calibrate",
        "ikos-histogram",
        "--n",
        "1e8",
        "--domain",
        "100",
        "--eps",
        "1",
        "--json",
    ]);
    assert_eq!(v["p"], 1);
    assert_eq!(v["d"], 100);
    let eps = v["eps"].as_f64().unwrap();
    assert_eq!(eps, 1.0);
    assert!(v["m"].as_u64().unwrap() >= 2, "{v}");
    for (cmd, dim_flag) in [("ikos-histogram", "--domain"), ("ikos-vector", "--d")] {
        json(&[
            "calibrate",
            cmd,
            "--n",
            "1e12",
            dim_flag,
            "10000",
            "--eps",
            "10",
            "--json",
        ]);
    }
    json(&[
        "calibrate",
        "ikos-sum",
        "--n",
        "1e12",
        "--eps",
        "10",
        "--json",
    ]);
    let tiny = [
        "calibrate",
        "ikos-vector",
        "--n",
        "1e12",
        "--d",
        "10000",
        "--eps",
        "0.01",
    ];
    for needle in [
        "--eps 0.01 with --n 1000000000000 --d 10000: epsilon 0.01 is too small",
        "epsilon >= 1.821e-2",
    ] {
        fails_code(2, &tiny, needle);
    }
    fails_code(
        2,
        &[
            "calibrate",
            "ikos-histogram",
            "--n",
            "100",
            "--domain",
            "4",
            "--eps",
            "1e-12",
        ],
        "--eps 1e-12 with --n 100 --domain 4",
    );
    fails_code(
        2,
        &["calibrate", "ikos-sum", "--n", "100", "--eps", "1e-12"],
        "--eps 1e-12 with --n 100: epsilon 1e-12 is too small for sensitivity p = 10",
    );
}

/// `simulate ikos-histogram|ikos-vector --variant alternating`: all d m instances through
/// A^2_pi sharing pi, m certified per coordinate (at sigma + ceil(log2 d)), never below the
/// uniform count, same q and delta; the sums are exact whatever the shuffle, so the observed
/// error matches the same prediction as under uniform shuffles (the runs and tolerances of
/// the two tests above: 300 repetitions, about 4 standard deviations; n = 500 and 200 are
/// ragged layouts).
#[test]
fn ikos_histogram_and_vector_over_alternating() {
    let f = temp_file("ikos-vectors-alt.csv", VECTOR_CSV);
    let vec_args = vector_run(f.to_str().unwrap());
    for (base, dim, band) in [
        (&HIST_RUN[..], 4u64, 0.75..=1.25),
        (&vec_args[..], 3, 0.7..=1.3),
    ] {
        let mut uni_args = base.to_vec();
        uni_args[base.len() - 4] = "1"; // one repetition is enough for the uniform parameters
        let uniform = json(&uni_args);
        let mut args = base.to_vec();
        args.extend_from_slice(&["--variant", "alternating"]);
        let alt = json(&args);
        let cmd = base[1];
        assert_eq!(alt["shuffler"], "alternating", "{cmd}");
        assert_eq!(uniform["shuffler"], "uniform", "{cmd}");
        let (ca, cu) = (&alt["calibration"], &uniform["calibration"]);
        assert!(
            ca["m"].as_u64().unwrap() >= cu["m"].as_u64().unwrap(),
            "{cmd}"
        );
        assert_eq!(ca["q"], cu["q"], "{cmd}");
        assert_eq!(ca["delta"], cu["delta"], "{cmd}");
        assert_eq!(ca["predicted_mse"], cu["predicted_mse"], "{cmd}");
        assert!(ca["assumes"].as_str().unwrap().contains("A^2_pi"), "{cmd}");
        assert_eq!(
            ca["messages_per_user"].as_u64().unwrap(),
            dim * ca["m"].as_u64().unwrap()
        );
        let ratio = alt["mse_ratio"].as_f64().unwrap();
        assert!(
            band.contains(&ratio),
            "{cmd}: observed / predicted = {ratio}"
        );
    }
}

/// Issue 26 item 1: `calibrate ikos-sum --n 1e6 --eps 30` printed certified (30, 9.72). The
/// default sigma now grows with eps (delta <= 1e-6), an explicit --sigma whose delta is not
/// below 1 exits 2 naming the sigma needed, and eps 800 / 1e300 are refused, never `inf`.
#[test]
fn vacuous_delta_is_never_printed_as_certified() {
    let v = json(&[
        "calibrate",
        "ikos-sum",
        "--n",
        "1e6",
        "--eps",
        "30",
        "--json",
    ]);
    assert_eq!(v["sigma"], 64, "{v}");
    assert!(v["delta"].as_f64().unwrap() <= 1e-6, "{v}");
    let table = common::blanket(&["calibrate", "ikos-sum", "--n", "1e6", "--eps", "30"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains("(30, 5.794e-7)"), "{text}");
    fails_code(
        2,
        &[
            "calibrate",
            "ikos-sum",
            "--n",
            "1e6",
            "--eps",
            "30",
            "--sigma",
            "40",
        ],
        "sigma >= 64",
    );
    for eps in ["800", "1e300"] {
        fails_code(
            2,
            &["calibrate", "ikos-sum", "--n", "1e6", "--eps", eps],
            "above the largest sigma",
        );
    }
    // Every IKOS command that prints (eps, delta), at a few eps over 1e-3..1e4: exit 0 with
    // delta < 1 (<= 1e-6 at the default sigma), or exit 2; never a certified delta >= 1.
    let commands: [&[&str]; 5] = [
        &["calibrate", "ikos-sum", "--n", "1e4"],
        &["calibrate", "ikos-histogram", "--n", "1e4", "--domain", "8"],
        &["calibrate", "ikos-vector", "--n", "1e4", "--d", "3"],
        &["simulate", "ikos-sum", "--n", "100", "--reps", "1"],
        &[
            "simulate",
            "ikos-histogram",
            "--n",
            "100",
            "--domain",
            "4",
            "--reps",
            "1",
        ],
    ];
    for cmd in commands {
        for eps in ["1e-3", "0.1", "10", "30", "300", "1e4"] {
            for sigma in [None, Some("40")] {
                let mut args: Vec<&str> = cmd.to_vec();
                args.extend(["--eps", eps, "--json"]);
                if let Some(s) = sigma {
                    args.extend(["--sigma", s]);
                }
                let out = common::blanket(&args);
                match out.status.code() {
                    Some(0) => {
                        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
                        // simulate nests the calibration; calibrate prints it flat.
                        let cal = if v["calibration"].is_object() {
                            &v["calibration"]
                        } else {
                            &v
                        };
                        let d = cal
                            .get("delta")
                            .and_then(|d| d.as_f64())
                            .unwrap_or_else(|| panic!("{args:?}: no delta in {v}"));
                        assert!(d < 1.0, "{args:?}: delta {d}");
                        if sigma.is_none() {
                            assert!(d <= 1e-6, "{args:?}: delta {d}");
                        }
                    }
                    Some(2) => {}
                    c => panic!("{args:?}: exit {c:?}"),
                }
            }
        }
    }
    // compare sum picks sigma from --delta: a delta out of reach is a usage error naming it.
    fails_code(
        2,
        &[
            "compare", "sum", "--n", "100", "--eps", "400", "--delta", "1e-6",
        ],
        "--delta",
    );
}

/// Issue 26 item 1b: the IKOS commands certify for the honest, present clients, with
/// `--dropout`/`--malicious` as in `protocol run` (n' = n - floor(alpha n) - floor(gamma n)):
/// noise for n' clients (more variance), m for n', and the output says so.
#[test]
fn ikos_commands_certify_for_the_honest_present_clients() {
    let all = json(&[
        "calibrate",
        "ikos-sum",
        "--n",
        "1e4",
        "--eps",
        "1",
        "--json",
    ]);
    assert_eq!(all["honest_present_users"], 10_000);
    let some = json(&[
        "calibrate",
        "ikos-sum",
        "--n",
        "1e4",
        "--eps",
        "1",
        "--dropout",
        "0.05",
        "--malicious",
        "0.1",
        "--json",
    ]);
    assert_eq!(some["honest_present_users"], 8_500, "{some}");
    assert!(some["m"].as_u64() >= all["m"].as_u64(), "{some}");
    assert!(
        some["predicted_mse"].as_f64().unwrap() > 1.1 * all["predicted_mse"].as_f64().unwrap(),
        "{some}"
    );
    assert!(some["assumes"]
        .as_str()
        .unwrap()
        .contains("honest and present"));
    let out = common::blanket(&[
        "calibrate",
        "ikos-sum",
        "--n",
        "1e4",
        "--eps",
        "1",
        "--dropout",
        "0.05",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("n' = 9500 honest, present clients"), "{text}");
    fails_code(
        2,
        &[
            "calibrate",
            "ikos-sum",
            "--n",
            "1e4",
            "--eps",
            "1",
            "--dropout",
            "0.5",
        ],
        "--dropout",
    );
    let c = json(&[
        "compare",
        "sum",
        "--n",
        "400",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--reps",
        "1",
        "--dropout",
        "0.25",
        "--json",
    ]);
    assert_eq!(c["honest_present_users"], 300, "{c}");
    let alt = c["protocols"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "ikos-sum-alternating")
        .unwrap();
    assert!(
        alt["reason"].as_str().unwrap().contains("--dropout"),
        "{alt}"
    );
    let v = json(&[
        "simulate",
        "ikos-vector",
        "--n",
        "100",
        "--d",
        "2",
        "--eps",
        "1",
        "--reps",
        "1",
        "--malicious",
        "0.1",
        "--json",
    ]);
    assert_eq!(v["calibration"]["honest_present_users"], 90, "{v}");
}
