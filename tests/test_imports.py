"""Imports run one way (docs/architecture.md): down the layers, never up, and never round
in a cycle.

The graph is read from the source (ast), imports inside functions included: a lazy
import that hides an upward dependency or a cycle is still one. Migrations are left out
(they name apps by label, as the migration graph needs); management commands are checked
as part of their app.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "service": (
        ROOT,
        [
            "receco",
            "merchants",
            "receipts",
            "ledger",
            "messaging",
            "einvoicing",
            "webhooks",
            "privacy",
            "locker",
            "dashboard",
            "customers",
            "agentapi",
            "callbacks",
        ],
    ),
    "verifier": (ROOT / "verifier" / "src", ["receco_verify"]),
    "agent": (ROOT / "posagent" / "src", ["receco_agent"]),
}

# The service's layers, from the bottom, app by app. A module may import modules of its
# own layer and of the layers below it, never one above. A module is in the layer of the
# longest name below that is its own or its package's.
LAYERS = [
    # Infrastructure: settings helpers, the database backend, Redis, the wire format of
    # the API, web utilities, what an operator watches. It knows no app.
    ("infrastructure", ["receco.lib", "receco.ops", "receco.errors"]),
    # The domain apps: models, rules and commands; no views, admins, urls or forms.
    # Merchants, their keys and staff, and the admission of every request.
    ("merchants", ["merchants"]),
    # Receipts: validation, the one writer of receipt rows and its hooks, look-up, refunds,
    # how a receipt reads (receipts.rendering).
    ("receipts", ["receipts"]),
    # The receipt log: signed entries of what the writer wrote, appended after the fact.
    ("ledger", ["ledger"]),
    # The one outbox: email, SMS and webhook deliveries, sent through their transports.
    ("messaging", ["messaging"]),
    # Every live receipt reported to the tax authority, a channel of the outbox.
    ("einvoicing", ["einvoicing"]),
    # Endpoints and events: they read receipts and hand deliveries to the outbox.
    ("webhooks", ["webhooks"]),
    # Erasure of a contact and retention, over every app below.
    ("privacy", ["privacy"]),
    # The customer's receipt locker: its sign-ins, sessions and listing.
    ("locker", ["locker"]),
    # What people and machines reach over HTTP: the merchant's dashboard, the customer
    # pages, the POS API (and the log's public HTTP), providers' callbacks.
    ("top", ["dashboard", "customers", "agentapi", "callbacks"]),
    # The project's wiring: receco.urls, receco.settings, receco.wsgi, receco.asgi.
    ("wiring", ["receco"]),
]


def _modules(base: Path, packages: list[str]) -> dict[str, Path]:
    found = {}
    for package in packages:
        for path in (base / package).rglob("*.py"):
            parts = path.relative_to(base).with_suffix("").parts
            if "migrations" in parts:
                continue
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> dict[str, int]:
    """The project modules ``name`` imports, each with the line of its first import
    (``from a import b`` counts a.b when it is a module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names = [f"{base}.{alias.name}" for alias in node.names]
            # ``from package import module`` imports the module, as ``import package.module``
            # does; the package counts only when a name is taken from it.
            if not all(name in modules for name in names):
                names.insert(0, base)
        else:
            continue
        for target in names:
            targets.setdefault(target, node.lineno)
    # A module's import of its own package's __init__ is how Python loads it, not an edge.
    return {
        target: line
        for target, line in targets.items()
        if target in modules and target != name and not name.startswith(target + ".")
    }


def _graph(part: str) -> dict[str, dict[str, int]]:
    base, packages = PACKAGES[part]
    modules = _modules(base, packages)
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def layer_of(module: str) -> int:
    """The index in LAYERS of ``module``'s layer: that of the longest name listed that is
    the module or one of its packages."""
    found = None
    for index, (_, names) in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and (found is None or len(name) > len(found[1])):
                found = (index, name)
    if found is None:
        raise LookupError(f"{module} is in no layer: add its app to LAYERS")
    return found[0]


def upward_imports(graph: dict[str, dict[str, int]]) -> list[str]:
    """Every import of a module in a higher layer, as ``module:line imports target (layer → layer)``."""
    found = []
    for name, targets in sorted(graph.items()):
        here = layer_of(name)
        for target, line in sorted(targets.items(), key=lambda item: item[1]):
            there = layer_of(target)
            if there > here:
                found.append(f"{name}:{line} imports {target} ({LAYERS[here][0]} → {LAYERS[there][0]})")
    return found


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


def test_every_import_runs_down_the_layers():
    problems = upward_imports(_graph("service"))
    assert not problems, "imports that run up the layers (tests/test_imports.py, LAYERS):\n" + "\n".join(problems)


@pytest.mark.parametrize("part", PACKAGES)
def test_there_is_no_import_cycle(part):
    graph = {name: set(targets) for name, targets in _graph(part).items()}
    assert _cycles(graph) == []


def test_the_check_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_check_finds_an_import_up_the_layers_inside_a_function():
    graph = {"receipts.creation": {"webhooks.outbox": 40}, "webhooks.outbox": {"receipts.models": 3}}
    assert upward_imports(graph) == ["receipts.creation:40 imports webhooks.outbox (receipts → webhooks)"]


def test_the_dashboard_and_the_pages_are_the_top_layer():
    layers = [name for name, _ in LAYERS]
    top = layers.index("top")
    assert [layer_of(name) for name in ("dashboard.admin.receipts", "customers.views.receipts", "dashboard.sites")] == [
        top
    ] * 3
    assert layer_of("receipts.creation") == layers.index("receipts")
    assert layer_of("receco.lib.replicas") == 0
    assert layer_of("receco.urls") == layers.index("wiring")


def test_a_module_is_in_the_layer_of_the_longest_name_that_holds_it():
    assert layer_of("receco.errors") == 0
    assert layer_of("receco") == len(LAYERS) - 1
    assert layer_of("merchants.admission.store") == 1
