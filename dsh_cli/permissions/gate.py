"""``PermissionGate``: decides whether one tool call may run, asking the human when it must.

Rules first (deny, ``--yes``, ask, allow, the read-only default), then approvals given for
this session or saved "always" for what the human saw (``approvals``), then the active permission
provider. With nothing to ask, the call fails at once with ``NO_PERMISSION_PROVIDER``: a
headless run never hangs. An approvals file that cannot be read applies nothing (one
``notice``); an "always" that cannot be saved still allows this call and this session, and
the resolved event says in one line that it was not remembered. A request that is asked is
announced on the event stream (``permission/requested``, ``permission/resolved``), so the
store and the relay see it.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from dsh_cli.core.decisions import DECIDED_WORDS
from dsh_cli.core.errors import (
    ASK_ABORTED,
    ASK_TIMEOUT,
    DUPLICATE_PROVIDER,
    NO_PERMISSION_PROVIDER,
    PERMISSION_DENIED,
    HarnessError,
    PermissionRequestError,
    PrivateFileError,
    format_line,
)
from dsh_cli.core.events import EventStream, PermissionRequested, PermissionResolved
from dsh_cli.core.outcomes import permission_outcome
from dsh_cli.core.tasks import close_task
from dsh_cli.permissions.rules import Rules
from dsh_cli.permissions.vocabulary import PermissionDecision, PermissionRequest

if TYPE_CHECKING:
    from dsh_cli.permissions.approvals import Approvals

__all__ = ["PermissionGate", "PermissionProvider"]


class PermissionProvider(Protocol):
    """A UI that shows one permission request and returns the human's decision."""

    async def decide(self, request: PermissionRequest, rpc_id: str) -> PermissionDecision: ...


class PermissionGate:
    """Rules, approvals and the single active permission provider of one session."""

    def __init__(self, rules: Rules | None = None, approvals: Approvals | None = None, *,
                 events: EventStream | None = None, timeout: float | None = None,
                 session_id: str | None = None,
                 notice: Callable[[str], None] | None = None) -> None:
        self.rules = rules or Rules()
        self.notice = notice
        self._unreadable: set[str] = set()  # files already named in a notice
        self.approvals = approvals
        self.events = events or EventStream()
        self.timeout = timeout
        self.session_id = session_id
        self._session: set[tuple[str, str]] = set()
        self._provider: PermissionProvider | None = None

    @property
    def provider(self) -> PermissionProvider | None:
        return self._provider

    def register_provider(self, provider: PermissionProvider) -> Callable[[], None]:
        """Make ``provider`` the active one; returns its disposer (safe to call twice)."""
        if self._provider is not None:
            raise PermissionRequestError("another permission provider is already active",
                                         DUPLICATE_PROVIDER)
        self._provider = provider

        def dispose() -> None:
            if self._provider is provider:
                self._provider = None

        return dispose

    async def check(self, request: PermissionRequest, digest: str) -> PermissionDecision:
        """The decision for this call; raises ``PermissionRequestError`` when it may not run."""
        verdict, why = self.rules.verdict(request.tool, request.hints, request.server,
                                          request.arguments)
        if verdict == "deny":
            raise PermissionRequestError(f"{request.tool} is denied by {why}",
                                         PERMISSION_DENIED)
        if verdict == "allow":
            return PermissionDecision("allow_once", why)
        key = (request.tool, digest)
        if key in self._session:
            return PermissionDecision("allow_session", DECIDED_WORDS["allow_session"])
        if self._approved(request, digest):
            return PermissionDecision("allow_always", DECIDED_WORDS["allow_always"])
        provider = self._provider
        if provider is None:
            raise PermissionRequestError(
                f"{request.tool} needs permission and nothing can ask the human; allow it "
                f"with --allow {request.tool} (or --yes), or run where someone can answer",
                NO_PERMISSION_PROVIDER)
        decision = await self._ask(provider, request, digest)
        if decision.decision == "deny":
            reason = f": {decision.message}" if decision.message else ""
            raise PermissionRequestError(f"the user denied {request.tool}{reason}",
                                         PERMISSION_DENIED)
        if decision.decision in ("allow_session", "allow_always"):
            self._session.add(key)
        return decision

    def _approved(self, request: PermissionRequest, digest: str) -> bool:
        """Whether a saved "always" covers this call; an unreadable file covers nothing."""
        if self.approvals is None:
            return False
        try:
            return self.approvals.approved(request, digest)
        except PrivateFileError as error:
            if self.notice is not None and str(error.path) not in self._unreadable:
                self._unreadable.add(str(error.path))
                self.notice(format_line(error.code,
                                        f"{error.message}; saved approvals are not applied"))
            return False

    def _remember(self, request: PermissionRequest, digest: str,
                  decision: PermissionDecision) -> PermissionDecision:
        """Save an "always"; one that cannot be saved is this session's, and says so."""
        if decision.decision != "allow_always" or self.approvals is None:
            return decision
        try:
            self.approvals.approve(request, digest)
        except PrivateFileError as error:
            said = f'"always" was not remembered: {error.message}'
            if self.notice is not None:  # the provider said "allowed always" already
                self.notice(format_line(error.code, f"{said}; allowed for this session only"))
            return PermissionDecision("allow_session", said)
        return decision

    async def _ask(self, provider: PermissionProvider, request: PermissionRequest,
                   digest: str) -> PermissionDecision:
        rpc_id = "p_" + os.urandom(8).hex()
        # the request belongs to the session it is announced in: only its frames settle it
        request = replace(request, session_id=self.session_id)
        self.events.emit(PermissionRequested(
            rpc_id=rpc_id, session_id=self.session_id, call_id=request.call_id,
            tool=request.tool, server=request.server, arguments=request.arguments,
            hints=request.hints.to_json(), description=request.description))
        try:
            decision = self._remember(request, digest,
                                      await self._settle(provider, request, rpc_id))
        except HarnessError as error:
            self.events.emit(PermissionResolved(rpc_id, permission_outcome(error.code)))
            raise
        except BaseException:
            self.events.emit(PermissionResolved(rpc_id, permission_outcome(None)))
            raise
        self.events.emit(PermissionResolved(rpc_id, "decided", decision.decision,
                                            decision.message))
        return decision

    async def _settle(self, provider: PermissionProvider, request: PermissionRequest,
                      rpc_id: str) -> PermissionDecision:
        """The provider's decision, unless the owner aborts or the timeout passes first."""
        task = asyncio.ensure_future(provider.decide(request, rpc_id))
        waiters: set[asyncio.Future[Any]] = {task}
        abort = asyncio.ensure_future(request.signal.wait()) if request.signal else None
        if abort is not None:
            waiters.add(abort)
        try:
            done, _ = await asyncio.wait(waiters, timeout=self.timeout,
                                         return_when=asyncio.FIRST_COMPLETED)
            if task in done:
                decision = task.result()
                if not isinstance(decision, PermissionDecision):
                    raise PermissionRequestError("the permission provider gave no decision",
                                                 ASK_ABORTED)
                return decision
            if abort is not None and abort in done:
                raise PermissionRequestError(
                    f"the permission request was aborted ({request.signal.reason})"
                    if request.signal else "the permission request was aborted", ASK_ABORTED)
            raise PermissionRequestError("the permission request timed out", ASK_TIMEOUT)
        finally:
            if abort is not None:
                abort.cancel()
            await close_task(task)
