//! A compact, prediction-only form of a tree: 24-byte nodes, children in a two-element array
//! indexed by the comparison (no branch to mispredict), leaves that point at themselves. Rows are
//! walked in groups of `LANES` in lock step for exactly `depth` levels, so the loads of several
//! independent rows overlap instead of one row's chain of dependent loads running alone.
//!
//! Raw rows are walked in blocks of `BLOCK_ROWS`, copied feature-major into one buffer
//! (`RawBlock`): a value is then at (feature << BLOCK_SHIFT) + row, with no load of a column's
//! address in the chain of dependent loads of each level. Categorical codes are copied in as
//! the bits of an f64 (`f64::from_bits(code)`, `MISSING_CODE` for a missing one), so that both
//! kinds of rule read the same buffer and a categorical rule reads its code with no conversion.
//!
//! A categorical rule tests the code's bit in its set of left codes. A set of one 64-bit word
//! (features of at most 64 levels) sits in the node itself, in place of the threshold, so the
//! test costs no load beyond the numeric one's; larger sets, and the bin sets binned rows are
//! tested against, are in the tree's `words` (`CategoryRule`). Codes beyond the set (unseen in
//! training) and missing codes go by `default_left`, as in `Tree::leaf_of_raw`. Trees without
//! categorical rules walk a copy of the loop with that test compiled out, so numeric prediction
//! pays nothing for it.
//!
//! The walk indexes without bounds checks (they cost ~20% of prediction time): `FlatTree::new`
//! admits only trees whose children, tested features and category sets are in range and whose
//! rules fit their feature's kind, and `add_to` checks the row range once per call.

use super::regression_tree::Tree;
use crate::data::{BinnedMatrix, FeatureValues, Frame};

const LANES: usize = 8;
/// Rows per block of raw prediction (`RawBlock`), a power of two.
const BLOCK_SHIFT: u32 = 8;
pub(crate) const BLOCK_ROWS: usize = 1 << BLOCK_SHIFT;

#[derive(Debug, Clone, Copy)]
struct FlatNode {
    threshold: f64,
    feature: u32,
    /// [left, right]; a leaf's children are itself.
    children: [u32; 2],
    bin: u8,
    default_left: bool,
    /// `NUMERIC`, `ONE_WORD` (a categorical rule whose code set is the bits of `threshold`) or
    /// `MANY_WORDS` (one whose code set is in `words`). In the padding: still 24 bytes.
    kind: u8,
}

const NUMERIC: u8 = 0;
const ONE_WORD: u8 = 1;
const MANY_WORDS: u8 = 2;
/// What a block holds for a missing categorical code: far beyond any code set (codes are below
/// 2^32), and not a NaN pattern.
const MISSING_CODE: u64 = 1 << 62;

/// A categorical rule's words in `FlatTree::words`: at `start` the 4 words of its bin set, then
/// its `n_code_words` code words, then the word for codes beyond them and for missing codes (all
/// ones when they go left). So `start + 4 + min(code / 64, n_code_words)` is always a word of the
/// rule (`MISSING_CODE / 64` is beyond every set), and no code needs a bounds test of its own.
#[derive(Debug, Clone, Copy, Default)]
struct CategoryRule {
    start: u32,
    n_code_words: u32,
}

const BIN_WORDS: usize = 4;

#[derive(Debug, Clone)]
pub(crate) struct FlatTree {
    nodes: Vec<FlatNode>,
    values: Vec<f64>,
    depth: usize,
    /// One per node when the tree has categorical rules (leaves copy the root's), else empty.
    rules: Vec<CategoryRule>,
    words: Vec<u64>,
    /// `NUMERIC_RULES`, `CATEGORICAL_RULES` or `BOTH_RULES`: which walk `add_to` takes.
    rule_kinds: u8,
}

/// Kinds of rule in a tree. Each gets its own copy of the walk: with only numeric rules the
/// categorical test is compiled out; with only categorical ones the branch on the kind always
/// goes one way; with both it would be mispredicted often, so both tests are computed and one is
/// selected.
const NUMERIC_RULES: u8 = 0;
const CATEGORICAL_RULES: u8 = 1;
const BOTH_RULES: u8 = 2;

impl FlatTree {
    /// `None` for trees a flat walk could not index safely: a child out of range, a rule on a
    /// feature the model lacks, a numeric rule on a categorical feature or a categorical one on
    /// a numeric feature (`numeric[j]`: feature j is numeric), or a category set the tree lacks;
    /// a model file could claim any of these, and such trees keep `Tree`'s own walk.
    pub(crate) fn new(tree: &Tree, numeric: &[bool]) -> Option<FlatTree> {
        let n_nodes = tree.nodes.len();
        let walkable = |n: &crate::tree::Node| {
            n.is_leaf()
                || ((n.left as usize) < n_nodes
                    && (n.right as usize) < n_nodes
                    && match (numeric.get(n.feature as usize), n.category) {
                        (Some(true), None) => true,
                        (Some(false), Some(c)) => (c as usize) < tree.categories.len(),
                        _ => false,
                    })
        };
        // Node indices are u32, and so are word offsets: far above `MAX_NODES`.
        if n_nodes == 0 || n_nodes > u32::MAX as usize || !tree.nodes.iter().all(walkable) {
            return None;
        }
        let splits = || tree.nodes.iter().filter(|n| !n.is_leaf());
        let rule_kinds = match (
            splits().any(|n| n.category.is_none()),
            splits().any(|n| n.category.is_some()),
        ) {
            (_, false) => NUMERIC_RULES,
            (false, true) => CATEGORICAL_RULES,
            (true, true) => BOTH_RULES,
        };
        let (rules, words) = if rule_kinds == NUMERIC_RULES {
            (Vec::new(), Vec::new())
        } else {
            category_rules(tree)?
        };
        // Rows that reach a leaf early keep walking in lock step, so a leaf still evaluates a
        // rule: the root's, which fits its feature. Its result is ignored because a leaf's
        // children are itself.
        let root = &tree.nodes[0];
        let nodes = tree
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let rule = if n.is_leaf() { root } else { n };
                let (kind, threshold) = match rule.category {
                    // A root leaf (never walked: depth 0) keeps its fields unchecked.
                    _ if rule.is_leaf() => (NUMERIC, 0.0),
                    None => (NUMERIC, rule.threshold),
                    // In range: checked by `walkable`.
                    Some(c) => match tree.categories[c as usize].left_codes[..] {
                        [word] => (ONE_WORD, f64::from_bits(word)),
                        _ => (MANY_WORDS, 0.0),
                    },
                };
                FlatNode {
                    threshold,
                    feature: rule.feature,
                    children: if n.is_leaf() {
                        [i as u32; 2]
                    } else {
                        [n.left, n.right]
                    },
                    bin: rule.bin,
                    default_left: rule.default_left,
                    kind,
                }
            })
            .collect();
        Some(FlatTree {
            nodes,
            values: tree.nodes.iter().map(|n| n.value).collect(),
            // A root leaf ends every walk at once (as in `Tree::leaf_of_raw`); its fields were
            // never checked, so the walk must not evaluate its rule.
            depth: if root.is_leaf() { 0 } else { tree.depth() },
            rules,
            words,
            rule_kinds,
        })
    }

    /// Adds `weight · tree(row)` to `out[i]` for rows `start..start + out.len()`.
    #[inline]
    fn add_to<R: Rows>(&self, rows: &R, start: usize, weight: f64, out: &mut [f64]) {
        self.walk(rows, start, out, |o, i| {
            *o += weight * self.values[i as usize]
        });
    }

    /// Calls `visit(&mut out[j], node)` with the node (a leaf) that row `start + j` reaches.
    #[inline(always)]
    fn walk<R: Rows, T>(
        &self,
        rows: &R,
        start: usize,
        out: &mut [T],
        visit: impl FnMut(&mut T, u32),
    ) {
        assert!(start + out.len() <= rows.n_rows(), "rows out of range");
        self.walk_rows(rows, |j| start + j, out, visit);
    }

    /// Calls `visit(&mut out[j], node)` with the node (a leaf) that row `row_of(j)` reaches;
    /// every `row_of(j)` must be below `rows.n_rows()`.
    #[inline(always)]
    fn walk_rows<R: Rows, T>(
        &self,
        rows: &R,
        row_of: impl Fn(usize) -> usize,
        out: &mut [T],
        visit: impl FnMut(&mut T, u32),
    ) {
        match self.rule_kinds {
            NUMERIC_RULES => self.walk_kinds::<R, T, NUMERIC_RULES>(rows, row_of, out, visit),
            CATEGORICAL_RULES => {
                self.walk_kinds::<R, T, CATEGORICAL_RULES>(rows, row_of, out, visit)
            }
            _ => self.walk_kinds::<R, T, BOTH_RULES>(rows, row_of, out, visit),
        }
    }

    /// `walk_rows`, for a tree whose `rule_kinds` are `KINDS`.
    #[inline(always)]
    fn walk_kinds<R: Rows, T, const KINDS: u8>(
        &self,
        rows: &R,
        row_of: impl Fn(usize) -> usize,
        out: &mut [T],
        mut visit: impl FnMut(&mut T, u32),
    ) {
        let mut groups = out.chunks_exact_mut(LANES);
        let mut first = 0;
        for group in &mut groups {
            let mut at = [0u32; LANES];
            for _ in 0..self.depth {
                for (lane, i) in at.iter_mut().enumerate() {
                    *i = self.step::<R, KINDS>(rows, *i, row_of(first + lane));
                }
            }
            for (o, &i) in group.iter_mut().zip(&at) {
                visit(o, i);
            }
            first += LANES;
        }
        for (lane, o) in groups.into_remainder().iter_mut().enumerate() {
            let mut i = 0u32;
            for _ in 0..self.depth {
                i = self.step::<R, KINDS>(rows, i, row_of(first + lane));
            }
            visit(o, i);
        }
    }

    /// The node after node `i` for row `row` (`row < rows.n_rows()`; `i` is 0 or a node this
    /// returned).
    #[inline(always)]
    fn step<R: Rows, const KINDS: u8>(&self, rows: &R, i: u32, row: usize) -> u32 {
        // SAFETY: i is 0 or a child, both below nodes.len() (see `new`).
        let node = unsafe { self.nodes.get_unchecked(i as usize) };
        let left = if KINDS == NUMERIC_RULES {
            rows.goes_left(node, row)
        } else {
            // SAFETY: a tree with categorical rules has one rule per node (`category_rules`).
            let rule = unsafe { self.rules.get_unchecked(i as usize) };
            let numeric = node.kind == NUMERIC;
            if KINDS == CATEGORICAL_RULES {
                if numeric {
                    rows.goes_left(node, row)
                } else {
                    rows.in_category(node, rule, &self.words, row)
                }
            } else {
                // Both evaluated: `in_category` on a numeric node reads only valid words.
                let by_threshold = rows.goes_left(node, row);
                let by_category = rows.in_category(node, rule, &self.words, row);
                std::hint::select_unpredictable(numeric, by_threshold, by_category)
            }
        };
        node.children[!left as usize]
    }
}

/// `out[j]` = the leaf node that binned row `rows[j]` reaches in `tree`, by the flat walk when
/// the tree has one, else by `Tree::leaf_of_bins`. `numeric_missing`: whether a numeric feature
/// of `matrix` has missing values (bin 0); without them the walk skips the test for one.
pub(crate) fn leaf_nodes_binned(
    tree: &Tree,
    flat: Option<&FlatTree>,
    (matrix, numeric_missing): (&BinnedMatrix, bool),
    rows: &[u32],
    out: &mut [u32],
) {
    assert_eq!(rows.len(), out.len(), "one leaf per row");
    match flat {
        Some(flat) => {
            assert!(
                rows.iter().all(|&r| (r as usize) < matrix.n_rows()),
                "rows out of range"
            );
            let rows_of = |j: usize| rows[j] as usize;
            if numeric_missing {
                flat.walk_rows(&BinnedRows::<true>(matrix), rows_of, out, |o, i| *o = i);
            } else {
                flat.walk_rows(&BinnedRows::<false>(matrix), rows_of, out, |o, i| *o = i);
            }
        }
        None => {
            for (&r, o) in rows.iter().zip(out) {
                *o = tree.leaf_of_bins(matrix.row(r as usize)) as u32;
            }
        }
    }
}

/// The `CategoryRule` of every node (a leaf takes the root's) and the words they index; `None`
/// if the words would not fit u32 offsets.
fn category_rules(tree: &Tree) -> Option<(Vec<CategoryRule>, Vec<u64>)> {
    let mut words = Vec::new();
    let mut rules: Vec<CategoryRule> = tree
        .nodes
        .iter()
        .map(|n| match n.category {
            Some(c) if !n.is_leaf() => {
                // In range: `FlatTree::new` checked c against the tree's sets.
                let split = &tree.categories[c as usize];
                let rule = CategoryRule {
                    start: u32::try_from(words.len()).ok()?,
                    n_code_words: u32::try_from(split.left_codes.len()).ok()?,
                };
                words.extend_from_slice(&split.left_bins.0);
                words.extend_from_slice(&split.left_codes);
                words.push(if n.default_left { u64::MAX } else { 0 });
                Some(rule)
            }
            _ => Some(CategoryRule::default()),
        })
        .collect::<Option<_>>()?;
    u32::try_from(words.len()).ok()?;
    // Leaves evaluate the root's rule (see `FlatTree::new`).
    let root = rules[0];
    for (rule, n) in rules.iter_mut().zip(&tree.nodes) {
        if n.is_leaf() {
            *rule = root;
        }
    }
    Some((rules, words))
}

/// Data a flat tree can be evaluated on.
trait Rows {
    fn n_rows(&self) -> usize;
    /// For `row < n_rows()` and a numeric node of a `FlatTree` built for these columns.
    fn goes_left(&self, node: &FlatNode, row: usize) -> bool;
    /// The same for a categorical node of a tree and its rule; `words` is the tree's. Also
    /// called on numeric nodes of trees with both kinds (the result is then ignored), with the
    /// default rule (`category_rules`): it must read only valid memory then too.
    fn in_category(&self, node: &FlatNode, rule: &CategoryRule, words: &[u64], row: usize) -> bool;
}

/// Rows `start..start + n_rows` of a frame (n_rows ≤ `BLOCK_ROWS`), copied into one buffer,
/// feature j at `values[j << BLOCK_SHIFT..]`: numbers as they are, categorical codes as the bits
/// of an f64 (`MISSING_CODE` for a missing, negative, code).
pub(crate) struct RawBlock {
    values: Vec<f64>,
    n_rows: usize,
    /// Whether a numeric value of the block is NaN (missing). Most blocks have none, and their
    /// walk then skips the test for one (`RawRows<false>`).
    has_nan: bool,
}

impl RawBlock {
    #[inline(always)]
    fn value(&self, node: &FlatNode, row: usize) -> f64 {
        // SAFETY: the node tests a feature of the model (`FlatTree::new`), which has a slot of
        // BLOCK_ROWS values (`RawColumns::block` sizes the buffer for every feature of the
        // frame, and the frame's features were checked against the model), and
        // row < n_rows ≤ BLOCK_ROWS (`walk`).
        unsafe {
            *self
                .values
                .get_unchecked(((node.feature as usize) << BLOCK_SHIFT) + row)
        }
    }
}

/// A raw block walked by the trees. `MISSING`: whether a numeric value may be NaN; without
/// one, the numeric test is the comparison alone, the same decision for a number (about a fifth
/// of the instructions of a step).
struct RawRows<'a, const MISSING: bool>(&'a RawBlock);

impl<const MISSING: bool> Rows for RawRows<'_, MISSING> {
    fn n_rows(&self) -> usize {
        self.0.n_rows
    }
    #[inline(always)]
    fn goes_left(&self, node: &FlatNode, row: usize) -> bool {
        let x = self.0.value(node, row);
        // NaN compares false, so it goes left only by default.
        (x <= node.threshold) | (MISSING && x.is_nan() & node.default_left)
    }
    #[inline(always)]
    fn in_category(&self, node: &FlatNode, rule: &CategoryRule, words: &[u64], row: usize) -> bool {
        // A code, or MISSING_CODE (`RawColumns::block`). `Tree::leaf_of_raw` sends missing
        // codes and codes past the set by default.
        let code = self.0.value(node, row).to_bits();
        if node.kind != MANY_WORDS {
            let inside = code < 64;
            (inside & (node.threshold.to_bits() >> (code & 63) & 1 == 1))
                | (!inside & node.default_left)
        } else {
            let n = rule.n_code_words as usize;
            let word = n.min((code >> 6) as usize);
            // SAFETY: start + BIN_WORDS + n is the rule's last word, below words.len()
            // (`category_rules`), and word ≤ n.
            let bits = unsafe { *words.get_unchecked(rule.start as usize + BIN_WORDS + word) };
            bits >> (code & 63) & 1 == 1
        }
    }
}

/// Binned rows walked by the trees. `MISSING`: whether a numeric feature may have rows in its
/// missing bin 0; without them, the numeric test is the comparison alone, the same decision
/// for a bin above 0.
struct BinnedRows<'a, const MISSING: bool>(&'a BinnedMatrix);

impl<const MISSING: bool> Rows for BinnedRows<'_, MISSING> {
    fn n_rows(&self) -> usize {
        self.0.n_rows()
    }
    #[inline(always)]
    fn goes_left(&self, node: &FlatNode, row: usize) -> bool {
        let b = self.0.get(row, node.feature as usize);
        if MISSING {
            ((b != 0) & (b <= node.bin)) | ((b == 0) & node.default_left)
        } else {
            b <= node.bin
        }
    }
    #[inline(always)]
    fn in_category(&self, node: &FlatNode, rule: &CategoryRule, words: &[u64], row: usize) -> bool {
        // The bin set, as `Tree::leaf_of_bins` reads it (missing is bin 0, in the set or not).
        let b = self.0.get(row, node.feature as usize);
        // SAFETY: every rule's BIN_WORDS words start at `start` (`category_rules`: a numeric
        // node's default rule starts at 0, and a tree with categorical rules has a set there),
        // and b >> 6 < 4.
        let bits = unsafe { *words.get_unchecked(rule.start as usize + (b >> 6) as usize) };
        bits >> (b & 63) & 1 == 1
    }
}

/// A tree in the form prediction uses.
pub(crate) enum Predictor<'t> {
    Oblivious(ObliviousTable),
    Flat(FlatTree),
    General(&'t Tree),
}

impl<'t> Predictor<'t> {
    /// `numeric[j]`: feature j of the model is numeric.
    pub(crate) fn new(tree: &'t Tree, numeric: &[bool]) -> Self {
        match FlatTree::new(tree, numeric) {
            Some(flat) => {
                ObliviousTable::new(&flat).map_or(Predictor::Flat(flat), Predictor::Oblivious)
            }
            None => Predictor::General(tree),
        }
    }

    /// `new` without the leaf table of oblivious trees: they are walked (what the table is
    /// measured against).
    pub(crate) fn walking(tree: &'t Tree, numeric: &[bool]) -> Self {
        FlatTree::new(tree, numeric).map_or(Predictor::General(tree), Predictor::Flat)
    }

    /// `out[i] += weight · tree(row start + i)` on raw columns, where `block` holds the rows
    /// `start..start + out.len()`.
    pub(crate) fn add_raw(
        &self,
        frame: &Frame<'_>,
        block: &RawBlock,
        start: usize,
        weight: f64,
        out: &mut [f64],
    ) {
        match self {
            Predictor::Oblivious(table) if block.has_nan => {
                table.add_to(&RawRows::<true>(block), 0, weight, out)
            }
            Predictor::Oblivious(table) => table.add_to(&RawRows::<false>(block), 0, weight, out),
            Predictor::Flat(flat) if block.has_nan => {
                flat.add_to(&RawRows::<true>(block), 0, weight, out)
            }
            Predictor::Flat(flat) => flat.add_to(&RawRows::<false>(block), 0, weight, out),
            Predictor::General(tree) => {
                for (i, o) in out.iter_mut().enumerate() {
                    *o += weight * tree.predict_raw(frame, start + i);
                }
            }
        }
    }

    /// `out[i] += weight · tree(row start + i)` on binned rows.
    pub(crate) fn add_binned(
        &self,
        matrix: &BinnedMatrix,
        start: usize,
        weight: f64,
        out: &mut [f64],
    ) {
        match self {
            Predictor::Oblivious(table) => {
                table.add_to(&BinnedRows::<true>(matrix), start, weight, out)
            }
            Predictor::Flat(flat) => flat.add_to(&BinnedRows::<true>(matrix), start, weight, out),
            Predictor::General(tree) => {
                for (i, o) in out.iter_mut().enumerate() {
                    *o += weight * tree.predict_bins(matrix.row(start + i));
                }
            }
        }
    }
}

/// The columns of a frame, looked up once per prediction.
pub(crate) struct RawColumns<'a>(Vec<FeatureValues<'a>>);

impl<'a> RawColumns<'a> {
    pub(crate) fn new(frame: &Frame<'a>) -> Self {
        RawColumns(frame.features().iter().map(|f| f.values).collect())
    }

    /// Rows `start..start + n_rows` (n_rows ≤ `BLOCK_ROWS`) in the layout of `RawBlock`.
    pub(crate) fn block(&self, start: usize, n_rows: usize) -> RawBlock {
        assert!(n_rows <= BLOCK_ROWS);
        let mut values = vec![0.0; self.0.len() << BLOCK_SHIFT];
        let mut has_nan = false;
        for (slot, column) in values.chunks_exact_mut(BLOCK_ROWS).zip(&self.0) {
            match *column {
                FeatureValues::Numeric(x) => {
                    slot[..n_rows].copy_from_slice(&x[start..start + n_rows]);
                    has_nan |= slot[..n_rows].iter().any(|v| v.is_nan());
                }
                FeatureValues::Strided(x) => {
                    for (v, x) in slot.iter_mut().zip(x.rows(start, n_rows)) {
                        *v = x;
                    }
                    has_nan |= slot[..n_rows].iter().any(|v| v.is_nan());
                }
                FeatureValues::Categorical { codes, .. } => {
                    for (v, &c) in slot.iter_mut().zip(&codes[start..start + n_rows]) {
                        *v = f64::from_bits(if c < 0 { MISSING_CODE } else { c as u64 });
                    }
                }
            }
        }
        RawBlock {
            values,
            n_rows,
            has_nan,
        }
    }
}

mod oblivious {
    //! Prediction of an oblivious tree (tree/oblivious.rs) by bit indexing: each level has one
    //! rule, so a row's leaf is the number whose bits are its level tests (1: right), first level
    //! highest, and its value is one load from a table of 2^depth values. No test waits on the one
    //! before it, as each step of a walk waits on the node the last step loaded.
    //!
    //! Any tree whose splits of each level share one rule takes this form, wherever it came from; a
    //! leaf above the last level (a node where the level's rule was inadmissible) fills every entry
    //! of the table under it with its value.

    use super::{FlatNode, FlatTree, Rows, BOTH_RULES, CATEGORICAL_RULES, NUMERIC, NUMERIC_RULES};
    use crate::tree::tree_params::MAX_OBLIVIOUS_DEPTH;

    /// See `ObliviousTable::new`. A full oblivious tree has 2^depth entries for 2^(depth+1) − 1
    /// nodes.
    const MAX_ENTRIES_PER_NODE: usize = 4;

    #[derive(Debug, Clone)]
    pub(crate) struct ObliviousTable {
        /// The rule of each level, as the flat tree holds it.
        levels: Vec<FlatNode>,
        /// Each level's `CategoryRule` into the flat tree's words (empty without categorical rules).
        rules: Vec<super::CategoryRule>,
        words: Vec<u64>,
        values: Vec<f64>,
        rule_kinds: u8,
    }

    impl ObliviousTable {
        /// The table of `flat`, if every level's splits share one rule, at depth 2 (a stump walks
        /// as fast) to `MAX_OBLIVIOUS_DEPTH`, and the table is at most `MAX_ENTRIES_PER_NODE` times
        /// the tree's nodes (a sparse tree, such as a chain of one split per level, would cost more
        /// to tabulate at each prediction than its walk).
        pub(crate) fn new(flat: &FlatTree) -> Option<ObliviousTable> {
            let depth = flat.depth;
            if !(2..=MAX_OBLIVIOUS_DEPTH).contains(&depth)
                || (1 << depth) > MAX_ENTRIES_PER_NODE * flat.nodes.len()
            {
                return None;
            }
            let is_leaf = |i: u32| flat.nodes[i as usize].children[0] == i;
            let mut levels = Vec::with_capacity(depth);
            let mut rules = Vec::new();
            let mut level = vec![0u32];
            for _ in 0..depth {
                let mut splits = level.iter().copied().filter(|&i| !is_leaf(i));
                let first = splits.next()?;
                if !splits.all(|i| flat.same_rule(first, i)) {
                    return None;
                }
                levels.push(flat.nodes[first as usize]);
                if !flat.rules.is_empty() {
                    rules.push(flat.rules[first as usize]);
                }
                level = level
                    .iter()
                    .flat_map(|&i| flat.nodes[i as usize].children)
                    .collect();
            }
            // `level` now holds the node reached by each index, in index order.
            let values = level.iter().map(|&i| flat.values[i as usize]).collect();
            Some(ObliviousTable {
                levels,
                rules,
                words: flat.words.clone(),
                values,
                rule_kinds: flat.rule_kinds,
            })
        }

        /// Adds `weight · tree(row)` to `out[i]` for rows `start..start + out.len()`.
        #[inline]
        pub(super) fn add_to<R: Rows>(&self, rows: &R, start: usize, weight: f64, out: &mut [f64]) {
            assert!(start + out.len() <= rows.n_rows(), "rows out of range");
            match self.rule_kinds {
                NUMERIC_RULES => self.add_kinds::<R, NUMERIC_RULES>(rows, start, weight, out),
                CATEGORICAL_RULES => {
                    self.add_kinds::<R, CATEGORICAL_RULES>(rows, start, weight, out)
                }
                _ => self.add_kinds::<R, BOTH_RULES>(rows, start, weight, out),
            }
        }

        #[inline(always)]
        fn add_kinds<R: Rows, const KINDS: u8>(
            &self,
            rows: &R,
            start: usize,
            weight: f64,
            out: &mut [f64],
        ) {
            for (j, o) in out.iter_mut().enumerate() {
                let row = start + j;
                let mut index = 0usize;
                for (d, level) in self.levels.iter().enumerate() {
                    let left = if KINDS == NUMERIC_RULES || level.kind == NUMERIC {
                        rows.goes_left(level, row)
                    } else {
                        rows.in_category(level, &self.rules[d], &self.words, row)
                    };
                    index = (index << 1) | usize::from(!left);
                }
                // SAFETY: index < 2^levels.len() = values.len() (`new`).
                *o += weight * unsafe { self.values.get_unchecked(index) };
            }
        }
    }

    impl FlatTree {
        /// Whether splits `a` and `b` have the same rule.
        fn same_rule(&self, a: u32, b: u32) -> bool {
            let (x, y) = (&self.nodes[a as usize], &self.nodes[b as usize]);
            let same_test = x.feature == y.feature
                && x.kind == y.kind
                && x.bin == y.bin
                && x.default_left == y.default_left
                && x.threshold.to_bits() == y.threshold.to_bits();
            same_test
                && (self.rules.is_empty() || {
                    let words = |i: u32| {
                        let rule = self.rules[i as usize];
                        let start = rule.start as usize;
                        &self.words
                            [start..start + super::BIN_WORDS + rule.n_code_words as usize + 1]
                    };
                    x.kind == NUMERIC || words(a) == words(b)
                })
        }
    }
}
use oblivious::ObliviousTable;

#[cfg(test)]
#[path = "flat_tests.rs"]
mod tests;
