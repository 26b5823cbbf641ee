"""Chat models: the protocol, the scripted and demo models, the OpenAI-compatible client."""

from dsh_cli.models.base import (
    MODEL_ERROR,
    ChatModel,
    Completion,
    ModelError,
    ModelToolCall,
    ReasoningDelta,
    TextDelta,
    Usage,
)

__all__ = [
    "MODEL_ERROR",
    "ChatModel",
    "Completion",
    "ModelError",
    "ModelToolCall",
    "ReasoningDelta",
    "TextDelta",
    "Usage",
]
