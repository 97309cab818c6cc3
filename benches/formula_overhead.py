"""Time the formula front end adds to a fit.

The same data (numeric columns plus string columns) are fitted twice:

* core: columns handed to ``optboost._core.Booster`` directly (numpy float64
  arrays, category codes computed beforehand), trained with the same loop;
* formula: ``optboost.boost("y ~ x0 + ... + s1", polars_frame)``, which parses
  the formula, takes the numeric columns zero-copy and encodes the strings.

Runs alternate and the median of each is reported, with the overhead
(formula / core - 1). Because whole fits are noisy on a shared machine, the
formula layer's own work (``build_design``: parsing, zero-copy numeric
columns, string encoding, target) is also timed on its own and reported as a
share of the core fit. Usage:

    python benches/formula_overhead.py [--rows 1000000] [--numeric 20] [--strings 2]
                                       [--n-iter 50] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import optboost
import polars as pl
from optboost import _core
from optboost.formula import build_design
from optboost.params import param_pairs
from optboost.training import train


def make_data(rows: int, numeric: int, strings: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    columns = {f"x{j}": rng.normal(size=rows) for j in range(numeric)}
    codes = {f"s{j}": rng.integers(0, 50, size=rows).astype(np.int32) for j in range(strings)}
    levels = np.array([f"level_{k:02d}" for k in range(50)])
    y = columns["x0"] * 2 + np.sin(columns["x1"] * 3) + rng.normal(scale=0.1, size=rows)
    for j, c in enumerate(codes.values()):
        y += (c % 7) * 0.1 * (j + 1)
    frame = pl.DataFrame({**columns, **{name: levels[c] for name, c in codes.items()}, "y": y})
    return frame, columns, codes, y


def fit_core(columns, codes, y, settings):
    features = [(name, values, "numeric", 0) for name, values in columns.items()]
    features += [(name, c, "categorical", 50) for name, c in codes.items()]
    booster = _core.Booster(param_pairs(settings), features, y)
    train(booster, settings["n_iter"], progress=False)
    return booster.model()


def fit_formula(frame, formula, settings):
    return optboost.boost(formula, frame, progress=False, **settings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--numeric", type=int, default=20)
    parser.add_argument("--strings", type=int, default=2)
    parser.add_argument("--n-iter", type=int, default=50)
    parser.add_argument("--max-depth", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--n-threads", type=int, default=0)
    args = parser.parse_args()

    frame, columns, codes, y = make_data(args.rows, args.numeric, args.strings)
    names = [*columns, *codes]
    formula = "y ~ " + " + ".join(names)
    settings = {
        "method": "gbm",
        "loss": "squared",
        "n_iter": args.n_iter,
        "max_depth": args.max_depth,
        "n_threads": args.n_threads,
    }
    print(
        f"{args.rows} rows x {args.numeric} numeric + {args.strings} string columns, "
        f"gbm squared, {args.n_iter} iterations, depth {args.max_depth}, "
        f"{os.cpu_count()} cpus, load average {os.getloadavg()[0]:.2f}"
    )
    fit_core(columns, codes, y, {**settings, "n_iter": 1})  # warm up
    times = {"core": [], "formula": [], "design": []}
    for repeat in range(args.repeats):
        started = time.perf_counter()
        build_design(formula, frame)
        times["design"].append(time.perf_counter() - started)
        # alternate which path runs first, so that drift in machine load hits both
        for path in ("core", "formula") if repeat % 2 == 0 else ("formula", "core"):
            started = time.perf_counter()
            if path == "core":
                core_model = fit_core(columns, codes, y, settings)
            else:
                formula_model = fit_formula(frame, formula, settings)
            times[path].append(time.perf_counter() - started)
    # Same data, same model: the two paths must agree exactly.
    assert core_model.to_json() == formula_model._core.to_json(), "the two paths differ"
    core, via_formula = statistics.median(times["core"]), statistics.median(times["formula"])
    design = statistics.median(times["design"])
    for name, values in times.items():
        print(f"  {name:8s} " + "  ".join(f"{v:.3f}s" for v in values))
    print(
        f"median: core {core:.3f}s, formula {via_formula:.3f}s, "
        f"overhead {100 * (via_formula / core - 1):+.1f}%"
    )
    print(
        f"formula layer alone (build_design): {design:.3f}s = {100 * design / core:.1f}% of the core fit"
    )


if __name__ == "__main__":
    main()
