//! Typed setters on `Params`, one per public parameter name, for Rust callers: the compiler
//! checks a value's type where `Params::set` would parse a string, and each setter marks its
//! parameter as given, as `set` does, so that a preset leaves it alone.

use crate::data::CatEncodings;
use crate::error::{did_you_mean, Error};
use crate::loss::LossSpec;
use crate::metric::Metric;
use crate::params::{
    Bootstrap, CorrectedResidual, Init, Keep, Memory, Method, Params, Preset, Restart, Safeguard,
    SampleStrategy, Schedule, Selection, StepRule,
};
use crate::tree::{Growth, TreeKind};
use std::collections::BTreeMap;

/// `$name(value)` sets the parameter `$name` (the field at `$field`, wrapped in `$wrap` when
/// the field is optional) and marks it as given.
macro_rules! setters {
    ($($name:ident: $ty:ty => $($field:ident).+ $(($wrap:ident))?;)+) => {
        impl Params {
            $(
                #[doc = concat!("Sets `", stringify!($name), "` (as `set(\"", stringify!($name),
                    "\", …)` would); checked with the others when training starts.")]
                pub fn $name(mut self, value: $ty) -> Self {
                    self.$($field).+ = $($wrap)?(value);
                    self.explicit.insert(stringify!($name).to_string());
                    self
                }
            )+
        }

        #[cfg(test)]
        const TYPED_NAMES: &[&str] = &[$(stringify!($name)),+];
    };
}

setters! {
    method: Method => method;
    loss: LossSpec => loss;
    n_iter: usize => n_iter;
    learning_rate: f64 => learning_rate;
    step: StepRule => step(Some);
    rho: f64 => rho(Some);
    init: Init => init;
    max_depth: usize => tree.max_depth;
    max_leaves: usize => tree.max_leaves;
    min_samples_leaf: usize => tree.min_samples_leaf(Some);
    min_weight_leaf: f64 => tree.min_weight_leaf;
    l2_leaf: f64 => tree.l2_leaf;
    min_split_gain: f64 => tree.min_split_gain;
    growth: Growth => tree.growth;
    tree: TreeKind => tree.tree;
    max_bins: usize => binning.max_bins;
    min_category_count: usize => binning.min_category_count;
    cat_smooth: f64 => tree.categorical.cat_smooth;
    min_data_per_group: usize => tree.categorical.min_data_per_group;
    max_cat_threshold: usize => tree.categorical.max_cat_threshold;
    cat_encoding: CatEncodings => cat_encoding;
    cat_prior_weight: f64 => cat_prior_weight;
    cat_permutations: usize => cat_permutations;
    cat_combinations: usize => cat_combinations;
    seed: u64 => seed;
    n_threads: usize => n_threads;
    early_stopping_rounds: usize => early_stopping_rounds(Some);
    selection: Selection => selection;
    t: usize => t;
    gamma: f64 => gamma;
    restart: Restart => restart;
    corrected_residual: CorrectedResidual => corrected_residual;
    safeguard: Safeguard => safeguard;
    leaf_newton_steps: usize => leaf_newton_steps;
    max_leaf_value: f64 => max_leaf_value;
    lambda: f64 => lambda;
    max_inner: usize => max_inner;
    schedule: Schedule => schedule;
    subsample: f64 => subsample;
    colsample_bytree: f64 => colsample_bytree;
    colsample_bynode: f64 => colsample_bynode;
    monotone: BTreeMap<String, i8> => monotone;
    interactions: Vec<Vec<String>> => interactions;
    metrics: Vec<Metric> => metrics;
    memory: Memory => memory;
    quantized_gradients: bool => quantized_gradients;
    sample_strategy: SampleStrategy => sample_strategy;
    top_rate: f64 => top_rate;
    other_rate: f64 => other_rate;
    keep: Keep => keep;
    random_strength: f64 => random_strength;
    bootstrap: Bootstrap => bootstrap;
    bagging_temperature: f64 => bagging_temperature;
}

impl Params {
    /// The defaults, to chain typed setters on:
    ///
    /// ```
    /// use optboost::{LossSpec, Method, Params};
    ///
    /// let params = Params::new()
    ///     .method(Method::Agbm)
    ///     .loss(LossSpec::Logistic { ridge: 0.0 })
    ///     .n_iter(200)
    ///     .learning_rate(0.1)
    ///     .max_depth(4);
    /// params.validate()?;
    /// let mut by_name = Params::default();
    /// by_name.set("method", "agbm")?.set("loss", "logistic")?.set("n_iter", "200")?;
    /// by_name.set("learning_rate", "0.1")?.set("max_depth", "4")?;
    /// assert_eq!(params, by_name);
    /// # Ok::<(), optboost::Error>(())
    /// ```
    pub fn new() -> Self {
        Params::default()
    }

    /// The preset whose defaults fill in every parameter not set (`Params::resolved`); unlike
    /// the other setters it marks nothing as given.
    pub fn preset(mut self, preset: Preset) -> Self {
        self.preset = preset;
        self
    }
}

/// The error of an unknown parameter name, with the closest known names.
pub(crate) fn unknown_name(name: &str) -> Error {
    Error::param(
        "parameter name",
        format!("{name:?}{}", did_you_mean(name, Params::NAMES)),
        (Params::NAMES.iter().map(|n| format!("{n:?}")))
            .collect::<Vec<_>>()
            .join(", "),
    )
}

#[cfg(test)]
mod tests {
    use super::TYPED_NAMES;
    use crate::params::Params;

    #[test]
    fn every_parameter_set_takes_has_a_typed_setter() {
        let mut names = [TYPED_NAMES, &["preset"]].concat(); // `preset` has its own setter
        let mut public = Params::NAMES.to_vec();
        names.sort_unstable();
        public.sort_unstable();
        assert_eq!(names, public);
    }
}
