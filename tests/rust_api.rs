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
