#!/usr/bin/env python3
"""Every method with every loss family at its defaults, on heavy-tailed synthetic rows: does the
training loss descend, and does anything diverge?

Data: benches/compare.py's HIGGS-like rows (seeded) with benches/nonsmooth.py's regression
target (a squared log-normal signal plus Student-t noise), a positive target e^{0.3 z} of its
z-score (spanning some 10¹¹: the heavy tail that broke Newton steps), Poisson counts of that
rate, and compare.py's binary label. Each fit: 30 iterations, default parameters, no held-out
rows, 2 threads. A line per fit: iterations run, first and last training loss, how many
iterations raised it, and any divergence or safeguard warning; `<<<` marks a divergence, a
warning, or a rise of a method without momentum (whose steps should descend).

    python benches/defaults_sweep.py                      # 100,000 rows, all losses
    python benches/defaults_sweep.py --rows 20000 --losses poisson,huber
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from compare import make_data
from nonsmooth import regression_target

METHODS = ["gbm", "rgbm", "agbm", "agbmr", "vagbm", "proximal", "residual_proximal",
           "accelerated_proximal", "residual_gbm", "accelerated_gbm", "repeated_gbm"]
WITHOUT_MOMENTUM = {"gbm", "rgbm", "proximal", "residual_proximal", "residual_gbm", "repeated_gbm"}


def targets(rows: int) -> dict[str, np.ndarray]:
    x, binary, _, _ = make_data(rows, 0, 28, seed=2024)
    y = regression_target(x, seed=2025)
    rate = np.exp(0.3 * (y - y.mean()) / y.std())
    counts = np.random.default_rng(1).poisson(rate).astype(float)
    return {"x": x, "real": y, "positive": rate, "counts": counts, "binary": binary}


LOSSES = {
    "squared": "real", "absolute": "real", "pinball(0.9)": "real", "huber": "real",
    "poisson": "counts", "gamma": "positive", "tweedie(1.5)": "counts",
    "logistic": "binary", "exponential": "binary", "hinge": "binary",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--losses", default=",".join(LOSSES))
    args = parser.parse_args()
    from optboost.sklearn import BoostClassifier, BoostRegressor

    data = targets(args.rows)
    for loss in args.losses.split(","):
        kind = LOSSES[loss]
        estimator = BoostClassifier if kind == "binary" else BoostRegressor
        for method in METHODS:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                model = estimator(method=method, loss=loss, n_iter=30, n_threads=2,
                                  progress=False, validation_fraction=None)
                model.fit(data["x"], data[kind])
            losses = np.asarray(model.history_["train_loss"])
            rises = int(np.sum(np.diff(losses) > 1e-9 * np.abs(losses[:-1])))
            said = [str(w.message)[:90] for w in caught
                    if "diverged" in str(w.message) or "raised" in str(w.message)]
            flag = "<<<" if said or (rises and method in WITHOUT_MOMENTUM) else ""
            print(f"{loss:13s} {method:21s} iterations {len(losses):3d}  first {losses[0]:.4g}"
                  f"  last {losses[-1]:.4g}  rises {rises} {flag} {said[0] if said else ''}",
                  flush=True)


if __name__ == "__main__":
    main()
