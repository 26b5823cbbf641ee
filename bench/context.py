"""What every measure is given: smoke or full, a scratch directory, the child environment."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bench.proc import bench_env

__all__ = ["Context"]


@dataclass
class Context:
    smoke: bool
    work: Path  # scratch files (floor scripts, requests); DSH_HOME lives under it

    @property
    def env(self) -> dict[str, str]:
        home = self.work / "dsh-home"
        home.mkdir(exist_ok=True)
        return bench_env(home)

    def runs(self, full: int) -> int:
        """How many times to repeat a measure: once in a smoke run."""
        return 1 if self.smoke else full

    def script(self, name: str, text: str) -> Path:
        """A floor script written to the scratch directory."""
        path = self.work / name
        path.write_text(text, encoding="utf-8")
        return path
