"""Test loss of the accelerated and proximal methods with their defaults, without early
stopping, against gbm with its defaults. Writes docs/results/accelerated_test_loss.md.

The situation of a user who fits `n_iter=100` and no validation data: the momentum methods hold
out a tenth of the rows by default (validation_fraction="auto") and keep the iterate of lowest
held-out loss; the rows "(every row trains)" run them with validation_fraction=None, the papers'
algorithms as printed up to the safeguard, which is what the defaults were before.

Every shared data set except the one-feature curve examples (engel, mcycle), at most ROW_CAP rows
(a seeded subsample), 5 random 80/20 train/test splits. Test metric: RMSE (regression) or log
loss (classification), mean ± standard error over the splits. Verdict against gbm: *better* when
the mean is below gbm's mean minus gbm's standard error, *worse* when above its mean plus it.

    python benches/reproduce/accelerated_test_loss.py
"""

from __future__ import annotations

import time

import common as C
import numpy as np

DATASETS = {
    "boston_housing": "squared",
    "concrete": "squared",
    "crabs": "squared",
    "diamonds": "squared",
    "redwine": "squared",
    "sklearn_diabetes": "squared",
    "a1a": "logistic",
    "adult": "logistic",
    "german_credit": "logistic",
    "pima_diabetes": "logistic",
    "sonar": "logistic",
    "connect_4": "softmax",
    "letter": "softmax",
    "pendigits": "softmax",
    "penguins": "softmax",
    "satimage": "softmax",
}
MOMENTUM = ["agbm", "agbmr", "vagbm", "accelerated_gbm", "accelerated_proximal"]
PROXIMAL = ["proximal", "residual_proximal"]
ROW_CAP = 3000
N_SPLITS = 5
EVERY_ROW = " (every row trains)"


def configs() -> list[tuple[str, str, dict]]:
    out = [("gbm", "gbm", {})]
    out += [(m, m, {}) for m in MOMENTUM]
    out += [(m, m, {}) for m in PROXIMAL]
    out += [(m + EVERY_ROW, m, {"validation_fraction": None}) for m in MOMENTUM]
    return out


def test_metric(model, test, loss: str) -> float:
    y = test["y"].to_numpy()
    pred = np.asarray(model.predict(test, type="response"), dtype=float)
    return C.rmse(y, pred) if loss == "squared" else C.log_loss(y, pred)


def main() -> None:
    started = time.perf_counter()
    C.require_optboost()
    C.check_load()
    results: dict[str, dict[str, list[float]]] = {}
    for name, loss in DATASETS.items():
        t0 = time.perf_counter()
        df = C.load(name)
        if df.height > ROW_CAP:
            df = C.take(df, C.shuffled(df.height, C.SEED)[:ROW_CAP])
        per = results.setdefault(name, {})
        for split in range(N_SPLITS):
            tr, te = C.split_idx(df.height, (0.8, 0.2), C.SEED + split)
            train, test = C.take(df, tr), C.take(df, te)
            for label, method, extra in configs():
                model = C.ob_fit(train, method=method, loss=loss, seed=split, **extra)
                per.setdefault(label, []).append(test_metric(model, test, loss))
        print(f"{name}: {time.perf_counter() - t0:.0f}s", flush=True)

    labels = [label for label, _, _ in configs()]
    header = ["method", *DATASETS, "better / within / worse than gbm"]
    rows = []
    stats = {n: {lab: C.mean_se(v) for lab, v in per.items()} for n, per in results.items()}
    for label in labels:
        cells, tally = [label], {"better": 0, "within": 0, "worse": 0}
        for name in DATASETS:
            m, se = stats[name][label]
            g, gse = stats[name]["gbm"]
            verdict = "better" if m < g - gse else "worse" if m > g + gse else "within"
            if label != "gbm":
                tally[verdict] += 1
            marks = {"better": " ▲", "worse": " ▼", "within": ""}
            mark = "" if label == "gbm" else marks[verdict]
            cells.append(f"{m:.4f} ± {se:.4f}{mark}")
        counts = f"{tally['better']} / {tally['within']} / {tally['worse']}"
        cells.append("" if label == "gbm" else counts)
        rows.append(cells)
    text = "# Test loss of the accelerated and proximal methods with their defaults\n\n"
    text += (
        "100 iterations, no validation data given, no early stopping: every method with its "
        "defaults. The momentum methods hold out a tenth of the training rows "
        '(validation_fraction="auto") and keep the iterate of lowest loss on it; the rows '
        f"*{EVERY_ROW.strip()}* run them with validation_fraction=None. Test RMSE (regression: "
        "boston_housing … sklearn_diabetes) or log loss (classification), mean ± standard "
        "error over 5 random 80/20 splits. ▲ better than gbm by more than gbm's standard "
        "error, ▼ worse by more than it.\n\n"
    )
    text += C.md_table(header, rows)
    text += C.how_produced(
        "accelerated_test_loss.py",
        C.SEED,
        f"{N_SPLITS} random 80/20 train/test splits of a seeded subsample of at most "
        f"{ROW_CAP:,} rows per data set",
        "defaults of every method (learning_rate 0.1, depth 3, n_iter 100; momentum methods: "
        "rho 1/σ, gamma 0.5, safeguard restart, validation_fraction auto); seed = split number",
        started,
        notes=[
            "engel and mcycle (one feature) are left out: curve examples for the quantile losses."
        ], preset=C.DEFAULTS)
    C.write_md("accelerated_test_loss.md", text)
    print(f"finished in {(time.perf_counter() - started) / 60:.1f} min")


if __name__ == "__main__":
    main()
