//! End-to-end checks of `blanket calibrate|simulate|experiment vector-sum`.

mod common;
use common::*;

#[test]
fn calibrate_vector_sum_json() {
    let args = "calibrate vector-sum --n 50000 --d 100 --eps 0.95 --delta 0.5 --k 3 --t 1 --accountant paper";
    let v = json(&words(&format!("{args} --json")));
    for key in [
        "gamma",
        "k",
        "t",
        "d",
        "predicted_mse",
        "method",
        "paper_gamma",
    ] {
        assert!(v.get(key).is_some(), "missing {key}: {v}");
    }
    // Theorem 4.1 (t = 1) with the safe k + 1 = 4 values: 27 * 100 * 4 / (49999 * 0.95).
    let g = v["gamma"].as_f64().unwrap();
    let hand = 10_800.0 / (49_999.0 * 0.95);
    assert!(g >= hand && (g - hand) / hand < 1e-12, "{g} vs {hand}");
    assert_eq!(v["accounted_domain"], 400);
    // The paper's m = k convention reproduces the spec's reference value.
    let p = json_code(3, &words(&format!("{args} --paper-domain --json")));
    let g = p["gamma"].as_f64().unwrap();
    assert!((g - 0.1705297).abs() < 5e-8, "{g}");
    // Free k and t: the calibrator picks them.
    let f = json(&[
        "calibrate",
        "vector-sum",
        "--n",
        "50000",
        "--d",
        "100",
        "--eps",
        "0.95",
        "--delta",
        "0.5",
        "--accountant",
        "paper",
        "--json",
    ]);
    assert!(
        f["t"].as_u64().unwrap() >= 1 && f["k"].as_u64().unwrap() >= 1,
        "{f}"
    );
}

#[test]
fn calibrate_vector_sum_errors_name_the_fix() {
    let out = blanket(&[
        "calibrate",
        "vector-sum",
        "--n",
        "2000",
        "--d",
        "100",
        "--eps",
        "0.5",
        "--delta",
        "1e-6",
        "--t",
        "1",
        "--accountant",
        "paper",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("smallest n that works is"), "{err}");
    for (args, needle) in [
        (vec!["--d", "0"], "d must be an integer from 1"),
        (
            vec!["--d", "10", "--t", "11"],
            "t must be an integer from 1 to d",
        ),
    ] {
        let mut a = vec![
            "calibrate",
            "vector-sum",
            "--n",
            "50000",
            "--eps",
            "0.95",
            "--delta",
            "0.5",
        ];
        a.extend(args);
        let out = blanket(&a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(needle), "{err}");
        assert!(!err.contains("panicked"));
    }
}

#[test]
fn simulate_vector_sum_json_and_bad_csv_rows() {
    let dir = temp_dir("sim");
    let good = dir.join("good.csv");
    let rows: String = (0..3000)
        .map(|i| {
            (0..4)
                .map(|j| format!("{}", ((i * 7 + j * 3) % 11) as f64 / 10.0))
                .collect::<Vec<_>>()
                .join(",")
                + "\n"
        })
        .collect();
    std::fs::write(&good, format!("a,b,c,d\n{rows}")).unwrap();
    let v = json(&[
        "simulate",
        "vector-sum",
        "--d",
        "4",
        "--eps",
        "0.9",
        "--delta",
        "1e-3",
        "--t",
        "1",
        "--k",
        "2",
        "--reps",
        "3",
        "--accountant",
        "paper",
        "--data",
        good.to_str().unwrap(),
        "--json",
    ]);
    for key in ["gamma", "mse", "predicted_mse", "seconds"] {
        assert!(v.get(key).is_some(), "missing {key}: {v}");
    }
    assert_eq!(v["n"], 3000);
    let ratio = v["mse"].as_f64().unwrap() / v["predicted_mse"].as_f64().unwrap();
    assert!(ratio > 0.2 && ratio < 5.0, "{v}");

    for (name, contents, needle) in [
        ("range.csv", "0.1,0.2\n0.3,1.5\n", "line 2, column 2"),
        ("nan.csv", "0.1,0.2\n0.3,0.4\nNaN,0.1\n", "line 3, column 1"),
        (
            "short.csv",
            "0.1,0.2\n0.3\n",
            "line 2: expected 2 values, found 1",
        ),
    ] {
        let p = dir.join(name);
        std::fs::write(&p, contents).unwrap();
        let out = blanket(&[
            "simulate",
            "vector-sum",
            "--d",
            "2",
            "--eps",
            "0.9",
            "--delta",
            "1e-3",
            "--data",
            p.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name} should fail");
        assert!(err.contains(needle), "{name}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn experiment_quick_writes_csv_png_and_summary() {
    let dir = temp_dir("exp");
    let out = blanket(&[
        "experiment",
        "vector-sum",
        "--sweep",
        "t",
        "--quick",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_to_string(dir.join("vector-sum-t.csv")).unwrap();
    assert!(csv.starts_with("sweep,x,t,k,d,n,eps,delta,gamma"), "{csv}");
    assert_eq!(csv.lines().count(), 4, "{csv}"); // header + t = 1, 3, 5
    let png = std::fs::read(dir.join("vector-sum-t.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("error lowest at t = 1"), "{summary}");
    // Item 19: every NaN certified_eps row says why, and the summary explains them.
    for line in csv.lines().skip(1).filter(|l| l.contains(",NaN,")) {
        assert!(line.contains("certified_eps is NaN"), "{line}");
    }
    if csv.contains(",NaN,") {
        assert!(summary.contains("`certified_eps` = NaN"), "{summary}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 8 item 2: the vector-sum error is already per mean vector; `account users` must not
/// divide it by n^2 again. The n it answers, simulated, gives about the target MSE.
#[test]
fn users_query_for_vector_sum_is_on_the_mean_vector_scale() {
    let u = json(&[
        "account",
        "users",
        "--protocol",
        "vector-sum",
        "--d",
        "10",
        "--t",
        "1",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--target-mse",
        "0.01",
        "--json",
    ]);
    let n = u["n"].as_u64().expect("n");
    assert!(num(&u, "normalized_mse") <= 0.01, "{u}");
    assert_eq!(num(&u, "normalized_mse"), num(&u, "predicted_mse"), "{u}");
    assert!(n > 1000, "{u}");
    let e = json(&[
        "account",
        "error",
        "--protocol",
        "vector-sum",
        "--d",
        "10",
        "--t",
        "1",
        "--n",
        &n.to_string(),
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--json",
    ]);
    assert_eq!(num(&e, "normalized_mse"), num(&e, "predicted_mse"), "{e}");
    assert!(num(&e, "normalized_mse") <= 0.01, "{e}");
    let s = json(&[
        "simulate",
        "vector-sum",
        "--n",
        &n.to_string(),
        "--d",
        "10",
        "--t",
        "1",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--reps",
        "20",
        "--no-shuffle",
        "--json",
    ]);
    // The worst case over data is the target; this data's observed error is at most about it.
    assert!(num(&s, "worst_case_mse") <= 0.01 * (1.0 + 1e-9), "{s}");
    assert!(num(&s, "mse") < 0.013 && num(&s, "mse") > 0.001, "{s}");
}

/// Issue 8 item 3: one eps0 per message and one per user, the same in `calibrate` and
/// `account error`.
#[test]
fn eps0_per_message_and_per_user_agree_across_commands() {
    let common = [
        "--d", "100", "--n", "1e5", "--eps", "1", "--delta", "1e-6", "--json",
    ];
    let mut c = vec!["calibrate", "vector-sum", "--t", "1"];
    c.extend(common);
    let cal = json(&c);
    let mut a = vec!["account", "error", "--protocol", "vector-sum", "--t", "1"];
    a.extend(common);
    let err = json(&a);
    assert_eq!(num(&cal, "eps0"), num(&err, "eps0"), "{cal}\n{err}");
    assert_eq!(num(&cal, "eps0_user"), num(&cal, "eps0"));
    assert_eq!(num(&err, "eps0_user"), num(&err, "eps0"));
    let t3 = "calibrate vector-sum --d 100 --t 3 --n 1e6 --eps 1 --delta 1e-6";
    let three = json(&words(&format!("{t3} --json")));
    let (e0, eu) = (num(&three, "eps0"), num(&three, "eps0_user"));
    assert!(eu >= 3.0 * e0 && eu <= 3.0 * e0 * (1.0 + 1e-12), "{three}");
    let out = blanket(&words(t3));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("eps0 per message (local DP)")
            && text.contains("eps0 per user (local DP guarantee)"),
        "{text}"
    );
}

/// Item 21 of issue 8: matrices and tensors are reachable from the CLI.
#[test]
fn simulate_a_matrix_with_shape() {
    let v = json(&[
        "simulate",
        "vector-sum",
        "--shape",
        "3x4",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--n",
        "2000",
        "--reps",
        "1",
        "--json",
    ]);
    assert_eq!(v["d"], 12, "{v}");
    assert_eq!(v["shape"], serde_json::json!([3, 4]));
    let t = &v["first_repetition"]["estimated_mean_tensor"];
    assert_eq!(t["shape"], serde_json::json!([3, 4]), "{t}");
    assert_eq!(t["data"].as_array().map(Vec::len), Some(12), "{t}");
    assert!(v["data"]["source"].as_str().unwrap().contains("3x4 tensor"));
    fails_with(
        &[
            "simulate",
            "vector-sum",
            "--shape",
            "10x0",
            "--eps",
            "1",
            "--delta",
            "1e-6",
        ],
        "--shape",
    );
}
