"""Work on untrusted specs in a sandbox first: a loader runs in a child process with CPU-time and
memory limits (`resource.setrlimit`, set in the child) and a wall-clock limit (the parent kills
it), and the caller does the work itself only once the child has done so within them. A spec that
compiles forever, eats memory or holds the interpreter lock in a regular expression then costs a
child process, not the caller. The callers: `WorldHost` (serve-worlds) checks each world before it
loads it, and answers that world's requests with the reason (`CompileRefused`) meanwhile; the
CLI's `--world-spec` and `--worlds-dir`, `gen SPEC --serve` and `fidelity` check each spec file
(`SpecFileCheck` in `mcpsim.catalogue`), and generate a spec world's tasks on first use
(`SpecTaskGeneration`); `gen SPEC` validates a spec file in the child, and `gen
--describe` each model-written spec, and take the report back (`mcpsim.acceptance`). Limits come
from `CompileLimits` or, for the CLI, the environment (`CompileLimits.from_env`).

A threaded caller (a server) has its children forked from a fork server (`multiprocessing`'s), a
clean process that imported the loader's module once: a check costs a fork, and the threaded
process never forks. A caller with one thread (the CLI) forks itself (`run_now`). The loader goes
to the child pickled (a plain module-level object), so it must be picklable. The child answers
one message: {"ok": true, "result": <the loader's JSON value>} or {"error": "..."}."""

from __future__ import annotations

import json
import multiprocessing
import multiprocessing.forkserver
import os
import pickle
import resource
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import anyio

from mcpsim._sizes import format_size, parse_size

ANSWER_BYTES = 8 * 1024 * 1024  # the most of the child's answer read (a report, or 200 generated tasks)
ERROR_CHARS = 2000  # a refusal's reason, clipped


class CompileRefused(RuntimeError):
    """A world whose loading in the sandbox failed or went past a limit (the reason in its message)."""


@dataclass(frozen=True)
class CompileLimits:
    """What loading one world in the sandbox may take: CPU seconds and bytes of address space
    beyond what the child starts with (in the child, by `resource.setrlimit`), and seconds of wall
    clock (then the child is killed)."""

    cpu_seconds: int = 60
    memory_bytes: int = 2 * 1024**3
    wall_seconds: float = 120.0

    def __post_init__(self) -> None:
        for name in ("cpu_seconds", "memory_bytes", "wall_seconds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < float("inf"):
                raise ValueError(f"{name} must be a positive, finite number, not {value!r}")

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> CompileLimits:
        """The limits the environment sets (the variables `mcpsim serve-worlds`' options read:
        MCPSIM_COMPILE_CPU_SECONDS, MCPSIM_COMPILE_MEMORY, MCPSIM_COMPILE_TIMEOUT), else the
        defaults; ValueError naming the variable for a value that is not one."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for variable, field, read in ENV_LIMITS:
            if (text := env.get(variable, "").strip()) != "":
                try:
                    values[field] = read(text)
                except ValueError as exc:
                    raise ValueError(f"{variable}={text!r} is not a valid limit: {exc}") from None
        try:
            return cls(**values)
        except ValueError as exc:
            raise ValueError(f"the MCPSIM_COMPILE_* limits: {exc}") from None


ENV_LIMITS: list[tuple[str, str, Callable[[str], Any]]] = [
    ("MCPSIM_COMPILE_CPU_SECONDS", "cpu_seconds", int),
    ("MCPSIM_COMPILE_MEMORY", "memory_bytes", parse_size),
    ("MCPSIM_COMPILE_TIMEOUT", "wall_seconds", float),
]


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
    await run(loader, name, limits)


def run_now(load: Callable[[str], Any], name: str, limits: CompileLimits) -> Any:
    """`run` for a caller without an event loop (the CLI): `load(name)`'s JSON value, computed in
    a child within `limits`, or CompileRefused with the reason. The child is made in the calling
    thread: a process with one thread forks itself (milliseconds, nothing imported again), one with
    threads (a server, a test harness) goes through the fork server, since a fork keeps only the
    forking thread and a lock another thread held stays held in the child forever."""
    start = "fork" if threading.active_count() == 1 else "forkserver"
    return _run(picklable(load), name, limits, start)


async def run(loader: Sandboxed, name: str, limits: CompileLimits) -> Any:
    """Run the loader for `name` in a child forked by the fork server, within `limits`, and return
    the JSON value it returned (its result must be JSON: a world or other object is not; None is
    fine); CompileRefused with the reason if it fails or goes past a limit. The event loop stays
    free meanwhile; cancelled, the wait is abandoned and the child still killed at its wall limit."""
    return await anyio.to_thread.run_sync(_run, loader, name, limits, "forkserver", abandon_on_cancel=True)


def _run(loader: Sandboxed, name: str, limits: CompileLimits, start: str) -> Any:
    """`run`'s work, blocking the calling thread: `start="fork"` forks the caller itself, so only a
    caller with one thread may ask for it."""
    context = multiprocessing.get_context("fork") if start == "fork" else _forkserver(loader.module)
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(
        target=_child, args=(sender, loader.pickled, name, limits.cpu_seconds, limits.memory_bytes), daemon=True
    )
    too_long = f"loading it took longer than its wall-clock limit of {limits.wall_seconds:g} s"
    try:
        child.start()  # the first one through the fork server starts it: seconds
        sender.close()
        deadline = time.monotonic() + limits.wall_seconds
        # read the answer as it comes (one larger than the pipe's buffer would hold the child up),
        # then reap the child; the pipe is readable at the answer or when the child ends without one
        if not receiver.poll(limits.wall_seconds):
            raise CompileRefused(too_long)
        try:
            answer = receiver.recv_bytes(ANSWER_BYTES)
        except (EOFError, OSError):  # it ended without answering: killed at a limit, or crashed
            answer = b""
        child.join(max(deadline - time.monotonic(), 0.1))
        if child.exitcode is None:
            raise CompileRefused(too_long)
    finally:
        if child.is_alive():
            child.kill()
            child.join(10)
        receiver.close()
    return _judge(answer, child.exitcode, limits)


def _judge(answer: bytes, code: int | None, limits: CompileLimits) -> Any:
    """The child's verdict: its result if it loaded the world, else CompileRefused with the reason."""
    try:
        said = json.loads(answer.decode("utf-8", "replace").strip().splitlines()[-1]) if answer.strip() else {}
    except ValueError:
        said = {}
    if isinstance(said, dict) and said.get("ok") is True and code == 0:
        return said.get("result")
    if isinstance(said, dict) and isinstance(said.get("error"), str):
        raise CompileRefused(said["error"][:ERROR_CHARS])
    if code in (-signal.SIGXCPU, -signal.SIGKILL):
        raise CompileRefused(f"loading it used more than its CPU-time limit of {limits.cpu_seconds} s")
    raise CompileRefused(f"the process loading it ended without an answer (exit status {code})")


def _child(answer: Connection, loader: bytes, name: str, cpu_seconds: int, memory_bytes: int) -> None:
    """The child: its limits first, then the loader, run; its outcome as one JSON message."""
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    # what the loading may add to the address space the child starts with: a child forked from a
    # large process (a test runner, a server) inherits its mappings, and an absolute 2 GiB
    # limit below them would fail every allocation
    limit = _address_space() + memory_bytes
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    sys.stdout = sys.stderr  # whatever the loader prints stays out of the server's output
    try:
        result = pickle.loads(loader)(name)
        outcome: dict[str, Any] = {"ok": True, "result": _json_value(result)}
    except MemoryError:
        outcome = {"error": f"loading it ran out of its memory limit of {format_size(memory_bytes)}"}
    except RecursionError:
        outcome = {"error": "loading it nested too deeply (RecursionError)"}
    except Exception as exc:  # the loader's own error: the reason the world cannot be served
        outcome = {"error": f"{type(exc).__name__}: {exc}"}
    message = json.dumps(outcome).encode()
    if len(message) > ANSWER_BYTES:
        message = json.dumps({"error": f"its answer is larger than {format_size(ANSWER_BYTES)}"}).encode()
    answer.send_bytes(message)
    answer.close()


def _address_space() -> int:
    """This process's address space in bytes (Linux: /proc/self/statm), 0 where it cannot be read."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return 0


def _json_value(result: Any) -> Any:
    """The loader's result as the child sends it: JSON values as they are, anything else as None
    (serve-worlds' loader returns a world and its tasks, which stay in the child)."""
    try:
        json.dumps(result)
    except (TypeError, ValueError):
        return None
    return result
