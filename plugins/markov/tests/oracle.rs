//! Oracles for the dynamic program: an independent brute-force dynamic program over full
//! histories (no decomposition), Monte Carlo of the policies, and cross-checks between the
//! 3-D and 4-D states.

use cabo_markov::sim::PolicyRule;
use cabo_markov::{Grid, History, Prior, Reward, Setup, Solution, SolveOptions};

fn setup(prior: Prior, x_levels: usize, y_levels: usize, half: f64, cost: f64) -> Setup {
    Setup {
        prior,
        reward: Reward::Indicator { threshold: 0.0 },
        grid: Grid {
            length: 1.0,
            x_levels,
            y_min: -half,
            y_max: half,
            y_levels,
        },
        cost,
    }
}

/// Brute-force value of the start history by recursion over *full* histories: the state is
/// the level (or "unsampled") of every interior grid point, memoised densely. It uses the
/// solved reward table for `R` of a history (summing intervals, which is eq. 2.4 by the
/// Markov property) and `Kernel::row` for the law of a new observation given its neighbours,
/// but never Theorem 1's decomposition of the value.
struct Brute<'a> {
    sol: &'a Solution,
    m: usize,
    n: usize,
    memo: Vec<f64>,
    row: Vec<f64>,
}

impl<'a> Brute<'a> {
    fn new(sol: &'a Solution) -> Self {
        let g = &sol.setup().grid;
        let (m, n) = (g.x_levels, g.y_levels);
        let states = (n + 1).pow((m - 2) as u32);
        Brute {
            sol,
            m,
            n,
            memo: vec![f64::NAN; states],
            row: vec![0.0; n],
        }
    }

    fn code(&self, levels: &[Option<usize>]) -> usize {
        levels[1..self.m - 1]
            .iter()
            .fold(0, |acc, l| acc * (self.n + 1) + l.map_or(0, |v| v + 1))
    }

    fn value(&mut self, levels: &mut Vec<Option<usize>>) -> f64 {
        let key = self.code(levels);
        if !self.memo[key].is_nan() {
            return self.memo[key];
        }
        let known: Vec<(usize, usize)> = levels
            .iter()
            .enumerate()
            .filter_map(|(x, l)| l.map(|v| (x, v)))
            .collect();
        let stop: f64 = known
            .windows(2)
            .map(|w| self.sol.reward(w[0].0, w[1].0, w[0].1, w[1].1))
            .sum();
        let mut best = stop;
        for x in 1..self.m - 1 {
            if levels[x].is_some() {
                continue;
            }
            let pos = known.partition_point(|p| p.0 < x);
            let ((a, la), (b, lb)) = (known[pos - 1], known[pos]);
            self.sol
                .kernel()
                .row(a, b - a, x - a, la, lb, &mut self.row);
            let probs = self.row.clone();
            let mut ev = 0.0;
            for (w, p) in probs.iter().enumerate() {
                if *p == 0.0 {
                    continue;
                }
                levels[x] = Some(w);
                ev += p * self.value(levels);
            }
            levels[x] = None;
            let cont = ev - self.sol.setup().cost;
            if cont > best {
                best = cont;
            }
        }
        self.memo[key] = best;
        best
    }

    fn start(&mut self, a: usize, b: usize) -> f64 {
        let mut levels = vec![None; self.m];
        levels[0] = Some(a);
        levels[self.m - 1] = Some(b);
        self.value(&mut levels)
    }
}

fn check_against_brute(s: &Setup, opts: SolveOptions, starts: &[(usize, usize)]) {
    let sol = Solution::solve(s, &opts).unwrap();
    let m = s.grid.x_levels;
    for &(a, b) in starts {
        let mut brute = Brute::new(&sol);
        let bv = brute.start(a, b);
        let dv = sol.value(0, m - 1, a, b);
        assert!(
            (bv - dv).abs() <= 1e-12,
            "{:?} start ({a},{b}): DP {dv} vs brute force {bv} (diff {:e})",
            s.prior,
            (bv - dv).abs()
        );
        // The policy must actually sample for the test to exercise the recursion.
        assert!(dv > sol.reward(0, m - 1, a, b) + 1e-6, "trivial instance");
    }
}

#[test]
fn brownian_dp_equals_brute_force_over_full_histories() {
    // 7 x-points × 21 levels: 22^5 ≈ 5.2e6 full histories (9 × 21 would be 22^7 ≈ 2.5e9).
    let s = setup(Prior::Brownian { scale: 1.0 }, 7, 21, 2.5, 0.005);
    check_against_brute(&s, SolveOptions::default(), &[(10, 10), (12, 7)]);
    // 9 x-points × 7 levels: 8^7 ≈ 2.1e6 full histories.
    let s = setup(Prior::Brownian { scale: 1.0 }, 9, 7, 1.5, 0.003);
    check_against_brute(&s, SolveOptions::default(), &[(3, 3), (2, 4)]);
}

#[test]
fn compound_poisson_dp_equals_brute_force() {
    let s = setup(
        Prior::CompoundPoisson {
            rate: 20.0,
            jump_sd: 1.0,
        },
        6,
        21,
        6.0,
        0.003,
    );
    check_against_brute(&s, SolveOptions::default(), &[(10, 10), (8, 13)]);
}

#[test]
fn four_dimensional_state_equals_brute_force_without_invariance() {
    let s = setup(
        Prior::TimeChangedBrownian {
            scale: 1.0,
            exponent: 2.0,
        },
        6,
        15,
        2.0,
        0.003,
    );
    let sol = Solution::solve(&s, &SolveOptions::default()).unwrap();
    assert_eq!(sol.stats().state_dims, 4);
    check_against_brute(&s, SolveOptions::default(), &[(7, 7), (5, 9)]);
}

#[test]
fn four_dimensional_state_reproduces_the_invariant_one() {
    for prior in [
        Prior::Brownian { scale: 0.7 },
        Prior::CompoundPoisson {
            rate: 5.0,
            jump_sd: 1.0,
        },
    ] {
        let s = setup(prior, 9, 13, 2.0, 0.004);
        let three = Solution::solve(&s, &SolveOptions::default()).unwrap();
        let four = Solution::solve(
            &s,
            &SolveOptions {
                one_step: true,
                force_full_state: true,
            },
        )
        .unwrap();
        assert_eq!(four.stats().state_dims, 4);
        for i in 0..8 {
            for j in i + 1..9 {
                for a in [0, 4, 6, 12] {
                    for b in [1, 6, 9] {
                        let (x, y) = (three.value(0, j - i, a, b), four.value(i, j, a, b));
                        assert!((x - y).abs() < 1e-12, "[{i},{j}] ({a},{b}): {x} vs {y}");
                    }
                }
            }
        }
    }
}

#[test]
fn simulated_optimal_policy_matches_value_and_one_step_is_worse() {
    let s = setup(Prior::Brownian { scale: 1.0 }, 9, 21, 2.5, 0.01);
    let sol = Solution::solve(&s, &SolveOptions::default()).unwrap();
    let v = sol.initial_value(0.0, 0.0).unwrap();
    let opt = sol
        .monte_carlo(PolicyRule::Optimal, 0.0, 0.0, 100_000, 11)
        .unwrap();
    assert!(
        (opt.mean_value - v).abs() < 3.0 * opt.se_value,
        "optimal policy simulated {} ± {} vs V = {v}",
        opt.mean_value,
        opt.se_value
    );
    let one = sol
        .monte_carlo(PolicyRule::OneStep, 0.0, 0.0, 100_000, 11)
        .unwrap();
    assert!(one.mean_value <= v + 3.0 * one.se_value);
    // The paper's claim (≥ 98% of optimal) on this coarse grid.
    assert!(one.mean_value / v >= 0.98, "ratio {}", one.mean_value / v);
}

#[test]
fn monte_carlo_is_identical_across_thread_counts() {
    let s = setup(
        Prior::CompoundPoisson {
            rate: 20.0,
            jump_sd: 1.0,
        },
        9,
        21,
        6.0,
        0.01,
    );
    let sol = Solution::solve(&s, &SolveOptions::default()).unwrap();
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                sol.monte_carlo(PolicyRule::Optimal, 0.0, 0.0, 3000, 5)
                    .unwrap()
            })
    };
    assert_eq!(run(1), run(3));
    let solve = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| Solution::solve(&s, &SolveOptions::default()).unwrap())
    };
    let (a, b) = (solve(1), solve(2));
    for j in 1..9 {
        for l in 0..21 {
            assert_eq!(
                a.value(0, j, l, 20 - l).to_bits(),
                b.value(0, j, l, 20 - l).to_bits()
            );
        }
    }
}

#[test]
fn history_value_decomposes_and_decisions_are_valid() {
    let s = setup(Prior::Brownian { scale: 1.0 }, 9, 21, 2.5, 0.01);
    let sol = Solution::solve(&s, &SolveOptions::default()).unwrap();
    let mut h = History::new(9, 10, 10);
    let first = sol.decide(PolicyRule::Optimal, &h, 0).unwrap();
    // Sampling is worth its cost here, and the chosen point attains V (= E[V(H ∪ x')] − c).
    assert!(first.is_some());
    assert_eq!(sol.continuation(0, 8, 10, 10), sol.value(0, 8, 10, 10));
    assert!(sol.value(0, 8, 10, 10) > sol.reward(0, 8, 10, 10));
    h.insert(4, 14);
    let v = sol.history_value(&h);
    assert!((v - sol.value(0, 4, 10, 14) - sol.value(4, 8, 14, 10)).abs() < 1e-15);
    let bad = History::new(5, 0, 0);
    assert!(sol.decide(PolicyRule::Optimal, &bad, 0).is_err());
}

#[test]
fn truncated_linear_rewards_dp_equals_brute_force() {
    let mut s = setup(Prior::Brownian { scale: 1.0 }, 6, 15, 2.0, 0.004);
    s.reward = Reward::TruncatedLinear {
        threshold: 0.2,
        clip: 1.0,
    };
    check_against_brute(&s, SolveOptions::default(), &[(7, 7), (3, 10)]);
}
