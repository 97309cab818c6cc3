//! Fit, predict, save and load with the Rust API: `cargo run --example quickstart`.
//! (`cargo test` runs it too.)

use optboost::{Categories, Feature, Frame, LossSpec, Method, Model, Params};

fn main() -> optboost::Result<()> {
    // A data set: a numeric column, a column of strings, and the target.
    let n = 1000;
    let age: Vec<f64> = (0..n).map(|i| 20.0 + (i * 7 % 50) as f64).collect();
    let cities = ["lima", "oslo", "rome"];
    let city: Vec<&str> = (0..n).map(|i| cities[i * 13 % 3]).collect();
    let city = Categories::from_strings(&city)?;
    let spend: Vec<f64> = (age.iter().zip(city.codes()))
        .map(|(a, &c)| 0.1 * a + [0.0, 3.0, -1.0][c as usize])
        .collect();
    let frame = Frame::new(vec![
        Feature::numeric("age", &age),
        Feature::categorical_strings("city", &city),
        Feature::numeric("spend", &spend),
    ])?;

    // Typed parameters (`Params::set("n_iter", "200")` takes the same names as strings).
    let params = Params::new()
        .method(Method::Agbm)
        .loss(LossSpec::Squared)
        .n_iter(200)
        .learning_rate(0.1)
        .max_depth(3);
    let model = Model::fit(&frame, "spend", &params)?;

    // Predict on new rows, whose city column is coded in its own way: it is matched by name.
    let new_age = [30.0, 30.0, 30.0];
    let new_city = Categories::from_strings(&["rome", "oslo", "paris"])?; // paris: unseen, missing
    let new_rows = Frame::new(vec![
        Feature::categorical_strings("city", &new_city),
        Feature::numeric("age", &new_age),
    ])?;
    let predicted = model.predict(&new_rows)?;
    println!("spend at age 30 in rome, oslo, paris: {predicted:.2?}");
    assert!((predicted[0] - 2.0).abs() < 0.3 && (predicted[1] - 6.0).abs() < 0.3);

    // Save and load: the same model, the same predictions.
    let path =
        std::env::temp_dir().join(format!("optboost-quickstart-{}.json", std::process::id()));
    model.save(&path)?;
    let loaded = Model::load(&path)?;
    std::fs::remove_file(&path).ok();
    assert_eq!(loaded.predict(&new_rows)?, predicted);
    println!("saved and loaded {} trees", loaded.n_trees());
    Ok(())
}

#[test]
fn runs() {
    main().unwrap();
}
