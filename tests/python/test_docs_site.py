"""The documentation site (mkdocs.yml, docs/): it builds offline with warnings as errors, and
every code block of its pages runs, in the navigation's order, as a reader would run them.

The Python blocks share one namespace (test_readme.py checks that every block of the README and
the user guide is among them). A page's snippet lines
(``--8<-- "file:section"``) are expanded first, so the user guide's and the README's sections
run where the site shows them. Bash blocks run in the same directory, with ``optboost`` the
command of the package under test. ``text`` blocks are output or install lines (the wheel test,
.ci/wheel_smoke, runs the install)."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SNIPPET = re.compile(r'^--8<-- "([^":]+)(?::([\w-]+))?"$', flags=re.M)
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", flags=re.S | re.M)
# The evidence pages give the command that measured each figure (a bench run of minutes, its
# output in benches/results.txt): shown for reproduction, not rerun by the page test.
BENCH_COMMAND = re.compile(r"^python benches/")


def nav_pages(nav=None) -> list[str]:
    if nav is None:
        config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
        nav = config["nav"]
    pages: list[str] = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages.extend(nav_pages(value) if isinstance(value, list) else [value])
    return pages


def section(path: Path, name: str) -> str:
    text = path.read_text(encoding="utf-8")
    found = re.search(
        rf"^[^\n]*--8<-- \[start:{name}\][^\n]*\n(.*?)^[^\n]*--8<-- \[end:{name}\]", text,
        flags=re.S | re.M,
    )
    assert found, f"{path} has no snippet section {name!r}"
    return found.group(1)


def expanded(page: str) -> str:
    def include(match: re.Match) -> str:
        path = ROOT / match.group(1)
        return section(path, match.group(2)) if match.group(2) else path.read_text("utf-8")

    return SNIPPET.sub(include, (DOCS / page).read_text(encoding="utf-8"))


def code_blocks() -> list[tuple[str, str, str]]:
    """(page, language, code) of every fenced block, in the site's order."""
    return [
        (page, language, code)
        for page in nav_pages()
        for language, code in FENCE.findall(expanded(page))
    ]


def optboost_command(directory: Path) -> Path:
    """An ``optboost`` command that runs this interpreter's optboost (the one under test, not
    whichever install PATH finds first)."""
    bin_dir = directory / "bin"
    bin_dir.mkdir()
    script = bin_dir / "optboost"
    script.write_text(
        f'#!/bin/sh\nexec "{sys.executable}" -c '
        '"import sys; from optboost.cli import main; sys.exit(main())" "$@"\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return bin_dir


def test_every_nav_page_exists_and_the_site_has_the_topics():
    pages = nav_pages()
    assert all((DOCS / page).is_file() for page in pages), pages
    for topic in ("getting_started.md", "formulas.md", "algorithms.md", "method_guide.md",
                  "uncertainty.md", "explain.md", "dask.md", "spark.md", "cli.md", "rust.md", "api.md",
                  "model_files.md", "changelog.md", "results.md", "performance.md"):
        assert topic in pages


def test_snippets_expand_to_the_sections_they_name():
    page = expanded("cli.md")
    assert "--8<--" not in page
    assert "## Command line" in page and "optboost fit train.parquet" in page
    with pytest.raises(AssertionError, match="no snippet section 'nowhere'"):
        section(DOCS / "guide.md", "nowhere")


def test_every_block_is_a_kind_the_page_test_runs():
    kinds = {language for _, language, _ in code_blocks()}
    assert kinds <= {"python", "bash", "text"}, kinds
    assert sum(language == "python" for _, language, _ in code_blocks()) >= 12


@pytest.mark.timeout(900)
@pytest.mark.filterwarnings("error::DeprecationWarning")
def test_every_code_block_of_the_site_runs(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    pytest.importorskip("sklearn")
    pytest.importorskip("distributed")
    monkeypatch.chdir(tmp_path)
    env = {**os.environ, "PATH": f"{optboost_command(tmp_path)}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": os.pathsep.join(sys.path), "MPLBACKEND": "Agg"}
    namespace: dict = {}
    ran = {"python": 0, "bash": 0}
    for index, (page, language, code) in enumerate(code_blocks()):
        where = f"{page} block {index + 1}"
        if language == "python":
            exec(compile(code, where, "exec"), namespace)
        elif language == "bash" and not BENCH_COMMAND.match(code):
            done = subprocess.run(["bash", "-euo", "pipefail", "-c", code], env=env,
                                  capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, f"{where}:\n{code}\n{done.stdout}\n{done.stderr}"
        else:
            continue
        ran[language] += 1
    assert ran["python"] >= 12 and ran["bash"] >= 1, ran
    # the CLI page's commands wrote what they say they write
    assert (tmp_path / "model.json").exists() and (tmp_path / "predictions.parquet").exists()
    assert (tmp_path / "cv.csv").exists()


@pytest.mark.timeout(900)
def test_the_site_builds_offline_with_no_warning(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    mkdocs = shutil.which("mkdocs")
    command = [mkdocs] if mkdocs else [sys.executable, "-m", "mkdocs"]
    done = subprocess.run(
        [*command, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    api = (tmp_path / "site" / "api" / "index.html").read_text(encoding="utf-8")
    for name in ("optboost.api.boost", "optboost.model.Model.predict", "optboost.model.load",
                 "optboost.crossval.cv", "optboost.sklearn.BoostClassifier"):
        assert f'id="{name}"' in api, name
    cli = (tmp_path / "site" / "cli" / "index.html").read_text(encoding="utf-8")
    # the guide's section is in the page, its snippet markers are not
    assert 'id="command-line"' in cli and "predictions.parquet" in cli
    assert "8&lt;" not in cli and "8<--" not in cli
