"""What the question screen shows of a batch: scroll offsets, page sizes, the row cache.

The renderer owns it: it clamps each offset to what fits and sets the page sizes (how far
``pgup``/``pgdn`` and ``J``/``K`` move) and ``paging`` (what ``pgup``/``pgdn`` scroll), since
only it knows what is cut on screen; the keys that scroll read and move it. ``BatchState``
keeps only what the human did, so drawing the same batch at another size changes none of it.
A ``TerminalProvider`` keeps one ``Viewport`` per batch on screen; a ``render`` without one
draws a first frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["QuestionView", "Viewport"]


@dataclass
class QuestionView:
    """One question's window, kept per question so moving between questions keeps it."""

    top: int = 0  # first visible row of the option list
    text_offset: int = 0  # first visible line of a long question or detail
    text_page: int = 5  # lines of the question a page moves: as many as are shown
    text_more: bool = False  # a cut question text has lines below the ones shown
    paging: str = "list"  # what pgup/pgdn scroll: "list", "text" or "description"
    page_rows: int = 5  # option rows a page moves
    description_offset: int = 0  # first visible line of the highlighted long description
    description_page: int = 3  # lines of the highlighted description a page moves
    description_cut: bool = False  # the highlighted description is cut too (after the text)
    description_moves: int = 0  # the ``Draft.moves`` the description offset belongs to
    preview_offset: int = 0  # first visible line of the highlighted option's preview
    preview_page: int = 5  # lines of the preview a J/K moves
    preview_of: int = -1  # the option ``preview_offset`` belongs to (it follows the highlight)
    rows: dict[Any, Any] = field(default_factory=dict, repr=False)  # built rows, by what shows

    def follow(self, moves: int) -> None:
        """A move of the highlight (``Draft.moves`` is now ``moves``) starts its description
        from the top."""
        if self.description_moves != moves:
            self.description_offset, self.description_moves = 0, moves

    def preview_for(self, highlight: int) -> None:
        """Another option's preview starts from its first line."""
        if self.preview_of != highlight:
            self.preview_of, self.preview_offset = highlight, 0


@dataclass
class Viewport:
    """The screen's window on one batch: a ``QuestionView`` per question and the review's."""

    views: dict[int, QuestionView] = field(default_factory=dict)  # by question index
    review_top: int = 0  # first visible row of the review screen

    def of(self, index: int) -> QuestionView:
        """Question ``index``'s window (a fresh one the first time it is shown)."""
        view = self.views.get(index)
        if view is None:
            view = self.views[index] = QuestionView()
        return view
