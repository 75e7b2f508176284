//! Counts over settings ("of the 42 settings, variance 0.08 gave the lowest mean regret 25
//! times"): which level of a factor has the lowest mean in each setting, counted, with a
//! bootstrap over replications for the count differences.
//!
//! A setting (an objective, a cost set and an algorithm, say) has one sample of
//! per-replication values per level of the factor (lower is better). The statistic is the
//! number of settings in which each level has the lowest mean. Its sampling variation comes
//! from the replications, so each resample draws every source's replications with
//! replacement (values of one source — one spec — share the draw, as its policies share its
//! replications) and counts again. The claim "level ℓ is lowest most often" compares ℓ's
//! count with each other level's: per other level a percentile interval of the count
//! difference, at the nominal level of the look's O'Brien–Fleming boundary, with Holm's
//! step-down over the other levels — the same verdict rules as [`crate::Test::Better`].

use crate::{ALPHA, Boundaries, Compared, Decision, Looks, Verdict};

/// Bootstrap resamples per look.
pub const RESAMPLES: usize = 2000;

/// One setting of a tally.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// What the setting is (`GP sample, cheap, ETC-50`).
    pub name: String,
    /// Per level, the per-replication values (replications 0, 1, … in order; lower is better).
    pub levels: Vec<Vec<f64>>,
    /// Per level, the source its values come from: levels of any settings with the same
    /// source are resampled together.
    pub sources: Vec<usize>,
}

/// Per level, the settings in which its mean over the first `n` replications is the lowest
/// (the first level on a tie).
pub fn lowest_counts(settings: &[Setting], n: usize) -> Vec<usize> {
    let identity: Vec<usize> = (0..n).collect();
    count(settings, |_| &identity[..])
}

/// The counts with each source's replications drawn as `draw(source)` gives them.
fn count<'a>(settings: &[Setting], draw: impl Fn(usize) -> &'a [usize]) -> Vec<usize> {
    let levels = settings.iter().map(|s| s.levels.len()).max().unwrap_or(0);
    let mut counts = vec![0; levels];
    for s in settings {
        let means = s.levels.iter().zip(&s.sources).map(|(values, &source)| {
            let idx = draw(source);
            idx.iter().map(|&i| values[i]).sum::<f64>() / idx.len() as f64
        });
        let lowest =
            means
                .enumerate()
                .fold(None, |best: Option<(usize, f64)>, (j, m)| match best {
                    Some((_, b)) if b <= m => best,
                    _ => Some((j, m)),
                });
        if let Some((j, _)) = lowest {
            counts[j] += 1;
        }
    }
    counts
}

/// Decides "level `favoured` has the lowest mean in more settings than each other level"
/// at the planned looks the data reach (every setting's every level must have n
/// replications), with `resamples` bootstrap draws from a generator seeded by `seed`, so a
/// page recomputes the same intervals. `names` names the levels.
pub fn decide_most_often_lowest(
    favoured: usize,
    names: &[String],
    settings: &[Setting],
    looks: &Looks,
    resamples: usize,
    seed: u64,
) -> Decision {
    let available = settings
        .iter()
        .flat_map(|s| s.levels.iter().map(Vec::len))
        .min()
        .unwrap_or(0);
    let sources = settings
        .iter()
        .flat_map(|s| s.sources.iter().copied())
        .max()
        .map_or(0, |m| m + 1);
    let others: Vec<usize> = (0..names.len()).filter(|&j| j != favoured).collect();
    let mut boundaries = Boundaries::new(looks);
    let mut decision = Decision::before_any_look();
    for (k, &n) in looks.sizes().iter().enumerate() {
        if n > available || settings.is_empty() {
            break;
        }
        let observed = lowest_counts(settings, n);
        let diff = |c: &[usize], j: usize| c[favoured] as f64 - c[j] as f64;
        let mut rng = SplitMix64(seed);
        let mut draws: Vec<Vec<f64>> = vec![Vec::with_capacity(resamples); others.len()];
        for _ in 0..resamples {
            let idx: Vec<Vec<usize>> = (0..sources)
                .map(|_| (0..n).map(|_| rng.below(n)).collect())
                .collect();
            let c = count(settings, |s| &idx[s][..]);
            for (d, &j) in draws.iter_mut().zip(&others) {
                d.push(diff(&c, j));
            }
        }
        for d in &mut draws {
            d.sort_by(f64::total_cmp);
        }
        let verdict = holm_percentile(&draws, &others, &observed, favoured, k, &mut boundaries);
        let nominal = boundaries.nominal(ALPHA, k);
        decision = Decision {
            verdict,
            n,
            last_look: k + 1 == looks.sizes().len(),
            compared: others
                .iter()
                .zip(&draws)
                .map(|(&j, d)| {
                    let (low, high) = percentile(d, nominal);
                    Compared {
                        against: names[j].clone(),
                        n,
                        mean: diff(&observed, j),
                        low,
                        high,
                    }
                })
                .collect(),
        };
        if verdict != Verdict::Inconclusive {
            break;
        }
    }
    decision
}

/// Holm's step-down over the count differences, strongest (observed difference in bootstrap
/// standard deviations) first; [`crate::Test::Better`]'s verdict rules.
fn holm_percentile(
    draws: &[Vec<f64>],
    others: &[usize],
    observed: &[usize],
    favoured: usize,
    k: usize,
    boundaries: &mut Boundaries,
) -> Verdict {
    let m = draws.len();
    let strength = |i: usize| {
        let d = observed[favoured] as f64 - observed[others[i]] as f64;
        let n = draws[i].len() as f64;
        let mean = draws[i].iter().sum::<f64>() / n;
        let sd = (draws[i].iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
        if sd == 0.0 {
            if d == 0.0 { 0.0 } else { f64::INFINITY }
        } else {
            d.abs() / sd
        }
    };
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| strength(b).total_cmp(&strength(a)));
    let mut signs = Vec::new();
    for (step, &i) in order.iter().enumerate() {
        let nominal = boundaries.nominal(ALPHA / (m - step) as f64, k);
        let (low, high) = percentile(&draws[i], nominal);
        if low > 0.0 {
            signs.push(1.0);
        } else if high < 0.0 {
            signs.push(-1.0);
        } else {
            break;
        }
    }
    if signs.iter().any(|&s| s < 0.0) {
        Verdict::DoesNotHold
    } else if m > 0 && signs.len() == m {
        Verdict::Holds
    } else {
        Verdict::Inconclusive
    }
}

/// The two-sided percentile interval at `level` of sorted draws (the order statistics at
/// ⌊level/2 · B⌋ and B − 1 minus that).
fn percentile(sorted: &[f64], level: f64) -> (f64, f64) {
    if sorted.is_empty() {
        return (f64::NEG_INFINITY, f64::INFINITY);
    }
    let b = sorted.len();
    let tail = ((level / 2.0) * b as f64).floor() as usize;
    let tail = tail.min(b - 1);
    (sorted[tail], sorted[b - 1 - tail])
}

/// SplitMix64 (Steele, Lea & Flood 2014): a small, fixed generator, so a page's bootstrap
/// intervals depend on nothing but its values and the seed.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform on 0..n (Lemire's multiply-high; its bias is below 2⁻⁵⁰ for the n here).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(levels: Vec<Vec<f64>>, sources: Vec<usize>) -> Setting {
        Setting {
            name: "s".into(),
            levels,
            sources,
        }
    }

    fn names() -> Vec<String> {
        ["0.02", "0.04", "0.08"].map(String::from).to_vec()
    }

    /// SplitMix64's first output from seed 0 is 0xE220A8397B1DCDAF (the reference
    /// implementation's published sequence).
    #[test]
    fn the_generator_is_splitmix64() {
        assert_eq!(SplitMix64(0).next(), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn counts_pick_the_lowest_mean_per_setting() {
        let s = vec![
            setting(
                vec![vec![3.0, 3.0], vec![2.0, 2.0], vec![1.0, 1.0]],
                vec![0, 1, 2],
            ),
            setting(
                vec![vec![0.0, 2.2], vec![1.5, 1.5], vec![1.0, 1.0]],
                vec![0, 1, 2],
            ),
            setting(
                vec![vec![0.0, 0.0], vec![5.0, 5.0], vec![1.0, 1.0]],
                vec![0, 1, 2],
            ),
        ];
        assert_eq!(lowest_counts(&s, 2), [1, 0, 2]);
        // On the first replication alone the second setting's 0.02 is lowest too.
        assert_eq!(lowest_counts(&s, 1), [2, 0, 1]);
    }

    /// A level lowest in every setting by far more than the noise holds; the same data with
    /// another level favoured does not; and the intervals do not depend on anything but the
    /// seed.
    #[test]
    fn a_clear_winner_holds_and_a_loser_does_not() {
        let looks = Looks::planned(10, 1);
        let noise = |r: usize| 0.01 * ((r * 7 % 5) as f64 - 2.0);
        let s: Vec<Setting> = (0..12)
            .map(|i| {
                let level = |base: f64| (0..10).map(|r| base + noise(r + i)).collect();
                setting(
                    vec![level(2.0), level(3.0), level(1.0)],
                    vec![3 * i, 3 * i + 1, 3 * i + 2],
                )
            })
            .collect();
        let d = decide_most_often_lowest(2, &names(), &s, &looks, RESAMPLES, 1);
        assert_eq!(d.verdict, Verdict::Holds);
        assert_eq!(d.compared[0].mean, 12.0);
        assert_eq!((d.compared[0].low, d.compared[0].high), (12.0, 12.0));
        let d = decide_most_often_lowest(0, &names(), &s, &looks, RESAMPLES, 1);
        assert_eq!(d.verdict, Verdict::DoesNotHold);
        let again = decide_most_often_lowest(0, &names(), &s, &looks, RESAMPLES, 1);
        assert_eq!(d, again);
    }

    /// Three levels drawn from one law: the favoured level's count is no better than the
    /// others', and over many simulated tallies a verdict either way stays within the level.
    #[test]
    fn levels_with_no_true_difference_are_rarely_decided() {
        let looks = Looks::planned(10, 2);
        let mut rng = SplitMix64(17);
        let mut normal = || {
            // Box–Muller on two uniforms in (0, 1].
            let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64 + f64::EPSILON;
            let v = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        };
        let runs = 200;
        let mut decided = 0;
        for run in 0..runs {
            let s: Vec<Setting> = (0..11)
                .map(|i| {
                    let levels = (0..3)
                        .map(|_| (0..10).map(|_| normal()).collect())
                        .collect();
                    setting(levels, vec![3 * i, 3 * i + 1, 3 * i + 2])
                })
                .collect();
            let d = decide_most_often_lowest(2, &names(), &s, &looks, 400, run);
            decided += usize::from(d.verdict != Verdict::Inconclusive);
        }
        // 5 % plus three binomial standard errors.
        let bound = 0.05 + 3.0 * (0.05f64 * 0.95 / runs as f64).sqrt();
        assert!(decided as f64 / runs as f64 <= bound, "{decided} of {runs}");
    }
}
