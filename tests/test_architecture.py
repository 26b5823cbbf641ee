"""Dependencies point one way: every import in ``dsh_cli``, read from the source, obeys a table.

The walk is static (``ast``), so it sees what a load-time check cannot: imports inside
functions, under ``TYPE_CHECKING``, in error paths, and ``"dsh_cli.x:attr"`` references
that are imported by name later (the CLI's lazy subcommands). ``ALLOWED`` is the table that
``docs/architecture.md`` shows under "Allowed imports"; a test keeps the two the same.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest
from harness.package_source import module_text, module_tree, package_modules

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "dsh_cli"
ARCHITECTURE_DOC = ROOT / "docs" / "architecture.md"

_BASE = {"core"}
_BELOW_FRONT_DOORS = {"agent", "tools", "models", "store", "providers", "transcript", "interaction",
                      "permissions", "config", "core"}

# layer -> the other layers it may import. A layer is a subpackage of dsh_cli or a top-level
# module; the package itself (``dsh_cli/__init__.py``: the version) is the layer "dsh_cli".
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "interaction": _BASE,
    "config": _BASE,
    "transcript": _BASE,
    # the store's default location is a setting (config.data_dir); config imports only core
    "store": {"config", "core"},
    "models": {"config", "core"},
    "permissions": _BASE,
    "tools": {"interaction", "permissions", "core"},
    # the MCP client: a protocol client whose tools join the toolset, above tools/
    "mcp_client": {"tools", "interaction", "permissions", "core"},
    # the offline demo's notes server, a program of its own (python -m dsh_cli.demo_notes)
    "demo_notes": set(),
    "providers": {"interaction", "permissions", "core"},
    "agent": {"tools", "models", "interaction", "core"},
    "extensions": {"tools", "models", "interaction", "permissions", "core"},
    # front doors: opening a session, choosing who answers, the chat, the commands
    "runtime": {"agent", "tools", "models", "store", "interaction", "config", "core"},
    "sources": {"providers", "interaction", "permissions", "config", "core"},
    # opening a session (its MCP tools and permission gate too) and keeping it resumable
    # through signals, below chat and cli
    "session": {"dsh_cli", "runtime", "sources", "mcp_client", "demo_notes", "tools",
                "permissions", "config", "core"},
    "chat": {"runtime", "session", "sources", *_BELOW_FRONT_DOORS},
    # the attach desk (the human's side) and dsh mcp (the agents' side) of one Unix socket
    "desk": {"providers", "interaction", "permissions", "config", "core"},
    # dsh mcp's answer source is a row of the answer-source table (sources/)
    "mcp_server": {"dsh_cli", "desk", "sources", "tools", "store", "providers", "interaction",
                   "permissions", "config", "core"},
    # dsh hub: the store of a team's pending entries, tokens and audit (SQLite or PostgreSQL),
    # and the serving hub: dsh mcp's server with its questions kept in that store, and its
    # browser desk: the web desk's page behind the web page's guard (providers/web)
    "hub": {"mcp_server", "desk", "providers", "interaction", "permissions", "config", "core"},
    # dsh acp: the agent for ACP editors, a front door beside chat
    "acp": {"dsh_cli", "runtime", "session", "sources", "mcp_client", *_BELOW_FRONT_DOORS},
    "cli": {"dsh_cli", "acp", "chat", "desk", "mcp_server", "hub", "mcp_client", "runtime",
            "session", "sources", *_BELOW_FRONT_DOORS},
    "__main__": {"cli"},
    "dsh_cli": set(),
}

# Edges that break the table today because another change is still moving the code. Each
# must still occur (a stale entry fails too), so delete an entry once its fix is merged.
KNOWN_VIOLATIONS: dict[tuple[str, str], str] = {}

# a reference imported later by name, as the CLI's lazy subcommand table holds them
_REFERENCE = re.compile(r"dsh_cli(?:\.\w+)+:\w+")


@dataclass(frozen=True)
class Import:
    """One import of a dsh module: who imports what, and where."""

    source: str  # the importing module, dotted
    target: str  # the imported dsh module, dotted
    path: Path
    line: int

    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _absolute(node: ast.ImportFrom, module: str, package: bool) -> str:
    """The module an ``ImportFrom`` names, with relative imports resolved against ``module``."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if package else base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports_in(source: str, module: str, *, package: bool = False,
               known: set[str] | None = None, root: str = "dsh_cli") -> list[tuple[str, int]]:
    """Every ``root`` module ``source`` imports, with its line; ``known`` are the package's modules.

    ``from dsh_cli import config`` names the module ``dsh_cli.config`` when it is one.
    """
    found: list[tuple[str, int]] = []
    for node in ast.walk(module_tree(source)):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(node, module, package)
            for alias in node.names:
                child = f"{target}.{alias.name}"
                found.append((child if known and child in known else target, node.lineno))
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and _REFERENCE.fullmatch(node.value)):
            found.append((node.value.split(":")[0], node.lineno))
    return [(name, line) for name, line in found if name == root or name.startswith(root + ".")]


def package_files() -> list[Path]:
    return list(package_modules())


def all_imports() -> list[Import]:
    files = package_files()
    known = {module_name(path) for path in files}
    result = []
    for path in files:
        source = module_name(path)
        for target, line in imports_in(module_text(path), source,
                                       package=is_package(path), known=known):
            result.append(Import(source, target, path, line))
    return result


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def package_of(module: str, packages: set[str]) -> str:
    """The node of the package graph: a package, or a top-level module of its own."""
    if module in packages or module.count(".") <= 1:
        return module
    return module.rsplit(".", 1)[0]


def violations(imports: list[Import]) -> dict[tuple[str, str], list[Import]]:
    found: dict[tuple[str, str], list[Import]] = defaultdict(list)
    for item in imports:
        source, target = layer_of(item.source), layer_of(item.target)
        if source != target and target not in ALLOWED.get(source, set()):
            found[(source, target)].append(item)
    return found


def cycles(edges: dict[str, dict[str, Import]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in edges.get(node, {}):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return components


def describe(items: list[Import]) -> str:
    return "\n".join(f"  {item.where()}: {item.source} imports {item.target}" for item in items)


# -- the package ---------------------------------------------------------------------------


def test_every_module_belongs_to_a_layer():
    unknown = sorted({module_name(path) for path in package_files()
                      if layer_of(module_name(path)) not in ALLOWED})
    assert unknown == [], f"add a row for these to ALLOWED (and docs/architecture.md): {unknown}"


def test_every_import_follows_an_allowed_edge():
    found = violations(all_imports())
    unexpected = {edge: items for edge, items in found.items() if edge not in KNOWN_VIOLATIONS}
    report = "\n".join(f"{source} may not import {target}:\n{describe(items)}"
                       for (source, target), items in sorted(unexpected.items()))
    if unexpected:
        pytest.fail("imports against the allowed edges:\n" + report, pytrace=False)


def test_every_known_violation_still_occurs():
    found = violations(all_imports())
    stale = sorted(edge for edge in KNOWN_VIOLATIONS if edge not in found)
    assert stale == [], f"fixed, so delete from KNOWN_VIOLATIONS: {stale}"


def test_no_cycles_between_packages():
    files = package_files()
    packages = {module_name(path) for path in files if is_package(path)}
    edges: dict[str, dict[str, Import]] = defaultdict(dict)
    for item in all_imports():
        if (layer_of(item.source), layer_of(item.target)) in KNOWN_VIOLATIONS:
            continue  # reported (and tolerated) above, not twice
        source, target = package_of(item.source, packages), package_of(item.target, packages)
        if source != target:
            edges[source].setdefault(target, item)
    found = cycles(edges)
    report = "\n".join(
        " <-> ".join(component) + "\n" + describe(
            [edges[a][b] for a in component for b in component if b in edges.get(a, {})])
        for component in found)
    if found:
        pytest.fail("packages that import each other:\n" + report, pytrace=False)


def test_no_cycles_between_modules():
    """Inside a package too, no two modules import each other, even lazily."""
    edges: dict[str, dict[str, Import]] = defaultdict(dict)
    for item in all_imports():
        if item.source != item.target and not item.target.startswith(item.source + "."):
            edges[item.source].setdefault(item.target, item)
    found = cycles(edges)
    report = "\n".join(
        " <-> ".join(component) + "\n" + describe(
            [edges[a][b] for a in component for b in component if b in edges.get(a, {})])
        for component in found)
    if found:
        pytest.fail("modules that import each other:\n" + report, pytrace=False)


def bench_edges(bench: Path) -> dict[str, dict[str, Import]]:
    """The import graph of the ``bench`` package at ``bench`` (``from bench import x`` names x)."""
    files = sorted(bench.glob("*.py"))
    known = {module_name(path, bench.parent) for path in files}
    edges: dict[str, dict[str, Import]] = defaultdict(dict)
    for path in files:
        source = module_name(path, bench.parent)
        for target, line in imports_in(path.read_text(encoding="utf-8"), source,
                                       package=is_package(path), known=known, root="bench"):
            if target != source:
                edges[source].setdefault(target, Import(source, target, path, line))
    return edges


def test_no_cycles_between_bench_modules():
    """``python -m bench`` keeps the same rule as the package: no two modules import each other."""
    edges = bench_edges(ROOT / "bench")
    # the walk sees ``from bench import x`` as an import of x, not of the package
    assert "bench.bench_agent_loop" in edges["bench.agent"]
    found = cycles(edges)
    report = "\n".join(" <-> ".join(component) + "\n" + describe(
        [edges[a][b] for a in component for b in component if b in edges.get(a, {})])
        for component in found)
    if found:
        pytest.fail("bench modules that import each other:\n" + report, pytrace=False)


def test_a_bench_cycle_through_the_package_name_is_found(tmp_path):
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "__init__.py").write_text("")
    (bench / "floors.py").write_text("from bench import relay\n")
    (bench / "relay.py").write_text("def later():\n    from bench import floors\n")
    assert cycles(bench_edges(bench)) == [["bench.floors", "bench.relay"]]


# -- the page's ES modules -----------------------------------------------------------------

# an import or re-export declaration (``import {a} from "./a.js"``, ``export * from``), one
# for its side effects alone (``import "./a.js"``), and a dynamic ``import("./a.js")``
_JS_FROM = re.compile(r"^[ \t]*(?:import|export)\b[^;\"'`]*?\bfrom\s*([\"'])([^\"'\n]+)\1",
                      re.MULTILINE)
_JS_BARE = re.compile(r"^[ \t]*import\s*([\"'])([^\"'\n]+)\1", re.MULTILINE)
_JS_DYNAMIC = re.compile(r"\bimport\s*\(\s*([\"'])([^\"'\n]+)\1\s*\)")
_JS_IMPORT_LINE = re.compile(r"^[ \t]*import\b(?!\s*\()", re.MULTILINE)
# comments that start a line (the page's style): what they quote is not an import
_JS_COMMENTS = re.compile(r"^[ \t]*(?:/\*.*?\*/|//[^\n]*)", re.MULTILINE | re.DOTALL)


def js_imports(source: str) -> list[tuple[str, int]]:
    """Every module specifier ``source`` imports (statically, or dynamically), with its line."""
    text = _JS_COMMENTS.sub(lambda match: re.sub(r"[^\n]", " ", match.group()), source)
    found: dict[int, tuple[str, int]] = {}
    for pattern in (_JS_FROM, _JS_BARE, _JS_DYNAMIC):
        for match in pattern.finditer(text):
            found[match.start()] = (match.group(2), text.count("\n", 0, match.start()) + 1)
    understood = {text.count("\n", 0, start) + 1 for start in found}
    for match in _JS_IMPORT_LINE.finditer(text):  # a form the walk cannot read fails, not passes
        line = text.count("\n", 0, match.start()) + 1
        assert line in understood, f"line {line}: an import this walk does not understand"
    return [found[start] for start in sorted(found)]


def page_modules() -> list[Path]:
    return sorted(path for path in PACKAGE.rglob("*.js") if "node_modules" not in path.parts)


def page_edges(modules: list[Path]) -> dict[str, dict[str, Import]]:
    """The import graph of the page's modules, each named by its path in the package."""
    edges: dict[str, dict[str, Import]] = defaultdict(dict)
    for path in modules:
        source = str(path.relative_to(PACKAGE))
        edges.setdefault(source, {})
        for specifier, line in js_imports(path.read_text(encoding="utf-8")):
            # no bundler and no import map: the browser resolves only a relative path
            assert specifier.startswith(("./", "../")), \
                f"{source}:{line}: {specifier!r} is not a relative module path"
            target = (path.parent / specifier).resolve()
            assert target.is_file(), f"{source}:{line}: {specifier!r} names no module"
            name = str(target.relative_to(PACKAGE.resolve()))
            edges[source].setdefault(name, Import(source, name, path, line))
    return edges


def test_no_cycles_between_the_pages_modules():
    """The page's ES modules import one way too: a card tells the router it is done, and the
    router opens the next card through what ``main.js`` gives it, never by importing it."""
    modules = page_modules()
    assert modules, "the page's modules moved: point page_modules at them"
    edges = page_edges(modules)
    found = cycles(edges)
    report = "\n".join(" <-> ".join(component) + "\n" + describe(
        [edges[a][b] for a in component for b in component if b in edges.get(a, {})])
        for component in found)
    if found:
        pytest.fail("page modules that import each other:\n" + report, pytrace=False)


def test_every_page_module_is_reached_from_a_page():
    """Each module is loaded by a page's module script, or imported by one that is: so the
    walk above read every import (a module it lost would look unreachable here)."""
    edges = page_edges(page_modules())
    reached: set[str] = set()
    for page in PACKAGE.rglob("*.html"):
        for src in re.findall(r'<script type="module" src="/static/([^"]+)"',
                              page.read_text(encoding="utf-8")):
            reached.add(str((page.parent / src).relative_to(PACKAGE)))
    assert reached, "no page loads a module script"
    waiting = list(reached)
    while waiting:
        for target in edges.get(waiting.pop(), {}):
            if target not in reached:
                reached.add(target)
                waiting.append(target)
    assert sorted(set(edges) - reached) == []


def test_the_page_walk_reads_every_form_of_import():
    source = """// import { not } from "./commented.js";
/* import "./commented-too.js"; */
import { $, el } from "./dom.js";
import {
  a,
  b,
} from './multi.js';
import "./side.js";
import * as all from "./all.js";
export { c } from "./again.js";
export const MODE = meta("mode"); // from "./not-an-import.js"
export function later() {
  return import("./lazy.js");
}
"""
    assert js_imports(source) == [("./dom.js", 3), ("./multi.js", 4), ("./side.js", 8),
                                  ("./all.js", 9), ("./again.js", 10), ("./lazy.js", 13)]
    with pytest.raises(AssertionError, match="line 1: an import this walk does not"):
        js_imports("import a, { b } from ./unquoted.js;\n")


def test_a_page_cycle_is_found(tmp_path):
    (tmp_path / "screen.js").write_text('import { render } from "./question.js";\n')
    (tmp_path / "question.js").write_text('import { leave } from "./screen.js";\n')
    edges: dict[str, dict[str, Import]] = defaultdict(dict)
    for path in sorted(tmp_path.glob("*.js")):
        for specifier, line in js_imports(path.read_text()):
            edges[path.name].setdefault(specifier[2:], Import(path.name, specifier[2:], path, line))
    assert cycles(edges) == [["question.js", "screen.js"]]


# -- the table -----------------------------------------------------------------------------


def test_the_table_is_layered():
    assert cycles({layer: dict.fromkeys(targets) for layer, targets in ALLOWED.items()}) == []
    assert all(target in ALLOWED for targets in ALLOWED.values() for target in targets)


def test_the_seam_and_the_base_stay_at_the_bottom():
    assert ALLOWED["core"] == set()
    assert ALLOWED["interaction"] == {"core"}
    assert "cli" not in ALLOWED["chat"]
    assert not any("cli" in targets for layer, targets in ALLOWED.items() if layer != "__main__")


def documented_table() -> dict[str, set[str]]:
    text = ARCHITECTURE_DOC.read_text(encoding="utf-8")
    section = text.split("## Allowed imports", 1)[1].split("\n## ", 1)[0]
    table: dict[str, set[str]] = {}
    for row in re.findall(r"^\| *`([^`]+)` *\|([^|\n]*)\|", section, flags=re.MULTILINE):
        layer, targets = row
        table[layer] = set(re.findall(r"`([^`]+)`", targets))
    return table


def test_the_architecture_doc_shows_this_table():
    assert documented_table() == ALLOWED


# -- the walk itself -----------------------------------------------------------------------

SAMPLE = '''
from __future__ import annotations
import os
from typing import TYPE_CHECKING
import dsh_cli.core.errors
from dsh_cli import config
from dsh_cli import __version__

if TYPE_CHECKING:
    from dsh_cli.store import SessionStore

def later():
    from dsh_cli.models.demo import DemoModel
    try:
        import dsh_cli.transcript as transcript
    except ImportError:
        pass

COMMANDS = {"run": "dsh_cli.cli.run:run", "note": "see dsh_cli.agent for the loop"}
'''


def test_the_walk_sees_imports_anywhere_in_a_module():
    known = {"dsh_cli", "dsh_cli.config", "dsh_cli.core.errors"}
    assert sorted(imports_in(SAMPLE, "dsh_cli.tools.sample", known=known)) == sorted([
        ("dsh_cli.core.errors", 5), ("dsh_cli.config", 6), ("dsh_cli", 7),
        ("dsh_cli.store", 10), ("dsh_cli.models.demo", 13), ("dsh_cli.transcript", 15),
        ("dsh_cli.cli.run", 19)])


def test_the_walk_resolves_relative_imports():
    source = "from . import registry\nfrom .registry import Tool\nfrom ..core import errors\n"
    assert [name for name, _ in imports_in(source, "dsh_cli.tools.builtin")] == [
        "dsh_cli.tools", "dsh_cli.tools.registry", "dsh_cli.core"]
    assert [name for name, _ in imports_in(source, "dsh_cli.tools", package=True)] == [
        "dsh_cli.tools", "dsh_cli.tools.registry", "dsh_cli.core"]


@pytest.mark.parametrize(("source", "target", "allowed"), [
    ("dsh_cli.interaction.service", "dsh_cli.tools.registry", False),
    ("dsh_cli.core.events", "dsh_cli.config", False),
    ("dsh_cli.chat.app", "dsh_cli.cli.options", False),
    ("dsh_cli.models.resolve", "dsh_cli.config", True),
    ("dsh_cli.cli.run", "dsh_cli.chat.app", True),
    ("dsh_cli.providers.plain", "dsh_cli.providers.line_reader", True),
])
def test_an_edge_against_the_table_is_a_violation(source, target, allowed):
    item = Import(source, target, PACKAGE / "x.py", 1)
    assert (not violations([item])) is allowed


def test_a_cycle_is_found_and_named():
    a = Import("dsh_cli.a", "dsh_cli.b", PACKAGE / "a.py", 1)
    b = Import("dsh_cli.b", "dsh_cli.a", PACKAGE / "b.py", 2)
    assert cycles({"dsh_cli.a": {"dsh_cli.b": a}, "dsh_cli.b": {"dsh_cli.a": b}}) == [
        ["dsh_cli.a", "dsh_cli.b"]]
    assert cycles({"dsh_cli.a": {"dsh_cli.b": a}}) == []
