"""Fault injection: an episode's fault profile applied to its calls (`FaultInjection`): the
attempt counted, the fault drawn, then the call refused, capped, delayed, answered stale or
truncated, or run as it is."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import TypeAdapter
from pydantic_core import to_jsonable_python

from mcpsim.engine import _store as store
from mcpsim.engine._faults import FaultProfile, FaultRecord
from mcpsim.engine._transaction import FAULT_MESSAGES, CallResult, CallTarget, CallTransaction, record_failure
from mcpsim.world import ToolSpec


def _truncate(spec: ToolSpec, value: Any, limit: int) -> Any:
    """The result with every string longer than `limit` cut short (still of the declared type)."""

    def cut(data: Any) -> Any:
        if isinstance(data, str) and len(data) > limit:
            return data[: limit - 1] + "…"
        if isinstance(data, list):
            return [cut(x) for x in data]
        if isinstance(data, dict):
            return {k: cut(v) for k, v in data.items()}
        return data

    return TypeAdapter(spec.return_annotation).validate_python(cut(to_jsonable_python(value)))


class FaultInjection:
    """Applies an episode's fault profile to its calls, through the episode's `CallTransaction`.
    It keeps the state before the episode's latest write, which stale reads answer from (`replay`
    runs a call on a copy of the episode restored from it), in memory only. The episode holds its
    lock around every use."""

    def __init__(
        self,
        transaction: CallTransaction,
        replay: Callable[[CallTarget, bytes, ToolSpec, dict[str, Any]], CallResult],
    ) -> None:
        self.transaction = transaction
        self.replay = replay
        # (state before the latest write, reads left that may see it); kept in memory only
        self.stale: tuple[bytes, int] | None = None

    def run(self, episode: CallTarget, spec: ToolSpec, kwargs: dict[str, Any], profile: FaultProfile) -> CallResult:
        """The call, with what `profile` draws for this attempt of the tool applied to it."""
        attempts = dict(store.meta_value(episode.conn, "fault_attempts"))
        attempt = attempts.get(spec.name, 0) + 1
        attempts[spec.name] = attempt
        store.write_meta(episode.conn, {"fault_attempts": attempts})  # counted even if the call fails
        kind = profile.decide(
            episode.seed,
            spec.name,
            attempt,
            writes=spec.writes,
            partial_ok=spec.partial_failures,
            has_limit=spec.has_limit,
            after_write=self.stale is not None,
        )
        latency = profile.latency(episode.seed, spec.name, attempt)
        detail: FaultRecord | None = {"kind": kind, "attempt": attempt} if kind else None
        if kind in ("transient", "rate_limit"):
            assert detail is not None
            if kind == "rate_limit":
                detail["retry_after_s"] = profile.retry_after_s
            error = FAULT_MESSAGES[kind].format(tool=spec.name, retry_after=profile.retry_after_s)
            record_failure(episode.conn, spec, kwargs, error, bug=False, fault=detail)
            return CallResult(spec.name, error=error, fault=detail)
        if kind == "paginate" and detail is not None:
            capped = min(kwargs["limit"], profile.page_size)
            detail["limit"] = [kwargs["limit"], capped]
            kwargs = {**kwargs, "limit": capped}
        transform = None
        if kind == "stale" and self.stale is not None:
            stale_state = self.stale[0]
            transform = lambda value: self._stale_value(episode, spec, kwargs, stale_state, value)  # noqa: E731
        elif kind == "truncate":
            transform = lambda value: _truncate(spec, value, profile.truncate_at)  # noqa: E731
        before = episode.conn.serialize() if spec.writes and profile.can_be_stale else None
        result = self.transaction.execute(
            episode,
            spec,
            kwargs,
            partial=kind == "partial",
            latency=latency,
            fault=detail,
            transform=transform,
            timeout=kind == "timeout",
        )
        if result.call_seq is not None and not result.bug:  # it committed (fully, partly, or unanswered)
            if spec.writes:
                self.stale = (before, profile.stale_window) if before is not None else None
            elif self.stale is not None:
                left = self.stale[1] - 1
                self.stale = (self.stale[0], left) if left > 0 else None
        if profile.real_delay:
            result.delay_s = latency
        return result

    def _stale_value(
        self, episode: CallTarget, spec: ToolSpec, kwargs: dict[str, Any], state: bytes, fresh: Any
    ) -> Any:
        """What the read would have answered before the latest write."""
        old = self.replay(episode, state, spec, kwargs)
        return fresh if old.is_error else old.value
