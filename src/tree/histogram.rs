//! Gradient-statistics histograms: per (feature, bin) the sums Σ v t, Σ v and the row count of
//! a node's rows, built by the kernel (tree/histogram_kernel.rs) from the per-row statistics in
//! the form it wants (`RowStats`), and the operations on them the grower uses: subtraction (the
//! larger child's is its parent's minus the smaller's), counts added afterwards, bins moved to
//! another histogram.

use super::bins::{BinSet, BinStats, CountBounds};
use super::histogram_kernel::{build_packed, prefetch, Features};
use super::quantize::{Quantization, QuantizedInput, QuantizedStats};
use crate::data::BinnedData;
use crate::threads;
use rayon::prelude::*;

/// Bins of a subtraction from which it is shared out among awake workers: a bin is about a
/// nanosecond's work.
const MIN_SHARED_SUBTRACTED_BINS: usize = 4_096;
/// Rows per task when summing the totals of a node.
const TOTALS_CHUNK: usize = 16_384;

/// The per-row statistics a tree is fitted to, in the form the kernel wants.
#[derive(Debug, Clone, Copy)]
pub(crate) enum RowStats<'a> {
    /// Every fitting weight equals `v`.
    Uniform {
        vt: &'a [f64],
        v: f64,
    },
    Weighted {
        vt: &'a [f64],
        v: &'a [f64],
    },
    /// Weighted, and histograms get no bin counts: the split search bounds them by `bounds`.
    WeightedUncounted {
        vt: &'a [f64],
        v: &'a [f64],
        bounds: CountBounds,
    },
    /// Any of the above rounded to integers, one i64 a row (`quantize.rs`).
    Quantized(QuantizedStats<'a>),
}

impl<'a> RowStats<'a> {
    /// Detects constant weights (one pass; exact comparison, so results are unchanged). An empty
    /// `v` means every weight is 1 (see `FitStats`).
    pub(crate) fn new(vt: &'a [f64], v: &'a [f64]) -> Self {
        if v.is_empty() {
            return RowStats::Uniform { vt, v: 1.0 };
        }
        match v.first() {
            Some(&v0)
                if v.par_iter()
                    .with_min_len(1 << 16)
                    .all(|&x| x.to_bits() == v0.to_bits()) =>
            {
                RowStats::Uniform { vt, v: v0 }
            }
            _ => RowStats::Weighted { vt, v },
        }
    }

    /// Weighted statistics whose histograms carry no bin counts, with the bounds on counts that
    /// the weights give. Only for features whose missing bin is empty in every node: the split
    /// search reads no other count (categorical splits need every bin's count). Trees have at
    /// most `max_depth` levels.
    pub(crate) fn without_counts(self, max_depth: usize) -> Self {
        let RowStats::Weighted { vt, v } = self else {
            return self;
        };
        let (min_v, max_v) = v
            .par_iter()
            .with_min_len(1 << 16)
            .fold(
                || (f64::INFINITY, f64::NEG_INFINITY),
                |(lo, hi), &x| (lo.min(x), hi.max(x)),
            )
            .reduce(
                || (f64::INFINITY, f64::NEG_INFINITY),
                |a, b| (a.0.min(b.0), a.1.max(b.1)),
            );
        match CountBounds::new(min_v, max_v, v.len(), max_depth) {
            Some(bounds) => RowStats::WeightedUncounted { vt, v, bounds },
            None => self,
        }
    }

    /// These statistics quantized for a tree fitted on `rows` (all when `None`; quantize.rs);
    /// `None` where they stay exact.
    pub(crate) fn quantized(
        &self,
        rows: Option<&[u32]>,
        seed: u64,
        max_depth: usize,
    ) -> Option<Quantization> {
        let (vt, v) = match *self {
            RowStats::Uniform { vt, v } => (vt, QuantizedInput::Uniform(v)),
            RowStats::WeightedUncounted { vt, v, .. } => (vt, QuantizedInput::Weighted(v, false)),
            RowStats::Weighted { vt, v } => (vt, QuantizedInput::Weighted(v, true)),
            RowStats::Quantized(_) => return None,
        };
        Quantization::new(vt, v, rows, seed, max_depth)
    }

    /// The weight of every row, when it is the same for all.
    pub(crate) fn uniform_v(&self) -> Option<f64> {
        match self {
            RowStats::Uniform { v, .. } => Some(*v),
            RowStats::Quantized(q) => q.uniform_v(),
            _ => None,
        }
    }

    /// The count bounds of uncounted histograms; `None` when bins hold exact counts.
    pub(crate) fn count_bounds(&self) -> Option<&CountBounds> {
        match self {
            RowStats::WeightedUncounted { bounds, .. } => Some(bounds),
            RowStats::Quantized(q) => q.count_bounds(),
            _ => None,
        }
    }

    /// Totals of `rows`, summed in fixed chunks of rows (the same sums with any number of
    /// threads).
    pub(crate) fn totals(&self, rows: &[u32]) -> BinStats {
        if let RowStats::Quantized(q) = self {
            return q.totals(rows);
        }
        let chunk_totals: Vec<BinStats> = rows
            .par_chunks(TOTALS_CHUNK)
            .map(|chunk| {
                let mut total = BinStats::default();
                match *self {
                    RowStats::Uniform { vt, .. } => {
                        for &r in chunk {
                            total.sum_vt += vt[r as usize];
                        }
                    }
                    RowStats::Weighted { vt, v } | RowStats::WeightedUncounted { vt, v, .. } => {
                        for &r in chunk {
                            total.sum_vt += vt[r as usize];
                            total.sum_v += v[r as usize];
                        }
                    }
                    RowStats::Quantized(_) => unreachable!("summed above"),
                }
                total
            })
            .collect();
        let mut total = chunk_totals
            .into_iter()
            .fold(BinStats::default(), |a, b| a + b);
        total.count = rows.len() as u32;
        if let RowStats::Uniform { v, .. } = *self {
            total.sum_v = v * rows.len() as f64;
        }
        total
    }
}

/// Per-bin gradient statistics of one node, over all features.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    /// All features' bins, laid out by `BinnedData::offsets`.
    pub bins: Vec<BinStats>,
}

impl Histogram {
    /// The histogram of `rows` (indices into the binned matrix and the statistics, ascending
    /// and distinct, as a node's rows always are).
    pub fn build(data: &BinnedData, rows: &[u32], vt: &[f64], v: &[f64]) -> Histogram {
        let mut hist = Histogram {
            bins: vec![BinStats::default(); data.total_bins()],
        };
        hist.build_into(data, rows, &RowStats::new(vt, v), Features::All);
        hist
    }

    /// Overwrites the bins of `features` in `self` (of `data.total_bins()` bins) with the
    /// histogram of `rows`; the other bins are left untouched.
    pub(crate) fn build_into(
        &mut self,
        data: &BinnedData,
        rows: &[u32],
        stats: &RowStats<'_>,
        features: Features<'_>,
    ) {
        debug_assert!(
            rows.windows(2).all(|w| w[0] < w[1]),
            "rows ascending and distinct"
        );
        let ranges = features.ranges(data);
        let bins = &mut self.bins;
        match *stats {
            RowStats::Uniform { vt, v } => {
                let unpack = |p: &[f64; 2]| BinStats {
                    sum_vt: p[0],
                    sum_v: v * p[1],
                    count: p[1] as u32,
                };
                build_packed(
                    data,
                    rows,
                    features,
                    |r| [vt[r], 1.0],
                    |r| prefetch(&vt[r]),
                    |packed| unpack_into(bins, &ranges, packed, |out, p| *out = unpack(p)),
                );
            }
            RowStats::Weighted { vt, v } => {
                let unpack = |p: &[f64; 4]| BinStats {
                    sum_vt: p[0],
                    sum_v: p[1],
                    count: p[2] as u32,
                };
                let stat = |r: usize| [vt[r], v[r], 1.0, 0.0];
                let prefetch_stat = |r: usize| {
                    prefetch(&vt[r]);
                    prefetch(&v[r]);
                };
                build_packed(data, rows, features, stat, prefetch_stat, |packed| {
                    unpack_into(bins, &ranges, packed, |out, p| *out = unpack(p))
                });
            }
            RowStats::WeightedUncounted { vt, v, .. } => {
                let unpack = |p: &[f64; 2]| BinStats {
                    sum_vt: p[0],
                    sum_v: p[1],
                    count: 0,
                };
                let prefetch_stat = |r: usize| {
                    prefetch(&vt[r]);
                    prefetch(&v[r]);
                };
                build_packed(
                    data,
                    rows,
                    features,
                    |r| [vt[r], v[r]],
                    prefetch_stat,
                    |packed| unpack_into(bins, &ranges, packed, |out, p| *out = unpack(p)),
                );
            }
            RowStats::Quantized(q) if q.counted_apart() => {
                let packed = q.packed();
                build_packed(
                    data,
                    rows,
                    features,
                    |r| [packed[r], 1],
                    |r| prefetch(&packed[r]),
                    |sums| unpack_into(bins, &ranges, sums, |out, &p| *out = q.unpack_counted(p)),
                );
            }
            RowStats::Quantized(q) => {
                let packed = q.packed();
                build_packed(
                    data,
                    rows,
                    features,
                    |r| packed[r],
                    |r| prefetch(&packed[r]),
                    |sums| unpack_into(bins, &ranges, sums, |out, &p| *out = q.unpack(p)),
                );
            }
        }
    }

    /// A copy of `self` whose bins of `features` hold the exact row counts of `rows`: for the
    /// nodes of an uncounted fit whose split the count bounds cannot decide.
    pub(crate) fn with_counts(
        &self,
        data: &BinnedData,
        rows: &[u32],
        features: Features<'_>,
    ) -> Histogram {
        let mut counted = self.clone();
        let ranges = features.ranges(data);
        build_packed(
            data,
            rows,
            features,
            |_| [1.0],
            |_| (),
            |packed| {
                unpack_into(&mut counted.bins, &ranges, packed, |bin, p| {
                    bin.count = p[0] as u32
                })
            },
        );
        counted
    }

    /// Turns the parent's histogram into the sibling's: parent − child.
    pub fn subtract(&mut self, child: &Histogram) {
        for (b, c) in self.bins.iter_mut().zip(&child.bins) {
            *b -= *c;
        }
    }

    /// `subtract` on the bins of `features` only (the others may hold stale values); while the
    /// workers are awake, on the two halves of those bins side by side.
    pub(crate) fn subtract_features(
        &mut self,
        child: &Histogram,
        data: &BinnedData,
        features: Features<'_>,
    ) {
        let ranges = features.ranges(data);
        let subtract = |bins: &mut [BinStats], first_bin: usize, ranges: &[(usize, usize)]| {
            for &(start, len) in ranges {
                let own = &mut bins[start - first_bin..start - first_bin + len];
                for (b, c) in own.iter_mut().zip(&child.bins[start..start + len]) {
                    *b -= *c;
                }
            }
        };
        let n_bins: usize = ranges.iter().map(|&(_, len)| len).sum();
        if n_bins < MIN_SHARED_SUBTRACTED_BINS || !threads::workers_awake() {
            return subtract(&mut self.bins, 0, &ranges);
        }
        let boundary = middle_bin(&ranges);
        let (low, high) = cut_ranges(&ranges, boundary);
        let (low_bins, high_bins) = self.bins.split_at_mut(boundary);
        rayon::join(
            || subtract(low_bins, 0, &low),
            || subtract(high_bins, boundary, &high),
        );
    }

    /// Moves the bins `bins` of `feature` into `into`, whose other bins of that feature become
    /// zero and leave zeros here: when every row of a bin goes the same way (a split on this
    /// feature), the two children's histograms of this feature, exactly and with no row pass.
    pub(crate) fn move_bins(
        &mut self,
        into: &mut Histogram,
        data: &BinnedData,
        feature: usize,
        bins: &BinSet,
    ) {
        let range = data.offsets()[feature]..data.offsets()[feature + 1];
        let (from, to) = (&mut self.bins[range.clone()], &mut into.bins[range]);
        for (bin, (from, to)) in from.iter_mut().zip(to).enumerate() {
            *to = BinStats::default();
            if bins.contains(bin as u8) {
                std::mem::swap(from, to);
            }
        }
    }

    /// The bins of one feature.
    pub fn feature<'h>(&'h self, data: &BinnedData, feature: usize) -> &'h [BinStats] {
        let offsets = data.offsets();
        &self.bins[offsets[feature]..offsets[feature + 1]]
    }

    /// The sums of the bins of `feature`: of the histogram's rows, each in one bin of it.
    pub(crate) fn feature_totals(&self, data: &BinnedData, feature: usize) -> BinStats {
        (self.feature(data, feature).iter()).fold(BinStats::default(), |a, &b| a + b)
    }
}

/// Ranges of bins: (start, length), ascending.
pub(super) type Ranges = Vec<(usize, usize)>;

/// The bin that cuts the bins of `ranges` (start, length; ascending) into two halves.
fn middle_bin(ranges: &[(usize, usize)]) -> usize {
    let mut left = ranges.iter().map(|&(_, len)| len).sum::<usize>() / 2;
    for &(start, len) in ranges {
        if left < len {
            return start + left;
        }
        left -= len;
    }
    ranges.last().map_or(0, |&(start, len)| start + len)
}

/// `ranges` (start, length; ascending) cut at bin `boundary`: the parts below it, and above.
pub(super) fn cut_ranges(ranges: &[(usize, usize)], boundary: usize) -> (Ranges, Ranges) {
    let clip = |from: usize, to: usize| {
        (ranges.iter())
            .map(|&(start, len)| (start.clamp(from, to), (start + len).clamp(from, to)))
            .filter(|(start, end)| start < end)
            .map(|(start, end)| (start, end - start))
            .collect()
    };
    (clip(0, boundary), clip(boundary, usize::MAX))
}

/// Writes the packed sums, which hold the bins of `ranges` one after another, into `bins`.
fn unpack_into<P>(
    bins: &mut [BinStats],
    ranges: &[(usize, usize)],
    packed: &[P],
    write: impl Fn(&mut BinStats, &P),
) {
    let mut at = 0;
    for &(start, len) in ranges {
        for (out, p) in bins[start..start + len]
            .iter_mut()
            .zip(&packed[at..at + len])
        {
            write(out, p);
        }
        at += len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::test_data::binned;
    use crate::rng::uniform;

    #[test]
    fn ranges_cut_at_a_bin_keep_every_bin_once() {
        let ranges = [(0, 10), (20, 5), (30, 1)];
        assert_eq!(middle_bin(&ranges), 8);
        assert_eq!(
            cut_ranges(&ranges, 22),
            (vec![(0, 10), (20, 2)], vec![(22, 3), (30, 1)])
        );
        assert_eq!(
            cut_ranges(&ranges, 20),
            (vec![(0, 10)], vec![(20, 5), (30, 1)])
        );
        assert_eq!(middle_bin(&[(5, 1)]), 5);
        assert_eq!(middle_bin(&[]), 0);
    }

    /// A value no histogram pass produces, to see which bins a pass wrote.
    const SENTINEL: BinStats = BinStats {
        sum_vt: -7.25,
        sum_v: 3.5,
        count: 12345,
    };

    #[test]
    fn a_feature_subset_builds_exactly_its_bins_of_the_full_histogram() {
        let mut state = 5;
        let (n, p) = (40_000, 12); // 40 000 rows: two blocks at the root
        let columns: Vec<Vec<f64>> = (0..p)
            .map(|j| {
                (0..n)
                    .map(|_| (uniform(&mut state) * (3 + 20 * j) as f64).floor())
                    .collect()
            })
            .collect();
        let data = binned(&columns);
        // The same bins with their column-major copy, which the passes over a few features read.
        let mut kept = data.clone();
        kept.keep_columns();
        assert!(data.kept_columns().is_none() && kept.kept_columns().is_some());
        let vt: Vec<f64> = (0..n).map(|_| uniform(&mut state) - 0.3).collect();
        let v: Vec<f64> = (0..n).map(|_| 0.5 + uniform(&mut state)).collect();
        let all: Vec<u32> = (0..n as u32).collect();
        let some: Vec<u32> = all.iter().copied().filter(|r| r % 3 != 1).collect();
        let offsets = data.offsets();
        // One feature and a few (column passes from `kept`, row passes from `data`), and most
        // (row passes from both).
        let subsets: [&[usize]; 3] = [&[4], &[0, 5, 11], &[0, 1, 2, 3, 5, 6, 7, 9, 10, 11]];
        let weighted = RowStats::new(&vt, &v);
        let uncounted = weighted.without_counts(6);
        assert!(uncounted.count_bounds().is_some());
        let build = |stats: &RowStats<'_>, rows: &[u32]| {
            let mut h = Histogram {
                bins: vec![SENTINEL; data.total_bins()],
            };
            h.build_into(&data, rows, stats, Features::All);
            h
        };
        // Without counts: the same sums, and counting the rows gives the counted histogram.
        let counted = build(&weighted, &some);
        let sums = build(&uncounted, &some);
        for (c, s) in counted.bins.iter().zip(&sums.bins) {
            assert_eq!((c.sum_vt, c.sum_v, s.count), (s.sum_vt, s.sum_v, 0));
        }
        assert_eq!(sums.with_counts(&data, &some, Features::All), counted);
        for stats in [weighted, uncounted, RowStats::new(&vt, &[])] {
            let full = |rows: &[u32]| build(&stats, rows);
            let (parent, child) = (full(&all), full(&some));
            assert!(!parent.bins.contains(&SENTINEL));
            for (subset, source) in subsets.iter().flat_map(|s| [(s, &data), (s, &kept)]) {
                let built = |b: usize| {
                    subset
                        .iter()
                        .any(|&f| (offsets[f]..offsets[f + 1]).contains(&b))
                };
                let mut masked = Histogram {
                    bins: vec![SENTINEL; data.total_bins()],
                };
                masked.build_into(source, &all, &stats, Features::Only(subset));
                for (b, (&m, &f)) in masked.bins.iter().zip(&parent.bins).enumerate() {
                    // Bit for bit the full histogram's bins, and nothing else written.
                    assert_eq!(m, if built(b) { f } else { SENTINEL }, "bin {b}");
                }
                let mut small = Histogram {
                    bins: vec![SENTINEL; data.total_bins()],
                };
                small.build_into(source, &some, &stats, Features::Only(subset));
                masked.subtract_features(&small, source, Features::Only(subset));
                let mut sibling = parent.clone();
                sibling.subtract(&child);
                for (b, (&m, &s)) in masked.bins.iter().zip(&sibling.bins).enumerate() {
                    assert_eq!(m, if built(b) { s } else { SENTINEL }, "bin {b}");
                }
            }
        }
    }

    #[test]
    fn bundled_sparse_features_give_every_feature_its_own_histogram() {
        // Three one-hot encoded variables (4, 6 and 3 levels; the last has a level with a third
        // of the rows), a rare binary flag, and a dense feature that bundles with none.
        let mut state = 11;
        let n = 6_000; // one block: the kernel adds rows in row order, as below
        let mut columns: Vec<Vec<f64>> = Vec::new();
        for levels in [4usize, 6, 3] {
            let codes: Vec<usize> = (0..n)
                .map(|_| (uniform(&mut state) * levels as f64) as usize)
                .collect();
            for level in 0..levels {
                columns.push(codes.iter().map(|&c| f64::from(c == level)).collect());
            }
        }
        columns.push(
            (0..n)
                .map(|_| f64::from(uniform(&mut state) < 0.02))
                .collect(),
        );
        columns.push((0..n).map(|_| uniform(&mut state)).collect());
        let data = binned(&columns);
        let bundles = data.bundles().expect("one-hot features bundle");
        assert!(bundles.matrix().n_features() < columns.len() - 1);
        let vt: Vec<f64> = (0..n).map(|_| uniform(&mut state) - 0.4).collect();
        let v: Vec<f64> = (0..n).map(|_| 0.1 + uniform(&mut state)).collect();
        let all: Vec<u32> = (0..n as u32).collect();
        let some: Vec<u32> = all.iter().copied().filter(|r| r % 5 < 2).collect();
        for rows in [&all, &some] {
            // Every feature's bins summed row by row.
            let mut expected = vec![BinStats::default(); data.total_bins()];
            for &r in rows.iter() {
                let r = r as usize;
                for f in 0..data.n_features() {
                    expected[data.offsets()[f] + data.column(f).get(r) as usize] += BinStats {
                        sum_vt: vt[r],
                        sum_v: v[r],
                        count: 1,
                    };
                }
            }
            let scale: f64 = rows.iter().map(|&r| vt[r as usize].abs()).sum();
            let hist = Histogram::build(&data, rows, &vt, &v);
            let mut inexact = 0;
            for (b, (got, want)) in hist.bins.iter().zip(&expected).enumerate() {
                assert_eq!(got.count, want.count, "bin {b}");
                if got != want {
                    // Only a bundled feature's default bin is summed from partial sums.
                    inexact += 1;
                    assert!((got.sum_vt - want.sum_vt).abs() <= 1e-12 * scale, "bin {b}");
                    assert!((got.sum_v - want.sum_v).abs() <= 1e-12 * scale, "bin {b}");
                }
            }
            // At most one inexact bin per feature but the dense one.
            assert!(inexact < columns.len());
        }
    }
}
