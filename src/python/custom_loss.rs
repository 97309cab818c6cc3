//! A scalar loss given by Python callables (`optboost.CustomLoss`): `value(y, f)`,
//! `gradient(y, f)` and optionally `hessian(y, f)`, each vectorised over rows (numpy arrays in,
//! an array of the same length out).
//!
//! Everything the methods need beyond the three is derived with one Python call per solver
//! iteration over all rows, never one per row: the line searches by the safeguarded Newton of
//! `solve::minimize_convex` on Σ w b ℓ'(y, f + γb); the prox by a safeguarded Newton on
//! u − z + λℓ'(y, u) = 0 for all rows at once, each row inside its bracket between z and
//! z − λℓ'(y, z) (valid for any convex ℓ), bisecting where Newton leaves it; without `hessian`,
//! ℓ'' by a central difference of the gradient. σ and μ are unknown (the loss could be anything
//! convex), so the methods use their defaults for such losses.
//!
//! A callable that raises, returns another length or non-finite values stops training with an
//! error naming it and the count: the first such error is kept, and the calls after it return
//! NaN, which the booster reports as divergence; `PyBooster` raises the kept error instead.
//! A `KeyboardInterrupt` (Ctrl-C) in a callable is kept as an interruption: the booster undoes
//! the iteration (`Loss::interrupted`) and `PyBooster` raises `KeyboardInterrupt`, so that the
//! model keeps its finished iterations as after a Ctrl-C anywhere else.

use crate::loss::solve::{self, Slope};
use crate::loss::{ScalarLoss, Terms};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use std::sync::{Arc, Mutex};

/// Which callable.
#[derive(Clone, Copy, Debug)]
enum Part {
    Value,
    Gradient,
    Hessian,
}

impl Part {
    fn name(self) -> &'static str {
        match self {
            Part::Value => "value",
            Part::Gradient => "gradient",
            Part::Hessian => "hessian",
        }
    }
}

/// Why the callables stopped being called.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// A callable failed: the error message naming it.
    Error(String),
    /// A callable raised `KeyboardInterrupt`.
    Interrupted,
}

#[derive(Debug)]
pub struct PyLoss {
    value: Py<PyAny>,
    gradient: Py<PyAny>,
    hessian: Option<Py<PyAny>>,
    /// The first failure of a callable, for `PyBooster` to raise (and to clear after an
    /// interruption, so that training can go on).
    pub failure: Arc<Mutex<Option<Failure>>>,
}

impl PyLoss {
    pub fn new(value: Py<PyAny>, gradient: Py<PyAny>, hessian: Option<Py<PyAny>>) -> Self {
        PyLoss {
            value,
            gradient,
            hessian,
            failure: Arc::new(Mutex::new(None)),
        }
    }

    fn fail(&self, failure: Failure) {
        let mut kept = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        kept.get_or_insert(failure);
    }

    fn failed(&self) -> bool {
        self.failure.lock().map(|e| e.is_some()).unwrap_or(true)
    }

    /// `part(y, f)` into `out`; NaN everywhere after a failure (recorded).
    fn call(&self, part: Part, y: &[f64], f: &[f64], out: &mut [f64]) {
        if self.failed() {
            out.fill(f64::NAN);
            return;
        }
        let function = match part {
            Part::Value => &self.value,
            Part::Gradient => &self.gradient,
            Part::Hessian => match &self.hessian {
                Some(h) => h,
                None => return self.hessian_by_differences(y, f, out),
            },
        };
        let result = Python::attach(|py| -> Result<(), Failure> {
            let y_array = PyArray1::from_slice(py, y);
            let f_array = PyArray1::from_slice(py, f);
            let returned = function.call1(py, (y_array, f_array)).map_err(|e| {
                if e.is_instance_of::<PyKeyboardInterrupt>(py) {
                    Failure::Interrupted
                } else {
                    named(part, format!("raised {e}"))
                }
            })?;
            let numpy = py.import("numpy").map_err(|e| named(part, e.to_string()))?;
            let array = (numpy.call_method1("asarray", (returned, "float64"))).map_err(|e| {
                named(
                    part,
                    format!("returned something that is not an array of numbers: {e}"),
                )
            })?;
            let array = array
                .cast_into::<PyArray1<f64>>()
                .map_err(|_| named(part, "returned an array that is not one-dimensional".into()))?;
            let values = array.readonly();
            let values = values.as_slice().map_err(|e| named(part, e.to_string()))?;
            if values.len() != y.len() {
                let message = format!("returned {} values for {} rows", values.len(), y.len());
                return Err(named(part, message));
            }
            let bad = values.iter().filter(|v| !v.is_finite()).count();
            if bad > 0 {
                let message = format!("returned {bad} non-finite values (of {})", y.len());
                return Err(named(part, message));
            }
            out.copy_from_slice(values);
            Ok(())
        });
        if let Err(failure) = result {
            self.fail(failure);
            out.fill(f64::NAN);
        }
    }

    /// ℓ'' ≈ (ℓ'(f + h) − ℓ'(f − h))/(2h), h = 1e-5·(1 + |f|): two gradient calls.
    fn hessian_by_differences(&self, y: &[f64], f: &[f64], out: &mut [f64]) {
        let step: Vec<f64> = f.iter().map(|f| 1e-5 * (1.0 + f.abs())).collect();
        let up: Vec<f64> = f.iter().zip(&step).map(|(f, h)| f + h).collect();
        let down: Vec<f64> = f.iter().zip(&step).map(|(f, h)| f - h).collect();
        let mut g_up = vec![0.0; f.len()];
        self.call(Part::Gradient, y, &up, &mut g_up);
        self.call(Part::Gradient, y, &down, out);
        for i in 0..f.len() {
            out[i] = (g_up[i] - out[i]) / (up[i] - down[i]);
        }
    }

    fn one(&self, part: Part, y: f64, f: f64) -> f64 {
        let mut out = [0.0];
        self.call(part, &[y], &[f], &mut out);
        out[0]
    }
}

/// The error of callable `part`: "CustomLoss {part} {what it did}".
fn named(part: Part, message: String) -> Failure {
    Failure::Error(format!("CustomLoss {} {message}", part.name()))
}

impl ScalarLoss for PyLoss {
    fn name(&self) -> &'static str {
        "custom"
    }
    fn can_be_interrupted(&self) -> bool {
        true
    }
    fn interrupted(&self) -> bool {
        let failure = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        *failure == Some(Failure::Interrupted)
    }
    fn value(&self, y: f64, f: f64) -> f64 {
        self.one(Part::Value, y, f)
    }
    fn derivative(&self, y: f64, f: f64) -> f64 {
        self.one(Part::Gradient, y, f)
    }
    fn second_derivative(&self, y: f64, f: f64) -> f64 {
        self.one(Part::Hessian, y, f)
    }
    fn prox(&self, y: f64, z: f64, lambda: f64) -> f64 {
        let mut out = [0.0];
        self.prox_into(&[y], &[z], lambda, &mut out);
        out[0]
    }
    fn prox_into(&self, y: &[f64], z: &[f64], lambda: f64, out: &mut [f64]) {
        let n = y.len();
        let mut g = vec![0.0; n];
        let mut h = vec![0.0; n];
        self.call(Part::Gradient, y, z, &mut g);
        let mut lo: Vec<f64> = (0..n).map(|i| z[i].min(z[i] - lambda * g[i])).collect();
        let mut hi: Vec<f64> = (0..n).map(|i| z[i].max(z[i] - lambda * g[i])).collect();
        out.copy_from_slice(z);
        let mut active: Vec<bool> = (0..n).map(|i| g[i] != 0.0).collect();
        for _ in 0..solve::PROX_MAX_ITER {
            if !active.iter().any(|&a| a) || self.failed() {
                break;
            }
            self.call(Part::Gradient, y, out, &mut g);
            self.call(Part::Hessian, y, out, &mut h);
            for i in 0..n {
                if !active[i] {
                    continue;
                }
                let u = out[i];
                let residual = u - z[i] + lambda * g[i];
                if residual == 0.0 {
                    active[i] = false;
                    continue;
                }
                if residual < 0.0 {
                    lo[i] = u;
                } else {
                    hi[i] = u;
                }
                let newton = u - residual / (1.0 + lambda * h[i]);
                let next = if newton > lo[i] && newton < hi[i] {
                    newton
                } else {
                    lo[i] + 0.5 * (hi[i] - lo[i])
                };
                let scale = next.abs().max(1.0);
                if (next - u).abs() <= solve::PROX_TOL * scale
                    || hi[i] - lo[i] <= solve::PROX_TOL * scale
                {
                    active[i] = false;
                }
                out[i] = next;
            }
        }
    }
    fn minimize(&self, terms: Terms<'_>) -> f64 {
        let (mut y, mut f, mut b, mut w) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        terms.for_each(|yi, fi, bi, wi| {
            if wi > 0.0 && bi != 0.0 {
                y.push(yi);
                f.push(fi);
                b.push(bi);
                w.push(wi);
            }
        });
        if y.is_empty() {
            return 0.0;
        }
        let n = y.len();
        let (mut s, mut g, mut h) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        let deriv = |gamma: f64| {
            for i in 0..n {
                s[i] = f[i] + gamma * b[i];
            }
            self.call(Part::Gradient, &y, &s, &mut g);
            self.call(Part::Hessian, &y, &s, &mut h);
            let (mut d1, mut d2, mut noise) = (0.0, 0.0, 0.0);
            for i in 0..n {
                d1 += w[i] * b[i] * g[i];
                d2 += w[i] * b[i] * b[i] * h[i];
                noise += (w[i] * b[i] * g[i]).abs();
            }
            Slope {
                d1,
                d2,
                ln_scale: 0.0,
                noise,
            }
        };
        solve::minimize_convex(deriv, solve::LINE_SEARCH_TOL, solve::LINE_SEARCH_MAX_ITER)
    }
    fn sigma(&self) -> Option<f64> {
        None
    }
    fn mu(&self) -> Option<f64> {
        None
    }
    fn sum_value_and_derivatives(
        &self,
        y: &[f64],
        f: &[f64],
        neg_gradient: &mut [f64],
        hessian: &mut [f64],
    ) -> f64 {
        let mut values = vec![0.0; y.len()];
        self.call(Part::Value, y, f, &mut values);
        if !neg_gradient.is_empty() {
            self.call(Part::Gradient, y, f, neg_gradient);
            neg_gradient.iter_mut().for_each(|g| *g = -*g);
        }
        if !hessian.is_empty() {
            self.call(Part::Hessian, y, f, hessian);
        }
        values.iter().sum()
    }
    fn sum_values(&self, y: &[f64], f: &[f64], w: &[f64]) -> f64 {
        let mut values = vec![0.0; y.len()];
        self.call(Part::Value, y, f, &mut values);
        if w.is_empty() {
            values.iter().sum()
        } else {
            values.iter().zip(w).map(|(v, w)| v * w).sum()
        }
    }
    fn mean_value(&self, y: &[f64], f: &[f64], w: &[f64]) -> f64 {
        self.sum_values(y, f, w) / w.iter().sum::<f64>()
    }
    fn shifted_derivative_sums(
        &self,
        y: &[f64],
        f: &[f64],
        w: &[f64],
        rows: &[u32],
        c: f64,
    ) -> (f64, f64) {
        let y: Vec<f64> = rows.iter().map(|&r| y[r as usize]).collect();
        let s: Vec<f64> = rows.iter().map(|&r| f[r as usize] + c).collect();
        let (mut g, mut h) = (vec![0.0; y.len()], vec![0.0; y.len()]);
        self.call(Part::Gradient, &y, &s, &mut g);
        self.call(Part::Hessian, &y, &s, &mut h);
        let (mut d1, mut d2) = (0.0, 0.0);
        for (i, &r) in rows.iter().enumerate() {
            d1 += w[r as usize] * g[i];
            d2 += w[r as usize] * h[i];
        }
        (d1, d2)
    }
    fn derivatives_into(&self, y: &[f64], f: &[f64], out: &mut [f64]) {
        self.call(Part::Gradient, y, f, out);
    }
    fn second_derivatives_into(&self, y: &[f64], f: &[f64], out: &mut [f64]) {
        self.call(Part::Hessian, y, f, out);
    }
}
