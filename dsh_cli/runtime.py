"""Assembles one agent session from settings: seam, tools, model, store and loop.

``run``, ``chat`` and ``web`` all build their session here, so a resumed session, the
tool set and the event subscribers are the same whichever front door is used.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dsh_cli.agent import AgentLoop
from dsh_cli.config import Settings
from dsh_cli.core.errors import STORE_ERROR, StoreError
from dsh_cli.core.events import EventStream
from dsh_cli.core.ids import mint_session_id
from dsh_cli.interaction import UserInteraction
from dsh_cli.models.base import ChatModel
from dsh_cli.models.resolve import resolve_model
from dsh_cli.tools import AskUserQuestionTool, ToolRegistry, builtin_tools

if TYPE_CHECKING:
    from dsh_cli.store import SessionStore

__all__ = ["Runtime", "build_runtime"]

LATEST = "latest"


@dataclass
class Runtime:
    """One live session: what the front door drives and what it must close."""

    settings: Settings
    model: ChatModel
    ui: UserInteraction
    events: EventStream
    tools: ToolRegistry
    loop: AgentLoop
    store: SessionStore | None = None
    resumed: bool = False
    # an empty session is kept when left (dsh acp: a client may load a session it created)
    keep_empty: bool = False
    _closers: list[Any] = field(default_factory=list)

    @property
    def session_id(self) -> str:
        """The live session's id (the loop's, which the seam holds)."""
        session_id = self.loop.session_id
        assert session_id is not None  # build_runtime and new_session always give one
        return session_id

    @property
    def has_pending_calls(self) -> bool:
        return bool(self.loop.pending_tool_calls())

    def mark_interrupted(self) -> None:
        """Record open question batches as interrupted-but-resumable (signals, crashes)."""
        if self.store is not None:
            self.store.mark_interrupted(self.session_id)

    def switch_model(self, name: str) -> ChatModel:
        """Talk to the model ``name`` from the next turn on; ``ModelError`` if it cannot be."""
        settings = self.settings.for_model(name)  # its vendor's endpoint and key only
        model = resolve_model(settings)  # raises before anything changes
        model.on_retry = self.model.on_retry  # a real API keeps saying why it waits
        self.settings, self.model = settings, model
        self.loop.set_model(model)
        if self.store is not None:  # a resumed session goes on with the model it last used
            with contextlib.suppress(StoreError):
                self.store.set_model(self.session_id, model.name)
        return model

    def new_session(self) -> str:
        """A fresh conversation on the same model, tools and system prompt; its id."""
        self._leave_session()
        self.ui.later.detach()  # the old session's async batches stay stored with it
        if self.store is not None:
            session_id = self.store.create_session(self.model.name, system=self.loop.system)
            self._closers.append(self.store.record(self.events, session_id))
        else:
            session_id = mint_session_id()
        self.loop.reset(session_id)
        self.resumed = False
        return session_id

    def switch_session(self, session_id: str) -> str:
        """Continue another stored session (``/resume``): its conversation, system prompt and
        the batch it had pending; its full id. Raises ``StoreError`` (unknown, ambiguous,
        owned by another live process) and leaves the current session as it was."""
        if self.store is None:
            raise StoreError("sessions are not being stored here", STORE_ERROR)
        store = self.store
        full = store.claim(session_id)  # owned before it is read; SessionBusy otherwise
        try:
            record = _chat_record(store.load_session(full))
            recording = store.record(self.events, full)
        except BaseException:
            if full != self.session_id:
                store.release(full)
            raise
        self._leave_session(keep=full)
        self._closers[:] = [recording]
        self.ui.later.detach()
        self.ui.later.restore(record.later)
        self.loop.reset(full, messages=list(record.messages), system=record.system,
                        resume_rpc_ids=dict(record.pending_rpc_ids),
                        resume_continuations=dict(record.pending_continuations))
        self.resumed = True
        return full

    def close(self) -> None:
        self._leave_session()
        if self.store is not None:
            self.store.close()
            self.store = None

    def _leave_session(self, keep: str | None = None) -> None:
        """Stop recording the current session; one that stayed empty is not kept (unless
        it is ``keep``, the one being switched to)."""
        for closer in reversed(self._closers):
            closer()
        self._closers.clear()
        if self.store is not None and self.session_id != keep and not self.keep_empty:
            # best effort: a store that cannot be written now keeps an empty row, no more
            with contextlib.suppress(StoreError):
                self.store.forget_if_empty(self.session_id)


def build_runtime(
    settings: Settings,
    *,
    system: str | None = None,
    ask: bool = True,
    resume: str | None = None,
    persist: bool = True,
    model: ChatModel | None = None,
) -> Runtime:
    """Build the session; ``resume`` is a session id or ``"latest"`` (``-c``).

    Raises ``ModelError`` (no key, bad script) and ``StoreError`` (unusable store) with
    one-line messages for the CLI to print.
    """
    store = _open_store() if persist or resume else None
    record = None
    try:
        if resume is not None:
            assert store is not None
            # -c goes on with the latest chat, never an agent's `dsh mcp` session
            session_id = store.latest_session_id("chat") if resume == LATEST else resume
            if session_id is None:
                raise _no_session("there is no chat to continue yet: start one with `dsh` "
                                  "or `dsh run PROMPT`, then continue it with -c")
            # owned before it is read
            record = _chat_record(store.load_session(store.claim(session_id)))
            if settings.model_is_default and record.model:
                # A resumed session keeps talking to the model it was started with.
                settings = settings.for_model(record.model)
        chat_model = model or resolve_model(settings)
    except BaseException:
        if store is not None:
            store.close()
        raise
    events = EventStream()
    ui = UserInteraction(events=events, timeout=settings.question_timeout)
    tools = ToolRegistry(builtin_tools(without=() if ask else {AskUserQuestionTool.name}))
    messages: list[dict[str, Any]] = []
    pending: dict[str, str] = {}
    continuations: dict[str, dict[str, Any]] = {}
    closers = []
    if record is not None:
        session_id = record.id
        messages, pending = list(record.messages), dict(record.pending_rpc_ids)
        continuations = dict(record.pending_continuations)
        ui.later.restore(record.later)
    elif store is not None:
        session_id = store.create_session(chat_model.name, system=system)
    else:
        session_id = mint_session_id()
    if store is not None:
        closers.append(store.record(events, session_id))
    agent = ui.agents.spawn("dsh")
    loop = AgentLoop(
        model=chat_model, tools=tools, ui=ui, events=events, system=system,
        messages=messages, session_id=session_id, resume_rpc_ids=pending,
        resume_continuations=continuations, agent=agent,
    )
    if store is not None:
        # the same question again, from the same agent and directory: its last answer offered;
        # the loop's session of the moment (/new and /resume change it)
        ui.recall = lambda request: store.last_answers(request, session_id=loop.session_id)
    return Runtime(settings, chat_model, ui, events, tools, loop, store,
                   resumed=resume is not None, _closers=closers)


def _open_store() -> Any:
    from dsh_cli.store import SessionStore

    return SessionStore.open()


def _chat_record(record: Any) -> Any:
    """``record`` when it is a chat; an agent's session has no model to talk to."""
    if record.agent is None:
        return record
    from dsh_cli.core.sanitize import sanitize_line

    raise _no_session(f"session {record.id} holds the questions {sanitize_line(record.agent)} "
                      "asked through `dsh mcp`, not a chat to continue; `dsh sessions show "
                      f"{record.id}` shows them")


def _no_session(message: str) -> Exception:
    from dsh_cli.core.errors import NOTHING_TO_RESUME, UsageError

    return UsageError(message, NOTHING_TO_RESUME)
