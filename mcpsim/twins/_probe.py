"""Running an untrusted MCP server once, in a sandboxed child process, to read what it shows a
client: its `initialize` answer and every page of `tools/list`, as the raw JSON-RPC results (the
schemas byte for byte as the server wrote them, no SDK model in between).

The child runs with CPU-time, memory (`RLIMIT_DATA`) and file-size limits (`resource.setrlimit`, set in the
child), in its own process group (killed whole at the wall-clock limit or when the probe ends),
with the environment it is given and nothing else (dummy credentials in, the caller's secrets
out), and, where `unshare` can make one, in a network namespace of its own where only loopback
exists. `probe_server` never raises for what the server does: a server that exits, hangs, writes
garbage or answers with an error gives a `ProbeResult` whose `failure` says so."""

from __future__ import annotations

import json
import os
import queue
import resource
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROTOCOL_VERSION = "2025-06-18"  # the newest revision the servers on npm and PyPI widely speak
LINE_BYTES = 8 * 1024 * 1024  # the longest line of the server's stdout read (a whole tools/list page)
STDERR_CHARS = 2000  # the tail of the server's stderr kept for a failure's reason
MAX_PAGES = 50  # tools/list pages followed


@dataclass(frozen=True)
class ProbeLimits:
    cpu_s: int = 60
    memory_bytes: int = 2 * 1024**3  # data (heap and private mappings), not address space: V8 reserves
    # gigabytes of address space it never uses (each WebAssembly memory), so RLIMIT_AS would refuse node
    file_bytes: int = 256 * 1024**2
    wall_s: float = 60.0


DEFAULT_LIMITS = ProbeLimits()


@dataclass
class ProbeResult:
    """What a server showed: `initialize`'s result and its tools, or the reason it showed nothing."""

    initialize: dict[str, Any] | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    failure: str | None = None  # None: listed
    stderr: str = ""
    isolated: bool = False  # ran in a network namespace of its own

    @property
    def server_info(self) -> dict[str, Any]:
        info = (self.initialize or {}).get("serverInfo")
        return info if isinstance(info, dict) else {}


def network_isolation() -> list[str]:
    """The command prefix that runs a command in a new network namespace with loopback up, or []
    when this machine cannot make one (no `unshare`, or user namespaces refused)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return []
    prefix = [unshare, "-rn", "--", "sh", "-c", 'ip link set lo up 2>/dev/null; exec "$@"', "sh"]
    try:
        done = subprocess.run([*prefix, "true"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return prefix if done.returncode == 0 else []


def _limiter(limits: ProbeLimits) -> Callable[[], None]:
    def apply() -> None:  # in the child, before exec
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 5))
        resource.setrlimit(resource.RLIMIT_DATA, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


class _Session:
    """JSON-RPC over the child's stdio: requests out, one JSON message per stdout line in."""

    def __init__(self, child: subprocess.Popen[bytes], deadline: float) -> None:
        self.child = child
        self.deadline = deadline
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.next_id = 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.child.stdout is not None
        for line in iter(lambda: self.child.stdout.readline(LINE_BYTES), b""):  # type: ignore[union-attr]
            self.lines.put(line)
        self.lines.put(None)

    def send(self, message: dict[str, Any]) -> None:
        assert self.child.stdin is not None
        self.child.stdin.write((json.dumps(message) + "\n").encode())
        self.child.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The result of a request; raises `_Failed` with the reason otherwise."""
        self.next_id += 1
        ident = self.next_id
        try:
            self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        except OSError as exc:
            raise _Failed(f"start: the server closed its input before {method} ({exc.strerror})") from None
        while True:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise _Failed(f"timeout: no answer to {method} within the wall-clock limit")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                code = self.child.wait()
                raise _Failed(f"start: the server exited (code {code}) before answering {method}")
            try:
                message = json.loads(line)
            except ValueError:
                continue  # a log line on stdout
            if not isinstance(message, dict):
                continue
            if "method" in message and "id" in message:  # the server asks (roots, sampling): we offer nothing
                error = {"code": -32601, "message": "the harvest's client offers no capabilities"}
                self.send({"jsonrpc": "2.0", "id": message["id"], "error": error})
            elif message.get("id") == ident:
                if "error" in message:
                    raise _Failed(f"protocol: {method} answered an error: {json.dumps(message['error'])[:500]}")
                result = message.get("result")
                if not isinstance(result, dict):
                    raise _Failed(f"protocol: {method} answered a result that is not an object")
                return result


class _Failed(Exception):
    pass


def _exchange(session: _Session, client: dict[str, Any], result: ProbeResult) -> None:
    params = {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": client}
    result.initialize = session.request("initialize", params)
    session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = session.request("tools/list", {"cursor": cursor} if cursor else {})
        tools = page.get("tools")
        if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
            raise _Failed("protocol: tools/list answered no list of tools")
        result.tools += tools
        cursor = page.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            return
    raise _Failed(f"protocol: tools/list went on past {MAX_PAGES} pages")


def probe_server(
    command: list[str],
    *,
    env: dict[str, str],
    cwd: Path,
    limits: ProbeLimits = DEFAULT_LIMITS,
    isolate: list[str] | None = None,
    client: dict[str, Any] | None = None,
) -> ProbeResult:
    """Start `command` (stdio) sandboxed, initialize it, list its tools, and stop it.
    `isolate` is `network_isolation()`'s prefix (computed once by the caller), [] for none."""
    prefix = network_isolation() if isolate is None else isolate
    result = ProbeResult(isolated=bool(prefix))
    try:
        child = subprocess.Popen(
            [*prefix, *command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            preexec_fn=_limiter(limits),  # the limits are set in the child, before exec
            start_new_session=True,
        )
    except OSError as exc:
        result.failure = f"start: cannot run {command[0]}: {exc.strerror}"
        return result
    stderr: list[bytes] = []
    drain = threading.Thread(target=lambda: stderr.append(child.stderr.read(1024 * 1024)), daemon=True)  # type: ignore[union-attr]
    drain.start()
    session = _Session(child, time.monotonic() + limits.wall_s)
    try:
        _exchange(session, client or {"name": "mcpsim-harvest", "version": "1"}, result)
    except _Failed as exc:
        result.failure = str(exc)
    finally:
        _stop(child)
        drain.join(timeout=5)
        session.reader.join(timeout=5)
        for stream in (child.stdout, child.stderr):
            if stream is not None:
                stream.close()
    text = b"".join(stderr).decode("utf-8", "replace")
    result.stderr = text[-STDERR_CHARS:]
    return result


def _stop(child: subprocess.Popen[bytes]) -> None:
    """Close the server's input, then end its whole process group."""
    try:
        if child.stdin is not None:
            child.stdin.close()
    except OSError:
        pass
    try:
        child.wait(timeout=2)
    except subprocess.TimeoutExpired:
        pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(child.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            child.wait(timeout=3)
            return
        except subprocess.TimeoutExpired:
            continue
