//! Points in flight: how a policy decides while other evaluations are still running.
//!
//! With several workers (`workers:` in a spec) a policy decides while the points other
//! workers are evaluating have no outcome yet. cabo hands every policy the same view: the
//! pending points appended to the data with a *fantasised* outcome, and the budget charged
//! with their fantasised costs, so that a policy needs no code of its own for pending
//! points and a cost-aware one sees the cost already committed. A [`PendingRule`] says what
//! the fantasised value is; [`crate::DecisionContext::fantasies`] says how many of the
//! data's last observations are fantasies.

use serde::{Deserialize, Serialize};

/// The joint draws of the pending points' outcomes that [`PendingRule::SampledFantasies`]
/// averages an acquisition over: a Monte-Carlo average with a quarter of one draw's spread,
/// for 16 acquisition evaluations per point.
pub const SAMPLED_FANTASIES: usize = 16;

/// What a pending point is taken to have returned while a policy decides.
///
/// BoTorch's Monte-Carlo acquisitions take `X_pending` jointly: they integrate over the
/// pending outcomes by sampling them together with the q-batch. The Kriging believer
/// conditions on one value per pending point instead, the posterior mean, which leaves the
/// mean unchanged and shrinks the variance at and near the pending points; it is exact for
/// acquisitions that depend on the posterior variance only through the pending points'
/// information gain, and an approximation otherwise (Ginsbourger, Le Riche & Carraro 2010).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PendingRule {
    /// The posterior mean at the point, the model's hyperparameters kept (the posterior is
    /// conditioned where the model offers [`crate::capability::Fantasize`], refitted on the
    /// fantasies otherwise). Without a model, the mean of the values observed.
    KrigingBeliever,
    /// The smallest value observed: a pessimistic lie for cabo's maximisation, which keeps
    /// later points of a batch away from the pending ones.
    ConstantLiarMin,
    /// The mean of the values observed.
    ConstantLiarMean,
    /// The largest value observed: an optimistic lie.
    ConstantLiarMax,
    /// The Kriging believer in the data, and besides [`SAMPLED_FANTASIES`] joint draws of the
    /// pending points' outcomes from the posterior, each conditioned on: a policy that
    /// maximises an acquisition averages it over the draws (Monte-Carlo integration over the
    /// pending outcomes, as BoTorch's `X_pending` does), other policies decide on the
    /// believer. Needs a model that offers covariances and conditioning; without, it is the
    /// Kriging believer.
    SampledFantasies,
    /// No fantasy: the acquisition, fitted on the observations alone, is multiplied by a
    /// penalty around each pending point, the probability that the point's ball of
    /// Lipschitz-excluded optima does not hold `x` (González, Dai, Hennig & Lawrence 2016).
    /// For policies that maximise one acquisition.
    LocalPenalization,
}

impl PendingRule {
    /// Every rule, in the order the documentation lists them.
    pub const ALL: [PendingRule; 6] = [
        PendingRule::KrigingBeliever,
        PendingRule::ConstantLiarMin,
        PendingRule::ConstantLiarMean,
        PendingRule::ConstantLiarMax,
        PendingRule::SampledFantasies,
        PendingRule::LocalPenalization,
    ];

    /// The name a spec writes (`pending: kriging_believer`).
    pub fn name(self) -> &'static str {
        match self {
            PendingRule::KrigingBeliever => "kriging_believer",
            PendingRule::ConstantLiarMin => "constant_liar_min",
            PendingRule::ConstantLiarMean => "constant_liar_mean",
            PendingRule::ConstantLiarMax => "constant_liar_max",
            PendingRule::SampledFantasies => "sampled_fantasies",
            PendingRule::LocalPenalization => "local_penalization",
        }
    }

    /// Whether the rule puts the pending points in the data as fantasies (every rule but
    /// local penalisation, which penalises the acquisition around them instead).
    pub fn fantasises(self) -> bool {
        self != PendingRule::LocalPenalization
    }

    /// Whether the rule needs the objective's posterior (a model fit) to fantasise.
    pub fn needs_posterior(self) -> bool {
        matches!(
            self,
            PendingRule::KrigingBeliever | PendingRule::SampledFantasies
        )
    }

    /// The constant liar's value given the values observed `ys` (`None` for the Kriging
    /// believer, and for no observation).
    pub fn lie(self, ys: &[f64]) -> Option<f64> {
        if ys.is_empty() {
            return None;
        }
        match self {
            PendingRule::KrigingBeliever
            | PendingRule::SampledFantasies
            | PendingRule::LocalPenalization => None,
            PendingRule::ConstantLiarMin => ys.iter().copied().reduce(f64::min),
            PendingRule::ConstantLiarMean => Some(ys.iter().sum::<f64>() / ys.len() as f64),
            PendingRule::ConstantLiarMax => ys.iter().copied().reduce(f64::max),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lies_are_the_extremes_and_the_mean_of_what_was_observed() {
        let ys = [1.0, -2.0, 4.0];
        assert_eq!(PendingRule::ConstantLiarMin.lie(&ys), Some(-2.0));
        assert_eq!(PendingRule::ConstantLiarMean.lie(&ys), Some(1.0));
        assert_eq!(PendingRule::ConstantLiarMax.lie(&ys), Some(4.0));
        assert_eq!(PendingRule::KrigingBeliever.lie(&ys), None);
        assert_eq!(PendingRule::ConstantLiarMin.lie(&[]), None);
    }

    #[test]
    fn names_are_what_serde_reads() {
        for rule in PendingRule::ALL {
            let read: PendingRule = serde_json::from_str(&format!("{:?}", rule.name())).unwrap();
            assert_eq!(read, rule);
        }
    }
}
