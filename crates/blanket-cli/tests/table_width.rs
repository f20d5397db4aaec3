//! Tables fit a terminal: the default (text) output of every table-printing subcommand has
//! no line wider than 120 characters. Long texts (a `trust` sentence, a data source) become
//! numbered notes under the table and long notes are wrapped; `--json` keeps every text whole.

mod common;
use common::*;

/// The widest line the text output may have (`crate::output::MAX_WIDTH`).
const MAX_WIDTH: usize = 120;

#[test]
fn no_table_or_note_line_is_wider_than_120_columns() {
    let curve_dir = temp_dir("table-width-curve");
    let curve_out = format!("--out {}", curve_dir.display());
    let commands = [
        "demo --n 1e4 --reps 2".to_string(),
        "calibrate histogram --n 1e6 --eps 1 --delta 1e-8 --domain 100 --compare".into(),
        "calibrate scalar-sum --n 1e6 --eps 1 --delta 1e-8".into(),
        "calibrate vector-sum --n 50000 --d 100 --eps 0.95 --delta 1e-6 --t 1".into(),
        "calibrate ikos-sum --n 1e4 --eps 1 --sigma 40".into(),
        "calibrate ikos-histogram --n 1e4 --domain 8 --eps 1 --sigma 40".into(),
        "calibrate ikos-vector --n 1e4 --d 4 --eps 1 --sigma 40".into(),
        "simulate histogram --n 1e4 --eps 1 --delta 1e-6 --domain 8 --reps 2".into(),
        "simulate scalar-sum --n 1e4 --eps 1 --delta 1e-6 --reps 2".into(),
        "simulate vector-sum --n 1e4 --d 10 --eps 1 --delta 1e-6 --t 1 --reps 2".into(),
        "simulate ikos-sum --n 1000 --eps 1 --sigma 30 --reps 2 --variant alternating".into(),
        "simulate ikos-histogram --n 1000 --domain 4 --eps 1 --sigma 20 --reps 2".into(),
        "simulate ikos-vector --n 1000 --d 4 --eps 1 --sigma 20 --reps 2".into(),
        "simulate frequency --protocol tss --n 1e4 --domain 5 --eps 1 --delta 1e-3 --reps 2".into(),
        "compare sum --n 1000 --eps 1 --delta 1e-6 --reps 1".into(),
        "compare frequency --n 1e4 --domain 5 --eps 1 --delta 1e-3 --reps 2".into(),
        "account shuffle --eps0 2 --n 1e4 --delta 1e-6".into(),
        "account compose --eps0 1 --n 1e6 --domain 2 --rounds 10 --delta 1e-8".into(),
        format!("account curve --eps0 1 --n 1e4 --domain 3 --points 5 {curve_out}"),
        "account eps0 --n 1e5 --eps 1 --delta 1e-6".into(),
        "account error --n 1e5 --eps 1 --delta 1e-6 --protocol histogram --domain 10".into(),
        "audit scalar-sum --n 8 --eps0 2 --trials 500".into(),
        "protocol run --clients 30 --variant alternating --protocol histogram --eps 1 --delta 1e-3 --domain 4"
            .into(),
    ];
    let mut wide = Vec::new();
    for line in &commands {
        let (code, out, err) = run(&words(line));
        assert!(
            matches!(code, Some(0) | Some(3)),
            "{line}: exit {code:?}: {err}"
        );
        for l in out.lines().filter(|l| l.chars().count() > MAX_WIDTH) {
            wide.push(format!("{line}: {} columns: {l}", l.chars().count()));
        }
    }
    assert!(wide.is_empty(), "{}", wide.join("\n"));
}

/// `--json` keeps the long texts that the table moves to notes.
#[test]
fn json_keeps_the_texts_the_table_shortens() {
    let v = json(&words(
        "compare sum --n 1000 --eps 1 --delta 1e-6 --reps 1 --json",
    ));
    let trust = v["protocols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["trust"].as_str().unwrap().len())
        .max()
        .unwrap();
    assert!(
        trust > MAX_WIDTH,
        "the longest trust text is {trust} characters"
    );
}
