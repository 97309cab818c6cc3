"""optboost against LightGBM, XGBoost and scikit-learn's HistGradientBoosting on shared real data.

For each task type (regression, binary, multiclass): every library gets the same tuning budget —
N_CONFIGS configurations drawn from one shared space (depth, learning rate, leaf L2, minimum
leaf size), each trained on the training part with early stopping on the validation part; the
configuration with the best validation metric is kept and scored on the test part. optboost's
draws also choose the method and the loss ("its best method and loss"). Fit time is the
training time of the kept configuration (with its early-stopping validation), one thread.

Run: python benches/reproduce/peers.py   (about 10–15 minutes on one core)
"""

from __future__ import annotations

import time

import common as C
import numpy as np

TASKS = {
    "regression": ["boston_housing", "concrete", "redwine"],
    "binary": ["adult", "german_credit", "pima_diabetes"],
    "multiclass": ["satimage", "pendigits"],
}
PEER_LOSS = {"regression": "squared", "binary": "logistic", "multiclass": "softmax"}
# optboost's (method, loss) choices per task; a draw picks one.
OB_CHOICES = {
    "regression": [
        ("gbm", "squared"),
        ("agbm", "squared"),
        ("residual_gbm", "squared"),
        ("gbm", "huber(1.0)"),
    ],
    "binary": [
        ("gbm", "logistic"),
        ("agbm", "logistic"),
        ("proximal", "logistic"),
        ("residual_gbm", "logistic"),
    ],
    # The AGBM family is single-output (its corrected residual is per row), so not here.
    "multiclass": [("gbm", "softmax"), ("accelerated_gbm", "softmax")],
}
SPACE = {
    "max_depth": [3, 4, 6],
    "learning_rate": [0.05, 0.1, 0.3],
    "l2": [0.0, 1.0, 10.0],
    "min_samples_leaf": [1, 5, 20],
}
N_CONFIGS = 8
N_ROUNDS = 1000
PATIENCE = 50
# Others: 3 random 60/20/20 splits. adult is large (one split); the multiclass sets cost K trees
# per round (two splits, at most 500 rounds) — to keep the script within 20 minutes.
N_SPLITS = {"adult": 1, "satimage": 2, "pendigits": 2}
ROUNDS = {"regression": N_ROUNDS, "binary": N_ROUNDS, "multiclass": 500}
LIBS = ["optboost", "lightgbm", "xgboost", "sklearn"]


def draw(rng: np.random.Generator, task: str) -> dict:
    p = {k: v[rng.integers(len(v))] for k, v in SPACE.items()}
    p["method"], p["loss"] = OB_CHOICES[task][rng.integers(len(OB_CHOICES[task]))]
    p["rounds"] = ROUNDS[task]
    return p


def metrics(task: str, y, pred) -> dict[str, float]:
    """pred: regression values, P(y=1), or n × K class probabilities."""
    if task == "regression":
        return {"rmse": C.rmse(y, pred)}
    if task == "binary":
        return {"logloss": C.log_loss(y, pred), "error": C.error_rate(y, (pred > 0.5).astype(int))}
    return {"logloss": C.log_loss(y, pred), "error": C.error_rate(y, pred.argmax(axis=1))}


def ob_train(p: dict, train, valid, n_classes: int):
    kw = {
        "max_depth": p["max_depth"],
        "learning_rate": p["learning_rate"],
        "l2_leaf": p["l2"],
        "min_samples_leaf": p["min_samples_leaf"],
    }
    t0 = time.perf_counter()
    m = C.ob_fit(
        train,
        valid,
        method=p["method"],
        loss=p["loss"],
        n_iter=p["rounds"],
        early_stopping_rounds=PATIENCE,
        **kw,
    )
    return m, time.perf_counter() - t0


def ob_pred(task: str, m, df):
    # "response": the mean for regression, P(y = 1) for binary, n × K probabilities for multiclass.
    return np.asarray(m.predict(df, type="response"), dtype=float)


def evaluate(task: str, name: str, split: int, skipped: list[str]) -> dict[str, dict]:
    df = C.load(name)
    levels = C.category_levels(df)
    if name == "adult":
        # adult ships its own test file; the validation part comes out of the training file.
        tr, va = C.split_idx(df.height, (0.8, 0.2), C.SEED + split)
        train, valid, test = C.take(df, tr), C.take(df, va), C.load("adult_test")
    else:
        tr, va, te = C.split_idx(df.height, (0.6, 0.2, 0.2), C.SEED + split)
        train, valid, test = C.take(df, tr), C.take(df, va), C.take(df, te)
    n_classes = df["y"].n_unique() if task == "multiclass" else 0
    y_va, y_te = valid["y"].to_numpy(), test["y"].to_numpy()
    sel = "rmse" if task == "regression" else "logloss"
    rng = np.random.default_rng(C.SEED + split)
    draws = [draw(rng, task) for _ in range(N_CONFIGS)]
    out = {}
    for lib in LIBS:
        best = None
        tuning = 0.0
        for p in draws:
            if lib == "optboost":
                why = C.ob_probe(p["method"], p["loss"], train)
                if why:
                    skipped.append(
                        C.skip_line(f"optboost {p['method']}/{p['loss']} on {name}", why)
                    )
                    continue
                m, secs = ob_train(p, train, valid, n_classes)
                desc = f"{p['method']}/{p['loss']}"
                pv, predict = ob_pred(task, m, valid), (lambda d, m=m: ob_pred(task, m, d))
            else:
                x_tr, y_tr = C.to_pandas_cat(train, levels)
                x_va, _ = C.to_pandas_cat(valid, levels)
                f = C.peer_fit(
                    lib,
                    PEER_LOSS[task],
                    p,
                    p["rounds"],
                    x_tr,
                    y_tr,
                    x_va,
                    y_va,
                    n_classes=n_classes,
                    patience=PATIENCE,
                )
                secs = f.seconds

                def predict(d, f=f, lib=lib):
                    x, _ = C.to_pandas_cat(d, levels)
                    if task == "regression":
                        return C.peer_link(lib, f, x)
                    return C.peer_proba(lib, f, x)

                pv = predict(valid)
                desc = PEER_LOSS[task]
            tuning += secs
            score = metrics(task, y_va, pv)[sel]
            if best is None or score < best[0]:
                best = (score, p, secs, predict, desc)
        if best is None:
            continue
        res = metrics(task, y_te, best[3](test))
        res.update(
            fit_s=best[2],
            tune_s=tuning,
            choice=best[4],
            params=f"depth {best[1]['max_depth']}, lr {best[1]['learning_rate']}, "
            f"l2 {best[1]['l2']}, min leaf {best[1]['min_samples_leaf']}",
        )
        out[lib] = res
    return out


def main() -> None:
    started = time.perf_counter()
    C.require_optboost()
    C.check_load()
    skipped: list[str] = []
    text = "# optboost vs LightGBM, XGBoost and scikit-learn (same tuning budget)\n\n"
    text += (
        f"Each library: {N_CONFIGS} configurations drawn from the same space, early stopping on the "
        "validation part, the best validation score kept, scored on the test part. Mean ± "
        "standard error over the splits. `fit s`: training time of the kept configuration; "
        "`tune s`: all its configurations together. optboost's choice column: the method/loss "
        "its best configuration used (per split).\n"
    )
    fig, axes = C.figure(1, 3, width=5.0, height=3.8)
    for ti, (task, names) in enumerate(TASKS.items()):
        main_metric = "rmse" if task == "regression" else "error"
        header = ["data", "library", main_metric]
        if task != "regression":
            header.append("logloss")
        header += ["fit s", "tune s", "choice"]
        rows = []
        for di, name in enumerate(names):
            t0 = time.perf_counter()
            runs = [evaluate(task, name, s, skipped) for s in range(N_SPLITS.get(name, 3))]
            print(f"{task} {name}: {time.perf_counter() - t0:.0f}s", flush=True)
            for li, lib in enumerate(LIBS):
                rs = [r[lib] for r in runs if lib in r]
                if not rs:
                    rows.append([name, lib, "skipped", *([""] * (len(header) - 3))])
                    continue
                row = [name, lib, C.fmt_pm([r[main_metric] for r in rs])]
                if task != "regression":
                    row.append(C.fmt_pm([r["logloss"] for r in rs]))
                row += [
                    C.fmt_pm([r["fit_s"] for r in rs], 2),
                    C.fmt_pm([r["tune_s"] for r in rs], 1),
                    "; ".join(sorted({r["choice"] for r in rs})),
                ]
                rows.append(row)
                # Plot: metric relative to the best library on this data set.
                m, se = C.mean_se([r[main_metric] for r in rs])
                axes[0][ti].errorbar(
                    di + (li - 1.5) * 0.18,
                    m,
                    yerr=se,
                    fmt="o",
                    color=f"C{li}",
                    capsize=2,
                    label=lib if di == 0 else None,
                )
        text += f"\n## {task}\n\n" + C.md_table(header, rows)
        axes[0][ti].set_xticks(range(len(names)), names, fontsize=8)
        C.style_axis(
            axes[0][ti],
            f"{task}: test {main_metric}",
            "data set",
            f"test {main_metric} (lower is better)",
            logy=(task == "regression"),
        )
    text += C.how_produced(
        "peers.py",
        C.SEED,
        "3 random 60/20/20 train/validation/test splits (satimage, pendigits: 2; adult: one "
        "80/20 split of the UCI training file for train/validation and the UCI test file as "
        "test)",
        f"{N_CONFIGS} draws per library and split from depth ∈ {SPACE['max_depth']}, learning "
        f"rate ∈ {SPACE['learning_rate']}, leaf L2 ∈ {SPACE['l2']}, min leaf size ∈ "
        f"{SPACE['min_samples_leaf']} (the same draws for every library); ≤ {ROUNDS} rounds, "
        f"early stopping after {PATIENCE}; optboost also draws (method, loss) from {OB_CHOICES}; "
        "peers use squared error / log loss / softmax objectives; selection by validation "
        "RMSE (regression) or log loss (classification)",
        started,
        notes=[
            (
                "LightGBM: num_leaves = 2^depth, min_sum_hessian 1e-3; XGBoost: hist, "
                "min_child_weight 0 and its min leaf size not set (XGBoost has no row-count limit); "
                "sklearn: max_leaf_nodes = 2^depth, max_depth = depth + 1 (it counts nodes), its "
                "own early stopping on the validation part (it keeps the extra iterations)."
            ),
            *sorted(set(skipped)),
        ],
    )
    C.write_md("peers.md", text)
    C.save_fig(
        fig,
        "peers.png",
        "optboost vs LightGBM / XGBoost / scikit-learn (same tuning budget)",
        f"python benches/reproduce/peers.py · mean ± se over splits · {N_CONFIGS} configurations "
        "per library · 1 thread",
    )
    print(f"peers.py finished in {(time.perf_counter() - started) / 60:.1f} min")


if __name__ == "__main__":
    main()
