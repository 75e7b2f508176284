//! Slurm job arrays: one array task per shard of a sweep (`run --shard $SLURM_ARRAY_TASK_ID/N`,
//! all writing into one results directory, where they merge by file) and a report job that
//! runs once the whole array has succeeded.
//!
//! With `workers`, every task runs the whole sweep instead (`run --require-locks`) and takes
//! the next run that no other task holds ([`cabo_engine::store::RunLock`]): runs that differ a
//! thousandfold in cost (a random search against a knowledge gradient) then keep every task
//! busy until the sweep is done, where fixed shards finish at very different times.

use std::fmt::Write;
use std::path::{Path, PathBuf};

/// What the generated scripts request and run.
#[derive(Debug, Clone)]
pub struct SlurmOptions {
    /// Array tasks (shards, or workers).
    pub shards: usize,
    /// Tasks share the whole sweep through run locks instead of taking fixed shards.
    pub workers: bool,
    /// At most this many array tasks at once (`--array=…%K`).
    pub concurrency: Option<usize>,
    /// CPUs per task (also the task's `--threads`).
    pub cpus_per_task: usize,
    /// Memory per task, in Slurm's syntax (`4G`).
    pub mem: Option<String>,
    /// Time limit per task, in Slurm's syntax (`02:00:00`).
    pub time: Option<String>,
    /// Partition.
    pub partition: Option<String>,
    /// Account.
    pub account: Option<String>,
    /// Run the specs' smoke variants.
    pub smoke: bool,
    /// Only these policies.
    pub only: Vec<String>,
    /// Replications override.
    pub replications: Option<usize>,
    /// Skip the replications below this one (committed elsewhere).
    pub from_replication: usize,
    /// Results directory (shared by every task).
    pub out: PathBuf,
    /// Where the scripts and the tasks' logs go.
    pub dir: PathBuf,
    /// The cabo binary the tasks run (default: this one).
    pub binary: Option<PathBuf>,
    /// Job name (default: `cabo-<first spec's file stem>`).
    pub job_name: Option<String>,
}

impl SlurmOptions {
    /// The run options of this selection (specs, policies, replications), with which the
    /// tasks run and their runs are counted.
    pub fn run_options(&self) -> cabo_runner::RunOptions {
        cabo_runner::RunOptions {
            smoke: self.smoke,
            only: self.only.clone(),
            replications: self.replications,
            from_replication: self.from_replication,
            ..cabo_runner::RunOptions::default()
        }
    }

    /// The resources a task may request, by their flags' names: memory, time limit,
    /// partition and account.
    pub fn resources(&self) -> [(&'static str, &Option<String>); 4] {
        [
            ("mem", &self.mem),
            ("time", &self.time),
            ("partition", &self.partition),
            ("account", &self.account),
        ]
    }

    /// These options with a plan line's selection (its spec's policies and replications)
    /// in place of the command line's.
    pub fn for_plan_line(&self, line: &cabo_gallery::PlanLine) -> SlurmOptions {
        SlurmOptions {
            only: line.only.clone(),
            replications: line.replications,
            from_replication: line.from_replication,
            ..self.clone()
        }
    }
}

impl Default for SlurmOptions {
    fn default() -> Self {
        SlurmOptions {
            shards: 4,
            workers: false,
            concurrency: None,
            cpus_per_task: 1,
            mem: None,
            time: None,
            partition: None,
            account: None,
            smoke: false,
            only: Vec::new(),
            replications: None,
            from_replication: 0,
            out: PathBuf::from("results"),
            dir: PathBuf::from("slurm"),
            binary: None,
            job_name: None,
        }
    }
}

/// Single-quotes a word for bash (the scripts' commands and the printed `submit with` line):
/// the plan's quoting, so a plan line and the script that runs it read the same.
pub use cabo_gallery::plan::quote;

/// Quotes a value for an `#SBATCH` line, which `sbatch` reads itself rather than through a
/// shell: it takes quotes (`'` or `"`) and a backslash escaping the next character, but not
/// bash's `'\''`. Double quotes with `\` and `"` escaped come through any value intact.
pub fn sbatch_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+%@".contains(c))
    {
        s.to_string()
    } else {
        format!("\"{}\"", s.replace('\\', r"\\").replace('"', r#"\""#))
    }
}

/// Refuses a value with a control character: a line break would end the `#SBATCH` line or
/// the command it is part of, and start another the user never wrote.
fn check_one_line(flag: &str, value: &str) -> Result<(), String> {
    if value.chars().any(char::is_control) {
        return Err(format!(
            "{flag} {value:?} contains a control character (a line break, tab or similar): \
             each value goes on one line of the job script, so it must be free of them"
        ));
    }
    Ok(())
}

pub(crate) fn absolute(p: &Path) -> Result<PathBuf, String> {
    std::path::absolute(p).map_err(|e| format!("{}: {e}", p.display()))
}

/// Checks `--time` against Slurm's formats: `MM`, `MM:SS`, `HH:MM:SS`, `D-HH`, `D-HH:MM`,
/// `D-HH:MM:SS` (every field a whole number), so that a typo fails here and not at `sbatch`.
pub fn check_time(t: &str) -> Result<(), String> {
    let whole = |f: &str| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit());
    let ok = match t.split_once('-') {
        Some((days, rest)) => {
            let parts: Vec<&str> = rest.split(':').collect();
            whole(days) && parts.len() <= 3 && parts.iter().all(|p| whole(p))
        }
        None => {
            let parts: Vec<&str> = t.split(':').collect();
            parts.len() <= 3 && parts.iter().all(|p| whole(p))
        }
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "--time {t:?}: expected a Slurm time limit: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or \
             D-HH:MM:SS (e.g. 02:00:00 or 1-12)"
        ))
    }
}

/// Checks `--mem` against Slurm's form: a whole number with an optional `K`, `M`, `G` or
/// `T` suffix (megabytes without one).
pub fn check_mem(m: &str) -> Result<(), String> {
    let digits = m.strip_suffix(['K', 'M', 'G', 'T']).unwrap_or(m);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        Ok(())
    } else {
        Err(format!(
            "--mem {m:?}: expected a whole number with an optional K, M, G or T suffix \
             (e.g. 4G; megabytes without a suffix)"
        ))
    }
}

/// The files written by [`write_scripts`].
#[derive(Debug, Clone)]
pub struct SlurmScripts {
    /// The array job.
    pub array: PathBuf,
    /// The report job.
    pub report: PathBuf,
    /// Submits both, the report depending on the array (`afterok`).
    pub submit: PathBuf,
}

/// Writes the array script, the report script and a submit script for a sweep of `runs`
/// runs; returns what was written and what to type.
///
/// More array tasks than runs would leave the extra tasks nothing to do (and `--shards
/// 1000000` would ask Slurm for a million of them), so the tasks are capped at the run count
/// and the message says so.
pub fn write_scripts(specs: &[PathBuf], o: &SlurmOptions, runs: usize) -> Result<String, String> {
    let mut capped = None;
    let mut o = o.clone();
    if runs > 0 && o.shards > runs {
        capped = Some(o.shards);
        o.shards = runs;
    }
    let s = scripts(specs, &o)?;
    let mut msg = String::new();
    if let Some(asked) = capped {
        let _ = writeln!(
            msg,
            "--shards {asked}: the sweep has {runs} run(s), so the array has {runs} task(s) \
             (tasks beyond one per run would have nothing to do)"
        );
    }
    let _ = write!(
        msg,
        "wrote {}, {} and {}\nsubmit with: bash {}",
        s.array.display(),
        s.report.display(),
        s.submit.display(),
        quote(&s.submit.display().to_string())
    );
    Ok(msg)
}

/// The submit script [`scripts`] writes for `specs` under `o`.
pub fn submit_path(specs: &[PathBuf], o: &SlurmOptions) -> PathBuf {
    o.dir.join(format!("{}.submit.sh", job_name(specs, o)))
}

/// Writes `<dir>/cabo-plan.submit.sh`, which runs each of `submits` (one per line of a
/// plan); returns what to type.
pub fn write_plan_submit(o: &SlurmOptions, submits: &[PathBuf]) -> Result<String, String> {
    let dir = absolute(&o.dir)?;
    let path = dir.join("cabo-plan.submit.sh");
    let mut text = String::from(
        "#!/bin/bash\n# Submits every job of the plan (each an array and its report job).\nset -euo pipefail\n",
    );
    for s in submits {
        let _ = writeln!(text, "bash {}", quote(&absolute(s)?.display().to_string()));
    }
    write_script(&path, &text)?;
    Ok(format!(
        "submit the whole plan with: bash {}",
        quote(&path.display().to_string())
    ))
}

/// Generates and writes the scripts.
pub fn scripts(specs: &[PathBuf], o: &SlurmOptions) -> Result<SlurmScripts, String> {
    check_options(o)?;
    for p in specs {
        check_one_line("spec path", &p.display().to_string())?;
    }
    let dir = absolute(&o.dir)?;
    let binary = binary(o)?;
    let job = job_name(specs, o);
    // The job name becomes the scripts' file names under `--dir`.
    cabo_spec::check_name("--job-name: job", &job)?;
    create_logs(&dir)?;
    let sweep = Sweep {
        o,
        workdir: absolute(Path::new("."))?,
        binary: quote(&binary.display().to_string()),
        specs: specs
            .iter()
            .map(|p| quote(&p.display().to_string()))
            .collect::<Vec<_>>()
            .join(" "),
        out: quote(&o.out.display().to_string()),
    };
    let files = SlurmScripts {
        array: dir.join(format!("{job}.array.sbatch")),
        report: dir.join(format!("{job}.report.sbatch")),
        submit: dir.join(format!("{job}.submit.sh")),
    };
    for (path, text) in [
        (&files.array, sweep.array(&job, &dir)),
        (&files.report, sweep.report(&job, &dir)),
        (&files.submit, submit_script(&files, o.shards)),
    ] {
        write_script(path, &text)?;
    }
    Ok(files)
}

/// The absolute path of the cabo binary the jobs run: `--binary`, or this program.
pub(crate) fn binary(o: &SlurmOptions) -> Result<PathBuf, String> {
    match &o.binary {
        Some(b) => absolute(b),
        None => std::env::current_exe()
            .map_err(|e| format!("cannot find this program's path for the job script: {e}")),
    }
}

/// Creates `<dir>/logs`, where the jobs write their output.
pub(crate) fn create_logs(dir: &Path) -> Result<(), String> {
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| format!("cannot create {}: {e}", logs.display()))
}

/// Writes a job or submit script atomically.
pub(crate) fn write_script(path: &Path, text: &str) -> Result<(), String> {
    cabo_engine::store::write_atomic(path, text.as_bytes())
        .map_err(|e| format!("{}: cannot write: {e}", path.display()))
}

/// Rejects options Slurm or the sweep cannot use, before anything is written.
pub(crate) fn check_options(o: &SlurmOptions) -> Result<(), String> {
    if o.shards == 0 {
        return Err("--shards must be at least 1".into());
    }
    if o.concurrency == Some(0) {
        return Err("--concurrency must be at least 1".into());
    }
    if o.cpus_per_task == 0 {
        return Err("--cpus-per-task must be at least 1".into());
    }
    let paths = [("--out", &o.out), ("--dir", &o.dir)];
    for (flag, p) in paths
        .into_iter()
        .chain(o.binary.iter().map(|b| ("--binary", b)))
    {
        check_one_line(flag, &p.display().to_string())?;
    }
    let words = [
        ("--mem", &o.mem),
        ("--time", &o.time),
        ("--partition", &o.partition),
        ("--account", &o.account),
        ("--job-name", &o.job_name),
    ];
    for (flag, v) in words {
        if let Some(v) = v {
            check_one_line(flag, v)?;
        }
    }
    for p in &o.only {
        check_one_line("--only", p)?;
    }
    if let Some(t) = &o.time {
        check_time(t)?;
    }
    if let Some(m) = &o.mem {
        check_mem(m)?;
    }
    Ok(())
}

/// `--job-name`, or `cabo-` and the first spec's file stem.
fn job_name(specs: &[PathBuf], o: &SlurmOptions) -> String {
    o.job_name.clone().unwrap_or_else(|| {
        let stem = specs
            .first()
            .and_then(|p| p.file_stem())
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "sweep".into());
        format!("cabo-{stem}")
    })
}

/// The `#SBATCH` lines of a job named `name` that starts in `workdir`, with `extra` after
/// the name: the resources of `o`.
pub fn header(o: &SlurmOptions, workdir: &Path, name: &str, extra: &str) -> String {
    let mut h = String::from("#!/bin/bash\n");
    let _ = writeln!(h, "#SBATCH --job-name={}", sbatch_quote(name));
    h.push_str(extra);
    let _ = writeln!(h, "#SBATCH --cpus-per-task={}", o.cpus_per_task);
    for (flag, v) in o.resources() {
        if let Some(v) = v {
            let _ = writeln!(h, "#SBATCH --{flag}={}", sbatch_quote(v));
        }
    }
    let _ = writeln!(
        h,
        "#SBATCH --chdir={}",
        sbatch_quote(&workdir.display().to_string())
    );
    h
}

/// What the array and report scripts share: the options, where the jobs start, and the
/// quoted binary, spec list and output directory.
struct Sweep<'a> {
    o: &'a SlurmOptions,
    workdir: PathBuf,
    binary: String,
    specs: String,
    out: String,
}

impl Sweep<'_> {
    /// The `#SBATCH` lines of a job named `name`, with `extra` after the name.
    fn header(&self, name: &str, extra: &str) -> String {
        header(self.o, &self.workdir, name, extra)
    }

    /// The array job: one task per shard, or workers taking runs by their locks.
    fn array(&self, job: &str, dir: &Path) -> String {
        let o = self.o;
        let concurrency = o.concurrency.map(|k| format!("%{k}")).unwrap_or_default();
        let mut array = self.header(
            job,
            &format!(
                "#SBATCH --array=0-{}{concurrency}\n#SBATCH --output={}\n\
                 #SBATCH --signal=B:TERM@300\n",
                o.shards - 1,
                sbatch_quote(&dir.join("logs/%x-%A_%a.out").display().to_string())
            ),
        );
        array.push_str("set -euo pipefail\n");
        // How a task picks its runs: a fixed shard, or any run no other task holds.
        let (picking, selection) = if o.workers {
            (
                "# Every task runs the whole sweep and takes the next run no other task holds (run\n\
                 # locks, so the results directory needs a file system with working locks);\n",
                "--require-locks".to_string(),
            )
        } else {
            (
                "# One shard of the sweep per array task, all writing into the same results directory;\n",
                format!("--shard \"${{SLURM_ARRAY_TASK_ID}}/{}\"", o.shards),
            )
        };
        let _ = write!(
            array,
            "{picking}\
             # the task that completes the last run writes run.json and the report.\n\
             # Five minutes before the time limit SIGTERM makes every run save a checkpoint;\n\
             # resubmitting resumes them.\n\
             exec {} run {} --out {} {selection} --threads \"${{SLURM_CPUS_PER_TASK:-1}}\"",
            self.binary, self.specs, self.out,
        );
        if o.smoke {
            array.push_str(" --smoke");
        }
        for p in &o.only {
            let _ = write!(array, " --only {}", quote(p));
        }
        if let Some(r) = o.replications {
            let _ = write!(array, " --replications {r}");
        }
        if o.from_replication > 0 {
            let _ = write!(array, " --from-replication {}", o.from_replication);
        }
        array.push('\n');
        array
    }

    /// The report job, run once every array task succeeded.
    fn report(&self, job: &str, dir: &Path) -> String {
        let mut report = self.header(
            &format!("{job}-report"),
            &format!(
                "#SBATCH --output={}\n",
                sbatch_quote(&dir.join("logs/%x-%j.out").display().to_string())
            ),
        );
        let _ = writeln!(
            report,
            "set -euo pipefail\n# Runs after every array task succeeded (afterok).\nexec {} report {} --out {}{}",
            self.binary,
            self.specs,
            self.out,
            if self.o.smoke { " --smoke" } else { "" }
        );
        report
    }
}

/// Submits the array, then the report job depending on it.
fn submit_script(files: &SlurmScripts, shards: usize) -> String {
    format!(
        "#!/bin/bash\n# Submits the array, then the report job to run once the array succeeded.\n\
         set -euo pipefail\n\
         array=$(sbatch --parsable {})\n\
         array=${{array%%;*}}\n\
         report=$(sbatch --parsable --dependency=afterok:\"$array\" {})\n\
         echo \"array job $array ({} tasks), report job ${{report%%;*}}\"\n",
        quote(&files.array.display().to_string()),
        quote(&files.report.display().to_string()),
        shards
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_request_one_task_per_shard_and_a_dependent_report() {
        let tmp = std::env::temp_dir().join(format!("cabo-slurm-test-{}", std::process::id()));
        let o = SlurmOptions {
            shards: 3,
            concurrency: Some(2),
            cpus_per_task: 2,
            mem: Some("4G".into()),
            time: Some("01:00:00".into()),
            smoke: true,
            dir: tmp.clone(),
            binary: Some(PathBuf::from("/opt/cabo/xtask")),
            job_name: Some("demo".into()),
            ..SlurmOptions::default()
        };
        let s = scripts(&[PathBuf::from("specs/my spec.yaml")], &o).unwrap();
        let array = std::fs::read_to_string(&s.array).unwrap();
        assert!(array.contains("#SBATCH --array=0-2%2\n"), "{array}");
        assert!(array.contains("#SBATCH --signal=B:TERM@300\n"), "{array}");
        assert!(array.contains("#SBATCH --cpus-per-task=2\n"));
        assert!(array.contains("#SBATCH --mem=4G\n"));
        assert!(array.contains("#SBATCH --time=01:00:00\n"));
        assert!(array.contains(
            "exec /opt/cabo/xtask run 'specs/my spec.yaml' --out results --shard \"${SLURM_ARRAY_TASK_ID}/3\""
        ));
        assert!(array.trim_end().ends_with("--smoke"));
        let report = std::fs::read_to_string(&s.report).unwrap();
        assert!(report.contains("exec /opt/cabo/xtask report 'specs/my spec.yaml' --out results"));
        let submit = std::fs::read_to_string(&s.submit).unwrap();
        assert!(submit.contains("--dependency=afterok:\"$array\""));
        let _ = std::fs::remove_dir_all(tmp);
    }

    #[test]
    fn workers_share_the_whole_sweep_through_run_locks() {
        let tmp = std::env::temp_dir().join(format!("cabo-slurm-workers-{}", std::process::id()));
        let o = SlurmOptions {
            shards: 5,
            workers: true,
            dir: tmp.clone(),
            binary: Some(PathBuf::from("/opt/cabo/xtask")),
            job_name: Some("pool".into()),
            ..SlurmOptions::default()
        };
        let s = scripts(&[PathBuf::from("specs/a.yaml")], &o).unwrap();
        let array = std::fs::read_to_string(&s.array).unwrap();
        assert!(array.contains("#SBATCH --array=0-4\n"), "{array}");
        assert!(
            array.contains(
                "exec /opt/cabo/xtask run specs/a.yaml --out results --require-locks --threads \"${SLURM_CPUS_PER_TASK:-1}\"\n"
            ),
            "{array}"
        );
        assert!(!array.contains("--shard"), "{array}");
        let _ = std::fs::remove_dir_all(tmp);
    }

    /// A plan's lines each get their own job, with the line's selection, and one script
    /// submits them all.
    #[test]
    fn a_plan_writes_a_job_per_line_and_one_submit_script() {
        let tmp = std::env::temp_dir().join(format!("cabo-slurm-plan-{}", std::process::id()));
        let base = SlurmOptions {
            dir: tmp.clone(),
            binary: Some(PathBuf::from("/opt/cabo/xtask")),
            ..SlurmOptions::default()
        };
        let plan = "specs/a.yaml --replications 8 --from-replication 4 --only PBGI --only 'EI (true prior)'\n\
                    specs/b.yaml\n";
        let mut submits = Vec::new();
        for line in cabo_gallery::parse_plan(plan, "plan.txt").unwrap() {
            let o = base.for_plan_line(&line);
            let spec = [PathBuf::from(&line.spec)];
            scripts(&spec, &o).unwrap();
            submits.push(submit_path(&spec, &o));
        }
        let array = std::fs::read_to_string(tmp.join("cabo-a.array.sbatch")).unwrap();
        assert!(
            array.contains(
                "--only PBGI --only 'EI (true prior)' --replications 8 --from-replication 4\n"
            ),
            "{array}"
        );
        let other = std::fs::read_to_string(tmp.join("cabo-b.array.sbatch")).unwrap();
        assert!(
            !other.contains("--only") && !other.contains("-replication"),
            "{other}"
        );
        let msg = write_plan_submit(&base, &submits).unwrap();
        let all = std::fs::read_to_string(tmp.join("cabo-plan.submit.sh")).unwrap();
        assert!(msg.contains("cabo-plan.submit.sh"), "{msg}");
        assert!(all.contains("cabo-a.submit.sh\n") && all.contains("cabo-b.submit.sh\n"));
        let _ = std::fs::remove_dir_all(tmp);
    }

    #[test]
    fn bad_counts_are_rejected() {
        let o = SlurmOptions {
            shards: 0,
            ..SlurmOptions::default()
        };
        assert!(scripts(&[], &o).unwrap_err().contains("--shards"));
    }
}
