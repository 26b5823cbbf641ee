"""What a rule's ``Tool(specifier)`` covers, in Claude Code's syntax, for tools that are not Bash.

Claude Code's permission page (code.claude.com/docs/en/permissions, "Read & Edit" and
"WebFetch") is the reference:

- ``Read(PATH)`` and ``Edit(PATH)`` follow the gitignore specification, read by
  ``pathspec``; ``//abs/path`` is absolute, ``~/path`` is in the home folder, ``/path`` is
  in the project root, ``path`` and ``./path`` are in the working directory. A pattern
  without an inner ``/`` (``.env``, ``*.pem``) matches at any depth, as in a ``.gitignore``.
- A Read rule applies to every tool that reads files (Read, NotebookRead, Grep, Glob, LS),
  an Edit rule to every tool that writes them (Edit, MultiEdit, Write, NotebookEdit). A
  search (Grep, Glob, LS) reads a whole folder: a deny or ask rule covers it when the
  folder, or anything in it, matches; an allow rule only when the folder itself does.
- ``WebFetch(domain:HOST)`` covers a fetch of a URL whose host is HOST (the URL parsed as
  browsers parse it); as a deny or ask rule, HOST's subdomains too.
- ``Tool(*)`` is ``Tool``. ``Bash(rm *)`` (a space and a last ``*``) is ``Bash(rm:*)``,
  any other ``*`` in a Bash rule is one dsh does not read.

A specifier dsh does not read is never taken as matching nothing: a deny or ask rule then
covers the whole tool, an allow rule covers nothing (``problem`` names it for the warning).
Where a path can be read two ways (the project root is the repository's root or the
working directory; a path and the file its links lead to), deny and ask apply when any
reading matches and allow only when every one does, like ambiguous MCP names in ``rules``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

__all__ = ["EDITORS", "READERS", "SPECIFIED", "bash_command", "covers", "names_family", "problem",
           "split"]

SPECIFIED = re.compile(r"([A-Za-z0-9_.-]+)\((.*)\)", re.S)  # ``Tool(specifier)``

# the tool a Read or Edit rule names -> the argument holding the path, per Claude Code tool
READERS = {"Read": "file_path", "NotebookRead": "notebook_path", "Grep": "path",
           "Glob": "path", "LS": "path"}
EDITORS = {"Edit": "file_path", "MultiEdit": "file_path", "Write": "file_path",
           "NotebookEdit": "notebook_path"}
_FAMILIES = {"Read": READERS, "Edit": EDITORS}
_SEARCHES = frozenset({"Grep", "Glob", "LS"})  # each reads a folder, not one file
_GLOB_CHARS = re.compile(r"[*?\[]")
_HOST = re.compile(r"(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*"
                   r"[A-Za-z0-9])?)*\.?")
MAX_WALK = 10_000  # entries of a searched folder looked at; past this it may hold anything


def split(rule: str) -> tuple[str, str | None]:
    """``Tool(specifier)`` as its tool and specifier; a plain rule with no specifier."""
    found = SPECIFIED.fullmatch(rule)
    return (found.group(1), found.group(2)) if found else (rule, None)


def names_family(rule: str, tool: str) -> bool:
    """Whether the plain rule ``Read`` or ``Edit`` names ``tool`` (Grep reads, Write edits)."""
    return tool in _FAMILIES.get(rule, ())


def bash_command(spec: str) -> str:
    """A Bash specifier in the form the command matcher reads: ``rm *`` is ``rm:*``."""
    stripped = spec.strip()
    if stripped.endswith(" *") and stripped.count("*") == 1:
        return stripped[:-2].rstrip() + ":*"
    return spec


def covers(name: str, spec: str, tool: str, arguments: Mapping[str, Any] | None, *,
           every: bool) -> bool | None:
    """Whether the rule ``name(spec)`` covers this call of ``tool``; None for a Bash rule
    the command matcher reads (``rules``)."""
    if name == "Bash" and (tool != "Bash" or _bash_readable(spec)):
        return None
    if (name == tool and name not in (*_FAMILIES, "Bash", "WebFetch")
            and isinstance(arguments, Mapping) and isinstance(arguments.get("command"), str)):
        return None  # another tool that runs a command (an MCP shell): read as a Bash rule
    family = _FAMILIES.get(name)
    if tool != name and (family is None or tool not in family):
        return False
    if spec.strip() == "*":
        return True
    if problem(name, spec) is not None or (name != "WebFetch" and family is None):
        return not every  # unreadable: the whole tool for deny and ask, nothing for allow
    arguments = arguments if isinstance(arguments, Mapping) else {}  # raw text: no fields
    if family is None:
        return _covers_url(spec.strip()[len("domain:"):], arguments.get("url"), every=every)
    return _covers_path(spec.strip(), tool, family[tool], arguments, every=every)


def problem(name: str, spec: str, *, runs_commands: bool = False) -> str | None:
    """Why dsh cannot read ``spec`` as a specifier of ``name``, and what it takes; None: it can."""
    text = spec.strip()
    if text == "*":
        return None
    if name == "Bash":
        if not text:
            return "has an empty command"
        return None if _bash_readable(spec) else (
            "has a '*' dsh does not read: write 'Bash(CMD)' for that command, "
            "'Bash(CMD *)' or 'Bash(CMD:*)' for any command starting with it")
    if name in _FAMILIES:
        if not text or text.startswith(("!", "#")) or _compiled(_pattern(text)) is None:
            return f"has a path dsh does not read: {name} takes a gitignore pattern"
        if text.startswith("/") and not text.startswith("//"):
            head = text.lstrip("/").split("/", 1)[0]
            if head and os.path.isdir("/" + head) and not any(
                    os.path.exists(os.path.join(root, head)) for root in _project_roots()):
                return (f"names '/{head}' in the project root (an absolute path is "
                        f"written '//{text.lstrip('/')}')")
        return None
    if name == "WebFetch":
        host = text[len("domain:"):] if text.startswith("domain:") else ""
        return None if host and _HOST.fullmatch(host) else (
            "has a specifier dsh does not read: WebFetch takes 'domain:HOST'")
    if runs_commands and _bash_readable(spec):
        return None  # an MCP tool whose input has a ``command``: read as Bash's
    for family, members in _FAMILIES.items():
        if name in members:
            return f"has a specifier dsh does not read: did you mean '{family}({text})'?"
    return "has a specifier dsh does not read"


def _bash_readable(spec: str) -> bool:
    """Whether the command matcher reads ``spec``: no ``*`` but a last ``:*`` or `` *``."""
    command = bash_command(spec).strip()
    body = command[:-2] if command.endswith(":*") else command
    return bool(body.strip()) and "*" not in body


def _covers_url(domain: str, url: Any, *, every: bool) -> bool:
    """Whether ``url``'s host is ``domain`` (deny and ask: or one of its subdomains)."""
    import ada_url

    from dsh_cli.core.text import scrub_surrogates

    if not isinstance(url, str):
        return not every  # no URL to read: a deny rule still holds
    try:
        host = ada_url.URL(scrub_surrogates(url)).hostname
    except ValueError:
        return not every
    host, domain = host.lower().rstrip("."), domain.lower().rstrip(".")
    if domain.startswith("*."):
        return host.endswith(domain[1:])
    return host == domain or (not every and host.endswith("." + domain))


def _covers_path(pattern: str, tool: str, key: str, arguments: Mapping[str, Any], *,
                 every: bool) -> bool:
    """Whether the path ``tool`` reads or writes (or the folder it searches) matches."""
    target = arguments.get(key)
    cwd = os.getcwd()  # dsh's agent and approve_tool_use both run in the agent's folder
    if tool in _SEARCHES and target is None:
        target = cwd  # Grep and Glob search the working directory when given no path
    if tool == "Glob" and isinstance(target, str):
        target = _glob_root(arguments.get("pattern"), target)
    if not isinstance(target, str) or not target.strip() or "\0" in target:
        return not every  # nothing to read the rule against: deny holds, allow does not
    path = os.path.normpath(os.path.join(cwd, os.path.expanduser(target)))
    search = tool in _SEARCHES and not every  # allow: the folder itself must match
    readings = [_under(spec, base, each) or (search and _inside(spec, base, anchor, each))
                for base, anchor, spec in _specs(pattern)
                for each in {path, os.path.realpath(path)}]
    return all(readings) if every else any(readings)


def _specs(pattern: str) -> Iterator[tuple[str, str, Any]]:
    """``pattern`` compiled, with each base folder it is read against and its anchor there
    (the base joined with the pattern's leading plain folders: nothing else can match)."""
    relative = _pattern(pattern)
    spec = _compiled(relative)
    head: list[str] = []
    if "/" in relative.rstrip("/"):  # anchored, as gitignore reads an inner slash
        for part in relative.strip("/").split("/"):
            if _GLOB_CHARS.search(part) or part == "**":
                break
            head.append(part)
    for base in _bases(pattern):
        yield base, os.path.join(base, *head), spec


def _bases(pattern: str) -> list[str]:
    """The folders ``pattern`` is relative to (two for ``/path`` when the roots differ)."""
    if pattern.startswith("//"):
        return ["/"]
    if pattern == "~" or pattern.startswith("~/"):
        return [os.path.expanduser("~")]
    if pattern.startswith("/"):
        return _project_roots()
    return [os.getcwd()]


def _pattern(pattern: str) -> str:
    """The gitignore pattern relative to its base: anchored (``/x``) for the rooted forms;
    a bare base (``//``, ``~``, ``./``) is everything in it."""
    if pattern == "~":
        return "**"
    if pattern.startswith(("//", "~/")):
        pattern = pattern[1:]
    elif pattern.startswith("./"):
        pattern = pattern[2:]
    return pattern if pattern.strip("/") else "**"


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> Any:
    """``pattern`` as a gitignore spec, or None when pathspec cannot read it."""
    import pathspec

    try:
        return pathspec.GitIgnoreSpec.from_lines([pattern])
    except (ValueError, TypeError):
        return None


def _project_roots() -> list[str]:
    """The project root two ways: the repository holding the working directory, and it."""
    cwd = os.getcwd()
    folder = cwd
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return [folder] if folder == cwd else [folder, cwd]
        parent = os.path.dirname(folder)
        if parent == folder:
            return [cwd]
        folder = parent


def _relative(base: str, path: str) -> str | None:
    """``path`` relative to ``base``; None when it lies outside (or is ``base`` itself)."""
    relative = os.path.relpath(path, base)
    if relative == "." or relative == ".." or relative.startswith("../"):
        return None
    return relative


def _under(spec: Any, base: str, path: str) -> bool:
    relative = _relative(base, path)
    return relative is not None and spec.match_file(relative)


def _inside(spec: Any, base: str, anchor: str, folder: str) -> bool:
    """Whether anything in ``folder`` matches: the entries walked (links not followed) from
    where the two meet, up to ``MAX_WALK``; a folder with more may hold anything."""
    if _relative(anchor, folder) is not None or folder == anchor:
        start = folder
    elif _relative(folder, anchor) is not None:
        start = anchor  # the search holds the rule's whole folder: look only there
        if os.path.lexists(start) and _under(spec, base, start):
            return True
    else:
        return False  # the rule's folder and this one are apart: nothing in common
    seen = 0
    for root, dirs, files in os.walk(start, followlinks=False):
        for name in (*dirs, *files):
            seen += 1
            if seen > MAX_WALK or _under(spec, base, os.path.join(root, name)):
                return True
    return False


def _glob_root(pattern: Any, path: str) -> str:
    """The folder a Glob reads: its ``path`` joined with the pattern's leading plain part."""
    if not isinstance(pattern, str):
        return path
    head: list[str] = []
    for part in os.path.expanduser(pattern).split("/"):
        if _GLOB_CHARS.search(part):
            break
        head.append(part)
    else:
        head = head[:-1]  # no wildcard: the last part names a file of that folder
    joined = "/".join(head)
    if pattern.startswith("/") and not joined:
        joined = "/"
    return os.path.join(path, joined) if joined else path
