"""A ``dsh:`` line is written in one place: ``dsh_cli/core/lines.py`` adds every prefix."""

from __future__ import annotations

import ast
from pathlib import Path

from harness.package_source import module_text, module_tree, package_modules

from dsh_cli.core.errors import format_line
from dsh_cli.core.lines import coded, debug, notice, warning

PACKAGE = Path(__file__).resolve().parents[2] / "dsh_cli"
HOME = PACKAGE / "core" / "lines.py"


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the docstring nodes: prose, where "dsh:" is a word of a sentence."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def typed_prefixes(source: str, name: str = "<source>") -> list[str]:
    """Each string or bytes literal outside a docstring that spells ``dsh: ``, with its line."""
    tree = module_tree(source)
    prose = _docstrings(tree)
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and id(node) not in prose:
            value = node.value
            text = value.decode("latin-1") if isinstance(value, bytes) else value
            if isinstance(text, str) and "dsh: " in text:
                hits.append((node.lineno, f"{name}:{node.lineno}: {text!r}"))
    return [hit for _, hit in sorted(hits)]


def test_no_module_but_the_home_types_the_prefix():
    hits = []
    for path in package_modules():
        if path != HOME:
            hits += typed_prefixes(module_text(path), str(path.relative_to(PACKAGE)))
    assert hits == [], "write dsh lines through dsh_cli.core.lines:\n" + "\n".join(hits)


def test_the_check_sees_literals_and_f_strings_and_bytes_but_not_docstrings():
    source = ('"""dsh: a module about dsh."""\n'
              'def f(x):\n    """dsh: prose."""\n    return f"dsh: {x}"\n'
              'A = "dsh: warning: w"\nB = b"\\r\\ndsh: bytes"\nC = "i=dsh:d="\n')
    assert [hit.split(":")[1] for hit in typed_prefixes(source)] == ["4", "5", "6"]


def test_the_lines_are_the_ones_the_spec_pins():
    assert notice("no stored sessions yet") == "dsh: no stored sessions yet"
    assert warning("x ignored") == "dsh: warning: x ignored"
    assert debug("why") == "dsh: debug: why"
    assert coded("USAGE", "bad") == format_line("USAGE", "bad") == "dsh: USAGE: bad"
