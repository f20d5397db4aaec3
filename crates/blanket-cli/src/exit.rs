//! Exit codes and error reporting.
//!
//! | code | meaning |
//! |------|---------|
//! | 0 | success: every printed guarantee is certified |
//! | 1 | runtime error (data file, computation, writing output) |
//! | 2 | usage error (unknown flag, value out of range, missing or conflicting flags) |
//! | 3 | a result was printed but it is NOT certified (uncertified method, the asked
//! |   | method certifies nothing at these parameters, or a frequency release with
//! |   | --allow-violations or --chi-gamma) |

use std::sync::atomic::{AtomicBool, Ordering};

/// Exit code of a runtime error.
pub const RUNTIME: i32 = 1;
/// Exit code of a usage error.
pub const USAGE: i32 = 2;
/// Exit code when a result was printed but is not certified.
pub const UNCERTIFIED: i32 = 3;

/// The exit codes and their meanings (`blanket man` lists them).
pub const CODES: [(i32, &str); 4] = [
    (0, "success: every printed guarantee is certified"),
    (RUNTIME, "runtime error (data file, computation, writing output)"),
    (
        USAGE,
        "usage error (unknown flag, value out of range, missing or conflicting flags)",
    ),
    (
        UNCERTIFIED,
        "a result was printed but it is NOT certified (an uncertified method such as variation-ratio, or the method asked certifies nothing at these parameters)",
    ),
];

/// The exit-code table for `--help`.
pub const HELP: &str = "Exit codes:
  0  success: every printed guarantee is certified
  1  runtime error (data file, computation, writing output)
  2  usage error (unknown flag, value out of range, missing or conflicting flags)
  3  a result was printed but it is NOT certified (an uncertified method such as
     variation-ratio, the method asked certifies nothing at these parameters, or a
     frequency release with --allow-violations or --chi-gamma)";

static NOT_CERTIFIED: AtomicBool = AtomicBool::new(false);

/// Records that a result printed by this run is not certified (exit code 3).
pub fn mark_uncertified() {
    NOT_CERTIFIED.store(true, Ordering::Relaxed);
}

/// Whether [`mark_uncertified`] was called.
pub fn uncertified() -> bool {
    NOT_CERTIFIED.load(Ordering::Relaxed)
}

/// A usage error: a flag's value is out of range or flags conflict (exit code 2).
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// Returns early with a [`Usage`] error built like `format!`.
#[macro_export]
macro_rules! usage_bail {
    ($($t:tt)*) => {
        return Err(anyhow::Error::new($crate::exit::Usage(format!($($t)*))))
    };
}

/// The exit code of an error: usage errors (ours and the core's parameter range errors) are
/// 2, everything else 1.
pub fn code(e: &anyhow::Error) -> i32 {
    let usage = e.chain().any(is_usage);
    if usage {
        USAGE
    } else {
        RUNTIME
    }
}

/// Whether one error of a chain is a usage error: ours, the core's parameter range error, or
/// a library error that wraps one transparently (`#[error(transparent)]` hides the inner
/// error from the chain, so each wrapper is matched here), or a protocol parameter out of
/// its range.
fn is_usage(c: &(dyn std::error::Error + 'static)) -> bool {
    use blanket::calibrate::CalibrationError;
    use blanket::protocol::frequency::FrequencyError;
    use blanket::protocol::{
        IkosSumError, IkosVectorError, VectorCalibrationError, VectorSumError,
    };
    use blanket::simulate::SimulationError;
    c.is::<Usage>()
        || c.is::<blanket::params::ParamError>()
        // --n above the simulation limits (a flag's range, not a failure of the run)
        || matches!(
            c.downcast_ref::<SimulationError>(),
            Some(SimulationError::TooManyUsers { .. } | SimulationError::ShuffleTooLarge { .. })
        )
        || matches!(c.downcast_ref(), Some(IkosSumError::Param(_)))
        || matches!(c.downcast_ref(), Some(IkosVectorError::Param(_)))
        || matches!(c.downcast_ref(), Some(VectorCalibrationError::Param(_)))
        || matches!(c.downcast_ref(), Some(VectorSumError::Param(_)))
        || matches!(c.downcast_ref(), Some(FrequencyError::Param(_)))
        || matches!(c.downcast_ref(), Some(CalibrationError::Param(_)))
        || matches!(
            c.downcast_ref(),
            Some(blanket_protocol::params::ParamsError::OutOfRange { .. })
        )
}

/// The error and its causes on one line, each message once: a cause whose text the previous
/// message already contains (an OS error that a library repeats) is not printed again.
pub fn render(e: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for c in e.chain() {
        let s = c.to_string();
        if s.is_empty() || parts.iter().any(|p| p.contains(&s)) {
            continue;
        }
        parts.push(s);
    }
    compact_numbers(&parts.join(": "))
}

/// `msg` with every number written out in more than 21 characters (a float such as 1e300
/// printed with `{}`: 301 digits) shortened to its compact form ([`crate::output::echo`]).
fn compact_numbers(msg: &str) -> String {
    let numeric = |c: char| c.is_ascii_digit() || c == '.';
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
        let len = rest[start..]
            .find(|c: char| !numeric(c))
            .unwrap_or(rest.len() - start);
        let token = &rest[start..start + len];
        out.push_str(&rest[..start]);
        match token.parse::<f64>() {
            Ok(x) if token.len() > 21 => out.push_str(&crate::output::echo(x)),
            _ => out.push_str(token),
        }
        rest = &rest[start + len..];
    }
    out.push_str(rest);
    out
}

/// Prints the error on stderr and exits with its code. A failed write to stderr is
/// ignored (there is nowhere left to report it); the exit code still tells.
pub fn fail(e: &anyhow::Error) -> ! {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "error: {}", render(e));
    std::process::exit(code(e))
}

/// Handles clap's parse outcome that is not a command: `--help` and `--version` are written
/// through [`crate::output::out`] (exit code 0, or 1 when stdout cannot be written); usage
/// errors go to stderr with exit code 2.
pub fn clap_error(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    use std::io::IsTerminal;
    let text = matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion);
    if !text || std::io::stdout().is_terminal() {
        // Usage errors (stderr, exit code 2) and help on a terminal (in colour): clap's own.
        e.exit()
    }
    match crate::output::out(e.render().to_string().as_bytes()) {
        Ok(()) => std::process::exit(0),
        Err(w) => fail(&anyhow::Error::new(w)),
    }
}

/// Restores the default action of SIGPIPE, so that writing to a closed pipe
/// (`blanket ... | head`) ends the process quietly, killed by SIGPIPE (status 141 in a
/// shell, never 0), as `cat` and `grep` do. Every other failed write to stdout (a full disk,
/// `>&-`) is exit code 1 with a message ([`crate::output::out`]).
pub fn quiet_broken_pipe() {
    #[cfg(unix)]
    // SAFETY: called once at the start of main, before any thread is spawned; SIG_DFL is a
    // valid handler for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_301_digit_number_is_echoed_as_1e300() {
        let long = format!("--x must be in (0, 1), got {}", 1e300);
        assert!(long.len() > 300);
        assert_eq!(
            super::compact_numbers(&long),
            "--x must be in (0, 1), got 1e300"
        );
        let kept = "n = 1000000, q = 18446744073709551615, eps 0.5";
        assert_eq!(super::compact_numbers(kept), kept);
    }

    /// The exit codes of `--help` and of `blanket man` say the same.
    #[test]
    fn help_and_man_list_the_same_exit_codes() {
        let help = super::HELP.split_whitespace().collect::<Vec<_>>().join(" ");
        for (code, meaning) in super::CODES {
            let head: String = meaning.split(" (").next().unwrap_or(meaning).into();
            assert!(
                help.contains(&format!("{code} {head}")),
                "{code}: {head} in {help}"
            );
        }
    }
}
