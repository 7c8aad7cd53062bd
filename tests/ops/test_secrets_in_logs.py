"""No log line holds a credential (issue 32, item 3), and the access log writes one line a
request (item 11).

Every flow that carries a secret is driven through a real gunicorn with gunicorn.conf.py
and a real task worker (``manage.py db_worker``), as production runs them (debug off),
every logger at DEBUG, in JSON lines and in plain ones: a sale by a key and one by a
wrong key; the receipt's pages, QR codes, files, wallet passes, proof and getReceipt by
its token and by its code; the receipt email and its "Not your receipt?" link; the
locker's email link; a team invitation; a password reset; forms sent without their CSRF
token; a request line gunicorn refuses. Then every line the server and the worker wrote
is searched for each secret. runserver (development) and a database outage (Django logs
the path of every 5xx) are replayed the same way.
"""

import email
import email.policy
import http.cookiejar
import io
import json
import os
import re
import secrets
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.conf import global_settings
from django.core.management import call_command
from django.db import connection
from django_tasks_db.models import DBTaskResult

from merchants.models import Merchant
from tests.receivers import SMTPServer
from tests.servers import (
    ROOT,
    SECRET,
    Gunicorn,
    Worker,
    forget_cache_prefix,
    free_port,
    start_gunicorn,
    start_worker,
)

# Committed for real: the server and the worker read the test's database.
pytestmark = pytest.mark.django_db(transaction=True)

CUSTOMER_EMAIL = "ada.lovelace@example.com"
CUSTOMER_PHONE = "+2348031234567"
OTHER_EMAIL = "grace.hopper@example.org"
OWNER_EMAIL = "olu.owner@mama-put.example"
INVITEE_EMAIL = "ngozi.new@mama-put.example"
OWNER_PASSWORD = "Owner-jollof-and-chapman-42"  # noqa: S105
INVITEE_PASSWORD = "Invitee-puff-puff-and-zobo-7"  # noqa: S105
RESET_PASSWORD = "Reset-suya-and-kilishi-19"  # noqa: S105
# Every logger at DEBUG, gunicorn's included: no line at any level may hold a secret.
VERBOSE = {"DJANGO_LOG_LEVEL": "DEBUG", "GUNICORN_CMD_ARGS": "--log-level debug"}


def _database_url() -> str:
    """The test's database, for the processes the test starts."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    return f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@dataclass
class Answer:
    status: int
    headers: dict
    text: str


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class Browser:
    """One visitor with cookies of its own. Redirects are not followed: the answer says
    where they lead. Every request carries an X-Request-ID of its own (``ids``)."""

    def __init__(self, server: Gunicorn, name: str, ids: list[str]):
        self.server, self.name, self.ids = server, name, ids
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), _NoRedirect())

    def request(self, method: str, path: str, data: bytes | None = None, headers: dict | None = None) -> Answer:
        request_id = f"{self.name}-{len(self.ids)}"
        self.ids.append(request_id)
        headers = {"X-Request-ID": request_id, **(headers or {})}
        request = urllib.request.Request(self.server.url + path, data=data, headers=headers, method=method)
        try:
            with self.opener.open(request, timeout=60) as response:
                return Answer(response.status, dict(response.headers), response.read().decode(errors="replace"))
        except urllib.error.HTTPError as error:
            return Answer(error.code, dict(error.headers), error.read().decode(errors="replace"))

    def get(self, path: str, **headers) -> Answer:
        return self.request("GET", path, headers=headers)

    def post(self, path: str, form: dict, csrf: bool = True) -> Answer:
        if csrf:
            form = {**form, "csrfmiddlewaretoken": self.cookie("csrftoken")}
        content = {"Content-Type": "application/x-www-form-urlencoded"}
        return self.request("POST", path, urllib.parse.urlencode(form).encode(), content)

    def api(self, procedure: str, body: dict, key: str = "") -> Answer:
        headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})}
        return self.request("POST", f"/api/trpc/{procedure}", json.dumps(body).encode(), headers)

    def cookie(self, name: str) -> str:
        return next(cookie.value for cookie in self.jar if cookie.name == name)

    def cookies(self) -> list[str]:
        return [cookie.value for cookie in self.jar]


@dataclass
class Stack:
    server: Gunicorn
    worker: Worker
    smtp: SMTPServer
    key: str
    merchant_pk: int
    ids: list[str] = field(default_factory=list)

    def mail(self, to: str, containing: str = "", seconds: float = 60) -> str:
        """The text of the first message sent to ``to`` that holds ``containing``, once it came."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for message in list(self.smtp.messages):
                text = _text(message["data"])
                if any(to in recipient for recipient in message["to"]) and containing in text:
                    return text
            assert self.worker.alive(), self.worker.log.read_text()[-3000:]
            time.sleep(0.2)
        raise AssertionError(f"no message to {to} within {seconds} s:\n{self.worker.log.read_text()[-3000:]}")

    def lines(self) -> list[str]:
        return [
            line for log in (self.server.log, self.worker.log) for line in log.read_text().splitlines() if line.strip()
        ]


def _until(condition, what: str, seconds: float = 60) -> None:
    """Return once ``condition()`` holds; fail after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.05)


def _access_lines_of(log: Path, ids: list[str]) -> bool:
    """Whether gunicorn's access line of each request of ``ids`` is in ``log`` (it is
    written after the answer: the client may read the answer first)."""
    text = log.read_text()
    return all(re.search(rf" {re.escape(request_id)}(?![\w-])", text) for request_id in ids)


def _text(data: bytes) -> str:
    message = email.message_from_bytes(data, policy=email.policy.default)
    return message.get_body(("plain",)).get_content()


def _path(text: str, pattern: str) -> str:
    """The path of the first link in ``text`` whose path matches ``pattern``."""
    return re.search(rf"https?://[^/\s]+({pattern})", text)[1]


def _command(*args: str) -> str:
    """What a management command printed, run here, on the test's database the servers read
    (committed: the test is transactional), instead of a process of its own (seconds each)."""
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.fixture(params=["json", "plain"])
def stack(request, tmp_path, settings):
    """The service (gunicorn, its access log on) and a task worker on the test's database,
    with a shop, its live key and its owner, sending email to a local SMTP server."""
    url = _database_url()
    _command("createmerchant", "mama-put", "--name", "Mama Put Kitchen")
    key = _command("createapikey", "mama-put", "--type", "live").split()[-1]
    # The owner's password hashed as the server hashes one (the suite's own hasher is MD5).
    settings.PASSWORD_HASHERS = global_settings.PASSWORD_HASHERS
    _command("createmerchantuser", "mama-put", "olu", "--password", OWNER_PASSWORD, "--email", OWNER_EMAIL, "--owner")
    smtp = SMTPServer()
    env = {
        **VERBOSE,
        "RECECO_LOG_FORMAT": request.param,
        "EMAIL_URL": f"smtp://127.0.0.1:{smtp.port}",
        "RECECO_SMS_BACKEND": "console",
        # The dashboard's second step is another test's (tests/dashboard/test_twofactor.py).
        "RECECO_DASHBOARD_REQUIRE_2FA": "0",
    }
    server = start_gunicorn(url, tmp_path / "web.log", access_log=True, **env)
    worker = start_worker(url, tmp_path / "worker.log", **env)
    try:
        yield Stack(server, worker, smtp, key, Merchant.objects.get(string_id="mama-put").pk)
    finally:
        worker.stop()
        server.stop()
        smtp.close()
        forget_cache_prefix()


def _sale_flows(stack: Stack) -> dict[str, str]:
    """A sale, its receipt read every way there is, its email and "Not your receipt?"."""
    till, customer = Browser(stack.server, "till", stack.ids), Browser(stack.server, "customer", stack.ids)
    # A token the till made itself, as the public SDKs do: no pattern gives it away.
    token = f"sale-{secrets.token_hex(8)}"
    sale = {
        "token": token,
        "merchant_string_id": "mama-put",
        "total_amount": 130000,
        "items": [{"name": "Jollof rice", "quantity": 2, "unit_price": 65000, "total_price": 130000}],
        "customer_email": CUSTOMER_EMAIL,
        "customer_phone": CUSTOMER_PHONE,
    }
    created = till.api("createReceiptFromPOS", sale, stack.key)
    assert created.status == 200, created.text
    code = json.loads(created.text)["result"]["data"]["short_code"]
    bad_key = stack.key[:-6] + "AAAAAA"
    assert till.api("createReceiptFromPOS", {**sale, "token": f"sale-{secrets.token_hex(8)}"}, bad_key).status == 401

    for reference in (token, code):
        # By its code, a page may lead to the page of its token.
        assert customer.get(f"/app/receipt/{reference}").status in (200, 302)
        for part in ("qr.png", "qr.svg", "receipt.orf.json"):
            assert customer.get(f"/app/receipt/{reference}/{part}").status in (200, 302)
        for wallet in ("wallet/receipt.pkpass", "wallet/google"):
            assert customer.get(f"/app/receipt/{reference}/{wallet}").status in (200, 302, 404)
        query = urllib.parse.urlencode({"input": json.dumps({"token": reference})})
        assert customer.get(f"/api/trpc/getReceipt?{query}").status == 200
    assert customer.get(f"/receipt/{token}").status == 301
    assert customer.get(f"/r/{code}").status == 302
    assert customer.get(f"/log/proof/{token}").status in (200, 404)
    batch = urllib.parse.urlencode({"batch": "1", "input": json.dumps({"0": {"token": token}, "1": {"token": code}})})
    assert customer.get(f"/api/trpc/getReceipt,getReceipt?{batch}").status == 200
    # The send form, without its CSRF token first (Django logs the refusal with the path).
    assert customer.post(f"/app/receipt/{token}/send", {"email": OTHER_EMAIL}, csrf=False).status == 403
    assert customer.post(f"/app/receipt/{token}/send", {"email": OTHER_EMAIL}).status == 302

    not_mine = _path(stack.mail(CUSTOMER_EMAIL, "not-mine"), r"/app/receipt/[^/\s]+/not-mine\?k=\S+")
    not_mine_key = urllib.parse.parse_qs(urllib.parse.urlsplit(not_mine).query)["k"][0]
    assert customer.get(f"/n/{code}?k={not_mine_key}").status == 302
    assert customer.get(not_mine).status == 200
    assert customer.post(not_mine, {"k": not_mine_key}, csrf=False).status == 403
    assert customer.post(not_mine, {"k": not_mine_key}).status == 200
    stack.mail(OTHER_EMAIL)
    return {
        "API key": stack.key,
        "wrong API key": bad_key,
        "receipt token": token,
        "short code": code,
        "not-mine key": not_mine_key,
        "customer email": CUSTOMER_EMAIL,
        "customer phone": CUSTOMER_PHONE,
        "customer phone, national": "0" + CUSTOMER_PHONE[4:],
        "other email": OTHER_EMAIL,
        **{f"customer cookie {n}": value for n, value in enumerate(customer.cookies()) if len(value) >= 16},
    }


def _locker_flow(stack: Stack) -> dict[str, str]:
    """The locker's email link: a mail scanner's GET, then the customer's POST."""
    customer = Browser(stack.server, "locker", stack.ids)
    assert customer.get("/app/my").status == 200
    assert customer.post("/app/my/start", {"contact": OTHER_EMAIL}).status == 302
    link = _path(stack.mail(OTHER_EMAIL, "/app/my/link/"), r"/app/my/link/\d+/\w+")
    secret = link.rsplit("/", 1)[1]
    scanner = Browser(stack.server, "scanner", stack.ids)
    assert scanner.get(link).status == 200
    assert scanner.post(link, {}, csrf=False).status == 403
    assert customer.get(link).status == 200
    assert customer.post(link, {}).status == 302
    return {
        "locker link secret": secret,
        **{f"locker cookie {n}": value for n, value in enumerate(customer.cookies()) if len(value) >= 16},
    }


def _dashboard_flows(stack: Stack) -> dict[str, str]:
    """A team invitation, used; a password reset, used."""
    owner = Browser(stack.server, "owner", stack.ids)
    assert owner.get("/admin/login/").status == 200
    signed_in = owner.post("/admin/login/?next=/admin/", {"username": "olu", "password": OWNER_PASSWORD})
    assert signed_in.status == 302, signed_in.text
    assert owner.get("/admin/merchants/invitation/add/").status == 200
    invited = owner.post(
        "/admin/merchants/invitation/add/", {"merchant": stack.merchant_pk, "email": INVITEE_EMAIL, "role": "owner"}
    )
    assert invited.status == 302, invited.text
    join = _path(stack.mail(INVITEE_EMAIL, "/admin/join/"), r"/admin/join/[^/\s]+/")
    invitation_token = join.split("/")[-2]
    invitee = Browser(stack.server, "invitee", stack.ids)
    assert invitee.get(join).status == 200
    form = {"username": "ngozi", "password1": INVITEE_PASSWORD, "password2": INVITEE_PASSWORD}
    assert invitee.post(join, form, csrf=False).status == 403
    joined = invitee.post(join, form)
    assert joined.status == 200, joined.text
    assert "Your account is ready" in joined.text

    forgetful = Browser(stack.server, "reset", stack.ids)
    assert forgetful.get("/admin/password-reset/").status == 200
    assert forgetful.post("/admin/password-reset/", {"email": OWNER_EMAIL}).status == 302
    reset = _path(stack.mail(OWNER_EMAIL, "/admin/password-reset/"), r"/admin/password-reset/[^/\s]+/[^/\s]+/")
    uid, reset_token = reset.split("/")[-3:-1]
    form_page = forgetful.get(reset)
    assert form_page.status == 302, form_page.text
    set_password = form_page.headers["Location"]
    assert forgetful.get(set_password).status == 200
    done = forgetful.post(set_password, {"new_password1": RESET_PASSWORD, "new_password2": RESET_PASSWORD})
    assert done.status == 302, done.text
    return {
        "invitation token": invitation_token,
        "reset token": reset_token,
        "reset link's user id": f"/{uid}/",
        "owner's password": OWNER_PASSWORD,
        "invitee's password": INVITEE_PASSWORD,
        "new password": RESET_PASSWORD,
        "owner's email": OWNER_EMAIL,
        "invitee's email": INVITEE_EMAIL,
        **{
            f"{browser.name} cookie {n}": value
            for browser in (owner, invitee, forgetful)
            for n, value in enumerate(browser.cookies())
            if len(value) >= 16
        },
    }


def _refused_request_line(stack: Stack, secret: str) -> None:
    """A request line gunicorn refuses, without its HTTP version: its warning quotes the line."""
    answer = stack.server.raw(f"GET /admin/join/{secret}/\r\nHost: 127.0.0.1\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 400 "), answer


def _leaks(lines: list[str], secrets_by_name: dict[str, str]) -> dict[str, list[str]]:
    """For each secret found, the first lines (at most 3) that hold it."""
    found = {}
    for name, secret in secrets_by_name.items():
        holding = [line for line in lines if secret in line]
        if holding:
            found[name] = holding[:3]
    return found


# A group of its own (tests/passes.py keeps it): the flows time nothing and wait for what
# they need with generous bounds, so they share a core instead of lengthening the serial
# "servers" group, which bounds a run's wall time.
@pytest.mark.xdist_group("secrets-in-logs")
def test_no_line_of_the_service_or_the_worker_holds_a_secret(stack):
    secrets_by_name = {**_sale_flows(stack), **_locker_flow(stack), **_dashboard_flows(stack)}
    _refused_request_line(stack, secrets_by_name["invitation token"])
    # The last lines: the worker's sends (every task it was given done), gunicorn's access
    # line of each request (written after its answer).
    _until(lambda: not DBTaskResult.objects.filter(status__in=["READY", "RUNNING"]).exists(), "the worker's tasks")
    _until(lambda: _access_lines_of(stack.server.log, stack.ids), "an access line of each request")
    stack.worker.stop()
    stack.server.stop()
    lines = stack.lines()
    text = "\n".join(lines)
    # The flows ran and were logged (sent emails, refused forms, access lines), at DEBUG too.
    assert "a*******@example.com" in text
    assert "DEBUG" in text or '"level": "DEBUG"' in text
    assert re.search(r'GET /app/receipt/\*/qr\.png\\?" 200', text)  # JSON escapes the quote
    assert _leaks(lines, secrets_by_name) == {}


@pytest.mark.parametrize("log_format", ["json", "plain"])
def test_each_request_is_one_access_line(tmp_path, log_format):
    """Item 11: gunicorn.access records also reached the root logger's handler, which wrote
    each a second time."""
    server = start_gunicorn(_database_url(), tmp_path / "web.log", access_log=True, RECECO_LOG_FORMAT=log_format)
    ids: list[str] = []
    try:
        visitor = Browser(server, "visitor", ids)
        statuses = [visitor.get(path).status for path in ("/app/scan", "/app/my", "/api/trpc/noSuchProcedure")]
        assert statuses == [200, 200, 404]
        _until(lambda: _access_lines_of(server.log, ids), "an access line of each request")
    finally:
        server.stop()
        forget_cache_prefix()
    lines = server.log.read_text().splitlines()
    # A JSON line's text is its "message"; a plain one's, the line.
    messages = [json.loads(line)["message"] if log_format == "json" else line for line in lines if line.strip()]
    for request_id in ids:
        holding = [message for message in messages if message.endswith(f" {request_id}")]  # the access line's end
        assert len(holding) == 1, holding


def _runserver(url: str, port: int, output: Path) -> subprocess.Popen:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "RECECO_"))}
    env.update(
        DATABASE_URL=url,
        DJANGO_SECRET_KEY=SECRET,
        DJANGO_SETTINGS_MODULE="receco.settings",
        DJANGO_DEBUG="1",
        RECECO_LOCAL_CACHE="1",
        DJANGO_LOG_LEVEL="DEBUG",
    )
    command = [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"]
    with output.open("wb") as log:
        return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log)


# Secret-bearing requests of every kind, made up (no flow needed: the path alone is logged).
MADE_UP = {
    "receipt token": "sale-3f9a1c2e7b6d5a40",
    "invitation token": "Zq3v9XkP2mW8tR4yL6nB1cJ5hG7dF0sA-uE_iO2pQ",
    "reset token": "cb1x5l-4f1d0b9e8c7a6f5e4d3c2b1a0f9e8d7c",
    "locker link secret": "9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b",
    "not-mine key": "eKq3vP9xW2mT8rY4lN6bJ1cH5gF7dS0a",
}
MADE_UP_PATHS = [
    f"/app/receipt/{MADE_UP['receipt token']}",
    f"/receipt/{MADE_UP['receipt token']}",
    f"/log/proof/{MADE_UP['receipt token']}",
    f"/app/receipt/K7P2QX/not-mine?k={MADE_UP['not-mine key']}",
    "/api/trpc/getReceipt?input=" + urllib.parse.quote(json.dumps({"token": MADE_UP["receipt token"]})),
    f"/admin/join/{MADE_UP['invitation token']}/",
    f"/admin/password-reset/Mg/{MADE_UP['reset token']}/",
    f"/app/my/link/7/{MADE_UP['locker link secret']}",
]


def _get_all(base: str, post: bool = False) -> list[int]:
    """The status of each of MADE_UP_PATHS, asked for by GET (and by POST without a CSRF
    token, which Django refuses with a warning quoting the path, when ``post``)."""
    statuses = []
    for path in MADE_UP_PATHS:
        for data in [None, b"x=1"] if post else [None]:
            try:
                with urllib.request.urlopen(base + path, data=data, timeout=60) as response:
                    statuses.append(response.status)
            except urllib.error.HTTPError as error:
                statuses.append(error.code)
    return statuses


def test_runserver_logs_no_secret(tmp_path):
    """Development (./dev up): runserver's line for each request quoted the path and the query."""
    port, output = free_port(), tmp_path / "runserver.log"
    process = _runserver(_database_url(), port, output)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5).close()
                break
            except OSError:
                assert process.poll() is None, output.read_text()[-3000:]
                assert time.monotonic() < deadline, output.read_text()[-3000:]
                time.sleep(0.2)
        statuses = _get_all(f"http://127.0.0.1:{port}", post=True)
        # runserver writes a request's line ("GET /path HTTP/1.1" 200 …) after its answer:
        # one for /healthz and one for each status, and a redirect's (301) too, which the
        # client followed (counted, the wait ended before the last lines were written).
        _until(
            lambda: len(re.findall(r'"(?:GET|POST) [^"]*" [1245]\d\d ', output.read_text())) > len(statuses),
            "runserver's line of each request",
        )
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert statuses.count(403) >= 5  # POSTs refused for their missing CSRF token
    lines = output.read_text().splitlines()
    assert any("GET /app/my/link/" in line for line in lines), lines[-20:]  # each request has its line
    assert _leaks(lines, MADE_UP) == {}
    # In debug mode Django's own console handler wrote its warnings a second time, bare.
    assert len([line for line in lines if "Forbidden (CSRF" in line and "/app/my/link/" in line]) == 1


@pytest.mark.parametrize("log_format", ["json", "plain"])
def test_a_database_outage_logs_no_secret(tmp_path, log_format):
    """Django logs the path of every 5xx answer ("Service Unavailable: /admin/join/…")."""
    closed = f"postgres://postgres@127.0.0.1:{free_port()}/receco"
    server = start_gunicorn(
        closed, tmp_path / "web.log", access_log=True, DATABASE_CONNECT_TIMEOUT="1", RECECO_LOG_FORMAT=log_format,
        **VERBOSE,
    )  # fmt: skip
    try:
        statuses = _get_all(server.url)
    finally:
        server.stop()
    assert 503 in statuses
    lines = server.log.read_text().splitlines()
    assert any("Service Unavailable" in line for line in lines)
    assert _leaks(lines, MADE_UP) == {}
