//! Hand-built nodes for the unit tests of the tree engine.

use crate::tree::Node;

/// A leaf of value `value` reached by `count` training rows, for hand-built trees.
pub fn leaf(value: f64, count: u32) -> Node {
    Node {
        feature: 0,
        left: 0,
        right: 0,
        threshold: 0.0,
        bin: 0,
        default_left: false,
        category: None,
        value,
        gain: 0.0,
        count,
    }
}
