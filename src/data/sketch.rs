//! Binning across the ranks of a data-parallel fit: every rank summarises each feature of its
//! rows (a sketch), the ranks exchange their sketches, and every rank merges them in rank order
//! into the same mappers.
//!
//! * Numeric: the runs of equal values of the rank's share of the binning sample, with their
//!   counts; a rank with more than `MAX_RUNS` distinct values sends `MAX_RUNS` of them, each
//!   carrying the count of the runs up to the next. Merged runs give the cut points as
//!   `cuts_from_runs` gives them on one process: the same cut points wherever the ranks together
//!   hold at most `max_bins` distinct values (every distinct value its own bin), and
//!   equal-frequency cut points of the merged summary otherwise.
//! * Categorical: the count of every level, summed; then the pooling rule of one process.
//!
//! A sketch from another rank is untrusted bytes: every count and length is checked before use.

use super::binning::{
    categorical_bins_from_counts, cuts_from_runs, level_counts, sample_runs, BINNING_SAMPLE,
};
use super::{BinMapper, BinningParams, FeatureValues, Frame};
use crate::collective::Collective;
use crate::error::{Error, Result};

/// Runs a rank sends per numeric feature at most: 16 per bin of the largest `max_bins`.
const MAX_RUNS: usize = 16 * 256;
const NUMERIC: u8 = 0;
const CATEGORICAL: u8 = 1;

/// The mappers of the rows of every rank, the same on every rank.
pub(super) fn learn_over_ranks(
    frame: &Frame<'_>,
    params: &BinningParams,
    collective: &dyn Collective,
) -> Result<Vec<BinMapper>> {
    let world = collective.world();
    let mine = sketch(frame, BINNING_SAMPLE.div_ceil(world));
    let sketches = collective.all_gather(&mine);
    if let Some(error) = collective.failure() {
        return Err(error);
    }
    let parsed: Vec<Vec<Summary>> = sketches
        .iter()
        .enumerate()
        .map(|(rank, bytes)| parse(bytes, frame).map_err(|e| sketch_error(rank, e)))
        .collect::<Result<_>>()?;
    Ok((0..frame.n_features())
        .map(|j| merge(parsed.iter().map(|features| &features[j]), params))
        .collect())
}

fn sketch_error(rank: usize, error: Error) -> Error {
    Error::data(format!(
        "the binning summary of worker rank {rank}: {error}"
    ))
}

/// One feature's summary from one rank.
enum Summary {
    /// (value, count) ascending by value.
    Numeric(Vec<(f64, u64)>),
    Categorical(Vec<u64>),
}

fn sketch(frame: &Frame<'_>, sample_size: usize) -> Vec<u8> {
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
                let sample = sample_runs(x, sample_size);
                let runs = thin(sample.runs().map(|(v, n)| (v, n as u64)).collect());
                out.push(NUMERIC);
                out.extend((runs.len() as u64).to_le_bytes());
                for (value, count) in runs {
                    out.extend(value.to_le_bytes());
                    out.extend(count.to_le_bytes());
                }
            }
        }
    }
    out
}

/// At most `MAX_RUNS` runs: every run kept when there are that few, else runs at equal steps,
/// each carrying the counts of the runs it stands for.
fn thin(runs: Vec<(f64, u64)>) -> Vec<(f64, u64)> {
    if runs.len() <= MAX_RUNS {
        return runs;
    }
    let step = runs.len().div_ceil(MAX_RUNS);
    runs.chunks(step)
        .map(|group| (group[0].0, group.iter().map(|&(_, c)| c).sum()))
        .collect()
}

/// Reads one rank's sketch, checking it against this rank's features.
fn parse(bytes: &[u8], frame: &Frame<'_>) -> Result<Vec<Summary>> {
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
            (NUMERIC, FeatureValues::Numeric(_) | FeatureValues::Strided(_)) => {
                if len > MAX_RUNS as u64 {
                    return Err(Error::data(format!("column {name}: {len} runs")));
                }
                let mut runs = Vec::with_capacity(len as usize);
                for _ in 0..len {
                    let value = f64::from_bits(reader.u64()?);
                    let count = reader.u64()?;
                    if value.is_nan() || runs.last().is_some_and(|&(v, _)| v >= value) {
                        return Err(Error::data(format!("column {name}: unsorted runs")));
                    }
                    runs.push((value, count));
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
        assert_eq!(learn_over_ranks(&frame, &params, &Local).unwrap(), local);
    }

    #[test]
    fn a_malformed_sketch_is_an_error() {
        let x = [1.0, 2.0];
        let frame = Frame::new(vec![Feature::numeric("x", &x)]).unwrap();
        let good = sketch(&frame, 100);
        assert!(parse(&good, &frame).is_ok());
        assert!(parse(&good[..good.len() - 1], &frame).is_err());
        let mut huge = vec![NUMERIC];
        huge.extend(u64::MAX.to_le_bytes());
        assert!(parse(&huge, &frame).is_err());
        let mut categorical = vec![CATEGORICAL];
        categorical.extend(0u64.to_le_bytes());
        assert!(parse(&categorical, &frame).is_err());
    }
}
