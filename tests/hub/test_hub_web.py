"""The hub's own browser desk, over raw HTTP to a real ``dsh hub serve``: a login link (made
by the real ``dsh hub token add`` / ``dsh hub login-link``) becomes a session cookie once,
the page's Host, Origin and CSRF rules, a human's teams only, answers through the store, a
removed token's cookie refused; on PostgreSQL, a link made for one hub process used at the
other. One Chromium test answers an entry at 390 px.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import subprocess
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pytest
from harness.chromium import CHROMIUM, CHROMIUM_ARGS, needs_chromium
from harness.dsh_under_test import DSH
from harness.hub_desk import wait_until
from harness.hub_serve import DshChild, agent_token
from harness.raw_http import raw_request
from harness.shared_hub import serving

from dsh_cli.core.limits import HUB_DESK_STREAMS, HUB_LOGIN_SECONDS, HUB_WEB_SESSION_SECONDS
from dsh_cli.hub import HubStore
from dsh_cli.hub.logins import login_code, login_link, redeem

CEILING = 60.0
QUESTION = {"id": "q", "header": "Deploy", "question": "Deploy now?",
            "options": [{"label": "yes"}, {"label": "no"}]}


@dataclass
class Reply:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name), None)


def _request(url: str, method: str, path: str, headers: dict[str, str],
             body: bytes | None = None) -> Reply:
    """One raw HTTP request, every header as given (Host too)."""
    where = urlsplit(url)
    assert where.hostname is not None and where.port is not None
    return Reply(*raw_request(where.hostname, where.port, method, path, headers, body,
                              timeout=CEILING))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([DSH, "hub", *args], capture_output=True, text=True,
                          timeout=CEILING, env=os.environ)
    assert done.returncode == 0, done.stderr
    return done


class Browser:
    """What a browser sends the hub's page: its Host, its cookie, and on POSTs its Origin and
    the page's CSRF value (read from the page, as the page's script does)."""

    def __init__(self, url: str, public: str | None = None) -> None:
        self.url = url  # where it connects; ``public``: the hub's name (a balancer's)
        self.origin = public or url
        self.host = urlsplit(self.origin).netloc
        self.cookie: str | None = None
        self.csrf: str | None = None

    def headers(self, **extra: str) -> dict[str, str]:
        sent = {"Host": self.host}
        if self.cookie is not None:
            sent["Cookie"] = self.cookie
        sent.update({key.replace("_", "-"): value for key, value in extra.items()})
        return sent

    def get(self, path: str, **extra: str) -> Reply:
        return _request(self.url, "GET", path, self.headers(**extra))

    def login(self, link: str, origin: str | None = None) -> Reply:
        """Open the link (its page: one button, the code not spent yet), then press it."""
        path = urlsplit(link).path
        opened = self.get(path)
        assert opened.status == 200 and b'<form method="post">' in opened.body, opened.body
        reply = _request(self.url, "POST", path,
                         self.headers(Origin=origin or self.origin), b"")
        if reply.status == 303:
            assert reply.header("location") == "/"
            self.cookie = reply.header("set-cookie").split(";", 1)[0]
            page = self.get("/")
            assert page.status == 200, page.body
            found = re.search(rb'name="dsh-csrf" content="([^"]+)"', page.body)
            assert found is not None
            self.csrf = found.group(1).decode()
        return reply

    def post(self, frame: dict[str, Any], **extra: str) -> Reply:
        headers = {"Origin": self.origin, "X-DSH-CSRF": self.csrf or "",
                   "Content-Type": "application/json"}
        headers.update({key.replace("_", "-"): value for key, value in extra.items()})
        return _request(self.url, "POST", "/api/respond", self.headers(**headers),
                        json.dumps(frame).encode())

    def stream(self) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """The page's event stream opened: its connection and response (not yet read)."""
        where = urlsplit(self.url)
        connection = http.client.HTTPConnection(where.hostname, where.port, timeout=CEILING)
        connection.putrequest("GET", "/api/events", skip_host=True)
        for key, value in self.headers().items():
            connection.putheader(key, value)
        connection.endheaders()
        return connection, connection.getresponse()

    def events(self):
        """The page's event stream, one event at a time (server-sent events, parsed)."""
        connection, response = self.stream()
        assert response.status == 200
        try:
            kind = None
            while line := response.fp.readline():
                text = line.decode().rstrip("\r\n")
                if text.startswith("event: "):
                    kind = text[len("event: "):]
                elif text.startswith("data: "):
                    data = json.loads(text[len("data: "):])
                    assert data["type"] == kind
                    yield data
        finally:
            connection.close()


def _requested(events, header: str) -> dict[str, Any]:
    """The first question announced on the page; it must be the one headed ``header``."""
    for event in events:
        if event["type"] == "question/requested":
            assert event["questions"][0]["header"] == header, event
            return event
    raise AssertionError("the event stream ended")


def _ask(store: HubStore, header: str, team: str) -> str:
    batch = {"questions": [{**QUESTION, "header": header}]}
    return store.ask(token="ci-bot", batch=batch, agent=f"agent-{team}", machine="ci",
                     cwd="/srv", team=team).id


@pytest.fixture(scope="module")
def sqlite_hub(tmp_path_factory):
    """One real `dsh hub serve` on a SQLite store for this module's tests, each with humans
    and teams of its own; yields (its URL, the store's path)."""
    where = tmp_path_factory.mktemp("hub")
    location = str(where / "hub.db")
    with serving(location, where) as url:
        yield url, location


def test_a_login_link_becomes_a_session_cookie_once_and_the_page_keeps_its_rules(sqlite_hub):
    url, location = sqlite_hub
    made = _cli("token", "add", "alice", "--human", "--team", "ops", "--store", location,
                "--public-url", url)
    [link] = re.findall(r"(http://\S+/login/\S+)", made.stderr)
    assert made.stdout.strip().startswith("dshhub_")  # stdout: the token alone
    browser = Browser(url)
    assert browser.get("/").status == 401  # no session yet: signed out, which the page says

    # a wrong Host (DNS rebinding) is refused, a sign-in posted from another origin (this
    # browser logged in to someone else's session) too: neither spends the code
    for host, origin in (("evil.example", url), (browser.host, "http://evil.example"),
                         (browser.host, "null")):
        refused = _request(url, "POST", urlsplit(link).path, {"Host": host, "Origin": origin})
        assert refused.status == 403, refused.body
    assert _request(url, "GET", urlsplit(link).path, {"Host": "evil.example"}).status == 403
    signed_in = browser.login(link)
    assert signed_in.status == 303  # to "/": the code leaves the address bar
    flags = [part.strip().lower() for part in signed_in.header("set-cookie").split(";")]
    assert flags[0].startswith(f"dsh_hub_{urlsplit(url).port}=")
    assert {"httponly", "samesite=strict", "path=/"} <= set(flags)
    assert "secure" not in flags  # a plain-http public URL: on https it is Secure

    again = Browser(url)
    assert again.login(link).status == 403  # single use
    assert again.get("/").status == 401
    assert browser.get("/", Host="evil.example").status == 403  # a session, a wrong Host

    # an expired code: made ten minutes and a second ago, by the store's clock
    with HubStore.open(location, clock=lambda: time.time() - HUB_LOGIN_SECONDS - 1) as old:
        stale = login_link(url, login_code(old, "alice"))
    assert Browser(url).login(stale).status == 403
    assert b"dsh hub login-link" in Browser(url).login(stale).body

    # the POST rules: a foreign Origin, no CSRF value, a wrong one: refused before the desk
    frame = {"type": "question/answer", "rpc_id": "n1-000000", "answers": []}
    for refusal, extra in ((b"Origin", {"Origin": "http://evil.example"}),
                           (b"Origin", {"Origin": ""}),
                           (b"CSRF", {"X_DSH_CSRF": ""}),
                           (b"CSRF", {"X_DSH_CSRF": "0" * 64})):
        refused = browser.post(frame, **extra)
        assert refused.status == 403 and refusal in refused.body, (extra, refused.body)
    # another session's CSRF value is not this one's
    other = Browser(url)
    assert other.login(_cli("login-link", "alice", "--store", location, "--public-url",
                            url).stdout.strip()).status == 303
    assert other.csrf != browser.csrf
    assert browser.post(frame, X_DSH_CSRF=other.csrf).status == 403
    passed = browser.post(frame)  # every rule met: the desk's own answer
    assert passed.status == 200 and json.loads(passed.body)["reason"] == "not-pending"

    # /desk and /mcp stay bearer-only: the cookie opens neither
    assert _request(url, "GET", "/desk", browser.headers()).status == 401
    assert _request(url, "POST", "/mcp", browser.headers(), b"{}").status == 401


def test_a_human_sees_and_answers_only_their_teams_entries_until_their_token_goes(sqlite_hub):
    url, location = sqlite_hub
    with HubStore.open(location) as store:  # the CLI's way: the first test's
        store.add_token("dana", "human", "deploys")
        link = login_link(url, login_code(store, "dana"))
    browser = Browser(url)
    assert browser.login(link).status == 303
    with HubStore.open(location) as store:
        # the other team's first: were it shown, it would be announced first (oldest first)
        payments = _ask(store, "Payments", "billing")
        ops = _ask(store, "Ops", "deploys")
        loser = _ask(store, "Later", "deploys")
        events = browser.events()
        shown = _requested(events, "Ops")
        later = _requested(events, "Later")
        answers = [{"id": "q", "selected": ["yes"]}]
        ack = browser.post({"type": "question/answer", "rpc_id": shown["rpc_id"],
                            "answers": answers})
        assert ack.status == 200 and json.loads(ack.body)["accepted"] is True, ack.body
        answered = store.get(ops)
        assert (answered.state, answered.answered_by) == ("answered", "dana")
        assert answered.answer["answers"] == answers
        # another desk wins the next one first: dana's answer loses the conditional update
        # (or finds it gone from her page already): NOT_PENDING either way, nothing changed
        store.answer(loser, {"type": "question/answer", "answers": answers}, "bob")
        lost = browser.post({"type": "question/answer", "rpc_id": later["rpc_id"],
                             "answers": [{"id": "q", "selected": ["no"]}]})
        assert json.loads(lost.body)["reason"] == "not-pending"
        assert store.get(loser).answered_by == "bob"
        assert store.get(payments).state == "pending"
        steps = [(row.action, row.actor) for row in store.audit(ops)]
    assert steps == [("ask", "ci-bot"), ("answer", "dana")]  # never opened: no claim

    _cli("token", "rm", "dana", "--store", location)
    _assert_signed_out(browser.get("/"))  # the removed token's cookie opens nothing
    # and the page already open has its stream ended (the hub's next sweep), not told that
    # the hub stopped (host/closed, on which the page would say "dsh has stopped"): it
    # reconnects, and that is the 401 on which the page says it is signed out
    assert "host/closed" not in [event["type"] for event in events]
    _assert_signed_out(browser.get("/api/events"))
    _assert_signed_out(browser.post({"type": "question/cancel", "rpc_id": "n9-000000"}))


def _assert_signed_out(reply: Reply) -> None:
    """The hub's answer to a page whose session is gone: 401 and one line saying what to do
    (the page stops on it and shows that line, rather than trying again)."""
    assert reply.status == 401, (reply.status, reply.body)
    assert reply.body.decode().count("\n") == 1, reply.body
    assert reply.body.startswith(b"dsh: signed out: ") and b"dsh hub login-link NAME" in \
        reply.body, reply.body


def test_a_page_whose_session_expired_is_told_it_is_signed_out(sqlite_hub):
    url, location = sqlite_hub
    agent_token(location, "erin", "human")  # `dsh hub token add`: the first test's
    browser = Browser(url)
    # a session made seven days and a second ago, by the store's clock: expired now
    with HubStore.open(location, clock=lambda: time.time() - HUB_WEB_SESSION_SECONDS - 1) \
            as old:
        login = redeem(old, login_code(old, "erin"))
    assert login is not None
    browser.cookie = f"dsh_hub_{urlsplit(url).port}={login.secret}"
    for reply in (browser.get("/"), browser.get("/api/events"),
                  browser.post({"type": "question/cancel", "rpc_id": "n1-000000"})):
        _assert_signed_out(reply)
    # a cookie the hub never made is the same: no session, whatever the cause
    browser.cookie = f"dsh_hub_{urlsplit(url).port}=forged"
    _assert_signed_out(browser.get("/api/events"))


def test_a_page_following_its_session_past_its_end_has_its_stream_ended(sqlite_hub):
    url, location = sqlite_hub
    agent_token(location, "frank", "human")  # `dsh hub token add`: the first test's
    browser = Browser(url)
    # a session with two seconds left, by the store's clock
    with HubStore.open(location, clock=lambda: time.time() - HUB_WEB_SESSION_SECONDS + 2) \
            as old:
        login = redeem(old, login_code(old, "frank"))
    assert login is not None
    browser.cookie = f"dsh_hub_{urlsplit(url).port}={login.secret}"
    events = _read_until_it_ends(browser, within=CEILING / 2)
    # it ended with the session, untold (not "the hub stopped"); its reconnect is the 401 on
    # which the page says it is signed out
    assert "host/closed" not in events and "replay/done" in events, events
    _assert_signed_out(browser.get("/api/events"))


def test_one_human_follows_at_most_sixteen_page_streams_at_one_hub_process(sqlite_hub):
    url, location = sqlite_hub
    with HubStore.open(location) as store:  # the CLI's way: the first test's
        store.add_token("grace", "human")
        link = login_link(url, login_code(store, "grace"))
    browser = Browser(url)
    assert browser.login(link).status == 303
    streams = [browser.events() for _ in range(HUB_DESK_STREAMS)]
    try:
        for events in streams:  # each open, followed by the desk
            assert next(events)["type"] in ("inbox/list", "replay/done")
        # the next is refused before it is followed: a session cannot take the process's
        # memory one stream (and its queue) at a time
        connection, refused = browser.stream()
        try:
            assert refused.status == 429, refused.status
            assert b"close one" in refused.read()
        finally:
            connection.close()
    finally:
        for events in streams:
            events.close()
    # a closed one makes room (the hub notices the disconnect)
    wait_until(lambda: _stream_status(browser) == 200, "a stream allowed again")


def _stream_status(browser: Browser) -> int:
    """The status of a new event stream of ``browser``'s page (closed at once)."""
    connection, response = browser.stream()
    connection.close()
    return response.status


def _read_until_it_ends(browser: Browser, within: float) -> list[str]:
    """The event types of the page's stream until the hub ends it, which it must ``within``
    seconds (its pings every 15 s keep the socket alive, so each line checks the time)."""
    connection, response = browser.stream()
    assert response.status == 200
    deadline = time.monotonic() + within
    kinds = []
    try:
        while line := response.fp.readline():
            assert time.monotonic() < deadline, f"the stream went on past {within} s: {kinds}"
            if line.startswith(b"event: "):
                kinds.append(line[len(b"event: "):].decode().strip())
    finally:
        connection.close()
    return kinds


def test_a_login_link_made_for_one_hub_process_signs_in_at_the_other(postgres_url):
    with HubStore.open(postgres_url) as store:
        store.add_token("alice", "human", "ops")
    public = "https://hub.example"  # the balancer's name for both processes (TLS its job)
    hubs = [DshChild("hub", "serve", "--store", postgres_url, "--port", "0", "--replica",
                     name, "--public-url", public) for name in ("one", "two")]
    try:
        one, two = (hub.said("dsh: hub http://") for hub in hubs)
        link = _cli("login-link", "alice", "--store", postgres_url, "--public-url",
                    public).stdout.strip()
        assert link.startswith(f"{public}/login/")
        at_two = Browser(two, public)
        signed_in = at_two.login(link)
        assert signed_in.status == 303
        flags = [part.strip().lower() for part in signed_in.header("set-cookie").split(";")]
        assert flags[0].startswith("__host-dsh_hub=") and "secure" in flags
        assert Browser(one, public).login(link).status == 403  # spent, at every process
        # the session is the store's: the cookie works at the first process too
        at_one = Browser(one, public)
        at_one.cookie, at_one.csrf = at_two.cookie, at_two.csrf
        assert at_one.get("/").status == 200
        assert at_one.post({"type": "question/cancel", "rpc_id": "n1-000000"},
                           Origin="http://hub.example").status == 403  # not the origin
        with HubStore.open(postgres_url) as store:
            entry = _ask(store, "Ops", "ops")
            shown = _requested(at_one.events(), "Ops")
            ack = at_one.post({"type": "question/answer", "rpc_id": shown["rpc_id"],
                               "answers": [{"id": "q", "selected": ["no"]}]})
            assert json.loads(ack.body)["accepted"] is True, ack.body
            assert store.get(entry).answered_by == "alice"
    finally:
        for hub in hubs:
            hub.stop()


@needs_chromium
def test_a_human_with_only_a_browser_answers_at_phone_width(sqlite_hub):
    sync_api = pytest.importorskip("playwright.sync_api")
    from playwright.sync_api import expect

    url, location = sqlite_hub
    made = _cli("token", "add", "hana", "--human", "--team", "mobile", "--store", location,
                "--public-url", url)
    [link] = re.findall(r"(http://\S+/login/\S+)", made.stderr)
    with HubStore.open(location) as store:
        _ask(store, "Payments", "payments")
        entry = _ask(store, "Ops", "mobile")
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_context(viewport={"width": 390, "height": 760}).new_page()
            page.set_default_timeout(CEILING * 1000)
            page.goto(link)
            page.locator("#sign-in").click()
            page.wait_for_url(f"{url}/")  # the code left the address bar
            listed = page.locator("button.entry")
            expect(listed).to_have_count(1)
            assert listed.locator(".who").text_content().startswith("agent-mobile · ")
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
            listed.click()
            page.locator("#composer").wait_for()
            page.locator("button.option[data-label='yes']").click()
            page.locator("#qc-primary", has_text="Submit").click()
            expect(page.locator("#idle")).to_be_visible()
            # her token removed: the open page's stream ends, its reconnect is refused, and
            # the page says, once, that she is signed out and what to do, and stops (no
            # stream tried again against a 401)
            _cli("token", "rm", "hana", "--store", location)
            expect(page.locator("#status")).to_have_text("signed out",
                                                          timeout=CEILING * 1000)
            expect(page.locator("#idle")).to_contain_text("dsh hub login-link NAME")
            browser.close()
        wait_until(lambda: store.get(entry).state == "answered", "the answer in the store")
        answered = store.get(entry)
        steps = [(row.action, row.actor) for row in store.audit(entry)]
    # opening the entry on the page claimed it for hana; her answer then won
    assert steps == [("ask", "ci-bot"), ("claim", "hana"), ("answer", "hana")]
    assert answered.answered_by == "hana"
    assert answered.answer["answers"] == [{"id": "q", "selected": ["yes"]}]


@pytest.mark.parametrize(("given", "said"), [
    ("http://hub.example.com", "plain http only on this machine"),
    ("https://hub.example.com/desk", "scheme://host[:port] only"),
    ("https://alice:pw@hub.example.com", "scheme://host[:port] only"),
    ("hub.example.com", "is not an http(s) URL"),
])
def test_a_public_url_that_is_no_origin_or_plain_http_elsewhere_is_one_usage_line(
        tmp_path, given, said):
    done = subprocess.run([DSH, "hub", "serve", "--store", str(tmp_path / "hub.db"),
                           "--port", "0", "--public-url", given], capture_output=True,
                          text=True, timeout=CEILING, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert done.stderr.startswith("dsh: USAGE: ") and done.stderr.count("\n") == 1
    assert said in done.stderr and "pw" not in done.stderr


def test_the_login_links_start_with_the_configured_public_url(tmp_path):
    config = tmp_path / "hub.toml"
    config.write_text('[hub]\npublic_url = "https://hub.example.com:443/"\n')
    location = str(tmp_path / "hub.db")
    made = _cli("token", "add", "alice", "--human", "--store", location, "--config",
                str(config), "--json")
    link = json.loads(made.stdout)["login_link"]
    assert re.fullmatch(r"https://hub\.example\.com/login/[A-Za-z0-9_-]{43}", link), link
    again = _cli("login-link", "alice", "--store", location, "--config", str(config))
    assert again.stdout.startswith("https://hub.example.com/login/")
    assert again.stdout.strip() != link  # a new code each time
    # an agent's token has no login link, and a name with no human token none either
    assert "login_link" not in json.loads(_cli("token", "add", "ci", "--agent", "--store",
                                               location, "--json").stdout)
    refused = subprocess.run([DSH, "hub", "login-link", "ci", "--store", location],
                             capture_output=True, text=True, timeout=CEILING)
    assert refused.returncode == 1 and refused.stderr.startswith("dsh: TOKEN_NOT_FOUND: ")


def test_a_hub_stopped_with_a_page_and_a_desk_open_ends_their_streams_and_exits_cleanly(
        tmp_path):
    location = str(tmp_path / "hub.db")
    with HubStore.open(location) as store:
        issued = store.add_token("alice", "human", "ops")
    hub = DshChild("hub", "serve", "--store", location, "--port", "0")
    try:
        url = hub.said("dsh: hub http://")
        browser = Browser(url)
        link = _cli("login-link", "alice", "--store", location, "--public-url", url)
        assert browser.login(link.stdout.strip()).status == 303
        events = browser.events()
        assert next(events)["type"] in ("inbox/list", "replay/done")  # following
        where = urlsplit(url)
        desk = http.client.HTTPConnection(where.hostname, where.port, timeout=CEILING)
        desk.request("GET", "/desk", headers={"Authorization": f"Bearer {issued.secret}"})
        stream = desk.getresponse()
        assert json.loads(stream.readline())["type"] == "desk/hello"
        hub.process.terminate()
        # the page hears that its hub went, rather than being cut at uvicorn's grace
        assert "host/closed" in [event["type"] for event in events]
        # and a `dsh attach --hub` desk's stream ends whole (its reader reconnects)
        assert stream.read().strip() == b""
        desk.close()
        assert hub.process.wait(CEILING) == 128 + 15  # SIGTERM, as dsh ends on it
    finally:
        hub.stop()
    said = []
    while (line := hub.lines.get(timeout=CEILING)) is not None:
        said.append(line)
    assert not any("Traceback" in line or "graceful shutdown" in line for line in said), said
