"""Connections with deadlines: the HTTP server's own protocol (uvicorn's h11 one, extended) closes a
connection whose request headers do not arrive within `header_timeout_seconds` of it being ready
for them (a new connection, or one idle after a response), or whose body does not arrive whole
within `body_timeout_seconds` of its headers; and it refuses a connection past
`connections_per_address` open ones from the same remote address, with a 503 and the reason.
The settings are `ClientLimits`' (docs/security.md); `build_app` keeps the protocol class that
applies them as `app.state.http_protocol`, which `serve_in_thread` and `mcpsim serve --http` run
the app with.

ASGI middleware cannot do this: an app is called only once a request's headers are complete, and
a client that never finishes them holds its connection (and a file descriptor) forever."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import h11
import structlog
from uvicorn.protocols.http.h11_impl import H11Protocol

from mcpsim.serve._settings import ClientLimits

log = structlog.get_logger("mcpsim.serve._connections")

REFUSED_GRACE_SECONDS = 2.0  # a refused connection is closed this long after its answer
_PHASES = {h11.IDLE: "headers", h11.SEND_BODY: "body"}  # the client's state -> what is awaited


class _Addresses:
    """How many connections each remote address holds open (one server's, on its event loop)."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.open: Counter[str] = Counter()

    def admit(self, address: str) -> bool:
        if self.limit is not None and self.open[address] >= self.limit:
            return False
        self.open[address] += 1
        return True

    def release(self, address: str) -> None:
        self.open[address] -= 1
        if self.open[address] <= 0:
            del self.open[address]


def _refusal(limit: int) -> bytes:
    body = (
        f'{{"error": "this address already holds {limit} open connections to this server; '
        'close some or ask the operator to raise --connections-per-address"}'
    ).encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\n"
        f"connection: close\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


class _DeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline on each request's headers and body, and a cap on
    connections per remote address (the class attributes, set per server by `protocol_for`)."""

    timeouts: dict[str, float | None] = {}
    addresses: _Addresses = _Addresses(None)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._phase: str | None = None
        self._deadline: asyncio.TimerHandle | None = None
        self._address: str | None = None  # set once admitted
        self._refused = False  # past the cap per address: answered 503, nothing else read

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        address = self.client[0] if self.client else "unknown"
        if not self.addresses.admit(address):
            # Answered and half-closed, what it sends read and dropped (closing a socket with unread
            # data would reset it, losing the answer), and closed for good after a grace period.
            log.warning("connection refused: too many from one address", address=address)
            self._refused = True
            transport.write(_refusal(self.addresses.limit or 0))
            if transport.can_write_eof():
                transport.write_eof()
            self.loop.call_later(REFUSED_GRACE_SECONDS, transport.close)
            return
        self._address = address
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._arm(None)
        if self._address is not None:
            self.addresses.release(self._address)
            self._address = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()

    def _watch(self) -> None:
        """Arm the deadline of what the client is to send next (headers, a body), or none."""
        phase = _PHASES.get(self.conn.their_state)
        if phase != self._phase:
            self._phase = phase
            self._arm(phase)

    def _arm(self, phase: str | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        seconds = self.timeouts.get(phase) if phase is not None else None
        if seconds is not None and not self.transport.is_closing():
            self._deadline = self.loop.call_later(seconds, self._expire, phase)

    def _expire(self, phase: str | None) -> None:
        self._deadline = None
        if self._phase == phase and not self.transport.is_closing():
            log.info("connection closed: its request took too long", phase=phase, client=str(self.client)[:80])
            self.transport.close()


def protocol_for(limits: ClientLimits) -> type[H11Protocol]:
    """The protocol class of one server: its deadlines and its own count of connections per address."""
    return type(
        "DeadlineProtocol",
        (_DeadlineProtocol,),
        {
            "timeouts": {"headers": limits.header_timeout_seconds, "body": limits.body_timeout_seconds},
            "addresses": _Addresses(limits.connections_per_address),
        },
    )
