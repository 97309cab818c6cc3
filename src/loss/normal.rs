//! The normal distribution, outputs (μ, s = ln σ): with z = (y − μ)/σ,
//! ℓ = ½ ln 2π + s + ½ z²,  ∂ℓ/∂μ = −z/σ,  ∂ℓ/∂s = 1 − z²,
//! Fisher information diag(1/σ², 2) (Duan et al. 2020, NGBoost, §2.3),
//! CRPS = σ [z (2Φ(z) − 1) + 2φ(z) − 1/√π] (Gneiting & Raftery 2007, eq. 21),
//! MLE: the weighted mean and the weighted population standard deviation.

use super::distribution::{ln_spread, log_param, weighted_moments, Distribution};
use super::special::{normal_cdf, normal_pdf};
use super::traits::Family;
use std::f64::consts::PI;

/// The normal distribution: outputs μ and ln σ.
#[derive(Debug, Clone, Copy)]
pub struct Normal;

/// ½ ln 2π.
pub const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

/// z and σ of a location-scale row.
fn standardised(y: f64, theta: &[f64]) -> (f64, f64) {
    let sigma = log_param(theta[1]).exp();
    ((y - theta[0]) / sigma, sigma)
}

/// The normal's CRPS at (μ, σ) for y.
pub fn normal_crps(y: f64, mu: f64, sigma: f64) -> f64 {
    let z = (y - mu) / sigma;
    sigma * (z * (2.0 * normal_cdf(z) - 1.0) + 2.0 * normal_pdf(z) - 1.0 / PI.sqrt())
}

impl Distribution for Normal {
    fn name(&self) -> &'static str {
        "normal"
    }
    fn family(&self) -> Family {
        Family::Normal
    }
    fn nll(&self, y: f64, theta: &[f64]) -> f64 {
        let (z, _) = standardised(y, theta);
        HALF_LN_2PI + log_param(theta[1]) + 0.5 * z * z
    }
    fn gradient(&self, y: f64, theta: &[f64], out: &mut [f64]) {
        let (z, sigma) = standardised(y, theta);
        out[0] = -z / sigma;
        out[1] = if theta[1].abs() > super::distribution::LOG_BOUND {
            0.0
        } else {
            1.0 - z * z
        };
    }
    fn fisher(&self, theta: &[f64], out: &mut [f64]) {
        let sigma = log_param(theta[1]).exp();
        out[0] = 1.0 / (sigma * sigma);
        out[1] = 2.0;
    }
    fn init(&self, y: &[f64], w: &[f64]) -> Vec<f64> {
        let (mean, var) = weighted_moments(y.iter().copied().zip(w.iter().copied()));
        vec![mean, ln_spread(var, mean)]
    }
    fn crps(&self, y: f64, theta: &[f64]) -> Option<f64> {
        Some(normal_crps(y, theta[0], log_param(theta[1]).exp()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss::distribution::testing::{check_family, check_loss, standard_normal};
    use crate::loss::distribution::Dist;

    fn sample(theta: &[f64], next: &mut dyn FnMut() -> f64) -> f64 {
        theta[0] + theta[1].exp() * standard_normal(next)
    }

    #[test]
    fn gradient_fisher_and_mle() {
        check_family(&Normal, &[[0.0, 0.0], [3.0, -1.5], [-20.0, 2.0]], &sample);
        check_loss(&Dist(Normal), [1.0, 0.5], &sample);
    }

    #[test]
    fn nll_and_crps_known_values() {
        // N(1, 2²) at y = 2: ln(2√(2π)) + 1/8; CRPS by the quadrature of ∫ (F − 1{t ≥ y})² dt.
        let theta = [1.0, 2f64.ln()];
        let nll = Normal.nll(2.0, &theta);
        assert!((nll - ((2.0 * (2.0 * PI).sqrt()).ln() + 0.125)).abs() < 1e-14);
        let (lo, hi, m) = (-30.0, 30.0, 600_000);
        let h = (hi - lo) / m as f64;
        let quadrature: f64 = (0..m)
            .map(|j| {
                let t = lo + (j as f64 + 0.5) * h;
                let step = if t >= 2.0 { 1.0 } else { 0.0 };
                (normal_cdf((t - 1.0) / 2.0) - step).powi(2) * h
            })
            .sum();
        let crps = Normal.crps(2.0, &theta).unwrap();
        assert!((crps - quadrature).abs() < 1e-6, "{crps} vs {quadrature}");
    }
}
