"""The cox loss from Python: Surv(time, event) targets, one stump matched
against XGBoost's survival:cox (same split, its Newton leaves, its
cox-nloglik), ranking of held-out rows (concordance), and the errors."""

import numpy as np
import polars as pl
import pytest

import optboost


def survival_frame(n: int, seed: int, ties: bool = True) -> tuple[pl.DataFrame, np.ndarray]:
    """Exponential survival times with hazard exp(0.04 (age − 60) + 0.7 sex −
    0.5 treated + stage effect), independent exponential censoring (about a
    third censored), and the true log hazard."""
    rng = np.random.default_rng(seed)
    age = np.round(rng.uniform(30, 90, n))
    sex = rng.integers(0, 2, n)
    treated = rng.integers(0, 2, n)
    stage = rng.integers(1, 5, n)
    log_hazard = 0.04 * (age - 60) + 0.7 * sex - 0.5 * treated + np.log(stage) - 2.0
    event_time = rng.exponential(1.0, n) / np.exp(log_hazard)
    censor_time = rng.exponential(12.0, n)
    time = np.minimum(event_time, censor_time)
    if ties:  # as in real data, recorded to the day
        time = np.round(time, 2) + 0.01
    status = event_time <= censor_time
    frame = pl.DataFrame(
        {"time": time, "status": status, "age": age, "sex": sex, "treated": treated,
         "stage": stage}
    )
    return frame, log_hazard


def concordance(signed_time: np.ndarray, score: np.ndarray) -> float:
    """Harrell's C: among pairs whose earlier time is an event, the share where
    the earlier row has the higher score (ties count half)."""
    time, event = np.abs(signed_time), signed_time > 0
    agree = pairs = 0.0
    for i in np.flatnonzero(event):
        later = time > time[i]
        pairs += later.sum()
        agree += (score[i] > score[later]).sum() + 0.5 * (score[i] == score[later]).sum()
    return agree / pairs


def neg_log_partial_likelihood(signed_time: np.ndarray, link: np.ndarray) -> float:
    """Σ over events of ln Σ_{risk set} e^f − f (Breslow), from the definition."""
    time = np.abs(signed_time)
    return sum(
        np.log(np.exp(link[time >= time[k]]).sum()) - link[k]
        for k in np.flatnonzero(signed_time > 0)
    )


def test_one_stump_matches_xgboost():
    xgb = pytest.importorskip("xgboost")
    # Without tied times: XGBoost's gradient of a row with tied times counts only the tied
    # events sorted before it (its loop adds them row by row), where the exact derivative counts
    # all of them, as optboost's does.
    frame, _ = survival_frame(600, 1, ties=False)
    # One integer covariate: both libraries see the same split candidates.
    frame = frame.select("time", "status", "stage")
    signed = np.where(frame["status"].to_numpy(), 1.0, -1.0) * frame["time"].to_numpy()
    x = frame.select("stage").to_numpy().astype(float)
    data = xgb.DMatrix(x, label=signed)
    evals: dict = {}
    params = {
        "objective": "survival:cox",
        "eval_metric": "cox-nloglik",
        "tree_method": "exact",
        "max_depth": 1,
        "eta": 1.0,
        "lambda": 1.0,
        "min_child_weight": 0.0,
        "base_score": 1.0,  # a margin of 0: the likelihood ignores a constant anyway
    }
    peer = xgb.train(params, data, 1, evals=[(data, "train")], evals_result=evals)
    peer_link = peer.predict(data, output_margin=True)
    model = optboost.boost(
        "Surv(time, status) ~ stage", frame, loss="cox", step="newton", l2_leaf=1.0,
        method="gbm", learning_rate=1.0, n_iter=1, max_depth=1, min_samples_leaf=1,
        validation_fraction=None,
    )
    link = model.predict(frame, type="link")
    assert len(np.unique(peer_link)) == 2, "XGBoost found no split"
    np.testing.assert_array_equal(link > link.mean(), peer_link > peer_link.mean())
    # XGBoost sums gradients in float32 and stores leaves in float32.
    np.testing.assert_allclose(link, peer_link, rtol=0, atol=1e-6)
    # cox-nloglik is the negative log partial likelihood per event; optboost's loss is per row.
    n_events = int(frame["status"].sum())
    ours = model.history["train_loss"][-1] * len(frame) / n_events
    np.testing.assert_allclose(ours, evals["train"]["cox-nloglik"][0], rtol=1e-6)
    np.testing.assert_allclose(
        ours, neg_log_partial_likelihood(signed, link) / n_events, rtol=1e-12
    )


def test_surv_formula_and_signed_time_column_give_the_same_model():
    frame, _ = survival_frame(300, 2)
    signed = np.where(frame["status"].to_numpy(), 1.0, -1.0) * frame["time"].to_numpy()
    common = dict(loss="cox", n_iter=10, max_depth=2, validation_fraction=None)
    surv = optboost.boost("Surv(time, status) ~ age + sex + stage", frame, **common)
    plain = optboost.boost(
        "y ~ age + sex + stage", frame.with_columns(y=pl.Series(signed)), **common
    )
    np.testing.assert_array_equal(surv.predict(frame, type="link"), plain.predict(frame, type="link"))
    # An integer 0/1 event column is the same as a boolean one.
    ints = frame.with_columns(pl.col("status").cast(pl.Int64))
    again = optboost.boost("Surv(time, status) ~ age + sex + stage", ints, **common)
    np.testing.assert_array_equal(again.predict(frame, type="link"), surv.predict(frame, type="link"))
    # type="response" is the relative hazard e^f.
    np.testing.assert_allclose(
        surv.predict(frame, type="response"), np.exp(surv.predict(frame, type="link")), rtol=1e-15
    )


@pytest.mark.filterwarnings("ignore:.*momentum step raised")
@pytest.mark.parametrize(
    "method", ["gbm", "rgbm", "agbm", "vagbm", "accelerated_gbm", "residual_gbm", "repeated_gbm"]
)
def test_held_out_rows_are_ranked_by_risk(method):
    train, _ = survival_frame(1500, 3)
    test, true_log_hazard = survival_frame(700, 4)
    signed_test = np.where(test["status"].to_numpy(), 1.0, -1.0) * test["time"].to_numpy()
    model = optboost.boost(
        "Surv(time, status) ~ age + sex + treated + stage", train, loss="cox", method=method,
        n_iter=60, max_depth=2, validation_fraction=None,
    )
    history = model.history["train_loss"].to_numpy()
    assert np.all(np.isfinite(history)) and history[-1] < history[0]
    c = concordance(signed_test, model.predict(test, type="link"))
    oracle = concordance(signed_test, true_log_hazard)
    assert c > 0.65 and c > oracle - 0.05, (c, oracle)


def test_errors_name_the_problem():
    frame, _ = survival_frame(50, 5)
    with pytest.raises(optboost.OptboostError, match=r"Surv\(time, event\) target needs loss='cox'"):
        optboost.boost("Surv(time, status) ~ age", frame, loss="squared", n_iter=2)
    for method in ["proximal", "residual_proximal", "accelerated_proximal"]:
        with pytest.raises(optboost.OptboostError, match="proximal operator is not a per-row"):
            optboost.boost("Surv(time, status) ~ age", frame, loss="cox", method=method, n_iter=2)
    bad = frame.with_columns(pl.Series("status", [2] + [1] * 49))
    with pytest.raises(optboost.OptboostError, match=r"row 0 has event 2\.0"):
        optboost.boost("Surv(time, status) ~ age", bad, loss="cox", n_iter=2)
    bad = frame.with_columns(pl.Series("time", [0.0] + [1.0] * 49))
    with pytest.raises(optboost.OptboostError, match=r"row 0 has time 0\.0"):
        optboost.boost("Surv(time, status) ~ age", bad, loss="cox", n_iter=2)
    # R gbm's name for the loss
    assert optboost.boost("Surv(time, status) ~ age", frame, loss="coxph", n_iter=2).params[
        "loss"
    ] == "cox"
    zero = frame.with_columns(y=pl.Series([1.0, 0.0] + [2.0] * 48))
    with pytest.raises(optboost.OptboostError, match=r"row 1 is 0 \(the cox loss needs a signed time"):
        optboost.boost("y ~ age", zero, loss="cox", n_iter=2, validation_fraction=None)
    with pytest.raises(optboost.OptboostError, match="is a target, on the left"):
        optboost.boost("time ~ Surv(age, sex)", frame, loss="cox", n_iter=2)


def split_follow_up(frame: pl.DataFrame, seed: int) -> pl.DataFrame:
    """Each row's follow-up split at a random time into two counting-process
    rows with the same covariates, the first censored at the split."""
    rng = np.random.default_rng(seed)
    split = frame["time"].to_numpy() * rng.uniform(0.2, 0.8, len(frame))
    first = frame.with_columns(
        start=pl.lit(0.0), stop=pl.Series(split), status=pl.lit(False)
    )
    second = frame.with_columns(start=pl.Series(split), stop=pl.col("time"))
    return pl.concat([first, second]).drop("time")


def test_counting_process_and_strata_targets():
    frame, _ = survival_frame(200, 6)
    common = dict(loss="cox", n_iter=8, max_depth=2, validation_fraction=None)
    plain = optboost.boost("Surv(time, status) ~ age + stage", frame, **common)
    # Start 0 everywhere: the counting-process target is the plain one.
    zero = frame.with_columns(start=pl.lit(0.0))
    counting = optboost.boost("Surv(start, time, status) ~ age + stage", zero, **common)
    np.testing.assert_allclose(
        counting.predict(frame, type="link"), plain.predict(frame, type="link"), atol=1e-12
    )
    # One stratum per sex: the loss is the sum of each stratum's partial likelihood, so the
    # strata column enters no tree and `.` leaves it out.
    stratified = optboost.boost(
        "Surv(time, status) ~ . + strata(sex)", frame.drop("treated"), **common
    )
    assert "sex" not in stratified.feature_names
    assert stratified.spec.strata == ("sex",)
    assert optboost.Model.from_dict(stratified.to_dict()).spec.strata == ("sex",)
    split = split_follow_up(frame, 7)
    model = optboost.boost(
        "Surv(start, stop, status) ~ age + treated + stage + strata(sex)", split,
        loss="cox(ties=efron)", n_iter=40, max_depth=2, validation_fraction=None,
    )
    history = model.history["train_loss"].to_numpy()
    assert history[-1] < history[0]
    y = model.spec.target_values(split)
    assert y.shape == (len(split), 3)
    np.testing.assert_array_equal(np.unique(y[:, 2]), [0.0, 1.0])
    bad = split.with_columns(start=pl.col("stop") + 1.0)
    with pytest.raises(optboost.OptboostError, match=r"row 0 starts at .* and stops at"):
        optboost.boost("Surv(start, stop, status) ~ age", bad, loss="cox", n_iter=2)
    with pytest.raises(optboost.OptboostError, match=r"strata\(\) takes column names"):
        optboost.boost("Surv(time, status) ~ age + strata(sex + 1)", frame, loss="cox", n_iter=2)
