//! The Cox partial-likelihood loss (docs/algorithms.md §6): its value against the definition, the
//! gradient and Hessian diagonal against finite differences of the loss, the line search against
//! brute force, label checks, the methods that refuse it, and fits on simulated survival data
//! judged by the concordance index on held-out rows.

mod common;

use common::{params, Data, TestRng};
use optboost::loss::{Cox, Loss, LossSpec};
use optboost::{Booster, StopReason, TrainData};

/// Signed survival times (< 0: censored) with ties, scores and weights.
fn sample(rng: &mut TestRng, n: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let y = (0..n)
        .map(|_| {
            // times on a coarse grid, so that ties occur
            let t = (rng.uniform_in(0.1, 5.0) * 4.0).ceil() / 4.0;
            if rng.chance(0.35) {
                -t
            } else {
                t
            }
        })
        .collect();
    let f = (0..n).map(|_| rng.uniform_in(-2.0, 2.0)).collect();
    let w = (0..n).map(|_| rng.uniform_in(0.2, 2.0)).collect();
    (y, f, w)
}

/// L(f) from its definition: Σ_{event k} w_k (ln Σ_{j: t_j ≥ t_k} w_j e^{f_j} − f_k).
fn naive_loss(y: &[f64], f: &[f64], w: &[f64]) -> f64 {
    (0..y.len())
        .filter(|&k| y[k] > 0.0)
        .map(|k| {
            let risk: f64 = (0..y.len())
                .filter(|&j| y[j].abs() >= y[k])
                .map(|j| w[j] * f[j].exp())
                .sum();
            w[k] * (risk.ln() - f[k])
        })
        .sum()
}

#[test]
fn value_matches_the_definition_and_ignores_a_constant() {
    let mut rng = TestRng::new(1);
    let (y, f, w) = sample(&mut rng, 60);
    let value = Cox.sum_values(&y, &f, &w);
    let naive = naive_loss(&y, &f, &w);
    assert!(
        (value - naive).abs() < 1e-12 * naive.abs(),
        "{value} {naive}"
    );
    let shifted: Vec<f64> = f.iter().map(|f| f + 3.7).collect();
    assert!((Cox.sum_values(&y, &shifted, &w) - value).abs() < 1e-11 * value.abs());
    // Unweighted (empty w) is weights of one.
    let ones = vec![1.0; y.len()];
    assert_eq!(Cox.sum_values(&y, &f, &[]), Cox.sum_values(&y, &f, &ones));
    // No overflow with huge scores: the largest score is factored out.
    let big: Vec<f64> = f.iter().map(|f| f + 800.0).collect();
    assert!((Cox.sum_values(&y, &big, &w) - value).abs() < 1e-9 * value.abs());
    assert_eq!(Cox.init(&y, &w), vec![0.0]);
}

#[test]
fn gradient_and_hessian_diagonal_match_finite_differences() {
    let mut rng = TestRng::new(2);
    for weighted in [false, true] {
        let (y, f, w) = sample(&mut rng, 40);
        let w = if weighted { w } else { vec![1.0; y.len()] };
        let (mut g, mut h) = (vec![0.0; y.len()], vec![0.0; y.len()]);
        let value = Cox.sum_values_and_derivatives(&y, &f, &w, &mut g, &mut h);
        assert_eq!(value, Cox.sum_values(&y, &f, &w));
        // Central differences: steps that balance truncation against the rounding of L (~1e-13).
        let (eps1, eps2) = (1e-5, 1e-3);
        for i in 0..y.len() {
            let at = |d: f64| {
                let mut f = f.clone();
                f[i] += d;
                Cox.sum_values(&y, &f, &w)
            };
            // g and h are per unit of the row's weight: ∂L/∂f_i = w_i g_i.
            let d1 = (at(eps1) - at(-eps1)) / (2.0 * eps1) / w[i];
            let d2 = (at(eps2) - 2.0 * at(0.0) + at(-eps2)) / (eps2 * eps2) / w[i];
            assert!((-g[i] - d1).abs() < 1e-7, "row {i}: {} vs {d1}", -g[i]);
            assert!((h[i] - d2).abs() < 1e-5, "row {i}: {} vs {d2}", h[i]);
            assert!(h[i] >= 0.0);
        }
    }
}

#[test]
fn line_search_is_the_exact_minimiser() {
    let mut rng = TestRng::new(3);
    let (y, f, w) = sample(&mut rng, 80);
    let b: Vec<f64> = (0..y.len()).map(|_| rng.uniform_in(-1.0, 1.0)).collect();
    let gamma = Cox.line_search(&y, &f, &b, &w);
    let phi = |g: f64| {
        let s: Vec<f64> = (0..y.len()).map(|i| f[i] + g * b[i]).collect();
        Cox.sum_values(&y, &s, &w)
    };
    let eps = 1e-4;
    assert!(phi(gamma) <= phi(gamma + eps) && phi(gamma) <= phi(gamma - eps));
    let slope = (phi(gamma + 1e-6) - phi(gamma - 1e-6)) / 2e-6;
    assert!(slope.abs() < 1e-5 * phi(gamma), "φ'({gamma}) = {slope}");
    assert_eq!(Cox.line_search(&y, &f, &vec![0.0; y.len()], &w), 0.0);
}

#[test]
fn labels_must_be_nonzero_finite_signed_times() {
    assert!(Cox.target_error(&[1.0, -2.0, 0.5]).is_none());
    for bad in [0.0, f64::NAN, f64::INFINITY] {
        let error = Cox.target_error(&[1.0, bad]).unwrap();
        assert!(
            error.contains("row 1") && error.contains("signed time"),
            "{error}"
        );
    }
    assert_eq!("cox".parse::<LossSpec>().unwrap(), LossSpec::Cox);
    assert_eq!(LossSpec::Cox.to_string(), "cox");
}

/// Exponential survival with hazard e^{x0 − x1 + x2²/2}, independent exponential censoring (about
/// a third of rows censored).
fn survival(n: usize, seed: u64) -> (Data, Vec<f64>) {
    let mut rng = TestRng::new(seed);
    let columns: Vec<Vec<f64>> = (0..4)
        .map(|_| (0..n).map(|_| rng.uniform_in(-1.5, 1.5)).collect())
        .collect();
    let risk: Vec<f64> = (0..n)
        .map(|i| columns[0][i] - columns[1][i] + 0.5 * columns[2][i].powi(2))
        .collect();
    let y = (0..n)
        .map(|i| {
            let event = -rng.uniform().ln() / risk[i].exp();
            let censor = -rng.uniform().ln() / 0.4;
            if event <= censor {
                event
            } else {
                -censor
            }
        })
        .collect();
    (Data { columns, y }, risk)
}

/// Harrell's C: among comparable pairs (the earlier time an event), the share where the earlier
/// row has the higher predicted risk (ties count half).
fn concordance(y: &[f64], score: &[f64]) -> f64 {
    let (mut agree, mut pairs) = (0.0, 0.0);
    for i in 0..y.len() {
        if y[i] <= 0.0 {
            continue;
        }
        for j in 0..y.len() {
            if y[j].abs() > y[i] {
                pairs += 1.0;
                agree += match score[i].partial_cmp(&score[j]).unwrap() {
                    std::cmp::Ordering::Greater => 1.0,
                    std::cmp::Ordering::Equal => 0.5,
                    std::cmp::Ordering::Less => 0.0,
                };
            }
        }
    }
    agree / pairs
}

#[test]
fn fits_rank_held_out_survival_times() {
    let (train, _) = survival(1500, 5);
    let (test, true_risk) = survival(800, 6);
    let oracle = concordance(&test.y, &true_risk);
    for (method, step) in [
        ("gbm", None),
        ("gbm", Some("line_search")),
        ("gbm", Some("leaf_line_search")),
        ("rgbm", None),
        ("agbm", None),
        ("vagbm", None),
        ("accelerated_gbm", None),
        ("residual_gbm", None),
    ] {
        let mut settings = vec![("method", method), ("n_iter", "80"), ("max_depth", "2")];
        if let Some(step) = step {
            settings.push(("step", step));
        }
        settings.push(("loss", "cox"));
        let params = params(&settings);
        if step.is_none() && method == "gbm" {
            assert_eq!(params.step_in_force().unwrap().0.name(), "newton");
        }
        let (booster, reason) = common::train(params, &train);
        assert!(
            !matches!(reason, StopReason::Diverged { .. }),
            "{method} {step:?}: {reason:?}"
        );
        // The constant steps ρ = 1/σ of the momentum-free methods are short (σ bounds the
        // curvature of the row with the largest cumulative hazard): they descend, slower.
        let losses = common::train_losses(&booster);
        assert!(
            losses.windows(2).all(|l| l[1] <= l[0]),
            "{method}: {losses:?}"
        );
        let scores = booster.model().predict(&test.frame()).unwrap();
        let c = concordance(&test.y, &scores);
        eprintln!(
            "{method} {step:?}: loss {} -> {}, C = {c:.4} (oracle {oracle:.4})",
            losses[0],
            losses.last().unwrap()
        );
        assert!(
            c > 0.7 && c > oracle - 0.05,
            "{method} {step:?}: C = {c}, oracle {oracle}"
        );
        // response: the relative hazard
        let response = booster.model().predict_response(&test.frame()).unwrap();
        assert!((response[0] - scores[0].exp()).abs() < 1e-12 * response[0]);
    }
}

#[test]
fn proximal_methods_refuse_the_cox_loss() {
    let (data, _) = survival(100, 7);
    for method in ["proximal", "residual_proximal", "accelerated_proximal"] {
        let mut p = params(&[("method", method)]);
        p.set("loss", "cox").unwrap();
        let error = Booster::new(
            p,
            &TrainData {
                frame: data.frame(),
                y: &data.y,
                weights: None,
            },
            None,
        )
        .err()
        .unwrap()
        .to_string();
        assert!(
            error.contains("cox") && error.contains("proximal operator") && error.contains("gbm"),
            "{error}"
        );
    }
    let mut y = data.y.clone();
    y[3] = 0.0;
    let error = Booster::new(
        params(&[("loss", "cox")]),
        &TrainData {
            frame: data.frame(),
            y: &y,
            weights: None,
        },
        None,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(error.contains("row 3"), "{error}");
}
