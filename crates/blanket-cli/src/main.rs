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
mod numeric;
mod output;
mod plot;

use anyhow::Result;
use clap::{Args, CommandFactory, Parser, Subcommand};

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
    /// Print the man page (roff), e.g. `blanket man > blanket.1`.
    Man,
}

#[derive(Subcommand)]
enum CompareCommand {
    /// Sums of reals in [0, 1]: single-message scalar sum, IKOS sum, central discrete
    /// Laplace, local randomized response.
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
    // clap reports usage errors itself, with exit code 2.
    let cli = Cli::parse();
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    for w in deprecated::warnings(&args) {
        eprintln!("{w}");
    }
    match run(cli) {
        Err(e) => {
            eprintln!("error: {}", exit::render(&e));
            std::process::exit(exit::code(&e));
        }
        Ok(()) if exit::uncertified() => std::process::exit(exit::UNCERTIFIED),
        Ok(()) => {}
    }
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
            let mut cmd = Cli::command();
            clap_complete::generate(shell, &mut cmd, "blanket", &mut std::io::stdout());
            Ok(())
        }
        Command::Man => {
            clap_mangen::Man::new(Cli::command()).render(&mut std::io::stdout())?;
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
