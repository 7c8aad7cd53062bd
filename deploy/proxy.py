"""The shipped nginx configuration (deploy/nginx) run outside its image: rendered as the
nginx image renders it, and served by this machine's nginx as an ordinary user, with a
prefix of its own. The suite's proxy tests (tests/deploy/test_proxy.py) and
bench/connections.py run it so, in front of a gunicorn on a port of their own.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

NGINX_DIR = Path(__file__).resolve().parent / "nginx"
MAIN = NGINX_DIR / "nginx.conf"
TEMPLATE = NGINX_DIR / "receco.conf.template"
# The nginx image's entrypoint replaces ${NAME} by the environment's NAME (envsubst).
_VARIABLE = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}")

COMPOSE = NGINX_DIR.parent.parent / "compose.yaml"


def compose_environment() -> dict[str, str]:
    """The proxy's environment in compose.yaml (the limits; its listen address and upstream)."""
    import yaml  # a development dependency: the service itself never reads compose.yaml

    environment = yaml.safe_load(COMPOSE.read_text())["services"]["proxy"]["environment"]
    return {name: str(value) for name, value in environment.items()}


def render(template: str, values: dict[str, str]) -> str:
    """``template`` with each ${NAME} replaced by ``values[NAME]``; KeyError names one missing."""
    return _VARIABLE.sub(lambda match: values[match["name"]], template)


def nginx_binary() -> str | None:
    """This machine's nginx (Debian installs it in /usr/sbin), or None."""
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)


@dataclass
class Proxy:
    process: subprocess.Popen
    port: int
    prefix: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def error_log(self) -> Path:
        return self.prefix / "error.log"

    @property
    def access_log(self) -> Path:
        return self.prefix / "access.log"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # nginx's fast shutdown
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start(prefix: Path, port: int, upstream: str, **limits: str) -> Proxy:
    """nginx with deploy/nginx/nginx.conf as it is and receco.conf.template rendered (the
    limits of compose.yaml unless ``limits`` names others), listening on 127.0.0.1:``port``
    and passing to ``upstream`` (host:port), in ``prefix`` (its pid, error log on stderr,
    access log on stdout, temporary files). Returns once it accepts connections."""
    binary = nginx_binary()
    if binary is None:
        raise FileNotFoundError("nginx is not installed (apt-get install nginx)")
    (prefix / "conf.d").mkdir(parents=True, exist_ok=True)
    (prefix / "temp").mkdir(exist_ok=True)
    shutil.copyfile(MAIN, prefix / "nginx.conf")
    values = {
        **compose_environment(),
        **limits,
        "RECECO_PROXY_LISTEN": f"127.0.0.1:{port}",
        "RECECO_PROXY_UPSTREAM": upstream,
    }
    (prefix / "conf.d" / "receco.conf").write_text(render(TEMPLATE.read_text(), values))
    settings = f"daemon off; pid {prefix / 'nginx.pid'}; error_log {prefix / 'error.log'} notice;"
    if os.geteuid() == 0:
        # Started by root, nginx's workers would run as nobody, who may not enter the
        # prefix (pytest's temporary directories are the user's alone).
        settings += " user root;"
    command = [binary, "-p", f"{prefix}/", "-c", str(prefix / "nginx.conf"), "-g", settings]
    with (prefix / "access.log").open("ab") as access, (prefix / "error.log").open("ab") as errors:
        process = subprocess.Popen(command, stdout=access, stderr=errors)  # noqa: S603 (the command is ours)
    proxy = Proxy(process, port, prefix)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proxy
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                proxy.stop()
                raise RuntimeError(f"nginx did not start:\n{proxy.error_log.read_text()[-3000:]}") from None
            time.sleep(0.05)
