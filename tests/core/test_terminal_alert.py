"""A terminal alert is encoded in one place: ``dsh_cli.core.terminal_alert.encode``."""

from __future__ import annotations

import ast
import base64
from pathlib import Path

import pytest
from harness.package_source import module_text, module_tree, package_modules

from dsh_cli.core.terminal_alert import BELL, encode, tmux_wrap

PACKAGE = Path(__file__).resolve().parents[2] / "dsh_cli"
HOME = PACKAGE / "core" / "terminal_alert.py"
_OSC_ALERTS = ("\x1b]9;", "\x1b]99;", "\x1b]777;")


def copies(source: str, name: str = "<source>") -> list[str]:
    """Where ``source`` spells an alert itself: an OSC notification, or writes a bell."""
    found = []
    for node in ast.walk(module_tree(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and any(start in node.value for start in _OSC_ALERTS):
            found.append(f"{name}:{node.lineno}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("write", "write_raw") and node.args:
            first = node.args[0]
            while isinstance(first, ast.BinOp):
                first = first.left
            if isinstance(first, ast.Constant) and isinstance(first.value, str) \
                    and first.value.startswith("\a"):
                found.append(f"{name}:{node.lineno}")
    return found


def test_each_kind_carries_title_and_body():
    assert encode("osc9", "dsh: t", "b") == "\x1b]9;dsh: t: b\x07"
    assert encode("osc9", "dsh: only the title") == "\x1b]9;dsh: only the title\x07"
    assert encode("osc777", "t", "b") == "\x1b]777;notify;t;b\x07"
    sequence = encode("osc99", "t", "b")
    assert base64.b64encode(b"t").decode() in sequence and sequence.endswith("\x1b\\")
    assert encode("bell", "t", "b") == BELL == "\a"


@pytest.mark.parametrize("kind", ["osc9", "osc777", "osc99"])
def test_a_peer_text_cannot_end_the_escape_or_add_a_field(kind):
    sequence = encode(kind, "t\x07\x1b]0;pwned\x07;x", "b\nc;d\x1b\\")
    inner = sequence.split(";", 1)[1] if kind != "osc99" else ""
    assert "pwned" not in sequence and "\n" not in sequence
    assert inner.count("\x07") <= 1 and "\x1b" not in inner.rstrip("\x1b\\")


def test_tmux_doubles_every_escape_and_the_bell_passes_as_it_is():
    assert tmux_wrap("\x1b]9;t\x07") == "\x1bPtmux;\x1b\x1b]9;t\x07\x1b\\"
    assert encode("osc9", "t", "b", tmux=True) == tmux_wrap("\x1b]9;t: b\x07")
    assert encode("bell", "t", tmux=True) == "\a"


def test_no_module_spells_an_alert_of_its_own():
    found = [hit for path in package_modules() if path != HOME
             for hit in copies(module_text(path), str(path.relative_to(PACKAGE)))]
    assert found == [], "encode alerts with core.terminal_alert.encode:\n" + "\n".join(found)


def test_the_guard_sees_an_osc_and_a_written_bell():
    assert copies('OSC9 = f"\\x1b]9;{text}\\x07"')
    assert copies('output.write_raw("\\a")')
    assert copies('tty.write("\\a" + line)')
    assert not copies('_ANSI = {"a": "\\a"}')  # a bell decoded from shell quoting, not rung
