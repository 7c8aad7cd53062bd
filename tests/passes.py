"""Which tests each of CI's two passes runs (CONTRIBUTING.md, "Which pass runs a test").

CI runs the suite twice: on SQLite and local memory (the embedded default of ``./dev up``),
then on PostgreSQL and Redis (what production runs). A test runs in the pass where what it
proves depends on what that pass has, and only twice when it asserts behaviour of both:

- a test that uses neither the database (no ``db`` fixture or ``django_db`` mark:
  pytest-django refuses it the database) nor the shared cache (no request through the
  test client, no module of the cache) runs once, in the SQLite pass: nothing it checks
  can differ;
- a test that uses the database or the shared cache in this process runs in both passes;
- a test that needs PostgreSQL or Redis (marked ``postgres`` or ``redis``) runs in the
  PostgreSQL pass only, and is skipped without them;
- a test that serves the project over a socket (``server``: a live server, gunicorn, a
  worker, a PostgreSQL server of its own), drives Chromium (``browser``) or runs a
  benchmark script (``bench_smoke``) runs once, in the PostgreSQL pass, on that pass's
  database and Redis, as production runs it.

Each test's kind is read from what it uses (its fixtures, the functions of
tests.servers, tests.postgres_cluster and tests.databases it calls, the cache's modules
its module holds), so a new test lands in its
pass without a list to keep. Outside CI's passes (``./dev test`` without ``--pass``) every
test runs that this machine can run.

Under ``--pass``, a test skipped in its pass that the other pass does not run fails: it
would otherwise be checked nowhere.
"""

import os

import pytest

SQLITE, POSTGRES = "sqlite", "postgres"

# Fixtures that serve the project over a socket, or drive a browser or a benchmark script.
SERVER_FIXTURES = {"live_server", "served", "shared_server", "server_database", "private_cluster"}
BROWSER_FIXTURES = {"browser", "playwright_instance", "chromium_executable", "phone"}
BENCH_FIXTURES = {"smoke", "prepared_database", "bench_servers"}
DATABASE_FIXTURES = {"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback"}
# A request through the project (the test client) reads the shared cache (admission, rate
# limits, /readyz), which is Redis in the PostgreSQL pass; so do the modules named here.
CACHE_FIXTURES = {"client", "api", "admin_client", "async_client"}
CACHE_MODULES = ("receco.lib.sharedcache", "merchants.admission.store", "django.core.cache")

# xdist groups (--dist loadgroup): the tests of a group run one after another on one worker,
# so that no two of them share the machine's cores, and a group's session fixtures (one
# Chromium, one shared gunicorn, one PostgreSQL server of the suite's own) start once.
GROUPS = {
    "browser": "browser",
    "server": "servers",
    "bench_smoke": "servers",
}  # browser first: a browser test may serve


def pytest_addoption(parser):
    parser.addoption(
        "--pass",
        dest="suite_pass",
        choices=[SQLITE, POSTGRES],
        default=None,
        help="run one of CI's two passes: only the tests that mean something on this database "
        "(CONTRIBUTING.md, 'Which pass runs a test')",
    )


STARTERS = {
    "start_gunicorn", "start_worker", "start_command", "migrate", "manage", "start_cluster", "start_replica", "fresh",
}  # fmt: skip
HELPERS = ("tests.servers", "tests.postgres_cluster", "tests.databases")
MARKED = ("postgres", "redis", "server", "browser", "bench_smoke")


def _code_names(code) -> set[str]:
    """The global names ``code`` and the functions and lambdas inside it refer to."""
    names = set(code.co_names)
    for constant in code.co_consts:
        if hasattr(constant, "co_names"):
            names |= _code_names(constant)
    return names


def _starts_processes(item) -> bool:
    """Whether ``item`` calls a function of tests.servers, tests.postgres_cluster or
    tests.databases that starts a process of the project or makes a database for one: in its
    body, its module's fixtures, or the functions and classes of its module these call."""
    module = getattr(item, "module", None)
    function = getattr(item, "function", None)
    if module is None or function is None:
        return False
    space = vars(module)
    todo = [function] + [space[name] for name in item.fixturenames if name in space]
    seen = set()
    while todo:
        current = todo.pop()
        code = getattr(getattr(current, "__wrapped__", current), "__code__", None)
        if code is None or code in seen:
            continue
        seen.add(code)
        for name in _code_names(code):
            value = space.get(name)
            if getattr(value, "__module__", None) in HELPERS and name in STARTERS:
                return True
            if getattr(value, "__name__", None) in HELPERS and _code_names(code) & STARTERS:
                return True  # servers.start_gunicorn(...), databases.fresh(...)
            if getattr(value, "__module__", None) == module.__name__:
                # A class of the module: the functions of its body (a fixture's Listener(...)).
                todo.extend(vars(value).values() if isinstance(value, type) else [value])
    return False


def _uses_cache(module) -> bool:
    """Whether ``module`` holds the shared cache's module, or a name taken from it."""
    if module is None:
        return False
    for value in vars(module).values():
        origin = getattr(value, "__name__", None) if isinstance(value, type(module)) else None
        origin = origin or getattr(value, "__module__", None)
        if origin in CACHE_MODULES:
            return True
    return False


def kinds(item) -> set[str]:
    """The kinds of ``item``: ``postgres``, ``redis``, ``server``, ``browser``, ``bench_smoke``,
    ``database`` (uses the database in this process), ``cache`` (the shared cache, without
    the database) or ``nodb``."""
    found = {name for name in MARKED if item.get_closest_marker(name)}
    names = set(getattr(item, "fixturenames", ()))
    if names & BROWSER_FIXTURES:
        found.add("browser")
    if names & BENCH_FIXTURES:
        found.add("bench_smoke")
    if names & SERVER_FIXTURES:
        found.add("server")
    if _starts_processes(item):
        found.add("server")
    if item.get_closest_marker("django_db") or names & DATABASE_FIXTURES or "live_server" in names:
        found.add("database")
    if names & CACHE_FIXTURES or _uses_cache(getattr(item, "module", None)):
        found.add("cache")
    if not found:
        found.add("nodb")
    return found


def passes(found: set[str]) -> set[str]:
    """The passes of CI that run a test of the kinds ``found``."""
    if found & {"postgres", "redis", "server", "browser", "bench_smoke"}:
        return {POSTGRES}
    if found & {"database", "cache"}:
        return {SQLITE, POSTGRES}
    return {SQLITE}


def _database_vendor() -> str:
    from django.db import connection

    return connection.vendor


KINDS = pytest.StashKey[set]()


def pytest_itemcollected(item):
    """Mark each test with its kind and its xdist group (before any hook reads them: -m,
    and xdist's --dist loadgroup); skip what needs a service this run does not have."""
    found = kinds(item)
    item.stash[KINDS] = found
    for name in sorted(found & {"server", "browser", "bench_smoke", "nodb"}):
        item.add_marker(name)
    groups = sorted(GROUPS[name] for name in found if name in GROUPS)
    if groups and not item.get_closest_marker("xdist_group"):
        item.add_marker(pytest.mark.xdist_group(groups[0]))
    if "postgres" in found and _database_vendor() != "postgresql":
        item.add_marker(pytest.mark.skip(reason="needs PostgreSQL: set DATABASE_URL=postgres://..."))
    if "redis" in found and not os.environ.get("REDIS_URL"):
        item.add_marker(pytest.mark.skip(reason="needs Redis: set REDIS_URL=redis://..."))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Under ``--pass``, leave out the tests of the other pass."""
    chosen = config.getoption("suite_pass")
    if chosen is None:
        return
    vendor = _database_vendor()
    if chosen == POSTGRES and (vendor != "postgresql" or not os.environ.get("REDIS_URL")):
        raise pytest.UsageError("--pass postgres needs DATABASE_URL=postgres://... and REDIS_URL=redis://...")
    if chosen == SQLITE and (vendor != "sqlite" or os.environ.get("REDIS_URL")):
        raise pytest.UsageError("--pass sqlite runs without DATABASE_URL and REDIS_URL (SQLite and local memory)")
    kept = [item for item in items if chosen in passes(item.stash[KINDS])]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if chosen not in passes(item.stash[KINDS])])
        items[:] = kept


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Under ``--pass``, a test skipped here that the other pass does not run fails."""
    report = yield
    chosen = item.config.getoption("suite_pass")
    if chosen and report.skipped and not hasattr(report, "wasxfail") and passes(item.stash[KINDS]) == {chosen}:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = (
            f"skipped in the {chosen} pass, which alone runs it, so CI would check it nowhere: {reason}\n"
            "A test that needs PostgreSQL or Redis is marked postgres or redis (CONTRIBUTING.md)."
        )
    return report


def pytest_xdist_auto_num_workers(config):
    """``-n auto`` (as ``./dev test`` runs): a worker for each core, but none (this process
    alone, where ``-s`` and a debugger work as usual) when only named tests are asked for."""
    named = [arg for arg in config.args if not arg.startswith("-")]
    if named and all("::" in arg for arg in named):
        return 0
    return None


def pytest_collection_finish(session):
    """On an xdist worker under --dist loadgroup, every grouped test's id must carry its
    group, or xdist spreads the group over the workers without a word."""
    if getattr(session.config.option, "loadgroup", False):
        lost = [
            item.nodeid for item in session.items if item.get_closest_marker("xdist_group") and "@" not in item.nodeid
        ]
        if lost:
            raise pytest.UsageError(f"--dist loadgroup did not group {lost[0]} (pytest-xdist issue 1386)")


# The time each group took, summed over its tests' set-up, call and tear-down on every
# worker: a run on two cores lasts at least its largest group, and at least half of the
# whole. Printed at the end of a run (.ci/run's passes show it).
_spent: dict[str, list] = {}


def _group(report) -> str:
    """The xdist group of a test's report, ``in-process`` for none."""
    if "xdist_group" in report.keywords and "@" in report.nodeid:
        # Under --dist loadgroup, xdist names the group at the end of the id (a parameter's
        # id, an e-mail address say, may hold an @ of its own: only a grouped test's counts).
        return report.nodeid.rsplit("@", 1)[1]
    for name in GROUPS:  # browser first, as pytest_itemcollected chooses
        if name in report.keywords:
            return GROUPS[name]
    return "in-process"


def pytest_runtest_logreport(report):
    seconds_and_tests = _spent.setdefault(_group(report), [0.0, set()])
    seconds_and_tests[0] += report.duration
    seconds_and_tests[1].add(report.nodeid)


def pytest_terminal_summary(terminalreporter):
    if getattr(terminalreporter.config, "workerinput", None) is not None or not _spent:
        return  # an xdist worker: its controller prints the sums
    terminalreporter.section("time by group (set-up, call and tear-down, summed)")
    for group, (seconds, tests) in sorted(_spent.items(), key=lambda item: -item[1][0]):
        terminalreporter.write_line(f"{group:>12} {seconds:7.1f} s  {len(tests):5d} tests")
