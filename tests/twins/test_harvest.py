"""The harvest (`python -m mcpsim.twins harvest`) on servers that need no registry: real child
processes started in the sandbox (`mcpsim.twins._probe`), one of them mcpsim's own stdio server,
the others a small raw JSON-RPC server written here that misbehaves on request. Outcomes are
written per server with the stage and reason of a failure; a second run skips what is done and
says so; the sandbox gives the server only the environment it is given, bounded memory and time,
and (where the machine can make a network namespace) no network."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from mcpsim.twins.__main__ import main as twins_main
from mcpsim.twins._harvest import HarvestEntry, harvest, load_list
from mcpsim.twins._probe import ProbeLimits, network_isolation, probe_server

ROOT = Path(__file__).resolve().parents[2]

FAKE = textwrap.dedent(
    """
    import json, os, socket, sys
    mode = sys.argv[1]
    if mode == "hang":
        sys.stdin.read()
    if mode == "exit":
        print("missing FAKE_TOKEN", file=sys.stderr)
        sys.exit(3)
    if mode == "greedy":
        hoard = bytearray(1024 * 1024 * 1024)  # past the memory limit
    def network():
        try:
            socket.create_connection(("192.0.2.1", 9), timeout=3).close()
            return "reached"
        except OSError as exc:
            return type(exc).__name__
    print("a banner on stdout, not JSON")
    sys.stdout.flush()
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        method, ident = message["method"], message["id"]
        if method == "initialize":
            seen = {"home": os.environ.get("HOME"), "secret": os.environ.get("HARVEST_TEST_SECRET"),
                    "token": os.environ.get("FAKE_TOKEN"), "network": network()}
            result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "fake", "version": "1.2.3"}, "instructions": json.dumps(seen)}
        elif method == "tools/list":
            cursor = (message.get("params") or {}).get("cursor")
            schema = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                      "properties": {"q": {"type": "string", "default": None}}, "additionalProperties": False}
            tool = {"name": "second" if cursor else "first", "inputSchema": schema}
            result = {"tools": [tool]} | ({} if cursor else {"nextCursor": "page-2"})
        if mode == "refuse" and method == "tools/list":
            reply = {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "no tools here"}}
        else:
            reply = {"jsonrpc": "2.0", "id": ident, "result": result}
        print(json.dumps(reply))
        sys.stdout.flush()
    """
)


@pytest.fixture
def fake(tmp_path: Path) -> Path:
    path = tmp_path / "fake_server.py"
    path.write_text(FAKE)
    return path


def entry(package: str, command: list[str], **more) -> HarvestEntry:
    return HarvestEntry(package=package, registry="command", command=command, **more)


LIMITS = ProbeLimits(cpu_s=120, wall_s=120.0, memory_bytes=512 * 1024**2)


def test_a_server_is_listed_raw_and_sandboxed(fake, tmp_path, monkeypatch):
    monkeypatch.setenv("HARVEST_TEST_SECRET", "must not reach the server")
    result = probe_server(
        [sys.executable, str(fake), "ok"],
        env={"FAKE_TOKEN": "dummy", "HOME": str(tmp_path)},
        cwd=tmp_path,
        limits=LIMITS,
    )
    assert result.failure is None, result.stderr
    assert result.server_info == {"name": "fake", "version": "1.2.3"}
    assert [t["name"] for t in result.tools] == ["first", "second"]  # both pages
    assert result.tools[0]["inputSchema"]["$schema"].startswith("http://json-schema.org")  # byte for byte
    assert result.tools[0]["inputSchema"]["properties"]["q"] == {"type": "string", "default": None}
    seen = json.loads(result.initialize["instructions"])
    assert seen["secret"] is None and seen["token"] == "dummy" and seen["home"] == str(tmp_path)
    if network_isolation():
        assert result.isolated and seen["network"] != "reached"


@pytest.mark.parametrize(
    ("mode", "stage", "reason"),
    [
        ("exit", "start", "exited (code 3) before answering initialize"),
        ("refuse", "protocol", "tools/list answered an error"),
        ("greedy", "start", "exited"),
    ],
)
def test_a_failing_server_says_where_and_why(fake, tmp_path, mode, stage, reason):
    result = probe_server([sys.executable, str(fake), mode], env={}, cwd=tmp_path, limits=LIMITS)
    assert result.failure is not None and result.failure.startswith(f"{stage}: ") and reason in result.failure
    if mode == "exit":
        assert "missing FAKE_TOKEN" in result.stderr
    if mode == "greedy":
        assert "MemoryError" in result.stderr


def test_a_silent_server_is_stopped_at_the_wall_clock_limit(fake, tmp_path):
    limits = ProbeLimits(cpu_s=60, wall_s=2.0, memory_bytes=512 * 1024**2)
    result = probe_server([sys.executable, str(fake), "hang"], env={}, cwd=tmp_path, limits=limits)
    assert result.failure == "timeout: no answer to initialize within the wall-clock limit"


def test_a_command_that_does_not_exist(tmp_path):
    result = probe_server([str(tmp_path / "nothing")], env={}, cwd=tmp_path, limits=LIMITS, isolate=[])
    assert result.failure is not None and result.failure.startswith("start: cannot run")


def test_the_harvest_writes_outcomes_and_resumes(fake, tmp_path):
    servers = [
        entry(
            "mcpsim-library",
            [sys.executable, "-m", "mcpsim", "gen", "--serve", str(ROOT / "examples/specs/library.yaml")],
        ),
        entry("fake-ok", [sys.executable, str(fake), "ok"], env={"FAKE_TOKEN": "dummy-{workdir}"}),
        entry("fake-exit", [sys.executable, str(fake), "exit"]),
    ]
    out, said = tmp_path / "results", []
    assert harvest(servers, out, limits=LIMITS, say=said.append) == {"harvested": 3, "skipped": 0}
    library = json.loads((out / "command-mcpsim-library.json").read_text())
    assert library["outcome"] == "listed" and library["tool_count"] == len(library["tools"]) > 3
    assert library["server_info"]["name"] == "mcpsim-library"
    ok = json.loads((out / "command-fake-ok.json").read_text())
    token = json.loads(ok["initialize"]["instructions"])["token"]
    assert token.startswith("dummy-/") and token.endswith("/scratch")  # {workdir} filled in
    failed = json.loads((out / "command-fake-exit.json").read_text())
    assert (failed["outcome"], failed["stage"]) == ("failed", "start") and "missing FAKE_TOKEN" in failed["stderr"]
    index = json.loads((out / "index.json").read_text())
    assert (index["servers"], index["listed"], index["failed"]) == (3, 2, 1)
    assert index["tools"] == library["tool_count"] + 2
    row = next(r for r in index["results"] if r["package"] == "fake-exit")
    assert row["last_stderr_line"] == "missing FAKE_TOKEN"  # why, at a glance

    said.clear()
    assert harvest(servers, out, limits=LIMITS, say=said.append) == {"harvested": 0, "skipped": 3}
    assert "skipped fake-exit: already failed (command-fake-exit.json)" in said
    assert harvest(servers, out, limits=LIMITS, retry_failed=True, say=said.append) == {"harvested": 1, "skipped": 2}


def test_the_committed_list_reads_and_the_command_line_harvests(fake, tmp_path, capsys):
    seeded = load_list(ROOT / "benchmarks" / "harvest" / "servers.json")
    assert len(seeded) >= 20 and {e.registry for e in seeded} == {"npm", "pypi"}
    assert len({e.slug for e in seeded}) == len(seeded)
    listing = tmp_path / "servers.json"
    listing.write_text(
        json.dumps(
            {"servers": [{"package": "fake", "registry": "command", "command": [sys.executable, str(fake), "ok"]}]}
        )
    )
    assert twins_main(["harvest", str(listing), "--out", str(tmp_path / "out"), "--wall", "120"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1]) == {"harvested": 1, "skipped": 0}
    with pytest.raises(ValueError, match="registry"):
        HarvestEntry.model_validate({"package": "x", "registry": "cargo"})
    with pytest.raises(ValueError, match="package"):
        HarvestEntry.model_validate({"package": "../x; rm -rf /", "registry": "npm"})
