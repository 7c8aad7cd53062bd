"""Credentials kept out of the logs. Logs are kept and shared; a logged sign-in link,
receipt link or key is a working credential in the hands of whoever reads them.

``RedactFilter`` sits on every handler that writes a line: the application's and the
task worker's (receco.ops.logformat), gunicorn's access and error logs
(receco.ops.gunicorn_log). It rewrites each record's message, traceback and stack with
``redact``, whichever logger made it: Django's (django.request quotes the path of every
5xx answer, django.security.csrf that of every refused form, runserver the whole
request line), gunicorn's (a refused request line, a request that failed), ours.

What ``redact`` replaces with ``*``:

- the secret segments of the site's paths, wherever a path or a link appears: a receipt's
  token or short code (``/app/receipt/<reference>/…``, ``/receipt/<reference>``,
  ``/r/<code>``, ``/n/<code>``, ``/log/proof/<token>``), a gift receipt's link
  (``/app/gift/<token>``), a team invitation
  (``/admin/join/<token>/``), a password reset (``/admin/password-reset/<uid>/<token>/``),
  the locker's email link (``/app/my/link/<id>/<secret>``), the secret of Africa's
  Talking's delivery reports (``/callbacks/africastalking/<secret>/``);
- every query string of a path or link (getReceipt's input, "Not your receipt?" keys);
- keys by their form: API keys after their public prefix, webhook signing secrets,
  the service's own receipt tokens, and whatever follows "Bearer".

tests/ops/test_redaction.py holds every route of the URLconf to this list: a new route
with a parameter is either redacted here or named there as no secret.
"""

import logging
import re
from collections.abc import Callable

# One path segment: up to the next "/", the query, the fragment, a space or a quote
# (gunicorn's access line escapes a quote in the path as \").
_SEGMENT = r"[^/\s?#\"'<>\\]+"


def _route(prefix: str, secrets: int, keep: frozenset[str] = frozenset()) -> tuple[str, re.Pattern, Callable]:
    """A rule starring the ``secrets`` segments after the path ``prefix``, each unless it
    is one of the words in ``keep`` (the site's own pages under that prefix)."""
    tail = "".join(f"(?:/({_SEGMENT}))?" for _ in range(secrets - 1))
    pattern = re.compile(f"({re.escape(prefix)})({_SEGMENT}){tail}")

    def replace(match: re.Match) -> str:
        segments = [segment for segment in match.groups()[1:] if segment is not None]
        return match[1] + "/".join(segment if segment in keep else "*" for segment in segments)

    return prefix, pattern, replace


def _short_link(match: re.Match) -> str:
    """``/r/*`` (``/n/*``) where a path or a link begins; the text as it was elsewhere."""
    if _LINK_HEAD.search(match.string, max(0, match.start() - 300), match.start()):
        return f"/{match[1]}/*"
    return match[0]


# What comes before a short link's path: the start of the text, a space, a quote, or a
# link's scheme and host (/app/r/… is no short link).
_LINK_HEAD = re.compile(r"(?:^|[\s\"'(=<])(?:https?://[^/\s\"'<>\\]*)?\Z")

# Every query string of a path or a link: the part after "?" of a run that holds a "/".
_QUERY = re.compile(r"(/[^\s?\"'<>\\]*)\?[^\s\"'<>\\]+")
# The secret segments of the site's paths: each rule the text it needs, a pattern and
# its replacement.
_PATHS: tuple[tuple[str, re.Pattern, Callable], ...] = (
    # A receipt's token or short code: /app/receipt/<reference>/…, /receipt/<reference>
    # (and the admin's /admin/receipts/receipt/<id>/, which gives nothing away).
    _route("/receipt/", 1),
    # A gift receipt's link (/app/gift/<token>): it opens the sale's items.
    _route("/app/gift/", 1),
    # Text messages' short links.
    *((f"/{letter}/", re.compile(f"/({letter})/{_SEGMENT}"), _short_link) for letter in "rn"),
    _route("/log/proof/", 1),
    _route("/admin/join/", 1),
    _route("/admin/password-reset/", 2, keep=frozenset({"sent", "done", "set-password"})),
    _route("/app/my/link/", 2),
    # Africa's Talking signs no delivery report: its URL's last segment is the secret.
    _route("/callbacks/africastalking/", 1),
)
# Keys by their form, wherever they are: an API key after its public prefix, which names
# it (merchants.keys); a webhook signing secret; a receipt token of the service's own form
# (receipts.codes: a till's own tokens are caught by their place in a path); whatever
# follows "Bearer".
_KEYS = re.compile(
    r"(pos(?:test|live)_[0-9A-Za-z]{12})[0-9A-Za-z]+|(whsec_|rcpt_)[0-9A-Za-z_-]+|(Bearer\s+)[^\s\"'<>\\]+"
)


def redact(text: str) -> str:
    """``text`` with every credential the module's docstring lists replaced by "*"."""
    # Each pattern runs only where its text can be: most lines hold none of them.
    if "?" in text:
        text = _QUERY.sub(r"\1?*", text)
    for needed, pattern, replace in _PATHS:
        if needed in text:
            text = pattern.sub(replace, text)
    if "_" in text or "Bearer" in text:
        text = _KEYS.sub(r"\1\2\3*", text)
    return text


_TRACEBACKS = logging.Formatter()


class RedactFilter(logging.Filter):
    """A handler's filter: each record's message, traceback and stack redacted (``redact``).

    The record carries the redacted text from then on (its message with its arguments
    merged in; its traceback as text when that changed), so no handler after this one
    sees the original."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 (arguments that do not fit: the handler reports it, and writes no text)
            return True
        # Merged once, here: the formatter then writes the text as it is.
        record.msg, record.args = redact(message), None
        if record.exc_info:
            text = _TRACEBACKS.formatException(record.exc_info)
            clean = redact(text)
            if clean != text:
                record.exc_info, record.exc_text = None, clean
        elif record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True
