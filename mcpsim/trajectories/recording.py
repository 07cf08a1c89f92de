"""Server-side recording: an episode's transcript and change log as a `Trajectory`, whoever the
client was (a desktop app, a coding agent, someone's own harness, or mcpsim's runner)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import structlog

from mcpsim.engine.episode import Episode
from mcpsim.trajectories.schema import CallLog, FunctionCall, Message, RowChange, ToolCall, ToolDef, Trajectory

log = structlog.get_logger("mcpsim.trajectories.recording")


def tool_defs(episode: Episode) -> list[ToolDef]:
    return [ToolDef(function={"name": s.name, "description": s.description, "parameters": s.input_schema()})
            for s in sorted(episode.world.tools.values(), key=lambda s: s.name)]


def call_logs(episode: Episode) -> list[CallLog]:
    """Every call in order, each with the row changes it made."""
    by_call: dict[int, list[RowChange]] = {}
    for c in episode.changes():
        by_call.setdefault(c.call_seq, []).append(
            RowChange(table=c.table, op=c.op, key=c.key, before=c.before, after=c.after))
    return [
        CallLog(index=i, tool=r.tool, arguments=r.arguments, ok=r.ok, result=r.result, error=r.error,
                call_seq=r.call_seq, fault=r.fault,
                tool_call_id=f"call_{i}", changes=by_call.get(r.call_seq, []) if r.call_seq else [])
        for i, r in enumerate(episode.transcript())
    ]


def episode_trajectory(episode: Episode, *, verdict: dict[str, Any] | None = None) -> Trajectory:
    """The episode as seen from the server: the policy as the system message, then each tool
    call as an assistant message and its result as a tool message."""
    messages = [Message(role="system", content=episode.world.policy)]
    calls = call_logs(episode)
    for log in calls:
        messages.append(Message(role="assistant", tool_calls=[ToolCall(id=log.tool_call_id or "", function=FunctionCall(
            name=log.tool, arguments=json.dumps(log.arguments)))]))
        content = json.dumps(log.result) if log.ok else f"Error: {log.error}"
        messages.append(Message(role="tool", tool_call_id=log.tool_call_id, name=log.tool, content=content))
    return Trajectory(
        episode_id=episode.id, world=episode.world.name, world_version=episode.template_version,
        task_id=episode.task_id, seed=episode.seed, agent="mcp-client", status="completed",
        termination="recorded", messages=messages, tools=tool_defs(episode), calls=calls, verdict=verdict,
        reward=verdict.get("reward") if verdict else None,
        partial_reward=verdict.get("partial_reward") if verdict else None,
        state_hash=episode.state_hash(),
    )


class Recorder:
    """`--record DIR`: appends trajectories to `<dir>/trajectories.jsonl`, one line per episode,
    flushed and fsynced, so a crash loses no written episode.

    An episode is written as soon as it ends (POST .../end) or is graded (POST .../verify),
    and again when it is deleted, expires or the server stops only if it changed since (a
    verdict arrived after an end, or calls were made after it). The last line of an episode id
    is its final record.

    Crash recovery: every live episode has a small entry in `<dir>/live/` (its id, world, task,
    seed and version), fsynced when the episode is added and removed once its final record is
    written. On start, each entry left by a crash whose episode has no line in the file gets
    one: status error, termination server_error, with what the entry holds and no calls (an
    episode's database lives in memory and dies with the process). A graded or ended episode
    is already in the file, so a crash loses no verdict."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        self.path = self.directory / "trajectories.jsonl"
        self.live_dir = self.directory / "live"
        self.live_dir.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()  # one append at a time
        self._state = threading.Lock()  # one decision to write an episode at a time
        self._written: dict[str, tuple[bool, int]] = {}  # episode id -> (had a verdict, calls) when last written
        self.recovered = self.recover()

    # -- live episodes --------------------------------------------------------------------------

    def track(self, episode: Episode) -> None:
        """Note a live episode in `live/`, so a crash leaves a trace of it."""
        entry = {"episode_id": episode.id, "world": episode.world.name, "world_version": episode.template_version,
                 "task_id": episode.task_id, "seed": episode.seed}
        tmp = self.live_dir / f".{episode.id}.tmp"
        with tmp.open("w", encoding="utf-8") as f:
            f.write(json.dumps(entry))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self._live_path(episode.id))
        _fsync_dir(self.live_dir)

    def _live_path(self, episode_id: str) -> Path:
        return self.live_dir / f"{episode_id}.json"

    def _untrack(self, episode_id: str) -> None:
        self._live_path(episode_id).unlink(missing_ok=True)

    # -- writing --------------------------------------------------------------------------------

    def ended(self, episode: Episode) -> None:
        """An episode ended or was graded: write it now. A graded episode is final (its state is
        frozen and a verdict does not change), so its live entry goes too."""
        if episode.closed:
            return
        self._write_if_changed(episode)
        if episode.verdict is not None:
            self._untrack(episode.id)

    def record(self, episode: Episode) -> None:
        """An episode is deleted, expires or the server stops: write it unless nothing happened in
        it (no call, no verdict) or it was already written as it is."""
        try:
            if episode.verdict is not None or episode.transcript():
                self._write_if_changed(episode)
        finally:
            with self._state:
                self._written.pop(episode.id, None)
            self._untrack(episode.id)

    def _write_if_changed(self, episode: Episode) -> None:
        with self._state:
            signature = (episode.verdict is not None, len(episode.transcript()))
            if self._written.get(episode.id) == signature:
                return
            self.write(episode_trajectory(episode, verdict=episode.verdict))
            self._written[episode.id] = signature

    def write(self, trajectory: Trajectory) -> None:
        line = trajectory.model_dump_json() + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    # -- after a crash --------------------------------------------------------------------------

    def recover(self) -> list[str]:
        """Drop a line cut short by a crash, then write a line for each episode that was live at
        the crash and has none; returns their ids."""
        entries = sorted(self.live_dir.glob("*.json"))
        for stale in self.live_dir.glob(".*.tmp"):
            stale.unlink(missing_ok=True)
        if self.path.exists():
            data = self.path.read_bytes()
            if data and not data.endswith(b"\n"):
                keep = data.rfind(b"\n") + 1
                log.warning("dropping an incomplete last line", path=str(self.path), bytes=len(data) - keep)
                with self.path.open("r+b") as f:
                    f.truncate(keep)
                    os.fsync(f.fileno())
        if not entries:
            return []
        present: set[str] = set()
        if self.path.exists():
            with self.path.open(encoding="utf-8") as f:
                for line in f:
                    try:
                        present.add(json.loads(line).get("episode_id"))
                    except (ValueError, AttributeError):
                        continue
        recovered = []
        for entry_path in entries:
            try:
                entry = json.loads(entry_path.read_text(encoding="utf-8"))
                episode_id = entry["episode_id"]
            except (ValueError, KeyError, OSError):
                log.warning("unreadable live-episode entry", path=str(entry_path))
                entry_path.unlink(missing_ok=True)
                continue
            if episode_id not in present:
                self.write(Trajectory(
                    episode_id=episode_id, world=entry.get("world") or "", world_version=entry.get("world_version") or "",
                    task_id=entry.get("task_id"), seed=entry.get("seed"), agent="mcp-client", status="error",
                    termination="server_error",
                    error="the server stopped abruptly while this episode was live; its calls and state were lost "
                          "(recovered from the live-episode journal on restart)"))
                recovered.append(episode_id)
            entry_path.unlink(missing_ok=True)
        _fsync_dir(self.live_dir)
        if recovered:
            log.warning("recovered episodes lost in a crash", count=len(recovered), path=str(self.path))
        return recovered


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
