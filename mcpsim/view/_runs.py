"""A run file as the viewer reads it: an index of compact rows (one per episode, with the byte
range of its line), filtered, sorted, paged and summed up on the server, so a run of 10,000
episodes never travels to the browser whole; one episode is read from its line when it is opened.

The index follows the journal's rules (`mcpsim.trajectories._journal`): the file is append-only,
a torn last line is left for later, and the latest line of an episode wins (in a run, per task
and trial, as `mcpsim run` summarises it; in a server's recording, per episode id). A file that
grows while it is viewed (a run in progress) is read on from where the index stopped."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpsim.grading import Outcome, mean, pass_at_1, pass_hat_k
from mcpsim.tasks import TaskFileError, load_tasks
from mcpsim.trajectories import TRAJECTORIES, Trajectory

FINISHED = ("answered", "user_stop", "recorded")  # terminations that end an episode normally
MAX_PAGE = 500  # rows per page at most
# an episode's fields in the pages' JSON (`EpisodeRow.public`), in this order
PUBLIC = (
    "eid",
    "task_id",
    "trial",
    "world",
    "agent",
    "status",
    "termination",
    "reward",
    "partial_reward",
    "passed",
    "calls",
    "errors",
    "faults",
    "tokens",
    "duration_s",
    "failure",
    "tags",
    "split",
)
SHOWN_K = 8  # pass^k is reported for k up to this (and for the largest k the trials allow)


class RunError(ValueError):
    """A path that is not a run, or a query the index cannot answer (the reason is for people)."""


def failure_kind(status: str, reward: float | None, termination: str, verdict: dict[str, Any] | None) -> str:
    """Why an episode did not pass, as one word a table can filter on ("" when it passed):
    its termination when it did not end normally (timeout, step_limit, model_error, ...),
    "failed closed" when grading refused it, else the type of its first failed check, else
    "ungraded"."""
    if status == "cancelled":
        return "cancelled"
    if reward == 1.0:
        return ""
    if termination not in FINISHED:
        return termination
    if not verdict:
        return "ungraded"
    if verdict.get("failure"):
        return "failed closed"
    for check in verdict.get("checks") or []:
        if not check.get("passed", True):
            # a verdict in summary detail names its checks "<position>:<type>"
            return str(check.get("type") or str(check.get("check", "")).partition(":")[2] or "check")
    return "failed"


@dataclass
class EpisodeRow:
    """What the table, the filters and the summary need of one episode."""

    eid: str  # the episode's id in the viewer's URLs: task@trial in a run, else the episode id
    offset: int  # where its line starts in the file, and its length
    length: int
    line: int
    task_id: str
    trial: int
    world: str
    agent: str
    status: str
    termination: str
    reward: float | None
    partial: float | None
    calls: int
    errors: int  # tool calls that failed
    faults: int  # tool calls a fault profile hit
    tokens: int
    duration_s: float | None
    failure: str
    tools: tuple[tuple[str, bool, bool], ...]  # per call: tool, failed, fault
    tags: tuple[str, ...] = ()
    split: str = ""

    @property
    def passed(self) -> bool:
        return self.reward == 1.0

    @property
    def finished(self) -> bool:
        return self.status != "cancelled"

    def public(self) -> dict[str, Any]:
        """The row as the pages get it: the PUBLIC fields, in that order."""
        derived = {"partial_reward": self.partial, "passed": self.passed, "tags": list(self.tags)}
        return {k: derived[k] if k in derived else getattr(self, k) for k in PUBLIC}


def episode_key(run_id: str | None, episode_id: str | None, task_id: str | None, trial: int) -> str:
    """The viewer's id of an episode (see `EpisodeRow.eid`)."""
    if run_id is not None or episode_id is None:
        return f"{task_id or '-'}@{trial}"
    return episode_id


def row_of(t: dict[str, Any], offset: int, length: int, line: int, labels: TaskLabels) -> EpisodeRow:
    """The row of one trajectory line, read as plain JSON: indexing a large run checks each
    line's shape, and validates a whole trajectory only when its episode is opened."""
    calls = t.get("calls") or []
    tags, split = labels(t["world"], t.get("task_id"))
    return EpisodeRow(
        eid=episode_key(t.get("run_id"), t.get("episode_id"), t.get("task_id"), int(t.get("trial", 0))),
        offset=offset,
        length=length,
        line=line,
        task_id=t.get("task_id") or "",
        trial=int(t.get("trial", 0)),
        world=str(t["world"]),
        agent=str(t["agent"]),
        status=str(t["status"]),
        termination=str(t["termination"]),
        reward=t.get("reward"),
        partial=t.get("partial_reward"),
        calls=len(calls),
        errors=sum(1 for c in calls if not c["ok"]),
        faults=sum(1 for c in calls if c.get("fault")),
        tokens=int((t.get("usage") or {}).get("total_tokens") or 0),
        duration_s=t.get("duration_s"),
        failure=failure_kind(t["status"], t.get("reward"), t["termination"], t.get("verdict")),
        tools=tuple((str(c["tool"]), not c["ok"], bool(c.get("fault"))) for c in calls),
        tags=tags,
        split=split,
    )


class TaskLabels:
    """Each task's tags and split, from its world's task files (none for a world that is not
    installed here, or a task it no longer has). Loaded once per world."""

    def __init__(self) -> None:
        self._worlds: dict[str, dict[str, tuple[tuple[str, ...], str]]] = {}
        self._lock = threading.Lock()

    def __call__(self, world: str, task_id: str | None) -> tuple[tuple[str, ...], str]:
        with self._lock:
            if world not in self._worlds:
                self._worlds[world] = self._load(world)
        return self._worlds[world].get(task_id or "", ((), ""))

    @staticmethod
    def _load(world: str) -> dict[str, tuple[tuple[str, ...], str]]:
        try:
            return {t.id: (tuple(t.tags), t.split) for t in load_tasks(world).tasks}
        except (LookupError, TaskFileError, OSError):
            return {}


# -- queries ------------------------------------------------------------------------------------

SORTS: dict[str, Callable[[EpisodeRow], Any]] = {
    "task": lambda r: (r.task_id, r.trial),
    "trial": lambda r: (r.trial, r.task_id),
    "world": lambda r: (r.world, r.task_id, r.trial),
    "reward": lambda r: (r.reward if r.reward is not None else -1.0, r.task_id, r.trial),
    "partial": lambda r: (r.partial if r.partial is not None else -1.0, r.task_id, r.trial),
    "calls": lambda r: (r.calls, r.task_id, r.trial),
    "errors": lambda r: (r.errors, r.task_id, r.trial),
    "faults": lambda r: (r.faults, r.task_id, r.trial),
    "tokens": lambda r: (r.tokens, r.task_id, r.trial),
    "duration": lambda r: (r.duration_s or 0.0, r.task_id, r.trial),
    "failure": lambda r: (r.failure, r.task_id, r.trial),
    "termination": lambda r: (r.termination, r.task_id, r.trial),
}
FILTERS = ("world", "tag", "split", "passed", "failure", "termination", "q")


@dataclass(frozen=True)
class Query:
    """Which rows, in what order, which page. Built from a request's query parameters."""

    world: str = ""
    tag: str = ""
    split: str = ""
    passed: str = ""  # "", "yes" or "no"
    failure: str = ""
    termination: str = ""
    q: str = ""  # part of the task id or episode id
    sort: str = "task"
    desc: bool = False
    offset: int = 0
    limit: int = 50

    @classmethod
    def parse(cls, params: dict[str, str]) -> Query:
        """From query parameters; RunError naming the parameter for a bad value."""
        if params.get("passed", "") not in ("", "yes", "no"):
            raise RunError("passed must be yes or no")
        sort = params.get("sort", "task")
        if sort not in SORTS:
            raise RunError(f"sort must be one of {', '.join(SORTS)}, not {sort[:40]!r}")
        order = params.get("order", "asc")
        if order not in ("asc", "desc"):
            raise RunError("order must be asc or desc")
        numbers = {}
        for name, default, top in (("offset", 0, 10**9), ("limit", 50, MAX_PAGE)):
            text = params.get(name, str(default))
            if not text.isdigit() or not (name == "offset" or 1 <= int(text)) or int(text) > top:
                raise RunError(f"{name} must be an integer from {0 if name == 'offset' else 1} to {top}")
            numbers[name] = int(text)
        return cls(
            **{f: params.get(f, "")[:200] for f in FILTERS},
            sort=sort,
            desc=order == "desc",
            offset=numbers["offset"],
            limit=numbers["limit"],
        )

    def matches(self, r: EpisodeRow) -> bool:
        return (
            (not self.world or r.world == self.world)
            and (not self.tag or self.tag in r.tags)
            and (not self.split or r.split == self.split)
            and (not self.passed or r.passed == (self.passed == "yes"))
            and (not self.failure or r.failure == self.failure)
            and (not self.termination or r.termination == self.termination)
            and (not self.q or self.q.lower() in r.task_id.lower() or self.q.lower() in r.eid.lower())
        )

    def page(self, rows: list[EpisodeRow]) -> dict[str, Any]:
        """The matching rows' count and the requested page of them, sorted."""
        picked = sorted((r for r in rows if self.matches(r)), key=SORTS[self.sort], reverse=self.desc)
        return {
            "total": len(picked),
            "offset": self.offset,
            "limit": self.limit,
            "rows": [r.public() for r in picked[self.offset : self.offset + self.limit]],
        }


# -- summaries ----------------------------------------------------------------------------------


def shown_pass_hat_k(outcomes: Iterable[Outcome]) -> dict[int, float]:
    """pass^k (`mcpsim.grading._scores.pass_hat_k`) from (passes, trials) per task, for k up to
    SHOWN_K and for the largest k that every task's trials allow."""
    tasks = list(outcomes)
    max_k = min((n for _, n in tasks), default=0)
    return pass_hat_k(tasks, [*range(1, min(max_k, SHOWN_K) + 1), *([max_k] if max_k else [])])


def histogram(values: list[float], edges: list[float]) -> list[dict[str, Any]]:
    """Counts per bin [edges[i], edges[i+1]), the last bin closed."""
    bins = [{"low": lo, "high": hi, "count": 0} for lo, hi in zip(edges, edges[1:], strict=False)]
    for v in values:
        for i, b in enumerate(bins):
            if b["low"] <= v < b["high"] or (i == len(bins) - 1 and v == b["high"]):
                b["count"] += 1
                break
    return bins


def call_edges(top: int) -> list[float]:
    """Bin edges for call counts: one bin per count up to 20, then about 20 even bins."""
    if top < 20:
        return [float(i) for i in range(top + 2)]
    step = -(-(top + 1) // 20)
    return [float(i) for i in range(0, top + step + 1, step)]


def summarize(rows: list[EpisodeRow]) -> dict[str, Any]:
    """The headline figures, distributions and per-tool error rates of these episodes (cancelled
    ones, waiting for a resume, are counted apart and left out of the scores, as in `mcpsim run`)."""
    finished = [r for r in rows if r.finished]
    by_task: dict[str, list[EpisodeRow]] = {}
    for r in finished:
        by_task.setdefault(f"{r.world}/{r.task_id}", []).append(r)
    outcomes = [(sum(r.passed for r in runs), len(runs)) for runs in by_task.values()]
    tools: dict[str, Counter[str]] = {}
    for r in finished:
        for tool, failed, fault in r.tools:
            c = tools.setdefault(tool, Counter())
            c["calls"] += 1
            c["errors"] += failed
            c["faults"] += fault
    n = len(finished)
    top_calls = max((r.calls for r in finished), default=0)
    return {
        "episodes": n,
        "tasks": len(by_task),
        "cancelled": len(rows) - n,
        "episode_errors": sum(1 for r in finished if r.status == "error"),
        "passed": sum(1 for r in finished if r.passed),
        "pass_at_1": pass_at_1(outcomes),
        "pass_hat_k": shown_pass_hat_k(outcomes),
        "mean_reward": mean(r.reward or 0.0 for r in finished),
        "mean_partial": mean(r.partial or 0.0 for r in finished),
        "calls": sum(r.calls for r in finished),
        "errors": sum(r.errors for r in finished),
        "faults": sum(r.faults for r in finished),
        "tokens": sum(r.tokens for r in finished),
        "partial_histogram": histogram([r.partial or 0.0 for r in finished], [i / 10 for i in range(11)]),
        "calls_histogram": histogram([float(r.calls) for r in finished], call_edges(top_calls)),
        "tools": sorted(
            (
                {
                    "tool": tool,
                    "calls": c["calls"],
                    "errors": c["errors"],
                    "faults": c["faults"],
                    "error_rate": round(c["errors"] / c["calls"], 6),
                }
                for tool, c in tools.items()
            ),
            key=lambda t: (-t["error_rate"], -t["calls"], t["tool"]),
        ),
    }


def facets(rows: list[EpisodeRow]) -> dict[str, list[dict[str, Any]]]:
    """The values each filter can take in these rows, with their counts."""
    counters: dict[str, Counter[str]] = {k: Counter() for k in ("world", "tag", "split", "failure", "termination")}
    for r in rows:
        counters["world"][r.world] += 1
        counters["tag"].update(r.tags)
        counters["split"][r.split] += 1
        counters["failure"][r.failure] += 1
        counters["termination"][r.termination] += 1
    return {name: [{"value": v, "count": n} for v, n in sorted(c.items()) if v] for name, c in counters.items()}


# -- the run file -------------------------------------------------------------------------------


@dataclass
class RunFile:
    """One run's `trajectories.jsonl`, indexed. Safe to use from several threads."""

    path: Path
    name: str
    labels: TaskLabels = field(default_factory=TaskLabels)
    _rows: dict[str, EpisodeRow] = field(default_factory=dict)
    _end: int = 0  # the index covers the file up to here (the end of its last whole line)
    _lines: int = 0
    _stat: tuple[int, int] | None = None  # (size, mtime_ns) when last read
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def open(cls, path: Path | str, name: str | None = None, labels: TaskLabels | None = None) -> RunFile:
        """A run directory (holding trajectories.jsonl) or a .jsonl file; RunError if neither."""
        given = Path(path)
        file = given / TRAJECTORIES if given.is_dir() else given
        if not file.is_file():
            what = "holds no trajectories.jsonl" if given.is_dir() else "does not exist"
            raise RunError(f"{given} {what}: give a run directory (mcpsim run --out) or a trajectories .jsonl file")
        run = cls(file, name or (given.name if given.is_dir() else given.stem), labels or TaskLabels())
        run.refresh()
        return run

    @classmethod
    def open_all(cls, paths: Sequence[Path | str], names: Sequence[str]) -> list[RunFile]:
        """Runs viewed together (`open` each, by its name), sharing one `TaskLabels`: each world's
        task files are read once."""
        labels = TaskLabels()
        return [cls.open(path, name, labels) for path, name in zip(paths, names, strict=True)]

    def rows(self) -> list[EpisodeRow]:
        self.refresh()
        return list(self._rows.values())

    def refresh(self) -> None:
        """Index what was appended since the last read (all of it again if the file shrank)."""
        with self._lock:
            try:
                st = self.path.stat()
            except OSError as exc:
                raise RunError(f"cannot read {self.path}: {exc.strerror}") from None
            if self._stat == (st.st_size, st.st_mtime_ns):
                return
            if st.st_size < self._end:
                self._rows, self._end, self._lines = {}, 0, 0
            self._read_from(self._end)
            self._stat = (st.st_size, st.st_mtime_ns)

    def _read_from(self, start: int) -> None:
        with self.path.open("rb") as f:
            f.seek(start)
            offset = start
            for raw in f:
                if not raw.endswith(b"\n"):
                    break  # a line still being written, or torn: read it when it is whole
                self._lines += 1
                if raw.strip():
                    try:
                        row = row_of(json.loads(raw), offset, len(raw), self._lines, self.labels)
                    except (ValueError, KeyError, TypeError, AttributeError) as exc:
                        what = f"no {exc}" if isinstance(exc, KeyError) else str(exc)[:300]
                        raise RunError(f"{self.path}:{self._lines} is not a trajectory: {what}") from None
                    self._rows.pop(row.eid, None)  # the latest line wins, in the order lines came
                    self._rows[row.eid] = row
                offset += len(raw)
            self._end = offset

    def row(self, eid: str) -> EpisodeRow:
        self.refresh()
        try:
            return self._rows[eid]
        except KeyError:
            raise LookupError(f"run {self.name} has no episode {eid[:100]!r}") from None

    def episode(self, eid: str) -> Trajectory:
        """The episode's latest line, read and validated."""
        row = self.row(eid)
        with self.path.open("rb") as f:
            f.seek(row.offset)
            line = f.read(row.length)
        try:
            return Trajectory.model_validate_json(line)
        except ValueError as exc:
            raise RunError(f"{self.path}:{row.line} is not a trajectory: {str(exc)[:300]}") from None

    def describe(self) -> dict[str, Any]:
        rows = self.rows()
        return {
            "name": self.name,
            "path": str(self.path),
            "episodes": len(rows),
            "worlds": sorted({r.world for r in rows}),
            "agents": sorted({r.agent for r in rows}),
        }


def compare(a: list[EpisodeRow], b: list[EpisodeRow]) -> list[dict[str, Any]]:
    """The episodes of two runs side by side, matched by task and trial: each with both rows
    (None where a run lacks it), the reward and partial-reward deltas, and whether it flipped
    ("fixed": failed in A, passed in B; "broke": the other way)."""
    left = {(r.world, r.task_id, r.trial): r for r in a}
    right = {(r.world, r.task_id, r.trial): r for r in b}
    out = []
    for key in sorted(left.keys() | right.keys()):
        ra, rb = left.get(key), right.get(key)
        row: dict[str, Any] = {
            "world": key[0],
            "task_id": key[1],
            "trial": key[2],
            "a": ra.public() if ra else None,
            "b": rb.public() if rb else None,
            "reward_delta": None,
            "partial_delta": None,
            "flipped": "",
        }
        if ra is not None and rb is not None:
            row["reward_delta"] = round((rb.reward or 0.0) - (ra.reward or 0.0), 6)
            row["partial_delta"] = round((rb.partial or 0.0) - (ra.partial or 0.0), 6)
            if ra.passed != rb.passed:
                row["flipped"] = "fixed" if rb.passed else "broke"
        out.append(row)
    return out


def episode_json(t: Trajectory, row: EpisodeRow | None = None) -> dict[str, Any]:
    """An episode as the page renders it: the trajectory, with the row's labels."""
    data = t.model_dump(mode="json")
    data["view"] = (
        row.public()
        if row is not None
        else {
            "failure": failure_kind(t.status, t.reward, t.termination, t.verdict),
            "eid": episode_key(t.run_id, t.episode_id, t.task_id, t.trial),
        }
    )
    return data


def dumps(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
