//! The ranking metrics over query groups (the target of a ranking loss: relevance, group per
//! row), each group's value weighted by the mean weight of its rows. Within a group the rows are
//! ordered by decreasing score, ties by row order. A group with no relevant row (every label 0)
//! counts as 1, as LightGBM counts it for NDCG and MAP.
//!
//! * NDCG@k = DCG@k / ideal DCG@k with gain 2^rel − 1 and discount 1 / log2(2 + position)
//!   (Järvelin & Kekäläinen 2002; Burges et al. 2005's gain).
//! * MAP@k: the mean over groups of AP@k = Σ_{p < k, row at p relevant} precision@(p + 1) /
//!   min(k, relevant rows), a row relevant when its label is > 0.
//! * MRR: the mean over groups of 1 / (position of the first relevant row, from 1).

use std::collections::BTreeMap;

/// Which ranking metric (see the module header).
#[derive(Clone, Copy, Debug)]
pub(super) enum Ranking {
    Ndcg(usize),
    Map(usize),
    Mrr,
}

/// (Σ_g W_g m_g, Σ_g W_g) over the groups of `y` (n × 2), for adding over ranks.
pub(super) fn sums(metric: Ranking, y: &[f64], scores: &[f64], w: &[f64]) -> (f64, f64) {
    let mut groups = BTreeMap::<u64, Vec<usize>>::new();
    for (i, row) in y.chunks_exact(2).enumerate() {
        groups.entry(row[1] as u64).or_default().push(i);
    }
    let (mut total, mut weight) = (0.0, 0.0);
    for rows in groups.values() {
        let group_weight = rows.iter().map(|&i| w[i]).sum::<f64>() / rows.len() as f64;
        let mut order = rows.clone();
        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a])); // stable: ties by row order
        let labels: Vec<f64> = order.iter().map(|&i| y[2 * i]).collect();
        total += group_weight * group_value(metric, &labels);
        weight += group_weight;
    }
    (total, weight)
}

/// The metric of one group whose labels are given in the order of the scores.
fn group_value(metric: Ranking, labels: &[f64]) -> f64 {
    let relevant = labels.iter().filter(|&&l| l > 0.0).count();
    if relevant == 0 {
        return 1.0;
    }
    match metric {
        Ranking::Ndcg(k) => {
            let dcg = |labels: &[f64]| -> f64 {
                (labels.iter().take(k).enumerate())
                    .map(|(p, l)| (l.exp2() - 1.0) / (2.0 + p as f64).log2())
                    .sum()
            };
            let mut ideal = labels.to_vec();
            ideal.sort_by(|a, b| b.total_cmp(a));
            dcg(labels) / dcg(&ideal)
        }
        Ranking::Map(k) => {
            let (mut hits, mut sum) = (0.0, 0.0);
            for (p, &l) in labels.iter().take(k).enumerate() {
                if l > 0.0 {
                    hits += 1.0;
                    sum += hits / (p + 1) as f64;
                }
            }
            sum / relevant.min(k) as f64
        }
        Ranking::Mrr => {
            let first = labels.iter().position(|&l| l > 0.0).unwrap_or(0);
            1.0 / (first + 1) as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values_of_one_group() {
        // Labels in score order 0, 2, 1: DCG@3 = 3/log2(3) + 1/2; ideal 3 + 1/log2(3).
        let labels = [0.0, 2.0, 1.0];
        let l3 = 3f64.log2();
        let ndcg = (3.0 / l3 + 0.5) / (3.0 + 1.0 / l3);
        assert!((group_value(Ranking::Ndcg(3), &labels) - ndcg).abs() < 1e-15);
        assert!((group_value(Ranking::Ndcg(1), &labels) - 0.0).abs() < 1e-15);
        // AP@3: hits at positions 2 and 3: (1/2 + 2/3) / 2.
        assert!((group_value(Ranking::Map(3), &labels) - (0.5 + 2.0 / 3.0) / 2.0).abs() < 1e-15);
        // AP@2: one hit at 2, min(2, 2 relevant) = 2: (1/2) / 2.
        assert_eq!(group_value(Ranking::Map(2), &labels), 0.25);
        assert_eq!(group_value(Ranking::Mrr, &labels), 0.5);
        for metric in [Ranking::Ndcg(5), Ranking::Map(5), Ranking::Mrr] {
            assert_eq!(group_value(metric, &[0.0, 0.0]), 1.0);
            assert_eq!(group_value(metric, &[3.0, 1.0, 0.0]), 1.0);
        }
    }
}
