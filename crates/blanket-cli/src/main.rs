//! `blanket`: differential privacy in the shuffle model, from the command line.

mod accountant;
mod bench_accounting;
mod bench_crypto;
mod bench_ikos;
mod bench_serve;
mod cmd;
mod data;
mod deprecated;
mod exit;
mod man;
mod memory;
mod numeric;
mod output;
mod plot;

use anyhow::Result;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "blanket",
    version,
    about = "Differential privacy in the shuffle model: simulate, calibrate, account, benchmark",
    long_about = None,
    after_help = exit::HELP
)]
struct Cli {
    /// No progress bars on stderr (they are shown only on a terminal, for tasks over 1 s).
    #[arg(long, short, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the main job on embedded data: 1e6 simulated users, a histogram and a scalar sum.
    Demo(cmd::demo::DemoArgs),
    /// Choose protocol parameters (gamma, k) for a target (eps, delta) and n.
    #[command(subcommand)]
    Calibrate(cmd::calibrate::CalibrateCommand),
    /// Run a protocol end to end (randomize, shuffle, analyze) and compare observed with
    /// predicted error.
    #[command(subcommand)]
    Simulate(cmd::simulate::SimulateCommand),
    /// Compare protocols at equal (eps, delta): error, messages and bytes per user, trust.
    #[command(subcommand)]
    Compare(CompareCommand),
    /// Certified amplification bounds, composition and privacy curves.
    #[command(subcommand)]
    Account(cmd::account::AccountCommand),
    /// Measure throughput (users per second) of the client randomizer plus aggregation.
    Bench(BenchArgs),
    /// Reproduce a paper's experiments (CSV, PNG plots and a markdown summary).
    #[command(subcommand)]
    Experiment(cmd::experiment::ExperimentCommand),
    /// Run a protocol many times on a worst-case pair of neighbouring datasets and print the
    /// empirical lower bound on epsilon beside the certified upper bound.
    #[command(subcommand)]
    Audit(cmd::audit::AuditCommand),
    /// Shuffling without a trusted shuffler: the clients' own verifiable shuffle protocol.
    #[command(subcommand)]
    Protocol(cmd::protocol::ProtocolCommand),
    /// Run the service: the shuffler, the analyzer, or both in one process (a demo).
    Serve(cmd::serve::ServeArgs),
    /// Create, list, show and release the service's tasks.
    #[command(subcommand)]
    Task(cmd::task::TaskCommand),
    /// Randomize a value locally, seal it to the analyzer and submit it to the shuffler.
    Submit(cmd::submit::SubmitArgs),
    /// Clients of the relay (`serve --role relay`): the clients' verifiable shuffle over HTTP.
    #[command(subcommand)]
    Client(cmd::client::ClientCommand),
    /// Print a shell completion script (e.g. `blanket completions bash > blanket.bash`).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the top-level man page (roff), e.g. `blanket man > blanket.1`; with --out DIR,
    /// write a page per command and subcommand (blanket.1, blanket-calibrate.1,
    /// blanket-calibrate-histogram.1, ...) into DIR.
    Man {
        /// Directory to write every page into (created if missing).
        #[arg(long, value_name = "DIR")]
        out: Option<std::path::PathBuf>,
    },
}

#[derive(Subcommand)]
enum CompareCommand {
    /// Sums of reals in [0, 1]: single-message scalar sum, IKOS sum over a uniform shuffle
    /// (ikos-sum) and over the alternating shuffler A^2_pi (ikos-sum-alternating), central
    /// discrete Laplace, local randomized response.
    Sum(cmd::compare_sum::CompareSumArgs),
    /// Item frequencies: DPCS, DPDS, DPDG, TSS, TSS', the shuffle-model histogram and local
    /// GRR (error, trust, per-user and server cost).
    Frequency(cmd::compare_frequency::CompareFrequencyArgs),
}

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
struct BenchArgs {
    #[command(subcommand)]
    what: Option<BenchCommand>,
    #[command(flatten)]
    protocols: cmd::bench::BenchProtocolsArgs,
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Throughput of the protocols' randomizer plus aggregation (the default).
    Protocols(cmd::bench::BenchProtocolsArgs),
    /// Prove and verify cost of the verifiable shuffle (blanket-crypto) at n = 100, 1,000, 10,000.
    Crypto(BenchCryptoArgs),
    /// Compute time of the numerical amplification bounds at n = 1e6 and 1e8.
    Accounting(BenchCryptoArgs),
    /// Service intake (reports per second, durable, SQLite) and last report to release latency.
    Serve(BenchCryptoArgs),
}

#[derive(Args)]
struct BenchCryptoArgs {
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

fn main() {
    exit::quiet_broken_pipe();
    let mut cmd = command();
    let cli = match cmd
        .try_get_matches_from_mut(std::env::args_os())
        .and_then(|mut m| Cli::from_arg_matches_mut(&mut m))
    {
        Ok(cli) => cli,
        Err(e) => exit::clap_error(e.format(&mut cmd)),
    };
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    for w in deprecated::warnings(&args) {
        eprintln!("{w}");
    }
    match run(cli) {
        Err(e) => exit::fail(&e),
        Ok(()) if exit::uncertified() => std::process::exit(exit::UNCERTIFIED),
        Ok(()) => {}
    }
}

/// The command tree of `blanket`, where every numeric flag takes a negative number as its
/// value (`--clients -1`) instead of reading it as a flag, so that the flag's range check
/// answers (exit code 2, naming the flag and its range).
fn command() -> clap::Command {
    fn negative_numbers(c: clap::Command) -> clap::Command {
        c.mut_args(|a| {
            if numeric(&a) {
                a.allow_negative_numbers(true)
            } else {
                a
            }
        })
        .mut_subcommands(negative_numbers)
    }
    negative_numbers(Cli::command())
}

/// Whether a flag's value is a number (its parser yields an integer or a float).
fn numeric(a: &clap::Arg) -> bool {
    let t = a.get_value_parser().type_id();
    macro_rules! any_of {
        ($($ty:ty),*) => {
            false $(|| t == clap::builder::ValueParser::new(
                |_: &str| -> Result<$ty, String> { Err(String::new()) }
            ).type_id())*
        };
    }
    any_of!(f64, f32, u8, u16, u32, u64, usize, i32, i64)
}

fn run(cli: Cli) -> Result<()> {
    cmd::common::set_quiet(cli.quiet);
    match cli.command {
        Command::Demo(a) => cmd::demo::run(&a),
        Command::Calibrate(c) => cmd::calibrate::run(&c),
        Command::Account(c) => cmd::account::run(&c),
        Command::Simulate(c) => cmd::simulate::run(&c),
        Command::Compare(CompareCommand::Sum(a)) => cmd::compare_sum::compare(&a),
        Command::Compare(CompareCommand::Frequency(a)) => cmd::compare_frequency::compare(&a),
        Command::Experiment(c) => cmd::experiment::run(&c),
        Command::Audit(c) => cmd::audit::run(&c),
        Command::Protocol(c) => cmd::protocol::run(&c),
        Command::Serve(a) => cmd::serve::run(&a),
        Command::Task(c) => cmd::task::run(&c),
        Command::Submit(a) => cmd::submit::run(&a),
        Command::Client(c) => cmd::client::run(&c),
        Command::Completions { shell } => {
            // Generated in memory (the generator panics on a failed write), then written.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut command(), "blanket", &mut script);
            Ok(output::out(&script)?)
        }
        Command::Man { out: None } => {
            let pages = man::pages(command())?;
            Ok(output::out(&pages[0].1)?)
        }
        Command::Man { out: Some(dir) } => {
            let names = man::write_all(command(), &dir)?;
            crate::outln!("wrote {} man pages into {}", names.len(), dir.display());
            Ok(())
        }
        Command::Bench(b) => match b.what {
            None => cmd::bench::run(&b.protocols),
            Some(BenchCommand::Protocols(a)) => cmd::bench::run(&a),
            Some(BenchCommand::Crypto(a)) => bench_crypto::run(a.json),
            Some(BenchCommand::Accounting(a)) => bench_accounting::run(a.json),
            Some(BenchCommand::Serve(a)) => bench_serve::run(a.json),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 26, item 8: `--clients -1` was "unexpected argument '-1' found". Every numeric
    /// flag of every subcommand takes -1 as its value: the parse either succeeds (the range
    /// check of the command answers) or fails naming the flag, never as an unknown argument.
    #[test]
    fn every_numeric_flag_takes_a_negative_number_as_its_value() {
        fn walk(c: &clap::Command, path: &mut Vec<String>, seen: &mut Vec<String>) {
            for a in c.get_arguments().filter(|a| numeric(a)) {
                let Some(long) = a.get_long() else {
                    continue;
                };
                let mut argv = vec!["blanket".to_string()];
                argv.extend(path.iter().cloned());
                argv.extend([format!("--{long}"), "-1".to_string()]);
                if let Err(e) = command().try_get_matches_from(&argv) {
                    use clap::error::ErrorKind;
                    let text = e.to_string();
                    assert!(
                        !matches!(
                            e.kind(),
                            ErrorKind::UnknownArgument | ErrorKind::InvalidSubcommand
                        ) && !text.contains("unexpected argument"),
                        "{argv:?}: {text}"
                    );
                    if matches!(
                        e.kind(),
                        ErrorKind::ValueValidation | ErrorKind::InvalidValue
                    ) {
                        assert!(text.contains(&format!("--{long}")), "{argv:?}: {text}");
                    }
                }
                seen.push(argv.join(" "));
            }
            for sub in c.get_subcommands() {
                path.push(sub.get_name().to_string());
                walk(sub, path, seen);
                path.pop();
            }
        }
        let mut seen = Vec::new();
        walk(&command(), &mut Vec::new(), &mut seen);
        for flag in [
            "protocol run --clients",
            "protocol run --dropout",
            "bench --n",
        ] {
            assert!(
                seen.iter()
                    .any(|s| s.starts_with(&format!("blanket {flag} "))),
                "{flag} not walked: {seen:?}"
            );
        }
        assert!(seen.len() > 100, "{}", seen.len());
    }
}
