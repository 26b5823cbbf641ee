"""``create_private_file``: new files 0600 in a 0700 directory; existing files left alone."""

from __future__ import annotations

import stat

import pytest

from dsh_cli.core.files import create_private_file


def mode(path):
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_and_its_directory_are_the_owners_only(tmp_path):
    path = tmp_path / "new-dir" / "history"
    create_private_file(path)
    assert path.read_bytes() == b""
    assert (mode(path), mode(path.parent)) == (0o600, 0o700)


def test_an_existing_file_keeps_its_content_and_mode(tmp_path):
    path = tmp_path / "history"
    path.write_text("+kept\n")
    path.chmod(0o640)
    create_private_file(path)
    assert path.read_text() == "+kept\n" and mode(path) == 0o640


def test_a_directory_that_cannot_be_made_is_an_os_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(OSError):
        create_private_file(blocker / "history")
