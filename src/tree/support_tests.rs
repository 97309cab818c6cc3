use super::*;
use crate::data::test_data::binned;
use crate::rng::uniform;
use crate::tree::split::{best_split_bounded, best_split_within};
use crate::tree::{Candidates, SplitParams};

fn bits(b: &BinStats) -> (u64, u64, u32) {
    (b.sum_vt.to_bits(), b.sum_v.to_bits(), b.count)
}

fn same_bins(a: &Histogram, b: &Histogram, ranges: &[(usize, usize)], what: &str) {
    for &(start, len) in ranges {
        for i in start..start + len {
            assert_eq!(bits(&a.bins[i]), bits(&b.bins[i]), "{what}: bin {i}");
        }
    }
}

/// Every bin outside `support` is +0.0, +0.0, 0.
fn zero_outside(hist: &Histogram, support: &[u32]) {
    assert!(support.windows(2).all(|w| w[0] < w[1]), "ascending");
    for (i, bin) in hist.bins.iter().enumerate() {
        if support.binary_search(&(i as u32)).is_err() {
            assert_eq!(bits(bin), (0, 0, 0), "bin {i} outside the support");
        }
    }
}

#[test]
fn histograms_on_a_support_and_their_splits_equal_the_dense_ones_bit_for_bit() {
    let mut state = 11;
    let n = 3_000;
    // Fine and coarse numeric features, one with missing values; targets with exact zeros and
    // negative zeros, weights with zeros.
    let columns: Vec<Vec<f64>> = (0..6)
        .map(|j| {
            (0..n)
                .map(|_| {
                    let u = uniform(&mut state);
                    match j {
                        2 if u < 0.2 => f64::NAN,
                        3 => (u * 4.0).floor(),
                        _ => u * (1 + j) as f64,
                    }
                })
                .collect()
        })
        .collect();
    let data = binned(&columns);
    // The best splits cut the coarse feature before its last level: a threshold next to the
    // last, which a scan of the support must not miss.
    let vt: Vec<f64> = (0..n)
        .map(|i| match i % 7 {
            0 => 0.0,
            1 => -0.0,
            _ => uniform(&mut state) - 0.5 + 4.0 * f64::from(columns[3][i] == 3.0),
        })
        .collect();
    let v: Vec<f64> = (0..n)
        .map(|i| if i % 5 == 0 { 0.0 } else { uniform(&mut state) })
        .collect();
    let weighted = RowStats::new(&vt, &v);
    let uncounted = weighted.without_counts(8);
    let quantized = [RowStats::new(&vt, &[]), weighted, uncounted]
        .map(|stats| stats.quantized(None, 11, 8).expect("quantizable"));
    let stats_kinds = [
        RowStats::new(&vt, &[]),
        RowStats::Uniform { vt: &vt, v: 0.5 },
        weighted,
        uncounted,
        RowStats::Quantized(quantized[0].stats()),
        RowStats::Quantized(quantized[1].stats()),
        RowStats::Quantized(quantized[2].stats()),
    ];
    let subset = [0, 2, 3, 5];
    let params = SplitParams {
        l2_leaf: 0.1,
        min_samples_leaf: 2,
        min_weight_leaf: 0.0,
        min_split_gain: 0.0,
        categorical: Default::default(),
        noise: None,
    };
    let n_bins = data.total_bins();
    let thresholds = (0..6)
        .map(|f| (0..256).map(|t| (f + t) % 3 != 0).collect())
        .collect();
    let candidate_sets = [
        Candidates::All,
        Candidates::Features(vec![true, false, true, true, true, true]),
        Candidates::Splits(thresholds),
    ];
    let mut pool = HistogramPool::new(n_bins, Vec::new());
    let mut kept_whole = 0;
    for stats in &stats_kinds {
        assert!(zero_is_positive(stats));
        for features in [Features::All, Features::Only(&subset)] {
            let ranges = features.ranges(&data);
            // A node of 120 rows, split into 40 and 80, whose histogram is its parent's minus
            // its sibling's: the larger child has rounding residues in bins where it has no rows.
            let node: Vec<u32> = (0..n as u32).filter(|r| r % 25 == 3).collect();
            let sibling: Vec<u32> = (0..n as u32).filter(|r| r % 25 == 4).collect();
            let above: Vec<u32> = (0..n as u32).filter(|r| matches!(r % 25, 3 | 4)).collect();
            let (small, large): (Vec<u32>, Vec<u32>) = node.iter().partition(|&&r| r % 3 == 0);
            let uncounted = |rows: &[u32]| stats.count_bounds().map(|_| rows.to_vec());
            let dense = |rows: &[u32]| {
                let mut hist = Histogram {
                    bins: vec![BinStats::default(); n_bins],
                };
                hist.build_into(&data, rows, stats, features);
                hist
            };
            let mut parent = dense(&above);
            parent.subtract_features(&dense(&sibling), &data, features);
            let small_dense = dense(&small);
            let mut large_dense = parent.clone();
            large_dense.subtract_features(&small_dense, &data, features);

            let mut small_sparse = pool.zeroed();
            let mut small_support = pool.support_list();
            build_on_support(
                &mut small_sparse,
                &mut small_support,
                &mut pool.scratch,
                &data,
                &small,
                stats,
                features,
            );
            same_bins(&small_sparse, &small_dense, &ranges, "built on a support");
            zero_outside(&small_sparse, &small_support);
            let mut large_sparse = parent.clone();
            subtract_on_support(&mut large_sparse, &small_sparse, &small_support);
            same_bins(
                &large_sparse,
                &large_dense,
                &ranges,
                "subtracted on a support",
            );

            let mut parent_support = Vec::new();
            support_of_dense(
                &parent,
                &mut parent_support,
                &mut pool.scratch,
                &data,
                uncounted(&node).as_deref(),
                features,
            );
            zero_outside(&parent, &parent_support);
            if stats.count_bounds().is_none() {
                let residues = (ranges.iter().flat_map(|&(s, l)| s..s + l)).filter(|&b| {
                    large_dense.bins[b].count == 0 && bits(&large_dense.bins[b]) != (0, 0, 0)
                });
                if matches!(stats, RowStats::Quantized(_)) {
                    // Sums of multiples of a power of two subtract exactly.
                    assert_eq!(residues.count(), 0, "quantized sums subtract exactly");
                } else {
                    assert!(residues.count() > 0, "bins without rows, not zero");
                }
            }
            let mut large_support = parent_support.clone();
            shrink_support(
                &large_sparse,
                &mut large_support,
                &mut pool.scratch,
                &data,
                uncounted(&large).as_deref(),
                features,
            );
            assert!(large_support.len() < parent_support.len());
            zero_outside(&large_sparse, &large_support);
            assert!(pool.scratch.all_clear(), "the bitmap is left clear");

            for (hist, support, rows) in [
                (&small_sparse, &small_support, &small),
                (&large_sparse, &large_support, &large),
            ] {
                let total = hist
                    .feature(&data, 0)
                    .iter()
                    .fold(BinStats::default(), |a, &b| a + b);
                for candidates in &candidate_sets {
                    let on_support =
                        |hist: &Histogram, support: Option<&[u32]>| match stats.count_bounds() {
                            None => Ok(best_split_within(
                                hist, support, &data, total, &params, candidates, None,
                            )),
                            Some(bounds) => best_split_bounded(
                                hist, support, &data, total, &params, candidates, bounds, None,
                            ),
                        };
                    let (sparse, dense) = (on_support(hist, Some(support)), on_support(hist, None));
                    assert_eq!(sparse, dense);
                    if let (Ok(Some(s)), Ok(Some(d))) = (&sparse, &dense) {
                        assert_eq!(s.gain.to_bits(), d.gain.to_bits());
                        assert_eq!(bits(&s.left), bits(&d.left));
                        assert_eq!(bits(&s.right), bits(&d.right));
                    }
                    if matches!(candidates, Candidates::All) && features == Features::All {
                        assert!(
                            matches!(dense, Ok(Some(_)) | Err(_)),
                            "{} rows split",
                            rows.len()
                        );
                    }
                }
            }

            // A waiting node keeps its histogram whole, or its support's values only (a support
            // that is a small part of the bins, or past the budget), and gets back the same bins
            // either way.
            for budget in [usize::MAX, 0] {
                pool.max_kept_whole = budget;
                let whole = pool.worth_keeping_whole(&large_support);
                assert_eq!(
                    whole,
                    budget > 0 && 4 * large_support.len() >= n_bins,
                    "{} of {n_bins} bins",
                    large_support.len()
                );
                kept_whole += usize::from(whole);
                let kept = pool.keep(large_sparse.clone(), Some(large_support.clone()));
                match &kept {
                    KeptHistogram::Whole(_, support) => {
                        assert!(whole);
                        assert_eq!(support.as_deref(), Some(&large_support[..]));
                    }
                    KeptHistogram::Sparse { values, .. } => {
                        assert!(!whole);
                        assert_eq!(values.len(), large_support.len());
                    }
                }
                let (restored, support) = pool.restore(kept);
                assert_eq!(support.as_deref(), Some(&large_support[..]));
                same_bins(&restored, &large_sparse, &ranges, "kept and restored");
                zero_outside(&restored, &large_support);
                pool.release(restored, support);
                // A node that is never split gives its histogram back clean.
                let kept = pool.keep(large_sparse.clone(), Some(large_support.clone()));
                pool.discard(kept);
                assert_eq!(pool.kept_whole, 0);
            }
            pool.release(small_sparse, Some(small_support));
        }
    }
    assert!(kept_whole > 0, "no histogram was kept whole");
    // Histograms released with their supports come back all zero.
    for _ in 0..3 {
        let hist = pool.zeroed();
        assert!(hist.bins.iter().all(|b| bits(b) == (0, 0, 0)));
    }
}
