"""What every plan kind produces and declares: a `Plan` (a task's gold actions and what its
rubric and wording are made from, with the `Ask`s it words) and a `PlanKind` (where a kind's
plans come from and what its tasks are like). A kind of task is a module holding its plans
function, with its row in `_kinds.PLAN_KINDS`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from mcpsim.engine import FaultProfile
from mcpsim.taskgen._probe import WorldProbe
from mcpsim.tasks import Action, Check, Fact, Solution

Kind = Literal[
    "write",
    "workflow",
    "refusal",
    "lookup",
    "recovery",
    "pick",
    "branch",
    "sweep",
    "tally",
    "triage",
    "errand",
    "review",
    "ask",
    "change",
    "decline",
]
PLAN_ROUNDS = 2  # plans per action (or record kind), on different arguments


@dataclass(frozen=True)
class Ask:
    """One change the user asks for: a request ("rent an available bike to a rider") and its details."""

    request: str
    details: str

    def inline(self) -> str:
        return f"{self.request} ({self.details})" if self.details else self.request


@dataclass
class Plan:
    """What a task asks: its gold actions and everything its rubric and wording are made from."""

    kind: Kind
    actions: list[Action]  # the writes (or, for lookups and refusals, the reads that find the answer)
    person: str | None = None  # the identity row the user is, if any
    facts: list[Fact] = field(default_factory=list)
    forbidden: list[Fact] = field(default_factory=list)  # what a guess would say: the rival values
    asks: list[Ask] = field(default_factory=list)  # the changes asked for, in order (writes, refusals, recovery)
    question: str = ""  # a lookup's question (slots GREETING_SLOT and ME_SLOT)
    tail: str = ""  # a last sentence of the instruction
    faults: FaultProfile | None = None
    near_miss: tuple[str, list[Action], str | None] | None = None  # name, actions, answer
    wrong_answer: str | None = None
    tags: list[str] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)  # process checks of the kind's own (the read that shows a value)
    # composed plans: what the simulated user knows (else the ids the gold's arguments hold); their
    # actions already find and verify the user (`identified`)
    knows: dict[str, Any] | None = None
    # dialogue plans (`_dialogues`): the user's scripted answers to requests for the go-ahead
    # (`UserSpec.confirmations`), and near misses with their own conversation
    confirmations: list[dict[str, str]] = field(default_factory=list)
    misses: list[Solution] = field(default_factory=list)

    @property
    def identified(self) -> bool:
        """Whether the actions already find and verify the user (no identity lookup put first)."""
        return self.knows is not None

    def key(self) -> str:
        return repr([(a.tool, sorted(a.args.items(), key=str)) for a in self.actions]) + self.kind


@dataclass(frozen=True)
class PlanKind:
    """A kind of plan: the plans a world offers of it, and how its tasks are worded and graded."""

    name: Kind
    plans: Callable[[WorldProbe], Iterator[Plan]]  # every plan of the kind, in the order tried
    difficulty: Literal["easy", "medium", "hard"]
    wants: str  # what the user wants (`UserSpec.wants`)
    # the instruction: the plan's question, its one ask (then its tail), or its two asks in order
    instruction: Literal["question", "request", "two requests"]
    # whether the gold solution changes records: then the rubric checks each changed row and the
    # final records against the gold's, else that nothing changed
    changes: bool
    read_first: bool = False  # an alternative reads the changed record before the change
    reworded: bool = False  # an alternative states the answer (if any) in other words
