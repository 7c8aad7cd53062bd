"""Where a request ends, judged as its bytes arrive (receco.lib.requestframing)."""

import pytest

from receco.lib.requestframing import HEAD_TOO_LARGE, MORE, READY, Incoming

POST = b"POST /api/trpc/createReceiptFromPOS HTTP/1.1\r\nHost: x\r\n"


def _states(*pieces: bytes, max_head: int = 1024, max_body: int = 100) -> list[str]:
    incoming = Incoming(max_head, max_body)
    return [incoming.feed(piece) for piece in pieces]


def test_a_request_without_a_body_is_whole_at_the_end_of_its_head():
    assert _states(b"GET / HTTP/1.1\r\nHost: x\r", b"\n\r", b"\n") == [MORE, MORE, READY]


def test_a_body_of_known_length_is_waited_for_byte_by_byte():
    assert _states(POST + b"Content-Length: 3\r\n\r\n", b"a", b"b", b"c") == [MORE, MORE, MORE, READY]


def test_chunks_are_waited_for_until_the_last_and_its_trailers():
    pieces = [POST + b"Transfer-Encoding: chunked\r\n\r\n", b"3\r\nab", b"c\r\n", b"0\r\n", b"\r\n"]
    assert _states(*pieces) == [MORE, MORE, MORE, MORE, READY]
    assert _states(POST + b"Transfer-Encoding: chunked\r\n\r\n0\r\nX-Sum: 1\r\n", b"\r\n") == [MORE, READY]


def test_a_declared_body_over_the_limit_is_not_waited_for():
    assert _states(POST + b"Content-Length: 101\r\n\r\n") == [READY]


def test_chunks_over_the_limit_are_waited_for_one_byte_past_it():
    head = POST + b"Transfer-Encoding: chunked\r\n\r\n"
    assert _states(head, b"64\r\n" + b"a" * 100 + b"\r\n", b"10\r\n", b"a") == [MORE, MORE, MORE, READY]


@pytest.mark.parametrize(
    "head",
    [
        POST + b"Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
        POST + b"Content-Length: 3\r\nContent-Length: 3\r\n\r\n",
        POST + b"Content-Length: -1\r\n\r\n",
        POST + b"Transfer-Encoding: gzip\r\n\r\n",
        POST + b"no colon here\r\n\r\n",
        POST + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n",
    ],
)
def test_framing_it_does_not_understand_is_left_to_the_server_at_once(head):
    assert _states(head)[-1] == READY


def test_a_head_over_the_limit_is_refused():
    assert _states(b"GET /" + b"a" * 1100) == [HEAD_TOO_LARGE]


def test_a_client_waiting_to_be_told_to_continue_is_told():
    incoming = Incoming(1024, 100)
    assert incoming.feed(POST + b"Content-Length: 3\r\nExpect: 100-continue\r\n\r\n") == MORE
    assert incoming.expects_continue
