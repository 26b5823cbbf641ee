"""Routing: ``[[hub.routes]]`` parsed once, first match wins, a human sees their team's entries
(and unteamed ones) only, read over an index however large the store grows."""

from __future__ import annotations

import sqlite3
import time

import pytest

from dsh_cli.config import config_warnings, hub_table, read_config_file
from dsh_cli.core.errors import ConfigError
from dsh_cli.core.limits import HUB_PENDING_ENTRIES, MCP_MESSAGE_BYTES
from dsh_cli.hub import HubStore, Token
from dsh_cli.hub.location import engine_for
from dsh_cli.hub.migrations import MIGRATIONS, migrate
from dsh_cli.hub.records import AgentCaps
from dsh_cli.hub.routes import QUESTION_TOOL, Route, Routes, route, tool_of, visible
from dsh_cli.hub.settings import DEFAULT_RETENTION_DAYS, HubSettings, hub_settings

BATCH = {"questions": [{"id": "db", "question": "Which database?", "options": ["a", "b"]}]}

CONFIG = """
model = "gpt-x"

[hub]
default_team = "oncall"
pending_entries = 50
pending_bytes = 33554432
retention_days = 30

[[hub.routes]]
cwd = "/srv/payments/**"
team = "payments"

[[hub.routes]]
agent = "ci-*"
tool = "Bash"
team = "ops"

[[hub.routes]]
machine = "laptop-?"
team = "devs"
"""


def human(name: str, team: str | None) -> Token:
    return Token(name, "human", team, 0.0)


def test_the_hub_table_of_config_toml_becomes_routes_caps_and_retention(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    assert config_warnings(read_config_file(path), path) == []  # [hub] is known to dsh
    settings = hub_settings(*hub_table(path))
    assert settings.caps == AgentCaps(entries=50, bytes=32 * 2**20)
    assert settings.retention_days == 30
    routes = settings.routes
    assert routes.default_team == "oncall"
    assert routes.routes[0] == Route("payments", cwd="/srv/payments/**")
    # first match wins: a CI agent's Bash in payments is the payments team's
    assert route(routes, "ci-7", "runner", "/srv/payments/api", "Bash") == "payments"
    assert route(routes, "ci-7", "runner", "/srv/web", "Bash") == "ops"
    assert route(routes, "ci-7", "runner", "/srv/web", QUESTION_TOOL) == "oncall"  # not Bash
    assert route(routes, "claude", "laptop-3", "/home/a", QUESTION_TOOL) == "devs"
    assert route(routes, "claude", "laptop-13", "/home/a", QUESTION_TOOL) == "oncall"
    # the tool an entry is routed as, from its kind and batch
    assert tool_of("question", BATCH) == QUESTION_TOOL
    assert tool_of("permission", {"tool": "Bash", "arguments": {}}) == "Bash"
    assert tool_of("permission", {"tool": ["Bash"]}) == ""
    # no [hub] at all: defaults, every entry unteamed
    path.write_text('model = "gpt-x"\n')
    assert hub_settings(*hub_table(path)) == HubSettings()
    assert HubSettings().retention_days == DEFAULT_RETENTION_DAYS
    assert route(HubSettings().routes, "a", "b", "/c", "Bash") is None


def test_a_glob_of_many_stars_against_an_agents_longest_path_is_quick():
    """One regular expression of several ``.*`` took over 170 s for 1 KB of "a"; an agent
    chooses its working directory, so matching must not backtrack on it."""
    import time

    routes = Routes((Route("a", cwd="**a**a**a**b"), Route("b", cwd="*a*a*a*a*a*b"),
                     Route("c", cwd="/**/a/**/a/**/a/**/b"),
                     Route("d", cwd="/" + "**/" * 300 + "b")))
    started = time.perf_counter()
    for path in ("a" * 4096, "/a" * 2048, "/a" * 2047 + "/c"):
        assert route(routes, "", "", path, "") is None
    assert time.perf_counter() - started < 5  # milliseconds, unloaded


def test_globs_star_stays_in_a_segment_double_star_crosses_them():
    routes = Routes((Route("a", cwd="/srv/*/api"), Route("b", cwd="/srv/payments/**"),
                     Route("c", cwd="/x/**/log"), Route("d", tool="mcp__git__*")))
    assert route(routes, "", "", "/srv/web/api", "") == "a"
    assert route(routes, "", "", "/srv/web/v2/api", "") is None  # * stops at /
    assert route(routes, "", "", "/srv/payments", "") == "b"  # dir/** is dir too
    assert route(routes, "", "", "/srv/payments/a/b/c", "") == "b"
    assert route(routes, "", "", "/srv/paymentsX", "") is None
    assert route(routes, "", "", "/x/log", "") == "c"
    assert route(routes, "", "", "/x/1/2/log", "") == "c"
    assert route(routes, "", "", "/y", "mcp__git__push") == "d"
    assert route(routes, "", "", "/srv/payments/**", "") == "b"  # a path may hold stars
    # a path's brackets and dots stand for themselves
    assert route(Routes((Route("e", cwd="/srv/[a].x"),)), "", "", "/srv/[a].x", "") == "e"
    assert route(Routes((Route("e", cwd="/srv/[a].x"),)), "", "", "/srv/a.x", "") is None


@pytest.mark.parametrize(("table", "says"), [
    ({"routes": [{"team": "ops", "agnet": "ci-*"}]},
     '[[hub.routes]] #1: unknown key "agnet" (did you mean "agent"?)'),
    ({"routes": [{"team": "ops"}, {"cwd": "/srv/**"}]}, "[[hub.routes]] #2 names no team"),
    ({"routes": [{"team": "ops team"}]}, "[[hub.routes]] #1: team name 'ops team' is not"),
    ({"routes": [{"team": "ops", "cwd": 7}]}, "[[hub.routes]] #1: cwd must be a glob"),
    ({"routes": [{"team": "ops", "cwd": ""}]}, "[[hub.routes]] #1: cwd must be a glob"),
    ({"routes": {"team": "ops"}}, "[hub] routes must be an array of tables"),
    ({"routes": ["ops"]}, "[[hub.routes]] #1 must be a table"),
    ({"default_team": 3}, "[hub] default_team: a team must be a string"),
    ({"rotues": []}, 'unknown key "rotues" in [hub] (did you mean "routes"?)'),
    ({"pending_entries": 0}, "[hub] pending_entries must be a whole number from 1 to"),
    ({"pending_entries": HUB_PENDING_ENTRIES + 1}, "pending_entries must be a whole number"),
    ({"pending_entries": True}, "pending_entries must be a whole number"),
    ({"pending_bytes": MCP_MESSAGE_BYTES - 1}, "pending_bytes must be a whole number"),
    ({"retention_days": -1}, "retention_days must be a number of days from 0"),
    ({"retention_days": float("nan")}, "retention_days must be a number of days"),
])
def test_a_bad_hub_setting_is_one_line_naming_it(table, says):
    with pytest.raises(ConfigError) as raised:
        hub_settings(table, "/etc/dsh/config.toml")
    message = str(raised.value)
    assert message.startswith("/etc/dsh/config.toml: ") and says in message, message
    assert "\n" not in message


def test_hub_must_be_a_table_and_a_named_config_file_must_exist(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('hub = "ops"\n')
    with pytest.raises(ConfigError, match="hub must be a table"):
        hub_table(path)
    with pytest.raises(ConfigError, match="no such file"):
        hub_table(tmp_path / "absent.toml")


def test_a_human_sees_their_teams_entries_and_unteamed_ones_an_agent_none(tmp_path):
    with HubStore.open(tmp_path / "hub.db") as store:
        ops = store.ask(token="bot", batch=BATCH, agent="a", machine="m", cwd="/", team="ops")
        devs = store.ask(token="bot", batch=BATCH, agent="a", machine="m", cwd="/",
                         team="devs")
        anyone = store.ask(token="bot", batch=BATCH, agent="a", machine="m", cwd="/")
        assert (ops.team, devs.team, anyone.team) == ("ops", "devs", None)
        assert store.get(ops.id).team == "ops"  # kept, not only returned
        alice, bob, carol = human("alice", "ops"), human("bob", "devs"), human("carol", None)
        assert [visible(e, alice) for e in (ops, devs, anyone)] == [True, False, True]
        assert [visible(e, bob) for e in (ops, devs, anyone)] == [False, True, True]
        assert [visible(e, carol) for e in (ops, devs, anyone)] == [False, False, True]
        assert not visible(anyone, Token("bot", "agent", None, 0.0))


def test_a_bad_team_at_ask_is_refused(tmp_path):
    with HubStore.open(tmp_path / "hub.db") as store, pytest.raises(Exception, match="team"):
        store.ask(token="bot", batch=BATCH, agent="a", machine="m", cwd="/", team="no good")


def test_pending_of_teams_reads_only_theirs_and_unteamed_oldest_first(hub_location):
    with HubStore.open(hub_location) as store:
        asked = []
        for number, team in enumerate(["ops", None, "devs", "ops", None, "devs", "ops"]):
            asked.append(store.ask(token=f"bot{number}", batch=BATCH, agent="a", machine="m",
                                   cwd="/", team=team))
        store.cancel(asked[0].id, by="bot0")
        ids = [entry.id for entry in store.pending(teams=["ops"])]
        assert ids == [asked[i].id for i in (1, 3, 4, 6)]
        assert [e.id for e in store.pending(teams=["ops", "devs"], limit=3)] == [
            asked[i].id for i in (1, 2, 3)]
        assert [e.id for e in store.pending(teams=[])] == [asked[i].id for i in (1, 4)]
        assert len(store.pending()) == 6  # no teams named: every pending entry (the sweep's)


def test_an_older_store_gains_the_team_column_and_keeps_its_entries(tmp_path):
    engine = engine_for(tmp_path / "hub.db")
    try:
        migrate(engine, MIGRATIONS[:4])
        with engine.transaction(write=True) as tx:
            tx.run("INSERT INTO hub_entries (id, kind, batch, token, agent, machine, cwd, state, "
                   "created_at) VALUES ('e1', 'question', '{}', 'bot', 'a', 'm', '/', "
                   "'pending', 1.0)")
            tx.run("INSERT INTO hub_audit (entry_id, action, actor, replica, at) "
                   "VALUES ('e1', 'ask', 'bot', 'r', 1.0)")
    finally:
        engine.close()
    with HubStore.open(tmp_path / "hub.db") as store:
        [entry] = store.pending(teams=["ops"])
        assert (entry.id, entry.team) == ("e1", None)
        # its audit row has no team either: every human's history shows it
        [step] = store.history(teams=["ops"]).items
        assert (step.entry.id, step.step.action) == ("e1", "ask")
        store.answer("e1", {"type": "question/answer", "answers": []}, by="alice")
        assert [item.step.action for item in store.history(teams=[]).items] == [
            "ask", "answer"]


def test_a_desks_pending_read_uses_the_team_index_and_stays_flat(tmp_path):
    """Other teams' pending entries and the settled ones cost a desk's read nothing."""
    path = tmp_path / "hub.db"
    with HubStore.open(path, caps=AgentCaps(entries=200_000)) as store:
        with sqlite3.connect(path) as db:
            plan = db.execute(
                "EXPLAIN QUERY PLAN SELECT id FROM hub_entries WHERE state = 'pending' AND "
                "team = 'ops' ORDER BY created_at, id LIMIT 10").fetchall()
        assert "hub_entries_team_pending" in str(plan) and "TEMP B-TREE" not in str(plan)
        for _ in range(5):
            store.ask(token="bot", batch=BATCH, agent="a", machine="m", cwd="/", team="ops")

        def read_time() -> float:
            best = float("inf")
            for _ in range(20):
                started = time.perf_counter()
                assert len(store.pending(teams=["ops"])) == 5
                best = min(best, time.perf_counter() - started)
            return best

        small = read_time()
        rows = [(f"x{number}", "question", "{}", "other", "a", "m", "/",
                 "pending" if number % 2 else "answered", float(number), "devs")
                for number in range(100_000)]
        with sqlite3.connect(path) as db:
            db.executemany("INSERT INTO hub_entries (id, kind, batch, token, agent, machine, "
                           "cwd, state, created_at, team) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           rows)
        large = read_time()
        # a scan of 100,000 rows costs tens of milliseconds; the index range, microseconds
        assert large < max(5 * small, 0.002), (small, large)
