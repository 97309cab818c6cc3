"""optboost against LightGBM, XGBoost, CatBoost and scikit-learn's HistGradientBoosting on every
shared data set, under three protocols, the first two with early stopping on a validation part:

(a) defaults: every library with its own defaults (only the objective, one thread and the
    early stopping are set), and every accelerated or proximal method of optboost with its
    defaults;
(b) same grid: learning rate {0.05, 0.1} × depth {3, 6} for every library and every optboost
    method (on the multiclass sets for gbm only: K trees per round make the other methods'
    grid the most costly part of the run), the configuration with the best validation loss
    kept. Parameters outside the grid
    keep each library's defaults; LightGBM and scikit-learn, which bound trees by leaves, get
    2^depth leaves so that depth decides;
(c) defaults, no validation data given: what a user who calls each library once gets. Every
    library is fitted on the training and validation parts together with its own defaults and
    no validation set, so without early stopping unless it does so by itself (scikit-learn's
    HGB holds out a part when it has over 10,000 rows: never here; optboost's boost() holds
    out a part for the momentum methods); XGBoost and LightGBM run 100 rounds (the number of
    their scikit-learn estimators; xgb.train's own default is 10), CatBoost its 1,000.

Each data set: 5 random 60/20/20 train/validation/test splits of at most ROW_CAP rows (a seeded
subsample: the multiclass sets cost K trees per round and the machine is two shared cores).
The test metric is RMSE (regression) or log loss (classification; the error rate is reported
too), mean ± standard error over the splits, and the time per fit (wall seconds, the mean over
the splits; a grid cell's time is its four fits' total divided by four). A cell is one data set
under one protocol: optboost's default method (gbm) *wins* it when its mean is the lowest, and
is *within 1 se* when its mean is at most the best library's mean plus that library's standard
error.

    python benches/reproduce/peers.py [--workers 2] [--report-only] [--recompute proximal,...]
                                      [--methods gbm] [--cached-only]

Per-split results are cached in $OPTBOOST_BENCH_CACHE (default /tmp/optboost-peers) so that an
interrupted run resumes; delete the directory to start over, or name the entries whose models
changed with --recompute to compute only those afresh.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
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
LIBS = ["optboost", "lightgbm", "xgboost", "catboost", "sklearn"]
PROTOCOLS = ("defaults", "grid", "novalid")
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
# Protocol (c): the rounds of LightGBM's and XGBoost's scikit-learn estimators by default.
NOVALID_ROUNDS = 100
CATBOOST_LOSS = {"regression": "RMSE", "binary": "Logloss", "multiclass": "MultiClass"}
CACHE = Path(os.environ.get("OPTBOOST_BENCH_CACHE", "/tmp/optboost-peers"))


def test_metrics(task: str, y, pred) -> dict[str, float]:
    if task == "regression":
        return {"rmse": C.rmse(y, pred)}
    cls = (pred > 0.5).astype(int) if task == "binary" else pred.argmax(axis=1)
    return {"logloss": C.log_loss(y, pred), "error": C.error_rate(y, cls)}


def selection_metric(task: str) -> str:
    return "rmse" if task == "regression" else "logloss"


def peer_defaults(lib, task, n_classes, rounds, x_tr, y_tr, x_va, y_va, grid=None):
    """A peer with its own defaults, or with (learning rate, depth) from the grid; with x_va
    None (protocol c), its defaults without validation data and without early stopping."""
    loss = LOSS[task]
    if lib == "catboost":
        return catboost_fit(task, rounds, x_tr, y_tr, x_va, y_va, grid)
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
        if x_va is None:
            model = lgb.train(p, dtr, num_boost_round=NOVALID_ROUNDS)
        else:
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
        if x_va is None:
            model = xgb.train(p, dtr, num_boost_round=NOVALID_ROUNDS)
            return lambda x: model.predict(xgb.DMatrix(x, enable_categorical=True))
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

    kw = {"random_state": 0, "categorical_features": "from_dtype"}
    if x_va is not None:
        kw.update(max_iter=rounds, early_stopping=True, n_iter_no_change=PATIENCE)
    if grid:
        kw.update(learning_rate=grid[0], max_depth=grid[1], max_leaf_nodes=2 ** grid[1])
    valid = {} if x_va is None else {"X_val": x_va, "y_val": y_va}
    if task == "regression":
        model = HistGradientBoostingRegressor(**kw).fit(x_tr, y_tr, **valid)
        return model.predict
    model = HistGradientBoostingClassifier(**kw).fit(x_tr, y_tr, **valid)

    def proba(x):
        p = model.predict_proba(x)
        return p[:, 1] if task == "binary" else p

    return proba


def catboost_fit(task, rounds, x_tr, y_tr, x_va, y_va, grid=None):
    """CatBoost with its defaults (its own learning rate, chosen from the data size, the
    iterations and whether there is a validation set), categorical columns named to it."""
    from catboost import CatBoostClassifier, CatBoostRegressor

    cats = [c for c in x_tr.columns if str(x_tr[c].dtype) == "category"]
    kw = {"loss_function": CATBOOST_LOSS[task], "thread_count": 1, "random_seed": 0}
    kw.update(verbose=False, allow_writing_files=False, cat_features=cats)
    fit = {}
    if x_va is not None:
        kw["iterations"] = rounds
        fit = {"eval_set": (_catboost_x(x_va, cats), y_va), "early_stopping_rounds": PATIENCE}
    if grid:
        kw.update(learning_rate=grid[0], depth=grid[1])
    if task == "regression":
        model = CatBoostRegressor(**kw).fit(_catboost_x(x_tr, cats), y_tr, **fit)
        return lambda x: model.predict(_catboost_x(x, cats))
    model = CatBoostClassifier(**kw).fit(_catboost_x(x_tr, cats), y_tr, **fit)

    def proba(x):
        p = model.predict_proba(_catboost_x(x, cats))
        return p[:, 1] if task == "binary" else p

    return proba


def _catboost_x(x, cats):
    """CatBoost takes categorical values as strings, a missing one included."""
    if not cats:
        return x
    x = x.copy()
    for c in cats:
        x[c] = x[c].astype(str).where(x[c].notna(), "<missing>")
    return x


def optboost_fit(method, task, rounds, train, valid, grid=None):
    if valid is None:  # protocol (c): boost() as a user calls it first
        model = C.ob_fit(train, method=method, loss=LOSS[task])
        return lambda df: np.asarray(model.predict(df, type="response"), dtype=float)
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


def run_split(name: str, split: int, done: dict | None = None, methods=OTHER_METHODS) -> dict:
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
    # Protocol (c) trains on the training and validation parts together.
    both = C.take(df, np.concatenate(C.split_idx(df.height, (0.6, 0.2, 0.2), C.SEED + split)[:2]))
    x_both, y_both = C.to_pandas_cat(both, levels)
    sel = selection_metric(task)
    out: dict = done or {"skipped": []}
    for protocol in PROTOCOLS:
        out.setdefault(protocol, {})
    entries = [(lib, None) for lib in LIBS[1:]] + [
        ("optboost", m) for m in [DEFAULT_METHOD, *methods]
    ]
    for lib, method in entries:
        key = lib if method is None else ("optboost" if method == DEFAULT_METHOD else method)
        if method is not None:
            why = C.ob_probe(method, LOSS[task], train)
            if why:
                out["skipped"].append(C.skip_line(f"optboost {method} on {name}", why))
                continue
        protocols = [("defaults", [None]), ("grid", GRID), ("novalid", [None])]
        if method not in (None, DEFAULT_METHOD) and task == "multiclass":
            # K trees per round: the grid for the other methods would take most of the run.
            protocols = protocols[::2]
        for protocol, grids in protocols:
            if key in out[protocol]:
                continue
            if protocol == "novalid":
                if method is None:
                    started = time.perf_counter()
                    f = peer_defaults(lib, task, n_classes, rounds, x_both, y_both, None, None)
                    seconds = time.perf_counter() - started
                    pt = f(x_te)
                else:
                    started = time.perf_counter()
                    f = optboost_fit(method, task, rounds, both, None)
                    seconds = time.perf_counter() - started
                    pt = f(test)
                out[protocol][key] = {**test_metrics(task, y_te, pt), "seconds": seconds}
                continue
            best = None
            seconds = 0.0
            for grid in grids:
                started = time.perf_counter()
                if method is None:
                    f = peer_defaults(lib, task, n_classes, rounds, x_tr, y_tr, x_va, y_va, grid)
                else:
                    f = optboost_fit(method, task, rounds, train, valid, grid)
                seconds += time.perf_counter() - started
                pv, pt = (f(x_va), f(x_te)) if method is None else (f(valid), f(test))
                score = test_metrics(task, y_va, pv)[sel]
                if best is None or score < best[0]:
                    best = (score, test_metrics(task, y_te, pt), grid)
            res = dict(best[1])
            res["seconds"] = seconds / len(grids)  # per fit
            res["choice"] = "" if best[2] is None else f"lr {best[2][0]}, depth {best[2][1]}"
            out[protocol][key] = res
    return out


def cached_split(
    name: str, split: int, recompute: tuple[str, ...] = (), methods=OTHER_METHODS
) -> dict:
    """The split's results from the cache, with the entries missing from it (a library or
    protocol added since) and those of `recompute` computed afresh."""
    path = CACHE / f"{name}-{split}.json"
    done = json.loads(path.read_text()) if path.exists() else None
    if done is not None:
        for protocol in PROTOCOLS:
            for entry in recompute:
                done.get(protocol, {}).pop(entry, None)
        done["skipped"] = [line for line in done["skipped"] if not _skip_of(line, recompute)]
    result = run_split(name, split, done, methods)
    result["skipped"] = list(dict.fromkeys(result["skipped"]))
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result))
    return result


def _skip_of(line: str, entries: tuple[str, ...]) -> bool:
    return any(f"optboost {entry} on " in line for entry in entries)


def _job(args):
    name, split, recompute, methods = args
    t0 = time.perf_counter()
    cached_split(name, split, recompute, methods)
    return name, split, time.perf_counter() - t0


def compute(
    workers: int, recompute: tuple[str, ...] = (), methods=OTHER_METHODS, cached_only=False
) -> None:
    # The cheapest data sets first (multiclass last: K trees per round), so that a run cut
    # short leaves as many complete cells as it can.
    shapes = {n: C.load(n).shape for n in DATASETS}
    cost = {n: min(rows, ROW_CAP) * columns for n, (rows, columns) in shapes.items()}
    order = sorted(DATASETS, key=lambda n: (DATASETS[n] == "multiclass", cost[n]))
    jobs = [(n, s, recompute, tuple(methods)) for n in order for s in range(N_SPLITS)]
    if cached_only:
        jobs = [j for j in jobs if (CACHE / f"{j[0]}-{j[1]}.json").exists()]
    # Spawned, not forked: the data loaded above started polars' threads, which a fork would
    # copy mid-lock.
    with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn")) as pool:
        for fut in as_completed([pool.submit(_job, j) for j in jobs]):
            name, split, secs = fut.result()
            print(f"{name} split {split}: {secs:.0f}s", flush=True)


def summarize(runs: list[dict], protocol: str, key: str, metric: str):
    values = [r[protocol][key][metric] for r in runs if key in r.get(protocol, {})]
    return C.mean_se(values) if values and len(values) == len(runs) else None


def _cell(stat, seconds, bold: bool) -> str:
    if stat is None:
        return "—"
    text = f"{stat[0]:.4f} ± {stat[1]:.4f}"
    return f"{f'**{text}**' if bold else text} ({seconds[0]:.2f} s)"


def report(started: float, command: str) -> None:
    text = "# optboost vs LightGBM, XGBoost, CatBoost and scikit-learn: three protocols\n\n"
    text += (
        "Test metric, mean ± standard error over 5 random 60/20/20 train/validation/test "
        f"splits of at most {ROW_CAP:,} rows per data set, and in brackets the mean wall "
        "time of one fit (training only, one thread). **(a) defaults**: each library with its "
        f"own defaults, early stopping on the validation part (patience {PATIENCE}, at most "
        f"{ROUNDS['regression']} rounds; multiclass {ROUNDS['multiclass']}); **(b) grid**: "
        "learning rate {0.05, 0.1} × depth {3, 6} for all, the same early stopping, the "
        "configuration with the best validation loss kept (time: per fit, the four fits' "
        "mean); **(c) novalid**: each library called once with its defaults on the training "
        "and validation parts together, no validation data given, so no early stopping "
        f"(LightGBM and XGBoost {NOVALID_ROUNDS} rounds, their scikit-learn estimators' "
        "default; CatBoost its 1,000 iterations; scikit-learn's HGB its 100 iterations, its "
        "automatic early stopping being off below 10,000 rows; optboost `boost()` as it "
        "is). *optboost* is its default method, gbm, with its defaults; the other optboost "
        "rows are its accelerated and proximal methods. Bold: the best library of the cell; "
        "✓: optboost (gbm) best or within one standard error of the best library's mean. "
        "**Times are noisy**: the machine is two cores shared with other builds and tests "
        "while this ran (at `nice 10`); read ratios, not absolute seconds, and only roughly.\n"
    )
    # per protocol: cells, wins, within 1 se, gaps in %, optboost/LightGBM time ratios
    goal = {p: {"cells": 0, "wins": 0, "ok": 0, "gaps": [], "ratios": []} for p in PROTOCOLS}
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
                rows.append([name, f"not run ({len(runs)} of {N_SPLITS} splits)",
                             *[""] * (len(header) - 2)])  # fmt: skip
                continue
            for r in runs:
                skipped.update(r["skipped"])
            for protocol in PROTOCOLS:
                stats = {lib: summarize(runs, protocol, lib, metric) for lib in LIBS}
                secs = {lib: summarize(runs, protocol, lib, "seconds") for lib in LIBS}
                ob = stats["optboost"]
                if ob is None:
                    rows.append([name, f"{protocol}: not run", *[""] * (len(header) - 2)])
                    continue
                best = min((s[0], lib) for lib, s in stats.items() if s)[1]
                ok = ob[0] <= stats[best][0] + stats[best][1]
                g = goal[protocol]
                g["cells"] += 1
                g["wins"] += best == "optboost"
                g["ok"] += ok
                g["gaps"].append((100 * (ob[0] / stats[best][0] - 1), name))
                if secs["lightgbm"]:
                    g["ratios"].append((secs["optboost"][0] / secs["lightgbm"][0], name))
                cells = [_cell(stats[lib], secs[lib], lib == best) for lib in LIBS]
                row = [name, protocol, *cells, "✓" if ok else "✗"]
                if task != "regression":
                    errs = {lib: summarize(runs, protocol, lib, "error") for lib in LIBS}
                    lowest = min(e[0] for e in errs.values() if e)
                    row.append(f"{errs['optboost'][0]:.4f} / {lowest:.4f}")
                rows.append(row)
                if protocol == "grid" and task == "multiclass":
                    continue  # the other methods are not run on the grid there (see top)
                for method in OTHER_METHODS:
                    s = summarize(runs, protocol, method, metric)
                    if s is None:
                        continue
                    verdict = (
                        "better" if s[0] < ob[0] - ob[1]
                        else "worse" if s[0] > ob[0] + ob[1] else "within 1 se"
                    )
                    method_rows.append(
                        [name, protocol, method, f"{s[0]:.4f} ± {s[1]:.4f}",
                         f"{ob[0]:.4f} ± {ob[1]:.4f}", verdict]
                    )  # fmt: skip
        text += f"\n## {task} (test {metric}; fit time in brackets)\n\n" + C.md_table(header, rows)
    text += (
        "\n## The goal: best or within 1 se in 80% of cells, never more than 10% worse, "
        "fit time at most LightGBM's\n\n"
        "Per protocol, over the cells run: how often optboost (gbm, defaults) is the best "
        "library or within one standard error of it; its largest gap to the best library's "
        "mean (in % of that mean); and the ratio of its mean fit time to LightGBM's in the same "
        "cell (median, and the largest).\n\n"
    )
    summary = []
    for p, g in goal.items():
        c = g["cells"]
        worst_gap = max(g["gaps"]) if g["gaps"] else None
        ratios = sorted(r for r, _ in g["ratios"])
        worst_ratio = max(g["ratios"]) if g["ratios"] else None
        summary.append([
            p, c, g["wins"], g["ok"], f"{100 * g['ok'] / c:.0f}%" if c else "—",
            f"{worst_gap[0]:+.1f}% ({worst_gap[1]})" if worst_gap else "—",
            f"{float(np.median(ratios)):.2f}" if ratios else "—",
            f"{worst_ratio[0]:.2f} ({worst_ratio[1]})" if worst_ratio else "—",
        ])  # fmt: skip
    text += C.md_table(
        ["protocol", "cells", "optboost best", "best or within 1 se", "share",
         "worst gap to the best", "median time ratio to LightGBM", "worst time ratio"],
        summary,
    )  # fmt: skip
    text += (
        "\n## optboost's accelerated and proximal methods against gbm\n\n"
        "Each method with its defaults (protocols a and c) or the grid (protocol b), as above; "
        "*verdict* compares its test mean with gbm's mean ± gbm's standard error.\n\n"
    )
    if method_rows:
        text += C.md_table(
            ["data", "protocol", "method", "test metric", "gbm", "verdict"], method_rows
        )
        tally = {}
        for _, protocol, method, _, _, verdict in method_rows:
            tally.setdefault((method, protocol), {"better": 0, "within 1 se": 0, "worse": 0})
            tally[(method, protocol)][verdict] += 1
        text += "\n" + C.md_table(
            ["method", "protocol", "better than gbm", "within 1 se", "worse"],
            [[m, p, v["better"], v["within 1 se"], v["worse"]]
             for (m, p), v in sorted(tally.items())],
        )  # fmt: skip
    else:
        text += "Not run this time (`--methods` named none of them).\n"
    text += C.how_produced(
        f"peers.py{command}",
        C.SEED,
        f"{N_SPLITS} random 60/20/20 splits per data set of a seeded subsample of at most "
        f"{ROW_CAP:,} rows",
        "(a) library defaults; (b) learning rate {0.05, 0.1} × depth {3, 6}; early stopping "
        f"after {PATIENCE} rounds without improvement of the validation loss; (c) library "
        "defaults, no validation data",
        started,
        notes=[
            f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.",
            "LightGBM: lgb.train with its defaults (num_leaves 31, learning rate 0.1, "
            "min_data_in_leaf 20), in (b) num_leaves = 2^depth; XGBoost: xgb.train with its "
            "defaults (eta 0.3, depth 6, tree_method hist), predictions at the best iteration; "
            "CatBoost: CatBoostClassifier/Regressor with its defaults (depth 6, its automatic "
            "learning rate, l2_leaf_reg 3, categorical columns given as cat_features), "
            "eval_set and early_stopping_rounds in (a) and (b), the best iteration kept; "
            "scikit-learn: HistGradientBoosting with its defaults (learning rate 0.1, 31 leaves, "
            "min_samples_leaf 20) and its early stopping on the same validation part, in (b) "
            "max_leaf_nodes = 2^depth; optboost: defaults (learning rate 0.1, depth 3, "
            "min_samples_leaf 10, 1 for least squares, l2_leaf 1).",
            "Cached per split in $OPTBOOST_BENCH_CACHE; the wall time above is the report's, "
            "the computation's is printed per split while it runs.",
            *sorted(skipped),
        ], preset=C.DEFAULTS)
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
    parser.add_argument(
        "--methods",
        default=",".join(OTHER_METHODS),
        help="comma-separated optboost methods to run beside gbm (default: all of them; "
        "'gbm' for none)",
    )
    parser.add_argument(
        "--cached-only",
        action="store_true",
        help="compute only on the splits already cached (with --recompute: redo some entries "
        "without starting on new data sets)",
    )
    args = parser.parse_args()
    methods = [m for m in args.methods.split(",") if m in OTHER_METHODS]
    started = time.perf_counter()
    C.require_optboost()
    C.check_load()
    if not args.report_only:
        recompute = tuple(e for e in args.recompute.split(",") if e)
        compute(args.workers, recompute, methods, args.cached_only)
    command = f" --workers {args.workers}"
    if methods != OTHER_METHODS:
        command += f" --methods {','.join(['gbm', *methods])}"
    report(started, command)
    print(f"peers.py finished in {(time.perf_counter() - started) / 60:.1f} min")


if __name__ == "__main__":
    main()
