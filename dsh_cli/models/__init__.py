"""Chat models: the protocol, the scripted and demo models, the OpenAI-compatible client.

    base.py           the model protocol: a streamed assistant turn, whatever serves it
    resolve.py        the model table: from a model name to a model
    openai_compat.py  the OpenAI-compatible chat client (DeepSeek by default)
    turn_assembly.py  one assistant turn rebuilt from streamed chunks
    key_scrub.py      the API key kept out of everything a server sends back
    scripted.py       ScriptedModel: assistant turns replayed from a script file
    demo.py           the offline demo model: no key, no network
"""

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
