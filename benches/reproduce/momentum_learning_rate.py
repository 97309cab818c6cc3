"""Does a smaller learning rate make the momentum methods generalise like gbm under early
stopping? Writes docs/results/momentum_learning_rate.md.

The protocol of peers.py (the same data sets, splits, row cap, validation part, patience and
round limit): `agbm`, `vagbm` and `accelerated_gbm` with their defaults except the learning
rate, 0.1 (the default), 0.05 and 0.025, against gbm with its defaults. Regression and binary
sets only (the multiclass ones cost K trees per round). The verdict compares a method's test mean
with gbm's mean ± gbm's standard error, as peers.py does.

    python benches/reproduce/momentum_learning_rate.py [--workers 2]

Per-split results are cached in $OPTBOOST_BENCH_CACHE/momentum-lr (default
/tmp/optboost-momentum-lr) so that an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import common as C
import numpy as np
import peers as P

METHODS = ["agbm", "vagbm", "accelerated_gbm"]
RATES = [0.1, 0.05, 0.025]
DATASETS = [n for n, task in P.DATASETS.items() if task != "multiclass"]
CACHE = Path(os.environ.get("OPTBOOST_BENCH_CACHE", "/tmp/optboost-momentum-lr"))


def variants() -> list[tuple[str, dict]]:
    return [("gbm", {})] + [(m, {"learning_rate": lr}) for m in METHODS for lr in RATES]


def key(method: str, params: dict) -> str:
    return f"{method} {json.dumps(params, sort_keys=True)}"


def run_split(args: tuple[str, int]) -> tuple[str, int]:
    name, split = args
    path = CACHE / f"{name}-{split}.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    task = P.DATASETS[name]
    _, train, valid, test = P.split_frames(C.load(name), split)
    for method, params in variants():
        if key(method, params) in results:
            continue
        model = C.ob_fit(
            train, valid, method=method, loss=P.LOSS[task], n_iter=P.ROUNDS[task],
            early_stopping_rounds=P.PATIENCE, **params,
        )  # fmt: skip
        pred = np.asarray(model.predict(test, type="response"), dtype=float)
        result = P.test_metrics(task, test["y"].to_numpy(), pred)
        result["kept_iteration"] = model.best_iteration
        results[key(method, params)] = result
        CACHE.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(results))
    return name, split


def report(started: float) -> None:
    rows, tally = [], {}
    for name in DATASETS:
        runs = [json.loads((CACHE / f"{name}-{s}.json").read_text()) for s in range(P.N_SPLITS)]
        metric = P.selection_metric(P.DATASETS[name])
        gbm = C.mean_se([r[key("gbm", {})][metric] for r in runs])
        for method in METHODS:
            cells = []
            for lr in RATES:
                k = key(method, {"learning_rate": lr})
                mean, se = C.mean_se([r[k][metric] for r in runs])
                kept = np.mean([r[k]["kept_iteration"] or 0 for r in runs])
                verdict = (
                    "▲" if mean < gbm[0] - gbm[1] else "▼" if mean > gbm[0] + gbm[1] else ""
                )
                tally.setdefault((method, lr), {"▲": 0, "": 0, "▼": 0})[verdict] += 1
                cells.append(f"{mean:.4f} ± {se:.4f} {verdict} (it. {kept:.0f})")
            rows.append([name, method, f"{gbm[0]:.4f} ± {gbm[1]:.4f}", *cells])
    text = "# The momentum methods' learning rate under early stopping\n\n"
    text += (
        "Test metric (RMSE or log loss), mean ± standard error over the 5 splits of "
        "[peers.md](peers.md) (60/20/20, at most "
        f"{P.ROW_CAP:,} rows, early stopping on the validation part after {P.PATIENCE} rounds "
        f"without improvement, at most {P.ROUNDS['regression']} rounds). Each method with its "
        "defaults except the learning rate; ▲ / ▼: better / worse than gbm (its defaults) by "
        "more than gbm's standard error; *it.*: the mean kept iteration.\n\n"
    )
    text += C.md_table(
        ["data", "method", "gbm", *[f"learning rate {lr}" for lr in RATES]], rows
    )
    text += "\n" + C.md_table(
        ["method", "learning rate", "better than gbm", "within 1 se", "worse"],
        [[m, lr, v["▲"], v[""], v["▼"]] for (m, lr), v in tally.items()],
    )
    text += C.how_produced(
        "momentum_learning_rate.py",
        C.SEED,
        f"the {P.N_SPLITS} splits of peers.py",
        f"learning rate {RATES}; other parameters the methods' defaults",
        started,
        notes=["Cached per split in $OPTBOOST_BENCH_CACHE (default /tmp/optboost-momentum-lr)."],
    )
    C.write_md("momentum_learning_rate.md", text)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    started = time.perf_counter()
    jobs = [(n, s) for n in DATASETS for s in range(P.N_SPLITS)]
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for name, split in pool.map(run_split, jobs):
            print(f"{name} split {split}", flush=True)
    report(started)


if __name__ == "__main__":
    main()
