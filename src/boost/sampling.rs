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
//! The trees of one iteration (K classes, AGBM's two trees, `repeated_gbm`'s inner fits) share the
//! draw, as LightGBM's bagging does for the trees of its classes. Nothing is drawn when a fraction
//! is 1, so the generator's sequence, and every model, is then the same as without sampling.
//! Draws are serial and take one generator value per row (rows) or per pick (features): they do
//! not depend on the thread count.

use super::weights::Weights;
use crate::collective::Collective;
use crate::data::BinnedData;
use crate::params::{Params, SampleStrategy};
use crate::rng::Rng;
use crate::tree::{fraction_of, Candidates, Constraints, Goss, GrowOptions};
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
}

impl Sample {
    /// Draws this iteration's rows and features.
    /// `row_rng`: the generator of the rows when it is not `rng` (each rank of a data-parallel
    /// fit draws from its own rows).
    pub fn draw(
        params: &Params,
        data: &BinnedData,
        rng: &mut Rng,
        row_rng: Option<&mut Rng>,
    ) -> Sample {
        let n = data.n_rows();
        let rows = (params.subsample < 1.0).then(|| {
            let row_rng = match row_rng {
                Some(row_rng) => row_rng,
                None => &mut *rng,
            };
            draw_rows(n, params.subsample, row_rng)
        });
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
        let goss = (params.sample_strategy == SampleStrategy::Goss).then(|| Goss {
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
        }
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
        }
    }
}

/// round(fraction · n) distinct rows, ascending, each subset of that size equally likely:
/// selection sampling (Knuth, TAOCP vol. 2, Algorithm 3.4.2 S), one generator value per row.
fn draw_rows(n: usize, fraction: f64, rng: &mut Rng) -> Vec<u32> {
    let wanted = fraction_of(n, fraction);
    // Every row is written and the count only advances past the drawn ones: no branch to
    // mispredict (half of them at subsample = 0.5, which cost more than the draws themselves).
    let mut rows = vec![0u32; wanted + 1];
    let mut taken = 0;
    for i in 0..n {
        if taken == wanted {
            break;
        }
        rows[taken] = i as u32;
        taken += usize::from(rng.below(n - i) < wanted - taken);
    }
    rows.truncate(wanted);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_draws_have_the_asked_size_and_cover_rows_evenly() {
        let mut rng = Rng::new(5);
        let mut hits = vec![0u32; 100];
        for _ in 0..2_000 {
            let rows = draw_rows(100, 0.3, &mut rng);
            assert_eq!(rows.len(), 30);
            assert!(rows.windows(2).all(|w| w[0] < w[1]));
            rows.iter().for_each(|&r| hits[r as usize] += 1);
        }
        // Each row is drawn with probability 0.3: 600 of 2000 draws, sd ≈ 20.5.
        assert!(hits.iter().all(|&h| (500..700).contains(&h)), "{hits:?}");
    }
}
