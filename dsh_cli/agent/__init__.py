"""The agent loop: model turns and tool calls, reported on one event stream.

    loop.py   AgentLoop: stream a model turn, run its tool calls, repeat until it stops
"""

from dsh_cli.agent.loop import MAX_MODEL_CALLS, AgentLoop, TurnCancelled

__all__ = ["MAX_MODEL_CALLS", "AgentLoop", "TurnCancelled"]
