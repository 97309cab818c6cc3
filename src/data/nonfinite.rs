//! Serde for floats that may be infinite: JSON has no infinity, and serde_json writes `null` for
//! it, which it then refuses to read back. A raw threshold of +∞ ("every non-missing value goes
//! left") and cut points next to ±∞ feature values are legitimate, so they are written as the
//! strings "inf" / "-inf" / "nan" and finite values as plain numbers.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Repr {
    Number(f64),
    /// Owned, so that reading from a stream (no borrowed strings) works too.
    Text(String),
}

fn to_repr(x: f64) -> Repr {
    if x.is_finite() {
        Repr::Number(x)
    } else if x.is_nan() {
        Repr::Text("nan".into())
    } else if x > 0.0 {
        Repr::Text("inf".into())
    } else {
        Repr::Text("-inf".into())
    }
}

fn from_repr<E: serde::de::Error>(r: Repr) -> Result<f64, E> {
    match r {
        Repr::Number(x) => Ok(x),
        Repr::Text(t) if t == "inf" => Ok(f64::INFINITY),
        Repr::Text(t) if t == "-inf" => Ok(f64::NEG_INFINITY),
        Repr::Text(t) if t == "nan" => Ok(f64::NAN),
        Repr::Text(other) => Err(E::custom(format!(
            "expected a number, \"inf\", \"-inf\" or \"nan\", got {other:?}"
        ))),
    }
}

pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    to_repr(*x).serialize(s)
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    from_repr(Repr::deserialize(d)?)
}

pub mod vec {
    use super::{from_repr, to_repr, Repr};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(xs: &[f64], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(xs.iter().map(|&x| to_repr(x)))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
        Vec::<Repr>::deserialize(d)?
            .into_iter()
            .map(from_repr)
            .collect()
    }
}
