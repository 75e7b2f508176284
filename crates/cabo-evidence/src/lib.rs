//! Paired statistics for the reproduction gallery: whether a paper's claim holds on cabo's
//! runs, decided from per-replication differences with intervals that stay valid while
//! replications are added in batches.
//!
//! Replication r of every policy shares its problem instance and initial design, so two
//! policies are compared through the per-replication *advantage* d_r of the claim's policy
//! (positive favours the claim). At each planned look ([`Looks`]) the mean advantage gets a
//! *repeated confidence interval*: a t interval whose width comes from a group-sequential
//! boundary ([`boundary`]), so that the intervals of all looks together cover the true mean
//! with probability at least [`LEVEL`]. A claim is decided at the first look where it is
//! decided, and never revisited.
//!
//! - **better** ([`Test::Better`]): the claim's policy beats each comparator. It *holds* when
//!   Holm's step-down procedure over the comparisons rejects every null with the claim's
//!   sign, and *does not hold* when it rejects one with the other sign.
//! - **comparable** ([`Test::Comparable`]): two one-sided tests against ±margin. It holds
//!   when every comparator's interval at 1 − 2α lies inside (−margin, margin) (an
//!   intersection–union test needs no correction), and does not hold when Holm's procedure
//!   finds the claim's policy worse than one comparator by more than the margin (better by
//!   more than it leaves the claim inconclusive).
//! - **not worse** ([`Test::NotWorse`]): the one-sided half of that ("competitive", "no
//!   method outperforms"). It holds when every comparator's interval at 1 − 2α lies above
//!   −margin, and does not hold when Holm's procedure finds one wholly below it.
//!
//! - **better than any** ([`Test::BetterThanAny`]): the claim's policy beats at least one
//!   comparator ("one of A and B performs worst"). It holds when Holm's procedure rejects one
//!   null with the claim's sign (a union–intersection test: the global null is "better than
//!   none"), and does not hold when it rejects every comparison with the other sign.
//!
//! Comparisons whose two sides do not share replications (two specs seeded apart) are
//! decided the same way on the difference of the two means with Welch's standard error
//! ([`decide_unpaired`]), and a count over settings by a bootstrap ([`tally`]).
//!
//! Everything else is *inconclusive at n*.

#![forbid(unsafe_code)]

pub mod boundary;
mod looks;
pub mod tally;

pub use looks::{FEWEST, Looks};
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// The two-sided level of every interval the gallery reports for a `better` claim; a
/// `comparable` claim's two one-sided tests use 1 − 2(1 − LEVEL).
pub const LEVEL: f64 = 0.95;

/// The error rate spent over all looks of one comparison.
const ALPHA: f64 = 1.0 - LEVEL;

/// What a claim says about its policy against the comparators.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Test {
    /// Better than every comparator.
    Better,
    /// Within ±`margin` of every comparator, on the metric's scale.
    Comparable {
        /// The equivalence margin, fixed before the runs.
        margin: f64,
    },
    /// No worse than any comparator by more than `margin`, on the metric's scale.
    NotWorse {
        /// The non-inferiority margin, fixed before the runs.
        margin: f64,
    },
    /// Better than at least one comparator ("one of A and B performs worst"): a union–
    /// intersection test whose global null is "not better than any".
    BetterThanAny,
}

/// One comparator's per-replication advantages of the claim's policy (positive favours the
/// claim), for replications 0, 1, … in order, complete pairs only.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The comparator's name.
    pub against: String,
    /// d_r, r = 0, 1, ….
    pub advantages: Vec<f64>,
}

/// A claim's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The interval(s) lie on the claimed side.
    Holds,
    /// An interval lies on the other side.
    DoesNotHold,
    /// Neither, at the replications so far.
    Inconclusive,
}

/// One comparator at the look that decided (or the last look reached).
#[derive(Debug, Clone, PartialEq)]
pub struct Compared {
    /// The comparator.
    pub against: String,
    /// Replications in the interval.
    pub n: usize,
    /// Mean advantage of the claim's policy.
    pub mean: f64,
    /// The repeated interval's ends: at [`LEVEL`] for `better`, at 1 − 2α for `comparable`.
    pub low: f64,
    /// See `low`.
    pub high: f64,
}

/// A claim's decision.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The verdict.
    pub verdict: Verdict,
    /// Replications at the look that decided, or at the last look the data reach (0: the
    /// data reach no look yet).
    pub n: usize,
    /// Whether that look is the last planned one: an inconclusive claim is then final.
    pub last_look: bool,
    /// Per comparator, at that look (empty when no look is reached).
    pub compared: Vec<Compared>,
}

impl Decision {
    /// Before the data reach a look: inconclusive at n = 0, with nothing compared.
    pub fn before_any_look() -> Decision {
        Decision {
            verdict: Verdict::Inconclusive,
            n: 0,
            last_look: false,
            compared: Vec::new(),
        }
    }
}

/// Walks the planned looks the data reach (the shortest comparison sets how far) and stops
/// at the first that decides.
pub fn decide(test: &Test, comparisons: &[Comparison], looks: &Looks) -> Decision {
    decide_among(test, comparisons, comparisons.len(), looks)
}

/// [`decide`] while only some of a claim's `family` comparisons have data: Holm's procedure
/// still divides the level among the whole family, and the claim cannot hold before every
/// comparison has — but one comparison on the wrong side already refutes it.
pub fn decide_among(
    test: &Test,
    comparisons: &[Comparison],
    family: usize,
    looks: &Looks,
) -> Decision {
    let available = comparisons
        .iter()
        .map(|c| c.advantages.len())
        .min()
        .unwrap_or(0);
    let names: Vec<&str> = comparisons.iter().map(|c| c.against.as_str()).collect();
    walk(test, &names, family, available, looks, |n| {
        comparisons
            .iter()
            .map(|c| Sample::of(&c.advantages[..n]))
            .collect()
    })
}

/// Two independent samples whose difference of means is a claim's advantage: `first` and
/// `second` are the per-replication values of the two sides (each side's replications in
/// order), oriented so that a positive `mean(first) − mean(second)` favours the claim.
#[derive(Debug, Clone, PartialEq)]
pub struct Contrast {
    /// What the claim's side is compared with.
    pub against: String,
    /// The claim's side.
    pub first: Vec<f64>,
    /// The other side.
    pub second: Vec<f64>,
}

/// [`decide_among`] for sides that share no replications: at each look, n replications of
/// each side, the difference of the means with Welch's standard error and its
/// Welch–Satterthwaite degrees of freedom in place of the paired t interval.
pub fn decide_unpaired(
    test: &Test,
    contrasts: &[Contrast],
    family: usize,
    looks: &Looks,
) -> Decision {
    let available = contrasts
        .iter()
        .map(|c| c.first.len().min(c.second.len()))
        .min()
        .unwrap_or(0);
    let names: Vec<&str> = contrasts.iter().map(|c| c.against.as_str()).collect();
    walk(test, &names, family, available, looks, |n| {
        contrasts
            .iter()
            .map(|c| Sample::welch(&c.first[..n], &c.second[..n]))
            .collect()
    })
}

/// Walks the planned looks up to `available` replications, with the comparisons' samples at
/// n from `sample_at`, and stops at the first look that decides.
fn walk(
    test: &Test,
    names: &[&str],
    family: usize,
    available: usize,
    looks: &Looks,
    sample_at: impl Fn(usize) -> Vec<Sample>,
) -> Decision {
    let family = family.max(names.len());
    let mut boundaries = Boundaries::new(looks);
    let mut decision = Decision::before_any_look();
    for (k, &n) in looks.sizes().iter().enumerate() {
        if n > available {
            break;
        }
        let samples = sample_at(n);
        let family = Family {
            samples: &samples,
            size: family,
        };
        let verdict = match *test {
            Test::Better => better(&family, k, &mut boundaries),
            Test::Comparable { margin } => comparable(&family, margin, k, &mut boundaries),
            Test::NotWorse { margin } => not_worse(&family, margin, k, &mut boundaries),
            Test::BetterThanAny => better_than_any(&family, k, &mut boundaries),
        };
        let level = match test {
            Test::Better | Test::BetterThanAny => ALPHA,
            Test::Comparable { .. } | Test::NotWorse { .. } => 2.0 * ALPHA,
        };
        decision = Decision {
            verdict,
            n,
            last_look: k + 1 == looks.sizes().len(),
            compared: names
                .iter()
                .zip(&samples)
                .map(|(name, s)| {
                    let half = s.half_width(s.critical(&mut boundaries, level, k));
                    Compared {
                        against: name.to_string(),
                        n,
                        mean: s.mean,
                        low: s.mean - half,
                        high: s.mean + half,
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

/// One line for the page: which interval and which correction.
pub fn describe(test: &Test, comparisons: usize, looks: &Looks) -> String {
    let sizes: Vec<String> = looks.sizes().iter().map(|n| n.to_string()).collect();
    let spending = if sizes.len() == 1 {
        format!("one look at n = {}", sizes[0])
    } else {
        format!(
            "Lan–DeMets O'Brien–Fleming spending over looks at n = {}",
            sizes.join(", ")
        )
    };
    let holm = |what: &str| {
        if comparisons > 1 {
            format!("; {what} by Holm's step-down over the {comparisons} comparisons")
        } else {
            String::new()
        }
    };
    match test {
        Test::Better => format!(
            "mean paired advantage with its {:.0} % repeated t interval ({spending}){}",
            100.0 * LEVEL,
            holm("decided")
        ),
        Test::Comparable { margin } => format!(
            "mean paired advantage with its {:.0} % repeated t interval ({spending}); \
             comparable when every interval lies inside ±{margin} (two one-sided tests at \
             {:.0} %), not comparable when one lies wholly below −{margin}{}",
            100.0 * (1.0 - 2.0 * ALPHA),
            100.0 * ALPHA,
            holm("the latter")
        ),
        Test::NotWorse { margin } => format!(
            "mean paired advantage with its {:.0} % repeated t interval ({spending}); \
             not worse when every interval lies above −{margin} (one-sided tests at {:.0} %), \
             worse when one lies wholly below it{}",
            100.0 * (1.0 - 2.0 * ALPHA),
            100.0 * ALPHA,
            holm("the latter")
        ),
        Test::BetterThanAny => format!(
            "mean paired advantage with its {:.0} % repeated t interval ({spending}); better \
             than any when Holm's step-down over the {comparisons} comparisons finds one on \
             the claimed side, not when it finds every one on the other",
            100.0 * LEVEL
        ),
    }
}

/// The mean and the unbiased variance of `d` (NaN variance for one value).
fn mean_var(d: &[f64]) -> (f64, f64) {
    let n = d.len() as f64;
    let mean = d.iter().sum::<f64>() / n;
    let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

/// A comparison's mean and standard error at one look.
#[derive(Debug, Clone, Copy)]
struct Sample {
    mean: f64,
    stderr: f64,
    /// Degrees of freedom of the t law the standardised mean follows under the null.
    df: f64,
}

impl Sample {
    /// Paired differences: their mean, with n − 1 degrees of freedom.
    fn of(d: &[f64]) -> Sample {
        let (mean, var) = mean_var(d);
        let n = d.len();
        Sample {
            mean,
            stderr: (var / n as f64).sqrt(),
            df: n as f64 - 1.0,
        }
    }

    /// Two independent samples: the difference of their means, with Welch's standard error
    /// and the Welch–Satterthwaite degrees of freedom (n − 1 when both variances vanish).
    fn welch(a: &[f64], b: &[f64]) -> Sample {
        let ((ma, va), (mb, vb)) = (mean_var(a), mean_var(b));
        let (qa, qb) = (va / a.len() as f64, vb / b.len() as f64);
        let se2 = qa + qb;
        let df = if se2 > 0.0 {
            se2 * se2 / (qa * qa / (a.len() as f64 - 1.0) + qb * qb / (b.len() as f64 - 1.0))
        } else {
            a.len().min(b.len()) as f64 - 1.0
        };
        Sample {
            mean: ma - mb,
            stderr: se2.sqrt(),
            df,
        }
    }

    /// The critical t value of this sample at look `k` for a two-sided `level`.
    fn critical(&self, boundaries: &mut Boundaries, level: f64, k: usize) -> f64 {
        boundaries.critical_df(level, k, self.df)
    }

    /// Half the interval's width for a critical t value.
    fn half_width(&self, critical: f64) -> f64 {
        if self.stderr == 0.0 {
            // Every replication gave the same difference: the interval is that point.
            0.0
        } else {
            critical * self.stderr
        }
    }

    /// The interval at a critical value.
    fn interval(&self, critical: f64) -> (f64, f64) {
        let half = self.half_width(critical);
        (self.mean - half, self.mean + half)
    }

    /// How many standard errors the mean lies beyond `offset` from zero (∞ when the
    /// differences are all equal and beyond it).
    fn standardised(&self, offset: f64) -> f64 {
        let distance = self.mean.abs() - offset;
        if self.stderr == 0.0 {
            if distance > 0.0 { f64::INFINITY } else { 0.0 }
        } else {
            distance / self.stderr
        }
    }
}

/// Holm's step-down at look `k` over the family's comparisons with data, each tested at
/// `level`/(m − i) (m the whole family's size) in decreasing order of `strength`; `rejects` says whether a sample's interval at a critical
/// value rejects its null. Returns the rejected samples' mean signs.
fn holm(
    family: &Family,
    level: f64,
    k: usize,
    boundaries: &mut Boundaries,
    strength: impl Fn(&Sample) -> f64,
    rejects: impl Fn((f64, f64)) -> bool,
) -> Vec<f64> {
    let m = family.size;
    let mut order: Vec<&Sample> = family.samples.iter().collect();
    order.sort_by(|a, b| strength(b).total_cmp(&strength(a)));
    let mut rejected = Vec::new();
    for (i, s) in order.into_iter().enumerate() {
        let critical = s.critical(boundaries, level / (m - i) as f64, k);
        if rejects(s.interval(critical)) {
            rejected.push(s.mean.signum());
        } else {
            break;
        }
    }
    rejected
}

/// The comparisons a claim has data for, and how many it makes in all.
struct Family<'a> {
    samples: &'a [Sample],
    size: usize,
}

impl Family<'_> {
    /// Whether every comparison of the family has data.
    fn complete(&self) -> bool {
        !self.samples.is_empty() && self.samples.len() == self.size
    }
}

fn better(family: &Family, k: usize, boundaries: &mut Boundaries) -> Verdict {
    let strength = |s: &Sample| s.standardised(0.0);
    let rejects = |(low, high): (f64, f64)| low > 0.0 || high < 0.0;
    let rejected = holm(family, ALPHA, k, boundaries, strength, rejects);
    if rejected.iter().any(|&s| s < 0.0) {
        Verdict::DoesNotHold
    } else if rejected.len() == family.size && family.complete() {
        Verdict::Holds
    } else {
        Verdict::Inconclusive
    }
}

/// Holds when Holm's procedure rejects some comparison with the claim's sign (the union of
/// the comparisons' alternatives); does not hold when it rejects every comparison of the
/// whole family with the other sign.
fn better_than_any(family: &Family, k: usize, boundaries: &mut Boundaries) -> Verdict {
    let strength = |s: &Sample| s.standardised(0.0);
    let rejects = |(low, high): (f64, f64)| low > 0.0 || high < 0.0;
    let rejected = holm(family, ALPHA, k, boundaries, strength, rejects);
    if rejected.iter().any(|&s| s > 0.0) {
        Verdict::Holds
    } else if rejected.len() == family.size && family.complete() {
        Verdict::DoesNotHold
    } else {
        Verdict::Inconclusive
    }
}

fn comparable(family: &Family, margin: f64, k: usize, boundaries: &mut Boundaries) -> Verdict {
    let inside = family.samples.iter().all(|s| {
        let (low, high) = s.interval(s.critical(boundaries, 2.0 * ALPHA, k));
        low > -margin && high < margin
    });
    // Only a policy worse by more than the margin refutes "comparable" (the gallery's
    // convention): one better by more than it leaves the claim undecided, not refuted.
    let below = |(_, high): (f64, f64)| high < -margin;
    if inside && family.complete() {
        Verdict::Holds
    } else if !holm(family, 2.0 * ALPHA, k, boundaries, worse_by(margin), below).is_empty() {
        Verdict::DoesNotHold
    } else {
        Verdict::Inconclusive
    }
}

/// Holm's order for evidence of being worse than −margin: the mean farthest below it, in
/// standard errors, first.
fn worse_by(margin: f64) -> impl Fn(&Sample) -> f64 {
    move |s: &Sample| {
        let below = -margin - s.mean;
        if s.stderr == 0.0 {
            below.signum() * f64::INFINITY
        } else {
            below / s.stderr
        }
    }
}

fn not_worse(family: &Family, margin: f64, k: usize, boundaries: &mut Boundaries) -> Verdict {
    let above = family.samples.iter().all(|s| {
        let (low, _) = s.interval(s.critical(boundaries, 2.0 * ALPHA, k));
        low > -margin
    });
    let below = |(_, high): (f64, f64)| high < -margin;
    if above && family.complete() {
        Verdict::Holds
    } else if !holm(family, 2.0 * ALPHA, k, boundaries, worse_by(margin), below).is_empty() {
        Verdict::DoesNotHold
    } else {
        Verdict::Inconclusive
    }
}

/// The boundaries of one set of looks at each level asked for.
struct Boundaries {
    fractions: Vec<f64>,
}

/// Boundaries already computed, by (level, fractions): a page asks for the same few levels
/// and looks hundreds of times, and each computation integrates on a grid.
type Memo = Vec<((u64, Vec<u64>), Vec<f64>)>;

static MEMO: std::sync::Mutex<Memo> = std::sync::Mutex::new(Vec::new());

impl Boundaries {
    fn new(looks: &Looks) -> Boundaries {
        Boundaries {
            fractions: looks.fractions(),
        }
    }

    /// The z boundary at look `k` for a two-sided `level` spent over the looks.
    fn z(&self, level: f64, k: usize) -> f64 {
        let key = (
            level.to_bits(),
            self.fractions
                .iter()
                .map(|f| f.to_bits())
                .collect::<Vec<_>>(),
        );
        let mut memo = MEMO.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, b)) = memo.iter().find(|(k, _)| *k == key) {
            return b[k];
        }
        let b = boundary::obrien_fleming(level, &self.fractions);
        let z = b[k];
        memo.push((key, b));
        z
    }

    /// The critical t value at look `k` with `n` replications for a two-sided `level` spent
    /// over the looks: the z boundary's nominal level, read on Student's t with n − 1
    /// degrees of freedom (the usual small-sample form of a group-sequential t test).
    #[cfg(test)]
    fn critical(&mut self, level: f64, k: usize, n: usize) -> f64 {
        self.critical_df(level, k, n as f64 - 1.0)
    }

    /// The nominal two-sided level of one look's boundary: what a fixed-sample interval at
    /// that look may spend.
    fn nominal(&self, level: f64, k: usize) -> f64 {
        2.0 * Normal::standard().sf(self.z(level, k))
    }

    /// [`Boundaries::critical`] on Student's t with `df` degrees of freedom (Welch's for two
    /// independent samples); infinite below one degree of freedom.
    fn critical_df(&mut self, level: f64, k: usize, df: f64) -> f64 {
        if df.is_nan() || df < 1.0 {
            return f64::INFINITY;
        }
        let nominal = self.nominal(level, k);
        let t = StudentsT::new(0.0, 1.0, df).expect("df ≥ 1");
        t.inverse_cdf(1.0 - nominal / 2.0)
    }
}

#[cfg(test)]
mod tests;
