"""The HTTP server: MCP endpoints for agents and a JSON control plane for harnesses, in one app.

Agents see only MCP: `/episodes/{id}/mcp` (one endpoint per episode) and `/mcp` (a fresh episode
per client session by default, or one shared default episode with --shared-default). Harnesses
use the control plane to create, inspect and delete episodes; it requires a bearer token that
the agent never sees (unless the operator opens it with --no-auth). Every route checks Host and
Origin (`mcpsim.serve.access`; docs/security.md). Episode state is keyed on the URL path, never on MCP
sessions, so both protocol eras and any load balancer reach the right episode (`/mcp` per client
maps a session to its episode's path).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

import anyio
import anyio.to_thread
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
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from mcpsim.serve.access import (
    VERDICT_DETAILS,
    HostOriginGuard,
    VerdictDetail,
    resolve_token,
)
from mcpsim.serve.control import ControlPlane, _error
from mcpsim.engine.episode import Episode
from mcpsim.engine.faults import FaultProfile, load_profile
from mcpsim.serve.host import DEFAULT_MAX_EPISODE_BYTES, DEFAULT_MAX_EPISODES, EpisodeLimitReached, EpisodeManager
from mcpsim.serve.mcp import build_server
from mcpsim.trajectories.recording import Recorder
from mcpsim.world.registry import load_world, world_names
from mcpsim.engine.snapshots import snapshot_key
from mcpsim.engine.templates import DEFAULT_TEMPLATE_BYTES, TemplateCache, parse_size
from mcpsim.world import World

log = structlog.get_logger("mcpsim.http")


class _McpDispatch:
    """ASGI endpoint for `/mcp` and `/episodes/{id}/mcp`: 404 for an unknown episode, otherwise
    the episode's world server handles the request (an object, so Starlette passes ASGI through).

    `/mcp` serves the manager's shared default episode if there is one (--shared-default);
    otherwise each client gets a fresh episode of its own (`_PerClientDefault`)."""

    def __init__(self, manager: EpisodeManager, servers: dict[str, Any]) -> None:
        self.manager, self.servers = manager, servers
        self.per_client = _PerClientDefault(manager, servers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        episode_id = scope.get("path_params", {}).get("episode_id")
        if episode_id is None and self.manager.default is None and self.manager.default_spec is not None:
            await self.per_client(scope, receive, send)
            return
        try:
            episode = self.manager.get(episode_id)
        except LookupError as exc:
            await _error(404, str(exc))(scope, receive, send)
            return
        await self.servers[episode.world.name].session_manager.handle_request(scope, receive, send)


MAX_OPENING_BYTES = 64 * 1024  # an initialize request is a few hundred bytes


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
    recorded when they end); the binding is forgotten when the client ends its session (the
    episode lives on until its TTL, for the harness to inspect) or when the episode is gone."""

    def __init__(self, manager: EpisodeManager, servers: dict[str, Any]) -> None:
        self.manager, self.servers = manager, servers
        self.sessions: dict[str, str] = {}  # MCP session id -> episode id

    def prune(self) -> None:
        """Forget sessions whose episode was deleted or expired."""
        live = {e.id for e in self.manager.list()}
        for session_id, episode_id in list(self.sessions.items()):
            if episode_id not in live:
                self.sessions.pop(session_id, None)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        spec = self.manager.default_spec
        assert spec is not None
        server = self.servers[spec.world.name]
        headers = Headers(scope=scope)
        version = headers.get(MCP_PROTOCOL_VERSION_HEADER)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await self._refuse_stateless(version, scope, receive, send)
            return
        session_id = headers.get(MCP_SESSION_ID_HEADER)
        if session_id is not None:
            episode_id = self.sessions.get(session_id)
            if episode_id is None:
                await _jsonrpc_error(404, INVALID_REQUEST, "Session not found: this `/mcp` session does not exist "
                                     "(it ended, or the server restarted); open a new one")(scope, receive, send)
                return
            await server.session_manager.handle_request(_at_episode(scope, episode_id), receive, send)
            if scope["method"] == "DELETE":
                self.sessions.pop(session_id, None)
            return
        if scope["method"] != "POST":  # no session yet: the SDK answers (400, 405...), no episode is made
            await server.session_manager.handle_request(scope, receive, send)
            return
        body = await _read_opening(receive)
        if body is None:
            await _jsonrpc_error(413, INVALID_REQUEST, f"an opening request larger than {MAX_OPENING_BYTES} "
                                 "bytes")(scope, receive, send)
            return
        replay = _replay(body, receive)
        if not _is_initialize(body):  # not opening a session: nothing to bind an episode to
            await server.session_manager.handle_request(scope, replay, send)
            return
        try:
            episode = await anyio.to_thread.run_sync(self.manager.create_default)
        except EpisodeLimitReached as exc:
            await _jsonrpc_error(503, INTERNAL_ERROR, str(exc), {"Retry-After": "5"})(scope, receive, send)
            return
        except LookupError as exc:
            await _jsonrpc_error(404, INVALID_REQUEST, str(exc))(scope, receive, send)
            return
        bound: list[str] = []

        async def send_binding(message: Message) -> None:
            if message["type"] == "http.response.start" and not bound:
                for key, value in message.get("headers", []):
                    if key.decode("latin-1").lower() == MCP_SESSION_ID_HEADER:
                        # Bound before the client can see the id, so its next request finds it.
                        self.sessions[value.decode("latin-1")] = episode.id
                        bound.append(value.decode("latin-1"))
            await send(message)

        try:
            await server.session_manager.handle_request(_at_episode(scope, episode.id), replay, send_binding)
        finally:
            if not bound:  # the handshake failed: no client holds this episode
                await anyio.to_thread.run_sync(self.manager.delete, episode.id)
            else:
                log.info("episode bound to an /mcp session", episode=episode.id)

    async def _refuse_stateless(self, version: str, scope: Scope, receive: Receive, send: Send) -> None:
        body = await _read_opening(receive)
        try:
            request_id = json.loads(body).get("id") if body else None
        except (ValueError, AttributeError, RecursionError):
            request_id = None
        message = ("this server gives each client of /mcp an episode of its own, bound to an MCP session; "
                   f"the stateless protocol ({version[:40]}) has no session: connect with the initialize "
                   "handshake, or use an episode URL from POST /episodes")
        data = {"supported": list(HANDSHAKE_PROTOCOL_VERSIONS), "requested": version[:40]}
        await _jsonrpc_error(ERROR_CODE_HTTP_STATUS.get(UNSUPPORTED_PROTOCOL_VERSION, 400),
                             UNSUPPORTED_PROTOCOL_VERSION, message, data=data,
                             request_id=request_id if isinstance(request_id, str | int) else None)(scope, receive, send)


def _at_episode(scope: Scope, episode_id: str) -> Scope:
    """The request as if sent to the episode's own endpoint: the MCP tools resolve the episode
    from the URL path."""
    path = f"/episodes/{episode_id}/mcp"
    return {**scope, "path": path, "raw_path": path.encode()}


async def _read_opening(receive: Receive) -> bytes | None:
    """The request body, or None past MAX_OPENING_BYTES."""
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return bytes(body)
        body += message.get("body", b"")
        if len(body) > MAX_OPENING_BYTES:
            return None
        if not message.get("more_body", False):
            return bytes(body)


def _replay(body: bytes | None, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body or b"", "more_body": False}
        return await receive()

    return replay


def _is_initialize(body: bytes) -> bool:
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return False
    return isinstance(message, dict) and message.get("method") == "initialize"


def _jsonrpc_error(status: int, code: int, message: str, headers: dict[str, str] | None = None, *,
                   data: Any = None, request_id: str | int | None = None) -> Response:
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
    "full" or "summary" (None: full behind a token, summary with `no_auth`)."""
    token = resolve_token(token, no_auth)
    control = ControlPlane(worlds, manager, token=token, no_auth=no_auth, faults=faults, public_url=public_url,
                           verdict_detail=verdict_detail, bind_host=host)
    control.faults_dirs = tuple(str(d) for d in faults_dirs)
    control.snapshot_key = snapshot_key
    guard = [Middleware(HostOriginGuard, allowed_hosts=allowed_hosts or (), allowed_origins=allowed_origins or (),
                        public_url=control.public_url)]
    # Starlette builds middleware on the first request: check the lists now (ValueError with the reason).
    HostOriginGuard(None, allowed_hosts=allowed_hosts or (), allowed_origins=allowed_origins or ())  # type: ignore[arg-type]
    # The SDK's own Host/Origin check matches port wildcards by prefix (`localhost:*` lets
    # `localhost:1.evil.example` through) and knows neither the public URL nor the control plane:
    # HostOriginGuard, in front of every route, is the one exact check, so the SDK's is off.
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    servers = {w.name: build_server(w, manager.get) for w in worlds}
    for server in servers.values():
        # Creates server.session_manager; its own Starlette app is not used.
        server.streamable_http_app(json_response=True, host=host, transport_security=security)
    mcp_endpoint = _McpDispatch(manager, servers)

    async def reaper() -> None:
        while True:
            await anyio.sleep(reap_interval)
            await anyio.to_thread.run_sync(manager.reap)  # closing waits for operations in progress
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

    routes = [*control.routes(), Route("/episodes/{episode_id}/mcp", mcp_endpoint), Route("/mcp", mcp_endpoint)]
    async def http_error(request: Any, exc: Exception) -> Response:
        """Starlette's own refusals (a wrong method: 405, an unknown path: 404) as JSON errors
        with the reason, like every refusal of the control plane."""
        assert isinstance(exc, HTTPException)
        return _error(exc.status_code, f"{exc.detail}: {request.method} {request.url.path}", dict(exc.headers or {}))

    app = Starlette(routes=routes, lifespan=lifespan, middleware=guard,
                    exception_handlers={HTTPException: http_error})
    app.state.token = token
    app.state.control = control
    return app


def _env_flag(env: dict[str, str], name: str) -> bool:
    text = env.get(name, "").strip().lower()
    if text in ("", "0", "false", "no", "off"):
        return False
    if text in ("1", "true", "yes", "on"):
        return True
    raise ValueError(f"{name} must be 1 or 0 (true or false), not {text!r}")


def _env_bytes_of(env: dict[str, str], name: str, default: int | None) -> int | None:
    text = env.get(name)
    if not text:
        return default
    return None if text.strip().lower() in ("0", "none", "unlimited") else parse_size(text)


@dataclass
class ServeConfig:
    """How `mcpsim serve --http` (and `servers/asgi.py`) run: the world behind `/mcp` and the
    limits of the control plane. Every installed world can be created over HTTP."""

    world: str = "retail"
    seed: int = 0
    scale: str = "default"
    token: str | None = None  # None (and no_auth False): one is generated and printed to stderr
    no_auth: bool = False  # the control plane open to anyone who reaches the server (local experiments)
    host: str = "127.0.0.1"
    public_url: str | None = None  # what mcp_urls are built from (None: the listening socket's address)
    verdict_detail: VerdictDetail | None = None  # full | summary (None: full with a token, summary without)
    shared_default: bool = False  # `/mcp`: one episode shared by every client, not one per client
    max_episodes: int = DEFAULT_MAX_EPISODES
    max_episode_bytes: int | None = DEFAULT_MAX_EPISODE_BYTES  # None: no byte cap
    template_cache_bytes: int | None = DEFAULT_TEMPLATE_BYTES  # None: unbounded
    ttl_seconds: float | None = 3600.0
    cache_dir: str | None = None
    allowed_hosts: list[str] = dataclass_field(default_factory=list)
    allowed_origins: list[str] = dataclass_field(default_factory=list)
    record_dir: str | None = None  # write every episode's trajectory there when it ends
    faults: str | None = None  # fault profile of the default episode and of episodes created without one
    faults_dirs: list[str] = dataclass_field(default_factory=list)  # profiles requests may name (--faults-dir)
    snapshot_key: str | None = None  # signs snapshots (None: a key generated per process)

    @classmethod
    def from_env(cls, env: dict[str, str]) -> ServeConfig:
        """MCPSIM_WORLD, _SEED, _SCALE, _TOKEN, _HOST, _MAX_EPISODES, _MAX_EPISODE_BYTES and
        _TEMPLATE_CACHE_BYTES (sizes such as 4GiB; 0: unlimited), _TTL (0: never),
        _CACHE_DIR, _ALLOWED_HOSTS and _ALLOWED_ORIGINS (space-separated), _RECORD_DIR, _FAULTS,
        _FAULTS_DIRS (space-separated), _SNAPSHOT_KEY, _NO_AUTH and _SHARED_DEFAULT (1/0, true/false),
        _PUBLIC_URL, _VERDICT_DETAIL (full or summary)."""
        ttl = float(env.get("MCPSIM_TTL", "3600"))
        detail = env.get("MCPSIM_VERDICT_DETAIL") or None
        if detail is not None and detail not in VERDICT_DETAILS:
            raise ValueError(f"MCPSIM_VERDICT_DETAIL must be one of {', '.join(VERDICT_DETAILS)}, not {detail!r}")
        return cls(
            world=env.get("MCPSIM_WORLD", "retail"),
            seed=int(env.get("MCPSIM_SEED", "0")),
            scale=env.get("MCPSIM_SCALE", "default"),
            token=env.get("MCPSIM_TOKEN") or None,
            no_auth=_env_flag(env, "MCPSIM_NO_AUTH"),
            host=env.get("MCPSIM_HOST", "127.0.0.1"),
            public_url=env.get("MCPSIM_PUBLIC_URL") or None,
            verdict_detail=detail,  # type: ignore[arg-type]
            shared_default=_env_flag(env, "MCPSIM_SHARED_DEFAULT"),
            max_episodes=int(env.get("MCPSIM_MAX_EPISODES", str(DEFAULT_MAX_EPISODES))),
            max_episode_bytes=_env_bytes_of(env, "MCPSIM_MAX_EPISODE_BYTES", DEFAULT_MAX_EPISODE_BYTES),
            template_cache_bytes=_env_bytes_of(env, "MCPSIM_TEMPLATE_CACHE_BYTES", DEFAULT_TEMPLATE_BYTES),
            ttl_seconds=ttl or None,
            cache_dir=env.get("MCPSIM_CACHE_DIR") or None,
            allowed_hosts=env.get("MCPSIM_ALLOWED_HOSTS", "").split(),
            allowed_origins=env.get("MCPSIM_ALLOWED_ORIGINS", "").split(),
            record_dir=env.get("MCPSIM_RECORD_DIR") or None,
            faults=env.get("MCPSIM_FAULTS") or None,
            faults_dirs=env.get("MCPSIM_FAULTS_DIRS", "").split(),
            snapshot_key=env.get("MCPSIM_SNAPSHOT_KEY") or None,
        )


def create_app(config: ServeConfig) -> Starlette:
    """Load the worlds, build the default episode, and assemble the app."""
    default = load_world(config.world)
    recorder = Recorder(config.record_dir) if config.record_dir else None  # recovers what a crash left
    manager = (_RecordingManager if recorder else EpisodeManager)(
        TemplateCache(config.cache_dir, max_bytes=config.template_cache_bytes), max_episodes=config.max_episodes,
        max_episode_bytes=config.max_episode_bytes, ttl_seconds=config.ttl_seconds,
        on_retire=recorder.record if recorder else None,
    )
    profile = load_profile(config.faults)
    if recorder is not None:
        manager.recorder = recorder
    manager.set_default(default, config.seed, config.scale, profile, shared=config.shared_default)
    if recorder is not None and manager.default is not None:
        recorder.track(manager.default)
    worlds = [default] + [load_world(n) for n in world_names() if n != default.name]
    interval = min(30.0, config.ttl_seconds / 2) if config.ttl_seconds else 30.0
    app = build_app(worlds, manager, token=config.token, no_auth=config.no_auth, host=config.host,
                     public_url=config.public_url, verdict_detail=config.verdict_detail,
                     allowed_hosts=config.allowed_hosts,
                     allowed_origins=config.allowed_origins, reap_interval=interval, faults=profile,
                     faults_dirs=config.faults_dirs,
                     snapshot_key=snapshot_key(config.snapshot_key) if config.snapshot_key else None)
    if recorder is not None:
        app.add_middleware(_RecordWhenEnded, manager=manager, recorder=recorder)
    return app


class _RecordingManager(EpisodeManager):
    """`--record`: every episode added (created, forked, restored, one per `/mcp` client) is noted
    in the recorder's live-episode journal, so a crash leaves a trace of it."""

    recorder: Recorder

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
        match = _ENDING.match(scope.get("path", "")) if scope["type"] == "http" and scope.get("method") == "POST" \
            else None
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
            await anyio.to_thread.run_sync(self.recorder.ended, episode)
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
