"""What grading returns: a verdict with per-check results and a readable row-level diff, and the
summary of it that a caller without the control plane's token sees."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, ValidationError, model_serializer

from mcpsim.engine import RowOp


class CheckResult(BaseModel):
    # stable, unique in the verdict (`_check_ids`); "" (and left out of the JSON) in a verdict stored before ids
    id: str = Field("", exclude_if=lambda given: not given)
    type: str
    requirement: str
    weight: float
    noop_passes: bool
    passed: bool
    reason: str
    # a team task's: the roles whose calls the check depends on (`_roles.check_roles`); None (and
    # left out of the JSON) for a one-agent task
    roles: list[str] | None = Field(None, exclude_if=lambda given: given is None)


class DiffEntry(BaseModel):
    """One net change the episode made: an inserted or deleted row (column None), or one
    column of an updated row."""

    table: str
    key: str
    op: RowOp
    column: str | None = None
    before: Any = None
    after: Any = None

    def __str__(self) -> str:
        if self.op == "update":
            return f"{self.table} {self.key} {self.column}: {self.before!r} -> {self.after!r}"
        row = self.after if self.op == "insert" else self.before
        shown = ", ".join(f"{c}={v!r}" for c, v in list((row or {}).items())[:6])
        return f"{self.table} {self.key}: {'inserted' if self.op == 'insert' else 'deleted'} {{{shown}}}"


class _Components(BaseModel):
    """The reward components, guards and spend of a verdict, left out of its JSON when empty: a verdict
    stored before they existed dumps exactly as it was stored."""

    components: dict[str, float] = {}
    guards: list[str] = []
    # what the episode spent, for a world that bills its tools (`mcpsim.world.billing`): budget,
    # spent, left and billed calls; empty for a world without prices
    spend: dict[str, int] = {}

    @model_serializer(mode="wrap")
    def _without_empty(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for key in ("components", "guards", "spend"):
                if key in data and not data[key]:
                    del data[key]
        return data


class Verdict(_Components):
    task_id: str
    world: str
    world_version: str
    episode_id: str | None = None
    passed: bool  # strict: every check passed and nothing failed closed
    reward: float  # 1.0 when passed, else 0.0
    # in [0, 1]: the weighted share of the checks a do-nothing agent fails that passed (progress),
    # times the weighted share of the others (`guards`) that passed; 0 for a do-nothing agent, 1
    # only when every check passed; 0.0 when failed closed
    partial_reward: float
    failure: str | None = None  # why the verdict failed closed (reward 0 whatever the checks say)
    checks: list[CheckResult] = []
    diff: list[DiffEntry] = []
    answer: str | None = None
    calls: int = 0
    state_hash: str | None = None  # of the graded (frozen) state
    # each check as a reward component, named "<position from 1>:<type>" as in the summary:
    # 1.0 passed, 0.0 not; `guards` names those a do-nothing agent passes on this task (nothing
    # done, nothing broken: they gate the partial reward, never add to it)
    components: dict[str, float] = {}
    guards: list[str] = []

    def report(self) -> str:
        """A few lines a person can read."""
        head = "PASS" if self.passed else "FAIL"
        lines = [f"{head} {self.task_id}: reward {self.reward:.0f}, partial {self.partial_reward:.2f}"]
        if self.failure:
            lines.append(f"  failed closed: {self.failure}")
        for c in self.checks:
            lines.append(f"  [{'x' if c.passed else ' '}] {c.requirement} ({c.reason})")
        if self.diff:
            lines.append("  changes:")
            lines.extend(f"    {d}" for d in self.diff[:50])
            if len(self.diff) > 50:
                lines.append(f"    ... {len(self.diff) - 50} more")
        return "\n".join(lines)

    def summary(self) -> VerdictSummary:
        """The outcome and which checks passed, never what they expected. Left out: each check's
        requirement and reason (they name expected values, "The agent said the total is $308"),
        the row diff, the answer, the state hash."""
        return VerdictSummary(
            **self.model_dump(include=set(VerdictSummary.model_fields) - {"detail", "checks"}),  # components too
            checks=[CheckOutcome(check=f"{i}:{c.type}", passed=c.passed) for i, c in enumerate(self.checks, 1)],
        )


class CheckOutcome(BaseModel):
    # "<position in the rubric, from 1>:<check type>"; not the check's id, which may name what the
    # task expects (a table, a tool), and a summary is what an agent under test may see
    check: str
    passed: bool


class VerdictSummary(_Components):
    """A verdict in `summary` detail (see `Verdict.summary`): what a server without a token shows
    and, in that mode, all an episode keeps."""

    detail: Literal["summary"] = "summary"
    task_id: str | None = None
    episode_id: str | None = None
    passed: bool
    reward: float | None = None
    partial_reward: float | None = None
    failure: str | None = None
    checks: list[CheckOutcome] = []
    components: dict[str, float] = {}
    guards: list[str] = []

    def summary(self) -> VerdictSummary:
        return self


VerdictDetail = Literal["full", "summary"]


def shown(verdict: Verdict | VerdictSummary, detail: VerdictDetail) -> Verdict | VerdictSummary:
    """What a caller sees of a verdict: all of it, or its summary (a summary stays one)."""
    return verdict if detail == "full" else verdict.summary()


class StoredVerdictError(ValueError):
    pass


def load_verdict(data: Mapping[str, Any]) -> Verdict | VerdictSummary:
    """A verdict as an episode stores it (`Episode.verdict`, the JSON of either model)."""
    model: type[Verdict] | type[VerdictSummary] = VerdictSummary if data.get("detail") == "summary" else Verdict
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise StoredVerdictError(f"the episode's stored verdict is not a {model.__name__}: {exc}") from None
