//! A compact, prediction-only form of a tree: 24-byte nodes, children in a two-element array
//! indexed by the comparison (no branch to mispredict), leaves that point at themselves. Rows are
//! walked in groups of `LANES` in lock step for exactly `depth` levels, so the loads of several
//! independent rows overlap instead of one row's chain of dependent loads running alone.
//! Trees with categorical rules keep the general traversal of `Tree`.

use crate::data::{BinnedMatrix, FeatureValues, Frame};
use crate::tree::Tree;

const LANES: usize = 8;

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
    /// `None` for trees with categorical rules.
    pub(crate) fn new(tree: &Tree) -> Option<FlatTree> {
        if tree
            .nodes
            .iter()
            .any(|n| n.category.is_some() && !n.is_leaf())
        {
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
        let mut groups = out.chunks_exact_mut(LANES);
        let mut row = start;
        for group in &mut groups {
            let mut at = [0u32; LANES];
            for _ in 0..self.depth {
                for (lane, i) in at.iter_mut().enumerate() {
                    let node = &self.nodes[*i as usize];
                    *i = node.children[!rows.goes_left(node, row + lane) as usize];
                }
            }
            for (o, &i) in group.iter_mut().zip(&at) {
                *o += weight * self.values[i as usize];
            }
            row += LANES;
        }
        for (lane, o) in groups.into_remainder().iter_mut().enumerate() {
            let mut i = 0u32;
            for _ in 0..self.depth {
                let node = &self.nodes[i as usize];
                i = node.children[!rows.goes_left(node, row + lane) as usize];
            }
            *o += weight * self.values[i as usize];
        }
    }
}

/// Data a flat tree can be evaluated on.
trait Rows {
    fn goes_left(&self, node: &FlatNode, row: usize) -> bool;
}

/// Raw numeric columns (`None` for categorical ones, which flat trees never test).
struct RawRows<'a>(Vec<&'a [f64]>);

impl Rows for RawRows<'_> {
    #[inline(always)]
    fn goes_left(&self, node: &FlatNode, row: usize) -> bool {
        let x = self.0[node.feature as usize][row];
        // NaN compares false, so it goes left only by default.
        (x <= node.threshold) | (x.is_nan() & node.default_left)
    }
}

struct BinnedRows<'a>(&'a BinnedMatrix);

impl Rows for BinnedRows<'_> {
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
    pub(crate) fn new(tree: &'t Tree) -> Self {
        FlatTree::new(tree).map_or(Predictor::General(tree), Predictor::Flat)
    }

    /// `out[i] += weight · tree(row start + i)` on raw columns.
    pub(crate) fn add_raw(
        &self,
        frame: &Frame<'_>,
        columns: &RawColumns<'_>,
        start: usize,
        weight: f64,
        out: &mut [f64],
    ) {
        match self {
            Predictor::Flat(flat) => flat.add_to(&columns.0, start, weight, out),
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

/// The numeric columns of a frame, looked up once per prediction.
pub(crate) struct RawColumns<'a>(RawRows<'a>);

impl<'a> RawColumns<'a> {
    pub(crate) fn new(frame: &Frame<'a>) -> Self {
        let columns = frame
            .features()
            .iter()
            .map(|f| match f.values {
                FeatureValues::Numeric(x) => x,
                FeatureValues::Categorical { .. } => &[][..],
            })
            .collect();
        RawColumns(RawRows(columns))
    }
}
