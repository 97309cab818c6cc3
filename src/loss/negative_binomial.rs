//! The negative binomial distribution of counts, outputs (η = ln μ, a = ln α): mean μ, variance
//! μ + αμ² (NB2 of Cameron & Trivedi 2013, §3.3), size r = 1/α. With αμ = e^{a+η},
//! ℓ = ln Γ(r) + ln Γ(y + 1) − ln Γ(y + r) + (r + y) ln(1 + αμ) − y (a + η),
//! ∂ℓ/∂η = (μ − y)/(1 + αμ),
//! ∂ℓ/∂a = r [ψ(y + r) − ψ(r) − ln(1 + αμ) + α(μ − y)/(1 + αμ)].
//! Fisher information: diagonal (mean and dispersion are orthogonal), I_η = μ/(1 + αμ) in
//! closed form; I_a = Σ_{j≥0} P(Y > j)/(1 + αj)² − μ/(1 + αμ), from
//! E[ψ'(r) − ψ'(y + r)] = Σ_j P(Y > j)/(r + j)², summed until the tail is below 1e-15 (no closed
//! form: Lawless 1987, "Negative binomial and mixed Poisson regression", Can. J. Stat., §2);
//! beyond `SERIES_TERMS` counts, E[ψ'(y + r)] to second order in Var y (the delta method).
//! MLE: μ = the weighted mean; a by bisection on the total's derivative over [−20, 10] (an
//! under-dispersed sample has its infimum at α → 0, the Poisson limit: a = −20 there).
//! Targets: counts (integers ≥ 0).

use super::distribution::{log_param, Distribution, LOG_BOUND};
use super::special::{digamma, ln_gamma, trigamma};
use super::traits::Family;

/// The negative binomial distribution of counts: outputs ln μ and ln α (variance μ + αμ²).
#[derive(Debug, Clone, Copy)]
pub struct NegativeBinomial;

/// Counts up to this are summed term by term in ln Γ(y + r) − ln Γ(r) and ψ(y + r) − ψ(r)
/// (exact where the differences of large values would cancel).
const SUMMED: f64 = 64.0;

/// The most terms of the Fisher information's series; distributions reaching beyond (means
/// of about 10⁴ and more) take the delta method's approximation instead.
const SERIES_TERMS: f64 = 20_000.0;

/// The range of the initial ln α.
const LN_ALPHA_RANGE: (f64, f64) = (-20.0, 10.0);

/// ln Γ(y + r) − ln Γ(r).
fn ln_rising(y: f64, r: f64) -> f64 {
    if y <= SUMMED {
        (0..y as usize).map(|j| (r + j as f64).ln()).sum()
    } else {
        ln_gamma(y + r) - ln_gamma(r)
    }
}

/// ψ(y + r) − ψ(r).
fn digamma_difference(y: f64, r: f64) -> f64 {
    if y <= SUMMED {
        (0..y as usize).map(|j| 1.0 / (r + j as f64)).sum()
    } else {
        digamma(y + r) - digamma(r)
    }
}

/// (μ, α, r, αμ) of clamped outputs.
fn parameters(theta: &[f64]) -> (f64, f64, f64, f64) {
    let (eta, a) = (log_param(theta[0]), log_param(theta[1]));
    (eta.exp(), a.exp(), (-a).exp(), (eta + a).exp())
}

impl Distribution for NegativeBinomial {
    fn name(&self) -> &'static str {
        "negative_binomial"
    }
    fn family(&self) -> Family {
        Family::NegativeBinomial
    }
    fn nll(&self, y: f64, theta: &[f64]) -> f64 {
        let (_, _, r, am) = parameters(theta);
        let (eta, a) = (log_param(theta[0]), log_param(theta[1]));
        ln_gamma(y + 1.0) - ln_rising(y, r) + (r + y) * am.ln_1p() - y * (a + eta)
    }
    fn gradient(&self, y: f64, theta: &[f64], out: &mut [f64]) {
        let (mu, alpha, r, am) = parameters(theta);
        let inside = |v: f64| v.abs() <= LOG_BOUND;
        out[0] = if inside(theta[0]) { (mu - y) / (1.0 + am) } else { 0.0 };
        out[1] = if inside(theta[1]) {
            r * (digamma_difference(y, r) - am.ln_1p() + alpha * (mu - y) / (1.0 + am))
        } else {
            0.0
        };
    }
    fn fisher(&self, theta: &[f64], out: &mut [f64]) {
        let (mu, alpha, r, am) = parameters(theta);
        out[0] = mu / (1.0 + am);
        let variance = mu * (1.0 + am);
        if mu + 12.0 * variance.sqrt() + 50.0 > SERIES_TERMS {
            // E[ψ'(y + r)] by the delta method to second order (ψ‴(x) ≈ 2/x³ this far out).
            let x = mu + r;
            let expected = trigamma(r) - trigamma(x) - variance / (x * x * x);
            out[1] = (r * r * expected - out[0]).max(0.0);
            return;
        }
        // P(Y = j) by its recursion in logs (no underflow of P(Y = 0) for large means).
        let ln_p0 = -r * am.ln_1p();
        let ln_ratio = log_param(theta[0]) + log_param(theta[1]) - am.ln_1p();
        let (mut ln_p, mut cdf, mut sum) = (ln_p0, 0.0, 0.0);
        let mut j = 0.0;
        loop {
            cdf += ln_p.exp();
            let tail = (1.0 - cdf).max(0.0);
            sum += tail / (1.0 + alpha * j).powi(2);
            if (j >= mu && tail <= 1e-15) || j >= SERIES_TERMS {
                break;
            }
            ln_p += ((j + r) / (j + 1.0)).ln() + ln_ratio;
            j += 1.0;
        }
        out[1] = (sum - out[0]).max(0.0);
    }
    fn init(&self, y: &[f64], w: &[f64]) -> Vec<f64> {
        let total: f64 = w.iter().sum();
        if total <= 0.0 {
            return vec![0.0, LN_ALPHA_RANGE.0];
        }
        let mean = (y.iter().zip(w).map(|(y, w)| w * y).sum::<f64>() / total).max(1e-12);
        let eta = log_param(mean.ln());
        let slope = |a: f64| -> f64 {
            let mut g = [0.0; 2];
            (y.iter().zip(w))
                .map(|(&y, &w)| {
                    self.gradient(y, &[eta, a], &mut g);
                    w * g[1]
                })
                .sum()
        };
        let (mut lo, mut hi) = LN_ALPHA_RANGE;
        if slope(lo) >= 0.0 {
            return vec![eta, lo];
        }
        if slope(hi) <= 0.0 {
            return vec![eta, hi];
        }
        for _ in 0..80 {
            let mid = 0.5 * (lo + hi);
            if slope(mid) < 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        vec![eta, 0.5 * (lo + hi)]
    }
    fn target_requirement(&self, y: f64) -> Option<&'static str> {
        (y < 0.0 || y.fract() != 0.0).then_some("counts (integers ≥ 0)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss::distribution::testing::{check_family, check_loss, poisson, standard_gamma};
    use crate::loss::distribution::Dist;

    /// A gamma mixture of Poissons: λ ~ Gamma(r, μ/r).
    fn sample(theta: &[f64], next: &mut dyn FnMut() -> f64) -> f64 {
        let (mu, r) = (theta[0].exp(), (-theta[1]).exp());
        poisson(standard_gamma(r, next) * mu / r, next)
    }

    #[test]
    fn gradient_fisher_and_mle() {
        check_family(&NegativeBinomial, &[[1.0, -0.5], [2.5, 0.3], [0.0, -1.5]], &sample);
        check_loss(&Dist(NegativeBinomial), [1.5, -0.5], &sample);
        assert!(NegativeBinomial.target_requirement(1.5).is_some());
        assert!(NegativeBinomial.target_requirement(-1.0).is_some());
    }

    #[test]
    fn nll_is_the_pmf() {
        // μ = 3, α = 0.5 (r = 2, p = r/(r+μ) = 0.4): P(Y = 4) = C(5, 4) 0.4² 0.6⁴ = 0.10368.
        let nll = NegativeBinomial.nll(4.0, &[3f64.ln(), 0.5f64.ln()]);
        assert!((nll + 0.10368f64.ln()).abs() < 1e-13, "{nll}");
        // An under-dispersed sample: the Poisson limit.
        let y = [2.0, 2.0, 3.0, 2.0, 1.0, 2.0];
        let init = NegativeBinomial.init(&y, &[1.0; 6]);
        assert_eq!(init[1], LN_ALPHA_RANGE.0);
    }
}
