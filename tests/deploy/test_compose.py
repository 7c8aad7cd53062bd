"""compose.yaml, the deployment in one file, checked without a Docker engine: it is valid
under the Compose Specification's JSON schema, each service has what it needs, and every
variable it gives the services is one the settings (or gunicorn.conf.py) read, with the
values of .env.example loading cleanly."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from receco.lib.env import parse_email_url

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = Path(__file__).parent / "schemas" / "compose-spec.json"
APP_SERVICES = ("migrate", "web", "worker", "scheduler")
# ${NAME}, ${NAME:-default}, ${NAME-default}, ${NAME:?message}, ${NAME?message}
VARIABLE = re.compile(r"\$\{(?P<name>[A-Z0-9_]+)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}")


def _dotenv(path: Path) -> dict[str, str]:
    values = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, value = line.partition("=")
            values[name] = value
    return values


def _interpolate(value, env: dict[str, str]):
    """Docker Compose's interpolation of ${...} in the strings of ``value``."""
    if isinstance(value, dict):
        return {key: _interpolate(item, env) for key, item in value.items()}
    if isinstance(value, list):
        return [_interpolate(item, env) for item in value]
    if not isinstance(value, str):
        return value

    def replace(match):
        name, op, arg = match["name"], match["op"], match["arg"]
        value = env.get(name)
        # With a colon, an empty value counts as unset.
        if value is not None and (value or not (op or "").startswith(":")):
            return value
        if op in (":?", "?"):
            raise KeyError(f"{name}: {arg}")
        return arg if op else ""

    return VARIABLE.sub(replace, value)


@pytest.fixture(scope="module")
def compose():
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


@pytest.fixture(scope="module")
def example_env():
    """.env.example as a new operator fills it in: its blanks are the secrets."""
    values = _dotenv(ROOT / ".env.example")
    return {name: value or f"filled-in-{name.lower()}-" + "x" * 40 for name, value in values.items()}


def _read_names(environment: dict[str, str]) -> subprocess.CompletedProcess:
    """Load the settings and gunicorn.conf.py with exactly ``environment``; print the
    names of the environment variables they read."""
    code = """
import json, os, runpy
seen = set()
_getitem = type(os.environ).__getitem__
def getitem(self, key):
    seen.add(key)
    return _getitem(self, key)
type(os.environ).__getitem__ = getitem
import receco.settings
runpy.run_path("gunicorn.conf.py")
print(json.dumps(sorted(seen)))
"""
    base = {name: os.environ[name] for name in ("PATH", "HOME", "LANG") if name in os.environ}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**base, **environment}, capture_output=True, text=True, timeout=60
    )


def test_compose_yaml_is_valid_under_the_compose_specification(compose):
    schema = json.loads(SCHEMA.read_text())
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(compose), key=str)
    assert errors == []


def test_the_services_are_proxy_web_worker_scheduler_migrations_postgresql_and_redis(compose):
    assert set(compose["services"]) == {"postgres", "redis", "migrate", "proxy", "web", "worker", "scheduler"}
    assert "command" not in compose["services"]["web"]  # the image's: gunicorn
    assert compose["services"]["worker"]["command"] == ["python", "manage.py", "db_worker"]
    assert compose["services"]["migrate"]["command"] == ["python", "manage.py", "migrate", "--no-input"]
    assert compose["services"]["migrate"]["restart"] == "no"
    # Its jobs and their schedule: tests/messaging/test_runscheduler.py.
    assert compose["services"]["scheduler"]["command"] == ["python", "manage.py", "runscheduler"]


@pytest.mark.parametrize("name", ["postgres", "redis", "web", "proxy"], ids=["database", "cache", "web", "proxy"])
def test_the_long_running_services_have_health_checks(compose, name):
    assert compose["services"][name]["healthcheck"]["test"][0] == "CMD"


@pytest.mark.parametrize(
    ("name", "path"), [("postgres", "/var/lib/postgresql/data"), ("redis", "/data")], ids=["database", "cache"]
)
def test_the_data_lives_in_volumes(compose, name, path):
    volume, _, mount = compose["services"][name]["volumes"][0].partition(":")
    assert mount == path
    assert volume in compose["volumes"]


@pytest.mark.parametrize("name", ["web", "worker", "scheduler"])
def test_the_service_starts_after_migrations_and_healthy_redis(compose, name):
    assert compose["services"][name]["depends_on"] == {
        "migrate": {"condition": "service_completed_successfully"},
        "redis": {"condition": "service_healthy"},
    }


def test_migrations_wait_for_a_healthy_postgresql(compose):
    assert compose["services"]["migrate"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}


def test_the_web_health_check_asks_the_liveness_url(compose):
    assert "http://127.0.0.1:8000/healthz" in compose["services"]["web"]["healthcheck"]["test"][-1]


def test_every_variable_of_compose_yaml_is_in_env_example_and_the_other_way_round(compose, example_env):
    used = {match["name"] for match in VARIABLE.finditer((ROOT / "compose.yaml").read_text())}
    assert used == set(example_env)


def test_an_env_without_its_secrets_stops_compose_naming_them(compose, example_env):
    blank = {**example_env, "DJANGO_SECRET_KEY": ""}
    with pytest.raises(KeyError, match="DJANGO_SECRET_KEY: set DJANGO_SECRET_KEY in .env"):
        _interpolate(compose["services"]["web"]["environment"], blank)


@pytest.mark.parametrize("service", APP_SERVICES)
def test_every_variable_given_to_the_service_is_read_by_the_settings(compose, example_env, service):
    environment = _interpolate(compose["services"][service]["environment"], example_env)
    result = _read_names(environment)
    assert result.returncode == 0, result.stderr
    assert set(environment) - set(json.loads(result.stdout)) == set()


def test_the_database_and_redis_are_the_compose_services(compose, example_env):
    environment = _interpolate(compose["services"]["web"]["environment"], example_env)
    password = example_env["POSTGRES_PASSWORD"]
    assert environment["DATABASE_URL"] == f"postgres://receco:{password}@postgres:5432/receco"
    assert environment["REDIS_URL"] == "redis://redis:6379/0"
    assert environment["RECECO_TASKS_BACKEND"] == "database"


def test_env_example_sends_email_by_smtp(example_env):
    """Issue 32, item 4: its console: printed every email into the logs, links and addresses."""
    assert parse_email_url("EMAIL_URL", example_env["EMAIL_URL"])["EMAIL_BACKEND"].endswith(".smtp.EmailBackend")


def test_only_the_proxy_publishes_a_port(compose, example_env):
    """Issue 32.6: compose.yaml published gunicorn itself, and one client filled every
    connection slot. Now nginx is in front (tests/deploy/test_proxy.py replays the attacks
    on deploy/nginx), and gunicorn is reached on compose's network alone."""
    published = {name: service["ports"] for name, service in compose["services"].items() if "ports" in service}
    assert list(published) == ["proxy"]
    assert _interpolate(published["proxy"], example_env) == ["8000:80"]
    assert compose["services"]["proxy"]["environment"]["RECECO_PROXY_LISTEN"] == "80"


def test_the_proxy_passes_to_gunicorn_once_it_is_healthy(compose):
    proxy = compose["services"]["proxy"]
    assert proxy["image"] == "nginx:1.27"
    assert proxy["environment"]["RECECO_PROXY_UPSTREAM"] == "web:8000"
    assert proxy["depends_on"] == {"web": {"condition": "service_healthy"}}
    assert "http://127.0.0.1/healthz" in proxy["healthcheck"]["test"]
    # Its two files, from the repository, where the image reads them.
    assert proxy["volumes"] == [
        "./deploy/nginx/nginx.conf:/etc/nginx/nginx.conf:ro",
        "./deploy/nginx/receco.conf.template:/etc/nginx/templates/receco.conf.template:ro",
    ]
    assert proxy["command"][:5] == ["nginx", "-p", "/var/cache/nginx/", "-c", "/etc/nginx/nginx.conf"]


def test_the_proxys_environment_fills_every_blank_of_its_template(compose):
    template = (ROOT / "deploy" / "nginx" / "receco.conf.template").read_text()
    names = set(re.findall(r"\$\{([A-Z_]+)\}", template))
    assert names == set(compose["services"]["proxy"]["environment"])


def test_behind_the_proxy_the_service_reads_one_proxys_x_forwarded_for(compose, example_env):
    """The proxy appends the client's address; the service reads the last one (the
    setting's own default, 0, would count the proxy as every client)."""
    unset = {name: value for name, value in example_env.items() if name != "RECECO_TRUSTED_PROXY_COUNT"}
    assert _interpolate(compose["services"]["web"]["environment"], unset)["RECECO_TRUSTED_PROXY_COUNT"] == "1"
    assert example_env["RECECO_TRUSTED_PROXY_COUNT"] == "1"


def test_the_web_service_runs_a_standard_gunicorn_worker(compose):
    """The image's command, gunicorn with gunicorn.conf.py, whose worker class is one of
    gunicorn's own (issue 34.2: no worker on gunicorn's internals)."""
    assert "command" not in compose["services"]["web"]
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert 'CMD ["gunicorn", "--config", "gunicorn.conf.py", "receco.wsgi"]' in dockerfile
    config = (ROOT / "gunicorn.conf.py").read_text()
    assert re.findall(r"^worker_class = (.+)$", config, flags=re.MULTILINE) == ['"sync"']
