"""A question batch as one ACP form elicitation, and the form's content back as answers.

One property per question, under the question's id: a single-select is a string with
``oneOf`` of ``{const, title, description}``, a multi-select an array whose ``items`` have
``anyOf`` of the same, a question without options a string. A question that takes "Other"
text has a companion string property (``OTHER_SUFFIX``). Only a required question with no
companion is ``required`` (with one, the human may answer in either). The header is the
property's title and the question its description; previews, details and warnings ride
in the schema's ``_meta`` under ``dsh/questions``.

``answer_of`` reads ``accept`` content into the seam's answer JSON, checking only its
shape (a wrong type is ``INVALID_ANSWER`` naming the field); the seam then validates it as
any answer (labels outside the options, a required question left empty).
"""

from __future__ import annotations

from typing import Any

from dsh_cli.core.errors import INVALID_ANSWER, UserInteractionError
from dsh_cli.core.recommended import display_label
from dsh_cli.interaction.vocabulary import AskUserQuestionItem, AskUserQuestionRequest

__all__ = ["META_KEY", "OTHER_SUFFIX", "answer_of", "form_message", "form_schema"]

OTHER_SUFFIX = "__other"
META_KEY = "dsh/questions"


def form_message(request: AskUserQuestionRequest) -> str:
    """The line a client shows above the form."""
    heading = request.heading()
    if heading:
        return heading
    if len(request.questions) == 1:
        return request.questions[0].question
    return f"The agent asks {len(request.questions)} questions"


def form_schema(request: AskUserQuestionRequest) -> dict[str, Any]:
    """The ``requestedSchema`` of the batch's form."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    meta: dict[str, Any] = {}
    for item in request.questions:
        properties[item.id] = _property(item)
        other = other_key(item, request)
        if other is not None:
            properties[other] = {"type": "string", "title": f"Other ({_title(item)})",
                                 "description": "Your own answer, in place of the options"}
        elif item.required and item.default is None:
            required.append(item.id)
        meta[item.id] = _meta(item, other)
    schema: dict[str, Any] = {"type": "object", "properties": properties,
                              "_meta": {META_KEY: meta}}
    if required:
        schema["required"] = required
    return schema


def other_key(item: AskUserQuestionItem, request: AskUserQuestionRequest) -> str | None:
    """The companion property of a question that takes "Other" text, or None."""
    if not (item.has_options and item.other):
        return None
    taken = {question.id for question in request.questions}
    key = item.id + OTHER_SUFFIX
    while key in taken:  # a question's own id may end so
        key += "_"
    return key


def _title(item: AskUserQuestionItem) -> str:
    return item.header or item.question


def _property(item: AskUserQuestionItem) -> dict[str, Any]:
    spec: dict[str, Any] = {"title": _title(item)}
    description = item.question if item.header else None
    if item.detail:
        description = f"{description}\n\n{item.detail}" if description else item.detail
    if description:
        spec["description"] = description
    choices = [_choice(option.label, option.description) for option in item.options or []]
    default = item.default
    if item.is_multi:
        spec.update(type="array", items={"anyOf": choices})
        if item.min_items is not None:
            spec["minItems"] = item.min_items
        if item.max_items is not None:
            spec["maxItems"] = item.max_items
        if default is not None and default.selected:
            spec["default"] = list(default.selected)
    elif choices:
        spec.update(type="string", oneOf=choices)
        if default is not None and default.selected:
            spec["default"] = default.selected[0]
    else:
        spec["type"] = "string"
        if default is not None and default.custom is not None:
            spec["default"] = default.custom
    return spec


def _choice(label: str, description: str | None) -> dict[str, Any]:
    choice = {"const": label, "title": display_label(label)}
    if description:
        choice["description"] = description
    return choice


def _meta(item: AskUserQuestionItem, other: str | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"question": item.question}
    if item.header:
        meta["header"] = item.header
    if other is not None:
        meta["other"] = other
    previews = {option.label: option.preview for option in item.options or [] if option.preview}
    if previews:
        meta["previews"] = previews
    if item.warning:
        meta["warning"] = item.warning
    return meta


def answer_of(request: AskUserQuestionRequest, content: Any) -> dict[str, Any]:
    """The seam's answer JSON for an ``accept``'s content; ``INVALID_ANSWER`` on a bad shape."""
    if content is None:
        content = {}
    if not isinstance(content, dict):
        raise _invalid("the form's content is not an object")
    known: set[str] = set()
    answers = []
    for item in request.questions:
        other = other_key(item, request)
        known.add(item.id)
        answer: dict[str, Any] = {"id": item.id, "selected": []}
        value = content.get(item.id)
        if item.is_multi:
            if value is not None:
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    raise _invalid(f"{item.id}: expected an array of option values")
                answer["selected"] = list(value)
        elif value is not None and not isinstance(value, str):
            raise _invalid(f"{item.id}: expected a string")
        elif value and item.has_options:
            answer["selected"] = [value]
        elif value:
            answer["custom"] = value
        if other is not None:
            known.add(other)
            text = content.get(other)
            if text is not None and not isinstance(text, str):
                raise _invalid(f"{other}: expected a string")
            if text:
                answer["custom"] = text
        answers.append(answer)
    unknown = sorted(set(content) - known)
    if unknown:
        raise _invalid(f"{unknown[0]}: not a field of the form")
    return {"answers": answers}


def _invalid(message: str) -> UserInteractionError:
    return UserInteractionError(f"the form's answer is invalid: {message}", INVALID_ANSWER)
