//! The accelerated failure time loss: the negative log-likelihood of ln T = f + σ Z for exact,
//! right-, left- and interval-censored survival times, Z normal, logistic or extreme-value
//! (Gumbel for minima: T Weibull) — XGBoost's `survival:aft` (Barnwal, Cho & Hocking, "Survival
//! regression with accelerated failure time model in XGBoost", JCGS 2022), docs/algorithms.md §6.
//!
//! * Label: the signed time of the cox loss (y > 0 observed at y, y < 0 censored after |y|), or two
//!   columns, the bounds [l, u] of an interval holding the time (l = u observed, l = 0 left-censored,
//!   u < 0 standing for +∞: right-censored).
//! * With z = (ln t − f)/σ, pdf φ, cdf Φ, survival S = 1 − Φ and ψ = (ln φ)':
//!   observed, ℓ = −ln φ(z) + ln(σ t), ℓ' = ψ(z)/σ, ℓ'' = −ψ'(z)/σ²;
//!   censored to [l, u], P = Φ(z_u) − Φ(z_l), ℓ = −ln P, ℓ' = (φ_u − φ_l)/(σ P),
//!   ℓ'' = ((φ_u − φ_l)²/P² − (φ'_u − φ'_l)/P)/σ² (φ and φ' vanish at ±∞). Right-censored rows
//!   use the hazard λ = φ/S: ℓ = −ln S(z_l), ℓ' = −λ/σ, ℓ'' = λ(λ + ψ(z_l))/σ², so that no
//!   ratio of underflowing numbers is taken. The three densities are log-concave, so ℓ is convex
//!   in f and every one-dimensional problem (constant, leaf, line search, prox) is solved by the
//!   shared safeguarded Newton.
//! * `response` = e^f, the time at Z = 0: the median for the normal and logistic distributions.

use super::solve::{self, Slope};
use super::Loss;

/// The distribution of Z in ln T = f + σ Z.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AftDistribution {
    /// The standard normal: T is log-normal.
    #[default]
    Normal,
    /// The standard logistic: T is log-logistic.
    Logistic,
    /// The extreme-value distribution of minima (Gumbel): T is Weibull.
    Extreme,
}

/// The target columns of interval-censored data: lower and upper bound.
pub const AFT_COLUMNS: usize = 2;

const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;
const FRAC_1_SQRT_2PI: f64 = 0.398_942_280_401_432_7;

impl AftDistribution {
    /// Every distribution, as `aft(...)` names them.
    pub const ALL: [AftDistribution; 3] = [
        AftDistribution::Normal,
        AftDistribution::Logistic,
        AftDistribution::Extreme,
    ];
    /// The name `aft(...)` takes.
    pub fn name(&self) -> &'static str {
        match self {
            AftDistribution::Normal => "normal",
            AftDistribution::Logistic => "logistic",
            AftDistribution::Extreme => "extreme",
        }
    }
    /// φ(z) (0 at ±∞).
    pub fn pdf(&self, z: f64) -> f64 {
        if z.is_infinite() {
            return 0.0;
        }
        match self {
            AftDistribution::Normal => FRAC_1_SQRT_2PI * (-0.5 * z * z).exp(),
            AftDistribution::Logistic => {
                let e = (-z.abs()).exp();
                e / ((1.0 + e) * (1.0 + e))
            }
            AftDistribution::Extreme => (z - z.exp()).exp(),
        }
    }
    /// −ln φ(z).
    fn neg_log_pdf(&self, z: f64) -> f64 {
        match self {
            AftDistribution::Normal => 0.5 * z * z + LN_SQRT_2PI,
            AftDistribution::Logistic => z.abs() + 2.0 * (-z.abs()).exp().ln_1p(),
            AftDistribution::Extreme => z.exp() - z,
        }
    }
    /// ψ(z) = φ'(z)/φ(z) and its derivative.
    fn psi(&self, z: f64) -> (f64, f64) {
        match self {
            AftDistribution::Normal => (-z, -1.0),
            AftDistribution::Logistic => {
                let s = sigmoid(z);
                (1.0 - 2.0 * s, -2.0 * s * (1.0 - s))
            }
            AftDistribution::Extreme => (1.0 - z.exp(), -z.exp()),
        }
    }
    /// φ'(z) = ψ(z) φ(z) (0 at ±∞).
    fn dpdf(&self, z: f64) -> f64 {
        if z.is_infinite() {
            0.0
        } else {
            self.psi(z).0 * self.pdf(z)
        }
    }
    /// Φ(z).
    pub fn cdf(&self, z: f64) -> f64 {
        match self {
            AftDistribution::Normal => 0.5 * erfc(-z / std::f64::consts::SQRT_2),
            AftDistribution::Logistic => sigmoid(z),
            AftDistribution::Extreme => -(-z.exp()).exp_m1(),
        }
    }
    /// S(z) = 1 − Φ(z), without cancellation in the upper tail.
    pub fn sf(&self, z: f64) -> f64 {
        match self {
            AftDistribution::Normal => 0.5 * erfc(z / std::f64::consts::SQRT_2),
            AftDistribution::Logistic => sigmoid(-z),
            AftDistribution::Extreme => (-z.exp()).exp(),
        }
    }
    /// (−ln S(z), the hazard φ(z)/S(z)), stable in the upper tail.
    fn neg_log_sf_and_hazard(&self, z: f64) -> (f64, f64) {
        match self {
            AftDistribution::Normal => {
                // S = ½ e^{−z²/2} erfcx(z/√2) for z ≥ 0 (erfcx(x) = e^{x²} erfc(x)).
                if z > 0.0 {
                    let scaled = 0.5 * erfcx(z / std::f64::consts::SQRT_2);
                    (0.5 * z * z - scaled.ln(), FRAC_1_SQRT_2PI / scaled)
                } else {
                    let s = self.sf(z);
                    (-s.ln(), self.pdf(z) / s)
                }
            }
            AftDistribution::Logistic => (softplus(z), sigmoid(z)),
            AftDistribution::Extreme => (z.exp(), z.exp()),
        }
    }
    /// The quantile function Φ⁻¹(p), for survival times from the distribution.
    pub fn quantile(&self, p: f64) -> f64 {
        match self {
            AftDistribution::Normal => normal_quantile(p),
            AftDistribution::Logistic => (p / (1.0 - p)).ln(),
            AftDistribution::Extreme => (-(-p).ln_1p()).ln(),
        }
    }
}

fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

/// ln(1 + e^z) without overflow.
fn softplus(z: f64) -> f64 {
    z.max(0.0) + (-z.abs()).exp().ln_1p()
}

/// erfc(x) for x ≥ 2 divided by e^{−x²}: the continued fraction
/// 1/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …)))), evaluated backwards.
fn erfcx_tail(x: f64) -> f64 {
    let mut fraction = x;
    for k in (1..=60).rev() {
        fraction = x + (k as f64 / 2.0) / fraction;
    }
    1.0 / (std::f64::consts::PI.sqrt() * fraction)
}

/// erf(x) for |x| < 2 by its series of positive terms, 2/√π e^{−x²} Σ 2ⁿ x^{2n+1}/(2n+1)!!.
fn erf_series(x: f64) -> f64 {
    let (mut term, mut sum) = (x, x);
    for n in 1..200 {
        term *= 2.0 * x * x / (2 * n + 1) as f64;
        sum += term;
        if term.abs() < 1e-17 * sum.abs() {
            break;
        }
    }
    2.0 / std::f64::consts::PI.sqrt() * (-x * x).exp() * sum
}

/// The complementary error function.
fn erfc(x: f64) -> f64 {
    if x >= 2.0 {
        (-x * x).exp() * erfcx_tail(x)
    } else if x <= -2.0 {
        2.0 - (-x * x).exp() * erfcx_tail(-x)
    } else {
        1.0 - erf_series(x)
    }
}

/// e^{x²} erfc(x) for x ≥ 0.
fn erfcx(x: f64) -> f64 {
    if x >= 2.0 {
        erfcx_tail(x)
    } else {
        (x * x).exp() * erfc(x)
    }
}

/// Φ⁻¹(p) of the standard normal: Acklam's rational approximation refined by one Halley step.
fn normal_quantile(p: f64) -> f64 {
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    let x = if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (-p).ln_1p()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    };
    let e = AftDistribution::Normal.cdf(x) - p;
    let u = e / AftDistribution::Normal.pdf(x);
    x - u / (1.0 + x * u / 2.0)
}

/// The accelerated failure time loss (see the module header).
#[derive(Debug, Clone, Copy)]
pub struct Aft {
    distribution: AftDistribution,
    sigma: f64,
    width: usize,
}

impl Aft {
    /// The loss on signed times (one column) or, with `interval`, on [`AFT_COLUMNS`] bounds.
    pub fn new(distribution: AftDistribution, sigma: f64, interval: bool) -> Aft {
        let width = if interval { AFT_COLUMNS } else { 1 };
        Aft {
            distribution,
            sigma,
            width,
        }
    }

    /// A row's bounds [l, u] (u = +∞ when unbounded).
    fn bounds(&self, y: &[f64]) -> (f64, f64) {
        if self.width == 1 {
            let t = y[0].abs();
            (t, if y[0] > 0.0 { t } else { f64::INFINITY })
        } else {
            (y[0], if y[1] < 0.0 { f64::INFINITY } else { y[1] })
        }
    }

    /// (ℓ, ℓ', ℓ'') of one row at score f.
    fn row(&self, y: &[f64], f: f64) -> (f64, f64, f64) {
        let (d, sigma) = (self.distribution, self.sigma);
        let (lower, upper) = self.bounds(y);
        let z = |t: f64| (t.ln() - f) / sigma;
        if lower == upper {
            let z = z(lower);
            let (psi, dpsi) = d.psi(z);
            let value = d.neg_log_pdf(z) + sigma.ln() + lower.ln();
            return (value, psi / sigma, -dpsi / (sigma * sigma));
        }
        let (zl, zu) = (z(lower), z(upper));
        if upper.is_infinite() {
            let (value, hazard) = d.neg_log_sf_and_hazard(zl);
            // No hazard (l = 0: no information) and ψ(−∞) = ∞ for the normal: no curvature.
            let curvature = if hazard > 0.0 {
                hazard * (hazard + d.psi(zl).0)
            } else {
                0.0
            };
            return (value, -hazard / sigma, curvature.max(0.0) / (sigma * sigma));
        }
        if zl > 0.0 {
            // In the upper tail both survival values can underflow: work with their ratio
            // r = S(z_u)/S(z_l) and the hazards, P = S(z_l)(1 − r).
            let (log_l, hazard_l) = d.neg_log_sf_and_hazard(zl);
            let (log_u, hazard_u) = d.neg_log_sf_and_hazard(zu);
            let r = (log_l - log_u).exp();
            let one_minus_r = (-(log_l - log_u).exp_m1()).max(f64::MIN_POSITIVE);
            let g = (hazard_u * r - hazard_l) / one_minus_r;
            let (psi_l, psi_u) = (d.psi(zl).0, d.psi(zu).0);
            let curvature = (g * g - (psi_u * hazard_u * r - psi_l * hazard_l) / one_minus_r).max(0.0);
            return (log_l - one_minus_r.ln(), g / sigma, curvature / (sigma * sigma));
        }
        let p = (d.cdf(zu) - d.cdf(zl)).max(f64::MIN_POSITIVE);
        let dp = d.pdf(zu) - d.pdf(zl);
        let ddp = d.dpdf(zu) - d.dpdf(zl);
        let curvature = (dp * dp / (p * p) - ddp / p).max(0.0);
        (-p.ln(), dp / (sigma * p), curvature / (sigma * sigma))
    }

    /// argmin_c Σ_{rows} w ℓ(y_i, f_i + c b_i) (`rows` None: every row).
    fn minimize(&self, y: &[f64], f: &[f64], b: Option<&[f64]>, w: &[f64], rows: &[usize]) -> f64 {
        let t = self.width;
        let slope = |c: f64| {
            let (mut d1, mut d2, mut noise) = (0.0, 0.0, 0.0);
            for &i in rows {
                let bi = b.map_or(1.0, |b| b[i]);
                let wi = if w.is_empty() { 1.0 } else { w[i] };
                let (_, g, h) = self.row(&y[i * t..(i + 1) * t], f[i] + c * bi);
                d1 += wi * g * bi;
                d2 += wi * h * bi * bi;
                noise += (wi * g * bi).abs();
            }
            Slope {
                d1,
                d2,
                ln_scale: 0.0,
                noise,
            }
        };
        solve::minimize_convex(slope, solve::LINE_SEARCH_TOL, solve::LINE_SEARCH_MAX_ITER)
    }
}

impl Loss for Aft {
    fn name(&self) -> &'static str {
        "aft"
    }
    fn n_outputs(&self) -> usize {
        1
    }
    fn target_width(&self) -> usize {
        self.width
    }
    fn row_value(&self, y: &[f64], f: &[f64]) -> f64 {
        self.row(y, f[0]).0
    }
    fn row_gradient(&self, y: &[f64], f: &[f64], out: &mut [f64]) {
        out[0] = self.row(y, f[0]).1;
    }
    fn row_hessian(&self, y: &[f64], f: &[f64], out: &mut [f64]) {
        out[0] = self.row(y, f[0]).2;
    }
    fn row_prox(&self, y: &[f64], z: &[f64], lambda: f64, out: &mut [f64]) {
        let slope = |c: f64| {
            let (_, g, h) = self.row(y, z[0] + c);
            Slope::new(g + c / lambda, h + 1.0 / lambda)
        };
        out[0] = z[0] + solve::minimize_convex(slope, solve::PROX_TOL, solve::PROX_MAX_ITER);
    }
    /// Newton from the weighted mean log of the rows' lower bounds (or upper ones when 0).
    fn init(&self, y: &[f64], w: &[f64]) -> Vec<f64> {
        let n = y.len() / self.width;
        let (mut sum, mut total) = (0.0, 0.0);
        for i in 0..n {
            let (lower, upper) = self.bounds(&y[i * self.width..(i + 1) * self.width]);
            let t = if lower > 0.0 { lower } else { upper };
            let wi = if w.is_empty() { 1.0 } else { w[i] };
            if t.is_finite() && t > 0.0 && wi > 0.0 {
                sum += wi * t.ln();
                total += wi;
            }
        }
        let start = if total > 0.0 { sum / total } else { 0.0 };
        let f = vec![start; n];
        let rows: Vec<usize> = (0..n).collect();
        vec![start + self.minimize(y, &f, None, w, &rows)]
    }
    fn leaf_value(&self, y: &[f64], f: &[f64], w: &[f64], rows: &[u32], _class: usize) -> f64 {
        let rows: Vec<usize> = rows.iter().map(|&r| r as usize).collect();
        self.minimize(y, f, None, w, &rows)
    }
    fn line_search(&self, y: &[f64], f: &[f64], b: &[f64], w: &[f64]) -> f64 {
        let rows: Vec<usize> = (0..f.len()).collect();
        self.minimize(y, f, Some(b), w, &rows)
    }
    fn sigma(&self) -> Option<f64> {
        None
    }
    fn mu(&self) -> Option<f64> {
        None
    }
    fn newton_by_default(&self) -> bool {
        true
    }
    fn target_error(&self, y: &[f64]) -> Option<String> {
        let t = self.width;
        if y.len() % t != 0 {
            return Some(format!("{} values do not make rows of {t} (lower, upper)", y.len()));
        }
        (0..y.len() / t).find_map(|i| {
            let row = &y[i * t..(i + 1) * t];
            if t == 1 {
                return (!(row[0].is_finite() && row[0] != 0.0)).then(|| {
                    format!(
                        "row {i} is {} (the aft loss needs a signed time: > 0 observed at that \
                         time, < 0 censored after its absolute value; never 0 or missing)",
                        row[0]
                    )
                });
            }
            let (lower, upper) = (row[0], row[1]);
            let fine = lower >= 0.0 && (upper < 0.0 || (upper >= lower && upper > 0.0));
            (!fine).then(|| {
                format!(
                    "row {i} has bounds [{lower}, {upper}] (the aft loss needs 0 <= lower <= \
                     upper, upper > 0, or upper < 0 for no upper bound)"
                )
            })
        })
    }
    fn row_response(&self, f: &[f64], out: &mut [f64]) {
        out[0] = f[0].exp();
    }
}
