"""`mcpsim record URL`, `mcpsim gen --from-mcp URL --recording` and `mcpsim fidelity` end to end on a
real third-party streamable HTTP server: `@modelcontextprotocol/server-everything` (pinned in
.ci/run, installed into .ci/node), run with `streamableHttp` on a free loopback port. The SDK's
client drives it through the recorder; the recording pairs every request with its answer; the twin
built from the URL and the recording mirrors every tool with an equal input schema; replaying the
recording against the twin gives sane fidelity figures. .ci/run sets
MCPSIM_THIRD_PARTY_SERVERS=required, so in CI a missing server fails instead of skipping.

Why the loopback shim: the server's express app calls `app.listen(PORT)`, which binds every
interface, and our servers in tests bind 127.0.0.1 only. The test writes a small preload (`node
--require`) that turns a `listen(port, ...)` without a host into `listen(port, "127.0.0.1", ...)`,
then checks in /proc/net/tcp{,6} that the port listens on 127.0.0.1 and nowhere else."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client

from benchmarks import twins
from mcpsim.cli import main
from mcpsim.twins._twin_spec import load_twin
from mcpsim.twins._world import check_twin
from mcpsim.twins.recordings._stdio import load_recording
from tests.conftest import CLEAN_ENV
from tests.twins.recordings.test_record_http import recorder

pytestmark = pytest.mark.system

REQUIRED = os.environ.get("MCPSIM_THIRD_PARTY_SERVERS") == "required"
PACKAGE = "@modelcontextprotocol/server-everything@2026.8.31"
# where benchmarks/twins.py finds the npm servers (.ci/node, or MCPSIM_NODE_BIN's node_modules)
ENTRY = twins.NODE_BIN.parent / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
PIN_TO_LOOPBACK = """\
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const port = args[0];
  const numeric = typeof port === "number" || (typeof port === "string" && /^\\d+$/.test(port));
  if (numeric && typeof args[1] !== "string") args.splice(1, 0, "127.0.0.1");
  return listen.apply(this, args);
};
"""
# A call that succeeds, the arithmetic tool, another echo, and one the server refuses (a string
# where get-sum wants a number): the error comes back as the tool's result, `isError: true`.
STEPS: list[tuple[str, dict[str, Any]]] = [
    ("echo", {"message": "hello twin"}),
    ("get-sum", {"a": 2, "b": 3}),
    ("echo", {"message": "second"}),
    ("get-sum", {"a": "two", "b": 3}),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listening(port: int) -> set[str]:
    """The local addresses (hex, as the kernel writes them) listening on PORT, IPv4 and IPv6."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            address, hex_port = fields[1].rsplit(":", 1)
            if fields[3] == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.add(address)
    return found


@contextmanager
def everything_server(work: Path) -> Iterator[str]:
    """server-everything over streamable HTTP on a free 127.0.0.1 port; yields its /mcp URL, and
    stops the node process however the block ends."""
    node = shutil.which("node")
    if node is None or not ENTRY.exists():
        reason = f"{PACKAGE} is not installed at {ENTRY}, or node is missing (.ci/run installs it)"
        if REQUIRED:
            pytest.fail(reason)
        pytest.skip(reason)
    shim = work / "pin-to-loopback.cjs"
    shim.write_text(PIN_TO_LOOPBACK)
    port = _free_port()
    env = {**CLEAN_ENV, "PORT": str(port)}
    log = work / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [node, "--require", str(shim), str(ENTRY), "streamableHttp"],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=work,
        )
    try:
        deadline = time.monotonic() + 120  # bounded: a loaded machine starts node slowly
        while not _listening(port):
            assert proc.poll() is None, f"server-everything exited {proc.returncode}: {log.read_text()}"
            assert time.monotonic() < deadline, f"server-everything did not listen on {port}: {log.read_text()}"
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


async def drive(url: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The SDK's client (legacy handshake, with a session): the tools it lists and each call's result."""
    with anyio.fail_after(120):
        async with Client(url, mode="legacy", read_timeout_seconds=120) as client:
            tools = [
                t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in (await client.list_tools()).tools
            ]
            results = []
            for tool, args in STEPS:
                result = await client.call_tool(tool, args)
                results.append(result.model_dump(mode="json", by_alias=True, exclude={"meta"}))
    return tools, results


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("everything")
    out = work / "rec"
    twin = work / "everything.twin.json"
    with ExitStack() as stack:
        real = stack.enter_context(everything_server(work))
        port = int(real.rsplit(":", 1)[1].split("/")[0])
        listening = _listening(port)
        proxied = stack.enter_context(recorder(real, out))
        tools, results = anyio.run(drive, proxied)
        done = CliRunner().invoke(
            main, ["gen", "--from-mcp", proxied, "--recording", str(out), "--out", str(twin)], catch_exceptions=False
        )
        assert done.exit_code == 0, done.output
    return {"listening": listening, "out": out, "twin": twin, "tools": tools, "results": results}


def test_the_server_listens_on_loopback_only(session):
    assert session["listening"] == {"0100007F"}  # 127.0.0.1, and no 0.0.0.0 or :: socket


def test_the_recording_pairs_each_request_with_its_answer(session):
    results = session["results"]
    assert results[0]["content"][0]["text"] == "Echo: hello twin" and not results[0]["isError"]
    assert "5" in results[1]["content"][0]["text"] and not results[1]["isError"]
    assert results[3]["isError"] and not any(r["isError"] for r in results[:3])

    out = session["out"]
    lines = [json.loads(line) for line in (out / "calls.jsonl").read_text().splitlines()]
    assert [line["seq"] for line in lines] == list(range(1, len(lines) + 1))
    assert not [line for line in lines if "unparsed" in line]  # the SDK's priming SSE events carry no message
    # the server's session id for the test's client, on each of its messages; `gen` opens its own later
    ours = next(line for line in lines if line.get("method") == "initialize")["session"]
    first = [line for line in lines if "method" in line][: 3 + len(STEPS)]
    assert ours and all(line["session"] == ours for line in first)
    requests = [line for line in lines if "id" in line and line.get("from") == "client" and line.get("session") == ours]
    assert [r["method"] for r in requests] == ["initialize", "tools/list", *["tools/call"] * len(STEPS)]
    assert all(r["http_status"] == 200 and "result" in r and r["duration_ms"] >= 0 for r in requests)
    calls = requests[2:]
    assert [c["params"]["name"] for c in calls] == [tool for tool, _ in STEPS]
    # each call's recorded answer is the one the client got
    assert [[c["text"] for c in call["result"]["content"]] for call in calls] == [
        [c["text"] for c in r["content"]] for r in results
    ]
    assert [call["result"].get("isError", False) for call in calls] == [r["isError"] for r in results]
    listed = requests[1]["result"]["tools"]
    assert {t["name"] for t in listed} == {t["name"] for t in session["tools"]}

    # `gen`'s client tries the 2026-07-28 handshake first; the server refuses it with an HTTP 400,
    # recorded as the request's error, and the client falls back to a legacy session.
    discover = next(line for line in lines if line.get("method") == "server/discover")
    assert discover["http_status"] == 400 and discover["error"]["message"].startswith("HTTP 400: ")
    assert "session" not in discover

    recording = load_recording(out)
    assert [c.tool for c in recording.calls] == [tool for tool, _ in STEPS]
    assert [c.is_error for c in recording.calls] == [False, False, False, True]
    assert (
        recording.server["name"]
        == json.loads(next(line for line in (out / "calls.jsonl").read_text().splitlines() if '"initialize"' in line))[
            "result"
        ]["serverInfo"]["name"]
    )
    meta = json.loads((out / "meta.json").read_text())
    assert meta["transport"] == "http" and meta["url"].endswith("/mcp")


def test_the_twin_mirrors_every_tool_with_an_equal_input_schema(session):
    check = anyio.run(check_twin, load_twin(session["twin"]), session["tools"])
    assert check["tools"] == len(session["tools"]) >= len({tool for tool, _ in STEPS})
    assert check["mirrored"] == check["schemas_equal"] == check["tools"], (check["missing"], check["schema_differs"])
    assert check["answers_ok"] == check["tools"], check["answers"]  # sample answers valid against real output schemas


def test_fidelity_replays_the_http_recording(session):
    out = session["out"]
    done = CliRunner().invoke(main, ["fidelity", str(session["twin"]), str(out)])
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)[str(out)]
    assert report["calls"] == len(STEPS)
    # each recorded call succeeds or fails in the twin too, with a result of the same shape
    assert report["same_outcome"] == report["same_shape"] == 1.0, report["differences"]
    assert report["per_tool"]["echo"] == {"calls": 2, "same_outcome": 2, "same_shape": 2, "same_values": 2}
    # the only value that differs is the refusal's wording (the twin validates with its own words)
    assert report["same_values"] == 0.75
    [differs] = report["differences"]
    assert differs["arguments"] == STEPS[3][1] and differs["recorded_error"] and differs["twin_error"]
