"""Project trust: the digest of a ``python3 -m pkg`` entry whose package has 1,500 files.

Taken on every start in a trusted project (``mcp_client/config/project.py``, ``runs.py``). The
floor reads and hashes the same files with ``pathlib`` and ``hashlib`` alone, in the same
run; the difference is finding what the entry runs and walking the package.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from bench.context import Context
from bench.table import Row, at_most

FILES = 1_500
# the digest walks the tree (links followed, each directory once) and stats each file
# before it opens it, yet with str paths it is about 0.6x the pathlib loop on a 2-core
# machine; 3x keeps room and still shows a regression (a second read, a parse per file)
FACTOR = 3.0


def package(root: Path, files: int) -> Path:
    """A project whose ``pkg`` has ``files`` files of ~2.4 KB in folders of 100."""
    project = root / "trust-project"
    pkg = project / "pkg"
    for index in range(files):
        folder = pkg / f"sub{index // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{index}.py").write_text(f"x = {index}\n" * 300)
    (pkg / "__init__.py").write_text("")
    return project


def measure(ctx: Context) -> list[Row]:
    from dsh_cli.mcp_client.config.project import project_coverage
    from dsh_cli.mcp_client.config.servers import parse_servers

    files = 15 if ctx.smoke else FILES
    project = package(ctx.work, files)
    data = json.dumps({"mcpServers": {"s": {"command": "python3",
                                            "args": ["-m", "pkg"]}}}).encode()
    servers = parse_servers(json.loads(data), "bench", os.environ)
    root = project.resolve()
    project_coverage(data, servers, root, project, os.environ)  # the lazy imports, once
    runs, floors = [], []
    for _ in range(ctx.runs(9)):
        start = time.perf_counter()
        coverage = project_coverage(data, servers, root, project, os.environ)
        runs.append(time.perf_counter() - start)
        assert coverage.files == files + 1 and coverage.over is None
        start = time.perf_counter()
        digest = hashlib.sha256()
        for path in sorted((project / "pkg").rglob("*")):
            if path.is_file():
                digest.update(hashlib.sha256(path.read_bytes()).digest())
        floors.append(time.perf_counter() - start)
    return [Row(f"trust: digest of a {files:,}-file package", "s", runs, floors,
                "rglob + sha256", f"≤ {FACTOR:g} × floor", at_most(FACTOR), paired=True)]
