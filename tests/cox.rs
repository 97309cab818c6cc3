//! The Cox partial-likelihood loss (docs/algorithms.md §6): its value against the definition, the
//! gradient and Hessian diagonal against finite differences of the loss, the line search against
//! brute force, label checks, the methods that refuse it, and fits on simulated survival data
//! judged by the concordance index on held-out rows.

mod common;

use common::{params, Data, TestRng};
use optboost::loss::{Cox, Loss, LossSpec, Ties, COX_COLUMNS};
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
    let value = Cox::BRESLOW.sum_values(&y, &f, &w);
    let naive = naive_loss(&y, &f, &w);
    assert!(
        (value - naive).abs() < 1e-12 * naive.abs(),
        "{value} {naive}"
    );
    let shifted: Vec<f64> = f.iter().map(|f| f + 3.7).collect();
    assert!((Cox::BRESLOW.sum_values(&y, &shifted, &w) - value).abs() < 1e-11 * value.abs());
    // Unweighted (empty w) is weights of one.
    let ones = vec![1.0; y.len()];
    assert_eq!(Cox::BRESLOW.sum_values(&y, &f, &[]), Cox::BRESLOW.sum_values(&y, &f, &ones));
    // No overflow with huge scores: the largest score is factored out.
    let big: Vec<f64> = f.iter().map(|f| f + 800.0).collect();
    assert!((Cox::BRESLOW.sum_values(&y, &big, &w) - value).abs() < 1e-9 * value.abs());
    assert_eq!(Cox::BRESLOW.init(&y, &w), vec![0.0]);
}

#[test]
fn gradient_and_hessian_diagonal_match_finite_differences() {
    let mut rng = TestRng::new(2);
    for weighted in [false, true] {
        let (y, f, w) = sample(&mut rng, 40);
        let w = if weighted { w } else { vec![1.0; y.len()] };
        let (mut g, mut h) = (vec![0.0; y.len()], vec![0.0; y.len()]);
        let value = Cox::BRESLOW.sum_values_and_derivatives(&y, &f, &w, &mut g, &mut h);
        assert_eq!(value, Cox::BRESLOW.sum_values(&y, &f, &w));
        // Central differences: steps that balance truncation against the rounding of L (~1e-13).
        let (eps1, eps2) = (1e-5, 1e-3);
        for i in 0..y.len() {
            let at = |d: f64| {
                let mut f = f.clone();
                f[i] += d;
                Cox::BRESLOW.sum_values(&y, &f, &w)
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
    let gamma = Cox::BRESLOW.line_search(&y, &f, &b, &w);
    let phi = |g: f64| {
        let s: Vec<f64> = (0..y.len()).map(|i| f[i] + g * b[i]).collect();
        Cox::BRESLOW.sum_values(&y, &s, &w)
    };
    let eps = 1e-4;
    assert!(phi(gamma) <= phi(gamma + eps) && phi(gamma) <= phi(gamma - eps));
    let slope = (phi(gamma + 1e-6) - phi(gamma - 1e-6)) / 2e-6;
    assert!(slope.abs() < 1e-5 * phi(gamma), "φ'({gamma}) = {slope}");
    assert_eq!(Cox::BRESLOW.line_search(&y, &f, &vec![0.0; y.len()], &w), 0.0);
}

#[test]
fn labels_must_be_nonzero_finite_signed_times() {
    assert!(Cox::BRESLOW.target_error(&[1.0, -2.0, 0.5]).is_none());
    for bad in [0.0, f64::NAN, f64::INFINITY] {
        let error = Cox::BRESLOW.target_error(&[1.0, bad]).unwrap();
        assert!(
            error.contains("row 1") && error.contains("signed time"),
            "{error}"
        );
    }
    let breslow = LossSpec::Cox {
        ties: Ties::Breslow,
    };
    assert_eq!("cox".parse::<LossSpec>().unwrap(), breslow);
    assert_eq!(breslow.to_string(), "cox");
    let efron = LossSpec::Cox { ties: Ties::Efron };
    for text in ["cox(ties=efron)", "cox(efron)", "Cox(ties='efron')", "cox(ties=\"efron\")"] {
        assert_eq!(text.parse::<LossSpec>().unwrap(), efron, "{text}");
    }
    assert_eq!(efron.to_string(), "cox(ties=efron)");
    assert_eq!("cox(ties=breslow)".parse::<LossSpec>().unwrap(), breslow);
    let error = "cox(ties=exact)".parse::<LossSpec>().unwrap_err().to_string();
    assert!(error.contains("ties") && error.contains("breslow or efron"), "{error}");
    // Breslow's ties are left out of the model file, so models saved before Efron read the same.
    assert_eq!(serde_json::to_string(&breslow).unwrap(), r#"{"name":"cox"}"#);
    assert_eq!(
        serde_json::to_string(&efron).unwrap(),
        r#"{"name":"cox","ties":"efron"}"#
    );
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

/// Counting-process rows (signed stop, start, stratum; `COX_COLUMNS` per row) with tied stop
/// times, start times before them on the same grid, and `strata` strata; scores and weights.
fn counting_sample(rng: &mut TestRng, n: usize, strata: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (y, f, w) = sample(rng, n);
    let rows = (0..n)
        .flat_map(|i| {
            let stop = y[i].abs();
            let start = if rng.chance(0.5) {
                0.0
            } else {
                ((rng.uniform() * stop * 4.0).floor() / 4.0).min(stop - 0.25)
            };
            [y[i], start, (i % strata) as f64]
        })
        .collect();
    (rows, f, w)
}

/// L(f) from its definition for counting-process rows: for each distinct (stratum, event time),
/// the risk set of rows in the stratum with start < t ≤ stop; Breslow gives each event
/// ln R − f, Efron its l-th tied event ln(R − (l/d) E) − f with the mean event weight.
fn naive_counting_loss(y: &[f64], f: &[f64], w: &[f64], efron: bool) -> f64 {
    let n = y.len() / COX_COLUMNS;
    let row = |i: usize| (y[3 * i], y[3 * i + 1], y[3 * i + 2]);
    let mut times: Vec<(f64, f64)> = (0..n)
        .filter(|&i| row(i).0 > 0.0)
        .map(|i| (row(i).2, row(i).0))
        .collect();
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    times.dedup();
    let mut loss = 0.0;
    for (stratum, t) in times {
        let risk: f64 = (0..n)
            .filter(|&j| row(j).2 == stratum && row(j).1 < t && t <= row(j).0.abs())
            .map(|j| w[j] * f[j].exp())
            .sum();
        let events: Vec<usize> = (0..n)
            .filter(|&k| row(k).2 == stratum && row(k).0 == t)
            .collect();
        let d = events.len() as f64;
        let mean_weight = events.iter().map(|&k| w[k]).sum::<f64>() / d;
        let tied: f64 = events.iter().map(|&k| w[k] * f[k].exp()).sum();
        for (l, &k) in events.iter().enumerate() {
            loss -= w[k] * f[k];
            loss += if efron {
                mean_weight * (risk - l as f64 / d * tied).ln()
            } else {
                w[k] * risk.ln()
            };
        }
    }
    loss
}

fn cox(ties: Ties, counting: bool) -> Cox {
    Cox::new(ties, counting)
}

#[test]
fn counting_process_strata_and_efron_match_their_definitions() {
    let mut rng = TestRng::new(11);
    for strata in [1, 3] {
        let (y, f, w) = counting_sample(&mut rng, 70, strata);
        for ties in [Ties::Breslow, Ties::Efron] {
            let value = cox(ties, true).sum_values(&y, &f, &w);
            let naive = naive_counting_loss(&y, &f, &w, ties == Ties::Efron);
            assert!(
                (value - naive).abs() < 1e-11 * naive.abs(),
                "{ties:?}, {strata} strata: {value} vs {naive}"
            );
        }
    }
}

#[test]
fn stratified_loss_is_the_sum_of_each_stratum_alone() {
    let mut rng = TestRng::new(12);
    let (y, f, w) = counting_sample(&mut rng, 90, 3);
    for ties in [Ties::Breslow, Ties::Efron] {
        let loss = cox(ties, true);
        let (mut g, mut h) = (vec![0.0; f.len()], vec![0.0; f.len()]);
        let total = loss.sum_values_and_derivatives(&y, &f, &w, &mut g, &mut h);
        let mut summed = 0.0;
        for stratum in 0..3 {
            let rows: Vec<usize> = (0..f.len()).filter(|&i| i % 3 == stratum).collect();
            // The stratum's rows alone, as one stratum (stratum column 0).
            let ys: Vec<f64> = (rows.iter())
                .flat_map(|&i| [y[3 * i], y[3 * i + 1], 0.0])
                .collect();
            let fs: Vec<f64> = rows.iter().map(|&i| f[i]).collect();
            let ws: Vec<f64> = rows.iter().map(|&i| w[i]).collect();
            let (mut gs, mut hs) = (vec![0.0; fs.len()], vec![0.0; fs.len()]);
            summed += loss.sum_values_and_derivatives(&ys, &fs, &ws, &mut gs, &mut hs);
            for (k, &i) in rows.iter().enumerate() {
                assert!((g[i] - gs[k]).abs() < 1e-12, "{ties:?} row {i}");
                assert!((h[i] - hs[k]).abs() < 1e-12, "{ties:?} row {i}");
            }
        }
        assert!((total - summed).abs() < 1e-12 * total.abs(), "{ties:?}: {total} vs {summed}");
    }
}

#[test]
fn efron_and_counting_derivatives_match_finite_differences() {
    let mut rng = TestRng::new(13);
    let (y, f, w) = counting_sample(&mut rng, 40, 2);
    let (y1, ..) = sample(&mut TestRng::new(14), 40);
    for (loss, y) in [
        (cox(Ties::Efron, false), &y1),
        (cox(Ties::Breslow, true), &y),
        (cox(Ties::Efron, true), &y),
    ] {
        let (mut g, mut h) = (vec![0.0; f.len()], vec![0.0; f.len()]);
        loss.sum_values_and_derivatives(y, &f, &w, &mut g, &mut h);
        let (eps1, eps2) = (1e-5, 1e-3);
        for i in 0..f.len() {
            let at = |d: f64| {
                let mut f = f.clone();
                f[i] += d;
                loss.sum_values(y, &f, &w)
            };
            let d1 = (at(eps1) - at(-eps1)) / (2.0 * eps1) / w[i];
            let d2 = (at(eps2) - 2.0 * at(0.0) + at(-eps2)) / (eps2 * eps2) / w[i];
            assert!((-g[i] - d1).abs() < 1e-7, "{loss:?} row {i}: {} vs {d1}", -g[i]);
            assert!((h[i] - d2).abs() < 1e-5, "{loss:?} row {i}: {} vs {d2}", h[i]);
        }
        // The line search along a direction is the exact minimiser under every layout.
        let b: Vec<f64> = (0..f.len()).map(|_| rng.uniform_in(-1.0, 1.0)).collect();
        let gamma = loss.line_search(y, &f, &b, &w);
        let phi = |g: f64| {
            let s: Vec<f64> = (0..f.len()).map(|i| f[i] + g * b[i]).collect();
            loss.sum_values(y, &s, &w)
        };
        let slope = (phi(gamma + 1e-6) - phi(gamma - 1e-6)) / 2e-6;
        assert!(slope.abs() < 1e-5 * phi(gamma), "{loss:?}: φ'({gamma}) = {slope}");
    }
}

#[test]
fn efron_is_breslow_without_ties_and_start_zero_is_plain() {
    let mut rng = TestRng::new(15);
    let (y, f, w) = sample(&mut rng, 60);
    // Distinct times: no ties.
    let distinct: Vec<f64> = (y.iter().enumerate())
        .map(|(i, &t)| t + t.signum() * i as f64 * 1e-3)
        .collect();
    let derivatives = |loss: Cox, y: &[f64]| {
        let (mut g, mut h) = (vec![0.0; f.len()], vec![0.0; f.len()]);
        let value = loss.sum_values_and_derivatives(y, &f, &w, &mut g, &mut h);
        (value, g, h)
    };
    let close = |a: &(f64, Vec<f64>, Vec<f64>), b: &(f64, Vec<f64>, Vec<f64>)| {
        assert!((a.0 - b.0).abs() < 1e-12 * a.0.abs(), "{} vs {}", a.0, b.0);
        for i in 0..f.len() {
            assert!((a.1[i] - b.1[i]).abs() < 1e-12 && (a.2[i] - b.2[i]).abs() < 1e-12);
        }
    };
    close(
        &derivatives(cox(Ties::Efron, false), &distinct),
        &derivatives(Cox::BRESLOW, &distinct),
    );
    // With ties they differ: Efron's risk sets shrink over the tied events.
    assert!(
        cox(Ties::Efron, false).sum_values(&y, &f, &w) < Cox::BRESLOW.sum_values(&y, &f, &w)
    );
    // Start 0 (before every time), one stratum: the plain data.
    let counting: Vec<f64> = y.iter().flat_map(|&t| [t, 0.0, 0.0]).collect();
    for ties in [Ties::Breslow, Ties::Efron] {
        close(&derivatives(cox(ties, true), &counting), &derivatives(cox(ties, false), &y));
    }
}

#[test]
fn counting_labels_are_checked() {
    let loss = cox(Ties::Breslow, true);
    assert_eq!(loss.target_width(), COX_COLUMNS);
    assert!(loss.target_error(&[2.0, 0.0, 0.0, -3.0, 1.0, 1.0]).is_none());
    let error = loss.target_error(&[2.0, 0.0, 0.0, -3.0, 3.0, 1.0]).unwrap();
    assert!(error.contains("row 1 starts at 3 and stops at 3"), "{error}");
    let error = loss.target_error(&[2.0, 0.0, 0.0, 0.0, 0.0, 1.0]).unwrap();
    assert!(error.contains("row 1 is 0"), "{error}");
}

/// The survival data of `survival` in two strata whose baseline hazards differ tenfold, each row's follow-up split at a random time into two counting-process rows (the
/// second with the covariates of the first): a stratified fit of the split data ranks held-out
/// rows as well as one of the plain data.
#[test]
fn stratified_counting_process_fits_rank_held_out_rows() {
    let (train, _) = survival(1200, 21);
    let (test, true_risk) = survival(600, 22);
    let mut rng = TestRng::new(23);
    let (mut columns, mut y) = (vec![Vec::new(); 4], Vec::new());
    for i in 0..train.y.len() {
        let stratum = (i % 2) as f64;
        let scale = [1.0, 10.0][i % 2];
        let split = scale * train.y[i].abs() * rng.uniform_in(0.2, 0.8);
        for (start, end) in [(0.0, -split), (split, scale * train.y[i])] {
            for (c, column) in columns.iter_mut().enumerate() {
                column.push(train.columns[c][i]);
            }
            y.extend([end, start, stratum]);
        }
    }
    let data = Data { columns, y };
    let params = params(&[("loss", "cox(ties=efron)"), ("n_iter", "60"), ("max_depth", "2")]);
    let (booster, _) = common::train(params, &data);
    let losses = common::train_losses(&booster);
    assert!(losses.last().unwrap() < &losses[0], "{losses:?}");
    let c = concordance(&test.y, &booster.model().predict(&test.frame()).unwrap());
    let oracle = concordance(&test.y, &true_risk);
    assert!(c > oracle - 0.05, "C = {c}, oracle {oracle}");
}
