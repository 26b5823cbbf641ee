"""The gate and the policy around a real ToolRegistry: rules, approvals, providers, events."""

from __future__ import annotations

import asyncio
import json

from pydantic import BaseModel

from dsh_cli.core.events import EventStream, PermissionRequested, PermissionResolved
from dsh_cli.core.signal import AbortSignal
from dsh_cli.interaction import UserInteraction
from dsh_cli.permissions import (
    Approvals,
    Hints,
    PermissionDecision,
    PermissionGate,
    PermissionInfo,
    Rules,
    definition_digest,
)
from dsh_cli.tools import ToolRegistry
from dsh_cli.tools.permission_policy import permission_policy
from dsh_cli.tools.registry import Tool, ToolContext


class NoteArgs(BaseModel):
    text: str = ""


class NoteTool(Tool):
    """A tool that records what it was asked to write."""

    name = "mcp__notes__write_note"
    description = "Write a note."
    Args = NoteArgs

    def __init__(self, description: str = "Write a note.", read_only: bool | None = None):
        self.description = description
        self.read_only = read_only
        self.written: list[str] = []

    def permission_info(self) -> PermissionInfo:
        schema = NoteArgs.model_json_schema()
        return PermissionInfo("notes", Hints(read_only=self.read_only),
                              definition_digest("notes", self.description, schema))

    async def run(self, args, ctx):
        self.written.append(args.text)
        return f"wrote {args.text}"


class Human:
    """A permission provider that answers from a list and remembers what it was shown."""

    def __init__(self, *decisions: PermissionDecision | None, delay: float = 0.0):
        self.decisions = list(decisions)
        self.shown: list[tuple[str, object]] = []
        self.delay = delay

    async def decide(self, request, rpc_id):
        self.shown.append((request.tool, request.arguments))
        if self.delay:
            await asyncio.sleep(self.delay)
        decision = self.decisions.pop(0)
        if decision is None:
            await asyncio.Event().wait()
        return decision


def setup(tmp_path, *, rules=None, human=None, tool=None, timeout=None):
    events = EventStream()
    seen: list[object] = []
    events.subscribe(seen.append)
    gate = PermissionGate(rules, Approvals(tmp_path / "permissions.json"), events=events,
                          timeout=timeout, session_id="s_1")
    if human is not None:
        gate.register_provider(human)
    tool = tool or NoteTool()
    registry = ToolRegistry([tool])
    registry.use(permission_policy(gate, registry.get))
    return gate, registry, tool, seen


def call(registry, arguments='{"text": "hi"}', signal=None):
    ctx = ToolContext(user_interaction=UserInteraction(), call_id="c1",
                      signal=signal or AbortSignal())
    return registry.execute("mcp__notes__write_note", arguments, ctx)


def test_no_provider_fails_at_once_with_a_hint(tmp_path, run):
    _, registry, tool, _ = setup(tmp_path)
    result = run(call(registry))
    assert result.is_error and result.error["code"] == "NO_PERMISSION_PROVIDER"
    assert "--allow mcp__notes__write_note" in result.error["message"]
    assert tool.written == []


def test_a_deny_rule_refuses_without_asking(tmp_path, run):
    human = Human()
    _, registry, tool, seen = setup(tmp_path, rules=Rules(deny=("mcp__notes",)), human=human)
    result = run(call(registry))
    assert result.error["code"] == "PERMISSION_DENIED"
    assert "deny 'mcp__notes'" in result.error["message"]
    assert human.shown == [] and tool.written == [] and seen == []


def test_read_only_tools_run_without_a_prompt(tmp_path, run):
    human = Human()
    _, registry, _tool, _ = setup(tmp_path, human=human, tool=NoteTool(read_only=True))
    assert run(call(registry)).content == "wrote hi"
    assert human.shown == []


def test_the_human_sees_decoded_arguments_and_a_deny_reason_reaches_the_model(tmp_path, run):
    human = Human(PermissionDecision("deny", "not on main"))
    _, registry, tool, seen = setup(tmp_path, human=human)
    result = run(call(registry))
    assert human.shown == [("mcp__notes__write_note", {"text": "hi"})]
    assert result.error["code"] == "PERMISSION_DENIED"
    assert result.error["message"].endswith("not on main")
    assert tool.written == []
    requested, resolved = seen
    assert isinstance(requested, PermissionRequested) and requested.server == "notes"
    assert requested.to_json()["arguments"] == {"text": "hi"}
    assert isinstance(resolved, PermissionResolved)
    assert resolved.to_json() == {"type": "permission/resolved", "rpc_id": requested.rpc_id,
                                  "outcome": "decided", "decision": "deny",
                                  "message": "not on main"}


def test_allow_once_asks_every_time(tmp_path, run):
    human = Human(PermissionDecision("allow_once"), PermissionDecision("allow_once"))
    _, registry, tool, _ = setup(tmp_path, human=human)
    run(call(registry))
    run(call(registry, '{"text": "again"}'))
    assert tool.written == ["hi", "again"] and len(human.shown) == 2


def test_allow_for_the_session_is_remembered_but_not_saved(tmp_path, run):
    human = Human(PermissionDecision("allow_session"))
    _, registry, tool, _ = setup(tmp_path, human=human)
    run(call(registry))
    run(call(registry, '{"text": "again"}'))
    assert tool.written == ["hi", "again"] and len(human.shown) == 1
    assert not (tmp_path / "permissions.json").exists()


def test_always_is_saved_per_definition_and_a_changed_tool_is_asked_again(tmp_path, run):
    human = Human(PermissionDecision("allow_always"))
    _, registry, _tool, _ = setup(tmp_path, human=human)
    run(call(registry))
    saved = tmp_path / "permissions.json"
    assert saved.stat().st_mode & 0o777 == 0o600
    assert "mcp__notes__write_note" in json.loads(saved.read_text())["always"]
    # a new session with the same definition: no prompt
    later = Human()
    _, registry2, _tool2, _ = setup(tmp_path, human=later)
    assert run(call(registry2)).content == "wrote hi" and later.shown == []
    # the server changed the tool's description: asked again
    changed = Human(PermissionDecision("deny"))
    _, registry3, tool3, _ = setup(tmp_path, human=changed,
                                   tool=NoteTool(description="Write a note, then push it."))
    assert run(call(registry3)).error["code"] == "PERMISSION_DENIED"
    assert len(changed.shown) == 1 and tool3.written == []


def test_a_broken_approvals_file_counts_as_no_approvals(tmp_path, run):
    (tmp_path / "permissions.json").write_text("{not json")
    human = Human(PermissionDecision("allow_once"))
    _, registry, _, _ = setup(tmp_path, human=human)
    assert run(call(registry)).content == "wrote hi" and len(human.shown) == 1


def test_a_timeout_is_ask_timeout_and_resolved_as_timeout(tmp_path, run):
    human = Human(None)
    _, registry, tool, seen = setup(tmp_path, human=human, timeout=0.05)
    result = run(call(registry))
    assert result.error["code"] == "ASK_TIMEOUT" and tool.written == []
    assert seen[-1].outcome == "timeout"


def test_an_abort_of_the_turn_aborts_the_request(tmp_path, run):
    human = Human(None)
    _, registry, tool, seen = setup(tmp_path, human=human)
    signal = AbortSignal()

    async def go():
        task = asyncio.ensure_future(call(registry, signal=signal))
        while not human.shown:
            await asyncio.sleep(0.01)
        signal.abort("ctrl-c")
        return await task

    result = run(go())
    assert result.is_error and tool.written == []
    assert seen[-1].outcome == "aborted"


def test_ask_user_question_passes_untouched(tmp_path, run):
    _gate, registry, _, _ = setup(tmp_path, rules=Rules(deny=("*",)))
    from dsh_cli.tools import AskUserQuestionTool

    registry.register(AskUserQuestionTool())
    ctx = ToolContext(user_interaction=UserInteraction())
    result = run(registry.execute("ask_user_question", {"questions": [
        {"id": "a", "question": "Why?"}]}, ctx))
    assert result.error["code"] == "NO_PROVIDER"  # the seam's own answer, not a permission


def test_a_provider_that_returns_garbage_is_an_abort_not_a_run(tmp_path, run):
    class Liar:
        async def decide(self, request, rpc_id):
            return {"decision": "allow_once"}

    _, registry, tool, _ = setup(tmp_path, human=Liar())
    result = run(call(registry))
    assert result.error["code"] == "ASK_ABORTED" and tool.written == []
