"""Refusal tasks (`refusal`): a write that a precondition or a state transition refuses. The
agent looks the blocking record up and says why (the answer names the record and the blocking
value); trying the write and reporting it done is the near miss."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from mcpsim.specs import ActionSpec, id_arg, message_pattern, parse_operand, scope
from mcpsim.specs import Path as OperandPath
from mcpsim.taskgen._facts import fact, relayed, rivals, same_word, target
from mcpsim.taskgen._lookups import read_check
from mcpsim.taskgen._ownership import foreign, owner_of
from mcpsim.taskgen._plan import Ask, Plan
from mcpsim.taskgen._probe import WorldProbe
from mcpsim.taskgen._targets import verb
from mcpsim.taskgen._wording import GREETING_SLOT, GREETINGS, ME_SLOT, WRITE_TEMPLATES, ask
from mcpsim.tasks import Action, Fact, IdFact, PhraseFact

REFUSAL_ORIGINS = ("precondition", "state")
# A change to one record, asked for in the user's words ("Could you cancel my appointment AP1?"),
# never in the tool's description with its arguments listed.
PLAIN_FRAMES = (
    "{greeting}{me}. Could you {request}?",
    "{greeting}{me}. Please {request}.",
    "{greeting}{me}. I'd like you to {request}, please.",
    "{greeting}{me}. Can you {request} for me?",
)
REFUSAL_TAILS = (
    " If that is not possible, tell me why.",
    " If it cannot be done, please explain what stands in the way.",
    " And if something blocks it, let me know what.",
)
# A refusal's answer must not claim the request was carried out (a true blocking value beside
# "All done" is still a false report); under a negation it is no claim. Not "as requested": an
# agent may open with it ("As requested, I checked the booking"); nor "successfully" (verified).
OTHER_VALUES = 12  # values of a non-enum blocking field tried, from other rows, to see that it alone blocks
SUCCESS_CLAIM = PhraseFact(phrase="all done", synonyms=["all set", "taken care of"])


def refusal_plans(probe: WorldProbe) -> Iterator[Plan]:
    """A write the world refuses, and a write on someone else's record, in turn."""
    blocked, owned = _blocked_plans(probe), _ownership_plans(probe)
    while True:
        plans = [p for p in (next(blocked, None), next(owned, None)) if p is not None]
        if not plans:
            return
        yield from plans


def _blocked_plans(probe: WorldProbe) -> Iterator[Plan]:
    for action in probe.shuffled(probe.writes):
        seen: set[str] = set()
        for args, name, error in _refused(probe, action):
            if name in seen:
                continue
            person = probe.person(action, args, probe.start)
            if foreign(probe, probe.start, action, args, person):
                continue  # a false premise: "my booking" names someone else's
            found = _blocking_fact(probe, action, args, name)
            if found is None:
                continue
            seen.add(name)
            read, facts, forbidden = found
            asked, tail = ask(probe, action, args), probe.rng.choice(REFUSAL_TAILS)
            question = _question(probe, action, args, asked, tail, mine=True)
            said = _said(probe, action, question, person, error)
            key = args.get(id_arg(action.entity)) or read.args.get(next(iter(read.args)))
            yield Plan(
                "refusal",
                [read],
                person=person,
                facts=facts,
                forbidden=unsaid([*forbidden, SUCCESS_CLAIM], said),
                asks=[asked],
                question=question,
                near_miss=_tried(action, args, key),
                tags=[action.name, name],
                checks=[read_check(probe, read, "the blocking record")],
            )
            break


def _ownership_plans(probe: WorldProbe) -> Iterator[Plan]:
    """A change to a record of someone else's, asked for by a person the world knows: the
    agent reads the record, sees whose it is, changes nothing and says so."""
    ident = probe.identity
    if ident is None or ident not in probe.gets or not any(e.owner for e in probe.spec.entities.values()):
        return  # without declared owners the policy says nothing of other people's records
    people = [str(r["id"]) for r in probe.start.query(f'SELECT id FROM "{probe.table(ident)}" ORDER BY id')]
    for action in probe.shuffled(probe.writes):
        get = probe.gets.get(action.entity)
        if action.kind not in ("update", "transition", "delete") or get is None:
            continue
        for args in probe.successes(action, probe.start, 2):
            key = args.get(id_arg(action.entity))
            owner = owner_of(probe, probe.start, action.entity, key)
            others = [p for p in people if p != owner]
            if owner is None or not others:
                continue
            person = probe.rng.choice(others)
            own = id_arg(action.entity)  # the record itself keeps its id; an owner argument names the person
            asked_args = {
                k: person if k != own and probe.arguments.entity_of(action, k) == ident else v for k, v in args.items()
            }
            read = Action(tool=get.name, args={id_arg(action.entity): key})
            asked, tail = ask(probe, action, asked_args), probe.rng.choice(REFUSAL_TAILS)
            question = _question(probe, action, asked_args, asked, tail, mine=False)
            yield Plan(
                "refusal",
                [read],
                person=person,
                facts=[IdFact(id=key)],
                forbidden=unsaid([SUCCESS_CLAIM], _said(probe, action, question, person, "")),
                asks=[asked],
                question=question,
                near_miss=_tried(action, args, key, expect="ok"),
                tags=[action.name, "not_their_record"],
                checks=[read_check(probe, read, "the record")],
            )
            break


def _tried(action: ActionSpec, args: dict[str, Any], key: Any, expect: str = "error") -> tuple[str, list[Action], str]:
    goal = target(action)
    return (
        "tries the write and says it is done",
        [Action(tool=action.name, args=args, expect=expect)],
        f"Done: {key} is now {goal}." if goal else f"Done: {key} has been taken care of.",
    )


def _refused(probe: WorldProbe, action: ActionSpec) -> Iterator[tuple[dict[str, Any], str, str]]:
    """Calls of `action` refused by a precondition or a state transition: (args, refusal name,
    the world's message)."""
    refusals = [r for r in probe.compiled.actions[action.name].refusals if r.origin in REFUSAL_ORIGINS]
    for args, result in probe.outcomes(action, probe.start):
        for refusal in refusals:
            if result.is_error and message_pattern(refusal.template).match(result.error or ""):
                yield args, refusal.name, result.error or ""
                break


def _question(probe: WorldProbe, action: ActionSpec, args: dict[str, Any], asked: Ask, tail: str, *, mine: bool) -> str:
    """The request as the user writes it (slots for the greeting and the speaker): a change of
    state or a deletion names the record ("cancel my appointment AP1"); a change that needs
    values (a new booking, an update) keeps its details."""
    key = args.get(id_arg(action.entity))
    if action.kind in ("transition", "delete") and key is not None:
        label = probe.spec.label_of(action.entity).lower()
        request = verb(probe, action, f"{'my ' if mine else ''}{label} {key}")
        frame = probe.rng.choice(PLAIN_FRAMES)
        return frame.format(greeting=GREETING_SLOT, me=ME_SLOT, request=request) + tail
    frame = probe.rng.choice(WRITE_TEMPLATES)
    return frame.format(greeting=GREETING_SLOT, me=ME_SLOT, request=asked.request, details=asked.details) + tail


def _said(probe: WorldProbe, action: ActionSpec, question: str, person: str | None, error: str) -> str:
    """Every word the agent is shown about the request: the instruction (with every greeting it
    may open with), the tool's description and the world's refusal message."""
    who = probe.row(probe.identity, person) if probe.identity and person else None
    name = str(who.get("name") or "") if who else ""
    label = probe.spec.label_of(probe.identity).lower() if probe.identity else ""
    return " ".join([question, *GREETINGS, name, label, action.description, error])


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.casefold().replace("_", " "))


def used(phrase: str, text: str) -> bool:
    """Whether `text` uses `phrase`: its words in a row, each in any inflection."""
    want, have = _words(phrase), _words(text)
    if not want:
        return False
    return any(
        all(same_word(w, h) for w, h in zip(want, have[i : i + len(want)], strict=True))
        for i in range(len(have) - len(want) + 1)
    )


def unsaid(forbidden: list[Fact], said: str) -> list[Fact]:
    """The forbidden facts that no phrase of `said` uses: an answer may repeat the words the user,
    the tool or the world used ("only new or resolved tickets can be closed")."""
    return [
        f for f in forbidden if not (isinstance(f, PhraseFact) and any(used(p, said) for p in [f.phrase, *f.synonyms]))
    ]


def _blocking_fact(
    probe: WorldProbe, action: ActionSpec, args: dict[str, Any], name: str
) -> tuple[Action, list[Fact], list[Fact]] | None:
    """The read that shows why a call is refused, the facts an explanation states (the
    blocking record's id and the value that blocks) and the facts it must not state (the
    field's rival values; the action's target state only as a claim that it was reached).
    None where the record already holds the state the action would set (the user's own
    request would name the answer), or where another value of the blocking field would not
    let the call through (the refusal has more than one reason)."""
    if name == "invalid_transition":
        model = probe.compiled.models[action.entity]
        row = probe.row(action.entity, args.get(id_arg(action.entity)))
        get = probe.gets.get(action.entity)
        if row is None or get is None or model.state_field is None:
            return None
        value = row[model.state_field]
        held = PhraseFact(phrase=str(value).replace("_", " "))
        if held.phrase == target(action):
            return None  # already in the state asked for
        if not _sole_blocker(probe, action, args, action.entity, row["id"], model.state_field):
            return None
        read = Action(tool=get.name, args={id_arg(action.entity): row["id"]})
        return read, [IdFact(id=row["id"]), held], rivals(probe.spec, action.entity, model.state_field, value, action)
    precondition = next(p for p in action.preconditions if p.name == name)
    rows = scope(probe.spec, action)
    for raw in (precondition.require.left, precondition.require.right):
        operand = parse_operand(raw)
        if isinstance(operand, OperandPath) and operand.alias in rows:
            entity = rows[operand.alias]
            key = _alias_key(probe, action, operand.alias, args)
            row = probe.row(entity, key)
            get = probe.gets.get(entity)
            if row is None or get is None:
                continue
            found = fact(probe.spec, entity, operand.field, row[operand.field] if operand.field != "id" else row["id"])
            if found is None:
                continue
            if isinstance(found, PhraseFact) and found.phrase == target(action):
                return None  # already in the state asked for
            if not _sole_blocker(probe, action, args, entity, row["id"], operand.field):
                return None
            if isinstance(found, PhraseFact):  # the world's own refusal says it too
                values = probe.spec.entities[entity].fields[operand.field].values or []
                found = PhraseFact(phrase=found.phrase, synonyms=relayed(precondition.message, values, found.phrase))
            read = Action(tool=get.name, args={id_arg(entity): row["id"]})
            return (
                read,
                [IdFact(id=row["id"]), found],
                rivals(probe.spec, entity, operand.field, row[operand.field], action),
            )
    return None


def _sole_blocker(
    probe: WorldProbe, action: ActionSpec, args: dict[str, Any], entity: str, key: Any, name: str
) -> bool:
    """Whether another value of the field (set outside any tool call, on a fork) lets the call
    through: then that field is the only reason the call is refused, else the call has two
    blockers (dropped). An enum tries its values, another field the values other rows hold."""
    f = probe.spec.entities[entity].fields.get(name)
    if f is None:
        return True
    if f.type == "enum":
        values: list[Any] = list(f.values or [])
    else:
        held = f'SELECT DISTINCT "{name}" AS v FROM "{probe.table(entity)}" WHERE "{name}" IS NOT NULL ORDER BY 1'
        found = [r["v"] for r in probe.start.query(held)]
        step = max(1, len(found) // OTHER_VALUES)  # a spread, the smallest and the largest among them
        values = [*found[::step][: OTHER_VALUES - 1], *found[-1:]]
    for value in values:
        fork = probe.start.fork(id="taskgen-blocker")
        try:
            fork.conn.execute(f'UPDATE "{probe.table(entity)}" SET "{name}" = ? WHERE id = ?', (value, key))
            fork.conn.commit()
            result = fork.call(action.name, args)
        finally:
            fork.close()
        if not result.is_error and not result.bug:
            return True
    return False


def _alias_key(probe: WorldProbe, action: ActionSpec, alias: str, args: dict[str, Any]) -> Any:
    if alias == action.entity:
        return args.get(id_arg(action.entity))
    if f"{alias}_id" in args:
        return args[f"{alias}_id"]
    row = probe.row(action.entity, args.get(id_arg(action.entity)))
    return row.get(f"{alias}_id") if row else None
