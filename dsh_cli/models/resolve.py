"""The model table: from a model name (``demo``, ``script:PATH``, an API model) to a model.

Each row of ``MODEL_BACKENDS`` is keyed by an exact name, or by a prefix ending in ``:``
(the factory gets what follows it); the row keyed ``""`` serves every other name. A factory
imports its backend module only when it is called, so naming a model costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dsh_cli.core.defaults import key_variables_hint
from dsh_cli.core.errors import MISSING_API_KEY
from dsh_cli.core.urls import where
from dsh_cli.models.base import ModelError

if TYPE_CHECKING:
    from dsh_cli.config import Settings
    from dsh_cli.models.base import ChatModel

__all__ = [
    "DEMO",
    "MISSING_API_KEY",
    "MODEL_BACKENDS",
    "ModelBackend",
    "backend_for",
    "needs_api_key",
    "resolve_model",
]

DEMO = "demo"
SCRIPT_PREFIX = "script:"


@dataclass(frozen=True)
class ModelBackend:
    """A row of the model table: ``build(settings, rest)`` makes the model.

    ``rest`` is the name after the row's key: the path of ``script:PATH``, ``""`` for an
    exact name, the whole name for the ``""`` row.
    """

    build: Callable[[Settings, str], ChatModel]
    needs_api_key: bool = False


def _demo(settings: Settings, rest: str) -> ChatModel:
    from dsh_cli.models.demo import DemoModel

    return DemoModel()


def _script(settings: Settings, path: str) -> ChatModel:
    from dsh_cli.models.scripted import ScriptedModel

    return ScriptedModel.load(path)


def _openai_compatible(settings: Settings, name: str) -> ChatModel:
    from dsh_cli.models.openai_compat import OpenAIChatModel

    assert settings.api_key is not None  # resolve_model checked needs_api_key
    return OpenAIChatModel(model=name, base_url=settings.base_url, api_key=settings.api_key,
                           timeout=settings.model_timeout, deadline=settings.model_deadline,
                           key_variable=settings.api_key_variable)


MODEL_BACKENDS: dict[str, ModelBackend] = {
    DEMO: ModelBackend(_demo),
    SCRIPT_PREFIX: ModelBackend(_script),
    "": ModelBackend(_openai_compatible, needs_api_key=True),
}


def _is_prefix(key: str) -> bool:
    return key == "" or key.endswith(":")


def backend_for(name: str) -> tuple[ModelBackend, str]:
    """The row serving ``name`` (an exact key first, else the longest prefix) and the rest."""
    exact = MODEL_BACKENDS.get(name)
    if exact is not None and not _is_prefix(name):
        return exact, ""
    key = max((key for key in MODEL_BACKENDS if _is_prefix(key) and name.startswith(key)),
              key=len)
    return MODEL_BACKENDS[key], name[len(key):]


def needs_api_key(name: str) -> bool:
    return backend_for(name)[0].needs_api_key


def resolve_model(settings: Settings) -> ChatModel:
    """The model ``settings`` names; ``ModelError(MISSING_API_KEY)`` when a key is needed."""
    name = settings.model
    backend, rest = backend_for(name)
    if backend.needs_api_key and not settings.api_key:
        advice = settings.key_advice or key_variables_hint(settings.key_variables)
        origin = f" (named by {settings.model_origin})" if settings.model_origin else ""
        raise ModelError(f"model {name}{origin} at {where(settings.base_url)} needs an API key: "
                         f"set {advice}; or use --model demo", MISSING_API_KEY)
    return backend.build(settings, rest)

