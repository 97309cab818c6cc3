//! Row lists cut at fixed blocks of row ids, for passes that take a tree's leaves block by
//! block of consecutive rows (cache-resident) rather than leaf by leaf (scattered), and the slots
//! of a stable sort by group done block by block.

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

/// Cuts `out` into the slots a stable sort by group gives the rows of each block: group after
/// group, and within a group block after block. `counts[k][g]` is how many rows of block k are in
/// group g, and `out` holds their total. Returns, for every block, its slot of every group.
pub(crate) fn group_slots<'a, T>(out: &'a mut [T], counts: &[Vec<usize>]) -> Vec<Vec<&'a mut [T]>> {
    let n_groups = counts.first().map_or(0, Vec::len);
    let mut slots: Vec<Vec<&mut [T]>> = counts
        .iter()
        .map(|_| Vec::with_capacity(n_groups))
        .collect();
    let mut rest = out;
    for group in 0..n_groups {
        for (block_slots, block_counts) in slots.iter_mut().zip(counts) {
            let (slot, tail) = std::mem::take(&mut rest).split_at_mut(block_counts[group]);
            block_slots.push(slot);
            rest = tail;
        }
    }
    slots
}
