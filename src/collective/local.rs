//! The collective of a single process: world 1, rank 0, every reduction the identity. Training
//! that is not distributed runs through it, so the booster has one code path.

use super::{Collective, Traffic};
use crate::error::Error;

/// One process: every reduction is the identity. (world 1, rank 0)
#[derive(Debug, Default)]
pub struct Local;

impl Collective for Local {
    fn rank(&self) -> usize {
        0
    }

    fn world(&self) -> usize {
        1
    }

    fn sum(&self, _values: &mut [f64]) {}

    fn max(&self, _values: &mut [f64]) {}

    fn all_gather(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        vec![bytes.to_vec()]
    }

    fn failure(&self) -> Option<Error> {
        None
    }

    fn traffic(&self) -> Traffic {
        Traffic::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_reductions_are_the_identity() {
        let local = Local;
        let collective: &dyn Collective = &local;
        assert_eq!((collective.rank(), collective.world()), (0, 1));
        let mut values = [1e16, 1.0, -1e16, -0.0];
        collective.sum(&mut values);
        collective.max(&mut values);
        assert_eq!(
            values.map(f64::to_bits),
            [1e16, 1.0, -1e16, -0.0].map(f64::to_bits)
        );
        assert_eq!(collective.all_gather(b"abc"), vec![b"abc".to_vec()]);
        assert_eq!(collective.all_gather(b""), vec![Vec::<u8>::new()]);
        assert_eq!(collective.failure(), None);
        assert_eq!(collective.traffic(), Traffic::default());
    }
}
