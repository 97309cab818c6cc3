//! The values serde gives the parameters a file written before them leaves out, and the tests
//! that skip writing a parameter at its default (so that older models' files stay as they were).

use super::{Bootstrap, CorrectedResidual, Keep, Memory, Preset, Safeguard, SampleStrategy};

/// LightGBM's defaults, which Ke et al. found as accurate as the full data on their sets.
pub(super) fn default_top_rate() -> f64 {
    0.2
}

pub(super) fn default_other_rate() -> f64 {
    0.1
}

pub(super) fn one() -> f64 {
    1.0
}

pub(super) fn one_permutation() -> usize {
    1
}

impl CorrectedResidual {
    pub(super) fn paper() -> Self {
        CorrectedResidual::Paper
    }
}

impl Safeguard {
    pub(super) fn none() -> Self {
        Safeguard::None
    }
}

impl Preset {
    pub(super) fn none() -> Self {
        Preset::None
    }
    pub(super) fn is_none(&self) -> bool {
        *self == Preset::None
    }
}

impl Keep {
    pub(super) fn best() -> Self {
        Keep::Best
    }
    pub(super) fn is_best(&self) -> bool {
        *self == Keep::Best
    }
}

impl Bootstrap {
    pub(super) fn no() -> Self {
        Bootstrap::No
    }
}

impl Memory {
    pub(super) fn fast() -> Self {
        Memory::Fast
    }
}

impl SampleStrategy {
    pub(super) fn uniform() -> Self {
        SampleStrategy::Uniform
    }
}
