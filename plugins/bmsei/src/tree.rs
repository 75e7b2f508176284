//! One-shot multi-step scenario trees (seed 001 §4.2; Jiang et al. 2020).
//!
//! A tree for `N` steps with per-stage fantasy counts `(m₁, …, m_{N−1})` has one decision
//! point per node: the root `x₁`, then `m₁` points `x₂ʲ`, `m₁m₂` points `x₃ʲᵏ`, … The value
//!
//! ```text
//! Q̂_N = Σ_nodes w_node · Q₁(x_node | D_node, B_node),   w_node = 1/(m₁⋯m_level),
//! ```
//!
//! where `D_node` is the data plus the fantasised observations `(y, ln c)` along the node's
//! path, `B_node` the budget left after the fantasised costs, and `Q₁` the budgeted one-step
//! value of Prop. 1 measured against the best of the observed and fantasised values. A
//! stage with one fantasy uses the posterior mean (base sample 0): the path variant
//! B-MS-EI_p. Base samples are drawn once per decision (common random numbers), so `Q̂_N` is
//! a deterministic, piecewise smooth function of all decision points, maximised jointly.
//! They are either independent for every node or, as in BoTorch's `qMultiStepLookahead`, one
//! scrambled Sobol' set per stage shared by all the stage's nodes ([`BaseSamples`]).
//!
//! Gradients are exact: each node's value depends on its own point and its ancestors' only,
//! through the joint Cholesky factor of the path's posterior covariance — the dependence of
//! fantasised values and of the conditioned posterior on earlier decision points included.
//! It is differentiated in forward mode (the `dual` module) in one of two ways
//! ([`GradientMethod`]):
//!
//! - **with respect to the path's coordinates**: one derivative per coordinate of the path's
//!   `len ≤ N` points, `len·d` in all. Used while `N·d ≤ 64` ([`MAX_PATH_VARIABLES`]).
//! - **with respect to the path's posterior moments**: a node's value is a function of the
//!   means `μ_a` and covariances `Σ_ab` (a ≥ b) of its path's points under the objective's
//!   and ln c's beliefs, `len + len(len+1)/2` numbers per belief whatever `d`. The duals carry
//!   derivatives with respect to those, and the chain rule to the coordinates is applied
//!   once per node: `∂v/∂x_a = Σ ∂v/∂μ_a ∇μ_a + Σ ∂v/∂Σ_ab ∇_{x_a}Σ_ab`, the `∇` being what
//!   `Covariance::prepare` and `Covariance::cov` return (reverse accumulation over the
//!   moments). Used above `N·d = 64`, so every tree gets exact gradients at any dimension.
//!
//! The two are the same derivative computed in a different order, equal to rounding (a test
//! holds them within 1e-12); keeping the coordinate duals where they suffice keeps every
//! result computed before the moments existed bit for bit.

// Dense small-matrix and row-major kernels read clearest with explicit indices.
#![allow(clippy::needless_range_loop)]

use crate::dual::D;
use cabo_core::capability::{Covariance, PreparedPoint};
use cabo_core::{Error, Objective, Result, Rng, derive_seed, normal};
use cabo_optim::sobol;
use cabo_toolkit::numerics::h_grad;
use std::cell::RefCell;

/// Largest number of look-ahead steps `N`.
pub const MAX_STEPS: usize = 8;
/// Largest `N·d` differentiated with respect to the path's coordinates under
/// [`GradientMethod::Auto`]; larger trees are differentiated through the path's moments.
pub const MAX_PATH_VARIABLES: usize = 64;

/// How a [`TreeObjective`] computes its gradient (both are exact; see the module doc).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum GradientMethod {
    /// [`GradientMethod::Coordinates`] while `N·d ≤` [`MAX_PATH_VARIABLES`], else
    /// [`GradientMethod::Moments`].
    #[default]
    Auto,
    /// Forward duals with one derivative per coordinate of a node's path (`len·d` wide); only
    /// for trees with `N·d ≤` [`MAX_PATH_VARIABLES`].
    Coordinates,
    /// Forward duals with respect to the path's posterior means and covariances
    /// (`len(len + 3)` wide for the two beliefs, independent of `d`), chained to the
    /// coordinates once per node.
    Moments,
}

/// How the fantasies' standard-normal base samples are chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BaseSamples {
    /// Independent draws from a seeded stream (common random numbers for one decision).
    Seeded(u64),
    /// The `m` mid-point quantiles `Φ⁻¹((j + ½)/m)` at every stage, for y and ln c alike: a
    /// deterministic quadrature rule (used by oracle tests on known-cost instances).
    Quantiles,
    /// Per stage, `m` scrambled Sobol' points in `[0,1)²` mapped through `Φ⁻¹` (y from the
    /// first coordinate, ln c from the second), the same `m` pairs for every node of the
    /// stage; each stage's scramble is seeded from the `u64` and the stage index.
    ///
    /// This is what BoTorch's `qMultiStepLookahead` does by default, on which seed 001's
    /// implementation builds: one `SobolQMCNormalSampler` per stage, its base samples shared
    /// across the fantasy batch dimensions (`collapse_fantasy_base_samples`), drawn jointly
    /// for the two outputs of the objective-and-cost model (a `q·o = 2`-dimensional Sobol'
    /// draw). Every parent then averages over the same well-spread fantasies, so the tree has
    /// fewer sample-specific features for the joint optimisation to fit than with
    /// [`BaseSamples::Seeded`]'s independent draws. Stages with one fantasy still use the
    /// posterior mean (the path variant).
    SharedSobol(u64),
}

/// The `m` standard-normal pairs `(ε_y, ε_c)` shared by every node of stage `stage` under
/// [`BaseSamples::SharedSobol`]`(seed)`.
fn shared_sobol_stage(m: usize, seed: u64, stage: usize) -> Vec<(f64, f64)> {
    let u = sobol::points(m, 2, derive_seed(&[&seed, &"stage", &stage]));
    // Sobol' points lie in [0, 1) and a scramble can put one at 0 exactly; pulling each
    // coordinate towards ½ by one ulp-sized factor (as BoTorch's NormalQMCEngine does) keeps
    // every quantile finite while moving interior points by ~1e-16.
    let z = |u: f64| normal::quantile(0.5 + (1.0 - f64::EPSILON) * (u - 0.5));
    u.chunks_exact(2).map(|p| (z(p[0]), z(p[1]))).collect()
}

/// What a node contributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeValue {
    /// The budgeted one-step value Q₁ at every node (B-MS-EI, multi-step EI).
    BudgetedEi,
    /// The posterior mean at the leaves and nothing elsewhere (one-shot knowledge gradient).
    LeafMean,
}

/// The shape of a scenario tree and its base samples.
#[derive(Debug, Clone)]
pub struct Tree {
    d: usize,
    fantasies: Vec<usize>,
    parent: Vec<usize>,
    level: Vec<usize>,
    level_start: Vec<usize>,
    eps_y: Vec<f64>,
    eps_c: Vec<f64>,
    weight: Vec<f64>,
}

impl Tree {
    /// A tree over points of dimension `d` with fantasy counts `fantasies` (`N − 1` stages).
    /// Fails when `d` or a count is 0, `N > MAX_STEPS` or the tree has more than 100 000
    /// nodes.
    pub fn new(d: usize, fantasies: &[usize], base: BaseSamples) -> Result<Tree> {
        check_shape(d, fantasies)?;
        let mut rng = match base {
            BaseSamples::Seeded(s) => Some(Rng::new(s)),
            BaseSamples::Quantiles | BaseSamples::SharedSobol(_) => None,
        };
        let mut t = Tree {
            d,
            fantasies: fantasies.to_vec(),
            parent: vec![usize::MAX],
            level: vec![0],
            level_start: vec![0, 1],
            eps_y: vec![0.0],
            eps_c: vec![0.0],
            weight: vec![1.0],
        };
        for (stage, &m) in fantasies.iter().enumerate() {
            let (lo, hi) = (t.level_start[stage], t.level_start[stage + 1]);
            let shared = match base {
                BaseSamples::SharedSobol(seed) if m > 1 => shared_sobol_stage(m, seed, stage),
                _ => Vec::new(),
            };
            for p in lo..hi {
                for j in 0..m {
                    let (ey, ec) = if m == 1 {
                        (0.0, 0.0)
                    } else if let Some(&pair) = shared.get(j) {
                        pair
                    } else if let Some(r) = rng.as_mut() {
                        (r.normal(), r.normal())
                    } else {
                        let q = normal::quantile((j as f64 + 0.5) / m as f64);
                        (q, q)
                    };
                    t.parent.push(p);
                    t.level.push(stage + 1);
                    t.eps_y.push(ey);
                    t.eps_c.push(ec);
                    t.weight.push(t.weight[p] / m as f64);
                }
            }
            t.level_start.push(t.parent.len());
        }
        Ok(t)
    }

    /// Number of look-ahead steps `N`.
    pub fn steps(&self) -> usize {
        self.fantasies.len() + 1
    }

    /// Number of nodes (decision points).
    pub fn nodes(&self) -> usize {
        self.parent.len()
    }

    /// Point dimension `d`.
    pub fn point_dim(&self) -> usize {
        self.d
    }

    /// Length of the concatenated decision vector (`nodes · d`, breadth-first order).
    pub fn dim(&self) -> usize {
        self.nodes() * self.d
    }

    /// The fantasy counts.
    pub fn fantasies(&self) -> &[usize] {
        &self.fantasies
    }

    /// The standard-normal base sample of the objective's fantasy that leads to `node` (0 at
    /// the root and in single-fantasy stages).
    pub fn base_sample_y(&self, node: usize) -> f64 {
        self.eps_y[node]
    }

    /// The standard-normal base sample of the ln-cost fantasy that leads to `node` (0 at the
    /// root and in single-fantasy stages).
    pub fn base_sample_c(&self, node: usize) -> f64 {
        self.eps_c[node]
    }

    /// The stage of `node` (0 at the root).
    pub fn level(&self, node: usize) -> usize {
        self.level[node]
    }

    /// The weight `1/(m₁⋯m_level)` of `node` in the tree's sample average.
    pub fn weight(&self, node: usize) -> f64 {
        self.weight[node]
    }

    /// Index range of the children of `node`.
    pub fn children(&self, node: usize) -> std::ops::Range<usize> {
        let l = self.level[node];
        if l + 1 >= self.level_start.len() - 1 {
            return 0..0;
        }
        let m = self.fantasies[l];
        let start = self.level_start[l + 1] + (node - self.level_start[l]) * m;
        start..start + m
    }

    /// The path root → `node` as node indices.
    fn path(&self, node: usize, out: &mut [usize; MAX_STEPS]) -> usize {
        let len = self.level[node] + 1;
        let mut n = node;
        for i in (0..len).rev() {
            out[i] = n;
            n = self.parent[n];
        }
        len
    }

    /// A warm start for the next decision from this tree's solution `xs`: the subtree of the
    /// first-stage branch `branch` shifted up one level (the new root is that branch's point);
    /// nodes deeper than the old tree copy their parent's point.
    pub fn shifted_subtree(&self, xs: &[f64], branch: usize) -> Vec<f64> {
        let d = self.d;
        let mut out = vec![0.0; self.dim()];
        let n_levels = self.level_start.len() - 1;
        for node in 0..self.nodes() {
            let l = self.level[node];
            let dst = &mut out[node * d..(node + 1) * d];
            if l + 1 < n_levels {
                // Old level l + 1 under `branch`: sizes m₂⋯m_{l+1}.
                let size: usize = self.fantasies[1..=l].iter().product();
                let r = node - self.level_start[l];
                let old = self.level_start[l + 1] + branch * size + r % size.max(1);
                dst.copy_from_slice(&xs[old * d..(old + 1) * d]);
            } else {
                let p = self.parent[node];
                let (a, b) = out.split_at_mut(node * d);
                b[..d].copy_from_slice(&a[p * d..(p + 1) * d]);
            }
        }
        out
    }
}

fn check_shape(d: usize, fantasies: &[usize]) -> Result<()> {
    if d == 0 {
        return Err(Error::invalid("scenario tree: dimension 0"));
    }
    if let Some(i) = fantasies.iter().position(|&m| m == 0) {
        return Err(Error::invalid(format!(
            "fantasies[{i}] is 0; every stage needs at least one fantasy"
        )));
    }
    let n = fantasies.len() + 1;
    if n > MAX_STEPS {
        return Err(Error::invalid(format!(
            "{n} look-ahead steps; at most {MAX_STEPS} are supported"
        )));
    }
    let nodes: f64 = (1..=fantasies.len())
        .map(|k| fantasies[..k].iter().map(|&m| m as f64).product::<f64>())
        .sum();
    if nodes > 1e5 {
        return Err(Error::invalid(format!(
            "the tree has {nodes} nodes; at most 100000 are supported"
        )));
    }
    Ok(())
}

/// Checks a fantasy specification against a problem dimension (for spec validation).
pub fn validate_fantasies(d: usize, fantasies: &[usize]) -> Result<()> {
    check_shape(d, fantasies).map_err(|e| e.at("fantasies"))
}

impl Tree {
    /// The same tree with the base samples `samples`, one `(ε_y, ε_ln c)` per node after the
    /// root in node order, used exactly as given (a single-fantasy stage included, whose own
    /// samples are the posterior mean's zeros). Fails unless there is one pair per node
    /// after the root, every number finite.
    pub fn with_base_samples(mut self, samples: &[(f64, f64)]) -> Result<Tree> {
        if samples.len() + 1 != self.nodes() {
            return Err(Error::invalid(format!(
                "scenario tree: {} base samples for {} nodes after the root",
                samples.len(),
                self.nodes() - 1
            )));
        }
        if samples
            .iter()
            .any(|(y, c)| !y.is_finite() || !c.is_finite())
        {
            return Err(Error::invalid(
                "scenario tree: every base sample must be finite",
            ));
        }
        for (node, &(y, c)) in samples.iter().enumerate() {
            self.eps_y[node + 1] = y;
            self.eps_c[node + 1] = c;
        }
        Ok(self)
    }
}

struct Scratch {
    fc: Vec<PreparedPoint>,
    cc: Vec<PreparedPoint>,
    /// The objective's and ln c's covariances between each node and its ancestors, for the
    /// evaluation under way.
    pairs_f: PairCache,
    pairs_c: PairCache,
    work: Work,
}

/// The covariances (with their gradients when asked) between each node's prepared point and
/// its ancestors', computed at most once per evaluation. Every path through a node repeats
/// the node's pairs with its ancestors (a 4-step path asks for 10 covariances per belief, of
/// which 6 differ), and a covariance costs two passes over an `n × d` Jacobian; a stored one
/// is the same number, so the cache changes no bit.
struct PairCache {
    /// Gradient length per point (`d`) when gradients are kept, else 0.
    d: usize,
    /// Entry of `(node, ancestor level)`: `offset[node] + level`.
    offset: Vec<usize>,
    /// The evaluation each entry was computed in; entries of earlier ones are stale.
    stamp: Vec<u64>,
    value: Vec<f64>,
    /// `(∇_a, ∇_b)` of each entry, `2d` values (empty without gradients).
    grads: Vec<f64>,
    /// The evaluation under way: a new one makes every entry stale without a sweep.
    current: u64,
    /// Off for trees whose pair table would be too large to be worth keeping.
    enabled: bool,
}

/// Largest pair table ([`PairCache`]) kept, in values: 32 MB.
const MAX_PAIR_VALUES: usize = 1 << 22;

impl PairCache {
    fn new(tree: &Tree) -> Self {
        let mut offset = Vec::with_capacity(tree.nodes());
        let mut entries = 0;
        for node in 0..tree.nodes() {
            offset.push(entries);
            entries += tree.level[node];
        }
        let d = tree.d;
        let enabled = entries * (1 + 2 * d) <= MAX_PAIR_VALUES;
        let entries = if enabled { entries } else { 0 };
        PairCache {
            d: 0,
            offset,
            stamp: vec![0; entries],
            value: vec![0.0; entries],
            grads: vec![0.0; 2 * d * entries],
            current: 0,
            enabled,
        }
    }

    /// Makes every entry stale (the prepared points changed) and sets what the entries
    /// hold: gradients of length `d`, or none for `d = 0`.
    fn start_evaluation(&mut self, d: usize) {
        self.current += 1;
        self.d = d;
    }

    /// A cache that stores nothing: every request computes its covariance.
    fn disabled() -> Self {
        PairCache {
            d: 0,
            offset: Vec::new(),
            stamp: Vec::new(),
            value: Vec::new(),
            grads: Vec::new(),
            current: 0,
            enabled: false,
        }
    }

    /// `Σ(p[a], p[c])` for `c < a` of the path `p` through the tree nodes `path` (so `p[c]`
    /// is the ancestor at level `c` of node `path[a]`), with the gradients in `ga`, `gb`
    /// when they are non-empty: stored if computed earlier in this evaluation, else
    /// computed by `b` and stored.
    #[allow(clippy::too_many_arguments)]
    fn cov(
        &mut self,
        b: &dyn Covariance,
        p: &[&PreparedPoint],
        path: &[usize],
        a: usize,
        c: usize,
        ga: &mut [f64],
        gb: &mut [f64],
    ) -> f64 {
        if !self.enabled {
            return b.cov(p[a], p[c], ga, gb);
        }
        let d = self.d;
        debug_assert_eq!(
            ga.len(),
            d,
            "one evaluation asks for one kind of covariance"
        );
        let entry = self.offset[path[a]] + c;
        let grads = &mut self.grads[2 * d * entry..2 * d * (entry + 1)];
        if self.stamp[entry] == self.current {
            ga.copy_from_slice(&grads[..d]);
            gb.copy_from_slice(&grads[d..]);
            return self.value[entry];
        }
        let v = b.cov(p[a], p[c], ga, gb);
        grads[..d].copy_from_slice(ga);
        grads[d..].copy_from_slice(gb);
        self.value[entry] = v;
        self.stamp[entry] = self.current;
        v
    }
}

/// Where a node's path covariances come from: the path's tree nodes and each belief's
/// [`PairCache`] (a [`PairCache::disabled`] one computes every covariance afresh).
struct Pairs<'c> {
    path: &'c [usize],
    f: &'c mut PairCache,
    c: &'c mut PairCache,
}

/// Buffers of one node's path algebra.
#[derive(Default)]
struct Work {
    /// `∇_{x_a} Σ_ab` of the covariance last asked for.
    ga: Vec<f64>,
    /// `∇_{x_b} Σ_ab` of the covariance last asked for.
    gb: Vec<f64>,
    /// Under moment duals, every `(∇_{x_a} Σ_ab, ∇_{x_b} Σ_ab)` (a > b) of the objective's
    /// path covariance, pair after pair in the order the factor visits them: what the chain
    /// rule to the coordinates needs once the node's value is known.
    jf: Vec<f64>,
    /// The same for ln c.
    jc: Vec<f64>,
}

/// Which variables a node's duals carry derivatives with respect to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wrt {
    /// The path's coordinates: the `d` derivatives of slot `a` are those in `x_a`.
    Coordinates,
    /// One belief's path moments from index `offset` on: its means `μ_a`, then the lower
    /// triangle of its covariance `Σ_ab` (a ≥ b) row by row ([`moment_index`]).
    Moments(usize),
}

/// How many moments one belief has on a path of `len` points: `len` means and
/// `len(len + 1)/2` covariances.
const fn moment_count(len: usize) -> usize {
    len * (len + 3) / 2
}

/// Where `Σ_ab` (a ≥ b) sits among a path's moments of length `len` (after the means).
const fn moment_index(len: usize, a: usize, b: usize) -> usize {
    len + a * (a + 1) / 2 + b
}

/// The tree value `Q̂_N` as a function of the concatenated decision vector.
pub struct TreeObjective<'a> {
    tree: &'a Tree,
    f: &'a dyn Covariance,
    c: &'a dyn Covariance,
    best: f64,
    budget: f64,
    kind: NodeValue,
    gradient: GradientMethod,
    scratch: RefCell<Scratch>,
}

/// Small dense matrices of duals on the stack, `S × S` for paths of at most `S` points (a
/// matrix sized for the longest path would cost more to zero and move than to factor).
type Mat<const W: usize, const S: usize> = [[D<W>; S]; S];

impl<'a> TreeObjective<'a> {
    /// The tree objective for the covariances `f` of the objective and `c` of ln c,
    /// incumbent `best` and budget `budget` (`f64::INFINITY` for none). Fails on a dimension
    /// mismatch or a non-finite incumbent or NaN budget.
    pub fn new(
        tree: &'a Tree,
        f: &'a dyn Covariance,
        c: &'a dyn Covariance,
        best: f64,
        budget: f64,
        kind: NodeValue,
    ) -> Result<Self> {
        if f.dim() != tree.d || c.dim() != tree.d {
            return Err(Error::invalid(format!(
                "scenario tree of dimension {} with beliefs of dimension {} and {}",
                tree.d,
                f.dim(),
                c.dim()
            )));
        }
        if !best.is_finite() || budget.is_nan() {
            return Err(Error::invalid(format!(
                "scenario tree: incumbent {best} must be finite and budget {budget} not NaN"
            )));
        }
        let n = tree.nodes();
        Ok(TreeObjective {
            tree,
            f,
            c,
            best,
            budget,
            kind,
            gradient: GradientMethod::Auto,
            scratch: RefCell::new(Scratch {
                fc: vec![PreparedPoint::default(); n],
                cc: vec![PreparedPoint::default(); n],
                pairs_f: PairCache::new(tree),
                pairs_c: PairCache::new(tree),
                work: Work {
                    ga: vec![0.0; tree.d],
                    gb: vec![0.0; tree.d],
                    ..Work::default()
                },
            }),
        })
    }

    /// The same objective computing its gradient by `method` (values do not depend on it).
    /// Fails when [`GradientMethod::Coordinates`] is asked of a tree with `N·d` above
    /// [`MAX_PATH_VARIABLES`].
    pub fn with_gradient(mut self, method: GradientMethod) -> Result<Self> {
        let n_d = self.tree.steps() * self.tree.d;
        if method == GradientMethod::Coordinates && n_d > MAX_PATH_VARIABLES {
            return Err(Error::invalid(format!(
                "scenario tree: gradients with respect to coordinates carry at most \
                 {MAX_PATH_VARIABLES} derivatives, and this tree's paths have {n_d}; use the \
                 moments"
            )));
        }
        self.gradient = method;
        Ok(self)
    }

    /// Whether gradients go through the path moments.
    fn through_moments(&self) -> bool {
        match self.gradient {
            GradientMethod::Auto => self.tree.steps() * self.tree.d > MAX_PATH_VARIABLES,
            GradientMethod::Coordinates => false,
            GradientMethod::Moments => true,
        }
    }

    /// The tree.
    pub fn tree(&self) -> &Tree {
        self.tree
    }

    /// The incumbent.
    pub fn best(&self) -> f64 {
        self.best
    }

    /// The budget (`∞` for none).
    pub fn budget(&self) -> f64 {
        self.budget
    }

    /// The node values.
    pub fn kind(&self) -> NodeValue {
        self.kind
    }

    /// The same beliefs, incumbent, budget and node values over another tree (a policy
    /// maximises the root's own term over a tree of the root alone).
    pub fn with_tree<'b>(&self, tree: &'b Tree) -> Result<TreeObjective<'b>>
    where
        'a: 'b,
    {
        TreeObjective::new(tree, self.f, self.c, self.best, self.budget, self.kind)
    }

    /// The value contributed by each node (unweighted), for diagnostics and tests.
    pub fn node_values(&self, xs: &[f64]) -> Vec<f64> {
        let t = self.tree;
        let mut s = self.scratch.borrow_mut();
        let s = &mut *s;
        self.prepare_all(xs, false, s);
        (0..t.nodes())
            .map(|node| self.node_at::<0>(node, s, false).v)
            .collect()
    }

    /// The first-stage fantasised observations `y₁ʲ` at the root point of `xs` (what the
    /// warm start compares with the value actually observed).
    pub fn first_stage_fantasies(&self, xs: &[f64]) -> Vec<f64> {
        let t = self.tree;
        let mut c = PreparedPoint::default();
        self.f.prepare(&xs[..t.d], false, &mut c);
        let sd = (c.var + self.f.fantasy_noise()).sqrt();
        t.children(0).map(|j| c.mean + sd * t.eps_y[j]).collect()
    }

    fn prepare_all(&self, xs: &[f64], grad: bool, s: &mut Scratch) {
        let d = self.tree.d;
        let grads = if grad { d } else { 0 };
        s.pairs_f.start_evaluation(grads);
        s.pairs_c.start_evaluation(grads);
        let nodes = xs.len() / d;
        self.f.prepare_many(xs, grad, &mut s.fc[..nodes]);
        self.c.prepare_many(xs, grad, &mut s.cc[..nodes]);
    }

    fn evaluate(&self, xs: &[f64], grad: Option<&mut [f64]>) -> f64 {
        let t = self.tree;
        let d = t.d;
        if xs.len() != t.dim() || xs.iter().any(|v| !v.is_finite()) {
            if let Some(g) = grad {
                g.fill(0.0);
            }
            return f64::NAN;
        }
        let mut s = self.scratch.borrow_mut();
        let s = &mut *s;
        self.prepare_all(xs, grad.is_some(), s);
        let mut total = 0.0;
        match grad {
            None => {
                for node in 0..t.nodes() {
                    total += t.weight[node] * self.node_at::<0>(node, s, false).v;
                }
            }
            Some(g) => {
                g.fill(0.0);
                let moments = self.through_moments();
                let mut path = [0usize; MAX_STEPS];
                for node in 0..t.nodes() {
                    let len = t.path(node, &mut path);
                    let path = &path[..len];
                    let v = if moments {
                        self.add_node_grad_moments(node, path, s, g)
                    } else {
                        match len * d {
                            0..=4 => self.add_node_grad::<4>(node, path, s, g),
                            5..=8 => self.add_node_grad::<8>(node, path, s, g),
                            9..=16 => self.add_node_grad::<16>(node, path, s, g),
                            17..=32 => self.add_node_grad::<32>(node, path, s, g),
                            _ => self.add_node_grad::<64>(node, path, s, g),
                        }
                    };
                    total += t.weight[node] * v;
                }
            }
        }
        total
    }

    /// The value of `node` (whose path is `path`), adding its weighted gradient into `g`.
    fn add_node_grad<const W: usize>(
        &self,
        node: usize,
        path: &[usize],
        s: &mut Scratch,
        g: &mut [f64],
    ) -> f64 {
        let d = self.tree.d;
        let w = self.tree.weight[node];
        let r = self.node_at::<W>(node, s, false);
        for (gn, &p) in r.g.chunks_exact(d).zip(path) {
            for (gi, gn) in g[p * d..(p + 1) * d].iter_mut().zip(gn) {
                *gi += w * gn;
            }
        }
        r.v
    }

    /// [`Self::add_node_grad`] through the path's moments: duals just wide enough for the
    /// path's length (two beliefs' [`moment_count`]), whatever `d`.
    fn add_node_grad_moments(
        &self,
        node: usize,
        path: &[usize],
        s: &mut Scratch,
        g: &mut [f64],
    ) -> f64 {
        match path.len() {
            1 => self.add_moment_grad::<4>(node, path, s, g),
            2 => self.add_moment_grad::<10>(node, path, s, g),
            3 => self.add_moment_grad::<18>(node, path, s, g),
            4 => self.add_moment_grad::<28>(node, path, s, g),
            5 => self.add_moment_grad::<40>(node, path, s, g),
            6 => self.add_moment_grad::<54>(node, path, s, g),
            7 => self.add_moment_grad::<70>(node, path, s, g),
            _ => self.add_moment_grad::<88>(node, path, s, g),
        }
    }

    /// The value of `node` with its derivatives in the path's moments, chained to the
    /// coordinates and added, weighted, into `g`.
    fn add_moment_grad<const W: usize>(
        &self,
        node: usize,
        path: &[usize],
        s: &mut Scratch,
        g: &mut [f64],
    ) -> f64 {
        let (d, w) = (self.tree.d, self.tree.weight[node]);
        let r = self.node_at::<W>(node, s, true);
        let (adj_f, adj_c) = r.g[..2 * moment_count(path.len())].split_at(moment_count(path.len()));
        chain_moments(&s.fc, path, adj_f, &s.work.jf, w, d, g);
        chain_moments(&s.cc, path, adj_c, &s.work.jc, w, d, g);
        r.v
    }

    /// The value of `node` as a dual in the path's coordinates, or in its moments when
    /// `moments` (then the covariances' gradients are kept in the scratch's work).
    fn node_at<const W: usize>(&self, node: usize, s: &mut Scratch, moments: bool) -> D<W> {
        let t = self.tree;
        let mut path = [0usize; MAX_STEPS];
        let len = t.path(node, &mut path);
        let mut pf: [&PreparedPoint; MAX_STEPS] = [&s.fc[0]; MAX_STEPS];
        let mut pc: [&PreparedPoint; MAX_STEPS] = [&s.cc[0]; MAX_STEPS];
        let mut ey = [0.0; MAX_STEPS];
        let mut ec = [0.0; MAX_STEPS];
        for i in 0..len {
            pf[i] = &s.fc[path[i]];
            pc[i] = &s.cc[path[i]];
            if i + 1 < len {
                ey[i] = t.eps_y[path[i + 1]];
                ec[i] = t.eps_c[path[i + 1]];
            }
        }
        let leaf = t.level[node] + 1 == t.steps();
        let (pf, pc, work) = (&pf[..len], &pc[..len], &mut s.work);
        let pairs = Pairs {
            path: &path[..len],
            f: &mut s.pairs_f,
            c: &mut s.pairs_c,
        };
        match len {
            0..=2 => node_value::<W, 2>(self, pf, pc, &ey, &ec, leaf, moments, pairs, work),
            3..=4 => node_value::<W, 4>(self, pf, pc, &ey, &ec, leaf, moments, pairs, work),
            _ => node_value::<W, MAX_STEPS>(self, pf, pc, &ey, &ec, leaf, moments, pairs, work),
        }
    }

    /// For finite domains: the exact maximum of the sample-average tree over per-node
    /// choices among `candidates`, by backward induction on the scenario tree (each node's
    /// choice only affects its own subtree). Returns the value and the root's choice.
    /// Work grows as `Π (|candidates|·mᵢ)`: meant for small instances.
    pub fn solve_finite(&self, candidates: &[Vec<f64>]) -> Result<(f64, usize)> {
        let d = self.tree.d;
        if candidates.is_empty() || candidates.iter().any(|c| c.len() != d) {
            return Err(Error::invalid(format!(
                "scenario tree: need at least one candidate, each of dimension {d}"
            )));
        }
        let mut fc = vec![PreparedPoint::default(); candidates.len()];
        let mut cc = vec![PreparedPoint::default(); candidates.len()];
        let xs = candidates.concat();
        self.f.prepare_many(&xs, false, &mut fc);
        self.c.prepare_many(&xs, false, &mut cc);
        let mut chosen = Vec::with_capacity(MAX_STEPS);
        Ok(self.dp(0, &fc, &cc, &mut chosen, &mut Work::default()))
    }

    fn dp(
        &self,
        node: usize,
        fc: &[PreparedPoint],
        cc: &[PreparedPoint],
        chosen: &mut Vec<usize>,
        work: &mut Work,
    ) -> (f64, usize) {
        let t = self.tree;
        let mut path = [0usize; MAX_STEPS];
        let len = t.path(node, &mut path);
        let mut ey = [0.0; MAX_STEPS];
        let mut ec = [0.0; MAX_STEPS];
        for i in 0..len - 1 {
            ey[i] = t.eps_y[path[i + 1]];
            ec[i] = t.eps_c[path[i + 1]];
        }
        let leaf = t.level[node] + 1 == t.steps();
        let mut best = (f64::NEG_INFINITY, 0);
        for cand in 0..fc.len() {
            chosen.push(cand);
            let mut pf: [&PreparedPoint; MAX_STEPS] = [&fc[0]; MAX_STEPS];
            let mut pc: [&PreparedPoint; MAX_STEPS] = [&cc[0]; MAX_STEPS];
            for (i, &c) in chosen.iter().enumerate() {
                pf[i] = &fc[c];
                pc[i] = &cc[c];
            }
            let (pf, pc) = (&pf[..len], &pc[..len]);
            let (mut fresh_f, mut fresh_c) = (PairCache::disabled(), PairCache::disabled());
            let pairs = Pairs {
                path: &path[..len],
                f: &mut fresh_f,
                c: &mut fresh_c,
            };
            let mut v =
                node_value::<0, MAX_STEPS>(self, pf, pc, &ey, &ec, leaf, false, pairs, work).v;
            let kids = t.children(node);
            if !kids.is_empty() {
                let m = kids.len() as f64;
                for k in kids {
                    v += self.dp(k, fc, cc, chosen, work).0 / m;
                }
            }
            chosen.pop();
            if v > best.0 {
                best = (v, cand);
            }
        }
        best
    }
}

/// `Q̂_N` as a function of the concatenated decision vector.
impl Objective for TreeObjective<'_> {
    /// `Q̂_N` at the decision vector `xs`.
    fn value(&self, xs: &[f64]) -> f64 {
        self.evaluate(xs, None)
    }

    /// `Q̂_N` at `xs`, writing its gradient into `grad`.
    fn value_grad(&self, xs: &[f64], grad: &mut [f64]) -> f64 {
        self.evaluate(xs, Some(grad))
    }

    /// True for every tree, KG's included: the tree policies choose the starts of every tree
    /// by BoTorch's non-negative rule (budgeted-EI trees are ≥ 0 with a meaningful zero; for
    /// KG's leaf means, which need not be, the rule keeps the points nearest the best value).
    fn non_negative(&self) -> bool {
        true
    }
}

/// A dual seeded with `value` and the gradient `grad` in the block of path slot `slot`.
#[inline]
fn at_slot<const W: usize>(value: f64, grad: &[f64], slot: usize, d: usize) -> D<W> {
    let mut r = D::c(value);
    if W > 0 {
        r.g[slot * d..(slot + 1) * d].copy_from_slice(&grad[..d]);
    }
    r
}

/// A dual of value `value` that is the variable `index` itself.
#[inline]
fn variable<const W: usize>(value: f64, index: usize) -> D<W> {
    let mut r = D::c(value);
    r.g[index] = 1.0;
    r
}

/// `y += s·x`.
#[inline]
fn axpy(s: f64, x: &[f64], y: &mut [f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += s * xi;
    }
}

/// Adds `w · Σ_m (∂v/∂m) ∇m` into `g` for one belief's moments `m` of the path `path` (node
/// indices into `points`), given the adjoints `adj = ∂v/∂m` in [`Wrt::Moments`]' order and
/// the covariances' gradients `pairs` as [`Work::jf`] keeps them.
fn chain_moments(
    points: &[PreparedPoint],
    path: &[usize],
    adj: &[f64],
    pairs: &[f64],
    w: f64,
    d: usize,
    g: &mut [f64],
) {
    // A belief the node never read (ln c without a budget, KG's costs) has no adjoint, and
    // left no covariance gradients to read.
    if adj.iter().all(|&a| a == 0.0) {
        return;
    }
    let len = path.len();
    let block = |node: usize| node * d..(node + 1) * d;
    let mut pair = pairs.chunks_exact(2 * d);
    for a in 0..len {
        let p = &points[path[a]];
        axpy(w * adj[a], &p.dmean, &mut g[block(path[a])]);
        axpy(
            w * adj[moment_index(len, a, a)],
            &p.dvar,
            &mut g[block(path[a])],
        );
        for b in 0..a {
            let s = w * adj[moment_index(len, a, b)];
            let j = pair.next().expect("one kept gradient per covariance pair");
            axpy(s, &j[..d], &mut g[block(path[a])]);
            axpy(s, &j[d..], &mut g[block(path[b])]);
        }
    }
}

/// The joint posterior covariance of the path points plus fantasy noise on all but the last,
/// and its (semi-definite) Cholesky factor, as duals with respect to `wrt`: means and
/// variances from the prepared points `p` of belief `b`, covariances between them through
/// `pairs` (by the path's tree nodes `path`). Under [`Wrt::Moments`] the covariances'
/// gradients are kept in `kept` for [`chain_moments`].
#[allow(clippy::too_many_arguments)]
fn path_factor<const W: usize, const S: usize>(
    b: &dyn Covariance,
    p: &[&PreparedPoint],
    wrt: Wrt,
    pairs: &mut PairCache,
    path: &[usize],
    ga: &mut Vec<f64>,
    gb: &mut Vec<f64>,
    kept: &mut Vec<f64>,
) -> (Mat<W, S>, [D<W>; S]) {
    let len = p.len();
    let d = p[0].x.len();
    let mut m: Mat<W, S> = [[D::c(0.0); S]; S];
    let mut mean = [D::c(0.0); S];
    let want = W > 0;
    ga.resize(if want { d } else { 0 }, 0.0);
    gb.resize(if want { d } else { 0 }, 0.0);
    kept.clear();
    let noise = b.fantasy_noise();
    for a in 0..len {
        let diag = p[a].var + if a + 1 < len { noise } else { 0.0 };
        (mean[a], m[a][a]) = match wrt {
            Wrt::Moments(o) => (
                variable(p[a].mean, o + a),
                variable(diag, o + moment_index(len, a, a)),
            ),
            Wrt::Coordinates if want => (
                at_slot(p[a].mean, &p[a].dmean, a, d),
                at_slot(diag, &p[a].dvar, a, d),
            ),
            Wrt::Coordinates => (D::c(p[a].mean), D::c(diag)),
        };
        for c in 0..a {
            let v = pairs.cov(b, p, path, a, c, ga, gb);
            m[a][c] = match wrt {
                Wrt::Moments(o) => {
                    kept.extend_from_slice(ga);
                    kept.extend_from_slice(gb);
                    variable(v, o + moment_index(len, a, c))
                }
                Wrt::Coordinates => {
                    let mut e = D::c(v);
                    if want {
                        e.g[a * d..(a + 1) * d].copy_from_slice(ga);
                        e.g[c * d..(c + 1) * d].copy_from_slice(gb);
                    }
                    e
                }
            };
        }
    }
    // Cholesky; a pivot that is numerically zero (a repeated point without noise, a known
    // cost) makes that fantasy deterministic: its column is set to zero.
    let mut l: Mat<W, S> = [[D::c(0.0); S]; S];
    for j in 0..len {
        let mut s = m[j][j];
        for k in 0..j {
            s = s.add_scaled(-1.0, l[j][k] * l[j][k]);
        }
        let tol = 1e-13 * m[j][j].v.abs().max(1e-300);
        if s.v <= tol {
            continue;
        }
        let ljj = s.sqrt();
        l[j][j] = ljj;
        for i in j + 1..len {
            let mut s = m[i][j];
            for k in 0..j {
                s = s - l[i][k] * l[j][k];
            }
            l[i][j] = s / ljj;
        }
    }
    (l, mean)
}

/// The value of a node whose path has the prepared points `pf` (objective) and `pc` (ln c)
/// and the base samples `ey`, `ec`, as a dual in the path's coordinates or, when `moments`,
/// in its moments (the objective's first, then ln c's).
///
/// One function because it is the node's value read in order: the latent mean and σ at the
/// node given the path's fantasies, the incumbent over the path, the probability that the
/// node's cost fits the budget the path's fantasised costs leave, then EI times that
/// probability. Every stage is a dual over the same path factors, and the early returns
/// (a leaf-mean tree, no budget left, a known cost above it) skip the stages after them.
#[allow(clippy::too_many_arguments)]
fn node_value<const W: usize, const S: usize>(
    o: &TreeObjective<'_>,
    pf: &[&PreparedPoint],
    pc: &[&PreparedPoint],
    ey: &[f64; MAX_STEPS],
    ec: &[f64; MAX_STEPS],
    leaf: bool,
    moments: bool,
    pairs: Pairs<'_>,
    work: &mut Work,
) -> D<W> {
    let len = pf.len();
    let k = len - 1;
    // Kept gradients must be this node's: a belief not read below leaves none.
    work.jf.clear();
    work.jc.clear();
    if o.kind == NodeValue::LeafMean && !leaf {
        return D::c(0.0);
    }
    let (wrt_f, wrt_c) = if moments {
        (Wrt::Moments(0), Wrt::Moments(moment_count(len)))
    } else {
        (Wrt::Coordinates, Wrt::Coordinates)
    };
    let Work { ga, gb, jf, jc } = work;
    let Pairs {
        path,
        f: pairs_f,
        c: pairs_c,
    } = pairs;
    let (lf, mf) = path_factor::<W, S>(o.f, pf, wrt_f, pairs_f, path, ga, gb, jf);
    // Latent value at the node's point given the path's fantasies.
    let mut mean = mf[k];
    for i in 0..k {
        mean = mean.add_scaled(ey[i], lf[k][i]);
    }
    if o.kind == NodeValue::LeafMean {
        return mean;
    }
    let sigma = lf[k][k];
    // Incumbent: the best of the observed and the fantasised observations on the path.
    let mut best = D::c(o.best);
    for j in 0..k {
        let mut y = mf[j];
        for i in 0..=j {
            y = y.add_scaled(ey[i], lf[j][i]);
        }
        if y.v > best.v {
            best = y;
        }
    }
    // Budget left after the path's fantasised costs.
    let mut prob = D::c(1.0);
    if o.budget.is_finite() {
        let (lc, mc) = path_factor::<W, S>(o.c, pc, wrt_c, pairs_c, path, ga, gb, jc);
        let mut left = D::c(o.budget);
        for j in 0..k {
            let mut z = mc[j];
            for i in 0..=j {
                z = z.add_scaled(ec[i], lc[j][i]);
            }
            left = left - z.exp();
        }
        if left.v <= 0.0 {
            return D::c(0.0);
        }
        let mut mu_c = mc[k];
        for i in 0..k {
            mu_c = mu_c.add_scaled(ec[i], lc[k][i]);
        }
        let sc = lc[k][k];
        let zeta_num = left.ln() - mu_c;
        if sc.v <= 0.0 {
            // Known cost: P(c ≤ B) is a step.
            if zeta_num.v < 0.0 {
                return D::c(0.0);
            }
        } else {
            let zeta = zeta_num / sc;
            prob = zeta.chain(normal::cdf(zeta.v), normal::pdf(zeta.v));
        }
    }
    let diff = mean - best;
    let ei = if sigma.v > 1e-12 {
        let u = diff.v / sigma.v;
        let (h, dh) = h_grad(u);
        let mut e = D::c(sigma.v * h);
        let phi = normal::pdf(u);
        for ((g, gd), gs) in e.g.iter_mut().zip(&diff.g).zip(&sigma.g) {
            *g = dh * gd + phi * gs;
        }
        e
    } else if diff.v > 0.0 {
        diff
    } else {
        D::c(0.0)
    };
    ei * prob
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A smooth closed-form belief: mean `sin(Σx)`, variance `1 + x₀²/10`, covariance
    /// `½ exp(−|a − b|²)` between distinct points (so every path's matrix is positive
    /// definite), with exact gradients.
    struct Smooth;

    impl Covariance for Smooth {
        fn dim(&self) -> usize {
            2
        }

        fn fantasy_noise(&self) -> f64 {
            0.01
        }

        fn prepare(&self, x: &[f64], grad: bool, p: &mut PreparedPoint) {
            let s: f64 = x.iter().sum();
            p.x = x.to_vec();
            p.mean = s.sin();
            p.var = 1.0 + x[0] * x[0] / 10.0;
            p.dmean = if grad { vec![s.cos(); 2] } else { Vec::new() };
            p.dvar = if grad {
                vec![x[0] / 5.0, 0.0]
            } else {
                Vec::new()
            };
        }

        fn cov(&self, a: &PreparedPoint, b: &PreparedPoint, ga: &mut [f64], gb: &mut [f64]) -> f64 {
            let r2: f64 = a.x.iter().zip(&b.x).map(|(p, q)| (p - q) * (p - q)).sum();
            let k = 0.5 * (-r2).exp();
            if !ga.is_empty() {
                for j in 0..2 {
                    ga[j] = -2.0 * (a.x[j] - b.x[j]) * k;
                    gb[j] = -ga[j];
                }
            }
            k
        }
    }

    /// The pair cache returns what computing every path's covariances afresh returns, to the
    /// bit, for values and both gradient methods, across evaluations at different points
    /// (stale entries must never be read) and after switching between values and gradients.
    #[test]
    fn cached_pair_covariances_change_no_bit() {
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for fantasies in [vec![3usize, 2, 2], vec![1, 1, 1], vec![2]] {
            let tree = Tree::new(2, &fantasies, BaseSamples::Seeded(3)).unwrap();
            for method in [GradientMethod::Coordinates, GradientMethod::Moments] {
                let build = || {
                    TreeObjective::new(&tree, &Smooth, &Smooth, 0.2, 6.0, NodeValue::BudgetedEi)
                        .unwrap()
                        .with_gradient(method)
                        .unwrap()
                };
                let (cached, fresh) = (build(), build());
                {
                    let mut s = fresh.scratch.borrow_mut();
                    s.pairs_f.enabled = false;
                    s.pairs_c.enabled = false;
                }
                let mut rng = cabo_core::Rng::new(fantasies.len() as u64);
                for round in 0..6 {
                    let xs: Vec<f64> = (0..tree.dim()).map(|_| rng.uniform()).collect();
                    let (mut g1, mut g2) = (vec![0.0; xs.len()], vec![0.0; xs.len()]);
                    let v1 = cached.value(&xs);
                    let w1 = cached.value_grad(&xs, &mut g1);
                    let w2 = fresh.value_grad(&xs, &mut g2);
                    let what = format!("{fantasies:?} {method:?} round {round}");
                    assert_eq!(v1.to_bits(), fresh.value(&xs).to_bits(), "{what}");
                    assert_eq!(w1.to_bits(), w2.to_bits(), "{what}");
                    assert_eq!(bits(&g1), bits(&g2), "{what}");
                    assert!(w1 > 0.0, "{what}: a positive value exercises the paths");
                }
            }
        }
    }
}
