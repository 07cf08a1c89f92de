"""The HTTP server: MCP endpoints for agents and a JSON control plane for harnesses, in one app.

Agents see only MCP: `/episodes/{id}/mcp` (one endpoint per episode) and `/mcp` (a fresh episode
per client session by default, or one shared default episode with --shared-default). Harnesses
use the control plane to create, inspect and delete episodes; it requires a bearer token that
the agent never sees (unless the operator opens it with --no-auth). Every route checks Host and
Origin (`mcpsim.serve._access`; docs/security.md). Episode state is keyed on the URL path, never on MCP
sessions, so both protocol eras and any load balancer reach the right episode (`/mcp` per client
maps a session to its episode's path).
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from functools import partial
from typing import Any

import anyio
import structlog
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.inbound import ERROR_CODE_HTTP_STATUS, MCP_PROTOCOL_VERSION_HEADER
from mcp_types import INTERNAL_ERROR, INVALID_REQUEST, UNSUPPORTED_PROTOCOL_VERSION
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.types import Message, Receive, Scope, Send

from mcpsim.engine import Episode, FaultProfile, TemplateCache, load_profile, snapshot_key
from mcpsim.serve._access import (
    HostOriginGuard,
    OpenSession,
    Quota,
    QuotaExceeded,
    Reservation,
    SessionTable,
    client_keys,
    quota,
    resolve_token,
)
from mcpsim.serve._control import ControlPlane, _error
from mcpsim.serve._host import EpisodeLimitReached, EpisodeManager
from mcpsim.serve._mcp import build_server
from mcpsim.serve._settings import ClientLimits, ServeConfig, VerdictDetail
from mcpsim.serve._work import off_the_loop
from mcpsim.trajectories import Recorder
from mcpsim.view import live_viewer
from mcpsim.world import World, load_world, world_names

log = structlog.get_logger("mcpsim.http")


class _McpDispatch:
    """ASGI endpoint for `/mcp` and `/episodes/{id}/mcp`: 404 for an unknown episode, otherwise
    the episode's world server handles the request (an object, so Starlette passes ASGI through).

    `/mcp` serves the manager's shared default episode if there is one (--shared-default);
    otherwise each client gets a fresh episode of its own (`_PerClientDefault`). Every request
    passes the session gate (per-client session limits); with a recorder, the episode's new calls
    are journaled before the response goes out."""

    def __init__(
        self, manager: EpisodeManager, gate: _SessionGate, limits: ClientLimits, recorder: Recorder | None = None
    ) -> None:
        self.manager, self.gate, self.recorder = manager, gate, recorder
        self.per_client = _PerClientDefault(manager, gate, limits, self.journal_calls)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        episode_id = scope.get("path_params", {}).get("episode_id")
        if episode_id is None and self.manager.default is None and self.manager.default_spec is not None:
            await self.per_client(scope, receive, send)
            return
        try:
            episode = self.manager.get(episode_id)
        except LookupError as exc:  # a JSON-RPC error: MCP clients show its reason, not "Session terminated"
            await _jsonrpc_error(404, INVALID_REQUEST, str(exc))(scope, receive, send)
            return
        await self.gate.handle(episode.world.name, scope, receive, send, after=self.journal_calls(episode))

    def journal_calls(self, episode: Episode) -> AfterRequest | None:
        """With a recorder: what appends the episode's new calls to its live journal."""
        recorder = self.recorder
        if recorder is None:
            return None

        async def sync() -> None:
            try:
                await off_the_loop(partial(recorder.sync, episode))
            except LookupError:  # deleted meanwhile: its deletion wrote it
                pass
            except Exception:  # a full disk: the call stands, the server goes on
                log.exception("journaling calls failed", episode=episode.id)

        return sync


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


PENDING = "pending:"  # an owner entry for an episode still being created


class _PerClientDefault:
    """`/mcp` with one fresh episode per client: each MCP session (the handshake protocol's
    `Mcp-Session-Id`) is bound to an episode created for it when it opens, and every request of
    the session is served as if sent to that episode's `/episodes/{id}/mcp`. Clients of `/mcp`
    therefore never share state: one cannot pass notes to another through the world.

    The stateless 2026-07-28 protocol carries no session, so nothing ties two of its requests to
    one client: such requests to `/mcp` get the JSON-RPC "unsupported protocol version" error
    naming only the handshake versions, on which the SDK's `mode="auto"` clients fall back to the
    session protocol. A client pinned to the stateless protocol uses an episode URL from
    POST /episodes instead (or the operator runs --shared-default).

    The episodes are ordinary ones (unguessable id, the caps, the TTL, listed by GET /episodes,
    recorded when they end); the binding is forgotten when the session ends (the episode lives on
    until its TTL, for the harness to inspect) or when the episode is gone. One client holds at
    most `mcp_episodes_per_client` of them at once (and everyone behind one address
    `mcp_episodes_per_address`): a client opening sessions in a loop is refused with 429 long
    before it fills the server's episode cap, and POST /episodes keeps working for others."""

    def __init__(
        self,
        manager: EpisodeManager,
        gate: _SessionGate,
        limits: ClientLimits,
        journal_calls: Callable[[Episode], AfterRequest | None],
    ) -> None:
        self.manager, self.gate, self.limits, self.journal_calls = manager, gate, limits, journal_calls
        self.sessions: dict[str, str] = {}  # MCP session id -> episode id
        self.owners: dict[str, tuple[str, ...]] = {}  # episode id (or a pending claim) -> its client's keys
        self._claims = itertools.count()
        gate.on_forget.append(self._unbind)

    def _unbind(self, session_id: str) -> None:
        self.sessions.pop(session_id, None)

    def prune(self) -> None:
        """Forget sessions whose episode was deleted or expired, or that the SDK closed when idle,
        and owners of episodes that are gone."""
        live = {e.id for e in self.manager.list()}
        for session_id, episode_id in list(self.sessions.items()):
            if episode_id not in live or session_id not in self.gate.table.sessions:
                self.sessions.pop(session_id, None)
        for episode_id in [e for e in self.owners if e not in live and not e.startswith(PENDING)]:
            del self.owners[episode_id]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        spec = self.manager.default_spec
        assert spec is not None
        world = spec.world.name
        headers = Headers(scope=scope)
        version = headers.get(MCP_PROTOCOL_VERSION_HEADER)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await self._refuse_stateless(version, scope, receive, send)
            return
        session_id = headers.get(MCP_SESSION_ID_HEADER)
        if session_id is not None:
            await self._serve_session(world, session_id, scope, receive, send)
            return
        if scope["method"] != "POST":  # no session yet: the SDK answers (400, 405...), no episode is made
            await self.gate.pass_through(world, scope, receive, send, None)
            return
        body, complete = await _read_opening(receive)
        if not complete:
            await _jsonrpc_error(413, INVALID_REQUEST, f"an opening request larger than {MAX_OPENING_BYTES} bytes")(
                scope, receive, send
            )
            return
        replay = _replay(body, complete, receive)
        if not _is_initialize(body):  # not opening a session: nothing to bind an episode to
            await self.gate.pass_through(world, scope, replay, send, None)
            return
        keys = client_keys(scope)
        refusal = self._over_episode_quota(keys)  # before any of its idle sessions is closed for room
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        claim = f"{PENDING}{next(self._claims)}"  # counts while the episode is being made
        self.owners[claim] = tuple(dict.fromkeys(keys))
        try:
            async with self.gate.opening(scope) as reservation:
                await self._open(world, claim, scope, replay, send, reservation)
        except QuotaExceeded as exc:
            await _too_many(str(exc))(scope, receive, send)
        finally:
            self.owners.pop(claim, None)

    async def _serve_session(self, world: str, session_id: str, scope: Scope, receive: Receive, send: Send) -> None:
        episode_id = self.sessions.get(session_id)
        if episode_id is None:
            await _jsonrpc_error(
                404,
                INVALID_REQUEST,
                "Session not found: this `/mcp` session does not exist "
                "(it ended, or the server restarted); open a new one",
            )(scope, receive, send)
            return
        try:
            after = self.journal_calls(self.manager.get(episode_id))
        except LookupError:  # the episode is gone: the tools say so
            after = None
        await self.gate.serve_session(world, session_id, _at_episode(scope, episode_id), receive, send, after)
        if scope["method"] == "DELETE":
            self.sessions.pop(session_id, None)

    async def _open(
        self, world: str, claim: str, scope: Scope, receive: Receive, send: Send, reservation: Reservation
    ) -> None:
        """Create the client's episode (its `claim` on the quota becomes the episode's) and open
        its session on it."""
        try:
            episode = await off_the_loop(self.manager.create_default)
        except EpisodeLimitReached as exc:
            await _jsonrpc_error(503, INTERNAL_ERROR, str(exc), {"Retry-After": "5"})(scope, receive, send)
            return
        except LookupError as exc:
            await _jsonrpc_error(404, INVALID_REQUEST, str(exc))(scope, receive, send)
            return
        self.owners[episode.id] = self.owners.pop(claim)
        bound: list[str] = []

        def bind(session_id: str) -> None:
            self.sessions[session_id] = episode.id
            bound.append(session_id)

        try:
            await self.gate.serve_opening(
                world, _at_episode(scope, episode.id), receive, send, reservation, self.journal_calls(episode), bind
            )
        finally:
            if not bound:  # the handshake failed: no client holds this episode
                self.owners.pop(episode.id, None)
                await off_the_loop(partial(self.manager.delete, episode.id))
            else:
                log.info("episode bound to an /mcp session", episode=episode.id)

    def _over_episode_quota(self, keys: tuple[str, str]) -> Response | None:
        """A 429 with the reason if this client holds as many `/mcp` episodes as it may."""
        self.prune()
        for key, limit in quota(keys, self.limits.mcp_episodes_per_client, self.limits.mcp_episodes_per_address):
            held = [e for e, owner in self.owners.items() if key in owner]
            if len(held) < limit:
                continue
            whom = (
                "everyone at this client's address"
                if key.startswith("address:") and keys[0] != keys[1]
                else "this client"
            )
            ttl = self.manager.ttl_seconds
            return _jsonrpc_error(
                429,
                INVALID_REQUEST,
                f"{whom} already holds {len(held)} episodes opened through /mcp, the most it may (each /mcp "
                "session makes one, and it lives until it is deleted or expires"
                + (f" after {ttl:g} idle seconds" if ttl else "")
                + "); reuse an open session, or have the "
                "harness create episodes with POST /episodes and connect to their mcp_url",
                {"Retry-After": str(self._retry_after(held))} if ttl else None,
            )
        return None

    def _retry_after(self, episode_ids: list[str]) -> int:
        """Seconds until the first of these episodes can expire, at least 1."""
        ttl = self.manager.ttl_seconds or 0.0
        now = self.manager.clock()
        used = [e.last_used for e in self.manager.list() if e.id in set(episode_ids)]
        return max(1, math.ceil(min(used) + ttl - now)) if used else 1

    async def _refuse_stateless(self, version: str, scope: Scope, receive: Receive, send: Send) -> None:
        body, _ = await _read_opening(receive)
        try:
            request_id = json.loads(body).get("id") if body else None
        except (ValueError, AttributeError, RecursionError):
            request_id = None
        message = (
            "this server gives each client of /mcp an episode of its own, bound to an MCP session; "
            f"the stateless protocol ({version[:40]}) has no session: connect with the initialize "
            "handshake, or use an episode URL from POST /episodes"
        )
        data = {"supported": list(HANDSHAKE_PROTOCOL_VERSIONS), "requested": version[:40]}
        await _jsonrpc_error(
            ERROR_CODE_HTTP_STATUS.get(UNSUPPORTED_PROTOCOL_VERSION, 400),
            UNSUPPORTED_PROTOCOL_VERSION,
            message,
            data=data,
            request_id=request_id if isinstance(request_id, str | int) else None,
        )(scope, receive, send)


def _at_episode(scope: Scope, episode_id: str) -> Scope:
    """The request as if sent to the episode's own endpoint: the MCP tools resolve the episode
    from the URL path."""
    path = f"/episodes/{episode_id}/mcp"
    return {**scope, "path": path, "raw_path": path.encode()}


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


def build_app(
    worlds: list[World],
    manager: EpisodeManager,
    *,
    token: str | None = None,
    no_auth: bool = False,
    host: str = "127.0.0.1",
    public_url: str | None = None,
    allowed_hosts: list[str] | None = None,
    allowed_origins: list[str] | None = None,
    verdict_detail: VerdictDetail | None = None,
    reap_interval: float = 30.0,
    faults: FaultProfile | None = None,
    faults_dirs: list[str] | tuple[str, ...] = (),
    snapshot_key: bytes | None = None,
    client_limits: ClientLimits | None = None,
    recorder: Recorder | None = None,
) -> Starlette:
    """The app for `mcpsim serve --http`. `/mcp` serves `manager.default` if the manager has a
    shared one, else a fresh episode per client of `manager.default_spec` (`set_default`).
    `faults_dirs`: directories whose profiles requests may name; `snapshot_key`: signs snapshots
    (None: a key generated for this process).

    Closed by default (docs/security.md): the control plane requires `token` as a bearer token;
    with neither a token nor `no_auth=True`, one is generated and printed to stderr once (it is
    `app.state.token`). Every route checks Host and Origin exactly against `allowed_hosts` and
    `allowed_origins` (none given: the loopback names), plus the host of `public_url`, which
    `mcp_url`s are built from (None: the address of the listening socket). `verdict_detail`:
    "full" or "summary" (None: full behind a token, summary with `no_auth`).

    `client_limits`: what one client may hold on the MCP endpoints (sessions, `/mcp` episodes;
    None: the defaults). `recorder`: journals each episode's calls as MCP requests are answered."""
    token = resolve_token(token, no_auth)
    limits = client_limits or ClientLimits()
    control = ControlPlane(
        worlds,
        manager,
        token=token,
        no_auth=no_auth,
        faults=faults,
        public_url=public_url,
        verdict_detail=verdict_detail,
        bind_host=host,
    )
    control.faults_dirs = tuple(str(d) for d in faults_dirs)
    control.snapshot_key = snapshot_key
    guard = [
        Middleware(
            HostOriginGuard,
            allowed_hosts=allowed_hosts or (),
            allowed_origins=allowed_origins or (),
            public_url=control.public_url,
        )
    ]
    # Starlette builds middleware on the first request: check the lists now (ValueError with the reason).
    HostOriginGuard(None, allowed_hosts=allowed_hosts or (), allowed_origins=allowed_origins or ())  # type: ignore[arg-type]
    # The SDK's own Host/Origin check matches port wildcards by prefix (`localhost:*` lets
    # `localhost:1.evil.example` through) and knows neither the public URL nor the control plane:
    # HostOriginGuard, in front of every route, is the one exact check, so the SDK's is off.
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    servers = {w.name: build_server(w, manager.get) for w in worlds}
    for server in servers.values():
        # Creates server.session_manager; its own Starlette app is not used.
        server.streamable_http_app(
            json_response=True,
            host=host,
            transport_security=security,
            session_idle_timeout=limits.session_idle_seconds,
            max_sessions=limits.max_sessions,
        )
    gate = _SessionGate(servers, limits, anyio.current_time)
    mcp_endpoint = _McpDispatch(manager, gate, limits, recorder)

    async def reaper() -> None:
        while True:
            await anyio.sleep(reap_interval)
            await off_the_loop(manager.reap)  # closing waits for operations in progress
            gate.table.expire()
            mcp_endpoint.per_client.prune()

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for server in servers.values():
                await stack.enter_async_context(server.session_manager.run())
            async with anyio.create_task_group() as tg:
                tg.start_soon(reaper)
                try:
                    yield
                finally:
                    tg.cancel_scope.cancel()
        manager.close()

    routes = [
        *control.routes(),
        Route("/episodes/{episode_id}/mcp", mcp_endpoint),
        Route("/mcp", mcp_endpoint),
        # the web viewer's live pages (docs/viewer.md): its JSON behind the control plane's token
        Mount("/ui", app=live_viewer(manager, control.authorized, control.verdict_detail)),
    ]

    async def http_error(request: Any, exc: Exception) -> Response:
        """Starlette's own refusals (a wrong method: 405, an unknown path: 404) as JSON errors
        with the reason, like every refusal of the control plane."""
        assert isinstance(exc, HTTPException)
        return _error(exc.status_code, f"{exc.detail}: {request.method} {request.url.path}", dict(exc.headers or {}))

    app = Starlette(routes=routes, lifespan=lifespan, middleware=guard, exception_handlers={HTTPException: http_error})
    app.state.token = token
    app.state.manager = manager
    app.state.control = control
    app.state.sessions = gate.table
    return app


def create_app(config: ServeConfig) -> Starlette:
    """Load the worlds, build the default episode, and assemble the app."""
    default = load_world(config.world)
    recorder = Recorder(config.record_dir) if config.record_dir else None  # recovers what a crash left
    templates = TemplateCache(config.cache_dir, max_bytes=config.template_cache_bytes)
    limits: dict[str, Any] = {
        "max_episodes": config.max_episodes,
        "max_episode_bytes": config.max_episode_bytes,
        "ttl_seconds": config.ttl_seconds,
    }
    manager = _RecordingManager(recorder, templates, **limits) if recorder else EpisodeManager(templates, **limits)
    profile = load_profile(config.faults)
    manager.set_default(default, config.seed, config.scale, profile, shared=config.shared_default)
    if recorder is not None and manager.default is not None:
        recorder.track(manager.default)
    worlds = [default] + [load_world(n) for n in world_names() if n != default.name]
    interval = min(30.0, config.ttl_seconds / 2) if config.ttl_seconds else 30.0
    app = build_app(
        worlds,
        manager,
        token=config.token,
        no_auth=config.no_auth,
        host=config.host,
        public_url=config.public_url,
        verdict_detail=config.verdict_detail,
        allowed_hosts=config.allowed_hosts,
        allowed_origins=config.allowed_origins,
        reap_interval=interval,
        faults=profile,
        faults_dirs=config.faults_dirs,
        snapshot_key=snapshot_key(config.snapshot_key) if config.snapshot_key else None,
        client_limits=config.client_limits,
        recorder=recorder,
    )
    if recorder is not None:
        app.add_middleware(_RecordWhenEnded, manager=manager, recorder=recorder)
    return app


class _RecordingManager(EpisodeManager):
    """`--record`: every episode added (created, forked, restored, one per `/mcp` client) gets a
    live journal, so a crash leaves its calls behind, and is written when it is removed."""

    def __init__(self, recorder: Recorder, templates: TemplateCache, **options: Any) -> None:
        super().__init__(templates, on_retire=recorder.record, **options)
        self.recorder = recorder

    def add(self, episode: Episode) -> Episode:
        added = super().add(episode)
        try:
            self.recorder.track(added)
        except OSError:
            log.exception("could not journal a live episode", episode=added.id)
        return added


_ENDING = re.compile(r"^/episodes/([^/]+)/(end|verify)$")


class _RecordWhenEnded:
    """`--record`: writes (and fsyncs) an episode as soon as POST .../end or .../verify succeeds,
    before the response goes out (a caller that has the verdict knows it is on disk), not only
    when it is deleted or expires."""

    def __init__(self, app: Any, manager: EpisodeManager, recorder: Recorder) -> None:
        self.app, self.manager, self.recorder = app, manager, recorder

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        match = (
            _ENDING.match(scope.get("path", "")) if scope["type"] == "http" and scope.get("method") == "POST" else None
        )
        if match is None:
            await self.app(scope, receive, send)
            return
        held: list[Any] = []  # the response, held until the episode is written: durable once acknowledged

        async def watch(message: Any) -> None:
            if message["type"] == "http.response.start" or held:
                held.append(message)
                if message["type"] == "http.response.body" and not message.get("more_body", False):
                    if held[0]["status"] == 200:
                        await self._record(match.group(1))
                    for m in held:
                        await send(m)
                    held.clear()
                return
            await send(message)

        await self.app(scope, receive, watch)
        for m in held:  # a response cut short: pass on what there is
            await send(m)

    async def _record(self, episode_id: str) -> None:
        try:
            episode = self.manager.get(episode_id)
        except LookupError:  # deleted meanwhile: its deletion recorded it
            return
        try:
            await off_the_loop(partial(self.recorder.ended, episode))
        except Exception:  # a deleted-meanwhile episode, a full disk: the server goes on
            log.exception("recording an ended episode failed", episode=episode.id)


@contextmanager
def serve_in_thread(app: Starlette, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Run `app` with uvicorn in a background thread (its own event loop) until the block ends;
    yields the base URL. Port 0 picks a free port."""
    import socket
    import threading

    import uvicorn

    if port == 0:
        with socket.socket() as s:
            s.bind((host, 0))
            port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_config=None, lifespan="on"))
    thread = threading.Thread(target=server.run, name="mcpsim-http", daemon=True)
    thread.start()
    ready = threading.Event()
    for _ in range(2000):  # polled, bounded to about 20 s
        if server.started or not thread.is_alive():
            break
        ready.wait(0.01)
    if not server.started:
        raise RuntimeError(f"the HTTP server did not start on {host}:{port}")
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
