//! Former flag names, still accepted as hidden aliases: using one prints a warning on stderr
//! naming the flag that replaces it (the output on stdout is unchanged).

/// (subcommand path, former flag, the flag to use).
const DEPRECATED: &[(&[&str], &str, &str)] = &[
    // `account error|users` keep --k: the precision of the sums, as everywhere else.
    (&["account", "shuffle"], "--k", "--domain"),
    (&["account", "compose"], "--k", "--domain"),
    (&["account", "curve"], "--k", "--domain"),
    (&["account", "eps0"], "--k", "--domain"),
    (&["account", "compose"], "--accountant", "--method"),
    (&["account", "compose"], "--count", "--rounds"),
    (&["demo"], "--bins", "--domain"),
    (&["simulate", "ikos-sum"], "--shuffler", "--variant"),
    (&["simulate", "ikos-histogram"], "--shuffler", "--variant"),
    (&["simulate", "ikos-vector"], "--shuffler", "--variant"),
    (&["simulate", "frequency"], "--items", "--domain"),
    (&["compare", "frequency"], "--items", "--domain"),
];

/// The warnings for the former flags in `args` (the command line without the program name),
/// which clap has already accepted.
pub fn warnings(args: &[String]) -> Vec<String> {
    let path: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .take_while(|a| *a != "--")
        .filter(|a| !a.starts_with('-'))
        .collect();
    let mut out = Vec::new();
    for (sub, old, new) in DEPRECATED {
        if !path.starts_with(sub) {
            continue;
        }
        let used = args
            .iter()
            .take_while(|a| *a != "--")
            .any(|a| a == old || a.strip_prefix(old).is_some_and(|r| r.starts_with('=')));
        if used {
            out.push(format!(
                "warning: {old} is deprecated in `blanket {}`: use {new} (same meaning)",
                path[..sub.len()].join(" ")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::warnings;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn former_flags_warn_only_where_they_are_former() {
        let w = warnings(&words(
            "account shuffle --eps0 1 --n 1e4 --k 3 --delta 1e-6",
        ));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("--k is deprecated") && w[0].contains("--domain"));
        assert_eq!(
            warnings(&words("account compose --accountant=grr-exact")).len(),
            1
        );
        // `--k` is the precision of sums elsewhere: no warning there.
        assert!(warnings(&words("calibrate scalar-sum --n 1e4 --k 3")).is_empty());
        assert!(warnings(&words("account error --protocol scalar-sum --k 3")).is_empty());
        assert!(warnings(&words("account shuffle --domain 3")).is_empty());
        assert!(
            warnings(&words("-q simulate ikos-sum --shuffler alternating"))[0]
                .contains("--variant")
        );
    }
}
