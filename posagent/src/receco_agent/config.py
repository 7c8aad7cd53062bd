"""Agent settings: a JSON file in the agent's home directory, each setting
overridable by an environment variable. Every invalid value fails with a message naming
the setting, where it came from and what is expected."""

import json
import os
import re
import string
import zlib
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import platformdirs

CONFIG_FILE = "config.json"
# The Windows service's name (service_install registers it, winservice runs as it).
WINDOWS_SERVICE = "RececoAgent"
QUEUE_FILE = "queue.sqlite3"
HOME_ENV = "RECECO_AGENT_HOME"
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")
KEY_PREFIXES = ("postest_", "poslive_")
KEY_CHECKSUM_LENGTH = 6
KEY_RE = re.compile(r"pos(?:test|live)_[0-9A-Za-z]{50}")
_BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase


class ConfigError(Exception):
    """A setting is missing or invalid; the message says how to fix it."""


def default_home() -> Path:
    """Return the per-user configuration directory used when RECECO_AGENT_HOME is unset."""
    return Path(platformdirs.user_config_dir("receco-agent", appauthor=False))


def resolve_home(home: str | os.PathLike | None = None, env: Mapping[str, str] | None = None) -> Path:
    """Return the agent home: ``home`` if given, else $RECECO_AGENT_HOME, else the default."""
    env = os.environ if env is None else env
    if home:
        return Path(home).expanduser().resolve()
    if env.get(HOME_ENV):
        return Path(env[HOME_ENV]).expanduser().resolve()
    return default_home()


def _parse_string(value: object) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return value.strip() or None
    raise ValueError("a string")


def _parse_merchant_id(value: object) -> str | None:
    text = _parse_string(value)
    if text is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", text):
        raise ValueError(
            "a merchant id of 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit, "
            "such as test-shop-1"
        )
    return text


def key_problem(key: str) -> str | None:
    """Return why ``key`` cannot be a Receco API key (its form or checksum), or None.

    The form is the service's (tests/agent hold the two to each other): ``postest_`` or
    ``poslive_``, then 50 base62 characters, the last 6 the CRC32 of all before them.
    """
    if not KEY_RE.fullmatch(key):
        return "its form is wrong: 58 characters, postest_ or poslive_ then 50 letters and digits"
    body, checksum = key[:-KEY_CHECKSUM_LENGTH], key[-KEY_CHECKSUM_LENGTH:]
    if _base62(zlib.crc32(body.encode()), KEY_CHECKSUM_LENGTH) != checksum:
        return "its checksum does not match: a character was mistyped or the key was cut short"
    return None


def _base62(number: int, width: int) -> str:
    digits = []
    while number:
        number, rest = divmod(number, 62)
        digits.append(_BASE62[rest])
    return "".join(reversed(digits)).rjust(width, _BASE62[0])


def _parse_api_key(value: object) -> str | None:
    text = _parse_string(value)
    if text is not None and not text.startswith(KEY_PREFIXES):
        raise ValueError(
            "a Receco API key starting with postest_ or poslive_ "
            "(made in the merchant dashboard: the API keys link of your shop), or empty for none"
        )
    problem = key_problem(text) if text is not None else None
    if problem:
        raise ValueError(f"a Receco API key as the dashboard showed it, copied whole ({problem})")
    return text


def _parse_url(example: str) -> Callable[[object], str]:
    def parse(value: object) -> str:
        text = _parse_string(value)
        parts = urlsplit(text or "")
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
            raise ValueError(f"an http:// or https:// URL such as {example}")
        return text.rstrip("/")

    return parse


def _parse_api_url(value: object) -> str:
    url = _parse_url("http://127.0.0.1:8000/api")(value)
    if url.endswith("/trpc"):
        raise ValueError(
            f"the parent of /trpc, such as {url[: -len('/trpc')]} (procedures are called at <url>/trpc/<name>)"
        )
    return url


def _parse_bool(value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
    raise ValueError("true or false")


def _parse_port(value: object) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65535:
        raise ValueError("an integer from 1 to 65535")
    return value


def _parse_log_level(value: object) -> str:
    if isinstance(value, str) and value.strip().lower() in LOG_LEVELS:
        return value.strip().lower()
    raise ValueError("one of " + ", ".join(LOG_LEVELS))


@dataclass(frozen=True)
class _Field:
    key: str
    env: str
    attr: str
    parse: Callable[[object], object]
    default: object


FIELDS = (
    _Field("merchantId", "RECECO_MERCHANT_ID", "merchant_id", _parse_merchant_id, None),
    _Field("apiKey", "RECECO_API_KEY", "api_key", _parse_api_key, None),
    _Field(
        "rececoApiUrl",
        "RECECO_API_URL",
        "api_url",
        _parse_api_url,
        "http://127.0.0.1:8000/api",
    ),
    _Field(
        "rececoWebUrl",
        "RECECO_WEB_URL",
        "web_url",
        _parse_url("http://127.0.0.1:8000"),
        "http://127.0.0.1:8000",
    ),
    _Field("enableOfflineMode", "RECECO_OFFLINE_MODE", "offline_mode", _parse_bool, True),
    _Field("printQRCodes", "RECECO_PRINT_QR", "print_qr", _parse_bool, True),
    _Field("port", "RECECO_AGENT_PORT", "port", _parse_port, 3001),
    _Field("logLevel", "RECECO_LOG_LEVEL", "log_level", _parse_log_level, "info"),
)
FIELDS_BY_KEY = {f.key: f for f in FIELDS}


@dataclass(frozen=True)
class Settings:
    """The agent's effective settings, with the home directory they were read from."""

    home: Path
    merchant_id: str | None = None
    api_key: str | None = None
    api_url: str = "http://127.0.0.1:8000/api"
    web_url: str = "http://127.0.0.1:8000"
    offline_mode: bool = True
    print_qr: bool = True
    port: int = 3001
    log_level: str = "info"

    @property
    def config_path(self) -> Path:
        return self.home / CONFIG_FILE

    @property
    def queue_path(self) -> Path:
        return self.home / QUEUE_FILE

    @property
    def agent_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def procedure_url(self, name: str) -> str:
        """Return the URL of the remote procedure ``name``."""
        return f"{self.api_url}/trpc/{name}"

    def receipt_url(self, token: str) -> str:
        """Return the customer's receipt page for ``token``."""
        return f"{self.web_url}/app/receipt/{token}"

    def require_merchant_id(self) -> str:
        """Return the merchant id or raise ConfigError saying how to set it."""
        if not self.merchant_id:
            raise ConfigError(
                f"merchantId is not set: run 'receco-agent init --merchant-id <id> --api-key <key>' "
                f"or set {FIELDS_BY_KEY['merchantId'].env}"
            )
        return self.merchant_id


def read_file(path: Path) -> dict:
    """Return the raw settings object of a config file, ``{}`` when it does not exist.

    Raises ConfigError when the file is not a JSON object of known settings.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "fix it or run 'receco-agent init' again"
        ) from exc
    if not isinstance(raw, dict):
        raise ConfigError(f'{path} must hold a JSON object such as {{"merchantId": "test-shop"}}')
    unknown = sorted(set(raw) - set(FIELDS_BY_KEY))
    if unknown:
        raise ConfigError(
            f"{path} has unknown setting(s) {', '.join(unknown)}; known settings are " + ", ".join(FIELDS_BY_KEY)
        )
    return raw


def load(home: str | os.PathLike | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """Return the settings of ``home`` (see resolve_home) with environment overrides applied.

    Raises ConfigError naming the setting, its source and the expected value.
    """
    env = os.environ if env is None else env
    home_path = resolve_home(home, env)
    path = home_path / CONFIG_FILE
    raw = read_file(path)
    values = {}
    for field in FIELDS:
        if field.env in env:
            value, source = env[field.env], f"environment variable {field.env}"
        elif field.key in raw:
            value, source = raw[field.key], str(path)
        else:
            values[field.attr] = field.default
            continue
        try:
            values[field.attr] = field.parse(value)
        except ValueError as exc:
            raise ConfigError(f"{field.key} (from {source}) must be {exc}; got {value!r}") from None
    if "RECECO_WEB_URL" not in env and "rececoWebUrl" not in raw:
        values["web_url"] = web_origin(values["api_url"])
    return Settings(home=home_path, **values)


def web_origin(api_url: str) -> str:
    """Return the default web app URL for ``api_url``: its scheme, host and port."""
    parts = urlsplit(api_url)
    return f"{parts.scheme}://{parts.netloc}"


def write(home: Path, updates: Mapping[str, object]) -> Path:
    """Merge ``updates`` (camelCase keys) into the config file of ``home`` and return its path.

    The file is replaced atomically and readable by its owner only, since it holds the API
    key. Raises ConfigError if the merged settings are invalid; the file is then unchanged.
    """
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = home / CONFIG_FILE
    raw = read_file(path)
    merged = {f.key: raw.get(f.key, f.default) for f in FIELDS}
    merged.update({k: v for k, v in updates.items() if v is not None})
    if "rececoWebUrl" not in raw and updates.get("rececoWebUrl") is None:
        # The web app is usually served next to the API: same origin. A bad API URL is
        # reported with the other settings below.
        with suppress(ValueError):
            merged["rececoWebUrl"] = web_origin(_parse_api_url(merged["rececoApiUrl"]))
    for field in FIELDS:
        try:
            field.parse(merged[field.key])
        except ValueError as exc:
            raise ConfigError(f"{field.key} must be {exc}; got {merged[field.key]!r}") from None
    temp = path.with_name(f".{CONFIG_FILE}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(merged, handle, indent=2)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, 0o600)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return path
