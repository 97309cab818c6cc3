#![doc = include_str!("../README-crate.md")]
// Every public item says what it is for; tests/docs.rs keeps `cargo rustdoc` at 0 warnings.
#![warn(missing_docs)]
//! # The Rust API
//!
//! [`Model::fit`] trains on the columns of a [`Frame`] in one call; a [`Booster`] does the same
//! iteration by iteration, from [`Params`] (typed setters, or every parameter by its public name
//! as in Python) and [`TrainData`]. The resulting [`Model`] predicts, explains and saves.
//! Losses are in [`loss`] ([`LossSpec`] names one); every failure is an [`Error`].
//!
//! ```
//! use optboost::{Booster, Feature, Frame, Params, TrainData};
//!
//! let x: Vec<f64> = (0..200).map(|i| i as f64 / 200.0).collect();
//! let y: Vec<f64> = x.iter().map(|v| (6.0 * v).sin()).collect();
//! let frame = Frame::new(vec![Feature::numeric("x", &x)])?;
//! let mut params = Params::default();
//! params.set("method", "agbm")?.set("n_iter", "20")?;
//! let train = TrainData { frame, y: &y, weights: None };
//! let mut booster = Booster::new(params, &train, None)?;
//! booster.run(|_record| true)?;
//! let model = booster.into_model();
//! let scores = model.predict(&Frame::new(vec![Feature::numeric("x", &x)])?)?;
//! assert_eq!(scores.len(), 200);
//! # Ok::<(), optboost::Error>(())
//! ```
//!
//! The weak learner can also be used on its own ([`learner`]): bin a frame, grow a tree on a
//! target with weights.

mod alloc;
mod boost;
pub mod collective;
mod data;
mod error;
pub mod loss;
pub mod metric;
mod model;
mod params;
mod rng;
mod rows;
mod threads;
mod tree;

pub use alloc::{LargeBlocks, LARGE_BLOCK};
pub use boost::{
    Booster, Checkpoint, History, Offsets, Record, RowSplit, Step, StopReason, TrainData,
};
pub use data::{
    BinMapper, BinningParams, CatEncoding, CatEncodings, Categories, Feature, FeatureKind,
    FeatureValues, Frame, Strided, StridedIter, TargetStat,
};
pub use error::{Error, Number, Result};
pub use loss::{Loss, LossSpec};
pub use model::{
    FeatureSpec, Model, FORMAT_VERSION, MAX_ABS_TERM, MAX_FILE_BYTES, MAX_LEVEL_NAME_BYTES,
    MAX_NODES, MAX_OUTPUTS, MAX_TREES,
};
pub use params::{
    Bootstrap, CorrectedResidual, Init, Keep, Memory, Method, Params, Preset, Restart, Safeguard,
    SampleStrategy, Schedule, Selection, StepRule,
};
pub use threads::available_threads;
pub use tree::{
    BinSet, CategoricalParams, CategorySplit, Growth, Node, Tree, TreeKind, TreeParams,
    MAX_OBLIVIOUS_DEPTH,
};

/// The weak learner on its own: binning ([`BinnedData`](learner::BinnedData)) and the histogram
/// regression tree ([`grow`](learner::grow)) that every method fits (docs/algorithms.md §7).
/// For studying and benchmarking the engine; training goes through [`Booster`].
pub mod learner {
    pub use crate::data::{BinnedData, BinnedMatrix, FeatureBins};
    pub use crate::threads::threads_used;
    pub use crate::tree::{
        best_split, grow, grow_with_options, BinStats, Candidates, FitStats, GrowBuffers,
        GrowOptions, GrownTree, Histogram, SplitParams,
    };
}

/// A method's iterate between iterations ([`Booster::state`]): the sequences of its recursion
/// (docs/algorithms.md §4), for inspecting them. A [`Checkpoint`] holds it.
pub mod state {
    pub use crate::boost::{
        AgbmState, DirectionKind, GbmState, MetaState, MethodState, RepeatedState, Switches,
        Tracked, VagbmState,
    };
}

#[cfg(feature = "python")]
mod python;
