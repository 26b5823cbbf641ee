"""A server's elicitations, asked through the seam of the tool call that caused them.

``Elicitor`` is the SDK's ``elicitation_callback`` (one ``elicitation/create`` of the session
era) and also answers every input request of a 2026-07-28 input-required result at once
(``answer``), so several requests become one batch with ids ``KEY/PROPERTY``. The batch goes
to the current call's ``UserInteraction`` (``McpTool.run`` marks the call with
``calling``); the human's time does not count against the call's ``tool_timeout``.

A resumed call re-asks under the stored ``rpc_id`` (``CurrentCall.take_rpc_id``); when the
server then refuses the stored round's state and the call starts over, the answer just
given stands for the same batch asked again, once (``CurrentCall.start_over``), so the
human is not asked twice for one thing; a different batch is asked under that ``rpc_id``.

Outcomes, per ``spec/mcp.md``: answered → ``accept`` with typed content; ``ASK_DECLINED``
→ ``decline``; cancelled, timed out, aborted, or nobody to answer → ``cancel``. A schema
dsh cannot ask is refused with JSON-RPC -32602 before anything is shown.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from dsh_cli.core.errors import (
    ASK_DECLINED,
    EMPTY_QUESTIONS,
    INVALID_QUESTIONS,
    NO_PROVIDER,
    UserInteractionError,
)
from dsh_cli.core.tasks import close_task
from dsh_cli.mcp_client.forms.elicitation import (
    INVALID_PARAMS,
    FormField,
    SchemaRefused,
    build_request,
    form_content,
    form_fields,
)
from dsh_cli.mcp_client.forms.url_mode import OPEN, Page, consent_question, open_page, parse_page

if TYPE_CHECKING:
    from dsh_cli.interaction.service import UserInteraction
    from dsh_cli.interaction.vocabulary import AskUserQuestionAnswer, AskUserQuestionRequest
    from dsh_cli.tools.registry import ToolContext

    # what one ask ended with: the human's answer, or the error (decline, cancel, ...)
    Outcome = AskUserQuestionAnswer | UserInteractionError

__all__ = ["CurrentCall", "Elicitor", "UrlRequest", "current_call"]

SINGLE_URL_ID = "open"
_UNASKABLE = frozenset({INVALID_QUESTIONS, EMPTY_QUESTIONS})  # the seam refused the batch


@dataclass(eq=False)
class CurrentCall:
    """The tool call a server's questions belong to, and its timeout to pause."""

    ctx: ToolContext
    deadline: asyncio.Timeout | None = None
    resume_rpc_id: str | None = None  # the stored rpc_id: the first batch re-asks under it
    ended: bool = False  # the call is over (and its timeout with it)
    _stored_rpc_id: str | None = field(default=None, init=False)
    _last: tuple[dict[str, Any], Outcome] | None = field(default=None, init=False)
    _offered: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        self._stored_rpc_id = self.resume_rpc_id

    def take_rpc_id(self) -> str | None:
        rpc_id, self.resume_rpc_id = self.resume_rpc_id, None
        return rpc_id

    def start_over(self) -> None:
        """The call begins again (its stored state was refused): the last outcome may
        settle the same batch once more, and a different one re-asks the stored rpc_id."""
        self.resume_rpc_id = self._stored_rpc_id
        self._offered = True

    def settled_before(self, request: AskUserQuestionRequest) -> Outcome | None:
        """The outcome offered by ``start_over`` if ``request`` is the batch it settled."""
        offered, self._offered = self._offered, False
        if offered and self._last is not None and self._last[0] == _shape(request):
            self.resume_rpc_id = None  # that batch's row keeps its answer
            return self._last[1]
        return None

    def remember(self, request: AskUserQuestionRequest, outcome: Outcome) -> None:
        self._last = (_shape(request), outcome)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """The human's time is not the server's: the call's timeout stops while asking."""
        deadline = self.deadline
        if deadline is None or deadline.when() is None:
            yield
            return
        loop = asyncio.get_running_loop()
        remaining = max(0.0, (deadline.when() or 0.0) - loop.time())
        deadline.reschedule(None)
        try:
            yield
        finally:
            # session-era questions are asked on the SDK's receive task, so the call can end
            # first (the run interrupted, the server gone): then there is no timeout to resume
            if not self.ended:
                deadline.reschedule(loop.time() + remaining)


_current: ContextVar[CurrentCall | None] = ContextVar("dsh_mcp_current_call", default=None)


def current_call() -> CurrentCall | None:
    return _current.get()


UrlAction = Literal["accept", "decline", "cancel"]
_URL_ACTIONS: dict[str, UrlAction] = {"accept": "accept", "decline": "decline",
                                      "cancel": "cancel"}


@dataclass(frozen=True)
class UrlRequest:
    """A server's URL request as a front door with its own URL UI is handed it."""

    server: str
    message: str | None
    url: str  # as the browser will read it (``url_mode.parse_page``)
    elicitation_id: str | None
    call_id: str | None


class UrlAsker(Protocol):
    """A front door that shows URL requests in its own UI (``Elicitor``'s ``url_asker``)."""

    async def __call__(self, asked: UrlRequest) -> str:
        """The human's "accept", "decline" or "cancel"."""

    def completed(self, server: str, elicitation_id: str) -> None:
        """``server`` says the page of its request ``elicitation_id`` is done with."""


@dataclass(frozen=True)
class _Plan:
    """How one input request is asked and answered."""

    key: str
    mode: str  # "form" | "url"
    message: str | None
    fields: list[FormField] = field(default_factory=list)
    page: Page | None = None
    question_id: str | None = None
    elicitation_id: str | None = None  # a URL request's own id (a front door may use it)
    several: bool = False  # the batch's heading cannot carry each request's message

    def questions(self) -> list[dict[str, Any]]:
        if self.mode == "url":
            assert self.page is not None and self.question_id is not None
            return [consent_question(self.question_id, self.page,
                                     self.message if self.several else None)]
        return [dict(item.question) for item in self.fields]


class Elicitor:
    """Answers one server's elicitations; ``fallback`` is asked when no call is current.

    ``url_asker``: a front door whose human sees URLs in their own UI (an ACP editor that
    takes URL-mode elicitation) is handed the URL requests instead of dsh's consent
    question: ``await url_asker(UrlRequest)`` returns "accept", "decline" or "cancel".
    """

    def __init__(self, server: str, fallback: UserInteraction | None = None, *,
                 open_url: Callable[[str], object] = open_page,
                 answerable: bool = False,
                 url_asker: UrlAsker | None = None) -> None:
        self.server = server
        self.fallback = fallback
        self.open_url = open_url
        self.url_asker = url_asker
        # the session will register its answer source right after the servers start
        self.answerable = answerable
        self._active: list[CurrentCall] = []

    @property
    def can_answer(self) -> bool:
        """Whether to declare the capability: a provider is (or is about to be) there."""
        return self.fallback is not None and (self.answerable
                                              or self.fallback.provider is not None)

    @contextlib.contextmanager
    def calling(self, ctx: ToolContext,
                deadline: asyncio.Timeout | None = None) -> Iterator[CurrentCall]:
        """Mark ``ctx`` as the call whose questions these are, for the call's duration."""
        call = CurrentCall(ctx, deadline, ctx.rpc_id)
        token = _current.set(call)
        self._active.append(call)
        try:
            yield call
        finally:
            call.ended = True
            self._active.remove(call)
            _current.reset(token)

    def current(self) -> CurrentCall | None:
        """The call in this task, else the latest one: session-era requests arrive on the
        SDK's receive task, which does not share the calling task's context."""
        return _current.get() or (self._active[-1] if self._active else None)

    async def __call__(self, context: Any, params: Any) -> Any:
        """The SDK's ``elicitation_callback``: one request, one batch."""
        from mcp_types import ErrorData

        answered = await self.answer({"": params})
        return answered if isinstance(answered, ErrorData) else answered[""]

    async def answer(self, requests: Mapping[str, Any],
                     continuation: dict[str, Any] | None = None) -> Any:
        """``ElicitResult`` by key for ``ElicitRequest`` params, or one ``ErrorData``.

        ``continuation`` is stored with the batch before it is shown (``resume.py``).
        """
        from mcp_types import ElicitResult, ErrorData

        several = len(requests) > 1
        call = self.current()
        ui = call.ctx.user_interaction if call is not None else self.fallback
        try:
            plans = [_plan(key, params, several) for key, params in requests.items()]
            questions = [question for plan in plans for question in plan.questions()]
            message = " · ".join(dict.fromkeys(plan.message for plan in plans
                                               if plan.message))
            request = build_request(self.server, message or None, questions,
                                    # its own: an answered form seals its signal, and
                                    # the tool call must stay abortable after it
                                    signal=call.ctx.signal.child() if call else None,
                                    call_id=call.ctx.call_id if call else None,
                                    messages=_own_messages(plans))
        except SchemaRefused as refused:
            return ErrorData(code=INVALID_PARAMS, message=f"dsh cannot ask this form: "
                             f"{refused}")
        if self.url_asker is not None and all(plan.mode == "url" for plan in plans):
            return {plan.key: ElicitResult(action=await self._url(plan, call))
                    for plan in plans}
        request.continuation = continuation
        outcome = call.settled_before(request) if call is not None else None
        if outcome is None:
            outcome = await self._ask(ui, request, call)
        if isinstance(outcome, UserInteractionError) and outcome.code in _UNASKABLE:
            # nothing was shown: the server learns why, instead of a "cancel" no one chose
            return ErrorData(code=INVALID_PARAMS, message=f"dsh cannot ask this form: "
                             f"{outcome}")
        if isinstance(outcome, UserInteractionError):
            declined = outcome.code == ASK_DECLINED
            return {plan.key: ElicitResult(action="decline" if declined else "cancel")
                    for plan in plans}
        return {plan.key: self._result(plan, outcome) for plan in plans}

    async def _ask(self, ui: UserInteraction | None, request: AskUserQuestionRequest,
                   call: CurrentCall | None) -> Outcome:
        """The human's answer, or the ``UserInteractionError`` the ask ended with."""
        outcome: Outcome
        try:
            if ui is None:
                raise UserInteractionError("no question provider can answer", NO_PROVIDER)
            with call.paused() if call is not None else contextlib.nullcontext():
                outcome = await ui.ask(request, rpc_id=call.take_rpc_id() if call else None)
        except UserInteractionError as error:
            outcome = error
        if call is not None:
            call.remember(request, outcome)
        return outcome

    def completed(self, elicitation_id: str) -> None:
        """The server's ``notifications/elicitation/complete``: its URL-mode page is done.
        Told to a front door that showed the URL itself; else nothing waits on it."""
        if self.url_asker is not None:
            self.url_asker.completed(self.server, elicitation_id)

    async def _url(self, plan: _Plan, call: CurrentCall | None) -> UrlAction:
        """The front door's own answer to one URL request ("cancel" if it gives none)."""
        assert self.url_asker is not None and plan.page is not None
        asked = UrlRequest(self.server, plan.message, plan.page.href, plan.elicitation_id,
                           call.ctx.call_id if call is not None else None)
        signal = call.ctx.signal if call is not None else None
        asking = asyncio.ensure_future(self.url_asker(asked))
        waiters: set[asyncio.Future[Any]] = {asking}
        abort = asyncio.ensure_future(signal.wait()) if signal is not None else None
        if abort is not None:
            waiters.add(abort)
        try:
            with call.paused() if call is not None else contextlib.nullcontext():
                await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if abort is not None:
                abort.cancel()
            if not asking.done():  # the call was cancelled: the page is not waited for
                await close_task(asking)
        if asking.cancelled() or asking.exception() is not None:
            return "cancel"
        return _URL_ACTIONS.get(asking.result(), "cancel")

    def _result(self, plan: _Plan, answer: AskUserQuestionAnswer) -> Any:
        from mcp_types import ElicitResult

        if plan.mode == "url":
            chosen = next((item for item in answer.answers if item.id == plan.question_id),
                          None)
            if chosen is None or chosen.selected != [OPEN]:
                return ElicitResult(action="decline")
            assert plan.page is not None
            self.open_url(plan.page.href)  # the very URL the consent showed
            return ElicitResult(action="accept")
        try:
            return ElicitResult(action="accept", content=form_content(plan.fields, answer))
        except UserInteractionError:
            return ElicitResult(action="cancel")  # a value no rule let through is never sent


def _own_messages(plans: list[_Plan]) -> dict[str, str] | None:
    """Each form question's own request message, when the batch's forms differ in it
    (a URL consent question carries its message in its own text)."""
    messages = {str(question["id"]): plan.message for plan in plans
                if plan.mode == "form" and plan.message for question in plan.questions()}
    return messages if len(set(messages.values())) > 1 else None


def _shape(request: AskUserQuestionRequest) -> dict[str, Any]:
    """What makes two batches the same to the human: questions, heading, offered actions."""
    return request.model_dump(mode="json")


def _plan(key: str, params: Any, several: bool) -> _Plan:
    """Map one request; ids carry the request key only when several share the batch."""
    mode = getattr(params, "mode", "form")
    message = getattr(params, "message", None)
    if mode == "url":
        # parsed once, as the browser will: what is shown is what is opened
        page = parse_page(str(getattr(params, "url", "")))
        ident = key if several else SINGLE_URL_ID
        return _Plan(key, "url", message, page=page, question_id=ident, several=several,
                     elicitation_id=str(getattr(params, "elicitation_id", "") or "") or None)
    fields = form_fields(getattr(params, "requested_schema", None), key if several else None)
    return _Plan(key, "form", message, fields, several=several)
