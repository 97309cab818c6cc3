//! Prediction at any iteration, the best iterate a momentum method keeps, the safeguard that
//! restarts the momentum when the training loss rises, and the sign of AGBM's corrected residual.

mod common;

use common::*;
use optboost::{Method, StopReason};

/// Every method, so that a new one is tested without editing this file.
const METHODS: &[&str] = Method::NAMES;

fn settings<'a>(method: &'a str, loss: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("method", method),
        ("loss", loss),
        ("max_depth", "3"),
        ("learning_rate", "0.3"),
        ("selection", "random"),
        ("t", "2"),
        ("max_inner", "2"),
    ]
}

#[test]
fn predict_at_iteration_k_is_a_fresh_k_iteration_fit_bit_for_bit() {
    let regression = friedman(300, 5, 31);
    let classes = blobs(300, 32);
    let mut binary = friedman(300, 5, 33);
    binary.y = binary.y.iter().map(|&v| f64::from(v > 14.0)).collect();
    let n = 10;
    for method in METHODS {
        for (loss, data) in [
            ("squared", &regression),
            ("logistic", &binary),
            ("softmax", &classes),
            ("multiclass_hinge", &classes),
        ] {
            if loss == "multiclass_hinge" && !["agbm", "agbmr", "vagbm"].contains(method) {
                // Checked for the AGBM family's multiclass form; other momentum methods' plain
                // steps raise this non-smooth loss here and keep the initial constant.
                continue;
            }
            let mut p = params(&settings(method, loss));
            if p.validate().is_err() {
                continue; // a step rule the method does not take with this loss
            }
            p.n_iter = n;
            let (full, _) = train(p.clone(), data);
            let model = full.model();
            assert_eq!(model.n_iterations(), n, "{method} {loss}");
            let frame = data.frame();
            let staged = model.predict_staged(&frame, &[0, 1, 4, n]).unwrap();
            for (s, k) in [0, 1, 4, n].into_iter().enumerate() {
                let at_k = model.predict_iteration(&frame, k).unwrap();
                assert_eq!(staged[s], at_k, "{method} {loss}: staged at {k}");
                if k == 0 {
                    continue;
                }
                let mut q = p.clone();
                q.n_iter = k;
                let (fresh, _) = train(q, data);
                let fresh = fresh.model();
                if fresh.n_iterations() < k {
                    // The fresh run kept an earlier, better iterate (a plain step can raise a
                    // non-smooth loss such as the multiclass hinge): no iteration k to compare.
                    continue;
                }
                assert_eq!(
                    fresh.predict_iteration(&frame, k).unwrap(),
                    at_k,
                    "{method} {loss} at iteration {k}"
                );
                if fresh.best_iteration.is_none() {
                    assert_eq!(
                        fresh.predict(&frame).unwrap(),
                        at_k,
                        "{method} {loss} at {k}"
                    );
                }
            }
            if model.best_iteration.is_none() {
                assert_eq!(
                    model.predict_iteration(&frame, n).unwrap(),
                    model.predict(&frame).unwrap()
                );
            }
            assert!(model.predict_iteration(&frame, n + 1).is_err());
        }
    }
}

fn housing(settings: &[(&str, &str)], n_iter: usize) -> (optboost::Booster, StopReason) {
    let data = csv("boston_housing").shuffled(2);
    let mut p = params(&[("learning_rate", "1"), ("max_depth", "3")]);
    for (name, value) in settings {
        p.set(name, value).unwrap();
    }
    p.n_iter = n_iter;
    train(p, &data)
}

#[test]
fn reference_code_sign_converges_where_the_papers_sign_diverges() {
    // AGBM paper, Fig. 1 setting: housing, η = 1, depth 3, γ = 0.05, both unguarded.
    let common = [("method", "agbm"), ("gamma", "0.05"), ("safeguard", "none")];
    let mut paper = common.to_vec();
    paper.push(("corrected_residual", "paper"));
    let (paper, reason) = housing(&paper, 150);
    let losses = train_losses(&paper);
    let best = losses.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(
        matches!(reason, StopReason::Diverged { .. }) || *losses.last().unwrap() > 10.0 * best,
        "paper sign: {reason:?}, last {} vs best {best}",
        losses.last().unwrap()
    );

    let mut reference = common.to_vec();
    reference.push(("corrected_residual", "reference_code"));
    let (reference, reason) = housing(&reference, 150);
    assert_eq!(reason, StopReason::Completed);
    let losses = train_losses(&reference);
    assert!(losses.last().unwrap() < &(0.05 * losses[0]), "{losses:?}");
}

#[test]
fn the_safeguard_keeps_the_training_loss_from_rising() {
    // Settings where every momentum method diverges unguarded (η = 1, γ = 0.5, the paper's
    // sign): with the safeguard the loss never rises, and the undone iterations are marked.
    for method in [
        "agbm",
        "agbmr",
        "vagbm",
        "accelerated_gbm",
        "accelerated_proximal",
    ] {
        let common = [
            ("method", method),
            ("gamma", "0.5"),
            ("corrected_residual", "paper"),
        ];
        let (guarded, reason) = housing(&common, 120);
        assert_eq!(reason, StopReason::Completed, "{method}");
        let records = &guarded.history().records;
        let mut previous = f64::INFINITY;
        for r in records {
            assert!(
                r.train_loss <= previous,
                "{method}: rose at {}",
                r.iteration
            );
            previous = r.train_loss;
            if r.restarted {
                let before = &records[r.iteration - 2];
                assert_eq!(r.train_loss, before.train_loss, "{method}");
                assert_eq!(r.n_trees, before.n_trees, "{method}");
            }
        }
        let losses = train_losses(&guarded);
        assert!(
            losses.last().unwrap() < &(0.1 * losses[0]),
            "{method}: {losses:?}"
        );
        assert!(guarded.model().best_iteration.is_none(), "{method}");
    }
    // Unguarded, VAGBM diverges on this data (the AGBM paper's Fig. 1).
    let (_, reason) = housing(&[("method", "vagbm"), ("safeguard", "none")], 120);
    assert!(matches!(reason, StopReason::Diverged { .. }), "{reason:?}");
}

#[test]
fn a_momentum_method_keeps_its_best_iterate_and_can_train_on_from_the_last() {
    // Unguarded AGBM with the paper's sign at η = 1 drifts up after its best iterate; stopped
    // before the divergence test fires, it completes and keeps the best iterate.
    let common = [
        ("method", "agbm"),
        ("gamma", "0.1"),
        ("safeguard", "none"),
        ("corrected_residual", "paper"),
    ];
    let (run, reason) = housing(&common, 60);
    assert_eq!(reason, StopReason::Completed);
    let losses = train_losses(&run);
    let (best_index, best) =
        losses
            .iter()
            .copied()
            .enumerate()
            .fold(
                (0, f64::INFINITY),
                |a, (i, l)| if l < a.1 { (i, l) } else { a },
            );
    assert!(
        *losses.last().unwrap() > best,
        "the loss should rise: {losses:?}"
    );
    let model = run.model();
    assert_eq!(model.best_iteration, Some(best_index + 1));
    assert_eq!(model.n_iterations(), best_index + 1);
    let data = csv("boston_housing").shuffled(2);
    let frame = data.frame();
    assert_eq!(
        model.predict(&frame).unwrap(),
        model.predict_iteration(&frame, best_index + 1).unwrap()
    );

    // Training on continues from the last iterate: 60 + 20 iterations = a fresh 80-iteration run
    // up to its own choice of iterate.
    let (mut extended, _) = housing(&common, 60);
    extended.extend(20);
    extended.run(|_| true).unwrap();
    let (whole, _) = housing(&common, 80);
    let records = |b: &optboost::Booster| {
        b.history()
            .records
            .iter()
            .map(|r| (r.iteration, r.n_trees, r.train_loss, r.restarted))
            .collect::<Vec<_>>()
    };
    assert_eq!(records(&extended), records(&whole));
    assert_eq!(extended.model(), whole.model());
}

#[test]
fn a_run_that_diverges_at_once_keeps_the_constant_and_says_so() {
    // A learning rate of 1000 overshoots at the first step: the model is the initial constant.
    let data = friedman(200, 4, 35);
    let p = params(&[
        ("learning_rate", "1000"),
        ("step", "constant"),
        ("n_iter", "5"),
    ]);
    let (run, reason) = train(p, &data);
    assert!(
        matches!(reason, StopReason::Diverged { iteration: 1, .. }),
        "{reason:?}"
    );
    assert_eq!(run.model().best_iteration, Some(0));
    assert_eq!(run.model().n_trees(), 0);
    assert!(reason.to_string().contains("iteration 1"));
}

#[test]
fn safeguard_none_and_the_papers_sign_are_the_printed_algorithm() {
    // The recursion as printed is reachable: with the safeguard off and the paper's sign, no
    // iteration is undone and the corrected residual carries "+".
    let (run, _) = housing(
        &[
            ("method", "agbm"),
            ("gamma", "0.01"),
            ("safeguard", "none"),
            ("corrected_residual", "paper"),
        ],
        30,
    );
    assert!(run.history().records.iter().all(|r| !r.restarted));
    assert_eq!(run.params().method, Method::Agbm);
}

/// Trains on the first 400 rows of housing with the other rows as validation data.
fn housing_with_validation(
    settings: &[(&str, &str)],
    n_iter: usize,
) -> (optboost::Booster, StopReason) {
    let data = csv("boston_housing").shuffled(3);
    let order: Vec<usize> = (0..data.n_rows()).collect();
    let (train_rows, valid_rows) = (data.rows(&order[..400]), data.rows(&order[400..]));
    let mut p = params(&[("learning_rate", "0.3"), ("max_depth", "4")]);
    for (name, value) in settings {
        p.set(name, value).unwrap();
    }
    p.n_iter = n_iter;
    let valid = optboost::TrainData {
        frame: valid_rows.frame(),
        y: &valid_rows.y,
        weights: None,
    };
    let train_data = optboost::TrainData {
        frame: train_rows.frame(),
        y: &train_rows.y,
        weights: None,
    };
    let mut booster = optboost::Booster::new(p, &train_data, Some(&valid)).unwrap();
    let reason = booster.run(|_| true).unwrap();
    (booster, reason)
}

#[test]
fn the_default_safeguard_also_undoes_momentum_steps_that_raise_the_validation_loss() {
    for method in ["agbm", "vagbm", "accelerated_gbm", "accelerated_proximal"] {
        let (guarded, _) = housing_with_validation(&[("method", method)], 150);
        let records = &guarded.history().records;
        let mut undone = 0;
        for (i, r) in records.iter().enumerate().skip(1) {
            let before = &records[i - 1];
            undone += usize::from(r.restarted);
            // A rise is allowed only at a plain step: the first iterations, and the steps right
            // after a restart (one for AGBM and VAGBM; two for FISTA, whose momentum
            // coefficient is 0 for the first step after β ← 1).
            let plain = i < 2 || records[i - 2..i].iter().any(|q| q.restarted);
            if r.valid_loss.unwrap() > before.valid_loss.unwrap() {
                assert!(plain, "{method}: validation loss rose at {}", r.iteration);
            }
            if r.restarted {
                assert_eq!(r.valid_loss, before.valid_loss, "{method}");
                assert_eq!(r.n_trees, before.n_trees, "{method}");
            }
        }
        assert!(
            undone > 0,
            "{method}: nothing to guard against in this test"
        );
        // `train` watches the training loss only: the same settings then let the validation
        // loss rise at momentum steps.
        let (train_only, _) =
            housing_with_validation(&[("method", method), ("safeguard", "train")], 150);
        let records = &train_only.history().records;
        assert!(
            records.windows(2).any(|p| !p[0].restarted
                && p[1].iteration > 2
                && p[1].valid_loss.unwrap() > p[0].valid_loss.unwrap()),
            "{method}: safeguard=train never let the validation loss rise"
        );
    }
}

#[test]
fn undone_iterations_do_not_use_up_the_early_stopping_patience() {
    let patience = 10;
    let (booster, reason) =
        housing_with_validation(&[("method", "agbm"), ("early_stopping_rounds", "10")], 1000);
    let StopReason::EarlyStopping { best_iteration } = reason else {
        panic!("expected early stopping, got {reason:?}");
    };
    let after_best = &booster.history().records[best_iteration..];
    let counted = after_best.iter().filter(|r| !r.restarted).count();
    assert_eq!(counted, patience);
    assert!(
        after_best.len() > patience,
        "no undone iteration after the best one"
    );
}

#[test]
fn a_newton_step_is_refused_for_losses_without_a_second_derivative() {
    for loss in ["absolute", "pinball(0.9)", "hinge", "multiclass_hinge"] {
        for method in ["gbm", "rgbm"] {
            let mut p = params(&[("method", method), ("loss", loss), ("step", "newton")]);
            let error = p.validate().expect_err(loss).to_string();
            assert!(
                error.contains("step") && error.contains("second derivative"),
                "{method} {loss}: {error}"
            );
            p.set("step", "leaf_line_search").unwrap();
            assert!(p.validate().is_ok(), "{method} {loss}");
        }
    }
    // Huber's curvature is 0 only outside ±δ: its Newton step stays allowed.
    assert!(params(&[("loss", "huber"), ("step", "newton")])
        .validate()
        .is_ok());
}
