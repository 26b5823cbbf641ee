"""The built-in tool table: every session starts with a fresh instance of each row."""

from __future__ import annotations

from dsh_cli.tools import BUILTIN_TOOLS, AskUserQuestionTool, ToolRegistry, builtin_tools


def test_the_table_is_keyed_by_each_tools_own_name():
    assert {name: factory().name for name, factory in BUILTIN_TOOLS.items()} == {
        name: name for name in BUILTIN_TOOLS}
    assert "ask_user_question" in BUILTIN_TOOLS


def test_each_call_builds_fresh_instances_in_table_order():
    first, second = builtin_tools(), builtin_tools()
    assert [tool.name for tool in first] == list(BUILTIN_TOOLS)
    assert all(a is not b for a, b in zip(first, second, strict=True))
    assert isinstance(first[0], AskUserQuestionTool)


def test_a_tool_can_be_left_out_by_name():
    assert "ask_user_question" not in [t.name for t in builtin_tools(without={"ask_user_question"})]
    assert ToolRegistry(builtin_tools()).names == list(BUILTIN_TOOLS)
