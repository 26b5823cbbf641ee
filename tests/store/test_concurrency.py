"""Two dsh processes writing one store at once: nothing lost, nothing corrupted."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading

from dsh_cli.store import SessionStore

WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from dsh_cli.store import SessionStore

    path, shared, name, count, go = sys.argv[1:6]
    count, go = int(count), Path(go)
    store = SessionStore.open(path)
    own = store.create_session(name)
    while not go.exists():
        time.sleep(0.001)
    for index in range(count):
        store.append_message(own, {"role": "user", "content": f"{name} {index}"})
        store.append_message(shared, {"role": "user", "content": f"{name} {index}"})
    store.close()
    print(own)
""")


def _check(path, shared, own_ids, names, count):
    with SessionStore.open(path) as store:
        for own, name in zip(own_ids, names, strict=True):
            contents = [m["content"] for m in store.load_session(own).messages]
            assert contents == [f"{name} {index}" for index in range(count)]
        shared_contents = [m["content"] for m in store.load_session(shared).messages]
    assert len(shared_contents) == count * len(names)
    for name in names:  # each writer's messages in its own order, interleaved with others'
        mine = [c for c in shared_contents if c.startswith(name + " ")]
        assert mine == [f"{name} {index}" for index in range(count)]
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_two_processes_append_concurrently(tmp_path):
    path = tmp_path / "sessions.db"
    with SessionStore.open(path) as store:
        shared = store.create_session("shared")
    go = tmp_path / "go"
    count = 300
    names = ["alpha", "beta"]
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), shared, name, str(count),
                          str(go)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name in names
    ]
    go.touch()
    results = [writer.communicate(timeout=60) for writer in writers]
    for writer, (_, err) in zip(writers, results, strict=True):
        assert writer.returncode == 0, err
    own_ids = [out.strip() for out, _ in results]
    _check(path, shared, own_ids, names, count)


def test_threads_with_their_own_connections(tmp_path):
    path = tmp_path / "sessions.db"
    with SessionStore.open(path) as store:
        shared = store.create_session("shared")
    names = [f"t{index}" for index in range(4)]
    own_ids: dict[str, str] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(names))

    def write(name: str) -> None:
        try:
            with SessionStore.open(path) as store:
                own_ids[name] = store.create_session(name)
                barrier.wait()
                for index in range(100):
                    store.append_message(own_ids[name], {"role": "user",
                                                         "content": f"{name} {index}"})
                    store.append_message(shared, {"role": "user", "content": f"{name} {index}"})
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=write, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    _check(path, shared, [own_ids[name] for name in names], names, 100)
