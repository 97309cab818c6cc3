#!/usr/bin/env python
"""Fuzz optboost's formulas: random and adversarial formulas from the term language's grammar.

A formula is text a user (or a file, or a web form) hands over: whatever it holds,
``build_design`` (and ``optboost.boost``) must either build the design or raise an
``optboost.OptboostError`` subclass -- never another exception, never run code or touch
a file, and never take long: each case must finish within ``--limit`` seconds of CPU time
(default 1), on a frame of a few rows and columns.

    python tests/fuzz/fuzz_formulas.py --cases 20000 --seed 1
    python tests/fuzz/fuzz_formulas.py --replay 1:4711       # one case, in-process, verbose

Cases are generated inside a worker subprocess from ``(seed, index)``; each runs under a
CPU-time alarm (``setitimer(ITIMER_PROF)``: another process's load does not count), and the
parent kills a worker that gives no answer within ``--wall`` seconds. Outcomes:

    built        the design was built (and its spec, through JSON, rebuilt the same columns)
    rejected     an OptboostError subclass
    other        any other exception (type and message kept)
    hang         over the CPU-time limit, or no answer within the wall-clock bound
    crash        the worker died
    side_effect  a file appeared in the worker's empty working directory

The exit status is 1 when any case is ``other``, ``hang``, ``crash`` or ``side_effect``.
tests/python/test_formula_fuzz.py runs a few hundred seeded cases under pytest.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

BAD = ("other", "hang", "crash", "side_effect")
MARKER = "FUZZ_MARKER"
MEMORY_LIMIT = 4 << 30  # address space of a worker: a huge allocation fails there

# ---------------------------------------------------------------- the data

COLUMNS = ["x1", "x2", "x3", "k", "g", "h", "b", "1", "a b", "é", "日本", "off", "w"]


def frame():
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(0)
    n = 24
    return pl.DataFrame(
        {
            "y": rng.normal(size=n),
            "yb": (rng.normal(size=n) > 0).astype(np.int64),
            "t": rng.uniform(1, 5, n),
            "e": rng.integers(0, 2, n),
            "x1": rng.normal(size=n),
            "x2": rng.uniform(1, 10, n),
            "x3": np.where(rng.uniform(size=n) < 0.2, np.nan, rng.normal(size=n)),
            "k": rng.integers(0, 5, n),
            "g": rng.choice(["a", "b", "c"], n),
            "h": rng.choice(["u", "v"], n),
            "b": rng.uniform(size=n) < 0.5,
            "1": rng.normal(size=n),
            "a b": rng.normal(size=n),
            "é": rng.normal(size=n),
            "日本": rng.normal(size=n),
            "off": rng.normal(size=n) * 0.1,
            "w": rng.uniform(0.5, 2, n),
        }
    )


# ---------------------------------------------------------------- the grammar

PAYLOADS = [
    f"__import__('os').system('touch {MARKER}')",
    f"open('{MARKER}', 'w')",
    f"exec(\"open('{MARKER}', 'w')\")",
    f"eval(\"open('{MARKER}', 'w')\")",
    "().__class__.__bases__[0].__subclasses__()",
    "x1.__class__",
    "np.save('" + MARKER + "', x1)",
    "np.lib.npyio.save('" + MARKER + "', x1)",
    "getattr(np, 'save')",
    "lambda: 1",
    "[c for c in x1]",
    "x1[0]",
    "input()",
    "breakpoint()",
    "exit()",
    "globals()",
    "_private(x1)",
    "__builtins__",
    "'text'",
    "b'bytes'",
    "{1: 2}",
    "x1 if x2 else x3",
    "x1 @ x2",
    "not x1",
    "x1 < x2",
    "x1 and x2",
    "(yield x1)",
    "await x1",
    "x1 := 3",
    "*x1",
    "f'{x1}'",
]
ODD = list("~`'\"()[]{}+-*/:^%|&!@#$\\;,.=<>?\n\t ") + [
    "\x00", "\u200b", "\u2212", "∗", "…", "~~", "**", "%in%", "-1", "+0", "0", "1",
    "\ud800", "𝑥", "ß", "ǅ", "Ⅻ",
]
NAMES = ["x1", "x2", "x3", "k", "g", "h", "b", "`1`", "`a b`", "é", "`日本`", "off", "w", "y",
         "zz", "np", "I", "C", "poly", "_x", "__class__", "`weird`name`", "`", "x1.x2", "True",
         "None", "nan", "inf", "a" * 300, "x" + "1" * 40]
NUMBERS = ["0", "1", "2", "3", "-1", "0.5", "1e300", "1e999", "-1e999", "10**8", "2**64",
           "99999999999999999999999999", "9" * 400, "0x10", "1_000", "1j", "True", "None",
           "float('nan')", "3.", ".5"]
ELEMENTWISE = ["np.log", "log", "np.exp", "exp", "np.sqrt", "sqrt", "np.abs", "abs", "np.sin",
               "np.floor", "reciprocal", "np.log1p", "np.arccosh", "I", "center", "scale",
               "standardize", "np.cumsum", "np.fromfile", "numpy.log", "foo", "print"]
BINARY = ["np.maximum", "np.power", "np.hypot", "arctan2", "np.fmin", "Surv"]


class Grammar:
    """Draws formulas from the term language's grammar; ``wild`` is the chance of each
    hostile choice (payloads, odd names and sizes, damage), low for cases meant to build."""

    def __init__(self, rng: random.Random, wild: float):
        self.rng = rng
        self.wild = wild

    def odd(self) -> bool:
        return self.rng.random() < self.wild

    def number(self) -> str:
        return self.rng.choice(NUMBERS if self.odd() else NUMBERS[:6])

    def name(self) -> str:
        return self.rng.choice(NAMES if self.odd() else NAMES[:13])

    def numeric_name(self) -> str:
        return self.rng.choice(["x1", "x2", "x3", "k", "`1`", "`a b`", "é", "w"])

    def expression(self, depth: int) -> str:
        """An expression of the term language (or, now and then, something outside it)."""
        rng = self.rng
        roll = rng.random()
        if depth <= 0 or roll < 0.3:
            return self.numeric_name() if rng.random() < 0.8 else self.number()
        if roll < 0.5:
            op = rng.choice(["+", "-", "*", "/", "**", "^", "%", "//"])
            return f"{self.expression(depth - 1)} {op} {self.expression(depth - 1)}"
        if roll < 0.7:
            function = rng.choice(ELEMENTWISE if self.odd() else ELEMENTWISE[:16])
            return f"{function}({self.expression(depth - 1)})"
        if roll < 0.78:
            function = rng.choice(BINARY if self.odd() else BINARY[:-1])
            return f"{function}({self.expression(depth - 1)}, {self.expression(depth - 1)})"
        if roll < 0.84:
            return f"-({self.expression(depth - 1)})"
        if roll < 0.92 or not self.odd():
            return self.sized(depth)
        return rng.choice(PAYLOADS)

    def sized(self, depth: int) -> str:
        """A call with a size argument: poly's degree, bs's df / knots / degree, C's levels."""
        rng = self.rng
        column = self.numeric_name()
        sizes = ["1", "2", "3", "5", "20", "21", "99", "100", "101", "10**8", "10000000", "0",
                 "-5", "2.5", "True", "None", "[1, 2]", "1e999", "9" * 30]
        size = rng.choice(sizes if self.odd() else sizes[:5])
        kind = rng.randrange(6)
        if kind == 0:
            return f"poly({column}, degree={size}{', raw=True' if rng.random() < 0.3 else ''})"
        if kind == 1:
            return f"bs({column}, df={size})"
        if kind == 2:
            count = rng.choice([0, 1, 3, 50, 120, 2000] if self.odd() else [0, 1, 3])
            knots = ", ".join(str(round(rng.uniform(-1, 11), 2)) for _ in range(count))
            degree = rng.choice(["0", "3", "11", size])
            return f"bs({column}, knots=[{knots}], degree={degree})"
        if kind == 3:
            count = rng.choice([0, 1, 3, 300, 3000] if self.odd() else [2, 3])
            pool = ["a", "b", "c", *map(str, range(count))][:count]
            levels = ", ".join(repr(level) for level in pool)
            return f"C({rng.choice(['g', 'h', 'k'])}, levels=[{levels}])"
        if kind == 4:
            intercept = rng.choice(["True", "False", "3"])
            return (
                f"bs({self.expression(depth - 1)}, df={size}, include_intercept={intercept}, "
                f"lower_bound={self.number()})"
            )
        function = rng.choice(["center", "scale", "C", "factor", "as.factor", "offset"])
        return f"{function}({rng.choice(['g', 'h', column])})"

    def term(self, depth: int) -> str:
        """A formula term: a name, an expression, an interaction or product, a power, nesting."""
        rng = self.rng
        roll = rng.random()
        if depth <= 0 or roll < 0.35:
            return self.name() if rng.random() < 0.6 else self.expression(2)
        if roll < 0.5:
            operator = rng.choice([":", "*", "/", " %in% "])
            return f"{self.term(depth - 1)}{operator}{self.term(depth - 1)}"
        if roll < 0.65:
            group = " + ".join(self.term(depth - 1) for _ in range(rng.randint(1, 6)))
            exponents = ["2", "3", "5", "13", "16", "30", "40", "1000", "1001", "10**8", "0",
                         "-1", "1.5", "x1", "99999999999999999999", "9" * 5000]
            exponent = rng.choice(exponents if self.odd() else exponents[:7])
            return f"({group}){rng.choice(['**', '^', ' ^ '])}{exponent}"
        if roll < 0.72:
            exponent = rng.choice(["2", "3", "13", "30"] if self.odd() else ["2"])
            dot = ". - g - h - `1` - `a b` - é - `日本` - w" if not self.odd() else "."
            return f"({dot}) {rng.choice(['^', '**'])} {exponent}"
        if roll < 0.8:
            nest = rng.randint(1, 300 if self.odd() else 5)
            return "(" * nest + self.name() + ")" * nest
        if roll < 0.88:
            return f"({' + '.join(self.term(depth - 1) for _ in range(rng.randint(1, 4)))})"
        if roll < 0.94 or not self.odd():
            count = rng.randint(2, 16 if self.odd() else 4)
            return "*".join(rng.choice(COLUMNS[:7] + ["zz"]) for _ in range(count))
        return rng.choice(["I(" * 60 + "x1" + ")" * 60, "-" * 500 + "x1", "+" * 300 + "x1",
                           "x1" + ":x1" * 300, "x1" + "*x1" * 200, "x1^2^2^2^2^2"])

    def formula(self) -> str:
        """A formula: a target, '~', terms joined by + and -, sometimes damaged."""
        rng = self.rng
        targets = ["y"] * 12 + ["np.log(x2)", "Surv(t, e)", "y + x1", "yb", "I(y)", "`1`"]
        lhs = rng.choice(
            targets + ["zz", "", "y ~ y", "C(g)", "y | x1", rng.choice(PAYLOADS)]
            if self.odd()
            else targets
        )
        pieces = [self.term(rng.randint(0, 3)) for _ in range(rng.randint(1, 6))]
        rhs = pieces[0]
        for piece in pieces[1:]:
            joins = ["+", "+", "+", "-", "|"] if self.odd() else ["+", "+", "-"]
            rhs += f" {rng.choice(joins)} {piece}"
        if rng.random() < 0.3:
            removals = [". - off", ". - w", ". - y", ". - zz", ". -off - w", "0 + .", "-1 + ."]
            rhs = rng.choice(removals) + " + " + rhs
        text = f"{lhs} ~ {rhs}" if not self.odd() or rng.random() < 0.9 else rhs
        for _ in range(rng.choice([0, 0, 0, 1, 2, 5]) if self.odd() else 0):  # damage
            at = rng.randrange(len(text) + 1)
            action = rng.randrange(3)
            if action == 0:
                text = text[:at] + rng.choice(ODD) + text[at:]
            elif action == 1:
                text = text[:at] + text[at + 1 :]
            else:
                text = text[:at] + rng.choice(ODD) + text[at + 1 :]
        if self.odd() and rng.random() < 0.1:
            text = text * rng.randint(2, 40)  # long strings
        return text


def case(seed: int, index: int) -> tuple[str, dict[str, Any]]:
    """Case (seed, index): the formula and how it is fitted. Half the cases are tame (each
    choice hostile with chance 0.03), half wild (0.5)."""
    rng = random.Random(f"{seed}:{index}")
    text = Grammar(rng, 0.03 if rng.random() < 0.5 else 0.5).formula()
    how = rng.choice(["design", "design", "design", "weights", "boost", "boost_offset"])
    return text, {"how": how, "task": rng.choice(["regression"] * 8 + ["binary", "multiclass"])}


# ---------------------------------------------------------------- evaluation


class CaseTimeout(BaseException):
    """Raised by the CPU-time alarm (a BaseException: no `except Exception` swallows it)."""


def evaluate(text: str, options: dict[str, Any], data: Any) -> dict[str, Any]:
    """Build the design of ``text`` (or fit it); the outcome as a dict."""
    import json as json_module

    import optboost
    from optboost.errors import OptboostError
    from optboost.formula import DesignSpec, build_design

    how = options["how"]
    try:
        if how.startswith("boost"):
            offset = "off" if how == "boost_offset" else None
            model = optboost.boost(
                text, data, n_iter=2, max_depth=2, offset=offset, loss=_loss(options["task"])
            )
            model.predict(data, offset=offset)
        else:
            weights = "w" if how == "weights" else None
            design = build_design(text, data, task=options["task"], weights=weights)
            spec = DesignSpec.from_dict(json_module.loads(json_module.dumps(design.spec.to_dict())))
            again = spec.columns(data)
            if sum(_width(c) for c in again) != sum(_width(c) for c in design.features):
                return {"outcome": "other", "detail": "the spec rebuilt other columns"}
        return {"outcome": "built"}
    except OptboostError as error:
        return {"outcome": "rejected", "detail": f"{type(error).__name__}: {str(error)[:300]}"}
    except CaseTimeout:
        raise
    except BaseException as error:  # SystemExit, KeyboardInterrupt from a payload, ...
        return {"outcome": "other", "detail": f"{type(error).__name__}: {str(error)[:300]}"}


def _loss(task: str) -> str:
    return {"regression": "squared", "binary": "logistic", "multiclass": "softmax"}[task]


def _width(column: Any) -> int:
    return len(column.names) if hasattr(column, "names") else 1


def worker_main(seed: int, limit: float) -> None:
    """Answer case indices on stdin with one JSON line each, in an empty directory."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ImportError, ValueError, OSError):
        pass
    requests = sys.stdin
    sys.stdin = open(os.devnull)  # a payload's input() reads nothing from the channel
    out = sys.stdout
    sys.stdout = sys.stderr  # nothing a case prints may corrupt the channel
    data = frame()
    evaluate("y ~ x1 + np.log(x2) + (x1 + x2)^2", {"how": "boost", "task": "regression"}, data)
    workdir = tempfile.mkdtemp(prefix="optboost-fuzz-formulas-")
    os.chdir(workdir)

    def alarm(signum: int, frame: Any) -> None:
        raise CaseTimeout()

    signal.signal(signal.SIGPROF, alarm)
    out.write("ready\n")
    out.flush()
    for line in requests:
        index = int(line)
        text, options = case(seed, index)
        start = time.process_time()
        signal.setitimer(signal.ITIMER_PROF, limit)
        try:
            result = evaluate(text, options, data)
        except CaseTimeout:
            result = {"outcome": "hang", "detail": f"over {limit} s of CPU time"}
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        result["cpu"] = round(time.process_time() - start, 4)
        left = os.listdir(workdir)
        if left:
            result = {"outcome": "side_effect", "detail": f"files appeared: {left}"}
            for entry in left:
                shutil.rmtree(os.path.join(workdir, entry), ignore_errors=True)
                if os.path.exists(os.path.join(workdir, entry)):
                    os.remove(os.path.join(workdir, entry))
        result["index"] = index
        out.write(json.dumps(result) + "\n")
        out.flush()


# ---------------------------------------------------------------- the campaign


class Worker:
    def __init__(self, seed: int, limit: float):
        env = dict(os.environ, POLARS_MAX_THREADS="1", OMP_NUM_THREADS="1")
        self.process = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker", "--seed", str(seed),
             "--limit", str(limit)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        line = self._line(120.0)
        if line != "ready\n":
            raise RuntimeError(f"the fuzz worker did not start: {line!r}")

    def _line(self, timeout: float) -> str | None:
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        return self.process.stdout.readline() if ready else None

    def run(self, index: int, wall: float) -> dict[str, Any]:
        try:
            self.process.stdin.write(f"{index}\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            return {"outcome": "crash", "detail": "the worker had died", "index": index}
        line = self._line(wall)
        if line is None:
            self.kill()
            return {"outcome": "hang", "detail": f"no answer within {wall} s", "index": index}
        if not line:
            code = self.process.wait()
            return {"outcome": "crash", "detail": f"the worker exited with {code}", "index": index}
        return json.loads(line)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def campaign(
    seed: int, cases: int, limit: float = 1.0, wall: float = 60.0, examples: int = 3
) -> tuple[collections.Counter, dict[str, list[dict[str, Any]]], tuple[float, int]]:
    """Run cases 0..cases-1 of ``seed`` in one worker (restarted after a crash or hang):
    the outcome counts, a few examples of each bad outcome, and the largest CPU time of a
    case with its index."""
    counts: collections.Counter = collections.Counter()
    found: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    slowest = (0.0, -1)
    worker = Worker(seed, limit)
    try:
        for index in range(cases):
            result = worker.run(index, wall)
            outcome = result["outcome"]
            counts[outcome] += 1
            slowest = max(slowest, (result.get("cpu", 0.0), index))
            if outcome in BAD:
                if len(found[outcome]) < examples:
                    found[outcome].append({**result, "formula": case(seed, index)[0][:300]})
                if outcome in ("crash", "hang"):
                    worker.kill()
                    worker = Worker(seed, limit)
    finally:
        worker.kill()
    return counts, dict(found), slowest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--limit", type=float, default=1.0, help="CPU seconds per case")
    parser.add_argument("--wall", type=float, default=60.0, help="wall seconds before a kill")
    parser.add_argument("--replay", help="seed:index of one case, run in-process")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker_main(args.seed, args.limit)
        return 0
    if args.replay:
        seed, index = (int(part) for part in args.replay.split(":"))
        text, options = case(seed, index)
        print(f"formula: {text!r}\noptions: {options}")
        start = time.process_time()
        print(evaluate(text, options, frame()), f"cpu {time.process_time() - start:.3f} s")
        return 0
    start = time.time()
    counts, found, slowest = campaign(args.seed, args.cases, args.limit, args.wall)
    print(f"{args.cases} cases (seed {args.seed}) in {time.time() - start:.0f} s; "
          f"slowest case {slowest[0]:.3f} s of CPU (--replay {args.seed}:{slowest[1]})")
    for outcome, count in counts.most_common():
        print(f"  {outcome:12} {count}")
    for outcome, examples in found.items():
        print(f"{outcome}:")
        for example in examples:
            print("  ", json.dumps(example, ensure_ascii=False))
    return 1 if any(counts[outcome] for outcome in BAD) else 0


if __name__ == "__main__":
    sys.exit(main())
