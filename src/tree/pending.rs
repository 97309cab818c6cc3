//! The queue of nodes the grower has yet to split: level by level (depth-wise) or largest gain
//! first (leaf-wise).

use super::{Growth, Pending};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

/// The nodes waiting to be split or made leaves. Depth-wise takes them in creation order (level
/// by level); leaf-wise the largest gain first (a node without a split counts as −∞), ties to
/// the earliest created. A heap keeps leaf-wise growth linear-logarithmic in the leaves (a scan
/// of all waiting nodes per split made it quadratic).
pub(super) struct PendingNodes {
    growth: Growth,
    fifo: VecDeque<Pending>,
    heap: BinaryHeap<ByGain>,
    created: u64,
}

/// A waiting node ordered by gain, then by creation (earlier first).
struct ByGain {
    gain: f64,
    created: u64,
    node: Pending,
}

impl PartialEq for ByGain {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for ByGain {}
impl PartialOrd for ByGain {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for ByGain {
    fn cmp(&self, other: &Self) -> Ordering {
        // Gains are never NaN (the split search admits only gains > 0).
        self.gain
            .total_cmp(&other.gain)
            .then(other.created.cmp(&self.created))
    }
}

impl PendingNodes {
    pub(super) fn new(growth: Growth) -> Self {
        PendingNodes {
            growth,
            fifo: VecDeque::new(),
            heap: BinaryHeap::new(),
            created: 0,
        }
    }

    pub(super) fn push(&mut self, node: Pending) {
        match self.growth {
            Growth::Depthwise => self.fifo.push_back(node),
            Growth::Leafwise => {
                let gain = node.split.as_ref().map_or(f64::NEG_INFINITY, |s| s.gain);
                self.heap.push(ByGain {
                    gain,
                    created: self.created,
                    node,
                });
                self.created += 1;
            }
        }
    }

    pub(super) fn pop(&mut self) -> Option<Pending> {
        match self.growth {
            Growth::Depthwise => self.fifo.pop_front(),
            Growth::Leafwise => self.heap.pop().map(|ranked| ranked.node),
        }
    }
}
