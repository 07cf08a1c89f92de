"""A stdio server that answers `initialize` before its world is loaded.

A stdio client starts a server process per session (some per tool call) and waits for the
answer to `initialize`. Importing the MCP SDK is most of a bare SDK server's start-up; loading a
world (SQLAlchemy, SQLModel, the world's tables and tools) and its episode costs as much again.
So `mcpsim serve WORLD` answers the handshake from the world's *card* (what `initialize` says:
the server's name, title, description, version and the world's policy as instructions), kept on
disk beside the template cache, while a thread loads the world, its episode and its MCP server.
Every other request (tools/list, tools/call, resources, prompts) waits for that thread and is
then served by the world's own server (`mcpsim.serve._mcp.build_server`), its middleware
included; if loading failed, the request gets a JSON-RPC error naming the world and the reason.

A card is reused only while its *stamp* is unchanged: the world package's files (path, size,
modification time), mcpsim's own source files (path, size, modification time of every `.py`
file in the mcpsim package: an editable install's edits change no site-packages folder, and
`__version__` stays put), mcpsim's version, the Python version and the modification times of the
site-packages folders on the import path (installing or removing a package changes them). The
stamp costs a stat per file, a few milliseconds (benchmarks/startup.py measures start-up). A
world without a valid card is loaded before the handshake, as before, and its card written for
the next start; a card found outdated once the world loaded (a policy read from outside the
package) is rewritten, with a warning.

A card also keeps what `--task` and `--faults` may name (the world's task ids, read from its
package's task files when the card is written, and the built-in fault profiles), so that
`usage_problem` refuses a bad one before the handshake, as when the world is loaded first.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import sys
import tempfile
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

import mcpsim
from mcpsim import __version__
from mcpsim.serve._mcp import TOOLS_TTL_MS

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
    digest.update(b"\0mcpsim\0")
    for path, size, mtime in own_sources(MCPSIM_DIR):
        digest.update(f"{path}\0{size}\0{mtime}\0".encode())
    return digest.hexdigest()


MCPSIM_DIR = os.path.dirname(os.path.abspath(mcpsim.__file__))


def own_sources(package_dir: str) -> Iterator[tuple[str, int, int]]:
    """(path relative to `package_dir`, size, modification time in ns) of every `.py` file in
    the package folder `package_dir` (mcpsim's own code, for the stamp), in a fixed order."""
    for where, folders, files in os.walk(package_dir):
        folders[:] = sorted(f for f in folders if f != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(where, name)
                try:
                    stat = os.stat(path)
                except OSError:  # removed while walked
                    continue
                yield os.path.relpath(path, package_dir), stat.st_size, stat.st_mtime_ns


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


def _usage(world: str) -> dict[str, list[str] | None]:
    """What `--task` and `--faults` may name, read once the world is loaded (these imports are
    done by then): the world's task ids and the built-in fault profiles; None where unknown."""
    from mcpsim.engine import BUILTIN
    from mcpsim.tasks import load_tasks

    usage: dict[str, list[str] | None] = {"tasks": None, "faults": list(BUILTIN)}
    try:
        usage["tasks"] = [t.id for t in load_tasks(world).tasks]
    except Exception:  # a world without tasks, or with broken ones: --task is left to the load to check
        pass
    return usage


FAULT_FILE_SUFFIXES = (".yaml", ".yml", ".json")


def usage_problem(
    cards_dir: Path, world: str, *, task_id: str | None, faults_spec: str | None
) -> tuple[str, str] | None:
    """(the option, the reason) if the world's valid card shows `--task` or `--faults` cannot
    be served, else None (also when the card does not know: the load checks it then). Only
    cheap checks: a task id among the world's, a fault profile that is a built-in name, an
    existing profile file or inline JSON that parses (its fields are checked by the load)."""
    try:
        saved = json.loads(_card_path(cards_dir, world).read_text(encoding="utf-8"))
        usage, module, stamp = saved["usage"], saved["module"], saved["stamp"]
        tasks, faults = usage["tasks"], usage["faults"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if (task_id is None or tasks is None) and (faults_spec is None or faults is None):
        return None
    if _stamp(module) != stamp:
        return None
    if faults_spec is not None and faults is not None:
        if faults_spec.lstrip().startswith("{"):
            try:
                json.loads(faults_spec)
            except ValueError as exc:
                return "--faults", f"inline fault profile: {exc}"
        elif faults_spec not in faults and not (
            Path(faults_spec).suffix in FAULT_FILE_SUFFIXES and Path(faults_spec).exists()
        ):
            return "--faults", (
                f"unknown fault profile {faults_spec!r}: use {', '.join(faults)}, a YAML file or inline JSON"
            )
    if task_id is not None and tasks is not None and task_id not in tasks:
        hint = f" (known: {', '.join(tasks[:8])}{', ...' if len(tasks) > 8 else ''})" if tasks else " (none)"
        return "--task", f"unknown task {task_id!r}{hint}"
    return None


def write_card(cards_dir: Path, world: str, module: str, card: dict[str, Any]) -> None:
    """Keep `card` for the next start (atomically: a concurrent reader sees the old one or this).
    A folder that cannot be written only costs the next start its speed: logged, not raised."""
    stamp = _stamp(module)
    if stamp is None:
        return
    path = _card_path(cards_dir, world)
    usage = _usage(world)
    tmp: str | None = None
    try:
        cards_dir.mkdir(parents=True, exist_ok=True)
        # a temp file of its own (not named by pid: processes in other containers sharing the cache
        # volume can have the same pid)
        fd, tmp = tempfile.mkstemp(dir=cards_dir, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"module": module, "stamp": stamp, "card": card, "usage": usage}, f)
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        logging.getLogger("mcpsim").warning("world %s: its card cannot be written to %s: %s", world, path, exc)
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


class WorldCards:
    """The world cards kept in one folder, as a stdio start-up uses them: the card to answer
    `initialize` from, the usage errors it can show before the handshake, and the card kept
    current for the next start once the world has loaded."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def read(self, world: str) -> dict[str, Any] | None:
        return read_card(self.folder, world)

    def usage_problem(self, world: str, *, task_id: str | None, faults_spec: str | None) -> tuple[str, str] | None:
        return usage_problem(self.folder, world, task_id=task_id, faults_spec=faults_spec)

    def keep(self, world: str, server: MCPServer, scales: list[str], answered_from: dict[str, Any] | None) -> None:
        """Write the world's card for the next start if it is missing or differs from the one
        `initialize` was answered from (an installed world's only: a spec world is compiled in
        the process anyway)."""
        from importlib.metadata import entry_points  # after the handshake: off the start-up path

        from mcpsim.world import GROUP

        card = card_of(server, sorted(scales))
        if card == answered_from:
            return
        if answered_from is not None:  # the world changed in a way its files' stamp did not show
            logging.getLogger("mcpsim").warning(
                "world %s: initialize was answered from an outdated card; it is rewritten for the next start", world
            )
        module = next((ep.module for ep in entry_points(group=GROUP) if ep.name == world), None)
        if module is not None:
            write_card(self.folder, world, module, card)


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
