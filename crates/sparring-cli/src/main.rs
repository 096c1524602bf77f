//! The `sparring` binary: parses arguments, wires the crates together, and
//! prints. It holds no logic of its own; see `docs/ARCHITECTURE.md`.

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// `print!` to stdout, quiet on a closed pipe ([`write_out`]).
macro_rules! out {
    ($($arg:tt)*) => { $crate::write_out(&format!($($arg)*)) };
}

/// `println!` to stdout, quiet on a closed pipe ([`write_out`]).
macro_rules! outln {
    () => { $crate::write_out("\n") };
    ($($arg:tt)*) => { $crate::write_out(&format!("{}\n", format_args!($($arg)*))) };
}

mod asks;
mod calibrate;
mod evaluate;
mod export;
mod grade;
mod grid;
mod policy;
mod progress;
mod score;
mod simulate;
mod simulate_args;
mod world;

/// Evals and training data for tool-calling agents, by simulation.
#[derive(Debug, Parser)]
#[command(name = "sparring", version, about, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Play an agent against simulated people in a sandbox world and write
    /// one row per conversation
    Simulate(Box<simulate::Args>),
    /// Run every ask of a fixed list (`--eval-set FILE`) once per repeat and
    /// print how each scored, then the report
    Evaluate(Box<evaluate::Args>),
    /// Score a run's rows: pass@1 with a 95 % interval over tasks, pass@k,
    /// pass^k, per category
    Report(score::ReportArgs),
    /// Compare two runs task by task: paired delta of pass@1 with an
    /// interval, a permutation p and a verdict, per category and marker
    Delta(score::DeltaArgs),
    /// Agreement of the rows' rewards with gold labels: raw with a Wilson
    /// interval, Cohen's kappa, passes on gold fails
    JudgeAgreement(score::JudgeArgs),
    /// Look for row features that track reward within tasks (reward
    /// hacking), against a shuffled floor
    HackScan(score::HackArgs),
    /// pass@1 per eval run (`lineage.eval_run`) with mean and standard
    /// deviation
    EvalVariance(score::EvalVarianceArgs),
    /// Print a spec's situation axes and their pairwise covering array, or
    /// build a raw array with --levels
    Grid(grid::Args),
    /// List the tools and policy rules that none of a list of asks touches
    CoverageGap(grid::GapArgs),
    /// Print the rules read from a spec's policy: id, class, tools, sentence
    Policy(policy::Args),
    /// Run the calibration agents (do_nothing, reckless, careful) against a
    /// spec and say whether the eval ranks them
    Calibrate(calibrate::Args),
    /// Print the situations and asks the writer makes for a spec
    Asks(asks::Args),
    /// Grade rows: conduct checks, then a grader command, then an LLM judge
    Grade(grade::GradeArgs),
    /// Gold labels on rows
    #[command(subcommand)]
    Labels(grade::LabelsCommand),
    /// Measure a judge: agreement with gold on two halves, hack probes, same model
    JudgeTrust(grade::TrustArgs),
    /// Serve a spec's sandbox world: JSON tool calls on stdin, one answer per line
    World(world::Args),
    /// Keep the rows of one training cut (SFT, DPO, GRPO, reward pairs,
    /// graded) after decontamination, as a rows file
    Select(export::SelectArgs),
    /// Cut graded rows into training sets and write them in a trainer's
    /// format (OpenAI, TRL, Parquet)
    Export(export::Args),
}

/// Writes data to stdout. A reader that went away (`sparring world
/// --explain | head`) is not an error: the rest is not wanted, so sparring
/// stops quietly with exit 0, where `println!` would panic. Any other
/// failure to write is one line on stderr and exit 1.
pub(crate) fn write_out(text: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!(
            "error: cannot write to standard output: {}",
            e.to_string().to_lowercase()
        );
        std::process::exit(1);
    }
}

/// A failure the user caused (bad input): exit code 2.
#[derive(Debug)]
pub(crate) struct UsageError(pub(crate) String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: Result<ExitCode> = match cli.command {
        Command::Simulate(args) => simulate::run(&args),
        Command::Evaluate(args) => evaluate::run(&args),
        Command::Report(args) => score::report(&args),
        Command::Delta(args) => score::delta(&args),
        Command::JudgeAgreement(args) => score::judge_agreement(&args),
        Command::HackScan(args) => score::hack_scan(&args),
        Command::EvalVariance(args) => score::eval_variance(&args),
        Command::Grid(args) => grid::run(&args),
        Command::CoverageGap(args) => grid::gap(&args),
        Command::Policy(args) => policy::run(&args),
        Command::Calibrate(args) => calibrate::run(&args),
        Command::Asks(args) => asks::run(&args),
        Command::Grade(args) => grade::grade(&args),
        Command::Labels(command) => grade::labels(&command),
        Command::JudgeTrust(args) => grade::trust(&args),
        Command::World(args) => world::run(&args),
        Command::Select(args) => export::select(&args),
        Command::Export(args) => export::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            let usage = error.downcast_ref::<UsageError>().is_some()
                || error.downcast_ref::<sparring::Error>().is_some_and(|e| {
                    matches!(
                        e.kind(),
                        sparring::ErrorKind::Input | sparring::ErrorKind::Io
                    )
                })
                || error.downcast_ref::<sparring::io::Error>().is_some()
                || error.downcast_ref::<sparring::score::Error>().is_some();
            // Errors of the CLI's own (usage) quote arguments too: cut
            // like the library's.
            eprintln!(
                "error: {}",
                sparring::types::clip::message(&error.to_string())
            );
            if usage {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}
