"""The HTTP server: MCP endpoints for agents and a JSON control plane for harnesses, in one app.

Agents see only MCP: `/episodes/{id}/mcp` (one endpoint per episode) and `/mcp` (the default
episode). Harnesses use the control plane to create, inspect and delete episodes; it can be
protected by a bearer token that the agent never sees. Episode state is keyed on the URL path,
never on MCP sessions, so both protocol eras and any load balancer reach the right episode.
"""

from __future__ import annotations

import hmac
import json
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

import anyio
import anyio.to_thread
import structlog
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from mcpsim import __version__
from mcpsim.episode import Episode, snapshot_world
from mcpsim.faults import FaultProfile, load_profile
from mcpsim.manager import EpisodeLimitReached, EpisodeManager
from mcpsim.mcp_server import build_server, http_security
from mcpsim.recording import Recorder, episode_trajectory
from mcpsim.registry import load_world, world_names
from mcpsim.scenario import GoldActionError, TaskSetupError
from mcpsim.tasks import TaskFileError
from mcpsim.templates import TemplateCache
from mcpsim.world import World

log = structlog.get_logger("mcpsim.http")

MAX_BODY_BYTES = 64 * 1024
MAX_SNAPSHOT_BYTES = 1024 * 1024 * 1024


class CreateEpisode(BaseModel):
    model_config = ConfigDict(extra="forbid")
    world: str | None = Field(None, max_length=64, description="World name; the server's default world if omitted")
    seed: int | None = Field(None, ge=0, le=2**63 - 1, description="Default 0; a task brings its own")
    scale: str | None = Field(None, max_length=32, description="Default 'default'; a task brings its own")
    task: str | None = Field(None, max_length=100, description="A task id: its seed, scale and setup are used")
    faults: str | dict[str, Any] | None = Field(
        None, description="A fault profile: none, flaky, hostile, or one written inline; default: the task's, "
                          "else the server's --faults")


class VerifyEpisode(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answer: str | None = Field(None, max_length=100_000, description="The agent's final answer to the user")


class HttpError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers


def _error(status: int, message: str, headers: dict[str, str] | None = None, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=status, headers=headers)


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
    by_name = {w.name: w for w in worlds}

    def lookup(name: str) -> World:
        try:
            return by_name[name]
        except KeyError:
            raise LookupError(f"unknown world {name!r} (this server has: {', '.join(sorted(by_name))})") from None

    manager.worlds = lookup
    security = http_security(host, allowed_hosts or [], allowed_origins or [])
    servers = {w.name: build_server(w, manager.get) for w in worlds}
    for server in servers.values():
        # Creates server.session_manager; its own Starlette app is not used.
        server.streamable_http_app(json_response=True, host=host, transport_security=security)

    mcp_endpoint = _McpDispatch(manager, servers)

    # -- control plane ---------------------------------------------------------------------

    def authorized(request: Request) -> bool:
        if token is None:
            return True
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())

    def control(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            if not authorized(request):
                return _error(401, "missing or wrong bearer token", {"WWW-Authenticate": "Bearer"})
            try:
                return await handler(request)
            except HttpError as exc:
                return _error(exc.status, exc.message, exc.headers)

        return endpoint

    def episode_of(request: Request) -> Episode:
        try:
            return manager.get(request.path_params["episode_id"])
        except LookupError as exc:
            raise HttpError(404, str(exc)) from None

    def mcp_url(request: Request, episode: Episode) -> str:
        return f"{str(request.base_url).rstrip('/')}/episodes/{episode.id}/mcp"

    def describe(request: Request, episode: Episode) -> dict[str, Any]:
        return {
            "id": episode.id,
            "mcp_url": mcp_url(request, episode),
            "world": episode.world.name,
            "world_version": episode.template_version,
            "seed": episode.seed,
            "scale": episode.scale,
            "task": episode.task_id,
            "faults": episode.faults.name if episode.faults else None,
            "calls": episode.calls,
            "clock": episode.clock().isoformat(),
            "ended": episode.ended,
            "flagged": episode.flagged,
            "flags": episode.flags,
        }

    async def read_json(request: Request) -> Any:
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                raise HttpError(413, f"request body larger than {MAX_BODY_BYTES} bytes")
        if not body:
            return {}
        try:
            return json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise HttpError(400, f"request body is not valid JSON: {exc}") from None

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "version": __version__, "episodes": len(manager),
                             "max_episodes": manager.max_episodes, "worlds": sorted(by_name)})

    @control
    async def list_worlds(request: Request) -> Response:
        return JSONResponse([{"name": w.name, "title": w.title, "version": w.version, "tools": len(w.tools),
                              "scales": sorted(w.scales)} for w in worlds])

    @control
    async def create_episode(request: Request) -> Response:
        body = await read_json(request)
        if not isinstance(body, dict):
            raise HttpError(400, "request body must be a JSON object such as {\"world\": \"retail\", \"seed\": 0}")
        try:
            spec = CreateEpisode.model_validate(body)
        except ValidationError as exc:
            return _error(422, "invalid episode request", details=json.loads(exc.json(include_url=False)))
        world_name = spec.world or (manager.default.world.name if manager.default else None)
        if world_name is None:
            raise HttpError(422, "no world given and this server has no default world")
        try:
            world = lookup(world_name)
            if spec.task is not None:
                task = manager.verifier(world.name).tasks.get(spec.task)
                for name, given, own in (("seed", spec.seed, task.seed), ("scale", spec.scale, task.scale)):
                    if given is not None and given != own:
                        raise ValueError(f"task {task.id} runs at {name} {own!r}; leave {name} out or give {own!r}")
            else:
                world.scale_params(spec.scale or "default")
            profile: Any = load_profile(spec.faults) if spec.faults is not None else (
                "task" if spec.task is not None and faults is None else faults)
            if profile is not None and profile != "task" and profile.edge_data and not world.has_edge_data:
                raise ValueError(f"world {world.name} has no edge-case data for the profile's edge_data")
        except (LookupError, ValueError, TaskFileError) as exc:
            raise HttpError(422, str(exc).strip("'\"")) from None
        try:
            episode = await anyio.to_thread.run_sync(
                manager.create, world.name, spec.seed or 0, spec.scale or "default", spec.task, profile)
        except EpisodeLimitReached as exc:
            raise HttpError(503, str(exc), {"Retry-After": "5"}) from None
        except (TaskSetupError, GoldActionError) as exc:
            raise HttpError(500, f"the task is broken: {exc}") from None
        return JSONResponse(describe(request, episode), status_code=201)

    @control
    async def list_episodes(request: Request) -> Response:
        return JSONResponse([describe(request, e) for e in manager.list()])

    @control
    async def get_episode(request: Request) -> Response:
        return JSONResponse(describe(request, episode_of(request)))

    @control
    async def delete_episode(request: Request) -> Response:
        episode_id = request.path_params["episode_id"]
        if not manager.delete(episode_id):
            raise HttpError(404, f"episode {episode_id} does not exist (it was deleted or expired)")
        return Response(status_code=204)

    @control
    async def get_state(request: Request) -> Response:
        episode = episode_of(request)
        names = request.query_params.get("tables")
        wanted = [n for n in names.split(",") if n] if names else None
        known = {t.name for t in episode.world.metadata.sorted_tables}
        if wanted and (unknown := sorted(set(wanted) - known)):
            raise HttpError(422, f"unknown tables {unknown}; this world has {sorted(known)}")
        limit_text = request.query_params.get("limit")
        try:
            limit = int(limit_text) if limit_text is not None else None
            if limit is not None and limit < 0:
                raise ValueError
        except ValueError:
            raise HttpError(422, "limit must be a non-negative integer") from None
        tables, state_hash = await anyio.to_thread.run_sync(
            lambda: (episode.tables(wanted, limit), episode.state_hash())
        )
        return JSONResponse({"id": episode.id, "world": episode.world.name, "world_version": episode.template_version,
                             "state_hash": state_hash, "tables": tables})

    @control
    async def get_changes(request: Request) -> Response:
        episode = episode_of(request)
        return JSONResponse({"id": episode.id, "changes": [c._asdict() for c in episode.changes()]})

    @control
    async def end_episode(request: Request) -> Response:
        episode = episode_of(request)
        episode.end()
        return JSONResponse(describe(request, episode))

    @control
    async def verify_episode(request: Request) -> Response:
        episode = episode_of(request)
        body = await read_json(request)
        try:
            spec = VerifyEpisode.model_validate(body)
        except ValidationError as exc:
            return _error(422, "invalid verify request", details=json.loads(exc.json(include_url=False)))
        if episode.task_id is None:
            raise HttpError(422, "this episode was not created for a task (POST /episodes with \"task\"); "
                                 "there is no rubric to grade it against")
        verifier = manager.verifier(episode.world.name)
        verdict = await anyio.to_thread.run_sync(verifier.grade, episode, episode.task_id, spec.answer)
        return JSONResponse(verdict.model_dump(mode="json"))

    @control
    async def snapshot_episode(request: Request) -> Response:
        episode = episode_of(request)
        data = await anyio.to_thread.run_sync(episode.snapshot)
        return Response(data, media_type="application/vnd.sqlite3",
                        headers={"Content-Disposition": f'attachment; filename="{episode.id}.sqlite"'})

    @control
    async def episode_trajectory_route(request: Request) -> Response:
        episode = episode_of(request)
        trajectory = await anyio.to_thread.run_sync(lambda: episode_trajectory(episode, verdict=episode.verdict))
        return JSONResponse(trajectory.model_dump(mode="json"))

    @control
    async def restore_episode(request: Request) -> Response:
        """A new episode from a snapshot's bytes (GET /episodes/{id}/snapshot), e.g. to resume a
        partial rollout."""
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/vnd.sqlite3":
            raise HttpError(415, "send the snapshot's bytes with Content-Type: application/vnd.sqlite3")
        data = b""
        async for chunk in request.stream():
            data += chunk
            if len(data) > MAX_SNAPSHOT_BYTES:
                raise HttpError(413, f"snapshot larger than {MAX_SNAPSHOT_BYTES} bytes")
        try:
            world_name = snapshot_world(data)
            episode = Episode.restore(lookup(world_name), data)
        except (ValueError, LookupError, sqlite3.Error) as exc:
            raise HttpError(422, f"not an mcpsim episode of a world this server has: {exc}") from None
        try:
            manager.add(episode)
        except EpisodeLimitReached as exc:
            episode.close()
            raise HttpError(503, str(exc), {"Retry-After": "5"}) from None
        return JSONResponse(describe(request, episode), status_code=201)

    @control
    async def fork_episode(request: Request) -> Response:
        source = episode_of(request)
        try:
            episode = manager.add(source.fork())
        except EpisodeLimitReached as exc:
            raise HttpError(503, str(exc), {"Retry-After": "5"}) from None
        return JSONResponse(describe(request, episode), status_code=201)

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

    routes = [
        Route("/health", health, methods=["GET"]),
        Route("/worlds", list_worlds, methods=["GET"]),
        Route("/episodes", create_episode, methods=["POST"]),
        Route("/episodes", list_episodes, methods=["GET"]),
        Route("/episodes/restore", restore_episode, methods=["POST"]),
        Route("/episodes/{episode_id}", get_episode, methods=["GET"]),
        Route("/episodes/{episode_id}", delete_episode, methods=["DELETE"]),
        Route("/episodes/{episode_id}/state", get_state, methods=["GET"]),
        Route("/episodes/{episode_id}/changes", get_changes, methods=["GET"]),
        Route("/episodes/{episode_id}/end", end_episode, methods=["POST"]),
        Route("/episodes/{episode_id}/fork", fork_episode, methods=["POST"]),
        Route("/episodes/{episode_id}/verify", verify_episode, methods=["POST"]),
        Route("/episodes/{episode_id}/snapshot", snapshot_episode, methods=["GET"]),
        Route("/episodes/{episode_id}/trajectory", episode_trajectory_route, methods=["GET"]),
        Route("/episodes/{episode_id}/mcp", mcp_endpoint),
        Route("/mcp", mcp_endpoint),
    ]
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
