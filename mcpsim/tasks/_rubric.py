"""Rubric checks: the requirements that decide whether an episode achieved its task, each a
sentence a person can check and a test of the final state, the calls or the answer."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from mcpsim.tasks._strict import Strict

__all__ = [
    "AllowRule",
    "AllowedChanges",
    "AnswerFacts",
    "CallOrder",
    "Check",
    "CheckBase",
    "ColumnSum",
    "Confirmed",
    "Custom",
    "FieldEquals",
    "GoldState",
    "RowAbsent",
    "RowCount",
    "RowExists",
    "ToolCalled",
    "ToolNotCalled",
    "Where",
    "duplicate_ids",
]

Where = dict[str, Any]
"""Column conditions, all of which must hold: `{"status": "cancelled"}`, or with an operator:
`{"amount_cents": {"gte": 100}}` (eq, ne, gt, gte, lt, lte, in, not_in, like, is_null)."""


CHECK_ID = r"^[A-Za-z0-9][A-Za-z0-9_.:#*/-]{0,127}$"  # a given id: a key for dashboards and rewards


class CheckBase(Strict):
    id: str | None = Field(
        None,
        pattern=CHECK_ID,
        exclude_if=lambda given: given is None,  # a check without one serializes as it always did
        description="The check's stable name in verdicts (default: its type and target, `mcpsim.grading._check_ids`).",
    )
    requirement: str = Field(min_length=5, description="The requirement as a sentence a person can check.")
    weight: float = Field(1.0, gt=0, le=100)
    noop_passes: bool = Field(description="Whether an agent that does nothing should pass this check.")

    @field_validator("requirement")
    @classmethod
    def _a_sentence(cls, value: str) -> str:
        # In plain YAML, " #" starts a comment: `requirement: Order #W1 is cancelled` loads as "Order".
        if len(value.split()) < 3:
            raise ValueError(
                f"requirement {value!r} is too short to be a sentence (three words at least); "
                "if it was cut short, quote it: in YAML, ' #' starts a comment"
            )
        return value


class RowExists(CheckBase):
    type: Literal["row_exists"]
    table: str
    where: Where


class RowAbsent(CheckBase):
    type: Literal["row_absent"]
    table: str
    where: Where


class FieldEquals(CheckBase):
    """Exactly one row matches `where`, and its `values` are as given."""

    type: Literal["field_equals"]
    table: str
    where: Where
    values: dict[str, Any] = Field(min_length=1)


class RowCount(CheckBase):
    type: Literal["row_count"]
    table: str
    where: Where = {}
    equals: int = Field(ge=0)


class ColumnSum(CheckBase):
    type: Literal["column_sum"]
    table: str
    column: str
    where: Where = {}
    equals: float
    tolerance: float = Field(0.005, ge=0)


class GoldState(CheckBase):
    """The final state equals the state reached by replaying the gold actions on a fresh episode
    of this task, ignoring volatile columns (`table.column` patterns, plus the file's)."""

    type: Literal["gold_state"]
    volatile: list[str] = []


class AllowRule(Strict):
    table: str
    where: Where = {}
    ops: list[Literal["insert", "update", "delete"]] = ["insert", "update", "delete"]


class AllowedChanges(CheckBase):
    """Only these rows may change; any other change is collateral damage. Without `allow`, the
    rows the gold actions changed are the allowed ones."""

    type: Literal["allowed_changes"]
    allow: list[AllowRule] | None = None


class AnswerFacts(CheckBase):
    """The final answer states every fact of the task's `answer` list."""

    type: Literal["answer_facts"]


class ToolCalled(CheckBase):
    """A call of `tool` that took effect (committed) whose arguments include `args`, at least
    `min_times` times."""

    type: Literal["tool_called"]
    tool: str
    args: dict[str, Any] = {}
    min_times: int = Field(1, ge=1)


class ToolNotCalled(CheckBase):
    """No call of a tool matching any pattern (`delete_*`) took effect. An attempt the world
    refused does not count (an agent may try, be refused, and explain), unless
    `include_refused: true` says the attempt itself is the violation."""

    type: Literal["tool_not_called"]
    tools: list[str] = Field(min_length=1)
    include_refused: bool = False


class CallOrder(CheckBase):
    """Every call that took effect matching `then` (tool patterns, or "writes", "reads", "any")
    comes after one that took effect matching `first` and whose result includes `first_result`
    (for an identity check: `{verified: true}`, so a failed verification does not count)."""

    type: Literal["call_order"]
    first: list[str] = Field(min_length=1)
    first_result: dict[str, Any] = {}
    then: list[str] | Literal["writes", "reads", "any"] = "writes"


class Confirmed(CheckBase):
    """Before the first call that took effect of a tool matching `tools` (patterns, or "writes"),
    the agent asked the user to confirm and the user agreed (graded on the conversation). With
    `describe` (the default), the agent's request also says what it would do: it states one of
    the call's argument values or a value of a row it changed (an id, an amount, a card's last
    four; `mcpsim.grading._described`), so a bare "Shall I go ahead?" asks for a blind yes and
    fails."""

    type: Literal["confirmed"]
    tools: list[str] | Literal["writes"] = "writes"
    describe: bool = True


class Custom(CheckBase):
    """A check written in Python in the world's folder (`@world.check(name)`)."""

    type: Literal["custom"]
    name: str
    params: dict[str, Any] = {}


class Cost(CheckBase):
    """What the episode spent, for a world that bills its tools (`mcpsim.world.billing`): within
    its budget, at most `max_spend` of its currency, at most `max_calls` calls (every call the
    transcript holds, refused ones too). A do-nothing agent spends nothing, so this check is a
    guard: it gates the partial reward, and a trainer can reward doing the job cheaply."""

    type: Literal["cost"]
    max_spend: int | None = Field(None, ge=0, description="The most the episode may spend (default: its budget).")
    max_calls: int | None = Field(None, ge=0, description="The most tool calls the episode may make.")


Check = Annotated[
    RowExists
    | RowAbsent
    | FieldEquals
    | RowCount
    | ColumnSum
    | GoldState
    | AllowedChanges
    | AnswerFacts
    | ToolCalled
    | ToolNotCalled
    | CallOrder
    | Confirmed
    | Custom
    | Cost,
    Field(discriminator="type"),
]


def duplicate_ids(rubric: list[Check]) -> list[str]:
    """The ids a task file gives more than one of its checks (each must name one check)."""
    ids = [check.id for check in rubric if check.id is not None]
    return sorted({i for i in ids if ids.count(i) > 1})
