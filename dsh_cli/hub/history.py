"""The hub's ``GET /history``: the audit, each step with its entry, for a human's token.

Only a human token reads it (none, an agent's or an unknown one: 401, one line); it shows
the steps of the entries that human may see (``routes.visible``: their team's and unteamed
ones), a page at a time in the order they happened, filtered by the query: ``since``
(seconds since the epoch), ``agent`` (the asker's token name or its own name), ``human``
(steps that human took), ``state`` (of the entry now), ``after`` (the last step id read)
and ``limit``. The body is ``{"items": [...], "next": ID | null}``: ``next`` is the
``after`` of the next page, null when this one was the last.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, get_args

from dsh_cli.hub.records import EntryState, HistoryItem

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from dsh_cli.hub.context import HubContext

__all__ = ["HISTORY_LIMIT", "HISTORY_PAGE", "HISTORY_PATH", "history_item", "history_routes",
           "summary"]

HISTORY_PATH = "/history"
HISTORY_PAGE = 100  # steps a page holds unless the query asks for fewer or more
HISTORY_LIMIT = 500  # the most one page may hold: each carries up to ~13 KB of labels
SUMMARY_CHARACTERS = 300  # what was asked and answered, as one line each, cut to this
FILTER_CHARACTERS = 4096  # an agent or human name to filter by (as long as a kept label)
UNAUTHORISED = ("a human token is needed: Authorization: Bearer <the token of "
                "`dsh hub token add NAME --human`>\n")


def history_routes(hub: HubContext) -> list[Route]:
    """``GET /history`` for the serving hub's app."""
    from starlette.routing import Route

    async def history(request: Request) -> Response:
        import asyncio

        from starlette.responses import JSONResponse, PlainTextResponse

        from dsh_cli.hub.context import holder

        human = await holder(hub, request.headers)
        if human is None or human.kind != "human":
            return PlainTextResponse(UNAUTHORISED, 401, {"WWW-Authenticate": "Bearer"})
        try:
            query = _query(request.query_params)
        except ValueError as error:
            return PlainTextResponse(f"{error}\n", 400)
        teams = [human.team] if human.team is not None else []
        page = await asyncio.to_thread(hub.store.history, teams=teams, **query)
        last = page.items[-1].step.id if page.more and page.items else None
        return JSONResponse({"items": [history_item(item) for item in page.items],
                             "next": last})

    return [Route(HISTORY_PATH, history, methods=["GET"])]


def _query(params: Any) -> dict[str, Any]:
    """The query string as ``HubStore.history``'s arguments; a bad value: ValueError, one line."""
    query: dict[str, Any] = {"limit": HISTORY_PAGE}
    unknown = set(params) - {"since", "agent", "human", "state", "after", "limit"}
    if unknown:
        raise ValueError(f"unknown query parameter {sorted(unknown)[0][:64]!r}")
    if "since" in params:
        since = _number(params["since"], "since")
        if not math.isfinite(since):
            raise ValueError("since must be a finite number of seconds since the epoch")
        query["since"] = since
    for name in ("after", "limit"):
        if name in params:
            value = params[name]
            if not (value.isascii() and value.isdigit() and len(value) <= 18):
                raise ValueError(f"{name} must be a whole number, not {value[:32]!r}")
            query[name] = int(value)
    if not 1 <= query["limit"] <= HISTORY_LIMIT:
        raise ValueError(f"limit must be from 1 to {HISTORY_LIMIT}")
    for name in ("agent", "human"):
        if name in params:
            if len(params[name]) > FILTER_CHARACTERS:
                raise ValueError(f"{name} is over {FILTER_CHARACTERS} characters")
            query[name] = params[name]
    if "state" in params:
        states = get_args(EntryState)
        if params["state"] not in states:
            raise ValueError(f"state must be one of {', '.join(states)}")
        query["state"] = params["state"]
    return query


def _number(text: str, name: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{name} must be a number of seconds since the epoch, "
                         f"not {text[:32]!r}") from None


def history_item(item: HistoryItem) -> dict[str, Any]:
    """One step as ``/history`` sends it: who did what, when, where, and to which entry."""
    step, entry = item.step, item.entry
    return {
        "id": step.id, "at": step.at, "action": step.action, "actor": step.actor,
        "replica": step.replica,
        "entry": {
            "id": entry.id, "kind": entry.kind, "token": entry.token, "agent": entry.agent,
            "machine": entry.machine, "cwd": entry.cwd, "team": entry.team,
            "state": entry.state, "answered_by": entry.answered_by,
            "created_at": entry.created_at, "resolved_at": entry.resolved_at,
            "asked": summary(entry.batch, entry.kind),
            "answer": summary(entry.answer, "answer") if entry.answer is not None else None,
        },
    }


def summary(value: dict[str, Any], what: str) -> str:
    """A batch, permission request or answer as one short line of its own words (untrusted:
    whoever shows it sanitises it)."""
    if what == "question":
        questions = value.get("questions")
        words = [str(question.get("question", "")) for question in questions
                 if isinstance(question, dict)] if isinstance(questions, list) else []
        text = " / ".join(words)
    elif what == "permission":
        text = str(value.get("tool", ""))
        if isinstance(value.get("description"), str):
            text += f": {value['description']}"
    else:
        text = _answer(value)
    return text[:SUMMARY_CHARACTERS]


def _answer(answer: dict[str, Any]) -> str:
    """The settling frame's gist: the decision, the labels chosen, or how it ended."""
    kind = str(answer.get("type", ""))
    if "decision" in answer:
        return str(answer["decision"])
    answers = answer.get("answers")
    if not isinstance(answers, list):
        return kind.rpartition("/")[2]  # question/cancel -> cancel, question/decline -> ...
    parts = []
    for one in answers:
        if not isinstance(one, dict):
            continue
        chosen = [str(label) for label in one.get("selected") or [] if label is not None]
        if one.get("custom") is not None:
            chosen.append(f'"{one["custom"]}"')
        parts.append(", ".join(chosen) or "(skipped)")
    return " / ".join(parts)
