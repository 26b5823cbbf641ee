"""The questions of an MCP server's form as the tests across the UIs ask them."""

from __future__ import annotations

# a choice the human must make, with no free text
ENV = {"id": "env", "question": "Environment?", "other": False, "required": True,
       "options": [{"label": "staging"}, {"label": "production"}]}
# typed free text with a range and a default that a skip takes
REPLICAS = {"id": "replicas", "question": "Replicas?", "default": {"custom": "3"},
            "rule": {"kind": "integer", "minimum": 1, "maximum": 9}}
