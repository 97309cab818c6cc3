//! The cross-entropy NDCG surrogate XE-NDCG (Bruch, "An alternative cross entropy loss for
//! learning-to-rank", WWW 2021 / arXiv:1911.09798, eq. 7-9), LightGBM's `rank_xendcg`.
//!
//! * Within a group, ρ = softmax(s) and the target distribution φ_i = (2^{rel_i} − γ_i) /
//!   Σ_j (2^{rel_j} − γ_j) with γ_i ∈ [0, 1); the loss is the cross entropy −Σ φ_i ln ρ_i.
//! * Bruch draws γ afresh per iteration to break ties between equal labels; here γ_i is drawn
//!   once per row, from the group's code and the row's place in the group (row order), so that
//!   the loss is one fixed smooth function of the scores, the same whatever the thread count.
//! * ∂/∂s_i = ρ_i − φ_i (Σ φ = 1), Hessian diagonal ρ_i(1 − ρ_i); along b, φ'(γ) = E_ρ[b] −
//!   Σ φ b and φ''(γ) = Var_ρ(b) ≥ 0: convex, the line search along a tree is exact.
//! * Relevance labels are numbers in [0, 30]; a group of one row has loss 0.

use super::lambdarank::MAX_RELEVANCE;
use super::ranking::GroupLoss;
use crate::rng::Rng;

/// XE-NDCG's loss of one group (see the module header).
#[derive(Debug, Clone, Copy)]
pub struct RankXendcg;

/// φ, the group's target distribution.
fn targets(key: u64, y: &[f64]) -> Vec<f64> {
    let mut rng = Rng::new(key);
    let mut gamma = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let mut phi: Vec<f64> = y.iter().map(|&rel| rel.exp2() - gamma()).collect();
    let total: f64 = phi.iter().sum();
    phi.iter_mut().for_each(|p| *p /= total);
    phi
}

/// softmax(s), overflow-safe.
fn softmax(s: &[f64]) -> Vec<f64> {
    let m = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut e: Vec<f64> = s.iter().map(|&v| (v - m).exp()).collect();
    let total: f64 = e.iter().sum();
    e.iter_mut().for_each(|v| *v /= total);
    e
}

impl GroupLoss for RankXendcg {
    fn name(&self) -> &'static str {
        "rank_xendcg"
    }
    fn label_error(&self, label: f64) -> Option<String> {
        (!(0.0..=MAX_RELEVANCE).contains(&label))
            .then(|| format!("rank_xendcg needs relevance labels in [0, {MAX_RELEVANCE}]"))
    }
    fn evaluate(
        &self,
        key: u64,
        y: &[f64],
        s: &[f64],
        gradient: &mut [f64],
        hessian: &mut [f64],
    ) -> f64 {
        if y.len() < 2 {
            return 0.0;
        }
        let phi = targets(key, y);
        let m = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let log_total = s.iter().map(|&v| (v - m).exp()).sum::<f64>().ln() + m;
        let rho = softmax(s);
        for i in 0..y.len() {
            if !gradient.is_empty() {
                gradient[i] = rho[i] - phi[i];
            }
            if !hessian.is_empty() {
                hessian[i] = rho[i] * (1.0 - rho[i]);
            }
        }
        (0..y.len()).map(|i| phi[i] * (log_total - s[i])).sum()
    }
    fn slope(&self, key: u64, y: &[f64], s: &[f64], b: &[f64], gamma: f64) -> (f64, f64, f64) {
        if y.len() < 2 {
            return (0.0, 0.0, 0.0);
        }
        let phi = targets(key, y);
        let moved: Vec<f64> = s.iter().zip(b).map(|(&s, &b)| s + gamma * b).collect();
        let rho = softmax(&moved);
        let mean: f64 = rho.iter().zip(b).map(|(r, b)| r * b).sum();
        let second: f64 = rho.iter().zip(b).map(|(r, b)| r * b * b).sum();
        let target: f64 = phi.iter().zip(b).map(|(p, b)| p * b).sum();
        let noise: f64 = rho
            .iter()
            .chain(&phi)
            .zip(b.iter().chain(b))
            .map(|(p, b)| p * b.abs())
            .sum();
        (mean - target, (second - mean * mean).max(0.0), noise)
    }
}
