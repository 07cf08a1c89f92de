"""Loading an untrusted world in a sandbox first: `WorldHost` (serve-worlds) runs its loader for a
world in a child process with CPU-time and memory limits (`resource.setrlimit`, set in the child)
and a wall-clock limit (the parent kills it), and loads the world itself only once the child has
done so within them. A spec that compiles forever, eats memory or holds the interpreter lock in a
regular expression then costs a child process, not the server: the host answers that world's
requests with the reason (`CompileRefused`) and serves the others and `/health` meanwhile.

The children are forked from a fork server (`multiprocessing`'s), a clean process that imported
the loader's module once: a world's check costs a fork, and the threaded server never forks. The
loader goes to the child pickled (`mcpsim.catalogue`'s spec-folder loader is a plain object), so
it must be picklable. The child answers one message: {"ok": true} or {"error": "..."}."""

from __future__ import annotations

import json
import multiprocessing
import multiprocessing.forkserver
import pickle
import resource
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import anyio

from mcpsim._sizes import format_size

ANSWER_BYTES = 64 * 1024  # the most of the child's answer read
ERROR_CHARS = 2000  # a refusal's reason, clipped


class CompileRefused(RuntimeError):
    """A world whose loading in the sandbox failed or went past a limit (the reason in its message)."""


@dataclass(frozen=True)
class CompileLimits:
    """What loading one world in the sandbox may take: CPU seconds and bytes of address space (in
    the child, by `resource.setrlimit`), and seconds of wall clock (then the child is killed)."""

    cpu_seconds: int = 60
    memory_bytes: int = 2 * 1024**3
    wall_seconds: float = 120.0

    def __post_init__(self) -> None:
        for name in ("cpu_seconds", "memory_bytes", "wall_seconds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < float("inf"):
                raise ValueError(f"{name} must be a positive, finite number, not {value!r}")


@dataclass(frozen=True)
class Sandboxed:
    """A loader as its sandbox runs it: pickled, and the module the sandbox's processes import
    once up front (`picklable`)."""

    pickled: bytes
    module: str


def picklable(load: Callable[[str], Any]) -> Sandboxed:
    """The loader as the sandbox runs it, or ValueError saying why it cannot be sandboxed."""
    try:
        return Sandboxed(pickle.dumps(load), type(load).__module__)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise ValueError(f"a sandboxed loader must be picklable (a module-level object): {exc}") from None


def _forkserver(module: str) -> Any:
    """The processes the sandbox runs in: forked from one clean, single-threaded server process
    that imported the loader's module once (so a world's check costs a fork, not an interpreter's
    start-up and imports), never from the threaded server itself."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__, module])  # no effect once the fork server runs
    return context


def warm_up(loader: Sandboxed) -> None:
    """Start the fork server now (it imports the loader's module: seconds), not on the first check."""
    _forkserver(loader.module)
    multiprocessing.forkserver.ensure_running()


async def check(loader: Sandboxed, name: str, limits: CompileLimits) -> None:
    """Run the loader for world `name` in a child within `limits`; CompileRefused with the reason
    if it fails or goes past one. The event loop stays free meanwhile."""
    context = _forkserver(loader.module)
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(
        target=_child, args=(sender, loader.pickled, name, limits.cpu_seconds, limits.memory_bytes), daemon=True
    )
    try:
        await anyio.to_thread.run_sync(child.start)  # the first one starts the fork server: seconds
        sender.close()
        await anyio.to_thread.run_sync(child.join, limits.wall_seconds)
        if child.exitcode is None:
            raise CompileRefused(f"loading it took longer than its wall-clock limit of {limits.wall_seconds:g} s")
        answer = receiver.recv_bytes(ANSWER_BYTES) if receiver.poll() else b""
    except (EOFError, OSError):
        answer = b""
    finally:
        if child.is_alive():
            child.kill()
            await anyio.to_thread.run_sync(child.join, 10)
        receiver.close()
    _judge(answer, child.exitcode, limits)


def _judge(answer: bytes, code: int | None, limits: CompileLimits) -> None:
    """The child's verdict: nothing if it loaded the world, else CompileRefused with the reason."""
    try:
        said = json.loads(answer.decode("utf-8", "replace").strip().splitlines()[-1]) if answer.strip() else {}
    except ValueError:
        said = {}
    if isinstance(said, dict) and said.get("ok") is True and code == 0:
        return
    if isinstance(said, dict) and isinstance(said.get("error"), str):
        raise CompileRefused(said["error"][:ERROR_CHARS])
    if code in (-signal.SIGXCPU, -signal.SIGKILL):
        raise CompileRefused(f"loading it used more than its CPU-time limit of {limits.cpu_seconds} s")
    raise CompileRefused(f"the process loading it ended without an answer (exit status {code})")


def _child(answer: Connection, loader: bytes, name: str, cpu_seconds: int, memory_bytes: int) -> None:
    """The child: its limits first, then the loader, run; its outcome as one JSON message."""
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    sys.stdout = sys.stderr  # whatever the loader prints stays out of the server's output
    try:
        pickle.loads(loader)(name)
    except MemoryError:
        outcome: dict[str, Any] = {"error": f"loading it ran out of its memory limit of {format_size(memory_bytes)}"}
    except RecursionError:
        outcome = {"error": "loading it nested too deeply (RecursionError)"}
    except Exception as exc:  # the loader's own error: the reason the world cannot be served
        outcome = {"error": f"{type(exc).__name__}: {exc}"}
    else:
        outcome = {"ok": True}
    answer.send_bytes(json.dumps(outcome).encode()[:ANSWER_BYTES])
    answer.close()
