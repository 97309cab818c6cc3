//! Histograms of small nodes, in time proportional to their rows rather than to all bins.
//!
//! A node of r rows has at most r non-zero bins per feature, of a histogram of `total_bins` (7,168
//! for 28 features of 256 bins): a tree of many leaves spends most of its time clearing,
//! unpacking, subtracting and scanning zeros (leaf-wise growth the most, since it searches the
//! children of every split). A histogram with a *support* is one whose bins are zero (+0.0 sums,
//! count 0) outside a known list of bins; building it, subtracting it from its parent, searching it
//! (`split::best_split_within`) and clearing it again touch the support only. Every bin still
//! holds exactly the value the dense code computes — the same additions in the same order, and
//! x − (+0.0) = x — so trees are unchanged.

use super::bins::BinStats;
use super::histogram::{cut_ranges, Histogram, RowStats};
use super::histogram_kernel::{prefetch, Features, PREFETCH_AHEAD};
use crate::data::BinnedData;
use crate::threads;

/// Entries (support bins, or row-bins) of a pass below which it runs on one thread even while
/// the workers are awake (`threads::workers_awake`): handing half of it to an awake worker and
/// collecting it costs about a microsecond, the time of a thousand scattered entries or so (on
/// 5,000 × 50 at two threads, 1,024, 2,048 and 4,096 entries gave the same fit time within the
/// machine's noise).
const MIN_SHARED_ENTRIES: usize = 2_048;

/// Whether a pass over `entries` entries is shared out by halves.
fn shared(entries: usize) -> bool {
    entries >= MIN_SHARED_ENTRIES && threads::workers_awake()
}

/// The bitmaps of the bins a support pass marks: one per half of a pass shared out, each all
/// clear between calls, and the upper half's list.
#[derive(Default)]
pub(super) struct Scratch {
    seen: [Vec<u64>; 2],
    upper: Vec<u32>,
}

impl Scratch {
    /// The two bitmaps, sized for `data`'s bins, and the upper half's list.
    fn parts(&mut self, data: &BinnedData) -> (&mut [Vec<u64>; 2], &mut Vec<u32>) {
        let words = data.total_bins().div_ceil(64);
        for seen in &mut self.seen {
            seen.resize(words, 0);
        }
        (&mut self.seen, &mut self.upper)
    }

    /// Writes into `support` (ascending) the bins that `mark` sets in a clear bitmap.
    fn collect(
        &mut self,
        data: &BinnedData,
        support: &mut Vec<u32>,
        mark: impl FnOnce(&mut [u64]),
    ) {
        let ([seen, _], _) = self.parts(data);
        mark(seen);
        support.clear();
        collect_bits(seen, 0, |b| support.push(b));
    }

    /// `collect` of two marking passes side by side, each in its own bitmap: `mark_low` sets
    /// bins below `boundary` only, `mark_high` bins from it on.
    fn collect_halves(
        &mut self,
        data: &BinnedData,
        support: &mut Vec<u32>,
        boundary: usize,
        mark_low: impl FnOnce(&mut [u64]) + Send,
        mark_high: impl FnOnce(&mut [u64]) + Send,
    ) {
        let ([low_seen, high_seen], upper) = self.parts(data);
        support.clear();
        upper.clear();
        rayon::join(
            || {
                mark_low(low_seen);
                collect_bits(&mut low_seen[..boundary.div_ceil(64)], 0, |b| {
                    support.push(b)
                });
            },
            || {
                mark_high(high_seen);
                let first_word = boundary / 64;
                collect_bits(&mut high_seen[first_word..], first_word, |b| upper.push(b));
            },
        );
        support.extend_from_slice(upper);
    }

    #[cfg(test)]
    pub(super) fn all_clear(&self) -> bool {
        self.seen.iter().flatten().all(|&w| w == 0)
    }
}

/// Whether a histogram of `rows` rows over `features` features of `bins` bins is worth a
/// support: when the rows reach at most as many bins as there are. Measured on 100,000 × 28
/// (7,168 bins), 14,180 leaves: supports from 256 rows took 0.87× the time of supports from 64
/// rows depth-wise, 0.87× leaf-wise; from 512 rows, no faster than from 256.
pub(super) fn worth_a_support(rows: usize, features: usize, bins: usize) -> bool {
    rows.saturating_mul(features) <= bins
}

/// Whether `stats` leave the bins no row reaches at +0.0 in a dense build, as a support assumes
/// (a uniform weight v gives those bins Σv = v · 0, which is −0.0 for a negative v).
pub(super) fn zero_is_positive(stats: &RowStats<'_>) -> bool {
    match *stats {
        RowStats::Uniform { v, .. } => !v.is_sign_negative(),
        RowStats::Weighted { .. } | RowStats::WeightedUncounted { .. } => true,
        RowStats::Quantized(q) => q.zero_is_positive(),
    }
}

/// Builds into `hist`, whose bins must all be zero, the histogram of `rows` over `features`,
/// and writes its support (ascending) into `support`. Bit for bit `Histogram::build_into` when
/// that sums one block of rows (fewer than 2 · `MIN_BLOCK_ROWS`) and reads no bundles (which a
/// pass over all features does). While the workers are awake, the two halves of the features
/// are built side by side, each into its own bins: the same additions in the same order.
pub(super) fn build_on_support(
    hist: &mut Histogram,
    support: &mut Vec<u32>,
    scratch: &mut Scratch,
    data: &BinnedData,
    rows: &[u32],
    stats: &RowStats<'_>,
    features: Features<'_>,
) {
    let built = built_features(data, features);
    if built.len() < 2 || !shared(rows.len() * built.len()) {
        scratch.collect(data, support, |seen| {
            add_stats(&mut hist.bins, 0, seen, data, rows, stats, &built)
        });
    } else {
        let (low, high) = built.split_at(built.len() / 2);
        let boundary = high[0].1;
        let (low_bins, high_bins) = hist.bins.split_at_mut(boundary);
        scratch.collect_halves(
            data,
            support,
            boundary,
            |seen| add_stats(low_bins, 0, seen, data, rows, stats, low),
            |seen| add_stats(high_bins, boundary, seen, data, rows, stats, high),
        );
    }
    if let Some(v) = stats.uniform_v() {
        // The kernel counts rows as a float sum of ones, exact, and scales it by v.
        for &b in support.iter() {
            let bin = &mut hist.bins[b as usize];
            bin.sum_v = v * bin.count as f64;
        }
    }
}

/// Adds every row of `rows` to its bin of each feature of `built` in `bins` (which start at bin
/// `first_bin`), marking the bins in `seen`. The kernel adds, per bin, each row's statistic to a
/// sum starting at +0.0, rows in order: the same additions here.
fn add_stats(
    bins: &mut [BinStats],
    first_bin: usize,
    seen: &mut [u64],
    data: &BinnedData,
    rows: &[u32],
    stats: &RowStats<'_>,
    built: &[(usize, usize)],
) {
    let place = Placement {
        first_bin,
        data,
        rows,
        built,
    };
    match *stats {
        RowStats::Uniform { vt, .. } => place.add_rows(
            bins,
            seen,
            |r| prefetch(&vt[r]),
            |bin, r| {
                bin.sum_vt += vt[r];
                bin.count += 1;
            },
        ),
        RowStats::Weighted { vt, v } => {
            let prefetch_stat = |r: usize| {
                prefetch(&vt[r]);
                prefetch(&v[r]);
            };
            place.add_rows(bins, seen, prefetch_stat, |bin, r| {
                bin.sum_vt += vt[r];
                bin.sum_v += v[r];
                bin.count += 1;
            })
        }
        RowStats::WeightedUncounted { vt, v, .. } => {
            let prefetch_stat = |r: usize| {
                prefetch(&vt[r]);
                prefetch(&v[r]);
            };
            place.add_rows(bins, seen, prefetch_stat, |bin, r| {
                bin.sum_vt += vt[r];
                bin.sum_v += v[r];
            })
        }
        // The sums of integer multiples of powers of two are exact: the kernel's integer sums,
        // scaled back.
        RowStats::Quantized(q) => {
            let packed = q.packed();
            place.add_rows(
                bins,
                seen,
                |r| prefetch(&packed[r]),
                |bin, r| {
                    let row = q.row(r);
                    bin.sum_vt += row.sum_vt;
                    bin.sum_v += row.sum_v;
                    bin.count += row.count;
                },
            )
        }
    }
}

/// Where rows add their statistics: the bins of the features `built` (feature, first bin), in
/// a slice of the bins starting at bin `first_bin`.
struct Placement<'a> {
    first_bin: usize,
    data: &'a BinnedData,
    rows: &'a [u32],
    built: &'a [(usize, usize)],
}

impl Placement<'_> {
    /// Calls `add(bin, r)` for every row r, in order, and every built feature's bin of it,
    /// marking the bins in `seen`. Rows of a node are scattered: their bins and statistics are
    /// prefetched a few rows ahead, as in the dense kernel.
    #[inline(always)]
    fn add_rows(
        &self,
        bins: &mut [BinStats],
        seen: &mut [u64],
        prefetch_stat: impl Fn(usize),
        add: impl Fn(&mut BinStats, usize),
    ) {
        let matrix = self.data.matrix();
        for (i, &r) in self.rows.iter().enumerate() {
            if let Some(&ahead) = self.rows.get(i + PREFETCH_AHEAD) {
                let row = matrix.row(ahead as usize);
                prefetch(row.as_ptr());
                prefetch(row.as_ptr_range().end.wrapping_sub(1));
                prefetch_stat(ahead as usize);
            }
            let row = matrix.row(r as usize);
            for &(feature, offset) in self.built {
                let b = offset + row[feature] as usize;
                seen[b / 64] |= 1 << (b % 64);
                add(&mut bins[b - self.first_bin], r as usize);
            }
        }
    }
}

/// The support of a histogram built densely (in one tree: the bins of features it does not
/// build are zero, never written): its non-zero bins (any bit set: −0.0 counts) and every bin
/// the node's rows reach, where a descendant's histogram may be non-zero. Bins with counts are
/// non-zero where rows reach them; without counts, give the node's rows (`uncounted_rows`).
pub(super) fn support_of_dense(
    hist: &Histogram,
    support: &mut Vec<u32>,
    scratch: &mut Scratch,
    data: &BinnedData,
    uncounted_rows: Option<&[u32]>,
    features: Features<'_>,
) {
    let ranges = features.ranges(data);
    let mark_nonzero = |seen: &mut [u64], ranges: &[(usize, usize)]| {
        for &(start, len) in ranges {
            for (b, bin) in (start..).zip(&hist.bins[start..start + len]) {
                if is_nonzero(bin) {
                    seen[b / 64] |= 1 << (b % 64);
                }
            }
        }
    };
    let built = built_features(data, features);
    let bins: usize = ranges.iter().map(|&(_, len)| len).sum();
    if built.len() < 2 || uncounted_rows.is_some() || !shared(bins) {
        scratch.collect(data, support, |seen| {
            mark_nonzero(seen, &ranges);
            if let Some(rows) = uncounted_rows {
                mark_rows(seen, data, rows, features);
            }
        });
        return;
    }
    // The ranges cut at the first bin of the upper half of the features.
    let boundary = built[built.len() / 2].1;
    let (low, high) = cut_ranges(&ranges, boundary);
    scratch.collect_halves(
        data,
        support,
        boundary,
        |seen| mark_nonzero(seen, &low),
        |seen| mark_nonzero(seen, &high),
    );
}

/// Narrows `support`, a support of `hist`, to the bins that are non-zero or that the node's rows
/// reach (`uncounted_rows`, as in `support_of_dense`): still a support of the node and of its
/// descendants, often much smaller than the ancestor's it was.
pub(super) fn shrink_support(
    hist: &Histogram,
    support: &mut Vec<u32>,
    scratch: &mut Scratch,
    data: &BinnedData,
    uncounted_rows: Option<&[u32]>,
    features: Features<'_>,
) {
    let ([low_seen, high_seen], _) = scratch.parts(data);
    let mark_nonzero = |seen: &mut [u64], support: &[u32]| {
        for &b in support {
            if is_nonzero(&hist.bins[b as usize]) {
                seen[b as usize / 64] |= 1 << (b % 64);
            }
        }
    };
    if uncounted_rows.is_some() || !shared(support.len()) {
        mark_nonzero(low_seen, support);
        if let Some(rows) = uncounted_rows {
            mark_rows(low_seen, data, rows, features);
        }
        support.clear();
        collect_bits(low_seen, 0, |b| support.push(b));
        return;
    }
    // Each half narrows its own entries in place: a narrowed list is never longer.
    let mid = support.len() / 2;
    let boundary = support[mid] as usize;
    let (low, high) = support.split_at_mut(mid);
    let narrow = |seen: &mut [u64], first_word: usize, list: &mut [u32]| {
        mark_nonzero(seen, list);
        let mut kept = 0;
        collect_bits(&mut seen[first_word..], first_word, |b| {
            list[kept] = b;
            kept += 1;
        });
        kept
    };
    let (low_kept, high_kept) = rayon::join(
        || narrow(&mut low_seen[..boundary.div_ceil(64)], 0, low),
        || narrow(high_seen, boundary / 64, high),
    );
    support.copy_within(mid..mid + high_kept, low_kept);
    support.truncate(low_kept + high_kept);
}

/// Whether any bit of a bin is set (−0.0 counts).
fn is_nonzero(bin: &BinStats) -> bool {
    bin.count != 0 || bin.sum_vt.to_bits() != 0 || bin.sum_v.to_bits() != 0
}

/// Sets the bits of the bins that `rows` reach.
fn mark_rows(seen: &mut [u64], data: &BinnedData, rows: &[u32], features: Features<'_>) {
    let built = built_features(data, features);
    for &r in rows {
        let row = data.matrix().row(r as usize);
        for &(feature, offset) in &built {
            let b = offset + row[feature] as usize;
            seen[b / 64] |= 1 << (b % 64);
        }
    }
}

/// (feature, first bin) of every feature a pass over `features` builds.
fn built_features(data: &BinnedData, features: Features<'_>) -> Vec<(usize, usize)> {
    let offsets = data.offsets();
    match features {
        Features::All => (0..data.n_features()).map(|f| (f, offsets[f])).collect(),
        Features::Only(list) => list.iter().map(|&f| (f, offsets[f])).collect(),
    }
}

/// Emits the set bits of `words` (word `first_word` of a bitmap onwards), ascending, and clears
/// them.
fn collect_bits(words: &mut [u64], first_word: usize, mut emit: impl FnMut(u32)) {
    for (w, word) in (first_word..).zip(words) {
        while *word != 0 {
            emit((w * 64) as u32 + word.trailing_zeros());
            *word &= *word - 1;
        }
    }
}

/// Runs `pass(bins, first_bin, entries)` over the bins of `support` (ascending): at once, or,
/// while the workers are awake, over its two halves side by side, each on its own bins.
fn on_support(
    bins: &mut [BinStats],
    support: &[u32],
    pass: impl Fn(&mut [BinStats], usize, &[u32]) + Sync,
) {
    if !shared(support.len()) {
        return pass(bins, 0, support);
    }
    let (low, high) = support.split_at(support.len() / 2);
    let boundary = high[0] as usize;
    let (low_bins, high_bins) = bins.split_at_mut(boundary);
    rayon::join(
        || pass(low_bins, 0, low),
        || pass(high_bins, boundary, high),
    );
}

/// `parent −= child` on the support of `child` (zero elsewhere, where subtracting changes
/// nothing).
pub(super) fn subtract_on_support(parent: &mut Histogram, child: &Histogram, support: &[u32]) {
    on_support(&mut parent.bins, support, |bins, first_bin, support| {
        for &b in support {
            bins[b as usize - first_bin] -= child.bins[b as usize];
        }
    });
}

/// Zeroes the support of `hist`, leaving every bin zero.
pub(super) fn clear_support(hist: &mut Histogram, support: &[u32]) {
    on_support(&mut hist.bins, support, |bins, first_bin, support| {
        for &b in support {
            bins[b as usize - first_bin] = BinStats::default();
        }
    });
}

/// The histograms of finished nodes, for new ones: those zero everywhere (clean: from nodes
/// with a support, cleared on it) apart from the others, and the supports' lists.
pub(super) struct HistogramPool {
    n_bins: usize,
    clean: Vec<Histogram>,
    dirty: Vec<Histogram>,
    supports: Vec<Vec<u32>>,
    values: Vec<Vec<BinStats>>,
    pub(super) scratch: Scratch,
    /// Histograms with a support kept whole by waiting nodes, and how many may be.
    kept_whole: usize,
    max_kept_whole: usize,
}

impl HistogramPool {
    /// A pool of `spare` histograms (any contents) of `n_bins` bins.
    pub(super) fn new(n_bins: usize, mut spare: Vec<Histogram>) -> Self {
        spare.retain(|hist| hist.bins.len() == n_bins);
        HistogramPool {
            n_bins,
            clean: Vec::new(),
            dirty: spare,
            supports: Vec::new(),
            values: Vec::new(),
            scratch: Scratch::default(),
            kept_whole: 0,
            max_kept_whole: MAX_KEPT_WHOLE_BYTES / (n_bins * size_of::<BinStats>()).max(1),
        }
    }

    /// A histogram of any content, for a pass that overwrites the bins it builds.
    pub(super) fn any(&mut self) -> Histogram {
        (self.dirty.pop().or_else(|| self.clean.pop())).unwrap_or_else(|| self.fresh())
    }

    /// A histogram whose bins are all zero.
    pub(super) fn zeroed(&mut self) -> Histogram {
        self.clean.pop().unwrap_or_else(|| match self.dirty.pop() {
            Some(mut hist) => {
                hist.bins.fill(BinStats::default());
                hist
            }
            None => self.fresh(),
        })
    }

    fn fresh(&self) -> Histogram {
        Histogram {
            bins: vec![BinStats::default(); self.n_bins],
        }
    }

    /// The histograms back in the pool, for another tree (whose features may differ, so that
    /// the clean ones are spare with any contents), at most `MAX_SPARE_BYTES` of them.
    pub(super) fn into_spare(self) -> Vec<Histogram> {
        let bytes = self.n_bins * size_of::<BinStats>();
        let mut spare = self.dirty;
        spare.extend(self.clean);
        spare.truncate(MAX_SPARE_BYTES / bytes.max(1));
        spare
    }

    /// An empty list for a support.
    pub(super) fn support_list(&mut self) -> Vec<u32> {
        self.supports.pop().unwrap_or_default()
    }

    /// Takes back the histogram of a finished node, with its support if it has one.
    pub(super) fn release(&mut self, mut hist: Histogram, support: Option<Vec<u32>>) {
        match support {
            Some(support) => {
                clear_support(&mut hist, &support);
                self.clean.push(hist);
                self.supports.push(support);
            }
            None => self.dirty.push(hist),
        }
    }
}

/// The histogram a waiting node keeps until it is split: whole (with its support, if it has
/// one), or the values of its support only (a few kB instead of `total_bins` · 24 bytes).
pub(super) enum KeptHistogram {
    Whole(Histogram, Option<Vec<u32>>),
    Sparse {
        support: Vec<u32>,
        values: Vec<BinStats>,
    },
}

/// A histogram with a support is kept whole by a waiting node when its support covers at least
/// 1 / `MIN_KEPT_WHOLE_SHARE` of the bins, and while those kept whole take at most
/// `MAX_KEPT_WHOLE_BYTES`. Copying a support's values out and back costs a pass over them at
/// each end, and saves little memory when the support is a large part of the bins (a node of a
/// few hundred rows on a few thousand bins: 0.91x the fit time on 5,000 × 50 at two threads);
/// the nodes of a few rows of deep trees keep their supports' values only (14,180 leaves on
/// 100,000 × 28 rows held 1,711 MiB of whole histograms).
const MIN_KEPT_WHOLE_SHARE: usize = 4;
const MAX_KEPT_WHOLE_BYTES: usize = 32 << 20;
/// The histograms a tree leaves for the next take at most this many bytes (the rest are freed):
/// a depth-6 tree on 28 features of 255 bins leaves 18 of 172 kB, a deep tree on wide data
/// may hold hundreds of MB at its peak.
const MAX_SPARE_BYTES: usize = 32 << 20;

impl HistogramPool {
    /// What a waiting node keeps of `hist` (with its support, if it has one); the bins of a
    /// histogram not kept whole go back to the pool.
    pub(super) fn keep(&mut self, hist: Histogram, support: Option<Vec<u32>>) -> KeptHistogram {
        match support {
            Some(support) if !self.worth_keeping_whole(&support) => {
                let mut values = self.values.pop().unwrap_or_default();
                values.clear();
                values.extend(support.iter().map(|&b| hist.bins[b as usize]));
                let mut hist = hist;
                clear_support(&mut hist, &support);
                self.clean.push(hist);
                KeptHistogram::Sparse { support, values }
            }
            support => {
                self.kept_whole += usize::from(support.is_some());
                KeptHistogram::Whole(hist, support)
            }
        }
    }

    /// Whether a histogram with `support` is kept whole: when its support covers at least a
    /// `MIN_KEPT_WHOLE_SHARE` of the bins, within the budget of `MAX_KEPT_WHOLE_BYTES`.
    fn worth_keeping_whole(&self, support: &[u32]) -> bool {
        support.len() * MIN_KEPT_WHOLE_SHARE >= self.n_bins && self.kept_whole < self.max_kept_whole
    }

    /// The histogram `keep` took, bit for bit, and its support.
    pub(super) fn restore(&mut self, kept: KeptHistogram) -> (Histogram, Option<Vec<u32>>) {
        match kept {
            KeptHistogram::Whole(hist, support) => {
                self.kept_whole -= usize::from(support.is_some());
                (hist, support)
            }
            KeptHistogram::Sparse { support, values } => {
                let mut hist = self.zeroed();
                for (&b, &value) in support.iter().zip(&values) {
                    hist.bins[b as usize] = value;
                }
                self.values.push(values);
                (hist, Some(support))
            }
        }
    }

    /// Takes back what a node kept that will not be split.
    pub(super) fn discard(&mut self, kept: KeptHistogram) {
        match kept {
            KeptHistogram::Whole(hist, support) => {
                self.kept_whole -= usize::from(support.is_some());
                self.release(hist, support);
            }
            KeptHistogram::Sparse { support, values } => {
                self.supports.push(support);
                self.values.push(values);
            }
        }
    }
}

#[cfg(test)]
#[path = "support_tests.rs"]
mod tests;
