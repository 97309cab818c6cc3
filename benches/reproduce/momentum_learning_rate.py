"""Does a smaller learning rate, or weaker momentum, make the momentum methods generalise like
gbm under early stopping? Writes docs/results/momentum_learning_rate.md.

The protocol of peers.py (the same data sets, splits, row cap, validation part, patience and
round limit): `agbm`, `vagbm` and `accelerated_gbm` with their defaults except the learning
rate, 0.1 (the default), 0.05 and 0.025, against gbm with its defaults; and `agbm` with its
momentum weight γ (`gamma`) at 0.5 (the default), 0.25 and 0.1, with what each γ leaves of the
acceleration: the trees AGBM needs to reach gbm's 100-tree training loss on the binary sets
(the measure of benches/reproduce/accelerated_defaults.py, on every row). Regression and binary
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

import accelerated_defaults as A
import common as C
import numpy as np
import peers as P

METHODS = ["agbm", "vagbm", "accelerated_gbm"]
RATES = [0.1, 0.05, 0.025]
# γ = 0.5 is agbm's default: its runs are the learning rate 0.1 ones.
GAMMAS = [0.5, 0.25, 0.1]
DATASETS = [n for n, task in P.DATASETS.items() if task != "multiclass"]
CACHE = Path(os.environ.get("OPTBOOST_BENCH_CACHE", "/tmp/optboost-momentum-lr"))


def variants() -> list[tuple[str, dict]]:
    rates = [(m, {"learning_rate": lr}) for m in METHODS for lr in RATES]
    return [("gbm", {})] + rates + [("agbm", {"gamma": g}) for g in GAMMAS[1:]]


def gamma_params(gamma: float) -> dict:
    return {"learning_rate": 0.1} if gamma == 0.5 else {"gamma": gamma}


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


def cached(name: str) -> tuple[list[dict], str, tuple[float, float]]:
    """A data set's cached splits, its test metric and gbm's mean ± standard error of it."""
    runs = [json.loads((CACHE / f"{name}-{s}.json").read_text()) for s in range(P.N_SPLITS)]
    metric = P.selection_metric(P.DATASETS[name])
    return runs, metric, C.mean_se([r[key("gbm", {})][metric] for r in runs])


def report(started: float) -> None:
    rows, tally = [], {}
    for name in DATASETS:
        runs, metric, gbm = cached(name)
        for method in METHODS:
            cells = []
            for lr in RATES:
                k = key(method, {"learning_rate": lr})
                mean, se = C.mean_se([r[k][metric] for r in runs])
                kept = np.mean([r[k]["kept_iteration"] or 0 for r in runs])
                mark = verdict(mean, gbm)
                tally.setdefault((method, lr), {"▲": 0, "": 0, "▼": 0})[mark] += 1
                cells.append(f"{mean:.4f} ± {se:.4f} {mark} (it. {kept:.0f})")
            rows.append([name, method, f"{gbm[0]:.4f} ± {gbm[1]:.4f}", *cells])
    text = "# The momentum methods' learning rate and momentum under early stopping\n\n"
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
    text += gamma_section(DATASETS)
    text += C.how_produced(
        "momentum_learning_rate.py",
        C.SEED,
        f"the {P.N_SPLITS} splits of peers.py",
        f"learning rate {RATES}; agbm's gamma {GAMMAS}; other parameters the methods' defaults",
        started,
        notes=["Cached per split in $OPTBOOST_BENCH_CACHE (default /tmp/optboost-momentum-lr)."], preset=C.DEFAULTS)
    C.write_md("momentum_learning_rate.md", text)


def verdict(mean: float, gbm: tuple[float, float]) -> str:
    return "▲" if mean < gbm[0] - gbm[1] else "▼" if mean > gbm[0] + gbm[1] else ""


def trees_to_gbm100(gammas: list[float]) -> dict[tuple[str, float], str]:
    """Trees AGBM needs to reach gbm's 100-tree training loss (logistic, depth 3, every row of
    at most 3,000), per binary set and γ."""
    out = {}
    for name in A.BINARY:
        frame = A.sample(C.load(name), 3000)
        start = A.starting_loss(frame, "logistic")
        gbm, _ = A.fit(frame, "gbm", "logistic", 100, 3)
        target = A.loss_at_trees(gbm.history, 100, start)
        for gamma in gammas:
            model, _ = A.fit(frame, "agbm", "logistic", 200, 3, gamma=gamma)
            out[(name, gamma)] = A.trees_to_reach(model.history, target)
    return out


def gamma_section(datasets: list[str]) -> str:
    trees = trees_to_gbm100(GAMMAS)
    rows, tally = [], {g: {"▲": 0, "": 0, "▼": 0} for g in GAMMAS}
    for name in datasets:
        runs, metric, gbm = cached(name)
        cells = []
        for gamma in GAMMAS:
            k = key("agbm", gamma_params(gamma))
            mean, se = C.mean_se([r[k][metric] for r in runs])
            v = verdict(mean, gbm)
            tally[gamma][v] += 1
            cell = f"{mean:.4f} ± {se:.4f}" + (f" {v}" if v else "")
            if (name, gamma) in trees:
                cell += f"; {trees[(name, gamma)]} trees"
            cells.append(cell)
        rows.append([name, f"{gbm[0]:.4f} ± {gbm[1]:.4f}", *cells])
    text = (
        "\n## AGBM's momentum weight γ\n\n`agbm` with its defaults except `gamma`; same "
        "protocol and marks. On the binary sets, *N trees*: the trees AGBM needs to reach gbm's "
        "100-tree training loss (logistic, depth 3, every row of at most 3,000, no validation "
        "part; — = not within 200).\n\n"
    )
    text += C.md_table(["data", "gbm", *[f"γ = {g}" for g in GAMMAS]], rows)
    text += "\n" + C.md_table(
        ["γ", "better than gbm", "within 1 se", "worse"],
        [[g, v["▲"], v[""], v["▼"]] for g, v in tally.items()],
    )
    return text


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
