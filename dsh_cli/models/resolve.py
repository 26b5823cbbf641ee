"""From a model name (``demo``, ``script:PATH``, or an API model) to a ``ChatModel``."""

from __future__ import annotations

from dsh_cli.config import Settings
from dsh_cli.core.defaults import KEY_VARIABLES_HINT
from dsh_cli.core.errors import MISSING_API_KEY
from dsh_cli.models.base import ChatModel, ModelError

__all__ = ["DEMO", "MISSING_API_KEY", "needs_api_key", "resolve_model"]

DEMO = "demo"
SCRIPT_PREFIX = "script:"


def needs_api_key(name: str) -> bool:
    return name != DEMO and not name.startswith(SCRIPT_PREFIX)


def resolve_model(settings: Settings) -> ChatModel:
    """The model ``settings`` names; ``ModelError(MISSING_API_KEY)`` when a key is needed."""
    name = settings.model
    if name == DEMO:
        from dsh_cli.models.demo import DemoModel

        return DemoModel()
    if name.startswith(SCRIPT_PREFIX):
        from dsh_cli.models.scripted import ScriptedModel

        return ScriptedModel.load(name[len(SCRIPT_PREFIX):])
    if not settings.api_key:
        raise ModelError(
            f"model {name} needs an API key: set {KEY_VARIABLES_HINT}, or use --model demo",
            MISSING_API_KEY,
        )
    from dsh_cli.models.openai_compat import OpenAIChatModel

    return OpenAIChatModel(model=name, base_url=settings.base_url, api_key=settings.api_key)
