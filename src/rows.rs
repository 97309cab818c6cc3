//! Row lists cut at fixed blocks of row ids, for passes that take a tree's leaves block by
//! block of consecutive rows (cache-resident) rather than leaf by leaf (scattered).

/// cuts[k] for k in 0..=n_blocks: how many of `rows` (ascending) lie below row id k·`block`,
/// so that rows[cuts[k]..cuts[k + 1]] are the ones in block k. One scan of `rows`: a binary
/// search per block costs more in cache misses.
pub(crate) fn block_cuts(rows: &[u32], block: usize, n_blocks: usize) -> Vec<u32> {
    let mut cuts = Vec::with_capacity(n_blocks + 1);
    let mut i = 0;
    for k in 0..=n_blocks {
        while rows.get(i).is_some_and(|&r| (r as usize) < k * block) {
            i += 1;
        }
        cuts.push(i as u32);
    }
    cuts
}
