//! Every training parameter, by its public name (docs/algorithms.md states what each does).
//! `Params::set` parses a parameter from its name and a string so that Python and Rust share one
//! vocabulary; `validate` checks the whole set once, and nothing downstream re-checks.

use crate::data::{BinningParams, CatEncodings};
use crate::error::{did_you_mean, Error, Result};
use crate::loss::{LossSpec, Task};
use crate::metric::Metric;
use crate::tree::{Growth, TreeKind, TreeParams};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;

// A child of params (its settings are parameters), so that the two never import each other.
#[path = "preset.rs"]
mod preset;
// Values of parameters from their text, for `set`.
#[path = "params_parse.rs"]
mod parse;
// The typed setters, a child too: it names the parameters, and `set` its unknown-name error.
#[path = "params_typed.rs"]
mod typed;
use parse::{parse, parse_interactions, parse_monotone, parse_switch};
// The values serde fills in for fields missing from older files.
#[path = "params_serde.rs"]
mod serde_defaults;
use serde_defaults::{default_other_rate, default_top_rate, one, one_permutation};

macro_rules! public_enum {
    ($(#[$meta:meta])* $name:ident, $param:literal {
        $($(#[$variant_meta:meta])* $variant:ident = $text:literal),+ $(,)?
    }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name { $($(#[$variant_meta])*
            #[doc = concat!("\n\nBy name: `", $param, " = \"", $text, "\"`.")]
            $variant),+ }

        impl $name {
            /// Every value's name, as `Params::set` takes it.
            pub const NAMES: &'static [&'static str] = &[$($(#[$variant_meta])* $text),+];
            /// Every value, in the order of `NAMES`.
            pub const ALL: &'static [Self] = &[$($(#[$variant_meta])* $name::$variant),+];
            /// The value's name, as `Params::set` takes it.
            pub fn name(&self) -> &'static str {
                match self { $($(#[$variant_meta])* $name::$variant => $text),+ }
            }
        }

        impl FromStr for $name {
            type Err = Error;
            fn from_str(s: &str) -> Result<Self> {
                match s {
                    $($(#[$variant_meta])* $text => Ok($name::$variant),)+
                    _ => Err(Error::param(
                        $param,
                        format!("{s:?}{}", did_you_mean(s, Self::NAMES)),
                        allowed_list(Self::NAMES),
                    )),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

/// `allowed_list` of the methods that `keep` accepts.
fn allowed_methods(keep: impl Fn(&Method) -> bool) -> String {
    let names: Vec<&str> = Method::ALL
        .iter()
        .filter(|m| keep(m))
        .map(Method::name)
        .collect();
    allowed_list(&names)
}

fn allowed_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("{n:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

public_enum!(
    /// The boosting algorithms (docs/algorithms.md §4).
    Method, "method" {
        Gbm = "gbm",
        Rgbm = "rgbm",
        Agbm = "agbm",
        Agbmr = "agbmr",
        Vagbm = "vagbm",
        Proximal = "proximal",
        ResidualProximal = "residual_proximal",
        AcceleratedProximal = "accelerated_proximal",
        ResidualGbm = "residual_gbm",
        AcceleratedGbm = "accelerated_gbm",
        RepeatedGbm = "repeated_gbm",
        // The toy method of `boost/toy.rs`, added as docs/adding_a_method.md says (tests only).
        #[cfg(test)]
        Toy = "toy",
    }
);

public_enum!(
    /// How a step scales its tree (docs/algorithms.md §3).
    StepRule, "step" {
        Constant = "constant",
        LineSearch = "line_search",
        LeafLineSearch = "leaf_line_search",
        Newton = "newton",
        Natural = "natural",
    }
);

public_enum!(
    /// The initial constant: the loss's minimiser over the training rows, or 0.
    Init, "init" { Optimal = "optimal", Zero = "zero" }
);

public_enum!(
    /// RGBM's candidate selection (Lu & Mazumder, Types 0–3).
    Selection, "selection" { All = "all", Random = "random", Group = "group", Groups = "groups" }
);

public_enum!(
    /// When the momentum methods restart: `fixed`, every ⌈√(2/(ηγμ))⌉ iterations; `adaptive`,
    /// whenever the loss rises (O'Donoghue & Candès, "Adaptive restart for accelerated gradient
    /// schemes", 2015).
    Restart, "restart" { Fixed = "fixed", Adaptive = "adaptive" }
);

public_enum!(
    /// The sign of the carried error in AGBM's corrected residual (Lu et al., Alg. 2 line 6):
    /// `paper` is the algorithm as printed, c = r + (m+1)/(m+2)·(c_prev − b2_prev(X)); the
    /// authors' released code computes c = r − (m+1)/(m+2)·(c_prev − b2_prev(X)).
    CorrectedResidual, "corrected_residual" { Paper = "paper", ReferenceCode = "reference_code" }
);

public_enum!(
    /// What the momentum methods do when a momentum step raises a monitored loss. `restart`
    /// rejects a step that raised the training loss or, when there are validation rows (given or
    /// held out), the validation loss: its trees are removed, the iterate stays the previous one
    /// and the momentum restarts there, so the next iteration is a plain gradient step. `train`
    /// watches the training loss only; `none` runs the papers' recursions unguarded.
    Safeguard, "safeguard" { Restart = "restart", Train = "train", None = "none" }
);

public_enum!(
    /// How training stores the binned features. `fast` keeps a column-major copy beside the
    /// row-major matrix the histograms read, so that partitioning a node reads one byte per row;
    /// `low` stores them once (one byte per row and feature less: a quarter to a third of the
    /// memory above the data at 1M–10M rows × 28) and partitions read the rows in place, which
    /// costs 15–25% more training time (benches/results.txt). The models are the same.
    Memory, "memory" { Fast = "fast", Low = "low" }
);

public_enum!(
    /// Which rows each tree is grown on. `uniform`: the fraction `subsample` of the rows, drawn
    /// at random (all by default); `goss`: gradient-based one-side sampling (tree/goss.rs), the
    /// fraction `top_rate` of the rows with the largest gradients and a random fraction
    /// `other_rate` of the others, scaled up.
    SampleStrategy, "sample_strategy" { Uniform = "uniform", Goss = "goss" }
);

public_enum!(
    /// How each iteration weighs the training rows beyond their sample weights. `no`: it does
    /// not; `bayesian`: the Bayesian bootstrap of CatBoost (Prokhorenkova et al., "CatBoost:
    /// unbiased boosting with categorical features", NeurIPS 2018), every row weighted by
    /// (−log U)^`bagging_temperature` with U uniform, drawn afresh each iteration.
    Bootstrap, "bootstrap" { No = "no", Bayesian = "bayesian" }
);

public_enum!(
    /// Step-size schedule η_t for the non-smooth methods.
    Schedule, "schedule" { Constant = "constant", InvSqrt = "inv_sqrt" }
);

public_enum!(
    /// A named set of defaults (`src/preset.rs`): `paper` runs the chosen method with every
    /// setting as its paper states it; parameters given through `set` override it.
    Preset, "preset" { None = "none", Paper = "paper" }
);

public_enum!(
    /// Which iterate a finished fit keeps. `best`: a momentum method's best iterate when the
    /// last is worse, and the best iterate under early stopping (docs/algorithms.md §9);
    /// `last`: the last iterate, as the papers output it, with every iteration reachable.
    /// Divergence keeps the best iterate either way (a non-finite model predicts nothing).
    Keep, "keep" { Best = "best", Last = "last" }
);

/// Every training parameter. Set them by their public names — the same as in Python — with
/// [`set`](Params::set), which parses and checks each value; [`validate`](Params::validate)
/// checks the whole set (the booster calls it).
///
/// ```
/// use optboost::{Method, Params};
///
/// let mut params = Params::default();
/// params.set("method", "accelerated_proximal")?.set("lambda", "0.5")?.set("loss", "huber(2)")?;
/// params.validate()?;
/// assert_eq!(params.method, Method::AcceleratedProximal);
/// assert!(params.set("max_depth", "-1").is_err());
/// # Ok::<(), optboost::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// The boosting algorithm.
    pub method: Method,
    /// The loss minimised.
    pub loss: LossSpec,
    /// Boosting iterations.
    pub n_iter: usize,
    /// Shrinkage ν (for AGBM the step η).
    pub learning_rate: f64,
    /// `None`: the method's default (newton for gbm with a twice-differentiable loss, …).
    pub step: Option<StepRule>,
    /// Multiplier of the `constant` step rule; `None` means 1/σ of the loss (1 if σ is unknown).
    pub rho: Option<f64>,
    /// The initial constant.
    pub init: Init,
    /// The weak learner's settings.
    pub tree: TreeParams,
    /// How features are binned.
    pub binning: BinningParams,
    /// Seeds every random draw (rows, features, RGBM's candidates).
    pub seed: u64,
    /// 0: all cores.
    pub n_threads: usize,
    /// Stop when the validation metric has not improved for this many iterations.
    pub early_stopping_rounds: Option<usize>,
    // rgbm
    /// RGBM's candidate selection.
    pub selection: Selection,
    /// Candidates (`random`) or groups (`groups`) drawn per iteration.
    pub t: usize,
    // agbm, agbmr, vagbm
    /// AGBM's momentum parameter γ in (0, 1].
    pub gamma: f64,
    /// When momentum restarts.
    pub restart: Restart,
    /// Checkpoints written before this parameter existed ran the paper's sign.
    #[serde(default = "CorrectedResidual::paper")]
    pub corrected_residual: CorrectedResidual,
    // agbm, agbmr, vagbm, accelerated_gbm, accelerated_proximal
    /// Checkpoints written before this parameter existed ran unguarded.
    #[serde(default = "Safeguard::none")]
    pub safeguard: Safeguard,
    // leaf steps (`leaf_line_search` leaves; the bound also applies to `newton` trees' leaves)
    /// Newton steps of the per-leaf line search from 0 (0: the exact search). Checkpoints
    /// written before this parameter existed ran the exact search.
    #[serde(default)]
    pub leaf_newton_steps: usize,
    /// Bound on the size of a leaf's step, before shrinkage (XGBoost's max_delta_step); 0: none.
    #[serde(default)]
    pub max_leaf_value: f64,
    // proximal family
    /// λ, the proximal step's size.
    pub lambda: f64,
    // repeated_gbm
    /// repeated_gbm's inner iterations per outer one.
    pub max_inner: usize,
    /// The step-size schedule of the non-smooth methods.
    pub schedule: Schedule,
    // stochastic gradient boosting (Friedman, "Stochastic gradient boosting", 2002)
    /// Fraction of the rows each iteration's trees are grown on (drawn without replacement).
    #[serde(default = "one")]
    pub subsample: f64,
    /// Fraction of the features each iteration's trees may split on.
    #[serde(default = "one")]
    pub colsample_bytree: f64,
    /// Fraction of the tree's features each node may split on.
    #[serde(default = "one")]
    pub colsample_bynode: f64,
    /// Monotone constraints by feature name: +1 increasing, −1 decreasing.
    #[serde(default)]
    pub monotone: BTreeMap<String, i8>,
    /// Interaction constraints: the sets of feature names that may share a root-to-leaf path.
    #[serde(default)]
    pub interactions: Vec<Vec<String>>,
    /// Evaluation metrics recorded in the history; the first one on the validation rows drives
    /// early stopping and the best iterate (crate::metric).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<Metric>,
    /// How the binned features are stored during training (it does not change the model).
    #[serde(default = "Memory::fast")]
    pub memory: Memory,
    /// Grow trees on gradient statistics rounded to integers (tree/quantize.rs): faster
    /// histograms, unbiased but inexact sums.
    #[serde(default)]
    pub quantized_gradients: bool,
    /// Which rows each tree is grown on.
    #[serde(default = "SampleStrategy::uniform")]
    pub sample_strategy: SampleStrategy,
    /// GOSS: the fraction of rows with the largest gradients each tree keeps.
    #[serde(default = "default_top_rate")]
    pub top_rate: f64,
    /// GOSS: the fraction of the rows drawn at random from the others.
    #[serde(default = "default_other_rate")]
    pub other_rate: f64,
    /// How categorical features are split on: as partitions of their levels, or as ordered
    /// target statistics (data/target_stats.rs), for all or by name.
    #[serde(default)]
    pub cat_encoding: CatEncodings,
    /// The prior's weight a of the target statistics, (Σ w·t + a·p) / (Σ w + a).
    #[serde(default = "one")]
    pub cat_prior_weight: f64,
    /// The permutations whose ordered target statistics are averaged at fit.
    #[serde(default = "one_permutation")]
    pub cat_permutations: usize,
    /// The most combinations of two categorical columns added as target statistics.
    #[serde(default)]
    pub cat_combinations: usize,
    /// The preset in force; it fills in every parameter it covers that `set` was not given
    /// (`Params::resolved`).
    #[serde(default = "Preset::none", skip_serializing_if = "Preset::is_none")]
    pub preset: Preset,
    /// Which iterate a finished fit keeps.
    #[serde(default = "Keep::best", skip_serializing_if = "Keep::is_best")]
    pub keep: Keep,
    /// The names given through `set`, which a preset leaves as they are.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub explicit: BTreeSet<String>,
    /// The scale of the noise added to every candidate split's score when a node chooses its
    /// split (CatBoost's random strength; tree/noise.rs); 0: none.
    #[serde(default)]
    pub random_strength: f64,
    /// How each iteration reweighs the rows.
    #[serde(default = "Bootstrap::no")]
    pub bootstrap: Bootstrap,
    /// The exponent t of the Bayesian bootstrap's weights (−log U)^t: 0 weighs every row 1, 1
    /// is the Bayesian bootstrap of Rubin (1981) (exponential weights).
    #[serde(default = "one")]
    pub bagging_temperature: f64,
}

/// The largest `bagging_temperature`: (−log U)^t reaches 37^t (U ≥ 2^−53), and the squares of
/// sums of such weights must stay finite.
pub const MAX_BAGGING_TEMPERATURE: f64 = 10.0;

impl Default for Params {
    fn default() -> Self {
        Params {
            method: Method::Gbm,
            loss: LossSpec::Squared,
            n_iter: 100,
            learning_rate: 0.1,
            step: None,
            rho: None,
            init: Init::Optimal,
            tree: TreeParams::default(),
            binning: BinningParams::default(),
            seed: 0,
            n_threads: 0,
            early_stopping_rounds: None,
            selection: Selection::All,
            t: 1,
            gamma: 0.5,
            restart: Restart::Adaptive,
            corrected_residual: CorrectedResidual::Paper,
            safeguard: Safeguard::Restart,
            leaf_newton_steps: 1,
            max_leaf_value: 0.0,
            lambda: 1.0,
            max_inner: 10,
            schedule: Schedule::Constant,
            subsample: 1.0,
            colsample_bytree: 1.0,
            colsample_bynode: 1.0,
            monotone: BTreeMap::new(),
            interactions: Vec::new(),
            metrics: Vec::new(),
            memory: Memory::Fast,
            quantized_gradients: false,
            sample_strategy: SampleStrategy::Uniform,
            top_rate: default_top_rate(),
            other_rate: default_other_rate(),
            cat_encoding: CatEncodings::default(),
            cat_prior_weight: 1.0,
            cat_permutations: 1,
            cat_combinations: 0,
            preset: Preset::None,
            keep: Keep::Best,
            explicit: BTreeSet::new(),
            random_strength: 0.0,
            bootstrap: Bootstrap::No,
            bagging_temperature: 1.0,
        }
    }
}

impl Params {
    /// The names `set` accepts.
    pub const NAMES: &'static [&'static str] = &[
        "method",
        "loss",
        "n_iter",
        "learning_rate",
        "step",
        "rho",
        "init",
        "max_depth",
        "max_leaves",
        "min_samples_leaf",
        "min_weight_leaf",
        "l2_leaf",
        "min_split_gain",
        "growth",
        "tree",
        "max_bins",
        "min_category_count",
        "cat_smooth",
        "min_data_per_group",
        "max_cat_threshold",
        "cat_encoding",
        "cat_prior_weight",
        "cat_permutations",
        "cat_combinations",
        "seed",
        "n_threads",
        "early_stopping_rounds",
        "selection",
        "t",
        "gamma",
        "restart",
        "corrected_residual",
        "safeguard",
        "leaf_newton_steps",
        "max_leaf_value",
        "lambda",
        "max_inner",
        "schedule",
        "subsample",
        "colsample_bytree",
        "colsample_bynode",
        "monotone",
        "interactions",
        "metrics",
        "memory",
        "quantized_gradients",
        "sample_strategy",
        "top_rate",
        "other_rate",
        "preset",
        "keep",
        "random_strength",
        "bootstrap",
        "bagging_temperature",
    ];

    /// Sets one parameter from its public name and a textual value. A parameter set this way
    /// overrides the preset, whichever is set first.
    pub fn set(&mut self, name: &str, value: &str) -> Result<&mut Self> {
        self.assign(name, value)?;
        if name != "preset" {
            self.explicit.insert(name.to_string());
        }
        Ok(self)
    }

    /// These parameters with the preset applied to every parameter it covers that `set` was
    /// not given: what training runs. Without a preset, the same parameters.
    pub fn resolved(&self) -> Result<Params> {
        let mut params = self.clone();
        for (name, value) in preset::applies(self) {
            params.assign(name, &value)?;
        }
        Ok(params)
    }

    /// What the preset sets, `(name, value)`: the parameters it covers that `set` was not
    /// given (empty without a preset).
    pub fn preset_settings(&self) -> Vec<(&'static str, String)> {
        preset::applies(self)
    }

    /// The parameters `resolved`, then `validate`d: what the booster trains with.
    pub fn checked(&self) -> Result<Params> {
        let params = self.resolved()?;
        params.validate()?;
        Ok(params)
    }

    fn assign(&mut self, name: &str, value: &str) -> Result<()> {
        let value = value.trim();
        match name {
            "method" => self.method = value.parse()?,
            "loss" => self.loss = value.parse()?,
            "n_iter" => self.n_iter = parse(name, value)?,
            "learning_rate" => self.learning_rate = parse(name, value)?,
            "step" => self.step = Some(value.parse()?),
            "rho" => self.rho = Some(parse(name, value)?),
            "init" => self.init = value.parse()?,
            "max_depth" => self.tree.max_depth = parse(name, value)?,
            "max_leaves" => self.tree.max_leaves = parse(name, value)?,
            "min_samples_leaf" => self.tree.min_samples_leaf = Some(parse(name, value)?),
            "min_weight_leaf" => self.tree.min_weight_leaf = parse(name, value)?,
            "l2_leaf" => self.tree.l2_leaf = parse(name, value)?,
            "min_split_gain" => self.tree.min_split_gain = parse(name, value)?,
            "growth" => self.tree.growth = value.parse::<Growth>()?,
            "tree" => self.tree.tree = value.parse::<TreeKind>()?,
            "max_bins" => self.binning.max_bins = parse(name, value)?,
            "min_category_count" => self.binning.min_category_count = parse(name, value)?,
            "cat_smooth" => self.tree.categorical.cat_smooth = parse(name, value)?,
            "min_data_per_group" => self.tree.categorical.min_data_per_group = parse(name, value)?,
            "max_cat_threshold" => self.tree.categorical.max_cat_threshold = parse(name, value)?,
            "cat_encoding" => self.cat_encoding = CatEncodings::parse(value)?,
            "cat_prior_weight" => self.cat_prior_weight = parse(name, value)?,
            "cat_permutations" => self.cat_permutations = parse(name, value)?,
            "cat_combinations" => self.cat_combinations = parse(name, value)?,
            "seed" => self.seed = parse(name, value)?,
            "n_threads" => self.n_threads = parse(name, value)?,
            "memory" => self.memory = value.parse()?,
            "quantized_gradients" => self.quantized_gradients = parse_switch(name, value)?,
            "sample_strategy" => self.sample_strategy = value.parse()?,
            "top_rate" => self.top_rate = parse(name, value)?,
            "other_rate" => self.other_rate = parse(name, value)?,
            "random_strength" => self.random_strength = parse(name, value)?,
            "bootstrap" => self.bootstrap = value.parse()?,
            "bagging_temperature" => self.bagging_temperature = parse(name, value)?,
            "early_stopping_rounds" => self.early_stopping_rounds = Some(parse(name, value)?),
            "selection" => self.selection = value.parse()?,
            "t" => self.t = parse(name, value)?,
            "gamma" => self.gamma = parse(name, value)?,
            "restart" => self.restart = value.parse()?,
            "corrected_residual" => self.corrected_residual = value.parse()?,
            "safeguard" => self.safeguard = value.parse()?,
            "leaf_newton_steps" => self.leaf_newton_steps = parse(name, value)?,
            "max_leaf_value" => self.max_leaf_value = parse(name, value)?,
            "lambda" => self.lambda = parse(name, value)?,
            "max_inner" => self.max_inner = parse(name, value)?,
            "schedule" => self.schedule = value.parse()?,
            "subsample" => self.subsample = parse(name, value)?,
            "colsample_bytree" => self.colsample_bytree = parse(name, value)?,
            "colsample_bynode" => self.colsample_bynode = parse(name, value)?,
            "monotone" => self.monotone = parse_monotone(value)?,
            "interactions" => self.interactions = parse_interactions(value)?,
            "metrics" => self.metrics = crate::metric::parse_metrics(value)?,
            "preset" => self.preset = value.parse()?,
            "keep" => self.keep = value.parse()?,
            _ => return Err(typed::unknown_name(name)),
        }
        Ok(())
    }

    /// Checks every parameter's domain and the combinations the methods support.
    pub fn validate(&self) -> Result<()> {
        self.tree.validate()?;
        self.binning.validate()?;
        self.loss.validate()?;
        for metric in &self.metrics {
            metric.check(&self.loss)?;
        }
        crate::data::target_stats::Settings {
            prior_weight: self.cat_prior_weight,
            permutations: self.cat_permutations,
            combinations: self.cat_combinations,
        }
        .validate()?;
        if self.n_iter == 0 {
            return Err(Error::param("n_iter", self.n_iter, "an integer ≥ 1"));
        }
        if !(self.learning_rate.is_finite() && self.learning_rate > 0.0) {
            return Err(Error::param(
                "learning_rate",
                self.learning_rate,
                "a finite number > 0",
            ));
        }
        if let Some(rho) = self.rho {
            if !(rho.is_finite() && rho > 0.0) {
                return Err(Error::param("rho", rho, "a finite number > 0"));
            }
        }
        if !(self.gamma > 0.0 && self.gamma <= 1.0) {
            return Err(Error::param("gamma", self.gamma, "a number in (0, 1]"));
        }
        if !(self.max_leaf_value.is_finite() && self.max_leaf_value >= 0.0) {
            return Err(Error::param(
                "max_leaf_value",
                self.max_leaf_value,
                "a finite number ≥ 0 (0: no bound)",
            ));
        }
        if !(self.lambda.is_finite() && self.lambda > 0.0) {
            return Err(Error::param("lambda", self.lambda, "a finite number > 0"));
        }
        if self.t == 0 {
            return Err(Error::param("t", self.t, "an integer ≥ 1"));
        }
        if self.max_inner == 0 {
            return Err(Error::param("max_inner", self.max_inner, "an integer ≥ 1"));
        }
        for (name, fraction) in [
            ("subsample", self.subsample),
            ("colsample_bytree", self.colsample_bytree),
            ("colsample_bynode", self.colsample_bynode),
        ] {
            if !(fraction > 0.0 && fraction <= 1.0) {
                return Err(Error::param(name, fraction, "a fraction in (0, 1]"));
            }
        }
        for (name, fraction) in [("top_rate", self.top_rate), ("other_rate", self.other_rate)] {
            if !(fraction > 0.0 && fraction < 1.0) {
                return Err(Error::param(name, fraction, "a fraction in (0, 1)"));
            }
        }
        if self.top_rate + self.other_rate > 1.0 {
            return Err(Error::param(
                "other_rate",
                self.other_rate,
                format!("at most 1 − top_rate (top_rate is {})", self.top_rate),
            ));
        }
        if self.sample_strategy == SampleStrategy::Goss && self.subsample < 1.0 {
            return Err(Error::param(
                "subsample",
                self.subsample,
                "1 with sample_strategy=\"goss\" (GOSS draws each tree's rows itself, by \
                 top_rate and other_rate)",
            ));
        }
        if !(self.random_strength.is_finite() && self.random_strength >= 0.0) {
            return Err(Error::param(
                "random_strength",
                self.random_strength,
                "a finite number ≥ 0 (0: no noise)",
            ));
        }
        if !(0.0..=MAX_BAGGING_TEMPERATURE).contains(&self.bagging_temperature) {
            return Err(Error::param(
                "bagging_temperature",
                self.bagging_temperature,
                format!("a number in [0, {MAX_BAGGING_TEMPERATURE}]"),
            ));
        }
        if self.bootstrap == Bootstrap::Bayesian && !self.loss.is_separable() {
            return Err(Error::param(
                "bootstrap",
                "\"bayesian\"",
                format!(
                    "\"no\" with the {} loss (its rows are tied together, through the risk sets \
                     of the partial likelihood: a row's weight is not a factor of its own \
                     derivatives)",
                    self.loss
                ),
            ));
        }
        if self.early_stopping_rounds == Some(0) {
            return Err(Error::param("early_stopping_rounds", 0, "an integer ≥ 1"));
        }
        self.validate_method()
    }

    /// The combinations of method, step rule, schedule and loss that mean something.
    fn validate_method(&self) -> Result<()> {
        let method = self.method;
        if let Some(step) = self.step {
            let allowed = method.step_rules();
            if !allowed.contains(&step) {
                let names: Vec<&str> = allowed.iter().map(StepRule::name).collect();
                return Err(Error::param(
                    "step",
                    format!("{:?}", step.name()),
                    format!("{} for method {:?}", allowed_list(&names), method.name()),
                ));
            }
        }
        if self.step == Some(StepRule::Natural) && self.loss.traits().task != Task::Distribution {
            // The natural gradient is the gradient in the Fisher metric of a distribution.
            return Err(Error::param(
                "step",
                "\"natural\"",
                format!(
                    "another step rule for the {} loss (\"natural\" preconditions by the Fisher \
                     information of a distributional loss: normal, lognormal, gamma_dist, \
                     negative_binomial, student_t)",
                    self.loss
                ),
            ));
        }
        if self.step == Some(StepRule::Newton) && self.loss.is_piecewise_linear() {
            // ℓ'' = 0 almost everywhere: the Newton leaf Σg/(Σh + λ) is Σg/λ, steps of
            // arbitrary size (measured: gbm diverged with weighted absolute and pinball).
            return Err(Error::param(
                "step",
                "\"newton\"",
                format!(
                    "another step rule for the piecewise-linear loss {} (it has no second \
                     derivative): \"leaf_line_search\", its default, or a proximal method",
                    self.loss
                ),
            ));
        }
        if !self.loss.is_separable() && method.uses_prox() {
            // The prox of a loss coupling the rows is a problem over all rows at once, not the
            // per-row problems these methods solve.
            return Err(Error::param(
                "method",
                format!("{:?}", method.name()),
                format!(
                    "{} with the {} loss (its proximal operator is not a per-row problem: the \
                     partial likelihood ties rows together through the risk sets)",
                    allowed_methods(|m| !m.uses_prox()),
                    self.loss
                ),
            ));
        }
        if self.schedule == Schedule::InvSqrt && method.has_momentum() {
            return Err(Error::param(
                "schedule",
                "\"inv_sqrt\"",
                format!(
                    "\"constant\" for method {:?} (its momentum recursion needs a fixed step; \"inv_sqrt\" is for {})",
                    method.name(),
                    allowed_methods(|m| !m.has_momentum())
                ),
            ));
        }
        if self.loss.is_multiclass() && !method.supports_multiclass() {
            return Err(Error::param(
                "method",
                format!("{:?}", method.name()),
                format!(
                    "{} with the multiclass loss {}",
                    allowed_methods(|m| m.supports_multiclass()),
                    self.loss
                ),
            ));
        }
        Ok(())
    }
}
