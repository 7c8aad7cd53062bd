"""Receco settings, read from the environment (docs/configuration.md lists every variable).

With no environment at all this runs the embedded default: a SQLite file and the
local-memory cache. Production sets DATABASE_URL, REDIS_URL, DJANGO_SECRET_KEY,
DJANGO_ALLOWED_HOSTS and RECECO_WEB_URL. Every reader fails at start-up with a message
naming its variable (receco.lib.env).

Sections, by concern: project, web, database, cache, security, limits, delivery, wallet
passes, operations.
"""

import ipaddress
import logging
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
import phonenumbers
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured

from receco.lib.env import (
    envbool,
    envint,
    envlist,
    envrate,
    envrates,
    envstr,
    envurl,
    envzone,
    parse_email_url,
)
from receco.ops.logformat import FORMATS, logging_config

BASE_DIR = Path(__file__).resolve().parent.parent

# --- Project -------------------------------------------------------------------------

DEBUG = envbool("DJANGO_DEBUG", False)

INSTALLED_APPS = [
    # django.contrib.admin, with every URL scoped to the user's merchants.
    "dashboard.admin_config.DashboardAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    # The audit trail's writer (merchants.audit); before dashboard, whose admin replaces
    # the one it registers for the trail.
    "auditlog",
    # The domain apps: models, rules and commands, no pages.
    "merchants",
    "receipts",
    "messaging",
    # Every live receipt reported to Nigeria's revenue service (docs/einvoicing.md).
    "einvoicing",
    "webhooks",
    # Signed receipts and their append-only log (docs/verification.md).
    "ledger",
    # The customer's receipt locker, /app/my (docs/customer-pages.md).
    "locker",
    # Erasure of customers' contacts, "Not your receipt?" links, retention (docs/privacy.md).
    "privacy",
    # The merchant's dashboard: every ModelAdmin, sign-in, two-step, team (docs/dashboard.md).
    "dashboard",
    # What customers reach in a browser: receipt pages, locker, "Not your receipt?".
    "customers",
    # The POS API (tRPC) and the receipt log's public HTTP (docs/api.md).
    "agentapi",
    # Providers' delivery reports: SMS, WhatsApp and email providers' callbacks (docs/delivery.md).
    "callbacks",
    # Email through a provider's HTTP API, and its tracking webhooks (messaging.providers.email).
    "anymail",
    # The task runner (deliveries) and its database queue.
    "django_tasks",
    "django_tasks_db",
    # The receipt page's form limits (its public is_ratelimited API).
    "django_ratelimit",
    # Dashboard sign-in throttling.
    "axes",
    # Two-step sign-in to the dashboard (dashboard.twofactor): authenticator apps and
    # recovery codes.
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_otp.plugins.otp_static",
]

MIDDLEWARE = [
    # Answers /healthz, /readyz and /metrics whatever the Host; gives each request its id.
    "receco.ops.middleware.OperationsMiddleware",
    # Answers /api/trpc/ itself: the API needs none of the middleware below.
    "agentapi.middleware.ApiShortcutMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # request.user.is_verified(): whether this session passed the second sign-in step.
    "django_otp.middleware.OTPMiddleware",
    # The audit trail's actor and address (merchants.audit): the API never comes this far.
    "merchants.audit.AuditMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # A view whose database does not answer: 503 "back in a moment", not a 500.
    "receco.lib.unavailable.DatabaseUnavailableMiddleware",
    # Sign-in throttling (dashboard.signin); last, as django-axes asks.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "receco.urls"
WSGI_APPLICATION = "receco.wsgi.application"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = envzone("DJANGO_TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").is_dir() else []
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

# --- Web: the addresses customers are given, and what requests may be ----------------

# Absolute base of the links given to customers (receipt pages, QR codes, emails).
RECECO_WEB_URL = envurl("RECECO_WEB_URL", "http://127.0.0.1:8000")
_web_host = urlsplit(RECECO_WEB_URL).hostname or ""

ALLOWED_HOSTS = envlist("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", _web_host])
CSRF_TRUSTED_ORIGINS = envlist("DJANGO_CSRF_TRUSTED_ORIGINS", [RECECO_WEB_URL])

# Request bodies over this size answer 413 PAYLOAD_TOO_LARGE before they are parsed. The
# proxy in front refuses them too (deploy/nginx: client_max_body_size, kept the same).
RECECO_MAX_BODY_BYTES = envint("RECECO_MAX_BODY_BYTES", 1024 * 1024, minimum=1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = RECECO_MAX_BODY_BYTES

# Phone numbers given without a country code are read as numbers of this region.
RECECO_PHONE_REGION = envstr("RECECO_PHONE_REGION", "NG").upper()
if RECECO_PHONE_REGION not in phonenumbers.SUPPORTED_REGIONS:
    raise ImproperlyConfigured(
        f"RECECO_PHONE_REGION must be a two-letter region code such as NG or GB, not {RECECO_PHONE_REGION!r}"
    )

# How many proxies in front append to X-Forwarded-For. 0: the client address is
# REMOTE_ADDR and X-Forwarded-For is ignored (anyone can write it).
RECECO_TRUSTED_PROXY_COUNT = envint("RECECO_TRUSTED_PROXY_COUNT", 0)

# Customers who kept the page open too long get a page that says so, not Django's.
CSRF_FAILURE_VIEW = "customers.views.receipts.csrf_failure"

# --- Database ------------------------------------------------------------------------

# A SQLite file by default, anything dj-database-url understands otherwise. Persistent
# connections with health checks: a PostgreSQL restart costs only the requests in flight.
_database_url = envstr("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}")
DATABASE_STATEMENT_TIMEOUT = envint("DATABASE_STATEMENT_TIMEOUT", 10)  # seconds; PostgreSQL only
_database_connect_timeout = envint("DATABASE_CONNECT_TIMEOUT", 5, minimum=1)
_database_conn_max_age = envint("DATABASE_CONN_MAX_AGE", 600)


def _database(variable: str, url: str) -> dict:
    try:
        database = dj_database_url.parse(url, conn_max_age=_database_conn_max_age, conn_health_checks=True)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{variable} is not a usable database URL: {exc}") from None
    if database["ENGINE"] == "django.db.backends.sqlite3":
        # WAL lets the page readers run while a write is in progress; IMMEDIATE takes the
        # write lock up front so concurrent writers wait instead of failing mid-transaction.
        database["CONN_MAX_AGE"] = 0
        database["OPTIONS"] = {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    elif database["ENGINE"] == "django.db.backends.postgresql":
        # Django's backend with a health check that asks the socket, not the server, and a
        # deadline on every statement (receco/lib/postgresql).
        database["ENGINE"] = "receco.lib.postgresql"
        # Parameters travel apart from the SQL, so psycopg prepares each statement a
        # connection runs often (getReceipt's, the key look-up's): PostgreSQL then skips
        # parsing and planning them, which cost more than running them.
        database["OPTIONS"] = {"server_side_binding": True, "prepare_threshold": 5}
        # A database that stalls fails requests fast (503) and leaves the workers free: a
        # connection attempt gives up after DATABASE_CONNECT_TIMEOUT, a statement after
        # DATABASE_STATEMENT_TIMEOUT (0: never), ended by the server or, if it does not
        # answer at all, cut off by the client. migrate is not limited.
        database["OPTIONS"]["connect_timeout"] = _database_connect_timeout
        if DATABASE_STATEMENT_TIMEOUT:
            database["OPTIONS"]["options"] = f"-c statement_timeout={DATABASE_STATEMENT_TIMEOUT * 1000}"
    else:
        raise ImproperlyConfigured(f"{variable} must be a sqlite:// or postgres:// URL")
    return database


DATABASES = {"default": _database("DATABASE_URL", _database_url)}

# Streaming replicas of DATABASE_URL: getReceipt and the receipt pages read from them,
# and from the primary whatever a replica has not received yet (receco.lib.replicas).
# A replica that does not connect or answer within DATABASE_REPLICA_TIMEOUT seconds is
# left alone until it answers a health check again (libpq waits at least 2 s to connect).
DATABASE_REPLICA_TIMEOUT = envint("DATABASE_REPLICA_TIMEOUT", 2, minimum=1)
for _number, _url in enumerate(envlist("DATABASE_REPLICA_URLS", []), start=1):
    DATABASES[f"replica{_number}"] = _database("DATABASE_REPLICA_URLS", _url)
    if DATABASES[f"replica{_number}"]["ENGINE"] != "receco.lib.postgresql":
        raise ImproperlyConfigured("DATABASE_REPLICA_URLS must be postgres:// URLs of replicas of DATABASE_URL")
    DATABASES[f"replica{_number}"]["OPTIONS"]["connect_timeout"] = max(2, DATABASE_REPLICA_TIMEOUT)
    # Tests that run with replicas configured read the test database through them.
    DATABASES[f"replica{_number}"]["TEST"] = {"MIRROR": "default"}

# --- Cache: Redis, shared by every process ---------------------------------------------

# Redis when REDIS_URL is set: the counters of the limits, the version of remembered keys
# and merchants (merchants.admission), the page forms' limits. Otherwise this process's
# memory: right for one development process, wrong for several workers, each of which
# would keep its own counters. So without DEBUG, REDIS_URL is required, unless
# RECECO_LOCAL_CACHE says that this is knowingly one process (the test suite's servers).
REDIS_URL = envstr("REDIS_URL")
RECECO_CACHE_PREFIX = envstr("RECECO_CACHE_PREFIX", "receco")
if REDIS_URL:
    if urlsplit(REDIS_URL).scheme not in ("redis", "rediss", "unix"):
        raise ImproperlyConfigured(f"REDIS_URL must start with redis://, rediss:// or unix://, not {REDIS_URL!r}")
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": RECECO_CACHE_PREFIX,
            # Fail fast: a Redis outage must slow no request by more than this.
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }
elif DEBUG or envbool("RECECO_LOCAL_CACHE", False):
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
else:
    raise ImproperlyConfigured(
        "REDIS_URL must be set (for example redis://127.0.0.1:6379/0) unless DJANGO_DEBUG is on: "
        "the rate limits and remembered keys must be shared by every worker process"
    )

# The page forms' limits count with django-ratelimit in that cache; one that cannot be
# read lets the post through (receco.lib.sharedcache logs it). Its checks of the cache
# backend are replaced by the rule above: its list of supported backends predates
# Django's own Redis backend (shared by every process, counting with INCR), and local
# memory is allowed only where one process counts.
RATELIMIT_USE_CACHE = "default"
RATELIMIT_FAIL_OPEN = True
SILENCED_SYSTEM_CHECKS = ["django_ratelimit.E003", "django_ratelimit.W001"]

# --- Security ------------------------------------------------------------------------

SECRET_KEY = envstr("DJANGO_SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set (a long random string) unless DJANGO_DEBUG is on")
    SECRET_KEY = "django-insecure-development-only-key-never-use-in-production"

# Server secret of the API key digests (HMAC-SHA256). Unset: derived from SECRET_KEY, so
# changing DJANGO_SECRET_KEY then invalidates every API key; set this to decouple them.
RECECO_API_KEY_SECRET = envstr("RECECO_API_KEY_SECRET")

SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
if RECECO_WEB_URL.startswith("https://"):
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
if envbool("DJANGO_BEHIND_TLS_PROXY", False):
    # Only when a proxy that sets this header (and strips it from clients) is in front.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# django-axes first: it refuses a locked-out user name and address before any password check.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Dashboard sign-in throttling (django-axes; dashboard.signin): a user name is locked out
# from one address after this many wrong passwords in a row, for this long (each further
# try restarts the pause); a right password resets the count. An address is locked out
# whole once its wrong passwords, for any user names, reach the address limit within
# that time (password spraying); a right password does not reset that count.
AXES_FAILURE_LIMIT = envint("RECECO_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=envint("RECECO_LOGIN_LOCKOUT_MINUTES", 15, minimum=1))
RECECO_LOGIN_ADDRESS_FAILURE_LIMIT = envint("RECECO_LOGIN_ADDRESS_FAILURE_LIMIT", 10, minimum=1)
AXES_HANDLER = "dashboard.signin.SignInHandler"
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "dashboard.signin.client_address"  # honours RECECO_TRUSTED_PROXY_COUNT
AXES_LOCKOUT_CALLABLE = "dashboard.signin.locked_out"
AXES_CLIENT_STR_CALLABLE = "dashboard.signin.client_label"  # no user name or address in the log
AXES_VERBOSE = False

# Two-step sign-in (dashboard.twofactor): required of the operator and shop owners unless
# this is off; off by default only in development (DJANGO_DEBUG).
RECECO_DASHBOARD_REQUIRE_2FA = envbool("RECECO_DASHBOARD_REQUIRE_2FA", not DEBUG)
# The name authenticator apps show beside the account.
OTP_TOTP_ISSUER = "Receco"

# The audit trail (merchants.audit): django-auditlog writing merchants.AuditEntry.
AUDITLOG_LOGENTRY_MODEL = "merchants.AuditEntry"
# django-auditlog's migrations make its own entry table even when another model replaces
# it; that table, unknown to Django, would hold a foreign key nothing flushes. Without its
# migrations the replaced (swapped) model gets no table.
MIGRATION_MODULES = {"auditlog": None}

# --- Limits (merchants.admission; rates as count/period, receco.lib.rates) --------------

# Per live key: 1000 a minute, in bursts of at most 100 a second. Test keys are not limited.
RECECO_RATELIMIT_LIVE_KEY = envrates("RECECO_RATELIMIT_LIVE_KEY", ["1000/m", "100/s"])
# Per client address, for calls without a key (and with a key that fails).
RECECO_RATELIMIT_ANONYMOUS = envrates("RECECO_RATELIMIT_ANONYMOUS", ["600/m"])
# Per client address: short codes that find nothing (or nothing the caller may have),
# so that short codes cannot be enumerated. Tokens are never refused.
RECECO_RATELIMIT_FAILED_LOOKUPS = envrate("RECECO_RATELIMIT_FAILED_LOOKUPS", "30/m")
# Per client address: test- merchants created by a sale's first use (no key involved).
RECECO_RATELIMIT_TEST_MERCHANTS = envrate("RECECO_RATELIMIT_TEST_MERCHANTS", "20/h")
# Posts of the receipt page's send form per client address (django-ratelimit).
RECECO_CONTACT_FORM_RATE = envrate("RECECO_CONTACT_FORM_RATE", "10/h")
# Asking for dashboard password reset emails, per client address.
RECECO_PASSWORD_RESET_RATE = envrate("RECECO_PASSWORD_RESET_RATE", "5/h")
# Wallet passes (Apple's .pkpass, Google's save link) per client address (django-ratelimit).
RECECO_WALLET_PASS_RATE = envrate("RECECO_WALLET_PASS_RATE", "60/h")
# The locker's sign-in codes and links (locker.limits): asked for one phone number or
# email address, and from one client address, whether or not any receipt was sent to it.
RECECO_LOCKER_CONTACT_RATE = envrates("RECECO_LOCKER_CONTACT_RATE", ["3/h", "6/d"])
RECECO_LOCKER_ADDRESS_RATE = envrates("RECECO_LOCKER_ADDRESS_RATE", ["20/h"])
# The locker's sign-in texts the whole service sends (each costs money); past it, codes
# are refused for everyone and email links still work.
RECECO_LOCKER_TEXT_RATE = envrates("RECECO_LOCKER_TEXT_RATE", ["1000/h"])
# The locker's downloads of every receipt (locker.export), per contact signed in.
RECECO_LOCKER_EXPORT_RATE = envrates("RECECO_LOCKER_EXPORT_RATE", ["5/h", "20/d"])

# --- Delivery: the task runner, email, text messages, and how often to send -----------

# "database" (the default) stores tasks in the database for `python manage.py db_worker`
# processes, which send every email, text and webhook (messaging.outbox); "immediate"
# runs each task in the process that queues it, right after the transaction commits:
# the default with DJANGO_DEBUG, and refused without it (messaging.apps), since a sale
# or a page would then wait for an outside party.
_TASK_BACKENDS = {
    "immediate": "django_tasks.backends.immediate.ImmediateBackend",
    "database": "django_tasks_db.DatabaseBackend",
}
_task_backend = envstr("RECECO_TASKS_BACKEND", "immediate" if DEBUG else "database").lower()
if _task_backend not in _TASK_BACKENDS:
    raise ImproperlyConfigured(f"RECECO_TASKS_BACKEND must be immediate or database, not {_task_backend!r}")
TASKS = {"default": {"BACKEND": _TASK_BACKENDS[_task_backend], "QUEUES": ["default"]}}

# Email: EMAIL_URL (smtp+tls://user:password@host:587 for STARTTLS, smtps://… for TLS,
# console:, dummy:) or the separate EMAIL_* variables. With neither, development prints
# emails to the console and production uses SMTP on localhost:25, Django's default. The
# console backend prints whole messages in debug mode only (messaging.console_email).
EMAIL_URL = envstr("EMAIL_URL")
_email = parse_email_url("EMAIL_URL", EMAIL_URL) if EMAIL_URL else {}
EMAIL_BACKEND = _email.get("EMAIL_BACKEND") or envstr(
    "EMAIL_BACKEND",
    "messaging.console_email.EmailBackend" if DEBUG else "django.core.mail.backends.smtp.EmailBackend",
)
if EMAIL_BACKEND == "django.core.mail.backends.console.EmailBackend":
    EMAIL_BACKEND = "messaging.console_email.EmailBackend"  # Django's, named: whole messages in debug mode only
EMAIL_HOST = _email.get("EMAIL_HOST") or envstr("EMAIL_HOST", "localhost")
EMAIL_PORT = _email.get("EMAIL_PORT") or envint("EMAIL_PORT", 25, minimum=1)
EMAIL_HOST_USER = _email.get("EMAIL_HOST_USER", envstr("EMAIL_HOST_USER"))
EMAIL_HOST_PASSWORD = _email.get("EMAIL_HOST_PASSWORD", envstr("EMAIL_HOST_PASSWORD"))
EMAIL_USE_TLS = _email.get("EMAIL_USE_TLS", envbool("EMAIL_USE_TLS", False))
EMAIL_USE_SSL = _email.get("EMAIL_USE_SSL", envbool("EMAIL_USE_SSL", False))
if EMAIL_USE_TLS and EMAIL_USE_SSL:
    raise ImproperlyConfigured("EMAIL_USE_TLS and EMAIL_USE_SSL cannot both be on")
# Django waits forever on a silent SMTP server by default; a delivery attempt must end.
EMAIL_TIMEOUT = envint("EMAIL_TIMEOUT", 10, minimum=1)
DEFAULT_FROM_EMAIL = envstr("DEFAULT_FROM_EMAIL", "Receco <receipts@localhost>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL

# Email through a provider's HTTP API instead of SMTP (django-anymail; docs/delivery.md):
# mailgun, postmark, brevo, sendgrid, mailersend or sparkpost. Its API key, and what else
# it needs, in RECECO_EMAIL_PROVIDER_*; its tracking webhooks at /callbacks/email/<provider>/tracking/.
RECECO_EMAIL_PROVIDER = envstr("RECECO_EMAIL_PROVIDER").lower()
RECECO_EMAIL_PROVIDER_API_KEY = envstr("RECECO_EMAIL_PROVIDER_API_KEY")
RECECO_EMAIL_PROVIDER_DOMAIN = envstr("RECECO_EMAIL_PROVIDER_DOMAIN")  # Mailgun's sending domain
RECECO_EMAIL_PROVIDER_API_URL = envstr("RECECO_EMAIL_PROVIDER_API_URL")  # Mailgun's EU region, for one
# The user:password its tracking webhooks are sent with (basic auth), and Mailgun's signing key.
RECECO_EMAIL_WEBHOOK_SECRET = envstr("RECECO_EMAIL_WEBHOOK_SECRET")
RECECO_EMAIL_WEBHOOK_SIGNING_KEY = envstr("RECECO_EMAIL_WEBHOOK_SIGNING_KEY")
# Names and checks what each provider needs (messaging.providers.email), and stops start-up without it.
ANYMAIL = {"WEBHOOK_SECRET": RECECO_EMAIL_WEBHOOK_SECRET or None}
if RECECO_EMAIL_PROVIDER:
    from messaging.providers.email import anymail_settings

    _email_backend, _anymail = anymail_settings(
        RECECO_EMAIL_PROVIDER,
        api_key=RECECO_EMAIL_PROVIDER_API_KEY,
        domain=RECECO_EMAIL_PROVIDER_DOMAIN,
        api_url=RECECO_EMAIL_PROVIDER_API_URL,
        signing_key=RECECO_EMAIL_WEBHOOK_SIGNING_KEY,
    )
    EMAIL_BACKEND = _email_backend
    ANYMAIL.update(_anymail)

# Text messages: "console" (logs the message with a masked number), "webhook" (a JSON POST
# to your SMS provider or gateway), a provider ("africastalking", "twilio", "termii",
# with their credentials below), or the dotted path of a messaging.sms backend class.
RECECO_SMS_BACKEND = envstr("RECECO_SMS_BACKEND", "console")
RECECO_SMS_WEBHOOK_URL = envurl("RECECO_SMS_WEBHOOK_URL", "") if envstr("RECECO_SMS_WEBHOOK_URL") else ""
RECECO_SMS_WEBHOOK_TOKEN = envstr("RECECO_SMS_WEBHOOK_TOKEN")
RECECO_SMS_SENDER = envstr("RECECO_SMS_SENDER", "Receco")
RECECO_SMS_TIMEOUT = envint("RECECO_SMS_TIMEOUT", 10, minimum=1)
if RECECO_SMS_BACKEND == "webhook" and not RECECO_SMS_WEBHOOK_URL:
    raise ImproperlyConfigured("RECECO_SMS_BACKEND=webhook needs RECECO_SMS_WEBHOOK_URL")
# The providers' credentials (docs/delivery.md); the chosen one's are checked at start-up
# (messaging.providers.config), and none is ever logged.
RECECO_AFRICASTALKING_USERNAME = envstr("RECECO_AFRICASTALKING_USERNAME")
RECECO_AFRICASTALKING_API_KEY = envstr("RECECO_AFRICASTALKING_API_KEY")
# The secret path segment of its delivery-report URL: Africa's Talking signs no callback.
RECECO_AFRICASTALKING_CALLBACK_SECRET = envstr("RECECO_AFRICASTALKING_CALLBACK_SECRET")
RECECO_TWILIO_ACCOUNT_SID = envstr("RECECO_TWILIO_ACCOUNT_SID")
RECECO_TWILIO_AUTH_TOKEN = envstr("RECECO_TWILIO_AUTH_TOKEN")
# A Messaging Service (MG…) sends from the numbers and sender ids registered with it.
RECECO_TWILIO_MESSAGING_SERVICE_SID = envstr("RECECO_TWILIO_MESSAGING_SERVICE_SID")
RECECO_TERMII_API_KEY = envstr("RECECO_TERMII_API_KEY")
RECECO_TERMII_SECRET_KEY = envstr("RECECO_TERMII_SECRET_KEY")
# Each Termii account has a base URL of its own, shown in its dashboard.
RECECO_TERMII_BASE_URL = envstr("RECECO_TERMII_BASE_URL", "https://v3.api.termii.com").rstrip("/")
# "dnd" (transactional: reaches numbers on Do-Not-Disturb) or "generic" (promotional only).
RECECO_TERMII_CHANNEL = envstr("RECECO_TERMII_CHANNEL", "dnd")

# WhatsApp (the WhatsApp Business Cloud API): on when its phone number id and token are
# set. Receipts go as the approved utility template named here, in its language.
RECECO_WHATSAPP_PHONE_NUMBER_ID = envstr("RECECO_WHATSAPP_PHONE_NUMBER_ID")
RECECO_WHATSAPP_ACCESS_TOKEN = envstr("RECECO_WHATSAPP_ACCESS_TOKEN")
RECECO_WHATSAPP_APP_SECRET = envstr("RECECO_WHATSAPP_APP_SECRET")
RECECO_WHATSAPP_VERIFY_TOKEN = envstr("RECECO_WHATSAPP_VERIFY_TOKEN")
RECECO_WHATSAPP_TEMPLATE = envstr("RECECO_WHATSAPP_TEMPLATE", "receco_receipt")
RECECO_WHATSAPP_TEMPLATE_LANGUAGE = envstr("RECECO_WHATSAPP_TEMPLATE_LANGUAGE", "en")
RECECO_WHATSAPP_API_VERSION = envstr("RECECO_WHATSAPP_API_VERSION", "v23.0")
RECECO_WHATSAPP_TIMEOUT = envint("RECECO_WHATSAPP_TIMEOUT", 10, minimum=1)

# Providers' callbacks (/callbacks/…): bodies larger than this are refused unread, and
# each client address may call at most this often (docs/delivery.md).
RECECO_CALLBACK_MAX_BYTES = envint("RECECO_CALLBACK_MAX_BYTES", 64 * 1024, minimum=1024)
RECECO_CALLBACK_RATE = envrate("RECECO_CALLBACK_RATE", "600/m")

# Deliveries of test receipts go here instead of to customers (never SMTP or a provider).
RECECO_SINK_EMAIL_BACKEND = "django.core.mail.backends.dummy.EmailBackend"
RECECO_SINK_SMS_BACKEND = "messaging.sms.DummyBackend"
# A failed delivery is tried this many times in all, with growing pauses in between.
RECECO_DELIVERY_MAX_ATTEMPTS = envint("RECECO_DELIVERY_MAX_ATTEMPTS", 5, minimum=1)
# Daily limits on sending (messaging.limits): per receipt; per email address or
# phone number across all receipts; and per destination for what was asked for without
# the merchant's API key (customers, anonymous calls).
RECECO_DELIVERY_RECEIPT_DAILY_LIMIT = envint("RECECO_DELIVERY_RECEIPT_DAILY_LIMIT", 5, minimum=1)
RECECO_DELIVERY_DESTINATION_DAILY_LIMIT = envint("RECECO_DELIVERY_DESTINATION_DAILY_LIMIT", 10, minimum=1)
RECECO_DELIVERY_DESTINATION_DAILY_LIMIT_WITHOUT_KEY = envint(
    "RECECO_DELIVERY_DESTINATION_DAILY_LIMIT_WITHOUT_KEY", 3, minimum=1
)

# --- Privacy: how long contacts and receipts are kept (privacy; docs/privacy.md) -------

# A receipt's customer email and phone number are removed this many days after its last
# change (its sale, or a contact given later), with the deliveries and webhook bodies
# that hold them: 180 days have passed before Nigeria's operators may give an inactive
# number to someone else, and cover a shop's returns and a half-year of expense claims.
RECECO_CONTACT_RETENTION_DAYS = envint("RECECO_CONTACT_RETENTION_DAYS", 180, minimum=1)
# Receipts themselves are deleted this many years after they were issued (a sale with its
# refunds, once the youngest is): the six years tax law keeps the fiscal record.
RECECO_RECEIPT_RETENTION_YEARS = envint("RECECO_RECEIPT_RETENTION_YEARS", 6, minimum=1)
# --- Wallet passes (receipts.wallet; docs/wallet.md) ----------------------------------

# "Add to Apple Wallet": a .pkpass signed with the operator's Pass Type ID certificate.
# All of these, or none: none leaves the button out. Each PEM may be given inline or as
# a file (*_FILE); Apple's WWDR intermediate certificate may also be the DER file Apple
# serves. receipts.wallet.credentials reads them and stops start-up naming what is wrong.
RECECO_APPLE_WALLET_PASS_TYPE_ID = envstr("RECECO_APPLE_WALLET_PASS_TYPE_ID")
RECECO_APPLE_WALLET_TEAM_ID = envstr("RECECO_APPLE_WALLET_TEAM_ID")
RECECO_APPLE_WALLET_CERTIFICATE = envstr("RECECO_APPLE_WALLET_CERTIFICATE")
RECECO_APPLE_WALLET_CERTIFICATE_FILE = envstr("RECECO_APPLE_WALLET_CERTIFICATE_FILE")
RECECO_APPLE_WALLET_KEY = envstr("RECECO_APPLE_WALLET_KEY")
RECECO_APPLE_WALLET_KEY_FILE = envstr("RECECO_APPLE_WALLET_KEY_FILE")
RECECO_APPLE_WALLET_KEY_PASSWORD = envstr("RECECO_APPLE_WALLET_KEY_PASSWORD")
RECECO_APPLE_WALLET_WWDR_CERTIFICATE = envstr("RECECO_APPLE_WALLET_WWDR_CERTIFICATE")
RECECO_APPLE_WALLET_WWDR_CERTIFICATE_FILE = envstr("RECECO_APPLE_WALLET_WWDR_CERTIFICATE_FILE")
# "Add to Google Wallet": a save link holding a JWT signed with a Google Cloud service
# account's key (its JSON key file, inline or as a file) for the Wallet issuer id. Both,
# or neither: neither leaves the button out.
RECECO_GOOGLE_WALLET_ISSUER_ID = envstr("RECECO_GOOGLE_WALLET_ISSUER_ID")
RECECO_GOOGLE_WALLET_SERVICE_ACCOUNT = envstr("RECECO_GOOGLE_WALLET_SERVICE_ACCOUNT")
RECECO_GOOGLE_WALLET_SERVICE_ACCOUNT_FILE = envstr("RECECO_GOOGLE_WALLET_SERVICE_ACCOUNT_FILE")
# The origins the save link may be used from (the JWT's "origins").
RECECO_GOOGLE_WALLET_ORIGINS = envlist("RECECO_GOOGLE_WALLET_ORIGINS", [RECECO_WEB_URL])

# --- Webhooks (webhooks; docs/webhooks.md) ------------------------------------------------

# An endpoint's URL is https; http://localhost only when DEBUG or this allows it.
RECECO_WEBHOOKS_ALLOW_HTTP_LOCALHOST = envbool("RECECO_WEBHOOKS_ALLOW_HTTP_LOCALHOST", False)
# Webhooks never go to private, loopback or link-local addresses unless this allows it
# (on-premise installations whose receivers are on the same network).
RECECO_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = envbool("RECECO_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES", False)

# --- E-invoicing: receipts reported to the tax authority (einvoicing; docs/einvoicing.md) ---

# The keys that encrypt each merchant's NRS credentials at rest (Fernet keys, comma-separated:
# the first encrypts, every one decrypts, so a new key goes first and the old one stays
# until every credential was saved again). None: e-invoicing cannot be set up.
RECECO_EINVOICING_KEYS = envlist("RECECO_EINVOICING_KEYS", [])
for _key in RECECO_EINVOICING_KEYS:
    try:
        Fernet(_key)
    except ValueError:
        raise ImproperlyConfigured(
            "RECECO_EINVOICING_KEYS must list Fernet keys (32 url-safe base64-encoded bytes each), such as "
            "`python -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())'` prints"
        ) from None
# The base of NRS's e-invoicing API (MBS), the same for every merchant: its sandbox while a
# deployment is being certified, its production host after. None: nothing is reported.
RECECO_EINVOICING_URL = envurl("RECECO_EINVOICING_URL", "") if envstr("RECECO_EINVOICING_URL") else ""
if urlsplit(RECECO_EINVOICING_URL).scheme == "http" and urlsplit(RECECO_EINVOICING_URL).hostname not in (
    "localhost",
    "127.0.0.1",
    "::1",
):
    raise ImproperlyConfigured("RECECO_EINVOICING_URL must be an https:// URL (http:// only for localhost)")

# --- Operations: logs, request ids, metrics (receco.ops; docs/operations.md) ------------

# "plain" lines for people, or "json": one JSON object a line for a log collector.
RECECO_LOG_FORMAT = envstr("RECECO_LOG_FORMAT", "plain").lower()
if RECECO_LOG_FORMAT not in FORMATS:
    raise ImproperlyConfigured(f"RECECO_LOG_FORMAT must be plain or json, not {RECECO_LOG_FORMAT!r}")
LOGGING = logging_config(RECECO_LOG_FORMAT, envstr("DJANGO_LOG_LEVEL", "INFO").upper())
if RECECO_LOG_FORMAT == "json":
    # Python's warnings as log records (logger py.warnings), not bare lines on stderr.
    logging.captureWarnings(True)

# --- Signed receipts and their log (docs/verification.md) -------------------------------

# The signing keys, a JWK Set: inline, or in a file (./dev up makes .keys/signing-keys.json).
# None configured: signing is off, /readyz says so and `appendlog` refuses to run.
RECECO_SIGNING_KEYS = envstr("RECECO_SIGNING_KEYS")
RECECO_SIGNING_KEY_FILE = envstr(
    "RECECO_SIGNING_KEY_FILE", str(BASE_DIR / ".keys" / "signing-keys.json") if DEBUG else ""
)
# The log's name, the first line of every checkpoint and the key name of its signature.
RECECO_LOG_ORIGIN = envstr("RECECO_LOG_ORIGIN") or f"{urlsplit(RECECO_WEB_URL).netloc}/receipts"
# A receipt is appended once its row is this old (seconds): a sale whose transaction
# commits late is never skipped by one that committed before it (ledger.appender).
RECECO_LOG_COMMIT_LAG = envint("RECECO_LOG_COMMIT_LAG", 2, minimum=1)
# The appender publishes a checkpoint at least this often (seconds) while receipts arrive.
RECECO_LOG_CHECKPOINT_INTERVAL = envint("RECECO_LOG_CHECKPOINT_INTERVAL", 10, minimum=1)

# /metrics in the Prometheus text format, off by default. When on, served to the client
# addresses (or networks) listed, as RECECO_TRUSTED_PROXY_COUNT finds them, and to
# requests with "Authorization: Bearer <RECECO_METRICS_TOKEN>". With several worker
# processes, PROMETHEUS_MULTIPROC_DIR (gunicorn.conf.py makes one if unset) adds them up.
RECECO_METRICS = envbool("RECECO_METRICS", False)
RECECO_METRICS_ALLOWED_IPS = envlist("RECECO_METRICS_ALLOWED_IPS", ["127.0.0.1", "::1"])
for _network in RECECO_METRICS_ALLOWED_IPS:
    try:
        ipaddress.ip_network(_network, strict=False)
    except ValueError:
        raise ImproperlyConfigured(
            f"RECECO_METRICS_ALLOWED_IPS must list addresses or networks (10.0.0.0/8), not {_network!r}"
        ) from None
RECECO_METRICS_TOKEN = envstr("RECECO_METRICS_TOKEN")
if RECECO_METRICS:
    # First after OperationsMiddleware: it times everything else.
    MIDDLEWARE.insert(1, "receco.ops.middleware.MetricsMiddleware")
