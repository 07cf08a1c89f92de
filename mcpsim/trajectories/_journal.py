"""The trajectory journal: the one writer and reader of trajectory JSONL files, with one crash
policy for every writer (`mcpsim run --out`, `mcpsim serve --record`, stdio `serve --record`).

A directory holds `trajectories.jsonl`, one `Trajectory` per line, and, while a server records,
`live/<episode id>.jsonl`, one file per live episode.

- **A finished episode** is one line appended to `trajectories.jsonl`: written, flushed and
  fsynced before `Journal.append` returns. Once a caller has seen it return (a verdict answered,
  a run's progress line printed), the episode survives a killed process and a lost machine.
- **A live episode** (a server recording) has a journal of its own: a header line, fsynced with
  its directory when the episode starts, then one line per tool call, appended and flushed as the
  call is answered. Calls are not fsynced one by one: the page cache outlives a killed process,
  which is the crash this journal is for; a machine that loses power may lose the last calls of
  an episode that had not finished (a finished one is in `trajectories.jsonl`, fsynced).
- **Reading** tolerates a torn last line (the process died in the middle of an append): it is
  dropped, and opening a `Journal` truncates it away. Any other line that is not a trajectory is
  an error naming the file and line.
- **Recovery**: `Journal.recover()` turns every live journal a crash left behind into a line of
  `trajectories.jsonl` (status error, termination server_error, with every call the journal
  holds), unless the file already holds the episode as it was at the crash, and removes it.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import structlog
from pydantic import BaseModel, ValidationError

from mcpsim.trajectories._records import CallLog, FunctionCall, Message, ToolCall, Trajectory

log = structlog.get_logger("mcpsim.trajectories._journal")

TRAJECTORIES = "trajectories.jsonl"
LIVE = "live"
CRASH_ERROR = (
    "the server stopped abruptly while this episode was live; its calls up to the crash were recovered "
    "from the live journal on restart, its database was lost"
)


class JournalError(ValueError):
    """A journal line that is not a trajectory (other than a torn last line)."""


# -- reading ------------------------------------------------------------------------------------


def iter_trajectories(
    path: Path, on_bad: Callable[[int, bytes, ValidationError], None] | None = None
) -> Iterator[Trajectory]:
    """Each trajectory in a JSONL file, in order; blank lines are skipped. A line that is not a
    trajectory goes to `on_bad(number, line, error)` if given (a torn last line is the one
    without a newline). Without `on_bad`, a torn last line is skipped with a warning and any
    other bad line raises `JournalError` naming the file and line."""
    with Path(path).open("rb") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield Trajectory.model_validate_json(line)
            except ValidationError as exc:
                if on_bad is not None:
                    on_bad(number, line, exc)
                elif not line.endswith(b"\n"):
                    log.warning("skipping a torn last line", path=str(path), line=number, bytes=len(line))
                else:
                    raise JournalError(f"{path}:{number} is not a trajectory: {first_error(exc)}") from None


def read_trajectories(path: Path) -> list[Trajectory]:
    """Every trajectory in a JSONL file (none if it does not exist); see `iter_trajectories`."""
    return list(iter_trajectories(path)) if Path(path).exists() else []


def first_error(exc: ValidationError) -> str:
    """A validation error's first problem, as `where: what`."""
    first = exc.errors(include_url=False)[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{where}: {first['msg']}" if where else first["msg"]


def call_messages(policy: str | None, calls: list[CallLog]) -> list[Message]:
    """A server-side episode as chat messages: the policy as the system message, then each call
    as an assistant message and its result (or error) as a tool message."""
    messages = [Message(role="system", content=policy)] if policy is not None else []
    for call in calls:
        call_id = call.tool_call_id or f"call_{call.index}"
        messages.append(
            Message(
                role="assistant",
                tool_calls=[
                    ToolCall(id=call_id, function=FunctionCall(name=call.tool, arguments=json.dumps(call.arguments)))
                ],
            )
        )
        content = json.dumps(call.result) if call.ok else f"Error: {call.error}"
        messages.append(Message(role="tool", tool_call_id=call_id, name=call.tool, content=content))
    return messages


# -- live episodes ------------------------------------------------------------------------------


class LiveHeader(BaseModel):
    """The first line of a live journal: what a recovered trajectory needs beside its calls."""

    episode_id: str
    world: str
    world_version: str
    task_id: str | None = None
    seed: int | None = None
    policy: str | None = None

    def trajectory(self, calls: list[CallLog], **outcome: Any) -> Trajectory:
        """The episode as the server saw it (its agent is an MCP client): its calls as chat messages,
        and `outcome` (status, termination, verdict, ...)."""
        return Trajectory(
            **self.model_dump(exclude={"policy"}),  # the episode's id, world, version, task and seed
            agent="mcp-client",
            messages=call_messages(self.policy, calls),
            calls=calls,
            **outcome,
        )


class LiveJournal:
    """One live episode's journal (`live/<id>.jsonl`). Its lines: `{"header": ...}` first, then
    `{"call": CallLog}` per call and `{"written": {"calls": n, "verdict": bool}}` each time the
    episode is appended to `trajectories.jsonl`. Its methods are safe from several threads."""

    def __init__(self, path: Path, header: LiveHeader) -> None:
        self.path = path
        self.header = header
        self.calls = 0  # call lines written
        self.last_seq = 0  # the transcript position (the episode's own counter) of the last call written
        self.written: tuple[int, bool] | None = None  # (calls, had a verdict) when last appended to the file
        self.lock = threading.Lock()  # held by a caller across reading new calls and adding them
        self.discarded = False

    def add_calls(self, calls: list[CallLog], last_seq: int) -> None:
        """Append calls (flushed, not fsynced: see the module's crash policy)."""
        if calls:
            self._append([{"call": c.model_dump(mode="json")} for c in calls])
            self.calls += len(calls)
        self.last_seq = max(self.last_seq, last_seq)

    def mark_written(self, calls: int, verdict: bool) -> None:
        self._append([{"written": {"calls": calls, "verdict": verdict}}])
        self.written = (calls, verdict)

    def discard(self) -> None:
        """Remove the journal (its episode is written and gone); later appends do nothing."""
        with self.lock:
            self.discarded = True
            self.path.unlink(missing_ok=True)

    def _append(self, records: list[dict[str, Any]]) -> None:
        if self.discarded:  # a sync that raced the episode's removal: nothing left to journal
            return
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(text)
            f.flush()


# -- the journal --------------------------------------------------------------------------------


class Journal:
    """A directory's `trajectories.jsonl` and live journals. Opening one creates the directory
    and truncates a torn last line away (fsynced), so later appends start on a line of their own."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        self.path = self.directory / TRAJECTORIES
        self.live_dir = self.directory / LIVE
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()  # one append at a time
        self._drop_torn_line()

    def append(self, trajectory: Trajectory) -> None:
        """Write one finished episode: flushed and fsynced before returning."""
        line = trajectory.model_dump_json() + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    def read(self) -> list[Trajectory]:
        return read_trajectories(self.path)

    def start_live(self, header: LiveHeader) -> LiveJournal:
        """A live journal for an episode, its header fsynced (file and directory) before returning."""
        self.live_dir.mkdir(exist_ok=True)
        live = LiveJournal(self.live_dir / f"{header.episode_id}.jsonl", header)
        tmp = self.live_dir / f".{header.episode_id}.tmp"
        with tmp.open("w", encoding="utf-8") as f:
            f.write(json.dumps({"header": header.model_dump(mode="json")}, ensure_ascii=False) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, live.path)
        _fsync_dir(self.live_dir)
        return live

    def recover(self) -> list[str]:
        """Append a line for each episode whose live journal a crash left and whose latest state
        the file does not hold; remove the live journals. Returns the ids of the episodes written."""
        if not self.live_dir.is_dir():
            return []
        for stale in self.live_dir.glob(".*.tmp"):
            stale.unlink(missing_ok=True)
        recovered = []
        live = sorted(self.live_dir.glob("*.jsonl"))
        held = self._calls_held() if live else {}
        for path in live:
            trajectory = _recovered_trajectory(path)
            # a crash between appending an episode and marking its live journal written leaves
            # the episode in the file already: it is not written twice
            if trajectory is not None and held.get(trajectory.episode_id or "", -1) < len(trajectory.calls):
                self.append(trajectory)
                recovered.append(trajectory.episode_id or path.stem)
            path.unlink(missing_ok=True)
        _fsync_dir(self.live_dir)
        if recovered:
            log.warning("recovered episodes that were live at a crash", count=len(recovered), path=str(self.path))
        return recovered

    def _calls_held(self) -> dict[str, int]:
        """For each episode the file holds, the most calls any of its lines records."""
        held: dict[str, int] = {}
        if self.path.exists():
            for t in iter_trajectories(self.path, on_bad=lambda *_: None):
                if t.episode_id:
                    held[t.episode_id] = max(held.get(t.episode_id, -1), len(t.calls))
        return held

    def _drop_torn_line(self) -> None:
        if not self.path.exists():
            return
        with self.path.open("r+b") as f:
            size = f.seek(0, os.SEEK_END)
            if size == 0:
                return
            f.seek(size - 1)
            if f.read(1) == b"\n":
                return
            keep = _last_newline_end(f, size)
            log.warning("dropping a torn last line", path=str(self.path), bytes=size - keep)
            f.truncate(keep)
            f.flush()
            os.fsync(f.fileno())


def _last_newline_end(f: Any, size: int, block: int = 1 << 16) -> int:
    """The offset just past the last newline of an open binary file (0 if there is none),
    reading backwards so a long file is not read whole."""
    end = size
    while end > 0:
        start = max(0, end - block)
        f.seek(start)
        at = f.read(end - start).rfind(b"\n")
        if at >= 0:
            return start + at + 1
        end = start
    return 0


def _recovered_trajectory(path: Path) -> Trajectory | None:
    """What a live journal says about an episode that was live at a crash, or None if the file
    already holds it as it was (written with all its calls, or graded: a verdict is final)."""
    header: LiveHeader | None = None
    calls: list[CallLog] = []
    written: dict[str, Any] | None = None
    try:
        with path.open("rb") as f:
            for line in f:
                if not line.endswith(b"\n"):
                    break  # torn by the crash
                record = json.loads(line)
                if "header" in record:
                    header = LiveHeader.model_validate(record["header"])
                elif "call" in record:
                    calls.append(CallLog.model_validate(record["call"]))
                elif "written" in record:
                    written = record["written"]
    except (OSError, ValueError) as exc:  # ValidationError is a ValueError
        log.warning("unreadable live journal: skipped", path=str(path), error=str(exc)[:500])
        return None
    if header is None:
        log.warning("live journal without a header: skipped", path=str(path))
        return None
    if written is not None and (written.get("verdict") or written.get("calls", -1) >= len(calls)):
        return None
    return header.trajectory(calls, status="error", termination="server_error", error=CRASH_ERROR)


def _fsync_dir(path: Path) -> None:
    """Make a rename or a new file in `path` durable (not every filesystem allows it)."""
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
