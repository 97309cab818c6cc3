//! Stochastic gradient boosting (Friedman, "Stochastic gradient boosting", 2002), with the column
//! sampling of LightGBM and XGBoost: every iteration draws, from the booster's seeded generator,
//! - `subsample`: a fraction of the rows, without replacement. The iteration's trees are grown on
//!   those rows only (histograms, split gains and leaf values), and the step rules' line searches
//!   see only them (the other rows get weight 0 there); the model update applies the trees to
//!   every row;
//! - `colsample_bytree`: a fraction of the features, which the iteration's trees may split on;
//! - `colsample_bynode`: a seed from which each node of those trees draws a fraction of the
//!   tree's features (see `GrowOptions`).
//!
//! - `bootstrap = "bayesian"`: a weight (−log U)^`bagging_temperature` for every row (CatBoost's
//!   Bayesian bootstrap; Prokhorenkova et al. 2018), which multiplies its sample weight in
//!   everything the iteration fits: the trees' gradients and Hessians, their leaf values and the
//!   line searches;
//! - `random_strength`: the seed and strength of the noise on the trees' split scores
//!   (tree/noise.rs).
//!
//! The trees of one iteration (K classes, AGBM's two trees, `repeated_gbm`'s inner fits) share the
//! draw, as LightGBM's bagging does for the trees of its classes. Nothing is drawn when a fraction
//! is 1, so the generator's sequence, and every model, is then the same as without sampling.
//! Feature draws are serial and take one generator value per pick: they do not depend on the
//! thread count. The rows are keyed by their global index instead, so that a data-parallel fit
//! draws, over all its ranks, the rows one process draws from all the rows: `subsample` keeps
//! the round(fraction · n) rows of smallest key `bits_at(seed of the iteration, global index)`
//! (selected over the ranks, `collective::kth_smallest`), GOSS selects its threshold over the
//! ranks and keys its random part the same way (tree/goss.rs), the bootstrap's weights and the
//! split noise are functions of (seed, iteration, global row index) and (seed, iteration, node,
//! feature, bin). None of them takes anything from the generator.

use super::vectors::par_fill;
use super::weights::Weights;
use crate::collective::{kth_smallest, Collective};
use crate::data::BinnedData;
use crate::params::{Bootstrap, Params, SampleStrategy};
use crate::rng::{bits_at, Rng};
use crate::tree::{fraction_of, Candidates, Constraints, Goss, GrowOptions, SplitNoise};
use rayon::prelude::*;
use std::ops::Range;
use std::sync::OnceLock;

/// One iteration's draw.
#[derive(Debug, Default)]
pub struct Sample {
    /// The drawn rows, ascending; `None`: every row.
    rows: Option<Vec<u32>>,
    /// The sample weights with the rows not drawn at 0, for the line searches; built when one
    /// first needs them (Newton steps have no line search).
    line_search_weights: OnceLock<Weights>,
    /// `colsample_bytree`'s features.
    features: Option<Vec<bool>>,
    colsample_bynode: f64,
    node_seed: u64,
    /// The seed of this iteration's rounding of quantized statistics (`quantized_gradients`).
    quantize_seed: Option<u64>,
    /// GOSS's rates and the seed of this iteration's random part (`sample_strategy="goss"`).
    goss: Option<Goss>,
    /// The global index of every row, for GOSS in a data-parallel fit.
    global_rows: Option<Vec<u64>>,
    /// The sample weights times the Bayesian bootstrap's (`bootstrap = "bayesian"`).
    bootstrapped: Option<Weights>,
    noise: Option<SplitNoise>,
}

impl Sample {
    /// Draws this iteration's rows and features. `global`: the global indices of this rank's
    /// rows, in order; `w`: their sample weights.
    pub fn draw(
        params: &Params,
        data: &BinnedData,
        rng: &mut Rng,
        iteration: usize,
        (global, w): (&[Range<u64>], &Weights),
        collective: &dyn Collective,
    ) -> Sample {
        let bootstrapped = (params.bootstrap == Bootstrap::Bayesian
            && params.bagging_temperature > 0.0)
            .then(|| {
                let seed = bits_at(params.seed ^ 0xba9e_5b00_7577_a9e0, iteration as u64);
                let mut weights = bayesian_weights(seed, params.bagging_temperature, global);
                if let Some(given) = w.given() {
                    weights.iter_mut().zip(given).for_each(|(b, w)| *b *= w);
                }
                let mut weights = Weights::new(Some(weights), w.n_rows());
                weights.add_totals_over(collective);
                weights
            });
        let noise = SplitNoise::of_iteration(
            params.seed,
            iteration,
            params.random_strength,
            params.learning_rate,
        );
        let n = data.n_rows();
        let row_seed = bits_at(params.seed ^ 0x5ab5_a3b1_e000_0001, iteration as u64);
        let rows = (params.subsample < 1.0)
            .then(|| draw_rows(n, params.subsample, row_seed, global, collective));
        let features = (params.colsample_bytree < 1.0).then(|| {
            let p = data.n_features();
            let mut allowed = vec![false; p];
            for f in rng.sample(p, fraction_of(p, params.colsample_bytree)) {
                allowed[f] = true;
            }
            allowed
        });
        let node_seed = if params.colsample_bynode < 1.0 {
            rng.next_u64()
        } else {
            0
        };
        // Drawn only when asked for: the other parameters' draws stay what they were.
        let quantize_seed = params.quantized_gradients.then(|| rng.next_u64());
        let goss = params.sample_strategy == SampleStrategy::Goss;
        let global_rows = (goss && collective.world() > 1).then(|| global_indices(global));
        let goss = goss.then(|| Goss {
            top_rate: params.top_rate,
            other_rate: params.other_rate,
            seed: rng.next_u64(),
        });
        Sample {
            rows,
            line_search_weights: OnceLock::new(),
            features,
            colsample_bynode: params.colsample_bynode,
            node_seed,
            quantize_seed,
            goss,
            global_rows,
            bootstrapped,
            noise,
        }
    }

    /// The weights of this iteration's fits: `w`, times the bootstrap's weights if any.
    pub fn weights<'a>(&'a self, w: &'a Weights) -> &'a Weights {
        self.bootstrapped.as_ref().unwrap_or(w)
    }

    /// `candidates` restricted to the drawn features.
    pub fn restrict(&self, candidates: Candidates) -> Candidates {
        match &self.features {
            Some(features) => candidates.within(features),
            None => candidates,
        }
    }

    /// The weights the line searches use: 0 on the rows not drawn.
    pub fn line_search_weights<'a>(&'a self, w: &'a Weights) -> &'a Weights {
        let Some(rows) = &self.rows else {
            return w;
        };
        self.line_search_weights.get_or_init(|| {
            let n = w.n_rows();
            let mut masked = vec![0.0; n];
            for &r in rows {
                masked[r as usize] = w.given().map_or(1.0, |w| w[r as usize]);
            }
            Weights::new(Some(masked), n)
        })
    }

    /// The rows this iteration's trees are grown on, ascending; `None`: every row.
    pub fn rows(&self) -> Option<&[u32]> {
        self.rows.as_deref()
    }

    /// The options of this iteration's trees, which must respect `constraints`.
    pub fn grow_options<'a>(
        &'a self,
        constraints: &'a Constraints,
        collective: &'a dyn Collective,
    ) -> GrowOptions<'a> {
        GrowOptions {
            rows: self.rows.as_deref(),
            colsample_bynode: self.colsample_bynode,
            node_seed: self.node_seed,
            constraints: Some(constraints),
            collective: Some(collective),
            quantize_seed: self.quantize_seed,
            goss: self.goss,
            global_rows: self.global_rows.as_deref(),
            noise: self.noise,
        }
    }
}

/// The Bayesian bootstrap's weight (−log U)^t of every row, U uniform in (0, 1] from the
/// iteration's `seed` and the row's global index (`rows`: the global indices of the rows, in
/// order).
fn bayesian_weights(seed: u64, temperature: f64, rows: &[Range<u64>]) -> Vec<f64> {
    let n = rows.iter().map(|r| (r.end - r.start) as usize).sum();
    // One range (a process holding every row, or a rank's block): the index is an offset.
    let global: Vec<u64> = match rows {
        [_] => Vec::new(),
        _ => rows.iter().flat_map(Clone::clone).collect(),
    };
    let first = rows.first().map_or(0, |r| r.start);
    let mut weights = vec![0.0; n];
    par_fill(&mut weights, |i| {
        let row = global.get(i).copied().unwrap_or(first + i as u64);
        let u = ((bits_at(seed, row) >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64);
        let e = -u.ln();
        if temperature == 1.0 {
            e
        } else {
            e.powf(temperature)
        }
    });
    weights
}

/// The global index of every row (`rows`: the global indices of the rows, in order).
fn global_indices(rows: &[Range<u64>]) -> Vec<u64> {
    rows.iter().flat_map(Clone::clone).collect()
}

/// This rank's rows (ascending) of the round(fraction · N) rows of smallest key among the N rows
/// of every rank, the key of a row `bits_at(seed, its global index)`: distinct for distinct
/// rows (the finaliser is a bijection), so exactly that many rows are drawn, each subset of
/// that size equally likely, and the same rows whatever the ranks hold (`rows`: the global
/// indices of this rank's `n` rows).
fn draw_rows(
    n: usize,
    fraction: f64,
    seed: u64,
    rows: &[Range<u64>],
    collective: &dyn Collective,
) -> Vec<u32> {
    let keys: Vec<u64> = match rows {
        [one] => (one.start..one.end)
            .into_par_iter()
            .map(|g| bits_at(seed, g))
            .collect(),
        _ => global_indices(rows)
            .par_iter()
            .map(|&g| bits_at(seed, g))
            .collect(),
    };
    let total = if collective.world() > 1 {
        let mut total = [n as f64];
        collective.sum(&mut total);
        total[0] as usize
    } else {
        n
    };
    let last = kth_smallest(collective, &keys, fraction_of(total, fraction) as u64).key;
    (0..n as u32)
        .filter(|&r| keys[r as usize] <= last)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bayesian_weights_have_the_moments_of_powers_of_exponentials() {
        // −log U is Exp(1), so (−log U)^t has mean Γ(1 + t) and variance Γ(1 + 2t) − Γ(1 + t)².
        let n = 200_000u64;
        let half_pi = std::f64::consts::PI / 4.0;
        for (t, mean, variance) in [
            (0.5, half_pi.sqrt(), 1.0 - half_pi),
            (1.0, 1.0, 1.0),
            (2.0, 2.0, 20.0),
        ] {
            let w = bayesian_weights(17, t, &[0..n]);
            let m = w.iter().sum::<f64>() / n as f64;
            let v = w.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n as f64;
            // Five standard errors: of the mean √(variance / n), of the variance (from the
            // fourth moment) 0.003, 0.009, 0.45 at t = 0.5, 1, 2.
            let se_variance = [0.003, 0.009, 0.45][(t * 2.0) as usize / 2];
            assert!(
                (m - mean).abs() < 5.0 * (variance / n as f64).sqrt(),
                "t={t}: mean {m}"
            );
            assert!(
                (v - variance).abs() < 5.0 * se_variance,
                "t={t}: variance {v}"
            );
            assert!(w.iter().all(|x| x.is_finite() && *x >= 0.0));
        }
    }

    #[test]
    fn bayesian_weights_follow_the_global_row_index() {
        // Rows 0..1000 held in one block, or by two ranks as 0..400 and 400..1000, or in pieces
        // out of order: each row gets the same weight.
        let all = bayesian_weights(3, 1.0, &[0..1000]);
        let low = bayesian_weights(3, 1.0, &[0..400]);
        let high = bayesian_weights(3, 1.0, &[400..1000]);
        assert_eq!([low, high].concat(), all);
        let pieces = bayesian_weights(3, 1.0, &[700..1000, 0..700]);
        assert_eq!([&all[700..], &all[..700]].concat(), pieces);
        assert_ne!(bayesian_weights(4, 1.0, &[0..1000]), all);
    }

    #[test]
    fn row_draws_have_the_asked_size_and_cover_rows_evenly() {
        let mut hits = vec![0u32; 100];
        for seed in 0..2_000 {
            let rows = draw_rows(100, 0.3, seed, &[0..100], &crate::collective::Local);
            assert_eq!(rows.len(), 30);
            assert!(rows.windows(2).all(|w| w[0] < w[1]));
            rows.iter().for_each(|&r| hits[r as usize] += 1);
        }
        // Each row is drawn with probability 0.3: 600 of 2000 draws, sd ≈ 20.5.
        assert!(hits.iter().all(|&h| (500..700).contains(&h)), "{hits:?}");
    }

    #[test]
    fn row_draws_follow_the_global_row_index() {
        // Rows 0..1000 held in one block or in two pieces out of order: the same rows drawn.
        let local = &crate::collective::Local;
        let all = draw_rows(1000, 0.4, 8, &[0..1000], local);
        let pieces = draw_rows(1000, 0.4, 8, &[700..1000, 0..700], local);
        let global = |r: u32| if r < 300 { r + 700 } else { r - 300 };
        let mut from_pieces: Vec<u32> = pieces.into_iter().map(global).collect();
        from_pieces.sort_unstable();
        assert_eq!(from_pieces, all);
        assert_ne!(draw_rows(1000, 0.4, 9, &[0..1000], local), all);
    }
}
