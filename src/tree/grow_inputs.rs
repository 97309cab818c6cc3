//! What growing a tree takes besides its data and statistics: the buffers kept between fits
//! and the options of one tree (row and feature samples, constraints, the ranks of a
//! data-parallel fit, quantization, GOSS, split noise). Both growers read them (grower.rs for
//! ordinary trees, oblivious.rs for oblivious ones).

use super::constraints::Constraints;
use super::goss::Goss;
use super::histogram::Histogram;
use super::noise::SplitNoise;
use crate::collective::Collective;

/// The row lists of a fit (4 bytes per row each) and its histograms, which a caller fitting many
/// trees keeps between fits: allocating them afresh for every tree makes the allocator hold on
/// to freed blocks (in the arena of each worker thread that freed some), which costs more memory
/// than the buffers themselves.
#[derive(Debug, Default)]
pub struct GrowBuffers {
    /// Row lists of finished trees, for the next fits.
    pub(super) rows: Vec<Vec<u32>>,
    pub(super) scratch: Vec<u32>,
    /// Histograms of finished trees (any contents), for the next fits.
    pub(super) histograms: Vec<Histogram>,
    /// Whether trees are grown with bin counts whatever their weights (see
    /// `SplitSearch::recounted_too_often`). The trees are the same either way; only their cost differs.
    pub(super) always_count: bool,
}

impl GrowBuffers {
    /// Takes back the row list of a tree that is no longer needed.
    pub fn recycle(&mut self, rows: Vec<u32>) {
        self.rows.push(rows);
    }
}

/// What one tree may use besides its candidate splits: a sample of the rows and features drawn
/// per node (stochastic gradient boosting), and the constraints its splits must respect.
#[derive(Debug, Clone, Copy)]
pub struct GrowOptions<'a> {
    /// The rows the tree is grown on (ascending, distinct); `None`: every row. Histograms, split
    /// gains and leaf values see these rows only; the grown tree's leaves still hold every row
    /// (the rows not drawn go where the tree's rules send them), so that the tree can be applied
    /// to all of them.
    pub rows: Option<&'a [u32]>,
    /// Fraction of the tree's features each node may split on (1: all), drawn per node from
    /// `node_seed` and the node's id: the same features whatever the thread count.
    pub colsample_bynode: f64,
    /// The seed of each node's feature draw.
    pub node_seed: u64,
    /// Monotone and interaction constraints (`None`: none).
    pub constraints: Option<&'a Constraints>,
    /// The ranks of a data-parallel fit, each growing the tree on its own rows (`None`: this
    /// process holds every row). Histograms are summed over them (tree/ranks.rs).
    pub collective: Option<&'a dyn Collective>,
    /// Grow on quantized statistics, rounded with draws from this seed (quantize.rs); `None`:
    /// exact statistics. Data-parallel fits stay exact.
    pub quantize_seed: Option<u64>,
    /// Grow on a GOSS draw of `rows` (goss.rs), the draw of one process over the rows of every
    /// rank.
    pub goss: Option<Goss>,
    /// The global index of every row of this rank of a data-parallel fit, which keys GOSS's
    /// draw (`None`: the row's own index).
    pub global_rows: Option<&'a [u64]>,
    /// Noise on the candidates' scores (`random_strength`; noise.rs); `None`: none.
    pub noise: Option<SplitNoise>,
}

impl Default for GrowOptions<'_> {
    fn default() -> Self {
        GrowOptions {
            rows: None,
            colsample_bynode: 1.0,
            node_seed: 0,
            constraints: None,
            collective: None,
            quantize_seed: None,
            goss: None,
            global_rows: None,
            noise: None,
        }
    }
}
