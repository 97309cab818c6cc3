//! A fitted regression tree. Every node keeps both forms of its rule: the bin rule used on
//! binned data and the raw rule (`x ≤ threshold`, or a set of category codes) used on raw data;
//! both send every row the same way.

use super::bins::BinSet;
use crate::data::nonfinite::NonFinite;
use crate::data::{FeatureValues, Frame};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};

/// Leaves have `left == right == 0` (the root is never a child).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// The feature the rule reads (an index into the model's features).
    pub feature: u32,
    /// The child for rows the rule sends left (0: this node is a leaf).
    pub left: u32,
    /// The child for the other rows.
    pub right: u32,
    /// Numeric rule: go left when `x ≤ threshold` (+∞ when only missing values go right).
    #[serde(with = "crate::data::nonfinite")]
    pub threshold: f64,
    /// The same rule on bins: bins 1..=bin go left.
    pub bin: u8,
    /// Where missing values go.
    pub default_left: bool,
    /// Index into `Tree::categories` for a categorical rule.
    pub category: Option<u32>,
    /// The fitted value of the node (the leaf value for leaves).
    pub value: f64,
    /// Split gain (0 for leaves): the basis of gain feature importance.
    pub gain: f64,
    /// Training rows reaching the node (its cover, which SHAP weighs by).
    pub count: u32,
}

impl Node {
    /// True for a leaf.
    pub fn is_leaf(&self) -> bool {
        self.left == 0
    }
}

/// A categorical rule: the levels that go left, as bins and as codes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CategorySplit {
    /// Bins that go left.
    pub left_bins: BinSet,
    /// Bit c set when category code c goes left.
    pub left_codes: Vec<u64>,
}

/// In files (docs/model_schema.json), a tree is written in the compact layout of format versions 2
/// and 3 (`TreeFile`: one array per node field); the layout of version 1, a list of node objects,
/// is still read. A tree read on its own needs its thresholds in the file; a model's trees may
/// leave them out (`TreeFile::into_tree`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "TreeFile")]
pub struct Tree {
    /// The nodes, root first, each child after its parent.
    pub nodes: Vec<Node>,
    /// The categorical rules the nodes' `category` indices point to.
    pub categories: Vec<CategorySplit>,
}

/// A tree as a file holds it: either `nodes` (format version 1) or the compact layout, a struct
/// of arrays. In the compact layout `left`, `value` and `count` have one entry per node
/// (`left == 0`: a leaf); the fields only splits use (`right`, `feature`, `threshold`, `bin`,
/// `default_left`, `gain`, and `category`, left out when no split has a category set) have one
/// entry per split, the splits in node order. Leaves read back with those fields at the values
/// training gives leaves (0, false, no category). `threshold` may be left out when every split's
/// threshold is the one its bin gives (see `into_tree`).
///
/// Reading either layout gives the same `Tree`; whether it is a well-formed tree is
/// `Model::validate`'s business, as for trees built in memory.
#[derive(Deserialize)]
pub(crate) struct TreeFile {
    nodes: Option<Vec<Node>>,
    categories: Vec<CategorySplit>,
    left: Option<Vec<u32>>,
    value: Option<Vec<f64>>,
    count: Option<Vec<u32>>,
    right: Option<Vec<u32>>,
    feature: Option<Vec<u32>>,
    threshold: Option<Vec<NonFinite>>,
    bin: Option<Vec<u8>>,
    default_left: Option<Vec<bool>>,
    gain: Option<Vec<f64>>,
    category: Option<Vec<Option<u32>>>,
}

impl TryFrom<TreeFile> for Tree {
    type Error = String;

    fn try_from(file: TreeFile) -> Result<Tree, String> {
        file.into_tree(|_| Err("a tree read on its own needs its \"threshold\"".into()))
    }
}

impl TreeFile {
    /// The tree; a split's threshold, where the file leaves thresholds out, is `threshold_of`
    /// the split (with every other field read), or its error.
    pub(crate) fn into_tree(
        self,
        threshold_of: impl Fn(&Node) -> Result<f64, String>,
    ) -> Result<Tree, String> {
        let file = self;
        let categories = file.categories;
        let compact = [
            file.left.is_some(),
            file.value.is_some(),
            file.count.is_some(),
            file.right.is_some(),
            file.feature.is_some(),
            file.threshold.is_some(),
            file.bin.is_some(),
            file.default_left.is_some(),
            file.gain.is_some(),
            file.category.is_some(),
        ];
        if let Some(nodes) = file.nodes {
            if compact.contains(&true) {
                return Err("a tree with both \"nodes\" and node field arrays".into());
            }
            return Ok(Tree { nodes, categories });
        }
        let missing = |name: &str| format!("a tree without \"{name}\" (or \"nodes\")");
        let left = file.left.ok_or_else(|| missing("left"))?;
        let value = file.value.ok_or_else(|| missing("value"))?;
        let count = file.count.ok_or_else(|| missing("count"))?;
        let right = file.right.ok_or_else(|| missing("right"))?;
        let feature = file.feature.ok_or_else(|| missing("feature"))?;
        let threshold = file.threshold;
        let bin = file.bin.ok_or_else(|| missing("bin"))?;
        let default_left = file.default_left.ok_or_else(|| missing("default_left"))?;
        let gain = file.gain.ok_or_else(|| missing("gain"))?;
        let n_nodes = left.len();
        let n_splits = left.iter().filter(|&&l| l != 0).count();
        for (name, len, expected, what) in [
            ("value", value.len(), n_nodes, "nodes (entries of left)"),
            ("count", count.len(), n_nodes, "nodes (entries of left)"),
            (
                "right",
                right.len(),
                n_splits,
                "splits (non-zero entries of left)",
            ),
            (
                "feature",
                feature.len(),
                n_splits,
                "splits (non-zero entries of left)",
            ),
            (
                "threshold",
                threshold.as_ref().map_or(n_splits, Vec::len),
                n_splits,
                "splits (non-zero entries of left)",
            ),
            (
                "bin",
                bin.len(),
                n_splits,
                "splits (non-zero entries of left)",
            ),
            (
                "default_left",
                default_left.len(),
                n_splits,
                "splits (non-zero entries of left)",
            ),
            (
                "gain",
                gain.len(),
                n_splits,
                "splits (non-zero entries of left)",
            ),
            (
                "category",
                file.category.as_ref().map_or(n_splits, Vec::len),
                n_splits,
                "splits (non-zero entries of left)",
            ),
        ] {
            if len != expected {
                return Err(format!(
                    "\"{name}\" has {len} entries for {expected} {what}"
                ));
            }
        }
        let mut k = 0;
        let mut nodes: Vec<Node> = (left.iter().zip(&value).zip(&count))
            .map(|((&left, &value), &count)| {
                if left == 0 {
                    return Node {
                        feature: 0,
                        left: 0,
                        right: 0,
                        threshold: 0.0,
                        bin: 0,
                        default_left: false,
                        category: None,
                        value,
                        gain: 0.0,
                        count,
                    };
                }
                let node = Node {
                    feature: feature[k],
                    left,
                    right: right[k],
                    threshold: threshold.as_ref().map_or(f64::NAN, |t| t[k].0),
                    bin: bin[k],
                    default_left: default_left[k],
                    category: file.category.as_ref().and_then(|c| c[k]),
                    value,
                    gain: gain[k],
                    count,
                };
                k += 1;
                node
            })
            .collect();
        if threshold.is_none() {
            for node in nodes.iter_mut().filter(|n| !n.is_leaf()) {
                node.threshold = threshold_of(node)?;
            }
        }
        Ok(Tree { nodes, categories })
    }
}

/// Writes the compact layout (see `TreeFile`), thresholds included.
impl Serialize for Tree {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.serialize_compact(s, true)
    }
}

impl Tree {
    /// The compact layout (see `TreeFile`), `threshold` only if `with_thresholds`.
    pub(crate) fn serialize_compact<S: Serializer>(
        &self,
        s: S,
        with_thresholds: bool,
    ) -> Result<S::Ok, S::Error> {
        let nodes = &self.nodes;
        let splits = || nodes.iter().filter(|n| !n.is_leaf());
        let has_category = splits().any(|n| n.category.is_some());
        let n_fields = 9 + with_thresholds as usize + has_category as usize;
        let mut tree = s.serialize_struct("Tree", n_fields)?;
        tree.serialize_field("left", &Seq(|| nodes.iter().map(|n| n.left)))?;
        tree.serialize_field("value", &Seq(|| nodes.iter().map(|n| n.value)))?;
        tree.serialize_field("count", &Seq(|| nodes.iter().map(|n| n.count)))?;
        tree.serialize_field("right", &Seq(|| splits().map(|n| n.right)))?;
        tree.serialize_field("feature", &Seq(|| splits().map(|n| n.feature)))?;
        if with_thresholds {
            tree.serialize_field(
                "threshold",
                &Seq(|| splits().map(|n| NonFinite(n.threshold))),
            )?;
        } else {
            tree.skip_field("threshold")?;
        }
        tree.serialize_field("bin", &Seq(|| splits().map(|n| n.bin)))?;
        tree.serialize_field("default_left", &Seq(|| splits().map(|n| n.default_left)))?;
        tree.serialize_field("gain", &Seq(|| splits().map(|n| n.gain)))?;
        if has_category {
            tree.serialize_field("category", &Seq(|| splits().map(|n| n.category)))?;
        }
        tree.serialize_field("categories", &self.categories)?;
        tree.end()
    }
}

/// A sequence written straight from an iterator (no intermediate vector).
struct Seq<F>(F);

impl<F, I> Serialize for Seq<F>
where
    F: Fn() -> I,
    I: Iterator,
    I::Item: Serialize,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq((self.0)())
    }
}

impl Tree {
    /// Leaves of the tree.
    pub fn n_leaves(&self) -> usize {
        self.nodes.iter().filter(|n| n.is_leaf()).count()
    }

    /// Split levels along the longest path (a stump has depth 1).
    ///
    /// One pass in node order, no recursion: children come after their parent (grown trees are
    /// built that way and `Model::validate` checks it of loaded ones), so a node's level is known
    /// before its children's. On a tree breaking that rule the result is meaningless, but the
    /// pass still ends after one look at each node.
    pub fn depth(&self) -> usize {
        let mut levels = vec![0usize; self.nodes.len()];
        let mut depth = 0;
        for (i, node) in self.nodes.iter().enumerate() {
            if node.is_leaf() {
                continue;
            }
            let child_level = levels[i] + 1;
            depth = depth.max(child_level);
            for child in [node.left, node.right] {
                if let Some(level) = levels.get_mut(child as usize) {
                    *level = child_level;
                }
            }
        }
        depth
    }

    /// The leaf reached by a row of bins.
    #[inline]
    pub fn leaf_of_bins(&self, bins: &[u8]) -> usize {
        let mut i = 0;
        loop {
            let n = &self.nodes[i];
            if n.is_leaf() {
                return i;
            }
            let bin = bins[n.feature as usize];
            let left = match n.category {
                Some(c) => self.categories[c as usize].left_bins.contains(bin),
                None => {
                    if bin == 0 {
                        n.default_left
                    } else {
                        bin <= n.bin
                    }
                }
            };
            i = if left { n.left } else { n.right } as usize;
        }
    }

    /// The leaf reached by row `row` of raw data.
    #[inline]
    pub fn leaf_of_raw(&self, frame: &Frame<'_>, row: usize) -> usize {
        let mut i = 0;
        loop {
            let n = &self.nodes[i];
            if n.is_leaf() {
                return i;
            }
            i = if self.goes_left_raw(n, frame, row) {
                n.left
            } else {
                n.right
            } as usize;
        }
    }

    /// Whether row `row` of raw data goes left at split `node` of this tree: a missing value
    /// (NaN, or a negative or unknown code) takes the default direction.
    #[inline]
    pub(crate) fn goes_left_raw(&self, node: &Node, frame: &Frame<'_>, row: usize) -> bool {
        match frame.features()[node.feature as usize].values {
            values @ (FeatureValues::Numeric(_) | FeatureValues::Strided(_)) => {
                let v = values.numeric().expect("numeric").get(row);
                if v.is_nan() {
                    node.default_left
                } else {
                    v <= node.threshold
                }
            }
            FeatureValues::Categorical { codes, .. } => {
                let split = &self.categories[node.category.expect("categorical rule") as usize];
                match usize::try_from(codes[row]) {
                    Ok(c) => split
                        .left_codes
                        .get(c / 64)
                        .map_or(node.default_left, |w| w >> (c % 64) & 1 == 1),
                    Err(_) => node.default_left,
                }
            }
        }
    }

    /// The tree's value for a row of bins.
    pub fn predict_bins(&self, bins: &[u8]) -> f64 {
        self.nodes[self.leaf_of_bins(bins)].value
    }

    /// The tree's value for row `row` of raw columns.
    pub fn predict_raw(&self, frame: &Frame<'_>, row: usize) -> f64 {
        self.nodes[self.leaf_of_raw(frame, row)].value
    }

    /// Multiplies every node value by `factor` (a step size applied to the whole tree).
    pub fn scale(&mut self, factor: f64) {
        for n in &mut self.nodes {
            n.value *= factor;
        }
    }

    /// Adds `offset` to every node value (a constant the tree was fitted without).
    pub fn shift(&mut self, offset: f64) {
        for n in &mut self.nodes {
            n.value += offset;
        }
    }
}
