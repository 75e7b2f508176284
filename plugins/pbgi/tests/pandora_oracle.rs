//! Weitzman's theorem as an oracle: on Pandora's-box instances the Gittins-index policy with
//! the stopping rule attains the Bayes-optimal expected net utility of seed 000 eq. (4),
//! `E max_t f(x_t) − E Σ_t c(x_t)`, computed by a brute-force dynamic program over (opened
//! boxes, best reward so far) that maximises over every action and knows nothing of indices.
//!
//! Discrete rewards: both values are exact finite sums (agreement to 1e-9). Normal rewards:
//! expectations by adaptive Simpson quadrature (agreement to 1e-7), and a third value from
//! the closed form `E max_i min(R_i, g_i)` (Kleinberg, Waggoner and Weyl).

mod common;

use cabo_core::{Rng, normal};
use cabo_pbgi::pandora::{discrete_index, normal_index};

// ---------------------------------------------------------------- discrete rewards

struct DiscreteBox {
    values: Vec<f64>,
    probs: Vec<f64>,
    cost: f64,
}

/// Bayes-optimal value by exhaustive DP: stop (if something is open) or open any closed box.
fn dp_discrete(boxes: &[DiscreteBox], opened: u32, best: Option<f64>) -> f64 {
    let mut value = best.unwrap_or(f64::NEG_INFINITY);
    for (i, b) in boxes.iter().enumerate() {
        if opened & (1 << i) != 0 {
            continue;
        }
        let mut q = -b.cost;
        for (v, p) in b.values.iter().zip(&b.probs) {
            let next = best.map_or(*v, |m| m.max(*v));
            q += p * dp_discrete(boxes, opened | (1 << i), Some(next));
        }
        value = value.max(q);
    }
    value
}

/// Value of a priority policy: open the closed box of largest `priority` while
/// `open_while(priority, best)` (always open the first box), else stop.
fn priority_policy_value(
    boxes: &[DiscreteBox],
    priority: &[f64],
    open_while: &dyn Fn(f64, f64) -> bool,
    opened: u32,
    best: Option<f64>,
) -> f64 {
    let next =
        (0..boxes.len())
            .filter(|i| opened & (1 << i) == 0)
            .fold(None, |acc: Option<usize>, i| match acc {
                Some(j) if priority[j] >= priority[i] => Some(j),
                _ => Some(i),
            });
    let Some(i) = next else {
        return best.unwrap();
    };
    if let Some(m) = best
        && !open_while(priority[i], m)
    {
        return m;
    }
    let b = &boxes[i];
    let mut q = -b.cost;
    for (v, p) in b.values.iter().zip(&b.probs) {
        let nb = best.map_or(*v, |m| m.max(*v));
        q += p * priority_policy_value(boxes, priority, open_while, opened | (1 << i), Some(nb));
    }
    q
}

fn random_discrete(rng: &mut Rng, n: usize) -> Vec<DiscreteBox> {
    (0..n)
        .map(|_| {
            let k = 2 + rng.below(3) as usize;
            let values: Vec<f64> = (0..k)
                .map(|_| (rng.uniform_in(-2.0, 3.0) * 8.0).round() / 8.0)
                .collect();
            let raw: Vec<f64> = (0..k).map(|_| 0.05 + rng.uniform()).collect();
            let total: f64 = raw.iter().sum();
            DiscreteBox {
                values,
                probs: raw.iter().map(|r| r / total).collect(),
                cost: 0.01 + 0.6 * rng.uniform(),
            }
        })
        .collect()
}

#[test]
fn gittins_policy_is_bayes_optimal_for_discrete_rewards() {
    let mut rng = Rng::new(2024);
    let mut ei_per_cost_gaps = 0;
    for trial in 0..40 {
        let n = 3 + trial % 3; // 3, 4, 5 boxes
        let boxes = random_discrete(&mut rng, n);
        let idx: Vec<f64> = boxes
            .iter()
            .map(|b| discrete_index(&b.values, &b.probs, b.cost).unwrap())
            .collect();
        let optimal = dp_discrete(&boxes, 0, None);
        let gittins = priority_policy_value(&boxes, &idx, &|g, best| g > best, 0, None);
        assert!(
            (optimal - gittins).abs() < 1e-9,
            "trial {trial} ({n} boxes): DP {optimal} vs Gittins policy {gittins}"
        );
        // The oracle discriminates: an EI-per-cost ordering with EI-based stopping (EIPC)
        // falls short on some instances.
        let eipc = priority_policy_value(
            &boxes,
            &boxes
                .iter()
                .map(|b| {
                    b.values
                        .iter()
                        .zip(&b.probs)
                        .map(|(v, p)| p * v)
                        .sum::<f64>()
                        / b.cost
                })
                .collect::<Vec<_>>(),
            &|_, _| true,
            0,
            None,
        );
        assert!(eipc <= optimal + 1e-12);
        if eipc < optimal - 1e-6 {
            ei_per_cost_gaps += 1;
        }
    }
    assert!(
        ei_per_cost_gaps > 0,
        "every instance was easy: the oracle cannot discriminate"
    );
}

#[test]
fn hand_solved_two_outcome_box() {
    // One box worth 1 w.p. 0.1 (else 0) at cost 0.05: index g solves 0.1 (1 − g) = 0.05 → 0.5.
    let g = discrete_index(&[0.0, 1.0], &[0.9, 0.1], 0.05).unwrap();
    assert!((g - 0.5).abs() < 1e-15);
}

// ---------------------------------------------------------------- normal rewards

#[derive(Clone, Copy)]
struct NormalBox {
    mean: f64,
    std: f64,
    cost: f64,
}

/// Adaptive Simpson on [a, b] to absolute tolerance `tol`.
fn simpson(f: &dyn Fn(f64) -> f64, a: f64, b: f64, tol: f64) -> f64 {
    /// One panel: its ends and midpoint with their values, and its Simpson estimate.
    struct Panel {
        a: (f64, f64),
        m: (f64, f64),
        b: (f64, f64),
        whole: f64,
    }
    fn rec(f: &dyn Fn(f64) -> f64, p: Panel, tol: f64, depth: u32) -> f64 {
        let (a, fa) = p.a;
        let (m, fm) = p.m;
        let (b, fb) = p.b;
        let (lm, rm) = (0.5 * (a + m), 0.5 * (m + b));
        let (flm, frm) = (f(lm), f(rm));
        let left = (m - a) / 6.0 * (fa + 4.0 * flm + fm);
        let right = (b - m) / 6.0 * (fm + 4.0 * frm + fb);
        let diff = left + right - p.whole;
        if depth == 0 || diff.abs() <= 15.0 * tol {
            return left + right + diff / 15.0;
        }
        let l = Panel {
            a: p.a,
            m: (lm, flm),
            b: p.m,
            whole: left,
        };
        let r = Panel {
            a: p.m,
            m: (rm, frm),
            b: p.b,
            whole: right,
        };
        rec(f, l, 0.5 * tol, depth - 1) + rec(f, r, 0.5 * tol, depth - 1)
    }
    if b <= a {
        return 0.0;
    }
    let (fa, fb, fm) = (f(a), f(b), f(0.5 * (a + b)));
    let whole = (b - a) / 6.0 * (fa + 4.0 * fm + fb);
    let p = Panel {
        a: (a, fa),
        m: (0.5 * (a + b), fm),
        b: (b, fb),
        whole,
    };
    rec(f, p, tol, 40)
}

/// Density of a box's reward.
fn density(b: &NormalBox, r: f64) -> f64 {
    common::phi((r - b.mean) / b.std) / b.std
}

/// `E[F(max(best, R))]` for `R ~ box`: the atom at `best` plus the integral above it,
/// truncated 9 standard deviations out (the rest is < 1e-18 of the mass).
fn expect_max(b: &NormalBox, best: f64, f: &dyn Fn(f64) -> f64, tol: f64) -> f64 {
    let hi = b.mean + 9.0 * b.std;
    let below = normal::cdf((best - b.mean) / b.std);
    below * f(best)
        + simpson(
            &|r| f(r) * density(b, r),
            best.max(b.mean - 9.0 * b.std),
            hi.max(best),
            tol,
        )
}

/// `E[max(best, R)]` in closed form: `best + σ·(φ(z) + zΦ(z))`, `z = (μ − best)/σ`.
fn e_max_closed(b: &NormalBox, best: f64) -> f64 {
    let z = (b.mean - best) / b.std;
    best + b.std * (common::phi(z) + z * normal::cdf(z))
}

/// Bayes-optimal value with three normal boxes by DP over (opened set, best).
fn dp_normal(boxes: &[NormalBox; 3]) -> f64 {
    // Two boxes open, `k` closed: stop, or open k and stop (closed form).
    let v2 = |k: usize, best: f64| best.max(-boxes[k].cost + e_max_closed(&boxes[k], best));
    // Box i open: stop, or open j ≠ i and continue optimally.
    let v1 = |i: usize, best: f64| {
        let mut v = best;
        for j in (0..3).filter(|&j| j != i) {
            let k = 3 - i - j;
            v = v.max(-boxes[j].cost + expect_max(&boxes[j], best, &|m| v2(k, m), 1e-11));
        }
        v
    };
    (0..3)
        .map(|i| {
            let b = &boxes[i];
            -b.cost
                + simpson(
                    &|r| v1(i, r) * density(b, r),
                    b.mean - 9.0 * b.std,
                    b.mean + 9.0 * b.std,
                    1e-9,
                )
        })
        .fold(f64::NEG_INFINITY, f64::max)
}

/// Value of the Gittins policy with the stopping rule (open in index order while the next
/// index exceeds the best reward).
fn gittins_normal(boxes: &[NormalBox; 3], idx: &[f64; 3]) -> f64 {
    let mut order = [0usize, 1, 2];
    order.sort_by(|a, b| idx[*b].total_cmp(&idx[*a]));
    let [a, b, c] = order;
    let w2 = |best: f64| {
        if best >= idx[c] {
            best
        } else {
            -boxes[c].cost + e_max_closed(&boxes[c], best)
        }
    };
    let w1 = |best: f64| {
        if best >= idx[b] {
            best
        } else {
            -boxes[b].cost + expect_max(&boxes[b], best, &w2, 1e-11)
        }
    };
    let ba = &boxes[a];
    -ba.cost
        + simpson(
            &|r| w1(r) * density(ba, r),
            ba.mean - 9.0 * ba.std,
            ba.mean + 9.0 * ba.std,
            1e-9,
        )
}

/// `E max_i min(R_i, g_i)` by integrating its distribution function.
fn kleinberg_value(boxes: &[NormalBox; 3], idx: &[f64; 3]) -> f64 {
    let cdf = |t: f64| -> f64 {
        boxes
            .iter()
            .zip(idx)
            .map(|(b, g)| {
                if t >= *g {
                    1.0
                } else {
                    normal::cdf((t - b.mean) / b.std)
                }
            })
            .product()
    };
    // E X = ∫_0^∞ (1 − F) − ∫_{−∞}^0 F, split at the kinks g_i and at 0.
    let lo = boxes
        .iter()
        .map(|b| b.mean - 12.0 * b.std)
        .fold(f64::INFINITY, f64::min)
        .min(0.0);
    let hi = idx
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max)
        .max(0.0);
    let mut cuts = vec![lo, 0.0, hi];
    cuts.extend(idx.iter().copied());
    cuts.sort_by(f64::total_cmp);
    let mut total = 0.0;
    for w in cuts.windows(2) {
        let (a, b) = (w[0], w[1]);
        if a >= 0.0 {
            total += simpson(&|t| 1.0 - cdf(t), a, b, 1e-13);
        } else {
            total -= simpson(&|t| cdf(t), a, b.min(0.0), 1e-13);
        }
    }
    total
}

#[test]
fn gittins_policy_is_bayes_optimal_for_normal_rewards() {
    let instances = [
        [
            NormalBox {
                mean: 0.0,
                std: 1.0,
                cost: 0.2,
            },
            NormalBox {
                mean: 0.5,
                std: 0.3,
                cost: 0.05,
            },
            NormalBox {
                mean: -0.5,
                std: 2.0,
                cost: 0.4,
            },
        ],
        [
            NormalBox {
                mean: 1.0,
                std: 0.5,
                cost: 0.01,
            },
            NormalBox {
                mean: 0.8,
                std: 1.5,
                cost: 0.3,
            },
            NormalBox {
                mean: 0.0,
                std: 3.0,
                cost: 1.0,
            },
        ],
        [
            NormalBox {
                mean: 0.2,
                std: 0.1,
                cost: 1e-4,
            },
            NormalBox {
                mean: 0.0,
                std: 1.0,
                cost: 0.5,
            },
            NormalBox {
                mean: 0.1,
                std: 0.7,
                cost: 0.02,
            },
        ],
    ];
    for (n, boxes) in instances.iter().enumerate() {
        let idx: [f64; 3] = std::array::from_fn(|i| {
            normal_index(boxes[i].mean, boxes[i].std, boxes[i].cost).unwrap()
        });
        let optimal = dp_normal(boxes);
        let gittins = gittins_normal(boxes, &idx);
        let closed = kleinberg_value(boxes, &idx);
        eprintln!(
            "instance {n}: DP {optimal:.12}, Gittins {gittins:.12}, E max min(R, g) {closed:.12}"
        );
        assert!(
            (optimal - gittins).abs() < 1e-7,
            "instance {n}: DP {optimal} vs Gittins {gittins}"
        );
        assert!(
            (closed - gittins).abs() < 1e-7,
            "instance {n}: closed form {closed} vs Gittins {gittins}"
        );
    }
}
