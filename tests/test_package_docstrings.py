"""Each subpackage's docstring is its map: every module (and subpackage) on a line of its own.

A listed line is four spaces, the name (``state.py``, ``web/``) and what it is; a module
added without a line, or a line whose module is gone, fails here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "dsh_cli"
LISTED = re.compile(r"^ {4}(\w+(?:\.py|/))(?: |$)", re.MULTILINE)


def subpackages() -> list[Path]:
    return sorted(path.parent for path in PACKAGE.rglob("__init__.py") if path.parent != PACKAGE)


def modules_of(package: Path) -> list[str]:
    """What the package holds: its modules, and its subpackages with a trailing slash."""
    modules = [path.name for path in package.glob("*.py") if path.name != "__init__.py"]
    inner = [f"{path.name}/" for path in package.iterdir() if (path / "__init__.py").is_file()]
    return sorted(modules + inner)


def listed_in(docstring: str) -> list[str]:
    return LISTED.findall(docstring)


@pytest.mark.parametrize("package", subpackages(),
                         ids=lambda path: str(path.relative_to(PACKAGE)))
def test_the_package_docstring_lists_each_module_once(package):
    docstring = ast.get_docstring(ast.parse((package / "__init__.py").read_text("utf-8")),
                                  clean=False) or ""
    listed = listed_in(docstring)
    where = f"dsh_cli/{package.relative_to(PACKAGE)}/__init__.py"
    assert sorted(set(listed)) == sorted(listed), f"{where} lists a module twice: {listed}"
    missing = sorted(set(modules_of(package)) - set(listed))
    gone = sorted(set(listed) - set(modules_of(package)))
    assert not missing, f"{where}: add a line for each of {missing} to its docstring"
    assert not gone, f"{where}: its docstring lists {gone}, which it no longer holds"


def test_a_listed_line_is_read_and_a_continuation_is_not():
    docstring = """Summary.

    state.py      a batch's state machine;
                  only what the human did
    web/          the browser
    text.py
A prose line naming notes.py is not a listed line.
"""
    assert listed_in(docstring) == ["state.py", "web/", "text.py"]
