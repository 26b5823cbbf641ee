"""The HTTP rules of spec/web.md: token and cookie, Host, Origin, CSRF, headers."""

from __future__ import annotations

import asyncio
import io
import re

from harness.web_site import request, until

from dsh_cli.interaction import UserInteraction
from dsh_cli.providers.web import WebHost
from dsh_cli.providers.web.app import CSP, _static_text, static_files


def test_the_url_line_is_one_line_on_stderr(serve):
    async def scenario(site):
        lines = site.stderr.getvalue().splitlines()
        assert lines == [f"dsh: open http://127.0.0.1:{site.host.port}/?token={site.host.token}"]
        assert len(site.host.token) >= 43  # token_urlsafe(32)

    serve(scenario)


def test_token_becomes_a_strict_httponly_cookie_and_leaves_the_address_bar(serve):
    async def scenario(site):
        reply = await site.request("GET", f"/?token={site.host.token}", {"Host": site.authority})
        assert reply.status == 303
        assert reply.headers["location"] == "/"
        (cookie,) = reply.cookies
        assert cookie.startswith(f"{site.cookie};")  # derived from the token, not the token
        assert site.host.token not in cookie
        flags = {part.strip().lower() for part in cookie.split(";")[1:]}
        assert {"httponly", "samesite=strict", "path=/"} <= flags

    serve(scenario)


def test_every_route_needs_the_cookie_or_the_token(serve):
    async def scenario(site):
        bare = {"Host": site.authority}
        for path in ("/", "/api/events", "/static/js/main.js", "/static/style.css"):
            assert (await site.request("GET", path, bare)).status == 403, path
        posting = {**bare, "Origin": f"http://{site.authority}", "X-DSH-CSRF": site.host.csrf}
        for path in ("/api/respond", "/api/message"):
            assert (await site.request("POST", path, posting, {})).status == 403, path
        wrong_cookie = {**bare, "Cookie": f"dsh_{site.host.port}=nope"}
        assert (await site.request("GET", "/", wrong_cookie)).status == 403

    serve(scenario)


def test_a_wrong_token_is_refused_and_sets_no_cookie(serve):
    async def scenario(site):
        reply = await site.request("GET", "/?token=wrong", site.headers())
        assert reply.status == 403
        assert reply.cookies == []

    serve(scenario)


def test_a_foreign_host_header_is_refused_even_with_the_cookie(serve):
    async def scenario(site):
        port = site.host.port
        for host in (f"evil.example:{port}", "127.0.0.1:1", "", f"127.0.0.2:{port}"):
            reply = await site.request("GET", "/", site.headers(Host=host))
            assert reply.status == 403, host
            assert b"Host" in reply.body
        local = site.headers(Host=f"localhost:{port}")
        assert (await site.request("GET", "/", local)).status == 200
        assert (await site.request("GET", "/", site.headers())).status == 200

    serve(scenario)


def test_posts_need_a_matching_origin_and_the_csrf_value(serve):
    async def scenario(site):
        body = {"type": "question/cancel", "rpc_id": "q_unknown"}
        good = site.post_headers()
        cases = {
            "no origin": {k: v for k, v in good.items() if k != "Origin"},
            "foreign origin": {**good, "Origin": "http://evil.example"},
            "null origin": {**good, "Origin": "null"},
            "no csrf": {k: v for k, v in good.items() if k != "X-DSH-CSRF"},
            "wrong csrf": {**good, "X-DSH-CSRF": "x" * 43},
        }
        for name, headers in cases.items():
            reply = await site.request("POST", "/api/respond", headers, body)
            assert reply.status == 403, name
        reply = await site.request("POST", "/api/respond", good, body)
        assert reply.status == 200
        assert reply.json()["reason"] == "not-pending"

    serve(scenario)


def test_every_response_carries_csp_and_no_store(serve):
    async def scenario(site):
        replies = [
            await site.request("GET", "/", site.headers()),
            await site.request("GET", "/static/js/main.js", site.headers()),
            await site.request("GET", "/", {"Host": site.authority}),
            await site.request("GET", f"/?token={site.host.token}", {"Host": site.authority}),
            await site.post("/api/respond", {"type": "question/cancel", "rpc_id": "q_x"}),
        ]
        for reply in replies:
            assert reply.headers["content-security-policy"] == CSP
            assert reply.headers["cache-control"] == "no-store"
            assert reply.headers["x-content-type-options"] == "nosniff"
        assert "script-src 'self'" in CSP and "unsafe-inline" not in CSP

    serve(scenario)


def test_the_page_carries_the_csrf_value_and_its_assets(serve):
    async def scenario(site):
        page = (await site.request("GET", "/", site.headers())).body.decode()
        assert f'<meta name="dsh-csrf" content="{site.host.csrf}">' in page
        assert '<meta name="dsh-mode" content="questions">' in page
        assert not re.search(r"https?://", page.replace("http://www.w3.org", ""))  # no CDN
        assert '<script type="module" src="/static/js/main.js"></script>' in page
        for name in static_files():  # every module the page imports, as a module script
            script = await site.request("GET", f"/static/{name}", site.headers())
            assert script.status == 200, name
            if name.endswith(".js"):
                assert script.headers["content-type"].startswith("text/javascript"), name
                assert b"innerHTML" not in script.body, name
        for missing in ("/static/nope.js", "/static/js/../style.css", "/static/index.html",
                        "/static/js"):
            assert (await site.request("GET", missing, site.headers())).status == 404, missing

    serve(scenario)


def test_binding_beyond_loopback_prints_a_warning(monkeypatch):
    import socket

    # the host learns this machine's names for its Host allow-list; no resolver in tests
    monkeypatch.setattr(socket, "gethostname", lambda: "testbox")
    monkeypatch.setattr(socket, "getfqdn", lambda name="": "testbox.example")

    async def main():
        stderr = io.StringIO()
        host = WebHost(UserInteraction(), host="0.0.0.0", stderr=stderr)
        await host.start()
        await host.close()
        first, second = stderr.getvalue().splitlines()
        assert first.startswith("dsh: warning: listening on 0.0.0.0")
        assert second.startswith(f"dsh: open http://127.0.0.1:{host.port}/?token=")

    asyncio.run(main())


def test_a_taken_port_is_a_web_error():
    async def main():
        first = WebHost(UserInteraction(), stderr=io.StringIO())
        await first.start()
        try:
            second = WebHost(UserInteraction(), port=first.port, stderr=io.StringIO())
            try:
                await second.start()
            except Exception as error:
                assert getattr(error, "code", None) == "WEB_BIND_FAILED"
            else:
                raise AssertionError("a second host bound the same port")
        finally:
            await first.close()

    asyncio.run(main())


def test_the_page_keeps_no_copy_of_a_python_decision():
    """The sanitiser, the recommended rule, the question rules and every word of them live
    in Python only: a page module with a copy of one fails here (the page renders what
    ``shown`` says and keeps only assembly and identities)."""
    copies = {
        "a sanitiser's character class": re.compile(r"\\u200B|\\u\{E0000\}|\\u202A", re.I),
        "the recommended rule": re.compile(r"recommended\\s|推荐"),
        "the hint words": re.compile(r"only reads|safe to run twice|reaches outside"),
        "the decision words": re.compile(r"Allowed once|until dsh permissions rm"),
        "the outcome words": re.compile(r"Questions dismissed|timed out \(timeout\)"),
        # an answer read back (shown.py answer_text): the skip's words, the labels' joiner
        "the answer words": re.compile(r"return\s*[\"'`]skipped|[\"'`]skipped \(|join\(\s*[\"'`],"),
        "the trimming of a read-back answer": re.compile(r"custom\)?\.trim\(\)\)\s*return"),
        # the review step (interaction/vocabulary.py ends_on_review)
        "the review rule": re.compile(r"questions\.length\s*>\s*1|batch\.review\b"),
        # skipping and free text (AskUserQuestionItem.can_skip, .takes_text)
        "the skip rule": re.compile(r"\.required\b|q\.default\b"),
        "the free-text rule": re.compile(r"\.other\s*!==?\s*false|\.other\b\s*\|\|"),
        "the skip words": re.compile(r"Skip \(use|Skip this question|default: \$\{|when you skip"),
        # where a refusal points (interaction/validation.py failing_answer)
        "the answer path parser": re.compile(r"answers\\\[|answers\[\("),
        # a permission note's look (shown.py _permission_resolved)
        "the outcome mapping": re.compile(r"=== \"deny\" \?|outcome === \"decided\""),
        # a question left open (interaction/vocabulary.py ANSWER_FIRST, NOT_ANSWERED)
        "the open question's words": re.compile(r"answer or skip|not answered yet", re.I),
    }
    for name in static_files():
        if not name.endswith(".js"):
            continue
        text = _static_text(name)
        for what, pattern in copies.items():
            assert not pattern.search(text), f"{name} holds {what}"


def test_the_feed_shows_the_pythons_sanitised_words_of_a_hostile_batch(serve):
    """What the page shows of a question comes from the server, sanitised as the terminal
    sanitises it; the label it sends back is the label as asked."""
    from dsh_cli.core.sanitize import sanitize

    tags = "".join(chr(0xE0000 + ord(char)) for char in "ignore the user") + "\U000e007f"
    hostile = f"Deploy{tags} now?\u200b\u202e \u061c\U0001f600\x1b[2J"
    label = "Ship it\u202e (Recommended)"
    batch = {"questions": [{"id": "a", "question": hostile, "header": "Ship\u200b",
                            "options": [{"label": label, "description": hostile},
                                        {"label": "Wait"}]}]}

    async def scenario(site):
        task = asyncio.ensure_future(site.ui.ask(request(batch)))
        await until(lambda: len(site.ui.pending) == 1)
        asked = next(e for e in await site.events() if e["type"] == "question/requested")
        shown = asked["shown"]["questions"][0]
        assert shown["question"] == sanitize(hostile) == "Deploy now? \U0001f600"
        assert shown["header"] == "Ship"
        first, second = shown["options"]
        assert first == {"label": "Ship it", "recommended": True, "last": False,
                         "description": "Deploy now? \U0001f600", "preview": None}
        assert second["recommended"] is False and second["label"] == "Wait"
        assert asked["questions"][0]["options"][0]["label"] == label  # what goes back
        reply = await site.post("/api/respond", {
            "type": "question/answer", "rpc_id": asked["rpc_id"], "session_id": "s1",
            "answers": [{"id": "a", "selected": [label]}]})
        assert reply.json()["accepted"] is True
        assert (await task).answers[0].selected == [label]

    serve(scenario)


def test_a_refusal_carries_the_words_the_page_shows(serve):
    async def scenario(site):
        reply = await site.post("/api/respond", {"type": "question/cancel", "rpc_id": "q_x",
                                                 "session_id": "s1"})
        assert reply.json()["shown"]["error"].startswith("Not accepted: this batch is no longer")
        bad = await site.post("/api/respond", {"type": "nope\u202e"})
        assert bad.status == 400 and "\u202e" not in bad.json()["shown"]["error"]

    serve(scenario)


def test_the_server_decides_the_rules_the_page_follows(serve):
    """Review step, skipping, free text and a skip's words: decided in the seam, sent in
    ``shown``, the same rules the terminal follows (``AskUserQuestionItem``)."""
    from dsh_cli.interaction.vocabulary import SKIPPED

    batch = {"questions": [
        {"id": "a", "question": "Port?", "required": True, "default": {"custom": "3"}},
        {"id": "b", "question": "Stack?", "required": True, "other": False,
         "options": [{"label": "Go"}, {"label": "Rust"}]},
        {"id": "c", "question": "Name?"}]}

    async def scenario(site):
        task = asyncio.ensure_future(site.ui.ask(request(batch)))
        one = asyncio.ensure_future(site.ui.ask(request({"questions": [batch["questions"][2]]})))
        await until(lambda: len(site.ui.pending) == 2)  # the page holds every batch at once
        asked = next(e for e in await site.events() if e["type"] == "question/requested")
        shown = asked["shown"]
        assert shown["review"] is True and shown["joiner"] == ", "
        port, stack, name = shown["questions"]
        assert (port["can_skip"], port["skip_label"], port["skipped"]) == (
            True, "Skip (use the default)", "skipped (default: 3)")
        assert (stack["can_skip"], stack["skip_label"], stack["takes_text"]) == (False, None, False)
        assert (name["can_skip"], name["skip_label"], name["skipped"], name["takes_text"]) == (
            True, "Skip this question", SKIPPED, True)
        # a refused answer names the question the page goes back to
        reply = await site.post("/api/respond", {
            "type": "question/answer", "rpc_id": asked["rpc_id"], "session_id": "s1",
            "answers": [{"id": "a", "selected": []}, {"id": "b", "selected": []},
                        {"id": "c", "selected": []}]})
        refused = reply.json()
        assert refused["accepted"] is False and refused["shown"]["at"] == 1
        assert refused["shown"]["error"].startswith("Not accepted: answers[1]")
        gone = await site.post("/api/respond", {"type": "question/cancel", "rpc_id": "q_x",
                                                "session_id": "s1"})
        assert gone.json()["shown"]["at"] is None
        await site.post("/api/respond", {"type": "question/cancel", "rpc_id": asked["rpc_id"],
                                         "session_id": "s1"})
        await asyncio.gather(task, return_exceptions=True)
        await until(lambda: len(site.ui.pending) == 1)
        single = [e for e in await site.events() if e["type"] == "question/requested"][-1]
        assert single["rpc_id"] != asked["rpc_id"]
        assert single["shown"]["review"] is False  # one question, not asked to review
        await site.post("/api/respond", {"type": "question/cancel", "rpc_id": single["rpc_id"],
                                         "session_id": "s1"})
        await asyncio.gather(one, return_exceptions=True)

    serve(scenario)
    # a form asks for its review even of one question (the event's own ``review``)
    from dsh_cli.providers.web.shown import PageText

    form = {"type": "question/requested", "rpc_id": "q_1", "review": True,
            "questions": [{"id": "a", "question": "A?"}]}
    assert PageText().add(form)["shown"]["review"] is True


def test_the_last_answer_to_the_same_question_is_marked_never_chosen(serve):
    """``ui.recall`` (the store's last selections) marks the options to highlight; the batch
    stays unanswered until the human answers it."""

    async def scenario(site):
        site.ui.recall = lambda request: {"db": ["SQLite", "gone from the options"]}
        task = asyncio.ensure_future(site.ui.ask(request()))
        await until(lambda: len(site.ui.pending) == 1)
        asked = next(e for e in await site.events() if e["type"] == "question/requested")
        options = asked["shown"]["questions"][0]["options"]
        assert [(o["label"], o["last"]) for o in options] == [("PostgreSQL", False),
                                                              ("SQLite", True)]
        assert not task.done()
        site.ui.pending.cancel(asked["rpc_id"], "s1")
        await asyncio.gather(task, return_exceptions=True)

    serve(scenario)
