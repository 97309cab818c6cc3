//! The lognormal distribution, outputs (μ, s = ln σ) of ln y: ℓ = ln y + the normal's NLL of
//! ln y, so the gradient and the Fisher information diag(1/σ², 2) are the normal's at ln y.
//! CRPS (Baran & Lerch 2015, eq. 5): with z = (ln y − μ)/σ,
//! y (2Φ(z) − 1) − 2 e^{μ + σ²/2} [Φ(z − σ) + Φ(σ/√2) − 1]. Targets > 0.

use super::distribution::{log_param, Distribution};
use super::normal::Normal;
use super::special::normal_cdf;
use super::traits::Family;

/// The log-normal distribution: outputs μ and ln σ of ln y.
#[derive(Debug, Clone, Copy)]
pub struct LogNormal;

impl Distribution for LogNormal {
    fn name(&self) -> &'static str {
        "lognormal"
    }
    fn family(&self) -> Family {
        Family::LogNormal
    }
    fn nll(&self, y: f64, theta: &[f64]) -> f64 {
        y.ln() + Normal.nll(y.ln(), theta)
    }
    fn gradient(&self, y: f64, theta: &[f64], out: &mut [f64]) {
        Normal.gradient(y.ln(), theta, out);
    }
    fn fisher(&self, theta: &[f64], out: &mut [f64]) {
        Normal.fisher(theta, out);
    }
    fn init(&self, y: &[f64], w: &[f64]) -> Vec<f64> {
        let logs: Vec<f64> = y.iter().map(|y| y.ln()).collect();
        Normal.init(&logs, w)
    }
    fn target_requirement(&self, y: f64) -> Option<&'static str> {
        (y <= 0.0).then_some("targets > 0")
    }
    fn crps(&self, y: f64, theta: &[f64]) -> Option<f64> {
        let (mu, sigma) = (theta[0], log_param(theta[1]).exp());
        let z = (y.ln() - mu) / sigma;
        let mean = (mu + 0.5 * sigma * sigma).exp();
        Some(
            y * (2.0 * normal_cdf(z) - 1.0)
                - 2.0 * mean * (normal_cdf(z - sigma) + normal_cdf(sigma / std::f64::consts::SQRT_2) - 1.0),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss::distribution::testing::{check_family, check_loss, standard_normal};
    use crate::loss::distribution::Dist;

    fn sample(theta: &[f64], next: &mut dyn FnMut() -> f64) -> f64 {
        (theta[0] + theta[1].exp() * standard_normal(next)).exp()
    }

    #[test]
    fn gradient_fisher_and_mle() {
        check_family(&LogNormal, &[[0.0, 0.0], [2.0, -1.0]], &sample);
        check_loss(&Dist(LogNormal), [0.5, -0.5], &sample);
        assert!(LogNormal.target_requirement(0.0).is_some());
    }

    #[test]
    fn crps_matches_quadrature() {
        let theta = [0.3, 0.6f64.ln()];
        let y = 1.7;
        let (lo, hi, m) = (1e-9, 200.0, 2_000_000);
        let h = (hi - lo) / m as f64;
        let quadrature: f64 = (0..m)
            .map(|j| {
                let t: f64 = lo + (j as f64 + 0.5) * h;
                let step = if t >= y { 1.0 } else { 0.0 };
                (normal_cdf((t.ln() - theta[0]) / 0.6) - step).powi(2) * h
            })
            .sum();
        let crps = LogNormal.crps(y, &theta).unwrap();
        assert!((crps - quadrature).abs() < 1e-5, "{crps} vs {quadrature}");
    }
}
