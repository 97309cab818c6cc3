//! The k-th smallest of u64 keys spread over the ranks, exactly: a radix selection, one digit
//! of 8 bits per round, each round one sum of the 256 digit counts of the keys that share the
//! digits found so far (8 rounds, 2 KiB each, whatever the number of keys). Counts are integers,
//! so their sum is exact in any order. Row draws that must pick the same rows as one process
//! (the `subsample` rows of smallest key, GOSS's rows of largest gradient) select with it.

use super::Collective;
use rayon::prelude::*;

/// The k-th smallest key and how many keys over all the ranks are smaller than it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kth {
    /// The k-th smallest key.
    pub key: u64,
    /// How many keys are smaller than it.
    pub below: u64,
}

const DIGIT: u32 = 8;
const BUCKETS: usize = 1 << DIGIT;
/// Keys per task of a counting pass.
const CHUNK: usize = 1 << 14;

/// The `k`-th smallest (1-based) of the keys of every rank: every rank passes its own keys and
/// gets the same answer. `k` past the number of keys gives the largest key (after a failure of
/// the collective the sums are this rank's alone: the answer is then meaningless, never a
/// panic).
pub fn kth_smallest(collective: &dyn Collective, keys: &[u64], k: u64) -> Kth {
    if collective.world() == 1 {
        return kth_here(keys, k);
    }
    radix_select(k, |round, key| {
        let mut counts = digit_counts(keys, round, key);
        collective.sum(&mut counts);
        counts
    })
}

/// The radix selection of the `k`-th smallest key, `summed_counts(round, key)` giving the
/// counts over every rank of each digit of that round among the keys whose higher digits are
/// those of `key`.
fn radix_select(k: u64, mut summed_counts: impl FnMut(u32, u64) -> Vec<f64>) -> Kth {
    let (mut key, mut below) = (0u64, 0u64);
    for round in 0..u64::BITS / DIGIT {
        let counts = summed_counts(round, key);
        let mut digit = BUCKETS - 1;
        for (d, &count) in counts.iter().enumerate() {
            let count = count as u64;
            if below.saturating_add(count) >= k {
                digit = d;
                break;
            }
            below = below.saturating_add(count);
        }
        key |= (digit as u64) << shift_of(round);
    }
    Kth { key, below }
}

fn shift_of(round: u32) -> u32 {
    u64::BITS - DIGIT * (round + 1)
}

/// This rank's count of each digit of `round` among its keys whose higher digits are those of
/// `key`.
fn digit_counts(keys: &[u64], round: u32, key: u64) -> Vec<f64> {
    let shift = shift_of(round);
    let known = |x: u64| round == 0 || x >> (shift + DIGIT) == key >> (shift + DIGIT);
    let counts = keys
        .par_chunks(CHUNK)
        .fold(
            || [0u64; BUCKETS],
            |mut counts, chunk| {
                for &x in chunk.iter().filter(|&&x| known(x)) {
                    counts[(x >> shift) as usize & (BUCKETS - 1)] += 1;
                }
                counts
            },
        )
        .reduce(
            || [0u64; BUCKETS],
            |a, b| std::array::from_fn(|i| a[i] + b[i]),
        );
    counts.iter().map(|&c| c as f64).collect()
}

/// `kth_smallest` of one process.
fn kth_here(keys: &[u64], k: u64) -> Kth {
    if keys.is_empty() {
        return Kth {
            key: u64::MAX,
            below: 0,
        };
    }
    let mut sorted = keys.to_vec();
    let at = (k.clamp(1, keys.len() as u64) - 1) as usize;
    let (_, &mut key, _) = sorted.select_nth_unstable(at);
    let below = keys.par_iter().filter(|&&x| x < key).count() as u64;
    Kth { key, below }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collective::Local;
    use crate::rng::bits_at;

    #[test]
    fn one_process_selects_the_kth_smallest() {
        let keys = [5u64, 1, 9, 1, 7];
        assert_eq!(kth_smallest(&Local, &keys, 1), Kth { key: 1, below: 0 });
        assert_eq!(kth_smallest(&Local, &keys, 2), Kth { key: 1, below: 0 });
        assert_eq!(kth_smallest(&Local, &keys, 3), Kth { key: 5, below: 2 });
        assert_eq!(kth_smallest(&Local, &keys, 5), Kth { key: 9, below: 4 });
    }

    /// Keys split over 3 ranks unevenly (one empty), with ties and extreme values: the radix
    /// selection over the ranks finds what one process's selection finds, for every k.
    #[test]
    fn radix_selection_over_ranks_equals_one_process() {
        let mut all: Vec<u64> = (0..300).map(|i| bits_at(3, i) >> (i % 50)).collect();
        all.extend([0, 0, u64::MAX, u64::MAX, 1 << 63, 17, 17, 17]);
        let ranks = [&all[..40], &all[40..40], &all[40..]];
        for k in 1..=all.len() as u64 {
            let over_ranks = radix_select(k, |round, key| {
                let mut summed = vec![0.0; BUCKETS];
                for keys in ranks {
                    let counts = digit_counts(keys, round, key);
                    summed.iter_mut().zip(counts).for_each(|(s, c)| *s += c);
                }
                summed
            });
            assert_eq!(over_ranks, kth_here(&all, k), "k = {k}");
        }
    }
}
