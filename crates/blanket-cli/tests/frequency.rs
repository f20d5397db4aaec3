//! End-to-end checks of `blanket simulate frequency` and `blanket compare frequency`: JSON
//! contracts, the data-dependent statement, data sources and exit codes on bad input.

mod common;
use common::*;

/// Runs a frequency command that releases (possibly with --allow-violations) and prints one
/// JSON object: exit 3 exactly when something it printed is not certified (issue 26 item 2:
/// "NO privacy guarantee holds for their holders" is not exit 0), else 0.
fn json_released(args: &[&str]) -> serde_json::Value {
    let (code, out, err) = run(args);
    let v: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {err}"));
    let uncertified = v["certified"] == false
        || v["protocols"]
            .as_array()
            .is_some_and(|rows| rows.iter().any(|r| r["certified"] == false));
    assert_eq!(
        code,
        Some(if uncertified { 3 } else { 0 }),
        "{args:?}: {err}"
    );
    v
}

const NAMES: [&str; 7] = [
    "dpcs",
    "dpds",
    "dpdg",
    "tss",
    "tss-prime",
    "shuffle-histogram",
    "local-grr",
];

#[test]
fn compare_frequency_json_keys_and_costs() {
    let c = json(&[
        "compare",
        "frequency",
        "--n",
        "20000",
        "--domain",
        "5",
        "--eps",
        "0.5",
        "--delta",
        "1e-6",
        "--reps",
        "2",
        "--json",
    ]);
    let rows = c["protocols"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, NAMES);
    for r in rows {
        for key in [
            "name",
            "predicted_variance",
            "observed_variance",
            "trust",
            "user_elements_sent",
            "server_operations",
        ] {
            assert!(r.get(key).is_some(), "missing {key} in {r}");
        }
        let (p, o) = (
            r["predicted_variance"].as_f64().unwrap(),
            r["observed_variance"].as_f64().unwrap(),
        );
        // Two repetitions over 5 items: a loose sanity band (the variance tests are in the
        // core crate).
        assert!(
            o > p / 5.0 && o < p * 5.0,
            "{}: observed {o} predicted {p}",
            r["name"]
        );
        assert!(!r["trust"].as_str().unwrap().is_empty());
    }
    let note = c["data_dependent_note"].as_str().unwrap();
    assert!(note.contains("NOT worst-case DP") && note.contains("0 vs 1 holders"));
    // DPDS: n N elements per user (blanket's count); TSS sends about alpha^2 of it.
    let dpds = rows[1]["user_elements_sent"].as_f64().unwrap();
    assert_eq!(dpds, 20000.0 * 5.0);
    let tss = rows[3]["user_elements_sent"].as_f64().unwrap();
    assert!(tss < dpds / 2.0, "{tss} vs {dpds}");
    // DPCS, DPDS and TSS at equal eps have the same predicted variance.
    let v = |i: usize| rows[i]["predicted_variance"].as_f64().unwrap();
    assert!((v(0) - v(1)).abs() < 1e-15 && (v(3) / v(0) - 1.0).abs() < 1e-9);
    let closed = c["dpds_dpdg_crossover_n"].as_f64().unwrap();
    assert_eq!(
        c["dpds_dpdg_crossover_first_n"].as_u64().unwrap(),
        closed.floor() as u64 + 1
    );
    assert!(c["data"]["source"].as_str().unwrap().contains("Zipf"));
    assert!(c["violations"].as_array().unwrap().is_empty());
}

#[test]
fn compare_frequency_text_states_the_data_dependence() {
    let (code, out, err) = run(&[
        "compare",
        "frequency",
        "--n",
        "5000",
        "--domain",
        "3",
        "--eps",
        "1.5",
        "--delta",
        "1e-4",
        "--reps",
        "1",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("DATA-DEPENDENT guarantee, NOT worst-case DP"));
    assert!(out.contains("0 vs 1 holders"));
    assert!(out.contains("Data: Zipf law"));
    // DPDG needs eps < 1: an empty row that says why.
    assert!(out.contains("dpdg: worst-case"));
    assert!(out.contains("needs eps < 1"));
}

#[test]
fn simulate_frequency_every_protocol() {
    for proto in ["dpcs", "dpds", "dpdg", "tss", "tss-prime"] {
        let mut args = vec![
            "simulate",
            "frequency",
            "--protocol",
            proto,
            "--n",
            "3000",
            "--domain",
            "4",
            "--eps",
            "0.8",
            "--delta",
            "1e-3",
            "--reps",
            "3",
            "--json",
        ];
        if proto == "tss-prime" {
            args.extend(["--phi", "5"]);
        }
        let s = json(&args);
        assert_eq!(s["protocol"], proto);
        for key in [
            "predicted_variance",
            "observed_variance",
            "user_elements_sent",
            "server_operations",
            "trust",
            "guarantee",
            "data_dependent_note",
            "violations",
            "costs",
            "report",
            "data",
        ] {
            assert!(s.get(key).is_some(), "{proto}: missing {key}");
        }
        let dd = proto != "dpdg";
        assert_eq!(
            s["guarantee"]
                .as_str()
                .unwrap()
                .starts_with("data-dependent"),
            dd,
            "{proto}"
        );
        assert!(s["eps"].as_f64().unwrap() <= 0.8 + 1e-12);
        assert!(s["delta"].as_f64().unwrap() <= 1e-3);
    }
}

#[test]
fn simulate_frequency_literal_equals_fast() {
    for proto in ["dpds", "tss", "tss-prime"] {
        let base = [
            "simulate",
            "frequency",
            "--protocol",
            proto,
            "--n",
            "60",
            "--domain",
            "3",
            "--eps",
            "0.9",
            "--delta",
            "0.2",
            "--phi",
            "4",
            "--reps",
            "2",
            "--json",
            "--allow-violations",
            "--mode",
        ];
        let args = |mode: &'static str| {
            let mut v = base.to_vec();
            if proto != "tss-prime" {
                v.retain(|a| *a != "--phi" && *a != "4");
            }
            v.push(mode);
            v
        };
        let lit = json_released(&args("literal"));
        let fast = json_released(&args("fast"));
        assert_eq!(lit["first_estimate"], fast["first_estimate"], "{proto}");
        assert_eq!(lit["costs"], fast["costs"], "{proto}");
    }
}

#[test]
fn simulate_frequency_csv_column_and_errors() {
    let mut text = String::from("user,item\n");
    let mut counts = [0u64; 3];
    for i in 0..3000u64 {
        let item = (i * i % 7 % 3) as usize;
        counts[item] += 1;
        text.push_str(&format!("u{i},{item}\n"));
    }
    let path = temp_file("items.csv", &text);
    let p = format!("csv:{}", path.display());
    let p = p.as_str();
    let dpcs = |items: &'static str, tail: &'static str| {
        let head = words("simulate frequency --protocol dpcs --eps 1 --delta 1e-3 --domain");
        [head, vec![items, "--data", p], words(tail)].concat()
    };
    let s = json(&dpcs("3", "--column item --reps 2 --json"));
    assert_eq!(s["n"], 3000);
    assert!(s["data"]["source"]
        .as_str()
        .unwrap()
        .contains("column item"));
    let truth: Vec<f64> = s["true_frequencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let want: Vec<f64> = counts.iter().map(|&c| c as f64 / 3000.0).collect();
    assert_eq!(truth, want);
    // The column by index gives the same data.
    let by_index = json(&dpcs("3", "--column 1 --header --reps 2 --json"));
    assert_eq!(by_index["true_frequencies"], s["true_frequencies"]);
    // Out of domain, missing column, missing file: runtime errors (exit 1) naming the problem.
    for (items, column, needle) in [
        ("2", "--column item", "is outside the item domain 0..2"),
        ("3", "--column nope", "no such column"),
        ("3", "--column 7", "no column 7"),
    ] {
        fails_code(1, &dpcs(items, column), needle);
    }
    fails_code(
        1,
        &words("simulate frequency --protocol dpcs --domain 3 --eps 1 --delta 0.5 --data csv:/nonexistent/items.csv"),
        "cannot open data file",
    );
}

fn sim(extra: &[&'static str]) -> Vec<&'static str> {
    let mut v = vec![
        "simulate",
        "frequency",
        "--n",
        "2000",
        "--domain",
        "4",
        "--eps",
        "0.5",
        "--delta",
        "1e-2",
        "--reps",
        "1",
    ];
    v.extend_from_slice(extra);
    v
}

#[test]
fn simulate_frequency_bad_input_exit_codes() {
    for (extra, needle) in [
        ("--protocol dpcs --beta 1.5", "beta"),
        ("--protocol dpcs --beta 0", "beta"),
        ("--protocol tss-prime --phi 2000", "phi"),
        ("--protocol tss-prime", "--phi"),
        ("--protocol dpds --modulus 1000", "field"),
        ("--protocol tss --modulus 2000", "field"),
        ("--protocol tss --report-fraction 0", "--report-fraction"),
        ("--protocol tss --report-fraction 0.1", "--report-fraction"),
        (
            "--protocol dpdg --frac-bits 30",
            "--frac-bits must be in 0..=24, got 30",
        ),
        ("--protocol dpcs --data csv:", "zipf or a CSV file"),
        ("--protocol dpcs --domain 0", "--domain"),
    ] {
        fails_code(2, &sim(&words(extra)), needle);
    }
    let mut eps0 = sim(&["--protocol", "dpcs"]);
    eps0[7] = "0";
    fails_code(2, &eps0, "eps");
    // A beta too small for the target delta, and a delta out of reach.
    fails_code(
        2,
        &sim(&["--protocol", "dpds", "--beta", "1e-6"]),
        "beta must be >=",
    );
    let mut tiny = sim(&["--protocol", "dpcs"]);
    tiny[3] = "20";
    fails_code(2, &tiny, "out of reach");
    // Data that violate the condition: refused (exit 1) unless --allow-violations.
    fails_code(
        1,
        &sim(&["--protocol", "dpcs", "--beta", "0.3"]),
        "--allow-violations",
    );
    let s = json_released(&sim(&[
        "--protocol",
        "tss",
        "--beta",
        "0.3",
        "--allow-violations",
        "--json",
    ]));
    assert!(!s["violations"].as_array().unwrap().is_empty());
    assert_eq!(s["certified"], false);
    assert!(
        s["guarantee"]
            .as_str()
            .unwrap()
            .starts_with("NOT CERTIFIED"),
        "{s}"
    );
    assert!(s["report"]["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().starts_with("VIOLATION")));
    let (code, out, _) = run(&sim(&[
        "--protocol",
        "dpds",
        "--beta",
        "0.3",
        "--allow-violations",
    ]));
    // Released with violations: NO guarantee for their holders, so not certified (exit 3).
    assert_eq!(code, Some(3));
    assert!(out.contains("VIOLATION") && out.contains("NOT CERTIFIED"));
}

#[test]
fn compare_frequency_bad_input() {
    fails_code(
        2,
        &[
            "compare",
            "frequency",
            "--n",
            "100",
            "--domain",
            "3",
            "--eps",
            "0.5",
            "--delta",
            "1e-3",
            "--phi",
            "100",
        ],
        "phi",
    );
    fails_code(
        1,
        &[
            "compare",
            "frequency",
            "--n",
            "2000",
            "--domain",
            "4",
            "--eps",
            "0.5",
            "--delta",
            "1e-2",
            "--beta",
            "0.3",
        ],
        "--allow-violations",
    );
    let c = json_released(&[
        "compare",
        "frequency",
        "--n",
        "2000",
        "--domain",
        "4",
        "--eps",
        "0.5",
        "--delta",
        "1e-2",
        "--beta",
        "0.3",
        "--allow-violations",
        "--reps",
        "1",
        "--json",
    ]);
    assert!(!c["violations"].as_array().unwrap().is_empty());
    // The rows released with violations say so, and the rest stay certified.
    let rows = c["protocols"].as_array().unwrap();
    assert!(rows.iter().any(|r| r["certified"] == false), "{c}");
    assert!(rows
        .iter()
        .any(|r| r["guarantee_kind"] == "data-dependent" && r["certified"] == false));
    assert!(rows
        .iter()
        .any(|r| r["name"] == "local-grr" && r["certified"] == true));
}

#[test]
fn compare_frequency_leaves_heavy_dpdg_to_the_formula() {
    // n N reps = 1.2e8 discrete Gaussians: DPDG is predicted only, with the reason.
    let c = json_released(&[
        "compare",
        "frequency",
        "--n",
        "1e5",
        "--domain",
        "200",
        "--eps",
        "0.1",
        "--delta",
        "1e-6",
        "--reps",
        "6",
        "--allow-violations",
        "--json",
    ]);
    let dpdg = &c["protocols"][2];
    assert_eq!(dpdg["name"], "dpdg");
    assert!(dpdg["predicted_variance"].as_f64().unwrap() > 0.0);
    assert!(dpdg["observed_variance"].is_null());
    assert_eq!(dpdg["user_elements_sent"].as_f64().unwrap(), 1e5 * 200.0);
    assert!(dpdg["note"].as_str().unwrap().contains("predicted only"));
    // Zipf over 200 items at n = 1e5: rare items violate the condition, stated in the output.
    assert!(!c["violations"].as_array().unwrap().is_empty());
}
