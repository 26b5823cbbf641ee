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

A word the shell rewrites as it runs (a ``$`` expansion, ``$(…)``, backticks, an unquoted
glob, zsh's ``=cmd``) is *built*. A built word where a program starts may be any program, a
runner too, so every later word is a start as well; and a deny or ask rule matches when its
words could come out of the built words (``_fits``: each expansion stands for any text, an
unquoted one for several words; the rule's program must come from the word in the program's
place, as its last path part): ``rm${IFS}x``, ``r$@m x``, ``rm$x``, ``bin/r?``, ``=rm`` and
``git $x`` under ``Bash(git push:*)`` are denied, ``"$x".sh`` is not. A built program is never
allowed by a rule, not even a bare ``Bash`` (``built_program``): it is asked.

A deny rule is a guard against the usual spellings, not a sandbox: a program run by another
program's own means (``git -c alias.x='!rm …'``, a script file) is not matched.
"""

from __future__ import annotations

import functools
import itertools
import posixpath
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass

from dsh_cli.core.limits import BUILT_MATCHES
from dsh_cli.core.limits import COMMAND_CHARACTERS as MAX_COMMAND

__all__ = ["MAX_COMMAND", "Reading", "built_program", "covers", "read_command"]

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
    # per command, per word: the shape of a word the shell rewrites as it runs (an expansion,
    # a glob, zsh's ``=cmd``), None for a word that is what it reads
    shapes: tuple[tuple[Shape | None, ...], ...] = ()


# A built word's shape: literal text, and the parts that become any text when it runs.
# ``ANY`` is unquoted (its value is split into several words), ``ANY_QUOTED`` is not.
ANY, ANY_QUOTED = "\0any", "\0quoted"
Shape = tuple[str, ...]


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
        self.shapes: list[tuple[Shape | None, ...]] = []
        self.expanded = False  # a ``$``/backtick expansion was met (inside double quotes)
        self.simple = True
        self.plain = True

    def peek(self, offset: int = 0) -> str:
        at = self.at + offset
        return self.text[at] if at < len(self.text) else ""

    def sequence(self, closer: str | None) -> None:
        """Read commands up to ``closer`` (consumed) or the end of the text."""
        words: list[str] = []
        gone: set[int] = set()  # words that may vanish
        shapes: list[Shape | None] = []
        target = False  # the next word is a redirection's target, no word of the command
        while self.at < len(self.text):
            char = self.peek()
            if char in " \t":
                self.at += 1
            elif closer is not None and char == closer:
                self.at += 1
                self.end(words, gone, shapes)
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
                    shapes.append(None)
            elif char in _OPERATORS:
                self.simple = False
                self.end(words, gone, shapes)
                words, gone, shapes = [], set(), []
                self.at += 1
                if char == "(":
                    self.sequence(")")
            else:
                values, descriptor, vanishes, shape = self.word()
                if descriptor and self.peek() in ("<", ">"):
                    continue  # ``2>``: the number names a descriptor of the redirection
                if target:
                    target = False
                    continue
                if vanishes:
                    gone.add(len(words))
                words.extend(values)
                shapes.extend([shape] * len(values))
        if closer is not None:
            raise _Unreadable(f"no closing {closer!r}")
        if target:
            raise _Unreadable("a redirection names no target")
        self.end(words, gone, shapes)

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

    def end(self, words: list[str], gone: set[int], shapes: list[Shape | None]) -> None:
        """Close one simple command, and read the command strings it runs."""
        if not words:
            return
        command = tuple(words)
        if self.commands:
            self.simple = False
        self.commands.append(command)
        self.vanishing.append(frozenset(gone))
        self.shapes.append(tuple(shapes))
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
        self.shapes.extend(reader.shapes)
        self.simple = False
        self.plain = self.plain and reader.plain

    def word(self) -> tuple[list[str], bool, bool, Shape | None]:
        """One word's values (after brace expansion), whether it is a bare number, whether
        it is only unquoted expansions (which may leave no word), and its shape if the shell
        rewrites it as it runs (None: it is what it reads)."""
        start = self.at
        parts: list[tuple[str, bool]] = []  # (text, is an unquoted brace character)
        shape: list[str] = []  # literal characters, ANY and ANY_QUOTED
        built = False
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
                shape.extend(content)
                self.at = closed_single = end + 1
                quoted = True
            elif char == '"':
                opened = self.at
                self.at += 1
                self.expanded = False
                parts.append((self.double_quoted(), False))
                built = built or self.expanded
                shape.extend([ANY_QUOTED] if self.expanded else parts[-1][0])
                content = self.text[opened + 1:self.at - 1]
                plain = plain and content.isprintable() and not _EXPANDS_QUOTED.search(content)
                quoted = True
            elif char == "\\":
                plain = False
                following = self.peek(1)
                self.at += 2
                if following != "\n":  # \<newline> joins lines; a last \ is itself
                    parts.append((following or "\\", False))
                    shape.append(following or "\\")
                    literal = True
            elif char == "$":
                plain = False
                text_quoted = self.peek(1) in ("'", '"')  # $'…' and $"…" are quoted
                quoted = quoted or text_quoted
                parts.append((self.dollar(), False))
                if text_quoted or parts[-1][0] == "$":  # a lone $ is itself
                    shape.extend(parts[-1][0])
                else:
                    shape.append(ANY)
                    built = True
            elif char == "`":
                plain = False
                parts.append((self.backticks(), False))
                shape.append(ANY)
                built = True
            elif run := _LITERAL_RUN.match(self.text, self.at):
                parts.append((run.group(), False))
                shape.extend(run.group())
                literal = True
                self.at = run.end()
            else:
                # zsh reads ``=`` as word-initial after parts that may be empty (``''=ls``,
                # ``"$x"=ls`` run ls's full path), not only at the word's first character
                initial = all(item in (ANY, ANY_QUOTED) for item in shape)
                if char not in _SAFE or (char in "=%" and initial):
                    plain = False
                parts.append((char, char in "{},"))
                if char in "*?[":  # a glob: any names, as many words as it matches
                    shape.append(ANY)
                    built = True
                elif char == "=" and initial:  # zsh's ``=cmd``: cmd's full path
                    shape.extend((ANY_QUOTED, "/"))
                    built = True
                else:
                    shape.append(char)
                literal = True
                self.at += 1
        self.plain = self.plain and plain
        if not parts and not quoted:
            return [], False, False, None  # only ``\<newline>``: no word at all
        raw = self.text[start:self.at]
        expansions_only = not quoted and not literal
        values = _braces(parts, self.budget)
        if built and len(values) > 1:
            shape = [ANY]  # braces and expansions together: it may be anything
        return (values, raw.isascii() and raw.isdigit(), expansions_only,
                tuple(shape) if built else None)

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
                self.expanded = self.expanded or out[-1] != "$"
            elif char == "`":
                out.append(self.backticks())
                self.expanded = True
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
                   vanishing=tuple(reader.vanishing), shapes=tuple(reader.shapes))


def _starts(words: tuple[str, ...], gone: Collection[int] = (),
            built: Collection[int] = ()) -> Iterator[int]:
    """Where a rule may match in one command: after assignments, reserved words and words
    that may vanish (``gone``), and after a program that runs another, at any later word.
    A ``built`` word there may be any program, a runner too: every word from it is a start."""
    at = 0
    while at < len(words) and (words[at] in _RESERVED or _ASSIGNMENT.fullmatch(words[at])
                               or at in gone):
        if at in built:
            yield from range(at, len(words))
            return
        at += 1
    if at == len(words):
        return
    yield at
    if at in built:
        yield from range(at + 1, len(words))
        return
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


# What a rule's words are matched against in a command holding built words: one string of
# the words from the start, each built part any text. A rule token is a character, or:
_FIELD = "\0field"  # the boundary between two words the program gets (a space, if split)
_SLASH = "\0slash"  # a "/" or a word boundary: what comes before a program's name
_STAR = "\0star"  # any text
_GAP = "\0gap"  # nothing, or only what may vanish: boundaries and built parts
_SPLIT = "\0split"  # the boundary between the command's words


def _fits(rule: tuple[str, ...], prefix: bool, shapes: list[Shape], *, by_name: bool) -> bool:
    """Whether some value of the built words could make a command whose words are (or, for a
    prefix, start with) the rule's: each built part stands for any text, unquoted ones for
    several words too, and the program's name must come from the first word (its last path
    part for ``by_name``). Sound, never exact: it errs toward "it could"."""
    text: list[tuple[str, bool]] = []  # (token, is in the first word)
    for index, shape in enumerate(shapes):
        if index:
            text.append((_SPLIT, False))
        text.extend((token, index == 0) for token in shape)
    # the rule as tokens, each with whether it must come from the first word
    head = [(char, True) for char in rule[0]]
    tails: list[list[tuple[str, bool]]] = [[(_GAP, False)]]
    if prefix:
        tails.append([(_FIELD, False), (_STAR, False)])
    middle = [token for word in rule[1:]
              for token in [(_FIELD, False), (_GAP, False), *((char, False) for char in word)]]
    leads: list[list[tuple[str, bool]]] = [[]]
    if by_name and "/" not in rule[0]:
        leads.append([(_STAR, True), (_SLASH, True)])
    return any(_matches_tokens([*lead, *head, *middle, *tail], text)
               for lead in leads for tail in tails)


def _matches_tokens(pattern: list[tuple[str, bool]], text: list[tuple[str, bool]]) -> bool:
    """Whether ``pattern`` (rule tokens) and ``text`` (a command's, with built parts) can be
    the same string: the set of pattern positions reached, one text token at a time."""
    def closed(states: set[int]) -> set[int]:
        work = list(states)
        while work:  # a star or gap may stand for nothing
            at = work.pop()
            if at < len(pattern) and pattern[at][0] in (_STAR, _GAP) and at + 1 not in states:
                states.add(at + 1)
                work.append(at + 1)
        return states

    states = closed({0})
    for token, first in text:
        reached: set[int] = set()
        if token in (ANY, ANY_QUOTED):  # any text: it may make pattern tokens, or nothing
            reached = set(states)
            work = list(states)
            while work:
                at = work.pop()
                if at == len(pattern):
                    continue
                wanted, only_first = pattern[at]
                makes = (wanted in (_STAR, _GAP)
                         or (wanted == _FIELD and token == ANY) or wanted == _SLASH
                         or len(wanted) == 1) and (first or not only_first)
                if makes and at + 1 not in reached:
                    reached.add(at + 1)
                    work.append(at + 1)
        else:
            for at in states:
                if at == len(pattern):
                    continue
                wanted, only_first = pattern[at]
                if only_first and not first:
                    continue
                if wanted in (_STAR, _GAP):
                    if wanted == _STAR or token == _SPLIT:
                        reached.add(at)
                elif (wanted == token or (wanted == _FIELD and token == _SPLIT)
                      or (wanted == _SLASH and token in ("/", _SPLIT))):
                    reached.add(at + 1)
        states = closed(reached)
        if not states:
            return False
        if len(pattern) in states and pattern[-1][0] == _STAR:
            return True  # the rest of the text is the rule's free tail
    return len(pattern) in states


def _built_match(rule: tuple[str, ...], prefix: bool, words: tuple[str, ...],
                 shapes: tuple[Shape | None, ...], start: int) -> bool:
    """Whether built words from ``start`` on could make the rule's command (``_fits``)."""
    if all(shape is None for shape in shapes[start:]):
        return False
    given = [tuple(word) if shape is None else shape
             for word, shape in zip(words[start:], shapes[start:], strict=True)]
    return _fits(rule, prefix, given, by_name=True)


def built_program(command: str) -> bool:
    """Whether a program of ``command`` is a word the shell builds as it runs (``rm$x``,
    ``$cmd``, ``/bin/r?``, zsh's ``=rm``): no rule can say what it runs."""
    reading = read_command(command)
    return any(at in built
               for words, gone, shapes in zip(reading.commands, reading.vanishing,
                                              reading.shapes, strict=True)
               for built in [{index for index, shape in enumerate(shapes) if shape is not None}]
               for at in _starts(words, gone, built))


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
    tries = 0  # built matches tried: each reads the rest of the command, so they are capped
    for words, gone, shapes in zip(reading.commands, reading.vanishing, reading.shapes,
                                   strict=True):
        built = {index for index, shape in enumerate(shapes) if shape is not None}
        for start in _starts(words, gone, built):
            if _starts_with(words, start, rule, prefix, by_name=True):
                return True
            if any(shape is not None for shape in shapes[start:]):
                tries += 1
                if tries > BUILT_MATCHES:
                    return True  # too many built words to read: it could match (deny, ask)
                if _built_match(rule, prefix, words, shapes, start):
                    return True
    return False
