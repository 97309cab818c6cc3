use super::*;
use crate::data::{BinnedData, BinningParams, Feature, Frame};
use crate::rng::uniform;
use crate::threads;
use crate::tree::tree_params::MAX_OBLIVIOUS_DEPTH;
use crate::tree::{grow, grow_with_options, Constraints, FitStats, Growth, Tree, TreeKind};

/// Columns: three numeric of few distinct values (the second with missing values) and one
/// categorical of 6 levels (some missing); a target with interactions; weights in [0.5, 1.5).
fn case(seed: u64, n: usize) -> (Vec<Vec<f64>>, Vec<i32>, Vec<f64>, Vec<f64>) {
    let mut state = seed;
    let mut columns = vec![Vec::new(); 3];
    let (mut codes, mut vt, mut v) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..n {
        let x: Vec<f64> = (0..3)
            .map(|_| (uniform(&mut state) * 12.0).floor())
            .collect();
        let code = (uniform(&mut state) * 7.0) as i32 - 1;
        let noise = uniform(&mut state) - 0.5;
        let y = x[0] * (x[1] > 5.0) as u8 as f64 - 0.5 * x[2] + 2.0 * f64::from(code % 3) + noise;
        let w = 0.5 + uniform(&mut state);
        for (j, value) in x.into_iter().enumerate() {
            let missing = j == 1 && uniform(&mut state) < 0.15;
            columns[j].push(if missing { f64::NAN } else { value });
        }
        codes.push(code);
        vt.push(w * y);
        v.push(w);
    }
    (columns, codes, vt, v)
}

fn binned(columns: &[Vec<f64>], codes: &[i32]) -> BinnedData {
    let mut features: Vec<Feature<'_>> = (columns.iter().enumerate())
        .map(|(j, c)| Feature::numeric(format!("x{j}"), c))
        .collect();
    features.push(Feature::categorical("c", codes, 6));
    BinnedData::learn(&Frame::new(features).unwrap(), &BinningParams::default()).unwrap()
}

/// Each node's depth, and the nodes each row passes through.
fn depths(tree: &Tree) -> Vec<usize> {
    let mut depth = vec![0; tree.nodes.len()];
    for (i, node) in tree.nodes.iter().enumerate() {
        if !node.is_leaf() {
            depth[node.left as usize] = depth[i] + 1;
            depth[node.right as usize] = depth[i] + 1;
        }
    }
    depth
}

fn goes_left(tree: &Tree, node: usize, bin: u8) -> bool {
    let n = &tree.nodes[node];
    match n.category {
        Some(c) => tree.categories[c as usize].left_bins.contains(bin),
        None if bin == 0 => n.default_left,
        None => bin <= n.bin,
    }
}

fn rows_of_nodes(tree: &Tree, data: &BinnedData) -> Vec<Vec<usize>> {
    let mut rows = vec![Vec::new(); tree.nodes.len()];
    for row in 0..data.n_rows() {
        let mut i = 0;
        loop {
            rows[i].push(row);
            let n = &tree.nodes[i];
            if n.is_leaf() {
                break;
            }
            let bin = data.column(n.feature as usize).get(row);
            i = if goes_left(tree, i, bin) {
                n.left
            } else {
                n.right
            } as usize;
        }
    }
    rows
}

/// The gain summed over `nodes` of sending the rows whose bin of `feature` is in `left` left,
/// counted at each node where both children are admissible: computed from the rows, naively.
fn naive_level_gain(
    nodes: &[&Vec<usize>],
    data: &BinnedData,
    (vt, v): (&[f64], &[f64]),
    params: &TreeParams,
    feature: usize,
    left: impl Fn(u8) -> bool,
) -> f64 {
    let l2 = params.l2_leaf;
    let m = params.min_samples_leaf.unwrap().max(1);
    let score = |g: f64, h: f64| g * g / (h + l2);
    let mut sum = 0.0;
    for rows in nodes {
        let (mut gl, mut hl, mut nl, mut g, mut h) = (0.0, 0.0, 0, 0.0, 0.0);
        for &r in rows.iter() {
            g += vt[r];
            h += v[r];
            if left(data.column(feature).get(r)) {
                gl += vt[r];
                hl += v[r];
                nl += 1;
            }
        }
        let nr = rows.len() - nl;
        let admissible =
            nl >= m && nr >= m && hl >= params.min_weight_leaf && h - hl >= params.min_weight_leaf;
        if admissible {
            sum += score(gl, hl) + score(g - gl, h - hl) - score(g, h);
        }
    }
    sum
}

#[test]
fn each_level_takes_the_rule_of_largest_summed_gain_and_every_split_of_it_shares_that_rule() {
    for (seed, min_samples_leaf, l2_leaf) in [(1, 1, 0.0), (2, 20, 1.0), (3, 5, 3.0)] {
        let (columns, codes, vt, v) = case(seed, 400);
        let data = binned(&columns, &codes);
        let params = TreeParams {
            max_depth: 5,
            min_samples_leaf: Some(min_samples_leaf),
            l2_leaf,
            tree: TreeKind::Oblivious,
            ..TreeParams::default()
        };
        let grown = grow(
            &data,
            FitStats { vt: &vt, v: &v },
            &params,
            &Candidates::All,
        );
        let tree = &grown.tree;
        let depth = depths(tree);
        let rows = rows_of_nodes(tree, &data);
        let tree_depth = tree.depth();
        assert!(tree_depth >= 3, "seed {seed}: depth {tree_depth}");
        for d in 0..=tree_depth.min(params.max_depth - 1) {
            let case = format!("seed {seed}, level {d}");
            let level: Vec<usize> = (0..tree.nodes.len()).filter(|&i| depth[i] == d).collect();
            let level_rows: Vec<&Vec<usize>> = level.iter().map(|&i| &rows[i]).collect();
            // The best numeric rule, by brute force over every threshold and missing side.
            let mut best_numeric = f64::NEG_INFINITY;
            for feature in 0..3 {
                let last = data.mappers()[feature].n_bins() - 1;
                for k in 1..=last {
                    for missing_left in [false, true] {
                        let left = |b: u8| {
                            if b == 0 {
                                missing_left
                            } else {
                                b as usize <= k
                            }
                        };
                        let sums = (&vt[..], &v[..]);
                        let gain =
                            naive_level_gain(&level_rows, &data, sums, &params, feature, left);
                        best_numeric = best_numeric.max(gain);
                    }
                }
            }
            let splits: Vec<usize> = (level.iter().copied())
                .filter(|&i| !tree.nodes[i].is_leaf())
                .collect();
            let Some(&first) = splits.first() else {
                // Growth stopped here: no numeric rule gains (the categorical prefixes are the
                // search's own candidates, checked where one is chosen).
                assert!(best_numeric <= 1e-9 * (1.0 + best_numeric.abs()), "{case}");
                continue;
            };
            let rule = |i: usize| {
                let n = &tree.nodes[i];
                let set = n.category.map(|c| tree.categories[c as usize].clone());
                (n.feature, n.bin, n.default_left, set)
            };
            for &i in &splits {
                assert_eq!(rule(i), rule(first), "{case}: node {i}");
            }
            // The nodes the rule left unsplit cannot take it: a child would be too small.
            let feature = tree.nodes[first].feature as usize;
            let chosen = naive_level_gain(&level_rows, &data, (&vt, &v), &params, feature, |b| {
                goes_left(tree, first, b)
            });
            let stored: f64 = splits.iter().map(|&i| tree.nodes[i].gain).sum();
            for &i in level.iter().filter(|i| !splits.contains(i)) {
                let alone =
                    naive_level_gain(&[&rows[i]], &data, (&vt, &v), &params, feature, |b| {
                        goes_left(tree, first, b)
                    });
                assert_eq!(alone, 0.0, "{case}: node {i} stayed a leaf");
            }
            let tol = 1e-9 * (1.0 + chosen.abs());
            assert!(
                (stored - chosen).abs() <= tol,
                "{case}: {stored} vs {chosen}"
            );
            assert!(
                chosen >= best_numeric - tol,
                "{case}: {chosen} < {best_numeric}"
            );
            if !data.is_categorical(feature) {
                assert!((chosen - best_numeric).abs() <= tol, "{case}");
            }
        }
    }
}

#[test]
fn a_categorical_rule_is_the_best_subset_of_levels_where_the_category_explains_the_target() {
    let n = 600;
    let mut state = 9;
    let numbers: Vec<f64> = (0..n).map(|_| uniform(&mut state)).collect();
    let codes: Vec<i32> = (0..n).map(|i| (i % 6) as i32).collect();
    let means = [3.0, -1.0, 0.0, 5.0, -4.0, 1.0];
    let vt: Vec<f64> = codes.iter().map(|&c| means[c as usize]).collect();
    let v = vec![1.0; n];
    let data = binned(&[numbers.clone(), numbers.clone(), numbers], &codes);
    let params = TreeParams {
        max_depth: 3,
        min_samples_leaf: Some(10),
        tree: TreeKind::Oblivious,
        l2_leaf: 0.0,
        ..TreeParams::default()
    };
    let grown = grow(
        &data,
        FitStats { vt: &vt, v: &v },
        &params,
        &Candidates::All,
    );
    let tree = &grown.tree;
    assert_eq!(tree.nodes[0].feature, 3);
    // At the root (one node), the best of every subset of the 6 levels, by brute force.
    let all: Vec<usize> = (0..n).collect();
    let root = [&all];
    let mut best = f64::NEG_INFINITY;
    for subset in 1u32..(1 << 6) - 1 {
        let left = |b: u8| b > 0 && subset >> (b - 1) & 1 == 1;
        best = best.max(naive_level_gain(&root, &data, (&vt, &v), &params, 3, left));
    }
    let chosen = naive_level_gain(&root, &data, (&vt, &v), &params, 3, |b| {
        goes_left(tree, 0, b)
    });
    assert!((chosen - best).abs() <= 1e-9 * best, "{chosen} vs {best}");
}

#[test]
fn the_same_tree_whatever_the_thread_count_and_with_every_option() {
    let (columns, codes, vt, v) = case(5, 3_000);
    let data = binned(&columns, &codes);
    let params = TreeParams {
        max_depth: 6,
        min_samples_leaf: Some(3),
        tree: TreeKind::Oblivious,
        ..TreeParams::default()
    };
    let constraints = Constraints {
        monotone: vec![1, 0, -1, 0],
        interactions: Vec::new(),
    };
    let rows: Vec<u32> = (0..3_000).filter(|r| r % 3 != 0).collect();
    let options = GrowOptions {
        rows: Some(&rows),
        colsample_bynode: 0.75,
        node_seed: 17,
        constraints: Some(&constraints),
        ..GrowOptions::default()
    };
    let fit = |n_threads: usize| {
        threads::own_pool(n_threads).unwrap().install(|| {
            grow_with_options(
                &data,
                FitStats { vt: &vt, v: &v },
                &params,
                &Candidates::All,
                &mut GrowBuffers::default(),
                &options,
            )
        })
    };
    let one = fit(1);
    assert!(one.tree.depth() >= 3);
    for n_threads in [2, 4] {
        let other = fit(n_threads);
        assert_eq!(one.tree, other.tree, "{n_threads} threads");
        assert_eq!(one.leaf_values(), other.leaf_values());
    }
}

#[test]
fn a_level_stops_before_exceeding_max_leaves_and_the_parameters_are_checked() {
    let (columns, codes, vt, v) = case(7, 500);
    let data = binned(&columns, &codes);
    let params = TreeParams {
        max_depth: 6,
        max_leaves: 7,
        min_samples_leaf: Some(1),
        tree: TreeKind::Oblivious,
        ..TreeParams::default()
    };
    let grown = grow(
        &data,
        FitStats { vt: &vt, v: &v },
        &params,
        &Candidates::All,
    );
    assert!(grown.tree.n_leaves() <= 7 && grown.tree.depth() == 2);
    let deep = TreeParams {
        max_depth: MAX_OBLIVIOUS_DEPTH + 1,
        ..params
    };
    assert!(deep
        .validate()
        .unwrap_err()
        .to_string()
        .contains("max_depth"));
    let leafwise = TreeParams {
        growth: Growth::Leafwise,
        ..params
    };
    assert!(leafwise
        .validate()
        .unwrap_err()
        .to_string()
        .contains("growth"));
    assert!("symmetric".parse::<TreeKind>().is_err());
}

#[test]
fn prediction_takes_the_leaf_table_of_oblivious_trees_only_and_predicts_as_the_walk() {
    use crate::tree::Predictor;
    let (columns, codes, vt, v) = case(11, 800);
    let data = binned(&columns, &codes);
    let numeric = [true, true, true, false];
    for tree in [TreeKind::Oblivious, TreeKind::Ordinary] {
        let params = TreeParams {
            max_depth: 4,
            min_samples_leaf: Some(5),
            tree,
            ..TreeParams::default()
        };
        let grown = grow(
            &data,
            FitStats { vt: &vt, v: &v },
            &params,
            &Candidates::All,
        );
        assert_eq!(grown.tree.depth(), 4, "{tree:?}");
        let predictor = Predictor::new(&grown.tree, &numeric);
        let by_table = matches!(predictor, Predictor::Oblivious(_));
        assert_eq!(by_table, tree == TreeKind::Oblivious);
        let (mut table, mut walk) = (vec![-0.0; 800], vec![-0.0; 800]);
        predictor.add_binned(data.matrix(), 0, 1.0, &mut table);
        Predictor::walking(&grown.tree, &numeric).add_binned(data.matrix(), 0, 1.0, &mut walk);
        for row in 0..800 {
            let leaf = grown.tree.leaf_of_bins(data.matrix().row(row));
            assert_eq!(walk[row].to_bits(), grown.tree.nodes[leaf].value.to_bits());
            assert_eq!(
                table[row].to_bits(),
                walk[row].to_bits(),
                "{tree:?} row {row}"
            );
        }
    }
}
