"""`dsh run` on a full disk or a read-only store: one clear error line, nothing half-written.

Real faults, not mocks: a tiny tmpfs filled to the last byte, a read-only remount of
DSH_HOME, a read-only bind mount of sessions.db. Mounting needs root and a private mount
namespace (``unshare -m``); as an ordinary user, permissions give the same read-only store.
The store's own atomicity under a full disk is pinned in `tests/store/test_db.py`.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess

import pytest
from harness.dsh_under_test import DSH

ROOT = os.geteuid() == 0


def _can_mount() -> bool:
    if not ROOT or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs none /mnt"],
                           capture_output=True)
    return probe.returncode == 0


needs_mount = pytest.mark.skipif(not _can_mount(),
                                 reason="needs root and a private mount namespace")

# The fault is set up inside a private mount namespace, after a first run has stored a
# session; then dsh runs again and the store is checked after the fault is lifted.
PREPARE = """
set -e
export DSH_HOME="$HOME_DIR"
mount -t tmpfs -o size=512k tmpfs "$HOME_DIR"
dsh run --model demo --no-input first > /dev/null
"""
FAULTS = {
    "full-disk": ('dd if=/dev/zero of="$HOME_DIR/filler" bs=4k 2> /dev/null || true',
                  'rm "$HOME_DIR/filler"'),
    "read-only-dir": ('mount -o remount,ro "$HOME_DIR"', 'mount -o remount,rw "$HOME_DIR"'),
    "read-only-db": ('mount --bind "$HOME_DIR/sessions.db" "$HOME_DIR/sessions.db" && '
                     'mount -o remount,bind,ro "$HOME_DIR/sessions.db"',
                     'umount "$HOME_DIR/sessions.db"'),
}
CHECK = """
python - "$HOME_DIR/sessions.db" > "$OUT/store" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("PRAGMA integrity_check").fetchone()[0])
print(db.execute("SELECT count(*) FROM sessions").fetchone()[0])
print(db.execute("SELECT count(*) FROM messages").fetchone()[0])
PY
"""


def _store_summary(path) -> list[str]:
    db = sqlite3.connect(path)
    try:
        return [db.execute("PRAGMA integrity_check").fetchone()[0],
                str(db.execute("SELECT count(*) FROM sessions").fetchone()[0]),
                str(db.execute("SELECT count(*) FROM messages").fetchone()[0])]
    finally:
        db.close()


@needs_mount
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_store_that_cannot_be_written_is_one_error_line_and_nothing_changes(tmp_path, fault):
    home, out = tmp_path / "home", tmp_path / "out"
    home.mkdir()
    out.mkdir()
    apply, lift = FAULTS[fault]
    script = (PREPARE + CHECK.replace('"$OUT/store"', '"$OUT/before"') + apply + "\n"
              + 'set +e\ndsh run --model demo --no-input second > "$OUT/stdout" '
              '2> "$OUT/stderr"\necho $? > "$OUT/status"\n' + lift + "\n" + CHECK)
    env = {**os.environ, "HOME_DIR": str(home), "OUT": str(out)}
    done = subprocess.run(["unshare", "-m", "bash", "-c", script], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (out / "status").read_text().strip() == "1"
    assert (out / "stdout").read_text() == ""
    lines = (out / "stderr").read_text().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"dsh: STORE_ERROR: session store {home / 'sessions.db'}: "), lines
    before = (out / "before").read_text().split()
    assert before[0] == "ok" and before[1] == "1"
    assert (out / "store").read_text().split() == before  # nothing half-written


@pytest.mark.skipif(ROOT, reason="permissions do not bind root; the mount test covers it")
def test_a_read_only_dsh_home_is_one_error_line(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "DSH_HOME": str(home)}
    first = subprocess.run([DSH, "run", "--model", "demo", "--no-input", "first"], env=env,
                           capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    before = _store_summary(home / "sessions.db")
    (home / "sessions.db").chmod(0o444)
    home.chmod(0o555)
    try:
        result = subprocess.run([DSH, "run", "--model", "demo", "--no-input", "second"],
                                env=env, capture_output=True, text=True, timeout=60)
    finally:
        home.chmod(0o755)
        (home / "sessions.db").chmod(0o644)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("dsh: STORE_ERROR: session store ")
    assert len(result.stderr.splitlines()) == 1
    assert _store_summary(home / "sessions.db") == before


def test_a_dsh_home_that_cannot_exist_is_one_error_line(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    env = {**os.environ, "DSH_HOME": str(blocker / "home")}
    result = subprocess.run([DSH, "run", "--model", "demo", "--no-input", "hi"], env=env,
                            capture_output=True, text=True, timeout=60)
    # the config file under DSH_HOME is read first: a usage-class error, before any model
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("dsh: CONFIG_ERROR: cannot read ")
    assert "Not a directory" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 1
