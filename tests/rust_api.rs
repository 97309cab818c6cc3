//! The Rust front end: typed parameters, string categoricals with level names stored in the
//! model, and the one-call fit.

use optboost::{Error, Growth, Keep, LossSpec, Method, Params, Preset, Safeguard, StepRule};

fn hint_of(error: Error) -> String {
    error.to_string()
}

#[test]
fn typed_setters_equal_the_string_form() {
    let typed = Params::new()
        .method(Method::Agbm)
        .loss(LossSpec::Huber { delta: 2.0 })
        .n_iter(17)
        .learning_rate(0.25)
        .step(StepRule::Constant)
        .max_depth(3)
        .min_samples_leaf(7)
        .growth(Growth::Leafwise)
        .max_leaves(9)
        .safeguard(Safeguard::Restart)
        .subsample(0.5)
        .seed(11)
        .keep(Keep::Last)
        .early_stopping_rounds(4);
    let mut by_name = Params::default();
    for (name, value) in [
        ("method", "agbm"),
        ("loss", "huber(2)"),
        ("n_iter", "17"),
        ("learning_rate", "0.25"),
        ("step", "constant"),
        ("max_depth", "3"),
        ("min_samples_leaf", "7"),
        ("growth", "leafwise"),
        ("max_leaves", "9"),
        ("safeguard", "restart"),
        ("subsample", "0.5"),
        ("seed", "11"),
        ("keep", "last"),
        ("early_stopping_rounds", "4"),
    ] {
        by_name.set(name, value).unwrap();
    }
    assert_eq!(typed, by_name);
    typed.validate().unwrap();
    // A typed value out of its domain is refused when the parameters are checked.
    let error = Params::new().learning_rate(-1.0).validate().unwrap_err();
    assert!(error.to_string().contains("learning_rate"), "{error}");
}

#[test]
fn a_typed_setting_overrides_the_preset_as_set_does() {
    let typed = Params::new()
        .method(Method::Agbm)
        .preset(Preset::Paper)
        .learning_rate(0.3);
    let resolved = typed.resolved().unwrap();
    assert_eq!(resolved.learning_rate, 0.3);
    let mut by_name = Params::default();
    by_name
        .set("method", "agbm")
        .unwrap()
        .set("preset", "paper")
        .unwrap();
    by_name.set("learning_rate", "0.3").unwrap();
    assert_eq!(resolved, by_name.resolved().unwrap());
    // Without the setting the preset's value holds.
    let preset_only = Params::new().method(Method::Agbm).preset(Preset::Paper);
    let mut by_name = Params::default();
    by_name
        .set("method", "agbm")
        .unwrap()
        .set("preset", "paper")
        .unwrap();
    assert_eq!(preset_only.resolved().unwrap(), by_name.resolved().unwrap());
}

#[test]
fn unknown_names_and_values_get_the_closest_as_python_picks_them() {
    // The same suggestions as Python's difflib.get_close_matches(name, Params.NAMES).
    for (name, expected) in [
        ("n_itr", r#"(did you mean "n_iter" or "init"?)"#),
        (
            "learnig_rate",
            r#"(did you mean "learning_rate" or "other_rate"?)"#,
        ),
        (
            "colsample",
            r#"(did you mean "colsample_bytree" or "colsample_bynode" or "subsample"?)"#,
        ),
        ("lamda", r#"(did you mean "lambda" or "gamma"?)"#),
        ("mtry", r#"(did you mean "memory"?)"#),
    ] {
        let message = hint_of(Params::new().set(name, "1").unwrap_err());
        assert!(message.contains(expected), "{name}: {message}");
    }
    let message = hint_of(Params::new().set("xyz", "1").unwrap_err());
    assert!(!message.contains("did you mean"), "{message}");
    assert!(message.contains("\"n_iter\""), "lists the names: {message}");
    // Choices of a parameter too.
    let message = hint_of(Params::new().set("method", "agmb").unwrap_err());
    assert!(message.contains(r#"did you mean "agbm""#), "{message}");
    let message = hint_of(Params::new().set("step", "newtn").unwrap_err());
    assert!(message.contains(r#"did you mean "newton""#), "{message}");
}

// ---------------------------------------------------------------- string categoricals

use optboost::{Booster, Categories, Feature, Frame, Model, TrainData};

const CITIES: [&str; 5] = ["oslo", "paris", "rome", "lima", "kyiv"];

/// 600 rows: a city (one in 20 missing) whose level moves the target, and a numeric x.
fn city_data() -> (Vec<Option<String>>, Vec<f64>, Vec<f64>) {
    let city: Vec<Option<String>> = (0..600)
        .map(|i| (i % 20 != 7).then(|| CITIES[(i * 7 + i / 3) % 5].to_string()))
        .collect();
    let x: Vec<f64> = (0..600).map(|i| ((i * 37) % 101) as f64 / 101.0).collect();
    let y = (city.iter().zip(&x))
        .map(|(c, x)| {
            let effect = match c.as_deref() {
                Some("oslo") => 2.0,
                Some("paris") => -1.0,
                Some("rome") => 0.5,
                Some("lima") => 3.0,
                Some(_) => -2.5,
                None => 0.0,
            };
            effect + x
        })
        .collect();
    (city, x, y)
}

fn train(frame: Frame<'_>, y: &[f64], valid: Option<TrainData<'_>>, params: Params) -> Model {
    let train = TrainData {
        frame,
        y,
        weights: None,
    };
    let mut booster = Booster::new(params, &train, valid.as_ref()).unwrap();
    booster.run(|_| true).unwrap();
    booster.into_model()
}

fn city_model(params: Params) -> (Model, Categories, Vec<f64>) {
    let (city, x, y) = city_data();
    let city = Categories::from_optional(&city).unwrap();
    let frame = Frame::new(vec![
        Feature::categorical_strings("city", &city),
        Feature::numeric("x", &x),
    ])
    .unwrap();
    let model = train(frame, &y, None, params);
    (model, city, x)
}

fn levels(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_recoded_column_at_predict_gives_the_same_predictions() {
    for params in [
        Params::new().n_iter(15),
        // the levels read through their target statistics
        Params::new()
            .n_iter(15)
            .cat_encoding(optboost::CatEncodings::parse("target_stats").unwrap()),
    ] {
        let (model, city, x) = city_model(params);
        assert!(model
            .features
            .iter()
            .any(|f| f.levels.as_deref() == Some(city.levels())));
        assert_eq!(Model::from_json(&model.to_json()).unwrap(), model);
        let frame = Frame::new(vec![
            Feature::categorical_strings("city", &city),
            Feature::numeric("x", &x),
        ])
        .unwrap();
        let expected = model.predict(&frame).unwrap();
        // Another order of the levels, an extra level nobody has, and the columns swapped.
        let (values, _, _) = city_data();
        let other = levels(&["rome", "zagreb", "kyiv", "paris", "lima", "oslo"]);
        let recoded = Categories::with_levels(&values, &other).unwrap();
        assert_ne!(recoded.codes(), city.codes());
        let frame = Frame::new(vec![
            Feature::numeric("x", &x),
            Feature::categorical_strings("city", &recoded),
        ])
        .unwrap();
        let got = model.predict(&frame).unwrap();
        assert_eq!(
            got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            expected.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        assert_eq!(
            model.predict_contrib(&frame).unwrap(),
            model
                .predict_contrib(
                    &Frame::new(vec![
                        Feature::categorical_strings("city", &city),
                        Feature::numeric("x", &x)
                    ])
                    .unwrap()
                )
                .unwrap()
        );
    }
}

#[test]
fn an_unseen_level_is_missing_as_in_python() {
    let (model, _, _) = city_model(Params::new().n_iter(15));
    let x = [0.3, 0.3, 0.3];
    let unseen = Categories::from_optional(&[Some("zagreb"), None, Some("oslo")]).unwrap();
    let frame = Frame::new(vec![
        Feature::categorical_strings("city", &unseen),
        Feature::numeric("x", &x),
    ])
    .unwrap();
    let p = model.predict(&frame).unwrap();
    assert_eq!(p[0].to_bits(), p[1].to_bits(), "unseen = missing");
    assert_ne!(p[0], p[2]);
}

#[test]
fn level_names_are_saved_in_version_4_and_validated_on_load() {
    let (model, city, x) = city_model(Params::new().n_iter(5));
    let json = model.to_json();
    assert!(
        json.contains("\"version\":4") && json.contains("\"levels\":["),
        "{}",
        &json[..80]
    );
    let loaded = Model::from_json(&json).unwrap();
    assert_eq!(loaded, model);
    let frame = Frame::new(vec![
        Feature::categorical_strings("city", &city),
        Feature::numeric("x", &x),
    ])
    .unwrap();
    assert_eq!(
        loaded.predict(&frame).unwrap(),
        model.predict(&frame).unwrap()
    );

    // A model without names is still written as version 3, as before.
    let codes = city.codes().to_vec();
    let (_, _, y) = city_data();
    let plain = train(
        Frame::new(vec![
            Feature::categorical("city", &codes, 5),
            Feature::numeric("x", &x),
        ])
        .unwrap(),
        &y,
        None,
        Params::new().n_iter(3),
    );
    assert!(plain.to_json().contains("\"version\":3"));
    assert!(!plain.to_json().contains("\"levels\""));
    // Given names, a model trained on codes alone refuses them.
    let error = plain.predict(&frame).unwrap_err().to_string();
    assert!(error.contains("city") && error.contains("codes"), "{error}");

    let broken = |from: &str, to: &str| {
        assert!(json.contains(from), "{from}");
        Model::from_json(&json.replacen(from, to, 1))
            .unwrap_err()
            .to_string()
    };
    let names = r#""levels":["kyiv","lima","oslo","paris","rome"]"#;
    let error = broken(names, r#""levels":["kyiv","lima","oslo","paris"]"#);
    assert!(error.contains("4 level names for 5 levels"), "{error}");
    let error = broken(names, r#""levels":["kyiv","lima","oslo","paris","kyiv"]"#);
    assert!(error.contains("named twice"), "{error}");
    let long = format!(
        r#""levels":["kyiv","lima","oslo","paris","{}"]"#,
        "r".repeat(5000)
    );
    let error = broken(names, &long);
    assert!(error.contains("5000 bytes"), "{error}");
    let error = broken("\"version\":4", "\"version\":3");
    assert!(
        error.contains("version 3") && error.contains("version 4"),
        "{error}"
    );
    let error = broken("\"name\":\"x\"", r#""name":"x","levels":["a"]"#);
    assert!(error.contains("numeric"), "{error}");
}

#[test]
fn a_validation_column_coded_otherwise_is_matched_by_name() {
    let (city, x, y) = city_data();
    let train_city = Categories::from_optional(&city).unwrap();
    let fit = |valid_city: &Categories| {
        let frame = Frame::new(vec![
            Feature::categorical_strings("city", &train_city),
            Feature::numeric("x", &x),
        ])
        .unwrap();
        let valid = TrainData {
            frame: Frame::new(vec![
                Feature::categorical_strings("city", valid_city),
                Feature::numeric("x", &x),
            ])
            .unwrap(),
            y: &y,
            weights: None,
        };
        train(
            frame,
            &y,
            Some(valid),
            Params::new().n_iter(30).early_stopping_rounds(2),
        )
    };
    let same = fit(&train_city);
    let other = Categories::with_levels(&city, &levels(&["rome", "kyiv", "oslo", "paris", "lima"]))
        .unwrap();
    assert_eq!(fit(&other), same);
}

#[test]
fn frames_check_level_names() {
    let codes = [0, 1];
    let two = levels(&["a", "b"]);
    let twice = levels(&["a", "a"]);
    assert!(Frame::new(vec![Feature::categorical_with_levels("c", &codes, &two)]).is_ok());
    let error = Frame::new(vec![Feature::categorical_with_levels("c", &codes, &twice)])
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("\"a\" is named twice") && error.contains('c'),
        "{error}"
    );
    let mut wrong = Feature::categorical("c", &codes, 3);
    wrong.levels = Some(&two);
    let error = Frame::new(vec![wrong]).unwrap_err().to_string();
    assert!(
        error.contains("2 level names for a column of 3 levels"),
        "{error}"
    );
}

// ---------------------------------------------------------------- one call

#[test]
fn model_fit_is_the_booster_run_to_its_end() {
    let (city, x, y) = city_data();
    let city = Categories::from_optional(&city).unwrap();
    let params = Params::new().method(Method::Agbm).n_iter(12);
    let with_target = Frame::new(vec![
        Feature::numeric("y", &y),
        Feature::categorical_strings("city", &city),
        Feature::numeric("x", &x),
    ])
    .unwrap();
    let one_call = Model::fit(&with_target, "y", &params).unwrap();
    let features = Frame::new(vec![
        Feature::categorical_strings("city", &city),
        Feature::numeric("x", &x),
    ])
    .unwrap();
    assert_eq!(one_call, train(features, &y, None, params.clone()));
    assert!(one_call.features.iter().all(|f| f.name != "y"));

    let error = Model::fit(&with_target, "yy", &params).unwrap_err().to_string();
    assert!(error.contains("`yy`") && error.contains(r#"did you mean "y"?"#), "{error}");
    let only_target = Frame::new(vec![Feature::numeric("y", &y)]).unwrap();
    let error = Model::fit(&only_target, "y", &params).unwrap_err().to_string();
    assert!(error.contains("no feature columns besides the target `y`"), "{error}");
    // A missing class label is refused, naming the problem, not fitted as a number.
    let labels = Categories::from_optional(&[Some("a"), None, Some("b"), Some("a")]).unwrap();
    let x4 = [0.0, 1.0, 2.0, 3.0];
    let frame = Frame::new(vec![
        Feature::numeric("x", &x4),
        Feature::categorical_strings("label", &labels),
    ])
    .unwrap();
    let logistic = Params::new().loss(LossSpec::Logistic { ridge: 0.0 }).n_iter(2);
    assert!(Model::fit(&frame, "label", &logistic).is_err());
}

#[test]
fn a_data_parallel_fit_refuses_columns_named_per_rank() {
    let (city, x, y) = city_data();
    let city = Categories::from_optional(&city).unwrap();
    let train = TrainData {
        frame: Frame::new(vec![
            Feature::categorical_strings("city", &city),
            Feature::numeric("x", &x),
        ])
        .unwrap(),
        y: &y,
        weights: None,
    };
    let local = std::sync::Arc::new(optboost::collective::Local);
    let refused = Booster::distributed(Params::new(), &train, None, Default::default(), local);
    let error = refused.err().expect("refused").to_string();
    assert!(error.contains("city") && error.contains("every rank"), "{error}");
}
