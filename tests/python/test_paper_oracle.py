"""Oracle tests of ``preset="paper"``: for each method, the training-loss trajectory equals an
independent plain-numpy implementation of its paper's algorithm, written here from the papers'
pseudo-code (Lu et al., Alg. 2-4; Lu & Mazumder, Alg. 2; Fouillen et al., Alg. 2-5 and 8;
Grubb & Bagnell, Alg. 2-3) with an exact regression tree as the weak learner.

Every feature has at most 255 distinct values, so the core's histogram trees (255 bins) are exact
trees. The conventions the papers leave open are optboost's, stated in docs/algorithms.md: a split
must gain more than 0 and ties go to the first feature and the lowest threshold; a flat argmin
interval of a piecewise-linear 1-D problem resolves to its midpoint (to the point closest to 0 when
unbounded); the hinge loss's subgradient is 0 at the kink.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import optboost

N_ITER = 20
RTOL = 1e-9
DEPTH = 2
REGRESSION_SEED, BINARY_SEED = 13, 3  # data free of rounding ties (check_decisive)


# ------------------------------------------------------------------ data


def _features(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 40, n).astype(float)  # 40 distinct values
    b = np.round(rng.uniform(-1, 1, n), 2)  # at most 201 distinct values
    return np.column_stack([a, b])


def regression_data(n: int = 160, seed: int = REGRESSION_SEED) -> tuple[np.ndarray, np.ndarray]:
    x = _features(n, seed)
    rng = np.random.default_rng(seed + 1)
    y = np.sin(x[:, 0] / 6) + 2 * x[:, 1] ** 2 + rng.standard_t(3, n) * 0.3
    return x, y


def binary_data(n: int = 160, seed: int = BINARY_SEED) -> tuple[np.ndarray, np.ndarray]:
    x = _features(n, seed)
    rng = np.random.default_rng(seed + 1)
    score = np.sin(x[:, 0] / 6) + 1.5 * x[:, 1] + rng.normal(0, 0.7, n)
    return x, np.where(score > 0.2, 1.0, -1.0)


def frame(x: np.ndarray, y: np.ndarray, binary: bool) -> pl.DataFrame:
    target = ((y + 1) / 2).astype(np.int64) if binary else y
    return pl.DataFrame({"a": x[:, 0], "b": x[:, 1], "y": target})


# ------------------------------------------------------------------ the weak learner


def tree_leaves(x: np.ndarray, t: np.ndarray, depth: int = DEPTH) -> np.ndarray:
    """The leaf of every row of the exact least-squares tree of `depth` fitted to t (no penalty,
    leaves of one row allowed, a split must gain more than 0; ties: first feature, lowest
    threshold)."""
    leaf = np.zeros(len(t), dtype=np.int64)
    nodes = [np.arange(len(t))]
    for _ in range(depth):
        children = []
        for rows in nodes:
            split = best_split(x[rows], t[rows])
            if split is None:
                children.append(rows)
                continue
            feature, threshold = split
            left = x[rows, feature] <= threshold
            children += [rows[left], rows[~left]]
        nodes = children
    for j, rows in enumerate(nodes):
        leaf[rows] = j
    return leaf


def best_split(x: np.ndarray, t: np.ndarray) -> tuple[int, float] | None:
    total_s, total_n = t.sum(), len(t)
    parent = total_s * total_s / total_n
    best, best_gain, candidates = None, 0.0, []
    for feature in range(x.shape[1]):
        values, index = np.unique(x[:, feature], return_inverse=True)
        sums = np.zeros(len(values))
        np.add.at(sums, index, t)
        counts = np.bincount(index, minlength=len(values)).astype(float)
        left_s, left_n = np.cumsum(sums)[:-1], np.cumsum(counts)[:-1]
        right_s, right_n = total_s - left_s, total_n - left_n
        gains = left_s * left_s / left_n + right_s * right_s / right_n - parent
        for k, gain in enumerate(gains):
            candidates.append((gain, feature, values[k]))
            if gain > best_gain:
                best, best_gain = (feature, values[k]), gain
    if best is not None:
        check_decisive(x, best, best_gain, candidates)
    return best


def check_decisive(x, best, best_gain, candidates) -> None:
    """The data must not hold a split of another partition whose gain ties the best one's in
    exact arithmetic but not in floating point: rounding (the order of the sums) would then pick
    the tree, not the algorithm. (Gains equal bit for bit, as sums of whole numbers are, go to the
    first split on both sides.) The data below were chosen free of such ties."""
    chosen = x[:, best[0]] <= best[1]
    for gain, feature, value in candidates:
        if best_gain * (1 - 1e-12) <= gain != best_gain:
            other = x[:, feature] <= value
            assert (other == chosen).all() or (other != chosen).all(), (
                f"the split on feature {feature} at {value} ties the best one "
                f"{best} to rounding: choose other data"
            )


def fit(x: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The tree's prediction vector (leaf means) and its leaves."""
    leaf = tree_leaves(x, t)
    means = np.bincount(leaf, weights=t) / np.bincount(leaf)
    return means[leaf], leaf


# ------------------------------------------------------------------ losses (y = ±1 for binary)


def pl_point(slope_left: float, at: np.ndarray, jump: np.ndarray) -> float:
    """argmin of a convex piecewise-linear function with slope `slope_left` below its kinks `at`
    (rising by `jump` at each): the midpoint of the argmin interval, or its point closest to 0
    when unbounded."""
    if len(at) == 0:
        return 0.0
    order = np.argsort(at, kind="stable")
    at, jump = at[order], jump[order]
    tol = 1e-12 * (abs(slope_left) + jump.sum())
    slope = slope_left + np.cumsum(jump)
    lo = -np.inf if slope_left >= -tol else at[np.argmax(slope >= -tol)]
    rising = slope > tol
    hi = at[np.argmax(rising)] if rising.any() else np.inf
    if np.isfinite(lo) and np.isfinite(hi):
        return lo + 0.5 * (hi - lo)
    return float(np.clip(0.0, lo, hi))


def newton_root(deriv, x0: float = 0.0) -> float:
    """Root of a monotone derivative by Newton's method from x0, to machine precision."""
    x = x0
    for _ in range(100):
        d1, d2 = deriv(x)
        step = d1 / d2
        x -= step
        if abs(step) <= 1e-15 * max(1.0, abs(x)):
            break
    return x


class Squared:
    name, sigma = "squared", 1.0

    def value(self, y, f):
        return np.mean((y - f) ** 2 / 2)

    def neg_grad(self, y, f):
        return y - f

    def init(self, y):
        return y.mean()


class Logistic:
    name, sigma = "logistic", 0.25

    def value(self, y, f):
        return np.mean(np.logaddexp(0, -y * f))

    def neg_grad(self, y, f):
        return y / (1 + np.exp(y * f))

    def init(self, y):
        p = np.mean(y > 0)
        return np.log(p / (1 - p))

    def leaf(self, y, f):
        # One Newton step from 0 (Friedman's TreeBoost leaf; Proximal boosting, App. C).
        p = 1 / (1 + np.exp(-y * f))
        return np.sum(y * (1 - p)) / np.sum(p * (1 - p))

    def prox(self, y, z, lam):
        out = np.empty_like(z)
        for i in range(len(z)):

            def deriv(u, i=i):
                p = 1 / (1 + np.exp(y[i] * u))
                return u - z[i] - lam * y[i] * p, 1 + lam * p * (1 - p)

            out[i] = newton_root(deriv, z[i])
        return out


class Absolute:
    name = "absolute"

    def value(self, y, f):
        return np.mean(np.abs(y - f))

    def neg_grad(self, y, f):
        return np.sign(y - f)

    def init(self, y):
        return np.median(y)

    def leaf(self, y, f):
        return float(np.median(y - f))

    def prox(self, y, z, lam):
        d = z - y
        with np.errstate(divide="ignore", invalid="ignore"):
            shrink = np.where(d == 0, 0.0, np.maximum(0.0, 1 - lam / np.abs(d)))
        return y + shrink * d


class Pinball:
    def __init__(self, tau: float):
        self.tau, self.name = tau, f"pinball({tau})"

    def value(self, y, f):
        u = y - f
        return np.mean(np.maximum(self.tau * u, (self.tau - 1) * u))

    def neg_grad(self, y, f):
        return np.where(y > f, self.tau, np.where(y < f, self.tau - 1, 0.0))

    def init(self, y):
        return self.leaf(y, np.zeros_like(y))

    def leaf(self, y, f):
        return pl_point(-self.tau * len(y), y - f, np.ones(len(y)))

    def prox(self, y, z, lam):
        tau = self.tau
        return np.where(
            y - z > lam * tau, z + lam * tau, np.where(y - z < lam * (tau - 1), z + lam * (tau - 1), y)
        )


class Hinge:
    name = "hinge"

    def value(self, y, f):
        return np.mean(np.maximum(0, 1 - y * f))

    def neg_grad(self, y, f):
        return np.where(y * f < 1, y, 0.0)

    def init(self, y):
        return float(np.sign(y.sum()))

    def leaf(self, y, f):
        # Σ max(0, 1 − y f − c y): a kink at (1 − y f)/y of jump 1 per row.
        return pl_point(-np.sum(y > 0), (1 - y * f) / y, np.ones(len(y)))

    def prox(self, y, z, lam):
        m = y * z
        return np.where(m < 1 - lam, z + lam * y, np.where(m > 1, z, y))


# ------------------------------------------------------------------ the papers' algorithms


def leaf_step(loss, x, y, at, leaf, nu):
    """Friedman's multiple line search: every leaf re-solved at `at`, shrunk by ν."""
    step = np.zeros(len(y))
    for j in np.unique(leaf):
        rows = leaf == j
        step[rows] = nu * loss.leaf(y[rows], at[rows])
    return step


def agbm(loss, x, y, nu, gamma, sign=+1, restart=False, vanilla=False):
    """Lu et al., Alg. 2 (sign +1 as printed, −1 as released), Alg. 3 Option 2 (adaptive
    restart) and Alg. 4 (vanilla); fixed step η = ν/σ, f = h = 0 at the start."""
    eta = nu / loss.sigma
    f = np.zeros(len(y))
    h = f.copy()
    m, carry, previous, losses = 0, None, None, []
    for _ in range(N_ITER):
        current = loss.value(y, f)
        if restart and m > 0 and current > previous:
            h, m, carry = f.copy(), 0, None
        previous = current
        theta = 2 / (m + 2)
        g = (1 - theta) * f + theta * h
        r = loss.neg_grad(y, g)
        b1, _ = fit(x, r)
        f = g + eta * b1
        if vanilla:
            h = h + eta / theta * b1
        else:
            c = r if carry is None else r + sign * (m + 1) / (m + 2) * carry
            b2, _ = fit(x, c)
            h = h + gamma * eta / theta * b2
            carry = c - b2
        m += 1
        losses.append(loss.value(y, f))
    return losses


def rgbm(loss, x, y, nu):
    """Lu & Mazumder, Alg. 2 with every candidate (Type 0): constant step ρ = 1/σ from f = 0."""
    f = np.zeros(len(y))
    losses = []
    for _ in range(N_ITER):
        b, _ = fit(x, loss.neg_grad(y, f))
        f = f + nu / loss.sigma * b
        losses.append(loss.value(y, f))
    return losses


def meta(loss, x, y, nu, lam, proximal, residual, accelerated, line_search=True, schedule=False):
    """Fouillen et al., Alg. 5 (with Alg. 8's momentum): the proximal or gradient direction at v,
    the carried residual Δ, FISTA's sequence from β = 1. With `line_search` each leaf is
    re-solved at v; otherwise the constant step ρ = 1 with η_t = ν/√t when `schedule`
    (Grubb & Bagnell, Alg. 3)."""
    c0 = loss.init(y)
    xk = np.full(len(y), c0)
    v, delta, beta, losses = xk.copy(), np.zeros(len(y)), 1.0, []
    for t in range(1, N_ITER + 1):
        if proximal:
            r = (loss.prox(y, v, lam) - v) / lam
        else:
            r = loss.neg_grad(y, v)
        target = r + delta
        b, leaf = fit(x, target)
        if residual:
            delta = target - b
        if line_search:
            x_new = v + leaf_step(loss, x, y, v, leaf, nu)
        else:
            x_new = v + (nu / np.sqrt(t) if schedule else nu) * b
        if accelerated:
            beta_new = (1 + np.sqrt(1 + 4 * beta * beta)) / 2
            v = x_new + (beta - 1) / beta_new * (x_new - xk)
            beta = beta_new
        else:
            v = x_new
        xk = x_new
        losses.append(loss.value(y, xk))
    return losses


def gbm(loss, x, y, nu):
    """Gradient boosting with the multiple line search (Fouillen et al., Alg. 1)."""
    return meta(loss, x, y, nu, 1.0, proximal=False, residual=False, accelerated=False)


def repeated(loss, x, y, nu):
    """Grubb & Bagnell, Alg. 2: k_t = t projections of the residual subgradient per iteration,
    f ← f + η_t Σ h with η_t = ν/√t."""
    f = np.full(len(y), loss.init(y))
    losses = []
    for t in range(1, N_ITER + 1):
        r = loss.neg_grad(y, f)
        d = np.zeros(len(y))
        for _ in range(t):
            b, _ = fit(x, r)
            if not b.any():
                break
            d, r = d + b, r - b
        f = f + nu / np.sqrt(t) * d
        losses.append(loss.value(y, f))
    return losses


# ------------------------------------------------------------------ the comparison


def optboost_losses(x, y, binary, formula="y ~ a + b", **params) -> np.ndarray:
    model = optboost.boost(
        formula,
        frame(x, y, binary),
        n_iter=N_ITER,
        max_depth=DEPTH,
        preset="paper",
        progress=False,
        **params,
    )
    assert model.kept_iteration == N_ITER  # the last iterate
    return model.history["train_loss"].to_numpy()


def check(ours: np.ndarray, oracle: list[float]) -> None:
    oracle = np.asarray(oracle)
    assert len(ours) == len(oracle) == N_ITER
    assert oracle[-1] < oracle[0]  # the algorithm does descend on these data
    np.testing.assert_allclose(ours, oracle, rtol=RTOL, atol=0)


LOSSES = {"squared": Squared(), "logistic": Logistic()}
NONSMOOTH = {
    "absolute": Absolute(),
    "pinball(0.8)": Pinball(0.8),
    "hinge": Hinge(),
    "logistic": Logistic(),
}


def data_for(loss_name: str):
    binary = loss_name in ("logistic", "hinge")
    x, y = binary_data() if binary else regression_data()
    return x, y, binary


@pytest.mark.timeout(120)
@pytest.mark.parametrize("loss_name", ["squared", "logistic"])
@pytest.mark.parametrize(
    "method, options",
    [
        ("agbm", {"corrected_residual": "paper"}),
        ("agbm", {"corrected_residual": "reference_code"}),
        ("agbmr", {}),
        ("vagbm", {}),
    ],
)
def test_agbm_family(method, options, loss_name):
    loss = LOSSES[loss_name]
    x, y, binary = data_for(loss_name)
    nu, gamma = 0.3, 0.5
    ours = optboost_losses(
        x, y, binary, method=method, loss=loss_name, learning_rate=nu, gamma=gamma, **options
    )
    sign = -1 if options.get("corrected_residual") == "reference_code" else +1
    oracle = agbm(
        loss,
        x,
        y,
        nu,
        gamma,
        sign=sign,
        restart=method == "agbmr",
        vanilla=method == "vagbm",
    )
    check(ours, oracle)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("loss_name", ["squared", "logistic"])
@pytest.mark.parametrize(
    "selection, t",
    # Types 1-3 draw their candidates at random; here they are drawn from a set they cover
    # whole (t at least the candidates or groups), so the oracle is Type 0's and the test checks
    # that each type runs the paper's step on the full set.
    [("all", 1), ("random", 10_000), ("groups", 2)],
)
def test_rgbm(selection, t, loss_name):
    loss = LOSSES[loss_name]
    x, y, binary = data_for(loss_name)
    ours = optboost_losses(
        x, y, binary, method="rgbm", loss=loss_name, learning_rate=0.5, selection=selection, t=t
    )
    check(ours, rgbm(loss, x, y, 0.5))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("loss_name", ["squared", "logistic"])
def test_rgbm_one_group_on_one_feature(loss_name):
    """Type 2 draws one feature per iteration: on a single feature, always that one."""
    loss = LOSSES[loss_name]
    x, y, binary = data_for(loss_name)
    ours = optboost_losses(
        x, y, binary, "y ~ b", method="rgbm", loss=loss_name, learning_rate=0.5, selection="group"
    )
    check(ours, rgbm(loss, x[:, [1]], y, 0.5))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("loss_name", list(NONSMOOTH))
@pytest.mark.parametrize("method", ["proximal", "residual_proximal", "accelerated_proximal"])
def test_proximal_family(method, loss_name):
    loss = NONSMOOTH[loss_name]
    x, y, binary = data_for(loss_name)
    nu, lam = 0.3, 0.5
    ours = optboost_losses(
        x, y, binary, method=method, loss=loss_name, learning_rate=nu, **{"lambda": lam}
    )
    oracle = meta(
        loss,
        x,
        y,
        nu,
        lam,
        proximal=True,
        residual=method == "residual_proximal",
        accelerated=method == "accelerated_proximal",
    )
    check(ours, oracle)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("loss_name", ["hinge", "absolute", "logistic"])
def test_gbm_and_accelerated_gbm(loss_name):
    loss = NONSMOOTH[loss_name]
    x, y, binary = data_for(loss_name)
    ours = optboost_losses(x, y, binary, method="gbm", loss=loss_name, learning_rate=0.3)
    check(ours, gbm(loss, x, y, 0.3))
    ours = optboost_losses(x, y, binary, method="accelerated_gbm", loss=loss_name, learning_rate=0.3)
    oracle = meta(loss, x, y, 0.3, 1.0, proximal=False, residual=False, accelerated=True)
    check(ours, oracle)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("loss_name", ["hinge", "absolute"])
def test_grubb_bagnell(loss_name):
    loss = NONSMOOTH[loss_name]
    x, y, binary = data_for(loss_name)
    ours = optboost_losses(x, y, binary, method="residual_gbm", loss=loss_name, learning_rate=0.5)
    oracle = meta(
        loss, x, y, 0.5, 1.0, proximal=False, residual=True, accelerated=False,
        line_search=False, schedule=True,
    )
    check(ours, oracle)
    ours = optboost_losses(x, y, binary, method="repeated_gbm", loss=loss_name, learning_rate=0.5)
    check(ours, repeated(loss, x, y, 0.5))


# ------------------------------------------------------------------ the switches themselves


@pytest.mark.timeout(120)
def test_keep_last_keeps_every_iteration_and_best_stays_the_default():
    x, y = regression_data()
    df = frame(x, y, False)
    valid = frame(*regression_data(seed=99), False)
    common = dict(method="vagbm", learning_rate=0.5, safeguard="none", valid=valid, progress=False)
    with pytest.warns(UserWarning, match="the model keeps iteration"):
        best = optboost.boost("y ~ a + b", df, n_iter=40, **common)
    last = optboost.boost("y ~ a + b", df, n_iter=40, keep="last", **common)
    valid_losses = best.history["valid_loss"].to_numpy()
    assert best.kept_iteration == valid_losses.argmin() + 1 < 40  # the default: the best iterate
    assert last.kept_iteration == last.n_iter == 40
    np.testing.assert_array_equal(last.predict(valid), last.predict(valid, iteration=40))
    for k in (1, 17, 40):
        fresh = optboost.boost("y ~ a + b", df, n_iter=k, keep="last", **common)
        np.testing.assert_allclose(
            last.predict(valid, iteration=k), fresh.predict(valid), rtol=0, atol=1e-12
        )
    # Early stopping: "best" goes back to the best iteration, "last" keeps where it stopped.
    stopping = dict(method="gbm", learning_rate=1.0, n_iter=200, early_stopping_rounds=3,
                    valid=valid, progress=False)
    stopped_best = optboost.boost("y ~ a + b", df, **stopping)
    stopped_last = optboost.boost("y ~ a + b", df, keep="last", **stopping)
    assert stopped_best.n_iter == stopped_last.n_iter < 200
    assert stopped_best.kept_iteration == stopped_best.n_iter - 3
    assert stopped_last.kept_iteration == stopped_last.n_iter
    np.testing.assert_array_equal(
        stopped_last.predict(valid, iteration=stopped_best.kept_iteration),
        stopped_best.predict(valid),
    )


@pytest.mark.timeout(120)
def test_the_preset_holds_out_nothing_says_what_it_set_and_yields_to_explicit_parameters():
    x, y = regression_data()
    df = frame(x, y, False)
    model = optboost.boost("y ~ a + b", df, method="agbm", n_iter=5, preset="paper", progress=False)
    assert model.history["valid_loss"].null_count() == len(model.history)  # every row trains
    text = model.summary()
    assert "preset paper set:" in text and "safeguard=none" in text and "init=zero" in text
    given = optboost.boost(
        "y ~ a + b", df, method="agbm", n_iter=5, preset="paper", init="optimal", progress=False
    )
    assert "init=zero" not in given.summary()
    assert given.history["train_loss"][0] != model.history["train_loss"][0]
    # Without the preset the defaults stand: the held-out tenth and the safeguard.
    plain = optboost.boost("y ~ a + b", df, method="agbm", n_iter=5, progress=False)
    assert plain.history["valid_loss"].null_count() == 0
    assert "preset" not in plain.summary()
