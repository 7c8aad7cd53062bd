"""Local doubles of the SMS, WhatsApp and email providers, on loopback, speaking their
documented APIs: each checks the request path, headers, authentication and body the way
the provider does, answers as the provider documents (its success and its errors), and
then calls back with delivery reports signed the way the provider signs them.

The real SDKs and HTTP clients are used unchanged: they believe they speak to
api.africastalking.com, api.twilio.com, v3.api.termii.com, graph.facebook.com and
api.mailgun.net over HTTPS. The double is an HTTPS proxy on 127.0.0.1 (``HTTPS_PROXY``)
that answers a CONNECT to any of those hosts itself, with a certificate for them signed
by a certificate authority made for this run (``REQUESTS_CA_BUNDLE`` and
``SSL_CERT_FILE`` name it), so that TLS is verified as it would be, and no request ever
leaves the machine: a CONNECT to any other host is refused.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import json
import secrets
import ssl
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.background import serve_in_background

AT_HOST, TWILIO_HOST, TERMII_HOST = "api.africastalking.com", "api.twilio.com", "v3.api.termii.com"
GRAPH_HOST, MAILGUN_HOST = "graph.facebook.com", "api.mailgun.net"
HOSTS = (AT_HOST, TWILIO_HOST, TERMII_HOST, GRAPH_HOST, MAILGUN_HOST)

# Credentials of the doubles' accounts (the settings tests give the service).
AT_USERNAME, AT_API_KEY, AT_CALLBACK_SECRET = "receco", "atsk_" + "a" * 40, "at-callback-secret-1234"
TWILIO_SID, TWILIO_TOKEN = "AC" + "1" * 32, "twilio-auth-token-0123456789abcd"
TERMII_API_KEY, TERMII_SECRET = "TLtermii-api-key-000", "termii-secret-key-000"
WHATSAPP_PHONE_ID, WHATSAPP_TOKEN, WHATSAPP_SECRET = "106540352242922", "EAAGwhatsapp-token", "whatsapp-app-secret"
WHATSAPP_VERIFY_TOKEN = "whatsapp-verify-token"
MAILGUN_KEY, MAILGUN_DOMAIN, MAILGUN_SIGNING_KEY = "key-mailgun-0000", "mg.example.com", "mailgun-signing-key"
EMAIL_WEBHOOK_SECRET = "anymail:webhook-secret-0000"


def settings_for(provider: str) -> dict[str, str]:
    """The environment variables that point the service at ``provider``'s double account."""
    common = {"RECECO_SMS_SENDER": "Receco"}
    return {
        "africastalking": {
            **common,
            "RECECO_SMS_BACKEND": "africastalking",
            "RECECO_AFRICASTALKING_USERNAME": AT_USERNAME,
            "RECECO_AFRICASTALKING_API_KEY": AT_API_KEY,
            "RECECO_AFRICASTALKING_CALLBACK_SECRET": AT_CALLBACK_SECRET,
        },
        "twilio": {
            **common,
            "RECECO_SMS_BACKEND": "twilio",
            "RECECO_TWILIO_ACCOUNT_SID": TWILIO_SID,
            "RECECO_TWILIO_AUTH_TOKEN": TWILIO_TOKEN,
        },
        "termii": {
            **common,
            "RECECO_SMS_BACKEND": "termii",
            "RECECO_TERMII_API_KEY": TERMII_API_KEY,
            "RECECO_TERMII_SECRET_KEY": TERMII_SECRET,
        },
        "whatsapp": {
            "RECECO_WHATSAPP_PHONE_NUMBER_ID": WHATSAPP_PHONE_ID,
            "RECECO_WHATSAPP_ACCESS_TOKEN": WHATSAPP_TOKEN,
            "RECECO_WHATSAPP_APP_SECRET": WHATSAPP_SECRET,
            "RECECO_WHATSAPP_VERIFY_TOKEN": WHATSAPP_VERIFY_TOKEN,
            "RECECO_WHATSAPP_TEMPLATE": "receco_receipt",
            "RECECO_WHATSAPP_TEMPLATE_LANGUAGE": "en",
        },
        "mailgun": {
            "RECECO_EMAIL_PROVIDER": "mailgun",
            "RECECO_EMAIL_PROVIDER_API_KEY": MAILGUN_KEY,
            "RECECO_EMAIL_PROVIDER_DOMAIN": MAILGUN_DOMAIN,
            "RECECO_EMAIL_WEBHOOK_SECRET": EMAIL_WEBHOOK_SECRET,
            "RECECO_EMAIL_WEBHOOK_SIGNING_KEY": MAILGUN_SIGNING_KEY,
            "DEFAULT_FROM_EMAIL": "Receco <receipts@mg.example.com>",
        },
    }[provider]


# --- The providers' signatures, written from their documentation ------------------------


def twilio_signature(url: str, form: dict[str, str]) -> str:
    """X-Twilio-Signature: base64 HMAC-SHA1 of the URL and each POST parameter, name then
    value, sorted by name, keyed with the auth token."""
    data = url + "".join(name + form[name] for name in sorted(form))
    return base64.b64encode(hmac.new(TWILIO_TOKEN.encode(), data.encode(), hashlib.sha1).digest()).decode()


def termii_signature(body: bytes) -> str:
    """X-Termii-Signature: the HMAC-SHA512 of the payload, signed with the secret key."""
    return hmac.new(TERMII_SECRET.encode(), body, hashlib.sha512).hexdigest()


def whatsapp_signature(body: bytes) -> str:
    """X-Hub-Signature-256: sha256= and the HMAC-SHA256 of the payload with the app secret."""
    return "sha256=" + hmac.new(WHATSAPP_SECRET.encode(), body, hashlib.sha256).hexdigest()


def mailgun_signature(timestamp: str, token: str) -> str:
    """Mailgun's webhook signature: HMAC-SHA256 of timestamp and token with the signing key."""
    return hmac.new(MAILGUN_SIGNING_KEY.encode(), (timestamp + token).encode(), hashlib.sha256).hexdigest()


# --- Certificates ------------------------------------------------------------------


def _certificates(directory: Path) -> tuple[Path, Path, Path]:
    """A certificate authority of this run, and a certificate for every provider host it signs."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Receco tests' provider doubles")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HOSTS[0])]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host) for host in HOSTS]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    ca_file, cert_file, key_file = directory / "ca.pem", directory / "leaf.pem", directory / "leaf-key.pem"
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_file.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return ca_file, cert_file, key_file


# --- The double --------------------------------------------------------------------


@dataclass
class Seen:
    """One request a provider double received."""

    host: str
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def form(self) -> dict[str, str]:
        return dict(urllib.parse.parse_qsl(self.body.decode()))

    @property
    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class Sent:
    """A delivery report the double sent back: where, what, and the service's answer."""

    provider: str
    url: str
    body: bytes
    status: int


@dataclass
class Providers:
    """Every provider's double. ``answer[provider]`` is what it answers the next messages:
    "ok", "bad_number", "throttled" or "server_error"; ``reports[provider]`` the statuses it
    then reports, in order; ``report_to[provider]`` where (Twilio: the message's StatusCallback)."""

    directory: Path
    answer: dict[str, str] = field(default_factory=dict)
    reports: dict[str, list[str]] = field(default_factory=dict)
    report_to: dict[str, str] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    sent: list[Sent] = field(default_factory=list)

    def __post_init__(self):
        self.ca_file, cert_file, key_file = _certificates(self.directory)
        self.tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.tls.load_cert_chain(cert_file, key_file)
        self._threads: list[threading.Thread] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _proxy_handler(self))
        self.server.daemon_threads = True
        self._stop_server = serve_in_background(self.server)

    @property
    def proxy(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def environment(self) -> dict[str, str]:
        """What points every client of a process at the doubles: the proxy, and the CA."""
        return {
            "HTTPS_PROXY": self.proxy,
            "https_proxy": self.proxy,
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
            "REQUESTS_CA_BUNDLE": str(self.ca_file),
            "SSL_CERT_FILE": str(self.ca_file),
        }

    def of(self, host: str) -> list[Seen]:
        return [seen for seen in self.seen if seen.host == host]

    def wait_for_reports(self, count: int, seconds: float = 20) -> list[Sent]:
        deadline = time.monotonic() + seconds
        while len(self.sent) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.sent

    def close(self) -> None:
        self._stop_server()
        for thread in self._threads:
            thread.join(timeout=10)

    # --- Reports ---

    def later(self, work) -> None:
        """Run ``work`` once the answer is on its way, as a provider reports after it answered."""

        def run():
            time.sleep(0.2)
            work()

        thread = threading.Thread(target=run, daemon=True)
        self._threads.append(thread)
        thread.start()

    def post(self, provider: str, url: str, body: bytes, headers: dict[str, str]) -> int:
        """POST a report to the service, on loopback only and never through any proxy; a
        callback address elsewhere (a test without a live server) is not called at all."""
        if urllib.parse.urlsplit(url).hostname not in ("127.0.0.1", "localhost"):
            return 0
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")  # noqa: S310
        try:
            with opener.open(request, timeout=10) as response:
                status = response.status
        except urllib.error.HTTPError as exc:
            status = exc.code
        self.sent.append(Sent(provider, url, body, status))
        return status


def _proxy_handler(doubles: Providers):
    class Provider(BaseHTTPRequestHandler):
        """One provider host, spoken to over TLS inside the tunnel."""

        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            host = (self.headers.get("Host") or "").split(":")[0]
            seen = Seen(host, "POST", self.path, dict(self.headers), body)
            doubles.seen.append(seen)
            status, content_type, answer = ROUTES.get(host, _unknown)(doubles, seen)
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args):
            pass

    class Proxy(BaseHTTPRequestHandler):
        """The proxy: a CONNECT to a provider's host is answered by the double itself."""

        def do_CONNECT(self):
            host = self.path.rsplit(":", 1)[0]
            if host not in HOSTS:
                self.send_error(403, "the doubles answer only the providers' hosts")
                return
            self.send_response(200, "Connection established")
            self.end_headers()
            try:
                tunnel = doubles.tls.wrap_socket(self.connection, server_side=True)
            except (ssl.SSLError, OSError):
                self.close_connection = True
                return
            try:
                Provider(tunnel, self.client_address, self.server)
            finally:
                self.close_connection = True

        def log_message(self, *args):
            pass

    return Proxy


def _json(status: int, value: dict) -> tuple[int, str, bytes]:
    return status, "application/json", json.dumps(value).encode()


def _unknown(doubles, seen):
    return _json(404, {"error": "no such host"})


def _unauthorized(doubles, seen):
    return _json(401, {"message": "Unauthorized"})


# --- Africa's Talking: POST /version1/messaging, form, apiKey header -------------------


def _africastalking(doubles: Providers, seen: Seen):
    form = seen.form
    if seen.path != "/version1/messaging" or seen.headers.get("apiKey") != AT_API_KEY:
        return 401, "text/plain", b"The supplied authentication is invalid"
    if seen.headers.get("Accept") != "application/json" or form.get("username") != AT_USERNAME:
        return 400, "text/plain", b"Request is missing required form field 'username'"
    answer = doubles.answer.get("africastalking", "ok")
    if answer == "server_error":
        return 500, "text/plain", b"Internal Server Error"
    number = form["to"]
    code, status, cost, message_id = {
        "ok": (101, "Success", "NGN 2.2000", "ATXid_" + secrets.token_hex(16)),
        "bad_number": (403, "InvalidPhoneNumber", "0", "None"),
        "throttled": (405, "InsufficientBalance", "0", "None"),
    }[answer]
    recipient = {"statusCode": code, "number": number, "status": status, "cost": cost, "messageId": message_id}
    data = {"SMSMessageData": {"Message": "Sent to 1/1 Total Cost: NGN 2.2000", "Recipients": [recipient]}}
    if answer == "ok" and "africastalking" in doubles.report_to:
        for report in doubles.reports.get("africastalking", ["Success"]):
            values = {"id": message_id, "status": report, "phoneNumber": number, "networkCode": "62130"}
            if report in ("Failed", "Rejected"):
                values["failureReason"] = "UserInBlackList"
            doubles.later(
                lambda values=values: doubles.post(
                    "africastalking",
                    doubles.report_to["africastalking"],
                    urllib.parse.urlencode(values).encode(),
                    {"Content-Type": "application/x-www-form-urlencoded"},
                )
            )
    return _json(201, data)


# --- Twilio: POST /2010-04-01/Accounts/<sid>/Messages.json, basic auth ------------------


def _twilio(doubles: Providers, seen: Seen):
    expected = "Basic " + base64.b64encode(f"{TWILIO_SID}:{TWILIO_TOKEN}".encode()).decode()
    if seen.headers.get("Authorization") != expected:
        return _json(401, {"code": 20003, "message": "Authenticate", "more_info": "", "status": 401})
    if seen.path != f"/2010-04-01/Accounts/{TWILIO_SID}/Messages.json":
        return _json(404, {"code": 20404, "message": "The requested resource was not found", "status": 404})
    form = seen.form
    answer = doubles.answer.get("twilio", "ok")
    if answer == "bad_number":
        message = f"The 'To' number {form.get('To')} is not a valid phone number."
        return _json(400, {"code": 21211, "message": message, "more_info": "", "status": 400})
    if answer == "throttled":
        return _json(429, {"code": 20429, "message": "Too Many Requests", "more_info": "", "status": 429})
    if answer == "server_error":
        return _json(503, {"code": 20500, "message": "Internal Server Error", "more_info": "", "status": 503})
    sid = "SM" + secrets.token_hex(16)
    callback = form.get("StatusCallback")
    if callback:
        for report in doubles.reports.get("twilio", ["sent", "delivered"]):
            values = {
                "MessageSid": sid,
                "SmsSid": sid,
                "AccountSid": TWILIO_SID,
                "MessageStatus": report,
                "SmsStatus": report,
                "To": form["To"],
                "From": form.get("From", ""),
                "ApiVersion": "2010-04-01",
            }
            if report in ("undelivered", "failed"):
                values["ErrorCode"] = "30003"
            headers = {
                "Content-Type": "application/x-www-form-urlencoded",
                "X-Twilio-Signature": twilio_signature(callback, values),
            }
            doubles.later(
                lambda values=values, headers=headers: doubles.post(
                    "twilio", callback, urllib.parse.urlencode(values).encode(), headers
                )
            )
    message = {"sid": sid, "status": "queued", "to": form["To"], "body": form["Body"], "num_segments": "1"}
    message.update(account_sid=TWILIO_SID, api_version="2010-04-01", error_code=None, error_message=None)
    return _json(201, message)


# --- Termii: POST /api/sms/send, JSON with api_key ------------------------------------


def _termii(doubles: Providers, seen: Seen):
    if seen.path != "/api/sms/send" or not seen.headers.get("Content-Type", "").startswith("application/json"):
        return _json(404, {"message": "Not found"})
    data = seen.json
    if data.get("api_key") != TERMII_API_KEY:
        return _json(401, {"message": "Invalid API key"})
    if data.get("type") != "plain" or data.get("channel") not in ("dnd", "generic") or not data.get("sms"):
        return _json(400, {"message": "type, channel and sms are required"})
    answer = doubles.answer.get("termii", "ok")
    if answer == "bad_number":
        return _json(400, {"message": f"Invalid phone number {data.get('to')}"})
    if answer == "throttled":
        return _json(429, {"message": "Too many requests"})
    if answer == "server_error":
        return _json(500, {"message": "Internal server error"})
    message_id = str(secrets.randbelow(10**19))
    if "termii" in doubles.report_to:
        for report in doubles.reports.get("termii", ["Message Sent", "Delivered"]):
            body = json.dumps(
                {
                    "type": "outbound",
                    "id": secrets.token_hex(8),
                    "message_id": message_id,
                    "receiver": data["to"],
                    "sender": data["from"],
                    "message": data["sms"],
                    "sent_at": "2026-12-04 12:00:00",
                    "cost": "2.50",
                    "status": report,
                    "channel": data["channel"],
                }
            ).encode()
            headers = {"Content-Type": "application/json", "X-Termii-Signature": termii_signature(body)}
            doubles.later(
                lambda body=body, headers=headers: doubles.post("termii", doubles.report_to["termii"], body, headers)
            )
    return _json(200, {"code": "ok", "message_id": message_id, "message": "Successfully Sent", "balance": 9})


# --- WhatsApp Cloud API: POST /<version>/<phone number id>/messages, Bearer token ---------


def _graph(doubles: Providers, seen: Seen):
    if seen.headers.get("Authorization") != f"Bearer {WHATSAPP_TOKEN}":
        error = {"message": "Invalid OAuth access token.", "type": "OAuthException", "code": 190}
        return _json(401, {"error": {**error, "fbtrace_id": "AbC"}})
    version, _, rest = seen.path.lstrip("/").partition("/")
    if not version.startswith("v") or rest != f"{WHATSAPP_PHONE_ID}/messages":
        return _json(
            400, {"error": {"message": "Unsupported post request", "type": "GraphMethodException", "code": 100}}
        )
    data = seen.json
    template = data.get("template") or {}
    if data.get("messaging_product") != "whatsapp" or data.get("type") != "template" or not template.get("name"):
        return _json(400, {"error": {"message": "(#100) Invalid parameter", "type": "OAuthException", "code": 100}})
    answer = doubles.answer.get("whatsapp", "ok")
    if answer == "bad_number":
        error = {"message": "(#131030) Recipient phone number not in allowed list", "type": "OAuthException"}
        return _json(400, {"error": {**error, "code": 131030, "fbtrace_id": "AbC"}})
    if answer == "throttled":
        error = {"message": "(#130429) Rate limit hit", "type": "OAuthException", "code": 130429}
        return _json(400, {"error": {**error, "fbtrace_id": "AbC"}})
    if answer == "server_error":
        return _json(500, {"error": {"message": "An unknown error occurred", "type": "OAuthException", "code": 1}})
    wamid = "wamid.HBgN" + secrets.token_hex(16)
    if "whatsapp" in doubles.report_to:
        for report in doubles.reports.get("whatsapp", ["sent", "delivered", "read"]):
            status = {"id": wamid, "status": report, "timestamp": str(int(time.time())), "recipient_id": data["to"]}
            if report == "failed":
                status["errors"] = [{"code": 131026, "title": "Message undeliverable"}]
            value = {"messaging_product": "whatsapp", "metadata": {"phone_number_id": WHATSAPP_PHONE_ID}}
            body = json.dumps(
                {
                    "object": "whatsapp_business_account",
                    "entry": [
                        {"id": "WABA", "changes": [{"field": "messages", "value": {**value, "statuses": [status]}}]}
                    ],
                }
            ).encode()
            headers = {"Content-Type": "application/json", "X-Hub-Signature-256": whatsapp_signature(body)}
            doubles.later(
                lambda body=body, headers=headers: doubles.post(
                    "whatsapp", doubles.report_to["whatsapp"], body, headers
                )
            )
    contact = {"input": data["to"], "wa_id": data["to"]}
    return _json(200, {"messaging_product": "whatsapp", "contacts": [contact], "messages": [{"id": wamid}]})


# --- Mailgun: POST /v3/<domain>/messages, basic auth api:<key>, multipart ----------------


def _mailgun(doubles: Providers, seen: Seen):
    expected = "Basic " + base64.b64encode(f"api:{MAILGUN_KEY}".encode()).decode()
    if seen.headers.get("Authorization") != expected:
        return 401, "text/plain", b"Forbidden"
    # A form, url-encoded, or multipart with attachments.
    urlencoded = seen.headers.get("Content-Type", "").startswith("application/x-www-form-urlencoded")
    has_to = bool(seen.form.get("to")) if urlencoded else b'name="to"' in seen.body
    if seen.path != f"/v3/{MAILGUN_DOMAIN}/messages" or not has_to:
        return _json(400, {"message": "'to' parameter is missing"})
    answer = doubles.answer.get("mailgun", "ok")
    if answer == "bad_number":
        return _json(400, {"message": "to parameter is not a valid address. please check documentation"})
    if answer == "throttled":
        return _json(429, {"message": "Too many requests"})
    if answer == "server_error":
        return _json(500, {"message": "Internal server error"})
    message_id = f"<{time.strftime('%Y%m%d%H%M%S')}.{secrets.token_hex(6)}@{MAILGUN_DOMAIN}>"
    if "mailgun" in doubles.report_to:
        for report in doubles.reports.get("mailgun", ["delivered"]):
            timestamp, token = str(int(time.time())), secrets.token_hex(25)
            event = {
                "event": report,
                "id": secrets.token_hex(11),
                "timestamp": time.time(),
                "recipient": "customer@example.com",
                "message": {"headers": {"message-id": message_id.strip("<>")}},
            }
            if report == "failed":
                event.update(severity="permanent", reason="bounce")
                event["delivery-status"] = {"code": 550, "message": "No such user", "description": ""}
            signature = {"timestamp": timestamp, "token": token, "signature": mailgun_signature(timestamp, token)}
            body = json.dumps({"signature": signature, "event-data": event}).encode()
            user, _, password = EMAIL_WEBHOOK_SECRET.partition(":")
            basic = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
            headers = {"Content-Type": "application/json", "Authorization": basic}
            doubles.later(
                lambda body=body, headers=headers: doubles.post("mailgun", doubles.report_to["mailgun"], body, headers)
            )
    return _json(200, {"id": message_id, "message": "Queued. Thank you."})


ROUTES = {
    AT_HOST: _africastalking,
    TWILIO_HOST: _twilio,
    TERMII_HOST: _termii,
    GRAPH_HOST: _graph,
    MAILGUN_HOST: _mailgun,
}
