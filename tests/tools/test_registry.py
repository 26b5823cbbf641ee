"""``ToolRegistry.execute``: every failure is a result carrying ``{name, code, message}``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel

from dsh_cli.interaction import (
    AbortSignal,
    HarnessError,
    ScriptedProvider,
    UserInteraction,
    UserInteractionError,
)
from dsh_cli.tools import (
    ABORTED,
    ABORTED_BEFORE_DISPATCH,
    DUPLICATE_TOOL,
    INVALID_ARGS,
    UNKNOWN_TOOL,
    AskUserQuestionTool,
    Tool,
    ToolContext,
    ToolError,
    ToolRegistry,
    ToolResult,
)


class EchoArgs(BaseModel):
    text: str


class Echo(Tool):
    name = "echo"
    description = "Echo the text."
    Args = EchoArgs

    def __init__(self) -> None:
        self.runs = 0

    async def run(self, args: Any, ctx: ToolContext) -> str:
        self.runs += 1
        return args.text


class Raises(Tool):
    name = "raises"
    description = "Fail."
    Args = EchoArgs

    def __init__(self, error: BaseException) -> None:
        self.error = error

    async def run(self, args: Any, ctx: ToolContext) -> str:
        raise self.error


class Stubborn(Tool):
    """A tool that ignores its abort signal."""

    name = "stubborn"
    description = "Never finishes on its own."
    Args = EchoArgs

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = False

    async def run(self, args: Any, ctx: ToolContext) -> str:
        self.started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return "never"


def context(**fields) -> ToolContext:
    return ToolContext(user_interaction=UserInteraction(), **fields)


def execute(run, registry, name, arguments, ctx=None) -> ToolResult:
    async def main():
        return await registry.execute(name, arguments, ctx or context())

    return run(main())


def assert_error(result: ToolResult, name: str, code: str | None) -> dict:
    assert result.is_error
    error = result.error
    assert error["name"] == name
    if code is None:
        assert "code" not in error
        assert set(error) == {"name", "message"}
    else:
        assert error["code"] == code
        assert set(error) == {"name", "code", "message"}
    assert error["message"]
    assert json.loads(result.content) == {"error": error}
    assert " " not in result.content.split('"message"')[0]  # compact JSON
    return error


def test_a_tool_result_is_the_text_the_tool_returned(run):
    result = execute(run, ToolRegistry([Echo()]), "echo", '{"text": "hi"}')
    assert result == ToolResult(content="hi", is_error=False, error=None)


def test_arguments_may_be_given_as_a_value(run):
    assert execute(run, ToolRegistry([Echo()]), "echo", {"text": "hi"}).content == "hi"


def test_an_unknown_tool(run):
    echo = Echo()
    result = execute(run, ToolRegistry([echo]), "rm_rf", "{}")
    error = assert_error(result, "ToolError", UNKNOWN_TOOL)
    assert "rm_rf" in error["message"]


def test_aborted_before_dispatch(run):
    echo = Echo()
    signal = AbortSignal()
    signal.abort("turn cancelled")
    result = execute(run, ToolRegistry([echo]), "echo", '{"text": "hi"}', context(signal=signal))
    assert_error(result, "ToolError", ABORTED_BEFORE_DISPATCH)
    assert echo.runs == 0


def test_a_tool_that_ignores_the_signal_is_aborted_and_cancelled(run):
    stubborn = Stubborn()

    async def main():
        ctx = context()
        call = asyncio.ensure_future(
            ToolRegistry([stubborn]).execute("stubborn", '{"text": "x"}', ctx))
        await stubborn.started.wait()
        ctx.signal.abort("turn cancelled")
        return await call

    assert_error(run(main()), "ToolError", ABORTED)
    assert stubborn.cancelled


def test_invalid_args_name_the_path(run):
    result = execute(run, ToolRegistry([Echo()]), "echo", '{"txt": "hi"}')
    error = assert_error(result, "ToolError", INVALID_ARGS)
    assert "text: field required" in error["message"]


def test_malformed_json_is_invalid_args(run):
    echo = Echo()
    assert_error(execute(run, ToolRegistry([echo]), "echo", '{"text": '), "ToolError",
                 INVALID_ARGS)
    assert echo.runs == 0


def test_a_harness_error_keeps_its_name_and_code(run):
    registry = ToolRegistry([Raises(UserInteractionError("the user cancelled the questions",
                                                         "ASK_CANCELLED"))])
    result = execute(run, registry, "raises", '{"text": "x"}')
    assert result.content == ('{"error":{"name":"UserInteractionError","code":"ASK_CANCELLED",'
                              '"message":"the user cancelled the questions"}}')
    assert_error(result, "UserInteractionError", "ASK_CANCELLED")


def test_a_harness_error_subclass_from_anywhere_keeps_its_code(run):
    class QuotaError(HarnessError):
        pass

    result = execute(run, ToolRegistry([Raises(QuotaError("over quota", "QUOTA"))]), "raises",
                     '{"text": "x"}')
    assert assert_error(result, "QuotaError", "QUOTA")["message"] == "over quota"


def test_a_plain_exception_has_no_code(run):
    result = execute(run, ToolRegistry([Raises(ValueError("boom"))]), "raises", '{"text": "x"}')
    assert assert_error(result, "ValueError", None)["message"] == "boom"


def test_tool_errors_are_harness_errors():
    assert issubclass(ToolError, HarnessError)


def test_specs_are_openai_tool_entries():
    registry = ToolRegistry([Echo(), AskUserQuestionTool()])
    assert registry.names == ["echo", "ask_user_question"]
    echo_spec, ask_spec = registry.specs()
    assert echo_spec["type"] == "function"
    assert echo_spec["function"]["name"] == "echo"
    assert echo_spec["function"]["description"] == "Echo the text."
    assert echo_spec["function"]["parameters"]["required"] == ["text"]
    assert ask_spec["function"]["name"] == "ask_user_question"


def test_unregistered_tools_are_unknown(run):
    registry = ToolRegistry([Echo()])
    registry.unregister("echo")
    assert_error(execute(run, registry, "echo", '{"text": "x"}'), "ToolError", UNKNOWN_TOOL)


def test_a_name_is_registered_once_and_the_first_tool_stays(run):
    first, second = Echo(), Echo()
    registry = ToolRegistry([first])
    with pytest.raises(ToolError) as caught:
        registry.register(second)
    assert caught.value.code == DUPLICATE_TOOL
    assert "'echo'" in caught.value.message
    assert registry.get("echo") is first
    execute(run, registry, "echo", '{"text": "hi"}')
    assert (first.runs, second.runs) == (1, 0)


def test_duplicate_names_in_the_starting_list_are_refused():
    with pytest.raises(ToolError) as caught:
        ToolRegistry([Echo(), Echo()])
    assert caught.value.code == DUPLICATE_TOOL


def test_the_set_grows_and_shrinks_by_name_at_run_time(run):
    registry = ToolRegistry([AskUserQuestionTool()])
    echo = Echo()
    registry.register(echo)
    assert "echo" in registry and registry.names == ["ask_user_question", "echo"]
    assert [spec["function"]["name"] for spec in registry.specs()] == registry.names
    assert execute(run, registry, "echo", '{"text": "hi"}').content == "hi"
    assert registry.unregister("echo") is echo
    assert "echo" not in registry and registry.unregister("echo") is None
    registry.register(Echo())  # the name is free again
    assert registry.names == ["ask_user_question", "echo"]


# -- policies -------------------------------------------------------------------------------


def forbid_in_plan_mode(mode: dict):
    async def policy(call, ctx, call_next):
        if mode["name"] == "plan" and call.name != "ask_user_question":
            return ToolResult.failure(ToolError(f"{call.name} is not allowed in plan mode",
                                                "FORBIDDEN"))
        return await call_next(call, ctx)

    return policy


def test_a_policy_can_refuse_a_call_and_let_others_through(run):
    echo = Echo()
    registry = ToolRegistry([echo])
    mode = {"name": "plan"}
    remove = registry.use(forbid_in_plan_mode(mode))
    refused = execute(run, registry, "echo", '{"text": "hi"}')
    assert assert_error(refused, "ToolError", "FORBIDDEN")["message"] == (
        "echo is not allowed in plan mode")
    assert echo.runs == 0
    mode["name"] = "build"
    assert execute(run, registry, "echo", '{"text": "hi"}').content == "hi"
    mode["name"] = "plan"
    remove()
    assert execute(run, registry, "echo", '{"text": "hi"}').content == "hi"


def test_a_policy_that_raises_still_gives_a_result(run):
    async def strict(call, ctx, call_next):
        raise ToolError("no tools today", "FORBIDDEN")

    registry = ToolRegistry([Echo()])
    registry.use(strict)
    assert_error(execute(run, registry, "echo", '{"text": "hi"}'), "ToolError", "FORBIDDEN")


def test_a_policy_sees_the_call_and_its_result(run):
    seen = []

    async def audit(call, ctx, call_next):
        result = await call_next(call, ctx)
        seen.append((call.name, call.arguments, call.id, result.content))
        return result

    registry = ToolRegistry([Echo()])
    registry.use(audit)
    execute(run, registry, "echo", '{"text": "hi"}', context(call_id="call_7"))
    assert seen == [("echo", '{"text": "hi"}', "call_7", "hi")]


def test_a_policy_works_without_the_agent_loop_knowing(run):
    from dsh_cli.agent.loop import AgentLoop
    from dsh_cli.models.base import Completion, ModelToolCall

    class TwoStepModel:
        """Calls ``echo`` once, then answers with the tool result it received."""

        name = "two-step"

        def __init__(self) -> None:
            self.calls = 0

        async def stream(self, messages, tools):
            self.calls += 1
            if self.calls == 1:
                yield Completion("", [ModelToolCall("call_1", "echo", '{"text": "hi"}')])
            else:
                yield Completion(messages[-1]["content"])

    async def main():
        ui = UserInteraction()
        registry = ToolRegistry([Echo()])
        registry.use(forbid_in_plan_mode({"name": "plan"}))
        loop = AgentLoop(model=TwoStepModel(), tools=registry, ui=ui)
        return await loop.run_turn("go")

    final = json.loads(run(main()))
    assert final["error"]["code"] == "FORBIDDEN"


def test_the_ask_tool_reports_the_seam_code_when_aborted_while_shown(run):
    async def main():
        ui = UserInteraction()
        provider = ScriptedProvider(lambda request: asyncio.sleep(3600))
        ui.register_provider(provider)
        ctx = ToolContext(user_interaction=ui)
        call = asyncio.ensure_future(ToolRegistry([AskUserQuestionTool()]).execute(
            "ask_user_question", '{"questions": [{"id": "a", "question": "A?"}]}', ctx))
        while not provider.requests:
            await asyncio.sleep(0)
        ctx.signal.abort("turn cancelled")
        result = await call
        assert provider.cancelled == provider.requests
        return result

    assert_error(run(main()), "UserInteractionError", "ASK_ABORTED")
