"""The house as built: every import in ``src/memvault`` runs downhill across the layers of
the design, no two modules import each other round a cycle, and the hook stays standard
library only. Read from the source with ``ast``; nothing is imported or run."""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "memvault"

# Each top-level module or package of memvault on its floor; an import may reach its own
# package, its own floor or a lower one, never a higher floor. A new top-level name must be
# given a floor here before its imports can pass.
FLOORS: dict[str, int] = {
    # the ground floor: values, text, settings and the stdlib-only hook
    "version": 0,
    "domain": 0,
    "errors": 0,
    "jsontext": 0,
    "analyzer": 0,
    "store_url": 0,
    "background": 0,
    "language": 0,
    "triggers": 0,
    "graph": 0,
    "hook": 0,
    "config": 0,
    "platforms": 0,
    # the only code that speaks SQL; the markdown files a person edits; the providers
    "store": 1,
    "vault": 1,
    "embeddings": 1,
    "llm": 1,
    # search, pure derivations, capture
    "search": 3,
    "derive": 3,
    "ingest": 3,
    # the pipeline's jobs
    "pipeline": 4,
    # the use cases, as parts
    "memory": 5,
    # what the faces share, and clients of the server
    "present": 6,
    "importers": 6,
    "archive": 6,
    "install": 6,
    "relay": 6,
    "server_process": 6,
    "service": 6,
    "doctor": 6,
    # the faces
    "api": 7,
    "cli": 7,
    "mcp_server": 7,
    "viewer": 7,
}
FACES = {name for name, floor in FLOORS.items() if floor == 7}

# Pairs on the same floor that must still never meet (importer, imported).
NEVER = [
    ("vault", "store"),  # the vault speaks no SQL
    ("store", "vault"),
    ("store", "embeddings"),
    ("store", "llm"),
    ("ingest", "search"),
    ("derive", "ingest"),
    ("derive", "search"),
    ("hook", "config"),
]


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    modules = {_module_name(path): path for path in SRC.rglob("*.py")}
    assert "memory" in modules, f"no memvault source under {SRC}"
    return modules


def _imports_of(module: str, path: Path, known: set[str]) -> list[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[Import] = []
    seen: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".") if package else []
                if node.level > 1:
                    base = base[: len(base) - (node.level - 1)]
                root = ".".join(["memvault", *base, *([node.module] if node.module else [])])
                names = [root, *(f"{root}.{alias.name}" for alias in node.names)]
            else:
                root = node.module or ""
                names = [root, *(f"{root}.{alias.name}" for alias in node.names)]
        for name in names:
            if name != "memvault" and not name.startswith("memvault."):
                continue
            target = name.removeprefix("memvault").lstrip(".")
            while target not in known and "." in target:
                target = target.rpartition(".")[0]
            if target in known and target != module and target not in seen:
                seen.add(target)
                found.append(Import(module, target, node.lineno))
    return found


def _graph() -> tuple[dict[str, Path], list[Import]]:
    modules = _modules()
    known = set(modules)
    imports = [imp for mod, path in modules.items() for imp in _imports_of(mod, path, known)]
    return modules, imports


def _top(module: str) -> str:
    return module.split(".")[0]


def test_every_top_level_module_has_a_floor():
    modules, _ = _graph()
    unplaced = sorted({_top(m) for m in modules if m and _top(m) not in FLOORS})
    assert unplaced == [], f"give these a floor in FLOORS: {unplaced}"


def _uphill(imports: list[Import]) -> list[str]:
    uphill = []
    for imp in imports:
        if not imp.importer:  # the package's own face hands Memory on
            continue
        a, b = _top(imp.importer), _top(imp.imported)
        if a == b or a not in FLOORS or b not in FLOORS:
            continue
        if FLOORS[b] > FLOORS[a] or (a, b) in NEVER:
            uphill.append(f"{imp.importer}:{imp.line} imports {imp.imported}")
    return uphill


def test_every_import_runs_downhill():
    _, imports = _graph()
    uphill = _uphill(imports)
    assert uphill == [], "imports that run uphill:\n" + "\n".join(uphill)


def test_an_uphill_import_or_a_cycle_would_be_seen():
    imports = [
        Import("vault.board", "memory.board", 3),
        Import("store.sqlite", "domain", 4),
        Import("api.app", "memory", 5),
        Import("ingest.capture", "search.engine", 6),
    ]
    assert _uphill(imports) == [
        "vault.board:3 imports memory.board",
        "ingest.capture:6 imports search.engine",
    ]
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(edges) == [["a", "b", "c"]]


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components larger than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
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
    return components


def test_no_modules_import_each_other_round_a_cycle():
    modules, imports = _graph()
    # A package's __init__ hands names on; cycles are counted between modules.
    faces = {_module_name(p) for p in SRC.rglob("__init__.py")}
    edges: dict[str, set[str]] = {m: set() for m in modules if m not in faces}
    for imp in imports:
        if imp.importer in edges and imp.imported in edges:
            edges[imp.importer].add(imp.imported)
    cycles = _cycles(edges)
    assert cycles == [], "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_hook_imports_only_the_standard_library():
    modules, _ = _graph()
    allowed = {"memvault"}
    foreign = []
    for module, path in modules.items():
        if _top(module) not in ("hook", "triggers"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                tops = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                tops = [(node.module or "").split(".")[0]]
            else:
                continue
            for top in tops:
                if (
                    top not in sys.stdlib_module_names
                    and top not in allowed
                    and top != "__future__"
                ):
                    foreign.append(f"{module}:{node.lineno} imports {top}")
    assert foreign == [], "the hook must run on the standard library alone:\n" + "\n".join(foreign)


@pytest.mark.parametrize(
    "source, expected",
    [
        ("from memvault.memory import Memory\n", ["memory"]),
        ("from ..store import open_store\n", ["store"]),
        ("import memvault.api.app\n", ["api.app"]),
    ],
)
def test_the_reading_of_imports_sees_absolute_and_relative_forms(tmp_path, source, expected):
    path = tmp_path / "vault" / "board.py"
    path.parent.mkdir()
    path.write_text(source, encoding="utf-8")
    known = {"vault.board", "memory", "store", "api.app", "api"}
    global SRC
    saved, SRC = SRC, tmp_path
    try:
        found = [imp.imported for imp in _imports_of("vault.board", path, known)]
    finally:
        SRC = saved
    assert found == expected
