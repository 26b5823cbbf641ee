"""What a project's stdio server entry runs inside the project: the files its trust covers.

Nothing is run to find out: the entry is read the way the process that starts would read it.

- The command: a path is taken from the entry's ``cwd``; a bare name is looked up on the
  entry's own ``PATH`` (its ``env``, else dsh's), a relative directory from the entry's
  ``cwd``, the first executable file winning, as ``exec`` does.
- Every argument that names a file (``node server.js``, ``bash run.sh``).
- Python (``python``, ``python3``, ``python3.12`` …): ``-m pkg`` covers the top-level
  package (its whole directory) or module found first on the entry's ``cwd`` then its
  ``PYTHONPATH`` (neither under ``-I``, ``-E``/``-P`` as Python reads them); a directory
  covers its whole tree (its ``__main__.py`` and the modules beside it); a script, the
  modules it imports from its folder or ``PYTHONPATH`` (through module files; a package
  found is covered whole); ``-c CODE``, the modules it imports and the files its string
  literals name.
- A shell's ``-c STRING`` (sh, bash, dash, zsh, ksh), and a shell script of the project:
  split with ``shlex`` into simple commands at ``;``, ``&&``, ``|``, newlines …, each read
  as above, after its ``VAR=value`` words (``PATH=./bin srv``), wrappers (``exec``,
  ``env``, ``nohup`` …) and a ``cd DIR`` before it.
- A script of the project with a ``#!`` line naming Python or a shell: read as one.

What it cannot follow (a ``$`` expansion or glob in a shell string, a string ``shlex``
cannot split, more than it reads) is said in ``Runs.gaps``; what a program loads, opens or
downloads as it runs beyond these is never covered (``docs/internals.md``).
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dsh_cli.core.limits import TRUST_PARSED_BYTES as _PARSED_BYTES

if TYPE_CHECKING:
    from dsh_cli.mcp_client.config.servers import ServerConfig

__all__ = ["Runs", "entry_runs"]

# what the SDK's stdio client passes a server of dsh's own environment (its
# DEFAULT_INHERITED_ENV_VARS), the entry's ``env`` on top: named here so the SDK is not
# imported to read a config
INHERITED = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash"})
_PYTHON = re.compile(r"^python(\d+(\.\d+)*)?[tdm]?(-dbg)?$")
# a shell string's operators: each ends a simple command (a redirection takes the next word)
_OPERATORS = ";&|()<>\n"
_REDIRECTIONS = frozenset({"<", ">", ">>", "<<", "<<<", ">&", "<&", "<>", ">|", "&>", "&>>"})
# what a shell expands when it runs: the words it makes are unknown beforehand
_EXPANSIONS = re.compile(r"[$`*?\[]|^~")
# wrappers that run the rest of their words as a command, with their own options to skip
_WRAPPERS = frozenset({"exec", "command", "builtin", "nohup", "env", "nice", "setsid",
                       "timeout"})
_NESTED = 4  # shell strings inside shell strings followed, at most
_PY_SUFFIXES = (".py", ".pyc", ".pyw", ".so", ".abi3.so")
# a script's imports followed through module files: so many files, each up to so many bytes
_PARSED = 200


@dataclass
class Runs:
    """What an entry runs inside the project: files and whole directories, and what not."""

    files: set[Path] = field(default_factory=set)
    trees: set[Path] = field(default_factory=set)
    gaps: list[str] = field(default_factory=list)


def entry_runs(server: ServerConfig, root: Path, cwd: Path,
               environ: Mapping[str, str]) -> Runs:
    """What starting ``server`` (a stdio entry of ``cwd/.mcp.json``) runs inside ``root``."""
    runs = Runs()
    if server.command is None:
        return runs
    env = {key: environ[key] for key in INHERITED if key in environ} | dict(server.env)
    base = Path(os.path.abspath(cwd / server.cwd if server.cwd else cwd))
    _Reader(runs, root, Path(os.path.abspath(cwd))).command(
        [server.command, *server.args], base, env, 0)
    return runs


class _Reader:
    """One entry's reading: where the project is, and what was found so far."""

    def __init__(self, runs: Runs, root: Path, here: Path) -> None:
        self.runs, self.root, self.here = runs, root, here

    def inside(self, path: Path) -> bool:
        """Whether ``path`` (absolute, as spelled) is in the project, or a link into it."""
        try:
            return path.is_relative_to(self.here) or path.resolve().is_relative_to(self.root)
        except (OSError, RuntimeError, ValueError):
            return False

    def file(self, path: Path) -> None:
        if self.inside(path) and _kind(path) == "file":
            self.runs.files.add(path)

    def tree(self, path: Path) -> None:
        if self.inside(path):
            self.runs.trees.add(path)

    def command(self, words: list[str], base: Path, env: dict[str, str], depth: int) -> None:
        """One command line as ``exec`` would start it from ``base`` with ``env``."""
        words = [word for word in words if "\0" not in word]
        if not words or not words[0]:
            return
        program = _which(words[0], base, env)
        if program is not None:
            self.file(program)
        name = os.path.basename(words[0])
        args = words[1:]
        for word in args:  # an argument naming a file: a script, a config it reads
            if word and not word.startswith("-"):
                self.file(Path(os.path.abspath(base / word)))
        if name in _WRAPPERS:
            rest, env = _unwrapped(name, args, env)
            self.command(rest, base, env, depth)
        elif _PYTHON.match(name):
            self.python(args, base, env)
        elif name in SHELLS:
            kind, target = _shell_target(args)
            if kind == "string":
                self.shell(target, base, env, depth)
            elif kind == "script":
                self.script(Path(os.path.abspath(base / target)), base, env, depth)
        elif program is not None and program in self.runs.files:
            # a script of the project's run through its #! line: read as its interpreter would
            interpreter = _shebang(program)
            if interpreter and _PYTHON.match(os.path.basename(interpreter[0])):
                self.python([*interpreter[1:], str(program), *args], base, env)
            elif interpreter and os.path.basename(interpreter[0]) in SHELLS:
                self.script(program, base, env, depth)

    def _parsed(self, path: Path, what: str) -> bytes | None:
        """``path``'s bytes to read for what it runs; None (and the gap said) over the cap."""
        text = _head(path, _PARSED_BYTES + 1)
        if text is not None and len(text) > _PARSED_BYTES:
            self.runs.gaps.append(f"{path.name} is over {_PARSED_BYTES // 1024} KiB: the "
                                  f"{what} are not read")
            return None
        return text

    def script(self, path: Path, base: Path, env: dict[str, str], depth: int) -> None:
        """A shell script of the project: its commands, read as a ``-c`` string's are."""
        if path not in self.runs.files:
            return
        text = self._parsed(path, "commands it runs")
        if text is None:
            return
        self.shell(text.decode("utf-8", "replace"), base, env, depth, what=path.name)

    def python(self, args: list[str], base: Path, env: dict[str, str]) -> None:
        """What ``python ARGS`` runs from ``base``: a module's package, a directory, code."""
        kind, target, flags = _python_target(args)
        if target is None:
            return
        ignore_env = bool(flags & {"E", "I"})
        safe = bool(flags & {"P", "I"}) or (not ignore_env and bool(env.get("PYTHONSAFEPATH")))
        extra = [] if ignore_env else [base / part if part else base
                                       for part in env.get("PYTHONPATH", "").split(":") if part]
        if kind == "script":
            script = Path(os.path.abspath(base / target))
            if _kind(script) == "dir":  # a directory (or its __main__.py) and all beside it
                self.tree(script)
                return
            # the script's own folder comes first on its path: the modules it imports there
            search = [Path(os.path.abspath(entry))
                      for entry in ([] if safe else [script.parent]) + extra]
            self.imports([script], search, base)
            return
        search = [Path(os.path.abspath(entry)) for entry in ([] if safe else [base]) + extra]
        before = set(self.runs.files)
        if kind == "module":
            self.module(target, search)
        else:
            self.source(target, search, base, strings=True)
        self.imports(sorted(self.runs.files - before), search, base)

    def imports(self, pending: list[Path], search: list[Path], base: Path) -> None:
        """What these module files import, and those theirs, as far as they are module
        files in the project (a package found is covered whole, so not read)."""
        read: set[Path] = set()
        while pending and len(read) < _PARSED:
            path = pending.pop()
            if path in read or path not in self.runs.files or path.suffix != ".py":
                continue
            read.add(path)
            code = self._parsed(path, "modules it imports")
            if code is None:
                continue
            before = set(self.runs.files)
            self.source(code, search, base)
            pending += sorted(self.runs.files - before)
        if set(pending) - read:
            self.runs.gaps.append(f"it imports more than {_PARSED} module files: what the "
                                  "later ones import is not read")

    def source(self, code: str | bytes, search: list[Path], base: Path, *,
               strings: bool = False) -> None:
        """What Python source imports (absolute imports), and with ``strings`` the files its
        string literals name (``-c "exec(open('srv.py').read())"``; a module's own strings
        are more often data it writes, which would undo the trust each run)."""
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return  # Python refuses it too: it runs nothing
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    self.module(alias.name, search)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                self.module(node.module, search)
            elif strings and isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                    0 < len(node.value) < 4096 and "\0" not in node.value):
                self.file(Path(os.path.abspath(base / node.value)))

    def module(self, dotted: str, search: list[Path]) -> None:
        """The top-level package or module of ``dotted`` as Python's path finder finds it."""
        top = dotted.split(".")[0]
        if not top.isidentifier():
            return
        portions = []
        for entry in search:
            package = entry / top
            if _kind(package) == "dir":
                if any(_kind(package / f"__init__{suffix}") == "file" for suffix in _PY_SUFFIXES):
                    self.tree(package)
                    return
                portions.append(package)  # a namespace portion, unless a module wins
            for suffix in _PY_SUFFIXES:
                if _kind(entry / f"{top}{suffix}") == "file":
                    self.file(entry / f"{top}{suffix}")
                    return
        for portion in portions:
            self.tree(portion)

    def shell(self, string: str, base: Path, env: dict[str, str], depth: int, *,
              what: str = "") -> None:
        """Each simple command of a shell's ``-c`` string (or, ``what``, of a script)."""
        label = what or "its shell string"
        if depth >= _NESTED:
            self.runs.gaps.append(f"{label} nests shells deeper than {_NESTED}: the inner "
                                  "ones are not read")
            return
        lexer = shlex.shlex(string.replace("\n", "\n;") if what else string, posix=True,
                            punctuation_chars=_OPERATORS)
        lexer.whitespace = " \t\r"  # a newline ends a command, as ';' does
        lexer.whitespace_split = True
        # in a -c string words stay whole; a script's comments go (an apostrophe in one
        # would open a quote), and the ';' put after each newline survives the comment
        lexer.commenters = "#" if what else ""
        try:
            tokens = list(lexer)
        except ValueError:
            self.runs.gaps.append(f"{label} cannot be split into words (an open quote?): "
                                  "what it runs is not read")
            return
        if any(_expands(token) for token in tokens):
            self.runs.gaps.append(f"{label} has $, `, ~ or glob characters, expanded only "
                                  "when it runs: the files they name are not covered")
        words: list[str] = []
        skip = False
        for token in [*tokens, ";"]:
            if skip:
                skip = False
                continue
            if token and all(char in _OPERATORS for char in token):
                if token in _REDIRECTIONS:
                    skip = True  # the file redirected to or from is no command
                    continue
                base = self.simple(words, base, env, depth)
                words = []
                continue
            words.append(token)

    def simple(self, words: list[str], base: Path, env: dict[str, str], depth: int) -> Path:
        """One simple command of a shell string; the directory the next one starts in."""
        own = dict(env)
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            key, _, value = words.pop(0).partition("=")
            own[key] = value
        if not words:
            env.update(own)  # `PATH=./bin; srv`: the shell's own variable from now on
            return base
        if words[0] == "cd" and len(words) == 2:
            return Path(os.path.abspath(base / words[1]))
        if words[0] in (".", "source") and len(words) >= 2:
            self.file(Path(os.path.abspath(base / words[1])))
            return base
        self.command(words, base, own, depth + 1)
        return base


def _kind(path: Path) -> str:
    """"file", "dir" or "" (neither, or nothing there), following links."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return ""
    return "file" if stat.S_ISREG(mode) else "dir" if stat.S_ISDIR(mode) else ""


def _which(program: str, base: Path, env: Mapping[str, str]) -> Path | None:
    """The file ``exec`` runs for ``program`` started in ``base`` with ``env``, if any."""
    if "/" in program:
        return Path(os.path.abspath(base / program))
    # as subprocess does: each PATH entry in turn, an empty one the cwd, relative ones from
    # the cwd the child changed to; a file that is not executable is passed over
    for entry in env.get("PATH", os.defpath).split(os.pathsep):
        found = Path(os.path.abspath(base / (entry or ".") / program))
        if _kind(found) == "file" and os.access(found, os.X_OK):
            return found
    return None


def _unwrapped(name: str, args: list[str], env: dict[str, str]
               ) -> tuple[list[str], dict[str, str]]:
    """The command a wrapper (``exec``, ``env`` …) runs, and the environment it gets."""
    env = dict(env)
    rest = list(args)
    takes = {"exec": {"-a"}, "nice": {"-n"}, "env": {"-u", "-C", "-S"},
             "timeout": {"-s", "-k"}}.get(name, set())
    while rest:
        word = rest[0]
        if word == "--":
            rest.pop(0)
            break
        if name == "env" and word in ("-i", "-", "--ignore-environment"):
            env = {}
        elif name == "env" and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word):
            key, _, value = word.partition("=")
            env[key] = value
        elif not word.startswith("-"):
            break
        rest.pop(0)
        if word in takes and rest:
            rest.pop(0)
    if name == "timeout" and rest:
        rest.pop(0)  # the duration
    return rest, env


def _shell_target(args: list[str]) -> tuple[str, str]:
    """What ``sh [OPTIONS] …`` runs: ("string", STRING) with ``-c``, ("script", PATH), or
    ("", "") (commands on stdin)."""
    with_c = False
    index = 0
    while index < len(args):
        word = args[index]
        if word == "--":
            index += 1
            break
        if word in ("-o", "+o", "-O", "+O"):
            index += 2
            continue
        if len(word) > 1 and word[0] in "-+" and not word.startswith("--"):
            with_c = with_c or (word[0] == "-" and "c" in word[1:])
            index += 1
            continue
        if word.startswith("--"):  # bash's long options (--login, --norc …) take no value
            index += 1
            continue
        break
    if index >= len(args):
        return "", ""
    return ("string" if with_c else "script"), args[index]


def _expands(word: str) -> bool:
    """Whether a shell word holds an expansion or a glob (``[`` alone is the test command)."""
    return word not in ("[", "]", "[[", "]]") and bool(_EXPANSIONS.search(word))


def _head(path: Path, limit: int) -> bytes | None:
    """Up to ``limit`` bytes of a regular file (opened without waiting: never a FIFO's)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        chunks, left = [], limit
        while left > 0 and (chunk := os.read(descriptor, min(left, 1024 * 1024))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(descriptor)


def _shebang(path: Path) -> list[str]:
    """The interpreter and its arguments that a ``#!`` line names (through ``env``)."""
    head = _head(path, 256)
    if head is None or not head.startswith(b"#!"):
        return []
    words = head[2:].split(b"\n")[0].decode("utf-8", "replace").split()
    if words and os.path.basename(words[0]) == "env":
        words = [word for word in words[1:] if not word.startswith("-") and "=" not in word]
    return words


def _python_target(args: list[str]) -> tuple[str, str | None, set[str]]:
    """What ``python ARGS`` runs: ("module", name), ("code", source) or ("script", path),
    and the one-letter options before it, as Python's own option parser reads them."""
    flags: set[str] = set()
    index = 0
    while index < len(args):
        word = args[index]
        if word == "--":
            index += 1
            break
        if word == "--check-hash-based-pycs":
            index += 2
            continue
        if word.startswith("--") or word == "-":
            return "script", None, flags  # stdin, --help, --version: nothing in the project
        if not word.startswith("-"):
            break
        for at, letter in enumerate(word[1:], start=1):
            if letter in "cmWX":
                attached = word[at + 1:]
                value = attached or (args[index + 1] if index + 1 < len(args) else None)
                index += 1 if attached else 2
                if letter == "c":
                    return "code", value, flags
                if letter == "m":
                    return "module", value, flags
                break
            flags.add(letter)
        else:
            index += 1
    return "script", (args[index] if index < len(args) else None), flags
