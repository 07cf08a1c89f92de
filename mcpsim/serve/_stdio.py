"""stdio serving of an episode kept in a file, for clients that start a server process per call.

Some MCP clients (langchain-mcp-adapters' default `get_tools()`, inspect_ai's `mcp_tools` used
outside `mcp_connection`) launch a new stdio server process for every tool call. With the usual
in-memory episode each process starts from the template again and every write is lost.
`mcpsim serve WORLD --episode PATH` keeps the episode in PATH (a plain mcpsim episode database,
which `mcpsim verify --snapshot PATH` grades) instead: the first process creates it, every later
one attaches to it, and each call runs under an exclusive lock on `PATH.lock`: load the file if
another process changed it, run the call in memory, write the database back atomically (a
temporary file renamed over PATH), release. Concurrent processes therefore serialise their calls
and never lose one another's writes.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mcpsim.engine import CallResult, Episode, connect, read_meta
from mcpsim.world import ToolSpec, World


class EpisodeFileError(ValueError):
    """The file is not an episode this server may attach to (another world, seed, scale, task or
    world version, or not an episode database at all)."""


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock between processes on `path` (its sidecar `PATH.lock`), blocking."""
    with open(f"{path}.lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _digest(data: bytes) -> bytes:
    """What identifies a state of the file: its content (an inode, an mtime or a size can repeat
    across two writes by other processes within one timestamp tick)."""
    return hashlib.blake2b(data, digest_size=16).digest()


def _write(path: Path, data: bytes) -> bytes:
    """Write `data` to `path` atomically (readers see the old file or the new one, whole)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return _digest(data)


class FileEpisode(Episode):
    """An episode whose state lives in a file shared by many processes. Tool calls (and refused
    calls) run under the file's lock on the file's latest state and are written back before the
    lock is released; reads of this object's other methods see the state as of the last call or
    `sync()`. Stale reads of a fault profile are remembered per process only."""

    path: Path
    _seen: bytes  # the digest of the file's content this process last loaded or wrote

    @classmethod
    def attach(cls, world: World, path: Path, identity: dict[str, Any], create: Callable[[], Episode]) -> FileEpisode:
        """The episode in `path`, created with `create()` if the file does not exist yet. `identity`
        (world, seed, scale, task) must match the file's, else `EpisodeFileError` says what differs."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)  # the lock file lives beside it
        with _locked(path):
            if path.exists():
                data = path.read_bytes()
                _check(world, path, data, identity)
            else:
                data = create().snapshot()
                _write(path, data)
            episode = cls(world, connect(data), id="default")
            episode.path = path
            episode._seen = _digest(data)
        return episode

    def sync(self) -> None:
        """Load the file's state if another process changed it since this one last saw it."""
        with _locked(self.path):
            self._load_if_changed()

    def _load_if_changed(self) -> None:
        data = self.path.read_bytes()  # under the lock: whole, and the latest
        if _digest(data) == self._seen:
            return
        with self._open():
            self._reload(data)
        self._injection.stale = None  # another process wrote since: this process's stale view is gone
        self._seen = _digest(data)

    @contextmanager
    def _shared(self) -> Iterator[None]:
        with _locked(self.path):
            self._load_if_changed()
            yield  # every call, refused ones too, writes the transcript: always save
            self._seen = _write(self.path, self.snapshot())

    def run(self, spec: ToolSpec, kwargs: dict[str, Any], role: str | None = None) -> CallResult:
        with self._shared():
            return super().run(spec, kwargs, role)

    def refuse(self, tool: str, arguments: Any, error: str, role: str | None = None) -> CallResult:
        with self._shared():
            return super().refuse(tool, arguments, error, role)


def _check(world: World, path: Path, data: bytes, identity: dict[str, Any]) -> None:
    conn = None
    try:
        conn = connect(data)
        meta = read_meta(conn)
    except Exception as exc:
        raise EpisodeFileError(f"{path} is not an mcpsim episode database ({exc}); choose another --episode") from None
    finally:
        if conn is not None:
            conn.close()
    held = {"world": meta.world, "seed": meta.seed, "scale": meta.scale, "task": meta.task}
    differ = [f"{key} {held[key]!r} (asked: {identity[key]!r})" for key in held if held[key] != identity[key]]
    if differ:
        raise EpisodeFileError(
            f"{path} holds another episode: {', '.join(differ)}. Attach with the options it was created "
            "with, or choose another --episode file"
        )
    if meta.version != world.version:
        raise EpisodeFileError(
            f"{path} was created by another version of world {world.name} ({meta.version[:12]}, installed: "
            f"{world.version[:12]}); its rows may not fit this code: choose another --episode file"
        )
