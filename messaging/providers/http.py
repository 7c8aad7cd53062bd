"""One JSON request to a provider's documented HTTP API (Termii, WhatsApp's Graph API),
with the standard library, as the webhook SMS backend sends (messaging.sms).

The answer's body is read (at most MAX_ANSWER bytes) and parsed whatever its status: the
providers say in it why they refused. Nothing here logs: the caller decides what of the
answer to keep, and a provider's words may quote the number.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass

MAX_ANSWER = 64 * 1024


@dataclass(frozen=True)
class Answer:
    status: int
    data: dict  # the JSON object answered; {} for anything else


class Unreachable(Exception):
    """No answer: a refused connection, a timeout, a broken TLS exchange."""


def post_json(url: str, body: dict, *, headers: dict[str, str] | None = None, timeout: float) -> Answer:
    """POST ``body`` as JSON to ``url``; return the answer, whatever its status. Raises Unreachable."""
    request = urllib.request.Request(  # noqa: S310 (an https URL from the settings)
        url,
        data=json.dumps(body).encode(),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": "Receco",
            **(headers or {}),
        },
        method="POST",
    )
    # An opener per request: urlopen's shared one reads the proxy settings of the
    # environment (HTTPS_PROXY, NO_PROXY) once, when first used.
    opener = urllib.request.build_opener()
    try:
        with opener.open(request, timeout=timeout) as response:
            return Answer(response.status, _object(response.read(MAX_ANSWER)))
    except urllib.error.HTTPError as exc:
        with exc:
            return Answer(exc.code, _object(exc.read(MAX_ANSWER)))
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise Unreachable(str(getattr(exc, "reason", exc))) from None


def _object(raw: bytes) -> dict:
    try:
        data = json.loads(raw)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def refused_for_good(status: int) -> bool:
    """Whether an HTTP status says that sending the same again cannot help: a 4xx other
    than 408 (timeout) and 429 (throttled). 5xx and those two are worth retrying."""
    return 400 <= status < 500 and status not in (408, 429)
