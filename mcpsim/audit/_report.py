"""The report of `mcpsim check`: per task what held and what did not, per world the tasks and
the tallies of the cheating baselines, alternatives and near misses (`mcpsim check --json`)."""

from __future__ import annotations

from pydantic import BaseModel, computed_field

from mcpsim.audit._baselines import BASELINES, RATED, BaselineName, BaselineResult
from mcpsim.audit._solutions import SolutionResult

__all__ = ["BaselineTally", "SolutionTally", "TaskReport", "WorldReport"]


class TaskReport(BaseModel):
    task_id: str
    ok: bool
    problems: list[str]
    gold_reward: float | None = None
    noop_reward: float | None = None
    noop_partial: float | None = None
    state_hash: str | None = None
    baselines: dict[BaselineName, BaselineResult] = {}
    solutions: list[SolutionResult] = []


class BaselineTally(BaseModel):
    applied: int
    passed: int
    not_applicable: int


class SolutionTally(BaseModel):
    run: int
    behaved: int


class WorldReport(BaseModel):
    world: str
    world_version: str | None = None
    ok: bool
    problems: list[str]
    tasks: list[TaskReport] = []

    @property
    def task_count(self) -> int:
        return len(self.tasks)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def baselines(self) -> dict[BaselineName, BaselineTally]:
        """Per cheating baseline: to how many tasks it applied and how many it passed (must be 0)."""
        tally = {}
        for name in BASELINES:
            results = [t.baselines[name] for t in self.tasks if name in t.baselines]
            applied = sum(r.applied for r in results)
            tally[name] = BaselineTally(
                applied=applied,
                passed=sum(r.applied and r.passed for r in results),
                not_applicable=len(results) - applied,
            )
        return tally

    @computed_field  # type: ignore[prop-decorator]
    @property
    def pass_rates(self) -> dict[BaselineName, float]:
        """Per baseline judged by its rate (`RATED`): the share of the tasks it ran on that it passed."""
        rates = {}
        for name in (n for n in BASELINES if n in RATED):
            results = [t.baselines[name] for t in self.tasks if name in t.baselines]
            rates[name] = round(sum(r.applied and r.passed for r in results) / len(results), 4) if results else 0.0
        return rates

    @computed_field  # type: ignore[prop-decorator]
    @property
    def alternatives(self) -> SolutionTally:
        return self._solutions("alternative")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def near_misses(self) -> SolutionTally:
        return self._solutions("near_miss")

    def _solutions(self, kind: str) -> SolutionTally:
        results = [s for t in self.tasks for s in t.solutions if s.kind == kind]
        return SolutionTally(run=len(results), behaved=sum(s.behaved for s in results))
