"""optboost against LightGBM, XGBoost and scikit-learn's HistGradientBoosting on every shared
data set, under two protocols, each with early stopping on a validation part:

(a) defaults: every library with its own defaults (only the objective, one thread and the
    early stopping are set), and every accelerated or proximal method of optboost with its
    defaults;
(b) same grid: learning rate {0.05, 0.1} × depth {3, 6} for every library and every optboost
    method (on the multiclass sets for gbm only: K trees per round make the other methods'
    grid the most costly part of the run), the configuration with the best validation loss
    kept. Parameters outside the grid
    keep each library's defaults; LightGBM and scikit-learn, which bound trees by leaves, get
    2^depth leaves so that depth decides.

Each data set: 5 random 60/20/20 train/validation/test splits of at most ROW_CAP rows (a seeded
subsample: the multiclass sets cost K trees per round and the machine is two shared cores).
The test metric is RMSE (regression) or log loss (classification; the error rate is reported
too), mean ± standard error over the splits. A cell is one data set under one protocol:
optboost's default method (gbm) *wins* it when its mean is the lowest, and is *within 1 se*
when its mean is at most the best library's mean plus that library's standard error.

    python benches/reproduce/peers.py [--workers 2] [--report-only] [--recompute proximal,...]

Per-split results are cached in $OPTBOOST_BENCH_CACHE (default /tmp/optboost-peers) so that an
interrupted run resumes; delete the directory to start over, or name the entries whose models
changed with --recompute to compute only those afresh.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import common as C
import numpy as np

DATASETS = {
    "boston_housing": "regression",
    "concrete": "regression",
    "crabs": "regression",
    "diamonds": "regression",
    "redwine": "regression",
    "sklearn_diabetes": "regression",
    "a1a": "binary",
    "adult": "binary",
    "german_credit": "binary",
    "pima_diabetes": "binary",
    "sonar": "binary",
    "connect_4": "multiclass",
    "letter": "multiclass",
    "pendigits": "multiclass",
    "penguins": "multiclass",
    "satimage": "multiclass",
}
# engel and mcycle (one feature each) are curve examples for the quantile losses, not
# prediction benchmarks; adult_test is adult's second file.
LOSS = {"regression": "squared", "binary": "logistic", "multiclass": "softmax"}
LIBS = ["optboost", "lightgbm", "xgboost", "sklearn"]
DEFAULT_METHOD = "gbm"
OTHER_METHODS = [
    "agbm",
    "agbmr",
    "vagbm",
    "accelerated_gbm",
    "accelerated_proximal",
    "proximal",
    "residual_proximal",
]
GRID = [(lr, depth) for lr in (0.05, 0.1) for depth in (3, 6)]
N_SPLITS = 5
ROW_CAP = 5000
ROUNDS = {"regression": 1000, "binary": 1000, "multiclass": 500}
PATIENCE = 50
CACHE = Path(os.environ.get("OPTBOOST_BENCH_CACHE", "/tmp/optboost-peers"))


def test_metrics(task: str, y, pred) -> dict[str, float]:
    if task == "regression":
        return {"rmse": C.rmse(y, pred)}
    cls = (pred > 0.5).astype(int) if task == "binary" else pred.argmax(axis=1)
    return {"logloss": C.log_loss(y, pred), "error": C.error_rate(y, cls)}


def selection_metric(task: str) -> str:
    return "rmse" if task == "regression" else "logloss"


def peer_defaults(lib, task, n_classes, rounds, x_tr, y_tr, x_va, y_va, grid=None):
    """A peer with its own defaults, or with (learning rate, depth) from the grid."""
    loss = LOSS[task]
    if lib == "lightgbm":
        import lightgbm as lgb

        obj, metric = C.LGB_OBJ[loss]
        p = {"objective": obj, "metric": metric, "num_threads": 1, "verbose": -1, "seed": 0}
        p.update(deterministic=True, force_row_wise=True)
        if task == "multiclass":
            p["num_class"] = n_classes
        if grid:
            p.update(learning_rate=grid[0], max_depth=grid[1], num_leaves=2 ** grid[1])
        dtr = lgb.Dataset(x_tr, y_tr)
        dva = lgb.Dataset(x_va, y_va, reference=dtr)
        model = lgb.train(
            p,
            dtr,
            num_boost_round=rounds,
            valid_sets=[dva],
            callbacks=[lgb.early_stopping(PATIENCE, verbose=False)],
        )
        predict = (
            (lambda x: model.predict(x))
            if task != "regression"
            else (lambda x: model.predict(x, raw_score=True))
        )
        return predict
    if lib == "xgboost":
        import xgboost as xgb

        obj, metric = C.XGB_OBJ[loss]
        p = {"objective": obj, "eval_metric": metric, "tree_method": "hist", "nthread": 1}
        p.update(seed=0, verbosity=0)
        if task == "multiclass":
            p["num_class"] = n_classes
        if grid:
            p.update(eta=grid[0], max_depth=grid[1])
        dtr = xgb.DMatrix(x_tr, y_tr, enable_categorical=True)
        dva = xgb.DMatrix(x_va, y_va, enable_categorical=True)
        model = xgb.train(
            p,
            dtr,
            num_boost_round=rounds,
            evals=[(dva, "valid")],
            early_stopping_rounds=PATIENCE,
            verbose_eval=False,
        )
        best = {"iteration_range": (0, model.best_iteration + 1)}
        return lambda x: model.predict(xgb.DMatrix(x, enable_categorical=True), **best)
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    kw = {
        "max_iter": rounds,
        "random_state": 0,
        "early_stopping": True,
        "n_iter_no_change": PATIENCE,
        "categorical_features": "from_dtype",
    }
    if grid:
        kw.update(learning_rate=grid[0], max_depth=grid[1], max_leaf_nodes=2 ** grid[1])
    if task == "regression":
        model = HistGradientBoostingRegressor(**kw).fit(x_tr, y_tr, X_val=x_va, y_val=y_va)
        return model.predict
    model = HistGradientBoostingClassifier(**kw).fit(x_tr, y_tr, X_val=x_va, y_val=y_va)

    def proba(x):
        p = model.predict_proba(x)
        return p[:, 1] if task == "binary" else p

    return proba


def optboost_fit(method, task, rounds, train, valid, grid=None):
    kw = {"learning_rate": grid[0], "max_depth": grid[1]} if grid else {}
    model = C.ob_fit(
        train,
        valid,
        method=method,
        loss=LOSS[task],
        n_iter=rounds,
        early_stopping_rounds=PATIENCE,
        **kw,
    )
    return lambda df: np.asarray(model.predict(df, type="response"), dtype=float)


def split_frames(df, split: int):
    """The data set capped at ROW_CAP rows (a seeded subsample), and split `split`'s 60/20/20
    train / validation / test parts of it."""
    if df.height > ROW_CAP:
        df = C.take(df, C.shuffled(df.height, C.SEED)[:ROW_CAP])
    tr, va, te = C.split_idx(df.height, (0.6, 0.2, 0.2), C.SEED + split)
    return df, C.take(df, tr), C.take(df, va), C.take(df, te)


def run_split(name: str, split: int, done: dict | None = None) -> dict:
    """Every library and method under both protocols on one split: {protocol: {entry: metrics}}.
    Entries already in `done` (a cached result) are kept, not recomputed."""
    task = DATASETS[name]
    df = C.load(name)
    levels = C.category_levels(df)
    df, train, valid, test = split_frames(df, split)
    n_classes = int(df["y"].max()) + 1 if task == "multiclass" else 0
    rounds = ROUNDS[task]
    y_va, y_te = valid["y"].to_numpy(), test["y"].to_numpy()
    x_tr, y_tr = C.to_pandas_cat(train, levels)
    x_va, _ = C.to_pandas_cat(valid, levels)
    x_te, _ = C.to_pandas_cat(test, levels)
    sel = selection_metric(task)
    out: dict = done or {"defaults": {}, "grid": {}, "skipped": []}
    entries = [(lib, None) for lib in LIBS[1:]] + [
        ("optboost", m) for m in [DEFAULT_METHOD, *OTHER_METHODS]
    ]
    for lib, method in entries:
        key = lib if method is None else ("optboost" if method == DEFAULT_METHOD else method)
        if method is not None:
            why = C.ob_probe(method, LOSS[task], train)
            if why:
                out["skipped"].append(C.skip_line(f"optboost {method} on {name}", why))
                continue
        protocols = [("defaults", [None]), ("grid", GRID)]
        if method not in (None, DEFAULT_METHOD) and task == "multiclass":
            # K trees per round: the grid for the other methods would take most of the run.
            protocols = protocols[:1]
        for protocol, grids in protocols:
            if key in out[protocol]:
                continue
            best = None
            started = time.perf_counter()
            for grid in grids:
                if method is None:
                    f = peer_defaults(lib, task, n_classes, rounds, x_tr, y_tr, x_va, y_va, grid)
                    pv, pt = f(x_va), f(x_te)
                else:
                    f = optboost_fit(method, task, rounds, train, valid, grid)
                    pv, pt = f(valid), f(test)
                score = test_metrics(task, y_va, pv)[sel]
                if best is None or score < best[0]:
                    best = (score, test_metrics(task, y_te, pt), grid)
            res = dict(best[1])
            res["seconds"] = time.perf_counter() - started
            res["choice"] = "" if best[2] is None else f"lr {best[2][0]}, depth {best[2][1]}"
            out[protocol][key] = res
    return out


def cached_split(name: str, split: int, recompute: tuple[str, ...] = ()) -> dict:
    """The split's results from the cache, with the entries of `recompute` computed afresh."""
    path = CACHE / f"{name}-{split}.json"
    done = json.loads(path.read_text()) if path.exists() else None
    if done is not None and not recompute:
        return done
    if done is not None:
        for protocol in ("defaults", "grid"):
            for entry in recompute:
                done[protocol].pop(entry, None)
        done["skipped"] = [line for line in done["skipped"] if not _skip_of(line, recompute)]
    result = run_split(name, split, done)
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result))
    return result


def _skip_of(line: str, entries: tuple[str, ...]) -> bool:
    return any(f"optboost {entry} on " in line for entry in entries)


def _job(args):
    name, split, recompute = args
    t0 = time.perf_counter()
    cached_split(name, split, recompute)
    return name, split, time.perf_counter() - t0


def compute(workers: int, recompute: tuple[str, ...] = ()) -> None:
    # The costly multiclass sets first, so that two workers finish together.
    order = sorted(DATASETS, key=lambda n: DATASETS[n] != "multiclass")
    jobs = [(n, s, recompute) for n in order for s in range(N_SPLITS)]
    if not recompute:
        jobs = [j for j in jobs if not (CACHE / f"{j[0]}-{j[1]}.json").exists()]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for fut in as_completed([pool.submit(_job, j) for j in jobs]):
            name, split, secs = fut.result()
            print(f"{name} split {split}: {secs:.0f}s", flush=True)


def summarize(runs: list[dict], protocol: str, key: str, metric: str):
    values = [r[protocol][key][metric] for r in runs if key in r[protocol]]
    return C.mean_se(values) if len(values) == len(runs) else None


def report(started: float) -> None:
    text = "# optboost vs LightGBM, XGBoost and scikit-learn: two protocols\n\n"
    text += (
        "Test metric, mean ± standard error over 5 random 60/20/20 train/validation/test "
        f"splits of at most {ROW_CAP:,} rows per data set, early stopping on the validation "
        f"part (patience {PATIENCE}, at most {ROUNDS['regression']} rounds; multiclass "
        f"{ROUNDS['multiclass']}). **(a) defaults**: each library with its own defaults; "
        "**(b) grid**: learning rate {0.05, 0.1} × depth {3, 6} for all, the configuration "
        "with the best validation loss kept. *optboost* is its default method, gbm, with its "
        "defaults; the other optboost rows are its accelerated and proximal methods with their "
        "defaults. Bold: the best library of the cell; ✓: optboost (gbm) best or within one "
        "standard error of the best library's mean.\n"
    )
    goal = {"defaults": [0, 0, 0], "grid": [0, 0, 0]}  # cells, wins, within 1 se
    method_rows = []
    skipped: set[str] = set()
    for task in ("regression", "binary", "multiclass"):
        names = [n for n, t in DATASETS.items() if t == task]
        metric = selection_metric(task)
        header = ["data", "protocol", *LIBS, "optboost ✓"]
        if task != "regression":
            header.append("error (optboost / best library)")
        rows = []
        for name in names:
            runs = [
                json.loads(p.read_text())
                for s in range(N_SPLITS)
                if (p := CACHE / f"{name}-{s}.json").exists()
            ]
            if len(runs) < N_SPLITS:
                rows.append([name, "not run", *[""] * (len(header) - 2)])
                continue
            for r in runs:
                skipped.update(r["skipped"])
            for protocol in ("defaults", "grid"):
                stats = {lib: summarize(runs, protocol, lib, metric) for lib in LIBS}
                best = min((s[0], lib) for lib, s in stats.items() if s)[1]
                ob = stats["optboost"]
                ok = ob[0] <= stats[best][0] + stats[best][1]
                goal[protocol][0] += 1
                goal[protocol][1] += best == "optboost"
                goal[protocol][2] += ok
                cells = []
                for lib in LIBS:
                    s = stats[lib]
                    cell = f"{s[0]:.4f} ± {s[1]:.4f}"
                    cells.append(f"**{cell}**" if lib == best else cell)
                row = [name, protocol, *cells, "✓" if ok else "✗"]
                if task != "regression":
                    errs = {lib: summarize(runs, protocol, lib, "error") for lib in LIBS}
                    lowest = min(e[0] for e in errs.values())
                    row.append(f"{errs['optboost'][0]:.4f} / {lowest:.4f}")
                rows.append(row)
                gbm = stats["optboost"]
                if protocol == "grid" and task == "multiclass":
                    continue  # the other methods are not run on the grid there (see top)
                for method in OTHER_METHODS:
                    s = summarize(runs, protocol, method, metric)
                    if s is None:
                        continue
                    verdict = (
                        "better" if s[0] < gbm[0] - gbm[1]
                        else "worse" if s[0] > gbm[0] + gbm[1] else "within 1 se"
                    )
                    method_rows.append(
                        [name, protocol, method, f"{s[0]:.4f} ± {s[1]:.4f}",
                         f"{gbm[0]:.4f} ± {gbm[1]:.4f}", verdict]
                    )  # fmt: skip
        text += f"\n## {task} (test {metric})\n\n" + C.md_table(header, rows)
    text += "\n## The 80% goal\n\n"
    text += C.md_table(
        ["protocol", "cells", "optboost (gbm) best", "best or within 1 se", "share"],
        [
            [p, c, w, k, f"{100 * k / c:.0f}%" if c else "—"]
            for p, (c, w, k) in goal.items()
        ],
    )
    text += (
        "\n## optboost's accelerated and proximal methods against gbm\n\n"
        "Each method with its defaults (protocol a) or the grid (protocol b), early stopping on "
        "the validation part as above; *verdict* compares its test mean with gbm's mean ± gbm's "
        "standard error.\n\n"
    )
    text += C.md_table(
        ["data", "protocol", "method", "test metric", "gbm", "verdict"], method_rows
    )
    tally = {}
    for _, protocol, method, _, _, verdict in method_rows:
        tally.setdefault((method, protocol), {"better": 0, "within 1 se": 0, "worse": 0})
        tally[(method, protocol)][verdict] += 1
    text += "\n" + C.md_table(
        ["method", "protocol", "better than gbm", "within 1 se", "worse"],
        [[m, p, v["better"], v["within 1 se"], v["worse"]] for (m, p), v in sorted(tally.items())],
    )
    text += C.how_produced(
        "peers.py",
        C.SEED,
        f"{N_SPLITS} random 60/20/20 splits per data set of a seeded subsample of at most "
        f"{ROW_CAP:,} rows",
        "(a) library defaults; (b) learning rate {0.05, 0.1} × depth {3, 6}; early stopping "
        f"after {PATIENCE} rounds without improvement of the validation loss",
        started,
        notes=[
            "LightGBM: lgb.train with its defaults (num_leaves 31, learning rate 0.1, "
            "min_data_in_leaf 20), in (b) num_leaves = 2^depth; XGBoost: xgb.train with its "
            "defaults (eta 0.3, depth 6, tree_method hist), predictions at the best iteration; "
            "scikit-learn: HistGradientBoosting with its defaults (learning rate 0.1, 31 leaves, "
            "min_samples_leaf 20) and its early stopping on the same validation part, in (b) "
            "max_leaf_nodes = 2^depth; optboost: defaults (learning rate 0.1, depth 3, "
            "min_samples_leaf 10, 1 for least squares, l2_leaf 1).",
            "Cached per split in $OPTBOOST_BENCH_CACHE; the wall time above is the report's, "
            "the computation's is printed per split while it runs.",
            *sorted(skipped),
        ],
    )
    C.write_md("peers.md", text)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument(
        "--recompute",
        default="",
        help="comma-separated entries (a library, 'optboost' for gbm, or a method) to compute "
        "afresh on every split, keeping the other cached results",
    )
    args = parser.parse_args()
    started = time.perf_counter()
    C.require_optboost()
    C.check_load()
    if not args.report_only:
        compute(args.workers, tuple(e for e in args.recompute.split(",") if e))
    report(started)
    print(f"peers.py finished in {(time.perf_counter() - started) / 60:.1f} min")


if __name__ == "__main__":
    main()
