//! The log-link losses `poisson`, `gamma` and `tweedie(p)` (docs/algorithms.md §6): derivatives
//! against finite differences, the prox against its optimality condition (including the Lambert W
//! closed forms at extreme arguments), every 1-D minimisation against brute force and its closed
//! form, the vocabulary, and target validation in training.

mod common;

use common::TestRng;
use optboost::loss::{LeafScratch, LossSpec, ScalarLoss, Tweedie};

fn losses() -> Vec<Tweedie> {
    vec![
        Tweedie::poisson(),
        Tweedie::new(1.2),
        Tweedie::new(1.5),
        Tweedie::new(1.8),
        Tweedie::gamma(),
    ]
}

/// A valid target: counts (zeros among them) for p < 2, positive amounts for the gamma loss.
fn target(rng: &mut TestRng, loss: &Tweedie) -> f64 {
    let u = rng.uniform_in(0.0, 1.0);
    if loss.power() == 2.0 {
        rng.uniform_in(0.05, 20.0)
    } else if u < 0.3 {
        0.0
    } else if u < 0.7 {
        (rng.uniform_in(0.0, 8.0)).floor()
    } else {
        rng.uniform_in(0.0, 30.0)
    }
}

/// argmin of a 1-D convex φ: grid, then golden section around the best grid point.
fn brute_min(phi: impl Fn(f64) -> f64, lo: f64, hi: f64) -> f64 {
    let n = 4000;
    let step = (hi - lo) / n as f64;
    let best = (0..=n)
        .map(|i| lo + step * i as f64)
        .min_by(|a, b| phi(*a).total_cmp(&phi(*b)))
        .unwrap();
    let g = 0.5 * (5f64.sqrt() - 1.0);
    let (mut a, mut b) = (best - step, best + step);
    for _ in 0..100 {
        let (c, d) = (b - g * (b - a), a + g * (b - a));
        if phi(c) < phi(d) {
            b = d;
        } else {
            a = c;
        }
    }
    0.5 * (a + b)
}

#[test]
fn values_are_half_deviances() {
    // ℓ = −log-likelihood up to terms free of f, shifted so that min_f ℓ = 0 at e^f = y:
    // Poisson e^f − y f + y ln y − y, gamma (shape 1) f + y e^{−f} − 1 − ln y.
    let (poisson, gamma) = (Tweedie::poisson(), Tweedie::gamma());
    for (y, f) in [(0.0, 0.3), (3.0, -1.2), (7.5, 2.0)] {
        let y_ln_y = if y > 0.0 { y * f64::ln(y) } else { 0.0 };
        assert_eq!(poisson.value(y, f), f.exp() - y * f + (y_ln_y - y));
        assert_eq!(poisson.response(f), f.exp());
    }
    for (y, f) in [(0.5, 0.3), (3.0, -1.2), (7.5, 2.0)] {
        assert_eq!(gamma.value(y, f), f + y * (-f).exp() - (1.0 + y.ln()));
    }
    for loss in losses() {
        for y in [0.5, 1.0, 4.0, 30.0] {
            let at_mean = loss.value(y, y.ln());
            assert!(
                at_mean.abs() < 1e-13 * y,
                "{}: ℓ({y}, ln y) = {at_mean}",
                loss.name()
            );
            assert!(loss.value(y, y.ln() + 0.3) > 0.0 && loss.value(y, y.ln() - 0.3) > 0.0);
        }
    }
    // Tweedie approaches both ends continuously.
    for (y, f) in [(2.0, 0.4), (0.5, -0.7)] {
        let near_one = Tweedie::new(1.0 + 1e-7);
        assert!((near_one.derivative(y, f) - poisson.derivative(y, f)).abs() < 1e-5);
        assert!((near_one.value(y, f) - poisson.value(y, f)).abs() < 1e-5);
        let near_two = Tweedie::new(2.0 - 1e-7);
        assert!((near_two.derivative(y, f) - gamma.derivative(y, f)).abs() < 1e-5);
        assert!((near_two.value(y, f) - gamma.value(y, f)).abs() < 1e-5);
    }
}

#[test]
fn derivatives_match_finite_differences() {
    let mut rng = TestRng::new(7);
    for loss in losses() {
        for _ in 0..300 {
            let y = target(&mut rng, &loss);
            let f = rng.uniform_in(-4.0, 4.0);
            let h = 1e-5;
            let fd1 = (loss.value(y, f + h) - loss.value(y, f - h)) / (2.0 * h);
            let fd2 = (loss.derivative(y, f + h) - loss.derivative(y, f - h)) / (2.0 * h);
            let (d1, d2) = (loss.derivative(y, f), loss.second_derivative(y, f));
            let scale = 1.0 + loss.value(y, f).abs() + d1.abs();
            assert!(
                (fd1 - d1).abs() < 1e-6 * scale,
                "{}: ℓ'({y}, {f}) = {d1}, finite difference {fd1}",
                loss.name()
            );
            assert!(
                (fd2 - d2).abs() < 1e-6 * (1.0 + d2.abs()),
                "{}: ℓ''({y}, {f}) = {d2}, finite difference {fd2}",
                loss.name()
            );
            assert!(d2 > 0.0, "{}: ℓ'' = {d2} at y = {y}", loss.name());
            let fused = loss.value_and_derivatives(y, f);
            assert_eq!(fused, (loss.value(y, f), d1, d2));
        }
    }
}

#[test]
fn prox_satisfies_its_optimality_condition() {
    let mut rng = TestRng::new(11);
    for loss in losses() {
        let mut points: Vec<(f64, f64, f64)> = (0..400)
            .map(|_| {
                let y = target(&mut rng, &loss);
                let z = rng.uniform_in(-6.0, 6.0);
                let lambda = 10f64.powf(rng.uniform_in(-3.0, 2.0));
                (y, z, lambda)
            })
            .collect();
        // Extreme scores and steps: the Lambert W forms never form e^z.
        let y_big = if loss.power() == 2.0 { 1e-3 } else { 0.0 };
        for z in [-800.0, -60.0, 60.0, 800.0, 1e5] {
            for lambda in [1e-6, 1.0, 1e4] {
                points.push((y_big, z, lambda));
                points.push((250.0, z, lambda));
            }
        }
        for (y, z, lambda) in points {
            let u = loss.prox(y, z, lambda);
            assert!(
                u.is_finite(),
                "{}: prox({y}, {z}, {lambda}) = {u}",
                loss.name()
            );
            let d = loss.derivative(y, u);
            // (z − u)/λ = ℓ'(u): compared as the residual u − z + λℓ'(u), relative to the sizes
            // of its terms (rounding of u itself is ulp(u)·(1 + λℓ''(u))).
            let residual = u - z + lambda * d;
            // The residual's terms: u, z, λ e^{(2−p)u} and λ y e^{(1−p)u}.
            let b = 1.0 - loss.power();
            let size = u.abs() + z.abs() + lambda * (d.abs() + 2.0 * y * (b * u).exp());
            let ulp_effect =
                f64::EPSILON * u.abs().max(1.0) * (1.0 + lambda * loss.second_derivative(y, u));
            assert!(
                residual.abs() <= 1e-12 * size + 8.0 * ulp_effect,
                "{}: y={y} z={z} λ={lambda}: u={u}, residual {residual:e}",
                loss.name()
            );
            // Between z and z − λℓ'(z) (docs/algorithms.md §8).
            let other = z - lambda * loss.derivative(y, z);
            if other.is_finite() {
                let slack = 1e-12 * (z.abs() + other.abs() + 1.0);
                assert!(u >= z.min(other) - slack && u <= z.max(other) + slack);
            }
        }
    }
}

#[test]
fn constant_leaf_and_line_search_are_exact() {
    let mut rng = TestRng::new(5);
    for loss in losses() {
        for trial in 0..30 {
            let n = 1 + (rng.uniform_in(0.0, 40.0) as usize);
            let y: Vec<f64> = (0..n).map(|_| target(&mut rng, &loss)).collect();
            let f: Vec<f64> = (0..n).map(|_| rng.uniform_in(-2.0, 2.0)).collect();
            let b: Vec<f64> = (0..n).map(|_| rng.uniform_in(-1.5, 1.5)).collect();
            let w: Vec<f64> = (0..n).map(|_| rng.uniform_in(0.2, 3.0)).collect();
            let phi = |f: &[f64], b: &[f64], c: f64| -> f64 {
                (0..n)
                    .map(|i| w[i] * loss.value(y[i], f[i] + c * b[i]))
                    .sum()
            };
            let check = |what: &str, ours: f64, f: &[f64], b: &[f64]| {
                let brute = brute_min(|c| phi(f, b, c), -20.0, 20.0);
                let (at_ours, at_brute) = (phi(f, b, ours), phi(f, b, brute));
                assert!(
                    at_ours <= at_brute + 1e-10 * (1.0 + at_brute.abs()),
                    "{} {what} (trial {trial}): φ({ours}) = {at_ours} > φ({brute}) = {at_brute}",
                    loss.name()
                );
            };
            if y.iter().any(|&v| v > 0.0) {
                let zeros = vec![0.0; n];
                let ones = vec![1.0; n];
                let init = loss.init(&y, &w);
                let mean = (0..n).map(|i| w[i] * y[i]).sum::<f64>() / w.iter().sum::<f64>();
                assert!((init - mean.ln()).abs() < 1e-12 * (1.0 + mean.ln().abs()));
                check("init", init, &zeros, &ones);
                let rows: Vec<u32> = (0..n as u32).collect();
                check("leaf", loss.leaf_value(&y, &f, &w, &rows), &f, &ones);
                let (d1, d2) = loss.shifted_derivative_sums(&y, &f, &w, &rows, 0.0);
                let optimum = (loss.leaf_optimum_from_derivatives(d1, d2)).expect("a closed form");
                check("closed-form leaf", optimum, &f, &ones);
            }
            check("line search", loss.line_search(&y, &f, &b, &w), &f, &b);
        }
    }
}

#[test]
fn leaf_values_of_a_tree_equal_one_leaf_at_a_time() {
    let mut rng = TestRng::new(3);
    let n = 3000;
    for loss in losses() {
        let y: Vec<f64> = (0..n).map(|_| target(&mut rng, &loss)).collect();
        let f: Vec<f64> = (0..n).map(|_| rng.uniform_in(-1.0, 1.0)).collect();
        let w = vec![1.0; n];
        let leaf_of: Vec<u32> = (0..n).map(|_| rng.uniform_in(0.0, 5.0) as u32).collect();
        let leaves: Vec<Vec<u32>> = (0..5)
            .map(|j| {
                (0..n as u32)
                    .filter(|&i| leaf_of[i as usize] == j)
                    .collect()
            })
            .collect();
        let slices: Vec<&[u32]> = leaves.iter().map(|r| &r[..]).collect();
        let all = loss.leaf_values(&y, &f, &w, &slices, &leaf_of, &mut LeafScratch::default());
        for (j, rows) in leaves.iter().enumerate() {
            let one = loss.leaf_value(&y, &f, &w, rows);
            assert!(
                (all[j] - one).abs() <= 1e-12 * (1.0 + one.abs()),
                "{}",
                loss.name()
            );
            // The closed form's optimality: Σ w ℓ'(y, f + c) = 0 over the leaf.
            let slope: f64 = rows
                .iter()
                .map(|&r| loss.derivative(y[r as usize], f[r as usize] + one))
                .sum();
            let size: f64 = rows
                .iter()
                .map(|&r| loss.second_derivative(y[r as usize], f[r as usize] + one))
                .sum();
            assert!(slope.abs() < 1e-9 * size, "{}: slope {slope}", loss.name());
        }
    }
}

#[test]
fn all_zero_counts_give_a_finite_floor() {
    for loss in [Tweedie::poisson(), Tweedie::new(1.5)] {
        let (y, w) = (vec![0.0; 4], vec![1.0; 4]);
        let c = loss.init(&y, &w);
        assert!(c.is_finite() && c < -30.0, "{}: {c}", loss.name());
        // The loss has fallen to ε_machine times its value at 0.
        assert!(
            loss.value(0.0, c) <= 1e-15 * loss.value(0.0, 0.0),
            "{}",
            loss.name()
        );
    }
    let gamma = Tweedie::gamma();
    assert_eq!(gamma.init(&[1.0, 2.0], &[0.0, 0.0]), 0.0); // no weight: no step
}

#[test]
fn vocabulary_parses_validates_and_round_trips() {
    let parse = |s: &str| s.parse::<LossSpec>();
    assert_eq!(parse("poisson").unwrap(), LossSpec::Poisson);
    assert_eq!(parse("Gamma").unwrap(), LossSpec::Gamma);
    assert_eq!(parse("tweedie").unwrap(), LossSpec::Tweedie { p: 1.5 });
    assert_eq!(
        parse("tweedie(p=1.3)").unwrap(),
        LossSpec::Tweedie { p: 1.3 }
    );
    assert_eq!(parse("tweedie(1.7)").unwrap(), LossSpec::Tweedie { p: 1.7 });
    for bad in ["tweedie(1)", "tweedie(p=2)", "tweedie(2.5)", "tweedie(nan)"] {
        let message = parse(bad).unwrap_err().to_string();
        assert!(message.contains("(1, 2)"), "{bad}: {message}");
    }
    assert!(parse("poisson(1)").is_err());
    for spec in [
        LossSpec::Poisson,
        LossSpec::Gamma,
        LossSpec::Tweedie { p: 1.25 },
    ] {
        assert_eq!(parse(&spec.to_string()).unwrap(), spec);
        let loss = spec.build(0).unwrap();
        assert_eq!(loss.n_outputs(), 1, "{spec} is a scalar loss");
        assert_eq!(loss.name(), spec.name());
        assert!(!loss.is_binary() && loss.sigma().is_none());
    }
}

#[test]
fn targets_outside_the_domain_are_named() {
    assert_eq!(
        Tweedie::poisson().target_requirement(-1.0),
        Some("targets ≥ 0")
    );
    assert_eq!(Tweedie::poisson().target_requirement(0.0), None);
    assert_eq!(
        Tweedie::new(1.5).target_requirement(-0.5),
        Some("targets ≥ 0")
    );
    assert_eq!(
        Tweedie::gamma().target_requirement(0.0),
        Some("targets > 0")
    );
    assert_eq!(Tweedie::gamma().target_requirement(0.1), None);
}

/// σ for the default constant step is the largest ℓ'' at the start: e^{(2−p)f} closed forms.
#[test]
fn sigma_from_the_start_is_the_largest_curvature_there() {
    let y = [0.0, 3.0, 40.0];
    let f = [1.0, 2.0, 0.5];
    for loss in losses() {
        let p = loss.power();
        let curvature = |y: f64, f: f64| {
            (2.0 - p) * ((2.0 - p) * f).exp() - (1.0 - p) * y * ((1.0 - p) * f).exp()
        };
        let largest = (y.iter().zip(&f))
            .map(|(&y, &f)| curvature(y, f))
            .fold(0.0, f64::max);
        let sigma = loss.sigma_from(&y, &f).unwrap();
        assert!(
            (sigma - largest).abs() <= 1e-12 * largest,
            "p = {p}: {sigma} vs {largest}"
        );
    }
}

/// With its default ρ = 1/σ (σ from the data), no constant-step method diverges on counts of
/// mean ~35, where ρ = 1 (σ unknown) diverged at the first iteration.
#[test]
fn constant_step_methods_descend_on_large_counts_with_their_defaults() {
    use optboost::{Booster, Params, StopReason, TrainData};
    let mut rng = TestRng::new(7);
    let n = 400;
    let x: Vec<f64> = (0..n).map(|_| rng.uniform_in(0.0, 1.0)).collect();
    let y: Vec<f64> = x
        .iter()
        .map(|&x| (35.0 * (1.0 + x) * rng.uniform_in(0.5, 1.5)).floor())
        .collect();
    let columns = vec![x];
    for method in [
        "rgbm",
        "agbm",
        "agbmr",
        "vagbm",
        "repeated_gbm",
        "residual_gbm",
    ] {
        for loss in ["poisson", "tweedie(1.5)", "gamma"] {
            let mut params = Params::default();
            params
                .set("method", method)
                .unwrap()
                .set("loss", loss)
                .unwrap();
            params.set("n_iter", "30").unwrap();
            let train = TrainData {
                frame: common::numeric_frame(&columns),
                y: &y,
                weights: None,
            };
            let mut booster = Booster::new(params, &train, None).unwrap();
            let reason = booster.run(|_| true).unwrap();
            assert!(
                !matches!(reason, StopReason::Diverged { .. }),
                "{method} {loss}: {reason:?}"
            );
            let losses: Vec<f64> = booster
                .history()
                .records
                .iter()
                .map(|r| r.train_loss)
                .collect();
            assert_eq!(losses.len(), 30, "{method} {loss}");
            assert!(losses[29] < 0.8 * losses[0], "{method} {loss}: {losses:?}");
        }
    }
}

#[test]
fn the_log_link_losses_keep_their_curvature_on_every_slope() {
    // ℓ'' is a sum of positive exponentials (y(p−1)e^{(1−p)f} + (2−p)e^{(2−p)f}): Newton leaves
    // stay bounded, so these losses keep `leaf_newton_steps` (tests/losses.rs checks the others).
    let mut rng = TestRng::new(19);
    for loss in losses() {
        assert!(!loss.curvature_can_vanish(), "{}", loss.name());
        for _ in 0..2000 {
            let (y, f) = (target(&mut rng, &loss), rng.uniform_in(-6.0, 6.0));
            if loss.derivative(y, f) != 0.0 {
                assert!(
                    loss.second_derivative(y, f) > 0.0,
                    "{} at y={y}, f={f}",
                    loss.name()
                );
            }
        }
    }
}

#[test]
fn newton_leaves_stop_at_the_optimum_of_counts_far_above_their_prediction() {
    // Counts of 1–3 except for the 0.5% of rows with x0 > 0.995, which count 10⁹ (a heavy tail):
    // at the start every row is predicted the mean count, and the tail's leaf holds counts some
    // 200 times it. A Newton step from 0 on the log scale is (Σy − Σμ)/Σμ ≈ 200 there, against
    // the optimum ln(Σy/Σμ) ≈ 5.3: unchecked, ν = 0.1 times it raised the tail's predictions by
    // e^20 and the fit stopped as diverged at the first tree, keeping the constant.
    let mut rng = TestRng::new(23);
    let n = 4000;
    let columns: Vec<Vec<f64>> = (0..3)
        .map(|_| (0..n).map(|_| rng.uniform()).collect())
        .collect();
    let y: Vec<f64> = (0..n)
        .map(|i| {
            if columns[0][i] > 0.995 {
                1e9
            } else {
                (1.0 + 2.0 * rng.uniform()).round()
            }
        })
        .collect();
    let data = common::Data { columns, y };
    for loss in ["poisson", "gamma", "tweedie(1.5)"] {
        for method in ["gbm", "residual_gbm", "proximal"] {
            let mut p = common::params(&[("method", method), ("loss", loss)]);
            p.n_iter = 20;
            let (booster, reason) = common::train(p, &data);
            assert_eq!(reason, optboost::StopReason::Completed, "{method} {loss}");
            let losses = common::train_losses(&booster);
            for pair in losses.windows(2) {
                assert!(pair[1] <= pair[0], "{method} {loss}: {losses:?}");
            }
        }
    }
}
