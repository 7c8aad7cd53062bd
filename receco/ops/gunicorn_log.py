"""gunicorn's logger (gunicorn.conf.py names it): every access and error line redacted
(receco.ops.redaction), the access line without the query string.

The access line's path goes through the redaction with the rest of the line, so a
receipt page is logged as ``"GET /app/receipt/*"``. The query string (getReceipt's
input) is no atom of the line at all: ``%(q)s`` is "-", and ``%(U)s`` is the path alone.
"""

from gunicorn.glogging import Logger

from receco.lib.addresses import plain_text
from receco.ops.redaction import RedactFilter


class GunicornLogger(Logger):
    def setup(self, cfg) -> None:
        """gunicorn's set-up, then the redaction on each handler it gave its two loggers
        (its own, or those of gunicorn.conf.py's logconfig_dict). Runs again on a reload."""
        super().setup(cfg)
        for log in (self.error_log, self.access_log):
            for handler in log.handlers:
                if not any(isinstance(existing, RedactFilter) for existing in handler.filters):
                    handler.addFilter(RedactFilter())

    def atoms(self, resp, req, environ, request_time):
        atoms = super().atoms(resp, req, environ, request_time)
        atoms["h"] = plain_text(atoms["h"])  # behind -b [::], an IPv4 client as its IPv4 address
        atoms["q"] = "-"  # the query string alone, where no pattern would know it for one
        return atoms
