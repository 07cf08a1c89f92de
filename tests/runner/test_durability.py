"""Scripts are not misled (issue 11, item 8): `mcpsim run --server` fails when the server dies
under it; `--record DIR` writes each episode as it ends (fsynced) and, after a kill -9, a
restarted server writes each episode that was live with the calls it had made; the runner's HTTP client retries
keep-alive resets on requests that may be sent twice, and never on a POST that may have applied."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client

from mcpsim.runner import _backends as backends
from mcpsim.runner._backends import BackendError, HttpBackend
from mcpsim.tasks import load_tasks
from mcpsim.trajectories._records import Trajectory
from mcpsim.world._registry import load_world
from tests.conftest import CLEAN_ENV, free_port, spawn_retail_http, wait_until_healthy

pytestmark = pytest.mark.anyio


@contextmanager
def server_process(log_path: Path, *args: str, port: int | None = None) -> Iterator[tuple[str, subprocess.Popen]]:
    """`mcpsim serve retail --http --no-auth ARGS` as a real process; yields its URL and process."""
    port = port or free_port()
    log = log_path.open("ab")
    proc = spawn_retail_http(port, log, "--no-auth", *args)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, proc, log_path, tries=900)  # bounded to about 90 s on a busy machine
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=30)
        log.close()


# -- 1. run --server fails when the server dies ---------------------------------------------------


@pytest.mark.system
def test_run_against_a_server_that_dies_exits_3_and_says_how_many_episodes_and_why(tmp_path):
    tasks = [t.id for t in load_tasks("retail").tasks[:6]]
    out = tmp_path / "run"
    with server_process(tmp_path / "server.log") as (url, server):
        run = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mcpsim",
                "run",
                "retail",
                "--server",
                url,
                "--agent",
                "oracle",
                "--tasks",
                ",".join(tasks),
                "--concurrency",
                "1",
                "--timeout",
                "60",
                "--out",
                str(out),
            ],
            env=CLEAN_ENV,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        journal = out / "trajectories.jsonl"
        deadline = time.monotonic() + 240
        while not (journal.exists() and journal.read_bytes().count(b"\n") >= 1):  # one episode done
            assert run.poll() is None, run.communicate()
            assert time.monotonic() < deadline, "no episode finished"
            time.sleep(0.05)
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=30)
        stdout, stderr = run.communicate(timeout=300)
    lines = [Trajectory.model_validate_json(line) for line in journal.read_text().splitlines()]
    failed = [t for t in lines if t.termination == "server_error"]
    assert lines[0].termination != "server_error" and lines[0].reward == 1.0
    assert len(lines) == len(tasks) and failed, [(t.task_id, t.termination) for t in lines]
    assert run.returncode == 3, (run.returncode, stderr.decode()[-2000:])
    message = stderr.decode()
    assert f"{len(failed)} of {len(tasks)} episodes of this run ended in infrastructure" in message, message
    assert f"the server at {url} failed or could not be reached" in message


def test_run_help_documents_the_exit_codes():
    result = subprocess.run(
        [sys.executable, "-m", "mcpsim", "run", "--help"], env=CLEAN_ENV, capture_output=True, text=True, timeout=120
    )
    assert "Exit codes:" in result.stdout and "3  more than --max-failures episodes" in result.stdout


# -- 2. --record: written as episodes end, recovered after a kill -9 ------------------------------


async def _episode_with_calls(http: httpx.AsyncClient, task_id: str, calls: list[tuple[str, dict]]) -> str:
    info = (await http.post("/episodes", json={"world": "retail", "task": task_id})).json()
    async with Client(info["mcp_url"]) as client:
        for tool, arguments in calls:
            await client.call_tool(tool, arguments)
    return info["id"]


async def _episode_with_a_call(http: httpx.AsyncClient, task_id: str) -> str:
    return await _episode_with_calls(http, task_id, [("list_product_categories", {})])


@pytest.mark.system
def test_record_writes_an_episode_when_it_is_graded_and_recovers_the_calls_of_live_ones_after_sigkill(tmp_path):
    record = tmp_path / "rec"
    jsonl = record / "trajectories.jsonl"
    task = load_tasks("retail").tasks[0]
    port = free_port()
    # The live episode's calls: the gold solution up to its first write, then a refused call.
    world = load_world("retail")
    first_write = next(i for i, a in enumerate(task.gold) if world.tools[a.tool].writes)
    live_calls = [(a.tool, a.args) for a in task.gold[: first_write + 1]] + [
        ("get_order_details", {"order_id": "#W0000000"})
    ]

    async def before_crash(url: str) -> tuple[str, str, dict]:
        async with httpx.AsyncClient(base_url=url, timeout=60) as http:
            with anyio.fail_after(120):
                graded = await _episode_with_a_call(http, task.id)
                verdict = (await http.post(f"/episodes/{graded}/verify", json={"answer": None})).json()
                assert "reward" in verdict
                live = await _episode_with_calls(http, task.id, live_calls)
                served = (await http.get(f"/episodes/{live}/trajectory")).json()
        return graded, live, served

    with server_process(tmp_path / "server.log", "--record", str(record), port=port) as (url, server):
        graded, live, served = anyio.run(before_crash, url)
        # Written as it was graded, not when it is deleted: still live on the server.
        (line,) = jsonl.read_text().splitlines()
        first = Trajectory.model_validate_json(line)
        assert first.episode_id == graded and first.verdict is not None and len(first.calls) == 1
        assert (record / "live" / f"{live}.jsonl").exists()
        server.send_signal(signal.SIGKILL)  # mid-episode: the live one was never ended
        server.wait(timeout=30)
    assert len(jsonl.read_text().splitlines()) == 1  # the live episode's calls are in its live journal only

    with server_process(tmp_path / "server.log", "--record", str(record), port=port) as (url, server):
        lines = [Trajectory.model_validate_json(x) for x in jsonl.read_text().splitlines()]
        assert [t.episode_id for t in lines] == [graded, live]  # the graded one is not written twice
        lost = lines[1]
        assert lost.status == "error" and lost.termination == "server_error" and lost.task_id == task.id
        assert lost.world == "retail" and lost.world_version and "stopped abruptly" in (lost.error or "")
        # Every call, as the server saw it before the crash: arguments, results, errors, row changes.
        assert [c.tool for c in lost.calls] == [tool for tool, _ in live_calls]
        assert [c.model_dump(mode="json") for c in lost.calls] == served["calls"]
        assert lost.calls[first_write].ok and lost.calls[first_write].changes and not lost.calls[-1].ok
        assert lost.messages[0].role == "system" and len(lost.messages) == 1 + 2 * len(live_calls)
        assert not list((record / "live").glob("*.jsonl"))
    # A clean stop after the restart records nothing twice.
    assert [Trajectory.model_validate_json(x).episode_id for x in jsonl.read_text().splitlines()] == [graded, live]


def test_an_ended_episode_is_written_at_end_and_again_only_when_a_verdict_arrives(tmp_path):
    from mcpsim.serve._app import ServeConfig, create_app, serve_in_thread

    task_id = load_tasks("retail").tasks[0].id
    app = create_app(ServeConfig(world="retail", scale="small", record_dir=str(tmp_path), no_auth=True))

    async def drive(url: str) -> str:
        async with httpx.AsyncClient(base_url=url, timeout=60) as http:
            with anyio.fail_after(120):
                episode = await _episode_with_a_call(http, task_id)
                assert (await http.post(f"/episodes/{episode}/end")).status_code == 200
                ended = [json.loads(x) for x in (tmp_path / "trajectories.jsonl").read_text().splitlines()]
                assert [(t["episode_id"], t["verdict"]) for t in ended] == [(episode, None)]
                await http.post(f"/episodes/{episode}/verify", json={"answer": None})
                await http.post(f"/episodes/{episode}/verify", json={"answer": "again"})  # final: no new line
                assert (await http.delete(f"/episodes/{episode}")).status_code == 204
        return episode

    with serve_in_thread(app) as url:
        episode = anyio.run(drive, url)
    lines = [Trajectory.model_validate_json(x) for x in (tmp_path / "trajectories.jsonl").read_text().splitlines()]
    assert [t.episode_id for t in lines] == [episode, episode]
    assert lines[0].verdict is None and lines[1].verdict is not None


def test_recovery_drops_a_line_cut_short_by_a_crash(tmp_path):
    from mcpsim.trajectories._journal import Journal, LiveHeader
    from mcpsim.trajectories._served import Recorder

    whole = Trajectory(
        episode_id="a", world="retail", world_version="v", agent="x", status="completed", termination="recorded"
    ).model_dump_json()
    (tmp_path / "trajectories.jsonl").write_text(whole + "\n" + whole[:40])
    journal = Journal(tmp_path)  # the torn line goes as the journal opens
    journal.start_live(LiveHeader(episode_id="b", world="retail", world_version="v"))
    recorder = Recorder(tmp_path)
    assert recorder.recovered == ["b"]
    ids = [
        Trajectory.model_validate_json(x).episode_id for x in (tmp_path / "trajectories.jsonl").read_text().splitlines()
    ]
    assert ids == ["a", "b"]


# -- 3. keep-alive resets are retried only where that is safe -------------------------------------


class DropFirst:
    """A loopback HTTP server that reads each request and, for the first `drops` connections,
    closes the connection without answering (a keep-alive reset); later ones get a JSON 200."""

    def __init__(self, drops: int) -> None:
        self.drops = drops
        self.requests: list[str] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> DropFirst:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self.sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(5)
                data = b""
                try:
                    while b"\r\n\r\n" not in data:
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                except OSError:
                    continue
                head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1")
                length = next(
                    (int(h.split(":", 1)[1]) for h in head.split("\r\n") if h.lower().startswith("content-length:")), 0
                )
                body = data.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in data else b""
                while len(body) < length:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    body += chunk
                self.requests.append(head.split("\r\n", 1)[0])
                if self.drops > 0:
                    self.drops -= 1
                    continue  # closed without a response
                payload = b'{"ok": true}'
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                    b"Content-Length: " + str(len(payload)).encode() + b"\r\n\r\n" + payload
                )


@pytest.fixture
def quick_retries(monkeypatch):
    monkeypatch.setattr(backends, "RESET_BACKOFF_S", 0.0)


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/episodes/e1/trajectory"), ("DELETE", "/episodes/e1"), ("POST", "/episodes/e1/verify")],
)
async def test_a_reset_is_retried_on_requests_that_may_be_sent_twice(method, path, quick_retries):
    with DropFirst(drops=2) as server:
        backend = HttpBackend(server.url)
        try:
            with anyio.fail_after(60):
                assert await backend._json(method, path, **({"json": {}} if method == "POST" else {})) == {"ok": True}
        finally:
            await backend.aclose()
    assert server.requests == [f"{method} {path} HTTP/1.1"] * 3


@pytest.mark.parametrize("path", ["/episodes", "/episodes/e1/end", "/episodes/e1/fork"])
async def test_a_post_that_may_have_been_applied_is_never_resent(path, quick_retries):
    with DropFirst(drops=1) as server:
        backend = HttpBackend(server.url)
        try:
            with anyio.fail_after(60), pytest.raises(BackendError, match="disconnected|reset|closed"):
                await backend._json("POST", path, json={"world": "retail"})
        finally:
            await backend.aclose()
    assert server.requests == [f"POST {path} HTTP/1.1"]


async def test_resets_that_persist_fail_after_the_bounded_retries(quick_retries):
    with DropFirst(drops=10) as server:
        backend = HttpBackend(server.url)
        try:
            with anyio.fail_after(60), pytest.raises(BackendError):
                await backend._json("GET", "/episodes/e1/trajectory")
        finally:
            await backend.aclose()
    assert len(server.requests) == 1 + backends.RESET_RETRIES
