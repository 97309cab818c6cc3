//! Seeded mutations of model files, shared by `tests/model_fuzz.rs` (a few thousand cases in
//! every `cargo test`) and `examples/fuzz_models.rs` (long runs). A model file is untrusted: each
//! mutated file must either be rejected by `Model::from_json` or load and predict finite values,
//! without panicking and in reasonable time.
#![allow(dead_code)]

// The shared test helpers, through this module (the fuzzer is also built as an example, and a
// test that includes both modules would load common twice).
#[path = "../common/mod.rs"]
pub mod common;

use common::TestRng;
use optboost::{Booster, Feature, Frame, Model, Params, TrainData};
use serde_json::{json, Value};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// A case taking longer than this (load and predict of a small frame) counts as a hang.
pub const SLOW: Duration = Duration::from_secs(10);

/// An item of `items`, uniformly.
fn pick<'a, T>(rng: &mut TestRng, items: &'a [T]) -> &'a T {
    &items[rng.below(items.len())]
}

// ------------------------------------------------------------------ the models mutated

/// Training data with two numeric columns (x0 with missing values), a categorical one (with
/// missing codes), and targets for regression, binary (±1) and 3-class problems.
struct TrainingSet {
    x0: Vec<f64>,
    x1: Vec<f64>,
    codes: Vec<i32>,
    regression: Vec<f64>,
    binary: Vec<f64>,
    classes: Vec<f64>,
    counts: Vec<f64>,
}

const N_LEVELS: u32 = 6;

fn training_set(n: usize) -> TrainingSet {
    let mut rng = TestRng::new(7);
    let mut set = TrainingSet {
        x0: Vec::new(),
        x1: Vec::new(),
        codes: Vec::new(),
        regression: Vec::new(),
        binary: Vec::new(),
        classes: Vec::new(),
        counts: Vec::new(),
    };
    for _ in 0..n {
        let x0 = if rng.chance(0.1) {
            f64::NAN
        } else {
            4.0 * rng.uniform() - 2.0
        };
        let x1 = rng.uniform();
        let code = if rng.chance(0.05) {
            -1
        } else {
            rng.below(N_LEVELS as usize) as i32
        };
        let signal = if x0.is_nan() { 0.5 } else { x0 } + 2.0 * x1 + (code % 3) as f64 - 1.0;
        let noisy = signal + 0.3 * (rng.uniform() - 0.5);
        set.x0.push(x0);
        set.x1.push(x1);
        set.codes.push(code);
        set.regression.push(noisy);
        set.binary.push(if noisy > 0.5 { 1.0 } else { -1.0 });
        set.counts.push((0.5 * noisy).exp().floor());
        set.classes.push(if noisy < 0.0 {
            0.0
        } else if noisy < 1.5 {
            1.0
        } else {
            2.0
        });
    }
    set
}

fn train(set: &TrainingSet, y: &[f64], params: &[(&str, &str)]) -> Model {
    train_named(set, y, params, None)
}

/// `train`, with the categorical column's levels named `levels` when given.
fn train_named(
    set: &TrainingSet,
    y: &[f64],
    params: &[(&str, &str)],
    levels: Option<&[String]>,
) -> Model {
    let c = match levels {
        Some(levels) => Feature::categorical_with_levels("c", &set.codes, levels),
        None => Feature::categorical("c", &set.codes, N_LEVELS),
    };
    let frame = Frame::new(vec![
        Feature::numeric("x0", &set.x0),
        Feature::numeric("x1", &set.x1),
        c,
    ])
    .unwrap();
    let mut p = Params::default();
    p.set("n_threads", "1")
        .unwrap()
        .set("min_category_count", "1")
        .unwrap();
    for (name, value) in params {
        p.set(name, value).unwrap();
    }
    let mut booster = Booster::new(
        p,
        &TrainData {
            frame,
            y,
            weights: None,
        },
        None,
    )
    .unwrap();
    booster.run(|_| true).unwrap();
    booster.into_model()
}

/// `(name, model file)` of the models the mutations start from: squared, logistic, softmax
/// (3 classes), Huber (leaf-wise, deeper), pinball and Poisson (a log link); gbm, agbm and
/// proximal (agbm's files hold iteration weights); every one has a categorical feature and
/// missing values.
pub fn base_models() -> Vec<(&'static str, String)> {
    let set = training_set(300);
    let models = [
        (
            "squared/gbm",
            train(
                &set,
                &set.regression,
                &[("loss", "squared"), ("n_iter", "6")],
            ),
        ),
        (
            "logistic/agbm",
            train(
                &set,
                &set.binary,
                &[("loss", "logistic"), ("method", "agbm"), ("n_iter", "6")],
            ),
        ),
        (
            "softmax/gbm",
            train(
                &set,
                &set.classes,
                &[("loss", "softmax"), ("n_iter", "3"), ("max_depth", "2")],
            ),
        ),
        (
            "huber/gbm leafwise",
            train(
                &set,
                &set.regression,
                &[
                    ("loss", "huber(0.5)"),
                    ("growth", "leafwise"),
                    ("max_depth", "6"),
                    ("max_leaves", "12"),
                    ("n_iter", "3"),
                ],
            ),
        ),
        (
            "logistic/gbm oblivious",
            train(
                &set,
                &set.binary,
                &[
                    ("loss", "logistic"),
                    ("tree", "oblivious"),
                    ("max_depth", "4"),
                    ("n_iter", "4"),
                ],
            ),
        ),
        (
            "pinball/proximal",
            train(
                &set,
                &set.regression,
                &[
                    ("loss", "pinball(0.3)"),
                    ("method", "proximal"),
                    ("n_iter", "4"),
                ],
            ),
        ),
        (
            "poisson/agbm",
            train(
                &set,
                &set.counts,
                &[("loss", "poisson"), ("method", "agbm"), ("n_iter", "4")],
            ),
        ),
        (
            "quantiles/gbm",
            train(
                &set,
                &set.regression,
                &[("loss", "quantiles(0.1, 0.5, 0.9)"), ("n_iter", "3")],
            ),
        ),
    ];
    let mut bases: Vec<(&'static str, String)> = models
        .into_iter()
        .map(|(name, model)| (name, model.to_json()))
        .collect();
    // Level names (format version 4), matched by name at predict.
    let levels: Vec<String> = (0..N_LEVELS).map(|l| format!("level {l}")).collect();
    let named = train_named(&set, &set.regression, &[("n_iter", "4")], Some(&levels));
    bases.push(("squared/gbm, level names", named.to_json()));
    // Version 1 files (a list of node objects per tree) and version 2 files (every tree's
    // thresholds written) are still read.
    let parsed = serde_json::from_str(&bases[0].1).unwrap();
    bases.push((
        "squared/gbm, format version 1",
        to_version_1(&parsed).to_string(),
    ));
    bases.push((
        "squared/gbm, format version 2",
        to_version_2(&parsed).to_string(),
    ));
    bases
}

/// A model file (parsed) rewritten as version 2 wrote it: version 3's layout with the
/// thresholds of every tree written out, as its bins and its features' cuts imply them (the
/// split on bin b of a numeric feature: the feature's cut b − 1, or +∞ past the last cut; on a
/// categorical feature: 0).
pub fn to_version_2(file: &Value) -> Value {
    let mut file = file.clone();
    file["version"] = json!(2);
    let cuts: Vec<Value> = file["model"]["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["mapper"]["Numeric"]["cuts"].clone())
        .collect();
    for tree in file["model"]["trees"].as_array_mut().unwrap() {
        if tree.get("threshold").is_some() {
            continue;
        }
        let n_splits = tree["bin"].as_array().unwrap().len();
        let thresholds: Vec<Value> = (0..n_splits)
            .map(|k| {
                let categorical = tree.get("category").is_some_and(|c| !c[k].is_null());
                let feature = tree["feature"][k].as_u64().unwrap() as usize;
                let bin = tree["bin"][k].as_u64().unwrap() as usize;
                match cuts[feature].as_array() {
                    _ if categorical => json!(0.0),
                    Some(cuts) if bin <= cuts.len() => cuts[bin - 1].clone(),
                    _ => json!("inf"),
                }
            })
            .collect();
        tree["threshold"] = Value::Array(thresholds);
    }
    file
}

/// A model file (parsed) rewritten as version 1 wrote it: each tree a list of node objects with
/// every field, leaves included.
pub fn to_version_1(file: &Value) -> Value {
    let mut file = to_version_2(file);
    file["version"] = json!(1);
    for tree in file["model"]["trees"].as_array_mut().unwrap() {
        let nodes = nodes_of(tree);
        *tree = json!({"nodes": nodes, "categories": tree["categories"].clone()});
    }
    file
}

/// The node objects of a tree in the compact layout of version 2 (thresholds written).
pub fn nodes_of(tree: &Value) -> Vec<Value> {
    let left = tree["left"].as_array().unwrap();
    let mut k = 0;
    let mut nodes = Vec::new();
    for (i, l) in left.iter().enumerate() {
        let (value, count) = (tree["value"][i].clone(), tree["count"][i].clone());
        if l == &json!(0) {
            nodes.push(
                json!({"feature": 0, "left": 0, "right": 0, "threshold": 0.0, "bin": 0,
                              "default_left": false, "category": null, "value": value,
                              "gain": 0.0, "count": count}),
            );
            continue;
        }
        let category = tree.get("category").map_or(Value::Null, |c| c[k].clone());
        nodes.push(
            json!({"feature": tree["feature"][k], "left": l, "right": tree["right"][k],
                          "threshold": tree["threshold"][k], "bin": tree["bin"][k],
                          "default_left": tree["default_left"][k], "category": category,
                          "value": value, "gain": tree["gain"][k], "count": count}),
        );
        k += 1;
    }
    nodes
}

/// A tree in the compact layout of version 2 from node objects of version 1's fields.
pub fn compact(nodes: &[Value]) -> Value {
    let splits: Vec<&Value> = nodes.iter().filter(|n| n["left"] != json!(0)).collect();
    let field = |nodes: &[&Value], name: &str| -> Value {
        Value::Array(nodes.iter().map(|n| n[name].clone()).collect())
    };
    let all: Vec<&Value> = nodes.iter().collect();
    let mut tree = json!({
        "left": field(&all, "left"), "value": field(&all, "value"),
        "count": field(&all, "count"), "right": field(&splits, "right"),
        "feature": field(&splits, "feature"), "threshold": field(&splits, "threshold"),
        "bin": field(&splits, "bin"), "default_left": field(&splits, "default_left"),
        "gain": field(&splits, "gain"), "categories": []
    });
    if splits.iter().any(|n| !n["category"].is_null()) {
        tree["category"] = field(&splits, "category");
    }
    tree
}

// ------------------------------------------------------------------ checking one file

#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// `Model::from_json` returned an error.
    Rejected,
    /// Loaded, and both predictions were finite.
    Finite,
    /// Loaded, but no probe frame fits it (e.g. no features at all).
    NoFrame,
    /// Loaded, but prediction returned an error.
    PredictError(String),
    Panic(String),
    NonFinite(String),
    Slow(Duration),
}

impl Outcome {
    /// Whether the outcome breaks the rule "rejected, or loads and predicts finite values" (a
    /// model that loads must predict on a frame made for it).
    pub fn is_failure(&self) -> bool {
        !matches!(self, Outcome::Rejected | Outcome::Finite)
    }
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Rejected => "rejected",
            Outcome::Finite => "loaded+finite",
            Outcome::NoFrame => "loaded, no frame fits",
            Outcome::PredictError(_) => "loaded, predict error",
            Outcome::Panic(_) => "panic",
            Outcome::NonFinite(_) => "non-finite",
            Outcome::Slow(_) => "slow>10s",
        }
    }
}

/// Loads `text` and, if it loads, predicts (scores and responses) on a small frame built for the
/// model's features: finite values, missing values, ±1e300 and ±∞ in numeric columns, every level
/// and the missing code in categorical ones. Panics are caught and reported.
pub fn check(text: &str) -> Outcome {
    let started = Instant::now();
    let outcome = catch_unwind(AssertUnwindSafe(|| load_and_predict(text)))
        .unwrap_or_else(|payload| Outcome::Panic(panic_message(payload.as_ref())));
    let elapsed = started.elapsed();
    if elapsed > SLOW && !outcome.is_failure() {
        return Outcome::Slow(elapsed);
    }
    outcome
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

const PROBE_ROWS: usize = 40;

enum ProbeColumn {
    Numeric(Vec<f64>),
    Categorical(Vec<i32>, u32),
}

fn load_and_predict(text: &str) -> Outcome {
    let Ok(model) = Model::from_json(text) else {
        return Outcome::Rejected;
    };
    let numeric_values = [
        -2.0,
        -0.5,
        0.0,
        0.3,
        0.75,
        1.7,
        f64::NAN,
        1e300,
        -1e300,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    let columns: Vec<ProbeColumn> = model
        .features
        .iter()
        .map(|f| match f.kind() {
            optboost::FeatureKind::Numeric => ProbeColumn::Numeric(
                (0..PROBE_ROWS)
                    .map(|i| numeric_values[i % numeric_values.len()])
                    .collect(),
            ),
            optboost::FeatureKind::Categorical { n_levels } => {
                let codes = (0..PROBE_ROWS)
                    .map(|i| (i as i64 % (n_levels as i64 + 1)) as i32 - 1)
                    .collect();
                ProbeColumn::Categorical(codes, n_levels)
            }
        })
        .collect();
    // A column of a model with level names comes with them reversed: recoded by name.
    let reversed: Vec<Option<Vec<String>>> = (model.features.iter())
        .map(|f| Some(f.levels.as_ref()?.iter().rev().cloned().collect()))
        .collect();
    let features = (model.features.iter().zip(&columns).zip(&reversed))
        .map(|((f, column), reversed)| match (column, reversed) {
            (ProbeColumn::Numeric(x), _) => Feature::numeric(f.name.clone(), x),
            (ProbeColumn::Categorical(codes, n_levels), Some(levels))
                if levels.len() == *n_levels as usize =>
            {
                Feature::categorical_with_levels(f.name.clone(), codes, levels)
            }
            (ProbeColumn::Categorical(codes, n_levels), _) => {
                Feature::categorical(f.name.clone(), codes, *n_levels)
            }
        })
        .collect();
    let Ok(frame) = Frame::new(features) else {
        return Outcome::NoFrame;
    };
    for response in [false, true] {
        let predicted = if response {
            model.predict_response(&frame)
        } else {
            model.predict(&frame)
        };
        match predicted {
            Err(e) => return Outcome::PredictError(e.to_string()),
            Ok(values) => {
                if let Some(v) = values.iter().find(|v| !v.is_finite()) {
                    let kind = if response { "response" } else { "score" };
                    return Outcome::NonFinite(format!("{kind} {v}"));
                }
            }
        }
    }
    // Trees whose splits share one rule per level predict by their leaf table: the walk's scores.
    let bits = |scores: &[f64]| scores.iter().map(|s| s.to_bits()).collect::<Vec<_>>();
    match (model.predict(&frame), model.predict_walking(&frame)) {
        (Ok(by_table), Ok(walked)) if bits(&by_table) == bits(&walked) => {}
        _ => return Outcome::PredictError("the leaf tables and the walk differ".into()),
    }
    // The models of earlier iterations (the iteration path and its weights), on both scales.
    let n = model.n_iterations();
    let mut iterations = vec![0, 1.min(n), n / 2, n];
    iterations.dedup();
    let staged = model.predict_staged(&frame, &iterations);
    for (k, scores) in iterations.iter().zip(staged.into_iter().flatten()) {
        match model.response(scores.clone()) {
            Err(e) => return Outcome::PredictError(format!("iteration {k}: {e}")),
            Ok(responses) => {
                let all = scores.iter().chain(&responses);
                if let Some(v) = all.into_iter().find(|v| !v.is_finite()) {
                    return Outcome::NonFinite(format!("iteration {k}: {v}"));
                }
            }
        }
    }
    for &k in &iterations {
        if let Err(e) = model.predict_iteration(&frame, k) {
            return Outcome::PredictError(format!("iteration {k}: {e}"));
        }
    }
    Outcome::Finite
}

// ------------------------------------------------------------------ mutations

/// Placeholders set into a `Value` and replaced in its text: numbers a `Value` cannot hold, and
/// nesting deeper than `json!` builds comfortably.
const HUGE_INTEGER: &str = "__HUGE_INTEGER__";
const OVERFLOWING_FLOAT: &str = "__OVERFLOWING_FLOAT__";
const DEEP_NESTING: &str = "__DEEP_NESTING__";
const SHALLOW_NESTING: &str = "__SHALLOW_NESTING__";

fn extreme_number(rng: &mut TestRng) -> Value {
    let extremes = [
        json!(0),
        json!(-1),
        json!(1),
        json!(2),
        json!(1e308),
        json!(-1e308),
        json!(f64::MAX),
        json!(1e-310),
        json!(-0.0),
        json!(0.5),
        json!(7),
        json!(63),
        json!(64),
        json!(65),
        json!(255),
        json!(256),
        json!(1u64 << 32),
        json!(u32::MAX),
        json!(1u64 << 53),
        json!(u64::MAX),
        json!(i64::MIN),
        json!("inf"),
        json!("-inf"),
        json!("nan"),
        json!(HUGE_INTEGER),
        json!(OVERFLOWING_FLOAT),
    ];
    pick(rng, &extremes).clone()
}

fn any_value(rng: &mut TestRng) -> Value {
    match rng.below(9) {
        0 => Value::Null,
        1 => json!(true),
        2 => json!("text"),
        3 => json!([]),
        4 => json!({}),
        5 => json!(DEEP_NESTING),
        6 => json!(SHALLOW_NESTING),
        7 => json!([1, 2, 3]),
        _ => extreme_number(rng),
    }
}

/// A node reached by a random descent from `root`: at each level stop with probability
/// `p_stop` (always at a scalar or an empty container), else go to a random key or element.
/// Top-level fields are hit often, and so are the fields of single tree nodes.
fn random_node<'a>(root: &'a mut Value, rng: &mut TestRng, p_stop: f64) -> &'a mut Value {
    let mut node = root;
    loop {
        let size = match &*node {
            Value::Array(a) => a.len(),
            Value::Object(o) => o.len(),
            _ => 0,
        };
        if size == 0 || rng.chance(p_stop) {
            return node;
        }
        let i = rng.below(size);
        node = match node {
            Value::Array(a) => &mut a[i],
            Value::Object(o) => o.values_mut().nth(i).expect("i < len"),
            _ => unreachable!(),
        };
    }
}

/// An extreme, or a plausible other value (a small index, a rescaled value): those often still
/// load and exercise prediction.
fn mutate_number(number: &serde_json::Number, rng: &mut TestRng) -> Value {
    match (number.as_u64(), rng.below(8)) {
        (Some(k), 0) => json!(k.wrapping_add(1)),
        (Some(k), 1) => json!(k.wrapping_sub(1)),
        (Some(k), 2) => json!(k.wrapping_mul(2)),
        (_, 3) => json!(rng.below(12)),
        (_, 4) => json!(number.as_f64().unwrap_or(1.0) * (8.0 * rng.uniform() - 4.0)),
        _ => extreme_number(rng),
    }
}

/// Another number for a number, any value for anything else.
fn replacement(node: &Value, rng: &mut TestRng) -> Value {
    match node {
        Value::Number(n) => mutate_number(n, rng),
        _ => any_value(rng),
    }
}

fn mutate_array(a: &mut Vec<Value>, rng: &mut TestRng) {
    if a.is_empty() {
        a.push(any_value(rng));
        return;
    }
    let (i, j) = (rng.below(a.len()), rng.below(a.len()));
    match rng.below(8) {
        0 => a.swap(i, j),
        1 => {
            let copy = a[i].clone();
            a.insert(j, copy);
        }
        2 => {
            a.remove(i);
        }
        3 => a.truncate(i),
        4 => a.clear(),
        5 => a.reverse(),
        // One value everywhere: every weight 1e308 overflows a sum that each one alone does not.
        6 => {
            let value = match &a[i] {
                Value::Number(n) => mutate_number(n, rng),
                other => other.clone(),
            };
            a.iter_mut().for_each(|x| *x = value.clone());
        }
        _ => {
            let copy = a.clone();
            a.extend(copy);
        }
    }
}

/// Mutations that keep most files readable, so that many reach validation and prediction:
/// a number replaced (mostly by another number), a child pointer moved, an array reordered or
/// resized; and now and then a value of another type or a key removed or added.
fn mutate_value(root: &mut Value, rng: &mut TestRng) {
    // Mostly inside the model: damage to the header is rejected before the model is read.
    let start = match root.get_mut("model") {
        Some(model) if rng.chance(0.95) => model,
        _ => root,
    };
    match rng.below(23) {
        20..=22 => mutate_field(start, rng),
        0..=4 => retarget_children(start, rng),
        5..=13 => {
            let node = random_node(start, rng, 0.0);
            *node = replacement(node, rng);
        }
        14..=16 => match random_node(start, rng, 0.3) {
            Value::Array(a) => mutate_array(a, rng),
            node => *node = replacement(node, rng),
        },
        17 => match random_node(start, rng, 0.3) {
            Value::Object(o) if !o.is_empty() => {
                let key = o
                    .keys()
                    .nth(rng.below(o.len()))
                    .cloned()
                    .expect("non-empty");
                if rng.chance(0.7) {
                    o.remove(&key);
                } else {
                    o.insert("unexpected".into(), any_value(rng));
                }
            }
            node => *node = any_value(rng),
        },
        _ => *random_node(start, rng, 0.25) = any_value(rng),
    }
}

/// The fields that bound prediction's work: the iteration path (tree counts and weights), the
/// output count, a categorical mapper's levels, the loss and its parameter, the bias, and leaf
/// values just inside the bound on a term (huge scores under a log link).
fn mutate_field(model: &mut Value, rng: &mut TestRng) {
    let Some(model) = model.as_object_mut() else {
        return;
    };
    let n_trees = model
        .get("trees")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let counts = [
        0,
        1,
        2,
        3,
        n_trees,
        n_trees + 1,
        1 << 16,
        1 << 17,
        1 << 20,
        usize::MAX,
    ];
    let huge = [1e308, -1e308, 1e300, 1e31, 1e29, 800.0, 710.0, -800.0];
    match rng.below(9) {
        0 => {
            let Some(Value::Array(path)) = model.get_mut("iteration_weights") else {
                return;
            };
            let Some(Value::Array(row)) = (!path.is_empty())
                .then(|| rng.below(path.len()))
                .and_then(|i| path.get_mut(i))
            else {
                return;
            };
            match rng.below(3) {
                0 if !row.is_empty() => {
                    let j = rng.below(row.len());
                    row[j] = json!(*pick(rng, &huge));
                }
                1 => {
                    row.pop();
                }
                _ => row.push(json!(0.5)),
            }
        }
        1 => {
            if let Some(Value::Array(path)) = model.get_mut("iteration_weights") {
                match rng.below(2) {
                    0 => drop(path.pop()),
                    _ => path.push(json!([0.5, 0.5, 0.5])),
                }
            }
        }
        2 => {
            let Some(Value::Array(path)) = model.get_mut("iteration_trees") else {
                return;
            };
            match rng.below(3) {
                0 if !path.is_empty() => {
                    let i = rng.below(path.len());
                    path[i] = json!(*pick(rng, &counts));
                }
                1 => path.reverse(),
                _ => drop(path.pop()),
            }
        }
        3 => {
            model.insert("best_iteration".into(), json!(*pick(rng, &counts)));
        }
        4 => {
            let n = *pick(rng, &counts);
            model.insert("n_outputs".into(), json!(n));
            if n <= 1 << 20 && rng.chance(0.7) {
                model.insert("bias".into(), json!(vec![0.0; n]));
            }
        }
        5 => {
            let features = model.get_mut("features").and_then(Value::as_array_mut);
            let mapper = (features.into_iter().flatten())
                .filter_map(|f| f.pointer_mut("/mapper/Categorical"))
                .find_map(Value::as_object_mut);
            if let Some(mapper) = mapper {
                let size = *pick(rng, &[0, 1, 2, 5, 1_000, 1_000_000]);
                let n_bins = mapper.get("n_bins").and_then(Value::as_u64);
                let n_bins = n_bins.unwrap_or(1).max(1);
                let bins: Vec<u64> = (0..size as u64).map(|i| i % n_bins).collect();
                mapper.insert("level_bins".into(), json!(bins));
            }
        }
        6 => {
            let losses = [
                json!({"name": "poisson"}),
                json!({"name": "gamma"}),
                json!({"name": "cox"}),
                json!({"name": "tweedie", "p": 1.5}),
                json!({"name": "tweedie", "p": 2.0}),
                json!({"name": "tweedie", "p": 1e308}),
                json!({"name": "pinball", "tau": 1e-320}),
                json!({"name": "exponential", "beta": 1e308}),
                json!({"name": "quantiles", "levels": [0.1, 0.5, 0.9]}),
                json!({"name": "quantiles", "levels": [0.9, 0.1]}),
                json!({"name": "quantiles", "levels": vec![0.5; 100_000]}),
                json!({"name": "lambdarank", "k": 10.0}),
                json!({"name": "lambdarank", "k": 0.0}),
                json!({"name": "lambdarank", "k": 1e308}),
                json!({"name": "pairwise"}),
                json!({"name": "rank_xendcg"}),
            ];
            model.insert("loss".into(), pick(rng, &losses).clone());
        }
        7 => {
            let n = model
                .get("bias")
                .and_then(Value::as_array)
                .map_or(1, Vec::len);
            model.insert("bias".into(), json!(vec![*pick(rng, &huge); n]));
        }
        _ => {
            let value = *pick(rng, &[1e29, -1e29, 1e30, 710.0, 1e3]);
            let trees = model.get_mut("trees").and_then(Value::as_array_mut);
            for tree in trees.into_iter().flatten() {
                let values = tree.get_mut("value").and_then(Value::as_array_mut);
                for v in values.into_iter().flatten() {
                    *v = json!(value);
                }
            }
        }
    }
}

/// Points a child of a random split node at another node (before, after, itself, past the end,
/// or a node that already has a parent), in either layout of trees.
fn retarget_children(model: &mut Value, rng: &mut TestRng) {
    // `get_mut`, not indexing: indexing a `Value` that a previous mutation turned into a
    // non-object panics.
    let Some(trees) = model.get_mut("trees").and_then(Value::as_array_mut) else {
        return;
    };
    if trees.is_empty() {
        return;
    }
    let t = rng.below(trees.len());
    let tree = &mut trees[t];
    let children_of = |tree: &Value, i: usize| -> Vec<u64> {
        match tree.get("nodes") {
            Some(nodes) => vec![nodes[i].get("left").and_then(Value::as_u64).unwrap_or(0)],
            None => vec![tree["left"][i].as_u64().unwrap_or(0)],
        }
    };
    let n = match tree.get("nodes") {
        Some(nodes) => nodes.as_array().map_or(0, Vec::len),
        None => tree
            .get("left")
            .and_then(Value::as_array)
            .map_or(0, Vec::len),
    };
    if n == 0 {
        return;
    }
    let i = rng.below(n);
    let target = match rng.below(4) {
        0 => rng.below(n),
        1 => i,
        2 => n + rng.below(3),
        // Another split's child: a shared child.
        _ => children_of(tree, rng.below(n))[0] as usize,
    };
    let left_side = rng.chance(0.5);
    if let Some(nodes) = tree.get_mut("nodes").and_then(Value::as_array_mut) {
        if let Some(node) = nodes[i].as_object_mut() {
            node.insert(
                if left_side { "left" } else { "right" }.into(),
                json!(target),
            );
        }
        return;
    }
    // The compact layout: `left` per node, `right` per split (the splits before node i count).
    let Some(left) = tree.get("left").and_then(Value::as_array) else {
        return;
    };
    let k = left[..i].iter().filter(|l| **l != json!(0)).count();
    let is_split = left[i] != json!(0);
    if left_side || !is_split {
        tree["left"][i] = json!(target);
    } else if let Some(right) = tree.get_mut("right").and_then(Value::as_array_mut) {
        if k < right.len() {
            right[k] = json!(target);
        }
    }
}

fn finish_text(value: &Value) -> String {
    let text = value.to_string();
    if !text.contains("__") {
        return text;
    }
    text.replace(
        &format!("\"{HUGE_INTEGER}\""),
        "123456789012345678901234567890",
    )
    .replace(&format!("\"{OVERFLOWING_FLOAT}\""), "1e400")
    .replace(
        &format!("\"{DEEP_NESTING}\""),
        &format!("{}0{}", "[".repeat(100_000), "]".repeat(100_000)),
    )
    .replace(
        &format!("\"{SHALLOW_NESTING}\""),
        &format!("{}0{}", "[".repeat(100), "]".repeat(100)),
    )
}

/// Text-level damage: truncation, a stray character, a deleted stretch.
fn mutate_text(text: &str, rng: &mut TestRng) -> String {
    let mut bytes = text.as_bytes().to_vec();
    let at = rng.below(bytes.len().max(1));
    match rng.below(3) {
        0 => bytes.truncate(at),
        1 => {
            let stray = *pick(rng, b",:{}[]\"0-9e.an ");
            if at < bytes.len() {
                bytes[at] = stray;
            }
        }
        _ => {
            let end = (at + 1 + rng.below(40)).min(bytes.len());
            bytes.drain(at..end);
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Mutation `case` of `base` (a parsed model file) under `seed`: one or two value-level
/// mutations, sometimes followed by text-level damage.
pub fn mutate(base: &Value, seed: u64, case: u64) -> String {
    let mut rng = TestRng::new(seed ^ case.wrapping_mul(0xd134_2543_de82_ef95));
    let mut value = base.clone();
    for _ in 0..1 + rng.below(2) {
        mutate_value(&mut value, &mut rng);
    }
    let text = finish_text(&value);
    if rng.chance(0.1) {
        mutate_text(&text, &mut rng)
    } else {
        text
    }
}

// ------------------------------------------------------------------ the probe's payloads

fn split_node(left: usize, right: usize) -> Value {
    json!({"feature": 0, "left": left, "right": right, "threshold": 0.5, "bin": 1,
           "default_left": true, "category": null, "value": 0.0, "gain": 1.0, "count": 2})
}

fn leaf(value: f64) -> Value {
    json!({"feature": 0, "left": 0, "right": 0, "threshold": 0.0, "bin": 0,
           "default_left": false, "category": null, "value": value, "gain": 0.0, "count": 1})
}

/// `base` with its first tree replaced by `nodes` (feature 0 of every base model is numeric),
/// in the base's layout.
fn with_first_tree(base: &Value, nodes: Vec<Value>) -> String {
    let mut value = base.clone();
    value["model"]["trees"][0] = if base["version"] == json!(1) {
        json!({"nodes": nodes, "categories": []})
    } else {
        compact(&nodes)
    };
    value.to_string()
}

/// The specific files of the adversarial probe, each applied to `base` (a parsed model file;
/// those needing a categorical split or several outputs find them in any of the base models).
pub fn probe_payloads(bases: &[Value]) -> Vec<(String, String)> {
    let squared = &bases[0];
    let mut payloads = Vec::new();
    // A 400,000-node chain: split 2i has the leaf 2i + 1 and the next split 2i + 2 as children,
    // in both layouts (built as arrays and text: 400,000 node `Value`s would take seconds to
    // build in a debug build).
    let chain_splits = 200_000;
    let mut left = Vec::with_capacity(2 * chain_splits + 1);
    let mut right = Vec::with_capacity(chain_splits);
    for i in 0..chain_splits {
        left.extend([2 * i + 2, 0]);
        right.push(2 * i + 1);
    }
    left.push(0);
    let n = left.len();
    let tree = format!(
        "{{\"left\":{},\"value\":{},\"count\":{},\"right\":{},\"feature\":{},\
         \"threshold\":{},\"bin\":{},\"default_left\":{},\"gain\":{},\"categories\":[]}}",
        serde_json::to_string(&left).unwrap(),
        serde_json::to_string(&vec![0.1; n]).unwrap(),
        serde_json::to_string(&vec![1; n]).unwrap(),
        serde_json::to_string(&right).unwrap(),
        serde_json::to_string(&vec![0; chain_splits]).unwrap(),
        serde_json::to_string(&vec![0.5; chain_splits]).unwrap(),
        serde_json::to_string(&vec![1; chain_splits]).unwrap(),
        serde_json::to_string(&vec![true; chain_splits]).unwrap(),
        serde_json::to_string(&vec![1.0; chain_splits]).unwrap(),
    );
    let placeholder = "\"__CHAIN__\"";
    let mut value = squared.clone();
    value["model"]["trees"][0] = json!("__CHAIN__");
    payloads.push((
        "400k-node chain".into(),
        value.to_string().replacen(placeholder, &tree, 1),
    ));
    let mut chain = String::with_capacity(250 * chain_splits);
    let (split_text, leaf_text) = (split_node(1, 2).to_string(), leaf(0.1).to_string());
    for i in 0..chain_splits {
        let split = (split_text.replace("\"left\":1", &format!("\"left\":{}", 2 * i + 2)))
            .replace("\"right\":2", &format!("\"right\":{}", 2 * i + 1));
        chain.push_str(&split);
        chain.push(',');
        chain.push_str(&leaf_text);
        chain.push(',');
    }
    chain.push_str(&leaf(0.2).to_string());
    let mut value = to_version_1(squared);
    value["model"]["trees"][0] = json!({"nodes": ["__CHAIN__"], "categories": []});
    payloads.push((
        "400k-node chain, format version 1".into(),
        value.to_string().replacen(placeholder, &chain, 1),
    ));
    // A chain whose nodes share their child: 62 nodes, 2^61 root-to-leaf paths.
    let mut dag: Vec<Value> = (0..61).map(|i| split_node(i + 1, i + 1)).collect();
    dag.push(leaf(1.0));
    payloads.push(("shared-children DAG".into(), with_first_tree(squared, dag)));
    // A cycle through the root, and so a child before its parent (through `right`: a node
    // whose `left` is 0 is a leaf in the compact layout).
    let cycle = vec![split_node(1, 2), split_node(2, 0), leaf(1.0)];
    payloads.push(("cycle".into(), with_first_tree(squared, cycle)));
    // A categorical split with "category": null, and a numeric split with a category set.
    for base in bases {
        let mut value = base.clone();
        let (mut nulled, mut added) = (false, false);
        for tree in value["model"]["trees"].as_array_mut().into_iter().flatten() {
            let categories = tree.get_mut("category").and_then(Value::as_array_mut);
            for category in categories.into_iter().flatten() {
                if !nulled && !category.is_null() {
                    *category = Value::Null;
                    nulled = true;
                }
            }
        }
        if nulled {
            payloads.push(("null category".into(), value.to_string()));
        }
        let mut value = base.clone();
        for tree in value["model"]["trees"].as_array_mut().into_iter().flatten() {
            let has_sets = tree["categories"].as_array().is_some_and(|c| !c.is_empty());
            let categories = tree.get_mut("category").and_then(Value::as_array_mut);
            for category in categories.into_iter().flatten() {
                if has_sets && !added && category.is_null() {
                    *category = json!(0);
                    added = true;
                }
            }
        }
        if added {
            payloads.push(("category on a numeric split".into(), value.to_string()));
        }
    }
    // Loss parameters out of range.
    for loss in [
        json!({"name": "logistic", "ridge": -5.0}),
        json!({"name": "exponential", "beta": 0.0}),
        json!({"name": "exponential", "beta": -1.0}),
        json!({"name": "pinball", "tau": 7.0}),
        json!({"name": "huber", "delta": -1.0}),
        json!({"name": "huber", "delta": "inf"}),
        json!({"name": "softmax"}),
        json!({"name": "multiclass_hinge"}),
        json!({"name": "quantiles", "levels": []}),
        json!({"name": "quantiles", "levels": [0.5, 0.1]}),
        json!({"name": "quantiles", "levels": [0.5, 0.5]}),
        json!({"name": "quantiles", "levels": [0.1, 1.0]}),
        json!({"name": "quantiles", "levels": [0.1, "0.2"]}),
        json!({"name": "quantiles", "levels": (1..=100).map(|i| f64::from(i) / 101.0).collect::<Vec<_>>()}),
    ] {
        let mut value = squared.clone();
        value["model"]["loss"] = loss.clone();
        payloads.push((format!("loss {loss}"), value.to_string()));
    }
    // Tree weights of ±1e308 (on one tree, and on every tree: the sum overflows) and a bias of
    // 1e308.
    for weight in [1e308, -1e308, f64::MAX] {
        let mut value = squared.clone();
        value["model"]["weights"][0] = json!(weight);
        payloads.push((format!("weight {weight:e}"), value.to_string()));
        for w in value["model"]["weights"]
            .as_array_mut()
            .into_iter()
            .flatten()
        {
            *w = json!(weight);
        }
        payloads.push((format!("every weight {weight:e}"), value.to_string()));
    }
    // Two single-leaf trees of value 1 and weight 1e308: each term is finite, their sum is not.
    let mut value = squared.clone();
    for t in 0..2 {
        value["model"]["trees"][t] = compact(&[leaf(1.0)]);
        value["model"]["weights"][t] = json!(1e308);
    }
    payloads.push(("two terms of 1e308".into(), value.to_string()));
    let mut value = squared.clone();
    value["model"]["bias"][0] = json!(1e308);
    payloads.push(("bias 1e308".into(), value.to_string()));
    // Large weights on every tree, each within a per-tree bound but summing past it.
    let mut value = squared.clone();
    for w in value["model"]["weights"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        *w = json!(1e300);
    }
    payloads.push(("every weight 1e300".into(), value.to_string()));
    // A softmax model with one output: every tree on output 0.
    for base in bases {
        if base["model"]["loss"]["name"] == "softmax" {
            let mut value = base.clone();
            let model = &mut value["model"];
            model["n_outputs"] = json!(1);
            model["bias"] = json!([0.0]);
            let n_trees = model["trees"].as_array().map_or(0, Vec::len);
            model["tree_outputs"] = json!(vec![0; n_trees]);
            payloads.push(("softmax with 1 output".into(), value.to_string()));
        }
    }
    // A regression model claiming 3 outputs.
    let mut value = squared.clone();
    value["model"]["n_outputs"] = json!(3);
    value["model"]["bias"] = json!([0.0, 0.0, 0.0]);
    payloads.push(("squared with 3 outputs".into(), value.to_string()));
    // Issue 39: a softmax file of 2^20 outputs (bias and outputs consistent), whose prediction
    // of 600 rows aborted; a log-link bias whose mean overflows; iteration weights of 1e308
    // and an iteration path that made `weights_at` panic.
    for base in bases {
        if base["model"]["loss"]["name"] == "softmax" {
            let mut value = base.clone();
            value["model"]["n_outputs"] = json!(1 << 20);
            value["model"]["bias"] = json!(vec![0.0; 1 << 20]);
            payloads.push(("softmax with 2^20 outputs".into(), value.to_string()));
        }
        if base["model"]["loss"]["name"] == "poisson" {
            let mut value = base.clone();
            value["model"]["bias"] = json!([800.0]);
            payloads.push(("poisson bias 800".into(), value.to_string()));
            let mut value = base.clone();
            value["model"]["iteration_weights"][1][0] = json!(1e308);
            payloads.push(("iteration weight 1e308".into(), value.to_string()));
            let mut value = base.clone();
            value["model"]["iteration_weights"][1][0] = json!(1e300);
            payloads.push(("iteration weight 1e300".into(), value.to_string()));
            let mut value = base.clone();
            let n_trees = value["model"]["trees"].as_array().map_or(0, Vec::len);
            value["model"]["iteration_trees"][0] = json!(n_trees + 7);
            payloads.push(("iteration_trees past the trees".into(), value.to_string()));
            let mut value = base.clone();
            if let Some(path) = value["model"]["iteration_trees"].as_array_mut() {
                path.reverse();
            }
            payloads.push(("iteration_trees decreasing".into(), value.to_string()));
        }
    }
    // n_threads-like huge counts where the model stores counts.
    let mut value = squared.clone();
    value["model"]["n_outputs"] = json!(u64::MAX);
    payloads.push(("n_outputs u64::MAX".into(), value.to_string()));
    payloads
}

/// Counts of outcomes by label, and the first few failures.
#[derive(Default)]
pub struct Tally {
    pub counts: std::collections::BTreeMap<&'static str, usize>,
    pub failures: Vec<String>,
}

impl Tally {
    pub fn add(&mut self, name: &str, outcome: &Outcome) {
        *self.counts.entry(outcome.label()).or_default() += 1;
        if outcome.is_failure() {
            self.failures.push(format!("{name}: {outcome:?}"));
        }
    }
    pub fn n_failures(&self) -> usize {
        self.failures.len()
    }
}
