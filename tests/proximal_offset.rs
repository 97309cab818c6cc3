//! The least-squares trees of the proximal family leave the target's mean out of the L2
//! penalty (docs/algorithms.md §4.4): a proximal direction that is a common offset plus a weak
//! signal must still be split on, or boosting makes no progress.

mod common;

use common::*;
use optboost::Booster;

/// Gamma targets on two equal groups (x = 0, 1): y = 0.01 everywhere except three rows of
/// group 1 at 10⁴. At the constant optimum f0 = log ȳ the prox direction of λℓ is ≈ −1 on
/// the 997 small rows and ≈ +4 on the three others: an offset of −1 with a signal that the
/// split x < 0.5 gains ≈ 0.2 on, less than the ≈ λ·mean² = 1 that the L2 penalty charges a
/// split for shrinking the offset.
fn offset_with_weak_signal() -> Data {
    let n = 1000;
    let x: Vec<f64> = (0..n).map(|i| (i % 2) as f64).collect();
    let y = (0..n)
        .map(|i| if i % 2 == 1 && i < 6 { 1e4 } else { 0.01 })
        .collect();
    Data {
        columns: vec![x],
        y,
    }
}

fn fit(method: &str) -> Booster {
    let settings = [("method", method), ("loss", "gamma"), ("n_iter", "5")];
    train(params(&settings), &offset_with_weak_signal()).0
}

#[test]
fn proximal_trees_split_an_uncentred_direction_and_descend() {
    for method in ["proximal", "accelerated_proximal", "residual_proximal"] {
        let booster = fit(method);
        let first_tree = &booster.model().trees[0];
        assert_eq!(
            first_tree.nodes.len(),
            3,
            "{method}: the first tree splits once"
        );
        let losses = train_losses(&booster);
        let (first, last) = (losses[0], *losses.last().unwrap());
        eprintln!("{method}: {losses:?}");
        assert!(last < first - 1e-3, "{method}: loss {first} -> {last}");
    }
}

#[test]
fn centred_trees_are_the_same_bits_for_one_and_two_threads() {
    let data = offset_with_weak_signal();
    let fit = |threads: &str| {
        let settings = [
            ("method", "proximal"),
            ("loss", "gamma"),
            ("n_iter", "5"),
            ("subsample", "0.6"),
            ("n_threads", threads),
        ];
        train(params(&settings), &data).0
    };
    let (one, two) = (fit("1"), fit("2"));
    assert!(one.model().trees[0].nodes.len() > 1);
    let bits =
        |b: &Booster| -> Vec<u64> { b.train_predictions().iter().map(|v| v.to_bits()).collect() };
    assert_eq!(bits(&one), bits(&two));
}
