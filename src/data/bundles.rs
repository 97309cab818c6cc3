//! Exclusive feature bundles (the "exclusive feature bundling" of LightGBM: Ke et al., "LightGBM:
//! A Highly Efficient Gradient Boosting Decision Tree", Algorithm 3, with no conflicts allowed).
//!
//! One-hot and other sparse data have many features that are rarely off their most frequent
//! ("default") bin, and rarely off it in the same row. Such features, when no row has two of them
//! off their default, share one histogram column: the column's bin 0 means "every member at its
//! default", the other bins are the members' other bins one after another. A row then adds its
//! statistic to one bin per bundle instead of one per feature.
//!
//! The histogram of each member is recovered exactly as to which rows it sums: a non-default bin
//! is the bundle bin with the same rows, summed in the same order (the same bits); the default
//! bin, whose rows are those of the bundle's bin 0 and of the other members' bins, is the sum of
//! those bundle bins in bin order (the same value up to rounding, and the same with any thread
//! count). Counts stay exact.
//!
//! A feature is a candidate when it is numeric, has no missing value and at least half of the
//! rows sit in its default bin; features are placed greedily, most non-default rows first, into
//! the first bundle where none of their rows conflicts and the bins fit in 256. Bundles are used
//! only where one holds at least two features.

use super::binned::BinSummary;
use super::{BinMapper, BinnedMatrix};

/// Bundles open to new members while features are placed (each holds one bit per row).
const MAX_BUNDLES: usize = 256;

/// Where a feature's bins live in the bundled histogram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Its own column: feature bin b is column bin b.
    Own { column: usize },
    /// In a bundle: feature bins 1.. other than `default` are column bins `first`.. in order;
    /// the missing bin 0 is empty.
    Bundled {
        column: usize,
        default: u8,
        first: usize,
    },
}

#[derive(Debug, Clone)]
pub struct Bundles {
    /// One byte per row and column.
    matrix: BinnedMatrix,
    /// Where each column's bins start in a bundled histogram; one past the end last.
    offsets: Vec<u32>,
    places: Vec<Place>,
}

impl Bundles {
    /// Bundles for features binned as `matrix`, whose bins `summaries` sums up feature by
    /// feature (`BinnedMatrix::bin_summaries`), or `None` when no two features can share a
    /// column.
    pub(crate) fn find(
        mappers: &[BinMapper],
        matrix: &BinnedMatrix,
        summaries: &[BinSummary],
    ) -> Option<Bundles> {
        let n_rows = matrix.n_rows();
        // (feature, default bin) of every candidate, from the counts alone.
        let defaults_of_candidates: Vec<(usize, u8)> = (mappers.iter().enumerate())
            .filter(|(_, mapper)| matches!(mapper, BinMapper::Numeric { .. }) && n_rows > 0)
            .filter_map(|(f, _)| {
                // The default bin: the lowest of the most frequent bins.
                let s = &summaries[f];
                (s.missing == 0 && 2 * s.mode_count >= n_rows).then_some((f, s.mode))
            })
            .collect();
        // Their non-default rows, in one pass over the rows of the row-major matrix (a pass per
        // feature would read the whole matrix once per candidate).
        let mut others: Vec<Vec<u32>> = vec![Vec::new(); defaults_of_candidates.len()];
        for r in 0..n_rows {
            let row = matrix.row(r);
            for (rows, &(f, default)) in others.iter_mut().zip(&defaults_of_candidates) {
                if row[f] != default {
                    rows.push(r as u32);
                }
            }
        }
        // (feature, default bin, non-default rows) of every candidate.
        let mut candidates: Vec<(usize, u8, Vec<u32>)> = (defaults_of_candidates.into_iter())
            .zip(others)
            .map(|((f, default), rows)| (f, default, rows))
            .collect();
        candidates.sort_by_key(|(f, _, rows)| (std::cmp::Reverse(rows.len()), *f));
        // Greedy placement: (members, bins used, rows taken as a bit set). At most
        // `MAX_BUNDLES` are open (each holds a bit per row); a feature that fits in none of
        // them keeps its own column.
        let mut groups: Vec<(Vec<usize>, usize, Vec<u64>)> = Vec::new();
        let mut defaults = vec![0u8; mappers.len()];
        let taken_at = |taken: &[u64], r: u32| taken[r as usize / 64] >> (r % 64) & 1 == 1;
        for (f, default, rows) in &candidates {
            defaults[*f] = *default;
            let bins = mappers[*f].n_bins() - 2;
            let fits = |(_, used, taken): &(Vec<usize>, usize, Vec<u64>)| {
                used + bins <= 256 && rows.iter().all(|&r| !taken_at(taken, r))
            };
            let group = match groups.iter().position(fits) {
                Some(g) => g,
                None if groups.len() < MAX_BUNDLES => {
                    groups.push((Vec::new(), 1, vec![0; n_rows.div_ceil(64)]));
                    groups.len() - 1
                }
                None => continue,
            };
            let (members, used, taken) = &mut groups[group];
            members.push(*f);
            *used += bins;
            for &r in rows {
                taken[r as usize / 64] |= 1 << (r % 64);
            }
        }
        groups.retain(|(members, _, _)| members.len() >= 2);
        if groups.is_empty() {
            return None;
        }
        // Columns: every bundle (members in feature order), then every other feature, in order
        // of their first feature.
        let mut bundle_of = vec![None; mappers.len()];
        for (g, (members, _, _)) in groups.iter_mut().enumerate() {
            members.sort_unstable();
            for &f in members.iter() {
                bundle_of[f] = Some(g);
            }
        }
        let mut places = vec![Place::Own { column: 0 }; mappers.len()];
        let mut offsets = vec![0u32];
        let mut column_of_bundle = vec![usize::MAX; groups.len()];
        for f in 0..mappers.len() {
            let n_columns = offsets.len() - 1;
            match bundle_of[f] {
                None => {
                    places[f] = Place::Own { column: n_columns };
                    offsets.push(offsets[n_columns] + mappers[f].n_bins() as u32);
                }
                Some(g) if column_of_bundle[g] == usize::MAX => {
                    column_of_bundle[g] = n_columns;
                    let mut next = 1;
                    for &member in &groups[g].0 {
                        places[member] = Place::Bundled {
                            column: n_columns,
                            default: defaults[member],
                            first: next,
                        };
                        next += mappers[member].n_bins() - 2;
                    }
                    offsets.push(offsets[n_columns] + next as u32);
                }
                Some(_) => {}
            }
        }
        let n_columns = offsets.len() - 1;
        let mut bins = vec![0u8; n_rows * n_columns];
        // Row by row: a bundle's members are never off their default on the same row, so each
        // byte is written by one feature at most, in any order.
        for (r, out) in bins.chunks_exact_mut(n_columns).enumerate() {
            for (&b, place) in matrix.row(r).iter().zip(&places) {
                match *place {
                    Place::Own { column } => out[column] = b,
                    Place::Bundled {
                        column,
                        default,
                        first,
                    } => {
                        if b != default {
                            out[column] = bundle_bin(b, default, first) as u8;
                        }
                    }
                }
            }
        }
        Some(Bundles {
            matrix: BinnedMatrix::from_bins(bins, n_rows, n_columns),
            offsets,
            places,
        })
    }

    pub(crate) fn matrix(&self) -> &BinnedMatrix {
        &self.matrix
    }

    /// Where each column's bins start in a bundled histogram.
    pub(crate) fn column_offsets(&self) -> &[u32] {
        &self.offsets[..self.offsets.len() - 1]
    }

    pub(crate) fn total_bins(&self) -> usize {
        *self.offsets.last().unwrap_or(&0) as usize
    }

    /// Writes the histogram of every feature (laid out at `feature_offsets`) from the bundled
    /// histogram `bundled`, whose bins are summed by `add` from `zero`.
    pub(crate) fn expand<P: Copy>(
        &self,
        bundled: &[P],
        feature_offsets: &[usize],
        out: &mut [P],
        (zero, add): (P, impl Fn(&mut P, &P)),
    ) {
        for (f, place) in self.places.iter().enumerate() {
            let own = &mut out[feature_offsets[f]..feature_offsets[f + 1]];
            match *place {
                Place::Own { column } => {
                    let start = self.offsets[column] as usize;
                    own.copy_from_slice(&bundled[start..start + own.len()]);
                }
                Place::Bundled {
                    column,
                    default,
                    first,
                } => {
                    let start = self.offsets[column] as usize;
                    let column_bins = &bundled[start..self.offsets[column + 1] as usize];
                    let last = first + own.len() - 2;
                    own[0] = zero;
                    for b in 1..own.len() {
                        if b != default as usize {
                            own[b] = column_bins[bundle_bin(b as u8, default, first)];
                        }
                    }
                    // The default bin's rows: every row of the bundle not in one of this
                    // feature's other bins.
                    let mut sum = column_bins[0];
                    for (b, bin) in column_bins.iter().enumerate().skip(1) {
                        if !(first..last).contains(&b) {
                            add(&mut sum, bin);
                        }
                    }
                    own[default as usize] = sum;
                }
            }
        }
    }
}

/// The bundle bin of feature bin `b` (≠ `default`, ≠ 0) of a member whose bins start at `first`.
#[inline]
fn bundle_bin(b: u8, default: u8, first: usize) -> usize {
    first + b as usize - 1 - usize::from(b > default)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::test_data::binned;
    use crate::rng::uniform;

    #[test]
    fn dense_features_are_not_bundled() {
        let mut state = 3;
        let columns: Vec<Vec<f64>> = (0..4)
            .map(|_| (0..1_000).map(|_| uniform(&mut state)).collect())
            .collect();
        assert!(binned(&columns).bundles().is_none());
    }

    #[test]
    fn bundle_bins_skip_the_missing_and_default_bins() {
        // Bins 1..=4 with default 2: 1 -> first, 3 -> first + 1, 4 -> first + 2.
        assert_eq!([1, 3, 4].map(|b| bundle_bin(b, 2, 5)), [5, 6, 7]);
        assert_eq!([2, 3].map(|b| bundle_bin(b, 1, 1)), [1, 2]);
    }
}
