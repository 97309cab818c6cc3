#!/usr/bin/env python3
"""optboost's lambdarank against LightGBM's ``lambdarank`` and XGBoost's ``rank:ndcg`` on a
learning-to-rank set from a documented generator (``queries`` below), NDCG@10 and fit time.

The set: 1,200 queries of 5 to 60 documents (uniform), 20 features drawn N(0, 1), of which
the first 8 carry signal; a document's utility is
    u = 1.5 x0 − x1 + x2·x3 + sin(2 x4) + 0.5 [x5 > 0] + 0.5 x6² − 0.3 x7 + 0.5 ε
with ε standard normal noise; the relevance label is graded against the query's own
documents: label = clip(floor(1.2 (u − c) + 2), 0, 4), c the query's mean utility (so the
same document is relevant in one query and not in another, which a regression on the features
cannot see). The rows of all queries are shuffled together (optboost takes query ids; the
others get rows sorted by query, with group sizes).

Protocol: 5 splits (seeds 0..4) of the queries into 60% train, 20% validation (unused: a fixed
number of iterations), 20% test; every library with 300 iterations, learning rate 0.1, 31
leaves grown leaf-wise, min 20 rows per leaf, NDCG truncation 30 (LightGBM's default), label
gain 2^rel − 1; n_threads 1 and 2. Reported: mean ± one standard error over the splits of the
test NDCG@10 (every query; a query without a relevant document counts 1, LightGBM's
convention) and of the seconds per fit.

    nice -n 10 python benches/ranking.py                  # 5 splits, 1 and 2 threads
    nice -n 10 python benches/ranking.py --splits 2 --threads 1 --libraries optboost
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import polars as pl

import optboost

N_QUERIES, N_FEATURES, N_ITER = 1200, 20, 300


def queries(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """X (n × 20), relevance labels 0..4 and query ids of the generator in the module header."""
    rng = np.random.default_rng(1000 + seed)
    sizes = rng.integers(5, 61, N_QUERIES)
    qid = np.repeat(np.arange(N_QUERIES), sizes)
    n = len(qid)
    x = rng.standard_normal((n, N_FEATURES))
    u = (
        1.5 * x[:, 0] - x[:, 1] + x[:, 2] * x[:, 3] + np.sin(2 * x[:, 4]) + 0.5 * (x[:, 5] > 0)
        + 0.5 * x[:, 6] ** 2 - 0.3 * x[:, 7] + 0.5 * rng.standard_normal(n)
    )
    centre = np.bincount(qid, weights=u) / sizes
    label = np.clip(np.floor(1.2 * (u - centre[qid]) + 2), 0, 4)
    order = rng.permutation(n)  # queries interleaved, documents shuffled
    return x[order], label[order], qid[order]


def ndcg_at_10(label: np.ndarray, score: np.ndarray, qid: np.ndarray) -> float:
    values = []
    for q in np.unique(qid):
        rows = np.flatnonzero(qid == q)
        gains = 2.0 ** label[rows] - 1
        discount = 1 / np.log2(np.arange(2, 12))
        by_score = gains[np.argsort(-score[rows], kind="stable")][:10]
        ideal = np.sort(gains)[::-1][:10]
        best = (ideal * discount[: len(ideal)]).sum()
        values.append(1.0 if best == 0 else (by_score * discount[: len(by_score)]).sum() / best)
    return float(np.mean(values))


def fit_optboost(x, y, qid, threads):
    frame = pl.DataFrame(x, schema=[f"x{j}" for j in range(N_FEATURES)]).with_columns(
        rel=pl.Series(y), qid=pl.Series(qid)
    )
    model = optboost.boost(
        "rel ~ .", frame, loss="lambdarank", group="qid", n_iter=N_ITER, learning_rate=0.1,
        growth="leafwise", max_leaves=31, max_depth=32, min_samples_leaf=20, n_threads=threads,
        validation_fraction=None,
        progress=False,
    )
    return lambda xt: model.predict(
        pl.DataFrame(xt, schema=[f"x{j}" for j in range(N_FEATURES)])
    )


def sorted_by_query(x, y, qid):
    order = np.argsort(qid, kind="stable")
    return x[order], y[order], np.unique(qid[order], return_counts=True)[1]


def fit_lightgbm(x, y, qid, threads):
    import lightgbm

    xs, ys, sizes = sorted_by_query(x, y, qid)
    model = lightgbm.LGBMRanker(
        objective="lambdarank", n_estimators=N_ITER, learning_rate=0.1, num_leaves=31,
        min_child_samples=20, n_jobs=threads, verbose=-1,
    )
    model.fit(xs, ys, group=sizes)
    return model.predict


def fit_xgboost(x, y, qid, threads):
    import xgboost

    order = np.argsort(qid, kind="stable")
    model = xgboost.XGBRanker(
        objective="rank:ndcg", n_estimators=N_ITER, learning_rate=0.1, max_leaves=31,
        grow_policy="lossguide", max_depth=0, min_child_weight=0, tree_method="hist",
        lambdarank_pair_method="topk", lambdarank_num_pair_per_sample=30, n_jobs=threads,
    )
    model.fit(x[order], y[order], qid=qid[order])
    return model.predict


LIBRARIES = {"optboost": fit_optboost, "lightgbm": fit_lightgbm, "xgboost": fit_xgboost}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--libraries", nargs="+", default=list(LIBRARIES), choices=list(LIBRARIES))
    args = parser.parse_args()
    x, y, qid = queries(0)
    print(f"{N_QUERIES} queries, {len(y)} rows, {N_FEATURES} features, labels "
          f"{np.bincount(y.astype(int)).tolist()} (counts of 0..4)")
    for threads in args.threads:
        print(f"\nn_threads = {threads}: test NDCG@10 and seconds per fit, mean ± se over "
              f"{args.splits} splits")
        for name in args.libraries:
            fit = LIBRARIES[name]
            scores, seconds = [], []
            for seed in range(args.splits):
                x, y, qid = queries(seed)
                picked = np.random.default_rng(seed).permutation(N_QUERIES)
                train_q, test_q = picked[: int(0.6 * N_QUERIES)], picked[int(0.8 * N_QUERIES):]
                train, test = np.isin(qid, train_q), np.isin(qid, test_q)
                start = time.perf_counter()
                predict = fit(x[train], y[train], qid[train], threads)
                seconds.append(time.perf_counter() - start)
                scores.append(ndcg_at_10(y[test], np.asarray(predict(x[test])), qid[test]))
            se = lambda v: np.std(v, ddof=1) / np.sqrt(len(v)) if len(v) > 1 else float("nan")
            print(f"  {name:9s} NDCG@10 {np.mean(scores):.4f} ± {se(scores):.4f}   "
                  f"{np.mean(seconds):6.2f} ± {se(seconds):.2f} s   per split "
                  + " ".join(f"{s:.4f}" for s in scores))


if __name__ == "__main__":
    main()
