//! optboost: the boosting algorithms of optimization theory on one histogram-tree engine.
pub mod error;
pub mod loss;

pub use error::{Error, Result};
