"""The ranking losses from Python: group= through boost's fit plan (unsorted, singleton and
equal-label groups, the checks), whole-group holdout and cross-validation folds, the ranking
metrics against a brute-force NDCG, BoostRanker, the CLI's --group and Dask's refusal."""

import numpy as np
import polars as pl
import pytest

import optboost
from optboost import MissingColumnError
from optboost.errors import DataError, ParameterError


def queries(n_groups: int = 80, seed: int = 0) -> pl.DataFrame:
    """Documents of `n_groups` queries, rows of all queries shuffled together, relevance 0..3
    graded against the query's own documents."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 25, n_groups)  # some queries of one row
    qid = np.repeat(np.arange(n_groups) * 7 + 100, sizes)
    n = len(qid)
    x1, x2, noise = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
    u = 2 * x1 - x2 + 0.3 * noise
    frame = pl.DataFrame({"qid": qid.astype(str), "x1": x1, "x2": x2, "u": u})
    frame = frame.with_columns(
        rel=((pl.col("u") - pl.col("u").mean().over("qid")) + 1.5).clip(0, 3).floor()
    ).drop("u")
    return frame.sample(fraction=1.0, shuffle=True, seed=seed)


def ndcg10(rel: np.ndarray, score: np.ndarray, qid: np.ndarray) -> float:
    values = []
    for q in np.unique(qid):
        rows = np.flatnonzero(qid == q)
        gains = 2.0 ** rel[rows] - 1
        disc = 1 / np.log2(np.arange(2, 2 + len(rows)))[:10]
        got = gains[np.argsort(-score[rows], kind="stable")][:10]
        best = (np.sort(gains)[::-1][:10] * disc).sum()
        values.append(1.0 if best == 0 else (got * disc[: len(got)]).sum() / best)
    return float(np.mean(values))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("loss", ["lambdarank", "lambdarank(10)", "pairwise", "rank_xendcg"])
def test_every_ranking_loss_ranks_held_out_queries(loss):
    train, test = queries(120, 1), queries(60, 2)
    model = optboost.boost("rel ~ .", data=train, loss=loss, group="qid", n_iter=60)
    assert model.feature_names == ["x1", "x2"]  # qid left out of `.`
    score = np.asarray(model.predict(test))
    got = ndcg10(test["rel"].to_numpy(), score, test["qid"].to_numpy())
    constant = ndcg10(test["rel"].to_numpy(), np.zeros(test.height), test["qid"].to_numpy())
    assert got > 0.9 and got > constant + 0.2, (got, constant)


@pytest.mark.timeout(120)
def test_metrics_match_brute_force_and_holdout_keeps_groups_whole():
    data = queries(100, 3)
    valid = queries(40, 4)
    model = optboost.boost(
        "rel ~ x1 + x2", data=data, loss="pairwise", group="qid", n_iter=15,
        metrics=["ndcg@10", "map@3", "mrr"], valid=valid,
    )
    score = np.asarray(model.predict(valid))
    brute = ndcg10(valid["rel"].to_numpy(), score, valid["qid"].to_numpy())
    assert model.history["valid_ndcg@10"][-1] == pytest.approx(brute, abs=1e-12)
    assert "valid_map@3" in model.history.columns and "train_mrr" in model.history.columns
    # validation_fraction holds out whole groups: the same NDCG whatever the row order
    held = optboost.boost("rel ~ x1 + x2", data=data, loss="lambdarank", group="qid",
                          n_iter=5, metrics="ndcg@10", validation_fraction=0.25)
    assert not np.isnan(held.history["valid_ndcg@10"][-1])
    with pytest.raises(ParameterError, match="ndcg@k"):
        optboost.boost("rel ~ x1", data=data, loss="pairwise", group="qid", metrics="ndcg")


def test_group_checks_name_the_problem():
    data = queries(10, 5)
    with pytest.raises(ParameterError, match="group="):
        optboost.boost("rel ~ x1", data=data, loss="lambdarank", n_iter=2)
    with pytest.raises(ParameterError, match="ranking losses"):
        optboost.boost("rel ~ x1", data=data, loss="squared", group="qid", n_iter=2)
    with pytest.raises(MissingColumnError, match="qd"):
        optboost.boost("rel ~ x1", data=data, loss="pairwise", group="qd", n_iter=2)
    holes = data.with_columns(qid=pl.when(pl.int_range(pl.len()) == 3).then(None)
                              .otherwise(pl.col("qid")))
    with pytest.raises(DataError, match="row 3"):
        optboost.boost("rel ~ x1", data=holes, loss="pairwise", group="qid", n_iter=2)
    with pytest.raises(DataError, match="values for the"):
        optboost.boost("rel ~ x1", data=data, loss="pairwise", group=[1, 2], n_iter=2)
    with pytest.raises(optboost.OptboostError, match="relevance"):
        optboost.boost("rel ~ x1", data=data.with_columns(rel=pl.col("rel") + 40),
                       loss="lambdarank", group="qid", n_iter=2)


def test_singleton_and_equal_label_groups_and_given_ids():
    # Two groups of equal labels and one singleton beside a real group: only the real group
    # moves the scores; ids as an array work as a column does.
    frame = pl.DataFrame({
        "x": [0.1, 0.5, 0.9, 0.3, 0.7, 0.2, 0.8, 0.4],
        "rel": [0.0, 1.0, 2.0, 1.0, 1.0, 3.0, 2.0, 2.0],
    })
    ids = [5, 5, 5, 9, 9, 1, 2, 2]
    model = optboost.boost("rel ~ x", data=frame, loss="pairwise", group=ids, n_iter=5,
                           min_samples_leaf=1)
    score = np.asarray(model.predict(frame))
    assert score[2] > score[0]
    lone = optboost.boost("rel ~ x", data=frame.with_columns(q=pl.lit(1)), loss="pairwise",
                          group=[0, 1, 2, 3, 4, 5, 6, 7], n_iter=3)
    assert np.all(np.asarray(lone.predict(frame)) == 0.0)  # no pair anywhere: nothing learnt


@pytest.mark.timeout(120)
def test_cv_folds_never_split_a_group():
    data = queries(40, 6)
    result = optboost.cv("rel ~ x1 + x2", data, folds=4, loss="lambdarank", group="qid",
                         n_iter=5, metrics=["ndcg@10"])
    qid = data["qid"].to_numpy()
    for rows in result.folds:
        inside = np.zeros(len(qid), dtype=bool)
        inside[rows] = True
        assert not set(qid[inside]) & set(qid[~inside])
    assert result.metrics is not None
    split = [list(range(0, data.height, 2)), list(range(1, data.height, 2))]
    with pytest.raises(ParameterError, match="splits the query group"):
        optboost.cv("rel ~ x1", data, folds=split, loss="pairwise", group="qid", n_iter=2)


@pytest.mark.timeout(120)
def test_boost_ranker_and_the_cli(tmp_path):
    pytest.importorskip("sklearn")
    from optboost.sklearn import BoostRanker

    train, test = queries(80, 7), queries(30, 8)
    X, y, ids = train.select("x1", "x2"), train["rel"], train["qid"]
    ranker = BoostRanker(n_iter=40, params={"metrics": "ndcg@10"}).fit(
        X, y, group=ids, eval_set=(test.select("x1", "x2"), test["rel"]),
        eval_group=test["qid"],
    )
    score = ranker.predict(test.select("x1", "x2"))
    assert score.shape == (test.height,)
    assert ndcg10(test["rel"].to_numpy(), score, test["qid"].to_numpy()) > 0.9
    assert "valid_ndcg@10" in ranker.history_.columns
    with pytest.raises(ParameterError, match="ranking loss"):
        BoostRanker(loss="squared").fit(X, y, group=ids)
    with pytest.raises(ParameterError, match="eval_group"):
        BoostRanker().fit(X, y, group=ids, eval_set=(X, y))

    from optboost.cli import main

    path = tmp_path / "q.csv"
    train.write_csv(path)
    out = tmp_path / "m.json"
    assert main(["fit", str(path), "rel ~ x1 + x2", "--loss", "pairwise", "--group", "qid",
                 "--n-iter", "5", "-o", str(out), "--quiet"]) == 0
    assert optboost.load(out).predict(test).shape[0] == test.height


def test_dask_refuses_ranking_losses_with_a_reason():
    dd = pytest.importorskip("dask.dataframe")
    pytest.importorskip("distributed")
    import optboost.dask

    ddf = dd.from_pandas(queries(10, 9).to_pandas(), npartitions=2)
    with pytest.raises(ParameterError, match="ranking loss"):
        optboost.dask.boost("rel ~ x1", ddf, loss="lambdarank", group="qid", client=object())
