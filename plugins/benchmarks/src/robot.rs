//! Energy-aware robot pushing (seed 001 §5.1, after Wang & Jegelka 2017): a robot starting
//! at z ∈ [−5, 5]² pushes toward an object resting at the origin for t ∈ [1, 30] time
//! units; the objective is −‖w_target − w_push(z, t)‖ for a target drawn per replication
//! uniformly from {1 < |w₁|, |w₂| < 5}, and the cost is the distance the object moved plus
//! a constant ε (the energy spent pushing).
//!
//! # Physics
//! A planar simulator of quasi-static pushing (the regime of Mason's pushing mechanics, in
//! which friction with the table dominates inertia, so an object moves only while it is
//! pushed and stops when the pusher stops):
//! - robot and object are discs whose radii sum to [`CONTACT_DISTANCE`] = 0.5;
//! - the robot moves in a straight line toward the object's initial position (the origin)
//!   at constant speed [`ROBOT_SPEED`] = 0.4 for the whole duration t;
//! - it reaches the object after covering the gap g = max(0, ‖z‖ − 0.5); from then on the
//!   contact is centred (the line of motion passes through both centres), so the contact
//!   force has no torque or sideways component and the object translates with the robot;
//! - when the robot stops, the object stops.
//!
//! So w_push = u · max(0, 0.4 t − g) with u = −z/‖z‖ (a robot starting exactly at the
//! origin has no direction and moves nothing). Every target of the region lies at distance
//! √2…5√2 from the origin, inside the reachable [0.4, 12] along any heading, so the optimum
//! is exactly 0.

use crate::synthetic::check_unit_query;
use cabo_core::{
    Error, Outcome, Problem, ProblemInfo, ProblemSpec, Query, Result, Rng, derive_seed,
};
use serde::{Deserialize, Serialize};

/// Sum of the robot's and the object's radii: centre distance at contact.
pub const CONTACT_DISTANCE: f64 = 0.5;
/// Robot speed, in distance units per time unit.
pub const ROBOT_SPEED: f64 = 0.4;

/// The object's final position after a push from `z` lasting `t` (native units).
pub fn push(z: [f64; 2], t: f64) -> [f64; 2] {
    let r = (z[0] * z[0] + z[1] * z[1]).sqrt();
    if r == 0.0 {
        return [0.0, 0.0];
    }
    let gap = (r - CONTACT_DISTANCE).max(0.0);
    let moved = (ROBOT_SPEED * t - gap).max(0.0);
    [-z[0] / r * moved, -z[1] / r * moved]
}

/// Spec of [`RobotPush`] (`problem: { type: robot_push }`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RobotPushSpec {
    /// Fixed target; default drawn per replication from {1 < |w₁|, |w₂| < 5}.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<[f64; 2]>,
    /// Constant ε added to the cost; default 0.1.
    #[serde(default = "default_epsilon")]
    pub epsilon: f64,
}

fn default_epsilon() -> f64 {
    0.1
}

impl RobotPushSpec {
    fn check(&self) -> Result<()> {
        if !(self.epsilon.is_finite() && self.epsilon > 0.0) {
            return Err(Error::invalid(format!(
                "robot_push.epsilon: must be finite and > 0 (costs must be positive), got {}",
                self.epsilon
            )));
        }
        if let Some(w) = self.target
            && !(w[0].is_finite() && w[1].is_finite())
        {
            return Err(Error::invalid(format!(
                "robot_push.target: must be finite, got {w:?}"
            )));
        }
        Ok(())
    }
}

#[cabo_core::plugin(
    name = "robot_push",
    summary = "Energy-aware robot pushing: choose start z in [-5,5]^2 and duration t in [1,30]; value -distance to a random target, cost = distance pushed + eps",
    paper = "seed 001 §5.1",
    example = "{ type: robot_push }"
)]
impl ProblemSpec for RobotPushSpec {
    fn dim(&self) -> Result<usize> {
        self.check()?;
        Ok(3)
    }
    fn build(&self, seed: u64) -> Result<Box<dyn Problem>> {
        self.check()?;
        let target = self.target.unwrap_or_else(|| {
            let mut rng = Rng::new(derive_seed(&[&"robot_push target", &seed]));
            let mut coord = || {
                let m = rng.uniform_in(1.0, 5.0);
                if rng.uniform() < 0.5 { -m } else { m }
            };
            [coord(), coord()]
        });
        // The optimum 0 is attainable only for targets inside the reachable annulus.
        let dist = (target[0] * target[0] + target[1] * target[1]).sqrt();
        let reachable = (ROBOT_SPEED..=30.0 * ROBOT_SPEED).contains(&dist);
        Ok(Box::new(RobotPush {
            info: ProblemInfo::continuous("robot_push", 3),
            target,
            epsilon: self.epsilon,
            optimum: reachable.then_some(0.0),
        }))
    }
}

/// One replication of the robot-pushing problem (inputs: z₁, z₂, t scaled to \[0,1\]).
#[derive(Debug)]
pub struct RobotPush {
    info: ProblemInfo,
    target: [f64; 2],
    epsilon: f64,
    optimum: Option<f64>,
}

impl RobotPush {
    /// The replication's target.
    pub fn target(&self) -> [f64; 2] {
        self.target
    }
}

impl Problem for RobotPush {
    fn info(&self) -> &ProblemInfo {
        &self.info
    }
    fn evaluate(&self, query: &Query, _seed: u64) -> Result<Outcome> {
        check_unit_query("robot_push", 3, query)?;
        let n = self.to_native(&query.x);
        let w = push([n[0], n[1]], n[2]);
        let value = -((self.target[0] - w[0]).powi(2) + (self.target[1] - w[1]).powi(2)).sqrt();
        Ok(Outcome::new(
            value,
            (w[0] * w[0] + w[1] * w[1]).sqrt() + self.epsilon,
            query.x.clone(),
            Some(value),
        ))
    }
    fn optimum(&self) -> Option<f64> {
        self.optimum
    }
    fn to_native(&self, x: &[f64]) -> Vec<f64> {
        vec![-5.0 + 10.0 * x[0], -5.0 + 10.0 * x[1], 1.0 + 29.0 * x[2]]
    }
    /// The robot's position in [−5, 5]² and the push duration in [1, 30] back in `[0,1]³`.
    fn native_to_unit(&self, native: &[f64]) -> Vec<f64> {
        vec![
            (native[0] + 5.0) / 10.0,
            (native[1] + 5.0) / 10.0,
            (native[2] - 1.0) / 29.0,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(w: [f64; 2]) -> f64 {
        (w[0] * w[0] + w[1] * w[1]).sqrt()
    }

    #[test]
    fn the_object_moves_along_the_robots_heading_by_the_pushed_distance() {
        let z = [3.0, -4.0]; // ‖z‖ = 5, gap 4.5, contact at t = 11.25
        assert_eq!(push(z, 11.0), [0.0, 0.0]);
        for t in [12.0, 20.0, 30.0] {
            let w = push(z, t);
            let moved = 0.4 * t - 4.5;
            assert!((norm(w) - moved).abs() < 1e-12);
            // Parallel to −z: the cross product vanishes and the dot product is negative.
            assert!((w[0] * z[1] - w[1] * z[0]).abs() < 1e-12);
            assert!(w[0] * z[0] + w[1] * z[1] < 0.0);
        }
        // Monotone in duration, continuous at first contact, nothing from the origin.
        assert!(norm(push(z, 11.25 + 1e-9)) < 1e-9);
        assert_eq!(push([0.0, 0.0], 30.0), [0.0, 0.0]);
        // Starting in contact, the push begins at once.
        assert!((norm(push([0.3, 0.0], 2.0)) - 0.8).abs() < 1e-12);
    }

    #[test]
    fn targets_lie_in_the_region_and_the_optimum_is_attained() {
        let spec: Box<dyn ProblemSpec> = serde_json::from_str(r#"{"type":"robot_push"}"#).unwrap();
        for seed in 0..200 {
            let p = spec.build(seed).unwrap();
            let r = p.as_any().downcast_ref::<RobotPush>().unwrap();
            let w = r.target();
            assert!(w.iter().all(|v| v.abs() > 1.0 && v.abs() < 5.0), "{w:?}");
            assert_eq!(p.optimum(), Some(0.0));
            // Start just touching on the far side of the target, push for |w|/0.4.
            let d = norm(w);
            let z = [-0.5 * w[0] / d, -0.5 * w[1] / d];
            let x = vec![
                (z[0] + 5.0) / 10.0,
                (z[1] + 5.0) / 10.0,
                (d / 0.4 - 1.0) / 29.0,
            ];
            let out = p.evaluate(&Query::at(x), 0).unwrap();
            assert!(out.y.abs() < 1e-9 && out.y <= 0.0, "{}", out.y);
            assert!((out.cost - (d + 0.1)).abs() < 1e-9);
        }
        let far = RobotPushSpec {
            target: Some([20.0, 0.0]),
            epsilon: 0.1,
        }
        .build(0)
        .unwrap();
        assert_eq!(far.optimum(), None);
    }

    #[test]
    fn native_to_unit_inverts_to_native() {
        let p = RobotPushSpec {
            target: Some([3.0, 4.0]),
            epsilon: 0.25,
        }
        .build(0)
        .unwrap();
        assert_eq!(p.native_to_unit(&[-5.0, 5.0, 30.0]), vec![0.0, 1.0, 1.0]);
        let mut rng = Rng::new(3);
        for _ in 0..500 {
            let z = [
                rng.uniform_in(-5.0, 5.0),
                rng.uniform_in(-5.0, 5.0),
                rng.uniform_in(1.0, 30.0),
            ];
            let back = p.to_native(&p.native_to_unit(&z));
            let u = [rng.uniform(), rng.uniform(), rng.uniform()];
            let again = p.native_to_unit(&p.to_native(&u));
            for i in 0..3 {
                assert!((back[i] - z[i]).abs() <= 1e-12 * 30.0, "{z:?} → {back:?}");
                assert!((again[i] - u[i]).abs() <= 1e-12, "{u:?} → {again:?}");
            }
        }
    }

    #[test]
    fn no_push_costs_epsilon_and_leaves_the_object_home() {
        let p = RobotPushSpec {
            target: Some([3.0, 4.0]),
            epsilon: 0.25,
        }
        .build(0)
        .unwrap();
        // Robot at a corner (‖z‖ ≈ 7.07) for t = 1 never reaches the object.
        let out = p.evaluate(&Query::at(vec![0.0, 0.0, 0.0]), 0).unwrap();
        assert_eq!(out.cost, 0.25);
        assert!((out.y + 5.0).abs() < 1e-12);
        assert!(p.evaluate(&Query::at(vec![0.0, 0.0]), 0).is_err());
        let bad: Box<dyn ProblemSpec> =
            serde_json::from_str(r#"{"type":"robot_push","epsilon":0}"#).unwrap();
        assert!(
            bad.dim()
                .unwrap_err()
                .to_string()
                .contains("robot_push.epsilon")
        );
    }
}
