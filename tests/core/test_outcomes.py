"""The outcome vocabulary (``core/outcomes.py``): every way a batch ends has a code, a wire
word, a stored status and a word, each unique where it must be; and no module but the
vocabulary maps an outcome's words or codes by hand (read from the source)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from harness.package_source import module_text, module_tree

from dsh_cli.core import errors
from dsh_cli.core.outcomes import PERMISSION_ENDINGS, Outcome, permission_outcome

PACKAGE = Path(__file__).resolve().parents[2] / "dsh_cli"


def test_every_outcome_has_a_code_a_wire_word_a_stored_status_and_words():
    for outcome in Outcome:
        assert outcome.word and outcome.sentence and outcome.event and outcome.stored
        if outcome is Outcome.ANSWERED:
            assert outcome.code is None
            continue
        assert outcome.code == getattr(errors, outcome.code)  # a named code of the tree
        assert outcome.message
        error = outcome.error()
        assert (type(error), error.code, error.message) == (
            errors.UserInteractionError, outcome.code, outcome.message)
        assert outcome.error("the desk was closed").message == "the desk was closed"
    with pytest.raises(ValueError):
        Outcome.ANSWERED.error()


def test_codes_and_stored_statuses_name_one_outcome_each_and_read_back():
    assert len({outcome.code for outcome in Outcome}) == len(Outcome)
    assert len({outcome.stored for outcome in Outcome}) == len(Outcome)
    assert len({outcome.word for outcome in Outcome}) == len(Outcome)
    for outcome in Outcome:
        assert Outcome.of_code(outcome.code) is outcome
        assert Outcome.of_stored(outcome.stored) is outcome
        assert Outcome.of_event(outcome.event) in (outcome, Outcome.ABORTED)
    assert Outcome.of_code(errors.INVALID_ANSWER) is Outcome.ABORTED  # any other code
    assert Outcome.of_stored("pending") is None and Outcome.of_stored(None) is None
    assert Outcome.of_event("no such word") is None and Outcome.of_event(3) is None


def test_the_wire_words_are_the_relays_as_before():
    """``question/resolved`` keeps the words desks and controllers read (spec/relay.md)."""
    assert {outcome: outcome.event for outcome in Outcome} == {
        Outcome.ANSWERED: "answered", Outcome.CANCELLED: "cancelled",
        Outcome.DECLINED: "declined", Outcome.TIMED_OUT: "timeout",
        Outcome.DISCUSSED: "discuss", Outcome.ABORTED: "aborted",
        Outcome.NO_PROVIDER: "aborted"}


def test_a_discussed_batch_and_one_nobody_could_answer_are_not_aborted():
    assert Outcome.DISCUSSED.stored == "discussed" and Outcome.DISCUSSED.word == "discussed"
    assert Outcome.NO_PROVIDER.said() == "no one to answer (NO_PROVIDER)"
    assert Outcome.NO_PROVIDER.said(by_agent=True) == "no desk (NO_PROVIDER)"
    assert Outcome.TIMED_OUT.said(by_agent=True) == "timed out"
    assert not any(outcome.closes_async for outcome in
                   (Outcome.ABORTED, Outcome.DISCUSSED, Outcome.NO_PROVIDER))


def test_a_permission_request_ends_cancelled_timed_out_or_aborted():
    assert PERMISSION_ENDINGS == ("cancelled", "timeout", "aborted")
    assert [permission_outcome(code) for code in (
        errors.ASK_CANCELLED, errors.ASK_TIMEOUT, errors.ASK_ABORTED, errors.ASK_DECLINED,
        errors.NO_PROVIDER, None)] == ["cancelled", "timeout", "aborted", "aborted",
                                       "aborted", "aborted"]


# -- nothing maps an outcome by hand outside the vocabulary ---------------------------------

CODES = {outcome.code for outcome in Outcome if outcome.code}
# the words an outcome goes by: on the wire, in the store and on screen
WORDS = {word for outcome in Outcome for word in (outcome.event, outcome.stored, outcome.word)}
# Other vocabularies that share a word, each with why it is not a batch's outcome.
OTHERS = {
    # ACP's own word: a permission reply's outcome
    ("acp/permission.py", "cancelled"),
    # the timeout command (an MCP server's command line), an agent's config key
    ("mcp_client/config/runs.py", "timeout"), ("mcp_server/install/agents.py", "timeout"),
    # one question of a batch on the review screen: answered, or its status's style class
    ("providers/terminal/render.py", "answered"),
    # the hub's entry lifecycle (a question or a permission request), its store's own words;
    # an entry's end reaches a desk or an agent as an Outcome (hub/desks.py, hub/asker.py)
    ("hub/records.py", "answered"), ("hub/records.py", "cancelled"), ("hub/records.py", "timeout"),
    ("hub/store.py", "answered"), ("hub/store.py", "cancelled"), ("hub/store.py", "timeout"),
}


def _literal(node: ast.AST) -> str | None:
    """The code or word a node spells: a string constant, or the name of a code constant."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value if node.value in WORDS | CODES else None
    if isinstance(node, ast.Name | ast.Attribute):
        name = node.id if isinstance(node, ast.Name) else node.attr
        return name if name in CODES else None
    return None


def _mappings(tree: ast.AST) -> list[tuple[int, str]]:
    """Where a word is mapped: compared, tabled with another, a dict's key (with the codes
    it maps to), a dict's value under a code, ``outcome`` or ``status``, or what an ``if``
    on a code returns. A code compared or keyed to anything but a word (an exit status, a
    demo's reply) routes on it: fine."""
    found: list[tuple[int, str]] = []

    def words(*nodes: ast.AST, codes: bool = False) -> None:
        found.extend((getattr(node, "lineno", 0), spelled) for node in nodes
                     if (spelled := _literal(node)) in WORDS or (codes and spelled))

    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if key is None:
                    continue
                named = key.value if isinstance(key, ast.Constant) else None
                if _literal(key) in WORDS:  # a word to whatever it means, codes included
                    words(key, *ast.walk(value), codes=True)
                elif _literal(key) in CODES or named in ("outcome", "status"):
                    words(value)
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            words(*sides, *(element for side in sides
                            if isinstance(side, ast.Tuple | ast.List | ast.Set)
                            for element in side.elts))
        elif isinstance(node, ast.If) and any(
                _literal(part) in CODES for part in ast.walk(node.test)):
            # an if-chain on a code that says a word: "if code == ASK_DISCUSS: return ..."
            words(*(part.value for statement in node.body for part in ast.walk(statement)
                    if isinstance(part, ast.Return | ast.Assign) and part.value is not None))
        elif isinstance(node, ast.Tuple | ast.List | ast.Set) and sum(
                _literal(element) in WORDS for element in node.elts) >= 2:  # a table
            words(*node.elts)
    return found


def _scan(package: Path) -> dict[tuple[str, str], list[int]]:
    """Every mapped word of ``package`` by place, but the vocabulary's and the migrations'
    (history: each keeps the words its schema had; m012's CHECK is pinned against the
    vocabulary in tests/store/test_migrations.py)."""
    found: dict[tuple[str, str], list[int]] = {}
    for path in sorted(package.rglob("*.py")):
        where = path.relative_to(package).as_posix()
        if where in ("core/outcomes.py", "store/migrations.py"):
            continue
        for line, word in _mappings(module_tree(module_text(path))):
            found.setdefault((where, word), []).append(line)
    return found


def test_no_module_but_the_vocabulary_maps_an_outcomes_codes_or_words():
    found = _scan(PACKAGE)
    strays = [f"dsh_cli/{where}:{line}: {word!r}" for (where, word), lines in found.items()
              if (where, word) not in OTHERS for line in lines]
    assert not strays, "map outcomes through dsh_cli.core.outcomes.Outcome:\n" + "\n".join(
        strays)
    assert not OTHERS - set(found), "an entry of OTHERS no longer occurs: delete it"


def test_the_scan_finds_a_hand_made_mapping():
    """The scan is not blind: each shape of the old tables is found."""
    for source in ('_OUTCOMES = {ASK_CANCELLED: "cancelled", ASK_TIMEOUT: "timeout"}',
                   'if status == "aborted" and code == ASK_DISCUSS: pass',
                   'if event.outcome in ("answered", "declined"): pass',
                   'STORED = ("answered", "cancelled", "declined")',
                   'TOLD = {"cancelled": (ASK_CANCELLED, "the user cancelled")}',
                   'frame = {"type": kind, "outcome": "aborted"}',
                   'done = outcome == "answered"',
                   'if item.code == ASK_DISCUSS:\n    return "discussed"'):
        assert _mappings(module_tree(source)), source
    assert not _mappings(ast.parse('print("answered")\nraise Outcome.ABORTED.error()\n'
                                   'EXIT = {ASK_TIMEOUT: 124}\nif code == ASK_ABORTED: pass'))
