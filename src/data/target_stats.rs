//! Categorical features as ordered target statistics (Prokhorenkova et al. 2018, "CatBoost:
//! unbiased boosting with categorical features", NeurIPS, §3.2): a level becomes the mean target
//! of the rows with that level, shrunk towards a prior p with weight a,
//!
//! ```text
//! x̂ = (Σ w·t + a·p) / (Σ w + a),
//! ```
//!
//! and at fit each row's sums run only over the rows before it in a seeded random permutation,
//! so that a row's own target never reaches its feature (the paper's prediction shift of the
//! greedy statistic). The rows early in a permutation see few others, so their statistics are
//! noisy; with `cat_permutations` s > 1 a row's value is the mean of its ordered statistics over
//! s independent permutations (the paper uses several permutations for the same reason, §3.2
//! and §4), which no row's own target reaches either. At predict the sums run over every
//! training row: the model stores that value per level, and the prior for a missing or unseen
//! level. The statistics are numeric features, binned and split like the others.
//!
//! The target t: the target itself for scalar losses (for a binary 0/1 target, the
//! positive-class rate), the indicator of class k for each of the K classes of a multiclass
//! target and output k of a multi-output one (the paper's per-class statistics): K features
//! from one column, named `name[k]`.

// A child, so that the combinations and the statistics they are built from never import each
// other.
#[path = "target_combinations.rs"]
mod combinations;
use super::{Feature, FeatureValues, Frame};
use crate::error::{Error, Result};
use crate::rng::Rng;
pub use combinations::{CombinedWith, MAX_COMBINED_LEVELS};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// How a categorical feature is split on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CatEncoding {
    /// Levels sorted by the node's gradient statistics, split as a partition (docs §11).
    #[default]
    Partition,
    /// Ordered target statistics, split as numeric features.
    TargetStats,
}

impl FromStr for CatEncoding {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "partition" => Ok(CatEncoding::Partition),
            "target_stats" => Ok(CatEncoding::TargetStats),
            other => Err(Error::param(
                "cat_encoding",
                format!("{other:?}"),
                "partition or target_stats",
            )),
        }
    }
}

impl fmt::Display for CatEncoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CatEncoding::Partition => "partition",
            CatEncoding::TargetStats => "target_stats",
        })
    }
}

/// The encoding of every categorical feature: one for all, and exceptions by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct CatEncodings {
    /// The encoding of every categorical column not named in `by_feature`.
    pub default: CatEncoding,
    /// Encodings chosen column by column, by name.
    pub by_feature: BTreeMap<String, CatEncoding>,
}

impl CatEncodings {
    /// `target_stats`, `partition`, `city:target_stats,zip:target_stats` or both kinds of
    /// item (`target_stats,state:partition`): an item without a name sets the default.
    pub fn parse(value: &str) -> Result<Self> {
        let mut out = CatEncodings::default();
        let items: Vec<&str> = value.split(',').map(str::trim).collect();
        if items.iter().any(|i| i.is_empty()) {
            return Err(Error::param(
                "cat_encoding",
                format!("{value:?}"),
                "partition, target_stats, or name:encoding items separated by commas",
            ));
        }
        for item in items {
            match item.rsplit_once(':') {
                Some((name, encoding)) if !name.trim().is_empty() => {
                    out.by_feature
                        .insert(name.trim().to_string(), encoding.parse()?);
                }
                Some(_) => {
                    return Err(Error::param(
                        "cat_encoding",
                        format!("{item:?}"),
                        "name:encoding with a feature name",
                    ))
                }
                None => out.default = item.parse()?,
            }
        }
        Ok(out)
    }

    /// The encoding of the column named `name`.
    pub fn of(&self, name: &str) -> CatEncoding {
        self.by_feature.get(name).copied().unwrap_or(self.default)
    }

    /// True when some column is encoded by target statistics (they are then computed first).
    pub fn uses_target_stats(&self) -> bool {
        self.default == CatEncoding::TargetStats
            || self
                .by_feature
                .values()
                .any(|&e| e == CatEncoding::TargetStats)
    }
}

/// One statistic as the model stores it: the feature is `levels[code]` of column `source`
/// (the prior for a missing or unseen level).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetStat {
    /// The categorical column read at predict.
    pub source: String,
    /// The class (multiclass) or output (multi-output) whose target this is; 0 otherwise.
    pub target: u32,
    /// The p every level's statistic shrinks towards, and a missing or unseen level's value.
    pub prior: f64,
    /// The prior's weight a (`cat_prior_weight`).
    pub prior_weight: f64,
    /// (Σ w·t + a·p) / (Σ w + a) over all training rows with the level.
    pub levels: Vec<f64>,
    /// For a combination of two columns: the second (its levels are `levels[a · n + b]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with: Option<CombinedWith>,
}

impl TargetStat {
    /// The levels of the source column (of the first column for a combination).
    pub fn source_levels(&self) -> usize {
        let with = self.with.as_ref().map_or(1, |w| w.n_levels.max(1) as usize);
        self.levels.len() / with
    }

    /// The statistic of a row whose source column has `code` (and the second column of a
    /// combination `with_code`).
    #[inline]
    pub fn value_of(&self, code: i32, with_code: i32) -> f64 {
        match &self.with {
            None => self.value(code),
            Some(w) => self.value(combinations::code(code, with_code, w.n_levels)),
        }
    }

    /// The statistic of level `code`; the prior for a missing or unseen one.
    #[inline]
    pub fn value(&self, code: i32) -> f64 {
        usize::try_from(code)
            .ok()
            .and_then(|c| self.levels.get(c).copied())
            .unwrap_or(self.prior)
    }

    /// The name of the feature of target `k` of `n_targets` from column `source`.
    pub fn feature_name(source: &str, k: usize, n_targets: usize) -> String {
        match n_targets {
            1 => source.to_string(),
            _ => format!("{source}[{k}]"),
        }
    }
}

/// The targets the statistics average: t_k(i), k < `n`.
#[derive(Debug, Clone, Copy)]
pub enum Targets<'a> {
    Scalar(&'a [f64]),
    /// Class indices; t_k(i) = [y_i = k].
    Classes {
        y: &'a [f64],
        n: usize,
    },
    /// Row-major n_rows × n.
    Outputs {
        y: &'a [f64],
        n: usize,
    },
}

impl Targets<'_> {
    fn n(&self) -> usize {
        match *self {
            Targets::Scalar(_) => 1,
            Targets::Classes { n, .. } | Targets::Outputs { n, .. } => n,
        }
    }
    #[inline]
    fn get(&self, row: usize, k: usize) -> f64 {
        match *self {
            Targets::Scalar(y) => y[row],
            Targets::Classes { y, .. } => f64::from(u8::from(y[row] == k as f64)),
            Targets::Outputs { y, n } => y[row * n + k],
        }
    }
}

/// Numeric columns computed from categorical ones, each in place of its source column.
#[derive(Debug, Default)]
pub struct Derived {
    /// (index of the source column in the frame, feature name, values).
    columns: Vec<(usize, String, Vec<f64>)>,
}

impl Derived {
    /// `frame` with each source column replaced by the columns derived from it.
    pub fn frame<'s>(&'s self, frame: &Frame<'s>) -> Result<Frame<'s>> {
        if self.columns.is_empty() {
            return Ok(frame.clone());
        }
        let mut out = Vec::with_capacity(frame.n_features() + self.columns.len());
        for (j, feature) in frame.features().iter().enumerate() {
            let mut derived = self.columns.iter().filter(|c| c.0 == j).peekable();
            if derived.peek().is_none() {
                out.push(feature.clone());
            }
            out.extend(derived.map(|(_, name, values)| Feature::numeric(name.clone(), values)));
        }
        Frame::new(out)
    }
}

/// The most permutations `cat_permutations` may ask for (each one is a pass over the rows).
pub const MAX_PERMUTATIONS: usize = 64;

/// How the statistics are computed: the prior's weight a, the number of permutations averaged.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub prior_weight: f64,
    pub permutations: usize,
    /// The most combinations of two columns to add (target_combinations.rs).
    pub combinations: usize,
}

impl Settings {
    pub fn validate(&self) -> Result<()> {
        if !(self.prior_weight.is_finite() && self.prior_weight > 0.0) {
            return Err(Error::param(
                "cat_prior_weight",
                self.prior_weight,
                "a finite number > 0",
            ));
        }
        if !(1..=MAX_PERMUTATIONS).contains(&self.permutations) {
            return Err(Error::param(
                "cat_permutations",
                self.permutations,
                format!("an integer in 1..={MAX_PERMUTATIONS}"),
            ));
        }
        if self.combinations > combinations::MAX_COMBINATIONS {
            return Err(Error::param(
                "cat_combinations",
                self.combinations,
                format!("an integer in 0..={}", combinations::MAX_COMBINATIONS),
            ));
        }
        Ok(())
    }
}

/// The ordered statistics of the training rows of every categorical column `encodings` gives
/// target statistics, and the all-row statistics by feature name. `seed` draws the permutations.
pub fn fit_ordered(
    frame: &Frame<'_>,
    encodings: &CatEncodings,
    targets: Targets<'_>,
    weights: Option<&[f64]>,
    settings: Settings,
    seed: u64,
) -> Result<(Derived, Vec<(String, TargetStat)>)> {
    for name in encodings.by_feature.keys() {
        let found = frame.features().iter().find(|f| &f.name == name);
        if !matches!(
            found.map(|f| f.values),
            Some(FeatureValues::Categorical { .. })
        ) {
            return Err(Error::param(
                "cat_encoding",
                format!("{name:?}"),
                "names of categorical feature columns",
            ));
        }
    }
    let sources: Vec<(usize, &[i32], u32)> = (frame.features().iter().enumerate())
        .filter_map(|(j, f)| match f.values {
            FeatureValues::Categorical { codes, n_levels }
                if encodings.of(&f.name) == CatEncoding::TargetStats =>
            {
                Some((j, codes, n_levels))
            }
            _ => None,
        })
        .collect();
    let mut derived = Derived::default();
    let mut stats = Vec::new();
    if sources.is_empty() {
        return Ok((derived, stats));
    }
    let n_rows = frame.n_rows();
    let k = targets.n();
    let weight = |i: usize| weights.map_or(1.0, |w| w[i]);
    let priors = priors(targets, n_rows, weight)?;
    let orders: Vec<Vec<usize>> = (0..settings.permutations)
        .map(|p| permutation(n_rows, permutation_seed(seed, p)))
        .collect();
    let ordered = Ordered {
        targets,
        weights,
        priors: &priors,
        prior_weight: settings.prior_weight,
        orders: &orders,
    };
    let mut singles = Vec::with_capacity(sources.len());
    for &(j, codes, n_levels) in &sources {
        let (values, levels) = ordered.statistics(codes, n_levels as usize);
        if settings.combinations > 0 {
            singles.push(combinations::Single {
                column: j,
                codes,
                n_levels,
                error: ordered.error(&values),
            });
        }
        let source = &frame.features()[j].name;
        for (t, (values, levels)) in values.into_iter().zip(levels).enumerate() {
            let name = TargetStat::feature_name(source, t, k);
            let stat = ordered.stat(source, t, levels, None);
            derived.columns.push((j, name.clone(), values));
            stats.push((name, stat));
        }
    }
    if settings.combinations > 0 {
        let chosen = combinations::choose(frame, &singles, &ordered, settings.combinations);
        for pair in chosen {
            let (values, levels) = ordered.statistics(&pair.codes, pair.n_levels);
            for (t, (values, levels)) in values.into_iter().zip(levels).enumerate() {
                let name = TargetStat::feature_name(&pair.name, t, k);
                let with = combinations::CombinedWith {
                    source: pair.with.clone(),
                    n_levels: pair.with_levels,
                };
                let stat = ordered.stat(&pair.source, t, levels, Some(with));
                derived.columns.push((pair.column, name.clone(), values));
                stats.push((name, stat));
            }
        }
    }
    Ok((derived, stats))
}

/// The ordered statistics of one categorical code column under every permutation.
pub(super) struct Ordered<'a> {
    targets: Targets<'a>,
    weights: Option<&'a [f64]>,
    priors: &'a [f64],
    prior_weight: f64,
    orders: &'a [Vec<usize>],
}

impl Ordered<'_> {
    /// Per target: each row's ordered statistic averaged over the permutations, and each
    /// level's statistic over all rows.
    pub(super) fn statistics(
        &self,
        codes: &[i32],
        levels: usize,
    ) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
        let (k, a, priors) = (self.targets.n(), self.prior_weight, self.priors);
        let weight = |i: usize| self.weights.map_or(1.0, |w| w[i]);
        let mut values = vec![vec![0.0; codes.len()]; k];
        let mut all_rows = Vec::new();
        for order in self.orders {
            let mut sums = vec![0.0; levels * k];
            let mut counts = vec![0.0; levels];
            for &i in order {
                let Ok(c) = usize::try_from(codes[i]) else {
                    (0..k).for_each(|t| values[t][i] += priors[t]);
                    continue;
                };
                for t in 0..k {
                    values[t][i] += (sums[c * k + t] + a * priors[t]) / (counts[c] + a);
                    sums[c * k + t] += weight(i) * self.targets.get(i, t);
                }
                counts[c] += weight(i);
            }
            // Every pass ends with the sums over all rows; the model keeps the first pass's, so
            // that its statistics do not depend on the number of permutations.
            if all_rows.is_empty() {
                all_rows = (0..k)
                    .map(|t| {
                        (0..levels)
                            .map(|c| (sums[c * k + t] + a * priors[t]) / (counts[c] + a))
                            .collect()
                    })
                    .collect();
            }
        }
        if self.orders.len() > 1 {
            let s = self.orders.len() as f64;
            values.iter_mut().flatten().for_each(|v| *v /= s);
        }
        (values, all_rows)
    }

    /// The weighted squared error of `values[t]` (one column per target) as predictions of the
    /// targets: for ordered statistics, each row predicted from the rows before it.
    pub(super) fn error(&self, values: &[Vec<f64>]) -> f64 {
        let weight = |i: usize| self.weights.map_or(1.0, |w| w[i]);
        let mut total = 0.0;
        for (t, column) in values.iter().enumerate() {
            for (i, v) in column.iter().enumerate() {
                let e = self.targets.get(i, t) - v;
                total += weight(i) * e * e;
            }
        }
        total
    }

    fn stat(
        &self,
        source: &str,
        t: usize,
        levels: Vec<f64>,
        with: Option<combinations::CombinedWith>,
    ) -> TargetStat {
        TargetStat {
            source: source.to_string(),
            target: t as u32,
            prior: self.priors[t],
            prior_weight: self.prior_weight,
            levels,
            with,
        }
    }
}

/// The weighted mean of each target over all rows.
fn priors(targets: Targets<'_>, n_rows: usize, weight: impl Fn(usize) -> f64) -> Result<Vec<f64>> {
    let total: f64 = (0..n_rows).map(&weight).sum();
    (0..targets.n())
        .map(|t| {
            let p = (0..n_rows)
                .map(|i| weight(i) * targets.get(i, t))
                .sum::<f64>()
                / total;
            if p.is_finite() {
                Ok(p)
            } else {
                Err(Error::value(
                    "training target",
                    format!(
                        "cat_encoding=target_stats needs a finite weighted mean target, got {p} \
                         (total weight {total})"
                    ),
                ))
            }
        })
        .collect()
}

/// The seed of permutation `p`: the first is the seed itself (one permutation is as before).
fn permutation_seed(seed: u64, p: usize) -> u64 {
    seed ^ (p as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// A uniform permutation of 0..n (Fisher–Yates), from its own stream of the seed so that the
/// booster's draws stay as they are without target statistics.
pub fn permutation(n: usize, seed: u64) -> Vec<usize> {
    let mut rng = Rng::new(seed ^ 0x7a26_e3c5_0b1f_4d93);
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        order.swap(i, rng.below(i + 1));
    }
    order
}

/// The all-row statistics `stats` (by feature name, in order) of the rows of `frame`: each
/// source column, found by name, must be categorical with at most as many levels as at fit.
pub fn apply(frame: &Frame<'_>, stats: &[(&str, &TargetStat)]) -> Result<Derived> {
    let mut derived = Derived::default();
    for &(name, stat) in stats {
        let (j, codes) = source_codes(frame, &stat.source, stat.source_levels())?;
        let values = match &stat.with {
            None => codes.iter().map(|&c| stat.value(c)).collect(),
            Some(with) => {
                let (_, other) = source_codes(frame, &with.source, with.n_levels as usize)?;
                let pairs = codes.iter().zip(other);
                pairs.map(|(&a, &b)| stat.value_of(a, b)).collect()
            }
        };
        derived.columns.push((j, name.to_string(), values));
    }
    Ok(derived)
}

/// The position and codes of the categorical column `source` of `frame`, which may have at
/// most `levels` levels (the model's).
fn source_codes<'f>(frame: &Frame<'f>, source: &str, levels: usize) -> Result<(usize, &'f [i32])> {
    let found = frame.features().iter().position(|f| f.name == source);
    let j = found.ok_or_else(|| {
        Error::data(format!(
            "the model's categorical column `{source}` (target statistics) is not among the \
             frame's columns"
        ))
    })?;
    let FeatureValues::Categorical { codes, n_levels } = frame.features()[j].values else {
        return Err(Error::value(
            source,
            "the model was trained on a categorical column, got a numeric one",
        ));
    };
    if n_levels as usize > levels {
        return Err(Error::value(
            source,
            format!(
                "categorical column has {n_levels} levels but the model was trained with {levels}"
            ),
        ));
    }
    Ok((j, codes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame<'a>(codes: &'a [i32], x: &'a [f64]) -> Frame<'a> {
        let n_levels = codes.iter().copied().max().unwrap_or(0).max(0) as u32 + 1;
        Frame::new(vec![
            Feature::numeric("x", x),
            Feature::categorical("c", codes, n_levels),
        ])
        .unwrap()
    }

    fn all() -> CatEncodings {
        CatEncodings::parse("target_stats").unwrap()
    }

    fn settings(prior_weight: f64) -> Settings {
        Settings {
            prior_weight,
            permutations: 1,
            combinations: 0,
        }
    }

    #[test]
    fn the_ordered_statistic_is_the_mean_over_earlier_rows_of_the_level_by_brute_force() {
        let codes = [0, 1, 0, 2, 0, 1, -1, 0, 2, 1];
        let y = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0];
        let w = [1.0, 2.0, 0.5, 1.0, 1.0, 3.0, 1.0, 1.0, 2.0, 1.0];
        let x = [0.0; 10];
        let a = 2.0;
        let p = (0..10).map(|i| w[i] * y[i]).sum::<f64>() / w.iter().sum::<f64>();
        // Row i's statistic under one permutation: its level's rows before it.
        let ordered = |order: &[usize], i: usize| {
            let pos = order.iter().position(|&r| r == i).unwrap();
            if codes[i] < 0 {
                return p;
            }
            let earlier = order[..pos].iter().filter(|&&r| codes[r] == codes[i]);
            let (s, n) = earlier.fold((0.0, 0.0), |(s, n), &r| (s + w[r] * y[r], n + w[r]));
            (s + a * p) / (n + a)
        };
        for permutations in [1, 3] {
            let settings = Settings {
                prior_weight: a,
                permutations,
                combinations: 0,
            };
            let (derived, stats) = fit_ordered(
                &frame(&codes, &x),
                &all(),
                Targets::Scalar(&y),
                Some(&w),
                settings,
                7,
            )
            .unwrap();
            let fitted = derived.frame(&frame(&codes, &x)).unwrap();
            assert_eq!(fitted.names(), ["x", "c"]);
            let FeatureValues::Numeric(values) = fitted.features()[1].values else {
                panic!()
            };
            let orders: Vec<Vec<usize>> = (0..permutations)
                .map(|q| permutation(10, permutation_seed(7, q)))
                .collect();
            assert_eq!(orders[0], permutation(10, 7), "the first is the seed's own");
            for i in 0..10 {
                let expected =
                    orders.iter().map(|o| ordered(o, i)).sum::<f64>() / permutations as f64;
                assert!(
                    (values[i] - expected).abs() < 1e-12,
                    "{permutations} permutations, row {i}: {} vs {expected}",
                    values[i]
                );
            }
            let stat = &stats[0].1;
            for level in 0..3 {
                let rows = (0..10).filter(|&r| codes[r] == level);
                let (s, n) = rows.fold((0.0, 0.0), |(s, n), r| (s + w[r] * y[r], n + w[r]));
                assert!((stat.levels[level as usize] - (s + a * p) / (n + a)).abs() < 1e-12);
            }
            assert_eq!((stat.value(-1), stat.value(3)), (p, p));
        }
        assert_ne!(
            permutation(10, permutation_seed(7, 1)),
            permutation(10, 7),
            "the permutations differ"
        );
    }

    #[test]
    fn a_rows_own_target_never_reaches_its_statistic() {
        let codes: Vec<i32> = (0..200).map(|i| (i * 7 % 5) as i32).collect();
        let x = vec![0.0; 200];
        let y: Vec<f64> = (0..200).map(|i| f64::from(i % 3 == 0)).collect();
        let values = |y: &[f64]| {
            let f = frame(&codes, &x);
            let (d, _) =
                fit_ordered(&f, &all(), Targets::Scalar(y), None, settings(1.0), 3).unwrap();
            d.columns[0].2.clone()
        };
        let order = permutation(200, 3);
        let before = values(&y);
        for pos in [0, 50, 150] {
            // Swap row i's target with that of a later row of the permutation: the prior and
            // the sums over rows before i are unchanged, so i's value must be too.
            let i = order[pos];
            let gap = order[pos + 1..].iter().position(|&j| y[j] != y[i]).unwrap();
            let j = order[pos + 1 + gap];
            let mut swapped = y.clone();
            swapped.swap(i, j);
            let after = values(&swapped);
            assert_eq!(before[i].to_bits(), after[i].to_bits(), "row {i}");
            // A row of i's level between i and j does see i's target.
            if let Some(&r) = order[pos + 1..=pos + gap]
                .iter()
                .find(|&&r| codes[r] == codes[i])
            {
                assert_ne!(before[r], after[r], "row {r} after {i}");
            }
        }
    }

    #[test]
    fn multiclass_gives_one_statistic_per_class_and_unseen_levels_the_prior() {
        let codes = [0, 0, 1, 1, 1, 2];
        let y = [0.0, 2.0, 1.0, 1.0, 0.0, 2.0];
        let x = [0.0; 6];
        let (d, stats) = fit_ordered(
            &frame(&codes, &x),
            &all(),
            Targets::Classes { y: &y, n: 3 },
            None,
            settings(1.0),
            0,
        )
        .unwrap();
        let names: Vec<&str> = stats.iter().map(|s| s.0.as_str()).collect();
        assert_eq!(names, ["c[0]", "c[1]", "c[2]"]);
        assert_eq!(
            d.frame(&frame(&codes, &x)).unwrap().names(),
            ["x", "c[0]", "c[1]", "c[2]"]
        );
        // Level 1: classes 1, 1, 0 → class-1 rate (2 + 1·(2/6)) / (3 + 1).
        assert!((stats[1].1.levels[1] - (2.0 + 2.0 / 6.0) / 4.0).abs() < 1e-15);
        let pairs: Vec<(&str, &TargetStat)> = stats.iter().map(|(n, s)| (n.as_str(), s)).collect();
        let unseen = [-1, 2, 0];
        let applied = apply(
            &Frame::new(vec![Feature::categorical("c", &unseen, 3)]).unwrap(),
            &pairs,
        )
        .unwrap();
        assert_eq!(applied.columns[2].2[0], stats[2].1.prior);
        assert_eq!(applied.columns[2].2[1], stats[2].1.levels[2]);
    }

    #[test]
    fn encodings_parse_a_default_and_exceptions_and_reject_the_rest() {
        let e = CatEncodings::parse("target_stats, state:partition").unwrap();
        assert_eq!(
            (e.of("city"), e.of("state")),
            (CatEncoding::TargetStats, CatEncoding::Partition)
        );
        assert!(!CatEncodings::parse("partition")
            .unwrap()
            .uses_target_stats());
        assert!(CatEncodings::parse("zip:target_stats")
            .unwrap()
            .uses_target_stats());
        for bad in ["", "ordered", "a:b", ":target_stats", "target_stats,"] {
            let e = CatEncodings::parse(bad).unwrap_err().to_string();
            assert!(e.contains("cat_encoding"), "{bad}: {e}");
        }
    }
}
