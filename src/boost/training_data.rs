//! The data a booster trains on, checked once at the edge: features, target, weights and
//! offsets, with errors that name the data set, the row and the value.

use crate::data::{BinnedMatrix, Frame};
use crate::error::{Error, Result};
use crate::loss::Loss;
use crate::model::MAX_OUTPUTS;

/// Per-row link offsets, row-major n × K like the scores, added to the initial constant before
/// the first iteration: R's `offset`, LightGBM's `init_score`, XGBoost's `base_margin`. The
/// model does not hold them: predictions of a model fitted with an offset need it added again.
#[derive(Debug, Clone, Copy, Default)]
pub struct Offsets<'a> {
    /// For the training rows (zero when absent).
    pub train: Option<&'a [f64]>,
    /// For the validation rows (zero when absent).
    pub valid: Option<&'a [f64]>,
}

/// Training data handed to a booster: features, target and optional sample weights.
#[derive(Debug, Clone)]
pub struct TrainData<'a> {
    /// The feature columns (the target is not among them).
    pub frame: Frame<'a>,
    /// The target: one value per row, or n × K row-major for a multi-output loss.
    pub y: &'a [f64],
    /// Sample weights, one per row (`None`: all 1).
    pub weights: Option<&'a [f64]>,
}

#[derive(Debug, Clone)]
pub(super) struct Validation {
    pub(super) matrix: BinnedMatrix,
    pub(super) y: Vec<f64>,
    pub(super) w: Vec<f64>,
}

impl Validation {
    /// No validation rows: a rank of a data-parallel fit whose validation rows are elsewhere.
    pub(super) fn empty(n_features: usize) -> Validation {
        Validation {
            matrix: BinnedMatrix::from_bins(Vec::new(), 0, n_features),
            y: Vec::new(),
            w: Vec::new(),
        }
    }
}

/// An offset of `len` finite values (n × K), if given.
pub(super) fn checked_offset<'a>(
    offset: Option<&'a [f64]>,
    len: usize,
    role: &str,
) -> Result<Option<&'a [f64]>> {
    let Some(offset) = offset else {
        return Ok(None);
    };
    if offset.len() != len {
        return Err(Error::data(format!(
            "{role} offset has {} values, expected {len} (one per row and output)",
            offset.len()
        )));
    }
    if let Some(row) = offset.iter().position(|v| !v.is_finite()) {
        return Err(Error::value(
            format!("{role} offset"),
            format!("entry {row} is {} (offsets must be finite)", offset[row]),
        ));
    }
    Ok(Some(offset))
}

/// K of a multiclass target: labels must be class indices 0..K−1, and K ≥ 2 (checked by the
/// loss when it is built).
pub(super) fn count_classes(y: &[f64]) -> Result<usize> {
    if let Some(bad) = y
        .iter()
        .find(|&&v| !(v >= 0.0 && v.fract() == 0.0 && v < u32::MAX as f64))
    {
        return Err(Error::value(
            "training target",
            format!("multiclass labels must be class indices 0, 1, …, found {bad}"),
        ));
    }
    let n_classes = y.iter().fold(0.0f64, |m, &v| m.max(v)) as usize + 1;
    within_max_outputs(n_classes, "classes (the largest label + 1)")
}

/// A model predicts n × K scores: K beyond what a model file may hold would train a model that
/// cannot be loaded, or fail allocating n × K values.
fn within_max_outputs(k: usize, what: &str) -> Result<usize> {
    if k > MAX_OUTPUTS {
        return Err(Error::value(
            "training target",
            format!("{k} {what}; a model holds at most {MAX_OUTPUTS}"),
        ));
    }
    Ok(k)
}

/// K of a multi-output target: its values must fill whole rows of the features (row-major n × K).
pub(super) fn count_outputs(data: &TrainData<'_>) -> Result<usize> {
    let (n, len) = (data.frame.n_rows(), data.y.len());
    if n == 0 || len == 0 || len % n != 0 {
        return Err(Error::data(format!(
            "training target has {len} values for {n} rows: a multi-output target must be \
             row-major n × K, one column per output"
        )));
    }
    within_max_outputs(len / n, "outputs")
}

/// Checks the target and weights of a data set: every label must suit the loss
/// (`Loss::target_error`: class indices below K for a multiclass loss), and binary losses get
/// 0/1 labels mapped to ±1.
pub(super) fn checked_target(
    data: &TrainData<'_>,
    loss: &dyn Loss,
    role: &str,
) -> Result<(Vec<f64>, Option<Vec<f64>>)> {
    let n = data.frame.n_rows();
    let t = loss.target_width();
    if t > 1 && data.y.len() != n * t {
        return Err(Error::data(format!(
            "{role} target has {} values, the {} loss with {t} outputs needs {n} × {t} \
             (one row of {t} per row of the features, row-major)",
            data.y.len(),
            loss.name()
        )));
    }
    if data.y.len() != n * t {
        return Err(Error::data(format!(
            "{role} target has {} rows, the features have {n}",
            data.y.len()
        )));
    }
    if let Some(entry) = data.y.iter().position(|v| !v.is_finite()) {
        let at = if t > 1 {
            format!("row {}, column {}", entry / t, entry % t)
        } else {
            format!("row {entry}")
        };
        return Err(Error::value(
            format!("{role} target"),
            format!("{at} is {} (targets must be finite)", data.y[entry]),
        ));
    }
    let mut y = data.y.to_vec();
    if let Some(error) = loss.target_error(&y) {
        return Err(Error::value(format!("{role} target"), error));
    }
    if loss.is_binary() {
        let zero_one = y.iter().all(|&v| v == 0.0 || v == 1.0);
        let signs = y.iter().all(|&v| v == -1.0 || v == 1.0);
        if !(zero_one || signs) {
            let bad = y
                .iter()
                .find(|&&v| v != 0.0 && v != 1.0 && v != -1.0)
                .copied()
                .unwrap_or(f64::NAN);
            return Err(Error::value(
                format!("{role} target"),
                format!(
                    "the {} loss needs binary labels 0/1 or -1/+1, found {bad}",
                    loss.name()
                ),
            ));
        }
        if zero_one {
            y.iter_mut().for_each(|v| *v = 2.0 * *v - 1.0);
        }
    }
    let w = match data.weights {
        None => None,
        Some(w) => {
            if w.len() != n {
                return Err(Error::data(format!(
                    "{role} weights have {} rows, the features have {n}",
                    w.len()
                )));
            }
            if let Some(row) = w.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
                return Err(Error::value(
                    format!("{role} weights"),
                    format!("row {row} is {} (weights must be finite and ≥ 0)", w[row]),
                ));
            }
            if !w.iter().any(|&v| v > 0.0) {
                return Err(Error::value(
                    format!("{role} weights"),
                    "all weights are zero",
                ));
            }
            Some(w.to_vec())
        }
    };
    Ok((y, w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_counts_beyond_what_a_model_holds_are_an_error_before_anything_is_allocated() {
        let largest_label = (MAX_OUTPUTS - 1) as f64;
        assert_eq!(count_classes(&[0.0, largest_label]).unwrap(), MAX_OUTPUTS);
        let message = count_classes(&[0.0, largest_label + 1.0, 2.0])
            .unwrap_err()
            .to_string();
        assert!(
            message.contains(&format!("{} classes", MAX_OUTPUTS + 1)),
            "{message}"
        );
        assert!(count_classes(&[4e9]).is_err());
    }
}

/// `min_samples_leaf` where the user set none (docs/algorithms.md, "Leaf size and L2"). With
/// a loss of unit curvature (least squares) the L2 term shrinks a leaf of n rows to n/(n + λ)
/// of its mean residual, so a leaf of one row is as safe as in XGBoost (`min_child_weight` 1);
/// other losses need a row minimum to keep pure leaves from fitting a few rows.
pub(super) fn default_min_samples_leaf(loss: &dyn Loss) -> usize {
    if loss.unit_curvature() {
        1
    } else {
        crate::tree::MIN_SAMPLES_LEAF
    }
}
