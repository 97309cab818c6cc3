//! Which splits a tree's search may use: every split, or RGBM's random candidate sets of
//! features or of (feature, threshold) pairs.

/// Which splits the search may use: RGBM's random candidate sets.
#[derive(Debug, Clone, PartialEq)]
pub enum Candidates {
    /// Every split (gbm and the others).
    All,
    /// `allowed[feature]`
    Features(Vec<bool>),
    /// `allowed[feature][threshold]`: numeric threshold t sends bins 1..=t left; categorical
    /// threshold k sends the k levels of lowest mean target left.
    Splits(Vec<Vec<bool>>),
}

impl Candidates {
    /// True when some split of `feature` may be used.
    #[inline]
    pub fn allows_feature(&self, feature: usize) -> bool {
        match self {
            Candidates::All => true,
            Candidates::Features(allowed) => allowed[feature],
            Candidates::Splits(allowed) => allowed[feature].iter().any(|&a| a),
        }
    }
    /// The features with at least one allowed split, ascending, or `None` when all `n_features`
    /// have one.
    pub fn allowed_features(&self, n_features: usize) -> Option<Vec<usize>> {
        let allowed: Vec<usize> = (0..n_features)
            .filter(|&f| self.allows_feature(f))
            .collect();
        (allowed.len() < n_features).then_some(allowed)
    }
    /// These candidates restricted to the features `allowed[feature]`.
    pub fn within(&self, allowed: &[bool]) -> Candidates {
        match self {
            Candidates::All => Candidates::Features(allowed.to_vec()),
            Candidates::Features(own) => {
                Candidates::Features(own.iter().zip(allowed).map(|(&a, &b)| a && b).collect())
            }
            Candidates::Splits(own) => Candidates::Splits(
                own.iter()
                    .zip(allowed)
                    .map(|(splits, &keep)| {
                        if keep {
                            splits.clone()
                        } else {
                            vec![false; splits.len()]
                        }
                    })
                    .collect(),
            ),
        }
    }
    /// True when the split of `feature` at `threshold` may be used.
    #[inline]
    pub fn allows(&self, feature: usize, threshold: usize) -> bool {
        match self {
            Candidates::All => true,
            Candidates::Features(allowed) => allowed[feature],
            Candidates::Splits(allowed) => {
                allowed[feature].get(threshold).copied().unwrap_or(false)
            }
        }
    }
}
