"""A generated task's rubric (`rubric`): row checks from the gold solution's net changes,
`gold_state`, `allowed_changes`, the answer's facts, and process checks from the policy rules
(an identity lookup before writes, confirmation before the writes a `confirm` rule lists)."""

from __future__ import annotations

from typing import Any

from mcpsim.engine import FaultProfile
from mcpsim.specs import EntityModel, id_arg
from mcpsim.taskgen._facts import stated
from mcpsim.taskgen._plan import Plan, PlanKind
from mcpsim.taskgen._probe import WorldProbe
from mcpsim.tasks import (
    Action,
    AllowedChanges,
    AnswerFacts,
    CallOrder,
    Check,
    Confirmed,
    Fact,
    FieldEquals,
    GoldState,
    RowAbsent,
    RowExists,
)


def rubric(probe: WorldProbe, plan: Plan, kind: PlanKind, gold: list[Action], answer: list[Fact]) -> list[Check]:
    """The checks of a plan's task, in order, for the gold solution `gold` and its `answer`."""
    checks: list[Check] = []
    if kind.changes:
        checks += row_checks(probe, gold, plan.faults)
    requirement = "The final records equal the gold solution's." if kind.changes else "Nothing in the records changed."
    checks.append(GoldState(type="gold_state", requirement=requirement, noop_passes=not probe.has_writes(gold)))
    checks.append(
        AllowedChanges(
            type="allowed_changes",
            requirement="Nothing changed beyond what the request needed.",
            noop_passes=True,
        )
    )
    if answer:
        checks.append(
            AnswerFacts(
                type="answer_facts",
                requirement="The final answer states " + ", ".join(str(stated(f)) for f in answer) + ".",
                noop_passes=False,
            )
        )
    checks += process_checks(probe, gold, plan.person)
    return checks + plan.checks


def row_checks(probe: WorldProbe, gold: list[Action], faults: FaultProfile | None) -> list[Check]:
    """A check per row the gold solution changed: inserted rows exist, updated ones hold
    their new values, deleted ones are gone."""
    episode = probe.start.fork(id="taskgen-gold")
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
        volatile = {c.split(".", 1)[1] for c in probe.volatile if c.startswith(f"{table}.")}
        label = _label_of_table(probe, table)
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
                if k != "id" and (not before or before.get(k) != v) and k not in volatile and str(v) not in generated
            }
            listed, common = _listed(probe, table, values), {"table": table, "noop_passes": False}
            if not before:  # inserted: a row with its values exists
                text = f"A new {label} exists with {listed}."
                checks.append(RowExists(type="row_exists", requirement=text, where=values, **common))
            elif values:  # updated: it holds its new values
                text = f"The {label} {change.after['id']} has {listed}."
                key = {"id": change.after["id"]}
                checks.append(FieldEquals(type="field_equals", requirement=text, where=key, values=values, **common))
    return checks


def _model_of_table(probe: WorldProbe, table: str) -> EntityModel:
    return next(m for m in probe.compiled.models.values() if m.table.name == table)


def _label_of_table(probe: WorldProbe, table: str) -> str:
    return _model_of_table(probe, table).label.lower()


def _listed(probe: WorldProbe, table: str, values: dict[str, Any]) -> str:
    """Column values as a requirement states them (money in dollars)."""
    model = _model_of_table(probe, table)
    shown = [
        f"{k.replace('_', ' ')} ${v / 100:,.2f}" if model.field_type(k) == "money" and v is not None else f"{k} {v}"
        for k, v in values.items()
    ]
    return ", ".join(shown) or "its values"


def process_checks(probe: WorldProbe, gold: list[Action], person: str | None) -> list[Check]:
    """The policy's process rules for a solution with writes: the identity lookup before any
    change, and the user's go-ahead before the writes a `confirm` rule lists."""
    checks: list[Check] = []
    writes = [a.tool for a in gold if probe.world.tools[a.tool].writes]
    if not writes:
        return checks
    if probe.identity_rule and person is not None and probe.identity in probe.gets:
        get = probe.gets[probe.identity]
        checks.append(
            CallOrder(
                type="call_order",
                requirement=f"The {probe.spec.label_of(probe.identity).lower()} was looked up before any change.",
                first=[get.name],
                first_result={id_arg(probe.identity): person},
                noop_passes=True,
            )
        )
    confirmed = sorted(set(writes) & set(probe.confirm))
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
