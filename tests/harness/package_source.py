"""The package's sources as the scanning tests read them: each file read and parsed once per
worker, shared by every test that walks the package (a dozen of them each parsed it anew)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

__all__ = ["PACKAGE", "module_text", "module_tree", "package_modules"]

PACKAGE = Path(__file__).resolve().parents[2] / "dsh_cli"


@functools.cache
def package_modules() -> tuple[Path, ...]:
    """Every ``.py`` file of the package, sorted."""
    return tuple(sorted(PACKAGE.rglob("*.py")))


@functools.cache
def module_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@functools.cache
def module_tree(text: str) -> ast.Module:
    """The tree of ``text``; callers only read it (it is shared)."""
    return ast.parse(text)
