//! The gamma distribution, outputs (η = ln μ, κ = ln α): mean μ, shape α (scale μ/α). The loss
//! is named `gamma_dist`: `gamma` is the gamma deviance of the mean alone (a log-link GLM loss
//! whose shape is a nuisance), which this loss extends by fitting the shape too.
//!
//! ℓ = ln Γ(α) − α ln α + α η − (α − 1) ln y + α y e^{−η},
//! ∂ℓ/∂η = α (1 − y/μ),  ∂ℓ/∂κ = α [ψ(α) − ln α − 1 + η − ln y + y/μ],
//! Fisher information diag(α, α (α ψ'(α) − 1)): (mean, shape) are orthogonal parameters (Cox &
//! Reid 1987), and E[ln y] = ψ(α) + ln(μ/α) makes E[∂ℓ/∂κ] = 0.
//! MLE: μ = the weighted mean; α solves ln α − ψ(α) = ln ȳ − mean(ln y) (Newton in ln α from
//! Minka's 2002 approximation). Targets > 0.

use super::distribution::{log_param, Distribution, LOG_BOUND};
use super::special::{digamma, ln_gamma, trigamma};
use super::traits::Family;

/// The gamma distribution: outputs ln mean and ln shape.
#[derive(Debug, Clone, Copy)]
pub struct GammaDist;

/// α ψ'(α) − 1 > 0, by its asymptotic series where the difference would cancel.
fn shape_curvature(alpha: f64) -> f64 {
    if alpha > 1e4 {
        let r = 1.0 / alpha;
        0.5 * r + r * r / 6.0 - r.powi(4) / 30.0
    } else {
        alpha * trigamma(alpha) - 1.0
    }
}

impl Distribution for GammaDist {
    fn name(&self) -> &'static str {
        "gamma_dist"
    }
    fn family(&self) -> Family {
        Family::Gamma
    }
    fn nll(&self, y: f64, theta: &[f64]) -> f64 {
        let (eta, kappa) = (log_param(theta[0]), log_param(theta[1]));
        let alpha = kappa.exp();
        ln_gamma(alpha) - alpha * kappa + alpha * eta - (alpha - 1.0) * y.ln()
            + alpha * y * (-eta).exp()
    }
    fn gradient(&self, y: f64, theta: &[f64], out: &mut [f64]) {
        let (eta, kappa) = (log_param(theta[0]), log_param(theta[1]));
        let (alpha, ratio) = (kappa.exp(), y * (-eta).exp());
        let inside = |v: f64| v.abs() <= LOG_BOUND;
        out[0] = if inside(theta[0]) { alpha * (1.0 - ratio) } else { 0.0 };
        out[1] = if inside(theta[1]) {
            alpha * (digamma(alpha) - kappa - 1.0 + eta - y.ln() + ratio)
        } else {
            0.0
        };
    }
    fn fisher(&self, theta: &[f64], out: &mut [f64]) {
        let alpha = log_param(theta[1]).exp();
        out[0] = alpha;
        out[1] = alpha * shape_curvature(alpha);
    }
    fn init(&self, y: &[f64], w: &[f64]) -> Vec<f64> {
        let total: f64 = w.iter().sum();
        if total <= 0.0 {
            return vec![0.0, 0.0];
        }
        let mean = y.iter().zip(w).map(|(y, w)| w * y).sum::<f64>() / total;
        let mean_log = y.iter().zip(w).map(|(y, w)| w * y.ln()).sum::<f64>() / total;
        let s = mean.ln() - mean_log; // ≥ 0 by Jensen; 0 for a constant target
        let kappa = if s <= 1e-12 {
            // ln α − ψ(α) ≈ 1/(2α): the shape of a spread of 1e-12.
            (0.5 / 1e-12f64).ln()
        } else {
            let start = (3.0 - s + ((s - 3.0).powi(2) + 24.0 * s).sqrt()) / (12.0 * s);
            let mut kappa = start.ln();
            for _ in 0..100 {
                let alpha = kappa.exp();
                let g = kappa - digamma(alpha) - s;
                let step = g / -shape_curvature(alpha);
                kappa -= step;
                if step.abs() <= 1e-14 * kappa.abs().max(1.0) {
                    break;
                }
            }
            kappa
        };
        vec![log_param(mean.ln()), log_param(kappa)]
    }
    fn target_requirement(&self, y: f64) -> Option<&'static str> {
        (y <= 0.0).then_some("targets > 0")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss::distribution::testing::{check_family, check_loss, standard_gamma};
    use crate::loss::distribution::Dist;

    fn sample(theta: &[f64], next: &mut dyn FnMut() -> f64) -> f64 {
        let alpha = theta[1].exp();
        standard_gamma(alpha, next) * theta[0].exp() / alpha
    }

    #[test]
    fn gradient_fisher_and_mle() {
        check_family(&GammaDist, &[[0.0, 0.0], [2.0, 1.5], [-1.0, -0.7]], &sample);
        check_loss(&Dist(GammaDist), [0.5, 0.8], &sample);
        assert!(GammaDist.target_requirement(0.0).is_some());
    }

    #[test]
    fn nll_is_scipy_s() {
        // scipy.stats.gamma(a=2.5, scale=3/2.5).logpdf(1.7) = −1.8027...
        let theta = [3f64.ln(), 2.5f64.ln()];
        let expected = -(2.5 - 1.0) * 1.7f64.ln() + 1.7 / 1.2 + ln_gamma(2.5) + 2.5 * 1.2f64.ln();
        assert!((GammaDist.nll(1.7, &theta) - expected).abs() < 1e-13);
    }
}
