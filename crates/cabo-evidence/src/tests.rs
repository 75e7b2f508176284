//! The tests of the tests: what the gallery's verdicts do on data whose truth is known.

use super::Contrast;
use super::*;
use cabo_core::rng::Rng;

fn comparison(against: &str, advantages: Vec<f64>) -> Comparison {
    Comparison {
        against: against.into(),
        advantages,
    }
}

/// `n` paired differences N(`shift`, 1).
fn draws(rng: &mut Rng, n: usize, shift: f64) -> Vec<f64> {
    (0..n).map(|_| shift + rng.normal()).collect()
}

/// One look at n = 16 is the textbook paired t interval: t₁₅(0.975) = 2.131449545559323.
#[test]
fn one_look_is_the_paired_t_interval() {
    let d: Vec<f64> = (0..16).map(|i| (i as f64 * 0.37).sin() + 0.2).collect();
    let looks = Looks::planned(16, 1);
    let got = decide(&Test::Better, &[comparison("B", d.clone())], &looks);
    let mean = d.iter().sum::<f64>() / 16.0;
    let sd = (d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 15.0).sqrt();
    let half = 2.131449545559323 * sd / 4.0;
    let c = &got.compared[0];
    assert!((c.mean - mean).abs() < 1e-15);
    assert!((c.low - (mean - half)).abs() < 1e-9, "{c:?}");
    assert!((c.high - (mean + half)).abs() < 1e-9, "{c:?}");
    assert_eq!(got.n, 16);
    assert!(got.last_look);
}

/// Two copies of one policy give identical runs: never "does not hold", always comparable.
#[test]
fn identical_policies_are_comparable_and_never_refuted() {
    let looks = Looks::planned(16, 4);
    let same = vec![comparison("copy", vec![0.0; 16])];
    let better = decide(&Test::Better, &same, &looks);
    assert_eq!(better.verdict, Verdict::Inconclusive);
    assert_eq!((better.n, better.last_look), (16, true));
    let comparable = decide(&Test::Comparable { margin: 0.1 }, &same, &looks);
    assert_eq!(comparable.verdict, Verdict::Holds);
    assert_eq!(comparable.n, 4, "decided at the first look");
}

/// Policies that differ only by noise (run-to-run variation with no true difference): over
/// many sequential experiments, "does not hold" is as rare as the level allows for
/// `better`, never seen for `comparable`, and comparable is reached.
#[test]
fn noise_alone_refutes_nothing() {
    let looks = Looks::planned(16, 4);
    let mut rng = Rng::new(7);
    let (mut refuted_better, mut refuted_comparable, mut comparable) = (0, 0, 0);
    let runs = 2000;
    for _ in 0..runs {
        let d = vec![comparison("copy", draws(&mut rng, 16, 0.0))];
        if decide(&Test::Better, &d, &looks).verdict == Verdict::DoesNotHold {
            refuted_better += 1;
        }
        match decide(&Test::Comparable { margin: 1.5 }, &d, &looks).verdict {
            Verdict::DoesNotHold => refuted_comparable += 1,
            Verdict::Holds => comparable += 1,
            Verdict::Inconclusive => {}
        }
    }
    // One side of a two-sided 5 % test: 2.5 %, plus three binomial standard errors.
    let bound = 0.025 + 3.0 * (0.025f64 * 0.975 / runs as f64).sqrt();
    assert!(
        (refuted_better as f64 / runs as f64) <= bound,
        "{refuted_better}"
    );
    assert_eq!(refuted_comparable, 0);
    assert!(comparable as f64 / runs as f64 > 0.95, "{comparable}");
}

/// Under no true difference, the rate of any verdict over all looks stays at the level —
/// for one comparison and for three with Holm — while looking at every batch with the
/// fixed-sample 95 % interval (no spending) exceeds it: the spending is what keeps the
/// error rate.
#[test]
fn sequential_error_rate_stays_at_the_level() {
    let looks = Looks::planned(16, 4);
    let runs = 4000;
    let bound = 0.05 + 3.0 * (0.05f64 * 0.95 / runs as f64).sqrt();
    for m in [1usize, 3] {
        let mut rng = Rng::new(11 + m as u64);
        let mut wrong = 0;
        for _ in 0..runs {
            let d: Vec<Comparison> = (0..m)
                .map(|j| comparison(&format!("B{j}"), draws(&mut rng, 16, 0.0)))
                .collect();
            if decide(&Test::Better, &d, &looks).verdict != Verdict::Inconclusive {
                wrong += 1;
            }
        }
        let rate = wrong as f64 / runs as f64;
        assert!(rate <= bound, "m = {m}: {rate}");
    }
    // The same looks without spending: a fixed 95 % t interval at every look.
    let mut rng = Rng::new(99);
    let mut naive = 0;
    for _ in 0..runs {
        let d = draws(&mut rng, 16, 0.0);
        let decided = looks.sizes().iter().any(|&n| {
            let s = Sample::of(&d[..n]);
            let t = StudentsT::new(0.0, 1.0, (n - 1) as f64).unwrap();
            let (low, high) = s.interval(t.inverse_cdf(0.975));
            low > 0.0 || high < 0.0
        });
        naive += usize::from(decided);
    }
    assert!(naive as f64 / runs as f64 > bound, "{naive}");
}

/// The critical t values of `looks` at level [`ALPHA`], each read at its look's n.
fn critical_values(looks: &Looks) -> Vec<f64> {
    let mut b = Boundaries::new(looks);
    let sizes = looks.sizes();
    (0..sizes.len())
        .map(|k| b.critical(ALPHA, k, sizes[k]))
        .collect()
}

/// A policy better by a known amount is decided "holds" at the replications the design's
/// power predicts: the share decided by each look, and the mean n at the decision, match
/// the boundary-crossing probabilities under the drift θ = δ√N/σ.
#[test]
fn a_known_advantage_is_decided_where_power_predicts() {
    let (n_max, shift) = (64, 0.4);
    let looks = Looks::planned(n_max, 4);
    let fractions = looks.fractions();
    // The t test at look k rejects where mean/ŝe passes its critical t value, nearly where
    // mean/se does: the z recursion with those critical values predicts its power.
    let bounds = critical_values(&looks);
    let theta = shift * (n_max as f64).sqrt();
    let predicted = boundary::crossing_probabilities(&bounds, &fractions, theta);
    let mut rng = Rng::new(3);
    let runs = 3000;
    let mut decided_by = vec![0usize; looks.sizes().len()];
    let mut n_sum = 0usize;
    for _ in 0..runs {
        let d = vec![comparison("B", draws(&mut rng, n_max, shift))];
        let got = decide(&Test::Better, &d, &looks);
        assert_ne!(got.verdict, Verdict::DoesNotHold);
        n_sum += got.n;
        if got.verdict == Verdict::Holds {
            let k = looks.sizes().iter().position(|&s| s == got.n).unwrap();
            for slot in &mut decided_by[k..] {
                *slot += 1;
            }
        }
    }
    let mut cumulative = 0.0;
    let mut expected_n = 0.0;
    for (k, (up, _)) in predicted.iter().enumerate() {
        cumulative += up;
        expected_n += up * looks.sizes()[k] as f64;
        let seen = decided_by[k] as f64 / runs as f64;
        assert!(
            (seen - cumulative).abs() < 0.03,
            "look {k}: {seen} vs {cumulative}"
        );
    }
    expected_n += (1.0 - cumulative) * n_max as f64;
    let seen_n = n_sum as f64 / runs as f64;
    assert!(
        (seen_n / expected_n - 1.0).abs() < 0.05,
        "{seen_n} vs {expected_n}"
    );
    assert!(
        cumulative > 0.85,
        "the design has the power it should: {cumulative}"
    );
}

/// A comparator beaten and another beating the claim's policy: one wrong-side rejection is
/// enough for "does not hold".
#[test]
fn one_comparator_on_the_wrong_side_refutes_better() {
    let looks = Looks::planned(16, 1);
    let mut rng = Rng::new(5);
    let d = vec![
        comparison("weaker", draws(&mut rng, 16, 3.0)),
        comparison("stronger", draws(&mut rng, 16, -3.0)),
    ];
    assert_eq!(
        decide(&Test::Better, &d, &looks).verdict,
        Verdict::DoesNotHold
    );
}

/// The data reach no look yet: nothing is decided and nothing reported.
#[test]
fn before_the_first_look_nothing_is_reported() {
    let looks = Looks::planned(16, 4);
    let got = decide(
        &Test::Better,
        &[comparison("B", vec![1.0, 2.0, 3.0])],
        &looks,
    );
    assert_eq!(
        (got.verdict, got.n, got.compared.len()),
        (Verdict::Inconclusive, 0, 0)
    );
}

/// Not worse: a policy behind by less than the margin is not worse; one behind by far more is
/// worse; identical policies are never worse.
#[test]
fn not_worse_reads_one_side_of_the_margin() {
    let looks = Looks::planned(16, 1);
    let mut rng = Rng::new(21);
    let margin = Test::NotWorse { margin: 1.0 };
    let slightly_behind = vec![comparison("B", draws(&mut rng, 16, -0.1))];
    assert_eq!(
        decide(&margin, &slightly_behind, &looks).verdict,
        Verdict::Holds
    );
    let far_behind = vec![comparison("B", draws(&mut rng, 16, -3.0))];
    assert_eq!(
        decide(&margin, &far_behind, &looks).verdict,
        Verdict::DoesNotHold
    );
    let far_ahead = vec![comparison("B", draws(&mut rng, 16, 3.0))];
    assert_eq!(decide(&margin, &far_ahead, &looks).verdict, Verdict::Holds);
    let same = vec![comparison("copy", vec![0.0; 16])];
    assert_eq!(decide(&margin, &same, &looks).verdict, Verdict::Holds);
}

/// While one comparator has no runs, a claim that beats the others cannot hold yet, but one
/// that loses to another is already refuted; Holm divides the level by the whole family.
#[test]
fn a_partial_family_refutes_but_never_confirms() {
    let looks = Looks::planned(16, 1);
    let mut rng = Rng::new(31);
    let beaten = vec![comparison("B", draws(&mut rng, 16, 3.0))];
    let all = decide(&Test::Better, &beaten, &looks);
    assert_eq!(all.verdict, Verdict::Holds);
    let partial = decide_among(&Test::Better, &beaten, 2, &looks);
    assert_eq!(partial.verdict, Verdict::Inconclusive);
    assert_eq!(partial.compared.len(), 1);
    let beating = vec![comparison("B", draws(&mut rng, 16, -3.0))];
    let refuted = decide_among(&Test::Better, &beating, 2, &looks);
    assert_eq!(refuted.verdict, Verdict::DoesNotHold);
    // t = 2.3 lies between t₁₅'s critical values at α (2.13) and α/2 (2.49): enough for
    // one comparison, not for one of two. Alternating ±1 around the mean has sd √(16/15).
    let mean = 2.3 * (16.0f64 / 15.0).sqrt() / 4.0;
    let shifted: Vec<f64> = (0..16)
        .map(|i| mean + if i % 2 == 0 { 1.0 } else { -1.0 })
        .collect();
    let one = decide(&Test::Better, &[comparison("B", shifted.clone())], &looks);
    let of_two = decide_among(&Test::Better, &[comparison("B", shifted)], 2, &looks);
    assert_eq!(one.verdict, Verdict::Holds);
    assert_eq!(of_two.verdict, Verdict::Inconclusive);
}

/// A comparable claim is refuted by being worse beyond the margin, not by being better.
#[test]
fn comparable_is_refuted_only_from_below() {
    let looks = Looks::planned(16, 1);
    let mut rng = Rng::new(41);
    let margin = Test::Comparable { margin: 0.5 };
    let far_ahead = vec![comparison("B", draws(&mut rng, 16, 3.0))];
    assert_eq!(
        decide(&margin, &far_ahead, &looks).verdict,
        Verdict::Inconclusive
    );
    let far_behind = vec![comparison("B", draws(&mut rng, 16, -3.0))];
    assert_eq!(
        decide(&margin, &far_behind, &looks).verdict,
        Verdict::DoesNotHold
    );
}

/// One look at two independent samples is Welch's interval: scipy's
/// `ttest_ind(a, b, equal_var=False).confidence_interval(0.95)` gives
/// (−0.022286363929139963, 4.155619697262473) on these values (df 6.992986520299956).
#[test]
fn one_unpaired_look_is_welchs_interval() {
    let contrast = Contrast {
        against: "B".into(),
        first: vec![1.0, 2.5, 3.0, 4.5, 5.0, 6.5],
        second: vec![0.5, 0.7, 1.9, 2.0, 2.2, 2.8],
    };
    let got = decide_unpaired(&Test::Better, &[contrast], 1, &Looks::planned(6, 1));
    let c = &got.compared[0];
    assert!((c.low - -0.022286363929139963).abs() < 1e-9, "{c:?}");
    assert!((c.high - 4.155619697262473).abs() < 1e-9, "{c:?}");
    assert_eq!(got.verdict, Verdict::Inconclusive);
}

/// Better than any: identical policies are never refuted (nor confirmed), one comparator
/// beaten is enough, and every comparator beating the policy refutes it.
#[test]
fn better_than_any_needs_one_and_is_refuted_by_all() {
    let looks = Looks::planned(16, 4);
    let same = vec![
        comparison("copy", vec![0.0; 16]),
        comparison("c2", vec![0.0; 16]),
    ];
    let got = decide(&Test::BetterThanAny, &same, &looks);
    assert_eq!((got.verdict, got.n), (Verdict::Inconclusive, 16));
    let mut rng = Rng::new(51);
    let one = vec![
        comparison("beaten", draws(&mut rng, 16, 3.0)),
        comparison("beating", draws(&mut rng, 16, -3.0)),
    ];
    assert_eq!(
        decide(&Test::BetterThanAny, &one, &looks).verdict,
        Verdict::Holds
    );
    let none = vec![
        comparison("b1", draws(&mut rng, 16, -3.0)),
        comparison("b2", draws(&mut rng, 16, -3.0)),
    ];
    assert_eq!(
        decide(&Test::BetterThanAny, &none, &looks).verdict,
        Verdict::DoesNotHold
    );
    // With a comparator not run yet, one beaten already holds; refuting needs them all.
    let beaten = vec![comparison("b", draws(&mut rng, 16, 3.0))];
    assert_eq!(
        decide_among(&Test::BetterThanAny, &beaten, 2, &looks).verdict,
        Verdict::Holds
    );
    let beating = vec![comparison("b", draws(&mut rng, 16, -3.0))];
    assert_eq!(
        decide_among(&Test::BetterThanAny, &beating, 2, &looks).verdict,
        Verdict::Inconclusive
    );
}

/// Under no true difference from either comparator, a verdict either way over the four
/// looks stays at or below the level, for paired and for unpaired (Welch) comparisons; and
/// noise alone never yields "does not hold" on identical runs.
#[test]
fn better_than_any_keeps_its_level_over_looks() {
    let looks = Looks::planned(16, 4);
    let runs = 4000;
    let bound = 0.05 + 3.0 * (0.05f64 * 0.95 / runs as f64).sqrt();
    let mut rng = Rng::new(61);
    let (mut paired, mut unpaired) = (0, 0);
    for _ in 0..runs {
        let d: Vec<Comparison> = (0..2)
            .map(|j| comparison(&format!("B{j}"), draws(&mut rng, 16, 0.0)))
            .collect();
        paired +=
            usize::from(decide(&Test::BetterThanAny, &d, &looks).verdict != Verdict::Inconclusive);
        let c: Vec<Contrast> = (0..2)
            .map(|j| Contrast {
                against: format!("B{j}"),
                first: draws(&mut rng, 16, 0.0),
                second: draws(&mut rng, 16, 0.0),
            })
            .collect();
        unpaired += usize::from(
            decide_unpaired(&Test::BetterThanAny, &c, 2, &looks).verdict != Verdict::Inconclusive,
        );
    }
    assert!((paired as f64 / runs as f64) <= bound, "paired {paired}");
    assert!(
        (unpaired as f64 / runs as f64) <= bound,
        "unpaired {unpaired}"
    );
}

/// One comparator better by a known amount and one far worse: Holm tests the worse first
/// (at α/2, rejecting it) and the shifted one at α, so the claim holds look by look as the
/// single comparison's boundary-crossing probabilities predict.
#[test]
fn better_than_any_is_decided_where_power_predicts() {
    let (n_max, shift) = (64, 0.4);
    let looks = Looks::planned(n_max, 4);
    let fractions = looks.fractions();
    let bounds = critical_values(&looks);
    let predicted = boundary::crossing_probabilities(&bounds, &fractions, shift * 8.0);
    let mut rng = Rng::new(71);
    let runs = 3000;
    let mut decided_by = vec![0usize; looks.sizes().len()];
    for _ in 0..runs {
        let d = vec![
            comparison("beaten", draws(&mut rng, n_max, shift)),
            comparison("beating", draws(&mut rng, n_max, -3.0)),
        ];
        let got = decide(&Test::BetterThanAny, &d, &looks);
        assert_ne!(got.verdict, Verdict::DoesNotHold);
        if got.verdict == Verdict::Holds {
            let k = looks.sizes().iter().position(|&s| s == got.n).unwrap();
            for slot in &mut decided_by[k..] {
                *slot += 1;
            }
        }
    }
    let mut cumulative = 0.0;
    for (k, (up, _)) in predicted.iter().enumerate() {
        cumulative += up;
        let seen = decided_by[k] as f64 / runs as f64;
        assert!(
            (seen - cumulative).abs() < 0.03,
            "look {k}: {seen} vs {cumulative}"
        );
    }
}
