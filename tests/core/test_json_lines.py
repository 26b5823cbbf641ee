"""A JSON line is written by one function: ``dsh_cli.core.json_lines.json_line``."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from harness.package_source import module_text, module_tree, package_modules

from dsh_cli.core.json_lines import json_line

PACKAGE = Path(__file__).resolve().parents[2] / "dsh_cli"
HOME = PACKAGE / "core" / "json_lines.py"


def _dumps(node: ast.expr) -> ast.Call | None:
    """The ``json.dumps`` call ``node`` is, or encodes (``json.dumps(x).encode()``)."""
    while isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "dumps" \
                and isinstance(func.value, ast.Name) and func.value.id == "json":
            return node
        node = func.value if isinstance(func, ast.Attribute) else func
    return None


def copies(source: str, name: str = "<source>") -> list[str]:
    """Where ``source`` ends a ``json.dumps`` with a newline itself (not an indented file)."""
    found = []
    for node in ast.walk(module_tree(source)):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) \
                and isinstance(node.right, ast.Constant) and node.right.value in ("\n", b"\n"):
            call = _dumps(node.left)
            if call is not None and not any(word.arg == "indent" for word in call.keywords):
                found.append(f"{name}:{node.lineno}")
    return found


def test_one_compact_line_that_reads_back():
    value = {"type": "x", "text": "é 😀", "n": [1, None]}
    line = json_line(value)
    assert line == '{"type":"x","text":"é 😀","n":[1,null]}\n'
    assert json.loads(line) == value


def test_ascii_only_escapes_every_non_ascii_character():
    line = json_line({"text": "é 😀\u2028"}, ascii_only=True)
    assert line.isascii() and line.count("\n") == 1
    assert json.loads(line) == {"text": "é 😀\u2028"}


def test_a_lone_surrogate_becomes_a_replacement_character():
    line = json_line({"text": "a\ud800b"})
    assert json.loads(line.encode("utf-8")) == {"text": "a\ufffdb"}


def test_a_newline_in_a_value_stays_escaped_inside_the_line():
    assert json_line({"text": "a\nb"}).count("\n") == 1


def test_no_module_writes_a_json_line_of_its_own():
    found = [hit for path in package_modules() if path != HOME
             for hit in copies(module_text(path), str(path.relative_to(PACKAGE)))]
    assert found == [], "write JSON lines with core.json_lines.json_line:\n" + "\n".join(found)


def test_the_guard_sees_text_and_bytes_but_not_a_json_file():
    assert copies('line = json.dumps(x, separators=(",", ":")) + "\\n"')
    assert copies('data = json.dumps(x).encode() + b"\\n"')
    assert not copies('text = json.dumps(document, indent=2) + "\\n"')
    assert not copies("line = json_line(x)")
