//! Growing one tree: depth-wise (level by level, as in the papers) or leaf-wise (best gain
//! first, as in LightGBM); oblivious trees in oblivious.rs. This file chooses how a tree is
//! grown (which features' histograms, with or without bin counts, exact or quantized
//! statistics) and drives the phases of growing it, each in a file of its own: the histograms
//! (node_histograms.rs), the split search (node_search.rs), the splits with their partitions
//! and leaf values (growing_tree.rs).

use super::candidates::Candidates;
use super::constraints::NodeLimits;
use super::goss::GossRows;
use super::grow_inputs::{GrowBuffers, GrowOptions};
use super::growing_tree::GrowingTree;
use super::grown::GrownTree;
use super::histogram::RowStats;
use super::histogram_kernel::Features;
use super::node_histograms::NodeHistograms;
use super::node_search::SplitSearch;
use super::noise::{SplitNoise, TreeNoise};
use super::oblivious::grow_oblivious;
use super::pending::{PendingNodes, Ranked};
use super::ranks::Ranks;
use super::split::SplitCandidate;
use super::support::KeptHistogram;
use super::tree_params::{TreeKind, TreeParams};
use crate::collective::Local;
use crate::data::BinnedData;
use rayon::prelude::*;

/// What a tree is fitted to: per row `vt = v·t` and `v` (target t, fitting weight v).
#[derive(Debug, Clone, Copy)]
pub struct FitStats<'a> {
    /// v·t per row.
    pub vt: &'a [f64],
    /// Empty: every fitting weight is 1 (unweighted least squares on `vt`), which spares the
    /// caller a vector of ones.
    pub v: &'a [f64],
}

/// Rows per histogram bin from which weighted trees leave bin counts out of their histograms.
/// Measured (2 threads, 63 leaves, 255 bins, 28 features, logistic): at 14 rows per bin
/// (100,000 rows) trees with counts took 0.74× the time of trees without, at 42 (300,000 rows)
/// the same time; on 5,000 × 50 (0.4 rows per bin) 0.62×. Large nodes gain 12–15% without
/// counts (see tree/histogram_kernel.rs).
const UNCOUNTED_MIN_ROWS_PER_BIN: usize = 32;

/// A node waiting for its turn to be split, with its rows `rows[start..end]`.
struct Pending {
    node: usize,
    start: usize,
    end: usize,
    depth: usize,
    /// For the split: the histogram, whole or on its support (see tree/support.rs).
    hist: Option<KeptHistogram>,
    split: Option<SplitCandidate>,
    limits: NodeLimits,
}

impl Ranked for Pending {
    fn gain(&self) -> f64 {
        self.split.as_ref().map_or(f64::NEG_INFINITY, |s| s.gain)
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
    let goss_rows = GossRows {
        rows: options.rows,
        global: options.global_rows,
        collective: options.collective.unwrap_or(&Local),
    };
    if let Some(draw) = (options.goss).and_then(|goss| goss.draw(stats.vt, stats.v, goss_rows)) {
        let stats = FitStats {
            vt: &draw.vt,
            v: &draw.v,
        };
        let options = GrowOptions {
            rows: Some(&draw.rows),
            goss: None,
            ..*options
        };
        return grow_with_options(data, stats, params, candidates, buffers, &options);
    }
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
    let ranks = Ranks::of(options.collective);
    if params.tree == TreeKind::Oblivious {
        // With bin counts: a level's rule is checked against every node's leaf minimum.
        let quantization = (options.quantize_seed)
            .filter(|_| ranks.alone())
            .and_then(|seed| row_stats.quantized(options.rows, seed, params.max_depth));
        let row_stats =
            (quantization.as_ref()).map_or(row_stats, |q| RowStats::Quantized(q.stats()));
        return grow_oblivious(
            data, &row_stats, features, params, candidates, buffers, options,
        );
    }
    // Across ranks, rows are partitioned at every split (a rank's row ranges follow its own
    // counts) and counts come with the summed histograms.
    let one_feature = match allowed.as_deref() {
        _ if !ranks.alone() => None,
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
    let many_rows_per_bin = n_fit >= UNCOUNTED_MIN_ROWS_PER_BIN * features.n_bins(data);
    // Noise ranks every candidate by its noisy score, which the count bounds cannot decide on.
    let row_stats = if all_complete_numeric
        && options.noise.is_none()
        && one_feature.is_none()
        && many_rows_per_bin
        && ranks.alone()
        && !buffers.always_count
    {
        row_stats.without_counts(params.max_depth.min(params.max_leaves))
    } else {
        row_stats
    };
    let quantization = (options.quantize_seed)
        .filter(|_| ranks.alone())
        .and_then(|seed| {
            let depth = params.max_depth.min(params.max_leaves);
            row_stats.quantized(options.rows, seed, depth)
        });
    let row_stats = (quantization.as_ref()).map_or(row_stats, |q| RowStats::Quantized(q.stats()));
    let tree_noise =
        (options.noise).and_then(|noise| tree_noise(noise, stats.vt, options.rows, ranks));
    grow_from(
        data,
        &row_stats,
        features,
        one_feature,
        params,
        candidates,
        buffers,
        options,
        tree_noise,
    )
}

/// Grows the tree phase by phase, each node once its turn comes in the order of
/// `params.growth`: its split is applied and its rows partitioned (growing_tree.rs), its
/// children's histograms built or subtracted (node_histograms.rs) and their splits searched
/// (node_search.rs); the children wait in turn. The ranks of a data-parallel fit differ only
/// inside those phases (ranks.rs). With `one_feature`, the tree splits on that feature only: a
/// node is a set of its bins, the children's histograms are the parent's bins sent either way,
/// and the rows are sorted into their leaves once, at the end, instead of partitioned at every
/// split.
fn grow_from(
    data: &BinnedData,
    row_stats: &RowStats<'_>,
    features: Features<'_>,
    one_feature: Option<usize>,
    params: &TreeParams,
    candidates: &Candidates,
    buffers: &mut GrowBuffers,
    options: &GrowOptions<'_>,
    tree_noise: Option<TreeNoise>,
) -> GrownTree {
    let ranks = Ranks::of(options.collective);
    let constraints = options.constraints.cloned().unwrap_or_default();
    let mut tree = GrowingTree::new(
        data,
        options.rows,
        buffers.rows.pop().unwrap_or_default(),
        &mut buffers.scratch,
        ranks,
        params.l2_leaf,
        constraints.monotone(),
        row_stats.count_bounds().is_some(),
        one_feature,
    );
    let node_sample = (options.colsample_bynode, options.node_seed);
    let search = SplitSearch::new(
        data,
        row_stats,
        features,
        candidates,
        params.split_params(),
        node_sample,
        tree_noise,
        &constraints,
        one_feature.is_some(),
    );
    let spare = std::mem::take(&mut buffers.histograms);
    let mut histograms = NodeHistograms::new(data, row_stats, features, one_feature, ranks, spare);

    let (hist, total) = histograms.root(tree.rows());
    tree.add_root(total);
    let split = search.find(&hist, None, tree.rows(), total, 0, &NodeLimits::root());
    let mut pending = PendingNodes::new(params.growth);
    pending.push(Pending {
        node: 0,
        start: 0,
        end: tree.rows().len(),
        depth: 0,
        hist: Some(KeptHistogram::Whole(hist, None)),
        split,
        limits: NodeLimits::root(),
    });
    while let Some(mut work) = pending.pop() {
        let range = work.start..work.end;
        let Some(mut split) = work
            .split
            .take()
            .filter(|_| tree.n_leaves() < params.max_leaves)
        else {
            histograms.discard(work.hist.take());
            tree.add_leaf(work.node, range);
            continue;
        };
        let children = tree.split(work.node, range, &work.limits, &mut split);
        let depth = work.depth + 1;
        let searched = children
            .each_ref()
            .map(|child| params.may_split(depth, &child.stats));
        let kept = work.hist.take();
        let hists = histograms.children(kept, &split, &children, searched, tree.rows());
        let splits = search.children(&children, &hists, searched, tree.rows());
        for ((child, hist), split) in children.into_iter().zip(hists).zip(splits) {
            // A node whose children will not be searched (they would be at the depth limit)
            // needs no histogram when it is split.
            let hist = histograms.keep(hist, split.is_some() && depth + 1 < params.max_depth);
            pending.push(Pending {
                node: child.node,
                start: child.start,
                end: child.end,
                depth,
                hist,
                split,
                limits: child.limits,
            });
        }
        // Leaf-wise, the histograms of nodes that will never be split go back to the pool: the
        // waiting histograms are at most as many as the splits left, not as the leaves.
        pending.retire_beyond(params.max_leaves - tree.n_leaves(), |node| {
            histograms.discard(node.hist.take())
        });
    }
    buffers.always_count |= search.recounted_too_often();
    buffers.histograms = histograms.into_spare();
    tree.finish()
}

/// The tree's noise, scaled by the root mean square of `vt` over its `rows` (`None`: all) on
/// every rank. The squares are summed in fixed chunks, in chunk order: the same sum whatever
/// the thread count.
fn tree_noise(
    noise: SplitNoise,
    vt: &[f64],
    rows: Option<&[u32]>,
    ranks: Ranks<'_>,
) -> Option<TreeNoise> {
    const CHUNK: usize = 1 << 14;
    let n = rows.map_or(vt.len(), <[u32]>::len);
    let square = |i: usize| {
        let x = vt[rows.map_or(i, |rows| rows[i] as usize)];
        x * x
    };
    let partials: Vec<f64> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            (c * CHUNK..((c + 1) * CHUNK).min(n))
                .map(square)
                .sum::<f64>()
        })
        .collect();
    let mut sums = [partials.iter().sum::<f64>(), n as f64];
    ranks.sum(&mut sums);
    noise.scaled(sums[0], sums[1])
}

#[cfg(test)]
#[path = "grower_tests.rs"]
mod tests;
