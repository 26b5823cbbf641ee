"""The permission decisions and their words are written once: ``dsh_cli.core.decisions``."""

from __future__ import annotations

import ast
from pathlib import Path

from harness.package_source import module_text, module_tree, package_modules

from dsh_cli.core.decisions import DECIDED_WORDS, DECISIONS
from dsh_cli.permissions import DECISIONS as PERMISSION_DECISIONS

PACKAGE = Path(__file__).resolve().parents[2] / "dsh_cli"
HOME = PACKAGE / "core" / "decisions.py"


def copies(source: str, name: str = "<source>") -> list[str]:
    """Where ``source`` spells the decisions as a sequence, or a decision's words, itself."""
    found = []
    for node in ast.walk(module_tree(source)):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            words = {item.value for item in node.elts if isinstance(item, ast.Constant)}
            if set(DECISIONS) <= words:
                found.append(f"{name}:{node.lineno}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and node.value.lower() in set(DECIDED_WORDS.values()) - {"denied"}:
            found.append(f"{name}:{node.lineno}")  # "denied" is a word of many sentences
    return found


def test_the_decisions_in_the_order_keys_choose_them():
    assert DECISIONS == ("allow_once", "allow_session", "allow_always", "deny")
    assert PERMISSION_DECISIONS is DECISIONS


def test_every_decision_has_its_words():
    assert DECIDED_WORDS == {"allow_once": "allowed once",
                             "allow_session": "allowed for this session",
                             "allow_always": "allowed always", "deny": "denied"}


def test_no_module_spells_the_decisions_or_their_words():
    found = [hit for path in package_modules() if path != HOME
             for hit in copies(module_text(path), str(path.relative_to(PACKAGE)))]
    assert found == [], "use core.decisions (DECISIONS, DECIDED_WORDS):\n" + "\n".join(found)


def test_the_guard_sees_a_tuple_and_a_word():
    assert copies('_D = ("allow_once", "allow_session", "allow_always", "deny")')
    assert copies('S = {"allow_once": "Allowed once"}')
    assert not copies('raise Error(f"{tool} is denied by {why}")')
