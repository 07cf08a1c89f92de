"""Server-side recording: an episode's transcript and change log as a `Trajectory`, whoever the
client was (a desktop app, a coding agent, someone's own harness, or mcpsim's runner), and
`Recorder`, which keeps them in a `Journal` (`mcpsim.trajectories._journal`: the crash policy)."""

from __future__ import annotations

import threading
import weakref
from pathlib import Path
from typing import Any

import structlog
from pydantic import BaseModel

from mcpsim.engine import CallRecord, Change, Episode
from mcpsim.trajectories._journal import Journal, LiveHeader, LiveJournal
from mcpsim.trajectories._records import CallLog, RowChange, ToolDef, Trajectory

log = structlog.get_logger("mcpsim.trajectories._served")


def tool_defs(episode: Episode) -> list[ToolDef]:
    """The world's tools as function definitions: built once per world and its set of tools
    (every trajectory of the world shares them; nothing changes a recorded trajectory's tools)."""
    world = episode.world
    specs = tuple(world.tools.values())
    cached = _TOOL_DEFS.get(world)
    if cached is None or len(cached[0]) != len(specs) or any(a is not b for a, b in zip(cached[0], specs, strict=True)):
        defs = [
            ToolDef(function={"name": s.name, "description": s.description, "parameters": s.input_schema()})
            for s in sorted(specs, key=lambda s: s.name)
        ]
        cached = _TOOL_DEFS[world] = (specs, defs)
    return list(cached[1])


_TOOL_DEFS: weakref.WeakKeyDictionary[Any, tuple[tuple[Any, ...], list[ToolDef]]] = weakref.WeakKeyDictionary()


def _fields_for(model: type[BaseModel], record: CallRecord | Change) -> dict[str, Any]:
    """The fields of `record` that `model` has too, by name."""
    return {name: value for name, value in record._asdict().items() if name in model.model_fields}


def _call_log(index: int, r: CallRecord, changes: list[RowChange], roles: dict[int, str]) -> CallLog:
    return CallLog(
        **_fields_for(CallLog, r),  # tool, arguments, ok, result, error, call_seq, fault
        index=index,
        tool_call_id=f"call_{index}",
        changes=changes if r.call_seq else [],
        role=roles.get(r.seq),
    )


def _row_change(c: Change) -> RowChange:
    return RowChange(**_fields_for(RowChange, c))


def call_logs(episode: Episode) -> list[CallLog]:
    """Every call in order, each with the row changes it made."""
    by_call: dict[int, list[RowChange]] = {}
    for c in episode.changes():
        by_call.setdefault(c.call_seq, []).append(_row_change(c))
    roles = episode.meta().roles
    return [_call_log(i, r, by_call.get(r.call_seq or 0, []), roles) for i, r in enumerate(episode.transcript())]


def calls_after(episode: Episode, seq: int, first_index: int) -> tuple[list[CallLog], int]:
    """The calls whose transcript position is past `seq`, numbered from `first_index`, each with
    its row changes, and the position of the last one (`seq` if there is none): what a live
    journal has not written yet, read without decoding the calls it has."""
    records = episode.transcript(after=seq)
    if not records:
        return [], seq
    committed = [r.call_seq for r in records if r.call_seq]
    by_call: dict[int, list[RowChange]] = {}
    for c in episode.changes(min(committed), through=max(committed)) if committed else []:
        by_call.setdefault(c.call_seq, []).append(_row_change(c))
    roles = episode.meta().roles
    logs = [_call_log(first_index + i, r, by_call.get(r.call_seq or 0, []), roles) for i, r in enumerate(records)]
    return logs, records[-1].seq


def live_header(episode: Episode) -> LiveHeader:
    """What a trajectory of the episode needs beside its calls."""
    return LiveHeader(
        episode_id=episode.id,
        world=episode.world.name,
        world_version=episode.template_version,
        task_id=episode.task_id,
        seed=episode.seed,
        policy=episode.world.policy,
    )


def episode_trajectory(episode: Episode, *, verdict: dict[str, Any] | None = None) -> Trajectory:
    """The episode as seen from the server: the policy as the system message, then each tool
    call as an assistant message and its result as a tool message."""
    return live_header(episode).trajectory(
        call_logs(episode),
        status="completed",
        termination="recorded",
        tools=tool_defs(episode),
        verdict=verdict,
        reward=verdict.get("reward") if verdict else None,
        partial_reward=verdict.get("partial_reward") if verdict else None,
        state_hash=episode.state_hash(),
    )


class Recorder:
    """`--record DIR`: every episode's trajectory in `<dir>/trajectories.jsonl`, and a live journal
    of each live episode's calls, under the journal's crash policy (`journal.Journal`).

    An episode is written (fsynced) as soon as it ends (POST .../end) or is graded (POST
    .../verify), and again when it is deleted, expires or the server stops only if it changed
    since (a verdict arrived after an end, or calls were made after it). The last line of an
    episode id is its final record.

    Live episodes (`track`, once the episode is added to the server) have a live journal to
    which `sync` appends the calls made since the last sync; the server syncs after every MCP
    request, before its response goes out, so an answered call is in the journal. On start, the
    live journals a crash left become lines of their own, with their calls (`Journal.recover`)."""

    def __init__(self, directory: Path | str) -> None:
        self.journal = Journal(directory)
        self.directory, self.path = self.journal.directory, self.journal.path
        self._live: dict[str, LiveJournal] = {}
        self._state = threading.Lock()  # guards `_live` and `_written`
        self._written: dict[str, tuple[int, bool]] = {}  # untracked episodes (stdio): (calls, verdict) last written
        self.recovered = self.journal.recover()

    # -- live episodes --------------------------------------------------------------------------

    def track(self, episode: Episode) -> None:
        """Start the live journal of an episode (a fork or a restored episode brings its calls)."""
        live = self.journal.start_live(live_header(episode))
        with self._state:
            self._live[episode.id] = live
        self.sync(episode)

    def sync(self, episode: Episode) -> None:
        """Append the calls the episode made since the last sync to its live journal."""
        live = self._live.get(episode.id)
        if live is None:
            return
        with live.lock:
            calls, last = calls_after(episode, live.last_seq, live.calls)
            live.add_calls(calls, last)

    # -- writing --------------------------------------------------------------------------------

    def ended(self, episode: Episode) -> None:
        """An episode ended or was graded: write it now."""
        if not episode.closed:
            self._write_if_changed(episode)

    def record(self, episode: Episode) -> None:
        """An episode is deleted, expires or the server stops: write it unless nothing happened in
        it (no call, no verdict) or it was already written as it is; its live journal goes."""
        try:
            if episode.verdict is not None or episode.transcript():
                self._write_if_changed(episode)
        finally:
            with self._state:
                live = self._live.pop(episode.id, None)
                self._written.pop(episode.id, None)
            if live is not None:
                live.discard()

    def _write_if_changed(self, episode: Episode) -> None:
        live = self._live.get(episode.id)
        if live is not None:
            self.sync(episode)
        lock = live.lock if live is not None else self._state
        with lock:
            trajectory = episode_trajectory(episode, verdict=episode.verdict)
            signature = (len(trajectory.calls), trajectory.verdict is not None)
            if (live.written if live is not None else self._written.get(episode.id)) == signature:
                return
            self.journal.append(trajectory)
            if live is not None:
                live.mark_written(*signature)
            else:
                self._written[episode.id] = signature

    def write(self, trajectory: Trajectory) -> None:
        self.journal.append(trajectory)
