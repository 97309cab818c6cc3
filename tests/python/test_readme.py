"""The README's and the user guide's Python examples. They run, in the order a reader meets
them on the documentation site, in test_docs_site.py (the site's pages include the README's
Python section and every section of the guide); this file checks that none is left out there."""

from __future__ import annotations

import re
from pathlib import Path

from test_docs_site import code_blocks

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
GUIDE = ROOT / "docs" / "guide.md"


def python_blocks(page: Path = README) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)


def test_the_readme_and_the_guide_have_python_examples():
    assert len(python_blocks(README)) >= 2
    assert len(python_blocks(GUIDE)) >= 5


def test_every_python_block_of_the_readme_and_the_guide_runs_on_the_site():
    site = [code for _, language, code in code_blocks() if language == "python"]
    for page in (README, GUIDE):
        for index, block in enumerate(python_blocks(page)):
            assert block in site, f"{page.name} python block {index + 1} is on no site page"
    # in the README's order, then the guide's: later blocks use the names earlier ones define
    positions = [site.index(block) for block in python_blocks(README) + python_blocks(GUIDE)]
    assert positions == sorted(positions)


def test_the_readme_rust_example_is_the_crate_front_page_doctest():
    """The README shows the crate's front-page example (README-crate.md, run as a doctest by
    cargo test) without its hidden `# ` lines."""
    (shown,) = re.findall(r"```rust\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    crate = (ROOT / "README-crate.md").read_text(encoding="utf-8")
    doctest = re.findall(r"```rust\n(.*?)```", crate, flags=re.S)[0]
    visible = "".join(line for line in doctest.splitlines(True) if not line.startswith("# "))
    assert shown == visible
