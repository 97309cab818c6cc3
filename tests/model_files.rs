//! Regression tests for the findings of the adversarial probe of model files: a model file is
//! untrusted data, and nothing read from it may panic, crash, hang or make prediction return
//! NaN/∞. (The seeded mutation fuzzing is in `model_fuzz.rs`.)

mod fuzz_support;

use fuzz_support::common;
use optboost::BinMapper;
use optboost::{Booster, Frame, LossSpec, Model, Params, TrainData};
use optboost::{Node, Tree};
use std::time::{Duration, Instant};

struct Data {
    /// One numeric column.
    x: Vec<Vec<f64>>,
    codes: Vec<i32>,
    y: Vec<f64>,
}

impl Data {
    fn new(n: usize) -> Self {
        let x: Vec<f64> = (0..n)
            .map(|i| {
                if i % 9 == 0 {
                    f64::NAN
                } else {
                    (i % 17) as f64
                }
            })
            .collect();
        let codes: Vec<i32> = (0..n)
            .map(|i| (i % 5) as i32 - (i % 23 == 0) as i32)
            .collect();
        let y = (0..n)
            .map(|i| (i % 17) as f64 * 0.3 + if codes[i] == 2 { 2.0 } else { 0.0 })
            .collect();
        Data {
            x: vec![x],
            codes,
            y,
        }
    }
    fn frame(&self) -> Frame<'_> {
        common::mixed_frame(&self.x, &self.codes, 5)
    }
}

fn train(data: &Data, y: &[f64], params: &[(&str, &str)]) -> Model {
    let mut p = Params::default();
    p.set("n_iter", "5")
        .unwrap()
        .set("min_category_count", "1")
        .unwrap();
    for (name, value) in params {
        p.set(name, value).unwrap();
    }
    let mut booster = Booster::new(
        p,
        &TrainData {
            frame: data.frame(),
            y,
            weights: None,
        },
        None,
    )
    .unwrap();
    booster.run(|_| true).unwrap();
    booster.into_model()
}

fn squared_model(data: &Data) -> Model {
    train(data, &data.y, &[("max_depth", "3")])
}

/// The error of loading the model's file.
fn load_error(model: &Model) -> String {
    match Model::from_json(&model.to_json()) {
        Ok(_) => panic!("the file loaded"),
        Err(e) => e.to_string(),
    }
}

fn leaf(value: f64) -> Node {
    Node {
        feature: 0,
        left: 0,
        right: 0,
        threshold: 0.0,
        bin: 0,
        default_left: false,
        category: None,
        value,
        gain: 0.0,
        count: 1,
    }
}

fn split(left: usize, right: usize) -> Node {
    Node {
        left: left as u32,
        right: right as u32,
        threshold: 5.0,
        bin: 1,
        default_left: true,
        ..leaf(0.0)
    }
}

/// `splits` splits on feature 0, each with a leaf and the next split as children.
fn chain(splits: usize) -> Tree {
    let mut nodes = Vec::with_capacity(2 * splits + 1);
    for i in 0..splits {
        nodes.push(split(2 * i + 2, 2 * i + 1));
        nodes.push(leaf(0.1));
    }
    nodes.push(leaf(0.2));
    Tree {
        nodes,
        categories: Vec::new(),
    }
}

fn assert_finite(values: &[f64]) {
    assert!(values.iter().all(|v| v.is_finite()), "{values:?}");
}

// ------------------------------------------------------------------ 1: a 400,000-node chain

#[test]
fn a_400k_node_chain_is_rejected_at_load_and_walked_without_recursion() {
    let data = Data::new(200);
    let mut model = squared_model(&data);
    model.trees[0] = chain(200_000);
    assert_eq!(model.trees[0].nodes.len(), 400_001);
    // Prediction of the model in memory sizes its walk with `Tree::depth`, which recursed once
    // per level and overflowed the stack.
    assert_eq!(model.trees[0].depth(), 200_000);
    assert_finite(&model.predict(&data.frame()).unwrap());
    // No training grows such a tree: its file is rejected.
    let e = load_error(&model);
    assert!(
        e.contains("tree 0, node 128") && e.contains("deeper than 64"),
        "{e}"
    );
}

#[test]
fn the_deepest_trees_training_grows_still_load() {
    let data = Data::new(200);
    let mut model = squared_model(&data);
    model.trees[0] = chain(64);
    assert!(Model::from_json(&model.to_json()).is_ok());
    model.trees[0] = chain(65);
    assert!(load_error(&model).contains("deeper than 64"));
}

// ------------------------------------------------------------------ 2: shared children

#[test]
fn a_tree_whose_nodes_share_children_is_rejected_at_once() {
    let data = Data::new(200);
    let mut model = squared_model(&data);
    // 62 nodes, each split's two children the next node: 2^61 root-to-leaf paths, which the
    // recursive depth walked one by one.
    let mut nodes: Vec<Node> = (0..61).map(|i| split(i + 1, i + 1)).collect();
    nodes.push(leaf(1.0));
    model.trees[0] = Tree {
        nodes,
        categories: Vec::new(),
    };
    let started = Instant::now();
    assert_eq!(model.trees[0].depth(), 61);
    let e = load_error(&model);
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(
        e.contains("tree 0, node 0") && e.contains("already the child"),
        "{e}"
    );
    // Two parents of one node, a child before its parent, a node nobody points at.
    let shared = vec![split(1, 2), split(3, 4), split(3, 4), leaf(1.0), leaf(2.0)];
    let backwards = vec![split(1, 2), split(3, 1), leaf(1.0), leaf(2.0)];
    let orphan = vec![split(1, 2), leaf(1.0), leaf(2.0), leaf(3.0)];
    for (nodes, expected) in [
        (shared, "node 2: left = 3: it is already the child"),
        (backwards, "node 1: right = 1: a child must come after"),
        (orphan, "node 3: no node has it as a child"),
    ] {
        model.trees[0] = Tree {
            nodes,
            categories: Vec::new(),
        };
        let e = load_error(&model);
        assert!(e.contains(expected), "{e}");
    }
}

// ------------------------------------------------------------------ 3: thread counts

#[test]
fn a_huge_thread_count_is_capped_and_trains_the_same_model() {
    let data = Data::new(300);
    let one = train(&data, &data.y, &[("n_threads", "1")]);
    // A million OS threads were spawned before; now the count is capped at the machine's.
    let huge = train(&data, &data.y, &[("n_threads", "1000000")]);
    assert_eq!(one.to_json(), huge.to_json());
    assert_eq!(
        optboost::learner::threads_used(1_000_000),
        optboost::available_threads()
    );
}

#[test]
fn boosters_sharing_a_pool_train_side_by_side_to_the_models_they_train_alone() {
    // Boosters of one thread count share a pool; a pool thread waiting inside one booster's
    // histogram build can pick up the other's work, which then must not trip over the first
    // build's buffer (before the fallback to a fresh buffer, about one run in three panicked
    // with "RefCell already borrowed").
    // Rows for several blocks per histogram (blocks of 8192 rows are built in parallel).
    let data = Data::new(40_000);
    let params = [("n_threads", "2"), ("n_iter", "10"), ("max_depth", "4")];
    let alone = train(&data, &data.y, &params);
    let side_by_side: Vec<Model> = std::thread::scope(|scope| {
        let runs: Vec<_> = (0..3)
            .map(|_| scope.spawn(|| train(&data, &data.y, &params)))
            .collect();
        runs.into_iter().map(|run| run.join().unwrap()).collect()
    });
    for model in side_by_side {
        assert_eq!(model.to_json(), alone.to_json());
    }
}

// ------------------------------------------------------------------ 4: values read from the file

#[test]
fn a_categorical_split_without_its_category_set_is_rejected() {
    let data = Data::new(300);
    let mut model = squared_model(&data);
    let (t, i) = (model.trees.iter().enumerate())
        .find_map(|(t, tree)| {
            let i = tree.nodes.iter().position(|n| n.category.is_some())?;
            Some((t, i))
        })
        .expect("the model has a categorical split");
    let mut broken = model.clone();
    broken.trees[t].nodes[i].category = None;
    let e = load_error(&broken);
    assert!(
        e.contains(&format!("tree {t}, node {i}")) && e.contains("category = null"),
        "{e}"
    );
    // A category set index past the tree's sets, and a categorical rule on a numeric feature.
    broken = model.clone();
    broken.trees[t].nodes[i].category = Some(99);
    assert!(load_error(&broken).contains("category = 99"));
    let numeric = (model.trees[0].nodes.iter())
        .position(|n| !n.is_leaf() && n.feature == 0)
        .expect("a numeric split");
    model.trees[0].nodes[numeric].category = Some(0);
    model.trees[0].categories = model.trees[t].categories.clone();
    assert!(load_error(&model).contains("categorical rule (category) on the numeric feature"));
}

#[test]
fn loss_parameters_out_of_range_are_rejected_at_load() {
    let data = Data::new(200);
    let mut model = squared_model(&data);
    for (loss, parameter) in [
        (LossSpec::Logistic { ridge: -5.0 }, "ridge"),
        (LossSpec::Exponential { beta: 0.0 }, "beta"),
        (LossSpec::Exponential { beta: -1.0 }, "beta"),
        (LossSpec::Pinball { tau: 7.0 }, "tau"),
        (LossSpec::Huber { delta: -1.0 }, "delta"),
    ] {
        model.loss = loss;
        let e = load_error(&model);
        assert!(e.contains(&format!("`{parameter}`")), "{e}");
        // The response of such a model (built in memory) is an error, not the raw scores.
        let scores = model.predict(&data.frame()).unwrap();
        assert!(model.response(scores).is_err());
    }
}

#[test]
fn tree_weights_bias_and_leaf_values_out_of_bounds_are_rejected() {
    let data = Data::new(200);
    let model = squared_model(&data);
    for weight in [1e308, -1e308, 1e31] {
        let mut broken = model.clone();
        broken.weights[2] = weight;
        let e = load_error(&broken);
        assert!(e.contains("tree 2") && e.contains("tree weight"), "{e}");
    }
    let mut broken = model.clone();
    broken.bias[0] = 1e308;
    assert!(load_error(&broken).contains("bias 0"));
    let mut broken = model.clone();
    let leaf = broken.trees[1]
        .nodes
        .iter()
        .position(Node::is_leaf)
        .unwrap();
    broken.trees[1].nodes[leaf].value = -1e300;
    assert!(load_error(&broken).contains(&format!("tree 1, node {leaf}")));
    // Within the bounds, a model of huge terms still predicts finite values.
    let mut big = model.clone();
    big.bias[0] = 1e30;
    for w in &mut big.weights {
        *w = 1e29;
    }
    let loaded = Model::from_json(&big.to_json()).unwrap();
    assert_finite(&loaded.predict(&data.frame()).unwrap());
}

#[test]
fn output_counts_must_match_the_loss() {
    let data = Data::new(300);
    let classes: Vec<f64> = data.y.iter().map(|&v| (v / 2.0).floor().min(2.0)).collect();
    let softmax = train(&data, &classes, &[("loss", "softmax")]);
    assert_eq!(softmax.n_outputs, 3);
    let loaded = Model::from_json(&softmax.to_json()).unwrap();
    assert_finite(&loaded.predict_response(&data.frame()).unwrap());
    // One output: every probability was 1.0.
    let mut one = softmax.clone();
    one.n_outputs = 1;
    one.bias.truncate(1);
    one.tree_outputs.iter_mut().for_each(|o| *o = 0);
    let e = load_error(&one);
    assert!(
        e.contains("softmax") && e.contains("at least 2 classes"),
        "{e}"
    );
    // A regression loss gives one score per row.
    let mut three = squared_model(&data);
    three.n_outputs = 3;
    three.bias = vec![0.0; 3];
    let e = load_error(&three);
    assert!(e.contains("gives 1 scores per row"), "{e}");
}

fn mapper(model: &mut Model, j: usize) -> &mut optboost::BinMapper {
    &mut model.features[j].mapper
}

#[test]
fn feature_mappers_must_be_ones_binning_makes() {
    use optboost::BinMapper;
    let data = Data::new(200);
    let model = squared_model(&data);
    let mut broken = model.clone();
    if let BinMapper::Numeric { cuts } = mapper(&mut broken, 0) {
        cuts.reverse();
    }
    assert!(load_error(&broken).contains("not strictly ascending"));
    let mut broken = model.clone();
    if let BinMapper::Numeric { cuts } = mapper(&mut broken, 0) {
        cuts[0] = f64::NAN;
    }
    assert!(load_error(&broken).contains("NaN cut point"));
    let mut broken = model.clone();
    if let BinMapper::Categorical { n_bins, .. } = mapper(&mut broken, 1) {
        *n_bins = 1;
    }
    assert!(load_error(&broken).contains("not below n_bins"));
    let mut broken = model.clone();
    if let BinMapper::Categorical { level_bins, .. } = mapper(&mut broken, 1) {
        level_bins.clear();
    }
    assert!(load_error(&broken).contains("0 levels"));
    let mut broken = model.clone();
    broken.features.clear();
    assert!(load_error(&broken).contains("no features"));
    // A NaN threshold, a bin past the feature's bins.
    let mut broken = model.clone();
    let i = (broken.trees[0].nodes.iter())
        .position(|n| !n.is_leaf() && n.category.is_none())
        .unwrap();
    broken.trees[0].nodes[i].threshold = f64::NAN;
    assert!(load_error(&broken).contains("threshold is NaN"));
    let mut broken = model.clone();
    broken.trees[0].nodes[i].bin = 255;
    assert!(load_error(&broken).contains("bin = 255"));
}

// ------------------------------------------------------------------ 5: format versions 1 to 3

/// Reads `model`'s file, in version 3 and rewritten as versions 2 and 1, and checks that all give
/// the same model, predicting bit for bit what `model` predicts on `frame` (at every iteration).
fn assert_round_trip(model: &Model, frame: &Frame<'_>) {
    let text = model.to_json();
    let parsed = serde_json::from_str(&text).unwrap();
    let version_2 = fuzz_support::to_version_2(&parsed).to_string();
    let version_1 = fuzz_support::to_version_1(&parsed).to_string();
    assert!(text.contains("\"version\":3") && version_2.contains("\"version\":2"));
    assert!(version_1.contains("\"nodes\""));
    for text in [text, version_2, version_1] {
        let back = Model::from_json(&text).unwrap();
        assert_eq!(&back, model);
        let bits = |m: &Model, k: Option<usize>| -> Vec<u64> {
            let scores = match k {
                None => m.predict(frame).unwrap(),
                Some(k) => m.predict_iteration(frame, k).unwrap(),
            };
            scores.iter().map(|v| v.to_bits()).collect()
        };
        assert_eq!(bits(&back, None), bits(model, None));
        for k in 0..=model.n_iterations() {
            assert_eq!(bits(&back, Some(k)), bits(model, Some(k)));
        }
        // Written again, the file is the same as the first.
        assert_eq!(back.to_json(), model.to_json());
    }
}

#[test]
fn models_read_back_the_same_from_either_format_version() {
    let data = Data::new(400);
    // Numeric and categorical rules, and infinite thresholds (the last bin sends every value
    // left; −∞ sends only −∞ and missing values by default).
    let mut model = train(&data, &data.y, &[("max_depth", "4"), ("n_iter", "8")]);
    assert!(model
        .trees
        .iter()
        .flat_map(|t| &t.nodes)
        .any(|n| n.category.is_some()));
    let numeric: Vec<(usize, usize)> = (model.trees.iter().enumerate())
        .flat_map(|(t, tree)| {
            (tree.nodes.iter().enumerate())
                .filter(|(_, n)| !n.is_leaf() && n.category.is_none())
                .map(move |(i, _)| (t, i))
        })
        .collect();
    let (t, i) = numeric[0];
    model.trees[t].nodes[i].threshold = f64::INFINITY;
    let (t, i) = numeric[numeric.len() - 1];
    model.trees[t].nodes[i].threshold = f64::NEG_INFINITY;
    assert_round_trip(&model, &data.frame());
    // Multiclass, and a momentum method's per-iteration weights.
    let classes: Vec<f64> = data.y.iter().map(|&v| (v / 2.0).floor().min(2.0)).collect();
    let softmax = train(&data, &classes, &[("loss", "softmax")]);
    assert_eq!(softmax.n_outputs, 3);
    assert_round_trip(&softmax, &data.frame());
    let agbm = train(&data, &data.y, &[("method", "agbm"), ("n_iter", "6")]);
    assert!(!agbm.iteration_weights.is_empty() && !agbm.iteration_trees.is_empty());
    assert_round_trip(&agbm, &data.frame());
}

#[test]
fn the_compact_layout_writes_split_fields_for_splits_only() {
    let data = Data::new(300);
    let model = squared_model(&data);
    let file: serde_json::Value = serde_json::from_str(&model.to_json()).unwrap();
    for (tree, json) in model
        .trees
        .iter()
        .zip(file["model"]["trees"].as_array().unwrap())
    {
        let n_splits = tree.nodes.len() - tree.n_leaves();
        assert_eq!(json["left"].as_array().unwrap().len(), tree.nodes.len());
        assert_eq!(json["value"].as_array().unwrap().len(), tree.nodes.len());
        for field in ["right", "feature", "bin", "default_left", "gain"] {
            assert_eq!(json[field].as_array().unwrap().len(), n_splits, "{field}");
        }
        // Trained trees' thresholds are those their bins imply, and left out.
        assert!(json.get("threshold").is_none());
        let has_sets = tree.nodes.iter().any(|n| n.category.is_some());
        assert_eq!(json.get("category").is_some(), has_sets);
    }
}

/// The threshold of a split on bin b of a numeric feature is the feature's cut b − 1 (+∞ past
/// the last cut): checked here by the binning rule (x falls in bin 1 + #{cuts < x}), as the
/// value of bin b that is a cut or +∞, the largest value of the bin.
#[test]
fn left_out_thresholds_are_those_training_gave() {
    let data = Data::new(400);
    let model = train(&data, &data.y, &[("max_depth", "4"), ("n_iter", "8")]);
    let file: serde_json::Value = serde_json::from_str(&model.to_json()).unwrap();
    let mut checked = 0;
    for (tree, json) in model
        .trees
        .iter()
        .zip(file["model"]["trees"].as_array().unwrap())
    {
        assert!(json.get("threshold").is_none());
        for node in tree
            .nodes
            .iter()
            .filter(|n| !n.is_leaf() && n.category.is_none())
        {
            let BinMapper::Numeric { cuts } = &model.features[node.feature as usize].mapper else {
                panic!("a numeric rule on a categorical feature");
            };
            let t = node.threshold;
            assert_eq!(
                1 + cuts.iter().filter(|&&c| c < t).count(),
                node.bin as usize
            );
            assert!(cuts.contains(&t) || t == f64::INFINITY, "{t}");
            checked += 1;
        }
    }
    assert!(checked > 10);
    let back = Model::from_json(&model.to_json()).unwrap();
    assert_eq!(back, model);
    // A split whose bin its feature lacks has no threshold to imply: the file is refused,
    // naming the bin.
    let mut broken = file.clone();
    broken["model"]["trees"][0]["bin"][0] = serde_json::json!(255);
    let e = Model::from_json(&broken.to_string())
        .unwrap_err()
        .to_string();
    assert!(e.contains("bin = 255; allowed"), "{e}");
    // A tree read on its own needs its thresholds.
    let tree = serde_json::to_string(&file["model"]["trees"][0]).unwrap();
    assert!(serde_json::from_str::<optboost::Tree>(&tree).is_err());
}

/// The version-2 file committed with the tests, written by the optboost of commit 787c0c4
/// (every threshold written), loads and predicts as the same model trained again.
#[test]
fn a_version_2_file_of_an_earlier_optboost_loads() {
    let text = std::fs::read_to_string("tests/python/data/model_v2.json").unwrap();
    let envelope: serde_json::Value = serde_json::from_str(&text).unwrap();
    let core = envelope["model"].to_string();
    assert!(core.contains("\"version\":2") && core.contains("\"threshold\""));
    let model = Model::from_json(&core).unwrap();
    let rewritten = Model::from_json(&model.to_json()).unwrap();
    assert_eq!(rewritten, model);
    assert!(!model.to_json().contains("\"threshold\""));
}

#[test]
fn compact_trees_of_inconsistent_lengths_are_rejected() {
    let data = Data::new(300);
    let model = squared_model(&data);
    let file: serde_json::Value = serde_json::from_str(&model.to_json()).unwrap();
    let load = |file: &serde_json::Value| match Model::from_json(&file.to_string()) {
        Ok(_) => panic!("the file loaded"),
        Err(e) => e.to_string(),
    };
    let version_2 = fuzz_support::to_version_2(&file);
    for (field, expected) in [
        ("value", "\"value\" has"),
        ("gain", "\"gain\" has"),
        ("threshold", "\"threshold\" has"),
    ] {
        let mut broken = version_2.clone();
        broken["model"]["trees"][1][field]
            .as_array_mut()
            .unwrap()
            .pop();
        let e = load(&broken);
        assert!(e.contains(expected) && e.contains("malformed model"), "{e}");
    }
    // A leaf turned into a split without its split fields, a field missing, both layouts.
    let mut broken = file.clone();
    let left = broken["model"]["trees"][1]["left"].as_array_mut().unwrap();
    let leaf = left
        .iter()
        .position(|l| l == &serde_json::json!(0))
        .unwrap();
    left[leaf] = serde_json::json!(1);
    assert!(load(&broken).contains("entries for"));
    let mut broken = file.clone();
    broken["model"]["trees"][1]
        .as_object_mut()
        .unwrap()
        .remove("bin");
    assert!(load(&broken).contains("without \"bin\""));
    let mut broken = file.clone();
    broken["model"]["trees"][1]["nodes"] = serde_json::json!([]);
    assert!(load(&broken).contains("both"));
    // Versions this optboost does not know.
    let mut broken = file.clone();
    broken["version"] = serde_json::json!(5);
    let e = load(&broken);
    assert!(
        e.contains("version 5") && e.contains("reads versions 1 to 4"),
        "{e}"
    );
}

// ------------------------------------------------------------------ issue 39: bounded work

/// A Poisson model of counts (a log link) trained with a momentum method: its file holds
/// `iteration_trees` and `iteration_weights`.
fn poisson_agbm(data: &Data) -> Model {
    let counts: Vec<f64> = data.y.iter().map(|v| v.floor()).collect();
    train(data, &counts, &[("loss", "poisson"), ("method", "agbm")])
}

#[test]
fn output_counts_are_bounded_before_prediction_allocates() {
    let data = Data::new(300);
    let classes: Vec<f64> = data.y.iter().map(|&v| (v / 2.0).floor().min(2.0)).collect();
    let mut wide = train(&data, &classes, &[("loss", "softmax")]);
    // 2^20 outputs: a 10 MB file whose prediction of 600 rows needed 5 GB and aborted.
    wide.n_outputs = 1 << 20;
    wide.bias = vec![0.0; 1 << 20];
    let e = load_error(&wide);
    assert!(
        e.contains("n_outputs = 1048576") && e.contains("65536"),
        "{e}"
    );
    // The most a file may declare loads and predicts.
    wide.n_outputs = optboost::MAX_OUTPUTS;
    wide.bias = vec![0.0; optboost::MAX_OUTPUTS];
    let loaded = Model::from_json(&wide.to_json()).unwrap();
    let p = loaded.predict_response(&data.frame()).unwrap();
    assert_eq!(p.len(), 300 * optboost::MAX_OUTPUTS);
    assert_finite(&p[..optboost::MAX_OUTPUTS]);
}

#[test]
fn a_log_link_bias_beyond_the_links_range_is_rejected() {
    let data = Data::new(200);
    let model = poisson_agbm(&data);
    for bias in [800.0, 710.0] {
        let mut broken = model.clone();
        broken.bias[0] = bias;
        let e = load_error(&broken);
        assert!(e.contains("bias 0") && e.contains("log link"), "{e}");
    }
    // Any bias whose mean is a finite number loads, however small the mean.
    let mut small = model.clone();
    small.bias[0] = -800.0;
    let loaded = Model::from_json(&small.to_json()).unwrap();
    assert_finite(&loaded.predict_response(&data.frame()).unwrap());
}

#[test]
fn log_link_responses_of_huge_scores_are_the_largest_float_not_infinity() {
    let data = Data::new(200);
    let model = poisson_agbm(&data);
    let frame = data.frame();
    let as_trained = model.predict_response(&frame).unwrap();
    for (loss, value) in [
        (LossSpec::Poisson, 1e29),
        (LossSpec::Gamma, 1e29),
        (LossSpec::Tweedie { p: 1.5 }, 1e29),
        (LossSpec::Cox { ties: Default::default() }, 1e29),
    ] {
        // Every leaf of every tree 1e29 (inside the 1e30 bound on a term).
        let mut huge = model.clone();
        huge.loss = loss.clone();
        for tree in &mut huge.trees {
            for node in tree.nodes.iter_mut().filter(|n| n.is_leaf()) {
                node.value = value;
            }
        }
        huge.iteration_weights.clear();
        huge.iteration_weights
            .extend((huge.iteration_trees.iter()).map(|&t| model.weights[..t].to_vec()));
        let loaded = Model::from_json(&huge.to_json()).unwrap();
        let p = loaded.predict_response(&frame).unwrap();
        assert!(p.iter().all(|&m| m == f64::MAX), "{loss}: {:?}", &p[..3]);
        for k in 0..=loaded.n_iterations() {
            let scores = loaded.predict_iteration(&frame, k).unwrap();
            assert_finite(&loaded.response(scores).unwrap());
        }
    }
    // The bound touches only what overflowed: a trained model predicts as before.
    let reloaded = Model::from_json(&model.to_json()).unwrap();
    assert_eq!(reloaded.predict_response(&frame).unwrap(), as_trained);
    assert!(as_trained.iter().all(|&m| m.is_finite() && m < 1e6));
}

#[test]
fn the_iteration_path_is_validated_at_load() {
    let data = Data::new(200);
    let model = poisson_agbm(&data);
    assert_eq!(model.n_iterations(), 5);
    assert_eq!(model.iteration_weights.len(), 5);
    let n_trees = model.n_trees();
    let cases: Vec<(&str, Box<dyn Fn(&mut Model)>, &str)> = vec![
        (
            "weight 1e308",
            Box::new(|m| m.iteration_weights[2][0] = 1e308),
            "iteration_weights[2][0] = 1e308",
        ),
        (
            "weight 1e300",
            Box::new(|m| m.iteration_weights[1][1] = -1e300),
            "iteration_weights[1][1] = -1e300",
        ),
        (
            "more trees than the model",
            Box::new(move |m| m.iteration_trees[1] = n_trees + 5),
            "iteration_trees[1]",
        ),
        (
            "decreasing",
            Box::new(|m| m.iteration_trees.swap(0, 3)),
            "iteration_trees decreases",
        ),
        (
            "a weight list short of its trees",
            Box::new(|m| {
                m.iteration_weights[3].pop();
            }),
            "iteration_weights[3] has",
        ),
        (
            "a weight list too long",
            Box::new(|m| m.iteration_weights[4].push(0.5)),
            "iteration_weights[4] has",
        ),
        (
            "weights for fewer iterations",
            Box::new(|m| {
                m.iteration_weights.pop();
            }),
            "4 iteration_weights for 5 iteration_trees",
        ),
        (
            "best iteration beyond the path",
            Box::new(|m| m.best_iteration = Some(usize::MAX)),
            "best_iteration",
        ),
    ];
    for (name, damage, expected) in cases {
        let mut broken = model.clone();
        damage(&mut broken);
        let e = load_error(&broken);
        assert!(e.contains(expected), "{name}: {e}");
    }
    // An inconsistent path once made `weights_at` panic: now every iteration of every loaded
    // model predicts.
    let loaded = Model::from_json(&model.to_json()).unwrap();
    for k in 0..=loaded.n_iterations() {
        assert_finite(&loaded.predict_iteration(&data.frame(), k).unwrap());
    }
}

#[test]
fn load_reads_only_regular_files_of_bounded_size() {
    let e = Model::load("/dev/zero").unwrap_err().to_string();
    assert!(e.contains("/dev/zero is not a regular file"), "{e}");
    let dir = std::env::temp_dir().join(format!("optboost-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let e = Model::load(&dir).unwrap_err().to_string();
    assert!(e.contains("not a regular file"), "{e}");
    // A FIFO with no writer: opening it for reading used to block for ever.
    let fifo = dir.join("fifo");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let (send, receive) = std::sync::mpsc::channel();
    let path = fifo.clone();
    std::thread::spawn(move || send.send(Model::load(&path).map(|_| ())));
    let outcome = receive.recv_timeout(Duration::from_secs(30));
    let e = outcome.expect("loading a FIFO returned").unwrap_err();
    assert!(e.to_string().contains("not a regular file"), "{e}");
    // A regular file still loads.
    let data = Data::new(100);
    let model = squared_model(&data);
    let file = dir.join("model.json");
    model.save(&file).unwrap();
    assert_eq!(Model::load(&file).unwrap(), model);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn numbers_in_rejection_messages_are_printed_as_numbers() {
    use optboost::Number;
    assert_eq!(Number(1e308).to_string(), "1e308");
    assert_eq!(Number(-2.5e-7).to_string(), "-2.5e-7");
    assert_eq!(Number(5e-324).to_string(), "5e-324");
    assert_eq!(Number(0.0001).to_string(), "0.0001");
    assert_eq!(Number(123456.5).to_string(), "123456.5");
    assert_eq!(Number(f64::INFINITY).to_string(), "inf");
    let data = Data::new(200);
    let model = squared_model(&data);
    let mut broken = model.clone();
    broken.bias[0] = 1e308;
    let mut messages = vec![load_error(&broken)];
    let mut broken = model.clone();
    broken.weights[0] = 1e300;
    messages.push(load_error(&broken));
    let mut broken = model.clone();
    broken.loss = LossSpec::Pinball { tau: 1e308 };
    messages.push(load_error(&broken));
    broken.loss = LossSpec::Tweedie { p: 1e-320 };
    messages.push(load_error(&broken));
    for e in &messages {
        let longest_digits = (e.split(|c: char| !c.is_ascii_digit()))
            .map(str::len)
            .max()
            .unwrap();
        assert!(longest_digits < 20, "{e}");
    }
    assert!(messages[0].contains("bias 0 = 1e308"), "{}", messages[0]);
    assert!(messages[1].contains("tree weight 1e300"), "{}", messages[1]);
    assert!(messages[2].contains("`tau` = 1e308"), "{}", messages[2]);
    assert!(messages[3].contains("tweedie(1e-320)"), "{}", messages[3]);
    // An exponential loss whose 2β overflows gave NaN probabilities at a score of 0 (found by
    // the fuzzer: the file of iteration 0).
    broken.loss = LossSpec::Exponential { beta: 1e308 };
    let e = load_error(&broken);
    assert!(
        e.contains("exponential(1e308)") && e.contains("beta"),
        "{e}"
    );
    // The loss's text still parses back to the same loss.
    let tiny = LossSpec::Logistic { ridge: 1e-7 };
    assert_eq!(tiny.to_string().parse::<LossSpec>().unwrap(), tiny);
}
