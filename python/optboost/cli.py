"""The ``optboost`` command: fit, predict, demo.

optboost fit train.parquet "y ~ a + b + C(c)" --method agbm --loss logistic -o model.json
optboost predict model.json new.parquet -o predictions.parquet
optboost cv train.parquet "y ~ a + b" --folds 5 --n-iter 300 -o cv.csv
optboost demo
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._extras import DOCS_URL
from .errors import OptboostError

if TYPE_CHECKING:
    import polars as pl

# suffix -> (polars reader, DataFrame writer, extra keyword arguments); polars is
# imported only when a command runs, so that --help and --version answer at once.
FORMATS = {
    ".parquet": ("read_parquet", "write_parquet", {}),
    ".pq": ("read_parquet", "write_parquet", {}),
    ".csv": ("read_csv", "write_csv", {}),
    ".tsv": ("read_csv", "write_csv", {"separator": "\t"}),
    ".ipc": ("read_ipc", "write_ipc", {}),
    ".arrow": ("read_ipc", "write_ipc", {}),
    ".feather": ("read_ipc", "write_ipc", {}),
    ".ndjson": ("read_ndjson", "write_ndjson", {}),
    ".jsonl": ("read_ndjson", "write_ndjson", {}),
}


class UsageError(Exception):
    """A command-line mistake; reported without a traceback."""


def read_data(path: str) -> pl.DataFrame:
    import polars as pl

    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise UsageError(f"cannot read {path!r}: use one of {', '.join(FORMATS)}")
    if not Path(path).exists():
        raise UsageError(f"no such file: {path}")
    reader, _, options = FORMATS[suffix]
    try:
        return getattr(pl, reader)(path, **options)
    except Exception as error:  # noqa: BLE001 - polars and pyarrow raise their own types
        raise UsageError(f"cannot read {path!r}: {type(error).__name__}: {error}") from None


def write_data(frame: pl.DataFrame, path: str) -> None:
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise UsageError(f"cannot write {path!r}: use one of {', '.join(FORMATS)}")
    _, writer, options = FORMATS[suffix]
    getattr(frame, writer)(path, **options)


def parse_param(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name.strip(), value.strip()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="optboost",
        description="Boosting algorithms from optimization theory.",
        epilog=f"Documentation: {DOCS_URL} (this command: {DOCS_URL}cli/)",
    )
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    fit = commands.add_parser("fit", help="fit a model and save it as JSON")
    fit.add_argument("data", help="training data (.parquet, .csv, .ipc, .ndjson)")
    fit.add_argument("formula", help='R-style formula, e.g. "y ~ a + b + C(c)"')
    fit.add_argument("-o", "--output", required=True, help="model file to write (.json)")
    fit.add_argument("--method", help=_method_help())
    fit.add_argument(
        "--loss",
        help='e.g. squared, absolute, "pinball(0.9)" (default: chosen from the target, as R\'s '
        "gbm does, and said)",
    )
    fit.add_argument("--n-iter", type=int, help="iterations (default 100)")
    fit.add_argument("--learning-rate", type=float, help="default 0.1")
    fit.add_argument("--valid", help="validation data for the history and early stopping")
    fit.add_argument("--early-stopping-rounds", type=int)
    fit.add_argument("--weights", help="column holding sample weights")
    fit.add_argument(
        "--group", help="column of query ids, for a ranking loss (lambdarank, pairwise, ...)"
    )
    fit.add_argument(
        "--offset", help="column added to the link (give it to 'predict --offset' too)"
    )
    fit.add_argument("--seed", type=int, help="default 0")
    fit.add_argument("--n-threads", type=int, help="0 (the default): all cores")
    fit.add_argument(
        "--param",
        "-p",
        action="append",
        type=parse_param,
        default=[],
        metavar="NAME=VALUE",
        help="any other training parameter (repeatable), e.g. --param max_depth=4",
    )
    fit.add_argument("--quiet", "-q", action="store_true", help="no progress bar or summary")

    predict = commands.add_parser("predict", help="predict with a saved model")
    predict.add_argument("model", help="model file written by 'optboost fit'")
    predict.add_argument("data", help="data with the model's input columns")
    predict.add_argument(
        "--offset", help="column added to the link (for a model fitted with --offset)"
    )
    predict.add_argument(
        "-o", "--output", help="file to write (.parquet, .csv, ...); default: CSV on stdout"
    )
    predict.add_argument(
        "--type",
        choices=("response", "link", "class", "contrib"),
        default=None,
        help="response (default: probabilities for classification; the margin, link, for "
        "hinge losses), link, class, or contrib "
        "(SHAP contributions to the link score: one column per data column, and bias)",
    )
    predict.add_argument(
        "--iteration",
        type=int,
        default=None,
        help="predict with the model after this many iterations (default: the kept model)",
    )
    predict.add_argument(
        "--n-threads",
        type=int,
        default=None,
        help="threads of the prediction, 0: all cores (default: the fit's); the predictions do "
        "not depend on it",
    )
    predict.add_argument(
        "--keep",
        action="append",
        default=[],
        metavar="COLUMN",
        help="copy this input column (an id, say) into the output (repeatable)",
    )

    cv = commands.add_parser("cv", help="k-fold cross-validation: loss per iteration")
    cv.add_argument("data", help="training data (.parquet, .csv, .ipc, .ndjson)")
    cv.add_argument("formula", help='R-style formula, e.g. "y ~ a + b + C(c)"')
    cv.add_argument("--folds", type=int, default=5)
    cv.add_argument("--groups", help="column whose groups stay within one fold")
    cv.add_argument("--group", help="column of query ids of a ranking loss (kept in one fold)")
    cv.add_argument("--method", help=_method_help())
    cv.add_argument("--loss", help="default: chosen from the target, as R's gbm does")
    cv.add_argument("--n-iter", type=int, help="iterations (default 100)")
    cv.add_argument("--learning-rate", type=float, help="default 0.1")
    cv.add_argument("--seed", type=int, default=0)
    cv.add_argument("--param", "-p", action="append", type=parse_param, default=[],
                    metavar="NAME=VALUE", help="any other training parameter (repeatable)")
    cv.add_argument("-o", "--output", help="write the per-iteration table (.csv, .parquet, ...)")

    demo = commands.add_parser("demo", help="compare methods on a built-in synthetic data set")
    demo.add_argument("--output-dir", default=".", help="where to save optboost-demo.png")
    demo.add_argument("--no-plot", action="store_true")
    demo.add_argument("--rows", type=int, default=20_000, help="training rows (default 20000)")
    demo.add_argument("--n-threads", type=int, default=0)
    return parser


def _method_help() -> str:
    from ._core import method_names  # the core's registry: a small native module, quick to load

    return f"boosting method: {', '.join(method_names())} (default: gbm)"


def command_fit(args: argparse.Namespace) -> None:
    from .api import boost

    if Path(args.output).suffix.lower() != ".json":
        # checked before the fit: a model file is JSON whatever its name, and a .txt or .csv
        # name would hide that
        raise UsageError(
            f"a model is saved as JSON: name the output file with .json, not {args.output!r}"
        )
    data = read_data(args.data)
    valid = read_data(args.valid) if args.valid else None
    model = boost(
        args.formula,
        data,
        method=args.method,
        loss=args.loss,
        n_iter=args.n_iter,
        learning_rate=args.learning_rate,
        valid=valid,
        weights=args.weights,
        group=args.group,
        offset=args.offset,
        early_stopping_rounds=args.early_stopping_rounds,
        seed=args.seed,
        n_threads=args.n_threads,
        progress=False if args.quiet else None,
        **dict(args.param),
    )
    model.save(args.output)
    if not args.quiet:
        print(model.summary())
        print(f"saved to {args.output}")


def command_predict(args: argparse.Namespace) -> None:
    import polars as pl

    from .model import load

    model = load(args.model)
    data = read_data(args.data)
    kind = args.type or ("link" if model.is_margin_loss else "response")
    predictions = model.predict(
        data, type=kind, iteration=args.iteration, offset=args.offset, n_threads=args.n_threads
    )
    columns: dict[str, Any] = {
        name: data.get_column(name) for name in args.keep if _has(data, name)
    }
    if kind == "contrib":
        columns.update(predictions.to_dict())
    elif kind == "class":
        columns["class"] = predictions
    elif predictions.ndim == 2:
        for index, label in enumerate(model.classes):
            prefix = "probability" if kind == "response" else "score"
            columns[f"{prefix}_{label}"] = predictions[:, index]
    elif model.task == "binary" and kind == "response":
        columns[f"probability_{model.positive_class}"] = predictions
    else:
        columns["prediction" if kind == "response" else "score"] = predictions
    frame = pl.DataFrame(_encodable(columns))
    if args.output:
        write_data(frame, args.output)
    else:
        sys.stdout.write(frame.write_csv())


def _encodable(columns: dict[str, Any]) -> dict[str, Any]:
    """The output columns with their names and text values as UTF-8 can hold them
    (`polars_text`), so that every label a model file can hold can be written."""
    import numpy as np

    from .frames import polars_text

    def values(column: Any) -> Any:
        if isinstance(column, np.ndarray) and column.dtype.kind in "UO":
            return [polars_text(v) if isinstance(v, str) else v for v in column.tolist()]
        return column

    return {polars_text(name): values(column) for name, column in columns.items()}


def _has(data: pl.DataFrame, name: str) -> bool:
    if name not in data.columns:
        raise UsageError(f"--keep {name!r}: no such column in the data")
    return True


def command_cv(args: argparse.Namespace) -> None:
    from .crossval import cv

    result = cv(
        args.formula,
        read_data(args.data),
        folds=args.folds,
        groups=args.groups,
        seed=args.seed,
        **({"group": args.group} if args.group else {}),
        method=args.method,
        loss=args.loss,
        n_iter=args.n_iter,
        learning_rate=args.learning_rate,
        **dict(args.param),
    )
    h = result.history
    for label, iteration in (
        ("best iteration", result.best_iteration),
        ("one-SE iteration", result.best_iteration_1se),
    ):
        row = h.row(iteration - 1, named=True)
        print(f"{label}: {iteration} (valid loss {row['valid_mean']:.6g} ± {row['valid_se']:.2g})")
    if args.output:
        write_data(h, args.output)


def command_demo(args: argparse.Namespace) -> None:
    from .demo import run_demo

    run_demo(
        sys.stdout,
        output_dir=args.output_dir,
        plot=not args.no_plot,
        n_train=args.rows,
        n_test=max(args.rows // 4, 1),
        n_threads=args.n_threads,
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"optboost {version('optboost')}"
    except PackageNotFoundError:  # run from a source tree
        from ._core import __version__

        return f"optboost {__version__}"


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    commands = {
        "fit": command_fit,
        "predict": command_predict,
        "cv": command_cv,
        "demo": command_demo,
    }
    try:
        commands[args.command](args)
    except (UsageError, OptboostError, ValueError, OSError, RuntimeError) as error:
        # optboost's errors are written for the user: a traceback would only hide them.
        print(f"optboost {args.command}: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("optboost: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
