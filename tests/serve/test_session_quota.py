"""Legacy MCP sessions and `/mcp` episodes are bounded per client (issue 11, item 5): one client
opening sessions in a loop has its own idle sessions closed (or gets 429), never locks another
client out of `initialize`, and cannot fill the episode cap through `/mcp`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from starlette.applications import Starlette

from mcpsim.serve._access import (
    ClientLimits,
    QuotaExceeded,
    SessionTable,
    client_keys,
    quota,
)
from mcpsim.serve._app import ServeConfig, build_app, serve_in_thread
from mcpsim.serve._host import EpisodeManager
from tests.conftest import MCP_INITIALIZE

pytestmark = pytest.mark.anyio

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# -- the bookkeeping ----------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def open_session(table: SessionTable, session_id: str, limits: Any) -> list[str]:
    """Admit and open one session; returns the ids closed to make room."""
    reservation = table.admit(limits)
    table.opened(session_id, reservation, "/episodes/e/mcp", "ledger")
    table.release(reservation)  # harmless: the reservation became the session
    assert table.count(limits[0][0]) == len([s for s in table.sessions.values() if limits[0][0] in s.keys])
    return [v.session_id for v in reservation.victims]


def test_a_client_at_its_limit_gives_up_its_least_recently_used_idle_session():
    clock = Clock()
    table = SessionTable(None, clock)
    mine = quota(("token:a", "address:1.2.3.4"), 3, 100)
    for n in range(3):
        assert open_session(table, f"s{n}", mine) == []
        clock.now += 1
    busy = table.begin("s0")  # in use: never closed to make room
    assert busy is not None
    table.end(table.begin("s1") or pytest.fail("s1 is open"))  # used just now: the most recently used
    assert open_session(table, "s3", mine) == ["s2"]
    assert sorted(table.sessions) == ["s0", "s1", "s3"]
    table.end(busy)
    clock.now += 1
    assert open_session(table, "s4", mine) == ["s0"]  # idle now, and the least recently used


def test_a_client_whose_sessions_are_all_busy_is_refused_and_others_are_not():
    table = SessionTable(None, Clock())
    greedy = quota(("token:greedy", "address:10.0.0.1"), 2, 100)
    for n in range(2):
        open_session(table, f"g{n}", greedy)
        table.begin(f"g{n}")
    with pytest.raises(QuotaExceeded, match="already has 2 MCP sessions open .* 2 of this client.s are busy"):
        table.admit(greedy)
    assert table.count("token:greedy") == 2  # a refusal reserves nothing
    other = quota(("token:other", "address:10.0.0.1"), 2, 100)
    assert open_session(table, "o0", other) == []


def test_changing_tokens_does_not_escape_the_per_address_limit():
    table = SessionTable(None, Clock())
    for n in range(5):
        assert open_session(table, f"s{n}", quota((f"token:{n}", "address:10.0.0.9"), 2, 5)) == []
    # the address is full: a new token gains nothing, and it may not close another client's session
    with pytest.raises(QuotaExceeded, match="clients at this address already have 5 MCP sessions open"):
        table.admit(quota(("token:new", "address:10.0.0.9"), 2, 5))
    assert table.count("address:10.0.0.9") == 5 and set(table.sessions) == {f"s{n}" for n in range(5)}
    # a client at the address limit gives up its own idle session, not anyone else's
    assert open_session(table, "s5", quota(("token:3", "address:10.0.0.9"), 2, 5)) == ["s3"]
    assert table.count("address:10.0.0.9") == 5
    assert open_session(table, "x", quota(("token:new", "address:10.0.0.10"), 2, 5)) == []  # another address


def test_openings_in_progress_count_so_concurrent_ones_cannot_overshoot():
    table = SessionTable(None, Clock())
    mine = quota(("address:1.1.1.1", "address:1.1.1.1"), 2, 8)
    assert mine == (("address:1.1.1.1", 2),)  # a client without a token is its address: the lower limit
    first = table.admit(mine)
    table.admit(mine)
    with pytest.raises(QuotaExceeded):
        table.admit(mine)  # two are being opened and none is idle yet
    table.release(first)  # that opening failed
    table.release(first)
    assert table.count("address:1.1.1.1") == 1
    table.admit(mine)


def test_idle_sessions_expire_and_busy_ones_do_not():
    clock = Clock()
    table = SessionTable(60.0, clock)
    mine = quota(("token:a", "address:a"), 10, 10)
    open_session(table, "idle", mine)
    open_session(table, "busy", mine)
    table.begin("busy")
    clock.now += 61
    table.expire()
    assert list(table.sessions) == ["busy"]


def test_a_client_is_its_token_else_its_address_and_the_token_is_not_kept():
    with_token = {"type": "http", "client": ("10.1.2.3", 5555), "headers": [(b"authorization", b"Bearer s3cret")]}
    client, address = client_keys(with_token)
    assert client.startswith("token:") and "s3cret" not in client and address == "address:10.1.2.3"
    assert client_keys({"type": "http", "client": ("10.1.2.3", 1), "headers": []}) == ("address:10.1.2.3",) * 2


def test_limits_are_checked_and_read_from_the_environment():
    with pytest.raises(ValueError, match="sessions_per_client must be a whole number of at least 1"):
        ClientLimits(sessions_per_client=0)
    with pytest.raises(ValueError, match="session_idle_seconds must be a positive, finite number"):
        ClientLimits(session_idle_seconds=float("inf"))
    config = ServeConfig.from_env(
        {
            "MCPSIM_SESSIONS_PER_CLIENT": "7",
            "MCPSIM_SESSIONS_PER_ADDRESS": "0",
            "MCPSIM_SESSION_IDLE_TIMEOUT": "30",
            "MCPSIM_MAX_SESSIONS": "99",
            "MCPSIM_MCP_EPISODES_PER_CLIENT": "3",
            "MCPSIM_MCP_EPISODES_PER_ADDRESS": "9",
        }
    )
    assert config.client_limits == ClientLimits(
        sessions_per_client=7,
        sessions_per_address=None,
        session_idle_seconds=30.0,
        max_sessions=99,
        mcp_episodes_per_client=3,
        mcp_episodes_per_address=9,
    )
    assert ServeConfig.from_env({}).client_limits == ClientLimits()
    with pytest.raises(ValueError, match="MCPSIM_MAX_SESSIONS must be a whole number"):
        ServeConfig.from_env({"MCPSIM_MAX_SESSIONS": "lots"})


# -- a real server, real clients ------------------------------------------------------------------


@dataclass
class Live:
    url: str
    app: Starlette
    manager: EpisodeManager

    @property
    def table(self) -> SessionTable:
        return self.app.state.sessions


@pytest.fixture
def serve(templates, ledger) -> Iterator[Callable[..., Live]]:
    def start(*, default: bool = False, max_episodes: int = 200, **limits: Any) -> Live:
        manager = EpisodeManager(templates, max_episodes=max_episodes, ttl_seconds=600)
        if default:
            manager.set_default(ledger, 0, "small")
        app = build_app([ledger], manager, token="op", client_limits=ClientLimits(**limits))
        return Live(stack.enter_context(serve_in_thread(app)), app, manager)

    with ExitStack() as stack:
        yield start


@asynccontextmanager
async def sdk_client(url: str, token: str) -> AsyncIterator[Client]:
    """The MCP SDK's own client, on the handshake protocol, sending `token` as its bearer token."""
    async with (
        create_mcp_http_client(headers=bearer(token)) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
    ):
        yield client


async def initialize(http: httpx.AsyncClient, path: str, token: str) -> httpx.Response:
    return await http.post(path, json=MCP_INITIALIZE, headers={**ACCEPT, **bearer(token)})


async def test_one_client_opening_hundreds_of_sessions_never_locks_another_out(serve):
    # Without the per-client limit the flood below fills the SDK's table (64) and every other
    # client's initialize answers 503.
    live = serve(sessions_per_client=16, max_sessions=64)
    async with httpx.AsyncClient(base_url=live.url, timeout=60, headers=bearer("op")) as http:
        episode = (await http.post("/episodes", json={"world": "ledger"})).json()
        path = f"/episodes/{episode['id']}/mcp"
        with anyio.fail_after(240):
            async with sdk_client(f"{live.url}{path}", "patient") as patient:
                assert not (await patient.call_tool("list_accounts", {})).is_error
                opened = []
                for _ in range(300):
                    r = await initialize(http, path, "greedy")
                    assert r.status_code == 200, r.text
                    opened.append(r.headers["mcp-session-id"])
                greedy_key = client_keys(
                    {"type": "http", "client": ("127.0.0.1", 0), "headers": [(b"authorization", b"Bearer greedy")]}
                )[0]
                assert live.table.count(greedy_key) == 16
                assert set(opened[-16:]) <= set(live.table.sessions)
                # The greedy client's own oldest sessions were closed for it...
                ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
                gone = await http.post(path, json=ping, headers={**ACCEPT, "Mcp-Session-Id": opened[0]})
                assert gone.status_code == 404
                kept = await http.post(path, json=ping, headers={**ACCEPT, "Mcp-Session-Id": opened[-1]})
                assert kept.status_code == 200
                # ...while the other client's session lives on, and a new client still gets in.
                assert not (await patient.call_tool("list_accounts", {})).is_error
                async with sdk_client(f"{live.url}{path}", "newcomer") as newcomer:
                    assert not (await newcomer.call_tool("list_accounts", {})).is_error
            assert len(live.table.sessions) == 16  # both SDK clients ended their sessions (DELETE)


async def test_a_client_whose_sessions_are_all_busy_gets_429_with_retry_after(serve):
    live = serve(sessions_per_client=2)
    async with httpx.AsyncClient(base_url=live.url, timeout=60, headers=bearer("op")) as http:
        episode = (await http.post("/episodes", json={"world": "ledger"})).json()
        path = f"/episodes/{episode['id']}/mcp"
        with anyio.fail_after(60):
            sessions = [(await initialize(http, path, "busy")).headers["mcp-session-id"] for _ in range(2)]
            async with anyio.create_task_group() as streams:
                holding = [anyio.Event() for _ in sessions]

                async def hold(session_id: str, started: anyio.Event) -> None:
                    # An open GET stream is a request in flight: the session is busy, not idle.
                    headers = {"Accept": "text/event-stream", "Mcp-Session-Id": session_id}
                    async with http.stream("GET", path, headers=headers) as stream:
                        assert stream.status_code == 200
                        started.set()
                        await anyio.sleep_forever()

                for session_id, started in zip(sessions, holding, strict=True):
                    streams.start_soon(hold, session_id, started)
                for started in holding:
                    await started.wait()
                refused = await initialize(http, path, "busy")
                assert refused.status_code == 429 and refused.headers["Retry-After"] == "1"
                assert "already has 2 MCP sessions open" in refused.json()["error"]["message"]
                assert (await initialize(http, path, "someone-else")).status_code == 200
                streams.cancel_scope.cancel()


async def test_idle_sessions_expire(serve):
    live = serve(session_idle_seconds=0.5)
    async with httpx.AsyncClient(base_url=live.url, timeout=60, headers=bearer("op")) as http:
        episode = (await http.post("/episodes", json={"world": "ledger"})).json()
        path = f"/episodes/{episode['id']}/mcp"
        session_id = (await initialize(http, path, "sleepy")).headers["mcp-session-id"]
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        statuses = []
        with anyio.fail_after(60):
            for _ in range(30):  # a ping restarts the countdown; a pause twice as long outlasts it
                await anyio.sleep(1.0)
                statuses.append(
                    (await http.post(path, json=ping, headers={**ACCEPT, "Mcp-Session-Id": session_id})).status_code
                )
                if statuses[-1] == 404:
                    break
        assert statuses[-1] == 404 and session_id not in live.table.sessions


async def test_mcp_sessions_in_a_loop_are_refused_before_they_fill_the_episode_cap(serve):
    live = serve(default=True, max_episodes=20, mcp_episodes_per_client=5, mcp_episodes_per_address=8)
    async with httpx.AsyncClient(base_url=live.url, timeout=60) as http:
        with anyio.fail_after(120):
            statuses = [(await initialize(http, "/mcp", "looper")).status_code for _ in range(12)]
            assert statuses == [200] * 5 + [429] * 7
            refused = await initialize(http, "/mcp", "looper")
            message = refused.json()["error"]["message"]
            assert "this client already holds 5 episodes opened through /mcp" in message
            assert "POST /episodes" in message and int(refused.headers["Retry-After"]) >= 1
            assert len(live.manager) == 5
            # The operator and other clients are unaffected.
            created = await http.post("/episodes", json={"world": "ledger"}, headers=bearer("op"))
            assert created.status_code == 201
            async with sdk_client(f"{live.url}/mcp", "another-agent") as other:
                assert not (await other.call_tool("list_accounts", {})).is_error
            # A deleted episode frees its place.
            victim = live.manager.list()[0]  # the looper's first
            assert (await http.delete(f"/episodes/{victim.id}", headers=bearer("op"))).status_code == 204
            assert (await initialize(http, "/mcp", "looper")).status_code == 200
            # A new token on every request does not get past the limit of the address.
            rotated = [(await initialize(http, "/mcp", f"fresh-{n}")).status_code for n in range(4)]
            assert rotated == [200, 200, 429, 429]  # 5 (looper) + 1 (another-agent) + 2 fresh reach 8
            assert (
                "everyone at this client's address already holds 8"
                in (await initialize(http, "/mcp", "fresh-x")).json()["error"]["message"]
            )
            assert len(live.manager) < 20


def test_the_cli_documents_every_limit():
    """`mcpsim serve --help` documents every limit, with its environment variable."""
    import subprocess
    import sys

    from tests.conftest import CLEAN_ENV

    result = subprocess.run(
        [sys.executable, "-m", "mcpsim", "serve", "--help"],
        env={**CLEAN_ENV, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    for flag, env in [
        ("--sessions-per-client", "MCPSIM_SESSIONS_PER_CLIENT"),
        ("--sessions-per-address", "MCPSIM_SESSIONS_PER_ADDRESS"),
        ("--session-idle-timeout", "MCPSIM_SESSION_IDLE_TIMEOUT"),
        ("--max-sessions", "MCPSIM_MAX_SESSIONS"),
        ("--mcp-episodes-per-client", "MCPSIM_MCP_EPISODES_PER_CLIENT"),
        ("--mcp-episodes-per-address", "MCPSIM_MCP_EPISODES_PER_ADDRESS"),
    ]:
        assert flag in result.stdout and env in result.stdout, flag
