"""The OpenAI-compatible chat client: DeepSeek by default, any compatible endpoint by URL.

It streams with the official ``openai`` SDK, imported on first use (never when this
module is imported, so resolving a model stays cheap).
The SDK's own retries are off: this client retries itself, and only while nothing of
the turn has been yielded, so a retry can never repeat text the caller already has.

Requests go through the SDK's generic ``post`` (its documented way to reach any path):
the SDK still does auth, connections, server-sent events and status errors, but skips
re-validating the whole conversation on every call (Python work that grows with the
chat, tens of milliseconds for a long one; our messages are already wire-format JSON),
and chunks arrive as plain dicts rather than model objects.

Every failure is a ``ModelError`` with one of these codes and a one-line message that
never contains the API key (it is scrubbed from any text a server sends back):

    MODEL_AUTH          401/403: the key is missing, wrong or not allowed
    MODEL_NOT_FOUND     404: unknown model, or a base URL without that endpoint
    MODEL_BAD_REQUEST   other 4xx: the server refused the request
    MODEL_CONTEXT       400/413 saying the conversation is longer than the context window
    MODEL_RATE_LIMIT    429 still refused after the retries, or a Retry-After too long to wait
    MODEL_SERVER        5xx (and 409) still failing after the retries
    MODEL_TIMEOUT       no response, or no content mid-stream, within ``timeout`` seconds;
                        or the whole call took longer than ``deadline`` seconds
    MODEL_CONNECTION    the server could not be reached, after the retries
    MODEL_STREAM        the stream broke off or ended before the message was complete

Retried, with exponential backoff from ``retry_base_delay`` (capped at
``max_retry_delay``) or the server's ``Retry-After``/``retry-after-ms`` when it sends
one: 429, 5xx, 408, 409 and connection failures, ``max_retries`` times. Timeouts are not
retried: a server that is silent for ``timeout`` seconds is reported at once.
``timeout`` is an idle deadline on *content* (text, reasoning, a tool-call fragment), not
on bytes: SSE comments, empty chunks and keep-alives do not reset it, so a server cannot
hold a turn open by sending nothing useful. Long answers still stream, but ``deadline``
bounds the whole call (retries and their waits included) so a trickle ends too. A turn
past ``MAX_TURN_CHARS`` is ``MODEL_STREAM`` carrying the text that came before it.

DeepSeek's ``reasoning_content`` (``deepseek-reasoner``) is yielded as ``ReasoningDelta``
and never sent back: it is removed from any message before a request.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from dsh_cli.core.defaults import KEY_VARIABLES_HINT
from dsh_cli.core.errors import (
    MODEL_AUTH,
    MODEL_BAD_REQUEST,
    MODEL_CONNECTION,
    MODEL_CONTEXT,
    MODEL_NOT_FOUND,
    MODEL_RATE_LIMIT,
    MODEL_SERVER,
    MODEL_STREAM,
    MODEL_TIMEOUT,
)
from dsh_cli.core.sanitize import one_line, sanitize_line
from dsh_cli.core.urls import masked
from dsh_cli.models.base import (
    ModelError,
    ReasoningDelta,
    RetryHook,
    RetryNotice,
    StreamItem,
    TextDelta,
    ignore_retry,
)
from dsh_cli.models.key_scrub import scrub_key
from dsh_cli.models.turn_assembly import TurnAssembler, TurnTooLong

if TYPE_CHECKING:  # the SDK is imported at the first request, not with this module
    from openai import APIError, APIStatusError, AsyncOpenAI

__all__ = [
    "MODEL_AUTH",
    "MODEL_BAD_REQUEST",
    "MODEL_CONNECTION",
    "MODEL_CONTEXT",
    "MODEL_NOT_FOUND",
    "MODEL_RATE_LIMIT",
    "MODEL_SERVER",
    "MODEL_STREAM",
    "MODEL_TIMEOUT",
    "OpenAIChatModel",
    "RetryNotice",
]

# Fields of a stored message that are ours or a provider's output, never API input.
_NOT_FOR_THE_API = ("reasoning_content", "reasoning")

_CONTEXT_PATTERNS = re.compile(
    r"context[ _-]?length|context window|context size|maximum context|too many tokens|"
    r"prompt is too long|reduce the length",
    re.IGNORECASE,
)
_MAX_DETAIL = 300


class _Failure(Exception):
    """An error already translated, with whether and when it may be retried."""

    def __init__(self, error: ModelError, retry: bool, retry_after: float | None = None):
        super().__init__(error.message)
        self.error = error
        self.retry = retry
        self.retry_after = retry_after


class OpenAIChatModel:
    """``ChatModel`` over ``POST {base_url}/chat/completions`` with ``stream: true``."""

    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        api_key: str,
        timeout: float = 60.0,
        deadline: float = 600.0,
        max_retries: int = 3,
        retry_base_delay: float = 0.5,
        max_retry_delay: float = 8.0,
        max_retry_after: float = 60.0,
        include_usage: bool = True,
        on_retry: RetryHook | None = None,
        key_variable: str | None = None,
    ) -> None:
        self.name = model
        self.model = model
        self.base_url = base_url
        self.timeout = timeout
        self.deadline = deadline
        self.max_retries = max_retries
        self.retry_base_delay = retry_base_delay
        self.max_retry_delay = max_retry_delay
        self.max_retry_after = max_retry_after
        self.include_usage = include_usage
        self.on_retry: RetryHook = on_retry or ignore_retry
        self.__key = api_key or ""
        # the variable the key was read from: an auth error names it, not the whole list
        self.key_variable = key_variable
        self._client: AsyncOpenAI | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:  # the key stays out of logs and tracebacks
        return f"OpenAIChatModel(model={self.model!r}, base_url={masked(self.base_url)!r})"

    async def aclose(self) -> None:
        """Close the HTTP connections of the current event loop's client."""
        client, self._client = self._client, None
        if client is not None and self._client_loop is asyncio.get_running_loop():
            await client.close()

    def _client_for_loop(self) -> AsyncOpenAI:
        # An SDK client's connection pool belongs to the loop it first ran on. Our own
        # httpx client, unlike the SDK's default one, does not try to close itself on a
        # dead loop when it is dropped (noise on stderr when a loop was left unclosed).
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            from openai import AsyncOpenAI, DefaultAsyncHttpxClient

            self._client = AsyncOpenAI(
                api_key=self.__key or "missing",
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=0,
                http_client=DefaultAsyncHttpxClient(),
            )
            self._client_loop = loop
        return self._client

    def _request(self, messages: list[dict[str, Any]],
                 tools: list[dict[str, Any]]) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.model,
            "messages": [
                _for_the_api(message)
                if "reasoning_content" in message or "reasoning" in message else message
                for message in messages
            ],
            "stream": True,
        }
        if tools:  # an empty list is refused by OpenAI itself
            request["tools"] = tools
        if self.include_usage:
            request["stream_options"] = {"include_usage": True}
        return request

    async def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> AsyncIterator[StreamItem]:
        """Yield text and reasoning deltas as they arrive, then the ``Completion``."""
        import openai

        client = self._client_for_loop()
        request = self._request(messages, tools)
        clock = asyncio.get_running_loop().time
        deadline = clock() + self.deadline
        attempt = 0
        while True:
            assembler = TurnAssembler(key=self.__key)
            yielded = False
            opened = False
            try:
                try:
                    response = await self._before(deadline, client.post(
                        "/chat/completions", cast_to=object, body=request, stream=True,
                        stream_cls=openai.AsyncStream[object]))
                    opened = True
                    self._check_event_stream(response)
                    try:
                        async with aclosing(self._items(response, assembler, deadline)) as items:
                            async for item in items:
                                yielded = True
                                yield item
                    finally:
                        await response.close()
                except openai.OpenAIError as error:
                    raise self._translate(error, opened) from None
                except json.JSONDecodeError:
                    raise _Failure(ModelError(
                        "the model stream sent data that is not JSON", MODEL_STREAM),
                        retry=True) from None
                except UnicodeDecodeError:
                    raise _Failure(ModelError(
                        "the model stream sent bytes that are not UTF-8", MODEL_STREAM),
                        retry=True) from None
                if assembler.finish_reason is None:
                    raise _Failure(ModelError(
                        "the model stream ended before the message was complete",
                        MODEL_STREAM), retry=True)
            except _Failure as caught:
                failure = caught
            else:
                for item in assembler.flush():
                    yield item
                yield assembler.completion()
                return
            # Raised here, outside any handler, the error chains nothing: the SDK's
            # exception holds the request, and the request holds the key.
            if yielded or not failure.retry or attempt >= self.max_retries:
                raise failure.error
            delay = self._backoff(attempt, failure.retry_after)
            if delay is None or clock() + delay >= deadline:
                raise failure.error
            attempt += 1
            self.on_retry(RetryNotice(attempt, delay, failure.error))
            await asyncio.sleep(delay)

    async def _before(self, deadline: float, call: Awaitable[Any]) -> Any:
        """``call``'s result, or a timeout ``_Failure`` when the whole-call deadline passes."""
        remaining = deadline - asyncio.get_running_loop().time()
        try:
            async with asyncio.timeout(max(remaining, 0)):
                return await call
        except TimeoutError:
            raise self._deadline_failure() from None

    async def _items(self, response: Any, assembler: TurnAssembler,
                     deadline: float) -> AsyncGenerator[TextDelta | ReasoningDelta, None]:
        """The stream's deltas, under two deadlines: ``timeout`` seconds between pieces of
        content (an SSE comment, an empty chunk or a usage report is not content) and
        ``deadline`` for the whole call; the HTTP read timeout alone resets on any byte.
        """
        chunks = response.__aiter__()
        watchdog = _Watchdog(self.timeout, deadline)
        try:
            while True:
                try:
                    chunk = await watchdog.guard(chunks.__anext__())
                except StopAsyncIteration:
                    return
                except _Expired as expired:
                    if expired.idle:
                        raise _Failure(ModelError(
                            f"no data from {_host(self.base_url)} within {self.timeout:g}s "
                            f"(model {self.model}): no text, reasoning or tool call arrived",
                            MODEL_TIMEOUT), retry=False) from None
                    raise self._deadline_failure() from None
                progress = assembler.progress
                try:
                    items = assembler.feed(chunk)
                except (AttributeError, TypeError, KeyError, IndexError):
                    raise _Failure(ModelError(
                        "the model stream sent a chunk of the wrong shape",
                        MODEL_STREAM), retry=False) from None
                except TurnTooLong as error:
                    raise _Failure(ModelError(
                        f"{error}; the turn was cut there (what came before is kept)",
                        MODEL_STREAM, partial=error.content), retry=False) from None
                if assembler.progress != progress:
                    watchdog.content()
                for item in items:
                    yield item
        finally:
            watchdog.close()

    def _deadline_failure(self) -> _Failure:
        return _Failure(ModelError(
            f"model {self.model} at {_host(self.base_url)} did not finish within "
            f"{self.deadline:g}s", MODEL_TIMEOUT), retry=False)

    def _backoff(self, attempt: int, retry_after: float | None) -> float | None:
        """Seconds to wait before retry ``attempt + 1``; None when the server asks too much."""
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after else None
        delay = min(self.retry_base_delay * (2.0 ** attempt), self.max_retry_delay)
        return delay * (1 - 0.25 * random.random())  # jitter: clients do not retry in step

    def _translate(self, error: Exception, opened: bool) -> _Failure:
        """An SDK error as a ``_Failure`` holding a one-line, key-free ``ModelError``."""
        import openai

        where = _host(self.base_url)
        if isinstance(error, openai.APITimeoutError):
            wait = "data" if opened else "a response"
            return _Failure(ModelError(
                f"no {wait} from {where} within {self.timeout:g}s (model {self.model})",
                MODEL_TIMEOUT), retry=False)
        if isinstance(error, openai.APIConnectionError):
            cause = error.__cause__
            reason = str(cause) if cause is not None and str(cause) else error.message
            if opened:
                return _Failure(ModelError(
                    f"the connection to {where} broke off mid-stream: "
                    f"{self._clean(reason)}", MODEL_STREAM), retry=True)
            return _Failure(ModelError(
                f"cannot reach {where}: {self._clean(reason)}; check the address (--base-url "
                "or DSH_BASE_URL) and the network, or try the offline demo with -m demo",
                MODEL_CONNECTION), retry=True)
        if isinstance(error, openai.APIStatusError):
            return self._translate_status(error, where)
        if isinstance(error, openai.APIError):  # an error event inside the stream
            detail = self._detail(error)
            code = MODEL_CONTEXT if _CONTEXT_PATTERNS.search(detail) else MODEL_STREAM
            return _Failure(ModelError(f"{where} reported an error mid-stream: {detail}", code),
                            retry=False)
        return _Failure(ModelError(
            f"model client error: {self._clean(str(error) or type(error).__name__)}",
            MODEL_STREAM), retry=False)

    def _check_event_stream(self, response: Any) -> None:
        """A 200 that is a web page (a wrong --base-url) is said to be one, not parsed."""
        headers = getattr(getattr(response, "response", None), "headers", None) or {}
        kind = str(headers.get("content-type", "")).split(";")[0].strip().lower()
        if kind in ("text/html", "application/xhtml+xml"):
            raise _Failure(ModelError(
                f"{_host(self.base_url)} returned {kind}, not an event stream; "
                "check --base-url", MODEL_STREAM), retry=False)

    def _translate_status(self, error: APIStatusError, where: str) -> _Failure:
        status = error.status_code
        detail = self._detail(error)
        said = f" (HTTP {status}: {detail})" if detail else f" (HTTP {status})"
        if status in (401, 403):
            return _Failure(ModelError(
                f"{where} rejected the API key{said}; check "
                f"{self.key_variable or KEY_VARIABLES_HINT}", MODEL_AUTH),
                retry=False)
        if status == 404:
            return _Failure(ModelError(
                f"model {self.model!r} not found at {where}{said}; check --model and "
                "--base-url", MODEL_NOT_FOUND), retry=False)
        if status == 429:
            quota = str(getattr(error, "code", "") or "") == "insufficient_quota"
            return _Failure(ModelError(f"{where} is rate limiting requests{said}",
                                       MODEL_RATE_LIMIT),
                            retry=not quota, retry_after=_retry_after(error.response.headers))
        if status >= 500 or status in (408, 409):
            code = MODEL_TIMEOUT if status == 408 else MODEL_SERVER
            return _Failure(ModelError(f"{where} failed to answer{said}", code),
                            retry=True, retry_after=_retry_after(error.response.headers))
        if status in (400, 413, 422) and (
            getattr(error, "code", None) == "context_length_exceeded"
            or _CONTEXT_PATTERNS.search(detail)
        ):
            return _Failure(ModelError(
                f"the conversation is too long for model {self.model}{said}", MODEL_CONTEXT),
                retry=False)
        return _Failure(ModelError(f"{where} refused the request{said}", MODEL_BAD_REQUEST),
                        retry=False)

    def _detail(self, error: APIError) -> str:
        """The server's own words, one line, short, key scrubbed."""
        body = getattr(error, "body", None)
        message: Any = None
        if isinstance(body, dict):
            message = body.get("message") or body.get("error") or body.get("detail")
        elif isinstance(body, str):
            message = body
        if not message:
            message = getattr(error, "message", "") or ""
            message = re.sub(r"^Error code: \d+( - )?", "", str(message))
        if not isinstance(message, str):
            message = json.dumps(message, ensure_ascii=False)
        return self._clean(message)

    def _clean(self, text: str) -> str:
        # Cut first: a 200 MB error body must not be sanitised whole to keep 300 characters;
        # the key is scrubbed from the sanitised text, where no control character splits it.
        text = sanitize_line(text[:_MAX_DETAIL * 8])
        return one_line(masked(scrub_key(text, self.__key)), _MAX_DETAIL)


def _for_the_api(message: dict[str, Any]) -> dict[str, Any]:
    """The message without fields the API must not get back (reasoning)."""
    return {k: v for k, v in message.items() if k not in _NOT_FOR_THE_API}


class _Expired(Exception):
    """A ``_Watchdog`` deadline passed: ``idle`` (no content) or the whole call's."""

    def __init__(self, idle: bool) -> None:
        super().__init__("idle" if idle else "deadline")
        self.idle = idle


class _Watchdog:
    """The idle and whole-call deadlines of one stream, with one timer, not one a chunk.

    A content chunk only notes the time; the timer, when it fires, moves itself to the new
    idle deadline if content came meanwhile. It cancels the task only while the task
    waits for the next chunk (``guard``), so a stop can never land in the consumer's code.
    (``asyncio.timeout`` per chunk cost 7 us a chunk: a sixth of the loop's overhead.)
    """

    def __init__(self, timeout: float, deadline: float) -> None:
        self.loop = asyncio.get_running_loop()
        self.timeout = timeout
        self.deadline = deadline
        self.last = self.loop.time()
        self.expired: bool | None = None  # None, or whether the idle deadline passed
        self._task = asyncio.current_task()
        self._waiting = False
        self._handle = self.loop.call_at(self._next(), self._check)

    def _next(self) -> float:
        return min(self.last + self.timeout, self.deadline)

    def content(self) -> None:
        self.last = self.loop.time()

    def _check(self) -> None:
        now = self.loop.time()
        if now < self._next():
            self._handle = self.loop.call_at(self._next(), self._check)
            return
        self.expired = now < self.deadline
        if self._waiting and self._task is not None:
            self._task.cancel()

    async def guard(self, awaitable: Awaitable[Any]) -> Any:
        """Await the next chunk; ``_Expired`` when a deadline passed before it came."""
        if self.expired is not None:
            raise _Expired(self.expired)
        self._waiting = True
        try:
            return await awaitable
        except asyncio.CancelledError:
            if self.expired is None or self._task is None:
                raise
            self._task.uncancel()  # our own stop, not the caller's
            raise _Expired(self.expired) from None
        finally:
            self._waiting = False

    def close(self) -> None:
        self._handle.cancel()


def _host(base_url: str) -> str:
    from dsh_cli.core.urls import where

    return where(base_url)


def _retry_after(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(float(value) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    parsed = email.utils.parsedate_tz(value)
    if parsed is None:
        return None
    return max(email.utils.mktime_tz(parsed) - time.time(), 0.0)
