"""Who may reach what on the HTTP server: the control-plane token, the Host and Origin check,
the public URL that `mcp_url`s are built from, and how much a verdict tells its caller.

The threat model (docs/security.md): the agent is untrusted, the operator is trusted. An agent
only ever holds an MCP URL; the control plane (create, inspect, fork, verify, snapshot...) needs
a bearer token the agent never sees, and a browser tricked by DNS rebinding into calling the
server (a page on evil.example that resolves to 127.0.0.1) is refused on every route because
its Host header names a host the server does not serve.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import structlog
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from mcpsim.grading import load_verdict
from mcpsim.serve._settings import VERDICT_DETAILS, ClientLimits, VerdictDetail  # noqa: F401 (re-exported)

log = structlog.get_logger("mcpsim.serve._access")

LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")
LOOPBACK_ORIGINS = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")
WILDCARD_BINDS = ("0.0.0.0", "::", "")

# -- the token ------------------------------------------------------------------------------


def resolve_token(token: str | None, no_auth: bool, *, announce: bool = True) -> str | None:
    """The bearer token the control plane requires, or None when the operator opened it with
    `no_auth`. No token and no `no_auth`: a fresh one (256 random bits), printed once to stderr
    so the local operator can copy it (it never goes to the logs)."""
    if no_auth:
        if token is not None:
            raise ValueError("give a control-plane token or no_auth (--no-auth), not both")
        log.warning(
            "the control plane is open to anyone who can reach this server (--no-auth): an agent "
            "that can reach it can create, fork and verify episodes; use it for local experiments only"
        )
        return None
    if token is not None:
        if not token or any(c.isspace() or not c.isprintable() for c in token):
            raise ValueError("the control-plane token must be non-empty printable text without spaces")
        return token
    token = secrets.token_urlsafe(32)
    if announce:
        print(
            "mcpsim: no --token given; the control plane requires this generated bearer token "
            f"(Authorization: Bearer ...):\nmcpsim: token {token}",
            file=sys.stderr,
            flush=True,
        )
    return token


# -- the public URL -------------------------------------------------------------------------


def normalize_public_url(url: str) -> str:
    """`http(s)://host[:port][/prefix]` without a trailing slash, or ValueError with the reason."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"public URL {url!r} must look like http://host:port or https://host[/prefix]")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(f"public URL {url!r} must have no query, fragment or credentials")
    try:
        parts.port  # noqa: B018 (validates the port)
    except ValueError as exc:
        raise ValueError(f"public URL {url!r}: {exc}") from None
    return f"{parts.scheme}://{parts.netloc.lower()}{parts.path.rstrip('/')}"


def public_base_url(host: str, port: int, public_url: str | None = None) -> str | None:
    """What episodes' `mcp_url`s are built from: `public_url` normalized (ValueError with the
    reason), else `http://{host}:{port}`, where a wildcard bind (0.0.0.0, ::) is reached locally as
    127.0.0.1 (give --public-url for the address remote clients use); None for port 0, a port
    picked at bind time, whose URLs come from the listening socket."""
    if public_url:
        return normalize_public_url(public_url)
    if not port:
        return None
    if host in WILDCARD_BINDS:
        host = "127.0.0.1"
    return f"http://{_bracket(host)}:{port}"


def socket_base_url(scope: Scope, fallback_host: str) -> str:
    """The base URL of the socket that accepted the request (ASGI `server`): what the server
    itself listens on, never what the client wrote in its Host header."""
    server = scope.get("server")
    if server and server[1] is not None:
        return f"http://{_bracket(str(server[0]))}:{server[1]}"
    return f"http://{_bracket(fallback_host)}"


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


# -- Host and Origin ------------------------------------------------------------------------

_PORT = r"[0-9]{1,5}"
_HOST = r"(\[[0-9a-f:.]+\]|[a-z0-9._-]+)"
_HOST_RE = re.compile(rf"{_HOST}(?::({_PORT}))?")
_HOST_PATTERN_RE = re.compile(rf"{_HOST}(?::({_PORT}|\*))?")
_ORIGIN_RE = re.compile(rf"(https?)://{_HOST}(?::({_PORT}))?")
_ORIGIN_PATTERN_RE = re.compile(rf"(https?)://{_HOST}(?::({_PORT}|\*))?")


@dataclass(frozen=True)
class _Pattern:
    scheme: str | None
    host: str
    port: str | None  # None: no port; "*": any port (or none)

    def matches(self, scheme: str | None, host: str, port: str | None) -> bool:
        if scheme != self.scheme or host != self.host:
            return False
        return self.port == "*" or self.port == port


def _parse_host_pattern(text: str) -> _Pattern:
    m = _HOST_PATTERN_RE.fullmatch(text.strip().lower())
    if not m:
        raise ValueError(f"allowed host {text!r} must be HOST, HOST:PORT or HOST:* (e.g. localhost:8000)")
    return _Pattern(None, m[1], m[2])


def _parse_origin_pattern(text: str) -> _Pattern:
    m = _ORIGIN_PATTERN_RE.fullmatch(text.strip().lower().rstrip("/"))
    if not m:
        raise ValueError(
            f"allowed origin {text!r} must be SCHEME://HOST[:PORT] or SCHEME://HOST:* (e.g. http://localhost:8000)"
        )
    return _Pattern(m[1], m[2], m[3])


def _netloc_pattern(public_url: str) -> tuple[str, str]:
    """The Host and Origin a public URL is reached by."""
    parts = urlsplit(public_url)
    return parts.netloc.lower(), f"{parts.scheme}://{parts.netloc.lower()}"


class HostOriginGuard:
    """ASGI middleware: every HTTP request (control plane, MCP endpoints, `/health`, unknown
    paths) must carry an allowed Host header, and an allowed Origin header if it has one (each of
    them, if it has several); otherwise 403 with the reason, before any route runs.

    Matching is exact: `localhost:8000` matches only that Host; `localhost:*` matches localhost
    with any numeric port (or none), never `localhost:8000.evil.example` or `localhost.evil`
    (the MCP SDK's own check matches wildcards by prefix). Hosts and schemes are compared
    case-insensitively. With no hosts (origins) configured, the loopback names are allowed; the
    public URL's host (origin) is always allowed."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
        public_url: str | None = None,
    ) -> None:
        self.app = app
        hosts, origins = list(allowed_hosts) or list(LOOPBACK_HOSTS), list(allowed_origins) or list(LOOPBACK_ORIGINS)
        if public_url:
            host, origin = _netloc_pattern(public_url)
            hosts.append(host)
            origins.append(origin)
        self.hosts = [_parse_host_pattern(h) for h in hosts]
        self.origins = [_parse_origin_pattern(o) for o in origins]

    def host_allowed(self, value: str | None) -> bool:
        m = _HOST_RE.fullmatch(value.strip().lower()) if value else None
        return m is not None and any(p.matches(None, m[1], m[2]) for p in self.hosts)

    def origin_allowed(self, value: str | None) -> bool:
        if value is None:  # not a browser (or a same-origin GET): nothing to check
            return True
        m = _ORIGIN_RE.fullmatch(value.strip().lower())
        return m is not None and any(p.matches(m[1], m[2], m[3]) for p in self.origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        # every Host and Origin header a request carries is judged: a second one cannot slip past
        given: list[str | None] = [*headers.getlist("host")] or [None]  # no Host header: refused
        hosts = [h for h in given if not self.host_allowed(h)]
        origins = [o for o in headers.getlist("origin") if not self.origin_allowed(o)]
        problem = None
        if hosts:
            problem = (
                f"Host header {_shown(hosts[0])} is not served here (DNS-rebinding protection); "
                "the operator can allow it with --allowed-host or --public-url"
            )
        elif origins:
            problem = (
                f"Origin {_shown(origins[0])} is not allowed (DNS-rebinding protection); "
                "the operator can allow it with --allowed-origin"
            )
        if problem is not None:
            log.warning("request refused", reason=problem, path=str(scope.get("path", ""))[:200])
            if scope["type"] == "websocket":  # refused at the handshake (403)
                await send({"type": "websocket.close", "code": 1008, "reason": problem[:120]})
            else:
                await JSONResponse({"error": problem}, status_code=403)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _shown(value: str | None) -> str:
    return "(missing)" if value is None else repr(value[:100])


# -- verdicts -------------------------------------------------------------------------------


def summarize_verdict(verdict: Mapping[str, Any]) -> dict[str, Any]:
    """A stored verdict (full or summary) as `summary` mode shows it (see `Verdict.summary`). Idempotent."""
    return load_verdict(verdict).summary().model_dump(mode="json")


# -- per-client quotas on the MCP endpoints ---------------------------------------------------

Quota = tuple[tuple[str, int], ...]  # (key, limit) pairs a client counts against


def client_keys(scope: Scope) -> tuple[str, str]:
    """(the client, its address): `token:<digest>` for a request with an Authorization header
    (the token itself is never kept), else `address:<ip>`; and `address:<ip>`."""
    client = scope.get("client")
    address = f"address:{client[0] if client else 'unknown'}"
    authorization = Headers(scope=scope).get("authorization")
    if not authorization:
        return address, address
    digest = hashlib.sha256(authorization.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return f"token:{digest}", address


def quota(keys: tuple[str, str], per_client: int | None, per_address: int | None) -> Quota:
    """The limits a client's keys count against (a key named twice keeps the lower limit)."""
    limits: dict[str, int] = {}
    for key, limit in ((keys[0], per_client), (keys[1], per_address)):
        if limit is not None:
            limits[key] = min(limit, limits.get(key, limit))
    return tuple(limits.items())


class QuotaExceeded(Exception):
    """A client is at one of its limits and nothing of its own can make room."""


@dataclass
class OpenSession:
    session_id: str
    keys: tuple[str, ...]
    path: str  # the endpoint it was opened on (closing it goes there)
    world: str
    last_used: float
    in_flight: int = 0

    def idle(self) -> bool:
        return self.in_flight == 0


@dataclass
class Reservation:
    """Room held for one session while it is being opened."""

    limits: Quota
    victims: list[OpenSession]  # the client's idle sessions to close to make the room
    held: bool = True


class SessionTable:
    """The MCP sessions open on the server, by client. Used from the event loop only.

    A client at its limit that opens another session has its least recently used idle session
    closed to make room (`admit` returns it, the caller closes it); if all of its sessions are
    busy with a request, it is refused (`QuotaExceeded`) and other clients are not affected.
    Sessions idle for `idle_seconds` are forgotten here as the MCP SDK closes them (same timeout)."""

    def __init__(self, idle_seconds: float | None, clock: Callable[[], float]) -> None:
        self.idle_seconds = idle_seconds
        self.clock = clock
        self.sessions: dict[str, OpenSession] = {}
        self._by_key: dict[str, dict[str, OpenSession]] = {}
        self._pending: dict[str, int] = {}  # sessions being opened, by key

    def count(self, key: str) -> int:
        return len(self._by_key.get(key, ())) + self._pending.get(key, 0)

    def admit(self, limits: Quota) -> Reservation:
        """Reserve room for one more session of a client; the reservation names the sessions to
        close for it (already forgotten here). Raises QuotaExceeded, reserving nothing, if room
        cannot be made. The reservation counts until `opened` turns it into the session, or
        `release` gives it up (the opening request failed)."""
        self.expire()
        victims: dict[str, OpenSession] = {}
        own = limits[0][0] if limits else None  # the client itself; the later keys are shared (its address)
        for key, limit in limits:
            counted = [s for s in self._by_key.get(key, {}).values() if s.session_id not in victims]
            excess = self.count(key) - sum(1 for v in victims.values() if key in v.keys) + 1 - limit
            if excess <= 0:
                continue
            # only the client's own sessions are closed to make room: a shared limit (everyone at one
            # address) never lets one client close another's idle session
            mine = [s for s in counted if own in s.keys]
            idle = sorted((s for s in mine if s.idle()), key=lambda s: s.last_used)
            if len(idle) < excess:
                busy = len(mine) - len(idle)
                if key == own:
                    held = f"this client already has {self.count(key)} MCP sessions open (its limit is {limit})"
                else:
                    held = (
                        f"the clients at this address already have {self.count(key)} MCP sessions open "
                        f"(their limit is {limit}; only this client's own idle sessions are closed for it)"
                    )
                raise QuotaExceeded(
                    f"{held} and {busy} of this client's are busy with a request; retry when one is answered, "
                    "or end a session you no longer use (HTTP DELETE with its Mcp-Session-Id)"
                )
            victims.update((s.session_id, s) for s in idle[:excess])
        for victim in victims.values():
            self.forget(victim.session_id)
        for key, _ in limits:
            self._pending[key] = self._pending.get(key, 0) + 1
        return Reservation(limits, list(victims.values()))

    def release(self, reservation: Reservation) -> None:
        """Give up a reservation not (or no longer) held; harmless twice."""
        if not reservation.held:
            return
        reservation.held = False
        for key, _ in reservation.limits:
            left = self._pending.get(key, 0) - 1
            if left > 0:
                self._pending[key] = left
            else:
                self._pending.pop(key, None)

    def opened(self, session_id: str, reservation: Reservation, path: str, world: str) -> None:
        """The reserved session is open: it counts from now on instead of its reservation."""
        self.release(reservation)
        session = OpenSession(session_id, tuple(key for key, _ in reservation.limits), path, world, self.clock())
        self.sessions[session_id] = session
        for key in session.keys:
            self._by_key.setdefault(key, {})[session_id] = session

    def begin(self, session_id: str) -> OpenSession | None:
        """A request of a session starts: it is busy (never closed to make room) until `end`."""
        session = self.sessions.get(session_id)
        if session is not None:
            session.in_flight += 1
            session.last_used = self.clock()
        return session

    def end(self, session: OpenSession) -> None:
        session.in_flight = max(0, session.in_flight - 1)
        session.last_used = self.clock()

    def forget(self, session_id: str) -> None:
        session = self.sessions.pop(session_id, None)
        if session is None:
            return
        for key in session.keys:
            group = self._by_key.get(key)
            if group is not None:
                group.pop(session_id, None)
                if not group:
                    del self._by_key[key]

    def expire(self) -> None:
        """Forget idle sessions past the idle timeout (the SDK has closed, or is closing, them)."""
        if self.idle_seconds is None:
            return
        cutoff = self.clock() - self.idle_seconds
        for session in [s for s in self.sessions.values() if s.idle() and s.last_used < cutoff]:
            self.forget(session.session_id)
