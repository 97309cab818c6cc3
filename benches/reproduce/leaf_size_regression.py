"""The leaf minimum for the regression losses, under peers.py's protocols. Writes
docs/results/leaf_size_regression.md.

`min_samples_leaf` = 10 was chosen on the classification sets (leaf_defaults.py --study size),
where a pure leaf's Newton value grows without bound. This measures the regression losses: least
squares, whose leaves L2 shrinks (a leaf of n rows gets n/(n + λ) of its mean residual), and the
absolute and pinball losses, whose leaves are quantiles of their residuals that L2 does not touch.

Every regression set of peers.py, its 5 splits (60/20/20, at most 5,000 rows), early stopping on
the validation part after 50 rounds (at most 1000); (a) every other parameter at its default,
(b) least squares only, learning rate {0.05, 0.1} × depth {3, 6} with the best validation loss
kept. Cells: mean test loss of the fitted loss ± standard error over the splits (least squares:
RMSE, as peers.md); the best mean of a row in bold.

    python benches/reproduce/leaf_size_regression.py
"""

from __future__ import annotations

import time

import common as C
import numpy as np
import peers as P

SETS = [name for name, task in P.DATASETS.items() if task == "regression"]
LOSSES = ["squared", "absolute", "pinball(0.9)"]
LEAF_MINIMA = [1, 3, 10, 20]


def score(model, test, loss: str) -> float:
    if loss == "squared":
        return C.rmse(test["y"].to_numpy(), C.ob_link(model, test))
    return C.ob_test_loss(model, test, loss)


def fit(train, valid, loss: str, **params):
    return C.ob_fit(
        train,
        valid,
        method="gbm",
        loss=loss,
        n_iter=P.ROUNDS["regression"],
        early_stopping_rounds=P.PATIENCE,
        **params,
    )


def test_scores(splits, loss: str, leaf: int, grid: bool) -> np.ndarray:
    configs = [{"learning_rate": lr, "max_depth": d} for lr, d in P.GRID] if grid else [{}]
    out = []
    for train, valid, test in splits:
        best = None
        for config in configs:
            model = fit(train, valid, loss, min_samples_leaf=leaf, **config)
            on_valid = score(model, valid, loss)
            if best is None or on_valid < best[0]:
                best = (on_valid, score(model, test, loss))
        out.append(best[1])
    return np.array(out)


def row(name: str, loss: str, grid: bool) -> list[str]:
    df = C.load(name)
    splits = [P.split_frames(df, split)[1:] for split in range(P.N_SPLITS)]
    scores = [test_scores(splits, loss, leaf, grid) for leaf in LEAF_MINIMA]
    means = [s.mean() for s in scores]
    cells = []
    for s, mean in zip(scores, means):
        cell = f"{mean:.4g} ± {s.std(ddof=1) / np.sqrt(len(s)):.2g}"
        cells.append(f"**{cell}**" if mean == min(means) else cell)
    print(name, loss, "grid" if grid else "defaults", cells, flush=True)
    return [name, loss, "grid" if grid else "defaults", *cells]


def main() -> None:
    started = time.perf_counter()
    rows = [row(name, loss, False) for loss in LOSSES for name in SETS]
    rows += [row(name, "squared", True) for name in SETS]
    header = ["data", "loss", "protocol"] + [f"min_samples_leaf {m}" for m in LEAF_MINIMA]
    text = [
        "# The leaf minimum for the regression losses\n\n",
        "gbm's test loss (least squares: RMSE) by `min_samples_leaf`, mean ± standard error over "
        "peers.md's 5 splits, early stopping on the validation part. The default is 1 for least "
        "squares and 10 for every other loss (docs/algorithms.md §10).\n\n",
        C.md_table(header, rows),
        C.how_produced(
            "leaf_size_regression.py",
            C.SEED,
            "peers.py's: 5 random 60/20/20 splits of at most 5,000 rows",
            "(a) defaults; (b) least squares, learning rate {0.05, 0.1} × depth {3, 6}, best "
            "validation loss kept; early stopping after 50 rounds, at most 1000",
            started, preset=C.DEFAULTS),
    ]
    C.write_md("leaf_size_regression.md", "".join(text))


if __name__ == "__main__":
    main()
