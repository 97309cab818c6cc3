//! The loss table's tests: every loss of the vocabulary against its row's traits.

use super::*;
use crate::rng::uniform;

/// Every loss of the vocabulary, at its default and at another parameter.
fn specs() -> Vec<LossSpec> {
    let mut specs: Vec<LossSpec> = LossSpec::vocabulary().collect();
    for text in [
        "pinball(0.8)",
        "huber(2)",
        "logistic(0.1)",
        "exponential(0.3)",
    ] {
        specs.push(text.parse().unwrap());
    }
    specs.push("tweedie(1.2)".parse().unwrap());
    specs.push("quantiles(0.1, 0.9)".parse().unwrap());
    specs.push("student_t(10)".parse().unwrap());
    specs.push("cox(ties=efron)".parse().unwrap());
    specs.push("aft(extreme, 0.7)".parse().unwrap());
    specs.push("aft(logistic)".parse().unwrap());
    specs
}

const K: usize = 3;

/// Rows of targets suited to `task` (T per row) and scores (K per row for a loss of K
/// outputs). Survival targets of three columns are signed stop, start and stratum.
fn rows(task: Task, n_outputs: usize, target_width: usize, n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut state = 11;
    let mut next = || uniform(&mut state);
    let y = (0..n * target_width)
        .map(|i| match task {
            Task::Regression | Task::MultiOutput | Task::Quantiles => 0.1 + 3.0 * next(),
            Task::Binary => [-1.0, 1.0][i % 2],
            Task::Multiclass => (i % K) as f64,
            Task::Survival => match i % target_width {
                0 => (1.0 + next()) * [-1.0, 1.0][i / target_width % 3 / 2],
                1 => 0.5 * next(),
                _ => (i / target_width % 2) as f64,
            },
            // relevance 0..3, then one of 5 query groups, interleaved
            Task::Ranking if i % 2 == 0 => (4.0 * next()).floor(),
            Task::Ranking => (i / 2 % 5) as f64,
            // Positive counts: in every distribution's support.
            Task::Distribution => (1.0 + 5.0 * next()).floor(),
        })
        .collect();
    let f = (0..n * n_outputs).map(|_| 4.0 * next() - 2.0).collect();
    (y, f)
}

#[test]
fn every_built_loss_agrees_with_its_row() {
    for spec in specs() {
        let traits = spec.traits();
        let loss = spec.build(K).unwrap();
        let what = spec.to_string();
        assert_eq!(loss.name(), spec.name(), "{what}");
        let (k, t) = (loss.n_outputs(), loss.target_width());
        let shape = match traits.task {
            Task::Regression => (1, 1, false),
            // K = 3 is also a cox target's three columns (stop, start, stratum).
            Task::Survival => (1, t, false),
            Task::Binary => (1, 1, true),
            Task::Multiclass => (K, 1, false),
            Task::MultiOutput => (K, K, false),
            Task::Quantiles => (spec.levels().unwrap().len(), 1, false),
            Task::Ranking => (1, 2, false),
            Task::Distribution => (2, 1, false),
        };
        assert_eq!((k, t, loss.is_binary()), shape, "{what}: task");
        assert_eq!(loss.separable(), traits.separable, "{what}: separable");

        let n = 40;
        let (y, f) = rows(traits.task, k, t, n);
        assert_eq!(loss.target_error(&y), None, "{what}: targets of its task");
        // The booster's pass over all rows (the one form a loss that is not separable has).
        let (mut gradient, mut hessian) = (vec![0.0; n * k], vec![0.0; n * k]);
        let ones = vec![1.0; n];
        loss.sum_values_and_derivatives(&y, &f, &ones, &mut gradient, &mut hessian);
        let curvature: f64 = hessian.iter().map(|h| h.abs()).sum();
        assert_eq!(
            curvature == 0.0,
            traits.piecewise_linear,
            "{what}: piecewise linear"
        );
        assert!(
            !traits.piecewise_linear || loss.curvature_can_vanish(),
            "{what}"
        );
        let from_data = loss.sigma().is_none() && loss.sigma_from(&y, &f).is_some();
        assert_eq!(from_data, traits.sigma_from_data, "{what}: sigma from data");
        assert!(
            traits.separable || !traits.distributable,
            "{what}: distributable"
        );

        // The link: the loss's own response, numerically; a margin keeps the class the
        // scores give.
        let link = spec.link();
        let mut own = vec![0.0; n * k];
        loss.response_into(&f, &mut own);
        let mut by_row = vec![0.0; n * k];
        for i in 0..n {
            let range = i * k..(i + 1) * k;
            if !link.response_into(&f[range.clone()], &mut by_row[range]) {
                assert_eq!(link, Link::Margin, "{what}");
            }
        }
        match link {
            Link::Margin => {
                assert_ne!(traits.task, Task::Regression, "{what}: a margin of classes");
                // A binary margin's class is its sign, the response's is above 1/2.
                let class = |v: &[f64], boundary: f64| -> usize {
                    match k {
                        1 => usize::from(v[0] > boundary),
                        _ => (0..k).max_by(|&a, &b| v[a].total_cmp(&v[b])).unwrap(),
                    }
                };
                for i in 0..n {
                    let row = i * k..(i + 1) * k;
                    let (score, response) = (&f[row.clone()], &own[row]);
                    assert_eq!(class(score, 0.0), class(response, 0.5), "{what}: row {i}");
                }
            }
            _ => {
                for (a, b) in own.iter().zip(&by_row) {
                    assert!(
                        (a - b).abs() <= 1e-14 * a.abs().max(1.0),
                        "{what}: {a} vs {b}"
                    );
                }
            }
        }

        let metrics = match traits.task {
            Task::Binary => MetricFamily::Binary,
            Task::Multiclass => MetricFamily::Multiclass,
            Task::Quantiles => MetricFamily::Quantiles,
            Task::Ranking => MetricFamily::Ranking,
            Task::Distribution => MetricFamily::Distribution,
            Task::Regression if link == Link::Exp => MetricFamily::LogLink,
            Task::Regression | Task::MultiOutput | Task::Survival => MetricFamily::Regression,
        };
        assert_eq!(traits.metrics, metrics, "{what}: metric family");
        let parametric = matches!(
            traits.default_metric,
            DefaultMetric::Pinball | DefaultMetric::TweedieDeviance
        );
        assert!(
            !parametric || spec.parameter().is_some(),
            "{what}: default metric"
        );
        if let Some(name) = traits.multi_output {
            let several: LossSpec = name.parse().unwrap();
            assert_eq!(
                several.traits().task,
                Task::MultiOutput,
                "{what}: multi_output"
            );
        }
    }
}

#[test]
fn names_parameters_and_aliases_are_distinct_and_round_trip() {
    let names: std::collections::BTreeSet<_> =
        LossSpec::vocabulary().map(|s| s.name()).collect();
    assert_eq!(names.len(), LossSpec::NAMES.len());
    let aliases: Vec<_> = LossSpec::vocabulary()
        .filter_map(|s| s.traits().r_gbm)
        .collect();
    let distinct: std::collections::BTreeSet<_> = aliases.iter().collect();
    assert_eq!(distinct.len(), aliases.len());
    for spec in specs() {
        assert_eq!(spec.to_string().parse::<LossSpec>().unwrap(), spec);
    }
    assert_eq!(
        "exponential(0.3)".parse::<LossSpec>().unwrap().link(),
        Link::Sigmoid { scale: 0.6 }
    );
    assert_eq!(LossSpec::Custom.link(), Link::Margin);
    assert_eq!(LossSpec::Custom.traits(), CUSTOM);
    let err = "tweedie(2.5)".parse::<LossSpec>().unwrap_err().to_string();
    assert!(err.contains("(1, 2)"), "{err}");
    let quantiles: LossSpec = "quantiles(levels=[0.05,0.5, 0.95])".parse().unwrap();
    assert_eq!(quantiles.to_string(), "quantiles(0.05, 0.5, 0.95)");
    assert_eq!("quantiles".parse::<LossSpec>().unwrap(), quantiles);
    for (text, says) in [
        ("quantiles(0.5, 0.1)", "0.5 then 0.1"),
        ("quantiles(0.5, 0.5)", "0.5 then 0.5"),
        ("quantiles(0, 0.5)", "(0, 1)"),
        ("quantiles(0.1, x)", "a number"),
        ("quantiles()", "1 to 99"),
    ] {
        let err = text.parse::<LossSpec>().unwrap_err().to_string();
        assert!(err.contains(says), "{text}: {err}");
    }
}
