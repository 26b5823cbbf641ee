"""The agent loop: model turns and tool calls, reported on one event stream."""

from dsh_cli.agent.loop import MAX_MODEL_CALLS, AgentLoop, TurnCancelled

__all__ = ["MAX_MODEL_CALLS", "AgentLoop", "TurnCancelled"]
