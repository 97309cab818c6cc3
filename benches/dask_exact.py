#!/usr/bin/env python3
"""optboost.dask against optboost.boost on the same rows: the largest difference of their
predictions on 1, 2 and 3 workers holding four unequal partitions (partition i on worker
[0, 1, 2, 0][i] mod the workers used), continuous features (far more distinct values than bins;
above 200,000 rows the binning sample takes every k-th row), each method with its defaults
(a momentum method holds out a tenth of the rows).

    python benches/dask_exact.py 300000 gbm,agbm,softmax

One run (300,000 rows, 4 features, 20 trees), max relative difference of the predictions:
gbm 0 / 3.5e-14 / 3.8e-14, agbm 0 / 1.4e-11 / 8.9e-12, softmax 0 / 5.3e-13 / 5.3e-13 on
1 / 2 / 3 workers (benches/results.txt).
"""

import sys

import dask.dataframe as dd
import numpy as np
import pandas as pd
from distributed import Client, LocalCluster

import optboost
import optboost.dask as odask


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300_000
    methods = (sys.argv[2] if len(sys.argv) > 2 else "gbm,agbm,softmax").split(",")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 4))
    y = x[:, 0] + np.sin(3 * x[:, 1]) + 0.5 * x[:, 2] * x[:, 3] + rng.normal(scale=0.3, size=n)
    labels = np.where(y > 0.5, "hi", np.where(y < -0.5, "lo", "mid"))
    frame = pd.DataFrame(x, columns=["a", "b", "c", "d"]).assign(y=y, cls=labels)
    cuts = [0, n // 7, n // 7 + n // 3, n // 2, n]
    pieces = [frame.iloc[cuts[i] : cuts[i + 1]].reset_index(drop=True) for i in range(4)]
    with LocalCluster(
        n_workers=3, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, Client(cluster) as client:
        workers = sorted(client.nthreads())
        for n_workers in (1, 2, 3):
            futures = [
                client.scatter(p, workers=[workers[[0, 1, 2, 0][i] % n_workers]], hash=False)
                for i, p in enumerate(pieces)
            ]
            data = dd.from_delayed(futures, meta=pieces[0].iloc[:0], verify_meta=False)
            for method in methods:
                settings = (
                    dict(loss="softmax", n_iter=20)
                    if method == "softmax"
                    else dict(method=method, n_iter=20)
                )
                formula = ("cls" if method == "softmax" else "y") + " ~ a + b + c + d"
                local = np.asarray(optboost.boost(formula, frame, **settings).predict(frame))
                model = odask.boost(formula, data, client=client, timeout=120, **settings)
                got = np.asarray(model.predict(frame))
                diff = np.abs(got - local)
                rel = np.max(diff / np.maximum(np.abs(local), 1e-300))
                print(f"{n_workers} workers {method}: max abs {diff.max():.2e}, max rel {rel:.2e}",
                      flush=True)


if __name__ == "__main__":
    main()
