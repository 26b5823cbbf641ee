"""A row of the results table: dsh's figures beside the floor's or peer's from the same run."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Row", "format_table"]


@dataclass
class Row:
    """One measure; ``met`` compares medians (or dsh alone, for absolute budgets).

    ``paired``: run ``i`` of dsh and of the floor were taken back to back, so the ratio is
    the median of the runs' own ratios; a machine that slows down for a while (a 2-core VM
    does) then moves both sides of a pair, not one median against the other.
    """

    measure: str
    unit: str
    dsh: list[float]
    base: list[float] | None = None  # the floor or peer, measured in the same run
    base_name: str = ""
    budget: str = ""  # as the spec writes it; empty for rows shown for context only
    check: Callable[[float, float | None], bool] | None = field(default=None, repr=False)
    paired: bool = False

    @property
    def ratio(self) -> float | None:
        if not self.base:
            return None
        if self.paired:
            return statistics.median(d / b for d, b in zip(self.dsh, self.base, strict=True))
        base = statistics.median(self.base)
        return statistics.median(self.dsh) / base if base else None

    @property
    def met(self) -> bool | None:
        if self.check is None:
            return None
        if self.paired:  # the ratio against a floor of 1: at_most / at_least read it so
            ratio = self.ratio
            return ratio is not None and self.check(ratio, 1.0)
        base = statistics.median(self.base) if self.base else None
        return self.check(statistics.median(self.dsh), base)

    def to_json(self) -> dict[str, Any]:
        return {"measure": self.measure, "unit": self.unit, "dsh": self.dsh,
                "base": self.base, "base_name": self.base_name, "ratio": self.ratio,
                "budget": self.budget, "met": self.met, "paired": self.paired}


def at_most(factor: float) -> Callable[[float, float | None], bool]:
    """dsh ≤ factor × the floor."""
    return lambda dsh, base: base is not None and dsh <= factor * base


def at_least(factor: float) -> Callable[[float, float | None], bool]:
    """dsh ≥ factor × the peer (throughputs)."""
    return lambda dsh, base: base is not None and dsh >= factor * base


def below(limit: float) -> Callable[[float, float | None], bool]:
    return lambda dsh, base: dsh <= limit


def above(limit: float) -> Callable[[float, float | None], bool]:
    return lambda dsh, base: dsh >= limit


def _figure(values: list[float] | None, unit: str) -> str:
    if not values:
        return "—"
    digits = 0 if unit in ("keys/s", "batches/s", "MB") and max(values) >= 100 else (
        1 if unit in ("ms", "MB") else 3)
    med, low, high = statistics.median(values), min(values), max(values)
    if len(values) == 1:
        return f"{med:,.{digits}f} {unit}"
    return f"{med:,.{digits}f} {unit} [{low:,.{digits}f}–{high:,.{digits}f}]"


def format_table(rows: list[Row]) -> str:
    """The table the suite prints: median [min–max] of each side, ratio, budget, met."""
    header = ("measure", "dsh median [min–max]", "floor / peer", "ratio", "budget", "met")
    lines = [header]
    for row in rows:
        base = _figure(row.base, row.unit)
        if row.base_name:
            base = f"{row.base_name}: {base}"
        ratio = "—" if row.ratio is None else f"{row.ratio:.2f}×" + (" paired" * row.paired)
        met = {True: "met", False: "NOT MET", None: "(info)"}[row.met]
        lines.append((row.measure, _figure(row.dsh, row.unit), base, ratio,
                      row.budget or "—", met))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
           for line in lines]
    out.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(out)
