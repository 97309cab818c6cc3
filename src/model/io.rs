//! Model files: JSON with a format tag and a version, so that a file that cannot be read says why.

use super::Model;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const FORMAT_VERSION: u32 = 1;
const FORMAT_TAG: &str = "optboost-model";

#[derive(Serialize)]
struct FileRef<'a> {
    format: &'a str,
    version: u32,
    model: &'a Model,
}

#[derive(Deserialize)]
struct Header {
    format: Option<String>,
    version: Option<u32>,
}

#[derive(Deserialize)]
struct FileOwned {
    model: Model,
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
        let header: Header = serde_json::from_str(text).map_err(|e| {
            if e.is_eof() {
                Error::Model("the file is truncated (JSON ends early)".into())
            } else {
                Error::Model(format!("not an optboost model file: {e}"))
            }
        })?;
        if header.format.as_deref() != Some(FORMAT_TAG) {
            return Err(Error::Model(format!(
                "not an optboost model file (no \"format\": \"{FORMAT_TAG}\" tag)"
            )));
        }
        match header.version {
            Some(FORMAT_VERSION) => {}
            Some(v) => {
                return Err(Error::Model(format!(
                    "model format version {v}; this optboost reads version {FORMAT_VERSION}"
                )))
            }
            None => return Err(Error::Model("the model file has no format version".into())),
        }
        let file: FileOwned = serde_json::from_str(text)
            .map_err(|e| Error::Model(format!("malformed model: {e}")))?;
        // A hand-edited or corrupted file must fail here, not at prediction time.
        file.model.validate()?;
        Ok(file.model)
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
