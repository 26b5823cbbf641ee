"""Hypothesis strategies for hostile input: any JSON, question batches, answers, text."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from dsh_cli.interaction import AskUserQuestionRequest

# Short text with the characters that break things: controls, escapes, bidi, zero-width,
# line separators, wide characters, surrounding blanks.
HOSTILE_CHARS = st.sampled_from(
    ["\x00", "\x07", "\x1b", "\x1b[31m", "\x1b]52;c;SGVsbG8=\x07", "\x9b", "\r", "\n", "\t",
     "\u2028", "\u202e", "\u2066", "\u200b", "\u200d", "\ufeff", " ", "  ", "名", "😀",
     "(Recommended)", "Other"]
)
NASTY_TEXT = st.one_of(
    st.text(max_size=12),
    st.lists(st.one_of(HOSTILE_CHARS, st.text(max_size=4)), max_size=5).map("".join),
)

def rarely(one_in: int) -> st.SearchStrategy[bool]:
    """True about once in ``one_in`` draws (away from 0: Hypothesis favours the bounds)."""
    return st.integers(0, one_in - 1).map(lambda n: n == one_in // 2)


JSON_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), NASTY_TEXT,
)


def json_values(leaves: st.SearchStrategy[Any] = JSON_SCALARS) -> st.SearchStrategy[Any]:
    """Any JSON value, small and often nested."""
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(NASTY_TEXT, children, max_size=4),
        ),
        max_leaves=12,
    )


ANY_JSON = json_values()

# Ids and labels from a small pool, so generated answers often name real ones.
POOL = ["a", "b", "db", "SQLite", "PostgreSQL", " a ", "", "a\nb", "x (Recommended)", "名前"]
POOL_TEXT = st.one_of(st.sampled_from(POOL), NASTY_TEXT)


GOOD_IDS = st.sampled_from(["a", "b", "db", "name", "名前", "x y"])
GOOD_LABELS = st.sampled_from(["SQLite", "PostgreSQL", "Go (Recommended)", "名", "😀", "a b", "x"])


@st.composite
def option_json(draw: st.DrawFn, good: bool = False) -> Any:
    label = draw(GOOD_LABELS if good else POOL_TEXT)
    shape = draw(st.integers(0, 3))
    if shape == 0:
        return label  # the plain-string slip the tool forgives
    option: dict[str, Any] = {"label": label}
    if shape == 2:
        option["description"] = draw(NASTY_TEXT if good else st.one_of(NASTY_TEXT, JSON_SCALARS))
    if shape == 3:
        option[draw(NASTY_TEXT)] = draw(ANY_JSON)  # unknown keys are ignored
    return option


@st.composite
def question_json(draw: st.DrawFn, good: bool = False) -> Any:
    """A question object: half well-formed (slips included), the rest nearly right or junk."""
    if good or draw(st.booleans()):
        item: dict[str, Any] = {"id": draw(GOOD_IDS), "question": "Which one?"}
        if draw(st.booleans()):
            item["header"] = draw(st.sampled_from(["Stack", "名前", "x"]))
        if draw(st.booleans()):
            item["options"] = draw(st.lists(option_json(good=True), max_size=4,
                                            unique_by=_label_of))
        if draw(st.booleans()):
            key = draw(st.sampled_from(["multi_select", "multiSelect"]))
            item[key] = draw(st.booleans())
        return item
    if draw(rarely(10)):
        return draw(ANY_JSON)
    item = {}
    for key, value in (("id", POOL_TEXT), ("question", NASTY_TEXT), ("header", NASTY_TEXT),
                       ("detail", NASTY_TEXT)):
        if draw(st.integers(0, 5)) > (3 if key in ("header", "detail") else 0):
            item[key] = draw(st.one_of(value, JSON_SCALARS))
    if draw(st.booleans()):
        item["options"] = draw(st.one_of(st.lists(option_json(), max_size=5), ANY_JSON))
    if draw(st.booleans()):
        key = draw(st.sampled_from(["multi_select", "multiSelect"]))
        item[key] = draw(st.one_of(st.booleans(), JSON_SCALARS))
    return item


def _label_of(option: Any) -> Any:
    # an unknown key may itself be spelt "label" and hold any JSON: hashable either way
    label = option if isinstance(option, str) else option.get("label")
    return label if isinstance(label, str) else repr(label)


@st.composite
def tool_arguments(draw: st.DrawFn) -> Any:
    """What a model may send as ``ask_user_question`` arguments, slips and garbage included."""
    good = draw(st.booleans())  # a whole batch of well-formed questions, often
    questions = draw(st.lists(question_json(good=good), max_size=4, unique_by=_id_of))
    shape = draw(st.sampled_from([5, 5, 5, 5, 2, 3, 4, 0, 1]))
    if shape == 0:
        return draw(ANY_JSON)
    if shape == 1:
        return draw(st.text(max_size=30))  # raw arguments text, usually not JSON
    arguments: dict[str, Any] = {"questions": questions}
    if shape == 2:
        arguments["questions"] = json.dumps(questions)  # JSON-encoded string slip
    if shape == 3:
        return json.dumps(arguments)
    if shape == 4:
        truncated = json.dumps(arguments)
        return truncated[: draw(st.integers(0, len(truncated)))]
    return arguments


def _id_of(item: Any) -> Any:
    # unique ids in the well-formed part, so whole batches are often accepted
    key = item.get("id") if isinstance(item, dict) else None
    return key if isinstance(key, str) else id(item)  # ids of any other type never clash


@st.composite
def valid_requests(draw: st.DrawFn) -> AskUserQuestionRequest:
    """A request the seam accepts: unique ids, unique one-line labels, some multi-select."""
    count = draw(st.integers(1, 4))
    ids = draw(st.lists(st.sampled_from(["a", "b", "db", "name", "名前", "x y"]),
                        min_size=count, max_size=count, unique=True))
    questions = []
    for question_id in ids:
        labels = draw(st.lists(st.sampled_from(
            ["SQLite", "PostgreSQL", "Go (Recommended)", "名", "😀", "a b", "x"]),
            max_size=4, unique=True))
        item: dict[str, Any] = {"id": question_id, "question": "Which?",
                                "multi_select": draw(st.booleans())}
        if labels or draw(st.booleans()):
            item["options"] = [{"label": label} for label in labels]
        questions.append(item)
    return AskUserQuestionRequest.model_validate({"questions": questions})


@st.composite
def answers_for(draw: st.DrawFn, request: AskUserQuestionRequest) -> Any:
    """An answer batch for ``request``: often right, often slightly wrong, sometimes junk."""
    if draw(rarely(20)):
        return draw(ANY_JSON)
    good = draw(st.booleans())  # every item well-formed (the batch may still be refused)
    items: list[Any] = []
    for question in request.questions:
        labels = question.labels
        item: dict[str, Any] = {"id": question.id}
        choice = draw(st.sampled_from([0, 1, 2, 3, 5] if good else [0, 1, 2, 3, 4, 5]))
        if choice <= 2 and labels:
            most = 3 if question.is_multi or choice == 2 else 1
            item["selected"] = draw(st.lists(st.sampled_from(labels), max_size=most,
                                             unique=good))
        elif choice == 3:
            polite = st.sampled_from(["acme", "  own words  ", "名前", "😀"])
            item["custom"] = draw(polite if good else st.one_of(polite, NASTY_TEXT))
        elif choice == 4:
            item["selected"] = draw(st.lists(POOL_TEXT, max_size=2))
            if draw(st.booleans()):
                item["custom"] = draw(st.one_of(NASTY_TEXT, JSON_SCALARS))
        if not good and draw(rarely(10)):
            item["id"] = draw(st.one_of(POOL_TEXT, JSON_SCALARS))
        items.append(item)
    mutation = draw(st.integers(0, 19)) if not good else 10
    if mutation == 0 and items:
        items.pop(draw(st.integers(0, len(items) - 1)))
    elif mutation == 1:
        items.append(draw(st.one_of(ANY_JSON, st.just(items[0] if items else {}))))
    elif mutation == 2:
        items.reverse()
    return {"answers": items}
