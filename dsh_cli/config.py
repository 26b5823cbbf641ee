"""Settings and files: flag, then environment, then ``config.toml``, then default.

Where the files are is ``core/home.py`` (``config_dir`` and ``data_dir`` are re-exported
here). The API key is read from the environment only and never written anywhere.
"""

from __future__ import annotations

import math
import os
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dsh_cli.core.defaults import (
    DEFAULT_BASE_URL,
    DEFAULT_MODEL,
    KEY_VARIABLES,
    NOTIFY_CHOICES,
)
from dsh_cli.core.errors import ConfigError
from dsh_cli.core.home import config_dir, data_dir
from dsh_cli.core.lines import warning
from dsh_cli.core.urls import endpoint, masked
from dsh_cli.core.vendors import choose_key, default_base_url

__all__ = [
    "CONFIG_KEYS",
    "DEFAULT_BASE_URL",
    "DEFAULT_MODEL",
    "KEY_VARIABLES",
    "TIMEOUT_OFF",
    "ConfigError",
    "Settings",
    "config_dir",
    "config_warnings",
    "data_dir",
    "hub_table",
    "load_settings",
]

DEFAULT_MODEL_TIMEOUT = 60.0  # seconds without content before a model call is given up
DEFAULT_MODEL_DEADLINE = 600.0  # seconds a whole model call may take, retries included
TIMEOUT_OFF = 0.0  # ``--question-timeout 0`` (or ``none``): no timeout, whatever is configured

# every key config.toml may hold; anything else is warned about (a typo is silent otherwise)
CONFIG_KEYS = ("model", "base_url", "api_key_env", "question_timeout", "notify",
               "notify_command", "notify_delay", "model_timeout", "model_deadline",
               "permissions", "hub")
DEFAULT_NOTIFY_DELAY = 30.0  # seconds a batch waits at a focused desk before it notifies


@dataclass(frozen=True)
class Settings:
    """Resolved settings; ``model_is_default`` when nothing named a model."""

    model: str
    base_url: str
    api_key: str | None
    api_key_variable: str | None
    question_timeout: float | None
    notify: str
    model_is_default: bool
    model_timeout: float = DEFAULT_MODEL_TIMEOUT
    model_deadline: float = DEFAULT_MODEL_DEADLINE
    # the desk's notifications (desk/notify.py): a program given the batch, and the delay
    notify_command: tuple[str, ...] = ()
    notify_delay: float = DEFAULT_NOTIFY_DELAY
    # ``[permissions]`` of config.toml: tool rules in Claude Code's syntax (permissions.md)
    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    key_variables: tuple[str, ...] = KEY_VARIABLES  # may carry a key to base_url, in order
    key_advice: str = ""  # what to set when no key may go to base_url (core/vendors.py)
    base_url_given: bool = False  # by flag, environment or file; else the model's vendor's
    model_origin: str = ""  # where the model was named ("DSH_MODEL", the file), for errors
    api_key_env: str | None = None
    # the set key variables (values): the key for another model is chosen from them
    keys: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)

    def __repr__(self) -> str:  # the key must never reach a log or a traceback
        key = "set" if self.api_key else "unset"
        return (f"Settings(model={self.model!r}, base_url={masked(self.base_url)!r}, "
                f"api_key=<{key}>)")

    def for_model(self, model: str) -> Settings:
        """These settings talking to ``model``: its vendor's endpoint unless one was given,
        and only a key that may go there."""
        base_url = self.base_url if self.base_url_given else default_base_url(model)
        return replace(self, model=model, model_is_default=False, model_origin="",
                       **_key_fields(base_url, self.keys, self.api_key_env))


def _key_fields(base_url: str, keys: Mapping[str, str], named: str | None) -> dict[str, Any]:
    """The key that may go to ``base_url`` (a vendor's key only to that vendor), and why."""
    choice = choose_key(base_url, keys, named)
    return {"base_url": base_url, "api_key": keys.get(choice.variable) if choice.variable
            else None, "api_key_variable": choice.variable, "key_variables": choice.usable,
            "key_advice": choice.advice()}


def read_config_file(path: Path | None = None) -> dict[str, Any]:
    """The parsed ``config.toml`` (empty when absent); a clear error when unreadable."""
    path = path or config_dir() / "config.toml"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise ConfigError(f"cannot read {path}: {error.strerror}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: {error}") from None


def hub_table(path: Path | None = None) -> tuple[dict[str, Any], str]:
    """The ``[hub]`` table of ``path`` (default: ``config.toml``) and where it was read, for
    ``dsh_cli.hub.settings``; empty when the table is absent (or, not named, the file)."""
    if path is not None and not path.is_file():
        raise ConfigError(f"cannot read {path}: no such file")
    path = path or config_dir() / "config.toml"
    table = read_config_file(path).get("hub", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: hub must be a table ([hub])")
    return table, str(path)


def config_warnings(file: dict[str, Any], path: Path | str) -> list[str]:
    """One ``dsh: warning:`` line per unknown key of ``path``, with the close match if any."""
    import difflib

    lines = []
    for key in file:
        if key in CONFIG_KEYS:
            continue
        close = difflib.get_close_matches(key, CONFIG_KEYS, n=1)
        hint = f' (did you mean "{close[0]}"?)' if close else ""
        lines.append(warning(f'{path}: unknown key "{key}" ignored{hint}'))
    return lines


def _timeout(value: Any, source: str, what: str = "question timeout") -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ConfigError(f"{source}: {what} must be a number of seconds")
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{source}: {what} must be a number of seconds") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise ConfigError(f"{source}: {what} must be a positive number of seconds")
    return seconds


def _model_seconds(env: Any, file: dict[str, Any], key: str, default: float,
                   where: Path | str = "config") -> float:
    """``DSH_<KEY>`` beats ``config.toml``'s ``key``, which beats the default."""
    variable = "DSH_" + key.upper()
    what = key.replace("_", " ")
    if env.get(variable):
        seconds = _timeout(env[variable], variable, what)
    else:
        seconds = _timeout(file.get(key), f"{where}: {key}", what)
    return default if seconds is None else seconds


def _permission_rules(file: dict[str, Any], source: str) -> dict[str, tuple[str, ...]]:
    """``[permissions] allow / ask / deny`` as tuples; a bad type names the file."""
    table = file.get("permissions", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: [permissions] must be a table")
    rules: dict[str, tuple[str, ...]] = {}
    for key in ("allow", "ask", "deny"):
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(rule, str) for rule in value):
            raise ConfigError(f"{source}: [permissions] {key} must be a list of strings "
                              "(tool names or patterns like mcp__git__*)")
        rules[key] = tuple(value)
    return rules


def _notify_command(file: dict[str, Any], source: str) -> tuple[str, ...]:
    """``notify_command`` as an argv (never a shell line): a non-empty list of strings."""
    value = file.get("notify_command", [])
    if not isinstance(value, list) or not all(isinstance(part, str) for part in value) \
            or (value and not value[0]):
        raise ConfigError(f"{source}: notify_command must be a list of strings, the program "
                          'and its arguments (like ["ntfy", "publish", "mytopic"])')
    return tuple(value)


def load_settings(
    *,
    model: str | None = None,
    base_url: str | None = None,
    question_timeout: float | None = None,
    environ: dict[str, str] | None = None,
    config: dict[str, Any] | None = None,
) -> Settings:
    """Resolve every setting by precedence: flag, environment, config file, default."""
    env = os.environ if environ is None else environ
    where: Path | str = "config"
    if config is None:
        where = config_dir() / "config.toml"
        file = read_config_file(where)
        for line in config_warnings(file, where):
            sys.stderr.write(line + "\n")
        sys.stderr.flush()
    else:
        file = config
    source = str(where)
    for key in ("model", "base_url", "api_key_env", "notify"):
        if key in file and not isinstance(file[key], str):
            raise ConfigError(f"{where}: {key} must be a string")
    chosen_model = model or env.get("DSH_MODEL") or file.get("model")
    origin = ("" if model or not chosen_model
              else "DSH_MODEL" if env.get("DSH_MODEL") else str(where))
    named = str(file["api_key_env"]) if file.get("api_key_env") else None
    keys = {name: env[name] for name in (*KEY_VARIABLES, *([named] if named else []))
            if env.get(name)}
    given_url = base_url or env.get("DSH_BASE_URL") or file.get("base_url")
    if given_url:  # parsed once, here: a bad one is a line naming where it was given
        url_key = ("--base-url" if base_url else "DSH_BASE_URL" if env.get("DSH_BASE_URL")
                   else f"{where}: base_url")
        given_url = endpoint(given_url, url_key).url
    notify = str(file.get("notify", "auto"))
    if notify not in NOTIFY_CHOICES:
        raise ConfigError(f"{where}: notify must be one of {', '.join(NOTIFY_CHOICES)}")
    if question_timeout == TIMEOUT_OFF:
        timeout = None
    elif question_timeout is not None:
        timeout = _timeout(question_timeout, "--question-timeout")
    elif env.get("DSH_QUESTION_TIMEOUT"):
        timeout = _timeout(env["DSH_QUESTION_TIMEOUT"], "DSH_QUESTION_TIMEOUT")
    else:
        timeout = _timeout(file.get("question_timeout"), f"{where}: question_timeout")
    rules = _permission_rules(file, source)
    return Settings(
        model=chosen_model or DEFAULT_MODEL,
        **_key_fields(given_url or default_base_url(chosen_model or DEFAULT_MODEL), keys, named),
        base_url_given=bool(given_url), api_key_env=named, keys=keys, model_origin=origin,
        question_timeout=timeout,
        notify=notify,
        model_is_default=not chosen_model,
        model_timeout=_model_seconds(env, file, "model_timeout", DEFAULT_MODEL_TIMEOUT, where),
        model_deadline=_model_seconds(env, file, "model_deadline", DEFAULT_MODEL_DEADLINE,
                                      where),
        allow=rules["allow"], ask=rules["ask"], deny=rules["deny"],
        notify_command=_notify_command(file, source),
        notify_delay=_model_seconds(env, file, "notify_delay", DEFAULT_NOTIFY_DELAY, where),
    )
