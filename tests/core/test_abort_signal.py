"""Abort signals: a scoped child follows its parent only while its work runs."""

from __future__ import annotations

from dsh_cli.core.signal import AbortSignal


def test_a_scoped_child_is_aborted_with_its_parent_and_unhooked_after():
    parent = AbortSignal()
    with parent.scoped_child() as child:
        assert len(parent._callbacks) == 1
    assert parent._callbacks == []  # nothing kept on a parent that lives on
    with parent.scoped_child() as child:
        parent.abort("stop")
        assert child.reason == "stop"


def test_a_scoped_child_of_an_aborted_parent_starts_aborted_and_a_sealed_one_stays():
    parent = AbortSignal()
    parent.abort("gone")
    with parent.scoped_child() as child:
        assert child.reason == "gone"
    other = AbortSignal()
    with other.scoped_child() as child:
        child.seal()
        other.abort("late")
        assert child.reason is None  # sealed by its work's outcome: the abort lost
