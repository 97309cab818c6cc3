//! One error type for the whole crate. Every variant names the offending input so that a user
//! can act on the message alone; the Python bindings map each variant to its own exception class.

/// Every fallible call of the crate returns this.
pub type Result<T> = std::result::Result<T, Error>;

/// What went wrong, with the offending input named (column, row, value or parameter).
///
/// ```
/// use optboost::{Error, Params};
///
/// let err = Params::default().set("learning_rate", "fast").unwrap_err();
/// assert!(matches!(err, Error::Param { .. }));
/// assert!(err.to_string().contains("learning_rate"));
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// Structurally unusable data: empty, ragged, wrong shape.
    #[error("invalid data: {0}")]
    Data(String),
    /// A value the algorithms cannot accept (non-finite target, negative weight, code out of range).
    #[error("invalid value in {what}: {detail}")]
    Value {
        /// The input at fault: a column, the target, the weights.
        what: String,
        /// What is wrong with it, with the row or value.
        detail: String,
    },
    /// A parameter outside its domain, or an unknown name. `allowed` lists what would be accepted.
    #[error("invalid parameter `{name}` = {value}: allowed {allowed}")]
    Param {
        /// The parameter (or "parameter name" for an unknown name).
        name: String,
        /// The value given, as text.
        value: String,
        /// What would be accepted.
        allowed: String,
    },
    /// A model file that cannot be read back.
    #[error("cannot load model: {0}")]
    Model(String),
    /// Training that could not go on (for example a loss that became non-finite on the first step).
    #[error("training failed: {0}")]
    Training(String),
}

impl Error {
    /// An `Error::Data` with this message.
    pub fn data(msg: impl Into<String>) -> Self {
        Error::Data(msg.into())
    }
    /// An `Error::Value` about `what` (a column, the target, the weights).
    pub fn value(what: impl Into<String>, detail: impl Into<String>) -> Self {
        Error::Value {
            what: what.into(),
            detail: detail.into(),
        }
    }
    /// An `Error::Param`: `name` got `value`, and `allowed` says what it takes.
    pub fn param(
        name: impl Into<String>,
        value: impl ToString,
        allowed: impl Into<String>,
    ) -> Self {
        Error::Param {
            name: name.into(),
            value: readable_number(value.to_string()),
            allowed: allowed.into(),
        }
    }
}

/// A number as a message should print it: `f64`'s `Display` never switches to an exponent, so
/// 1e308 would be 309 digits and 5e-324 a run of 323 zeros. Like Python's `repr`, this writes
/// an exponent outside 1e-4 ≤ |x| < 1e16; either form is the shortest that parses back to `x`.
#[derive(Debug, Clone, Copy)]
pub struct Number(pub f64);

impl std::fmt::Display for Number {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let x = self.0;
        if x != 0.0 && x.is_finite() && !(1e-4..1e16).contains(&x.abs()) {
            write!(f, "{x:e}")
        } else {
            write!(f, "{x}")
        }
    }
}

/// A parameter's value as text, with a float's plain digits (`f64`'s `Display`) rewritten as a
/// `Number`: callers pass the offending value as they hold it, and a float of 1e308 must not
/// fill the message.
fn readable_number(text: String) -> String {
    match text.parse::<f64>() {
        Ok(x) if x.to_string() == text => Number(x).to_string(),
        _ => text,
    }
}

/// ` (did you mean "a" or "b"?)` for a misspelt `name`, or nothing: the up to three `known`
/// names most like it, as Python's `difflib.get_close_matches` picks them (similarity
/// 2·M/T ≥ 0.6, M the characters of Ratcliff & Obershelp's matching blocks, T both lengths),
/// so that the core and the Python front end suggest the same names.
pub(crate) fn did_you_mean(name: &str, known: &[&str]) -> String {
    // Python bounds the work the same way: a name this long is no misspelling.
    if name.chars().count() > 200 {
        return String::new();
    }
    let name: Vec<char> = name.chars().collect();
    let mut close: Vec<(f64, &str)> = (known.iter())
        .map(|&k| (similarity(&k.chars().collect::<Vec<_>>(), &name), k))
        .filter(|&(score, _)| score >= 0.6)
        .collect();
    // Highest score first, ties by the name in reverse order (Python's `heapq.nlargest`).
    close.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| b.1.cmp(a.1)));
    let names: Vec<String> = close
        .iter()
        .take(3)
        .map(|(_, k)| format!("{k:?}"))
        .collect();
    if names.is_empty() {
        String::new()
    } else {
        format!(" (did you mean {}?)", names.join(" or "))
    }
}

/// `difflib.SequenceMatcher(None, a, b).ratio()`: matched characters over both lengths.
fn similarity(a: &[char], b: &[char]) -> f64 {
    let total = a.len() + b.len();
    if total == 0 {
        return 1.0;
    }
    2.0 * matched(a, b) as f64 / total as f64
}

/// Characters in the matching blocks: the longest common substring (earliest in `a`, then in
/// `b`), then the same on each side of it.
fn matched(a: &[char], b: &[char]) -> usize {
    let (mut best_a, mut best_b, mut best) = (0, 0, 0);
    let mut lengths = vec![0usize; b.len() + 1];
    for (i, &x) in a.iter().enumerate() {
        let mut next = vec![0usize; b.len() + 1];
        for (j, &y) in b.iter().enumerate() {
            if x == y {
                next[j + 1] = lengths[j] + 1;
                if next[j + 1] > best {
                    (best_a, best_b, best) =
                        (i + 1 - next[j + 1], j + 1 - next[j + 1], next[j + 1]);
                }
            }
        }
        lengths = next;
    }
    if best == 0 {
        return 0;
    }
    best + matched(&a[..best_a], &b[..best_b]) + matched(&a[best_a + best..], &b[best_b + best..])
}
