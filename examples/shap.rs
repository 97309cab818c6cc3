//! Explaining predictions with SHAP values (exact, by TreeSHAP): `cargo run --example shap`.
//! (`cargo test` runs it too.)

use optboost::{Feature, Frame, Model, Params};

fn main() -> optboost::Result<()> {
    let n = 800;
    let x1: Vec<f64> = (0..n).map(|i| (i % 40) as f64 / 40.0).collect();
    let x2: Vec<f64> = (0..n).map(|i| (i * 7 % 23) as f64 / 23.0).collect();
    let y: Vec<f64> = (x1.iter().zip(&x2)).map(|(a, b)| 4.0 * a - b).collect();
    let frame = Frame::new(vec![
        Feature::numeric("x1", &x1),
        Feature::numeric("x2", &x2),
        Feature::numeric("y", &y),
    ])?;
    let model = Model::fit(&frame, "y", &Params::new().n_iter(50).max_depth(3))?;

    let rows = Frame::new(vec![
        Feature::numeric("x1", &[0.9, 0.1]),
        Feature::numeric("x2", &[0.5, 0.5]),
    ])?;
    // Per row: one value per feature, in the model's order, then the bias (the expected score).
    let contributions = model.predict_contrib(&rows)?;
    let scores = model.predict(&rows)?;
    let width = model.features.len() + 1;
    for (row, values) in contributions.chunks(width).enumerate() {
        let named: Vec<String> = (model.features.iter().zip(values))
            .map(|(f, v)| format!("{} {v:+.2}", f.name))
            .collect();
        println!(
            "row {row}: {}, bias {:.2}",
            named.join(", "),
            values[width - 1]
        );
        // The contributions add up to the prediction.
        assert!((values.iter().sum::<f64>() - scores[row]).abs() < 1e-9);
    }
    // x1 moves the prediction most, and in the direction of its effect.
    assert!(contributions[0] > 1.0 && contributions[width] < -1.0);
    Ok(())
}

#[test]
fn runs() {
    main().unwrap();
}
