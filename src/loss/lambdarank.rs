//! LambdaMART with NDCG@k weights (Burges, "From RankNet to LambdaRank to LambdaMART: An
//! Overview", MSR-TR-2010-82, §4-5), as LightGBM's `lambdarank` weighs its pairs (σ = 1, label
//! gain 2^rel − 1, truncation level k), without LightGBM's optional score-gap normalisation.
//!
//! * Within a group, sort the rows by score (decreasing; ties by row order) and take the pairs
//!   (i, j) of different labels whose better-placed row is among the first k. With the gain
//!   G = 2^rel − 1, the discount D(p) = 1 / log2(2 + p) of position p and the ideal DCG@k
//!   (the k largest gains in order), the pair's weight is the change of NDCG@k when the two
//!   rows swap places, |ΔNDCG_ij| = |G_i − G_j| · |D(p_i) − D(p_j)| / idealDCG@k with D = 0 from
//!   position k on (Burges §4; LightGBM keeps the lower row's discount below position k).
//! * λ: with h the more relevant row of the pair, l the other, ρ = 1 / (1 + e^{s_h − s_l}),
//!   ∂/∂s_h −= |ΔNDCG| ρ, ∂/∂s_l += |ΔNDCG| ρ, and the Hessian diagonal adds |ΔNDCG| ρ(1 − ρ)
//!   to both (Burges §5, σ = 1). These are the gradient and Hessian diagonal of the pairwise
//!   logistic cost C(s) = Σ |ΔNDCG_ij| ln(1 + e^{−(s_h − s_l)}) with the weights held at the
//!   current order, which is the value reported (the loss the history records) and the
//!   function the line search minimises along a tree (its weights frozen at γ = 0, so that it
//!   is smooth and convex in γ).
//! * A group whose labels are all equal (or all 0: ideal DCG 0) has no pair and loss 0.
//! * Relevance labels are numbers in [0, 30] (the gain 2^rel − 1 stays exact); LightGBM's
//!   default label gain is the same for whole labels.

use super::ranking::{GroupLoss, Pairs};

/// The largest relevance label.
pub const MAX_RELEVANCE: f64 = 30.0;

/// LambdaMART's loss of one group at truncation level `k` (see the module header).
#[derive(Debug, Clone, Copy)]
pub struct LambdaRank {
    k: usize,
}

impl LambdaRank {
    /// LambdaMART at NDCG@`k` (`k` a whole number, checked by the loss table).
    pub fn new(k: f64) -> Self {
        LambdaRank { k: k as usize }
    }

    /// The weighted pairs at the scores `s` (|ΔNDCG@k| as in the module header).
    fn pairs(&self, y: &[f64], s: &[f64]) -> Pairs {
        let n = y.len();
        let gain = |i: usize| y[i].exp2() - 1.0;
        let k = self.k;
        // NDCG@k's discount: none below position k.
        let discount = |p: usize| {
            if p < k {
                1.0 / (2.0 + p as f64).log2()
            } else {
                0.0
            }
        };
        let mut ideal: Vec<f64> = (0..n).map(gain).collect();
        ideal.sort_by(|a, b| b.total_cmp(a));
        let ideal_dcg: f64 = (ideal.iter().take(self.k).enumerate())
            .map(|(p, g)| g * discount(p))
            .sum();
        let mut pairs = Vec::new();
        if ideal_dcg <= 0.0 {
            return Pairs { pairs };
        }
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| s[b].total_cmp(&s[a])); // stable: ties by row order
        for p in 0..n.min(self.k) {
            for q in p + 1..n {
                let (i, j) = (order[p], order[q]);
                if y[i] == y[j] {
                    continue;
                }
                let delta =
                    (gain(i) - gain(j)).abs() * (discount(p) - discount(q)).abs() / ideal_dcg;
                let (h, l) = if y[i] > y[j] { (i, j) } else { (j, i) };
                pairs.push((h, l, delta));
            }
        }
        Pairs { pairs }
    }
}

impl GroupLoss for LambdaRank {
    fn name(&self) -> &'static str {
        "lambdarank"
    }
    fn label_error(&self, label: f64) -> Option<String> {
        (!(0.0..=MAX_RELEVANCE).contains(&label))
            .then(|| format!("lambdarank needs relevance labels in [0, {MAX_RELEVANCE}]"))
    }
    fn evaluate(
        &self,
        _key: u64,
        y: &[f64],
        s: &[f64],
        gradient: &mut [f64],
        hessian: &mut [f64],
    ) -> f64 {
        self.pairs(y, s).evaluate(s, gradient, hessian)
    }
    fn slope(&self, _key: u64, y: &[f64], s: &[f64], b: &[f64], gamma: f64) -> (f64, f64, f64) {
        self.pairs(y, s).slope(s, b, gamma)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::uniform;

    /// NDCG@k of scores `s` by its definition.
    fn ndcg(y: &[f64], s: &[f64], k: usize) -> f64 {
        let dcg = |order: &[usize]| -> f64 {
            (order.iter().take(k).enumerate())
                .map(|(p, &i)| (y[i].exp2() - 1.0) / (p as f64 + 2.0).log2())
                .sum()
        };
        let mut by_score: Vec<usize> = (0..y.len()).collect();
        by_score.sort_by(|&a, &b| s[b].total_cmp(&s[a]));
        let mut ideal: Vec<usize> = (0..y.len()).collect();
        ideal.sort_by(|&a, &b| y[b].total_cmp(&y[a]));
        dcg(&by_score) / dcg(&ideal)
    }

    /// The lambdas against a brute-force computation: for every pair, |ΔNDCG| is the change of
    /// NDCG@k when the two rows swap places (scores swapped), and ρ the RankNet probability.
    #[test]
    fn lambdas_match_swapped_ndcg_pair_by_pair() {
        let mut state = 3;
        for (n, k) in [(2, 1), (5, 3), (7, 30), (8, 2), (6, 6)] {
            let y: Vec<f64> = (0..n)
                .map(|_| (uniform(&mut state) * 4.0).floor())
                .collect();
            if y.iter().all(|&v| v == y[0]) {
                continue;
            }
            let s: Vec<f64> = (0..n).map(|_| uniform(&mut state) * 3.0 - 1.5).collect();
            let loss = LambdaRank::new(k as f64);
            let (mut g, mut h) = (vec![0.0; n], vec![0.0; n]);
            let value = loss.evaluate(0, &y, &s, &mut g, &mut h);
            let (mut bg, mut bh, mut bv) = (vec![0.0; n], vec![0.0; n], 0.0);
            let base = ndcg(&y, &s, k);
            let rank = |i: usize| s.iter().filter(|&&v| v > s[i]).count();
            for i in 0..n {
                for j in 0..n {
                    if y[i] <= y[j] || rank(i).min(rank(j)) >= k {
                        continue;
                    }
                    let mut swapped = s.clone();
                    swapped.swap(i, j);
                    let delta = (ndcg(&y, &swapped, k) - base).abs();
                    let rho = 1.0 / (1.0 + (s[i] - s[j]).exp());
                    bv += delta * (1.0 + (-(s[i] - s[j])).exp()).ln();
                    bg[i] -= delta * rho;
                    bg[j] += delta * rho;
                    bh[i] += delta * rho * (1.0 - rho);
                    bh[j] += delta * rho * (1.0 - rho);
                }
            }
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * (1.0 + b.abs());
            assert!(close(value, bv), "n={n} k={k}: {value} vs {bv}");
            for i in 0..n {
                assert!(
                    close(g[i], bg[i]),
                    "n={n} k={k} row {i}: {} vs {}",
                    g[i],
                    bg[i]
                );
                assert!(
                    close(h[i], bh[i]),
                    "n={n} k={k} row {i}: {} vs {}",
                    h[i],
                    bh[i]
                );
            }
            assert!(g.iter().any(|&v| v != 0.0), "n={n} k={k}");
        }
    }

    #[test]
    fn equal_or_zero_labels_have_no_pairs() {
        let loss = LambdaRank::new(10.0);
        for y in [[2.0, 2.0, 2.0], [0.0, 0.0, 0.0]] {
            let mut g = vec![1.0; 3];
            g.iter_mut().for_each(|v| *v = 0.0);
            assert_eq!(
                loss.evaluate(0, &y, &[0.3, -1.0, 2.0], &mut g, &mut []),
                0.0
            );
            assert_eq!(g, vec![0.0; 3]);
        }
    }
}
