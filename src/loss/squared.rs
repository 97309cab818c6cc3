//! Squared loss ℓ(y, f) = (y − f)²/2. σ = μ = 1; every minimisation has the closed form
//! Σ w b (y − f) / Σ w b² (weighted means when b = 1), and prox_{λℓ}(z) = (z + λy)/(1 + λ).

use super::{LeafScratch, ScalarLoss, Terms};
use rayon::prelude::*;

/// ℓ(y, f) = (y − f)²/2.
#[derive(Debug, Clone, Copy, Default)]
pub struct Squared;

impl ScalarLoss for Squared {
    fn name(&self) -> &'static str {
        "squared"
    }
    fn value(&self, y: f64, f: f64) -> f64 {
        0.5 * (y - f) * (y - f)
    }
    fn derivative(&self, y: f64, f: f64) -> f64 {
        f - y
    }
    fn second_derivative(&self, _y: f64, _f: f64) -> f64 {
        1.0
    }
    fn prox(&self, y: f64, z: f64, lambda: f64) -> f64 {
        (z + lambda * y) / (1.0 + lambda)
    }
    fn minimize(&self, terms: Terms<'_>) -> f64 {
        // Σ w b (y − f) / Σ w b². With b = 1 and f = 0 every product is exact (w·1 = w, y − 0 = y),
        // so `init` is the weighted mean bit for bit.
        let (mut num, mut den) = (0.0, 0.0);
        terms.for_each(|y, f, b, w| {
            let (n, d) = terms_of(y, f, b, w);
            num += n;
            den += d;
        });
        ratio(num, den)
    }
    fn leaf_value(&self, y: &[f64], f: &[f64], w: &[f64], rows: &[u32]) -> f64 {
        let (num, den) = leaf_sums(rows.iter().map(|&r| {
            let r = r as usize;
            (r, terms_of(y[r], f[r], 1.0, w[r]))
        }));
        ratio(num, den)
    }
    fn leaf_values(
        &self,
        y: &[f64],
        f: &[f64],
        w: &[f64],
        leaves: &[&[u32]],
        leaf_of: &[u32],
        _: &mut LeafScratch,
    ) -> Vec<f64> {
        // Passes over the rows in order instead of one gather per leaf: a leaf's rows are
        // scattered, and gathering them reads a cache line of y, f and w per row, which costs
        // several times the sums. Chunks of rows in parallel, each leaf's chunk sums added in
        // chunk order: `leaf_value`'s sums, bit for bit (see `leaf_sums`).
        let n_chunks = leaf_of.len().div_ceil(SUM_CHUNK);
        if n_chunks * leaves.len() > MAX_PARTIAL_SUMS {
            // Too many leaves for a table of chunk sums: leaf by leaf, the same sums.
            return leaves
                .par_iter()
                .map(|rows| self.leaf_value(y, f, w, rows))
                .collect();
        }
        let partials: Vec<Vec<Option<(f64, f64)>>> = leaf_of
            .par_chunks(SUM_CHUNK)
            .enumerate()
            .map(|(k, chunk)| {
                let mut sums = vec![None; leaves.len()];
                for (i, &leaf) in (k * SUM_CHUNK..).zip(chunk) {
                    let (n, d) = terms_of(y[i], f[i], 1.0, w[i]);
                    let s: &mut (f64, f64) = sums[leaf as usize].get_or_insert((0.0, 0.0));
                    s.0 += n;
                    s.1 += d;
                }
                sums
            })
            .collect();
        let mut totals = vec![(0.0, 0.0); leaves.len()];
        for chunk in partials {
            for (total, sum) in totals.iter_mut().zip(chunk) {
                if let Some((n, d)) = sum {
                    total.0 += n;
                    total.1 += d;
                }
            }
        }
        totals.into_iter().map(|(n, d)| ratio(n, d)).collect()
    }
    fn unit_curvature(&self) -> bool {
        true
    }
    fn sigma(&self) -> Option<f64> {
        Some(1.0)
    }
    fn mu(&self) -> Option<f64> {
        Some(1.0)
    }
}

/// Rows per chunk of the leaf sums.
const SUM_CHUNK: usize = 8_192;
/// At most this many (chunk, leaf) sums in a table (16 MiB).
const MAX_PARTIAL_SUMS: usize = 1 << 20;

/// A leaf's (Σ w (y − f), Σ w) from its (row, terms) in ascending row order: summed within each
/// chunk of SUM_CHUNK row ids, then chunk by chunk. A fixed grouping, so that all leaves can be
/// summed over row chunks in parallel with the same result.
pub(super) fn leaf_sums(terms: impl Iterator<Item = (usize, (f64, f64))>) -> (f64, f64) {
    let (mut num, mut den) = (0.0, 0.0);
    let mut chunk: Option<(usize, f64, f64)> = None;
    for (r, (n, d)) in terms {
        match &mut chunk {
            Some((k, cn, cd)) if *k == r / SUM_CHUNK => {
                *cn += n;
                *cd += d;
            }
            _ => {
                if let Some((_, cn, cd)) = chunk {
                    num += cn;
                    den += cd;
                }
                chunk = Some((r / SUM_CHUNK, 0.0 + n, 0.0 + d));
            }
        }
    }
    if let Some((_, cn, cd)) = chunk {
        num += cn;
        den += cd;
    }
    (num, den)
}

/// The terms (w b (y − f), w b²) of one row in Σ w b (y − f) / Σ w b².
#[inline]
pub(super) fn terms_of(y: f64, f: f64, b: f64, w: f64) -> (f64, f64) {
    (w * b * (y - f), w * b * b)
}

pub(super) fn ratio(num: f64, den: f64) -> f64 {
    if den > 0.0 {
        num / den
    } else {
        0.0
    }
}
