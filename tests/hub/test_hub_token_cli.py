"""`dsh hub token add | list | rm`, run as the real dsh, on the default store and PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from harness.dsh_under_test import DSH

from dsh_cli.hub import HubStore


def dsh(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DSH, "hub", "token", *args], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)


def test_a_token_is_printed_once_alone_and_kept_only_as_a_digest():
    made = dsh("add", "alice", "--human", "--team", "ops")
    assert made.returncode == 0, made.stderr
    secret = made.stdout.strip()
    assert made.stdout == secret + "\n" and secret.startswith("dshhub_")
    assert "shown this once" in made.stderr and secret not in made.stderr
    store_file = Path(os.environ["DSH_HOME"]) / "hub.db"  # the default store
    assert store_file.stat().st_mode & 0o777 == 0o600
    with HubStore.open(store_file) as store:
        holder = store.authenticate(secret)
    assert (holder.name, holder.kind, holder.team) == ("alice", "human", "ops")
    stored = b"".join(path.read_bytes() for path in store_file.parent.glob("hub.db*"))
    assert secret.encode() not in stored

    listed = dsh("list")
    assert listed.returncode == 0
    assert listed.stdout.splitlines()[1].split()[:3] == ["alice", "human", "ops"]
    assert secret not in listed.stdout


def test_mistakes_are_one_line_each_and_lose_nothing():
    first = json.loads(dsh("add", "ci-bot", "--agent", "--json").stdout)
    assert (first["name"], first["kind"], first["team"]) == ("ci-bot", "agent", None)
    for args, code in [(("add", "ci-bot", "--agent"), "TOKEN_EXISTS"),
                       (("add", "ci-bot"), "USAGE"),
                       (("add", "bob", "--agent", "--human"), "USAGE"),
                       (("add", "bob", "--agent", "--team", "ops"), "USAGE"),
                       (("add", "bob\x1b[2J", "--human"), "INVALID_NAME"),
                       (("rm", "nobody"), "TOKEN_NOT_FOUND")]:
        failed = dsh(*args)
        assert failed.returncode == 1, (args, failed.stderr)
        assert failed.stdout == ""
        assert failed.stderr.startswith(f"dsh: {code}: ") and failed.stderr.count("\n") == 1
        assert "\x1b" not in failed.stderr
    with HubStore.open() as store:
        assert store.authenticate(first["token"]).name == "ci-bot"
        assert [token.name for token in store.tokens()] == ["ci-bot"]


def test_an_unreachable_postgres_store_is_one_line_without_its_password():
    failed = dsh("list", "--store", "postgresql://hub:s3cret@127.0.0.1:1/dsh")
    assert failed.returncode == 1
    assert failed.stderr.startswith("dsh: STORE_ERROR: hub store postgresql://hub:***@")
    assert failed.stderr.count("\n") == 1 and "s3cret" not in failed.stderr
    # libpq takes the password as a query parameter too
    failed = dsh("list", "--store", "postgresql://hub@127.0.0.1:1/dsh?password=s3cret&sslmode=prefer")
    assert failed.returncode == 1
    assert failed.stderr.startswith("dsh: STORE_ERROR: hub store postgresql://hub@127.0.0.1:1/")
    assert failed.stderr.count("\n") == 1 and "s3cret" not in failed.stderr, failed.stderr


def test_tokens_made_on_postgres_work_there_and_rm_ends_them(postgres_url):
    made = dsh("add", "alice", "--human", "--team", "ops", "--store", postgres_url)
    assert made.returncode == 0, made.stderr
    secret = made.stdout.strip()
    with HubStore.open(postgres_url) as store:
        assert store.authenticate(secret).name == "alice"
    listed = json.loads(dsh("list", "--json", "--store", postgres_url).stdout)
    assert [(t["name"], t["kind"], t["team"]) for t in listed] == [("alice", "human", "ops")]
    removed = dsh("rm", "alice", "--store", postgres_url)
    assert removed.returncode == 0, removed.stderr
    with HubStore.open(postgres_url) as store:
        assert store.authenticate(secret) is None
