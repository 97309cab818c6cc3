//! Losses (docs/algorithms.md §6) through the public API: derivatives against finite differences,
//! proximal operators against their optimality conditions, every 1-D minimisation (init, leaf
//! value, line search) against brute force, extreme margins, and the `LossSpec` vocabulary.

mod common;

use common::TestRng;
use optboost::loss::{
    Absolute, Exponential, Hinge, Huber, LeafScratch, Logistic, Loss, LossSpec, MulticlassHinge,
    Pinball, ScalarLoss, Softmax, Squared,
};
use optboost::Error;

// ---------------------------------------------------------------------------------------------
// Helpers

/// A scalar loss with what the tests need to know about it.
struct Case {
    loss: Box<dyn ScalarLoss>,
    binary: bool,
    /// Points where ℓ(y, ·) or ℓ'(y, ·) is not differentiable.
    kinks: Box<dyn Fn(f64) -> Vec<f64>>,
    /// Values of z at which the prox switches branch, for a given (y, λ).
    prox_switches: Box<dyn Fn(f64, f64) -> Vec<f64>>,
}

fn cases() -> Vec<Case> {
    let none = || -> Box<dyn Fn(f64) -> Vec<f64>> { Box::new(|_| vec![]) };
    let no_switch = || -> Box<dyn Fn(f64, f64) -> Vec<f64>> { Box::new(|_, _| vec![]) };
    let mut out = vec![
        Case {
            loss: Box::new(Squared),
            binary: false,
            kinks: none(),
            prox_switches: no_switch(),
        },
        Case {
            loss: Box::new(Absolute),
            binary: false,
            kinks: Box::new(|y| vec![y]),
            prox_switches: Box::new(|y, l| vec![y - l, y + l]),
        },
    ];
    for tau in [0.3, 0.85] {
        out.push(Case {
            loss: Box::new(Pinball::new(tau)),
            binary: false,
            kinks: Box::new(|y| vec![y]),
            prox_switches: Box::new(move |y, l| vec![y - l * tau, y - l * (tau - 1.0)]),
        });
    }
    for delta in [1.3, 0.4] {
        out.push(Case {
            loss: Box::new(Huber::new(delta)),
            binary: false,
            kinks: Box::new(move |y| vec![y - delta, y + delta]),
            prox_switches: Box::new(move |y, l| vec![y - delta * (1.0 + l), y + delta * (1.0 + l)]),
        });
    }
    for ridge in [0.0, 0.1] {
        out.push(Case {
            loss: Box::new(Logistic::new(ridge)),
            binary: true,
            kinks: none(),
            prox_switches: no_switch(),
        });
    }
    for beta in [1.0, 0.7] {
        out.push(Case {
            loss: Box::new(Exponential::new(beta)),
            binary: true,
            kinks: none(),
            prox_switches: no_switch(),
        });
    }
    out.push(Case {
        loss: Box::new(Hinge),
        binary: true,
        kinks: Box::new(|y| vec![y]),
        prox_switches: Box::new(|y, l| vec![y * (1.0 - l), y]),
    });
    out
}

fn label(rng: &mut TestRng, binary: bool) -> f64 {
    if binary {
        rng.sign()
    } else {
        rng.uniform_in(-3.0, 3.0)
    }
}

/// Minimum of a 1-D function on [lo, hi]: dense grid, then golden-section refinement around the
/// best grid point. Returns (argmin, min).
fn brute_min(phi: impl Fn(f64) -> f64, lo: f64, hi: f64, n: usize) -> (f64, f64) {
    let step = (hi - lo) / n as f64;
    let (mut bx, mut bv) = (lo, phi(lo));
    for i in 1..=n {
        let x = lo + step * i as f64;
        let v = phi(x);
        if v < bv {
            (bx, bv) = (x, v);
        }
    }
    let g = 0.5 * (5f64.sqrt() - 1.0);
    let (mut a, mut b) = (bx - step, bx + step);
    for _ in 0..80 {
        let (c, d) = (b - g * (b - a), a + g * (b - a));
        if phi(c) < phi(d) {
            b = d;
        } else {
            a = c;
        }
    }
    let x = 0.5 * (a + b);
    let v = phi(x);
    if v < bv {
        (x, v)
    } else {
        (bx, bv)
    }
}

fn assert_no_worse(name: &str, what: &str, ours: f64, brute: f64) {
    assert!(
        ours <= brute + 1e-9 * (1.0 + brute.abs()),
        "{name} {what}: objective at our answer {ours:e} > brute force {brute:e} (diff {:e})",
        ours - brute
    );
}

fn near_any(x: f64, points: &[f64], eps: f64) -> bool {
    points.iter().any(|p| (x - p).abs() < eps)
}

// ---------------------------------------------------------------------------------------------
// Scalar losses

#[test]
fn derivative_matches_finite_differences() {
    let mut rng = TestRng::new(1);
    let h = 1e-6;
    for case in cases() {
        let l = &case.loss;
        let mut checked = 0;
        while checked < 200 {
            let y = label(&mut rng, case.binary);
            let f = rng.uniform_in(-4.0, 4.0);
            if near_any(f, &(case.kinks)(y), 1e-3) {
                continue;
            }
            checked += 1;
            let d = l.derivative(y, f);
            let fd = (l.value(y, f + h) - l.value(y, f - h)) / (2.0 * h);
            assert!(
                (d - fd).abs() <= 1e-6 * (1.0 + d.abs()),
                "{}: ℓ'({y}, {f}) = {d}, FD {fd}",
                l.name()
            );
            let s = l.second_derivative(y, f);
            let fd2 = (l.derivative(y, f + h) - l.derivative(y, f - h)) / (2.0 * h);
            assert!(
                (s - fd2).abs() <= 1e-5 * (1.0 + s.abs()),
                "{}: ℓ''({y}, {f}) = {s}, FD {fd2}",
                l.name()
            );
        }
    }
}

#[test]
fn fused_value_and_derivatives_equal_the_separate_forms_bit_for_bit() {
    // The booster's loss pass uses the fused form; models must not depend on which form ran.
    let mut rng = TestRng::new(11);
    let extremes = [
        0.0, -0.0, 1e-300, -1e-300, 36.0, -36.0, 709.0, -745.0, 1e6, -1e6,
    ];
    for case in cases() {
        let l = &case.loss;
        for i in 0..2000 {
            let y = label(&mut rng, case.binary);
            let f = match extremes.get(i) {
                Some(&f) => f,
                None => rng.uniform_in(-40.0, 40.0),
            };
            let (v, d, s) = l.value_and_derivatives(y, f);
            let separate = (l.value(y, f), l.derivative(y, f), l.second_derivative(y, f));
            assert_eq!(
                (v.to_bits(), d.to_bits(), s.to_bits()),
                (
                    separate.0.to_bits(),
                    separate.1.to_bits(),
                    separate.2.to_bits()
                ),
                "{} at y = {y}, f = {f}: fused {:?}, separate {separate:?}",
                l.name(),
                (v, d, s)
            );
        }
    }
}

#[test]
fn summed_pass_matches_the_row_forms() {
    // The booster's unweighted loss pass, with or without derivatives: derivatives bit for bit
    // those of the fused form, and the sum within 3e-16 per row of the row values plus the
    // rounding of summing them (the logistic loss sums its logarithms by runs of products,
    // absolutely accurate to rounding, also where each term is tiny).
    let mut rng = TestRng::new(12);
    let mut weight_rng = TestRng::new(13);
    let extremes = [0.0, -0.0, 36.0, -36.0, 709.0, -745.0, 1e6, -1e6];
    for case in cases() {
        let l = &case.loss;
        for scale in [0.5, 5.0, 40.0] {
            let n = 1000;
            let y: Vec<f64> = (0..n).map(|_| label(&mut rng, case.binary)).collect();
            let f: Vec<f64> = (0..n)
                .map(|i| match extremes.get(i) {
                    Some(&f) if scale > 1.0 => f,
                    _ => rng.uniform_in(-scale, scale) + if case.binary { 4.0 * y[i] } else { 0.0 },
                })
                .collect();
            let (mut g, mut h) = (vec![0.0; n], vec![0.0; n]);
            let total = l.sum_value_and_derivatives(&y, &f, &mut g, &mut h);
            let mut g_only = vec![0.0; n];
            let total_g_only = l.sum_value_and_derivatives(&y, &f, &mut g_only, &mut []);
            assert_eq!(total.to_bits(), total_g_only.to_bits(), "{}", l.name());
            // The pass without derivatives sums as the fused one; with weights, row by row.
            let values_only = l.sum_values(&y, &f, &[]);
            assert_eq!(total.to_bits(), values_only.to_bits(), "{}", l.name());
            let w: Vec<f64> = (0..n).map(|_| weight_rng.uniform_in(0.0, 2.0)).collect();
            let weighted: f64 = (0..n).map(|i| w[i] * l.value(y[i], f[i])).sum();
            assert_eq!(
                l.sum_values(&y, &f, &w).to_bits(),
                weighted.to_bits(),
                "{}",
                l.name()
            );
            let (mut reference, mut magnitude) = (0.0, 0.0);
            for i in 0..n {
                let (v, d, s) = l.value_and_derivatives(y[i], f[i]);
                assert_eq!(
                    (g[i].to_bits(), g_only[i].to_bits(), h[i].to_bits()),
                    ((-d).to_bits(), (-d).to_bits(), s.to_bits()),
                    "{} row {i}",
                    l.name()
                );
                reference += v;
                magnitude += v.abs();
            }
            // Both are sums of n terms: each may be off by n ε Σ|ℓ| / 2 (recursive summation), which
            // the large terms of the extreme margins (ℓ ~ 1e12) make far more than a few ulps.
            let tolerance = 3e-16 * n as f64 + n as f64 * f64::EPSILON * magnitude;
            assert!(
                total == reference || (total - reference).abs() <= tolerance,
                "{} (scale {scale}): summed {total}, rows {reference}",
                l.name()
            );
        }
    }
}

#[test]
fn derivatives_at_kinks_are_subgradients() {
    // At a kink the returned derivative must lie between the one-sided slopes.
    let mut rng = TestRng::new(2);
    for case in cases() {
        let l = &case.loss;
        for _ in 0..20 {
            let y = label(&mut rng, case.binary);
            for k in (case.kinks)(y) {
                let h = 1e-7;
                let left = (l.value(y, k) - l.value(y, k - h)) / h;
                let right = (l.value(y, k + h) - l.value(y, k)) / h;
                let d = l.derivative(y, k);
                assert!(
                    d >= left - 1e-6 && d <= right + 1e-6,
                    "{}: ℓ'({y}, {k}) = {d} ∉ [{left}, {right}]",
                    l.name()
                );
            }
        }
    }
}

/// (z − u)/λ must lie in ∂ℓ(y, u) = [ℓ'₋(u), ℓ'₊(u)], estimated by one-sided differences; for
/// smooth losses it must also equal ℓ'(y, u) tightly.
fn check_prox(case: &Case, y: f64, z: f64, lambda: f64) {
    let l = &case.loss;
    let u = l.prox(y, z, lambda);
    assert!(
        u.is_finite(),
        "{}: prox({y}, {z}, {lambda}) = {u}",
        l.name()
    );
    let g = (z - u) / lambda;
    let h = 1e-7;
    let left = (l.value(y, u) - l.value(y, u - h)) / h;
    let right = (l.value(y, u + h) - l.value(y, u)) / h;
    let tol = 1e-5 * (1.0 + g.abs());
    assert!(
        g >= left.min(right) - tol && g <= right.max(left) + tol,
        "{}: y={y} z={z} λ={lambda}: u={u}, (z−u)/λ={g} ∉ [{left}, {right}]",
        l.name()
    );
    if (case.kinks)(y).is_empty() {
        let d = l.derivative(y, u);
        assert!(
            (g - d).abs() <= 1e-9 * (1.0 + d.abs()),
            "{}: (z−u)/λ={g} ≠ ℓ'(u)={d}",
            l.name()
        );
    }
    // And the prox objective is not improved by small moves.
    let obj = |v: f64| l.value(y, v) + (v - z) * (v - z) / (2.0 * lambda);
    for e in [1e-3, -1e-3, 1e-5, -1e-5] {
        assert!(
            obj(u) <= obj(u + e) + 1e-12 * (1.0 + obj(u).abs()),
            "{}: prox not a minimiser",
            l.name()
        );
    }
}

#[test]
fn prox_satisfies_optimality_at_random_points() {
    let mut rng = TestRng::new(3);
    for case in cases() {
        for _ in 0..300 {
            let y = label(&mut rng, case.binary);
            let z = rng.uniform_in(-5.0, 5.0);
            let lambda = [0.01, 0.3, 1.0, 4.0, 50.0][rng.below(5)] * rng.uniform_in(0.5, 1.5);
            check_prox(&case, y, z, lambda);
        }
    }
}

#[test]
fn prox_satisfies_optimality_at_and_near_kinks() {
    let mut rng = TestRng::new(4);
    for case in cases() {
        for _ in 0..20 {
            let y = label(&mut rng, case.binary);
            for lambda in [0.05, 0.5, 1.0, 3.0] {
                let mut zs = vec![];
                for k in (case.kinks)(y) {
                    for i in -16..=16 {
                        zs.push(k + lambda * i as f64 / 8.0);
                    }
                    zs.push(k);
                }
                for s in (case.prox_switches)(y, lambda) {
                    for e in [-1e-2, -1e-9, 0.0, 1e-9, 1e-2] {
                        zs.push(s + e);
                    }
                }
                for z in zs {
                    check_prox(&case, y, z, lambda);
                }
            }
        }
    }
}

#[test]
fn prox_closed_forms_land_on_kinks() {
    // Inside the dead zone the prox is exactly the kink.
    assert_eq!(Absolute.prox(2.0, 2.4, 0.5), 2.0);
    assert_eq!(Pinball::new(0.9).prox(1.0, 0.5, 1.0), 1.0);
    assert_eq!(Hinge.prox(1.0, 0.7, 0.5), 1.0);
    assert_eq!(Hinge.prox(-1.0, -0.7, 0.5), -1.0);
    assert_eq!(Hinge.prox(1.0, 2.0, 0.5), 2.0);
    assert_eq!(Hinge.prox(1.0, -2.0, 0.5), -1.5);
    // Huber: inside (z − y)/(1 + λ); outside z − λδ sign.
    assert!((Huber::new(1.0).prox(0.0, 1.5, 1.0) - 0.75).abs() < 1e-15);
    assert!((Huber::new(1.0).prox(0.0, 5.0, 1.0) - 4.0).abs() < 1e-15);
}

/// Random weighted data for the 1-D minimisation tests.
struct Data {
    y: Vec<f64>,
    f: Vec<f64>,
    b: Vec<f64>,
    w: Vec<f64>,
}

fn data(rng: &mut TestRng, n: usize, binary: bool) -> Data {
    let y = (0..n).map(|_| label(rng, binary)).collect();
    let f = (0..n).map(|_| rng.uniform_in(-2.0, 2.0)).collect();
    let b = (0..n)
        .map(|_| {
            if rng.chance(0.2) {
                0.0
            } else {
                rng.uniform_in(-1.5, 1.5)
            }
        })
        .collect();
    let w = (0..n)
        .map(|_| {
            if rng.chance(0.1) {
                0.0
            } else {
                rng.uniform_in(0.2, 2.0)
            }
        })
        .collect();
    Data { y, f, b, w }
}

#[test]
fn init_is_the_constant_minimiser() {
    let mut rng = TestRng::new(5);
    for case in cases() {
        let l = &case.loss;
        for trial in 0..40 {
            let n = 1 + rng.below(9);
            let mut d = data(&mut rng, n, case.binary);
            if trial % 10 == 0 && case.binary {
                d.y.iter_mut().for_each(|y| *y = 1.0); // one class only
            }
            let c = l.init(&d.y, &d.w);
            assert!(c.is_finite(), "{}: init = {c}", l.name());
            let phi = |c: f64| {
                (0..n)
                    .filter(|&i| d.w[i] > 0.0)
                    .map(|i| d.w[i] * l.value(d.y[i], c))
                    .sum::<f64>()
            };
            let (_, best) = brute_min(phi, -10.0, 10.0, 2000);
            assert_no_worse(l.name(), "init", phi(c), best);
        }
    }
}

#[test]
fn init_special_values() {
    let w = [1.0, 2.0, 1.0];
    // Hinge: ±1 (not just any positive number), 0 on a tie, finite for one class.
    assert_eq!(Hinge.init(&[1.0, 1.0, -1.0], &w), 1.0);
    assert_eq!(Hinge.init(&[1.0, -1.0, -1.0], &w), -1.0);
    assert_eq!(Hinge.init(&[1.0, -1.0, 1.0], &[1.0, 2.0, 1.0]), 0.0);
    assert_eq!(Hinge.init(&[1.0, 1.0, 1.0], &w), 1.0);
    // Logistic / exponential: log-odds, capped for one class.
    let lo = Logistic::new(0.0).init(&[1.0, 1.0, -1.0], &w);
    assert!((lo - 3f64.ln()).abs() < 1e-14);
    let ex = Exponential::new(2.0).init(&[1.0, 1.0, -1.0], &w);
    assert!((ex - 3f64.ln() / 4.0).abs() < 1e-14);
    let one = Logistic::new(0.0).init(&[1.0, 1.0], &[1.0, 1.0]);
    assert!(one.is_finite() && one > 30.0);
    let one = Exponential::new(1.0).init(&[-1.0, -1.0], &[1.0, 1.0]);
    assert!(one.is_finite() && one < -15.0);
    // Absolute / pinball: weighted median / quantile.
    assert_eq!(Absolute.init(&[0.0, 1.0, 10.0], &[1.0, 3.0, 1.0]), 1.0);
    assert_eq!(
        Pinball::new(0.9).init(&[0.0, 1.0, 10.0], &[1.0, 1.0, 1.0]),
        10.0
    );
    assert_eq!(Squared.init(&[], &[]), 0.0);
}

#[test]
fn leaf_value_matches_brute_force() {
    let mut rng = TestRng::new(6);
    for case in cases() {
        let l = &case.loss;
        for _ in 0..40 {
            let n = 12;
            let d = data(&mut rng, n, case.binary);
            let rows: Vec<u32> = (0..n as u32).filter(|_| rng.chance(0.6)).collect();
            let c = l.leaf_value(&d.y, &d.f, &d.w, &rows);
            assert!(c.is_finite(), "{}: leaf = {c}", l.name());
            let phi = |c: f64| {
                rows.iter()
                    .map(|&i| i as usize)
                    .filter(|&i| d.w[i] > 0.0)
                    .map(|i| d.w[i] * l.value(d.y[i], d.f[i] + c))
                    .sum::<f64>()
            };
            let (_, best) = brute_min(phi, -15.0, 15.0, 2000);
            assert_no_worse(l.name(), "leaf_value", phi(c), best);
        }
        // Empty leaf and a leaf of zero weight: 0.
        let d = data(&mut rng, 5, case.binary);
        assert_eq!(l.leaf_value(&d.y, &d.f, &d.w, &[]), 0.0, "{}", l.name());
        assert_eq!(
            l.leaf_value(&d.y, &d.f, &[0.0; 5], &[0, 1, 2]),
            0.0,
            "{}",
            l.name()
        );
    }
}

#[test]
fn all_leaves_at_once_equal_leaf_by_leaf_bit_for_bit() {
    // The step rule solves every leaf of a tree through `leaf_values`, which a loss may answer in
    // one pass over the rows or from the leaves' terms copied out block by block; each value
    // must be `leaf_value`'s exactly. One scratch serves every call, as in the booster; the
    // larger sizes span several copy blocks.
    let mut rng = TestRng::new(16);
    let mut scratch = LeafScratch::default();
    for case in cases() {
        let l = &case.loss;
        for n in [300, 40_000, 300, 70_000, 1] {
            let d = data(&mut rng, n, case.binary);
            let n_leaves = 1 + rng.below(12);
            let leaf_of: Vec<u32> = (0..n).map(|_| rng.below(n_leaves) as u32).collect();
            // Rows ascending within each leaf, as the tree grower keeps them.
            let leaves: Vec<Vec<u32>> = (0..n_leaves as u32)
                .map(|j| {
                    (0..n as u32)
                        .filter(|&i| leaf_of[i as usize] == j)
                        .collect()
                })
                .collect();
            let slices: Vec<&[u32]> = leaves.iter().map(|r| &r[..]).collect();
            let all = l.leaf_values(&d.y, &d.f, &d.w, &slices, &leaf_of, &mut scratch);
            for (j, rows) in leaves.iter().enumerate() {
                let one = l.leaf_value(&d.y, &d.f, &d.w, rows);
                assert_eq!(
                    all[j].to_bits(),
                    one.to_bits(),
                    "{} n {n} leaf {j}",
                    l.name()
                );
            }
        }
    }
}

#[test]
fn line_search_matches_brute_force() {
    let mut rng = TestRng::new(7);
    for case in cases() {
        let l = &case.loss;
        for _ in 0..40 {
            let n = 12;
            let d = data(&mut rng, n, case.binary);
            let g = l.line_search(&d.y, &d.f, &d.b, &d.w);
            assert!(g.is_finite(), "{}: step = {g}", l.name());
            let phi = |g: f64| {
                (0..n)
                    .filter(|&i| d.w[i] > 0.0)
                    .map(|i| d.w[i] * l.value(d.y[i], d.f[i] + g * d.b[i]))
                    .sum::<f64>()
            };
            let (_, best) = brute_min(phi, -15.0, 15.0, 2000);
            assert_no_worse(l.name(), "line_search", phi(g), best);
        }
        // Zero direction: step 0.
        let d = data(&mut rng, 6, case.binary);
        assert_eq!(
            l.line_search(&d.y, &d.f, &[0.0; 6], &d.w),
            0.0,
            "{}",
            l.name()
        );
        assert_eq!(
            l.line_search(&d.y, &d.f, &d.b, &[0.0; 6]),
            0.0,
            "{}",
            l.name()
        );
    }
}

#[test]
fn line_search_allows_negative_steps() {
    // A direction pointing the wrong way: the exact argmin is negative.
    let y = [1.0, 2.0, -1.0];
    let f = [0.0; 3];
    let b = [-1.0, -2.0, 1.0];
    let w = [1.0; 3];
    assert!((Squared.line_search(&y, &f, &b, &w) + 1.0).abs() < 1e-12);
    assert!((Absolute.line_search(&y, &f, &b, &w) + 1.0).abs() < 1e-12);
    assert!((Huber::new(1.0).line_search(&y, &f, &b, &w) + 1.0).abs() < 1e-12);
    let yb = [1.0, 1.0, -1.0, 1.0];
    let bb = [-1.0, -0.5, 1.0, 0.5];
    let fb = [0.0; 4];
    let wb = [1.0; 4];
    assert!(Logistic::new(0.0).line_search(&yb, &fb, &bb, &wb) < 0.0);
    assert!(Exponential::new(1.0).line_search(&yb, &fb, &bb, &wb) < 0.0);
    assert!(Hinge.line_search(&yb, &fb, &bb, &wb) < 0.0);
}

#[test]
fn one_d_solutions_are_exact_on_known_answers() {
    // Exponential leaf, closed form: ½ ln(Σ₊ w e^{−F} / Σ₋ w e^{F}).
    let (y, f, w) = ([1.0, 1.0, -1.0], [0.2, -0.5, 0.3], [1.0, 2.0, 1.5]);
    let want = 0.5 * ((1.0 * (-0.2f64).exp() + 2.0 * 0.5f64.exp()) / (1.5 * 0.3f64.exp())).ln();
    assert!((Exponential::new(1.0).leaf_value(&y, &f, &w, &[0, 1, 2]) - want).abs() < 1e-13);
    // Huber constant: y = (0, 0, 10), δ = 1: Σ clip(c − y) = 0 → 2c − 1 = 0 → c = ½.
    assert!((Huber::new(1.0).init(&[0.0, 0.0, 10.0], &[1.0; 3]) - 0.5).abs() < 1e-14);
    // Hinge leaf: both rows past the margin for c ∈ [−1, 2]; the bounded flat argmin resolves to
    // its midpoint. Half-bounded: the point closest to 0.
    assert_eq!(
        Hinge.leaf_value(&[1.0, -1.0], &[2.0, -3.0], &[1.0, 1.0], &[0, 1]),
        0.5
    );
    assert_eq!(
        Hinge.leaf_value(&[1.0, 1.0], &[2.0, 3.0], &[1.0, 1.0], &[0, 1]),
        0.0
    );
    assert_eq!(
        Hinge.leaf_value(&[1.0, 1.0], &[-2.0, 3.0], &[1.0, 1.0], &[0, 1]),
        3.0
    );
    // Logistic line search converges to the root of φ'.
    let l = Logistic::new(0.0);
    let (y, f, b, w) = (
        [1.0, -1.0, 1.0, -1.0],
        [0.1, 0.4, -0.3, 0.0],
        [1.0, 0.5, -0.2, 2.0],
        [1.0, 1.0, 2.0, 1.0],
    );
    let g = l.line_search(&y, &f, &b, &w);
    let slope: f64 = (0..4)
        .map(|i| w[i] * b[i] * l.derivative(y[i], f[i] + g * b[i]))
        .sum();
    assert!(slope.abs() < 1e-10, "φ'(γ*) = {slope}");
}

#[test]
fn extreme_margins_stay_finite() {
    let mut rng = TestRng::new(8);
    let scalar: Vec<Box<dyn ScalarLoss>> = vec![
        Box::new(Logistic::new(0.0)),
        Box::new(Logistic::new(1e-4)),
        Box::new(Exponential::new(1.0)),
        Box::new(Exponential::new(0.5)),
    ];
    for l in &scalar {
        let is_exp = l.name() == "exponential";
        for y in [-1.0, 1.0] {
            for f in [-1e6, -1e3, -40.0, 0.0, 40.0, 1e3, 1e6] {
                let (v, d, s) = (l.value(y, f), l.derivative(y, f), l.second_derivative(y, f));
                for x in [v, d, s] {
                    assert!(!x.is_nan(), "{}: NaN at y={y} f={f}", l.name());
                    // Exponential: e^{−βyf} overflows (honestly) only for very negative margins.
                    if !is_exp || y * f > -700.0 {
                        assert!(x.is_finite(), "{}: {x} at y={y} f={f}", l.name());
                    }
                }
                assert!((0.0..=1.0).contains(&l.response(f)));
                for lambda in [1e-3, 1.0, 1e3] {
                    let u = l.prox(y, f, lambda);
                    assert!(
                        u.is_finite(),
                        "{}: prox({y}, {f}, {lambda}) = {u}",
                        l.name()
                    );
                    // Optimality (z − u)/λ = ℓ'(u), up to the rounding of z − u.
                    let (g, d) = ((f - u) / lambda, l.derivative(y, u));
                    let tol = 1e-9 * (1.0 + d.abs()) + 4.0 * f64::EPSILON * f.abs() / lambda;
                    assert!(
                        (g - d).abs() <= tol,
                        "{}: y={y} z={f} λ={lambda}: u={u} (z−u)/λ={g} ℓ'(u)={d}",
                        l.name()
                    );
                }
            }
        }
        // Line search and leaf value with huge margins of both signs and both classes.
        for _ in 0..20 {
            let n = 8;
            let y: Vec<f64> = (0..n).map(|_| rng.sign()).collect();
            let f: Vec<f64> = (0..n)
                .map(|_| rng.sign() * [1e6, 1e3, 1.0][rng.below(3)])
                .collect();
            let b: Vec<f64> = (0..n).map(|_| rng.uniform_in(-2.0, 2.0)).collect();
            let w = vec![1.0; n];
            assert!(l.line_search(&y, &f, &b, &w).is_finite(), "{}", l.name());
            assert!(
                l.leaf_value(&y, &f, &w, &[0, 1, 2, 3, 4, 5, 6, 7])
                    .is_finite(),
                "{}",
                l.name()
            );
            assert!(l.init(&y, &w).is_finite());
        }
    }
    let sm = Softmax::new(3);
    let mut out = [0.0; 3];
    for f in [[1e6, -1e6, 0.0], [-1e6, 1e6, 1e6], [0.0, 0.0, -1e6]] {
        for y in 0..3 {
            let y = y as f64;
            assert!(sm.row_value(&[y], &f).is_finite());
            sm.row_gradient(&[y], &f, &mut out);
            assert!(out.iter().all(|x| x.is_finite()));
            sm.row_hessian(&[y], &f, &mut out);
            assert!(out.iter().all(|x| x.is_finite()));
            for lambda in [1e-3, 1.0, 1e3] {
                sm.row_prox(&[y], &f, lambda, &mut out);
                assert!(out.iter().all(|x| x.is_finite()), "softmax prox {out:?}");
            }
            sm.row_response(&f, &mut out);
            assert!((out.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
        let fs: Vec<f64> = f.iter().chain(&f).copied().collect();
        let b = [1.0, -2.0, 0.5, -1.0, 0.3, 2.0];
        let ys = [0.0, 2.0];
        assert!(sm.line_search(&ys, &fs, &b, &[1.0, 1.0]).is_finite());
        for class in 0..3 {
            assert!(sm
                .leaf_value(&ys, &fs, &[1.0, 1.0], &[0, 1], class)
                .is_finite());
        }
    }
}

#[test]
fn smoothness_constants_and_flags() {
    assert_eq!(Squared.sigma(), Some(1.0));
    assert_eq!(Squared.mu(), Some(1.0));
    assert_eq!(Huber::new(2.0).sigma(), Some(1.0));
    assert_eq!(Huber::new(2.0).mu(), None);
    assert_eq!(Logistic::new(0.0).sigma(), Some(0.25));
    assert_eq!(Logistic::new(0.0).mu(), None);
    assert_eq!(Logistic::new(1e-4).sigma(), Some(0.25 + 1e-4));
    assert_eq!(Logistic::new(1e-4).mu(), Some(1e-4));
    for l in [
        &Absolute as &dyn ScalarLoss,
        &Pinball::new(0.5),
        &Exponential::new(1.0),
        &Hinge,
    ] {
        assert_eq!((l.sigma(), l.mu()), (None, None), "{}", l.name());
    }
    for c in cases() {
        assert_eq!(c.loss.is_binary(), c.binary, "{}", c.loss.name());
    }
    // σ really bounds ℓ'' (and μ from below) on a grid.
    for c in cases() {
        if let Some(s) = c.loss.sigma() {
            for i in -400..=400 {
                let f = i as f64 / 40.0;
                for y in [-1.0, 1.0, 0.3] {
                    let h = c.loss.second_derivative(y, f);
                    assert!(h <= s + 1e-15 && h >= c.loss.mu().unwrap_or(0.0) - 1e-15);
                }
            }
        }
    }
    assert!((Logistic::new(0.0).response(0.0) - 0.5).abs() < 1e-15);
    assert!((Logistic::new(0.0).response(2.0) - 1.0 / (1.0 + (-2.0f64).exp())).abs() < 1e-15);
}

#[test]
fn batch_helpers_match_scalar_methods() {
    let l = Logistic::new(0.1);
    let (y, f) = ([1.0, -1.0, 1.0], [0.3, -2.0, 5.0]);
    let mut g = [0.0; 3];
    let mut h = [0.0; 3];
    l.derivatives_into(&y, &f, &mut g);
    l.second_derivatives_into(&y, &f, &mut h);
    for i in 0..3 {
        assert_eq!(g[i], l.derivative(y[i], f[i]));
        assert_eq!(h[i], l.second_derivative(y[i], f[i]));
    }
}

/// The batch prox (the logistic loss's runs its rows' Newton iterations in lock step) gives each
/// row the per-row prox bit for bit: rows of several blocks, λσ on both sides of 1, and scores
/// from 0 to ±1e6 mixed, so that rows converging at different iterations share a block.
#[test]
fn prox_into_equals_prox_bit_for_bit() {
    let mut rng = TestRng::new(17);
    for case in cases() {
        for lambda in [0.05, 1.0, 4.0, 30.0] {
            let n = 300;
            let y: Vec<f64> = (0..n).map(|_| label(&mut rng, case.binary)).collect();
            let z: Vec<f64> = (0..n)
                .map(|_| match rng.below(4) {
                    0 => 0.0,
                    1 => rng.uniform_in(-1.0, 1.0),
                    2 => rng.uniform_in(-40.0, 40.0),
                    _ => rng.sign() * 1e6,
                })
                .collect();
            let mut batch = vec![f64::NAN; n];
            case.loss.prox_into(&y, &z, lambda, &mut batch);
            for i in 0..n {
                assert_eq!(
                    batch[i].to_bits(),
                    case.loss.prox(y[i], z[i], lambda).to_bits(),
                    "{} λ={lambda} y={} z={}",
                    case.loss.name(),
                    y[i],
                    z[i]
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Multiclass losses

fn multiclass(k: usize) -> Vec<Box<dyn Loss>> {
    vec![Box::new(Softmax::new(k)), Box::new(MulticlassHinge::new(k))]
}

/// True when f is within `eps` of a kink of the multiclass hinge for label y.
fn hinge_near_kink(y: usize, f: &[f64], eps: f64) -> bool {
    let mut others: Vec<f64> = f
        .iter()
        .enumerate()
        .filter(|&(j, _)| j != y)
        .map(|(_, &x)| x)
        .collect();
    others.sort_by(|a, b| b.total_cmp(a));
    (1.0 + others[0] - f[y]).abs() < eps || (others.len() > 1 && others[0] - others[1] < eps)
}

#[test]
fn multiclass_gradient_and_hessian_match_finite_differences() {
    let mut rng = TestRng::new(9);
    let h = 1e-6;
    for k in [2, 3, 5] {
        for l in multiclass(k) {
            let hinge = l.name() == "multiclass_hinge";
            let mut checked = 0;
            while checked < 100 {
                let y = rng.below(k);
                let f: Vec<f64> = (0..k).map(|_| rng.uniform_in(-3.0, 3.0)).collect();
                if hinge && hinge_near_kink(y, &f, 1e-3) {
                    continue;
                }
                checked += 1;
                let (mut g, mut hd) = (vec![0.0; k], vec![0.0; k]);
                l.row_gradient(&[y as f64], &f, &mut g);
                l.row_hessian(&[y as f64], &f, &mut hd);
                for j in 0..k {
                    let (mut fp, mut fm) = (f.clone(), f.clone());
                    fp[j] += h;
                    fm[j] -= h;
                    let fd =
                        (l.row_value(&[y as f64], &fp) - l.row_value(&[y as f64], &fm)) / (2.0 * h);
                    assert!(
                        (g[j] - fd).abs() < 1e-6,
                        "{} K={k}: ∂ℓ/∂f_{j} = {} vs FD {fd}",
                        l.name(),
                        g[j]
                    );
                    let (mut gp, mut gm) = (vec![0.0; k], vec![0.0; k]);
                    l.row_gradient(&[y as f64], &fp, &mut gp);
                    l.row_gradient(&[y as f64], &fm, &mut gm);
                    let fd2 = (gp[j] - gm[j]) / (2.0 * h);
                    assert!(
                        (hd[j] - fd2).abs() < 1e-5,
                        "{} K={k}: ∂²ℓ/∂f_{j}² = {} vs FD {fd2}",
                        l.name(),
                        hd[j]
                    );
                }
            }
        }
    }
}

fn check_multiclass_prox(l: &dyn Loss, y: usize, z: &[f64], lambda: f64) {
    let k = z.len();
    let mut u = vec![0.0; k];
    l.row_prox(&[y as f64], z, lambda, &mut u);
    assert!(u.iter().all(|x| x.is_finite()), "{}: prox {u:?}", l.name());
    let g: Vec<f64> = (0..k).map(|j| (z[j] - u[j]) / lambda).collect();
    if l.name() == "softmax" {
        let mut p = vec![0.0; k];
        l.row_gradient(&[y as f64], &u, &mut p);
        for j in 0..k {
            assert!(
                (g[j] - p[j]).abs() < 1e-9,
                "softmax prox: (z−u)/λ = {g:?}, ∇ℓ(u) = {p:?}"
            );
        }
    } else {
        // ∂ℓ(u) = {α − e_y : α in the simplex, supported on arg max_j (u_j + Δ_j)}.
        let alpha: Vec<f64> = (0..k)
            .map(|j| g[j] + if j == y { 1.0 } else { 0.0 })
            .collect();
        let top = (0..k)
            .map(|j| u[j] + if j == y { 0.0 } else { 1.0 })
            .fold(f64::NEG_INFINITY, f64::max);
        assert!(
            (alpha.iter().sum::<f64>() - 1.0).abs() < 1e-9,
            "α = {alpha:?}"
        );
        for j in 0..k {
            assert!(alpha[j] >= -1e-9, "α = {alpha:?}");
            let active = u[j] + if j == y { 0.0 } else { 1.0 } >= top - 1e-9 * (1.0 + top.abs());
            assert!(
                alpha[j] <= 1e-9 || active,
                "α = {alpha:?} puts mass on inactive class {j}, u = {u:?}"
            );
        }
    }
    // No coordinate move improves the prox objective.
    let obj = |v: &[f64]| {
        l.row_value(&[y as f64], v)
            + v.iter().zip(z).map(|(a, b)| (a - b) * (a - b)).sum::<f64>() / (2.0 * lambda)
    };
    let base = obj(&u);
    for j in 0..k {
        for e in [1e-4, -1e-4] {
            let mut v = u.clone();
            v[j] += e;
            assert!(
                base <= obj(&v) + 1e-12 * (1.0 + base.abs()),
                "{}: prox not a minimiser",
                l.name()
            );
        }
    }
}

#[test]
fn multiclass_prox_satisfies_optimality() {
    let mut rng = TestRng::new(10);
    for k in [2, 3, 4, 7] {
        for l in multiclass(k) {
            for t in 0..300 {
                let y = rng.below(k);
                let mut z: Vec<f64> = (0..k).map(|_| rng.uniform_in(-5.0, 5.0)).collect();
                if t % 3 == 0 {
                    // Near the hinge's kinks: ties among scores and margins of exactly 1.
                    let j = (y + 1 + rng.below(k - 1)) % k;
                    z[j] = z[y] - 1.0 + [0.0, 1e-9, -1e-9, 0.3][rng.below(4)];
                    if k > 2 {
                        let m = (j + 1..j + k).map(|x| x % k).find(|&x| x != y).unwrap();
                        z[m] = z[j];
                    }
                }
                let lambda = [0.01, 0.3, 1.0, 4.0, 50.0][rng.below(5)];
                check_multiclass_prox(l.as_ref(), y, &z, lambda);
            }
        }
    }
}

fn mc_data(rng: &mut TestRng, n: usize, k: usize) -> Data {
    let y = (0..n).map(|_| rng.below(k) as f64).collect();
    let f = (0..n * k).map(|_| rng.uniform_in(-2.0, 2.0)).collect();
    let b = (0..n * k)
        .map(|_| {
            if rng.chance(0.2) {
                0.0
            } else {
                rng.uniform_in(-1.5, 1.5)
            }
        })
        .collect();
    let w = (0..n)
        .map(|_| {
            if rng.chance(0.1) {
                0.0
            } else {
                rng.uniform_in(0.2, 2.0)
            }
        })
        .collect();
    Data { y, f, b, w }
}

#[test]
fn multiclass_init_is_the_constant_minimiser() {
    let mut rng = TestRng::new(11);
    let k = 3;
    for l in multiclass(k) {
        for trial in 0..12 {
            let n = 1 + rng.below(8);
            let mut d = mc_data(&mut rng, n, k);
            if trial % 4 == 0 {
                d.y.iter_mut()
                    .for_each(|y| *y = if *y == 2.0 { 1.0 } else { *y }); // class 2 absent
            }
            let c = l.init(&d.y, &d.w);
            assert_eq!(c.len(), k);
            assert!(c.iter().all(|x| x.is_finite()), "{}: {c:?}", l.name());
            let phi = |c: &[f64]| {
                (0..n)
                    .map(|i| d.w[i] * l.row_value(&[d.y[i]], c))
                    .sum::<f64>()
            };
            // Shift invariance: search c = (0, c1, c2) on a grid, then refine.
            let mut best = (f64::INFINITY, 0.0, 0.0);
            let scan = |best: &mut (f64, f64, f64), lo1: f64, lo2: f64, step: f64, m: usize| {
                for a in 0..=m {
                    for b in 0..=m {
                        let (c1, c2) = (lo1 + step * a as f64, lo2 + step * b as f64);
                        let v = phi(&[0.0, c1, c2]);
                        if v < best.0 {
                            *best = (v, c1, c2);
                        }
                    }
                }
            };
            scan(&mut best, -6.0, -6.0, 0.1, 120);
            let (_, c1, c2) = best;
            scan(&mut best, c1 - 0.1, c2 - 0.1, 0.005, 40);
            assert_no_worse(l.name(), "init", phi(&c), best.0);
        }
    }
    // Multiclass hinge: the heaviest class wins only with more than half the weight.
    let h = MulticlassHinge::new(3);
    let c = h.init(&[0.0, 0.0, 1.0], &[1.0, 1.0, 1.0]);
    assert!((c[0] - c[1] - 1.0).abs() < 1e-15 && (c[1] - c[2]).abs() < 1e-15);
    assert_eq!(h.init(&[0.0, 1.0, 2.0], &[1.0, 1.0, 1.0]), vec![0.0; 3]);
    // Softmax: centred log shares.
    let c = Softmax::new(3).init(&[0.0, 1.0, 1.0, 2.0], &[1.0; 4]);
    assert!((c[1] - c[0] - 2f64.ln()).abs() < 1e-14 && c.iter().sum::<f64>().abs() < 1e-14);
}

#[test]
fn multiclass_leaf_value_and_line_search_match_brute_force() {
    let mut rng = TestRng::new(12);
    for k in [2, 3, 4] {
        for l in multiclass(k) {
            for _ in 0..30 {
                let n = 10;
                let d = mc_data(&mut rng, n, k);
                let value = |fi: &dyn Fn(usize, usize) -> f64, i: usize| {
                    let row: Vec<f64> = (0..k).map(|j| fi(i, j)).collect();
                    d.w[i] * l.row_value(&[d.y[i]], &row)
                };
                let rows: Vec<u32> = (0..n as u32).filter(|_| rng.chance(0.7)).collect();
                let class = rng.below(k);
                let c = l.leaf_value(&d.y, &d.f, &d.w, &rows, class);
                assert!(c.is_finite(), "{}: leaf {c}", l.name());
                let phi_leaf = |c: f64| {
                    let fi = |i: usize, j: usize| d.f[i * k + j] + if j == class { c } else { 0.0 };
                    rows.iter().map(|&i| value(&fi, i as usize)).sum::<f64>()
                };
                let (_, best) = brute_min(phi_leaf, -15.0, 15.0, 1500);
                assert_no_worse(l.name(), "leaf_value", phi_leaf(c), best);

                let g = l.line_search(&d.y, &d.f, &d.b, &d.w);
                assert!(g.is_finite(), "{}: step {g}", l.name());
                let phi_line = |g: f64| {
                    let fi = |i: usize, j: usize| d.f[i * k + j] + g * d.b[i * k + j];
                    (0..n).map(|i| value(&fi, i)).sum::<f64>()
                };
                let (_, best) = brute_min(phi_line, -15.0, 15.0, 1500);
                assert_no_worse(l.name(), "line_search", phi_line(g), best);
            }
            let d = mc_data(&mut rng, 4, k);
            assert_eq!(l.line_search(&d.y, &d.f, &vec![0.0; 4 * k], &d.w), 0.0);
            // A direction adding the same amount to every class changes nothing.
            assert_eq!(l.line_search(&d.y, &d.f, &vec![0.7; 4 * k], &d.w), 0.0);
            assert_eq!(l.leaf_value(&d.y, &d.f, &d.w, &[], 0), 0.0);
            assert_eq!(l.leaf_value(&d.y, &d.f, &[0.0; 4], &[0, 1], 0), 0.0);
        }
    }
}

#[test]
fn multiclass_response_and_mean_value() {
    for l in multiclass(3) {
        let f = [0.5, -1.0, 2.0];
        let mut p = [0.0; 3];
        l.row_response(&f, &mut p);
        let z: f64 = f.iter().map(|x: &f64| x.exp()).sum();
        for j in 0..3 {
            assert!((p[j] - f[j].exp() / z).abs() < 1e-15);
        }
        let (y, fs, w) = ([0.0, 2.0], [0.5, -1.0, 2.0, 0.0, 1.0, 0.0], [1.0, 3.0]);
        let want = (l.row_value(&[0.0], &fs[..3]) + 3.0 * l.row_value(&[2.0], &fs[3..])) / 4.0;
        assert!((l.sum_values(&y, &fs, &w) / 4.0 - want).abs() < 1e-15);
    }
    // Known values.
    assert!((Softmax::new(2).row_value(&[0.0], &[0.0, 0.0]) - 2f64.ln()).abs() < 1e-15);
    assert_eq!(
        MulticlassHinge::new(3).row_value(&[1.0], &[0.5, 1.0, -2.0]),
        0.5
    );
    assert_eq!(
        MulticlassHinge::new(3).row_value(&[1.0], &[0.0, 1.0, -2.0]),
        0.0
    );
    assert_eq!(Softmax::new(3).sigma(), Some(0.5));
    assert_eq!(MulticlassHinge::new(3).sigma(), None);
}

// ---------------------------------------------------------------------------------------------
// LossSpec

#[test]
fn loss_spec_parses_every_name() {
    let expect = [
        ("squared", LossSpec::Squared),
        ("absolute", LossSpec::Absolute),
        ("pinball", LossSpec::Pinball { tau: 0.5 }),
        ("pinball(0.9)", LossSpec::Pinball { tau: 0.9 }),
        ("huber", LossSpec::Huber { delta: 1.0 }),
        ("huber(2)", LossSpec::Huber { delta: 2.0 }),
        ("logistic", LossSpec::Logistic { ridge: 0.0 }),
        ("logistic(1e-4)", LossSpec::Logistic { ridge: 1e-4 }),
        ("exponential", LossSpec::Exponential { beta: 1.0 }),
        ("exponential(0.5)", LossSpec::Exponential { beta: 0.5 }),
        ("hinge", LossSpec::Hinge),
        ("softmax", LossSpec::Softmax),
        ("multiclass_hinge", LossSpec::MulticlassHinge),
        (" Pinball( 0.25 ) ", LossSpec::Pinball { tau: 0.25 }),
        ("huber(delta=2)", LossSpec::Huber { delta: 2.0 }),
        ("pinball(tau = 0.9)", LossSpec::Pinball { tau: 0.9 }),
        ("poisson", LossSpec::Poisson),
        ("gamma", LossSpec::Gamma),
        ("tweedie", LossSpec::Tweedie { p: 1.5 }),
        ("tweedie(p=1.2)", LossSpec::Tweedie { p: 1.2 }),
        ("cox", LossSpec::Cox { ties: Default::default() }),
        ("multi-squared", LossSpec::MultiSquared),
        (
            "aft(sigma=2)",
            LossSpec::Aft {
                distribution: optboost::loss::AftDistribution::Normal,
                sigma: 2.0,
            },
        ),
    ];
    for (text, spec) in &expect {
        assert_eq!(&text.parse::<LossSpec>().unwrap(), spec, "{text}");
    }
    for name in LossSpec::NAMES {
        let spec: LossSpec = name.parse().unwrap();
        assert_eq!(spec.name(), *name);
        let built = spec.build(3).unwrap();
        assert_eq!(built.name(), *name);
        // A multiclass or multi-output loss has one output per class or target (3 here); a
        // quantiles loss one per level, a distributional loss one per parameter, whatever the
        // count it is built with.
        let outputs = match spec.levels() {
            Some(levels) => levels.len(),
            None if spec.is_multiclass() || spec.is_multi_output() => 3,
            None if spec.traits().task == optboost::loss::Task::Distribution => 2,
            None => 1,
        };
        assert_eq!(built.n_outputs(), outputs, "{name}");
        assert_eq!(built.is_binary(), spec.is_binary(), "{name}");
    }
    assert_eq!(LossSpec::NAMES.len(), 24);
    assert_eq!("custom".parse::<LossSpec>().unwrap(), LossSpec::Custom);
    assert_eq!(LossSpec::Custom.name(), "custom");
}

#[test]
fn loss_spec_display_round_trips() {
    let specs = [
        LossSpec::Squared,
        LossSpec::Absolute,
        LossSpec::Pinball { tau: 0.1 + 0.2 },
        LossSpec::Huber { delta: 1.0 / 3.0 },
        LossSpec::Logistic { ridge: 0.0 },
        LossSpec::Logistic { ridge: 1e-4 },
        LossSpec::Exponential { beta: 2.5 },
        LossSpec::Hinge,
        LossSpec::Softmax,
        LossSpec::MulticlassHinge,
        LossSpec::Poisson,
        LossSpec::Gamma,
        LossSpec::Tweedie { p: 1.0 / 3.0 + 1.0 },
        LossSpec::Cox {
            ties: optboost::loss::Ties::Efron,
        },
        LossSpec::Aft {
            distribution: optboost::loss::AftDistribution::Extreme,
            sigma: 0.1 + 0.2,
        },
    ];
    for spec in &specs {
        let text = spec.to_string();
        assert_eq!(&text.parse::<LossSpec>().unwrap(), spec, "{text}");
        let json = serde_json::to_string(spec).unwrap();
        assert_eq!(
            &serde_json::from_str::<LossSpec>(&json).unwrap(),
            spec,
            "{json}"
        );
    }
    assert_eq!(
        serde_json::to_string(&LossSpec::Pinball { tau: 0.9 }).unwrap(),
        r#"{"name":"pinball","tau":0.9}"#
    );
    assert_eq!(
        serde_json::to_string(&LossSpec::MulticlassHinge).unwrap(),
        r#"{"name":"multiclass_hinge"}"#
    );
    assert_eq!(
        serde_json::to_string(&LossSpec::Tweedie { p: 1.5 }).unwrap(),
        r#"{"name":"tweedie","p":1.5}"#
    );
}

fn param_name(e: &Error) -> &str {
    match e {
        Error::Param { name, .. } => name,
        other => panic!("expected a parameter error, got {other:?}"),
    }
}

#[test]
fn loss_spec_rejects_bad_parameters() {
    for (text, param) in [
        ("pinball(0)", "tau"),
        ("pinball(1)", "tau"),
        ("pinball(1.5)", "tau"),
        ("pinball(nan)", "tau"),
        ("pinball(abc)", "tau"),
        ("huber(0)", "delta"),
        ("huber(-1)", "delta"),
        ("huber(inf)", "delta"),
        ("logistic(-0.1)", "ridge"),
        ("logistic(inf)", "ridge"),
        ("exponential(0)", "beta"),
        ("exponential(-2)", "beta"),
        ("foo", "loss"),
        ("squared(2)", "loss"),
        ("pinball(0.5", "loss"),
        ("", "loss"),
    ] {
        let err = text.parse::<LossSpec>().unwrap_err();
        assert_eq!(param_name(&err), param, "{text}: {err}");
        assert!(err.to_string().contains(param), "{err}");
    }
    let err = "foo".parse::<LossSpec>().unwrap_err().to_string();
    for name in LossSpec::NAMES {
        assert!(err.contains(name), "message should list `{name}`: {err}");
    }
    for form in [
        "pinball(tau)",
        "huber(delta)",
        "logistic(ridge)",
        "tweedie(p)",
    ] {
        assert!(err.contains(form), "message should list `{form}`: {err}");
    }
    assert!("custom(1)".parse::<LossSpec>().is_err());
    for (spec, param) in [
        (LossSpec::Pinball { tau: f64::NAN }, "tau"),
        (LossSpec::Huber { delta: 0.0 }, "delta"),
        (LossSpec::Logistic { ridge: f64::NAN }, "ridge"),
        (
            LossSpec::Exponential {
                beta: f64::INFINITY,
            },
            "beta",
        ),
    ] {
        assert_eq!(param_name(&spec.validate().unwrap_err()), param);
        assert_eq!(param_name(&spec.build(2).unwrap_err()), param);
    }
    let err = LossSpec::Softmax.build(1).unwrap_err();
    assert_eq!(param_name(&err), "loss");
    assert!(err.to_string().contains("at least 2 classes"));
    assert!(LossSpec::MulticlassHinge.build(0).is_err());
    assert!(LossSpec::Squared.build(0).is_ok());
}

#[test]
fn curvature_can_vanish_says_whether_the_second_derivative_is_ever_zero_on_a_slope() {
    // The flag decides the Newton steps (docs/algorithms.md §10): a loss that should set it and
    // does not gets unbounded Newton leaves; one that sets it needlessly loses gbm's Newton trees.
    let mut rng = TestRng::new(17);
    for case in cases() {
        let loss = &case.loss;
        let vanishes = (0..2000).any(|_| {
            let (y, f) = (label(&mut rng, case.binary), rng.uniform_in(-6.0, 6.0));
            loss.second_derivative(y, f) == 0.0 && loss.derivative(y, f) != 0.0
        });
        assert_eq!(loss.curvature_can_vanish(), vanishes, "{}", loss.name());
    }
}
