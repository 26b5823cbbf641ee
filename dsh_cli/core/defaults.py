"""What dsh assumes when nothing says otherwise: the model, its endpoint, the key variables.

Written once here and imported wherever a default is applied or named (settings, the
model client's messages, ``--help``); this module imports nothing, so naming a default
costs a front door nothing.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_MODEL",
    "KEY_VARIABLES",
    "KEY_VARIABLES_HINT",
    "NOTIFY_CHOICES",
    "key_variables_hint",
]

DEFAULT_MODEL = "deepseek-chat"
DEFAULT_BASE_URL = "https://api.deepseek.com"
# Where the API key is looked for, first found wins (config's api_key_env comes second).
KEY_VARIABLES = ("DSH_API_KEY", "DEEPSEEK_API_KEY", "OPENAI_API_KEY")
# How messages name them: "DSH_API_KEY (or DEEPSEEK_API_KEY, OPENAI_API_KEY)"


def key_variables_hint(variables: tuple[str, ...] = KEY_VARIABLES) -> str:
    """The variables an API key is read from, as a message names them."""
    first, *rest = variables
    return f"{first} (or {', '.join(rest)})" if rest else first


KEY_VARIABLES_HINT = key_variables_hint()
# the alert when a question appears; ``auto``: the bell in the chat, at the desk the
# terminal's own notification (desk/notify.py)
NOTIFY_CHOICES = ("auto", "bell", "osc9", "none")
