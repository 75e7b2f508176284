//! Seed 001's Theorem 1 as a study (`bmsei_theorem1`): the approximation ratios of EI-PUC
//! and EI are unbounded. For each ε of a grid it builds the proof's two instances (App. A)
//! and measures, in three independent ways:
//!
//! - **exactly**: a policy that measures only cheap arms is worth `E[max(0, y₁…y_N)]`, the
//!   integral `s ∫₀^∞ (1 − Φ(z)^N) dz` for cheap arms `N(0, s²)`; measuring the expensive arm
//!   once is worth `E[Z⁺] = φ(0)`. Every policy is one of the two (after a cheap arm the
//!   expensive one no longer fits the budget), so `V*` is the larger;
//! - **by simulation**: EI-PUC and EI are run as decision rules on the instance, each step
//!   ranking the unmeasured affordable arms by cabo's closed-form EI (per unit cost), over
//!   many seeded replications. They must land on the exact values within their standard
//!   errors, which checks both the integral and the proof's account of what the rules do;
//! - **the proof's bounds**: `V(EI-PUC) ≤ ε√(2 ln((1 + δ + ε)/ε))` in part 1 and
//!   `V* ≥ (1 − ε)√(a ln((1 + δ)/ε − 1))`, `a = (π ln 2)⁻¹`, in part 2, so the ratio is at
//!   least the bound's.
//!
//! It also solves two-step B-MS-EI's scenario tree exactly on each instance (three cheap arms
//! and the expensive one suffice for two steps) and reports its first decision.

use crate::arms::{IndependentArms, KnownArmCosts};
use crate::tree::{BaseSamples, NodeValue, Tree, TreeObjective};
use cabo_core::study::{Cell, Figure, Series, SeriesPoint, StudyContext, StudyOutput, Table};
use cabo_core::{Error, Result, Rng, StudySpec, derive_seed, normal};
use cabo_toolkit::numerics::ei;
use serde::{Deserialize, Serialize};

/// Spec of the Theorem 1 study; defaults are the grid of `specs/bmsei/theorem1.yaml`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Theorem1StudySpec {
    /// δ > 0: the expensive arm costs 1 + δ, which is also the budget.
    #[serde(default = "default_delta")]
    pub delta: f64,
    /// The ε grid, each in (0, 1): cheap arms cost ε.
    #[serde(default = "default_epsilons")]
    pub epsilons: Vec<f64>,
    /// Simulated replications per rule and instance.
    #[serde(default = "default_runs")]
    pub runs: usize,
    /// Fantasies of the two-step scenario tree.
    #[serde(default = "default_fantasies")]
    pub fantasies: usize,
}

fn default_delta() -> f64 {
    0.5
}
fn default_epsilons() -> Vec<f64> {
    vec![0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001]
}
fn default_runs() -> usize {
    20_000
}
fn default_fantasies() -> usize {
    64
}

/// Cheap arms are not enumerated past this many (the integral and the simulation need only N).
const MAX_CHEAP_ARMS: f64 = 1e6;

#[cabo_core::plugin(
    name = "bmsei_theorem1",
    summary = "Theorem 1: EI-PUC's and EI's approximation ratios on the proof's instances, exact, simulated and bounded, and two-step B-MS-EI's first decision",
    paper = "001_ffe8b93f5b7c8c43 Theorem 1, App. A",
    example = "{ type: bmsei_theorem1, delta: 0.5, epsilons: [0.1, 0.01], runs: 2000 }"
)]
impl StudySpec for Theorem1StudySpec {
    fn validate(&self) -> Result<()> {
        if !(self.delta.is_finite() && self.delta > 0.0) {
            return Err(Error::invalid(format!(
                "delta: must be positive and finite, got {}",
                self.delta
            )));
        }
        if self.epsilons.is_empty() {
            return Err(Error::invalid("epsilons: name at least one ε"));
        }
        for &e in &self.epsilons {
            if !(e.is_finite() && e > 0.0 && e < 1.0) {
                return Err(Error::invalid(format!(
                    "epsilons: every ε must lie in (0, 1), got {e}"
                )));
            }
            if (1.0 + self.delta) / e > MAX_CHEAP_ARMS {
                return Err(Error::invalid(format!(
                    "epsilons: ε = {e} makes (1 + δ)/ε more than 10⁶ cheap arms"
                )));
            }
        }
        // At least 2 simulated replications for a standard error; each replication plays
        // every arm with `fantasies` samples, so both bound the study's time.
        cabo_core::check_count("runs", self.runs, 2..=10_000_000)?;
        cabo_core::check_count("fantasies", self.fantasies, 1..=65_536)?;
        Ok(())
    }

    fn run(&self, ctx: &StudyContext) -> Result<StudyOutput> {
        let rows = self
            .epsilons
            .iter()
            .enumerate()
            .map(|(i, &eps)| self.row(eps, derive_seed(&[&ctx.seed, &(i as u64)])))
            .collect::<Result<Vec<_>>>()?;
        Ok(output(self.delta, &rows))
    }
}

/// A decision rule of the proof: rank arms by EI, or by EI per unit cost.
#[derive(Debug, Clone, Copy)]
enum Rule {
    Ei,
    EiPerCost,
}

/// A mean and its standard error.
#[derive(Debug, Clone, Copy)]
struct Estimate {
    mean: f64,
    se: f64,
}

/// One instance of the proof: `cheap_arms` arms `N(0, cheap_sd²)` of cost ε, one `N(0, 1)` arm
/// of cost 1 + δ, budget 1 + δ, the status quo f(0) = 0 measured.
#[derive(Debug, Clone, Copy)]
struct Instance {
    eps: f64,
    delta: f64,
    cheap_sd: f64,
    cheap_arms: usize,
}

impl Instance {
    fn budget(&self) -> f64 {
        1.0 + self.delta
    }

    /// How many cheap arms the budget pays for (N = ⌊(1 + δ)/ε⌋, robust to rounding).
    fn affordable(&self) -> usize {
        (((self.budget() / self.eps) + 1e-9).floor() as usize).min(self.cheap_arms)
    }

    /// The value of measuring cheap arms only: E[max(0, y₁…y_N)], exactly.
    fn cheap_only_value(&self) -> f64 {
        let n = self.affordable() as i32;
        self.cheap_sd * simpson(0.0, 10.0, 4000, |z| 1.0 - normal::cdf(z).powi(n))
    }

    /// One replication of `rule` run on the instance: the best value found.
    fn simulate(&self, rule: Rule, rng: &mut Rng) -> f64 {
        let expensive = self.budget();
        let score = |sd: f64, cost: f64, best: f64| match rule {
            Rule::Ei => ei(0.0, sd, best),
            Rule::EiPerCost => ei(0.0, sd, best) / cost,
        };
        let fits = |cost: f64, left: f64| cost <= left + 1e-12;
        let (mut left, mut best) = (self.budget(), 0.0f64);
        let (mut cheap_open, mut expensive_open) = (self.cheap_arms, true);
        loop {
            // Measured arms have EI 0 without noise; unmeasured cheap arms are exchangeable.
            let cheap = (cheap_open > 0 && fits(self.eps, left))
                .then(|| score(self.cheap_sd, self.eps, best));
            let high =
                (expensive_open && fits(expensive, left)).then(|| score(1.0, expensive, best));
            let take_high = match (cheap, high) {
                (None, None) => return best,
                (Some(c), Some(h)) => h > c,
                (None, Some(_)) => true,
                (Some(_), None) => false,
            };
            let (sd, cost) = if take_high {
                expensive_open = false;
                (1.0, expensive)
            } else {
                cheap_open -= 1;
                (self.cheap_sd, self.eps)
            };
            best = best.max(sd * rng.normal());
            left -= cost;
        }
    }

    fn estimate(&self, rule: Rule, runs: usize, seed: u64) -> Estimate {
        let values: Vec<f64> = (0..runs)
            .map(|r| self.simulate(rule, &mut Rng::new(derive_seed(&[&seed, &(r as u64)]))))
            .collect();
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
        Estimate {
            mean,
            se: (var / n).sqrt(),
        }
    }

    /// Two-step B-MS-EI's first decision, solved exactly on three cheap arms and the
    /// expensive one: (`"expensive"` or `"cheap"`, the tree's value).
    fn tree_choice(&self, fantasies: usize) -> Result<(&'static str, f64)> {
        let cheap = self.cheap_arms.min(3);
        let mut sd = vec![self.cheap_sd; cheap];
        let mut cost = vec![self.eps; cheap];
        sd.push(1.0);
        cost.push(self.budget());
        let arms = IndependentArms::new(vec![0.0; cheap + 1], sd);
        let costs = KnownArmCosts::new(&cost);
        let tree = Tree::new(1, &[fantasies], BaseSamples::Quantiles)?;
        let objective = TreeObjective::new(
            &tree,
            &arms,
            &costs,
            0.0,
            self.budget(),
            NodeValue::BudgetedEi,
        )?;
        let (value, arm) = objective.solve_finite(&arms.points())?;
        Ok((if arm == cheap { "expensive" } else { "cheap" }, value))
    }
}

/// Everything measured at one ε.
struct Row {
    eps: f64,
    n: usize,
    /// Part 1 (cheap arms N(0, ε²)).
    puc_exact: f64,
    puc_simulated: Estimate,
    part1_opt: f64,
    part1_bound: f64,
    part1_tree: (&'static str, f64),
    /// Part 2 (cheap arms N(0, (1 − ε)²)).
    ei_simulated: Estimate,
    cheap_exact: f64,
    cheap_simulated: Estimate,
    part2_opt: f64,
    part2_bound: f64,
    part2_tree: (&'static str, f64),
}

impl Row {
    fn part1_ratio(&self) -> f64 {
        self.part1_opt / self.puc_exact
    }
    fn part2_ratio(&self) -> f64 {
        self.part2_opt / expected_positive_part()
    }
}

/// E[Z⁺] = φ(0): the value of measuring the expensive N(0, 1) arm once.
fn expected_positive_part() -> f64 {
    normal::pdf(0.0)
}

impl Theorem1StudySpec {
    fn row(&self, eps: f64, seed: u64) -> Result<Row> {
        let cheap_arms = ((1.0 + self.delta) / eps).ceil() as usize;
        let part1 = Instance {
            eps,
            delta: self.delta,
            cheap_sd: eps,
            cheap_arms,
        };
        let part2 = Instance {
            cheap_sd: 1.0 - eps,
            ..part1
        };
        let ez = expected_positive_part();
        let puc_exact = part1.cheap_only_value();
        let cheap_exact = part2.cheap_only_value();
        let seed_of = |k: u64| derive_seed(&[&seed, &k]);
        let a = 1.0 / (std::f64::consts::PI * std::f64::consts::LN_2);
        Ok(Row {
            eps,
            n: part1.affordable(),
            puc_exact,
            puc_simulated: part1.estimate(Rule::EiPerCost, self.runs, seed_of(1)),
            part1_opt: ez.max(puc_exact),
            part1_bound: ez / (eps * (2.0 * ((1.0 + self.delta + eps) / eps).ln()).sqrt()),
            part1_tree: part1.tree_choice(self.fantasies)?,
            ei_simulated: part2.estimate(Rule::Ei, self.runs, seed_of(2)),
            cheap_exact,
            cheap_simulated: part2.estimate(Rule::EiPerCost, self.runs, seed_of(3)),
            part2_opt: ez.max(cheap_exact),
            part2_bound: (1.0 - eps) * (a * ((1.0 + self.delta) / eps - 1.0).max(1.0).ln()).sqrt()
                / ez,
            part2_tree: part2.tree_choice(self.fantasies)?,
        })
    }
}

fn simpson(a: f64, b: f64, n: usize, f: impl Fn(f64) -> f64) -> f64 {
    let h = (b - a) / n as f64;
    let inner: f64 = (1..n)
        .map(|i| f(a + i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 })
        .sum();
    (f(a) + f(b) + inner) * h / 3.0
}

/// The study's output: the figure, a table per part of the theorem, and the findings.
fn output(delta: f64, rows: &[Row]) -> StudyOutput {
    StudyOutput {
        figures: vec![figure(rows)],
        tables: vec![part1_table(delta, rows), part2_table(rows)],
        findings: findings(rows),
        data: serde_json::Value::Null,
        measurements: Vec::new(),
    }
}

/// Part 1 of the theorem, one row per ε: EI-PUC's value exactly and simulated, the optimum,
/// their ratio against the proof's lower bound, and B-MS-EI's choice.
fn part1_table(delta: f64, rows: &[Row]) -> Table {
    Table {
        name: "theorem1-ei-puc".into(),
        title: format!(
            "Part 1: cheap arms N(0, ε²) of cost ε, one N(0, 1) arm of cost 1 + δ = {}",
            1.0 + delta
        ),
        columns: columns(&[
            "epsilon",
            "N",
            "V(EI-PUC) exact",
            "V(EI-PUC) simulated",
            "s.e.",
            "V*",
            "V*/V(EI-PUC)",
            "proof's lower bound",
            "B-MS-EI first arm",
            "B-MS-EI value",
        ]),
        rows: rows
            .iter()
            .map(|r| {
                vec![
                    r.eps.into(),
                    Cell::from(r.n.to_string().as_str()),
                    r.puc_exact.into(),
                    r.puc_simulated.mean.into(),
                    r.puc_simulated.se.into(),
                    r.part1_opt.into(),
                    r.part1_ratio().into(),
                    r.part1_bound.into(),
                    Cell::from(r.part1_tree.0),
                    r.part1_tree.1.into(),
                ]
            })
            .collect(),
    }
}

/// Part 2 of the theorem, one row per ε: EI's value, the cheap arms' alone, the optimum,
/// the ratio against the proof's lower bound, and B-MS-EI's choice.
fn part2_table(rows: &[Row]) -> Table {
    let ez = expected_positive_part();
    Table {
        name: "theorem1-ei".into(),
        title: "Part 2: cheap arms N(0, (1 − ε)²) of cost ε, the same expensive arm".into(),
        columns: columns(&[
            "epsilon",
            "N",
            "V(EI) exact",
            "V(EI) simulated",
            "s.e. (EI)",
            "V(cheap only) exact",
            "V(cheap only) simulated",
            "s.e. (cheap)",
            "V*",
            "V*/V(EI)",
            "proof's lower bound",
            "B-MS-EI first arm",
            "B-MS-EI value",
        ]),
        rows: rows
            .iter()
            .map(|r| {
                vec![
                    r.eps.into(),
                    Cell::from(r.n.to_string().as_str()),
                    ez.into(),
                    r.ei_simulated.mean.into(),
                    r.ei_simulated.se.into(),
                    r.cheap_exact.into(),
                    r.cheap_simulated.mean.into(),
                    r.cheap_simulated.se.into(),
                    r.part2_opt.into(),
                    r.part2_ratio().into(),
                    r.part2_bound.into(),
                    Cell::from(r.part2_tree.0),
                    r.part2_tree.1.into(),
                ]
            })
            .collect(),
    }
}

fn columns(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

fn figure(rows: &[Row]) -> Figure {
    let line = |name: &str, y: &dyn Fn(&Row) -> f64| Series {
        name: name.into(),
        points: rows
            .iter()
            .rev()
            .map(|r| SeriesPoint {
                x: r.eps,
                y: y(r),
                low: None,
                high: None,
            })
            .collect(),
    };
    Figure {
        name: "theorem1-ratio".into(),
        title: "Theorem 1: V* over the policy's value as the cheap arms' cost ε falls".into(),
        x_label: "ε (log scale)".into(),
        y_label: "approximation ratio".into(),
        log_x: true,
        series: vec![
            line("V*/V(EI-PUC), part 1", &Row::part1_ratio),
            line("proof's lower bound, part 1", &|r| r.part1_bound),
            line("V*/V(EI), part 2", &Row::part2_ratio),
            line("proof's lower bound, part 2", &|r| r.part2_bound),
        ],
    }
}

/// Whether a simulated estimate agrees with an exact value within three standard errors.
fn agrees(sim: Estimate, exact: f64) -> bool {
    (sim.mean - exact).abs() <= 3.0 * sim.se.max(1e-15)
}

fn findings(rows: &[Row]) -> Vec<String> {
    let ez = expected_positive_part();
    let last = rows
        .iter()
        .min_by(|a, b| a.eps.total_cmp(&b.eps))
        .expect("validated: at least one ε");
    let sims_agree = rows.iter().all(|r| {
        agrees(r.puc_simulated, r.puc_exact)
            && agrees(r.ei_simulated, ez)
            && agrees(r.cheap_simulated, r.cheap_exact)
    });
    let above = |ratio: fn(&Row) -> f64, bound: fn(&Row) -> f64| {
        rows.iter().filter(|r| ratio(r) >= bound(r)).count()
    };
    let tree = |part: fn(&Row) -> (&'static str, f64), arm: &str| {
        rows.iter().filter(|r| part(r).0 == arm).count()
    };
    vec![
        format!(
            "Part 1: at ε = {} EI-PUC is worth {:.3e} against V* = {:.4}, a ratio of {:.1}; the \
             ratio is at least the proof's lower bound at {} of {} ε.",
            last.eps,
            last.puc_exact,
            last.part1_opt,
            last.part1_ratio(),
            above(Row::part1_ratio, |r| r.part1_bound),
            rows.len()
        ),
        format!(
            "Part 2: at ε = {} EI is worth E[Z⁺] = {ez:.4} against V* = {:.4}, a ratio of {:.2}; \
             the ratio is at least the proof's lower bound at {} of {} ε.",
            last.eps,
            last.part2_opt,
            last.part2_ratio(),
            above(Row::part2_ratio, |r| r.part2_bound),
            rows.len()
        ),
        format!(
            "The simulated EI-PUC and EI rules {} the exact values within 3 standard errors at \
             every ε.",
            if sims_agree { "match" } else { "do NOT match" }
        ),
        format!(
            "Two-step B-MS-EI measures the expensive arm first in part 1 at {} of {} ε and a \
             cheap arm first in part 2 at {} of {} ε, avoiding the trap of each rule.",
            tree(|r| r.part1_tree, "expensive"),
            rows.len(),
            tree(|r| r.part2_tree, "cheap"),
            rows.len()
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instance(eps: f64, cheap_sd: f64) -> Instance {
        Instance {
            eps,
            delta: 0.5,
            cheap_sd,
            cheap_arms: (1.5 / eps).ceil() as usize,
        }
    }

    /// With one cheap arm affordable the value is E[max(0, sZ)] = s·φ(0).
    #[test]
    fn one_affordable_arm_is_worth_its_positive_part() {
        let i = Instance {
            eps: 0.9,
            delta: 0.5,
            cheap_sd: 0.3,
            cheap_arms: 2,
        };
        assert_eq!(i.affordable(), 1);
        assert!((i.cheap_only_value() - 0.3 * normal::pdf(0.0)).abs() < 1e-12);
    }

    /// Two affordable N(0, 1) arms: E[max(0, Z₁, Z₂)] = ∫₀^∞ (1 − Φ)(1 + Φ) dz
    /// = φ(0) + ∫₀^∞ Φ(1 − Φ) dz = 1/√(2π) + 1/(2√π), since Φ(1 − Φ) is even and integrates
    /// to E[max(Z₁, Z₂)] = 1/√π over the line.
    #[test]
    fn the_integral_matches_the_closed_form_for_two_arms() {
        let i = Instance {
            eps: 0.7,
            delta: 0.5,
            cheap_sd: 1.0,
            cheap_arms: 3,
        };
        assert_eq!(i.affordable(), 2);
        let pi = std::f64::consts::PI;
        let exact = 1.0 / (2.0 * pi).sqrt() + 0.5 / pi.sqrt();
        assert!(
            (i.cheap_only_value() - exact).abs() < 1e-12,
            "{} vs {exact}",
            i.cheap_only_value()
        );
    }

    /// The rules do what the proof says: EI-PUC spends the budget on cheap arms, EI on the
    /// expensive one, and both agree with the exact values.
    #[test]
    fn simulated_rules_land_on_the_exact_values() {
        let part1 = instance(0.05, 0.05);
        let sim = part1.estimate(Rule::EiPerCost, 4000, 7);
        assert!(agrees(sim, part1.cheap_only_value()), "{sim:?}");
        let part2 = instance(0.05, 0.95);
        let sim = part2.estimate(Rule::Ei, 4000, 8);
        assert!(agrees(sim, normal::pdf(0.0)), "{sim:?}");
        let sim = part2.estimate(Rule::EiPerCost, 4000, 9);
        assert!(agrees(sim, part2.cheap_only_value()), "{sim:?}");
    }

    #[test]
    fn the_tree_avoids_both_traps() {
        assert_eq!(instance(0.05, 0.05).tree_choice(64).unwrap().0, "expensive");
        assert_eq!(instance(0.05, 0.95).tree_choice(64).unwrap().0, "cheap");
    }

    #[test]
    fn bad_parameters_are_rejected_in_plain_words() {
        let mut s = Theorem1StudySpec {
            delta: 0.5,
            epsilons: vec![1.5],
            runs: 100,
            fantasies: 8,
        };
        let e = s.validate().unwrap_err().to_string();
        assert!(e.contains("epsilons") && e.contains("(0, 1)"), "{e}");
        s.epsilons = vec![0.1];
        s.runs = 1;
        assert!(s.validate().unwrap_err().to_string().contains("runs"));
    }
}
