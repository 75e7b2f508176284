//! `cargo xtask new-plugin <kind> <name>`: a new plugin crate under `plugins/<name>/` that
//! compiles and passes its tests as generated — a working plugin of the kind, its spec type,
//! its registration, a unit test, and a smoke spec under `specs/` — and the two edits that
//! link it from the facade (`PLUGIN_CRATES` and the facade's dependency).

use std::fmt::Write;
use std::path::{Path, PathBuf};

/// The kinds a plugin can be scaffolded for.
pub const KINDS: &[&str] = &["acquisition", "problem", "policy"];

/// What was created.
#[derive(Debug, Clone)]
pub struct Scaffolded {
    /// The crate directory.
    pub crate_dir: PathBuf,
    /// The smoke spec.
    pub spec: PathBuf,
    /// The package name (`cabo-<name>`).
    pub package: String,
}

fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.ends_with('-')
        && !name.contains("--");
    if ok {
        Ok(())
    } else {
        Err(format!(
            "plugin name {name:?}: use lowercase letters, digits and single `-` (starting with \
             a letter), e.g. `my-acquisition`; the crate becomes cabo-<name>, the plugin's \
             `type` uses `_` for `-`"
        ))
    }
}

fn camel(name: &str) -> String {
    name.split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// Creates the crate and links it; returns a message naming what was written.
pub fn new_plugin(workspace: &Path, kind: &str, name: &str) -> Result<String, String> {
    let s = scaffold(workspace, kind, name)?;
    Ok(format!(
        "created {} (package {}) and {}, and linked it from app/cabo\n\
         try: cargo test -p {} && cargo xtask run {} --smoke",
        s.crate_dir.display(),
        s.package,
        s.spec.display(),
        s.package,
        s.spec.display()
    ))
}

/// Creates the crate, the smoke spec and the facade edits.
pub fn scaffold(workspace: &Path, kind: &str, name: &str) -> Result<Scaffolded, String> {
    if !KINDS.contains(&kind) {
        let closest = cabo::core::registry::closest_of(kind, KINDS)
            .map(|c| format!(" (did you mean `{c}`?)"))
            .unwrap_or_default();
        return Err(format!(
            "unknown plugin kind `{kind}`{closest}; new-plugin scaffolds one of: {}",
            KINDS.join(", ")
        ));
    }
    check_name(name)?;
    let facade_lib = workspace.join("app/cabo/src/lib.rs");
    let facade_toml = workspace.join("app/cabo/Cargo.toml");
    if !facade_lib.is_file() || !facade_toml.is_file() {
        return Err(format!(
            "{}: not the cabo workspace (no app/cabo/src/lib.rs); run from the workspace \
             root or pass --workspace DIR",
            workspace.display()
        ));
    }
    let crate_dir = workspace.join("plugins").join(name);
    let package = format!("cabo-{name}");
    let spec = workspace.join("specs").join(format!("{name}-smoke.yaml"));
    if crate_dir.exists() {
        return Err(format!(
            "{} already exists: choose another name",
            crate_dir.display()
        ));
    }
    if spec.exists() {
        return Err(format!(
            "{} already exists: choose another name",
            spec.display()
        ));
    }
    let lib = std::fs::read_to_string(&facade_lib)
        .map_err(|e| format!("{}: {e}", facade_lib.display()))?;
    let toml = std::fs::read_to_string(&facade_toml)
        .map_err(|e| format!("{}: {e}", facade_toml.display()))?;
    let ident = package.replace('-', "_");
    let anchor = "const PLUGIN_CRATES: &[(&str, fn())] = &[\n";
    let Some(at) = lib.find(anchor) else {
        return Err(format!(
            "{}: cannot find `{}` to add the crate to",
            facade_lib.display(),
            anchor.trim_end()
        ));
    };
    let mut new_lib = lib.clone();
    new_lib.insert_str(
        at + anchor.len(),
        &format!("    (\"{package}\", {ident}::link),\n"),
    );
    let mut new_toml = toml.trim_end().to_string();
    let _ = writeln!(
        new_toml,
        "\n{package} = {{ path = \"../../plugins/{name}\" }}"
    );
    if !toml.contains("[dependencies]") {
        return Err(format!(
            "{}: no [dependencies] table",
            facade_toml.display()
        ));
    }

    let type_name = name.replace('-', "_");
    let files = templates(kind, name, &type_name, &package);
    std::fs::create_dir_all(crate_dir.join("src"))
        .map_err(|e| format!("{}: {e}", crate_dir.display()))?;
    for (rel, text) in files {
        let p = crate_dir.join(rel);
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    // Names change line lengths, so the templates are formatted after substitution; without
    // rustfmt the code still compiles, it is only laid out differently.
    let _ = std::process::Command::new("rustfmt")
        .args(["--edition", "2024"])
        .arg(crate_dir.join("src/lib.rs"))
        .status();
    if let Some(d) = spec.parent() {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    std::fs::write(&spec, smoke_spec(kind, name, &type_name))
        .map_err(|e| format!("{}: {e}", spec.display()))?;
    std::fs::write(&facade_lib, new_lib).map_err(|e| format!("{}: {e}", facade_lib.display()))?;
    std::fs::write(&facade_toml, new_toml)
        .map_err(|e| format!("{}: {e}", facade_toml.display()))?;
    Ok(Scaffolded {
        crate_dir,
        spec,
        package,
    })
}

fn cargo_toml(package: &str, kind: &str) -> String {
    format!(
        r#"[package]
name = "{package}"
description = "A cabo {kind} plugin."
version.workspace = true
edition.workspace = true
license.workspace = true

[dependencies]
cabo-core.workspace = true
serde.workspace = true
typetag.workspace = true

[dev-dependencies]
serde_json.workspace = true
"#
    )
}

fn templates(
    kind: &str,
    name: &str,
    type_name: &str,
    package: &str,
) -> Vec<(&'static str, String)> {
    let camel = camel(name);
    let body = match kind {
        "acquisition" => ACQUISITION,
        "problem" => PROBLEM,
        _ => POLICY,
    };
    let lib = format!(
        "//! # {package}\n//!\n//! A cabo {kind} plugin: `{{ type: {type_name} }}`.\n\n#![forbid(unsafe_code)]\n#![warn(missing_docs)]\n\n/// Keeps this crate's plugin registrations in every binary that links the facade.\npub fn link() {{}}\n\n{}\n",
        // The templates spell the registration macros with placeholders: the workspace's
        // catalogue test scans sources for them and would take the templates for plugins.
        body.replace("REGISTER_PLUGIN", "register_plugin")
            .replace("TYPETAG_SERDE", "typetag::serde")
            .replace("NAME_TYPE", type_name)
            .replace("Camel", &camel)
            .trim_end()
    );
    vec![
        ("Cargo.toml", cargo_toml(package, kind)),
        ("src/lib.rs", lib),
    ]
}

fn smoke_spec(kind: &str, name: &str, type_name: &str) -> String {
    let (problem, policy) = match kind {
        "acquisition" => (
            "{ type: branin }".to_string(),
            format!("    acquisition: {{ type: {type_name}, beta: 2.0 }}"),
        ),
        "problem" => (
            format!("{{ type: {type_name}, dim: 2 }}"),
            "    policy: { type: random_search }".to_string(),
        ),
        _ => (
            "{ type: branin }".to_string(),
            format!("    policy: {{ type: {type_name}, step: 0.1 }}"),
        ),
    };
    let model = if kind == "acquisition" {
        "model: { type: exact_gp, kernel: { type: matern52 }, fit: map, prior: gamma, standardize: true }\n"
    } else {
        ""
    };
    format!(
        "# Smoke spec of the {name} plugin (generated by `cargo xtask new-plugin`).\n\
         name: {name}-smoke\n\
         replications: 2\n\
         problem: {problem}\n\
         budget: {{ iterations: 4 }}\n\
         initial_design: {{ type: sobol, points: 3 }}\n\
         {model}\
         policies:\n  - name: {name}\n{policy}\n\
         optimizer: {{ raw_samples: 32, restarts: 2, max_iters: 30 }}\n\
         smoke: {{ replications: 1 }}\n"
    )
}

const ACQUISITION: &str = r##"use cabo_core::{
    Acquisition, AcquisitionFn, AcquisitionSpec, BuildContext, DecisionContext, Error, Kind,
    Objective, Posterior, Result,
};
use serde::{Deserialize, Serialize};

/// Spec of [`Camel`]: `acquisition: { type: NAME_TYPE, beta: 2.0 }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CamelSpec {
    /// Weight of the posterior standard deviation (exploration).
    #[serde(default = "default_beta")]
    pub beta: f64,
}

fn default_beta() -> f64 {
    2.0
}

#[TYPETAG_SERDE(name = "NAME_TYPE")]
impl AcquisitionSpec for CamelSpec {
    fn validate(&self, _dim: usize) -> Result<()> {
        if self.beta.is_finite() && self.beta >= 0.0 {
            Ok(())
        } else {
            Err(Error::invalid(format!(
                "NAME_TYPE: `beta` must be finite and non-negative, got {}",
                self.beta
            )))
        }
    }

    fn build(&self, _ctx: &BuildContext<'_>) -> Result<Box<dyn Acquisition>> {
        Ok(Box::new(Camel { beta: self.beta }))
    }
}

cabo_core::REGISTER_PLUGIN!(
    Kind::Acquisition,
    "NAME_TYPE",
    summary: "Posterior mean plus beta posterior standard deviations (edit me)",
    paper: "standard",
    example: "{ type: NAME_TYPE, beta: 2.0 }",
);

/// The acquisition: mean + beta·sd of the posterior.
pub struct Camel {
    beta: f64,
}

/// The score and its derivatives with respect to mean and variance, kept apart from the
/// posterior so it can be tested by hand.
pub fn score(mean: f64, var: f64, beta: f64) -> (f64, f64, f64) {
    let sd = var.max(0.0).sqrt();
    let dvar = if sd > 0.0 { beta / (2.0 * sd) } else { 0.0 };
    (mean + beta * sd, 1.0, dvar)
}

impl Acquisition for Camel {
    fn prepare<'a>(&'a self, ctx: &'a DecisionContext<'a>) -> Result<Box<dyn AcquisitionFn + 'a>> {
        Ok(Box::new(CamelFn {
            posterior: ctx.posterior()?,
            beta: self.beta,
        }))
    }
}

struct CamelFn<'a> {
    posterior: &'a dyn Posterior,
    beta: f64,
}

impl Objective for CamelFn<'_> {
    fn value(&self, x: &[f64]) -> f64 {
        let mv = self.posterior.mean_var(x);
        score(mv.mean, mv.var, self.beta).0
    }

    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        match self.posterior.mean_var_grad(x) {
            Ok(m) => {
                let (v, dmean, dvar) = score(m.mean, m.var, self.beta);
                for (i, g) in grad.iter_mut().enumerate() {
                    *g = dmean * m.dmean[i] + dvar * m.dvar[i];
                }
                v
            }
            // The optimiser treats NaN as a failed step.
            Err(_) => f64::NAN,
        }
    }
}

// Neither a stopping rule nor diagnostics: the defaults.
impl AcquisitionFn for CamelFn<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_matches_hand_computation() {
        let (v, dm, dv) = score(1.0, 4.0, 2.0);
        assert_eq!(v, 5.0);
        assert_eq!(dm, 1.0);
        assert_eq!(dv, 0.5);
        // Finite-difference check of the variance derivative.
        let h = 1e-6;
        let fd = (score(1.0, 4.0 + h, 2.0).0 - score(1.0, 4.0 - h, 2.0).0) / (2.0 * h);
        assert!((fd - dv).abs() < 1e-6);
    }

    #[test]
    fn spec_parses_by_type_and_rejects_bad_beta() {
        let spec: Box<dyn AcquisitionSpec> =
            serde_json::from_str(r#"{"type": "NAME_TYPE", "beta": 1.5}"#).unwrap();
        assert!(spec.validate(2).is_ok());
        let bad: Box<dyn AcquisitionSpec> =
            serde_json::from_str(r#"{"type": "NAME_TYPE", "beta": -1.0}"#).unwrap();
        assert!(bad.validate(2).is_err());
    }
}
"##;

const PROBLEM: &str = r##"use cabo_core::{
    Error, Kind, Outcome, Problem, ProblemInfo, ProblemSpec, Query, Result, Rng,
};
use serde::{Deserialize, Serialize};
use std::any::Any;

/// Spec of [`Camel`]: `problem: { type: NAME_TYPE, dim: 2 }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CamelSpec {
    /// Input dimension.
    pub dim: usize,
    /// Standard deviation of the observation noise.
    #[serde(default)]
    pub noise: f64,
}

#[TYPETAG_SERDE(name = "NAME_TYPE")]
impl ProblemSpec for CamelSpec {
    fn dim(&self) -> Result<usize> {
        if self.dim == 0 {
            return Err(Error::invalid("NAME_TYPE: `dim` must be at least 1"));
        }
        if !(self.noise.is_finite() && self.noise >= 0.0) {
            return Err(Error::invalid("NAME_TYPE: `noise` must be finite and non-negative"));
        }
        Ok(self.dim)
    }

    fn build(&self, seed: u64) -> Result<Box<dyn Problem>> {
        let dim = self.dim()?;
        // The replication's seed places the optimum, so replications differ.
        let mut rng = Rng::new(seed);
        let centre = (0..dim).map(|_| rng.uniform_in(0.2, 0.8)).collect();
        Ok(Box::new(Camel {
            info: ProblemInfo::continuous("NAME_TYPE", dim),
            centre,
            noise: self.noise,
        }))
    }
}

cabo_core::REGISTER_PLUGIN!(
    Kind::Problem,
    "NAME_TYPE",
    summary: "Negative squared distance to a random centre (edit me)",
    paper: "standard",
    example: "{ type: NAME_TYPE, dim: 2 }",
);

/// f(x) = −‖x − c‖², maximised (value 0) at the centre c.
pub struct Camel {
    info: ProblemInfo,
    centre: Vec<f64>,
    noise: f64,
}

impl Camel {
    /// The noise-free value at a unit-cube point.
    pub fn value(&self, x: &[f64]) -> f64 {
        -x.iter()
            .zip(&self.centre)
            .map(|(a, c)| (a - c).powi(2))
            .sum::<f64>()
    }
}

impl Problem for Camel {
    fn info(&self) -> &ProblemInfo {
        &self.info
    }

    fn evaluate(&self, query: &Query, seed: u64) -> Result<Outcome> {
        let value = self.value(&query.x);
        let y = value + self.noise * Rng::new(seed).normal();
        Ok(Outcome {
            y,
            cost: 1.0,
            x: query.x.clone(),
            value: Some(value),
        })
    }

    fn optimum(&self) -> Option<f64> {
        Some(0.0)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_centre_attains_the_optimum() {
        let spec = CamelSpec { dim: 3, noise: 0.0 };
        let p = spec.build(7).unwrap();
        let c = p.as_any().downcast_ref::<Camel>().unwrap().centre.clone();
        let at_centre = p.evaluate(&Query::at(c), 1).unwrap();
        assert_eq!(at_centre.value, p.optimum());
        let corner = p.evaluate(&Query::at(vec![0.0; 3]), 2).unwrap();
        assert!(corner.y < 0.0);
    }

    #[test]
    fn spec_parses_by_type_and_rejects_dimension_zero() {
        let spec: Box<dyn ProblemSpec> =
            serde_json::from_str(r#"{"type": "NAME_TYPE", "dim": 2}"#).unwrap();
        assert_eq!(spec.dim().unwrap(), 2);
        let bad: Box<dyn ProblemSpec> =
            serde_json::from_str(r#"{"type": "NAME_TYPE", "dim": 0}"#).unwrap();
        assert!(bad.dim().is_err());
    }
}
"##;

const POLICY: &str = r##"use cabo_core::{
    BuildContext, Decision, DecisionContext, Domain, Error, Kind, Policy, PolicySpec, Query,
    Result, Rng,
};
use serde::{Deserialize, Serialize};

/// Spec of [`Camel`]: `policy: { type: NAME_TYPE, step: 0.1 }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CamelSpec {
    /// Half-width of the uniform perturbation of the incumbent, in unit-cube units.
    pub step: f64,
}

#[TYPETAG_SERDE(name = "NAME_TYPE")]
impl PolicySpec for CamelSpec {
    fn validate(&self, _dim: usize) -> Result<()> {
        if self.step > 0.0 && self.step <= 1.0 {
            Ok(())
        } else {
            Err(Error::invalid(format!(
                "NAME_TYPE: `step` must be in (0, 1], got {}",
                self.step
            )))
        }
    }

    fn build(&self, _ctx: &BuildContext<'_>) -> Result<Box<dyn Policy>> {
        Ok(Box::new(Camel { step: self.step }))
    }
}

cabo_core::REGISTER_PLUGIN!(
    Kind::Policy,
    "NAME_TYPE",
    summary: "Uniform perturbation of the best point so far (edit me)",
    paper: "standard",
    example: "{ type: NAME_TYPE, step: 0.1 }",
);

/// Proposes the incumbent moved by a uniform step in every coordinate, clipped to the cube.
pub struct Camel {
    step: f64,
}

impl Policy for Camel {
    fn decide(&mut self, ctx: &DecisionContext<'_>) -> Result<Decision> {
        if !matches!(ctx.problem.domain, Domain::Continuous) {
            return Err(Error::invalid("NAME_TYPE: needs a continuous domain"));
        }
        // Every draw comes from the decision's seed, so runs replay exactly.
        let mut rng = Rng::new(ctx.seed);
        let d = ctx.problem.dim;
        let x = match ctx.data.best() {
            Some(best) => best
                .query
                .x
                .iter()
                .map(|v| (v + rng.uniform_in(-self.step, self.step)).clamp(0.0, 1.0))
                .collect(),
            None => (0..d).map(|_| rng.uniform()).collect(),
        };
        Ok(Decision::Evaluate(Query::at(x)))
    }

    // Nothing is carried between decisions, so an interrupted run resumes from its last
    // checkpoint. A policy with state encodes it here instead (see `Policy::checkpoint`).
    cabo_core::stateless_checkpoint!("NAME_TYPE");
}

#[cfg(test)]
mod tests {
    use super::*;
    use cabo_core::{
        Budget, BudgetState, Dataset, Observation, OptimizerSpec, Outcome, Phase, ProblemInfo,
    };

    #[test]
    fn proposals_stay_within_a_step_of_the_incumbent() {
        let info = ProblemInfo::continuous("test", 2);
        let mut data = Dataset::new(2);
        let x = vec![0.5, 0.9];
        data.push(Observation {
            query: Query::at(x.clone()),
            outcome: Outcome {
                y: 1.0,
                cost: 1.0,
                x: x.clone(),
                value: None,
            },
            phase: Phase::Initial,
        })
        .unwrap();
        let budget = BudgetState::new(Budget {
            cost: None,
            iterations: Some(5),
        });
        let settings = OptimizerSpec::default().resolve(2).unwrap();
        let mut policy = Camel { step: 0.1 };
        for seed in 0..20 {
            let ctx = DecisionContext::new(&info, &data, &budget, 1, seed, &settings);
            let Decision::Evaluate(q) = policy.decide(&ctx).unwrap() else {
                panic!("the policy never stops");
            };
            for (a, b) in q.x.iter().zip(&x) {
                assert!((a - b).abs() <= 0.1 + 1e-12 && (0.0..=1.0).contains(a));
            }
        }
    }

    #[test]
    fn spec_rejects_a_bad_step() {
        let bad: Box<dyn PolicySpec> =
            serde_json::from_str(r#"{"type": "NAME_TYPE", "step": 0.0}"#).unwrap();
        assert!(bad.validate(2).is_err());
    }
}
"##;
