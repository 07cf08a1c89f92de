"""The gate every MCP request of the HTTP app passes on its way to a world's session manager (the
MCP SDK's): sessions counted per client so that no client fills that table for everyone else, and
what the MCP endpoints share: reading an opening request, replaying it, JSON-RPC refusals."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import structlog
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types import INVALID_REQUEST
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.responses import JSONResponse, Response
from starlette.types import Message, Receive, Scope, Send

from mcpsim.serve._access import OpenSession, Quota, QuotaExceeded, Reservation, SessionTable, client_keys, quota
from mcpsim.serve._settings import ClientLimits

log = structlog.get_logger("mcpsim.http")


AfterRequest = Callable[[], Awaitable[None]]
MAX_OPENING_BYTES = 64 * 1024  # an initialize request is a few hundred bytes
RETRY_BUSY_SECONDS = 1  # a client whose sessions are all busy: one is usually answered within a second


class _Response:
    """What a response said, as it goes out: its status and the session id it names."""

    def __init__(self) -> None:
        self.status: int | None = None
        self.session_id: str | None = None


def _watched(
    send: Send, after: AfterRequest | None, on_start: Callable[[_Response], None] | None = None
) -> tuple[Send, _Response]:
    """`send`, noting the response's status and session id (`on_start` runs before the client
    can see them) and awaiting `after` before the last body part goes out."""
    response = _Response()

    async def watched(message: Message) -> None:
        if message["type"] == "http.response.start":
            response.status = message["status"]
            for key, value in message.get("headers", []):
                if key.decode("latin-1").lower() == MCP_SESSION_ID_HEADER:
                    response.session_id = value.decode("latin-1")
            if on_start is not None:
                on_start(response)
        elif message["type"] == "http.response.body" and not message.get("more_body", False) and after is not None:
            await after()
        await send(message)

    return watched, response


class _SessionGate:
    """Every MCP request passes here on its way to a world's session manager (the MCP SDK's),
    so that no client can fill that manager's session table for everyone else.

    Sessions of the handshake protocol are counted per client (`access.client_keys`: its bearer
    token, else its address; and its address). A client at its limit that opens another session
    has its least recently used idle session closed first (through the SDK, as if the client had
    sent DELETE); with none idle it gets 429 and Retry-After, and no other client notices. Idle
    sessions expire after `session_idle_seconds` (the SDK closes them). Stateless requests carry
    no session and pass straight through."""

    def __init__(self, servers: dict[str, Any], limits: ClientLimits, clock: Callable[[], float]) -> None:
        self.servers = servers
        self.limits = limits
        self.table = SessionTable(limits.session_idle_seconds, clock)
        self.on_forget: list[Callable[[str], None]] = []  # told of every session closed or ended

    def quota(self, scope: Scope) -> Quota:
        return quota(client_keys(scope), self.limits.sessions_per_client, self.limits.sessions_per_address)

    async def handle(
        self, world: str, scope: Scope, receive: Receive, send: Send, *, after: AfterRequest | None = None
    ) -> None:
        headers = Headers(scope=scope)
        version = headers.get(MCP_PROTOCOL_VERSION_HEADER)
        session_id = headers.get(MCP_SESSION_ID_HEADER)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:  # stateless: no session
            await self.pass_through(world, scope, receive, send, after)
        elif session_id is not None:
            await self.serve_session(world, session_id, scope, receive, send, after)
        elif scope["method"] == "POST":
            body, complete = await _read_opening(receive)
            replay = _replay(body, complete, receive)
            if not (complete and _is_initialize(body)):  # opens no session: the SDK answers it
                await self.pass_through(world, scope, replay, send, after)
                return
            try:
                async with self.opening(scope) as reservation:
                    await self.serve_opening(world, scope, replay, send, reservation, after)
            except QuotaExceeded as exc:
                await _too_many(str(exc))(scope, receive, send)
        else:
            await self.pass_through(world, scope, receive, send, after)

    async def pass_through(
        self, world: str, scope: Scope, receive: Receive, send: Send, after: AfterRequest | None
    ) -> None:
        watched, _ = _watched(send, after if scope["method"] == "POST" else None)
        await self.servers[world].session_manager.handle_request(scope, receive, watched)

    @asynccontextmanager
    async def opening(self, scope: Scope) -> AsyncIterator[Reservation]:
        """Room for one more session of the requesting client (its idle sessions closed to make
        it, if need be) while the block opens it; QuotaExceeded if there is none."""
        reservation = self.table.admit(self.quota(scope))
        try:
            for victim in reservation.victims:
                await self._close(victim)
            yield reservation
        finally:
            self.table.release(reservation)  # unless the session opened

    async def serve_opening(
        self,
        world: str,
        scope: Scope,
        receive: Receive,
        send: Send,
        reservation: Reservation,
        after: AfterRequest | None = None,
        on_session: Callable[[str], None] | None = None,
    ) -> str | None:
        """Serve an initialize; returns the session it opened (None if it failed)."""
        path = scope["path"]

        def started(response: _Response) -> None:
            # Registered before the client can see the id, so its next request finds the session.
            if response.session_id is not None and (response.status or 500) < 400:
                self.table.opened(response.session_id, reservation, path, world)
                if on_session is not None:
                    on_session(response.session_id)

        watched, response = _watched(send, after, started)
        await self.servers[world].session_manager.handle_request(scope, receive, watched)
        if response.session_id is not None and (response.status or 500) >= 400:
            self._forget(response.session_id)
        return response.session_id if (response.status or 500) < 400 else None

    async def serve_session(
        self, world: str, session_id: str, scope: Scope, receive: Receive, send: Send, after: AfterRequest | None = None
    ) -> None:
        session = self.table.begin(session_id)

        def started(response: _Response) -> None:
            # Forgotten before the client can see that its session is gone (ended, or closed by the SDK).
            if response.status == 404 or (scope["method"] == "DELETE" and (response.status or 500) < 400):
                self._forget(session_id)

        watched, _ = _watched(send, after if scope["method"] == "POST" else None, started)
        try:
            await self.servers[world].session_manager.handle_request(scope, receive, watched)
        finally:
            if session is not None:
                self.table.end(session)

    async def _close(self, session: OpenSession) -> None:
        """Close a session as its client would (HTTP DELETE through the SDK)."""
        log.debug("closing a client's least recently used idle MCP session to make room", session=session.session_id)
        scope: Scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "DELETE",
            "scheme": "http",
            "path": session.path,
            "raw_path": session.path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": [(MCP_SESSION_ID_HEADER.encode(), session.session_id.encode())],
            "client": None,
            "server": None,
        }
        sent = False

        async def receive() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": b"", "more_body": False}
            await anyio.sleep_forever()
            raise AssertionError("unreachable")

        async def discard(message: Message) -> None:
            pass

        try:
            await self.servers[session.world].session_manager.handle_request(scope, receive, discard)
        finally:
            self._forget(session.session_id)

    def _forget(self, session_id: str) -> None:
        self.table.forget(session_id)
        for hook in self.on_forget:
            hook(session_id)


def _too_many(reason: str) -> Response:
    return _jsonrpc_error(429, INVALID_REQUEST, reason, {"Retry-After": str(RETRY_BUSY_SECONDS)})


async def _read_opening(receive: Receive) -> tuple[bytes, bool]:
    """The request body up to MAX_OPENING_BYTES, and whether that is all of it."""
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return bytes(body), True
        body += message.get("body", b"")
        if not message.get("more_body", False):
            return bytes(body), True
        if len(body) > MAX_OPENING_BYTES:
            return bytes(body), False


def _replay(body: bytes, complete: bool, receive: Receive) -> Receive:
    """A receive that hands out `body` first (all of it, or the part read so far), then the rest."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": not complete}
        return await receive()

    return replay


def _is_initialize(body: bytes) -> bool:
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return False
    return isinstance(message, dict) and message.get("method") == "initialize"


def _jsonrpc_error(
    status: int,
    code: int,
    message: str,
    headers: dict[str, str] | None = None,
    *,
    data: Any = None,
    request_id: str | int | None = None,
) -> Response:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return JSONResponse({"jsonrpc": "2.0", "id": request_id, "error": error}, status_code=status, headers=headers)
