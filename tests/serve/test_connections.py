"""Connections with deadlines (issue 29, item 4), on a real server over raw sockets: a client stuck
in its headers or its body is closed after the (here shortened) timeout, connections past the cap
per address are refused with the reason, and a request with two Origin headers is judged by both."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, closing

import pytest

from mcpsim.serve._app import build_app, serve_in_thread
from mcpsim.serve._connections import protocol_for
from mcpsim.serve._host import EpisodeManager
from mcpsim.serve._settings import ClientLimits, ServeConfig

WAIT = 30.0  # a bound on every read: a deadline of 0.5 s closes long before


@pytest.fixture
def server(templates, ledger) -> Iterator:
    """Starts a server with these ClientLimits; returns its (host, port)."""
    with ExitStack() as stack:

        def start(**limits: object) -> tuple[str, int]:
            manager = EpisodeManager(templates, max_episodes=10, ttl_seconds=None)
            app = build_app([ledger], manager, no_auth=True, client_limits=ClientLimits(**limits))
            url = stack.enter_context(serve_in_thread(app))
            host, port = url.removeprefix("http://").split(":")
            return host, int(port)

        yield start


def connect(address: tuple[str, int]) -> socket.socket:
    sock = socket.create_connection(address, timeout=WAIT)
    return sock


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a socket timeout fails the test)."""
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


def read_response(sock: socket.socket) -> bytes:
    """One whole response (its headers and its Content-Length of body) on a kept-alive connection."""
    received = b""
    while b"\r\n\r\n" not in received:
        received += sock.recv(65536)
    headers, _, body = received.partition(b"\r\n\r\n")
    length = int(
        next(v for k, _, v in (h.partition(b":") for h in headers.split(b"\r\n")) if k.lower() == b"content-length")
    )
    while len(body) < length:
        body += sock.recv(65536)
    return headers + b"\r\n\r\n" + body


def request(address: tuple[str, int], text: str) -> bytes:
    with closing(connect(address)) as sock:
        sock.sendall(text.encode())  # with Connection: close (uvicorn closes a half-closed connection)
        return read_until_closed(sock)


def head(address: tuple[str, int]) -> str:
    return f"Host: {address[0]}:{address[1]}\r\n"


def test_a_client_stuck_in_its_headers_is_closed_after_the_timeout(server):
    address = server(header_timeout_seconds=0.5)
    with closing(connect(address)) as sock:
        sock.sendall(f"GET /health HTTP/1.1\r\n{head(address)}X-Slow: ".encode())  # never ends its headers
        started = time.monotonic()
        assert read_until_closed(sock) == b""  # closed, nothing answered
        assert time.monotonic() - started < WAIT
    with closing(connect(address)) as sock:  # one that sends nothing at all
        assert read_until_closed(sock) == b""
    # A prompt request is served as usual, and a kept-alive connection gets a new deadline.
    with closing(connect(address)) as sock:
        sock.sendall(f"GET /health HTTP/1.1\r\n{head(address)}\r\n".encode())
        assert read_response(sock).startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /health HTTP/1.1\r\n")  # the next request's headers, never finished
        assert read_until_closed(sock) == b""


def test_a_body_that_never_completes_is_closed_after_the_timeout(server):
    address = server(body_timeout_seconds=0.5)
    with closing(connect(address)) as sock:
        sock.sendall(
            f"POST /episodes HTTP/1.1\r\n{head(address)}Content-Type: application/json\r\n"
            'Content-Length: 1000\r\n\r\n{"world": '.encode()  # 10 of the 1000 bytes announced
        )
        assert b" 201 " not in read_until_closed(sock)
    # A whole body within the deadline is served.
    body = '{"world": "ledger", "scale": "small"}'
    created = request(
        address,
        f"POST /episodes HTTP/1.1\r\n{head(address)}Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n{body}",
    )
    assert created.startswith(b"HTTP/1.1 201"), created[:300]


def test_connections_past_the_cap_per_address_are_refused_with_the_reason(server):
    address = server(connections_per_address=3)
    with ExitStack() as held:
        for _ in range(3):
            sock = held.enter_context(closing(connect(address)))
            sock.sendall(f"GET /health HTTP/1.1\r\n{head(address)}\r\n".encode())
            assert read_response(sock).startswith(b"HTTP/1.1 200")  # kept alive: still open
        refused = request(address, f"GET /health HTTP/1.1\r\n{head(address)}Connection: close\r\n\r\n")
        assert refused.startswith(b"HTTP/1.1 503"), refused[:300]
        assert b"already holds 3 open connections" in refused and b"--connections-per-address" in refused
    # Once they are closed, the address gets in again (the server notices the closes promptly).
    for _ in range(300):
        answer = request(address, f"GET /health HTTP/1.1\r\n{head(address)}Connection: close\r\n\r\n")
        if answer.startswith(b"HTTP/1.1 200"):
            break
        time.sleep(0.1)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:300]


@pytest.mark.parametrize("order", ["allowed first", "foreign first"])
def test_a_request_with_two_origin_headers_is_judged_by_both(server, order):
    address = server()
    allowed, foreign = f"http://{address[0]}:{address[1]}", "http://evil.example"
    origins = [allowed, foreign] if order == "allowed first" else [foreign, allowed]
    lines = "".join(f"Origin: {o}\r\n" for o in origins)
    answer = request(address, f"GET /episodes HTTP/1.1\r\n{head(address)}{lines}Connection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 403"), answer[:300]
    assert b"evil.example" in answer and b"not allowed" in answer
    # One allowed Origin (twice) passes.
    lines = f"Origin: {allowed}\r\nOrigin: {allowed}\r\n"
    answer = request(address, f"GET /episodes HTTP/1.1\r\n{head(address)}{lines}Connection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 200"), answer[:300]


def test_the_connection_limits_are_settings_with_defaults_a_local_harness_never_hits():
    limits = ClientLimits()
    assert (limits.header_timeout_seconds, limits.body_timeout_seconds, limits.connections_per_address) == (
        30.0,
        300.0,
        1024,
    )
    env = {"MCPSIM_HEADER_TIMEOUT": "5", "MCPSIM_BODY_TIMEOUT": "0", "MCPSIM_CONNECTIONS_PER_ADDRESS": "64"}
    read = ServeConfig.from_env(env).client_limits
    assert (read.header_timeout_seconds, read.body_timeout_seconds, read.connections_per_address) == (5.0, None, 64)
    with pytest.raises(ValueError, match="connections_per_address"):
        ClientLimits(connections_per_address=0)
    with pytest.raises(ValueError, match="header_timeout_seconds"):
        ClientLimits(header_timeout_seconds=-1)
    protocol = protocol_for(read)
    assert protocol.timeouts == {"headers": 5.0, "body": None} and protocol.addresses.limit == 64
    assert protocol_for(read).addresses is not protocol.addresses  # one count per server
