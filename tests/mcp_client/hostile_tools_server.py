"""A raw stdio MCP server (2026-07-28, no SDK) that lies in its tools, results and forms.

``python hostile_tools_server.py PLAN``: ``PLAN`` is a JSON object. ``tools`` is the list
of tool names ``tools/list`` answers with, as given (duplicates, spaces, 300 characters);
``call`` says what every ``tools/call`` answers, unless ``calls`` (a tool name to a call)
says what that tool's does:

- ``{"text": N}``: one text item of N characters;
- ``{"items": N}``: N text items of one character each;
- ``{"values": N}``: one text item and a ``structuredContent`` array of N zeros;
- ``{"bare": TEXT}``: one text item TEXT in a result without ``resultType``, as a server of
  an earlier era sends it;
- ``{"form": SCHEMA, "state": N}``: an input-required round asking ``SCHEMA`` with a
  ``requestState`` of N characters, asked again on every retry (a server that keeps asking);
  without ``form``, the schema is ``{"enum": N}`` (one property, an enum of N values) or
  ``{"properties": N}`` (N string properties), built here as text.

Each big message is written as one line built from pieces, so this process stays small.
"""

from __future__ import annotations

import json
import sys
from typing import Any

PROTOCOL = "2026-07-28"
COMPLETE = {"resultType": "complete", "cacheScope": "private", "ttlMs": 0}


def entry(plan: dict[str, Any], **more: Any) -> dict[str, Any]:
    """An ``mcpServers`` entry that starts this server with this interpreter and ``plan``."""
    return {"command": sys.executable, "args": [__file__, json.dumps(plan)], **more}


def reply(ident: Any, result: str) -> None:
    """One response line whose ``result`` is the JSON text ``result``."""
    sys.stdout.write(f'{{"jsonrpc":"2.0","id":{json.dumps(ident)},"result":{result}}}\n')
    sys.stdout.flush()


def listing(names: list[str]) -> str:
    tools = [{"name": name, "description": f"tool {index}",
              "inputSchema": {"type": "object", "properties": {}}}
             for index, name in enumerate(names)]
    return json.dumps({"tools": tools, **COMPLETE})


def schema_text(call: dict[str, Any]) -> str:
    if "form" in call:
        return json.dumps(call["form"])
    if "enum" in call:
        values = ",".join(f'"v{index}"' for index in range(call["enum"]))
        return f'{{"type":"object","properties":{{"e":{{"type":"string","enum":[{values}]}}}}}}'
    fields = ",".join(f'"k{index}":{{"type":"string"}}' for index in range(call["properties"]))
    return f'{{"type":"object","properties":{{{fields}}}}}'


def answer(call: dict[str, Any]) -> str:
    if "text" in call:
        text = "x" * call["text"]
        return f'{{"content":[{{"type":"text","text":"{text}"}}],"resultType":"complete"}}'
    if "bare" in call:
        return json.dumps({"content": [{"type": "text", "text": call["bare"]}]})
    if "values" in call:
        zeros = ",".join(["0"] * call["values"])
        return (f'{{"content":[{{"type":"text","text":"z"}}],"structuredContent":{{"z":[{zeros}]}},'
                f'"resultType":"complete"}}')
    if "items" in call:
        items = ",".join(['{"type":"text","text":"y"}'] * call["items"])
        return f'{{"content":[{items}],"resultType":"complete"}}'
    state = "s" * call.get("state", 8)
    request = (f'{{"method":"elicitation/create","params":{{"mode":"form",'
               f'"message":"Fill this in","requestedSchema":{schema_text(call)}}}}}')
    return (f'{{"inputRequests":{{"f":{request}}},"requestState":"{state}",'
            f'"resultType":"input_required"}}')


def main() -> None:
    plan = json.loads(sys.argv[1])
    for line in sys.stdin:
        message = json.loads(line)
        method, ident = message.get("method"), message.get("id")
        if ident is None:
            continue  # a notification
        if method == "server/discover":
            reply(ident, json.dumps({"supportedVersions": [PROTOCOL],
                                     "capabilities": {"tools": {}}, "resultType": "complete",
                                     "_meta": {"io.modelcontextprotocol/serverInfo":
                                               {"name": "hostile", "version": "1"}}}))
        elif method == "tools/list":
            reply(ident, listing(plan.get("tools", [])))
        elif method == "tools/call":
            call = plan.get("calls", {}).get(message["params"]["name"])
            reply(ident, answer(call or plan.get("call", {"text": 2})))
        else:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": ident, "error": {
                "code": -32601, "message": f"no method {method}"}}) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
