"""An agent's config file changed key by key, never losing what the user wrote there.

A file is checked and parsed once, before anything is written (``Document.read``): a
symbolic link is followed to the file it names (in project scope only to a file inside
the project), anything but a regular file (a FIFO, a directory) is refused without
blocking on it, and so is a file that cannot be parsed or whose keys on the way to ours
are not tables (``ConfigFileRefused``); every file's new text is rendered
(``Document.render``) before the first is written, so one bad file leaves all as they were.
A change is ``Setting``: an item added to a list, or a default set only where the user has
none (a value the user set stays, and is reported in ``kept``). The new text replaces the
file atomically (written beside the link's target, then renamed onto it, so the link
stays), in the file's own mode; an unchanged file is not rewritten, so installing twice
changes nothing. JSON goes through ``simplejson``: a number that would not come back as
written (``1e400``, ``1E5``, ``-0``) is kept as its own text (``RawJSON``), and a lone
surrogate escape (``"\\ud83d"``) is written back as the same escape. TOML goes through
``tomlkit``, so the user's comments and layout survive. A ``text`` file (an agent's
instructions in Markdown) gets a line appended unless the file already holds its marker,
the setting's one key.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from dsh_cli.core.errors import ConfigError
from dsh_cli.core.limits import AGENT_CONFIG_BYTES as MAX_CONFIG_BYTES

__all__ = ["ConfigFileRefused", "Document", "Setting", "dotted"]


Format = Literal["json", "toml", "text"]  # text: an instructions file, a line added

# a FIFO opened without O_NONBLOCK waits for a writer; Windows has neither flag
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
# a code point a JSON text can hold only as an escape: what survives of "\ud83d" after parsing
_SURROGATE = re.compile("[\ud800-\udfff]")


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
    how: Literal["add", "default"] = "default"


def dotted(keys: tuple[str, ...]) -> str:
    """``mcpServers.dsh.command``, as the messages name a key."""
    return ".".join(keys)


class Document:
    """One config file, parsed; ``apply`` the settings, ``render``, then ``write`` if changed.

    ``within``: the directory the file must stay in once its links are followed (the
    project, in project scope); None lets a link lead anywhere (the user's own dotfiles).
    """

    def __init__(self, path: Path, format: Format, *, within: Path | None = None) -> None:
        self.path = path
        self.format = format
        self.within = within
        self.target = path  # the file written: path, or the file its links lead to
        self.mode: int | None = None
        self.data: Any = self._empty()
        self.changed: list[Setting] = []
        self.kept: list[tuple[Setting, Any]] = []  # ours not set: the user's value is there
        self._text: bytes | None = None

    def _empty(self) -> Any:
        if self.format == "text":
            return ""
        if self.format == "toml":
            import tomlkit

            return tomlkit.document()
        return {}

    def read(self) -> Document:
        """Check and parse the file as it is (a missing one is an empty document)."""
        self.target = self._target()
        raw = self._read_bytes()
        if raw is None:
            return self
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ConfigFileRefused(self.path, f"is not UTF-8 ({error.reason} at byte "
                                               f"{error.start})") from None
        if text.strip():
            self.data = self._parse(text)
        return self

    def _target(self) -> Path:
        """Where the path's links lead; refused when that leaves ``within`` or is missing."""
        target = Path(os.path.realpath(self.path))
        if self.within is not None:
            root = Path(os.path.realpath(self.within))
            if not target.is_relative_to(root):
                raise ConfigFileRefused(self.path, f"is a link to {target}, outside the "
                                                   f"project {root}")
        if self.path.is_symlink() and not os.path.lexists(target):
            raise ConfigFileRefused(self.path, f"is a link to {target}, which does not exist")
        return target

    def _read_bytes(self) -> bytes | None:
        """The file's bytes, None if missing; never blocks (a FIFO is opened non-blocking)."""
        try:
            fd = os.open(self.target, _READ_FLAGS)
        except FileNotFoundError:
            return None
        except OSError as error:
            why = ("is a link that loops" if error.errno == errno.ELOOP
                   else f"cannot be read ({error.strerror})")
            raise ConfigFileRefused(self.path, why) from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise ConfigFileRefused(self.path, f"is {_kind(info.st_mode)}, not a regular file")
            if info.st_size > MAX_CONFIG_BYTES:
                raise ConfigFileRefused(self.path, f"is larger than {MAX_CONFIG_BYTES} bytes")
            self.mode = info.st_mode & 0o777
            with os.fdopen(fd, "rb", closefd=False) as stream:
                return stream.read(MAX_CONFIG_BYTES + 1)
        except OSError as error:
            raise ConfigFileRefused(self.path, f"cannot be read ({error.strerror})") from None
        finally:
            os.close(fd)

    def _parse(self, text: str) -> Any:
        if self.format == "text":
            return text
        if self.format == "toml":
            import tomlkit
            from tomlkit.exceptions import ParseError

            try:
                return tomlkit.parse(text)
            except ParseError as error:
                raise ConfigFileRefused(self.path, f"is not valid TOML ({error})") from None
        import simplejson

        def constant(name: str) -> Any:
            raise ValueError(f"{name} is not JSON")  # what JSON.parse would refuse too

        try:
            data = simplejson.loads(text, parse_float=_float, parse_int=_int,
                                    parse_constant=constant)
        except (ValueError, RecursionError) as error:
            raise ConfigFileRefused(self.path, f"is not valid JSON ({error})") from None
        if not isinstance(data, dict):
            raise ConfigFileRefused(self.path, "is not a JSON object")
        return data

    def apply(self, settings: tuple[Setting, ...]) -> None:
        """Make each change that is not there yet; refuse a key that is not a table."""
        if self.format == "text":
            self._append(settings)
            return
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
            elif leaf in table:
                # the user's own value stays, whatever dsh wrote before: dsh cannot tell
                # a value it wrote from the same value typed by hand
                if _plain(table[leaf]) != setting.value:
                    self.kept.append((setting, _plain(table[leaf])))
                continue
            else:
                table[leaf] = setting.value
            self.changed.append(setting)

    def _append(self, settings: tuple[Setting, ...]) -> None:
        """Each line whose marker (its key) the text lacks, as a paragraph of its own."""
        for setting in settings:
            if setting.keys[-1] in self.data:
                continue
            text = self.data.rstrip("\n")
            self.data = (f"{text}\n\n" if text.strip() else "") + f"{setting.value}\n"
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
        if self.format == "text":
            return str(self.data)
        if self.format == "toml":
            import tomlkit

            return tomlkit.dumps(self.data)
        import simplejson

        text = simplejson.dumps(self.data, indent=2, ensure_ascii=False)
        # a lone surrogate can only sit in a string, where its escape means the same
        return _SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text) + "\n"

    def render(self) -> None:
        """The new bytes, made before any file is written; refused if they cannot be."""
        if not self.changed:
            return
        try:
            self._text = self.text().encode("utf-8")
        except (ValueError, TypeError, RecursionError) as error:
            raise ConfigFileRefused(self.path, f"cannot be written back ({error})") from None

    def write(self) -> bool:
        """Replace the file (through its links) with the rendered text; False if unchanged."""
        if not self.changed:
            return False
        if self._text is None:
            self.render()
        assert self._text is not None
        try:
            self._replace(self._text)
        except OSError as error:
            raise ConfigFileRefused(self.path, f"cannot be written ({error.strerror})") from None
        return True

    def _replace(self, text: bytes) -> None:
        self.target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{self.target.name}.",
                                             dir=self.target.parent)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(text)
            os.chmod(temporary, self.mode if self.mode is not None else 0o666 & ~_umask())
            os.replace(temporary, self.target)  # onto the link's target: the link stays
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


def _float(text: str) -> Any:
    """A JSON number with a fraction or exponent: a float only if it prints back as written."""
    number = float(text)
    if repr(number) == text:
        return number
    import simplejson

    return simplejson.RawJSON(text)  # 1e400 is not Infinity, 1E5 stays 1E5


def _int(text: str) -> Any:
    """A JSON integer: an int, but for what int would not print back as written."""
    if text == "-0" or len(text) > 4000:  # Python refuses ints of over 4300 digits
        import simplejson

        return simplejson.RawJSON(text)
    return int(text)


def _kind(mode: int) -> str:
    """What a file that is not a regular one is, for the message."""
    kinds = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISDIR, "a directory"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
    return next((name for test, name in kinds if test(mode)), "a special file")


def _plain(value: Any) -> Any:
    """A tomlkit item or kept JSON number as the plain value it stands for."""
    unwrap = getattr(value, "unwrap", None)
    if callable(unwrap):
        return unwrap()
    encoded = getattr(value, "encoded", None)
    if isinstance(encoded, str):
        import simplejson

        return simplejson.loads(encoded)
    return value


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
