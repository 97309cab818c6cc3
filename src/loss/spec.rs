//! The public loss vocabulary (minimal; superseded by the full set of losses).
use super::{Loss, Squared};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "snake_case")]
pub enum LossSpec {
    Squared,
}

pub enum Objective {
    Scalar(Box<dyn Loss>),
}

impl std::str::FromStr for LossSpec {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "squared" => Ok(LossSpec::Squared),
            _ => Err(Error::param("loss", s, "squared")),
        }
    }
}

impl std::fmt::Display for LossSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "squared")
    }
}

impl LossSpec {
    pub fn is_binary(&self) -> bool {
        false
    }
    pub fn is_multiclass(&self) -> bool {
        false
    }
    pub fn build(&self, _n_classes: usize) -> Result<Objective> {
        Ok(Objective::Scalar(Box::new(Squared)))
    }
}
