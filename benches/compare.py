#!/usr/bin/env python3
"""optboost against LightGBM, XGBoost (hist) and scikit-learn's HistGradientBoosting.

Every fit runs in its own process (fresh memory accounting, no shared thread pools); libraries
alternate within each repeat and the order rotates between repeats, so that load from other
processes on the machine spreads over all of them. optboost is driven through the Rust example
`bench_fit` (raw little-endian f64 files), the peers through their Python APIs on the same data.

Settings shared by all: 100 trees, leaf-wise growth, depth ≤ 6, ≤ 63 leaves, learning rate 0.1,
255 bins, Newton leaves, no L2 penalty, ≥ 20 rows per leaf (XGBoost has no row minimum: it gets
min_child_weight = 1e-3, as everyone's hessian minimum), 2 threads.

Timings: "bin" is dataset construction (LightGBM Dataset.construct, XGBoost QuantileDMatrix,
optboost Booster::new; scikit-learn bins inside fit and reports it as training), "train" the
boosting, "pred" the prediction of the test rows. "mem" is the peak resident memory above the
process's resident memory once the raw data are loaded (VmHWM after /proc/self/clear_refs).

    python benches/compare.py                       # 1M × 28, both losses, 3 repeats
    python benches/compare.py --rows 100000 --repeats 1 --libs optboost,lightgbm
    python benches/compare.py --losses logistic --libs optboost,optboost_q,lightgbm,lightgbm_q,xgboost
    python benches/compare.py --losses logistic --libs optboost,optboost_goss,lightgbm,lightgbm_goss
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIBS = ["optboost", "lightgbm", "xgboost", "sklearn"]
# Variants on request (--libs): each library's quantized gradient statistics (optboost's
# `quantized_gradients`, LightGBM's `use_quantized_grad` with its defaults) and GOSS (optboost's
# `sample_strategy="goss"`, LightGBM's `data_sample_strategy="goss"`, both with rates 0.2 and
# 0.1). The ×best column still compares with the plain LightGBM and XGBoost.
VARIANTS = ["optboost_q", "lightgbm_q", "optboost_goss", "lightgbm_goss"]
LOSSES = ["logistic", "squared"]
N_TREES, DEPTH, LEAVES, LR, BINS, MIN_LEAF = 100, 6, 63, 0.1, 255, 20


# ----------------------------------------------------------------------------- data


# optboost's settings for the same trees (its `params=`; learning rate, depth and threads are
# the estimators' own arguments).
OPTBOOST_TREE_PARAMS = {
    "max_leaves": LEAVES,
    "growth": "leafwise",
    "min_samples_leaf": MIN_LEAF,
    "max_bins": BINS,
    "l2_leaf": 0.0,
}


def optboost_estimator(loss: str, n_iter: int, threads: int, **settings):
    """optboost's scikit-learn estimator for the trees every library grows here (`settings`:
    other estimator arguments, such as `method` or `subsample`)."""
    from optboost.sklearn import BoostClassifier, BoostRegressor

    estimator = BoostClassifier if loss == "logistic" else BoostRegressor
    return estimator(
        loss=loss, n_iter=n_iter, learning_rate=LR, max_depth=DEPTH, n_threads=threads,
        progress=False, params=OPTBOOST_TREE_PARAMS, **settings,
    )  # fmt: skip


def lightgbm_params(loss: str, threads: int) -> dict:
    """LightGBM's settings for the trees every library grows here."""
    return {
        "objective": "binary" if loss == "logistic" else "regression",
        "num_leaves": LEAVES,
        "max_depth": DEPTH,
        "learning_rate": LR,
        "max_bin": BINS,
        "num_threads": threads,
        "min_data_in_leaf": MIN_LEAF,
        "min_sum_hessian_in_leaf": 1e-3,
        "lambda_l2": 0.0,
        "verbose": -1,
    }


def make_data(rows: int, test_rows: int, features: int, seed: int):
    """HIGGS-like: mixed marginals, a label from a nonlinear function of ten features."""
    import numpy as np

    rng = np.random.default_rng(seed)
    n = rows + test_rows
    x = np.empty((n, features))
    for j in range(features):
        kind = j % 4
        if kind == 0:
            x[:, j] = rng.standard_normal(n)
        elif kind == 1:
            x[:, j] = rng.uniform(-2, 2, n)
        elif kind == 2:
            x[:, j] = rng.lognormal(0.0, 0.7, n)
        else:
            x[:, j] = np.round(rng.standard_normal(n) * 3) / 3  # few distinct values
    z = (
        np.sin(2 * x[:, 0]) * x[:, 1]
        + 0.5 * (x[:, 2] - 1.0) ** 2
        - 0.8 * x[:, 3] * x[:, 4]
        + np.tanh(x[:, 5] + x[:, 6])
        + 0.3 * np.abs(x[:, 7]) * (x[:, 8] > 0)
        - 0.4 * np.log(x[:, 10])
        + 0.2 * np.cos(3 * x[:, 9])
        - 0.5
    )
    p = 1.0 / (1.0 + np.exp(-2.0 * z))
    y = (rng.uniform(size=n) < p).astype(np.float64)
    return x[:rows], y[:rows], x[rows:], y[rows:]


def prepare(directory: Path, rows: int, test_rows: int, features: int, seed: int) -> None:
    import numpy as np

    stamp = directory / "shape.json"
    want = {"layout": 2, "rows": rows, "test_rows": test_rows, "features": features, "seed": seed}
    if stamp.exists() and json.loads(stamp.read_text()) == want:
        return
    directory.mkdir(parents=True, exist_ok=True)
    xtr, ytr, xte, yte = make_data(rows, test_rows, features, seed)
    np.save(directory / "x_train.npy", np.ascontiguousarray(xtr))
    np.save(directory / "x_test.npy", np.ascontiguousarray(xte))
    np.save(directory / "y_train.npy", ytr)
    np.save(directory / "y_test.npy", yte)
    # optboost reads columns: feature after feature, little-endian f64 (tofile writes C order,
    # hence the transposed copy).
    np.ascontiguousarray(xtr.T, dtype="<f8").tofile(directory / "x_train.cols.f64")
    np.ascontiguousarray(xte.T, dtype="<f8").tofile(directory / "x_test.cols.f64")
    ytr.astype("<f8").tofile(directory / "y_train.f64")
    stamp.write_text(json.dumps(want))


# ----------------------------------------------------------------------------- workers


def status_bytes(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    return 0


def worker(lib: str, loss: str, directory: Path, threads: int, out: Path) -> dict:
    """Runs in a fresh process: import, load, reset the peak, construct, train, predict."""
    import numpy as np

    if lib.startswith("lightgbm"):
        import lightgbm as lgb
    elif lib == "xgboost":
        import xgboost as xgb
    elif lib == "sklearn":
        from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    xtr = np.load(directory / "x_train.npy")
    ytr = np.load(directory / "y_train.npy")
    xte = np.load(directory / "x_test.npy")
    baseline = status_bytes("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")
    binary = loss == "logistic"

    t0 = time.perf_counter()
    if lib.startswith("lightgbm"):
        params = lightgbm_params(loss, threads)
        if lib == "lightgbm_q":
            params["use_quantized_grad"] = True
        if lib == "lightgbm_goss":
            params["data_sample_strategy"] = "goss"
        ds = lgb.Dataset(xtr, ytr, params=params)
        ds.construct()
        t1 = time.perf_counter()
        model = lgb.train(params, ds, num_boost_round=N_TREES)
        t2 = time.perf_counter()
        pred = model.predict(xte, num_threads=threads)
    elif lib == "xgboost":
        params = {
            "objective": "binary:logistic" if binary else "reg:squarederror",
            "tree_method": "hist",
            "grow_policy": "lossguide",
            "max_depth": DEPTH,
            "max_leaves": LEAVES,
            "eta": LR,
            "max_bin": BINS,
            "nthread": threads,
            "min_child_weight": 1e-3,
            "lambda": 0.0,
        }
        dtrain = xgb.QuantileDMatrix(xtr, ytr, max_bin=BINS, nthread=threads)
        t1 = time.perf_counter()
        model = xgb.train(params, dtrain, num_boost_round=N_TREES)
        t2 = time.perf_counter()
        pred = model.inplace_predict(xte)
    elif lib == "sklearn":
        cls = HistGradientBoostingClassifier if binary else HistGradientBoostingRegressor
        model = cls(
            loss="log_loss" if binary else "squared_error",
            learning_rate=LR,
            max_iter=N_TREES,
            max_leaf_nodes=LEAVES,
            max_depth=DEPTH,
            min_samples_leaf=MIN_LEAF,
            l2_regularization=0.0,
            max_bins=BINS,
            early_stopping=False,
        )
        t1 = time.perf_counter()
        model.fit(xtr, ytr)
        t2 = time.perf_counter()
        pred = model.predict_proba(xte)[:, 1] if binary else model.predict(xte)
    else:
        raise ValueError(lib)
    t3 = time.perf_counter()
    peak = status_bytes("VmHWM") - baseline
    np.asarray(pred, dtype="<f8").tofile(out)
    return {
        "binning_s": t1 - t0,
        "train_s": t2 - t1,
        "predict_s": t3 - t2,
        "peak_above_raw_mb": peak / 1e6,
    }


def run_one(lib: str, loss: str, directory: Path, threads: int, features: int) -> dict:
    out = directory / f"pred.{lib}.{loss}.f64"
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    if lib.startswith("optboost"):
        exe = ROOT / "target" / "release" / "examples" / "bench_fit"
        cmd = [str(exe), "--dir", str(directory), "--features", str(features), "--loss", loss,
               "--n_threads", str(threads), "--out", str(out),
               "--quantized_gradients", str(lib == "optboost_q").lower(),
               "--sample_strategy", "goss" if lib == "optboost_goss" else "uniform"]
    else:
        cmd = [sys.executable, __file__, "--worker", lib, "--loss", loss, "--dir", str(directory),
               "--threads", str(threads), "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{lib}/{loss} failed:\n{proc.stderr[-3000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result.update(metrics(directory, out, loss))
    return result


def metrics(directory: Path, pred_file: Path, loss: str) -> dict:
    import numpy as np
    from sklearn.metrics import roc_auc_score

    y = np.load(directory / "y_test.npy")
    p = np.fromfile(pred_file, dtype="<f8")
    result = {"auc": float(roc_auc_score(y, p)), "rmse": float(np.sqrt(np.mean((p - y) ** 2)))}
    if loss == "logistic":
        q = np.clip(p, 1e-15, 1 - 1e-15)
        result["logloss"] = float(-np.mean(y * np.log(q) + (1 - y) * np.log1p(-q)))
    return result


# ----------------------------------------------------------------------------- report


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def table(results: dict, libs: list[str], losses: list[str]) -> str:
    def med(runs, key):
        return statistics.median(r[key] for r in runs)

    def spread(runs, key):
        values = [r[key] for r in runs]
        m = statistics.median(values)
        return (max(values) - min(values)) / m if m > 0 and len(values) > 1 else 0.0

    lines = []
    head = (f"{'loss':<9}{'library':<14}{'bin s':>7}{'train s':>9}{'ms/tree':>9}{'bin+train':>10}"
            f"{'×best':>7}{'±':>6}{'mem MB':>8}{'×best':>7}{'pred s':>8}{'×best':>7}"
            f"{'logloss':>9}{'rmse':>8}{'auc':>8}")
    for loss in losses:
        rows = {lib: results[(lib, loss)] for lib in libs if results.get((lib, loss))}
        peers = [lib for lib in rows if not lib.startswith("optboost")]
        total = {lib: med(r, "total_s") for lib, r in rows.items()}
        best_total = min((total[p] for p in peers if p in ("lightgbm", "xgboost")), default=None)
        best_mem = min((med(rows[p], "peak_above_raw_mb") for p in peers), default=None)
        best_pred = min((med(rows[p], "predict_s") for p in peers), default=None)
        lines.append(head)
        for lib, runs in rows.items():
            t = total[lib]
            mem, pred = med(runs, "peak_above_raw_mb"), med(runs, "predict_s")
            ratio = lambda a, b: f"{a / b:7.2f}" if b else f"{'':>7}"  # noqa: E731
            logloss = f"{med(runs, 'logloss'):9.5f}" if "logloss" in runs[0] else f"{'—':>9}"
            lines.append(
                f"{loss:<9}{lib:<14}{med(runs, 'binning_s'):7.2f}{med(runs, 'train_s'):9.2f}"
                f"{1000 * med(runs, 'train_s') / N_TREES:9.1f}{t:10.2f}{ratio(t, best_total)}"
                f"{100 * spread(runs, 'total_s'):5.0f}%{mem:8.0f}{ratio(mem, best_mem)}"
                f"{pred:8.3f}{ratio(pred, best_pred)}{logloss}{med(runs, 'rmse'):8.4f}"
                f"{med(runs, 'auc'):8.4f}"
            )
        lines.append("")
    lines.append("×best: ratio to the faster of LightGBM and XGBoost (bin+train), to the best peer "
                 "(mem, pred); ±: (max − min)/median of bin+train over repeats; medians shown.")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--test-rows", type=int, default=200_000)
    ap.add_argument("--features", type=int, default=28)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--libs", default=",".join(LIBS))
    ap.add_argument("--losses", default=",".join(LOSSES))
    ap.add_argument("--dir", default="/tmp/optboost-bench")
    ap.add_argument("--no-build", action="store_true", help="do not run cargo build first")
    ap.add_argument("--json", help="also write all runs to this file")
    # internal: one fit in this process
    ap.add_argument("--worker")
    ap.add_argument("--loss")
    ap.add_argument("--out")
    args = ap.parse_args()
    directory = Path(args.dir)

    if args.worker:
        print(json.dumps(worker(args.worker, args.loss, directory, args.threads, Path(args.out))))
        return

    libs = args.libs.split(",")
    losses = args.losses.split(",")
    if any(lib.startswith("optboost") for lib in libs) and not args.no_build:
        subprocess.run(["cargo", "build", "--release", "--quiet", "--example", "bench_fit"], cwd=ROOT, check=True)
    prepare(directory, args.rows, args.test_rows, args.features, args.seed)
    print(f"{args.rows} × {args.features} train, {args.test_rows} test, {args.threads} threads, "
          f"{args.repeats} repeats; load average before: {load_average()}", flush=True)

    results: dict = {}
    for rep in range(args.repeats):
        order = libs[rep % len(libs):] + libs[: rep % len(libs)]
        for loss in losses:
            for lib in order:
                r = run_one(lib, loss, directory, args.threads, args.features)
                r["total_s"] = r["binning_s"] + r["train_s"]
                r["load"] = load_average()
                results.setdefault((lib, loss), []).append(r)
                print(f"  rep {rep} {loss:<9}{lib:<14} bin {r['binning_s']:6.2f}  train {r['train_s']:6.2f}  "
                      f"pred {r['predict_s']:6.3f}  mem {r['peak_above_raw_mb']:6.0f} MB  "
                      f"auc {r['auc']:.4f}  load {r['load']}", flush=True)
    print()
    print(table(results, libs, losses))
    print(f"load average after: {load_average()}")
    if args.json:
        Path(args.json).write_text(json.dumps({f"{k[0]}/{k[1]}": v for k, v in results.items()}, indent=1))


if __name__ == "__main__":
    main()
