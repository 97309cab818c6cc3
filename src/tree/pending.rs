//! The queue of nodes the grower has yet to split: level by level (depth-wise) or largest gain
//! first (leaf-wise), the order `Growth` names.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::{BTreeSet, BinaryHeap, VecDeque};

/// The order in which a tree grows: level by level, or the waiting node of largest gain first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Growth {
    /// Level by level up to `max_depth`.
    Depthwise,
    /// Best-gain leaf first, up to `max_leaves`.
    Leafwise,
}

impl std::str::FromStr for Growth {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "depthwise" => Ok(Growth::Depthwise),
            "leafwise" => Ok(Growth::Leafwise),
            _ => Err(Error::param("growth", s, "\"depthwise\", \"leafwise\"")),
        }
    }
}

/// A node waiting in the queue: the gain of its best split, −∞ when it has none.
pub(super) trait Ranked {
    fn gain(&self) -> f64;
}

/// The nodes waiting to be split or made leaves. Depth-wise takes them in creation order (level
/// by level); leaf-wise the largest gain first (a node without a split counts as −∞), ties to
/// the earliest created. Ordered sets keep leaf-wise growth linear-logarithmic in the leaves (a
/// scan of all waiting nodes per split made it quadratic).
///
/// Leaf-wise, a node with at least as many better nodes waiting as the tree has splits left is
/// never split: each of those pops first and, if it has a split, takes one. `retire_beyond`
/// moves such nodes out of `contenders`, so that the caller can release what only a split needs
/// (their histograms); they still pop in the same order, as leaves.
pub(super) struct PendingNodes<T> {
    growth: Growth,
    fifo: VecDeque<T>,
    /// Leaf-wise: the waiting nodes with a split that may still be taken.
    contenders: BTreeSet<ByGain<T>>,
    /// Leaf-wise: the waiting nodes that will be leaves (no split, or retired).
    retired: BinaryHeap<ByGain<T>>,
    created: u64,
}

/// A waiting node ordered by gain, then by creation (earlier first).
struct ByGain<T> {
    gain: f64,
    created: u64,
    node: T,
}

impl<T> PartialEq for ByGain<T> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl<T> Eq for ByGain<T> {}
impl<T> PartialOrd for ByGain<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for ByGain<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        // Gains are never NaN (the split search admits only gains > 0).
        self.gain
            .total_cmp(&other.gain)
            .then(other.created.cmp(&self.created))
    }
}

impl<T: Ranked> PendingNodes<T> {
    pub(super) fn new(growth: Growth) -> Self {
        PendingNodes {
            growth,
            fifo: VecDeque::new(),
            contenders: BTreeSet::new(),
            retired: BinaryHeap::new(),
            created: 0,
        }
    }

    pub(super) fn push(&mut self, node: T) {
        match self.growth {
            Growth::Depthwise => self.fifo.push_back(node),
            Growth::Leafwise => {
                let gain = node.gain();
                let ranked = ByGain {
                    gain,
                    created: self.created,
                    node,
                };
                self.created += 1;
                if gain == f64::NEG_INFINITY {
                    self.retired.push(ranked);
                } else {
                    self.contenders.insert(ranked);
                }
            }
        }
    }

    pub(super) fn pop(&mut self) -> Option<T> {
        match self.growth {
            Growth::Depthwise => self.fifo.pop_front(),
            Growth::Leafwise => {
                // Every contender ranks above every retired node; the comparison makes the order
                // not depend on it.
                let contender_first = match (self.contenders.last(), self.retired.peek()) {
                    (Some(contender), Some(retired)) => contender > retired,
                    (contender, _) => contender.is_some(),
                };
                let ranked = if contender_first {
                    self.contenders.pop_last()
                } else {
                    self.retired.pop()
                };
                ranked.map(|ranked| ranked.node)
            }
        }
    }

    /// Leaf-wise, with `splits_left` splits left in the tree: retires the contenders ranked
    /// below the best `splits_left`, calling `retire` on each (they will pop as leaves).
    /// Depth-wise: nothing.
    pub(super) fn retire_beyond(&mut self, splits_left: usize, mut retire: impl FnMut(&mut T)) {
        while self.contenders.len() > splits_left {
            let mut worst = self
                .contenders
                .pop_first()
                .expect("more than zero contenders");
            retire(&mut worst.node);
            self.retired.push(worst);
        }
    }
}
