"""`mcpsim record URL`: a recording proxy in front of a real streamable HTTP MCP server, run as the
CLI's own process. Behind it: mcpsim's data plane on the SDK's transport answering in SSE streams
with session ids (a twin, so its recording can seed a twin and measure it), and `mcpsim serve
retail --http` (JSON answers, its Host check, a bearer token). The SDK's client goes through it
in both protocols (2026-07-28 and the legacy handshake); `mcpsim gen --from-mcp --recording` and
`mcpsim fidelity` then read the HTTP recording."""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from click.testing import CliRunner
from mcp import Client, types
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel
from starlette.responses import JSONResponse, PlainTextResponse

from mcpsim.cli import main
from mcpsim.engine._episode import Episode
from mcpsim.serve._app import serve_in_thread
from mcpsim.serve._mcp import build_server
from mcpsim.twins._infer import infer_twin
from mcpsim.twins._world import compile_twin
from mcpsim.twins.recordings._http import EventReader, proxy_url
from mcpsim.twins.recordings._stdio import Recorder, load_recording
from tests.conftest import CLEAN_ENV, MCP_INITIALIZE
from tests.support.commands import mcpsim_argv
from tests.twins.recordings.test_record import NOTE
from tests.twins.test_twin import SURFACE

STEPS = [
    ("notes_create_notes", {"notes": [NOTE]}),
    ("notes_read_note", {"title": "Nope"}),
    ("notes_search_notes", {"query": "milk"}),
    ("notes_delete_notes", {"titles": "not a list"}),
]
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@contextmanager
def notes_server() -> Iterator[str]:
    """The notes twin's MCP server on the SDK's streamable HTTP transport: SSE answers, sessions."""
    world = compile_twin(infer_twin(SURFACE))
    episode = Episode.create(world, 0, "default")
    app = build_server(world, lambda _id: episode).streamable_http_app(json_response=False, host="127.0.0.1")
    try:
        with serve_in_thread(app) as url:
            yield f"{url}/mcp"
    finally:
        episode.close()


@contextmanager
def recorder(url: str, out: Path) -> Iterator[str]:
    """`mcpsim record --out OUT URL` as a process; yields the URL it prints, stops it with SIGTERM."""
    command = mcpsim_argv("record", "--out", str(out), url)
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=CLEAN_ENV, text=True) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        line = proc.stdout.readline().strip()  # once it listens; a process that fails prints nothing
        try:
            assert line.startswith("http://127.0.0.1:"), proc.stderr.read()
            yield line
        finally:
            proc.terminate()
            try:
                _, err = proc.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                raise
        assert proc.returncode == 0, err


async def session(url: str, mode: str, headers: dict[str, str] | None = None) -> list[dict]:
    """The SDK's client over streamable HTTP; each answer as the client saw it."""
    seen = []
    with anyio.fail_after(120):
        client = Client(url, mode=mode, read_timeout_seconds=120, **({"headers": headers} if headers else {}))
        async with client:
            await client.list_tools()
            for tool, args in STEPS:
                result = await client.call_tool(tool, args)
                seen.append(result.model_dump(mode="json", exclude={"meta"}))
    return seen


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict], list[dict], Path, Path]:
    """The same two sessions (2026-07-28, then legacy) straight to one server and through the
    recorder to another (the same world and seed); the recording, and a twin seeded from it by
    `mcpsim gen --from-mcp URL --recording` through the proxy."""
    work = tmp_path_factory.mktemp("http")
    out = work / "rec"
    with ExitStack() as stack:
        direct_url = stack.enter_context(notes_server())
        proxied = stack.enter_context(recorder(stack.enter_context(notes_server()), out))
        direct = [*anyio.run(session, direct_url, "auto"), *anyio.run(session, direct_url, "legacy")]
        through = [*anyio.run(session, proxied, "auto"), *anyio.run(session, proxied, "legacy")]
        raw = httpx.post(proxied, json=MCP_INITIALIZE, headers=ACCEPT)  # what a legacy client sees, by hand
        assert raw.status_code == 200 and raw.headers["content-type"].startswith("text/event-stream")
        assert raw.headers["mcp-session-id"] and '"serverInfo"' in raw.text
        twin = work / "notes.twin.json"
        done = CliRunner().invoke(
            main, ["gen", "--from-mcp", proxied, "--recording", str(out), "--out", str(twin)], catch_exceptions=False
        )
        assert done.exit_code == 0, done.output
    return direct, through, out, twin


@pytest.mark.system
def test_the_proxy_passes_sse_and_sessions_through_and_records_them(recorded):
    direct, through, out, _ = recorded
    assert through == direct  # the client cannot tell the proxy is there, in either protocol

    lines = [json.loads(line) for line in (out / "calls.jsonl").read_text().splitlines()]
    assert [line["seq"] for line in lines] == list(range(1, len(lines) + 1))
    calls = [line for line in lines if line.get("method") == "tools/call"]
    assert len(calls) == 8
    assert all(c["from"] == "client" and c["duration_ms"] >= 0 and c["http_status"] == 200 for c in calls)
    assert "session" not in calls[0]  # 2026-07-28 has no sessions
    legacy = {c["session"] for c in calls[4:]}
    assert len(legacy) == 1 and None not in legacy  # the legacy session's id, on each of its calls
    assert [line["method"] for line in lines if line.get("session") in legacy][:2] == [
        "initialize",
        "notifications/initialized",
    ]
    assert calls[1]["result"]["isError"] and "Note Nope not found" in calls[1]["result"]["content"][0]["text"]
    meta = json.loads((out / "meta.json").read_text())
    assert meta["transport"] == "http" and meta["url"].endswith("/mcp") and meta["listen"].endswith("/mcp")

    recording = load_recording(out)
    assert [c.tool for c in recording.calls] == [tool for tool, _ in STEPS] * 2
    assert [c.is_error for c in recording.calls] == [False, True, False, True] * 2
    assert recording.server["name"] == "mcpsim-notes_server"


@pytest.mark.system
def test_a_twin_seeded_from_an_http_recording_replays_it(recorded):
    """`gen --from-mcp URL --recording DIR` learns from the HTTP recording; `mcpsim fidelity` replays it."""
    _, _, out, twin = recorded
    spec = json.loads(twin.read_text())
    read = next(t for t in spec["tools"] if t["name"] == "notes_read_note")
    assert read["not_found"] == "Note {key} not found" and spec["synthetic_rows"] == 0
    done = CliRunner().invoke(main, ["fidelity", str(twin), str(out)])
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)[str(out)]
    assert report | {"per_tool": None} == {
        "calls": 8,
        "same_outcome": 1.0,
        "same_shape": 1.0,
        "same_values": 1.0,
        "per_tool": None,
        "differences": [],
    }


class Answer(BaseModel):
    ok: bool


def asker() -> MCPServer:
    """An MCP server written with the SDK whose one tool asks the client a question."""
    server = MCPServer("asker")

    @server.tool()
    async def confirm(question: str, ctx: Context) -> str:
        result = await ctx.elicit(question, Answer)
        return f"{result.action}: {getattr(result, 'data', None)}"

    return server


async def _accept(context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"ok": True})


@pytest.mark.system
def test_a_servers_request_on_the_stream_is_paired_with_the_clients_answer(tmp_path):
    """An SDK server whose tool asks the client (elicitation, legacy protocol): its request comes
    on the tool call's SSE stream, the client's answer in a POST of its own; both are recorded,
    paired, though each side numbers its requests from 1."""

    async def use(url: str) -> str:
        with anyio.fail_after(120):
            async with Client(url, mode="legacy", elicitation_callback=_accept, read_timeout_seconds=120) as client:
                result = await client.call_tool("confirm", {"question": "Sure?"})
                return "\n".join(getattr(c, "text", "") for c in result.content)

    out = tmp_path / "rec"
    with serve_in_thread(asker().streamable_http_app(host="127.0.0.1")) as url, recorder(f"{url}/mcp", out) as proxied:
        assert anyio.run(use, proxied) == "accept: ok=True"
    lines = [json.loads(line) for line in (out / "calls.jsonl").read_text().splitlines()]
    asked = next(line for line in lines if line.get("method") == "elicitation/create")
    call = next(line for line in lines if line.get("method") == "tools/call")
    assert asked["from"] == "server" and asked["params"]["message"] == "Sure?" and asked["id"] == 1
    assert asked["result"] == {"action": "accept", "content": {"ok": True}}
    assert call["result"]["content"][0]["text"] == "accept: ok=True" and asked["session"] == call["session"]
    assert not any("orphan_response" in line for line in lines)


@pytest.mark.system
def test_a_real_mcpsim_http_server_behind_the_recorder(http_process, tmp_path):
    """`mcpsim serve retail --http`: its Host check passes (the proxy names the real host), an
    episode's own path and JSON answers go through, and an HTTP error
    without a JSON-RPC answer to the request is recorded against the request it ended."""
    auth = {"Authorization": "Bearer tok"}
    created = httpx.post(f"{http_process}/episodes", json={"world": "retail", "seed": 3}, headers=auth)
    assert created.status_code == 201, created.text
    episode_url = created.json()["mcp_url"]
    out = tmp_path / "rec"
    with recorder(f"{http_process}/mcp", out) as proxied:
        assert proxied == proxy_url(f"{http_process}/mcp", int(proxied.split(":")[2].split("/")[0]))

        async def use() -> tuple[list[str], str]:
            url = proxied.replace("/mcp", episode_url.removeprefix(http_process))  # any path goes through
            with anyio.fail_after(120):
                async with Client(url, read_timeout_seconds=120) as client:
                    tools = [t.name for t in (await client.list_tools()).tools]
                    result = await client.call_tool("calculate", {"expression": "2 + 3"})
                    return tools, "\n".join(getattr(c, "text", "") for c in result.content)

        tools, answer = anyio.run(use)
        assert "calculate" in tools and "5" in answer
        missing = httpx.post(proxied.replace("/mcp", "/episodes/nope/mcp"), json=MCP_INITIALIZE, headers=ACCEPT)
        assert missing.status_code == 404 and "does not exist" in missing.text
    lines = [json.loads(line) for line in (out / "calls.jsonl").read_text().splitlines()]
    calls = [line for line in lines if line.get("method") == "tools/call"]
    assert len(calls) == 1 and calls[0]["params"]["name"] == "calculate" and not calls[0]["result"].get("isError")
    ended = [line for line in lines if line.get("method") == "initialize"]
    assert [line["http_status"] for line in ended] == [404]
    assert all(line["error"]["message"].startswith(f"HTTP {line['http_status']}") for line in ended)


class Guarded:
    """An upstream that wants a token in its query string (and records what reached it)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app, self.token, self.seen = app, token, []

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode(): v.decode() for k, v in scope["headers"]}
            self.seen.append((scope["query_string"].decode(), headers.get("authorization"), headers.get("origin")))
            if scope["query_string"].decode() != f"token={self.token}":
                await PlainTextResponse("no token", status_code=401)(scope, receive, send)
                return
        await self.app(scope, receive, send)


@contextmanager
def guarded_notes_server(token: str) -> Iterator[tuple[str, Guarded]]:
    world = compile_twin(infer_twin(SURFACE))
    episode = Episode.create(world, 0, "default")
    app = Guarded(build_server(world, lambda _id: episode).streamable_http_app(host="127.0.0.1"), token)
    try:
        with serve_in_thread(app) as url:  # type: ignore[arg-type]
            yield url, app
    finally:
        episode.close()


@pytest.mark.system
def test_the_proxy_refuses_other_sites_and_keeps_no_secrets(tmp_path):
    """A page on another site (DNS rebinding: its name resolves to 127.0.0.1) reaches nothing
    through the proxy, whatever its Host or Origin; the proxy's own names do. The real server
    gets the URL's credentials and token; meta.json keeps neither."""
    token = "tok-7f3a9c"
    out = tmp_path / "rec"
    with guarded_notes_server(token) as (base, upstream):
        real = base.replace("http://", "http://alice:s3cr3t@") + f"/mcp?token={token}"
        with recorder(real, out) as proxied:
            assert proxied.endswith(f"/mcp?token={token}")
            port = int(proxied.split(":")[2].split("/")[0])
            for headers, refused in [
                ({"host": f"evil.example:{port}"}, f"Host header 'evil.example:{port}' is not this proxy's"),
                ({"host": f"127.0.0.1:{port + 1}"}, "is not this proxy's"),
                ({"host": f"localhost:{port}.evil.example"}, "is not this proxy's"),
                ({"origin": "http://evil.example"}, "Origin 'http://evil.example' may not use this proxy"),
                ({"origin": f"http://evil.example:{port}"}, "may not use this proxy"),
                ({"origin": f"http://127.0.0.1:{port + 1}"}, "may not use this proxy"),
            ]:
                answer = httpx.post(proxied, json=MCP_INITIALIZE, headers=ACCEPT | headers)
                assert answer.status_code == 403 and refused in answer.text, (headers, answer.text)
                assert "DNS-rebinding" in answer.text
            assert upstream.seen == []  # nothing went through
            for headers in [{}, {"host": f"localhost:{port}", "origin": f"http://localhost:{port}"}]:
                answer = httpx.post(proxied, json=MCP_INITIALIZE, headers=ACCEPT | headers)
                assert answer.status_code == 200 and '"serverInfo"' in answer.text, answer.text
            assert len(anyio.run(session, proxied, "auto")) == len(STEPS)  # a whole session goes through
    basic = "Basic " + base64.b64encode(b"alice:s3cr3t").decode()
    assert upstream.seen and all(q == f"token={token}" and auth == basic for q, auth, _ in upstream.seen)
    assert upstream.seen[1][2] == f"http://localhost:{port}"  # an allowed Origin goes on untouched
    meta = json.loads((out / "meta.json").read_text())
    assert meta["url"] == f"{base}/mcp" and meta["listen"] == f"http://127.0.0.1:{port}/mcp"
    for written in out.iterdir():
        text = written.read_text()
        assert "s3cr3t" not in text and token not in text and "alice" not in text, written.name


@pytest.mark.system
def test_an_unreachable_server_is_a_502_and_a_recorded_error(tmp_path):
    upstream = "http://alice:s3cr3t@127.0.0.1:{port}/mcp?token=t0ken"  # credentials never reach the disk
    with socket_free() as port, recorder(upstream.format(port=port), tmp_path / "rec") as proxied:
        answer = httpx.post(proxied, json=MCP_INITIALIZE, headers=ACCEPT)
    assert answer.status_code == 502 and "cannot reach" in answer.text
    (line,) = [json.loads(line) for line in (tmp_path / "rec" / "calls.jsonl").read_text().splitlines()]
    assert line["method"] == "initialize" and line["http_status"] == 502 and "cannot reach" in line["error"]["message"]
    for written in (tmp_path / "rec").iterdir():
        assert "s3cr3t" not in written.read_text() and "t0ken" not in written.read_text(), written.name


@pytest.mark.system
def test_an_http_error_with_a_json_rpc_error_for_no_id_keeps_its_code(tmp_path):
    """A server that refuses a request with an HTTP error whose body is a JSON-RPC error answering
    `"id": null` (as SDK servers do for a bad session or protocol): the request is recorded with
    that error's code and message, not as an opaque HTTP error; a plain error page has no code."""
    refusal = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Bad Request: no session"}}

    async def upstream(scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        page = scope["path"].endswith("/page")
        response = PlainTextResponse("down for maintenance", 503) if page else JSONResponse(refusal, 400)
        await response(scope, receive, send)

    out = tmp_path / "rec"
    with serve_in_thread(upstream) as url, recorder(f"{url}/mcp", out) as proxied:
        answer = httpx.post(proxied, json=MCP_INITIALIZE, headers=ACCEPT)
        assert answer.status_code == 400 and answer.json() == refusal  # passed through as it came
    with serve_in_thread(upstream) as url, recorder(f"{url}/page", tmp_path / "page") as proxied:
        assert httpx.post(proxied, json=MCP_INITIALIZE, headers=ACCEPT).status_code == 503
    (line,) = [json.loads(line) for line in (out / "calls.jsonl").read_text().splitlines()]
    assert line["method"] == "initialize" and line["http_status"] == 400
    assert line["error"] == {"code": -32600, "message": "HTTP 400: Bad Request: no session"}
    (page,) = [json.loads(line) for line in (tmp_path / "page" / "calls.jsonl").read_text().splitlines()]
    assert page["error"] == {"code": None, "message": "HTTP 503: down for maintenance"}


@contextmanager
def socket_free() -> Iterator[int]:
    """A port nothing listens on (bound, not listening, while the block runs)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


def test_the_record_command_refuses_a_bad_url_and_a_busy_port(tmp_path):
    done = CliRunner().invoke(main, ["record", "--out", str(tmp_path), "http://"])
    assert done.exit_code == 2 and "not an http(s) URL" in done.output
    with socket_free() as port:
        done = CliRunner().invoke(main, ["record", "--out", str(tmp_path), "--port", str(port), "http://127.0.0.1:1/"])
    assert done.exit_code == 1 and f"cannot listen on 127.0.0.1:{port}" in done.output


def test_http_messages_pair_by_exchange_and_session(tmp_path):
    """A client's request is answered in its HTTP exchange; a server's request (an elicitation on
    the session's stream) by a later POST of the same session, whatever ids the other side uses."""
    rec = Recorder(tmp_path)
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "arguments": {}}}
    ask = {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {"message": "sure?"}}
    rec.see("client", json.dumps(call).encode(), exchange="x1", session="s")
    rec.see("client", json.dumps(call | {"id": 1}).encode(), exchange="x2", session="t")  # another session, same id
    rec.see("server", json.dumps(ask).encode(), exchange="x1", session="s", status=200)
    rec.see(
        "client",
        json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"action": "accept"}}).encode(),
        exchange="x3",
        session="s",
    )
    rec.see(
        "server", json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}).encode(), exchange="x2", status=200
    )
    rec.fail("x1", "HTTP 500", 500)
    rec.close()
    lines = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert [(x["from"], x["method"], x.get("session"), "result" in x) for x in lines] == [
        ("server", "elicitation/create", "s", True),
        ("client", "tools/call", "t", True),
        ("client", "tools/call", "s", False),
    ]
    assert lines[2]["error"] == {"code": None, "message": "HTTP 500"} and lines[2]["http_status"] == 500


def test_sse_events_are_read_across_chunks():
    reader = EventReader()
    assert reader.feed(b'event: message\r\ndata: {"a":') == []
    assert reader.feed(b" 1}\r\n\r\n: comment\n\nid: 7\ndata: [1,\ndata: 2]\n\n") == [b'{"a": 1}', b"[1,\n2]"]
