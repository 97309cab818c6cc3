"""Conformal intervals and sets (optboost.conformal): coverage at least level − 1/(n+1) over
many random calibration/test splits, at most level + 1/(n+1) (the scores do not tie), the level
chosen at predict time, scores saved and checked on load."""

import json

import numpy as np
import polars as pl
import pytest

import optboost
from optboost.errors import ModelFileError, ParameterError


def _regression(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, size=n)
    y = np.sin(2 * x) + (0.2 + 0.5 * np.abs(x)) * rng.normal(size=n)
    return pl.DataFrame({"x": x, "w": rng.normal(size=n), "y": y})


def _classes(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2))
    logits = np.column_stack([x[:, 0], x[:, 1], -x[:, 0] - x[:, 1]]) * 1.5
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    label = np.array([rng.choice(3, p=row) for row in p])
    return pl.DataFrame({"a": x[:, 0], "b": x[:, 1], "y": np.array(["u", "v", "w"])[label]})


def _coverage(model, pool, covered, level, n_cal=99, splits=300, seed=0):
    """Mean coverage of the test rows over random calibration/test splits of ``pool``."""
    rng = np.random.default_rng(seed)
    shares = []
    for _ in range(splits):
        order = rng.permutation(pool.height)
        cal, test = pool[order[:n_cal]], pool[order[n_cal:]]
        shares.append(covered(model.conformalize(cal), test, level).mean())
    return float(np.mean(shares))


def _in_interval(cm, test, level):
    interval = cm.predict(test, type="interval", level=level)
    y = test["y"].to_numpy()
    return (interval["lower"].to_numpy() <= y) & (y <= interval["upper"].to_numpy())


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "loss", ["squared", "absolute", optboost.Quantiles([0.1, 0.5, 0.9])], ids=str
)
def test_interval_coverage_is_within_the_finite_sample_bounds(loss):
    model = optboost.boost("y ~ x + w", _regression(400, 1), loss=loss, n_iter=30)
    pool = _regression(300, 2)
    n_cal = 99
    for level in (0.8, 0.9):
        coverage = _coverage(model, pool, _in_interval, level, n_cal=n_cal)
        assert coverage >= level - 1 / (n_cal + 1), (level, coverage)
        assert coverage <= level + 1 / (n_cal + 1) + 0.01, (level, coverage)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("score", ["lac", "aps"])
def test_set_coverage_is_within_the_finite_sample_bounds(score):
    model = optboost.boost("y ~ a + b", _classes(400, 3), loss="softmax", n_iter=30)
    pool = _classes(300, 4)

    def covered(cm, test, level):
        sets = cm.predict(test, type="set", level=level)["set"].to_list()
        return np.array([y in s for y, s in zip(test["y"].to_list(), sets)])

    def conformalize_with(model, score):
        class Scored:
            def conformalize(self, cal):
                return model.conformalize(cal, score=score)

        return Scored()

    n_cal = 99
    coverage = _coverage(conformalize_with(model, score), pool, covered, 0.9, n_cal=n_cal)
    assert coverage >= 0.9 - 1 / (n_cal + 1), coverage
    assert coverage <= 0.9 + 1 / (n_cal + 1) + 0.01, coverage


def test_binary_sets_use_both_classes():
    rng = np.random.default_rng(5)
    x = rng.normal(size=600)
    y = np.where(rng.uniform(size=600) < 1 / (1 + np.exp(-2 * x)), "yes", "no")
    frame = pl.DataFrame({"x": x, "y": y})
    model = optboost.boost("y ~ x", frame[:300], loss="logistic", n_iter=20)
    cm = model.conformalize(frame[300:])
    sets = cm.predict(pl.DataFrame({"x": [-3.0, 0.0, 3.0]}), type="set", level=0.8)["set"]
    assert sets.to_list()[0] == ["no"] and sets.to_list()[2] == ["yes"]


def test_the_level_is_chosen_at_predict_time_and_intervals_nest():
    model = optboost.boost("y ~ x + w", _regression(300, 6), n_iter=20)
    cm = model.conformalize(_regression(200, 7))
    new = _regression(50, 8)
    widths = [
        (lambda f: (f["upper"] - f["lower"]).to_numpy())(cm.predict(new, type="interval", level=lv))
        for lv in (0.5, 0.8, 0.95)
    ]
    assert np.all(widths[0] <= widths[1]) and np.all(widths[1] <= widths[2])
    assert np.all(widths[0] < widths[2])
    # A level past what n scores can certify gives an infinite interval, not a false one.
    assert np.isinf(cm.predict(new, type="interval", level=0.999)["upper"].to_numpy()).all()
    # The uncalibrated model is unchanged and refuses intervals.
    assert model.conformal is None
    with pytest.raises(ParameterError, match="conformalize"):
        model.predict(new, type="interval", level=0.9)
    with pytest.raises(ParameterError, match=r"level must be a number in \(0, 1\)"):
        cm.predict(new, type="interval", level=1.5)
    with pytest.raises(ParameterError, match="type='set' is for classification"):
        cm.predict(new, type="set", level=0.9)
    with pytest.raises(ParameterError, match="does not fit"):
        model.conformalize(_regression(20, 9), score="lac")


def test_scores_are_saved_as_numbers_and_checked_on_load(tmp_path):
    model = optboost.boost("y ~ x + w", _regression(200, 10), loss=optboost.Quantiles([0.1, 0.9]))
    cm = model.conformalize(_regression(100, 11))
    path = tmp_path / "cm.json"
    cm.save(path)
    data = json.loads(path.read_text())
    assert data["conformal"]["score"] == "cqr" and len(data["conformal"]["values"]) == 100
    loaded = optboost.load(path)
    new = _regression(30, 12)
    assert loaded.predict(new, type="interval", level=0.9).equals(
        cm.predict(new, type="interval", level=0.9)
    )
    for bad, says in [
        ({"score": "eval", "values": [1.0]}, "not one of"),
        ({"score": "cqr", "values": []}, "1 to"),
        ({"score": "cqr", "values": ["1"]}, "numbers"),
        ({"score": "lac", "values": [0.5]}, "does not fit"),
        ({"score": "cqr", "values": [0.1], "extra": 1}, "must be"),
    ]:
        path.write_text(json.dumps({**data, "conformal": bad}))
        with pytest.raises(ModelFileError, match=says):
            optboost.load(path)
    # NaN has no JSON spelling; a huge number where a probability must be is refused.
    path.write_text(json.dumps({**data, "conformal": {"score": "cqr", "values": [1e400]}}).replace("Infinity", "1e999"))
    with pytest.raises(ModelFileError):
        optboost.load(path)


def test_the_threshold_is_the_ceil_n_plus_one_level_th_smallest_score():
    from optboost.conformal import Calibration

    calibration = Calibration("absolute", np.arange(99, 0, -1, dtype=float))  # 1..99, unsorted
    assert calibration.threshold(0.9) == 90.0  # ⌈100 · 0.9⌉ = 90
    assert calibration.threshold(0.95) == 95.0
    assert calibration.threshold(0.901) == 91.0
    assert calibration.threshold(0.99) == 99.0
    assert calibration.threshold(0.991) == np.inf  # ⌈99.1⌉ = 100 > n


def _cv_plus_by_hand(result, data, new, level):
    """CV+ (Barber et al. 2021) written out: every row's score by the model that held it out,
    then the order statistics of the fold models' predictions shifted by those scores."""
    lows, highs = [], []
    for fold, rows in enumerate(result.folds):
        model = result.models[fold]
        held_out = data[rows]
        y = held_out["y"].to_numpy()
        fitted = np.asarray(model.predict(held_out, type="response"))
        for r in np.abs(y - fitted):
            center = np.asarray(model.predict(new, type="response"))
            lows.append(center - r)
            highs.append(center + r)
    lows, highs = np.array(lows), np.array(highs)  # (n, m)
    n, alpha = lows.shape[0], 1 - level
    lo_rank, hi_rank = int(np.floor(alpha * (n + 1))), int(np.ceil((1 - alpha) * (n + 1)))
    lower = np.sort(lows, axis=0)[lo_rank - 1] if lo_rank >= 1 else np.full(new.height, -np.inf)
    upper = np.sort(highs, axis=0)[hi_rank - 1] if hi_rank <= n else np.full(new.height, np.inf)
    return lower, upper


@pytest.mark.timeout(120)
def test_cv_plus_intervals_equal_the_order_statistics_written_out():
    data, new = _regression(60, 5), _regression(7, 6)
    result = optboost.cv("y ~ x + w", data, folds=4, conformal=True, n_iter=8, keep_models=True)
    for level in (0.5, 0.8, 0.9):
        got = result.conformal.predict(new, type="interval", level=level)
        lower, upper = _cv_plus_by_hand(result, data, new, level)
        np.testing.assert_array_equal(got["lower"].to_numpy(), lower)
        np.testing.assert_array_equal(got["upper"].to_numpy(), upper)
    # Past 1 − 1/(n + 1) the upper rank passes n: the interval is unbounded.
    wide = result.conformal.predict(new, level=0.99)
    assert np.isinf(wide["upper"].to_numpy()).all() and np.isinf(wide["lower"].to_numpy()).all()


@pytest.mark.timeout(300)
@pytest.mark.filterwarnings("ignore::optboost.errors.WorseThanConstantWarning")
@pytest.mark.parametrize("loss", ["squared", optboost.Quantiles([0.1, 0.9])], ids=str)
def test_cv_plus_coverage_holds_over_random_draws(loss):
    """Barber et al.'s Theorem 4 bounds CV+'s coverage below by 1 − 2α − (a term of order K/n);
    in practice it is about the level: the mean over draws must be within 3 points of it."""
    level, coverages = 0.8, []
    for draw in range(25):
        train, test = _regression(80, 100 + draw), _regression(200, 200 + draw)
        result = optboost.cv("y ~ x + w", train, folds=5, conformal=True, loss=loss, n_iter=15)
        assert result.conformal.score == ("absolute" if loss == "squared" else "cqr")
        assert len(result.conformal.models) == 5 and result.models is None
        coverages.append(_in_interval(result.conformal, test, level).mean())
    assert abs(np.mean(coverages) - level) <= 0.03, np.mean(coverages)


def test_cv_plus_refuses_what_would_break_its_guarantee():
    data = _regression(60, 7)
    with pytest.raises(ParameterError, match="early_stopping_rounds"):
        optboost.cv("y ~ x", data, conformal=True, early_stopping_rounds=5, n_iter=5)
    with pytest.raises(ParameterError, match="keep='best'"):
        optboost.cv("y ~ x", data, conformal=True, keep="best", method="agbm", n_iter=5)
    classes = _classes(60, 8)
    with pytest.raises(ParameterError, match="conformalize"):
        optboost.cv("y ~ a + b", classes, conformal=True, loss="softmax", n_iter=5)
    result = optboost.cv("y ~ x", data, conformal=True, n_iter=5)
    with pytest.raises(ParameterError, match="level"):
        result.conformal.predict(data, level=1.5)
    with pytest.raises(ParameterError, match="interval"):
        result.conformal.predict(data, type="set")


@pytest.mark.timeout(120)
def test_cv_plus_of_a_distributional_model_scales_each_score_by_the_fold_models_sd():
    data, new = _regression(60, 9), _regression(5, 10)
    result = optboost.cv("y ~ x + w", data, folds=3, conformal=True, loss="normal", n_iter=8)
    assert result.conformal.score == "normalized"
    lows, highs = [], []
    for fold, rows in enumerate(result.folds):
        model = result.conformal.models[fold]
        held, fresh = model.predict(data[rows], type="distribution"), model.predict(new, type="distribution")
        for r in np.abs(data[rows]["y"].to_numpy() - held["mean"].to_numpy()) / held["sd"].to_numpy():
            lows.append(fresh["mean"].to_numpy() - r * fresh["sd"].to_numpy())
            highs.append(fresh["mean"].to_numpy() + r * fresh["sd"].to_numpy())
    n, level = len(lows), 0.8
    got = result.conformal.predict(new, level=level)
    lo_rank, hi_rank = int(np.floor(0.2 * (n + 1))), int(np.ceil(0.8 * (n + 1)))
    np.testing.assert_allclose(got["lower"].to_numpy(), np.sort(lows, axis=0)[lo_rank - 1], rtol=1e-12)
    np.testing.assert_allclose(got["upper"].to_numpy(), np.sort(highs, axis=0)[hi_rank - 1], rtol=1e-12)
