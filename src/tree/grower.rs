//! Growing one tree: depth-wise (level by level, as in the papers) or leaf-wise (best gain
//! first, as in LightGBM). Only the smaller child's histogram is built; the larger child's is the
//! parent's minus it.

use super::categorical::CategoricalParams;
use super::constraints::Constraints;
use super::histogram::{BinStats, Features, Histogram, RowStats};
use super::partition::{rows_by_group, split_rows};
use super::regression_tree::{CategorySplit, Node, Tree};
use super::split::{
    best_split_bounded, best_split_constrained, Candidates, NeedCounts, NodeConstraint,
    SplitCandidate, SplitParams,
};
use crate::boost::Rng;
use crate::data::{BinMapper, BinnedData};
use crate::error::{Error, Result};
use crate::model::{leaf_nodes_binned, FlatTree};
use crate::rows::{block_cuts, group_slots};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Growth {
    Depthwise,
    Leafwise,
}

impl std::str::FromStr for Growth {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "depthwise" => Ok(Growth::Depthwise),
            "leafwise" => Ok(Growth::Leafwise),
            _ => Err(Error::param("growth", s, "\"depthwise\", \"leafwise\"")),
        }
    }
}

/// The largest `max_depth`: no grown tree is deeper, depth-wise or leaf-wise (model files with
/// deeper trees are rejected).
pub const MAX_DEPTH: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TreeParams {
    /// Split levels: 1 is a stump; at most `MAX_DEPTH`.
    pub max_depth: usize,
    pub max_leaves: usize,
    pub min_samples_leaf: usize,
    pub min_weight_leaf: f64,
    pub l2_leaf: f64,
    pub min_split_gain: f64,
    pub growth: Growth,
    /// Checkpoints written before these parameters existed ran unguarded categorical splits.
    #[serde(default = "CategoricalParams::unguarded")]
    pub categorical: CategoricalParams,
}

impl Default for TreeParams {
    fn default() -> Self {
        TreeParams {
            max_depth: 3,
            max_leaves: 1 << 16,
            // docs/algorithms.md, "Leaf size and L2": measured test loss; L2 as XGBoost's λ.
            min_samples_leaf: 10,
            min_weight_leaf: 1e-3,
            l2_leaf: 1.0,
            min_split_gain: 0.0,
            growth: Growth::Depthwise,
            categorical: CategoricalParams::default(),
        }
    }
}

impl TreeParams {
    pub fn validate(&self) -> Result<()> {
        if !(1..=MAX_DEPTH).contains(&self.max_depth) {
            return Err(Error::param(
                "max_depth",
                self.max_depth,
                format!("an integer in 1..={MAX_DEPTH}"),
            ));
        }
        if self.max_leaves < 2 {
            return Err(Error::param(
                "max_leaves",
                self.max_leaves,
                "an integer ≥ 2",
            ));
        }
        for (name, value) in [
            ("min_weight_leaf", self.min_weight_leaf),
            ("l2_leaf", self.l2_leaf),
            ("min_split_gain", self.min_split_gain),
            ("cat_smooth", self.categorical.cat_smooth),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(Error::param(name, value, "a finite number ≥ 0"));
            }
        }
        if self.categorical.max_cat_threshold == 0 {
            return Err(Error::param("max_cat_threshold", 0, "an integer ≥ 1"));
        }
        Ok(())
    }

    fn split_params(&self) -> SplitParams {
        SplitParams {
            l2_leaf: self.l2_leaf,
            min_samples_leaf: self.min_samples_leaf,
            min_weight_leaf: self.min_weight_leaf,
            min_split_gain: self.min_split_gain,
            categorical: self.categorical,
        }
    }
}

/// What a tree is fitted to: per row `vt = v·t` and `v` (target t, fitting weight v).
#[derive(Debug, Clone, Copy)]
pub struct FitStats<'a> {
    pub vt: &'a [f64],
    /// Empty: every fitting weight is 1 (unweighted least squares on `vt`), which spares the
    /// caller a vector of ones.
    pub v: &'a [f64],
}

/// Rows per histogram bin from which weighted trees leave bin counts out of their histograms.
/// Measured (2 threads, 63 leaves, 255 bins, 28 features, logistic): at 14 rows per bin
/// (100,000 rows) trees with counts took 0.74× the time of trees without, at 42 (300,000 rows)
/// the same time; on 5,000 × 50 (0.4 rows per bin) 0.62×. Large nodes gain 12–15% without
/// counts (see tree/histogram.rs).
const UNCOUNTED_MIN_ROWS_PER_BIN: usize = 32;

/// Rows per task of the passes over a tree's values in row order.
const ROW_CHUNK: usize = 8_192;

/// The rows of one leaf: `rows[start..end]` of `GrownTree::rows`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeafRows {
    pub node: usize,
    pub start: usize,
    pub end: usize,
}

#[derive(Debug, Clone)]
pub struct GrownTree {
    /// Leaf values may be changed (step rules re-solve them); the rows of each leaf may not.
    pub tree: Tree,
    /// Private: only `grow` makes them, so `rows` is always a permutation of the row ids cut
    /// into disjoint leaf ranges, ascending within each (the row-order passes rely on it).
    leaves: Vec<LeafRows>,
    rows: Vec<u32>,
    /// For a tree on one feature: the leaf of each of its bins, which the row-order passes read
    /// instead of the leaves' row lists.
    bin_leaves: Option<BinLeaves>,
}

/// Where the row-order passes find the leaf of a row: from its bin of the tree's one feature, or
/// among the leaves' row lists cut at the chunks (`chunk_cuts`).
enum LeafFinder<'a> {
    Bins(&'a [u8], &'a [u32]),
    Rows(Vec<Vec<u32>>),
}

#[derive(Debug, Clone)]
struct BinLeaves {
    feature: usize,
    /// Index in `leaves` of the leaf of each bin.
    leaf_of_bin: Vec<u32>,
}

impl GrownTree {
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

    pub fn fitted_values_into(&self, data: &BinnedData, out: &mut [f64]) {
        self.fold_rows(data, out, 1, 0, |(), _, o, value| *o = value);
    }

    /// `fitted_values_into`, returning in the same pass the sums (Σ t b, Σ t², Σ b²) over the
    /// rows for t_i = `target(i)` and b the fitted values, which give cos(t, b).
    pub fn fitted_values_and_cosine_sums(
        &self,
        data: &BinnedData,
        out: &mut [f64],
        target: impl Fn(usize) -> f64 + Sync,
    ) -> (f64, f64, f64) {
        let per_chunk = self.fold_rows(data, out, 1, 0, |sums, i, o, value| {
            *o = value;
            add_cosine_terms(sums, target(i), value);
        });
        add_in_order(per_chunk)
    }

    /// Adds `weight` × (`scale` × the tree's value) to column `column` of the row-major
    /// n × `n_columns` matrix `out`, with no vector of fitted values, and returns the cosine sums
    /// of `fitted_values_and_cosine_sums` for the tree's own values.
    pub fn add_to_column_with_cosine_sums(
        &self,
        data: &BinnedData,
        out: &mut [f64],
        (n_columns, column): (usize, usize),
        (weight, scale): (f64, f64),
        target: impl Fn(usize) -> f64 + Sync,
    ) -> (f64, f64, f64) {
        let per_chunk = self.fold_rows(data, out, n_columns, column, |sums, i, o, value| {
            *o += weight * (scale * value);
            add_cosine_terms(sums, target(i), value);
        });
        add_in_order(per_chunk)
    }

    /// Calls `visit(acc, i, entry, value)` for every row i in order, with `entry` the entry
    /// i·`stride` + `offset` of `out` and `value` the tree's value on row i. Rows are taken in
    /// fixed chunks, in parallel, each with its own accumulator; returns the accumulators in
    /// chunk order (the same with any number of threads).
    ///
    /// Row order rather than leaf by leaf: a leaf's rows are scattered over `out` and the
    /// caller's vectors, and one cache miss per row and vector cost more than finding each
    /// leaf's rows inside a chunk (its rows are ascending).
    fn fold_rows<A: Default + Send>(
        &self,
        data: &BinnedData,
        out: &mut [f64],
        stride: usize,
        offset: usize,
        visit: impl Fn(&mut A, usize, &mut f64, f64) + Sync,
    ) -> Vec<A> {
        assert!(offset < stride);
        let n_rows = out.len() / stride;
        assert_eq!(self.rows.len(), n_rows, "a tree's leaves cover every row");
        let finder = self.leaf_finder(data);
        let leaf_values = self.leaf_values();
        out.par_chunks_mut(ROW_CHUNK * stride)
            .enumerate()
            .map_init(Vec::new, |values: &mut Vec<f64>, (k, entries)| {
                let first = k * ROW_CHUNK;
                values.clear();
                values.resize(entries.len() / stride, 0.0);
                self.fill_chunk(&finder, k, values, |leaf| leaf_values[leaf]);
                let mut acc = A::default();
                for (j, (entry, &value)) in entries
                    .chunks_exact_mut(stride)
                    .map(|row| &mut row[offset])
                    .zip(values.iter())
                    .enumerate()
                {
                    visit(&mut acc, first + j, entry, value);
                }
                acc
            })
            .collect()
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

    /// `leaf_index` and the cosine sums of `fitted_values_and_cosine_sums` (the same numbers),
    /// in one pass and without writing fitted values: for a step rule that re-solves the leaves
    /// and only then needs the values.
    pub fn leaf_index_and_cosine_sums(
        &self,
        data: &BinnedData,
        target: impl Fn(usize) -> f64 + Sync,
    ) -> (Vec<u32>, (f64, f64, f64)) {
        let finder = self.leaf_finder(data);
        let leaf_values = self.leaf_values();
        let mut index = vec![0; self.rows.len()];
        let per_chunk = index
            .par_chunks_mut(ROW_CHUNK)
            .enumerate()
            .map(|(k, out)| {
                self.fill_chunk(&finder, k, out, |leaf| leaf as u32);
                let first = k * ROW_CHUNK;
                let mut sums = (0.0, 0.0, 0.0);
                for (j, &leaf) in out.iter().enumerate() {
                    add_cosine_terms(&mut sums, target(first + j), leaf_values[leaf as usize]);
                }
                sums
            })
            .collect();
        (index, add_in_order(per_chunk))
    }

    /// `of_leaf(j)`, for j the index in `leaves()` of each row's leaf, for the rows of chunk k
    /// (`out`).
    fn fill_chunk<T: Copy>(
        &self,
        finder: &LeafFinder<'_>,
        k: usize,
        out: &mut [T],
        of_leaf: impl Fn(usize) -> T,
    ) {
        let first = k * ROW_CHUNK;
        match finder {
            LeafFinder::Bins(column, leaf_of_bin) => {
                let bins = &column[first..first + out.len()];
                for (x, &bin) in out.iter_mut().zip(bins) {
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
    fn leaf_finder<'a>(&'a self, data: &'a BinnedData) -> LeafFinder<'a> {
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

    pub fn leaf_rows(&self, leaf: &LeafRows) -> &[u32] {
        &self.rows[leaf.start..leaf.end]
    }
}

struct Pending {
    node: usize,
    start: usize,
    end: usize,
    depth: usize,
    hist: Option<Histogram>,
    split: Option<SplitCandidate>,
    limits: NodeLimits,
}

/// What the splits above a node impose on it (see `Constraints`).
#[derive(Debug, Clone)]
struct NodeLimits {
    /// The interval the node's values must lie in (monotone constraints).
    lower: f64,
    upper: f64,
    /// The features split on above the node, each once (interaction constraints).
    path: Vec<u32>,
}

impl NodeLimits {
    fn root() -> NodeLimits {
        NodeLimits {
            lower: f64::NEG_INFINITY,
            upper: f64::INFINITY,
            path: Vec::new(),
        }
    }

    /// The limits of the two children of a split on `feature` whose children have the values
    /// `(left, right)`, for a feature of monotone direction `direction`: the interval is cut at
    /// the midpoint of the values, the lower child's side below it.
    fn children(&self, feature: usize, direction: i8, (left, right): (f64, f64)) -> (Self, Self) {
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

/// The row lists of a fit (4 bytes per row each), which a caller fitting many trees keeps
/// between fits: allocating them afresh for every tree makes the allocator hold on to freed
/// blocks, which costs more memory than the buffers themselves.
#[derive(Debug, Default)]
pub struct GrowBuffers {
    /// Row lists of finished trees, for the next fits.
    rows: Vec<Vec<u32>>,
    scratch: Vec<u32>,
}

impl GrowBuffers {
    /// Takes back the row list of a tree that is no longer needed.
    pub fn recycle(&mut self, rows: Vec<u32>) {
        self.rows.push(rows);
    }
}

/// What one tree may use besides its candidate splits: a sample of the rows and features drawn
/// per node (stochastic gradient boosting), and the constraints its splits must respect.
#[derive(Debug, Clone, Copy)]
pub struct GrowOptions<'a> {
    /// The rows the tree is grown on (ascending, distinct); `None`: every row. Histograms, split
    /// gains and leaf values see these rows only; the grown tree's leaves still hold every row
    /// (the rows not drawn go where the tree's rules send them), so that the tree can be applied
    /// to all of them.
    pub rows: Option<&'a [u32]>,
    /// Fraction of the tree's features each node may split on (1: all), drawn per node from
    /// `node_seed` and the node's id: the same features whatever the thread count.
    pub colsample_bynode: f64,
    pub node_seed: u64,
    /// Monotone and interaction constraints (`None`: none).
    pub constraints: Option<&'a Constraints>,
}

impl Default for GrowOptions<'_> {
    fn default() -> Self {
        GrowOptions {
            rows: None,
            colsample_bynode: 1.0,
            node_seed: 0,
            constraints: None,
        }
    }
}

/// Fits a tree to `stats` on all rows of `data`.
pub fn grow(
    data: &BinnedData,
    stats: FitStats<'_>,
    params: &TreeParams,
    candidates: &Candidates,
) -> GrownTree {
    grow_with(data, stats, params, candidates, &mut GrowBuffers::default())
}

/// `grow` with reusable row lists: the tree's `rows` come from `buffers` (give them back with
/// `GrowBuffers::recycle`).
pub fn grow_with(
    data: &BinnedData,
    stats: FitStats<'_>,
    params: &TreeParams,
    candidates: &Candidates,
    buffers: &mut GrowBuffers,
) -> GrownTree {
    grow_with_options(
        data,
        stats,
        params,
        candidates,
        buffers,
        &GrowOptions::default(),
    )
}

/// `grow_with` on the rows and per-node features of `options`.
pub fn grow_with_options(
    data: &BinnedData,
    stats: FitStats<'_>,
    params: &TreeParams,
    candidates: &Candidates,
    buffers: &mut GrowBuffers,
    options: &GrowOptions<'_>,
) -> GrownTree {
    // Histograms hold the bins of the candidate features only (all of this tree's splits draw
    // from the same set): with a few of many features, that is most of the fitting time saved.
    let allowed = candidates.allowed_features(data.n_features());
    let features = allowed.as_deref().map_or(Features::All, Features::Only);
    // On numeric features without missing values, bin counts serve only to check
    // `min_samples_leaf`, which the weights mostly decide: weighted histograms go without them.
    let row_stats = RowStats::new(stats.vt, stats.v);
    let complete_numeric = |f: usize| !data.is_categorical(f) && !data.has_missing(f);
    let all_complete_numeric = match features {
        Features::All => (0..data.n_features()).all(complete_numeric),
        Features::Only(list) => list.iter().all(|&f| complete_numeric(f)),
    };
    let one_feature = match allowed.as_deref() {
        Some(&[feature]) => Some(feature),
        None if data.n_features() == 1 => Some(0),
        _ => None,
    };
    // A tree on one feature takes its children's histograms from the parent's bins, counts
    // included: it never needs its rows to count them. Leaving counts out halves the bytes a
    // row adds but, where the bounds cannot decide a node's split, costs a counting pass and a
    // second search of all bins: it pays only where rows outnumber bins (see
    // `UNCOUNTED_MIN_ROWS_PER_BIN`). Either way the tree is the same.
    let n_fit = options.rows.map_or(data.n_rows(), <[u32]>::len);
    let built_bins: usize = match features {
        Features::All => data.total_bins(),
        Features::Only(list) => list.iter().map(|&f| data.mappers()[f].n_bins()).sum(),
    };
    let many_rows_per_bin = n_fit >= UNCOUNTED_MIN_ROWS_PER_BIN * built_bins;
    let row_stats = if all_complete_numeric && one_feature.is_none() && many_rows_per_bin {
        row_stats.without_counts(params.max_depth.min(params.max_leaves))
    } else {
        row_stats
    };
    grow_from(
        data,
        &row_stats,
        features,
        one_feature,
        params,
        candidates,
        buffers,
        options,
    )
}

/// With `one_feature`, the tree splits on that feature only: a node is a set of its bins, the
/// children's histograms are the parent's bins sent either way, and the rows are sorted into
/// their leaves once, at the end, instead of partitioned at every split.
fn grow_from(
    data: &BinnedData,
    row_stats: &RowStats<'_>,
    features: Features<'_>,
    one_feature: Option<usize>,
    params: &TreeParams,
    candidates: &Candidates,
    buffers: &mut GrowBuffers,
    options: &GrowOptions<'_>,
) -> GrownTree {
    let n = data.n_rows();
    let mut rows = buffers.rows.pop().unwrap_or_default();
    rows.clear();
    match options.rows {
        Some(sample) => rows.extend_from_slice(sample),
        None => rows.extend(0..n as u32),
    }
    let n_fit = rows.len();
    let split_params = params.split_params();
    let node_sampler = NodeFeatureSampler::new(data, candidates, options);
    let constraints = options.constraints.cloned().unwrap_or_default();
    let monotone = constraints.monotone();
    let find_split =
        |hist: &Histogram, node_rows: &[u32], stats: BinStats, node: usize, limits: &NodeLimits| {
            let mut node_candidates = node_sampler
                .as_ref()
                .map(|s| s.candidates(candidates, node));
            if let Some(allowed) = constraints.allowed_features(&limits.path, data.n_features()) {
                let own = node_candidates.as_ref().unwrap_or(candidates);
                node_candidates = Some(own.within(&allowed));
            }
            let candidates = node_candidates.as_ref().unwrap_or(candidates);
            let constraint = monotone.map(|monotone| NodeConstraint {
                monotone,
                lower: limits.lower,
                upper: limits.upper,
            });
            let constraint = constraint.as_ref();
            let exact = |hist: &Histogram| {
                best_split_constrained(hist, data, stats, &split_params, candidates, constraint)
            };
            match row_stats.count_bounds() {
                None => exact(hist),
                Some(bounds) => best_split_bounded(
                    hist,
                    data,
                    stats,
                    &split_params,
                    candidates,
                    bounds,
                    constraint,
                )
                .unwrap_or_else(|NeedCounts| exact(&hist.with_counts(data, node_rows, features))),
            }
        };
    let mut categories = Vec::new();
    // Histograms of finished nodes are reused (build_into overwrites every bin that is read).
    let mut spare: Vec<Histogram> = Vec::new();
    let new_hist = |spare: &mut Vec<Histogram>| {
        spare.pop().unwrap_or_else(|| Histogram {
            bins: vec![BinStats::default(); data.total_bins()],
        })
    };
    let scratch = &mut buffers.scratch;
    scratch.resize(n, 0);
    let mut hist = new_hist(&mut spare);
    hist.build_into(data, &rows, row_stats, features);
    // A tree on one feature finds its totals in the root's bins; others sum them over the rows.
    let total = match one_feature {
        Some(feature) => {
            (hist.feature(data, feature).iter()).fold(BinStats::default(), |a, &b| a + b)
        }
        None => row_stats.totals(&rows),
    };
    let mut nodes = vec![leaf_node(total, params.l2_leaf)];
    let split = find_split(&hist, &rows, total, 0, &NodeLimits::root());
    let mut pending = PendingNodes::new(params.growth);
    pending.push(Pending {
        node: 0,
        start: 0,
        end: n_fit,
        depth: 0,
        hist: Some(hist),
        split,
        limits: NodeLimits::root(),
    });
    let mut leaves = Vec::new();
    let mut n_leaves = 1;
    // On one feature: the node that holds the rows of each of its bins.
    let mut node_of_bin = one_feature.map(|f| vec![0u32; data.mappers()[f].n_bins()]);

    while let Some(mut work) = pending.pop() {
        let Some(mut split) = work.split.take().filter(|_| n_leaves < params.max_leaves) else {
            spare.extend(work.hist.take());
            leaves.push(LeafRows {
                node: work.node,
                start: work.start,
                end: work.end,
            });
            continue;
        };
        let (left_id, right_id) = (nodes.len(), nodes.len() + 1);
        let n_left = match &mut node_of_bin {
            Some(node_of_bin) => {
                for (bin, node) in node_of_bin.iter_mut().enumerate() {
                    if *node as usize == work.node {
                        let left = split.left_bins.contains(bin as u8);
                        *node = if left { left_id } else { right_id } as u32;
                    }
                }
                split.left.count as usize
            }
            None => split_rows(
                &mut rows[work.start..work.end],
                scratch,
                data.column(split.feature),
                &split.left_bins,
            ),
        };
        if row_stats.count_bounds().is_some() {
            let n_right = work.end - work.start - n_left;
            split.left.count = n_left as u32;
            split.right.count = n_right as u32;
            // Where best_split sends the missing values of a feature that has none here.
            if n_left >= n_right {
                split.left_bins.insert(0);
            } else {
                split.left_bins.remove(0);
            }
        }
        debug_assert_eq!(n_left, split.left.count as usize);
        let mid = work.start + n_left;
        let (mut left_node, mut right_node) = (
            leaf_node(split.left, params.l2_leaf),
            leaf_node(split.right, params.l2_leaf),
        );
        let direction = match monotone {
            Some(monotone) if !data.is_categorical(split.feature) => monotone[split.feature],
            _ => 0,
        };
        if monotone.is_some() {
            // The values the split search compared: clamped to this node's interval.
            let clamp = |v: f64| v.clamp(work.limits.lower, work.limits.upper);
            left_node.value = clamp(left_node.value);
            right_node.value = clamp(right_node.value);
        }
        let (left_limits, right_limits) = work.limits.children(
            split.feature,
            direction,
            (left_node.value, right_node.value),
        );
        nodes.push(left_node);
        nodes.push(right_node);
        set_rule(
            &mut nodes[work.node],
            &mut categories,
            &split,
            data,
            left_id,
            right_id,
        );
        n_leaves += 1;

        let depth = work.depth + 1;
        let splittable = |s: &BinStats| {
            depth < params.max_depth && s.count as usize >= 2 * split_params.min_samples_leaf.max(1)
        };
        let (left_hist, right_hist) = if splittable(&split.left) || splittable(&split.right) {
            let mut parent = work
                .hist
                .take()
                .expect("a node with a split has a histogram");
            if let Some(feature) = one_feature {
                let mut left = new_hist(&mut spare);
                parent.move_bins(&mut left, data, feature, &split.left_bins);
                (Some(left), Some(parent))
            } else {
                let left_is_smaller = n_left <= work.end - mid;
                let small_rows = if left_is_smaller {
                    &rows[work.start..mid]
                } else {
                    &rows[mid..work.end]
                };
                let mut small = new_hist(&mut spare);
                small.build_into(data, small_rows, row_stats, features);
                parent.subtract_features(&small, data, features);
                if left_is_smaller {
                    (Some(small), Some(parent))
                } else {
                    (Some(parent), Some(small))
                }
            }
        } else {
            spare.extend(work.hist.take());
            (None, None)
        };
        // The two searches are independent: run them side by side (a search is serial). On one
        // feature the rows are not sorted by node yet; its histograms have counts, so the search
        // never reads them.
        let search = |hist: &Option<Histogram>,
                      (start, end): (usize, usize),
                      stats: BinStats,
                      node: usize,
                      limits: &NodeLimits| {
            hist.as_ref()
                .filter(|_| splittable(&stats))
                .and_then(|h| find_split(h, &rows[start..end], stats, node, limits))
        };
        let (left_split, right_split) = if one_feature.is_some() {
            // One feature's bins: less work than waking another thread.
            (
                search(
                    &left_hist,
                    (work.start, mid),
                    split.left,
                    left_id,
                    &left_limits,
                ),
                search(
                    &right_hist,
                    (mid, work.end),
                    split.right,
                    right_id,
                    &right_limits,
                ),
            )
        } else {
            rayon::join(
                || {
                    search(
                        &left_hist,
                        (work.start, mid),
                        split.left,
                        left_id,
                        &left_limits,
                    )
                },
                || {
                    search(
                        &right_hist,
                        (mid, work.end),
                        split.right,
                        right_id,
                        &right_limits,
                    )
                },
            )
        };
        for (id, start, end, hist, split, limits) in [
            (left_id, work.start, mid, left_hist, left_split, left_limits),
            (
                right_id,
                mid,
                work.end,
                right_hist,
                right_split,
                right_limits,
            ),
        ] {
            let hist = match split {
                Some(_) => hist,
                None => {
                    spare.extend(hist);
                    None
                }
            };
            pending.push(Pending {
                node: id,
                start,
                end,
                depth,
                hist,
                split,
                limits,
            });
        }
    }
    let tree = Tree { nodes, categories };
    let bin_leaves = one_feature.zip(node_of_bin).map(|(feature, node_of_bin)| {
        let leaf_of_bin = if options.rows.is_some() {
            leaf_of_bins(&node_of_bin, &leaves, tree.nodes.len())
        } else {
            sort_rows_into_leaves(
                &mut rows,
                scratch,
                data.column(feature),
                &node_of_bin,
                &leaves,
                tree.nodes.len(),
            )
        };
        BinLeaves {
            feature,
            leaf_of_bin,
        }
    });
    if options.rows.is_some() {
        cover_every_row(data, &tree, &mut leaves, &mut rows, bin_leaves.as_ref());
    }
    GrownTree {
        tree,
        leaves,
        rows,
        bin_leaves,
    }
}

/// Draws the features each node of one tree may split on (`colsample_bynode`): from the tree's
/// candidate features, a fixed number, with a generator seeded by the tree's seed and the node's
/// id, so that the draw depends on neither the order the nodes are searched in nor the threads.
struct NodeFeatureSampler {
    features: Vec<usize>,
    n_draw: usize,
    n_features: usize,
    seed: u64,
}

impl NodeFeatureSampler {
    fn new(
        data: &BinnedData,
        candidates: &Candidates,
        options: &GrowOptions<'_>,
    ) -> Option<NodeFeatureSampler> {
        if options.colsample_bynode >= 1.0 {
            return None;
        }
        let n_features = data.n_features();
        let features: Vec<usize> = (0..n_features)
            .filter(|&f| candidates.allows_feature(f))
            .collect();
        let n_draw = fraction_of(features.len(), options.colsample_bynode);
        Some(NodeFeatureSampler {
            features,
            n_draw,
            n_features,
            seed: options.node_seed,
        })
    }

    fn candidates(&self, candidates: &Candidates, node: usize) -> Candidates {
        let mut rng = Rng::new(self.seed ^ (node as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut allowed = vec![false; self.n_features];
        for pick in rng.sample(self.features.len(), self.n_draw) {
            allowed[self.features[pick]] = true;
        }
        candidates.within(&allowed)
    }
}

/// round(fraction · n), at least 1 when n > 0.
pub fn fraction_of(n: usize, fraction: f64) -> usize {
    ((fraction * n as f64).round() as usize).clamp(n.min(1), n)
}

/// The leaf (in `leaves` order) of every bin of a tree on one feature.
fn leaf_of_bins(node_of_bin: &[u32], leaves: &[LeafRows], n_nodes: usize) -> Vec<u32> {
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
/// that apply the tree to all rows rely on it). The leaves keep their order.
fn cover_every_row(
    data: &BinnedData,
    tree: &Tree,
    leaves: &mut [LeafRows],
    rows: &mut Vec<u32>,
    bin_leaves: Option<&BinLeaves>,
) {
    let n = data.n_rows();
    let mut leaf_of_node = vec![u32::MAX; tree.nodes.len()];
    for (j, leaf) in leaves.iter().enumerate() {
        leaf_of_node[leaf.node] = j as u32;
    }
    // The branch-free walk of prediction: a branchy walk of 1M rows mispredicts about once per
    // level and took longer than growing the tree on half of them.
    let numeric: Vec<bool> = (0..data.n_features())
        .map(|f| !data.is_categorical(f))
        .collect();
    let flat = FlatTree::new(tree, &numeric);
    let mut leaf_of_row = vec![0u32; n];
    leaf_of_row
        .par_chunks_mut(ROW_CHUNK)
        .enumerate()
        .for_each(|(k, out)| {
            let first = k * ROW_CHUNK;
            match bin_leaves {
                Some(b) => {
                    let bins = &data.column(b.feature)[first..first + out.len()];
                    for (leaf, &bin) in out.iter_mut().zip(bins) {
                        *leaf = b.leaf_of_bin[bin as usize];
                    }
                }
                None => {
                    leaf_nodes_binned(tree, flat.as_ref(), data.matrix(), first, out);
                    out.iter_mut()
                        .for_each(|node| *node = leaf_of_node[*node as usize]);
                }
            }
        });
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

/// Fills `rows` with every leaf's rows in its range, for a tree on the feature of `column`;
/// returns the leaf (in `leaves` order) of every bin.
fn sort_rows_into_leaves(
    rows: &mut [u32],
    scratch: &mut [u32],
    column: &[u8],
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

#[inline]
fn add_cosine_terms(sums: &mut (f64, f64, f64), t: f64, b: f64) {
    sums.0 += t * b;
    sums.1 += t * t;
    sums.2 += b * b;
}

fn add_in_order(sums: Vec<(f64, f64, f64)>) -> (f64, f64, f64) {
    sums.into_iter()
        .fold((0.0, 0.0, 0.0), |(a, b, c), (x, y, z)| {
            (a + x, b + y, c + z)
        })
}

/// The nodes waiting to be split or made leaves. Depth-wise takes them in creation order (level
/// by level); leaf-wise the largest gain first (a node without a split counts as −∞), ties to
/// the earliest created. A heap keeps leaf-wise growth linear-logarithmic in the leaves (a scan
/// of all waiting nodes per split made it quadratic).
struct PendingNodes {
    growth: Growth,
    fifo: VecDeque<Pending>,
    heap: BinaryHeap<ByGain>,
    created: u64,
}

/// A waiting node ordered by gain, then by creation (earlier first).
struct ByGain {
    gain: f64,
    created: u64,
    node: Pending,
}

impl PartialEq for ByGain {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for ByGain {}
impl PartialOrd for ByGain {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for ByGain {
    fn cmp(&self, other: &Self) -> Ordering {
        // Gains are never NaN (the split search admits only gains > 0).
        self.gain
            .total_cmp(&other.gain)
            .then(other.created.cmp(&self.created))
    }
}

impl PendingNodes {
    fn new(growth: Growth) -> Self {
        PendingNodes {
            growth,
            fifo: VecDeque::new(),
            heap: BinaryHeap::new(),
            created: 0,
        }
    }

    fn push(&mut self, node: Pending) {
        match self.growth {
            Growth::Depthwise => self.fifo.push_back(node),
            Growth::Leafwise => {
                let gain = node.split.as_ref().map_or(f64::NEG_INFINITY, |s| s.gain);
                self.heap.push(ByGain {
                    gain,
                    created: self.created,
                    node,
                });
                self.created += 1;
            }
        }
    }

    fn pop(&mut self) -> Option<Pending> {
        match self.growth {
            Growth::Depthwise => self.fifo.pop_front(),
            Growth::Leafwise => self.heap.pop().map(|ranked| ranked.node),
        }
    }
}

fn leaf_node(stats: BinStats, l2_leaf: f64) -> Node {
    let denominator = stats.sum_v + l2_leaf;
    Node {
        feature: 0,
        left: 0,
        right: 0,
        threshold: 0.0,
        bin: 0,
        default_left: false,
        category: None,
        value: if denominator > 0.0 {
            stats.sum_vt / denominator
        } else {
            0.0
        },
        gain: 0.0,
        count: stats.count,
    }
}

fn set_rule(
    node: &mut Node,
    categories: &mut Vec<CategorySplit>,
    split: &SplitCandidate,
    data: &BinnedData,
    left: usize,
    right: usize,
) {
    node.feature = split.feature as u32;
    node.left = left as u32;
    node.right = right as u32;
    node.gain = split.gain;
    node.default_left = split.default_left();
    match (&data.mappers()[split.feature], split.threshold) {
        (BinMapper::Numeric { cuts }, Some(t)) => {
            node.bin = t;
            // t = the last bin sends every non-missing value left.
            node.threshold = cuts.get(t as usize - 1).copied().unwrap_or(f64::INFINITY);
        }
        (BinMapper::Categorical { level_bins, .. }, None) => {
            let mut left_codes = vec![0u64; level_bins.len().div_ceil(64)];
            for (code, &bin) in level_bins.iter().enumerate() {
                if split.left_bins.contains(bin) {
                    left_codes[code / 64] |= 1 << (code % 64);
                }
            }
            node.category = Some(categories.len() as u32);
            categories.push(CategorySplit {
                left_bins: split.left_bins,
                left_codes,
            });
        }
        _ => unreachable!("split kind follows the feature kind"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{BinningParams, Feature, Frame};
    use crate::tree::test_data::{binned, uniform};

    #[test]
    fn leaf_wise_takes_the_largest_gain_first_and_ties_in_creation_order() {
        let waiting = |node: usize, gain: Option<f64>| Pending {
            node,
            start: 0,
            end: 0,
            depth: 0,
            hist: None,
            split: gain.map(|gain| SplitCandidate {
                feature: 0,
                gain,
                threshold: Some(1),
                left_bins: Default::default(),
                left: BinStats::default(),
                right: BinStats::default(),
            }),
            limits: NodeLimits::root(),
        };
        let gains = [
            Some(1.0),
            None,
            Some(3.0),
            Some(1.0),
            None,
            Some(3.0),
            Some(2.0),
        ];
        // The scan the heap replaced: the first node of the largest gain, no split as −∞.
        let mut scanned: Vec<usize> = Vec::new();
        let mut left: Vec<(usize, f64)> = (gains.iter().enumerate())
            .map(|(node, g)| (node, g.unwrap_or(f64::NEG_INFINITY)))
            .collect();
        while !left.is_empty() {
            let best = (0..left.len())
                .reduce(|a, b| if left[b].1 > left[a].1 { b } else { a })
                .unwrap();
            scanned.push(left.remove(best).0);
        }
        let mut pending = PendingNodes::new(Growth::Leafwise);
        for (node, &gain) in gains.iter().enumerate() {
            pending.push(waiting(node, gain));
        }
        let popped: Vec<usize> = std::iter::from_fn(|| pending.pop().map(|p| p.node)).collect();
        assert_eq!(popped, scanned);
        assert_eq!(popped, [2, 5, 6, 0, 3, 1, 4]);
        let mut fifo = PendingNodes::new(Growth::Depthwise);
        for (node, &gain) in gains.iter().enumerate() {
            fifo.push(waiting(node, gain));
        }
        let popped: Vec<usize> = std::iter::from_fn(|| fifo.pop().map(|p| p.node)).collect();
        assert_eq!(popped, [0, 1, 2, 3, 4, 5, 6]);
    }

    /// Every leaf's rows and value, ordered by first row.
    fn leaf_sets(grown: &GrownTree) -> Vec<(&[u32], f64)> {
        let mut leaves: Vec<(&[u32], f64)> = (grown.leaves.iter())
            .map(|leaf| (grown.leaf_rows(leaf), grown.tree.nodes[leaf.node].value))
            .collect();
        leaves.sort_by_key(|(rows, _)| rows[0]);
        leaves
    }

    #[test]
    fn trees_on_one_feature_equal_trees_grown_by_partitions() {
        // A numeric feature, one with missing values and a categorical one with missing codes;
        // weights (some zero) or none; leaves small enough that min_samples_leaf binds, and more
        // rows than a chunk, so that rows are sorted into leaves in parallel.
        let mut state = 21;
        let n = 30_000;
        let x: Vec<f64> = (0..n).map(|_| uniform(&mut state)).collect();
        let with_nan: Vec<f64> = (0..n)
            .map(|_| {
                let u = uniform(&mut state);
                if u < 0.15 {
                    f64::NAN
                } else {
                    u
                }
            })
            .collect();
        let codes: Vec<i32> = (0..n)
            .map(|_| (uniform(&mut state) * 13.0) as i32 - 1)
            .collect();
        let frame = Frame::new(vec![
            Feature::numeric("x", &x),
            Feature::numeric("with_nan", &with_nan),
            Feature::categorical("level", &codes, 12),
        ])
        .unwrap();
        let data = BinnedData::learn(&frame, &BinningParams::default()).unwrap();
        let t: Vec<f64> = (0..n)
            .map(|i| {
                (9.0 * x[i]).sin() + with_nan[i].min(0.5) + (codes[i] % 5) as f64
                    - uniform(&mut state)
            })
            .collect();
        let v: Vec<f64> = (0..n)
            .map(|i| {
                if i % 89 == 0 {
                    0.0
                } else {
                    0.1 + uniform(&mut state)
                }
            })
            .collect();
        let vt: Vec<f64> = t.iter().zip(&v).map(|(t, v)| t * v).collect();
        for (stats, label) in [
            (FitStats { vt: &t, v: &[] }, "unweighted"),
            (FitStats { vt: &vt, v: &v }, "weighted"),
        ] {
            for feature in 0..3 {
                let mut allowed = vec![false; 3];
                allowed[feature] = true;
                let candidates = Candidates::Features(allowed);
                for (growth, min_samples_leaf) in [
                    (Growth::Depthwise, 1),
                    (Growth::Depthwise, 900),
                    (Growth::Leafwise, 30),
                ] {
                    // No L2: with λ > 0, splitting levels of equal mean loses gain, and this
                    // test needs trees with many leaves.
                    let params = TreeParams {
                        max_depth: 7,
                        max_leaves: 40,
                        min_samples_leaf,
                        l2_leaf: 0.0,
                        growth,
                        ..TreeParams::default()
                    };
                    let case = format!("{label} feature {feature} {growth:?} {min_samples_leaf}");
                    let sorted = grow(&data, stats, &params, &candidates);
                    let partitioned = grow_from(
                        &data,
                        &RowStats::new(stats.vt, stats.v),
                        Features::Only(&[feature]),
                        None,
                        &params,
                        &candidates,
                        &mut GrowBuffers::default(),
                        &GrowOptions::default(),
                    );
                    assert!(sorted.tree.n_leaves() >= 8, "{case}");
                    // The same leaves, as row sets with their values. The node layout may differ:
                    // on a node of missing values and one more run of bins, "missing left" and
                    // "missing right" make the same two children, and rounding picks one.
                    let (ours, theirs) = (leaf_sets(&sorted), leaf_sets(&partitioned));
                    assert_eq!(ours.len(), theirs.len(), "{case}");
                    for ((rows, value), (their_rows, their_value)) in ours.iter().zip(&theirs) {
                        assert_eq!(rows, their_rows, "{case}");
                        assert!((value - their_value).abs() <= 1e-9 * (1.0 + their_value.abs()));
                    }
                    // Each leaf's rows are those the tree's rules send there.
                    for leaf in &sorted.leaves {
                        for &r in sorted.leaf_rows(leaf) {
                            let bins = data.matrix().row(r as usize);
                            assert_eq!(sorted.tree.leaf_of_bins(bins), leaf.node, "{case}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn trees_from_histograms_without_counts_equal_trees_with_counts() {
        // Weights over three orders of magnitude, some zero, and leaves small enough that
        // min_samples_leaf binds: the count bounds leave many candidates undecided, so nodes
        // also take the path that counts their rows.
        let mut state = 9;
        let (n, p) = (20_000, 4);
        let columns: Vec<Vec<f64>> = (0..p)
            .map(|_| (0..n).map(|_| uniform(&mut state)).collect())
            .collect();
        let data = binned(&columns);
        let v: Vec<f64> = (0..n)
            .map(|i| {
                if i % 97 == 0 {
                    0.0
                } else {
                    10f64.powf(-3.0 * uniform(&mut state))
                }
            })
            .collect();
        let vt: Vec<f64> = (0..n)
            .map(|i| v[i] * ((7.0 * columns[0][i]).sin() + columns[1][i] + uniform(&mut state)))
            .collect();
        let counted = RowStats::new(&vt, &v);
        let uncounted = counted.without_counts(8);
        assert!(uncounted.count_bounds().is_some());
        for growth in [Growth::Depthwise, Growth::Leafwise] {
            for min_samples_leaf in [1, 40, 700] {
                let params = TreeParams {
                    max_depth: 8,
                    max_leaves: 120,
                    min_samples_leaf,
                    min_weight_leaf: 0.0,
                    growth,
                    ..TreeParams::default()
                };
                let grow = |stats: &RowStats<'_>| {
                    let buffers = &mut GrowBuffers::default();
                    grow_from(
                        &data,
                        stats,
                        Features::All,
                        None,
                        &params,
                        &Candidates::All,
                        buffers,
                        &GrowOptions::default(),
                    )
                };
                let (with, without) = (grow(&counted), grow(&uncounted));
                assert!(with.tree.n_leaves() > 20, "{growth:?} {min_samples_leaf}");
                assert_eq!(with.tree, without.tree, "{growth:?} {min_samples_leaf}");
                assert_eq!(with.rows, without.rows);
            }
        }
    }
}
