//! `toy(scale)`: a loss added exactly as docs/adding_a_loss.md says, compiled for tests only:
//! this file, `mod toy;` and its `pub use` (`loss/mod.rs`), and in `spec.rs` its `LossSpec`
//! variant, its row of the vocabulary, its `build` arm and its `parameter` arm. It is the
//! squared loss scaled, ℓ(y, f) = scale · (y − f)²/2: σ = μ = scale, every minimisation the
//! squared loss's Σ w b (y − f) / Σ w b², and prox_{λℓ}(z) = (z + λ·scale·y)/(1 + λ·scale).
//! The tests below and in `boost/toy.rs` check that parsing, the traits, the metric check and
//! training reach it through those places and no other.

use super::{ScalarLoss, Terms};

/// ½·scale·(y − f)², the guide's example.
#[derive(Debug, Clone, Copy)]
pub struct Toy {
    scale: f64,
}

impl Toy {
    /// `scale` > 0 finite (checked by `LossSpec::validate`).
    pub fn new(scale: f64) -> Self {
        Toy { scale }
    }
}

impl ScalarLoss for Toy {
    fn name(&self) -> &'static str {
        "toy"
    }
    fn value(&self, y: f64, f: f64) -> f64 {
        0.5 * self.scale * (y - f) * (y - f)
    }
    fn derivative(&self, y: f64, f: f64) -> f64 {
        self.scale * (f - y)
    }
    fn second_derivative(&self, _y: f64, _f: f64) -> f64 {
        self.scale
    }
    fn prox(&self, y: f64, z: f64, lambda: f64) -> f64 {
        (z + lambda * self.scale * y) / (1.0 + lambda * self.scale)
    }
    fn minimize(&self, terms: Terms<'_>) -> f64 {
        let (mut num, mut den) = (0.0, 0.0);
        terms.for_each(|y, f, b, w| {
            num += w * b * (y - f);
            den += w * b * b;
        });
        if den > 0.0 {
            num / den
        } else {
            0.0
        }
    }
    fn sigma(&self) -> Option<f64> {
        Some(self.scale)
    }
    fn mu(&self) -> Option<f64> {
        Some(self.scale)
    }
}

#[cfg(test)]
mod tests {
    use crate::loss::{LossSpec, Task};

    #[test]
    fn the_toy_loss_is_parsed_validated_and_described_by_its_row() {
        let toy: LossSpec = "toy(3)".parse().unwrap();
        assert_eq!(toy, LossSpec::Toy { scale: 3.0 });
        assert_eq!(
            "toy".parse::<LossSpec>().unwrap(),
            LossSpec::Toy { scale: 2.0 }
        );
        assert_eq!(toy.to_string(), "toy(3)");
        assert_eq!(toy.parameter(), Some(("scale", 3.0)));
        assert!(LossSpec::NAMES.contains(&"toy"));
        let refused = "toy(-1)".parse::<LossSpec>().unwrap_err().to_string();
        assert!(
            refused.contains("scale") && refused.contains("> 0"),
            "{refused}"
        );

        assert_eq!(toy.traits().task, Task::Regression);
        assert!(!toy.is_binary() && !toy.is_piecewise_linear() && toy.is_separable());
        let loss = toy.build(1).unwrap();
        assert_eq!((loss.name(), loss.sigma()), ("toy", Some(3.0)));
    }
}
