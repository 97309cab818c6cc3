"""Every Python code block of the README, then of the user guide it links to, runs as written,
in order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
GUIDE = ROOT / "docs" / "guide.md"


def python_blocks(page: Path = README) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)


def test_the_readme_and_the_guide_have_python_examples():
    assert len(python_blocks(README)) >= 2
    assert len(python_blocks(GUIDE)) >= 5


@pytest.mark.filterwarnings("error::DeprecationWarning")
def test_readme_python_blocks_run_as_written(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    pytest.importorskip("sklearn")
    monkeypatch.chdir(tmp_path)  # the examples write model.json and curves.png
    namespace: dict = {}
    for page in (README, GUIDE):
        for index, block in enumerate(python_blocks(page)):
            exec(compile(block, f"{page.name} python block {index + 1}", "exec"), namespace)
    assert (tmp_path / "model.json").exists()
