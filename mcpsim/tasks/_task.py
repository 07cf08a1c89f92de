"""Task files: what an episode should achieve, and the rubric that decides whether it did.

A world keeps its tasks in `worlds/<name>/tasks/*.yaml`. They are plain data validated by the
models below, loadable without importing the world's code (`load_tasks("retail")`, in
`mcpsim.tasks._loading`). The facts an answer states, the free-text rules and the rubric checks
have modules of their own (`_facts`, `_free_text`, `_rubric`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from mcpsim.engine import BUILTIN, FaultProfile, load_profile
from mcpsim.tasks._facts import Fact, state_fact
from mcpsim.tasks._free_text import FreeTextRule, free_text_rules
from mcpsim.tasks._roles import Role, role_errors, with_team_gold
from mcpsim.tasks._rubric import AnswerFacts, Check, Custom, duplicate_ids
from mcpsim.tasks._strict import Strict

__all__ = [
    "CANARY_PREFIX",
    "Action",
    "ConfirmationReply",
    "Say",
    "SetupCall",
    "SetupDelete",
    "SetupInsert",
    "SetupStep",
    "SetupUpdate",
    "Solution",
    "Step",
    "Task",
    "TaskFile",
    "TaskSet",
    "UnknownTask",
    "UserSpec",
]

CANARY_PREFIX = "MCPSIM-CANARY"


# -- initial state ------------------------------------------------------------------------------


class SetupCall(Strict):
    """Call a world tool (it must succeed)."""

    call: str
    args: dict[str, Any] = {}


class SetupUpdate(Strict):
    """Set columns on the rows of `update` (a table) matching `where` (at least one must match)."""

    update: str
    where: dict[str, Any]
    set: dict[str, Any]


class SetupInsert(Strict):
    insert: str
    row: dict[str, Any]


class SetupDelete(Strict):
    delete: str
    where: dict[str, Any]


SetupStep = SetupCall | SetupUpdate | SetupInsert | SetupDelete


class Action(Strict):
    """One tool call of the gold solution. `expect: error` marks a call the solution expects to
    fail (an injected fault it then recovers from)."""

    tool: str
    args: dict[str, Any] = {}
    expect: Literal["ok", "error"] = "ok"


def _check_free_text(free_text: dict[str, FreeTextRule], volatile: list[str], tasks: list[Task]) -> None:
    both = sorted(set(free_text) & set(volatile))
    if both:
        raise ValueError(
            f"{', '.join(both)} listed both as volatile (set by the world, ignored) and as free_text "
            "(written by the agent, graded by a rule); keep one"
        )
    for pattern, rule in free_text.items():
        if "." not in pattern:
            raise ValueError(f"free_text pattern {pattern!r} is not of the form table.column")
        for task in tasks:
            custom = {c.name for c in task.rubric if isinstance(c, Custom)}
            if rule.checked_by is not None and rule.checked_by not in custom:
                raise ValueError(
                    f"task {task.id}: free_text {pattern} is checked_by {rule.checked_by!r}, "
                    "but the rubric has no custom check of that name"
                )


# -- tasks -----------------------------------------------------------------------------------


class ConfirmationReply(Strict):
    """A scripted answer to a confirmation request: `reply` when the agent's question contains
    `match` (case ignored)."""

    match: str = Field(min_length=1)
    reply: str = Field(min_length=1)


class UserSpec(Strict):
    """The simulated user of multi-turn runs: who they are, what they know, what they want,
    and optionally scripted turns."""

    persona: str = ""
    knows: dict[str, Any] = {}
    wants: str = ""
    turns: list[str] = []
    confirmations: list[ConfirmationReply] = Field(
        [],
        description=(
            "Scripted answers to the agent's confirmation requests, tried in order (the first whose `match` the "
            "question contains answers). Otherwise the scripted user says yes to a question about what it asked for "
            "and no to one mentioning anything else (mcpsim.tasks._dialogue). Answering a confirmation never uses "
            "up `turns`."
        ),
    )


class Say(Strict):
    """A solution step in which the agent speaks to the user (and the simulated user replies):
    a confirmation question before a write, for instance."""

    say: str = Field(min_length=1)


Step = Action | Say


class Solution(Strict):
    """Another way to do the task, for `mcpsim check`: alternatives must pass, near misses must
    fail. `steps` default to the gold actions, `answer` to the oracle's answer."""

    name: str = Field(min_length=5, description="What this solution does differently, as a phrase.")
    steps: list[Step] | None = None
    answer: str | None = None
    faults: str | FaultProfile | None = Field(None, description="A fault profile for this run (default: the task's)")


class Task(Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]{0,80}$")
    instruction: str = Field(min_length=10, description="What the agent is asked, as the user would say it.")
    user: UserSpec = UserSpec()
    seed: int = Field(0, ge=0)
    scale: str = "default"
    setup: list[SetupStep] = []
    faults: str | FaultProfile | None = Field(None, description="A fault profile (built-in name or inline)")
    gold: list[Action]
    answer: list[Fact] = []
    forbidden: list[Fact] = Field([], description="Facts a misinformed answer would state; stating one fails.")
    rubric: list[Check] = Field(min_length=1)
    alternatives: list[Solution] = Field([], description="Other correct solutions: each must pass.")
    near_misses: list[Solution] = Field([], description="Plausible wrong solutions: each must fail.")
    volatile: list[str] = Field(
        [],
        description="table.column patterns the world sets itself (timestamps...), "
        "ignored by gold_state unless the agent wrote the value.",
    )
    free_text: dict[str, FreeTextRule] = Field(
        {},
        description=(
            "table.column patterns the agent fills in its own words, each graded by a rule instead of by equality "
            "with the gold solution (over the file's rules for the same pattern)."
        ),
    )
    tags: list[str] = []
    difficulty: Literal["easy", "medium", "hard"]
    split: Literal["train", "dev", "test", "hard"]  # hard: long chained tasks held apart (10+ gold calls)
    roles: dict[str, Role] = Field(
        {},
        exclude_if=lambda roles: not roles,  # a one-agent task serializes as it always did
        description="A team task's agents by name (`mcpsim.tasks._roles`); `gold` is then theirs, in this order.",
    )

    def oracle_answer(self) -> str:
        """A final answer that states every fact (what a perfect agent would say)."""
        parts = [state_fact(fact) for fact in self.answer]
        return "; ".join(parts) + "." if parts else "Done."

    def fault_profile(self) -> FaultProfile | None:
        return load_profile(self.faults)

    _team_gold = model_validator(mode="before")(with_team_gold)

    @model_validator(mode="after")
    def _answer_checked_only_if_given(self) -> Task:
        if any(isinstance(c, AnswerFacts) for c in self.rubric) and not self.answer:
            raise ValueError("the rubric checks answer facts but the task lists none under 'answer'")
        if isinstance(self.faults, str) and self.faults not in BUILTIN:
            raise ValueError(
                f"unknown fault profile {self.faults!r} (built-in: {', '.join(BUILTIN)}); or write the profile inline"
            )
        _check_free_text(self.free_text, self.volatile, [self])
        if twice := duplicate_ids(self.rubric):
            raise ValueError(f"check id(s) {', '.join(twice)} name more than one rubric check; an id names one")
        if problems := role_errors(self.roles):
            raise ValueError("; ".join(problems))
        return self

    _free_text_shorthands = field_validator("free_text", mode="before")(free_text_rules)


class TaskFile(Strict):
    world: str
    canary: str = Field(description="A unique string that must never appear in anything an agent sees.")
    volatile: list[str] = Field(
        [],
        description=(
            "table.column patterns of values the world sets itself (timestamps...): every gold_state check ignores "
            "them, except where the agent wrote the value."
        ),
    )
    free_text: dict[str, FreeTextRule] = Field(
        {},
        description=(
            "table.column patterns the agent fills in its own words (a memo, a message body), each graded by a rule "
            "instead of by equality with the gold solution."
        ),
    )
    tasks: list[Task]

    _free_text_shorthands = field_validator("free_text", mode="before")(free_text_rules)

    @model_validator(mode="after")
    def _free_text_is_not_volatile(self) -> TaskFile:
        _check_free_text(self.free_text, self.volatile, self.tasks)
        for task in self.tasks:
            _check_free_text(task.free_text, self.volatile, [task])
            _check_free_text(self.free_text, task.volatile, [task])
        return self

    @field_validator("canary")
    @classmethod
    def _canary_format(cls, value: str) -> str:
        if not value.startswith(CANARY_PREFIX) or len(value) < len(CANARY_PREFIX) + 16:
            raise ValueError(f"a canary starts with {CANARY_PREFIX!r} and carries at least 16 random characters")
        return value


class TaskSet(BaseModel):
    """All the tasks of a world, from one or more files."""

    world: str
    files: list[TaskFile]

    @property
    def tasks(self) -> list[Task]:
        return [t for f in self.files for t in f.tasks]

    @property
    def canaries(self) -> set[str]:
        return {f.canary for f in self.files}

    def file_of(self, task_id: str) -> TaskFile:
        for f in self.files:
            if any(t.id == task_id for t in f.tasks):
                return f
        raise KeyError(task_id)

    def get(self, task_id: str) -> Task:
        for t in self.tasks:
            if t.id == task_id:
                return t
        raise UnknownTask(task_id, [t.id for t in self.tasks])

    def volatile_for(self, task: Task) -> list[str]:
        return [*self.file_of(task.id).volatile, *task.volatile]

    def free_text_for(self, task: Task) -> dict[str, FreeTextRule]:
        """The free-text rules of `task`: its own, over its file's for the same pattern."""
        return {**self.file_of(task.id).free_text, **task.free_text}


class UnknownTask(LookupError):
    def __init__(self, task_id: str, known: list[str]) -> None:
        hint = f" (known: {', '.join(known[:8])}{', ...' if len(known) > 8 else ''})" if known else " (none)"
        super().__init__(f"unknown task {task_id!r}{hint}")
