//! Serde for floats that may be infinite: JSON has no infinity, and serde_json writes `null` for
//! it, which it then refuses to read back. A raw threshold of +∞ ("every non-missing value goes
//! left") and cut points next to ±∞ feature values are legitimate, so they are written as the
//! strings "inf" / "-inf" / "nan" and finite values as plain numbers.
//!
//! Reading goes through a visitor rather than an untagged enum: an untagged enum buffers every
//! value before trying its variants, which made thresholds the slowest part of loading a model.

use serde::de::{Deserializer, Error, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// One float in this representation, for arrays of them (`vec`, and the compact tree layout).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NonFinite(pub f64);

impl Serialize for NonFinite {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let x = self.0;
        if x.is_finite() {
            s.serialize_f64(x)
        } else if x.is_nan() {
            s.serialize_str("nan")
        } else if x > 0.0 {
            s.serialize_str("inf")
        } else {
            s.serialize_str("-inf")
        }
    }
}

struct FloatVisitor;

impl Visitor<'_> for FloatVisitor {
    type Value = f64;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number, \"inf\", \"-inf\" or \"nan\"")
    }
    fn visit_f64<E: Error>(self, x: f64) -> Result<f64, E> {
        Ok(x)
    }
    fn visit_u64<E: Error>(self, x: u64) -> Result<f64, E> {
        Ok(x as f64)
    }
    fn visit_i64<E: Error>(self, x: i64) -> Result<f64, E> {
        Ok(x as f64)
    }
    fn visit_str<E: Error>(self, text: &str) -> Result<f64, E> {
        match text {
            "inf" => Ok(f64::INFINITY),
            "-inf" => Ok(f64::NEG_INFINITY),
            "nan" => Ok(f64::NAN),
            other => Err(E::custom(format!(
                "expected a number, \"inf\", \"-inf\" or \"nan\", got {other:?}"
            ))),
        }
    }
}

impl<'de> Deserialize<'de> for NonFinite {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FloatVisitor).map(NonFinite)
    }
}

pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    NonFinite(*x).serialize(s)
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    NonFinite::deserialize(d).map(|x| x.0)
}

pub mod vec {
    use super::NonFinite;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(xs: &[f64], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(xs.iter().map(|&x| NonFinite(x)))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
        Ok(Vec::<NonFinite>::deserialize(d)?
            .into_iter()
            .map(|x| x.0)
            .collect())
    }
}
