//! `Model::predict` finds its columns by name, as the Python front end does: a frame with the
//! columns in another order, or with extra columns, predicts the same; a missing one is named.

use optboost::{Booster, Feature, Frame, Params, TrainData};

fn columns() -> (Vec<f64>, Vec<f64>, Vec<i32>, Vec<f64>) {
    let n = 400;
    let a: Vec<f64> = (0..n).map(|i| ((i * 37) % 101) as f64).collect();
    let b: Vec<f64> = (0..n).map(|i| ((i * 53) % 89) as f64).collect();
    let g: Vec<i32> = (0..n).map(|i| (i % 3) as i32).collect();
    let y: Vec<f64> = (0..n).map(|i| a[i] - 2.0 * b[i] + g[i] as f64).collect();
    (a, b, g, y)
}

#[test]
fn columns_are_matched_by_name_not_position() {
    let (a, b, g, y) = columns();
    let frame = Frame::new(vec![
        Feature::numeric("a", &a),
        Feature::numeric("b", &b),
        Feature::categorical("g", &g, 3),
    ])
    .unwrap();
    let mut params = Params::default();
    params.set("n_iter", "20").unwrap();
    let train = TrainData {
        frame: frame.clone(),
        y: &y,
        weights: None,
    };
    let mut booster = Booster::new(params, &train, None).unwrap();
    booster.run(|_| true).unwrap();
    let model = booster.into_model();
    let expected = model.predict(&frame).unwrap();

    let extra: Vec<f64> = vec![1.0; a.len()];
    let reordered = Frame::new(vec![
        Feature::numeric("extra", &extra),
        Feature::categorical("g", &g, 3),
        Feature::numeric("b", &b),
        Feature::numeric("a", &a),
    ])
    .unwrap();
    assert_eq!(model.predict(&reordered).unwrap(), expected);

    // The same two numeric columns under each other's names are different data.
    let swapped = Frame::new(vec![
        Feature::numeric("a", &b),
        Feature::numeric("b", &a),
        Feature::categorical("g", &g, 3),
    ])
    .unwrap();
    assert_ne!(model.predict(&swapped).unwrap(), expected);

    let missing = Frame::new(vec![
        Feature::numeric("a", &a),
        Feature::categorical("g", &g, 3),
    ])
    .unwrap();
    let error = model.predict(&missing).unwrap_err().to_string();
    assert!(error.contains("`b`"), "{error}");
}
