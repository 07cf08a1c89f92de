"""Refusal tasks (`REFUSAL`): a write that a precondition or a state transition refuses. The
agent looks the blocking record up and says why (the answer names the record and the blocking
value); trying the write and reporting it done is the near miss."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcpsim.specs import ActionSpec, id_arg, message_pattern, parse_operand, scope
from mcpsim.specs import Path as OperandPath
from mcpsim.taskgen._facts import fact, relayed, rivals, target
from mcpsim.taskgen._plan import Plan, PlanKind
from mcpsim.taskgen._probe import WorldProbe
from mcpsim.taskgen._wording import ask
from mcpsim.tasks import Action, Fact, IdFact, PhraseFact

REFUSAL_ORIGINS = ("precondition", "state")
REFUSAL_TAILS = (
    " If that is not possible, tell me why.",
    " If it cannot be done, please explain what stands in the way.",
    " And if something blocks it, let me know what.",
)
# A refusal's answer must not claim the request was carried out (a true blocking value beside
# "All done" is still a false report); under a negation it is no claim. Not "as requested": an
# agent may open with it ("As requested, I checked the booking"); nor "successfully" (verified).
SUCCESS_CLAIM = PhraseFact(phrase="all done", synonyms=["all set", "taken care of"])


def refusal_plans(probe: WorldProbe) -> Iterator[Plan]:
    for action in probe.shuffled(probe.writes):
        seen: set[str] = set()
        for args, name in _refused(probe, action):
            if name in seen:
                continue
            found = _blocking_fact(probe, action, args, name)
            if found is None:
                continue
            seen.add(name)
            read, facts, forbidden = found
            goal = target(action)
            key = args.get(id_arg(action.entity)) or read.args.get(next(iter(read.args)))
            yield Plan(
                "refusal",
                [read],
                person=probe.person(action, args, probe.start),
                facts=facts,
                forbidden=[*forbidden, SUCCESS_CLAIM],
                asks=[ask(probe, action, args)],
                tail=probe.rng.choice(REFUSAL_TAILS),
                near_miss=(
                    "tries the write, is refused, and says it is done",
                    [Action(tool=action.name, args=args, expect="error")],
                    f"Done: {key} is now {goal}." if goal else f"Done: {key} has been taken care of.",
                ),
                tags=[action.name, name],
            )
            break


def _refused(probe: WorldProbe, action: ActionSpec) -> Iterator[tuple[dict[str, Any], str]]:
    """Calls of `action` refused by a precondition or a state transition: (args, refusal name)."""
    refusals = [r for r in probe.compiled.actions[action.name].refusals if r.origin in REFUSAL_ORIGINS]
    for args, result in probe.outcomes(action, probe.start):
        for refusal in refusals:
            if result.is_error and message_pattern(refusal.template).match(result.error or ""):
                yield args, refusal.name
                break


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
    """Whether another value of an enum field (set outside any tool call, on a fork) lets the
    call through: then that field is the only reason the call is refused. Fields of other
    types are not tried (kept)."""
    f = probe.spec.entities[entity].fields.get(name)
    if f is None or f.type != "enum":
        return True
    for value in f.values or []:
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


REFUSAL = PlanKind(
    name="refusal",
    plans=refusal_plans,
    difficulty="medium",
    wants="The change if it is allowed, else the reason it is not.",
    instruction="request",
    changes=False,
    reworded=True,
)
