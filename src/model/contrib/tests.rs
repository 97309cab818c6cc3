use super::*;
use crate::data::{BinMapper, Feature};
use crate::loss::LossSpec;
use crate::model::{BuiltLoss, FeatureSpec};
use crate::params::Method;
use crate::tree::test_data::leaf;
use crate::tree::CategorySplit;

const N_LEVELS: u32 = 5;

struct Rng(u64);
impl Rng {
    fn uniform(&mut self) -> f64 {
        crate::rng::uniform(&mut self.0)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.uniform() * n as f64) as usize
    }
}

/// A random tree of depth ≤ `depth` on features whose kinds are `categorical[j]`, that may
/// test a feature several times on one path, with counts that add up.
fn random_tree(rng: &mut Rng, categorical: &[bool], depth: usize) -> Tree {
    fn grow(rng: &mut Rng, categorical: &[bool], tree: &mut Tree, node: usize, depth: usize) {
        let count = tree.nodes[node].count;
        if depth == 0 || count < 2 || rng.uniform() < 0.2 {
            return;
        }
        let feature = rng.below(categorical.len());
        let left_count = 1 + rng.below(count as usize - 1) as u32;
        let (left, right) = (tree.nodes.len(), tree.nodes.len() + 1);
        tree.nodes.push(leaf(rng.uniform() * 2.0 - 1.0, left_count));
        tree.nodes
            .push(leaf(rng.uniform() * 2.0 - 1.0, count - left_count));
        let n = &mut tree.nodes[node];
        n.feature = feature as u32;
        n.left = left as u32;
        n.right = right as u32;
        n.default_left = rng.uniform() < 0.5;
        n.gain = 1.0;
        if categorical[feature] {
            let codes = (0..N_LEVELS).filter(|_| rng.uniform() < 0.5);
            let bits = codes.fold(0u64, |bits, c| bits | 1 << c);
            n.category = Some(tree.categories.len() as u32);
            tree.categories.push(CategorySplit {
                left_bins: Default::default(),
                left_codes: vec![bits],
            });
        } else {
            n.threshold = rng.uniform();
        }
        grow(rng, categorical, tree, left, depth - 1);
        grow(rng, categorical, tree, right, depth - 1);
    }
    let mut tree = Tree {
        nodes: vec![leaf(0.0, 1000)],
        categories: Vec::new(),
    };
    grow(rng, categorical, &mut tree, 0, depth);
    tree
}

struct Case {
    model: Model,
    numeric: Vec<Vec<f64>>,
    codes: Vec<Vec<i32>>,
}

impl Case {
    fn new(seed: u64, n_outputs: usize, categorical: &[bool], n_rows: usize) -> Case {
        let mut rng = Rng(seed);
        let features = categorical
            .iter()
            .enumerate()
            .map(|(j, &c)| FeatureSpec {
                name: format!("x{j}"),
                mapper: if c {
                    BinMapper::Categorical {
                        level_bins: (1..=N_LEVELS as u8 + 1).collect(),
                        n_bins: N_LEVELS as usize + 2,
                    }
                } else {
                    BinMapper::Numeric { cuts: vec![0.5] }
                },
                target_stats: None,
                levels: None,
            })
            .collect();
        let mut model = Model {
            method: Method::Gbm,
            loss: LossSpec::Squared,
            n_outputs,
            bias: (0..n_outputs).map(|k| 0.25 * k as f64 - 0.1).collect(),
            trees: Vec::new(),
            weights: Vec::new(),
            tree_outputs: Vec::new(),
            features,
            best_iteration: None,
            iteration_trees: Vec::new(),
            iteration_weights: Vec::new(),
            built_loss: BuiltLoss::default(),
        };
        for t in 0..4 * n_outputs {
            let tree = random_tree(&mut rng, categorical, 4);
            // A weight of zero as well: such trees count for nothing.
            let weight = if t == 1 { 0.0 } else { 0.5 + rng.uniform() };
            model.push_tree(tree, weight, t % n_outputs);
        }
        let mut numeric = Vec::new();
        let mut codes = Vec::new();
        for &c in categorical {
            if c {
                // -1 is missing; N_LEVELS is a level the splits' bit sets do not mention.
                codes.push((0..n_rows).map(|_| rng.below(7) as i32 - 1).collect());
                numeric.push(Vec::new());
            } else {
                let mut draw = || {
                    let x = rng.uniform();
                    if rng.uniform() < 0.2 {
                        f64::NAN
                    } else {
                        x
                    }
                };
                numeric.push((0..n_rows).map(|_| draw()).collect());
                codes.push(Vec::new());
            }
        }
        Case {
            model,
            numeric,
            codes,
        }
    }

    fn frame(&self) -> Frame<'_> {
        let features = self
            .model
            .features
            .iter()
            .enumerate()
            .map(|(j, spec)| match spec.mapper {
                BinMapper::Categorical { .. } => {
                    Feature::categorical(spec.name.clone(), &self.codes[j], N_LEVELS + 1)
                }
                BinMapper::Numeric { .. } => Feature::numeric(spec.name.clone(), &self.numeric[j]),
            })
            .collect();
        Frame::new(features).unwrap()
    }
}

/// The tree's expected value given the features in `known` (a bit set): the row's
/// direction at their rules, the cover-weighted mean of both children at the others.
fn conditional_expectation(
    tree: &Tree,
    frame: &Frame<'_>,
    row: usize,
    known: u32,
    node: usize,
) -> f64 {
    let n = &tree.nodes[node];
    if n.is_leaf() {
        return n.value;
    }
    let (left, right) = (n.left as usize, n.right as usize);
    if known >> n.feature & 1 == 1 {
        let next = if tree.goes_left_raw(n, frame, row) {
            left
        } else {
            right
        };
        return conditional_expectation(tree, frame, row, known, next);
    }
    let (l, r) = (
        tree.nodes[left].count as f64,
        tree.nodes[right].count as f64,
    );
    (l * conditional_expectation(tree, frame, row, known, left)
        + r * conditional_expectation(tree, frame, row, known, right))
        / (l + r)
}

/// The model's output-k value of a set of known features.
fn value(model: &Model, frame: &Frame<'_>, row: usize, k: usize, known: u32) -> f64 {
    let mut v = model.bias[k];
    for ((tree, &w), &o) in model
        .trees
        .iter()
        .zip(&model.weights)
        .zip(&model.tree_outputs)
    {
        if o as usize == k {
            v += w * conditional_expectation(tree, frame, row, known, 0);
        }
    }
    v
}

fn factorial(n: usize) -> f64 {
    (1..=n).map(|i| i as f64).product()
}

/// Shapley values by enumerating every subset of the features (and the value of the empty
/// set as the bias).
fn brute_force_shap(model: &Model, frame: &Frame<'_>, row: usize, k: usize) -> Vec<f64> {
    let m = model.features.len();
    let mut phi = vec![0.0; m + 1];
    for i in 0..m {
        for s in 0u32..1 << m {
            if s >> i & 1 == 1 {
                continue;
            }
            let size = s.count_ones() as usize;
            let weight = factorial(size) * factorial(m - size - 1) / factorial(m);
            phi[i] +=
                weight * (value(model, frame, row, k, s | 1 << i) - value(model, frame, row, k, s));
        }
    }
    phi[m] = value(model, frame, row, k, 0);
    phi
}

/// Shapley interaction indices by enumeration; the diagonal is what the pairs leave of each
/// feature's Shapley value.
fn brute_force_interactions(model: &Model, frame: &Frame<'_>, row: usize, k: usize) -> Vec<f64> {
    let m = model.features.len();
    let w = m + 1;
    let v = |s: u32| value(model, frame, row, k, s);
    let mut matrix = vec![0.0; w * w];
    for i in 0..m {
        for j in (0..m).filter(|&j| j != i) {
            let mut total = 0.0;
            for s in 0u32..1 << m {
                if s >> i & 1 == 1 || s >> j & 1 == 1 {
                    continue;
                }
                let size = s.count_ones() as usize;
                let weight = factorial(size) * factorial(m - size - 2) / (2.0 * factorial(m - 1));
                total += weight * (v(s | 1 << i | 1 << j) - v(s | 1 << i) - v(s | 1 << j) + v(s));
            }
            matrix[i * w + j] = total;
        }
    }
    let phi = brute_force_shap(model, frame, row, k);
    for i in 0..m {
        let others: f64 = (0..m).filter(|&j| j != i).map(|j| matrix[i * w + j]).sum();
        matrix[i * w + i] = phi[i] - others;
    }
    matrix[w * w - 1] = phi[m];
    matrix
}

fn assert_close(got: &[f64], expected: &[f64], what: &str) {
    for (g, e) in got.iter().zip(expected) {
        assert!(
            (g - e).abs() <= 1e-9 * (1.0 + e.abs()),
            "{what}: {got:?} vs {expected:?}"
        );
    }
}

const KINDS: [&[bool]; 3] = [
    &[false, false, false, false, false],
    &[false, true, false, true],
    &[true, false, true, false, false, true],
];

#[test]
fn contributions_equal_brute_force_shapley_values_and_sum_to_the_score() {
    for (seed, categorical) in KINDS.iter().enumerate() {
        for n_outputs in [1, 3] {
            let case = Case::new(seed as u64 + 1, n_outputs, categorical, 40);
            let frame = case.frame();
            let model = &case.model;
            let contrib = model.predict_contrib(&frame).unwrap();
            let scores = model.predict(&frame).unwrap();
            let w = model.features.len() + 1;
            for row in 0..frame.n_rows() {
                for k in 0..n_outputs {
                    let block = &contrib[(row * n_outputs + k) * w..][..w];
                    let expected = brute_force_shap(model, &frame, row, k);
                    assert_close(block, &expected, "contributions");
                    let sum: f64 = block.iter().sum();
                    let score = scores[row * n_outputs + k];
                    assert!((sum - score).abs() <= 1e-9 * (1.0 + score.abs()));
                }
            }
        }
    }
}

#[test]
fn interaction_values_equal_brute_force_shapley_interaction_indices() {
    for (seed, categorical) in KINDS.iter().enumerate() {
        let n_outputs = 1 + seed % 2;
        let case = Case::new(seed as u64 + 10, n_outputs, categorical, 15);
        let frame = case.frame();
        let model = &case.model;
        let interactions = model.predict_interactions(&frame).unwrap();
        let contrib = model.predict_contrib(&frame).unwrap();
        let w = model.features.len() + 1;
        for row in 0..frame.n_rows() {
            for k in 0..n_outputs {
                let matrix = &interactions[(row * n_outputs + k) * w * w..][..w * w];
                assert_close(
                    matrix,
                    &brute_force_interactions(model, &frame, row, k),
                    "interactions",
                );
                let phi = &contrib[(row * n_outputs + k) * w..][..w];
                let row_sums: Vec<f64> = matrix.chunks(w).map(|r| r.iter().sum()).collect();
                assert_close(&row_sums, phi, "interaction rows sum to contributions");
            }
        }
    }
}

#[test]
fn contributions_at_an_iteration_sum_to_that_iterations_score() {
    for n_outputs in [1, 3] {
        let case = Case::new(21, n_outputs, KINDS[2], 40);
        let mut model = case.model.clone();
        // One tree per output and iteration; the momentum form (rewritten weights) too.
        model.iteration_trees = (1..=4).map(|i| i * n_outputs).collect();
        let frame = case.frame();
        let w = model.features.len() + 1;
        for momentum in [false, true] {
            if momentum {
                model.iteration_weights = (1..=4)
                    .map(|i| model.weights.iter().map(|v| v * i as f64 / 4.0).collect())
                    .collect();
            }
            for k in 0..=4 {
                let contrib = model.predict_contrib_iteration(&frame, k).unwrap();
                let scores = model.predict_iteration(&frame, k).unwrap();
                for (block, score) in contrib.chunks(w).zip(&scores) {
                    let sum: f64 = block.iter().sum();
                    assert!((sum - score).abs() <= 1e-9 * (1.0 + score.abs()));
                }
                let interactions = model.predict_interactions_iteration(&frame, k).unwrap();
                for (matrix, phi) in interactions.chunks(w * w).zip(contrib.chunks(w)) {
                    let row_sums: Vec<f64> = matrix.chunks(w).map(|r| r.iter().sum()).collect();
                    assert_close(&row_sums, phi, "interactions at an iteration");
                }
            }
            assert!(model.predict_contrib_iteration(&frame, 5).is_err());
        }
        assert_eq!(
            model.predict_contrib_iteration(&frame, 4).unwrap(),
            model.predict_contrib(&frame).unwrap()
        );
    }
}

#[test]
fn leaf_tables_equal_the_recursive_walk_on_deep_trees() {
    let categorical = [false, true, false, false, true, false, false, false];
    let case = Case::new(5, 1, &categorical, 50);
    let frame = case.frame();
    let numeric: Vec<Strided<'_>> = frame
        .features()
        .iter()
        .map(|f| f.values.numeric().unwrap_or_default())
        .collect();
    let mut rng = Rng(99);
    for _ in 0..6 {
        let tree = random_tree(&mut rng, &categorical, 9);
        let shap_tree = ShapTree::new(&tree, 0.7, 0);
        let tables = LeafTables::new(&shap_tree).expect("a depth-9 tree has tables");
        let mut path = vec![PathElement::default(); path_len(shap_tree.depth)];
        let mut masks = vec![0; tree.nodes.len()];
        for row in 0..frame.n_rows() {
            let (mut walked, mut tabled) = (vec![0.0; 8], vec![0.0; 8]);
            shap_tree.shap(&frame, row, &mut walked, &mut path, Condition::None);
            tables.add(&tree, &frame, &numeric, row, &mut tabled, &mut masks);
            assert_close(&tabled, &walked, "tables against the walk");
        }
    }
}

#[test]
fn a_feature_no_rule_tests_gets_exactly_zero() {
    let case = Case::new(7, 2, &[false, false, true, false], 30);
    let mut model = case.model.clone();
    // Feature 3 leaves every tree: its rules become leaves' parents on feature 0.
    for tree in &mut model.trees {
        for node in tree
            .nodes
            .iter_mut()
            .filter(|n| !n.is_leaf() && n.feature == 3)
        {
            node.feature = 0;
        }
    }
    let contrib = model.predict_contrib(&case.frame()).unwrap();
    let w = model.features.len() + 1;
    assert!(contrib.chunks(w).all(|block| block[3] == 0.0));
}

#[test]
fn contributions_do_not_depend_on_the_thread_count() {
    let case = Case::new(3, 2, KINDS[1], 3 * BLOCK_ROWS + 17);
    let frame = case.frame();
    let many = case.model.predict_contrib(&frame).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let one = pool.install(|| case.model.predict_contrib(&frame).unwrap());
    assert_eq!(many, one);
}
