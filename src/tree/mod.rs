//! The weak learner (docs/algorithms.md §7): a regression tree fitted by weighted least squares,
//! `argmin_b Σ v_i (t_i − b(x_i))²` plus an L2 leaf penalty, grown on gradient-statistics
//! histograms over binned features.

mod bins;
mod candidates;
mod categorical;
mod constraints;
mod flat;
mod goss;
mod grow_inputs;
mod grower;
mod growing_tree;
mod grown;
mod histogram;
mod histogram_kernel;
mod node_histograms;
mod node_sample;
mod node_search;
mod noise;
mod oblivious;
mod partition;
mod pending;
mod quantize;
mod ranks;
mod regression_tree;
mod scan;
mod split;
mod support;
#[cfg(test)]
pub(crate) mod test_data;
mod tree_params;

pub use bins::{BinSet, BinStats};
pub use candidates::Candidates;
pub use categorical::CategoricalParams;
pub use constraints::{enforce_monotone, Constraints};
pub(crate) use flat::{Predictor, RawColumns, BLOCK_ROWS};
pub use goss::Goss;
pub use grow_inputs::{GrowBuffers, GrowOptions};
pub use grower::{grow, grow_with_options, FitStats};
pub use grown::GrownTree;
pub(crate) use grown::ROW_CHUNK;
pub use histogram::Histogram;
pub(crate) use histogram_kernel::column_pass_pays;
pub use node_sample::fraction_of;
pub use noise::SplitNoise;
pub use pending::Growth;
pub(crate) use regression_tree::TreeFile;
pub use regression_tree::{CategorySplit, Node, Tree};
pub use scan::SplitParams;
pub use split::best_split;
pub use tree_params::MAX_OBLIVIOUS_DEPTH;
pub use tree_params::{TreeKind, TreeParams, MAX_DEPTH, MIN_SAMPLES_LEAF};
