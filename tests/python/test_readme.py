"""Every Python code block of the README runs as written, in order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_the_readme_has_python_examples():
    assert len(python_blocks()) >= 2


@pytest.mark.filterwarnings("error::DeprecationWarning")
def test_readme_python_blocks_run_as_written(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    pytest.importorskip("sklearn")
    monkeypatch.chdir(tmp_path)  # the examples write model.json and curves.png
    namespace: dict = {}
    for index, block in enumerate(python_blocks()):
        exec(compile(block, f"README.md python block {index + 1}", "exec"), namespace)
    assert (tmp_path / "model.json").exists()
