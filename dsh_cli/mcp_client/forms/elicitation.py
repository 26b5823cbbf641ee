"""An elicitation form as questions, and the answers as the form's content.

The mapping table of ``spec/mcp.md`` section 3, property by property: a flat
``requestedSchema`` becomes one question per property (``id`` = the key, or ``KEY/PROPERTY``
when several input requests share a batch); strings and numbers are free text checked by a
``TextRule``; booleans, enums and ``oneOf`` consts are single-select with no Other; arrays
of enums are multi-select; ``default`` and ``required`` carry over. Anything else is refused
as a whole (``SchemaRefused``, JSON-RPC -32602 to the server): dsh never half-asks a form.

Questions are built as plain JSON objects of the seam's vocabulary and validated into
``AskUserQuestionItem`` at the edge (``build_request``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from dsh_cli.core.errors import INVALID_ANSWER, UserInteractionError
from dsh_cli.core.limits import FORM_SCHEMA_BYTES
from dsh_cli.interaction.constraints import TextRule, compile_pattern
from dsh_cli.interaction.validation import LIMITS, check_questions
from dsh_cli.mcp_client.transport.streamed import cut_of

if TYPE_CHECKING:
    from collections.abc import Iterator

    from dsh_cli.core.signal import AbortSignal
    from dsh_cli.interaction.vocabulary import (
        AskUserQuestionAnswer,
        AskUserQuestionAnswerItem,
        AskUserQuestionRequest,
    )

__all__ = [
    "INVALID_PARAMS",
    "SECRET_WARNING",
    "FormField",
    "SchemaRefused",
    "batch_json",
    "build_request",
    "form_content",
    "form_fields",
    "looks_secret",
]

INVALID_PARAMS = -32602  # JSON-RPC "Invalid params": what a refused schema answers
YES, NO = "Yes", "No"
SECRET_WARNING = ("this looks like a secret: servers must not ask for secrets in a form "
                  "(MCP elicitation); answer only if you trust this server")
_SECRET = re.compile(r"pass(word|wd|phrase)|token|api[\s_-]?key|secret", re.IGNORECASE)
_FORMATS = ("email", "uri", "date", "date-time")
_MISSING = object()


class SchemaRefused(ValueError):
    """A ``requestedSchema`` outside the flat subset; ``path`` names the property."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass(frozen=True)
class FormField:
    """One property of a form: its question, and how an answer becomes its value."""

    key: str
    id: str
    kind: Literal["text", "boolean", "choice", "multi"]
    question: dict[str, Any]
    values: dict[str, Any] = field(default_factory=dict)  # label -> const, for options
    rule: TextRule | None = None
    default: Any = _MISSING
    required: bool = False


def looks_secret(*names: str | None) -> bool:
    """Whether a property's key or title reads like a password, token, API key or secret."""
    return any(name and _SECRET.search(name) for name in names)


def form_fields(schema: Any, prefix: str | None = None) -> list[FormField]:
    """The questions of one form, in property order; ``SchemaRefused`` for what dsh can't ask."""
    if cut_of(schema) or _over(schema, FORM_SCHEMA_BYTES):  # cut: a long line's, unbuilt
        raise SchemaRefused("requestedSchema", f"over {FORM_SCHEMA_BYTES // 1024} KiB as "
                            "JSON: too big a form to ask")
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise SchemaRefused("requestedSchema", "must be an object schema")
    properties = schema.get("properties") or {}
    if not isinstance(properties, dict) or not properties:
        raise SchemaRefused("requestedSchema.properties", "must name at least one property")
    required = schema.get("required") or []
    if not isinstance(required, list):
        raise SchemaRefused("requestedSchema.required", "must be a list of property names")
    fields = []
    for key, spec in properties.items():
        ident = f"{prefix}/{key}" if prefix else str(key)
        fields.append(_field(str(key), ident, spec, key in required))
    return fields


def _over(value: Any, limit: int) -> bool:
    """Whether ``value`` as JSON would pass ``limit`` bytes (counted as its strings'
    characters and a few for each delimiter and scalar), found without building anything:
    the walk stops at the first part past the limit, before any question is made."""
    from itertools import chain

    seen = 0
    walking: list[Iterator[Any]] = [iter((value,))]
    while walking:
        item = next(walking[-1], _MISSING)
        if item is _MISSING:
            walking.pop()
            continue
        if isinstance(item, str):
            seen += len(item) + 3  # quotes, and a comma or colon
        elif isinstance(item, dict):
            seen += 2
            walking.append(chain.from_iterable(item.items()))
        elif isinstance(item, list):
            seen += 2
            walking.append(iter(item))
        else:
            seen += 4  # a number, true, false or null
        if seen > limit:
            return True
    return False


def _field(key: str, ident: str, spec: Any, required: bool) -> FormField:
    path = f"properties.{key}"
    if not isinstance(spec, dict):
        raise SchemaRefused(path, "must be a schema object")
    title = spec.get("title")
    question: dict[str, Any] = {"id": ident,
                                "question": _fit(_one_line(title) or key, LIMITS["question"]),
                                "required": required}
    if isinstance(spec.get("description"), str) and spec["description"].strip():
        question["detail"] = _fit(spec["description"], LIMITS["detail"])
    if looks_secret(key, title if isinstance(title, str) else None):
        question["warning"] = SECRET_WARNING
    kind = spec.get("type")
    choices = _choices(spec, path)
    if choices is not None:
        made = FormField(key, ident, "choice", question, choices)
    elif kind == "boolean":
        made = FormField(key, ident, "boolean", question, {YES: True, NO: False})
    elif kind in ("string", "number", "integer"):
        made = FormField(key, ident, "text", question, rule=_rule(spec, kind, path))
    elif kind == "array":
        made = FormField(key, ident, "multi", question, _item_choices(spec, path))
    else:
        raise SchemaRefused(path, f"type {kind!r} cannot be asked (flat string, number, "
                            "integer, boolean, enum or array of enum only)")
    return _finish(made, spec, path)


def _choices(spec: dict[str, Any], path: str) -> dict[str, Any] | None:
    """Labels to values for ``enum`` (+ ``enumNames``) or ``oneOf`` consts; None otherwise."""
    if "enum" in spec and spec.get("type", "string") == "string":
        return _labelled(spec["enum"], spec.get("enumNames"), path)
    if "oneOf" in spec:
        return _consts(spec["oneOf"], f"{path}.oneOf")
    return None


def _item_choices(spec: dict[str, Any], path: str) -> dict[str, Any]:
    items = spec.get("items")
    if not isinstance(items, dict):
        raise SchemaRefused(f"{path}.items", "an array must list its choices")
    if "enum" in items:
        return _labelled(items["enum"], items.get("enumNames"), f"{path}.items")
    if "anyOf" in items:
        return _consts(items["anyOf"], f"{path}.items.anyOf")
    raise SchemaRefused(f"{path}.items", "an array must be of enum or anyOf consts")


def _labelled(values: Any, names: Any, path: str) -> dict[str, Any]:
    if not isinstance(values, list) or not values:
        raise SchemaRefused(f"{path}.enum", "must be a non-empty list")
    if names is not None and (not isinstance(names, list) or len(names) != len(values)):
        raise SchemaRefused(f"{path}.enumNames", "must name every enum value")
    labels = names if names is not None else values
    return _unique([(_one_line(_shown(label)), value)
                    for label, value in zip(labels, values, strict=True)], path)


def _consts(options: Any, path: str) -> dict[str, Any]:
    if not isinstance(options, list) or not options:
        raise SchemaRefused(path, "must be a non-empty list")
    pairs = []
    for index, option in enumerate(options):
        if not isinstance(option, dict) or "const" not in option:
            raise SchemaRefused(f"{path}[{index}]", "each choice needs a const")
        label = option.get("title") or option["const"]
        pairs.append((_one_line(_shown(label)), option["const"]))
    return _unique(pairs, path)


def _shown(value: Any) -> str:
    """A choice's label as the server wrote it: a string as is, anything else as JSON
    (``true``, ``null``, ``1.5``; not Python's ``True`` and ``None``)."""
    import json

    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _unique(pairs: list[tuple[str, Any]], path: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for label, value in pairs:
        if not label or label in values:
            raise SchemaRefused(path, f"choice labels must be distinct and non-empty "
                                f"({label!r})")
        values[label] = value
    return values


def _rule(spec: dict[str, Any], kind: str, path: str) -> TextRule:
    if kind == "string":
        fmt = spec.get("format")
        low, high = _count(spec, "minLength", path), _count(spec, "maxLength", path)
        if low is not None and high is not None and low > high:
            raise SchemaRefused(f"{path}.minLength", f"minLength {low} is greater than "
                                f"maxLength {high}: no answer could fit")
        pattern = spec.get("pattern")
        return TextRule(kind="string", min_length=low, max_length=high,
                        pattern=_pattern(pattern, path) if isinstance(pattern, str) else None,
                        format=fmt if fmt in _FORMATS else None)
    low_bound, high_bound = _bound(spec, "minimum", path), _bound(spec, "maximum", path)
    if low_bound is not None and high_bound is not None and (
            low_bound > high_bound
            or (kind == "integer" and math.ceil(low_bound) > math.floor(high_bound))):
        raise SchemaRefused(f"{path}.minimum", f"no {kind} lies between minimum "
                            f"{_plain(low_bound)} and maximum {_plain(high_bound)}")
    return TextRule(kind=kind, minimum=low_bound,  # type: ignore[arg-type]
                    maximum=high_bound)


def _pattern(pattern: str, path: str) -> str:
    """A server's ``pattern`` that compiles and is short enough, or ``SchemaRefused``.

    Checking an answer against it is bounded in time (``TextRule``), so a pattern that
    backtracks badly is asked like any other; one that does not compile could never match.
    """
    try:
        compile_pattern(pattern)
    except ValueError as error:
        raise SchemaRefused(f"{path}.pattern", str(error)) from None
    return pattern


def _count(spec: dict[str, Any], name: str, path: str) -> int | None:
    value = spec.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SchemaRefused(f"{path}.{name}", "must be a non-negative integer")
    return value


def _bound(spec: dict[str, Any], name: str, path: str) -> float | None:
    value = spec.get(name)
    if value is None:
        return None
    try:
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not math.isfinite(value):
            raise OverflowError
        return float(value)
    except OverflowError:  # also an integer too large for a float (10**400)
        raise SchemaRefused(f"{path}.{name}", "must be a finite number") from None


def _finish(made: FormField, spec: dict[str, Any], path: str) -> FormField:
    """The question's options, Other, counts and default, once the kind is known."""
    question = made.question
    if made.values:
        question["options"] = [{"label": label} for label in made.values]
        question["other"] = False
    if made.kind == "multi":
        question["multi_select"] = True
        low, high = _count(spec, "minItems", path), _count(spec, "maxItems", path)
        if low is not None:
            question["min_items"] = low
        if high is not None:
            question["max_items"] = high
        most = len(made.values) if high is None else min(high, len(made.values))
        if low is not None and low > most:
            raise SchemaRefused(f"{path}.minItems", f"minItems {low} cannot be met (at most "
                                f"{most} of the choices)")
    if made.rule is not None:
        question["rule"] = made.rule.model_dump(exclude_none=True)
    default = spec.get("default", _MISSING)
    if default is not _MISSING:
        shown = _default_answer(made, default)
        if shown is None:
            default = _MISSING  # a default that fits nothing is dropped, not asked
        else:
            question["default"] = shown
    return FormField(made.key, made.id, made.kind, question, made.values, made.rule,
                     default, bool(question.get("required")))


def _default_answer(made: FormField, default: Any) -> dict[str, Any] | None:
    if made.kind == "text":
        text = _plain(default) if isinstance(default, int | float | str) and \
            not isinstance(default, bool) else None
        # blank text is no answer the seam can show or take: the server keeps its own default
        if text is None or not text.strip() or (made.rule is not None
                                                and made.rule.problem(text)):
            return None
        return {"custom": text}
    wanted = default if made.kind == "multi" else [default]
    if not isinstance(wanted, list):
        return None
    labels = [label for label, value in made.values.items() if _same(value, wanted)]
    return {"selected": labels} if len(labels) == len(wanted) else None


def _same(value: Any, wanted: list[Any]) -> bool:
    return any(type(value) is type(item) and value == item for item in wanted)


def _plain(value: int | float | str) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _fit(text: str, limit: int) -> str:
    """A server's text within the seam's limit, the cut marked (a long description is
    still asked, never refused, and never cut silently)."""
    if len(text) <= limit:
        return text
    kept = limit - 60  # room for the mark, whose number has at most a dozen digits
    return f"{text[:kept]}… ({len(text) - kept} more characters not shown)"


def _one_line(text: Any) -> str:
    return " ".join(text.split()) if isinstance(text, str) else ""


def batch_json(server: str, message: str | None, questions: list[dict[str, Any]],
               messages: dict[str, str] | None = None) -> dict[str, Any]:
    """The batch as the seam's JSON: headed by the server and its message (``messages``:
    each question's own, by id, when several forms share the batch), declinable, always
    reviewed."""
    own = {qid: _fit(_one_line(text), LIMITS["message"]) for qid, text in (messages or {}).items()}
    return {
        "questions": questions,
        "source": {"name": server,
                   "message": _fit(_one_line(message), LIMITS["message"]) or None,
                   "kind": "elicitation",
                   **({"messages": own} if own else {})},
        "declinable": True,
        "review": True,
    }


def build_request(server: str, message: str | None, questions: list[dict[str, Any]], *,
                  signal: AbortSignal | None = None, call_id: str | None = None,
                  messages: dict[str, str] | None = None) -> AskUserQuestionRequest:
    """``batch_json`` as a request of the owning tool call; ``SchemaRefused`` for a batch
    the seam would refuse (too many questions or options, a blank key, ...), so the server
    hears -32602 with the reason instead of a ``cancel`` nobody chose."""
    from dsh_cli.interaction.vocabulary import AskUserQuestionRequest

    request = AskUserQuestionRequest.model_validate(
        {**batch_json(server, message, questions, messages), "signal": signal,
         "call_id": call_id})
    try:
        check_questions(request)
    except UserInteractionError as error:
        raise SchemaRefused(*_property_path(error.message, questions)) from None
    return request


def _property_path(message: str, questions: list[dict[str, Any]]) -> tuple[str, str]:
    """The seam's ``questions[N].field: rule`` as the property it came from, and the rule."""
    path, _, rule = message.partition(": ")
    found = re.match(r"questions\[(\d+)\](.*)", path)
    if found is None or int(found.group(1)) >= len(questions):
        return "requestedSchema", message
    return f"properties.{questions[int(found.group(1))]['id']}{found.group(2)}", rule


def form_content(fields: list[FormField], answer: AskUserQuestionAnswer) -> dict[str, Any]:
    """The ``content`` of an ``accept`` for one form: typed values, defaults for skips.

    The seam has checked the answer against each question already; a value that still
    does not fit (a provider that knows nothing of rules) is ``INVALID_ANSWER``, never sent.
    """
    by_id = {item.id: item for item in answer.answers}
    content: dict[str, Any] = {}
    for made in fields:
        item = by_id.get(made.id)
        value = _value(made, item) if item is not None else _MISSING
        if value is _MISSING:
            value = made.default
        if value is _MISSING:
            if made.required:
                raise UserInteractionError(f"{made.id}: an answer is required", INVALID_ANSWER)
            continue
        content[made.key] = value
    return content


def _value(made: FormField, item: AskUserQuestionAnswerItem) -> Any:
    if item.custom is not None:
        if made.kind != "text":
            raise UserInteractionError(f"{made.id}: choose one of the options", INVALID_ANSWER)
        rule = made.rule or TextRule()
        problem = rule.problem(item.custom)
        if problem:
            raise UserInteractionError(f"{made.id}: {problem}", INVALID_ANSWER)
        return rule.value(item.custom)
    if not item.selected:
        return _MISSING
    values = [made.values[label] for label in item.selected if label in made.values]
    return values if made.kind == "multi" else values[0]
