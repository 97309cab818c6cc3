//! Gradient-based one-side sampling (GOSS; Ke et al., "LightGBM: A Highly Efficient Gradient
//! Boosting Decision Tree", NeurIPS 2017, Alg. 2): a tree is grown on the fraction `top_rate` of
//! its rows with the largest |v t| (for a Newton tree, |g|: the rows the current model fits
//! worst) and a random fraction `other_rate` of the others, whose statistics are scaled by
//! (1 − top_rate) / other_rate so that every histogram sum stays an unbiased estimate of the sum
//! over all rows. Each of the others is drawn on its own, with that fraction's probability (as
//! LightGBM draws them): their number varies around `other_rate` of the rows. Rows with small
//! gradients are nearly fitted already: dropping most of them changes the split gains least.
//!
//! The draw depends on the tree's statistics, the rows it may use and a seed only: the same
//! rows whatever the thread count (ties in |v t| go to the lower row index) and, in a
//! data-parallel fit, whatever the number of ranks (the threshold is selected over all of
//! them, the random part keyed by the global row index). It costs a selection of the threshold
//! (over the ranks: 8 sums of 256 counts, twice), parallel passes over the rows and copies of
//! the statistics.

use super::node_sample::fraction_of;
use crate::collective::{kth_smallest, Collective};
use crate::rng::bits_at;
use rayon::prelude::*;

/// GOSS's two fractions and the seed of this iteration's random part.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Goss {
    pub top_rate: f64,
    pub other_rate: f64,
    pub seed: u64,
}

/// Rows per task of the draw.
const CHUNK: usize = 1 << 14;

/// A uniform draw in [0, 1) for the row of global index `row`.
fn uniform_at(seed: u64, row: u64) -> f64 {
    (bits_at(seed, row) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// The rows a GOSS tree is grown on (ascending) and the statistics of every row, those of the
/// sampled small-gradient rows scaled up.
#[derive(Debug)]
pub(crate) struct GossDraw {
    pub rows: Vec<u32>,
    pub vt: Vec<f64>,
    pub v: Vec<f64>,
}

/// Where a GOSS draw's rows are: this rank's rows and, in a data-parallel fit, their global
/// indices and the ranks holding the others.
#[derive(Clone, Copy)]
pub(crate) struct GossRows<'a> {
    /// The rows the tree may use (every row when `None`).
    pub rows: Option<&'a [u32]>,
    /// The global index of every row of this rank (`None`: its own index).
    pub global: Option<&'a [u64]>,
    pub collective: &'a dyn Collective,
}

impl Goss {
    /// The draw among the rows of `at` for statistics `vt`, `v` (`v` empty: unit weights);
    /// `None` when it would keep every row. Over the ranks of a data-parallel fit the rows
    /// drawn are those one process would draw from all the rows: the top rows are the `top_rate`
    /// of all the rows (the threshold and its ties selected over the ranks, ties going to the
    /// lower global index) and each other row's draw is keyed by its global index.
    pub(crate) fn draw(&self, vt: &[f64], v: &[f64], at: GossRows<'_>) -> Option<GossDraw> {
        let all: Vec<u32>;
        let rows = match at.rows {
            Some(rows) => rows,
            None => {
                all = (0..vt.len() as u32).collect();
                &all
            }
        };
        let collective = at.collective;
        let m = if collective.world() > 1 {
            let mut m = [rows.len() as f64];
            collective.sum(&mut m);
            m[0] as usize
        } else {
            rows.len()
        };
        let n_top = fraction_of(m, self.top_rate);
        let n_other = fraction_of(m, self.other_rate).min(m - n_top);
        if n_top + n_other >= m {
            return None;
        }
        let id = |r: u32| at.global.map_or(u64::from(r), |global| global[r as usize]);
        // Ascending keys of descending |v t| (a NaN first, as the largest).
        let key = |r: u32| !vt[r as usize].abs().to_bits();
        let keys: Vec<u64> = rows.par_iter().map(|&r| key(r)).collect();
        // The n_top-th largest |v t|; rows above it are top rows, and of the rows equal to it
        // the first ones in global row order, up to `tie_cut`.
        let threshold = kth_smallest(collective, &keys, n_top as u64);
        drop(keys);
        let ties: Vec<u64> = (rows.par_iter())
            .filter(|&&r| key(r) == threshold.key)
            .map(|&r| id(r))
            .collect();
        let tie_cut = kth_smallest(collective, &ties, n_top as u64 - threshold.below).key;
        drop(ties);
        let top = |r: u32| {
            let k = key(r);
            k < threshold.key || (k == threshold.key && id(r) <= tie_cut)
        };
        // Each other row is drawn with probability n_other / (m − n_top), from its own random
        // bits (as LightGBM draws them): about n_other rows, each scaled by the inverse.
        let p = n_other as f64 / (m - n_top) as f64;
        let picked: Vec<(Vec<u32>, Vec<u32>)> = (rows.par_chunks(CHUNK))
            .map(|chunk| {
                let (mut drawn, mut others) = (Vec::new(), Vec::new());
                for &r in chunk {
                    if top(r) {
                        drawn.push(r);
                    } else if uniform_at(self.seed, id(r)) < p {
                        drawn.push(r);
                        others.push(r);
                    }
                }
                (drawn, others)
            })
            .collect();
        let drawn: Vec<u32> = picked.iter().flat_map(|(d, _)| d.iter().copied()).collect();
        let others = picked.iter().flat_map(|(_, o)| o.iter().copied());
        let scale = 1.0 / p;
        let mut vt = vt.to_vec();
        let mut v = if v.is_empty() {
            vec![1.0; vt.len()]
        } else {
            v.to_vec()
        };
        for r in others {
            vt[r as usize] *= scale;
            v[r as usize] *= scale;
        }
        Some(GossDraw { rows: drawn, vt, v })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collective::Local;
    use crate::rng::uniform;

    fn alone(rows: Option<&[u32]>) -> GossRows<'_> {
        GossRows {
            rows,
            global: None,
            collective: &Local,
        }
    }

    #[test]
    fn keeps_the_largest_gradients_and_scales_a_random_part_of_the_rest() {
        let mut state = 4;
        let n = 1_000;
        let vt: Vec<f64> = (0..n).map(|_| uniform(&mut state) - 0.5).collect();
        let goss = Goss {
            top_rate: 0.2,
            other_rate: 0.1,
            seed: 9,
        };
        let draw = goss.draw(&vt, &[], alone(None)).expect("a sample");
        assert!(draw.rows.windows(2).all(|w| w[0] < w[1]));
        // Brute force: the 200 rows of largest |vt|.
        let mut by_size: Vec<usize> = (0..n).collect();
        by_size.sort_by(|&a, &b| vt[b].abs().total_cmp(&vt[a].abs()));
        let top = &by_size[..200];
        let threshold = vt[by_size[199]].abs();
        for &r in top {
            assert!(draw.rows.contains(&(r as u32)));
            assert_eq!(
                (draw.vt[r], draw.v[r]),
                (vt[r], 1.0),
                "top rows keep their statistics"
            );
        }
        // About 100 others (each of the 800 drawn with probability 1/8; the spread is 9.4),
        // scaled by (1 − a)/b = 8, all below the threshold.
        let others: Vec<usize> = (draw.rows.iter().map(|&r| r as usize))
            .filter(|r| !top.contains(r))
            .collect();
        assert!((60..=140).contains(&others.len()), "{}", others.len());
        for &r in &others {
            assert!(vt[r].abs() <= threshold);
            assert_eq!((draw.vt[r], draw.v[r]), (8.0 * vt[r], 8.0));
        }
        // Unbiased: over many seeds, the scaled sum of the small rows matches their sum.
        let small: f64 = by_size[200..].iter().map(|&r| vt[r]).sum();
        let seeds = 300;
        let mean = (0..seeds)
            .map(|seed| {
                let draw = Goss { seed, ..goss }.draw(&vt, &[], alone(None)).unwrap();
                (draw.rows.iter().map(|&r| r as usize))
                    .filter(|r| !top.contains(r))
                    .map(|r| draw.vt[r])
                    .sum::<f64>()
            })
            .sum::<f64>()
            / seeds as f64;
        let spread = by_size[200..].iter().map(|&r| vt[r].abs()).sum::<f64>() / 10.0;
        assert!((mean - small).abs() < spread, "{mean} against {small}");
        assert_eq!(
            goss.draw(&vt, &[], alone(None)).unwrap().rows,
            draw.rows,
            "seeded"
        );
        assert!(
            Goss { seed: 10, ..goss }
                .draw(&vt, &[], alone(None))
                .unwrap()
                .rows
                != draw.rows
        );
    }

    #[test]
    fn draws_within_the_given_rows_and_keeps_all_when_the_rates_cover_them() {
        let vt: Vec<f64> = (0..100).map(|i| (i as f64 - 50.0) / 7.0).collect();
        let w: Vec<f64> = (0..100).map(|i| 1.0 + i as f64 / 100.0).collect();
        let given: Vec<u32> = (0..100).filter(|r| r % 2 == 0).collect();
        let goss = Goss {
            top_rate: 0.1,
            other_rate: 0.2,
            seed: 1,
        };
        let draw = goss.draw(&vt, &w, alone(Some(&given))).expect("a sample");
        assert!(draw.rows.len() > 5 && draw.rows.len() < 50);
        assert!(draw.rows.iter().all(|r| r % 2 == 0));
        // The 5 largest |vt| among the even rows: |−50|, |−48|, |48|, |−46|, |46|.
        for r in [0u32, 2, 98, 4, 96] {
            assert!(draw.rows.contains(&r));
        }
        let full = Goss {
            top_rate: 0.5,
            other_rate: 0.5,
            seed: 1,
        };
        assert!(full.draw(&vt, &w, alone(Some(&given))).is_none());
    }
}
