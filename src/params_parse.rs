//! Parameter values from their text (`Params::set`): numbers, switches, and the monotone and
//! interaction constraints in either of their spellings.

use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::str::FromStr;

/// `true` / `false` (also `1` / `0`).
pub(super) fn parse_switch(name: &str, value: &str) -> Result<bool> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(Error::param(name, format!("{value:?}"), "true or false")),
    }
}

pub(super) fn parse<T: FromStr>(name: &str, value: &str) -> Result<T> {
    value.parse().map_err(|_| {
        let expected = std::any::type_name::<T>();
        let allowed = match expected {
            "f64" => "a number",
            "usize" | "u64" => "a non-negative integer",
            _ => expected,
        };
        Error::param(name, format!("{value:?}"), allowed)
    })
}

/// `{"age": 1, "debt": -1}` (JSON) or `age:1,debt:-1`; directions −1, 0 or 1.
pub(super) fn parse_monotone(value: &str) -> Result<BTreeMap<String, i8>> {
    let expected = "feature directions as {\"name\": 1, \"other\": -1} or name:1,other:-1, \
                    each direction -1, 0 or 1";
    let bad = || Error::param("monotone", format!("{value:?}"), expected);
    let pairs: Vec<(String, f64)> = if value.starts_with('{') {
        let map: BTreeMap<String, f64> = serde_json::from_str(value).map_err(|_| bad())?;
        map.into_iter().collect()
    } else {
        (value.split(',').filter(|p| !p.trim().is_empty()))
            .map(|pair| {
                let (name, direction) = pair.rsplit_once(':').ok_or_else(bad)?;
                let direction = direction.trim().parse().map_err(|_| bad())?;
                Ok((name.trim().to_string(), direction))
            })
            .collect::<Result<_>>()?
    };
    (pairs.into_iter())
        .map(|(name, d)| match d {
            -1.0 | 0.0 | 1.0 if !name.is_empty() => Ok((name, d as i8)),
            _ => Err(bad()),
        })
        .collect()
}

/// `[["a", "b"], ["c", "d", "e"]]` (JSON) or `a,b;c,d,e`.
pub(super) fn parse_interactions(value: &str) -> Result<Vec<Vec<String>>> {
    let expected = "sets of feature names as [[\"a\", \"b\"], [\"c\"]] or a,b;c";
    let bad = || Error::param("interactions", format!("{value:?}"), expected);
    let sets: Vec<Vec<String>> = if value.starts_with('[') {
        serde_json::from_str(value).map_err(|_| bad())?
    } else {
        (value.split(';').filter(|set| !set.trim().is_empty()))
            .map(|set| set.split(',').map(|name| name.trim().to_string()).collect())
            .collect()
    };
    if sets.iter().flatten().any(String::is_empty) {
        return Err(bad());
    }
    Ok(sets)
}
