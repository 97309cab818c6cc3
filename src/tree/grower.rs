//! Growing one tree: depth-wise (level by level, as in the papers) or leaf-wise (best gain
//! first, as in LightGBM). Only the smaller child's histogram is built; the larger child's is the
//! parent's minus it.

use super::bins::BinStats;
use super::constraints::Constraints;
use super::goss::Goss;
use super::grown::{
    cover_every_row, leaf_of_bins, sort_rows_into_leaves, BinLeaves, GrownTree, LeafRows,
};
use super::histogram::{Features, Histogram, RowStats};
use super::node_sample::NodeFeatureSampler;
use super::partition::split_rows;
use super::pending::{PendingNodes, Ranked};
use super::regression_tree::{CategorySplit, Node, Tree};
use super::split::{
    best_split_bounded, best_split_within, Candidates, NeedCounts, NodeConstraint, SplitCandidate,
};
use super::support::{
    build_on_support, shrink_support, subtract_on_support, support_of_dense, worth_a_support,
    zero_is_positive, HistogramPool, KeptHistogram,
};
use super::tree_params::TreeParams;
use crate::collective::Collective;
use crate::data::{BinMapper, BinnedData};
use crate::threads;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

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
/// Once a tree grown without bin counts had to count the rows of more than this share of the
/// nodes it searched (the weights' bounds could not decide their splits), the trees after it
/// are grown with counts. Each recount is a counting pass over the node's rows, a copy of its
/// histogram and a second search, against the few percent that leaving counts out saves: on
/// 1M × 28 (logistic, 100 trees) 5–15% of the nodes needed counts and trees without them were
/// 2–3% faster; softmax on letter (26 classes, where most rows of a class have a Hessian near
/// 0) 60–95%, and the fit took 1.5× the time of one with counts. A boosting fit's weights
/// spread out as it goes (probabilities move towards 0 and 1), so the switch is not undone.
const MAX_RECOUNTED_SHARE: f64 = 0.25;
/// Below this many bins per histogram, the two children of a split are searched on one thread
/// unless the workers are kept awake (`threads::with_awake_workers`): a search then takes a few
/// microseconds, about what waking a sleeping worker costs (on 5,000 × 50 rows two threads were
/// slower than one with every pair searched side by side).
const PARALLEL_SEARCH_MIN_BINS: usize = 16_384;

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

/// The row lists of a fit (4 bytes per row each) and its histograms, which a caller fitting many
/// trees keeps between fits: allocating them afresh for every tree makes the allocator hold on
/// to freed blocks (in the arena of each worker thread that freed some), which costs more memory
/// than the buffers themselves.
#[derive(Debug, Default)]
pub struct GrowBuffers {
    /// Row lists of finished trees, for the next fits.
    rows: Vec<Vec<u32>>,
    scratch: Vec<u32>,
    /// Histograms of finished trees (any contents), for the next fits.
    histograms: Vec<Histogram>,
    /// Whether trees are grown with bin counts whatever their weights (see
    /// `MAX_RECOUNTED_SHARE`). The trees are the same either way; only their cost differs.
    always_count: bool,
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
    /// The ranks of a data-parallel fit, each growing the tree on its own rows (`None`: this
    /// process holds every row). Histograms are summed over them (tree/ranks.rs).
    pub collective: Option<&'a dyn Collective>,
    /// Grow on quantized statistics, rounded with draws from this seed (quantize.rs); `None`:
    /// exact statistics. Data-parallel fits stay exact.
    pub quantize_seed: Option<u64>,
    /// Grow on a GOSS draw of `rows` (goss.rs); each rank of a data-parallel fit draws from its
    /// own rows.
    pub goss: Option<Goss>,
}

impl<'a> GrowOptions<'a> {
    /// The ranks to sum histograms over, when there is more than one.
    fn shared(&self) -> Option<&'a dyn Collective> {
        self.collective.filter(|c| c.world() > 1)
    }
}

impl Default for GrowOptions<'_> {
    fn default() -> Self {
        GrowOptions {
            rows: None,
            colsample_bynode: 1.0,
            node_seed: 0,
            constraints: None,
            collective: None,
            quantize_seed: None,
            goss: None,
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
    if let Some(draw) = (options.goss).and_then(|goss| goss.draw(stats.vt, stats.v, options.rows)) {
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
    let shared = options.shared();
    // Across ranks, rows are partitioned at every split (a rank's row ranges follow its own
    // counts) and counts come with the summed histograms.
    let one_feature = match allowed.as_deref() {
        _ if shared.is_some() => None,
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
    let row_stats = if all_complete_numeric
        && one_feature.is_none()
        && many_rows_per_bin
        && shared.is_none()
        && !buffers.always_count
    {
        row_stats.without_counts(params.max_depth.min(params.max_leaves))
    } else {
        row_stats
    };
    let quantization = (options.quantize_seed)
        .filter(|_| shared.is_none())
        .and_then(|seed| {
            let depth = params.max_depth.min(params.max_leaves);
            row_stats.quantized(options.rows, seed, depth)
        });
    let row_stats = (quantization.as_ref()).map_or(row_stats, |q| RowStats::Quantized(q.stats()));
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
    let node_sampler = NodeFeatureSampler::new(
        data,
        candidates,
        (options.colsample_bynode, options.node_seed),
    );
    let constraints = options.constraints.cloned().unwrap_or_default();
    let monotone = constraints.monotone();
    // Nodes searched without counts, and those of them that needed counts.
    let (bounded_searches, recounts) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let find_split = |hist: &Histogram,
                      support: Option<&[u32]>,
                      node_rows: &[u32],
                      stats: BinStats,
                      node: usize,
                      limits: &NodeLimits| {
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
        // Counting keeps the support: a node's rows reach only bins of its support.
        let exact = |hist: &Histogram| {
            best_split_within(
                hist,
                support,
                data,
                stats,
                &split_params,
                candidates,
                constraint,
            )
        };
        match row_stats.count_bounds() {
            None => exact(hist),
            Some(bounds) => {
                bounded_searches.fetch_add(1, Relaxed);
                best_split_bounded(
                    hist,
                    support,
                    data,
                    stats,
                    &split_params,
                    candidates,
                    bounds,
                    constraint,
                )
                .unwrap_or_else(|NeedCounts| {
                    recounts.fetch_add(1, Relaxed);
                    exact(&hist.with_counts(data, node_rows, features))
                })
            }
        }
    };
    let mut categories = Vec::new();
    // Histograms of finished nodes and trees are reused (build_into overwrites every bin that
    // is read).
    let mut pool = HistogramPool::new(data.total_bins(), std::mem::take(&mut buffers.histograms));
    let scratch = &mut buffers.scratch;
    scratch.resize(n, 0);
    let shared = options.shared();
    // Small nodes' histograms with a support (tree/support.rs): not across ranks (the sums
    // come from every rank), nor on one feature (no histograms built), nor where a pass reads
    // bundled columns.
    let supports = shared.is_none()
        && one_feature.is_none()
        && zero_is_positive(row_stats)
        && !(features == Features::All && data.bundles().is_some());
    let n_built = match features {
        Features::All => data.n_features(),
        Features::Only(list) => list.len(),
    };
    let built_bins: usize = features.ranges(data).iter().map(|&(_, len)| len).sum();
    let worth_it = |rows: usize| supports && worth_a_support(rows, n_built, built_bins);
    let mut hist = pool.any();
    hist.build_into(data, &rows, row_stats, features);
    if let Some(collective) = shared {
        hist.sum_over_ranks(data, features, collective);
    }
    // A tree on one feature, and a tree over ranks, finds its totals in the root's bins (every
    // row is in one bin of each feature); others sum them over the rows.
    let totals_feature = one_feature.or(shared.map(|_| match features {
        Features::All => 0,
        Features::Only(list) => list[0],
    }));
    let total = match totals_feature {
        Some(feature) => {
            (hist.feature(data, feature).iter()).fold(BinStats::default(), |a, &b| a + b)
        }
        None => row_stats.totals(&rows),
    };
    let mut nodes = vec![leaf_node(total, params.l2_leaf)];
    let split = find_split(&hist, None, &rows, total, 0, &NodeLimits::root());
    let mut pending = PendingNodes::new(params.growth);
    pending.push(Pending {
        node: 0,
        start: 0,
        end: n_fit,
        depth: 0,
        hist: Some(KeptHistogram::Whole(hist, None)),
        split,
        limits: NodeLimits::root(),
    });
    let mut leaves = Vec::new();
    let mut n_leaves = 1;
    // On one feature: the node that holds the rows of each of its bins.
    let mut node_of_bin = one_feature.map(|f| vec![0u32; data.mappers()[f].n_bins()]);

    while let Some(mut work) = pending.pop() {
        let Some(mut split) = work.split.take().filter(|_| n_leaves < params.max_leaves) else {
            if let Some(kept) = work.hist.take() {
                pool.discard(kept);
            }
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
        debug_assert!(shared.is_some() || n_left == split.left.count as usize);
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
        // Each child's histogram, and its support.
        let ((left_hist, left_support), (right_hist, right_support)) = if splittable(&split.left)
            || splittable(&split.right)
        {
            let kept = (work.hist.take()).expect("a node with a split has a histogram");
            let (mut parent, parent_support) = pool.restore(kept);
            if let Some(feature) = one_feature {
                let mut left = pool.any();
                parent.move_bins(&mut left, data, feature, &split.left_bins);
                ((Some(left), None), (Some(parent), None))
            } else {
                // Across ranks, the side to build is chosen from the summed counts, the same on
                // every rank.
                let left_is_smaller = match shared {
                    Some(_) => split.left.count <= split.right.count,
                    None => n_left <= work.end - mid,
                };
                let (small_rows, large_rows) = if left_is_smaller {
                    (&rows[work.start..mid], &rows[mid..work.end])
                } else {
                    (&rows[mid..work.end], &rows[work.start..mid])
                };
                let (small, small_support) = if worth_it(small_rows.len()) {
                    let mut small = pool.zeroed();
                    let mut support = pool.support_list();
                    build_on_support(
                        &mut small,
                        &mut support,
                        &mut pool.scratch,
                        data,
                        small_rows,
                        row_stats,
                        features,
                    );
                    subtract_on_support(&mut parent, &small, &support);
                    (small, Some(support))
                } else {
                    let mut small = pool.any();
                    small.build_into(data, small_rows, row_stats, features);
                    if let Some(collective) = shared {
                        small.sum_over_ranks(data, features, collective);
                    }
                    parent.subtract_features(&small, data, features);
                    (small, None)
                };
                // The larger child inherits the parent's support; a dense one gets its own once
                // small enough (one pass over the bins, which spares its descendants theirs).
                // Bins with counts show where the rows are.
                let uncounted_rows = row_stats.count_bounds().map(|_| large_rows);
                let large_support = match parent_support {
                    Some(mut support) => {
                        shrink_support(
                            &parent,
                            &mut support,
                            &mut pool.scratch,
                            data,
                            uncounted_rows,
                            features,
                        );
                        Some(support)
                    }
                    None if worth_it(large_rows.len()) => {
                        let mut support = pool.support_list();
                        support_of_dense(
                            &parent,
                            &mut support,
                            &mut pool.scratch,
                            data,
                            uncounted_rows,
                            features,
                        );
                        Some(support)
                    }
                    None => None,
                };
                let (small, large) = ((Some(small), small_support), (Some(parent), large_support));
                if left_is_smaller {
                    (small, large)
                } else {
                    (large, small)
                }
            }
        } else {
            if let Some(kept) = work.hist.take() {
                pool.discard(kept);
            }
            ((None, None), (None, None))
        };
        // The two searches are independent: run them side by side. On one feature the rows are
        // not sorted by node yet; its histograms have counts, so the search never reads them.
        let search = |(hist, support): (&Option<Histogram>, &Option<Vec<u32>>),
                      (start, end): (usize, usize),
                      stats: BinStats,
                      node: usize,
                      limits: &NodeLimits| {
            hist.as_ref().filter(|_| splittable(&stats)).and_then(|h| {
                let support = support.as_deref();
                find_split(h, support, &rows[start..end], stats, node, limits)
            })
        };
        let search_left = || {
            search(
                (&left_hist, &left_support),
                (work.start, mid),
                split.left,
                left_id,
                &left_limits,
            )
        };
        let search_right = || {
            search(
                (&right_hist, &right_support),
                (mid, work.end),
                split.right,
                right_id,
                &right_limits,
            )
        };
        // One feature's bins, few bins, or two small supports: less work than waking another
        // thread, unless the workers are kept awake.
        let worth_a_thread = threads::workers_awake()
            || (built_bins >= PARALLEL_SEARCH_MIN_BINS
                && !(left_support.is_some() && right_support.is_some()));
        let (left_split, right_split) = if one_feature.is_none() && worth_a_thread {
            rayon::join(search_left, search_right)
        } else {
            (search_left(), search_right())
        };
        for (id, start, end, (hist, support), split, limits) in [
            (
                left_id,
                work.start,
                mid,
                (left_hist, left_support),
                left_split,
                left_limits,
            ),
            (
                right_id,
                mid,
                work.end,
                (right_hist, right_support),
                right_split,
                right_limits,
            ),
        ] {
            // A node whose children will not be searched (they would be at the depth limit)
            // needs no histogram when it is split: its bins go back to the pool at once.
            let hist = match (split.as_ref(), hist) {
                (Some(_), Some(hist)) if depth + 1 < params.max_depth => {
                    Some(pool.keep(hist, support))
                }
                (_, Some(hist)) => {
                    pool.release(hist, support);
                    None
                }
                (_, None) => None,
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
        // Leaf-wise, the histograms of nodes that will never be split go back to the pool: the
        // waiting histograms are at most as many as the splits left, not as the leaves.
        pending.retire_beyond(params.max_leaves - n_leaves, |node| {
            if let Some(kept) = node.hist.take() {
                pool.discard(kept);
            }
        });
    }
    let searched = bounded_searches.into_inner();
    if searched > 0 && recounts.into_inner() as f64 > MAX_RECOUNTED_SHARE * searched as f64 {
        buffers.always_count = true;
    }
    buffers.histograms = pool.into_spare();
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
        cover_every_row(
            data,
            &tree,
            &mut leaves,
            &mut rows,
            bin_leaves.as_ref(),
            scratch,
        );
    }
    GrownTree {
        tree,
        leaves,
        rows,
        bin_leaves,
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
#[path = "grower_tests.rs"]
mod tests;
