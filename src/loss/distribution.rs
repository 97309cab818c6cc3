//! Distributional boosting: the loss is the negative log-likelihood of a parametric distribution
//! whose K parameters are K outputs, each on its natural link (a location as is, a scale or
//! shape by its logarithm). NGBoost (Duan et al. 2020, "NGBoost: natural gradient boosting for
//! probabilistic prediction", ICML) and GAMLSS (Rigby & Stasinopoulos 2005) fit the same models.
//!
//! A family implements [`Distribution`] in its own file (`normal.rs`, `lognormal.rs`,
//! `gamma_dist.rs`, `negative_binomial.rs`, `student_t.rs`): the row's NLL, its gradient in the
//! outputs, the diagonal of the Fisher information (every family here is parametrised so that
//! its Fisher information is diagonal: the parameters are orthogonal), the unconditional MLE,
//! and the target's domain. [`Dist`] makes any of them a [`Loss`]:
//!
//! * `row_hessian` is the Fisher diagonal, the expected Hessian (Fisher scoring): the observed
//!   Hessian of the t and negative binomial NLLs is negative on part of the sample space, which
//!   would make a Newton leaf Σg/Σh meaningless.
//! * `step = "natural"` (`Distribution::fisher`, boost/gbm.rs) fits the trees to the natural
//!   gradient I(θ)⁻¹∇ℓ row by row, as NGBoost does.
//! * Every 1-D problem (constant with an offset, leaf, line search) is solved by the safeguarded
//!   Newton search of `solve::minimize_convex` on φ'(c) with the Fisher curvature as φ'': the
//!   NLLs are not jointly convex in all families, so the answer is a stationary point of φ found
//!   from 0 in the descent direction, which is the minimiser along every coordinate of the
//!   normal, lognormal and gamma families (each convex in one output at a time).
//! * The prox of a row is found by cyclic coordinate minimisation (each coordinate by the same
//!   search) until the outputs move by less than 1e-14 relative.
//!
//! Log-scale outputs are clamped to ±`LOG_BOUND` inside the computations (σ between 2e-22 and
//! 5e21), so that no exponential overflows and no value is NaN for finite scores.

use super::solve::{minimize_convex, Slope, LINE_SEARCH_TOL, PROX_MAX_ITER, PROX_TOL};
use super::traits::Family;
use super::Loss;
use std::fmt::Debug;

/// The largest magnitude of a log-scale output inside the computations.
pub const LOG_BOUND: f64 = 50.0;

/// The most sweeps of the prox's coordinate minimisation (which converges linearly, at a rate
/// set by how much the outputs' curvatures couple).
const PROX_SWEEPS: usize = 1000;

/// A log-scale output, clamped (see the module header).
pub fn log_param(f: f64) -> f64 {
    f.clamp(-LOG_BOUND, LOG_BOUND)
}

/// A parametric family of distributions for one real target, its K = 2 parameters the outputs.
pub trait Distribution: Send + Sync + Debug {
    /// The loss's name (`LossSpec`'s).
    fn name(&self) -> &'static str;
    /// Its family: the parameters' names and how the outputs map to them.
    fn family(&self) -> Family;
    /// −ln p(y | θ), with every constant (comparable with other libraries' NLL).
    fn nll(&self, y: f64, theta: &[f64]) -> f64;
    /// ∂(−ln p)/∂θ_k into `out`.
    fn gradient(&self, y: f64, theta: &[f64], out: &mut [f64]);
    /// The diagonal of the Fisher information E[∇ℓ ∇ℓᵀ] at θ (whose off-diagonal terms are 0).
    fn fisher(&self, theta: &[f64], out: &mut [f64]);
    /// The unconditional maximum-likelihood θ of the weighted rows.
    fn init(&self, y: &[f64], w: &[f64]) -> Vec<f64>;
    /// `None` when `y` is in the support, else the rule it breaks (e.g. "targets > 0").
    fn target_requirement(&self, _y: f64) -> Option<&'static str> {
        None
    }
    /// The continuous ranked probability score ∫ (F(t) − [t ≥ y])² dt, where it has a closed form.
    fn crps(&self, _y: f64, _theta: &[f64]) -> Option<f64> {
        None
    }
}

/// A [`Distribution`] as a [`Loss`] of K = 2 outputs (see the module header).
#[derive(Debug, Clone, Copy)]
pub struct Dist<D>(pub D);

const K: usize = 2;

impl<D: Distribution> Dist<D> {
    /// argmin along `b` (row-major n × K, or one output through `class`) of Σ w ℓ(y, F + γB),
    /// by the search of the module header; `rows` restricts the sum.
    fn search(&self, y: &[f64], f: &[f64], w: &[f64], rows: Option<&[u32]>, dir: Dir<'_>) -> f64 {
        let n = y.len();
        let mut u = [0.0; K];
        let (mut g, mut fisher) = ([0.0; K], [0.0; K]);
        let mut slope = |gamma: f64| -> Slope {
            let (mut d1, mut d2, mut noise) = (0.0, 0.0, 0.0);
            let mut term = |i: usize| {
                if w[i] == 0.0 {
                    return;
                }
                let b = dir.row(i);
                for k in 0..K {
                    u[k] = f[i * K + k] + gamma * b[k];
                }
                self.0.gradient(y[i], &u, &mut g);
                self.0.fisher(&u, &mut fisher);
                for k in 0..K {
                    let t = w[i] * g[k] * b[k];
                    d1 += t;
                    noise += t.abs();
                    d2 += w[i] * fisher[k] * b[k] * b[k];
                }
            };
            match rows {
                Some(rows) => rows.iter().for_each(|&r| term(r as usize)),
                None => (0..n).for_each(&mut term),
            }
            Slope {
                d1,
                d2,
                ln_scale: 0.0,
                noise,
            }
        };
        let gamma = minimize_convex(&mut slope, LINE_SEARCH_TOL, 100);
        if gamma.is_finite() {
            gamma
        } else {
            0.0
        }
    }
}

/// A search direction: a row-major n × K matrix, or the unit vector of one output.
#[derive(Clone, Copy)]
enum Dir<'a> {
    Matrix(&'a [f64]),
    Output(usize),
}

impl Dir<'_> {
    fn row(&self, i: usize) -> [f64; K] {
        match *self {
            Dir::Matrix(b) => [b[i * K], b[i * K + 1]],
            Dir::Output(class) => {
                let mut e = [0.0; K];
                e[class] = 1.0;
                e
            }
        }
    }
}

impl<D: Distribution> Loss for Dist<D> {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn n_outputs(&self) -> usize {
        K
    }
    fn row_value(&self, y: &[f64], f: &[f64]) -> f64 {
        self.0.nll(y[0], f)
    }
    fn row_gradient(&self, y: &[f64], f: &[f64], out: &mut [f64]) {
        self.0.gradient(y[0], f, out);
    }
    /// The Fisher diagonal (see the module header).
    fn row_hessian(&self, _y: &[f64], f: &[f64], out: &mut [f64]) {
        self.0.fisher(f, out);
    }
    fn row_prox(&self, y: &[f64], z: &[f64], lambda: f64, out: &mut [f64]) {
        out.copy_from_slice(z);
        let (mut g, mut fisher) = ([0.0; K], [0.0; K]);
        for _ in 0..PROX_SWEEPS {
            let mut moved: f64 = 0.0;
            for k in 0..K {
                let mut u = [out[0], out[1]];
                let start = u[k];
                let step = minimize_convex(
                    |c| {
                        u[k] = start + c;
                        self.0.gradient(y[0], &u, &mut g);
                        self.0.fisher(&u, &mut fisher);
                        Slope::new(g[k] + (u[k] - z[k]) / lambda, fisher[k] + 1.0 / lambda)
                    },
                    PROX_TOL,
                    PROX_MAX_ITER,
                );
                if step.is_finite() {
                    out[k] = start + step;
                    moved = moved.max(step.abs() / start.abs().max(1.0));
                }
            }
            if moved <= 1e-14 {
                break;
            }
        }
    }
    fn init(&self, y: &[f64], w: &[f64]) -> Vec<f64> {
        self.0.init(y, w)
    }
    fn leaf_value(&self, y: &[f64], f: &[f64], w: &[f64], rows: &[u32], class: usize) -> f64 {
        self.search(y, f, w, Some(rows), Dir::Output(class))
    }
    fn line_search(&self, y: &[f64], f: &[f64], b: &[f64], w: &[f64]) -> f64 {
        self.search(y, f, w, None, Dir::Matrix(b))
    }
    fn sigma(&self) -> Option<f64> {
        None
    }
    fn mu(&self) -> Option<f64> {
        None
    }
    fn target_error(&self, y: &[f64]) -> Option<String> {
        let (row, rule) = (y.iter().enumerate())
            .find_map(|(row, &v)| self.0.target_requirement(v).map(|rule| (row, rule)))?;
        Some(format!(
            "row {row} is {} (the {} loss needs {rule})",
            y[row],
            self.0.name()
        ))
    }
    /// The distribution's parameters by name (`Family::parameters_into`).
    fn row_response(&self, f: &[f64], out: &mut [f64]) {
        self.0.family().parameters_into(f, out);
    }
    fn distribution(&self) -> Option<&dyn Distribution> {
        Some(&self.0)
    }
}

/// Weighted mean and (population) variance of `v`.
pub fn weighted_moments(v: impl Iterator<Item = (f64, f64)> + Clone) -> (f64, f64) {
    let total: f64 = v.clone().map(|(_, w)| w).sum();
    if total <= 0.0 {
        return (0.0, 1.0);
    }
    let mean = v.clone().map(|(x, w)| w * x).sum::<f64>() / total;
    let var = v.map(|(x, w)| w * (x - mean) * (x - mean)).sum::<f64>() / total;
    (mean, var)
}

/// The log of a scale estimate, kept finite (a constant target has no spread).
pub fn ln_spread(variance: f64, level: f64) -> f64 {
    let floor = 1e-12 * level.abs().max(1e-12);
    log_param(0.5 * variance.max(floor * floor).ln())
}

#[cfg(test)]
pub(crate) mod testing {
    //! The checks every family's file runs: its gradient against finite differences of its
    //! NLL, its Fisher diagonal against the Monte-Carlo mean of the outer product of scores
    //! (off-diagonal included), its `init` against a grid, and the loss's 1-D searches.
    use super::*;
    use crate::rng::uniform;

    /// Draws from the family at θ with uniform draws given by `next`.
    pub type Sampler = dyn Fn(&[f64], &mut dyn FnMut() -> f64) -> f64;

    pub fn standard_normal(next: &mut dyn FnMut() -> f64) -> f64 {
        let (u, v) = (next().max(1e-300), next());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }

    /// Gamma(shape, 1) by Marsaglia & Tsang (2000), with the boost u^{1/a} below shape 1.
    pub fn standard_gamma(shape: f64, next: &mut dyn FnMut() -> f64) -> f64 {
        if shape < 1.0 {
            return standard_gamma(shape + 1.0, next) * next().max(1e-300).powf(1.0 / shape);
        }
        let d = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let x = standard_normal(next);
            let v = (1.0 + c * x).powi(3);
            if v > 0.0 && next().max(1e-300).ln() < 0.5 * x * x + d - d * v + d * v.ln() {
                return d * v;
            }
        }
    }

    /// Poisson(λ) by inversion (λ of tests are small).
    pub fn poisson(lambda: f64, next: &mut dyn FnMut() -> f64) -> f64 {
        let (mut k, mut p) = (0.0, (-lambda).exp());
        let (mut cdf, u) = (p, next());
        while u > cdf && p > 0.0 {
            k += 1.0;
            p *= lambda / k;
            cdf += p;
        }
        k
    }

    pub fn check_family(d: &dyn Distribution, thetas: &[[f64; 2]], sample: &Sampler) {
        let mut state = 17;
        let mut next = || uniform(&mut state);
        for theta in thetas {
            // Gradient against central differences, at draws from the distribution.
            for _ in 0..20 {
                let y = sample(theta, &mut next);
                let mut g = [0.0; 2];
                d.gradient(y, theta, &mut g);
                for k in 0..2 {
                    let h = 1e-6;
                    let (mut up, mut down) = (*theta, *theta);
                    up[k] += h;
                    down[k] -= h;
                    let fd = (d.nll(y, &up) - d.nll(y, &down)) / (2.0 * h);
                    assert!(
                        (g[k] - fd).abs() <= 1e-5 * fd.abs().max(1.0),
                        "{}: θ {theta:?}, y {y}, output {k}: {} vs {fd}",
                        d.name(),
                        g[k]
                    );
                }
            }
            // Fisher information: E[s sᵀ] by Monte Carlo, within 4 standard errors.
            let m = 200_000;
            let mut sums = [[0.0; 2]; 2];
            let mut squares = [[0.0; 2]; 2];
            let mut g = [0.0; 2];
            for _ in 0..m {
                let y = sample(theta, &mut next);
                d.gradient(y, theta, &mut g);
                for a in 0..2 {
                    for b in 0..2 {
                        let t = g[a] * g[b];
                        sums[a][b] += t;
                        squares[a][b] += t * t;
                    }
                }
            }
            let mut fisher = [0.0; 2];
            d.fisher(theta, &mut fisher);
            for a in 0..2 {
                for b in 0..2 {
                    let mean = sums[a][b] / m as f64;
                    let se = ((squares[a][b] / m as f64 - mean * mean) / m as f64).sqrt();
                    let expected = if a == b { fisher[a] } else { 0.0 };
                    assert!(
                        (mean - expected).abs() <= 4.0 * se + 1e-3 * expected.abs(),
                        "{}: θ {theta:?}, I[{a}][{b}] {expected} vs Monte Carlo {mean} ± {se}",
                        d.name()
                    );
                }
            }
            // The MLE of a sample from θ: no nearby θ has a smaller total NLL, and it is near θ.
            let y: Vec<f64> = (0..4000).map(|_| sample(theta, &mut next)).collect();
            let w: Vec<f64> = (0..y.len()).map(|i| 0.5 + (i % 3) as f64).collect();
            let total = |t: &[f64]| -> f64 { y.iter().zip(&w).map(|(&y, &w)| w * d.nll(y, t)).sum() };
            let mle = d.init(&y, &w);
            for (a, b) in [(1e-3, 0.0), (-1e-3, 0.0), (0.0, 1e-3), (0.0, -1e-3)] {
                assert!(total(&mle) <= total(&[mle[0] + a, mle[1] + b]), "{}: {mle:?}", d.name());
            }
            for k in 0..2 {
                assert!((mle[k] - theta[k]).abs() < 0.3 * theta[k].abs().max(1.0), "{}: {mle:?} vs {theta:?}", d.name());
            }
        }
    }

    /// The loss's leaf value and line search: stationary points of their 1-D problems, and the
    /// prox's optimality condition.
    pub fn check_loss(loss: &dyn Loss, theta: [f64; 2], sample: &Sampler) {
        let mut state = 23;
        let mut next = || uniform(&mut state);
        let n = 300;
        let y: Vec<f64> = (0..n).map(|_| sample(&theta, &mut next)).collect();
        let f: Vec<f64> = (0..n * 2).map(|e| theta[e % 2] + 0.4 * (next() - 0.5)).collect();
        let b: Vec<f64> = (0..n * 2).map(|_| next() - 0.5).collect();
        let w: Vec<f64> = (0..n).map(|_| 0.5 + next()).collect();
        let phi = |gamma: f64, b: &dyn Fn(usize) -> [f64; 2], rows: &[usize]| -> f64 {
            rows.iter()
                .map(|&i| {
                    let u = [f[2 * i] + gamma * b(i)[0], f[2 * i + 1] + gamma * b(i)[1]];
                    w[i] * loss.row_value(&y[i..=i], &u)
                })
                .sum()
        };
        let all: Vec<usize> = (0..n).collect();
        let along = |i: usize| [b[2 * i], b[2 * i + 1]];
        let gamma = loss.line_search(&y, &f, &b, &w);
        for step in [-1e-4, 1e-4, -0.05, 0.05] {
            assert!(phi(gamma, &along, &all) <= phi(gamma + step, &along, &all) + 1e-9, "{}: γ {gamma}", loss.name());
        }
        let rows: Vec<u32> = (0..n as u32).filter(|r| r % 4 != 0).collect();
        let chosen: Vec<usize> = rows.iter().map(|&r| r as usize).collect();
        for class in 0..2 {
            let c = loss.leaf_value(&y, &f, &w, &rows, class);
            let unit = |_: usize| if class == 0 { [1.0, 0.0] } else { [0.0, 1.0] };
            for step in [-1e-4, 1e-4, -0.05, 0.05] {
                assert!(phi(c, &unit, &chosen) <= phi(c + step, &unit, &chosen) + 1e-9, "{}: leaf {class}: {c}", loss.name());
            }
        }
        // prox: ∇ℓ(y, u) + (u − z)/λ = 0.
        for i in 0..20 {
            let (z, lambda) = ([f[2 * i] + 0.3, f[2 * i + 1] - 0.2], 0.5);
            let mut u = [0.0; 2];
            loss.row_prox(&y[i..=i], &z, lambda, &mut u);
            let mut g = [0.0; 2];
            loss.row_gradient(&y[i..=i], &u, &mut g);
            for k in 0..2 {
                let r = g[k] + (u[k] - z[k]) / lambda;
                assert!(r.abs() <= 1e-8 * g[k].abs().max(1.0), "{}: prox {u:?}: {r}", loss.name());
            }
        }
        // Extreme scores: finite or infinite, never NaN.
        let mut g = [0.0; 2];
        for u in [[1e6, 1e6], [-1e6, -1e6], [0.0, 800.0], [0.0, -800.0]] {
            let value = loss.row_value(&y[..1], &u);
            loss.row_gradient(&y[..1], &u, &mut g);
            assert!(!value.is_nan() && !g[0].is_nan() && !g[1].is_nan(), "{}: {u:?}", loss.name());
        }
    }
}
