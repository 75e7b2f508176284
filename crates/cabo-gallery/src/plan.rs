//! The run plan: per spec, the replications and policies its undecided claims still need.
//!
//! `reproduce --list` prints it, one line per spec, and `slurm --plan FILE` reads the same
//! lines, so a cluster runs exactly what is still undecided:
//!
//! ```text
//! specs/pbgi/bayesian-regret-cost-aware-d16.yaml --replications 8 --from-replication 4 --only PBGI --only EIPC
//! ```
//!
//! A line without `--only` runs every policy (a study, or a spec whose runtime rows need all
//! of them); one without `--replications` runs the spec's own count. `--from-replication K`
//! skips the replications whose per-run values are committed beside the page already, so a
//! fresh machine or a cluster does not run them again.

/// One spec's runs still needed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanLine {
    /// The spec's path from the repository root.
    pub spec: String,
    /// Run replications up to N−1 (`None`: the spec's own count).
    pub replications: Option<usize>,
    /// Start at this replication: the ones below it are done (0: none is).
    pub from_replication: usize,
    /// Only these policies (empty: all).
    pub only: Vec<String>,
}

impl PlanLine {
    /// Replications 0 … `replications` − 1 of `only` (every policy when empty) of `spec`.
    pub fn new(spec: impl Into<String>, replications: Option<usize>, only: Vec<String>) -> Self {
        PlanLine {
            spec: spec.into(),
            replications,
            from_replication: 0,
            only,
        }
    }

    /// The line as `--list` prints it and `slurm --plan` reads it (names with spaces or
    /// quotes single-quoted as a shell would take them).
    pub fn line(&self) -> String {
        let mut s = quote(&self.spec);
        if let Some(n) = self.replications {
            s.push_str(&format!(" --replications {n}"));
        }
        if self.from_replication > 0 {
            s.push_str(&format!(" --from-replication {}", self.from_replication));
        }
        for p in &self.only {
            s.push_str(&format!(" --only {}", quote(p)));
        }
        s
    }

    /// Reads a line written by [`PlanLine::line`] (`#` comments and blank lines are `None`).
    pub fn parse(line: &str) -> Result<Option<PlanLine>, String> {
        let words = shell_words(line)?;
        let Some((spec, mut rest)) = words.split_first() else {
            return Ok(None);
        };
        if spec.starts_with('#') {
            return Ok(None);
        }
        let mut plan = PlanLine::new(spec.clone(), None, Vec::new());
        while let Some((flag, tail)) = rest.split_first() {
            let (value, tail) = tail
                .split_first()
                .ok_or_else(|| format!("{flag} without a value"))?;
            match flag.as_str() {
                "--replications" => {
                    plan.replications = Some(value.parse().map_err(|_| {
                        format!("--replications {value:?}: expected a whole number")
                    })?)
                }
                "--from-replication" => {
                    plan.from_replication = value.parse().map_err(|_| {
                        format!("--from-replication {value:?}: expected a whole number")
                    })?
                }
                "--only" => plan.only.push(value.clone()),
                other => {
                    return Err(format!(
                        "unknown {other:?}: a plan line is `SPEC [--replications N] \
                         [--from-replication K] [--only POLICY]…`"
                    ));
                }
            }
            rest = tail;
        }
        Ok(Some(plan))
    }
}

/// Reads a plan file: one [`PlanLine`] a line; errors name the line.
pub fn parse_plan(text: &str, source: &str) -> Result<Vec<PlanLine>, String> {
    let mut lines = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if let Some(p) = PlanLine::parse(l).map_err(|e| format!("{source}:{}: {e}", i + 1))? {
            lines.push(p);
        }
    }
    Ok(lines)
}

/// A word as a POSIX shell reads it back (single-quoted unless plainly safe); the Slurm
/// scripts quote their words the same way.
pub fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+%@".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Splits a line into words: whitespace separates, single quotes keep text as it is (and
/// `'\''` stands for a quote, as [`quote`] writes it).
fn shell_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err(format!("unclosed quote in {line:?}")),
                    }
                }
            }
            '\\' => {
                let next = chars
                    .next()
                    .ok_or_else(|| format!("a lone `\\` ends {line:?}"))?;
                word.get_or_insert_with(String::new).push(next);
            }
            c if c.is_whitespace() => words.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

/// Joins lines of the same spec: the larger replication count, the earlier first
/// replication, every policy either names (a line for all policies takes in the others).
pub fn merge(lines: Vec<PlanLine>) -> Vec<PlanLine> {
    let mut out: Vec<PlanLine> = Vec::new();
    for l in lines {
        let Some(m) = out.iter_mut().find(|m| m.spec == l.spec) else {
            out.push(l);
            continue;
        };
        m.replications = match (m.replications, l.replications) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
        m.from_replication = m.from_replication.min(l.from_replication);
        if m.only.is_empty() || l.only.is_empty() {
            m.only.clear();
        } else {
            for p in l.only {
                if !m.only.contains(&p) {
                    m.only.push(p);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_line_round_trips_with_quoted_names() {
        let p = PlanLine {
            from_replication: 3,
            ..PlanLine::new(
                "specs/pbgi/a b.yaml",
                Some(8),
                vec!["PBGI (true prior)".into(), "it's".into(), "EIPC".into()],
            )
        };
        let line = p.line();
        assert_eq!(
            line,
            "'specs/pbgi/a b.yaml' --replications 8 --from-replication 3 --only 'PBGI (true prior)' --only 'it'\\''s' --only EIPC"
        );
        assert_eq!(PlanLine::parse(&line).unwrap(), Some(p));
        assert_eq!(PlanLine::parse("  # a comment").unwrap(), None);
        assert_eq!(PlanLine::parse("").unwrap(), None);
    }

    #[test]
    fn bad_plan_lines_say_what_a_line_is() {
        let e = parse_plan("specs/a.yaml --shards 3\n", "plan.txt").unwrap_err();
        assert!(e.starts_with("plan.txt:1: unknown \"--shards\""), "{e}");
        let e = parse_plan("\nspecs/a.yaml --replications x\n", "plan.txt").unwrap_err();
        assert!(e.starts_with("plan.txt:2: --replications \"x\""), "{e}");
    }

    #[test]
    fn lines_of_one_spec_merge_into_the_larger_selection() {
        let l = |r, only: &[&str]| {
            PlanLine::new(
                "s.yaml",
                Some(r),
                only.iter().map(|s| s.to_string()).collect(),
            )
        };
        let from = |k, line: PlanLine| PlanLine {
            from_replication: k,
            ..line
        };
        let merged = merge(vec![from(2, l(4, &["A", "B"])), from(5, l(8, &["A", "C"]))]);
        assert_eq!(merged, [from(2, l(8, &["A", "B", "C"]))]);
        let all = merge(vec![l(4, &["A"]), l(4, &[])]);
        assert_eq!(all, [l(4, &[])]);
    }
}
