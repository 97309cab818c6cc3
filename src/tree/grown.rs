//! A grown tree with the rows of each of its leaves: what the booster's passes over the training
//! rows use to find a row's leaf without walking the tree (from the leaf row lists, or from the
//! bin of a one-feature tree).

use super::flat::{leaf_nodes_binned, FlatTree};
use super::partition::rows_by_group;
use super::regression_tree::Tree;
use crate::data::{BinnedData, FeatureBins};
use crate::rows::{block_cuts, group_slots};
use rayon::prelude::*;

/// Rows per task of the passes over a tree's values in row order.
pub(crate) const ROW_CHUNK: usize = 8_192;

/// The rows of one leaf: `rows[start..end]` of `GrownTree::rows`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeafRows {
    pub node: usize,
    pub start: usize,
    pub end: usize,
}

/// A tree as grown: its nodes and the training rows of each leaf, for the step rules.
#[derive(Debug, Clone)]
pub struct GrownTree {
    /// Leaf values may be changed (step rules re-solve them); the rows of each leaf may not.
    pub tree: Tree,
    /// Private: only `grow` makes them, so `rows` is always a permutation of the row ids cut
    /// into disjoint leaf ranges, ascending within each (the row-order passes rely on it).
    pub(super) leaves: Vec<LeafRows>,
    pub(super) rows: Vec<u32>,
    /// For a tree on one feature: the leaf of each of its bins, which the row-order passes read
    /// instead of the leaves' row lists.
    pub(super) bin_leaves: Option<BinLeaves>,
}

/// Where the row-order passes find the leaf of a row: from its bin of the tree's one feature, or
/// among the leaves' row lists cut at the chunks (`chunk_cuts`).
pub(crate) enum LeafFinder<'a> {
    Bins(FeatureBins<'a>, &'a [u32]),
    Rows(Vec<Vec<u32>>),
}

#[derive(Debug, Clone)]
pub(super) struct BinLeaves {
    pub(super) feature: usize,
    /// Index in `leaves` of the leaf of each bin.
    pub(super) leaf_of_bin: Vec<u32>,
}

impl GrownTree {
    /// The leaves, each with its rows.
    pub fn leaves(&self) -> &[LeafRows] {
        &self.leaves
    }
    /// Row ids grouped by leaf (see `LeafRows`).
    pub fn rows(&self) -> &[u32] {
        &self.rows
    }
    /// The value of every leaf, in `leaves()` order.
    pub fn leaf_values(&self) -> Vec<f64> {
        (self.leaves.iter())
            .map(|leaf| self.tree.nodes[leaf.node].value)
            .collect()
    }
    /// Sets the value of leaf j (in `leaves()` order) to `values[j]`.
    pub fn set_leaf_values(&mut self, values: &[f64]) {
        for (leaf, &value) in self.leaves.iter().zip(values) {
            self.tree.nodes[leaf.node].value = value;
        }
    }
    /// The tree, and the row list for `GrowBuffers::recycle`.
    pub fn into_parts(self) -> (Tree, Vec<u32>) {
        (self.tree, self.rows)
    }

    /// The tree's value on every row of `data`, the data it was grown on, from the leaf row lists
    /// (no traversal).
    pub fn fitted_values(&self, data: &BinnedData) -> Vec<f64> {
        let mut out = vec![0.0; data.n_rows()];
        self.fitted_values_into(data, &mut out);
        out
    }

    /// The tree's value on every training row, written into `out`.
    pub fn fitted_values_into(&self, data: &BinnedData, out: &mut [f64]) {
        assert_eq!(
            self.rows.len(),
            out.len(),
            "a tree's leaves cover every row"
        );
        let finder = self.leaf_finder(data);
        let leaf_values = self.leaf_values();
        out.par_chunks_mut(ROW_CHUNK)
            .enumerate()
            .for_each(|(k, out)| self.fill_chunk(&finder, k, out, |leaf| leaf_values[leaf]));
    }

    /// The number of rows of the data the tree was grown on.
    pub(crate) fn n_rows(&self) -> usize {
        self.rows.len()
    }

    /// For every row of `data` (the data the tree was grown on), the index in `leaves()` of its
    /// leaf.
    pub fn leaf_index(&self, data: &BinnedData) -> Vec<u32> {
        let finder = self.leaf_finder(data);
        let mut index = vec![0; self.rows.len()];
        index
            .par_chunks_mut(ROW_CHUNK)
            .enumerate()
            .for_each(|(k, out)| self.fill_chunk(&finder, k, out, |leaf| leaf as u32));
        index
    }

    /// `of_leaf(j)`, for j the index in `leaves()` of each row's leaf, for the rows of chunk k
    /// (`out`).
    pub(crate) fn fill_chunk<T: Copy>(
        &self,
        finder: &LeafFinder<'_>,
        k: usize,
        out: &mut [T],
        of_leaf: impl Fn(usize) -> T,
    ) {
        let first = k * ROW_CHUNK;
        match finder {
            LeafFinder::Bins(column, leaf_of_bin) => {
                let bins = column.range(first, out.len());
                for (x, bin) in out.iter_mut().zip(bins) {
                    *x = of_leaf(leaf_of_bin[bin as usize] as usize);
                }
            }
            LeafFinder::Rows(cuts) => {
                for (j, (_, rows)) in self.rows_in_chunk(cuts, k).enumerate() {
                    let x = of_leaf(j);
                    for &r in rows {
                        out[r as usize - first] = x;
                    }
                }
            }
        }
    }

    /// How the row-order passes over `data` find the leaf of a row.
    pub(crate) fn leaf_finder<'a>(&'a self, data: &'a BinnedData) -> LeafFinder<'a> {
        assert_eq!(
            data.n_rows(),
            self.rows.len(),
            "the data the tree was grown on"
        );
        match &self.bin_leaves {
            Some(b) => LeafFinder::Bins(data.column(b.feature), &b.leaf_of_bin),
            None => LeafFinder::Rows(self.chunk_cuts(self.rows.len())),
        }
    }

    /// cuts[j][k]: where the rows of chunk k (rows k·ROW_CHUNK..) start among leaf j's rows.
    fn chunk_cuts(&self, n_rows: usize) -> Vec<Vec<u32>> {
        let n_chunks = n_rows.div_ceil(ROW_CHUNK);
        self.leaves
            .par_iter()
            .map(|leaf| block_cuts(self.leaf_rows(leaf), ROW_CHUNK, n_chunks))
            .collect()
    }

    /// Every leaf with its rows in chunk k, in leaf order.
    fn rows_in_chunk<'a>(
        &'a self,
        cuts: &'a [Vec<u32>],
        k: usize,
    ) -> impl Iterator<Item = (&'a LeafRows, &'a [u32])> {
        self.leaves.iter().zip(cuts).map(move |(leaf, cut)| {
            (
                leaf,
                &self.leaf_rows(leaf)[cut[k] as usize..cut[k + 1] as usize],
            )
        })
    }

    /// The training rows of `leaf`.
    pub fn leaf_rows(&self, leaf: &LeafRows) -> &[u32] {
        &self.rows[leaf.start..leaf.end]
    }
}

/// The leaf (in `leaves` order) of every bin of a tree on one feature.
pub(super) fn leaf_of_bins(node_of_bin: &[u32], leaves: &[LeafRows], n_nodes: usize) -> Vec<u32> {
    let mut leaf_of_node = vec![u32::MAX; n_nodes];
    for (j, leaf) in leaves.iter().enumerate() {
        leaf_of_node[leaf.node] = j as u32;
    }
    (node_of_bin.iter())
        .map(|&node| leaf_of_node[node as usize])
        .collect()
}

/// For a tree grown on a sample of the rows: replaces the leaves' row lists by every row of
/// `data`, each where the tree's rules send it, ascending within each leaf (the row-order passes
/// that apply the tree to all rows rely on it). The leaves keep their order. `scratch`, of at
/// least one entry per row, holds each row's leaf: the fit's partition space, free by now (a
/// fresh vector for every tree cost a 4-byte-per-row allocation, zeroing and page faults).
pub(super) fn cover_every_row(
    data: &BinnedData,
    tree: &Tree,
    leaves: &mut [LeafRows],
    rows: &mut Vec<u32>,
    bin_leaves: Option<&BinLeaves>,
    scratch: &mut [u32],
) {
    let n = data.n_rows();
    let leaf_of_row = &mut scratch[..n];
    match bin_leaves {
        Some(b) => leaf_of_row
            .par_chunks_mut(ROW_CHUNK)
            .enumerate()
            .for_each(|(k, out)| {
                let first = k * ROW_CHUNK;
                let bins = data.column(b.feature).range(first, out.len());
                for (leaf, bin) in out.iter_mut().zip(bins) {
                    *leaf = b.leaf_of_bin[bin as usize];
                }
            }),
        None => place_by_walking_undrawn_rows(data, tree, leaves, rows, leaf_of_row),
    }
    let n_leaves = leaves.len();
    let counts: Vec<Vec<usize>> = leaf_of_row
        .par_chunks(ROW_CHUNK)
        .map(|block| {
            let mut counts = vec![0; n_leaves];
            block.iter().for_each(|&leaf| counts[leaf as usize] += 1);
            counts
        })
        .collect();
    let mut start = 0;
    for (j, leaf) in leaves.iter_mut().enumerate() {
        let end = start + counts.iter().map(|c| c[j]).sum::<usize>();
        (leaf.start, leaf.end) = (start, end);
        start = end;
    }
    rows.clear();
    rows.resize(n, 0);
    group_slots(rows, &counts)
        .into_par_iter()
        .enumerate()
        .for_each(|(k, mut slots)| {
            let mut next = vec![0; n_leaves];
            let first = k * ROW_CHUNK;
            let block = &leaf_of_row[first..(first + ROW_CHUNK).min(n)];
            for (j, &leaf) in block.iter().enumerate() {
                let leaf = leaf as usize;
                slots[leaf][next[leaf]] = (first + j) as u32;
                next[leaf] += 1;
            }
        });
}

/// `leaf_of_row[r]` = the leaf (in `leaves` order) of every row r: the drawn rows' from the
/// leaves' row lists `rows` (the sample, ascending within each leaf), the others by walking the
/// tree. Only the undrawn rows are walked: the walk is the costliest part of placing the rows
/// (about 8 ns a row at depth 6), and the drawn rows' leaves are already known.
fn place_by_walking_undrawn_rows(
    data: &BinnedData,
    tree: &Tree,
    leaves: &[LeafRows],
    rows: &[u32],
    leaf_of_row: &mut [u32],
) {
    const UNPLACED: u32 = u32::MAX;
    let mut leaf_of_node = vec![UNPLACED; tree.nodes.len()];
    for (j, leaf) in leaves.iter().enumerate() {
        leaf_of_node[leaf.node] = j as u32;
    }
    // The branch-free walk of prediction: a branchy walk of 1M rows mispredicts about once per
    // level and took longer than growing the tree on half of them.
    let numeric: Vec<bool> = (0..data.n_features())
        .map(|f| !data.is_categorical(f))
        .collect();
    let flat = FlatTree::new(tree, &numeric);
    let numeric_missing = (0..data.n_features()).any(|f| numeric[f] && data.has_missing(f));
    let binned = (data.matrix(), numeric_missing);
    let n_chunks = leaf_of_row.len().div_ceil(ROW_CHUNK);
    let cuts: Vec<Vec<u32>> = leaves
        .par_iter()
        .map(|leaf| block_cuts(&rows[leaf.start..leaf.end], ROW_CHUNK, n_chunks))
        .collect();
    leaf_of_row
        .par_chunks_mut(ROW_CHUNK)
        .enumerate()
        .for_each_init(
            || (vec![0u32; ROW_CHUNK], vec![0u32; ROW_CHUNK]),
            |(undrawn, nodes), (k, out)| {
                let first = k * ROW_CHUNK;
                out.fill(UNPLACED);
                for ((j, leaf), cut) in leaves.iter().enumerate().zip(&cuts) {
                    let drawn = &rows[leaf.start..leaf.end][cut[k] as usize..cut[k + 1] as usize];
                    for &r in drawn {
                        out[r as usize - first] = j as u32;
                    }
                }
                // Every row is written and the count only advances past the undrawn ones: no
                // branch to mispredict (half of them at subsample = 0.5).
                let mut n_undrawn = 0;
                for (r, &leaf) in (first as u32..).zip(out.iter()) {
                    undrawn[n_undrawn] = r;
                    n_undrawn += usize::from(leaf == UNPLACED);
                }
                let (undrawn, nodes) = (&undrawn[..n_undrawn], &mut nodes[..n_undrawn]);
                leaf_nodes_binned(tree, flat.as_ref(), binned, undrawn, nodes);
                for (&r, &node) in undrawn.iter().zip(nodes.iter()) {
                    out[r as usize - first] = leaf_of_node[node as usize];
                }
            },
        );
}

/// Fills `rows` with every leaf's rows in its range, for a tree on the feature of `column`;
/// returns the leaf (in `leaves` order) of every bin.
pub(super) fn sort_rows_into_leaves(
    rows: &mut [u32],
    scratch: &mut [u32],
    column: FeatureBins<'_>,
    node_of_bin: &[u32],
    leaves: &[LeafRows],
    n_nodes: usize,
) -> Vec<u32> {
    let leaf_of_bin = leaf_of_bins(node_of_bin, leaves, n_nodes);
    // Groups in the order of the leaves' ranges, which tile the rows.
    let mut by_start: Vec<usize> = (0..leaves.len()).collect();
    by_start.sort_by_key(|&j| leaves[j].start);
    let mut group_of_leaf = vec![0; leaves.len()];
    for (group, &j) in by_start.iter().enumerate() {
        group_of_leaf[j] = group as u32;
    }
    let group_of_bin: Vec<u32> = (leaf_of_bin.iter())
        .map(|&j| group_of_leaf[j as usize])
        .collect();
    let counts = rows_by_group(rows, scratch, column, &group_of_bin, leaves.len());
    for (&j, count) in by_start.iter().zip(counts) {
        assert_eq!(
            leaves[j].end - leaves[j].start,
            count,
            "a leaf's bins hold its rows"
        );
    }
    leaf_of_bin
}
