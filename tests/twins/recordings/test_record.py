"""`mcpsim record`: a real stdio proxy between the SDK's client and a real MCP server (a twin
served by `mcpsim gen --serve`, so no third-party package is needed here), what a twin learns from
a recording (data, messages, fault kinds), and the fidelity report. The third-party servers are in
tests/twins/test_twin_servers.py."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client, StdioServerParameters

from mcpsim.cli import main
from mcpsim.engine._episode import Episode
from mcpsim.engine._faults import load_profile
from mcpsim.twins._infer import infer_twin
from mcpsim.twins._world import compile_twin
from mcpsim.twins.recordings._stdio import (
    Recording,
    fault_kind,
    fidelity,
    learn,
    load_recording,
    record,
    shape,
    template,
)
from tests.conftest import CLEAN_ENV
from tests.support.commands import mcpsim_argv
from tests.twins.test_twin import SURFACE

pytestmark = pytest.mark.anyio
MCPSIM = mcpsim_argv()
NOTE = {"title": "Groceries", "body": "milk and bread", "tags": ["home"]}


@pytest.fixture(scope="module")
def twin_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("twin") / "notes.twin.json"
    path.write_text(infer_twin(SURFACE).model_dump_json())
    return path


@pytest.fixture(scope="module")
def recorded(twin_file: Path) -> tuple[list[dict], list[dict], Path]:
    """The same client session straight to the server and through `mcpsim record`."""
    server = [*MCPSIM, "gen", "--serve", str(twin_file)]
    out = twin_file.parent / "rec"
    direct = anyio.run(session, server)
    through = anyio.run(session, [*MCPSIM, "record", "--out", str(out), "--", *server])
    return direct, through, out


async def session(command: list[str]) -> list[dict]:
    """A client session: the SDK's client over stdio; each answer as the client saw it."""
    params = StdioServerParameters(command=command[0], args=command[1:], env=CLEAN_ENV)
    seen = []
    with anyio.fail_after(120):
        async with Client(params, read_timeout_seconds=120) as client:
            await client.list_tools()
            for tool, args in [
                ("notes_create_notes", {"notes": [NOTE]}),
                ("notes_read_note", {"title": "Nope"}),
                ("notes_search_notes", {"query": "milk"}),
                ("notes_delete_notes", {"titles": "not a list"}),
                ("notes_delete_notes", {"titles": ["Groceries"]}),
            ]:
                result = await client.call_tool(tool, args)
                seen.append(result.model_dump(mode="json", exclude={"meta"}))
    return seen


@pytest.mark.system
def test_the_proxy_passes_everything_through_and_records_it(recorded, twin_file):
    direct, through, out = recorded
    assert through == direct  # the client cannot tell the proxy is there

    lines = [json.loads(line) for line in (out / "calls.jsonl").read_text().splitlines()]
    methods = [line.get("method") for line in lines]
    assert methods[0] == "server/discover" and "tools/list" in methods  # the SDK's client speaks 2026-07-28 first
    calls = [line for line in lines if line.get("method") == "tools/call"]
    assert len(calls) == 5
    assert all(c["from"] == "client" and c["duration_ms"] >= 0 and c["started"] for c in calls)
    assert calls[1]["result"]["isError"] and "Note Nope not found" in calls[1]["result"]["content"][0]["text"]
    assert [line["seq"] for line in lines] == list(range(1, len(lines) + 1))
    meta = json.loads((out / "meta.json").read_text())
    assert meta["command"] == [*MCPSIM, "gen", "--serve", str(twin_file)] and meta["transport"] == "stdio"

    recording = load_recording(out)
    assert [c.tool for c in recording.calls][:2] == ["notes_create_notes", "notes_read_note"]
    assert [c.is_error for c in recording.calls] == [False, True, False, True, False]
    assert {t["name"] for t in recording.tools} == {t["name"] for t in SURFACE.tools}
    assert recording.server["name"] == "mcpsim-notes_server"


@pytest.mark.system
async def test_a_twin_of_a_recorded_server_replays_it_faithfully(recorded):
    recording = load_recording(recorded[2])
    spec = learn(infer_twin(SURFACE), [recording])
    read = spec.tool("notes_read_note")
    assert read.not_found == "Note {key} not found"  # learned, as a template, without the SDK's prefix
    assert spec.synthetic_rows == 0 and spec.faults is None
    report = await fidelity(spec, recording)
    assert report.to_json() | {"per_tool": None} == {
        "calls": 5,
        "same_outcome": 1.0,
        "same_shape": 1.0,
        "same_values": 1.0,
        "per_tool": None,
        "differences": [],
    }


@pytest.mark.system
async def test_fidelity_names_what_differs(recorded):
    recording = load_recording(recorded[2])
    spec = infer_twin(SURFACE)
    search = spec.tool("notes_search_notes")
    wrong = search.model_copy(update={"operation": search.operation.model_copy(update={"query": None})})
    spec = spec.model_copy(update={"tools": [wrong if t.name == wrong.name else t for t in spec.tools]})
    report = await fidelity(spec.model_copy(update={"synthetic_rows": 2}), recording)
    assert report.totals["calls"] == 5 and report.totals["same_outcome"] == 5
    assert report.totals["same_values"] < 5  # the synthetic notes show up in the search and the create
    tools = {d["tool"] for d in report.differences}
    assert "notes_search_notes" in tools


def test_learning_turns_recorded_errors_into_faults_and_messages(tmp_path):
    lines = [
        {"method": "tools/list", "result": {"tools": SURFACE.tools}},
        *[
            {
                "method": "tools/call",
                "params": {"name": "notes_sync", "arguments": {}},
                "result": {"content": [{"type": "text", "text": text}], "isError": error},
            }
            for text, error in [
                ("Rate limit exceeded, retry later", True),
                ("synced 3 notes", False),
                ("Request timed out", True),
                ("synced 0 notes", False),
            ]
        ],
        {
            "method": "tools/call",
            "params": {"name": "notes_read_note", "arguments": {"title": "Ghost"}},
            "result": {"content": [{"type": "text", "text": "No note titled 'Ghost'"}], "isError": True},
        },
        {
            "method": "tools/call",
            "params": {"name": "notes_sync", "arguments": {}},
            "error": {"code": -32603, "message": "upstream unavailable (503)"},
        },
    ]
    (tmp_path / "calls.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines) + '{"method": "tools/ca')
    recording = load_recording(tmp_path)  # the torn last line is dropped
    assert len(recording.calls) == 6 and recording.calls[-1].protocol_error is not None
    spec = learn(infer_twin(SURFACE), [recording])
    assert spec.faults == {
        "name": "notes_server-recorded",
        "rules": [{"tools": "notes_sync", "rates": {"rate_limit": 0.2, "timeout": 0.2, "transient": 0.2}}],
    }
    profile = load_profile(spec.faults)
    assert profile is not None and profile.rules[0].rates.timeout == 0.2
    assert spec.tool("notes_read_note").not_found == "No note titled '{key}'"
    assert [a.text for a in spec.answers["notes_sync"]] == ["synced 3 notes", "synced 0 notes"]

    world = compile_twin(spec)
    episode = Episode.create(world, 0, "default")
    episode.set_faults(profile)
    results = [episode.call("notes_sync", {}) for _ in range(30)]
    assert {r.fault["kind"] for r in results if r.fault} >= {"timeout", "rate_limit", "transient"}
    answered = [r.value for r in results if not r.is_error]
    assert answered[0] == "synced 3 notes" and set(answered) == {"synced 3 notes"}  # the first answer of the same call
    assert episode.call("notes_read_note", {"title": "Ghost"}).error == "No note titled 'Ghost'"


def test_message_templates_and_shapes():
    args = {"path": "/data/a.txt", "edits": [{"oldText": "milk"}], "n": 3}
    assert template("Wrote /data/a.txt (milk)", args) == "Wrote {args.path} ({key})"
    assert fault_kind("ETIMEDOUT connecting") == "timeout" and fault_kind("File not found") is None
    assert shape({"a": [1, {"b": "x"}], "c": None}) == {"a": ["list", "number", {"b": "text"}], "c": "null"}
    assert shape([]) == ["list"]


class Kept(io.BytesIO):
    """The client's side of the proxy: what it was sent, readable after the proxy closed it."""

    closed_by_proxy = False

    def close(self) -> None:
        self.closed_by_proxy = True


def test_record_refuses_a_missing_command(tmp_path):
    done = CliRunner().invoke(main, ["record", "--out", str(tmp_path)])
    assert done.exit_code == 2 and "Missing argument" in done.output
    done = CliRunner().invoke(main, ["record", "--out", str(tmp_path), "--", str(tmp_path / "no-such-server")])
    assert done.exit_code == 1 and "cannot start" in done.output


def test_unparsed_lines_pass_through_and_are_kept(tmp_path):
    echo = [sys.executable, "-c", "import sys\nfor line in sys.stdin: sys.stdout.write(line); sys.stdout.flush()"]
    payload = b'not json\n{"jsonrpc": "2.0", "method": "notifications/x", "params": {"k": "\\u00e9"}}\n'
    out = Kept()
    code = record(echo, tmp_path / "rec", stdin=io.BytesIO(payload), stdout=out)
    assert code == 0 and out.getvalue() == payload and out.closed_by_proxy  # EOF to the client
    lines = [json.loads(line) for line in (tmp_path / "rec" / "calls.jsonl").read_text().splitlines()]
    assert {"from": "client", "unparsed": "not json"}.items() <= lines[0].items()
    assert lines[1]["method"] == "notifications/x" and lines[1]["params"] == {"k": "é"}


def test_an_empty_recording_has_no_calls(tmp_path):
    (tmp_path / "calls.jsonl").write_text("")
    assert load_recording(tmp_path) == Recording(tmp_path)


def test_a_server_that_ignores_the_client_leaving_is_stopped(tmp_path, monkeypatch):
    """The client hangs up (stdin closed); a server that stays is terminated after the grace."""
    from mcpsim.twins.recordings import _stdio as recording

    monkeypatch.setattr(recording, "EXIT_GRACE_S", 0.5)
    stubborn = [sys.executable, "-c", "import sys, time\nsys.stdin.read()\ntime.sleep(600)"]
    code = recording.record(stubborn, tmp_path / "rec", stdin=io.BytesIO(b""), stdout=io.BytesIO())
    assert code != 0  # terminated
    assert (tmp_path / "rec" / "calls.jsonl").read_text() == ""
