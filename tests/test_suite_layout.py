"""The suite's own layout: shared helpers live in ``tests/harness``, and a test module is
imported by pytest alone (never by another test module, never through a ``sys.path`` edit).

A helper shared by tests in several folders that lived beside one of them was reached by a
``sys.path.insert`` or by whichever folder pytest had put on the path first; a test module
imported by another ran its module-level code twice and tied the two together.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import os
from pathlib import Path

TESTS = Path(__file__).resolve().parent
# run as child processes (an MCP server, a conformance client), not imported by pytest
CHILD_SCRIPTS = {"fakes"}


@functools.cache
def _python_files() -> tuple[Path, ...]:
    """The suite's Python files; the npm folders' trees are never walked (tens of thousands
    of files: walking them, not parsing ours, was most of these tests' time)."""
    found = []
    for folder, subfolders, files in os.walk(TESTS):
        subfolders[:] = sorted(name for name in subfolders
                               if name not in {"node_modules", "__pycache__"})
        found += [Path(folder, name) for name in files if name.endswith(".py")]
    return tuple(sorted(found))


def _imported(tree: ast.AST) -> list[tuple[int, str]]:
    """Every module an ``import`` names (``from . import x`` as ``x``), with its line."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.module:
                found.append((node.lineno, node.module))
            if node.level or node.module is None:
                found += [(node.lineno, alias.name) for alias in node.names]
    return found


def _touches_sys_path(tree: ast.AST) -> list[int]:
    """Lines that change ``sys.path`` (a call on it, or an assignment to it or a slice)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(
                node.value, ast.Name) and node.value.id == "sys":
            parent = getattr(node, "parent", None)
            if isinstance(parent, ast.Attribute) and parent.attr in {
                    "insert", "append", "extend", "remove"}:
                lines.append(node.lineno)
            elif isinstance(parent, ast.Subscript | ast.Assign | ast.AugAssign):
                if isinstance(parent, ast.Subscript) and not isinstance(parent.ctx, ast.Store):
                    continue
                if isinstance(parent, ast.Assign) and node not in parent.targets:
                    continue
                lines.append(node.lineno)
    return lines


@functools.cache
def _parsed(path: Path) -> ast.AST:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            child.parent = node  # type: ignore[attr-defined]
    return tree


def _installed(name: str) -> bool:
    """``name`` is a package installed outside tests/ (``acp``, the ACP SDK, beside tests/acp)."""
    spec = importlib.util.find_spec(name)
    return spec is not None and spec.origin is not None and TESTS not in Path(
        spec.origin).resolve().parents


def test_no_module_of_the_suite_imports_a_test_module():
    offenders = [f"{path.relative_to(TESTS)}:{line}: {name}"
                 for path in _python_files() for line, name in _imported(_parsed(path))
                 if name.rsplit(".", 1)[-1].startswith("test_")]
    assert offenders == [], "shared helpers belong in tests/harness: " + "; ".join(offenders)


def test_no_module_pytest_imports_changes_sys_path():
    offenders = [f"{path.relative_to(TESTS)}:{line}"
                 for path in _python_files()
                 if path.relative_to(TESTS).parts[0] not in CHILD_SCRIPTS
                 for line in _touches_sys_path(_parsed(path))]
    assert offenders == [], "import from tests/harness instead: " + "; ".join(offenders)


def test_helpers_are_imported_from_their_own_folder_or_the_harness():
    """A bare ``import name`` of a helper in another folder of tests/ works only when that
    folder happens to be on the path; shared helpers go in ``harness`` (or ``fakes``)."""
    folders = {path.name for path in TESTS.iterdir() if path.is_dir()} - {"harness", "fakes"}
    helpers: dict[str, set[Path]] = {}
    for path in _python_files():
        helpers.setdefault(path.stem, set()).add(path.parent)
    offenders = []
    for path in _python_files():
        for line, name in _imported(_parsed(path)):
            top = name.split(".", 1)[0]
            where = helpers.get(top, set()) - {TESTS / "harness", TESTS / "fakes"}
            elsewhere = where and path.parent not in where and top not in {"conftest"}
            foreign_folder = (top in folders and TESTS / top != path.parent
                              and not _installed(top))
            if elsewhere or foreign_folder:
                offenders.append(f"{path.relative_to(TESTS)}:{line}: {name}")
    assert offenders == [], "move the shared helper into tests/harness: " + "; ".join(offenders)


def test_the_rules_see_what_they_forbid(tmp_path):
    """The scans above find each shape they forbid (a scan that finds nothing proves nothing)."""
    source = ("import sys\nfrom test_relay import Wire\nimport pkg.test_x\n"
              "from . import test_y\nsys.path.insert(0, 'x')\nsys.path[:0] = ['y']\n"
              "sys.path = []\nprint(sys.path[0])\n")
    path = tmp_path / "probe.py"
    path.write_text(source)
    tree = _parsed(path)
    assert [name for _, name in _imported(tree) if name.rsplit(".", 1)[-1].startswith(
        "test_")] == ["test_relay", "pkg.test_x", "test_y"]
    assert sorted(_touches_sys_path(tree)) == [5, 6, 7]


def test_no_two_test_modules_share_a_name():
    """Two ``test_x.py`` in different folders collide in a whole run ("import file
    mismatch"), though each passes alone."""
    from collections import Counter

    names = Counter(path.name for path in _python_files() if path.name.startswith("test_"))
    assert [name for name, count in names.items() if count > 1] == []
