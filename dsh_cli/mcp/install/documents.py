"""An agent's config file changed key by key, never losing what the user wrote there.

A file is read and parsed once, before anything is written: one that cannot be parsed, or
whose keys on the way to ours are not tables, is refused (``ConfigFileRefused``) and left
as it was. A change is ``Setting``: a value set at a key path, an item added to a list, or
a default set only where the user has none. The new text replaces the file atomically
(written beside it, then renamed), in the file's own mode; an unchanged file is not
rewritten, so installing twice changes nothing. TOML goes through ``tomlkit``, so the
user's comments and layout survive.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from dsh_cli.core.errors import ConfigError

__all__ = ["ConfigFileRefused", "Document", "Setting", "dotted"]

MAX_CONFIG_BYTES = 64 * 1024 * 1024  # ~/.claude.json keeps history; far below this still

Format = Literal["json", "toml"]


class ConfigFileRefused(ConfigError):
    """An agent's config file that dsh will not change; ``path`` is the file."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"{path} {why}; nothing was written")
        self.path = path


@dataclass(frozen=True)
class Setting:
    """One change: ``value`` at ``keys`` (``add``: into the list there; ``default``: if unset)."""

    keys: tuple[str, ...]
    value: Any
    how: Literal["set", "add", "default"] = "set"


def dotted(keys: tuple[str, ...]) -> str:
    """``mcpServers.dsh.command``, as the messages name a key."""
    return ".".join(keys)


class Document:
    """One config file, parsed; ``apply`` the settings, then ``write`` it if it changed."""

    def __init__(self, path: Path, format: Format) -> None:
        self.path = path
        self.format = format
        self.original: str | None = None
        self.data: Any = self._empty()
        self.changed: list[Setting] = []

    def _empty(self) -> Any:
        if self.format == "toml":
            import tomlkit

            return tomlkit.document()
        return {}

    def read(self) -> Document:
        """Parse the file as it is (a missing one is an empty document)."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return self
        except OSError as error:
            raise ConfigFileRefused(self.path, f"cannot be read ({error.strerror})") from None
        if size > MAX_CONFIG_BYTES:
            raise ConfigFileRefused(self.path, f"is larger than {MAX_CONFIG_BYTES} bytes")
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigFileRefused(self.path, f"cannot be read ({error})") from None
        self.original = text
        if text.strip():
            self.data = self._parse(text)
        return self

    def _parse(self, text: str) -> Any:
        if self.format == "toml":
            import tomlkit
            from tomlkit.exceptions import ParseError

            try:
                return tomlkit.parse(text)
            except ParseError as error:
                raise ConfigFileRefused(self.path, f"is not valid TOML ({error})") from None
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as error:
            raise ConfigFileRefused(self.path, f"is not valid JSON ({error})") from None
        if not isinstance(data, dict):
            raise ConfigFileRefused(self.path, "is not a JSON object")
        return data

    def apply(self, settings: tuple[Setting, ...]) -> None:
        """Make each change that is not there yet; refuse a key that is not a table."""
        for setting in settings:
            table = self._table(setting.keys[:-1])
            leaf = setting.keys[-1]
            if setting.how == "add":
                items = table.get(leaf)
                if items is None:
                    table[leaf] = [setting.value]
                elif not isinstance(items, list):
                    raise ConfigFileRefused(self.path, f"{dotted(setting.keys)} is not a list")
                elif setting.value in items:
                    continue
                else:
                    items.append(setting.value)
            elif ((setting.how == "default" and leaf in table)
                  or _plain(table.get(leaf)) == setting.value):
                continue  # the user's own value stays; ours is there already
            else:
                table[leaf] = setting.value
            self.changed.append(setting)

    def _table(self, keys: tuple[str, ...]) -> Any:
        table = self.data
        for depth, key in enumerate(keys, 1):
            if key not in table:
                table[key] = self._new_table()
            table = table[key]
            if not hasattr(table, "keys"):
                raise ConfigFileRefused(self.path, f"{dotted(keys[:depth])} is not a table")
        return table

    def _new_table(self) -> Any:
        if self.format == "toml":
            import tomlkit

            return tomlkit.table(is_super_table=True)  # no bare [a] header above [a.b]
        return {}

    def text(self) -> str:
        if self.format == "toml":
            import tomlkit

            return tomlkit.dumps(self.data)
        return json.dumps(self.data, indent=2, ensure_ascii=False) + "\n"

    def write(self) -> bool:
        """Replace the file with the changed document; False when nothing changed."""
        if not self.changed:
            return False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode = self.path.stat().st_mode & 0o777
        except FileNotFoundError:
            mode = None
        handle, temporary = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(self.text())
            if mode is not None:
                os.chmod(temporary, mode)
            else:
                os.chmod(temporary, 0o666 & ~_umask())
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return True


def _plain(value: Any) -> Any:
    """A tomlkit item as the plain value it stands for (JSON values are plain already)."""
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
