//! The histogram-tree engine through its public API: split search against brute force,
//! histogram subtraction, thread-count independence, exact fits, missing values, categorical
//! splits, and errors that name the problem.

mod common;

use optboost::learner::{
    best_split, grow, BinStats, BinnedData, BinnedMatrix, Candidates, FitStats, Histogram,
    SplitParams,
};
use optboost::{
    BinningParams, Booster, Error, Feature, Frame, Growth, Model, Params, TrainData, Tree,
    TreeParams,
};

use common::TestRng as Rng;

fn score(g: f64, h: f64, l2: f64) -> f64 {
    g * g / (h + l2)
}

fn close(a: f64, b: f64, scale: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * scale.max(f64::MIN_POSITIVE)
}

/// Direct sums of (Σvt, Σv, count) over the rows where `left(row)` holds.
fn side_stats(vt: &[f64], v: &[f64], left: impl Fn(usize) -> bool) -> (BinStats, BinStats) {
    let (mut l, mut r) = (BinStats::default(), BinStats::default());
    for i in 0..vt.len() {
        let s = if left(i) { &mut l } else { &mut r };
        s.sum_vt += vt[i];
        s.sum_v += v[i];
        s.count += 1;
    }
    (l, r)
}

fn admissible(s: &BinStats, p: &SplitParams) -> bool {
    s.count as usize >= p.min_samples_leaf.max(1)
        && s.sum_v >= p.min_weight_leaf
        && s.sum_v + p.l2_leaf > 0.0
}

fn brute_gain(vt: &[f64], v: &[f64], p: &SplitParams, left: impl Fn(usize) -> bool) -> Option<f64> {
    let (l, r) = side_stats(vt, v, left);
    if !(admissible(&l, p) && admissible(&r, p)) {
        return None;
    }
    let gain = score(l.sum_vt, l.sum_v, p.l2_leaf) + score(r.sum_vt, r.sum_v, p.l2_leaf)
        - score(l.sum_vt + r.sum_vt, l.sum_v + r.sum_v, p.l2_leaf);
    (gain > p.min_split_gain && gain > 0.0).then_some(gain)
}

fn totals(vt: &[f64], v: &[f64]) -> BinStats {
    side_stats(vt, v, |_| true).0
}

fn all_rows(n: usize) -> Vec<u32> {
    (0..n as u32).collect()
}

/// Random fitting statistics: any target, positive weights.
fn random_stats(rng: &mut Rng, n: usize) -> (Vec<f64>, Vec<f64>) {
    let v: Vec<f64> = (0..n).map(|_| 0.1 + rng.uniform()).collect();
    let vt: Vec<f64> = (0..n).map(|i| v[i] * (4.0 * rng.uniform() - 2.0)).collect();
    (vt, v)
}

#[test]
fn numeric_split_search_equals_brute_force() {
    let mut rng = Rng::new(1);
    for trial in 0..200 {
        let n = 20 + rng.below(60);
        // Few distinct values per feature (so one bin each), and missing values in some trials.
        let columns: Vec<Vec<f64>> = (0..3)
            .map(|j| {
                let levels = 2 + rng.below(9);
                let missing = if (trial + j) % 3 == 0 {
                    0.0
                } else {
                    0.25 * rng.uniform()
                };
                (0..n)
                    .map(|_| {
                        if rng.uniform() < missing {
                            f64::NAN
                        } else {
                            rng.below(levels) as f64 * 0.5 - 1.0
                        }
                    })
                    .collect()
            })
            .collect();
        let (vt, v) = random_stats(&mut rng, n);
        let params = SplitParams {
            l2_leaf: [0.0, 0.7][trial % 2],
            min_samples_leaf: 1 + trial % 4,
            min_weight_leaf: 1e-3,
            min_split_gain: 0.0,
            categorical: optboost::CategoricalParams::unguarded(),
            noise: None,
        };
        let frame = common::numeric_frame(&columns);
        let data = BinnedData::learn(&frame, &BinningParams::default()).unwrap();
        let hist = Histogram::build(&data, &all_rows(n), &vt, &v);
        let found = best_split(&hist, &data, totals(&vt, &v), &params, &Candidates::All);

        // Brute force: every threshold between distinct values (and "every value left"), missing
        // values on either side.
        let mut best: Option<(f64, usize)> = None;
        for (j, x) in columns.iter().enumerate() {
            let mut distinct: Vec<f64> = x.iter().copied().filter(|v| !v.is_nan()).collect();
            distinct.sort_by(f64::total_cmp);
            distinct.dedup();
            for &cut in &distinct {
                for missing_left in [false, true] {
                    let left = |i: usize| {
                        if x[i].is_nan() {
                            missing_left
                        } else {
                            x[i] <= cut
                        }
                    };
                    if let Some(g) = brute_gain(&vt, &v, &params, left) {
                        if best.is_none_or(|(b, _)| g > b) {
                            best = Some((g, j));
                        }
                    }
                }
            }
        }
        match (found, best) {
            (None, None) => {}
            (Some(s), Some((g, _))) => {
                assert!(
                    close(s.gain, g, g, 1e-9),
                    "trial {trial}: engine gain {} vs brute force {g}",
                    s.gain
                );
                // The chosen rule, applied to the raw rows, achieves the reported gain and stats.
                let x = &columns[s.feature];
                let bin_of = |i: usize| data.matrix().get(i, s.feature);
                let recomputed =
                    brute_gain(&vt, &v, &params, |i| s.left_bins.contains(bin_of(i))).unwrap();
                assert!(close(recomputed, s.gain, g, 1e-9), "trial {trial}");
                let (l, _) = side_stats(&vt, &v, |i| s.left_bins.contains(bin_of(i)));
                assert_eq!(l.count, s.left.count, "trial {trial}");
                // The raw rule sends the rows the same way as the bin rule.
                let t = s.threshold.expect("numeric split") as usize;
                for i in 0..n {
                    let raw_left = if x[i].is_nan() {
                        s.default_left()
                    } else {
                        bin_of(i) as usize <= t
                    };
                    assert_eq!(
                        raw_left,
                        s.left_bins.contains(bin_of(i)),
                        "trial {trial} row {i}"
                    );
                }
            }
            (found, best) => panic!("trial {trial}: engine {found:?}, brute force {best:?}"),
        }
    }
}

#[test]
fn categorical_split_search_equals_brute_force_over_subsets() {
    let mut rng = Rng::new(2);
    let binning = BinningParams {
        max_bins: 255,
        min_category_count: 1,
    };
    for trial in 0..200 {
        let n = 20 + rng.below(60);
        let n_levels = 2 + rng.below(5) as u32; // up to 6 levels: 2^6 subsets
        let missing = if trial % 2 == 0 { 0.0 } else { 0.2 };
        let codes: Vec<i32> = (0..n)
            .map(|_| {
                if rng.uniform() < missing {
                    -1
                } else {
                    rng.below(n_levels as usize) as i32
                }
            })
            .collect();
        let (vt, v) = random_stats(&mut rng, n);
        // Ordering levels by mean target is exact for unpenalised least squares.
        let params = SplitParams {
            l2_leaf: 0.0,
            min_samples_leaf: 1,
            min_weight_leaf: 1e-3,
            min_split_gain: 0.0,
            categorical: optboost::CategoricalParams::unguarded(),
            noise: None,
        };
        let frame = Frame::new(vec![Feature::categorical("c", &codes, n_levels)]).unwrap();
        let data = BinnedData::learn(&frame, &binning).unwrap();
        let hist = Histogram::build(&data, &all_rows(n), &vt, &v);
        let found = best_split(&hist, &data, totals(&vt, &v), &params, &Candidates::All);

        let mut best: Option<f64> = None;
        for subset in 0u32..(1 << n_levels) {
            for missing_left in [false, true] {
                let left = |i: usize| {
                    if codes[i] < 0 {
                        missing_left
                    } else {
                        subset >> codes[i] & 1 == 1
                    }
                };
                if let Some(g) = brute_gain(&vt, &v, &params, left) {
                    best = Some(best.map_or(g, |b: f64| b.max(g)));
                }
            }
        }
        match (found, best) {
            (None, None) => {}
            (Some(s), Some(g)) => {
                assert!(s.threshold.is_none());
                assert!(
                    close(s.gain, g, g, 1e-9),
                    "trial {trial}: engine gain {} vs brute force {g}",
                    s.gain
                );
                let recomputed = brute_gain(&vt, &v, &params, |i| {
                    s.left_bins.contains(data.matrix().get(i, 0))
                })
                .unwrap();
                assert!(close(recomputed, g, g, 1e-9), "trial {trial}");
            }
            (found, best) => panic!("trial {trial}: engine {found:?}, brute force {best:?}"),
        }
    }
}

/// Row lists of every node of a grown tree: a node's rows are the union of its leaves' rows.
fn node_rows(tree: &Tree, grown_rows: &[u32], leaves: &[(usize, usize, usize)]) -> Vec<Vec<u32>> {
    fn collect(
        tree: &Tree,
        node: usize,
        rows: &[u32],
        leaves: &[(usize, usize, usize)],
        out: &mut Vec<Vec<u32>>,
    ) {
        let n = &tree.nodes[node];
        if n.is_leaf() {
            let &(_, s, e) = leaves.iter().find(|l| l.0 == node).expect("leaf listed");
            out[node] = rows[s..e].to_vec();
        } else {
            collect(tree, n.left as usize, rows, leaves, out);
            collect(tree, n.right as usize, rows, leaves, out);
            let mut rows = [out[n.left as usize].clone(), out[n.right as usize].clone()].concat();
            rows.sort_unstable(); // a node's rows, as the histogram wants them
            out[node] = rows;
        }
    }
    let mut out = vec![Vec::new(); tree.nodes.len()];
    collect(tree, 0, grown_rows, leaves, &mut out);
    out
}

fn mixed_frame_columns(rng: &mut Rng, n: usize) -> (Vec<Vec<f64>>, Vec<i32>) {
    let numeric = (0..4)
        .map(|j| {
            (0..n)
                .map(|_| {
                    if j == 1 && rng.uniform() < 0.1 {
                        f64::NAN
                    } else if j == 2 {
                        rng.below(7) as f64
                    } else {
                        rng.uniform() * 10.0 - 5.0
                    }
                })
                .collect()
        })
        .collect();
    let codes = (0..n)
        .map(|_| {
            if rng.uniform() < 0.05 {
                -1
            } else {
                rng.below(8) as i32
            }
        })
        .collect();
    (numeric, codes)
}

#[test]
fn histogram_subtraction_equals_direct_construction() {
    let mut rng = Rng::new(3);
    let n = 30_000; // several histogram blocks at the root
    let (numeric, codes) = mixed_frame_columns(&mut rng, n);
    let frame = common::mixed_frame(&numeric, &codes, 8);
    let data = BinnedData::learn(
        &frame,
        &BinningParams {
            max_bins: 64,
            min_category_count: 1,
        },
    )
    .unwrap();
    let (vt, v) = random_stats(&mut rng, n);
    // A target with structure, so that the tree is deep and unbalanced.
    let vt: Vec<f64> = (0..n)
        .map(|i| vt[i] + v[i] * (numeric[0][i] * numeric[3][i]).sin() * 3.0)
        .collect();
    for growth in [Growth::Depthwise, Growth::Leafwise] {
        let params = TreeParams {
            max_depth: 6,
            max_leaves: 40,
            l2_leaf: 0.5,
            growth,
            ..least_squares()
        };
        let grown = grow(
            &data,
            FitStats { vt: &vt, v: &v },
            &params,
            &Candidates::All,
        );
        assert!(grown.tree.n_leaves() > 10);
        let leaves: Vec<_> = grown
            .leaves()
            .iter()
            .map(|l| (l.node, l.start, l.end))
            .collect();
        let rows = node_rows(&grown.tree, grown.rows(), &leaves);
        let hists: Vec<Histogram> = rows
            .iter()
            .map(|r| Histogram::build(&data, r, &vt, &v))
            .collect();
        let abs_vt: Vec<f64> = vt.iter().map(|x| x.abs()).collect();
        let abs_hists: Vec<Histogram> = rows
            .iter()
            .map(|r| Histogram::build(&data, r, &abs_vt, &v))
            .collect();
        let mut checked = 0;
        for (id, node) in grown.tree.nodes.iter().enumerate() {
            // The node's value and count come from histogram sums (subtracted for one child).
            let direct = totals(
                &rows[id].iter().map(|&r| vt[r as usize]).collect::<Vec<_>>(),
                &rows[id].iter().map(|&r| v[r as usize]).collect::<Vec<_>>(),
            );
            assert_eq!(node.count, direct.count);
            let value = direct.sum_vt / (direct.sum_v + 0.5);
            assert!(
                close(node.value, value, value.abs().max(1.0), 1e-12),
                "node {id}: {} vs {value}",
                node.value
            );
            if node.is_leaf() {
                continue;
            }
            let (l, r) = (node.left as usize, node.right as usize);
            // parent = left + right, and parent − smaller = larger, bin by bin.
            let (small, large) = if rows[l].len() <= rows[r].len() {
                (l, r)
            } else {
                (r, l)
            };
            let mut subtracted = hists[id].clone();
            subtracted.subtract(&hists[small]);
            for b in 0..data.total_bins() {
                let (p, a, c) = (hists[id].bins[b], hists[l].bins[b], hists[r].bins[b]);
                let scale_vt = abs_hists[id].bins[b].sum_vt;
                assert_eq!(p.count, a.count + c.count, "node {id} bin {b}");
                assert!(
                    close(p.sum_vt, a.sum_vt + c.sum_vt, scale_vt, 1e-12),
                    "node {id} bin {b}"
                );
                assert!(
                    close(p.sum_v, a.sum_v + c.sum_v, p.sum_v, 1e-12),
                    "node {id} bin {b}"
                );
                let (s, d) = (subtracted.bins[b], hists[large].bins[b]);
                assert_eq!(s.count, d.count, "node {id} bin {b}");
                assert!(
                    close(s.sum_vt, d.sum_vt, scale_vt, 1e-12),
                    "node {id} bin {b}: {} vs {}",
                    s.sum_vt,
                    d.sum_vt
                );
                assert!(close(s.sum_v, d.sum_v, p.sum_v, 1e-12), "node {id} bin {b}");
            }
            checked += 1;
        }
        assert!(checked >= 10);
    }
}

#[test]
fn a_tree_restricted_to_some_features_is_the_tree_of_those_columns() {
    // Histograms are built for the allowed features only: the tree must be the one grown on a
    // frame holding just those columns, node for node.
    let mut rng = Rng::new(11);
    let n = 40_000;
    let (numeric, codes) = mixed_frame_columns(&mut rng, n);
    let frame = common::mixed_frame(&numeric, &codes, 8);
    let params = BinningParams {
        max_bins: 64,
        min_category_count: 1,
    };
    let data = BinnedData::learn(&frame, &params).unwrap();
    let (vt, v) = random_stats(&mut rng, n);
    let vt: Vec<f64> = (0..n)
        .map(|i| vt[i] + v[i] * (numeric[0][i] * numeric[3][i]).sin() * 3.0)
        .collect();
    // 1 of 5 features takes the column kernel, 3 and 4 the row one restricted to them (all 5
    // is the full pass of every other test).
    for kept in [vec![0], vec![1, 3, 4], vec![0, 2, 3, 4]] {
        let mut allowed = vec![false; 5];
        kept.iter().for_each(|&f| allowed[f] = true);
        let sub_frame =
            Frame::new(kept.iter().map(|&f| frame.features()[f].clone()).collect()).unwrap();
        let sub_data = BinnedData::learn(&sub_frame, &params).unwrap();
        for growth in [Growth::Depthwise, Growth::Leafwise] {
            let tree_params = TreeParams {
                max_depth: 6,
                max_leaves: 40,
                growth,
                ..least_squares()
            };
            let stats = FitStats { vt: &vt, v: &v };
            let restricted = grow(
                &data,
                stats,
                &tree_params,
                &Candidates::Features(allowed.clone()),
            );
            let reference = grow(&sub_data, stats, &tree_params, &Candidates::All);
            assert!(reference.tree.n_leaves() > 10);
            assert_eq!(restricted.rows(), reference.rows());
            assert_eq!(restricted.tree.nodes.len(), reference.tree.nodes.len());
            for (a, b) in restricted.tree.nodes.iter().zip(&reference.tree.nodes) {
                let mut mapped = b.clone();
                if !b.is_leaf() {
                    mapped.feature = kept[b.feature as usize] as u32;
                }
                assert_eq!(*a, mapped, "kept {kept:?}, {growth:?}");
            }
        }
    }
}

#[test]
fn same_model_with_one_and_two_threads() {
    let mut rng = Rng::new(4);
    let n = 70_000; // > 65 536: several histogram blocks and parallel partitions
    let (numeric, codes) = mixed_frame_columns(&mut rng, n);
    let y: Vec<f64> = (0..n)
        .map(|i| {
            (numeric[0][i] * 0.7).sin()
                + if codes[i] % 3 == 0 { 1.0 } else { 0.0 }
                + 0.3 * rng.uniform()
        })
        .collect();
    let w: Vec<f64> = (0..n).map(|_| 0.5 + rng.uniform()).collect();
    // Unit weights take the kernel's one-statistic path, sample weights the general one.
    // rgbm with t = 1 builds the histograms of one feature only, column by column.
    let fit = |threads: usize, growth: &str, weights: Option<&[f64]>, method: &str| {
        let frame = common::mixed_frame(&numeric, &codes, 8);
        let mut params = Params::default();
        params
            .set("n_iter", "4")
            .unwrap()
            .set("max_depth", "5")
            .unwrap()
            .set("growth", growth)
            .unwrap()
            .set("method", method)
            .unwrap()
            .set("selection", "groups")
            .unwrap()
            .set("t", "1")
            .unwrap();
        params.set("min_category_count", "1").unwrap();
        params.n_threads = threads;
        let mut booster = Booster::new(
            params,
            &TrainData {
                frame,
                y: &y,
                weights,
            },
            None,
        )
        .unwrap();
        booster.run(|_| true).unwrap();
        booster.into_model().to_json()
    };
    // agbm grows its two trees of an iteration side by side.
    for method in ["gbm", "rgbm", "agbm"] {
        for growth in ["depthwise", "leafwise"] {
            for weights in [None, Some(&w[..])] {
                let one = fit(1, growth, weights, method);
                assert!(
                    one == fit(2, growth, weights, method),
                    "{method}, {growth}: models differ between 1 and 2 threads"
                );
            }
        }
    }
}

#[test]
fn same_multiclass_model_whatever_the_thread_count() {
    // The trees of the classes of an iteration grow side by side, as many at a time as there
    // are threads: 5 classes on 2 and 3 threads leave a last, partial group of classes.
    let mut rng = Rng::new(9);
    let n = 3_000;
    let (numeric, codes) = mixed_frame_columns(&mut rng, n);
    let y: Vec<f64> = (0..n)
        .map(|i| {
            let x = numeric[0][i];
            let band = if x.is_nan() {
                0
            } else {
                (x.abs() * 2.0) as usize
            };
            // A missing level's code is negative.
            let level = codes[i].rem_euclid(5) as usize;
            ((band + level + usize::from(rng.uniform() < 0.2)) % 5) as f64
        })
        .collect();
    let fit = |threads: usize, method: &str, step: &str| {
        let frame = common::mixed_frame(&numeric, &codes, 8);
        let mut params = Params::default();
        for (key, value) in [
            ("n_iter", "4"),
            ("max_depth", "4"),
            ("loss", "softmax"),
            ("method", method),
            ("step", step),
        ] {
            params.set(key, value).unwrap();
        }
        params.n_threads = threads;
        let data = TrainData {
            frame,
            y: &y,
            weights: None,
        };
        let mut booster = Booster::new(params, &data, None).unwrap();
        booster.run(|_| true).unwrap();
        booster.into_model().to_json()
    };
    for (method, step) in [
        ("gbm", "constant"),
        ("gbm", "newton"),
        ("gbm", "leaf_line_search"),
        ("proximal", "constant"),
        // AGBM's 2K trees of an iteration (on r and on c) grow side by side, VAGBM's K.
        ("agbm", "constant"),
        ("vagbm", "constant"),
    ] {
        let one = fit(1, method, step);
        for threads in [2, 3] {
            assert!(
                one == fit(threads, method, step),
                "{method}, {step}: models differ between 1 and {threads} threads"
            );
        }
    }
}

#[test]
fn compact_prediction_equals_tree_traversal() {
    // Trees without categorical rules predict through the compact lock-step form, the others
    // through the general traversal; both must give what a plain walk of every tree gives, also
    // on row counts that leave partial groups of rows.
    let mut rng = Rng::new(11);
    let n = 1_037;
    let (numeric, codes) = mixed_frame_columns(&mut rng, n);
    let y: Vec<f64> = (0..n)
        .map(|i| {
            numeric[0][i].sin()
                + if numeric[1][i].is_nan() {
                    2.0
                } else {
                    numeric[1][i] * 0.3
                }
                + (codes[i] % 3) as f64
        })
        .collect();
    for with_categorical in [false, true] {
        // The first `rows` rows, with or without the categorical column.
        let prefix = |rows: usize| -> (Vec<Vec<f64>>, Vec<i32>) {
            let columns = numeric.iter().map(|c| c[..rows].to_vec()).collect();
            (columns, codes[..rows].to_vec())
        };
        fn frame((numeric, codes): &(Vec<Vec<f64>>, Vec<i32>), categorical: bool) -> Frame<'_> {
            if categorical {
                common::mixed_frame(numeric, codes, 8)
            } else {
                common::numeric_frame(numeric)
            }
        }
        let mut p = Params::default();
        p.set("n_iter", "8")
            .unwrap()
            .set("max_depth", "6")
            .unwrap()
            .set("growth", "leafwise")
            .unwrap();
        p.set("min_category_count", "1").unwrap();
        let all = prefix(n);
        let train = TrainData {
            frame: frame(&all, with_categorical),
            y: &y,
            weights: None,
        };
        let mut booster = Booster::new(p, &train, None).unwrap();
        booster.run(|_| true).unwrap();
        let model = booster.into_model();
        assert_eq!(
            with_categorical,
            model.trees.iter().any(|t| !t.categories.is_empty())
        );
        for rows in [3, 8, n] {
            let first = prefix(rows);
            let frame = frame(&first, with_categorical);
            let pred = model.predict(&frame).unwrap();
            for i in 0..rows {
                let mut expected = model.bias[0];
                for (tree, w) in model.trees.iter().zip(&model.weights) {
                    expected += w * tree.predict_raw(&frame, i);
                }
                assert!(
                    (pred[i] - expected).abs() <= 1e-12 * expected.abs().max(1.0),
                    "row {i}: {} vs {expected}",
                    pred[i]
                );
            }
        }
    }
}

/// Grows a tree on target `t` with unit weights.
/// The tree as an exact least-squares fitter: leaves down to one row, no L2, categorical levels
/// ordered by their raw means (the defaults regularise all three; these tests check the search).
fn least_squares() -> TreeParams {
    TreeParams {
        min_samples_leaf: Some(1),
        l2_leaf: 0.0,
        categorical: optboost::CategoricalParams::unguarded(),
        ..TreeParams::default()
    }
}

fn fit_tree(data: &BinnedData, t: &[f64], params: &TreeParams) -> optboost::learner::GrownTree {
    let v = vec![1.0; t.len()];
    grow(data, FitStats { vt: t, v: &v }, params, &Candidates::All)
}

#[test]
fn deep_tree_reproduces_a_piecewise_constant_target() {
    let mut rng = Rng::new(5);
    let n = 5_000;
    // 100 distinct values per feature: one bin each, so every cut of the grid is available.
    let x0: Vec<f64> = (0..n).map(|_| rng.below(100) as f64 / 10.0).collect();
    let x1: Vec<f64> = (0..n).map(|_| rng.below(100) as f64 / 10.0).collect();
    let noise: Vec<f64> = (0..n).map(|_| rng.uniform()).collect();
    // Six regions, needing depth 3.
    let t: Vec<f64> = (0..n)
        .map(|i| match (x0[i] < 3.0, x0[i] < 7.0, x1[i] < 5.0) {
            (true, _, true) => 1.0,
            (true, _, false) => -2.0,
            (false, true, true) => 0.5,
            (false, true, false) => 4.0,
            (false, false, true) => -1.0,
            (false, false, false) => 3.0,
        })
        .collect();
    let frame = Frame::new(vec![
        Feature::numeric("x0", &x0),
        Feature::numeric("noise", &noise),
        Feature::numeric("x1", &x1),
    ])
    .unwrap();
    let data = BinnedData::learn(&frame, &BinningParams::default()).unwrap();
    let params = TreeParams {
        max_depth: 4,
        ..least_squares()
    };
    let grown = fit_tree(&data, &t, &params);
    let fitted = grown.fitted_values(&data);
    for i in 0..n {
        assert_eq!(fitted[i], t[i], "row {i}");
        assert_eq!(
            grown.tree.predict_raw(&frame, i),
            t[i],
            "raw prediction, row {i}"
        );
        assert_eq!(
            grown.tree.predict_bins(data.matrix().row(i)),
            t[i],
            "binned prediction, row {i}"
        );
    }
    assert_eq!(
        grown.tree.n_leaves(),
        6,
        "no split beyond the six regions (zero gain)"
    );
}

#[test]
fn row_order_passes_give_every_row_its_leaf_value() {
    // Enough rows for several row chunks, and leaves whose rows are scattered over all of them.
    let mut rng = Rng::new(12);
    let n = 30_001;
    let x: Vec<Vec<f64>> = (0..3)
        .map(|_| (0..n).map(|_| rng.uniform()).collect())
        .collect();
    let t: Vec<f64> = (0..n)
        .map(|i| (9.0 * x[0][i]).sin() + x[1][i] * x[2][i] + rng.uniform())
        .collect();
    let frame = common::numeric_frame(&x);
    let data = BinnedData::learn(&frame, &BinningParams::default()).unwrap();
    let params = TreeParams {
        max_depth: 8,
        max_leaves: 40,
        growth: Growth::Leafwise,
        ..least_squares()
    };
    let grown = fit_tree(&data, &t, &params);
    check_row_order_passes(&data, &grown, &t);
    // A tree on one feature: its passes find leaves from that feature's bins.
    let one_feature = Candidates::Features(vec![true, false, false]);
    let grown = grow(&data, FitStats { vt: &t, v: &[] }, &params, &one_feature);
    check_row_order_passes(&data, &grown, &t);
}

fn check_row_order_passes(data: &BinnedData, grown: &optboost::learner::GrownTree, t: &[f64]) {
    let n = t.len();
    assert_eq!(grown.tree.n_leaves(), 40);
    let walked: Vec<f64> = (0..n)
        .map(|i| grown.tree.predict_bins(data.matrix().row(i)))
        .collect();
    assert_eq!(grown.fitted_values(data), walked);
    let index = grown.leaf_index(data);
    assert_eq!(index.len(), n);
    for (j, leaf) in grown.leaves().iter().enumerate() {
        for &r in grown.leaf_rows(leaf) {
            assert_eq!(index[r as usize], j as u32, "row {r}");
        }
    }
    // The fused passes that add the tree to a column of scores and compute cos(t, b) in the
    // same pass are tested with them, in src/boost/fit/passes.rs.
}

#[test]
fn missing_values_go_to_their_own_side() {
    let mut rng = Rng::new(6);
    let n = 2_000;
    let x: Vec<f64> = (0..n)
        .map(|_| {
            if rng.uniform() < 0.3 {
                f64::NAN
            } else {
                rng.below(50) as f64 / 50.0
            }
        })
        .collect();
    let other: Vec<f64> = (0..n).map(|_| rng.uniform()).collect();
    let t: Vec<f64> = x
        .iter()
        .map(|v| if v.is_nan() { 2.0 } else { -1.0 })
        .collect();
    let frame = Frame::new(vec![
        Feature::numeric("other", &other),
        Feature::numeric("x", &x),
    ])
    .unwrap();
    let data = BinnedData::learn(&frame, &BinningParams::default()).unwrap();
    let grown = fit_tree(
        &data,
        &t,
        &TreeParams {
            max_depth: 1,
            ..least_squares()
        },
    );
    let root = &grown.tree.nodes[0];
    assert_eq!(root.feature, 1);
    let nan_side = if root.default_left {
        root.left
    } else {
        root.right
    } as usize;
    assert_eq!(grown.tree.nodes[nan_side].value, 2.0);
    assert_eq!(
        grown.tree.nodes[nan_side].count as usize,
        x.iter().filter(|v| v.is_nan()).count()
    );
    for i in 0..n {
        assert_eq!(grown.tree.predict_raw(&frame, i), t[i]);
        assert_eq!(grown.tree.predict_bins(data.matrix().row(i)), t[i]);
    }

    // Missing values that behave like large values join the large values' side.
    let t: Vec<f64> = x
        .iter()
        .map(|&v| if v.is_nan() || v > 0.6 { 1.0 } else { 0.0 })
        .collect();
    let grown = fit_tree(
        &data,
        &t,
        &TreeParams {
            max_depth: 1,
            ..least_squares()
        },
    );
    let root = &grown.tree.nodes[0];
    assert!(
        !root.default_left && (0.6..0.62).contains(&root.threshold),
        "{root:?}"
    );
    assert_eq!(grown.tree.nodes[root.right as usize].value, 1.0);
    assert_eq!(grown.fitted_values(&data), t);
}

#[test]
fn a_level_subset_is_separated_by_one_categorical_split() {
    let mut rng = Rng::new(7);
    let n = 3_000;
    let codes: Vec<i32> = (0..n).map(|_| rng.below(7) as i32).collect();
    let x: Vec<f64> = (0..n).map(|_| rng.uniform()).collect();
    let in_subset = |c: i32| [1, 3, 4].contains(&c);
    let t: Vec<f64> = codes
        .iter()
        .map(|&c| if in_subset(c) { 5.0 } else { -1.0 })
        .collect();
    let frame = Frame::new(vec![
        Feature::numeric("x", &x),
        Feature::categorical("c", &codes, 7),
    ])
    .unwrap();
    let data = BinnedData::learn(&frame, &BinningParams::default()).unwrap();
    let grown = fit_tree(
        &data,
        &t,
        &TreeParams {
            max_depth: 1,
            ..least_squares()
        },
    );
    let root = &grown.tree.nodes[0];
    assert_eq!(root.feature, 1);
    let split = &grown.tree.categories[root.category.expect("categorical rule") as usize];
    let left: Vec<i32> = (0..7)
        .filter(|&c| split.left_codes[0] >> c & 1 == 1)
        .collect();
    assert!(
        left == vec![1, 3, 4] || left == vec![0, 2, 5, 6],
        "left levels {left:?}"
    );
    assert_eq!(grown.fitted_values(&data), t);
    for i in 0..n {
        assert_eq!(grown.tree.predict_raw(&frame, i), t[i]);
    }
    // Unseen data: a missing code follows the default direction in both forms of the rule.
    let missing = [-1];
    let probe = Frame::new(vec![
        Feature::numeric("x", &[0.5]),
        Feature::categorical("c", &missing, 7),
    ])
    .unwrap();
    let binned = data.bin(&probe).unwrap();
    assert_eq!(
        grown.tree.predict_raw(&probe, 0),
        grown.tree.predict_bins(binned.row(0))
    );
}

fn train_mixed(n: usize, seed: u64, params: &[(&str, &str)]) -> (Model, Vec<Vec<f64>>, Vec<i32>) {
    let mut rng = Rng::new(seed);
    let (numeric, codes) = mixed_frame_columns(&mut rng, n);
    let y: Vec<f64> = (0..n)
        .map(|i| {
            let x1 = if numeric[1][i].is_nan() {
                3.0
            } else {
                numeric[1][i]
            };
            numeric[0][i].abs() + x1 * numeric[2][i] * 0.1 + (codes[i] % 3) as f64 + rng.uniform()
        })
        .collect();
    let mut p = Params::default();
    p.set("n_iter", "10")
        .unwrap()
        .set("max_depth", "4")
        .unwrap()
        .set("min_category_count", "1")
        .unwrap();
    for (k, v) in params {
        p.set(k, v).unwrap();
    }
    let frame = common::mixed_frame(&numeric, &codes, 8);
    let mut booster = Booster::new(
        p,
        &TrainData {
            frame,
            y: &y,
            weights: None,
        },
        None,
    )
    .unwrap();
    booster.run(|_| true).unwrap();
    (booster.into_model(), numeric, codes)
}

/// A row that reaches a shallow leaf of an unbalanced tree keeps walking in lock step with
/// deeper rows; the leaf must not read a categorical column as if it were numeric.
#[test]
fn unbalanced_numeric_trees_predict_when_the_first_column_is_categorical() {
    let n = 400;
    let codes: Vec<i32> = (0..n).map(|i| i % 3).collect();
    let x: Vec<f64> = (0..n).map(|i| i as f64).collect();
    // x < 200 is flat; above it the target steps again: the best depth-3 tree is unbalanced.
    let y: Vec<f64> = x
        .iter()
        .map(|&v| {
            if v < 200.0 {
                0.0
            } else if v < 300.0 {
                5.0
            } else {
                9.0
            }
        })
        .collect();
    let frame = Frame::new(vec![
        Feature::categorical("c", &codes, 3),
        Feature::numeric("x", &x),
    ])
    .unwrap();
    let mut params = Params::default();
    params
        .set("max_depth", "3")
        .unwrap()
        .set("n_iter", "5")
        .unwrap()
        .set("learning_rate", "1")
        .unwrap();
    let train = TrainData {
        frame: frame.clone(),
        y: &y,
        weights: None,
    };
    let mut booster = Booster::new(params, &train, None).unwrap();
    booster.run(|_| true).unwrap();
    let model = booster.model();
    assert!(
        model.trees.iter().all(|t| t.categories.is_empty()),
        "the trees should use x only"
    );
    assert!(
        model.trees[0].n_leaves() < 1 << model.trees[0].depth(),
        "the first tree should be unbalanced"
    );
    let predictions = model.predict(&frame).unwrap();
    for (i, (&p, &t)) in predictions.iter().zip(&y).enumerate() {
        assert!((p - t).abs() < 1e-9, "row {i}: predicted {p}, target {t}");
    }
}

#[test]
fn raw_and_binned_predictions_agree() {
    for growth in ["depthwise", "leafwise"] {
        let (model, numeric, codes) =
            train_mixed(3_000, 8, &[("growth", growth), ("max_bins", "16")]);
        let frame = common::mixed_frame(&numeric, &codes, 8);
        let mappers: Vec<_> = model.features.iter().map(|f| f.mapper.clone()).collect();
        let binned = BinnedMatrix::from_frame(&frame, &mappers).unwrap();
        assert_eq!(
            model.predict(&frame).unwrap(),
            model.predict_binned(&binned)
        );
    }
}

#[test]
fn model_survives_a_json_round_trip_with_a_missing_only_split() {
    // "Non-missing left, missing right" has an infinite raw threshold; JSON has no infinity.
    let x: Vec<f64> = (0..100)
        .map(|i| if i % 4 == 0 { f64::NAN } else { i as f64 })
        .collect();
    let y: Vec<f64> = x
        .iter()
        .map(|v| if v.is_nan() { 10.0 } else { 0.0 })
        .collect();
    let mut p = Params::default();
    p.set("n_iter", "2").unwrap().set("max_depth", "1").unwrap();
    let frame = Frame::new(vec![Feature::numeric("x", &x)]).unwrap();
    let mut booster = Booster::new(
        p,
        &TrainData {
            frame: frame.clone(),
            y: &y,
            weights: None,
        },
        None,
    )
    .unwrap();
    booster.run(|_| true).unwrap();
    let model = booster.into_model();
    let back = Model::from_json(&model.to_json()).expect("round trip");
    assert_eq!(back, model);
    assert_eq!(
        back.predict(&frame).unwrap(),
        model.predict(&frame).unwrap()
    );
}

#[test]
fn infinite_feature_values_survive_a_json_round_trip() {
    let x: Vec<f64> = (0..60)
        .map(|i| [f64::NEG_INFINITY, -1.0, 0.0, 1.0, f64::INFINITY][i % 5])
        .collect();
    let y: Vec<f64> = (0..60).map(|i| (i % 5) as f64).collect();
    let mut p = Params::default();
    p.set("n_iter", "3").unwrap();
    let frame = Frame::new(vec![Feature::numeric("x", &x)]).unwrap();
    let mut booster = Booster::new(
        p,
        &TrainData {
            frame: frame.clone(),
            y: &y,
            weights: None,
        },
        None,
    )
    .unwrap();
    booster.run(|_| true).unwrap();
    let model = booster.into_model();
    let back = Model::from_json(&model.to_json()).expect("round trip");
    assert_eq!(
        back.predict(&frame).unwrap(),
        model.predict(&frame).unwrap()
    );
}

// ----------------------------------------------------------------------------- errors

fn message(e: Error) -> String {
    e.to_string()
}

#[test]
fn empty_data_is_an_error() {
    assert!(message(Frame::new(vec![]).unwrap_err()).contains("no feature columns"));
    let empty: [f64; 0] = [];
    assert!(
        message(Frame::new(vec![Feature::numeric("x", &empty)]).unwrap_err()).contains("no rows")
    );
}

#[test]
fn columns_of_different_lengths_are_an_error() {
    let (a, b) = ([1.0, 2.0, 3.0], [1.0, 2.0]);
    let e = message(
        Frame::new(vec![Feature::numeric("a", &a), Feature::numeric("b", &b)]).unwrap_err(),
    );
    assert!(
        e.contains("different lengths") && e.contains("`b` has 2"),
        "{e}"
    );
}

fn booster_error(y: &[f64], weights: Option<&[f64]>, params: Params) -> String {
    let x = [1.0, 2.0, 3.0, 4.0];
    let frame = Frame::new(vec![Feature::numeric("x", &x)]).unwrap();
    match Booster::new(params, &TrainData { frame, y, weights }, None) {
        Ok(_) => panic!("expected an error"),
        Err(e) => message(e),
    }
}

#[test]
fn a_non_finite_target_is_an_error() {
    let e = booster_error(&[1.0, f64::NAN, 0.0, 1.0], None, Params::default());
    assert!(e.contains("target") && e.contains("row 1"), "{e}");
    let e = booster_error(&[1.0, 0.0, f64::INFINITY, 1.0], None, Params::default());
    assert!(e.contains("row 2") && e.contains("inf"), "{e}");
}

#[test]
fn a_target_of_the_wrong_length_is_an_error() {
    let e = booster_error(&[1.0, 2.0], None, Params::default());
    assert!(e.contains("target has 2 rows"), "{e}");
}

#[test]
fn negative_weights_are_an_error() {
    let e = booster_error(&[1.0; 4], Some(&[1.0, 1.0, -0.5, 1.0]), Params::default());
    assert!(
        e.contains("weights") && e.contains("row 2") && e.contains("-0.5"),
        "{e}"
    );
}

#[test]
fn all_zero_weights_are_an_error() {
    let e = booster_error(&[1.0; 4], Some(&[0.0; 4]), Params::default());
    assert!(e.contains("all weights are zero"), "{e}");
}

#[test]
fn max_bins_out_of_range_is_an_error() {
    for bins in [0, 1, 256, 1000] {
        let mut p = Params::default();
        p.binning.max_bins = bins;
        let e = booster_error(&[1.0; 4], None, p);
        assert!(
            e.contains("max_bins") && e.contains(&bins.to_string()) && e.contains("2..=255"),
            "{e}"
        );
        let x = [1.0];
        let frame = Frame::new(vec![Feature::numeric("x", &x)]).unwrap();
        let e = BinnedData::learn(
            &frame,
            &BinningParams {
                max_bins: bins,
                min_category_count: 1,
            },
        )
        .unwrap_err();
        assert!(matches!(e, Error::Param { ref name, .. } if name == "max_bins"));
    }
}

#[test]
fn a_categorical_code_not_below_its_level_count_is_an_error() {
    let codes = [0, 1, 3, 2];
    let e = message(Frame::new(vec![Feature::categorical("colour", &codes, 3)]).unwrap_err());
    assert!(
        e.contains("colour")
            && e.contains("code 3")
            && e.contains("row 2")
            && e.contains("level count 3"),
        "{e}"
    );
    let e = message(Frame::new(vec![Feature::categorical("colour", &codes, 0)]).unwrap_err());
    assert!(
        e.contains("colour") && e.contains("at least one level"),
        "{e}"
    );
}

#[test]
fn inconsistent_bin_mappers_are_an_error() {
    // Mappers from a hand-edited checkpoint: a level binned past the bin count, or too many
    // cuts, would index outside the histogram.
    use optboost::BinMapper;
    let codes = [0, 1, 2, 1];
    let frame = Frame::new(vec![Feature::categorical("colour", &codes, 3)]).unwrap();
    let names = vec!["colour".to_string()];
    let bad = BinMapper::Categorical {
        level_bins: vec![1, 2, 7],
        n_bins: 3,
    };
    let e = message(BinnedData::with_mappers(&frame, vec![bad], names.clone()).unwrap_err());
    assert!(e.contains("colour") && e.contains("inconsistent"), "{e}");
    let good = BinMapper::Categorical {
        level_bins: vec![1, 2, 2],
        n_bins: 3,
    };
    assert!(BinnedData::with_mappers(&frame, vec![good], names).is_ok());
    let x = [0.5, 1.5];
    let frame = Frame::new(vec![Feature::numeric("x", &x)]).unwrap();
    let too_many = BinMapper::Numeric {
        cuts: (0..255).map(f64::from).collect(),
    };
    let e =
        message(BinnedData::with_mappers(&frame, vec![too_many], vec!["x".into()]).unwrap_err());
    assert!(e.contains('x') && e.contains("inconsistent"), "{e}");
}

#[test]
fn prediction_data_with_the_wrong_columns_is_an_error() {
    let (model, numeric, codes) = train_mixed(500, 9, &[]);
    // Columns are found by name: a missing one is named.
    let short = common::numeric_frame(&numeric);
    let e = message(model.predict(&short).unwrap_err());
    assert!(e.contains("feature `c` is not among"), "{e}");
    // A categorical column where the model had a numeric one.
    let mut features = common::numeric_features(&numeric);
    features[0] = Feature::categorical("x0", &codes, 8);
    features.push(Feature::categorical("c", &codes, 8));
    let e = message(model.predict(&Frame::new(features).unwrap()).unwrap_err());
    assert!(e.contains("x0") && e.contains("numeric"), "{e}");
    // The binned path checks the shape too.
    let e = message(
        BinnedMatrix::from_frame(
            &short,
            &model
                .features
                .iter()
                .map(|f| f.mapper.clone())
                .collect::<Vec<_>>(),
        )
        .unwrap_err(),
    );
    assert!(e.contains("expected 5 feature columns, got 4"), "{e}");
}

#[test]
fn unreadable_model_files_each_say_why() {
    let (model, _, _) = train_mixed(300, 10, &[]);
    let json = model.to_json();
    let load = |text: &str| message(Model::from_json(text).unwrap_err());

    // cut after a separator: a cut inside a number reads as a malformed number
    let cut = json[..json.len() / 2].rfind(',').unwrap() + 1;
    let truncated = load(&json[..cut]);
    assert!(truncated.contains("truncated"), "{truncated}");
    let wrong_version = load(&json.replacen("\"version\":3", "\"version\":99", 1));
    assert!(
        wrong_version.contains("version 99") && wrong_version.contains("reads versions 1 to 4"),
        "{wrong_version}"
    );
    let not_a_model = load("{\"hello\": [1, 2, 3]}");
    assert!(
        not_a_model.contains("not an optboost model"),
        "{not_a_model}"
    );
    let not_json = load("PK\u{3}\u{4} binary junk");
    assert!(not_json.contains("not an optboost model"), "{not_json}");
    let empty = load("");
    assert!(empty.contains("empty"), "{empty}");
    let messages = [&truncated, &wrong_version, &not_a_model, &empty];
    for (i, a) in messages.iter().enumerate() {
        for b in &messages[i + 1..] {
            assert_ne!(a, b);
        }
    }
    // A well-formed file whose trees point outside the model.
    let broken = json.replacen("\"left\":[1,", "\"left\":[100000,", 1);
    assert_ne!(broken, json);
    assert!(load(&broken).contains("inconsistent model"));
    let missing = message(Model::load("/nonexistent/model.json").unwrap_err());
    assert!(
        missing.contains("cannot read /nonexistent/model.json"),
        "{missing}"
    );
}

#[test]
fn a_constant_feature_gives_a_single_leaf_and_no_panic() {
    let x = [3.0; 50];
    let nan = [f64::NAN; 50];
    let y: Vec<f64> = (0..50).map(|i| i as f64).collect();
    let frame = Frame::new(vec![
        Feature::numeric("x", &x),
        Feature::numeric("nan", &nan),
    ])
    .unwrap();
    let mut p = Params::default();
    p.set("n_iter", "2").unwrap();
    let mut booster = Booster::new(
        p,
        &TrainData {
            frame: frame.clone(),
            y: &y,
            weights: None,
        },
        None,
    )
    .unwrap();
    booster.run(|_| true).unwrap();
    let model = booster.into_model();
    assert!(model.trees.iter().all(|t| t.nodes.len() == 1));
    assert!(model
        .predict(&frame)
        .unwrap()
        .iter()
        .all(|&p| (p - 24.5).abs() < 1e-12));
}

#[test]
fn quantized_gradients_fit_nearly_the_exact_model_the_same_on_any_thread_count() {
    let mut rng = Rng::new(21);
    let n = 20_000;
    let columns: Vec<Vec<f64>> = (0..3)
        .map(|_| (0..n).map(|_| rng.normal()).collect())
        .collect();
    let signal: Vec<f64> = (0..n)
        .map(|i| (1.5 * columns[0][i]).sin() + columns[1][i] * columns[2][i])
        .collect();
    let labels: Vec<f64> = signal
        .iter()
        .map(|&z| f64::from(u8::from(rng.uniform() < 1.0 / (1.0 + (-2.0 * z).exp()))))
        .collect();
    let noisy: Vec<f64> = signal.iter().map(|&z| z + 0.3 * rng.normal()).collect();
    let fit = |loss: &str, y: &[f64], quantized: bool, threads: usize| {
        let mut params = Params::default();
        for (key, value) in [
            ("loss", loss),
            ("n_iter", "30"),
            ("max_depth", "4"),
            ("max_bins", "63"),
            (
                "quantized_gradients",
                if quantized { "true" } else { "false" },
            ),
        ] {
            params.set(key, value).unwrap();
        }
        params.n_threads = threads;
        let data = TrainData {
            frame: Frame::new(common::numeric_features(&columns)).unwrap(),
            y,
            weights: None,
        };
        let mut booster = Booster::new(params, &data, None).unwrap();
        booster.run(|_| true).unwrap();
        let loss = booster.history().records.last().unwrap().train_loss;
        (booster.into_model().to_json(), loss)
    };
    // Logistic trees grow on weighted statistics without counts, least squares on unit weights:
    // the two packings of quantize.rs.
    for (loss, y) in [("logistic", &labels), ("squared", &noisy)] {
        let (exact_model, exact_loss) = fit(loss, y, false, 1);
        let (model, quantized_loss) = fit(loss, y, true, 1);
        assert!(model != exact_model, "{loss}: the statistics were rounded");
        assert!(
            (quantized_loss - exact_loss).abs() <= 1e-3 * exact_loss,
            "{loss}: training loss {quantized_loss} against {exact_loss} exact"
        );
        assert!(
            model == fit(loss, y, true, 2).0,
            "{loss}: quantized models differ between 1 and 2 threads"
        );
    }
}

#[test]
fn goss_trees_fit_nearly_as_well_the_same_on_any_thread_count() {
    let mut rng = Rng::new(22);
    let n = 20_000;
    let columns: Vec<Vec<f64>> = (0..3)
        .map(|_| (0..n).map(|_| rng.normal()).collect())
        .collect();
    let y: Vec<f64> = (0..n)
        .map(|i| {
            let z = (1.5 * columns[0][i]).sin() + columns[1][i] * columns[2][i];
            f64::from(u8::from(rng.uniform() < 1.0 / (1.0 + (-2.0 * z).exp())))
        })
        .collect();
    let fit = |settings: &[(&str, &str)], threads: usize| {
        let mut params = Params::default();
        for (key, value) in [("loss", "logistic"), ("n_iter", "40"), ("max_depth", "4")]
            .iter()
            .chain(settings)
        {
            params.set(key, value)?;
        }
        params.n_threads = threads;
        let data = TrainData {
            frame: Frame::new(common::numeric_features(&columns)).unwrap(),
            y: &y,
            weights: None,
        };
        let mut booster = Booster::new(params, &data, None)?;
        booster.run(|_| true)?;
        let loss = booster.history().records.last().unwrap().train_loss;
        Ok::<_, optboost::Error>((booster.into_model().to_json(), loss))
    };
    let (full, full_loss) = fit(&[], 1).unwrap();
    for method in ["gbm", "agbm"] {
        let goss = [("sample_strategy", "goss"), ("method", method)];
        let (model, loss) = fit(&goss, 1).unwrap();
        assert!(model != full);
        // 30% of the rows a tree: the fit is close to the full one's, not the same.
        assert!(
            loss < 1.03 * full_loss,
            "{method}: {loss} against {full_loss} on all rows"
        );
        assert!(
            model == fit(&goss, 2).unwrap().0,
            "{method}: GOSS differs on 2 threads"
        );
        let other_seed = fit(&[goss[0], goss[1], ("seed", "5")], 1).unwrap().0;
        assert!(model != other_seed);
    }
    let with_subsample = fit(&[("sample_strategy", "goss"), ("subsample", "0.5")], 1);
    assert!(matches!(with_subsample, Err(e) if e.to_string().contains("subsample")));
    let rates = fit(&[("top_rate", "0.7"), ("other_rate", "0.4")], 1);
    assert!(matches!(rates, Err(e) if e.to_string().contains("other_rate")));
}
