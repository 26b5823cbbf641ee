"""A peer's text cut to one safe line is one function: ``dsh_cli.core.sanitize.one_line``."""

from __future__ import annotations

import ast
from pathlib import Path

from harness.package_source import module_text, module_tree, package_modules

from dsh_cli.core.sanitize import one_line

PACKAGE = Path(__file__).resolve().parents[2] / "dsh_cli"
HOME = PACKAGE / "core" / "sanitize.py"


def _calls(node: ast.expr, name: str) -> bool:
    """``node`` is a call of ``name``, or a method called on one (``name(x).replace(…)``)."""
    while isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id == name:
            return True
        node = node.func.value if isinstance(node.func, ast.Attribute) else node.func
    return False


def copies(source: str, name: str = "<source>") -> list[str]:
    """Where ``source`` cuts a line itself: sanitised then sliced, or sliced then marked."""
    found = []
    for node in ast.walk(module_tree(source)):
        sliced = isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) \
            and _calls(node.value, "sanitize_line")
        marked = isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) \
            and isinstance(node.left, ast.Subscript) and isinstance(node.left.slice, ast.Slice) \
            and isinstance(node.right, ast.Constant) and node.right.value == "…"
        if sliced or marked:
            found.append(f"{name}:{node.lineno}")  # type: ignore[attr-defined]
    return found


def test_escapes_and_controls_go_and_newlines_fold():
    assert one_line("\x1b]0;pwned\x07a\nb\tc\x1b[31m", 80) == "a b c"


def test_white_space_collapses_and_the_ends_are_trimmed():
    assert one_line("  a \n\n  b  ", 80) == "a b"


def test_a_long_text_is_cut_with_a_mark_inside_the_limit():
    assert one_line("abcdefghij", 5) == "abcd…"
    assert one_line("abcde", 5) == "abcde"


def test_only_a_bounded_prefix_is_read():
    # a megabyte of text: what is kept comes from its first characters, scanned alone
    text = "x" * 10 + "\x1b[31m" + "y" * 1_000_000
    assert one_line(text, 20) == "x" * 10 + "y" * 9 + "…"


def test_no_module_cuts_a_peer_line_of_its_own():
    found = [hit for path in package_modules() if path != HOME
             for hit in copies(module_text(path), str(path.relative_to(PACKAGE)))]
    assert found == [], "cut a peer's text with core.sanitize.one_line:\n" + "\n".join(found)


def test_the_guard_sees_both_shapes():
    assert copies("name = sanitize_line(text)[:60]")
    assert copies('name = sanitize_line(text).replace(";", ",")[:80]')
    assert copies('short = text if len(text) <= 60 else text[:59] + "…"')
    assert not copies("name = one_line(text, 60)")
    assert not copies("name = sanitize_line(text[:14])")  # cut first: bounded, no mark
