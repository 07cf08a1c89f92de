"""Inputs that cannot reach the filesystem or crash: fault profiles by name or inline only, every
profile number bounded, strict JSON bodies on the control plane, and invalid Unicode in tool
arguments refused as an invalid argument wherever it comes in."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anyio
import httpx
import pytest
import yaml
from mcp import Client

from mcpsim.engine._episode import Episode
from mcpsim.engine._faults import BUILTIN, FaultProfile, FaultProfileError, load_profile, profile_from_request
from mcpsim.engine._templates import TemplateCache
from mcpsim.runner._backends import InProcessBackend
from mcpsim.runner._run import RunConfig, run_episodes
from mcpsim.runner._users import ScriptedUser
from mcpsim.serve._host import EpisodeManager
from mcpsim.serve._mcp import build_server
from mcpsim.tasks import load_tasks
from mcpsim.trajectories._records import FunctionCall, Message, ToolCall, Trajectory
from tests.conftest import MCP_INITIALIZE
from tests.support.records import a_trajectory

pytestmark = pytest.mark.anyio

LEDGER = {"world": "ledger", "seed": 1, "scale": "small"}


def hostile_file(folder: Path, name: str = "secret.yaml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(yaml.safe_dump({"name": "topsecret", "page_size": 77, "retry_after_s": 41}))
    return path


# -- fault profiles from requests -----------------------------------------------------------------


async def test_a_file_path_in_faults_is_refused_without_reading_it_or_telling_whether_it_exists(
    serve_http, ledger, tmp_path
):
    existing = hostile_file(tmp_path)
    missing = tmp_path / "nothing-here.yaml"
    live = serve_http([ledger])
    answers = []
    async with httpx.AsyncClient(base_url=live.url) as http:
        for spec in (str(existing), str(missing), "secret", "../secret.yaml", "/etc/passwd"):
            r = await http.post("/episodes", json={**LEDGER, "faults": spec})
            assert r.status_code == 422, r.text
            answers.append(r.json()["error"])
    assert len(set(answers)) == 1  # the same answer whether or not the file exists
    assert all(name in answers[0] for name in BUILTIN)
    assert "topsecret" not in answers[0] and "77" not in answers[0] and "41" not in answers[0]
    assert len(live.manager) == 0


def test_profile_from_request_never_opens_a_path(tmp_path, monkeypatch):
    existing = hostile_file(tmp_path)
    opened: list[str] = []
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: opened.append(str(self)) or "")
    with pytest.raises(FaultProfileError, match="unknown fault profile"):
        profile_from_request(str(existing))
    assert opened == []


async def test_profiles_are_named_from_the_operators_faults_dir_only(serve_http, ledger, tmp_path):
    folder = tmp_path / "profiles"
    hostile_file(folder, "slowpay.yaml")
    hostile_file(tmp_path / "elsewhere", "outside.yaml")
    live = serve_http([ledger], faults_dirs=[str(folder)])
    async with httpx.AsyncClient(base_url=live.url) as http:
        ok = await http.post("/episodes", json={**LEDGER, "faults": "slowpay"})
        assert ok.status_code == 201, ok.text
        assert ok.json()["faults"] == "topsecret"
        for spec in ("outside", "../elsewhere/outside", str(folder / "slowpay.yaml")):
            r = await http.post("/episodes", json={**LEDGER, "faults": spec})
            assert r.status_code == 422, (spec, r.text)
            assert "slowpay" in r.json()["error"] and "flaky" in r.json()["error"]  # what may be named
        builtin = await http.post("/episodes", json={**LEDGER, "faults": "flaky"})
        assert builtin.status_code == 201
    assert live.manager.get(ok.json()["id"]).faults.page_size == 77


def test_the_cli_still_loads_a_profile_file_the_operator_names(tmp_path):
    path = hostile_file(tmp_path)
    assert load_profile(str(path)).page_size == 77


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"latency_s": [0, 1_000_000], "real_delay": True}, "less than or equal to 60"),
        ({"latency_s": [5, 1]}, "lo <= hi"),
        ({"latency_s": [float("nan"), 1]}, "finite"),
        ({"latency_s": [0, float("inf")]}, "finite"),
        ({"retry_after_s": 10**9}, "less than or equal to 60"),
        ({"stale_window": 10**6}, "less than or equal to 20"),
        ({"page_size": 10**6}, "less than or equal to 100"),
        ({"truncate_at": 10**12}, "less than or equal to 100000"),
        ({"rules": [{"rates": {"transient": 1.5}}]}, "less than or equal to 1"),
        ({"rules": [{"rates": {"transient": float("nan")}}]}, "finite"),
        ({"script": [{"tool": "x", "call": 10**12, "fault": "transient"}]}, "less than or equal to 100000"),
        ({"script": [{"tool": "x", "call": 1, "fault": "transient"}] * 1001}, "at most 1000"),
    ],
)
def test_every_number_of_a_profile_is_bounded(fields, fragment):
    with pytest.raises(FaultProfileError, match="invalid inline fault profile") as caught:
        profile_from_request({"name": "x", **fields})
    assert fragment in str(caught.value)


def test_the_builtin_profiles_stay_within_the_bounds():
    for profile in BUILTIN.values():
        assert FaultProfile.model_validate(profile.model_dump()) == profile


async def test_an_unbounded_inline_profile_gets_422_over_http(serve_http, ledger):
    live = serve_http([ledger])
    async with httpx.AsyncClient(base_url=live.url) as http:
        r = await http.post(
            "/episodes", json={**LEDGER, "faults": {"name": "slow", "real_delay": True, "latency_s": [0, 1_000_000]}}
        )
    assert r.status_code == 422 and "less than or equal to 60" in r.json()["error"]
    assert len(live.manager) == 0


# -- strict JSON bodies ---------------------------------------------------------------------------


def nested(depth: int) -> bytes:
    return b'{"world": "ledger", "faults": ' + b"[" * depth + b"]" * depth + b"}"


def seed(raw: bytes) -> bytes:
    """An episode request whose seed is `raw` JSON."""
    return b'{"world": "ledger", "seed": ' + raw + b"}"


@pytest.mark.parametrize(
    ("body", "status", "fragment"),
    [
        (b"{not json", 400, "not valid JSON"),
        (b"[1, 2]", 400, "JSON object"),
        (b'{"world": "ledger", "colour": "red"}', 422, "Extra inputs"),
        (b'{"world": "atlantis"}', 422, "unknown world 'atlantis'"),
        (b'{"world": "ledger", "scale": "galactic"}', 422, "no scale 'galactic'"),
        (b"{}", 422, "no default world"),
        (b'{"world": "ledger", "scale": "\xff\xfe"}', 400, "not valid UTF-8"),
        (b'{"world": "ledger", "scale": "\xed\xb3\xbf"}', 400, "not valid UTF-8"),  # a surrogate, UTF-8-encoded
        (b'{"world": "ledger", "scale": "\\udcff"}', 422, "lone surrogate"),
        (b'{"world": "ledger", "\\ud800": 1}', 422, "lone surrogate"),
        (seed(b"-1"), 422, "greater than or equal"),
        (seed(b'"x"'), 422, "valid integer"),
        (seed(b"1e400"), 422, "finite"),
        (seed(b"-1e400"), 422, "finite"),
        (seed(b"NaN"), 422, "NaN"),
        (seed(b"Infinity"), 422, "Infinity"),
        (seed(b"-Infinity"), 422, "Infinity"),
        (seed(b"1.5"), 422, "valid integer"),
        (seed(b"9" * 5000), 422, "unreadable value"),
        (b'{"world": "' + b"x" * 100_000 + b'"}', 413, "larger than"),
        (nested(33), 422, "nested more than 32"),
        (nested(1000), 422, "nested more than 32"),
        (nested(30_000), 422, "nested more than 32"),
    ],
)
async def test_malformed_bodies_get_a_4xx_with_the_reason_never_a_500(serve_http, ledger, body, status, fragment):
    live = serve_http([ledger])
    async with httpx.AsyncClient(base_url=live.url) as http:
        r = await http.post("/episodes", content=body, headers={"content-type": "application/json"})
    assert r.status_code == status, r.text
    assert fragment in r.text or fragment in r.json()["error"]
    assert len(live.manager) == 0


def test_a_body_declared_too_large_is_refused_before_it_is_read(serve_http, ledger):
    import socket
    from urllib.parse import urlsplit

    live = serve_http([ledger])
    url = urlsplit(live.url)
    with socket.create_connection((url.hostname, url.port), timeout=20) as sock:
        sock.sendall(
            b"POST /episodes HTTP/1.1\r\nHost: " + url.netloc.encode() + b"\r\nContent-Type: "
            b"application/json\r\nContent-Length: 1000000000\r\n\r\n{}"
        )
        answer = ""
        while "larger than" not in answer:  # answered without waiting for the gigabyte
            chunk = sock.recv(65536).decode()
            if not chunk:
                break
            answer += chunk
    assert answer.startswith("HTTP/1.1 413") and "larger than" in answer


async def test_verify_bodies_are_parsed_as_strictly(serve_http, ledger):
    live = serve_http([ledger])
    async with httpx.AsyncClient(base_url=live.url) as http:
        ep = (await http.post("/episodes", json=LEDGER)).json()
        for body, fragment in (
            (b'{"answer": NaN}', "NaN"),
            (b'{"answer": "\\udcff"}', "lone surrogate"),
            (b'{"messages": ' + b"[" * 100 + b"]" * 100 + b"}", "nested"),
        ):
            r = await http.post(
                f"/episodes/{ep['id']}/verify", content=body, headers={"content-type": "application/json"}
            )
            assert r.status_code == 422 and fragment in r.json()["error"], r.text


# -- invalid Unicode in tool arguments ------------------------------------------------------------


def test_a_lone_surrogate_argument_is_an_invalid_argument_and_stores_nothing_unencodable(ledger, templates):
    ep = Episode.create(ledger, seed=1, scale="small", templates=templates)
    before = ep.state_hash()
    result = ep.call("open_account", {"owner": "Ada \udcff"})
    assert result.is_error and not result.bug and "lone surrogate" in result.error
    assert "arguments.owner" in result.error
    unknown = ep.call("no_such_tool_\udcff", {"\ud800": ["\udfff"]})
    assert unknown.is_error and not unknown.bug
    assert ep.state_hash() == before and not ep.flagged
    transcript = ep.transcript()
    assert transcript[0].arguments == {"owner": "Ada \ufffd"}
    assert transcript[1].tool == "no_such_tool_\ufffd" and transcript[1].arguments == {"\ufffd": ["\ufffd"]}
    json.dumps([r._asdict() for r in transcript], ensure_ascii=False).encode("utf-8")  # encodes


async def test_over_mcp_in_memory_a_lone_surrogate_is_a_tool_error(ledger, templates):
    ep = Episode.create(ledger, seed=1, scale="small", templates=templates)
    server = build_server(ledger, lambda _id: ep)
    with anyio.fail_after(20):
        async with Client(server) as client:
            result = await client.call_tool("open_account", {"owner": "\udcff"})
            # refused as an invalid argument (by the SDK's own argument check, or by the episode)
            assert result.is_error and (
                "surrogate" in result.content[0].text or "string_unicode" in result.content[0].text
            )
            ok = await client.call_tool("open_account", {"owner": "Grace"})
            assert not ok.is_error  # the server goes on serving
    assert [r.ok for r in ep.transcript()] in ([True], [False, True]) and not ep.flagged


async def test_over_http_a_lone_surrogate_is_refused_and_the_trajectory_still_answers(serve_http, ledger):
    live = serve_http([ledger])
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    async with httpx.AsyncClient(base_url=live.url) as http:
        ep = (await http.post("/episodes", json=LEDGER)).json()
        before = (await http.get(f"/episodes/{ep['id']}/state")).json()["state_hash"]
        mcp = f"/episodes/{ep['id']}/mcp"
        init = await http.post(
            mcp,
            headers=headers,
            json=MCP_INITIALIZE,
        )
        assert init.status_code == 200, init.text
        session = {"mcp-protocol-version": "2025-06-18"}
        if sid := init.headers.get("mcp-session-id"):
            session["mcp-session-id"] = sid
        await http.post(
            mcp, headers={**headers, **session}, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
        )
        r = await http.post(
            mcp,
            headers={**headers, **session},
            content=(
                b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", '
                b'"params": {"name": "open_account", "arguments": {"owner": "\\udcff"}}}'
            ),
        )
        assert r.status_code < 500, r.text
        assert "surrogate" in r.text  # a JSON-RPC parse error, or the tool's own invalid-argument error
        trajectory = await http.get(f"/episodes/{ep['id']}/trajectory")
        assert trajectory.status_code == 200, trajectory.text
        after = (await http.get(f"/episodes/{ep['id']}/state")).json()["state_hash"]
    assert after == before


class SurrogateAgent:
    """Calls a real tool with a lone surrogate: escaped in the JSON (as a model would send it)
    and, on the next step, as a raw code point in the arguments string."""

    name = "surrogate"
    needs_task = False

    async def aclose(self) -> None:
        pass

    async def respond(self, turn) -> Message:
        raws = ['{"email": "\\udcff@example.com"}', '{"email": "\udcff@example.com"}']
        if turn.step < len(raws):
            return Message(
                role="assistant",
                content="\udcff thinking",
                tool_calls=[
                    ToolCall(
                        id=f"c{turn.step}",
                        function=FunctionCall(name="find_customer_by_email", arguments=raws[turn.step]),
                    )
                ],
            )
        return Message(role="assistant", content="done \udcff")


async def test_an_in_process_run_with_a_lone_surrogate_finishes_and_writes_its_journal(tmp_path):
    task = load_tasks("retail").tasks[0]
    backend = InProcessBackend(EpisodeManager(TemplateCache(), ttl_seconds=None))
    with anyio.fail_after(120):
        result = await run_episodes(
            RunConfig(world="retail", tasks=[task], out=tmp_path, concurrency=1), backend, SurrogateAgent, ScriptedUser
        )
    assert result.ran == 1
    (line,) = (tmp_path / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()
    trajectory = Trajectory.model_validate_json(line)
    assert trajectory.status == "completed" and trajectory.error is None
    assert len(trajectory.calls) == 2 and not trajectory.calls[0].ok
    assert "lone surrogate" in trajectory.calls[0].error
    assert "\ufffd" in trajectory.messages[-1].content
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_a_trajectory_with_a_lone_surrogate_still_serialises():
    messages = [Message(role="user", content="\ud800")]
    t = a_trajectory(status="error", termination="agent_error", error="boom \udcff", messages=messages)
    assert json.loads(t.model_dump_json())["error"] == "boom \ufffd"
