//! `agbm` and `agbmr`: accelerated gradient boosting (Lu, Karimireddy, Ponomareva, Mirrokni,
//! Alg. 2 and 3).
//! ```text
//! f ← h ← c0
//! for m = 0, 1, …:
//!     θ ← 2/(m+2) ;  g ← (1−θ) f + θ h ;  r ← −∂ℓ(y, g)/∂g
//!     b1 ← fit(r) ;  f ← g + η b1
//!     c ← r                                      if m = 0
//!         r ± (m+1)/(m+2) · (c_prev − b2_prev(X))   otherwise
//!           ("+" with corrected_residual = "paper", Alg. 2 as printed; "−" with
//!            "reference_code", the authors' released implementation, the default)
//!     b2 ← fit(c) ;  h ← h + (γη/θ) b2
//! output f
//! ```
//! Two trees per iteration. Step rule: `constant` only, η = learning_rate · ρ with ρ = 1/σ unless
//! given (the paper's fixed step is at most 1/σ; theory: η ≤ 1/σ, γ ≤ Θ⁴/(4+Θ²)).
//!
//! `agbmr` restarts (h ← f, m ← 0, c_prev forgotten): `restart = "fixed"` every
//! ⌈√(2/(ηγμ))⌉ iterations (Option 1, needs a strongly convex loss); `"adaptive"` when the
//! training loss of f rose over the last iteration (Option 2, O'Donoghue & Candès). The iterate
//! whose loss rose is kept; only the momentum is reset.
//!
//! With `safeguard = "restart"` (the default) the booster rejects an iteration that raised the
//! training loss and restarts the momentum at the previous iterate (`Booster::step_in_pool`);
//! docs/algorithms.md says why both defaults are sound.
//!
//! f and h are `Tracked` sequences over one tree store, so the model's weights are f's weights.

use super::fit::{add_grown_tree, grow_on_target, side_by_side, subtract_grown_tree, Offset};
use super::method::{inverse_smoothness, method, BoostingMethod, Iterate, MethodState, Start};
use super::outputs::Columns;
use super::tracked::Tracked;
use super::vectors::CHUNK;
use super::{Context, Iteration};
use crate::data::BinnedData;
use crate::error::{Error, Result};
use crate::loss::Loss;
use crate::params::{CorrectedResidual, Method, Params, Restart, StepRule};
use crate::rng::Rng;
use crate::tree::Candidates;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// AGBM's iterate (Lu et al., Alg. 2): the output, auxiliary and corrected-residual sequences.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgbmState {
    /// The output sequence.
    pub f: Tracked,
    /// The momentum sequence.
    pub h: Tracked,
    /// Iterations since the start or the last restart (m of Alg. 2).
    pub m: usize,
    /// The residual r of the last iteration: a buffer for the next one's.
    #[serde(default, alias = "c")]
    pub residual: Vec<f64>,
    /// c − b2(X) of the last iteration, carried into the next corrected residual.
    pub carry: Vec<f64>,
    /// Restart period of `restart = "fixed"` (agbmr only).
    pub period: Option<usize>,
    /// Number of restarts so far (agbmr).
    pub restarts: usize,
    /// Training loss of f at the start of the previous iteration (adaptive restart).
    pub previous_loss: f64,
}

impl AgbmState {
    /// `loss`: the loss's name, smoothness σ and strong convexity μ (for the fixed restart period).
    pub fn new(
        params: &Params,
        loss: (&str, Option<f64>, Option<f64>),
        start: Tracked,
    ) -> Result<AgbmState> {
        let period = match (params.method, params.restart) {
            (Method::Agbmr, Restart::Fixed) => Some(restart_period(params, loss)?),
            _ => None,
        };
        Ok(AgbmState {
            f: start.clone(),
            h: start,
            m: 0,
            residual: Vec::new(),
            carry: Vec::new(),
            period,
            restarts: 0,
            previous_loss: f64::INFINITY,
        })
    }

    /// Forgets the momentum: h ← f and m ← 0, so the next iteration is a plain gradient step.
    pub fn restart(&mut self) {
        self.h = self.f.clone();
        self.m = 0;
        self.residual.clear();
        self.carry.clear();
        self.restarts += 1;
    }

    /// Whether the next iteration uses momentum (θ < 1, so g ≠ f).
    pub fn momentum_active(&self) -> bool {
        self.m > 0
    }
}

/// ⌈√(2/(ηγμ))⌉ (Alg. 3, Option 1).
fn restart_period(
    params: &Params,
    (name, sigma, mu): (&str, Option<f64>, Option<f64>),
) -> Result<usize> {
    let mu = mu.filter(|&mu| mu > 0.0).ok_or_else(|| {
        Error::param(
            "restart",
            "\"fixed\"",
            format!(
                "\"adaptive\" for the {} loss: the fixed period √(2/(ηγμ)) needs a strongly convex loss (μ > 0)",
                name
            ),
        )
    })?;
    let rho = params
        .rho
        .unwrap_or_else(|| method(params.method).default_rho(sigma, params.lambda));
    let eta = params.learning_rate * rho;
    let period = (2.0 / (eta * params.gamma * mu)).sqrt().ceil();
    Ok(if period.is_finite() {
        (period as usize).max(1)
    } else {
        usize::MAX
    })
}

pub fn step(state: &mut AgbmState, ctx: &mut Context<'_>, candidates: &Candidates) -> Iteration {
    if ctx.params.method == Method::Agbmr && state.m > 0 {
        let due = match state.period {
            Some(period) => state.m >= period,
            None => ctx.train_loss > state.previous_loss,
        };
        if due {
            state.restart();
        }
    }
    state.previous_loss = ctx.train_loss;

    let m = state.m as f64;
    let theta = 2.0 / (m + 2.0);
    let momentum = match ctx.params.corrected_residual {
        CorrectedResidual::Paper => (m + 1.0) / (m + 2.0),
        CorrectedResidual::ReferenceCode => -(m + 1.0) / (m + 2.0),
    };
    let n = state.f.train.len();
    let mut r = std::mem::take(&mut state.residual);
    r.resize(n, 0.0);
    // c in the buffer of the carry, which it replaces (the first iteration's c is r itself).
    let mut c = std::mem::take(&mut state.carry);
    let first = c.is_empty();
    c.resize(n, 0.0);
    momentum_point(
        (&mut state.f, &state.h),
        ctx,
        theta,
        (&mut r, (!first).then_some(&mut c[..])),
        momentum,
    );
    if first {
        c.copy_from_slice(&r);
    }
    // With K outputs (a multiclass loss), one tree per output for each fitted target, as gbm
    // does. b1 (on r) and b2 (on c) are fitted at the same point: all 2K trees grow side by
    // side, the b1 trees first. Each b1 is added (f ← g + η b1) in the pass that computes
    // cos(r, b1) as soon as it is grown; the b2 trees wait until c is no longer read (K row lists
    // held, next to the n × K vectors of the method's state).
    let k = ctx.n_outputs();
    let eta = ctx.params.learning_rate * ctx.rho();
    let targets = Columns::new(&r, k);
    let (mut b1, mut b2_trees) = (Vec::with_capacity(k), Vec::with_capacity(k));
    {
        let corrected = Columns::new(&c, k);
        side_by_side(
            ctx,
            2 * k,
            |job| {
                let target = match job.checked_sub(k) {
                    None => targets.get(job),
                    Some(class) => corrected.get(class),
                };
                grow_on_target(ctx, target, candidates, Offset::Penalised)
            },
            |job, tree| {
                if job < k {
                    let f = (&mut state.f.train[..], job);
                    b1.push(add_grown_tree(
                        ctx,
                        tree,
                        targets.get(job),
                        f,
                        (eta, 1.0),
                        None,
                    ));
                } else {
                    b2_trees.push(tree);
                }
            },
        );
    }
    drop(targets);

    // carry ← c − b2(X), in c's buffer, and h ← h + (γη/θ) b2(X) in the pass that computes
    // cos(c, b2).
    let h_coef = ctx.params.gamma * eta / theta;
    let mut carry = c;
    let b2: Vec<_> = (b2_trees.into_iter().enumerate())
        .map(|(class, tree)| {
            let h = (h_coef != 0.0).then_some(&mut state.h.train[..]);
            subtract_grown_tree(ctx, tree, &mut carry, (h, h_coef), class)
        })
        .collect();

    let mut cos: Vec<f64> = b1.iter().map(|(_, cos)| *cos).collect();
    cos.extend(b2.iter().map(|(_, cos)| *cos));
    for (class, (b1, _)) in b1.into_iter().enumerate() {
        let b1 = ctx.store_grown(b1, class);
        state.f.add_tree_off_train(&b1, eta);
    }
    for (class, (b2, _)) in b2.into_iter().enumerate() {
        let b2 = ctx.store_grown(b2, class);
        state.h.add_tree_off_train(&b2, h_coef);
    }
    state.residual = r;
    state.carry = carry;
    state.m += 1;
    ctx.publish(&state.f);
    Iteration { cos, step: eta }
}

/// g ← (1−θ) f + θ h (in f's buffers: f's old value is not needed again, f ← g + η b1),
/// r ← −∂ℓ(y, g) and, with the last carry, c ← r + momentum · carry (in the carry's buffer).
/// For a separable loss in one pass over row blocks instead of three over the n × K vectors.
pub(super) fn momentum_point(
    (f, h): (&mut Tracked, &Tracked),
    ctx: &Context<'_>,
    theta: f64,
    (r, carry): (&mut [f64], Option<&mut [f64]>),
    momentum: f64,
) {
    let corrected = |r: &[f64], carry: &mut [f64]| {
        for (c, &r) in carry.iter_mut().zip(r) {
            *c = r + momentum * *c;
        }
    };
    if !ctx.loss.separable() {
        f.affine_assign(1.0 - theta, theta, h);
        ctx.negative_gradient_into(&f.train, r);
        if let Some(carry) = carry {
            corrected(r, carry);
        }
        return;
    }
    f.affine_assign_off_train(1.0 - theta, theta, h);
    let k = ctx.n_outputs();
    let block = CHUNK * k;
    let g = f.train.par_chunks_mut(block).zip(h.train.par_chunks(block));
    let rows = |i: usize, g: &[f64]| i * CHUNK..i * CHUNK + g.len() / k;
    let point = |g: &mut [f64], h: &[f64]| {
        for (g, &h) in g.iter_mut().zip(h) {
            *g = (1.0 - theta) * *g + theta * h;
        }
    };
    match carry {
        Some(carry) => (g
            .zip(r.par_chunks_mut(block))
            .zip(carry.par_chunks_mut(block)))
        .enumerate()
        .for_each(|(i, (((g, h), r), carry))| {
            point(g, h);
            ctx.negative_gradient_of_rows(rows(i, g), g, r);
            corrected(r, carry);
        }),
        None => (g.zip(r.par_chunks_mut(block)))
            .enumerate()
            .for_each(|(i, ((g, h), r))| {
                point(g, h);
                ctx.negative_gradient_of_rows(rows(i, g), g, r);
            }),
    }
}

/// `agbm` and `agbmr` (docs/algorithms.md §4.3): the recursions are stated for a fixed step η,
/// ρ = 1/σ (AGBM, Theorem 4.1). `agbmr`'s restarts are read from the parameters by the state.
pub struct Agbm;

impl BoostingMethod for Agbm {
    fn step_rules(&self) -> &'static [StepRule] {
        &[StepRule::Constant]
    }
    fn default_step_rule(&self, _newton: bool) -> StepRule {
        StepRule::Constant
    }
    fn default_rho(&self, sigma: Option<f64>, _lambda: f64) -> f64 {
        inverse_smoothness(sigma)
    }
    fn supports_multiclass(&self) -> bool {
        true
    }
    fn has_momentum(&self) -> bool {
        true
    }
    fn uses_prox(&self) -> bool {
        false
    }
    fn trees_per_iteration(&self) -> Option<usize> {
        Some(2)
    }
    fn starts_from_output(&self) -> bool {
        false
    }
    fn candidates(&self, _params: &Params, _data: &BinnedData, _rng: &mut Rng) -> Candidates {
        Candidates::All
    }
    fn start(&self, params: &Params, loss: &dyn Loss, start: Start<'_>) -> Result<MethodState> {
        let loss = (loss.name(), start.sigma, loss.mu());
        Ok(MethodState::Agbm(AgbmState::new(
            params,
            loss,
            start.tracked(),
        )?))
    }
}

impl Iterate for AgbmState {
    fn step(&mut self, ctx: &mut Context<'_>, candidates: &Candidates) -> Iteration {
        step(self, ctx, candidates)
    }
    fn output(&self) -> &[f64] {
        &self.f.train
    }
    fn output_tracked(&self) -> Option<&Tracked> {
        Some(&self.f)
    }
    fn momentum_active(&self) -> bool {
        AgbmState::momentum_active(self)
    }
    fn restart_momentum(&mut self) {
        self.restart()
    }
    fn restart_point(&self) -> MethodState {
        MethodState::Agbm(AgbmState {
            f: self.f.par_clone(),
            h: Tracked::default(),
            residual: Vec::new(),
            carry: Vec::new(),
            ..*self
        })
    }
}
