#!/usr/bin/env python3
"""optboost.spark against xgboost.spark on the same local Spark and rows: time per tree.

Data: benches/compare.py's HIGGS-like rows (28 features, a 0/1 label), made on the driver and
handed to Spark as one DataFrame of `--workers` partitions, kept on the executors
(localCheckpoint) before either library trains, so that neither pays for making it. Settings:
the logistic loss, depth-6 trees, learning rate 0.1, 255 bins, one rank (optboost) or worker
(xgboost) per partition with one thread each, on ``local[workers]``.

Columns: "fit s" the whole call (each library's own reading of the partitions, binning and
training; xgboost.spark's includes its repartitioning), "s/tree" that divided by the trees,
"train s/tree" optboost's per-tree training time from its history (binning excluded), "logloss"
on held-out rows predicted in this process.

    python benches/spark_scale.py                            # 200k rows, 2 workers, 20 trees
    python benches/spark_scale.py --rows 10000000 --trees 50

One run on this 2-core machine shared with six other builds (load ≈ 27), 200k rows, 2
workers, 20 trees: optboost.spark 53.5 s (2.68 s/tree; 0.096 s/tree of training proper, the
rest Spark's jobs and task start-up on a saturated machine), logloss 0.5682; xgboost.spark
53.2 s (2.66 s/tree), logloss 0.5687. At this size both are Spark overhead; the 10M-row
comparison (`--rows 10000000`) was not run here.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare import DEPTH, LR, make_data  # noqa: E402

FEATURES = 28


def session(workers: int):
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master(f"local[{workers}]")
        .appName("optboost-spark-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", str(workers))
        .config("spark.default.parallelism", str(workers))
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.driver.memory", "4g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def logloss(y, p) -> float:
    import numpy as np

    p = np.clip(p, 1e-15, 1 - 1e-15)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--trees", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    import numpy as np
    import pandas as pd

    import optboost
    import optboost.spark

    x, y, x_test, y_test = make_data(args.rows, 20_000, FEATURES, args.seed)
    columns = [f"x{j}" for j in range(FEATURES)]
    frame = pd.DataFrame(x, columns=columns).assign(label=y)
    test = pd.DataFrame(x_test, columns=columns)
    spark = session(args.workers)
    data = spark.createDataFrame(frame).repartition(args.workers).localCheckpoint(eager=True)
    print(f"{args.rows:,} rows x {FEATURES}, {args.workers} partitions on local[{args.workers}], "
          f"{args.trees} trees of depth {DEPTH}, learning rate {LR}")
    print(f"{'library':<16}{'fit s':>9}{'s/tree':>9}{'train s/tree':>14}{'logloss':>10}")

    started = time.perf_counter()
    model = optboost.spark.boost(
        "label ~ .", data, loss="logistic", n_iter=args.trees, learning_rate=LR,
        max_depth=DEPTH, n_threads=1, validation_fraction=None, timeout=600,
    )
    fit = time.perf_counter() - started
    seconds = model.history["seconds"].to_numpy()
    train = float(np.diff(seconds, prepend=0.0)[1:].mean()) if len(seconds) > 1 else float("nan")
    loss = logloss(y_test, model.predict(test))
    print(f"{'optboost.spark':<16}{fit:>9.2f}{fit / args.trees:>9.3f}{train:>14.3f}{loss:>10.4f}")

    try:
        from xgboost.spark import SparkXGBClassifier
    except ImportError:
        print("xgboost.spark: not installed (pip install xgboost)")
        return
    started = time.perf_counter()
    classifier = SparkXGBClassifier(
        features_col=columns, label_col="label", num_workers=args.workers,
        n_estimators=args.trees, max_depth=DEPTH, learning_rate=LR, max_bin=255,
        tree_method="hist",  # one task CPU per worker (spark.task.cpus=1)
    )
    fitted = classifier.fit(data)
    fit = time.perf_counter() - started
    booster = fitted.get_booster()
    import xgboost

    p = booster.predict(xgboost.DMatrix(x_test, feature_names=columns))
    loss = logloss(y_test, p)
    print(f"{'xgboost.spark':<16}{fit:>9.2f}{fit / args.trees:>9.3f}{'':>14}{loss:>10.4f}")
    spark.stop()


if __name__ == "__main__":
    main()
