//! Monotone and interaction constraints on the trees, by feature index.
//!
//! Monotone constraints use bounds propagation (as XGBoost and LightGBM do): a split on a
//! constrained feature is admissible only if its children's values respect the direction, and
//! the children inherit the parent's interval [lower, upper] cut at the midpoint of their values,
//! the lower child below it and the upper one above; every leaf value is clamped to its interval.
//! So every leaf under the lower child is ≤ every leaf under the upper child, at every split on a
//! constrained feature, which makes the tree monotone in that feature. `enforce_monotone` restores
//! the same property after the step rules re-solve the leaf values.
//!
//! Interaction constraints (as in XGBoost and LightGBM): the features split on along any
//! root-to-leaf path must all belong to one of the allowed sets; a feature in no set forms a set
//! of its own.

use super::regression_tree::Tree;
use crate::data::BinnedData;
use crate::error::{Error, Result};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Constraints {
    /// Per feature: +1 increasing, −1 decreasing, 0 free (empty: no monotone constraint).
    pub monotone: Vec<i8>,
    /// The allowed sets of features, each as a membership mask over the features (empty: no
    /// interaction constraint).
    pub interactions: Vec<Vec<bool>>,
}

impl Constraints {
    /// The constraints on `data`'s features from constraints by feature name. Names must be
    /// features of `data`; monotone ones numeric.
    pub fn by_name(
        monotone: &BTreeMap<String, i8>,
        interactions: &[Vec<String>],
        data: &BinnedData,
    ) -> Result<Constraints> {
        let names = data.names();
        let index = |parameter: &str, name: &str| {
            names.iter().position(|n| n == name).ok_or_else(|| {
                let listed: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
                Error::param(
                    parameter,
                    format!("{name:?}"),
                    format!("names of features: {}", listed.join(", ")),
                )
            })
        };
        let mut directions = Vec::new();
        if monotone.values().any(|&d| d != 0) {
            directions = vec![0; names.len()];
            for (name, &direction) in monotone {
                let feature = index("monotone", name)?;
                if data.is_categorical(feature) && direction != 0 {
                    return Err(Error::param(
                        "monotone",
                        format!("{name:?}"),
                        "numeric features (a categorical feature has no order to be monotone in)",
                    ));
                }
                directions[feature] = direction;
            }
        }
        let interactions = (interactions.iter())
            .map(|set| {
                let mut members = vec![false; names.len()];
                for name in set {
                    members[index("interactions", name)?] = true;
                }
                Ok(members)
            })
            .collect::<Result<_>>()?;
        Ok(Constraints {
            monotone: directions,
            interactions,
        })
    }

    /// The monotone directions, if any feature is constrained.
    pub fn monotone(&self) -> Option<&[i8]> {
        self.monotone
            .iter()
            .any(|&d| d != 0)
            .then_some(&self.monotone[..])
    }

    /// The features a node may split on when the splits above it are on the features `path`:
    /// those of the allowed sets that hold every feature of `path`. `None`: no interaction
    /// constraint.
    pub fn allowed_features(&self, path: &[u32], n_features: usize) -> Option<Vec<bool>> {
        if self.interactions.is_empty() {
            return None;
        }
        let mut allowed = vec![false; n_features];
        for set in &self.interactions {
            if path.iter().all(|&f| set[f as usize]) {
                (0..n_features).for_each(|f| allowed[f] |= set[f]);
            }
        }
        // A feature in no set interacts with nothing: only with itself.
        let in_no_set = |f: usize| !self.interactions.iter().any(|set| set[f]);
        for (f, allowed) in allowed.iter_mut().enumerate() {
            if in_no_set(f) && path.iter().all(|&g| g as usize == f) {
                *allowed = true;
            }
        }
        Some(allowed)
    }
}

/// What the splits above a node impose on it.
#[derive(Debug, Clone)]
pub(super) struct NodeLimits {
    /// The interval the node's values must lie in (monotone constraints).
    pub(super) lower: f64,
    pub(super) upper: f64,
    /// The features split on above the node, each once (interaction constraints).
    pub(super) path: Vec<u32>,
}

impl NodeLimits {
    pub(super) fn root() -> NodeLimits {
        NodeLimits {
            lower: f64::NEG_INFINITY,
            upper: f64::INFINITY,
            path: Vec::new(),
        }
    }

    /// The limits of the two children of a split on `feature` whose children have the values
    /// `(left, right)`, for a feature of monotone direction `direction`: the interval is cut at
    /// the midpoint of the values, the lower child's side below it.
    pub(super) fn children(
        &self,
        feature: usize,
        direction: i8,
        (left, right): (f64, f64),
    ) -> (Self, Self) {
        let mut path = self.path.clone();
        if !path.contains(&(feature as u32)) {
            path.push(feature as u32);
        }
        let mid = 0.5 * (left + right);
        let below = NodeLimits {
            lower: self.lower,
            upper: mid,
            path: path.clone(),
        };
        let above = NodeLimits {
            lower: mid,
            upper: self.upper,
            path: path.clone(),
        };
        match direction {
            0 => (
                NodeLimits {
                    path: path.clone(),
                    ..*self
                },
                NodeLimits { path, ..*self },
            ),
            d if d > 0 => (below, above),
            _ => (above, below),
        }
    }
}

/// Makes `tree` monotone in every feature of non-zero direction in `monotone`, changing no leaf
/// value when it already is. For leaf values that a step rule re-solved leaf by leaf (each the
/// minimiser of a convex one-dimensional problem whose value at 0 is "no step").
///
/// From the root down, at a split on a constrained feature, the leaves under the lower child are
/// clamped below a cut and those under the upper child above it. When the lower side's largest
/// value does not exceed the upper side's smallest, the cut lies between them and nothing moves.
/// Otherwise the cut is the upper side's smallest value if it is ≥ 0, the lower side's largest if
/// it is ≤ 0, else 0: then every value that moves, moves towards 0 without crossing it. So every
/// final leaf value lies between 0 and its own minimiser, where by convexity its leaf's loss is
/// no larger than with no step: the constrained tree never increases the loss.
pub fn enforce_monotone(tree: &mut Tree, monotone: &[i8]) {
    enforce_below(tree, monotone, 0, f64::NEG_INFINITY, f64::INFINITY);
}

fn enforce_below(tree: &mut Tree, monotone: &[i8], node: usize, lower: f64, upper: f64) {
    let n = &tree.nodes[node];
    if n.is_leaf() {
        let value = &mut tree.nodes[node].value;
        *value = value.clamp(lower, upper);
        return;
    }
    let (left, right) = (n.left as usize, n.right as usize);
    let direction = match n.category {
        Some(_) => 0,
        None => monotone.get(n.feature as usize).copied().unwrap_or(0),
    };
    if direction == 0 {
        enforce_below(tree, monotone, left, lower, upper);
        enforce_below(tree, monotone, right, lower, upper);
        return;
    }
    let (low_child, high_child) = if direction > 0 {
        (left, right)
    } else {
        (right, left)
    };
    let clamp = |v: f64| v.clamp(lower, upper);
    let low_max = clamp(leaf_extreme(tree, low_child, f64::max, f64::NEG_INFINITY));
    let high_min = clamp(leaf_extreme(tree, high_child, f64::min, f64::INFINITY));
    let cut = if low_max <= high_min {
        0.5 * (low_max + high_min)
    } else if high_min >= 0.0 {
        high_min
    } else if low_max <= 0.0 {
        low_max
    } else {
        // high_min < 0 < low_max, both inside [lower, upper].
        0.0
    };
    enforce_below(tree, monotone, low_child, lower, cut);
    enforce_below(tree, monotone, high_child, cut, upper);
}

/// The largest (`max`) or smallest (`min`) leaf value under `node`.
fn leaf_extreme(tree: &Tree, node: usize, pick: fn(f64, f64) -> f64, start: f64) -> f64 {
    let n = &tree.nodes[node];
    if n.is_leaf() {
        return pick(start, n.value);
    }
    let left = leaf_extreme(tree, n.left as usize, pick, start);
    leaf_extreme(tree, n.right as usize, pick, left)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::test_data::leaf;
    use crate::tree::Node;

    fn split(feature: u32, left: u32, bin: u8) -> Node {
        Node {
            feature,
            left,
            right: left + 1,
            bin,
            ..leaf(0.0, 0)
        }
    }

    #[test]
    fn leaves_in_order_are_left_alone_and_others_move_towards_zero() {
        // x0 ≤ 1 | x1 ≤ 1 → (a, b) | c, increasing in x0.
        let tree = |a: f64, b: f64, c: f64| Tree {
            nodes: vec![
                split(0, 1, 1),
                split(1, 3, 1),
                leaf(c, 2),
                leaf(a, 1),
                leaf(b, 1),
            ],
            categories: Vec::new(),
        };
        let mut ordered = tree(1.0, 2.0, 3.0);
        enforce_monotone(&mut ordered, &[1, 0]);
        assert_eq!(ordered, tree(1.0, 2.0, 3.0));
        let enforced = |(a, b, c): (f64, f64, f64), monotone: &[i8]| {
            let mut t = tree(a, b, c);
            enforce_monotone(&mut t, monotone);
            t
        };
        // 4 > 2 ≥ 0: the lower side is cut at 2.
        assert_eq!(enforced((1.0, 4.0, 2.0), &[1, 0]), tree(1.0, 2.0, 2.0));
        // −1 > −2, both ≤ 0: the upper side is raised to −1.
        assert_eq!(
            enforced((-1.0, -4.0, -2.0), &[1, 0]),
            tree(-1.0, -4.0, -1.0)
        );
        // 4 > 0 > −2: everything that moves goes to 0.
        assert_eq!(enforced((1.0, 4.0, -2.0), &[1, 0]), tree(0.0, 0.0, 0.0));
        // Decreasing in x0: the left side must be the higher one; 2 > 1 ≥ 0.
        assert_eq!(enforced((1.0, 4.0, 2.0), &[-1, 0]), tree(1.0, 4.0, 1.0));
        // No constraint on x0: nothing to do (x1's split has the leaves 1 ≤ 4 in order).
        assert_eq!(enforced((1.0, 4.0, 2.0), &[0, 1]), tree(1.0, 4.0, 2.0));
        assert_eq!(enforced((4.0, 1.0, 2.0), &[0, 1]), tree(1.0, 1.0, 2.0));
    }

    #[test]
    fn interaction_sets_allow_the_features_of_every_set_holding_the_path() {
        let sets = |members: &[&[usize]]| Constraints {
            monotone: Vec::new(),
            interactions: members
                .iter()
                .map(|m| (0..5).map(|f| m.contains(&f)).collect())
                .collect(),
        };
        let c = sets(&[&[0, 1], &[1, 2, 3]]);
        let allowed = |path: &[u32]| c.allowed_features(path, 5).unwrap();
        assert_eq!(allowed(&[]), vec![true; 5]);
        assert_eq!(allowed(&[1]), vec![true, true, true, true, false]);
        assert_eq!(allowed(&[0]), vec![true, true, false, false, false]);
        assert_eq!(allowed(&[2, 1]), vec![false, true, true, true, false]);
        assert_eq!(allowed(&[4]), vec![false, false, false, false, true]);
        assert_eq!(allowed(&[0, 2]), vec![false; 5]);
        assert!(Constraints::default().allowed_features(&[0], 5).is_none());
    }
}
