//! Binning across the ranks of a data-parallel fit, with the mappers of one process: the ranks
//! together hold exactly the binning sample one process would draw from all the rows, exchange
//! it, and every rank merges it in rank order into the same mappers.
//!
//! * Where the rows are: each rank names the global row ranges it holds, in the order of its
//!   rows (by default, rank 0 holds the first rows, rank 1 the next, ...). One process samples
//!   every `step`-th row from row 0, `step` = ⌈n / BINNING_SAMPLE⌉; the ranks sample the rows
//!   of theirs whose global index is a multiple of `step`, so the union is that same sample.
//! * Numeric: each rank sends its sampled values (the runs of equal values with their counts
//!   when that is shorter), never a thinned summary: the merged runs are the runs of the
//!   one-process sample, and `cuts_from_runs` gives the one-process cut points bit for bit. At
//!   most 8 bytes per sampled value: ≤ 200,000 × 8 B = 1.6 MB per feature over all the ranks,
//!   which every rank receives (a few distinct values send 16 B per value instead).
//! * Categorical: the count of every level over all the rows, summed; then the pooling rule of
//!   one process.
//!
//! A message from another rank is untrusted bytes: every count and length is checked before use.

use super::binning::{categorical_bins_from_counts, cuts_from_runs, level_counts, BINNING_SAMPLE};
use super::{BinMapper, BinningParams, FeatureValues, Frame};
use crate::collective::Collective;
use crate::error::{Error, Result};
use std::ops::Range;

const NUMERIC_VALUES: u8 = 0;
const CATEGORICAL: u8 = 1;
const NUMERIC_RUNS: u8 = 2;
/// "After the previous rank's rows": the start of a rank that gave no row ranges.
const NEXT: u64 = u64::MAX;

/// The mappers of the rows of every rank, the same on every rank and the same as one process's
/// on all the rows. `rows`: the global row ranges of this rank's rows, in their order (`None`:
/// the rows after those of the ranks before it).
pub(super) fn learn_over_ranks(
    frame: &Frame<'_>,
    params: &BinningParams,
    collective: &dyn Collective,
    rows: Option<&[Range<usize>]>,
) -> Result<Vec<BinMapper>> {
    let n_rows = frame.n_rows();
    let mine: Vec<(u64, u64)> = match rows {
        Some(ranges) => {
            let held: usize = ranges.iter().map(ExactSizeIterator::len).sum();
            if held != n_rows {
                return Err(Error::data(format!(
                    "the row ranges of this worker hold {held} rows, its data {n_rows}"
                )));
            }
            ranges
                .iter()
                .map(|r| (r.start as u64, r.len() as u64))
                .collect()
        }
        None => vec![(NEXT, n_rows as u64)],
    };
    let gathered = collective.all_gather(&encode_ranges(&mine));
    if let Some(error) = collective.failure() {
        return Err(error);
    }
    let placement = Placement::parse(&gathered)?;
    let step = placement.total.div_ceil(BINNING_SAMPLE as u64).max(1);
    let positions = sampled_positions(&placement.ranges[collective.rank()], step);
    let sketches = collective.all_gather(&sketch(frame, &positions));
    if let Some(error) = collective.failure() {
        return Err(error);
    }
    let parsed: Vec<Vec<Summary>> = sketches
        .iter()
        .enumerate()
        .map(|(rank, bytes)| {
            let sampled = sampled_positions(&placement.ranges[rank], step).len();
            parse(bytes, frame, sampled).map_err(|e| sketch_error(rank, e))
        })
        .collect::<Result<_>>()?;
    Ok((0..frame.n_features())
        .map(|j| merge(parsed.iter().map(|features| &features[j]), params))
        .collect())
}

fn encode_ranges(ranges: &[(u64, u64)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + 16 * ranges.len());
    out.extend((ranges.len() as u64).to_le_bytes());
    for &(start, len) in ranges {
        out.extend(start.to_le_bytes());
        out.extend(len.to_le_bytes());
    }
    out
}

/// The global row ranges of every rank, checked to tile 0..total.
struct Placement {
    ranges: Vec<Vec<(u64, u64)>>,
    total: u64,
}

impl Placement {
    fn parse(gathered: &[Vec<u8>]) -> Result<Placement> {
        let mut ranges = Vec::with_capacity(gathered.len());
        let mut end_of_previous = 0u64;
        for (rank, bytes) in gathered.iter().enumerate() {
            let bad =
                |what: &str| Error::data(format!("the row ranges of worker rank {rank}: {what}"));
            let mut reader = Reader { bytes, at: 0 };
            let count = reader.u64().map_err(|e| bad(&e.to_string()))?;
            if count.saturating_mul(16) != (bytes.len() - 8) as u64 {
                return Err(bad("truncated"));
            }
            let mut of_rank = Vec::with_capacity(count as usize);
            for _ in 0..count {
                let (start, len) = (reader.u64()?, reader.u64()?);
                let start = if start == NEXT {
                    end_of_previous
                } else {
                    start
                };
                end_of_previous = start.checked_add(len).ok_or_else(|| bad("overflow"))?;
                of_rank.push((start, len));
            }
            ranges.push(of_rank);
        }
        let mut all: Vec<(u64, u64)> = ranges.iter().flatten().copied().collect();
        all.sort_unstable();
        let mut total = 0u64;
        for (start, len) in all {
            if start != total {
                return Err(Error::data(format!(
                    "the workers' global row ranges {} row {total}",
                    if start < total {
                        "hold twice"
                    } else {
                        "leave out"
                    }
                )));
            }
            total += len;
        }
        Ok(Placement { ranges, total })
    }
}

/// This rank's row positions (in its own order) whose global index is a multiple of `step`.
fn sampled_positions(ranges: &[(u64, u64)], step: u64) -> Vec<usize> {
    let mut positions = Vec::new();
    let mut offset = 0usize;
    for &(start, len) in ranges {
        let first = start.div_ceil(step) * step;
        let end = start + len;
        positions.extend(
            (first..end.max(first))
                .step_by(step as usize)
                .map(|g| offset + (g - start) as usize),
        );
        offset += len as usize;
    }
    positions
}

fn sketch_error(rank: usize, error: Error) -> Error {
    Error::data(format!("the binning sample of worker rank {rank}: {error}"))
}

/// One feature's summary from one rank.
enum Summary {
    /// (value, count) ascending by value.
    Numeric(Vec<(f64, u64)>),
    Categorical(Vec<u64>),
}

/// This rank's part of the binning sample: the values at `positions` of every numeric feature
/// (NaN left out, sorted, as runs when fewer bytes), the level counts of every categorical one.
fn sketch(frame: &Frame<'_>, positions: &[usize]) -> Vec<u8> {
    let mut out = Vec::new();
    for feature in frame.features() {
        match feature.values {
            FeatureValues::Categorical { codes, n_levels } => {
                out.push(CATEGORICAL);
                out.extend(u64::from(n_levels).to_le_bytes());
                for count in level_counts(codes, n_levels as usize) {
                    out.extend((count as u64).to_le_bytes());
                }
            }
            values => {
                let x = values.numeric().expect("numeric");
                let mut sample: Vec<f64> = (positions.iter().map(|&row| x.get(row)))
                    .filter(|v| !v.is_nan())
                    .collect();
                sample.sort_unstable_by(f64::total_cmp);
                let runs: Vec<(f64, u64)> = sample
                    .chunk_by(|a, b| a == b)
                    .map(|run| (run[0], run.len() as u64))
                    .collect();
                if 2 * runs.len() < sample.len() {
                    out.push(NUMERIC_RUNS);
                    out.extend((runs.len() as u64).to_le_bytes());
                    for (value, count) in runs {
                        out.extend(value.to_le_bytes());
                        out.extend(count.to_le_bytes());
                    }
                } else {
                    out.push(NUMERIC_VALUES);
                    out.extend((sample.len() as u64).to_le_bytes());
                    for value in sample {
                        out.extend(value.to_le_bytes());
                    }
                }
            }
        }
    }
    out
}

/// Reads one rank's sketch, checking it against this rank's features and against the number of
/// rows that rank sampled.
fn parse(bytes: &[u8], frame: &Frame<'_>, sampled: usize) -> Result<Vec<Summary>> {
    let mut reader = Reader { bytes, at: 0 };
    let mut summaries = Vec::with_capacity(frame.n_features());
    for feature in frame.features() {
        let kind = reader.byte()?;
        let len = reader.u64()?;
        let name = &feature.name;
        match (kind, feature.values) {
            (CATEGORICAL, FeatureValues::Categorical { n_levels, .. }) => {
                if len != u64::from(n_levels) {
                    return Err(Error::data(format!(
                        "column {name} has {len} categorical levels there, {n_levels} here"
                    )));
                }
                let counts = (0..len).map(|_| reader.u64()).collect::<Result<_>>()?;
                summaries.push(Summary::Categorical(counts));
            }
            (
                NUMERIC_VALUES | NUMERIC_RUNS,
                FeatureValues::Numeric(_) | FeatureValues::Strided(_),
            ) => {
                if len > sampled as u64 {
                    return Err(Error::data(format!(
                        "column {name}: {len} values from {sampled} sampled rows"
                    )));
                }
                let mut runs: Vec<(f64, u64)> = Vec::with_capacity(len as usize);
                let mut values = 0u64;
                for _ in 0..len {
                    let value = f64::from_bits(reader.u64()?);
                    let count = if kind == NUMERIC_RUNS {
                        reader.u64()?
                    } else {
                        1
                    };
                    values = values.saturating_add(count);
                    if value.is_nan() || count == 0 || values > sampled as u64 {
                        return Err(Error::data(format!("column {name}: a bad sample")));
                    }
                    match runs.last_mut() {
                        Some((last, n)) if kind == NUMERIC_VALUES && *last == value => {
                            if last.total_cmp(&value).is_gt() {
                                return Err(Error::data(format!("column {name}: unsorted")));
                            }
                            *n += 1;
                        }
                        Some((last, _)) if last.total_cmp(&value).is_ge() || *last == value => {
                            return Err(Error::data(format!("column {name}: unsorted")));
                        }
                        _ => runs.push((value, count)),
                    }
                }
                summaries.push(Summary::Numeric(runs));
            }
            _ => {
                return Err(Error::data(format!(
                    "column {name} is numeric on one worker and categorical on another"
                )))
            }
        }
    }
    if reader.at != bytes.len() {
        return Err(Error::data("more features than this worker has"));
    }
    Ok(summaries)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len());
        let end = end.ok_or_else(|| Error::data("truncated"))?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }
    fn byte(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u64(&mut self) -> Result<u64> {
        let bytes = self.take(8)?;
        Ok(u64::from_le_bytes(bytes.try_into().expect("8 bytes")))
    }
}

/// One feature's mapper from the summaries of every rank, in rank order.
fn merge<'a>(summaries: impl Iterator<Item = &'a Summary>, params: &BinningParams) -> BinMapper {
    let mut runs: Vec<(f64, u64)> = Vec::new();
    let mut counts: Option<Vec<u64>> = None;
    for summary in summaries {
        match summary {
            Summary::Numeric(more) => runs.extend_from_slice(more),
            Summary::Categorical(more) => match &mut counts {
                None => counts = Some(more.clone()),
                Some(counts) => counts.iter_mut().zip(more).for_each(|(c, m)| *c += m),
            },
        }
    }
    if let Some(counts) = counts {
        let counts: Vec<usize> = counts.iter().map(|&c| c as usize).collect();
        return categorical_bins_from_counts(&counts, params.min_category_count);
    }
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let merged: Vec<(f64, usize)> = runs
        .chunk_by(|a, b| a.0 == b.0)
        .map(|same| (same[0].0, same.iter().map(|&(_, c)| c as usize).sum()))
        .collect();
    BinMapper::Numeric {
        cuts: cuts_from_runs(merged.iter().copied(), params.max_bins),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collective::Local;
    use crate::data::Feature;

    #[test]
    fn one_rank_learns_the_mappers_of_one_process() {
        let x: Vec<f64> = (0..5000)
            .map(|i| ((i * 7919) % 1000) as f64 / 7.0)
            .collect();
        let few: Vec<f64> = (0..5000).map(|i| (i % 9) as f64).collect();
        let codes: Vec<i32> = (0..5000i32).map(|i| i % 13 - 1).collect();
        let frame = Frame::new(vec![
            Feature::numeric("x", &x),
            Feature::numeric("few", &few),
            Feature::categorical("c", &codes, 12),
        ])
        .unwrap();
        let params = BinningParams::default();
        let local: Vec<BinMapper> = frame
            .features()
            .iter()
            .map(|f| BinMapper::learn(f.values, &params))
            .collect();
        assert_eq!(
            learn_over_ranks(&frame, &params, &Local, None).unwrap(),
            local
        );
        let all = [0..5000];
        let given = learn_over_ranks(&frame, &params, &Local, Some(&all)).unwrap();
        assert_eq!(given, local);
        assert!(learn_over_ranks(&frame, &params, &Local, Some(&[0..4999])).is_err());
        assert!(learn_over_ranks(&frame, &params, &Local, Some(&[1..5001])).is_err());
    }

    #[test]
    fn a_malformed_sketch_is_an_error() {
        let x = [1.0, 2.0];
        let frame = Frame::new(vec![Feature::numeric("x", &x)]).unwrap();
        let good = sketch(&frame, &[0, 1]);
        assert!(parse(&good, &frame, 2).is_ok());
        assert!(
            parse(&good, &frame, 1).is_err(),
            "more values than sampled rows"
        );
        assert!(parse(&good[..good.len() - 1], &frame, 2).is_err());
        let mut huge = vec![NUMERIC_VALUES];
        huge.extend(u64::MAX.to_le_bytes());
        assert!(parse(&huge, &frame, 2).is_err());
        let mut unsorted = vec![NUMERIC_VALUES];
        unsorted.extend(2u64.to_le_bytes());
        unsorted.extend(2.0f64.to_le_bytes());
        unsorted.extend(1.0f64.to_le_bytes());
        assert!(parse(&unsorted, &frame, 2).is_err());
        let mut categorical = vec![CATEGORICAL];
        categorical.extend(0u64.to_le_bytes());
        assert!(parse(&categorical, &frame, 2).is_err());
    }
}
