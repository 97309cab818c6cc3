use super::*;
use crate::data::test_data::{binned, uniform_columns};
use crate::data::{BinningParams, Feature, Frame};
use crate::rng::uniform;
use crate::threads;
use crate::tree::histogram::Histogram;
use crate::tree::BinStats;
use crate::tree::Growth;

#[test]
fn leaf_wise_takes_the_largest_gain_first_and_ties_in_creation_order() {
    let waiting = |node: usize, gain: Option<f64>| Pending {
        node,
        start: 0,
        end: 0,
        depth: 0,
        hist: None,
        split: gain.map(|gain| SplitCandidate {
            feature: 0,
            gain,
            threshold: Some(1),
            left_bins: Default::default(),
            left: BinStats::default(),
            right: BinStats::default(),
        }),
        limits: NodeLimits::root(),
    };
    let gains = [
        Some(1.0),
        None,
        Some(3.0),
        Some(1.0),
        None,
        Some(3.0),
        Some(2.0),
    ];
    // The scan the heap replaced: the first node of the largest gain, no split as −∞.
    let mut scanned: Vec<usize> = Vec::new();
    let mut left: Vec<(usize, f64)> = (gains.iter().enumerate())
        .map(|(node, g)| (node, g.unwrap_or(f64::NEG_INFINITY)))
        .collect();
    while !left.is_empty() {
        let best = (0..left.len())
            .reduce(|a, b| if left[b].1 > left[a].1 { b } else { a })
            .unwrap();
        scanned.push(left.remove(best).0);
    }
    let mut pending = PendingNodes::new(Growth::Leafwise);
    for (node, &gain) in gains.iter().enumerate() {
        pending.push(waiting(node, gain));
    }
    let popped: Vec<usize> = std::iter::from_fn(|| pending.pop().map(|p| p.node)).collect();
    assert_eq!(popped, scanned);
    assert_eq!(popped, [2, 5, 6, 0, 3, 1, 4]);
    let mut fifo = PendingNodes::new(Growth::Depthwise);
    for (node, &gain) in gains.iter().enumerate() {
        fifo.push(waiting(node, gain));
    }
    let popped: Vec<usize> = std::iter::from_fn(|| fifo.pop().map(|p| p.node)).collect();
    assert_eq!(popped, [0, 1, 2, 3, 4, 5, 6]);
}

#[test]
fn leaf_wise_retires_exactly_the_nodes_it_can_no_longer_split_and_keeps_their_order() {
    let waiting = |node: usize, gain: Option<f64>| Pending {
        node,
        start: 0,
        end: 0,
        depth: 0,
        hist: Some(KeptHistogram::Whole(Histogram { bins: Vec::new() }, None)),
        split: gain.map(|gain| SplitCandidate {
            feature: 0,
            gain,
            threshold: Some(1),
            left_bins: Default::default(),
            left: BinStats::default(),
            right: BinStats::default(),
        }),
        limits: NodeLimits::root(),
    };
    let mut state = 3;
    let gains: Vec<Option<f64>> = (0..200)
        .map(|_| {
            let u = uniform(&mut state);
            // Ties and nodes without a split among them.
            (u > 0.1).then(|| (u * 20.0).floor())
        })
        .collect();
    let order_of = |retire_to: Option<usize>| {
        let mut pending = PendingNodes::new(Growth::Leafwise);
        let mut retired = Vec::new();
        for (node, &gain) in gains.iter().enumerate() {
            pending.push(waiting(node, gain));
            if let Some(budget) = retire_to {
                pending.retire_beyond(budget, |p| {
                    assert!(p.hist.take().is_some(), "retired once");
                    retired.push(p.node);
                });
            }
        }
        let popped: Vec<(usize, bool)> = std::iter::from_fn(|| pending.pop())
            .map(|p| (p.node, p.hist.is_some()))
            .collect();
        (popped, retired)
    };
    let (plain, none_retired) = order_of(None);
    assert!(none_retired.is_empty());
    for budget in [0, 1, 7, 60, 500] {
        let (popped, retired) = order_of(Some(budget));
        let nodes = |order: &[(usize, bool)]| order.iter().map(|p| p.0).collect::<Vec<_>>();
        assert_eq!(nodes(&popped), nodes(&plain), "budget {budget}");
        // The first `budget` nodes with a split keep their histograms, and no others.
        let with_split = popped.iter().filter(|p| gains[p.0].is_some());
        for (rank, &(node, kept)) in with_split.enumerate() {
            assert_eq!(kept, rank < budget, "budget {budget}, node {node}");
        }
        let n_split = gains.iter().filter(|g| g.is_some()).count();
        assert_eq!(retired.len(), n_split.saturating_sub(budget));
    }
}

/// Every leaf's rows and value, ordered by first row.
fn leaf_sets(grown: &GrownTree) -> Vec<(&[u32], f64)> {
    let mut leaves: Vec<(&[u32], f64)> = (grown.leaves.iter())
        .map(|leaf| (grown.leaf_rows(leaf), grown.tree.nodes[leaf.node].value))
        .collect();
    leaves.sort_by_key(|(rows, _)| rows[0]);
    leaves
}

#[test]
fn trees_on_one_feature_equal_trees_grown_by_partitions() {
    // A numeric feature, one with missing values and a categorical one with missing codes;
    // weights (some zero) or none; leaves small enough that min_samples_leaf binds, and more
    // rows than a chunk, so that rows are sorted into leaves in parallel.
    let mut state = 21;
    let n = 30_000;
    let x: Vec<f64> = (0..n).map(|_| uniform(&mut state)).collect();
    let with_nan: Vec<f64> = (0..n)
        .map(|_| {
            let u = uniform(&mut state);
            if u < 0.15 {
                f64::NAN
            } else {
                u
            }
        })
        .collect();
    let codes: Vec<i32> = (0..n)
        .map(|_| (uniform(&mut state) * 13.0) as i32 - 1)
        .collect();
    let frame = Frame::new(vec![
        Feature::numeric("x", &x),
        Feature::numeric("with_nan", &with_nan),
        Feature::categorical("level", &codes, 12),
    ])
    .unwrap();
    let data = BinnedData::learn(&frame, &BinningParams::default()).unwrap();
    let t: Vec<f64> = (0..n)
        .map(|i| {
            (9.0 * x[i]).sin() + with_nan[i].min(0.5) + (codes[i] % 5) as f64 - uniform(&mut state)
        })
        .collect();
    let v: Vec<f64> = (0..n)
        .map(|i| {
            if i % 89 == 0 {
                0.0
            } else {
                0.1 + uniform(&mut state)
            }
        })
        .collect();
    let vt: Vec<f64> = t.iter().zip(&v).map(|(t, v)| t * v).collect();
    for (stats, label) in [
        (FitStats { vt: &t, v: &[] }, "unweighted"),
        (FitStats { vt: &vt, v: &v }, "weighted"),
    ] {
        for feature in 0..3 {
            let mut allowed = vec![false; 3];
            allowed[feature] = true;
            let candidates = Candidates::Features(allowed);
            for (growth, min_samples_leaf) in [
                (Growth::Depthwise, 1),
                (Growth::Depthwise, 900),
                (Growth::Leafwise, 30),
            ] {
                // No L2: with λ > 0, splitting levels of equal mean loses gain, and this
                // test needs trees with many leaves.
                let params = TreeParams {
                    max_depth: 7,
                    max_leaves: 40,
                    min_samples_leaf: Some(min_samples_leaf),
                    l2_leaf: 0.0,
                    growth,
                    ..TreeParams::default()
                };
                let case = format!("{label} feature {feature} {growth:?} {min_samples_leaf}");
                let sorted = grow(&data, stats, &params, &candidates);
                let partitioned = grow_from(
                    &data,
                    &RowStats::new(stats.vt, stats.v),
                    Features::Only(&[feature]),
                    None,
                    &params,
                    &candidates,
                    &mut GrowBuffers::default(),
                    &GrowOptions::default(),
                    None,
                );
                assert!(sorted.tree.n_leaves() >= 8, "{case}");
                // The same leaves, as row sets with their values. The node layout may differ:
                // on a node of missing values and one more run of bins, "missing left" and
                // "missing right" make the same two children, and rounding picks one.
                let (ours, theirs) = (leaf_sets(&sorted), leaf_sets(&partitioned));
                assert_eq!(ours.len(), theirs.len(), "{case}");
                for ((rows, value), (their_rows, their_value)) in ours.iter().zip(&theirs) {
                    assert_eq!(rows, their_rows, "{case}");
                    assert!((value - their_value).abs() <= 1e-9 * (1.0 + their_value.abs()));
                }
                // Each leaf's rows are those the tree's rules send there.
                for leaf in &sorted.leaves {
                    for &r in sorted.leaf_rows(leaf) {
                        let bins = data.matrix().row(r as usize);
                        assert_eq!(sorted.tree.leaf_of_bins(bins), leaf.node, "{case}");
                    }
                }
            }
        }
    }
}

#[test]
fn trees_from_histograms_without_counts_equal_trees_with_counts() {
    // Weights over three orders of magnitude, some zero, and leaves small enough that
    // min_samples_leaf binds: the count bounds leave many candidates undecided, so nodes
    // also take the path that counts their rows.
    let mut state = 9;
    let (n, p) = (20_000, 4);
    let columns = uniform_columns(&mut state, n, p);
    let data = binned(&columns);
    let v: Vec<f64> = (0..n)
        .map(|i| {
            if i % 97 == 0 {
                0.0
            } else {
                10f64.powf(-3.0 * uniform(&mut state))
            }
        })
        .collect();
    let vt: Vec<f64> = (0..n)
        .map(|i| v[i] * ((7.0 * columns[0][i]).sin() + columns[1][i] + uniform(&mut state)))
        .collect();
    let counted = RowStats::new(&vt, &v);
    let uncounted = counted.without_counts(8);
    assert!(uncounted.count_bounds().is_some());
    for growth in [Growth::Depthwise, Growth::Leafwise] {
        for min_samples_leaf in [1, 40, 700] {
            let params = TreeParams {
                max_depth: 8,
                max_leaves: 120,
                min_samples_leaf: Some(min_samples_leaf),
                min_weight_leaf: 0.0,
                growth,
                ..TreeParams::default()
            };
            let grow = |stats: &RowStats<'_>| {
                let buffers = &mut GrowBuffers::default();
                grow_from(
                    &data,
                    stats,
                    Features::All,
                    None,
                    &params,
                    &Candidates::All,
                    buffers,
                    &GrowOptions::default(),
                    None,
                )
            };
            let (with, without) = (grow(&counted), grow(&uncounted));
            assert!(with.tree.n_leaves() > 20, "{growth:?} {min_samples_leaf}");
            assert_eq!(with.tree, without.tree, "{growth:?} {min_samples_leaf}");
            assert_eq!(with.rows, without.rows);
        }
    }
}

#[test]
fn sampled_trees_cover_every_row_whatever_the_buffers_held() {
    // More rows than a chunk (rows are placed in parallel); the buffers come from a full tree
    // and a tree on another sample, whose partition space holds other rows' leaves.
    let mut state = 5;
    let (n, p) = (30_000, 3);
    let columns = uniform_columns(&mut state, n, p);
    let data = binned(&columns);
    let t: Vec<f64> = (0..n)
        .map(|i| (8.0 * columns[0][i]).sin() + columns[1][i] * columns[2][i])
        .collect();
    let stats = FitStats { vt: &t, v: &[] };
    let params = TreeParams {
        max_depth: 6,
        max_leaves: 40,
        ..TreeParams::default()
    };
    let sample = |keep: u32| -> Vec<u32> { (0..n as u32).filter(|r| r % 5 < keep).collect() };
    let (first, second) = (sample(3), sample(2));
    let grow = |rows: &[u32], buffers: &mut GrowBuffers| {
        let options = GrowOptions {
            rows: Some(rows),
            ..GrowOptions::default()
        };
        grow_with_options(&data, stats, &params, &Candidates::All, buffers, &options)
    };
    let fresh = grow(&second, &mut GrowBuffers::default());
    let mut buffers = GrowBuffers::default();
    let full = grow_with(&data, stats, &params, &Candidates::All, &mut buffers);
    let (_, rows) = full.into_parts();
    buffers.recycle(rows);
    let earlier = grow(&first, &mut buffers);
    let (_, rows) = earlier.into_parts();
    buffers.recycle(rows);
    let reused = grow(&second, &mut buffers);
    assert!(fresh.tree.n_leaves() >= 20);
    assert_eq!(fresh.tree, reused.tree);
    assert_eq!(fresh.rows, reused.rows);
    assert_eq!(fresh.leaves, reused.leaves);
    let mut seen = vec![false; n];
    for leaf in &reused.leaves {
        let rows = reused.leaf_rows(leaf);
        assert!(rows.windows(2).all(|w| w[0] < w[1]));
        for &r in rows {
            seen[r as usize] = true;
            let bins = data.matrix().row(r as usize);
            assert_eq!(reused.tree.leaf_of_bins(bins), leaf.node);
        }
    }
    assert!(seen.iter().all(|&s| s));
}

#[test]
fn trees_whose_bounds_decide_few_splits_switch_to_counts_and_stay_the_same() {
    // 16 levels per feature: many rows per bin, so trees start without counts.
    let mut state = 3;
    let (n, p) = (20_000, 4);
    let columns: Vec<Vec<f64>> = (0..p)
        .map(|_| {
            (0..n)
                .map(|_| (16.0 * uniform(&mut state)).floor())
                .collect()
        })
        .collect();
    let data = binned(&columns);
    let params = TreeParams {
        max_depth: 8,
        max_leaves: 60,
        min_samples_leaf: Some(40),
        min_weight_leaf: 0.0,
        growth: Growth::Leafwise,
        ..TreeParams::default()
    };
    // Weights as softmax Hessians: most tiny (a class the model is sure of), a few large.
    let weights = |spread: f64, state: &mut u64| -> Vec<f64> {
        (0..n)
            .map(|_| 10f64.powf(-spread * uniform(state)))
            .collect()
    };
    for (spread, switches) in [(4.0, true), (0.05, false)] {
        let v = weights(spread, &mut state);
        let vt: Vec<f64> = (0..n)
            .map(|i| v[i] * ((0.7 * columns[0][i]).sin() + 0.1 * columns[1][i]))
            .collect();
        let stats = FitStats { vt: &vt, v: &v };
        let mut buffers = GrowBuffers::default();
        let first = grow_with(&data, stats, &params, &Candidates::All, &mut buffers);
        assert_eq!(buffers.always_count, switches, "spread {spread}");
        let (_, rows) = first.into_parts();
        buffers.recycle(rows);
        let reused = grow_with(&data, stats, &params, &Candidates::All, &mut buffers);
        let fresh = grow(&data, stats, &params, &Candidates::All);
        assert!(fresh.tree.n_leaves() >= 30, "spread {spread}");
        assert_eq!(reused.tree, fresh.tree, "spread {spread}");
        assert_eq!(reused.rows, fresh.rows, "spread {spread}");
    }
}

#[test]
fn trees_grown_with_awake_workers_equal_trees_grown_alone() {
    // 48 features of up to 255 bins (searches shared out by feature halves) on 3,000 rows (one
    // block of rows, its histogram shared out by column halves). Feature 45 repeats feature 2,
    // the most informative one, so that the best gains tie across the halves and the lower
    // feature must win; coarse features tie thresholds within a feature. Features of both halves
    // inform the target, so that a half's histogram or support gone wrong changes the tree.
    let n = 3_000;
    let mut state = 5;
    let mut columns: Vec<Vec<f64>> = (0..48)
        .map(|j| {
            (0..n)
                .map(|_| {
                    let u = uniform(&mut state);
                    if j % 4 == 0 {
                        (u * 5.0).floor()
                    } else {
                        u
                    }
                })
                .collect()
        })
        .collect();
    columns[45] = columns[2].clone();
    let t: Vec<f64> = (0..n)
        .map(|i| {
            let upper_half = columns[30][i] * columns[47][i] + f64::from(columns[38][i] > 0.7);
            (6.0 * columns[2][i]).sin() + columns[9][i] * columns[21][i] + upper_half
                - uniform(&mut state)
        })
        .collect();
    let v: Vec<f64> = (0..n).map(|_| 0.05 + uniform(&mut state)).collect();
    let vt: Vec<f64> = t.iter().zip(&v).map(|(t, v)| t * v).collect();
    let names: Vec<String> = (0..48).map(|j| format!("x{j}")).collect();
    let features = names
        .iter()
        .zip(&columns)
        .map(|(name, x)| Feature::numeric(name, x))
        .collect();
    let data =
        BinnedData::learn(&Frame::new(features).unwrap(), &BinningParams::default()).unwrap();
    assert!(data.total_bins() >= 8_192);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    for stats in [FitStats { vt: &t, v: &[] }, FitStats { vt: &vt, v: &v }] {
        for growth in [Growth::Depthwise, Growth::Leafwise] {
            let params = TreeParams {
                max_depth: 6,
                max_leaves: 40,
                min_samples_leaf: Some(5),
                growth,
                ..TreeParams::default()
            };
            let alone = pool.install(|| grow(&data, stats, &params, &Candidates::All));
            let shared = pool.install(|| {
                threads::with_awake_workers(|| {
                    assert!(threads::workers_awake());
                    grow(&data, stats, &params, &Candidates::All)
                })
            });
            assert!(alone.tree.n_leaves() >= 20);
            assert_eq!(alone.tree, shared.tree, "{growth:?}");
            assert_eq!(alone.leaves, shared.leaves);
            assert_eq!(alone.rows, shared.rows);
        }
    }
}

#[test]
fn trees_grown_with_the_histograms_of_earlier_trees_equal_trees_grown_afresh() {
    // Trees on few rows, so that small nodes keep histograms on supports, and trees on some
    // features between trees on all: a shallow tree leaves histograms of large nodes dense,
    // a tree on some features overwrites those features' bins only, and may leave such a
    // histogram cleared on a support of its features only, which a later tree on every feature
    // must not take for zeros.
    let mut state = 21;
    let (n, p) = (3_000, 6);
    let columns = uniform_columns(&mut state, n, p);
    let data = binned(&columns);
    let targets: Vec<Vec<f64>> = (0..3)
        .map(|k| {
            (0..n)
                .map(|i| (5.0 * columns[k][i]).sin() + columns[k + 2][i] + uniform(&mut state))
                .collect()
        })
        .collect();
    let grow = |t: &[f64], features: Features<'_>, max_depth, buffers: &mut GrowBuffers| {
        let params = TreeParams {
            max_depth,
            max_leaves: 200,
            min_samples_leaf: Some(2),
            l2_leaf: 0.0,
            ..TreeParams::default()
        };
        // A tree on some features splits on those only.
        let candidates = match features {
            Features::All => Candidates::All,
            Features::Only(some) => {
                Candidates::Features((0..p).map(|j| some.contains(&j)).collect())
            }
        };
        let grown = grow_from(
            &data,
            &RowStats::new(t, &[]),
            features,
            None,
            &params,
            &candidates,
            buffers,
            &GrowOptions::default(),
            None,
        );
        let (tree, rows) = grown.into_parts();
        buffers.recycle(rows);
        tree
    };
    let some = Features::Only(&[1, 3, 4]);
    let mut buffers = GrowBuffers::default();
    for (t, features, depth) in [
        (0, some, 9),
        (1, Features::All, 3),
        (2, some, 9),
        (0, Features::All, 9),
    ] {
        let afresh = grow(&targets[t], features, depth, &mut GrowBuffers::default());
        let after = grow(&targets[t], features, depth, &mut buffers);
        assert!(
            afresh.n_leaves() >= 1 << (depth - 1).min(6),
            "{features:?} to depth {depth}"
        );
        assert_eq!(after, afresh, "target {t}, {features:?} to depth {depth}");
    }
}
