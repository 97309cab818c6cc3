"""Smoke test of an installed optboost (run by .ci/wheel_smoke inside a fresh venv that holds
the wheel and its base dependencies only, with no Rust tool on PATH): fit, predict, save, load,
SHAP contributions, the command line, and the messages of features whose extra is missing.

Run as a script; exits non-zero on the first failure."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import numpy as np
import polars as pl

import optboost
from optboost.errors import MissingDependencyError


def check(condition: bool, message: str) -> None:
    if not condition:
        sys.exit(f"smoke test failed: {message}")


def requirers(package: str) -> set[str]:
    """The installed distributions that require ``package`` outside their extras."""
    found = set()
    for dist in importlib.metadata.distributions():
        for requirement in dist.requires or []:
            name = re.split(r"[\s<>=!~;\[(]", requirement, maxsplit=1)[0].lower()
            if name == package and "extra ==" not in requirement:
                found.add(dist.metadata["Name"].lower())
    return found


def missing_extra_says(extra: str, action) -> None:
    try:
        action()
    except MissingDependencyError as error:
        check(f'pip install "optboost[{extra}]"' in str(error), f"{error} does not name [{extra}]")
    else:
        check(False, f"expected a MissingDependencyError naming optboost[{extra}]")


def main() -> None:
    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    check(Path(optboost.__file__).resolve().is_relative_to(site),
          f"optboost imported from {optboost.__file__}, not the venv's {site}")
    for tool in ("cargo", "rustc"):
        check(shutil.which(tool) is None, f"{tool} is on PATH: the wheel must not need it")
    for optional in ("pyarrow", "matplotlib", "sklearn", "shap", "dask"):
        check(importlib.util.find_spec(optional) is None, f"the base install pulled {optional}")
    # formulaic (the formula parser) requires pandas and scipy: it is their only way in
    for pulled in ("pandas", "scipy"):
        wanted_by = sorted(requirers(pulled))
        check(wanted_by in ([], ["formulaic"]), f"{pulled} is required by {wanted_by}")

    rng = np.random.default_rng(1)
    n = 2_000
    frame = pl.DataFrame({
        "a": rng.normal(size=n),
        "b": rng.uniform(size=n),
        "c": rng.choice(["x", "y", "z"], size=n),
    })
    frame = frame.with_columns(
        y=2 * pl.col("a") + (pl.col("c") == "z").cast(pl.Float64) + rng.normal(scale=0.1, size=n)
    )
    model = optboost.boost("y ~ a + b + C(c) + np.log1p(b)", data=frame, n_iter=40,
                           max_depth=3, progress=False)
    predictions = model.predict(frame)
    check(predictions.shape == (n,) and np.isfinite(predictions).all(), "predictions")
    check(np.corrcoef(predictions, frame["y"].to_numpy())[0, 1] > 0.9, "a model that fits")

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "model.json"
        model.save(path)
        loaded = optboost.load(path)
        check(np.array_equal(loaded.predict(frame), predictions), "save/load changed predictions")

        contributions = loaded.predict(frame, type="contrib")
        link = loaded.predict(frame, type="link")
        check(np.allclose(contributions.to_numpy().sum(axis=1), link, atol=1e-9),
              "SHAP contributions do not sum to the link score")

        data = Path(directory) / "train.parquet"
        frame.write_parquet(data)
        command = shutil.which("optboost")
        check(command is not None and Path(command).resolve().is_relative_to(
            Path(sys.prefix).resolve()), f"the optboost command is {command}, not the venv's")
        cli_model = Path(directory) / "cli.json"
        subprocess.run([command, "fit", str(data), "y ~ a + b + C(c)", "--n-iter", "20", "-q",
                        "-o", str(cli_model)], check=True)
        out = Path(directory) / "predictions.csv"
        subprocess.run([command, "predict", str(cli_model), str(data), "-o", str(out)], check=True)
        check(pl.read_csv(out).height == n, "optboost predict wrote every row")
        help_text = subprocess.run([command, "--help"], check=True, capture_output=True,
                                   text=True).stdout
        check("https://" in help_text and "Documentation" in help_text, "--help links the docs")
        demo = subprocess.run([command, "demo", "--rows", "2000", "--output-dir", directory],
                              check=True, capture_output=True, text=True).stdout
        check('pip install "optboost[plot]"' in demo, f"the demo says how to get its plot:\n{demo}")

    missing_extra_says("plot", model.plot)
    missing_extra_says("sklearn", lambda: importlib.import_module("optboost.sklearn"))
    missing_extra_says("dask", lambda: importlib.import_module("optboost.dask"))
    missing_extra_says("explain", lambda: model.explain(frame))
    missing_extra_says("onnx", model.to_onnx)
    print(f"smoke test passed: optboost {optboost.__version__} from {optboost.__file__}")


if __name__ == "__main__":
    main()
