//! α-ETC against a literal transcription of seed 004's Alg. 1 that searches every control
//! set's expected UCB and every set's expected LCB in every round. The policy searches only
//! the full set for the LCB and skips sets already out of S₁; its decisions must match the
//! transcription's exactly, round after round, as the data grow: with a fixed α, and with α
//! halving and a floor below f.

use cabo_core::{
    Budget, BudgetState, BuildContext, Dataset, Decision, DecisionContext, Observation,
    OptimizerSettings, Outcome, Phase, Policy, PolicySpec, ProblemInfo, Query, derive_seed,
};
use cabo_cvs::ExpectedBounds;
use cabo_cvs::alpha_etc::{FULL_SET_WIDENING, cost_lcb, tolerant_set};
use cabo_gp::GpPosterior;

#[path = "common/seed004.rs"]
mod seed004;
use seed004::{DIM as D, MODERATE_COSTS as COSTS, control_sets as sets};

const SAMPLES: usize = 64;
const BUILD_SEED: u64 = 4;
const SETTINGS: OptimizerSettings = OptimizerSettings {
    raw_samples: 32,
    restarts: 2,
    max_iters: 30,
};

fn posterior(data: &Dataset) -> GpPosterior {
    let y: Vec<f64> = data.observations().iter().map(|o| o.outcome.y).collect();
    seed004::posterior(&data.x_matrix(), &y)
}

/// Alg. 1 as written: every bound of every set, every round.
struct Transcription {
    samples: Vec<f64>,
    alpha: f64,
    /// Halve α after every this many exploitation rounds.
    halving_every: Option<usize>,
    floor: f64,
    beta: f64,
    lcb_beta: f64,
    plays: Vec<usize>,
    cost_sums: Vec<f64>,
    ucb_bar: Vec<f64>,
    lcb_bar: f64,
    round: usize,
}

impl Transcription {
    /// The set and point to play, and S₁ when exploiting.
    fn decide(&mut self, post: &GpPosterior, seed: u64) -> (usize, Vec<f64>, Option<Vec<usize>>) {
        let sets = sets();
        let m = sets.len();
        let all: Vec<usize> = (0..m).collect();
        let bounds = ExpectedBounds::new(post, &self.samples).unwrap();
        let ucb_seed = derive_seed(&[&seed, &"alpha_etc ucb"]);
        let lcb_seed = derive_seed(&[&seed, &"alpha_etc lcb"]);
        let ucb = bounds
            .maximize_sets(&sets, &all, self.beta, &SETTINGS, ucb_seed)
            .unwrap();
        let lcb = bounds
            .maximize_sets(&sets, &all, -self.lcb_beta, &SETTINGS, lcb_seed)
            .unwrap();
        // The policy's full-set search, widened; it must bound every set's LCB.
        let wide = OptimizerSettings {
            raw_samples: SETTINGS.raw_samples * FULL_SET_WIDENING,
            restarts: SETTINGS.restarts * FULL_SET_WIDENING,
            ..SETTINGS
        };
        let full = bounds
            .maximize_sets(&sets, &[m - 1], -self.lcb_beta, &wide, lcb_seed)
            .unwrap();
        let best_lcb = full[0].value;
        // Up to the optimiser's convergence (L-BFGS-B stops within ~1e-6 of a maximum).
        let slack = 1e-6 * best_lcb.abs().max(1.0);
        for l in &lcb {
            assert!(
                l.value <= best_lcb + slack,
                "set {}: {} > {best_lcb}",
                l.set,
                l.value
            );
        }
        self.round += 1;
        if self.round <= m {
            let i = self.round - 1;
            self.ucb_bar[i] = self.ucb_bar[i].min(ucb[i].value);
            self.lcb_bar = self.lcb_bar.max(best_lcb);
            return (i, ucb[i].x.clone(), None);
        }
        self.lcb_bar = self.lcb_bar.max(best_lcb);
        for (b, u) in self.ucb_bar.iter_mut().zip(&ucb) {
            *b = b.min(u.value);
        }
        let exploited = self.round - m - 1;
        let alpha = match self.halving_every {
            Some(k) => self.alpha * 0.5f64.powi((exploited / k) as i32),
            None => self.alpha,
        };
        let mut s1 = tolerant_set(&self.ucb_bar, self.lcb_bar, alpha, self.floor);
        if s1.is_empty() {
            self.lcb_bar = best_lcb;
            self.ucb_bar = ucb.iter().map(|u| u.value).collect();
            s1 = tolerant_set(&self.ucb_bar, self.lcb_bar, alpha, self.floor);
        }
        let horizon = self.plays.iter().sum::<usize>() + 1;
        let clcb: Vec<f64> = (0..m)
            .map(|i| {
                cost_lcb(
                    self.cost_sums[i] / self.plays[i] as f64,
                    self.plays[i],
                    horizon,
                )
            })
            .collect();
        let cmin = s1.iter().map(|&i| clcb[i]).fold(f64::INFINITY, f64::min);
        let mut k = usize::MAX;
        for &i in s1.iter().filter(|&&i| clcb[i] == cmin) {
            if k == usize::MAX || ucb[i].value > ucb[k].value {
                k = i;
            }
        }
        (k, ucb[k].x.clone(), Some(s1))
    }
}

fn build_policy(info: &ProblemInfo, spec: &str) -> Box<dyn Policy> {
    let spec: Box<dyn PolicySpec> = serde_json::from_str(spec).unwrap();
    spec.build(&BuildContext {
        problem: info,
        seed: BUILD_SEED,
    })
    .unwrap()
}

#[test]
fn decisions_match_a_transcription_of_alg_1_that_searches_every_set() {
    match_transcription(0.1, None, None);
}

/// With α halving every 3 rounds (seed 004's schedule, faster) from a tolerance wide enough
/// to admit the sets missing a variable, measured from a floor below f as for an objective
/// with negative values: S₁ shrinks as α halves.
#[test]
fn decisions_match_the_transcription_with_a_halving_alpha_and_a_floor() {
    let sizes = match_transcription(0.8, Some(3), Some(-2.0));
    assert!(sizes.len() >= 2, "S₁ kept one size: {sizes:?}");
}

/// Runs α-ETC (τ = 1, then 20 exploitation rounds) against the transcription on the same
/// growing data and asserts identical decisions.
/// Returns the sizes S₁ took.
///
/// One function because the policy and the transcription must see the same data every
/// round: each round plays the policy's decision and records it in both (the data set, and
/// the transcription's plays and cost sums), and the next round's comparison reads what the
/// last one left. The set-up before the loop builds both from the same α, schedule and floor.
fn match_transcription(
    alpha: f64,
    halving_every: Option<usize>,
    floor: Option<f64>,
) -> std::collections::BTreeSet<usize> {
    let info = seed004::problem();
    let (beta, lcb_beta) = (2.0, 2.0);
    let mut extra = String::new();
    if let Some(k) = halving_every {
        extra += &format!(r#", "alpha_halving_every": {k}"#);
    }
    if let Some(f) = floor {
        extra += &format!(r#", "floor": {f}"#);
    }
    let mut policy = build_policy(
        &info,
        &format!(
            r#"{{"type": "alpha_etc", "tau": 1, "alpha": {alpha}, "beta": {beta}, "lcb_beta": {lcb_beta}, "mc_samples": {SAMPLES}{extra}}}"#
        ),
    );
    let m = sets().len();
    let mut oracle = Transcription {
        samples: seed004::distributions()
            .sample_matrix(SAMPLES, derive_seed(&[&BUILD_SEED, &"mc_samples"])),
        alpha,
        halving_every,
        floor: floor.unwrap_or(0.0),
        beta,
        lcb_beta,
        plays: vec![0; m],
        cost_sums: vec![0.0; m],
        ucb_bar: vec![f64::INFINITY; m],
        lcb_bar: f64::NEG_INFINITY,
        round: 0,
    };
    // A design that includes the peak (with varied dummies), so S₁ narrows to the two sets
    // holding {0, 1, 2} and the cost LCBs decide between them.
    let mut data = Dataset::new(D);
    for j in 0..12 {
        let x: Vec<f64> = (0..D)
            .map(|l| ((j * 7 + l * 3) % 12) as f64 / 11.0)
            .collect();
        let y = seed004::peak(&x);
        data.push(Observation::initial(x, y, 1.0)).unwrap();
    }
    for dummies in [[0.1, 0.5, 0.9], [0.9, 0.2, 0.4], [0.5, 0.8, 0.1]] {
        let x = [[0.78, 0.82, 0.8], dummies].concat();
        let y = seed004::peak(&x);
        data.push(Observation::initial(x, y, 1.0)).unwrap();
    }
    let budget = BudgetState::new(Budget {
        cost: Some(100.0),
        iterations: None,
    });
    let mut narrowest = m;
    let mut sizes = std::collections::BTreeSet::new();
    for round in 1..=m + 20 {
        let post = posterior(&data);
        let seed = 1000 + round as u64;
        let ctx = DecisionContext::new(&info, &data, &budget, round, seed, &SETTINGS)
            .with_posterior(Box::new(post.clone()));
        let Decision::Evaluate(query) = policy.decide(&ctx).unwrap() else {
            panic!("alpha_etc stopped");
        };
        let (k, x, s1) = oracle.decide(&post, seed);
        assert_eq!(query.control_set, Some(k), "round {round}");
        assert_eq!(query.x, x, "round {round}");
        let reported = policy.diagnostics().get("cvs.tolerant_sets").copied();
        assert_eq!(
            reported,
            s1.as_ref().map(|s| s.len() as f64),
            "round {round}"
        );
        if let Some(s1) = s1 {
            narrowest = narrowest.min(s1.len());
            sizes.insert(s1.len());
        }
        // Play it: the open variables at 0.5, the cost its mean plus a fixed jitter.
        let cost = COSTS[k] + 0.005 * ((round % 3) as f64 - 1.0);
        oracle.plays[k] += 1;
        oracle.cost_sums[k] += cost;
        let outcome = Outcome::new(seed004::peak(&query.x), cost, query.x.clone(), None);
        let seen = Observation {
            query: Query {
                control_set: Some(k),
                x: query.x.clone(),
            },
            outcome,
            phase: Phase::Policy,
        };
        data.push(seen.clone()).unwrap();
        policy.observe(&data, &seen).unwrap();
    }
    // Not vacuous: S₁ narrowed, so the policy skipped searches the transcription ran.
    assert!(
        narrowest < m / 2,
        "S₁ never narrowed below {narrowest} sets"
    );
    sizes
}
