//! Best split of one node from its histogram. Numeric features split on "bin ≤ t"; categorical
//! features on a subset of levels, found by ordering levels by their mean target and scanning
//! prefixes (exact for least squares, as in LightGBM). Missing values (bin 0) are tried on both
//! sides and the better side becomes the default direction.

use super::bins::{BinSet, BinStats, CountBounds};
use super::candidates::Candidates;
use super::categorical::CategoricalParams;
use super::histogram::Histogram;
use super::scan::{
    decrease, scan_all_prefixes, scan_prefixes, score, NodeConstraint, Scan, SplitParams, BATCH,
};
use crate::data::BinnedData;
use crate::threads;
use std::cell::Cell;
use std::ops::Range;

#[derive(Debug, Clone, PartialEq)]
pub struct SplitCandidate {
    pub feature: usize,
    pub gain: f64,
    /// Numeric splits: bins 1..=threshold go left. `None` for categorical splits.
    pub threshold: Option<u8>,
    /// Every bin that goes left, the missing bin 0 included when missing values go left.
    pub left_bins: BinSet,
    pub left: BinStats,
    pub right: BinStats,
}

impl SplitCandidate {
    pub fn default_left(&self) -> bool {
        self.left_bins.contains(0)
    }
}

/// A split search needs the bin counts of this node: the bounds could not decide whether a
/// candidate that might win has enough rows on each side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NeedCounts;

/// Best admissible split of a node, or `None`. Ties go to the lower feature, then the lower
/// threshold, so the result never depends on evaluation order. Only the bins of features that
/// `candidates` allows are read: the grower builds no others.
pub fn best_split(
    hist: &Histogram,
    data: &BinnedData,
    total: BinStats,
    params: &SplitParams,
    candidates: &Candidates,
) -> Option<SplitCandidate> {
    best_split_constrained(hist, data, total, params, candidates, None)
}

/// `best_split` among the splits whose children's values, clamped to the node's interval,
/// respect the monotone direction of the split feature (`constraint`; `None`: unconstrained).
pub fn best_split_constrained(
    hist: &Histogram,
    data: &BinnedData,
    total: BinStats,
    params: &SplitParams,
    candidates: &Candidates,
    constraint: Option<&NodeConstraint<'_>>,
) -> Option<SplitCandidate> {
    best_split_within(hist, None, data, total, params, candidates, constraint)
}

/// `best_split_constrained` on a histogram whose bins are zero (+0.0 sums, count 0) outside
/// `support` (ascending bin indices; `None`: anywhere): the same split, in time proportional to
/// the support rather than to all bins.
pub(crate) fn best_split_within(
    hist: &Histogram,
    support: Option<&[u32]>,
    data: &BinnedData,
    total: BinStats,
    params: &SplitParams,
    candidates: &Candidates,
    constraint: Option<&NodeConstraint<'_>>,
) -> Option<SplitCandidate> {
    search(
        hist, support, data, total, params, candidates, None, constraint,
    )
    .expect("exact counts decide every split")
}

/// `best_split` on a histogram without bin counts, from `bounds` (see `CountBounds`), for
/// numeric features whose missing bin is empty. The answer is `best_split`'s whenever it is
/// `Ok`: the best candidate the bounds admit is the best admissible one when every candidate
/// they leave undecided has a lower gain. Otherwise `NeedCounts`. The winner's default direction
/// for missing values is left to the caller: the larger child, once the counts are known.
pub(crate) fn best_split_bounded(
    hist: &Histogram,
    support: Option<&[u32]>,
    data: &BinnedData,
    total: BinStats,
    params: &SplitParams,
    candidates: &Candidates,
    bounds: &CountBounds,
    constraint: Option<&NodeConstraint<'_>>,
) -> Result<Option<SplitCandidate>, NeedCounts> {
    search(
        hist,
        support,
        data,
        total,
        params,
        candidates,
        Some(bounds),
        constraint,
    )
}

fn search(
    hist: &Histogram,
    support: Option<&[u32]>,
    data: &BinnedData,
    total: BinStats,
    params: &SplitParams,
    candidates: &Candidates,
    bounds: Option<&CountBounds>,
    constraint: Option<&NodeConstraint<'_>>,
) -> Result<Option<SplitCandidate>, NeedCounts> {
    let parent_score = match constraint {
        None => score(&total, params.l2_leaf),
        Some(c) => decrease(&total, params.l2_leaf, c.value(&total, params.l2_leaf)),
    };
    let node = NodeSearch {
        hist,
        support,
        data,
        candidates,
        params,
        total,
        parent_score,
        constraint,
        bounds,
    };
    let (mut best, undecided) = node.best_within(0..data.n_features());
    if params.noise.is_some() {
        // The scans ranked the candidates by their noisy scores: the winner reports its gain.
        if let Some(split) = &mut best {
            split.gain = node.gain_of(split);
        }
    }
    if undecided > f64::NEG_INFINITY && best.as_ref().is_none_or(|b| undecided >= b.gain) {
        return Err(NeedCounts);
    }
    Ok(best)
}

/// Bins (or support entries) of a node's search below which its features are not shared out
/// among awake workers: a search reads about one bin a nanosecond, and handing work to a
/// spinning worker and collecting it costs about a microsecond.
const MIN_SHARED_SEARCH_BINS: usize = 1_024;

/// One node's split search, over any range of its features.
struct NodeSearch<'a> {
    hist: &'a Histogram,
    support: Option<&'a [u32]>,
    data: &'a BinnedData,
    candidates: &'a Candidates,
    params: &'a SplitParams,
    total: BinStats,
    parent_score: f64,
    constraint: Option<&'a NodeConstraint<'a>>,
    bounds: Option<&'a CountBounds>,
}

impl NodeSearch<'_> {
    /// The best split on `features` and the largest gain the count bounds left undecided there
    /// (−∞: none). Where workers are awake (`threads::workers_awake`), halves of a large range
    /// are searched side by side; the lower half's split wins ties, as in one pass in feature
    /// order, so the answer is the same.
    fn best_within(&self, features: Range<usize>) -> (Option<SplitCandidate>, f64) {
        if threads::workers_awake() && features.len() > 1 {
            let offsets = self.data.offsets();
            let (first, end) = (offsets[features.start], offsets[features.end]);
            let work = (self.support).map_or(end - first, |support| {
                bins_between(support, first, end).len()
            });
            if work >= 2 * MIN_SHARED_SEARCH_BINS {
                let half_bins = first + (end - first) / 2;
                let mid = offsets.partition_point(|&o| o <= half_bins) - 1;
                let mid = mid.clamp(features.start + 1, features.end - 1);
                let ((low, low_undecided), (high, high_undecided)) = rayon::join(
                    || self.best_within(features.start..mid),
                    || self.best_within(mid..features.end),
                );
                let best = match (low, high) {
                    (Some(low), Some(high)) if high.gain > low.gain => Some(high),
                    (low, high) => low.or(high),
                };
                return (best, low_undecided.max(high_undecided));
            }
        }
        let scan = Scan {
            params: self.params,
            total: self.total,
            parent_score: self.parent_score,
            constraint: self.constraint,
            bounds: self.bounds,
            undecided: Cell::new(f64::NEG_INFINITY),
        };
        let mut best: Option<SplitCandidate> = None;
        for feature in features {
            if !self.candidates.allows_feature(feature) {
                continue;
            }
            let bins = self.hist.feature(self.data, feature);
            let found = if self.data.is_categorical(feature) {
                best_categorical(&scan, bins, feature, self.candidates)
            } else {
                // The support's bins of this feature, relative to its first bin.
                let start = self.data.offsets()[feature];
                let nonzero = (self.support)
                    .map(|support| (start, bins_between(support, start, start + bins.len())));
                best_numeric(&scan, bins, feature, self.candidates, nonzero)
            };
            if let Some(found) = found {
                if best.as_ref().is_none_or(|b| found.gain > b.gain) {
                    best = Some(found);
                }
            }
        }
        (best, scan.undecided.get())
    }

    /// The gain of the candidate `split` (the same operations as the scans').
    fn gain_of(&self, split: &SplitCandidate) -> f64 {
        let scan = Scan {
            params: self.params,
            total: self.total,
            parent_score: self.parent_score,
            constraint: self.constraint,
            bounds: self.bounds,
            undecided: Cell::new(f64::NEG_INFINITY),
        };
        let direction = match split.threshold {
            None => 0,
            Some(_) => self.constraint.map_or(0, |c| c.direction(split.feature)),
        };
        (scan.gain(split.left, direction)).expect("the winner is admissible")
    }
}

/// The bins of the ascending `support` in `from..to`.
fn bins_between(support: &[u32], from: usize, to: usize) -> &[u32] {
    let first = support.partition_point(|&b| (b as usize) < from);
    let end = support.partition_point(|&b| (b as usize) < to);
    &support[first..end]
}

/// `nonzero`: the bins (at `start` + the bin) outside of which `bins` are zero, if known.
fn best_numeric(
    scan: &Scan,
    bins: &[BinStats],
    feature: usize,
    candidates: &Candidates,
    nonzero: Option<(usize, &[u32])>,
) -> Option<SplitCandidate> {
    let direction = scan.constraint.map_or(0, |c| c.direction(feature));
    let (split, t) = best_prefix(scan, bins, feature, candidates, direction, nonzero)?;
    Some(SplitCandidate {
        threshold: Some(t as u8),
        ..split
    })
}

/// The categories (bins 1..) with rows enough (`min_data_per_group`), in increasing order of
/// their mean target smoothed towards the mean of `total` with weight `cat_smooth` (ties: the
/// lower bin first), as LightGBM orders them for its prefix search.
pub(super) fn categories_by_smoothed_mean(
    bins: &[BinStats],
    total: BinStats,
    p: &CategoricalParams,
) -> Vec<u8> {
    let mean = if total.sum_v > 0.0 {
        total.sum_vt / total.sum_v
    } else {
        0.0
    };
    let placed = |s: &BinStats| {
        let denominator = s.sum_v + p.cat_smooth;
        if denominator > 0.0 {
            (s.sum_vt + p.cat_smooth * mean) / denominator
        } else {
            0.0
        }
    };
    let mut order: Vec<u8> = (1..bins.len())
        .filter(|&b| bins[b].count > 0 && bins[b].count as usize >= p.min_data_per_group.max(1))
        .map(|b| b as u8)
        .collect();
    order.sort_by(|&a, &b| {
        placed(&bins[a as usize])
            .total_cmp(&placed(&bins[b as usize]))
            .then(a.cmp(&b))
    });
    order
}

/// The best split of a categorical feature from its bins (bin 0: missing values).
fn best_categorical(
    scan: &Scan,
    bins: &[BinStats],
    feature: usize,
    candidates: &Candidates,
) -> Option<SplitCandidate> {
    let p = scan.params.categorical;
    let total = scan.total;
    let order = categories_by_smoothed_mean(bins, total, &p);
    let missing = bins[0];
    let n = order.len();
    // Rows of levels too rare to be ordered: they stay right.
    let ordered: u64 = order.iter().map(|&b| bins[b as usize].count as u64).sum();
    let rare = total.count as u64 > ordered + missing.count as u64;
    let mut best: Option<(f64, usize, bool)> = None;
    let mut prefix = BinStats::default();
    for k in 1..=n {
        prefix += bins[order[k - 1] as usize];
        if k.min(n - k) > p.max_cat_threshold || !candidates.allows(feature, k) {
            continue;
        }
        let mut consider = |left: BinStats, missing_left: bool| {
            if let Some(gain) = scan.gain(left, 0) {
                let score = scan.ranked(gain, feature, k, missing_left);
                if best.is_none_or(|(s, _, _)| score > s) {
                    best = Some((score, k, missing_left));
                }
            }
        };
        if missing.count == 0 {
            // No missing values here: send future missing values to the larger child.
            let right_count = total.count - prefix.count;
            consider(prefix, prefix.count >= right_count);
        } else {
            consider(prefix, false);
            if k < n || rare {
                consider(prefix + missing, true);
            }
        }
    }
    let (gain, k, missing_left) = best?;
    Some(prefix_split(
        feature,
        gain,
        bins,
        &order[..k],
        missing_left,
        total,
    ))
}

/// The split (without a numeric threshold) sending the bins `left_order` left, and the missing
/// bin 0 too when `missing_left`.
fn prefix_split(
    feature: usize,
    gain: f64,
    bins: &[BinStats],
    left_order: &[u8],
    missing_left: bool,
    total: BinStats,
) -> SplitCandidate {
    let mut left_bins = BinSet::default();
    let mut left = BinStats::default();
    for &b in left_order {
        left_bins.insert(b);
        left += bins[b as usize];
    }
    if missing_left {
        left_bins.insert(0);
        left += bins[0];
    }
    SplitCandidate {
        feature,
        gain,
        threshold: None,
        left_bins,
        left,
        right: total - left,
    }
}

/// The best split sending the bins 1..=k left (numeric threshold k), with the missing bin 0 on
/// either side. Returns the split (without a numeric threshold) and k. With `nonzero`, the bins
/// outside of which `bins` are zero, at `start` + the bin.
fn best_prefix(
    scan: &Scan,
    bins: &[BinStats],
    feature: usize,
    candidates: &Candidates,
    direction: i8,
    nonzero: Option<(usize, &[u32])>,
) -> Option<(SplitCandidate, usize)> {
    // Where any threshold is as allowed as the one before, an empty bin repeats the previous
    // candidates exactly (same sums), and a repeat never wins: ties go to the lower threshold.
    // Small nodes leave most of 255 bins empty.
    let repeats_skippable = !matches!(candidates, Candidates::Splits(_));
    let last = bins.len() - 1;
    let best = match nonzero.filter(|_| repeats_skippable) {
        // The thresholds the full scan does not skip: the first, the last and those of the bins
        // that may be non-zero (the others are zero, skipped as repeats).
        Some((start, nonzero)) => {
            let inner = (nonzero.iter())
                .map(|&b| b as usize - start)
                .filter(|&k| 1 < k && k < last);
            let first = (last >= 1).then_some(1);
            let thresholds = first
                .into_iter()
                .chain(inner)
                .chain((last > 1).then_some(last));
            scan_prefixes(
                scan,
                bins,
                feature,
                candidates,
                direction,
                repeats_skippable,
                thresholds,
            )
        }
        // The batch scan considers the empty bins' repeats too, which noise would tell apart.
        None if repeats_skippable
            && scan.bounds.is_none()
            && scan.constraint.is_none()
            && scan.params.noise.is_none()
            && last >= BATCH / 2 =>
        {
            scan_all_prefixes(scan, bins)
        }
        None => scan_prefixes(
            scan,
            bins,
            feature,
            candidates,
            direction,
            repeats_skippable,
            1..last + 1,
        ),
    };
    let (gain, k, missing_left, prefix) = best?;
    // `prefix_split`'s sums without its pass over the bins: the bins the scan skipped are zero,
    // and adding a zero to a sum that starts at +0.0 changes no bit.
    let mut left_bins = BinSet::range(1, k + 1);
    let left = if missing_left {
        left_bins.insert(0);
        prefix + bins[0]
    } else {
        prefix
    };
    let split = SplitCandidate {
        feature,
        gain,
        threshold: None,
        left_bins,
        left,
        right: scan.total - left,
    };
    Some((split, k))
}
