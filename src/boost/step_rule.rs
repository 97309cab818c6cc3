//! The step rules (docs/algorithms.md §3), shared by every method: size the step along the trees
//! an iteration fitted (`fit`), or re-solve their leaves.

use super::fit::{bound_leaf, Direction};
use super::ranks::shared;
use super::Context;
use crate::params::StepRule;
use crate::tree::enforce_monotone;
use rayon::prelude::*;

/// Applies a step rule at point `f` (n × K) to the trees of one iteration, `dirs[k]` fitted for
/// output k: rescales them (constant: ρ each; line search: one γ for the joint direction) or
/// re-solves their leaves (leaf line search, output by output). Newton trees are left as they
/// are. Returns the factor applied to the fitted trees (1 when leaves were re-solved).
pub fn apply_step_rule(
    ctx: &Context<'_>,
    rule: StepRule,
    f: &[f64],
    dirs: &mut [Direction],
) -> f64 {
    match rule {
        StepRule::Newton => 1.0,
        StepRule::Constant => {
            let rho = ctx.rho();
            dirs.iter_mut().for_each(|d| d.scale(rho));
            rho
        }
        // The natural step's trees (fitted to the natural gradient) take NGBoost's line search.
        StepRule::LineSearch | StepRule::Natural => {
            let k = dirs.len();
            let gamma = if k == 1 {
                ctx.line_search(f, &dirs[0].values)
            } else {
                let mut joint = vec![0.0; f.len()];
                for (class, dir) in dirs.iter().enumerate() {
                    dir.values
                        .iter()
                        .enumerate()
                        .for_each(|(i, &v)| joint[i * k + class] = v);
                }
                ctx.line_search(f, &joint)
            };
            dirs.iter_mut().for_each(|d| d.scale(gamma));
            gamma
        }
        StepRule::LeafLineSearch => {
            for (class, dir) in dirs.iter_mut().enumerate() {
                let grown = &mut dir.grown;
                let leaf_of = dir
                    .leaf_of
                    .take()
                    .unwrap_or_else(|| grown.leaf_index(ctx.data));
                let leaves: Vec<&[u32]> =
                    grown.leaves().iter().map(|l| grown.leaf_rows(l)).collect();
                // One Newton step on the squared loss is its exact search, which has a closed form;
                // where the curvature can vanish a Newton step has no bound.
                let closed_form = ctx.loss.unit_curvature() && ctx.params.tree.l2_leaf == 0.0;
                let newton = if closed_form || ctx.loss.curvature_can_vanish() {
                    0
                } else {
                    ctx.params.leaf_newton_steps
                };
                let local = shared(ctx.collective).is_none();
                let newton_values: Vec<Option<f64>> = if local && newton > 0 && ctx.loss.separable()
                {
                    leaves
                        .par_iter()
                        .map(|rows| ctx.leaf_newton_value(f, rows, class, newton))
                        .collect()
                } else {
                    vec![None; leaves.len()]
                };
                // Leaves without curvature (piecewise-linear losses) take the exact search.
                let exact = |ctx: &Context<'_>| -> Vec<f64> {
                    let mut scratch = ctx.buffers.leaf_scratch();
                    let w = ctx.line_search_weights();
                    scratch.assume_unit_weights(w.given().is_none());
                    let (y, w) = (ctx.y, w.slice());
                    ctx.loss
                        .leaf_values(y, f, w, &leaves, &leaf_of, &mut scratch, class)
                };
                let values: Vec<f64> = if let Some(collective) = shared(ctx.collective) {
                    ctx.leaf_values_over_ranks(collective, f, &leaves, class, newton)
                } else if !ctx.loss.separable() {
                    ctx.diagonal_newton_leaves(f, &leaves)
                } else if newton_values.iter().all(Option::is_some) {
                    newton_values.into_iter().flatten().collect()
                } else {
                    let exact = exact(ctx);
                    newton_values
                        .into_iter()
                        .zip(exact)
                        .map(|(newton, exact)| newton.unwrap_or(exact))
                        .collect()
                };
                let values: Vec<f64> = values
                    .into_iter()
                    .map(|v| if v.is_finite() { v } else { 0.0 })
                    .map(|v| bound_leaf(v, ctx.params.max_leaf_value))
                    .collect();
                grown.set_leaf_values(&values);
                // Leaves re-solved one by one may cross the bounds of their split: restore
                // monotonicity (the proximal methods' leaves come through here too).
                if let Some(monotone) = ctx.constraints.monotone() {
                    enforce_monotone(&mut grown.tree, monotone);
                }
                // The re-solved tree is added where it is used (`Direction::add_to_column`),
                // from the leaf index, with no vector of values written and read back between.
                ctx.buffers.recycle_values(std::mem::take(&mut dir.values));
                dir.leaf_of = Some(leaf_of);
            }
            1.0
        }
    }
}
