"""Where an HTTP/1.1 request ends, judged as its bytes arrive (receco.lib.gunicorn_workers).

The buffering worker reads every request whole before a worker process spends any time
on it, so that a client sending a byte every few seconds holds nothing but a socket.
This module only answers "is it all here yet?" from the head's framing (Content-Length,
or chunked Transfer-Encoding). It never judges whether the request is well formed:
anything it does not plainly understand is READY at once, and gunicorn's own parser,
reading the same bytes, refuses it as it always did.
"""

import re

MORE = "more"  # the request has not all arrived: read on
READY = "ready"  # all of it is here, or enough for the server to answer it
HEAD_TOO_LARGE = "head too large"  # no end of the head within the limit

_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")
_CHUNK_LINE_LIMIT = 1024  # a chunk-size line with extensions; gunicorn's is smaller
_BODY_FRAMING_SLACK = 64 * 1024


class Incoming:
    """The bytes of one request received so far (``data``), and what they amount to.

    ``max_head``: the longest head (request line and headers) waited for.
    ``max_body``: a body past this many bytes is not waited for: the application
    refuses it (413) from what has arrived, as it reads no further than that.
    """

    def __init__(self, max_head: int, max_body: int):
        self.data = bytearray()
        self.max_head = max_head
        self.max_body = max_body
        self.expects_continue = False  # "Expect: 100-continue" with a body still to come
        self._head_end = -1  # index of the blank line ending the head, once found
        self._scanned = 0  # the head's end is not before this index
        self._length: int | None = None
        self._chunked = False
        self._next_chunk = 0  # index of the next chunk-size line
        self._decoded = 0  # body bytes of the chunks read so far

    def feed(self, chunk: bytes) -> str:
        """Add ``chunk``; return MORE, READY or HEAD_TOO_LARGE."""
        self.data += chunk
        if self._head_end < 0:
            state = self._read_head()
            if state is not None:
                return state
        if self._chunked:
            return self._read_chunks()
        return READY if len(self.data) - self._body_start >= self._length else MORE

    @property
    def _body_start(self) -> int:
        return self._head_end + 4

    def _read_head(self) -> str | None:
        """READY or HEAD_TOO_LARGE when judged on the head alone, MORE while it is not
        all here; None once it is and the body decides."""
        end = self.data.find(b"\r\n\r\n", self._scanned)
        if end < 0:
            self._scanned = max(0, len(self.data) - 3)  # a blank line may straddle the next chunk
            return HEAD_TOO_LARGE if len(self.data) > self.max_head else MORE
        if end > self.max_head:
            return HEAD_TOO_LARGE
        self._head_end = end
        lines = bytes(self.data[:end]).split(b"\r\n")
        lengths, encodings, expect = [], [], b""
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon:
                return READY  # malformed: the server's parser says so
            name, value = name.strip().lower(), value.strip()
            if name == b"content-length":
                lengths.append(value)
            elif name == b"transfer-encoding":
                encodings.append(value.lower())
            elif name == b"expect":
                expect = value.lower()
        if encodings:
            if lengths or encodings != [b"chunked"]:
                return READY  # ambiguous or unsupported framing: the server refuses it
            self._chunked = True
            self._next_chunk = self._body_start
        elif lengths:
            if len(lengths) > 1 or not lengths[0].isdigit() or len(lengths[0]) > 18:
                return READY
            self._length = int(lengths[0])
            if self._length > self.max_body:
                return READY  # refused by its Content-Length alone, unread
        else:
            return READY  # no body
        if not self._length and not self._chunked:
            return READY
        self.expects_continue = expect == b"100-continue" and lines[0].endswith(b"HTTP/1.1")
        return None

    def _read_chunks(self) -> str:
        data = self.data
        if len(data) - self._body_start > 4 * self.max_body + _BODY_FRAMING_SLACK:
            return READY  # chunks so small their framing outweighs them: the application judges
        while True:
            start = self._next_chunk
            line_end = data.find(b"\r\n", start)
            if line_end < 0:
                return READY if len(data) - start > _CHUNK_LINE_LIMIT else MORE
            size_text = bytes(data[start:line_end]).split(b";", 1)[0]
            if not _CHUNK_SIZE.fullmatch(size_text):
                return READY  # malformed
            size = int(size_text, 16)
            if size == 0:
                trailers = line_end + 2
                if data[trailers : trailers + 2] == b"\r\n" or data.find(b"\r\n\r\n", trailers) >= 0:
                    return READY
                return MORE
            chunk_end = line_end + 2 + size + 2
            if self._decoded + size > self.max_body:
                # Over the limit: the application reads one byte past it, then refuses
                # the body (413); chunks are handed on as they come, a part of one too.
                past_limit = self._decoded + len(data) - (line_end + 2) > self.max_body
                return READY if past_limit else MORE
            if len(data) < chunk_end:
                return MORE
            self._decoded += size
            self._next_chunk = chunk_end
