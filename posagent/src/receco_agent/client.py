"""Calls to the Receco service's remote procedures, and the reading of their answers.

An answer is one of three kinds: ``confirmed`` (200 with the receipt), ``refused`` (a
4xx other than 408/429 in the service's error envelope: sending it again cannot help)
and ``transient`` (anything else: no connection, timeout, 5xx, 429, or an answer that
does not come from a Receco service, which is a configuration problem, not the sale's)."""

import base64
import http.client
import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlsplit

from receco_agent import __version__, timing
from receco_agent.backoff import parse_retry_after
from receco_agent.pacing import Limit, Pacer, parse_limits

CONFIRMED = "confirmed"
REFUSED = "refused"
TRANSIENT = "transient"
MAX_ANSWER_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Answer:
    """What one call came to."""

    kind: str
    status: int | None = None
    message: str = ""
    code: str | None = None
    data: dict | None = None
    retry_after: float | None = None
    # The rate limits the answer stated (pacing.parse_limits); None when no HTTP answer came.
    limits: tuple[Limit, ...] | None = None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    # urllib would turn a redirected POST into a GET, which the service refuses with 405
    # and the sale would be marked failed; surface the redirect as a config problem instead.
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def _opener() -> urllib.request.OpenerDirector:
    # Made per call, so that it takes the proxy settings of now (HTTPS_PROXY, ...), as the
    # batches' Connection does.
    return urllib.request.build_opener(_NoRedirect)


def _headers(api_key: str | None) -> dict:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json",
        "User-Agent": f"receco-agent/{__version__}",
    }
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


def _call(request: urllib.request.Request, timeout: float) -> tuple[int | None, dict, bytes, str]:
    """Return (status, headers, body, error); status None means no HTTP answer at all."""
    try:
        with _opener().open(request, timeout=timeout) as response:
            return (
                response.status,
                dict(response.headers),
                response.read(MAX_ANSWER_BYTES),
                "",
            )
    except urllib.error.HTTPError as exc:
        try:
            body = exc.read(MAX_ANSWER_BYTES)
        except OSError:
            body = b""
        return exc.code, dict(exc.headers or {}), body, ""
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, TimeoutError):
            return (
                None,
                {},
                b"",
                f"no answer from {request.full_url} within {timeout:g} s",
            )
        text = reason.strerror if isinstance(reason, OSError) and reason.strerror else str(reason)
        return None, {}, b"", f"cannot reach {request.full_url}: {text}"
    except TimeoutError:
        return None, {}, b"", f"no answer from {request.full_url} within {timeout:g} s"
    except (OSError, http.client.HTTPException) as exc:
        # e.g. the connection dropped mid-answer: whether the service acted is unknown,
        # which the idempotent retry settles.
        return None, {}, b"", f"connection to {request.full_url} failed: {exc!r}"


def _json(body: bytes) -> object:
    try:
        return json.loads(body)
    except (ValueError, RecursionError):  # not JSON (or too deep, or a number too long, to read)
        return None


def _read_answer(url: str, token: str, status: int, headers: dict, body: bytes) -> Answer:
    return _classify(url, token, status, headers, _json(body))


def _classify(url: str, token: str, status: int, headers: dict, document: object) -> Answer:
    error = document.get("error") if isinstance(document, dict) else None
    limits = parse_limits(headers)
    if status == 200:
        result = document.get("result") if isinstance(document, dict) else None
        data = result.get("data") if isinstance(result, dict) else None
        if isinstance(data, dict) and data.get("token") == token:
            return Answer(CONFIRMED, status, data=data, limits=limits)
        return Answer(TRANSIENT, status, f"{url} answered 200 without the receipt; check rececoApiUrl", limits=limits)
    if isinstance(error, dict):
        message = str(error.get("message") or f"HTTP {status}")
        detail = error.get("data")
        code = detail.get("code") if isinstance(detail, dict) else None
    else:
        message = f"{url} answered HTTP {status} without a Receco error body; check rececoApiUrl"
        code = None
    retry_after = parse_retry_after({k.lower(): v for k, v in headers.items()}.get("retry-after"))
    if 400 <= status < 500 and status not in (408, 429) and isinstance(error, dict):
        return Answer(REFUSED, status, message, code, limits=limits)
    if 300 <= status < 400:
        location = {k.lower(): v for k, v in headers.items()}.get("location", "?")
        message = f"{url} redirects to {location}; set rececoApiUrl to the final address"
    return Answer(TRANSIENT, status, message, code, retry_after=retry_after, limits=limits)


def create_receipt(
    api_url: str, api_key: str | None, token: str, body: str, timeout: float, procedure: str = "createReceiptFromPOS"
) -> Answer:
    """POST ``body`` (the JSON input of ``procedure`` for ``token``) and classify the answer."""
    url = f"{api_url}/trpc/{procedure}"
    request = urllib.request.Request(url, data=body.encode("utf-8"), headers=_headers(api_key), method="POST")  # noqa: S310 (rececoApiUrl is validated as http/https)
    status, headers, answer, error = _call(request, timeout)
    if status is None:
        return Answer(TRANSIENT, None, error)
    return _read_answer(url, token, status, headers, answer)


# No receipt has this token (tokens are "rcpt_<time>_<random>"): looking it up proves the
# service is there and, with a key, that the key is accepted, without creating anything.
PROBE_INPUT = '{"token":"rcpt_0_keycheck"}'


def probe(api_url: str, api_key: str | None, timeout: float, pacer: Pacer | None = None) -> tuple[bool, str]:
    """Return (reachable, detail): whether a Receco service answers at ``api_url``, and
    what it made of ``api_key`` (detail starts with "API key refused" when it refused it).

    The rate limits the answer states are told to ``pacer``, when given.
    """
    url = f"{api_url}/trpc/getReceipt"
    request = urllib.request.Request(f"{url}?input={quote(PROBE_INPUT)}", headers=_headers(api_key), method="GET")  # noqa: S310 (rececoApiUrl is validated as http/https)
    status, headers, body, error = _call(request, timeout)
    if status is None:
        return False, error
    document = _json(body)
    error_body = document.get("error") if isinstance(document, dict) else None
    if not isinstance(document, dict) or ("result" not in document and not isinstance(error_body, dict)):
        return False, f"{url} answered HTTP {status} but not as a Receco service; check rececoApiUrl"
    if pacer is not None:
        retry_after = parse_retry_after({k.lower(): v for k, v in headers.items()}.get("retry-after"))
        pacer.heard(0, parse_limits(headers), refused=int(status == 429), retry_after=retry_after)
    if status in (401, 403):
        return True, f"API key refused by the service: {error_body.get('message')}"
    if not api_key:
        return True, "the service answers (no API key configured)"
    if status == 429:
        return True, "the service answers (rate limited: the key could not be checked now)"
    return True, "the service answers and accepts the API key"


def service_wide(answer: Answer) -> bool:
    """Whether a whole-batch failure is the service's or the link's (no answer, 408, 429, 5xx, or
    not a Receco answer at all) rather than something in the batch (another 4xx, e.g. 413)."""
    return answer.code is None or answer.status is None or answer.status >= 500 or answer.status in (408, 429)


class Connection:
    """One keep-alive HTTP connection to the service, for one thread at a time.

    Uploading a backlog over a slow link, a new TCP (and TLS) handshake per request would
    cost a round trip or two each; the connection is reopened whenever the server closed it.
    """

    def __init__(self, api_url: str, timeout: float):
        parts = urlsplit(api_url)
        self.api_url = api_url
        self.path = parts.path.rstrip("/")
        self.timeout = timeout
        https = parts.scheme == "https"
        port = parts.port or (443 if https else 80)
        # Through the proxy that the single uploads (urllib) use too: HTTPS_PROXY,
        # HTTP_PROXY and NO_PROXY, or the system's settings on Windows and macOS.
        proxy = _proxy_for(parts.scheme, parts.hostname or "")
        self._proxy_headers: dict = {}
        self._target_prefix = self.path
        if proxy is None:
            factory = http.client.HTTPSConnection if https else http.client.HTTPConnection
            self._make = lambda: factory(parts.hostname, port, timeout=timeout)
        else:
            proxy_host, proxy_port, proxy_headers = proxy
            if https:  # a CONNECT tunnel, TLS with the service inside it

                def tunnel() -> http.client.HTTPConnection:
                    connection = http.client.HTTPSConnection(proxy_host, proxy_port, timeout=timeout)
                    connection.set_tunnel(parts.hostname, port, headers=proxy_headers)
                    return connection

                self._make = tunnel
            else:  # plain HTTP: the request names the whole URL
                self._make = lambda: http.client.HTTPConnection(proxy_host, proxy_port, timeout=timeout)
                self._proxy_headers = proxy_headers
                host = f"[{parts.hostname}]" if ":" in (parts.hostname or "") else parts.hostname  # IPv6
                self._target_prefix = f"http://{host}:{port}{self.path}"
        self._conn: http.client.HTTPConnection | None = None

    def close(self) -> None:
        """Close the connection (it is reopened by the next post)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def post(self, path: str, body: bytes, headers: dict) -> tuple[int | None, dict, bytes, str]:
        """POST ``body`` to ``<api path><path>``; return (status, headers, body, error) as _call does.

        A request on a reused connection that the server had closed meanwhile is sent once
        more on a new one: every call the agent makes is idempotent.
        """
        url = f"{self.api_url}{path}"
        for attempt in (1, 2):
            reused = self._conn is not None
            if self._conn is None:
                self._conn = self._make()
            try:
                self._conn.request(
                    "POST", self._target_prefix + path, body=body, headers={**headers, **self._proxy_headers}
                )
                response = self._conn.getresponse()
                answer = response.read(MAX_ANSWER_BYTES)
                if response.will_close or not response.isclosed():
                    self.close()
                return response.status, dict(response.headers), answer, ""
            except TimeoutError:
                self.close()
                return None, {}, b"", f"no answer from {url} within {self.timeout:g} s"
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as exc:
                self.close()
                if reused and attempt == 1:
                    continue
                return None, {}, b"", f"connection to {url} failed: {exc!r}"
            except (OSError, http.client.HTTPException) as exc:
                self.close()
                text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or repr(exc)
                return None, {}, b"", f"cannot reach {url}: {text}"
        raise AssertionError("unreachable")


def _proxy_for(scheme: str, host: str) -> tuple[str, int, dict] | None:
    """The (host, port, headers for it) of the proxy urllib would use for ``scheme``://``host``, or None."""
    proxy = urllib.request.getproxies().get(scheme)
    if not proxy or urllib.request.proxy_bypass(host):
        return None
    if "://" not in proxy:
        proxy = f"http://{proxy}"
    parts = urlsplit(proxy)
    headers = {}
    if parts.username is not None:
        credentials = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        headers["Proxy-Authorization"] = "Basic " + base64.b64encode(credentials).decode("ascii")
    return parts.hostname or "", parts.port or 80, headers


@dataclass(frozen=True)
class Call:
    """One procedure call of a batch: its name, the token it is about and its JSON input."""

    procedure: str
    token: str
    body: str


def batch_request(calls: list[Call]) -> tuple[str, bytes]:
    """Return the (path, body) of a tRPC batch of ``calls``, each input sent byte for byte as queued."""
    path = "/trpc/" + ",".join(call.procedure for call in calls) + "?batch=1"
    body = "{" + ",".join(f'"{index}":{call.body}' for index, call in enumerate(calls)) + "}"
    return path, body.encode("utf-8")


def call_batch(connection: Connection, api_key: str | None, calls: list[Call]) -> list[Answer] | Answer:
    """Send ``calls`` as one tRPC POST batch; return one Answer per call, in order.

    Returns a single TRANSIENT Answer when the batch as a whole failed: no HTTP answer
    (status None), or an answer that is not one envelope per call (e.g. a 413 for the
    whole body). A batch of one call reads such an answer as that call's own.
    """
    path, body = batch_request(calls)
    url = f"{connection.api_url}{path}"
    status, headers, raw, error = connection.post(path, body, _headers(api_key))
    if status is None:
        return Answer(TRANSIENT, None, error)
    with timing.span("read answer", calls=len(calls), bytes=len(raw)):
        return _batch_answers(url, calls, status, headers, raw)


def _batch_answers(url: str, calls: list[Call], status: int, headers: dict, raw: bytes) -> list[Answer] | Answer:
    document = _json(raw)
    if not isinstance(document, list) or len(document) != len(calls):
        answer = _classify(url, calls[0].token, status, headers, document)
        if len(calls) == 1 and not (answer.kind == TRANSIENT and service_wide(answer)):
            return [answer]
        return Answer(
            TRANSIENT, status, answer.message, answer.code, retry_after=answer.retry_after, limits=answer.limits
        )
    answers = []
    for call, envelope in zip(calls, document, strict=True):
        error = envelope.get("error") if isinstance(envelope, dict) else None
        detail = error.get("data") if isinstance(error, dict) else None
        own = detail.get("httpStatus") if isinstance(detail, dict) else None
        call_status = own if isinstance(own, int) else (200 if status in (200, 207) else status)
        answers.append(_classify(url, call.token, call_status, headers, envelope))
    return answers
