"""Server-side recording: an episode's transcript and change log as a `Trajectory`, whoever the
client was (a desktop app, a coding agent, someone's own harness, or mcpsim's runner)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from mcpsim.episode import Episode
from mcpsim.trajectory import CallLog, FunctionCall, Message, RowChange, ToolCall, ToolDef, Trajectory


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
    """Appends trajectories to `<dir>/trajectories.jsonl`, one flushed line per episode."""

    def __init__(self, directory: Path | str) -> None:
        self.path = Path(directory) / "trajectories.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def record(self, episode: Episode) -> None:
        """Write an ending episode, unless nothing happened in it (no call, no verdict)."""
        if episode.verdict is not None or episode.transcript():
            self.write(episode_trajectory(episode, verdict=episode.verdict))

    def write(self, trajectory: Trajectory) -> None:
        line = trajectory.model_dump_json() + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
