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
    """The agents live in one context; ownership checks consult it."""

    def __init__(self) -> None:
        self._live: set[str] = set()

    def spawn(self, name: str, parent: Agent | None = None) -> Agent:
        agent = Agent(name=name, parent=parent)
        self._live.add(agent.id)
        return agent

    def retire(self, agent: Agent) -> None:
        self._live.discard(agent.id)

    def is_live(self, agent: Agent) -> bool:
        return agent.id in self._live
