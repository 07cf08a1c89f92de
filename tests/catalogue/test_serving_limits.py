"""`mcpsim serve-worlds` holds its clients to the limits `serve --http` takes (issue 29, items 3 and
4), on a real server (a uvicorn subprocess) over raw sockets and the MCP SDK's client: each
episode's database is capped at --max-bytes-per-episode, a connection that sends no headers is
closed after --header-timeout (here from its environment variable), and connections past
--connections-per-address are refused with the reason."""

from __future__ import annotations

import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from tests.support.commands import serving_worlds

pytestmark = pytest.mark.system

LIBRARY = Path(__file__).resolve().parents[2] / "examples/specs/library.yaml"
WAIT = 20.0  # a socket read's bound: the 1 s header deadline closes long before, the default 30 s after


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[str, dict[str, str]]]:
    folder = tmp_path_factory.mktemp("worlds")
    shutil.copy(LIBRARY, folder / "library.yaml")
    tasks = "world: library\ncanary: MCPSIM-CANARY-00000000000000000000\ntasks: []\n"
    (folder / "library.tasks.yaml").write_text(tasks)  # no task: nothing to generate
    options = ["--no-cache", "--max-bytes-per-episode", "4KiB", "--connections-per-address", "3"]
    with serving_worlds(folder, *options, env={"MCPSIM_HEADER_TIMEOUT": "1"}) as (url, token):
        yield url, {"Authorization": f"Bearer {token}"}


async def _register_until_refused(mcp_url: str) -> tuple[int, str]:
    """Members registered until a call is refused: how many went in, and the refusal's text."""
    async with (
        create_mcp_http_client() as http,
        Client(streamable_http_client(mcp_url, http_client=http), mode="legacy") as client,
    ):
        for n in range(300):
            args = {"name": f"Member {n} " + "x" * 80, "email": f"member{n}@example.org"}
            done = await client.call_tool("register_member", args)
            if done.is_error:
                return n, " ".join(getattr(c, "text", "") for c in done.content)
    return 300, ""


def test_each_episode_is_capped_at_the_bytes_per_episode_option(served):
    url, auth = served
    created = httpx.post(f"{url}/w/library/episodes", json={"world": "library", "seed": 0}, headers=auth)
    assert created.status_code == 201, created.text
    registered, refusal = anyio.run(_register_until_refused, created.json()["mcp_url"])
    assert registered < 300 and "storage limit of 4096 bytes is reached; nothing was changed" in refusal, refusal


def _closed_within(sock: socket.socket) -> bytes:
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


def test_a_connection_without_headers_is_closed_at_the_deadline_its_environment_sets(served):
    url, _ = served
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=WAIT) as sock:
        _closed_within(sock)  # a socket timeout (the default 30 s deadline) fails the test


def test_connections_past_the_cap_per_address_are_refused(served):
    url, _ = served
    host, port = url.removeprefix("http://").split(":")
    held = [socket.create_connection((host, int(port)), timeout=WAIT) for _ in range(3)]
    try:
        with socket.create_connection((host, int(port)), timeout=WAIT) as extra:
            answer = _closed_within(extra)
        assert answer.startswith(b"HTTP/1.1 503") and b"connections" in answer, answer
    finally:
        for sock in held:
            sock.close()
