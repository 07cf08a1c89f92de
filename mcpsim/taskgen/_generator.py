"""Tasks for a compiled world, generated from its seeded data: real mcpsim tasks (`mcpsim.tasks`)
that the grader, `mcpsim check` and the runner take like hand-written ones.

    generate_tasks(compiled, *, count=10, seed=0, scale=None) -> list[Task]
    task_set(compiled, tasks) -> TaskSet        # the tasks as one file, with a canary of the spec's

Each task is a plan found by calling the world's tools on a fresh episode of the seeded world:

- `write`: one write that succeeds;
- `workflow`: two writes, the second on a row the first wrote (or for the same person);
- `refusal`: a write that a precondition or a state transition refuses: the agent looks the
  blocking record up and says why (the answer names the record and the blocking value);
- `lookup`: a question about a record (a typed answer: money, date, count, name, id), or how
  many records of a kind match a filter;
- `recovery`: a write the fault profile cuts short with the partial failure the spec declares;
  the agent checks the record instead of writing twice, and gives its id.

Instructions and personas come from varied templates, chosen by a `Random` seeded by the seed and
the spec. The rubric has row checks from the gold solution's net changes, `gold_state`,
`allowed_changes`, answer facts, and process checks from the policy rules (an identity lookup
before writes, confirmation before the writes a `confirm` rule lists). Alternatives (a read
before the write, the answer in other words) must pass and near misses (another row, a missing
step, a second write after a partial failure, a wrong answer) must fail: `mcpsim check` and
`mcpsim.acceptance._validate` run both.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal, Protocol, TypeVar

from mcpsim.audit import check_task
from mcpsim.engine import CallResult, Episode, FaultProfile, ScriptedFault, TemplateCache
from mcpsim.grading import Verifier, word_forms
from mcpsim.specs import (
    ActionSpec,
    Arguments,
    CompiledWorld,
    EntityModel,
    amount_field,
    id_arg,
    message_pattern,
    parse_operand,
    scope,
)
from mcpsim.specs import Path as OperandPath
from mcpsim.tasks import (
    CANARY_PREFIX,
    Action,
    AllowedChanges,
    AnswerFacts,
    CallOrder,
    Check,
    Confirmed,
    CountFact,
    DateFact,
    Fact,
    FieldEquals,
    GoldState,
    IdFact,
    MoneyFact,
    NameFact,
    PhraseFact,
    RowAbsent,
    RowExists,
    Say,
    Solution,
    Step,
    Task,
    TaskFile,
    TaskSet,
    UserSpec,
    confirmation_question,
)
from mcpsim.world import derive_seed

Kind = Literal["write", "workflow", "refusal", "lookup", "recovery"]
KINDS: tuple[Kind, ...] = ("write", "lookup", "refusal", "workflow", "recovery")
DIFFICULTY: dict[Kind, Literal["easy", "medium", "hard"]] = {
    "write": "easy",
    "lookup": "easy",
    "refusal": "medium",
    "workflow": "hard",
    "recovery": "hard",
}
REFUSAL_ORIGINS = ("precondition", "state")
MAX_CANDIDATES_PER_TASK = 4  # candidates tried per task asked for, before giving up
TRIES_PER_ACTION = 60  # candidate calls tried per action while looking for plans
PLAN_ROUNDS = 2  # plans per action (or record kind), on different arguments
SECOND_STEP_TRIES = 12  # per action, for a workflow's second step

TASK_PROBLEMS = (  # how a problem `mcpsim check` finds begins, and the check it counts under (first match)
    (
        re.compile(r"a do-nothing agent passes|grading a do-nothing agent|check .* is labelled noop_passes"),
        "not_satisfied_at_start",
    ),
    (re.compile(r"the gold|two gold runs|gold action \d"), "gold_passes_twice"),
    (re.compile(r"the cheating baseline|an agent that gives up"), "baselines_fail"),
    (re.compile(r"the alternative"), "alternatives_pass"),
    (re.compile(r"the near miss"), "near_misses_fail"),
)
PERSONAS = (
    "A regular who knows exactly what they want.",
    "A busy person writing between two meetings.",
    "A polite first-timer who is unsure of the process.",
    "Someone in a hurry who keeps messages short.",
    "A careful person who double-checks everything.",
    "A retired teacher who writes in full sentences.",
)
GREETINGS = ("Hi", "Hello", "Good morning", "Hey there", "Hi there")
# Slots a lookup's question keeps for the greeting and the speaker, filled by replacement, never by a
# second format(): braces in the data ("{x}") stay text.
GREETING_SLOT, ME_SLOT = "\x00greeting\x00", "\x00me\x00"
WRITE_TEMPLATES = (
    "{greeting}{me}. Could you {request}? The details: {details}.",
    "{greeting}{me}. I need you to {request} ({details}).",
    "{greeting}{me}. Please {request}: {details}. Thanks!",
    "{greeting}{me}. I'd like you to {request}. Here is what you need: {details}.",
)
WORKFLOW_TEMPLATES = (
    "{greeting}{me}. Two things, please. First, {first}. Then {second}.",
    "{greeting}{me}. Could you {first}, and after that {second}?",
    "{greeting}{me}. Please {first}; once that is done, {second}.",
)
REFUSAL_TAILS = (
    " If that is not possible, tell me why.",
    " If it cannot be done, please explain what stands in the way.",
    " And if something blocks it, let me know what.",
)
LOOKUP_TEMPLATES = (
    "{greeting}{me}. What is the {what} of {label} {key}?",
    "{greeting}{me}. Could you tell me the {what} of {label} {key}?",
    "{greeting}{me}. I need the {what} on record for {label} {key}.",
)
COUNT_TEMPLATES = (
    "{greeting}{me}. How many {plural} {condition} are there?",
    "{greeting}{me}. Could you count the {plural} {condition} for me?",
)
# A refusal's answer must not claim the request was carried out (a true blocking value beside
# "All done" is still a false report); under a negation it is no claim. Not "as requested": an
# agent may open with it ("As requested, I checked the booking"); nor "successfully" (verified).
SUCCESS_CLAIM = PhraseFact(phrase="all done", synonyms=["all set", "taken care of"])
RECOVERY_TAILS = (
    " Please tell me the new {label}'s id once it is done.",
    " Give me the id of the new {label} when you are done.",
)


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

    def key(self) -> str:
        return repr([(a.tool, sorted(a.args.items(), key=str)) for a in self.actions]) + self.kind


class TaskGenerator:
    """Plans found on one seeded world, rendered as tasks."""

    def __init__(
        self, compiled: CompiledWorld, *, seed: int, scale: str, templates: TemplateCache | None = None
    ) -> None:
        self.compiled = compiled
        self.spec = compiled.spec
        self.world = compiled.world
        self.seed = seed
        self.scale = scale
        self.rng = random.Random(derive_seed(seed, "taskgen", self.spec.digest()))
        self.arguments = Arguments(compiled, seed=seed, purpose="taskgen")
        # in memory, nothing shared with other processes; a validator hands its own (the same template)
        self.templates = templates or TemplateCache(None)
        self.start = Episode.create(self.world, seed, scale, templates=self.templates)
        self.dropped: Counter[str] = Counter()  # candidates `mcpsim check` refused, by the check of their first problem
        self.drawn = 0  # candidates drawn so far
        self._digest = hashlib.sha256()
        self.identity = identity_entity(compiled)
        self.confirm = sorted({a for r in self.spec.policy if r.kind == "confirm" for a in r.actions})
        self.identity_rule = any(r.kind == "identity" for r in self.spec.policy)
        self.volatile = volatile_columns(compiled)
        self.writes = [a for a in self.spec.actions if not a.read_only]
        self.gets = {a.entity: a for a in self.spec.actions if a.kind == "get"}

    def close(self) -> None:
        self.start.close()

    # -- finding calls ----------------------------------------------------------------------------

    def _outcomes(
        self, action: ActionSpec, episode: Episode, tries: int = TRIES_PER_ACTION
    ) -> Iterator[tuple[dict[str, Any], CallResult]]:
        """Calls of `action` on forks of `episode`, with their results, in a seeded order."""
        candidates = self.arguments.candidates(action, episode)
        self.rng.shuffle(candidates)
        for raw in candidates[:tries]:
            yield from self._try(action, episode, raw)

    def _try(
        self, action: ActionSpec, episode: Episode, raw: dict[str, Any]
    ) -> Iterator[tuple[dict[str, Any], CallResult]]:
        """One call on a fork of `episode` (thrown away), unless it hit a simulator bug."""
        args = {k: v for k, v in self.arguments.resolved(action, raw, episode).items() if v is not None}
        fork = episode.fork(id="taskgen")
        try:
            result = fork.call(action.name, args)
        finally:
            fork.close()
        if not result.bug:
            yield args, result

    def _successes(self, action: ActionSpec, episode: Episode, most: int = 4) -> list[dict[str, Any]]:
        """Up to `most` argument sets with which `action` succeeds and writes."""
        found: list[dict[str, Any]] = []
        for args, result in self._outcomes(action, episode):
            if not result.is_error and result.changes:
                found.append(args)
                if len(found) == most:
                    break
        return found

    def _refusals(self, action: ActionSpec) -> Iterator[tuple[dict[str, Any], str]]:
        """Calls of `action` refused by a precondition or a state transition: (args, refusal name)."""
        refusals = [r for r in self.compiled.actions[action.name].refusals if r.origin in REFUSAL_ORIGINS]
        for args, result in self._outcomes(action, self.start):
            for refusal in refusals:
                if result.is_error and message_pattern(refusal.template).match(result.error or ""):
                    yield args, refusal.name
                    break

    # -- who the user is --------------------------------------------------------------------------

    def person(self, action: ActionSpec, args: dict[str, Any], episode: Episode) -> str | None:
        """The identity row a call acts for: named by an argument or by the row it writes."""
        ident = self.identity
        if ident is None:
            return None
        if action.entity == ident:
            return args.get(id_arg(ident)) or args.get(f"source_{ident}_id")
        if args.get(id_arg(ident)):
            return str(args[id_arg(ident)])
        key = args.get(id_arg(action.entity))
        for name, f in self.spec.entities[action.entity].fields.items():
            if f.type == "ref" and f.entity == ident and key is not None:
                rows = episode.query(f'SELECT "{name}" AS v FROM "{self._table(action.entity)}" WHERE id = ?', (key,))
                return str(rows[0]["v"]) if rows and rows[0]["v"] else None
        return None

    def _table(self, entity: str) -> str:
        return self.compiled.models[entity].table.name

    def _row(self, entity: str, key: Any) -> dict[str, Any] | None:
        rows = self.start.query(f'SELECT * FROM "{self._table(entity)}" WHERE id = ?', (key,))
        return rows[0] if rows else None

    # -- plans ------------------------------------------------------------------------------------

    def write_plans(self) -> Iterator[Plan]:
        """One write per action, then a second round on other arguments."""
        found = {action.name: self._successes(action, self.start) for action in self._shuffled(self.writes)}
        for round in range(PLAN_ROUNDS):
            for action in self.writes:
                successes = found[action.name]
                if len(successes) <= round:
                    continue
                args = successes[round]
                other = next((a for a in successes if self._differs(a, args)), None)
                near = (
                    ("the same change on another record", [Action(tool=action.name, args=other)], None)
                    if other
                    else None
                )
                yield Plan(
                    "write",
                    [Action(tool=action.name, args=args)],
                    person=self.person(action, args, self.start),
                    asks=[self._ask(action, args)],
                    near_miss=near,
                    tags=[action.name],
                )

    def _differs(self, a: dict[str, Any], b: dict[str, Any]) -> bool:
        return any(a.get(k) != v for k, v in b.items())

    def workflow_plans(self) -> Iterator[Plan]:
        for first in self._shuffled(self.writes):
            if first.partial_failure is not None and first.kind == "create":
                continue
            for args in self._successes(first, self.start, 2):
                plan = self._second_step(first, args)
                if plan is not None:
                    yield plan
                    break

    def _second_step(self, first: ActionSpec, args: dict[str, Any]) -> Plan | None:
        after = self.start.fork(id="taskgen-workflow")
        try:
            result = after.call(first.name, args)
            # a list in the order of the changes, never a set: a set of strings iterates in an
            # order that changes with PYTHONHASHSEED, and `_outcomes_anchored` takes the first
            created = list(dict.fromkeys(c.key.strip('"[]') for c in result.changes if c.op == "insert"))
            touched = {str(v) for c in result.changes for v in (c.after or c.before or {}).values()} | {
                str(v) for v in args.values()
            }
            person = self.person(first, args, self.start)
            for second in self._shuffled(self.writes):
                if second.name == first.name or (second.partial_failure and second.kind == "create"):
                    continue
                for args2, outcome in self._outcomes_anchored(second, after, created):
                    if outcome.is_error or not outcome.changes:
                        continue
                    related = {str(v) for v in args2.values()} & touched
                    same_person = person is not None and self.person(second, args2, after) == person
                    if not related and not same_person:
                        continue
                    steps = [Action(tool=first.name, args=args), Action(tool=second.name, args=args2)]
                    return Plan(
                        "workflow",
                        steps,
                        person=person,
                        asks=[self._ask(first, args), self._ask(second, args2, created=created)],
                        near_miss=("only the first of the two changes", steps[:1], None),
                        tags=[first.name, second.name],
                    )
        finally:
            after.close()
        return None

    def _outcomes_anchored(
        self, action: ActionSpec, episode: Episode, created: list[str]
    ) -> Iterator[tuple[dict[str, Any], CallResult]]:
        """Calls on the rows just created first, then any."""
        key = id_arg(action.entity)
        new = [c for c in created if self._row_in(episode, action.entity, c)]
        if new and key in {p.name for p in self.world.tools[action.name].parameters}:
            for raw in self.arguments.candidates(action, episode)[:SECOND_STEP_TRIES]:
                yield from self._try(action, episode, raw | {key: new[0]})
        yield from self._outcomes(action, episode, SECOND_STEP_TRIES)

    def _row_in(self, episode: Episode, entity: str, key: str) -> bool:
        return bool(episode.query(f'SELECT 1 FROM "{self._table(entity)}" WHERE id = ?', (key,)))

    def refusal_plans(self) -> Iterator[Plan]:
        for action in self._shuffled(self.writes):
            seen: set[str] = set()
            for args, name in self._refusals(action):
                if name in seen:
                    continue
                found = self._blocking_fact(action, args, name)
                if found is None:
                    continue
                seen.add(name)
                read, facts, forbidden = found
                target = _target(action)
                key = args.get(id_arg(action.entity)) or read.args.get(next(iter(read.args)))
                yield Plan(
                    "refusal",
                    [read],
                    person=self.person(action, args, self.start),
                    facts=facts,
                    forbidden=[*forbidden, SUCCESS_CLAIM],
                    asks=[self._ask(action, args)],
                    tail=self.rng.choice(REFUSAL_TAILS),
                    near_miss=(
                        "tries the write, is refused, and says it is done",
                        [Action(tool=action.name, args=args, expect="error")],
                        f"Done: {key} is now {target}." if target else f"Done: {key} has been taken care of.",
                    ),
                    tags=[action.name, name],
                )
                break

    def _blocking_fact(
        self, action: ActionSpec, args: dict[str, Any], name: str
    ) -> tuple[Action, list[Fact], list[Fact]] | None:
        """The read that shows why a call is refused, the facts an explanation states (the
        blocking record's id and the value that blocks) and the facts it must not state (the
        field's rival values; the action's target state only as a claim that it was reached).
        None where the record already holds the state the action would set (the user's own
        request would name the answer), or where another value of the blocking field would not
        let the call through (the refusal has more than one reason)."""
        if name == "invalid_transition":
            model = self.compiled.models[action.entity]
            row = self._row(action.entity, args.get(id_arg(action.entity)))
            get = self.gets.get(action.entity)
            if row is None or get is None or model.state_field is None:
                return None
            value = row[model.state_field]
            held = PhraseFact(phrase=str(value).replace("_", " "))
            if held.phrase == _target(action):
                return None  # already in the state asked for
            if not self._sole_blocker(action, args, action.entity, row["id"], model.state_field):
                return None
            read = Action(tool=get.name, args={id_arg(action.entity): row["id"]})
            return read, [IdFact(id=row["id"]), held], self._rivals(action.entity, model.state_field, value, action)
        precondition = next(p for p in action.preconditions if p.name == name)
        rows = scope(self.spec, action)
        for raw in (precondition.require.left, precondition.require.right):
            operand = parse_operand(raw)
            if isinstance(operand, OperandPath) and operand.alias in rows:
                entity = rows[operand.alias]
                key = self._alias_key(action, operand.alias, args)
                row = self._row(entity, key)
                get = self.gets.get(entity)
                if row is None or get is None:
                    continue
                fact = self._fact(entity, operand.field, row[operand.field] if operand.field != "id" else row["id"])
                if fact is None:
                    continue
                if isinstance(fact, PhraseFact) and fact.phrase == _target(action):
                    return None  # already in the state asked for
                if not self._sole_blocker(action, args, entity, row["id"], operand.field):
                    return None
                if isinstance(fact, PhraseFact):  # the world's own refusal says it too
                    values = self.spec.entities[entity].fields[operand.field].values or []
                    fact = PhraseFact(phrase=fact.phrase, synonyms=_relayed(precondition.message, values, fact.phrase))
                read = Action(tool=get.name, args={id_arg(entity): row["id"]})
                return (
                    read,
                    [IdFact(id=row["id"]), fact],
                    self._rivals(entity, operand.field, row[operand.field], action),
                )
        return None

    def _sole_blocker(self, action: ActionSpec, args: dict[str, Any], entity: str, key: Any, name: str) -> bool:
        """Whether another value of an enum field (set outside any tool call, on a fork) lets the
        call through: then that field is the only reason the call is refused. Fields of other
        types are not tried (kept)."""
        f = self.spec.entities[entity].fields.get(name)
        if f is None or f.type != "enum":
            return True
        for value in f.values or []:
            fork = self.start.fork(id="taskgen-blocker")
            try:
                fork.conn.execute(f'UPDATE "{self._table(entity)}" SET "{name}" = ? WHERE id = ?', (value, key))
                fork.conn.commit()
                result = fork.call(action.name, args)
            finally:
                fork.close()
            if not result.is_error and not result.bug:
                return True
        return False

    def _rivals(self, entity: str, name: str, value: Any, action: ActionSpec | None = None) -> list[Fact]:
        """The other values of an enum field, as forbidden facts: an answer that lists every value
        the schemas offer ("basic or standard or premium") states a rival. A rival sharing a word
        with the answer's phrase is left out ("in transit" holds "transit"); one that the action's
        own name inflects ("cancel" and "cancelled") is forbidden only as a claim that the record
        reached it ("is now cancelled", "has been cancelled"), since a refusal names the action."""
        f = self.spec.entities[entity].fields.get(name)
        if f is None or f.type != "enum":
            return []
        own = set(str(value).split("_"))
        verbs = {w for w in action.name.split("_")} if action is not None else set()
        target = _target(action) if action is not None else None
        rivals: list[Fact] = []
        for other in f.values or []:
            words = other.split("_")
            if other == value or own & set(words):
                continue
            phrase = " ".join(words)
            if phrase == target or any(_same_word(w, v) for w in words for v in verbs):
                rivals.append(
                    PhraseFact(phrase=f"been {phrase}", synonyms=[f"is {phrase}", f"now {phrase}", f"was {phrase}"])
                )
            else:
                rivals.append(PhraseFact(phrase=phrase))
        return rivals

    def _alias_key(self, action: ActionSpec, alias: str, args: dict[str, Any]) -> Any:
        if alias == action.entity:
            return args.get(id_arg(action.entity))
        if f"{alias}_id" in args:
            return args[f"{alias}_id"]
        row = self._row(action.entity, args.get(id_arg(action.entity)))
        return row.get(f"{alias}_id") if row else None

    def _fact(self, entity: str, name: str, value: Any) -> Fact | None:
        """A typed fact for a stored value, or None where no answer could state it unambiguously."""
        if value is None or name == "id":
            return None
        f = self.spec.entities[entity].fields[name]
        if f.type == "money":
            return MoneyFact(money=value / 100)
        if f.type == "date":
            return DateFact(date=str(value)[:10])
        if f.type == "int" and value > 0:
            return CountFact(count=int(value), noun=singular(name))
        if f.type == "enum":
            return PhraseFact(phrase=str(value).replace("_", " "))
        if f.type == "str" and name == "name":
            return NameFact(name=str(value))
        return None

    def lookup_plans(self) -> Iterator[Plan]:
        """A field of a record, or a count, in turn; each round on other records."""
        counts = self._count_plans()
        for _ in range(PLAN_ROUNDS + 1):
            for entity, get in self._shuffled(list(self.gets.items())):
                plan = self._field_lookup(entity, get)
                if plan is not None:
                    yield plan
            count = next(counts, None)
            if count is not None:
                yield count
        yield from counts

    def _field_lookup(self, entity: str, get: ActionSpec) -> Plan | None:
        model = self.compiled.models[entity]
        rows = self.start.query(f'SELECT * FROM "{model.table.name}" ORDER BY id')
        if len(rows) < 2:
            return None
        row, other = self.rng.sample(rows, 2)
        names = [n for n in model.spec.fields if n != model.state_field and self._answerable(entity, n)]
        self.rng.shuffle(names)
        for name in names:
            if model.spec.fields[name].type == "enum":  # not the commonest value: a guess of it would pass
                row, other = self._uncommon(rows, name, row, other)
            fact, wrong = self._fact(entity, name, row[name]), self._fact(entity, name, other[name])
            if fact is None or wrong is None or _stated(fact) == _stated(wrong):
                continue
            return Plan(
                "lookup",
                [Action(tool=get.name, args={id_arg(entity): row["id"]})],
                facts=[fact],
                forbidden=self._rivals(entity, name, row[name]),
                question=self.rng.choice(LOOKUP_TEMPLATES).format(
                    greeting=GREETING_SLOT,
                    me=ME_SLOT,
                    what=name.replace("_", " "),
                    label=model.label.lower(),
                    key=row["id"],
                ),
                wrong_answer=f"The {name.replace('_', ' ')} is {_stated(wrong)}.",
                tags=[get.name, name],
            )
        return None

    def _uncommon(
        self, rows: list[dict[str, Any]], name: str, row: dict[str, Any], other: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """A record holding one of the field's less common values (and one holding the commonest,
        for the wrong answer), or the pair as drawn if every value is as common."""
        counts = Counter(r[name] for r in rows)
        top = max(counts.values())
        rare = [r for r in rows if counts[r[name]] < top]
        common = [r for r in rows if counts[r[name]] == top]
        if not rare or counts[row[name]] < top:
            return row, other
        return self.rng.choice(rare), self.rng.choice(common)

    def _answerable(self, entity: str, name: str) -> bool:
        """Whether a question about this field can be graded against cheap answers: an enum
        (whose values the policy text does not state), or a number or date with another of its
        kind in the same record (so an answer listing every value read fails). Not a name: the
        record holds just the one."""
        fields = self.spec.entities[entity].fields
        kind = fields[name].type
        if kind == "str":
            return False
        if kind == "enum":
            return not any(re.search(rf"\b{re.escape(str(v))}\b", self.world.policy) for v in fields[name].values or [])
        return sum(f.type == kind for f in fields.values()) >= 2

    def _count_plans(self) -> Iterator[Plan]:
        for action in self._shuffled([a for a in self.spec.actions if a.kind == "list" and a.filters]):
            model = self.compiled.models[action.entity]
            for name in action.filters:
                f = model.spec.fields[name]
                if f.type not in ("enum", "ref"):
                    continue
                counts = self.start.query(
                    f'SELECT "{name}" AS v, count(*) AS n FROM "{model.table.name}" GROUP BY "{name}" ORDER BY n DESC'
                )
                if len(counts) < 2 or counts[0]["n"] < 2 or counts[0]["n"] > action.max_limit:
                    continue
                value, n = counts[0]["v"], counts[0]["n"]
                label = model.label.lower()
                condition = (
                    f"with {name.replace('_', ' ')} {value}"
                    if f.type == "enum"
                    else f"of {self.spec.label_of(f.entity or '').lower()} {value}"
                )
                yield Plan(
                    "lookup",
                    [Action(tool=action.name, args={name: value, "limit": action.max_limit})],
                    facts=[CountFact(count=n, noun=singular(label))],
                    question=self.rng.choice(COUNT_TEMPLATES).format(
                        greeting=GREETING_SLOT, me=ME_SLOT, plural=plural(label), condition=condition
                    ),
                    wrong_answer=f"There are {counts[1]['n'] if counts[1]['n'] != n else n + 1} {plural(label)}.",
                    tags=[action.name, "count"],
                )
                break

    def recovery_plans(self) -> Iterator[Plan]:
        for action in self._shuffled([a for a in self.writes if a.partial_failure is not None]):
            get = self.gets.get(action.entity)
            if action.kind != "create" or get is None:
                continue
            profile = FaultProfile(
                name="partial-once", script=[ScriptedFault(tool=action.name, call=1, fault="partial")]
            )
            for args in self._successes(action, self.start, 3):
                episode = self.start.fork(id="taskgen-recovery")
                try:
                    episode.set_faults(profile)
                    result = episode.call(action.name, args)
                    new = [c.key.strip('"[]') for c in result.changes if c.op == "insert"]
                finally:
                    episode.close()
                if result.fault is None or not new:
                    continue
                check = Action(tool=get.name, args={id_arg(action.entity): new[0]})
                write = Action(tool=action.name, args=args, expect="error")
                tail = self.rng.choice(RECOVERY_TAILS).format(label=self.compiled.models[action.entity].label.lower())
                yield Plan(
                    "recovery",
                    [write, check],
                    person=self.person(action, args, self.start),
                    facts=[IdFact(id=new[0])],
                    asks=[self._ask(action, args)],
                    tail=tail,
                    faults=profile,
                    near_miss=(
                        "writes again after the partial failure",
                        [write, Action(tool=action.name, args=args)],
                        None,
                    ),
                    tags=[action.name, "partial_failure"],
                )
                break

    def _shuffled(self, items: list[Any]) -> list[Any]:
        items = list(items)
        self.rng.shuffle(items)
        return items

    # -- words ------------------------------------------------------------------------------------

    def _ask(self, action: ActionSpec, args: dict[str, Any], *, created: list[str] | None = None) -> Ask:
        """What the user asks for: the action's description as a request, and its arguments."""
        request = re.sub(r"\s*\([^)]*\)", "", re.split(r"\. |; ", action.description)[0]).rstrip(".")
        details = [self._detail(action, name, value, created or []) for name, value in args.items()]
        return Ask(request[0].lower() + request[1:], "; ".join(d for d in details if d))

    def _detail(self, action: ActionSpec, name: str, value: Any, created: list[str]) -> str:
        if name in ("limit", "offset"):
            return ""
        entity = self.arguments.entity_of(action, name)
        if entity is not None:
            label = self.spec.label_of(entity).lower()
            if str(value) in created:
                return f"the {label} you just created"
            role = "from " if name.startswith("source_") else "to " if name.startswith("target_") else ""
            return f"{role}{label} {value}"
        moved = amount_field(action) if name == "amount" else None  # a transfer's amount: so much of a field
        f = self.spec.entities[action.entity].fields.get(moved or name)
        if moved is not None and f is not None:
            return f"{_shown(f.type, value)} of {moved.replace('_', ' ')}"
        if f is not None and f.type == "money":
            return f"{name.replace('_', ' ')} ${float(value):,.2f}"
        return f"{name.replace('_', ' ')} {value}"

    def instruction(self, plan: Plan) -> str:
        greeting = self.rng.choice(GREETINGS)
        me = self._me(plan.person)
        if plan.kind == "lookup":
            return plan.question.replace(GREETING_SLOT, greeting).replace(ME_SLOT, me)
        if plan.kind == "workflow":
            first, second = plan.asks
            return self.rng.choice(WORKFLOW_TEMPLATES).format(
                greeting=greeting, me=me, first=first.inline(), second=second.inline()
            )
        [ask] = plan.asks
        text = self.rng.choice(WRITE_TEMPLATES).format(
            greeting=greeting, me=me, request=ask.request, details=ask.details
        )
        return text + plan.tail

    def _me(self, person: str | None) -> str:
        if person is None or self.identity is None:
            return ""
        row = self._row(self.identity, person)
        name = f"{row['name']}, " if row and isinstance(row.get("name"), str) else ""
        return f", this is {name}{self.spec.label_of(self.identity).lower()} {person}"

    # -- tasks ------------------------------------------------------------------------------------

    def task(self, plan: Plan, number: int) -> Task:
        gold = list(plan.actions)
        if plan.person is not None and self.identity in self.gets:
            lookup = Action(tool=self.gets[self.identity].name, args={id_arg(self.identity): plan.person})
            gold = [lookup, *(a for a in gold if a != lookup)]
        answer: list[Fact] = list(plan.facts)
        rubric: list[Check] = []
        if plan.kind in ("write", "workflow", "recovery"):
            rubric += self._row_checks(gold, plan.faults)
        rubric.append(
            GoldState(type="gold_state", requirement=_gold_requirement(plan), noop_passes=not self._writes(gold))
        )
        rubric.append(
            AllowedChanges(
                type="allowed_changes",
                requirement="Nothing changed beyond what the request needed.",
                noop_passes=True,
            )
        )
        if answer:
            rubric.append(
                AnswerFacts(
                    type="answer_facts",
                    requirement="The final answer states " + ", ".join(str(_stated(f)) for f in answer) + ".",
                    noop_passes=False,
                )
            )
        rubric += self._process_checks(gold, plan.person)
        alternatives = self._alternatives(plan, gold, answer)
        near_misses = self._near_misses(plan, gold)
        generated = self._generated(gold, plan.faults) if self._writes(gold) else set()
        user = UserSpec(
            persona=self.rng.choice(PERSONAS),
            knows={
                k: v
                for a in gold
                for k, v in a.args.items()
                if k.endswith("_id") and k != "limit" and str(v) not in generated
            },
            wants=_wants(plan),
        )
        grading = {"gold": gold, "answer": answer, "rubric": rubric, "volatile": self.volatile}
        if plan.forbidden:
            grading["forbidden"] = list(plan.forbidden)
        solutions = {"alternatives": alternatives, "near_misses": near_misses}
        labels = {"tags": [plan.kind, *plan.tags], "difficulty": DIFFICULTY[plan.kind]}
        episode = {"seed": self.seed, "scale": self.scale, "faults": plan.faults}
        name = f"{plan.kind}-{number:03d}-{plan.tags[0].replace('_', '-')}"
        instruction = self.instruction(plan)  # then the split: the seeded draws in their order
        split = self.rng.choices(["train", "dev", "test"], weights=[6, 2, 2])[0]
        return Task(
            id=name,
            instruction=instruction,
            user=user,
            split=split,
            **episode,
            **grading,
            **solutions,
            **labels,
        )

    def _writes(self, gold: list[Action]) -> bool:
        return any(self.world.tools[a.tool].writes for a in gold)

    def _generated(self, gold: list[Action], faults: FaultProfile | None) -> set[str]:
        """The ids the gold solution's calls draw (a new rental's id): not the user's to know."""
        episode = self.start.fork(id="taskgen-gold")
        try:
            episode.set_faults(faults)
            for a in gold:
                episode.call(a.tool, a.args)
            return {str(k) for k in episode.net_changes().generated}
        finally:
            episode.close()

    def _row_checks(self, gold: list[Action], faults: FaultProfile | None) -> list[Check]:
        """A check per row the gold solution changed: inserted rows exist, updated ones hold
        their new values, deleted ones are gone."""
        episode = self.start.fork(id="taskgen-gold")
        try:
            episode.set_faults(faults)
            for a in gold:
                episode.call(a.tool, a.args)
            changes = episode.net_changes()
        finally:
            episode.close()
        generated = {str(k) for k in changes.generated}
        checks: list[Check] = []
        for (table, _), change in sorted(changes.items()):
            volatile = {c.split(".", 1)[1] for c in self.volatile if c.startswith(f"{table}.")}
            label = self._label_of_table(table)
            if change.after is None and change.before is not None:
                checks.append(
                    RowAbsent(
                        type="row_absent",
                        requirement=f"The {label} {change.before['id']} is deleted.",
                        table=table,
                        where={"id": change.before["id"]},
                        noop_passes=False,
                    )
                )
            elif change.after is not None:
                before = change.before or {}
                values = {
                    k: v
                    for k, v in change.after.items()
                    if k != "id"
                    and (not before or before.get(k) != v)
                    and k not in volatile
                    and str(v) not in generated
                }
                listed, common = self._listed(table, values), {"table": table, "noop_passes": False}
                if not before:  # inserted: a row with its values exists
                    text = f"A new {label} exists with {listed}."
                    checks.append(RowExists(type="row_exists", requirement=text, where=values, **common))
                elif values:  # updated: it holds its new values
                    text = f"The {label} {change.after['id']} has {listed}."
                    key = {"id": change.after["id"]}
                    checks.append(
                        FieldEquals(type="field_equals", requirement=text, where=key, values=values, **common)
                    )
        return checks

    def _model_of_table(self, table: str) -> EntityModel:
        return next(m for m in self.compiled.models.values() if m.table.name == table)

    def _label_of_table(self, table: str) -> str:
        return self._model_of_table(table).label.lower()

    def _listed(self, table: str, values: dict[str, Any]) -> str:
        """Column values as a requirement states them (money in dollars)."""
        model = self._model_of_table(table)
        shown = [
            f"{k.replace('_', ' ')} ${v / 100:,.2f}" if model.field_type(k) == "money" and v is not None else f"{k} {v}"
            for k, v in values.items()
        ]
        return ", ".join(shown) or "its values"

    def _process_checks(self, gold: list[Action], person: str | None) -> list[Check]:
        checks: list[Check] = []
        writes = [a.tool for a in gold if self.world.tools[a.tool].writes]
        if not writes:
            return checks
        if self.identity_rule and person is not None and self.identity in self.gets:
            get = self.gets[self.identity]
            checks.append(
                CallOrder(
                    type="call_order",
                    requirement=f"The {self.spec.label_of(self.identity).lower()} was looked up before any change.",
                    first=[get.name],
                    first_result={id_arg(self.identity): person},
                    noop_passes=True,
                )
            )
        confirmed = sorted(set(writes) & set(self.confirm))
        if confirmed:
            checks.append(
                Confirmed(
                    type="confirmed",
                    requirement="Before the change, the agent described it and the user said yes.",
                    tools=confirmed,
                    noop_passes=True,
                )
            )
        return checks

    def _alternatives(self, plan: Plan, gold: list[Action], answer: list[Fact]) -> list[Solution]:
        found: list[Solution] = []
        if plan.kind in ("write", "workflow"):
            first_write = next(a for a in gold if self.world.tools[a.tool].writes)
            entity = next(a.entity for a in self.spec.actions if a.name == first_write.tool)
            get = self.gets.get(entity)
            key = first_write.args.get(id_arg(entity))
            if get is not None and key is not None:
                read = Action(tool=get.name, args={id_arg(entity): key})
                found.append(Solution(name="reads the record before changing it", steps=self._steps([read, *gold])))
        if answer and plan.kind in ("lookup", "refusal"):
            found.append(Solution(name="states the answer in other words", answer=reworded(answer)))
        return found

    def _near_misses(self, plan: Plan, gold: list[Action]) -> list[Solution]:
        misses: list[Solution] = []
        if plan.near_miss is not None:
            name, actions, answer = plan.near_miss
            reads = [a for a in gold if a not in plan.actions]
            misses.append(Solution(name=name, steps=self._steps([*reads, *actions]), answer=answer))
        if plan.wrong_answer is not None:
            misses.append(Solution(name="answers with a wrong value", answer=plan.wrong_answer))
        return misses

    def _steps(self, actions: list[Action]) -> list[Step]:
        """Solution steps with the request for the go-ahead, naming the writes the policy wants
        confirmed, before the first of them (as `gold_steps` puts it before the gold solution's)."""
        needed = [a for a in actions if a.tool in self.confirm and self.world.tools[a.tool].writes]
        steps: list[Step] = list(actions)
        if needed:
            steps.insert(actions.index(needed[0]), Say(say=confirmation_question(needed)))
        return steps

    def candidates(self) -> Iterator[Task]:
        """Every candidate task, in the order `generate` tries them: the kinds in turn, each plan
        once. Each one drawn is counted in `drawn` and folded into `digest` (what another process
        must draw the same)."""
        sources = {
            "write": self.write_plans(),
            "lookup": self.lookup_plans(),
            "refusal": self.refusal_plans(),
            "workflow": self.workflow_plans(),
            "recovery": self.recovery_plans(),
        }
        for plan in plans_in_turn(sources):
            task = self.task(plan, self.drawn + 1)
            self.drawn += 1
            self._digest.update(task.model_dump_json().encode())
            yield task

    @property
    def digest(self) -> str:
        """A digest of the candidates drawn so far, in order (the dropped ones too)."""
        return self._digest.hexdigest()[:16]

    def generate(self, count: int) -> list[Task]:
        """Up to `count` tasks, from at most `count * MAX_CANDIDATES_PER_TASK` candidates; a
        candidate that `mcpsim check` would refuse (see `sound`) is dropped and counted in `dropped`."""
        return keep_sound(self.candidates(), count, self.sound, self.dropped)

    def sound(self, task: Task) -> list[str]:
        """What `mcpsim check` finds wrong with a task: gold twice, do-nothing, the cheating
        baselines, the alternatives and near misses."""
        tasks = task_set(self.compiled, [task])
        verifier = Verifier(self.world, tasks, templates=self.templates)
        return check_task(self.world, verifier, task, tasks.canaries).problems


# -- module functions ---------------------------------------------------------------------------------


def generate_tasks(compiled: CompiledWorld, *, count: int = 10, seed: int = 0, scale: str | None = None) -> list[Task]:
    """Up to `count` tasks over the world seeded with `seed` at `scale` (default: `small` if the
    spec has it, else `default`), the kinds taken in turn; the same arguments give the same
    tasks in any process."""
    scale = scale or ("small" if "small" in compiled.spec.scales else "default")
    generator = TaskGenerator(compiled, seed=seed, scale=scale)
    try:
        return generator.generate(count)
    finally:
        generator.close()


class Keyed(Protocol):
    def key(self) -> str: ...


P = TypeVar("P", bound=Keyed)


def plans_in_turn(sources: Mapping[str, Iterator[P]]) -> Iterator[P]:
    """The plans of each source in turn (one of each kind a round), each key once, until every
    source is spent."""
    live = dict(sources)
    seen: set[str] = set()
    while live:
        for kind in list(live):
            plan = next(live[kind], None)
            if plan is None:
                del live[kind]
            elif plan.key() not in seen:
                seen.add(plan.key())
                yield plan


def keep_sound(
    candidates: Iterable[Task], count: int, sound: Callable[[Task], list[str]], dropped: Counter[str]
) -> list[Task]:
    """Up to `count` of `candidates` in which `sound` finds no problem, from at most
    `count * MAX_CANDIDATES_PER_TASK` of them; a refused one is counted in `dropped` under the
    check its first problem fails (`task_check`)."""
    tasks: list[Task] = []
    if count <= 0:
        return tasks
    for drawn, task in enumerate(candidates, 1):
        problems = sound(task)
        if problems:
            dropped[task_check(problems[0])] += 1
        else:
            tasks.append(task)
        if len(tasks) == count or drawn >= count * MAX_CANDIDATES_PER_TASK:
            break
    return tasks


def candidates_digest(compiled: CompiledWorld, *, count: int, seed: int = 0, scale: str = "small") -> str:
    """The digest of the first `count` candidate tasks (`TaskGenerator.digest`), drawn without
    auditing them: what another process compares with a generator's, cheaply."""
    generator = TaskGenerator(compiled, seed=seed, scale=scale)
    try:
        for _ in zip(range(count), generator.candidates(), strict=False):
            pass
        return generator.digest
    finally:
        generator.close()


def task_check(problem: str) -> str:
    """The check a problem `mcpsim check` found in a task counts under."""
    return next((check for start, check in TASK_PROBLEMS if start.match(problem)), "task_well_formed")


def canary(compiled: CompiledWorld) -> str:
    return f"{CANARY_PREFIX}-{hashlib.sha256(('canary' + compiled.spec.digest()).encode()).hexdigest()[:24]}"


def task_set(compiled: CompiledWorld, tasks: list[Task]) -> TaskSet:
    """Generated tasks as a world's task set (one file, with a canary derived from the spec)."""
    return TaskSet(
        world=compiled.world.name, files=[TaskFile(world=compiled.world.name, canary=canary(compiled), tasks=tasks)]
    )


def identity_entity(compiled: CompiledWorld) -> str | None:
    """The entity the user is: the one an ownership invariant's field refers to (a loan's
    member), else the entity most others refer to that has a name; None if none."""
    spec = compiled.spec
    for inv in spec.invariants:
        if inv.kind == "ownership" and inv.field:
            f = spec.entities[inv.entity].fields.get(inv.field)
            if f is not None and f.type == "ref" and f.entity:
                return f.entity
    referred = {
        name: len(compiled.models[name].referenced_by) for name, e in spec.entities.items() if "name" in e.fields
    }
    best = max(referred.items(), key=lambda kv: (kv[1], kv[0]), default=None)
    return best[0] if best and best[1] else None


def volatile_columns(compiled: CompiledWorld) -> list[str]:
    """`table.column` of every field an action sets from the clock (`now`): its value depends on
    how many calls came before."""
    spec = compiled.spec
    found: set[str] = set()
    for action in spec.actions:
        for name, raw in action.set.items():
            if raw == "now":
                found.add(f"{spec.table_of(action.entity)}.{name}")
        rows = scope(spec, action, after_write=True)
        for e in action.effects:
            if e.set == "now" and e.row in rows:
                found.add(f"{spec.table_of(rows[e.row])}.{e.field}")
    return sorted(found)


def singular(word: str) -> str:
    word = word.replace("_", " ")
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def plural(word: str) -> str:
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")


def _shown(kind: str, value: Any) -> str:
    """A value of a field type as a user writes it (money in dollars)."""
    return f"${float(value):,.2f}" if kind == "money" else str(value)


def _stated(fact: Fact) -> Any:
    """A fact as the rubric states it (a count's noun in its plural: `4 capacities`)."""
    from mcpsim.tasks import state_fact

    if isinstance(fact, CountFact) and fact.noun and fact.count != 1:
        words = fact.noun.split()
        return " ".join([str(fact.count), *words[:-1], plural(words[-1])])
    return state_fact(fact)


def reworded(facts: list[Fact]) -> str:
    """The facts stated another way than the oracle does (money in words, dates spelled out)."""
    parts = []
    for fact in facts:
        if isinstance(fact, MoneyFact):
            parts.append(f"{fact.money:.2f} dollars")
        elif isinstance(fact, DateFact):
            day = date.fromisoformat(fact.date)
            parts.append(f"{day:%B} {day.day}, {day.year}")
        elif isinstance(fact, IdFact):
            parts.append(f"record {fact.id}")
        elif isinstance(fact, PhraseFact):
            parts.append(f"it is {fact.phrase}")
        else:
            parts.append(str(_stated(fact)))
    return "Here is what I found: " + ", and ".join(parts) + "."


def _target(action: ActionSpec | None) -> str | None:
    """The state a transition moves its row to, as an answer words it."""
    return action.to.replace("_", " ") if action is not None and action.to else None


_LEADING_VERBS = frozenset({"is", "are", "was", "were", "has", "have", "had"})


def _relayed(message: str, values: list[str], phrase: str) -> list[str]:
    """Clauses of a refusal message (placeholders and punctuation cut them) that restate the
    blocking value: `Doctor {doctor.name} is not accepting new appointments` gives `not accepting
    new appointments` for `full list`. A clause of fewer than two words, or one naming another
    value of the field other than under a negation, is left out."""
    rivals = [w for v in values if v.replace("_", " ") != phrase for w in v.split("_")]
    found: list[str] = []
    for chunk in re.split(r"\{[^}]*\}|[;,.:()!?]", message):
        words = chunk.split()
        if words and words[0].casefold() in _LEADING_VERBS:
            words = words[1:]
        text = " ".join(words)
        negated = [i for i, w in enumerate(words) if w.casefold() in ("not", "no", "never") or w.endswith("n't")]
        named = [i for i, w in enumerate(words) if any(_same_word(w, r) for r in rivals)]
        if len(words) < 2 or text.casefold() == phrase or (named and not (negated and negated[0] < named[0])):
            continue
        if text not in found:
            found.append(text)
    return found


def _same_word(a: str, b: str) -> bool:
    return not word_forms(a.casefold()).isdisjoint(word_forms(b.casefold()))


def _gold_requirement(plan: Plan) -> str:
    if plan.kind in ("lookup", "refusal"):
        return "Nothing in the records changed."
    return "The final records equal the gold solution's."


def _wants(plan: Plan) -> str:
    return {
        "write": "The change made as asked.",
        "workflow": "Both changes made, in order.",
        "refusal": "The change if it is allowed, else the reason it is not.",
        "lookup": "The answer to the question.",
        "recovery": "The change made once, and the new record's id.",
    }[plan.kind]


__all__ = [
    "KINDS",
    "TASK_PROBLEMS",
    "TaskGenerator",
    "candidates_digest",
    "generate_tasks",
    "plans_in_turn",
    "identity_entity",
    "keep_sound",
    "task_check",
    "task_set",
    "volatile_columns",
]
