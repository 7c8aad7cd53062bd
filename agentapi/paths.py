"""Which request paths are calls of the procedures, and of which.

The procedures live at ``/api/trpc/<name>`` (batches: ``/api/trpc/a,b``). They are also
answered at ``/api/<name>``: the PHP SDK, configured with its documented base URL
``{origin}/api/trpc`` (no trailing slash), joins URLs the way Guzzle does and drops the
base's last segment. Only registered procedure names (and batches of them) are taken
there, so the rest of ``/api/`` stays free for other pages.
"""

from agentapi.registry import PROCEDURES

API_PREFIX = "/api/trpc/"
SHORT_PREFIX = "/api/"


def procedure_path(path: str) -> str | None:
    """What names the procedure(s) in ``path`` (``""`` for none), or None when ``path`` is
    not the API's."""
    if path.startswith(API_PREFIX):
        return path[len(API_PREFIX) :]
    if path == API_PREFIX[:-1]:
        return ""  # /api/trpc, no procedure named: the envelope, not a redirect
    if path.startswith(SHORT_PREFIX):
        rest = path[len(SHORT_PREFIX) :]
        if rest and all(name in PROCEDURES for name in rest.split(",")):
            return rest
    return None
