"""Evidence for docs/uncertainty.md on the shared regression sets (OPTBOOST_DATASETS).

(b) Quantile crossing: optboost's one Quantiles model against LightGBM's and XGBoost's one model
    per level (their quantile objectives), counting test rows where a lower level's prediction is
    above a higher one's, with the mean pinball loss over the levels.
(c) Conformal intervals: coverage and mean width of optboost's split-conformal intervals
    (absolute residuals of a squared-loss model; CQR of a Quantiles(0.05, 0.95) model) at levels
    0.8/0.9/0.95; CV+ intervals (optboost.cv(conformal=True), 5 folds of the training and
    calibration rows together, squared loss) for when no calibration rows can be spared; and
    MAPIE's split conformal intervals around the same optboost model when mapie >= 1.6 is
    installed (pip install mapie).
(picture) docs/results/uncertainty_mcycle.png: a Quantiles(0.05, 0.5, 0.95) model of mcycle's
    acceleration against time, its 90% CQR interval and the test rows.

    PYTHONPATH=python OPTBOOST_DATASETS=../shared/datasets python benches/uncertainty.py \
        [--splits 20] [--part crossing|conformal|picture|all]

Each split: 60% training, 20% calibration (conformal only; the crossing fits also train on it),
20% test, drawn with numpy's default_rng(split).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import time

import numpy as np
import polars as pl

import optboost

SETS = ["boston_housing", "concrete", "redwine", "sklearn_diabetes", "mcycle", "engel"]
LEVELS = [0.05, 0.25, 0.5, 0.75, 0.95]
N_ITER, LEARNING_RATE, DEPTH = 200, 0.05, 3


def load(name: str) -> pl.DataFrame:
    root = os.environ.get("OPTBOOST_DATASETS", str(Path(__file__).resolve().parents[2] / "shared" / "datasets"))
    frame = pl.read_parquet(os.path.join(root, f"{name}.parquet"))
    numeric = [c for c, t in frame.schema.items() if t.is_numeric()]
    return frame.select(numeric)


def splits(n: int, split: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    order = np.random.default_rng(split).permutation(n)
    a, b = int(0.6 * n), int(0.8 * n)
    return order[:a], order[a:b], order[b:]


def crossings(q: np.ndarray) -> int:
    return int(np.sum(np.any(np.diff(q, axis=1) < 0, axis=1)))


def pinball(y: np.ndarray, q: np.ndarray) -> float:
    tau = np.asarray(LEVELS)
    r = y[:, None] - q
    return float(np.mean(np.maximum(tau * r, (tau - 1) * r)))


def crossing_part(n_splits: int) -> None:
    import lightgbm
    import xgboost

    print("(b) crossing test rows (of all test rows) and mean pinball loss, levels", LEVELS)
    print("| set | rows | optboost Quantiles | LightGBM per level | XGBoost per level |")
    print("|---|---|---|---|---|")
    for name in SETS:
        frame = load(name)
        features = [c for c in frame.columns if c != "y"]
        x, y = frame.select(features).to_numpy(), frame["y"].to_numpy().astype(float)
        counts = {"optboost": [0, []], "lightgbm": [0, []], "xgboost": [0, []]}
        total = 0
        for split in range(n_splits):
            fit_rows, cal_rows, test_rows = splits(len(y), split)
            train_rows = np.concatenate([fit_rows, cal_rows])
            test = frame[test_rows]
            total += len(test_rows)
            model = optboost.boost(
                "y ~ .", frame[train_rows], loss=optboost.Quantiles(LEVELS), n_iter=N_ITER,
                learning_rate=LEARNING_RATE, max_depth=DEPTH, n_threads=1,
            )
            q = model.predict(test).to_numpy()
            predictions = {"optboost": q}
            lgb = [
                lightgbm.LGBMRegressor(
                    objective="quantile", alpha=tau, n_estimators=N_ITER,
                    learning_rate=LEARNING_RATE, max_depth=DEPTH, num_leaves=8, verbose=-1,
                    n_jobs=1,
                ).fit(x[train_rows], y[train_rows]).predict(x[test_rows])
                for tau in LEVELS
            ]
            predictions["lightgbm"] = np.column_stack(lgb)
            # One booster per level, as users fit them.
            predictions["xgboost"] = np.column_stack(
                [
                    xgboost.XGBRegressor(
                        objective="reg:quantileerror", quantile_alpha=tau, n_estimators=N_ITER,
                        learning_rate=LEARNING_RATE, max_depth=DEPTH, n_jobs=1,
                    ).fit(x[train_rows], y[train_rows]).predict(x[test_rows])
                    for tau in LEVELS
                ]
            )
            for key, q in predictions.items():
                counts[key][0] += crossings(q)
                counts[key][1].append(pinball(y[test_rows], q))
        cells = [
            f"{counts[k][0]} / {total} ({np.mean(counts[k][1]):.4g})"
            for k in ("optboost", "lightgbm", "xgboost")
        ]
        print(f"| {name} | {len(y)} | " + " | ".join(cells) + " |", flush=True)


def conformal_part(n_splits: int) -> None:
    try:
        from mapie.regression import SplitConformalRegressor
    except ImportError:
        SplitConformalRegressor = None
    print("(c) coverage % and mean width of split-conformal intervals, mean over", n_splits, "splits")
    header = (
        "| set | level | absolute: coverage, width | CQR: coverage, width | "
        "CV+: coverage, width |"
    )
    if SplitConformalRegressor is not None:
        header += " MAPIE split (same model): coverage, width |"
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    for name in SETS:
        frame = load(name)
        features = [c for c in frame.columns if c != "y"]
        results: dict = {}
        for split in range(n_splits):
            fit_rows, cal_rows, test_rows = splits(frame.height, split)
            fit, cal, test = frame[fit_rows], frame[cal_rows], frame[test_rows]
            y = test["y"].to_numpy()
            settings = dict(n_iter=N_ITER, learning_rate=LEARNING_RATE, max_depth=DEPTH, n_threads=1)
            point = optboost.boost("y ~ .", fit, **settings).conformalize(cal)
            cqr = optboost.boost(
                "y ~ .", fit, loss=optboost.Quantiles([0.05, 0.95]), **settings
            ).conformalize(cal)
            cv_plus = optboost.cv(
                "y ~ .", pl.concat([fit, cal]), folds=5, conformal=True, seed=split, **settings
            ).conformal
            if SplitConformalRegressor is not None:
                from optboost.sklearn import BoostRegressor

                regressor = BoostRegressor(**settings).fit(
                    fit.select(features).to_numpy(), fit["y"].to_numpy()
                )
            for level in (0.8, 0.9, 0.95):
                for key, model in (("absolute", point), ("cqr", cqr), ("cv+", cv_plus)):
                    box = model.predict(test, type="interval", level=level)
                    lo, hi = box["lower"].to_numpy(), box["upper"].to_numpy()
                    entry = results.setdefault((level, key), [[], []])
                    entry[0].append(np.mean((lo <= y) & (y <= hi)))
                    entry[1].append(np.mean(hi - lo))
                if SplitConformalRegressor is not None:
                    mapie = SplitConformalRegressor(
                        regressor, confidence_level=level, prefit=True
                    ).conformalize(cal.select(features).to_numpy(), cal["y"].to_numpy())
                    _, bounds = mapie.predict_interval(test.select(features).to_numpy())
                    lo, hi = bounds[:, 0, 0], bounds[:, 1, 0]
                    entry = results.setdefault((level, "mapie"), [[], []])
                    entry[0].append(np.mean((lo <= y) & (y <= hi)))
                    entry[1].append(np.mean(hi - lo))
        for level in (0.8, 0.9, 0.95):
            keys = ["absolute", "cqr", "cv+"] + (["mapie"] if SplitConformalRegressor is not None else [])
            cells = [
                f"{100 * np.mean(results[(level, k)][0]):.1f}, {np.mean(results[(level, k)][1]):.4g}"
                for k in keys
            ]
            print(f"| {name} | {level} | " + " | ".join(cells) + " |", flush=True)


def picture(path: Path) -> None:
    """mcycle's test rows, the median and the 90% CQR interval of a model fitted on 60% of the
    rows (min_samples_leaf=5) and calibrated on 20% (split 0)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    frame = load("mcycle")
    fit_rows, cal_rows, test_rows = splits(frame.height, 0)
    model = optboost.boost(
        "y ~ times", frame[fit_rows], loss=optboost.Quantiles([0.05, 0.5, 0.95]), n_iter=N_ITER,
        learning_rate=LEARNING_RATE, max_depth=DEPTH, n_threads=1,
        min_samples_leaf=5,  # 79 training rows: the default leaf size leaves a tree 2-3 leaves
    ).conformalize(frame[cal_rows])
    grid = pl.DataFrame({"times": np.linspace(frame["times"].min(), frame["times"].max(), 400)})
    quantiles = model.predict(grid)
    interval = model.predict(grid, type="interval", level=0.9)
    test = frame[test_rows]
    box = model.predict(test, type="interval", level=0.9)
    y = test["y"].to_numpy()
    inside = (box["lower"].to_numpy() <= y) & (y <= box["upper"].to_numpy())
    figure, ax = plt.subplots(figsize=(7, 4))
    t = grid["times"].to_numpy()
    ax.fill_between(
        t, interval["lower"].to_numpy(), interval["upper"].to_numpy(), color="tab:blue",
        alpha=0.2, label="90% conformal interval (CQR)",
    )
    ax.plot(t, quantiles["q0.05"].to_numpy(), color="tab:blue", lw=0.8, ls="--",
            label="quantiles 0.05 and 0.95 (never cross)")
    ax.plot(t, quantiles["q0.95"].to_numpy(), color="tab:blue", lw=0.8, ls="--")
    ax.plot(t, quantiles["q0.5"].to_numpy(), color="tab:blue", lw=1.5, label="median")
    ax.scatter(test["times"], y, s=12, color="k", label=f"test rows ({inside.mean():.0%} inside)")
    ax.set_xlabel("time after impact (ms)")
    ax.set_ylabel("head acceleration (g)")
    ax.set_title("mcycle: Quantiles([0.05, 0.5, 0.95]) conformalized on 20% of the rows")
    ax.legend(loc="lower right", fontsize=8)
    figure.savefig(path, dpi=100, bbox_inches="tight")
    print(f"wrote {path}: {inside.sum()} of {len(y)} test rows inside the 90% interval")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--splits", type=int, default=20)
    parser.add_argument(
        "--part", choices=("crossing", "conformal", "picture", "all"), default="all"
    )
    args = parser.parse_args()
    start = time.perf_counter()
    if args.part in ("crossing", "all"):
        crossing_part(args.splits)
    if args.part in ("conformal", "all"):
        conformal_part(args.splits)
    if args.part in ("picture", "all"):
        picture(Path(__file__).resolve().parents[1] / "docs" / "results" / "uncertainty_mcycle.png")
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
