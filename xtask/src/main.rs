//! `cargo xtask`: the command line researchers drive cabo with.
//!
//! - `run <spec or glob>...` runs experiments (validating every spec first);
//! - `validate <spec or glob>...` only parses and checks;
//! - `list` prints the plugin catalogue grouped by kind;
//! - `inspect <file>` prints posterior, cost belief and acquisition values at given points;
//! - `suggest <spec> --data <csv>` prints the next query of an experiment run by hand;
//! - `report <spec or results dir>...` writes `summary.csv`, `report.md` and figures (with
//!   `--times`, the runtime view of `times.jsonl` too);
//! - `reproduce <paper>|all` runs a paper's gallery specs in batches until its claims are
//!   decided, and rewrites its page (`--list` prints the runs still needed as a plan);
//! - `slurm <spec>...` (or `slurm --plan FILE`) writes an sbatch job array (one task per
//!   shard) and a report job; `slurm --reproduce <paper>` a job that reproduces the paper on
//!   the cluster round by round;
//! - `new-plugin <kind> <name>` scaffolds a plugin crate;
//! - `bench` runs the divan benchmarks and tabulates their medians.

#![forbid(unsafe_code)]

use cabo_runner::{RunError, RunOptions};
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

mod bench;
mod progress;
mod rounds;
mod scaffold;
mod slurm;

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    about = "cabo: cost-aware Bayesian optimisation experiments"
)]
struct Cli {
    /// Show tracing logs on stderr (-v: runs and reports, -vv: every evaluation).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run experiments: every (policy, replication) of each spec; completed runs are skipped
    /// and interrupted ones resume from their last checkpoint.
    Run(RunArgs),
    /// Show how far a sweep has got: per spec and policy the replications complete and
    /// started, the mean run time (CPU time of the run's thread) and the estimated run time
    /// left. Runs nothing.
    Status {
        #[command(flatten)]
        sweep: Sweep,
    },
    /// Aggregate completed runs: summary.csv, report.md, report.svg and report.png in each
    /// spec's results directory.
    Report {
        /// Results directories (containing spec.json) or spec files (their results are
        /// looked up under --out).
        #[arg(required = true)]
        targets: Vec<String>,
        /// Where spec files' results are.
        #[arg(long, default_value = "results", value_name = "DIR")]
        out: PathBuf,
        /// Report spec files' smoke results (`<out>/<spec>/smoke`).
        #[arg(long)]
        smoke: bool,
        /// Also write the runtime view from the runs' times.jsonl (runtime.md, runtime.csv,
        /// runtime-table.csv, runtime.svg/png) and print the table of every target: the
        /// time drawn against the iteration is decision_time (the default), acquisition_time,
        /// fit_time or cpu_time.
        #[arg(
            long,
            value_name = "TIME",
            num_args = 0..=1,
            require_equals = true,
            default_missing_value = "decision_time"
        )]
        times: Option<String>,
    },
    /// Reproduce a paper's claims: run the gallery's specs for it in batches (the policies of
    /// the undecided claims, up to each spec's next planned look) until every claim is
    /// decided or the cap is reached, then rewrite its page in docs/reproductions/.
    Reproduce(ReproduceArgs),
    /// Write a Slurm job array that runs the specs as shards, plus a report job that runs
    /// after the array succeeds.
    Slurm {
        /// Spec files or glob patterns.
        #[arg(
            required_unless_present_any = ["plan", "reproduce"],
            conflicts_with_all = ["plan", "reproduce"]
        )]
        specs: Vec<String>,
        /// A plan as `reproduce --list` prints it: one job per line, each running its spec
        /// with the line's `--replications`, `--from-replication` and `--only` (instead of
        /// the flags').
        #[arg(long, value_name = "FILE", conflicts_with = "reproduce")]
        plan: Option<PathBuf>,
        /// Reproduce a paper of the gallery (000 … 004, a name such as pbgi, or `all`) in
        /// rounds: write a job that plans the runs its undecided claims still need, submits
        /// them, and submits the next round to start once they have ended, until nothing is
        /// left; the last round writes the pages.
        #[arg(long, value_name = "PAPER")]
        reproduce: Option<String>,
        /// With --reproduce: up to the papers' replications (as `reproduce --full`).
        #[arg(long)]
        full: bool,
        /// With --reproduce: at most this many rounds submit runs (a round plans again the
        /// runs that failed in the one before, so the chain needs an end) [default: 12].
        #[arg(long, value_name = "N")]
        rounds: Option<usize>,
        #[command(flatten)]
        opts: Box<SlurmArgs>,
    },
    /// Scaffold a plugin crate `plugins/<name>/` with a working plugin, a unit test and a
    /// smoke spec, and link it from the facade.
    NewPlugin {
        /// The plugin kind: acquisition, problem or policy.
        kind: String,
        /// Crate and plugin name: lowercase letters, digits and `-` (the plugin's `type` uses `_`).
        name: String,
        /// The workspace to add it to.
        #[arg(long, default_value = ".", value_name = "DIR")]
        workspace: PathBuf,
    },
    /// Run every package's divan benchmarks, print a table of medians and write them as JSON.
    Bench {
        /// Only these packages (repeatable; default: every package with benches).
        #[arg(long = "package", short = 'p', value_name = "PKG")]
        packages: Vec<String>,
        /// Where the JSON goes.
        #[arg(long, default_value = "results/bench.json", value_name = "FILE")]
        json: PathBuf,
        /// Arguments passed to divan (e.g. a name filter).
        #[arg(last = true)]
        divan_args: Vec<String>,
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
    /// Suggest the next query of an experiment run by hand: read the observations made so
    /// far and print, as JSON in the problem's own units, the point the run loop would
    /// evaluate next with the same data and seeds.
    Suggest {
        /// The spec file.
        spec: String,
        /// The policy to ask (closest name suggested when unknown); may be left out when
        /// the spec has one policy.
        #[arg(long, value_name = "NAME")]
        policy: Option<String>,
        /// The observations so far: CSV with one column per input (by the problem's input
        /// names, `x0`, `x1`, … by default), `y` and `cost` (optional where the spec's cost
        /// is known). A row with `y` and `cost` empty is pending (being evaluated), and is
        /// fantasised before the suggestions are chosen. A file with only the header means
        /// no observation yet; a missing file is an error.
        #[arg(long, value_name = "FILE")]
        data: PathBuf,
        /// Suggest K points in sequence, each after the first chosen with the earlier ones
        /// pending, fantasised at the posterior mean (Kriging believer).
        #[arg(long, value_name = "K", default_value_t = 1)]
        count: usize,
        /// The replication whose seeds to use (run R's problem instance, initial design and
        /// decisions).
        #[arg(long, value_name = "R", default_value_t = 0)]
        replication: usize,
        /// Use the spec's `smoke:` variant.
        #[arg(long)]
        smoke: bool,
    },
    /// Fit a model (and cost model) to given data and print posterior, cost belief and
    /// acquisition value + gradient at given points, as JSON.
    Inspect {
        /// A YAML or JSON file with `dim`, `data`, `model`, optional `cost_model`,
        /// `acquisition`, `budget`, and `points`.
        file: PathBuf,
    },
}

/// The arguments of `run`.
#[derive(clap::Args)]
struct RunArgs {
    #[command(flatten)]
    sweep: Sweep,
    /// Worker threads (default: all cores, or RAYON_NUM_THREADS).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Run only shard I of N (0-based): run k of the sorted (spec, policy, replication)
    /// list belongs to shard k mod N. Shards share the output directory.
    #[arg(long, value_name = "I/N")]
    shard: Option<cabo_runner::Shard>,
    /// Do not write the report when a spec completes.
    #[arg(long)]
    no_report: bool,
    /// Fail a run rather than run it unlocked where the file system cannot lock it: for
    /// several sweeps over one directory on different machines (`slurm --workers`).
    #[arg(long)]
    require_locks: bool,
    /// Minimum seconds between two checkpoints of a run in progress (0: after every
    /// decision). An interrupted run resumes from its last checkpoint.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    checkpoint_every: f64,
    /// Pause every run after this many decisions, leaving a checkpoint, as an interruption
    /// there would (for testing resumption).
    #[arg(long, value_name = "N", hide = true)]
    pause_after: Option<usize>,
}

/// The arguments of `reproduce`.
#[derive(clap::Args)]
struct ReproduceArgs {
    /// A paper of docs/reproductions/gallery.yaml (000 … 004, or a name such as pbgi),
    /// or `all`.
    paper: String,
    /// Allow up to the paper's replications rather than the gallery's quick ones.
    #[arg(long)]
    full: bool,
    /// Allow at most the first N replications of every spec.
    #[arg(long, value_name = "N")]
    replications: Option<usize>,
    /// Results directory.
    #[arg(long, default_value = "results", value_name = "DIR")]
    out: PathBuf,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Rewrite the pages from the results there are, running nothing (a page none of
    /// whose specs has a complete run under --out stays as it is).
    #[arg(long)]
    pages_only: bool,
    /// Where the pages and their figures are read and written.
    #[arg(long, default_value = PAGES, value_name = "DIR")]
    pages_out: PathBuf,
    /// Print the runs the undecided claims still need, one line per spec
    /// (`SPEC --replications N --only POLICY …`), for `cargo xtask slurm --plan FILE`,
    /// and stop.
    #[arg(long)]
    list: bool,
    /// Mark every page whose specs changed since it was written as stale, and stop.
    #[arg(long)]
    mark_stale: bool,
}

/// Resources and run flags of `slurm`.
#[derive(clap::Args)]
struct SlurmArgs {
    /// Array tasks, one shard each (or, with --workers, that many workers); at most one per
    /// run of the sweep (more are capped, and the output says so).
    #[arg(long, default_value_t = 4, value_name = "N")]
    shards: usize,
    /// Balance the work dynamically: every task runs the whole sweep and takes the next run
    /// no other task holds, instead of a fixed shard. Needs a results directory on a file
    /// system with working locks (tasks fail rather than share a run otherwise).
    #[arg(long)]
    workers: bool,
    /// At most K tasks at once (`--array=0-(N-1)%K`).
    #[arg(long, value_name = "K")]
    concurrency: Option<usize>,
    /// CPUs per task (each task runs with as many threads).
    #[arg(long, default_value_t = 1, value_name = "C")]
    cpus_per_task: usize,
    /// Memory per task, e.g. 4G.
    #[arg(long)]
    mem: Option<String>,
    /// Time limit per task, e.g. 02:00:00.
    #[arg(long)]
    time: Option<String>,
    /// Partition.
    #[arg(long)]
    partition: Option<String>,
    /// Account.
    #[arg(long)]
    account: Option<String>,
    #[command(flatten)]
    select: Selection,
    /// Results directory shared by every task.
    #[arg(long, default_value = "results", value_name = "DIR")]
    out: PathBuf,
    /// Where the scripts and the task logs go.
    #[arg(long, default_value = "slurm", value_name = "DIR")]
    dir: PathBuf,
    /// The cabo binary the tasks run (default: this one).
    #[arg(long, value_name = "PATH")]
    binary: Option<PathBuf>,
    /// Job name (default: cabo-<first spec's file name>).
    #[arg(long)]
    job_name: Option<String>,
}

/// The specs, run selection and results directory of `run` and `status`.
#[derive(clap::Args, Debug, Clone)]
struct Sweep {
    /// Spec files or glob patterns, e.g. `specs/pbgi/*.yaml`.
    #[arg(required = true)]
    specs: Vec<String>,
    #[command(flatten)]
    select: Selection,
    /// Output directory.
    #[arg(long, default_value = "results", value_name = "DIR")]
    out: PathBuf,
}

impl Sweep {
    /// The spec arguments, and run options with this selection and directory (the other
    /// options at their defaults).
    fn into_options(self) -> (Vec<String>, RunOptions) {
        let Selection {
            smoke,
            only,
            replications,
            from_replication,
        } = self.select;
        let opts = RunOptions {
            smoke,
            only,
            replications,
            from_replication,
            out: self.out,
            ..RunOptions::default()
        };
        (self.specs, opts)
    }
}

/// Which runs of the specs to take: the selection flags `run` and `slurm` share.
#[derive(clap::Args, Debug, Clone)]
struct Selection {
    /// Apply each spec's `smoke:` overrides (the scaled-down variant CI runs).
    #[arg(long)]
    smoke: bool,
    /// Run only the named policy (repeatable).
    #[arg(long = "only", value_name = "POLICY")]
    only: Vec<String>,
    /// Run only the first N replications of each spec (at most the spec's own
    /// `replications:`; to run more, raise it in the spec). The report is written once all
    /// the spec's replications are complete.
    #[arg(long, value_name = "N")]
    replications: Option<usize>,
    /// Skip the replications below K (counted from 0): they ran elsewhere, and their
    /// per-run values are committed beside the gallery's pages. `reproduce --list` writes
    /// it where a plan's first replications are done.
    #[arg(long, value_name = "K", default_value_t = 0)]
    from_replication: usize,
}

impl From<SlurmArgs> for slurm::SlurmOptions {
    fn from(a: SlurmArgs) -> Self {
        slurm::SlurmOptions {
            shards: a.shards,
            workers: a.workers,
            concurrency: a.concurrency,
            cpus_per_task: a.cpus_per_task,
            mem: a.mem,
            time: a.time,
            partition: a.partition,
            account: a.account,
            smoke: a.select.smoke,
            only: a.select.only,
            replications: a.select.replications,
            from_replication: a.select.from_replication,
            out: a.out,
            dir: a.dir,
            binary: a.binary,
            job_name: a.job_name,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let bars = progress::install(cli.verbose);
    if let Err(e) = cabo::init() {
        eprintln!("error: {e}");
        return ExitCode::from(3);
    }
    match cli.command {
        Command::Run(args) => run_command(args, bars),
        Command::Reproduce(args) => reproduce_command(args),
        Command::Status { sweep } => {
            let (specs, opts) = sweep.into_options();
            status(&specs, &opts)
        }
        Command::Report {
            targets,
            out,
            smoke,
            times,
        } => report(&targets, &out, smoke, times.as_deref()),
        Command::Slurm {
            specs,
            plan,
            reproduce,
            full,
            rounds,
            opts,
        } => match (plan, reproduce) {
            (_, None) if full || rounds.is_some() => fail(&RunError::Setup(
                "--full and --rounds go with --reproduce PAPER (a spec list or --plan says \
                 which runs to make itself)"
                    .into(),
            )),
            (Some(plan), _) => slurm_plan(&plan, *opts),
            (None, Some(paper)) => slurm_rounds(
                rounds::Rounds {
                    paper,
                    full,
                    rounds: rounds.unwrap_or(rounds::DEFAULT_ROUNDS),
                },
                *opts,
            ),
            (None, None) => slurm_scripts(&specs, *opts),
        },
        Command::NewPlugin {
            kind,
            name,
            workspace,
        } => finish(scaffold::new_plugin(&workspace, &kind, &name)),
        Command::Bench {
            packages,
            json,
            divan_args,
        } => match bench::run(&packages, &json, &divan_args) {
            Ok(table) => {
                print!("{table}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(1)
            }
        },
        Command::Validate { specs, smoke } => validate(&specs, smoke),
        Command::List { json } => {
            print!("{}", cabo_runner::catalogue::render(json));
            ExitCode::SUCCESS
        }
        Command::Inspect { file } => finish(cabo_runner::inspect::inspect_file(&file)),
        Command::Suggest {
            spec,
            policy,
            data,
            count,
            replication,
            smoke,
        } => {
            let opts = cabo_runner::suggest::SuggestOptions {
                policy,
                data,
                count,
                replication,
            };
            suggest(&spec, smoke, &opts)
        }
    }
}

/// `run`: the sweep's options from its arguments, then the sweep.
fn run_command(args: RunArgs, bars: bool) -> ExitCode {
    let RunArgs {
        sweep,
        threads,
        shard,
        no_report,
        checkpoint_every,
        require_locks,
        pause_after,
    } = args;
    let Ok(checkpoint_every) = std::time::Duration::try_from_secs_f64(checkpoint_every) else {
        eprintln!("--checkpoint-every: expected a number of seconds ≥ 0, got {checkpoint_every}");
        return ExitCode::from(2);
    };
    let (specs, base) = sweep.into_options();
    let opts = RunOptions {
        threads,
        checkpoint_every,
        // Bars on a terminal; plain lines in logs and pipes.
        progress: !bars,
        bars,
        shard,
        report: !no_report,
        require_locks,
        pause_after,
        ..base
    };
    run(&specs, &opts)
}

/// `reproduce`: lists the plan, marks stale pages, or runs the batches and writes the pages.
fn reproduce_command(args: ReproduceArgs) -> ExitCode {
    let ReproduceArgs {
        paper,
        full,
        replications,
        out,
        threads,
        pages_only,
        pages_out,
        list,
        mark_stale,
    } = args;
    let r = Reproduction {
        full,
        replications,
        out,
        threads,
        pages: pages_out,
    };
    if list {
        list_gallery(&paper, &r)
    } else if mark_stale {
        mark_gallery_stale()
    } else {
        reproduce(&paper, &r, pages_only)
    }
}

/// `suggest`: loads the spec as `run` would, then prints the suggestions.
fn suggest(spec: &str, smoke: bool, opts: &cabo_runner::suggest::SuggestOptions) -> ExitCode {
    let run_opts = RunOptions {
        smoke,
        ..RunOptions::default()
    };
    let specs = match cabo_runner::resolve_spec_paths(&[spec.to_string()])
        .and_then(|paths| cabo_runner::load_specs(&paths, &run_opts))
    {
        Ok(specs) => specs,
        Err(e) => return fail(&e),
    };
    finish(cabo_runner::suggest::suggest(&specs[0], opts))
}

/// `slurm`: checks the specs as `run` would, then writes the sweep's Slurm scripts.
fn slurm_scripts(specs: &[String], opts: SlurmArgs) -> ExitCode {
    let paths = match cabo_runner::resolve_spec_paths(specs) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let opts: slurm::SlurmOptions = opts.into();
    let run_opts = opts.run_options();
    let runs: usize = match cabo_runner::load_specs(&paths, &run_opts) {
        Ok(specs) => specs
            .iter()
            .map(|s| cabo_runner::selected_runs(s, &run_opts).len())
            .sum(),
        Err(e) => return fail(&e),
    };
    finish(slurm::write_scripts(&paths, &opts, runs))
}

/// `slurm --reproduce`: checks the paper and that no run selection is given (each round
/// plans its own), then writes the round job.
fn slurm_rounds(r: rounds::Rounds, opts: SlurmArgs) -> ExitCode {
    if let Err(code) = gallery_papers(&r.paper) {
        return code;
    }
    let s = &opts.select;
    if s.smoke || !s.only.is_empty() || s.replications.is_some() || s.from_replication > 0 {
        return fail(&RunError::Setup(
            "--reproduce plans each round's runs itself: drop --smoke, --only, \
             --replications and --from-replication"
                .into(),
        ));
    }
    finish(rounds::write_rounds(&r, &opts.into()))
}

/// `slurm --plan`: one job set per line of the plan, each with the line's selection, and one
/// script that submits them all.
fn slurm_plan(plan: &std::path::Path, opts: SlurmArgs) -> ExitCode {
    let lines = match std::fs::read_to_string(plan)
        .map_err(|e| format!("{}: cannot read the plan: {e}", plan.display()))
        .and_then(|t| cabo_gallery::parse_plan(&t, &plan.display().to_string()))
    {
        Ok(l) => l,
        Err(e) => return fail(&RunError::Setup(e)),
    };
    if lines.is_empty() {
        println!("{}: nothing left to run", plan.display());
        return ExitCode::SUCCESS;
    }
    let base: slurm::SlurmOptions = opts.into();
    let mut submits = Vec::new();
    for line in &lines {
        let o = base.for_plan_line(line);
        let path = PathBuf::from(&line.spec);
        let run_opts = o.run_options();
        let runs = match cabo_runner::load_specs(std::slice::from_ref(&path), &run_opts) {
            Ok(specs) => specs
                .iter()
                .map(|s| cabo_runner::selected_runs(s, &run_opts).len())
                .sum(),
            Err(e) => return fail(&e),
        };
        match slurm::write_scripts(std::slice::from_ref(&path), &o, runs) {
            Ok(msg) => println!("{}: {msg}", line.line()),
            Err(e) => return finish(Err::<String, _>(e)),
        }
        submits.push(slurm::submit_path(std::slice::from_ref(&path), &o));
    }
    finish(slurm::write_plan_submit(&base, &submits))
}

/// Prints a command's message, or its error with exit code 2 (bad input).
fn finish(result: Result<String, impl std::fmt::Display>) -> ExitCode {
    match result {
        Ok(msg) => {
            println!("{msg}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
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
    let found = match cabo_runner::load_experiments(&paths, opts) {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let specs = &found.comparisons;
    print_caveats(specs);
    let cancel = interrupt_flag();
    let swept = cabo_runner::run_specs(specs, opts, cancel);
    if cancel.load(Ordering::Relaxed) {
        eprintln!(
            "interrupted: the runs in progress saved checkpoints; the same command resumes them"
        );
        return ExitCode::from(130);
    }
    match swept {
        Ok(outcomes) => {
            for (o, s) in outcomes.iter().zip(specs) {
                print_outcome(o, s);
            }
        }
        Err(e) => return fail(&e),
    }
    match cabo_runner::run_studies(&found.studies, opts) {
        Ok(outcomes) => {
            for o in outcomes {
                let state = if o.executed {
                    "computed"
                } else {
                    "already complete"
                };
                eprintln!(
                    "{}: study {state}; report in {}",
                    o.name,
                    o.dir.join("report.md").display()
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}

/// Says what a sweep did with one spec: runs executed, resumed and skipped, and its report
/// or what it still lacks, then its summary table.
fn print_outcome(o: &cabo_runner::SpecOutcome, s: &cabo_runner::LoadedSpec) {
    let resumed = match o.resumed {
        0 => String::new(),
        k => format!(" ({k} resumed from a checkpoint)"),
    };
    let elsewhere = match o.elsewhere {
        0 => String::new(),
        k => format!(", {k} running in another process"),
    };
    eprintln!(
        "{}: {} run(s) executed{resumed}, {} already complete{elsewhere}; results in {}",
        o.name,
        o.executed,
        o.skipped,
        o.dir.display()
    );
    if let Some(r) = &o.report {
        eprintln!("{}: report in {}", o.name, r.markdown.display());
    } else if !o.complete {
        let total = s.spec.policies.len() * s.spec.replications;
        let complete: usize = o
            .summary
            .iter()
            .flat_map(|m| &m.policies)
            .map(|p| p.replications)
            .sum();
        eprintln!(
            "{}: {} of the spec's {total} runs are still missing (runs this \
                 command did not select, or other shards'); the report is written \
                 once all of them are complete",
            o.name,
            total.saturating_sub(complete)
        );
    }
    if let Some(summary) = &o.summary {
        eprintln!("{}", cabo_report::summary::heading(s, summary));
        eprint!("{}", cabo_report::summary::render_table(summary));
    }
}

/// The flag that asks runs to stop, set by the first Ctrl-C or SIGTERM (a Slurm time limit or
/// pre-emption): each run then saves a checkpoint at its next decision boundary, an
/// evaluation waiting on an external program (or between its retries) stops waiting, and no
/// new run starts. A second signal exits at once, killing the programs still running.
fn interrupt_flag() -> &'static AtomicBool {
    // `reproduce` runs one sweep after another: the handler is installed once.
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(install_interrupt_handler);
    // The process-wide flag, which external programs' waits read too.
    cabo::core::interrupt::flag()
}

/// Catches Ctrl-C and SIGTERM into [`cabo::core::interrupt`].
fn install_interrupt_handler() {
    let installed = ctrlc::set_handler(|| {
        if cabo::core::interrupt::request() {
            // Each program runs in its own process group, which a signal to cabo's does
            // not reach: without this, a hung one would outlive cabo.
            cabo::external::process::kill_all();
            std::process::exit(130);
        }
        eprintln!(
            "interrupt: each run stops at its next decision (saving a checkpoint) or in the \
             evaluation it waits for (resuming from its last one); interrupt again to quit \
             at once"
        );
    });
    if let Err(e) = installed {
        eprintln!(
            "warning: cannot catch interrupts ({e}); a killed run resumes from its last periodic checkpoint"
        );
    }
}

/// `cargo xtask report`: writes each target's report again and prints what it wrote, then
/// one table of the runtime views.
fn report(targets: &[String], out: &std::path::Path, smoke: bool, times: Option<&str>) -> ExitCode {
    let times = match times
        .map(|t| cabo_spec::TimeMetric::parse("--times", t))
        .transpose()
    {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let found = match cabo_runner::report_target::report_targets(targets, out, smoke) {
        Ok(found) => found,
        Err(e) => return fail(&e),
    };
    let mut ok = true;
    let mut views = Vec::new();
    for target in found {
        match cabo_runner::report_target::report_one(&target, times) {
            Ok(reported) => views.extend(print_reported(&target.dir, reported, times.is_some())),
            Err(e) => {
                eprintln!("error: {e}");
                ok = false;
            }
        }
    }
    if !views.is_empty() {
        // The table of every target together: one problem per spec, so per problem.
        println!(
            "{}\n\n{}",
            cabo_report::runtime::NOTE,
            cabo_report::runtime::table_markdown(&views)
        );
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    }
}

/// Says what reporting `dir` wrote; its runtime view, if any, is returned for the table of
/// every target.
fn print_reported(
    dir: &std::path::Path,
    reported: cabo_runner::report_target::Reported,
    times_asked: bool,
) -> Option<cabo_report::runtime::Runtime> {
    use cabo_runner::report_target::Reported;
    let d = dir.display();
    match reported {
        Reported::Study { files } => {
            eprintln!("{d}: wrote {files} report file(s)");
            if times_asked {
                eprintln!("{d}: a study records no decision times (see study.times.json)");
            }
            None
        }
        Reported::Spec {
            written: w,
            left_out: (left_out, which),
            runtime,
        } => {
            eprintln!(
                "{d}: wrote {}, {}, {} and {}",
                file_name(&w.markdown),
                file_name(&w.csv),
                file_name(&w.svg),
                file_name(&w.png)
            );
            if left_out > 0 {
                eprintln!(
                    "{d}: {left_out} run(s) of the spec are not in the report{which}; they are \
                     listed in {}",
                    file_name(&w.markdown)
                );
            }
            if let Some(md) = w.runtime.first() {
                eprintln!(
                    "{d}: wrote the runtime view ({} and {} more)",
                    file_name(md),
                    w.runtime.len() - 1
                );
            }
            runtime
        }
    }
}

/// The folder of the reproduction gallery's pages, and its gallery file.
const PAGES: &str = "docs/reproductions";
const GALLERY: &str = "docs/reproductions/gallery.yaml";

/// How `reproduce` runs.
struct Reproduction {
    full: bool,
    replications: Option<usize>,
    out: PathBuf,
    threads: Option<usize>,
    /// Where the pages are written.
    pages: PathBuf,
}

impl Reproduction {
    /// How many replications a batch may reach.
    fn cap(&self) -> cabo_gallery::Cap {
        cabo_gallery::Cap {
            full: self.full,
            replications: self.replications,
        }
    }
}

/// The gallery's papers named by `paper` (an id, an alias or `all`).
fn gallery_papers(paper: &str) -> Result<Vec<cabo_gallery::Paper>, ExitCode> {
    let root = std::path::Path::new(".");
    let g = cabo_gallery::load(root, std::path::Path::new(GALLERY))
        .map_err(|e| fail(&RunError::Setup(e)))?;
    let selected = g.select(paper).map_err(|e| fail(&RunError::Setup(e)))?;
    Ok(selected.into_iter().cloned().collect())
}

/// `reproduce --list`: the plan of runs the undecided claims still need.
fn list_gallery(paper: &str, r: &Reproduction) -> ExitCode {
    let papers = match gallery_papers(paper) {
        Ok(p) => p,
        Err(code) => return code,
    };
    match cabo_gallery::run_plan(
        std::path::Path::new("."),
        &papers,
        &r.out,
        &r.pages,
        r.cap(),
    ) {
        Ok(plan) => {
            for line in plan {
                println!("{}", line.line());
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(&RunError::Setup(e)),
    }
}

fn mark_gallery_stale() -> ExitCode {
    let root = std::path::Path::new(".");
    match cabo_gallery::mark_stale(root, std::path::Path::new(PAGES)) {
        Ok(marked) => {
            for p in &marked {
                eprintln!("{}: marked stale", p.display());
            }
            if marked.is_empty() {
                eprintln!("no page is stale");
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(&RunError::Setup(e)),
    }
}

/// Runs the batches the claims of `papers` still need until none is left, printing each.
fn run_batches(papers: &[cabo_gallery::Paper], r: &Reproduction) -> ExitCode {
    let root = std::path::Path::new(".");
    let run_batch = |line: &cabo_gallery::PlanLine| {
        eprintln!("batch: {}", line.line());
        let opts = RunOptions {
            replications: line.replications,
            from_replication: line.from_replication,
            only: line.only.clone(),
            out: r.out.clone(),
            threads: r.threads,
            progress: true,
            ..RunOptions::default()
        };
        match run(std::slice::from_ref(&line.spec), &opts) {
            ExitCode::SUCCESS => Ok(()),
            code => Err(code),
        }
    };
    use cabo_gallery::BatchesStopped;
    match cabo_gallery::run_batches(root, papers, &r.out, &r.pages, r.cap(), run_batch) {
        Ok(()) => ExitCode::SUCCESS,
        Err(BatchesStopped::Plan(e)) => fail(&RunError::Setup(e)),
        Err(BatchesStopped::Unchanged(plan)) => {
            let lines: Vec<String> = plan.iter().map(|l| l.line()).collect();
            eprintln!(
                "error: this batch ran but the plan is unchanged (are its runs failing or left \
                 out of the report?):\n{}",
                lines.join("\n")
            );
            ExitCode::from(1)
        }
        Err(BatchesStopped::Batch(code)) => code,
    }
}

/// Runs the batches the claims of `paper` still need unless `pages_only`, then writes its
/// pages.
fn reproduce(paper: &str, r: &Reproduction, pages_only: bool) -> ExitCode {
    let papers = match gallery_papers(paper) {
        Ok(p) => p,
        Err(code) => return code,
    };
    if !pages_only {
        let code = run_batches(&papers, r);
        if code != ExitCode::SUCCESS {
            return code;
        }
    }
    let mut command = format!("cargo xtask reproduce {paper}");
    if r.full {
        command.push_str(" --full");
    }
    let root = std::path::Path::new(".");
    match cabo_gallery::write_pages(root, &papers, &r.out, &r.pages, &command) {
        Ok(written) => {
            for p in written {
                for (spec, rows) in &p.dropped {
                    eprintln!(
                        "{}: dropped {rows} per-run row(s) of an earlier version of {spec}",
                        p.path.display()
                    );
                }
                if !p.changed {
                    eprintln!(
                        "left {} as it is: {} holds no complete run of its specs to add",
                        p.path.display(),
                        r.out.display()
                    );
                    continue;
                }
                eprintln!("wrote {}", p.path.display());
                for spec in p.kept {
                    eprintln!(
                        "  kept {spec} as the page had it (the results hold fewer of its runs)"
                    );
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(&RunError::Setup(e)),
    }
}

fn file_name(p: &std::path::Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn status(args: &[String], opts: &RunOptions) -> ExitCode {
    let found = match cabo_runner::resolve_spec_paths(args)
        .and_then(|paths| cabo_runner::load_experiments(&paths, opts))
    {
        Ok(found) => found,
        Err(e) => return fail(&e),
    };
    let specs = cabo_runner::status::sweep_status(&found.comparisons, opts);
    let studies: Vec<_> = found
        .studies
        .iter()
        .map(|s| (s, cabo_runner::study::is_complete(s, &opts.out)))
        .collect();
    print!("{}", cabo_runner::status::render(&specs, &studies));
    ExitCode::SUCCESS
}

/// What each spec's problem wants its user to know before running it
/// (`ProblemSpec::caveats`).
fn print_caveats(specs: &[cabo_runner::LoadedSpec]) {
    for s in specs {
        for caveat in s.spec.problem.caveats() {
            eprintln!("{}: note: {caveat}", s.path.display());
        }
    }
}

fn validate(args: &[String], smoke: bool) -> ExitCode {
    let paths = match cabo_runner::resolve_spec_paths(args) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let mut opts = RunOptions::default();
    let mut ok = match cabo_runner::load_experiments(&paths, &opts) {
        Ok(found) => {
            for s in &found.studies {
                eprintln!("{}: ok ({}: study)", s.path.display(), s.file.name);
            }
            for s in &found.comparisons {
                eprintln!(
                    "{}: ok ({}: {} policies × {} replications, d = {})",
                    s.path.display(),
                    s.spec.name,
                    s.spec.policies.len(),
                    s.spec.replications,
                    s.dim
                );
            }
            print_caveats(&found.comparisons);
            true
        }
        Err(e) => {
            eprintln!("{e}");
            false
        }
    };
    if smoke && ok {
        opts.smoke = true;
        if let Err(e) = cabo_runner::load_experiments(&paths, &opts) {
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
