//! Lookahead objectives an outsider can check: a policy's scenario tree as a function of its
//! node points, with its standard-normal base samples given or left as the policy's own.
//!
//! A tree policy (multi-step EI, B-MS-EI, one-shot KG) maximises a sample-average value over
//! every decision point of a scenario tree jointly. [`LookaheadSpec`] is what such a policy's
//! spec offers, through [`PolicySpec::lookahead`](crate::PolicySpec::lookahead), so that
//! `cargo xtask inspect` can evaluate the tree at given points and an independent
//! implementation (BoTorch's `qMultiStepLookahead` with fixed base samples, say) can compare
//! value for value. [`TreeShape`] fixes the order of the nodes and of the base samples.

use crate::{DecisionContext, Diagnostics, Objective, Result};

/// The layout of a scenario tree with fantasy counts `(m₁, …, m_{N−1})`.
///
/// Nodes are numbered breadth first: the root (stage 0) is node 0; then stage 1's `m₁` nodes;
/// then stage 2's `m₁m₂` nodes, the children of stage 1's first node before those of its
/// second, and so on. A node is named by its *path*, the fantasy index taken at each stage
/// from the root: `[]` is the root, `[j]` the stage-1 node of fantasy `j`, `[j, k]` the
/// stage-2 node of fantasy `k` below `[j]`. Paths in node order are in lexicographic order
/// within a stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeShape {
    fantasies: Vec<usize>,
}

impl TreeShape {
    /// The shape of a tree with fantasy counts `fantasies` (one per stage after the root).
    pub fn new(fantasies: &[usize]) -> Self {
        TreeShape {
            fantasies: fantasies.to_vec(),
        }
    }

    /// The fantasy counts `(m₁, …, m_{N−1})`.
    pub fn fantasies(&self) -> &[usize] {
        &self.fantasies
    }

    /// Number of stages after the root, `N − 1`.
    pub fn stages(&self) -> usize {
        self.fantasies.len()
    }

    /// Number of nodes at `stage` (0 is the root): `m₁⋯m_stage`.
    pub fn stage_nodes(&self, stage: usize) -> usize {
        self.fantasies[..stage]
            .iter()
            .fold(1usize, |n, &m| n.saturating_mul(m))
    }

    /// Number of nodes of the whole tree.
    pub fn nodes(&self) -> usize {
        (0..=self.stages()).fold(0usize, |n, s| n.saturating_add(self.stage_nodes(s)))
    }

    /// Every node's path from the root, in node order (see the type's documentation).
    pub fn paths(&self) -> Vec<Vec<usize>> {
        let mut paths = vec![Vec::new()];
        let mut stage_start = 0;
        for &m in &self.fantasies {
            let stage_end = paths.len();
            for parent in stage_start..stage_end {
                for j in 0..m {
                    let mut p = paths[parent].clone();
                    p.push(j);
                    paths.push(p);
                }
            }
            stage_start = stage_end;
        }
        paths
    }

    /// One base-sample entry per node after the root, in node order, from per-stage lists.
    ///
    /// `stages[s]` holds stage `s + 1`'s entries: either `m_{s+1}` of them, shared by every
    /// parent of the stage (entry `j` leads to each parent's child `j`, as BoTorch shares a
    /// stage's base samples across the fantasy batch), or one per node of the stage in node
    /// order. The two agree when the stage has one parent. Returns `None` when a stage has
    /// neither count (the caller says which, in its own words).
    pub fn per_node(&self, stages: &[Vec<Vec<f64>>]) -> Option<Vec<Vec<f64>>> {
        if stages.len() != self.stages() {
            return None;
        }
        let mut out = Vec::new();
        for (s, entries) in stages.iter().enumerate() {
            let (m, count) = (self.fantasies[s], self.stage_nodes(s + 1));
            if entries.len() == count {
                out.extend(entries.iter().cloned());
            } else if entries.len() == m {
                for _ in 0..self.stage_nodes(s) {
                    out.extend(entries.iter().cloned());
                }
            } else {
                return None;
            }
        }
        Some(out)
    }

    /// The inverse of [`TreeShape::per_node`]: per stage, the `m` shared entries when every
    /// parent's children carry the same ones, else one entry per node of the stage.
    pub fn per_stage(&self, nodes: &[Vec<f64>]) -> Vec<Vec<Vec<f64>>> {
        let mut out = Vec::with_capacity(self.stages());
        let mut start = 0;
        for (s, &m) in self.fantasies.iter().enumerate() {
            let count = self.stage_nodes(s + 1);
            let stage = &nodes[start..start + count];
            let first = &stage[..m];
            let shared = stage.chunks_exact(m).all(|c| c == first);
            out.push(if shared { first } else { stage }.to_vec());
            start += count;
        }
        out
    }
}

/// A policy's scenario tree for one decision, as a function of the concatenated node points
/// (node order of [`TreeShape`], `d` coordinates each): the [`Objective`] the policy
/// maximises, its value the `acq_value` a decision records.
pub trait Lookahead: Objective {
    /// The tree's layout.
    fn shape(&self) -> TreeShape;

    /// The standard-normal base samples in use, one entry per node after the root in node
    /// order, [`LookaheadSpec::outputs`] numbers each (`[ε_y]` or `[ε_y, ε_ln c]`): the
    /// fantasy that leads to the node is `μ + L ε` along its path.
    fn base_samples(&self) -> Vec<Vec<f64>>;

    /// Each node's own term at the node points `xs`, unweighted (the tree's value is their
    /// average weighted by `1/(m₁⋯m_stage)`).
    fn node_values(&self, xs: &[f64]) -> Vec<f64>;

    /// The numbers the value depends on besides the points and samples (the incumbent, the
    /// budget of the tree).
    fn diagnostics(&self) -> Diagnostics;
}

/// What a tree policy's spec offers to build its [`Lookahead`] outside a run.
pub trait LookaheadSpec {
    /// The fantasy counts of the tree.
    fn fantasies(&self) -> Vec<usize>;

    /// How many standard normals each fantasy draws: 1 (the objective) or 2 (the objective
    /// and ln c, when the cost is modelled).
    fn outputs(&self) -> usize;

    /// The tree this policy would build for the decision `ctx`, with the base samples
    /// `samples` (one entry per node after the root, as [`Lookahead::base_samples`]
    /// returns them) or, for `None`, the ones the policy itself draws for a decision seeded
    /// by `ctx.seed`.
    fn lookahead<'a>(
        &self,
        ctx: &'a DecisionContext<'a>,
        samples: Option<&[Vec<f64>]>,
    ) -> Result<Box<dyn Lookahead + 'a>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_breadth_first_and_lexicographic_within_a_stage() {
        let shape = TreeShape::new(&[2, 3]);
        assert_eq!(shape.nodes(), 1 + 2 + 6);
        let paths = shape.paths();
        assert_eq!(paths.len(), 9);
        assert_eq!(paths[0], Vec::<usize>::new());
        assert_eq!(paths[1..3], [vec![0], vec![1]]);
        assert_eq!(paths[3], vec![0, 0]);
        assert_eq!(paths[5], vec![0, 2]);
        assert_eq!(paths[8], vec![1, 2]);
    }

    #[test]
    fn shared_and_per_node_samples_expand_and_collapse() {
        let shape = TreeShape::new(&[2, 2]);
        let e = |v: f64| vec![v];
        let shared = vec![vec![e(1.0), e(2.0)], vec![e(3.0), e(4.0)]];
        let nodes = shape.per_node(&shared).unwrap();
        assert_eq!(nodes, [1.0, 2.0, 3.0, 4.0, 3.0, 4.0].map(e));
        assert_eq!(shape.per_stage(&nodes), shared);
        let own = vec![vec![e(1.0), e(2.0)], vec![e(3.0), e(4.0), e(5.0), e(6.0)]];
        let nodes = shape.per_node(&own).unwrap();
        assert_eq!(shape.per_stage(&nodes), own);
        assert!(shape.per_node(&own[..1]).is_none());
        assert!(shape.per_node(&[vec![e(1.0)], own[1].clone()]).is_none());
    }
}
