//! Student's t distribution at fixed degrees of freedom ν (`student_t(3)`), outputs
//! (μ, s = ln σ): with z = (y − μ)/σ,
//! ℓ = ln Γ(ν/2) − ln Γ((ν+1)/2) + ½ ln(νπ) + s + (ν+1)/2 · ln(1 + z²/ν),
//! ∂ℓ/∂μ = −(ν+1) z / (σ (ν + z²)),  ∂ℓ/∂s = 1 − (ν+1) z² / (ν + z²),
//! Fisher information diag((ν+1)/((ν+3) σ²), 2ν/(ν+3)) (Lange, Little & Taylor 1989, JASA,
//! "Robust statistical modeling using the t distribution", §3).
//! MLE: the EM iteration of the same paper (weights (ν+1)/(ν + z²)), from the mean and the
//! standard deviation, to a relative change of 1e-13.

use super::distribution::{ln_spread, log_param, weighted_moments, Distribution, LOG_BOUND};
use super::special::ln_gamma;
use super::traits::Family;
use std::f64::consts::PI;

/// Student's t at fixed degrees of freedom: outputs μ and ln σ.
#[derive(Debug, Clone, Copy)]
pub struct StudentT {
    df: f64,
    constant: f64,
}

impl StudentT {
    /// `df` > 0 and finite (checked by `LossSpec::validate`).
    pub fn new(df: f64) -> Self {
        let constant = ln_gamma(0.5 * df) - ln_gamma(0.5 * (df + 1.0)) + 0.5 * (df * PI).ln();
        StudentT { df, constant }
    }
}

impl Distribution for StudentT {
    fn name(&self) -> &'static str {
        "student_t"
    }
    fn family(&self) -> Family {
        Family::StudentT
    }
    fn nll(&self, y: f64, theta: &[f64]) -> f64 {
        let s = log_param(theta[1]);
        let z = (y - theta[0]) / s.exp();
        self.constant + s + 0.5 * (self.df + 1.0) * (z * z / self.df).ln_1p()
    }
    fn gradient(&self, y: f64, theta: &[f64], out: &mut [f64]) {
        let nu = self.df;
        let sigma = log_param(theta[1]).exp();
        let z = (y - theta[0]) / sigma;
        // z/(ν + z²) and z²/(ν + z²) in forms that stay finite for any z.
        let (ratio, share) = if z.abs() > 1e100 {
            (1.0 / z, 1.0)
        } else {
            (z / (nu + z * z), z * z / (nu + z * z))
        };
        out[0] = -(nu + 1.0) * ratio / sigma;
        out[1] = if theta[1].abs() > LOG_BOUND {
            0.0
        } else {
            1.0 - (nu + 1.0) * share
        };
    }
    fn fisher(&self, theta: &[f64], out: &mut [f64]) {
        let nu = self.df;
        let sigma = log_param(theta[1]).exp();
        out[0] = (nu + 1.0) / ((nu + 3.0) * sigma * sigma);
        out[1] = 2.0 * nu / (nu + 3.0);
    }
    fn init(&self, y: &[f64], w: &[f64]) -> Vec<f64> {
        let pairs = y.iter().copied().zip(w.iter().copied());
        let (mut mu, var) = weighted_moments(pairs);
        let mut s = ln_spread(var, mu);
        let total: f64 = w.iter().sum();
        if total <= 0.0 {
            return vec![mu, s];
        }
        for _ in 0..1000 {
            let sigma = s.exp();
            let (mut num, mut den) = (0.0, 0.0);
            for (&y, &w) in y.iter().zip(w) {
                let z = (y - mu) / sigma;
                let u = w * (self.df + 1.0) / (self.df + z * z);
                num += u * y;
                den += u;
            }
            let next_mu = num / den;
            let spread: f64 = (y.iter().zip(w))
                .map(|(&y, &w)| {
                    let z = (y - mu) / sigma;
                    w * (self.df + 1.0) / (self.df + z * z) * (y - next_mu).powi(2)
                })
                .sum::<f64>()
                / total;
            let next_s = ln_spread(spread, next_mu);
            let moved = (next_mu - mu).abs() / sigma + (next_s - s).abs();
            (mu, s) = (next_mu, next_s);
            if moved <= 1e-13 {
                break;
            }
        }
        vec![mu, s]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss::distribution::testing::{check_family, check_loss, standard_gamma, standard_normal};
    use crate::loss::distribution::Dist;

    fn sampler(df: f64) -> impl Fn(&[f64], &mut dyn FnMut() -> f64) -> f64 {
        move |theta, next| {
            let chi2 = 2.0 * standard_gamma(0.5 * df, next);
            theta[0] + theta[1].exp() * standard_normal(next) / (chi2 / df).sqrt()
        }
    }

    #[test]
    fn gradient_fisher_and_mle() {
        for df in [3.0, 10.0] {
            let t = StudentT::new(df);
            check_family(&t, &[[0.0, 0.0], [5.0, -1.0]], &sampler(df));
            check_loss(&Dist(t), [1.0, 0.3], &sampler(df));
        }
    }

    #[test]
    fn one_degree_of_freedom_is_cauchy() {
        // Cauchy(0, 1) at y = 1: ln(2π).
        let nll = StudentT::new(1.0).nll(1.0, &[0.0, 0.0]);
        assert!((nll - (2.0 * PI).ln()).abs() < 1e-13, "{nll}");
    }
}
