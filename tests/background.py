"""A socketserver served on a thread of the test's process: the local parties of tests
(webhook receivers, providers' doubles, the agent's fake service)."""

import socketserver
import threading
from collections.abc import Callable

# serve_forever() sees shutdown() only between polls: at its default of 0.5 s, every test
# with a local receiver spent half a second stopping it.
POLL_SECONDS = 0.01


def serve_in_background(server: socketserver.BaseServer) -> Callable[[], None]:
    """Serve ``server`` on a daemon thread; return what stops it, closes its socket and
    waits for the thread."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": POLL_SECONDS}, daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        server.server_close()
        thread.join(5)

    return stop
