"""Tools offers of the world host: an episode's agent shown a subset of its world's tools plus
distractor tools of other worlds (`"tools"` in `POST /w/<world>/episodes`), the offer kept through
the episode's forks and its snapshots' restores, and calls outside it refused."""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import anyio
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.types import Message, Receive, Scope, Send

from mcpsim.serve._buffered import _captured, _replay, _respond
from mcpsim.serve._mcp import build_server
from mcpsim.world import World

Describer = Callable[[str], World]  # a world for its tools only (no tasks), for distractors
_EPISODE_SNAPSHOT = re.compile(r"^/episodes/([^/]+)/snapshot/?$")
SNAPSHOT_OFFERS = 4096  # offers remembered for snapshots taken of offered episodes, most recent kept
DISTRACTOR_WORLDS = 3  # distractors are drawn from this many other worlds


class Offer(BaseModel):
    """The tools an episode's agent is shown (`"tools"` in `POST /w/<world>/episodes`): the
    world's tools named in `only` (all if None) plus `distractors` tools of other worlds, in an
    order fixed by `seed` (the same offer always lists the same tools in the same order). Only
    the world's offered tools can be called: a call to any other is refused (`ToolOffers.refused_call`)."""

    model_config = ConfigDict(extra="forbid")
    only: list[str] | None = Field(None, max_length=500)
    distractors: int = Field(0, ge=0, le=200)
    seed: int = Field(0, ge=0)


class OfferingWorld(Protocol):
    """What the offers read and keep of a world the host has loaded (`mcpsim.serve._worlds._Loaded`)."""

    name: str
    app: Starlette
    world: World | None
    offers: dict[str, list[dict[str, Any]]]  # episode id -> tools shown
    snapshot_offers: OrderedDict[str, list[dict[str, Any]]]  # a snapshot's sha256 -> the offer its restore keeps


class ToolOffers:
    """The offers of a world host's episodes (see Offer), over the worlds `names` it can load:
    `describe` gives a world's tools for distractors (once `vet`, if given, says the world may be
    loaded in this process; a world it refuses is no distractor), `authorized` checks a request's
    headers for the operator's token. Tool definitions are cached, for about `4 * max_loaded` worlds."""

    def __init__(
        self,
        names: list[str],
        describe: Describer | None,
        authorized: Callable[[list[tuple[bytes, bytes]]], bool],
        max_loaded: int,
        vet: Callable[[str], Awaitable[bool]] | None = None,
    ) -> None:
        self.names = names
        self.describe = describe
        self.vet = vet
        self.authorized = authorized
        self.max_loaded = max_loaded
        self._tool_defs: dict[str, list[dict[str, Any]]] = {}  # world -> its tools as tools/list shows them

    async def snapshot_or_restore(self, entry: OfferingWorld, inner: Scope, receive: Receive, send: Send) -> bool:
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

    async def create(
        self, entry: OfferingWorld, data: dict[str, Any], scope: Scope, receive: Receive, send: Send
    ) -> None:
        """An episode created with a tools offer: the offer taken out of the request, kept for
        the episode's tools/list, and its names added to the answer. Only with the token: an
        anonymous caller learns nothing of the world's tools and makes the server compile nothing."""
        if not self.authorized(scope.get("headers", [])):
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

    async def list_tools(
        self, entry: OfferingWorld, tools: list[dict[str, Any]], scope: Scope, receive: Receive, send: Send
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

    def refused_call(
        self, entry: OfferingWorld, episode_id: str, data: Any
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

    async def _offered(self, entry: OfferingWorld, offer: Offer) -> list[dict[str, Any]]:
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
                    if self.vet is not None and not await self.vet(other):
                        continue
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
            listed = await build_server(world, _no_episode).list_tools()
            self._tool_defs[name] = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed]
            if len(self._tool_defs) > 4 * self.max_loaded + 64:
                del self._tool_defs[next(iter(self._tool_defs))]
        return self._tool_defs[name]


def _no_episode(_episode_id: str | None) -> Any:
    raise LookupError("a distractor's server serves no episode")
