"""``streamed.bounded_message`` in-process: a long line within the caps becomes the same
message the SDK's own parse makes, and the cuts it makes cannot be forged by a server."""

from __future__ import annotations

import json
from typing import Any

import mcp_types
import pytest

from dsh_cli.core.limits import FORM_SCHEMA_BYTES, MESSAGE_VALUES, RESULT_ITEMS
from dsh_cli.mcp_client.forms.elicitation import SchemaRefused, form_fields
from dsh_cli.mcp_client.results import result_text
from dsh_cli.mcp_client.transport.streamed import NotJSON, TooManyValues, bounded_message, cut_of

PAD = "p" * 300_000  # over PARSED_WHOLE_BYTES, so the stdio reader would stream the line


def response(result: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 7, "result": result},
                      ensure_ascii=False).encode()


@pytest.mark.parametrize("result", [
    {"content": [{"type": "text", "text": PAD}], "structuredContent": {"a": [1, 2.5, -3e300]},
     "isError": False, "_meta": {"k": None, "é\u2028": [True, {}, []]}},
    {"content": [{"type": "text", "text": "y"}] * RESULT_ITEMS, "pad": PAD},
    {"inputRequests": {"f": {"method": "elicitation/create", "params": {
        "mode": "form", "message": "m", "requestedSchema": {
            "type": "object",
            "properties": {"a": {"type": "string", "description": PAD[:200_000]}}}}}},
     "requestState": "s", "resultType": "input_required"},
    {"content": [], "nested": [[[[[["deep"]]]]]], "pad": PAD},
], ids=["mixed", "at-the-item-cap", "form-under-the-cap", "nested"])
def test_a_long_line_within_the_caps_is_the_message_the_sdk_parses(result):
    line = response(result)
    adapter = mcp_types.jsonrpc_message_adapter
    assert bounded_message(line) == json.loads(line)
    assert (adapter.validate_python(bounded_message(line), by_name=False)
            == adapter.validate_json(line, by_name=False))


def test_items_past_the_cap_are_counted_and_the_count_is_dsh_s_own():
    # the server's own "dsh/cut" in _meta is a plain int: no cut is claimed for it
    line = response({"content": [{"type": "text", "text": "y"}] * (RESULT_ITEMS + 5),
                     "_meta": {"dsh/cut": 99}, "pad": PAD})
    message = bounded_message(line)
    assert len(message["result"]["content"]) == RESULT_ITEMS
    assert cut_of(message["result"]["_meta"]) == 5
    forged = json.loads(response({"content": [{"type": "text", "text": "y"}],
                                  "_meta": {"dsh/cut": 99}}))
    assert cut_of(forged["result"]["_meta"]) == 0
    parsed = mcp_types.CallToolResult.model_validate(message["result"], by_name=False)
    assert result_text(parsed).endswith(": 5 more content items not shown]")


def test_a_form_over_the_cap_is_not_built_and_is_refused_as_over_it():
    schema = {"type": "object", "properties": {f"k{index}": {"type": "string"}
                                               for index in range(20_000)}}
    assert len(json.dumps(schema)) > FORM_SCHEMA_BYTES
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create",
                       "params": {"mode": "form", "message": "m", "requestedSchema": schema},
                       "after": [1, {"x": 2}]}).encode()
    message = bounded_message(line)
    kept = message["params"]["requestedSchema"]
    assert kept["properties"] == {} and cut_of(kept) > FORM_SCHEMA_BYTES
    assert message["after"] == [1, {"x": 2}]  # the rest of the message is read on
    with pytest.raises(SchemaRefused, match="over 256 KiB as JSON"):
        form_fields(kept)


def test_too_many_values_and_bad_json_are_refused_unbuilt():
    with pytest.raises(TooManyValues, match=f"over {MESSAGE_VALUES} JSON values"):
        bounded_message(b"[" + b"0," * MESSAGE_VALUES + b"0]")
    assert len(bounded_message(b"[" + b"0," * (MESSAGE_VALUES - 2) + b"0]")) == MESSAGE_VALUES - 1
    assert bounded_message(b'{"a": 1, "a": [2]}') == {"a": [2]}  # the last, as json.loads
    for bad in (b'{"a": [1, 2', b'{"a": "\xff"}', b"[1] [2]"):
        with pytest.raises(NotJSON):
            bounded_message(bad)


@pytest.mark.parametrize("depth", [1, 199, 200, 5_000])
def test_nesting_is_refused_where_the_sdk_s_parse_refuses_it(depth):
    line = (b'{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":'
            + b"[" * depth + b"]" * depth + b',"pad":"' + PAD.encode() + b'"}}')
    try:
        mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError:
        with pytest.raises(ValueError, match="nested over"):
            bounded_message(line)
        assert depth > 1
    else:
        assert bounded_message(line) == json.loads(line)
        assert depth < 5_000
