from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import httpx
import pytest

# mcpsim.testing._driver is also loaded as a plugin below; register it for assert rewriting before the
# import that follows, or pytest warns (an error here) that it was imported before rewriting
pytest.register_assert_rewrite("mcpsim.testing._driver")

from mcpsim.catalogue._loading import worlds_registered_here_removed  # noqa: E402
from mcpsim.engine._templates import TemplateCache  # noqa: E402
from mcpsim.grading import Verifier  # noqa: E402
from mcpsim.serve._app import build_app, serve_in_thread  # noqa: E402
from mcpsim.serve._host import EpisodeManager  # noqa: E402
from mcpsim.tasks import Action, Step, Task, load_tasks  # noqa: E402
from mcpsim.tasks._scenario import gold_steps  # noqa: E402
from mcpsim.testing._driver import clean_env  # noqa: E402
from mcpsim.world import World  # noqa: E402
from mcpsim.world._registry import load_world  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent / "support"))
import toyworld  # noqa: E402

pytest_plugins = [
    "mcpsim.testing._driver",  # world_driver, mcpsim_templates
    "pytester",  # for tests/testing
    "tests.support.skip_guard",  # no silent skips
]

pytestmark = pytest.mark.anyio

CLEAN_ENV = clean_env()

# Every httpx call in the tests without a timeout of its own waits up to 120 s, not httpx's 5 s: a
# loaded 2-core machine answers late, and a slow answer is not a failure (tests bound their waits).
# httpx binds one Timeout object as the default of get/post/Client/AsyncClient: set its fields.
for _phase in ("connect", "read", "write", "pool"):
    setattr(httpx._config.DEFAULT_TIMEOUT_CONFIG, _phase, 120.0)

# The first request of an MCP session over HTTP (a raw JSON-RPC body, for tests that speak the protocol by hand).
MCP_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}},
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module", autouse=True)
def _worlds_registered_here_stay_here() -> Iterator[None]:
    """A world a test module registers at run time is removed when the module ends: a later module
    on the same xdist worker sees only the installed worlds (the unknown-world message lists them)."""
    with worlds_registered_here_removed():
        yield


@pytest.fixture(scope="session")
def templates(mcpsim_templates: TemplateCache) -> TemplateCache:
    """One template cache for the whole run (the one `world_driver` uses): each (world, seed, scale) is built once."""
    return mcpsim_templates


# The graders of the story worlds, as `retail`, `bank` and `workspace` (a folder or module may define
# its own: tests/worlds/bank/ means the World by `bank`).
@pytest.fixture(scope="module")
def retail(templates: TemplateCache) -> Verifier:
    return Verifier(load_world("retail"), load_tasks("retail"), templates=templates)


@pytest.fixture(scope="module")
def bank(templates: TemplateCache) -> Verifier:
    return Verifier(load_world("bank"), load_tasks("bank"), templates=templates)


@pytest.fixture(scope="module")
def workspace(templates: TemplateCache) -> Verifier:
    return Verifier(load_world("workspace"), load_tasks("workspace"), templates=templates)


def lunch_reply(workspace: Verifier) -> tuple[Task, list[Step], Action]:
    """The workspace task mail-reply-lunch, its gold steps, and the last of them: the reply."""
    task = workspace.tasks.get("mail-reply-lunch")
    steps = gold_steps(task, workspace.world)
    reply = steps[-1]
    assert isinstance(reply, Action) and reply.tool == "reply_to_thread"
    return task, steps, reply


@pytest.fixture
def ledger() -> World:
    return toyworld.world


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class LiveServer:
    url: str
    manager: EpisodeManager
    clock: FakeClock


@pytest.fixture
def serve_http(templates: TemplateCache):
    """Start an HTTP server for the given worlds; returns a LiveServer. Options go to build_app;
    without a token the control plane is opened (no_auth), as most tests drive it directly.
    `default`: the world of `/mcp` (one episode per client; `shared_default=True`: one for all)."""

    def start(
        worlds: list[World],
        *,
        default: World | None = None,
        shared_default: bool = False,
        max_episodes: int = 50,
        ttl: float | None = 60.0,
        tasks: dict | None = None,
        **options: object,
    ) -> LiveServer:
        clock = FakeClock()
        manager = EpisodeManager(
            templates, max_episodes=max_episodes, ttl_seconds=ttl, clock=clock, tasks=lambda name: (tasks or {})[name]
        )
        if default is not None:
            manager.set_default(default, 0, "small", shared=shared_default)
        if options.get("token") is None:
            options.setdefault("no_auth", True)
        url = stack.enter_context(serve_in_thread(build_app(worlds, manager, **options)))
        return LiveServer(url, manager, clock)

    with ExitStack() as stack:
        yield start


def spawn_retail_http(port: int, stderr: IO[bytes], *args: str) -> subprocess.Popen[bytes]:
    """`mcpsim serve retail --http ARGS` on `port` as a real process: small scale, no template cache
    on disk, warnings only, MCPSIM_* settings cleared."""
    command = ["serve", "retail", "--http", "--port", str(port), "--scale", "small", "--no-cache"]
    return subprocess.Popen(
        [sys.executable, "-m", "mcpsim", *command, "--log-level", "WARNING", *args],
        env=CLEAN_ENV,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
    )


def run_python(*args: str, env: dict[str, str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """`python ARGS` with this interpreter, its output captured as text; the test fails, showing the
    output's tail, unless it exits 0."""
    done = subprocess.run(
        [sys.executable, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def wait_until_healthy(url: str, proc: subprocess.Popen[bytes], log: Path, *, tries: int = 600) -> None:
    """Poll `url`/health every 0.1 s, at most `tries` times; fail with the server's stderr if it exits."""
    for _ in range(tries):
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert proc.poll() is None, log.read_text()
        time.sleep(0.1)
    pytest.fail("server did not become ready")


@pytest.fixture(scope="session")
def http_process(tmp_path_factory) -> Iterator[str]:
    """`mcpsim serve retail --http` as a real process; yields its base URL."""
    port = free_port()
    log = (tmp_path_factory.mktemp("server") / "stderr.log").open("wb")
    proc = spawn_retail_http(port, log, "--token", "tok")
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, proc, Path(log.name))  # bounded to about 60 s
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()
