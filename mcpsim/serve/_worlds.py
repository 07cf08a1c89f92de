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
"""

from __future__ import annotations

import hashlib
import hmac
import json
import random
import re
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import structlog
from anyio.abc import TaskGroup
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.types import Message, Receive, Scope, Send

from mcpsim.engine import TemplateCache
from mcpsim.serve._access import HostOriginGuard, resolve_token, socket_base_url
from mcpsim.serve._host import EpisodeManager
from mcpsim.tasks import TaskSet
from mcpsim.world import World

log = structlog.get_logger("mcpsim.serve._worlds")

Loader = Callable[[str], tuple[World, TaskSet]]
Describer = Callable[[str], World]  # a world for its tools only (no tasks), for distractors
_EPISODE_MCP = re.compile(r"^/episodes/([^/]+)/mcp/?$")
_EPISODE_FORK = re.compile(r"^/episodes/([^/]+)/fork/?$")
_EPISODE_SNAPSHOT = re.compile(r"^/episodes/([^/]+)/snapshot/?$")
SNAPSHOT_OFFERS = 4096  # offers remembered for snapshots taken of offered episodes, most recent kept
DISTRACTOR_WORLDS = 3  # distractors are drawn from this many other worlds
DEFAULT_MAX_LOADED = 16
DEFAULT_IDLE_SECONDS = 600.0


class Offer(BaseModel):
    """The tools an episode's agent is shown (`"tools"` in `POST /w/<world>/episodes`): the
    world's tools named in `only` (all if None) plus `distractors` tools of other worlds, in an
    order fixed by `seed` (the same offer always lists the same tools in the same order). Only
    the world's offered tools can be called: a call to any other is refused (`_refused_call`)."""

    model_config = ConfigDict(extra="forbid")
    only: list[str] | None = Field(None, max_length=500)
    distractors: int = Field(0, ge=0, le=200)
    seed: int = Field(0, ge=0)


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
    ) -> None:
        if max_loaded < 1:
            raise ValueError("max_loaded must be at least 1")
        self.names = sorted(names)
        self.load = load
        self.templates = templates
        self.token = resolve_token(token, no_auth)
        self.no_auth = no_auth
        self.host = host
        self.max_loaded = max_loaded
        self.idle_seconds = idle_seconds
        self.reap_interval = reap_interval
        self.app_options = app_options or {}
        self.clock = clock
        self.describe = describe
        self._tool_defs: dict[str, list[dict[str, Any]]] = {}  # world -> its tools as tools/list shows them
        self.loaded: dict[str, _Loaded] = {}
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

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)

    # -- lifecycle --------------------------------------------------------------------------------

    @asynccontextmanager
    async def lifespan(self, _app: Starlette) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._reaper)
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
        async with self._lock:
            entry = self.loaded.get(name)
            if entry is None:
                idle = sorted((e for e in self.loaded.values() if e.in_flight == 0), key=lambda e: e.last_used)
                while len(self.loaded) >= self.max_loaded and idle:
                    await self._evict(idle.pop(0), "bound")
                world, tasks = await anyio.to_thread.run_sync(self.load, name)
                entry = _Loaded(
                    name, self._world_app(world, tasks, f"{public_base}/w/{name}"), self.clock(), world=world
                )
                self.loaded[name] = entry
                self.loads += 1
                assert self._tg is not None, "the host's lifespan has not started"
                self._tg.start_soon(self._run, entry)
                log.info("world loaded", world=name, loaded=len(self.loaded))
            entry.in_flight += 1  # before the lock is released: the reaper skips it from now on
        await entry.ready.wait()
        return entry

    def _world_app(self, world: World, tasks: TaskSet, public_url: str) -> Starlette:
        from mcpsim.serve._app import build_app  # the app module imports the MCP SDK: only when a world loads

        manager = EpisodeManager(self.templates, worlds=lambda _name: world, tasks=lambda _name: tasks)
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
            if await self._snapshot_or_restore(entry, inner, receive, send):
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
                await self._create(entry, data, inner, replay, send)
            elif offered and isinstance(data, dict) and data.get("method") == "tools/list":
                assert mcp is not None
                await self._list_tools(entry, entry.offers[mcp.group(1)], inner, replay, send)
            elif offered and (refusal := self._refused_call(entry, mcp.group(1) if mcp else "", data)) is not None:
                await _respond(send, *refusal)
            else:
                await entry.app(inner, replay, send)
        finally:
            entry.in_flight -= 1
            entry.last_used = self.clock()

    # -- offers: a subset of the world's tools plus distractors ------------------------------------

    async def _snapshot_or_restore(self, entry: _Loaded, inner: Scope, receive: Receive, send: Send) -> bool:
        """A snapshot of an offered episode, and its restore: the restored episode keeps the
        offer (the snapshot's bytes, by their digest, name it), so it never comes back with every
        tool. True when the request was answered here."""
        path, method = inner["path"], inner["method"]
        snapshot = _EPISODE_SNAPSHOT.match(path) if method == "GET" else None
        if snapshot is not None and snapshot.group(1) in entry.offers:
            offer = entry.offers[snapshot.group(1)]
            status, headers, data = await _captured(entry.app, inner, receive)
            if status == 200:
                entry.snapshot_offers[hashlib.sha256(data).hexdigest()] = offer
                while len(entry.snapshot_offers) > SNAPSHOT_OFFERS:
                    entry.snapshot_offers.popitem(last=False)
            await _respond(send, status, headers, data)
            return True
        if not (method == "POST" and path.rstrip("/") == "/episodes/restore" and entry.snapshot_offers):
            return False
        digest = hashlib.sha256()

        async def hashing() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                digest.update(message.get("body", b""))
            return message

        status, headers, made = await _captured(entry.app, inner, hashing)
        kept = entry.snapshot_offers.get(digest.hexdigest())
        if status == 201 and kept is not None:
            entry.offers[json.loads(made)["id"]] = kept
        await _respond(send, status, headers, made)
        return True

    async def _create(self, entry: _Loaded, data: dict[str, Any], scope: Scope, receive: Receive, send: Send) -> None:
        """An episode created with a tools offer: the offer taken out of the request, kept for
        the episode's tools/list, and its names added to the answer. Only with the token: an
        anonymous caller learns nothing of the world's tools and makes the server compile nothing."""
        if not self._authorized(scope.get("headers", [])):
            await JSONResponse({"error": "the control plane requires the bearer token"}, status_code=401)(
                scope, receive, send
            )
            return
        try:
            offer = Offer.model_validate(data.pop("tools"))
            tools = await self._offered(entry, offer)
        except (ValidationError, ValueError) as exc:
            await JSONResponse({"error": f"invalid tools offer: {exc}"}, status_code=422)(scope, receive, send)
            return
        status, headers, answer = await _captured(entry.app, scope, _replay(json.dumps(data).encode(), receive))
        if status == 201:
            created = json.loads(answer)
            manager = entry.app.state.manager
            for gone in [i for i in entry.offers if i not in manager]:  # deleted or expired episodes
                del entry.offers[gone]
            entry.offers[created["id"]] = tools
            answer = json.dumps(created | {"tools": [t["name"] for t in tools]}).encode()
        await _respond(send, status, headers, answer)

    async def _list_tools(
        self, entry: _Loaded, tools: list[dict[str, Any]], scope: Scope, receive: Receive, send: Send
    ) -> None:
        """The world server's answer to tools/list with the offered tools in place of its own."""
        status, headers, answer = await _captured(entry.app, scope, receive)
        try:
            listed = json.loads(answer)
        except ValueError:
            listed = None
        if isinstance(listed, dict) and isinstance(listed.get("result"), dict):
            listed["result"]["tools"] = tools
            listed["result"].pop("nextCursor", None)
            answer = json.dumps(listed).encode()
        await _respond(send, status, headers, answer)

    def _refused_call(
        self, entry: _Loaded, episode_id: str, data: Any
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes] | None:
        """The answer to a tools/call of a tool the episode's offer does not let it use (a world
        tool left out of `only`, or a distractor), or None to let the world answer. The call is
        refused before it reaches the world's tool, recorded in the episode's transcript like any
        refused call, and changes nothing; the agent reads a tool error (a business error, not a
        protocol one)."""
        usable = {t["name"] for t in entry.offers.get(episode_id, []) if entry.world and t["name"] in entry.world.tools}
        messages = data if isinstance(data, list) else [data]
        calls = [m for m in messages if isinstance(m, dict) and m.get("method") == "tools/call"]
        params: list[dict[str, Any]] = [p if isinstance(p := m.get("params"), dict) else {} for m in calls]
        hidden = [(m, p) for m, p in zip(calls, params, strict=True) if str(p.get("name")) not in usable]
        if not hidden:
            return None
        json_type = [(b"content-type", b"application/json")]
        if isinstance(data, list):  # a batch is all or nothing: none of it runs
            text = "a batch may not call a tool the episode's offer leaves out"
            return 400, json_type, json.dumps({"error": text}).encode()
        [(message, call)] = hidden
        name, arguments = str(call.get("name")), call.get("arguments")
        text = f"Tool {name!r} is not offered in this episode; nothing was done."
        try:
            entry.app.state.manager.get(episode_id).refuse(name, arguments, text)
        except LookupError:
            return None  # the episode is gone: the world's own server says so
        result = {"content": [{"type": "text", "text": text}], "isError": True}
        return 200, json_type, json.dumps({"jsonrpc": "2.0", "id": message.get("id"), "result": result}).encode()

    async def _offered(self, entry: _Loaded, offer: Offer) -> list[dict[str, Any]]:
        assert entry.world is not None
        own = await self._tools_of(entry.name, entry.world)
        names = {t["name"] for t in own}
        if offer.only is not None:
            unknown = sorted(set(offer.only) - names)
            if unknown:
                raise ValueError(f"world {entry.name} has no tool {', '.join(unknown)}")
            own = [t for t in own if t["name"] in offer.only]
        rng = random.Random(f"{offer.seed}:{entry.name}")
        pool: list[dict[str, Any]] = []
        if offer.distractors:
            if self.describe is None:
                raise ValueError("this server offers no distractors")
            others = [n for n in self.names if n != entry.name]
            for other in rng.sample(others, min(DISTRACTOR_WORLDS, len(others))):
                if other not in self._tool_defs:
                    world = await anyio.to_thread.run_sync(self.describe, other)
                    await self._tools_of(other, world)
                pool += [t for t in self._tool_defs.get(other, []) if t["name"] not in names]
            pool = list({t["name"]: t for t in pool}.values())
        distractors = rng.sample(pool, min(offer.distractors, len(pool)))
        key = f"{offer.seed}:{entry.name}:"
        return sorted([*own, *distractors], key=lambda t: hashlib.sha256((key + t["name"]).encode()).hexdigest())

    async def _tools_of(self, name: str, world: World) -> list[dict[str, Any]]:
        """A world's tools exactly as its MCP server lists them."""
        if name not in self._tool_defs:
            from mcpsim.serve._mcp import build_server

            listed = await build_server(world, _no_episode).list_tools()
            self._tool_defs[name] = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed]
            if len(self._tool_defs) > 4 * self.max_loaded + 64:
                del self._tool_defs[next(iter(self._tool_defs))]
        return self._tool_defs[name]

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
                "max_loaded": self.max_loaded,
                "idle_seconds": self.idle_seconds,
                "loads": self.loads,
                "evictions": self.evictions,
            }
        )


def _no_episode(_episode_id: str | None) -> Any:
    raise LookupError("a distractor's server serves no episode")


MAX_BODY = 1 << 20  # an episode request or a JSON-RPC message read whole: at most 1 MiB


async def _read_body(receive: Receive) -> bytes:
    body = bytearray()
    while len(body) <= MAX_BODY:
        message = await receive()
        if message["type"] != "http.request":
            break
        body += message.get("body", b"")
        if not message.get("more_body"):
            return bytes(body)
    raise ValueError("request body too large or cut short")


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that hands out `body` (read already) first, then whatever the client sends next
    (its disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _captured(app: Any, scope: Scope, receive: Receive) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """An app's whole response (JSON responses: small and complete)."""
    status, headers, chunks = 500, [], []

    async def send(message: Message) -> None:
        nonlocal status, headers
        if message["type"] == "http.response.start":
            status, headers = message["status"], list(message.get("headers", []))
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    return status, headers, b"".join(chunks)


async def _respond(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    kept = [(k, v) for k, v in headers if k.lower() != b"content-length"]
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*kept, (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
