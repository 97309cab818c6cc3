"""What a new user feels of the Python layer, against the Rust core's own time.

Measures, in one run (medians of --repeats alternating runs):

* the Python layer's share of ``optboost.boost`` at 5,000 and 1,000,000 rows
  (time outside the core's binning and ``Booster.advance`` / whole call);
* wide data: p = 8,000 columns, 50 rows: ``boost()`` (one iteration) and
  ``predict`` of 5 rows, each against the core's own time for the same work;
* categorical against numeric prediction (200,000 rows, the same splits);
* ``optboost --help`` and ``--version`` wall time (a fresh interpreter each);
* a 3,000-tree model file: size and ``optboost.load`` time.

    python benches/first_contact.py [--repeats 3] [--large-rows 1000000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import polars as pl

import optboost
from optboost import _core


def timed(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def core_share(rows: int, repeats: int) -> tuple[float, float]:
    """(median share of boost() spent outside the core, median seconds of boost())."""
    rng = np.random.default_rng(0)
    frame = pl.DataFrame({f"x{j}": rng.normal(size=rows) for j in range(10)}).with_columns(
        s=pl.Series(rng.choice(["a", "b", "c", "d"], size=rows)),
        y=pl.Series(rng.normal(size=rows)),
    )
    optboost.boost("y ~ .", frame.head(100), n_iter=1)  # imports formulaic outside the timing
    # The core's own time: binning (the Booster's construction) and training (advance).
    booster_type = _core.Booster
    advance = booster_type.advance
    shares, totals = [], []
    for _ in range(repeats):
        spent = [0.0]

        def counting(self, *args, **kwargs):
            start = time.perf_counter()
            try:
                return advance(self, *args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - start

        def constructing(*args, **kwargs):
            start = time.perf_counter()
            try:
                return booster_type(*args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - start

        booster_type.advance = counting
        _core.Booster = constructing
        try:
            total = timed(
                lambda: optboost.boost("y ~ .", frame, n_iter=50, max_depth=6, progress=False)
            )
        finally:
            booster_type.advance = advance
            _core.Booster = booster_type
        shares.append((total - spent[0]) / total)
        totals.append(total)
    return statistics.median(shares), statistics.median(totals)


def wide(repeats: int) -> dict[str, float]:
    """Median seconds of each call, wall clock and (``cpu_`` keys) this process's CPU time: the
    calls take milliseconds, and on a loaded machine their wall time is mostly waiting."""
    rng = np.random.default_rng(1)
    p, n = 8_000, 50
    frame = pl.DataFrame({f"x{j}": rng.normal(size=n) for j in range(p)}).with_columns(
        y=pl.Series(rng.normal(size=n))
    )
    optboost.boost("y ~ .", frame, n_iter=1)  # imports formulaic once, outside the timing
    times: dict[str, list[float]] = {}

    def timed_both(name: str, function) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        function()
        times.setdefault(name, []).append(time.perf_counter() - wall)
        times.setdefault("cpu_" + name, []).append(time.process_time() - cpu)

    for _ in range(repeats):
        timed_both("fit", lambda: optboost.boost("y ~ .", frame, n_iter=1))
        model = optboost.boost("y ~ .", frame, n_iter=1)
        head = frame.head(5)
        timed_both("predict", lambda: model.predict(head))
        design = optboost.formula.build_design("y ~ .", frame)
        pairs = [("n_iter", "1")]
        timed_both(
            "core_fit",
            lambda: _core.Booster(pairs, design.features, design.y, None).advance(1, 10.0),
        )
        columns = model.spec.columns(head)
        timed_both("core_predict", lambda: model._core.predict_response(columns))
    return {name: statistics.median(values) for name, values in times.items()}


def categorical_predict(repeats: int) -> tuple[float, float]:
    rng = np.random.default_rng(2)
    rows = 200_000
    codes = rng.integers(0, 20, size=(rows, 3))
    numeric = pl.DataFrame({f"c{j}": codes[:, j].astype(np.float64) for j in range(3)})
    strings = pl.DataFrame({f"c{j}": [f"L{k:02d}" for k in codes[:, j]] for j in range(3)})
    y = pl.Series("y", codes.sum(axis=1) + rng.normal(size=rows))
    train = 20_000
    as_numbers = optboost.boost(
        "y ~ c0 + c1 + c2", numeric.head(train).with_columns(y.head(train)), n_iter=100,
        max_depth=6,
    )
    as_levels = optboost.boost(
        "y ~ c0 + c1 + c2", strings.head(train).with_columns(y.head(train)), n_iter=100,
        max_depth=6,
    )
    numeric_times, categorical_times = [], []
    for _ in range(repeats):
        numeric_times.append(timed(lambda: as_numbers.predict(numeric)))
        categorical_times.append(timed(lambda: as_levels.predict(strings)))
    return statistics.median(categorical_times), statistics.median(numeric_times)


def command_line(repeats: int) -> dict[str, float]:
    result = {}
    for flag in ("--help", "--version"):
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "optboost.cli", flag], capture_output=True, check=True
            )
            times.append(time.perf_counter() - start)
        result[flag] = statistics.median(times)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    result["python itself"] = time.perf_counter() - start
    return result


def model_file(repeats: int) -> tuple[int, float]:
    rng = np.random.default_rng(3)
    rows = 5_000
    frame = pl.DataFrame({f"x{j}": rng.normal(size=rows) for j in range(10)}).with_columns(
        y=pl.Series(rng.normal(size=rows))
    )
    model = optboost.boost("y ~ .", frame, n_iter=3_000, max_depth=6, learning_rate=0.01)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.json")
        model.save(path)
        size = os.path.getsize(path)
        times = [timed(lambda: optboost.load(path)) for _ in range(repeats)]
    return size, statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--large-rows", type=int, default=1_000_000)
    args = parser.parse_args()
    print(f"# first contact, {time.strftime('%Y-%m-%d %H:%M')}, load {os.getloadavg()[0]:.2f}")
    for rows in (5_000, args.large_rows):
        share, total = core_share(rows, args.repeats)
        print(f"boost() at {rows:>9,} rows, 50 depth-6 trees: {total:7.3f} s, "
              f"Python layer {share:6.1%}")
    w = wide(args.repeats)
    print(f"p = 8,000, 50 rows: boost() {w['fit']:.3f} s vs core {w['core_fit']:.3f} s "
          f"({w['fit'] / w['core_fit']:.2f}x); predict 5 rows {w['predict']:.4f} s vs core "
          f"{w['core_predict']:.4f} s ({w['predict'] / w['core_predict']:.2f}x)")
    print(f"  the same in CPU time: boost() {w['cpu_fit']:.3f} s vs core {w['cpu_core_fit']:.3f} s "
          f"({w['cpu_fit'] / w['cpu_core_fit']:.2f}x); predict {w['cpu_predict']:.4f} s vs core "
          f"{w['cpu_core_predict']:.4f} s ({w['cpu_predict'] / w['cpu_core_predict']:.2f}x)")
    categorical, numeric = categorical_predict(args.repeats)
    print(f"predict 200,000 rows, 100 trees: categorical {categorical:.3f} s, numeric "
          f"{numeric:.3f} s ({categorical / numeric:.2f}x)")
    for name, seconds in command_line(args.repeats).items():
        print(f"optboost {name}: {seconds:.3f} s")
    size, seconds = model_file(args.repeats)
    print(f"3,000-tree depth-6 model: {size / 1e6:.1f} MB, optboost.load {seconds:.3f} s")


if __name__ == "__main__":
    main()
