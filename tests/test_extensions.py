"""The extension points: one module names them, and a live session's tool set grows by name."""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
from typing import Any, Protocol

from harness.package_source import PACKAGE, module_text, module_tree, package_modules
from pydantic import BaseModel

import dsh_cli.extensions as extensions
from dsh_cli.config import load_settings
from dsh_cli.interaction import UserInteractionProvider
from dsh_cli.interaction.traits import PROVIDER_TRAITS, Concurrent
from dsh_cli.models.base import Completion, ModelToolCall
from dsh_cli.models.resolve import MODEL_BACKENDS
from dsh_cli.permissions.approvals import definition_digest
from dsh_cli.permissions.gate import PermissionProvider
from dsh_cli.runtime import build_runtime
from dsh_cli.tools import BUILTIN_TOOLS, Tool, ToolContext, ToolRegistry


def test_the_extension_points_are_the_objects_where_they_live():
    assert extensions.BUILTIN_TOOLS is BUILTIN_TOOLS
    assert extensions.MODEL_BACKENDS is MODEL_BACKENDS
    assert extensions.Tool is Tool and extensions.ToolRegistry is ToolRegistry
    assert extensions.UserInteractionProvider is UserInteractionProvider
    assert [name for name in extensions.__all__ if not hasattr(extensions, name)] == []


def test_the_module_names_every_registry_a_newcomer_needs():
    doc = extensions.__doc__ or ""
    for name in ("BUILTIN_TOOLS", "ToolRegistry", "register", "unregister", "Policy",
                 "MODEL_BACKENDS", "ModelBackend", "UserInteractionProvider",
                 "PermissionProvider", "dsh_cli/sources/table.py", "docs/architecture.md"):
        assert name in doc, name


class ClockArgs(BaseModel):
    zone: str


class Clock(Tool[ClockArgs]):
    name = "mcp__time__now"
    description = "The time in a zone."
    Args = ClockArgs

    async def run(self, args: ClockArgs, ctx: ToolContext) -> str:
        return f"noon in {args.zone}"


class Recording:
    """Calls the late tool once it is offered, then answers with the tool's result."""

    name = "recording"

    def __init__(self) -> None:
        self.offered: list[list[str]] = []

    async def stream(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]):
        names = [spec["function"]["name"] for spec in tools]
        self.offered.append(names)
        if messages[-1]["role"] == "tool":
            yield Completion(messages[-1]["content"])
        elif Clock.name in names:
            yield Completion("", [ModelToolCall("call_1", Clock.name, '{"zone": "UTC"}')])
        else:
            yield Completion("no clock yet")


def test_a_tool_registered_on_a_live_session_is_offered_and_run_from_the_next_call():
    model = Recording()
    runtime = build_runtime(load_settings(model="demo", config={}), persist=False, model=model)
    try:
        assert runtime.tools.names == list(BUILTIN_TOOLS)
        assert asyncio.run(runtime.loop.run_turn("what time is it?")) == "no clock yet"
        runtime.tools.register(Clock())
        assert asyncio.run(runtime.loop.run_turn("and now?")) == "noon in UTC"
        runtime.tools.unregister(Clock.name)
        assert asyncio.run(runtime.loop.run_turn("once more")) == "no clock yet"
    finally:
        runtime.close()
    assert model.offered == [
        ["ask_user_question"],
        ["ask_user_question", Clock.name],
        ["ask_user_question", Clock.name],
        ["ask_user_question"],
    ]


def test_a_session_without_questions_leaves_out_only_ask_user_question():
    runtime = build_runtime(load_settings(model="demo", config={}), persist=False, ask=False)
    try:
        assert runtime.tools.names == [n for n in BUILTIN_TOOLS if n != "ask_user_question"]
    finally:
        runtime.close()


# The contract page against the code: each indented row of ``extensions.py`` is one member
# of a protocol it lists, rendered as below from the protocol itself.

def _rows_of(protocol: type) -> set[str]:
    rows = {f"{protocol.__name__}.{name}: {kind}"
            for name, kind in vars(protocol).get("__annotations__", {}).items()}
    for name, member in vars(protocol).items():
        if name.startswith("_") or not inspect.isfunction(member):
            continue
        signature = inspect.signature(member)
        parameters = ", ".join(name for name in signature.parameters if name != "self")
        prefix = "async " if inspect.iscoroutinefunction(member) else ""
        rows.add(f"{prefix}{protocol.__name__}.{name}({parameters}) -> "
                 f"{signature.return_annotation}")
    return rows


def test_the_page_lists_every_member_of_every_protocol_as_the_code_declares_it():
    written = set(re.findall(r"^ {4}``([^`]+)``", extensions.__doc__ or "", re.M))
    declared = {row for protocol in extensions.CONTRACTS for row in _rows_of(protocol)}
    assert sorted(written - declared) == [], "rows on the page that the code does not declare"
    assert sorted(declared - written) == [], "members the page does not list"


def test_every_protocol_on_the_page_is_exported_there():
    assert [p.__name__ for p in extensions.CONTRACTS if p.__name__ not in extensions.__all__] == []
    assert extensions.PermissionProvider is PermissionProvider
    assert extensions.PROVIDER_TRAITS is PROVIDER_TRAITS


def test_the_rows_follow_a_protocol_when_it_changes():
    """The check itself bites: a protocol with one more member renders one more row."""

    class Wider(Concurrent, Protocol):
        async def pause(self, seconds: float) -> None: ...

    assert _rows_of(Wider) == {"async Wider.pause(seconds) -> None"}
    assert _rows_of(Concurrent) == {"Concurrent.concurrent: bool"}


def _members(protocol: type) -> set[str]:
    return {row.split(".", 1)[1].split(":")[0].split("(")[0] for row in _rows_of(protocol)}


def _sources() -> list[tuple[str, ast.Module]]:
    return [(str(path.relative_to(PACKAGE.parent)), module_tree(module_text(path)))
            for path in package_modules()]


def test_no_member_of_an_extension_point_is_read_by_getattr_or_hasattr():
    """Every protocol on the page, and ``Tool``'s methods: what an extension offers is
    declared, so reading it needs no probe. ``name`` is left out: SDK objects (an ACP
    client's info) are read by ``getattr(…, "name")``, and no contract's ``name`` is optional."""
    members = {member for protocol in extensions.CONTRACTS for member in _members(protocol)}
    members |= {name for name, value in vars(Tool).items()
                if inspect.isfunction(value) and not name.startswith("_")}
    members -= {"name"}
    assert {"ask", "decide", "concurrent", "takes_turns", "immediate", "answered_by",
            "answered_through_table", "seen", "on_retry", "permission_info"} <= members
    probes = []
    for where, tree in _sources():
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2
                    and isinstance(node.args[1], ast.Constant)
                    and node.args[1].value in members):
                probes.append(f"{where}:{node.lineno} {node.func.id}(…, {node.args[1].value!r})")
    assert probes == [], "declare it on the protocol (a trait: dsh_cli/interaction/traits.py)"


def test_a_provider_that_offers_a_trait_names_its_protocol():
    """So mypy checks the member's type: a class that answers questions (it has ``ask``) and
    sets a trait's member has that trait's protocol among its bases."""
    trait_of = {member: protocol.__name__ for protocol in PROVIDER_TRAITS
                for member in _members(protocol)}
    unnamed = []
    for where, tree in _sources():
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            methods = {item.name for item in node.body
                       if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)}
            if "ask" not in methods:
                continue
            offered = set(methods) & set(trait_of)
            for item in node.body:  # a class attribute
                offered |= {target.id for target in _assigned(item)
                            if isinstance(target, ast.Name) and target.id in trait_of}
            for item in ast.walk(node):  # an instance attribute, set by a method
                offered |= {target.attr for target in _assigned(item)
                            if isinstance(target, ast.Attribute) and target.attr in trait_of
                            and isinstance(target.value, ast.Name) and target.value.id == "self"}
            bases = {base.id for base in node.bases if isinstance(base, ast.Name)}
            unnamed += [f"{where}: {node.name} sets {member} without {trait_of[member]}"
                        for member in sorted(offered) if trait_of[member] not in bases]
    assert unnamed == []


def _assigned(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return node.targets
    if isinstance(node, ast.AnnAssign):
        return [node.target]
    return []


def test_a_tool_without_permission_info_says_none_and_is_asked_about_by_its_spec():
    """``permission_info`` is a method of every ``Tool`` (it was probed with getattr)."""
    from dsh_cli.tools.permission_policy import info_for

    clock = Clock()
    assert clock.permission_info() is None
    info = info_for(clock, clock.name)
    assert (info.server, info.digest) == (None, definition_digest(
        None, "The time in a zone.", clock.spec()["function"]["parameters"]))
