//! Combinations of two categorical columns as one more target statistic (Prokhorenkova et al.
//! 2018, "CatBoost: unbiased boosting with categorical features", §3.3 "Feature combinations"):
//! the pair's levels are the pairs of levels, and their ordered statistic can carry what
//! neither column carries alone (a state's rate that differs by year).
//!
//! CatBoost builds combinations greedily inside each tree, from the columns the tree's earlier
//! splits used. Here the features are binned once before the trees, so the choice is made once,
//! greedily too, from the same honest evidence the statistics give: the ordered statistic of a
//! row is a prediction of its target from the rows before it (a prequential error, Dawid 1984),
//! so a pair is kept only when its ordered statistic predicts the target better than the better
//! of its two columns' — which a pair of many sparse levels, shrunk to the prior, does not. The
//! pairs are tried among the columns whose own statistics predict best, the best `combinations`
//! pairs are kept, each stored in the model as a table of numbers over the pairs of levels.

use super::{Frame, Ordered};
use serde::{Deserialize, Serialize};

/// The most combinations `cat_combinations` may ask for.
pub const MAX_COMBINATIONS: usize = 32;
/// The most pairs of levels a combination may have (a table of that many numbers per target).
pub const MAX_COMBINED_LEVELS: usize = 1 << 16;
/// The columns whose pairs are tried: those whose own statistics predict best.
const MAX_COLUMNS_TRIED: usize = 16;

/// The second column of a combination statistic and its number of levels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CombinedWith {
    pub source: String,
    pub n_levels: u32,
}

/// The level of a row of the combination: a · n + b, or −1 (the prior) when either is missing
/// or out of the model's range.
#[inline]
pub fn code(a: i32, b: i32, n_levels_b: u32) -> i32 {
    let n = i32::try_from(n_levels_b).unwrap_or(0);
    if a < 0 || b < 0 || b >= n {
        return -1;
    }
    a.checked_mul(n)
        .and_then(|x| x.checked_add(b))
        .unwrap_or(-1)
}

/// A categorical column with target statistics: its index in the frame, codes, levels and the
/// prequential error of its ordered statistics.
pub(super) struct Single<'a> {
    pub column: usize,
    pub codes: &'a [i32],
    pub n_levels: u32,
    pub error: f64,
}

/// A chosen combination: placed beside its first column, read from both.
pub(super) struct Pair {
    pub column: usize,
    pub source: String,
    pub with: String,
    pub with_levels: u32,
    pub name: String,
    pub codes: Vec<i32>,
    pub n_levels: usize,
}

/// The feature name of the combination of `a` with `b`.
pub fn name(a: &str, b: &str) -> String {
    format!("{a}*{b}")
}

/// At most `max` pairs of `singles`, each better than both of its columns by the prequential
/// error of its ordered statistics, the best first (ties to the earlier columns).
pub(super) fn choose(
    frame: &Frame<'_>,
    singles: &[Single<'_>],
    ordered: &Ordered<'_>,
    max: usize,
) -> Vec<Pair> {
    let mut tried: Vec<&Single> = singles.iter().collect();
    tried.sort_by(|x, y| x.error.total_cmp(&y.error).then(x.column.cmp(&y.column)));
    tried.truncate(MAX_COLUMNS_TRIED);
    tried.sort_by_key(|s| s.column);
    let names: Vec<&str> = frame.features().iter().map(|f| f.name.as_str()).collect();
    let mut scored: Vec<(f64, Pair)> = Vec::new();
    for (i, a) in tried.iter().enumerate() {
        for b in &tried[i + 1..] {
            let levels = a.n_levels as usize * b.n_levels as usize;
            let name = name(names[a.column], names[b.column]);
            let taken = |n: &&str| *n == name || n.starts_with(&format!("{name}["));
            if levels > MAX_COMBINED_LEVELS || names.iter().any(taken) {
                continue;
            }
            let codes: Vec<i32> = (a.codes.iter().zip(b.codes))
                .map(|(&x, &y)| code(x, y, b.n_levels))
                .collect();
            let (values, _) = ordered.statistics(&codes, levels);
            let gain = a.error.min(b.error) - ordered.error(&values);
            if gain > 0.0 {
                let pair = Pair {
                    column: a.column,
                    source: names[a.column].to_string(),
                    with: names[b.column].to_string(),
                    with_levels: b.n_levels,
                    name,
                    codes,
                    n_levels: levels,
                };
                scored.push((gain, pair));
            }
        }
    }
    // A stable sort: equal gains keep the columns' order.
    scored.sort_by(|x, y| y.0.total_cmp(&x.0));
    scored.into_iter().take(max).map(|(_, p)| p).collect()
}
