//! Claims that read several specs' runs: a policy against a policy of another spec read at a
//! share of that spec's budget (`better_across`, `comparable_across`), an advantage that
//! shrinks from spec to spec (`advantage_shrinks`), and tallies over settings
//! (`lowest_most_often`, `some_setting`).
//!
//! Two specs whose replications share their seeds (one takes `seeds_from` the other) pair by
//! replication, as policies of one spec do; specs seeded apart run other problem instances
//! in replication r, so their runs are compared as independent samples (Welch's interval).
//! Every claim takes the planned looks of its own spec.

use super::{Outcome, Paired, contiguous, looks_of};
use crate::schema::metric_of;
use crate::schema::{Check, Claim, GallerySpec, SettingGroup, Shows, grid_share};
use crate::values::RunValues;
use crate::{Cap, PlanLine, SpecResult};
use cabo_evidence::tally::{self, RESAMPLES};
use cabo_evidence::{Comparison, Contrast, Decision, Looks, Test, Verdict};

/// Rows of the table list at most this many of a `some_setting` claim's comparisons: those
/// whose interval excludes zero, strongest first (the family's size is in the line under
/// the table).
const SHOWN: usize = 6;

/// A claim across specs decided on the per-run values of every spec it reads.
pub(crate) fn decide(
    claim: &Claim,
    check: &Check,
    own: &GallerySpec,
    results: &[SpecResult],
) -> Result<Outcome, String> {
    let ctx = Ctx {
        claim,
        metric: metric_of(claim),
        results,
        looks: looks_of(own),
        own,
    };
    match check {
        Check::BetterAcross { policy, than: a } => ctx.across((policy, None), a, Test::Better),
        Check::ComparableAcross {
            policy,
            to: a,
            margin,
        } => ctx.across((policy, None), a, Test::Comparable { margin: *margin }),
        Check::NotWorseAcross {
            policy,
            at,
            than: a,
            margin,
        } => ctx.across((policy, *at), a, Test::NotWorse { margin: *margin }),
        Check::AdvantageShrinks {
            policies,
            over,
            then,
        } => ctx.shrinks(policies, over, then),
        Check::LowestMostOften {
            level,
            levels,
            settings,
        } => ctx.lowest(level, levels, settings),
        Check::SomeSetting {
            shows,
            levels,
            settings,
        } => ctx.some_setting(*shows, levels, settings),
        _ => Err(format!("claim {}: not a check across specs", claim.id)),
    }
}

/// One claim's view of the page's results.
struct Ctx<'a> {
    claim: &'a Claim,
    metric: &'a str,
    results: &'a [SpecResult],
    looks: Looks,
    own: &'a GallerySpec,
}

/// One side of a comparison: a spec's per-run values of one metric.
struct Side<'a> {
    values: &'a RunValues,
    seed: Option<&'a str>,
}

impl<'a> Ctx<'a> {
    /// The results of `spec` (one of the paper's specs: the loader checked it).
    fn result(&self, spec: &str) -> Result<&'a SpecResult, String> {
        self.results
            .iter()
            .find(|r| r.spec.path == spec)
            .ok_or_else(|| {
                format!(
                    "claim {}: spec {spec} is not in the paper's specs",
                    self.claim.id
                )
            })
    }

    /// The per-run values of `spec` (`None`: no run yet).
    fn side(&self, spec: &str) -> Result<Option<Side<'a>>, String> {
        let r = self.result(spec)?;
        Ok(r.values.as_ref().map(|values| Side {
            values,
            seed: r.seed_name.as_deref(),
        }))
    }

    /// `policy`'s value in replication `rep` of `side`, read at the budget (`share` None) or
    /// at grid index `share`, oriented so that lower is better.
    fn value(&self, side: &Side, policy: &str, rep: usize, share: Option<usize>) -> Option<f64> {
        side.values.oriented(policy, rep, self.metric, share)
    }

    /// Per replication 0, 1, … while every policy has a run, the mean of `policies`'
    /// oriented values at the budget.
    fn means(&self, side: &Side, policies: &[String]) -> Vec<f64> {
        let mut out = Vec::new();
        for rep in 0.. {
            let v: Option<Vec<f64>> = policies
                .iter()
                .map(|p| self.value(side, p, rep, None))
                .collect();
            match v {
                Some(v) if !v.is_empty() => out.push(v.iter().sum::<f64>() / v.len() as f64),
                _ => break,
            }
        }
        out
    }

    /// The claim's row from a decision; its policies (what remains to run) are those the
    /// claim reads on its own spec.
    fn outcome(&self, decision: Decision, have: usize, describe: String) -> Outcome {
        if have == 0 {
            return Outcome::NotRun;
        }
        let own = self.side(&self.own.path).ok().flatten();
        let reads = self.claim.reads();
        let policies = reads
            .iter()
            .filter(|r| r.spec == self.own.path)
            .flat_map(|r| r.policies.iter())
            .map(|p| {
                let n = own
                    .as_ref()
                    .map_or(0, |s| contiguous(s.values, p, self.metric));
                (p.to_string(), n)
            })
            .collect();
        Outcome::Paired(Paired {
            decision,
            of: self.own.paper_replications,
            have,
            describe,
            policies,
            waiting: Vec::new(),
        })
    }

    /// `policy` of the claim's spec at its budget (or at share `at` of it) against
    /// `a.policy` of `a.spec` at share `a.at` of its budget, paired by replication.
    fn across(
        &self,
        (policy, at): (&str, Option<f64>),
        a: &crate::schema::Across,
        test: Test,
    ) -> Result<Outcome, String> {
        let share_of =
            |at: f64| grid_share(at).map_err(|e| format!("claim {}: check.at: {e}", self.claim.id));
        let share = share_of(a.at)?;
        let own_share = at.map(share_of).transpose()?;
        let (Some(mine), Some(theirs)) = (self.side(&self.own.path)?, self.side(&a.spec)?) else {
            return Ok(Outcome::NotRun);
        };
        let mut advantages = Vec::new();
        for rep in 0.. {
            let (Some(m), Some(t)) = (
                self.value(&mine, policy, rep, own_share),
                self.value(&theirs, &a.policy, rep, Some(share)),
            ) else {
                break;
            };
            advantages.push(t - m);
        }
        let have = advantages.len();
        let comparison = Comparison {
            against: format!("{} of {} at {} of its budget", a.policy, a.spec, a.at),
            advantages,
        };
        let decision = cabo_evidence::decide(&test, &[comparison], &self.looks);
        let pairing = if a.spec == self.own.path {
            "replication r of every policy of the spec shares its problem instance and initial \
             design"
        } else {
            "the two specs share their replications' seeds, so replication r of one pairs with \
             replication r of the other"
        };
        let describe = format!(
            "{}; {pairing}",
            cabo_evidence::describe(&test, 1, &self.looks)
        );
        Ok(self.outcome(decision, have, describe))
    }

    /// The advantage of `policies` over `over` per replication, in the claim's spec and each
    /// of `then`: it shrinks from each spec to the next (Holm over the steps).
    fn shrinks(
        &self,
        policies: &[String],
        over: &[String],
        then: &[String],
    ) -> Result<Outcome, String> {
        let specs: Vec<&str> = std::iter::once(self.own.path.as_str())
            .chain(then.iter().map(String::as_str))
            .collect();
        let mut advantages = Vec::new();
        for spec in &specs {
            let Some(side) = self.side(spec)? else {
                return Ok(Outcome::NotRun);
            };
            let (mine, theirs) = (self.means(&side, policies), self.means(&side, over));
            let adv: Vec<f64> = theirs.iter().zip(&mine).map(|(t, m)| t - m).collect();
            advantages.push((side.seed, adv));
        }
        let steps: Vec<Step> = specs
            .windows(2)
            .zip(advantages.windows(2))
            .map(|(s, a)| Step {
                against: format!("advantage in {} less in {}", s[0], s[1]),
                first: a[0].1.clone(),
                second: a[1].1.clone(),
                paired: a[0].0.is_some() && a[0].0 == a[1].0,
            })
            .collect();
        Ok(self.steps(steps, Test::Better, "the advantage shrinks"))
    }

    /// Decides a family of steps: paired where every step's two specs share seeds, else
    /// every step by Welch's interval on the two specs' replications.
    fn steps(&self, steps: Vec<Step>, test: Test, what: &str) -> Outcome {
        let family = steps.len();
        let paired = steps.iter().all(|s| s.paired);
        let (decision, have, describe) = if paired {
            let c: Vec<Comparison> = steps.into_iter().map(Step::paired).collect();
            let have = c.iter().map(|c| c.advantages.len()).min().unwrap_or(0);
            let describe = format!(
                "{what}: {}; the specs share their replications' seeds, so the per-replication \
                 values pair",
                cabo_evidence::describe(&test, family, &self.looks)
            );
            (
                cabo_evidence::decide(&test, &c, &self.looks),
                have,
                describe,
            )
        } else {
            let c: Vec<Contrast> = steps.into_iter().map(Step::unpaired).collect();
            let have = c
                .iter()
                .map(|c| c.first.len().min(c.second.len()))
                .min()
                .unwrap_or(0);
            (
                cabo_evidence::decide_unpaired(&test, &c, family, &self.looks),
                have,
                unpaired_describe(what, &test, family, &self.looks),
            )
        };
        self.outcome(decision, have, describe)
    }

    /// Whether `level` has the lowest mean in more settings than each other level, by a
    /// bootstrap over each spec's replications.
    fn lowest(
        &self,
        level: &str,
        levels: &[String],
        groups: &[SettingGroup],
    ) -> Result<Outcome, String> {
        let favoured = levels.iter().position(|l| l == level).ok_or_else(|| {
            format!(
                "claim {}: level {level:?} is not among the levels",
                self.claim.id
            )
        })?;
        let mut sources: Vec<&str> = Vec::new();
        let mut settings = Vec::new();
        for g in groups {
            for p in &g.policies {
                let mut values = Vec::new();
                let mut from = Vec::new();
                for spec in &g.specs {
                    let Some(side) = self.side(spec)? else {
                        return Ok(Outcome::NotRun);
                    };
                    values.push(self.means(&side, std::slice::from_ref(p)));
                    from.push(match sources.iter().position(|s| s == spec) {
                        Some(i) => i,
                        None => {
                            sources.push(spec);
                            sources.len() - 1
                        }
                    });
                }
                settings.push(tally::Setting {
                    name: format!("{}, {p}", g.name),
                    levels: values,
                    sources: from,
                });
            }
        }
        let have = settings
            .iter()
            .flat_map(|s| s.levels.iter().map(Vec::len))
            .min()
            .unwrap_or(0);
        let decision = tally::decide_most_often_lowest(
            favoured,
            levels,
            &settings,
            &self.looks,
            RESAMPLES,
            seed_of(&self.claim.id),
        );
        let counts = if have == 0 {
            String::new()
        } else {
            // The counts at the look that decided, or at every replication there is before
            // the first look.
            let n = if decision.n > 0 { decision.n } else { have };
            let c = tally::lowest_counts(&settings, n);
            let listed: Vec<String> = levels
                .iter()
                .zip(&c)
                .map(|(l, c)| format!("{l}: {c}"))
                .collect();
            format!(" (counts at n = {n}: {})", listed.join(", "))
        };
        let describe = format!(
            "lowest most often: per level, the settings (of {}) in which its mean at the budget \
             is the lowest; per other level, the count difference with a percentile bootstrap \
             interval ({RESAMPLES} resamples of each spec's replications, seeded by the claim's \
             id) at the nominal level of the look's O'Brien–Fleming boundary over looks at n = \
             {}; decided by Holm's step-down over the {} other levels{counts}",
            settings.len(),
            sizes(&self.looks),
            levels.len() - 1
        );
        Ok(self.outcome(decision, have, describe))
    }

    /// Whether some setting shows what `shows` asks: per setting and pair of levels, the
    /// difference of the two levels' means at the budget.
    fn some_setting(
        &self,
        shows: Shows,
        levels: &[String],
        groups: &[SettingGroup],
    ) -> Result<Outcome, String> {
        let mut steps = Vec::new();
        for g in groups {
            let mut sides = Vec::new();
            for spec in &g.specs {
                let Some(side) = self.side(spec)? else {
                    return Ok(Outcome::NotRun);
                };
                sides.push(side);
            }
            for p in &g.policies {
                let one = std::slice::from_ref(p);
                for i in 0..sides.len() {
                    for j in i + 1..sides.len() {
                        // Positive: the earlier level i is better (lower) than the later j.
                        steps.push(Step {
                            against: format!(
                                "{}, {p}: {} against {}",
                                g.name, levels[i], levels[j]
                            ),
                            first: self.means(&sides[j], one),
                            second: self.means(&sides[i], one),
                            paired: sides[i].seed.is_some() && sides[i].seed == sides[j].seed,
                        });
                    }
                }
            }
        }
        let flip = |steps: &[Step]| -> Vec<Step> { steps.iter().map(Step::flipped).collect() };
        let what = |w: &str| format!("some setting shows {w}");
        let outcome = match shows {
            Shows::EarlierLevelBetter => {
                self.steps(steps, Test::BetterThanAny, &what("an earlier level better"))
            }
            Shows::LaterLevelBetter => self.steps(
                flip(&steps),
                Test::BetterThanAny,
                &what("a later level better"),
            ),
            Shows::Both => {
                let later = self.steps(
                    flip(&steps),
                    Test::BetterThanAny,
                    &what("a later level better (and, below, an earlier one)"),
                );
                let earlier =
                    self.steps(steps, Test::BetterThanAny, &what("an earlier level better"));
                both(earlier, later)
            }
        };
        Ok(strongest(outcome))
    }
}

/// One comparison of a family across specs: `mean(first) − mean(second)` favours the claim.
struct Step {
    against: String,
    first: Vec<f64>,
    second: Vec<f64>,
    /// Whether the two sides share their replications' seeds.
    paired: bool,
}

impl Step {
    /// Per replication while both sides have one, `first − second`.
    fn paired(self) -> Comparison {
        Comparison {
            against: self.against,
            advantages: self
                .first
                .iter()
                .zip(&self.second)
                .map(|(a, b)| a - b)
                .collect(),
        }
    }

    fn unpaired(self) -> Contrast {
        Contrast {
            against: self.against,
            first: self.first,
            second: self.second,
        }
    }

    /// The same comparison with the other side favoured.
    fn flipped(&self) -> Step {
        Step {
            against: self.against.clone(),
            first: self.second.clone(),
            second: self.first.clone(),
            paired: self.paired,
        }
    }
}

/// "Both directions": holds when each any-of holds (an intersection of two union–
/// intersection tests, each at the full level), does not hold when either does not.
fn both(earlier: Outcome, later: Outcome) -> Outcome {
    let (Outcome::Paired(mut e), Outcome::Paired(l)) = (earlier, later) else {
        return Outcome::NotRun;
    };
    let (ve, vl) = (e.decision.verdict, l.decision.verdict);
    e.decision.verdict = match (ve, vl) {
        (Verdict::Holds, Verdict::Holds) => Verdict::Holds,
        (Verdict::DoesNotHold, _) | (_, Verdict::DoesNotHold) => Verdict::DoesNotHold,
        _ => Verdict::Inconclusive,
    };
    // The later-better direction's intervals, negated, read as earlier-better ones.
    e.decision.n = e.decision.n.min(l.decision.n);
    e.decision.last_look = e.decision.last_look && l.decision.last_look;
    e.describe = format!("{}; {}", l.describe, e.describe);
    e.decision
        .compared
        .extend(l.decision.compared.into_iter().map(|mut c| {
            c.against = format!("{} (later better)", c.against);
            c
        }));
    Outcome::Paired(e)
}

/// A `some_setting` row lists only the comparisons whose interval excludes zero, strongest
/// first, at most [`SHOWN`].
fn strongest(outcome: Outcome) -> Outcome {
    let Outcome::Paired(mut p) = outcome else {
        return outcome;
    };
    let total = p.decision.compared.len();
    let distance = |c: &cabo_evidence::Compared| c.low.max(-c.high);
    p.decision.compared.retain(|c| c.low > 0.0 || c.high < 0.0);
    p.decision
        .compared
        .sort_by(|a, b| distance(b).total_cmp(&distance(a)));
    p.decision.compared.truncate(SHOWN);
    p.describe = format!(
        "{}; the row lists the comparisons (of {total}) whose interval excludes zero, at most \
         {SHOWN}, farthest from zero first",
        p.describe
    );
    Outcome::Paired(p)
}

/// The line under the table for comparisons of independent samples.
fn unpaired_describe(what: &str, test: &Test, family: usize, looks: &Looks) -> String {
    let paired = cabo_evidence::describe(test, family, looks);
    // The statistics crate words its lines for paired differences; here the two sides are
    // independent samples (specs seeded apart) and the interval is Welch's.
    let welch = paired
        .replace(
            "mean paired advantage with its",
            "difference of the two specs' means with its",
        )
        .replace("t interval", "Welch t interval");
    format!(
        "{what}: {welch}; the specs are seeded apart (replication r runs another problem \
         instance in each), so their replications are independent samples"
    )
}

/// The planned looks, as a list.
fn sizes(looks: &Looks) -> String {
    let s: Vec<String> = looks.sizes().iter().map(usize::to_string).collect();
    s.join(", ")
}

/// The bootstrap's seed: FNV-1a of the claim's id, so a page recomputes the same intervals.
fn seed_of(id: &str) -> u64 {
    id.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The runs the claims across specs still need: for each undecided one, the policies it
/// reads on each spec, up to the next planned look of the claim's spec (at most each spec's
/// cap).
pub(crate) fn plan_across(
    paper: &crate::Paper,
    results: &[SpecResult],
    cap: Cap,
) -> Result<Vec<PlanLine>, String> {
    let mut lines = Vec::new();
    for c in paper.claims.iter().chain(&paper.beyond_the_paper) {
        let (Some(check), Some(spec)) = (&c.check, c.spec.as_deref()) else {
            continue;
        };
        if !check.across_specs() {
            continue;
        }
        let Some(own) = results.iter().find(|r| r.spec.path == spec) else {
            continue;
        };
        let have = match decide(c, check, &own.spec, results)? {
            Outcome::NotRun => 0,
            o => match o.undecided() {
                Some(p) => p.have,
                None => continue,
            },
        };
        let Some(next) = looks_of(&own.spec).next(have) else {
            continue;
        };
        for read in c.reads() {
            let Some(r) = results.iter().find(|r| r.spec.path == read.spec) else {
                continue;
            };
            let Some(replications) = r.spec_replications else {
                continue;
            };
            let target = next.min(cap.of(&r.spec, replications));
            if target > have {
                lines.push(PlanLine::new(
                    read.spec,
                    Some(target),
                    read.policies.iter().map(|p| p.to_string()).collect(),
                ));
            }
        }
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Paper;
    use crate::values::MetricInfo;
    use crate::{Claim, GallerySpec};

    /// Per-run values of `spec`: per policy, per replication a row whose budget value is
    /// `finals[r]` and whose grid values are `finals[r] + grid` (so a read at the wrong place
    /// is off by `grid`).
    fn values(spec: &str, rows: &[(&str, Vec<f64>)], grid: f64) -> RunValues {
        let mut v = RunValues::new(spec, "fp");
        v.metrics.push(MetricInfo {
            name: crate::schema::DEFAULT_METRIC.into(),
            label: "log10 simple regret".into(),
            lower_is_better: true,
        });
        for (policy, finals) in rows {
            for (r, f) in finals.iter().enumerate() {
                let mut row = vec![Some(*f)];
                row.extend(std::iter::repeat_n(Some(f + grid), 41));
                v.rows
                    .insert((policy.to_string(), r, "default".into()), row);
            }
        }
        v
    }

    fn result(path: &str, seed: &str, paper_n: usize, values: Option<RunValues>) -> SpecResult {
        SpecResult {
            spec: GallerySpec {
                path: path.into(),
                paper_replications: paper_n,
                quick_replications: None,
                looks: Some(1),
                cpu_seconds_per_run: None,
                estimate_from: None,
            },
            name: path.into(),
            fingerprint: "fp".into(),
            dir: std::path::PathBuf::new(),
            report: None,
            study: None,
            runs_complete: 0,
            runs_total: 0,
            spec_replications: Some(paper_n),
            seed_name: Some(seed.into()),
            decision_seconds: Vec::new(),
            policy_cpu: Vec::new(),
            cpu_seconds: 0.0,
            wall_seconds: 0.0,
            kept: None,
            values,
            dropped: 0,
            values_changed: false,
            lacking: Vec::new(),
        }
    }

    fn claim(spec: &str, check: &str) -> Claim {
        let yaml =
            format!("{{ id: c, claim: c, quote: q, source: s, spec: {spec}, check: {check} }}");
        serde_saphyr::from_str(&yaml).expect("a claim")
    }

    fn evaluate(c: &Claim, results: &[SpecResult]) -> Outcome {
        super::super::evaluate(c, results).expect("evaluates")
    }

    /// Alternating ±`spread` around `mean`, `n` values.
    fn around(mean: f64, spread: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| mean + if i % 2 == 0 { spread } else { -spread })
            .collect()
    }

    #[test]
    fn better_across_reads_the_other_spec_at_its_share_and_pairs_replications() {
        // The half-budget runs end at 1 (± 0.1); the full-budget runs end at 0 but read 2 at
        // half their budget: an advantage of 1 at the share, −1 had the budget been read.
        let half = values("h.yaml", &[("P", around(1.0, 0.1, 8))], 0.0);
        let full = values("f.yaml", &[("P", vec![0.0; 8])], 2.0);
        let results = [
            result("h.yaml", "full", 8, Some(half)),
            result("f.yaml", "full", 8, Some(full)),
        ];
        let c = claim(
            "h.yaml",
            "{ type: better_across, policy: P, than: { spec: f.yaml, policy: P, at: 0.5 } }",
        );
        let o = evaluate(&c, &results);
        assert_eq!(o.kind(), super::super::Kind::Holds);
        let row = super::super::row(&c, &o);
        assert!(
            row.contains("| 8 / 8 | vs P of f.yaml at 0.5 of its budget: +1.000 [0.9106, 1.089] |"),
            "{row}"
        );
        let Outcome::Paired(p) = &o else { panic!() };
        assert!(
            p.describe.contains("share their replications' seeds"),
            "{}",
            p.describe
        );
        // Within ±1.5 of each other: comparable; ±0.5 is exceeded, but on the side that favours
        // the claim's policy, which leaves "comparable" undecided rather than refuted.
        let comparable = |m: f64| {
            let c = claim(
                "h.yaml",
                &format!(
                    "{{ type: comparable_across, policy: P, to: {{ spec: f.yaml, policy: P, at: 0.5 }}, margin: {m} }}"
                ),
            );
            evaluate(&c, &results).kind()
        };
        assert_eq!(comparable(1.5), super::super::Kind::Holds);
        assert_eq!(comparable(0.5), super::super::Kind::Inconclusive);
    }

    #[test]
    fn not_worse_across_reads_the_claims_policy_at_its_own_share_within_one_spec() {
        // K ends at 0 but reads 0.3 (± 0.01) at a quarter of the budget; O ends at 0.25. Read
        // at the quarter, K is 0.05 worse: not worse within a margin of 0.1, worse by more
        // than a margin of 0.01. Read at the budget (no `at`), K would be 0.25 ahead.
        let mut v = values("s.yaml", &[("O", vec![0.25; 8])], 0.0);
        for (r, k) in around(0.3, 0.01, 8).into_iter().enumerate() {
            let mut row = vec![Some(0.0)];
            row.extend(std::iter::repeat_n(Some(k), 41));
            v.rows.insert(("K".into(), r, "default".into()), row);
        }
        let results = [result("s.yaml", "s", 8, Some(v))];
        let check = |at: &str, margin: f64| {
            let c = claim(
                "s.yaml",
                &format!(
                    "{{ type: not_worse_across, policy: K, {at}than: {{ spec: s.yaml, policy: O, at: 1.0 }}, margin: {margin} }}"
                ),
            );
            evaluate(&c, &results)
        };
        let mean = |o: &Outcome| {
            let Outcome::Paired(p) = o else { panic!() };
            p.decision.compared[0].mean
        };
        let o = check("at: 0.25, ", 0.1);
        assert_eq!(o.kind(), super::super::Kind::Holds);
        assert!((mean(&o) + 0.05).abs() < 1e-12, "{}", mean(&o));
        let Outcome::Paired(p) = &o else { panic!() };
        assert!(
            p.describe.contains("every policy of the spec"),
            "{}",
            p.describe
        );
        let worse = check("at: 0.25, ", 0.01);
        assert_eq!(worse.kind(), super::super::Kind::DoesNotHold);
        assert_eq!(
            mean(&check("", 0.01)),
            0.25,
            "read at the budget without `at`"
        );
    }

    #[test]
    fn a_side_without_runs_is_not_run_yet() {
        let half = values("h.yaml", &[("P", vec![1.0; 8])], 0.0);
        let results = [
            result("h.yaml", "full", 8, Some(half)),
            result("f.yaml", "full", 8, None),
        ];
        let c = claim(
            "h.yaml",
            "{ type: better_across, policy: P, than: { spec: f.yaml, policy: P, at: 0.5 } }",
        );
        assert!(matches!(evaluate(&c, &results), Outcome::NotRun));
    }

    /// Three specs seeded apart: an advantage of 3, 2 and 1 (± noise) shrinks at each step,
    /// compared by Welch's interval; reversed, it does not hold.
    #[test]
    fn an_advantage_that_shrinks_between_unpaired_specs_holds() {
        let spec = |name: &str, adv: f64| {
            let v = values(
                name,
                &[
                    ("A", around(0.0, 0.05, 10)),
                    ("B", around(adv, 0.05, 10).into_iter().rev().collect()),
                ],
                0.0,
            );
            result(name, name, 10, Some(v))
        };
        let check = "{ type: advantage_shrinks, policies: [A], over: [B], then: [m.yaml, e.yaml] }";
        let results = [
            spec("c.yaml", 3.0),
            spec("m.yaml", 2.0),
            spec("e.yaml", 1.0),
        ];
        let o = evaluate(&claim("c.yaml", check), &results);
        assert_eq!(o.kind(), super::super::Kind::Holds);
        let Outcome::Paired(p) = &o else { panic!() };
        assert!(p.describe.contains("Welch t interval"), "{}", p.describe);
        assert_eq!(
            p.decision.compared[0].against,
            "advantage in c.yaml less in m.yaml"
        );
        assert!((p.decision.compared[0].mean - 1.0).abs() < 1e-12);
        let reversed = [
            spec("c.yaml", 1.0),
            spec("m.yaml", 2.0),
            spec("e.yaml", 3.0),
        ];
        let o = evaluate(&claim("c.yaml", check), &reversed);
        assert_eq!(o.kind(), super::super::Kind::DoesNotHold);
    }

    /// Two groups of three levels: level "c" lowest in both settings of each group.
    fn tally_results(lowest_c: bool) -> Vec<SpecResult> {
        let mut out = Vec::new();
        for g in ["g", "h"] {
            for (level, base) in [
                ("a", 2.0),
                ("b", 3.0),
                ("c", if lowest_c { 1.0 } else { 4.0 }),
            ] {
                let name = format!("{g}-{level}.yaml");
                let v = values(
                    &name,
                    &[("P", around(base, 0.1, 10)), ("Q", around(base, 0.1, 10))],
                    0.0,
                );
                out.push(result(&name, &name, 10, Some(v)));
            }
        }
        out
    }

    const SETTINGS: &str = "levels: [a, b, c], settings: [{ name: g, specs: [g-a.yaml, g-b.yaml, g-c.yaml], policies: [P, Q] }, { name: h, specs: [h-a.yaml, h-b.yaml, h-c.yaml], policies: [P, Q] }]";

    #[test]
    fn the_level_lowest_in_every_setting_is_lowest_most_often() {
        let c = claim(
            "g-a.yaml",
            &format!("{{ type: lowest_most_often, level: c, {SETTINGS} }}"),
        );
        let o = evaluate(&c, &tally_results(true));
        assert_eq!(o.kind(), super::super::Kind::Holds);
        let row = super::super::row(&c, &o);
        assert!(
            row.contains("vs a: +4.000 [4.000, 4.000]<br>vs b: +4.000 [4.000, 4.000]"),
            "{row}"
        );
        let Outcome::Paired(p) = &o else { panic!() };
        assert!(
            p.describe.contains("(counts at n = 10: a: 0, b: 0, c: 4)"),
            "{}",
            p.describe
        );
        // What remains to run is counted on the claim's own spec's policies.
        let own: Vec<(&str, usize)> = p.policies.iter().map(|(q, n)| (q.as_str(), *n)).collect();
        assert_eq!(own, [("P", 10), ("Q", 10)]);
        // Level a is lowest in every setting when c is worst: c's claim does not hold.
        let o = evaluate(&c, &tally_results(false));
        assert_eq!(o.kind(), super::super::Kind::DoesNotHold);
    }

    #[test]
    fn some_setting_reads_each_direction_and_both() {
        let shows = |what: &str, results: &[SpecResult]| {
            let c = claim(
                "g-a.yaml",
                &format!("{{ type: some_setting, shows: {what}, {SETTINGS} }}"),
            );
            evaluate(&c, results).kind()
        };
        use super::super::Kind;
        // c is best: a later level beats an earlier one (and a beats b: an earlier one too).
        assert_eq!(
            shows("later_level_better", &tally_results(true)),
            Kind::Holds
        );
        assert_eq!(
            shows("earlier_level_better", &tally_results(true)),
            Kind::Holds
        );
        assert_eq!(shows("both", &tally_results(true)), Kind::Holds);
        // Levels ordered best to worst (c worst, b worse than a): no later level is better.
        assert_eq!(
            shows("later_level_better", &tally_results(false)),
            Kind::DoesNotHold
        );
        assert_eq!(shows("both", &tally_results(false)), Kind::DoesNotHold);
    }

    #[test]
    fn the_plan_runs_the_policies_of_both_specs() {
        let paper: Paper = serde_saphyr::from_str(
            "id: '9'\ntitle: t\nseed: s\npage: p.md\nspecs: []\nclaims:\n  - { id: c, claim: c, quote: q, source: s, spec: h.yaml, check: { type: better_across, policy: P, than: { spec: f.yaml, policy: R, at: 0.5 } } }\n",
        )
        .unwrap();
        let results = [
            result("h.yaml", "f", 8, None),
            result("f.yaml", "f", 8, None),
        ];
        let lines = plan_across(&paper, &results, Cap::default()).unwrap();
        let got: Vec<String> = lines.iter().map(PlanLine::line).collect();
        assert_eq!(
            got,
            [
                "h.yaml --replications 8 --only P",
                "f.yaml --replications 8 --only R"
            ]
        );
    }
}
