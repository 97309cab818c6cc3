"""Shared helpers for the paper reproductions in ``benches/reproduce``.

Data loading with seeded shuffles and splits, k-fold indices, mean ± standard error, the
losses as the papers define them (evaluated here in numpy, the same code for optboost and the
peers), runners for LightGBM / XGBoost / scikit-learn with their own objectives, a Markdown
table writer and plotting helpers. Every script writes into ``docs/results`` and ends each
table with a "how produced" footer (command, seed, splits, grid, threads, commit, runtime).
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

# One OpenMP thread for scikit-learn / LightGBM / XGBoost unless the caller says otherwise; must
# be set before those libraries load their runtimes.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import matplotlib
import numpy as np
import polars as pl

matplotlib.use("Agg")  # scripts run headless
import matplotlib.pyplot as plt

REPO = Path(__file__).resolve().parents[2]
# The data sets live beside the repository, never inside it (MANIFEST.md: do not copy them).
DATA = Path(
    os.environ.get("OPTBOOST_DATASETS")
    or os.environ.get("OPTBOOST_DATA", REPO.parent / "shared" / "datasets")
)
RESULTS = REPO / "docs" / "results"
# One thread everywhere (optboost and every peer): the machine has 2 cores shared with other
# people, and equal threading makes the timing columns comparable.
N_THREADS = 1
SEED = 20240605


# ----------------------------------------------------------------------------- data


def load(name: str) -> pl.DataFrame:
    """One data set of MANIFEST.md, target column ``y``, source row order."""
    return pl.read_parquet(DATA / f"{name}.parquet")


def features(df: pl.DataFrame) -> list[str]:
    return [c for c in df.columns if c != "y"]


def formula(df: pl.DataFrame) -> str:
    # Spell the features out instead of relying on "y ~ ." support.
    return "y ~ " + " + ".join(features(df))


def shuffled(n: int, seed: int) -> np.ndarray:
    """A seeded permutation of 0..n-1: several files are sorted by target or class."""
    return np.random.default_rng(seed).permutation(n)


def split_idx(n: int, fractions: tuple[float, ...], seed: int) -> list[np.ndarray]:
    """Shuffle, then cut into consecutive parts with the given fractions (the last takes the
    rest), e.g. (0.8, 0.2) or (0.5, 0.25, 0.25)."""
    perm = shuffled(n, seed)
    cuts = np.round(np.cumsum(fractions)[:-1] * n).astype(int)
    return np.split(perm, cuts)


def kfold_idx(n: int, k: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """k (train, validation) index pairs over a seeded shuffle."""
    folds = np.array_split(shuffled(n, seed), k)
    return [(np.concatenate(folds[:i] + folds[i + 1 :]), folds[i]) for i in range(k)]


def take(df: pl.DataFrame, idx: np.ndarray) -> pl.DataFrame:
    return df[idx.tolist()]


def mean_se(values) -> tuple[float, float]:
    """Mean and standard error (sample sd / sqrt(n)) — the papers' "±"."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if len(v) == 0:
        return float("nan"), float("nan")
    se = v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else 0.0
    return float(v.mean()), float(se)


def fmt_pm(values, digits: int = 4) -> str:
    m, se = mean_se(values)
    if not np.isfinite(m):
        return "—"
    return f"{m:.{digits}f} ± {se:.{digits}f}"


def geometric_grid(lo: int, hi: int, k: int) -> list[int]:
    """k integers on a geometric grid from lo to hi (RGBM's grid of t)."""
    return sorted({round(v) for v in np.geomspace(lo, hi, k)})


# ----------------------------------------------------------------------------- losses
# The papers' definitions. Binary labels arrive as 0/1 and are mapped to ±1; scores are the
# model's link values (log-odds for logistic).


def _pm1(y):
    return 2.0 * np.asarray(y, dtype=float) - 1.0


def loss_value(loss: str, y, f) -> float:
    """Mean loss ℓ(y, f) in the notation of docs/algorithms.md §6."""
    y = np.asarray(y, dtype=float)
    f = np.asarray(f, dtype=float)
    name, arg = parse_loss(loss)
    if name == "squared":
        return float(np.mean(0.5 * (y - f) ** 2))
    if name == "absolute":
        return float(np.mean(np.abs(y - f)))
    if name == "pinball":
        r = y - f
        return float(np.mean(np.maximum(arg * r, (arg - 1.0) * r)))
    if name == "logistic":  # with the ridge d f²/2 of logistic(d) (RGBM, §4)
        return float(np.mean(np.logaddexp(0.0, -_pm1(y) * f) + 0.5 * arg * f * f))
    if name == "exponential":
        return float(np.mean(np.exp(-arg * _pm1(y) * f)))
    if name == "hinge":
        return float(np.mean(np.maximum(0.0, 1.0 - _pm1(y) * f)))
    if name == "multiclass_hinge":
        # Crammer–Singer: max(0, 1 + max_{k≠y} f_k − f_y); f is n × K.
        yi = y.astype(int)
        fy = f[np.arange(len(yi)), yi]
        other = f.copy()
        other[np.arange(len(yi)), yi] = -np.inf
        return float(np.mean(np.maximum(0.0, 1.0 + other.max(axis=1) - fy)))
    raise ValueError(f"unknown loss {loss!r}")


def parse_loss(loss: str) -> tuple[str, float]:
    """'pinball(0.9)' -> ('pinball', 0.9); defaults for the bare names."""
    if "(" in loss:
        name, arg = loss.rstrip(")").split("(")
        return name, float(arg)
    return loss, {"pinball": 0.5, "exponential": 1.0, "huber": 1.0, "logistic": 0.0}.get(loss, 0.0)


def error_rate(y, pred_class) -> float:
    return float(np.mean(np.asarray(y) != np.asarray(pred_class)))


def rmse(y, f) -> float:
    return float(np.sqrt(np.mean((np.asarray(y, float) - np.asarray(f, float)) ** 2)))


# ----------------------------------------------------------------------------- optboost


def require_optboost():
    """The optboost package; exits with an error (status 1) if it is not built: a script that
    cannot run must not look like one that ran."""
    try:
        import optboost

        return optboost
    except ImportError:
        # An in-place build (`maturin develop`) leaves the extension in python/optboost.
        if (REPO / "python" / "optboost").is_dir() and str(REPO / "python") not in sys.path:
            sys.path.insert(0, str(REPO / "python"))
    try:
        import optboost

        return optboost
    except ImportError as exc:
        raise SystemExit(
            f"error: optboost is not importable ({exc}); build it with "
            "`pip install -e .` or `maturin develop --release`."
        ) from exc


def ob_fit(train: pl.DataFrame, valid: pl.DataFrame | None = None, **params):
    """optboost.boost on all features; one thread unless told otherwise."""
    import optboost

    params.setdefault("n_threads", N_THREADS)
    params.setdefault("seed", 0)
    params.setdefault("progress", False)
    with warnings.catch_warnings():
        # Divergence warnings of accelerated methods are expected in the papers' experiments.
        warnings.simplefilter("ignore")
        return optboost.boost(formula(train), train, valid=valid, **params)


def ob_link(model, df: pl.DataFrame) -> np.ndarray:
    return np.asarray(model.predict(df, type="link"), dtype=float)


def ob_test_loss(model, df: pl.DataFrame, loss: str) -> float:
    """Mean loss of `model` on `df`."""
    return loss_value(loss, df["y"].to_numpy(), ob_link(model, df))


def ob_test_curve(model, df: pl.DataFrame, loss: str) -> np.ndarray:
    """Mean loss on `df` after each iteration 1, 2, … of `model`, from its staged predictions:
    the test part's curve without passing it to training as valid= (a reproduction must never
    let its test data steer a fit)."""
    y = df["y"].to_numpy()
    stages = model.staged_predict(df, type="link")
    return np.array([loss_value(loss, y, np.asarray(f, dtype=float)) for f in stages])


def ob_history(model) -> pl.DataFrame:
    h = model.history
    return h if isinstance(h, pl.DataFrame) else pl.DataFrame(h)


_PROBED: dict[tuple, str | None] = {}


def ob_probe(method: str, loss: str, task_df: pl.DataFrame, **params) -> str | None:
    """None if optboost trains (method, loss) on a tiny sample, else the error message.

    Lets a script skip what optboost does not support yet, with a clear line, instead of
    crashing halfway through."""
    key = (method, loss, tuple(sorted(params.items())), task_df.height)
    if key not in _PROBED:
        small = task_df.head(min(200, task_df.height))
        try:
            m = ob_fit(small, method=method, loss=loss, n_iter=3, **params)
            ok = np.all(np.isfinite(ob_history(m)["train_loss"].to_numpy()))
            _PROBED[key] = None if ok else "non-finite training loss"
        except Exception as exc:  # noqa: BLE001 - any failure means "skip and report"
            _PROBED[key] = f"{type(exc).__name__}: {exc}"
    return _PROBED[key]


def skip_line(what: str, why: str) -> str:
    line = f"SKIPPED {what}: {why}"
    print(line)
    return line


# ----------------------------------------------------------------------------- peers


def to_pandas_cat(df: pl.DataFrame, categories: dict[str, list[str]] | None = None):
    """(X, y) for the peers: string columns become pandas categoricals whose categories are
    fixed on the full data set, so train and test codes agree."""
    import pandas as pd

    pdf = df.to_pandas()
    y = pdf.pop("y").to_numpy()
    for c in pdf.columns:
        if pd.api.types.is_string_dtype(pdf[c]) or pdf[c].dtype == object:
            cats = (
                categories[c]
                if categories and c in categories
                else sorted(pdf[c].dropna().unique())
            )
            pdf[c] = pd.Categorical(pdf[c], categories=cats)
    return pdf, y


def category_levels(df: pl.DataFrame) -> dict[str, list[str]]:
    return {
        c: sorted(df[c].drop_nulls().unique().to_list())
        for c, t in zip(df.columns, df.dtypes)
        if t == pl.String
    }


# The peers' own objectives for the losses of the papers, and the matching eval metric that
# gives the validation curve.
LGB_OBJ = {
    "squared": ("regression", "l2"),
    "absolute": ("regression_l1", "l1"),
    "pinball": ("quantile", "quantile"),
    "logistic": ("binary", "binary_logloss"),
    "softmax": ("multiclass", "multi_logloss"),
}
XGB_OBJ = {
    "squared": ("reg:squarederror", "rmse"),
    "absolute": ("reg:absoluteerror", "mae"),
    "pinball": ("reg:quantileerror", "quantile"),
    "logistic": ("binary:logistic", "logloss"),
    "softmax": ("multi:softprob", "mlogloss"),
}
SK_LOSS = {
    "squared": "squared_error",
    "absolute": "absolute_error",
    "pinball": "quantile",
    "logistic": "log_loss",
    "softmax": "log_loss",
}


@dataclass
class PeerFit:
    curve: np.ndarray  # validation metric per boosting round (lower is better)
    seconds: float
    model: object = field(repr=False)


def peer_fit(
    lib: str,
    loss: str,
    params: dict,
    n_rounds: int,
    Xtr,
    ytr,
    Xva=None,
    yva=None,
    n_classes: int = 0,
    patience: int | None = None,
) -> PeerFit:
    """Train one peer model for n_rounds; record the validation curve if a validation set is
    given. params use common names: learning_rate, max_depth, l2 (leaf L2 penalty),
    min_split_gain, min_samples_leaf."""
    name, tau = parse_loss(loss)
    t0 = time.perf_counter()
    if lib == "lightgbm":
        import lightgbm as lgb

        obj, metric = LGB_OBJ[name]
        p = {
            "objective": obj,
            "metric": metric,
            "learning_rate": params["learning_rate"],
            "max_depth": params["max_depth"],
            "num_leaves": 2 ** params["max_depth"],
            "lambda_l2": params.get("l2", 0.0),
            "min_gain_to_split": params.get("min_split_gain", 0.0),
            "min_data_in_leaf": params.get("min_samples_leaf", 1),
            "min_sum_hessian_in_leaf": 1e-3,  # 0 trips a LightGBM check with categoricals
            "num_threads": N_THREADS,
            "verbose": -1,
            "seed": 0,
            "deterministic": True,
            "force_row_wise": True,
        }
        if name == "pinball":
            p["alpha"] = tau
        if name == "softmax":
            p["num_class"] = n_classes
        dtr = lgb.Dataset(Xtr, ytr, free_raw_data=False)
        rec: dict = {}
        kw = {}
        if Xva is not None:
            dva = lgb.Dataset(Xva, yva, reference=dtr)
            kw = {
                "valid_sets": [dva],
                "valid_names": ["valid"],
                "callbacks": [lgb.record_evaluation(rec)],
            }
            if patience:
                kw["callbacks"].append(lgb.early_stopping(patience, verbose=False))
        model = lgb.train(p, dtr, num_boost_round=n_rounds, **kw)
        secs = time.perf_counter() - t0
        curve = np.asarray(rec["valid"][metric]) if rec else np.array([])
        return PeerFit(curve, secs, model)
    if lib == "xgboost":
        import xgboost as xgb

        obj, metric = XGB_OBJ[name]
        p = {
            "objective": obj,
            "eval_metric": metric,
            "eta": params["learning_rate"],
            "max_depth": params["max_depth"],
            "lambda": params.get("l2", 1.0),
            "gamma": params.get("min_split_gain", 0.0),
            "min_child_weight": 0.0,
            "tree_method": "hist",
            "nthread": N_THREADS,
            "seed": 0,
            "verbosity": 0,
        }
        if name == "pinball":
            p["quantile_alpha"] = tau
        if name == "softmax":
            p["num_class"] = n_classes
        dtr = xgb.DMatrix(Xtr, ytr, enable_categorical=True)
        rec = {}
        evals = []
        if Xva is not None:
            evals = [(xgb.DMatrix(Xva, yva, enable_categorical=True), "valid")]
        model = xgb.train(
            p,
            dtr,
            num_boost_round=n_rounds,
            evals=evals,
            evals_result=rec,
            verbose_eval=False,
            early_stopping_rounds=patience if evals else None,
        )
        secs = time.perf_counter() - t0
        curve = np.asarray(rec["valid"][metric]) if rec else np.array([])
        return PeerFit(curve, secs, model)
    if lib == "sklearn":
        from sklearn.ensemble import (
            HistGradientBoostingClassifier,
            HistGradientBoostingRegressor,
        )

        cls = (
            HistGradientBoostingClassifier
            if name in ("logistic", "softmax")
            else HistGradientBoostingRegressor
        )
        kw = {
            "loss": SK_LOSS[name],
            "learning_rate": params["learning_rate"],
            "max_iter": n_rounds,
            "max_depth": params["max_depth"] + 1,  # sklearn counts nodes
            "max_leaf_nodes": 2 ** params["max_depth"],
            "l2_regularization": params.get("l2", 0.0),
            "min_samples_leaf": params.get("min_samples_leaf", 1),
            "random_state": 0,
            "early_stopping": Xva is not None,
            "n_iter_no_change": patience or 20,
            "categorical_features": "from_dtype",
        }
        if name == "pinball":
            kw["quantile"] = tau
        model = cls(**kw)
        if Xva is not None:
            model.fit(Xtr, ytr, X_val=Xva, y_val=yva)
            # sklearn keeps only the validation score per iteration (higher is better).
            curve = -np.asarray(model.validation_score_[1:])
        else:
            model.fit(Xtr, ytr)
            curve = np.array([])
        return PeerFit(curve, time.perf_counter() - t0, model)
    raise ValueError(lib)


def peer_link(lib: str, fit: PeerFit, X, n_classes: int = 0) -> np.ndarray:
    """Raw scores (link scale) of a peer model, comparable to optboost's type="link"."""
    m = fit.model
    if lib == "lightgbm":
        return np.asarray(m.predict(X, raw_score=True))
    if lib == "xgboost":
        import xgboost as xgb

        return np.asarray(
            m.predict(xgb.DMatrix(X, enable_categorical=True), output_margin=True, **_xgb_range(m))
        )
    if lib == "sklearn":
        if hasattr(m, "decision_function"):
            return np.asarray(m.decision_function(X))
        return np.asarray(m.predict(X))
    raise ValueError(lib)


def _xgb_range(m) -> dict:
    # xgb.train returns the last iteration's model even when it early-stopped; use the best.
    best = getattr(m, "best_iteration", None)
    return {"iteration_range": (0, best + 1)} if best is not None else {}


def peer_proba(lib: str, fit: PeerFit, X) -> np.ndarray:
    """P(y = 1) for binary tasks, the n × K class probabilities for multiclass ones."""
    m = fit.model
    if lib == "lightgbm":
        return np.asarray(m.predict(X))  # uses the best iteration after early stopping
    if lib == "xgboost":
        import xgboost as xgb

        return np.asarray(m.predict(xgb.DMatrix(X, enable_categorical=True), **_xgb_range(m)))
    p = np.asarray(m.predict_proba(X))
    return p[:, 1] if p.shape[1] == 2 else p


def log_loss(y, proba) -> float:
    """Mean negative log-likelihood: proba is P(y=1) (binary) or n × K (multiclass)."""
    y = np.asarray(y).astype(int)
    p = np.asarray(proba, dtype=float)
    p = p[np.arange(len(y)), y] if p.ndim == 2 else np.where(y == 1, p, 1.0 - p)
    return float(-np.mean(np.log(np.clip(p, 1e-15, 1.0))))


# ----------------------------------------------------------------------------- output


def git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


DEFAULTS = "optboost's defaults, no preset (this script measures the defaults, not a paper)"


def how_produced(
    script: str,
    seed: int,
    splits: str,
    grid: str,
    started: float,
    notes: list[str] | None = None,
    preset: str = 'preset="paper" (docs/algorithms.md §13) plus the settings above',
) -> str:
    """The footer every table carries: enough to re-run it and to judge it. `preset`: the
    settings optboost ran with (the papers' reproductions use preset="paper"; the scripts that
    measure optboost's own defaults say so)."""
    lines = [
        "",
        "**How produced.**",
        (
            f"- Command: `python benches/reproduce/{script}` (from the repository root; "
            f"data from `{os.path.relpath(DATA, REPO)}`)"
        ),
        f"- Seed: {seed}; splits: {splits}",
        f"- Grid / settings: {grid}",
        f"- optboost settings: {preset}",
        (
            f"- Threads: {N_THREADS} for optboost and every peer; "
            f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {sys.version.split()[0]}"
        ),
        (
            f"- Commit: {git_commit()}; wall time of the script so far: "
            f"{(time.perf_counter() - started) / 60:.1f} min"
        ),
    ]
    lines += [f"- {n}" for n in dict.fromkeys(notes or [])]  # each skip reason once
    return "\n".join(lines) + "\n"


def md_table(header: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def write_md(name: str, text: str) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / name
    path.write_text(text)
    print(f"wrote {path.relative_to(REPO)}")
    return path


def figure(nrows: int, ncols: int, width: float = 5.0, height: float = 3.6):
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False)
    return fig, axes


def style_axis(
    ax,
    title: str,
    xlabel: str,
    ylabel: str,
    logx: bool = False,
    logy: bool = False,
    legend: bool = True,
) -> None:
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if not ax.has_data():
        # A skipped panel says so instead of failing on a log scale of nothing.
        ax.text(
            0.5,
            0.5,
            "not run (see SKIPPED lines)",
            ha="center",
            va="center",
            transform=ax.transAxes,
            color="0.4",
        )
        return
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)


def save_fig(fig, name: str, suptitle: str, caption: str, bottom: float = 0.035) -> Path:
    """Save with a title and a one-line "how produced" caption under the plot."""
    fig.suptitle(suptitle, fontsize=12)
    fig.text(0.5, 0.003, caption, ha="center", va="bottom", fontsize=7, color="0.35", wrap=True)
    fig.tight_layout(rect=(0, bottom, 1, 0.96))  # `bottom` leaves room for a figure legend
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / name
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"wrote {path.relative_to(REPO)}")
    return path


def check_load() -> None:
    """Warn when the machine is busy: timings would not be comparable."""
    try:
        load1 = os.getloadavg()[0]
    except OSError:
        return
    if load1 > (os.cpu_count() or 1):
        print(f"note: load average {load1:.1f} > cores; wall-clock columns are noisy.")
