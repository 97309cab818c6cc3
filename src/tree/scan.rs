//! The gain of a split and the scans of a numeric feature's thresholds for the best one: the
//! least-squares decrease of each candidate, admissible when both children have rows and weight
//! enough (from exact counts, or bounds on them) and, under a monotone constraint, values in the
//! feature's direction within the node's interval (bounds propagation, as in XGBoost and
//! LightGBM). The dense scan of large nodes computes a batch of thresholds' gains at a time.

use super::bins::{BinStats, CountBounds};
use super::candidates::Candidates;
use super::categorical::CategoricalParams;
use super::noise::NodeNoise;
use std::cell::Cell;

/// What the split search needs of the tree parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SplitParams {
    /// λ of the leaf value Σvt / (Σv + λ).
    pub l2_leaf: f64,
    /// The fewest rows a leaf may have.
    pub min_samples_leaf: usize,
    /// The least fitting weight a leaf may have.
    pub min_weight_leaf: f64,
    /// The least gain a split must bring.
    pub min_split_gain: f64,
    /// The categorical split search's settings.
    pub categorical: CategoricalParams,
    /// The node's split noise (`random_strength`; noise.rs); `None`: candidates compete by
    /// their gains.
    pub noise: Option<NodeNoise>,
}

/// The gain of splitting a node of score `parent_score` into `left` and `right`; under a
/// monotone constraint the children's values are clamped to the node's interval, which must
/// respect the feature's `direction` (else None), and the gain is the objective's decrease at
/// those values.
#[inline]
pub(super) fn children_gain(
    left: &BinStats,
    right: &BinStats,
    l2_leaf: f64,
    parent_score: f64,
    constraint: Option<&NodeConstraint<'_>>,
    direction: i8,
) -> Option<f64> {
    Some(match constraint {
        None => score(left, l2_leaf) + score(right, l2_leaf) - parent_score,
        Some(c) => {
            let (left_value, right_value) = (c.value(left, l2_leaf), c.value(right, l2_leaf));
            if f64::from(direction) * (right_value - left_value) < 0.0 {
                return None;
            }
            decrease(left, l2_leaf, left_value) + decrease(right, l2_leaf, right_value)
                - parent_score
        }
    })
}

#[inline]
pub(super) fn score(s: &BinStats, l2: f64) -> f64 {
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

    pub(super) fn direction(&self, feature: usize) -> i8 {
        self.monotone.get(feature).copied().unwrap_or(0)
    }
}

/// The decrease of the least-squares objective Σ v (t − c)² + λc² from c = 0 to c = `value`:
/// 2 Σvt·c − (Σv + λ) c², which is `score` at the unconstrained optimum c = Σvt / (Σv + λ).
#[inline]
pub(super) fn decrease(s: &BinStats, l2: f64, value: f64) -> f64 {
    2.0 * s.sum_vt * value - (s.sum_v + l2) * value * value
}

/// The gains of one node's candidate splits.
pub(super) struct Scan<'a> {
    pub(super) params: &'a SplitParams,
    pub(super) total: BinStats,
    pub(super) parent_score: f64,
    /// `None`: no monotone constraint and no bounds, the plain least-squares gains.
    pub(super) constraint: Option<&'a NodeConstraint<'a>>,
    /// `None`: bins hold exact counts.
    pub(super) bounds: Option<&'a CountBounds>,
    /// The largest gain of a candidate the count bounds could not decide.
    pub(super) undecided: Cell<f64>,
}

impl Scan<'_> {
    /// Gain of sending `left` left and the rest right, if both children are admissible; the
    /// split is on a feature of monotone direction `direction` (0: free).
    #[inline]
    pub(super) fn gain(&self, left: BinStats, direction: i8) -> Option<f64> {
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
        let gain = children_gain(
            &left,
            &right,
            p.l2_leaf,
            self.parent_score,
            self.constraint,
            direction,
        )?;
        if !(gain > p.min_split_gain && gain > 0.0) {
            return None;
        }
        if enough_rows.is_none() {
            self.undecided.set(self.undecided.get().max(gain));
            return None;
        }
        Some(gain)
    }

    /// What the candidate of gain `gain` (feature `feature`, threshold or level prefix `k`,
    /// missing values on side `variant`) competes with: its gain, or with split noise its
    /// noisy score (noise.rs).
    #[inline]
    pub(super) fn ranked(&self, gain: f64, feature: usize, k: usize, variant: bool) -> f64 {
        match &self.params.noise {
            None => gain,
            Some(noise) => noise.score(gain, feature, k, variant),
        }
    }
}

/// Thresholds per batch of `scan_all_prefixes`. Features of fewer than half a batch of
/// thresholds (binary and one-hot columns) keep the branchy scan: clearing the batch's buffers
/// would cost more than the divisions it overlaps.
pub(super) const BATCH: usize = 32;

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
pub(super) fn scan_all_prefixes(
    scan: &Scan,
    bins: &[BinStats],
) -> Option<(f64, usize, bool, BinStats)> {
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
pub(super) fn scan_prefixes(
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
                let score = scan.ranked(gain, feature, k, with_missing_rows);
                if best.is_none_or(|(s, ..)| score > s) {
                    best = Some((score, k, missing_left, prefix));
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
                noise: None,
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
