#![doc = include_str!("../README.md")]
//! optboost: the boosting algorithms of optimization theory on one histogram-tree engine.
pub mod error;
pub mod loss;

pub use error::{Error, Result};
pub mod boost;
pub mod data;
pub mod model;
pub mod params;
mod rows;
pub mod threads;
pub mod tree;

pub use boost::{Booster, Checkpoint, History, Offsets, Record, Step, StopReason, TrainData};
pub use data::{Feature, Frame};
pub use loss::{Loss, LossSpec};
pub use model::Model;
pub use params::{Method, Params};

#[cfg(feature = "python")]
mod python;
