"""Recording a streamable HTTP MCP server: a reverse proxy on 127.0.0.1 that passes every request
and response through (JSON bodies, SSE streams, the `Mcp-Session-Id` header and every other one)
and records each JSON-RPC message as `mcpsim.twins.recordings._stdio`'s stdio proxy does, in the same
format (`calls.jsonl`), so learning and fidelity read HTTP recordings as they read stdio ones.

A request goes to the same path and query on the real server's origin; its `Host` header names
the real server (as any reverse proxy's does) and `Accept-Encoding` asks for an unencoded body,
so the proxy can read a copy of what it passes on. Bodies are passed as they come, chunk by
chunk: an SSE stream reaches the client event by event.

The proxy listens on loopback, and serves only a request whose `Host` names it there
(`127.0.0.1:PORT` or `localhost:PORT`) and whose `Origin`, if it has one, is that address too:
a page in the user's browser whose name resolves to 127.0.0.1 (DNS rebinding) is refused with
403, so it can neither drive the real server through the proxy nor read its answers (the proxy
rewrites `Host`, so the real server's own Host check cannot see such a page). `meta.json` keeps
the real server's URL without credentials or query (a token there stays out of the recording)."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import signal
import socket
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import uvicorn

from mcpsim.serve import HostOriginGuard
from mcpsim.twins.recordings._stdio import META_FILE, Recorder

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

HOST = "127.0.0.1"
SESSION_HEADER = "mcp-session-id"
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
    }
)
SHUTDOWN_GRACE_S = 5  # open streams (a client's GET stream) are cut after this on Ctrl-C
UPSTREAM_TIMEOUT = httpx.Timeout(connect=30.0, read=None, write=60.0, pool=60.0)  # SSE streams stay open
EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


def sse_data(event: bytes) -> bytes | None:
    """The data of one server-sent event (its `data:` lines joined), or None if it has none or only
    empty data (a stream's priming event: an `id` for resumption, no message)."""
    lines = re.split(rb"\r\n|\n|\r", event)
    data = [line[5:].removeprefix(b" ") for line in lines if line.startswith(b"data:")]
    joined = b"\n".join(data)
    return joined if joined.strip() else None


class EventReader:
    """Server-sent events from the chunks of a stream, as they complete."""

    def __init__(self) -> None:
        self.buffer = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        self.buffer += chunk
        found = []
        while (end := EVENT_END.search(self.buffer)) is not None:
            event, self.buffer = self.buffer[: end.start()], self.buffer[end.end() :]
            if (data := sse_data(event)) is not None:
                found.append(data)
        return found


class RecordingProxy:
    """An ASGI app that forwards every HTTP request to `upstream`'s origin and records the MCP
    messages both ways in `recorder`."""

    def __init__(self, upstream: str, recorder: Recorder, port: int) -> None:
        self.origin, self.host = origin_of(upstream)
        self.recorder = recorder
        self.port = port
        here = [f"{HOST}:{port}", f"localhost:{port}"]  # the names the proxy is reached by
        self.guard = HostOriginGuard(self, allowed_hosts=here, allowed_origins=[f"http://{h}" for h in here])
        self.exchanges = itertools.count(1)
        self.client: httpx.AsyncClient | None = None

    async def aclose(self) -> None:
        if self.client is not None:
            await self.client.aclose()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # no lifespan, no websockets: MCP has neither
            return
        if (refused := self._refused(scope)) is not None:
            await _answer(send, 403, refused)
            return
        body = b""
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        exchange = f"x{next(self.exchanges)}"
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        session = next((v for k, v in headers if k.lower() == SESSION_HEADER), None)
        if body:
            self.recorder.see("client", body, exchange=exchange, session=session)
        forwarded = [(k, v) for k, v in headers if k.lower() not in HOP_BY_HOP | {"host", "accept-encoding"}]
        forwarded += [("host", self.host), ("accept-encoding", "identity")]
        path = scope.get("raw_path") or scope["path"].encode()
        url = (
            self.origin
            + path.decode("latin-1")
            + (f"?{scope['query_string'].decode()}" if scope["query_string"] else "")
        )
        if self.client is None:
            self.client = httpx.AsyncClient(timeout=UPSTREAM_TIMEOUT, follow_redirects=False)
        request = self.client.build_request(scope["method"], url, headers=forwarded, content=body)
        try:
            response = await self.client.send(request, stream=True)
        except httpx.HTTPError as exc:
            said = str(exc).replace(url, without_secrets(url)).replace(self.origin, without_secrets(self.origin))
            text = f"mcpsim record: cannot reach {without_secrets(self.origin)}: {said}"  # recorded: no credentials
            self.recorder.fail(exchange, text, 502)
            await _answer(send, 502, text)
            return
        try:
            await self._relay(response, exchange, session, receive, send)
        finally:
            await response.aclose()

    def _refused(self, scope: Scope) -> str | None:
        """Why a request is not served (its Host or Origin names another site: DNS rebinding), or None."""
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host, origin = headers.get("host"), headers.get("origin")
        here = f"http://{HOST}:{self.port} or http://localhost:{self.port}"
        if not self.guard.host_allowed(host):
            return (
                f"mcpsim record: Host header {_shown(host)} is not this proxy's (DNS-rebinding protection); use {here}"
            )
        if not self.guard.origin_allowed(origin):
            return (
                f"mcpsim record: a page from Origin {_shown(origin)} may not use this proxy "
                f"(DNS-rebinding protection); only {here} may"
            )
        return None

    async def _relay(
        self, response: httpx.Response, exchange: str, session: str | None, receive: Receive, send: Send
    ) -> None:
        session = response.headers.get(SESSION_HEADER, session)  # initialize's answer assigns it
        status = response.status_code
        headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in HOP_BY_HOP]
        streaming = response.headers.get("content-type", "").startswith("text/event-stream")
        if not streaming:  # a JSON body (or an error page): whole, with its length
            body = await response.aread()
            if body.strip():
                self._seen(body, exchange, session, status)
            headers.append(("content-length", str(len(body))))
            await send({"type": "http.response.start", "status": status, "headers": _encoded(headers)})
            await send({"type": "http.response.body", "body": body})
            self._unanswered(exchange, status, body)
            return
        await send({"type": "http.response.start", "status": status, "headers": _encoded(headers)})
        events = EventReader()
        gone = asyncio.Event()

        async def watch() -> None:  # the client hanging up ends the relay of a stream it no longer reads
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()

        watcher = asyncio.ensure_future(watch())
        try:
            async for chunk in _until(response.aiter_raw(), gone):
                for data in events.feed(chunk):
                    self.recorder.see("server", data, exchange=exchange, session=session, status=status)
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            if not gone.is_set():
                await send({"type": "http.response.body", "body": b""})
        finally:
            watcher.cancel()

    def _seen(self, body: bytes, exchange: str, session: str | None, status: int) -> None:
        """Record a JSON body if it holds JSON-RPC messages; an error page, or an error that
        answers no request id (`"id": null`), is left to `_unanswered`."""
        try:
            found = json.loads(body)
        except (ValueError, RecursionError):
            return
        messages = found if isinstance(found, list) else [found]
        if all(isinstance(m, dict) and "jsonrpc" in m and ("method" in m or m.get("id") is not None) for m in messages):
            self.recorder.see("server", body, exchange=exchange, session=session, status=status)

    def _unanswered(self, exchange: str, status: int, body: bytes) -> None:
        if status >= 400:
            code, said = _rpc_error(body)
            text = said if said is not None else body.decode("utf-8", "replace").strip()[:500]
            self.recorder.fail(exchange, f"HTTP {status}" + (f": {text}" if text else ""), status, code=code)


def _rpc_error(body: bytes) -> tuple[int | None, str | None]:
    """The code and message of a JSON-RPC error that answers no request (`"id": null`), as
    servers send with an HTTP error; (None, None) for any other body."""
    try:
        found = json.loads(body)
    except ValueError:
        return None, None
    error = found.get("error") if isinstance(found, dict) and "jsonrpc" in found else None
    if not isinstance(error, dict) or not isinstance(error.get("code"), int) or isinstance(error["code"], bool):
        return None, None
    message = error.get("message")
    return error["code"], str(message)[:500] if message is not None else None


def _shown(value: str | None) -> str:
    return "(missing)" if value is None else repr(value[:100])


async def _until(chunks: Any, gone: asyncio.Event) -> Any:
    """The stream's chunks until it ends or `gone` is set, whichever comes first."""
    iterator = chunks.__aiter__()
    while True:
        step = asyncio.ensure_future(iterator.__anext__())
        stop = asyncio.ensure_future(gone.wait())
        done, _ = await asyncio.wait({step, stop}, return_when=asyncio.FIRST_COMPLETED)
        if step not in done:
            step.cancel()
            await asyncio.gather(step, return_exceptions=True)
            return
        stop.cancel()
        try:
            yield step.result()
        except StopAsyncIteration:
            return


def _encoded(headers: list[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]


async def _answer(send: Send, status: int, text: str) -> None:
    body = text.encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def origin_of(upstream: str) -> tuple[str, str]:
    """The real server's origin (`http://host:port`) and its `Host` header; ValueError if
    `upstream` is not an http(s) URL."""
    parts = urlsplit(upstream)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {upstream!r}")
    return f"{parts.scheme}://{parts.netloc}", parts.netloc.rpartition("@")[2]  # Host never carries credentials


def without_secrets(url: str) -> str:
    """`url` as it may be written to disk: its scheme, host, port and path, without the
    credentials (`user:password@`), query (a token) or fragment it may carry."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}"


def proxy_url(upstream: str, port: int) -> str:
    """The URL a client uses instead of `upstream`: the same path and query on the proxy."""
    parts = urlsplit(upstream)
    return f"http://{HOST}:{port}{parts.path or '/'}" + (f"?{parts.query}" if parts.query else "")


def record_http(upstream: str, out: Path, *, port: int = 0, ready: Callable[[str], None] | None = None) -> int:
    """Listen on 127.0.0.1:`port` (0: a free one), pass every request through to the real server
    at `upstream` and record the traffic in `out`, until interrupted (Ctrl-C, SIGTERM). `ready`
    gets the URL clients should use, once the proxy accepts connections. Returns 0."""
    origin_of(upstream)
    recorder_out = Path(out)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError:
        sock.close()
        raise
    listening = proxy_url(upstream, sock.getsockname()[1])
    recorder_out.mkdir(parents=True, exist_ok=True)
    meta = {
        "url": without_secrets(upstream),
        "listen": without_secrets(listening),
        "started": datetime.now(UTC).isoformat(),
        "transport": "http",
    }
    (recorder_out / META_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    recorder = Recorder(recorder_out)
    proxy = RecordingProxy(upstream, recorder, sock.getsockname()[1])
    config = uvicorn.Config(
        proxy,
        lifespan="off",
        log_config=None,
        access_log=False,
        server_header=False,
        date_header=False,
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
    )

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if self.started and ready is not None:  # it accepts connections
                ready(listening)

    server = Server(config)

    async def run() -> None:
        try:
            await server.serve(sockets=[sock])
        finally:
            await proxy.aclose()

    # uvicorn stops on SIGINT/SIGTERM, then raises the signal again for the handler it found:
    # ours lets the recording be closed and the command exit 0
    stops = (signal.SIGINT, signal.SIGTERM)
    main_thread = threading.current_thread() is threading.main_thread()
    before = {sig: signal.signal(sig, lambda *_: None) for sig in stops} if main_thread else {}
    try:
        asyncio.run(run())
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
        sock.close()
        recorder.close()
    return 0
