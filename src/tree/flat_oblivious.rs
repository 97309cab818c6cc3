//! Prediction of an oblivious tree (tree/oblivious.rs) by bit indexing: each level has one
//! rule, so a row's leaf is the number whose bits are its level tests (1: right), first level
//! highest, and its value is one load from a table of 2^depth values. No test waits on the one
//! before it, as each step of a walk waits on the node the last step loaded.
//!
//! Any tree whose splits of each level share one rule takes this form, wherever it came from; a
//! leaf above the last level (a node where the level's rule was inadmissible) fills every entry
//! of the table under it with its value.

use super::{FlatNode, FlatTree, Rows, BOTH_RULES, CATEGORICAL_RULES, NUMERIC, NUMERIC_RULES};
use crate::tree::oblivious::MAX_OBLIVIOUS_DEPTH;

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
            CATEGORICAL_RULES => self.add_kinds::<R, CATEGORICAL_RULES>(rows, start, weight, out),
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
                    &self.words[start..start + super::BIN_WORDS + rule.n_code_words as usize + 1]
                };
                x.kind == NUMERIC || words(a) == words(b)
            })
    }
}
