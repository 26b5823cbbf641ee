"""A minimal agent registry: enough to tell who may ask the human."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

__all__ = ["Agent", "AgentRegistry"]

_ids = itertools.count(1)


@dataclass(frozen=True, eq=False)
class Agent:
    """An agent; ``parent`` is the live agent that delegated work to it, if any."""

    name: str
    parent: Agent | None = None
    id: str = ""

    def __post_init__(self) -> None:
        if not self.id:
            object.__setattr__(self, "id", f"agent-{next(_ids)}")


class AgentRegistry:
    """The agents live in one context; ownership checks consult it.

    Liveness is of the instance, not the id: another ``Agent`` built with a live agent's
    ``id`` is not that agent, so it may neither ask nor retire it.
    """

    def __init__(self) -> None:
        self._live: dict[str, Agent] = {}

    def spawn(self, name: str, parent: Agent | None = None) -> Agent:
        agent = Agent(name=name, parent=parent)
        self._live[agent.id] = agent
        return agent

    def retire(self, agent: Agent) -> None:
        if self.is_live(agent):
            del self._live[agent.id]

    def is_live(self, agent: Agent) -> bool:
        return self._live.get(agent.id) is agent
