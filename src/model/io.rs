//! Model files: JSON with a format tag and a version, so that a file that cannot be read says why.
//!
//! Versions 2 and 3 write each tree in a compact layout, one array per node field (`Tree`'s
//! serde, in src/tree/regression_tree.rs); version 3 leaves out a tree's thresholds when its
//! bins imply them (`implied_threshold`), as they do in every trained tree: the thresholds were
//! a third of a version-2 file. Version 1 files, a list of node objects per tree, are still
//! read. All give the same in-memory `Model`, which is then validated.

use super::{BuiltLoss, FeatureSpec, Model};
use crate::data::BinMapper;
use crate::error::{Error, Result};
use crate::loss::LossSpec;
use crate::params::Method;
use crate::tree::{Node, Tree, TreeFile};
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use std::fmt;
use std::io::Read;
use std::path::Path;

/// The newest format version: 4 adds the level names of categorical columns. A file is written
/// with the lowest version that holds its model (3 without level names), so that a reader of
/// version 3 reads every model it can predict with, and refuses, rather than misreads, one whose
/// columns must be matched by level name.
pub const FORMAT_VERSION: u32 = 4;
/// The versions `from_json` reads.
const READ_VERSIONS: [u32; 4] = [1, 2, 3, 4];
const FORMAT_TAG: &str = "optboost-model";

#[derive(Serialize)]
struct FileRef<'a> {
    format: &'a str,
    version: u32,
    model: &'a Model,
}

/// Only the header: read when the whole file does not parse, to say why in the header's terms
/// (not a model file, another version) where that is the reason.
#[derive(Deserialize)]
struct Header {
    format: Option<String>,
    version: Option<u32>,
}

/// The whole file, parsed in one pass. Either layout of trees reads into the same `Model`, so the
/// model need not wait for the version (which may come after it in a hand-edited file).
#[derive(Deserialize)]
struct FileOwned {
    format: Option<String>,
    version: Option<u32>,
    model: Option<Model>,
}

impl Model {
    /// The model file's text: versioned JSON that `from_json` reads back bit for bit.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&FileRef {
            format: FORMAT_TAG,
            version: if self.has_levels() { FORMAT_VERSION } else { 3 },
            model: self,
        })
        .expect("a model always serializes")
    }

    /// A model from a file's text, refused with the reason unless it is valid.
    pub fn from_json(text: &str) -> Result<Model> {
        if text.trim().is_empty() {
            return Err(Error::Model("the file is empty".into()));
        }
        match serde_json::from_str::<FileOwned>(text) {
            Ok(file) => accept(file),
            // The header's verdict (tag, version, truncation) comes first, as when the header
            // was read on its own.
            Err(e) => Err(check_header(text).err().unwrap_or_else(|| malformed(e))),
        }
    }

    /// A model file nested in a larger JSON object under `key` (the Python front end's file,
    /// whose other entries are the formula and history), parsed in one pass: the model, and the
    /// raw JSON text of every other top-level entry, in file order. Fails on anything
    /// `from_json` would reject, and also when the text is not such an object or repeats a
    /// key; a caller wanting the reason in its own terms reads the file its own way then.
    pub fn from_json_in(text: &str, key: &str) -> Result<(Model, Vec<(String, String)>)> {
        let mut de = serde_json::Deserializer::from_str(text);
        let (file, others) = de
            .deserialize_map(EnvelopeVisitor { key })
            .and_then(|parsed| de.end().map(|()| parsed))
            .map_err(|e| Error::Model(format!("not a model file with a \"{key}\" entry: {e}")))?;
        let file = file.ok_or_else(|| Error::Model(format!("no \"{key}\" entry")))?;
        Ok((accept(file)?, others))
    }

    /// Writes `to_json` to `path`.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        std::fs::write(path, self.to_json())
            .map_err(|e| Error::Model(format!("cannot write {}: {e}", path.display())))
    }

    /// Reads the model file at `path`: a regular file of at most `MAX_FILE_BYTES`.
    pub fn load(path: impl AsRef<Path>) -> Result<Model> {
        Model::from_json(&read_model_file(path.as_ref())?)
    }
}

/// The largest model file `Model::load` reads: 2 GiB, as the Python front end's `load`.
pub const MAX_FILE_BYTES: u64 = 2 << 30;

/// The text of the file at `path` if it is a regular file of at most `MAX_FILE_BYTES`, checked
/// on the opened file before anything is read: a device such as /dev/zero never ends, and a
/// FIFO would block until some writer came.
fn read_model_file(path: &Path) -> Result<String> {
    let cannot = |e: std::io::Error| Error::Model(format!("cannot read {}: {e}", path.display()));
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Opening a FIFO for reading waits for a writer; without blocking it opens at once and
        // is refused below. Reads of a regular file ignore the flag.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(cannot)?;
    let metadata = file.metadata().map_err(cannot)?;
    if !metadata.is_file() {
        return Err(Error::Model(format!(
            "{} is not a regular file (a directory, device, FIFO or socket is not a model file)",
            path.display()
        )));
    }
    let too_large = |size: u64| {
        Error::Model(format!(
            "{} is {size} bytes; model files are at most {MAX_FILE_BYTES}",
            path.display()
        ))
    };
    if metadata.len() > MAX_FILE_BYTES {
        return Err(too_large(metadata.len()));
    }
    // The size is read again as the file is: it may grow after the check.
    let mut text = String::new();
    (file.take(MAX_FILE_BYTES + 1).read_to_string(&mut text)).map_err(cannot)?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(text.len() as u64));
    }
    Ok(text)
}

/// The checks of a parsed file: tag, version, and the model's own validation.
fn accept(file: FileOwned) -> Result<Model> {
    check_tag_and_version(file.format.as_deref(), file.version)?;
    let model = file
        .model
        .ok_or_else(|| Error::Model("malformed model: missing field `model`".into()))?;
    if model.has_levels() && file.version < Some(4) {
        return Err(Error::Model(format!(
            "level names in a file of format version {} (they came with version 4)",
            file.version.unwrap_or(0)
        )));
    }
    // A hand-edited or corrupted file must fail here, not at prediction time.
    model.validate()?;
    Ok(model)
}

fn check_header(text: &str) -> Result<()> {
    let header: Header = serde_json::from_str(text).map_err(|e| {
        if e.is_eof() {
            Error::Model("the file is truncated (JSON ends early)".into())
        } else {
            Error::Model(format!("not an optboost model file: {e}"))
        }
    })?;
    check_tag_and_version(header.format.as_deref(), header.version)
}

fn check_tag_and_version(format: Option<&str>, version: Option<u32>) -> Result<()> {
    if format != Some(FORMAT_TAG) {
        return Err(Error::Model(format!(
            "not an optboost model file (no \"format\": \"{FORMAT_TAG}\" tag)"
        )));
    }
    match version {
        Some(v) if READ_VERSIONS.contains(&v) => Ok(()),
        Some(v) => Err(Error::Model(format!(
            "model format version {v}; this optboost reads versions 1 to {FORMAT_VERSION}"
        ))),
        None => Err(Error::Model("the model file has no format version".into())),
    }
}

fn malformed(e: serde_json::Error) -> Error {
    Error::Model(format!("malformed model: {e}"))
}

/// The entries of the enclosing object: the model file under `key`, every other entry as raw
/// text (copied, not parsed into values).
struct EnvelopeVisitor<'k> {
    key: &'k str,
}

type Envelope = (Option<FileOwned>, Vec<(String, String)>);

impl<'de> Visitor<'de> for EnvelopeVisitor<'_> {
    type Value = Envelope;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Envelope, A::Error> {
        let mut file = None;
        let mut others: Vec<(String, String)> = Vec::new();
        while let Some(name) = map.next_key::<String>()? {
            let repeated = if name == self.key {
                file.replace(map.next_value::<FileOwned>()?).is_some()
            } else {
                let raw = map.next_value::<Box<RawValue>>()?;
                let repeated = others.iter().any(|(n, _)| *n == name);
                others.push((name.clone(), raw.get().to_owned()));
                repeated
            };
            if repeated {
                return Err(de::Error::custom(format!(
                    "the key \"{name}\" appears twice"
                )));
            }
        }
        Ok((file, others))
    }
}

/// The threshold training gives a split, from its bin and its feature's cuts: bins 1..=bin go
/// left, so a numeric rule's threshold is the bin's upper cut (+∞ for the last bin, which holds
/// every value above the last cut); a categorical rule's is unused and 0. `None` when the model
/// has no such numeric feature or bin.
fn implied_threshold(features: &[FeatureSpec], node: &Node) -> Option<f64> {
    if node.category.is_some() {
        return Some(0.0);
    }
    match &features.get(node.feature as usize)?.mapper {
        BinMapper::Numeric { cuts } if (1..=cuts.len() + 1).contains(&(node.bin as usize)) => Some(
            cuts.get(node.bin as usize - 1)
                .copied()
                .unwrap_or(f64::INFINITY),
        ),
        _ => None,
    }
}

/// A model as a file writes it (`Model`'s fields, in this order).
#[derive(Serialize)]
struct ModelRef<'a> {
    method: &'a Method,
    loss: &'a LossSpec,
    n_outputs: usize,
    bias: &'a [f64],
    trees: TreesRef<'a>,
    weights: &'a [f64],
    tree_outputs: &'a [u32],
    features: &'a [FeatureSpec],
    best_iteration: Option<usize>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    iteration_trees: &'a [usize],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    iteration_weights: &'a [Vec<f64>],
}

/// The trees, each without its thresholds when they are all implied (bit for bit) by its bins.
struct TreesRef<'a> {
    trees: &'a [Tree],
    features: &'a [FeatureSpec],
}

struct TreeRef<'a> {
    tree: &'a Tree,
    features: &'a [FeatureSpec],
}

impl Serialize for TreesRef<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let features = self.features;
        s.collect_seq(self.trees.iter().map(|tree| TreeRef { tree, features }))
    }
}

impl Serialize for TreeRef<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let implied = (self.tree.nodes.iter().filter(|n| !n.is_leaf())).all(|n| {
            implied_threshold(self.features, n).map(f64::to_bits) == Some(n.threshold.to_bits())
        });
        self.tree.serialize_compact(s, !implied)
    }
}

impl Serialize for Model {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        ModelRef {
            method: &self.method,
            loss: &self.loss,
            n_outputs: self.n_outputs,
            bias: &self.bias,
            trees: TreesRef {
                trees: &self.trees,
                features: &self.features,
            },
            weights: &self.weights,
            tree_outputs: &self.tree_outputs,
            features: &self.features,
            best_iteration: self.best_iteration,
            iteration_trees: &self.iteration_trees,
            iteration_weights: &self.iteration_weights,
        }
        .serialize(s)
    }
}

/// A model as a file holds it: trees in either layout, thresholds possibly left out.
#[derive(Deserialize)]
struct ModelFile {
    method: Method,
    loss: LossSpec,
    n_outputs: usize,
    bias: Vec<f64>,
    trees: Vec<TreeFile>,
    weights: Vec<f64>,
    tree_outputs: Vec<u32>,
    features: Vec<FeatureSpec>,
    best_iteration: Option<usize>,
    #[serde(default)]
    iteration_trees: Vec<usize>,
    #[serde(default)]
    iteration_weights: Vec<Vec<f64>>,
}

impl<'de> Deserialize<'de> for Model {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Model, D::Error> {
        let file = ModelFile::deserialize(d)?;
        let features = file.features;
        let trees = (file.trees.into_iter().enumerate())
            .map(|(j, tree)| {
                // A split with no implied threshold (a feature or bin the model lacks) is
                // refused by `Model::validate`, which names the feature or bin; the threshold
                // it holds until then is never used.
                tree.into_tree(|node| Ok(implied_threshold(&features, node).unwrap_or(0.0)))
                    .map_err(|e| de::Error::custom(format!("tree {j}: {e}")))
            })
            .collect::<std::result::Result<_, _>>()?;
        Ok(Model {
            method: file.method,
            loss: file.loss,
            n_outputs: file.n_outputs,
            bias: file.bias,
            trees,
            weights: file.weights,
            tree_outputs: file.tree_outputs,
            features,
            best_iteration: file.best_iteration,
            iteration_trees: file.iteration_trees,
            iteration_weights: file.iteration_weights,
            built_loss: BuiltLoss::default(),
        })
    }
}
