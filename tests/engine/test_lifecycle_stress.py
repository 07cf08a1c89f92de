"""Safe lifecycles: an episode deleted, expired, ended or forked while other clients use it.

A closed episode refuses every operation with `EpisodeClosed` (never touching a closed or freed
SQLite connection, which crashed the server); `close()` waits for the operation in progress; the
control plane answers 404 with the reason and the MCP data plane a tool error; and a stress test
drives every lifecycle operation on shared episodes from many clients against a real uvicorn."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import mcp_types
import pytest

from mcpsim.engine._episode import Episode
from mcpsim.engine._faults import FaultProfile
from mcpsim.engine._parking import EpisodeClosed
from tests.support.verifier_fixtures import ledger_tasks

pytestmark = pytest.mark.anyio

TOKEN = "lifecycle-token"
AUTH = {"authorization": f"Bearer {TOKEN}"}
MCP_HEADERS = {
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
}
MCP_META = {
    mcp_types.PROTOCOL_VERSION_META_KEY: "2026-07-28",
    mcp_types.CLIENT_INFO_META_KEY: {"name": "stress", "version": "1"},
    mcp_types.CLIENT_CAPABILITIES_META_KEY: {},
}


def _set_verdict(e: Episode) -> None:
    e.verdict = {"passed": True}


# Every operation that touches an episode's database.
OPERATIONS: dict[str, Any] = {
    "call": lambda e: e.call("list_accounts", {}),
    "call (unknown tool)": lambda e: e.call("no_such_tool", {}),
    "call (invalid arguments)": lambda e: e.call("get_account", {"account_id": 5}),
    "run": lambda e: e.run(e.world.tools["open_account"], {"owner": "Ada"}),
    "state_hash": lambda e: e.state_hash(),
    "tables": lambda e: e.tables(),
    "transcript": lambda e: e.transcript(),
    "changes": lambda e: e.changes(),
    "net_changes": lambda e: e.net_changes(),
    "clock": lambda e: e.clock(),
    "calls": lambda e: e.calls,
    "snapshot": lambda e: e.snapshot(),
    "fork": lambda e: e.fork(),
    "query": lambda e: e.query("SELECT 1"),
    "select": lambda e: e.select("account", {}),
    "edit": lambda e: e.edit("UPDATE account SET owner = 'x'"),
    "end": lambda e: e.end(),
    "ended": lambda e: e.ended,
    "flags": lambda e: e.flags,
    "flagged": lambda e: e.flagged,
    "verdict": lambda e: e.verdict,
    "set verdict": _set_verdict,
    "set_faults": lambda e: e.set_faults(FaultProfile(name="x")),
    "set_progress_handler": lambda e: e.set_progress_handler(lambda: 0, 1000),
}


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_a_closed_episode_refuses_every_operation_with_the_reason(ledger, templates, operation):
    episode = Episode.create(ledger, 0, "small", templates=templates, id="ep-1")
    episode.close("deleted")
    assert episode.closed
    with pytest.raises(EpisodeClosed, match="episode ep-1 was deleted; it no longer exists"):
        OPERATIONS[operation](episode)
    assert isinstance(EpisodeClosed("x"), LookupError)  # callers treating a gone episode as missing see it too
    episode.close("expired")  # closing twice is harmless and keeps the first reason
    with pytest.raises(EpisodeClosed, match="was deleted"):
        OPERATIONS[operation](episode)


# Run in a child process: without the lock in `close()`, the race ends in an error or in SIGSEGV.
RACE = textwrap.dedent("""
    import sys, threading, time
    sys.path.insert(0, {tests!r})
    import toyworld
    from mcpsim.engine._episode import Episode
    from mcpsim.engine._parking import EpisodeClosed
    from mcpsim.engine._templates import TemplateCache

    SLOW = ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000000) "
            "SELECT count(*) AS c FROM n")
    templates = TemplateCache(max_bytes=None)
    for round in range(3):
        episode = Episode.create(toyworld.world, 0, "small", templates=templates)
        out = {{}}
        def read():
            try:
                out["rows"] = episode.query(SLOW)
                out["snapshot"] = len(episode.snapshot())
            except EpisodeClosed as exc:
                out["closed"] = str(exc)
            except BaseException as exc:
                out["error"] = repr(exc)
        reader = threading.Thread(target=read)
        reader.start()
        for _ in range(5000):  # until the slow read holds the episode (bounded)
            if episode._lock.locked():
                break
            time.sleep(0.001)
        episode.close()  # must wait for the read in progress
        reader.join(60)
        assert out.get("rows") == [{{"c": 2000000}}], out
        try:
            episode.state_hash()
        except EpisodeClosed as exc:
            assert "no longer exists" in str(exc)
        else:
            raise AssertionError("a closed episode answered")
    print("ok")
""")


def test_close_waits_for_the_read_in_progress_and_the_process_survives(tmp_path):
    tests = str(Path(__file__).parents[1] / "support")
    script = tmp_path / "race.py"
    script.write_text(RACE.format(tests=tests))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPSIM_")}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(tests).parents[1]), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env, check=False
    )
    assert done.returncode == 0, (done.returncode, done.stdout[-2000:], done.stderr[-4000:])
    assert done.stdout.strip().endswith("ok")


def _mcp_body(tool: str, arguments: dict[str, Any], request_id: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": MCP_META},
    }


async def test_routes_on_an_episode_closed_mid_request_answer_404_with_the_reason(serve_http, ledger, templates):
    live = serve_http([ledger], token=TOKEN, tasks={"ledger": ledger_tasks(ledger, templates)})
    async with httpx.AsyncClient(base_url=live.url, headers=AUTH, timeout=60) as http:
        r = await http.post("/episodes", json={"world": "ledger", "task": "pay-and-open"})
        assert r.status_code == 201, r.text
        ep = r.json()
        # What a concurrent DELETE or expiry does between a route's lookup and its use of the episode.
        live.manager.get(ep["id"]).close("deleted")
        for method, path, body in [
            ("GET", "", None),
            ("GET", "/state", None),
            ("GET", "/changes", None),
            ("GET", "/snapshot", None),
            ("GET", "/trajectory", None),
            ("POST", "/end", None),
            ("POST", "/fork", None),
            ("POST", "/verify", {"answer": "done"}),
        ]:
            r = await http.request(method, f"/episodes/{ep['id']}{path}", json=body)
            assert r.status_code == 404, (path, r.status_code, r.text)
            assert f"episode {ep['id']} was deleted" in r.json()["error"], (path, r.text)
        listed = await http.get("/episodes")
        assert listed.status_code == 200 and ep["id"] not in [e["id"] for e in listed.json()]
        r = await http.post(
            ep["mcp_url"], json=_mcp_body("list_accounts", {}), headers={**MCP_HEADERS, "mcp-name": "list_accounts"}
        )
        assert r.status_code == 200, r.text
        result = r.json()["result"]
        assert result["isError"] and f"episode {ep['id']} was deleted" in result["content"][0]["text"], result
        # Invalid arguments: the SDK's own error, and recording the rejected call in the closed episode is skipped.
        r = await http.post(
            ep["mcp_url"],
            json=_mcp_body("get_account", {"account_id": 7}),
            headers={**MCP_HEADERS, "mcp-name": "get_account"},
        )
        assert r.status_code == 200 and r.json()["result"]["isError"], r.text
        assert (await http.delete(f"/episodes/{ep['id']}")).status_code == 204
        assert (await http.get(f"/episodes/{ep['id']}")).status_code == 404
    assert len(live.manager) == 0


# Minutes, as the issue asks (two in CI; MCPSIM_STRESS_SECONDS=600 for a longer soak by hand).
STRESS_SECONDS = float(os.environ.get("MCPSIM_STRESS_SECONDS", "120"))
WORKERS = 12
POOL = 16  # episodes shared by all workers at once (creations and forks stop above it)


async def test_concurrent_lifecycles_never_crash_never_500_and_leak_nothing(serve_http, ledger, templates):
    """Many clients on the same few episodes at once: tool calls, state reads, snapshots,
    restores, forks, end, verify, delete, expiry (the fake clock jumps past the TTL) and
    re-creation. Every answer is a success or a clean 4xx, the server is alive at the end, and
    once every known episode is deleted none is left."""
    tasks = ledger_tasks(ledger, templates)
    live = serve_http([ledger], token=TOKEN, tasks={"ledger": tasks}, max_episodes=500, ttl=60.0, reap_interval=0.25)
    rng = random.Random(11)
    pool: list[str] = []
    urls: dict[str, str] = {}
    snapshots: list[bytes] = []
    outcomes: Counter[tuple[str, int]] = Counter()
    failures: list[str] = []
    retried = Counter[str]()

    def pick() -> str | None:
        return rng.choice(pool) if pool else None

    async def request(http: httpx.AsyncClient, op: str, method: str, url: str, **kwargs: Any) -> httpx.Response | None:
        for attempt in range(3):  # a keep-alive connection reset is the client's to retry, not a server failure
            try:
                r = await http.request(method, url, **kwargs)
            except (httpx.ReadError, httpx.RemoteProtocolError, httpx.WriteError) as exc:
                retried[type(exc).__name__] += 1
                if attempt == 2:
                    failures.append(f"{op}: {exc!r}")
                    return None
                continue
            outcomes[(op, r.status_code)] += 1
            if r.status_code >= 500 or r.status_code not in (200, 201, 204, 404, 409, 410, 422):
                failures.append(f"{op} {method} {url}: {r.status_code} {r.text[:300]}")
            elif r.status_code >= 400:
                try:
                    reason = r.json().get("error")
                except ValueError:
                    reason = None
                if not reason:
                    failures.append(f"{op}: {r.status_code} without a reason: {r.text[:300]}")
            return r
        return None

    def adopt(r: httpx.Response | None) -> None:
        if r is not None and r.status_code == 201:
            ep = r.json()
            urls[ep["id"]] = ep["mcp_url"]
            pool.append(ep["id"])

    async def worker(number: int, deadline: float) -> None:
        async with httpx.AsyncClient(base_url=live.url, headers=AUTH, timeout=120) as http:
            while anyio.current_time() < deadline:
                op = rng.choices(
                    [
                        "create",
                        "call",
                        "state",
                        "changes",
                        "snapshot",
                        "restore",
                        "trajectory",
                        "get",
                        "list",
                        "fork",
                        "end",
                        "verify",
                        "delete",
                        "expire",
                    ],
                    weights=[6, 30, 8, 4, 4, 2, 3, 4, 2, 5, 4, 4, 6, 0.2],
                )[0]
                episode_id = pick()
                if op in ("create", "fork", "restore") and len(pool) >= POOL:
                    op = "delete"
                if episode_id is None and op not in ("create", "list", "expire"):
                    op = "create"
                path = f"/episodes/{episode_id}"
                if op == "create":
                    body = (
                        {"world": "ledger", "task": "pay-and-open"}
                        if rng.random() < 0.5
                        else {"world": "ledger", "seed": rng.randrange(2), "scale": "small"}
                    )
                    adopt(await request(http, op, "POST", "/episodes", json=body))
                elif op == "call":
                    tool, arguments = rng.choice(
                        [
                            ("list_accounts", {}),
                            ("open_account", {"owner": f"w{number}"}),
                            ("get_account", {"account_id": "acc_000000"}),
                            ("get_account", {"account_id": 12}),
                            ("transfer", {"from_account": "acc_x", "to_account": "acc_y", "amount": 1}),
                        ]
                    )
                    await request(
                        http,
                        op,
                        "POST",
                        urls.get(episode_id, f"{path}/mcp"),
                        json=_mcp_body(tool, arguments, number),
                        headers={**MCP_HEADERS, "mcp-name": tool},
                    )
                elif op == "state":
                    await request(http, op, "GET", f"{path}/state")
                elif op == "changes":
                    await request(http, op, "GET", f"{path}/changes")
                elif op == "snapshot":
                    r = await request(http, op, "GET", f"{path}/snapshot")
                    if r is not None and r.status_code == 200 and len(snapshots) < 4:
                        snapshots.append(r.content)
                elif op == "restore":
                    if not snapshots:
                        continue
                    adopt(
                        await request(
                            http,
                            op,
                            "POST",
                            "/episodes/restore",
                            content=rng.choice(snapshots),
                            headers={"content-type": "application/vnd.sqlite3"},
                        )
                    )
                elif op == "trajectory":
                    await request(http, op, "GET", f"{path}/trajectory")
                elif op == "get":
                    await request(http, op, "GET", path)
                elif op == "list":
                    await request(http, op, "GET", "/episodes")
                elif op == "fork":
                    adopt(await request(http, op, "POST", f"{path}/fork"))
                elif op == "end":
                    await request(http, op, "POST", f"{path}/end")
                elif op == "verify":
                    await request(http, op, "POST", f"{path}/verify", json={"answer": "I moved 20 and opened it."})
                elif op == "delete":
                    r = await request(http, op, "DELETE", path)
                    if r is not None and r.status_code in (204, 404) and episode_id in pool:
                        pool.remove(episode_id)
                elif op == "expire":
                    live.clock.now += 61  # every episode idle since the jump expires, by lookup or by the reaper
                    outcomes[("expire", 0)] += 1
                await anyio.lowlevel.checkpoint()

    with anyio.fail_after(STRESS_SECONDS + 240):
        deadline = anyio.current_time() + STRESS_SECONDS
        async with anyio.create_task_group() as tg:
            for number in range(WORKERS):
                tg.start_soon(worker, number, deadline)

    async with httpx.AsyncClient(base_url=live.url, headers=AUTH, timeout=60) as http:
        assert (await http.get("/health")).status_code == 200  # the server is alive
        for episode_id in pool:
            r = await http.delete(f"/episodes/{episode_id}")
            assert r.status_code in (204, 404), r.text
        remaining = (await http.get("/episodes")).json()
    print("outcomes:", sorted(outcomes.items()), "transport retries:", dict(retried))
    assert not failures, f"{len(failures)} failures, first ones: {failures[:10]}; outcomes {dict(outcomes)}"
    assert remaining == [] and len(live.manager) == 0, "episodes leaked"
    # The races were real: operations both succeeded and met episodes deleted under them.
    done = {op for (op, status) in outcomes if status in (200, 201, 204)}
    assert {"create", "call", "state", "snapshot", "fork", "end", "verify", "delete"} <= done, outcomes
    assert sum(n for (op, status), n in outcomes.items() if status == 404) > 0, outcomes
    assert outcomes[("expire", 0)] > 0 or STRESS_SECONDS < 10, outcomes
