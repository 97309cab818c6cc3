//! The reductions of a data-parallel fit (docs/algorithms.md §12). Every rank runs the same
//! booster on its own rows; wherever an iteration reads a sum over all rows, each rank computes
//! its part and the [`Collective`] adds the parts in rank order, so that every rank gets the same
//! bits and makes the same decisions. Sums (losses, weights, cosines, Newton leaves) need one
//! reduction each. The one-dimensional minimisations that are not sums (the initial constant,
//! the line searches, the exact leaf searches) are solved on the summed slope:
//!
//! * a smooth loss by the local solver's own safeguarded Newton iteration
//!   (`solve::minimize_convex`), one reduction of (φ', φ'') per step;
//! * a piecewise-linear loss (absolute, pinball, hinge) exactly: the argmin is where the summed
//!   slope crosses zero, which is at one of the kinks of some rank. Both ends of the argmin
//!   interval are found by bisection over the ordered f64 values (at most 64 rounds, all the
//!   problems of a tree in each round), so they are kinks, bit for bit, and the point picked is
//!   the one the local solver picks ([`solve::pick`]).
//!
//! With one rank (`Local`) every reduction is the identity and the solvers here are not called:
//! the local solvers answer, bit for bit as before.

use super::history;
use super::vectors::CHUNK;
use super::Context;
use crate::collective::Collective;
use crate::data::Frame;
use crate::error::{Error, Result};
use crate::loss::solve::{self, Kink, Slope, LINE_SEARCH_MAX_ITER, LINE_SEARCH_TOL};
use crate::loss::{Loss, LossSpec, Terms};
use crate::metric::Metric;
use crate::params::Params;
use rayon::prelude::*;
use std::ops::Range;

/// Refuses what a data-parallel fit cannot do: a loss whose value is not a sum over rows, the
/// target statistics and the auc metric (both need every row at once), and columns named by
/// levels (each rank would code its own strings).
pub(super) fn check_distributable(params: &Params, frame: &Frame<'_>) -> Result<()> {
    if !params.loss.traits().distributable {
        let losses: Vec<&str> = (LossSpec::vocabulary())
            .filter(|spec| spec.traits().distributable)
            .map(|spec| spec.name())
            .collect();
        return Err(Error::param(
            "loss",
            params.loss.to_string(),
            format!("a loss a data-parallel fit supports: {}", losses.join(", ")),
        ));
    }
    if params.cat_encoding.uses_target_stats() {
        return Err(Error::param(
            "cat_encoding",
            "target_stats",
            "partition in a data-parallel fit (ordered target statistics need every row \
             in one permutation; this rank holds only its own)",
        ));
    }
    if let Some(named) = frame.features().iter().find(|f| f.levels.is_some()) {
        // Each rank would code its own strings: the same code could mean other levels.
        return Err(Error::value(
            &named.name,
            "a data-parallel fit takes codes that mean the same levels on every rank: \
             Feature::categorical with the codes of Categories::with_levels, given the same \
             levels on each rank",
        ));
    }
    if params.metrics.contains(&Metric::Auc) {
        let names: Vec<String> = params.metrics.iter().map(ToString::to_string).collect();
        return Err(Error::param(
            "metrics",
            names.join(","),
            "metrics a data-parallel fit supports (not auc, a ranking of all the rows)",
        ));
    }
    Ok(())
}

/// The collective when the rows are spread over more than one rank.
pub(crate) fn shared(collective: &dyn Collective) -> Option<&dyn Collective> {
    (collective.world() > 1).then_some(collective)
}

/// `Loss::sigma_from` over the rows of every rank: the largest of the ranks' values.
pub(crate) fn sigma_over_ranks(collective: &dyn Collective, sigma: Option<f64>) -> Option<f64> {
    shared(collective).map_or(sigma, |collective| {
        let mut largest = [sigma.unwrap_or(f64::NEG_INFINITY)];
        collective.max(&mut largest);
        Some(largest[0]).filter(|s| s.is_finite())
    })
}

/// The global indices of this rank's training rows (`n` of them), in order: `rows` if given,
/// else the block after the lower ranks' rows. The row draws (`subsample`, GOSS, the Bayesian
/// bootstrap) are keyed by them.
pub(super) fn global_rows(
    collective: &dyn Collective,
    rows: Option<&[Range<usize>]>,
    n: usize,
) -> Result<Vec<Range<u64>>> {
    let n = n as u64;
    if let Some(rows) = rows {
        return Ok((rows.iter())
            .map(|r| r.start as u64..r.end as u64)
            .collect());
    }
    if collective.world() == 1 {
        return Ok(vec![0..n]);
    }
    let counts = collective.all_gather(&n.to_le_bytes());
    if let Some(error) = collective.failure() {
        return Err(error);
    }
    let mut start = 0u64;
    for bytes in &counts[..collective.rank()] {
        let count = <[u8; 8]>::try_from(bytes.as_slice())
            .map_err(|_| Error::data("a worker's row count is not 8 bytes"))?;
        start = start.saturating_add(u64::from_le_bytes(count));
    }
    Ok(vec![start..start + n])
}

/// Σ over the ranks of one number.

pub(crate) fn sum_one(collective: &dyn Collective, x: f64) -> f64 {
    let mut x = [x];
    collective.sum(&mut x);
    x[0]
}

impl Context<'_> {
    /// cos(t, b) from this rank's Σ t·b, Σ t², Σ b².
    pub(super) fn cosine_from_sums(&self, tb: f64, tt: f64, bb: f64) -> f64 {
        let mut sums = [tb, tt, bb];
        self.collective.sum(&mut sums);
        let [tb, tt, bb] = sums;
        history::cosine_from_sums(tb, tt, bb)
    }

    /// `Context::line_search`'s argmin_γ Σ w ℓ(y, F + γ B) over the rows of every rank.
    pub(super) fn line_search_over_ranks(
        &self,
        collective: &dyn Collective,
        f: &[f64],
        b: &[f64],
    ) -> f64 {
        let (loss, y) = (self.loss, self.y);
        let w = self.line_search_weights().slice();
        let along = |_| Terms::Along { y, f, b, w };
        let slope = |_, gamma| slope_along(loss, y, f, b, w, gamma);
        minimize_over_ranks(collective, loss, 1, along, slope)[0]
    }

    /// The leaf line search of output `class` over the rows of every rank (`leaves[j]`: this
    /// rank's rows of leaf j): `newton_steps` Newton steps on every leaf at once, as
    /// `leaf_newton_value` takes them one leaf at a time, then the exact search for the leaves
    /// Newton cannot step (no curvature) or when no Newton step is asked for.
    pub(super) fn leaf_values_over_ranks(
        &self,
        collective: &dyn Collective,
        f: &[f64],
        leaves: &[&[u32]],
        class: usize,
        newton_steps: usize,
    ) -> Vec<f64> {
        let (loss, y) = (self.loss, self.y);
        let w = self.line_search_weights().slice();
        let l2 = self.params.tree.l2_leaf;
        let m = leaves.len();
        let mut values: Vec<Option<f64>> = vec![None; m];
        let mut c = vec![0.0; m];
        let mut stepping: Vec<usize> = if newton_steps > 0 {
            (0..m).collect()
        } else {
            Vec::new()
        };
        for step in 0..newton_steps {
            let mut sums: Vec<f64> = stepping
                .par_iter()
                .flat_map_iter(|&j| {
                    let (d1, d2) =
                        loss.shifted_derivative_sums(y, f, w, leaves[j], (class, c[j]), 0.0);
                    [d1, d2]
                })
                .collect();
            collective.sum(&mut sums);
            stepping = (stepping.iter().enumerate())
                .filter_map(|(i, &j)| {
                    let (d1, d2) = (l2 * c[j] + sums[2 * i], sums[2 * i + 1]);
                    if !(d2 > 0.0 && d2.is_finite() && d1.is_finite()) {
                        values[j] = (step > 0).then_some(c[j]);
                        return None;
                    }
                    c[j] -= d1 / (d2 + l2);
                    Some(j)
                })
                .collect();
        }
        stepping.iter().for_each(|&j| values[j] = Some(c[j]));
        // Which leaves are left depends on summed values only: the same on every rank.
        let exact: Vec<usize> = (0..m).filter(|&j| values[j].is_none()).collect();
        if !exact.is_empty() {
            let leaf = |i: usize| Terms::Leaf {
                y,
                f,
                w,
                rows: leaves[exact[i]],
            };
            let slope = |i: usize, c: f64| {
                loss.shifted_derivative_sums(y, f, w, leaves[exact[i]], (class, c), 0.0)
            };
            let solved = minimize_over_ranks(collective, loss, exact.len(), leaf, slope);
            exact
                .iter()
                .zip(solved)
                .for_each(|(&j, v)| values[j] = Some(v));
        }
        values.into_iter().map(|v| v.unwrap_or(0.0)).collect()
    }
}

/// The initial constant (K values) over the rows of every rank: `Loss::init`, or with `offset`
/// the per-class `leaf_value` on top of it, as `Booster::prepare` computes them on one process.
pub(crate) fn init_over_ranks(
    collective: &dyn Collective,
    loss: &dyn Loss,
    y: &[f64],
    w: &[f64],
    offset: Option<&[f64]>,
) -> Vec<f64> {
    let (k, n) = (loss.n_outputs(), w.len());
    if offset.is_none() && loss.init_from_class_weights(&vec![1.0; k]).is_some() {
        let mut totals = vec![0.0; k];
        y.iter().zip(w).for_each(|(&y, &w)| totals[y as usize] += w);
        collective.sum(&mut totals);
        return loss
            .init_from_class_weights(&totals)
            .expect("checked above");
    }
    let zeros;
    let f = match offset {
        Some(offset) => offset,
        None => {
            zeros = vec![0.0; n * k];
            &zeros
        }
    };
    let rows: Vec<u32> = (0..n as u32).collect();
    // Per class: the terms are every row's, shifted along that class (piecewise-linear losses
    // are scalar, K = 1).
    let all_rows = |_| Terms::Leaf {
        y,
        f,
        w,
        rows: &rows,
    };
    let slope = |class, c| loss.shifted_derivative_sums(y, f, w, &rows, (class, c), 0.0);
    minimize_over_ranks(collective, loss, k, all_rows, slope)
}

/// This rank's (Σ w ⟨∇ℓ(y, F + γB), B⟩, Σ w ⟨B, diag ∇²ℓ B⟩): the slope and (diagonal)
/// curvature of the line search along B, in fixed row chunks.
fn slope_along(
    loss: &dyn Loss,
    y: &[f64],
    f: &[f64],
    b: &[f64],
    w: &[f64],
    gamma: f64,
) -> (f64, f64) {
    let (k, t) = (loss.n_outputs(), loss.target_width());
    let chunks: Vec<(f64, f64)> = (0..w.len().div_ceil(CHUNK))
        .into_par_iter()
        .map(|chunk| {
            let (mut u, mut g, mut h) = (vec![0.0; k], vec![0.0; k], vec![0.0; k]);
            let (mut d1, mut d2) = (0.0, 0.0);
            for r in chunk * CHUNK..((chunk + 1) * CHUNK).min(w.len()) {
                let (fr, br) = (&f[r * k..(r + 1) * k], &b[r * k..(r + 1) * k]);
                u.iter_mut()
                    .zip(fr.iter().zip(br))
                    .for_each(|(u, (f, b))| *u = f + gamma * b);
                let yr = &y[r * t..(r + 1) * t];
                loss.row_gradient(yr, &u, &mut g);
                loss.row_hessian(yr, &u, &mut h);
                for j in 0..k {
                    d1 += w[r] * br[j] * g[j];
                    d2 += w[r] * br[j] * br[j] * h[j];
                }
            }
            (d1, d2)
        })
        .collect();
    chunks
        .iter()
        .fold((0.0, 0.0), |(a, b), &(c, d)| (a + c, b + d))
}

/// The argmin of `problems` one-dimensional convex problems of `loss` whose terms are spread
/// over the ranks: `terms(j)` are this rank's terms of problem j, and `slope(j, c)` this rank's
/// (Σ φ_j'(c), Σ φ_j''(c)). A piecewise-linear loss (one that gives kinks) is solved exactly
/// on the kinks of every rank, the others by Newton on the summed slope.
pub(crate) fn minimize_over_ranks<'t>(
    collective: &dyn Collective,
    loss: &dyn Loss,
    problems: usize,
    terms: impl Fn(usize) -> Terms<'t>,
    slope: impl Fn(usize, f64) -> (f64, f64),
) -> Vec<f64> {
    let piecewise_linear = loss.kinks(Terms::Constant { y: &[], w: &[] }).is_some();
    if piecewise_linear {
        let parts: Vec<(f64, Vec<Kink>)> = (0..problems)
            .map(|j| {
                let kinks = loss.kinks(terms(j));
                kinks.expect("a loss that gives kinks gives them for every problem")
            })
            .collect();
        return select_kinks(collective, parts);
    }
    (0..problems)
        .map(|j| {
            solve::minimize_convex(
                |c| {
                    let (d1, d2) = slope(j, c);
                    let mut sums = [d1, d2];
                    collective.sum(&mut sums);
                    Slope::new(sums[0], sums[1])
                },
                LINE_SEARCH_TOL,
                LINE_SEARCH_MAX_ITER,
            )
        })
        .collect()
}

/// One rank's kinks of one problem, sorted, with the slope increase up to each.
struct SortedKinks {
    at: Vec<f64>,
    /// `rise[i]`: Σ of the jumps of the first i kinks.
    rise: Vec<f64>,
}

impl SortedKinks {
    fn new(mut kinks: Vec<Kink>) -> SortedKinks {
        kinks.sort_unstable_by(|a, b| a.at.total_cmp(&b.at));
        let mut rise = Vec::with_capacity(kinks.len() + 1);
        let mut total = 0.0;
        rise.push(total);
        for kink in &kinks {
            total += kink.jump;
            rise.push(total);
        }
        SortedKinks {
            at: kinks.iter().map(|k| k.at).collect(),
            rise,
        }
    }

    /// Σ of the jumps of the kinks at or before `x`.
    fn rise_through(&self, x: f64) -> f64 {
        let n = self.at.partition_point(|&a| a.total_cmp(&x).is_le());
        self.rise[n]
    }
}

/// A search for the first kink where a condition on the summed slope holds, over the f64 values
/// in their total order (as integers, see `order_key`).
#[derive(Clone, Copy)]
struct Search {
    /// The answer's key lies in lo..=hi.
    lo: u64,
    hi: u64,
}

impl Search {
    fn over_all_values() -> Search {
        Search {
            lo: order_key(f64::NEG_INFINITY),
            hi: order_key(f64::INFINITY),
        }
    }
    fn done(&self) -> bool {
        self.lo >= self.hi
    }
    fn mid(&self) -> u64 {
        self.lo + (self.hi - self.lo) / 2
    }
}

/// u64 keys in the order of `f64::total_cmp`.
fn order_key(x: f64) -> u64 {
    let bits = x.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

fn from_order_key(key: u64) -> f64 {
    f64::from_bits(if key >> 63 == 1 {
        key & !(1 << 63)
    } else {
        !key
    })
}

/// `solve::piecewise_linear_point` of every problem, each rank holding part of its kinks.
fn select_kinks(collective: &dyn Collective, parts: Vec<(f64, Vec<Kink>)>) -> Vec<f64> {
    let m = parts.len();
    // (slope below every kink, total of the jumps, number of kinks) of every problem.
    let mut head = Vec::with_capacity(3 * m);
    for (slope_left, kinks) in &parts {
        head.extend([
            *slope_left,
            kinks.iter().map(|k| k.jump).sum::<f64>(),
            kinks.len() as f64,
        ]);
    }
    collective.sum(&mut head);
    let sorted: Vec<SortedKinks> = parts
        .into_iter()
        .map(|(_, k)| SortedKinks::new(k))
        .collect();
    // Per problem: the slope below every kink and the tolerance of `piecewise_linear_argmin`.
    let slope_left: Vec<f64> = (0..m).map(|j| head[3 * j]).collect();
    let tol: Vec<f64> = (0..m)
        .map(|j| 1e-12 * (head[3 * j].abs() + head[3 * j + 1]))
        .collect();
    let reaches_zero = |j: usize, slope: f64| slope >= -tol[j];
    let rises = |j: usize, slope: f64| slope > tol[j];
    let conditions: [&dyn Fn(usize, f64) -> bool; 2] = [&reaches_zero, &rises];
    // searches[2j]: the argmin's lower end (the first kink where the slope reaches 0),
    // searches[2j + 1]: its upper end (the first where it rises above 0); None: not searched.
    let mut searches: Vec<Option<Search>> = Vec::with_capacity(2 * m);
    for j in 0..m {
        let (slope, top) = (slope_left[j], slope_left[j] + head[3 * j + 1]);
        let trivial = head[3 * j + 2] == 0.0 || rises(j, slope);
        for (end, holds) in conditions.iter().enumerate() {
            // The lower end is −∞ when the slope is already 0 below every kink.
            let known = trivial || (end == 0 && reaches_zero(j, slope));
            let needed = !known && holds(j, top);
            searches.push(needed.then(Search::over_all_values));
        }
    }
    let mut sums = Vec::with_capacity(2 * m);
    while searches.iter().flatten().any(|s| !s.done()) {
        sums.clear();
        for (i, search) in searches.iter().enumerate() {
            let rise = search
                .filter(|s| !s.done())
                .map_or(0.0, |s| sorted[i / 2].rise_through(from_order_key(s.mid())));
            sums.push(rise);
        }
        collective.sum(&mut sums);
        for (i, search) in searches.iter_mut().enumerate() {
            if let Some(s) = search.as_mut().filter(|s| !s.done()) {
                let j = i / 2;
                if conditions[i % 2](j, slope_left[j] + sums[i]) {
                    s.hi = s.mid();
                } else {
                    s.lo = s.mid() + 1;
                }
            }
        }
    }
    (0..m)
        .map(|j| {
            let (slope, top) = (slope_left[j], slope_left[j] + head[3 * j + 1]);
            if head[3 * j + 2] == 0.0 {
                return 0.0;
            }
            if rises(j, slope) {
                // φ increases everywhere: the infimum is at −∞.
                return solve::pick((f64::NEG_INFINITY, f64::NEG_INFINITY));
            }
            let lo = if reaches_zero(j, slope) {
                f64::NEG_INFINITY
            } else if reaches_zero(j, top) {
                from_order_key(searches[2 * j].expect("searched").lo)
            } else {
                // φ decreases everywhere: the infimum is at +∞.
                return solve::pick((f64::INFINITY, f64::INFINITY));
            };
            let hi = searches[2 * j + 1].map_or(f64::INFINITY, |s| from_order_key(s.lo));
            solve::pick((lo, hi))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collective::Local;
    use crate::rng::Rng;

    #[test]
    fn order_keys_follow_total_order() {
        let xs = [
            f64::NEG_INFINITY,
            -1e300,
            -1.0,
            -f64::MIN_POSITIVE,
            -0.0,
            0.0,
            1e-300,
            2.5,
            f64::INFINITY,
        ];
        for pair in xs.windows(2) {
            assert!(order_key(pair[0]) < order_key(pair[1]), "{pair:?}");
        }
        for &x in &xs {
            assert_eq!(from_order_key(order_key(x)).to_bits(), x.to_bits());
        }
    }

    /// With one rank the selection is the local exact search: the same point, bit for bit.
    #[test]
    fn selection_equals_the_local_kink_search() {
        let mut rng = Rng::new(7);
        let mut uniform = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        for case in 0..300 {
            let n = 1 + case % 17;
            let kinks: Vec<Kink> = (0..n)
                .map(|_| Kink {
                    // Repeated positions and zero jumps, as medians of ties give.
                    at: (uniform() * 6.0).floor() - 3.0,
                    jump: if uniform() < 0.1 {
                        0.0
                    } else {
                        uniform() * 2.0
                    },
                })
                .collect();
            let total: f64 = kinks.iter().map(|k| k.jump).sum();
            let slope_left = -total * uniform() * 1.2;
            let local = solve::piecewise_linear_point(slope_left, &mut kinks.clone());
            let selected = select_kinks(&Local, vec![(slope_left, kinks)]);
            assert_eq!(selected[0].to_bits(), local.to_bits(), "case {case}");
        }
    }
}
