"""The outside parties the service sends to, on localhost, for tests: webhook receivers
(one that answers at once, one that trickles its answer) and an SMTP server."""

import json
import socket
import socketserver
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.background import serve_in_background


class Receiver:
    """A merchant's webhook receiver on localhost: keeps every request (headers and raw
    body) and answers ``status`` (or what ``answers`` holds first, one per request)."""

    def __init__(self):
        self.requests: list[dict] = []
        self.status = 200
        self.answers: list[int] = []
        self.location = ""
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                status = receiver.answers.pop(0) if receiver.answers else receiver.status
                self.send_response(status)
                if receiver.location:
                    self.send_header("Location", receiver.location)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            do_GET = do_POST

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hooks"
        self.close = serve_in_background(self.server)

    def events(self) -> list[dict]:
        return [json.loads(request["body"]) for request in self.requests]

    def types(self) -> list[str]:
        return [event["type"] for event in self.events()]


class SlowReceiver:
    """A receiver that takes the request at once, then trickles its answer one byte every
    ``every`` seconds, each byte well within any per-read timeout, for ``length`` bytes:
    the slow party of issue 19 (item 2). ``arrived`` records when each request came.
    ``answer`` trickles other bytes, before any request is read (a TLS handshake)."""

    def __init__(self, every: float = 2.0, length: int = 60, answer: bytes | None = None):
        self.every, self.length, self.answer = every, length, answer
        self.arrived: list[float] = []
        self._stop = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}/slow"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        self._listener.settimeout(0.2)
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            answer = self.answer
            if answer is None:
                reader = conn.makefile("rb")
                length = 0
                while (line := reader.readline()) not in (b"\r\n", b""):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                reader.read(length)
                answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".ljust(self.length, b" ")
            self.arrived.append(time.monotonic())
            for byte in answer:
                if self._stop.wait(self.every):
                    return
                try:
                    conn.sendall(bytes([byte]))
                except OSError:  # the sender gave up and closed
                    return

    def close(self) -> None:
        self._stop.set()
        self._listener.close()


class SMTPServer:
    """Just enough SMTP (RFC 5321) to receive a message, or to refuse its recipient."""

    def __init__(self, refuse_recipients: bool = False):
        self.messages = []
        server = self

        class Handler(socketserver.StreamRequestHandler):
            def reply(self, line: str):
                self.wfile.write(f"{line}\r\n".encode())

            def handle(self):
                self.reply("220 localhost ESMTP test")
                envelope = {"to": []}
                while line := self.rfile.readline().decode().rstrip("\r\n"):
                    verb = line.split(" ", 1)[0].upper()
                    if verb in ("EHLO", "HELO"):
                        self.reply("250 localhost")
                    elif verb == "MAIL":
                        envelope["from"] = line.split(":", 1)[1].strip()
                        self.reply("250 OK")
                    elif verb == "RCPT":
                        if refuse_recipients:
                            self.reply(f"550 5.1.1 {line.split(':', 1)[1].strip()} no such user")
                        else:
                            envelope["to"].append(line.split(":", 1)[1].strip())
                            self.reply("250 OK")
                    elif verb == "DATA":
                        self.reply("354 End data with <CR><LF>.<CR><LF>")
                        data = []
                        while (chunk := self.rfile.readline()) != b".\r\n":
                            data.append(chunk[1:] if chunk.startswith(b"..") else chunk)
                        server.messages.append({**envelope, "data": b"".join(data)})
                        self.reply("250 OK queued")
                    elif verb == "QUIT":
                        self.reply("221 Bye")
                        return
                    else:
                        self.reply("250 OK")

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.close = serve_in_background(self.server)
