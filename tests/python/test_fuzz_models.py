"""Property-based fuzzing of model files and frames (hypothesis).

Whatever a saved model file or a prediction frame holds, ``optboost.load`` and
``Model.predict`` either work -- finite predictions of the right shape,
probabilities in [0, 1] -- or raise an ``optboost.OptboostError`` subclass:
never another exception, a crash, a hang, or a payload that runs.

Every case is evaluated in one long-lived worker subprocess
(tests/fuzz/fuzz_models.py), in-process there, with a per-case timeout: a
segfault or a hang fails the example instead of killing or blocking pytest,
and the worker is restarted. Hypothesis only generates the mutations here.

Shrinking is off by default so that a failure on today's code is reported at
once (CI time); set OPTBOOST_FUZZ_SHRINK=1 to get minimal examples, and
OPTBOOST_FUZZ_EXAMPLES=N to scale the number of cases.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FUZZ_DIR = Path(__file__).resolve().parents[1] / "fuzz"
sys.path.insert(0, str(FUZZ_DIR))
import fuzz_models as fm  # noqa: E402

SCALE = float(os.environ.get("OPTBOOST_FUZZ_EXAMPLES", "1"))
PHASES = (
    tuple(Phase)
    if os.environ.get("OPTBOOST_FUZZ_SHRINK")
    else (Phase.explicit, Phase.reuse, Phase.generate)
)
TIMEOUT = 10.0  # seconds per case before it counts as a hang


def fuzz_settings(examples: int):
    return settings(
        max_examples=max(1, int(examples * SCALE)),
        deadline=None,
        phases=PHASES,
        database=None,
        suppress_health_check=list(HealthCheck),
        derandomize=os.environ.get("OPTBOOST_FUZZ_RANDOM") is None,  # reproducible in CI
    )


_ENV: list = []


@pytest.fixture(scope="module", autouse=True)
def _fuzz_env(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    bases = fm.build_bases(root / "bases")
    markers = root / "markers"
    markers.mkdir()
    worker = fm.Worker(str(root / "bases"), str(markers), TIMEOUT)
    _ENV[:] = [bases, str(markers), worker]
    yield
    worker.close()
    _ENV.clear()


def env():
    """(base documents, marker directory, worker); not a fixture argument, so
    that hypothesis does not print the base models with every failure."""
    return _ENV


def check(result: dict, case) -> None:
    assert result["outcome"] in ("ok", "rejected"), f"{result}\ncase: {case}"


# ------------------------------------------------------------------ strategies

json_scalars = st.one_of(
    st.sampled_from(fm.EXTREMES),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["squared", "softmax", "logistic", "categorical", "numeric", "polars"]),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=6), children, max_size=3),
    ),
    max_leaves=8,
)
operations = st.tuples(
    st.sampled_from(fm.KINDS),
    st.integers(min_value=0, max_value=2**30),
    json_values,
    st.integers(min_value=0, max_value=2**30),
)


# ------------------------------------------------------------------ model files


@fuzz_settings(1200)
@given(
    base=st.sampled_from(sorted(fm.BASES)),
    ops=st.lists(operations, min_size=1, max_size=3),
)
def test_mutated_model_files_load_and_predict_or_raise_optboost_errors(base, ops):
    bases, markers, worker = env()
    doc = json.loads(json.dumps(bases[base]))
    for op in ops:
        doc = fm.apply_op(doc, op, markers)
    check(worker.ask(("text", fm.dumps(doc), None)), (base, ops))


@fuzz_settings(150)
@given(base=st.sampled_from(sorted(fm.BASES)), choice=st.integers(min_value=0, max_value=2**30))
def test_structural_attacks_are_refused_or_harmless(base, choice):
    """Deep chains, shared children, gadgets in the formula state, code in
    terms, extreme tree weights, out-of-range loss parameters."""
    bases, markers, worker = env()
    doc = fm.structural_case(bases[base], choice, markers)
    check(worker.ask(("text", fm.dumps(doc), None), timeout=60), (base, "structural", choice))


@fuzz_settings(240)
@given(base=st.sampled_from(sorted(fm.BASES)), choice=st.integers(min_value=0, max_value=2**30))
def test_field_attacks_are_refused_or_harmless(base, choice):
    """The fields that bound prediction's work: the iteration path and its weights, the
    output count, level lists of the design and the mappers, loss parameters, a log link's
    bias and leaves, the params' thread count."""
    bases, markers, worker = env()
    doc = fm.field_case(bases[base], choice)
    check(worker.ask(("text", fm.dumps(doc), None), timeout=60), (base, "field", choice))


@fuzz_settings(200)
@given(
    base=st.sampled_from(sorted(fm.BASES)),
    cut=st.floats(min_value=0, max_value=1),
    insert=st.text(max_size=8),
)
def test_damaged_json_text_is_a_model_file_error(base, cut, insert):
    bases, _, worker = env()
    text = fm.dumps(bases[base])
    at = int(cut * len(text))
    result = worker.ask(("text", text[:at] + insert + text[at + len(insert) :], None))
    check(result, (base, cut, insert))
    if result["outcome"] == "rejected" and result.get("stage") == "load":
        assert "ModelFileError" in result["mro"], result


# ------------------------------------------------------------------ hostile frames

frame_specs = st.tuples(
    st.sampled_from(fm.FRAME_VARIANTS), st.sampled_from(["age", "x2", "s", "y", "yb", "label"])
)


@fuzz_settings(400)
@given(base=st.sampled_from(sorted(fm.BASES)), spec=frame_specs)
def test_predict_on_hostile_frames(base, spec):
    bases, _, worker = env()
    check(worker.ask(("text", fm.dumps(bases[base]), spec)), (base, spec))


@fuzz_settings(250)
@given(
    model=st.sampled_from(sorted(fm.BASES)),
    spec=frame_specs,
)
def test_fit_on_hostile_frames(model, spec):
    formula, loss, _ = fm.BASES[model]
    _, _, worker = env()
    check(worker.ask(("fit", spec, formula, loss)), (formula, loss, spec))
