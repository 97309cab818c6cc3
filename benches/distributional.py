"""Distributional boosting against NGBoost and xgboost-distribution (docs/uncertainty.md).

NGBoost's protocol (Duan et al. 2020, Table 1) on the regression sets we ship that it also
used: Boston housing, Concrete and red Wine, plus scikit-learn's diabetes (Energy, Yacht,
Kin8nm, Power, Protein and Naval are not in any package installed here). Each split holds out
a random 10% as test rows; of the rest, 80% train and 20% validate for early stopping
(patience 50, at most 1,000 iterations). Every library fits a normal distribution with its
own defaults otherwise: optboost ``loss="normal"`` (natural-gradient steps, depth-3 trees,
learning rate 0.1), NGBoost ``NGBRegressor`` (depth-3 trees, learning rate 0.01) and
xgboost-distribution ``XGBDistribution(distribution="normal")``, one thread each. Reported:
test negative log-likelihood and RMSE of the mean (mean ± standard error over the splits) and
the seconds per fit.

    # benchmark only, in a venv of its own: ngboost 0.6 pins scikit-learn < 1.7
    python -m venv --system-site-packages /tmp/ngb && /tmp/ngb/bin/pip install ngboost xgboost-distribution
    PYTHONPATH=python OPTBOOST_DATASETS=<the shared data sets> /tmp/ngb/bin/python benches/distributional.py \
        [--splits 20] [--sets boston_housing,concrete]
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path

import numpy as np
import polars as pl

import optboost

SETS = ["boston_housing", "concrete", "redwine", "sklearn_diabetes"]
PATIENCE, MAX_ITER = 50, 1000
LIBRARIES = ["optboost", "ngboost", "xgboost-distribution"]


def load(name: str) -> pl.DataFrame:
    root = os.environ.get(
        "OPTBOOST_DATASETS", str(Path(__file__).resolve().parents[2] / "shared" / "datasets")
    )
    frame = pl.read_parquet(os.path.join(root, f"{name}.parquet"))
    numeric = [c for c, t in frame.schema.items() if t.is_numeric()]
    return frame.select(numeric).drop_nulls()


def normal_nll(y: np.ndarray, mean: np.ndarray, sd: np.ndarray) -> float:
    return float(np.mean(0.5 * ((y - mean) / sd) ** 2 + np.log(sd) + 0.5 * math.log(2 * math.pi)))


def fit_predict(library: str, x_fit, y_fit, x_valid, y_valid, x_test):
    """The test rows' predicted (mean, sd) and the fit's seconds."""
    start = time.perf_counter()
    if library == "optboost":
        names = [f"x{j}" for j in range(x_fit.shape[1])]
        frame = lambda x, y=None: pl.DataFrame(  # noqa: E731
            {**{n: x[:, j] for j, n in enumerate(names)}, **({} if y is None else {"y": y})}
        )
        model = optboost.boost(
            "y ~ .", frame(x_fit, y_fit), loss="normal", n_iter=MAX_ITER,
            valid=frame(x_valid, y_valid), early_stopping_rounds=PATIENCE, n_threads=1,
            progress=False,
        )
        seconds = time.perf_counter() - start
        params = model.predict(frame(x_test), type="distribution")
        return params["mean"].to_numpy(), params["sd"].to_numpy(), seconds
    if library == "ngboost":
        from ngboost import NGBRegressor

        model = NGBRegressor(n_estimators=MAX_ITER, verbose=False, random_state=0).fit(
            x_fit, y_fit, X_val=x_valid, Y_val=y_valid, early_stopping_rounds=PATIENCE
        )
        seconds = time.perf_counter() - start
        dist = model.pred_dist(x_test)
        return dist.params["loc"], dist.params["scale"], seconds
    from xgboost_distribution import XGBDistribution

    model = XGBDistribution(
        distribution="normal", n_estimators=MAX_ITER, early_stopping_rounds=PATIENCE, n_jobs=1
    )
    model.fit(x_fit, y_fit, eval_set=[(x_valid, y_valid)], verbose=False)
    seconds = time.perf_counter() - start
    params = model.predict(x_test)
    return params.loc, params.scale, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--splits", type=int, default=20)
    parser.add_argument("--sets", default=",".join(SETS))
    args = parser.parse_args()
    print("| set | rows | library | test NLL | test RMSE | s per fit |")
    print("|---|---|---|---|---|---|")
    for name in args.sets.split(","):
        frame = load(name)
        x = frame.drop("y").to_numpy().astype(np.float64)
        y = frame["y"].to_numpy().astype(np.float64)
        results = {library: ([], [], []) for library in LIBRARIES}
        for split in range(args.splits):
            order = np.random.default_rng(split).permutation(len(y))
            n_test = max(1, len(y) // 10)
            test, rest = order[:n_test], order[n_test:]
            n_fit = int(0.8 * len(rest))
            fit, valid = rest[:n_fit], rest[n_fit:]
            # The libraries alternate their order from split to split (the machine is shared).
            for library in LIBRARIES[split % 3:] + LIBRARIES[: split % 3]:
                mean, sd, seconds = fit_predict(
                    library, x[fit], y[fit], x[valid], y[valid], x[test]
                )
                nll, rmse, times = results[library]
                nll.append(normal_nll(y[test], mean, sd))
                rmse.append(float(np.sqrt(np.mean((y[test] - mean) ** 2))))
                times.append(seconds)
        for library in LIBRARIES:
            nll, rmse, times = (np.asarray(v) for v in results[library])
            se = lambda v: v.std(ddof=1) / math.sqrt(len(v)) if len(v) > 1 else float("nan")  # noqa: E731
            print(
                f"| {name} | {len(y)} | {library} | {nll.mean():.3f} ± {se(nll):.3f} | "
                f"{rmse.mean():.3f} ± {se(rmse):.3f} | {np.median(times):.3g} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
