"""A storage limit per episode on a real server (issue 29, item 3): an agent writing the largest
text it may, as fast as it can, reaches its episode's limit and reads why in a tool error, and
the server's byte budget is left for everyone else: another client still creates an episode,
forks one and opens an MCP session on `/mcp`."""

from __future__ import annotations

import anyio
import httpx
import pytest
from mcp import Client

from mcpsim.engine._storage import FULL_MESSAGE
from mcpsim.serve._settings import DEFAULT_MAX_BYTES_PER_EPISODE, ServeConfig
from mcpsim.world import load_world
from tests.conftest import MCP_INITIALIZE

pytestmark = pytest.mark.anyio

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
MAIL = {"to": ["someone@example.org"], "subject": "Notes", "body": "b" * 5000}  # the longest body send_mail takes
ROOM = 1024 * 1024  # what the greedy agent's episode may grow by


async def test_an_agent_writing_as_fast_as_it_can_gets_a_clear_error_and_others_go_on(serve_http, templates):
    workspace = load_world("workspace")
    size = len(templates.get(workspace, 0, "small"))
    live = serve_http([workspace], default=workspace, max_episodes=100)
    live.manager.max_bytes_per_episode = size + ROOM
    # The budget holds the template, the greedy episode at its limit (and a fork of it) and a few more;
    # without a limit per episode the greedy agent alone would fill it.
    live.manager.max_episode_bytes = 6 * size + 3 * ROOM
    async with httpx.AsyncClient(base_url=live.url, timeout=60) as http:
        greedy = (await http.post("/episodes", json={"world": "workspace", "scale": "small"})).json()
        with anyio.fail_after(240):
            async with Client(greedy["mcp_url"]) as agent:
                sent = 0
                while sent < 400:  # ~30 KB of database a call: far past ROOM
                    result = await agent.call_tool("send_mail", MAIL)
                    if result.is_error:
                        break
                    sent += 1
                else:
                    pytest.fail("400 calls of 5,000 characters never reached the episode's limit")
                text = result.content[0].text
                assert FULL_MESSAGE.format(limit=size + ROOM) in text, text
                assert sent > 10
                state = (await http.get(f"/episodes/{greedy['id']}/state")).json()["state_hash"]
                again = await agent.call_tool("send_mail", MAIL)
                assert again.is_error and "nothing was changed" in again.content[0].text
                assert (await http.get(f"/episodes/{greedy['id']}/state")).json()["state_hash"] == state
                listed = await agent.call_tool("search_mail", {})  # it can still read
                assert not listed.is_error, listed.content
        held = next(e for e in live.manager.list() if e.id == greedy["id"]).size_bytes
        assert held <= size + ROOM + 64 * 1024
        # Everyone else goes on: create, fork, /mcp initialize.
        other = await http.post("/episodes", json={"world": "workspace", "scale": "small"})
        assert other.status_code == 201, other.text
        fork = await http.post(f"/episodes/{other.json()['id']}/fork")
        assert fork.status_code == 201, fork.text
        opened = await http.post("/mcp", json=MCP_INITIALIZE, headers=ACCEPT)
        assert opened.status_code == 200, opened.text
        # The greedy episode's fork keeps its limit (the server's).
        greedy_fork = await http.post(f"/episodes/{greedy['id']}/fork")
        assert greedy_fork.status_code == 201, greedy_fork.text
        with anyio.fail_after(60):
            async with Client(greedy_fork.json()["mcp_url"]) as agent:
                assert (await agent.call_tool("send_mail", MAIL)).is_error


async def test_a_restored_snapshot_gets_the_servers_limit(serve_http, templates):
    workspace = load_world("workspace")
    size = len(templates.get(workspace, 0, "small"))
    live = serve_http([workspace])
    async with httpx.AsyncClient(base_url=live.url, timeout=60) as http:
        made = (await http.post("/episodes", json={"world": "workspace", "scale": "small"})).json()
        snapshot = await http.get(f"/episodes/{made['id']}/snapshot")
        assert snapshot.status_code == 200, snapshot.text
        live.manager.max_bytes_per_episode = size + 64 * 1024
        restored = await http.post(
            "/episodes/restore", content=snapshot.content, headers={"content-type": "application/vnd.sqlite3"}
        )
        assert restored.status_code == 201, restored.text
        episode = next(e for e in live.manager.list() if e.id == restored.json()["id"])
        assert episode._db.limit is not None and episode._db.limit.max_bytes == size + 64 * 1024


def test_the_limit_per_episode_is_a_setting_with_a_default_no_shipped_world_reaches():
    assert ServeConfig().max_bytes_per_episode == DEFAULT_MAX_BYTES_PER_EPISODE == 256 * 1024**2
    config = ServeConfig.from_env({"MCPSIM_MAX_BYTES_PER_EPISODE": "64MiB"})
    assert config.max_bytes_per_episode == 64 * 1024**2
    assert ServeConfig.from_env({"MCPSIM_MAX_BYTES_PER_EPISODE": "0"}).max_bytes_per_episode is None
    with pytest.raises(ValueError, match="MCPSIM_MAX_BYTES_PER_EPISODE"):
        ServeConfig.from_env({"MCPSIM_MAX_BYTES_PER_EPISODE": "big"})
