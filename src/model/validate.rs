//! What a model must satisfy before anything uses it. A model file is untrusted data: every model
//! `Model::from_json` accepts must predict without panicking, hanging or returning NaN/∞ on finite
//! or missing inputs. Training builds models that satisfy all of this; a file breaking any rule
//! was edited or corrupted, and is rejected with the tree, node and field at fault.

use super::{FeatureSpec, Model};
use crate::data::BinMapper;
use crate::error::{Error, Number, Result};
use crate::loss::{Link, LossSpec};
use crate::tree::{Node, Tree, MAX_DEPTH};

/// Trees per model: 2^24 is 16.7 million, more than any run trains (iterations × classes), and
/// small enough for the bound on the sum of the trees' contributions below.
pub const MAX_TREES: usize = 1 << 24;
/// Nodes per tree: 2^26 (a tree of 33 million leaves) is beyond what training data of u32 row
/// indices yields in practice, and keeps node indices far inside u32.
pub const MAX_NODES: usize = 1 << 26;
/// Outputs (classes or targets): 2^16, far more than boosting trains (a tree per class and
/// iteration). Prediction's work and memory grow with rows × outputs, so a file must not choose
/// the output count freely: 2^20 outputs in a 10 MB file took 5 GB to predict 600 rows.
pub const MAX_OUTPUTS: usize = 1 << 16;
/// Bound on |bias| and on |weight · value| of every leaf. A prediction is a bias plus at most
/// `MAX_TREES` such terms, so |score| ≤ (2^24 + 1) · 1e30 < 2e37: finite in f64 with a margin of
/// 10^270, which also keeps differences of scores (softmax) and products with a loss parameter
/// of moderate size finite. Real models stay many orders of magnitude below (a leaf value is a
/// step on the scale of the target).
pub const MAX_ABS_TERM: f64 = 1e30;

impl Model {
    /// Checks the whole model: the loss and its outputs, the feature mappers, and that every tree
    /// is a tree (each node but the root the child of exactly one parent, children after their
    /// parent) of bounded depth whose rules fit the features and whose values are finite.
    pub fn validate(&self) -> Result<()> {
        self.validate_loss()?;
        if self.trees.len() > MAX_TREES {
            return bad(format!(
                "{} trees; at most {MAX_TREES} are accepted",
                self.trees.len()
            ));
        }
        if self.weights.len() != self.trees.len() || self.tree_outputs.len() != self.trees.len() {
            return bad(format!(
                "{} trees, {} weights and {} tree outputs: the counts must be equal",
                self.trees.len(),
                self.weights.len(),
                self.tree_outputs.len()
            ));
        }
        // Training needs a feature column, and so does prediction (`Frame::new`).
        if self.features.is_empty() {
            return bad("the model has no features".into());
        }
        for (j, feature) in self.features.iter().enumerate() {
            validate_feature(feature).map_err(|e| model_error(format!("feature {j}: {e}")))?;
            validate_target_stat(feature).map_err(|e| model_error(format!("feature {j}: {e}")))?;
        }
        super::levels::validate(self)?;
        for (t, tree) in self.trees.iter().enumerate() {
            let (weight, output) = (self.weights[t], self.tree_outputs[t]);
            if output as usize >= self.n_outputs {
                return bad(format!(
                    "tree {t}: output {output}, but the model has {} outputs",
                    self.n_outputs
                ));
            }
            if !weight.is_finite() {
                return bad(format!("tree {t}: weight {weight} is not finite"));
            }
            self.validate_tree(tree, weight)
                .map_err(|e| model_error(format!("tree {t}, {e}")))?;
        }
        self.validate_iterations()
    }

    /// The iteration path (`weights_at`): tree counts that never decrease and never exceed the
    /// trees, and for momentum methods one weight per tree of each iteration, each bounded as
    /// `weights` are (finite, and within `MAX_ABS_TERM` times any leaf of its tree).
    fn validate_iterations(&self) -> Result<()> {
        let n_trees = self.trees.len();
        let path = &self.iteration_trees;
        if let Some(i) = path.iter().position(|&t| t > n_trees) {
            return bad(format!(
                "iteration_trees[{i}] = {}, but the model has {n_trees} trees",
                path[i]
            ));
        }
        if let Some(i) = path.windows(2).position(|w| w[0] > w[1]) {
            return bad(format!(
                "iteration_trees decreases from {} (iteration {}) to {} (iteration {}): an \
                 iteration adds trees, never removes them",
                path[i],
                i + 1,
                path[i + 1],
                i + 2
            ));
        }
        // Without a path (files written before it existed) any kept iteration is refused at
        // prediction; still, a count must not ask a caller to walk 2^64 iterations.
        let most = if path.is_empty() {
            MAX_TREES
        } else {
            path.len()
        };
        if let Some(best) = self.best_iteration.filter(|&b| b > most) {
            return bad(format!(
                "best_iteration = {best}, but the model holds {} iterations",
                path.len()
            ));
        }
        let weights = &self.iteration_weights;
        if weights.is_empty() {
            return Ok(());
        }
        if weights.len() != path.len() {
            return bad(format!(
                "{} iteration_weights for {} iteration_trees: the counts must be equal",
                weights.len(),
                path.len()
            ));
        }
        let largest_leaf: Vec<f64> = (self.trees.iter())
            .map(|tree| {
                (tree.nodes.iter().filter(|n| n.is_leaf())).fold(0.0, |m, n| n.value.abs().max(m))
            })
            .collect();
        for (i, (w, &t)) in weights.iter().zip(path).enumerate() {
            if w.len() != t {
                return bad(format!(
                    "iteration_weights[{i}] has {} weights for the {t} trees of iteration {}",
                    w.len(),
                    i + 1
                ));
            }
            let out_of_bounds =
                |&(j, w): &(usize, &f64)| !w.is_finite() || !within_term_bound(w * largest_leaf[j]);
            if let Some((j, &w)) = w.iter().enumerate().find(out_of_bounds) {
                return bad(format!(
                    "iteration_weights[{i}][{j}] = {}: a tree weight must be finite and its \
                     leaves' terms within {MAX_ABS_TERM:e} in magnitude (the largest leaf of \
                     tree {j} is {})",
                    Number(w),
                    Number(largest_leaf[j])
                ));
            }
        }
        Ok(())
    }

    /// The loss builds (parameters in range), with as many outputs as it gives scores per row.
    fn validate_loss(&self) -> Result<()> {
        if !(1..=MAX_OUTPUTS).contains(&self.n_outputs) {
            return bad(format!(
                "n_outputs = {}; allowed 1..={MAX_OUTPUTS}",
                self.n_outputs
            ));
        }
        // A custom loss is not saved: the model keeps its trees and predicts the link.
        let expected = if self.loss == LossSpec::Custom {
            1
        } else {
            self.loss()?.n_outputs()
        };
        if self.n_outputs != expected {
            return bad(format!(
                "the loss {} gives {expected} scores per row, but n_outputs = {}",
                self.loss, self.n_outputs
            ));
        }
        if self.bias.len() != self.n_outputs {
            return bad(format!(
                "{} bias values for {} outputs",
                self.bias.len(),
                self.n_outputs
            ));
        }
        if let Some((k, b)) = (self.bias.iter().enumerate()).find(|(_, b)| !within_term_bound(**b))
        {
            return bad(format!(
                "bias {k} = {}; allowed a finite number of magnitude ≤ {MAX_ABS_TERM:e}",
                Number(*b)
            ));
        }
        // The exponential loss's probability is σ(2βf): past f64::MAX / 2, 2β is ∞ and a score
        // of 0 (the bias, or iteration 0) gives NaN. Training's β is of order 1.
        if let LossSpec::Exponential { beta } = self.loss {
            if beta > MAX_ABS_TERM {
                return bad(format!(
                    "loss {}: beta above {MAX_ABS_TERM:e} is refused (2·beta·score must stay \
                     finite)",
                    self.loss
                ));
            }
        }
        // Under a log link the bias is the log of a mean (a finite positive number), so e^bias
        // is finite. Trees can still push a row's score past ln(f64::MAX); `Model::response`
        // bounds that mean.
        if has_log_link(&self.loss) {
            if let Some((k, b)) = (self.bias.iter().enumerate()).find(|(_, b)| !b.exp().is_finite())
            {
                return bad(format!(
                    "bias {k} = {} under the log link of the {} loss: e^bias overflows (a bias \
                     is the log of a mean, at most ln(f64::MAX) ≈ 709.78)",
                    Number(*b),
                    self.loss
                ));
            }
        }
        Ok(())
    }

    /// Errors start with the node ("node 3: ..."): the caller prefixes the tree.
    fn validate_tree(&self, tree: &Tree, weight: f64) -> std::result::Result<(), String> {
        let n_nodes = tree.nodes.len();
        if n_nodes == 0 {
            return Err("no nodes".into());
        }
        if n_nodes > MAX_NODES {
            return Err(format!("{n_nodes} nodes; at most {MAX_NODES} are accepted"));
        }
        // levels[i]: split levels above node i, known before node i is visited because its
        // parent comes first; has_parent[i]: some earlier node has i as a child.
        let mut levels = vec![0usize; n_nodes];
        let mut has_parent = vec![false; n_nodes];
        for (i, node) in tree.nodes.iter().enumerate() {
            let at = |msg: String| format!("node {i}: {msg}");
            if i > 0 && !has_parent[i] {
                return Err(at(
                    "no node has it as a child (every node but the root must)".into(),
                ));
            }
            if !node.value.is_finite() {
                return Err(at(format!("value {} is not finite", node.value)));
            }
            if node.is_leaf() {
                if node.right != 0 {
                    return Err(at(format!("a leaf (left = 0) with right = {}", node.right)));
                }
                if node.category.is_some() {
                    return Err(at("a leaf with a category".into()));
                }
                if !within_term_bound(weight * node.value) {
                    return Err(at(format!(
                        "tree weight {} × leaf value {} exceeds {MAX_ABS_TERM:e} in magnitude",
                        Number(weight),
                        Number(node.value)
                    )));
                }
                continue;
            }
            for (side, child) in [("left", node.left), ("right", node.right)] {
                let c = child as usize;
                if c <= i || c >= n_nodes {
                    return Err(at(format!(
                        "{side} = {child}: a child must come after its parent and below the \
                         node count {n_nodes}"
                    )));
                }
                if has_parent[c] {
                    return Err(at(format!(
                        "{side} = {child}: it is already the child of another node (or of this one)"
                    )));
                }
                has_parent[c] = true;
                levels[c] = levels[i] + 1;
            }
            if levels[i] + 1 > MAX_DEPTH {
                return Err(at(format!(
                    "the tree is deeper than {MAX_DEPTH} split levels, the deepest training grows"
                )));
            }
            self.validate_rule(tree, node).map_err(at)?;
        }
        Ok(())
    }

    /// A split's rule: on a feature of the model, numeric (threshold, bin) on a numeric feature,
    /// a category set on a categorical one.
    fn validate_rule(&self, tree: &Tree, node: &Node) -> std::result::Result<(), String> {
        let Some(feature) = self.features.get(node.feature as usize) else {
            return Err(format!(
                "feature = {}, but the model has {} features",
                node.feature,
                self.features.len()
            ));
        };
        match (&feature.mapper, node.category) {
            (BinMapper::Numeric { cuts }, None) => {
                if node.threshold.is_nan() {
                    return Err("threshold is NaN".into());
                }
                // Bins 1..=bin go left: bin 0 is the missing bin and n_bins − 1 the last one.
                let n_bins = cuts.len() + 2;
                if node.bin == 0 || node.bin as usize >= n_bins {
                    return Err(format!(
                        "bin = {}; allowed 1..={} for feature `{}`",
                        node.bin,
                        n_bins - 1,
                        feature.name
                    ));
                }
                Ok(())
            }
            (BinMapper::Categorical { level_bins, .. }, Some(c)) => {
                let Some(split) = tree.categories.get(c as usize) else {
                    return Err(format!(
                        "category = {c}, but the tree has {} category sets",
                        tree.categories.len()
                    ));
                };
                // Bit `code` of left_codes for every level, and none beyond.
                let n_levels = level_bins.len();
                let words = n_levels.div_ceil(64);
                let beyond = |(w, &word): (usize, &u64)| {
                    let first_beyond = n_levels.saturating_sub(w * 64);
                    first_beyond < 64 && word >> first_beyond != 0
                };
                if split.left_codes.len() != words
                    || split.left_codes.iter().enumerate().any(beyond)
                {
                    return Err(format!(
                        "category set {c} does not fit the {n_levels} levels of feature `{}`",
                        feature.name
                    ));
                }
                Ok(())
            }
            (BinMapper::Numeric { .. }, Some(_)) => Err(format!(
                "a categorical rule (category) on the numeric feature `{}`",
                feature.name
            )),
            (BinMapper::Categorical { .. }, None) => Err(format!(
                "no category set (category = null) for a rule on the categorical feature `{}`",
                feature.name
            )),
        }
    }
}

/// A feature's mapper as binning makes it: numeric cut points strictly ascending and never NaN
/// (−∞ can occur next to −∞ data), at most 255 bins besides the missing one; at least one
/// categorical level, every level's bin below the bin count.
fn validate_feature(feature: &FeatureSpec) -> std::result::Result<(), String> {
    let name = &feature.name;
    match &feature.mapper {
        BinMapper::Numeric { cuts } => {
            if cuts.len() + 2 > 256 {
                return Err(format!(
                    "`{name}` has {} cut points; at most 254",
                    cuts.len()
                ));
            }
            if cuts.iter().any(|c| c.is_nan()) {
                return Err(format!("`{name}` has a NaN cut point"));
            }
            if cuts.windows(2).any(|w| w[0] >= w[1]) {
                return Err(format!("`{name}`: cut points are not strictly ascending"));
            }
        }
        BinMapper::Categorical { level_bins, n_bins } => {
            if !(1..=256).contains(n_bins) {
                return Err(format!("`{name}` has n_bins = {n_bins}; allowed 1..=256"));
            }
            // A frame's categorical column has 1 to 2^32 − 1 levels (`Frame::new`).
            if level_bins.is_empty() || level_bins.len() > u32::MAX as usize {
                return Err(format!(
                    "`{name}` has {} levels; allowed 1..=2^32 − 1",
                    level_bins.len()
                ));
            }
            if let Some(level) = level_bins.iter().position(|&b| b as usize >= *n_bins) {
                return Err(format!(
                    "`{name}`: level {level} has bin {}, not below n_bins = {n_bins}",
                    level_bins[level]
                ));
            }
        }
    }
    Ok(())
}

/// Losses whose response is e^score (a mean, or Cox's hazard ratio).
pub(super) fn has_log_link(loss: &LossSpec) -> bool {
    loss.link() == Link::Exp
}

/// A target statistic is a numeric feature with a finite prior, weight and value per level
/// (1 to 2^32 − 1 levels, as a frame's categorical column), and a named source column.
fn validate_target_stat(feature: &FeatureSpec) -> std::result::Result<(), String> {
    let (name, Some(stat)) = (&feature.name, &feature.target_stats) else {
        return Ok(());
    };
    if !matches!(feature.mapper, BinMapper::Numeric { .. }) {
        return Err(format!(
            "`{name}` has target statistics but a categorical mapper"
        ));
    }
    if stat.source.is_empty() {
        return Err(format!(
            "`{name}`: target statistics without a source column"
        ));
    }
    if stat.levels.is_empty() || stat.levels.len() > u32::MAX as usize {
        return Err(format!(
            "`{name}`: target statistics of {} levels; allowed 1..=2^32 − 1",
            stat.levels.len()
        ));
    }
    if !(stat.prior.is_finite() && stat.prior_weight.is_finite() && stat.prior_weight > 0.0) {
        return Err(format!(
            "`{name}`: target statistics with prior {} and prior weight {} (finite, weight > 0)",
            Number(stat.prior),
            Number(stat.prior_weight)
        ));
    }
    if let Some(with) = &stat.with {
        let n = with.n_levels as usize;
        let most = crate::data::target_stats::MAX_COMBINED_LEVELS;
        if with.source.is_empty() || with.source == stat.source {
            return Err(format!(
                "`{name}`: a combination of `{}` with {:?} (another named column)",
                stat.source, with.source
            ));
        }
        if n == 0 || stat.levels.len() % n != 0 || stat.levels.len() > most {
            return Err(format!(
                "`{name}`: a combination of {} levels with a column of {n} levels (a multiple of \
                 it, at most {most})",
                stat.levels.len()
            ));
        }
    }
    if let Some(level) = stat.levels.iter().position(|v| !v.is_finite()) {
        return Err(format!(
            "`{name}`: the target statistic of level {level} is {}",
            Number(stat.levels[level])
        ));
    }
    Ok(())
}

fn within_term_bound(x: f64) -> bool {
    x.abs() <= MAX_ABS_TERM
}

pub(super) fn model_error(msg: String) -> Error {
    Error::Model(format!("inconsistent model: {msg}"))
}

fn bad<T>(msg: String) -> Result<T> {
    Err(model_error(msg))
}
