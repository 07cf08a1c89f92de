"""Task files: what an episode should achieve, and the rubric that decides whether it did.

A world keeps its tasks in `worlds/<name>/tasks/*.yaml`. They are plain data validated by the
models below, loadable without importing the world's code (`load_tasks("retail")`).
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from mcpsim.engine import BUILTIN, FaultProfile, load_profile

__all__ = [  # what `mcpsim.tasks` re-exports
    "CANARY_PREFIX",
    "Action",
    "AllowRule",
    "AllowedChanges",
    "AnswerFacts",
    "AnyFact",
    "CallOrder",
    "Check",
    "CheckBase",
    "ColumnSum",
    "ConfirmationReply",
    "Confirmed",
    "CountFact",
    "Custom",
    "DateFact",
    "DurationFact",
    "Fact",
    "FieldEquals",
    "GoldState",
    "IdFact",
    "MoneyFact",
    "NameFact",
    "NumberFact",
    "PhraseFact",
    "RowAbsent",
    "RowCount",
    "RowExists",
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
    "TaskFileError",
    "TaskSet",
    "TimeFact",
    "ToolCalled",
    "ToolNotCalled",
    "UnknownTask",
    "UserSpec",
    "Where",
    "load_task_dir",
    "load_task_file",
    "load_tasks",
    "state_fact",
    "task_folder",
]

CANARY_PREFIX = "MCPSIM-CANARY"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


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


# -- facts the final answer must state ---------------------------------------------------------
#
# A fact is typed, and the answer is parsed by its type (`mcpsim.grading._answers`): a money fact
# matches an amount stated as money, a date fact any common way of writing that date, and so on.
# A fact stated under negation does not count, and an answer that states conflicting values of
# one kind fails the fact. Plain strings and `any` lists are phrase facts; `number` is an untyped
# number (kept for old task files; prefer a typed fact).


class MoneyFact(Strict):
    """An amount of money: `$39.98`, `39.98 dollars`, `USD 39.98` (not a bare 39.98 in a date)."""

    money: float
    tolerance: float = Field(0.005, ge=0)


class CountFact(Strict):
    """A whole number of things, in digits or words: `3 bags`, `three bags`."""

    count: int = Field(ge=0)
    noun: str | None = Field(None, description="What is counted (singular), if the count must be of it.")


class NumberFact(Strict):
    """A plain number (untyped; prefer money, count or duration)."""

    number: float
    tolerance: float = Field(0.005, ge=0)


class DateFact(Strict):
    """A calendar date, in any common format (`2026-05-25`, `May 25`, `25 May 2026`, `5/25/2026`)."""

    date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    year_optional: bool = Field(True, description="Whether `May 25` (no year) states it.")


class TimeFact(Strict):
    """A time of day (`14:30`, `2:30 pm`)."""

    time: str = Field(pattern=r"^\d{2}:\d{2}$")


class DurationFact(Strict):
    """A length of time in any unit: `180 minutes`, `3 hours`, `180-minute`."""

    duration: float = Field(ge=0)
    unit: Literal["seconds", "minutes", "hours", "days", "weeks"] = "minutes"


class IdFact(Strict):
    """An identifier (an order number, a confirmation code), matched exactly up to case and a
    leading `#`."""

    id: str = Field(min_length=1)


class NameFact(Strict):
    """A person's, place's or thing's name, matched as words (case and accents ignored)."""

    name: str = Field(min_length=1)


class PhraseFact(Strict):
    """A phrase, or one of its declared synonyms; inflections (plural, tense) are accepted."""

    phrase: str = Field(min_length=1)
    synonyms: list[str] = []


class AnyFact(Strict):
    """At least one of these phrases (a phrase fact whose synonyms are listed together)."""

    any: list[str] = Field(min_length=1)


Fact = (
    str
    | MoneyFact
    | CountFact
    | NumberFact
    | DateFact
    | TimeFact
    | DurationFact
    | IdFact
    | NameFact
    | PhraseFact
    | AnyFact
)


def state_fact(fact: Fact) -> str:
    """The fact as a plain statement, the way a correct answer would put it."""
    match fact:
        case str():
            return fact
        case MoneyFact(money=money):
            return f"${money:,.2f}"
        case CountFact(count=count, noun=noun):
            return f"{count} {noun}{'' if count == 1 or not noun else 's'}" if noun else str(count)
        case NumberFact(number=number):
            return f"{number:.2f}"
        case DateFact(date=day):
            return day
        case TimeFact(time=clock):
            return clock
        case DurationFact(duration=duration, unit=unit):
            return f"{duration:g} {unit}"
        case IdFact(id=ident):
            return ident
        case NameFact(name=name):
            return name
        case PhraseFact(phrase=phrase):
            return phrase
        case AnyFact(any=phrases):
            return phrases[0]
    raise TypeError(fact)


# -- free text the agent writes --------------------------------------------------------------------


class FreeTextRule(Strict):
    """How a column the agent fills in its own words (a memo, a message body, an event title) is
    graded, instead of by equality with the gold solution's value. A value equal to one of the
    gold solution's values in that column (after normalising case, spacing and punctuation)
    always passes; any other value must satisfy every part of the rule (`mcpsim.grading._written`)."""

    grounded: bool = Field(
        True,
        description=(
            "Every number in the text, and all its words but one (or a quarter of them, if more), appear in what the "
            "agent was told (the instruction, the user's messages) or read (its tool results), or in the gold "
            "solution's text there, and never three words from nowhere in a row; common words are free."
        ),
    )
    states: list[Fact] = Field([], description="Facts the text must state (parsed as in answers).")
    equals_gold: bool = Field(False, description="The text must equal one of the gold solution's values there.")
    checked_by: str | None = Field(
        None,
        description=(
            "The name of a custom check of the rubric that grades this column (a recurrence given as a count or "
            "as an end date, say); the value is then left to that check."
        ),
    )


def free_text_rules(value: Any) -> Any:
    """`free_text:` maps column patterns to a rule, or to a shorthand: `grounded` (the default
    rule) or `gold` (equal to the gold solution's text after normalisation)."""
    if not isinstance(value, dict):
        return value
    shorthands = {"grounded": {}, "gold": {"grounded": False, "equals_gold": True}}
    rules = {}
    for pattern, rule in value.items():
        if isinstance(rule, str):
            if rule not in shorthands:
                raise ValueError(f"free_text {pattern}: unknown rule {rule!r} (use grounded, gold or a mapping)")
            rule = shorthands[rule]
        rules[pattern] = {} if rule is None else rule
    return rules


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


# -- rubric checks ------------------------------------------------------------------------------

Where = dict[str, Any]
"""Column conditions, all of which must hold: `{"status": "cancelled"}`, or with an operator:
`{"amount_cents": {"gte": 100}}` (eq, ne, gt, gte, lt, lte, in, not_in, like, is_null)."""


class CheckBase(Strict):
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
    | Custom,
    Field(discriminator="type"),
]

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
    split: Literal["train", "dev", "test"]

    def oracle_answer(self) -> str:
        """A final answer that states every fact (what a perfect agent would say)."""
        parts = [state_fact(fact) for fact in self.answer]
        return "; ".join(parts) + "." if parts else "Done."

    def fault_profile(self) -> FaultProfile | None:
        return load_profile(self.faults)

    @model_validator(mode="after")
    def _answer_checked_only_if_given(self) -> Task:
        if any(isinstance(c, AnswerFacts) for c in self.rubric) and not self.answer:
            raise ValueError("the rubric checks answer facts but the task lists none under 'answer'")
        if isinstance(self.faults, str) and self.faults not in BUILTIN:
            raise ValueError(
                f"unknown fault profile {self.faults!r} (built-in: {', '.join(BUILTIN)}); or write the profile inline"
            )
        _check_free_text(self.free_text, self.volatile, [self])
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


class TaskFileError(ValueError):
    pass


def load_task_file(path: Path) -> TaskFile:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return TaskFile.model_validate(data)
    except (yaml.YAMLError, ValidationError) as exc:
        raise TaskFileError(f"{path}: {exc}") from None


def load_task_dir(world: str, folder: Path) -> TaskSet:
    files: list[TaskFile] = []
    seen: dict[str, Path] = {}
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        f = load_task_file(path)
        if f.world != world:
            raise TaskFileError(f"{path}: declares world {f.world!r}, but lies in {world!r}'s folder")
        for t in f.tasks:
            if t.id in seen:
                raise TaskFileError(f"{path}: task id {t.id!r} also in {seen[t.id]}")
            seen[t.id] = path
        files.append(f)
    return TaskSet(world=world, files=files)


def task_folder(world: str) -> Path:
    """`<world package>/tasks`, found from the world's entry point without importing the world."""
    for ep in entry_points(group="mcpsim.worlds"):
        if ep.name == world:
            spec = importlib.util.find_spec(ep.module)
            if spec is None or not spec.submodule_search_locations:
                raise TaskFileError(f"world {world!r} ({ep.module}) is not a package; it has no task folder")
            return Path(next(iter(spec.submodule_search_locations))) / "tasks"
    raise LookupError(f"unknown world {world!r}")


_registered: dict[str, Callable[[], TaskSet]] = {}
_loaded: dict[str, TaskSet] = {}


def task_registrations() -> list[dict[str, Any]]:
    """The task registry and its loaded task sets, for code that puts them back as they were
    (`mcpsim.catalogue.worlds_registered_here_removed`)."""
    return [_registered, _loaded]


_loading = threading.Lock()  # a registered world's tasks are built once, whichever thread asks first


def register_tasks(world: str, tasks: Callable[[], TaskSet]) -> None:
    """The tasks of a world registered at run time (`mcpsim.world._registry.register_world`):
    `tasks()` is called once, the first time they are loaded."""
    _registered[world] = tasks
    _loaded.pop(world, None)


def load_tasks(world: str) -> TaskSet:
    if world in _registered:
        with _loading:
            if world not in _loaded:
                _loaded[world] = _registered[world]()
            return _loaded[world]
    return load_task_dir(world, task_folder(world))
