//! Seed 001's extra initial condition for a tree search (`custom_warmstart_multistep.py`):
//! the root at the posterior-mean maximiser, one observation fantasised there with
//! observation noise, and a shorter tree on the conditioned beliefs whose points fill the
//! rest of the tree.
//!
//! The shorter tree has one step fewer and a single fantasy per stage (the path variant,
//! whose fantasies are posterior means), and the budget less the fantasised cost; with no
//! stage left it is the budgeted one-step value. Every node of the full tree at level `l ≥ 1`
//! takes the shorter tree's point at level `l − 1`, as the authors copy one point into all
//! of a level's slots. The fantasy is drawn with cabo's own generator from the decision's
//! seed, so the start is the same at every thread count and after a resume.

use crate::belief::UnitCostPath;
use crate::policy::root_settings;
use crate::schedule::{fantasy_observation, fantasy_y};
use crate::tree::{BaseSamples, NodeValue, Tree, TreeObjective};
use cabo_core::capability::Covariance;
use cabo_core::{CostBelief, DecisionContext, Posterior, Result, Rng, derive_seed};
use cabo_optim::{MaximizeOptions, Tolerances, maximize};

/// The standard normals `(ε_y, ε_ln c)` of the fantasy observation at the root.
fn fantasy_draw(seed: u64) -> (f64, f64) {
    let mut r = Rng::new(derive_seed(&[&seed, &"fantasy start"]));
    (r.normal(), r.normal())
}

/// The beliefs after the fantasy at `root`: objective, cost (`None` for the unit cost), the
/// fantasised value and the fantasised cost.
type Conditioned = (Box<dyn Posterior>, Option<Box<dyn CostBelief>>, f64, f64);

/// Conditions the decision's beliefs on one observation at `root` drawn with observation
/// noise; `None` when a belief cannot be conditioned (the start is then skipped).
fn condition(
    ctx: &DecisionContext<'_>,
    root: &[f64],
    unit_cost: bool,
) -> Result<Option<Conditioned>> {
    let post = ctx.posterior()?;
    let Some(ff) = post.fantasize() else {
        return Ok(None);
    };
    let draw = fantasy_draw(ctx.seed);
    if unit_cost {
        let y = fantasy_y(post, root, draw.0);
        return Ok(Some((ff.condition(root, &[y])?, None, y, 1.0)));
    }
    let belief = ctx.cost_belief()?;
    let Some(fc) = belief.fantasize() else {
        return Ok(None);
    };
    let (y, ln_c) = fantasy_observation(post, belief, root, draw);
    let f = ff.condition(root, &[y])?;
    let c = fc.condition(root, &[ln_c])?;
    Ok(Some((f, Some(c), y, ln_c.exp())))
}

/// The start for the decision's tree `obj` (its tree, incumbent, budget and node values)
/// rooted at `root` (the posterior-mean maximiser); `unit_cost` when the tree's cost is the
/// unit (multi-step EI) rather than the cost belief's (B-MS-EI). `None` for trees without
/// stages, of leaf values (KG) or whose beliefs cannot be conditioned.
pub(crate) fn fantasy_start(
    ctx: &DecisionContext<'_>,
    obj: &TreeObjective<'_>,
    unit_cost: bool,
    root: &[f64],
) -> Result<Option<Vec<f64>>> {
    let tree = obj.tree();
    let stages = tree.fantasies().len();
    if stages == 0 || obj.kind() != NodeValue::BudgetedEi {
        return Ok(None);
    }
    let Some((f, c, y, cost)) = condition(ctx, root, unit_cost)? else {
        return Ok(None);
    };
    let d = tree.point_dim();
    let unit = UnitCostPath { dim: d };
    let fcov = f.covariance();
    let ccov: Option<&dyn Covariance> = match &c {
        Some(c) => c.covariance(),
        None => Some(&unit),
    };
    let (Some(fcov), Some(ccov)) = (fcov, ccov) else {
        return Ok(None);
    };
    let short = Tree::new(d, &vec![1; stages - 1], BaseSamples::Seeded(0))?;
    let budget = obj.budget() - cost;
    let short_obj = TreeObjective::new(&short, fcov, ccov, obj.best().max(y), budget, obj.kind())?;
    let options = MaximizeOptions {
        tolerances: Tolerances::SCIPY,
        ..MaximizeOptions::default()
    };
    let seed = derive_seed(&[&ctx.seed, &"fantasy start tree"]);
    let m = maximize(
        &short_obj,
        short.dim(),
        &root_settings(ctx.optimizer),
        seed,
        &options,
    )?;
    Ok(Some(fill(tree, root, &m.x)))
}

/// The full tree with `root` at the root and the shorter tree's point of level `l − 1` at
/// every node of level `l ≥ 1`.
pub(crate) fn fill(tree: &Tree, root: &[f64], short: &[f64]) -> Vec<f64> {
    let d = tree.point_dim();
    let mut out = Vec::with_capacity(tree.dim());
    out.extend_from_slice(root);
    for node in 1..tree.nodes() {
        let l = tree.level(node);
        out.extend_from_slice(&short[(l - 1) * d..l * d]);
    }
    out
}
