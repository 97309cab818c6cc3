//! A compact, prediction-only form of a tree: 24-byte nodes, children in a two-element array
//! indexed by the comparison (no branch to mispredict), leaves that point at themselves. Rows are
//! walked in groups of `LANES` in lock step for exactly `depth` levels, so the loads of several
//! independent rows overlap instead of one row's chain of dependent loads running alone.
//! Trees with categorical rules keep the general traversal of `Tree`.
//!
//! Raw rows are walked in blocks of `BLOCK_ROWS`, copied feature-major into one buffer
//! (`RawBlock`): a value is then at (feature << BLOCK_SHIFT) + row, with no load of a column's
//! address in the chain of dependent loads of each level.
//!
//! The walk indexes without bounds checks (they cost ~20% of prediction time): `FlatTree::new`
//! admits only trees whose children and tested features are in range and numeric, and `add_to`
//! checks the row range once per call.

use crate::data::{BinnedMatrix, FeatureValues, Frame};
use crate::tree::Tree;

const LANES: usize = 8;
/// Rows per block of raw prediction (`RawBlock`), a power of two.
const BLOCK_SHIFT: u32 = 8;
pub(crate) const BLOCK_ROWS: usize = 1 << BLOCK_SHIFT;

#[derive(Debug, Clone, Copy)]
struct FlatNode {
    threshold: f64,
    feature: u32,
    /// [left, right]; a leaf's children are itself.
    children: [u32; 2],
    bin: u8,
    default_left: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct FlatTree {
    nodes: Vec<FlatNode>,
    values: Vec<f64>,
    depth: usize,
}

impl FlatTree {
    /// `None` for trees with categorical rules, and for trees a flat walk could not index
    /// safely: a child out of range, or a rule on a feature that is not numeric (`numeric[j]`),
    /// which a model file could claim.
    pub(crate) fn new(tree: &Tree, numeric: &[bool]) -> Option<FlatTree> {
        let n_nodes = tree.nodes.len();
        let walkable = |n: &crate::tree::Node| {
            n.is_leaf()
                || (n.category.is_none()
                    && numeric.get(n.feature as usize) == Some(&true)
                    && (n.left as usize) < n_nodes
                    && (n.right as usize) < n_nodes)
        };
        if n_nodes == 0 || !tree.nodes.iter().all(walkable) {
            return None;
        }
        // Rows that reach a leaf early keep walking in lock step, so a leaf still evaluates a
        // rule: the root's, whose feature is numeric (no categorical rules here). Its result is
        // ignored because a leaf's children are itself.
        let root_feature = tree.nodes[0].feature;
        let nodes = tree
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| FlatNode {
                threshold: n.threshold,
                feature: if n.is_leaf() { root_feature } else { n.feature },
                children: if n.is_leaf() {
                    [i as u32; 2]
                } else {
                    [n.left, n.right]
                },
                bin: n.bin,
                default_left: n.default_left,
            })
            .collect();
        Some(FlatTree {
            nodes,
            values: tree.nodes.iter().map(|n| n.value).collect(),
            depth: tree.depth(),
        })
    }

    /// Adds `weight · tree(row)` to `out[i]` for rows `start..start + out.len()`.
    #[inline]
    fn add_to<R: Rows>(&self, rows: &R, start: usize, weight: f64, out: &mut [f64]) {
        self.walk(rows, start, out, |o, i| {
            *o += weight * self.values[i as usize]
        });
    }

    /// Calls `visit(&mut out[j], node)` with the node (a leaf) that row `start + j` reaches.
    #[inline(always)]
    fn walk<R: Rows, T>(
        &self,
        rows: &R,
        start: usize,
        out: &mut [T],
        mut visit: impl FnMut(&mut T, u32),
    ) {
        assert!(start + out.len() <= rows.n_rows(), "rows out of range");
        let mut groups = out.chunks_exact_mut(LANES);
        let mut row = start;
        for group in &mut groups {
            let mut at = [0u32; LANES];
            for _ in 0..self.depth {
                for (lane, i) in at.iter_mut().enumerate() {
                    // SAFETY: i is 0 or a child, both below nodes.len() (see `new`).
                    let node = unsafe { self.nodes.get_unchecked(*i as usize) };
                    *i = node.children[!rows.goes_left(node, row + lane) as usize];
                }
            }
            for (o, &i) in group.iter_mut().zip(&at) {
                visit(o, i);
            }
            row += LANES;
        }
        for (lane, o) in groups.into_remainder().iter_mut().enumerate() {
            let mut i = 0u32;
            for _ in 0..self.depth {
                // SAFETY: as in the lock-step loop.
                let node = unsafe { self.nodes.get_unchecked(i as usize) };
                i = node.children[!rows.goes_left(node, row + lane) as usize];
            }
            visit(o, i);
        }
    }
}

/// `out[j]` = the leaf node that binned row `start + j` reaches in `tree`, by the flat walk when
/// the tree has one (`numeric[f]`: feature f is numeric), else by `Tree::leaf_of_bins`.
pub(crate) fn leaf_nodes_binned(
    tree: &Tree,
    flat: Option<&FlatTree>,
    matrix: &BinnedMatrix,
    start: usize,
    out: &mut [u32],
) {
    match flat {
        Some(flat) => flat.walk(&BinnedRows(matrix), start, out, |o, i| *o = i),
        None => {
            for (j, o) in out.iter_mut().enumerate() {
                *o = tree.leaf_of_bins(matrix.row(start + j)) as u32;
            }
        }
    }
}

/// Data a flat tree can be evaluated on.
trait Rows {
    fn n_rows(&self) -> usize;
    /// For `row < n_rows()` and a node of a `FlatTree` built for these columns.
    fn goes_left(&self, node: &FlatNode, row: usize) -> bool;
}

/// Rows `start..start + n_rows` of the numeric columns of a frame (n_rows ≤ `BLOCK_ROWS`),
/// copied into one buffer, feature j at `values[j << BLOCK_SHIFT..]` (categorical features, which
/// flat trees never test, keep their slots unfilled).
pub(crate) struct RawBlock {
    values: Vec<f64>,
    n_rows: usize,
}

impl Rows for RawBlock {
    fn n_rows(&self) -> usize {
        self.n_rows
    }
    #[inline(always)]
    fn goes_left(&self, node: &FlatNode, row: usize) -> bool {
        // SAFETY: the node tests a feature of the model (`FlatTree::new`), which has a slot of
        // BLOCK_ROWS values (`RawColumns::block` sizes the buffer for every feature of the
        // frame, and the frame's features were checked against the model), and
        // row < n_rows ≤ BLOCK_ROWS (`add_to`).
        let x = unsafe {
            *self
                .values
                .get_unchecked(((node.feature as usize) << BLOCK_SHIFT) + row)
        };
        // NaN compares false, so it goes left only by default.
        (x <= node.threshold) | (x.is_nan() & node.default_left)
    }
}

struct BinnedRows<'a>(&'a BinnedMatrix);

impl Rows for BinnedRows<'_> {
    fn n_rows(&self) -> usize {
        self.0.n_rows()
    }
    #[inline(always)]
    fn goes_left(&self, node: &FlatNode, row: usize) -> bool {
        let b = self.0.get(row, node.feature as usize);
        ((b != 0) & (b <= node.bin)) | ((b == 0) & node.default_left)
    }
}

/// A tree in the form prediction uses.
pub(crate) enum Predictor<'t> {
    Flat(FlatTree),
    General(&'t Tree),
}

impl<'t> Predictor<'t> {
    /// `numeric[j]`: feature j of the model is numeric.
    pub(crate) fn new(tree: &'t Tree, numeric: &[bool]) -> Self {
        FlatTree::new(tree, numeric).map_or(Predictor::General(tree), Predictor::Flat)
    }

    /// `out[i] += weight · tree(row start + i)` on raw columns, where `block` holds the rows
    /// `start..start + out.len()`.
    pub(crate) fn add_raw(
        &self,
        frame: &Frame<'_>,
        block: &RawBlock,
        start: usize,
        weight: f64,
        out: &mut [f64],
    ) {
        match self {
            Predictor::Flat(flat) => flat.add_to(block, 0, weight, out),
            Predictor::General(tree) => {
                for (i, o) in out.iter_mut().enumerate() {
                    *o += weight * tree.predict_raw(frame, start + i);
                }
            }
        }
    }

    /// `out[i] += weight · tree(row start + i)` on binned rows.
    pub(crate) fn add_binned(
        &self,
        matrix: &BinnedMatrix,
        start: usize,
        weight: f64,
        out: &mut [f64],
    ) {
        match self {
            Predictor::Flat(flat) => flat.add_to(&BinnedRows(matrix), start, weight, out),
            Predictor::General(tree) => {
                for (i, o) in out.iter_mut().enumerate() {
                    *o += weight * tree.predict_bins(matrix.row(start + i));
                }
            }
        }
    }
}

/// The numeric columns of a frame (empty for categorical ones), looked up once per prediction.
pub(crate) struct RawColumns<'a>(Vec<&'a [f64]>);

impl<'a> RawColumns<'a> {
    pub(crate) fn new(frame: &Frame<'a>) -> Self {
        RawColumns(
            frame
                .features()
                .iter()
                .map(|f| match f.values {
                    FeatureValues::Numeric(x) => x,
                    FeatureValues::Categorical { .. } => &[][..],
                })
                .collect(),
        )
    }

    /// Rows `start..start + n_rows` (n_rows ≤ `BLOCK_ROWS`) in the layout of `RawBlock`.
    pub(crate) fn block(&self, start: usize, n_rows: usize) -> RawBlock {
        assert!(n_rows <= BLOCK_ROWS);
        let mut values = vec![0.0; self.0.len() << BLOCK_SHIFT];
        for (slot, column) in values.chunks_exact_mut(BLOCK_ROWS).zip(&self.0) {
            if !column.is_empty() {
                slot[..n_rows].copy_from_slice(&column[start..start + n_rows]);
            }
        }
        RawBlock { values, n_rows }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::Node;

    fn stump(feature: u32, right: u32) -> Tree {
        let leaf = |value| Node {
            feature: 0,
            left: 0,
            right: 0,
            threshold: 0.0,
            bin: 0,
            default_left: false,
            category: None,
            value,
            gain: 0.0,
            count: 1,
        };
        let root = Node {
            feature,
            left: 1,
            right,
            threshold: 0.5,
            bin: 1,
            ..leaf(0.0)
        };
        Tree {
            nodes: vec![root, leaf(-1.0), leaf(1.0)],
            categories: Vec::new(),
        }
    }

    #[test]
    fn only_trees_the_unchecked_walk_can_index_are_flattened() {
        assert!(FlatTree::new(&stump(1, 2), &[true, true]).is_some());
        // A rule on a categorical feature (an empty column in `RawRows`), on a feature the model
        // lacks, or a child past the node list: each would read out of bounds.
        assert!(FlatTree::new(&stump(1, 2), &[true, false]).is_none());
        assert!(FlatTree::new(&stump(2, 2), &[true, true]).is_none());
        assert!(FlatTree::new(&stump(1, 3), &[true, true]).is_none());
    }
}
