//! `cargo xtask`: the command line researchers drive cabo with.
//!
//! - `run <spec or glob>...` runs experiments (validating every spec first);
//! - `validate <spec or glob>...` only parses and checks;
//! - `list` prints the plugin catalogue grouped by kind;
//! - `inspect <file>` prints posterior, cost belief and acquisition values at given points.

use cabo_runner::{RunError, RunOptions};
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    about = "cabo: cost-aware Bayesian optimisation experiments"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run experiments: every (policy, replication) of each spec; completed runs are skipped.
    Run {
        /// Spec files or glob patterns, e.g. `specs/pbgi/*.yaml`.
        #[arg(required = true)]
        specs: Vec<String>,
        /// Apply each spec's `smoke:` overrides (the scaled-down variant CI runs).
        #[arg(long)]
        smoke: bool,
        /// Run only the named policy (repeatable).
        #[arg(long = "only", value_name = "POLICY")]
        only: Vec<String>,
        /// Override the number of replications.
        #[arg(long, value_name = "N")]
        replications: Option<usize>,
        /// Output directory.
        #[arg(long, default_value = "results", value_name = "DIR")]
        out: PathBuf,
        /// Worker threads (default: all cores, or RAYON_NUM_THREADS).
        #[arg(long, value_name = "N")]
        threads: Option<usize>,
    },
    /// Parse and check specs without running anything.
    Validate {
        /// Spec files or glob patterns.
        #[arg(required = true)]
        specs: Vec<String>,
        /// Check the `smoke:` variant too.
        #[arg(long)]
        smoke: bool,
    },
    /// Print every registered plugin grouped by kind, with summaries, papers and example YAML.
    List {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Fit a model (and cost model) to given data and print posterior, cost belief and
    /// acquisition value + gradient at given points, as JSON.
    Inspect {
        /// A YAML or JSON file with `dim`, `data`, `model`, optional `cost_model`,
        /// `acquisition`, `budget`, and `points`.
        file: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(e) = cabo::init() {
        eprintln!("error: {e}");
        return ExitCode::from(3);
    }
    match cli.command {
        Command::Run {
            specs,
            smoke,
            only,
            replications,
            out,
            threads,
        } => {
            let opts = RunOptions {
                smoke,
                only,
                replications,
                out,
                threads,
                progress: true,
            };
            run(&specs, &opts)
        }
        Command::Validate { specs, smoke } => validate(&specs, smoke),
        Command::List { json } => {
            print!("{}", cabo_runner::catalogue::render(json));
            ExitCode::SUCCESS
        }
        Command::Inspect { file } => match cabo_runner::inspect::inspect_file(&file) {
            Ok(json) => {
                println!("{json}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        },
    }
}

fn fail(e: &RunError) -> ExitCode {
    eprintln!("{e}");
    match e {
        RunError::Runs(_) => ExitCode::from(1),
        _ => ExitCode::from(2),
    }
}

fn run(args: &[String], opts: &RunOptions) -> ExitCode {
    let paths = match cabo_runner::resolve_spec_paths(args) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let specs = match cabo_runner::load_specs(&paths, opts) {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let cancel = AtomicBool::new(false);
    match cabo_runner::run_specs(&specs, opts, &cancel) {
        Ok(outcomes) => {
            for (o, s) in outcomes.iter().zip(&specs) {
                eprintln!(
                    "{}: {} run(s) executed, {} already complete; results in {}",
                    o.name,
                    o.executed,
                    o.skipped,
                    o.dir.display()
                );
                let summary = cabo_runner::summary::summarize(s, &o.runs);
                eprint!("{}", cabo_runner::summary::render_table(&summary));
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}

fn validate(args: &[String], smoke: bool) -> ExitCode {
    let paths = match cabo_runner::resolve_spec_paths(args) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let mut opts = RunOptions::default();
    let mut ok = match cabo_runner::load_specs(&paths, &opts) {
        Ok(specs) => {
            for s in &specs {
                eprintln!(
                    "{}: ok ({}: {} policies × {} replications, d = {})",
                    s.path.display(),
                    s.spec.name,
                    s.spec.policies.len(),
                    s.spec.replications,
                    s.dim
                );
            }
            true
        }
        Err(e) => {
            eprintln!("{e}");
            false
        }
    };
    if smoke && ok {
        opts.smoke = true;
        if let Err(e) = cabo_runner::load_specs(&paths, &opts) {
            eprintln!("{e}");
            ok = false;
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    }
}
