//! Huber loss with threshold δ > 0: ℓ(y, f) = ½(y − f)² if |y − f| ≤ δ, δ|y − f| − δ²/2 otherwise.
//!
//! * ∂ℓ/∂f = clip(f − y, −δ, δ); ℓ'' = 1 if |y − f| ≤ δ, else 0. σ = 1 (Randomized Gradient
//!   Boosting Machine, §4), μ = None.
//! * prox_{λℓ}(z) = y + (z − y)/(1 + λ) if |z − y| ≤ δ(1 + λ), z − λδ·sign(z − y) otherwise
//!   (from (z − u)/λ = clip(u − y, −δ, δ)).
//! * Every 1-D minimisation (constant, leaf, tree line search) is exact: the derivative of
//!   γ ↦ Σ w ℓ(y, f + γ b) is Σ clamp(w b²(γ − t_i), −w|b|δ, w|b|δ) with t_i = (y_i − f_i)/b_i,
//!   a continuous increasing piecewise-linear function with kinks at t_i ± δ/|b_i|. A sweep over
//!   the sorted kinks near its zero (bracketed by a few Newton steps, then halved until at most
//!   `FEW_EVENTS` kinks are left) finds the piece holding it, which is then solved in closed form
//!   from the rows that are inside their quadratic zone (O(n) passes; O(n log n) at worst, when
//!   tied kinks stop the halvings). When the zero set is an
//!   interval (every row saturated, balanced), its midpoint is returned. Negative steps are
//!   allowed.

use super::{ScalarLoss, Terms};

/// The Huber loss, as `LossSpec::Huber` builds it.
#[derive(Debug, Clone, Copy)]
pub struct Huber {
    /// δ > 0: quadratic within δ of the target, linear beyond.
    pub delta: f64,
}

/// The rows of a 1-D problem, by column: row i adds a_i·clamp(γ − t_i, −h_i, h_i) to the
/// derivative D(γ), quadratic on t_i ± h_i. Columns rather than one struct per row: the passes
/// below read t and a, and the half-widths only when they differ from row to row.
struct Ramps<H> {
    t: Vec<f64>,
    a: Vec<f64>,
    half: H,
}

/// The half-widths of `Ramps`: δ for every row of a leaf or constant problem (b = 1), δ/|b_i|
/// along a tree's predictions.
trait Halves {
    fn at(&self, i: usize) -> f64;
}

struct Same(f64);

impl Halves for Same {
    #[inline(always)]
    fn at(&self, _: usize) -> f64 {
        self.0
    }
}

impl Halves for Vec<f64> {
    #[inline(always)]
    fn at(&self, i: usize) -> f64 {
        self[i]
    }
}

impl<H: Halves> Ramps<H> {
    /// Every row as (t, a, h).
    fn rows(&self) -> impl Iterator<Item = (f64, f64, f64)> + '_ {
        (self.t.iter().zip(&self.a).enumerate()).map(|(i, (&t, &a))| (t, a, self.half.at(i)))
    }

    /// Σ over the rows of `term(t, a, h)`, K sums at once, in `LANES` interleaved lanes added in
    /// a fixed order at the end: with no sum carried from row to row, the passes run several
    /// rows per instruction, with the same sums on every CPU (one dependency chain per sum made
    /// every pass wait on its additions).
    #[inline(always)]
    fn sum_rows<const K: usize>(&self, term: impl Fn(f64, f64, f64) -> [f64; K]) -> [f64; K] {
        let mut sums = [[0.0; LANES]; K];
        self.each_lane(|l, t, a, h| {
            let terms = term(t, a, h);
            (0..K).for_each(|k| sums[k][l] += terms[k]);
        });
        sums.map(|lane| (lane[0] + lane[1]) + (lane[2] + lane[3]))
    }

    /// Calls `visit(l, t, a, h)` for every row, with l its lane (row index mod `LANES`), in
    /// groups of `LANES` rows that the compiler can run as one.
    #[inline(always)]
    fn each_lane(&self, mut visit: impl FnMut(usize, f64, f64, f64)) {
        let n = self.t.len();
        let (t, a) = (&self.t[..n], &self.a[..n]);
        let whole = n - n % LANES;
        let rows = t.chunks_exact(LANES).zip(a.chunks_exact(LANES));
        for (start, (t, a)) in (0..whole).step_by(LANES).zip(rows) {
            for l in 0..LANES {
                visit(l, t[l], a[l], self.half.at(start + l));
            }
        }
        for (l, i) in (whole..n).enumerate() {
            visit(l, t[i], a[i], self.half.at(i));
        }
    }

    /// The zero of D: the midpoint of the zero set when it is an interval.
    fn root(&mut self, least_squares: f64) -> f64 {
        let left = self.first_root(least_squares);
        // Where some row is unsaturated just right of the smallest zero, D rises there and the
        // zero is unique; otherwise the zero set may be an interval, whose midpoint is taken.
        if self.derivative_and_slope(left).1 > 0.0 {
            return left;
        }
        self.t.iter_mut().for_each(|t| *t = -*t);
        let right = -self.first_root(-least_squares);
        if right > left {
            left + 0.5 * (right - left)
        } else {
            left
        }
    }

    /// Smallest zero of D, increasing and piecewise linear with kinks (events) at t ± h: a
    /// sweep over the sorted events finds the piece where D turns non-negative, solved there in
    /// closed form (`solve_piece`). Only the events near the zero are sorted: a few Newton steps
    /// from the least-squares point `start` = Σ a t / Σ a (the zero when no row saturates)
    /// bracket it first, and the sweep starts at the bracket's left end, with D there kept from
    /// those steps (sorting all 2n events made the Huber leaf search cost more than the tree).
    fn first_root(&self, start: f64) -> f64 {
        let mut bracket = self.newton_bracket(start);
        // The events in (lo, hi], the first one above hi, and the last one at or below lo (the
        // piece's left end if the zero lies before the first event in the bracket). Near the
        // zero the bracket is usually tight and holds few events: they are counted in lanes,
        // then collected into their slots.
        let mut around = self.events_around(bracket.lo, bracket.hi);
        // Newton stalls where D is flat or bends sharply (most rows saturated), leaving up to
        // every event in the bracket: then halve the span of the events inside, a pass over the
        // rows and a count per halving, until few are left to sort.
        for _ in 0..MAX_HALVINGS {
            if around.inside <= FEW_EVENTS {
                break;
            }
            let probe = around.first_inside + 0.5 * (around.last_inside - around.first_inside);
            if !(bracket.lo < probe && probe < bracket.hi) {
                break;
            }
            bracket.narrow(probe, self.derivative_and_slope(probe));
            around = self.events_around(bracket.lo, bracket.hi);
        }
        let Bracket { lo, hi, at_lo } = bracket;
        let EventsAround {
            below,
            above,
            inside,
            ..
        } = around;
        let mut events: Vec<(f64, f64)> = vec![(0.0, 0.0); inside];
        let mut k = 0;
        if inside > 0 {
            for (t, a, h) in self.rows() {
                for (x, jump) in [(t - h, a), (t + h, -a)] {
                    if lo < x && x <= hi {
                        events[k] = (x, jump);
                        k += 1;
                    }
                }
            }
        }
        if above < f64::INFINITY {
            // Its jump is not needed: the sweep stops there at the latest (D(hi) ≥ 0).
            events.push((above, 0.0));
        }
        events.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        let (mut v, mut slope) = at_lo;
        let mut x_prev = lo;
        let mut prev_event = below;
        for &(x, jump) in &events {
            let v_e = if x_prev == f64::NEG_INFINITY {
                v
            } else {
                v + slope * (x - x_prev)
            };
            if v_e >= 0.0 {
                return if prev_event == f64::NEG_INFINITY {
                    x
                } else {
                    self.solve_piece(prev_event, x)
                };
            }
            slope += jump;
            v = v_e;
            x_prev = x;
            prev_event = x;
        }
        prev_event
    }

    /// The events around the bracket (lo, hi], in lanes.
    fn events_around(&self, lo: f64, hi: f64) -> EventsAround {
        let mut below = [f64::NEG_INFINITY; LANES];
        let mut above = [f64::INFINITY; LANES];
        let mut first_inside = [f64::INFINITY; LANES];
        let mut last_inside = [f64::NEG_INFINITY; LANES];
        let mut inside = [0.0; LANES];
        self.each_lane(|l, t, _, h| {
            for x in [t - h, t + h] {
                let is_inside = lo < x && x <= hi;
                below[l] = below[l].max(if x <= lo { x } else { f64::NEG_INFINITY });
                above[l] = above[l].min(if x > hi { x } else { f64::INFINITY });
                first_inside[l] = first_inside[l].min(if is_inside { x } else { f64::INFINITY });
                last_inside[l] = last_inside[l].max(if is_inside { x } else { f64::NEG_INFINITY });
                inside[l] += if is_inside { 1.0 } else { 0.0 };
            }
        });
        let max = |lanes: [f64; LANES]| lanes.into_iter().fold(f64::NEG_INFINITY, f64::max);
        let min = |lanes: [f64; LANES]| lanes.into_iter().fold(f64::INFINITY, f64::min);
        EventsAround {
            below: max(below),
            above: min(above),
            first_inside: min(first_inside),
            last_inside: max(last_inside),
            inside: inside.iter().sum::<f64>() as usize,
        }
    }

    /// The bracket of at most a few Newton steps on D started at the least-squares point `x`.
    fn newton_bracket(&self, mut x: f64) -> Bracket {
        let mut bracket = Bracket {
            lo: f64::NEG_INFINITY,
            hi: f64::INFINITY,
            // D tends to −Σ a h, with slope 0, at −∞.
            at_lo: (-self.sum_rows(|_, a, h| [a * h])[0], 0.0),
        };
        for _ in 0..NEWTON_STEPS {
            if !x.is_finite() {
                break;
            }
            let (v, slope) = self.derivative_and_slope(x);
            bracket.narrow(x, (v, slope));
            let next = x - v / slope;
            if v == 0.0 || !(bracket.lo < next && next < bracket.hi) {
                break;
            }
            x = next;
        }
        bracket
    }

    /// D(x), and the slope of D just right of x (Σ a over the rows unsaturated there).
    /// Branch-free (adding 0 leaves a sum as it is): whether a row saturates is a coin flip near
    /// the zero, and mispredicted branches cost more than the arithmetic of these passes.
    fn derivative_and_slope(&self, x: f64) -> (f64, f64) {
        let [v, slope] = self.sum_rows(|t, a, h| {
            let unsaturated = (t - h <= x) & (x < t + h);
            [
                a * (x - t).max(-h).min(h),
                if unsaturated { a } else { 0.0 },
            ]
        });
        (v, slope)
    }

    /// The zero on the piece [lo, hi], where the set of unsaturated rows is fixed. Branch-free,
    /// as `derivative_and_slope`.
    fn solve_piece(&self, lo: f64, hi: f64) -> f64 {
        let mid = lo + 0.5 * (hi - lo);
        let [a_sum, at, above_cap, below_cap] = self.sum_rows(|t, a, h| {
            let unsaturated = (t - h < mid) & (mid < t + h);
            [
                if unsaturated { a } else { 0.0 },
                if unsaturated { a * t } else { 0.0 },
                if mid >= t + h { a * h } else { 0.0 },
                if mid <= t - h { a * h } else { 0.0 },
            ]
        });
        let c = above_cap - below_cap;
        if a_sum > 0.0 {
            ((at - c) / a_sum).clamp(lo, hi)
        } else {
            lo
        }
    }
}

/// The events (kinks t ± h) around a bracket (lo, hi]: the last one at or below lo and the
/// first one above hi (−∞ and +∞ if none), and the first, last and number of those inside.
struct EventsAround {
    below: f64,
    above: f64,
    first_inside: f64,
    last_inside: f64,
    inside: usize,
}

/// Events left in the bracket that the sweep sorts rather than halving the bracket further.
const FEW_EVENTS: usize = 64;

/// At most this many halvings (a stall on tied events cannot shrink the count).
const MAX_HALVINGS: usize = 40;

/// lo < hi with D(lo) < 0 ≤ D(hi) (either end possibly infinite), and (D, slope) at lo.
struct Bracket {
    lo: f64,
    hi: f64,
    at_lo: (f64, f64),
}

impl Bracket {
    /// Moves the end that x replaces, given (D, slope) at x.
    fn narrow(&mut self, x: f64, (v, slope): (f64, f64)) {
        if v >= 0.0 {
            self.hi = x;
        } else {
            self.lo = x;
            self.at_lo = (v, slope);
        }
    }
}

/// Interleaved lanes of `Ramps::each_lane`: independent sums, which the compiler runs two or
/// four to an instruction.
const LANES: usize = 4;

/// Newton steps of `newton_bracket`: on a piecewise-linear D a step from the right piece lands
/// on the zero, so a few steps leave few events between the bracket's ends.
const NEWTON_STEPS: usize = 4;

impl Huber {
    /// The loss with threshold `delta`.
    pub fn new(delta: f64) -> Self {
        Huber { delta }
    }
}

impl ScalarLoss for Huber {
    fn name(&self) -> &'static str {
        "huber"
    }
    fn value(&self, y: f64, f: f64) -> f64 {
        let r = (y - f).abs();
        if r <= self.delta {
            0.5 * r * r
        } else {
            self.delta * (r - 0.5 * self.delta)
        }
    }
    fn derivative(&self, y: f64, f: f64) -> f64 {
        (f - y).clamp(-self.delta, self.delta)
    }
    fn second_derivative(&self, y: f64, f: f64) -> f64 {
        if (y - f).abs() <= self.delta {
            1.0
        } else {
            0.0
        }
    }
    fn prox(&self, y: f64, z: f64, lambda: f64) -> f64 {
        let r = z - y;
        if r.abs() <= self.delta * (1.0 + lambda) {
            y + r / (1.0 + lambda)
        } else {
            z - lambda * self.delta * r.signum()
        }
    }
    fn minimize(&self, terms: Terms<'_>) -> f64 {
        let n = terms.iter().len();
        let (mut t, mut a, mut half) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::new());
        let (mut a_sum, mut at) = (0.0, 0.0);
        let along = matches!(terms, Terms::Along { .. });
        terms.for_each(|y, f, b, w| {
            if w > 0.0 && b != 0.0 {
                let (ti, ai) = ((y - f) / b, w * b * b);
                a_sum += ai;
                at += ai * ti;
                t.push(ti);
                a.push(ai);
                if along {
                    half.push(self.delta / b.abs());
                }
            }
        });
        if t.is_empty() {
            return 0.0;
        }
        let least_squares = at / a_sum;
        if along {
            Ramps { t, a, half }.root(least_squares)
        } else {
            Ramps {
                t,
                a,
                half: Same(self.delta),
            }
            .root(least_squares)
        }
    }
    fn sigma(&self) -> Option<f64> {
        Some(1.0)
    }
    fn mu(&self) -> Option<f64> {
        None
    }
    fn curvature_can_vanish(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest zero by the bracketed sweep, from the least-squares point.
    fn root(ramps: &Ramps<Vec<f64>>) -> f64 {
        let (a, at) = ramps
            .rows()
            .fold((0.0, 0.0), |(a, at), (t, ai, _)| (a + ai, at + ai * t));
        ramps.first_root(at / a)
    }

    /// The former sweep over all sorted events, as the reference for the bracketed one.
    fn full_sweep_root(ramps: &Ramps<Vec<f64>>) -> f64 {
        let mut events: Vec<(f64, f64)> = Vec::with_capacity(2 * ramps.t.len());
        for (t, a, h) in ramps.rows() {
            events.push((t - h, a));
            events.push((t + h, -a));
        }
        events.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        let mut v: f64 = -ramps.rows().map(|(_, a, h)| a * h).sum::<f64>();
        let (mut slope, mut x_prev) = (0.0, events[0].0);
        for &(x, ds) in &events {
            let v_e = v + slope * (x - x_prev);
            if v_e >= 0.0 {
                return ramps.solve_piece(x_prev, x);
            }
            slope += ds;
            v = v_e;
            x_prev = x;
        }
        x_prev
    }

    #[test]
    fn a_flat_zero_set_gives_its_midpoint_and_a_rising_one_its_root() {
        let huber = Huber::new(1.0);
        let minimize = |y: &[f64], w: &[f64]| huber.minimize(Terms::Constant { y, w });
        // Both rows saturated, in balance, from −9 to 19.
        assert_eq!(minimize(&[-10.0, 20.0], &[1.0, 1.0]), 5.0);
        // The third row is unsaturated at the zero, 0.5 (D = (γ − 0.5) there).
        assert_eq!(minimize(&[-10.0, 0.5, 20.0], &[1.0, 1.0, 1.0]), 0.5);
        // Two saturated rows on each side: the zero set is again [−9, 19].
        assert_eq!(minimize(&[-10.0, -30.0, 20.0, 40.0], &[1.0; 4]), 5.0);
    }

    #[test]
    fn bracketed_sweep_equals_the_full_sweep() {
        // Centres on a small grid (ties, and rows saturated on both sides of the zero, so that
        // flat zero sets occur), widths from tiny to wide, weights in quarters: the two sweeps
        // must find the same piece and so the same root. Started far away, where D is flat,
        // Newton leaves every event in the bracket, which the halvings then narrow (one case in
        // ten has more than `FEW_EVENTS` events).
        let mut state = 0x853c_49e6_748f_ea9bu64;
        let mut next = move |m: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % m
        };
        for case in 0..5000 {
            let n = if case % 10 == 0 {
                FEW_EVENTS + next(200) as usize
            } else {
                1 + next(40) as usize
            };
            let mut ramps = Ramps {
                t: Vec::new(),
                a: Vec::new(),
                half: Vec::new(),
            };
            for _ in 0..n {
                ramps
                    .half
                    .push([0.01, 0.5, 1.0, 3.0, 100.0][next(5) as usize]);
                ramps.a.push(0.25 * (1 + next(8)) as f64);
                ramps.t.push(next(21) as f64 * 0.5 - 5.0);
            }
            let reference = full_sweep_root(&ramps);
            for (start, ours) in [
                ("least squares", root(&ramps)),
                ("far left", ramps.first_root(-1e6)),
                ("far right", ramps.first_root(1e6)),
            ] {
                assert!(
                    ours == reference
                        || (ours - reference).abs() <= 1e-12 * (1.0 + reference.abs()),
                    "case {case} from {start}: {ours} against {reference} for t {:?}, a {:?}, \
                     h {:?}",
                    ramps.t,
                    ramps.a,
                    ramps.half
                );
            }
        }
    }
}
