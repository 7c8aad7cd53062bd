"""No module of the project imports, however indirectly, a module that imports it back.

The graph is read from the source (ast), imports inside functions included: a lazy
import that hides a cycle is still a cycle. Migrations and management commands are
leaves nobody imports, and are left out.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "service": (ROOT, ["receco", "receipts", "merchants", "agentapi", "webhooks", "ledger"]),
    "verifier": (ROOT / "verifier" / "src", ["receco_verify"]),
    "agent": (ROOT / "posagent" / "src", ["receco_agent"]),
}


def _modules(base: Path, packages: list[str]) -> dict[str, Path]:
    found = {}
    for package in packages:
        for path in (base / package).rglob("*.py"):
            parts = path.relative_to(base).with_suffix("").parts
            if "migrations" in parts or "management" in parts:
                continue
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules ``name`` imports (``from a import b`` counts a.b when it is a module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets.add(base)
            targets.update(f"{base}.{alias.name}" for alias in node.names)
    # A module's import of its own package's __init__ is how Python loads it, not an edge.
    return {target for target in targets if target in modules and target != name and not name.startswith(target + ".")}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return found


@pytest.mark.parametrize("part", PACKAGES)
def test_there_is_no_import_cycle(part):
    base, packages = PACKAGES[part]
    modules = _modules(base, packages)
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert _cycles(graph) == []


def test_the_check_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
