//! The ranking losses (`lambdarank`, `pairwise`, `rank_xendcg`): their values against the
//! definitions, gradients and Hessian diagonals against finite differences (the smooth ones),
//! the line search against brute force, query groups given unsorted, of one row or of equal
//! labels, label and group checks, the methods that refuse them, the same model whatever the
//! thread count, and fits judged by NDCG@10 on held-out queries.

mod common;

use common::{params, TestRng};
use optboost::loss::{Loss, LossSpec};
use optboost::{Booster, Frame, TrainData};

/// A ranking target (relevance, group) per row, row-major, with the groups' rows shuffled
/// among each other; scores and per-group weights.
fn sample(rng: &mut TestRng, n_groups: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut rows: Vec<(f64, f64)> = Vec::new();
    for g in 0..n_groups {
        let size = 1 + rng.below(7);
        rows.extend((0..size).map(|_| ((rng.uniform() * 4.0).floor(), (7 * g + 3) as f64)));
    }
    let order = rng.permutation(rows.len());
    let y: Vec<f64> = order.iter().flat_map(|&i| [rows[i].0, rows[i].1]).collect();
    let n = rows.len();
    let f = (0..n).map(|_| rng.uniform_in(-2.0, 2.0)).collect();
    let w = (0..n)
        .map(|i| 0.5 + (y[2 * i + 1] as usize % 3) as f64)
        .collect();
    (y, f, w)
}

fn build(name: &str) -> std::sync::Arc<dyn Loss> {
    name.parse::<LossSpec>().unwrap().build(1).unwrap()
}

/// The rows of each group (by code), in row order.
fn groups(y: &[f64]) -> Vec<Vec<usize>> {
    let mut by_code = std::collections::BTreeMap::<u64, Vec<usize>>::new();
    for i in 0..y.len() / 2 {
        by_code.entry(y[2 * i + 1] as u64).or_default().push(i);
    }
    by_code.into_values().collect()
}

/// RankNet's loss from its definition, each group weighted by its rows' mean weight.
fn naive_pairwise(y: &[f64], f: &[f64], w: &[f64]) -> f64 {
    groups(y)
        .iter()
        .map(|rows| {
            let weight = rows.iter().map(|&i| w[i]).sum::<f64>() / rows.len() as f64;
            let mut sum = 0.0;
            for &i in rows {
                for &j in rows {
                    if y[2 * i] > y[2 * j] {
                        sum += (1.0 + (f[j] - f[i]).exp()).ln();
                    }
                }
            }
            weight * sum
        })
        .sum()
}

#[test]
fn pairwise_value_matches_its_definition_and_ignores_a_constant_per_group() {
    let mut rng = TestRng::new(1);
    let (y, f, w) = sample(&mut rng, 12);
    let loss = build("pairwise");
    let value = loss.sum_values(&y, &f, &w);
    let naive = naive_pairwise(&y, &f, &w);
    assert!((value - naive).abs() < 1e-12 * naive, "{value} {naive}");
    // A constant per group changes nothing.
    let shifted: Vec<f64> = (0..f.len()).map(|i| f[i] + y[2 * i + 1] * 0.37).collect();
    for name in ["pairwise", "rank_xendcg", "lambdarank"] {
        let loss = build(name);
        let (a, b) = (
            loss.sum_values(&y, &f, &w),
            loss.sum_values(&y, &shifted, &w),
        );
        assert!((a - b).abs() < 1e-11 * a.abs(), "{name}: {a} {b}");
        assert_eq!(loss.init(&y, &w), vec![0.0]);
        let ones = vec![1.0; f.len()];
        assert_eq!(loss.sum_values(&y, &f, &[]), loss.sum_values(&y, &f, &ones));
    }
}

#[test]
fn smooth_losses_derivatives_match_finite_differences() {
    let mut rng = TestRng::new(2);
    for name in ["pairwise", "rank_xendcg"] {
        let loss = build(name);
        let (y, f, w) = sample(&mut rng, 8);
        let n = f.len();
        let (mut g, mut h) = (vec![0.0; n], vec![0.0; n]);
        let value = loss.sum_values_and_derivatives(&y, &f, &w, &mut g, &mut h);
        assert_eq!(value, loss.sum_values(&y, &f, &w));
        let (eps1, eps2) = (1e-5, 1e-3);
        for i in 0..n {
            let at = |d: f64| {
                let mut f = f.clone();
                f[i] += d;
                loss.sum_values(&y, &f, &w)
            };
            let d1 = (at(eps1) - at(-eps1)) / (2.0 * eps1) / w[i];
            let d2 = (at(eps2) - 2.0 * at(0.0) + at(-eps2)) / (eps2 * eps2) / w[i];
            assert!(
                (-g[i] - d1).abs() < 1e-7,
                "{name} row {i}: {} vs {d1}",
                -g[i]
            );
            assert!((h[i] - d2).abs() < 1e-5, "{name} row {i}: {} vs {d2}", h[i]);
            assert!(h[i] >= 0.0);
        }
        assert!(g.iter().any(|&v| v != 0.0), "{name}");
    }
}

#[test]
fn line_search_is_the_exact_minimiser() {
    let mut rng = TestRng::new(3);
    for name in ["pairwise", "rank_xendcg", "lambdarank(5)"] {
        let loss = build(name);
        let (y, f, w) = sample(&mut rng, 15);
        let b: Vec<f64> = (0..f.len()).map(|_| rng.uniform_in(-1.0, 1.0)).collect();
        let gamma = loss.line_search(&y, &f, &b, &w);
        // lambdarank's line search minimises its cost with the pair weights of f (see
        // lambdarank.rs); only the smooth losses are judged by their own value along b.
        if name != "lambdarank(5)" {
            let phi = |g: f64| {
                let s: Vec<f64> = (0..f.len()).map(|i| f[i] + g * b[i]).collect();
                loss.sum_values(&y, &s, &w)
            };
            let eps = 1e-4;
            assert!(
                phi(gamma) <= phi(gamma + eps) && phi(gamma) <= phi(gamma - eps),
                "{name}"
            );
            let slope = (phi(gamma + 1e-6) - phi(gamma - 1e-6)) / 2e-6;
            assert!(
                slope.abs() < 1e-5 * phi(gamma),
                "{name}: φ'({gamma}) = {slope}"
            );
        } else {
            // Its slope at 0 is the gradient's: a descent direction gets a positive step.
            let mut g = vec![0.0; f.len()];
            loss.neg_gradient_into(&y, &f, &mut g);
            assert!(loss.line_search(&y, &f, &g, &w) > 0.0, "{name}");
        }
        assert_eq!(loss.line_search(&y, &f, &vec![0.0; f.len()], &w), 0.0);
    }
}

#[test]
fn singleton_and_equal_label_groups_contribute_nothing_and_order_does_not_matter() {
    // Groups: 4 (three rows, equal labels), 9 (one row), 2 (rows 1, 3, 6: unsorted).
    let y = [
        1.0, 4.0, 2.0, 2.0, 1.0, 4.0, 0.0, 2.0, 1.0, 4.0, 3.0, 9.0, 1.0, 2.0,
    ];
    let f = [0.3, -0.2, 1.1, 0.5, -0.7, 2.0, 0.9];
    for name in ["pairwise", "rank_xendcg", "lambdarank", "lambdarank(1)"] {
        let loss = build(name);
        let (mut g, mut h) = (vec![0.0; 7], vec![0.0; 7]);
        loss.sum_values_and_derivatives(&y, &f, &[], &mut g, &mut h);
        for i in [0, 2, 4, 5] {
            // xendcg's equal labels still get distinct targets (γ draws): only its singleton is 0.
            if name != "rank_xendcg" || i == 5 {
                assert_eq!((g[i], h[i]), (0.0, 0.0), "{name} row {i}");
            }
        }
        assert!(g[1] != 0.0 && g[3] != 0.0, "{name}");
        // Only group 2's rows, moved to the front in another order: the same value and
        // derivatives for them.
        let sub_y = [0.0, 2.0, 2.0, 2.0, 1.0, 2.0];
        let sub_f = [f[3], f[1], f[6]];
        let (mut sg, mut sh) = (vec![0.0; 3], vec![0.0; 3]);
        let sub = loss.sum_values_and_derivatives(&sub_y, &sub_f, &[], &mut sg, &mut sh);
        if name != "rank_xendcg" {
            // (xendcg's γ depend on the row's place in its group, which this reorders)
            let whole = loss.sum_values(&y, &f, &[]);
            assert!((sub - whole).abs() < 1e-14, "{name}: {sub} {whole}");
            assert_eq!((sg[0], sg[1], sg[2]), (g[3], g[1], g[6]), "{name}");
        }
    }
}

#[test]
fn labels_and_groups_are_checked() {
    for name in ["pairwise", "rank_xendcg", "lambdarank"] {
        let loss = build(name);
        assert!(loss.target_error(&[1.0, 0.0, 0.0, 0.0]).is_none());
        for bad in [-1.0, 0.5, f64::NAN] {
            let error = loss.target_error(&[1.0, 0.0, 2.0, bad]).unwrap();
            assert!(
                error.contains("row 1") && error.contains("query group"),
                "{error}"
            );
        }
        let error = loss.target_error(&[1.0, 0.0, f64::NAN, 0.0]).unwrap();
        assert!(
            error.contains("row 1") && error.contains("relevance"),
            "{error}"
        );
        assert!(loss
            .target_error(&[1.0, 0.0, 2.0])
            .unwrap()
            .contains("two values"));
    }
    for name in ["rank_xendcg", "lambdarank"] {
        let error = build(name).target_error(&[31.0, 0.0]).unwrap();
        assert!(error.contains("[0, 30]"), "{error}");
    }
    for bad in ["lambdarank(0)", "lambdarank(2.5)", "pairwise(3)"] {
        assert!(bad.parse::<LossSpec>().is_err(), "{bad}");
    }
    let k: LossSpec = "lambdarank(k=10)".parse().unwrap();
    assert_eq!(k.to_string(), "lambdarank(10)");
}

/// Queries of `per_group` documents with relevance 0..4 from a hidden score of 5 features.
struct Queries {
    columns: Vec<Vec<f64>>,
    y: Vec<f64>,
}

impl Queries {
    fn new(n_groups: usize, per_group: usize, seed: u64) -> Queries {
        let mut rng = TestRng::new(seed);
        let n = n_groups * per_group;
        let columns: Vec<Vec<f64>> = (0..5)
            .map(|_| (0..n).map(|_| rng.uniform_in(-1.0, 1.0)).collect())
            .collect();
        let mut y = Vec::with_capacity(2 * n);
        // The groups' rows interleaved: row i is in group i % n_groups.
        for i in 0..n {
            let c = |j: usize| columns[j][i];
            let score = 2.0 * c(0) - c(1) + c(2) * c(3) + 0.3 * rng.normal();
            y.push(((score + 2.0) * 1.2).clamp(0.0, 4.0).floor());
            y.push((i % n_groups) as f64);
        }
        Queries { columns, y }
    }
    fn frame(&self) -> Frame<'_> {
        common::numeric_frame(&self.columns)
    }
    fn booster(&self, settings: &[(&str, &str)]) -> Result<Booster, optboost::Error> {
        Booster::new(
            params(settings),
            &TrainData {
                frame: self.frame(),
                y: &self.y,
                weights: None,
            },
            None,
        )
    }
}

/// Mean NDCG@10 over the groups of a ranking target.
fn mean_ndcg(y: &[f64], s: &[f64]) -> f64 {
    let all = groups(y);
    let dcg = |order: &[usize]| -> f64 {
        (order.iter().take(10).enumerate())
            .map(|(p, &i)| (y[2 * i].exp2() - 1.0) / (p as f64 + 2.0).log2())
            .sum()
    };
    let mut total = 0.0;
    for rows in &all {
        let mut by_score = rows.clone();
        by_score.sort_by(|&a, &b| s[b].total_cmp(&s[a]));
        let mut ideal = rows.clone();
        ideal.sort_by(|&a, &b| y[2 * b].total_cmp(&y[2 * a]));
        let best = dcg(&ideal);
        total += if best > 0.0 {
            dcg(&by_score) / best
        } else {
            1.0
        };
    }
    total / all.len() as f64
}

#[test]
fn fits_rank_held_out_queries() {
    let train = Queries::new(60, 20, 5);
    let test = Queries::new(40, 20, 6);
    let random = mean_ndcg(&test.y, &vec![0.0; test.y.len() / 2]);
    for (loss, method) in [
        ("lambdarank", "gbm"),
        ("pairwise", "gbm"),
        ("rank_xendcg", "gbm"),
        ("lambdarank(10)", "agbm"),
        ("pairwise", "rgbm"),
    ] {
        let settings = [
            ("loss", loss),
            ("method", method),
            ("n_iter", "40"),
            ("max_depth", "3"),
        ];
        let mut booster = train.booster(&settings).unwrap();
        booster.run(|_| true).unwrap();
        let losses = common::train_losses(&booster);
        assert!(
            losses.last().unwrap() < &losses[0],
            "{loss} {method}: {losses:?}"
        );
        let scores = booster.model().predict(&test.frame()).unwrap();
        let ndcg = mean_ndcg(&test.y, &scores);
        eprintln!("{loss} {method}: NDCG@10 {ndcg:.4} (constant scores {random:.4})");
        assert!(
            ndcg > 0.85 && ndcg > random + 0.2,
            "{loss} {method}: {ndcg} vs {random}"
        );
    }
}

#[test]
fn the_model_does_not_depend_on_the_thread_count() {
    let train = Queries::new(30, 15, 8);
    for loss in ["lambdarank", "pairwise", "rank_xendcg"] {
        let fit = |threads: &str| {
            let settings = [("loss", loss), ("n_iter", "10"), ("n_threads", threads)];
            let mut booster = train.booster(&settings).unwrap();
            booster.run(|_| true).unwrap();
            booster.model().predict(&train.frame()).unwrap()
        };
        let one = fit("1");
        assert_eq!(one, fit("2"), "{loss}");
    }
}

#[test]
fn proximal_methods_refuse_ranking_losses_and_bad_groups_are_named() {
    let data = Queries::new(10, 5, 9);
    for method in ["proximal", "residual_proximal", "accelerated_proximal"] {
        let error = data
            .booster(&[("loss", "pairwise"), ("method", method)])
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.contains("pairwise") && error.contains("proximal"),
            "{error}"
        );
    }
    let mut bad = Queries::new(10, 5, 9);
    bad.y[2 * 7 + 1] = -3.0;
    let error = bad
        .booster(&[("loss", "lambdarank")])
        .err()
        .unwrap()
        .to_string();
    assert!(
        error.contains("row 7") && error.contains("query group"),
        "{error}"
    );
}

/// MAP@k and MRR over the groups by their definitions (relevant: label > 0; a group without a
/// relevant row counts 1).
fn mean_map_and_mrr(y: &[f64], s: &[f64], k: usize) -> (f64, f64) {
    let all = groups(y);
    let (mut map, mut mrr) = (0.0, 0.0);
    for rows in &all {
        let mut by_score = rows.clone();
        by_score.sort_by(|&a, &b| s[b].total_cmp(&s[a]));
        let relevant = rows.iter().filter(|&&i| y[2 * i] > 0.0).count();
        if relevant == 0 {
            map += 1.0;
            mrr += 1.0;
            continue;
        }
        let precision = |p: usize| {
            by_score[..=p].iter().filter(|&&i| y[2 * i] > 0.0).count() as f64 / (p + 1) as f64
        };
        map += (0..by_score.len().min(k))
            .filter(|&p| y[2 * by_score[p]] > 0.0)
            .map(precision)
            .sum::<f64>()
            / relevant.min(k) as f64;
        let first = by_score.iter().position(|&i| y[2 * i] > 0.0).unwrap();
        mrr += 1.0 / (first + 1) as f64;
    }
    (map / all.len() as f64, mrr / all.len() as f64)
}

#[test]
fn ranking_metrics_match_brute_force_and_stop_early() {
    use optboost::metric::Metric;
    let train = Queries::new(40, 12, 10);
    let valid = Queries::new(20, 12, 11);
    let mut rng = TestRng::new(12);
    let scores: Vec<f64> = (0..valid.y.len() / 2).map(|_| (rng.uniform() * 5.0).floor()).collect();
    let ones = vec![1.0; scores.len()];
    let loss = build("lambdarank");
    let ndcg: Metric = "ndcg@10".parse().unwrap();
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    assert!(close(ndcg.evaluate(&*loss, &valid.y, &scores, &ones), mean_ndcg(&valid.y, &scores)));
    for k in [1, 3, 10] {
        let map: Metric = format!("map@{k}").parse().unwrap();
        let expected = mean_map_and_mrr(&valid.y, &scores, k);
        assert!(close(map.evaluate(&*loss, &valid.y, &scores, &ones), expected.0), "map@{k}");
    }
    let mrr: Metric = "mrr".parse().unwrap();
    let expected = mean_map_and_mrr(&valid.y, &scores, 1).1;
    assert!(close(mrr.evaluate(&*loss, &valid.y, &scores, &ones), expected));
    assert_eq!("ndcg".parse::<Metric>().unwrap().to_string(), "ndcg@10");
    assert!("ndcg@0".parse::<Metric>().is_err());
    assert!(ndcg.check(&LossSpec::Squared).is_err());
    assert!(Metric::Auc.check(&"pairwise".parse().unwrap()).is_err());

    // Early stopping follows the validation NDCG@10 (higher is better).
    let settings = params(&[
        ("loss", "pairwise"),
        ("n_iter", "300"),
        ("learning_rate", "0.5"),
        ("metrics", "ndcg@10,map@5,mrr"),
        ("early_stopping_rounds", "5"),
    ]);
    fn data(q: &Queries) -> TrainData<'_> {
        TrainData { frame: q.frame(), y: &q.y, weights: None }
    }
    let mut booster = Booster::new(settings, &data(&train), Some(&data(&valid))).unwrap();
    booster.run(|_| true).unwrap();
    let records = &booster.history().records;
    assert!(records.len() < 300, "stopped early");
    let last = records.last().unwrap();
    assert_eq!(last.valid_metrics.len(), 3);
    let model_scores = booster.model().predict(&valid.frame()).unwrap();
    let best = records.iter().map(|r| r.valid_metrics[0]).fold(0.0, f64::max);
    assert!(best > 0.8, "{best}");
    let recorded = records.iter().find(|r| r.n_trees == booster.model().n_trees()).unwrap();
    assert!(close(recorded.valid_metrics[0], mean_ndcg(&valid.y, &model_scores)));
}
