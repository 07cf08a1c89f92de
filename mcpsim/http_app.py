"""The HTTP server: MCP endpoints for agents and a JSON control plane for harnesses, in one app.

Agents see only MCP: `/episodes/{id}/mcp` (one endpoint per episode) and `/mcp` (the default
episode). Harnesses use the control plane to create, inspect and delete episodes; it can be
protected by a bearer token that the agent never sees. Episode state is keyed on the URL path,
never on MCP sessions, so both protocol eras and any load balancer reach the right episode.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from mcpsim.control import ControlPlane, _error
from mcpsim.faults import FaultProfile, load_profile
from mcpsim.manager import EpisodeManager
from mcpsim.mcp_server import build_server, http_security
from mcpsim.recording import Recorder
from mcpsim.registry import load_world, world_names
from mcpsim.templates import TemplateCache
from mcpsim.world import World


class _McpDispatch:
    """ASGI endpoint for `/mcp` and `/episodes/{id}/mcp`: 404 for an unknown episode, otherwise
    the episode's world server handles the request (an object, so Starlette passes ASGI through)."""

    def __init__(self, manager: EpisodeManager, servers: dict[str, Any]) -> None:
        self.manager, self.servers = manager, servers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            episode = self.manager.get(scope.get("path_params", {}).get("episode_id"))
        except LookupError as exc:
            await _error(404, str(exc))(scope, receive, send)
            return
        await self.servers[episode.world.name].session_manager.handle_request(scope, receive, send)


def build_app(
    worlds: list[World],
    manager: EpisodeManager,
    *,
    token: str | None = None,
    host: str = "127.0.0.1",
    allowed_hosts: list[str] | None = None,
    allowed_origins: list[str] | None = None,
    reap_interval: float = 30.0,
    faults: FaultProfile | None = None,
) -> Starlette:
    """The app for `mcpsim serve --http`. `manager.default` (if set) is served at `/mcp`."""
    control = ControlPlane(worlds, manager, token=token, faults=faults)
    security = http_security(host, allowed_hosts or [], allowed_origins or [])
    servers = {w.name: build_server(w, manager.get) for w in worlds}
    for server in servers.values():
        # Creates server.session_manager; its own Starlette app is not used.
        server.streamable_http_app(json_response=True, host=host, transport_security=security)
    mcp_endpoint = _McpDispatch(manager, servers)

    async def reaper() -> None:
        while True:
            await anyio.sleep(reap_interval)
            manager.reap()

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
    return Starlette(routes=routes, lifespan=lifespan)


@dataclass
class ServeConfig:
    """How `mcpsim serve --http` (and `servers/asgi.py`) run: the world behind `/mcp` and the
    limits of the control plane. Every installed world can be created over HTTP."""

    world: str = "retail"
    seed: int = 0
    scale: str = "default"
    token: str | None = None
    host: str = "127.0.0.1"
    max_episodes: int = 1000
    ttl_seconds: float | None = 3600.0
    cache_dir: str | None = None
    allowed_hosts: list[str] = dataclass_field(default_factory=list)
    allowed_origins: list[str] = dataclass_field(default_factory=list)
    record_dir: str | None = None  # write every episode's trajectory there when it ends
    faults: str | None = None  # fault profile of the default episode and of episodes created without one

    @classmethod
    def from_env(cls, env: dict[str, str]) -> ServeConfig:
        """MCPSIM_WORLD, _SEED, _SCALE, _TOKEN, _HOST, _MAX_EPISODES, _TTL (0: never),
        _CACHE_DIR, _ALLOWED_HOSTS and _ALLOWED_ORIGINS (space-separated), _RECORD_DIR, _FAULTS."""
        ttl = float(env.get("MCPSIM_TTL", "3600"))
        return cls(
            world=env.get("MCPSIM_WORLD", "retail"),
            seed=int(env.get("MCPSIM_SEED", "0")),
            scale=env.get("MCPSIM_SCALE", "default"),
            token=env.get("MCPSIM_TOKEN") or None,
            host=env.get("MCPSIM_HOST", "127.0.0.1"),
            max_episodes=int(env.get("MCPSIM_MAX_EPISODES", "1000")),
            ttl_seconds=ttl or None,
            cache_dir=env.get("MCPSIM_CACHE_DIR") or None,
            allowed_hosts=env.get("MCPSIM_ALLOWED_HOSTS", "").split(),
            allowed_origins=env.get("MCPSIM_ALLOWED_ORIGINS", "").split(),
            record_dir=env.get("MCPSIM_RECORD_DIR") or None,
            faults=env.get("MCPSIM_FAULTS") or None,
        )


def create_app(config: ServeConfig) -> Starlette:
    """Load the worlds, build the default episode, and assemble the app."""
    default = load_world(config.world)
    recorder = Recorder(config.record_dir) if config.record_dir else None
    manager = EpisodeManager(
        TemplateCache(config.cache_dir), max_episodes=config.max_episodes, ttl_seconds=config.ttl_seconds,
        on_retire=recorder.record if recorder else None,
    )
    profile = load_profile(config.faults)
    manager.set_default(default, config.seed, config.scale, profile)
    worlds = [default] + [load_world(n) for n in world_names() if n != default.name]
    interval = min(30.0, config.ttl_seconds / 2) if config.ttl_seconds else 30.0
    return build_app(worlds, manager, token=config.token, host=config.host, allowed_hosts=config.allowed_hosts,
                     allowed_origins=config.allowed_origins, reap_interval=interval, faults=profile)


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
