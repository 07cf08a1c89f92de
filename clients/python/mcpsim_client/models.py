"""What the server answers, as plain dataclasses (unknown keys are kept in `raw`, so a newer
server does not break an older client)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

RewardKind = Literal["strict", "partial"]
Ending = Literal["answered", "step_limit", "timeout", "error"]
"""Why an adapter's episode ended: `answered` (the agent's final answer, after which the user had
nothing more to say), `step_limit` (cut at the adapter's or the trainer's limit of steps, turns or
tokens: truncated, graded as it stood), `timeout` (a request to the server timed out: not graded),
`error` (the server failed or refused: not graded). Only `answered` and `step_limit` carry a verdict."""


def reward_kind(kind: str) -> RewardKind:
    """`kind` checked: the adapters' `reward` setting."""
    if kind not in ("strict", "partial"):
        raise ValueError(f"reward must be 'strict' or 'partial', not {kind!r}")
    return "strict" if kind == "strict" else "partial"


class EpisodeOptions(TypedDict, total=False):
    """What a new episode is of, besides its world (`Client.create`, `Client.episode` and their
    async twins): a `task` (its world state, seed, scale and fault profile), or the world at a
    `seed` and `scale`. `faults`: a profile's name (none, flaky, hostile) or one written inline,
    instead of the task's. None, like leaving an option out, lets the server choose."""

    task: str | None
    seed: int | None
    scale: str | None
    faults: str | dict[str, Any] | None


@dataclass(frozen=True)
class EpisodeInfo:
    """An episode as the control plane describes it."""

    # what it is, then how it was made
    id: str
    mcp_url: str  # the episode's own MCP endpoint (streamable HTTP): give it to the agent
    world: str
    world_version: str
    task: str | None
    seed: int
    scale: str
    faults: str | None  # the fault profile's name
    calls: int  # every call so far: successful, refused and failed
    clock: str  # the virtual clock, ISO 8601
    ended: bool
    flagged: bool  # the episode hit a simulator bug: it can never pass
    flags: list[str] = field(default_factory=list)
    calls_ok: int | None = None  # of which succeeded (None: a server too old to say)
    calls_failed: int | None = None  # of which were refused or failed
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EpisodeInfo:
        return cls(
            id=data["id"],
            mcp_url=data["mcp_url"],
            world=data["world"],
            world_version=data.get("world_version", ""),
            task=data.get("task"),
            seed=int(data.get("seed", 0)),
            scale=data.get("scale", "default"),
            faults=data.get("faults"),
            calls=int(data.get("calls", 0)),
            clock=str(data.get("clock", "")),
            ended=bool(data.get("ended", False)),
            flagged=bool(data.get("flagged", False)),
            flags=list(data.get("flags") or []),
            calls_ok=None if data.get("calls_ok") is None else int(data["calls_ok"]),
            calls_failed=None if data.get("calls_failed") is None else int(data["calls_failed"]),
            raw=data,
        )


@dataclass(frozen=True)
class Check:
    check: str  # the check's type ("row_exists"), numbered in summary mode ("1:row_exists")
    passed: bool
    requirement: str | None = None  # absent in summary mode
    reason: str | None = None


@dataclass(frozen=True)
class Verdict:
    """The grader's verdict on an episode's final state. `reward` is strict (1.0 when every
    check passed, else 0.0), `partial_reward` the weighted share of checks passed; both 0.0
    when grading failed closed (`failure` says why)."""

    passed: bool
    reward: float
    partial_reward: float
    failure: str | None
    checks: list[Check]
    state_hash: str | None  # of the graded state (absent in summary mode)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def score(self, kind: str) -> float:
        """The reward of `kind`: "strict" (`reward`) or "partial" (`partial_reward`)."""
        return self.reward if reward_kind(kind) == "strict" else self.partial_reward

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Verdict:
        checks = [
            Check(
                check=str(c.get("check") or c.get("type") or ""),  # summary: "N:type"; full: the type
                passed=bool(c.get("passed")),
                requirement=c.get("requirement"),
                reason=c.get("reason"),
            )
            for c in data.get("checks") or []
        ]
        return cls(
            passed=bool(data.get("passed")),
            reward=float(data.get("reward") or 0.0),
            partial_reward=float(data.get("partial_reward") or 0.0),
            failure=data.get("failure"),
            checks=checks,
            state_hash=data.get("state_hash"),
            raw=data,
        )


@dataclass(frozen=True)
class Tool:
    """An MCP tool as tools/list describes it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Tool:
        return cls(
            name=data["name"],
            description=data.get("description") or "",
            input_schema=data.get("inputSchema") or {"type": "object", "properties": {}},
            raw=data,
        )

    def as_openai(self) -> dict[str, Any]:
        """An OpenAI function-tool definition."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.input_schema},
        }


@dataclass(frozen=True)
class ToolResult:
    """The answer to an MCP tools/call: `is_error` for a refused or failed call (its text says
    why), `structured` the tool's structured result."""

    is_error: bool
    text: str
    structured: Any
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ToolResult:
        structured = data.get("structuredContent")
        texts = [c.get("text", "") for c in data.get("content") or [] if isinstance(c, dict)]
        return cls(
            is_error=bool(data.get("isError")),
            text="\n".join(texts) if texts else (json.dumps(structured) if structured is not None else ""),
            structured=structured,
            raw=data,
        )

    def as_message_content(self) -> str:
        """The result as the text of an OpenAI tool message (the structured result as JSON
        when there is one, as mcpsim's runner shows it to a model)."""
        if self.structured is not None:
            return json.dumps(self.structured)
        return self.text


@dataclass(frozen=True)
class TaskInfo:
    """A task as a harness sees it: never its gold solution or rubric. `dialogue`: the rubric
    needs more than the first message (a confirmation from the user, or scripted user turns)."""

    id: str
    split: str
    instruction: str
    dialogue: bool

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TaskInfo:
        return cls(
            id=data["id"],
            split=data.get("split", ""),
            instruction=data["instruction"],
            dialogue=bool(data.get("dialogue")),
        )


def choose_tasks(
    world: str,
    tasks: list[TaskInfo],
    ids: list[str] | None = None,
    split: str | None = None,
    *,
    dialogue: bool = False,
) -> list[TaskInfo]:
    """The tasks an adapter runs: those named by `ids` (in that order; an unknown id is an
    error), else every task of `split` (or of every split); with `dialogue=False` only those whose
    rubric needs no dialogue (for an adapter that cannot ask the simulated user, through
    `Client.user_reply`, for more than the first message)."""
    by_id = {t.id: t for t in tasks}
    if ids is not None:
        if unknown := sorted(set(ids) - set(by_id)):
            raise ValueError(f"unknown tasks of {world}: {', '.join(unknown)}")
        return [by_id[i] for i in ids]
    chosen = [t for t in tasks if (dialogue or not t.dialogue) and (split is None or t.split == split)]
    if not chosen:
        raise ValueError(f"no task of {world} to run (split {split!r}{'' if dialogue else ', without a dialogue'})")
    return chosen


def verdict_parts(verdict: Verdict) -> dict[str, Any]:
    """The verdict's named components, beside the scalar a trainer optimises: `strict` (1.0 or
    0.0), `partial` (the weighted share of checks passed), `passed`, `failure` (why grading
    failed closed, or None) and `checks`, each check's result (1.0 or 0.0) by its numbered name
    ("2:row_exists", in the rubric's order, so repeated check types stay apart): the server's
    reward components, or worked out from the checks of a server too old to send them."""
    given = verdict.raw.get("components")
    checks: dict[str, float] = {str(k): float(v) for k, v in given.items()} if isinstance(given, dict) else {}
    for number, check in enumerate(verdict.checks if not checks else [], 1):
        numbered = check.check.split(":", 1)[0].isdigit()  # a summary verdict numbers them already
        checks[check.check if numbered else f"{number}:{check.check}"] = 1.0 if check.passed else 0.0
    return {
        "strict": verdict.reward,
        "partial": verdict.partial_reward,
        "passed": verdict.passed,
        "failure": verdict.failure,
        "checks": checks,
    }


def ending_info(ending: Ending, verdict: Verdict | None = None, error: str | None = None) -> dict[str, Any]:
    """What the adapters report at an episode's end, in the field their trainer reads: the
    `ending`, `truncated` (cut at a limit: to mask or drop, not a failure of the agent's), and the
    verdict's parts (`verdict_parts`) when it was graded, or the `error` when it was not."""
    info: dict[str, Any] = {"ending": ending, "truncated": ending == "step_limit"}
    if verdict is not None:
        info.update(verdict_parts(verdict))
    if error is not None:
        info["error"] = error
    return info
