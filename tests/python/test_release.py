"""The release workflow (.github/workflows/release.yml) cannot run here; what can be checked is:
it is valid YAML with the jobs a release needs, and every command it runs is one that
.ci/wheel_smoke runs locally (the same program and subcommand with no option the local run
lacks; only the cross-compilation target and platform tag differ), so that a tag never meets a
command that has not run. Also: the extras of pyproject.toml that .ci/run installs."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

if sys.version_info < (3, 11):
    pytest.skip("reads pyproject.toml with tomllib (Python 3.11+)", allow_module_level=True)
import tomllib  # noqa: E402

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
LOCAL = ROOT / ".ci" / "wheel_smoke"
# Options that name what a runner cannot build here: another CPU (--target) or another libc.
CROSS_OPTIONS = {"--target"}
# Only the tag publishes; its dry run is what runs locally.
PUBLISHING = {("cargo", "publish"): ("cargo", "publish", "--dry-run")}


def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def matrix_values(job: dict) -> list[dict]:
    matrix = job.get("strategy", {}).get("matrix", {})
    if "include" in matrix:
        return matrix["include"]
    rows: list[dict] = [{}]
    for key, values in matrix.items():
        rows = [{**row, key: value} for row in rows for value in values]
    return rows


def substitute(text: str, row: dict) -> str:
    return re.sub(r"\$\{\{\s*matrix\.(\w+)\s*\}\}", lambda m: str(row[m.group(1)]), text)


def workflow_commands() -> list[list[str]]:
    """Every command the workflow runs, for every matrix row: its run lines, and maturin-action's
    ``maturin <command> <args>`` (its ``manylinux`` input becomes ``--compatibility``)."""
    commands = []
    for job in workflow()["jobs"].values():
        for row in matrix_values(job):
            for step in job["steps"]:
                if "run" in step:
                    for line in substitute(step["run"], row).split("&&"):
                        commands.append(shlex.split(line))
                elif step.get("uses", "").startswith("PyO3/maturin-action@"):
                    given = {k: substitute(str(v), row) for k, v in step.get("with", {}).items()}
                    command = ["maturin", given.get("command", "build"),
                               *shlex.split(given.get("args", ""))]
                    if "target" in given:
                        command += ["--target", given["target"]]
                    if "manylinux" in given and command[1] == "build":
                        command += ["--compatibility", given["manylinux"]]
                    commands.append(command)
    return commands


def local_commands() -> list[list[str]]:
    text = LOCAL.read_text(encoding="utf-8").replace("\\\n", " ")
    commands = []
    for line in text.splitlines():
        line = line.split(" #")[0].strip()
        if not line or line.startswith("#"):
            continue
        for part in re.split(r"&&|\|", line):
            try:
                words = shlex.split(part)
            except ValueError:  # a quote that spans the split: not a command line
                continue
            # "$PYTHON" and the venvs' pythons are the interpreter
            commands.append([re.sub(r'^.*/bin/python$|^\$PYTHON$', "python", w) for w in words])
    return commands


def program(command: list[str]) -> tuple[str, ...]:
    """The program and its subcommand, past ``env -i VAR=...`` and an interpreter's ``-m``."""
    words = list(command)
    if words[:2] == ["env", "-i"]:
        words = [w for w in words[2:] if "=" not in w]
    words = [re.sub(r"^.*/bin/python$", "python", w) for w in words]
    if words[:2] == ["python", "-m"]:
        words = words[2:]
    words = [w for w in words if not w.startswith("-")]
    # a subcommand is a bare word (install, build, show) or the script python runs; not a path
    return tuple(words[:1] + [w for w in words[1:2] if re.fullmatch(r"[a-z][a-z-]*|\S+\.py", w)])


def options(command: list[str]) -> set[str]:
    return {w.split("=")[0] for w in command if w.startswith("--")}


def test_the_workflow_is_valid_yaml_with_the_release_jobs():
    flow = workflow()
    triggers = flow[True]  # YAML 1.1 reads the key `on` as true
    assert triggers["push"]["tags"] == ["v*"]
    jobs = flow["jobs"]
    linux = matrix_values(jobs["linux"])
    assert {(r["target"], r["platform"]) for r in linux} == {
        (cpu, tag) for cpu in ("x86_64", "aarch64") for tag in ("manylinux_2_28", "musllinux_1_2")
    }
    assert {r["target"] for r in matrix_values(jobs["macos"])} == {"x86_64", "aarch64"}
    assert any(s.get("with", {}).get("command") == "sdist" for s in jobs["sdist"]["steps"])
    assert "windows" in jobs["windows"]["runs-on"]
    pypi = jobs["pypi"]
    assert pypi["permissions"]["id-token"] == "write"
    assert set(pypi["needs"]) >= {"linux", "macos", "windows", "sdist", "check"}
    assert any(s.get("uses", "").startswith("pypa/gh-action-pypi-publish@") for s in pypi["steps"])
    assert pypi["if"] == jobs["crates-io"]["if"] == "startsWith(github.ref, 'refs/tags/v')"
    assert ["cargo", "publish"] in [shlex.split(s.get("run", "")) for s in jobs["crates-io"]["steps"]]


def test_every_command_of_the_workflow_runs_locally():
    local = local_commands()
    by_program: dict[tuple[str, ...], list[set[str]]] = {}
    for command in local:
        by_program.setdefault(program(command), []).append(options(command))
    commands = workflow_commands()
    assert len(commands) >= 12
    for command in commands:
        name = program(command)
        if name in PUBLISHING:
            dry_run = PUBLISHING[name]
            assert any(c[: len(dry_run)] == list(dry_run) for c in local), command
            continue
        assert name in by_program, f"{shlex.join(command)}: {name} never runs in {LOCAL.name}"
        wanted = options(command) - CROSS_OPTIONS
        assert any(wanted <= found for found in by_program[name]), (
            f"{shlex.join(command)}: no local run of {' '.join(name)} has {sorted(wanted)}"
        )


def test_the_check_matches_what_it_means_to_match():
    # a made-up option or program is caught
    local = local_commands()
    assert program(["maturin", "build", "--release", "--out", "dist"]) in {program(c) for c in local}
    assert program(["maturin", "upload", "dist/*"]) not in {program(c) for c in local}
    maturin_builds = [options(c) for c in local if program(c) == ("maturin", "build")]
    assert maturin_builds and not any({"--skip-auditwheel"} <= found for found in maturin_builds)
    # the one manylinux tag the local run builds is the workflow's
    assert any("manylinux_2_28" in c for c in local if program(c) == ("maturin", "build"))


def test_ci_installs_the_extras_the_tests_import_and_the_base_stays_small():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    base = {re.split(r"[<>=\[ ]", d)[0] for d in project["dependencies"]}
    assert base == {"numpy", "polars", "formulaic", "tqdm"}
    ci_extras = re.search(r"optboost\[([\w,]+)\]", " ".join(extras["ci"])).group(1).split(",")
    assert set(ci_extras) <= set(extras), ci_extras
    assert {"test", "docs", "explain", "onnx", "treelite"} <= set(ci_extras)
    installed = {re.split(r"[<>=\[ ]", d)[0] for name in ci_extras for d in extras[name]}
    # every extra a message may name (optboost._extras) is installed in CI
    from optboost._extras import EXTRAS

    for module, extra in EXTRAS.items():
        packages = {re.split(r"[<>=\[ ]", d)[0] for d in extras[extra]}
        assert packages <= installed, (module, extra, packages - installed)
    assert '".[ci]"' in (ROOT / ".ci" / "run").read_text()
