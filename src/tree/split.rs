//! Best split of one node from its histogram. Numeric features split on "bin ≤ t"; categorical
//! features on a subset of levels, found by ordering levels by their mean target and scanning
//! prefixes (exact for least squares, as in LightGBM). Missing values (bin 0) are tried on both
//! sides and the better side becomes the default direction.

use super::bins::{BinSet, BinStats, CountBounds};
use super::categorical::CategoricalParams;
use super::histogram::Histogram;
use crate::data::BinnedData;
use crate::threads;
use std::cell::Cell;
use std::ops::Range;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SplitParams {
    pub l2_leaf: f64,
    pub min_samples_leaf: usize,
    pub min_weight_leaf: f64,
    pub min_split_gain: f64,
    pub categorical: CategoricalParams,
}

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

#[inline]
fn score(s: &BinStats, l2: f64) -> f64 {
    s.sum_vt * s.sum_vt / (s.sum_v + l2)
}

/// The monotone constraints at one node: every feature's direction (+1 increasing, −1
/// decreasing, 0 free; empty: none) and the interval [lower, upper] the node's values must lie
/// in, inherited from the splits above it (bounds propagation, as in XGBoost and LightGBM).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeConstraint<'a> {
    pub monotone: &'a [i8],
    pub lower: f64,
    pub upper: f64,
}

impl NodeConstraint<'_> {
    /// The leaf value v = Σvt / (Σv + λ) of a side, clamped to the node's interval.
    #[inline]
    pub fn value(&self, s: &BinStats, l2: f64) -> f64 {
        let denominator = s.sum_v + l2;
        let v = if denominator > 0.0 {
            s.sum_vt / denominator
        } else {
            0.0
        };
        v.clamp(self.lower, self.upper)
    }

    fn direction(&self, feature: usize) -> i8 {
        self.monotone.get(feature).copied().unwrap_or(0)
    }
}

/// The decrease of the least-squares objective Σ v (t − c)² + λc² from c = 0 to c = `value`:
/// 2 Σvt·c − (Σv + λ) c², which is `score` at the unconstrained optimum c = Σvt / (Σv + λ).
#[inline]
fn decrease(s: &BinStats, l2: f64, value: f64) -> f64 {
    2.0 * s.sum_vt * value - (s.sum_v + l2) * value * value
}

/// A split search needs the bin counts of this node: the bounds could not decide whether a
/// candidate that might win has enough rows on each side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NeedCounts;

struct Scan<'a> {
    params: &'a SplitParams,
    total: BinStats,
    parent_score: f64,
    /// `None`: no monotone constraint and no bounds, the plain least-squares gains.
    constraint: Option<&'a NodeConstraint<'a>>,
    /// `None`: bins hold exact counts.
    bounds: Option<&'a CountBounds>,
    /// The largest gain of a candidate the count bounds could not decide.
    undecided: Cell<f64>,
}

impl Scan<'_> {
    /// Gain of sending `left` left and the rest right, if both children are admissible; the
    /// split is on a feature of monotone direction `direction` (0: free).
    #[inline]
    fn gain(&self, left: BinStats, direction: i8) -> Option<f64> {
        let right = self.total - left;
        let p = self.params;
        // The row minimum first: it rejects most candidates of small nodes, and costs no
        // division, where the gain costs two.
        let m = p.min_samples_leaf.max(1);
        let enough_rows = match self.bounds {
            None => Some(left.count as usize >= m && right.count as usize >= m),
            Some(bounds) => match (
                bounds.at_least(left.sum_v, m),
                bounds.at_least(right.sum_v, m),
            ) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            },
        };
        if enough_rows == Some(false) {
            return None;
        }
        let admissible = left.sum_v >= p.min_weight_leaf
            && right.sum_v >= p.min_weight_leaf
            && left.sum_v + p.l2_leaf > 0.0
            && right.sum_v + p.l2_leaf > 0.0;
        if !admissible {
            return None;
        }
        let gain = match self.constraint {
            None => score(&left, p.l2_leaf) + score(&right, p.l2_leaf) - self.parent_score,
            Some(c) => {
                // The children's values clamped to the node's interval, which must respect the
                // feature's direction; the gain is the objective's decrease at those values.
                let (left_value, right_value) =
                    (c.value(&left, p.l2_leaf), c.value(&right, p.l2_leaf));
                if f64::from(direction) * (right_value - left_value) < 0.0 {
                    return None;
                }
                decrease(&left, p.l2_leaf, left_value) + decrease(&right, p.l2_leaf, right_value)
                    - self.parent_score
            }
        };
        if !(gain > p.min_split_gain && gain > 0.0) {
            return None;
        }
        if enough_rows.is_none() {
            self.undecided.set(self.undecided.get().max(gain));
            return None;
        }
        Some(gain)
    }
}

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
    let (best, undecided) = node.best_within(0..data.n_features());
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

/// The best split of a categorical feature from its bins (bin 0: missing values).
fn best_categorical(
    scan: &Scan,
    bins: &[BinStats],
    feature: usize,
    candidates: &Candidates,
) -> Option<SplitCandidate> {
    let p = scan.params.categorical;
    let total = scan.total;
    let node_mean = if total.sum_v > 0.0 {
        total.sum_vt / total.sum_v
    } else {
        0.0
    };
    let placed = |s: &BinStats| {
        let denominator = s.sum_v + p.cat_smooth;
        if denominator > 0.0 {
            (s.sum_vt + p.cat_smooth * node_mean) / denominator
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
                if best.is_none_or(|(g, _, _)| gain > g) {
                    best = Some((gain, k, missing_left));
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
        None if repeats_skippable
            && scan.bounds.is_none()
            && scan.constraint.is_none()
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

/// Thresholds per batch of `scan_all_prefixes`. Features of fewer than half a batch of
/// thresholds (binary and one-hot columns) keep the branchy scan: clearing the batch's buffers
/// would cost more than the divisions it overlaps.
const BATCH: usize = 32;

/// The prefix sums of a batch of thresholds, a lane per threshold: each statistic in its own
/// array, so that the gains of a batch are computed a full SIMD register at a time.
struct Lefts {
    sum_vt: [f64; BATCH],
    sum_v: [f64; BATCH],
    count: [u32; BATCH],
}

impl Lefts {
    fn stats(&self, lane: usize) -> BinStats {
        BinStats {
            sum_vt: self.sum_vt[lane],
            sum_v: self.sum_v[lane],
            count: self.count[lane],
        }
    }
}

/// `scan_prefixes` over every threshold k = 1..=last when counts are exact, no monotone
/// constraint applies and every threshold is allowed: the dense scan of large nodes. The gains of
/// a batch of thresholds are computed first, without branches, so that their divisions overlap
/// (the branchy scan waited on each); the batch's largest gain is then compared with the best so
/// far, and only a batch that beats it is searched for the first threshold reaching it. The same
/// gains bit for bit (the same operations on the same sums: empty bins add exact zeros) and the
/// same winner, the first of the largest. A threshold the scan skips has no admissible gain here
/// either.
fn scan_all_prefixes(scan: &Scan, bins: &[BinStats]) -> Option<(f64, usize, bool, BinStats)> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe { scan_all_prefixes_avx2(scan, bins) };
    }
    scan_all_prefixes_in_lanes(scan, bins)
}

/// `scan_all_prefixes_in_lanes` compiled for AVX2: four gains a register instead of two (the same
/// IEEE operations lane by lane, so the same gains).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn scan_all_prefixes_avx2(scan: &Scan, bins: &[BinStats]) -> Option<(f64, usize, bool, BinStats)> {
    scan_all_prefixes_in_lanes(scan, bins)
}

#[inline(always)]
fn scan_all_prefixes_in_lanes(
    scan: &Scan,
    bins: &[BinStats],
) -> Option<(f64, usize, bool, BinStats)> {
    let last = bins.len() - 1;
    let missing = bins[0];
    let mut best: Option<(f64, usize, bool, BinStats)> = None;
    let mut best_gain = f64::NEG_INFINITY;
    let mut prefix = BinStats::default();
    let mut lefts = Lefts {
        sum_vt: [0.0; BATCH],
        sum_v: [0.0; BATCH],
        count: [0; BATCH],
    };
    let (mut plain, mut with_missing) = ([0.0; BATCH], [0.0; BATCH]);
    let mut first = 1;
    while first <= last {
        let n = BATCH.min(last + 1 - first);
        for (lane, bin) in bins[first..first + n].iter().enumerate() {
            prefix += *bin;
            lefts.sum_vt[lane] = prefix.sum_vt;
            lefts.sum_v[lane] = prefix.sum_v;
            lefts.count[lane] = prefix.count;
        }
        // Lanes past `n` hold the previous batch's sums (or zeros): computed, never read.
        batch_gains(scan, &lefts, BinStats::default(), &mut plain);
        if missing.count > 0 {
            batch_gains(scan, &lefts, missing, &mut with_missing);
        }
        // Lanes past `n` (a last, short batch) are no thresholds; the last threshold offers only
        // the split against the missing rows (`threshold_splits`).
        plain[n..].fill(f64::NEG_INFINITY);
        with_missing[n..].fill(f64::NEG_INFINITY);
        if first + n - 1 == last {
            let split_at_last = if missing.count > 0 {
                &mut with_missing
            } else {
                &mut plain
            };
            split_at_last[n - 1] = f64::NEG_INFINITY;
        }
        let mut batch_best = largest(&plain);
        if missing.count > 0 {
            batch_best = batch_best.max(largest(&with_missing));
        }
        if batch_best > best_gain {
            // The first split reaching it in the scan's order: a threshold's split without the
            // missing rows, then with them.
            let first_reaching = (0..n).find_map(|lane| {
                if plain[lane] == batch_best {
                    Some((lane, false))
                } else if missing.count > 0 && with_missing[lane] == batch_best {
                    Some((lane, true))
                } else {
                    None
                }
            });
            let (lane, with_missing_rows) = first_reaching.expect("a lane holds the largest");
            let k = first + lane;
            let (_, missing_left) =
                threshold_splits(k, last, missing.count, lefts.count[lane], scan.total.count)
                    .find(|&(with_missing, _)| with_missing == with_missing_rows)
                    .expect("the lane's gain is a split its threshold offers");
            best = Some((batch_best, k, missing_left, lefts.stats(lane)));
            best_gain = batch_best;
        }
        first += n;
    }
    best
}

/// The largest of `gains`, none of which is NaN: four running maxima, one SIMD register.
#[inline(always)]
fn largest(gains: &[f64; BATCH]) -> f64 {
    let mut maxima = [f64::NEG_INFINITY; 4];
    for chunk in gains.chunks_exact(4) {
        for (m, &g) in maxima.iter_mut().zip(chunk) {
            *m = if g > *m { g } else { *m };
        }
    }
    maxima
        .into_iter()
        .fold(f64::NEG_INFINITY, |m, g| if g > m { g } else { m })
}

/// `Scan::gain` (exact counts, no constraint) of sending each lane of `lefts` plus `missing` (all
/// zero: none) left, or −∞ where that split is not admissible.
#[inline(always)]
fn batch_gains(scan: &Scan, lefts: &Lefts, missing: BinStats, out: &mut [f64; BATCH]) {
    let p = scan.params;
    let m = p.min_samples_leaf.max(1) as u32;
    let total = scan.total;
    for lane in 0..BATCH {
        // Adding no missing bin's zeros changes no sum: x + (+0.0) = x but for x = −0.0, and a
        // prefix sum started at +0.0 is never −0.0.
        let left_vt = lefts.sum_vt[lane] + missing.sum_vt;
        let left_v = lefts.sum_v[lane] + missing.sum_v;
        let left_count = lefts.count[lane] + missing.count;
        let (right_vt, right_v) = (total.sum_vt - left_vt, total.sum_v - left_v);
        let right_count = total.count.wrapping_sub(left_count);
        let gain = left_vt * left_vt / (left_v + p.l2_leaf)
            + right_vt * right_vt / (right_v + p.l2_leaf)
            - scan.parent_score;
        let admissible = (left_count >= m)
            & (right_count >= m)
            & (left_v >= p.min_weight_leaf)
            & (right_v >= p.min_weight_leaf)
            & (left_v + p.l2_leaf > 0.0)
            & (right_v + p.l2_leaf > 0.0)
            & (gain > p.min_split_gain)
            & (gain > 0.0);
        out[lane] = if admissible { gain } else { f64::NEG_INFINITY };
    }
}

/// The best (gain, k, missing left, sum of the bins 1..=k) over the `thresholds` k (ascending)
/// of `best_prefix`.
#[inline(always)]
fn scan_prefixes(
    scan: &Scan,
    bins: &[BinStats],
    feature: usize,
    candidates: &Candidates,
    direction: i8,
    repeats_skippable: bool,
    thresholds: impl Iterator<Item = usize>,
) -> Option<(f64, usize, bool, BinStats)> {
    let missing = bins[0];
    let mut best: Option<(f64, usize, bool, BinStats)> = None;
    let mut prefix = BinStats::default();
    // With exact counts, the row minimum bounds the thresholds worth a gain: prefixes only grow.
    let exact_counts = scan.bounds.is_none();
    let min_rows = scan.params.min_samples_leaf.max(1) as u32;
    let last = bins.len() - 1;
    for k in thresholds {
        let bin = bins[k];
        if repeats_skippable
            && k > 1
            && k < last
            && bin.count == 0
            && bin.sum_v == 0.0
            && bin.sum_vt == 0.0
        {
            continue;
        }
        prefix += bin;
        if exact_counts {
            if scan.total.count.saturating_sub(prefix.count) < min_rows {
                // Too few rows right of this threshold and of every later one.
                break;
            }
            if prefix.count + missing.count < min_rows {
                continue;
            }
        }
        if !candidates.allows(feature, k) {
            continue;
        }
        for (with_missing_rows, missing_left) in
            threshold_splits(k, last, missing.count, prefix.count, scan.total.count)
        {
            let left = if with_missing_rows {
                prefix + missing
            } else {
                prefix
            };
            if let Some(gain) = scan.gain(left, direction) {
                if best.is_none_or(|(g, ..)| gain > g) {
                    best = Some((gain, k, missing_left, prefix));
                }
            }
        }
    }
    best
}

/// The splits numeric threshold k (bins 1..=k, holding `left_rows` rows, left) offers, in the
/// order the scans consider them: (whether the missing bin's rows go left with the prefix,
/// whether future missing values go left). The last threshold sends every non-missing bin left:
/// a split only against the missing rows.
#[inline(always)]
fn threshold_splits(
    k: usize,
    last: usize,
    missing_rows: u32,
    left_rows: u32,
    total_rows: u32,
) -> impl Iterator<Item = (bool, bool)> {
    let splits: [Option<(bool, bool)>; 2] = if missing_rows == 0 {
        // No missing values here: send future missing values to the larger child.
        let larger_left = left_rows >= total_rows - left_rows;
        [(k < last).then_some((false, larger_left)), None]
    } else {
        [Some((false, false)), (k < last).then_some((true, true))]
    };
    splits.into_iter().flatten()
}

/// Which splits the search may use: RGBM's random candidate sets.
#[derive(Debug, Clone, PartialEq)]
pub enum Candidates {
    All,
    /// `allowed[feature]`
    Features(Vec<bool>),
    /// `allowed[feature][threshold]`: numeric threshold t sends bins 1..=t left; categorical
    /// threshold k sends the k levels of lowest mean target left.
    Splits(Vec<Vec<bool>>),
}

impl Candidates {
    #[inline]
    pub fn allows_feature(&self, feature: usize) -> bool {
        match self {
            Candidates::All => true,
            Candidates::Features(allowed) => allowed[feature],
            Candidates::Splits(allowed) => allowed[feature].iter().any(|&a| a),
        }
    }
    /// The features with at least one allowed split, ascending, or `None` when all `n_features`
    /// have one.
    pub fn allowed_features(&self, n_features: usize) -> Option<Vec<usize>> {
        let allowed: Vec<usize> = (0..n_features)
            .filter(|&f| self.allows_feature(f))
            .collect();
        (allowed.len() < n_features).then_some(allowed)
    }
    /// These candidates restricted to the features `allowed[feature]`.
    pub fn within(&self, allowed: &[bool]) -> Candidates {
        match self {
            Candidates::All => Candidates::Features(allowed.to_vec()),
            Candidates::Features(own) => {
                Candidates::Features(own.iter().zip(allowed).map(|(&a, &b)| a && b).collect())
            }
            Candidates::Splits(own) => Candidates::Splits(
                own.iter()
                    .zip(allowed)
                    .map(|(splits, &keep)| {
                        if keep {
                            splits.clone()
                        } else {
                            vec![false; splits.len()]
                        }
                    })
                    .collect(),
            ),
        }
    }
    #[inline]
    pub fn allows(&self, feature: usize, threshold: usize) -> bool {
        match self {
            Candidates::All => true,
            Candidates::Features(allowed) => allowed[feature],
            Candidates::Splits(allowed) => {
                allowed[feature].get(threshold).copied().unwrap_or(false)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::uniform;

    /// Random bins of a node: some empty, some with rows but (after subtraction) no weight,
    /// with and without a missing bin, weights of either sign in the targets.
    fn random_bins(state: &mut u64, n_bins: usize, with_missing: bool) -> Vec<BinStats> {
        (0..n_bins)
            .map(|b| {
                let empty = uniform(state) < 0.4 || (b == 0 && !with_missing);
                if empty {
                    return BinStats::default();
                }
                let count = 1 + (uniform(state) * 30.0) as u32;
                let sum_v = count as f64 * (0.05 + uniform(state));
                BinStats {
                    sum_vt: sum_v * (uniform(state) - 0.45) * 4.0,
                    sum_v,
                    count,
                }
            })
            .collect()
    }

    #[test]
    fn the_batched_dense_scan_finds_the_scans_split_bit_for_bit() {
        let mut state = 7u64;
        let mut found = 0;
        for trial in 0..3000 {
            let n_bins = 2 + (uniform(&mut state) * 254.0) as usize;
            let bins = random_bins(&mut state, n_bins, trial % 3 != 0);
            let total = bins.iter().fold(BinStats::default(), |mut t, b| {
                t += *b;
                t
            });
            let params = SplitParams {
                l2_leaf: [0.0, 1.0, 0.3][trial % 3],
                min_samples_leaf: [1, 5, 20, 60][trial % 4],
                min_weight_leaf: [0.0, 2.0][trial % 2],
                min_split_gain: [0.0, 0.5][(trial / 2) % 2],
                categorical: CategoricalParams::default(),
            };
            let scan = Scan {
                params: &params,
                total,
                parent_score: score(&total, params.l2_leaf),
                constraint: None,
                bounds: None,
                undecided: Cell::new(f64::NEG_INFINITY),
            };
            let every = 1..bins.len();
            let expected = scan_prefixes(&scan, &bins, 0, &Candidates::All, 0, true, every);
            let bits = |r: Option<(f64, usize, bool, BinStats)>| {
                r.map(|(g, k, m, s)| (g.to_bits(), k, m, s.sum_vt.to_bits(), s.sum_v.to_bits()))
            };
            // The dispatched scan (AVX2 where the CPU has it) and the portable one.
            let batched = scan_all_prefixes(&scan, &bins);
            assert_eq!(bits(batched), bits(expected), "trial {trial}");
            let portable = scan_all_prefixes_in_lanes(&scan, &bins);
            assert_eq!(bits(portable), bits(expected), "trial {trial}");
            found += usize::from(expected.is_some());
        }
        assert!(found > 1000, "only {found} trials had an admissible split");
    }
}
