//! One vocabulary: a flag name means the same thing in every subcommand.
//!
//! The test walks the whole command tree (`blanket -h`, then `-h` of every subcommand, as
//! clap prints it), collects every visible long flag with its value name, help line and
//! possible values, and checks each against [`MEANINGS`]: the one meaning of that flag name,
//! given as words its help must contain and the values it may take. A flag whose help or
//! values say something else in some subcommand fails the test, and so does a flag name the
//! table does not know: add it with its meaning (and keep one meaning per name).

mod common;
use common::*;

/// One flag's meaning: its help line must contain one of `words` (case-insensitive), and its
/// possible values, if it has any, must be among `values` (empty: it takes none, or any).
struct Meaning {
    flag: &'static str,
    words: &'static [&'static str],
    values: &'static [&'static str],
}

const fn m(
    flag: &'static str,
    words: &'static [&'static str],
    values: &'static [&'static str],
) -> Meaning {
    Meaning {
        flag,
        words,
        values,
    }
}

/// Every visible flag name of `blanket` and its one meaning.
const MEANINGS: &[Meaning] = &[
    m("accountant", &["which bound certifies"], &["best", "paper"]),
    m(
        "credentials",
        &["credentials of a task with admission tokens"],
        &[],
    ),
    m(
        "header-timeout-secs",
        &["seconds a connection has to send a request's headers"],
        &[],
    ),
    m(
        "request-timeout-secs",
        &["seconds a request has from its headers to its answer"],
        &[],
    ),
    m("max-connections", &["connections served at once"], &[]),
    m(
        "body-budget-mib",
        &["mib of request bodies held at once"],
        &[],
    ),
    m("admin-token-file", &["admin token"], &[]),
    m("allow-violations", &["release even when items"], &[]),
    m("alpha", &["confidence"], &[]),
    m("analyzer", &["analyzer's base url"], &[]),
    m("beta", &["beta n holders"], &[]),
    m("budget-delta", &["total delta over all releases"], &[]),
    m("budget-eps", &["total epsilon over all releases"], &[]),
    m("chi-gamma", &["adaptive chi"], &[]),
    m("clients", &["number of clients"], &[]),
    m("column", &["csv column"], &[]),
    m("compare", &["every certified method"], &[]),
    m("component-delta", &["per-round delta"], &[]),
    m("concurrency", &["in flight"], &[]),
    m("d", &["dimension d"], &[]),
    // One meaning (the data to run on), in the syntax of each data kind: a CSV path, or a
    // named embedded source.
    m("data", &["csv", "the vectors", "the items"], &[]),
    m("db", &["database url"], &[]),
    m("deadline", &["accepts reports"], &[]),
    m("delta", &["delta"], &[]),
    m("delta-min", &["smallest delta"], &[]),
    // The number of categories, of k-RR values, of items or of bins: the size of the domain.
    m(
        "domain",
        &["categories", "number of values", "number of items", "bins"],
        &[],
    ),
    m("dropout", &["dropout fraction"], &[]),
    m("eps", &["epsilon", "eps of an (eps"], &[]),
    m("eps0", &["local privacy eps0"], &[]),
    m("eta", &["2^-eta"], &[]),
    m("frac-bits", &["fractional bits"], &[]),
    m("from-csv", &["csv file"], &[]),
    m("header", &["is a header"], &[]),
    m("json", &["json"], &[]),
    m("k", &["precision k"], &[]),
    m(
        "key-committees",
        &["key committees", "decryption keys"],
        &["per-lane", "single"],
    ),
    m("lane-keys", &["--key-committees per-lane"], &[]),
    m("lease-seconds", &["replica holds a batch"], &[]),
    m("listen", &["address to listen on"], &[]),
    m("malicious", &["malicious fraction"], &[]),
    m("messages", &["messages per client"], &[]),
    m(
        "method",
        &["method", "accountant"],
        &[
            "best",
            "blanket-closed",
            "erlingsson-closed",
            "fmt21-closed",
            "fmt21-numerical",
            "clones-krr",
            "variation-ratio",
            "grr-exact",
            "basic",
            "drv",
            "kov",
            "pld",
        ],
    ),
    m("min-batch", &["smallest batch"], &[]),
    m("mode", &["literal"], &["fast", "literal"]),
    m("modulus", &["field modulus"], &[]),
    m("n", &["users", "clients"], &[]),
    m("no-header", &["no header"], &[]),
    m("no-shuffle", &["skip the shuffler"], &[]),
    m(
        "out",
        &["output directory", "directory to write every page into"],
        &[],
    ),
    m("paper-domain", &["the paper's"], &[]),
    m("peer-token", &["secret the two roles share"], &[]),
    m("phi", &["collusion threshold"], &[]),
    m("plot", &["png"], &[]),
    m("points", &["points on the curve"], &[]),
    m("poll-wait-ms", &["long-poll"], &[]),
    m("proof", &["proof of shuffle"], &[]),
    m(
        "protocol",
        &["protocol"],
        &[
            "histogram",
            "scalar-sum",
            "vector-sum",
            "ikos-sum",
            "dpcs",
            "dpds",
            "dpdg",
            "tss",
            "tss-prime",
        ],
    ),
    m("quick", &["reduced size"], &[]),
    m("quiet", &["no progress bars"], &[]),
    m("randomizer", &["randomizer kind"], &["generic", "krr"]),
    m("relay", &["relay's base url"], &[]),
    m("report-fraction", &["fraction alpha of the items"], &[]),
    m("reps", &["repetitions"], &[]),
    m("request-timeout-ms", &["timeout of one http request"], &[]),
    m("retries", &["retries"], &[]),
    m("retry-backoff-ms", &["before a retry"], &[]),
    m("role", &["role"], &["shuffler", "analyzer", "all", "relay"]),
    m("round-timeout-ms", &["round timeout"], &[]),
    m("rounds", &["number of rounds"], &[]),
    m("safe-domain", &["safe domain size"], &[]),
    m("seed", &["seed"], &[]),
    m("server", &["analyzer's base url"], &[]),
    m("service", &["service flow"], &[]),
    m("shape", &["shape of a matrix or tensor"], &[]),
    // A URL everywhere (`simulate ikos-*` choose their shuffle with --variant).
    m("shuffler", &["shuffler's base url"], &[]),
    m("sigma", &["security"], &[]),
    m("simulate", &["simulated clients"], &[]),
    m("step", &["grid step"], &[]),
    m(
        "sweep",
        &["parameter to sweep"],
        &["t", "k", "d", "eps", "n", "all"],
    ),
    m("t", &["coordinates"], &[]),
    m("target-mse", &["target mse"], &[]),
    // The task a command acts on: its id or its URL.
    m("task", &["the task"], &[]),
    m("trials", &["runs of the protocol per dataset"], &[]),
    m("value", &["value", "message"], &[]),
    // Which shuffle: one chain (amortized; a uniform shuffle) or the alternating A^2_pi.
    m(
        "variant",
        &["shuffle layout", "the shuffle"],
        &["amortized", "alternating", "uniform"],
    ),
    m("zipf-s", &["zipf"], &[]),
];

/// A flag as one subcommand's `-h` shows it.
#[derive(Debug)]
struct Flag {
    command: String,
    long: String,
    value_name: Option<String>,
    help: String,
    values: Vec<String>,
}

fn help(path: &[String]) -> String {
    let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
    args.push("-h");
    let (code, out, err) = run(&args);
    assert_eq!(code, Some(0), "blanket {path:?} -h: {err}");
    out
}

/// The lines of the section `title` (up to the next blank line).
fn section<'a>(text: &'a str, title: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|l| l.trim_end() != title)
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .collect()
}

fn subcommands(text: &str) -> Vec<String> {
    section(text, "Commands:")
        .iter()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect()
}

fn flags(command: &str, text: &str) -> Vec<Flag> {
    // One entry per flag line; the lines under it that do not start a flag continue its help
    // (clap puts every help on the next line when one of them is long).
    let mut entries: Vec<(String, String)> = Vec::new();
    for line in section(text, "Options:") {
        let t = line.trim_start();
        if t.starts_with('-') {
            entries.push((t.to_string(), String::new()));
        } else if let Some(e) = entries.last_mut() {
            e.1.push(' ');
            e.1.push_str(t);
        }
    }
    let mut out = Vec::new();
    for (t, more) in entries {
        let Some(start) = t.find("--") else { continue };
        let rest = &t[start + 2..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(rest.len());
        let long = rest[..end].to_string();
        let rest = &rest[end..];
        let (spec, help) = match rest.find("  ") {
            Some(i) => (&rest[..i], rest[i..].trim()),
            None => (rest, ""),
        };
        let help = format!("{help}{more}").trim().to_string();
        let value_name = spec.find('<').and_then(|a| {
            spec[a + 1..]
                .find('>')
                .map(|b| spec[a + 1..a + 1 + b].to_string())
        });
        let values = help
            .find("[possible values: ")
            .map(|i| {
                let v = &help[i + "[possible values: ".len()..];
                v[..v.find(']').unwrap_or(v.len())]
                    .split(", ")
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        out.push(Flag {
            command: command.to_string(),
            long,
            value_name,
            help,
            values,
        });
    }
    out
}

/// Every visible flag of every subcommand (help and version excluded).
fn all_flags() -> Vec<Flag> {
    let mut out = Vec::new();
    let mut todo: Vec<Vec<String>> = vec![vec![]];
    while let Some(path) = todo.pop() {
        let text = help(&path);
        for sub in subcommands(&text) {
            let mut p = path.clone();
            p.push(sub);
            todo.push(p);
        }
        let name = format!("blanket {}", path.join(" "));
        out.extend(
            flags(name.trim_end(), &text)
                .into_iter()
                .filter(|f| f.long != "help" && f.long != "version"),
        );
    }
    out
}

#[test]
fn every_flag_name_has_one_meaning_in_every_subcommand() {
    let flags = all_flags();
    assert!(flags.len() > 200, "too few flags found: {}", flags.len());
    let mut problems = Vec::new();
    for f in &flags {
        let Some(meaning) = MEANINGS.iter().find(|m| m.flag == f.long) else {
            problems.push(format!(
                "--{} ({}, <{}>): not in the table: \"{}\"",
                f.long,
                f.command,
                f.value_name.as_deref().unwrap_or(""),
                f.help
            ));
            continue;
        };
        let help = f.help.to_lowercase();
        if !meaning
            .words
            .iter()
            .any(|w| help.contains(&w.to_lowercase()))
        {
            problems.push(format!(
                "--{} in `{}` says \"{}\", not one of {:?}",
                f.long, f.command, f.help, meaning.words
            ));
        }
        if !meaning.values.is_empty() {
            for v in &f.values {
                if !meaning.values.contains(&v.as_str()) {
                    problems.push(format!(
                        "--{} in `{}` takes {v}, not one of {:?}",
                        f.long, f.command, meaning.values
                    ));
                }
            }
        }
    }
    for m in MEANINGS {
        assert!(
            MEANINGS.iter().filter(|o| o.flag == m.flag).count() == 1,
            "--{} has more than one meaning in the table",
            m.flag
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The renamed flags still work under their former names, with a warning naming the new one.
#[test]
fn former_flag_names_warn_and_keep_working() {
    for (line, new) in [
        (
            "account shuffle --eps0 1 --n 1e4 --delta 1e-6 --randomizer krr --k 3",
            "--domain",
        ),
        (
            "account compose --eps0 1 --n 1e4 --randomizer krr --domain 2 --rounds 2 --delta 1e-6 --accountant clones-krr",
            "--method",
        ),
        (
            "simulate ikos-sum --n 100 --eps 1 --sigma 20 --reps 1 --shuffler uniform",
            "--variant",
        ),
        (
            "simulate frequency --protocol dpcs --n 1000 --items 2 --eps 1 --delta 0.5 --reps 1",
            "--domain",
        ),
    ] {
        let (code, _, err) = run(&words(line));
        assert_eq!(code, Some(0), "{line}: {err}");
        assert!(
            err.contains("is deprecated") && err.contains(new),
            "{line}: no deprecation warning naming {new}: {err}"
        );
    }
    // The new names print no warning.
    let (code, _, err) = run(&words(
        "account shuffle --eps0 1 --n 1e4 --delta 1e-6 --domain 3",
    ));
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("deprecated"), "{err}");
}

/// Error messages name the flag the user typed, in the flag's own words, and echo a huge
/// value compactly: no Rust-internal names (`DpdsMode::Fast`, `dim`, `frac_bits`, `alpha`
/// for --dropout, `Some(..)`) and no 301-digit echo of 1e300.
#[test]
fn bad_values_are_named_by_their_flag_and_echoed_compactly() {
    for (line, needle) in [
        (
            "protocol run --clients 30 --dropout 1e300",
            "--dropout = 1e300 is out of range",
        ),
        (
            "protocol run --clients 30 --malicious 0.7",
            "--malicious = 0.7 is out of range",
        ),
        ("account shuffle --eps0 1e300 --n 1e4 --delta 1e-6", "got 1e300"),
        (
            "calibrate histogram --n 1e4 --eps 1 --delta 1e300 --domain 4",
            "got 1e300",
        ),
        (
            "simulate frequency --protocol dpdg --n 2000 --domain 4 --eps 0.5 --delta 1e-2 --frac-bits 30",
            "--frac-bits must be in 0..=24, got 30",
        ),
        (
            "calibrate ikos-vector --n 1e4 --d 0 --eps 1 --sigma 40",
            "--d must be an integer from 1",
        ),
        (
            "account compose --eps 0.1 --delta 1e-6 --rounds 3 --method grr-exact",
            "--method grr-exact names the accountant",
        ),
    ] {
        let (code, _, err) = run(&words(line));
        assert_eq!(code, Some(2), "{line}: {err}");
        assert!(err.contains(needle), "{line}: expected {needle:?} in {err}");
        let longest_number = err
            .split(|c: char| !c.is_ascii_digit())
            .map(str::len)
            .max()
            .unwrap_or(0);
        assert!(longest_number <= 21, "{line}: a long number in {err}");
        for internal in ["Some(", "::", "frac_bits", "alpha", "gamma", " dim "] {
            assert!(!err.contains(internal), "{line}: {internal:?} in {err}");
        }
    }
}
