"""A deadline for every statement, kept by the client: a database that stops answering
fails the request in seconds instead of holding its worker.

PostgreSQL's statement_timeout ends a slow statement on the server, but a server that
does not run at all (paused, swapping, cut off without a reset) enforces nothing, and
the kernel keeps the connection looking alive. So each statement registers its
connection's socket with a deadline (a little after the statement timeout); one thread
per process looks every WAKE_EVERY seconds and shuts down the socket of any statement
past its deadline. The blocked call then fails at once with OperationalError, and the
broken connection is replaced on the next request.
"""

import logging
import os
import socket
import threading
import time

logger = logging.getLogger(__name__)

WAKE_EVERY = 0.25  # seconds

_lock = threading.Lock()
# id of the guard -> (deadline, socket file descriptor); under _lock, an entry means its
# statement has not returned, so its connection (and descriptor) is still open.
_running: dict[int, tuple[float, int]] = {}
_thread: threading.Thread | None = None
_thread_pid = 0


def arm(fileno: int, seconds: float) -> object:
    """Start the deadline of one statement on the connection whose socket is ``fileno``:
    past ``seconds`` the connection is cut and the statement fails. Returns the token
    to ``disarm`` when the statement returns."""
    if _thread_pid != os.getpid():
        _start_thread()
    token = object()
    with _lock:
        _running[id(token)] = (time.monotonic() + seconds, fileno)
    return token


def disarm(token: object) -> None:
    with _lock:
        _running.pop(id(token), None)


def _start_thread() -> None:
    """Start this process's watching thread (once; again in a forked child)."""
    global _thread, _thread_pid
    with _lock:
        if _thread_pid == os.getpid():
            return
        _thread = threading.Thread(target=_watch, name="receco-db-watchdog", daemon=True)
        _thread_pid = os.getpid()
        _thread.start()


def _forget_the_parent() -> None:
    # A forked child has none of its parent's statements or threads, and must not inherit
    # a lock the parent's thread may have held at the fork.
    global _lock, _running, _thread, _thread_pid
    _lock, _running, _thread, _thread_pid = threading.Lock(), {}, None, 0


os.register_at_fork(after_in_child=_forget_the_parent)


def _watch() -> None:
    while True:
        time.sleep(WAKE_EVERY)
        now = time.monotonic()
        with _lock:
            for key, (due, fileno) in list(_running.items()):
                if now >= due:
                    del _running[key]
                    _cut(fileno)


def _cut(fileno: int) -> None:
    try:
        # A duplicate of the descriptor: shutting it down ends the connection for the
        # statement's own descriptor too; closing it closes only the duplicate.
        with socket.fromfd(fileno, socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.shutdown(socket.SHUT_RDWR)
    except OSError as exc:
        logger.warning("Could not cut a database connection past its deadline: %s", exc)
        return
    logger.error("The database did not answer a statement in time: its connection was cut")
