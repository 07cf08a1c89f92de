"""The HTTP server: MCP endpoints for agents and a JSON control plane for harnesses, in one app.

Agents see only MCP: `/episodes/{id}/mcp` (one endpoint per episode) and `/mcp` (a fresh episode
per client session by default, or one shared default episode with --shared-default). Harnesses
use the control plane to create, inspect and delete episodes; it requires a bearer token that
the agent never sees (unless the operator opens it with --no-auth). Every route checks Host and
Origin (`mcpsim.serve._access`; docs/security.md). Episode state is keyed on the URL path, never on MCP
sessions, so both protocol eras and any load balancer reach the right episode (`/mcp` per client
maps a session to its episode's path).

Here the app is assembled and served; the MCP endpoints are `mcpsim.serve._mcp_endpoints`, the
per-client session gate in front of them `mcpsim.serve._session_gate`, the control plane
`mcpsim.serve._control`, and `--record` `mcpsim.serve._recording`.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager, contextmanager
from functools import partial
from typing import Any

import anyio
import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.responses import Response
from starlette.routing import Mount, Route

from mcpsim.engine import FaultProfile, TemplateCache, load_profile, snapshot_key
from mcpsim.serve._access import HostOriginGuard, resolve_token
from mcpsim.serve._connections import protocol_for
from mcpsim.serve._control import ControlPlane
from mcpsim.serve._host import EpisodeManager
from mcpsim.serve._mcp import MCPServer, build_server
from mcpsim.serve._mcp_endpoints import _McpDispatch
from mcpsim.serve._recording import _RecordingManager, _RecordWhenEnded
from mcpsim.serve._requests import _error
from mcpsim.serve._roles import RoleToolList, resolve_endpoint
from mcpsim.serve._session_gate import _SessionGate
from mcpsim.serve._settings import ClientLimits, ServeConfig, VerdictDetail
from mcpsim.serve._work import off_the_loop
from mcpsim.trajectories import Recorder
from mcpsim.view import live_viewer
from mcpsim.world import World, load_world, world_names


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
    None: the defaults) and its connections' deadlines (`app.state.http_protocol`: the uvicorn
    protocol class `serve_in_thread` and `mcpsim serve --http` run the app with). `recorder`:
    journals each episode's calls as MCP requests are answered."""
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
    guard = _host_origin_guard(allowed_hosts, allowed_origins, control.public_url)
    servers = _mcp_servers(worlds, manager, host, limits)
    gate = _SessionGate(servers, limits, anyio.current_time)
    mcp_endpoint = _McpDispatch(manager, gate, limits, recorder)
    lifespan = _lifespan(servers, manager, gate, mcp_endpoint, reap_interval)
    routes = [
        *control.routes(),
        Route("/episodes/{episode_id}/mcp", mcp_endpoint),
        Route("/mcp", mcp_endpoint),
        # the web viewer's live pages (docs/viewer.md): its JSON behind the control plane's token
        Mount("/ui", app=live_viewer(manager, control.authorized, control.verdict_detail)),
    ]
    app = Starlette(routes=routes, lifespan=lifespan, middleware=guard, exception_handlers={HTTPException: _http_error})
    app.state.token = token
    app.state.manager = manager
    app.state.control = control
    app.state.sessions = gate.table
    app.state.http_protocol = protocol_for(limits)  # its connections' deadlines and cap, for its server
    return app


def _host_origin_guard(
    allowed_hosts: list[str] | None, allowed_origins: list[str] | None, public_url: str | None
) -> list[Middleware]:
    """The Host and Origin check in front of every route (HostOriginGuard), its lists checked now."""
    guard = [
        Middleware(
            HostOriginGuard,
            allowed_hosts=allowed_hosts or (),
            allowed_origins=allowed_origins or (),
            public_url=public_url,
        )
    ]
    # Starlette builds middleware on the first request: check the lists now (ValueError with the reason).
    HostOriginGuard(None, allowed_hosts=allowed_hosts or (), allowed_origins=allowed_origins or ())  # type: ignore[arg-type]
    return guard


def _mcp_servers(worlds: list[World], manager: EpisodeManager, host: str, limits: ClientLimits) -> dict[str, MCPServer]:
    """Each world's MCP server, with its session manager for the streamable HTTP endpoints."""
    # The SDK's own Host/Origin check matches port wildcards by prefix (`localhost:*` lets
    # `localhost:1.evil.example` through) and knows neither the public URL nor the control plane:
    # HostOriginGuard, in front of every route, is the one exact check, so the SDK's is off.
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    servers = {w.name: build_server(w, partial(resolve_endpoint, manager)) for w in worlds}  # roles: `_roles`
    for server in servers.values():
        server.middleware.append(RoleToolList(manager))
    for server in servers.values():
        # Creates server.session_manager; its own Starlette app is not used.
        server.streamable_http_app(
            json_response=True,
            host=host,
            transport_security=security,
            session_idle_timeout=limits.session_idle_seconds,
            max_sessions=limits.max_sessions,
        )
    return servers


def _lifespan(
    servers: dict[str, MCPServer],
    manager: EpisodeManager,
    gate: _SessionGate,
    mcp_endpoint: _McpDispatch,
    reap_interval: float,
) -> Callable[[Starlette], AbstractAsyncContextManager[None]]:
    """The app's lifespan: the worlds' MCP session managers run, and a reaper expires idle
    episodes and sessions every `reap_interval` seconds; the episodes are closed at the end."""

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

    return lifespan


async def _http_error(request: Any, exc: Exception) -> Response:
    """Starlette's own refusals (a wrong method: 405, an unknown path: 404) as JSON errors
    with the reason, like every refusal of the control plane."""
    assert isinstance(exc, HTTPException)
    return _error(exc.status_code, f"{exc.detail}: {request.method} {request.url.path}", dict(exc.headers or {}))


# `build_app`'s options that `create_app` passes on from the `ServeConfig` field of the same name
_AS_CONFIGURED = (
    *("token", "no_auth", "host", "public_url", "verdict_detail"),
    *("allowed_hosts", "allowed_origins", "faults_dirs", "client_limits"),
)


def create_app(config: ServeConfig) -> Starlette:
    """Load the worlds, build the default episode, and assemble the app (`app.state.worlds`: the
    names of the worlds it serves)."""
    if config.only and config.world not in config.only:
        raise ValueError(
            f"the default world {config.world!r} is not among the worlds served ({', '.join(config.only)})"
        )
    default = load_world(config.world)
    recorder = Recorder(config.record_dir) if config.record_dir else None  # recovers what a crash left
    templates = TemplateCache(config.cache_dir, max_bytes=config.template_cache_bytes)
    limits: dict[str, Any] = {
        "max_episodes": config.max_episodes,
        "max_episode_bytes": config.max_episode_bytes,
        "max_bytes_per_episode": config.max_bytes_per_episode,
        "ttl_seconds": config.ttl_seconds,
    }
    manager = _RecordingManager(recorder, templates, **limits) if recorder else EpisodeManager(templates, **limits)
    profile = load_profile(config.faults)
    manager.set_default(default, config.seed, config.scale, profile, shared=config.shared_default)
    if recorder is not None and manager.default is not None:
        recorder.track(manager.default)
    worlds = [default] + [load_world(n) for n in config.only or world_names() if n != default.name]
    interval = min(30.0, config.ttl_seconds / 2) if config.ttl_seconds else 30.0
    app = build_app(
        worlds,
        manager,
        **{name: getattr(config, name) for name in _AS_CONFIGURED},
        reap_interval=interval,
        faults=profile,
        snapshot_key=snapshot_key(config.snapshot_key) if config.snapshot_key else None,
        recorder=recorder,
    )
    if recorder is not None:
        app.add_middleware(_RecordWhenEnded, manager=manager, recorder=recorder)
    app.state.worlds = sorted(w.name for w in worlds)
    return app


@contextmanager
def serve_in_thread(app: Starlette, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Run `app` with uvicorn in a background thread (its own event loop) until the block ends;
    yields the base URL. Port 0 picks a free port."""
    if port == 0:
        with socket.socket() as s:
            s.bind((host, 0))
            port = s.getsockname()[1]
    state = getattr(app, "state", None)  # a wrapped app (a recording proxy, middleware) may have none
    protocol = getattr(state, "http_protocol", None) or protocol_for(ClientLimits())
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_config=None, lifespan="on", http=protocol))
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
