//! Model files: JSON with a format tag and a version, so that a file that cannot be read says why.
//!
//! Version 2 writes each tree in a compact layout, one array per node field (`Tree`'s serde, in
//! src/tree/regression_tree.rs); version 1 files, a list of node objects per tree, are still
//! read. Both give the same in-memory `Model`, which is then validated.

use super::Model;
use crate::error::{Error, Result};
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use std::fmt;
use std::path::Path;

pub const FORMAT_VERSION: u32 = 2;
/// The versions `from_json` reads.
const READ_VERSIONS: [u32; 2] = [1, 2];
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
    pub fn to_json(&self) -> String {
        serde_json::to_string(&FileRef {
            format: FORMAT_TAG,
            version: FORMAT_VERSION,
            model: self,
        })
        .expect("a model always serializes")
    }

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

    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        std::fs::write(path, self.to_json())
            .map_err(|e| Error::Model(format!("cannot write {}: {e}", path.display())))
    }

    pub fn load(path: impl AsRef<Path>) -> Result<Model> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Model(format!("cannot read {}: {e}", path.display())))?;
        Model::from_json(&text)
    }
}

/// The checks of a parsed file: tag, version, and the model's own validation.
fn accept(file: FileOwned) -> Result<Model> {
    check_tag_and_version(file.format.as_deref(), file.version)?;
    let model = file
        .model
        .ok_or_else(|| Error::Model("malformed model: missing field `model`".into()))?;
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
