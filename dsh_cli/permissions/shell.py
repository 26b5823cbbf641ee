"""A Bash command read the way the shell reads it, for rules like ``Bash(git status:*)``.

``read_command`` splits a command into its simple commands and their words, quotes and
backslashes removed as a POSIX shell removes them (``$'…'`` decoded, braces expanded as bash
expands them). Every place one command can start another is a boundary: ``;``, ``&``,
``|``, ``&&``, ``||``, ``|&``, newlines, carriage returns, ``(`` and ``)``, ``{`` and ``}``
opening and closing a group, a redirection (its target is no word of the command), a ``#``
comment. The commands inside ``$(…)``, backticks, ``<(…)``, ``>(…)`` and zsh's ``=(…)``,
also within double quotes and ``${…}``, are read as commands of their own, and so is the
text of ``eval …``, ``bash -c STRING``, ``sh -ec …``.

Python's ``shlex`` (even with ``punctuation_chars``) loses what a rule needs: it takes a
new line for a space, ``'&&'`` for the operator, keeps ``"$(rm x)"`` as one harmless word,
leaves backticks in words and ``\\<newline>`` in place; hence this reader.

``covers`` applies one rule's specifier:

- **deny and ask** (``every=False``) match when any command of the reading matches: its
  words start with the rule's after ``NAME=value`` assignments, reserved words (``if``,
  ``!``, ``{`` …) and words of expansions only (``$()`` may leave no word), the program
  named by its path's last part (``/bin/rm`` is ``rm``); after a program that runs another
  (``sudo``, ``env``, ``xargs``, ``find -exec`` …) the rule's words may start at any later
  word. A command that cannot be read matches when the rule's first word appears in it as a
  word once quotes and backslashes are deleted: a deny rule never fails open on a command
  nobody can read.
- **allow** (``every=True``) covers a command only when it is one simple command (nothing
  chained, nested, redirected or commented), every word a plain literal read alike by bash,
  zsh, dash and fish, and its words start with the rule's exactly. Anything else is asked.

A deny rule is a guard against the usual spellings, not a sandbox: a program name built at
run time (``$x``, a glob, ``$(echo rm)``) or run by another program's own means is not
matched; such a command is never plain, so no allow rule covers it and it is asked.
"""

from __future__ import annotations

import functools
import itertools
import posixpath
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass

from dsh_cli.core.limits import COMMAND_CHARACTERS as MAX_COMMAND

__all__ = ["MAX_COMMAND", "Reading", "covers", "read_command"]

# unquoted characters every one of bash, zsh, dash and fish takes literally
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:,+%@=")
_OPERATORS = frozenset(";&|()<>\n\r")
# control characters a reader cannot trust (tab, newline, carriage return are read)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x80-\x9f]")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=.*", re.S)
# words the grammar puts before a command: the command starts after them
_RESERVED = frozenset({"!", "{", "}", "if", "then", "elif", "else", "fi", "do", "done",
                       "while", "until", "coproc", "esac", "-"})
# programs that run the command given in their arguments
_RUNNERS = frozenset({"sudo", "doas", "env", "command", "builtin", "exec", "nohup", "nice",
                      "ionice", "timeout", "xargs", "stdbuf", "setsid", "chroot", "time",
                      "noglob", "nocorrect", "strace", "ltrace", "flock", "watch", "unbuffer",
                      "chrt", "taskset", "caffeinate", "script", "su", "runuser", "parallel"})
_FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "busybox"})
_SHORT_C = re.compile(r"-[A-Za-z]*c[A-Za-z]*")  # a shell's options that include -c
_DEPTH = 8  # nested substitutions and -c strings read at most this deep
_EXPANDS_QUOTED = re.compile(r"[$`\\!]")  # what some shell expands inside double quotes
_LITERAL_RUN = re.compile(r"[A-Za-z0-9_./:+@-]+")  # safe anywhere in a word, no brace
_ANSI = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
         "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_OCTAL = re.compile("[0-7]{1,3}")
_ANSI_NUMBER = {"x": re.compile("[0-9a-fA-F]{1,2}"), "u": re.compile("[0-9a-fA-F]{1,4}"),
                "U": re.compile("[0-9a-fA-F]{1,8}")}


@dataclass(frozen=True)
class Reading:
    """A command as the shell reads it: its simple commands' words, and what it holds."""

    commands: tuple[tuple[str, ...], ...]  # every simple command, nested ones included
    simple: bool  # one simple command: nothing chained, nested, redirected or commented
    plain: bool  # every word is a plain literal in bash, zsh, dash and fish alike
    problem: str | None = None  # why it cannot be read (then ``commands`` is empty)
    # per command, the words made only of unquoted expansions: ``$()`` or ``$x`` may be empty
    # and then no word at all, so the command may start after them
    vanishing: tuple[frozenset[int], ...] = ()


class _Unreadable(Exception):
    """The command cannot be read: unbalanced quotes, a here-document, a control character."""


@dataclass
class _Budget:
    """What one reading may still spend: a hostile command is unreadable, never slow."""

    chars: int = 4 * MAX_COMMAND  # the command's and every nested string's characters
    nested: int = 64  # ``eval`` and ``-c`` strings read
    words: int = 4096  # words made by brace expansion


class _Reader:
    """One pass over ``text``; nested text (backticks, ``-c`` strings) gets its own reader."""

    def __init__(self, text: str, commands: list[tuple[str, ...]], depth: int = 0,
                 budget: _Budget | None = None) -> None:
        if depth > _DEPTH:
            raise _Unreadable("nested too deep")
        self.text, self.at, self.depth = text, 0, depth
        self.budget = budget or _Budget()
        self.budget.chars -= len(text)
        if self.budget.chars < 0:
            raise _Unreadable("nested commands too long")
        self.commands = commands
        self.vanishing: list[frozenset[int]] = []
        self.simple = True
        self.plain = True

    def peek(self, offset: int = 0) -> str:
        at = self.at + offset
        return self.text[at] if at < len(self.text) else ""

    def sequence(self, closer: str | None) -> None:
        """Read commands up to ``closer`` (consumed) or the end of the text."""
        words: list[str] = []
        gone: set[int] = set()  # words that may vanish
        target = False  # the next word is a redirection's target, no word of the command
        while self.at < len(self.text):
            char = self.peek()
            if char in " \t":
                self.at += 1
            elif closer is not None and char == closer:
                self.at += 1
                self.end(words, gone)
                return
            elif char == "#":  # a word starting with # begins a comment
                self.simple = False
                while self.at < len(self.text) and self.peek() not in "\n\r":
                    self.at += 1
            elif char in "<>" or (char == "&" and self.peek(1) == ">"):
                substituted = self.redirection()
                if substituted is None:
                    target = True
                else:  # ``<(…)`` is a word of the command (a path), its inside a command
                    self.plain = False
                    words.append(substituted)
            elif char in _OPERATORS:
                self.simple = False
                self.end(words, gone)
                words, gone = [], set()
                self.at += 1
                if char == "(":
                    self.sequence(")")
            else:
                values, descriptor, vanishes = self.word()
                if descriptor and self.peek() in ("<", ">"):
                    continue  # ``2>``: the number names a descriptor of the redirection
                if target:
                    target = False
                    continue
                if vanishes:
                    gone.add(len(words))
                words.extend(values)
        if closer is not None:
            raise _Unreadable(f"no closing {closer!r}")
        if target:
            raise _Unreadable("a redirection names no target")
        self.end(words, gone)

    def redirection(self) -> str | None:
        """Consume a redirection operator (None), or read a process substitution (its text)."""
        self.simple = False
        if self.text.startswith(("<(", ">("), self.at):
            start = self.at
            self.at += 2
            self.sequence(")")
            return self.text[start:self.at]
        if self.text.startswith("<<", self.at) and not self.text.startswith("<<<", self.at):
            raise _Unreadable("a here-document")
        for operator in ("&>>", "<<<", ">>", ">|", "<>", "<&", ">&", "&>", "<", ">"):
            if self.text.startswith(operator, self.at):
                self.at += len(operator)
                return None
        raise AssertionError("not at a redirection")  # pragma: no cover

    def end(self, words: list[str], gone: set[int]) -> None:
        """Close one simple command, and read the command strings it runs."""
        if not words:
            return
        command = tuple(words)
        if self.commands:
            self.simple = False
        self.commands.append(command)
        self.vanishing.append(frozenset(gone))
        for start in _starts(command, gone):
            name = posixpath.basename(command[start])
            if name == "eval" and start + 1 < len(command):
                self.nested(" ".join(command[start + 1:]))
            elif name in _SHELLS:  # ``bash -c``, ``sh -ec``, ``bash --norc -o x -lc``
                for at in range(start + 1, len(command) - 1):
                    if _SHORT_C.fullmatch(command[at]):
                        self.nested(command[at + 1])
                        break

    def nested(self, text: str) -> None:
        self.budget.nested -= 1
        if self.budget.nested < 0:
            raise _Unreadable("too many nested commands")
        reader = _Reader(text, self.commands, self.depth + 1, self.budget)
        reader.sequence(None)
        self.vanishing.extend(reader.vanishing)
        self.simple = False
        self.plain = self.plain and reader.plain

    def word(self) -> tuple[list[str], bool, bool]:
        """One word's values (after brace expansion), whether it is a bare number, and
        whether it is only unquoted expansions (which may leave no word)."""
        start = self.at
        parts: list[tuple[str, bool]] = []  # (text, is an unquoted brace character)
        plain, closed_single, quoted, literal = True, -1, False, False
        while self.at < len(self.text):
            char = self.peek()
            if char in " \t" or char in _OPERATORS:
                break
            if char == "'":
                end = self.text.find("'", self.at + 1)
                if end < 0:
                    raise _Unreadable("an unbalanced single quote")
                content = self.text[self.at + 1:end]
                # zsh's RC_QUOTES reads '' inside quotes as ', fish reads \ in them
                plain = plain and closed_single != self.at and "\\" not in content \
                    and content.isprintable()
                parts.append((content, False))
                self.at = closed_single = end + 1
                quoted = True
            elif char == '"':
                opened = self.at
                self.at += 1
                parts.append((self.double_quoted(), False))
                content = self.text[opened + 1:self.at - 1]
                plain = plain and content.isprintable() and not _EXPANDS_QUOTED.search(content)
                quoted = True
            elif char == "\\":
                plain = False
                following = self.peek(1)
                self.at += 2
                if following != "\n":  # \<newline> joins lines; a last \ is itself
                    parts.append((following or "\\", False))
                    literal = True
            elif char == "$":
                plain = False
                quoted = quoted or self.peek(1) in ("'", '"')  # $'…' and $"…" are quoted
                parts.append((self.dollar(), False))
            elif char == "`":
                plain = False
                parts.append((self.backticks(), False))
            elif run := _LITERAL_RUN.match(self.text, self.at):
                parts.append((run.group(), False))
                literal = True
                self.at = run.end()
            else:
                if char not in _SAFE or (char in "=%" and self.at == start):
                    plain = False
                parts.append((char, char in "{},"))
                literal = True
                self.at += 1
        self.plain = self.plain and plain
        if not parts and not quoted:
            return [], False, False  # only ``\<newline>``: no word at all
        raw = self.text[start:self.at]
        expansions_only = not quoted and not literal
        return _braces(parts, self.budget), raw.isascii() and raw.isdigit(), expansions_only

    def double_quoted(self) -> str:
        """The value of a double-quoted part (the opening quote consumed)."""
        out: list[str] = []
        while True:
            char = self.peek()
            if char == "":
                raise _Unreadable("an unbalanced double quote")
            if char == '"':
                self.at += 1
                return "".join(out)
            if char == "\\" and self.peek(1) in ("$", "`", '"', "\\", "\n"):
                if self.peek(1) != "\n":
                    out.append(self.peek(1))
                self.at += 2
            elif char == "$":
                out.append(self.dollar(quoted=True))
            elif char == "`":
                out.append(self.backticks())
            else:
                out.append(char)
                self.at += 1

    def dollar(self, *, quoted: bool = False) -> str:
        """An expansion at ``$``: substitutions are read as commands; the text is kept."""
        start = self.at
        following = self.peek(1)
        if following == "(":
            self.at += 2
            self.simple = False
            self.sequence(")")
        elif following == "{":
            self.at += 2
            self.braced()
        elif following == "'" and not quoted:  # $'…': bash's and zsh's escapes
            self.at += 2
            return self.ansi_c()
        elif following == '"' and not quoted:  # $"…": a translated string
            self.at += 1
            return ""
        else:
            self.at += 1
            while self.peek() and (self.peek().isalnum() or self.peek() == "_"):
                self.at += 1
            if self.at == start + 1 and self.peek() and self.peek() in "@*#?$!-":
                self.at += 1
        return self.text[start:self.at]

    def braced(self) -> None:
        """The inside of ``${…}`` (the opening consumed), reading what it substitutes."""
        while True:
            char = self.peek()
            if char == "":
                raise _Unreadable("an unbalanced ${")
            if char == "}":
                self.at += 1
                return
            if char == "\\":
                self.at += 2
            elif char == "'":
                end = self.text.find("'", self.at + 1)
                if end < 0:
                    raise _Unreadable("an unbalanced single quote")
                self.at = end + 1
            elif char == '"':
                self.at += 1
                self.double_quoted()
            elif char == "$":
                self.dollar()
            elif char == "`":
                self.backticks()
            else:
                self.at += 1

    def ansi_c(self) -> str:
        """The value of ``$'…'`` (the opening consumed)."""
        out: list[str] = []
        while True:
            char = self.peek()
            if char == "":
                raise _Unreadable("an unbalanced $' quote")
            self.at += 1
            if char == "'":
                return "".join(out)
            if char != "\\":
                out.append(char)
                continue
            code = self.peek()
            self.at += 1
            number = _ANSI_NUMBER.get(code) or (_OCTAL if code and code in "01234567" else None)
            if code in _ANSI:
                out.append(_ANSI[code])
            elif number is not None:
                if number is _OCTAL:
                    self.at -= 1  # the first digit is part of the number
                found = number.match(self.text, self.at)
                if found is None:
                    out.append("\\" + code)
                    continue
                self.at = found.end()
                out.append(chr(min(int(found.group(), 8 if number is _OCTAL else 16),
                                   0x10FFFF)))
            elif code == "c" and self.peek():
                out.append(chr(ord(self.peek()) & 0x1F))
                self.at += 1
            else:
                out.append("\\" + code)

    def backticks(self) -> str:
        """A backtick substitution: its text is unescaped and read as commands."""
        self.simple = False
        start = self.at
        self.at += 1
        inner: list[str] = []
        while True:
            char = self.peek()
            if char == "":
                raise _Unreadable("an unbalanced backtick")
            self.at += 1
            if char == "`":
                break
            if char == "\\" and self.peek() in ("$", "`", "\\"):
                inner.append(self.peek())
                self.at += 1
            else:
                inner.append(char)
        self.nested("".join(inner))
        return self.text[start:self.at]


def _braces(parts: list[tuple[str, bool]], budget: _Budget) -> list[str]:
    """Bash's brace expansion of a word's comma lists (``{rm,-rf,x}``, ``r{m,}``)."""
    chars = [text if not brace else {"{": "\0{", ",": "\0,", "}": "\0}"}[text]
             for text, brace in parts]
    if not any(brace and text == "{" for text, brace in parts):
        return ["".join(text for text, _ in parts)]
    return [item.replace("\0", "") for item in _expand(chars, budget)]


def _expand(chars: list[str], budget: _Budget) -> list[str]:
    """Expand the first brace group with a comma at its top level; the rest recursively."""
    for opened, token in enumerate(chars):
        if token != "\0{":
            continue
        depth = 0
        commas: list[int] = []
        for at in range(opened + 1, len(chars)):
            if chars[at] == "\0{":
                depth += 1
            elif chars[at] == "\0}" and depth:
                depth -= 1
            elif chars[at] == "\0}":
                if not commas:
                    break  # ``{x}``: no list, taken literally
                cuts = [opened, *commas, at]
                head, tail = chars[:opened], chars[at + 1:]
                return [done for left, right in itertools.pairwise(cuts)
                        for done in _expand(head + chars[left + 1:right] + tail, budget)]
            elif chars[at] == "\0," and not depth:
                commas.append(at)
    budget.words -= 1
    if budget.words < 0:
        raise _Unreadable("a brace expansion of too many words")
    return ["".join(char.replace("\0", "") for char in chars)]


@functools.lru_cache(maxsize=64)  # each rule of a verdict reads the same command
def read_command(text: str) -> Reading:
    """``text`` as the shell reads it; ``problem`` says why when it cannot be read."""
    if len(text) > MAX_COMMAND:
        return Reading((), False, False, f"longer than {MAX_COMMAND} characters")
    if _CONTROL.search(text):
        return Reading((), False, False, "a control character")
    commands: list[tuple[str, ...]] = []
    reader = _Reader(text, commands)
    try:
        reader.sequence(None)
    except (_Unreadable, RecursionError) as error:
        why = str(error) if isinstance(error, _Unreadable) else "nested too deep"
        return Reading((), False, False, why)
    return Reading(tuple(commands), reader.simple and len(commands) == 1, reader.plain,
                   vanishing=tuple(reader.vanishing))


def _starts(words: tuple[str, ...], gone: Collection[int] = ()) -> Iterator[int]:
    """Where a rule may match in one command: after assignments, reserved words and words
    that may vanish (``gone``), and after a program that runs another, at any later word."""
    at = 0
    while at < len(words) and (words[at] in _RESERVED or _ASSIGNMENT.fullmatch(words[at])
                               or at in gone):
        at += 1
    if at == len(words):
        return
    yield at
    name = posixpath.basename(words[at])
    if name in _RUNNERS:
        yield from range(at + 1, len(words))
    elif name == "find":
        yield from (later + 1 for later in range(at, len(words)) if words[later] in _FIND_RUNS)


def _rule_words(spec: str) -> tuple[tuple[str, ...], bool]:
    """The words a specifier names, and whether it is a prefix (``git status:*``)."""
    prefix = spec.endswith(":*")
    text = spec[:-2] if prefix else spec
    reading = read_command(text)
    if reading.problem is None and len(reading.commands) == 1:
        return reading.commands[0], prefix
    return tuple(text.split()), prefix


def _starts_with(words: tuple[str, ...], at: int, rule: tuple[str, ...], prefix: bool, *,
                 by_name: bool) -> bool:
    """Whether ``words`` from ``at`` are the rule's (or start with them, for a prefix)."""
    left = len(words) - at
    if left < len(rule) or (not prefix and left != len(rule)):
        return False
    head = words[at]
    if by_name and "/" not in rule[0]:
        head = posixpath.basename(head)
    return head == rule[0] and words[at + 1:at + len(rule)] == rule[1:]


def covers(spec: str, command: str, *, every: bool) -> bool:
    """Whether a ``Bash(spec)`` rule covers ``command``: for an allow rule (``every``) the
    whole command, for a deny or ask rule any command in it."""
    rule, prefix = _rule_words(spec)
    if not rule:
        return False
    reading = read_command(command)
    if every:
        return (reading.simple and reading.plain
                and _starts_with(reading.commands[0], 0, rule, prefix, by_name=False))
    if reading.problem is not None:
        flat = re.sub(r"[\"'\\]", "", command)
        return re.search(rf"(?<![\w.-]){re.escape(rule[0])}(?![\w.-])", flat) is not None
    return any(_starts_with(words, start, rule, prefix, by_name=True)
               for words, gone in zip(reading.commands, reading.vanishing, strict=True)
               for start in _starts(words, gone))
