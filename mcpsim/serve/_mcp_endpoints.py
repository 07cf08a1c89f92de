"""The MCP endpoints of the HTTP app: `/episodes/{id}/mcp` (one per episode) and `/mcp` (a fresh
episode per client session by default, `_PerClientDefault`; or the shared default episode)."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable
from functools import partial

import structlog
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.shared.inbound import ERROR_CODE_HTTP_STATUS, MCP_PROTOCOL_VERSION_HEADER
from mcp_types import INTERNAL_ERROR, INVALID_REQUEST, UNSUPPORTED_PROTOCOL_VERSION
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from mcpsim.engine import Episode
from mcpsim.serve._access import QuotaExceeded, Reservation, client_keys, quota
from mcpsim.serve._host import EpisodeLimitReached, EpisodeManager
from mcpsim.serve._roles import endpoint_episode
from mcpsim.serve._session_gate import (
    MAX_OPENING_BYTES,
    AfterRequest,
    _is_initialize,
    _jsonrpc_error,
    _read_opening,
    _replay,
    _SessionGate,
    _too_many,
)
from mcpsim.serve._settings import ClientLimits
from mcpsim.serve._work import off_the_loop
from mcpsim.trajectories import Recorder

log = structlog.get_logger("mcpsim.http")


class _McpDispatch:
    """ASGI endpoint for `/mcp` and `/episodes/{id}/mcp`: 404 for an unknown episode, otherwise
    the episode's world server handles the request (an object, so Starlette passes ASGI through).

    `/mcp` serves the manager's shared default episode if there is one (--shared-default);
    otherwise each client gets a fresh episode of its own (`_PerClientDefault`). Every request
    passes the session gate (per-client session limits); with a recorder, the episode's new calls
    are journaled before the response goes out."""

    def __init__(
        self, manager: EpisodeManager, gate: _SessionGate, limits: ClientLimits, recorder: Recorder | None = None
    ) -> None:
        self.manager, self.gate, self.recorder = manager, gate, recorder
        self.per_client = _PerClientDefault(manager, gate, limits, self.journal_calls)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        episode_id = scope.get("path_params", {}).get("episode_id")
        if episode_id is None and self.manager.default is None and self.manager.default_spec is not None:
            await self.per_client(scope, receive, send)
            return
        try:
            episode = endpoint_episode(self.manager, episode_id)  # an episode's id, or a role endpoint's
        except LookupError as exc:  # a JSON-RPC error: MCP clients show its reason, not "Session terminated"
            await _jsonrpc_error(404, INVALID_REQUEST, str(exc))(scope, receive, send)
            return
        await self.gate.handle(episode.world.name, scope, receive, send, after=self.journal_calls(episode))

    def journal_calls(self, episode: Episode) -> AfterRequest | None:
        """With a recorder: what appends the episode's new calls to its live journal."""
        recorder = self.recorder
        if recorder is None:
            return None

        async def sync() -> None:
            try:
                await off_the_loop(partial(recorder.sync, episode))
            except LookupError:  # deleted meanwhile: its deletion wrote it
                pass
            except Exception:  # a full disk: the call stands, the server goes on
                log.exception("journaling calls failed", episode=episode.id)

        return sync


PENDING = "pending:"  # an owner entry for an episode still being created


class _PerClientDefault:
    """`/mcp` with one fresh episode per client: each MCP session (the handshake protocol's
    `Mcp-Session-Id`) is bound to an episode created for it when it opens, and every request of
    the session is served as if sent to that episode's `/episodes/{id}/mcp`. Clients of `/mcp`
    therefore never share state: one cannot pass notes to another through the world.

    The stateless 2026-07-28 protocol carries no session, so nothing ties two of its requests to
    one client: such requests to `/mcp` get the JSON-RPC "unsupported protocol version" error
    naming only the handshake versions, on which the SDK's `mode="auto"` clients fall back to the
    session protocol. A client pinned to the stateless protocol uses an episode URL from
    POST /episodes instead (or the operator runs --shared-default).

    The episodes are ordinary ones (unguessable id, the caps, the TTL, listed by GET /episodes,
    recorded when they end); the binding is forgotten when the session ends (the episode lives on
    until its TTL, for the harness to inspect) or when the episode is gone. One client holds at
    most `mcp_episodes_per_client` of them at once (and everyone behind one address
    `mcp_episodes_per_address`): a client opening sessions in a loop is refused with 429 long
    before it fills the server's episode cap, and POST /episodes keeps working for others."""

    def __init__(
        self,
        manager: EpisodeManager,
        gate: _SessionGate,
        limits: ClientLimits,
        journal_calls: Callable[[Episode], AfterRequest | None],
    ) -> None:
        self.manager, self.gate, self.limits, self.journal_calls = manager, gate, limits, journal_calls
        self.sessions: dict[str, str] = {}  # MCP session id -> episode id
        self.owners: dict[str, tuple[str, ...]] = {}  # episode id (or a pending claim) -> its client's keys
        self._claims = itertools.count()
        gate.on_forget.append(self._unbind)

    def _unbind(self, session_id: str) -> None:
        self.sessions.pop(session_id, None)

    def prune(self) -> None:
        """Forget sessions whose episode was deleted or expired, or that the SDK closed when idle,
        and owners of episodes that are gone."""
        live = {e.id for e in self.manager.list()}
        for session_id, episode_id in list(self.sessions.items()):
            if episode_id not in live or session_id not in self.gate.table.sessions:
                self.sessions.pop(session_id, None)
        for episode_id in [e for e in self.owners if e not in live and not e.startswith(PENDING)]:
            del self.owners[episode_id]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        spec = self.manager.default_spec
        assert spec is not None
        world = spec.world.name
        headers = Headers(scope=scope)
        version = headers.get(MCP_PROTOCOL_VERSION_HEADER)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await self._refuse_stateless(version, scope, receive, send)
            return
        session_id = headers.get(MCP_SESSION_ID_HEADER)
        if session_id is not None:
            await self._serve_session(world, session_id, scope, receive, send)
            return
        if scope["method"] != "POST":  # no session yet: the SDK answers (400, 405...), no episode is made
            await self.gate.pass_through(world, scope, receive, send, None)
            return
        body, complete = await _read_opening(receive)
        if not complete:
            await _jsonrpc_error(413, INVALID_REQUEST, f"an opening request larger than {MAX_OPENING_BYTES} bytes")(
                scope, receive, send
            )
            return
        replay = _replay(body, complete, receive)
        if not _is_initialize(body):  # not opening a session: nothing to bind an episode to
            await self.gate.pass_through(world, scope, replay, send, None)
            return
        keys = client_keys(scope)
        refusal = self._over_episode_quota(keys)  # before any of its idle sessions is closed for room
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        claim = f"{PENDING}{next(self._claims)}"  # counts while the episode is being made
        self.owners[claim] = tuple(dict.fromkeys(keys))
        try:
            async with self.gate.opening(scope) as reservation:
                await self._open(world, claim, scope, replay, send, reservation)
        except QuotaExceeded as exc:
            await _too_many(str(exc))(scope, receive, send)
        finally:
            self.owners.pop(claim, None)

    async def _serve_session(self, world: str, session_id: str, scope: Scope, receive: Receive, send: Send) -> None:
        episode_id = self.sessions.get(session_id)
        if episode_id is None:
            await _jsonrpc_error(
                404,
                INVALID_REQUEST,
                "Session not found: this `/mcp` session does not exist "
                "(it ended, or the server restarted); open a new one",
            )(scope, receive, send)
            return
        try:
            after = self.journal_calls(self.manager.get(episode_id))
        except LookupError:  # the episode is gone: the tools say so
            after = None
        await self.gate.serve_session(world, session_id, _at_episode(scope, episode_id), receive, send, after)
        if scope["method"] == "DELETE":
            self.sessions.pop(session_id, None)

    async def _open(
        self, world: str, claim: str, scope: Scope, receive: Receive, send: Send, reservation: Reservation
    ) -> None:
        """Create the client's episode (its `claim` on the quota becomes the episode's) and open
        its session on it."""
        try:
            episode = await off_the_loop(self.manager.create_default)
        except EpisodeLimitReached as exc:
            await _jsonrpc_error(503, INTERNAL_ERROR, str(exc), {"Retry-After": "5"})(scope, receive, send)
            return
        except LookupError as exc:
            await _jsonrpc_error(404, INVALID_REQUEST, str(exc))(scope, receive, send)
            return
        self.owners[episode.id] = self.owners.pop(claim)
        bound: list[str] = []

        def bind(session_id: str) -> None:
            self.sessions[session_id] = episode.id
            bound.append(session_id)

        try:
            await self.gate.serve_opening(
                world, _at_episode(scope, episode.id), receive, send, reservation, self.journal_calls(episode), bind
            )
        finally:
            if not bound:  # the handshake failed: no client holds this episode
                self.owners.pop(episode.id, None)
                await off_the_loop(partial(self.manager.delete, episode.id))
            else:
                log.info("episode bound to an /mcp session", episode=episode.id)

    def _over_episode_quota(self, keys: tuple[str, str]) -> Response | None:
        """A 429 with the reason if this client holds as many `/mcp` episodes as it may."""
        self.prune()
        for key, limit in quota(keys, self.limits.mcp_episodes_per_client, self.limits.mcp_episodes_per_address):
            held = [e for e, owner in self.owners.items() if key in owner]
            if len(held) < limit:
                continue
            whom = (
                "everyone at this client's address"
                if key.startswith("address:") and keys[0] != keys[1]
                else "this client"
            )
            ttl = self.manager.ttl_seconds
            return _jsonrpc_error(
                429,
                INVALID_REQUEST,
                f"{whom} already holds {len(held)} episodes opened through /mcp, the most it may (each /mcp "
                "session makes one, and it lives until it is deleted or expires"
                + (f" after {ttl:g} idle seconds" if ttl else "")
                + "); reuse an open session, or have the "
                "harness create episodes with POST /episodes and connect to their mcp_url",
                {"Retry-After": str(self._retry_after(held))} if ttl else None,
            )
        return None

    def _retry_after(self, episode_ids: list[str]) -> int:
        """Seconds until the first of these episodes can expire, at least 1."""
        ttl = self.manager.ttl_seconds or 0.0
        now = self.manager.clock()
        used = [e.last_used for e in self.manager.list() if e.id in set(episode_ids)]
        return max(1, math.ceil(min(used) + ttl - now)) if used else 1

    async def _refuse_stateless(self, version: str, scope: Scope, receive: Receive, send: Send) -> None:
        body, _ = await _read_opening(receive)
        try:
            request_id = json.loads(body).get("id") if body else None
        except (ValueError, AttributeError, RecursionError):
            request_id = None
        message = (
            "this server gives each client of /mcp an episode of its own, bound to an MCP session; "
            f"the stateless protocol ({version[:40]}) has no session: connect with the initialize "
            "handshake, or use an episode URL from POST /episodes"
        )
        data = {"supported": list(HANDSHAKE_PROTOCOL_VERSIONS), "requested": version[:40]}
        await _jsonrpc_error(
            ERROR_CODE_HTTP_STATUS.get(UNSUPPORTED_PROTOCOL_VERSION, 400),
            UNSUPPORTED_PROTOCOL_VERSION,
            message,
            data=data,
            request_id=request_id if isinstance(request_id, str | int) else None,
        )(scope, receive, send)


def _at_episode(scope: Scope, episode_id: str) -> Scope:
    """The request as if sent to the episode's own endpoint: the MCP tools resolve the episode
    from the URL path."""
    path = f"/episodes/{episode_id}/mcp"
    return {**scope, "path": path, "raw_path": path.encode()}
