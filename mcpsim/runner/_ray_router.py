"""The router in front of `serve_on_ray`'s pool of server hosts: the one endpoint trainers reach,
which sends each request on to the host that should answer it. It is imported only when a
router starts (`mcpsim.runner._cluster._router`): it brings Starlette."""

from __future__ import annotations

import itertools
from contextlib import asynccontextmanager
from typing import Any

import httpx
import structlog
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from mcpsim.runner._ray_endpoint import RayEndpoint

__all__ = ["router_app"]

log = structlog.get_logger("mcpsim.runner")

_HOP = {"host", "content-length", "connection", "keep-alive", "transfer-encoding", "te", "upgrade"}
# What a request to a host raises when the host is gone (refused, reset, or no answer to connect):
# a slow answer (a read timeout) is not a death.
_GONE = (httpx.NetworkError, httpx.RemoteProtocolError, httpx.ConnectTimeout)


def router_app(endpoint: RayEndpoint) -> Starlette:
    """The one endpoint: new episodes (a group all together) go to the live host with the fewest
    (ties in turn), every later request on an episode to its host, the rest (health, worlds,
    tasks, /ui) to the first live host. A host that cannot be reached is marked dead with its
    episodes (502 from then on) and a new episode it failed to create is created on another.
    Answers are streamed through, so the MCP endpoints' event streams (GET in session mode) flow
    as they come."""
    router = _Router(endpoint)
    methods = ["GET", "POST", "DELETE"]
    return Starlette(routes=[Route("/{path:path}", router.route, methods=methods)], lifespan=router.lifespan)


class _Router:
    """The router's state (which hosts are live, which dead host held an episode) and its routes."""

    def __init__(self, endpoint: RayEndpoint) -> None:
        self.endpoint = endpoint
        self.turns = itertools.count()
        self.clients: list[httpx.AsyncClient] = []  # the router's one client, opened and closed on its event loop
        self.gone: dict[str, int] = {}  # episode id -> its dead host

    @asynccontextmanager
    async def lifespan(self, app: Any) -> Any:
        # no cap on connections: every open MCP event stream holds one for as long as its client does
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=64)
        async with httpx.AsyncClient(timeout=httpx.Timeout(300.0, connect=10.0), limits=limits) as http:
            self.clients.append(http)
            yield

    def live(self) -> list[int]:
        return [i for i in range(len(self.endpoint.hosts)) if i not in self.endpoint.dead]

    def least_loaded(self) -> int | None:
        hosts = self.live()
        if not hosts:
            return None
        counts = dict.fromkeys(hosts, 0)
        for owner in self.endpoint.owners.values():
            counts[owner] = counts.get(owner, 0) + 1
        turn = next(self.turns)  # once per choice: ties go to each host in turn
        return min(hosts, key=lambda i: (counts[i], (i - turn) % len(self.endpoint.hosts)))

    def lose(self, host: int, exc: Exception) -> None:
        endpoint = self.endpoint
        if host in endpoint.dead:
            return
        endpoint.dead.add(host)
        for eid in [e for e, h in endpoint.owners.items() if h == host]:
            self.gone[eid] = endpoint.owners.pop(eid)
        log.warning("server host unreachable; new episodes go to the others", host=host, error=str(exc)[:200])

    async def forward(self, host: int, request: Request, body: bytes) -> httpx.Response:
        """The host's answer, its body not read yet; a host found gone is marked dead. The client's
        Host header goes with it: the host's Host check (DNS-rebinding protection) judges the name
        the client used, the router's own (its `public_url`), wherever the host listens."""
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP or k.lower() == "host"}
        url = self.endpoint.hosts[host] + request.url.path
        http = self.clients[0]
        outgoing = http.build_request(request.method, url, params=request.query_params, headers=headers, content=body)
        try:
            return await http.send(outgoing, stream=True)
        except _GONE as exc:
            self.lose(host, exc)
            raise

    async def create(self, request: Request, body: bytes) -> Response:
        while (host := self.least_loaded()) is not None:
            try:
                upstream = await _read(await self.forward(host, request, body))
            except _GONE:
                continue  # marked dead: the next live host
            if upstream.status_code == 201:  # one episode, or a group ({"episodes": [...]}) all on this host
                created = upstream.json()
                for episode in created.get("episodes") or [created]:
                    self.endpoint.owners[episode["id"]] = host
            return _answer(upstream)
        return _unreachable("none of the episode servers")

    async def route(self, request: Request) -> Response:
        endpoint = self.endpoint
        body = await request.body()
        parts = request.url.path.strip("/").split("/")
        try:
            if parts[0] == "episodes" and len(parts) >= 2 and parts[1] != "restore":
                owner = endpoint.owners.get(parts[1])
                if owner is None:
                    if parts[1] in self.gone:
                        return _unreachable(f"episode {parts[1]!r}'s server (host {self.gone[parts[1]]})")
                    return JSONResponse({"error": f"unknown episode {parts[1]!r}"}, status_code=404)
                upstream = await self.forward(owner, request, body)
                if request.method == "DELETE" and len(parts) == 2 and upstream.status_code in (204, 404):
                    endpoint.owners.pop(parts[1], None)
                elif parts[-1] == "fork" and upstream.status_code == 201:
                    endpoint.owners[(await _read(upstream)).json()["id"]] = owner
                return _answer(upstream)
            if parts[0] == "episodes" and request.method == "POST":
                return await self.create(request, body)
            if parts == ["episodes"]:  # GET: every live host's episodes
                listed: list[Any] = []
                for host in self.live():
                    try:
                        upstream = await _read(await self.forward(host, request, body))
                    except _GONE:
                        continue  # its episodes are gone with it
                    if upstream.status_code != 200:
                        return _answer(upstream)
                    listed += upstream.json()
                return JSONResponse(listed)
            hosts = self.live()
            if not hosts:
                return _unreachable("none of the episode servers")
            return _answer(await self.forward(hosts[0], request, body))
        except httpx.TransportError as exc:
            return _unreachable(f"the episode's server ({exc})")


async def _read(upstream: httpx.Response) -> httpx.Response:
    try:
        await upstream.aread()
    finally:
        await upstream.aclose()
    return upstream


def _answer(upstream: httpx.Response) -> Response:
    if upstream.is_closed:  # read whole (the router looked inside)
        headers = {k: v for k, v in upstream.headers.items() if k.lower() not in _HOP | {"content-encoding"}}
        return Response(upstream.content, status_code=upstream.status_code, headers=headers)

    async def relay() -> Any:
        try:
            async for chunk in upstream.aiter_raw():
                yield chunk
        finally:
            await upstream.aclose()

    headers = {k: v for k, v in upstream.headers.items() if k.lower() not in _HOP}
    return StreamingResponse(relay(), status_code=upstream.status_code, headers=headers)


def _unreachable(what: str) -> JSONResponse:
    return JSONResponse({"error": f"{what} could not be reached"}, status_code=502)
