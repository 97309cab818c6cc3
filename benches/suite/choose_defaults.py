#!/usr/bin/env python3
"""Choose optboost's defaults on the public suite (benches/suite/build.py), never on one set
and never on the shared sets (those stay the held-out check of benches/reproduce/peers.py).

    python benches/suite/choose_defaults.py [--workers 2] [--splits 5] [--sets a,b]
                                            [--candidates a,b] [--combine a,b]
                                            [--recompute a,b] [--report-only] [--out FILE]

Protocol. Each set (at most ROW_CAP rows, a seeded subsample) is cut N_SPLITS times at random
into 60/20/20 train / validation / test parts. Every candidate configuration of gbm is fitted
with one thread under two protocols:
  novalid: boost() called once on train + validation, no validation data given (what a user
           who calls boost() once gets; the candidate may hold out rows itself);
  es:      boost() on train with valid= the validation part, n_iter ES_ROUNDS,
           early_stopping_rounds PATIENCE.
The test loss is RMSE (regression) or log loss (binary, multiclass). A candidate's score on a
set is its mean test loss over the splits divided by the lowest such mean among the
candidates run on that set under that protocol (1.0 = the best candidate). The candidates are
compared by their mean relative loss over the sets (both protocols' sets pooled).

Rule. The design is one factor at a time around today's defaults ("default"). In each factor
(the FACTOR of a candidate), a level replaces today's default only when its mean relative
loss is lower than the default's by more than MARGIN *and* it is better (lower mean test
loss) on more than half of the set × protocol cells; otherwise the default stays. Among
levels that pass, the lowest mean relative loss wins, ties (within MARGIN) to the cheaper one
(lower mean fit time). Changed factors are then confirmed together: the combination must
itself pass the rule against today's defaults (`--combine a,b` runs it as one more candidate).

Adding a candidate is one line in CANDIDATES: name -> Candidate(factor, params) (e.g.
tree="oblivious", random_strength=1, bootstrap="bayesian" once merged). Per-split results are
cached in $OPTBOOST_DEFAULTS_CACHE (default ~/.cache/optboost/defaults) keyed by the
candidate's parameters, so an interrupted run resumes and a changed candidate is recomputed;
--recompute names candidates whose model changed with the library (e.g. "default").
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "reproduce"))
sys.path.insert(0, str(HERE))

import build  # noqa: E402
import common as C  # noqa: E402

CACHE = Path(os.environ.get("OPTBOOST_DEFAULTS_CACHE", Path.home() / ".cache/optboost/defaults"))
N_SPLITS = 5
ROW_CAP = 5_000
ES_ROUNDS = 1000
PATIENCE = 50
MARGIN = 0.005  # half a percent of mean relative loss
LOSS = {"regression": "squared", "binary": "logistic", "multiclass": "softmax"}
PROTOCOLS = ("novalid", "es")
SEED = 20261129


def auto_learning_rate(n_rows: int, n_iter: int) -> float:
    """A learning rate from the training rows and the iteration budget (ours, stated in
    docs/defaults.md): 0.1 at 1,000 rows and 100 iterations, growing as n^(1/4) (more rows
    carry larger steps before they fit noise) and shrinking as T^(-1/2) (more iterations
    share the work), clipped to [0.01, 0.3]. CatBoost sets its rate from the same two
    quantities (Prokhorenkova et al. 2018; Dorogush et al. 2018) by a rule fitted on its own
    benchmarks; this is a simpler, monotone rule of the same kind."""
    rate = 0.1 * (n_rows / 1000.0) ** 0.25 * (100.0 / n_iter) ** 0.5
    return float(min(0.3, max(0.01, rate)))


@dataclass(frozen=True)
class Candidate:
    factor: str
    params: dict = field(default_factory=dict)
    protocols: tuple[str, ...] = PROTOCOLS  # where the candidate means something
    auto_rate: bool = False  # learning_rate = auto_learning_rate(training rows, n_iter)
    # Identical to "default" on a set without categorical features: neither run nor scored there.
    needs_categoricals: bool = False
    # After a fit that held rows out and stopped early at iteration b, fit again on every row
    # with n_iter = b / (1 - validation_fraction) (the same trees per training row), no rows
    # held out: what a refit of the chosen size would give the user.
    refit: bool = False
    # With fewer rows than this held out, no rows are: today's fixed n_iter instead.
    min_held: int = 0


CANDIDATES: dict[str, Candidate] = {
    "default": Candidate("(today)"),
    "depth4": Candidate("tree size", {"max_depth": 4}),
    "depth6": Candidate("tree size", {"max_depth": 6}),
    "depth8": Candidate("tree size", {"max_depth": 8}),
    "leafwise31": Candidate("tree size", {"growth": "leafwise", "max_leaves": 31,
                                          "max_depth": 12}),
    "lr0.05": Candidate("learning rate", {"learning_rate": 0.05}),
    "lr_auto": Candidate("learning rate", auto_rate=True),
    "l2_0": Candidate("l2_leaf", {"l2_leaf": 0.0}),
    "l2_3": Candidate("l2_leaf", {"l2_leaf": 3.0}),
    "msl1": Candidate("min_samples_leaf", {"min_samples_leaf": 1}),
    "msl5": Candidate("min_samples_leaf", {"min_samples_leaf": 5}),
    "msl10": Candidate("min_samples_leaf", {"min_samples_leaf": 10}),
    "msl20": Candidate("min_samples_leaf", {"min_samples_leaf": 20}),
    "target_stats": Candidate("cat_encoding", {"cat_encoding": "target_stats"},
                              needs_categoricals=True),
    # CatBoost's learner (Prokhorenkova et al. 2018): oblivious trees at its depth 6 and leaf L2
    # 3, noise on the split scores, the Bayesian bootstrap, and all of them with target stats.
    "oblivious6": Candidate("tree type", {"tree": "oblivious", "max_depth": 6, "l2_leaf": 3.0}),
    "random_strength1": Candidate("random strength", {"random_strength": 1.0}),
    "bayesian": Candidate("bootstrap", {"bootstrap": "bayesian", "bagging_temperature": 1.0}),
    "catboost_like": Candidate("(combination)", {"tree": "oblivious", "max_depth": 6,
                                                 "l2_leaf": 3.0, "random_strength": 1.0,
                                                 "cat_encoding": "target_stats"}),
    # Target statistics as CatBoost computes them: averaged over several permutations, and with
    # greedily chosen combinations of two categorical columns (src/data/target_combinations.rs).
    "ts_perm4": Candidate("cat_encoding", {"cat_encoding": "target_stats",
                                           "cat_permutations": 4}, needs_categoricals=True),
    "ts_comb4": Candidate("cat_encoding", {"cat_encoding": "target_stats",
                                           "cat_combinations": 4}, needs_categoricals=True),
    "ts_perm4_comb4": Candidate("cat_encoding", {"cat_encoding": "target_stats",
                                                 "cat_permutations": 4, "cat_combinations": 4},
                                needs_categoricals=True),
    # Without valid=: a fixed number of trees against early stopping on a held-out part.
    "n_iter300": Candidate("iterations (no valid=)", {"n_iter": 300}, ("novalid",)),
    "holdout10_es": Candidate("iterations (no valid=)",
                              {"validation_fraction": 0.1, "n_iter": ES_ROUNDS,
                               "early_stopping_rounds": PATIENCE}, ("novalid",)),
    "holdout20_es": Candidate("iterations (no valid=)",
                              {"validation_fraction": 0.2, "n_iter": ES_ROUNDS,
                               "early_stopping_rounds": PATIENCE}, ("novalid",)),
    "holdout10_es_refit": Candidate("iterations (no valid=)",
                                    {"validation_fraction": 0.1, "n_iter": ES_ROUNDS,
                                     "early_stopping_rounds": PATIENCE}, ("novalid",),
                                    refit=True),
    # Added after the first run (so not an independent test): the refit only when the held-out
    # part has at least 50 rows, the library's small-data threshold (docs/algorithms.md §5).
    "holdout10_es_refit_min50": Candidate("iterations (no valid=)",
                                          {"validation_fraction": 0.1, "n_iter": ES_ROUNDS,
                                           "early_stopping_rounds": PATIENCE}, ("novalid",),
                                          refit=True, min_held=50),
}

SHARED_PREFIX = "shared-"  # --shared: the held-out check's sets, never used to choose


def combine(names: list[str]) -> str:
    """Adds the candidate that sets every named candidate's parameters at once (the rule's
    confirmation step) to CANDIDATES; returns its name."""
    name = "+".join(names)
    parts = [CANDIDATES[n] for n in names]
    params: dict = {}
    for c in parts:
        clash = set(params) & set(c.params)
        if clash:
            raise SystemExit(f"--combine: {sorted(clash)} set twice in {names}")
        params.update(c.params)
    protocols = tuple(p for p in PROTOCOLS if all(p in c.protocols for c in parts))
    CANDIDATES[name] = Candidate("(combination)", params, protocols,
                                 auto_rate=any(c.auto_rate for c in parts),
                                 needs_categoricals=all(c.needs_categoricals for c in parts),
                                 refit=any(c.refit for c in parts))
    return name


def fit_params(cand: Candidate, protocol: str, n_train: int) -> dict:
    """The keyword arguments of boost() for a candidate under a protocol."""
    p = {"n_iter": ES_ROUNDS, "early_stopping_rounds": PATIENCE} if protocol == "es" else {}
    p.update(cand.params)
    if cand.auto_rate:
        n_iter = p.get("n_iter", 100)
        # Rows the trees see: a held-out part does not train.
        p["learning_rate"] = auto_learning_rate(n_train, n_iter)
    return p


def test_loss(task: str, model, test) -> float:
    y = test["y"].to_numpy()
    pred = np.asarray(model.predict(test, type="response"), dtype=float)
    if task == "regression":
        return C.rmse(y, pred)
    if task == "multiclass":
        # A class absent from the training part has no column: probability 0 (clipped).
        classes = [int(c) for c in model.classes]
        full = np.zeros((len(y), max(int(y.max()), *classes) + 1))
        full[:, classes] = pred
        return C.log_loss(y, full)
    return C.log_loss(y, pred)


def split_parts(df, split: int):
    if df.height > ROW_CAP:
        df = C.take(df, C.shuffled(df.height, SEED)[:ROW_CAP])
    tr, va, te = C.split_idx(df.height, (0.6, 0.2, 0.2), SEED + split)
    return C.take(df, tr), C.take(df, va), C.take(df, te)


def run_one(task: str, cand: Candidate, protocol: str, train, valid, test) -> dict:
    import optboost

    both = train.vstack(valid)
    data = both if protocol == "novalid" else train
    params = fit_params(cand, protocol, data.height)
    held = round(params.get("validation_fraction", 0) * data.height)
    if "validation_fraction" in params and held < cand.min_held:
        params = fit_params(CANDIDATES["default"], protocol, data.height)
        cand = CANDIDATES["default"]
    started = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = optboost.boost(
            C.formula(train), data, valid=valid if protocol == "es" else None,
            loss=LOSS[task], n_threads=1, seed=0, progress=False, **params,
        )
        if cand.refit:
            fraction = params["validation_fraction"]
            params = {k: v for k, v in params.items()
                      if k not in ("validation_fraction", "early_stopping_rounds")}
            params["n_iter"] = max(1, round(model.kept_iteration / (1 - fraction)))
            model = optboost.boost(
                C.formula(train), data, loss=LOSS[task], n_threads=1, seed=0,
                progress=False, validation_fraction=None, **params,
            )
    seconds = time.perf_counter() - started
    warned = sorted({type(w.message).__name__ for w in caught
                     if type(w.message).__module__.startswith("optboost")})
    return {"loss": test_loss(task, model, test), "seconds": seconds,
            "trees": int(model.kept_iteration), "warnings": warned}


def cache_key(name: str, cand: Candidate) -> str:
    key = {"name": name, "params": cand.params, "auto": cand.auto_rate,
           "protocols": cand.protocols}
    if cand.refit:
        key["refit"] = True
    if cand.min_held:
        key["min_held"] = cand.min_held
    return json.dumps(key, sort_keys=True)


def run_split(set_name: str, task: str, split: int, cands: dict[str, Candidate],
              recompute: set[str]):
    """All candidates on one split; each result is written to the cache as it comes. The
    candidates travel with the job: a spawned worker's CANDIDATES lacks --combine's."""
    path = CACHE / f"{set_name}.{split}.json"
    done = json.loads(path.read_text()) if path.exists() else {}
    if set_name.startswith(SHARED_PREFIX):
        df = C.load(set_name[len(SHARED_PREFIX):])
    else:
        df = build.load(set_name)
    has_cats = any(str(df[c].dtype) in ("String", "Utf8") for c in df.columns if c != "y")
    train, valid, test = split_parts(df, split)
    for name, cand in cands.items():
        key = cache_key(name, cand)
        entry = done.get(name)
        if entry and entry.get("key") == key and name not in recompute:
            continue
        if cand.needs_categoricals and not has_cats:
            continue  # the same model as "default": not a separate candidate on this set
        results = {p: run_one(task, cand, p, train, valid, test) for p in cand.protocols}
        done[name] = {"key": key, **results}
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(done, indent=1))
        tmp.replace(path)
    return set_name, split, done


def _job(args):
    return run_split(*args)


def compute(sets: list[dict], names: list[str], recompute: set[str], workers: int, splits: int):
    CACHE.mkdir(parents=True, exist_ok=True)
    # Split by split (an interrupted run has whole early splits), costly sets first within a
    # split so that the pool does not end on one long job.
    order = sorted(sets, key=lambda e: -(min(e["rows"], ROW_CAP) * max(e["classes"], 1)))
    cands = {n: CANDIDATES[n] for n in names}
    jobs = [(e["name"], e["task"], s, cands, recompute) for s in range(splits) for e in order]
    started = time.time()
    if workers <= 1:
        for i, job in enumerate(jobs, 1):
            _job(job)
            print(f"[{i}/{len(jobs)}] {job[0]} split {job[2]}  {time.time() - started:.0f}s",
                  flush=True)
        return
    with ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn")) as pool:
        futures = [pool.submit(_job, job) for job in jobs]
        for i, fut in enumerate(as_completed(futures), 1):
            name, split, _ = fut.result()
            print(f"[{i}/{len(jobs)}] {name} split {split}  {time.time() - started:.0f}s",
                  flush=True)


# ----------------------------------------------------------------------------- scoring


def cells(sets: list[dict], names: list[str], splits: int):
    """{(set, protocol): {candidate: (mean test loss, mean seconds, mean trees)}}, only the
    cells where every split of every candidate that applies is cached."""
    out = {}
    for e in sets:
        per_split = []
        for s in range(splits):
            path = CACHE / f"{e['name']}.{s}.json"
            per_split.append(json.loads(path.read_text()) if path.exists() else {})
        for protocol in PROTOCOLS:
            row = {}
            for name in names:
                cand = CANDIDATES[name]
                if protocol not in cand.protocols:
                    continue
                if cand.needs_categoricals and e["categorical"] == 0:
                    continue  # the same model as "default": no evidence either way
                vals = [d.get(name, {}).get(protocol) for d in per_split]
                if any(v is None for v in vals):
                    row = None
                    break
                row[name] = (float(np.mean([v["loss"] for v in vals])),
                             float(np.mean([v["seconds"] for v in vals])),
                             float(np.mean([v["trees"] for v in vals])))
            if row:
                out[(e["name"], protocol)] = row
    return out


def summarize(table: dict, names: list[str]) -> dict:
    """Per candidate: mean relative loss (all cells, and per protocol), worst relative loss,
    cells better / worse than "default", mean seconds per fit."""
    rel = {n: [] for n in names}
    by_protocol = {n: {p: [] for p in PROTOCOLS} for n in names}
    better = {n: 0 for n in names}
    worse = {n: 0 for n in names}
    cells_of = {n: 0 for n in names}
    secs = {n: [] for n in names}
    for (set_name, protocol), row in table.items():
        best = min(v[0] for v in row.values())
        for n, (loss, seconds, _) in row.items():
            r = loss / best if best > 0 else 1.0
            rel[n].append(r)
            by_protocol[n][protocol].append(r)
            secs[n].append(seconds)
            cells_of[n] += 1
            base = row["default"][0]
            better[n] += loss < base * (1 - 1e-12)
            worse[n] += loss > base * (1 + 1e-12)
    return {
        n: {
            "factor": CANDIDATES[n].factor,
            "cells": cells_of[n],
            "mean_rel": _mean(rel[n]),
            "rel_novalid": _mean(by_protocol[n]["novalid"]),
            "rel_es": _mean(by_protocol[n]["es"]),
            "worst_rel": float(np.max(rel[n])) if rel[n] else math.nan,
            "better": better[n], "worse": worse[n],
            "seconds": float(np.mean(secs[n])) if secs[n] else math.nan,
        }
        for n in names
    }


def _mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else math.nan


def default_rel_on(table: dict, name: str) -> float:
    """The default's mean relative loss on the cells `name` was run on (same cells)."""
    vals = []
    for row in table.values():
        if name in row:
            best = min(v[0] for v in row.values())
            vals.append(row["default"][0] / best)
    return float(np.mean(vals)) if vals else math.nan


def choose(table: dict, summary: dict) -> dict:
    """{factor: (chosen candidate or "default", why)} by the rule in the module docstring."""
    factors: dict[str, list[str]] = {}
    for n, s in summary.items():
        if n != "default" and s["cells"]:
            factors.setdefault(s["factor"], []).append(n)
    out = {}
    for factor, names in factors.items():
        passing = []
        for n in names:
            s = summary[n]
            base = default_rel_on(table, n)
            if s["mean_rel"] < base - MARGIN and s["better"] > s["cells"] / 2:
                passing.append(n)
        if not passing:
            out[factor] = ("default", "no level beats today's by the margin on most cells")
            continue
        best = min(summary[n]["mean_rel"] for n in passing)
        close = [n for n in passing if summary[n]["mean_rel"] <= best + MARGIN]
        pick = min(close, key=lambda n: summary[n]["seconds"])
        out[factor] = (pick, f"mean relative loss {summary[pick]['mean_rel']:.4f} against "
                             f"{default_rel_on(table, pick):.4f}, better on "
                             f"{summary[pick]['better']}/{summary[pick]['cells']} cells")
    return out


def describe(c: Candidate) -> str:
    parts = [f"{k}={v}" for k, v in c.params.items()]
    if c.auto_rate:
        parts.append("learning_rate=auto(n, n_iter)")
    if c.refit:
        parts.append("then refit on all rows")
    if c.min_held:
        parts.append(f"only with at least {c.min_held} rows held out")
    return ", ".join(parts) or "today's defaults"


def report(sets: list[dict], names: list[str], splits: int, command: str) -> str:
    table = cells(sets, names, splits)
    summary = summarize(table, names)
    n_sets = len({s for s, _ in table})
    lines = [
        "# Choosing defaults on the public suite (generated by benches/suite/choose_defaults.py;"
        " prose in docs/defaults.md)",
        "",
        f"Cells complete: {len(table)} (set × protocol) over {n_sets} sets, {splits} splits "
        f"each; ROW_CAP {ROW_CAP}, es: n_iter {ES_ROUNDS}, patience {PATIENCE}; 1 thread.",
        "",
        "| candidate | factor | parameters | cells | mean rel. loss | novalid | es | worst "
        "| better / worse than default | s per fit |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for n in sorted(names, key=lambda n: (summary[n]["factor"] != "(today)",
                                          summary[n]["factor"], summary[n]["mean_rel"])):
        s = summary[n]
        if not s["cells"]:
            continue
        lines.append(
            f"| {n} | {s['factor']} | {describe(CANDIDATES[n])} | {s['cells']} | "
            f"{s['mean_rel']:.4f} | {s['rel_novalid']:.4f} | {s['rel_es']:.4f} | "
            f"{s['worst_rel']:.3f} | {s['better']} / {s['worse']} | {s['seconds']:.3f} |"
        )
    lines += ["", "Chosen by the rule, per factor:", ""]
    for factor, (pick, why) in choose(table, summary).items():
        lines.append(f"* {factor}: **{pick}** ({why})")
    lines += ["", "Per set (mean test loss over the splits; RMSE or log loss), default against "
              "the best candidate:", "",
              "| set | protocol | default | best candidate | its loss | default / best |",
              "|---|---|---|---|---|---|"]
    for (set_name, protocol), row in sorted(table.items()):
        best = min(row, key=lambda n: row[n][0])
        lines.append(f"| {set_name} | {protocol} | {row['default'][0]:.4f} | {best} | "
                     f"{row[best][0]:.4f} | {row['default'][0] / row[best][0]:.3f} |")
    lines += ["", f"Command: `{command}` (the results come from the per-split cache, computed "
              f"by the same command without --report-only); optboost commit {C.git_commit()}."]
    return "\n".join(lines) + "\n"


def shared_sets() -> list[dict]:
    """peers.py's shared sets, described as the suite's manifest describes its own."""
    import peers

    out = []
    for name, task in peers.DATASETS.items():
        df = C.load(name)
        feats = [c for c in df.columns if c != "y"]
        out.append({"name": SHARED_PREFIX + name, "task": task, "rows": df.height,
                    "classes": int(df["y"].n_unique()) if task != "regression" else 0,
                    "categorical": sum(str(df[c].dtype) in ("String", "Utf8") for c in feats)})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--splits", type=int, default=N_SPLITS)
    parser.add_argument("--sets", default="", help="comma-separated set names (default: all)")
    parser.add_argument("--candidates", default="", help="comma-separated (default: all)")
    parser.add_argument("--recompute", default="", help="candidates to compute afresh")
    parser.add_argument("--combine", default="", help="comma-separated candidates to run "
                        "together as one more candidate (the confirmation step)")
    parser.add_argument("--shared", action="store_true", help="run on the shared sets of "
                        "peers.py instead: a preview of the held-out check, never for choosing")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--out", type=Path, default=None, help="write the report here too")
    args = parser.parse_args()
    C.require_optboost()
    sets = shared_sets() if args.shared else build.manifest()
    if args.sets:
        wanted = set(args.sets.split(","))
        unknown = wanted - {e["name"] for e in sets}
        if unknown:
            raise SystemExit(f"unknown sets: {sorted(unknown)}")
        sets = [e for e in sets if e["name"] in wanted]
    if args.combine:
        parts = args.combine.split(",")
        unknown = [n for n in parts if n not in CANDIDATES]
        if unknown:
            raise SystemExit(f"unknown candidates: {unknown} (known: {list(CANDIDATES)})")
        combine(parts)
    names = args.candidates.split(",") if args.candidates else list(CANDIDATES)
    unknown = [n for n in names if n not in CANDIDATES]
    if unknown:
        raise SystemExit(f"unknown candidates: {unknown} (known: {list(CANDIDATES)})")
    if "default" not in names:
        names.insert(0, "default")
    if not args.report_only:
        compute(sets, names, set(filter(None, args.recompute.split(","))), args.workers,
                args.splits)
    text = report(sets, names, args.splits, "python benches/suite/choose_defaults.py "
                  + " ".join(sys.argv[1:]))
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
