use super::*;
use crate::data::{BinMapper, Feature};
use crate::tree::test_data::leaf;
use crate::tree::{BinSet, CategorySplit, Node};

fn stump(feature: u32, right: u32) -> Tree {
    let leaf = |value| leaf(value, 1);
    let root = Node {
        feature,
        left: 1,
        right,
        threshold: 0.5,
        bin: 1,
        ..leaf(0.0)
    };
    Tree {
        nodes: vec![root, leaf(-1.0), leaf(1.0)],
        categories: Vec::new(),
    }
}

/// SplitMix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64) < p * (1u64 << 53) as f64
    }
}

/// Features of the random trees: numeric ones, and categorical ones of these level counts
/// (a code set of 0 to 3 words is drawn for each rule, so codes also fall past the set).
const NUMERIC: usize = 2;
const LEVELS: [u32; 3] = [5, 64, 150];

fn random_tree(rng: &mut Rng, max_depth: usize) -> Tree {
    let leaf = |value| leaf(value, 1);
    let mut tree = Tree {
        nodes: vec![leaf(0.0)],
        categories: Vec::new(),
    };
    let mut level = vec![0];
    let mut i = 0;
    while i < tree.nodes.len() {
        if level[i] < max_depth && rng.chance(0.8) {
            let n = tree.nodes.len() as u32;
            let feature = rng.below(NUMERIC + LEVELS.len());
            let node = &mut tree.nodes[i];
            node.feature = feature as u32;
            node.left = n;
            node.right = n + 1;
            node.default_left = rng.chance(0.5);
            if feature < NUMERIC {
                node.threshold = [f64::NEG_INFINITY, f64::INFINITY, -0.0, 0.25, 1.5][rng.below(5)];
                node.bin = 1 + rng.below(6) as u8;
            } else {
                node.category = Some(tree.categories.len() as u32);
                let mut left_bins = BinSet::default();
                for b in 0..=255 {
                    if rng.chance(0.5) {
                        left_bins.insert(b);
                    }
                }
                let words = rng.below(4);
                tree.categories.push(CategorySplit {
                    left_bins,
                    left_codes: (0..words).map(|_| rng.next()).collect(),
                });
            }
            let depth = level[i] + 1;
            tree.nodes.push(leaf(rng.below(1000) as f64 - 500.0));
            tree.nodes.push(leaf(rng.below(1000) as f64 - 500.0));
            level.extend([depth, depth]);
        }
        i += 1;
    }
    tree
}

#[test]
fn flat_trees_predict_bit_for_bit_what_trees_do() {
    let mut rng = Rng(42);
    let n_rows = 3 * BLOCK_ROWS + 5;
    // Missing numbers in the first and last blocks only: the blocks between take the walk
    // without the NaN test.
    let may_be_missing = |row: usize| !(BLOCK_ROWS..3 * BLOCK_ROWS).contains(&row);
    let numbers: Vec<Vec<f64>> = (0..NUMERIC)
        .map(|_| {
            (0..n_rows)
                .map(|row| {
                    [
                        if may_be_missing(row) { f64::NAN } else { 0.75 },
                        -1.0,
                        0.0,
                        -0.0,
                        0.25,
                        0.5,
                        1.5,
                        2.0,
                        f64::INFINITY,
                    ][rng.below(9)]
                })
                .collect()
        })
        .collect();
    // Missing codes (−1), codes inside and past every set.
    let codes: Vec<Vec<i32>> = LEVELS
        .iter()
        .map(|&n| {
            (0..n_rows)
                .map(|_| rng.below(n as usize + 1) as i32 - 1)
                .collect()
        })
        .collect();
    let mut features: Vec<Feature<'_>> = numbers
        .iter()
        .enumerate()
        .map(|(j, x)| Feature::numeric(format!("x{j}"), x))
        .collect();
    for (j, (c, &n)) in codes.iter().zip(&LEVELS).enumerate() {
        features.push(Feature::categorical(format!("c{j}"), c, n));
    }
    let frame = Frame::new(features).unwrap();
    let cuts = vec![-1.0, 0.0, 0.3, 1.0, 1.7];
    let mut mappers = vec![BinMapper::Numeric { cuts }; NUMERIC];
    for &n in &LEVELS {
        mappers.push(BinMapper::Categorical {
            level_bins: (0..n).map(|c| (c * 37 % 256) as u8).collect(),
            n_bins: 256,
        });
    }
    let matrix = BinnedMatrix::from_frame(&frame, &mappers).unwrap();
    let numeric: Vec<bool> = (0..mappers.len()).map(|j| j < NUMERIC).collect();
    let columns = RawColumns::new(&frame);
    let mut kinds = [0; 3];
    for case in 0..300 {
        let tree = random_tree(&mut rng, 1 + case % 7);
        let flat = FlatTree::new(&tree, &numeric).expect("a tree of valid rules is flattened");
        kinds[flat.rule_kinds as usize] += 1;
        // The walk of a list of rows (a sampled tree's undrawn rows), in any order.
        let listed: Vec<u32> = (0..n_rows as u32)
            .rev()
            .filter(|r| !(r + case as u32).is_multiple_of(3))
            .collect();
        let mut nodes = vec![0; listed.len()];
        leaf_nodes_binned(&tree, Some(&flat), (&matrix, true), &listed, &mut nodes);
        for (&r, &node) in listed.iter().zip(&nodes) {
            let expected = tree.leaf_of_bins(matrix.row(r as usize));
            assert_eq!(node as usize, expected, "case {case}, row {r}");
        }
        // The rows of the middle blocks have no missing number.
        let complete: Vec<u32> = listed
            .iter()
            .copied()
            .filter(|&r| !may_be_missing(r as usize))
            .collect();
        let mut nodes = vec![0; complete.len()];
        leaf_nodes_binned(&tree, Some(&flat), (&matrix, false), &complete, &mut nodes);
        for (&r, &node) in complete.iter().zip(&nodes) {
            let expected = tree.leaf_of_bins(matrix.row(r as usize));
            assert_eq!(node as usize, expected, "case {case}, complete row {r}");
        }
        let predictor = Predictor::Flat(flat);
        for start in (0..n_rows).step_by(BLOCK_ROWS) {
            let rows = BLOCK_ROWS.min(n_rows - start);
            let block = columns.block(start, rows);
            assert_eq!(block.has_nan, may_be_missing(start), "block at {start}");
            // −0 + v = v for every v: the tree's value exactly.
            let mut raw = vec![-0.0; rows];
            predictor.add_raw(&frame, &block, start, 1.0, &mut raw);
            let mut binned = vec![-0.0; rows];
            predictor.add_binned(&matrix, start, 1.0, &mut binned);
            for i in 0..rows {
                let row = start + i;
                let expected = tree.predict_raw(&frame, row);
                assert_eq!(
                    raw[i].to_bits(),
                    expected.to_bits(),
                    "case {case}, row {row}"
                );
                let expected = tree.predict_bins(matrix.row(row));
                assert_eq!(
                    binned[i].to_bits(),
                    expected.to_bits(),
                    "case {case}, row {row}"
                );
            }
        }
    }
    // Every walk was taken.
    assert!(kinds.iter().all(|&k| k > 10), "{kinds:?}");
}

#[test]
fn only_trees_the_unchecked_walk_can_index_are_flattened() {
    assert!(FlatTree::new(&stump(1, 2), &[true, true]).is_some());
    // A rule on a categorical feature (an empty column in `RawRows`), on a feature the model
    // lacks, or a child past the node list: each would read out of bounds.
    assert!(FlatTree::new(&stump(1, 2), &[true, false]).is_none());
    assert!(FlatTree::new(&stump(2, 2), &[true, true]).is_none());
    assert!(FlatTree::new(&stump(1, 3), &[true, true]).is_none());
    // A categorical rule: on a categorical feature, with a set the tree has.
    let mut categorical = stump(1, 2);
    categorical.nodes[0].category = Some(0);
    assert!(FlatTree::new(&categorical, &[true, false]).is_none());
    categorical.categories.push(CategorySplit {
        left_bins: BinSet::default(),
        left_codes: vec![1],
    });
    assert!(FlatTree::new(&categorical, &[true, false]).is_some());
    assert!(FlatTree::new(&categorical, &[true, true]).is_none());
    // A root leaf is never walked: its fields were never checked.
    let mut root_leaf = stump(7, 2);
    root_leaf.nodes[0].left = 0;
    root_leaf.nodes[0].category = Some(5);
    assert_eq!(FlatTree::new(&root_leaf, &[true]).map(|f| f.depth), Some(0));
}
