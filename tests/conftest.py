from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import pytest

# mcpsim.testing is also loaded as a plugin below; register it for assert rewriting before the
# import that follows, or pytest warns (an error here) that it was imported before rewriting
pytest.register_assert_rewrite("mcpsim.testing")

from mcpsim.engine.templates import TemplateCache  # noqa: E402
from mcpsim.serve.app import build_app, serve_in_thread  # noqa: E402
from mcpsim.serve.host import EpisodeManager  # noqa: E402
from mcpsim.testing import clean_env  # noqa: E402
from mcpsim.world import World  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
import toyworld  # noqa: E402

pytest_plugins = ["mcpsim.testing", "pytester"]  # world_driver, mcpsim_templates; pytester for test_testing

pytestmark = pytest.mark.anyio

CLEAN_ENV = clean_env()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def templates(mcpsim_templates: TemplateCache) -> TemplateCache:
    """One template cache for the whole run (the one `world_driver` uses): each (world, seed, scale) is built once."""
    return mcpsim_templates


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


@pytest.fixture(scope="session")
def http_process(tmp_path_factory) -> Iterator[str]:
    """`mcpsim serve retail --http` as a real process; yields its base URL."""
    port = free_port()
    log = (tmp_path_factory.mktemp("server") / "stderr.log").open("wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mcpsim",
            "serve",
            "retail",
            "--http",
            "--port",
            str(port),
            "--scale",
            "small",
            "--no-cache",
            "--token",
            "tok",
            "--log-level",
            "WARNING",
        ],
        env=CLEAN_ENV,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):  # readiness is polled, bounded to about 60 s
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None, open(log.name).read()
            anyio.run(anyio.sleep, 0.1)
        else:
            pytest.fail("server did not become ready")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()
