"""A seeded run of the formula fuzz (tests/fuzz/fuzz_formulas.py): every formula drawn from the
term language's grammar, tame or hostile, builds or raises an OptboostError subclass within a
second of CPU time, never runs code and never touches a file. Cases run in a worker subprocess,
so a hang or a crash fails the test instead of blocking pytest."""

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
import fuzz_formulas  # noqa: E402

CASES = int(300 * float(os.environ.get("OPTBOOST_FUZZ_EXAMPLES", "1")))


@pytest.mark.timeout(900)
def test_seeded_formula_fuzz():
    counts, found, _ = fuzz_formulas.campaign(seed=20261129, cases=CASES, limit=1.0, wall=120.0)
    assert not found, found  # other exceptions, hangs, crashes, side effects, with formulas
    assert sum(counts.values()) == CASES
    # both kinds of case occur: a generator that only ever failed to parse would prove nothing
    assert counts["built"] >= CASES // 10 and counts["rejected"] >= CASES // 3, counts


def test_the_generator_is_deterministic():
    assert [fuzz_formulas.case(5, i) for i in range(50)] == [
        fuzz_formulas.case(5, i) for i in range(50)
    ]
    assert len({fuzz_formulas.case(5, i)[0] for i in range(50)}) == 50

