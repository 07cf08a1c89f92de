"""Many worlds, one server: worlds loaded on their first request and evicted when idle, at most
`max_loaded` at once (`mcpsim serve --lazy-worlds DIR --http`, docs/catalogue.md).

Each loaded world is a whole mcpsim app of its own (`build_app`: the control plane and the MCP
endpoints, with its own episode manager) mounted at `/w/<world>/`: `POST /w/<world>/episodes`
creates an episode whose `mcp_url` is `/w/<world>/episodes/<id>/mcp`. `GET /worlds` lists every
world the host can load, and which are loaded; `GET /health` answers without a token.

A world is loaded (compiled and its app started, in a task of the host's own) on its first
request; a world with no request for `idle_seconds` is evicted (its app shut down: its episodes
are closed), and loading one past `max_loaded` evicts the least recently used first. A world
with a request in progress is never evicted. What to load comes from `load(name) -> (World,
TaskSet)`: this module knows nothing of specs (the factory's `spec_world_loader` gives one).
Tools offers (a subset of a world's tools plus distractors) are `mcpsim.serve._offers`.

A world loads outside the host's lock: while one loads, the others and `/health` answer. With a
`sandbox` (`mcpsim serve-worlds` always has one) each world is loaded first in a child process
with CPU-time, memory and wall-clock limits (`mcpsim._sandbox`), and in the server only once
the child did so within them; a world that failed answers its requests with the reason (422 for
the sandbox's refusal) for RETRY_FAILED_SECONDS, then is tried again. The children are forked
by `multiprocessing`'s fork server, which imports the `__main__` script: a script that builds a
sandboxed host guards its main (`if __name__ == "__main__":`).
"""

from __future__ import annotations

import hmac
import json
import re
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import anyio
import structlog
from anyio.abc import TaskGroup
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.types import Receive, Scope, Send

from mcpsim._sandbox import CompileLimits, CompileRefused, check, picklable, warm_up
from mcpsim.engine import TemplateCache
from mcpsim.serve._access import HostOriginGuard, resolve_token, socket_base_url
from mcpsim.serve._app import build_app
from mcpsim.serve._buffered import _captured, _read_body, _replay, _respond
from mcpsim.serve._connections import protocol_for
from mcpsim.serve._host import EpisodeManager
from mcpsim.serve._offers import Describer, ToolOffers
from mcpsim.serve._settings import ClientLimits
from mcpsim.tasks import TaskSet
from mcpsim.world import World

log = structlog.get_logger("mcpsim.serve._worlds")

Loader = Callable[[str], tuple[World, TaskSet]]
_EPISODE_MCP = re.compile(r"^/episodes/([^/]+)/mcp/?$")
_EPISODE_FORK = re.compile(r"^/episodes/([^/]+)/fork/?$")
DEFAULT_MAX_LOADED = 16
DEFAULT_IDLE_SECONDS = 600.0
RETRY_FAILED_SECONDS = 60.0  # a world that failed to load answers with the reason this long, then is tried again


@dataclass
class _Loaded:
    name: str
    app: Starlette
    last_used: float
    in_flight: int = 0
    world: World | None = None
    offers: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # episode id -> tools shown
    # a snapshot of an offered episode (its bytes' sha256) -> the offer, which its restore keeps
    snapshot_offers: OrderedDict[str, list[dict[str, Any]]] = field(default_factory=OrderedDict)
    ready: anyio.Event = field(default_factory=anyio.Event)
    stop: anyio.Event = field(default_factory=anyio.Event)
    closed: anyio.Event = field(default_factory=anyio.Event)


class WorldHost:
    """The ASGI app hosting the worlds `names` lazily (see the module docstring)."""

    def __init__(
        self,
        names: list[str],
        load: Loader,
        *,
        templates: TemplateCache,
        token: str | None = None,
        no_auth: bool = False,
        host: str = "127.0.0.1",
        max_loaded: int = DEFAULT_MAX_LOADED,
        idle_seconds: float = DEFAULT_IDLE_SECONDS,
        reap_interval: float = 5.0,
        app_options: dict[str, Any] | None = None,
        clock: Callable[[], float] = time.monotonic,
        describe: Describer | None = None,
        sandbox: CompileLimits | dict[str, Any] | None = None,
        episode_limits: dict[str, Any] | None = None,
    ) -> None:
        if max_loaded < 1:
            raise ValueError("max_loaded must be at least 1")
        self.names = sorted(names)
        self.load = load
        # load each world in a child within these limits first (`_sandbox`; a dict: CompileLimits' fields)
        self.sandbox = CompileLimits(**sandbox) if isinstance(sandbox, dict) else sandbox
        self._sandboxed = picklable(load) if sandbox is not None else None
        self.templates = templates
        self.token = resolve_token(token, no_auth)
        self.no_auth = no_auth
        self.host = host
        self.max_loaded = max_loaded
        self.idle_seconds = idle_seconds
        self.reap_interval = reap_interval
        self.app_options = app_options or {}
        self.episode_limits = episode_limits or {}  # each world's EpisodeManager's (max_bytes_per_episode...)
        self.clock = clock
        self.describe = describe
        self.tool_offers = ToolOffers(self.names, describe, self._authorized, max_loaded, vet=self._vetted)
        self.loaded: dict[str, _Loaded] = {}
        self.loading: dict[str, anyio.Event] = {}  # worlds being loaded (set when done, either way)
        self.failed: dict[str, tuple[float, bool, str]] = {}  # world -> (when, refused by the sandbox, why)
        self.loads = 0  # worlds loaded so far (a world loaded again after eviction counts again)
        self.evictions = 0
        self._lock = anyio.Lock()
        self._tg: TaskGroup | None = None
        self.app = Starlette(
            routes=[
                Route("/health", self.health, methods=["GET"]),
                Route("/worlds", self.list_worlds, methods=["GET"]),
                Mount("/w/{world}", app=self.dispatch),
            ],
            lifespan=self.lifespan,
            middleware=[  # Host and Origin on every route, as on each world's own app
                Middleware(
                    HostOriginGuard,
                    allowed_hosts=self.app_options.get("allowed_hosts") or (),
                    allowed_origins=self.app_options.get("allowed_origins") or (),
                    public_url=self.app_options.get("public_url"),
                )
            ],
        )
        self.app.state.token = self.token
        self.app.state.host = self
        self.app.state.http_protocol = protocol_for(self.app_options.get("client_limits") or ClientLimits())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)

    # -- lifecycle --------------------------------------------------------------------------------

    @asynccontextmanager
    async def lifespan(self, _app: Starlette) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._reaper)
            if self._sandboxed is not None:  # the sandbox's fork server, started ahead of the first load
                tg.start_soon(partial(anyio.to_thread.run_sync, warm_up, self._sandboxed))
            try:
                yield
            finally:
                for entry in list(self.loaded.values()):
                    entry.stop.set()
                with anyio.move_on_after(30):
                    for entry in list(self.loaded.values()):
                        await entry.closed.wait()
                tg.cancel_scope.cancel()

    async def _run(self, entry: _Loaded) -> None:
        """A loaded world's app, from its start to its shutdown, in one task (its lifespan's
        task groups must end in the task that began them)."""
        try:
            async with entry.app.router.lifespan_context(entry.app):
                entry.ready.set()
                await entry.stop.wait()
        finally:
            entry.ready.set()
            entry.closed.set()

    async def _reaper(self) -> None:
        while True:
            await anyio.sleep(self.reap_interval)
            cutoff = self.clock() - self.idle_seconds
            for entry in list(self.loaded.values()):
                if entry.in_flight == 0 and entry.last_used < cutoff:
                    await self._evict(entry, "idle")

    async def _evict(self, entry: _Loaded, reason: str) -> None:
        if self.loaded.get(entry.name) is not entry:
            return
        del self.loaded[entry.name]
        entry.stop.set()
        await entry.closed.wait()
        self.evictions += 1
        log.info("world evicted", world=entry.name, reason=reason)

    async def _entry(self, name: str, public_base: str) -> _Loaded:
        """The loaded world, loading it first if need be: outside the host's lock (other worlds
        and `/health` go on meanwhile), once however many requests ask for it at the same time."""
        while True:
            async with self._lock:
                entry = self.loaded.get(name)
                if entry is not None:
                    entry.in_flight += 1  # before the lock is released: the reaper skips it from now on
                    break
                self._raise_if_failed(name)
                loading = self.loading.get(name)
                if loading is None:
                    self.loading[name] = loading = anyio.Event()
                    mine = True
                else:
                    mine = False
            if mine:
                entry = await self._load(name, public_base, loading)
                break
            await loading.wait()  # another request loads it: its outcome, on the next turn
        await entry.ready.wait()
        return entry

    def _raise_if_failed(self, name: str) -> None:
        failed = self.failed.get(name)
        if failed is not None and self.clock() - failed[0] < RETRY_FAILED_SECONDS:
            raise (CompileRefused if failed[1] else RuntimeError)(failed[2])
        self.failed.pop(name, None)

    async def _vetted(self, name: str) -> bool:
        """Whether world `name` may be loaded in this process (for its tools as a distractor): it
        loads in the sandbox (if the host has one) now, and has not failed to lately."""
        try:
            self._raise_if_failed(name)
            if self.sandbox is not None and self._sandboxed is not None:
                await check(self._sandboxed, name, self.sandbox)
        except (CompileRefused, RuntimeError) as exc:
            self.failed.setdefault(name, (self.clock(), isinstance(exc, CompileRefused), str(exc)))
            return False
        return True

    async def _load(self, name: str, public_base: str, loading: anyio.Event) -> _Loaded:
        """Load a world (in the sandbox first, if the host has one) and start its app."""
        try:
            if self.sandbox is not None and self._sandboxed is not None:
                await check(self._sandboxed, name, self.sandbox)
            world, tasks = await anyio.to_thread.run_sync(self.load, name)
        except Exception as exc:
            self.failed[name] = (self.clock(), isinstance(exc, CompileRefused), str(exc))
            raise
        finally:
            del self.loading[name]
            loading.set()
        async with self._lock:
            idle = sorted((e for e in self.loaded.values() if e.in_flight == 0), key=lambda e: e.last_used)
            while len(self.loaded) >= self.max_loaded and idle:
                await self._evict(idle.pop(0), "bound")
            entry = _Loaded(name, self._world_app(world, tasks, f"{public_base}/w/{name}"), self.clock(), world=world)
            self.loaded[name] = entry
            self.loads += 1
            assert self._tg is not None, "the host's lifespan has not started"
            self._tg.start_soon(self._run, entry)
            log.info("world loaded", world=name, loaded=len(self.loaded))
            entry.in_flight += 1
        return entry

    def _world_app(self, world: World, tasks: TaskSet, public_url: str) -> Starlette:
        manager = EpisodeManager(
            self.templates, worlds=lambda _name: world, tasks=lambda _name: tasks, **self.episode_limits
        )
        return build_app(
            [world],
            manager,
            token=self.token,
            no_auth=self.no_auth,
            host=self.host,
            public_url=public_url,
            **self.app_options,
        )

    # -- routes -----------------------------------------------------------------------------------

    async def dispatch(self, scope: Scope, receive: Receive, send: Send) -> None:
        name = scope["path_params"]["world"]
        if name not in self.names:
            response = JSONResponse({"error": f"unknown world {name!r}", "worlds": len(self.names)}, status_code=404)
            await response(scope, receive, send)
            return
        if name not in self.loaded and not self._authorized(scope.get("headers", [])):
            # only the operator's token loads a world (an episode's URL alone does not: its world
            # was evicted with its episodes)
            answer = JSONResponse({"error": f"world {name!r} is not loaded; loading takes the token"}, status_code=404)
            await answer(scope, receive, send)
            return
        try:
            entry = await self._entry(name, socket_base_url(scope, self.host))
        except CompileRefused as exc:  # the sandbox's refusal: the world cannot be served as it is
            log.warning("world refused", world=name, error=str(exc))
            answer = JSONResponse({"error": f"world {name!r} cannot be served: {exc}"}, status_code=422)
            await answer(scope, receive, send)
            return
        except Exception as exc:  # a spec that no longer compiles: the reason, not a bare 500
            log.warning("world failed to load", world=name, error=str(exc))
            answer = JSONResponse({"error": f"world {name!r} failed to load: {exc}"}, status_code=500)
            await answer(scope, receive, send)
            return
        try:
            inner = dict(scope)
            inner["path"] = scope["path"][len(f"/w/{name}") :] or "/"
            inner["raw_path"] = inner["path"].encode()
            inner["root_path"] = ""
            mcp = _EPISODE_MCP.match(inner["path"])
            creating = inner["method"] == "POST" and inner["path"].rstrip("/") == "/episodes"
            offered = mcp is not None and mcp.group(1) in entry.offers and inner["method"] == "POST"
            fork = _EPISODE_FORK.match(inner["path"]) if inner["method"] == "POST" else None
            if fork is not None and fork.group(1) in entry.offers:  # a fork keeps its parent's offer
                # taken before the fork is made: the parent may be deleted (and its offer dropped)
                # while the fork is under way, and the child must never come out with every tool
                parent_offer = entry.offers[fork.group(1)]
                status, headers, made = await _captured(entry.app, inner, receive)
                if status == 201:
                    entry.offers[json.loads(made)["id"]] = parent_offer
                await _respond(send, status, headers, made)
                return
            if await self.tool_offers.snapshot_or_restore(entry, inner, receive, send):
                return
            if not creating and not offered:
                await entry.app(inner, receive, send)
                return
            try:
                body = await _read_body(receive)
            except ValueError as exc:
                await JSONResponse({"error": str(exc)}, status_code=413)(scope, receive, send)
                return
            try:
                data = json.loads(body)
            except ValueError:
                data = None
            replay = _replay(body, receive)
            if creating and isinstance(data, dict) and "tools" in data:
                await self.tool_offers.create(entry, data, inner, replay, send)
            elif offered and isinstance(data, dict) and data.get("method") == "tools/list":
                assert mcp is not None
                await self.tool_offers.list_tools(entry, entry.offers[mcp.group(1)], inner, replay, send)
            elif (
                offered
                and (refusal := self.tool_offers.refused_call(entry, mcp.group(1) if mcp else "", data)) is not None
            ):
                await _respond(send, *refusal)
            else:
                await entry.app(inner, replay, send)
        finally:
            entry.in_flight -= 1
            entry.last_used = self.clock()

    def _authorized(self, headers: list[tuple[bytes, bytes]]) -> bool:
        if self.token is None:
            return True
        given = dict(headers).get(b"authorization", b"").decode("latin-1")
        scheme, _, value = given.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(), self.token.encode())

    async def health(self, _request: Request) -> Response:
        return JSONResponse({"status": "ok", "worlds": len(self.names), "loaded": len(self.loaded)})

    async def list_worlds(self, request: Request) -> Response:
        if not self._authorized(request.scope.get("headers", [])):
            return JSONResponse({"error": "missing or wrong bearer token"}, status_code=401)
        return JSONResponse(
            {
                "worlds": self.names,
                "loaded": sorted(self.loaded),
                "loading": sorted(self.loading),
                "failed": {name: why for name, (_, _, why) in sorted(self.failed.items())},
                "max_loaded": self.max_loaded,
                "idle_seconds": self.idle_seconds,
                "loads": self.loads,
                "evictions": self.evictions,
            }
        )
