//! Random strength (Prokhorenkova et al., "CatBoost: unbiased boosting with categorical
//! features", NeurIPS 2018): a node chooses its split by each candidate's score plus Gaussian
//! noise, so that near-equal candidates win in turn across trees, a regulariser of the split
//! choice that leaves the reported gains alone.
//!
//! The noise's standard deviation follows CatBoost's: `random_strength` times the derivatives'
//! root mean square over the tree's rows, √(Σ (v t)² / n) (v t = −g, weighted), times
//! n e^{−L} / (1 + n e^{−L}) with L = (iteration − 1) · learning rate, which keeps the noise
//! near full strength while the model is short and fades it once L passes log n. Its unit is
//! that of a derivative times √rows; the least-squares gain is (Σ v t)² / Σ v, a squared
//! such unit, so the noise is added to √gain (the same order of candidates without noise), the
//! unit of CatBoost's default score (the cosine of the derivatives with the leaf values).
//!
//! Each candidate's draw is a function of (seed, iteration, node, feature, threshold bin, which
//! side the missing values take) alone (`bits_at`): the same noise whatever the thread count,
//! the order nodes and features are searched in, or the rank.

use crate::rng::bits_at;

/// One tree's noise before its scale is known: the seed of (seed, iteration) and the factors of
/// its standard deviation that do not depend on the tree's rows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SplitNoise {
    pub seed: u64,
    pub random_strength: f64,
    /// L = (iteration − 1) · learning rate.
    pub model_length: f64,
}

impl SplitNoise {
    /// The noise of an iteration: `None` without random strength.
    pub fn of_iteration(
        seed: u64,
        iteration: usize,
        random_strength: f64,
        learning_rate: f64,
    ) -> Option<SplitNoise> {
        (random_strength > 0.0).then(|| SplitNoise {
            seed: bits_at(seed ^ 0x5eed_0f5b_117d_2a4e, iteration as u64),
            random_strength,
            model_length: iteration.saturating_sub(1) as f64 * learning_rate,
        })
    }

    /// The noise's standard deviation for a tree whose `n` rows have Σ (v t)² = `sum_squares`
    /// (over every rank); `None` when it is 0 or not finite.
    pub(super) fn scaled(&self, sum_squares: f64, n: f64) -> Option<TreeNoise> {
        if n <= 0.0 {
            return None;
        }
        let rms = (sum_squares / n).sqrt();
        let left = (n.ln() - self.model_length).exp();
        let fading = if left.is_finite() {
            left / (1.0 + left)
        } else {
            1.0
        };
        let scale = self.random_strength * rms * fading;
        (scale.is_finite() && scale > 0.0).then_some(TreeNoise {
            seed: self.seed,
            scale,
        })
    }
}

/// One tree's noise: its seed and standard deviation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct TreeNoise {
    seed: u64,
    scale: f64,
}

impl TreeNoise {
    pub(super) fn at(&self, node: usize) -> NodeNoise {
        NodeNoise {
            seed: bits_at(self.seed, node as u64),
            scale: self.scale,
        }
    }
}

/// The noise of one node's candidates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeNoise {
    seed: u64,
    scale: f64,
}

impl NodeNoise {
    /// The score a candidate of gain `gain` (> 0) competes with: √gain plus its noise. The
    /// candidate is the split of `feature` at bin (or level prefix) `k`, with the node's missing
    /// values on the side `variant` (0 or 1) says.
    #[inline]
    pub(super) fn score(&self, gain: f64, feature: usize, k: usize, variant: bool) -> f64 {
        let key = ((feature as u64) << 10) | ((k as u64) << 1) | u64::from(variant);
        gain.sqrt() + self.scale * standard_normal(self.seed, key)
    }
}

/// A standard normal draw for item `key` of the draw seeded by `seed` (Box–Muller on two
/// uniforms from `bits_at`).
fn standard_normal(seed: u64, key: u64) -> f64 {
    let unit = |bits: u64| ((bits >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64);
    let u1 = unit(bits_at(seed, 2 * key));
    let u2 = unit(bits_at(seed, 2 * key + 1));
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_standard_normal_and_keyed() {
        let n = 200_000;
        let z: Vec<f64> = (0..n).map(|i| standard_normal(7, i)).collect();
        let mean = z.iter().sum::<f64>() / n as f64;
        let var = z.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        // Standard errors: 1/√n ≈ 0.0022 for the mean, √(2/n) ≈ 0.0032 for the variance.
        assert!(mean.abs() < 0.011, "{mean}");
        assert!((var - 1.0).abs() < 0.016, "{var}");
        assert!(z.iter().all(|x| x.is_finite()));
        assert_eq!(standard_normal(7, 12), z[12]);
        assert_ne!(standard_normal(8, 12), z[12]);
    }

    #[test]
    fn the_scale_fades_with_the_model_length_as_catboosts() {
        let noise = |iteration| SplitNoise::of_iteration(3, iteration, 2.0, 0.5).unwrap();
        // n = 100 rows with (v t)² summing to 400: rms 2; at iteration 1, L = 0.
        let first = noise(1).scaled(400.0, 100.0).unwrap().scale;
        assert!((first - 2.0 * 2.0 * 100.0 / 101.0).abs() < 1e-12, "{first}");
        // L = log n: half strength; far beyond, next to nothing.
        let iteration = 1 + (100f64.ln() / 0.5).round() as usize;
        let half = noise(iteration).scaled(400.0, 100.0).unwrap().scale;
        assert!((half - 2.0).abs() < 0.2, "{half}");
        assert!(noise(200).scaled(400.0, 100.0).unwrap().scale < 1e-30);
        assert!(SplitNoise::of_iteration(3, 1, 0.0, 0.5).is_none());
        assert!(noise(1).scaled(0.0, 100.0).is_none());
        assert_ne!(noise(1).seed, noise(2).seed);
    }
}
