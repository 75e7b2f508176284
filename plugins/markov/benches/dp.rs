//! The full dynamic program at 100 x-levels × 100 y-levels (Brownian motion and compound
//! Poisson μ = 20 on [0, 1], indicator rewards at 0), printing time and peak memory.

use cabo_markov::{Grid, Prior, Reward, Setup, Solution, SolveOptions};

fn main() {
    for (name, prior, half) in [
        ("brownian", Prior::Brownian { scale: 1.0 }, 2.5),
        (
            "compound_poisson",
            Prior::CompoundPoisson {
                rate: 20.0,
                jump_sd: 1.0,
            },
            10.0,
        ),
    ] {
        let setup = paper_setup(prior, half);
        for one_step in [false, true] {
            let opts = SolveOptions {
                one_step,
                force_full_state: false,
            };
            let sol = Solution::solve(&setup, &opts).expect("solve");
            let st = sol.stats();
            println!(
                "{name:>16} one_step={one_step:<5} 100x100: {:.3} s (reward table {:.3} s), peak {:.1} MiB, V[y_L = y_R = level 50] = {:.6}, threads = {}",
                st.seconds,
                st.reward_seconds,
                st.peak_bytes as f64 / (1024.0 * 1024.0),
                sol.value(0, 99, 50, 50),
                rayon::current_num_threads()
            );
        }
    }
    divan::main();
}

fn paper_setup(prior: Prior, half: f64) -> Setup {
    Setup {
        prior,
        reward: Reward::Indicator { threshold: 0.0 },
        grid: Grid {
            length: 1.0,
            x_levels: 100,
            y_min: -half,
            y_max: half,
            y_levels: 100,
        },
        cost: 0.01,
    }
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn brownian_100x100() -> f64 {
    let s = paper_setup(Prior::Brownian { scale: 1.0 }, 2.5);
    let sol = Solution::solve(
        &s,
        &SolveOptions {
            one_step: false,
            force_full_state: false,
        },
    )
    .unwrap();
    sol.value(0, 99, 50, 50)
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn compound_poisson_100x100() -> f64 {
    let s = paper_setup(
        Prior::CompoundPoisson {
            rate: 20.0,
            jump_sd: 1.0,
        },
        10.0,
    );
    let sol = Solution::solve(
        &s,
        &SolveOptions {
            one_step: false,
            force_full_state: false,
        },
    )
    .unwrap();
    sol.value(0, 99, 50, 50)
}
