//! A paper's sequential reproduction on a Slurm cluster, round by round (`slurm --reproduce`).
//!
//! `reproduce` decides a paper's claims in batches: it runs the undecided claims' policies up
//! to each spec's next planned look, decides again, and repeats. On a cluster each batch is a
//! set of job arrays, so the loop itself becomes a job: a round plans the runs still needed
//! (`reproduce --list`), submits them as `slurm --plan` does, and submits the next round to
//! start once those arrays have ended (`afterany`). A round that finds nothing left writes the
//! pages. A round whose runs fail is planned again by the next, so the rounds are capped.

use crate::slurm::{self, SlurmOptions, quote, sbatch_quote};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// The rounds that submit runs unless `--rounds` says otherwise: a paper's specs take up to
/// four or five looks, so twelve leave room for rounds whose runs failed.
pub const DEFAULT_ROUNDS: usize = 12;

/// What a cluster reproduction runs.
#[derive(Debug, Clone)]
pub struct Rounds {
    /// The paper, as `reproduce` takes it (`000`, `pbgi`, `all`).
    pub paper: String,
    /// Up to the papers' replications rather than the gallery's quick ones.
    pub full: bool,
    /// At most this many rounds submit runs; the next one writes the pages and fails.
    pub rounds: usize,
}

impl Rounds {
    /// The job (and script) name: `cabo-reproduce-<paper>`.
    fn job(&self) -> String {
        format!("cabo-reproduce-{}", self.paper)
    }

    /// `reproduce <paper> [--full]`, the command a round runs with `--list` or
    /// `--pages-only`.
    fn command(&self) -> String {
        let full = if self.full { " --full" } else { "" };
        format!("reproduce {}{full}", quote(&self.paper))
    }
}

/// The `slurm` flags every round passes on to its `slurm --plan`: the arrays' resources and
/// the binary they run.
fn array_flags(o: &SlurmOptions, binary: &str) -> String {
    let mut f = format!(
        "--shards {} --cpus-per-task {} --binary {binary}",
        o.shards, o.cpus_per_task
    );
    if o.workers {
        f.push_str(" --workers");
    }
    if let Some(k) = o.concurrency {
        let _ = write!(f, " --concurrency {k}");
    }
    for (flag, v) in o.resources() {
        if let Some(v) = v {
            let _ = write!(f, " --{flag} {}", quote(v));
        }
    }
    f
}

/// Where a round script runs and lives: the binary, the results and script directories
/// and the working directory, all absolute.
struct Places {
    binary: PathBuf,
    out: PathBuf,
    dir: PathBuf,
    workdir: PathBuf,
}

/// The round script at `script`: one round of the sequential design, which submits the next.
fn round_script(r: &Rounds, o: &SlurmOptions, at: &Places, script: &Path) -> String {
    let dir = at.dir.display().to_string();
    let binary = quote(&at.binary.display().to_string());
    let out = quote(&at.out.display().to_string());
    // The round job itself only plans and submits: one CPU, no memory request.
    let small = SlurmOptions {
        cpus_per_task: 1,
        mem: None,
        ..o.clone()
    };
    let log = sbatch_quote(&at.dir.join("logs/%x-%j.out").display().to_string());
    let mut text = slurm::header(
        &small,
        &at.workdir,
        &r.job(),
        &format!("#SBATCH --output={log}\n"),
    );
    let command = r.command();
    let reproduce = format!("{binary} {command} --out {out}");
    let _ = write!(
        text,
        r#"set -euo pipefail
# One round of `{command}` on the cluster: plan the runs the undecided claims still
# need, submit them, and submit the next round to start once they have ended. With nothing
# left to run, write the pages. Start the first round with: sbatch {script_q}
round=${{CABO_ROUND:-1}}
rounds={rounds}
dir={dir_q}/round-$round
mkdir -p "$dir"
{reproduce} --list > "$dir/plan.txt"
if [ ! -s "$dir/plan.txt" ]; then
    echo "round $round: every claim is decided or at its cap; writing the pages"
    exec {reproduce} --pages-only
fi
if [ "$round" -gt "$rounds" ]; then
    echo "round $round: runs remain after $rounds rounds (do they fail? see the logs under {dir_q}); writing the pages from what there is" >&2
    {reproduce} --pages-only
    exit 1
fi
{binary} slurm --plan "$dir/plan.txt" --out {out} --dir "$dir" {flags}
arrays=$(bash "$dir/cabo-plan.submit.sh" | sed -n 's/^array job \([0-9]*\).*/\1/p' | paste -sd: -)
next=$(sbatch --parsable --dependency=afterany:"$arrays" --export=ALL,CABO_ROUND=$((round + 1)) {script_q})
echo "round $round: submitted the arrays $arrays; round $((round + 1)) is job ${{next%%;*}}"
"#,
        script_q = quote(&script.display().to_string()),
        rounds = r.rounds,
        dir_q = quote(&dir),
        flags = array_flags(o, &binary),
    );
    text
}

/// Writes `<dir>/cabo-reproduce-<paper>.round.sbatch` (see the module documentation) and
/// returns what to type.
pub fn write_rounds(r: &Rounds, o: &SlurmOptions) -> Result<String, String> {
    slurm::check_options(o)?;
    if r.rounds == 0 {
        return Err("--rounds must be at least 1".into());
    }
    let at = Places {
        binary: slurm::binary(o)?,
        out: slurm::absolute(&o.out)?,
        dir: slurm::absolute(&o.dir)?,
        workdir: slurm::absolute(Path::new("."))?,
    };
    slurm::create_logs(&at.dir)?;
    let script = at.dir.join(format!("{}.round.sbatch", r.job()));
    slurm::write_script(&script, &round_script(r, o, &at, &script))?;
    Ok(format!(
        "wrote {}\nstart the first round with: sbatch {}",
        script.display(),
        quote(&script.display().to_string())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_plans_submits_the_arrays_and_chains_the_next_round_on_them() {
        let tmp = tempfile::tempdir().unwrap();
        let o = SlurmOptions {
            shards: 16,
            workers: true,
            cpus_per_task: 2,
            mem: Some("4G".into()),
            time: Some("02:00:00".into()),
            partition: Some("long queue".into()),
            out: tmp.path().join("results"),
            dir: tmp.path().join("jobs"),
            binary: Some(PathBuf::from("/opt/cabo/xtask")),
            ..SlurmOptions::default()
        };
        let r = Rounds {
            paper: "000".into(),
            full: true,
            rounds: 5,
        };
        let msg = write_rounds(&r, &o).unwrap();
        let script = tmp.path().join("jobs/cabo-reproduce-000.round.sbatch");
        assert!(
            msg.contains(&format!("sbatch {}", script.display())),
            "{msg}"
        );
        let text = std::fs::read_to_string(&script).unwrap();
        let results = tmp.path().join("results").display().to_string();
        let jobs = tmp.path().join("jobs").display().to_string();
        let has = |s: &str| assert!(text.contains(s), "{s}\nnot in:\n{text}");
        // The round job is small; the arrays get the resources asked for.
        has("#SBATCH --cpus-per-task=1\n");
        assert!(!text.contains("#SBATCH --mem"), "{text}");
        has("#SBATCH --partition=\"long queue\"\n");
        has(&format!(
            "/opt/cabo/xtask reproduce 000 --full --out {results} --list > \"$dir/plan.txt\""
        ));
        has(&format!(
            "exec /opt/cabo/xtask reproduce 000 --full --out {results} --pages-only\n"
        ));
        has(&format!(
            "/opt/cabo/xtask slurm --plan \"$dir/plan.txt\" --out {results} --dir \"$dir\" \
             --shards 16 --cpus-per-task 2 --binary /opt/cabo/xtask --workers --mem 4G \
             --time 02:00:00 --partition 'long queue'\n"
        ));
        has(&format!("dir={jobs}/round-$round\n"));
        has("rounds=5\n");
        // The next round waits for every array of this one, whether its tasks succeeded.
        has(&format!(
            "--dependency=afterany:\"$arrays\" --export=ALL,CABO_ROUND=$((round + 1)) {})\n",
            script.display()
        ));
    }

    #[test]
    fn rounds_and_resources_are_checked_before_anything_is_written() {
        let tmp = tempfile::tempdir().unwrap();
        let o = SlurmOptions {
            dir: tmp.path().join("jobs"),
            ..SlurmOptions::default()
        };
        let r = Rounds {
            paper: "000".into(),
            full: false,
            rounds: 0,
        };
        assert!(write_rounds(&r, &o).unwrap_err().contains("--rounds"));
        let bad = SlurmOptions {
            time: Some("two hours".into()),
            ..o.clone()
        };
        let r = Rounds { rounds: 3, ..r };
        assert!(write_rounds(&r, &bad).unwrap_err().contains("--time"));
        assert!(!tmp.path().join("jobs").exists());
    }
}
