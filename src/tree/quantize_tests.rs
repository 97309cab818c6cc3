//! Tests of quantize.rs: the rounded statistics against the exact ones, through the histograms.

use super::*;
use crate::data::test_data::binned;
use crate::rng::uniform;
use crate::tree::histogram::{Histogram, RowStats};
use crate::tree::histogram_kernel::Features;

/// Gradient-like targets of both signs and Hessian-like weights of one loss, on `n` rows.
fn statistics(n: usize, state: &mut u64) -> (Vec<f64>, Vec<f64>) {
    let p: Vec<f64> = (0..n).map(|_| uniform(state)).collect();
    let vt = p
        .iter()
        .map(|&p| f64::from(u8::from(p < 0.3)) - p)
        .collect();
    let v = p.iter().map(|&p| p * (1.0 - p)).collect();
    (vt, v)
}

#[test]
fn every_bin_is_within_one_step_a_row_of_the_exact_sums_with_exact_counts() {
    let mut state = 3;
    let n = 30_000;
    let columns: Vec<Vec<f64>> = (0..4)
        .map(|j| {
            (0..n)
                .map(|_| (uniform(&mut state) * (5 + 40 * j) as f64).floor())
                .collect()
        })
        .collect();
    let data = binned(&columns);
    let (vt, v) = statistics(n, &mut state);
    let rows: Vec<u32> = (0..n as u32).filter(|r| r % 3 != 0).collect();
    let build = |stats: &RowStats<'_>| {
        let mut hist = Histogram {
            bins: vec![BinStats::default(); data.total_bins()],
        };
        hist.build_into(&data, &rows, stats, Features::All);
        hist
    };
    let weighted = RowStats::new(&vt, &v);
    for exact in [
        RowStats::new(&vt, &[]),
        weighted,
        weighted.without_counts(6),
    ] {
        let quantization = exact.quantized(Some(&rows), 99, 6).expect("quantized");
        let levels = (i32::MAX as usize / rows.len()) as f64;
        assert!(
            largest_magnitude(&vt, Fitted { rows: None, n }).unwrap() / quantization.vt_scale
                > levels / 2.0
        );
        let (exact_hist, quantized) = (
            build(&exact),
            build(&RowStats::Quantized(quantization.stats())),
        );
        for (e, q) in exact_hist.bins.iter().zip(&quantized.bins) {
            assert_eq!(q.count, e.count, "counted where the exact bins are");
            let rows_in_bin = if e.count > 0 {
                e.count as f64
            } else {
                n as f64
            };
            assert!((q.sum_vt - e.sum_vt).abs() <= quantization.vt_scale * rows_in_bin);
            if let QuantizedV::Scaled(scale) | QuantizedV::Counted(scale) = quantization.v {
                assert!((q.sum_v - e.sum_v).abs() <= scale * rows_in_bin);
                assert!(q.sum_v >= 0.0);
            }
        }
        // The totals are the histogram's sums (each feature's bins hold every row once).
        let total = quantization.stats().totals(&rows);
        let first_feature = &quantized.bins[..data.offsets()[1]];
        let sum_vt: f64 = first_feature.iter().map(|b| b.sum_vt).sum();
        assert_eq!(sum_vt, total.sum_vt);
        assert_eq!(total.count as usize, rows.len());
    }
}

#[test]
fn rounding_is_unbiased_and_negative_sums_unpack() {
    let mut state = 8;
    let n = 2_000;
    let (vt, v) = statistics(n, &mut state);
    let exact = RowStats::new(&vt, &v).without_counts(6);
    let rows: Vec<u32> = (0..n as u32).collect();
    let exact_total = exact.totals(&rows);
    // A few hundred rows, coarsely rounded (as over 100M rows): the sums' errors average out
    // over seeds, at 1/√seeds of one sum's spread.
    let seeds = 400;
    let (mut error, mut spread) = (0.0, 0.0);
    for seed in 0..seeds {
        let quantization = quantize_with_levels(&exact, seed, 21);
        let total = quantization.stats().totals(&rows[..300]);
        let exact_part = exact.totals(&rows[..300]);
        let e = total.sum_vt - exact_part.sum_vt;
        error += e;
        spread += e * e;
        assert!(
            total.sum_vt < 0.0 && exact_part.sum_vt < 0.0,
            "a negative sum"
        );
    }
    let (mean, sd) = (error / seeds as f64, (spread / seeds as f64).sqrt());
    assert!(
        sd > 0.0 && mean.abs() < 4.0 * sd / (seeds as f64).sqrt(),
        "{mean} vs {sd}"
    );
    assert!(exact_total.sum_vt < 0.0);
}

#[test]
fn statistics_stay_exact_where_quantizing_cannot_hold_them() {
    let (vt, v) = statistics(100, &mut 1);
    let unit = RowStats::new(&vt, &[]);
    // Over 134M rows fewer than 16 levels remain.
    assert_eq!(levels_for(1_000_000), Some(2_147));
    assert_eq!(levels_for(100_000_000), Some(21));
    assert_eq!(levels_for(150_000_000), None);
    assert!(unit.quantized(None, 0, 6).is_some());
    // Counted weighted statistics carry their counts apart; negative weights would borrow
    // from the high word.
    let counted = RowStats::new(&vt, &v)
        .quantized(None, 0, 6)
        .expect("counted");
    assert!(counted.stats().count_bounds().is_none());
    let negative: Vec<f64> = v.iter().map(|&x| x - 0.01).collect();
    assert!(RowStats::new(&vt, &negative)
        .quantized(None, 0, 6)
        .is_none());
    let mut broken = vt.clone();
    broken[7] = f64::NAN;
    assert!(RowStats::new(&broken, &[]).quantized(None, 0, 6).is_none());
    broken[7] = f64::INFINITY;
    assert!(RowStats::new(&broken, &[]).quantized(None, 0, 6).is_none());
}

#[test]
fn the_scale_is_the_smallest_power_of_two_that_fits_the_levels() {
    for (largest, levels) in [
        (0.25, 2_147),
        (1.0, 16),
        (3.0, 16),
        (1e-300, 100),
        (7e5, 21),
    ] {
        let scale = scale_for(largest, levels);
        assert_eq!(scale.log2().fract(), 0.0, "a power of two");
        assert!(largest / scale <= levels as f64);
        assert!(largest / (scale / 2.0) > levels as f64);
    }
    assert_eq!(scale_for(0.0, 16), 1.0);
}

/// `stats` quantized to `levels` levels on all rows, as over many more rows.
fn quantize_with_levels(stats: &RowStats<'_>, seed: u64, levels: i64) -> Quantization {
    let RowStats::WeightedUncounted { vt, v, .. } = *stats else {
        panic!("weighted statistics without counts")
    };
    let fitted = Fitted {
        rows: None,
        n: vt.len(),
    };
    Quantization::with_levels(
        vt,
        QuantizedInput::Weighted(v, false),
        fitted,
        seed,
        levels,
        6,
    )
    .expect("quantized")
}

#[test]
fn only_the_fitted_rows_are_rounded() {
    let (vt, v) = statistics(1_000, &mut 6);
    let rows: Vec<u32> = (0..1_000).filter(|r| r % 4 == 1).collect();
    // The largest |vt| of all rows sits outside the fitted ones: it must not set the scale.
    let mut wide = vt.clone();
    wide[0] = 1e6;
    let quantize = |vt: &[f64]| {
        (RowStats::new(vt, &v).without_counts(6))
            .quantized(Some(&rows), 5, 6)
            .expect("quantized")
    };
    let (some, reference) = (quantize(&wide), quantize(&vt));
    assert_eq!(
        some.vt_scale, reference.vt_scale,
        "the scale of the fitted rows"
    );
    for r in 0..1_000 {
        if r % 4 == 1 {
            assert_eq!(some.packed[r], reference.packed[r], "row {r}");
            assert_ne!(some.packed[r], 0);
        } else {
            assert_eq!(some.packed[r], 0, "row {r} is not fitted");
        }
    }
}
