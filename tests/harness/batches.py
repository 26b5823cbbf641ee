"""Batches sized to press on ``dsh mcp``'s byte budgets."""

from __future__ import annotations


def heavy_batch(options: int = 17) -> dict:
    """A batch of 20 questions, each field within its cap: ``options`` × 10,000-character
    previews each (3.4 MB with 17)."""
    preview = "p" * 10_000
    return {"delivery": "async", "questions": [
        {"id": f"q{n}", "question": f"Which {n}?",
         "options": [{"label": f"option {i}", "preview": preview} for i in range(options)]}
        for n in range(20)]}
