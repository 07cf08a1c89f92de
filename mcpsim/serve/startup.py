"""A stdio server that answers `initialize` before its world is loaded.

A stdio client starts a server process per session (some per tool call) and waits for the
answer to `initialize`. Importing the MCP SDK is most of a bare SDK server's start-up; loading a
world (SQLAlchemy, SQLModel, the world's tables and tools) and its episode costs as much again.
So `mcpsim serve WORLD` answers the handshake from the world's *card* (what `initialize` says:
the server's name, title, description, version and the world's policy as instructions), kept on
disk beside the template cache, while a thread loads the world, its episode and its MCP server.
Every other request (tools/list, tools/call, resources, prompts) waits for that thread and is
then served by the world's own server (`mcpsim.serve.mcp.build_server`), its middleware
included; if loading failed, the request gets a JSON-RPC error naming the world and the reason.

A card is reused only while its *stamp* is unchanged: the world package's files (path, size,
modification time), mcpsim's version, the Python version and the modification times of the
site-packages folders on the import path (installing or removing a package changes them). A
world without a valid card is loaded before the handshake, as before, and its card written for
the next start; a card found outdated once the world loaded (a policy read from outside the
package) is rewritten, with a warning.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterator
from importlib.machinery import ModuleSpec
from pathlib import Path
from typing import Any

import anyio.to_thread
from mcp.server.caching import CacheHint
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INTERNAL_ERROR

from mcpsim import __version__
from mcpsim.serve.mcp import TOOLS_TTL_MS

CARD_KEYS = ("name", "title", "description", "instructions", "version")
"""What `initialize` answers about a server, read from the world's own server when a card is written."""

WITHOUT_WORLD = frozenset({"initialize", "server/discover", "ping"})
"""Requests answered at once (the handshake of either protocol era); notifications never wait either."""


def card_of(server: MCPServer, scales: list[str]) -> dict[str, Any]:
    """A world server's card: what `initialize` says, and the world's scale names (so an unknown
    --scale is refused before the handshake, as when the world is loaded first)."""
    return {key: getattr(server, key) for key in CARD_KEYS} | {"scales": scales}


def _stamp(module: str) -> str | None:
    """What changes when the code or data behind the world in `module` could (see the module
    docstring); None when the module cannot be found."""
    try:
        spec = importlib.util.find_spec(module)  # imports its parent packages only
    except (ImportError, ValueError):
        return None
    if spec is None or (spec.origin is None and not spec.submodule_search_locations):
        return None
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{module}\0{__version__}\0{sys.version}\0".encode())
    for folder in sys.path:
        if folder.endswith(("site-packages", "dist-packages")):  # where an install or a removal writes
            try:
                digest.update(f"{folder}\0{os.stat(folder).st_mtime_ns}\0".encode())
            except OSError:
                continue
    for root, path in _files(spec):
        stat = os.stat(path)
        digest.update(f"{os.path.relpath(path, root)}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def _files(spec: ModuleSpec) -> Iterator[tuple[str, str]]:
    """(root, path) of every file behind a module: a package's folders (its data files too), or a
    single module's file alone."""
    if not spec.submodule_search_locations:
        yield os.path.dirname(spec.origin or ""), spec.origin or ""
        return
    for root in spec.submodule_search_locations:
        for where, folders, files in os.walk(root):
            folders[:] = sorted(f for f in folders if f != "__pycache__")
            for name in sorted(files):
                yield root, os.path.join(where, name)


def _card_path(cards_dir: Path, world: str) -> Path:
    return cards_dir / f"{world}.json"


def read_card(cards_dir: Path, world: str) -> dict[str, Any] | None:
    """The world's card if one was written and its stamp still holds, else None."""
    try:
        saved = json.loads(_card_path(cards_dir, world).read_text(encoding="utf-8"))
        module, stamp, card = saved["module"], saved["stamp"], saved["card"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(card, dict) or set(card) != {*CARD_KEYS, "scales"} or _stamp(module) != stamp:
        return None
    return card


def write_card(cards_dir: Path, world: str, module: str, card: dict[str, Any]) -> None:
    """Keep `card` for the next start (atomically: a concurrent reader sees the old one or this).
    A folder that cannot be written only costs the next start its speed: logged, not raised."""
    stamp = _stamp(module)
    if stamp is None:
        return
    path = _card_path(cards_dir, world)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        cards_dir.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps({"module": module, "stamp": stamp, "card": card}), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        logging.getLogger("mcpsim").warning("world %s: its card cannot be written to %s: %s", world, path, exc)


class DeferredServer(MCPServer):
    """An MCP server that answers `initialize`, `server/discover` and `ping` from a card at once
    and every other request through the world's server once `load` (run by `start`, in a thread)
    returned it."""

    def __init__(self, card: dict[str, Any], world: str) -> None:
        super().__init__(
            **{key: card[key] for key in CARD_KEYS},
            cache_hints={"tools/list": CacheHint(ttl_ms=TOOLS_TTL_MS, scope="public")},
        )
        self.world = world
        self.card = card
        self.loaded: MCPServer | None = None
        self.failure: BaseException | None = None
        self._done = threading.Event()
        self._sdk_middleware = {type(m) for m in self.middleware}  # the SDK's own, which the world server has too
        self.middleware.append(self._gate)

    def start(self, load: Callable[[], MCPServer]) -> threading.Thread:
        """Run `load` in a thread; requests wait for it. The thread is returned to be joined."""

        def run() -> None:
            try:
                self.loaded = load()
            except BaseException as exc:  # reported now, to every waiting request, and to the caller
                self.failure = exc
                logging.getLogger("mcpsim").error("could not load world %s: %s", self.world, exc)
            finally:
                self._done.set()

        thread = threading.Thread(target=run, name=f"mcpsim-load-{self.world}", daemon=True)
        thread.start()
        return thread

    async def world_server(self) -> MCPServer:
        if not self._done.is_set():
            await anyio.to_thread.run_sync(self._done.wait)
        if self.loaded is None:
            raise MCPError(code=INTERNAL_ERROR, message=f"mcpsim could not load world {self.world}: {self.failure}")
        return self.loaded

    async def _gate(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method in WITHOUT_WORLD or ctx.method.startswith("notifications/"):
            return await call_next(ctx)
        server = await self.world_server()
        call = call_next
        for middleware in reversed(server.middleware):  # the world server's own (its transcript of refused calls)
            if type(middleware) not in self._sdk_middleware:
                call = _bind(middleware, call)
        return await call(ctx)

    # What the SDK's request handlers call, answered by the world's server.
    async def list_tools(self) -> Any:
        return await (await self.world_server()).list_tools()

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        return await (await self.world_server()).call_tool(name, arguments, context)

    async def list_resources(self) -> Any:
        return await (await self.world_server()).list_resources()

    async def list_resource_templates(self) -> Any:
        return await (await self.world_server()).list_resource_templates()

    async def read_resource(self, uri: Any, context: Any = None) -> Any:
        return await (await self.world_server()).read_resource(uri, context)

    async def list_prompts(self) -> Any:
        return await (await self.world_server()).list_prompts()

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None, context: Any = None) -> Any:
        return await (await self.world_server()).get_prompt(name, arguments, context)


def _bind(middleware: Any, call_next: CallNext) -> CallNext:
    async def call(ctx: ServerRequestContext[Any, Any]) -> HandlerResult:
        return await middleware(ctx, call_next)

    return call
