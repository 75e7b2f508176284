//! The tree policies' scenario trees as [`Lookahead`]s: what `bmsei`, `ms_ei` and `kg` would
//! maximise at one decision, evaluated at given node points with given base samples or the
//! policy's own, so that an outsider can check each tree value for value (`cargo xtask
//! inspect`, key `lookahead:`).
//!
//! The tree is built as [`TreePolicy`]'s decision builds it: the same incumbent (the best
//! observed value), the same budget (B-MS-EI's scheduled or remaining budget, multi-step EI's
//! iterations left, none for KG), the same node values, and for KG the model's faster
//! fantasy means where it offers them. Only the points are the caller's.

use crate::belief::UnitCostPath;
use crate::kg::KgObjective;
use crate::policy::{BaseSampleScheme, BmseiSpec, KgSpec, MsEiSpec, TreePolicy, Variant, kg_form};
use crate::tree::{NodeValue, Tree, TreeObjective};
use cabo_core::capability::{self, Capability, Covariance};
use cabo_core::{
    DecisionContext, Diagnostics, Error, Lookahead, LookaheadSpec, Objective, Result, TreeShape,
};

/// A tree policy's spec as a [`LookaheadSpec`]: `$variant` and `$fantasies` are its variant
/// and fantasy counts, read from the spec bound to `$s`.
macro_rules! tree_lookahead_spec {
    ($spec:ty, |$s:ident| $variant:expr, $fantasies:expr) => {
        impl LookaheadSpec for $spec {
            fn fantasies(&self) -> Vec<usize> {
                let $s = self;
                $fantasies
            }
            /// `[ε_y, ε_ln c]` per fantasy for B-MS-EI, `[ε_y]` where the cost is not
            /// modelled.
            #[allow(unused_variables)] // the unit-cost variants do not read the spec
            fn outputs(&self) -> usize {
                let $s = self;
                outputs($variant)
            }
            fn lookahead<'a>(
                &self,
                ctx: &'a DecisionContext<'a>,
                samples: Option<&[Vec<f64>]>,
            ) -> Result<Box<dyn Lookahead + 'a>> {
                let $s = self;
                let tree =
                    TreeLookahead::new(ctx, $variant, &$fantasies, $s.base_samples, samples)?;
                Ok(Box::new(tree))
            }
        }
    };
}

tree_lookahead_spec!(BmseiSpec, |s| Variant::Bmsei(s.budget), s.fantasies.clone());
tree_lookahead_spec!(MsEiSpec, |s| Variant::MsEi, s.fantasies.clone());
tree_lookahead_spec!(KgSpec, |s| Variant::Kg, Vec::from([s.fantasies]));

/// One decision's scenario tree of a tree policy, owning its tree and base samples (see the
/// module documentation).
pub struct TreeLookahead<'a> {
    tree: Tree,
    variant: Variant,
    f: &'a dyn Covariance,
    /// ln c's covariances for B-MS-EI; the unit cost (`unit`) otherwise.
    cost: Option<&'a dyn Covariance>,
    unit: UnitCostPath,
    best: f64,
    budget: f64,
    kind: NodeValue,
    /// KG's faster form, as the policy maximises it when the model offers fantasy means.
    kg: Option<KgObjective<'a>>,
    diagnostics: Diagnostics,
}

impl<'a> TreeLookahead<'a> {
    /// The tree of `variant` with fantasy counts `fantasies` for the decision `ctx`; its base
    /// samples are `samples` (one `[ε_y]` or `[ε_y, ε_ln c]` per node after the root, in
    /// [`TreeShape`]'s node order) or, for `None`, the policy's own under `scheme` for a
    /// decision seeded by `ctx.seed`. Fails as the policy's decision would (no observation,
    /// a model without covariances) or on samples of the wrong shape.
    pub fn new(
        ctx: &'a DecisionContext<'a>,
        variant: Variant,
        fantasies: &[usize],
        scheme: BaseSampleScheme,
        samples: Option<&[Vec<f64>]>,
    ) -> Result<Self> {
        let d = ctx.problem.dim;
        let best = ctx
            .best_y()
            .ok_or_else(|| Error::invalid("a scenario tree needs at least one observation"))?;
        let posterior = ctx.posterior()?;
        let f = posterior.covariance().ok_or_else(|| {
            capability::missing("a scenario tree", "model", Capability::Covariance)
        })?;
        let unit = UnitCostPath { dim: d };
        let mut policy = TreePolicy::new(variant, fantasies.to_vec());
        let (cost, budget, kind) = policy.cost_and_budget(ctx, &mut Diagnostics::new())?;
        let own = scheme.decision_samples(ctx.seed);
        let mut tree = Tree::new(d, fantasies, own)?;
        if let Some(s) = samples {
            tree = tree.with_base_samples(&pairs(s, outputs(variant))?)?;
        }
        let kg = kg_form(variant, &tree, posterior)?;
        let mut diagnostics = Diagnostics::new();
        diagnostics.insert("incumbent".into(), best);
        if budget.is_finite() {
            diagnostics.insert("budget".into(), budget);
        }
        Ok(TreeLookahead {
            tree,
            variant,
            f,
            cost,
            unit,
            best,
            budget,
            kind,
            kg,
            diagnostics,
        })
    }

    /// The scenario tree (its shape and base samples).
    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    /// The general tree objective over this tree.
    fn general(&self) -> TreeObjective<'_> {
        let cost = self.cost.unwrap_or(&self.unit);
        TreeObjective::new(&self.tree, self.f, cost, self.best, self.budget, self.kind)
            .expect("the beliefs' dimension and the incumbent were checked when the tree was built")
    }
}

/// How many standard normals each fantasy of `variant` draws.
fn outputs(variant: Variant) -> usize {
    match variant {
        Variant::Bmsei(_) => 2,
        Variant::MsEi | Variant::Kg => 1,
    }
}

/// Per-node entries of `outputs` numbers as the tree's `(ε_y, ε_ln c)` pairs (ε_ln c = 0
/// where the cost is not modelled, where it is never read).
fn pairs(samples: &[Vec<f64>], outputs: usize) -> Result<Vec<(f64, f64)>> {
    samples
        .iter()
        .enumerate()
        .map(|(i, e)| match (outputs, e.as_slice()) {
            (1, &[y]) => Ok((y, 0.0)),
            (2, &[y, c]) => Ok((y, c)),
            _ => Err(Error::invalid(format!(
                "base sample of node {}: {} numbers where each fantasy draws {outputs}",
                i + 1,
                e.len()
            ))),
        })
        .collect()
}

impl Objective for TreeLookahead<'_> {
    /// The tree's value at the concatenated node points `xs`.
    fn value(&self, xs: &[f64]) -> f64 {
        match &self.kg {
            Some(kg) => kg.value(xs),
            None => self.general().value(xs),
        }
    }

    /// The tree's value at `xs`, writing its gradient into `grad`.
    fn value_grad(&self, xs: &[f64], grad: &mut [f64]) -> f64 {
        match &self.kg {
            Some(kg) => kg.value_grad(xs, grad),
            None => self.general().value_grad(xs, grad),
        }
    }

    /// True, as for the trees the policies maximise.
    fn non_negative(&self) -> bool {
        true
    }
}

impl Lookahead for TreeLookahead<'_> {
    fn shape(&self) -> TreeShape {
        TreeShape::new(self.tree.fantasies())
    }

    fn base_samples(&self) -> Vec<Vec<f64>> {
        let t = &self.tree;
        (1..t.nodes())
            .map(|n| match outputs(self.variant) {
                1 => vec![t.base_sample_y(n)],
                _ => vec![t.base_sample_y(n), t.base_sample_c(n)],
            })
            .collect()
    }

    /// Each node's own term from the general tree (for KG, equal to its faster form's to
    /// rounding).
    fn node_values(&self, xs: &[f64]) -> Vec<f64> {
        if xs.len() != self.tree.dim() || xs.iter().any(|v| !v.is_finite()) {
            return vec![f64::NAN; self.tree.nodes()];
        }
        self.general().node_values(xs)
    }

    fn diagnostics(&self) -> Diagnostics {
        self.diagnostics.clone()
    }
}

#[cfg(test)]
mod tests {
    //! Each tree against a brute-force evaluation of the same base samples: every node's GP
    //! posterior re-solved from scratch on the data plus the fantasies along its path (fixed
    //! hyperparameters, a plain Cholesky of the whole Gram matrix), each stage's value in
    //! closed form, averaged with the tree's weights.

    // The brute force's dense algebra reads clearest with explicit indices.
    #![allow(clippy::needless_range_loop)]

    use super::*;
    use crate::BudgetMode;
    use crate::schedule::Scheduler;
    use cabo_core::Query;
    use cabo_core::normal;
    use cabo_core::{
        Budget, BudgetState, Dataset, Observation, OptimizerSettings, PolicySpec, ProblemInfo,
        TrainingData,
    };
    use cabo_gp::cost::LogGpBelief;
    use cabo_gp::{GpPosterior, Kernel, KernelKind, OutputTransform};

    const D: usize = 2;

    /// The training inputs, objective values and costs.
    fn data() -> (Vec<Vec<f64>>, Vec<f64>, Vec<f64>) {
        let x = vec![
            vec![0.12, 0.81],
            vec![0.55, 0.23],
            vec![0.91, 0.64],
            vec![0.33, 0.42],
            vec![0.71, 0.07],
            vec![0.46, 0.95],
        ];
        let y = x
            .iter()
            .map(|p| (5.0f64 * p[0]).sin() * p[1] + 0.3 * p[0])
            .collect();
        let c = x.iter().map(|p| 0.4 + p[0] + 0.5 * p[1]).collect();
        (x, y, c)
    }

    /// An exact GP with an RBF kernel and fixed hyperparameters, solved from scratch.
    #[derive(Clone)]
    struct BruteGp {
        x: Vec<Vec<f64>>,
        y: Vec<f64>,
        ls: [f64; D],
        outputscale: f64,
        noise: f64,
        mean: f64,
    }

    const OBJECTIVE: ([f64; D], f64, f64, f64) = ([0.3, 0.4], 1.2, 1e-3, 0.1);
    const LN_COST: ([f64; D], f64, f64, f64) = ([0.5, 0.6], 0.3, 1e-4, 0.0);

    impl BruteGp {
        fn new(
            x: &[Vec<f64>],
            y: &[f64],
            (ls, outputscale, noise, mean): ([f64; D], f64, f64, f64),
        ) -> Self {
            BruteGp {
                x: x.to_vec(),
                y: y.to_vec(),
                ls,
                outputscale,
                noise,
                mean,
            }
        }

        fn k(&self, a: &[f64], b: &[f64]) -> f64 {
            let r2: f64 = (0..D).map(|j| ((a[j] - b[j]) / self.ls[j]).powi(2)).sum();
            self.outputscale * (-0.5 * r2).exp()
        }

        /// Posterior mean and latent variance at `p`.
        fn predict(&self, p: &[f64]) -> (f64, f64) {
            let n = self.x.len();
            let mut a = vec![vec![0.0; n]; n];
            for i in 0..n {
                for j in 0..n {
                    a[i][j] =
                        self.k(&self.x[i], &self.x[j]) + if i == j { self.noise } else { 0.0 };
                }
            }
            let l = cholesky(&a);
            let resid: Vec<f64> = self.y.iter().map(|y| y - self.mean).collect();
            let kx: Vec<f64> = self.x.iter().map(|xi| self.k(xi, p)).collect();
            let v = forward(&l, &kx);
            let w = forward(&l, &resid);
            let mean = self.mean + v.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>();
            let var = self.k(p, p) - v.iter().map(|a| a * a).sum::<f64>();
            (mean, var)
        }

        /// A fantasised noisy observation at `p` for the standard normal `eps`, and the GP
        /// conditioned on it.
        fn fantasise(&self, p: &[f64], eps: f64) -> (f64, BruteGp) {
            let (m, v) = self.predict(p);
            let y = m + (v + self.noise).sqrt() * eps;
            let mut next = self.clone();
            next.x.push(p.to_vec());
            next.y.push(y);
            (y, next)
        }
    }

    fn cholesky(a: &[Vec<f64>]) -> Vec<Vec<f64>> {
        let n = a.len();
        let mut l = vec![vec![0.0; n]; n];
        for i in 0..n {
            for j in 0..=i {
                let s = a[i][j] - (0..j).map(|k| l[i][k] * l[j][k]).sum::<f64>();
                l[i][j] = if i == j { s.sqrt() } else { s / l[j][j] };
            }
        }
        l
    }

    /// `L⁻¹ b`.
    fn forward(l: &[Vec<f64>], b: &[f64]) -> Vec<f64> {
        let mut z = vec![0.0; b.len()];
        for i in 0..b.len() {
            z[i] = (b[i] - (0..i).map(|k| l[i][k] * z[k]).sum::<f64>()) / l[i][i];
        }
        z
    }

    fn ei(mean: f64, var: f64, best: f64) -> f64 {
        let s = var.sqrt();
        let u = (mean - best) / s;
        s * (u * normal::cdf(u) + normal::pdf(u))
    }

    /// What a node is worth in the brute force, given its path's GPs.
    #[derive(Clone, Copy)]
    enum Rule {
        /// EI × P(c ≤ budget left) with fantasised costs (B-MS-EI, `remaining` budget).
        Budgeted(f64),
        /// EI while at least one unit-cost step is left of `iterations` (multi-step EI).
        Steps(f64),
        /// The posterior mean at the leaves (one-shot KG).
        LeafMean,
    }

    /// The tree's value by recursion over the paths: `xs` node points, `eps` one
    /// `[ε_y(, ε_ln c)]` per node after the root, both in node order.
    fn brute_force(fantasies: &[usize], xs: &[f64], eps: &[Vec<f64>], rule: Rule) -> f64 {
        let (x, y, c) = data();
        let ln_c: Vec<f64> = c.iter().map(|c| c.ln()).collect();
        let f = BruteGp::new(&x, &y, OBJECTIVE);
        let g = BruteGp::new(&x, &ln_c, LN_COST);
        let best = y.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let shape = TreeShape::new(fantasies);
        let paths = shape.paths();
        let index = |path: &[usize]| paths.iter().position(|p| p == path).unwrap();
        let mut total = 0.0;
        for (node, path) in paths.iter().enumerate() {
            // Fantasise along the path: at each ancestor's point, the sample of the child
            // the path continues to.
            let (mut f, mut g, mut best, mut spent) = (f.clone(), g.clone(), best, 0.0);
            for k in 0..path.len() {
                let (here, child) = (index(&path[..k]), index(&path[..=k]));
                let p = &xs[here * D..(here + 1) * D];
                let (yk, fk) = f.fantasise(p, eps[child - 1][0]);
                best = best.max(yk);
                f = fk;
                if let Rule::Budgeted(_) = rule {
                    let (zk, gk) = g.fantasise(p, eps[child - 1][1]);
                    spent += zk.exp();
                    g = gk;
                }
            }
            let p = &xs[node * D..(node + 1) * D];
            let (mean, var) = f.predict(p);
            let value = match rule {
                Rule::Budgeted(budget) => {
                    let left = budget - spent;
                    let (mc, vc) = g.predict(p);
                    if left <= 0.0 {
                        0.0
                    } else {
                        ei(mean, var, best) * normal::cdf((left.ln() - mc) / vc.sqrt())
                    }
                }
                Rule::Steps(left) if left - path.len() as f64 >= 1.0 => ei(mean, var, best),
                Rule::Steps(_) => 0.0,
                Rule::LeafMean if path.len() == fantasies.len() => mean,
                Rule::LeafMean => 0.0,
            };
            let weight: f64 = fantasies[..path.len()]
                .iter()
                .map(|&m| 1.0 / m as f64)
                .product();
            total += weight * value;
        }
        total
    }

    /// The decision's problem, data, budget and settings.
    struct Setting {
        info: ProblemInfo,
        data: Dataset,
        budget: BudgetState,
        settings: OptimizerSettings,
    }

    fn setting(budget: Budget) -> Setting {
        let (x, y, c) = data();
        let mut set = Dataset::new(D);
        for ((x, y), c) in x.into_iter().zip(y).zip(c) {
            set.push(Observation::initial(x, y, c)).unwrap();
        }
        Setting {
            info: ProblemInfo::continuous("brute force", D),
            data: set,
            budget: BudgetState::new(budget),
            settings: OptimizerSettings::default(),
        }
    }

    fn gp(
        x: &[Vec<f64>],
        y: &[f64],
        (ls, outputscale, noise, mean): ([f64; D], f64, f64, f64),
    ) -> GpPosterior {
        let kernel = Kernel::new(KernelKind::Rbf, ls.to_vec(), outputscale).unwrap();
        let flat = x.concat();
        let data = TrainingData {
            x: &flat,
            y,
            dim: D,
        };
        GpPosterior::new(kernel, noise, mean, data, OutputTransform::IDENTITY).unwrap()
    }

    /// The decision context with the brute force's two GPs.
    fn context(s: &Setting) -> DecisionContext<'_> {
        seeded_context(s, 17)
    }

    /// The decision context with the brute force's two GPs and the decision seed `seed`.
    fn seeded_context(s: &Setting, seed: u64) -> DecisionContext<'_> {
        let (x, y, c) = data();
        let ln_c: Vec<f64> = c.iter().map(|c| c.ln()).collect();
        let belief = LogGpBelief {
            posterior: gp(&x, &ln_c, LN_COST),
        };
        DecisionContext::new(&s.info, &s.data, &s.budget, 1, seed, &s.settings)
            .with_posterior(Box::new(gp(&x, &y, OBJECTIVE)))
            .with_cost_belief(Box::new(belief))
    }

    fn points(len: usize, seed: u64) -> Vec<f64> {
        let mut r = cabo_core::Rng::new(seed);
        (0..len).map(|_| r.uniform()).collect()
    }

    /// Base samples per node of a tree of `shape` with `outputs` numbers each.
    fn samples(shape: &TreeShape, outputs: usize, seed: u64) -> Vec<Vec<f64>> {
        let mut r = cabo_core::Rng::new(seed);
        (1..shape.nodes())
            .map(|_| (0..outputs).map(|_| r.normal()).collect())
            .collect()
    }

    /// The three trees of the brute force: spec, rule and budget.
    fn cases() -> Vec<(Box<dyn PolicySpec>, Rule, Budget)> {
        let cost_budget = Budget {
            cost: Some(6.0),
            iterations: None,
        };
        let steps = Budget {
            cost: None,
            iterations: Some(2),
        };
        vec![
            (
                Box::new(BmseiSpec {
                    fantasies: vec![2, 2],
                    budget: BudgetMode::Remaining,
                    base_samples: BaseSampleScheme::Independent,
                }),
                Rule::Budgeted(6.0 - 3.1),
                cost_budget,
            ),
            (
                Box::new(MsEiSpec {
                    fantasies: vec![2, 2],
                    base_samples: BaseSampleScheme::Independent,
                }),
                // Two iterations left: the root and stage 1 count, stage 2 is past the horizon.
                Rule::Steps(2.0),
                steps,
            ),
            (
                Box::new(KgSpec {
                    fantasies: 3,
                    base_samples: BaseSampleScheme::Independent,
                }),
                Rule::LeafMean,
                Budget {
                    cost: None,
                    iterations: Some(5),
                },
            ),
        ]
    }

    /// Value to 1e-10 relative against the brute force, at three sets of points and base
    /// samples each; a changed base sample changes the value as the brute force says.
    #[test]
    fn tree_values_equal_a_brute_force_evaluation_of_the_same_samples() {
        for (spec, rule, budget) in cases() {
            let mut s = setting(budget);
            s.budget.spent = 3.1;
            let ctx = context(&s);
            let what = format!("{spec:?}");
            let spec = spec.lookahead().expect("a tree policy has a lookahead");
            let shape = TreeShape::new(&spec.fantasies());
            for seed in 0..3 {
                let xs = points(shape.nodes() * D, seed);
                let mut eps = samples(&shape, spec.outputs(), 100 + seed);
                let tree = spec.lookahead(&ctx, Some(&eps)).unwrap();
                assert_eq!(tree.base_samples(), eps, "given samples are used as given");
                let got = tree.value(&xs);
                let want = brute_force(shape.fantasies(), &xs, &eps, rule);
                let what = format!("{what}, seed {seed}");
                assert!(want > 1e-3, "{what}: a value of {want} tests little");
                assert!(
                    (got - want).abs() <= 1e-10 * want.abs(),
                    "{what}: {got} vs {want}"
                );
                // The last stage-1 node's objective sample, moved by one.
                let m1 = shape.fantasies()[0];
                eps[m1 - 1][0] += 1.0;
                let moved = spec.lookahead(&ctx, Some(&eps)).unwrap().value(&xs);
                let want_moved = brute_force(shape.fantasies(), &xs, &eps, rule);
                assert!(
                    (moved - want).abs() > 1e-6 * want,
                    "{what}: the sample was ignored"
                );
                assert!(
                    (moved - want_moved).abs() <= 1e-10 * want_moved.abs(),
                    "{what}: moved sample {moved} vs {want_moved}"
                );
            }
        }
    }

    /// Central differences (step 1e-6) agree with the gradient to 1e-6 of the largest
    /// gradient entry (at least 1), for every coordinate of every node.
    #[test]
    fn gradients_match_central_differences() {
        for (spec, _, budget) in cases() {
            let mut s = setting(budget);
            s.budget.spent = 3.1;
            let ctx = context(&s);
            let what = format!("{spec:?}");
            let spec = spec.lookahead().unwrap();
            let tree = spec.lookahead(&ctx, None).unwrap();
            let xs = points(tree.shape().nodes() * D, 7);
            let mut g = vec![0.0; xs.len()];
            tree.value_grad(&xs, &mut g);
            let scale = g.iter().fold(1.0f64, |a, v| a.max(v.abs()));
            let h = 1e-6;
            for k in 0..xs.len() {
                let (mut a, mut b) = (xs.clone(), xs.clone());
                a[k] += h;
                b[k] -= h;
                let fd = (tree.value(&a) - tree.value(&b)) / (2.0 * h);
                assert!(
                    (fd - g[k]).abs() <= 1e-6 * scale,
                    "{what}, ∂{k}: analytic {} vs finite difference {fd}",
                    g[k]
                );
            }
        }
    }

    /// Seed 001's fantasy start is a full tree: its root is the posterior-mean maximiser
    /// (no point of a 201 × 201 grid has a larger posterior mean), every node of a stage
    /// holds the same point (the shorter tree's), its value is the brute force's at the
    /// same samples (1e-10 relative), it is the same bits when rebuilt and moves with the
    /// decision's seed, and the decision, which searches from it, ends no lower.
    #[test]
    fn fantasy_start_is_a_full_tree_at_the_posterior_mean_maximiser() {
        let variants = [Variant::Bmsei(BudgetMode::Remaining), Variant::MsEi];
        for (variant, (spec, rule, budget)) in variants.into_iter().zip(cases()) {
            let mut s = setting(budget);
            s.budget.spent = 3.1;
            let ctx = context(&s);
            let fantasies = [2, 2];
            let scheme = BaseSampleScheme::SharedSobol;
            let la = TreeLookahead::new(&ctx, variant, &fantasies, scheme, None).unwrap();
            let start = |ctx: &DecisionContext<'_>| {
                let general = la.general();
                let roots = crate::policy::root_starts(ctx, &general).unwrap();
                let unit_cost = variant == Variant::MsEi;
                let start =
                    crate::fantasy_start::fantasy_start(ctx, &general, unit_cost, &roots[1]);
                (roots[1].clone(), start.unwrap().expect("a start"))
            };
            let (root, xs) = start(&ctx);
            let what = format!("{variant:?}");
            assert_eq!(xs.len(), la.tree.dim(), "{what}");
            assert_eq!(xs[..D], root[..], "{what}");
            assert!(xs.iter().all(|v| (0.0..=1.0).contains(v)), "{what}");
            let post = ctx.posterior().unwrap();
            let at_root = post.mean_var(&root).mean;
            for i in 0..=200 {
                for j in 0..=200 {
                    let p = [i as f64 / 200.0, j as f64 / 200.0];
                    assert!(post.mean_var(&p).mean <= at_root + 1e-9, "{what}: {p:?}");
                }
            }
            let point = |n: usize| &xs[n * D..(n + 1) * D];
            for n in 1..la.tree.nodes() {
                let first = la.tree.children(0).start;
                let same = if la.tree.level(n) == 1 {
                    first
                } else {
                    la.tree.children(first).start
                };
                assert_eq!(point(n), point(same), "{what}: node {n}");
            }
            let got = la.value(&xs);
            let want = brute_force(&fantasies, &xs, &la.base_samples(), rule);
            assert!(want > 1e-3, "{what}: a value of {want} tests little");
            assert!(
                (got - want).abs() <= 1e-10 * want,
                "{what}: {got} vs {want}"
            );
            assert_eq!(start(&ctx).1, xs, "{what}: rebuilt");
            let other = seeded_context(&s, 18);
            assert_ne!(start(&other).1[D..], xs[D..], "{what}: another seed");
            let info = cabo_core::BuildContext {
                problem: &s.info,
                seed: 3,
            };
            let mut policy = with_scheme(&*spec, scheme).build(&info).unwrap();
            policy.decide(&ctx).unwrap();
            let reached = policy.diagnostics()["acq_value"];
            assert!(
                reached >= got - 1e-12 * got,
                "{what}: {reached} below the start's {got}"
            );
        }
    }

    /// The last decision's optimal tree, as the policy's checkpoint holds it.
    #[derive(serde::Deserialize)]
    struct WarmTree {
        xs: Vec<f64>,
    }

    /// Left to its own base samples, the lookahead is the tree the policy's decision
    /// maximised: at the decision's optimal tree (from its checkpoint) it gives the value
    /// the decision recorded, to rounding, and the root is the point it chose.
    #[test]
    fn own_base_samples_are_the_decisions() {
        for (spec, _, budget) in cases() {
            for scheme in [BaseSampleScheme::Independent, BaseSampleScheme::SharedSobol] {
                let spec = with_scheme(&*spec, scheme);
                let mut s = setting(budget.clone());
                s.budget.spent = 3.1;
                let ctx = context(&s);
                let info = cabo_core::BuildContext {
                    problem: &s.info,
                    seed: 3,
                };
                let mut policy = spec.build(&info).unwrap();
                let decision = policy.decide(&ctx).unwrap();
                let recorded = policy.diagnostics()["acq_value"];
                let state = policy.checkpoint().unwrap().unwrap();
                let (_, warm): (Scheduler, Option<WarmTree>) = state.decode("test").unwrap();
                let xs = warm.unwrap().xs;
                let tree = spec.lookahead().unwrap().lookahead(&ctx, None).unwrap();
                let mut g = vec![0.0; xs.len()];
                let value = tree.value_grad(&xs, &mut g);
                let what = format!("{spec:?}");
                assert!(
                    (value - recorded).abs() <= 1e-12 * recorded.abs(),
                    "{what}: {value} vs the decision's {recorded}"
                );
                assert_eq!(
                    decision,
                    cabo_core::Decision::Evaluate(Query::at(xs[..D].to_vec()))
                );
            }
        }
    }

    /// `spec` with its base samples drawn by `scheme`.
    fn with_scheme(spec: &dyn PolicySpec, scheme: BaseSampleScheme) -> Box<dyn PolicySpec> {
        let mut json = serde_json::to_value(spec).unwrap();
        let scheme = serde_json::to_value(scheme).unwrap();
        json.as_object_mut()
            .unwrap()
            .insert("base_samples".into(), scheme);
        serde_json::from_value(json).unwrap()
    }

    /// The tree's nodes are in [`TreeShape`]'s order: node `i`'s children are the paths of
    /// node `i` extended by each fantasy index, and its weight `1/(m₁⋯m_stage)`.
    #[test]
    fn the_tree_numbers_its_nodes_as_tree_shape_says() {
        let fantasies = [3, 1, 2];
        let tree = Tree::new(D, &fantasies, crate::tree::BaseSamples::Seeded(0)).unwrap();
        let paths = TreeShape::new(&fantasies).paths();
        assert_eq!(paths.len(), tree.nodes());
        for (node, path) in paths.iter().enumerate() {
            for (j, child) in tree.children(node).enumerate() {
                let mut want = path.clone();
                want.push(j);
                assert_eq!(paths[child], want, "child {j} of node {node}");
            }
            let weight: f64 = fantasies[..path.len()]
                .iter()
                .map(|&m| 1.0 / m as f64)
                .product();
            assert!((tree.weight(node) - weight).abs() <= 1e-15, "node {node}");
        }
    }
}
