//! Fast TreeSHAP's per-tree leaf tables (Yang, "Fast TreeSHAP: Accelerating SHAP Value
//! Computation for Trees"): each leaf's share of the SHAP values for each of the 2^d ways a row
//! can follow or leave the rules of the d features on its path.

use super::ShapTree;
use crate::data::{Frame, Strided};
use crate::tree::Tree;

/// Leaf tables are built for trees whose leaves have at most this many distinct features on
/// their paths (a table has 2^d rows of d values) ...
const MAX_TABLE_DEPTH: usize = 16;
/// ... and at most this many table values in all (8 bytes each); others take the recursive walk.
const MAX_TREE_TABLE_ENTRIES: usize = 1 << 20;
/// Trees are tabulated in groups of about this many values (16 MiB), whatever the model's size.
pub(super) const GROUP_TABLE_ENTRIES: usize = 1 << 21;

/// The unique path of every leaf of a tree (the distinct features on it in order of first
/// appearance, with the share of training rows that follows the path's rules on each), and for
/// each rule the position of its feature on the paths through it.
pub(super) struct Layout {
    /// Per node: the position of a rule's feature on its path (0 for leaves).
    positions: Vec<u8>,
    /// Leaves with at least one feature on their path.
    leaves: Vec<LeafPath>,
    /// Σ 2^d · d over the leaves: the values of the tree's tables.
    pub(super) entries: usize,
}

struct LeafPath {
    node: u32,
    features: Vec<u32>,
    zeros: Vec<f64>,
}

impl Layout {
    /// `None` when a path or the tables would be too long (`MAX_TABLE_DEPTH`,
    /// `MAX_TREE_TABLE_ENTRIES`).
    pub(super) fn new(tree: &ShapTree<'_>) -> Option<Layout> {
        let mut layout = Layout {
            positions: vec![0; tree.tree.nodes.len()],
            leaves: Vec::new(),
            entries: 0,
        };
        let mut path = Vec::new();
        layout.visit(tree, 0, &mut path)?;
        Some(layout)
    }

    fn visit(
        &mut self,
        tree: &ShapTree<'_>,
        node: usize,
        path: &mut Vec<(u32, f64)>,
    ) -> Option<()> {
        let n = &tree.tree.nodes[node];
        if n.is_leaf() {
            if !path.is_empty() {
                let d = path.len();
                self.entries += d << d;
                if self.entries > MAX_TREE_TABLE_ENTRIES {
                    return None;
                }
                self.leaves.push(LeafPath {
                    node: node as u32,
                    features: path.iter().map(|e| e.0).collect(),
                    zeros: path.iter().map(|e| e.1).collect(),
                });
            }
            return Some(());
        }
        // A feature met again keeps its place; its share multiplies in.
        let found = path.iter().position(|e| e.0 == n.feature);
        let position = found.unwrap_or(path.len());
        if position >= MAX_TABLE_DEPTH {
            return None;
        }
        self.positions[node] = position as u8;
        for child in [n.left as usize, n.right as usize] {
            let share = tree.share[child];
            match found {
                Some(i) => {
                    let zero = path[i].1;
                    path[i].1 = zero * share;
                    self.visit(tree, child, path)?;
                    path[i].1 = zero;
                }
                None => {
                    path.push((n.feature, share));
                    self.visit(tree, child, path)?;
                    path.pop();
                }
            }
        }
        Some(())
    }
}

/// A tree's SHAP values tabulated per leaf, the precomputation of "Fast TreeSHAP: Accelerating
/// SHAP Value Computation for Trees" (Yang, algorithm v2): a leaf's share of the SHAP values of
/// a row depends on the row only through which of its path's d features the row follows (the
/// "one" fractions), so all 2^d cases are computed once per tree (`fill_leaf_table`). A row
/// then costs one pass over the rules to find, for each leaf, the bit set of path features it
/// follows, and d additions per leaf, instead of Algorithm 2's O(d²) per leaf.
pub(super) struct LeafTables {
    /// The tree's rules in node order (parents before children).
    rules: Vec<Rule>,
    /// Leaves with at least one path feature, in order of path length, so that the length
    /// (the trip count of the additions) changes rarely from one leaf to the next.
    leaves: Vec<TableLeaf>,
    /// The leaves' path features, one run per leaf.
    features: Vec<u32>,
    /// The leaves' tables: per leaf 2^d rows of d values, row s for the rows that follow the
    /// rules of the features whose bits s holds (`fill_leaf_table`).
    values: Vec<f64>,
}

/// A rule in the compact form the per-row pass reads.
struct Rule {
    threshold: f64,
    node: u32,
    feature: u32,
    left: u32,
    right: u32,
    /// The bit of the rule's feature in the bit sets of the paths through it.
    bit: u32,
    default_left: bool,
    categorical: bool,
}

struct TableLeaf {
    node: u32,
    depth: u32,
    features: u32,
    values: usize,
}

impl LeafTables {
    pub(super) fn new(tree: &ShapTree<'_>) -> Option<LeafTables> {
        let layout = tree.layout.as_ref()?;
        let nodes = &tree.tree.nodes;
        let rules = nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| !n.is_leaf())
            .map(|(i, n)| Rule {
                threshold: n.threshold,
                node: i as u32,
                feature: n.feature,
                left: n.left,
                right: n.right,
                bit: 1 << layout.positions[i],
                default_left: n.default_left,
                categorical: n.category.is_some(),
            })
            .collect();
        let mut paths: Vec<&LeafPath> = layout.leaves.iter().collect();
        paths.sort_by_key(|p| p.features.len());
        let mut tables = LeafTables {
            rules,
            leaves: Vec::with_capacity(paths.len()),
            features: Vec::new(),
            values: vec![0.0; layout.entries],
        };
        let mut at = 0;
        for leaf in paths {
            let d = leaf.features.len();
            tables.leaves.push(TableLeaf {
                node: leaf.node,
                depth: d as u32,
                features: tables.features.len() as u32,
                values: at,
            });
            tables.features.extend(&leaf.features);
            let value = tree.weight * nodes[leaf.node as usize].value;
            fill_leaf_table(&leaf.zeros, value, &mut tables.values[at..at + (d << d)]);
            at += d << d;
        }
        Some(tables)
    }

    /// Adds the tree's SHAP values of row `row` to `phi`; `masks` has a slot per node, and
    /// `numeric[j]` is feature j's column when it is numeric.
    #[inline]
    pub(super) fn add(
        &self,
        tree: &Tree,
        frame: &Frame<'_>,
        numeric: &[Strided<'_>],
        row: usize,
        phi: &mut [f64],
        masks: &mut [u32],
    ) {
        // masks[node]: the path features up to `node` whose rules the row follows.
        masks[0] = u32::MAX;
        for rule in &self.rules {
            let left = if rule.categorical {
                tree.goes_left_raw(&tree.nodes[rule.node as usize], frame, row)
            } else {
                // Without a branch on the row's value, which no predictor guesses.
                let v = numeric[rule.feature as usize].get(row);
                (v <= rule.threshold) | (v.is_nan() & rule.default_left)
            };
            let mask = masks[rule.node as usize];
            let cleared = mask & !rule.bit;
            masks[rule.left as usize] = if left { mask } else { cleared };
            masks[rule.right as usize] = if left { cleared } else { mask };
        }
        for leaf in &self.leaves {
            let s = masks[leaf.node as usize] as usize;
            // A fixed trip count for the usual lengths, unrolled.
            match leaf.depth {
                1 => self.add_leaf::<1>(leaf, s, phi),
                2 => self.add_leaf::<2>(leaf, s, phi),
                3 => self.add_leaf::<3>(leaf, s, phi),
                4 => self.add_leaf::<4>(leaf, s, phi),
                5 => self.add_leaf::<5>(leaf, s, phi),
                6 => self.add_leaf::<6>(leaf, s, phi),
                7 => self.add_leaf::<7>(leaf, s, phi),
                8 => self.add_leaf::<8>(leaf, s, phi),
                d => {
                    let d = d as usize;
                    let s = s & ((1 << d) - 1);
                    let values = &self.values[leaf.values + s * d..][..d];
                    let features = &self.features[leaf.features as usize..][..d];
                    for (&f, &v) in features.iter().zip(values) {
                        phi[f as usize] += v;
                    }
                }
            }
        }
    }

    #[inline(always)]
    fn add_leaf<const D: usize>(&self, leaf: &TableLeaf, s: usize, phi: &mut [f64]) {
        let s = s & ((1 << D) - 1);
        let values: &[f64; D] = self.values[leaf.values + s * D..][..D].try_into().unwrap();
        let features: &[u32; D] = self.features[leaf.features as usize..][..D]
            .try_into()
            .unwrap();
        for i in 0..D {
            phi[features[i] as usize] += values[i];
        }
    }
}

/// The table of a leaf of value `value` whose path has features with zero fractions `zeros`
/// (2^d rows of d values, as `LeafTables::values`).
///
/// The leaf adds v · Π_j (o_j if j is known, else z_j) to the value of a set of known features
/// (o_j ∈ {0, 1}: whether the row follows the path's rules on feature j), so the Shapley value
/// of feature i, a sum over the coalitions S of the d − 1 other path features weighted by
/// c_|S| = |S|! (d − 1 − |S|)! / d!, is
///
///   v · (o_i − z_i) · Π_{j ∈ B} z_j · Σ_{S ⊆ A} c_|S| · Π_{j ∈ A∖S} z_j
///   = v · (o_i − z_i) · Π_{j ∈ B} z_j · Σ_k c_k · e_{|A|−k}(z_A),
///
/// where A and B are the other features the row follows and does not (a coalition holding one
/// of B has weight zero: o_j = 0), and e_m the elementary symmetric polynomials. Both factors are
/// built for every subset by adding one feature at a time: O(2^d · d) for the whole table, with
/// sums of positive terms only (no division, unlike Algorithm 2's UNWIND).
fn fill_leaf_table(zeros: &[f64], value: f64, table: &mut [f64]) {
    let d = zeros.len();
    let n = 1usize << d;
    // c_k = 1 / (d · binomial(d − 1, k)), exact for d ≤ MAX_TABLE_DEPTH.
    let mut weights = vec![0.0; d];
    let mut binomial = 1.0;
    for (k, c) in weights.iter_mut().enumerate() {
        *c = 1.0 / (d as f64 * binomial);
        binomial = binomial * (d - 1 - k) as f64 / (k + 1) as f64;
    }
    // Per subset A (a bit set): e_0..e_|A| of its zero fractions, Π_{j ∈ A} z_j, and the
    // coalition sum g(A) = Σ_k c_k e_{|A|−k}, for |A| ≤ d − 1.
    let width = d + 1;
    let mut symmetric = vec![0.0; n * width];
    let mut product = vec![1.0; n];
    let mut coalitions = vec![0.0; n];
    symmetric[0] = 1.0;
    for set in 0..n {
        let size = set.count_ones() as usize;
        if set > 0 {
            // The set without its lowest feature j, then j added: e_m += z_j · e_{m−1}.
            let j = set.trailing_zeros() as usize;
            let rest = set & (set - 1);
            product[set] = product[rest] * zeros[j];
            for m in 0..=size {
                let lower = if m > 0 {
                    symmetric[rest * width + m - 1]
                } else {
                    0.0
                };
                symmetric[set * width + m] = symmetric[rest * width + m] + zeros[j] * lower;
            }
        }
        if size < d {
            coalitions[set] = (0..=size)
                .map(|k| weights[k] * symmetric[set * width + size - k])
                .sum();
        }
    }
    for (s, row) in table.chunks_mut(d).enumerate() {
        for (i, v) in row.iter_mut().enumerate() {
            let bit = 1 << i;
            let one = if s & bit != 0 { 1.0 } else { 0.0 };
            let (followed, missed) = (s & !bit, !s & (n - 1) & !bit);
            *v = value * (one - zeros[i]) * product[missed] * coalitions[followed];
        }
    }
}
