"""The light client (clients/python, distribution `mcpsim-client`): installed with pip into its
own venvs beside `mcp==2.0.0` (what verifiers pins) and beside `mcp<2` (what
langchain-mcp-adapters needs), driving a real `mcpsim serve --http` process; and, in this venv,
its retry rules against real servers on loopback."""

from __future__ import annotations

import json
import socket
import socketserver
import sys
import threading
from pathlib import Path

import anyio
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpsim.serve._app import serve_in_thread
from tests.support.venvs import CLIENT, cached_venv, run_in

sys.path.insert(0, str(CLIENT))
from mcpsim_client import (
    AsyncClient,
    Client,
    EpisodeNotFound,
    InvalidRequest,
    Retry,
    ServerBusy,
    TransportFailed,
    Unauthorized,
)
from mcpsim_client.models import choose_tasks, reward_kind

PROBE = Path(__file__).parents[1] / "support" / "client_probe.py"
TASK = "add-address-make-default"
FAST = Retry(attempts=3, backoff=0.01, max_backoff=0.05)


@pytest.mark.system
@pytest.mark.parametrize(("name", "mcp_pin"), [("client-mcp2.0.0", "mcp==2.0.0"), ("client-mcp1", "mcp<2")])
def test_installs_beside_an_mcp_pin_and_drives_a_real_server(http_process: str, name: str, mcp_pin: str) -> None:
    python = cached_venv(name, [mcp_pin])
    result = run_in(python, PROBE, http_process, "tok", TASK)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert report["mcpsim_importable"] is False  # the venv holds the client, not the server
    major = int(report["mcp"].split(".")[0])
    assert (report["mcp"] == "2.0.0") if mcp_pin == "mcp==2.0.0" else major < 2
    assert report["created"]["task"] == TASK and report["created"]["calls"] == 0
    assert report["created"]["mcp_url"].startswith(http_process + "/episodes/")
    assert report["tools"] > 10
    assert report["found"]["email"] == "derek.smith@yahoo.com"
    # the fork got the write, the source did not; the fork passes, the source fails
    assert report["fork"] == {"calls": 2, "calls_ok": 2, "calls_failed": 0, "source_calls": 1}
    assert report["source_hash_unchanged"] is True
    assert report["fork_verdict"] == 1.0 and report["source_verdict"] == 0.0
    assert report["restored_hash_equal"] is True
    assert report["deleted"] is True
    assert report["async"] == {"seed": 1, "scale": "small", "tools": report["tools"]}


@pytest.mark.system
def test_tasks_are_listed_without_their_answers(http_process: str) -> None:
    with Client(http_process, "tok", retry=FAST) as client:
        tasks = {t.id: t for t in client.tasks("retail")}
        with pytest.raises(EpisodeNotFound, match="unknown world 'nope'"):
            client.tasks("nope")
    assert tasks[TASK].dialogue is True and tasks[TASK].split == "train"  # the rubric wants a confirmation
    assert tasks["gift-card-balance"].dialogue is False
    assert tasks[TASK].instruction.startswith("Hi, Derek Smith here")
    # what the adapters run: named tasks in order, else those without a dialogue
    listed = list(tasks.values())
    assert [t.id for t in choose_tasks("retail", listed, [TASK, "gift-card-balance"])] == [TASK, "gift-card-balance"]
    default = choose_tasks("retail", listed)
    assert default and not any(t.dialogue for t in default) and TASK not in {t.id for t in default}
    assert {t.split for t in choose_tasks("retail", listed, split="dev")} == {"dev"}
    with pytest.raises(ValueError, match="unknown tasks of retail: nope"):
        choose_tasks("retail", listed, ["nope"])
    with pytest.raises(ValueError, match="reward must be 'strict' or 'partial', not 'best'"):
        reward_kind("best")
    raw = httpx.get(f"{http_process}/worlds/retail/tasks", headers={"Authorization": "Bearer tok"}).text
    assert "cus_3673453" not in raw and "gold" not in raw and "rubric" not in raw  # nothing but the prompt


@pytest.mark.system
def test_errors_name_the_reason(http_process: str) -> None:
    with Client(http_process, "tok", retry=FAST) as client:
        with pytest.raises(InvalidRequest, match="unknown task 'nope'") as info:
            client.create(task="nope")
        assert info.value.status == 422
        with pytest.raises(
            InvalidRequest, match=r"invalid episode request \(seed: Input should be greater than or equal to 0\)"
        ):
            client.create("retail", seed=-1)
        with pytest.raises(EpisodeNotFound, match="could not read episode missing: HTTP 404"):
            client.get("missing")
        assert client.delete("missing", missing_ok=True) is False
        with pytest.raises(EpisodeNotFound):
            client.delete("missing")
        with pytest.raises(InvalidRequest, match="unknown tables"):
            with client.episode("retail", scale="small") as e:
                client.state(e, tables=["nope"])
        assert all(listed.id != e.id for listed in client.episodes())  # deleted by the context manager
    with pytest.raises(Unauthorized, match="missing or wrong bearer token"), Client(http_process, "wrong") as client:
        client.episodes()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_server_fails_after_the_retries() -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    with Client(url, retry=FAST) as client, pytest.raises(TransportFailed, match="after 3 attempt"):
        client.create("retail")


def test_an_unknown_episode_option_is_refused_before_anything_is_sent() -> None:
    url = f"http://127.0.0.1:{_closed_port()}"  # a request would fail with TransportFailed
    with Client(url, retry=FAST) as client, pytest.raises(TypeError, match=r"unknown episode option\(s\) sead: "):
        client.create("retail", sead=3)  # type: ignore[call-arg]


class Flaky:
    """A real HTTP/1.1 server on loopback (a plain socket server: uvicorn would answer 500, never
    drop a connection) that, for the first `failures` requests of each route, answers 503 with
    Retry-After ("busy") or closes the connection without answering ("drop"), then succeeds. It
    counts what it received, so a test sees whether a request was resent."""

    def __init__(self, failures: int, mode: str) -> None:
        self.failures, self.mode = failures, mode
        self.seen: dict[str, int] = {}
        server = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                while True:
                    line = self.rfile.readline().decode()
                    if not line:
                        return
                    method, path, _ = line.split(" ", 2)
                    length = 0
                    while (header := self.rfile.readline().decode().strip()) != "":
                        name, _, value = header.partition(":")
                        if name.lower() == "content-length":
                            length = int(value)
                    self.rfile.read(length)
                    key = f"{method} {path}"
                    server.seen[key] = server.seen.get(key, 0) + 1
                    if server.seen[key] <= server.failures and server.mode == "drop":
                        return  # closes the connection: the answer is lost
                    if server.seen[key] <= server.failures:
                        self._answer(503, {"error": "the server is full"}, "Retry-After: 0\r\n")
                    elif path.endswith("/verify"):
                        self._answer(200, {"passed": True, "reward": 1.0, "partial_reward": 1.0, "checks": []})
                    else:
                        self._answer(201, _info("ep1"))

            def _answer(self, status: int, body: dict, extra: str = "") -> None:
                data = json.dumps(body).encode()
                head = f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
                head += f"Content-Length: {len(data)}\r\n{extra}\r\n"
                self.wfile.write(head.encode() + data)
                self.wfile.flush()

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True

    def __enter__(self) -> str:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _info(eid: str) -> dict:
    return {
        "id": eid,
        "mcp_url": f"http://x/episodes/{eid}/mcp",
        "world": "retail",
        "world_version": "v",
        "seed": 0,
        "scale": "small",
        "task": None,
        "faults": None,
        "calls": 0,
        "clock": "2026-01-01T00:00:00+00:00",
        "ended": False,
        "flagged": False,
        "flags": [],
    }


def test_a_busy_server_is_retried_for_every_request() -> None:
    flaky = Flaky(failures=2, mode="busy")
    with flaky as url, Client(url, retry=FAST) as client:
        assert client.create("retail").id == "ep1"  # 503 means nothing was done: safe to resend a create
        assert flaky.seen["POST /episodes"] == 3
    flaky = Flaky(failures=5, mode="busy")
    with flaky as url, Client(url, retry=FAST) as client:
        with pytest.raises(ServerBusy, match="the server is full"):
            client.create("retail")
        assert flaky.seen["POST /episodes"] == 3


def test_a_lost_answer_is_resent_only_when_idempotent() -> None:
    flaky = Flaky(failures=1, mode="drop")
    with flaky as url, Client(url, retry=FAST) as client:
        assert client.verify("ep1").reward == 1.0  # a verdict is final: resent
        assert client.get("ep1").id == "ep1"
        assert flaky.seen == {"POST /episodes/ep1/verify": 2, "GET /episodes/ep1": 2}
        with pytest.raises(TransportFailed, match="could not create an episode of world retail after 1 attempt"):
            client.create("retail")  # the create may have happened: never resent
        with pytest.raises(TransportFailed, match="could not fork episode ep1 after 1 attempt"):
            client.fork("ep1")
        assert flaky.seen["POST /episodes"] == 1 and flaky.seen["POST /episodes/ep1/fork"] == 1


def test_a_timeout_is_a_transport_failure() -> None:
    async def slow(request: Request) -> Response:
        await anyio.sleep(1.5)  # longer than the client's timeout
        return JSONResponse(_info("ep1"))

    app = Starlette(routes=[Route("/episodes/{eid}", slow)])
    with serve_in_thread(app) as url, Client(url, timeout=0.2, retry=FAST) as client:
        with pytest.raises(TransportFailed, match="ReadTimeout"):
            client.get("ep1")


@pytest.mark.system
@pytest.mark.anyio
async def test_async_client_against_the_real_server(http_process: str) -> None:
    async with AsyncClient(http_process, "tok") as client:
        episode = await client.create(task=TASK)
        fork = await client.fork(episode)
        assert (await client.state(fork))["state_hash"] == (await client.state(episode))["state_hash"]
        result = await client.call_tool(episode, "find_customer_by_email", {"email": "nobody@example.com"})
        assert result.is_error and "nobody@example.com" in result.text
        verdict = await client.verify(episode, answer="Done.")
        assert verdict.reward == 0.0 and verdict.checks and verdict.state_hash
        assert await client.delete(episode) and await client.delete(fork)
        with pytest.raises(EpisodeNotFound):
            await client.tools(episode)


# -- groups: one request for a GRPO group, an agent on each episode, the verdicts -----------------

GIFT = "gift-card-balance"
GIFT_ANSWER = "You have $329.73 left on your gift card."


@pytest.fixture
def retail_server(serve_http) -> str:
    from mcpsim.tasks import load_tasks
    from mcpsim.world import load_world

    return serve_http([load_world("retail")], tasks={"retail": load_tasks("retail")}).url


def _solve(client: Client, episode) -> str | None:
    """Solves the gift-card task: the two lookups, then the answer."""
    client.call_tool(episode, "find_customer_by_email", {"email": "matthew_murphy198@gmail.com"})
    client.call_tool(episode, "get_customer_details", {"customer_id": "cus_1148152"})
    return GIFT_ANSWER


def test_rollout_group_runs_the_agent_on_each_episode_of_one_start_and_deletes_them(retail_server: str) -> None:
    seen: list[tuple[str, str]] = []

    def agent(client: Client, episode) -> str | None:
        seen.append((episode.id, client.state(episode)["state_hash"]))
        if len(seen) % 2:  # the first and third solve it, the others answer without looking
            return _solve(client, episode)
        return GIFT_ANSWER

    with Client(retail_server, retry=FAST) as client:
        verdicts = client.rollout_group(GIFT, 4, agent, world="retail")
        assert [v.reward for v in verdicts] == [1.0, 0.0, 1.0, 0.0]
        assert len({eid for eid, _ in seen}) == 4 and len({h for _, h in seen}) == 1  # own ids, one start
        assert client.episodes() == []  # deleted afterwards
        with pytest.raises(RuntimeError, match="agent broke"):  # an agent that raises: deleted all the same
            client.rollout_group(
                GIFT, 2, lambda c, e: (_ for _ in ()).throw(RuntimeError("agent broke")), world="retail"
            )
        assert client.episodes() == []
        group = client.create_group(3, "retail", task=GIFT)
        assert {e.task for e in group} == {GIFT} and len({e.id for e in group}) == 3
        with pytest.raises(InvalidRequest, match="group of 65 episodes is over the maximum of 50 live on this server"):
            client.create_group(65, "retail", task=GIFT)
        with pytest.raises(ValueError, match="at least one episode"):
            client.create_group(0, "retail", task=GIFT)
        with pytest.raises(TypeError, match="final answer"):
            client.rollout_group(GIFT, 1, lambda c, e: 42, world="retail")  # type: ignore[arg-type,return-value]
        assert {e.id for e in client.episodes()} == {e.id for e in group}  # only the group made by hand is left


@pytest.mark.anyio
async def test_async_rollout_group_runs_the_agents_at_once_within_the_limit(retail_server: str) -> None:
    running = {"now": 0, "most": 0}
    both = anyio.Event()

    async def agent(client: AsyncClient, episode) -> tuple[str | None, list[dict]]:
        running["now"] += 1
        running["most"] = max(running["most"], running["now"])
        if running["now"] == 2:
            both.set()
        with anyio.fail_after(60):
            await both.wait()  # two at once, or this waits in vain
        found = await client.call_tool(episode, "find_customer_by_email", {"email": "matthew_murphy198@gmail.com"})
        await client.call_tool(episode, "get_customer_details", {"customer_id": "cus_1148152"})
        running["now"] -= 1
        assert found.structured
        return GIFT_ANSWER, [{"role": "assistant", "content": GIFT_ANSWER}]

    async with AsyncClient(retail_server, retry=FAST) as client:
        verdicts = await client.rollout_group(GIFT, 5, agent, world="retail", concurrency=2)
        assert [v.reward for v in verdicts] == [1.0] * 5
        assert running["most"] == 2  # never more than the limit
        assert await client.episodes() == []


# -- jobs: the server runs N rollouts with a built-in agent, the results stream back ----------------


@pytest.fixture
def job_server(templates):
    from mcpsim.runner._jobs import ServerJobs
    from mcpsim.serve._app import build_app
    from mcpsim.serve._host import EpisodeManager
    from mcpsim.world import load_world

    retail = load_world("retail")
    manager = EpisodeManager(templates, max_episodes=20, ttl_seconds=None)
    manager.set_default(retail, 0, "small")
    app = build_app([retail], manager, token="tok")
    app.state.control.jobs = ServerJobs()
    with serve_in_thread(app) as url:
        yield url


def test_run_job_yields_each_rollout_then_the_summary(job_server: str) -> None:
    with Client(job_server, "tok", retry=FAST) as client:
        lines = list(client.run_job([GIFT, TASK], trials=2, agent="oracle", concurrency=2))
        *results, summary = lines
        assert sorted((r["task"], r["trial"]) for r in results) == sorted((t, n) for t in (GIFT, TASK) for n in (0, 1))
        assert all(r["reward"] == 1.0 for r in results)  # the oracle's rollouts, the dialogue task's too
        assert summary["done"] is True and summary["passed"] == 4
        with pytest.raises(InvalidRequest, match="a job's agent is oracle, noop"):
            list(client.run_job([GIFT], agent="my.module:Agent"))
        with pytest.raises(TypeError, match="unexpected keyword arguments: timeout"):
            list(client.run_job([GIFT], timeout=5))  # type: ignore[call-arg]
    with Client(job_server, "wrong", retry=FAST) as client, pytest.raises(Unauthorized):
        list(client.run_job([GIFT]))


@pytest.mark.anyio
async def test_async_run_job_streams_the_same(job_server: str) -> None:
    async with AsyncClient(job_server, "tok", retry=FAST) as client:
        lines = [line async for line in client.run_job([GIFT], trials=3, agent="noop")]
    assert [line.get("reward") for line in lines] == [0.0, 0.0, 0.0, None]
    assert lines[-1]["terminations"] == {"answered": 3}
