"""Property: any answers file loads to a provider or AnswersFileError; its asks answer validly
or fail with NO_PROVIDER / INVALID_ANSWER."""

from __future__ import annotations

import asyncio
import json
import os
import tempfile

from harness.hardening_strategies import (
    ANY_JSON,
    NASTY_TEXT,
    POOL_TEXT,
    json_values,
    rarely,
    valid_requests,
)
from hypothesis import event, given
from hypothesis import strategies as st

from dsh_cli.interaction import (
    INVALID_ANSWER,
    NO_PROVIDER,
    AskContext,
    UserInteractionError,
    validate_answer,
)
from dsh_cli.providers.answers_file import AnswersFileError, AnswersFileProvider

# Answers-file entries: the documented forms with hostile contents, and anything else.
ENTRY = st.one_of(
    st.none(),
    NASTY_TEXT,
    st.lists(POOL_TEXT, max_size=3),
    st.fixed_dictionaries({}, optional={"selected": st.one_of(st.lists(POOL_TEXT, max_size=3),
                                                              ANY_JSON),
                                        "custom": st.one_of(NASTY_TEXT, ANY_JSON)}),
    json_values(),
)
IDS = st.one_of(st.sampled_from(["a", "b", "db", "name", "名前", "x y"]), NASTY_TEXT)
FILE_TEXT = st.one_of(
    st.dictionaries(IDS, ENTRY, max_size=6).map(json.dumps),
    ANY_JSON.map(json.dumps),
    st.text(max_size=40),  # not JSON at all
)
FILE_BYTES = st.one_of(FILE_TEXT.map(str.encode), st.binary(max_size=40))


@st.composite
def request_and_file(draw):
    """A request and a file for it: mostly entries for its ids, sometimes anything."""
    request = draw(valid_requests())
    if draw(rarely(3)):
        return request, draw(FILE_BYTES)
    entries = {}
    for question in request.questions:
        if draw(rarely(8)):
            continue  # a missing id
        labels = question.labels
        polite = st.one_of(
            st.none(), st.sampled_from(["acme", " own words ", "名前"]),
            st.lists(st.sampled_from(labels), unique=True,
                     max_size=len(labels) if question.is_multi else 1) if labels else st.none(),
            st.fixed_dictionaries({"custom": st.sampled_from(["acme", "x"])}),
        )
        entries[question.id] = draw(ENTRY if draw(rarely(6)) else polite)
    return request, json.dumps(entries).encode()


def _load(content: bytes) -> AnswersFileProvider | AnswersFileError:
    handle, path = tempfile.mkstemp(suffix=".json")
    try:
        os.write(handle, content)
        os.close(handle)
        return AnswersFileProvider.load(path, report=lambda line: None)
    except AnswersFileError as error:
        assert path in error.message and error.code == "ANSWERS_FILE_ERROR"
        return error
    finally:
        os.unlink(path)


@given(request_and_file())
def test_any_file_loads_or_is_refused_and_every_ask_is_valid_or_routable(case):
    request, content = case
    provider = _load(content)
    if isinstance(provider, AnswersFileError):
        event("AnswersFileError")
        return
    reports: list[str] = []
    provider.report = reports.append
    try:
        answer = asyncio.run(provider.ask(AskContext(request, "q_1")))
    except UserInteractionError as error:
        event(error.code)
        assert error.code in (NO_PROVIDER, INVALID_ANSWER)
        assert reports == [f"dsh: {error.code}: {error.message}"]  # and on stderr, once
        return
    event("answered")
    assert validate_answer(request, answer) == answer
    assert reports == []
